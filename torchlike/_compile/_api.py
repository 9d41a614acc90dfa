"""``torchlike.compile``: call forms, guards, the bounded cache, graph-break fallback."""
from __future__ import annotations

import functools
import inspect
import threading
import types
import warnings
import weakref
from collections import OrderedDict

import jax

from .. import _fused
from .. import _dtype as D
from .._random import default_generator
from .._tensor import Tensor
from ..autograd import grad_mode as _gm
from . import _hostchecks, _trace
from ._discover import discover, walk_modules
from ._node import build_node_entry, run_node_entry
from ._step import NeedNode, StepState, build_step_entry, run_step_entry

__all__ = ["compile", "OptimizedModule", "CompiledFunction", "config", "reset"]


class _Config:
    """Knobs (torch's ``torch._dynamo.config`` names where torch has one)."""

    def __init__(self):
        self.recompile_limit = 8          # compiles per function before it runs eagerly
        self.cache_size_limit = 256       # compiled programs kept, all functions together (LRU)
        self.stance = "default"           # see torchlike.compiler.set_stance

    @property
    def accumulated_recompile_limit(self):
        return self.cache_size_limit


config = _Config()
_EAGER = "eager"
_LRU: OrderedDict = OrderedDict()          # (id(owner), key) -> weakref(owner)
_OWNERS = weakref.WeakSet()
_lru_lock = threading.Lock()
_STATS = {"compiles": 0, "graph_breaks": 0, "recompile_limit": 0}


class _Local(threading.local):
    disabled = 0


_local = _Local()


def _touch(owner, key):
    with _lru_lock:
        k = (id(owner), key)
        _LRU[k] = weakref.ref(owner)
        _LRU.move_to_end(k)
        while len(_LRU) > config.cache_size_limit:
            (oid, okey), ref = _LRU.popitem(last=False)
            o = ref()
            if o is not None:
                o._entries.pop(okey, None)


def reset():
    """Drop every compiled program and recompile counter (``torch.compiler.reset``)."""
    with _lru_lock:
        _LRU.clear()
    for o in list(_OWNERS):
        o._reset()
    for k in _STATS:
        _STATS[k] = 0


def _counts():
    return dict(_STATS)


def _register_cache():
    from .. import _caches
    _caches.register("compile", reset, _counts)


_register_cache()


class _Program:
    """What compiled modules and compiled functions share: the guarded cache of entries, the
    recompile limit, graph-break handling."""

    def __init__(self, name, fullgraph):
        self._name = name
        self._fullgraph = fullgraph
        self._entries = OrderedDict()
        self._compiles = 0
        self._last_key = None
        self._limit_warned = False
        self._break_warned = False
        self._key_names = ()
        _OWNERS.add(self)

    def _reset(self):
        self._entries.clear()
        self._compiles = 0
        self._last_key = None
        self._limit_warned = False
        self._break_warned = False

    @property
    def trace_count(self):
        """How many times this function's Python code was traced into a program."""
        return sum(getattr(e, "traces", 0) for e in self._entries.values() if e is not _EAGER)

    @property
    def compile_count(self):
        """How many guard keys were compiled (the first compile included)."""
        return self._compiles

    def _lookup(self, key):
        e = self._entries.get(key)
        if e is not None:
            self._entries.move_to_end(key)
            if e is not _EAGER:
                _touch(self, key)
            return e
        if config.stance == "force_eager":
            return _EAGER
        if self._compiles >= config.recompile_limit or (
                config.stance == "eager_on_recompile" and self._compiles):
            if config.stance == "fail_on_recompile" or self._fullgraph and False:
                raise RuntimeError(f"Detected recompile of {self._name!r}")
            if not self._limit_warned:
                self._limit_warned = True
                _STATS["recompile_limit"] += 1
                why = _trace.describe_change(self._key_names, self._last_key or key, key)
                warnings.warn(
                    f"torchlike.compile: {self._name!r} hit the recompile limit "
                    f"({config.recompile_limit}); last recompile because {why}. It now runs "
                    f"eagerly for new guard values (torchlike.compiler.config.recompile_limit)",
                    UserWarning, stacklevel=4)
            return _EAGER
        if config.stance == "fail_on_recompile" and self._compiles:
            raise RuntimeError(f"Detected recompile of {self._name!r} when "
                               f"torchlike.compiler.set_stance('fail_on_recompile')")
        return None

    def _store(self, key, entry):
        self._entries[key] = entry
        self._compiles += 1
        self._last_key = key
        _STATS["compiles"] += 1
        _touch(self, key)

    def _after_break(self, fn, args, kwargs):
        """Run ``fn`` eagerly after a graph break (``_trace.after_break``)."""
        with _trace.after_break():
            return fn(*args, **kwargs)

    def _graph_break(self, e, key):
        """A trace failed: raise under fullgraph, else warn once and run eagerly."""
        reason, where = _trace.break_reason(e)
        if self._fullgraph:
            raise _trace.Unsupported(
                f"torchlike.compile(fullgraph=True): {self._name!r} cannot be compiled as one "
                f"program: {reason}\n  at {where}") from e
        _STATS["graph_breaks"] += 1
        if key is not None:
            self._entries[key] = _EAGER
        if not self._break_warned:
            self._break_warned = True
            _trace.warn_break(self._name, reason, where, stacklevel=5)


def _disabled():
    return _local.disabled > 0 or config.stance == "force_eager"


def _state_key(state):
    return tuple((t._d.shape, t._d.dtype, t._requires_grad) for t in state)


def _common_key():
    return (_gm._state.grad_enabled, D.get_default_dtype(),
            None if _gm._state.autocast is None else id(_gm._state.autocast))


# ------------------------------------------------------------------ functions

_ZEROS: dict = {}
_STALE_GRADS = "gradients that are not fresh zeros"


def _preinit(found):
    """Create the first-step optimizer state (zeros, step 0) before tracing, so that the first
    call already compiles the program every later call uses (one trace, not two). Returns what
    was created, with the data it starts from: state a step leaves untouched (its parameter got
    no gradient) is removed again after the call, as eager execution would never create it."""
    import jax.numpy as jnp
    from ..optim.optimizer import Optimizer
    made = []
    for o in found.opts:
        # a zero ``.grad``: a backward accumulates into it exactly as it would create it
        for g in o.param_groups:
            for p in g["params"]:
                if p._requires_grad and p._grad is None and p.grad_fn is None:
                    d = p._data
                    # a parameter sharded over devices (FSDP, TP) gets its gradient's layout
                    sh = getattr(d, "sharding", None)
                    sh = sh if sh is not None and len(sh.device_set) > 1 else None
                    k = (d.shape, d.dtype, sh)
                    zd = _ZEROS.get(k)
                    if zd is None:          # jax arrays are immutable: one zeros per shape
                        zd = _ZEROS[k] = jnp.zeros(d.shape, d.dtype, device=sh)
                    z = Tensor._make(zd)
                    p._grad = z
                    made.append((None, p, [(z, z._data)]))
        if type(o)._init_state is Optimizer._init_state:
            continue
        for g in o.param_groups:
            for p in g["params"]:
                if not p._requires_grad or o.state.get(p):
                    continue
                try:
                    o._init_state(p, g)
                except Exception:  # noqa: BLE001  (an initialiser that reads p.grad)
                    o.state.pop(p, None)
                    continue
                st = o.state.get(p)
                if st:
                    made.append((o, p, [(v, v._data) for v in st.values()
                                        if isinstance(v, Tensor)]))
    return made


def _undo_preinit(made, all_=False):
    for o, p, tensors in made:
        if o is None:
            z = tensors[0][0]
            if p._grad is z and (all_ or z._data is tensors[0][1]):
                p._grad = None
        elif all_ or all(t._data is d for t, d in tensors):
            o.state.pop(p, None)


class CompiledFunction(_Program):
    """A function compiled by ``torchlike.compile``.

    A training step (one that calls ``.backward()``/``optimizer.step()``) runs as one jitted
    program with its state threaded in and written back (``_step.py``); a function returning
    tensors that still have a graph (a forward) runs as one tape node (``_node.py``).
    """

    def __init__(self, fn, fullgraph=False):
        super().__init__(getattr(fn, "__qualname__", getattr(fn, "__name__", repr(fn))),
                         fullgraph)
        self._fn = fn
        self._key_names = ("the arguments", "the argument structure", "the state",
                           "the state among the arguments", "the Python values it reads",
                           "grad mode, the default dtype or autocast")
        functools.update_wrapper(self, fn)
        self._holder = [None]

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return types.MethodType(self, obj)

    def __repr__(self):
        return f"<torchlike.compile({self._name})>"

    def __call__(self, *args, **kwargs):
        if _fused.ACTIVE:               # fused eager: pending ops run first, the call runs now
            _fused.sync("torchlike.compile call")
            with _fused.suspended():
                return self.__call__(*args, **kwargs)
        fn = self._fn
        if _disabled() or _trace.is_tracing():
            return fn(*args, **kwargs)
        leaves, treedef = _trace.flatten_args(args, kwargs)
        made = ()
        try:
            akey = _trace.arg_key(leaves)
            found = discover(fn, args, kwargs)
            made = _preinit(found)
            st = StepState(found)
            st.fresh = frozenset(id(ts[0][0]) for o, p, ts in made if o is None)
        except _trace.GraphBreak as e:
            _undo_preinit(made, True)
            self._graph_break(e, None)
            return self._after_break(fn, args, kwargs)
        # (a Tensor argument without a history is the state tensor itself inside the trace:
        # its .grad and in-place writes are the state's; where it sits in T is in the key)
        astate = tuple(_trace.argument_positions(
            st.T, [x for x in leaves if isinstance(x, Tensor)]))
        key = (akey, treedef, st.key, astate, tuple(found.values), _common_key())
        try:
            entry = self._lookup(key)
            fresh = getattr(entry, "assumes_fresh", None)
            if fresh and not all(id(st.S[i]) in st.fresh for i in fresh):
                # (its program drops .grads that are fresh zeros; these are not: a program
                # traced for them)
                key = key + (_STALE_GRADS,)
                entry = self._lookup(key)
        except Exception:
            _undo_preinit(made, True)
            raise
        if entry is _EAGER:
            _undo_preinit(made, True)
            if self._entries.get(key) is _EAGER:        # broken, not over the recompile limit
                return self._after_break(fn, args, kwargs)
            return fn(*args, **kwargs)
        try:
            return self._run(fn, key, entry, st, treedef, leaves, args, kwargs)
        finally:
            if made:
                _undo_preinit(made)

    def _run(self, fn, key, entry, st, treedef, leaves, args, kwargs):
        new = entry is None
        if new:
            entry = build_step_entry(self._name, fn, treedef, leaves, lambda: self._holder[0],
                                     _gm._state.grad_enabled)
        self._holder[0] = st
        t0 = entry.traces
        try:
            if hasattr(entry, "jitted"):
                out = run_step_entry(entry, st, leaves)
            else:
                out = run_node_entry(entry, st.T, st.gens, leaves)
        except NeedNode:
            entry = build_node_entry(self._name, fn, treedef, leaves, len(st.T),
                                     lambda: self._holder[0].T, st.gens, st.modules,
                                     st.holders)
            t0 = entry.traces
            try:
                out = run_node_entry(entry, st.T, st.gens, leaves)
            except Exception as e:  # noqa: BLE001
                if _hostchecks.is_check_error(e):
                    self._store(key, entry)
                if entry.traces == t0 or _hostchecks.is_check_error(e):
                    raise
                self._graph_break(e, key)
                return self._after_break(fn, args, kwargs)
            finally:
                self._holder[0] = None
            self._store(key, entry)
            return out
        except Exception as e:  # noqa: BLE001
            self._holder[0] = None
            if _hostchecks.is_check_error(e):
                if new:
                    self._store(key, entry)
                raise
            if entry.traces == t0:
                raise
            if not new:
                self._entries.pop(key, None)
            self._graph_break(e, key)
            return self._after_break(fn, args, kwargs)
        self._holder[0] = None
        if new:
            self._store(key, entry)
        return out


# ------------------------------------------------------------------ modules

def _module_cls():
    from ..nn.modules.module import Module
    return Module


class _ModuleProgram(_Program):
    def __init__(self, mod, fullgraph):
        super().__init__(type(mod).__name__ + ".forward", fullgraph)
        self._key_names = ("the arguments", "the argument structure",
                           "the parameters and buffers", "the views among them",
                           "the modules' Python attributes (training among them)",
                           "grad mode, the default dtype or autocast")
        self._holder = [None]
        self._hook_warned = False

    def call(self, mod, fwd, args, kwargs):
        if _fused.ACTIVE:               # fused eager: pending ops run first, the call runs now
            _fused.sync("torchlike.compile call")
            with _fused.suspended():
                return self.call(mod, fwd, args, kwargs)
        leaves, treedef = _trace.flatten_args(args, kwargs)
        try:
            akey = _trace.arg_key(leaves)
        except _trace.GraphBreak as e:
            self._graph_break(e, None)
            return self._after_break(fwd, args, kwargs)
        found = discover(fwd, (), {})
        state, views = _trace.state_roots([*mod.parameters(), *mod.buffers(), *found.tensors])
        key = (akey, treedef, _state_key(state), views, tuple(found.values), _common_key())
        entry = self._lookup(key)
        if entry is _EAGER:
            if self._entries.get(key) is _EAGER:        # broken, not over the recompile limit
                return self._after_break(fwd, args, kwargs)
            return fwd(*args, **kwargs)
        new = entry is None
        gens = [default_generator]
        if new:
            entry = build_node_entry(self._name, fwd, treedef, leaves, len(state),
                                     lambda: self._holder[0], gens, walk_modules([mod]),
                                     found.holders)
        self._holder[0] = state
        t0 = entry.traces
        try:
            out = run_node_entry(entry, state, gens, leaves)
        except Exception as e:  # noqa: BLE001
            if _hostchecks.is_check_error(e):
                if new:
                    self._store(key, entry)
                raise
            if entry.traces == t0:
                raise
            if not new:
                self._entries.pop(key, None)
            self._graph_break(e, key)
            return self._after_break(fwd, args, kwargs)
        finally:
            self._holder[0] = None
        if new:
            self._store(key, entry)
        return out


def _hooked_submodule(mod):
    from ..nn.modules import module as _mm
    if (_mm._global_forward_pre_hooks or _mm._global_forward_hooks
            or _mm._global_backward_hooks or _mm._global_backward_pre_hooks):
        return "global module hooks"
    if mod._backward_hooks or mod._backward_pre_hooks:
        return f"backward hooks on {type(mod).__name__}"
    for name, m in mod.named_modules():
        if m is mod:
            continue
        if m._forward_hooks or m._forward_pre_hooks or m._backward_hooks or \
                m._backward_pre_hooks:
            return f"hooks on the submodule {name!r} ({type(m).__name__})"
    return None


def _make_optimized_module_class():
    Module = _module_cls()

    class OptimizedModule(Module):
        """What ``torchlike.compile(module)`` returns (torch's ``OptimizedModule``).

        ``_orig_mod`` is the compiled module (a registered child: state_dict keys are prefixed
        ``_orig_mod.``, as torch's); attribute reads and writes go to it. Its forward runs as
        one jitted program recorded on the tape as one node (``CompiledFunctionBackward``).
        Forward hooks of the compiled module itself run eagerly around the program on every
        call; hooks on its submodules make it run eagerly (with one warning).
        """

        _opt_mod_attributes = {"_orig_mod", "dynamo_ctx", "_program", "forward",
                               "__dict__", "_super_module_initialized"}

        def __init__(self, mod, fullgraph=False):
            object.__setattr__(self, "_orig_mod", mod)
            self._super_module_initialized = False
            super().__init__()
            self._super_module_initialized = True
            self._orig_mod = mod
            self._program = _ModuleProgram(mod, fullgraph)
            self.training = mod.training

        @property
        def training(self):
            return self._orig_mod.training

        @training.setter
        def training(self, value):
            if self.__dict__.get("_super_module_initialized"):
                self._orig_mod.training = value

        def __getattr__(self, name):
            if name == "_orig_mod":
                return self._modules["_orig_mod"]
            return getattr(self._orig_mod, name)

        def __setattr__(self, name, value):
            if hasattr(type(self), name) and name != "training":
                return super().__setattr__(name, value)
            if name == "training":
                return object.__setattr__(self, name, value)
            if name in OptimizedModule._opt_mod_attributes:
                return super().__setattr__(name, value)
            return setattr(self._orig_mod, name, value)

        def __delattr__(self, name):
            if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
                return super().__delattr__(name)
            return delattr(self._orig_mod, name)

        def __len__(self):
            return len(self._orig_mod)

        def __dir__(self):
            orig = self._orig_mod.__dir__()
            return orig + [a for a in super().__dir__() if a not in orig]

        def __reduce__(self):
            return (self.__class__, (self._orig_mod,))

        def forward(self, *args, **kwargs):
            mod = self._orig_mod
            if _disabled() or _trace.is_tracing():
                return mod(*args, **kwargs)
            prog = self._program
            why = _hooked_submodule(mod)
            if why is not None:
                if prog._fullgraph:
                    raise _trace.Unsupported(
                        f"torchlike.compile(fullgraph=True): {why} cannot run inside the "
                        f"compiled program")
                if not prog._hook_warned:
                    prog._hook_warned = True
                    warnings.warn(f"torchlike.compile: {why}: {type(mod).__name__} runs "
                                  f"eagerly so that they fire on every call", UserWarning,
                                  stacklevel=3)
                return mod(*args, **kwargs)
            inst = mod.__dict__.get("forward")
            fwd = inst if inst is not None else types.MethodType(type(mod).forward, mod)
            if mod._forward_hooks or mod._forward_pre_hooks:
                # the module's own hooks run eagerly around the compiled forward
                mod.__dict__["forward"] = lambda *a, **k: prog.call(mod, fwd, a, k)
                try:
                    return mod._call_impl(*args, **kwargs)
                finally:
                    if inst is None:
                        del mod.__dict__["forward"]
                    else:
                        mod.__dict__["forward"] = inst
            return prog.call(mod, fwd, args, kwargs)

    return OptimizedModule


_OM = None


def __getattr__(name):
    if name == "OptimizedModule":
        return _optimized_module()
    raise AttributeError(name)


def _optimized_module():
    global _OM
    if _OM is None:
        _OM = _make_optimized_module_class()
    return _OM


# ------------------------------------------------------------------ compile

_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")
_BACKENDS = ("inductor", "eager", "aot_eager", "cudagraphs", "openxla", "tvm", "onnxrt",
             "xla", "jax")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False, name=None, recompile_limit=None):
    """Compile a module or a function into XLA programs (``torch.compile``).

    ``model = torchlike.compile(model)`` returns an ``OptimizedModule`` whose forward is one
    jitted program and one tape node; ``@torchlike.compile`` on a training step runs forward,
    ``.backward()``, ``optimizer.step()`` and ``zero_grad()`` as one program. ``backend``,
    ``mode``, ``dynamic`` and ``options`` are accepted for compatibility: every backend is
    XLA (see docs/compile.md). ``fullgraph=True`` raises where the code cannot be one program
    instead of falling back to eager execution.
    """
    if model is None:
        def deco(m):
            if m is None:
                raise RuntimeError("Model can't be None")
            return compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable, name=name,
                           recompile_limit=recompile_limit)
        return deco
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if callable(backend) and not isinstance(backend, str):
        raise NotImplementedError(
            "torchlike.compile: a callable backend (an FX graph compiler) is not supported; "
            "torchlike compiles with XLA (backend='inductor' and the other names are accepted)")
    if isinstance(backend, str) and backend not in _BACKENDS:
        from ._trace import InvalidBackend
        raise InvalidBackend(f"Invalid backend: {backend!r}, see "
                             f"`torch._dynamo.list_backends()` for available backends.")
    if recompile_limit is not None:
        raise NotImplementedError("torchlike.compile(recompile_limit=...): set "
                                  "torchlike.compiler.config.recompile_limit instead")
    if disable:
        return model
    if isinstance(model, _module_cls()):
        return _optimized_module()(model, fullgraph=fullgraph)
    if not callable(model):
        raise RuntimeError("Model must be a callable")
    if isinstance(model, CompiledFunction):
        return model
    return CompiledFunction(model, fullgraph=fullgraph)
