"""torchlike: PyTorch's API on JAX. ``import torchlike as torch``.

Every kernel is a jitted jax function; autograd is an eager tape whose per-op backward is a
cached, jitted ``jax.vjp``. 64-bit types are enabled in jax on import (torch's int64 and
float64 need them): see README "Dtype policy".
"""
from ._jax_config import configure as _configure_jax

_configure_jax()   # 64-bit types, persistent compilation cache (see _jax_config.py)
from ._distributed_env import join_from_env as _join_distributed  # noqa: E402

_join_distributed()   # a launched rank joins jax.distributed before any device lookup

# dtypes, devices, the Tensor
from ._dtype import (dtype, bool, uint8, uint16, uint32, uint64, int8, int16, short, int32,  # noqa
                     int, int64, long, float16, half, bfloat16, float32, float, float64,
                     double, complex64, cfloat, complex128, cdouble, get_default_dtype,
                     set_default_dtype, promote_types)
from ._dtype import (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz,  # noqa
                     float8_e8m0fnu, complex32, chalf, float4_e2m1fn_x2, bit, bits8, bits16,
                     bits1x8, bits2x4, bits4x2, uint1, uint2, uint3, uint4, uint5, uint6, uint7,
                     int1, int2, int3, int4, int5, int6, int7)
from ._device import device  # noqa: F401,E402
from ._tensor import Tensor, Size  # noqa: F401,E402

# op families (torchlike/_ops/): each module's __all__ lists its public functions
from ._ops.arithmetic import *  # noqa: F401,F403,E402  add, sub, mul, div, pow, ...
from ._ops.compare import *  # noqa: F401,F403,E402  eq, lt, logical_*, bitwise_*, isclose, isin
from ._ops.unary import *  # noqa: F401,F403,E402  exp, log, sin, rounding, is* tests
from ._ops.binary_math import *  # noqa: F401,F403,E402  clamp, maximum, hypot, lerp, where
from ._ops.complex_numbers import *  # noqa: F401,F403,E402
from ._ops.integer_math import *  # noqa: F401,F403,E402  gcd, shifts, frexp, ...
from ._ops.reduce import *  # noqa: F401,F403,E402  sum, mean, var, max/min, scans, all/any
from ._ops.sort import *  # noqa: F401,F403,E402  sort, topk, kthvalue, median, unique, quantile
from ._ops.statistics import *  # noqa: F401,F403,E402  cov, corrcoef, histograms
from ._ops.calculus import *  # noqa: F401,F403,E402  diff, gradient, trapezoid
from ._ops.view import *  # noqa: F401,F403,E402  view, reshape, transpose, squeeze, narrow, ...
from ._ops.convert import *  # noqa: F401,F403,E402  clone, to, dtype shortcuts, new_*
from ._ops.rearrange import *  # noqa: F401,F403,E402  repeat, flip, roll, tril/triu, diagonals
from ._ops.join import *  # noqa: F401,F403,E402  cat, stack, split, chunk, unbind
from .autograd import _STACK  # noqa: E402
_STACK[0] = stack           # (autograd.grad's batched form stacks its rows' gradients)
from ._ops.scatter import *  # noqa: F401,F403,E402  gather, scatter, index_*, masked_*, nonzero
from ._ops.pad import *  # noqa: F401,F403,E402  constant_pad_nd
from ._ops.restructure import *  # noqa: F401,F403,E402  as_strided, scatter_reduce, ...
from ._ops.index import index_put  # noqa: F401,E402  x[key], x[key] = v
from ._ops.products import *  # noqa: F401,F403,E402  matmul, mm, bmm, einsum, addmm, kron, ...
from ._ops.linalg import *  # noqa: F401,F403,E402  inverse, det, cholesky, qr, svd, norms
from ._ops.factorizations import *  # noqa: F401,F403,E402
from ._ops.typeinfo import *  # noqa: F401,F403,E402  finfo/iinfo, legacy types, metadata
from ._ops.sampling import *  # noqa: F401,F403,E402  normal, bernoulli, multinomial, ...
from ._ops.spectral import *  # noqa: F401,F403,E402  stft, istft, window functions
from ._ops.special_ops import *  # noqa: F401,F403,E402  i0, polygamma, ... (torch.special)
from ._ops.deprecated import *  # noqa: F401,F403,E402  range, removed linalg entry points
from ._ops.control_flow import *  # noqa: F401,F403,E402  cond, while_loop
from ._ops.tensor_forms import *  # noqa: F401,F403,E402  torch.detach, torch.fill, cells, ...
from ._ops.view_copies import *  # noqa: F401,F403,E402  t_copy, view_copy, ... (*_copy)
from ._ops.native_forms import *  # noqa: F401,F403,E402  native_layer_norm, embedding_bag, ...
from ._ops import inplace as _inplace_ops  # noqa: F401,E402  copy_, fill_, zero_, t_, ...
from ._creation import *  # noqa: F401,F403,E402  tensor, zeros, arange, ...
from ._sparse import sparse_coo_tensor, spmm  # noqa: F401,E402  the sparse COO layout
from ._random import (Generator, manual_seed, seed, initial_seed, default_generator,  # noqa
                      get_rng_state, set_rng_state)
from ._tensor_str import set_printoptions  # noqa: F401,E402
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled,  # noqa: F401,E402
                                 inference_mode, is_grad_enabled, is_inference_mode_enabled)
from ._runtime import *  # noqa: F401,F403,E402  threads, determinism, default device, constants
from .serialization import save, load  # noqa: F401,E402

# namespaces imported with torchlike (the lazily imported ones are listed below)
from . import autograd, linalg, nn, optim, random, serialization, utils  # noqa: F401,E402
from .nn.modules.rnn import lstm, gru, rnn_tanh, rnn_relu  # noqa: F401,E402  ATen's forms

from ._ops import _surface  # noqa: E402

_surface.bind(__import__(__name__), Tensor)   # methods, in-place forms, out=, nn ops at the top
from ._ops.deprecated_signatures import install as _install  # noqa: E402
_install(__import__(__name__), Tensor)     # torch's deprecated signatures: add_(alpha, other)
del _install

from . import version  # noqa: E402  torch.version; __version__ compares as torch 2.13's
# public classes report their public path, as torch's do (<class 'torchlike.Tensor'>)
for _cls in (Tensor, Size, dtype, device, finfo, iinfo, layout, memory_format):
    _cls.__module__ = __name__
Generator.__module__ = __name__ + "._C"      # (torch's is torch._C.Generator)
__version__ = version.__version__
from . import eager  # noqa: E402  strict / fused eager execution ($TORCHLIKE_EAGER)
from .eager import sync  # noqa: E402,F401
eager._mode_from_environment()
__torchlike_version__ = version.torchlike_version

# Namespaces imported on first use (``torchlike.cuda``, ``torchlike.fft``, ...): importing them
# eagerly would lengthen ``import torchlike`` for programs that never touch them.
from ._lazy import lazy_submodules as _lazy_submodules  # noqa: E402

_namespace = _lazy_submodules(__name__, {
    "fft", "special", "distributions", "func", "interop", "cuda", "backends", "jit", "amp",
    "accelerator", "mps", "cpu", "profiler", "testing", "onnx", "distributed",
    "multiprocessing", "hub", "compiler", "types", "overrides", "library", "export",
    "sparse", "masked", "quantization", "ao", "nested", "signal", "_dynamo",
    "_logging", "__config__", "_C", "fx", "futures", "functional", "storage", "torch_version"})
# top-level names that live in a lazily imported namespace: name -> module
_LAZY_ATTRS = {"vmap": "func", "from_dlpack": "utils.dlpack", "to_dlpack": "utils.dlpack",
               "compile": "_compile", "autocast": "amp", "GradScaler": "amp",
               "OutOfMemoryError": "cuda", "from_jax": "interop",
               "install_as_torch": "_dropin",
               "ops": "_ops_namespace",       # torch.ops (torchlike.library's operators)
               "is_anomaly_enabled": "autograd.anomaly_mode",
               "is_anomaly_check_nan_enabled": "autograd.anomaly_mode",
               "set_anomaly_enabled": "autograd.anomaly_mode",
               "Stream": "_stream", "Event": "_stream", "Future": "futures",
               "ScriptModule": "jit", "PyTorchFileReader": "_C",
               "UntypedStorage": "_ops.restructure", "TypedStorage": "_ops.restructure",
               **{n: "_symbolic" for n in ("SymInt", "SymFloat", "SymBool", "sym_int",
                                           "sym_float", "sym_max", "sym_min", "sym_not",
                                           "sym_ite", "sym_sum", "sym_sqrt",
                                           "get_device_module")}}


_PACKAGE = __name__      # ("torch" is the module's __name__ once it stands in for torch)


def __getattr__(name):
    if name == "torch":         # (torch.torch is torch: kornia annotates with torch.torch.Tensor)
        import sys
        return sys.modules[_PACKAGE]
    if name in _LAZY_ATTRS:
        import importlib
        try:
            return getattr(importlib.import_module("." + _LAZY_ATTRS[name], _PACKAGE), name)
        except ModuleNotFoundError:
            pass
    return _namespace(name)


def _freeze_import_heap():
    """Move every object alive after the import (jax's and torchlike's modules, tables and
    caches: hundreds of thousands of objects) out of the cyclic garbage collector's reach
    (``gc.freeze``). A full collection would otherwise walk them all, and the first calls of a
    process allocate enough (tracing, the interpreter) to trigger several: 0.1 s of a 0.25 s
    first training step. Off with ``TORCHLIKE_GC_FREEZE=0``."""
    import gc
    import os
    if os.environ.get("TORCHLIKE_GC_FREEZE", "1").lower() not in ("0", "false", "off", "no"):
        gc.freeze()


from ._ops import _surface as _surface_checks  # noqa: E402
_surface_checks.refuse_non_tensors(globals())
del _surface_checks

_freeze_import_heap()
