"""torch.nn.parallel: DataParallel (single-device stand-in) and DistributedDataParallel."""
from .data_parallel import DataParallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DataParallel", "DistributedDataParallel"]
