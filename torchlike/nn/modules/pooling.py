"""Pooling modules (torch.nn.modules.pooling): max, average, Lp, adaptive and unpooling."""
from __future__ import annotations

import collections.abc
from itertools import repeat

from .. import functional as F
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "AvgPool1d",
           "AvgPool2d", "AvgPool3d", "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool3d", "FractionalMaxPool2d",
           "FractionalMaxPool3d", "AdaptiveMaxPool1d",
           "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d",
           "AdaptiveAvgPool3d"]


def _ntuple(x, n):
    """torch.nn.modules.utils._ntuple(n)(x): an iterable as a tuple (unchecked), else ``n``
    copies; the values are kept as given, as torch (its functional form rejects floats)."""
    if isinstance(x, collections.abc.Iterable):
        return tuple(x)
    return tuple(repeat(x, n))


class _MaxPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return ("kernel_size={kernel_size}, stride={stride}, padding={padding}"
                ", dilation={dilation}, ceil_mode={ceil_mode}".format(**self.__dict__))


class MaxPool1d(_MaxPoolNd):
    _fn = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    _fn = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    _fn = staticmethod(F.max_pool3d)


class _AvgPoolNd(Module):
    """torch's base of the average pools."""

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, 1)
        self.stride = _ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = _ntuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AdaptiveNd(Module):
    _fn = None

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        if return_indices or type(self)._max:
            self.return_indices = return_indices

    _max = False

    def forward(self, input):
        if type(self)._max:
            return type(self)._fn(input, self.output_size, self.return_indices)
        return type(self)._fn(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _AdaptiveAvgPoolNd(_AdaptiveNd):
    """torch's base of the adaptive average pools."""


class _AdaptiveMaxPoolNd(_AdaptiveNd):
    """torch's base of the adaptive max pools."""
    _max = True

    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size, return_indices)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    _fn = staticmethod(F.adaptive_avg_pool1d)

    def __init__(self, output_size):
        super().__init__(output_size)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    _fn = staticmethod(F.adaptive_avg_pool2d)

    def __init__(self, output_size):
        super().__init__(output_size)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    _fn = staticmethod(F.adaptive_max_pool1d)
    _max = True


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    _fn = staticmethod(F.adaptive_max_pool2d)
    _max = True


class AvgPool3d(_AvgPoolNd):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return F.avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    _fn = staticmethod(F.adaptive_avg_pool3d)

    def __init__(self, output_size):
        super().__init__(output_size)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    _fn = staticmethod(F.adaptive_max_pool3d)
    _max = True


class _LPPoolNd(Module):
    _fn = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = (norm_type, kernel_size,
                                                                          stride, ceil_mode)

    def forward(self, input):
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride,
                              self.ceil_mode)

    def extra_repr(self):
        return ("norm_type={norm_type}, kernel_size={kernel_size}, stride={stride}, "
                "ceil_mode={ceil_mode}".format(**self.__dict__))


class LPPool1d(_LPPoolNd):
    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    _fn = staticmethod(F.lp_pool2d)


class _MaxUnpoolNd(Module):
    _fn = None
    _nd = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._nd)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self._nd)
        self.padding = _ntuple(padding, self._nd)

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    _fn = staticmethod(F.max_unpool1d)
    _nd = 1


class MaxUnpool2d(_MaxUnpoolNd):
    _fn = staticmethod(F.max_unpool2d)


class LPPool3d(_LPPoolNd):
    _fn = staticmethod(F.lp_pool3d)


class MaxUnpool3d(_MaxUnpoolNd):
    _fn = staticmethod(F.max_unpool3d)
    _nd = 3


class _FractionalMaxPoolNd(Module):
    _nd = 2

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        nd = self._nd
        if nd == 3 and ((isinstance(kernel_size, int) and kernel_size <= 0) or
                        (isinstance(kernel_size, (tuple, list)) and
                         not all(k > 0 for k in kernel_size))):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        self.kernel_size = _ntuple(kernel_size, nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, nd) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, nd) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{type(self).__name__} requires specifying either an output "
                             "size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None:
            # torch indexes the first nd ratios (a shorter tuple: IndexError)
            if not all(0 < self.output_ratio[i] < 1 for i in range(nd)):
                raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        fn = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio,
                  self.return_indices, _random_samples=self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    _nd = 3


def _named_init(cls, qualname):
    """Give ``cls`` a copy of its ``__init__`` whose name is torch's (``MaxUnpool2d.__init__``,
    ``_AdaptiveAvgPoolNd.__init__``), as Python's argument errors print it."""
    import types
    from .module import _builds_on_device
    f = getattr(cls.__init__, "__wrapped__", cls.__init__)
    code = f.__code__
    if hasattr(code, "co_qualname"):
        code = code.replace(co_qualname=qualname)
    g = types.FunctionType(code, f.__globals__, "__init__", f.__defaults__, f.__closure__)
    g.__kwdefaults__ = f.__kwdefaults__
    g.__qualname__ = qualname
    g.__doc__ = f.__doc__
    cls.__init__ = _builds_on_device(g)


for _cls in (MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, FractionalMaxPool2d, FractionalMaxPool3d):
    _named_init(_cls, f"{_cls.__name__}.__init__")
for _cls in (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d):
    _named_init(_cls, "_AdaptiveAvgPoolNd.__init__")
for _cls in (AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d):
    _named_init(_cls, "_AdaptiveMaxPoolNd.__init__")
