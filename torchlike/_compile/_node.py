"""A function (a module's forward) compiled as ONE registry op: one tape node.

The op's inputs are the state tensors (parameters, buffers), the generator states (key data and
counter, so dropout draws the eager stream) and the argument tensors; its outputs are the
function's output tensors followed by the new values of the state tensors the function wrote
(BatchNorm running statistics, ``num_batches_tracked``). The registry jits the forward, the
forward-with-VJP and the backward of that op, so in grad mode the call records one node whose
backward is one jitted program; the written state goes back into the same Tensor objects.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .._registry import Op, apply
from .._tensor import Tensor
from ..autograd import grad_mode as _gm
from ..autograd import graph as _graph
from . import _hostchecks, _trace

__all__ = ["NodeEntry", "build_node_entry", "run_node_entry"]


def _is_inexact(dt):
    return jnp.issubdtype(dt, jnp.inexact)


class NodeEntry:
    """One compiled configuration (one guard key) of a node program."""

    __slots__ = ("op", "spec", "dtypes", "traces", "name", "state")

    def __init__(self, name):
        self.name = name
        self.op = None
        self.spec = None         # (out_tree, out_kinds, changed, drawn): set while tracing
        self.dtypes = None       # dtypes of the op's outputs (to undo the registry's ordering)
        self.traces = 0
        self.state = None        # the state tensors of the last trace


def build_node_entry(name, fn, treedef, leaves, n_state, state_ref, gens, modules=(),
                     holders=()):
    """An entry whose op runs ``fn`` on the state given by ``state_ref()`` (a list of Tensors,
    read at trace time) and the arguments ``treedef``/``leaves`` (Tensors replaced by inputs).
    ``modules`` and ``holders`` (``_discover.Found.holders``): where ``fn`` could store a
    tensor it computes, checked after each trace (``_trace.Swap.check_escapes``)."""
    entry = NodeEntry(name)
    tensor_pos = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
    static_leaves = [None if isinstance(x, Tensor) else x for x in leaves]
    arg_state = []
    arg_rg = [leaves[i]._requires_grad for i in tensor_pos]
    grad_enabled = _gm._state.grad_enabled
    ng = len(gens)

    def op_fn(*arrays):
        entry.traces += 1
        state = state_ref()
        if state is None:
            # (a trace after the call: a create_graph backward recomputing the forward; the
            # state's structure is the last call's)
            state = entry.state
        entry.state = state
        s_arrs = arrays[:n_state]
        g_arrs = arrays[n_state:n_state + 2 * ng]
        a_arrs = arrays[n_state + 2 * ng:]
        swap = _trace.Swap()
        saved_g = []
        drawn = []
        checks = _hostchecks.collecting()
        watch = _trace.WriteWatch()
        try:
            # (grad mode as the call's, a part of its key: torch's graph inside decides where
            # jax's gradient is cut, ``autograd.grad_mode.node_trace``)
            with _trace.tracing(), checks, watch, _gm.set_grad_enabled(grad_enabled), \
                    _gm.node_trace():
                for t, a in zip(state, s_arrs):
                    swap.put(t, a)
                swap.derive()
                swap.watch(modules, holders)
                for i, g in enumerate(gens):
                    saved_g.append(g._begin_trace(g_arrs[2 * i], g_arrs[2 * i + 1]))
                lv = list(static_leaves)
                if not arg_state and tensor_pos:
                    # the arguments without a history are state (positions in it): the state
                    # tensor itself, whose writes go back (``changed``); at the first trace,
                    # the call's own tensors, a retrace is for a call of the same key
                    arg_state[:] = _trace.argument_positions(
                        state, [leaves[p] for p in tensor_pos])
                for p, a, i, rg in zip(tensor_pos, a_arrs, arg_state, arg_rg):
                    if i is None:
                        t = lv[p] = Tensor._make(a)
                        t._requires_grad = rg and grad_enabled
                    else:
                        lv[p] = state[i]
                args, kwargs = jax.tree_util.tree_unflatten(treedef, lv)
                start = next(_graph._seq)
                out = fn(*args, **kwargs)
                _trace.check_seeds(gens, g_arrs[0::2])
                swap.check_escapes()
                out_leaves, out_tree = jax.tree_util.tree_flatten(
                    out, is_leaf=lambda x: isinstance(x, Tensor))
                if grad_enabled and _reaches_outside(out_leaves, (*state, *lv), start):
                    # (the op's inputs are its state and arguments: a gradient into anything
                    # else would be lost)
                    raise _trace.GraphBreak(
                        "the function uses a tensor captured from outside it that requires grad "
                        "(not a parameter, buffer or argument)")
                out_arrays, kinds = [], []
                held = {id(t): i for i, t in enumerate(state)}
                for x in out_leaves:
                    if isinstance(x, Tensor):
                        i = held.get(id(x))
                        if i is not None:
                            kinds.append(("state", i))      # (the caller's tensor itself)
                            continue
                        kinds.append(None)
                        out_arrays.append(x._data)
                    elif _trace.is_tracer(x) or isinstance(x, jax.Array):
                        raise _trace.GraphBreak("the function returns a raw jax array")
                    else:
                        kinds.append(("const", x))
                changed = [i for i, (t, a) in enumerate(zip(state, s_arrs)) if t._data is not a]
                new_state = [state[i]._data for i in changed]
                # writes into tensors that are not state: eager execution instead
                watch.check([x for x in out_leaves if isinstance(x, Tensor)])
        finally:
            for g, s in reversed(list(zip(gens, saved_g))):
                drawn.insert(0, g._end_trace(s))
            swap.restore()
            watch.restore()
        flags = checks.outputs()
        entry.spec = (out_tree, kinds, changed, drawn, checks.errors())
        res = tuple(out_arrays) + tuple(new_state) + tuple(flags)
        entry.dtypes = [r.dtype for r in res]
        return res

    # (its function reads the call's state: traced at every shape, never recomputed)
    entry.op = Op("compiled_" + name, op_fn, promote=None, grad_name="CompiledFunctionBackward",
                  poly=False)
    return entry


def _reaches_outside(outputs, inputs, start):
    """Does the graph the trace recorded from ``outputs`` reach a tensor other than ``inputs``
    that requires grad: a captured leaf, or a node recorded before the trace (``start``)?"""
    leaves = {id(t) for t in inputs if isinstance(t, Tensor)}
    known = {id(t.grad_fn) for t in inputs if isinstance(t, Tensor) and t.grad_fn is not None}
    stack = [t.grad_fn for t in outputs if isinstance(t, Tensor) and t.grad_fn is not None]
    seen = set()
    while stack:
        node = stack.pop()
        if id(node) in seen or id(node) in known:
            continue
        seen.add(id(node))
        if isinstance(node, _graph.AccumulateGrad):
            if id(node.variable) not in leaves:
                return True
            continue
        if node.seq < start:
            return True
        stack.extend(e[0] for e in node.next_edges if e is not None)
    return False


def run_node_entry(entry, state, gens, leaves):
    """Run one call; returns the function's output (a pytree of Tensors)."""
    g_arrays = []
    for g in gens:
        g_arrays.extend(g._state_arrays())
    arg_tensors = [x for x in leaves if isinstance(x, Tensor)]
    vjp_path = _gm._state.grad_enabled and any(
        t._requires_grad for t in (*state, *arg_tensors))
    out = apply(entry.op, *state, *g_arrays, *arg_tensors)
    outs = out if isinstance(out, tuple) else (out,)
    dtypes = entry.dtypes
    if vjp_path:
        # the registry puts differentiable (inexact) outputs first: restore the op's order
        order = [i for i, d in enumerate(dtypes) if _is_inexact(d)] + \
                [i for i, d in enumerate(dtypes) if not _is_inexact(d)]
        ordered = [None] * len(outs)
        for o, i in zip(outs, order):
            ordered[i] = o
        outs = ordered
    out_tree, kinds, changed, drawn, errors = entry.spec
    n_out = sum(1 for k in kinds if k is None)
    results = outs[:n_out]
    new_state = outs[n_out:n_out + len(changed)]
    if errors:
        # torch's value errors before the written buffers go back
        _hostchecks.raise_failed(errors, [o._data for o in outs[n_out + len(changed):]])
    node = None
    for o in outs:
        if o.grad_fn is not None:
            node = o.grad_fn
            break
    if changed:
        written = set()
        for i, o in zip(changed, new_state):
            t = state[i]
            t._set_data(o._data)
            written.add(id(t))
        if node is not None and node._saved_versions:
            # buffers the program wrote are outputs, not something its backward reads
            node._saved_versions = [e for e in node._saved_versions
                                    if e[2] is None or id(e[2]) not in written]
    for g, n in zip(gens, drawn):
        if n:
            g._counter += n
    it = iter(results)
    leaves_out = [next(it) if k is None else state[k[1]] if k[0] == "state" else k[1]
                  for k in kinds]
    return jax.tree_util.tree_unflatten(out_tree, leaves_out)
