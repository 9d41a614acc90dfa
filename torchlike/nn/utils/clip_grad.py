"""torch.nn.utils.clip_grad: gradient clipping."""
from __future__ import annotations

from . import (clip_grad_norm, clip_grad_norm_, clip_grad_value_,  # noqa: F401
               clip_grads_with_norm_, get_total_norm)

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]
