"""Padding layers (torch.nn.modules.padding), with torch's class hierarchy: ``ZeroPadNd``
subclasses ``ConstantPadNd`` (so it has ``value = 0.0``), ``ConstantPadNd`` requires ``value``,
``padding`` is stored as given (an int repeated, any iterable as a tuple, unchecked, as torch),
and ``CircularPadNd`` checks its input's rank."""
from __future__ import annotations

import collections.abc
from itertools import repeat

from .. import functional as F
from .module import Module

__all__ = ['CircularPad1d', 'CircularPad2d', 'CircularPad3d', 'ConstantPad1d', 'ConstantPad2d',
           'ConstantPad3d', 'ReflectionPad1d', 'ReflectionPad2d', 'ReflectionPad3d',
           'ReplicationPad1d', 'ReplicationPad2d', 'ReplicationPad3d', 'ZeroPad1d', 'ZeroPad2d',
           'ZeroPad3d']


def _ntuple(n):
    """torch.nn.modules.utils._ntuple: an iterable as a tuple (any length), else ``n`` copies."""
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))
    return parse


_pair, _quadruple, _sextuple = _ntuple(2), _ntuple(4), _ntuple(6)


# ------------------------------------------------------------------ circular

class _CircularPadNd(Module):
    __constants__ = ["padding"]

    def _check_input_dim(self, input):
        raise NotImplementedError

    def forward(self, input):
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")

    def extra_repr(self):
        return f"{self.padding}"


def _circular(name, parse, dims):
    lo, hi = dims

    def __init__(self, padding):
        _CircularPadNd.__init__(self)
        self.padding = parse(padding)

    def _check_input_dim(self, input):
        if input.dim() != lo and input.dim() != hi:
            raise ValueError(f"expected {lo}D or {hi}D input (got {input.dim()}D input)")
    __init__.__qualname__ = f"{name}.__init__"
    _check_input_dim.__qualname__ = f"{name}._check_input_dim"
    return type(name, (_CircularPadNd,), {"__init__": __init__,
                                          "_check_input_dim": _check_input_dim,
                                          "__module__": __name__})


CircularPad1d = _circular("CircularPad1d", _pair, (2, 3))
CircularPad2d = _circular("CircularPad2d", _quadruple, (3, 4))
CircularPad3d = _circular("CircularPad3d", _sextuple, (4, 5))


# ------------------------------------------------------------------ constant and zero

class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]

    def __init__(self, value):
        super().__init__()
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    def __init__(self, padding, value):
        super().__init__(value)
        self.padding = _pair(padding)


class ConstantPad2d(_ConstantPadNd):
    __constants__ = ["padding", "value"]

    def __init__(self, padding, value):
        super().__init__(value)
        self.padding = _quadruple(padding)


class ConstantPad3d(_ConstantPadNd):
    def __init__(self, padding, value):
        super().__init__(value)
        self.padding = _sextuple(padding)


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


# ------------------------------------------------------------------ reflection and replication

class _ReflectionPadNd(Module):
    __constants__ = ["padding"]

    def forward(self, input):
        return F.pad(input, self.padding, "reflect")

    def extra_repr(self):
        return f"{self.padding}"


class _ReplicationPadNd(Module):
    __constants__ = ["padding"]

    def forward(self, input):
        return F.pad(input, self.padding, "replicate")

    def extra_repr(self):
        return f"{self.padding}"


def _padder(name, base, parse):
    def __init__(self, padding):
        base.__init__(self)
        self.padding = parse(padding)
    __init__.__qualname__ = f"{name}.__init__"
    return type(name, (base,), {"__init__": __init__, "__module__": __name__})


ReflectionPad1d = _padder("ReflectionPad1d", _ReflectionPadNd, _pair)
ReflectionPad2d = _padder("ReflectionPad2d", _ReflectionPadNd, _quadruple)
ReflectionPad3d = _padder("ReflectionPad3d", _ReflectionPadNd, _sextuple)
ReplicationPad1d = _padder("ReplicationPad1d", _ReplicationPadNd, _pair)
ReplicationPad2d = _padder("ReplicationPad2d", _ReplicationPadNd, _quadruple)
ReplicationPad3d = _padder("ReplicationPad3d", _ReplicationPadNd, _sextuple)
