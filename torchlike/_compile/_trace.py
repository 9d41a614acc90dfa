"""Tracing torchlike code: swap Tensors' data for jax tracers, run, read the results, restore.

Shared by compiled modules (``_node.py``: the forward as one tape node) and compiled steps
(``_step.py``: a whole training step as one program). Everything here is host-side
bookkeeping; the maths runs through the ordinary op registry, whose jitted ops accept tracers.
"""
from __future__ import annotations

import os
import random
import threading
import traceback
import types
import warnings
import weakref

import jax
import numpy as np

from .. import _storage
from .._tensor import Tensor
from ._discover import _MODULE_INTERNALS  # (a Module's own containers)

__all__ = ["TorchDynamoException", "Unsupported", "InvalidBackend", "GraphBreak", "tracing", "is_tracer", "break_reason", "Swap", "check_seeds",
           "read_map", "state_roots", "flatten_args", "arg_key"]

_TL_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SKIP_DIRS = (_TL_DIR, os.path.dirname(jax.__file__), os.path.dirname(np.__file__))


class TorchDynamoException(RuntimeError):
    """The base of torch.compile's errors (``torch._dynamo.exc.TorchDynamoException``)."""


class Unsupported(TorchDynamoException):
    """Raised under ``fullgraph=True`` for code that cannot become one program (torch's
    ``torch._dynamo.exc.Unsupported``)."""


class InvalidBackend(TorchDynamoException):
    """``torch.compile(backend=<a name no backend has>)``."""


class GraphBreak(Exception):
    """Raised inside a trace for something a compiled program cannot express."""


# jax's errors for a tracer used where a concrete value is needed (.item(), bool(t), printing,
# data-dependent shapes, numpy conversion)
_BREAK_ERRORS = (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
                 jax.errors.TracerBoolConversionError, jax.errors.TracerIntegerConversionError,
                 jax.errors.UnexpectedTracerError, GraphBreak)


def check_seeds(gens, keys):
    """Raise a graph break where the traced function set a generator's state (``manual_seed``,
    ``set_rng_state``): a program would replay its draws from the state it started with, not
    from the one set (torch's dynamo breaks the graph at ``manual_seed``). ``keys``: the key
    each generator was given at the trace's start."""
    for g, k in zip(gens, keys):
        if g._key is not k:
            raise GraphBreak("torch.manual_seed (or a generator's state set) inside the "
                             "compiled function")


_CELL = types.CellType
_EMPTY = object()       # (an empty cell, a global not yet bound)


class _Local(threading.local):
    depth = 0
    broken = 0


_local = _Local()


class tracing:
    """Context: torchlike.compile is tracing (``torchlike.compiler.is_compiling()``)."""

    def __enter__(self):
        if _local.depth == 0:
            from . import _hostchecks
            _hostchecks.install()
            _write_hook(+1)
        _local.depth += 1

    def __exit__(self, *exc):
        _local.depth -= 1
        if _local.depth == 0:
            from . import _hostchecks
            _hostchecks.uninstall()
            _write_hook(-1)
        return False


_hook_lock = threading.Lock()
_tracing_threads = [0]


def _write_hook(delta):
    """Storage's write hook and the constants' numpy conversion are installed while any
    thread traces (eager writes elsewhere then pay one call that finds no watch in their
    thread)."""
    from .. import _storage
    with _hook_lock:
        _tracing_threads[0] += delta
        on = _tracing_threads[0] > 0
        _storage.trace_write_hook = _note_write if on else None
        if on and "__array__" not in _JaxprTracer.__dict__:
            _JaxprTracer.__array__ = _constant_array
        elif not on and _JaxprTracer.__dict__.get("__array__") is _constant_array:
            del _JaxprTracer.__array__


# A tensor made from Python data inside a traced function (``tensor([0, 2])``, a mask from a
# list, ``arange(n)``) is a constant of the trace: its value is known, as it is to torch's
# dynamo. Host-side code that reads such values (index bounds and masks, a view's positions)
# reads them while a torchlike.compile trace runs; a value computed from the program's inputs
# still raises jax's TracerArrayConversionError (a graph break).
from jax._src.interpreters.partial_eval import DynamicJaxprTracer as _JaxprTracer  # noqa: E402


def _constant_array(self, dtype=None, copy=None):
    v = self.get_const()
    if v is None:
        return jax.core.Tracer.__array__(self, dtype)
    return np.asarray(v, dtype=dtype)


def _note_write(root, prev, version):
    stack = _local.__dict__.get("watch")
    if stack and not isinstance(prev, jax.core.Tracer):
        stack[-1].note(root, prev, version)


class WriteWatch:
    """Writes, during one trace, into tensors that held concrete data: tensors that are not
    the traced function's state (state holds tracers while it traces). Those that are still
    alive when the function has returned (not locals of the trace) and are not its outputs
    were written from outside the program: ``check`` raises a graph break naming one (the
    function then runs eagerly, or raises under ``fullgraph=True``). ``restore`` puts their
    data and version back on every exit path, so no tracer stays behind.

    It also watches Python's ``random`` module and numpy's global generator: a draw from them
    while tracing would be a constant of the program (the same "random" number every call), so
    ``check`` puts their states back (the eager run draws what it would have) and raises a
    graph break, as torch's dynamo breaks the graph at such a call."""

    __slots__ = ("seen", "rng")

    def __init__(self):
        self.seen = {}
        self.rng = None

    def __enter__(self):
        st = _local.__dict__.setdefault("watch", [])
        st.append(self)
        self.rng = (random.getstate(), np.random.get_state())
        return self

    def __exit__(self, *exc):
        _local.__dict__["watch"].pop()
        return False

    def note(self, root, prev, version):
        if id(root) in self.seen:
            return
        d = root.__dict__.get("_aliases")
        aliases = [(weakref.ref(v), v._data, v.grad_fn, v._output_nr, v._requires_grad,
                    v._alias.idx, v._alias.overlap) for v in list(d)] if d else []
        self.seen[id(root)] = (weakref.ref(root), prev, version, root._vc, root.grad_fn,
                               root._output_nr, root._requires_grad, aliases)

    def leaked(self, outputs=()):
        """Tensors written during the trace that outlive it (after a collection)."""
        if not self.seen:
            return []
        outs = {id(o) for o in outputs}
        live = [r() for r, *_ in self.seen.values()]
        live = [t for t in live if t is not None and id(t) not in outs]
        if live:
            import gc
            del live
            gc.collect()
            live = [r() for r, *_ in self.seen.values()]
            live = [t for t in live if t is not None and id(t) not in outs]
        return live

    def check(self, outputs=()):
        if self.rng is not None:
            py, npy = self.rng
            now = np.random.get_state()
            if random.getstate() != py or now[2:] != npy[2:] or \
                    not np.array_equal(now[1], npy[1]):
                random.setstate(py)
                np.random.set_state(npy)
                raise GraphBreak("a draw from Python's random module or numpy's global "
                                 "generator: its value would be a constant of the program "
                                 "(draw with torch's generators, or outside the function)")
        live = self.leaked(outputs)
        if live:
            t = live[0]
            raise GraphBreak(
                f"a write into a tensor that is not state of the compiled function (shape "
                f"{list(t._d.shape)}, {t._d.dtype}): torchlike.compile finds state through "
                f"the function's arguments, closures and globals, modules' parameters and "
                f"buffers and optimizers; register it as a buffer or pass it as an argument")

    def restore(self):
        seen, self.seen = self.seen, {}
        for r, prev, version, vc, fn, nr, rg, aliases in seen.values():
            t = r()
            if t is None:
                continue
            t._data, t.grad_fn, t._output_nr, t._requires_grad = prev, fn, nr, rg
            t._vc = vc
            vc[0] = version
            keep = []
            for a in aliases:
                al = a[0]()
                if al is None:
                    continue
                keep.append(al)
                al._data, al.grad_fn, al._output_nr, al._requires_grad = a[1:5]
                al._alias.idx, al._alias.overlap = a[5], a[6]
            d = t.__dict__.get("_aliases")
            if d and len(d) != len(keep):
                t.__dict__["_aliases"] = _storage.AliasSet(keep)


def is_tracing():
    return _local.depth > 0


class after_break:
    """Context: a compiled function runs eagerly after a graph break. torch still compiles the
    code around a break, so ``torchlike.compiler.is_compiling()`` is True in it."""

    def __enter__(self):
        _local.broken += 1

    def __exit__(self, *exc):
        _local.broken -= 1
        return False


def in_break_fallback():
    return _local.broken > 0


def is_tracer(x):
    return isinstance(x, jax.core.Tracer)


def is_break(e):
    return isinstance(e, _BREAK_ERRORS)


def break_reason(e):
    """``(reason, "file:line: code")`` for an exception raised while tracing user code."""
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    reason = f"{type(e).__name__}: {first}"
    where = "<unknown>"
    for fr in reversed(traceback.extract_tb(e.__traceback__)):
        fn = os.path.abspath(fr.filename)
        if not fn.startswith(_SKIP_DIRS) and "/jax/" not in fn and "/jaxlib/" not in fn:
            where = f"{fr.filename}:{fr.lineno}: {(fr.line or '').strip()}"
            break
    return reason, where


def warn_break(name, reason, where, stacklevel=4):
    warnings.warn(f"torchlike.compile: graph break in {name!r} at {where}\n  reason: {reason}\n"
                  f"  {name!r} runs eagerly (unchanged results; no compiled program). Use "
                  f"fullgraph=True to make this an error.", UserWarning, stacklevel=stacklevel)


class Swap:
    """Give Tensors tracer data for the length of a trace; ``restore`` puts back exactly what
    was there, on every exit path (a finished trace, a graph break, any error).

    Per swapped tensor: its data, version, history (``grad_fn``, output number,
    ``requires_grad``), and its live storage aliases (views, ``.detach()``, ``.data``) as they
    were: each alias's data, cached index map and history. Aliases created during the trace
    (their data and index maps may be tracers) are unregistered from the root, so that no later
    eager write refreshes them; the pre-existing ones get their pre-trace values back verbatim
    (nothing is recomputed, so no jax op runs inside the trace being closed).
    """

    __slots__ = ("saved", "watched")

    _FIELDS = ("_data", "grad_fn", "_output_nr", "_requires_grad")

    def __init__(self):
        self.saved = []
        self.watched = ()       # (a place the function could store into, what it held)

    def put(self, t, arr):
        d = t.__dict__.get("_aliases")
        aliases = None
        if d:
            aliases = [(v, v._data, v.grad_fn, v._output_nr, v._requires_grad,
                        v._alias.idx, v._alias.overlap) for v in list(d)]
        self.saved.append((t, t._data, t.grad_fn, t._output_nr, t._requires_grad,
                           t._vc, t._vc[0], aliases))
        t._data = arr

    def watch(self, modules, holders=()):
        """Keep what ``modules`` (their attributes, and the items of their list and dict
        attributes) and ``holders`` (``_discover.Found.holders``: lists, dicts, closure cells,
        global names) hold before the trace, for ``check_escapes``."""
        kept = []
        for m in modules:
            d = m.__dict__
            kept.append((d, d.copy()))
            kept.extend((v, v.copy()) for k, v in d.items()
                        if v.__class__ in (list, dict) and k not in _MODULE_INTERNALS)
        for h in holders:
            c = h.__class__
            if c is _CELL:
                try:
                    kept.append((h, h.cell_contents))
                except ValueError:              # (an empty cell)
                    kept.append((h, _EMPTY))
            elif c is tuple:                    # (a function's globals, the names it reads)
                g, names = h
                kept.append((h, {n: g.get(n, _EMPTY) for n in names}))
            else:
                kept.append((h, h.copy()))
        self.watched = kept

    def check_escapes(self):
        """Raise a graph break where the traced function stored a tensor it computed where the
        caller can reach it (a module's attribute, an item of a list or dict, a closure cell,
        a global: ``self.attn = att``, ``log.append(loss)``): its data is the trace's, which
        would escape the program (torch's dynamo replays such stores). What the watched places
        held is put back, so that the eager run that follows stores once. The swapped tensors
        and their aliases are the program's own state."""
        known = {id(t) for t, *_rest in self.saved}
        known.update(id(a[0]) for *_rest, aliases in self.saved for a in aliases or ())
        for h, _before in self.watched:
            c = h.__class__
            if c is _CELL:
                try:
                    values = (h.cell_contents,)
                except ValueError:
                    continue
            elif c is tuple:
                g, names = h
                values = [g.get(n) for n in names]
            elif c is list:
                values = h
            else:
                values = [v for k, v in h.items() if k not in _MODULE_INTERNALS]
            for v in values:
                for x in (v.values() if v.__class__ is dict else v) \
                        if v.__class__ in (list, tuple, dict) else (v,):
                    if isinstance(x, Tensor) and id(x) not in known and is_tracer(x._d):
                        self._put_back()
                        raise GraphBreak("the function stores a tensor it computed where the "
                                         "caller can read it (an attribute, a list, a dict, a "
                                         "global or a closure variable)")

    def _put_back(self):
        for h, before in reversed(self.watched):
            c = h.__class__
            if c is _CELL:
                if before is _EMPTY:
                    try:
                        del h.cell_contents
                    except ValueError:
                        pass
                else:
                    h.cell_contents = before
            elif c is tuple:
                g = h[0]
                for n, v in before.items():
                    if v is _EMPTY:
                        g.pop(n, None)
                    else:
                        g[n] = v
            elif c is list:
                h[:] = before
            else:
                h.clear()
                h.update(before)

    def derive(self):
        """Make the live aliases of the swapped tensors read the new (traced) data, as a write
        refreshes them (a view registered as a buffer reads its traced root). Index maps are
        concrete (``_storage.alias_index``), so a view reads its root as a constant gather, or
        as a slice where its elements are consecutive. An alias cut from its root's graph
        (``.detach()``, ``.data``, a view made under ``no_grad`` of a root that requires grad)
        reads it through ``stop_gradient``, so that jax's derivatives are cut where torch's are."""
        from .._storage import alias_index
        for t, _d, _f, _n, root_rg, _vc, _v, aliases in self.saved:
            for a in aliases or ():
                al = a[0]
                idx = alias_index(al)
                data = (t._data.reshape(al._d.shape) if idx is None
                        else read_map(t._data, idx))
                if root_rg and not al._requires_grad:
                    data = jax.lax.stop_gradient(data)
                al._data = data

    def restore(self):
        saved, self.saved = self.saved, []
        for t, data, fn, nr, rg, vc, v, aliases in reversed(saved):
            t._data, t.grad_fn, t._output_nr, t._requires_grad = data, fn, nr, rg
            t._vc = vc
            vc[0] = v
            d = t.__dict__.get("_aliases")
            keep = set()
            for a in aliases or ():
                al = a[0]
                keep.add(id(al))
                al._data, al.grad_fn, al._output_nr, al._requires_grad = a[1:5]
                al._alias.idx, al._alias.overlap = a[5], a[6]
            if d and any(id(al) not in keep for al in list(d)):
                # (a new set: WeakSet.discard would compare Tensors with ==)
                t.__dict__["_aliases"] = _storage.AliasSet(a[0] for a in aliases or ())


def read_map(root, idx):
    """``root``'s elements at the flat positions ``idx`` (a concrete index map), shaped as
    ``idx``: a slice when the positions are consecutive, else a gather."""
    flat_idx = np.asarray(idx).reshape(-1)
    flat = root.reshape(-1)
    n = flat_idx.size
    if n:
        start = int(flat_idx[0])
        if start + n <= flat.shape[0] and (flat_idx == np.arange(start, start + n)).all():
            return jax.lax.slice(flat, (start,), (start + n,)).reshape(np.shape(idx))
    return flat[flat_idx].reshape(np.shape(idx))


def argument_positions(state, arguments):
    """Where each argument tensor sits in ``state`` (a list of tensors), or None for one that
    is not there or has a history: an argument without a history is the state tensor itself
    inside a trace (its ``.grad`` and in-place writes are the state's)."""
    pos = {id(t): i for i, t in enumerate(state)}
    return [pos.get(id(x)) if x.grad_fn is None else None for x in arguments]


def state_roots(tensors):
    """The tensors a program threads for ``tensors`` (parameters, buffers, ...): each one's
    storage root, once (a view registered as a buffer is read from its root, and a write
    through it reaches the root), and the guard of the views and repeats among them: per view
    its position, identity and shape (its index map is a constant of the program); per tensor
    met again (a buffer also held in a plain list) its position and the root it is, so that
    rebinding a name from one state tensor to another retraces."""
    roots, pos, views = [], {}, []
    for i, t in enumerate(tensors):
        a = t._alias
        r = t if a is None else a.root
        if a is not None:
            views.append((i, id(t), t._d.shape))
        k = pos.get(id(r))
        if k is None:
            pos[id(r)] = len(roots)
            roots.append(r)
        elif a is None:
            views.append((i, k))
    return roots, tuple(views)


# ------------------------------------------------------------------ arguments

def flatten_args(args, kwargs):
    """``(leaves, treedef)`` of ``(args, kwargs)`` with Tensors as leaves."""
    return jax.tree_util.tree_flatten((args, kwargs), is_leaf=lambda x: isinstance(x, Tensor))


def arg_key(leaves):
    """The guard on arguments: per Tensor its shape, dtype and requires_grad; other leaves by
    value (Python numbers and strings are specialised, as torch.compile does) or identity."""
    key = []
    for x in leaves:
        if isinstance(x, Tensor):
            d = x._data
            key.append(("T", d.shape, d.dtype, x._requires_grad))
        elif isinstance(x, (bool, int, float, complex, str, bytes, type(None))):
            key.append((type(x), x))
        elif isinstance(x, (np.ndarray, jax.Array)):
            raise GraphBreak(f"a raw {type(x).__name__} argument (pass Tensors)")
        else:
            try:
                hash(x)
            except TypeError:
                raise GraphBreak(f"an unhashable argument of type {type(x).__name__}") from None
            key.append(("id", id(x)))
    return tuple(key)


def describe_change(names, old, new):
    """Which component of a guard key changed (for the recompile-limit warning)."""
    for name, a, b in zip(names, old, new):
        if a != b:
            return f"{name} changed: {_short(a)} -> {_short(b)}"
    return "the guard key changed"


def _short(x):
    s = repr(x)
    return s if len(s) < 120 else s[:117] + "..."
