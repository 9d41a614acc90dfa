"""torchlike.cuda: torch.cuda's queries on jax's GPU devices.

``cuda:i`` is ``jax.devices("gpu")[i]``. On a jax without a GPU backend every function answers
as torch's CPU build does: ``is_available()`` is False, ``device_count()`` 0, the memory
counters 0, and calls that need a GPU raise ``AssertionError: Torch not compiled with CUDA
enabled``.

Memory counters come from jax's ``Device.memory_stats()`` (XLA's allocator): ``allocated`` is
``bytes_in_use``, ``reserved`` the allocator's pool. XLA cannot reset its peak counter, so
after ``reset_peak_memory_stats`` the peak is XLA's peak when that rose since the reset, else
the largest value torchlike has seen since (see DIFFERENCES.md).
"""
from __future__ import annotations

import collections
import time

import jax

from .. import _device
from .._device import NO_CUDA

__all__ = ["is_available", "device_count", "current_device", "set_device", "get_device_name",
           "get_device_capability", "get_device_properties", "synchronize", "empty_cache",
           "manual_seed", "manual_seed_all", "seed", "seed_all", "initial_seed",
           "get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all",
           "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "reset_peak_memory_stats", "reset_max_memory_allocated",
           "reset_max_memory_cached", "memory_stats", "memory_summary", "mem_get_info",
           "is_initialized", "init", "is_bf16_supported", "get_arch_list", "Stream", "Event",
           "device", "device_of", "stream", "current_stream", "default_stream",
           "OutOfMemoryError", "is_current_stream_capturing", "ipc_collect", "nvtx", "amp",
           "memory_cached", "max_memory_cached"]


def _devs():
    return _device.cuda_devices()


def _require():
    if not _devs():
        raise AssertionError(NO_CUDA)


def _index(dev, optional=True):
    """torch.cuda's ``_get_device_index``: an int, or the current device for None/'cuda'."""
    if isinstance(dev, device):
        return dev.idx
    if isinstance(dev, int) and not isinstance(dev, bool):
        return dev
    if isinstance(dev, str):
        dev = _device.device(dev)
    if isinstance(dev, _device.device):
        if dev.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {dev}")
        if dev.index is not None:
            return dev.index
        dev = None
    if dev is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, "
                             f"but got:{dev}")
        return current_device()
    raise ValueError(f"Expected a cuda device, but got: {dev}")


def _jdev(dev=None):
    _require()
    i = _index(dev)
    devs = _devs()
    if i < 0 or i >= len(devs):
        raise AssertionError("Invalid device id")
    return devs[i]


class OutOfMemoryError(RuntimeError):
    """torch.cuda.OutOfMemoryError (raised by XLA as a RuntimeError 'RESOURCE_EXHAUSTED')."""


# ------------------------------------------------------------------ queries

def is_available() -> bool:
    return bool(_devs())


def device_count() -> int:
    return len(_devs())


def is_initialized() -> bool:
    return bool(_devs())


_initialized = False     # (torch's flag, set by its lazy CUDA init: none here, as on a CPU build)


def init():
    _require()


def current_device() -> int:
    _require()
    return _device._state.cuda_index


def set_device(device):
    """Make ``device`` the current CUDA device of this thread (a negative index: no-op)."""
    i = _index(device)
    if i < 0:
        return
    _require()
    if i >= len(_devs()):
        raise RuntimeError("CUDA error: invalid device ordinal")
    _device._state.cuda_index = i


def get_device_name(device=None) -> str:
    return get_device_properties(device).name


def get_device_capability(device=None):
    p = get_device_properties(device)
    return p.major, p.minor


class _CudaDeviceProperties:
    """What torch reports about a GPU, read from the jax device."""

    def __init__(self, d):
        self.name = getattr(d, "device_kind", "GPU")
        cc = str(getattr(d, "compute_capability", "0.0"))
        major, _, minor = cc.partition(".")
        self.major, self.minor = int(major or 0), int(minor or 0)
        stats = _stats(d)
        self.total_memory = int(stats.get("bytes_limit", 0))
        self.multi_processor_count = int(getattr(d, "core_count", 0) or 0)
        self.is_integrated = False
        self.is_multi_gpu_board = False

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None):
    return _CudaDeviceProperties(_jdev(device))


def is_bf16_supported(including_emulation=True) -> bool:
    return bool(_devs())


def get_arch_list():
    if not _devs():
        return []
    return sorted({f"sm_{get_device_properties(i).major}{get_device_properties(i).minor}"
                   for i in range(device_count())})


def synchronize(device=None):
    """Wait for all work queued on the device: blocks on every live jax array placed there."""
    d = _jdev(device)
    jax.effects_barrier()
    for a in jax.live_arrays():
        try:
            if d in a.devices():
                a.block_until_ready()
        except Exception:   # deleted or donated meanwhile
            pass


def empty_cache():
    """XLA's allocator keeps its pool; nothing torchlike can release (a no-op, as on CPU)."""


def ipc_collect():
    _require()


def is_current_stream_capturing() -> bool:
    return False


# ------------------------------------------------------------------ random

def manual_seed(seed):
    """torchlike has one generator for every device (``torchlike.manual_seed`` seeds it):
    seeding only the CUDA generator changes nothing (see DIFFERENCES.md)."""
    int(seed)


manual_seed_all = manual_seed


def seed():
    """A no-op, as ``manual_seed`` (one generator for every device)."""


seed_all = seed


def initial_seed():
    _require()
    from .. import _random
    return _random.initial_seed()


def get_rng_state(device="cuda"):
    _require()
    from .. import _random
    return _random.get_rng_state()


def set_rng_state(new_state, device="cuda"):
    _require()
    from .. import _random
    _random.set_rng_state(new_state)


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for s in new_states:
        set_rng_state(s)


# ------------------------------------------------------------------ memory

def _stats(d):
    try:
        return d.memory_stats() or {}
    except Exception:
        return {}


_peak_reset = {}        # jax device -> (XLA peak at reset, highest seen since)


def _seen(d, key, current):
    r = _peak_reset.get((d, key))
    if r is None:
        return None
    xla_peak, seen = r
    seen = max(seen, current)
    _peak_reset[(d, key)] = (xla_peak, seen)
    return xla_peak, seen


def memory_allocated(device=None) -> int:
    if not _devs():
        return 0
    return int(_stats(_jdev(device)).get("bytes_in_use", 0))


def max_memory_allocated(device=None) -> int:
    if not _devs():
        return 0
    d = _jdev(device)
    s = _stats(d)
    cur, peak = int(s.get("bytes_in_use", 0)), int(s.get("peak_bytes_in_use", 0))
    r = _seen(d, "alloc", cur)
    if r is None:
        return peak
    return peak if peak > r[0] else r[1]


def _reserved(s):
    return int(s.get("pool_bytes", s.get("bytes_reserved", s.get("bytes_in_use", 0))))


def memory_reserved(device=None) -> int:
    if not _devs():
        return 0
    return _reserved(_stats(_jdev(device)))


def max_memory_reserved(device=None) -> int:
    if not _devs():
        return 0
    d = _jdev(device)
    s = _stats(d)
    cur = _reserved(s)
    peak = int(s.get("peak_pool_bytes", cur))
    r = _seen(d, "reserved", cur)
    if r is None:
        return peak
    return peak if peak > r[0] else r[1]


memory_cached = memory_reserved
max_memory_cached = max_memory_reserved


def reset_peak_memory_stats(device=None):
    d = _jdev(device)
    s = _stats(d)
    _peak_reset[(d, "alloc")] = (int(s.get("peak_bytes_in_use", 0)),
                                 int(s.get("bytes_in_use", 0)))
    _peak_reset[(d, "reserved")] = (int(s.get("peak_pool_bytes", _reserved(s))), _reserved(s))


def reset_max_memory_allocated(device=None):
    import warnings
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None):
    import warnings
    warnings.warn("torch.cuda.reset_max_memory_cached now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def memory_stats(device=None):
    """torch's flat memory-stat keys filled from XLA's allocator (empty without a GPU)."""
    if not _devs():
        return collections.OrderedDict()
    d = _jdev(device)
    s = _stats(d)
    out = {
        "allocated_bytes.all.current": memory_allocated(device),
        "allocated_bytes.all.peak": max_memory_allocated(device),
        "reserved_bytes.all.current": memory_reserved(device),
        "reserved_bytes.all.peak": max_memory_reserved(device),
        "active_bytes.all.current": memory_allocated(device),
        "num_alloc_retries": 0,
        "num_ooms": 0,
        "allocation.all.current": int(s.get("num_allocs", 0)),
    }
    return collections.OrderedDict(sorted(out.items()))


def memory_summary(device=None, abbreviated=False):
    stats = memory_stats(device)
    cur = stats["allocated_bytes.all.current"]    # KeyError without a GPU, as torch's CPU build
    lines = ["|" + "=" * 60 + "|",
             "|   torchlike CUDA memory summary (from XLA's allocator)" + " " * 6 + "|",
             f"| allocated: {cur:>15d} B   peak: {stats['allocated_bytes.all.peak']:>15d} B |",
             f"| reserved:  {stats['reserved_bytes.all.current']:>15d} B   peak: "
             f"{stats['reserved_bytes.all.peak']:>15d} B |",
             "|" + "=" * 60 + "|"]
    return "\n".join(lines)


def mem_get_info(device=None):
    """(free, total) bytes of the device, from XLA's allocator limit."""
    s = _stats(_jdev(device))
    total = int(s.get("bytes_limit", 0))
    return total - int(s.get("bytes_in_use", 0)), total


# ------------------------------------------------------------------ devices and streams

class device:
    """Context manager that changes the current CUDA device (``-1``: does nothing)."""

    def __init__(self, device):
        self.idx = _index(device, optional=True) if device is not None else -1
        self.prev_idx = -1

    def __enter__(self):
        if self.idx == -1:
            return None
        if not _devs():
            raise RuntimeError("PyTorch was compiled without CUDA support")
        self.prev_idx = _device._state.cuda_index
        set_device(self.idx)
        return None

    def __exit__(self, *exc):
        if self.idx != -1 and self.prev_idx != -1:
            _device._state.cuda_index = self.prev_idx
        return False


class device_of(device):
    """``device`` of the CUDA tensor ``obj`` (a no-op for CPU tensors)."""

    def __init__(self, obj):
        d = obj.device
        super().__init__(d.index if d.type == "cuda" else -1)


class Stream:
    """A CUDA stream. jax orders work itself; a Stream is a handle whose ``synchronize``
    waits for the device and whose context (``torch.cuda.stream(s)``) changes nothing."""

    def __new__(cls, device=None, priority=0, **kwargs):
        if not _devs():
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        return super().__new__(cls)

    def __init__(self, device=None, priority=0, **kwargs):
        _jdev(device)
        self.device = _device.device("cuda", _index(device))
        self.priority = priority

    def synchronize(self):
        synchronize(self.device)

    def wait_stream(self, stream):
        pass

    def wait_event(self, event):
        pass

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def query(self):
        return True

    def __eq__(self, other):
        return isinstance(other, Stream) and self.device == other.device

    def __hash__(self):
        return hash(self.device)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Event:
    """A CUDA event: ``record`` waits for the device and notes the time, so
    ``elapsed_time`` is the wall time between two records in milliseconds."""

    def __new__(cls, enable_timing=False, blocking=False, interprocess=False):
        if not _devs():
            raise RuntimeError("Tried to instantiate dummy base class Event")
        return super().__new__(cls)

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        self.enable_timing = enable_timing
        self._t = None

    def record(self, stream=None):
        synchronize()
        self._t = time.perf_counter()

    def wait(self, stream=None):
        pass

    def query(self):
        return True

    def synchronize(self):
        synchronize()

    def elapsed_time(self, end_event):
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._t is None or end_event._t is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._t - self._t) * 1000.0


def current_stream(device=None):
    _require()
    return Stream(device)


default_stream = current_stream


def stream(stream):
    """Context manager selecting ``stream`` (jax orders work itself: changes nothing)."""
    import contextlib
    return contextlib.nullcontext(stream)


class _Nvtx:
    """torch.cuda.nvtx markers: no-ops (jax.profiler.TraceAnnotation marks regions instead)."""

    @staticmethod
    def range_push(msg):
        return 0

    @staticmethod
    def range_pop():
        return 0

    @staticmethod
    def mark(msg):
        pass

    @staticmethod
    def range(msg, *args, **kwargs):
        import contextlib
        return contextlib.nullcontext()


nvtx = _Nvtx()

from . import amp  # noqa: E402,F401


# ------------------------------------------------------------------ legacy tensor types

class _CudaTensorType(type):
    """``torch.cuda.FloatTensor`` and friends: CUDA tensors of one dtype (``isinstance`` is
    dtype and device; constructing one needs a GPU, as in torch)."""

    def __instancecheck__(cls, obj):
        from .._tensor import Tensor
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.is_cuda

    def __call__(cls, *args):
        if not _devs():
            raise TypeError(f"type torch.cuda.{cls.__name__} not available. Torch not "
                            f"compiled with CUDA enabled.")
        from .. import _ops
        cpu_type = getattr(_ops.typeinfo, cls.__name__)
        return cpu_type(*args).to(_device.device("cuda", current_device()))

    def __repr__(cls):
        return f"<class 'torch.cuda.{cls.__name__}'>"


def _cuda_types():
    from .._ops import typeinfo
    return {name: _CudaTensorType(name, (), {"dtype": cls.dtype, "__module__": "torch.cuda",
                                              "is_cuda": True})
            for name, cls in typeinfo._LEGACY_TYPES.items()}


_CUDA_TYPES = _cuda_types()
globals().update(_CUDA_TYPES)
__all__ += list(_CUDA_TYPES)


# ------------------------------------------------------------------ more of torch.cuda's surface

has_half = True
has_magma = False
default_generators = ()


class CudaError(RuntimeError):
    def __init__(self, code=0):
        super().__init__(f"CUDA error {code}")


class DeferredCudaCallError(Exception):
    pass


AcceleratorError = RuntimeError


def check_error(res):
    if res:
        raise CudaError(res)


def is_tf32_supported():
    if not _devs():
        return False
    return get_device_capability() >= (8, 0)


def get_gencode_flags():
    return " ".join(f"-gencode compute={a.replace('sm', 'compute')},code={a}"
                    for a in get_arch_list())


_sync_debug = [0]
_fraction = {}


def get_sync_debug_mode():
    _require()
    return _sync_debug[0]


def set_sync_debug_mode(debug_mode):
    _require()
    modes = {"default": 0, "warn": 1, "error": 2}
    _sync_debug[0] = modes.get(debug_mode, debug_mode)


def set_per_process_memory_fraction(fraction, device=None):
    """Recorded only: XLA's allocator share is set with XLA_PYTHON_CLIENT_MEM_FRACTION before
    jax starts."""
    d = _jdev(device)
    if not 0 <= fraction <= 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _fraction[d] = fraction


def get_per_process_memory_fraction(device=None):
    d = _jdev(device)
    return _fraction.get(d, 1.0)


def can_device_access_peer(device, peer_device):
    _require()
    a, b = _index(device), _index(peer_device)
    n = device_count()
    if not (0 <= a < n and 0 <= b < n):
        raise AssertionError("Invalid device id")
    return a != b


def memory_stats_as_nested_dict(device=None):
    if not _devs():
        return {}
    out = {}
    for key, v in memory_stats(device).items():
        node = out
        parts = key.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = v
    return out


def host_memory_stats():
    return collections.OrderedDict()


def reset_accumulated_memory_stats(device=None):
    """XLA keeps no accumulated counters torchlike could reset: checks the device only."""
    _jdev(device)


def memory_snapshot(mempool_id=None):
    raise NotImplementedError("torch.cuda.memory_snapshot: XLA's allocator has no snapshot; "
                              "use jax.profiler.save_device_memory_profile")


def _no_nvml(*args, **kwargs):
    raise ModuleNotFoundError("nvidia-ml-py does not seem to be installed or it can't be "
                              "imported.")


utilization = temperature = power_draw = clock_rate = memory_usage = device_memory_used = \
    _no_nvml


def list_gpu_processes(device=None):
    return "pynvml module not found, please install nvidia-ml-py"


class StreamContext:
    """``with torch.cuda.StreamContext(stream)``: jax orders work itself; changes nothing."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        return self.stream

    def __exit__(self, *exc):
        return False


def set_stream(stream):
    """jax orders work itself: a no-op."""


class CUDAGraph:
    def __new__(cls, *args, **kwargs):
        if not _devs():
            raise RuntimeError("Tried to instantiate dummy base class CUDAGraph")
        raise NotImplementedError("torch.cuda.CUDAGraph: XLA compiles whole computations "
                                  "already; use torchlike.compile for a captured graph")


class graph:
    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        raise NotImplementedError("torch.cuda.graph: use torchlike.compile (XLA compiles the "
                                  "whole captured function)")


def make_graphed_callables(callables, sample_args, num_warmup_iters=3,
                           allow_unused_input=False, pool=None):
    raise NotImplementedError("torch.cuda.make_graphed_callables: use torchlike.compile on "
                              "each callable")


def caching_allocator_alloc(size, device=None, stream=None):
    _require()
    raise NotImplementedError("torch.cuda.caching_allocator_alloc: XLA owns device memory")


def caching_allocator_delete(mem_ptr):
    _require()
    raise NotImplementedError("torch.cuda.caching_allocator_delete: XLA owns device memory")


__all__ += ["has_half", "has_magma", "default_generators", "CudaError",
            "DeferredCudaCallError", "AcceleratorError", "check_error", "is_tf32_supported",
            "get_gencode_flags", "get_sync_debug_mode", "set_sync_debug_mode",
            "set_per_process_memory_fraction", "get_per_process_memory_fraction",
            "can_device_access_peer", "memory_stats_as_nested_dict", "host_memory_stats",
            "reset_accumulated_memory_stats", "memory_snapshot", "utilization", "temperature",
            "power_draw", "clock_rate", "memory_usage", "device_memory_used",
            "list_gpu_processes", "StreamContext", "set_stream", "CUDAGraph", "graph",
            "make_graphed_callables", "caching_allocator_alloc", "caching_allocator_delete"]
