"""Finite differences and numerical integration: diff, gradient, trapezoid, cumulative_trapezoid."""
from __future__ import annotations

import builtins

import jax.numpy as jnp

from .._tensor import Tensor
from .._registry import apply, defop
from ._surface import public

__all__ = ["diff", "gradient", "trapezoid", "trapz", "cumulative_trapezoid"]


def _wrap(dim, ndim):
    if not -builtins.max(ndim, 1) <= dim < builtins.max(ndim, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-builtins.max(ndim, 1)}, {builtins.max(ndim, 1) - 1}], but got {dim})")
    return dim % builtins.max(ndim, 1)


@defop("diff", grad_name="SubBackward0", saves=False)
def _diff(a, *, n, dim):
    if a.dtype == jnp.bool_:
        for _ in range(n):
            a = jnp.logical_xor(a[(slice(None),) * dim + (slice(1, None),)],
                                a[(slice(None),) * dim + (slice(None, -1),)])
        return a
    return jnp.diff(a, n=n, axis=dim)


@public(method=True, out=True)
def diff(input, n=1, dim=-1, prepend=None, append=None):
    from .join import cat
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap(dim, input.dim())
    parts = [p for p in (prepend, input, append) if p is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    if n == 0:
        return x.clone()
    return apply(_diff, x, n=n, dim=d)


@defop("trapezoid_dx", grad_name="MulBackward0")
def _trapz_dx(y, *, dx, dim):
    return jnp.trapezoid(y, dx=dx, axis=dim)


@defop("trapezoid_x", promote="float", grad_name="SumBackward1")
def _trapz_x(y, x, *, dim):
    return jnp.trapezoid(y, x=x, axis=dim)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    d = _wrap(dim, y.dim())
    if isinstance(x, Tensor):
        if dx is not None:
            raise TypeError("trapezoid() received an invalid combination of arguments")
        return apply(_trapz_x, y, x, dim=d)
    if x is not None:
        dx = x
    y = y if y.dtype.is_floating_point or y.dtype.is_complex else y.double() \
        if isinstance(dx, float) else y
    return apply(_trapz_dx, y, dx=1 if dx is None else dx, dim=d)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


@defop("cumulative_trapezoid_dx", grad_name="CumsumBackward0")
def _ctrapz_dx(y, *, dx, dim):
    lo = jnp.take(y, jnp.arange(y.shape[dim] - 1), axis=dim)
    hi = jnp.take(y, jnp.arange(1, y.shape[dim]), axis=dim)
    return jnp.cumsum((lo + hi) * (dx / 2), axis=dim)


@defop("cumulative_trapezoid_x", promote="float", grad_name="CumsumBackward0")
def _ctrapz_x(y, x, *, dim):
    n = y.shape[dim]
    lo = jnp.take(y, jnp.arange(n - 1), axis=dim)
    hi = jnp.take(y, jnp.arange(1, n), axis=dim)
    if x.ndim == 1:
        shape = [1] * y.ndim
        shape[dim] = n - 1
        dxs = jnp.diff(x).reshape(shape)
    else:
        dxs = jnp.diff(x, axis=dim)
    return jnp.cumsum((lo + hi) * dxs / 2, axis=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    d = _wrap(dim, y.dim())
    if isinstance(x, Tensor):
        return apply(_ctrapz_x, y, x, dim=d)
    if x is not None:
        dx = x
    return apply(_ctrapz_dx, y, dx=1 if dx is None else dx, dim=d)


def _grad1(f, dx, axis, edge_order):
    """numpy's second-order accurate differences along ``axis``; ``dx`` the n-1 spacings."""
    f = jnp.moveaxis(f, axis, -1)
    dx1, dx2 = dx[:-1], dx[1:]
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    mid = a * f[..., :-2] + b * f[..., 1:-1] + c * f[..., 2:]
    if edge_order == 1:
        first = (f[..., 1:2] - f[..., :1]) / dx[0]
        last = (f[..., -1:] - f[..., -2:-1]) / dx[-1]
    else:
        d1, d2 = dx[0], dx[1]
        first = (-(2 * d1 + d2) / (d1 * (d1 + d2)) * f[..., :1]
                 + (d1 + d2) / (d1 * d2) * f[..., 1:2] - d1 / (d2 * (d1 + d2)) * f[..., 2:3])
        d1, d2 = dx[-2], dx[-1]
        last = (d2 / (d1 * (d1 + d2)) * f[..., -3:-2] - (d2 + d1) / (d1 * d2) * f[..., -2:-1]
                + (2 * d2 + d1) / (d2 * (d1 + d2)) * f[..., -1:])
    return jnp.moveaxis(jnp.concatenate([first, mid, last], axis=-1), -1, axis)


@defop("gradient", promote="float", grad_name="DivBackward0")
def _gradient(a, *coords, dims, scalar_spacing, edge_order):
    out = []
    for k, d in enumerate(dims):
        n = a.shape[d]
        if scalar_spacing is not None:
            dx = jnp.full((n - 1,), scalar_spacing[k], a.dtype)
        else:
            dx = jnp.diff(coords[k]).astype(a.dtype)
        out.append(_grad1(a, dx, d, edge_order))
    return tuple(out)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    nd = input.dim()
    dims = tuple(range(nd)) if dim is None else \
        tuple(_wrap(x, nd) for x in ((dim,) if isinstance(dim, int) else dim))
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError(f"torch.gradient expected each dimension size to be at least "
                               f"edge_order+1")
    if isinstance(spacing, (int, float)):
        scal = tuple(float(spacing) for _ in dims)
        res = apply(_gradient, input, dims=dims, scalar_spacing=scal, edge_order=edge_order)
    else:
        sp = list(spacing)
        if len(sp) == 1 and len(dims) > 1 and not isinstance(sp[0], Tensor):
            sp = sp * len(dims)
        if all(not isinstance(s, Tensor) for s in sp):
            scal = tuple(float(s) for s in sp)
            res = apply(_gradient, input, dims=dims, scalar_spacing=scal,
                        edge_order=edge_order)
        else:
            res = apply(_gradient, input, *sp, dims=dims, scalar_spacing=None,
                        edge_order=edge_order)
    return res if isinstance(res, tuple) else (res,)
