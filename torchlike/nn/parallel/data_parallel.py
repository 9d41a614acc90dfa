"""DataParallel and its functional form data_parallel (torch.nn.parallel.data_parallel)."""
from __future__ import annotations

from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Single-device stand-in for ``nn.DataParallel``: wraps ``module`` (keys get "module.")."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = [] if device_ids is None else list(device_ids)
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)



def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """``torch.nn.parallel.data_parallel``: ``module(*inputs, **module_kwargs)`` on the
    accelerator ``device_ids[0]`` (default: the first accelerator device), whose
    parameters and buffers must already be there, as torch checks. Without an accelerator it
    raises torch's RuntimeError ("device type could not be determined"). Like ``DataParallel``
    here, the module runs once on that one device (no replicas on the other ``device_ids``):
    its tensor inputs are moved there, and its output is returned where the module left it
    (``output_device`` is not applied)."""
    from ... import _device
    from ..._tensor import Tensor
    from ...utils._pytree import tree_map
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    device_type = _device.accelerator_type()
    if device_type is None:
        raise RuntimeError("device type could not be determined")
    if device_ids is None:
        from ... import accelerator
        device_ids = list(range(accelerator.device_count())) or None
    if device_ids is None:
        raise RuntimeError("no available devices were found")
    first = device_ids[0]
    index = first.index if isinstance(first, _device.device) else int(first)
    src = _device.device(device_type, index)
    for t in list(module.parameters()) + list(module.buffers()):
        if t.device != src:
            raise RuntimeError(
                "module must have its parameters and buffers "
                f"on device {src} (device_ids[0]) but found one of "
                f"them on device: {t.device}")
    move = lambda x: x.to(src) if isinstance(x, Tensor) else x  # noqa: E731
    return module(*tree_map(move, inputs), **tree_map(move, dict(module_kwargs or {})))
