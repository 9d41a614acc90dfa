"""DataParallel (torch.nn.parallel.data_parallel)."""
from __future__ import annotations

from ..modules.module import Module

__all__ = ["DataParallel"]


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

