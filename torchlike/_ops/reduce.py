"""Reductions: sum, mean, norm, prod, var/std, max/min and their arg forms, logsumexp, the cumulative scans, all/any, count_nonzero, nansum/nanmean."""
from __future__ import annotations

import builtins as _bi
import jax as _jax
import jax.numpy as jnp
import numpy as _np

from .. import _dtype as D
from .. import _fused
from .. import return_types as _return_types
from .._registry import apply, defop
from .._storage import apply_
from .._tensor import Tensor, _wrap_dim
from ._surface import methods, public

__all__ = ['sum', 'mean', 'norm', 'prod', 'std', 'var', 'std_mean', 'var_mean', 'max', 'min',
           'amax', 'amin', 'argmax', 'argmin', 'logsumexp', 'cumsum', 'cumprod', 'cummax',
           'cummin', 'all', 'any', 'count_nonzero', 'aminmax', 'nansum', 'nanmean']


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


def _dtype_arg(input, dtype):
    """A reduction's ``dtype=`` as a numpy dtype (None: the op's own); the input is cast to it
    first, with torch's warning for a complex input cast to a real dtype."""
    if dtype is None:
        return None
    from .convert import warn_complex_discard
    warn_complex_discard(input.dtype, D.to_dtype(dtype))
    return D.to_dtype(dtype).np


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


def _reduced_back(g, a, dims, keepdim):
    """A reduction's cotangent ``g`` broadcast back to ``a``'s shape."""
    axes = _axes(dims, a.ndim)
    if axes is None:
        axes = tuple(range(a.ndim))
    elif a.ndim:
        axes = tuple(d % a.ndim for d in axes)
    if not keepdim and axes:
        g = jnp.expand_dims(g, axes)
    return jnp.broadcast_to(g, a.shape)


def _sum_vjp(cots, xs, needs, dims, keepdim, dtype):
    """SumBackward: the cotangent broadcast back over the summed dimensions (real floats)."""
    (g,), (a,) = cots, xs
    if not jnp.issubdtype(a.dtype, jnp.floating) or a.dtype in _HALF or jnp.iscomplexobj(g):
        return NotImplemented
    return [_reduced_back(g, a, dims, keepdim)]


def _mean_vjp(cots, xs, needs, dims, keepdim, dtype):
    """MeanBackward: the cotangent divided by the count, broadcast back (real floats)."""
    (g,), (a,) = cots, xs
    if not jnp.issubdtype(a.dtype, jnp.floating) or a.dtype in _HALF or jnp.iscomplexobj(g):
        return NotImplemented
    axes = _axes(dims, a.ndim)
    n = 1
    for d in (range(a.ndim) if axes is None else axes):
        n *= a.shape[d]
    return [_reduced_back(g / n, a, dims, keepdim)]


@defop("sum", saves=False, grad_name=_sum_name, vjp=_sum_vjp)
def _sum(a, dims, keepdim, dtype):
    if dtype is not None:
        a = D.cast(a, dtype)
    elif not jnp.issubdtype(a.dtype, jnp.inexact):
        a = a.astype(jnp.int64)
    elif a.dtype in _HALF:      # torch accumulates in float32
        return jnp.sum(a.astype(jnp.float32), axis=_axes(dims, a.ndim),
                       keepdims=keepdim).astype(a.dtype)
    # dtype= pinned: jnp.sum would widen a small integer dtype to int64
    return jnp.sum(a, axis=_axes(dims, a.ndim), keepdims=keepdim, dtype=a.dtype)


def _mean_name(kw):
    return "MeanBackward0" if kw["dims"] is None else "MeanBackward1"


@defop("mean", saves=False, grad_name=_mean_name, vjp=_mean_vjp)
def _mean(a, dims, keepdim, dtype):
    if dtype is not None:
        a = D.cast(a, dtype)
    if a.dtype in _HALF:        # torch accumulates in float32
        return jnp.mean(a.astype(jnp.float32), axis=_axes(dims, a.ndim),
                        keepdims=keepdim).astype(a.dtype)
    return jnp.mean(a, axis=_axes(dims, a.ndim), keepdims=keepdim)


def _given_dims(dim, keepdim, ndim):
    """sum / mean's dims: every dim when ``dim`` is empty ((), []) or when keepdim is set with
    dim=None (torch keeps each as size 1; its grad_fn is then the dim overload's)."""
    dims = dims_arg(dim, ndim)
    if dims is None and (keepdim or dim is not None):
        return tuple(range(ndim))
    return dims


@public(out=True, dtype_from_out=True)
def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum of all elements, or over ``dim``; integer and bool inputs sum to int64."""
    dims = _given_dims(dim, keepdim, input.ndim)
    return apply(_sum, input, dims=dims, keepdim=bool(keepdim) and dims is not None,
                 dtype=_dtype_arg(input, dtype))


@public(out=True)
def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of all elements, or over ``dim``; needs a floating or complex dtype."""
    dt = D.to_dtype(dtype) if dtype is not None else input.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(
            f"mean(): could not infer output dtype. {'Input' if dtype is None else 'Optional'} "
            "dtype must be either a floating point or complex dtype. "
            f"Got: {D.legacy_name(dt)}")
    dims = _given_dims(dim, keepdim, input.ndim)
    return apply(_mean, input, dims=dims, keepdim=bool(keepdim) and dims is not None,
                 dtype=_dtype_arg(input, dtype))


@public(out=True)
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """The vector p-norm over all elements or ``dim`` (``p='fro'`` over at most two dims is the
    2-norm); ``p='nuc'`` (or ``'fro'`` over more dims) is ``linalg.matrix_norm``, as torch."""
    if isinstance(p, str):
        if not (p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2)):
            from .linalg import linalg_matrix_norm
            dims = list(range(input.ndim)) if dim is None else [dim] if isinstance(
                dim, int) else dim
            return linalg_matrix_norm(input, p, dims, keepdim, dtype=dtype)
        p = 2
    elif p is None:
        p = 2
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. "
            f"Got {D.legacy_name(input.dtype)}")
    dims = dims_arg(dim, input.ndim)
    from .linalg import _check_empty_norm, _norm_dtype_check
    _check_empty_norm(input, float(p), dims)
    _norm_dtype_check(dtype, input.dtype, "linalg.vector_norm")
    # linalg.vector_norm's op (torch.norm is it): one declaration, torch's gradient (0 at zero
    # entries for p <= 1, ties sharing inf-norms); a dtype is computed in, as torch's (the
    # input cast to it first), not a cast of the result
    from .linalg import _vector_norm
    return apply(_vector_norm, input, ord=float(p),
                 dim=None if dims is None or input.ndim == 0 else tuple(sorted(dims)),
                 keepdim=bool(keepdim), dtype=None if dtype is None else D.to_dtype(dtype).np)


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


def _return_type(name, fields=None):
    """The positional maker of ``torch.return_types.<name>`` (torchlike/return_types.py is the
    one factory of these classes; ``fields`` is theirs, kept for the callers' spelling)."""
    return _return_types.maker(name)


_RT = {n: _return_type(n) for n in ("max", "min", "median", "mode", "kthvalue", "topk", "sort",
                                    "cummax", "cummin", "aminmax")}

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
        # (aminmax's message has no parentheses)
        call = name if name == "aminmax" else name + "()"
        raise IndexError(f"{call}: Expected reduction dim {d} to have non-zero size.")


def _need_float(name, input):
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"{name} only support floating point and complex dtypes")


# ------------------------------------------------------------------ prod

def _prod_name(kw):
    return "ProdBackward0" if kw["dim"] is None else "ProdBackward1"


@defop("prod", saves="both", grad_name=_prod_name)
def _prod(a, dim, keepdim, dtype):
    if dtype is not None:
        a = D.cast(a, dtype)
    elif not jnp.issubdtype(a.dtype, jnp.inexact):
        a = a.astype(_I64)
    dt = a.dtype
    if dt in _HALF:             # torch accumulates in float32
        a = a.astype(jnp.float32)
    if dim is None:
        return jnp.prod(a).astype(dt)
    axes = () if a.ndim == 0 else (dim,)
    return jnp.prod(a, axis=axes, keepdims=keepdim).astype(dt)


@public(out=True, dtype_from_out=True)
def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product of all elements or along one ``dim``; integer and bool inputs give int64."""
    d = None if dim is None else _one_dim(dim, input.ndim)
    return apply(_prod, input, dim=d, keepdim=bool(keepdim) and d is not None,
                 dtype=_dtype_arg(input, dtype))


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


@defop("std", saves="both", grad_name="StdBackward0")
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


def _dof_warning(name, input, args):
    """torch's warning when N - correction <= 0, N being the input's numel over the result's
    (at least 1); twice for a complex input (its real and imaginary parts)."""
    shape = tuple(input.shape)
    dims = range(len(shape)) if args["dims"] is None else args["dims"]
    out = 1
    for i, n in enumerate(shape):
        if i not in dims:
            out *= n
    if input.numel() / _bi.max(out, 1) - args["correction"] > 0:
        return
    from .factorizations import _user_stacklevel, triggered
    import warnings
    for _ in range(2 if input.dtype.is_complex else 1):
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less "
                      f"than the reduction factor (input numel divided by output numel)."
                      + triggered("ReduceOps.cpp:1861"), UserWarning, stacklevel=_user_stacklevel())


def _var_checked(name, input, dim, unbiased, keepdim, correction):
    args = _var_args(input, dim, unbiased, keepdim, correction)
    _dof_warning(name, input, args)
    return args


@public(out=True)
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance over all elements or ``dim``, divided by N - correction (default 1)."""
    _need_float("std and var", input)
    return apply(_var, input, **_var_checked("var", input, dim, unbiased, keepdim, correction))


@public(out=True)
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation (sqrt of ``var``; zero gradient where it is 0)."""
    _need_float("std and var", input)
    return apply(_std, input, **_var_checked("std", input, dim, unbiased, keepdim, correction))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    _need_float("var_mean", input)
    return apply(_var_mean, input,
                 **_var_checked("var_mean", input, dim, unbiased, keepdim, correction),
                 sqrt=False)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    _need_float("std_mean", input)
    return apply(_var_mean, input,
                 **_var_checked("std_mean", input, dim, unbiased, keepdim, correction),
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


@defop("max_full", saves="both",
       grad_name=lambda kw: "MaxBackward1" if kw["largest"] else "MinBackward1")
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


@defop("amax", saves="both", grad_name=_amax_name)
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
    if input.dtype.is_complex:
        if dim is None:
            _no_complex(input, f"{name}_all")
        raise RuntimeError(f"{name}(): does not support complex input")
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


def _no_complex(input, kernel):
    """torch's error for an ordering kernel given a complex input."""
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{D.legacy_name(input.dtype)}'")


def _amaxmin_dims(name, largest, input, dim, keepdim):
    """torch's checks of an amax / amin / aminmax call; its ``(dims, keepdim)``."""
    _no_complex(input, "aminmax_cpu" if name == "aminmax" else
                "max_values_cpu" if largest else "min_values_cpu")
    # (torch wraps and checks each dim in the order given)
    for d in dim if isinstance(dim, (list, tuple)) else () if dim is None else (dim,):
        _nonempty_dim(name, input, _wrap_dim(d, input.ndim))
    dims = dims_arg(dim, input.ndim)
    if dims is None and input.numel() == 0 and name == "aminmax":
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    if dims is None:
        _nonempty_full(name, input)
    return _keep_all(dims, keepdim, input.ndim)


def _amaxmin(name, largest, input, dim, keepdim):
    dims, keep = _amaxmin_dims(name, largest, input, dim, keepdim)
    return apply(_amax, input, dims=dims, keepdim=keep, largest=largest)


@public(out=True)
def amax(input, dim=(), keepdim=False):
    """Largest value over ``dim`` (all dims if empty); ties share the gradient evenly."""
    return _amaxmin("amax", True, input, dim, keepdim)


@public(out=True)
def amin(input, dim=(), keepdim=False):
    """Smallest value over ``dim`` (all dims if empty); ties share the gradient evenly."""
    return _amaxmin("amin", False, input, dim, keepdim)


@defop("aminmax", saves="both", grad_name=lambda kw: "AminmaxBackward0")
def _aminmax(a, dims, keepdim):
    """amin and amax as one op, as torch records them (one node; each output's gradient split
    evenly among its ties)."""
    return _amax.fn(a, dims, keepdim, False), _amax.fn(a, dims, keepdim, True)


@public(out=True)
def aminmax(input, *, dim=None, keepdim=False):
    """(min, max) over all elements or one ``dim``."""
    dims, keep = _amaxmin_dims("aminmax", False, input, () if dim is None else dim, keepdim)
    return _RT["aminmax"](*apply(_aminmax, input, dims=dims, keepdim=keep))


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
    if input.dtype.is_complex:
        raise RuntimeError(f"{name}(): does not support complex input")
    if dim is None:
        if input.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             "input.numel() == 0.")
        out = apply(_argmax, input, dim=None, keepdim=bool(keepdim), largest=largest)
        _fused.bound(out._d, 0, input.numel() - 1)     # (an index check of it reads nothing)
        return out
    d = _one_dim(dim, input.ndim)
    _nonempty_dim(name, input, d)
    out = apply(_argmax, input, dim=d, keepdim=bool(keepdim), largest=largest)
    _fused.bound(out._d, 0, (input.shape[d] if input.ndim else 1) - 1)
    return out


@public(out=True)
def argmax(input, dim=None, keepdim=False):
    """Index of the largest element (first on ties; NaN counts as largest)."""
    return _arg("argmax", True, input, dim, keepdim)


@public(out=True)
def argmin(input, dim=None, keepdim=False):
    """Index of the smallest element (first on ties; NaN counts as smallest)."""
    return _arg("argmin", False, input, dim, keepdim)


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


def _lse_low(a, axes, keepdim):
    """torch's composite logsumexp on bfloat16/float16: each step is a tensor op of the
    input's dtype (``amax``, ``(x - max).exp()``, a float32-accumulated ``sum``, ``log``,
    ``+ max``), each rounded."""
    low, f32 = a.dtype, jnp.float32
    m = _jax.lax.stop_gradient(jnp.max(a, axis=axes, keepdims=True, initial=-jnp.inf)
                               .astype(f32))
    m = jnp.where(jnp.abs(m) == jnp.inf, 0.0, m)
    e = jnp.exp((a.astype(f32) - m).astype(low).astype(f32)).astype(low).astype(f32)
    lg = jnp.log(jnp.sum(e, axis=axes, keepdims=keepdim).astype(low).astype(f32))
    mm = m if keepdim else jnp.squeeze(m, axes)
    return (lg.astype(low).astype(f32) + mm).astype(low)


@defop("logsumexp", promote="float", saves="both", grad_name="LogsumexpBackward0")
def _logsumexp(a, dims, keepdim):
    axes = _axes(dims, a.ndim)
    if a.ndim == 0:
        return a
    if a.dtype in _HALF:
        return _lse_low(a, axes, keepdim)
    return _lse_vjp(axes, keepdim)(a)


@public(out=True)
def logsumexp(input, dim, keepdim=False):
    """log(sum(exp(input))) over ``dim``, computed stably."""
    dims = dims_arg(dim, input.ndim)
    if dims is None:
        if input.ndim and input.numel() and not keepdim:
            # (torch reduces every dim into a kept-dims result, then fails to copy it out)
            raise RuntimeError(f"output with shape [] doesn't match the broadcast shape "
                               f"{[1] * input.ndim}")
        dims = tuple(range(input.ndim))
    return apply(_logsumexp, input, dims=dims, keepdim=bool(keepdim))


@defop("cumsum", grad_name=lambda kw: "CumprodBackward0" if kw["prod"] else "CumsumBackward0",
       saves=lambda kw: "both" if kw["prod"] else False)   # (cumprod's reads input and result)
def _cumsum(a, dim, dtype, prod):
    if dtype is not None:
        a = D.cast(a, dtype)
    elif not jnp.issubdtype(a.dtype, jnp.inexact):
        a = a.astype(_I64)
    if a.ndim == 0:
        return a
    # torch's CPU kernel accumulates in acc_type (float32 for half types, double for float,
    # complex<double> for complex<float>), rounding each output
    acc = _CUM_ACC.get(jnp.dtype(a.dtype))
    if acc is not None:
        return (jnp.cumprod if prod else jnp.cumsum)(a.astype(acc), axis=dim).astype(a.dtype)
    return (jnp.cumprod if prod else jnp.cumsum)(a, axis=dim)


_CUM_ACC = {jnp.dtype(jnp.float16): jnp.float32, jnp.dtype(jnp.bfloat16): jnp.float32,
            jnp.dtype(jnp.float32): jnp.float64, jnp.dtype(jnp.complex64): jnp.complex128}


def _scan_dtype(kernel, dtype):
    """torch's cumsum/cumprod kernels dispatch on every type but bool: ``dtype=torch.bool``
    raises their NotImplementedError (whatever the input)."""
    if dtype is not None and D.to_dtype(dtype) is D.bool:
        raise NotImplementedError(f'"{kernel}_out_cpu" not implemented for \'Bool\'')


@public(out=True, dtype_from_out=True)
def cumsum(input, dim, *, dtype=None):
    """Cumulative sum along ``dim``; integer and bool inputs give int64."""
    _scan_dtype("cumsum", dtype)
    return apply(_cumsum, input, dim=_one_dim(dim, input.ndim),
                 dtype=_dtype_arg(input, dtype), prod=False)


@public(out=True, dtype_from_out=True)
def cumprod(input, dim, *, dtype=None):
    """Cumulative product along ``dim``; integer and bool inputs give int64."""
    _scan_dtype("cumprod", dtype)
    return apply(_cumsum, input, dim=_one_dim(dim, input.ndim),
                 dtype=_dtype_arg(input, dtype), prod=True)


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
    _no_complex(input, "cummax_cpu")
    return _RT["cummax"](*apply(_cummax, input, dim=_one_dim(dim, input.ndim), largest=True))


@public(out=True)
def cummin(input, dim):
    _no_complex(input, "cummin_cpu")
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


def count_nonzero(input, *args, **kwargs):
    """The count of non-zero elements, over all dims or ``dim`` (numpy's ``axis``)."""
    if "axis" in kwargs and "dim" not in kwargs:
        kwargs["dim"] = kwargs.pop("axis")
    if len(args) + len(kwargs) > 1 or (kwargs and "dim" not in kwargs):
        # (torch's two overloads take no keepdim; its parser lists keywords in reverse order)
        from .._tensor import _type_name
        got = [_type_name(a) for a in (input, *args)] + [
            f"{k}={_type_name(a)}" for k, a in reversed(kwargs.items())]
        raise TypeError(f"count_nonzero() received an invalid combination of arguments - got "
                        f"({', '.join(got)}), but expected one of:\n * (Tensor input, "
                        "int dim = None)\n * (Tensor input, tuple of ints dim)\n")
    dim = args[0] if args else kwargs.get("dim")
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


def _nansum_check(input, dtype):
    """torch's CPU nansum: no complex input; a floating input's kernel dispatches on the
    floating types only (an integer or bool input is summed by ``sum``)."""
    if input.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if input.dtype.is_floating_point and dtype is not None and D.to_dtype(dtype).is_complex:
        raise NotImplementedError(f'"nansum_cpu" not implemented for '
                                  f"'{D.legacy_name(D.to_dtype(dtype))}'")


@public(out=True)
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum treating NaN as zero."""
    _nansum_check(input, dtype)
    x = input if dtype is None else input.to(dtype)
    dims, keep = _keep_all(dims_arg(dim, input.ndim), keepdim, input.ndim)
    if dtype is not None:
        return apply(_nansum, x, dims=dims, keepdim=keep, mean=False, pinned=True)
    return apply(_nansum, x, dims=dims, keepdim=keep, mean=False)


@public(out=True)
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of the non-NaN elements."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {D.legacy_name(input.dtype)}")
    if dtype is not None and not (D.to_dtype(dtype).is_floating_point or
                                  D.to_dtype(dtype).is_complex):
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be "
                           "either a floating point or complex dtype. Got: "
                           f"{D.legacy_name(D.to_dtype(dtype))}")
    _nansum_check(input, dtype)
    x = input if dtype is None else input.to(dtype)
    dims, keep = _keep_all(dims_arg(dim, input.ndim), keepdim, input.ndim)
    return apply(_nansum, x, dims=dims, keepdim=keep, mean=True)


# ------------------------------------------------------------------ Tensor methods

methods(prod=prod, std=std, var=var, max=max, min=min, amax=amax, amin=amin, aminmax=aminmax,
        argmax=argmax, argmin=argmin, logsumexp=logsumexp,
        cumsum=cumsum, cumprod=cumprod, cummax=cummax, cummin=cummin, all=all, any=any,
        count_nonzero=count_nonzero, nansum=nansum, nanmean=nanmean)


def _cum_(prod_):
    def f_(self, dim, *, dtype=None):
        if dtype is not None and D.to_dtype(dtype) is not self.dtype:
            from .._tensor import _CPP
            raise RuntimeError(f"Bad in-place call: input tensor dtype {_CPP[self.dtype.name]} "
                               f"and output tensor dtype {_CPP[D.to_dtype(dtype).name]} should "
                               "match")
        _scan_dtype("cumprod" if prod_ else "cumsum", self.dtype)
        return apply_(_cumsum, self, dim=_one_dim(dim, self.ndim),
                      dtype=None if dtype is None else D.to_dtype(dtype).np, prod=prod_)
    return f_


methods(cumsum_=_cum_(False), cumprod_=_cum_(True))
