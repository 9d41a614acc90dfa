"""torch.distributed.algorithms: ``Join`` (``join``), for training with uneven inputs."""
from .join import Join, Joinable, JoinHook  # noqa: F401

__all__ = ["Join", "Joinable", "JoinHook"]
