"""Shape ops and dtype conversion: reshape/view, transpose, permute, squeeze, unsqueeze, expand,
flatten, clone, contiguous, ``to`` and the dtype shortcuts."""
from __future__ import annotations

import numpy as np
import jax.numpy as jnp

from .. import _device
from .. import _dtype as D
from .._tensor import Tensor, _wrap_dim
from .._registry import apply, defop, method

__all__ = ["reshape", "transpose", "swapaxes", "permute", "squeeze", "unsqueeze", "flatten",
           "t", "clone"]


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return tuple(int(s) for s in shape)


def infer_shape(shape, numel):
    """Resolve a -1 in ``shape``; torch's RuntimeError when it cannot hold ``numel``."""
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _host_slice(a, start, dim, length):
    """``lax.dynamic_slice_in_dim`` on numpy: the start is clamped into range as XLA does."""
    start = min(max(int(start), 0), a.shape[dim] - length)
    return a[(slice(None),) * (dim % a.ndim) + (slice(start, start + length),)]


@defop("view", saves=False, view=True, grad_name="ViewBackward0",
       host=lambda a, shape: a.reshape(shape))
def _view(a, shape):
    return jnp.reshape(a, shape)


@defop("transpose", saves=False, view=True, grad_name="TransposeBackward0",
       host=lambda a, d0, d1: np.swapaxes(a, d0, d1))
def _transpose(a, d0, d1):
    return jnp.swapaxes(a, d0, d1)


@defop("t", saves=False, view=True, grad_name="TBackward0", host=lambda a: a.T)
def _t(a):
    return a.T


@defop("permute", saves=False, view=True, grad_name="PermuteBackward0",
       host=lambda a, dims: np.transpose(a, dims))
def _permute(a, dims):
    return jnp.transpose(a, dims)


@defop("unsqueeze", saves=False, view=True, grad_name="UnsqueezeBackward0",
       host=lambda a, dim: np.expand_dims(a, dim))
def _unsqueeze(a, dim):
    return jnp.expand_dims(a, dim)


def _squeeze_name(kw):
    return {None: "SqueezeBackward0", "int": "SqueezeBackward1"}.get(kw["kind"],
                                                                      "SqueezeBackward2")


@defop("squeeze", saves=False, view=True, grad_name=_squeeze_name,
       host=lambda a, dims, kind: np.squeeze(a, None if dims is None else tuple(
           d for d in dims if a.shape[d] == 1)))
def _squeeze(a, dims, kind):
    dims = tuple(d for d in dims if a.shape[d] == 1) if dims is not None else None
    return jnp.squeeze(a, dims)


@defop("expand", saves=False, view=True, grad_name="ExpandBackward0",
       host=lambda a, shape: np.broadcast_to(a, shape))
def _expand(a, shape):
    return jnp.broadcast_to(a, shape)


@defop("clone", saves=False, grad_name="CloneBackward0", host=lambda a: a)
def _clone(a):
    return jnp.array(a, copy=True)


@defop("to_copy", saves=False, grad_name="ToCopyBackward0")
def _to_copy(a, dtype):
    return a.astype(dtype)


@defop("reshape_copy", saves=False, grad_name="UnsafeViewBackward0",
       host=lambda a, shape: a.reshape(shape))
def _reshape_copy(a, shape):
    return jnp.reshape(a, shape)


def reshape(input, *shape):
    """The same values in a new shape (one dim may be -1): a view of a contiguous tensor, a
    copy of a non-contiguous one (a transposed or strided view), as in torch."""
    from .._storage import is_contiguous
    shape = infer_shape(_shape_arg(shape), input.numel())
    if input._alias is not None and not is_contiguous(input):
        return apply(_reshape_copy, input, shape=shape)
    return apply(_view, input, shape=shape)


def view(self, *shape):
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        return _view_dtype(self, shape[0])
    return apply(_view, self, shape=infer_shape(_shape_arg(shape), self.numel()))


@defop("view_dtype", differentiable=False)
def _bitcast(a, dtype):
    src, dst = a.dtype, np.dtype(dtype)
    if src == np.bool_:
        a = a.astype(np.uint8)
    tgt = np.uint8 if dst == np.bool_ else dst
    if a.dtype.itemsize == np.dtype(tgt).itemsize:
        out = jax.lax.bitcast_convert_type(a, tgt)
    elif a.dtype.itemsize > np.dtype(tgt).itemsize:
        out = jax.lax.bitcast_convert_type(a, tgt)          # [..., n, k]
        out = out.reshape(out.shape[:-2] + (-1,))
    else:
        k = np.dtype(tgt).itemsize // a.dtype.itemsize
        out = jax.lax.bitcast_convert_type(a.reshape(a.shape[:-1] + (-1, k)), tgt)
    return out.astype(np.bool_) if dst == np.bool_ else out


def _view_dtype(self, dtype):
    """``t.view(dtype)``: the same bytes read as ``dtype`` (torch's bit reinterpretation)."""
    dtype = D.to_dtype(dtype)
    if dtype is self.dtype:
        # torch: an alias of the same storage that does not take part in autograd
        return self.detach()
    a, b = self.dtype.itemsize, dtype.itemsize
    names = D.LEGACY_NAMES
    if a != b:
        if self._data.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 to view {names[self.dtype.name]} as "
                               f"{names[dtype.name]} (different element sizes)")
        if b > a and self._data.shape[-1] % (b // a):
            raise RuntimeError(f"self.size(-1) must be divisible by {b // a} to view "
                               f"{names[self.dtype.name]} as {names[dtype.name]} (different "
                               f"element sizes), but got {self._data.shape[-1]}")
    if self.dtype.is_complex or dtype.is_complex:
        raise NotImplementedError("torchlike: view(dtype) between complex and real dtypes")
    return apply(_bitcast, self, dtype=dtype.np)


def transpose(input, dim0, dim1):
    n = input._data.ndim
    return apply(_transpose, input, d0=_wrap_dim(dim0, n), d1=_wrap_dim(dim1, n))


swapaxes = swapdims = transpose


def t(input):
    if input._data.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input._data.ndim}D")
    return apply(_t, input)


def permute(input, *dims):
    dims = _shape_arg(dims)
    n = input._data.ndim
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {n} is not equal to len(dims) = {len(dims)}")
    wrapped = tuple(_wrap_dim(d, n) for d in dims)
    if len(set(wrapped)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return apply(_permute, input, dims=wrapped)


def unsqueeze(input, dim):
    return apply(_unsqueeze, input, dim=_wrap_dim(dim, input._data.ndim + 1))


def squeeze(input, dim=None):
    n = input._data.ndim
    if dim is None:
        return apply(_squeeze, input, dims=None, kind=None)
    if isinstance(dim, (tuple, list)):
        return apply(_squeeze, input, dims=tuple(_wrap_dim(d, n) for d in dim) if n else (),
                     kind="tuple")
    return apply(_squeeze, input, dims=(_wrap_dim(dim, n),) if n else (), kind="int")


@method("squeeze")
def _squeeze_method(self, *dim, **kw):
    """``t.squeeze()``, ``t.squeeze(1)``, ``t.squeeze(0, 1)`` and ``t.squeeze((0, 1))``."""
    if not dim and "dim" not in kw:
        return squeeze(self)
    d = _dims_varargs(dim, kw, "dim")
    return squeeze(self, d[0] if isinstance(d, tuple) and len(dim) == 1 and len(d) == 1
                   and isinstance(dim[0], int) else d)


def flatten(input, start_dim=0, end_dim=-1):
    n = input._data.ndim
    if n == 0:
        return reshape(input, 1)
    s, e = _wrap_dim(start_dim, n), _wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shp = input._data.shape
    if s == e:
        return input
    return reshape(input, *shp[:s], -1, *shp[e + 1:])


def expand(self, *sizes):
    sizes = _shape_arg(sizes)
    shp = self._data.shape
    if len(sizes) < len(shp):
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(shp)}}}, size={list(sizes)}): the "
                           f"number of sizes provided ({len(sizes)}) must be greater or equal to "
                           f"the number of dimensions in the tensor ({len(shp)})")
    lead = len(sizes) - len(shp)
    out = []
    for i, s in enumerate(sizes):
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            out.append(s)
            continue
        cur = shp[i - lead]
        if s == -1:
            s = cur
        if cur != 1 and s != cur:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing "
                               f"size ({cur}) at non-singleton dimension {i}.  Target sizes: "
                               f"{list(sizes)}.  Tensor sizes: {list(shp)}")
        out.append(s)
    check_materialized_size("expand", tuple(out), self.dtype.itemsize)
    return apply(_expand, self, shape=tuple(out))


_MAX_BYTES = 2 ** 63 - 1


def check_materialized_size(name, shape, itemsize):
    """Refuse a result whose element count or byte size overflows int64 (XLA would abort the
    process while compiling it) with torch's RuntimeError. torchlike materializes expanded
    tensors (DIFFERENCES.md), so ``expand`` to such a size raises where torch gives a view."""
    n = 1
    for d in shape:
        n *= int(d)
    if n > _MAX_BYTES:
        raise RuntimeError("numel: integer multiplication overflow")
    if n * itemsize > _MAX_BYTES:
        raise RuntimeError(f"{name}: torchlike materializes this result (see DIFFERENCES.md) "
                           f"and its storage size calculation overflowed with sizes="
                           f"{list(shape)}")


def clone(input, *, memory_format=None):
    return apply(_clone, input)


def _to(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)``, ``to(other)``, ``to(device, dtype)``; returns self when
    nothing changes."""
    dtype = kwargs.get("dtype")
    dev = kwargs.get("device")
    copy = kwargs.get("copy", False)
    for a in args:
        if isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, dev = a.dtype, a.device
        elif isinstance(a, (str, _device.device, int)):
            dev = a
    out = self
    if dtype is not None and D.to_dtype(dtype) is not self.dtype:
        out = apply(_to_copy, self, dtype=D.to_dtype(dtype).np)
    elif copy:
        out = clone(self)
    if dev is not None:
        out = _device.move(out, dev)
    return out


for _n, _f in dict(reshape=reshape, view=view, transpose=transpose, swapaxes=swapaxes,
                   swapdims=swapaxes, t=t, permute=permute, unsqueeze=unsqueeze,
                   flatten=flatten, expand=expand, clone=clone,
                   to=_to).items():
    setattr(Tensor, _n, _f)

Tensor.view_as = lambda self, other: reshape(self, *other.shape)
Tensor.reshape_as = lambda self, other: reshape(self, *other.shape)
Tensor.expand_as = lambda self, other: expand(self, *other.shape)
def _contiguous(self, memory_format=None):
    """self if contiguous, else a contiguous copy (so writes to it do not reach the base)."""
    return self if self.is_contiguous() else clone(self)


Tensor.contiguous = _contiguous
Tensor.T = property(lambda self: permute(self, *reversed(range(self.ndim))))
Tensor.mT = property(lambda self: transpose(self, -2, -1))
Tensor.cpu = lambda self, memory_format=None: _to(self, "cpu")
Tensor.cuda = lambda self, device=None, non_blocking=False, memory_format=None: _to(
    self, _device.device("cuda", device if isinstance(device, int) else None))


def _cast_method(dt):
    def fn(self, memory_format=None):
        return _to(self, dt)
    return fn


for _n, _d in dict(float=D.float32, double=D.float64, half=D.float16, bfloat16=D.bfloat16,
                   long=D.int64, int=D.int32, short=D.int16, char=D.int8, byte=D.uint8,
                   bool=D.bool, cfloat=D.complex64, cdouble=D.complex128).items():
    setattr(Tensor, _n, _cast_method(_d))


@method("new_tensor")
def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    from .._creation import tensor
    return tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)


@method("new_zeros")
def _new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
    from .._creation import zeros
    return zeros(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)


@method("new_ones")
def _new_ones(self, *size, dtype=None, device=None, requires_grad=False):
    from .._creation import ones
    return ones(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)


@method("new_full")
def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    from .._creation import full
    return full(size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad)


@method("new_empty")
def _new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    return _new_zeros(self, *size, dtype=dtype, requires_grad=requires_grad)


# ================================================================== reshaping, joining, splitting, selecting
#
# Each op below is declared once as a pure jax function; the torch-facing wrappers check
# arguments (with torch's exception classes and messages) and resolve every data-dependent
# size on the host before calling ``apply``, so the jitted kernels see static shapes only.

import jax  # noqa: E402

from .._storage import apply_, check_inplace, commit_inplace  # noqa: E402

__all__ += ["unflatten", "movedim", "moveaxis", "repeat_interleave", "tile", "flip", "fliplr",
            "flipud", "roll", "rot90", "cat", "concat", "concatenate", "stack", "hstack",
            "vstack", "row_stack", "dstack", "column_stack", "split", "tensor_split", "chunk",
            "unbind", "narrow", "select", "gather", "scatter", "scatter_add", "index_select",
            "masked_select", "masked_fill", "take", "take_along_dim", "tril", "triu", "diag",
            "diagonal", "diag_embed", "meshgrid", "broadcast_to", "broadcast_tensors",
            "broadcast_shapes", "nonzero", "argwhere", "searchsorted", "bucketize",
            "atleast_1d", "atleast_2d", "atleast_3d", "swapdims", "constant_pad_nd",
            "index_add", "index_fill", "index_copy"]


def _is_t(x):
    return isinstance(x, Tensor)


def _dims_list(dims, n, what="dims"):
    if isinstance(dims, int):
        dims = (dims,)
    out = tuple(_wrap_dim(int(d), n) for d in dims)
    if len(set(out)) != len(out):
        d = next(d for d in out if out.count(d) > 1)
        raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return out


def _host(t):
    """The values of an index tensor on the host (for data-dependent sizes and bound checks)."""
    return np.asarray(t._data) if _is_t(t) else np.asarray(t)


def _check_int_index(t, name):
    if not _is_t(t) or t.dtype.category != D._INT:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


# ------------------------------------------------------------------ unflatten, movedim

def unflatten(input, dim, sizes):
    n = input._data.ndim
    d = _wrap_dim(dim, n)
    sizes = tuple(int(s) for s in sizes)
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    cur = input._data.shape[d]
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = int(np.prod([s for s in sizes if s != -1], dtype=np.int64))
    if -1 in sizes:
        if known == 0 or cur % known:
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to "
                               f"the size of dim {dim} ({cur}) in the input tensor")
        sizes = tuple(cur // known if s == -1 else s for s in sizes)
    elif known != cur:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({cur}) in the input tensor")
    shp = input._data.shape
    return apply(_view, input, shape=tuple(shp[:d]) + sizes + tuple(shp[d + 1:]))


def movedim(input, source, destination):
    n = input._data.ndim
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    src = _dims_list(src, n)
    dst = _dims_list(dst, n)
    order = [None] * max(n, 1)
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    order = [o if o is not None else next(rest) for o in order][:n]
    return apply(_permute, input, dims=tuple(order))


moveaxis = movedim


# ------------------------------------------------------------------ repeat, tile, flip, roll

@defop("tile", saves=False, grad_name="RepeatBackward0")
def _tile(a, reps):
    return jnp.tile(a, reps)


def _repeat(self, *sizes):
    sizes = _shape_arg(sizes)
    if len(sizes) < self._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(sizes)}: "
                           f"{list(sizes)}")
    a = self
    if len(sizes) > a._data.ndim:
        a = apply(_view, a, shape=(1,) * (len(sizes) - a._data.ndim) + tuple(a._data.shape))
    return apply(_tile, a, reps=sizes)


def tile(input, dims):
    dims = _shape_arg((dims,) if isinstance(dims, int) else tuple(dims))
    n = input._data.ndim
    if len(dims) < n:
        dims = (1,) * (n - len(dims)) + dims
    return _repeat(input, *dims)


@method("tile")
def _tile_method(self, *dims, **kw):
    return tile(self, _dims_varargs(dims, kw, "dims"))


@defop("repeat_interleave", saves=False, grad_name="IndexSelectBackward0")
def _repeat_interleave(a, repeats, axis, total):
    return jnp.repeat(a, np.asarray(repeats) if isinstance(repeats, tuple) else repeats,
                      axis=axis, total_repeat_length=total)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    if repeats is None:
        # torch.repeat_interleave(repeats): arange(len(repeats)) repeated
        reps = _host(input)
        from .._creation import arange
        return repeat_interleave(arange(len(reps), dtype=input.dtype), input, 0)
    if dim is None:
        input = reshape(input, -1)
        dim = 0
    d = _wrap_dim(dim, input._data.ndim)
    size = input._data.shape[d] if input._data.ndim else 1
    if _is_t(repeats):
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
    else:
        if repeats < 0:
            raise RuntimeError("repeats can not be negative")
        reps, total = int(repeats), int(repeats) * size
    if input._data.ndim == 0:
        input = reshape(input, 1)
    return apply(_repeat_interleave, input, repeats=reps, axis=d, total=total)


@defop("flip", saves=False, grad_name="FlipBackward0",
       host=lambda a, dims: np.flip(a, dims) if dims else a)
def _flip(a, dims):
    return jnp.flip(a, dims) if dims else a


def flip(input, dims):
    return apply(_flip, input, dims=_dims_list(dims, input._data.ndim))



def _dims_varargs(dims, kw, name):
    """``t.flip(0, 1)`` / ``t.flip((0, 1))`` / ``t.flip(dims=(0, 1))``: the one sequence."""
    if name in kw:
        if dims:
            raise TypeError(f"{name}() got multiple values for argument '{name}'")
        return kw.pop(name)
    if kw:
        raise TypeError(f"got an unexpected keyword argument '{next(iter(kw))}'")
    return dims[0] if len(dims) == 1 and not isinstance(dims[0], int) else dims


@method("flip")
def _flip_method(self, *dims, **kw):
    return flip(self, _dims_varargs(dims, kw, "dims"))


def fliplr(input):
    if input._data.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    if input._data.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


@defop("roll", saves=False, grad_name="RollBackward0")
def _roll(a, shifts, dims):
    if dims is None:
        return jnp.roll(a.reshape(-1), shifts[0]).reshape(a.shape)
    return jnp.roll(a, shifts, dims)


def roll(input, shifts, dims=None):
    shifts = (shifts,) if isinstance(shifts, int) else tuple(int(s) for s in shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               f"dims:0")
        return apply(_roll, input, shifts=shifts, dims=None)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                           f"dims:{len(dims)}")
    n = input._data.ndim
    return apply(_roll, input, shifts=shifts, dims=tuple(_wrap_dim(d, n) for d in dims))


@defop("rot90", saves=False, grad_name="FlipBackward0")
def _rot90(a, k, dims):
    return jnp.rot90(a, k, axes=dims)


def rot90(input, k=1, dims=(0, 1)):
    dims = tuple(dims)
    n = input._data.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = _wrap_dim(dims[0], n), _wrap_dim(dims[1], n)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    return apply(_rot90, input, k=int(k) % 4, dims=(d0, d1))


# ------------------------------------------------------------------ cat, stack and friends

@defop("cat", promote="common", saves=False, grad_name="CatBackward0",
       host=lambda *xs, dim, skip: np.concatenate(
           [x for i, x in enumerate(xs) if i not in skip], axis=dim))
def _cat(*xs, dim, skip):
    return jnp.concatenate([x for i, x in enumerate(xs) if i not in skip], axis=dim)


def _tensor_list(tensors, name):
    if isinstance(tensors, Tensor):
        return list(tensors.unbind(0))
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not _is_t(t):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    return tensors


def cat(tensors, dim=0, *, out=None):
    """Concatenate along ``dim``; legacy empty 1-D tensors are skipped, as in torch."""
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t._data.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               f"concatenated")
    skip = tuple(i for i, t in enumerate(tensors) if t._data.shape == (0,))
    keep = [t for i, t in enumerate(tensors) if i not in skip]
    if not keep:
        return apply(_cat, *tensors, dim=0, skip=())
    ref = keep[0]
    n = ref._data.ndim
    d = _wrap_dim(dim, n)
    for i, t in enumerate(tensors):
        if i in skip:
            continue
        if t._data.ndim != n:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {n} and "
                               f"{t._data.ndim}")
        for k in range(n):
            if k != d and t._data.shape[k] != ref._data.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref._data.shape[k]} but got size "
                                   f"{t._data.shape[k]} for tensor number {i} in the list.")
    return apply(_cat, *tensors, dim=d, skip=skip)


concat = concatenate = cat


@defop("stack", promote="common", saves=False, grad_name="StackBackward0",
       host=lambda *xs, dim: np.stack(xs, axis=dim))
def _stack(*xs, dim):
    return jnp.stack(xs, axis=dim)


def stack(tensors, dim=0, *, out=None):
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    s0 = tuple(tensors[0]._data.shape)
    for i, t in enumerate(tensors):
        if tuple(t._data.shape) != s0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(s0)} "
                               f"at entry 0 and {list(t._data.shape)} at entry {i}")
    return apply(_stack, *tensors, dim=_wrap_dim(dim, len(s0) + 1))


def atleast_1d(*tensors):
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = [reshape(t, 1) if t._data.ndim == 0 else t for t in ts]
    return out[0] if len(tensors) == 1 and _is_t(tensors[0]) else tuple(out)


def atleast_2d(*tensors):
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = [reshape(t, 1, -1) if t._data.ndim < 2 else t for t in ts]
    return out[0] if len(tensors) == 1 and _is_t(tensors[0]) else tuple(out)


def atleast_3d(*tensors):
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = []
    for t in ts:
        n = t._data.ndim
        out.append(reshape(t, 1, -1, 1) if n < 2 else unsqueeze(t, -1) if n == 2 else t)
    return out[0] if len(tensors) == 1 and _is_t(tensors[0]) else tuple(out)


def hstack(tensors, *, out=None):
    ts = atleast_1d(list(tensors))
    return cat(ts, 0 if ts[0]._data.ndim == 1 else 1)


def vstack(tensors, *, out=None):
    return cat(atleast_2d(list(tensors)), 0)


row_stack = vstack


def dstack(tensors, *, out=None):
    return cat(atleast_3d(list(tensors)), 2)


def column_stack(tensors, *, out=None):
    ts = [reshape(t, -1, 1) if t._data.ndim <= 1 else t for t in tensors]
    return cat(ts, 1)


# ------------------------------------------------------------------ split, chunk, unbind

@defop("split", saves=False, view=True, grad_name="SplitWithSizesBackward0",
       host=lambda a, sizes, dim: tuple(np.split(a, np.cumsum(sizes)[:-1], axis=dim)))
def _split(a, sizes, dim):
    outs, start = [], 0
    for s in sizes:
        outs.append(jax.lax.slice_in_dim(a, start, start + s, axis=dim))
        start += s
    return tuple(outs)


def _as_tuple(r):
    return r if isinstance(r, tuple) else (r,)


def _split_sizes(input, sizes, dim):
    n = input._data.ndim
    if n == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, n)
    return apply(_split, input, sizes=tuple(sizes), dim=d)


def split(tensor, split_size_or_sections, dim=0):
    n = tensor._data.ndim
    if n == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, n)
    size = tensor._data.shape[d]
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        if s < 0 or (s == 0 and size != 0):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {size}")
        sizes = [s] * (size // s) + ([size % s] if size % s else []) if s else [0]
        if not sizes:
            sizes = [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != size or any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={sizes}")
    return _as_tuple(_split_sizes(tensor, sizes, d))


def tensor_split(input, indices_or_sections, dim=0):
    n = input._data.ndim
    if n == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = _wrap_dim(dim, n)
    size = input._data.shape[d]
    if isinstance(indices_or_sections, Tensor) and indices_or_sections.ndim == 0:
        indices_or_sections = int(indices_or_sections.item())
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        q, r = divmod(size, k)
        sizes = [q + 1] * r + [q] * (k - r)
    else:
        idx = [int(i) for i in (_host(indices_or_sections).tolist()
                                if _is_t(indices_or_sections) else indices_or_sections)]
        bounds = [0] + [min(max(i, 0), size) for i in idx] + [size]
        sizes = [max(b - a, 0) for a, b in zip(bounds[:-1], bounds[1:])]
        # torch: each section starts at max(previous start, index)
        starts = [0]
        for i in idx:
            starts.append(max(starts[-1], min(max(i, 0), size)))
        ends = starts[1:] + [size]
        sizes = [e - s for s, e in zip(starts, ends)]
    return _as_tuple(_split_sizes(input, sizes, d))


def chunk(input, chunks, dim=0):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input._data.ndim
    if n == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, n)
    size = input._data.shape[d]
    step = -(-size // chunks)
    if step == 0:
        return split(input, [0] * min(chunks, 1) if size == 0 else [size], d)
    return split(input, step, d)


@defop("unbind", saves=False, view=True, grad_name="UnbindBackward0",
       host=lambda a, dim: tuple(np.take(a, i, axis=dim) for i in range(a.shape[dim])))
def _unbind(a, dim):
    return tuple(jnp.take(a, i, axis=dim) for i in range(a.shape[dim]))


def unbind(input, dim=0):
    n = input._data.ndim
    if n == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _wrap_dim(dim, n)
    if input._data.shape[d] == 0:
        return ()
    return _as_tuple(apply(_unbind, input, dim=d))


# ------------------------------------------------------------------ narrow, select

@defop("slice", saves=False, view=True, grad_name="SliceBackward0",
       host=lambda a, start, dim, length: _host_slice(a, start, dim, length))
def _slice(a, start, dim, length):
    # ``start`` is traced: narrow(d, i, n) for many i compiles once per length
    return jax.lax.dynamic_slice_in_dim(a, start, length, axis=dim)


def narrow(input, dim, start, length):
    n = input._data.ndim
    if n == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, n)
    size = input._data.shape[d]
    start = int(start)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return apply(_slice, input, jnp.asarray(start, jnp.int64), dim=d, length=int(length))


@defop("select", saves=False, view=True, grad_name="SelectBackward0",
       host=lambda a, index, dim: np.squeeze(_host_slice(a, index, dim, 1), dim))
def _select(a, index, dim):
    # ``index`` is traced: select(d, i) for many i compiles once
    return jnp.squeeze(jax.lax.dynamic_slice_in_dim(a, index, 1, axis=dim), dim)


def select(input, dim, index):
    n = input._data.ndim
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, n)
    size = input._data.shape[d]
    index = int(index)
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input._data.shape)} at dimension {d}")
    return apply(_select, input, jnp.asarray(index % size, jnp.int64), dim=d)


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


@defop("gather", saves=False, grad_name="GatherBackward0")
def _gather(a, index, dim):
    if a.ndim == 0:
        return a
    return a[_grid(index, dim)]


def _check_index_dims(name, input, dim, index, src=None):
    n = input._data.ndim
    d = _wrap_dim(dim, n)
    _check_int_index(index, name)
    if max(index._data.ndim, 1) != max(n, 1):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as "
                           f"{'input' if name == 'gather' else 'self'} tensor")
    if n:
        for k in range(n):
            if k != d and index._data.shape[k] > input._data.shape[k]:
                raise RuntimeError(
                    f"Size does not match at dimension {k} expected index "
                    f"{list(index._data.shape)} to be no larger than self "
                    f"{list(input._data.shape)} apart from dimension {d}")
        if src is not None and any(index._data.shape[k] > src._data.shape[k] for k in range(n)):
            raise RuntimeError(
                f"Expected index {list(index._data.shape)} to be no larger than self "
                f"{list(input._data.shape)} apart from dimension {d} and to be no larger size "
                f"than src {list(src._data.shape)}")
    size = input._data.shape[d] if n else 1
    iv = _host(index)
    if iv.size and (iv.max() >= size or iv.min() < 0):
        # torch refuses negative indices here (jax would wrap them)
        bad = int(iv.max()) if iv.max() >= size else int(iv.min())
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    return d


def gather(input, dim, index, *, sparse_grad=False, out=None):
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


@defop("scatter", saves=False, grad_name=_scatter_name)
def _scatter(a, index, src, dim, mode):
    if a.ndim == 0:
        a1 = a.reshape(1)
        out = _scatter(a1, index.reshape(1), jnp.reshape(src, (-1,))[:1] if jnp.ndim(src)
                       else src, dim=0, mode=mode)
        return out.reshape(())
    index = index.astype(jnp.int64) % a.shape[dim]
    idx = _grid(index, dim)
    if mode == "value":
        return a.at[idx].set(jnp.asarray(src, a.dtype))
    sl = src[tuple(slice(0, n) for n in index.shape)].astype(a.dtype)
    if mode == "set":
        return _scatter_set(a, idx, sl)
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
        if src._data.ndim != input._data.ndim and src._data.ndim != max(input._data.ndim, 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src "
                               "tensor")
    d = _check_index_dims("scatter", input, dim, index, src)
    if add:
        mode = "add"
    elif reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        mode = reduce
    else:
        mode = "set" if src is not None else "value"
    if value is not None:
        if _is_t(value):
            value = value.item()
        if mode in ("add", "multiply"):
            from .._creation import full
            src = full(tuple(index.shape), value, dtype=input.dtype)
            return apply(_scatter, input, index, src, dim=d, mode=mode)
        return apply(_scatter, input, index, value, dim=d, mode="value")
    return apply(_scatter, input, index, src, dim=d, mode=mode)


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    return _scatter_impl(input, dim, index, src, value, reduce)


def scatter_add(input, dim, index, src):
    return _scatter_impl(input, dim, index, src, add=True)


# ------------------------------------------------------------------ index_select and friends

@defop("index_select", saves=False, grad_name="IndexSelectBackward0")
def _index_select(a, index, dim):
    if a.ndim == 0:
        return a
    return jnp.take(a, index.reshape(-1), axis=dim)


def _check_vector_index(name, input, dim, index):
    n = input._data.ndim
    d = _wrap_dim(dim, n)
    if not _is_t(index) or index.dtype.category != D._INT:
        raise IndexError(f"{name}(): Expected dtype int32/int64 for index")
    if index._data.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    size = input._data.shape[d] if n else 1
    iv = _host(index)
    lo = -size if name == "index_fill" else 0    # torch's index_fill wraps negative indices
    if iv.size and (iv.max() >= size or iv.min() < lo):
        bad = int(iv.max()) if iv.max() >= size else int(iv.min())
        if name == "index_select" and n > 1:
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} "
                               f"axis_dim={size}")
        if name == "index_add" and n > 1:
            raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size "
                               f"{size}")
        if name in ("index_select", "index_add"):
            raise IndexError("index out of range in self")
        if name == "index_fill":
            raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size}")
        raise IndexError(f"{name}_(): index {bad} is out of bounds for dimension {d} with size "
                         f"{size}")
    return d


def index_select(input, dim, index):
    d = _check_vector_index("index_select", input, dim, index)
    return apply(_index_select, input, index, dim=d)


@defop("index_add", saves=False, grad_name="IndexAddBackward0")
def _index_add(a, index, src, dim, alpha, mode):
    idx = (slice(None),) * dim + (index.reshape(-1),)
    if mode == "add":
        return a.at[idx].add((src * alpha).astype(a.dtype) if alpha != 1 else src.astype(a.dtype))
    if mode == "fill":
        idx = (slice(None),) * dim + (index.reshape(-1) % max(a.shape[dim] if a.ndim else 1, 1),)
        return a.at[idx].set(jnp.asarray(src, a.dtype))
    return a.at[idx].set(src.astype(a.dtype))


def index_add(input, dim, index, source, *, alpha=1):
    d = _check_vector_index("index_add", input, dim, index)
    return apply(_index_add, input, index, source, dim=d, alpha=alpha, mode="add")


def index_copy(input, dim, index, source):
    d = _check_vector_index("index_copy", input, dim, index)
    return apply(_index_add, input, index, source, dim=d, alpha=1, mode="copy")


def index_fill(input, dim, index, value):
    d = _check_vector_index("index_fill", input, dim, index)
    if _is_t(value):
        value = value.item()
    return apply(_index_add, input, index, value, dim=d, alpha=1, mode="fill")


@defop("take", saves=False, grad_name="TakeBackward0")
def _take(a, index):
    return jnp.take(a.reshape(-1), index)


def take(input, index):
    _check_int_index(index, "take")
    n = input.numel()
    iv = _host(index)
    if iv.size and (iv.max() >= n or iv.min() < -n):
        bad = int(iv.max()) if iv.max() >= n else int(iv.min())
        raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                         f"elements.")
    return apply(_take, input, Tensor._make(jnp.asarray(iv % max(n, 1))))


def masked_select(input, mask):
    if mask.dtype is not D.bool:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask")
    shapes = [tuple(input._data.shape), tuple(mask._data.shape)]
    shp = _broadcast_shape(shapes)
    m = np.broadcast_to(_host(mask), shp).reshape(-1)
    x = input if tuple(input._data.shape) == shp else broadcast_to(input, shp)
    return apply(_take, x, Tensor._make(jnp.asarray(np.nonzero(m)[0])))


@defop("masked_fill", saves=False, grad_name="MaskedFillBackward0")
def _masked_fill(a, mask, value):
    return jnp.where(mask, jnp.asarray(value).astype(a.dtype), a)


def _masked_fill_args(input, mask, value):
    if not _is_t(mask) or mask.dtype is not D.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype.name.replace('float32', 'float')}")
    if _is_t(value) and value._data.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._data.ndim} dimension(s).")
    _broadcast_shape([tuple(mask._data.shape), tuple(input._data.shape)])


def masked_fill(input, mask, value):
    _masked_fill_args(input, mask, value)
    return apply(_masked_fill, input, mask, value)


@defop("take_along_dim", saves=False, grad_name="TakeAlongDimBackward0")
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


def take_along_dim(input, indices, dim=None):
    _check_int_index(indices, "take_along_dim")
    if dim is None:
        n = input.numel()
        iv = _host(indices)
        if iv.size and (iv.max() >= n or iv.min() < 0):
            bad = int(iv.max()) if iv.max() >= n else int(iv.min())
            raise RuntimeError(f"index {bad} is out of bounds for dimension 0 with size {n}")
        return apply(_take_along_dim, input, indices, dim=None)
    n = input._data.ndim
    d = _wrap_dim(dim, n)
    if indices._data.ndim != n:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {n} dimensions for input, and "
                           f"{indices._data.ndim} dimensions for indices")
    size = input._data.shape[d]
    iv = _host(indices)
    if iv.size and (iv.max() >= size or iv.min() < -size):
        bad = int(iv.max()) if iv.max() >= size else int(iv.min())
        raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    sa, si = list(input._data.shape), list(indices._data.shape)
    sa[d] = si[d] = 1
    _broadcast_shape([tuple(sa), tuple(si)])
    return apply(_take_along_dim, input, indices, dim=d)


# ------------------------------------------------------------------ triangles and diagonals

@defop("tril", saves=False, grad_name="TrilBackward0")
def _tril(a, diagonal):
    return jnp.tril(a, diagonal)


@defop("triu", saves=False, grad_name="TriuBackward0")
def _triu(a, diagonal):
    return jnp.triu(a, diagonal)


def tril(input, diagonal=0):
    if input._data.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return apply(_tril, input, diagonal=int(diagonal))


def triu(input, diagonal=0):
    if input._data.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return apply(_triu, input, diagonal=int(diagonal))


@defop("diagonal", saves=False, view=True, grad_name="DiagonalBackward0",
       host=lambda a, offset, dim1, dim2: np.diagonal(a, offset, dim1, dim2))
def _diagonal(a, offset, dim1, dim2):
    return jnp.diagonal(a, offset, dim1, dim2)


def diagonal(input, offset=0, dim1=0, dim2=1):
    n = input._data.ndim
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(_diagonal, input, offset=int(offset), dim1=d1, dim2=d2)


@defop("diag_embed", saves=False, grad_name="DiagEmbedBackward0")
def _diag_embed(a, offset, dim1, dim2):
    m = a.shape[-1] + abs(offset)
    out = jnp.zeros(a.shape[:-1] + (m, m), a.dtype)
    i = jnp.arange(a.shape[-1])
    r, c = (i, i + offset) if offset >= 0 else (i - offset, i)
    out = out.at[..., r, c].set(a)
    n = out.ndim
    return jnp.moveaxis(out, (n - 2, n - 1), (dim1, dim2))


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    n = input._data.ndim + 1
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(_diag_embed, input, offset=int(offset), dim1=d1, dim2=d2)


def diag(input, diagonal=0):
    n = input._data.ndim
    if n == 1:
        return diag_embed(input, diagonal, 0, 1)
    if n == 2:
        return apply(_diagonal, input, offset=int(diagonal), dim1=0, dim2=1)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {n}D")


# ------------------------------------------------------------------ broadcasting, meshgrid

def _broadcast_shape(shapes):
    from .._registry import broadcast_error
    if not shapes:
        return ()
    msg = broadcast_error(shapes)
    if msg:
        raise RuntimeError(msg)
    return tuple(np.broadcast_shapes(*shapes))


def broadcast_shapes(*shapes):
    from .._tensor import Size
    sh = [(s,) if isinstance(s, int) else tuple(s) for s in shapes]
    try:
        return Size(np.broadcast_shapes(*sh))
    except ValueError:
        raise RuntimeError(f"Shape mismatch: objects cannot be broadcast to a single shape") \
            from None


def broadcast_to(input, size):
    return expand(input, *_shape_arg((size,) if isinstance(size, int) else tuple(size)))


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shp = _broadcast_shape([tuple(t._data.shape) for t in tensors])
    return tuple(t if tuple(t._data.shape) == shp else expand(t, *shp) for t in tensors)


def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    indexing = indexing or "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    for t in tensors:
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if t._data.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
    ts = [reshape(t, -1) if t._data.ndim == 0 else t for t in tensors]
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    shp = tuple(t._data.shape[0] for t in ts)
    outs = []
    for i, t in enumerate(ts):
        v = [1] * len(ts)
        v[i] = -1
        outs.append(expand(reshape(t, *v), *shp))
    if swap:
        outs[0], outs[1] = outs[1], outs[0]
    return tuple(outs)


# ------------------------------------------------------------------ nonzero, searchsorted

@defop("nonzero", differentiable=False)
def _nonzero(a, size):
    if a.ndim == 0:
        return jnp.zeros((size, 0), jnp.int64)
    return jnp.stack(jnp.nonzero(a, size=size), axis=1).astype(jnp.int64)


def nonzero(input, *, out=None, as_tuple=False):
    count = int(np.count_nonzero(_host(input)))
    res = apply(_nonzero, input, size=count)
    if as_tuple:
        if input._data.ndim == 0:
            return (Tensor._make(jnp.zeros((count,), jnp.int64)),)
        return tuple(res[:, i] for i in range(input._data.ndim))
    return res


def argwhere(input):
    return nonzero(input)


@defop("searchsorted", differentiable=False)
def _searchsorted(seq, values, side, dtype):
    if seq.ndim <= 1:
        return jnp.searchsorted(seq, values, side=side).astype(dtype)
    f = jax.vmap(lambda s, v: jnp.searchsorted(s, v, side=side))
    lead = seq.shape[:-1]
    out = f(seq.reshape(-1, seq.shape[-1]), values.reshape(-1, values.shape[-1]))
    return out.reshape(lead + (values.shape[-1],)).astype(dtype)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None, out=None):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    seq = sorted_sequence
    if sorter is not None:
        seq = take_along_dim(seq, sorter, -1)
    scalar = not _is_t(input)
    if scalar:
        from .._creation import scalar_tensor
        input = scalar_tensor(input, dtype=seq.dtype)
        if seq._data.ndim != 1:
            raise RuntimeError("torch.searchsorted(): input value can be a scalar only when "
                               "boundaries tensor dimension is 1, but we got boundaries tensor "
                               f"dim({seq._data.ndim}) and input value's dim(0) numel(1)")
    if seq._data.ndim > 1 and (input._data.ndim != seq._data.ndim or
                                input._data.shape[:-1] != seq._data.shape[:-1]):
        raise RuntimeError(
            f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            f"dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(seq._data.shape)} and input value tensor "
            f"{list(input._data.shape)}")
    dt = np.int32 if out_int32 else np.int64
    common = D._promote2(seq.dtype, input.dtype).np
    s = seq if seq.dtype.np == common else seq.to(D.from_jax(common))
    v = input if input.dtype.np == common else input.to(D.from_jax(common))
    return apply(_searchsorted, s, v, side="right" if right else "left", dtype=dt)


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries._data.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# ------------------------------------------------------------------ pad (shared helper)

@defop("constant_pad_nd", saves=False, grad_name=lambda kw: {"constant": "ConstantPadNdBackward0",
                                     "reflect": "ReflectionPad{}DBackward0",
                                     "replicate": "ReplicationPad{}DBackward0",
                                     "circular": "CircularPad{}DBackward0"}[kw["mode"]]
       .format(len(kw["pads"])))
def _pad(a, pads, mode, value):
    """``pads``: ((before, after), ...) for the last len(pads) dims, innermost last."""
    n = a.ndim
    full = [(0, 0)] * (n - len(pads)) + list(pads)
    if mode == "constant":
        cfg = [(lo, hi, 0) for lo, hi in full]
        return jax.lax.pad(a, jnp.asarray(value, a.dtype), cfg)
    # negative pads crop first, then the positive parts are padded
    crop = tuple(slice(max(-lo, 0), a.shape[i] - max(-hi, 0)) for i, (lo, hi) in
                 enumerate(full))
    a = a[crop]
    pos = [(max(lo, 0), max(hi, 0)) for lo, hi in full]
    jmode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    return jnp.pad(a, pos, mode=jmode)


def pad(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad: ``pad`` pairs from the last dim backwards."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    n = input._data.ndim
    k = len(pad) // 2
    if k > n:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           "dimension but got padding length " f"{len(pad)} and input of "
                           f"dimension {n}")
    pairs = tuple((pad[2 * i], pad[2 * i + 1]) for i in range(k))[::-1]
    if mode == "constant":
        for i, (lo, hi) in enumerate(pairs):
            size = input._data.shape[n - k + i] + lo + hi
            if size < 0:
                raise RuntimeError(f"The input size {input._data.shape[n - k + i]}, plus "
                                   f"negative padding {lo} and {hi} resulted in a negative "
                                   f"output size, which is invalid. Check dimension "
                                   f"{n - k + i} of your input.")
        return apply(_pad, input, pads=pairs, mode="constant",
                     value=0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode == "reflect":
        for i, (lo, hi) in enumerate(pairs):
            size = input._data.shape[n - k + i]
            if lo >= size or hi >= size:
                raise RuntimeError(f"Argument #4: Padding size should be less than the "
                                   f"corresponding input dimension, but got: padding ({lo}, "
                                   f"{hi}) at dimension {n - k + i} of input "
                                   f"{list(input._data.shape)}")
    return apply(_pad, input, pads=pairs, mode=mode, value=0)


def constant_pad_nd(input, pad, value=0):
    return globals()["pad"](input, pad, "constant", value)


_pad_fn = pad


# ------------------------------------------------------------------ methods and in-place

def _inplace_of(fn):
    def f(self, *args, **kwargs):
        check_inplace(self)
        return commit_inplace(self, fn(self, *args, **kwargs))
    f.__name__ = fn.__name__ + "_"
    return f


for _n, _f in dict(unflatten=unflatten, movedim=movedim, moveaxis=movedim, repeat=_repeat,
                   repeat_interleave=repeat_interleave, fliplr=fliplr,
                   flipud=flipud, roll=roll, rot90=rot90, split=split, tensor_split=tensor_split,
                   chunk=chunk, unbind=unbind, narrow=narrow, select=select, gather=gather,
                   scatter=scatter, scatter_add=scatter_add, index_select=index_select,
                   index_add=index_add, index_copy=index_copy, index_fill=index_fill,
                   masked_select=masked_select, masked_fill=masked_fill, take=take,
                   take_along_dim=take_along_dim, tril=tril, triu=triu, diag=diag,
                   diagonal=diagonal, diag_embed=diag_embed, broadcast_to=broadcast_to,
                   nonzero=nonzero, argwhere=argwhere).items():
    setattr(Tensor, _n, _f)

for _n, _f in dict(tril_=tril, triu_=triu, scatter_=scatter, scatter_add_=scatter_add,
                   masked_fill_=masked_fill, index_add_=index_add, index_copy_=index_copy,
                   index_fill_=index_fill).items():
    setattr(Tensor, _n, _inplace_of(_f))


# ------------------------------------------------------------------ out= for this family

from ._surface import with_out, write_out  # noqa: E402,F401  (the one out= writer)

cat = concat = concatenate = with_out(cat, "cat")
stack = with_out(stack, "stack")
hstack, vstack, dstack, column_stack = (with_out(hstack), with_out(vstack), with_out(dstack),
                                        with_out(column_stack))
row_stack = vstack
gather, index_select, masked_select, take_along_dim = (
    with_out(gather), with_out(index_select), with_out(masked_select), with_out(take_along_dim))
searchsorted, bucketize, nonzero = with_out(searchsorted), with_out(bucketize), with_out(nonzero)


# torch's aliases whose only difference is aliasing bookkeeping (torchlike's views are exact)
def split_with_sizes(input, split_sizes, dim=0):
    return split(input, list(split_sizes), dim)


unsafe_split = split
unsafe_chunk = chunk
unsafe_split_with_sizes = split_with_sizes
__all__ += ["split_with_sizes", "unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes"]
