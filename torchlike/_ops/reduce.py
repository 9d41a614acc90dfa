"""Reductions: sum, mean, norm (more in the breadth issue)."""
from __future__ import annotations

import jax.numpy as jnp

from .. import _dtype as D
from .._tensor import Tensor, _wrap_dim
from ._registry import apply, defop

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


def _sum_name(kw):
    return "SumBackward0" if kw["dims"] is None else "SumBackward1"


@defop("sum", saves=False, grad_name=_sum_name)
def _sum(a, dims, keepdim, dtype):
    if dtype is not None:
        a = a.astype(dtype)
    elif not jnp.issubdtype(a.dtype, jnp.inexact):
        a = a.astype(jnp.int64)
    return jnp.sum(a, axis=_axes(dims, a.ndim), keepdims=keepdim)


def _mean_name(kw):
    return "MeanBackward0" if kw["dims"] is None else "MeanBackward1"


@defop("mean", saves=False, grad_name=_mean_name)
def _mean(a, dims, keepdim, dtype):
    if dtype is not None:
        a = a.astype(dtype)
    return jnp.mean(a, axis=_axes(dims, a.ndim), keepdims=keepdim)


@defop("vector_norm", saves="both", grad_name="LinalgVectorNormBackward0")
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


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum of all elements, or over ``dim``; integer and bool inputs sum to int64."""
    dims = dims_arg(dim, input.ndim)
    return apply(_sum, input, dims=dims, keepdim=bool(keepdim) and dims is not None,
                 dtype=None if dtype is None else D.to_dtype(dtype).np)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean of all elements, or over ``dim``; needs a floating or complex dtype."""
    dt = D.to_dtype(dtype) if dtype is not None else input.dtype
    if not (dt.is_floating_point or dt.is_complex):
        from ._registry import _torch_type_name
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point "
            f"or complex dtype. Got: {_torch_type_name(dt)}")
    dims = dims_arg(dim, input.ndim)
    return apply(_mean, input, dims=dims, keepdim=bool(keepdim) and dims is not None,
                 dtype=None if dtype is None else dt.np)


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


Tensor.sum = sum
Tensor.mean = mean
Tensor.norm = norm
