"""torch.nn.parallel: DataParallel and data_parallel (single-device stand-ins),
DistributedDataParallel, and the multi-GPU primitives (scatter, gather, replicate,
parallel_apply: torch's errors on CPU tensors)."""
from .data_parallel import DataParallel, data_parallel  # noqa: F401
from .distributed import DistributedDataParallel  # noqa: F401
from .scatter_gather import gather, parallel_apply, replicate, scatter  # noqa: F401

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel", "gather",
           "parallel_apply", "replicate", "scatter"]
