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


def _no_grad(fn):
    """``fn`` run under ``no_grad`` (torch decorates the clipping functions so)."""
    import functools
    from ...autograd.grad_mode import no_grad

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with no_grad():
            return fn(*args, **kwargs)
    return wrapper


@_no_grad
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of the tensors' norms (as if they were one vector), computed as
    torch computes it: each tensor's norm in its dtype, then the norm of their stack. Recorded
    ops: no host read (fused eager keeps the step in one program) unless
    ``error_if_nonfinite``."""
    import torchlike as tl
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    tensors = list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return tl.tensor(0.0)
    first = tensors[0].device
    norms = [tl.linalg.vector_norm(g, norm_type) for g in tensors]
    total = tl.linalg.vector_norm(tl.stack([n.to(first) for n in norms]), norm_type)
    if error_if_nonfinite and bool(total.isnan() | total.isinf()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable "
                           "this error and scale the gradients by the non-finite norm anyway, "
                           "set `error_if_nonfinite=False`")
    return total


@_no_grad
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients in place by ``min(max_norm / (total_norm + 1e-6), 1)``, a tensor
    (torch never reads it on the host)."""
    import torchlike as tl
    grads = _grads(parameters)
    max_norm = float(max_norm)
    if not grads:
        return
    coef = tl.clamp(max_norm / (total_norm + 1e-6), max=1.0)
    for g in grads:
        g.mul_(coef.to(g.device))


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale gradients in place so that their total norm is at most ``max_norm``; returns the
    total norm (a tensor)."""
    import types
    import warnings
    if isinstance(parameters, Tensor):
        params = [parameters]
    else:
        generator = isinstance(parameters, types.GeneratorType)
        params = list(parameters)
        if generator and not params:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=3)
    grads = _grads(params)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(params, max_norm, total)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated spelling of ``clip_grad_norm_`` (torch's FutureWarning)."""
    import warnings
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient in place to ``[-clip_value, clip_value]``."""
    clip_value = float(clip_value)
    for g in _grads(parameters):
        g.clamp_(min=-clip_value, max=clip_value)


def parameters_to_vector(parameters):
    from ... import cat
    return cat([p.view(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    pointer = 0
    for p in parameters:
        n = p.numel()
        # as torch: the parameter takes a view of the vector's storage (earlier aliases of
        # the parameter keep their values; a short vector raises view's "shape '[4, 3]' is
        # invalid for input of size 3")
        p.data = vec[pointer:pointer + n].view_as(p).data
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


# torch's submodules of torch.nn.utils (imported after the functions they re-export)
from . import clip_grad, convert_parameters, init, memory_format  # noqa: F401,E402
from .memory_format import (convert_conv2d_weight_memory_format,  # noqa: F401,E402
                            convert_conv3d_weight_memory_format)
