"""torchlike.backends: the switches torch scripts set (cudnn, cuda.matmul, mps, mkldnn, ...).

XLA picks its own kernels, so most switches are recorded and read back without changing a
computation. The ones that map onto jax:

* ``cuda.matmul.allow_tf32`` is ``torch.get_float32_matmul_precision() != 'highest'`` (setting
  it to True is ``set_float32_matmul_precision('high')``, i.e. jax's matmul precision);
* ``cudnn.is_available()`` / ``cuda.is_built()`` answer whether jax has a GPU backend;
* ``mps.is_available()`` is False (jax has no Metal backend here).
"""
from __future__ import annotations

import contextlib
import sys
import types

from .. import _device

__all__ = ["cudnn", "cuda", "mps", "mkldnn", "mkl", "openmp", "opt_einsum", "cpu", "mha",
           "quantized", "xnnpack", "nnpack", "disable_global_flags", "flags_frozen"]

_flags_frozen = [False]


def disable_global_flags():
    _flags_frozen[0] = True


def flags_frozen():
    return _flags_frozen[0]


class _Module(types.ModuleType):
    """A submodule whose listed attributes are flags (unknown attributes raise, as torch's
    ``matmul`` does)."""

    def __init__(self, name, doc=""):
        super().__init__(f"{__name__}.{name}", doc)
        sys.modules[self.__name__] = self


# ------------------------------------------------------------------ cudnn

class _Cudnn(_Module):
    enabled = True
    benchmark = False
    benchmark_limit = None       # torch reports None where cuDNN is absent
    deterministic = False
    allow_tf32 = True

    def is_available(self):
        return bool(_device.cuda_devices())

    def version(self):
        """cuDNN's version where jax has a GPU (jax bundles it), else None as torch's CPU
        build."""
        if not _device.cuda_devices():
            return None
        try:
            from jax._src.lib import cuda_versions
            return int(cuda_versions.cudnn_get_version())
        except Exception:
            return None

    def is_acceptable(self, tensor):
        return self.is_available() and tensor.is_cuda

    @contextlib.contextmanager
    def flags(self, enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
              allow_tf32=True):
        old = (self.enabled, self.benchmark, self.benchmark_limit, self.deterministic,
               self.allow_tf32)
        (self.enabled, self.benchmark, self.benchmark_limit, self.deterministic,
         self.allow_tf32) = (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)
        try:
            yield
        finally:
            (self.enabled, self.benchmark, self.benchmark_limit, self.deterministic,
             self.allow_tf32) = old


cudnn = _Cudnn("cudnn", "cuDNN switches (recorded: XLA chooses convolution algorithms itself)")


# ------------------------------------------------------------------ cuda

class _Matmul:
    """``torch.backends.cuda.matmul``: the fp32 matmul precision knobs."""

    _names = ("allow_tf32", "allow_fp16_reduced_precision_reduction",
              "allow_bf16_reduced_precision_reduction", "allow_fp16_accumulation")

    def __init__(self):
        object.__setattr__(self, "_flags", {"allow_fp16_reduced_precision_reduction": True,
                                            "allow_bf16_reduced_precision_reduction": True,
                                            "allow_fp16_accumulation": False})

    def __getattr__(self, name):
        if name == "allow_tf32":
            from .._runtime import get_float32_matmul_precision
            return get_float32_matmul_precision() != "highest"
        if name in self._flags:
            return self._flags[name]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            from .._runtime import set_float32_matmul_precision
            set_float32_matmul_precision("high" if value else "highest")
            return
        if name in self._flags:
            self._flags[name] = value
            return
        raise AttributeError("Unknown attribute " + name)


class _Cuda(_Module):
    def __init__(self, name, doc=""):
        super().__init__(name, doc)
        self.matmul = _Matmul()
        self._sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}
        self._linalg = "Default"

    def is_built(self):
        return bool(_device.cuda_devices())

    def preferred_linalg_library(self, backend=None):
        if backend is not None:
            self._linalg = backend if isinstance(backend, str) else str(backend)
        return self._linalg

    def preferred_blas_library(self, backend=None):
        return "cublas"

    def flash_sdp_enabled(self):
        return self._sdp["flash"]

    def enable_flash_sdp(self, enabled):
        self._sdp["flash"] = bool(enabled)

    def mem_efficient_sdp_enabled(self):
        return self._sdp["mem_efficient"]

    def enable_mem_efficient_sdp(self, enabled):
        self._sdp["mem_efficient"] = bool(enabled)

    def math_sdp_enabled(self):
        return self._sdp["math"]

    def enable_math_sdp(self, enabled):
        self._sdp["math"] = bool(enabled)

    def cudnn_sdp_enabled(self):
        return self._sdp["cudnn"]

    def enable_cudnn_sdp(self, enabled):
        self._sdp["cudnn"] = bool(enabled)

    @contextlib.contextmanager
    def sdp_kernel(self, enable_flash=True, enable_math=True, enable_mem_efficient=True,
                   enable_cudnn=True):
        """Records the choice; torchlike's attention is one XLA computation either way."""
        old = dict(self._sdp)
        self._sdp.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient,
                         cudnn=enable_cudnn)
        try:
            yield
        finally:
            self._sdp = old


cuda = _Cuda("cuda", "CUDA switches: matmul precision (mapped to jax), sdp kernels (recorded)")


class SDPBackend(__import__("enum").Enum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self):
        return self.value

    __index__ = __int__


SDPBackend.__module__ = "torchlike.nn.attention"   # its public home, as torch's


cuda.SDPBackend = SDPBackend
cuda.is_flash_attention_available = lambda: False
cuda.can_use_flash_attention = lambda params, debug=False: False
cuda.can_use_efficient_attention = lambda params, debug=False: False
cuda.can_use_cudnn_attention = lambda params, debug=False: False
cuda.is_ck_sdpa_available = lambda: False


# ------------------------------------------------------------------ the rest

class _Available(_Module):
    def __init__(self, name, available, doc="", **flags):
        super().__init__(name, doc)
        self._available = available
        for k, v in flags.items():
            setattr(self, k, v)

    def is_available(self):
        return self._available

    @contextlib.contextmanager
    def flags(self, enabled=False, **kwargs):
        old = getattr(self, "enabled", None)
        self.enabled = enabled
        try:
            yield
        finally:
            self.enabled = old


class _Mps(_Available):
    def is_built(self):
        return False

    def is_macos13_or_newer(self, minor=0):
        raise RuntimeError("Cannot execute isOnMacOSorNewer() without MPS backend.")

    def is_macos_or_newer(self, major, minor):
        raise RuntimeError("Cannot execute isOnMacOSorNewer() without MPS backend.")


mps = _Mps("mps", False, "Apple MPS: not a jax backend here")
mkldnn = _Available("mkldnn", True, "oneDNN switch (recorded)", enabled=True, deterministic=False)
mkl = _Available("mkl", True, "MKL (recorded)")
openmp = _Available("openmp", True, "OpenMP (recorded)")
opt_einsum = _Available("opt_einsum", True, "einsum contraction order: jax uses opt_einsum",
                        enabled=True, strategy="auto")
xnnpack = _Available("xnnpack", False, "", enabled=False)
nnpack = _Available("nnpack", False, "", enabled=False)
quantized = _Available("quantized", False, "", engine="none", supported_engines=["none"])
mha = _Available("mha", True, "", fastpath_enabled=True)


class _Cpu(_Module):
    def get_cpu_capability(self):
        return "DEFAULT"


cpu = _Cpu("cpu", "CPU capability query")


mha.get_fastpath_enabled = lambda: mha.fastpath_enabled
mha.set_fastpath_enabled = lambda value: setattr(mha, "fastpath_enabled", bool(value))
