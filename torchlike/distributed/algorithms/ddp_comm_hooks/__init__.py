"""torch.distributed.algorithms.ddp_comm_hooks: communication hooks for
``DistributedDataParallel.register_comm_hook`` (``default_hooks``), and ``GradBucket``, the
bucket a hook receives."""
from . import default_hooks  # noqa: F401
from .default_hooks import GradBucket  # noqa: F401

__all__ = ["default_hooks", "GradBucket"]
