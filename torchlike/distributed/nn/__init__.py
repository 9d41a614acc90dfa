"""torch.distributed.nn: collectives autograd differentiates through."""
from . import functional  # noqa: F401
from .functional import all_reduce, all_gather  # noqa: F401

__all__ = ["functional", "all_reduce", "all_gather"]
