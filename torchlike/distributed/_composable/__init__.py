"""torch.distributed._composable: the composable APIs' old home (``fully_shard`` under
``_composable.fsdp``), still imported by libraries."""
