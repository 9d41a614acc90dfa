"""Ops that restructure a tensor or write parts of it: unfold, put, fill_diagonal_, masked_scatter,
scatter_reduce, block_diag, cartesian_prod, combinations, tril/triu_indices, diagflat, the
*_scatter family, hsplit/vsplit/dsplit, ravel, narrow_copy, split_with_sizes, mH/H/adjoint,
sum_to_size."""
from __future__ import annotations

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _barebones, _dtype as D
from .._tensor import Tensor, _wrap_dim
from .._registry import apply, defop
from .._storage import check_inplace, commit_inplace, inplace_of
from ._surface import inplace_methods, methods, public
from .join import stack, tensor_split
from .scatter import (_check_index_bounds, _check_index_dims, _grid, _index_func_checks,
                      _scatter_set, check_index_dtype)
from .view import _broadcast_shape, _host, _is_t, meshgrid, narrow, required, reshape, tensors_only

__all__ = ["put", "block_diag", "cartesian_prod", "combinations", "tril_indices", "triu_indices",
           "diagflat", "scatter_reduce", "select_scatter", "slice_scatter", "diagonal_scatter",
           "masked_scatter", "hsplit", "vsplit", "dsplit", "adjoint", "ravel", "narrow_copy",
           "unravel_index", "nonzero_static", "index_reduce", "as_strided"]


# ------------------------------------------------------------------ unfold

@defop("unfold", saves=False, grad_name="UnfoldBackward0",
       view=lambda kw: kw["step"] >= kw["size"])  # overlapping windows: see DIFFERENCES.md
def _unfold(a, dim, size, step):
    if a.ndim == 0:
        return a.reshape(1)
    n = (a.shape[dim] - size) // step + 1
    idx = jnp.arange(n)[:, None] * step + jnp.arange(size)[None, :]
    out = jnp.take(a, idx, axis=dim)            # [..., n, size, ...]
    return jnp.moveaxis(out, dim + 1, -1)


def unfold(self, dimension, size, step):
    n = self._d.ndim
    d = _wrap_dim(dimension, n)
    cur = self._d.shape[d] if n else 1
    if size > cur:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {cur} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    out = apply(_unfold, self, dim=d, size=int(size), step=int(step))
    if out._alias is None:
        # overlapping windows are a copy here (DIFFERENCES.md): report torch's view strides
        from .._strides import set_layout, strides
        st = strides(self)
        set_layout(out, (tuple(s * step if i == d else s for i, s in enumerate(st)) + (st[d],))
                   if n else (1,))
    return out


# ------------------------------------------------------------------ as_strided

@defop("as_strided", saves=False, view=lambda kw: kw["unique"], grad_name="AsStridedBackward0")
def _as_strided(a, idx, unique):
    return a.reshape(-1)[idx]


def _storage_base(t):
    """The tensor owning ``t``'s storage (its root), and ``t``'s storage offset in it."""
    from .._storage import alias_index
    a = t._alias
    if a is None:
        return t, 0
    idx = alias_index(t)
    off = int(np.asarray(idx).reshape(-1)[0]) if idx is not None and t.numel() else 0
    return (a.root.detach() if a.detached else a.root), off


def _storage_offset(self):
    return _storage_base(self)[1]


@public(inplace=True, top_inplace=True)
def as_strided(input, size, stride, storage_offset=None):
    """A tensor reading ``input``'s storage at ``offset + sum(i_k * stride_k)``; a view of that
    storage when no two elements share a position (a copy otherwise: DIFFERENCES.md)."""
    size, stride = tuple(int(n) for n in size), tuple(int(n) for n in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape")
    base, off = _storage_base(input)
    off = off if storage_offset is None else int(storage_offset)
    pos = np.full(size, off, np.int64)
    for k, (n, st) in enumerate(zip(size, stride)):
        if st < 0:
            raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, "
                               f"got strides: {list(stride)}")
        shp = [1] * len(size)
        shp[k] = n
        pos = pos + (np.arange(n, dtype=np.int64) * st).reshape(shp)
    need = (int(pos.max()) + 1) if pos.size else 0
    if need > base.numel():
        isz = base.dtype.itemsize
        req = (off + sum((n - 1) * st for n, st in zip(size, stride)) + 1) * isz if pos.size \
            else 0
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {off}, and itemsize {isz} requiring a storage size of {req} "
                           f"are out of bounds for storage of size {base.numel() * isz}")
    unique = bool(np.unique(pos).size == pos.size)
    out = apply(_as_strided, base, Tensor._make(jnp.asarray(pos)), unique=unique)
    if out._alias is not None:
        out._alias.strides = stride
    else:
        from .._strides import set_layout
        set_layout(out, stride)
    return out


# ------------------------------------------------------------------ put, masked_scatter

def _T(dt):
    from .products import _tname
    return _tname(dt)


@defop("put", saves={1: (0, 2)}, grad_name="PutBackward0")
def _put(a, index, src, accumulate):
    flat = a.reshape(-1)
    idx = index.reshape(-1)
    v = src.reshape(-1).astype(a.dtype)
    if accumulate:
        return flat.at[idx].add(v).reshape(a.shape)
    return _set_flat(flat, idx, v).reshape(a.shape)


_set_flat = _scatter_set      # torch's gradients of a set: zero where written, gathered for v


def put(self, index, source, accumulate=False):
    check_index_dtype("put", index)
    if self.dtype is not source.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_T(self.dtype)} and source.dtype = "
                           f"{_T(source.dtype)}")
    if index.numel() != source.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source.numel()}, "
                           f"index.numel() = {index.numel()}")
    n = self.numel()
    iv = _host(index)
    if iv.size and (iv.max() >= n or iv.min() < -n):
        bad = int(iv.max()) if iv.max() >= n else int(iv.min())
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         f"elements.")
    idx = Tensor._make(jnp.asarray(iv % max(n, 1)))
    return apply(_put, self, idx, source, accumulate=bool(accumulate))


def _masked_scatter_checks(self, mask, source, shp):
    # torch's order: shapes (the caller), then the source's dtype, then the mask's dtype
    if self.dtype is not source.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{D.legacy_name(self.dtype)} and {D.legacy_name(source.dtype)}")
    if mask.dtype is not D.bool:
        if mask.dtype is D.uint8:
            import warnings
            warnings.warn("masked_scatter_ received a mask with dtype torch.uint8, this behavior "
                          "is now deprecated,please use a mask with dtype torch.bool instead.",
                          UserWarning, stacklevel=3)
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {D.legacy_name(mask.dtype)}")
    return np.broadcast_to(_host(mask), shp).reshape(-1)


def masked_scatter(self, mask, source):
    _barebones.require("masked_scatter", self)
    # torch broadcasts (mask, self) in that order: the mask is "tensor a" in the size error
    shp = _broadcast_shape([tuple(mask._d.shape), tuple(self._d.shape)])
    m = _masked_scatter_checks(self, mask, source, shp)
    pos = np.nonzero(m)[0]
    if pos.size > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    x = self if tuple(self._d.shape) == shp else self.expand(tuple(shp))
    src = reshape(source, -1)
    if pos.size != src.shape[0]:
        src = narrow(src, 0, 0, int(pos.size))
    return apply(_put, x, Tensor._make(jnp.asarray(pos)), src, accumulate=False)


# ------------------------------------------------------------------ fill_diagonal_

@defop("fill_diagonal", saves=False, grad_name="FillBackward0")
def _fill_diagonal(a, value, wrap):
    if a.ndim == 2:
        r, c = a.shape
        step = c + 1
        flat = a.reshape(-1)
        end = flat.shape[0] if wrap else min(r, c) * c
        idx = jnp.arange(0, end, step)
        if not wrap:
            idx = idx[:min(r, c)]
        return flat.at[idx].set(jnp.asarray(value, a.dtype)).reshape(a.shape)
    i = jnp.arange(a.shape[0])
    return a.at[(i,) * a.ndim].set(jnp.asarray(value, a.dtype))


def fill_diagonal_(self, fill_value, wrap=False):
    n = self._d.ndim
    if n < 2:
        raise RuntimeError("dimensions must larger than 1")
    if n > 2 and len(set(self._d.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    check_inplace(self)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    D.check_scalar(fill_value, self.dtype)
    return commit_inplace(self, apply(_fill_diagonal, self, fill_value, wrap=bool(wrap)))


# ------------------------------------------------------------------ scatter_reduce

def _reduce_vjp_factory(reduce, include_self, dim):
    """torch's scatter_reduce backward for amax/amin: the gradient is shared evenly among the
    self and src elements equal to the result."""

    @jax.custom_vjp
    def f(a, index, src):
        return _scatter_reduce_fwd(a, index, src, reduce, include_self, dim)

    def fwd(a, index, src):
        out = f(a, index, src)
        return out, (a, index, src, out)

    def bwd(res, g):
        a, index, src, out = res
        idx = _grid(index, dim)
        value = out[idx]
        self_is = (a == out)
        if not include_self:
            self_is = self_is & ~jnp.zeros(a.shape, bool).at[idx].set(True)
        src_is = (src == value)
        n = self_is.astype(g.dtype).at[idx].add(src_is.astype(g.dtype))
        gd = g / jnp.where(n == 0, 1, n)
        return (jnp.where(self_is, gd, 0).astype(a.dtype), None,
                jnp.where(src_is, gd[idx], 0).astype(src.dtype))

    f.defvjp(fwd, bwd)
    return f


def _prod_vjp_factory(include_self, dim):
    """scatter_reduce 'prod' with exact gradients (products of the other factors, zeros
    included), where jax only differentiates scatter-multiply at unique indices."""

    @jax.custom_vjp
    def f(a, index, src):
        return _scatter_reduce_fwd(a, index, src, "prod", include_self, dim)

    def fwd(a, index, src):
        return f(a, index, src), (a, index, src)

    def bwd(res, g):
        a, index, src = res
        idx = _grid(index, dim)
        touched = jnp.zeros(a.shape, bool).at[idx].set(True)
        one = jnp.ones((), a.dtype)
        base = a if include_self else jnp.where(touched, one, a)
        nz = jnp.where(base == 0, one, base).at[idx].multiply(jnp.where(src == 0, one, src))
        zeros = (base == 0).astype(jnp.int32).at[idx].add((src == 0).astype(jnp.int32))
        # d out / d self: the product of the scattered sources
        src_nz = jnp.ones(a.shape, a.dtype).at[idx].multiply(jnp.where(src == 0, one, src))
        src_zeros = jnp.zeros(a.shape, jnp.int32).at[idx].add((src == 0).astype(jnp.int32))
        g_self = jnp.where(src_zeros == 0, src_nz, 0) * g
        if not include_self:
            g_self = jnp.where(touched, 0, g)
        # d out / d src[j]: everything else at its position
        pz, pnz = zeros[idx], nz[idx]
        excl = jnp.where(src == 0, jnp.where(pz == 1, pnz, 0),
                         jnp.where(pz == 0, pnz / jnp.where(src == 0, one, src), 0))
        return g_self.astype(a.dtype), None, (excl * g[idx]).astype(src.dtype)

    f.defvjp(fwd, bwd)
    return f


def _scatter_reduce_fwd(a, index, src, reduce, include_self, dim):
    if a.dtype == jnp.bool_:
        # torch reduces bools as integers: a sum is an or, a product an and (in int32)
        out = _scatter_reduce_fwd(a.astype(jnp.int32), index, src.astype(jnp.int32), reduce,
                                  include_self, dim)
        return out != 0
    idx = _grid(index, dim)
    touched = jnp.zeros(a.shape, bool).at[idx].set(True)

    def fill(v):
        return jnp.where(touched, jnp.asarray(v, a.dtype), a)
    if reduce == "sum":
        base = a if include_self else fill(0)
        return base.at[idx].add(src)
    if reduce == "prod":
        base = a if include_self else fill(1)
        return base.at[idx].multiply(src)
    if reduce == "amax":
        base = a if include_self else fill(_lowest(a.dtype))
        return base.at[idx].max(src)
    if reduce == "amin":
        base = a if include_self else fill(_highest(a.dtype))
        return base.at[idx].min(src)
    # mean
    cnt = jnp.zeros(a.shape, a.dtype).at[idx].add(jnp.ones(src.shape, a.dtype))
    base = a if include_self else fill(0)
    tot = base.at[idx].add(src)
    cnt = cnt + (1 if include_self else 0)
    cnt = jnp.where(cnt == 0, 1, cnt)
    if jnp.issubdtype(a.dtype, jnp.integer):
        return jnp.where(touched, tot // cnt, a)
    return jnp.where(touched, tot / cnt, a)


def _lowest(dt):
    return -jnp.inf if jnp.issubdtype(dt, jnp.floating) else jnp.iinfo(dt).min


def _highest(dt):
    return jnp.inf if jnp.issubdtype(dt, jnp.floating) else jnp.iinfo(dt).max


@defop("scatter_reduce", grad_name="ScatterReduceBackward0")
def _scatter_reduce(a, index, src, dim, reduce, include_self):
    if index.size == 0:
        return a
    index = index.astype(jnp.int64) % a.shape[dim]
    src = src[tuple(slice(0, k) for k in index.shape)]
    if reduce in ("max", "min"):
        # (torch's forward takes "max"/"min" for "amax"/"amin"; its backward refuses them)
        out = _scatter_reduce_fwd(a, index, src, "a" + reduce, include_self, dim)
        if not jnp.issubdtype(a.dtype, jnp.inexact):
            return out
        return _refused_backward_of(reduce)(a, src, out)
    if reduce in ("amax", "amin") and jnp.issubdtype(a.dtype, jnp.floating):
        return _reduce_vjp_factory(reduce, include_self, dim)(a, index, src)
    if reduce == "prod" and jnp.issubdtype(a.dtype, jnp.floating):
        return _prod_vjp_factory(include_self, dim)(a, index, src)
    return _scatter_reduce_fwd(a, index, src, reduce, include_self, dim)


def _refused_backward_of(reduce):
    """``out`` (computed from ``a`` and ``src``) whose backward raises torch's error for a
    scatter_reduce named by an alias of amax/amin."""
    @jax.custom_vjp
    def f(a, src, out):
        return out

    def fwd(a, src, out):
        return out, None

    def bwd(_res, _g):
        raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                           f"'amin' but got {reduce}.")

    f.defvjp(fwd, bwd)
    return f


@public(method=True, inplace=True, out=True)
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    if reduce not in ("sum", "prod", "mean", "amax", "amin", "max", "min"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    d = _check_index_dims("scatter", input, dim, index, src)
    if index.numel() and ((reduce == "mean" and input.dtype is D.bool) or (
            reduce in ("amax", "amin", "max", "min") and input.dtype.is_complex)):
        kernel = "mean" if reduce == "mean" else "a" + reduce.lstrip("a")
        raise NotImplementedError(f"\"scatter_gather_tensor_cpu_reduce_{kernel}\" not "
                                  f"implemented for '{D.legacy_name(input.dtype)}'")
    if input._d.ndim == 0:
        return apply(_scatter_reduce, reshape(input, 1), reshape(index, -1), reshape(src, -1),
                     dim=0, reduce=reduce, include_self=bool(include_self)).reshape(())
    return apply(_scatter_reduce, input, index, src, dim=d, reduce=reduce,
                 include_self=bool(include_self))


def _index_reduce_bounds(input, d, index, include_self, first_only=False):
    """torch's CPU kernel's errors for an index out of range, in its order: without the
    input's values it first fills the indexed slices (index_fill_'s checks and words), then
    (more than one dim, some index) it selects slice 0 along ``d`` and checks each index
    (``first_only``: the first, where the kernel's op then refuses the dtype)."""
    n = input._d.ndim
    if not include_self:
        _check_index_bounds("index_fill", input, d, index)
    count = index.numel()
    if n > 1 and count == 0:
        return
    size = input._d.shape[d] if n else 1
    if n > 1 and size == 0:
        raise IndexError(f"select(): index 0 out of range for tensor of size "
                         f"{list(input._d.shape)} at dimension {d}")
    iv = _host(index).reshape(-1)
    if first_only:
        iv = iv[:1]
    if iv.size and (iv.max() >= size or iv.min() < 0):
        raise IndexError("index out of range in self")


@public(method=True, inplace=True, out=True)
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """Reduce ``source``'s slices into ``input`` at ``index`` along ``dim`` (a scatter_reduce
    whose index is ``index`` broadcast over ``source``)."""
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    n = input._d.ndim
    d = _index_func_checks("index_reduce", input, dim, index, source)
    from .factorizations import _deprecated
    _deprecated("index_reduce", "index_reduce() is in beta and the API may change at any time.",
                at="TensorAdvancedIndexing.cpp:1523")
    # torch's CPU kernel: bool and complex inputs reach only the multi-dim path's binary ops
    # with the input's values kept (its other paths dispatch over the real types), where
    # complex has no maximum/minimum and bool no floor division (mean's)
    dt = input.dtype
    name = D.legacy_name(dt)
    if dt is D.bool or dt.is_complex:
        if not include_self:
            raise NotImplementedError(f"\"index_reduce_func_exclude_input_init\" not "
                                      f"implemented for '{name}'")
        if n <= 1:
            raise NotImplementedError(f"\"index_func_\" not implemented for '{name}'")
    op_error = None
    if n > 1 and index.numel():
        if dt.is_complex and reduce in ("amax", "amin"):
            op_error = NotImplementedError(
                f"\"{'maximum' if reduce == 'amax' else 'minimum'}_cpu\" not implemented for "
                f"'{name}'")
        elif dt is D.bool and reduce == "mean":
            _index_reduce_bounds(input, d, index, include_self)
            raise NotImplementedError("\"div_floor_cpu\" not implemented for 'Bool'")
    _index_reduce_bounds(input, d, index, include_self, first_only=op_error is not None)
    if op_error is not None:
        raise op_error
    shp = [1] * max(n, 1)
    shp[d] = -1
    idx = reshape(index, tuple(shp)).expand(tuple(source.shape)) if n else index
    return scatter_reduce(input, d, idx, source, reduce, include_self=include_self)


# ------------------------------------------------------------------ *_scatter

@defop("region_scatter", saves=False, grad_name=lambda kw: kw["name"])
def _region_scatter(a, src, kind, args, name):
    if kind == "select":
        dim, index = args
        key = (slice(None),) * dim + (index,)
        return _set_region(a, src, key)
    if kind == "slice":
        dim, start, stop, step = args
        key = (slice(None),) * dim + (slice(start, stop, step),)
        return _set_region(a, src, key)
    offset, d1, d2 = args
    n = max(min(a.shape[d1] + min(offset, 0), a.shape[d2] - max(offset, 0)), 0)
    i = jnp.arange(n)
    r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
    moved = jnp.moveaxis(a, (d1, d2), (-2, -1))
    moved = moved.at[..., r, c].set(src.astype(a.dtype))
    return jnp.moveaxis(moved, (-2, -1), (d1, d2))


def _set_region(a, src, key):
    return a.at[key].set(jnp.broadcast_to(src.astype(a.dtype), a[key].shape))


def _expect_src(input, src, expected, name):
    if tuple(src.shape) != tuple(expected):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(expected)}")


def select_scatter(input, src, dim, index):
    n = input._d.ndim
    d = _wrap_dim(dim, n)
    size = input._d.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    exp = tuple(s for k, s in enumerate(input.shape) if k != d)
    _expect_src(input, src, exp, "select_scatter")
    return apply(_region_scatter, input, src, kind="select", args=(d, int(index) % size),
                 name="SelectScatterBackward0")


@public(out=True)
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    n = input._d.ndim
    d = _wrap_dim(dim, n)
    sl = slice(start, end, step)
    exp = list(input.shape)
    exp[d] = len(range(*sl.indices(input.shape[d])))
    _expect_src(input, src, exp, "slice_scatter")
    return apply(_region_scatter, input, src, kind="slice", args=(d, start, end, step),
                 name="SliceScatterBackward0")


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    n = input._d.ndim
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    exp = tuple(input.diagonal(offset, d1, d2).shape)
    _expect_src(input, src, exp, "diagonal_scatter")
    return apply(_region_scatter, input, src, kind="diagonal", args=(int(offset), d1, d2),
                 name="DiagonalScatterBackward0")


# ------------------------------------------------------------------ construction from parts

@defop("block_diag", promote="common", saves=False, grad_name="BlockDiagBackward0")
def _block_diag(*xs):
    mats = [x.reshape(1, -1) if x.ndim < 2 else x for x in xs]
    mats = [m.reshape(1, 1) if m.size == 1 and m.ndim == 2 and m.shape == (1, 1) else m
            for m in mats]
    rows = sum(m.shape[0] for m in mats)
    cols = sum(m.shape[1] for m in mats)
    out = jnp.zeros((rows, cols), mats[0].dtype if mats else jnp.float32)
    r = c = 0
    for m in mats:
        out = jax.lax.dynamic_update_slice(out, m.astype(out.dtype), (r, c))
        r += m.shape[0]
        c += m.shape[1]
    return out


def block_diag(*tensors):
    for i, t in enumerate(tensors_only(tensors)):
        if t._d.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t._d.ndim} dimensions")
    if not tensors:
        return Tensor._make(jnp.zeros((1, 0), D.get_default_dtype().np))
    return apply(_block_diag, *tensors)


def cartesian_prod(*tensors):
    for t in tensors_only(tensors):
        if t._d.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, -1) for g in grids], 1)


@defop("index_rows", saves=False, grad_name="IndexBackward0")
def _index_rows(a, idx):
    return a[idx]


def combinations(input, r=2, with_replacement=False):
    if input._d.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return Tensor._make(jnp.zeros((0,), input._d.dtype))
    n = input.shape[0]
    it = (itertools.combinations_with_replacement if with_replacement else
          itertools.combinations)(range(n), r)
    idx = np.array(list(it), np.int64).reshape(-1, r)
    return apply(_index_rows, input, Tensor._make(jnp.asarray(idx)))


def _tri_indices(row, col, offset, lower, dtype):
    for name, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{name} must be non-negative, got{v}")
    if dtype is not None and D.to_dtype(dtype) not in (D.int32, D.int64):
        raise NotImplementedError(f"\"{'tril' if lower else 'triu'}_indices\" not implemented "
                                  f"for '{D.legacy_name(D.to_dtype(dtype))}'")
    r, c = np.indices((row, col)) if row * col else (np.zeros((0, 0), int),) * 2
    keep = (c - r <= offset) if lower else (c - r >= offset)
    out = np.stack([r[keep], c[keep]]) if row * col else np.zeros((2, 0), np.int64)
    from .._creation import _dt
    return Tensor._make(jnp.asarray(out, _dt(dtype, D.int64).np))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices(row, col, offset, True, dtype)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    return _tri_indices(row, col, offset, False, dtype)


def diagflat(input, offset=0):
    from .rearrange import diag
    return diag(reshape(input, -1), offset)


@defop("unravel_index", differentiable=False)
def _unravel_index(idx, shape):
    total = int(math.prod(shape))
    rem = jnp.remainder(idx.astype(jnp.int64), total) if total else idx.astype(jnp.int64)
    outs = []
    for n in reversed(shape):
        outs.append(jnp.remainder(rem, n))
        rem = rem // n
    return tuple(reversed(outs))


def unravel_index(indices, shape):
    if not _is_t(indices) or indices.dtype.category != D._INT:
        dt = indices.dtype if _is_t(indices) else type(indices).__name__
        raise TypeError(f"expected 'indices' to be integer dtype, but got {dt}")
    shape = (shape,) if isinstance(shape, int) else tuple(int(n) for n in shape)
    if any(n < 0 for n in shape):
        raise ValueError("'shape' cannot have negative values, but got "
                         f"{tuple(shape)}")
    if not shape:
        return ()
    out = apply(_unravel_index, indices, shape=shape)
    return out if isinstance(out, tuple) else (out,)


@defop("nonzero_static", differentiable=False)
def _nonzero_static(a, size, fill_value):
    if a.ndim == 0:
        return jnp.zeros((size, 0), jnp.int64)
    return jnp.stack(jnp.nonzero(a, size=size, fill_value=fill_value), axis=1).astype(jnp.int64)


def nonzero_static(input, *, size, fill_value=-1):
    """The first ``size`` nonzero positions (padded with ``fill_value``): a static shape."""
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer")
    return apply(_nonzero_static, input, size=int(size), fill_value=int(fill_value))


# ------------------------------------------------------------------ splits and small aliases

def _dir_split(input, spec, dim, name, need):
    if input._d.ndim < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension, but "
                           f"got a tensor with {input._d.ndim} dimensions!")
    if isinstance(spec, int):
        size = input.shape[dim]
        if spec == 0 or size % spec:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {size} is not divisible by the split_size "
                               f"{spec}!")
    return tensor_split(input, spec, dim)


def hsplit(input, indices_or_sections):
    return _dir_split(input, indices_or_sections, 0 if input._d.ndim == 1 else 1, "hsplit", 1)


def vsplit(input, indices_or_sections):
    return _dir_split(input, indices_or_sections, 0, "vsplit", 2)


def dsplit(input, indices_or_sections):
    return _dir_split(input, indices_or_sections, 2, "dsplit", 3)


@defop("adjoint", saves=False, view=True, grad_name="TransposeBackward0")
def _adjoint(a):
    return jnp.swapaxes(a, -1, -2).conj()


_ADJOINT_0D_AT = {"Tensor.mH": "TensorShape.cpp:4382", "Tensor.H": "TensorShape.cpp:4335",
                  "adjoint()": "TensorShape.cpp:4390"}


def _adjoint_of(input, call, name):
    """The conjugate transpose of the last two dims (``call``: torch's name in its error,
    ``name`` in its warning); a 0-D tensor's is its conjugate, with torch's warning (once)."""
    n = input._d.ndim
    if n == 1:
        raise RuntimeError(f"{call} is only supported on matrices or batches of matrices. Got "
                           f"1-D tensor.")
    if n == 0:
        from .factorizations import _deprecated
        _deprecated(name + " 0-D", f"{name} is deprecated on 0-D tensors. Consider using "
                                   f"x.conj().",
                    at=_ADJOINT_0D_AT[name])
        return input.conj()
    return apply(_adjoint, input)


def adjoint(input):
    return _adjoint_of(input, "tensor.adjoint()", "adjoint()")


def _mH(self):
    return _adjoint_of(self, "tensor.mH", "Tensor.mH")


def _H(self):
    if self._d.ndim == 1 or self._d.ndim > 2:
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                           f"{self._d.ndim}-D tensor." + (
                               " For batches of matrices, consider using tensor.mH"
                               if self._d.ndim > 2 else ""))
    return _adjoint_of(self, "tensor.H", "Tensor.H")


def ravel(input):
    return reshape(input, -1)


def narrow_copy(input, dim, start, length):
    return narrow(input, dim, start, length).clone()


@defop("sum_to_size", saves=False, grad_name="SumBackward1")
def _sum_to_size(a, shape):
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(shape)
                                      if n == 1 and a.shape[lead + i] != 1)
    out = jnp.sum(a, axis=axes, keepdims=True) if axes else a
    return out.reshape(shape)


def sum_to_size(self, *size):
    size = required(size, "sum_to_size", "size", self._d.ndim == 0)
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    shp = tuple(self.shape)
    ok = len(size) <= len(shp) and all(s == t or s == 1 for s, t in
                                       zip(size[::-1], shp[::-1]))
    if not ok:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shp)}}}.")
    return apply(_sum_to_size, self, shape=tuple(int(s) for s in size))


methods(as_strided=as_strided, storage_offset=_storage_offset,
        nonzero_static=nonzero_static, unfold=unfold, put=put, masked_scatter=masked_scatter,
        adjoint=adjoint, ravel=ravel, narrow_copy=narrow_copy,
        sum_to_size=sum_to_size, hsplit=hsplit, vsplit=vsplit, dsplit=dsplit,
        diagflat=diagflat, fill_diagonal_=fill_diagonal_, select_scatter=select_scatter,
        slice_scatter=slice_scatter, diagonal_scatter=diagonal_scatter,
        mH=property(_mH), H=property(_H))
inplace_methods(put=put)


def _masked_scatter_(self, mask, source):
    # the in-place form checks the source's dtype, then expands the mask to self's shape
    # (torch's expand error), then checks the mask's dtype
    shp = tuple(self._d.shape)
    if self.dtype is source.dtype:
        mask = mask.expand(shp)
    _masked_scatter_checks(self, mask, source, shp)
    return _masked_scatter_inplace(self, mask, source)


_masked_scatter_inplace = inplace_of(masked_scatter, "masked_scatter")
methods(masked_scatter_=_masked_scatter_)


# ------------------------------------------------------------------ storage identity and set_

_CPP_TYPE_NAMES = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
                   "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
                   "bool": "bool", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
                   "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


class UntypedStorage:
    """What ``Tensor.untyped_storage()`` returns: the storage's identity and size (torch's
    ``data_ptr()``, ``nbytes()``, ``size()``, ``device``), for telling whether tensors share
    memory, its bytes read (``storage[i]``, ``storage[a:b]``, ``torch.asarray(storage)``) and a
    file's (``from_file``). torchlike's storage is its root tensor's jax array, which has no
    bytes to write in place: ``resize_``, ``copy_``, ``fill_`` and the like raise."""

    __module__ = "torchlike.storage"
    __slots__ = ("_root",)

    def __init__(self, root):
        self._root = root

    def nbytes(self):
        r = self._root
        return int(r._d.size) * r.dtype.itemsize

    size = nbytes

    def __len__(self):
        return self.nbytes()

    def element_size(self):
        return 1

    def data_ptr(self):
        from .._storage import base_address
        return base_address(self._root)

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0):
        """A storage of the first ``nbytes`` bytes of a file (safetensors' loader reads its
        files so), read now: a ``shared`` storage, whose writes would reach the file, is
        refused."""
        if shared:
            raise NotImplementedError("torchlike.UntypedStorage.from_file(shared=True): a "
                                      "torchlike storage is an immutable array; writes through "
                                      "it cannot reach the file")
        import os
        size = os.path.getsize(filename)
        if size < nbytes:
            raise RuntimeError(f"file <{filename}> size <{size}> is smaller than the required "
                               f"mapping size <{nbytes}>")
        from .._creation import from_numpy
        return cls(from_numpy(np.fromfile(filename, dtype=np.uint8, count=nbytes)))

    def untyped(self):
        return self

    def _bytes(self):
        """The storage's bytes as a 1-D uint8 tensor viewing it."""
        r = self._root.reshape(-1)
        return r if r.dtype is D.uint8 else r.view(D.uint8)

    def __getitem__(self, idx):
        """A byte (an int), or for a slice the storage of those bytes (viewing this one)."""
        if isinstance(idx, slice):
            return UntypedStorage(self._bytes()[idx])
        return int(self._bytes()[idx])

    @property
    def device(self):
        return self._root.device

    @property
    def is_cuda(self):
        return self._root.is_cuda

    def is_shared(self):
        return False

    def __repr__(self):
        return (f"torchlike.UntypedStorage of {self.nbytes()} bytes on {self.device} "
                f"(data_ptr {self.data_ptr():#x})")

    def __getattr__(self, name):
        if name.startswith("_"):
            # (a private name torch's storage may or may not have: ``hasattr`` is False)
            raise AttributeError(f"'UntypedStorage' object has no attribute {name!r}")
        raise NotImplementedError(
            f"torchlike: UntypedStorage.{name} is not available: a torchlike storage is an "
            f"immutable jax array owned by a tensor, with no bytes to write or resize; it "
            f"offers data_ptr(), nbytes(), size(), element_size(), device, is_shared(), its "
            f"bytes (storage[i], storage[a:b], torch.asarray(storage)) and from_file()")


class TypedStorage:
    """What ``Tensor.storage()`` returns (torch's deprecated typed storage): the untyped storage
    read as elements of the tensor's dtype: ``size()``/``len``, ``dtype``, ``device``,
    ``data_ptr()``, ``element_size()``, ``nbytes()``, ``tolist()``, ``untyped()``."""

    __module__ = "torchlike.storage"
    __slots__ = ("_untyped", "dtype")

    def __init__(self, untyped, dtype):
        self._untyped, self.dtype = untyped, dtype

    def size(self):
        return self._untyped.nbytes() // self.dtype.itemsize

    def __len__(self):
        return self.size()

    def element_size(self):
        return self.dtype.itemsize

    def nbytes(self):
        return self._untyped.nbytes()

    def data_ptr(self):
        return self._untyped.data_ptr()

    @property
    def device(self):
        return self._untyped.device

    def is_shared(self):
        return False

    def untyped(self):
        return self._untyped

    def tolist(self):
        return np.asarray(self._untyped._root.detach()).reshape(-1).tolist()

    def type(self):
        return "torch." + D.legacy_name(self.dtype) + "Storage"

    def __repr__(self):
        return f"torchlike.TypedStorage(dtype={self.dtype}, size {self.size()})"


_warned_typed = [False]


def _storage(self):
    """``Tensor.storage()``: torch's deprecated typed storage (warning once, as torch)."""
    if not _warned_typed[0]:
        _warned_typed[0] = True
        import warnings
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                      "UntypedStorage will be the only storage class. This should only matter "
                      "to you if you are using storages directly.  To access UntypedStorage "
                      "directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=2)
    return TypedStorage(_untyped_storage(self), self.dtype)


def _data_ptr(self):
    from .._storage import base_address, storage_root
    root = storage_root(self)
    base = base_address(root)
    return base + _storage_offset(self) * self.dtype.itemsize if base else 0


def _untyped_storage(self):
    from .._storage import storage_root
    return UntypedStorage(storage_root(self))


def _check_set_dtype(self, src_dtype):
    if src_dtype is not self.dtype:
        raise RuntimeError(f"Could not set tensor of type {_CPP_TYPE_NAMES.get(src_dtype.name, src_dtype.name)}"
                           f" to a tensor of type {_CPP_TYPE_NAMES.get(self.dtype.name, self.dtype.name)}")


@jax.custom_vjp
def _set_identity(old, src):
    return src


def _set_fwd(old, src):
    return src, None


def _set_bwd(res, g):
    raise RuntimeError("derivative for set_ is not implemented")


_set_identity.defvjp(_set_fwd, _set_bwd)


@defop("set_", saves=False, grad_name="torch::autograd::NotImplemented")
def _set_node(old, src):
    return _set_identity(old, src)


def set_(self, source=None, storage_offset=None, size=None, stride=None):
    """torch's ``Tensor.set_``: ``set_()`` empties ``self``; ``set_(tensor)`` makes ``self``
    share ``tensor``'s storage, sizes and strides (writes through either are seen by both);
    ``set_(tensor_or_storage, offset, size, stride)`` reads that storage as ``as_strided``
    does, when the positions are distinct (else NotImplementedError: torchlike cannot alias
    one storage element twice)."""
    from .. import _strides
    from .._storage import rebind, rebind_empty, storage_root, _LEAF_INPLACE
    from ..autograd import grad_mode as _gm
    grad = _gm.is_grad_enabled()
    if grad and self.requires_grad and self.grad_fn is None:
        raise RuntimeError(_LEAF_INPLACE)
    if source is None:
        if storage_offset is not None or size is not None or stride is not None:
            raise TypeError("set_(): source is required with storage_offset, size, stride")
        return rebind_empty(self, _strides.strides)
    if isinstance(source, UntypedStorage):
        root = source._root
        if root.dtype is not self.dtype:
            raise NotImplementedError(
                f"torchlike: set_(storage) reading a {root.dtype} storage as "
                f"{self.dtype}: torchlike storages cannot be reinterpreted as another dtype")
        if storage_offset is None:
            storage_offset, size, stride = 0, (int(root._d.size),), (1,)
        src = root
    elif isinstance(source, Tensor):
        _check_set_dtype(self, source.dtype)
        src = source
    else:
        raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not "
                        f"{type(source).__name__}")
    if storage_offset is not None:
        if size is None:
            raise TypeError("set_(): size is required with storage_offset")
        size = tuple(int(n) for n in size)
        if stride is None or len(stride) == 0:
            # torch's resize without strides: unchanged when the sizes are, else contiguous
            from .._strides import contiguous_strides, strides as _st
            stride = _st(self) if tuple(self.shape) == size else contiguous_strides(size)
        stride = tuple(int(n) for n in stride)
        base = storage_root(src) if isinstance(source, Tensor) else src
        off = int(storage_offset)
        need = off + sum((n - 1) * st for n, st in zip(size, stride)) + 1 \
            if all(n > 0 for n in size) else 0
        if need > int(base._d.size):
            raise NotImplementedError(
                f"torchlike: set_ with storage offset {off}, sizes {list(size)} and strides "
                f"{list(stride)} needs {need} elements but the storage holds "
                f"{int(base._d.size)}: torch grows the storage (new elements uninitialized); "
                f"torchlike storages cannot grow")
        src = as_strided(base, size, stride, off)
        if src._alias is None:
            raise NotImplementedError(
                f"torchlike: set_ with sizes {list(size)} and strides {list(stride)} places "
                f"several elements at one storage position: torchlike views cannot alias one "
                f"element twice (as_strided is a copy then)")
    node = None
    if grad and (self.requires_grad or src.requires_grad):
        node = apply(_set_node, self, src)
    rebind(self, src, _strides.strides)
    if node is not None and node.grad_fn is not None:
        from .._storage import _rebase
        _rebase(self, node.grad_fn, 0)
    return self


def _is_set_to(self, tensor):
    """torch's ``is_set_to``: the same storage, storage offset, sizes and strides."""
    from .._storage import storage_root
    from .._strides import strides
    if self is tensor:
        return True
    return (storage_root(self) is storage_root(tensor) and self.dtype is tensor.dtype
            and tuple(self.shape) == tuple(tensor.shape)
            and _storage_offset(self) == _storage_offset(tensor)
            and strides(self) == strides(tensor))


methods(set_=set_, data_ptr=_data_ptr, untyped_storage=_untyped_storage, storage=_storage,
        is_set_to=_is_set_to)
