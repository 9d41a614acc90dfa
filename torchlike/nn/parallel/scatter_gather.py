"""torch.nn.parallel's multi-GPU primitives, at torch's module path for them
(``torch.nn.parallel.scatter_gather``, as old multi-GPU code imports it): ``scatter``,
``scatter_kwargs``, ``gather``, and ``replicate``, ``parallel_apply``.

torch implements them with its CUDA communication kernels; on CPU tensors each raises (torch's
own error, class and message: ``gather`` and ``replicate`` assert their tensors are CUDA ones,
``scatter`` calls a CUDA-only binding, ``parallel_apply`` needs an accelerator). torchlike runs
a module on one device (``DataParallel`` here is a single-device stand-in; ``torch.distributed``
spreads work over devices), so these raise the same errors on CPU tensors, and a clear
NotImplementedError on an accelerator's. What they do with no tensor at all (objects copied
per device, an empty device list) is torch's.
"""
from __future__ import annotations

from ..._tensor import Tensor

__all__ = ["scatter", "scatter_kwargs", "gather", "replicate", "parallel_apply"]

_MULTI_DEVICE = ("torch.nn.parallel.{}: torchlike runs a module on one device (DataParallel "
                 "is a single-device stand-in); spread work over devices with "
                 "torch.distributed instead")


def _refuse(name, tensor, cpu_error):
    if tensor.device.type == "cpu":
        raise cpu_error
    raise NotImplementedError(_MULTI_DEVICE.format(name))


def scatter(inputs, target_gpus, dim=0):
    """Split ``inputs`` over ``target_gpus``: a tensor raises (see the module docstring); a
    tuple, list or dict is split element by element; another object is given to each device."""
    def split(obj):
        if isinstance(obj, Tensor):
            _refuse("scatter", obj,
                    AttributeError("module 'torch._C' has no attribute '_scatter'"))
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(split, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(parts) for parts in zip(*map(split, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(parts) for parts in zip(*map(split, obj.items()))]
        return [obj for _ in target_gpus]
    return split(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """``scatter`` of the positional and keyword inputs, padded to the same length."""
    scattered = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered) < len(scattered_kwargs):
        scattered.extend(() for _ in range(len(scattered_kwargs) - len(scattered)))
    elif len(scattered_kwargs) < len(scattered):
        scattered_kwargs.extend({} for _ in range(len(scattered) - len(scattered_kwargs)))
    return tuple(scattered), tuple(scattered_kwargs)


def gather(outputs, target_device, dim=0):
    """Concatenate per-device ``outputs`` on ``target_device``: tensors raise (see the module
    docstring); None gives None, dicts and sequences are gathered element by element."""
    def join(outs):
        first = outs[0]
        if isinstance(first, Tensor):
            _refuse("gather", first,
                    AssertionError("Gather function not implemented for CPU tensors"))
        if first is None:
            return None
        if isinstance(first, dict):
            if not all(len(first) == len(d) for d in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(first)((k, join([d[k] for d in outs])) for k in first)
        return type(first)(map(join, zip(*outs)))
    return join(outputs)


def replicate(network, devices, detach=False):
    """Copies of ``network`` on ``devices``: none for no device; its tensors raise otherwise
    (see the module docstring)."""
    if not devices:
        return []
    for t in list(network.parameters()) + list(network.buffers()):
        _refuse("replicate", t,
                AssertionError("Broadcast function not implemented for CPU tensors"))
    raise NotImplementedError(_MULTI_DEVICE.format("replicate"))


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """Each module on its inputs, one thread a device: torch's checks, then its error without
    an accelerator (see the module docstring)."""
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of inputs {len(inputs)}")
    if kwargs_tup is not None and len(modules) != len(kwargs_tup):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of kwargs_tup {len(kwargs_tup)}")
    from ... import _device
    if _device.accelerator_type() is None:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    raise NotImplementedError(_MULTI_DEVICE.format("parallel_apply"))
