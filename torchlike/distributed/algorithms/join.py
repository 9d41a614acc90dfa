"""torch.distributed.algorithms.join: the context manager for ranks with uneven inputs.

torch's ``Join`` lets ranks that ran out of data shadow the collectives of those still
training. torchlike's collectives have no shadowing: in a job of one process (or none) the
context does nothing, as torch's does there; in a job of several it is refused when entered
(give every rank the same number of batches, as ``DistributedSampler`` does), rather than let
the ranks wait on each other until the timeout.
"""
from __future__ import annotations

from abc import ABC, abstractmethod

__all__ = ["Join", "Joinable", "JoinHook"]


class JoinHook:
    """What a joined rank runs in place of a Joinable's collectives (torch's interface)."""

    def main_hook(self):
        pass

    def post_hook(self, is_last_joiner):
        pass


class Joinable(ABC):
    """A class taking part in ``Join`` (torch's DDP and ZeroRedundancyOptimizer are)."""

    @abstractmethod
    def __init__(self):
        super().__init__()

    @abstractmethod
    def join_hook(self, **kwargs):
        ...

    @property
    @abstractmethod
    def join_device(self):
        ...

    @property
    @abstractmethod
    def join_process_group(self):
        ...


class Join:
    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables = joinables
        self._enable = enable
        self._throw = throw_on_early_termination
        self._kwargs = kwargs

    def __enter__(self):
        from .. import distributed_c10d as c10d
        if self._enable and c10d.is_initialized() and c10d.get_world_size() > 1:
            raise NotImplementedError(
                "torchlike.distributed.algorithms.Join: uneven inputs across processes are not "
                "supported (a joined rank cannot shadow the others' collectives); give every "
                "rank the same number of batches (DistributedSampler pads or drops to that)")
        return self

    def __exit__(self, *exc):
        return False

    @staticmethod
    def notify_join_context(joinable):
        """The per-iteration all-reduce of torch's Join: nothing to do in a job of one."""
        return None
