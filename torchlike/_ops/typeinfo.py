"""Conversion and metadata: finfo, iinfo, result_type, can_cast, is_floating_point,
is_complex, is_nonzero, numel, typename, ``Tensor.type(str)``, ``type_as``, ``nbytes``,
``itemsize``, ``is_signed``, ``storage_offset``."""
from __future__ import annotations

import numpy as np
import jax.numpy as jnp

from .. import _dtype as D
from .._tensor import Tensor

__all__ = ["finfo", "iinfo", "result_type", "can_cast", "is_floating_point", "is_complex",
           "is_nonzero", "numel", "typename", "is_same_size", "is_storage"]


class finfo:
    """torch.finfo: machine limits of a floating point dtype (the default dtype if none)."""

    def __init__(self, type=None):
        d = D.get_default_dtype() if type is None else type
        if not isinstance(d, D.dtype):
            raise TypeError(f"finfo(): argument 'type' (position 1) must be torch.dtype, not "
                            f"{d.__class__.__name__}")
        if d.category == D._COMPLEX:
            d = d.to_real()
        if d.category != D._FLOAT:
            # (torch's message names 'torch.finfo' here, not the dtype)
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        fi = jnp.finfo(d.np)
        self.bits = int(fi.bits)
        self.eps = float(fi.eps)
        self.max = float(fi.max)
        self.min = float(fi.min)
        self.tiny = self.smallest_normal = float(fi.tiny)
        self.resolution = 10.0 ** -int(fi.precision)
        self.dtype = d.name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """torch.iinfo: limits of an integer dtype."""

    def __init__(self, type):
        if not isinstance(type, D.dtype):
            raise TypeError(f"iinfo(): argument 'type' (position 1) must be torch.dtype, not "
                            f"{type.__class__.__name__}")
        if type is D.bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.category != D._INT:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        ii = np.iinfo(type.np)
        self.bits = int(ii.bits)
        self.min = int(ii.min)
        self.max = int(ii.max)
        self.dtype = type.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def result_type(tensor1, tensor2):
    """The dtype torch's type promotion gives an op on these two (tensors or Python scalars)."""
    dims, zeros, scalars = [], [], []
    for a in (tensor1, tensor2):
        if isinstance(a, Tensor):
            (dims if a._data.ndim else zeros).append(a.dtype)
        elif isinstance(a, (bool, int, float, complex)):
            scalars.append(D.scalar_dtype(a))
        else:
            raise TypeError(f"result_type() received an invalid combination of arguments - got "
                            f"({type(tensor1).__name__}, {type(tensor2).__name__})")
    return D.result_type_of(dims, zeros, scalars)


def can_cast(from_, to):
    """torch.can_cast: False only for a cast to a lower category (float -> int, ...)."""
    f, t = D.to_dtype(from_), D.to_dtype(to)
    if not isinstance(from_, D.dtype) or not isinstance(to, D.dtype):
        raise TypeError("can_cast(): argument 'from_' must be torch.dtype")
    return f.category <= t.category


def is_floating_point(input):
    return input.dtype.is_floating_point


def is_complex(input):
    return input.dtype.is_complex


def is_nonzero(input):
    n = input.numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def is_storage(obj):
    """No torchlike object is a torch storage (tensors own jax arrays)."""
    return False


def numel(input):
    return input.numel()


def is_same_size(input, other):
    return tuple(input.shape) == tuple(other.shape)


_TENSOR_TYPES = {"FloatTensor": D.float32, "DoubleTensor": D.float64, "HalfTensor": D.float16,
                 "BFloat16Tensor": D.bfloat16, "LongTensor": D.int64, "IntTensor": D.int32,
                 "ShortTensor": D.int16, "CharTensor": D.int8, "ByteTensor": D.uint8,
                 "BoolTensor": D.bool, "ComplexFloatTensor": D.complex64,
                 "ComplexDoubleTensor": D.complex128}
_TYPE_NAMES = {v.name: k for k, v in _TENSOR_TYPES.items()}


def typename(obj):
    if isinstance(obj, Tensor):
        return "torch." + _TYPE_NAMES[obj.dtype.name]
    return type(obj).__module__ + "." + type(obj).__qualname__


def _type(self, dtype=None, non_blocking=False, **kwargs):
    """``t.type()`` names the tensor type; ``t.type(dtype)`` or ``t.type('torch.XTensor')``
    converts."""
    if dtype is None:
        return typename(self)
    if isinstance(dtype, str):
        name = dtype
        if name.startswith("torch.cuda."):
            raise RuntimeError("torchlike: CUDA tensor types are not available")
        if not name.startswith("torch.") or name[6:] not in _TENSOR_TYPES:
            raise ValueError(f"invalid type: '{dtype}'")
        return self.to(_TENSOR_TYPES[name[6:]])
    return self.to(dtype)


Tensor.type = _type
Tensor.type_as = lambda self, other: self.to(other.dtype)
Tensor.is_nonzero = is_nonzero
Tensor.is_same_size = is_same_size
Tensor.is_signed = lambda self: self.dtype.is_signed
Tensor.nbytes = property(lambda self: self.numel() * self.dtype.itemsize)
Tensor.itemsize = property(lambda self: self.dtype.itemsize)
