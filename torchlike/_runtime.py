"""Process-wide knobs torch scripts set on line one: threads, determinism, default device,
matmul precision, constants, layouts and memory formats.

What each knob does on jax:

* ``set_num_threads`` / ``set_num_interop_threads``: recorded and reported back; XLA sizes its
  CPU thread pool when its backend starts, so the value does not change jax's threads.
* ``use_deterministic_algorithms``: recorded. XLA's CPU kernels are deterministic; on GPU jax
  reads ``--xla_gpu_deterministic_ops`` from ``XLA_FLAGS`` when its backend starts.
* ``set_float32_matmul_precision``: ``highest``/``high``/``medium`` become jax's
  ``jax_default_matmul_precision`` ``highest``/``high``/``bfloat16`` (torch's default, full fp32,
  is also set at import where jax has a GPU or TPU, whose own default is TF32/bf16).
* ``set_default_device``: the device factories use (``torchlike._device``); thread-local.
"""
from __future__ import annotations

import math as _math
import os as _os
import warnings as _warnings

import jax as _jax

from . import _device
from ._dtype import c_type_format

__all__ = ["set_num_threads", "get_num_threads", "set_num_interop_threads",
           "get_num_interop_threads", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
           "set_deterministic_debug_mode", "get_deterministic_debug_mode",
           "set_float32_matmul_precision", "get_float32_matmul_precision",
           "set_default_device", "get_default_device", "set_warn_always", "is_warn_always_enabled",
           "set_flush_denormal", "is_autocast_enabled", "get_autocast_dtype",
           "set_autocast_enabled", "set_autocast_dtype", "clear_autocast_cache",
           "pi", "e", "inf", "nan", "newaxis",
           "layout", "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
           "sparse_bsc", "jagged", "memory_format", "contiguous_format", "legacy_contiguous_format",
           "AcceleratorError", "FatalError", "channels_last",
           "channels_last_3d", "preserve_format", "_assert", "_assert_async"]

# ------------------------------------------------------------------ constants

pi = _math.pi
e = _math.e
inf = _math.inf
nan = _math.nan
newaxis = None


class layout:
    """torch.layout: how a tensor's elements are stored (torchlike tensors are all strided)."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"torch.{self._name}"

    __format__ = c_type_format("torch.layout")

    def __reduce__(self):
        return self._name

    def __eq__(self, other):
        # Tensor.layout still answers the string "torch.strided"
        if isinstance(other, str):
            return other == repr(self)
        return self is other

    def __hash__(self):
        return hash(self._name)


strided = layout("strided")
sparse_coo = layout("sparse_coo")
sparse_csr = layout("sparse_csr")
sparse_csc = layout("sparse_csc")
sparse_bsr = layout("sparse_bsr")
sparse_bsc = layout("sparse_bsc")
jagged = layout("jagged")


class memory_format:
    """torch.memory_format. torchlike arrays have no strides of their own: every format reads
    and computes the same values; ``Tensor.is_contiguous(memory_format=...)`` is the only place
    it is asked."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"torch.{self._name}"

    __format__ = c_type_format("torch.memory_format")

    def __reduce__(self):
        return self._name


contiguous_format = memory_format("contiguous_format")
legacy_contiguous_format = contiguous_format        # (torch's alias: the same object)
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")


class AcceleratorError(RuntimeError):
    """torch.AcceleratorError: an accelerator runtime's error (a RuntimeError)."""


AcceleratorError.__module__ = "torchlike"


class FatalError(Exception):
    """torch.FatalError."""


FatalError.__module__ = "torchlike"


def _assert(condition, message):
    """torch._assert: ``assert`` that also works under tracing."""
    if not condition:
        raise AssertionError(message)


def _assert_async(tensor, assert_msg=None):
    """torch._assert_async: raise unless the one-element ``tensor`` is nonzero (read at once:
    torch's CPU kernel is synchronous too)."""
    if not bool(tensor):        # (torch's errors for an empty or a many-element tensor)
        raise RuntimeError("Expected Tensor with single nonzero value, but got zero"
                           if assert_msg is None else assert_msg)


# ------------------------------------------------------------------ threads

_threads = {"intra": None, "inter": None}


def _default_threads():
    try:
        return len(_os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return _os.cpu_count() or 1


def _check_int(name, n):
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")


def set_num_threads(int):
    """Record the intra-op thread count (XLA's pool is sized when its backend starts)."""
    _check_int("set_num_threads", int)
    _threads["intra"] = int


def get_num_threads():
    return _threads["intra"] or _default_threads()


def set_num_interop_threads(int):
    _check_int("set_num_interop_threads", int)
    _threads["inter"] = int


def get_num_interop_threads():
    return _threads["inter"] or _default_threads()


# ------------------------------------------------------------------ determinism

_det = {"on": False, "warn_only": False}
_warn_always = [False]


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Record torch's determinism switch; XLA's CPU kernels are deterministic already."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    _det["on"] = mode
    _det["warn_only"] = bool(warn_only) and mode


def are_deterministic_algorithms_enabled():
    return _det["on"]


def is_deterministic_algorithms_warn_only_enabled():
    return _det["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    if isinstance(debug_mode, str):
        modes = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in modes:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = modes[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _det["on"]:
        return 0
    return 1 if _det["warn_only"] else 2


def set_warn_always(b):
    _warn_always[0] = bool(b)


def is_warn_always_enabled():
    return _warn_always[0]


def set_flush_denormal(mode):
    """torch returns whether the CPU supports it; XLA decides denormals itself: False."""
    return False


# ------------------------------------------------------------------ matmul precision

_PRECISION_TO_JAX = {"highest": "highest", "high": "high", "medium": "bfloat16"}
_precision = ["highest"]


def set_float32_matmul_precision(precision):
    """``highest`` (full fp32), ``high`` (TF32 / bf16x3) or ``medium`` (bf16) for fp32 matmuls
    and convolutions: set as jax's ``jax_default_matmul_precision``."""
    if precision not in _PRECISION_TO_JAX:
        _warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                       f"setFloat32MatmulPrecision call has no effect.", UserWarning,
                       stacklevel=2)
        return
    _precision[0] = precision
    _jax.config.update("jax_default_matmul_precision", _PRECISION_TO_JAX[precision])


def get_float32_matmul_precision():
    return _precision[0]


# ------------------------------------------------------------------ default device

set_default_device = _device.set_default_device
get_default_device = _device.get_default_device


# ------------------------------------------------------------------ autocast queries

def _amp():
    from . import amp
    return amp


def is_autocast_enabled(device_type=None):
    return _amp().is_autocast_enabled(device_type)


def set_autocast_enabled(device_type, enabled=None):
    return _amp().set_autocast_enabled(device_type, enabled)


def get_autocast_dtype(device_type):
    return _amp().get_autocast_dtype(device_type)


def set_autocast_dtype(device_type, dtype):
    return _amp().set_autocast_dtype(device_type, dtype)


def clear_autocast_cache():
    """torchlike's autocast keeps no cast cache: nothing to clear."""


_CACHE = [True]


def is_autocast_cache_enabled():
    return _CACHE[0]


def _bool(enabled):
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")


def set_autocast_cache_enabled(enabled):
    """torch's cache of autocast's casts (a speed switch; torchlike casts inside each op's
    program, with no cache to turn off: the values are the same either way)."""
    _bool(enabled)
    _CACHE[0] = enabled


# torch's per-device forms, deprecated for the forms taking a device type: each warns so. IPU
# and XLA autocast never meets a tensor here (no such devices): their state is only kept
_OTHER = {"ipu": [False, None], "xla": [False, None]}


def _deprecated(old, new):
    _warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                   DeprecationWarning, stacklevel=3)


def _enabled(dev):
    return _OTHER[dev][0] if dev in _OTHER else _amp().is_autocast_enabled(dev)


def _set_enabled(dev, enabled):
    if dev in _OTHER:
        _OTHER[dev][0] = enabled
    else:
        _amp().set_autocast_enabled(dev, enabled)


def _dtype(dev):
    if dev in _OTHER:
        from . import _dtype as D
        got = _OTHER[dev][1]
        return got if got is not None else (D.float16 if dev == "ipu" else D.bfloat16)
    return _amp().get_autocast_dtype(dev)


def _set_dtype(dev, dtype):
    if dev in _OTHER:
        _OTHER[dev][1] = dtype
    else:
        _amp().set_autocast_dtype(dev, dtype)


def _per_device(name, dev):
    """torch.<get/set/is>_autocast_<name>_<...>: the deprecated per-device forms."""
    def is_enabled():
        _deprecated(f"is_autocast_{name}_enabled()", f"is_autocast_enabled('{dev}')")
        return _enabled(dev)

    def set_enabled(enabled):
        _bool(enabled)              # (torch's argument parser refuses it before the warning)
        _deprecated(f"set_autocast_{name}_enabled(enabled)",
                    f"set_autocast_enabled('{dev}', enabled)")
        _set_enabled(dev, enabled)

    def get_dtype():
        _deprecated(f"get_autocast_{name}_dtype()", f"get_autocast_dtype('{dev}')")
        return _dtype(dev)

    def set_dtype(dtype):
        _deprecated(f"set_autocast_{name}_dtype(dtype)", f"set_autocast_dtype('{dev}', dtype)")
        _set_dtype(dev, dtype)

    out = {f"get_autocast_{name}_dtype": get_dtype, f"set_autocast_{name}_dtype": set_dtype}
    if name != "gpu":       # (torch.is_autocast_enabled() is cuda's, not deprecated)
        out[f"is_autocast_{name}_enabled"] = is_enabled
        out[f"set_autocast_{name}_enabled"] = set_enabled
    for k, f in out.items():
        f.__name__ = f.__qualname__ = k
    return out


for _name, _dev in (("cpu", "cpu"), ("gpu", "cuda"), ("ipu", "ipu"), ("xla", "xla")):
    _made = _per_device(_name, _dev)
    globals().update(_made)
    __all__ += list(_made)
__all__ += ["is_autocast_cache_enabled", "set_autocast_cache_enabled"]


# ------------------------------------------------------------------ at import

def _init():
    # torch creates tensors on the CPU and runs fp32 matmuls in full precision by default;
    # jax, given an accelerator, does neither.
    _device.cuda_devices()          # looks jax's backends up once (factories' fast path)
    try:
        backend = _jax.default_backend()
    except RuntimeError:
        return
    if backend != "cpu":
        _jax.config.update("jax_default_device", _jax.local_devices(backend="cpu")[0])
        _jax.config.update("jax_default_matmul_precision", "highest")


_init()
