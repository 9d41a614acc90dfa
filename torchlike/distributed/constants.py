"""torch.distributed.constants: the default process-group timeouts."""
from .distributed_c10d import default_pg_timeout  # noqa: F401

__all__ = ["default_pg_timeout", "default_pg_nccl_timeout"]

default_pg_nccl_timeout = default_pg_timeout
