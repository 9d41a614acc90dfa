"""torch.distributed.nn.functional: collectives with gradients.

``all_reduce(x)`` (sum) returns a new tensor; its backward all-reduces the incoming gradient
(each rank's loss depends on every rank's ``x``). ``all_gather(x)`` returns every rank's ``x``;
its backward sums the gradients of rank ``r``'s slot over the ranks and hands rank ``r`` its
share."""
from __future__ import annotations

from ...autograd.function import Function
from .. import distributed_c10d as c10d

__all__ = ["all_reduce", "all_gather"]


class _AllReduce(Function):
    _jax_differentiable = True   # (its backward is the forward's derivative)

    @staticmethod
    def forward(ctx, op, group, tensor):
        ctx.group, ctx.op = group, op
        out = tensor.clone()
        c10d.all_reduce(out, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad):
        if ctx.op not in (c10d.ReduceOp.SUM, c10d.ReduceOp.AVG):
            raise RuntimeError(f"all_reduce's backward supports SUM and AVG, not {ctx.op}")
        g = grad.clone()
        c10d.all_reduce(g, op=ctx.op, group=ctx.group)
        return None, None, g


def all_reduce(tensor, op=c10d.ReduceOp.SUM, group=None):
    """The reduction of every rank's ``tensor``, as a new tensor, differentiable."""
    return _AllReduce.apply(op, group, tensor)


class _AllGather(Function):
    _jax_differentiable = True   # (its backward is the forward's derivative)

    @staticmethod
    def forward(ctx, group, tensor):
        ctx.group = group
        n = c10d.get_world_size(group)
        out = [tensor.new_zeros(tuple(tensor.shape)) for _ in range(n)]
        c10d.all_gather(out, tensor, group=group)
        return tuple(out)

    @staticmethod
    def backward(ctx, *grads):
        import torchlike
        g = torchlike.stack([torchlike.zeros(()) if x is None else x for x in grads])
        c10d.all_reduce(g, group=ctx.group)
        return None, g[c10d.get_rank(ctx.group)]


def all_gather(tensor, group=None):
    """Every rank's ``tensor`` (a tuple in rank order), differentiable."""
    return _AllGather.apply(group, tensor)
