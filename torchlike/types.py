"""torchlike.types: the type aliases torch's annotations use."""
from __future__ import annotations

from typing import Union

from ._device import device as _device_cls
from ._dtype import dtype as _dtype

__all__ = ["Number", "Device", "Storage", "_dtype", "_device", "_size", "_int", "_float",
           "_bool", "_complex", "_layout", "_qscheme", "_TensorOrTensors", "PySymInt",
           "SymInt", "IntLikeType", "FileLike"]

Number = Union[int, float, bool]
Device = Union[_device_cls, str, int, None]
_device = _device_cls
_int = int
_float = float
_bool = bool
_complex = complex
_size = tuple
Storage = object
SymInt = int
PySymInt = int
IntLikeType = int
_layout = object
_qscheme = object
FileLike = object


def __getattr__(name):
    if name == "_TensorOrTensors":
        from ._tensor import Tensor
        from typing import Sequence
        return Union[Tensor, Sequence[Tensor]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
