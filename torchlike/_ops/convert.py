"""Copies and conversions: clone, contiguous, ``to`` (dtype and device), the dtype shortcuts
(``float()``, ``long()``, ...) and the ``new_*`` factories."""
from __future__ import annotations

import jax.numpy as jnp

from .. import _device
from .. import _dtype as D
from .. import _vmap_levels
from .._registry import apply, defop
from .._tensor import Tensor
from ._surface import method, methods

__all__ = ['clone']


@defop("clone", saves=False, grad_name="CloneBackward0", vjp=lambda cots, xs, needs: [cots[0]])
def _clone(a):
    return jnp.array(a, copy=True)


@defop("to_copy", saves=False, grad_name="ToCopyBackward0")
def _to_copy(a, dtype):
    return D.cast(a, dtype)


def _copy_strides(t, memory_format):
    """The strides torch gives a copy of ``t`` made with ``memory_format``."""
    from .._strides import format_strides, preserved_strides
    name = getattr(memory_format, "_name", "preserve_format")
    if name == "preserve_format":
        return preserved_strides(t)
    return format_strides(memory_format, tuple(t._d.shape))


def clone(input, *, memory_format=None):
    from .._strides import set_layout
    return set_layout(apply(_clone, input), _copy_strides(input, memory_format))


_TO_OVERLOADS = (
    ("device", "dtype", "non_blocking", "copy"),
    ("dtype", "non_blocking", "copy"),
    ("tensor", "non_blocking", "copy"),
)
_TO_SIGNATURES = (
    " * (torch.device device = None, torch.dtype dtype = None, bool non_blocking = False, "
    "bool copy = False, *, torch.memory_format memory_format = None)\n"
    " * (torch.dtype dtype, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n"
    " * (Tensor tensor, bool non_blocking = False, bool copy = False, *, "
    "torch.memory_format memory_format = None)\n")


def _to_param_ok(name, v):
    if name == "device":
        return v is None or isinstance(v, (str, _device.device)) or (
            isinstance(v, int) and not isinstance(v, bool))
    if name == "dtype":
        return v is None or isinstance(v, D.dtype) or any(v is t for t in (float, int, bool,
                                                                            complex))
    if name == "tensor":
        return isinstance(v, Tensor)
    if name == "memory_format":
        from .._runtime import memory_format
        return v is None or isinstance(v, memory_format)
    return isinstance(v, bool)              # non_blocking, copy


def _to_args(args, kwargs):
    """torch's parse of ``to``'s arguments against its three overloads: ``{param: value}``,
    or torch's TypeError naming what it got."""
    for params in _TO_OVERLOADS:
        if len(args) > len(params) or (params[0] != "device" and not args
                                       and params[0] not in kwargs):
            continue
        got = dict(zip(params, args))
        ok = True
        for k, v in kwargs.items():
            if k in got or (k not in params and k != "memory_format"):
                ok = False
                break
            got[k] = v
        if ok and all(_to_param_ok(k, v) for k, v in got.items()):
            return got
    from .._creation import _tp_name
    # (torch's format: keywords sorted, each followed by ", " when no positional came first)
    kws = [f"{k}={_tp_name(kwargs[k])}" for k in sorted(kwargs)]
    shown = ", ".join([_tp_name(a) for a in args] + kws) if args else \
        "".join(k + ", " for k in kws)
    raise TypeError(f"to() received an invalid combination of arguments - got ({shown}), but "
                    f"expected one of:\n{_TO_SIGNATURES}")


def _to(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)``, ``to(other)``, ``to(device, dtype)``; returns self when
    nothing changes. A copy keeps ``self``'s layout, or takes ``memory_format``'s."""
    from .._strides import set_layout, suggested_format
    got = _to_args(args, kwargs)
    dtype = got.get("dtype")    # (a Python type: float is float64, complex complex128)
    dev = got.get("device")
    copy = got.get("copy", False)
    fmt = got.get("memory_format")
    if "tensor" in got:
        dtype, dev = got["tensor"].dtype, got["tensor"].device
    # (torch copies for a format only where the tensor's suggested format is another one: a
    # transposed matrix taken ``to(..., memory_format=contiguous_format)`` is itself)
    relayout = fmt is not None and getattr(fmt, "_name", "") != "preserve_format" \
        and suggested_format(self) != getattr(fmt, "_name", "")
    out = self
    if dtype is not None:
        warn_complex_discard(self.dtype, D.to_dtype(dtype))
    if dtype is not None and D.to_dtype(dtype) is not self.dtype and self.device.type == "meta":
        out = Tensor._make(self._data.astype(D.to_dtype(dtype).np))      # shape and dtype only
        out._requires_grad = self._requires_grad and D.to_dtype(dtype).is_floating_point
    elif dtype is not None and D.to_dtype(dtype) is not self.dtype:
        out = apply(_to_copy, self, dtype=D.to_dtype(dtype).np)
    elif copy or relayout:
        out = apply(_clone, self)
    if dev is not None:
        out = _device.move(out, dev)
    if out is not self:
        set_layout(out, _copy_strides(self, fmt))
    return out


def warn_complex_discard(src, dst):
    """torch's once-a-process warning where a copy casts complex values (dtype ``src``) to the
    real dtype ``dst`` (bool reads the whole value: no warning)."""
    if src.is_complex and not dst.is_complex and dst is not D.bool:
        from .factorizations import _deprecated
        _deprecated("complex to real", "Casting complex values to real discards the imaginary "
                    "part",
                    at="Copy.cpp:307")


def _contiguous(self, memory_format=None):
    """self if contiguous in ``memory_format``, else a copy in it (so writes to it do not reach
    the base)."""
    from .._strides import is_contiguous
    from .._runtime import contiguous_format
    fmt = contiguous_format if memory_format is None else memory_format
    if is_contiguous(self, fmt):
        return self
    if getattr(fmt, "_name", None) == "preserve_format":
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return clone(self, memory_format=fmt)


methods(contiguous=_contiguous, clone=clone, to=_to,
        cpu=lambda self, memory_format=None: _to(self, "cpu"),
        cuda=lambda self, device=None, non_blocking=False, memory_format=None: _to(
            self, _device.device("cuda", device if isinstance(device, int) else None)),
        **{k: (lambda k: lambda self, device=None, non_blocking=False, memory_format=None: _to(
            self, _device.device(k, device if isinstance(device, int) else None)))(k)
           for k in ("xpu", "ipu", "mtia")})


def _cast_method(dt):
    def fn(self, memory_format=None):
        if memory_format is None and self.dtype is dt:
            return self         # (``_to``'s answer, without reading its arguments)
        return _to(self, dt, memory_format=memory_format)
    return fn


methods(**{n: _cast_method(d) for n, d in dict(
    float=D.float32, double=D.float64, half=D.float16, bfloat16=D.bfloat16, long=D.int64,
    int=D.int32, short=D.int16, char=D.int8, byte=D.uint8, bool=D.bool, cfloat=D.complex64,
    cdouble=D.complex128).items()})


def _new_size(name, args, size):
    """``new_zeros(2, 3)``, ``new_zeros((2, 3))`` or ``new_zeros(size=(2, 3))``, as torch."""
    if size is None:
        return args
    if args:
        raise TypeError(f"{name}() got multiple values for argument 'size'")
    return (size,)


def _new_device(self, device):
    return self.device if device is None else device


def _as_method(name, factory, *args, **kwargs):
    """``factory(*args, **kwargs)`` for Tensor method ``name``: torch's argument errors name
    the method (``new_zeros(): argument 'size' ...``), and a negative size is reported as
    the method's empty allocation reports it."""
    fname = factory.__name__
    try:
        return factory(*args, **kwargs)
    except TypeError as e:
        msg = str(e)
        if msg.startswith(fname + "()"):
            raise TypeError(name + msg[len(fname):]) from None
        raise
    except RuntimeError as e:
        if str(e) == f"{fname}: Dimension size must be non-negative.":
            dims = list(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) \
                else list(args)
            bad = next(d for d in dims if d < 0)
            raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: "
                               f"{dims}") from None
        raise


@method("new_tensor")
def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    from .._creation import tensor
    if isinstance(data, Tensor):
        from .._creation import _tensor, copy_construct_warning
        copy_construct_warning("tensor.new_tensor(sourceTensor)")
        return _tensor(data, dtype=dtype or self.dtype, device=_new_device(self, device),
                       requires_grad=requires_grad)
    return tensor(data, dtype=dtype or self.dtype, device=_new_device(self, device),
                  requires_grad=requires_grad)


def _new_filled(name, factory):
    def new(self, *args, size=None, dtype=None, device=None, requires_grad=False, layout=None,
            pin_memory=False):
        return _vmap_levels.tie_tensor(_as_method(
            name, factory, *_new_size(name, args, size), dtype=dtype or self.dtype,
            device=_new_device(self, device), requires_grad=requires_grad, layout=layout,
            pin_memory=pin_memory), self)
    new.__name__ = new.__qualname__ = name
    return new


def _declare_new_filled():
    from .. import _creation
    for name, factory in (("new_zeros", _creation.zeros), ("new_ones", _creation.ones),
                          ("new_empty", _creation.zeros)):
        method(name)(_new_filled(name, factory))


_declare_new_filled()


@method("new_full")
def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
              layout=None, pin_memory=False):
    from .._creation import full
    return _vmap_levels.tie_tensor(_as_method(
        "new_full", full, size, fill_value, dtype=dtype or self.dtype,
        device=_new_device(self, device), requires_grad=requires_grad, layout=layout,
        pin_memory=pin_memory), self)


@method("new_empty_strided")
def _new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False,
                       layout=None, pin_memory=False):
    from .tensor_forms import empty_strided
    return _vmap_levels.tie_tensor(empty_strided(
        size, stride, dtype=dtype or self.dtype, layout=layout,
        device=_new_device(self, device), requires_grad=requires_grad,
        pin_memory=pin_memory), self)


