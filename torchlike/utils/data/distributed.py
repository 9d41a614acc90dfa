"""torch.utils.data.distributed: DistributedSampler."""
from ._impl import DistributedSampler  # noqa: F401

__all__ = ["DistributedSampler"]
