"""linear_cross_entropy's chunked path: cross entropy of ``input @ linear_weight.T +
linear_bias`` taken ``batch_chunk_size`` rows at a time (a ``lax.scan`` over the chunks), so the
``(num_batches, num_classes)`` logits are never whole; every intermediate is in ``acc_dtype``.

As torch's, the scalar reductions compute their gradients in forward and hand them out in
backward (consumed by the first backward unless ``allow_retain_graph``); ``reduction="none"``
saves its inputs and recomputes in backward. Neither backward is differentiable.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..._registry import apply, defop
from ..._tensor import Tensor
from ...autograd.function import Function, once_differentiable

_HI = jax.lax.Precision.HIGHEST
_TWICE = ("linear_cross_entropy chunked backward called twice; retain_graph=True / double "
          "backward are not supported.")


@defop("linear_cross_entropy_chunked", differentiable=False)
def _chunked(x, w, b, t, cw, c, *, ignore_index, chunk, acc, mean, grads):
    """Over chunks of rows: the per-row losses and, with ``grads``, the gradients in x, w and b
    of ``sum(c * losses)`` (``c`` per row; ``mean``: also divided by the total weight of the
    counted rows, returned last)."""
    acc = jnp.dtype(acc)
    N, C = x.shape[0], w.shape[0]
    n = -(-N // chunk)
    pad = n * chunk - N
    valid = jnp.pad(t != ignore_index, (0, pad))
    tt = jnp.where(valid, jnp.pad(t, (0, pad)), 0)
    wt = jnp.where(valid, cw.astype(acc)[tt], 0)
    total = jnp.sum(wt)
    scale = jnp.pad(c.astype(acc), (0, pad)) * wt / (total if mean else 1)
    xs = jnp.pad(x, ((0, pad), (0, 0))).astype(acc).reshape(n, chunk, -1)
    wa, ba = w.astype(acc), b.astype(acc)

    def body(carry, inp):
        gw, gb = carry
        xc, tc, wc, sc = inp
        z = jnp.matmul(xc, wa.T, precision=_HI) + ba
        lse = jax.nn.logsumexp(z, axis=-1)
        loss = wc * (lse - jnp.take_along_axis(z, tc[:, None], 1)[:, 0])
        if not grads:
            return carry, (loss, jnp.zeros((0,), acc))
        dz = sc[:, None] * (jnp.exp(z - lse[:, None]) - jax.nn.one_hot(tc, C, dtype=acc))
        return ((gw + jnp.matmul(dz.T, xc, precision=_HI), gb + dz.sum(0)),
                (loss, jnp.matmul(dz, wa, precision=_HI)))

    zero = (jnp.zeros(w.shape, acc), jnp.zeros(b.shape, acc))
    (gw, gb), (losses, gx) = jax.lax.scan(
        body, zero, (xs, tt.reshape(n, chunk), wt.reshape(n, chunk), scale.reshape(n, chunk)))
    losses = losses.reshape(-1)[:N]
    if not grads:
        return losses, total
    gx = gx.reshape(n * chunk, -1)[:N]
    return losses, total, gx.astype(x.dtype), gw.astype(w.dtype), gb.astype(b.dtype)


def _operands(input, weight, bias, cls_weight):
    C = weight.shape[0]
    b = bias if bias is not None else Tensor._make(jnp.zeros((C,), weight._d.dtype))
    cw = cls_weight if cls_weight is not None else Tensor._make(jnp.ones((C,), jnp.float32))
    return b, cw


class _ScalarReduction(Function):
    """reduction "mean" / "sum": gradients computed in forward, handed out in backward."""
    _jax_differentiable = True   # (its backward is the forward's derivative)

    @staticmethod
    def forward(ctx, input, weight, bias, target, cls_weight, reduction, ignore_index, chunk,
                acc, allow_retain_graph):
        b, cw = _operands(input, weight, bias, cls_weight)
        ones = Tensor._make(jnp.ones((input.shape[0],), jnp.float32))
        losses, total, gx, gw, gb = apply(
            _chunked, input, weight, b, target, cw, ones, ignore_index=int(ignore_index),
            chunk=int(chunk), acc=acc.np.name,
            mean=reduction == "mean", grads=True)
        ctx.saved_grads = (gx, gw, gb if bias is not None else None)
        ctx.allow_retain_graph = allow_retain_graph
        ctx.used = False
        loss = losses.sum()
        if reduction == "mean":
            loss = loss / total
        return loss.to(input.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        if ctx.used and not ctx.allow_retain_graph:
            raise RuntimeError(_TWICE)
        ctx.used = True
        gx, gw, gb = ctx.saved_grads
        needs = ctx.needs_input_grad
        return (gx * grad if needs[0] else None, gw * grad if needs[1] else None,
                gb * grad if gb is not None and needs[2] else None,
                None, None, None, None, None, None, None)


class _NoReduction(Function):
    """reduction "none": the per-row losses; backward recomputes from the saved inputs."""
    _jax_differentiable = True   # (its backward is the forward's derivative)

    @staticmethod
    def forward(ctx, input, weight, bias, target, cls_weight, ignore_index, chunk, acc):
        b, cw = _operands(input, weight, bias, cls_weight)
        ctx.save_for_backward(input, weight, b, target, cw)
        ctx.config = dict(ignore_index=int(ignore_index), chunk=int(chunk), acc=acc.np.name)
        ctx.has_bias = bias is not None
        ones = Tensor._make(jnp.ones((input.shape[0],), jnp.float32))
        losses, _ = apply(_chunked, input, weight, b, target, cw, ones, mean=False,
                          grads=False, **ctx.config)
        return losses.to(input.dtype)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        x, w, b, t, cw = ctx.saved_tensors
        _, _, gx, gw, gb = apply(_chunked, x, w, b, t, cw, grad, mean=False, grads=True,
                                 **ctx.config)
        needs = ctx.needs_input_grad
        return (gx if needs[0] else None, gw if needs[1] else None,
                gb if ctx.has_bias and needs[2] else None, None, None, None, None, None)


# torch's graph names these nodes after its custom ops
_ScalarReduction.__name__ = \
    "GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_default"
_NoReduction.__name__ = \
    "GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_default"


def chunked(input, weight, target, bias, cls_weight, reduction, ignore_index, options):
    """The chunked loss of batched ``input`` (N, in_features) and ``target`` (N,) int64, with
    ``options`` resolved (``LinearCrossEntropyOptions._adjust``)."""
    if reduction == "none":
        return _NoReduction.apply(input, weight, bias, target, cls_weight, ignore_index,
                                  options.batch_chunk_size, options.acc_dtype)
    return _ScalarReduction.apply(input, weight, bias, target, cls_weight, reduction,
                                  ignore_index, options.batch_chunk_size, options.acc_dtype,
                                  options.allow_retain_graph)
