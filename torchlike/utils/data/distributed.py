"""torch.utils.data.distributed: DistributedSampler.

The shuffled order is torch's own: ``torch.randperm(n, generator=torch.Generator().manual_seed(
seed + epoch))`` on the CPU is a Fisher-Yates shuffle driven by the 32-bit outputs of an mt19937
seeded with ``seed + epoch``; numpy's MT19937 (legacy seeding) yields the same outputs, so every
rank draws torch's permutation, on the host, with no device work.
"""
from __future__ import annotations

import math

import numpy as np

from ._impl import Sampler

__all__ = ["DistributedSampler"]


def _torch_cpu_randperm(n, seed):
    """``torch.randperm(n, generator=torch.Generator().manual_seed(seed))`` as a list."""
    bg = np.random.MT19937(0)
    bg._legacy_seeding(seed & 0xFFFFFFFF)
    r = list(range(n))
    raw = bg.random_raw(max(n - 1, 0)).tolist()
    for i in range(n - 1):
        z = raw[i] % (n - i) + i
        r[i], r[z] = r[z], r[i]
    return r


class DistributedSampler(Sampler):
    """The share of ``dataset`` for replica ``rank`` of ``num_replicas`` (default: this
    process's rank and the world size of the default process group).

    >>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
    [1, 3, 0]
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        if num_replicas is None or rank is None:
            from ... import distributed as dist
            if not dist.is_available():
                raise RuntimeError("Requires distributed package to be available")
            if num_replicas is None:
                num_replicas = dist.get_world_size()
            if rank is None:
                rank = dist.get_rank()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch = 0
        self.drop_last = drop_last
        if self.drop_last and len(self.dataset) % self.num_replicas != 0:
            self.num_samples = math.ceil((len(self.dataset) - self.num_replicas)
                                         / self.num_replicas)
        else:
            self.num_samples = math.ceil(len(self.dataset) / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self):
        if self.shuffle:
            indices = _torch_cpu_randperm(len(self.dataset), self.seed + self.epoch)
        else:
            indices = list(range(len(self.dataset)))
        if not self.drop_last:
            padding_size = self.total_size - len(indices)
            if padding_size <= len(indices):
                indices += indices[:padding_size]
            else:
                indices += (indices * math.ceil(padding_size / len(indices)))[:padding_size]
        else:
            indices = indices[:self.total_size]
        indices = indices[self.rank:self.total_size:self.num_replicas]
        return iter(indices)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        self.epoch = epoch
