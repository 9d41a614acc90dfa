"""torch.nn.utils.init: ``skip_init``."""
from __future__ import annotations

from . import skip_init  # noqa: F401

__all__ = ["skip_init"]
