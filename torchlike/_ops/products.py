"""Matrix and tensor products: matmul / @, mm, bmm, mv, dot, vdot, outer, einsum, tensordot,
addmm / addmv / addr / baddbmm / addbmm, kron, cross, chain_matmul; LinAlgError."""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from ..amp.autocast_mode import cast_composite
from .._registry import apply, broadcast_error, defop
from .._tensor import Tensor, _wrap_dim, not_a_tensor
from ._surface import alias, inplace_methods, methods, public, toplevel, write_out
from .view import _t, _view


def _own_out(fn):
    """``fn`` takes torch's ``out=`` itself (its out checks sit among the op's own checks, as in
    torch's structured kernels); the Tensor method is ``fn`` without ``out``."""
    import functools

    def no_out(*args, **kwargs):
        if "out" in kwargs:
            raise TypeError(f"{fn.__name__}() got an unexpected keyword argument 'out'")
        return fn(*args, **kwargs)
    functools.update_wrapper(no_out, fn)
    del no_out.__wrapped__
    import inspect
    sig = inspect.signature(fn)     # (read through fn.__wrapped__)
    no_out.__signature__ = sig.replace(parameters=[p for p in sig.parameters.values()
                                                   if p.name != "out"])
    fn.__wrapped__ = no_out
    fn._handles_out = True
    return fn


def _method(fn):
    """The Tensor method of an ``_own_out`` function: as in torch, no ``out=``."""
    name = fn.__name__

    def m(self, *args, **kwargs):
        if "out" in kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
        if name in _OVERLOADED:
            kwargs["_as_method"] = True
        return fn(self, *args, **kwargs)
    m.__name__ = m.__qualname__ = name
    m.__doc__ = fn.__doc__
    return m


def _need(fn, *args, call=None):
    """torch's argument parser: each ``(name, value, position)`` must be a Tensor. ``call``
    (the call's arguments and keywords): a refused argument that takes over calls (a sparse
    tensor, a ``__torch_function__`` type) is given the call, whose result is returned."""
    for name, v, pos in args:
        if not isinstance(v, Tensor):
            err = not_a_tensor(fn, v, name, pos)
            if call is None:
                raise err
            from ._surface import _refused
            return _refused(err, fn, False, call[0], {k: x for k, x in call[1].items()
                                                      if x is not None})
    return _NEEDED


_NEEDED = object()      # (``_need``: every argument is a Tensor)


_OVERLOADED = {"addmm": "mat1, Tensor mat2", "baddbmm": "batch1, Tensor batch2"}


def _check_factors(fn, beta, alpha, method=False):
    """torch's argument parser on ``beta``/``alpha`` (Numbers). addmm and baddbmm have a
    second overload (``out_dtype``): a bad factor there lists both."""
    bad = {k: v for k, v in (("beta", beta), ("alpha", alpha))
           if not isinstance(v, (bool, int, float, complex, np.number))
           and not (isinstance(v, Tensor) and v.numel() == 1)}
    if not bad:
        return
    if fn in _OVERLOADED and not method:
        got = ", ".join(f"{k}={type(v).__name__}" for k, v in sorted(
            (("beta", beta), ("alpha", alpha))) if k in bad or v != 1)
        sig = _OVERLOADED[fn]
        raise TypeError(
            f"{fn}() received an invalid combination of arguments - got (Tensor, Tensor, "
            f"Tensor, {got}), but expected one of:\n"
            f" * (Tensor input, Tensor {sig}, *, Number beta = 1, Number alpha = 1, Tensor out "
            f"= None)\n"
            f" * (Tensor input, Tensor {sig}, torch.dtype out_dtype, *, Number beta = 1, Number "
            f"alpha = 1, Tensor out = None)\n")
    k = next(iter(bad))
    raise TypeError(f"{fn}(): argument '{k}' must be Number, not {type(bad[k]).__name__}")


def _factors(dtype, beta, alpha, opmath=False):
    """``beta`` and ``alpha`` as torch's kernels read them: converted to the result's dtype
    (torch's checked conversion: a complex factor for a real result, a nan or inf for an
    integer one, raise; a float factor of an integer result truncates). ``opmath``: the
    kernel (addmm's, baddbmm's) reads a half-precision result's factors as float32."""
    res = []
    for v in (beta, alpha):
        v = D.check_scalar(v, D.float32 if opmath and dtype in (D.float16, D.bfloat16)
                           else dtype)
        if isinstance(v, complex) and not dtype.is_complex:
            v = v.real
        if not dtype.is_floating_point and not dtype.is_complex and isinstance(v, float):
            v = int(v)
        res.append(v)
    return res


def _out_check(out, expected):
    """A structured kernel's ``out``: it must have the dtype the kernel computes in."""
    if out is not None and out.dtype is not expected:
        raise RuntimeError(f"Expected out tensor to have dtype {_cpp(expected)}, but got "
                           f"{_cpp(out.dtype)} instead")


def _done(result, out, name):
    return result if out is None else write_out(result, out, name)

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


def _matmul_vjp(cots, xs, needs, ndims, vector_op=None):
    """MmBackward / BmmBackward for real matrices and batches of them (the registry sums the
    batch dimensions an operand was broadcast along): ``g @ b^T``, ``a^T @ g``."""
    (g,), (a, b) = cots, xs
    if a.ndim < 2 or b.ndim < 2 or jnp.iscomplexobj(g):
        return NotImplemented
    out = []
    if needs[0]:
        out.append(jnp.matmul(g, jnp.swapaxes(b, -1, -2)))
    if needs[1]:
        out.append(jnp.matmul(jnp.swapaxes(a, -1, -2), g))
    return out


@defop("matmul", promote="common", saves="others", grad_name=_matmul_name, vjp=_matmul_vjp)
def _matmul(a, b, ndims, vector_op=None):
    """``vector_op``: ``"mv"``/``"dot"`` when called as that function (not as ``matmul``):
    CPU autocast keeps those in float32, as torch's policy lists matmul and not them."""
    return jnp.matmul(a, b)


def _cpp(dt):
    """torch's C++ type name of ``dt`` (caffe2 TypeMeta: "float", "long int", "c10::Half")."""
    from .._tensor import _CPP
    return _CPP[dt.name]


def _not_for_bool(kernel, *ts):
    """torch's CPU kernels dispatch on every type but bool: a bool operand raises their
    NotImplementedError."""
    for t in ts:
        if t.dtype is D.bool:
            raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _dot_checks(a, b, out=None):
    if out is not None and out.dtype is not a.dtype:
        raise RuntimeError(f"result dtype {_tname(out.dtype)} does not match input dtype "
                           f"{_tname(a.dtype)}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_tname(a.dtype)} and {_tname(b.dtype)}")
    if a._d.shape[0] != b._d.shape[0]:
        n, m = a._d.shape[0], b._d.shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
                           f"have the same number of elements, but got {n} and {m} elements "
                           f"respectively")
    _not_for_bool("dot", a)


def _mv_checks(inp, mat, vec, rows, k, out=None):
    """addmv's checks after its rank check: sizes, then the three dtypes (torch's mv passes a
    result of ``vec``'s dtype as ``input``)."""
    n = vec._d.shape[0]
    if k != n or (inp is not None and tuple(inp._d.shape) not in ((rows,), (1,), ())):
        irows = rows if inp is None else _size(inp, 0)
        raise RuntimeError(f"size mismatch, got input ({irows}), mat ({rows}x{k}), vec ({n})")
    idt = (vec.dtype if out is None else out.dtype) if inp is None else inp.dtype
    if not (idt is mat.dtype is vec.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_tname(idt)}, {_tname(mat.dtype)}, and {_tname(vec.dtype)}")
    if inp is not None:
        _out_check(out, inp.dtype)
    if rows * k:
        # (an empty matrix computes nothing: zeros, or ``input`` scaled, for any dtype)
        _not_for_bool("addmv_impl_cpu", mat)


def _mm_checks(a, b, sa, sb, out=None):
    """mm's checks on the (folded) matrices of shapes ``sa`` and ``sb``."""
    if sa[1] != sb[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and "
                           f"{sb[0]}x{sb[1]})")
    _out_check(out, a.dtype)
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_cpp(a.dtype)} != {_cpp(b.dtype)}")
    if sa[0] * sb[1] and sa[1]:
        # (no element, or an empty contraction's zeros: torch's kernel dispatches nothing)
        _not_for_bool("addmm_impl_cpu_", a)


def _bmm_kernel_checks(b1, b2, numel, k, kernel="bmm"):
    """bmm's kernel: nothing to compute (no element or an empty contraction) skips its checks;
    else a bool ``batch1`` is not implemented and ``batch2`` must have its dtype."""
    if numel == 0 or k == 0:
        return False
    _not_for_bool(kernel, b1)
    if b1.dtype is not b2.dtype:
        raise RuntimeError(f"expected scalar type {_tname(b1.dtype)} but found "
                           f"{_tname(b2.dtype)}")
    return True


def _folds(a, b):
    """torch's should_fold for a vector ``a`` times a ``b`` of 3 or more dims: ``b``
    transposed folds into a matrix when ``a`` requires grad, ``b`` is empty, or the fold is a
    view (its leading dims contiguous over its transposed matrices)."""
    if a.requires_grad or b.numel() == 0:
        return True
    sh, st = list(b._d.shape), list(b.stride())
    sh[-2:], st[-2:] = sh[-1:-3:-1], st[-1:-3:-1]
    return all(st[i] == st[i + 1] * sh[i + 1] for i in range(len(sh) - 2))


def _check(a, b, out=None):
    """torch.matmul's checks, in the order of the kernel it reduces to (dot, mv, mm or bmm).
    Returns False where torch skips the dtype checks (an empty batched product)."""
    sa, sb = tuple(a._d.shape), tuple(b._d.shape)
    na, nb = len(sa), len(sb)
    if na == 0 or nb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{na}D and {nb}D")
    if na == 1 and nb == 1:
        _dot_checks(a, b, out)
    elif nb == 1:
        rows = _numel(sa[:-1])
        _mv_checks(None, a, b, rows, sa[-1], out)
    elif nb == 2:
        _mm_checks(a, b, (_numel(sa[:-1]), sa[-1]), sb, out)
    elif na == 1 and _folds(a, b):
        # torch folds ``b`` transposed into a matrix and multiplies it by the vector (mv)
        _mv_checks(None, b, a, _numel(sb[:-2]) * sb[-1], sb[-2], out)
    else:
        ba, bb = sa[:-2], sb[:-2]
        err = broadcast_error([ba, bb])
        if err:
            raise RuntimeError(err)
        batch = _numel(np.broadcast_shapes(ba, bb))
        k_a, k_b = sa[-1], sb[-2]
        if k_a != k_b:
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{batch}, {k_a}] but got: [{batch}, {k_b}].")
        m = sa[-2] if na >= 2 else 1
        _out_check(out, b.dtype)
        return _bmm_kernel_checks(a, b, batch * m * sb[-1], k_a)
    return True


@public(out=True)
@_own_out
def matmul(input, other, *, out=None):
    """torch.matmul: dot, mv, mm or a batched product by the inputs' dims."""
    r = _need("matmul", ("other", other, 2), call=((input, other), {"out": out}))
    if r is not _NEEDED:
        return r
    # (autocast casts a product's inputs before the kernel's dtype checks, as torch's does)
    input, other = cast_composite("matmul", input, other,
                                  ndims=(input._d.ndim, other._d.ndim))
    if not _check(input, other, out):
        # an empty batched product: torch's bmm returns zeros of ``other``'s dtype unchecked
        input = input.to(other.dtype)
    return _done(apply(_matmul, input, other, ndims=(input._d.ndim, other._d.ndim)), out,
                 "matmul")


@public(out=True)
@_own_out
def mm(input, mat2, *, out=None):
    r = _need("mm", ("mat2", mat2, 2), call=((input, mat2), {"out": out}))
    if r is not _NEEDED:
        return r
    input, mat2 = cast_composite("matmul", input, mat2, ndims=(2, 2))
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _mm_checks(input, mat2, tuple(input._d.shape), tuple(mat2._d.shape), out)
    return _done(apply(_matmul, input, mat2, ndims=(2, 2)), out, "mm")


@public(out=True)
@_own_out
def bmm(input, mat2, *, out=None):
    _need("bmm", ("mat2", mat2, 2))
    input, mat2 = cast_composite("matmul", input, mat2, ndims=(3, 3))
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    sa, sb = tuple(input._d.shape), tuple(mat2._d.shape)
    if sb[0] != sa[0] or sb[1] != sa[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{sa[0]}, {sa[2]}] but got: [{sb[0]}, {sb[1]}].")
    _out_check(out, mat2.dtype)
    if not _bmm_kernel_checks(input, mat2, sa[0] * sa[1] * sb[2], sa[2]):
        # nothing to compute: torch's result has batch2's dtype, unchecked
        input = input.to(mat2.dtype)
    return _done(apply(_matmul, input, mat2, ndims=(-3, -3)), out, "bmm")


@public(out=True)
@_own_out
def mv(input, vec, *, out=None):
    r = _need("mv", ("vec", vec, 2), call=((input, vec), {"out": out}))
    if r is not _NEEDED:
        return r
    _size(input, 0)         # torch sizes its result first
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, "
                           f"{vec.ndim}")
    _mv_checks(None, input, vec, input._d.shape[0], input._d.shape[1], out)
    return _done(apply(_matmul, input, vec, ndims=(2, 1), vector_op="mv"), out, "mv")


@public(out=True)
@_own_out
def dot(input, other, *, out=None):
    _need("dot", ("tensor", other, 2))
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           f"tensors")
    _dot_checks(input, other, out)
    return _done(apply(_matmul, input, other, ndims=(1, 1), vector_op="dot"), out, "dot")


methods(matmul=_method(matmul))
def _rmatmul(self, other):
    """``other @ self``: a tensor's matmul; anything else is left to Python, which raises its
    TypeError as torch's operator does (a list, a numpy array, a number)."""
    if not isinstance(other, (Tensor, jax.Array)):
        return NotImplemented
    return matmul(other, self)


methods(__rmatmul__=_rmatmul)
methods(mm=_method(mm), bmm=_method(bmm), mv=_method(mv), dot=_method(dot))


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
@_own_out
def vdot(input, other, *, out=None):
    _need("vdot", ("other", other, 2))
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           f"tensors")
    _dot_checks(input, other, out)
    return _done(apply(_vdot, input, other), out, "vdot")


@defop("outer", promote="common", grad_name="MulBackward0")
def _outer(a, b):
    return jnp.outer(a, b)


@public(out=True)
def outer(input, vec2):
    _need("outer", ("vec2", vec2, 2))
    if input.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.ndim}-D")
    if vec2.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    return apply(_outer, input, vec2)


ger = alias(outer, "ger")


@defop("einsum", promote="common", grad_name="EinsumBackward")
def _einsum(*ops, eq):
    return jnp.einsum(eq, *ops)


def _sublist_equation(args):
    """torch's sublist form ``einsum(op1, [0, 1], op2, [1, 2], [0, 2])``: (equation,
    operands), the integers 0-25 read as A-Z and 26-51 as a-z, Ellipsis as ``...``."""
    def letter(n):
        if n is Ellipsis:
            return "..."
        if 0 <= n < 26:
            return chr(ord("A") + n)
        if 26 <= n < 52:
            return chr(ord("a") + n - 26)
        raise ValueError("einsum(): subscript in subscript list is not within the valid range "
                         "[0, 52)")
    eq = ",".join("".join(letter(s) for s in sub) for sub in args[1::2])
    if len(args) % 2 == 1:
        return eq + "->" + "".join(letter(s) for s in args[-1]), args[:-1:2]
    return eq, args[::2]


def _einsum_label(c):
    return ("a" <= c <= "z") or ("A" <= c <= "Z")


def _einsum_check_lhs(equation, num_ops):
    """torch's parse of the operands' side (its checks and messages, in its order; an index
    counts every character of the equation, spaces included)."""
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    curr, found_ell, i = 0, False, 0
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            if found_ell:
                raise RuntimeError(f"einsum(): found '.' for operand {curr} for which an "
                                   f"ellipsis was already found")
            if lhs[i:i + 3] != "...":
                raise RuntimeError(f"einsum(): found '.' for operand {curr} that is not part of "
                                   f"any ellipsis")
            i += 2
            found_ell = True
        elif c == ",":
            curr += 1
            if curr >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in "
                                   "the equation")
            found_ell = False
        elif c != " " and not _einsum_label(c):
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation "
                               f"string, subscripts must be in [a-zA-Z]")
        i += 1
    if curr != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation")


def _einsum_check_rhs(equation, seen):
    """torch's parse of the output side: ``seen`` holds every input label."""
    arrow = equation.find("->")
    if arrow < 0:
        return
    rhs = equation[arrow + 2:]
    found_ell, out, i = False, set(), 0
    while i < len(rhs):
        c = rhs[i]
        if c == ".":
            if found_ell:
                raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was "
                                   "already found")
            if rhs[i:i + 3] != "...":
                raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                   "ellipsis (...)")
            i += 2
            found_ell = True
        elif c != " ":
            if not _einsum_label(c):
                raise RuntimeError(f"einsum(): invalid subscript given at index {arrow + 2 + i} "
                                   f"in the equation string, subscripts must be in [a-zA-Z]")
            if c in out:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in "
                                   f"the output")
            if c not in seen:
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                   f"equation for any input operand")
            out.add(c)
        i += 1


def einsum(*args):
    if len(args) < 2:
        raise ValueError("einsum(): must specify the equation string and at least one operand, "
                         "or at least one operand and its subscripts list")
    if isinstance(args[0], Tensor):
        equation, operands = _sublist_equation(args)
    else:
        equation, operands = args[0], args[1:]
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    if all(isinstance(o, Tensor) for o in operands):
        operands = cast_composite("einsum", *operands)
    _einsum_check_lhs(equation, len(operands))
    eq = equation.replace(" ", "")
    lhs = eq.split("->")[0].split(",")
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
        first = {}
        for lab, p in zip(labels, pos):
            n = o._d.shape[p]
            if lab in first:
                # a repeated label takes the diagonal
                prev = o._d.shape[first[lab]]
                if n != prev:
                    raise RuntimeError(f"einsum(): subscript {lab} is repeated for operand {k} "
                                       f"but the sizes don't match, {n} != {prev}")
                continue
            first[lab] = p
            if lab in seen and seen[lab] != n and n != 1 and seen[lab] != 1:
                raise RuntimeError(f"einsum(): subscript {lab} has size {n} for operand {k} "
                                   f"which does not broadcast with previously seen size "
                                   f"{seen[lab]}")
            if n != 1 or lab not in seen:
                seen[lab] = n
    _einsum_check_rhs(equation, seen)
    final = _einsum_dtype(eq, operands)
    ops = [o if o.dtype is final else o.to(final) for o in operands]
    if len(ops) == 1:
        view = _einsum_view(eq, ops[0])
        if view is not None:
            return view
    return apply(_einsum, *ops, eq=eq)


def _einsum_view(eq, o):
    """A one-operand einsum that sums over nothing, as torch's: a view of ``o``, the diagonals
    of its repeated labels permuted to the output's order (``'ij->ji'`` is ``o.permute(1, 0)``,
    ``'ii->i'`` is ``o.diagonal()``); None where a label is summed."""
    lhs, arrow, rhs = eq.partition("->")
    if "..." in lhs:
        pre, post = lhs.split("...")
        ell = [("...", k) for k in range(o.ndim - len(pre) - len(post))]
        tokens = list(pre) + ell + list(post)
    else:
        ell, tokens = [], list(lhs)
    if arrow:
        pre, dots, post = rhs.partition("...")
        out = list(pre) + (ell if dots else []) + list(post)
    else:
        out = ell + sorted(c for c in set(lhs) if c != "." and lhs.count(c) == 1)
    if set(tokens) - set(out):
        return None
    t = o
    for lab in out:
        while tokens.count(lab) > 1:
            i = tokens.index(lab)
            j = tokens.index(lab, i + 1)
            t = t.diagonal(0, i, j)
            tokens = [x for k, x in enumerate(tokens) if k not in (i, j)] + [lab]
    return t.permute([tokens.index(lab) for lab in out])


def _einsum_path(eq, operands):
    """The contraction path torch's einsum takes: with 3 or more operands and opt_einsum on,
    opt_einsum's (flattened pairs, each result appended last); else left to right (None, each
    result put first)."""
    from .. import backends
    oe = backends.opt_einsum
    if len(operands) <= 2 or not oe.enabled or not oe.is_available():
        return None
    import opt_einsum           # (a dependency of jax)
    path = opt_einsum.contract_path(eq, *[tuple(o._d.shape) for o in operands], shapes=True,
                                    optimize=oe.strategy)[0]
    return [tuple(pair) for pair in path]


def _einsum_dtype(eq, operands):
    """torch's einsum run over each operand's dtype and sizes only: its contraction order, the
    sums of labels no later operand has (an integral or bool sum is int64), ``mul`` (with type
    promotion) for a pair that sums no shared label, ``bmm`` (no bool kernel, one dtype:
    torch's errors) for one that does. Returns the result's dtype."""
    sides = eq.split("->")
    ins = sides[0].split(",")
    labelled = []                        # per operand: {label: size} (ellipsis dims numbered)
    for sub, o in zip(ins, operands):
        shape = tuple(o._d.shape)
        if "..." in sub:
            pre, post = sub.split("...")
            n_ell = len(shape) - len(pre) - len(post)
            labels = list(pre) + [("...", j) for j in range(-n_ell, 0)] + list(post)
        else:
            labels = list(sub)
        sizes = {}
        for lab, n in zip(labels, shape):
            sizes[lab] = n                  # (a repeated label: its diagonal, same size)
        labelled.append(sizes)
    if len(sides) > 1:
        out = {c for c in sides[1] if c.isalpha()}
        ell_out = "..." in sides[1]
    else:
        counts = {}
        for sub in ins:
            for c in sub:
                if c.isalpha():
                    counts[c] = counts.get(c, 0) + 1
        out = {c for c, k in counts.items() if k == 1}
        ell_out = True
    every = {lab for sizes in labelled for lab in sizes}
    contracted = [lab for lab in every
                  if not (lab in out or (isinstance(lab, tuple) and ell_out))]
    # torch's permuted layout: the output's dimensions, the ellipsis (when the output has it
    # not), then the contracted labels, A-Z before a-z
    ell = sorted({lab for lab in every if isinstance(lab, tuple)}, key=lambda t: t[1])
    order = []
    if len(sides) > 1:
        for c in sides[1].replace("...", "."):
            order.extend(ell if c == "." else [c] if c.isalpha() else [])
    else:
        order = ell + sorted(out)
    if not ell_out:
        order += ell
    order += sorted(lab for lab in contracted if not isinstance(lab, tuple))
    dim_counts = {lab: sum(1 for sizes in labelled if sizes.get(lab, 1) != 1)
                  for lab in contracted}

    def summed(dt):
        return D.int64 if not (dt.is_floating_point or dt.is_complex) else dt

    if len(operands) == 1:
        return summed(operands[0].dtype) if contracted else operands[0].dtype
    ops = [(o.dtype, {k: v for k, v in sizes.items() if v != 1})
           for o, sizes in zip(operands, labelled)]
    path = _einsum_path(eq, operands)
    step = 0
    while len(ops) > 1:
        i, j = (0, 1) if path is None else sorted(path[step])
        step += 1
        (adt, a), (bdt, b) = ops[i], ops[j]
        del ops[j], ops[i]
        sum_dims, a_sum, b_sum = [], [], []
        for lab in contracted:
            if lab in a and lab in b:
                dim_counts[lab] -= 1
                if dim_counts[lab] == 1:
                    sum_dims.append(lab)
                    dim_counts[lab] = 0
            elif dim_counts[lab] == 1:
                if lab in a:
                    a_sum.append(lab)
                    dim_counts[lab] = 0
                elif lab in b:
                    b_sum.append(lab)
                    dim_counts[lab] = 0
        if a_sum:
            adt, a = summed(adt), {k: v for k, v in a.items() if k not in a_sum}
        if b_sum:
            bdt, b = summed(bdt), {k: v for k, v in b.items() if k not in b_sum}
        both = {**a, **b}
        if not sum_dims:
            dt = D.promote_types(adt, bdt)
        else:
            # sumproduct_pair: bmm(left, right), swapped where every dimension only the right
            # has comes before those only the left has
            lo = [d for d, lab in enumerate(order) if lab not in sum_dims and lab in a
                  and lab not in b]
            ro = [d for d, lab in enumerate(order) if lab not in sum_dims and lab not in a]
            if lo and ro and ro[-1] < lo[0]:
                adt, bdt = bdt, adt
            k = int(np.prod([a[lab] for lab in sum_dims]))
            numel = int(np.prod([v for lab, v in both.items() if lab not in sum_dims]))
            if numel == 0 or k == 0:
                dt = bdt                     # (nothing to compute: batch2's dtype, unchecked)
            else:
                if adt is D.bool:
                    raise NotImplementedError('"bmm" not implemented for \'Bool\'')
                if adt is not bdt:
                    raise RuntimeError(f"expected scalar type {_tname(adt)} but found "
                                       f"{_tname(bdt)}")
                dt = adt
        res = (dt, {k: v for k, v in both.items() if k not in sum_dims})
        if path is None:
            ops.insert(0, res)
        else:
            ops.append(res)
    return ops[0][0]


@defop("tensordot", promote="common", grad_name="ViewBackward0")   # (torch: mm, then view)
def _tensordot(a, b, dims_a, dims_b):
    return jnp.tensordot(a, b, (dims_a, dims_b))


@public(out=True)
@_own_out
def tensordot(a, b, dims=2, out=None):
    if not isinstance(dims, (tuple, list, Tensor, int)) or isinstance(dims, bool):
        raise RuntimeError(f"tensordot expects dims to be int or tuple[list[int], list[int]] or "
                           f"list[list[int]] containing two lists, but got dims={dims}")
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        for t in (a, b):
            if not isinstance(t, Tensor):
                raise AttributeError(f"'{type(t).__name__}' object has no attribute 'dim'")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da = list(range(-dims, 0))
        db = list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    given = list(zip(da, db))
    da = tuple(_wrap_dim(d, a.ndim) for d in da)
    db = tuple(_wrap_dim(d, b.ndim) for d in db)
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    for x, y, (gx, gy) in zip(da, db, given):
        if a.shape[x] != b.shape[y]:
            # torch sums the other operand over a contracted dim of size 1
            if a.shape[x] == 1:
                b = b.sum(y, keepdim=True)
                continue
            if b.shape[y] == 1:
                a = a.sum(x, keepdim=True)
                continue
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[x]} in dim {gx} and second has size {b.shape[y]} in "
                               f"dim {gy}")
    _not_for_bool("dot" if a.ndim == b.ndim == len(da) == 1 else "addmm_impl_cpu_", a)
    if out is not None and out.dtype is not a.dtype:
        raise RuntimeError(f"tensordot: Expected the output tensor to have dtype "
                           f"{_tname(a.dtype)}, but got an output tensor with dtype "
                           f"{_tname(out.dtype)}")
    return _done(apply(_tensordot, a, b, dims_a=da, dims_b=db), out, "tensordot")


def _addmm_name(kw):
    return {"mm": "AddmmBackward0", "mv": "AddmvBackward0", "mvn": "AddmvBackward0",
            "mvf": "AddmvBackward0", "mv0": "AddmvBackward0", "r": "AddrBackward0",
            "bmm": "BaddbmmBackward0", "addbmm": "AddbmmBackward0",
            "linear": "AddmmBackward0", "linear_add": "AddBackward0"}[kw["kind"]]


def _low(dtype):
    """float16 / bfloat16: torch's kernels compute their products in float32."""
    return dtype == jnp.bfloat16 or dtype == jnp.float16


def _addmm_vjp(cots, xs, needs, beta, alpha, kind):
    """addmm's backward as torch's AddmmBackward0 computes it (real dtypes, the matrix-matrix
    and F.linear kinds): ``g * beta``, ``g @ b.T * alpha``, ``a.T @ g * alpha``; in float16 /
    bfloat16 as ``jax.vjp`` of the float32 forward: ``g`` read as float32, each result
    rounded once."""
    (g,), (c, a, b) = cots, xs
    if kind not in ("mm", "linear") or jnp.iscomplexobj(g):
        return NotImplemented
    low = _low(g.dtype)
    if low:
        dt, g = g.dtype, g.astype(jnp.float32)
        a, b = a.astype(jnp.float32), b.astype(jnp.float32)
        beta, alpha = np.float32(beta), np.float32(alpha)
    out = []
    if needs[0]:
        out.append(jnp.zeros_like(g) if beta == 0 else g * beta if beta != 1 else g)
    if needs[1] or needs[2]:
        ga = g if alpha == 1 else g * alpha if alpha != 0 else jnp.zeros_like(g)
        if kind == "mm":
            if needs[1]:
                out.append(jnp.matmul(ga, b.T))
            if needs[2]:
                out.append(jnp.matmul(a.T, ga))
        else:                   # (rows of ``a`` times the weight ``b`` transposed)
            a2 = a.reshape(-1, a.shape[-1])
            if needs[1]:
                out.append(jnp.matmul(ga, b).reshape(a.shape))
            if needs[2]:
                out.append(jnp.matmul(ga.T, a2))
    return [x.astype(dt) for x in out] if low else out


def _to_low(v, dtype):
    """A factor converted to a half-precision dtype (torch's ``Scalar.to<scalar_t>()``), as a
    float32."""
    return np.float32(np.asarray(np.float32(v)).astype(dtype))


def _addmm_low(c, a, b, beta, alpha, kind):
    """The float16/bfloat16 products as torch's CPU kernels compute them: the product
    accumulated in float32 and, for addmm / F.linear / baddbmm, ``beta * c + alpha * p`` in
    float32 with one rounding (cpublas gemm and the bmm kernel take float32 factors); addr
    (``"r"``) computes ``beta * c + alpha * v1 * v2`` in the tensors' dtype, rounding after each
    operation, with its factors in that dtype; addbmm
    adds its batches one ``addmm_`` at a time, rounding after each; addmv follows torch's
    gemv, which reads its factors in the tensor's dtype: ``"mv"`` (a row-major matrix,
    ``beta * c`` rounded first), ``"mvf"`` (float16 with ``alpha`` 1 and a unit-stride
    vector: the float32 dot product kernel, one rounding), ``"mvn"`` (a column-major matrix:
    ``alpha`` folded into the vector, the product rounded before it is added to the rounded
    ``beta * c``); ``"linear_add"``: F.linear's unfused form (matmul, then the bias added)."""
    f32, dt = jnp.float32, c.dtype
    if kind == "r":
        bl, al = _to_low(beta, dt), _to_low(alpha, dt)
        av = a if al == 1 else a * jnp.asarray(al, dt)
        # (a product of two half-precision numbers is exact in float32: the dot rounds it
        # once, as the elementwise kernel, and its VJP is torch's mv, summed in float32)
        p = jax.lax.dot_general(av[:, None], b[None, :], (((1,), (0,)), ((), ())))
        if bl == 0:
            return jnp.broadcast_to(p, jnp.broadcast_shapes(p.shape, c.shape))
        return (c if bl == 1 else c * jnp.asarray(bl, dt)) + p
    if kind == "linear" or kind == "linear_add":
        p = jax.lax.dot_general(a.reshape(-1, a.shape[-1]), b, (((1,), (1,)), ((), ())),
                                preferred_element_type=f32)
        if kind == "linear_add":
            return (c.astype(f32) + p.astype(dt).astype(f32)).astype(dt)
    elif kind == "mvn":
        x = b.astype(f32) * _to_low(alpha, dt)
        p = jnp.matmul(a.astype(f32), x)
        bl = _to_low(beta, dt)
        if bl == 0:
            return jnp.broadcast_to(p, jnp.broadcast_shapes(p.shape, c.shape)).astype(dt)
        cb = c if bl == 1 else (c.astype(f32) * bl).astype(dt)
        return (cb.astype(f32) + p.astype(dt).astype(f32)).astype(dt)
    else:
        p = jnp.matmul(a, b, preferred_element_type=f32)
    if kind in ("mv", "mvf"):
        bl, al = _to_low(beta, dt), _to_low(alpha, dt)
        if kind == "mv" and al != 1:
            p = p * al
        if bl == 0:
            return jnp.broadcast_to(p, jnp.broadcast_shapes(p.shape, c.shape)).astype(dt)
        cb = c.astype(f32) * bl if kind == "mvf" else (c.astype(f32) * bl).astype(dt).astype(f32)
        return (cb + p).astype(dt)
    if alpha == 0 and kind in ("mm", "addbmm", "linear"):
        p = jnp.zeros_like(p)       # (torch's gemm with alpha 0 reads no product)
    elif alpha != 1:
        p = p * np.float32(alpha)
    if kind == "addbmm":
        # torch: ``result.addmm_(batch1[i], batch2[i], beta, alpha)``, beta 1 after the first
        n = p.shape[0]
        if n == 0:
            first = jnp.zeros(p.shape[1:], f32)
        else:
            first = p[0]
        acc = (first if beta == 0 else c.astype(f32) * np.float32(beta) + first) \
            if beta != 1 else c.astype(f32) + first
        acc = jnp.broadcast_to(acc, p.shape[1:]).astype(dt)
        if n > 1:
            acc = jax.lax.fori_loop(1, n, lambda i, r: (r.astype(f32) + p[i]).astype(dt), acc)
        return acc
    if beta == 0:
        return jnp.broadcast_to(p, jnp.broadcast_shapes(p.shape, c.shape)).astype(dt)
    cb = c.astype(f32) if beta == 1 else c.astype(f32) * np.float32(beta)
    return (cb + p).astype(dt)


@defop("addmm", promote="common", grad_name=_addmm_name, saves={1: (2,), 2: (1,)},
       vjp=_addmm_vjp)
def _addmm(c, a, b, beta, alpha, kind):
    if kind == "mv0":
        return c * jnp.asarray(beta).astype(c.dtype)     # (torch's scalar_tensor(beta, c))
    if _low(c.dtype) and _low(a.dtype) and _low(b.dtype):
        return _addmm_low(c, a, b, beta, alpha, kind)
    if kind == "r":
        p = jnp.outer(a, b)
    elif kind in ("linear", "linear_add"):
        # ``a`` of any rank times the weight ``b`` transposed, rows flattened (F.linear
        # without autograd: no transposed weight nor flattened input to make first)
        p = jax.lax.dot_general(a.reshape(-1, a.shape[-1]), b, (((1,), (1,)), ((), ())))
    elif kind == "addbmm":
        p = jnp.sum(jnp.matmul(a, b), axis=0, dtype=jnp.result_type(a, b))
    else:
        p = jnp.matmul(a, b)
    if alpha == 0 and kind in ("mm", "mv", "mvn", "mvf", "addbmm", "linear"):
        # (torch's BLAS call with alpha 0 reads no product: inf or nan there do not leak; its
        # bmm and outer kernels multiply)
        p = jnp.zeros_like(p)
    elif alpha != 1:
        p = p * alpha
    if beta == 0:
        return jnp.broadcast_to(p, jnp.broadcast_shapes(p.shape, c.shape)) + jnp.zeros((),
                                                                                       p.dtype)
    return (c * beta if beta != 1 else c) + p


def _add_check(input, shape):
    ish = tuple(input._d.shape)
    if len(ish) > len(shape):
        raise RuntimeError(f"expand(torch.{_tname(input.dtype)}Tensor{{{list(ish)}}}, size="
                           f"{list(shape)}): the number of sizes provided ({len(shape)}) must be "
                           f"greater or equal to the number of dimensions in the tensor "
                           f"({len(ish)})")
    if len(ish) > len(shape) or any(s != 1 and s != t for s, t in
                                    zip(ish[::-1], shape[::-1])):
        bad = next(i for i in range(1, len(ish) + 1)
                   if i > len(shape) or ish[-i] not in (1, shape[-i]))
        raise RuntimeError(f"The expanded size of the tensor ({shape[-bad]}) must match the "
                           f"existing size ({ish[-bad]}) at non-singleton dimension "
                           f"{len(shape) - bad}.  Target sizes: {list(shape)}.  Tensor sizes: "
                           f"{list(ish)}")


def _inplace_check(self, dtype, shape):
    """A structured in-place kernel's ``self`` must be its output: same dtype and size."""
    if self.dtype is not dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {_cpp(self.dtype)} and output "
                           f"tensor dtype {_cpp(dtype)} should match")
    if tuple(self._d.shape) != tuple(shape):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(self._d.shape)} and "
                           f"output tensor size {list(shape)} should match")


def _addmm_checks(input, mat1, mat2, out=None, inplace=False, beta=1):
    """addmm's meta checks (dtypes first, then ranks and sizes), its expansion of ``input``
    and its kernel's dtype dispatch."""
    _same_dtype(input, mat2, "self and mat2 must have the same dtype, but got {} and {}")
    _same_dtype(mat1, mat2, "mat1 and mat2 must have the same dtype, but got {} and {}")
    if mat1.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.ndim}-D tensor")
    if mat2.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix, got {mat2.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    if inplace:
        _inplace_check(input, mat1.dtype, (mat1.shape[0], mat2.shape[1]))
    _add_check(input, (mat1.shape[0], mat2.shape[1]))
    _out_check(out, input.dtype)
    if not mat1.shape[0] * mat2.shape[1]:
        return              # (no element: torch's kernel returns before any dispatch)
    if mat1.shape[1]:
        _not_for_bool("addmm_impl_cpu_", mat1)
    elif not (isinstance(beta, Tensor) or beta == 0):
        # an empty contraction: torch scales the result in place by ``beta`` (mul_), which
        # refuses a factor of a higher kind than the result's dtype
        _scale_check(input.dtype, beta)


def _scale_check(dtype, v):
    """torch's ``result.mul_(v)`` cast check of a Python number ``v``."""
    kind = (0 if isinstance(v, (bool, np.bool_)) else 1 if isinstance(v, (int, np.integer))
            else 2 if isinstance(v, (float, np.floating)) else 3)
    have = (0 if dtype is D.bool else 3 if dtype.is_complex else 2 if dtype.is_floating_point
            else 1)
    if kind > have:
        if kind == 1:
            name = "Long"
        elif kind == 2:
            name = _tname(D.get_default_dtype())
        else:
            name = {"Double": "ComplexDouble", "Half": "ComplexHalf"}.get(
                _tname(dtype), "ComplexFloat")
        raise RuntimeError(f"result type {name} can't be cast to the desired output type "
                           f"{_tname(dtype)}")


@public(out=True)
@_own_out
def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None, _as_method=False):
    _need("addmm", ("mat1", mat1, 2), ("mat2", mat2, 3))
    input, mat1, mat2 = cast_composite("addmm", input, mat1, mat2, kind="mm")
    _check_factors("addmm", beta, alpha, _as_method)
    _addmm_checks(input, mat1, mat2, out, beta=beta)
    beta, alpha = _factors(input.dtype, beta, alpha, opmath=True)
    return _done(apply(_addmm, input, mat1, mat2, beta=beta, alpha=alpha, kind="mm"), out,
                 "addmm")


def _addmm_inplace(input, mat1, mat2, *, beta=1, alpha=1):
    _need("addmm_", ("mat1", mat1, 1), ("mat2", mat2, 2))
    _check_factors("addmm_", beta, alpha)
    _addmm_checks(input, mat1, mat2, inplace=True, beta=beta)
    beta, alpha = _factors(input.dtype, beta, alpha, opmath=True)
    return apply(_addmm, input, mat1, mat2, beta=beta, alpha=alpha, kind="mm")


def linear_graph(bias, input, weight):
    """F.linear's common case where autograd records, as torch records it: ``addmm`` over
    ``weight.t()``, and for other ranks than 2 the rows flattened before and the result viewed
    back after. The caller has made the checks (float operands of one dtype, matching sizes, a
    non-empty product), so the views are applied without their argument parsing. None for a
    strided input of more than 2 dimensions (torch's graph is then F.linear's general one)."""
    shape = input._d.shape
    if len(shape) == 2:
        return apply(_addmm, bias, input, apply(_t, weight), beta=1, alpha=1, kind="mm")
    k = shape[-1]
    if input._alias is None:            # (a root is contiguous: its rows are a view)
        rows = apply(_view, input, shape=(math.prod(shape) // k, k))
    elif input.is_contiguous():
        rows = input.reshape(-1, k)
    else:
        return None                     # (torch: matmul, then the bias added in place)
    y = apply(_addmm, bias, rows, apply(_t, weight), beta=1, alpha=1, kind="mm")
    return apply(_view, y, shape=(*shape[:-1], weight._d.shape[0]))


def linear_rows(bias, input, weight):
    """``input`` (its rows flattened) times ``weight`` transposed plus ``bias``, as one op: F.linear
    where autograd records nothing (torch's graph, ``t`` and ``view`` around ``addmm``, is then
    not observable)."""
    _not_for_bool("addmm_impl_cpu_", input)
    kind = "linear"
    if input.dtype in (D.float16, D.bfloat16) and input.ndim > 2 and not input.is_contiguous():
        kind = "linear_add"     # (torch: the matmul, rounded, then the bias added in place)
    return apply(_addmm, bias, input, weight, beta=1, alpha=1, kind=kind)


@public(out=True)
@_own_out
def addmv(input, mat, vec, *, beta=1, alpha=1, out=None, _inplace=False):
    _need("addmv", ("mat", mat, 2), ("vec", vec, 3))
    _check_factors("addmv", beta, alpha)
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    _mv_checks(input, mat, vec, mat.shape[0], mat.shape[1], out)
    if _inplace:
        _inplace_check(input, vec.dtype, (mat.shape[0],))
    given = beta
    beta, alpha = _factors(input.dtype, beta, alpha)
    kind = "mv"
    if mat.numel() == 0 and not (isinstance(given, Tensor) or given == 0):
        # an empty matrix: torch's kernel writes ``input * scalar_tensor(beta, input's
        # dtype)``, of ``input``'s own shape (an out tensor resized to it); zeros for beta 0
        kind = "mv0"
        if not isinstance(given, complex):
            beta = bool(given) if input.dtype is D.bool else beta
    elif mat.dtype in (D.float16, D.bfloat16):
        kind = _gemv_kind(mat, vec, alpha)
    return _done(apply(_addmm, input, mat, vec, beta=beta, alpha=alpha, kind=kind), out,
                 "addmv")


def _gemv_kind(mat, vec, alpha):
    """Which of torch's gemv paths a half-precision addmv takes (they round differently):
    ``"mvn"`` for a column-major matrix (gemv 'n'), else ``"mvf"`` for float16 with ``alpha``
    1 and a unit-stride vector (the fast float32 dot product kernel), else ``"mv"``."""
    m, n = mat.shape
    try:
        s0, s1 = mat.stride()
        incx = vec.stride(0)
    except Exception:                   # (no strides known: a contiguous matrix)
        s0, s1, incx = n, 1, 1
    if s0 == 1 and (n == 1 or s1 >= max(1, m)):
        return "mvn"
    if mat.dtype is D.float16 and incx == 1 and _to_low(alpha, np.float16) == 1:
        return "mvf"
    return "mv"


def _addmv_inplace(input, mat, vec, *, beta=1, alpha=1):
    return addmv(input, mat, vec, beta=beta, alpha=alpha, _inplace=True)


@public(out=True)
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    _need("addr", ("vec1", vec1, 2), ("vec2", vec2, 3))
    if vec1.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.ndim}-D")
    if vec2.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    _add_check(input, (vec1.shape[0], vec2.shape[0]))
    rt = D.promote_types(D.promote_types(input.dtype, vec1.dtype), vec2.dtype)
    if rt is not D.bool:
        for n, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, bool):
                raise RuntimeError(f"Boolean {n} only supported for Boolean results.")
    for n, v in (("beta", beta), ("alpha", alpha)):
        if not isinstance(v, (bool, int, float, complex, np.number, Tensor)):
            raise TypeError(f"addr(): argument '{n}' must be Number, not {type(v).__name__}")
    if not rt.is_floating_point and not rt.is_complex and rt is not D.bool:
        for n, v in (("beta", beta), ("alpha", alpha)):
            if not isinstance(v, int):
                raise RuntimeError(f"For integral input tensors, argument {n} must not be a "
                                   f"floating point number.")
    beta, alpha = _factors(rt, beta, alpha)
    return apply(_addmm, input, vec1, vec2, beta=beta, alpha=alpha, kind="r")


def _size(t, d):
    """``t.size(d)`` as torch reads it (IndexError out of range)."""
    n = t._d.ndim
    if n == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if d >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {d})")
    return t._d.shape[d]


def _bmm_shape_checks(b1, b2):
    if b1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b1.shape[0] != b2.shape[0] or b1.shape[2] != b2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b1.shape[0]}, {b1.shape[2]}] but got: [{b2.shape[0]}, "
                           f"{b2.shape[1]}].")


def _baddbmm(input, batch1, batch2, beta, alpha, inplace, out=None, as_method=False):
    p = 1 if inplace else 2
    _need("baddbmm_" if inplace else "baddbmm", ("batch1", batch1, p), ("batch2", batch2, p + 1))
    _check_factors("baddbmm_" if inplace else "baddbmm", beta, alpha, as_method)
    shape = (_size(batch1, 0), _size(batch1, 1), _size(batch2, 2))
    _add_check(input, shape)
    if input.dtype is not batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_cpp(input.dtype)}, "
                           f"batch1: {_cpp(batch1.dtype)}, batch2: {_cpp(batch2.dtype)}")
    _bmm_shape_checks(batch1, batch2)
    if inplace:
        _inplace_check(input, batch2.dtype, shape)
    _out_check(out, batch2.dtype)
    beta, alpha = _factors(input.dtype, beta, alpha, opmath=True)
    if not _bmm_kernel_checks(batch1, batch2, _numel(shape), shape[2] and batch1.shape[2],
                              "baddbmm"):
        # nothing to multiply: torch's result has batch2's dtype
        batch1, input = batch1.to(batch2.dtype), input.to(batch2.dtype)
    return apply(_addmm, input, batch1, batch2, beta=beta, alpha=alpha, kind="bmm")


@public(out=True)
@_own_out
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None, _as_method=False):
    if isinstance(batch1, Tensor) and isinstance(batch2, Tensor):
        input, batch1, batch2 = cast_composite("addmm", input, batch1, batch2, kind="bmm")
    return _done(_baddbmm(input, batch1, batch2, beta, alpha, False, out, _as_method), out,
                 "baddbmm")


def _baddbmm_inplace(input, batch1, batch2, *, beta=1, alpha=1):
    return _baddbmm(input, batch1, batch2, beta, alpha, True)


@public(out=True)
@_own_out
def addbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):
    _need("addbmm", ("batch1", batch1, 2), ("batch2", batch2, 3))
    input, batch1, batch2 = cast_composite("addmm", input, batch1, batch2, kind="addbmm")
    _check_factors("addbmm", beta, alpha)
    _add_check(input, (_size(batch1, 1), _size(batch2, 2)))
    _bmm_shape_checks_addbmm(batch1, batch2)
    # torch copies ``input`` into the result (``out``'s dtype), then adds each batch's addmm
    res = input if out is None else input.to(out.dtype)
    beta, alpha = _factors(res.dtype, beta, alpha, opmath=True)
    if batch1.shape[0] == 0:
        # no batch: torch returns ``beta * input`` without its per-batch addmm checks
        return _done(apply(_addmm, res, batch1.to(res.dtype), batch2.to(res.dtype), beta=beta,
                           alpha=alpha, kind="addbmm"), out, "addbmm")
    _same_dtype(res, batch2, "self and mat2 must have the same dtype, but got {} and {}")
    _same_dtype(batch1, batch2, "mat1 and mat2 must have the same dtype, but got {} and {}")
    _not_for_bool("addmm_impl_cpu_", batch1)
    return _done(apply(_addmm, res, batch1, batch2, beta=beta, alpha=alpha, kind="addbmm"),
                 out, "addbmm")


def _bmm_shape_checks_addbmm(b1, b2):
    if b1.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if b1.shape[0] != b2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{b1.shape[0]} and {b2.shape[0]}")
    if b1.shape[2] != b2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({b1.shape[1]}x{b1.shape[2]} "
                           f"and {b2.shape[1]}x{b2.shape[2]})")


@defop("kron", promote="common", grad_name="UnsafeViewBackward0")   # (torch: a reshape)
def _kron(a, b):
    if a.dtype == jnp.bool_:
        return jnp.kron(a.astype(jnp.uint8), b.astype(jnp.uint8)).astype(jnp.bool_)
    return jnp.kron(a, b)


@public(out=True)
def kron(input, other):
    _need("kron", ("other", other, 2))
    return apply(_kron, input, other)


@defop("cross", promote="common", grad_name="LinalgCrossBackward0")
def _cross(a, b, dim):
    shp = jnp.broadcast_shapes(a.shape, b.shape)
    a, b = jnp.broadcast_to(a, shp), jnp.broadcast_to(b, shp)
    return jnp.cross(a, b, axis=dim)


def _cross_impl(input, other, dim, name):
    # (torch's checks in its order: dimensions, the dim, its lengths, broadcasting, dtypes)
    if input.ndim != other.ndim:
        raise RuntimeError(f"{name}: inputs must have the same number of dimensions.")
    d = _wrap_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"{name}: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    if not _bcastable(input, other):
        from .._registry import broadcast_error
        raise RuntimeError(broadcast_error([tuple(input.shape), tuple(other.shape)]))
    # torch's kernel: no bool, and no promotion
    if input.dtype is D.bool:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {D.legacy_name(input.dtype)} but found "
                           f"{D.legacy_name(other.dtype)}")
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
        from .factorizations import _deprecated
        _deprecated("cross_dim", "Using torch.cross without specifying the dim arg is "
                    "deprecated.\nPlease either pass the dim explicitly or simply use "
                    "torch.linalg.cross.\nThe default value of dim will change to agree with "
                    "that of linalg.cross in a future release.",
                    at="Cross.cpp:63")
        if input.ndim != other.ndim:
            raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
        dim = next((i for i, n in enumerate(input.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return _cross_impl(input, other, dim, "linalg.cross")


_CHAIN_MATMUL_WARNED = [False, False]


@public(out=True)
@_own_out
def chain_matmul(*matrices, out=None):
    form = 0 if out is None else 1
    if not _CHAIN_MATMUL_WARNED[form]:
        # torch's TORCH_WARN_ONCE: once per process for each of its two kernels (with and
        # without out=), each naming its own line
        _CHAIN_MATMUL_WARNED[form] = True
        import warnings
        from .factorizations import triggered
        warnings.warn("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                      "release. Use torch.linalg.multi_dot instead, which accepts a list of two "
                      "or more tensors rather than multiple parameters."
                      + triggered(f"LinearAlgebra.cpp:{(1102, 1120)[form]}"),
                      UserWarning)       # (torch's chain_matmul is Python: its own line)
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        return _done(matrices[0].clone(), out, "chain_matmul")
    from .linalg import linalg_multi_dot
    return linalg_multi_dot(matrices, out=out)


methods(vdot=_method(vdot), outer=outer, ger=outer, addmm=_method(addmm), addmv=_method(addmv),
        addr=addr, baddbmm=_method(baddbmm), addbmm=_method(addbmm), kron=kron, cross=cross)
inplace_methods(addmm=_addmm_inplace, addmv=_addmv_inplace, addr=addr, baddbmm=_baddbmm_inplace,
                addbmm=_method(addbmm))
toplevel("addmv_")
