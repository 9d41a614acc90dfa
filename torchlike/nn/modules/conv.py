"""Conv1d/2d/3d and ConvTranspose1d/2d with torch's parameters, init and repr."""
from __future__ import annotations

import collections.abc
import math
from itertools import repeat

from ... import _creation
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .lazy import _lazy_conv
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d"]


def _ntuple(n):
    """torch.nn.modules.utils._ntuple: an iterable as a tuple (unchecked), else ``n`` copies.
    The values are kept as given: torch's ``empty`` then rejects a float kernel size."""
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))
    return parse


class _ConvNd(Module):
    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None):
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        # torch's F.pad argument for a non-zeros padding_mode (third-party convs read it)
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    self._reversed_padding_repeated_twice[2 * i] = total // 2
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - total // 2
        else:
            self._reversed_padding_repeated_twice = tuple(x for x in reversed(padding)
                                                          for _ in range(2))
        if transposed:
            shape = (in_channels, out_channels // groups, *kernel_size)
        else:
            shape = (out_channels, in_channels // groups, *kernel_size)
        self.weight = Parameter(_creation.empty(shape, dtype=dtype))
        if bias:
            self.bias = Parameter(_creation.empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class _Conv(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        tup = _ntuple(self._nd)
        k = tup(kernel_size)
        s = tup(stride)
        p = padding if isinstance(padding, str) else tup(padding)
        d = tup(dilation)
        super().__init__(in_channels, out_channels, k, s, p, d, False, tup(0), groups,
                         bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        return F._convnd(input, weight, bias, self.stride, self.padding, self.dilation,
                         self.groups, self._nd, self.padding_mode)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    _nd = 1


class Conv2d(_Conv):
    _nd = 2


class Conv3d(_Conv):
    _nd = 3


class _ConvTranspose(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f"{self.__class__.__name__}")
        tup = _ntuple(self._nd)
        super().__init__(in_channels, out_channels, tup(kernel_size), tup(stride),
                         tup(padding), tup(dilation), True, tup(output_padding), groups, bias,
                         padding_mode, device, dtype)

    def forward(self, input, output_size=None):
        return F._conv_tnd(input, self.weight, self.bias, self.stride, self.padding,
                           self.output_padding, self.groups, self.dilation, self._nd,
                           output_size)


# torch's name for the transposed convolutions' base (isinstance checks in init loops)
_ConvTransposeNd = _ConvTranspose


class ConvTranspose1d(_ConvTranspose):
    _nd = 1


class ConvTranspose2d(_ConvTranspose):
    _nd = 2


class ConvTranspose3d(_ConvTranspose):
    _nd = 3


def _own_init(cls):
    """Give ``cls`` a copy of its base's ``__init__`` named ``cls.__init__``, so Python's
    argument errors read ``Conv2d.__init__() ...`` as torch's."""
    import types
    from .module import _builds_on_device
    f = getattr(cls.__init__, "__wrapped__", cls.__init__)
    code = f.__code__
    if hasattr(code, "co_qualname"):
        code = code.replace(co_qualname=f"{cls.__name__}.__init__")
    g = types.FunctionType(code, f.__globals__, "__init__", f.__defaults__, f.__closure__)
    g.__kwdefaults__ = f.__kwdefaults__
    g.__qualname__ = f"{cls.__name__}.__init__"
    g.__doc__ = f.__doc__
    cls.__init__ = _builds_on_device(g)


for _cls in (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d):
    _own_init(_cls)


LazyConv1d = _lazy_conv(Conv1d, __name__)
LazyConv2d = _lazy_conv(Conv2d, __name__)
LazyConv3d = _lazy_conv(Conv3d, __name__)
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d, __name__, transposed=True)
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d, __name__, transposed=True)
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d, __name__, transposed=True)
