"""Reductions: sum, mean, norm (more in the breadth issue)."""
from __future__ import annotations

import jax.numpy as jnp

from .. import _dtype as D
from .._tensor import Tensor, _wrap_dim
from .._registry import apply, defop
from ._surface import method, methods, public

__all__ = ["sum", "mean", "norm"]


def dims_arg(dim, ndim):
    """Normalise torch's ``dim`` (None, int, or a sequence) into a sorted tuple, or None."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        out = tuple(sorted(_wrap_dim(d, ndim) for d in dim))
        if len(set(out)) != len(out):
            raise RuntimeError(f"dim {out[0]} appears multiple times in the list of dims")
        return out
    return (_wrap_dim(dim, ndim),)


def _axes(dims, ndim):
    # a 0-dim tensor reduced over dim 0 / -1 reduces over nothing
    if dims is None:
        return None
    return tuple(d for d in dims if d < ndim)


_HALF = (jnp.float16, jnp.bfloat16)


def _wide(fn):
    """torch accumulates float16/bfloat16 reductions in float32 and rounds the result once:
    ``fn(a, ...)`` runs on the float32 upcast of a half input, its outputs cast back."""
    def g(a, *args, **kw):
        dt = a.dtype
        if dt not in _HALF:
            return fn(a, *args, **kw)
        out = fn(a.astype(jnp.float32), *args, **kw)
        if isinstance(out, tuple):
            return tuple(o.astype(dt) if o.dtype == jnp.float32 else o for o in out)
        return out.astype(dt) if out.dtype == jnp.float32 else out
    g.__name__ = getattr(fn, "__name__", "wide")
    return g


def _sum_name(kw):
    return "SumBackward0" if kw["dims"] is None else "SumBackward1"


@defop("sum", saves=False, grad_name=_sum_name)
def _sum(a, dims, keepdim, dtype):
    if dtype is not None:
        a = a.astype(dtype)
    elif not jnp.issubdtype(a.dtype, jnp.inexact):
        a = a.astype(jnp.int64)
    elif a.dtype in _HALF:      # torch accumulates in float32
        return jnp.sum(a.astype(jnp.float32), axis=_axes(dims, a.ndim),
                       keepdims=keepdim).astype(a.dtype)
    # dtype= pinned: jnp.sum would widen a small integer dtype to int64
    return jnp.sum(a, axis=_axes(dims, a.ndim), keepdims=keepdim, dtype=a.dtype)


def _mean_name(kw):
    return "MeanBackward0" if kw["dims"] is None else "MeanBackward1"


@defop("mean", saves=False, grad_name=_mean_name)
def _mean(a, dims, keepdim, dtype):
    if dtype is not None:
        a = a.astype(dtype)
    if a.dtype in _HALF:        # torch accumulates in float32
        return jnp.mean(a.astype(jnp.float32), axis=_axes(dims, a.ndim),
                        keepdims=keepdim).astype(a.dtype)
    return jnp.mean(a, axis=_axes(dims, a.ndim), keepdims=keepdim)


@defop("vector_norm", saves="both", grad_name="LinalgVectorNormBackward0")
@_wide
def _vector_norm(a, ord, dims, keepdim):
    axes = _axes(dims, a.ndim)
    x = jnp.abs(a) if jnp.iscomplexobj(a) else a
    if ord == 2:
        # sqrt of a sum of squares, with torch's zero gradient at a zero norm
        s = jnp.sum(x * x if not jnp.iscomplexobj(a) else x * x, axis=axes, keepdims=keepdim)
        zero = s == 0
        return jnp.where(zero, 0.0, jnp.sqrt(jnp.where(zero, 1.0, s))).astype(s.dtype)
    if ord == float("inf"):
        return jnp.max(jnp.abs(x), axis=axes, keepdims=keepdim)
    if ord == float("-inf"):
        return jnp.min(jnp.abs(x), axis=axes, keepdims=keepdim)
    if ord == 0:
        return jnp.sum((x != 0).astype(x.dtype), axis=axes, keepdims=keepdim)
    if ord == 1:
        return jnp.sum(jnp.abs(x), axis=axes, keepdims=keepdim)
    return jnp.sum(jnp.abs(x) ** ord, axis=axes, keepdims=keepdim) ** (1.0 / ord)


@public(out=True)
def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum of all elements, or over ``dim``; integer and bool inputs sum to int64."""
    dims = dims_arg(dim, input.ndim)
    return apply(_sum, input, dims=dims, keepdim=bool(keepdim) and dims is not None,
                 dtype=None if dtype is None else D.to_dtype(dtype).np)


@public(out=True)
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of all elements, or over ``dim``; needs a floating or complex dtype."""
    dt = D.to_dtype(dtype) if dtype is not None else input.dtype
    if not (dt.is_floating_point or dt.is_complex):
                raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {D.legacy_name(dt)}")
    dims = dims_arg(dim, input.ndim)
    return apply(_mean, input, dims=dims, keepdim=bool(keepdim) and dims is not None,
                 dtype=None if dtype is None else dt.np)


@public(out=True)
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The vector p-norm over all elements or ``dim`` (``p='fro'`` is the 2-norm)."""
    if p == "fro" or p is None:
        p = 2
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. "
            f"Got {input.dtype.name.capitalize()}")
    dims = dims_arg(dim, input.ndim)
    out = apply(_vector_norm, input, ord=float(p), dims=dims,
                keepdim=bool(keepdim) and dims is not None)
    return out if dtype is None else out.to(dtype)


methods(sum=sum, mean=mean, norm=norm)


# ================================================================== products, moments, extrema, sorting, scans
#
# Gradient conventions follow torch, with an op-specific VJP where jax.vjp differs: full max /
# min / median split the gradient evenly among the elements equal to the result (NaN: among the
# NaNs); amax / amin scale by the count of ties per slice; the (values, indices) reductions
# (max / min / median / kthvalue / mode along a dim, sort, topk, cummax) route the gradient to the
# selected index only (values are gathered with take_along_axis at the chosen indices).
# Data-dependent output shapes (unique, bincount, histc's data range) are computed eagerly here
# and only the gather / count is an op.

import builtins as _bi
from collections import namedtuple as _namedtuple

import jax as _jax
import numpy as _np

from .._storage import apply_

__all__ += ["prod", "std", "var", "std_mean", "var_mean", "max", "min", "amax", "amin",
            "argmax", "argmin", "median", "mode", "logsumexp", "cumsum", "cumprod", "cummax",
            "cummin", "all", "any", "count_nonzero", "topk", "sort", "argsort", "kthvalue",
            "unique", "bincount", "histc", "aminmax", "msort", "nansum", "nanmean"]


def _return_type(name, fields=("values", "indices")):
    cls = _namedtuple(name, fields)
    cls.__module__ = "torch.return_types"
    return cls


_RT = {n: _return_type(n) for n in ("max", "min", "median", "mode", "kthvalue", "topk", "sort",
                                    "cummax", "cummin")}
_RT["aminmax"] = _return_type("aminmax", ("min", "max"))

_I64 = jnp.int64


def _keep_all(dims, keepdim, ndim):
    """torch: reducing over all dims with keepdim=True keeps every dim (as size 1)."""
    if dims is None and keepdim:
        return tuple(range(ndim)), True
    return dims, bool(keepdim) and dims is not None


def _one_dim(dim, ndim):
    if isinstance(dim, (list, tuple)):
        raise TypeError(f"expected dim to be an int, got {type(dim).__name__}")
    return _wrap_dim(dim, ndim)


def _nonempty_full(name, input):
    if input.numel() == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                           "input.numel() == 0. Specify the reduction dim with the 'dim' argument.")


def _nonempty_dim(name, input, d):
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _need_float(name, input):
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"{name} only support floating point and complex dtypes")


# ------------------------------------------------------------------ prod

def _prod_name(kw):
    return "ProdBackward0" if kw["dim"] is None else "ProdBackward1"


@defop("prod", grad_name=_prod_name)
def _prod(a, dim, keepdim, dtype):
    if dtype is not None:
        a = a.astype(dtype)
    elif not jnp.issubdtype(a.dtype, jnp.inexact):
        a = a.astype(_I64)
    dt = a.dtype
    if dt in _HALF:             # torch accumulates in float32
        a = a.astype(jnp.float32)
    if dim is None:
        return jnp.prod(a).astype(dt)
    axes = () if a.ndim == 0 else (dim,)
    return jnp.prod(a, axis=axes, keepdims=keepdim).astype(dt)


@public(out=True)
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of all elements or along one ``dim``; integer and bool inputs give int64."""
    d = None if dim is None else _one_dim(dim, input.ndim)
    return apply(_prod, input, dim=d, keepdim=bool(keepdim) and d is not None,
                 dtype=None if dtype is None else D.to_dtype(dtype).np)


# ------------------------------------------------------------------ var, std

def _var_core(a, axes, correction, keepdim):
    n = 1
    for ax in (range(a.ndim) if axes is None else axes):
        n *= a.shape[ax]
    mu = jnp.mean(a, axis=axes, keepdims=True)
    d = a - mu
    sq = jnp.real(d * jnp.conj(d)) if jnp.iscomplexobj(a) else d * d
    s = jnp.sum(sq, axis=axes, keepdims=keepdim)
    return s / jnp.asarray(_bi.max(n - correction, 0), s.dtype)


@defop("var", grad_name="VarBackward0")
@_wide
def _var(a, dims, correction, keepdim):
    return _var_core(a, _axes(dims, a.ndim), correction, keepdim)


@defop("std", grad_name="StdBackward0")
@_wide
def _std(a, dims, correction, keepdim):
    v = _var_core(a, _axes(dims, a.ndim), correction, keepdim)
    zero = v == 0
    # torch: a zero standard deviation has a zero gradient
    return jnp.where(zero, jnp.zeros_like(v), jnp.sqrt(jnp.where(zero, jnp.ones_like(v), v)))


@defop("var_mean", grad_name="VarMeanBackward0")
@_wide
def _var_mean(a, dims, correction, keepdim, sqrt):
    axes = _axes(dims, a.ndim)
    v = _var_core(a, axes, correction, keepdim)
    if sqrt:
        zero = v == 0
        v = jnp.where(zero, jnp.zeros_like(v), jnp.sqrt(jnp.where(zero, jnp.ones_like(v), v)))
    return v, jnp.mean(a, axis=axes, keepdims=keepdim)


def _var_args(input, dim, unbiased, keepdim, correction):
    if isinstance(dim, _bi.bool):        # var(x, False): the legacy ``unbiased`` positional
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise RuntimeError("Cannot specify both unbiased and correction")
    if correction is None:
        correction = 0 if unbiased is False else 1
    dims, keep = _keep_all(dims_arg(dim, input.ndim), keepdim, input.ndim)
    return dict(dims=dims, correction=correction, keepdim=keep)


@public(out=True)
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over all elements or ``dim``, divided by N - correction (default 1)."""
    _need_float("std and var", input)
    return apply(_var, input, **_var_args(input, dim, unbiased, keepdim, correction))


@public(out=True)
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation (sqrt of ``var``; zero gradient where it is 0)."""
    _need_float("std and var", input)
    return apply(_std, input, **_var_args(input, dim, unbiased, keepdim, correction))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    _need_float("std and var", input)
    return apply(_var_mean, input, **_var_args(input, dim, unbiased, keepdim, correction),
                 sqrt=False)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    _need_float("std and var", input)
    return apply(_var_mean, input, **_var_args(input, dim, unbiased, keepdim, correction),
                 sqrt=True)


# ------------------------------------------------------------------ max, min, amax, amin

def _even_split(reduce_fn):
    """A full reduction whose gradient torch splits evenly among the elements equal to the
    result (evenly_distribute_backward; when the result is NaN, among the NaNs)."""
    @_jax.custom_vjp
    def f(a):
        return reduce_fn(a)

    def fwd(a):
        r = reduce_fn(a)
        return r, (a, r)

    def bwd(res, g):
        a, r = res
        mask = jnp.where(jnp.isnan(r), jnp.isnan(a), a == r)
        return (jnp.where(mask, g / jnp.sum(mask).astype(g.dtype), 0).astype(a.dtype),)

    f.defvjp(fwd, bwd)
    return f


_full_max = _even_split(jnp.max)
_full_min = _even_split(jnp.min)


@defop("max_full", grad_name="MaxBackward1")
def _max_full(a, largest):
    if not jnp.issubdtype(a.dtype, jnp.inexact):
        return jnp.max(a) if largest else jnp.min(a)
    return _full_max(a) if largest else _full_min(a)


def _count_scaled(largest, axes, keepdim):
    """amax / amin: torch scales the gradient by the count of ties in each slice."""
    red = jnp.max if largest else jnp.min

    @_jax.custom_vjp
    def f(a):
        return red(a, axis=axes, keepdims=keepdim)

    def fwd(a):
        r = f(a)
        return r, (a, r)

    def bwd(res, g):
        a, r = res
        if not keepdim and axes is not None:
            r, g = jnp.expand_dims(r, axes), jnp.expand_dims(g, axes)
        mask = a == r
        cnt = jnp.sum(mask, axis=axes, keepdims=True).astype(a.dtype)
        # torch computes (grad / count) * mask: a NaN result (count 0) gives NaN everywhere
        scaled = jnp.where(mask, g / jnp.where(cnt == 0, 1, cnt), 0)
        return (jnp.where(cnt == 0, jnp.asarray(jnp.nan, a.dtype), scaled).astype(a.dtype),)

    f.defvjp(fwd, bwd)
    return f


def _amax_name(kw):
    return "AmaxBackward0" if kw["largest"] else "AminBackward0"


@defop("amax", grad_name=_amax_name)
def _amax(a, dims, keepdim, largest):
    axes = _axes(dims, a.ndim)
    if not jnp.issubdtype(a.dtype, jnp.inexact):
        return (jnp.max if largest else jnp.min)(a, axis=axes, keepdims=keepdim)
    return _count_scaled(largest, axes, keepdim)(a)


def _gather(a, idx, d, keepdim):
    """Values at ``idx`` (keepdims-shaped) along ``d``: the gradient reaches those only."""
    v = jnp.take_along_axis(a, idx, axis=d)
    return (v if keepdim else jnp.squeeze(v, d)), (idx if keepdim else jnp.squeeze(idx, d))


@defop("max_dim", grad_name=lambda kw: "MaxBackward0" if kw["largest"] else "MinBackward0")
def _max_dim(a, dim, keepdim, largest):
    if a.ndim == 0:
        return a, jnp.zeros((), _I64)
    idx = (jnp.argmax if largest else jnp.argmin)(a, axis=dim, keepdims=True)
    v, i = _gather(a, idx, dim, keepdim)
    return v, i.astype(_I64)


def _maxmin(name, largest, input, dim, keepdim, other):
    if isinstance(dim, Tensor):
        other, dim = dim, None
    if dim is not None and not isinstance(dim, (int, _np.integer)):
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"(Tensor, {type(dim).__name__})")
    if other is not None:
        from .binary_math import maximum, minimum
        return (maximum if largest else minimum)(input, other)
    if dim is None:
        _nonempty_full(name, input)
        return apply(_max_full, input, largest=largest)
    d = _one_dim(dim, input.ndim)
    _nonempty_dim(name, input, d)
    return _RT[name](*apply(_max_dim, input, dim=d, keepdim=bool(keepdim), largest=largest))


@public(out=True)
def max(input, dim=None, keepdim=False, *, other=None):
    """max(input): the largest element (gradient split among ties); max(input, dim): a
    (values, indices) namedtuple (gradient to the selected index); max(input, other): maximum."""
    return _maxmin("max", True, input, dim, keepdim, other)


@public(out=True)
def min(input, dim=None, keepdim=False, *, other=None):
    """min(input) / min(input, dim) -> (values, indices) / min(input, other), like ``max``."""
    return _maxmin("min", False, input, dim, keepdim, other)


def _amaxmin(name, largest, input, dim, keepdim):
    dims = dims_arg(dim, input.ndim)
    if dims is None:
        _nonempty_full(name, input)
    else:
        for d in dims:
            _nonempty_dim(name, input, d)
    dims, keep = _keep_all(dims, keepdim, input.ndim)
    return apply(_amax, input, dims=dims, keepdim=keep, largest=largest)


@public(out=True)
def amax(input, dim=(), keepdim=False):
    """Largest value over ``dim`` (all dims if empty); ties share the gradient evenly."""
    return _amaxmin("amax", True, input, dim, keepdim)


@public(out=True)
def amin(input, dim=(), keepdim=False):
    """Smallest value over ``dim`` (all dims if empty); ties share the gradient evenly."""
    return _amaxmin("amin", False, input, dim, keepdim)


@public(out=True)
def aminmax(input, *, dim=None, keepdim=False):
    """(min, max) over all elements or one ``dim``."""
    d = () if dim is None else dim
    return _RT["aminmax"](_amaxmin("aminmax", False, input, d, keepdim),
                          _amaxmin("aminmax", True, input, d, keepdim))


@defop("argmax", differentiable=False)
def _argmax(a, dim, keepdim, largest):
    f = jnp.argmax if largest else jnp.argmin
    if dim is None:
        r = f(a.reshape(-1)).astype(_I64)
        return r.reshape((1,) * a.ndim) if keepdim else r
    if a.ndim == 0:
        return jnp.zeros((), _I64)
    return f(a, axis=dim, keepdims=keepdim).astype(_I64)


def _arg(name, largest, input, dim, keepdim):
    if input.dtype is D.bool:
        raise RuntimeError(f"{name}(): does not support bool input")
    if dim is None:
        if input.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             "input.numel() == 0.")
        return apply(_argmax, input, dim=None, keepdim=bool(keepdim), largest=largest)
    d = _one_dim(dim, input.ndim)
    _nonempty_dim(name, input, d)
    return apply(_argmax, input, dim=d, keepdim=bool(keepdim), largest=largest)


@public(out=True)
def argmax(input, dim=None, keepdim=False):
    """Index of the largest element (first on ties; NaN counts as largest)."""
    return _arg("argmax", True, input, dim, keepdim)


@public(out=True)
def argmin(input, dim=None, keepdim=False):
    """Index of the smallest element (first on ties; NaN counts as smallest)."""
    return _arg("argmin", False, input, dim, keepdim)


# ------------------------------------------------------------------ sort, argsort, topk, kth

def _argsort(a, dim, descending):
    return jnp.argsort(a, axis=dim, stable=True, descending=descending).astype(_I64)


@defop("sort", grad_name="SortBackward0")
def _sort(a, dim, descending):
    if a.ndim == 0:
        return a, jnp.zeros((), _I64)
    idx = _argsort(a, dim, descending)
    return jnp.take_along_axis(a, idx, axis=dim), idx


@defop("argsort", differentiable=False)
def _argsort_op(a, dim, descending):
    if a.ndim == 0:
        return jnp.zeros((), _I64)
    return _argsort(a, dim, descending)


@public(out=True)
def sort(input, dim=-1, descending=False, stable=False):
    """(values, indices) sorted along ``dim`` (always stable; NaN sorts as the largest)."""
    d = _one_dim(dim, input.ndim)
    return _RT["sort"](*apply(_sort, input, dim=d, descending=bool(descending)))


@public(out=True)
def argsort(input, dim=-1, descending=False, stable=False):
    d = _one_dim(dim, input.ndim)
    return apply(_argsort_op, input, dim=d, descending=bool(descending))


@public(out=True)
def msort(input):
    return sort(input, 0).values


def _topk_row(v, k, largest, sort=True):
    """The indices torch's CPU topk returns for ``k * 64 > n``: libstdc++'s ``nth_element``
    (introselect: median-of-three pivot, unguarded partition, insertion sort below 4) on
    (value, index) pairs, then an insertion sort of the first k - 1, as jax while_loops."""
    n = v.shape[0]
    inexact = jnp.issubdtype(v.dtype, jnp.inexact)
    ar = jnp.arange(n)

    def comp(x, y):
        if largest:
            return ((jnp.isnan(x) & ~jnp.isnan(y)) | (x > y)) if inexact else x > y
        return ((~jnp.isnan(x) & jnp.isnan(y)) | (x < y)) if inexact else x < y

    def swap(q, a, b):
        arr, ix = q
        return (arr.at[a].set(arr[b]).at[b].set(arr[a]), ix.at[a].set(ix[b]).at[b].set(ix[a]))

    def insertion_sort(q, f, l):
        def body(st):
            (arr, ix), i = st
            val, vi = arr[i], ix[i]
            j = _jax.lax.while_loop(lambda j: (j > f) & comp(val, arr[j - 1]), lambda j: j - 1, i)
            move = (ar > j) & (ar <= i)
            arr = jnp.where(move, jnp.roll(arr, 1), arr).at[j].set(val)
            ix = jnp.where(move, jnp.roll(ix, 1), ix).at[j].set(vi)
            return (arr, ix), i + 1

        q, _ = _jax.lax.while_loop(lambda st: st[1] < l, body, (q, f + 1))
        return q

    def partition_pivot(q, f, l):
        arr = q[0]
        a_, b_, c_ = f + 1, f + (l - f) // 2, l - 1
        ab, bc, ac = comp(arr[a_], arr[b_]), comp(arr[b_], arr[c_]), comp(arr[a_], arr[c_])
        pick = jnp.where(ab, jnp.where(bc, b_, jnp.where(ac, c_, a_)),
                         jnp.where(ac, a_, jnp.where(bc, c_, b_)))
        q = swap(q, f, pick)

        def body(st):
            q, first, last, _ = st
            arr = q[0]
            piv = arr[f]
            first = _jax.lax.while_loop(lambda i: (i < n - 1) & comp(arr[i], piv),
                                        lambda i: i + 1, first)
            last = _jax.lax.while_loop(lambda j: (j > 0) & comp(piv, arr[j]), lambda j: j - 1,
                                       last - 1)
            done = ~(first < last)
            q2 = swap(q, first, last)
            q = _jax.tree_util.tree_map(lambda x2, x: jnp.where(done, x, x2), q2, q)
            return q, jnp.where(done, first, first + 1), last, done

        q, cut, _, _ = _jax.lax.while_loop(lambda st: ~st[3], body, (q, f + 1, l, False))
        return q, cut

    def select_body(st):
        q, f, l = st
        q, cut = partition_pivot(q, f, l)
        return q, jnp.where(cut <= k - 1, cut, f), jnp.where(cut <= k - 1, l, cut)

    q = (v, jnp.arange(n, dtype=_I64))
    q, f, l = _jax.lax.while_loop(lambda st: st[2] - st[1] > 3, select_body,
                                  (q, jnp.asarray(0), jnp.asarray(n)))
    q = insertion_sort(q, f, l)
    if sort:
        q = insertion_sort(q, jnp.asarray(0), jnp.asarray(k - 1))
    return q[1][:k]


@defop("topk", grad_name="TopkBackward0")
def _topk(a, k, dim, largest, sort=True):
    if a.ndim == 0:
        return a, jnp.zeros((), _I64)
    n = a.shape[dim]
    if k == 0 or k * 64 <= n:
        # torch's partial_sort path: for k == 1 the first extreme element, as here
        idx = _slice_k(_argsort(a, dim, largest), k, dim)
    else:
        x = jnp.moveaxis(_jax.lax.stop_gradient(a), dim, -1)
        batch = x.shape[:-1]
        rows = x.reshape(-1, n)
        replay = lambda r: _jax.vmap(lambda row: _topk_row(row, k, largest, sort))(r)  # noqa
        if sort:
            idx = _jax.lax.cond(_has_ties(rows), replay,
                                lambda r: _argsort(r, -1, largest)[:, :k], rows)
        else:     # torch's unsorted order is nth_element's arrangement, ties or not
            idx = replay(rows)
        idx = jnp.moveaxis(idx.reshape(batch + (k,)), -1, dim)
    return jnp.take_along_axis(a, idx, axis=dim), idx


def _slice_k(x, k, dim):
    return _jax.lax.slice_in_dim(x, 0, k, axis=dim)


@public(out=True)
def topk(input, k, dim=-1, largest=True, sorted=True):
    """The k largest (or smallest) elements along ``dim`` as (values, indices), sorted."""
    if input.dtype is D.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    d = _one_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    return _RT["topk"](*apply(_topk, input, k=int(k), dim=d, largest=bool(largest),
                              sort=bool(sorted)))


def _quickselect_row(v, k):
    """The index torch's CPU kthvalue returns: its quick_select_template (median-of-three
    Hoare quickselect, NaN largest) run on (value, index) pairs, as a jax while_loop."""
    n = v.shape[0]
    inexact = jnp.issubdtype(v.dtype, jnp.inexact)

    def gt(x, y):
        return ((jnp.isnan(x) & ~jnp.isnan(y)) | (x > y)) if inexact else x > y

    def swap(arr, ix, a, b, c):
        va, vb, ia, ib = arr[a], arr[b], ix[a], ix[b]
        arr = arr.at[a].set(jnp.where(c, vb, va)).at[b].set(jnp.where(c, va, vb))
        ix = ix.at[a].set(jnp.where(c, ib, ia)).at[b].set(jnp.where(c, ia, ib))
        return arr, ix

    def partition(arr, ix, L, R):
        P = L + (R - L) // 2
        arr, ix = swap(arr, ix, P, L + 1, True)
        arr, ix = swap(arr, ix, L + 1, R, gt(arr[L + 1], arr[R]))
        arr, ix = swap(arr, ix, L, R, gt(arr[L], arr[R]))
        arr, ix = swap(arr, ix, L + 1, L, gt(arr[L + 1], arr[L]))
        piv = arr[L]

        def body(st):
            arr, ix, i, j, _ = st
            i = _jax.lax.while_loop(lambda i: (i < n - 1) & gt(piv, arr[i]), lambda i: i + 1,
                                    i + 1)
            j = _jax.lax.while_loop(lambda j: (j > 0) & gt(arr[j], piv), lambda j: j - 1, j - 1)
            stop = j < i
            arr, ix = swap(arr, ix, i, j, ~stop)
            return arr, ix, i, j, stop

        arr, ix, i, j, _ = _jax.lax.while_loop(lambda st: ~st[4], body,
                                               (arr, ix, L + 1, R, False))
        arr, ix = swap(arr, ix, L, j, True)
        L = jnp.where(j <= k, i, L)
        R = jnp.where(j >= k, j - 1, R)
        return arr, ix, L, R

    def outer(st):
        arr, ix, L, R, _ = st
        small, two = R <= L, R == L + 1
        arr2, ix2 = swap(arr, ix, L, jnp.minimum(R, n - 1),
                         two & gt(arr[L], arr[jnp.minimum(R, n - 1)]))
        safe = small | two
        arr3, ix3, L3, R3 = partition(arr, ix, jnp.where(safe, 0, L), jnp.where(safe, 2, R))
        arr = jnp.where(small, arr, jnp.where(two, arr2, arr3))
        ix = jnp.where(small, ix, jnp.where(two, ix2, ix3))
        return (arr, ix, jnp.where(safe, L, L3), jnp.where(safe, R, R3), safe)

    init = (v, jnp.arange(n, dtype=_I64), jnp.asarray(0), jnp.asarray(n - 1), jnp.asarray(False))
    _, ix, _, _, _ = _jax.lax.while_loop(lambda st: ~st[4], outer, init)
    return ix[k]


def _kth_indices(a, k, dim):
    x = jnp.moveaxis(_jax.lax.stop_gradient(a), dim, -1)
    batch, n = x.shape[:-1], x.shape[-1]
    if n < 3:
        order = _argsort(x, -1, False)
        idx = order[..., k - 1]
    else:
        rows = x.reshape(-1, n)
        idx = _jax.lax.cond(
            _has_ties(rows),
            lambda r: _jax.vmap(lambda row: _quickselect_row(row, k - 1))(r),
            lambda r: _argsort(r, -1, False)[:, k - 1], rows).reshape(batch)
    return jnp.expand_dims(idx, dim)


def _has_ties(rows):
    """Whether some row holds equal values (or two NaNs): only then does the tie rule of a
    selection algorithm matter, so the replay of torch's runs only then."""
    s = jnp.sort(rows, axis=-1)
    eq = s[:, 1:] == s[:, :-1]
    if jnp.issubdtype(rows.dtype, jnp.inexact):
        eq = eq | (jnp.isnan(s[:, 1:]) & jnp.isnan(s[:, :-1]))
    return jnp.any(eq)


@defop("kthvalue", grad_name="KthvalueBackward0")
def _kthvalue(a, k, dim, keepdim, median):
    if a.ndim == 0:
        return a, jnp.zeros((), _I64)
    if not median:
        return _gather(a, _kth_indices(a, k, dim), dim, keepdim)
    order = _argsort(a, dim, False)
    if median:
        k = (a.shape[dim] - 1) // 2 + 1
    idx = _jax.lax.slice_in_dim(order, k - 1, k, axis=dim)
    if median and jnp.issubdtype(a.dtype, jnp.inexact):
        # torch.median: a slice holding NaN gives its first NaN
        nan = jnp.isnan(a)
        first_nan = jnp.argmax(nan, axis=dim, keepdims=True).astype(_I64)
        idx = jnp.where(jnp.any(nan, axis=dim, keepdims=True), first_nan, idx)
    return _gather(a, idx, dim, keepdim)


@public(out=True)
def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest element along ``dim`` as (values, indices)."""
    if input.dtype is D.bool:
        raise NotImplementedError("\"kthvalue_cpu\" not implemented for 'Bool'")
    d = _one_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return _RT["kthvalue"](*apply(_kthvalue, input, k=int(k), dim=d, keepdim=bool(keepdim),
                                  median=False))


_full_median_even = _even_split(lambda a: _median_value(a))


def _median_value(a):
    flat = a.reshape(-1)
    n = flat.shape[0]
    if n == 0:
        return jnp.asarray(jnp.nan, a.dtype)
    s = jnp.sort(flat)
    v = s[(n - 1) // 2]
    if jnp.issubdtype(a.dtype, jnp.inexact):
        v = jnp.where(jnp.any(jnp.isnan(flat)), jnp.asarray(jnp.nan, a.dtype), v)
    return v


@defop("median_full", grad_name="MedianBackward0")
def _median_full(a):
    if not jnp.issubdtype(a.dtype, jnp.inexact):
        return _median_value(a)
    return _full_median_even(a)


@public(out=True)
def median(input, dim=None, keepdim=False):
    """median(input): the lower median (NaN if any); median(input, dim): (values, indices)."""
    if dim is None:
        return apply(_median_full, input)
    d = _one_dim(dim, input.ndim)
    _nonempty_dim("median", input, d)
    return _RT["median"](*apply(_kthvalue, input, k=1, dim=d, keepdim=bool(keepdim),
                                median=True))


@defop("mode", grad_name="ModeBackward0")
def _mode(a, dim, keepdim):
    if a.ndim == 0:
        return a, jnp.zeros((), _I64)
    x = jnp.moveaxis(a, dim, -1)
    batch, n = x.shape[:-1], x.shape[-1]
    flat = x.reshape(-1, n)
    s = jnp.sort(flat, axis=-1)
    lo = _jax.vmap(lambda r: jnp.searchsorted(r, r, side="left"))(s)
    hi = _jax.vmap(lambda r: jnp.searchsorted(r, r, side="right"))(s)
    cnt = hi - lo
    if jnp.issubdtype(a.dtype, jnp.inexact):
        # NaNs (sorted last) count as one value; searchsorted cannot find them
        nans = jnp.isnan(s)
        cnt = jnp.where(nans, jnp.sum(nans, axis=-1, keepdims=True), cnt)
    best = jnp.argmax(cnt, axis=-1)                         # first: the smallest most frequent
    val = jnp.take_along_axis(s, best[:, None], axis=-1)
    same = flat == val
    if jnp.issubdtype(a.dtype, jnp.inexact):
        same = same | (jnp.isnan(flat) & jnp.isnan(val))
    last = n - 1 - jnp.argmax(jnp.flip(same, axis=-1), axis=-1)  # torch: its last index
    idx = jnp.moveaxis(last.reshape(batch + (1,)).astype(_I64), -1, dim)
    return _gather(a, idx, dim, keepdim)


@public(out=True)
def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (smallest on ties) and its last index."""
    d = _one_dim(dim, input.ndim)
    return _RT["mode"](*apply(_mode, input, dim=d, keepdim=bool(keepdim)))


# ------------------------------------------------------------------ logsumexp, cumulative

def _lse_vjp(axes, keepdim):
    @_jax.custom_vjp
    def f(a):
        return _jax.nn.logsumexp(a, axis=axes, keepdims=keepdim)

    def fwd(a):
        r = f(a)
        return r, (a, r)

    def bwd(res, g):
        a, r = res
        if not keepdim and axes is not None:
            r, g = jnp.expand_dims(r, axes), jnp.expand_dims(g, axes)
        return (g * jnp.exp(a - r),)          # torch: grad * exp(self - result)

    f.defvjp(fwd, bwd)
    return f


@defop("logsumexp", promote="float", grad_name="LogsumexpBackward0")
@_wide
def _logsumexp(a, dims, keepdim):
    axes = _axes(dims, a.ndim)
    if a.ndim == 0:
        return a
    return _lse_vjp(axes, keepdim)(a)


@public(out=True)
def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(input))) over ``dim``, computed stably."""
    dims = dims_arg(dim, input.ndim)
    if dims is None:
        dims = tuple(range(input.ndim))
    return apply(_logsumexp, input, dims=dims, keepdim=bool(keepdim))


@defop("cumsum", grad_name="CumsumBackward0", saves=False)
def _cumsum(a, dim, dtype, prod):
    if dtype is not None:
        a = a.astype(dtype)
    elif not jnp.issubdtype(a.dtype, jnp.inexact):
        a = a.astype(_I64)
    if a.ndim == 0:
        return a
    if a.dtype in _HALF:        # torch accumulates in float32, rounding each output
        return (jnp.cumprod if prod else jnp.cumsum)(a.astype(jnp.float32),
                                                     axis=dim).astype(a.dtype)
    return (jnp.cumprod if prod else jnp.cumsum)(a, axis=dim)


@public(out=True, dtype_from_out=True)
def cumsum(input, dim, *, dtype=None):
    """Cumulative sum along ``dim``; integer and bool inputs give int64."""
    return apply(_cumsum, input, dim=_one_dim(dim, input.ndim),
                 dtype=None if dtype is None else D.to_dtype(dtype).np, prod=False)


@public(out=True, dtype_from_out=True)
def cumprod(input, dim, *, dtype=None):
    """Cumulative product along ``dim``; integer and bool inputs give int64."""
    return apply(_cumsum, input, dim=_one_dim(dim, input.ndim),
                 dtype=None if dtype is None else D.to_dtype(dtype).np, prod=True)


@defop("cummax", grad_name=lambda kw: "CummaxBackward0" if kw["largest"] else "CumminBackward0")
def _cummax(a, dim, largest):
    if a.ndim == 0:
        return a, jnp.zeros((), _I64)
    inexact = jnp.issubdtype(a.dtype, jnp.inexact)
    x = _jax.lax.stop_gradient(a)
    idx = _jax.lax.broadcasted_iota(_I64, a.shape, dim)

    def comb(l, r):
        lv, li = l
        rv, ri = r
        better = (rv >= lv) if largest else (rv <= lv)
        if inexact:      # torch: a NaN is taken and then kept (until the next NaN)
            better = jnp.isnan(rv) | (~jnp.isnan(lv) & better)
        return jnp.where(better, rv, lv), jnp.where(better, ri, li)

    _, i = _jax.lax.associative_scan(comb, (x, idx), axis=dim)
    return jnp.take_along_axis(a, i, axis=dim), i


@public(out=True)
def cummax(input, dim):
    """Running maximum along ``dim`` and the index where it was (last on ties)."""
    return _RT["cummax"](*apply(_cummax, input, dim=_one_dim(dim, input.ndim), largest=True))


@public(out=True)
def cummin(input, dim):
    return _RT["cummin"](*apply(_cummax, input, dim=_one_dim(dim, input.ndim), largest=False))


# ------------------------------------------------------------------ all, any, count_nonzero

@defop("all", differentiable=False)
def _all(a, dims, keepdim, any):
    axes = _axes(dims, a.ndim)
    r = (jnp.any if any else jnp.all)(a != 0, axis=axes, keepdims=keepdim)
    return r.astype(jnp.uint8) if a.dtype == jnp.uint8 else r


@public(out=True)
def all(input, dim=None, keepdim=False):
    """True if every element (over ``dim``) is non-zero; uint8 input gives uint8."""
    dims, keep = _keep_all(_all_dims(dim, input.ndim), keepdim, input.ndim)
    return apply(_all, input, dims=dims, keepdim=keep, any=False)


def _all_dims(dim, ndim):
    # torch.all / any with dim=() reduce over nothing
    if isinstance(dim, (list, tuple)) and len(dim) == 0:
        return ()
    return dims_arg(dim, ndim)


@public(out=True)
def any(input, dim=None, keepdim=False):
    """True if some element (over ``dim``) is non-zero; uint8 input gives uint8."""
    dims, keep = _keep_all(_all_dims(dim, input.ndim), keepdim, input.ndim)
    return apply(_all, input, dims=dims, keepdim=keep, any=True)


@defop("count_nonzero", differentiable=False)
def _count_nonzero(a, dims):
    return jnp.sum(a != 0, axis=_axes(dims, a.ndim)).astype(_I64)


def count_nonzero(input, dim=None):
    return apply(_count_nonzero, input, dims=dims_arg(dim, input.ndim))


@defop("nansum", grad_name="NansumBackward0")
def _nansum(a, dims, keepdim, mean, pinned=False):
    axes = _axes(dims, a.ndim)
    if a.dtype in _HALF:
        # torch: nansum accumulated in float32 and rounded; nanmean is that rounded sum / count
        s = jnp.nansum(a.astype(jnp.float32), axis=axes, keepdims=keepdim).astype(a.dtype)
        if not mean:
            return s
        cnt = jnp.sum(~jnp.isnan(a), axis=axes, keepdims=keepdim)
        return (s.astype(jnp.float32) / cnt).astype(a.dtype)
    if mean:
        return jnp.nanmean(a, axis=axes, keepdims=keepdim)
    if not jnp.issubdtype(a.dtype, jnp.inexact) and not pinned:
        a = a.astype(_I64)
    return jnp.nansum(a, axis=axes, keepdims=keepdim, dtype=a.dtype)


@public(out=True)
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum treating NaN as zero."""
    x = input if dtype is None else input.to(dtype)
    dims, keep = _keep_all(dims_arg(dim, input.ndim), keepdim, input.ndim)
    if dtype is not None:
        return apply(_nansum, x, dims=dims, keepdim=keep, mean=False, pinned=True)
    return apply(_nansum, x, dims=dims, keepdim=keep, mean=False)


@public(out=True)
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of the non-NaN elements."""
    if not input.dtype.is_floating_point:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {D.legacy_name(input.dtype)}")
    x = input if dtype is None else input.to(dtype)
    dims, keep = _keep_all(dims_arg(dim, input.ndim), keepdim, input.ndim)
    return apply(_nansum, x, dims=dims, keepdim=keep, mean=True)


# ------------------------------------------------------------------ unique, bincount, histc

@defop("take_flat", grad_name="IndexBackward0")
def _take(a, idx, dim):
    if dim is None:
        return a.reshape(-1)[idx]
    return jnp.take(a, idx, axis=dim)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements (always sorted, as torch on CPU), optionally with the inverse
    indices and counts; shapes depend on the data, so this runs eagerly."""
    x = _np.asarray(input._data)
    if dim is None:
        _, first, inv, cnt = _np.unique(x.reshape(-1), return_index=True, return_inverse=True,
                                        return_counts=True, equal_nan=False)
        inv = inv.reshape(x.shape)
    else:
        d = _wrap_dim(dim, input.ndim)
        if x.shape[d] == 0:
            first = _np.zeros(0, _np.int64)
            inv = first
            cnt = first
        else:
            _, first, inv, cnt = _np.unique(x, return_index=True, return_inverse=True,
                                            return_counts=True, axis=d)
            inv = inv.reshape(-1)
    vals = apply(_take, input, jnp.asarray(first, _I64), dim=None if dim is None else d)
    out = [vals]
    if return_inverse:
        out.append(Tensor._make(jnp.asarray(inv, _I64)))
    if return_counts:
        out.append(Tensor._make(jnp.asarray(cnt, _I64)))
    return out[0] if len(out) == 1 else tuple(out)


@defop("bincount", grad_name="BincountBackward0")
def _bincount(x, *w, length, dtype):
    if w:
        return jnp.bincount(x, weights=w[0].astype(dtype), length=length)
    return jnp.bincount(x, length=length).astype(_I64)


def bincount(input, weights=None, minlength=0):
    """Count of each non-negative integer in a 1-d tensor (weighted by ``weights``)."""
    if input.dtype.category != D._INT:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                  f"'{D.legacy_name(input.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    x = _np.asarray(input._data)
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != x.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    length = _bi.max(int(x.max()) + 1 if x.size else 0, int(minlength))
    if weights is None:
        return apply(_bincount, input, length=length, dtype=None)
    dt = weights.dtype if weights.dtype in (D.float32, D.float64) else D.float64
    return apply(_bincount, input, weights, length=length, dtype=dt.np)


@defop("histc", differentiable=False)
def _histc(x, bins, lo, hi):
    x = x.reshape(-1)
    lo_, hi_ = jnp.asarray(lo, x.dtype), jnp.asarray(hi, x.dtype)
    inside = (x >= lo_) & (x <= hi_)
    pos = ((x - lo_) * bins / (hi_ - lo_)).astype(_I64)
    pos = jnp.clip(jnp.where(x == hi_, bins - 1, pos), 0, bins - 1)
    return jnp.bincount(jnp.where(inside, pos, 0), weights=inside.astype(x.dtype), length=bins)


@public(out=True)
def histc(input, bins=100, min=0, max=0):
    """Histogram with ``bins`` equal bins over [min, max] (the data range if both are equal)."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for "
                                  f"'{D.legacy_name(input.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo > hi:
        raise RuntimeError("max must be larger than min")
    if lo == hi:
        x = _np.asarray(input._data)
        if x.size:
            lo, hi = float(x.min()), float(x.max())
        if lo == hi:
            lo, hi = lo - 1, hi + 1
    return apply(_histc, input, bins=int(bins), lo=lo, hi=hi)


# ------------------------------------------------------------------ Tensor methods

methods(prod=prod, std=std, var=var, max=max, min=min, amax=amax, amin=amin, aminmax=aminmax,
        argmax=argmax, argmin=argmin, median=median, mode=mode, logsumexp=logsumexp,
        cumsum=cumsum, cumprod=cumprod, cummax=cummax, cummin=cummin, all=all, any=any,
        count_nonzero=count_nonzero, topk=topk, sort=sort, argsort=argsort, msort=msort,
        kthvalue=kthvalue, unique=unique, bincount=bincount, histc=histc, nansum=nansum,
        nanmean=nanmean)


def _cum_(prod_):
    def f_(self, dim, *, dtype=None):
        return apply_(_cumsum, self, dim=_one_dim(dim, self.ndim),
                      dtype=None if dtype is None else D.to_dtype(dtype).np, prod=prod_)
    return f_


methods(cumsum_=_cum_(False), cumprod_=_cum_(True))


# ------------------------------------------------------------------ quantile, logcumsumexp

__all__ += ["quantile", "nanquantile", "logcumsumexp"]

_INTERP = ("linear", "lower", "higher", "midpoint", "nearest")


def _torch_lerp(a, b, w):
    # torch's lerp kernel: exact at both ends
    return jnp.where(jnp.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


@defop("quantile", grad_name="QuantileBackward0")
def _quantile(a, q, dim, keepdim, interpolation, ignore_nan):
    q = jnp.asarray(q, a.dtype)
    x = a.reshape(-1) if dim is None else (a.reshape(1) if a.ndim == 0 else a)
    x = jnp.moveaxis(x, 0 if dim is None else dim, -1)
    order = jnp.argsort(_jax.lax.stop_gradient(x), axis=-1, stable=True)
    s = jnp.take_along_axis(x, order, axis=-1)                       # (..., n)
    n = s.shape[-1]
    isn = jnp.isnan(_jax.lax.stop_gradient(s))
    qb = q.reshape(q.shape + (1,) * s.ndim)                           # (Q.., 1.., 1)
    if ignore_nan:
        cnt = jnp.sum(~isn, axis=-1, keepdims=True).astype(a.dtype)
        ranks = qb * (cnt - 1)
        ranks = jnp.where(ranks < 0, 0, ranks)
    else:
        ranks = jnp.where(jnp.any(isn, axis=-1, keepdims=True), jnp.asarray(n - 1, a.dtype),
                          qb * (n - 1))
    ranks = ranks + jnp.zeros(s.shape[:-1] + (1,), a.dtype)            # (Q.., ..., 1)
    if interpolation == "lower":
        ranks = jnp.floor(ranks)
    elif interpolation == "higher":
        ranks = jnp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = jnp.round(ranks)
    below = ranks.astype(_I64)
    sb = jnp.broadcast_to(s, ranks.shape[:-1] + (n,))
    vals = jnp.take_along_axis(sb, below, axis=-1)
    if interpolation in ("linear", "midpoint"):
        w = jnp.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        above = jnp.ceil(ranks).astype(_I64)
        vals = _torch_lerp(vals, jnp.take_along_axis(sb, above, axis=-1), w)
    vals = vals[..., 0]                                               # (Q.., ...)
    if keepdim:
        nq = q.ndim
        if dim is None:
            vals = vals.reshape(q.shape + (1,) * a.ndim)
        elif a.ndim:
            vals = jnp.expand_dims(vals, nq + dim)
    return vals


def _quantile_call(name, input, q, dim, keepdim, interpolation, ignore_nan):
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if interpolation not in _INTERP:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    d = None if dim is None else _one_dim(dim, input.ndim)
    if input.numel() == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        qa = _np.asarray(q._data)
        if qa.size and (qa.min() < 0 or qa.max() > 1):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        qarg = q
    else:
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        qarg = float(q)
    return apply(_quantile, input, qarg, dim=d, keepdim=bool(keepdim),
                 interpolation=interpolation, ignore_nan=ignore_nan)


@public(out=True)
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles over all elements or ``dim`` (NaN if the slice holds a NaN)."""
    return _quantile_call("quantile", input, q, dim, keepdim, interpolation, False)


@public(out=True)
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` ignoring NaN (NaN only for an all-NaN slice)."""
    return _quantile_call("nanquantile", input, q, dim, keepdim, interpolation, True)


@defop("logcumsumexp", grad_name="LogcumsumexpBackward0")
def _logcumsumexp(a, dim):
    if a.ndim == 0:
        return a
    return _jax.lax.cumlogsumexp(a, axis=dim)


@public(out=True)
def logcumsumexp(input, dim):
    """log(cumsum(exp(input))) along ``dim``, computed stably."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{D.legacy_name(input.dtype)}'")
    return apply(_logcumsumexp, input, dim=_one_dim(dim, input.ndim))


methods(quantile=quantile, nanquantile=nanquantile, logcumsumexp=logcumsumexp)


# ------------------------------------------------------------------ nanmedian

__all__ += ["nanmedian"]
_RT["nanmedian"] = _return_type("nanmedian")


def _nanmedian_value(a):
    flat = a.reshape(-1)
    if flat.shape[0] == 0:
        return jnp.asarray(jnp.nan, a.dtype)
    s = jnp.sort(flat)                                   # NaN last
    cnt = jnp.sum(~jnp.isnan(flat))
    return s[jnp.maximum((cnt - 1) // 2, 0)]


_full_nanmedian_even = _even_split(_nanmedian_value)


@defop("nanmedian_full", grad_name="NanmedianBackward0")
def _nanmedian_full(a):
    if not jnp.issubdtype(a.dtype, jnp.inexact):
        return _median_value(a)
    return _full_nanmedian_even(a)


@defop("nanmedian_dim", grad_name="NanmedianBackward1")
def _nanmedian_dim(a, dim, keepdim):
    if a.ndim == 0:
        return a, jnp.zeros((), _I64)
    order = _argsort(a, dim, False)                      # stable, NaN last
    if jnp.issubdtype(a.dtype, jnp.inexact):
        cnt = jnp.sum(~jnp.isnan(a), axis=dim, keepdims=True)
    else:
        cnt = jnp.full(a.shape[:dim] + (1,) + a.shape[dim + 1:], a.shape[dim])
    pos = jnp.maximum((cnt - 1) // 2, 0)
    idx = jnp.take_along_axis(order, pos, axis=dim)
    # an all-NaN slice: the index libstdc++'s nth_element leaves first (torch's kernel)
    idx = jnp.where(cnt == 0, _allnan_nth_index(a.shape[dim]), idx)
    return _gather(a, idx, dim, keepdim)


def _allnan_nth_index(n):
    """libstdc++ ``nth_element(first, first, last)`` when no element is less than another
    (torch.nanmedian of an all-NaN slice): which original index ends up first."""
    q = list(range(n))
    f, last_ = 0, n
    while last_ - f > 3:
        mid = f + (last_ - f) // 2
        q[f], q[mid] = q[mid], q[f]                      # __move_median_to_first
        first, last = f + 1, last_
        while True:                                      # __unguarded_partition
            last -= 1
            if not first < last:
                break
            q[first], q[last] = q[last], q[first]
            first += 1
        last_ = first                                    # the cut is past nth == 0
    return q[0] if n else 0


@public(out=True)
def nanmedian(input, dim=None, keepdim=False):
    """``median`` ignoring NaN (NaN only for an all-NaN slice)."""
    if dim is None:
        return apply(_nanmedian_full, input)
    d = _one_dim(dim, input.ndim)
    _nonempty_dim("nanmedian", input, d)
    return _RT["nanmedian"](*apply(_nanmedian_dim, input, dim=d, keepdim=bool(keepdim)))


methods(nanmedian=nanmedian)


# ------------------------------------------------------------------ unique_consecutive

__all__ += ["unique_consecutive"]


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements (rows along ``dim``); NaNs never compare
    equal. Output shapes depend on the data, so this runs eagerly."""
    x = _np.asarray(input._data)
    if dim is None:
        flat = x.reshape(-1)
        new = _np.ones(flat.shape[0], bool)
        new[1:] = flat[1:] != flat[:-1]
        d, shape = None, x.shape
    else:
        d = _wrap_dim(dim, input.ndim)
        moved = _np.moveaxis(x, d, 0).reshape(x.shape[d], -1) if x.ndim else x.reshape(1, 1)
        new = _np.ones(moved.shape[0], bool)
        new[1:] = (moved[1:] != moved[:-1]).any(axis=1)
        shape = (moved.shape[0],)
    first = _np.flatnonzero(new)
    out = [apply(_take, input, jnp.asarray(first, _I64), dim=d)]
    if return_inverse:
        out.append(Tensor._make(jnp.asarray((_np.cumsum(new) - 1).reshape(shape), _I64)))
    if return_counts:
        ends = _np.append(first[1:], new.shape[0])
        out.append(Tensor._make(jnp.asarray(ends - first, _I64)))
    return out[0] if len(out) == 1 else tuple(out)


methods(unique_consecutive=unique_consecutive)

