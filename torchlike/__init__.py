"""torchlike: PyTorch's API on JAX. ``import torchlike as torch``.

Every kernel is a jitted jax function; autograd is an eager tape whose per-op backward is a
cached, jitted ``jax.vjp``. 64-bit types are enabled in jax on import (torch's int64 and
float64 need them): see README "Dtype policy".
"""
from ._jax_config import configure as _configure_jax

_configure_jax()   # 64-bit types, persistent compilation cache (see _jax_config.py)

from ._dtype import (dtype, bool, uint8, int8, int16, short, int32, int, int64, long,  # noqa
                     float16, half, bfloat16, float32, float, float64, double, complex64,
                     cfloat, complex128, cdouble, get_default_dtype, set_default_dtype,
                     promote_types)
from ._device import device  # noqa: F401
from ._tensor import Tensor, Size  # noqa: F401
from ._ops import pointwise, reduce, shape, index, linalg, inplace  # noqa: F401,E402 (attach methods)
from ._ops.pointwise import *  # noqa: F401,F403
from ._ops import pointwise2  # noqa: F401,E402 (issue 3: pointwise math)
from ._ops.pointwise2 import *  # noqa: F401,F403
from ._ops.reduce import *  # noqa: F401,F403
from ._ops.shape import *  # noqa: F401,F403
from ._ops.linalg import *  # noqa: F401,F403
random = __import__("importlib").import_module(".random", __name__)  # issue 3: torch.random
from ._ops.linalg_extra import *  # noqa: F401,F403,E402 (issue 3: more linear algebra)
from ._ops.shape_extra import *  # noqa: F401,F403,E402 (issue 3: more shape ops)
from ._ops.typeinfo import *  # noqa: F401,F403,E402 (issue 3: conversion and metadata)
from ._ops.sampling import *  # noqa: F401,F403,E402 (issue 3: random sampling)
linalg = __import__("importlib").import_module(".linalg", __name__)  # issue 3: torch.linalg
from ._ops.complex_numbers import *  # noqa: F401,F403,E402
from ._ops.integer_math import *  # noqa: F401,F403,E402
from ._ops.calculus import *  # noqa: F401,F403,E402
from ._ops.statistics import *  # noqa: F401,F403,E402
from ._ops.deprecated import *  # noqa: F401,F403,E402
from ._ops.control_flow import *  # noqa: F401,F403,E402
from ._ops.index import index_put  # noqa: F401,E402 (issue 3: indexing)
from ._creation import *  # noqa: F401,F403
from ._random import (Generator, manual_seed, seed, initial_seed, default_generator,  # noqa
                      get_rng_state, set_rng_state)
from ._tensor_str import set_printoptions  # noqa: F401
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled,  # noqa: F401
                                 inference_mode, is_grad_enabled, is_inference_mode_enabled)
from . import autograd  # noqa: F401
from . import nn  # noqa: F401
from . import utils  # noqa: F401
from . import optim  # noqa: F401,E402 (issue 6)
from .serialization import save, load  # noqa: F401,E402 (issue 6)

from ._runtime import *  # noqa: F401,F403,E402 (threads, determinism, default device, ...)
from ._ops.spectral import *  # noqa: F401,F403,E402 (stft, istft, window functions)
from ._ops.special_ops import *  # noqa: F401,F403,E402 (i0, polygamma, ... shared with special)

from ._ops import _surface  # noqa: E402

_surface.bind(__import__(__name__), Tensor)   # methods, in-place forms, out=, nn ops at the top

__version__ = "0.1.0"

# Namespaces imported on first use (``torchlike.cuda``, ``torchlike.fft``, ...): importing them
# eagerly would lengthen ``import torchlike`` for programs that never touch them.
from ._lazy import lazy_submodules as _lazy_submodules  # noqa: E402

_namespace = _lazy_submodules(__name__, {
    "fft", "special", "distributions", "func", "interop", "cuda", "backends", "jit", "amp",
    "accelerator", "mps", "cpu", "profiler", "testing", "onnx", "distributed",
    "multiprocessing", "hub", "compiler", "types", "overrides", "library", "export",
    "sparse", "masked", "quantization", "ao", "nested", "signal"})
# top-level names that live in a lazily imported namespace: name -> module
_LAZY_ATTRS = {"vmap": "func", "from_dlpack": "utils.dlpack", "compile": "_compile",
               "autocast": "amp"}


def __getattr__(name):
    if name in _LAZY_ATTRS:
        import importlib
        try:
            return getattr(importlib.import_module("." + _LAZY_ATTRS[name], __name__), name)
        except ModuleNotFoundError:
            pass
    return _namespace(name)
