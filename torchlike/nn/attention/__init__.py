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

__all__ = ["SDPBackend", "sdpa_kernel", "WARN_FOR_UNFUSED_KERNELS",
           "register_flash_attention_impl", "activate_flash_attention_impl",
           "list_flash_attention_impls", "current_flash_attention_impl",
           "restore_flash_attention_impl"]

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


# flash-attention implementations a provider registers (torch ships CUDA ones: FA3, FA4)
_FLASH_ATTENTION_IMPLS: dict = {}
_active = [None]        # (name, handle) of the activated impl


def register_flash_attention_impl(impl, *, register_fn) -> None:
    """Register ``register_fn() -> handle or None``, run by ``activate_flash_attention_impl``."""
    _FLASH_ATTENTION_IMPLS[impl] = register_fn


def activate_flash_attention_impl(impl) -> None:
    """Run the registered ``register_fn`` of ``impl`` (after restoring the default)."""
    restore_flash_attention_impl(_raise_warn=False)
    register_fn = _FLASH_ATTENTION_IMPLS.get(impl)
    if register_fn is None:
        raise ValueError(f"Unknown flash attention impl '{impl}'. Available implementations: "
                         f"{list_flash_attention_impls()}")
    handle = register_fn()
    if handle is not None:
        _active[0] = (impl, handle)


def list_flash_attention_impls() -> list:
    """The names of the registered flash attention implementations."""
    return sorted(_FLASH_ATTENTION_IMPLS)


def current_flash_attention_impl():
    """The activated implementation's name, or None (the default)."""
    return _active[0][0] if _active[0] is not None else None


def restore_flash_attention_impl(_raise_warn: bool = True) -> None:
    """Go back to the default implementation (removing the active one's handle)."""
    if _active[0] is not None:
        _active[0][1].remove()
    elif _raise_warn:
        import logging
        logging.getLogger(__name__).warning(
            "Trying to restore default FA2 impl when no custom impl was activated")
    _active[0] = None


# ------------------------------------------------------------------ backend choice (CPU rules)

_NO_BACKEND = ("No viable backend for scaled_dot_product_attention was found. This is likely due "
               "to turning off both the math kernel and the fused kernels.")


def _flash_unsupported(query, key, value, attn_mask, dropout_p, enable_gqa):
    """Why torch's CPU flash kernel would refuse these inputs (None: it accepts them)."""
    if dropout_p > 0:
        return "Both fused kernels do not support non-zero dropout."
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        return ("All fused kernels requires query, key and value to be 4 dimensional, but got "
                f"Query dim: {query.ndim}, Key dim: {key.ndim}, Value dim: {value.ndim} instead.")
    qs, ks, vs = (list(t.shape) for t in (query, key, value))
    if not qs[0] == ks[0] == vs[0]:
        return ("For dense inputs, both fused kernels require query, key and value to have the "
                f"same batch_size. Query.sizes(): {qs}, Key.sizes(): {ks}, Value.sizes(): {vs} "
                "instead. To broadcast dense inputs, try using unsqueeze and expand_to before "
                "passing them into the kernel.")
    if not qs[1] == ks[1] == vs[1] and not (enable_gqa and ks[1] == vs[1]):
        return ("For dense input, both fused kernels require query, key and value to have the "
                f"same num_heads. Query.sizes(): {qs}, Key sizes(): {ks}, Value sizes(): {vs} "
                "instead. To broadcast dense inputs, try using unsqueeze and expand_to before "
                "passing them into the kernel.")
    if attn_mask is not None and attn_mask.ndim not in (2, 4):
        return ("Please use the following attn mask shapes: 2d - ({Q_seq_len, 1}  x "
                "{KV_seq_len, 1}); 4d - ({Batch, 1} x {Num_heads, 1} x {Q_seq_len, 1}  x "
                "{KV_seq_len, 1})")
    if not qs[-1] == ks[-1] == vs[-1]:
        return ("Flash attention requires q,k,v to have the same last dimension. Got "
                f"Query.size(-1): {qs[-1]}, Key.size(-1): {ks[-1]}, Value.size(-1): {vs[-1]} "
                "instead.")
    return None


def select_backend(query, key, value, attn_mask, dropout_p, enable_gqa):
    """``"flash"`` or ``"math"``: the backend torch's CPU dispatcher picks for these inputs
    under the current switches (torch's errors and warnings when none may run)."""
    import warnings
    flags = _flags()
    if not flags["math"] and not flags["flash"]:
        raise RuntimeError(_NO_BACKEND)
    why = _flash_unsupported(query, key, value, attn_mask, dropout_p, enable_gqa)
    for b in _priority:
        if b is SDPBackend.FLASH_ATTENTION and flags["flash"] and why is None:
            return "flash"
        if b is SDPBackend.MATH and flags["math"]:
            return "math"
    warnings.warn("Flash attention kernel not used because:", UserWarning, stacklevel=3)
    warnings.warn(why, UserWarning, stacklevel=3)
    raise RuntimeError("No available kernel.  Aborting execution.")


__getattr__ = _lazy(__name__, {"bias", "flex_attention", "experimental"})
