"""Matrix and tensor products: matmul / @, mm, bmm, mv, dot, vdot, outer, einsum, tensordot,
addmm / addmv / addr / baddbmm / addbmm, kron, cross, chain_matmul; LinAlgError."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .._registry import apply, defop
from .._tensor import Tensor, _wrap_dim
from ._surface import inplace_methods, methods, public, toplevel

__all__ = ['matmul', 'mm', 'bmm', 'mv', 'dot', 'vdot', 'outer', 'ger', 'einsum', 'tensordot',
           'addmm', 'addmv', 'addr', 'baddbmm', 'addbmm', 'kron', 'cross', 'chain_matmul']


def _matmul_name(kw):
    na, nb = kw["ndims"]
    if na == -3:
        return "BmmBackward0"
    if na == 2 and nb == 2:
        return "MmBackward0"
    if na == 1 and nb == 1:
        return "DotBackward0"
    if na == 2 and nb == 1:
        return "MvBackward0"
    if na == 1 and nb == 2:
        return "SqueezeBackward4"
    return "UnsafeViewBackward0"


@defop("matmul", promote="common", saves="others", grad_name=_matmul_name)
def _matmul(a, b, ndims):
    return jnp.matmul(a, b)


def _check(a, b):
    sa, sb = tuple(a._d.shape), tuple(b._d.shape)
    if len(sa) == 0 or len(sb) == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{len(sa)}D and {len(sb)}D")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype.name.replace('float32', 'float')} != "
                           f"{b.dtype.name.replace('float32', 'float')}")
    k_a = sa[-1]
    k_b = sb[0] if len(sb) == 1 else sb[-2]
    if k_a == k_b:
        return
    if len(sa) == 1 and len(sb) == 1:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{sa[0]}] and src "
                           f"[{sb[0]}] to have the same number of elements, but got {sa[0]} "
                           f"and {sb[0]} elements respectively")
    if len(sa) == 2 and len(sb) == 1:
        raise RuntimeError(f"size mismatch, got input ({sa[0]}), mat ({sa[0]}x{sa[1]}), "
                           f"vec ({sb[0]})")
    if len(sa) <= 2 and len(sb) <= 2:
        m1 = "x".join(map(str, sa if len(sa) == 2 else (1,) + sa))
        m2 = "x".join(map(str, sb))
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m1} and {m2})")
    raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                       f"[{sb[0] if len(sb) > 2 else 1}, {k_a}] but got: "
                       f"[{sb[0] if len(sb) > 2 else 1}, {k_b}].")


@public(out=True)
def matmul(input, other):
    """torch.matmul: dot, mv, mm or a batched product by the inputs' dims."""
    _check(input, other)
    return apply(_matmul, input, other, ndims=(input._d.ndim, other._d.ndim))


@public(out=True)
def mm(input, mat2):
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return matmul(input, mat2)


@public(out=True)
def bmm(input, mat2):
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _check(input, mat2)
    return apply(_matmul, input, mat2, ndims=(-3, -3))


@public(out=True)
def mv(input, vec):
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {vec.ndim}")
    return matmul(input, vec)


@public(out=True)
def dot(input, other):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           f"tensors")
    return matmul(input, other)


methods(matmul=matmul)
methods(**{"__rmatmul__": lambda self, other: matmul(other, self)})
methods(mm=mm, bmm=bmm, mv=mv, dot=dot)


class LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError: a decomposition or solve failed (singular or not PD input)."""


_LinAlgError = LinAlgError


def _tname(dt):
    return D.legacy_name(dt)


def _same_dtype(a, b, fmt):
    if a.dtype is not b.dtype:
        raise RuntimeError(fmt.format(_tname(a.dtype), _tname(b.dtype)))


# ------------------------------------------------------------------ products

@defop("vdot", grad_name="VdotBackward0")
def _vdot(a, b):
    return jnp.vdot(a, b)


@public(out=True)
def vdot(input, other):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           f"tensors")
    _same_dtype(input, other, "dot : expected both vectors to have same dtype, but found {} "
                              "and {}")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{input.shape[0]}] and "
                           f"src [{other.shape[0]}] to have the same number of elements, but "
                           f"got {input.shape[0]} and {other.shape[0]} elements respectively")
    return apply(_vdot, input, other)


@defop("outer", promote="common", grad_name="MulBackward0")
def _outer(a, b):
    return jnp.outer(a, b)


@public(out=True)
def outer(input, vec2):
    if input.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.ndim}-D")
    if vec2.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    return apply(_outer, input, vec2)


ger = outer


@defop("einsum", grad_name="EinsumBackward")
def _einsum(*ops, eq):
    return jnp.einsum(eq, *ops)


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    for o in operands[1:]:
        if o.dtype is not operands[0].dtype:
            raise RuntimeError(f"expected scalar type {_tname(operands[0].dtype)} but found "
                               f"{_tname(o.dtype)}")
    eq = equation.replace(" ", "")
    lhs = eq.split("->")[0].split(",")
    if len(lhs) != len(operands):
        raise ValueError(f"einsum(): more operands were provided than specified in the "
                         f"equation" if len(operands) > len(lhs) else
                         "einsum(): fewer operands were provided than specified in the equation")
    seen = {}
    for k, (sub, o) in enumerate(zip(lhs, operands)):
        nd = o._d.ndim
        if "..." in sub:
            pre, post = sub.split("...")
            pos = list(range(len(pre))) + list(range(nd - len(post), nd))
            labels = pre + post
        else:
            labels = sub
            if len(labels) != nd:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                   f"({len(labels)}) does not match the number of dimensions "
                                   f"({nd}) for operand {k} and no ellipsis was given")
            pos = list(range(nd))
        for lab, p in zip(labels, pos):
            n = o._d.shape[p]
            if lab in seen and seen[lab] != n and n != 1 and seen[lab] != 1:
                raise RuntimeError(f"einsum(): subscript {lab} has size {n} for operand {k} "
                                   f"which does not broadcast with previously seen size "
                                   f"{seen[lab]}")
            if n != 1 or lab not in seen:
                seen[lab] = n
    return apply(_einsum, *operands, eq=eq)


@defop("tensordot", promote="common", grad_name="TensordotBackward0")
def _tensordot(a, b, dims_a, dims_b):
    return jnp.tensordot(a, b, (dims_a, dims_b))


@public(out=True)
def tensordot(a, b, dims=2):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da = list(range(a.ndim - dims, a.ndim))
        db = list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    da = tuple(_wrap_dim(d, a.ndim) for d in da)
    db = tuple(_wrap_dim(d, b.ndim) for d in db)
    for x, y in zip(da, db):
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[x]} in dim {x} and second has size {b.shape[y]} in "
                               f"dim {y}")
    _same_dtype(a, b, "expected scalar type {} but found {}")
    return apply(_tensordot, a, b, dims_a=da, dims_b=db)


def _addmm_name(kw):
    return {"mm": "AddmmBackward0", "mv": "AddmvBackward0", "r": "AddrBackward0",
            "bmm": "BaddbmmBackward0", "addbmm": "AddbmmBackward0",
            "linear": "AddmmBackward0"}[kw["kind"]]


@defop("addmm", promote="common", grad_name=_addmm_name, saves={1: (2,), 2: (1,)})
def _addmm(c, a, b, beta, alpha, kind):
    if kind == "r":
        p = jnp.outer(a, b)
    elif kind == "linear":
        # ``a`` of any rank times the weight ``b`` transposed, rows flattened (F.linear
        # without autograd: no transposed weight nor flattened input to make first)
        p = jax.lax.dot_general(a.reshape(-1, a.shape[-1]), b, (((1,), (1,)), ((), ())))
    elif kind == "addbmm":
        p = jnp.sum(jnp.matmul(a, b), axis=0)
    else:
        p = jnp.matmul(a, b)
    if alpha != 1:
        p = p * alpha
    if beta == 0:
        return jnp.broadcast_to(p, jnp.broadcast_shapes(p.shape, c.shape)) + jnp.zeros((),
                                                                                       p.dtype)
    return (c * beta if beta != 1 else c) + p


def _add_check(input, shape):
    ish = tuple(input._d.shape)
    if len(ish) > len(shape) or any(s != 1 and s != t for s, t in
                                    zip(ish[::-1], shape[::-1])):
        bad = next(i for i in range(1, len(ish) + 1)
                   if i > len(shape) or ish[-i] not in (1, shape[-i]))
        raise RuntimeError(f"The expanded size of the tensor ({shape[-bad]}) must match the "
                           f"existing size ({ish[-bad]}) at non-singleton dimension "
                           f"{len(shape) - bad}.  Target sizes: {list(shape)}.  Tensor sizes: "
                           f"{list(ish)}")


@public(out=True)
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    if mat1.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.ndim}-D tensor" if mat1.ndim != 2
                           else f"mat2 must be a matrix, got {mat2.ndim}-D tensor")
    _same_dtype(mat1, mat2, "self and mat2 must have the same dtype, but got {} and {}")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    _add_check(input, (mat1.shape[0], mat2.shape[1]))
    return apply(_addmm, input, mat1, mat2, beta=beta, alpha=alpha, kind="mm")


def linear_rows(bias, input, weight):
    """``input`` (its rows flattened) times ``weight`` transposed plus ``bias``, as one op: F.linear
    where autograd records nothing (torch's graph, ``t`` and ``view`` around ``addmm``, is then
    not observable)."""
    return apply(_addmm, bias, input, weight, beta=1, alpha=1, kind="linear")


@public(out=True)
def addmv(input, mat, vec, *, beta=1, alpha=1):
    if mat.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    if mat.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({mat.shape[0]}), mat ({mat.shape[0]}x"
                           f"{mat.shape[1]}), vec ({vec.shape[0]})")
    _add_check(input, (mat.shape[0],))
    return apply(_addmm, input, mat, vec, beta=beta, alpha=alpha, kind="mv")


@public(out=True)
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.ndim}-D")
    _add_check(input, (vec1.shape[0], vec2.shape[0]))
    return apply(_addmm, input, vec1, vec2, beta=beta, alpha=alpha, kind="r")


def _bmm_check(b1, b2):
    if b1.ndim >= 2 and b2.ndim == 2:
        # torch reads batch2's size(2) first
        raise IndexError(f"Dimension out of range (expected to be in range of [-2, 1], but got "
                         f"2)")
    if b1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _same_dtype(b1, b2, "expected scalar type {} but found {}")
    if b1.shape[0] != b2.shape[0] or b1.shape[2] != b2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b1.shape[0]}, {b1.shape[2]}] but got: [{b2.shape[0]}, "
                           f"{b2.shape[1]}].")


@public(out=True)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    _bmm_check(batch1, batch2)
    _add_check(input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    return apply(_addmm, input, batch1, batch2, beta=beta, alpha=alpha, kind="bmm")


@public(out=True)
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    _bmm_check(batch1, batch2)
    _add_check(input, (batch1.shape[1], batch2.shape[2]))
    return apply(_addmm, input, batch1, batch2, beta=beta, alpha=alpha, kind="addbmm")


@defop("kron", promote="common", grad_name="KronBackward0")
def _kron(a, b):
    return jnp.kron(a, b)


@public(out=True)
def kron(input, other):
    return apply(_kron, input, other)


@defop("cross", promote="common", grad_name="LinalgCrossBackward0")
def _cross(a, b, dim):
    shp = jnp.broadcast_shapes(a.shape, b.shape)
    a, b = jnp.broadcast_to(a, shp), jnp.broadcast_to(b, shp)
    return jnp.cross(a, b, axis=dim)


def _cross_impl(input, other, dim, name):
    shp = tuple(np.broadcast_shapes(tuple(input.shape), tuple(other.shape))) \
        if _bcastable(input, other) else None
    if shp is None:
        from .._registry import broadcast_error
        raise RuntimeError(broadcast_error([tuple(input.shape), tuple(other.shape)]))
    d = _wrap_dim(dim, len(shp))
    if input.shape[d - len(shp) + input.ndim] != 3 or other.shape[d - len(shp) + other.ndim] \
            != 3:
        raise RuntimeError(f"{name}: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d - len(shp) + input.ndim]} and "
                           f"{other.shape[d - len(shp) + other.ndim]}")
    return apply(_cross, input, other, dim=d)


def _bcastable(a, b):
    try:
        np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
        return True
    except ValueError:
        return False


@public(out=True)
def cross(input, other, dim=None):
    if dim is None:
        if input.ndim != other.ndim:
            raise RuntimeError(f"linalg.cross: inputs must have the same number of dimensions.")
        dim = next((i for i, n in enumerate(input.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return _cross_impl(input, other, dim, "linalg.cross")


@public(out=True)
def chain_matmul(*matrices):
    out = matrices[0]
    for m in matrices[1:]:
        out = mm(out, m)
    return out


methods(vdot=vdot, outer=outer, ger=outer, addmm=addmm, addmv=addmv, addr=addr, baddbmm=baddbmm,
        addbmm=addbmm, kron=kron, cross=cross)
inplace_methods(addmm=addmm, addmv=addmv, addr=addr, baddbmm=baddbmm, addbmm=addbmm)
toplevel("addmv_")
