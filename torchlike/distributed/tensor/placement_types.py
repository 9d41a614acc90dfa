"""Placements (torch.distributed.tensor.placement_types): how a tensor lies along one mesh
dimension. torch lists them per mesh dimension; jax's PartitionSpec per tensor dimension:
``Shard(d)`` on mesh dim ``i`` puts axis ``i``'s name at ``P[d]``, ``Replicate`` adds nothing,
``Partial`` makes the axis ``unreduced``."""
from __future__ import annotations

__all__ = ["Placement", "Shard", "Replicate", "Partial"]


class Placement:
    def is_shard(self, dim=None):
        return False

    def is_replicate(self):
        return False

    def is_partial(self, reduce_op=None):
        return False


class Shard(Placement):
    def __init__(self, dim=0):
        self.dim = dim

    def is_shard(self, dim=None):
        return dim is None or dim == self.dim

    def __eq__(self, other):
        return isinstance(other, Shard) and other.dim == self.dim

    def __hash__(self):
        return hash(("Shard", self.dim))

    def __repr__(self):
        return f"Shard(dim={self.dim})"


class _StridedShard(Shard):
    """torch's strided shard (``dim`` split into ``split_factor`` interleaved pieces first: what
    FSDP over tensor parallelism makes). It can be named and compared, as libraries that
    inspect placements do; a DTensor laid out this way is refused (jax shards contiguous
    blocks)."""

    def __init__(self, dim=0, split_factor=1):
        super().__init__(dim)
        self.split_factor = split_factor

    def __eq__(self, other):
        return (isinstance(other, _StridedShard) and other.dim == self.dim
                and other.split_factor == self.split_factor)

    def __hash__(self):
        return hash(("_StridedShard", self.dim, self.split_factor))

    def __repr__(self):
        return f"_StridedShard(dim={self.dim}, sf={self.split_factor})"


class Replicate(Placement):
    def is_replicate(self):
        return True

    def __eq__(self, other):
        return isinstance(other, Replicate)

    def __hash__(self):
        return hash("Replicate")

    def __repr__(self):
        return "Replicate()"


class Partial(Placement):
    def __init__(self, reduce_op="sum"):
        if reduce_op != "sum":
            raise NotImplementedError(f"Partial({reduce_op!r}): jax's unreduced arrays are "
                                      f"partial sums; only 'sum' is supported")
        self.reduce_op = reduce_op

    def is_partial(self, reduce_op=None):
        return reduce_op is None or reduce_op == self.reduce_op

    def __eq__(self, other):
        return isinstance(other, Partial) and other.reduce_op == self.reduce_op

    def __hash__(self):
        return hash(("Partial", self.reduce_op))

    def __repr__(self):
        return f"Partial({self.reduce_op})"
