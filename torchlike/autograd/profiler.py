"""torch.autograd.profiler: the legacy profiler API over torchlike.profiler."""
from __future__ import annotations

from ..profiler import (record_function, EventList, FunctionEvent,  # noqa: F401
                        FunctionEventAvg, _KinetoProfile)
from .. import profiler as _profiler

__all__ = ["profile", "record_function", "emit_nvtx", "emit_itt", "EventList",
           "FunctionEvent", "FunctionEventAvg"]


class profile:
    """``with torch.autograd.profiler.profile() as prof: ...`` then ``prof.key_averages()``."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None):
        self.enabled = enabled
        self._prof = _profiler._KinetoProfile(record_shapes=record_shapes,
                                              profile_memory=profile_memory) if enabled else None
        self.function_events = None

    def __enter__(self):
        if self._prof is not None:
            self._prof.start_trace()
        return self

    def __exit__(self, *exc):
        if self._prof is not None:
            self._prof.stop_trace()
            self.function_events = self._prof.events()
        return False

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        self._check()
        return self.function_events.key_averages()

    def table(self, sort_by=None, row_limit=100, **kwargs):
        self._check()
        return self.function_events.key_averages().table(sort_by=sort_by, row_limit=row_limit)

    def events(self):
        self._check()
        return self.function_events

    def export_chrome_trace(self, path):
        self._check()
        self.function_events.export_chrome_trace(path)

    @property
    def self_cpu_time_total(self):
        self._check()
        return self.function_events.self_cpu_time_total

    def _check(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def __str__(self):
        self._check()
        return str(self.function_events)


class emit_nvtx:
    """No-op context (nvtx ranges are for NVIDIA's tools; jax's trace has its own)."""

    def __init__(self, enabled=True, record_shapes=False):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


emit_itt = emit_nvtx
