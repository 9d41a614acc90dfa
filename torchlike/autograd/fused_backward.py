"""A graph's backward as one call: in fused eager recorded into the segment, in strict eager
one compiled program.

The engine's walk costs Python and a dispatch at every node: route the cotangents, sum them,
run (or, fused, record) the node's backward. A training loop walks the same graph every step,
so ``run`` turns the walk of a graph met before into one call (a ``_GraphBackward``) whose
function is the engine's walk itself:
- in fused eager, from the graph's second backward on, a call of the pending segment: traced
  inline into the segment's fused program, or run node by node through the ops' own tiers where
  the segment is replayed;
- in strict eager, one jitted program per input signature (the residuals' shapes and dtypes),
  compiled in the background once the signature has come back ``STRICT_AFTER`` times (the
  engine walks until it is ready): a step's backward is one dispatch instead of one per node.
What is left in Python per step is one pass over the graph (its key, its inputs, the checks
that decide whether the fast path may run) and the leaves' accumulation.

It runs only where nothing can observe the walk: a ``.backward()`` without ``inputs=``,
``create_graph`` or anomaly mode, outside a jit trace, through nodes of registered ops (not
custom Functions) with no hook of any kind, no retained gradient, no saved-tensor hooks, whose
saved tensors are unmodified (else the engine runs, and raises torch's error at the node). It
runs the same node backwards as the engine, in the engine's order (newest node first, leaves as
soon as they are ready), and sums in it: node by node its gradients equal the engine's to the
bit; as one program, XLA may fuse across nodes (float results within rounding, as any fused
program's: DIFFERENCES.md).
"""
from __future__ import annotations

import heapq
import itertools
import operator
import os

import jax
import jax.numpy as jnp

from .. import _caches
from .. import _fused
from .. import _program_cache
from .. import _tiers
from . import grad_mode as _gm
from .graph import AccumulateGrad, Node, _jit_add

# the registry's residual classes (bound by torchlike._registry: autograd imports nothing above
# it): a node's backward recomputes from its inputs (Remat) or reads a VJP's residuals
# (Pullback)
residual_classes = [None, None]

# (``TORCHLIKE_FUSED_GRAPH_BACKWARD=0``: every backward walks in the engine, node by node)
ENABLED = os.environ.get("TORCHLIKE_FUSED_GRAPH_BACKWARD", "1") != "0"
# strict eager: a graph's backward at an input signature compiles as one program when the
# signature comes back for the STRICT_AFTER-th time (0: never; the engine walks node by node)
STRICT_AFTER = int(os.environ.get("TORCHLIKE_GRAPH_BACKWARD_AFTER", "3"))
# the largest graph that becomes one call (nodes): XLA's compile time grows quickly with a
# graph's size (a 400-node backward of an unrolled LSTM took 20 s to 2 minutes on 2 CPU cores),
# so a bigger graph walks in the engine, node by node
MAX_NODES = int(os.environ.get("TORCHLIKE_GRAPH_BACKWARD_MAX_NODES", "256"))
_SIGNATURES_MAX = 8     # signatures compiled per graph (a graph whose shapes keep changing
                        # then walks in the engine)
_NODE_RUN = Node.run
_host = _tiers.call_on_host
_plans: dict = {}       # graph key -> the engine's walks of it (int) or its _GraphBackward
_walks: dict = {}       # graph key -> the seconds the engine's walks of it took (strict eager)
_MAX_PLANS = 256
_stats = {"programs": 0, "traces": 0, "calls": 0}


class _Plan:
    """A graph's structure, by position: nodes newest first (leaves, all of one rank, first),
    each with its op entry and edges ``(child position, output)``."""

    __slots__ = ("entries", "pullback", "edges", "metas", "deps", "roots", "leaves",
                 "leaf_avals")

    def __init__(self, parts, roots):
        self.entries, self.pullback, self.edges, self.metas = [], [], [], []
        self.leaves = {}                    # position -> its index among the outputs
        self.leaf_avals = []
        deps = [0] * len(parts)
        for i, p in enumerate(parts):
            if p.__class__ is _Leaf:
                self.leaves[i] = len(self.leaves)
                self.leaf_avals.append(jax.ShapeDtypeStruct(p.shape, p.dtype))
                p = (None, False, (), None)
            entry, pullback, edges, metas = p
            self.entries.append(entry)
            self.pullback.append(pullback)
            self.edges.append(edges)
            self.metas.append(metas)
            for e in edges:
                if e is not None:
                    deps[e[0]] += 1
        self.deps = deps
        self.roots = roots                  # ((position, output), ...) of the seeds


def _walk(plan, inputs, seeds, traced, host=False):
    """The engine's walk over ``plan``: the leaves' gradients (None where none arrived).
    ``traced``: the nodes' raw backwards (inside a program's trace), else their tiers;
    ``host``: their tiers through ``_tiers.call_on_host`` (a replay's values, numpy where
    the interpreter tier made them)."""
    n = len(plan.entries)
    bufs = [None] * n
    metas, edges, entries, pullback, leaves = (plan.metas, plan.edges, plan.entries,
                                               plan.pullback, plan.leaves)
    for (i, nr), g in zip(plan.roots, seeds):
        b = bufs[i]
        if b is None:
            b = bufs[i] = [None] * (len(metas[i]) if metas[i] else 1)
        b[nr] = g
    deps = list(plan.deps)
    tick = itertools.count()
    ready = []
    for i, _nr in plan.roots:
        if deps[i] == 0 and bufs[i] is not None and not any(r[2] == i for r in ready):
            ready.append((0 if i in leaves else i, next(tick), i))
    heapq.heapify(ready)
    out = [None] * len(leaves)
    while ready:
        i = heapq.heappop(ready)[2]
        buf = bufs[i]
        bufs[i] = None
        if i in leaves:
            out[leaves[i]] = _as_declared(None if buf is None else buf[0],
                                          plan.leaf_avals[leaves[i]], traced)
            continue
        if buf is not None and any(b is not None for b in buf):
            if not all(b is not None for b in buf):
                buf = [b if b is not None else jnp.zeros(*m) for b, m in zip(buf, metas[i])]
            c = entries[i]
            if host:
                grads = (_host(c.bwd, inputs[i], tuple(buf)) if pullback[i] else
                         _host(c.bwd_remat, *inputs[i], *buf))
            elif pullback[i]:
                grads = (c.bwd.raw if traced else c.bwd)(inputs[i], tuple(buf))
            else:
                grads = (c.bwd_remat.raw if traced else c.bwd_remat)(*inputs[i], *buf)
            for e, g in zip(edges[i], grads):
                if e is None or g is None:
                    continue
                j, nr = e
                b = bufs[j]
                if b is None:
                    b = bufs[j] = [None] * (len(metas[j]) if metas[j] else 1)
                a = b[nr]
                b[nr] = g if a is None else (a + g if traced else
                                             _host(_jit_add, a, g) if host else _jit_add(a, g))
        for e in edges[i]:
            if e is not None:
                j = e[0]
                d = deps[j] = deps[j] - 1
                if d == 0:
                    heapq.heappush(ready, (0 if j in leaves else j, next(tick), j))
    return tuple(out)


def _as_declared(g, aval, traced):
    """A leaf's gradient as declared (the leaf's shape and dtype, not weak-typed: what the
    engine's sums give it)."""
    if g is None:
        # (every registered op's backward gives each differentiable input a gradient)
        raise RuntimeError("torchlike fused eager: a leaf of a recorded backward got no "
                           "gradient; this is a torchlike defect")
    if g.dtype != aval.dtype or (traced and g.aval.weak_type):
        g = jax.lax.convert_element_type(g, aval.dtype)
    return g


class _Leaf(tuple):
    """A leaf's part of a graph's key: its variable's (shape, dtype)."""

    __slots__ = ()

    @property
    def shape(self):
        return self[0]

    @property
    def dtype(self):
        return self[1]


class _GraphBackward(_tiers.Tiered):
    """One graph's backward as a call: ``(node inputs, seeds) -> leaf gradients``."""

    __slots__ = ("plan", "signatures")
    outputs_fixed = True        # (the leaves' gradients: ``declared_outputs``)

    def __init__(self, plan):
        self.plan = plan
        self.signatures = {}        # strict eager: input signature -> meetings, or its state

        def traced(inputs, seeds):
            _stats["traces"] += 1
            return _walk(plan, inputs, seeds, True)
        super().__init__(traced, lambda: jax.jit(_tiers.inlined(traced)), "graph backward")

    def __call__(self, inputs, seeds):
        if _fused.ACTIVE:
            out = _fused.record(self, (inputs, seeds))
            if out is not None:
                return out
        if _fused._installed:
            inputs, seeds = _fused.concrete((inputs, seeds))
        # (a replayed segment, or a call that could not be recorded: node by node, each
        # through its op's tiers, as the engine would)
        return _walk(self.plan, inputs, seeds, False)

    def host_call(self, inputs, seeds):
        """A replay's call (``_tiers.call_on_host``): the walk, node by node, values left in
        numpy where the interpreter tier made them."""
        return _walk(self.plan, inputs, seeds, False, host=True)

    def compiled(self, inputs, seeds):
        """Strict eager: the leaves' gradients from the graph's program at this input
        signature, or None where the engine walks (a signature met fewer than
        ``STRICT_AFTER`` times, compiling in the background, or one jit cannot run)."""
        sig = _signature((inputs, seeds))
        if sig is None:
            return None
        sigs = self.signatures
        state = sigs.get(sig)
        if state is None:
            if len(sigs) >= _SIGNATURES_MAX:
                return None
            # (the engine's walk that made the graph known counts as its first signature's
            # first meeting)
            state = 0 if sigs else 1
        if state.__class__ is int:
            state += 1
            if state < STRICT_AFTER:
                sigs[sig] = state
                return None
            _stats["programs"] += 1
            if _tiers.BACKGROUND_COMPILE:
                sigs[sig] = _program_cache.warm(lambda: self._compile(inputs, seeds))
                return None
            state = sigs[sig] = self._compile(inputs, seeds)
        elif state.__class__ is not bool:
            if not state.done():
                return None             # (compiling: the engine walks meanwhile)
            state = sigs[sig] = state.result()
        if not state:
            return None
        _stats["calls"] += 1
        return self.jit(inputs, seeds)

    def _compile(self, inputs, seeds):
        """Compile (by a first call) the program at these inputs' signature: False where jit
        cannot run it (inputs on several devices), which the engine then walks."""
        try:
            jax.block_until_ready(self.jit(inputs, seeds))
        except Exception:  # noqa: BLE001  (the engine walks it, and raises what it raises)
            return False
        return True

    def declared_outputs(self, tree, leaves):
        avals = self.plan.leaf_avals
        return jax.tree_util.tree_structure(tuple(avals)), avals


def _signature(tree):
    """The shapes and dtypes of a graph's inputs (their leaves), or None where one is not a
    concrete single-device array or a Python number."""
    key = []
    for a in jax.tree_util.tree_leaves(tree):
        c = a.__class__
        if c is _ArrayImpl:
            if a.sharding.__class__ is not _SingleDevice:
                return None
            key.append((a.shape, a.dtype, a.weak_type))
        elif c in _NUMBERS:
            key.append(c)
        else:
            return None
    return tuple(key)


_NUMBERS = frozenset((bool, int, float, complex))
_ArrayImpl = _tiers._ArrayImpl
_SingleDevice = jax.sharding.SingleDeviceSharding


def run(buffers, root_nodes, retain_graph):
    """Run a plain ``.backward()`` (seeded ``buffers``, by root node) as one recorded call, if
    the graph allows and the engine walked it before; else the engine must walk it: None, or
    the graph's key, to ``remember`` once the engine's walk succeeded (a backward that raised,
    as an op without a derivative does, never becomes a recorded call)."""
    remat, pullback = residual_classes
    seen = set(root_nodes)
    add = seen.add
    stack = list(root_nodes)
    pop, push = stack.pop, stack.append
    nodes = []
    keep = nodes.append
    acc_cls, node_run = AccumulateGrad, _NODE_RUN
    while stack:
        node = pop()
        c = node.__class__
        if c is acc_cls:
            if node.pre_hooks or node.post_acc_hooks or node.retains or node.post_hooks:
                return None
        else:
            if (c.run is not node_run or node.pre_hooks or node.retains or node.post_hooks
                    or node.packed is not None or node.freed):
                return None
            v = node.vjp.__class__
            if v is not remat and v is not pullback:
                return None
            saved = node._saved_versions
            if saved:
                for s in saved:
                    if s[0][0] != s[1]:
                        return None         # (the engine raises torch's version error)
        keep(node)
        for e in node.next_edges:
            if e is not None:
                e = e[0]
                if e not in seen:
                    add(e)
                    push(e)
        if len(nodes) > MAX_NODES:
            return None
    # newest first, as the engine pops them; the leaves (one rank) in the order met
    nodes.sort(key=_seq, reverse=True)
    index = {n: i for i, n in enumerate(nodes)}
    parts = []
    inputs = []
    part, given = parts.append, inputs.append
    recomputed = []             # (entry, inputs) of the nodes recomputing their forward
    fused = _fused.ACTIVE       # (strict eager's use of them only)
    for node in nodes:
        if node.__class__ is acc_cls:
            t = node.variable
            d = t._d if t is not None else None
            part(_Leaf((tuple(d.shape), d.dtype) if d is not None else node.out_meta[0]))
            given(None)
            continue
        edges = node.next_edges
        if len(edges) == 1:                 # (unary ops and reductions: no comprehension)
            e = edges[0]
            edges = ((index[e[0]], e[1]),) if e is not None else edges
        else:
            edges = tuple([e and (index[e[0]], e[1]) for e in edges])
        meta = node.out_meta
        v = node.vjp
        if v.__class__ is pullback:
            part((node.compiled, True, edges, meta if len(meta) > 1 else None))
            given(v)
        else:
            part((node.compiled, False, edges, meta if len(meta) > 1 else None))
            given(v.arrays)
            if not fused:
                recomputed.append((node.compiled, v.arrays))
    roots = []
    seeds = []
    for node in root_nodes:
        for nr, g in enumerate(buffers[node]):
            if g is not None:
                roots.append((index[node], nr))
                seeds.append(g)
    key = (tuple(parts), tuple(roots))
    fn = _plans.get(key)
    if fn is None:
        return key                          # (a graph met for the first time)
    if fn.__class__ is int:
        fn = _plans[key] = _GraphBackward(_Plan(parts, key[1]))
    if fused:
        grads = fn(tuple(inputs), tuple(seeds))
        _fused._stats["graph_backwards"] += 1
    else:
        if STRICT_AFTER <= 0:
            return None
        if recomputed:
            # (a node that recomputes its forward: an op whose forward the tier interprets
            # at its shape, where compiling the graph would undo the tier; the engine walks.
            # Once the graph's walks have cost what compiling those forwards and the graph
            # would, their forwards leave the interpreter: a cheap op, which alone would stay
            # interpreted for thousands of steps, no longer keeps a graph from its program)
            budget = _tiers.INTERPRET_BUDGET     # (0: the forwards leave at their count)
            if budget and _walks.get(key, 0.0) >= (len(recomputed) + 1) * budget:
                _walks.pop(key, None)
                for c, arrays in recomputed:
                    c.fwd_vjp.spend(arrays)
            return key                      # (the engine walks, and times its walk)
        grads = fn.compiled(tuple(inputs), tuple(seeds))
        if grads is None:
            return None                     # (the engine walks; the graph is known)
    with _gm.set_grad_enabled(False):
        for i, k in fn.plan.leaves.items():
            g = grads[k]
            if g is not None:
                nodes[i].run((g,), False)
    if not retain_graph:
        for node in nodes:
            if node.__class__ is not acc_cls:
                node.release()
    return True


def remember(key, seconds):
    """A graph the engine walked without error, in ``seconds``: counted (its next backward in
    fused eager, its ``STRICT_AFTER``-th in strict eager, is one call) and its walks' time
    summed (``run``)."""
    if len(_plans) >= _MAX_PLANS:
        _plans.clear()
        _walks.clear()
    n = _plans.get(key, 0)
    if n.__class__ is int:
        _plans[key] = n + 1
    _walks[key] = _walks.get(key, 0.0) + seconds


def stats():
    """Strict eager's graph backwards: ``programs`` compiled (one per graph and input
    signature), ``traces`` of the walk into a program (fused segments' included), ``calls``
    run as one program."""
    return dict(_stats)


_seq = operator.attrgetter("seq")


def _clear():
    _plans.clear()
    _walks.clear()


_caches.register("graph backward", _clear, lambda: {"traces": _stats["traces"]})
