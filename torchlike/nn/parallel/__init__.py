"""torch.nn.parallel: DataParallel (single-device stand-in)."""
from .data_parallel import DataParallel  # noqa: F401

__all__ = ["DataParallel"]
