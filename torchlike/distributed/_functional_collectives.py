"""torch.distributed._functional_collectives: collectives that return their result.

torch's return an ``AsyncCollectiveTensor`` that ``wait_tensor`` waits on; torchlike's
collectives complete when they return, so ``wait_tensor`` hands its tensor back. The group is
a ProcessGroup or None (the default group); the other forms torch takes (rank lists, a mesh and
a dimension, a group name) are refused by name.
"""
from __future__ import annotations

from . import distributed_c10d as _c10d

__all__ = ["wait_tensor", "all_reduce", "all_gather_tensor", "reduce_scatter_tensor",
           "all_to_all_single", "all_to_all_single_autograd"]

_OPS = {"sum": _c10d.ReduceOp.SUM, "avg": _c10d.ReduceOp.AVG, "max": _c10d.ReduceOp.MAX,
        "min": _c10d.ReduceOp.MIN, "product": _c10d.ReduceOp.PRODUCT}


def _group(group, name):
    if group is None or isinstance(group, _c10d.ProcessGroup):
        return group
    raise NotImplementedError(f"torchlike.distributed._functional_collectives.{name}: the group "
                              f"must be a ProcessGroup or None, got {type(group).__name__}")


def _op(op):
    op = op.lower() if isinstance(op, str) else op
    return _OPS[op] if isinstance(op, str) else op


def wait_tensor(tensor):
    """The tensor: torchlike's collectives have completed when they return."""
    return tensor


def all_reduce(self, reduceOp, group, tag=""):
    out = self.clone()
    _c10d.all_reduce(out, op=_op(reduceOp), group=_group(group, "all_reduce"))
    return out


def all_gather_tensor(self, gather_dim, group, tag=""):
    g = _group(group, "all_gather_tensor")
    parts = [self.new_empty(self.shape) for _ in range(_c10d.get_world_size(g))]
    _c10d.all_gather(parts, self.contiguous(), group=g)
    from .._ops.join import cat
    return cat(parts, dim=gather_dim)


def reduce_scatter_tensor(self, reduceOp, scatter_dim, group, tag=""):
    g = _group(group, "reduce_scatter_tensor")
    n = _c10d.get_world_size(g)
    x = self.movedim(scatter_dim, 0).contiguous() if scatter_dim else self
    out = x.new_empty((x.shape[0] // n, *x.shape[1:]))
    _c10d.reduce_scatter_tensor(out, x, op=_op(reduceOp), group=g)
    return out.movedim(0, scatter_dim) if scatter_dim else out


def all_to_all_single(self, output_split_sizes, input_split_sizes, group, tag=""):
    g = _group(group, "all_to_all_single")
    if output_split_sizes is None:
        out = self.new_empty(self.shape)
    else:
        out = self.new_empty((sum(output_split_sizes), *self.shape[1:]))
    _c10d.all_to_all_single(out, self.contiguous(), output_split_sizes, input_split_sizes,
                            group=g)
    return out


def all_to_all_single_autograd(self, output_split_sizes, input_split_sizes, group, tag=""):
    raise NotImplementedError("torchlike.distributed._functional_collectives."
                              "all_to_all_single_autograd: an all-to-all inside autograd is not "
                              "provided (expert parallelism); use torchlike.distributed's "
                              "collectives on detached tensors")
