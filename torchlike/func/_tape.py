"""Transforms called on tensors that require grad: the whole transform becomes one node on
torchlike's tape (an ``autograd.Function`` whose backward is ``jax.vjp`` of the transform), so
``grad(f)(params)`` with ``params.requires_grad`` is differentiable again, as in torch (MAML).

What is differentiated through: the arguments, and the tensors the function reaches that
require grad (found as ``torchlike.compile`` finds a function's state: the parameters of the
modules it captures or names, captured tensors), whose data is swapped for the transform's
inputs while it runs: ``vmap(model)(x)`` or ``vmap(jacrev(model))(x)`` in a training loss
gives the model's parameters their gradients. Views among captured tensors are constants of
the transform (see DIFFERENCES.md)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
from jax._src.interpreters import partial_eval as pe

from .._tensor import Tensor
from ..autograd import grad_mode as _gm
from ..autograd.function import Function
from . import _core as C
from . import _pytree as P
from .._compile._trace import Swap

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
        reached = _reached_outputs(vjp_fn, outs)
        ctx.mark_non_differentiable(*[r for i, r in enumerate(res)
                                      if i >= len(outs) or not reached[i]])
        return tuple(res)

    @staticmethod
    def backward(ctx, *grads):
        cts = []
        for g, (shape, dtype) in zip(grads, ctx.like):
            cts.append(jnp.zeros(shape, dtype) if g is None else g._data.astype(dtype))
        gs = ctx.vjp_fn(cts)
        return (None,) + tuple(Tensor._make(g) for g in gs)


def _reached_outputs(vjp_fn, outs):
    """For each output, whether the inputs' gradients read its cotangent: whether it depends
    on an input in the graph's sense (torch's ``requires_grad`` of the output: ``x * 0`` does,
    a constant or what ``detach()`` cut does not)."""
    closed = jax.make_jaxpr(vjp_fn)([jax.ShapeDtypeStruct(o.shape, o.dtype) for o in outs])
    _, used = pe.dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars))
    return used


def tape_needed(args, kwargs, func):
    """Whether ``maybe_on_tape`` would record a node for this call."""
    if C.in_transform() or not _gm._state.grad_enabled:
        return False
    leaves, _ = P.tree_flatten((args, kwargs))
    if any(isinstance(v, Tensor) and v.requires_grad and _inexact(v._data) for v in leaves):
        return True
    return bool(_captured(func, leaves))


def maybe_on_tape(api, run, args, kwargs, func):
    """``run(args, kwargs)``, recorded as one tape node when grad mode is on, no transform is
    tracing, and some Tensor argument, or tensor ``func`` reaches, requires grad."""
    if C.in_transform() or not _gm._state.grad_enabled:
        return run(args, kwargs)
    leaves, spec = P.tree_flatten((args, kwargs))
    pos = [i for i, v in enumerate(leaves)
           if isinstance(v, Tensor) and v.requires_grad and _inexact(v._data)]
    captured = _captured(func, leaves)
    if not pos and not captured:
        return run(args, kwargs)
    box = {}

    def pure(*arrs):
        new = list(leaves)
        for i, a in zip(pos, arrs):
            new[i] = C.wrap_tracked(a)     # (they require grad on the tape: tracked inside)
        a2, k2 = P.tree_unflatten(new, spec)
        swap = Swap()
        try:
            for t, a in zip(captured, arrs[len(pos):]):
                swap.put(t, a)
            swap.derive()
            # (jax differentiates the whole transform: what torch's graph inside does not
            # track is cut, as in a differentiating transform)
            with _gm.node_trace(), _gm.enable_grad():
                out = run(a2, k2)
        finally:
            swap.restore()
        arrays, rebuild, _ = C.split_output(out, api)
        kinds = [_inexact(a) for a in arrays]
        box["rebuild"], box["kinds"] = rebuild, kinds
        return ([a for a, k in zip(arrays, kinds) if k],
                [a for a, k in zip(arrays, kinds) if not k])

    outs = TorchFunc.apply(pure, *[leaves[i] for i in pos], *captured)
    kinds = box["kinds"]
    n_diff = sum(kinds)
    diff, rest = list(outs[:n_diff]), list(outs[n_diff:])
    ordered = [diff.pop(0) if k else rest.pop(0) for k in kinds]
    return box["rebuild"](ordered, as_tensor=lambda t: t)


def _captured(func, leaves):
    """The tensors ``func`` reaches that require grad (its modules' parameters, captured
    tensors: storage roots of a float dtype, not on the meta device), other than the
    arguments ``leaves``."""
    from .._compile._discover import discover
    found = discover(func, (), {})
    given = {id(v) for v in leaves}
    out, seen = [], set()
    for m in found.modules:
        for p in m.parameters():
            if id(p) not in seen:
                seen.add(id(p))
                out.append(p)
    for t in found.tensors:
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return [t for t in out if t._requires_grad and id(t) not in given and t._alias is None
            and not t.is_meta and _inexact(t._data)]
