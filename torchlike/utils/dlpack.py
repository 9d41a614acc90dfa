"""torch.utils.dlpack: exchange tensors with other libraries through DLPack, without copies
where the producer allows it (jax may copy a buffer it cannot alias, e.g. a misaligned numpy
array)."""
from __future__ import annotations

import jax

from .. import _dtype as D

__all__ = ["from_dlpack", "to_dlpack"]


class _Capsule:
    """A legacy DLPack capsule presented through the ``__dlpack__`` protocol (CPU only)."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, *args, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


def from_dlpack(ext_tensor):
    """A Tensor over the buffer of ``ext_tensor`` (anything with ``__dlpack__``, a jax array, a
    torchlike Tensor, or a legacy DLPack capsule)."""
    from .._tensor import Tensor
    if isinstance(ext_tensor, Tensor):
        return Tensor._make(ext_tensor._data)
    if isinstance(ext_tensor, jax.Array):
        D.activate_for(ext_tensor.dtype)
        return Tensor._make(ext_tensor)
    if type(ext_tensor).__name__ == "PyCapsule":
        ext_tensor = _Capsule(ext_tensor)
    if not hasattr(ext_tensor, "__dlpack__"):
        raise TypeError(f"from_dlpack: expected an object with __dlpack__ or a DLPack capsule, "
                        f"got {type(ext_tensor).__name__}")
    array = jax.dlpack.from_dlpack(ext_tensor)
    D.activate_for(array.dtype)         # (before any op runs on the tensor)
    return Tensor._make(array)


def to_dlpack(tensor):
    """A DLPack capsule for ``tensor``'s buffer (consumers must not write into it)."""
    return tensor.__dlpack__()
