"""Transforms called on tensors that require grad: the whole transform becomes one node on
torchlike's tape (an ``autograd.Function`` whose backward is ``jax.vjp`` of the transform), so
``grad(f)(params)`` with ``params.requires_grad`` is differentiable again, as in torch (MAML).

Only explicit arguments are differentiated through; tensors the function captures are
constants of the transform (see DIFFERENCES.md)."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from ..autograd import grad_mode as _gm
from ..autograd.function import Function
from . import _core as C
from . import _pytree as P

__all__ = ["maybe_on_tape"]


def _inexact(a):
    return jnp.issubdtype(a.dtype, jnp.inexact)


class TorchFunc(Function):
    _jax_differentiable = True   # (its backward is the forward's derivative)

    @staticmethod
    def forward(ctx, pure, *tensors):
        outs, vjp_fn, rest = jax.vjp(pure, *[t._data for t in tensors], has_aux=True)
        ctx.vjp_fn = vjp_fn
        ctx.like = [(o.shape, o.dtype) for o in outs]
        ctx.n_in = len(tensors)
        res = [Tensor._make(o) for o in outs] + [Tensor._make(o) for o in rest]
        if rest:
            ctx.mark_non_differentiable(*res[len(outs):])
        return tuple(res)

    @staticmethod
    def backward(ctx, *grads):
        cts = []
        for g, (shape, dtype) in zip(grads, ctx.like):
            cts.append(jnp.zeros(shape, dtype) if g is None else g._data.astype(dtype))
        gs = ctx.vjp_fn(cts)
        return (None,) + tuple(Tensor._make(g) for g in gs)


def maybe_on_tape(api, run, args, kwargs):
    """``run(args, kwargs)``, recorded as one tape node when grad mode is on, no transform is
    tracing, and some Tensor argument requires grad."""
    if C.in_transform() or not _gm._state.grad_enabled:
        return run(args, kwargs)
    leaves, spec = P.tree_flatten((args, kwargs))
    pos = [i for i, v in enumerate(leaves)
           if isinstance(v, Tensor) and v.requires_grad and _inexact(v._data)]
    if not pos:
        return run(args, kwargs)
    box = {}

    def pure(*arrs):
        new = list(leaves)
        for i, a in zip(pos, arrs):
            new[i] = C.wrap_tracked(a)     # (they require grad on the tape: tracked inside)
        a2, k2 = P.tree_unflatten(new, spec)
        # (jax differentiates the whole transform: what torch's graph inside does not track is
        # cut, as in a differentiating transform)
        with _gm.node_trace(), _gm.enable_grad():
            out = run(a2, k2)
        arrays, rebuild, _ = C.split_output(out, api)
        kinds = [_inexact(a) for a in arrays]
        box["rebuild"], box["kinds"] = rebuild, kinds
        return ([a for a, k in zip(arrays, kinds) if k],
                [a for a, k in zip(arrays, kinds) if not k])

    outs = TorchFunc.apply(pure, *[leaves[i] for i in pos])
    kinds = box["kinds"]
    n_diff = sum(kinds)
    diff, rest = list(outs[:n_diff]), list(outs[n_diff:])
    ordered = [diff.pop(0) if k else rest.pop(0) for k in kinds]
    return box["rebuild"](ordered, as_tensor=lambda t: t)
