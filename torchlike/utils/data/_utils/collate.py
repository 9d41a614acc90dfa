"""torch.utils.data._utils.collate."""
from .._impl import default_collate, default_convert  # noqa: F401

__all__ = ["default_collate", "default_convert"]
