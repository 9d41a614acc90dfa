"""torch.distributed.tensor._utils: the shard arithmetic checkpointing and model-loading code
imports (``compute_local_shape_and_global_offset``)."""
from __future__ import annotations

from .placement_types import Shard, _StridedShard

__all__ = ["compute_local_shape_and_global_offset"]


def compute_local_shape_and_global_offset(global_shape, mesh, placements, skip_offset=False):
    """The local shard's shape and where it starts in the global tensor, for this process's
    coordinate in ``mesh``: each ``Shard(d)`` placement, left to right, cuts what is left of dim
    ``d`` into ``mesh.size(i)`` chunks as ``torch.chunk`` does (the last ones short or empty;
    an empty shard starts at the dim's end). A process with no coordinate in the mesh gets
    ``((0,), ())``, as in torch: one driving several of its devices has none
    (``DeviceMesh.get_coordinate``)."""
    coordinate = mesh.get_coordinate()
    if coordinate is None:
        return (0,), ()
    return _local_shape_and_offset(global_shape, mesh.shape, coordinate, placements,
                                   skip_offset)


def _local_shape_and_offset(global_shape, mesh_shape, coordinate, placements, skip_offset=False):
    local = list(global_shape)
    offset = [0] * len(local)
    for i, placement in enumerate(placements):
        if isinstance(placement, _StridedShard):
            raise NotImplementedError("compute_local_shape_and_global_offset: a _StridedShard "
                                      "placement (jax shards contiguous blocks)")
        if not isinstance(placement, Shard):
            continue
        d = placement.dim % len(local) if local else placement.dim
        n, k = local[d], mesh_shape[i]
        full = -(-n // k)
        start = full * coordinate[i]
        size = max(0, min(n, start + full) - start)
        local[d] = size
        offset[d] = offset[d] + start if size else global_shape[d]
    return tuple(local), (() if skip_offset else tuple(offset))
