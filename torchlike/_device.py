"""torchlike.device: torch's device names mapped onto jax's platforms."""
from __future__ import annotations

import jax

__all__ = ["device"]

_PLATFORM_TO_TYPE = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda", "rocm": "cuda", "tpu": "xla"}


class device:
    """``torchlike.device('cpu')``, ``device('cuda', 0)``, ``device('cuda:1')``."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int):
            type, index = "cuda", type
        elif ":" in type:
            type, idx = type.split(":", 1)
            index = int(idx)
        if type not in ("cpu", "cuda", "xla", "meta", "mps"):
            raise RuntimeError(
                f"Expected one of cpu, cuda, xla, meta, mps device type at start of device "
                f"string: {type}")
        self.type = type
        self.index = index

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


def of_array(arr) -> device:
    """The torch device of a jax array."""
    try:
        d = next(iter(arr.devices()))
    except Exception:  # tracers have no device
        return _CPU
    t = _PLATFORM_TO_TYPE.get(d.platform, d.platform)
    return _CPU if t == "cpu" else device(t, d.id)


def to_jax(dev):
    """The jax device for a torch device (or None for 'leave where it is')."""
    if dev is None:
        return None
    dev = device(dev)
    platform = {"cpu": "cpu", "cuda": "gpu", "xla": "tpu"}.get(dev.type, dev.type)
    try:
        devs = jax.devices(platform)
    except RuntimeError as e:
        raise RuntimeError(
            f"device {str(dev)!r} is not available: jax has no {platform!r} backend here") from e
    return devs[dev.index or 0]


_CPU = device("cpu")


def move(t, dev):
    """``t`` on device ``dev`` (``t`` itself when it is already there); used by ``Tensor.to``."""
    target = device(dev)
    if target == t.device:
        return t
    from ._tensor import Tensor
    moved = Tensor._make(jax.device_put(t._data, to_jax(target)), t.grad_fn, t._output_nr)
    moved._requires_grad = t._requires_grad
    return moved
