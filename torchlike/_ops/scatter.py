"""Gathering and scattering: gather, scatter, scatter_add, index_select/add/copy/fill, take,
take_along_dim, masked_select, masked_fill, nonzero, argwhere, searchsorted, bucketize."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _barebones, _dtype as D, _float8
from .. import _fused
from .._registry import apply, defop
from .._tensor import Tensor, _wrap_dim
from ._surface import inplace_of, method, public
from .view import _broadcast_shape, _check_int_index, _host, _is_t, broadcast_to

__all__ = ['gather', 'scatter', 'scatter_add', 'index_select', 'masked_select',
           'masked_fill', 'take', 'take_along_dim', 'nonzero', 'argwhere', 'searchsorted',
           'bucketize', 'index_add', 'index_fill', 'index_copy']


# ------------------------------------------------------------------ gather, scatter

def _grid(index, dim):
    """Index arrays addressing, for every element of ``index``, its position with ``dim``
    replaced by the index value (the addressing of torch's gather/scatter)."""
    idx = []
    for k in range(index.ndim):
        if k == dim:
            idx.append(index)
        else:
            shape = [1] * index.ndim
            shape[k] = index.shape[k]
            idx.append(jnp.arange(index.shape[k]).reshape(shape))
    return tuple(idx)


@defop("gather", saves={1: (0,)}, grad_name="GatherBackward0")
def _gather(a, index, dim):
    if index.size == 0:
        return jnp.zeros(index.shape, a.dtype)
    if a.ndim == 0:
        return jnp.broadcast_to(a, index.shape)
    return a[_grid(index, dim)]


# torch's index dtypes per op: int32 and int64 ("int") or int64 only ("long"), and its error
_INDEX_DTYPES = {
    "gather": ("int", RuntimeError, "gather(): Expected dtype int32/int64 for index"),
    "scatter": ("int", RuntimeError, "scatter(): Expected dtype int32/int64 for index"),
    "index_select": ("int", RuntimeError,
                     "index_select(): Expected dtype int32 or int64 for index"),
    "index_add": ("int", RuntimeError,
                  "index_add_(): Expected dtype int32/int64 for index but got: {}"),
    "index_reduce": ("int", RuntimeError,
                     "index_reduce_(): Expected dtype int32/int64 for index but got: {}"),
    "index_fill": ("long", IndexError, "index_fill_(): Expected dtype int64 for index."),
    "index_copy": ("long", RuntimeError,
                   "index_copy_(): Expected a long tensor for index, but got {}"),
    "take": ("long", RuntimeError, "take(): Expected a long tensor for index, but got {}"),
    "put": ("long", RuntimeError, "put_(): Expected a long tensor for index, but got {}"),
    "take_along_dim": ("long", RuntimeError,
                       "torch.take_along_dim(): dtype of indices should be Long but got {}"),
}


def check_index_dtype(name, index):
    """torch's error for an index tensor of a dtype ``name`` does not take."""
    kind, err, msg = _INDEX_DTYPES[name]
    if not _is_t(index):
        return
    ok = (D.int64,) if kind == "long" else (D.int64, D.int32)
    if index.dtype not in ok:
        raise err(msg.format(D.legacy_name(index.dtype)))


def _check_index_dims(name, input, dim, index, src=None):
    """gather/scatter's checks of ``index`` (none for an empty one: torch returns early)."""
    n = input._d.ndim
    d = _wrap_dim(dim, n)
    if _is_t(index) and index.numel() == 0:
        return d
    _check_int_index(index, name)
    check_index_dtype(name, index)
    if max(index._d.ndim, 1) != max(n, 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as "
                           f"{'input' if name == 'gather' else 'self'} tensor")
    if n:
        for k in range(n):
            if k != d and index._d.shape[k] > input._d.shape[k]:
                if name == "gather":
                    raise RuntimeError(
                        f"Size does not match at dimension {k} expected index "
                        f"{list(index._d.shape)} to be no larger than self "
                        f"{list(input._d.shape)} apart from dimension {d}")
                if src is None:             # (scatter's shape check words it without src)
                    raise RuntimeError(
                        f"Expected index {list(index._d.shape)} to be no larger than self "
                        f"{list(input._d.shape)} apart from dimension {d}")
                src_too_small = True
                break
        else:
            src_too_small = src is not None and any(
                index._d.shape[k] > src._d.shape[k] for k in range(n))
        if src_too_small:
            raise RuntimeError(
                f"Expected index {list(index._d.shape)} to be no larger than self "
                f"{list(input._d.shape)} apart from dimension {d} and to be no larger size "
                f"than src {list(src._d.shape)}")
    size = input._d.shape[d] if n else 1

    def error(v):
        # torch refuses negative indices here (jax would wrap them)
        return (RuntimeError(f"index {int(v[1])} is out of bounds for dimension {d} with size "
                             f"{size}") if v[0] else None)
    # (fused eager: a computed index is checked when its segment runs, or not at all where it
    # is known to be in range)
    if _is_t(index) and _fused.defer_check(_out_of_range, [_fused.raw(index), size], error,
                                           within=(0, size - 1)):
        return d
    e = error(_out_of_range(_host(index), size))
    if e is not None:
        raise e
    return d


def _out_of_range(iv, size):
    """(an index is outside ``[0, size)``, the one torch names: the largest if one is too
    large, else the smallest), numpy or jax."""
    xp = np if isinstance(iv, np.ndarray) else jnp
    hi, lo = iv.max(), iv.min()
    return xp.stack([(hi >= size) | (lo < 0), xp.where(hi >= size, hi, lo)])


@public(method=True, out=True)
def gather(input, dim, index, *, sparse_grad=False):
    d = _check_index_dims("gather", input, dim, index)
    return apply(_gather, input, index, dim=d)


@jax.custom_vjp
def _scatter_set(a, idx, src):
    return a.at[idx].set(src)


def _scatter_set_fwd(a, idx, src):
    return a.at[idx].set(src), idx


def _scatter_set_bwd(idx, g):
    # torch: the input's gradient is zero where written, the source's the gathered gradient
    # (every duplicate gets it)
    return g.at[idx].set(0), None, g[idx]


_scatter_set.defvjp(_scatter_set_fwd, _scatter_set_bwd)


def _scatter_name(kw):
    return {"set": "ScatterBackward0", "value": "ScatterBackward1",
            "add": "ScatterAddBackward0"}.get(kw["mode"], "ScatterReduceBackward0")


@defop("scatter", saves={1: (0, 2)}, grad_name=_scatter_name)
def _scatter(a, index, src, dim, mode):
    if index.size == 0:
        return a
    if a.ndim == 0:
        # (a 0-dim input scatters as one element: every index addresses it)
        src = src if mode == "value" else jnp.reshape(src, (-1,))
        return _scatter_into(a.reshape(1), index.reshape(-1), src, 0, mode).reshape(())
    return _scatter_into(a, index, src, dim, mode)


def _scatter_into(a, index, src, dim, mode):
    index = index.astype(jnp.int64) % a.shape[dim]
    idx = _grid(index, dim)
    if mode == "value":
        # (a conversion, not a construction: a complex value is nonzero as a bool if either
        # part is, where jnp.asarray(1j, bool) reads its real part)
        return a.at[idx].set(jnp.asarray(src).astype(a.dtype))
    sl = src[tuple(slice(0, n) for n in index.shape)].astype(a.dtype)
    if mode == "set":
        return _scatter_set(a, idx, sl)
    if a.dtype == jnp.bool_:
        # torch's bool add is an or, its multiply an and: counted in int32
        return _scatter_into(a.astype(jnp.int32), index, sl.astype(jnp.int32), dim, mode) != 0
    if mode == "add":
        return a.at[idx].add(sl)
    if mode == "multiply":
        return a.at[idx].multiply(sl)
    raise ValueError(mode)


def _scatter_impl(input, dim, index, src=None, value=None, reduce=None, add=False):
    if src is None and value is None:
        raise TypeError("scatter() missing required argument 'src' or 'value'")
    if src is not None and not _is_t(src):
        value, src = src, None
    if src is not None:
        if src.dtype is not input.dtype:
            raise RuntimeError(f"scatter(): Expected self.dtype to be equal to src.dtype")
        if index.numel() and src._d.ndim != input._d.ndim and \
                src._d.ndim != max(input._d.ndim, 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src "
                               "tensor")
    d = _check_index_dims("scatter", input, dim, index, src)
    if add:
        mode = "add"
    elif reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        if src is not None:
            from .factorizations import _deprecated
            _deprecated("scatter_reduce_src", "The reduce argument of torch.scatter with Tensor "
                        "src is deprecated and will be removed in a future PyTorch release. Use "
                        "torch.scatter_reduce instead for more reduction options.",
                        at="TensorAdvancedIndexing.cpp:225")
        mode = reduce
    else:
        mode = "set" if src is not None else "value"
    if value is not None:
        if _is_t(value):
            value = value.item()
        if index.numel():
            D.check_scalar(value, input.dtype)
        if mode in ("add", "multiply"):
            from .._creation import full
            src = full(tuple(index.shape), value, dtype=input.dtype)
            return apply(_scatter, input, index, src, dim=d, mode=mode)
        return apply(_scatter, input, index, value, dim=d, mode="value")
    return apply(_scatter, input, index, src, dim=d, mode=mode)


@public(method=True, inplace=True, out=True)
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    return _scatter_impl(input, dim, index, src, value, reduce)


@public(method=True, inplace=True, out=True)
def scatter_add(input, dim, index, src):
    return _scatter_impl(input, dim, index, src, add=True)


# ------------------------------------------------------------------ index_select and friends

@defop("index_select", saves={1: (0,)}, grad_name="IndexSelectBackward0")
def _index_select(a, index, dim):
    if a.ndim == 0:
        return a
    return jnp.take(a, index.reshape(-1), axis=dim)


def _check_vector_index(name, input, dim, index, source=None):
    n = input._d.ndim
    if name == "index_fill" and _is_t(index):
        check_index_dtype(name, index)      # (torch's index_fill_ checks it before the dim)
    d = _wrap_dim(dim, n)
    if not _is_t(index):
        raise IndexError(f"{name}(): Expected dtype int32/int64 for index")
    if name == "index_copy":
        _index_copy_checks(input, d, index, source)
    elif name == "index_fill":
        if index._d.ndim > 1:
            raise RuntimeError("Index has to be a vector/scalar")
    else:
        check_index_dtype(name, index)
        if index._d.ndim > 1:
            raise IndexError(f"{name}(): Index is supposed to be a vector")
        if n == 0 and index.numel() != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got "
                               f"{index.numel()} value(s)")
    return _check_index_bounds(name, input, d, index)


def _index_func_checks(name, input, dim, index, source):
    """index_add_'s and index_reduce_'s checks of their arguments (torch's
    ``index_func_meta_impl``, in its order); returns the wrapped dim."""
    n = input._d.ndim
    d = _wrap_dim(dim, n)
    if not _is_t(index):
        raise IndexError(f"{name}(): Expected dtype int32/int64 for index")
    if index._d.ndim > 1:
        raise IndexError(f"{name}_(): Index is supposed to be a vector, but got dim: "
                         f"{index._d.ndim} with type: {D.legacy_name(index.dtype)} and size: "
                         f"{list(index._d.shape)}")
    check_index_dtype(name, index)
    if source.dtype is not input.dtype:
        raise _source_dtype_error(name, input, source)
    ns = source._d.ndim
    if not (d == 0 or d < ns):
        raise RuntimeError(f"{name}_(): Indexing dim {d} is out of bounds of the source tensor "
                           f"with dim {ns}")
    count = index.numel()
    if count != (source._d.shape[d] if ns else 1):
        if not ns:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        raise RuntimeError(f"{name}_(): Number of indices ({count}) should be equal to "
                           f"source.size(dim): ({source._d.shape[d]}), for dim: {d}")
    own, theirs = list(input._d.shape), list(source._d.shape)
    if ns and n:
        del own[d], theirs[d]
    if own != theirs:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(input._d.shape)} "
                           f"source.shape = {list(source._d.shape)}")
    return d


def _index_copy_checks(input, d, index, source):
    """index_copy_'s checks of its arguments (torch's order)."""
    n, ns, count = input._d.ndim, source._d.ndim, index.numel()
    if index._d.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got "
                         f"{index._d.ndim})")
    if ns == 0 and count != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element "
                         f"(got {count})")
    if ns != n and ns and n:
        raise IndexError(f"index_copy_(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({ns}), destination "
                         f"dimensionality ({n})")
    check_index_dtype("index_copy", index)
    if source.dtype is not input.dtype and not _autocast_promotes("index_copy", input, source):
        raise _source_dtype_error("index_copy", input, source)
    own, theirs = list(input._d.shape), list(source._d.shape)
    if own:
        del own[d]
    if theirs:
        del theirs[d]
    if own != theirs:
        raise RuntimeError(f"index_copy_(): Source/destination tensor must have same slice "
                           f"shapes. Destination slice shape: {' '.join(map(str, own))} at "
                           f"dimension {d} and source slice shape: "
                           f"{' '.join(map(str, theirs))} at dimension 0.")
    if ns and count != source._d.shape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({count}) should be equal to "
                         f"source.size(dim) ({source._d.shape[d]})")


def _check_index_bounds(name, input, d, index, scatter_path=True):
    """torch's error for an index out of range along ``d`` (each op's own words); returns
    ``d``. ``scatter_path``: whether index_add's kernel hands its first and last dims to
    scatter_add_ (an alpha of 1 and an int64 index), whose error is worded differently."""
    n = input._d.ndim
    size = input._d.shape[d] if n else 1
    if name in ("index_copy", "index_fill") and n and input._d.size == 0 and index.numel():
        _empty_self_kernel(input, d, index.numel())
        return d            # (a kernel that iterates over nothing reads no index)
    iv = _host(index)
    lo = -size if name == "index_fill" else 0    # torch's index_fill wraps negative indices
    if name == "index_select" and n > 1 and iv.size and size == 0 \
            and input._d.size == 0:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    if name == "index_add" and n > 1 and input._d.size == 0:
        return d            # (torch's index_add of an empty tensor checks no index)
    if iv.size and (iv.max() >= size or iv.min() < lo):
        flat = iv.reshape(-1)
        bad = int(flat[(flat >= size) | (flat < lo)][0])     # (the first, in order)
        # torch's CPU kernels: index_select's dim-1 fast path (and its check of an empty
        # self) and index_add's TensorIterator path (the first and last dims) word it so
        if name == "index_select" and n > 1 and (d == 1 or input._d.size == 0):
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} "
                               f"axis_dim={size}")
        if name == "index_add" and n > 1 and d in (0, n - 1) and scatter_path:
            raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size "
                               f"{size}")
        if name in ("index_select", "index_add"):
            raise IndexError("index out of range in self")
        if name == "index_fill":
            raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size}")
        raise IndexError(f"{name}_(): index {bad} is out of bounds for dimension {d} with size "
                         f"{size}")
    return d


def _empty_self_kernel(input, d, count):
    """index_copy_'s and index_fill_'s CPU kernels on an input with no elements: they view it
    with ``count`` positions (stride 0) along ``d``, which a storage of size 0 cannot hold
    unless another dim is empty too (then the kernel iterates over nothing and returns)."""
    sizes = list(input._d.shape)
    sizes[d] = count
    if 0 in sizes:
        return
    strides = list(input.stride())
    strides[d] = 0
    itemsize = input.element_size()
    need = (1 + sum((s - 1) * st for s, st in zip(sizes, strides))) * itemsize
    raise RuntimeError(f"setStorage: sizes {sizes}, strides {strides}, storage offset 0, and "
                       f"itemsize {itemsize} requiring a storage size of {need} are out of "
                       f"bounds for storage of size 0")


def _autocast_promotes(name, input, source):
    """CPU autocast runs index_copy in the widest floating type of its operands."""
    if name != "index_copy" or not (input.dtype.is_floating_point
                                    and source.dtype.is_floating_point):
        return False
    from ..amp.autocast_mode import is_autocast_enabled
    return is_autocast_enabled("cpu")


def _source_dtype_error(name, input, source):
    """torch's index_add_/index_reduce_/index_copy_ refusal of a source of another dtype."""
    a, b = D.legacy_name(input.dtype), D.legacy_name(source.dtype)
    if name == "index_copy":
        return RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                            f"but got (self) {a} and (source) {b}")
    return RuntimeError(f"{name}_(): self ({a}) and source ({b}) must have the same scalar "
                        f"type")


@public(method=True, out=True)
def index_select(input, dim, index):
    d = _check_vector_index("index_select", input, dim, index)
    return apply(_index_select, input, index, dim=d)


@defop("index_add", saves={1: (0, 2)}, grad_name="IndexAddBackward0")
def _index_add(a, index, src, dim, alpha, mode):
    if a.ndim == 0:
        # (a 0-dim input is written as one element: every index addresses it)
        src = src if mode == "fill" else jnp.reshape(src, (-1,))
        return _index_write(a.reshape(1), index, src, 0, alpha, mode).reshape(())
    return _index_write(a, index, src, dim, alpha, mode)


def _index_write(a, index, src, dim, alpha, mode):
    idx = (slice(None),) * dim + (index.reshape(-1),)
    if mode == "add":
        if a.dtype == jnp.bool_:
            # torch's bool add is an or (counted in int32)
            return _index_write(a.astype(jnp.int32), index, src.astype(jnp.int32), dim,
                                int(alpha), mode) != 0
        return a.at[idx].add((src * alpha).astype(a.dtype) if alpha != 1 else src.astype(a.dtype))
    if mode == "fill":
        idx = (slice(None),) * dim + (index.reshape(-1) % max(a.shape[dim], 1),)
        return a.at[idx].set(jnp.asarray(src, a.dtype))
    return a.at[idx].set(src.astype(a.dtype))


@public(method=True, inplace=True, out=True)
def index_add(input, dim, index, source, *, alpha=1):
    d = _index_func_checks("index_add", input, dim, index, source)
    # torch's CPU kernel hands the first and last dims to scatter_add_ only for an alpha of 1
    # (a bool alpha is never 1 to it) and an int64 index, and words its errors accordingly
    scatter_path = (not isinstance(alpha, bool) and alpha == 1 and index.dtype is D.int64
                    and D.complex32 not in (input.dtype, source.dtype))
    _check_index_bounds("index_add", input, d, index, scatter_path)
    # (torch's alpha in the input's dtype: checked, an integer's truncated, a bool's a bool)
    alpha = D.host_scalar(D.check_scalar(alpha, input.dtype), input.dtype).item()
    return apply(_index_add, input, index, source, dim=d, alpha=alpha, mode="add")


@public(method=True, inplace=True, out=True)
def index_copy(input, dim, index, source):
    d = _check_vector_index("index_copy", input, dim, index, source)
    return apply(_index_add, input, index, source, dim=d, alpha=1, mode="copy")


@public(method=True, inplace=True)
def index_fill(input, dim, index, value):
    if _is_t(value) and value._d.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._d.ndim} dimension(s).")
    d = _check_vector_index("index_fill", input, dim, index)
    if _is_t(value):
        value = value.item()
    if isinstance(value, complex) and not input.dtype.is_complex:
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not "
                           "supported")
    _check_fill_value(input, value)
    return apply(_index_add, input, index, value, dim=d, alpha=1, mode="fill")


@defop("take", saves={1: (0,)}, grad_name="TakeBackward0")
def _take(a, index):
    return jnp.take(a.reshape(-1), index)


@public(method=True, out=True)
def take(input, index):
    check_index_dtype("take", index)
    _float8.require("take_cpu", input)
    n = input.numel()
    iv = _host(index)
    if iv.size and (iv.max() >= n or iv.min() < -n):
        bad = int(iv.max()) if iv.max() >= n else int(iv.min())
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         f"elements.")
    return apply(_take, input, Tensor._make(jnp.asarray(iv % max(n, 1))))


@public(method=True, out=True)
def masked_select(input, mask):
    if mask.dtype is not D.bool:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask")
    _barebones.require("masked_select", input)
    shapes = [tuple(mask._d.shape), tuple(input._d.shape)]
    shp = _broadcast_shape(shapes)
    m = np.broadcast_to(_host(mask), shp).reshape(-1)
    x = input if tuple(input._d.shape) == shp else broadcast_to(input, shp)
    return apply(_take, x, Tensor._make(jnp.asarray(np.nonzero(m)[0])))


def _masked_fill_vjp(cots, xs, needs):
    """MaskedFillBackward0: ``g`` where the mask is False, 0 where it is True (a tensor
    value's gradient is left to jax.vjp)."""
    (g,), (a, mask, value) = cots, xs
    if len(needs) > 2 and needs[2] or jnp.iscomplexobj(g):
        return NotImplemented
    return [jnp.where(mask, jnp.zeros((), g.dtype), g)]


@defop("masked_fill", saves={1: (0, 2)}, grad_name="MaskedFillBackward0", vjp=_masked_fill_vjp)
def _masked_fill(a, mask, value):
    return jnp.where(mask, jnp.asarray(value).astype(a.dtype), a)


def _masked_fill_args(input, mask, value, inplace=False):
    if not _is_t(mask) or mask.dtype is not D.bool:
        from .._tensor import _CPP
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_CPP[mask.dtype.name]}")
    if _is_t(value) and value._d.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._d.ndim} dimension(s).")
    # (torch's in-place kernel broadcasts self with the mask, the out-of-place form the mask
    # with self: the two name the sizes the other way round)
    shapes = [tuple(mask._d.shape), tuple(input._d.shape)]
    _broadcast_shape(shapes[::-1] if inplace else shapes)
    _check_fill_value(input, value)


def _check_fill_value(input, value):
    """torch's checked conversion of a fill value (a number, or a 0-d tensor's item) to the
    input's dtype: out of range raises, never wraps. A value still pending in fused eager is
    not read for it."""
    if _is_t(value):
        d = _fused.raw(value)
        if d.__class__ is _fused.Deferred and d.value is None:
            return
        value = value.item()
    D.check_scalar(value, input.dtype)


@public(method=True)
def masked_fill(input, mask, value):
    _masked_fill_args(input, mask, value)
    return apply(_masked_fill, input, mask, value)


_masked_fill_inplace = inplace_of(masked_fill, "masked_fill")


@method("masked_fill_")
def _masked_fill_(self, mask, value):
    _masked_fill_args(self, mask, value, inplace=True)
    return _masked_fill_inplace(self, mask, value)


@defop("take_along_dim", saves={1: (0,)}, grad_name="TakeAlongDimBackward0")
def _take_along_dim(a, index, dim):
    if dim is None:
        return jnp.take(a.reshape(-1), index.reshape(-1))
    shp_a, shp_i = list(a.shape), list(index.shape)
    shp_a[dim] = 1
    shp_i[dim] = 1
    b = [max(x, y) for x, y in zip(shp_a, shp_i)]
    sa, si = list(b), list(b)
    sa[dim], si[dim] = a.shape[dim], index.shape[dim]
    a = jnp.broadcast_to(a, sa)
    index = jnp.broadcast_to(index, si)
    return jnp.take_along_axis(a, index, axis=dim)


@public(method=True, out=True)
def take_along_dim(input, indices, dim=None):
    # (without a dim, torch gathers from the flattened input: gather's dtypes)
    check_index_dtype("take_along_dim" if dim is not None else "gather", indices)
    _check_int_index(indices, "take_along_dim")
    if dim is None:
        n = input.numel()
        iv = _host(indices)
        if iv.size and (iv.max() >= n or iv.min() < 0):
            bad = int(iv.max()) if iv.max() >= n else int(iv.min())
            raise RuntimeError(f"index {bad} is out of bounds for dimension 0 with size {n}")
        return apply(_take_along_dim, input, indices, dim=None)
    n = input._d.ndim
    d = _wrap_dim(dim, n)
    if indices._d.ndim != n:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {n} dimensions for input, and "
                           f"{indices._d.ndim} dimensions for indices")
    sa, si = list(input._d.shape), list(indices._d.shape)
    sa[d] = si[d] = 1
    _broadcast_shape([tuple(sa), tuple(si)])
    size = input._d.shape[d]
    iv = _host(indices)
    if iv.size and (iv.max() >= size or iv.min() < 0):
        # torch's take_along_dim along a dim takes every index modulo the dim's size (Python's
        # %: 7 -> 1, -7 -> 2 for a size of 3), where gather would refuse it
        if size == 0:
            raise RuntimeError("ZeroDivisionError")
        indices = indices.remainder(size)
    return apply(_take_along_dim, input, indices, dim=d)


# ------------------------------------------------------------------ nonzero, searchsorted

@defop("nonzero", differentiable=False)
def _nonzero(a, size):
    if a.ndim == 0:
        return jnp.zeros((size, 0), jnp.int64)
    return jnp.stack(jnp.nonzero(a, size=size), axis=1).astype(jnp.int64)


@public(method=True, out=True)
def nonzero(input, *, as_tuple=False):
    count = int(np.count_nonzero(_host(input)))
    res = apply(_nonzero, input, size=count)
    if as_tuple:
        if input._d.ndim == 0:
            return (Tensor._make(jnp.zeros((count,), jnp.int64)),)
        return tuple(res[:, i] for i in range(input._d.ndim))
    return res


@public(method=True)
def argwhere(input):
    return nonzero(input)


def _bsearch(seq, values, side):
    """torch's binary search (cus_lower_bound / cus_upper_bound) over the last axis of 1-D
    ``seq``: it steps right while ``!(mid >= v)`` (left) or ``!(mid > v)`` (right), so a NaN in
    the sequence or among the values lands where torch puts it (numpy orders NaN last)."""
    n = seq.shape[-1]
    lo = jnp.zeros(values.shape, jnp.int64)
    hi = jnp.full(values.shape, n, jnp.int64)
    if n == 0:
        return lo

    def step(_, lh):
        lo, hi = lh
        active = lo < hi
        mid = lo + ((hi - lo) >> 1)
        mv = seq[jnp.clip(mid, 0, n - 1)]
        stop = (mv > values) if side == "right" else (mv >= values)
        return (jnp.where(active & ~stop, mid + 1, lo), jnp.where(active & stop, mid, hi))
    lo, _ = jax.lax.fori_loop(0, int(n).bit_length() + 1, step, (lo, hi))
    return lo


@defop("searchsorted", differentiable=False)
def _searchsorted(seq, values, side, dtype):
    if seq.ndim <= 1:
        return _bsearch(seq, values, side).astype(dtype)
    f = jax.vmap(lambda s, v: _bsearch(s, v, side))
    lead = seq.shape[:-1]
    out = f(seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1]))
    return out.reshape(lead + (values.shape[-1],)).astype(dtype)


@public(out=True)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    seq = sorted_sequence
    if sorter is not None and tuple(sorter._d.shape) != tuple(seq._d.shape):
        raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, "
                           f"but got boundary tensor {list(seq._d.shape)}and got sorter tensor "
                           f"{list(sorter._d.shape)}")
    scalars = []
    if not _is_t(input):
        # a Python number takes part as torch's wrapped number (its own type, promoting only
        # across categories)
        from .._creation import scalar_tensor
        input = D.parser_scalar(input)
        scalars = [D.scalar_dtype(input)]
        input = scalar_tensor(input, dtype=scalars[0])
    if input._d.ndim == 0 and seq._d.ndim != 1:
        raise RuntimeError("torch.searchsorted(): input value can be a scalar only when "
                           "boundaries tensor dimension is 1, but we got boundaries tensor "
                           f"dim({seq._d.ndim}) and input value's dim(0) numel(1)")
    if seq._d.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if seq._d.ndim > 1 and (input._d.ndim != seq._d.ndim or
                                input._d.shape[:-1] != seq._d.shape[:-1]):
        raise RuntimeError(
            f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            f"dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq._d.shape)} and input value tensor "
            f"{list(input._d.shape)}")
    if sorter is not None:
        # (torch checks the sorter's dtype and range, then sorts by it; take_along_dim would
        # wrap an index out of range)
        if sorter.dtype is not D.int64:
            raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but "
                               f"got dtype {D.legacy_name(sorter.dtype)}")
        sv = _host(sorter)
        if sv.size and (sv.min() < 0 or sv.max() >= sorter._d.shape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
        seq = take_along_dim(seq, sorter, -1)
    dt = np.int32 if out_int32 else np.int64
    tensors = [seq] + ([] if scalars else [input])
    common_dt = D.result_type_of([t.dtype for t in tensors if t._d.ndim],
                                 [t.dtype for t in tensors if not t._d.ndim], scalars)
    if common_dt.is_complex or common_dt is D.bool:
        raise NotImplementedError(f"\"searchsorted_out_cpu\" not implemented for "
                                  f"'{D.legacy_name(common_dt)}'")
    common = common_dt.np
    s = seq if seq.dtype.np == common else seq.to(D.from_jax(common))
    v = input if input.dtype.np == common else input.to(D.from_jax(common))
    return apply(_searchsorted, s, v, side="right" if right else "left", dtype=dt)


@public(out=True)
def bucketize(input, boundaries, *, out_int32=False, right=False):
    if boundaries._d.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries._d.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# ------------------------------------------------------------------ methods and in-place
