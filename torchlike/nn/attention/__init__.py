"""torchlike.nn.attention: which scaled-dot-product-attention backend runs (``sdpa_kernel``).

On the CPU torch has two backends: its fused flash kernel (4-D inputs, no dropout) and the math
path (the composite reference: ``q * sqrt(scale) @ (k * sqrt(scale)).T``, half precision upcast
to float32, a softmax that gives 0 on fully masked rows). torchlike computes both as torch does
and picks between them with torch's rules; the backend switches live in
``torchlike.backends.cuda`` (``flash_sdp_enabled()``, ...), as in torch.

    >>> from torchlike.nn.attention import SDPBackend, sdpa_kernel
    >>> with sdpa_kernel(SDPBackend.MATH):
    ...     out = torchlike.nn.functional.scaled_dot_product_attention(q, k, v)
"""
from __future__ import annotations

import contextlib

from ...backends import SDPBackend, cuda as _cuda
from ..._lazy import lazy_submodules as _lazy

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS"]

WARN_FOR_UNFUSED_KERNELS = False

# torch's switch names, in torch's order (``torch.nn.attention._backend_names``)
_backend_names = {"cudnn": "CUDNN_ATTENTION", "flash": "FLASH_ATTENTION",
                  "mem_efficient": "EFFICIENT_ATTENTION", "math": "MATH",
                  "overrideable": "OVERRIDEABLE"}
_DEFAULT_PRIORITY = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                     SDPBackend.MATH, SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE]
_priority = list(_DEFAULT_PRIORITY)


def _flags():
    flags = _cuda._sdp
    flags.setdefault("overrideable", True)
    return flags


def _cur_sdpa_kernel_backends(with_priority: bool = False):
    """The enabled backends (in torch's name order, or by priority)."""
    flags = _flags()
    backends = [getattr(SDPBackend, v) for k, v in _backend_names.items() if flags[k]]
    if with_priority:
        backends.sort(key=_priority.index)
    return backends


def _sdpa_kernel(backends, set_priority: bool = False) -> None:
    flags = _flags()
    for name, val in _backend_names.items():
        flags[name] = getattr(SDPBackend, val) in backends
    if set_priority:
        _priority[:] = list(backends) + [b for b in _priority if b not in backends]


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority: bool = False):
    """Enable only ``backends`` (an ``SDPBackend`` or a list of them) inside the block; the
    previous switches come back on exit. Also a decorator, as any context manager."""
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    if isinstance(backends, SDPBackend):
        backends = [backends]
    backends = list(dict.fromkeys(backends))
    previous = _cur_sdpa_kernel_backends(with_priority=set_priority)
    saved_priority = list(_priority)
    try:
        _sdpa_kernel(backends, set_priority)
        yield {}
    finally:
        _sdpa_kernel(previous, set_priority)
        _priority[:] = saved_priority


def can_use_flash_attention(params, debug: bool = False) -> bool:
    """torch's CUDA flash-kernel check: False (no CUDA kernels here)."""
    return False


def can_use_efficient_attention(params, debug: bool = False) -> bool:
    """torch's CUDA memory-efficient-kernel check: False (no CUDA kernels here)."""
    return False


def list_flash_attention_impls():
    return []


def current_flash_attention_impl():
    return None


# ------------------------------------------------------------------ backend choice (CPU rules)

_NO_BACKEND = ("No viable backend for scaled_dot_product_attention was found. This is likely due "
               "to turning off both the math kernel and the fused kernels.")


def _flash_unsupported(query, key, value, dropout_p):
    """Why torch's CPU flash kernel would refuse these inputs (None: it accepts them)."""
    if dropout_p > 0:
        return "Both fused kernels do not support non-zero dropout."
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        return ("All fused kernels requires query, key and value to be 4 dimensional, but got "
                f"Query dim: {query.ndim}, Key dim: {key.ndim}, Value dim: {value.ndim} instead.")
    return None


def select_backend(query, key, value, dropout_p):
    """``"flash"`` or ``"math"``: the backend torch's CPU dispatcher picks for these inputs
    under the current switches (torch's errors and warnings when none may run)."""
    import warnings
    flags = _flags()
    if not flags["math"] and not flags["flash"]:
        raise RuntimeError(_NO_BACKEND)
    why = _flash_unsupported(query, key, value, dropout_p)
    for b in _priority:
        if b is SDPBackend.FLASH_ATTENTION and flags["flash"] and why is None:
            return "flash"
        if b is SDPBackend.MATH and flags["math"]:
            return "math"
    warnings.warn("Flash attention kernel not used because:", UserWarning, stacklevel=3)
    warnings.warn(why, UserWarning, stacklevel=3)
    raise RuntimeError("No available kernel.  Aborting execution.")


__getattr__ = _lazy(__name__, {"bias", "flex_attention", "experimental"})
