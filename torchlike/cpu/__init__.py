"""torchlike.cpu: torch.cpu's device queries (the CPU is always there) and ``cpu.amp``."""
from __future__ import annotations

import contextlib

__all__ = ["is_initialized", "is_available", "device_count", "current_device", "set_device", "synchronize",
           "current_stream", "stream", "Stream", "Event", "device", "amp"]


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def is_initialized():
    return True


def set_device(device):
    """A no-op, as torch's."""


def synchronize(device=None):
    """Wait for queued CPU work: blocks on every live jax array on the CPU."""
    import jax
    jax.effects_barrier()
    for a in jax.live_arrays():
        try:
            if next(iter(a.devices())).platform == "cpu":
                a.block_until_ready()
        except Exception:
            pass


class Stream:
    """torch.cpu.Stream: N.B. the CPU has one stream; this changes nothing."""

    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass


class Event:
    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_default = Stream()


def current_stream(device=None):
    return _default


def stream(stream):
    return contextlib.nullcontext(stream)


def device(device):
    return contextlib.nullcontext()


from . import amp  # noqa: E402,F401
