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
    for name, p in (("prepend", prepend), ("append", append)):
        if p is None:
            continue
        if not isinstance(p, Tensor):
            raise TypeError(f"diff(): argument '{name}' must be Tensor, not "
                            f"{type(p).__name__}")
        if p.dim() != input.dim():
            raise RuntimeError("diff expects prepend or append to be the same dimension as "
                               "input")
        for k in range(input.dim()):
            if k != d and p.shape[k] != input.shape[k]:
                raise RuntimeError(
                    f"diff expects the shape of tensor to prepend or append to match that of "
                    f"input except along the differencing dimension; input.size({k}) = "
                    f"{input.shape[k]}, but got tensor.size({k}) = {p.shape[k]}")
    parts = [p for p in (prepend, input, append) if p is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    if n == 0:
        return x.clone()
    return apply(_diff, x, n=n, dim=d)


_TRAPZ_OVERLOADS = {
    "trapezoid": (" * (Tensor y, Tensor x, *, int dim = -1)\n"
                  " * (Tensor y, *, Number dx = 1, int dim = -1)\n"),
    "cumulative_trapezoid": (" * (Tensor y, Tensor x, *, int dim = -1)\n"
                             " * (Tensor y, *, Number dx = 1, int dim = -1)\n"),
    "trapz": (" * (Tensor y, *, float dx = 1, int dim = -1)\n"
              " * (Tensor y, Tensor x, *, int dim = -1)\n"),
}


def _trapz_args(name, y, x, dx, dim):
    """torch's overloads (y, x) and (y, *, dx): ``(x tensor or None, dx number, dim)``."""
    from .._creation import _tp_name
    if not isinstance(x, Tensor) and x is not None or isinstance(x, Tensor) and dx is not None:
        got = [_tp_name(y)] + ([_tp_name(x)] if x is not None else []) + \
            ([f"dx={_tp_name(dx)}"] if dx is not None else [])
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({', '.join(got)}), but expected one of:\n" + _TRAPZ_OVERLOADS[name])
    if x is None:
        if dx is None:
            dx = 1
        elif isinstance(dx, Tensor):
            dx = dx.item()
        elif name == "trapz" and isinstance(dx, complex):
            raise TypeError(f"trapz() received an invalid combination of arguments - got "
                            f"(Tensor, dx=complex), but expected one of:\n"
                            + _TRAPZ_OVERLOADS[name])
        if isinstance(dx, (builtins.bool, complex)):
            raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    return x, dx, _wrap(dim, y.dim())


def _x_steps(name, y, x, d):
    """torch's x handling: a 1-D x viewed along ``dim``, a shorter one padded in front; the
    differences of neighbouring samples."""
    if x.dim() == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[d] = x.shape[0]
        x = x.view(shape)
    elif x.dim() < y.dim():
        x = x.view((1,) * (y.dim() - x.dim()) + tuple(x.shape))
    return _cut(x, d, 1, None) - _cut(x, d, 0, -1)


def _cut(t, d, lo, hi):
    return t[(slice(None),) * d + (slice(lo, hi),)]


def _pairs(y, d):
    return _cut(y, d, 0, -1) + _cut(y, d, 1, None)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    return _trapezoid("trapezoid", y, x, dx, dim)


def trapz(y, x=None, *, dx=None, dim=-1):
    return _trapezoid("trapz", y, x, dx, dim)


def _trapezoid(name, y, x, dx, dim):
    """torch's composite (ATen/native/Integration.cpp): its dtypes, gradients and errors."""
    x, dx, d = _trapz_args(name, y, x, dx, dim)
    name = "trapezoid"          # (trapz's checks are trapezoid's)
    if y.shape[d] == 0:          # (numpy's 0 for no samples, of y's dtype)
        from .._creation import zeros
        shape = list(y.shape)
        del shape[d]
        return zeros(shape, dtype=y.dtype, device=y.device)
    if x is None:
        if y.dtype is D_bool():
            raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not "
                               f"supported")
        return _scalar("mul", y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5, float(dx))
    if y.dtype is D_bool() or x.dtype is D_bool():
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not "
                           f"supported")
    return _scalar("div", (_pairs(y, d) * _x_steps(name, y, x, d)).sum(d), 2.)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    name = "cumulative_trapezoid"
    x, dx, d = _trapz_args(name, y, x, dx, dim)
    if x is None:
        if y.dtype is D_bool():
            raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not "
                               f"supported")
        return (float(dx) / 2. * _pairs(y, d)).cumsum(d)
    if y.dtype is D_bool() or x.dtype is D_bool():
        raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not "
                           f"supported")
    return _scalar("div", (_pairs(y, d) * _x_steps(name, y, x, d)).cumsum(d), 2.)


def _scalar(kind, a, b):
    """ATen's Tensor-Scalar overload (its MulBackward1/DivBackward1 node), as torch's C++
    composite calls it."""
    from ..nn.functional import _scalar as scalar_op
    return scalar_op(kind, a, b)


def D_bool():
    from .. import _dtype
    return _dtype.bool


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
