"""torch.distributed.fsdp.fully_sharded_data_parallel: where libraries import FSDP's class and
its options from (accelerate, Hugging Face's Trainer); the same objects as
``torchlike.distributed.fsdp``'s."""
from ._fsdp1 import (BackwardPrefetch, CPUOffload, FullOptimStateDictConfig,  # noqa: F401
                     FullStateDictConfig, FullyShardedDataParallel, MixedPrecision,
                     ShardedOptimStateDictConfig, ShardedStateDictConfig, ShardingStrategy,
                     StateDictType)

__all__ = ["FullyShardedDataParallel", "ShardingStrategy", "BackwardPrefetch", "MixedPrecision",
           "CPUOffload", "StateDictType", "FullStateDictConfig", "ShardedStateDictConfig",
           "FullOptimStateDictConfig", "ShardedOptimStateDictConfig"]
