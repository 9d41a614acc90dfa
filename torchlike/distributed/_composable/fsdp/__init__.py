"""torch.distributed._composable.fsdp: ``fully_shard`` and its policies, torchlike.distributed.fsdp's."""
from ...fsdp import (CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy,  # noqa: F401
                     OffloadPolicy, fully_shard)

__all__ = ["fully_shard", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy",
           "CPUOffloadPolicy"]
