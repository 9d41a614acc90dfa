"""Device-generic ``torch.Stream`` and ``torch.Event``.

jax orders the work of a device itself, so a stream is a handle: ``synchronize`` waits for
the device's pending work, ``query`` is True, entering one changes nothing. Events are
torch's: on the CPU recording one raises as torch does ("cpu backend doesn't support events.");
on an accelerator ``record`` waits for the device and notes the time (``elapsed_time`` in ms).
"""
from __future__ import annotations

import time

from ._dtype import c_type_format

__all__ = ["Stream", "Event"]


def _device(device):
    import torchlike
    if device is None:
        return torchlike.device("cpu")
    return device if isinstance(device, torchlike.device) else torchlike.device(device)


def _sync(dev):
    import jax
    for a in jax.live_arrays():
        a.block_until_ready()


class Stream:
    """A stream of a device (``torch.Stream(device=None, priority=0)``)."""

    __format__ = c_type_format("torch.Stream")

    def __init__(self, device=None, *, priority=0, **kwargs):
        self.device = _device(device)
        self.stream_id = 0

    @property
    def device_type(self):
        return {"cpu": 0, "cuda": 1, "mps": 13}.get(self.device.type, 0)

    @property
    def device_index(self):
        return -1 if self.device.index is None else self.device.index

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        _sync(self.device)

    def wait_stream(self, stream) -> None:
        pass

    def wait_event(self, event) -> None:
        pass

    def record_event(self, event=None):
        event = Event(self.device) if event is None else event
        event.record(self)
        return event

    def is_capturing(self) -> bool:
        return False

    @property
    def native_handle(self):
        return 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.device, self.stream_id) == \
            (other.device, other.stream_id)

    def __hash__(self):
        return hash((str(self.device), self.stream_id))

    def __repr__(self):
        return (f"torch.Stream device_type={self.device.type}, device_index="
                f"{self.device_index}, stream_id={self.stream_id}")


class Event:
    """An event of a device (``torch.Event(device=None, *, enable_timing=False, ...)``)."""

    __format__ = c_type_format("torch.Event")

    def __init__(self, device=None, *, enable_timing=False, blocking=False, interprocess=False):
        self.device = _device(device)
        self.enable_timing = enable_timing
        self.event_id = 0
        self._t = None

    def _check(self):
        if self.device.type == "cpu":
            raise RuntimeError("cpu backend doesn't support events.")

    def record(self, stream=None) -> None:
        self._check()
        _sync(self.device)
        self._t = time.perf_counter()

    def wait(self, stream=None) -> None:
        pass

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        if self._t is not None:
            _sync(self.device)

    def elapsed_time(self, end_event) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        self._check()
        if self._t is None or end_event._t is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return (end_event._t - self._t) * 1000.0

    def __repr__(self):
        index = -1 if self.device.index is None else self.device.index
        return (f"torch.Event device_type={self.device.type}, device_index={index}, "
                f"event_flag=0, event_id={self.event_id}")


# public classes report their public path, as torch's do
for _cls in (Stream, Event):
    _cls.__module__ = "torchlike"
