"""A whole step (forward, ``.backward()``, ``optimizer.step()``, ``zero_grad()``) as ONE jitted
program, with explicit state threading.

Per call the state is enumerated from the discovered roots (``_discover.py``): every state
tensor's data (parameters, buffers, existing ``.grad``s, existing optimizer state), the
generators' (key, counter), every optimizer group's numeric hyperparameters (traced scalars:
a scheduler changing ``lr`` never retraces) and the argument tensors go into the program; the
program's outputs are the data of the state tensors it wrote, the tensors it created in state
containers (a first ``.grad``, first-step optimizer state) and the returned tensors. The
write-back puts them into the same Tensor objects and containers eager execution would have
left, so code outside sees what eager execution leaves.

Inside the trace the ordinary eager tape runs on tracers (the registry's jitted ops and jitted
VJPs accept them), so gradient hooks transform gradients exactly as in eager. Tensor hooks
registered on state tensors run as ordered host callbacks (``jax.experimental.io_callback``)
on concrete values on every call, so hooks with side effects (printing, appending, logging a
norm) fire every call; the cost is one device-to-host round trip per hook per call.
"""
from __future__ import annotations

import itertools
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax._src import core as jcore

from .._storage import write_roots
from .._tensor import Tensor
from ..autograd import grad_mode as _gm
from . import _hostchecks, _trace
from ._discover import walk_modules as _walk

__all__ = ["StepState", "StepEntry", "build_step_entry", "run_step_entry", "NeedNode"]


class NeedNode(Exception):
    """The function returns tensors with a live graph and ran no backward: compile it as a
    tape node instead (``_node.py``)."""


class StepState:
    """The state of one call, enumerated from the discovered roots."""

    __slots__ = ("T", "S", "opts", "gens", "modules", "holders", "grad_idx", "opt_layout", "key",
                 "hps", "fresh")

    def __init__(self, found):
        # (this runs on every call: plain loops over the modules' dicts, ids in sets)
        T, ids = [], {}
        # (an occurrence of a tensor met before: where, and which; the key holds them, so that
        # rebinding a name from one state tensor to another, ``self.ws[0] = self.b.weight``,
        # retraces where the count of distinct tensors stays the same)
        again = []
        modules = _walk(found.modules)
        occurrences = itertools.chain(
            *[m._parameters.values() for m in modules], *[m._buffers.values() for m in modules],
            *[g["params"] for o in found.opts for g in o.param_groups], found.tensors)
        for n, t in enumerate(occurrences):
            if t is None:
                continue
            i = ids.get(id(t))
            if i is None:
                ids[id(t)] = len(T)
                T.append(t)
            else:
                again.append((n, i))
        self.fresh = frozenset()        # ids of the zero .grads made for this call (_preinit)
        S, views = _trace.state_roots(T)
        pos = {id(t): i for i, t in enumerate(S)}
        # (a view is threaded as its root, ``_trace.state_roots``: each tensor below is added
        # as its root, once; inline, as this runs per state tensor on every call)
        grad_idx = []
        for t in T:
            g = t._grad
            if g is None:
                grad_idx.append(None)
                continue
            if g._alias is not None:
                g = g._alias.root
            i = pos.get(id(g))
            if i is None:
                i = pos[id(g)] = len(S)
                S.append(g)
            grad_idx.append(i)
        opt_layout = []
        index_of = {id(t): i for i, t in enumerate(T)}
        for o in found.opts:
            lay = []
            state = o.state
            for g in o.param_groups:
                for p in g["params"]:
                    st = state.get(p)
                    if not st:
                        continue
                    items = []
                    for k in sorted(st):
                        v = st[k]
                        if v.__class__ is Tensor or isinstance(v, Tensor):
                            if v._alias is not None:
                                v = v._alias.root
                            if id(v) not in pos:
                                pos[id(v)] = len(S)
                                S.append(v)
                            items.append((k, "T"))
                        else:
                            items.append((k, ("const", _hashable(v))))
                    lay.append((index_of[id(p)], tuple(items)))
            opt_layout.append(tuple(lay))
        self.T, self.S, self.opts, self.gens = T, S, list(found.opts), list(found.gens)
        self.modules = modules
        self.holders = found.holders
        self.grad_idx = grad_idx
        self.opt_layout = opt_layout
        hooks = []
        for i, t in enumerate(T):
            acc = t._acc
            if acc is not None and (acc.pre_hooks or acc.post_acc_hooks or acc.post_hooks):
                if acc.post_acc_hooks or acc.post_hooks or any(
                        not isinstance(k, int) and v for k, v in acc.pre_hooks.items()):
                    raise _trace.GraphBreak(
                        "a post-accumulate-grad or node hook on a state tensor")
                hooks.append((i, tuple((k, tuple(v)) for k, v in acc.pre_hooks.items() if v)))
        from ..nn.modules import module as _mm
        for m in modules:
            if (m._forward_hooks or m._forward_pre_hooks or m._backward_hooks
                    or m._backward_pre_hooks):
                raise _trace.GraphBreak(f"module hooks on {type(m).__name__}")
        if (_mm._global_forward_pre_hooks or _mm._global_forward_hooks
                or _mm._global_backward_hooks or _mm._global_backward_pre_hooks):
            raise _trace.GraphBreak("global module hooks")
        self.hps = [[_hp(o, g) for g in o.param_groups] for o in self.opts]
        # (the common optimizers' numbers travel as one array: see ``host_values``)
        packed = all(v.__class__ is np.float64 for hs in self.hps for h in hs for v in h.values())
        self.key = (
            packed,
            tuple([(t._d.shape, t._d.dtype, t._requires_grad) for t in S]),
            tuple(i is not None for i in grad_idx),
            tuple((tuple(lay), tuple((o._flags(g), tuple(o._state_keys_for(g)),
                                      tuple(sorted(h)))
                                     for g, h in zip(o.param_groups, hps)))
                  for o, lay, hps in zip(self.opts, opt_layout, self.hps)),
            tuple(m.training for m in modules),
            tuple(hooks),
            views,
            tuple(again),
        )


def _hp(o, g):
    """``o._hp(g)`` without eager jax dispatches for the common optimizers (numpy scalars are
    traced the same way)."""
    from ..optim import _algorithms as A
    from ..optim.optimizer import Optimizer
    f = type(o)._hp
    if f is Optimizer._hp or f is A._BetasMixin._hp:
        hp = {k: np.float64(g[k]) for k in o._hp_keys}
        if f is A._BetasMixin._hp:
            hp["beta1"], hp["beta2"] = (np.float64(b) for b in g["betas"])
        return hp
    return o._hp(g)


def _hashable(v):
    try:
        hash(v)
        return v
    except TypeError:
        return ("id", id(v))


class StepEntry:
    __slots__ = ("jitted", "spec", "traces", "name", "precheck", "assumes_fresh", "program")

    def __init__(self, name):
        self.name = name
        # (the traced step's jaxpr, output structure and programs compiled from it by the
        # positions they donate: ``_call_program``)
        self.program = None
        # the state positions the program does not write back, as they held a fresh zero
        # .grad (StepState.fresh) when it was traced: a call must have them fresh too
        self.assumes_fresh = ()
        self.jitted = None
        self.spec = None
        self.traces = 0
        # the value checks as a program of their own (``_precheck``): None (not built yet),
        # False (none, or not worth a program), or (jitted checks, which inputs they read)
        self.precheck = None


def _group_snapshot(g):
    return {k: v for k, v in g.items() if k != "params"}


def _same(a, b):
    if a is b:
        return True
    if isinstance(a, Tensor) or isinstance(b, Tensor):
        return False
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001
        return False


def _backwarded(node, limit=100000):
    """True if a backward already ran through this graph (some node released its saved
    values)."""
    seen, stack = {id(node)}, [node]
    while stack and len(seen) < limit:
        n = stack.pop()
        if n.freed:
            return True
        for e in n.next_edges:
            if e is not None and id(e[0]) not in seen:
                seen.add(id(e[0]))
                stack.append(e[0])
    return False


def _wrap_hook(hook):
    """A tensor hook run on the host with concrete values, on every call of the program."""
    def wrapped(g):
        data = g._data
        shape = jax.ShapeDtypeStruct(data.shape, data.dtype)

        def host(a):
            r = hook(Tensor._make(jnp.asarray(a)))
            if r is None:
                return np.asarray(a)
            return np.asarray(r._data).astype(a.dtype)

        out = jax.experimental.io_callback(host, shape, data, ordered=True)
        return Tensor._make(out)
    wrapped.__name__ = getattr(hook, "__name__", "hook")
    return wrapped


def _held_after(z, T, out, refs_before):
    """Can anything read fresh zero gradient ``z`` after the traced step: a parameter's
    ``.grad`` is still ``z``, the step returns it, or something took a reference to it
    during the step (more references now than before it ran, less the parameter's own)."""
    if any(t._grad is z for t in T):
        return True
    if any(x is z for x in jax.tree_util.tree_leaves(
            out, is_leaf=lambda x: isinstance(x, Tensor))):
        return True
    return sys.getrefcount(z) > refs_before - 1


def build_step_entry(name, fn, treedef, leaves, state_ref, grad_enabled):
    """A jitted program ``(s_arrs, host values, a_arrs) -> (changed, created, outs)``."""
    import jax.experimental  # noqa: F401  (io_callback)
    entry = StepEntry(name)
    tensor_pos = [i for i, x in enumerate(leaves) if isinstance(x, Tensor)]
    arg_rg = [leaves[i]._requires_grad for i in tensor_pos]
    static_leaves = [None if isinstance(x, Tensor) else x for x in leaves]
    arg_state = []

    def body(s_arrs, host, a_arrs):
        entry.traces += 1
        st = state_ref()
        g_arrs, hp_arrs = _unpack_host(st, host)
        T, S = st.T, st.S
        swap = _trace.Swap()
        saved_grads = [t._grad for t in T]
        saved_opt = []
        saved_groups = []
        saved_g = []
        saved_hooks = []
        held = []
        drawn = []
        checks = _hostchecks.collecting()
        watch = _trace.WriteWatch()
        try:
            with _trace.tracing(), checks, watch, _gm.set_grad_enabled(grad_enabled):
                for t, a in zip(S, s_arrs):
                    swap.put(t, a)
                swap.derive()
                swap.watch(st.modules, st.holders)
                for o in st.opts:
                    saved_opt.append({k: (v, dict(v)) for k, v in o.state.items()})
                    saved_groups.append([_group_snapshot(g) for g in o.param_groups])
                for o, hps in zip(st.opts, hp_arrs):
                    o._traced_hp = {id(g): h for g, h in zip(o.param_groups, hps)}
                for i, (g, (k, c)) in enumerate(zip(st.gens, g_arrs)):
                    saved_g.append(g._begin_trace(k, c))
                for t in T:
                    acc = t._acc
                    if acc is not None and acc.pre_hooks:
                        for nr, hooks in acc.pre_hooks.items():
                            if isinstance(nr, int) and hooks:
                                saved_hooks.append((hooks, dict(hooks)))
                                for hid in list(hooks):
                                    hooks[hid] = _wrap_hook(hooks[hid])
                fresh_refs = {id(t): sys.getrefcount(t) for t in S if id(t) in st.fresh}
                lv = list(static_leaves)
                if not arg_state and tensor_pos:
                    # the arguments without a history (positions in T): at the first trace, the
                    # call's own tensors; a retrace is for a call of the same key
                    arg_state[:] = _trace.argument_positions(T, [leaves[p] for p in tensor_pos])
                cut = []            # arguments with a history outside (as leaves here)
                for p, a, rg, i in zip(tensor_pos, a_arrs, arg_rg, arg_state):
                    if i is not None:
                        # (its data is the traced state array, or a view's read of it)
                        lv[p] = T[i]
                        continue
                    t = Tensor._make(a)
                    t._requires_grad = rg
                    lv[p] = t
                    if rg and leaves[p].grad_fn is not None:
                        cut.append(t)
                # state with a history outside (a captured ``h = w * 3``) is a leaf inside:
                # a backward reaching it would flow on into the caller's graph (eager instead)
                for t in T:
                    if t.grad_fn is not None and t._requires_grad:
                        held.append((t, t.grad_fn, t._output_nr, t._acc, t._grad))
                        t.grad_fn = t._acc = None
                args, kwargs = jax.tree_util.tree_unflatten(treedef, lv)
                out = fn(*args, **kwargs)
                _trace.check_seeds(st.gens, [k for k, _c in g_arrs])
                swap.check_escapes()
                if any(t._grad is not g for t, _n, _o, _a, g in held):
                    raise _trace.GraphBreak(
                        "a backward inside the compiled function reaches a captured tensor's "
                        "autograd history from outside it")

                for o, snaps in zip(st.opts, saved_groups):
                    for g, snap in zip(o.param_groups, snaps):
                        now = _group_snapshot(g)
                        if now.keys() != snap.keys() or not all(
                                _same(now[k], snap[k]) for k in now):
                            raise _trace.GraphBreak(
                                "an optimizer hyperparameter was changed inside the compiled "
                                "function (call scheduler.step() outside it)")
                sid = {id(t): i for i, t in enumerate(S)}
                created = []

                def ref(t):
                    if t is None:
                        return None
                    i = sid.get(id(t))
                    if i is not None:
                        return ("s", i)
                    created.append(t._data)
                    return ("new", len(created) - 1)

                changed = [i for i, (t, a) in enumerate(zip(S, s_arrs)) if t._data is not a]
                # a zero .grad made for this call that the step accumulated into and then let
                # go (``zero_grad()`` at the step's end): nothing can read it after the call, so
                # the program does not return it (a parameter-sized output that also kept XLA
                # from fusing the gradient into the update); a call whose .grad at that place
                # is not a fresh zero runs a program traced for it (``assumes_fresh``)
                dropped = [i for i in changed if id(S[i]) in st.fresh
                           and not _held_after(S[i], T, out, fresh_refs.get(id(S[i]), 0))]
                if dropped:
                    changed = [i for i in changed if i not in dropped]
                entry.assumes_fresh = tuple(dropped)
                new_data = [S[i]._data for i in changed]
                ch = set(changed)
                if any(t._grad is not None for t in cut):
                    # (the gradient would flow on into the caller's graph: eager execution)
                    raise _trace.GraphBreak(
                        "a backward inside the compiled function reaches an argument's autograd "
                        "history from outside it")
                grads_changed = any(t._grad is not g0 for t, g0 in zip(T, saved_grads)) or any(
                    g0 is not None and sid.get(id(g0)) in ch for g0 in saved_grads) or any(
                    isinstance(a, Tensor) and id(a) not in sid and a._grad is not None
                    for a in lv)
                grad_spec = [ref(t._grad) for t in T]
                tid = {id(t): i for i, t in enumerate(T)}
                opt_spec = []
                for o in st.opts:
                    lay = []
                    for g in o.param_groups:
                        for p in g["params"]:
                            s = o.state.get(p) if p in o.state else None
                            if not s:
                                continue
                            lay.append((tid[id(p)], tuple(
                                (k, ref(v) if isinstance(v, Tensor) else ("const", v))
                                for k, v in s.items())))
                    opt_spec.append(lay)
                out_leaves, out_tree = jax.tree_util.tree_flatten(
                    out, is_leaf=lambda x: isinstance(x, Tensor))
                kinds, outs = [], []
                live = False
                for x in out_leaves:
                    if isinstance(x, Tensor):
                        if x.grad_fn is not None and not _backwarded(x.grad_fn):
                            live = True
                        i = sid.get(id(x))
                        if i is not None:
                            kinds.append(("s", i))
                        else:
                            kinds.append(("out", len(outs)))
                            outs.append(x._data)
                    elif _trace.is_tracer(x) or isinstance(x, jax.Array):
                        raise _trace.GraphBreak("the function returns a raw jax array")
                    else:
                        kinds.append(("const", x))
                # writes into tensors that are not state: eager execution instead
                watch.check([x for x in out_leaves if isinstance(x, Tensor)])
                if live and not grads_changed:
                    raise NeedNode()
        finally:
            for t, node, nr, acc, _g in held:
                t.grad_fn, t._output_nr, t._acc = node, nr, acc
            del held[:]
            for hooks, orig in saved_hooks:
                hooks.clear()
                hooks.update(orig)
            for g, s in reversed(list(zip(st.gens, saved_g))):
                drawn.insert(0, g._end_trace(s))
            for o in st.opts:
                o._traced_hp = None
            for o, snap in zip(st.opts, saved_opt):
                o.state.clear()
                for k, (d, items) in snap.items():
                    d.clear()
                    d.update(items)
                    o.state[k] = d
            for t, g0 in zip(T, saved_grads):
                t._grad = g0
            swap.restore()
            watch.restore()
        entry.spec = (changed, grad_spec, opt_spec, out_tree, kinds, drawn, checks.errors())
        return new_data, created, outs, checks.outputs()

    entry.jitted = jax.jit(body)
    return entry


# a check program that recomputes more than this many equations is not split off
_PRECHECK_MAX_EQNS = 64


def _count_eqns(jaxpr, limit):
    """Equations of ``jaxpr`` and of the jaxprs it calls (counting stops past ``limit``)."""
    n = 0
    for e in jaxpr.eqns:
        n += 1
        for sub in jcore.jaxprs_in_params(e.params):
            n += _count_eqns(sub, limit)
        if n > limit:
            break
    return n


def _precheck(entry, args):
    """The step's value checks on their own, when they read little (class indices, embedding
    indices: arguments of the step): they run first as a small program and are read at once, so an error is raised before the step runs, and the step
    itself is never waited for (the host's write-back and the next call overlap the program).
    False when the checks would recompute much of the step (they then come from the step's
    own output, read after the call) or call the host."""
    from jax._src.interpreters import partial_eval as pe
    try:
        closed = entry.jitted.trace(*args).jaxpr
        n_out = len(closed.jaxpr.outvars)
        jaxpr, used = pe.dce_jaxpr(closed.jaxpr, [False] * (n_out - 1) + [True])
    except Exception:  # noqa: BLE001  (a jax internal that changed: keep the plain read)
        return False
    if jaxpr.effects or _count_eqns(jaxpr, _PRECHECK_MAX_EQNS) > _PRECHECK_MAX_EQNS:
        return False
    fn = jax.jit(jcore.jaxpr_as_fun(jcore.ClosedJaxpr(jaxpr, closed.consts)))
    return fn, tuple(used), entry.traces


def host_values(st):
    """The call's numbers from the host: the generators' (key, counter) and the optimizers'
    hyperparameters, as one float64 array where they are all float64 (the common optimizers'
    ``_hp``; uint32 values are exact in it): jit converts each host argument on its own, a few
    microseconds apiece. Else ``(generator states, hyperparameter dicts)`` as they are."""
    if not st.key[0]:
        return [g._state_arrays() for g in st.gens], st.hps
    vals = [h[k] for hs in st.hps for h in hs for k in sorted(h)]
    for g in st.gens:
        key, counter = g._state_arrays()
        vals.extend(key.tolist())
        vals.append(int(counter))
    return np.array(vals, np.float64)


def _unpack_host(st, host):
    """``host_values``' array inside the trace: ``(generator states, hyperparameter dicts)``."""
    if isinstance(host, tuple):
        return host
    i = 0
    hp_arrs = []
    for hs in st.hps:
        groups = []
        for h in hs:
            groups.append({k: host[i + n] for n, k in enumerate(sorted(h))})
            i += len(h)
        hp_arrs.append(groups)
    g_arrs = []
    for _g in st.gens:
        g_arrs.append((host[i:i + 2].astype(jnp.uint32), host[i + 2].astype(jnp.uint32)))
        i += 3
    return g_arrs, hp_arrs


def _call_program(entry, args, checked_before):
    """Run the step's program on ``args``: the traced step (its jaxpr, traced once), compiled
    with the buffers of the state it writes back donated. A parameter's or an optimizer
    state's old array, held by its tensor alone, is overwritten in place of a new allocation
    (and a free) per tensor, as a hand-written JAX step donates its state; an array something
    else holds too, at this call, goes in as a copy. A step whose value checks are read after
    its program (``checked_before`` false) donates nothing, so that a failing check leaves the
    tensors their arrays: the first call (it copies what it donates) and a step whose checks
    are not split off (``_precheck``), which gets a program without donation."""
    first = entry.program is None
    if first:
        traced = entry.jitted.trace(*args)        # (the step's one trace: ``body``)
        entry.program = (traced.jaxpr, jax.tree_util.tree_structure(traced.out_info), {})
    jaxpr, out_tree, compiled = entry.program
    if checked_before or first:
        # (a first call copies what it donates: its checks are read after it)
        donate = tuple(entry.spec[0])
    else:
        donate = ()         # (a step whose checks are read after it, every call)
    fn = compiled.get(donate)
    if fn is None:
        fn = compiled[donate] = jax.jit(jcore.jaxpr_as_fun(jaxpr), donate_argnums=donate)
    flat = jax.tree_util.tree_leaves(args)
    for i in donate:        # (the state arrays come first among the leaves)
        if first or sys.getrefcount(flat[i]) > _HELD:
            flat[i] = jnp.copy(flat[i])
    return jax.tree_util.tree_unflatten(out_tree, fn(*flat))


# references to a state array that its tensor alone holds, as ``sys.getrefcount`` counts them
# in ``_call_program``: the tensor, the state list, the flat leaves and the count's argument
_HELD = 4


def run_step_entry(entry, st, leaves):
    S, T = st.S, st.T
    a_arrs = [x._data for x in leaves if isinstance(x, Tensor)]
    args = ([t._data for t in S], host_values(st), a_arrs)
    pre = entry.precheck
    if pre:
        # torch's value errors (class indices, embedding indices) before the step runs
        _hostchecks.raise_failed(entry.spec[-1], pre[0](
            *[x for x, u in zip(jax.tree_util.tree_leaves(args), pre[1]) if u]))
    traces = entry.traces
    new_data, created, outs, flags = _call_program(
        entry, args, bool(pre) or (pre is False and not entry.spec[-1]))
    changed, grad_spec, opt_spec, out_tree, kinds, drawn, errors = entry.spec
    if not pre:
        # torch's value errors before anything is written back (waits for the program)
        _hostchecks.raise_failed(errors, flags)
        if pre is None:
            entry.precheck = _precheck(entry, args) if errors else False
    elif entry.traces != traces:
        entry.precheck = None          # the program was traced again: so are its checks
    write_roots([S[i] for i in changed], new_data)
    made = [Tensor._make(a) for a in created]

    def resolve(r):
        if r is None:
            return None
        return S[r[1]] if r[0] == "s" else made[r[1]]

    for t, r in zip(T, grad_spec):
        t._grad = resolve(r)
    for o, lay in zip(st.opts, opt_spec):
        for pi, items in lay:
            s = o.state[T[pi]]
            for k, r in items:
                s[k] = r[1] if r is not None and r[0] == "const" else resolve(r)
    for g, n in zip(st.gens, drawn):
        if n:
            g._counter += n
    res = []
    for k in kinds:
        if k[0] == "s":
            res.append(S[k[1]])
        elif k[0] == "out":
            res.append(Tensor._make(outs[k[1]]))
        else:
            res.append(k[1])
    return jax.tree_util.tree_unflatten(out_tree, res)
