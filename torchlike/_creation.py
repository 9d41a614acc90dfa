"""Tensor creation: tensor, as_tensor, from_numpy, zeros/ones/full/empty, arange, linspace, eye,
the ``*_like`` family and the random constructors rand, randn, randint, randperm."""
from __future__ import annotations

import builtins
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from . import _device
from . import _dtype as D
from . import _random
from ._tensor import Tensor

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty",
           "zeros_like", "ones_like", "full_like", "empty_like", "arange", "linspace",
           "logspace", "eye", "rand", "randn", "randint", "randperm", "rand_like", "randn_like",
           "randint_like", "is_tensor", "scalar_tensor"]


def _finish(arr, device=None, requires_grad=False, pin_memory=False, layout=None):
    """A new leaf tensor over ``arr`` on ``device`` (the default device when None)."""
    if pin_memory:
        _pin_error()
    if layout is not None and str(layout) != "torch.strided":
        raise NotImplementedError(f"layout={layout}: torchlike tensors are dense (torch.strided)")
    t = Tensor._make(_device.put(arr, device))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _pin_error():
    if _device.accelerator_type() is None:
        raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; no "
                           "pinned memory allocator is available on this system.")
    raise NotImplementedError("pin_memory=True: jax manages host buffers itself; pass "
                              "pin_memory=False (transfers with .to(device) still work)")


def _infer_np(data):
    """Convert nested Python data to numpy with torch's dtype inference."""
    if isinstance(data, Tensor):
        return np.asarray(data._data), data.dtype
    if isinstance(data, np.ndarray):
        return data, D.from_jax(data.dtype)
    if isinstance(data, np.generic):
        return np.asarray(data), D.from_jax(data.dtype)
    if isinstance(data, (list, tuple)):
        if any(isinstance(x, Tensor) for x in data):
            parts = [_infer_np(x) for x in data]
            dt = parts[0][1]
            for _, d in parts[1:]:
                dt = D._promote2(dt, d)
            return np.stack([p[0] for p in parts]) if parts else np.zeros(0), dt
    a = np.array(data)
    if a.dtype == object:
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    k = a.dtype.kind
    if k == "b":
        dt = D.bool
    elif k in "iu":
        dt = D.int64
    elif k == "f":
        dt = D.get_default_dtype()
    elif k == "c":
        dt = D.get_default_dtype().to_complex()
    elif a.size == 0:
        dt = D.get_default_dtype()
    else:
        raise TypeError(f"Could not infer dtype of {a.dtype}")
    return a, dt


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (nested lists, scalars, numpy arrays, tensors).

    Python floats become the default dtype (float32), ints int64, bools bool.
    """
    a, dt = _infer_np(data)
    dt = D.to_dtype(dtype) if dtype is not None else dt
    if device is None and isinstance(data, Tensor):
        device = data.device
    # jax may alias an aligned numpy buffer on CPU; torch.tensor always copies
    return _finish(jnp.asarray(np.array(a, dtype=dt.np, copy=True)), device, requires_grad,
                   pin_memory)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        out = data if dtype is None or data.dtype is D.to_dtype(dtype) else data.to(dtype)
        return out if device is None else _device.move(out, device)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray):
    """A tensor with the values of ``ndarray`` (copied: see DIFFERENCES.md)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return Tensor._make(_device.put(jnp.asarray(np.array(ndarray, copy=True)), "cpu"))


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    dt = D.to_dtype(dtype) if dtype is not None else D.get_default_dtype()
    return _finish(jnp.asarray(s, dt.np), device, requires_grad)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = []
    for s in size:
        if isinstance(s, Tensor):
            s = int(s.item())
        if not isinstance(s, numbers.Integral):
            raise TypeError(f"zeros(): argument 'size' must be tuple of ints, but found element "
                            f"of type {type(s).__name__}")
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
        out.append(int(s))
    return tuple(out)


def _dt(dtype, default=None):
    if dtype is None:
        return default or D.get_default_dtype()
    return D.to_dtype(dtype)


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    return _finish(jnp.zeros(_size(size), _dt(dtype).np), device, requires_grad, pin_memory,
                   layout)


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False, memory_format=None):
    return _finish(jnp.ones(_size(size), _dt(dtype).np), device, requires_grad, pin_memory,
                   layout)


empty = zeros


def _scalar_default(v):
    if isinstance(v, Tensor):
        return v.dtype
    if isinstance(v, (bool, np.bool_)):
        return D.bool
    if isinstance(v, numbers.Integral):
        return D.int64
    if isinstance(v, complex):
        return D.get_default_dtype().to_complex()
    return D.get_default_dtype()


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    dt = _dt(dtype, _scalar_default(fill_value))
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _finish(jnp.full(_size((size,)), fill_value, dt.np), device, requires_grad,
                   pin_memory, layout)


def _like(t, dtype):
    return t.dtype if dtype is None else D.to_dtype(dtype)


def _like_dev(t, device):
    """*_like factories keep the input's device unless given one."""
    return t.device if device is None else device


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    return _finish(jnp.zeros(input._data.shape, _like(input, dtype).np),
                   _like_dev(input, device), requires_grad, layout=layout)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return _finish(jnp.ones(input._data.shape, _like(input, dtype).np),
                   _like_dev(input, device), requires_grad, layout=layout)


empty_like = zeros_like


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return _finish(jnp.full(input._data.shape, fill_value, _like(input, dtype).np),
                   _like_dev(input, device), requires_grad, layout=layout)


def _num(v):
    return v.item() if isinstance(v, Tensor) else v


def arange(start, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    """Values from ``start`` to ``end`` (exclusive); int64 for integer arguments."""
    start, end, step = _num(start), _num(end), _num(step)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    is_float = any(isinstance(v, float) for v in (start, end, step))
    dt = _dt(dtype, D.get_default_dtype() if is_float else D.int64)
    n = builtins.max(int(np.ceil((end - start) / step)), 0)
    vals = start + np.arange(n, dtype=np.float64 if is_float else np.int64) * step
    return _finish(jnp.asarray(vals, dt.np), device, requires_grad)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    start, end = _num(start), _num(end)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _dt(dtype)
    # torch computes in the output dtype, stepping from both ends
    return _finish(jnp.linspace(start, end, steps, dtype=dt.np), device, requires_grad)


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    dt = _dt(dtype)
    return _finish(jnp.logspace(_num(start), _num(end), steps, base=base, dtype=dt.np), device,
                   requires_grad)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    return _finish(jnp.eye(n, m, dtype=_dt(dtype).np), device, requires_grad)


# ------------------------------------------------------------------ random

def rand(*size, generator=None, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """Uniform samples in [0, 1)."""
    dt = _dt(dtype)
    arr = jax.random.uniform(_random.next_key(generator), _size(size), dt.np)
    return _finish(arr, device, requires_grad, layout=layout)


def randn(*size, generator=None, out=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """Standard normal samples."""
    dt = _dt(dtype)
    arr = jax.random.normal(_random.next_key(generator), _size(size), dt.np)
    return _finish(arr, device, requires_grad, layout=layout)


def randint(low=0, high=None, size=None, *, generator=None, out=None, dtype=None, layout=None,
            device=None, requires_grad=False):
    """Integers uniform in [low, high); int64 by default."""
    if size is None:
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    dt = _dt(dtype, D.int64)
    arr = jax.random.randint(_random.next_key(generator), _size((size,)), low, high,
                             dtype=np.int64).astype(dt.np)
    return _finish(arr, device, requires_grad, layout=layout)


def randperm(n, *, generator=None, out=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dt = _dt(dtype, D.int64)
    arr = jax.random.permutation(_random.next_key(generator), n).astype(dt.np)
    return _finish(arr, device, requires_grad, layout=layout)


def rand_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return rand(*input.shape, dtype=_like(input, dtype), device=_like_dev(input, device),
                requires_grad=requires_grad, layout=layout)


def randn_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    return randn(*input.shape, dtype=_like(input, dtype), device=_like_dev(input, device),
                 requires_grad=requires_grad, layout=layout)


def randint_like(input, low=0, high=None, *, dtype=None, layout=None, device=None,
                 requires_grad=False, memory_format=None):
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=_like(input, dtype),
                   device=_like_dev(input, device), requires_grad=requires_grad, layout=layout)


def _legacy_tensor(cls, *args, **kwargs):
    """``torch.Tensor(data)`` (a float32 copy) or ``torch.Tensor(*sizes)`` (uninitialised)."""
    if cls is not Tensor and not args:
        return object.__new__(cls)
    if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray, Tensor)):
        t = tensor(args[0], dtype=D.get_default_dtype())
    elif all(isinstance(a, numbers.Integral) for a in args):
        t = zeros(*args)
    else:
        raise TypeError(f"new(): invalid data type for Tensor({args!r})")
    if cls is Tensor:
        return t
    out = object.__new__(cls)
    for s in Tensor.__slots__:
        if s not in ("__weakref__", "__dict__"):
            setattr(out, s, getattr(t, s))
    return out
