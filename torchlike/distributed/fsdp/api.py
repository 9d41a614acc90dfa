"""torch.distributed.fsdp.api: FSDP's option classes (the same objects as
``torchlike.distributed.fsdp``'s)."""
from ._fsdp1 import (BackwardPrefetch, CPUOffload, FullOptimStateDictConfig,  # noqa: F401
                     FullStateDictConfig, MixedPrecision, ShardedOptimStateDictConfig,
                     ShardedStateDictConfig, ShardingStrategy, StateDictType)

__all__ = ["ShardingStrategy", "BackwardPrefetch", "MixedPrecision", "CPUOffload",
           "StateDictType", "FullStateDictConfig", "ShardedStateDictConfig",
           "FullOptimStateDictConfig", "ShardedOptimStateDictConfig"]
