"""torchlike.accelerator: the current accelerator (jax's GPU as 'cuda', TPU as 'xla'), or none."""
from __future__ import annotations

from . import _device

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "set_device_index", "synchronize", "current_device_idx", "set_device_idx",
           "device_index", "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "reset_peak_memory_stats", "memory_stats", "empty_cache",
           "get_memory_info", "current_stream", "get_device_capability",
           "reset_accumulated_memory_stats", "set_stream", "empty_host_cache"]


def is_available():
    return _device.accelerator_type() is not None


def current_accelerator(check_available=False):
    t = _device.accelerator_type()
    return None if t is None else _device.device(t)


def device_count():
    t = _device.accelerator_type()
    if t is None:
        return 0
    return len(_device.cuda_devices()) if t == "cuda" else len(_device._jax_devices("tpu"))


def _require():
    if _device.accelerator_type() is None:
        raise RuntimeError(_device.NO_ACCELERATOR)


def current_device_index():
    _require()
    return _device._state.cuda_index


current_device_idx = current_device_index


def set_device_index(device):
    _require()
    from . import cuda
    if _device.accelerator_type() == "cuda":
        cuda.set_device(device)


set_device_idx = set_device_index


def synchronize(device=None):
    _require()
    from . import cuda
    if _device.accelerator_type() == "cuda":
        cuda.synchronize(device)


class device_index:
    """Context manager: the current accelerator device inside (``None``: no change)."""

    def __init__(self, device):
        self.idx = device
        self.prev = None

    def __enter__(self):
        if self.idx is not None:
            self.prev = current_device_index()
            set_device_index(self.idx)
        return self

    def __exit__(self, *exc):
        if self.idx is not None:
            set_device_index(self.prev)
        return False


def _cuda_call(name):
    def fn(*args, **kwargs):
        _require()
        from . import cuda
        return getattr(cuda, name)(*args, **kwargs)
    fn.__name__ = name
    fn.__doc__ = f"torch.accelerator.{name}: torch.cuda.{name} of the current accelerator."
    return fn


memory_allocated = _cuda_call("memory_allocated")
max_memory_allocated = _cuda_call("max_memory_allocated")
memory_reserved = _cuda_call("memory_reserved")
max_memory_reserved = _cuda_call("max_memory_reserved")
reset_peak_memory_stats = _cuda_call("reset_peak_memory_stats")
memory_stats = _cuda_call("memory_stats")
empty_cache = _cuda_call("empty_cache")
get_memory_info = _cuda_call("mem_get_info")
current_stream = _cuda_call("current_stream")
get_device_capability = _cuda_call("get_device_capability")
reset_accumulated_memory_stats = _cuda_call("reset_accumulated_memory_stats")
set_stream = _cuda_call("set_stream")


def empty_host_cache():
    """jax manages host buffers itself: nothing to release."""
