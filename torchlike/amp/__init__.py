"""torchlike.amp: automatic mixed precision (``autocast``, ``GradScaler``)."""
from .autocast_mode import (autocast, is_autocast_available, custom_fwd, custom_bwd,  # noqa
                            is_autocast_enabled, set_autocast_enabled, get_autocast_dtype,
                            set_autocast_dtype)
from .grad_scaler import GradScaler  # noqa: F401
from . import autocast_mode, grad_scaler  # noqa: F401

__all__ = ["autocast", "GradScaler", "custom_fwd", "custom_bwd", "is_autocast_available"]
