"""``torch.distributed.optim``: ``ZeroRedundancyOptimizer`` (optimizer state sharded over the
ranks of a process group)."""
from .zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
