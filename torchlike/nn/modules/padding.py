"""Padding layers (torch.nn.modules.padding)."""
from __future__ import annotations

from .. import functional as F
from .module import Module

__all__ = ['CircularPad1d', 'CircularPad2d', 'CircularPad3d', 'ConstantPad1d', 'ConstantPad2d', 'ConstantPad3d', 'ReflectionPad1d', 'ReflectionPad2d', 'ReflectionPad3d', 'ReplicationPad1d', 'ReplicationPad2d', 'ReplicationPad3d', 'ZeroPad1d', 'ZeroPad2d', 'ZeroPad3d']


class _PadNd(Module):
    mode = "constant"
    value = 0.0
    _n = 1

    def __init__(self, padding, value=None):
        super().__init__()
        self.padding = F._tup(padding, 2 * self._n)
        if value is not None:
            self.value = value

    def forward(self, input):
        if self.mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        if self.mode == "constant" and "Zero" not in type(self).__name__:
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"


def _pad_cls(name, mode, n, with_value=False):
    def __init__(self, padding, *args):
        _PadNd.__init__(self, padding, *args)
    d = {"mode": mode, "_n": n}
    if not with_value:
        d["__init__"] = lambda self, padding: _PadNd.__init__(self, padding)
    return type(name, (_PadNd,), d)


ZeroPad1d = _pad_cls("ZeroPad1d", "constant", 1)
ZeroPad2d = _pad_cls("ZeroPad2d", "constant", 2)
ConstantPad1d = _pad_cls("ConstantPad1d", "constant", 1, True)
ConstantPad2d = _pad_cls("ConstantPad2d", "constant", 2, True)
ReflectionPad1d = _pad_cls("ReflectionPad1d", "reflect", 1)
ReflectionPad2d = _pad_cls("ReflectionPad2d", "reflect", 2)
ReplicationPad1d = _pad_cls("ReplicationPad1d", "replicate", 1)
ReplicationPad2d = _pad_cls("ReplicationPad2d", "replicate", 2)
CircularPad1d = _pad_cls("CircularPad1d", "circular", 1)
CircularPad2d = _pad_cls("CircularPad2d", "circular", 2)
ZeroPad3d = _pad_cls("ZeroPad3d", "constant", 3)
ConstantPad3d = _pad_cls("ConstantPad3d", "constant", 3, True)
ReflectionPad3d = _pad_cls("ReflectionPad3d", "reflect", 3)
ReplicationPad3d = _pad_cls("ReplicationPad3d", "replicate", 3)
CircularPad3d = _pad_cls("CircularPad3d", "circular", 3)
