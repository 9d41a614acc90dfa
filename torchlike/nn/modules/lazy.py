"""Lazy modules: parameters whose shapes are inferred at the first forward call."""
from __future__ import annotations

from ... import _creation
from ..parameter import Parameter
from .conv import Conv1d, Conv2d
from .layers import BatchNorm1d, BatchNorm2d
from .linear import Linear
from .module import Module

__all__ = ["UninitializedParameter", "UninitializedBuffer", "LazyLinear", "LazyConv1d",
           "LazyConv2d", "LazyBatchNorm1d", "LazyBatchNorm2d"]


class UninitializedParameter(Parameter):
    """A parameter with no shape yet; ``materialize(shape)`` turns it into a Parameter."""

    __slots__ = ()

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        p = Parameter.__new__(cls, _creation.empty(0, dtype=dtype), requires_grad)
        return p

    def materialize(self, shape, device=None, dtype=None):
        self._set_data(_creation.empty(*shape, dtype=dtype or self.dtype)._data)
        self.__class__ = Parameter

    def __repr__(self):
        return "<UninitializedParameter>"


class UninitializedBuffer:
    pass


class _LazyMixin:
    cls_to_become = None

    def has_uninitialized_params(self):
        return any(isinstance(p, UninitializedParameter) for p in self._parameters.values())

    def __call__(self, *args, **kwargs):
        if self.has_uninitialized_params():
            self.initialize_parameters(*args, **kwargs)
            self.reset_parameters()
            if self.cls_to_become is not None:
                self.__class__ = self.cls_to_become
        return Module.__call__(self, *args, **kwargs)


class LazyLinear(_LazyMixin, Linear):
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        self.in_features = 0
        self.out_features = out_features
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)
        else:
            self.register_parameter("bias", None)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            Linear.reset_parameters(self)

    def initialize_parameters(self, input):
        self.in_features = input.shape[-1]
        self.weight.materialize((self.out_features, self.in_features))
        if self.bias is not None:
            self.bias.materialize((self.out_features,))


def _lazy_conv(base):
    class LazyConv(_LazyMixin, base):
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                     bias=True, padding_mode="zeros", device=None, dtype=None):
            base.__init__(self, groups, out_channels, kernel_size, stride, padding, dilation,
                          groups, bias, padding_mode, dtype=dtype)
            self.in_channels = 0
            self.weight = UninitializedParameter(dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(dtype=dtype)

        def reset_parameters(self):
            if not self.has_uninitialized_params() and self.in_channels != 0:
                base.reset_parameters(self)

        def initialize_parameters(self, input, *args, **kwargs):
            self.in_channels = input.shape[0 if input.dim() == self._nd + 1 else 1]
            self.weight.materialize((self.out_channels, self.in_channels // self.groups,
                                     *self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))

    LazyConv.__name__ = LazyConv.__qualname__ = "Lazy" + base.__name__
    return LazyConv


LazyConv1d = _lazy_conv(Conv1d)
LazyConv2d = _lazy_conv(Conv2d)


def _lazy_bn(base):
    class LazyBN(_LazyMixin, base):
        cls_to_become = base

        def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                     device=None, dtype=None):
            base.__init__(self, 0, eps, momentum, affine, track_running_stats, dtype=dtype)
            if affine:
                self.weight = UninitializedParameter(dtype=dtype)
                self.bias = UninitializedParameter(dtype=dtype)
            self._lazy_dtype = dtype

        def reset_parameters(self):
            if not self.has_uninitialized_params() and self.num_features != 0:
                base.reset_parameters(self)

        def initialize_parameters(self, input):
            self.num_features = input.shape[1]
            if self.affine:
                self.weight.materialize((self.num_features,))
                self.bias.materialize((self.num_features,))
            if self.track_running_stats:
                self.running_mean = _creation.zeros(self.num_features, dtype=self._lazy_dtype)
                self.running_var = _creation.ones(self.num_features, dtype=self._lazy_dtype)

    LazyBN.__name__ = LazyBN.__qualname__ = "Lazy" + base.__name__
    return LazyBN


LazyBatchNorm1d = _lazy_bn(BatchNorm1d)
LazyBatchNorm2d = _lazy_bn(BatchNorm2d)
