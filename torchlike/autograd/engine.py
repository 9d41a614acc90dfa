"""The backward engine: a reverse walk over the tape with a dict of pending cotangents.

Ready nodes run newest first (by creation sequence), as in torch's engine; leaves
(AccumulateGrad) as soon as they are ready. At each node: its ``before`` hooks on the gradient
summed over every use (tensor hooks, retained ``.grad``, node pre-hooks), then its own backward
``node.run(cotangents, create_graph)``, then its post-hooks; the results go to its children.

The cotangent representation (jax arrays, or Tensors under ``create_graph``) is chosen once per
backward (``graph.cotangents``). In fused eager, a plain backward of a graph without hooks that
the engine walked before is recorded as one call (``fused_backward``), whose function is this
walk, by positions. The engine imports nothing above ``autograd/``.
"""
from __future__ import annotations

import heapq
import itertools
from time import perf_counter as _clock

from .. import _fused
from . import fused_backward
from . import grad_mode as _gm
from .graph import AccumulateGrad, accumulate, bind, cotangents, flip_conj  # noqa: F401
from .graph import _running
from .anomaly_mode import _mode as _anomaly, backward_error, check_gradients

__all__ = ["run_backward", "bind", "flip_conj"]



def _collect(root_nodes):
    """All nodes reachable from the roots (iterative DFS)."""
    seen = set(root_nodes)
    order = []
    stack = list(root_nodes)
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


class _Walk:
    """The plan of one backward: which nodes run, how many parents each waits for, and the
    ready queue (newest first; ties, i.e. leaves, in the order they became ready)."""

    def __init__(self, root_nodes, inputs):
        nodes = _collect(root_nodes)
        self.targets = None
        self.keep = None
        if inputs is not None:
            self.targets = {}
            for i, (node, nr, _t) in enumerate(inputs):
                self.targets.setdefault(node, []).append((nr, i))
            self.keep = _needed(nodes, self.targets)
            nodes = [n for n in nodes if n in self.keep]
        self.nodes = frozenset(nodes)
        self.deps = deps = {}
        self.kids = kids = {}           # node -> its children in the walk (made once)
        for n in nodes:
            ks = kids[n] = self.children(n)
            for child in ks:
                deps[child] = deps.get(child, 0) + 1
        self.tick = itertools.count()
        self.ready = [(-n.seq, next(self.tick), n) for n in root_nodes
                      if self.deps.get(n, 0) == 0 and (self.keep is None or n in self.keep)]
        heapq.heapify(self.ready)

    def children(self, node):
        keep = self.keep
        return [e[0] for e in node.next_edges
                if e is not None and (keep is None or e[0] in keep)]

    def pop(self):
        return heapq.heappop(self.ready)[2] if self.ready else None

    def done(self, node):
        """``node`` has run: its children wait for one parent less."""
        deps = self.deps
        kids = self.kids.get(node)
        for child in (kids if kids is not None else self.children(node)):
            d = deps[child] = deps[child] - 1
            if d == 0:
                heapq.heappush(self.ready, (-child.seq, next(self.tick), child))


def _send(buffers, rep, node, grads, keep):
    for e, g in zip(node.next_edges, grads):
        if e is None or g is None or (keep is not None and e[0] not in keep):
            continue
        child, nr = e
        cb = buffers.get(child)
        if cb is None:
            cb = buffers[child] = [None] * max(len(child.out_meta), 1)
        cb[nr] = rep.add(cb[nr], g)


def run_backward(roots, grads, retain_graph, create_graph, inputs=None, capture=False):
    """Run backward from ``roots`` (list of ``(node, output_nr)``) seeded with ``grads``.

    ``inputs``: optional list of ``(node, output_nr, tensor)`` capture points. With
    ``capture=True`` (``autograd.grad``) their gradients are returned and no ``.grad`` is
    accumulated; otherwise only those inputs accumulate ``.grad``.
    """
    rep = cotangents(create_graph)
    buffers, root_nodes = {}, []
    for (node, nr), g in zip(roots, grads):
        if node not in buffers:
            buffers[node] = [None] * max(len(node.out_meta), 1)
            root_nodes.append(node)
        buffers[node][nr] = rep.add(buffers[node][nr], g)
    graph = None
    if (inputs is None and not create_graph and not _anomaly[0]
            and fused_backward.ENABLED and (_fused.ACTIVE or not _fused.staging())):
        graph = fused_backward.run(buffers, root_nodes, retain_graph)
        if graph is True:
            return None     # (recorded as one call: a graph without hooks, walked before)
    start = _clock()
    walk = _Walk(root_nodes, inputs)
    targets, keep, captured = walk.targets, walk.keep, {}
    outer = getattr(_running, "walk", None)
    _running.walk = walk          # for hooks that ask which nodes this backward runs

    ready, pop, done = walk.ready, heapq.heappop, walk.done
    node = None
    try:
        with _gm.set_grad_enabled(create_graph):
            while ready:
                node = pop(ready)[2]
                buf = buffers.pop(node, None) or [None] * max(len(node.out_meta), 1)
                if node.pre_hooks or node.retains:
                    buf = node.before(buf, rep)
                if targets is not None and node in targets:
                    for nr, i in targets[node]:
                        captured[i] = buf[nr]
                if node.__class__ is AccumulateGrad or isinstance(node, AccumulateGrad):
                    if targets is None or (node in targets and not capture):
                        node.run(buf, create_graph)
                    continue
                if keep is not None and not walk.children(node) and (
                        capture or node not in targets):
                    # (a node that only leads to a captured input; ``.backward(inputs=[y])``
                    # runs a non-leaf input's own node as torch's engine does: its gradients go
                    # nowhere, its saved tensors are freed)
                    continue
                for b in buf:                   # (identity: == on Tensors is elementwise)
                    if b is not None:
                        break
                else:
                    done(node)
                    continue
                if node.freed or node._saved_versions:
                    node.check_alive()
                cots = rep.fill(buf, node.out_meta) if node.materialize_grads else buf
                in_grads = node.run(cots, create_graph)
                if keep is not None:
                    # (with ``inputs=``, a gradient no input needs is not computed in torch:
                    # post-hooks see None for it)
                    in_grads = tuple(g if e is not None and e[0] in keep else None
                                     for e, g in zip(node.next_edges, in_grads))
                if _anomaly[0]:
                    check_gradients(node, in_grads)
                if node.post_hooks:
                    in_grads = node.after(in_grads, buf, rep)
                if not retain_graph:
                    node.release()
                _send(buffers, rep, node, in_grads, keep)
                done(node)
    except BaseException:
        if _anomaly[0]:
            backward_error(node)     # (torch's warning: the failing node's forward traceback)
        raise
    finally:
        _running.walk = outer
    if graph is not None:
        fused_backward.remember(graph, _clock() - start)

    if inputs is not None:
        return [captured.get(i) for i in range(len(inputs))]
    return None
