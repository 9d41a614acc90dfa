"""Storage: views, aliases and in-place writes on immutable jax arrays (PyTorch's semantics).

Everything about shared storage lives here; the op registry does not import this module.

A tensor produced by a view op (basic indexing, view/reshape, transpose, permute, squeeze,
unsqueeze, expand, diagonal, split/unbind/chunk, ...), by ``detach()`` or by ``.data`` is an
*alias* of a root tensor (the one that owns the storage). It records how it was derived from its
parent; from that, lazily, an integer *index map*: for each of its elements, the flat position
in the root that it reads. With the map, any view is a gather from the root and any write into a
view is a scatter into the root — for every kind of view, with no per-view-op inverse code.

View ops declare themselves with a *view rule* (``defop(..., view=view_rule(...))``, or
``view=True`` for the default rule); the registry calls ``rule.mark(...)`` on every call's
outputs. The rule also says whether the op makes elements repeat (``expand``): a tensor whose
elements repeat cannot be written in place, as in torch.

Writes (``write``, and the in-place protocol ``check_inplace`` / ``commit_inplace`` /
``apply_`` that every ``op_`` form uses):

* into the root: the root's array is replaced; every live alias is refreshed (a jitted gather);
* into an alias: the new values are scattered into the root, then the same refresh.

Autograd follows torch's CopySlices: a write into a view of a tensor that requires grad is
recorded on the root as a ``CopySlices`` node (gradient: zero at the written positions for the
old root, the gathered cotangent for the written values); aliases that take part in autograd get
a fresh ``AsStridedBackward0`` node reading from the root's new history (the two tape ops of
writes, below). The version counter is one list shared by the root and all its aliases; writes
bump it under a lock, so concurrent writers never lose a version.
"""
from __future__ import annotations

import contextlib
import copy
import functools
import math
import re
import threading
import warnings
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from . import _caches
from . import _dtype as D
from . import _registry as _R
from . import _tiers
from . import _vmap_levels
from . import _fused
from ._fused import Deferred as _Deferred, raw as _raw
from ._registry import apply, defop
from .autograd import function as _function
from .autograd import grad_mode as _gm
from .autograd.graph import AccumulateGrad as _AccumulateGrad, InvalidView as _InvalidView

__all__ = ["write", "make_view", "detached_alias", "alias_index", "view_rule", "ViewRule",
           "check_inplace", "commit_inplace", "apply_", "relayout",
           "broadcasts", "write_roots", "concrete_maps", "constant"]

_state = _gm._state
_lock = threading.RLock()   # one writer at a time: data swap + version bump + alias refresh


def _make(data):
    return _R._Tensor._make(data)


class Alias:
    """How an alias derives from its root: parent tensor, the view op's forward, extra args."""

    __slots__ = ("root", "parent", "fwd", "rest", "k", "detached", "idx", "overlap", "multi",
                 "op", "strides", "creation")

    def __init__(self, root, parent, fwd, rest, k, detached, overlap, multi=None, op=None,
                 creation=None):
        self.root = root
        self.parent = parent
        self.fwd = fwd
        self.rest = rest
        self.k = k
        self.detached = detached
        self.idx = None
        # do elements repeat (several read one root position)? True, False, or None: not known
        # from the view ops alone, decided from the index map at the first write
        self.overlap = overlap
        self.multi = multi      # the creating node's name if the op returned several views
        self.op = op            # (view op name, its static kwargs): how strides follow
        self.strides = None     # torch's strides, once asked (``_strides``)
        # torch's creation meta where it restricts writes: "no_grad" or "inference" (a view
        # made with grad mode off, or in inference mode, of a tensor that requires grad),
        # "custom" (a custom Function's output that is a view); views of such a view inherit
        # it (``multi``: the other kind)
        self.creation = creation


def _root_of(t):
    a = t._alias
    return t if a is None else a.root


class AliasSet:
    """The views of a root, held weakly: true while one is alive, iterated as the live ones.
    (A ``weakref.WeakSet`` costs a callback per member and an iteration guard, and compares
    its members with ``==``; a root made each step and viewed once, as an attention block's
    projections are, pays for it at every op.) Keyed by ``id``: a dead view's id taken by a
    new tensor is simply replaced."""

    __slots__ = ("refs", "bound")

    def __init__(self, views=()):
        self.refs = {}
        self.bound = 16         # prune the dead ones past this many entries
        for t in views:
            self.add(t)

    def add(self, t):
        refs = self.refs
        refs[id(t)] = _weakref(t)
        if len(refs) > self.bound:
            for k in [k for k, r in refs.items() if r() is None]:
                del refs[k]
            self.bound = max(16, 2 * len(refs))

    def update(self, views):
        for t in views:
            self.add(t)

    def __iter__(self):
        return iter([t for r in list(self.refs.values()) if (t := r()) is not None])

    def __bool__(self):
        for r in self.refs.values():
            if r() is not None:
                return True
        return False

    def __len__(self):
        return sum(1 for r in list(self.refs.values()) if r() is not None)


_weakref = weakref.ref


def _aliases(root):
    d = root.__dict__.get("_aliases")
    if d is None:
        d = root.__dict__["_aliases"] = AliasSet()
    return d


# ------------------------------------------------------------------ jitted helpers (one cache)

_TRACES = {"iota": 0, "scatter": 0, "take": 0, "repeats": 0}
# its own lock: a trace may run while another thread holds ``_lock`` and waits for that trace
_count_lock = threading.Lock()


def _counted(kind, fn, **jit_kw):
    def traced(*a):
        with _count_lock:
            _TRACES[kind] += 1
        return fn(*a)
    if jit_kw:
        return jax.jit(_tiers.inlined(traced), **jit_kw)
    return _tiers.Tiered(fn, jax.jit(_tiers.inlined(traced)), kind)


def _scatter_fn(root, values, idx):
    flat = jnp.reshape(root, (-1,))
    flat = flat.at[jnp.reshape(idx, (-1,))].set(jnp.reshape(values, (-1,)).astype(root.dtype))
    return jnp.reshape(flat, root.shape)


def _repeats_fn(idx):
    s = jnp.sort(jnp.reshape(idx, (-1,)))
    return jnp.any(s[1:] == s[:-1])


_iota = _counted("iota", lambda n: jnp.arange(n, dtype=jnp.int64), static_argnums=0)
_scatter = _counted("scatter", _scatter_fn)
_take = _counted("take", lambda root, idx: jnp.reshape(root, (-1,))[idx])
_repeats = _counted("repeats", _repeats_fn)
_JITS = (_iota, _scatter, _take, _repeats)
_reshapers: dict = {}


def _reshape(a, shape, dtype=None):
    """``a`` cast to ``dtype`` and reshaped to ``shape``: at once for an array, recorded (one
    tiered function per shape and dtype) for a fused-eager deferred value. A value already of
    that dtype and shape, as a write's or a refresh's usually is, is itself (jax's astype and
    reshape cost a dispatch each even then; a recorded identity, a call per alias per write)."""
    if a.__class__ is not _Deferred:
        if dtype is not None and a.dtype != dtype:
            a = a.astype(dtype)
        return a if a.shape == tuple(shape) else a.reshape(shape)
    if a.shape == tuple(shape) and (dtype is None or a.dtype == dtype):
        return a
    f = _reshapers.get((shape, dtype))
    if f is None:
        if len(_reshapers) >= 1024:
            _reshapers.clear()          # (bounded: shapes that keep changing are forgotten)
        f = _reshapers[(shape, dtype)] = _tiers.tiered(
            lambda x: (x if dtype is None else x.astype(dtype)).reshape(shape), name="reshape")
    return f(a)


def _iota_shaped(shape):
    """Root element numbers in ``shape``: numpy on the CPU (no program), else compiled."""
    out = _tiers.iota(shape)
    if out is None:
        n = 1
        for d in shape:
            n *= d
        out = _iota(n).reshape(shape)
    return out


def _clear():
    for f in _JITS:
        f.clear_cache()
    with _count_lock:
        for k in _TRACES:
            _TRACES[k] = 0


_caches.register("storage", _clear, lambda: dict(_TRACES))


def alias_index(t):
    """The flat root positions read by ``t`` (None: ``t`` reads the whole root as it is).

    A map depends on shapes and the view ops' static positions only, never on values: while
    a jit traces (``torchlike.compile``) it is still computed now, as a concrete array (see
    ``concrete_maps``), so decisions that need it (contiguity, overlap) stay on the host and
    the program gets it as a constant."""
    a = t._alias
    if a is None:
        return None
    if a.idx is None:
        if a.fwd is None:
            return None
        with concrete_maps():
            pidx = alias_index(a.parent)
            if pidx is None:
                pidx = _iota_shaped(a.root._d.shape)
            out = a.fwd(pidx, *a.rest)
        a.idx = out[a.k] if isinstance(out, tuple) else out
    return a.idx


def concrete_maps():
    """Context for computing index maps: while a jit traces, ops on concrete inputs run now
    (``jax.ensure_compile_time_eval``) instead of becoming part of the program."""
    if _fused.ACTIVE:
        return _fused.suspended()       # fused eager: maps are computed now, not recorded
    return jax.ensure_compile_time_eval() if _fused.staging() else _fused.NO_CONTEXT


def constant(x):
    """``x`` with a jit trace's constant lowered to its concrete value (an array made from
    Python data inside a traced function: a view op's position ``jnp.asarray(i)``, a
    ``torchlike.tensor([...])``); ``x`` itself when it is concrete or computed from the
    trace's inputs."""
    if isinstance(x, jax.core.Tracer):
        try:
            v = x.get_const()
        except AttributeError:
            return x
        if v is not None:
            return np.asarray(v, dtype=x.dtype)
    return x


def zeros_like(t):
    """Zeros of ``t``'s shape and dtype on its device, without reading ``t`` (a pending fused
    value stays pending)."""
    d = _raw(t)
    return jnp.zeros(d.shape, d.dtype, device=next(iter(d.devices())))


def zero_grads(params, set_to_none):
    """``zero_grad`` of an optimizer or a module: each ``.grad`` let go (``set_to_none``) or
    detached and zeroed in place; in fused eager, an optimizer's step whose segment waits for
    this runs now (without the gradients let go among its outputs)."""
    for p in params:
        if p.grad is None:
            continue
        if set_to_none:
            p.grad = None       # (no local holds it: a pending one is not an output)
            continue
        g = p.grad
        if g.grad_fn is not None:
            g.detach_()
        else:
            g.requires_grad_(False)
        g._set_data(zeros_like(g))


def detached_alias(t):
    """``t.detach()``: same storage and version counter, no autograd history."""
    out = _make(_raw(t))
    out._vc = _root_of(t)._vc
    _detach_into(out, t)
    if t.__dict__.get("_is_conj"):
        out.__dict__["_is_conj"] = True
    return out


def _detach_into(out, t):
    """Make ``out`` (holding ``t``'s data) a detached alias of ``t``'s storage: it reads the
    root positions ``t`` reads."""
    root = _root_of(t)
    ta = t._alias
    out._alias = Alias(root, t, None, (), 0, True, False if ta is None else ta.overlap,
                       op=("detach", {}))
    if ta is not None:
        # a detached view reads the same root positions as the view it came from
        out._alias.idx = alias_index(t)
        out._alias.fwd = ta.fwd if out._alias.idx is None else None
    with _lock:
        _aliases(root).add(out)


def _plain(t):
    """A root without views, outside autograd: a tensor that may become another's alias."""
    return (t._alias is None and not t.__dict__.get("_aliases") and t.grad_fn is None
            and not t._requires_grad)


def take_storage(t, value):
    """``t.data = value`` where ``t`` is a plain root (no views): ``t`` takes ``value``'s data and
    shares its storage from then on, as in torch, keeping its own version counter and autograd
    identity. A plain ``value`` (no views, no autograd) becomes a detached alias of ``t``, which
    is its storage's root (a temporary, ``p.data = p.data.half()``, leaves a plain root); any
    other ``value`` keeps its storage, and ``t`` becomes one more alias of it. False where
    ``t`` has views or is one: its data is then replaced and its views follow it
    (DIFFERENCES.md)."""
    if t._alias is not None or t.__dict__.get("_aliases"):
        return False
    t._d = _raw(value)
    if _plain(value):
        _detach_into(value, t)
    else:
        _detach_into(t, value)
    return True


def parameter_of(cls, t):
    """``nn.Parameter(t)``'s tensor (of class ``cls``): a new tensor that takes ``t``'s storage
    (``take_storage``) and shares its version counter, as torch's does. A temporary
    (``Parameter(torch.empty(...))``) leaves the parameter a plain root."""
    p = cls._make(_raw(t))
    vc = t._vc if _plain(t) else _root_of(t)._vc
    take_storage(p, t)
    p._vc = vc
    return p


def make_view(out, parent, fwd, rest, k, repeats=False, multi=None, op=None, creation=None):
    """Register ``out`` (output ``k`` of a view op's ``fwd`` on ``parent``) as an alias.

    ``repeats``: the view op itself makes elements repeat (True), or not (False).
    ``op``: (the view op's name, its static kwargs), from which its strides follow.
    ``creation``: "custom" for a custom Function's output, False for none (else inherited, or
    "no_grad" / "inference" for a view made with grad mode off / in inference mode of a tensor
    that requires grad: it requires grad too, as in torch, and the gradients that reach it go
    nowhere).
    """
    root = _root_of(parent)
    pa = parent._alias
    # a view shares its parent's version counter: the root's, or a ``.data`` alias's own
    out._vc = parent._vc
    if parent._is_inference:
        out._is_inference = True        # torch: a view of an inference tensor is one too
    elif out._is_inference:
        out._is_inference = False       # (and a view of a normal one, made in inference mode, not)
    if parent.__dict__.get("_is_conj") and out.dtype.is_complex:
        out.__dict__["_is_conj"] = True     # (and a view of a conjugated tensor is conjugated)
    parent_overlap = False if pa is None else pa.overlap
    # a view of a tensor with repeated elements may or may not repeat them: decided at a write
    overlap = True if repeats else (False if parent_overlap is False else None)
    # a view of a detached alias (``p.data[2:4]``, ``p.detach()[0]``) is outside autograd too
    detached = pa is not None and pa.detached
    if creation is False:
        creation = None                 # (``multi`` says it all)
    elif creation is None:
        if pa is not None and pa.creation is not None:
            creation = pa.creation
        elif not _state.grad_enabled and parent._requires_grad and not detached:
            creation = "inference" if _state.inference else "no_grad"
            if not out._requires_grad:
                out._requires_grad = True
                out._acc = _Dropped(out)
    out._alias = Alias(root, parent, fwd, rest, k, detached, overlap,
                       multi or (pa.multi if pa is not None else None), op, creation)
    with _lock:
        _aliases(root).add(out)
    return out


def _function_view(out, source, multi):
    """A custom Function's output ``out`` made a view of ``source`` (a view, or an input returned
    as it is): the view may not be written in place with grad (``multi``: the node's name where
    the Function has several outputs, the multiple-views rule)."""
    make_view(out, source, _same_positions, (), 0, op=("detach", {}), multi=multi,
              creation=False if multi else "custom")


def _same_positions(positions):
    """The index map of a view that reads what its parent reads."""
    return positions


_function.view_output[0] = _function_view


class _Dropped(_AccumulateGrad):
    """The gradient edge of a view made with grad mode off: a leaf's node that accumulates
    nothing and runs no hook (torch gives such a view no gradient accumulator)."""

    __slots__ = ()

    @property
    def variable(self):
        return None

    def _tensor_hooks(self, output_nr):
        return {}


# ------------------------------------------------------------------ view rules

def broadcasts(base, static):
    """``expand``'s rule: elements repeat when a size-1 or new dimension grows."""
    shape, old = static["shape"], base._d.shape
    lead = len(shape) - len(old)
    return any(s != 1 and (i < lead or old[i - lead] == 1) for i, s in enumerate(shape))


def _grows(base, outs, static):
    n = _prod(base._d.shape)
    for o in outs:
        if _prod(o._d.shape) > n:
            return True
    return False


_prod = math.prod


class ViewRule:
    """How a view op's outputs alias its first input.

    ``when``: None (every call is a view) or a predicate of the static kwargs.
    ``overlap``: whether the op makes elements repeat: a function ``(input, static) -> bool``,
    or None for the default (they repeat iff an output has more elements than the input: exact
    for ops that select, rearrange or broadcast elements).
    """

    __slots__ = ("when", "overlap")

    def __init__(self, when=None, overlap=None):
        self.when = when
        self.overlap = overlap

    def mark(self, entry, args, arrays, result, static):
        """The registry's hook: make ``result`` aliases of ``args[0]``."""
        if self.when is not None and not self.when(static):
            return
        base = args[0]
        several = result.__class__ is tuple
        rep = (self.overlap(base, static) if self.overlap is not None
               else _grows(base, result if several else (result,), static))
        # positions made inside a traced function are constants: index maps need their values
        rest = tuple([x if x.__class__ is int else constant(x) for x in arrays[1:]]) \
            if len(arrays) > 1 else ()
        fwd = entry.fwd
        op = (entry.op.name, static)        # (the call's own kwargs dict: nothing changes it)
        if several:
            for k, o in enumerate(result):
                make_view(o, base, fwd, rest, k, rep, multi=entry.name, op=op)
        else:
            make_view(result, base, fwd, rest, 0, rep, op=op)
            if _fused.ACTIVE:
                _fused.bound_view(result._d, arrays[0])


def view_rule(*, when=None, overlap=None):
    """The ``view=`` of a view op's ``defop``: ``view_rule(overlap=broadcasts)`` for expand."""
    return ViewRule(when, overlap)


_DEFAULT_RULE = ViewRule()
_R.default_view_rule = lambda: _DEFAULT_RULE


# ------------------------------------------------------------------ the two tape ops

@defop("alias_gather", saves=False, grad_name="AsStridedBackward0")
def _gather(root, idx):
    return jnp.reshape(root, (-1,))[idx]


@defop("copy_slices", saves=False, grad_name="CopySlices")
def _copy_slices(root, values, idx):
    flat = jnp.reshape(root, (-1,))
    flat = flat.at[jnp.reshape(idx, (-1,))].set(jnp.reshape(values, (-1,)).astype(root.dtype))
    return jnp.reshape(flat, root.shape)


_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation.")


def _overlaps(t):
    """True when several elements of ``t`` are one root element (torch's internal overlap)."""
    a = t._alias
    if a is None:
        return False
    if a.overlap is None:
        idx = alias_index(t)
        with concrete_maps():
            a.overlap = idx is not None and bool(_repeats(idx))
    return a.overlap


def check_writable(t):
    if _overlaps(t):
        raise RuntimeError(_OVERLAP)


def write(t, new, grad_out=None, repeats_ok=False):
    """Write ``new`` (a jax array shaped like ``t``) into ``t``.

    ``grad_out``: the Tensor holding ``new`` with its autograd history, when the write is
    recorded (an in-place op in grad mode); None for a raw write (no_grad, optimizers, init).
    ``repeats_ok``: every element gets the same value (``fill_``, ``zero_``), so ``t`` may
    have repeated elements, as torch allows.
    """
    with _lock:
        _write(t, new, grad_out, repeats_ok)


def write_each(tensors, arrays):
    """Raw writes (as ``write(t, new)``) of ``arrays`` into ``tensors``, under one lock: an
    optimizer's update of its parameters and state."""
    with _lock:
        if trace_write_hook is not None or _vmap_levels.active():
            for t, new in zip(tensors, arrays):
                _write(t, new, None)
        else:                   # (``_write`` without the hook and batching checks: none apply)
            _write_roots(tensors, arrays)


def write_roots(tensors, arrays):
    """Raw writes of ``arrays`` into root ``tensors`` (no autograd; aliases refreshed), under
    one lock: the write-back of a compiled step."""
    with _lock:
        _write_roots(tensors, arrays)


def _write_roots(tensors, arrays):
    for t, new in zip(tensors, arrays):
        if t._alias is not None:
            _write(t, new, None)
            continue
        t._data = new
        t._vc[0] += 1
        if t.__dict__.get("_aliases"):
            _refresh(t)


# set by torchlike.compile while a thread traces: ``hook(root, prev_data, prev_version)`` is
# told of every write (before it happens) so that writes into tensors that are not the traced
# function's state are found and undone (``_compile/_trace.py``, ``WriteWatch``)
trace_write_hook = None


def _write(t, new, grad_out, repeats_ok=False):
    a = t._alias
    if _vmap_levels.active():
        # (torch's batching rules: a batched value cannot go into an unbatched tensor)
        _vmap_levels.check_write((t if a is None else a.root)._d, new)
    hook = trace_write_hook
    if hook is not None:
        root = t if a is None else a.root
        hook(root, root._data, root._vc[0])
    if a is None:
        t._data = new
        t._vc[0] += 1
        if grad_out is not None and grad_out.grad_fn is not None:
            _rebase(t, grad_out.grad_fn, grad_out._output_nr)
        _refresh(t)
        return
    if not repeats_ok:
        check_writable(t)
    root = a.root
    idx = alias_index(t)
    track = (grad_out is not None and not a.detached
             and (root._requires_grad or grad_out._requires_grad))
    own = None          # (a detached tensor written with history: its own, as torch's)
    if a.detached and grad_out is not None and grad_out.grad_fn is not None:
        if a.op is None or a.op[0] != "detach":
            raise RuntimeError(_DETACHED_VIEW_WRITE)
        own = grad_out
    if track:
        idx_t = _make(idx if idx is not None else
                      _iota_shaped(root._d.shape))
        r = apply(_copy_slices, root, grad_out, idx_t)
        root._data = _raw(r)
        if r.grad_fn is not None:
            _rebase(root, r.grad_fn, 0)
    elif idx is None:
        root._data = _reshape(new, root._d.shape, root._d.dtype)
    else:
        root._data = _scatter(_raw(root), new, idx)
    t._vc[0] += 1   # the root's counter, except for a `.data` alias, which has its own
    _refresh(root, t._vc)
    if own is not None:
        _rebase(t, own.grad_fn, own._output_nr)


# torch records such a write on the detached tensor the view is of (CopySlices), which is no
# view of the storage's owner for autograd; torchlike's detached aliases have no autograd base
_DETACHED_VIEW_WRITE = (
    "torchlike: an in-place op that writes a value requiring grad into a view of a detached "
    "tensor (x.detach()[i], p.data[i]) is not supported (torch would record it on the detached "
    "tensor). Write into the detached tensor itself (d = x.detach(); d.mul_(w)), or compute "
    "the new values out of place (torch.where, index_put, cat).")


def _rebase(t, node, output_nr):
    """Give ``t`` a new history. Hooks stay with the old node; retain_grad moves (torch#79996)."""
    old = t.grad_fn
    if t._retains_grad and old is not None and old.retains:
        old.retains.pop(t._output_nr, None)
        if node.retains is None:
            node.retains = {}
        node.retains[output_nr] = weakref.ref(t)
    t.grad_fn = node
    t._output_nr = output_nr
    t._requires_grad = True


def _refresh(root, counter=None):
    """Make every live alias of ``root`` read the root's current values and, where the write
    bumped the alias's version ``counter`` (every alias shares the root's but a ``.data``
    alias and its views: torch's write through ``.data`` is invisible to autograd), history."""
    d = root.__dict__.get("_aliases")
    if not d:
        return
    rdata = _raw(root)
    track = root._requires_grad and root.grad_fn is not None
    # torch regenerates the history of the views of a root written in place, in grad mode or
    # not (a raw write under no_grad keeps a view of a non-leaf differentiable, and a view made
    # with grad of a leaf): AsStridedBackward0 into the root (the same gradient, under its name)
    leaf = root._requires_grad and root.grad_fn is None
    for v in list(d):
        idx = alias_index(v)
        v._data = _reshape(rdata, v._d.shape) if idx is None else _take(rdata, idx)
        a = v._alias
        if a.detached or counter is not None and v._vc is not counter:
            continue
        if (a.creation is not None or a.multi) and (root._requires_grad
                                                   or v.grad_fn is not None):
            # torch: a view whose creation forbids writes has no history once its storage is
            # written (its next use raises; repr names it ``Invalid``)
            # (a retained gradient stays with the old node, which a use of the view made before
            # the write still runs)
            v.grad_fn = _InvalidView(_creation_error(v, a.creation or "multi", True))
            v._requires_grad = True
            continue
        if track or (leaf and v.grad_fn is not None):
            with _gm.set_grad_enabled(True):
                g = apply(_gather, root, _make(
                    idx if idx is not None else _iota_shaped(v._d.shape)))
            _rebase(v, g.grad_fn, 0)


def relayout(t, new_data, layout, node=None):
    """An in-place view op (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``, ``resize_``):
    ``t`` itself takes the new shape/layout ``layout(array)``.

    If ``t`` is a root, its live aliases keep reading the same elements: their index maps are
    translated from the old flat layout to the new one. If ``t`` is an alias, only its own map
    changes (its root is untouched), as in torch.
    """
    with _lock:
        return _relayout(t, new_data, layout, node)


def _relayout(t, new_data, layout, node):
    with concrete_maps():
        _relayout_maps(t, layout)
    t._data = new_data
    t._vc[0] += 1
    if node is not None:
        _rebase(t, node, 0)
    return t


def _relayout_maps(t, layout):
    a = t._alias
    if a is None:
        t.__dict__.pop("_layout", None)
        d = t.__dict__.get("_aliases")
        for v in list(d or ()):
            # their strides are now read off their translated maps
            v._alias.op, v._alias.strides = None, None
        if d:
            n = int(t._d.size)
            perm = jnp.reshape(layout(_iota(n).reshape(t._d.shape)), (-1,))
            inv = jnp.zeros((n,), jnp.int64).at[perm].set(_iota(n))
            for v in list(d):
                idx = alias_index(v)
                if idx is None:
                    idx = _iota_shaped(v._d.shape)
                v._alias.idx = inv[idx]
    else:
        # fix the maps of every alias of the root first: views taken of ``t`` read the
        # elements they read when they were made, whatever ``t`` becomes
        for v in list(_aliases(a.root)):
            alias_index(v)
        idx = alias_index(t)
        if idx is None:
            idx = _iota_shaped(t._d.shape)
        a.idx = layout(idx)
        a.op, a.strides = None, None




# ------------------------------------------------------------------ the in-place protocol

_LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
_VIEW_LEAF_INPLACE = ("a view of a leaf Variable that requires grad is being used in an "
                      "in-place operation.")


def check_inplace(t, repeats_ok=False):
    """torch's checks before writing into ``t`` in place (``repeats_ok``: see ``write``)."""
    if t._is_inference:
        _gm.check_inference_inplace(t)
    a = t._alias
    if a is not None:
        if a.creation is not None and not a.detached and _state.grad_enabled \
                and t._requires_grad:
            raise RuntimeError(_creation_error(t, a.creation, False))
        # a recorded write may not repeat elements: torch's CopySlices backward refuses it
        # (torch raises at backward, torchlike here: see DIFFERENCES.md)
        if not repeats_ok or (_state.grad_enabled and not a.detached and a.root._requires_grad):
            check_writable(t)
        if (not a.detached and _state.grad_enabled and t._requires_grad
                and a.root.grad_fn is None):
            # (torch: the view requires grad and its base is a leaf, which need not require
            # grad itself: ``arange(6.).view(2, 3).requires_grad_()``)
            raise RuntimeError(_VIEW_LEAF_INPLACE)
        if a.multi and not a.detached and _state.grad_enabled and t._requires_grad:
            raise RuntimeError(_creation_error(t, "multi", False))
    if t._requires_grad and t.grad_fn is None and _state.grad_enabled:
        raise RuntimeError(_LEAF_INPLACE)


_MODE_TAIL = (". Given that this use case is ambiguous and error-prone, it is forbidden. You can "
              "clarify your code by moving both the view and the inplace either both inside the "
              "{} block (if you don't want the inplace to be tracked) or both outside (if you "
              "want the inplace to be tracked).")


def _creation_error(t, creation, indirect):
    """torch's message for a write that a view's creation forbids: into the view itself, or
    (``indirect``) into its base or another view of it, read at the view's next use."""
    node = t.grad_fn
    name = re.sub(r"Backward[0-9]*$", "", node.name() if node is not None and
                  node.__class__ is not _InvalidView else (t._alias.multi or "?"))
    name = name.rsplit("::", 1)[-1]
    what = ("its base or another view of its base has been modified inplace" if indirect
            else "is being modified inplace")
    if creation in ("no_grad", "inference"):
        mode, block = ("no_grad", "no_grad") if creation == "no_grad" else \
            ("inference", "inference_mode")
        tail = (" with grad mode enabled" if creation == "no_grad" else " in normal mode") + \
            _MODE_TAIL.format(block)
        if node is None or node.__class__ is _InvalidView:
            return f"A view was created in {mode} mode and {what}" + tail
        return (f"Output {t._output_nr} of {name} is a view of a view which was created in "
                f"{mode} mode and {what}" + tail)
    head = f"Output {t._output_nr} of {name} is a view and {what}."
    if creation == "custom":
        return head + (" This view was created inside a custom Function (or because an input "
                       "was returned as-is) and the autograd logic to handle view+inplace "
                       "would override the custom backward associated with the custom "
                       "Function, leading to incorrect gradients. This behavior is forbidden. "
                       "You can fix this by cloning the output of the custom Function.")
    return head + (" This view is the output of a function that returns multiple views. Such "
                   "functions do not allow the output views to be modified inplace. You "
                   "should replace the inplace operation by an out-of-place one.")


def commit_inplace(t, out, repeats_ok=False):
    """Make ``t`` hold ``out``'s values and history: the write of an in-place op.

    The result is cast back to ``t``'s dtype (torch refuses a cast to a lower category). The
    write goes through ``write``, so views and aliases see it.
    """
    if isinstance(out, tuple):
        out = out[0]
    data = _raw(out)                    # (fused eager: a pending value stays pending)
    if data.dtype != t._d.dtype:
        src, dst = D.from_jax(data.dtype), D.from_jax(t._d.dtype)
        if src.category > dst.category:
            raise RuntimeError(f"result type {_torch_type_name(src)} can't be cast to the "
                               f"desired output type {_torch_type_name(dst)}")
        out = out.to(dst)
        data = _raw(out)
    if data.shape != t._d.shape:
        raise RuntimeError(f"output with shape {list(t._d.shape)} doesn't match the broadcast "
                           f"shape {list(data.shape)}")
    node = out.grad_fn
    tracked = node is not None
    with _lock:
        if tracked:
            _original_self(node, t)
            if t._alias is not None:
                _unhooked_view_edge(node, t)
        _write(t, data, out if tracked else None, repeats_ok)
        if tracked and node._saved_versions:
            # the op's own saved output is ``t`` as it just wrote it (a later write raises at
            # the backward, as torch's); its saved ``self`` is torch's ``original_self``, a
            # copy taken before the write (the node keeps the old array), which no later write
            # reaches; a bilinear op's other operand aliasing ``t`` (``a.mul_(a)``,
            # ``a.mul_(a.detach())``) was saved before this write, and torch's backward raises
            vc = t._vc
            others = node.saves == "others" or node.saves.__class__ is dict
            kept = []
            own = True
            for e in node._saved_versions:
                if e[0] is vc and own and e[2] is t and e[3] in (0, None):
                    own = False             # (self: the copy)
                elif (e[0] is vc or e[0] is out._vc) and not (
                        others and e[3].__class__ is int and e[3] >= 1):
                    kept.append((vc, vc[0], e[2], e[3]))
                else:
                    kept.append(e)
            node._saved_versions = kept
    if "_fw" in out.__dict__:           # a forward AD tangent goes with the value written
        t.__dict__["_fw"] = out.__dict__["_fw"]
    return t


def _unhooked_view_edge(node, t):
    """torch's CopySlices runs the in-place op's backward itself and sends the share of the
    gradient that belongs to the view's old value into its base's gradient: the view's old
    node does not run for it, so the hooks registered on the view (or its node) before the write
    do not see it. The op's edge to that node goes to a copy of it without hooks (a use of the
    old view before the write still runs the node itself, hooks and all)."""
    old = t.grad_fn
    if old is None or not (old.pre_hooks or old.post_hooks):
        return
    clone = copy.copy(old)
    clone.pre_hooks = clone.post_hooks = clone.retains = None
    node.next_edges = tuple((clone, e[1]) if e is not None and e[0] is old else e
                            for e in node.next_edges)


def _original_self(node, t):
    """The node of an in-place op on ``t`` keeps ``t`` as it was before the write, as torch's
    ``original_self``: a tensor of the old values with the old history stands for ``t``
    among the node's inputs (a backward recorded with ``create_graph``, the saved-tensor
    attributes, read it; the array the node computes with is the old one already)."""
    inputs = node.inputs
    if inputs and inputs[0] is t:
        old = _R._Tensor._make(_raw(t), t.grad_fn, t._output_nr)
        old._requires_grad = t._requires_grad
        node.inputs = (old, *inputs[1:])


_PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the "
                    "written-to tensor refer to a single memory location. Please clone() the "
                    "tensor before performing the operation.")


def check_no_partial_overlap(t, inputs):
    """torch's ``assert_no_partial_overlap`` for a write into ``t`` that reads ``inputs``: an
    input sharing ``t``'s storage must read exactly what ``t`` is (the same positions in the
    same layout) or nothing of it. As in torch, only tensors that are dense and do not overlap
    themselves are compared (``x[1:] = x[:-1]`` raises; a diagonal or an expanded input is not
    checked)."""
    root = None
    for a in _tensors_in(inputs):
        if a is t:
            continue
        if root is None:
            root = _root_of(t)
            if "_layout" in root.__dict__:
                return          # (its memory order is not its logical one: not compared)
        if _root_of(a) is root and _overlap(t, a) == "partial":
            raise RuntimeError(_PARTIAL_OVERLAP)


def _tensors_in(inputs):
    """The tensors among ``inputs`` and in their lists and tuples (``cat``'s operands)."""
    T = _R._Tensor
    for a in inputs:
        if isinstance(a, T):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (b for b in a if isinstance(b, T))


# in-place forms torch runs without the overlap check (their result follows its kernel's order)
_NO_OVERLAP_CHECK = frozenset({"masked_scatter"})


def _dense_positions(t):
    """The root positions ``t`` reads, if they are a run with no repeats (torch's
    non-overlapping and dense), else None."""
    n = t._d.size
    idx = alias_index(t)
    if idx is None:
        return np.arange(n).reshape(t._d.shape), 0, n
    pos = np.asarray(idx)
    lo, hi = int(pos.min()), int(pos.max()) + 1
    if hi - lo != n or np.unique(pos).size != n:
        return None
    return pos, lo, hi


def _overlap(a, b):
    """torch's overlap status of two tensors of one storage: "full", "partial" or None (none,
    or not decidable: one of them is not dense or overlaps itself)."""
    if not a._d.size or not b._d.size:
        return None
    pa, pb = _dense_positions(a), _dense_positions(b)
    if pa is None or pb is None:
        return None
    if pa[1:] == pb[1:] and pa[0].shape == pb[0].shape and np.array_equal(pa[0], pb[0]):
        return "full"
    return "partial" if pa[1] < pb[2] and pb[1] < pa[2] else None


def apply_(op, t, *args, **static):
    """In-place form of ``apply``: ``t`` becomes the result of ``op(t, *args)``."""
    check_inplace(t)
    check_no_partial_overlap(t, args)
    return commit_inplace(t, apply(op, t, *args, **static))


def inplace_of(fn, name=None):
    """The in-place method form of ``fn``: ``self`` becomes ``fn(self, ...)`` (torch's checks)."""
    checked = (name or fn.__name__) not in _NO_OVERLAP_CHECK

    def m(self, *args, **kwargs):
        check_inplace(self)
        if checked:
            check_no_partial_overlap(self, args + tuple(kwargs.values()))
        return commit_inplace(self, fn(self, *args, **kwargs))
    m.__name__ = m.__qualname__ = (name or fn.__name__) + "_"
    m.__module__ = fn.__module__
    m.__doc__ = f"In-place form of ``{name or fn.__name__}``."
    return m


# ------------------------------------------------------------------ out=

# torch.return_types.<op> -> torch.return_types.<op>_out, what out= returns (filled by
# torchlike.return_types, which this module does not import)
STRUCTSEQ_OUT: dict = {}


def write_out(result, out, name):
    """torch's ``out=``: ``result`` written into ``out`` (cast to its dtype); returns ``out``.

    A tuple result (``max``, ``sort``, ...) writes into a tuple of tensors. As in torch, a
    result of another shape resizes ``out`` (with torch's deprecation warning when ``out`` had
    elements); a float result cannot go into an integer ``out``; out= does not differentiate.
    """
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{name}(): argument 'out' must be tuple of {len(result)} Tensors")
        res = tuple(write_out(r, o, name) for r, o in zip(result, out))
        if hasattr(result, "_fields"):
            return type(result)(*res)
        cls = STRUCTSEQ_OUT.get(type(result))       # torch.return_types.<op>_out
        return res if cls is None else tuple.__new__(cls, res)
    if not isinstance(out, _R._Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if _gm._state.grad_enabled and (result.requires_grad or out.requires_grad):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           f"differentiation, but one of the arguments requires grad.")
    if tuple(out.shape) != tuple(result.shape):
        if out._alias is not None:
            raise NotImplementedError(
                f"torchlike: {name}(out=...) would resize out from {list(out.shape)} to "
                f"{list(result.shape)}, and out is a view or has views (see DIFFERENCES.md)")
        if out.numel() != 0:
            warnings.warn(
                f"An output with one or more elements was resized since it had shape "
                f"{list(out.shape)}, which does not match the required output shape "
                f"{list(result.shape)}. This behavior is deprecated, and in a future PyTorch "
                f"release outputs will not be resized unless they have zero elements. You can "
                f"explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                f"t.resize_(0).", UserWarning, stacklevel=3)
        out._data = jnp.zeros(result._d.shape, out._d.dtype)
        out._vc[0] += 1
    check_inplace(out)
    commit_inplace(out, result.detach())
    return out


def with_out(fn, name=None, dtype_from_out=False):
    """``fn`` with torch's ``out=`` keyword: the result is written into ``out`` (``write_out``).
    ``dtype_from_out``: torch computes in ``out``'s dtype when no ``dtype`` is given (cumsum,
    linspace), and refuses a ``dtype`` that is not ``out``'s (the creation functions' message;
    the reductions declare theirs in ``_ops/_surface.py``'s ``_STRICT_OUT``)."""
    if getattr(fn, "_handles_out", False):
        return fn
    name = name or fn.__name__

    @functools.wraps(fn)
    def g(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if dtype_from_out:
            asked = kwargs.get("dtype")
            if asked is None:
                kwargs["dtype"] = out.dtype
            elif isinstance(asked, D.dtype) and isinstance(out, _R._Tensor) and \
                    asked is not out.dtype:
                raise RuntimeError(f"dtype {_torch_type_name(asked)} does not match dtype of "
                                   f"out parameter ({_torch_type_name(out.dtype)})")
        for o in _tensors_in((out,)):
            check_no_partial_overlap(o, args)
        return write_out(fn(*args, **kwargs), out, name)

    g._handles_out = True
    return g


def _torch_type_name(d):
    """torch's legacy type name of a dtype (``Float``, ``Long``, ...), as in its messages."""
    return D.legacy_name(d)


# ------------------------------------------------------------------ set_ and storage identity

def _orphan_aliases(t, strides):
    """``t`` (a root) is about to read another storage: its live aliases keep the one they
    read, now held by a hidden root with ``t``'s values, history and version counter (in
    torch, views of ``t`` keep the old storage and share ``t``'s version counter).
    ``strides``: ``torchlike._strides.strides`` (given by the caller: storage does not import
    the layer above it)."""
    d = t.__dict__.get("_aliases")
    if t._alias is not None or not d:
        return
    live = list(d)
    with concrete_maps():
        for v in live:
            alias_index(v)          # fix the maps and strides: the parent chain is cut below
            strides(v)
    nr = _make(_raw(t))
    nr._vc = t._vc
    nr.grad_fn, nr._requires_grad, nr._output_nr = t.grad_fn, t._requires_grad, t._output_nr
    if "_layout" in t.__dict__:
        nr.__dict__["_layout"] = t.__dict__["_layout"]
    for v in live:
        v._alias.root = nr
        if v._alias.idx is None:
            v._alias.fwd = None
        v._alias.parent = nr
    del t.__dict__["_aliases"]
    _aliases(nr).update(live)


def _leave_root(t):
    if t._alias is not None:
        root = t._alias.root
        _aliases(root).refs.pop(id(t), None)
        t._alias = None


def rebind(t, source, strides):
    """``t.set_(source)``: ``t`` reads ``source``'s storage with its sizes and strides (an
    alias of ``source``'s root with ``source``'s index map). ``t`` keeps its own version
    counter (torch's is per tensor, not per storage) and its autograd state (the caller's).
    ``strides``: as in ``_orphan_aliases``."""
    with _lock:
        st = strides(source)
        sidx = alias_index(source)
        if source is t:
            return t
        _orphan_aliases(t, strides)
        _leave_root(t)
        root = _root_of(source)
        sa = source._alias
        a = Alias(root, source, None, (), 0, True, False if sa is None else sa.overlap,
                  op=None)
        a.idx = sidx
        a.strides = tuple(st)
        t.__dict__.pop("_layout", None)
        t._alias = a
        t._data = _raw(source)
        t._vc[0] += 1
        _aliases(root).add(t)
    return t


def rebind_empty(t, strides):
    """``t.set_()``: ``t`` reads a new, empty storage (shape ``(0,)``); ``strides``: as in
    ``_orphan_aliases``."""
    with _lock:
        _orphan_aliases(t, strides)
        _leave_root(t)
        t.__dict__.pop("_layout", None)
        t.__dict__.pop("_data_ptr", None)
        t._data = zeros_like(t).reshape(-1)[:0]
        t._vc[0] += 1
    return t


_PTR_LOCK = threading.Lock()
_NEXT_PTR = [0x7F0000000040]


def storage_root(t):
    """The tensor that owns ``t``'s storage (the root itself, never a detached copy)."""
    return _root_of(t)


def base_address(root):
    """``data_ptr``'s address of ``root``'s storage: 0 for an empty storage, as torch's nullptr.

    On the CPU it is the address of a host copy of the storage's bytes, made at the first call
    and refreshed in place at every later call where the storage has been written since: jax
    arrays are immutable and move on every write (and a clone may share its source's buffer),
    so their own addresses are neither stable nor unique, but C code that reads raw memory at
    ``data_ptr()`` (safetensors' ``save_file``, ctypes) must find the values there. The address
    is unique per storage and stable across writes, as torch's; writes through it are not seen
    by the tensor (DIFFERENCES.md). Elsewhere (device memory) a stable address of torchlike's
    own, with the storage's byte length reserved after it."""
    nbytes = int(root._d.size) * root.dtype.itemsize
    if nbytes == 0:
        return 0
    if root.device.type == "cpu":
        return _host_mirror(root, nbytes)
    p = root.__dict__.get("_data_ptr")
    if p is None:
        with _PTR_LOCK:
            p = root.__dict__.get("_data_ptr")
            if p is None:
                p = _NEXT_PTR[0]
                _NEXT_PTR[0] += (nbytes + 127) // 64 * 64
                root.__dict__["_data_ptr"] = p
    return p


def _host_mirror(root, nbytes):
    """The address of ``root``'s host copy (64-byte aligned, as torch's allocations), its
    bytes those of the storage's current array."""
    data = root._data
    with _PTR_LOCK:
        m = root.__dict__.get("_data_ptr")
        if m is None or m[0].nbytes < nbytes + 64:
            buf = np.empty(nbytes + 64, np.uint8)
            m = root.__dict__["_data_ptr"] = [buf, None, (-buf.ctypes.data) % 64]
        buf, src, off = m
        if src is not data:
            flat = np.ascontiguousarray(np.asarray(data)).reshape(-1)
            buf[off:off + nbytes] = flat.view(np.uint8)
            m[1] = data
        return buf.ctypes.data + off
