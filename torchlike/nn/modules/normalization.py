"""LayerNorm, RMSNorm, GroupNorm, LocalResponseNorm (torch.nn.modules.normalization)."""
from __future__ import annotations

import numbers

import jax
import jax.numpy as jnp
import numpy as np

from ... import _creation
from ..._registry import apply, defop
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["LocalResponseNorm", "CrossMapLRN2d", "LayerNorm", "GroupNorm", "RMSNorm"]


def _affine_params(mod, enabled, shape, bias, dtype):
    """Register a normalisation layer's weight and (optional) bias, or None for both."""
    mod.register_parameter("weight", Parameter(_creation.empty(tuple(shape), dtype=dtype))
                           if enabled else None)
    mod.register_parameter("bias", Parameter(_creation.empty(tuple(shape), dtype=dtype))
                           if enabled and bias else None)


def _reset_affine(mod):
    """torch's initialisation of an affine normalisation: weight ones, bias zeros."""
    if mod.weight is not None:
        init.ones_(mod.weight)
    if mod.bias is not None:
        init.zeros_(mod.bias)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_params(self, self.elementwise_affine, self.normalized_shape, bias, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return ("{normalized_shape}, eps={eps}, elementwise_affine={elementwise_affine}, "
                "bias={use_bias}".format(**self.__dict__, use_bias=self.bias is not None))


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if self.elementwise_affine:
            self.weight = Parameter(_creation.empty(*self.normalized_shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return ("{normalized_shape}, eps={eps}, "
                "elementwise_affine={elementwise_affine}".format(**self.__dict__))


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None,
                 *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                     eps, affine)
        _affine_params(self, self.affine, (num_channels,), bias, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        _reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return ("{num_groups}, {num_channels}, eps={eps}, affine={affine}, "
                "bias={use_bias}".format(**self.__dict__, use_bias=self.bias is not None))


class LocalResponseNorm(Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


class CrossMapLRN2d(Module):
    """torch's legacy cross-channel LRN over 4-D input (the same values as local_response_norm)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        mf, mb = _cross_map_windows(int(input.shape[1]), int(self.size))
        from ..._tensor import Tensor
        return apply(_cross_map_lrn2d, input, Tensor._make(jnp.asarray(mf, input._d.dtype)),
                     Tensor._make(jnp.asarray(mb, input._d.dtype)), size=int(self.size),
                     alpha=float(self.alpha), beta=float(self.beta), k=float(self.k))

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)


def _cross_map_windows(C, size):
    """The channel windows of torch's legacy CrossMapLRN2d: its forward's running sum (which
    never drops the first channels' squares at the start) and its backward's centred window."""
    pre_pad = int((size - 1) / 2 + 1)
    fwd = np.zeros((C, C))
    cur = np.zeros(C)
    cur[:min(pre_pad, C)] = 1
    fwd[0] = cur
    for c in range(1, C):
        if c < C - pre_pad + 1:
            cur[c + pre_pad - 1] += 1
        if c > pre_pad:
            cur[c - pre_pad] -= 1
        fwd[c] = cur
    inv = int(size - (size - 1) / 2)
    bwd = np.zeros((C, C))
    for c in range(C):
        lo = c - inv
        for i in range(max(lo, 0), min(lo + size, C)):
            bwd[c, i] = 1
    return fwd, bwd


@jax.custom_vjp
def _cml_core(x, mf, mb, size, alpha, beta, k):
    scale = k + alpha / size * jnp.einsum("dc,nchw->ndhw", mf, x * x)
    return x * scale ** -beta


def _cml_fwd(x, mf, mb, size, alpha, beta, k):
    scale = k + alpha / size * jnp.einsum("dc,nchw->ndhw", mf, x * x)
    out = x * scale ** -beta
    return out, (x, mf, mb, scale, out, size, alpha, beta)


def _cml_bwd(res, g):
    # torch's CrossMapLRN2d.backward (a centred window, whatever the forward summed)
    x, mf, mb, scale, out, size, alpha, beta = res
    ratio = g * out / scale
    acc = jnp.einsum("ci,nihw->nchw", mb, ratio)
    gx = scale ** -beta * g - (2 * alpha * beta / size) * x * acc
    return (gx, jnp.zeros_like(mf), jnp.zeros_like(mb), None, None, None, None)


_cml_core.defvjp(_cml_fwd, _cml_bwd)


@defop("cross_map_lrn2d", grad_name="CrossMapLRN2dBackward")
def _cross_map_lrn2d(x, mf, mb, size, alpha, beta, k):
    return _cml_core(x, mf, mb, size, alpha, beta, k)
