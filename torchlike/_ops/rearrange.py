"""Rearranging elements: repeat, tile, repeat_interleave, flip, roll, rot90, tril/triu, diagonal,
diag, diag_embed."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .._registry import apply, defop
from .._tensor import _wrap_dim
from ._surface import public, method
from .view import _dims_list, _dims_varargs, _host, _is_t, _shape_arg, _view, reshape

__all__ = ['repeat_interleave', 'tile', 'flip', 'fliplr', 'flipud', 'roll', 'rot90', 'tril',
           'triu', 'diag', 'diagonal', 'diag_embed']


# ------------------------------------------------------------------ repeat, tile, flip, roll

@defop("tile", saves=False, grad_name="RepeatBackward0")
def _tile(a, reps):
    return jnp.tile(a, reps)


@method("repeat")
def _repeat(self, *sizes, **kw):
    if kw:
        if set(kw) != {"repeats"} or sizes:
            raise TypeError(f"repeat() got an unexpected keyword argument "
                            f"'{next(k for k in kw if k != 'repeats')}'" if set(kw) - {"repeats"}
                            else "repeat() got multiple values for argument 'repeats'")
        sizes = (kw["repeats"],)
    if not sizes:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    sizes = _shape_arg(sizes)
    if len(sizes) < self._d.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    if any(s < 0 for s in sizes):
        # (torch names the result's sizes: each input size, padded with 1s, times its repeat)
        shape = (1,) * (len(sizes) - self._d.ndim) + tuple(self._d.shape)
        target = [n * r for n, r in zip(shape, sizes)]
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{next(t for t in target if t < 0)}: {target}")
    a = self
    if len(sizes) > a._d.ndim:
        a = apply(_view, a, shape=(1,) * (len(sizes) - a._d.ndim) + tuple(a._d.shape))
    return apply(_tile, a, reps=sizes)


def tile(input, dims):
    dims = _shape_arg((dims,) if isinstance(dims, int) else tuple(dims))
    n = input._d.ndim
    if len(dims) < n:
        dims = (1,) * (n - len(dims)) + dims
    return _repeat(input, *dims)


@method("tile")
def _tile_method(self, *dims, **kw):
    return tile(self, _dims_varargs(dims, kw, "dims", "tile"))


@defop("repeat_interleave", saves=False, grad_name="IndexSelectBackward0")
def _repeat_interleave(a, repeats, axis, total):
    return jnp.repeat(a, np.asarray(repeats) if isinstance(repeats, tuple) else repeats,
                      axis=axis, total_repeat_length=total)


def _repeats_dtype(repeats):
    """torch's repeat_interleave kernel counts with int32 or int64 repeats only."""
    if repeats.dtype not in (D.int32, D.int64):
        raise NotImplementedError(f"\"repeat_interleave_cpu\" not implemented for "
                                  f"'{D.legacy_name(repeats.dtype)}'")


@public(method=True)
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:
        # torch.repeat_interleave(repeats): arange(len(repeats)) repeated
        if input._d.ndim != 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        _repeats_dtype(input)
        from .._creation import arange
        return repeat_interleave(arange(input._d.shape[0], dtype=input.dtype), input, 0,
                                 output_size=output_size)
    if dim is None:
        input = reshape(input, -1)
        dim = 0
    d = _wrap_dim(dim, input._d.ndim)
    size = input._d.shape[d] if input._d.ndim else 1
    if _is_t(repeats):
        if repeats._d.ndim > 1:
            raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
        _repeats_dtype(repeats)
        r = _host(repeats).astype(np.int64).reshape(-1)
        if r.size == 1 and size != 1:
            r = np.full(size, r[0])
        if r.size != size:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {r.size} and input.size({dim}) = {size}")
        if (r < 0).any():
            raise RuntimeError("repeats can not be negative")
        reps = tuple(int(v) for v in r)
        total = int(r.sum())
        if output_size is not None and output_size != total:
            raise RuntimeError("allocated size does not match required size")
    else:
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        reps, total = int(repeats), int(repeats) * size
        if output_size is not None and output_size != total:
            raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {total} but "
                               f"got {output_size}")
    if input._d.ndim == 0:
        input = reshape(input, 1)
    return apply(_repeat_interleave, input, repeats=reps, axis=d, total=total)


@defop("flip", saves=False, grad_name="FlipBackward0")
def _flip(a, dims):
    return jnp.flip(a, dims) if dims and a.ndim else a      # (a 0-dim tensor flips to itself)


def flip(input, dims):
    return apply(_flip, input, dims=_dims_list(dims, input._d.ndim))


@method("flip")
def _flip_method(self, *dims, **kw):
    return flip(self, _dims_varargs(dims, kw, "dims", "flip"))


@public(method=True)
def fliplr(input):
    if input._d.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


@public(method=True)
def flipud(input):
    if input._d.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


@defop("roll", saves=False, grad_name="RollBackward0")
def _roll(a, shifts, dims):
    if dims is None:
        return jnp.roll(a.reshape(-1), shifts[0]).reshape(a.shape)
    return jnp.roll(a, shifts, dims)


@public(method=True)
def roll(input, shifts, dims=None):
    shifts = (shifts,) if isinstance(shifts, int) else tuple(int(s) for s in shifts)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if dims is not None and not isinstance(dims, int) and not len(dims):
        dims = None         # (torch reads no dims as none given: the flattened roll)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               f"dims:0")
        return apply(_roll, input, shifts=shifts, dims=None)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    n = input._d.ndim
    return apply(_roll, input, shifts=shifts, dims=tuple(_wrap_dim(d, n) for d in dims))


@defop("rot90", saves=False, grad_name="FlipBackward0")
def _rot90(a, k, dims):
    return jnp.rot90(a, k, axes=dims)


@public(method=True)
def rot90(input, k=1, dims=(0, 1)):
    dims = tuple(dims)
    n = input._d.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = _wrap_dim(dims[0], n), _wrap_dim(dims[1], n)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    return apply(_rot90, input, k=int(k) % 4, dims=(d0, d1))


# ------------------------------------------------------------------ triangles and diagonals

@defop("tril", saves=False, grad_name="TrilBackward0")
def _tril(a, diagonal):
    return jnp.tril(a, diagonal)


@defop("triu", saves=False, grad_name="TriuBackward0")
def _triu(a, diagonal):
    return jnp.triu(a, diagonal)


@public(method=True, inplace=True, out=True)
def tril(input, diagonal=0):
    if input._d.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return apply(_tril, input, diagonal=int(diagonal))


@public(method=True, inplace=True, out=True)
def triu(input, diagonal=0):
    if input._d.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return apply(_triu, input, diagonal=int(diagonal))


@defop("diagonal", saves=False, view=True, grad_name="DiagonalBackward0")
def _diagonal(a, offset, dim1, dim2):
    return jnp.diagonal(a, offset, dim1, dim2)


@public(method=True)
def diagonal(input, offset=0, dim1=0, dim2=1):
    n = input._d.ndim
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(_diagonal, input, offset=int(offset), dim1=d1, dim2=d2)


@defop("diag_embed", saves=False, grad_name="DiagEmbedBackward0")
def _diag_embed(a, offset, dim1, dim2):
    m = a.shape[-1] + abs(offset)
    # (np.zeros' zero bytes: float8_e8m0fnu has no 0, and torch writes its zero byte)
    out = jnp.full(a.shape[:-1] + (m, m), np.zeros((), a.dtype), a.dtype)
    i = jnp.arange(a.shape[-1])
    r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
    out = out.at[..., r, c].set(a)
    n = out.ndim
    return jnp.moveaxis(out, (n - 2, n - 1), (dim1, dim2))


@public(method=True)
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    n = input._d.ndim + 1
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(_diag_embed, input, offset=int(offset), dim1=d1, dim2=d2)


@public(method=True, out=True)
def diag(input, diagonal=0):
    n = input._d.ndim
    if n == 1:
        return diag_embed(input, diagonal, 0, 1)
    if n == 2:
        # (a copy, as torch's diagonal_copy: writes to it leave the input alone)
        return apply(_diag_copy, input, offset=int(diagonal))
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {n}D")


@defop("diag_copy", saves=False, grad_name="DiagonalBackward0_copy")
def _diag_copy(a, offset):
    return jnp.diagonal(a, offset, 0, 1)
