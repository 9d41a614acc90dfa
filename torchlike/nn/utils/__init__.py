"""torchlike.nn.utils: gradient clipping, parameter vectors, rnn helpers."""
from __future__ import annotations

import math

import jax.numpy as jnp

from ..._tensor import Tensor
from . import rnn  # noqa: F401
from . import parametrize  # noqa: F401
from . import parametrizations  # noqa: F401
from .weight_norm import weight_norm, remove_weight_norm  # noqa: F401
from .spectral_norm import spectral_norm, remove_spectral_norm  # noqa: F401
from . import fusion  # noqa: F401
from . import stateless  # noqa: F401
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,  # noqa: F401
                     fuse_linear_bn_weights)

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_", "parameters_to_vector", "vector_to_parameters", "rnn",
           "weight_norm", "remove_weight_norm", "parametrize", "parametrizations", "spectral_norm", "remove_spectral_norm", "fusion", "fuse_conv_bn_eval",
           "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights", "stateless",
           "skip_init"]


def _params(parameters):
    if isinstance(parameters, Tensor):
        return [parameters]
    return list(parameters)


def _grads(parameters):
    return [p.grad for p in _params(parameters) if p.grad is not None]


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return Tensor._make(jnp.asarray(0.0, jnp.float32))
    if norm_type == math.inf:
        norms = [jnp.max(jnp.abs(g._data)) for g in tensors]
        total = jnp.max(jnp.stack(norms))
    else:
        norms = [jnp.sum(jnp.abs(g._data.astype(jnp.float64)) ** norm_type) ** (1 / norm_type)
                 for g in tensors]
        total = jnp.sum(jnp.stack(norms) ** norm_type) ** (1 / norm_type)
    total = total.astype(tensors[0]._d.dtype)
    if error_if_nonfinite and not bool(jnp.isfinite(total)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable "
                           "this error and scale the gradients by the non-finite norm anyway, "
                           "set `error_if_nonfinite=False`")
    return Tensor._make(total)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    grads = _grads(parameters)
    if not grads:
        return
    coef = float(max_norm) / (float(total_norm) + 1e-6)
    coef = min(coef, 1.0)
    for g in grads:
        g._set_data((g._data * coef).astype(g._d.dtype))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale gradients in place so that their total norm is at most ``max_norm``."""
    params = _params(parameters)
    grads = _grads(params)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(params, max_norm, total)
    return total


clip_grad_norm = clip_grad_norm_


def clip_grad_value_(parameters, clip_value, foreach=None):
    clip_value = float(clip_value)
    for g in _grads(parameters):
        g._set_data(jnp.clip(g._data, -clip_value, clip_value))


def parameters_to_vector(parameters):
    from ... import cat
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    data = vec._data
    for p in parameters:
        n = p.numel()
        p._set_data(data[pointer:pointer + n].reshape(p._d.shape).astype(p._d.dtype))
        pointer += n


def skip_init(module_cls, *args, **kwargs):
    """Construct ``module_cls(*args, **kwargs)`` whose parameters are left uninitialized (torch:
    arbitrary values). The module must accept a ``device`` argument, as torch requires;
    torchlike builds it directly on that device (its values are then the initializer's)."""
    import inspect
    from ..modules.module import Module
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    return module_cls(*args, **kwargs)
