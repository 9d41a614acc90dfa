"""torch.nn.parallel: DataParallel and data_parallel (single-device stand-ins) and
DistributedDataParallel."""
from .data_parallel import DataParallel, data_parallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
