"""Shape ops and dtype conversion: reshape/view, transpose, permute, squeeze, unsqueeze, expand,
flatten, clone, contiguous, ``to`` and the dtype shortcuts."""
from __future__ import annotations

import numpy as np
import jax.numpy as jnp

from .. import _device
from .. import _dtype as D
from .._tensor import Tensor, _wrap_dim
from ._registry import apply, defop, method

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


@defop("view", saves=False, grad_name="ViewBackward0")
def _view(a, shape):
    return jnp.reshape(a, shape)


@defop("transpose", saves=False, grad_name="TransposeBackward0")
def _transpose(a, d0, d1):
    return jnp.swapaxes(a, d0, d1)


@defop("t", saves=False, grad_name="TBackward0")
def _t(a):
    return a.T


@defop("permute", saves=False, grad_name="PermuteBackward0")
def _permute(a, dims):
    return jnp.transpose(a, dims)


@defop("unsqueeze", saves=False, grad_name="UnsqueezeBackward0")
def _unsqueeze(a, dim):
    return jnp.expand_dims(a, dim)


def _squeeze_name(kw):
    return {None: "SqueezeBackward0", "int": "SqueezeBackward1"}.get(kw["kind"],
                                                                      "SqueezeBackward2")


@defop("squeeze", saves=False, grad_name=_squeeze_name)
def _squeeze(a, dims, kind):
    dims = tuple(d for d in dims if a.shape[d] == 1) if dims is not None else None
    return jnp.squeeze(a, dims)


@defop("expand", saves=False, grad_name="ExpandBackward0")
def _expand(a, shape):
    return jnp.broadcast_to(a, shape)


@defop("clone", saves=False, grad_name="CloneBackward0")
def _clone(a):
    return jnp.array(a, copy=True)


@defop("to_copy", saves=False, grad_name="ToCopyBackward0")
def _to_copy(a, dtype):
    return a.astype(dtype)


def reshape(input, *shape):
    """The same values in a new shape (one dim may be -1)."""
    shape = infer_shape(_shape_arg(shape), input.numel())
    if shape == tuple(input._data.shape):
        return apply(_view, input, shape=shape)
    return apply(_view, input, shape=shape)


def view(self, *shape):
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        return self.to(shape[0])
    return reshape(self, *shape)


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
    return apply(_permute, input, dims=tuple(_wrap_dim(d, n) for d in dims))


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
    return apply(_expand, self, shape=tuple(out))


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
        target = _device.device(dev)
        if target != self.device:
            import jax
            moved = Tensor._make(jax.device_put(out._data, _device.to_jax(target)),
                                 out.grad_fn, out._output_nr)
            moved._requires_grad = out._requires_grad
            out = moved
    return out


def _type(self, dtype=None, non_blocking=False):
    if dtype is None:
        names = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
                 "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
                 "int16": "ShortTensor", "int8": "CharTensor", "uint8": "ByteTensor",
                 "bool": "BoolTensor", "complex64": "ComplexFloatTensor",
                 "complex128": "ComplexDoubleTensor"}
        return "torch." + names[self.dtype.name]
    return self.to(dtype)


for _n, _f in dict(reshape=reshape, view=view, transpose=transpose, swapaxes=swapaxes,
                   swapdims=swapaxes, t=t, permute=permute, unsqueeze=unsqueeze,
                   squeeze=squeeze, flatten=flatten, expand=expand, clone=clone, to=_to,
                   type=_type).items():
    setattr(Tensor, _n, _f)

Tensor.view_as = lambda self, other: reshape(self, *other.shape)
Tensor.reshape_as = lambda self, other: reshape(self, *other.shape)
Tensor.expand_as = lambda self, other: expand(self, *other.shape)
Tensor.contiguous = lambda self, memory_format=None: self
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
