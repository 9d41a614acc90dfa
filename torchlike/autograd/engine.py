"""The backward engine: a reverse walk over the tape with a dict of pending cotangents.

Ready nodes run newest first (by creation sequence), as in torch's engine. At each node, for each
output: the tensor hooks run in registration order on the gradient summed over every use, then
retained ``.grad`` is filled, then the node's cached jitted backward runs. At a leaf
(AccumulateGrad): hooks, accumulation into ``.grad``, then post-accumulate-grad hooks.

Without ``create_graph`` the pending cotangents are raw jax arrays (fast path); with it they are
Tensors and each backward runs as a recorded op, so the gradients are differentiable.
"""
from __future__ import annotations

import heapq
import itertools

import jax
import jax.numpy as jnp

from . import grad_mode as _gm
from .graph import AccumulateGrad

__all__ = ["run_backward"]


def _T():
    from .._tensor import Tensor
    return Tensor


_jit_add = jax.jit(lambda a, b: a + b)


def _add(a, b):
    """Sum two pending cotangents (jitted: eager jnp dispatch costs several times more)."""
    if a is None:
        return b
    if isinstance(a, jax.Array):
        return _jit_add(a, b)
    return a + b


_jit_conj = jax.jit(jnp.conj)


def flip_conj(g, create_graph=False):
    """Convert a gradient between jax's convention and torch's (they are conjugates).

    jax's VJPs propagate the conjugate of what torch calls the gradient of a complex tensor.
    Inside the engine everything stays in jax's convention; wherever a user sees or supplies a
    gradient (hooks, ``.grad``, ``autograd.grad``, the ``gradient`` argument, custom Functions)
    it is converted. Real gradients pass through untouched.
    """
    if g is None:
        return None
    if create_graph or not isinstance(g, jax.Array):
        return g.conj() if g.dtype.is_complex else g
    return _jit_conj(g) if jnp.iscomplexobj(g) else g


def _zeros(meta, create_graph):
    shape, dt = meta
    z = jnp.zeros(shape, dt)
    return _T()._make(z) if create_graph else z


def _call_tensor_hooks(hooks, g, create_graph):
    """Run ``hook(grad) -> Tensor or None`` hooks in order; each sees the previous result."""
    T = _T()
    g0 = g
    g = flip_conj(g, create_graph)
    gt = g if create_graph else T._make(g)
    for hook in list(hooks.values()):
        r = hook(gt)
        if r is not None:
            if not isinstance(r, T):
                raise TypeError(f"hook {getattr(hook, '__name__', hook)!r} returned "
                                f"{type(r).__name__}; a tensor hook must return a Tensor or None")
            if tuple(r.shape) != tuple(gt.shape):
                raise RuntimeError(
                    f"hook '{getattr(hook, '__name__', 'hook')}' has changed the size of value")
            gt = r
    if create_graph:
        return flip_conj(gt, True)
    data = gt._data
    data = data if data.dtype == g0.dtype else data.astype(g0.dtype)
    return flip_conj(data)


def _call_node_prehooks(hooks, buf, create_graph):
    """Node pre-hooks ``hook(grad_outputs) -> tuple or None``, after the tensor hooks."""
    T = _T()
    go = tuple(None if b is None else (flip_conj(b, True) if create_graph
                                       else T._make(flip_conj(b))) for b in buf)
    for hook in list(hooks.values()):
        r = hook(go)
        if r is not None:
            go = tuple(r)
    return [None if g is None else (flip_conj(g, True) if create_graph
                                    else flip_conj(g._data)) for g in go]


def _retain(tensor, g, create_graph):
    T = _T()
    g = flip_conj(g, create_graph)
    if tensor.grad is None:
        tensor.grad = g.detach() if create_graph else T._make(g)
    else:
        if create_graph:
            tensor.grad = tensor.grad + g
        else:
            tensor.grad = T._make(tensor.grad._data + g)


def _accumulate(tensor, g, create_graph):
    T = _T()
    g = flip_conj(g, create_graph)
    if tensor.grad is None:
        if create_graph:
            tensor.grad = g
        else:
            tensor.grad = T._make(g)
    elif create_graph:
        tensor.grad = tensor.grad + g
    else:
        # in place, as torch does: references to the old .grad see the sum
        tensor.grad._set_data(tensor.grad._data + g)


def _collect(root_nodes):
    """All nodes reachable from the roots, with their children (iterative DFS)."""
    seen = set()
    order = []
    stack = list(root_nodes)
    for n in root_nodes:
        seen.add(n)
    while stack:
        n = stack.pop()
        order.append(n)
        for e in n.next_edges:
            if e is not None and e[0] not in seen:
                seen.add(e[0])
                stack.append(e[0])
    return order


def _needed(nodes, targets):
    """Nodes from which some target node can be reached (only these run with ``inputs=``)."""
    needed = {}
    for root in nodes:
        if root in needed:
            continue
        stack = [(root, iter(root.next_edges))]
        needed[root] = root in targets
        while stack:
            n, it = stack[-1]
            e = next(it, StopIteration)
            if e is StopIteration:
                stack.pop()
                if stack and needed[n]:
                    needed[stack[-1][0]] = True
                continue
            if e is None:
                continue
            m = e[0]
            if m in needed:
                if needed[m]:
                    needed[n] = True
                continue
            needed[m] = m in targets
            stack.append((m, iter(m.next_edges)))
    return {n for n, v in needed.items() if v}


def run_backward(roots, grads, retain_graph, create_graph, inputs=None, capture=False):
    """Run backward from ``roots`` (list of ``(node, output_nr)``) seeded with ``grads``.

    ``inputs``: optional list of ``(node, output_nr, tensor)`` capture points. With
    ``capture=True`` (``autograd.grad``) their gradients are returned and no ``.grad`` is
    accumulated; otherwise only those inputs accumulate ``.grad``.
    """
    root_nodes = []
    buffers = {}
    for (node, nr), g in zip(roots, grads):
        buf = buffers.get(node)
        if buf is None:
            buf = buffers[node] = [None] * max(len(node.out_meta), 1)
            root_nodes.append(node)
        buf[nr] = _add(buf[nr], g)

    nodes = _collect(root_nodes)
    targets = None
    captured = {}
    if inputs is not None:
        targets = {}
        for i, (node, nr, _t) in enumerate(inputs):
            targets.setdefault(node, []).append((nr, i))
        keep = _needed(nodes, targets)
        nodes = [n for n in nodes if n in keep]
    else:
        keep = None

    deps = {}
    for n in nodes:
        for e in n.next_edges:
            if e is not None and (keep is None or e[0] in keep):
                deps[e[0]] = deps.get(e[0], 0) + 1

    # newest node first; ties (leaves) in the order they became ready
    tick = itertools.count()
    ready = [(-n.seq, next(tick), n) for n in root_nodes
             if deps.get(n, 0) == 0 and (keep is None or n in keep)]
    heapq.heapify(ready)
    T = _T()

    with _gm.set_grad_enabled(create_graph):
        while ready:
            node = heapq.heappop(ready)[2]
            buf = buffers.pop(node, None) or [None] * max(len(node.out_meta), 1)

            # 1. tensor hooks per output, in registration order; 2. retained .grad (after hooks)
            if node.pre_hooks:
                for nr, hooks in node.pre_hooks.items():
                    if isinstance(nr, int) and hooks and buf[nr] is not None:
                        buf[nr] = _call_tensor_hooks(hooks, buf[nr], create_graph)
            if node.retains:
                for nr, ref in node.retains.items():
                    t = ref()
                    if t is not None and buf[nr] is not None:
                        _retain(t, buf[nr], create_graph)
            # 3. Node pre-hooks: after the retained .grad was filled (as torch orders them)
            if node.pre_hooks:
                node_hooks = node.pre_hooks.get(("node", 0))
                if node_hooks:
                    buf = _call_node_prehooks(node_hooks, buf, create_graph)
            if targets is not None and node in targets:
                for nr, i in targets[node]:
                    captured[i] = buf[nr]
            if isinstance(node, AccumulateGrad):
                if targets is None or (node in targets and not capture):
                    _run_accumulate(node, buf[0], create_graph)
                continue
            if keep is not None and not any(e is not None and e[0] in keep
                                            for e in node.next_edges):
                continue

            # 4. the node's backward
            # (identity, not list.count: == on Tensors is elementwise)
            n_none = sum(1 for b in buf if b is None)
            if n_none == len(buf):
                _release_children(node, deps, ready, keep, tick)
                continue
            if node.freed or node._saved_versions:
                node.check_alive()
            c = node.compiled
            if c is None:
                # a custom autograd.Function: its Python backward gets the raw buffer
                in_grads = node.run(buf, create_graph)
            elif create_graph:
                cots = tuple(b if b is not None else _zeros(m, create_graph)
                             for b, m in zip(buf, node.out_meta))
                op = c.vjp_op()
                from .._ops._registry import apply
                n_in = len(node.inputs)
                out = apply(op, *node.inputs, *cots, n_in=n_in, n_cot=len(cots))
                in_grads = out if isinstance(out, tuple) else (out,)
            else:
                cots = tuple(buf) if not n_none else tuple(
                    b if b is not None else _zeros(m, False) for b, m in zip(buf, node.out_meta))
                in_grads = c.bwd(node.vjp, cots)
            if node.post_hooks:
                gi = tuple(g if create_graph else T._make(g) for g in in_grads)
                go = tuple(b if create_graph or b is None else T._make(b) for b in buf)
                for hook in list(node.post_hooks.values()):
                    r = hook(gi, go)
                    if r is not None:
                        gi = tuple(r)
                in_grads = tuple(g if create_graph or g is None else g._data for g in gi)
            if not retain_graph:
                node.release()
            for e, g in zip(node.next_edges, in_grads):
                if e is None or g is None or (keep is not None and e[0] not in keep):
                    continue
                child, nr = e
                cb = buffers.get(child)
                if cb is None:
                    cb = buffers[child] = [None] * max(len(child.out_meta), 1)
                cb[nr] = _add(cb[nr], g)
            _release_children(node, deps, ready, keep, tick)

    if inputs is not None:
        return [captured.get(i) for i in range(len(inputs))]
    return None


def _release_children(node, deps, ready, keep, tick):
    for e in node.next_edges:
        if e is None:
            continue
        child = e[0]
        if keep is not None and child not in keep:
            continue
        d = deps[child] - 1
        deps[child] = d
        if d == 0:
            heapq.heappush(ready, (-child.seq, next(tick), child))


def _run_accumulate(node, g, create_graph):
    t = node.variable
    if t is None or g is None:
        return
    _accumulate(t, g, create_graph)
    if node.post_acc_hooks:
        ctx = _gm.enable_grad() if create_graph else _gm.no_grad()
        with ctx:
            for hook in list(node.post_acc_hooks.values()):
                hook(t)
