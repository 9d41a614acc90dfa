"""Lazy modules: parameters whose shapes are inferred at the first forward call.

``LazyModuleMixin`` is torch's mixin; the lazy layers themselves live beside their eager
classes (``linear.LazyLinear``, ``conv.LazyConv2d``, ``batchnorm.LazyBatchNorm2d``, ...), built
by the small factories below.
"""
from __future__ import annotations

from ... import _creation
from ..parameter import UninitializedBuffer, UninitializedParameter
from .module import Module

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Materialises the uninitialised parameters on the first call, then becomes ``cls_to_become``."""

    cls_to_become = None

    def _loaded_first_call(self, *args, **kwargs):
        """The first call after load_state_dict materialized every parameter (torch's
        initialize_parameters then only fills in what the layer inferred, e.g. in_features)."""

    def has_uninitialized_params(self):
        return any(isinstance(p, (UninitializedParameter, UninitializedBuffer))
                   for p in list(self._parameters.values()) + list(self._buffers.values()))

    def __call__(self, *args, **kwargs):
        if self.has_uninitialized_params():
            self.initialize_parameters(*args, **kwargs)
            self.reset_parameters()
        elif self.cls_to_become is not None and type(self) is not self.cls_to_become:
            self._loaded_first_call(*args, **kwargs)
        # (also after load_state_dict materialized the parameters: torch's first call then
        # keeps the loaded values and changes the class)
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become
        return Module.__call__(self, *args, **kwargs)


_LazyMixin = LazyModuleMixin


def _name(cls, base, module):
    cls.__name__ = cls.__qualname__ = "Lazy" + base.__name__
    cls.__module__ = module
    return cls


def _lazy_conv(base, module, transposed=False):
    """``LazyConv{1,2,3}d`` / ``LazyConvTranspose{1,2,3}d`` over the eager class ``base``."""
    if transposed:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                     groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                     dtype=None):
            base.__init__(self, groups, out_channels, kernel_size, stride, padding,
                          output_padding, groups, bias, dilation, padding_mode, device=device,
                          dtype=dtype)
            _lazy_params(self, bias, dtype)
    else:
        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                     bias=True, padding_mode="zeros", device=None, dtype=None):
            base.__init__(self, groups, out_channels, kernel_size, stride, padding, dilation,
                          groups, bias, padding_mode, device=device, dtype=dtype)
            _lazy_params(self, bias, dtype)

    def _lazy_params(self, bias, dtype):
        self.in_channels = 0
        self.weight = UninitializedParameter(dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            base.reset_parameters(self)

    def initialize_parameters(self, input, *args, **kwargs):
        self.in_channels = input.shape[0 if input.dim() == self._nd + 1 else 1]
        if self.transposed:
            shape = (self.in_channels, self.out_channels // self.groups, *self.kernel_size)
        else:
            shape = (self.out_channels, self.in_channels // self.groups, *self.kernel_size)
        self.weight.materialize(shape)
        if self.bias is not None:
            self.bias.materialize((self.out_channels,))

    cls = type("Lazy", (LazyModuleMixin, base), {
        "cls_to_become": base, "__init__": __init__, "reset_parameters": reset_parameters,
        "initialize_parameters": initialize_parameters})
    return _name(cls, base, module)


def _lazy_norm(base, module, affine_default=True, track_default=True):
    """``LazyBatchNorm*d`` / ``LazyInstanceNorm*d`` over the eager class ``base``."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=affine_default,
                 track_running_stats=track_default, device=None, dtype=None, *, bias=True):
        from .batchnorm import _NormBase
        _NormBase.__init__(self, 0, eps, momentum, False, False, bias=False, device=device,
                           dtype=dtype)
        self.affine = affine
        self.track_running_stats = track_running_stats
        self._lazy_dtype = dtype
        if affine:
            self.weight = UninitializedParameter(dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(dtype=dtype)
        if track_running_stats:
            from ... import long
            self.running_mean = UninitializedBuffer(dtype=dtype)
            self.running_var = UninitializedBuffer(dtype=dtype)
            self.num_batches_tracked = _creation.tensor(0, dtype=long)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            base.reset_parameters(self)

    def initialize_parameters(self, input):
        self.num_features = input.shape[0 if input.dim() == getattr(self, "_nd", -1) + 1 else 1]
        if self.affine:
            self.weight.materialize((self.num_features,))
            if self.bias is not None:
                self.bias.materialize((self.num_features,))
        if self.track_running_stats:
            self.running_mean.materialize((self.num_features,))
            self.running_var.materialize((self.num_features,))

    cls = type("Lazy", (LazyModuleMixin, base), {
        "cls_to_become": base, "__init__": __init__, "reset_parameters": reset_parameters,
        "initialize_parameters": initialize_parameters})
    return _name(cls, base, module)
