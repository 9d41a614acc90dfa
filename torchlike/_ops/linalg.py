"""Matrix products: matmul / @, mm, bmm, mv, dot (the rest of linear algebra comes later)."""
from __future__ import annotations

import jax.numpy as jnp

from .._tensor import Tensor
from .._registry import apply, defop
from ._surface import inplace_methods, method, methods, public, toplevel

__all__ = ["matmul", "mm", "bmm", "mv", "dot"]


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
    sa, sb = tuple(a._data.shape), tuple(b._data.shape)
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
    return apply(_matmul, input, other, ndims=(input._data.ndim, other._data.ndim))


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


# ================================================================== products, solves, decompositions
#
# Products (vdot, outer, einsum, tensordot, addmm, baddbmm, kron, cross, ...) and the
# decompositions behind ``torchlike.linalg``; each op is declared once here and the
# ``torchlike.linalg`` namespace re-exports them under torch's names.

import collections  # noqa: E402
import functools  # noqa: E402

import jax  # noqa: E402
import numpy as np  # noqa: E402

from .. import _dtype as D  # noqa: E402
from .._tensor import _wrap_dim  # noqa: E402
from .._storage import apply_, check_inplace, commit_inplace  # noqa: E402

__all__ += ["vdot", "outer", "ger", "einsum", "tensordot", "addmm", "addmv", "addr",
            "baddbmm", "addbmm", "kron", "cross", "det", "logdet", "slogdet", "inverse",
            "pinverse", "matrix_power", "cholesky", "chain_matmul", "svd", "qr"]


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
        nd = o._data.ndim
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
            n = o._data.shape[p]
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
            "bmm": "BaddbmmBackward0", "addbmm": "AddbmmBackward0"}[kw["kind"]]


@defop("addmm", promote="common", grad_name=_addmm_name)
def _addmm(c, a, b, beta, alpha, kind):
    if kind == "r":
        p = jnp.outer(a, b)
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
    ish = tuple(input._data.shape)
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


# ------------------------------------------------------------------ checks shared by linalg

def _float_check(A, name):
    if A.dtype.category < D._FLOAT:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_tname(A.dtype)}")


def _square_check(A, name, what="A"):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: {what} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _matrix_check(A, name, what="A"):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")


@defop("lu_info", differentiable=False)
def _lu_info(a):
    """1-based index of the first zero pivot of each LU factorization (0: nonsingular)."""
    if a.shape[-1] == 0:
        return jnp.zeros(a.shape[:-2], jnp.int64)
    lu = jax.lax.linalg.lu(a)[0]
    d = jnp.diagonal(lu, axis1=-2, axis2=-1)
    z = (d == 0)
    return jnp.where(z.any(-1), jnp.argmax(z, -1) + 1, 0).astype(jnp.int64)


def _singular_check(A, name, solver=False):
    info = np.asarray(apply(_lu_info, A.detach())._data).reshape(-1)
    bad = np.nonzero(info)[0]
    if bad.size:
        k = int(bad[0])
        pre = f"(Batch element {k}): " if A.ndim > 2 else ""
        if solver:
            raise LinAlgError(f"torch.{name}: The solver failed because the input matrix is "
                              f"singular.")
        raise LinAlgError(f"{name}: {pre}The diagonal element {int(info[k])} is zero, the "
                          f"inversion could not be completed because the input matrix is "
                          f"singular.")


# ------------------------------------------------------------------ inverse, solve, det

@defop("linalg_inv", grad_name="LinalgInvExBackward0")
def _inv(a):
    return jnp.linalg.inv(a)


@public(out=True)
def linalg_inv(A):
    _float_check(A, "linalg.inv")
    _square_check(A, "linalg.inv")
    _singular_check(A, "linalg.inv")
    return apply(_inv, A)


inverse = linalg_inv


@defop("linalg_solve", promote="common", grad_name="LinalgSolveExBackward0")
def _solve(a, b, vector, left):
    if not left:
        # X A = B  <=>  A^T X^T = B^T
        a = jnp.swapaxes(a, -1, -2)
        b = jnp.swapaxes(b, -1, -2)
    if vector:
        b = b[..., None]
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    x = jnp.linalg.solve(a, b)
    if vector:
        x = x[..., 0]
    if not left:
        x = jnp.swapaxes(x, -1, -2)
    return x


@public(out=True)
def linalg_solve(A, B, *, left=True):
    _float_check(A, "linalg.solve")
    _square_check(A, "linalg.solve")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {_tname(A.dtype)} and B of type {_tname(B.dtype)} "
                           f"instead")
    vector = left and (B.ndim == 1 or (B.ndim == A.ndim - 1 and
                                        tuple(B.shape[:-1]) == tuple(A.shape[:-2])))
    n = A.shape[-1]
    k = B.shape[-1] if vector else (B.shape[-2] if left else B.shape[-1])
    if k != n:
        bs = (f"{B.shape[-1]}x1" if vector else f"{B.shape[-2]}x{B.shape[-1]}")
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {bs})")
    _singular_check(A, "linalg.solve", solver=True)
    return apply(_solve, A, B, vector=bool(vector), left=bool(left))


@defop("linalg_det", grad_name="LinalgDetBackward0")
def _det(a):
    if a.shape[-1] == 0:
        # the empty product; jax's det has no gradient rule for 0x0 matrices
        return jnp.ones(a.shape[:-2], a.dtype) + jnp.sum(a, axis=(-2, -1))
    return jnp.linalg.det(a)


@public(out=True)
def linalg_det(A):
    _float_check(A, "linalg.det")
    _square_check(A, "linalg.det")
    return apply(_det, A)


det = linalg_det

SlogdetResult = collections.namedtuple("linalg_slogdet", ["sign", "logabsdet"])


@defop("linalg_slogdet", grad_name="LinalgSlogdetBackward0")
def _slogdet(a):
    if a.shape[-1] == 0:
        z = jnp.sum(a, axis=(-2, -1))
        return jnp.ones(a.shape[:-2], a.dtype), z
    s, l = jnp.linalg.slogdet(a)
    return jax.lax.stop_gradient(s), l


@public(out=True)
def linalg_slogdet(A):
    _float_check(A, "linalg.slogdet")
    _square_check(A, "linalg.slogdet")
    return SlogdetResult(*apply(_slogdet, A))


@public(out=True)
def slogdet(input):
    return linalg_slogdet(input)


@defop("logdet", grad_name="LogdetBackward0")
def _logdet(a):
    s, l = jnp.linalg.slogdet(a)
    return jnp.where(s < 0, jnp.nan, jnp.where(s == 0, -jnp.inf, l)).astype(l.dtype)


def logdet(input):
    _float_check(input, "logdet")
    _square_check(input, "logdet")
    return apply(_logdet, input)


# ------------------------------------------------------------------ decompositions

@defop("linalg_cholesky", grad_name="LinalgCholeskyExBackward0")
def _cholesky(a, upper):
    l = jnp.linalg.cholesky(a)
    return jnp.swapaxes(l, -1, -2).conj() if upper else l


def _cholesky_info(A):
    """LAPACK's info per matrix: 0, or the order of the first leading minor that is not
    positive-definite (read on the host: only when the factorization failed)."""
    a = np.asarray(A._data)
    flat = a.reshape(-1, *a.shape[-2:])
    info = np.zeros(flat.shape[0], np.int32)
    for k, m in enumerate(flat):
        lo = np.tril(m) + np.tril(m, -1).conj().T      # torch reads the lower triangle
        for order in range(1, m.shape[-1] + 1):
            try:
                np.linalg.cholesky(lo[:order, :order])
            except np.linalg.LinAlgError:
                info[k] = order
                break
    return info.reshape(a.shape[:-2])


def _cholesky_checked(A, upper, check):
    _float_check(A, "linalg.cholesky")
    _square_check(A, "linalg.cholesky")
    L = apply(_cholesky, A, upper=bool(upper))
    info = np.zeros(A.shape[:-2], np.int32)
    if np.isnan(np.asarray(L._data)).any():
        info = _cholesky_info(A)
        if check:
            for k, order in enumerate(info.reshape(-1)):
                if order:
                    pre = f"(Batch element {k}): " if A.ndim > 2 else ""
                    raise LinAlgError(f"linalg.cholesky: {pre}The factorization could not be "
                                      f"completed because the input is not positive-definite "
                                      f"(the leading minor of order {order} is not "
                                      f"positive-definite).")
    return L, info


@public(out=True)
def linalg_cholesky(A, *, upper=False):
    return _cholesky_checked(A, upper, True)[0]


CholeskyExResult = collections.namedtuple("linalg_cholesky_ex", ["L", "info"])


@public(out=True)
def linalg_cholesky_ex(A, *, upper=False, check_errors=False):
    """``(L, info)``: info is LAPACK's (0, or the order of the failing leading minor); L is
    unspecified where info > 0, as in torch."""
    from .._creation import tensor
    L, info = _cholesky_checked(A, upper, check_errors)
    return CholeskyExResult(L, tensor(info, dtype=D.int32))


@public(out=True)
def cholesky(input, upper=False):
    return linalg_cholesky(input, upper=upper)


QRResult = collections.namedtuple("linalg_qr", ["Q", "R"])


@defop("linalg_qr", grad_name="LinalgQrBackward0")
def _qr(a, mode):
    if mode == "r":
        return jnp.zeros((0,), a.dtype), jnp.linalg.qr(a, mode="r")
    q, r = jnp.linalg.qr(a, mode=mode)
    return q, r


@public(out=True)
def linalg_qr(A, mode="reduced"):
    _float_check(A, "linalg.qr")
    _matrix_check(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    return QRResult(*apply(_qr, A, mode=mode))


@public(out=True)
def qr(input, some=True):
    return linalg_qr(input, "reduced" if some else "complete")


SVDResult = collections.namedtuple("linalg_svd", ["U", "S", "Vh"])
EighResult = collections.namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
LstsqResult = collections.namedtuple("linalg_lstsq",
                                     ["solution", "residuals", "rank", "singular_values"])


@defop("linalg_svd", grad_name="LinalgSvdBackward0")
def _svd(a, full_matrices):
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    m, n = a.shape[-2:]
    if full_matrices and m != n:
        # the completing columns/rows carry no gradient (jax has no full-matrices SVD JVP)
        uf, _, vhf = jnp.linalg.svd(jax.lax.stop_gradient(a), full_matrices=True)
        k = min(m, n)
        u = jnp.concatenate([u, uf[..., k:]], axis=-1)
        vh = jnp.concatenate([vh, vhf[..., k:, :]], axis=-2)
    return u, s, vh


@public(out=True)
def linalg_svd(A, full_matrices=True, *, driver=None):
    _float_check(A, "linalg.svd")
    _matrix_check(A, "linalg.svd")
    return SVDResult(*apply(_svd, A, full_matrices=bool(full_matrices)))


@defop("linalg_svdvals", grad_name="LinalgSvdBackward0")
def _svdvals(a):
    return jnp.linalg.svd(a, compute_uv=False)


@public(out=True)
def linalg_svdvals(A, *, driver=None):
    _float_check(A, "linalg.svdvals")
    _matrix_check(A, "linalg.svdvals")
    return apply(_svdvals, A)


@public(out=True)
def svd(input, some=True, compute_uv=True):
    """torch.svd (legacy): returns U, S, V (not Vh)."""
    U, S, Vh = linalg_svd(input, full_matrices=not some)
    return U, S, Vh.mH if hasattr(Vh, "mH") else Vh.transpose(-2, -1)


@defop("linalg_eigh", grad_name="LinalgEighBackward0")
def _eigh(a, upper):
    t = jnp.triu(a) if upper else jnp.tril(a)
    sym = t + jnp.swapaxes(t, -1, -2).conj() - jnp.eye(a.shape[-1], dtype=a.dtype) * \
        jnp.diagonal(a, axis1=-2, axis2=-1)[..., None, :]
    # values from one triangle (as LAPACK reads them); the gradient is torch's, unsymmetrized
    a = a + jax.lax.stop_gradient(sym - a)
    w, v = jnp.linalg.eigh(a, symmetrize_input=False)
    return w, v


@defop("linalg_eigvalsh", grad_name="LinalgEighBackward0")
def _eigvalsh(a, upper):
    return _eigh.fn(a, upper=upper)[0]


def _uplo(UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO == "U"


@public(out=True)
def linalg_eigh(A, UPLO="L"):
    _float_check(A, "linalg.eigh")
    _square_check(A, "linalg.eigh")
    return EighResult(*apply(_eigh, A, upper=_uplo(UPLO)))


@public(out=True)
def linalg_eigvalsh(A, UPLO="L"):
    _float_check(A, "linalg.eigvalsh")
    _square_check(A, "linalg.eigvalsh")
    return apply(_eigvalsh, A, upper=_uplo(UPLO))


@defop("linalg_pinv", grad_name="LinalgPinvBackward0")
def _pinv(a, rtol, hermitian):
    if a.size == 0:
        return jnp.zeros(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)
    return jnp.linalg.pinv(a, rtol=rtol, hermitian=hermitian)


@public(out=True)
def linalg_pinv(A, *, atol=None, rtol=None, hermitian=False):
    _float_check(A, "linalg.pinv")
    _matrix_check(A, "linalg.pinv")
    if atol is not None:
        raise NotImplementedError("linalg.pinv: atol is not supported by torchlike")
    if rtol is None:
        rtol = float(np.finfo(A.dtype.np).eps) * max(A.shape[-1], A.shape[-2])
    return apply(_pinv, A, rtol=float(rtol), hermitian=bool(hermitian))


def pinverse(input, rcond=1e-15):
    return linalg_pinv(input, rtol=rcond)


@defop("linalg_matrix_power", grad_name="LinalgMatrixPowerBackward0")
def _matrix_power(a, n):
    if n == 0:
        return jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    if n < 0:
        a = jnp.linalg.inv(a)
        n = -n
    return jnp.linalg.matrix_power(a, n)


@public(out=True)
def linalg_matrix_power(A, n):
    _square_check(A, "linalg.matrix_power")
    if n < 0:
        _float_check(A, "linalg.inv")
        _singular_check(A, "linalg.inv")
    return apply(_matrix_power, A, n=int(n))


matrix_power = linalg_matrix_power


@defop("linalg_lstsq", grad_name="LinalgLstsqBackward0")
def _lstsq(a, b, vector, rcond, want):
    if vector:
        b = b[..., None]
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    x = jnp.matmul(jnp.linalg.pinv(a, rtol=rcond), b)
    m, n = a.shape[-2:]
    s = jnp.linalg.svd(jax.lax.stop_gradient(a), compute_uv=False)
    rank = jnp.sum(s > rcond * jnp.max(s, axis=-1, keepdims=True), axis=-1).astype(jnp.int64)
    if want["residuals"]:
        r = jnp.sum(jnp.abs(jnp.matmul(a, x) - b) ** 2, axis=-2)
        if vector:
            r = r[..., 0]
    else:
        r = jnp.zeros((0,), a.dtype)
    if vector:
        x = x[..., 0]
    rk = rank if want["rank"] else jnp.zeros((0,), jnp.int64)
    return x, r, rk


@defop("lstsq_sv", differentiable=False)
def _lstsq_sv(a, want):
    if want:
        return jnp.linalg.svd(a, compute_uv=False)
    return jnp.zeros((0,), a.dtype)


@public(out=True)
def linalg_lstsq(A, B, rcond=None, *, driver=None):
    _float_check(A, "linalg.lstsq")
    _matrix_check(A, "linalg.lstsq")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {A.dtype} and other's dtype {B.dtype}")
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           f"gelsy, gelsd, gelss)")
    vector = B.ndim == A.ndim - 1
    m, n = A.shape[-2], A.shape[-1]
    if (B.shape[-1] if vector else B.shape[-2]) != m:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    if rcond is None:
        rcond = float(np.finfo(A.dtype.np).eps) * max(m, n)
    want = {"residuals": False, "sv": driver in ("gelsd", "gelss"), "rank": driver != "gels"}
    x, r, rk = apply(_lstsq, A, B, vector=vector, rcond=float(rcond), want=_Want(want))
    sv = apply(_lstsq_sv, A, want=want["sv"])
    if m > n and driver != "gelsy":
        full = bool(np.all(np.asarray(
            apply(_lstsq, A.detach(), B.detach(), vector=vector, rcond=float(rcond),
                  want=_Want({"residuals": False, "sv": False, "rank": True}))[2]._data) == n))
        if full:
            r = apply(_lstsq, A, B, vector=vector, rcond=float(rcond),
                      want=_Want({"residuals": True, "sv": False, "rank": False}))[1]
    return LstsqResult(x, r, rk, sv)


class _Want(dict):
    """A hashable dict of flags (a static kwarg)."""

    def __hash__(self):
        return hash(tuple(sorted(self.items())))


# ------------------------------------------------------------------ norms

def _grad_mask_zero(norm, g):
    return jnp.where(norm == 0, 0, g)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3))
def _vnorm(x, ord, axes, keepdim):
    return _vnorm_val(x, ord, axes, keepdim)


def _vnorm_val(x, ord, axes, keepdim):
    ax = jnp.abs(x)
    if ord == float("inf"):
        return jnp.max(ax, axis=axes, keepdims=keepdim) if x.size else \
            jnp.zeros(_red_shape(x.shape, axes, keepdim), ax.dtype)
    if ord == float("-inf"):
        return jnp.min(ax, axis=axes, keepdims=keepdim)
    if ord == 0:
        return jnp.sum((x != 0).astype(ax.dtype), axis=axes, keepdims=keepdim)
    if ord == 1:
        return jnp.sum(ax, axis=axes, keepdims=keepdim)
    if ord == 2:
        return jnp.sqrt(jnp.sum(ax * ax, axis=axes, keepdims=keepdim))
    return jnp.sum(ax ** ord, axis=axes, keepdims=keepdim) ** (1.0 / ord)


def _red_shape(shape, axes, keepdim):
    axes = range(len(shape)) if axes is None else axes
    return tuple(1 if i in axes else n for i, n in enumerate(shape) if keepdim or i not in axes)


def _vnorm_fwd(x, ord, axes, keepdim):
    n = _vnorm_val(x, ord, axes, keepdim)
    return n, (x, n)


def _vnorm_bwd(ord, axes, keepdim, res, g):
    # torch's linalg_vector_norm backward: zero where the norm is zero, ties share inf-norms
    x, n = res
    if not keepdim:
        ax = range(x.ndim) if axes is None else axes
        for a in sorted(ax):
            n = jnp.expand_dims(n, a)
            g = jnp.expand_dims(g, a)
    sgn = jnp.sign(x)
    if ord == 0:
        gx = jnp.zeros_like(x)
    elif ord == 1:
        gx = sgn * g
    elif ord == 2:
        gx = jnp.where(n == 0, 0, x / jnp.where(n == 0, 1, n)) * g
    elif ord in (float("inf"), float("-inf")):
        ab = jnp.abs(x)
        mask = (ab == n) | jnp.isnan(ab)
        cnt = jnp.sum(mask, axis=axes, keepdims=True)
        gx = sgn * (g / cnt) * mask
    else:
        ab = jnp.abs(x)
        gx = x * ab ** (ord - 2) * g / n ** (ord - 1)
        gx = jnp.where(n == 0, 0, gx)
    return (gx.astype(x.dtype),)


_vnorm.defvjp(_vnorm_fwd, _vnorm_bwd)


@defop("linalg_vector_norm", grad_name="LinalgVectorNormBackward0")
def _vector_norm(x, ord, dim, keepdim, dtype):
    if dtype is not None:
        x = x.astype(dtype)
    if x.dtype in (jnp.float16, jnp.bfloat16):
        # torch accumulates half-precision norms in float32 and rounds once
        return _vnorm(x.astype(jnp.float32), ord, dim, keepdim).astype(x.dtype)
    return _vnorm(x, ord, dim, keepdim)


def _dims(dim, n):
    if dim is None:
        return None
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(sorted(_wrap_dim(d, n) for d in dim)) if n else None


@public(out=True)
def linalg_vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    _float_check(x, "linalg.vector_norm")
    ord = float(ord)
    d = _dims(dim, x.ndim)
    if x.numel() == 0 and ord < 0 or (x.numel() == 0 and ord == float("inf") and
                                       (d is None or any(x.shape[k] == 0 for k in d))):
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on an empty "
                           f"tensor because the operation does not have an identity")
    return apply(_vector_norm, x, ord=ord, dim=d, keepdim=bool(keepdim),
                 dtype=None if dtype is None else D.to_dtype(dtype).np)


@defop("linalg_matrix_norm", grad_name="LinalgMatrixNormBackward0")
def _matrix_norm(a, ord, dims, keepdim):
    d0, d1 = dims
    if ord == "fro":
        return _vnorm(a, 2.0, tuple(sorted(dims)), keepdim)
    if ord in ("nuc", 2.0, -2.0):
        m = jnp.moveaxis(a, (d0, d1), (-2, -1))
        s = jnp.linalg.svd(m, compute_uv=False)
        r = jnp.sum(s, -1) if ord == "nuc" else (jnp.max(s, -1) if ord == 2.0 else
                                                 jnp.min(s, -1))
    else:
        if ord in (1.0, -1.0):
            sums = jnp.sum(jnp.abs(a), axis=d0, keepdims=True)
        else:
            sums = jnp.sum(jnp.abs(a), axis=d1, keepdims=True)
        red = jnp.max if ord > 0 else jnp.min
        r = red(sums, axis=(d0, d1))
    if keepdim:
        for d in sorted(dims):
            r = jnp.expand_dims(r, d)
    return r


@public(out=True)
def linalg_matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    _float_check(A, "linalg.matrix_norm")
    _matrix_check(A, "linalg.matrix_norm")
    if not isinstance(ord, str):
        ord = float(ord)
        if ord not in (1.0, -1.0, 2.0, -2.0, float("inf"), float("-inf")):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord:g} not supported.")
    elif ord not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    dim = tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {list(dim)}")
    d0, d1 = _wrap_dim(dim[0], A.ndim), _wrap_dim(dim[1], A.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    if dtype is not None:
        A = A.to(dtype)
    return apply(_matrix_norm, A, ord=ord, dims=(d0, d1), keepdim=bool(keepdim))


@public(out=True)
def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    if dim is not None and not isinstance(dim, int):
        dim = tuple(dim)
    if dim is not None and not isinstance(dim, int) and len(dim) == 2:
        return linalg_matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is None and ord is not None:
        if A.ndim == 2:
            return linalg_matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        if A.ndim != 1:
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input "
                               f"must be 1D or 2D. Got {A.ndim}D.")
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 2. Got "
                           f"[{dim}]")
    return linalg_vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


@public(out=True)
def linalg_cross(input, other, *, dim=-1):
    return _cross_impl(input, other, dim, "linalg.cross")


@public(out=True)
def linalg_multi_dot(tensors):
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0], tensors[-1]
    ts = list(tensors)
    if first.ndim == 1:
        ts[0] = first.unsqueeze(0)
    if last.ndim == 1:
        ts[-1] = last.unsqueeze(-1)
    out = ts[0]
    for t in ts[1:]:
        out = mm(out, t)
    if first.ndim == 1:
        out = out.squeeze(0)
    if last.ndim == 1:
        out = out.squeeze(-1)
    return out


# ------------------------------------------------------------------ Tensor methods

methods(**dict(vdot=vdot, outer=outer, ger=outer, addmm=addmm, addmv=addmv, addr=addr,
                   baddbmm=baddbmm, addbmm=addbmm, kron=kron, cross=cross, det=det,
                   logdet=logdet, slogdet=slogdet, inverse=inverse, pinverse=pinverse,
                   matrix_power=matrix_power, cholesky=cholesky, qr=qr, svd=svd))


inplace_methods(addmm=addmm, addmv=addmv, addr=addr, baddbmm=baddbmm, addbmm=addbmm)
toplevel("addmv_")
