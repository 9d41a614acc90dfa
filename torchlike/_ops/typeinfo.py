"""Conversion and metadata: finfo, iinfo, result_type, can_cast, is_floating_point,
is_complex, is_nonzero, numel, typename, ``Tensor.type(str)``, ``type_as``, ``nbytes``,
``itemsize``, ``is_signed``, ``storage_offset``."""
from __future__ import annotations

import warnings

import numpy as np
import jax.numpy as jnp

from .. import _dtype as D
from .._tensor import Size, Tensor, not_a_tensor
from ._surface import methods, toplevel

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
        if d is D.float4_e2m1fn_x2:
            # torch's finfo of it has bits alone: every other limit raises
            self.bits = 8
            return
        fi = jnp.finfo(d.np)
        self.bits = int(fi.bits)
        self.eps = float(fi.eps)
        self.max = float(fi.max)
        self.min = float(fi.min)
        self.tiny = self.smallest_normal = float(fi.tiny)
        self.resolution = 10.0 ** -int(fi.precision)
        if d in D.FLOAT8:
            # torch's float8 limits: resolution 1 (its digits10 is 0), and e5m2fnuz's eps
            # is 2**-3 where ml_dtypes has 2**-2
            self.resolution = 1.0
            if d is D.float8_e5m2fnuz:
                self.eps = 0.125
        self.dtype = d.name

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    # torch's float4_e2m1fn_x2 finfo: the C++ limit each attribute reads, not compiled for it
    _FLOAT4_LIMITS = {"eps": "epsilon", "max": "max", "min": "lowest", "tiny": "min",
                      "smallest_normal": "min", "resolution": "digits10", "dtype": "dtype"}

    def __getattr__(self, name):
        if name in finfo._FLOAT4_LIMITS:
            raise NotImplementedError(f'"{finfo._FLOAT4_LIMITS[name]}" not implemented for '
                                      f"'Float4_e2m1fn_x2'")
        raise AttributeError(f"'torch.finfo' object has no attribute '{name}'")

    def __repr__(self):
        if "dtype" not in self.__dict__:
            raise TypeError("bad argument type for built-in operation")
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")

    __format__ = D.c_type_format("torch.finfo")


class iinfo:
    """torch.iinfo: limits of an integer dtype."""

    def __init__(self, type):
        if not isinstance(type, D.dtype):
            raise TypeError(f"iinfo(): argument 'type' (position 1) must be torch.dtype, not "
                            f"{type.__class__.__name__}")
        if type is D.bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.category != D._INT or type in D.UNBACKED:
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
        # torch prints the limits as C's %g: six significant digits
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"

    __format__ = D.c_type_format("torch.iinfo")


def result_type(tensor1, tensor2):
    """The dtype torch's type promotion gives an op on these two (tensors or Python scalars)."""
    dims, zeros, scalars = [], [], []
    for a in (tensor1, tensor2):
        a = D.parser_scalar(a)      # (a numpy scalar is a Scalar: a numpy bool a float)
        if isinstance(a, Tensor):
            (dims if a._d.ndim else zeros).append(a.dtype)
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


def tensor_arg(fn, x, name="input", position=1):
    """``x`` when it is a Tensor, else torch's TypeError for ``fn``'s Tensor argument."""
    if not isinstance(x, Tensor):
        raise not_a_tensor(fn, x, name, position)
    return x


def is_floating_point(input):
    return tensor_arg("is_floating_point", input).dtype.is_floating_point


def is_complex(input):
    return tensor_arg("is_complex", input).dtype.is_complex


def is_nonzero(input):
    n = tensor_arg("is_nonzero", input).numel()
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(input.item())


def is_storage(obj):
    """Whether ``obj`` is a storage (what ``Tensor.untyped_storage()`` returns)."""
    from .restructure import UntypedStorage
    return isinstance(obj, UntypedStorage)


def numel(input):
    return tensor_arg("numel", input).numel()


def is_same_size(input, other):
    tensor_arg("is_same_size", input)
    tensor_arg("is_same_size", other, "other", 2)
    return tuple(input.shape) == tuple(other.shape)


_TENSOR_TYPES = {D.LEGACY_NAMES[d.name] + "Tensor": d for d in D._ALL}
_TYPE_NAMES = {v.name: k for k, v in _TENSOR_TYPES.items()}


class _LegacyTensorType(type):
    """The metaclass of ``torch.LongTensor`` and friends (torch's ``torch.tensortype``):
    ``isinstance(t, torch.LongTensor)`` is true for an int64 tensor, as in torch."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype

    def __call__(cls, *args, **kwargs):
        """``LongTensor([1, 2])`` (data) or ``LongTensor(2, 3)`` (an uninitialised shape)."""
        return legacy_new(cls.dtype, args, kwargs)

    def __repr__(cls):
        return f"<class 'torch.{cls.__name__}'>"


def _legacy_type(name, d):
    return _LegacyTensorType(name, (), {"dtype": d, "__module__": "torch", "is_cuda": False})


_LegacyTensorType.__name__ = _LegacyTensorType.__qualname__ = "tensortype"
_LegacyTensorType.__module__ = "torchlike"
_LEGACY_TYPES = {name: _legacy_type(name, d) for name, d in _TENSOR_TYPES.items()}
globals().update(_LEGACY_TYPES)
__all__ += list(_LEGACY_TYPES)


def typename(obj):
    """A tensor's type name (``torch.FloatTensor``), else ``module.qualname`` of ``obj`` (a
    class or function) or of its class, the module left out for builtins, as torch's."""
    if isinstance(obj, Tensor):
        return "torch." + _TYPE_NAMES[obj.dtype.name]
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if qualname is None:
        module, qualname = obj.__class__.__module__ or "", obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


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
    if isinstance(dtype, _LegacyTensorType):
        return self.to(dtype.dtype)
    if isinstance(dtype, D.dtype):
        return self.to(dtype)
    if isinstance(dtype, type):
        mod = "" if dtype.__module__ == "builtins" else dtype.__module__ + "."
        raise ValueError(f"invalid type: '{mod}{dtype.__qualname__}'")
    raise TypeError("dtype must be a type, str, or dtype object")


methods(type=_type)
methods(type_as=lambda self, other: self.to(other.dtype))
methods(is_nonzero=is_nonzero)
methods(is_same_size=is_same_size)
methods(is_signed=lambda self: self.dtype.is_signed)
methods(nbytes=property(lambda self: self.numel() * self.dtype.itemsize))
methods(itemsize=property(lambda self: self.dtype.itemsize))


# ------------------------------------------------------------------ tensor metadata torch asks
def is_signed(input):
    return tensor_arg("is_signed", input).dtype.is_signed


def is_inference(input):
    return tensor_arg("is_inference", input).is_inference()


def get_device(input):
    """-1 for a CPU tensor, else the accelerator index (torch's convention)."""
    d = tensor_arg("get_device", input).device
    return -1 if d.type == "cpu" else (d.index or 0)


def is_distributed(input):
    return False


__all__ += ["is_signed", "is_inference", "get_device", "is_distributed"]


def _options(dtype):
    from .._tensor import _CPP
    return (f"TensorOptions(dtype={_CPP[dtype.name]}, device=cpu, layout=Strided, "
            f"requires_grad=false (default), pinned_memory=false (default), "
            f"memory_format=(nullopt))")


def legacy_new(dtype, args, kwargs):
    """torch's legacy constructor (``torch.FloatTensor(...)``, ``torch.Tensor(...)`` with
    ``dtype`` None, ``t.new(...)``): sizes (uninitialised), a sequence of data, or a tensor,
    which must have the constructor's dtype and is then aliased (torch's TypeError otherwise)."""
    from .._creation import empty, tensor
    if set(kwargs) - {"device"}:
        got = ", ".join([type(a).__name__ if not isinstance(a, Tensor) else "Tensor"
                         for a in args] + [f"{k}={type(v).__module__.replace('torchlike', 'torch')}"
                                           f".{type(v).__name__}" if k == "dtype" else
                                           f"{k}={type(v).__name__}" for k, v in kwargs.items()])
        raise TypeError(f"new() received an invalid combination of arguments - got ({got}), "
                        f"but expected one of:\n * (*, torch.device device = None)\n"
                        f" * (torch.Storage storage)\n * (Tensor other)\n"
                        f" * (tuple of ints size, *, torch.device device = None)\n"
                        f" * (object data, *, torch.device device = None)\n")
    dt = D.get_default_dtype() if dtype is None else dtype
    if not args:
        return empty(0, dtype=dt)
    if len(args) == 1:
        a = args[0]
        if isinstance(a, Tensor):
            if dtype is not None and a.dtype is not dtype:
                raise TypeError(f"expected {_options(dtype)} (got {_options(a.dtype)})")
            return a[...]          # an alias of ``a``'s storage (AliasBackward0), as torch
        if isinstance(a, str):
            raise TypeError("new(): invalid data type 'str'")
        if isinstance(a, Size):
            return empty(*a, dtype=dt)
        if not isinstance(a, (int, np.integer)):
            if a is None or isinstance(a, (float, complex, bool)):
                raise TypeError(f"new(): data must be a sequence (got {type(a).__name__})")
            return tensor(a, dtype=dt)
    return empty(*args, dtype=dt)


def _new(self, *args, **kwargs):
    """The legacy ``t.new(...)``: data or sizes, with ``t``'s dtype."""
    return legacy_new(self.dtype, args, kwargs)


def _pin_memory(self, device=None):
    raise RuntimeError("Cannot access accelerator device when none is available.")


def _apply_(self, callable):
    """CPU ``apply_``: ``callable`` on every element, in place (as torch, not differentiable)."""
    import numpy as _np
    if self.requires_grad:
        raise RuntimeError("Can't call apply_() on Variable that requires grad. Use "
                           "var.detach().apply_() instead.")
    vals = _np.vectorize(callable, otypes=[self.dtype.np])(_np.asarray(self._data))
    self._set_data(jnp.asarray(vals, self._d.dtype))
    return self


def _map_(self, tensor, callable):
    """CPU ``map_``: ``callable(self_element, other_element)`` on every element, ``tensor``
    broadcast to ``self``'s shape, in place (as torch, not differentiable)."""
    import numpy as _np
    if self.requires_grad:
        raise RuntimeError("Can't call map_() on Variable that requires grad. Use "
                           "var.detach().map_() instead.")
    if not isinstance(tensor, Tensor) or tensor.dtype is not self.dtype:
        got = typename(tensor) if isinstance(tensor, Tensor) else type(tensor).__name__
        raise TypeError(f"map_: expected {typename(self)} for 'other' (got {got})")
    other = tensor.expand(tuple(self.shape))
    vals = _np.vectorize(callable, otypes=[self.dtype.np])(_np.asarray(self._data),
                                                            _np.asarray(other._data))
    self._set_data(jnp.asarray(vals, self._d.dtype))
    return self


def _contains(self, element):
    if isinstance(element, (Tensor, int, float, bool, complex)):
        return bool((element == self).any().item())
    raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in "
                       f"a {type(element)}.")


def _resize(self, *sizes):
    """Out-of-place ``resize`` with the same element count (see ``resize_``), deprecated as
    in torch."""
    warnings.warn("non-inplace resize is deprecated", stacklevel=2)
    return self.clone().resize_(*sizes)


def _resize_as(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
    return self.clone().resize_(tuple(tensor.shape))


methods(get_device=get_device)
methods(is_distributed=is_distributed)
methods(is_meta=property(lambda self: self.device.type == "meta"))
methods(is_mps=property(lambda self: self.device.type == "mps"))
methods(is_xla=property(lambda self: self.device.type == "xla"))
def _dim_order(self, *, ambiguity_check=False):
    from .._strides import dim_order
    return dim_order(self)


methods(dim_order=_dim_order)
methods(to_dense=lambda self, dtype=None, *, masked_grad=None: self if dtype is None else \
    self.to(dtype))
methods(is_pinned=lambda self, device=None: False)
methods(pin_memory=_pin_memory)
methods(new=_new)
methods(apply_=_apply_, map_=_map_)
methods(**{"__contains__": _contains})
methods(**{"__reversed__": lambda self: self.flip(0) if self.dim() else self})
methods(resize=_resize)
methods(resize_as=_resize_as)
methods(resize_as_=lambda self, other, memory_format=None: self.resize_(tuple(other.shape)))
toplevel("resize_as_")
