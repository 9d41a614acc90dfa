"""The op registry: each op declared once as a pure jax function; jitted, cached and taped here.

``apply(op, *args, **static)`` is the only place that creates a Tensor with a ``grad_fn``.

Per op and per (static kwargs, cast dtype, which inputs need grad) the registry keeps four
jitted functions (a ``_Compiled`` entry):

* ``fwd``        the forward alone (grad mode off, or no input requires grad);
* ``fwd_vjp``    ``jax.vjp`` inside ``jax.jit``: outputs plus the VJP residuals (a ``Pullback``
                 named by the op and its input avals, so its traces can be kept on disk);
* ``bwd``        applies those residuals to a cotangent;
* ``bwd_remat``  the backward of a forward that ran alone: the forward recomputed at its
                 inputs (a ``Remat``) and its VJP applied.

Each is a ``torchlike._tiers.Tiered``: on the CPU a signature's first calls evaluate the
function's jaxpr with numpy, later calls run ``jax.jit``'s program, which jit keys on shapes
and dtypes, so the same op on the same shapes compiles once. A differentiated call that the
tier would interpret runs ``fwd`` and, at backward, ``bwd_remat`` instead of ``fwd_vjp`` and
``bwd``: both are pure functions of arrays, traced once per shape pattern
(``torchlike._shape_poly``), where a trace of ``jax.vjp`` costs four times the forward's and
is made per shape (``TORCHLIKE_REMAT=0``: the forward-with-VJP from the first call). Fused
eager records ``fwd`` and ``bwd_remat`` at every call (``TORCHLIKE_FUSED_REMAT=0``: as strict
eager): a segment's program holds the forward and the recomputing backward, and XLA shares
their common work, while a new shape (a batch size, a context length) traces nothing its
pattern has not. Eager ``jax.vjp`` never runs on this path.
"""
from __future__ import annotations

import threading
import weakref

import jax
import jax.numpy as jnp
import numpy as _np

from . import _caches
from . import _fused
from ._fused import Deferred as _Deferred
from . import _shape_poly
from . import _tiers
from . import _trace_store
from ._tiers import Tiered
from . import _dtype as D
from .autograd import engine as _engine
from .autograd import fused_backward as _fused_backward
from .autograd import _apply_hooks
from .autograd import grad_mode as _gm
from .autograd.graph import InvalidView as _InvalidView, Node, node_class

__all__ = ["Op", "defop", "apply", "clear_caches", "trace_counts", "trace_total", "OPS"]

OPS: dict = {}
_Tensor = None          # set by torchlike._tensor (the one late-bound cycle)
_with_class = None      # set by torchlike._tensor: (fresh tensor, Tensor subclass) -> instance
_state = _gm._state
_lock = threading.RLock()   # guards OPS and every op's cache (read-modify-write under threads)
_BY_VJP_IDENT: "weakref.WeakValueDictionary" = weakref.WeakValueDictionary()
# the engine builds Tensors (for hooks, .grad) without importing them: it is given the class
_engine.bind(lambda: _Tensor)
_INEXACT = (D._FLOAT, D._COMPLEX)


_INEXACT_OF: dict = {}       # dtype -> is it a float or complex dtype (jnp.issubdtype costs ~1 us)


def _is_inexact(np_dtype):
    r = _INEXACT_OF.get(np_dtype)
    if r is None:
        r = _INEXACT_OF[np_dtype] = bool(jnp.issubdtype(np_dtype, jnp.inexact))
    return r


_HALF = frozenset({jnp.dtype(jnp.bfloat16), jnp.dtype(jnp.float16)})
_FLOAT32 = jnp.dtype(jnp.float32)


def _number_operand(x):
    """Is operand ``x`` (at trace time) a Python number or a 0-dim tensor of another dtype than
    a half one: what torch's kernels read as a number (``Op``'s ``opmath``)?"""
    if not hasattr(x, "dtype"):
        return True
    return not jnp.shape(x) and x.dtype not in _HALF


def _cast(x, dtype):
    """Promote one operand to the op's result dtype; random keys pass through untouched."""
    if not hasattr(x, "dtype"):
        return jnp.asarray(x, dtype)
    if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        return x
    return x.astype(dtype)


# ------------------------------------------------------------------ the executable budget
#
# jax.jit keeps one compiled program per input shape for ever; a workload whose shapes keep
# changing (generation, variable batches) would grow without bound. The registry counts the
# programs its entries compiled and, past ``MAX_PROGRAMS`` (``$TORCHLIKE_MAX_PROGRAMS``,
# default 2048), drops the programs of the least recently used entries (they recompile if used
# again). ``apply`` stamps each entry it runs with the compile epoch: one attribute write.

import os as _os

MAX_PROGRAMS = int(_os.environ.get("TORCHLIKE_MAX_PROGRAMS", "2048"))
_budget = {"programs": 0, "epoch": 0, "evictions": 0}
_LIVE: list = []         # entries holding compiled programs


def _compiled_one(entry):
    """Bookkeeping for one new program of ``entry`` (called while it traces)."""
    with _lock:
        if entry.programs == 0:
            _LIVE.append(entry)
        entry.programs += 1
        _budget["programs"] += 1
        _budget["epoch"] += 1
        entry.stamp = _budget["epoch"]
        if _budget["programs"] > MAX_PROGRAMS:
            _evict(entry)


def _evict(keep):
    """Drop least recently used programs until the total is 3/4 of the budget."""
    _LIVE.sort(key=lambda e: e.stamp)
    target = MAX_PROGRAMS * 3 // 4
    kept = []
    for e in _LIVE:
        if _budget["programs"] > target and e is not keep:
            e.drop_programs()
            _budget["evictions"] += 1
        else:
            kept.append(e)
    _LIVE[:] = kept


def _over_budget(entry):
    """After a call: still over the bound with only ``entry`` left to drop (one op that keeps
    meeting new shapes): drop its programs too."""
    with _lock:
        if _budget["programs"] > MAX_PROGRAMS:
            _evict(None)


def program_budget():
    """``{"programs", "max", "evictions"}``: the registry's compiled programs now and its bound."""
    return {"programs": _budget["programs"], "max": MAX_PROGRAMS,
            "evictions": _budget["evictions"]}


class Pullback:
    """An op's VJP residuals, named: ``Pullback(name, residuals)(cotangents)`` is the op's
    backward. ``name`` (the op's stable identity and its input avals, plain text) is the pytree
    node's aux data, so a backward's signature is the same in every process and the traces of a
    forward-with-VJP and of its backward can be kept on disk (torchlike._trace_store). The
    pullback structure the residuals fill is the first trace's in this process; a forward
    loaded from disk has none until its backward needs one, which then traces the forward
    abstractly, once."""

    __slots__ = ("name", "residuals", "late")

    def __init__(self, name, residuals):
        self.name, self.residuals = name, residuals
        self.late = False       # made by a compiled forward whose first calls ran alone

    def __call__(self, cots):
        tree = _PULLBACK_TREES.get(self.name)
        if tree is None:
            tree = _pullback_tree(self.name)
        return jax.tree_util.tree_unflatten(tree, self.residuals)(cots)

    def __repr__(self):
        return f"<pullback of {len(self.residuals)} residuals>"


_PULLBACK_TREES: dict = {}      # Pullback name -> the jax pullback structure its residuals fill


def _pullback_tree(name):
    """The pullback structure of ``name``: its op's forward-with-VJP traced on its avals."""
    c = _BY_VJP_IDENT.get(name[0])
    if c is None:
        raise RuntimeError("torchlike: the op of a forward loaded from the trace store is gone; "
                           "this is a torchlike defect")
    specs = [jax.ShapeDtypeStruct(shape, jnp.dtype(dt), weak_type=weak)
             for shape, dt, weak in name[1]]
    raw = c._fwd_vjp_raw
    # (records the structure as a side effect: a new function each time, so that jax's trace
    # cache cannot answer without running it)
    jax.make_jaxpr(_tiers.inlined(raw))(*specs)
    return _PULLBACK_TREES[name]


jax.tree_util.register_pytree_node(
    Pullback, lambda p: (p.residuals, p.name), lambda name, res: Pullback(name, list(res)))
_trace_store.register_node("pullback", Pullback)


REMAT = _os.environ.get("TORCHLIKE_REMAT", "1") != "0"
FUSED_REMAT = _os.environ.get("TORCHLIKE_FUSED_REMAT", "1") != "0"


def _split(out):
    """An op's output(s) as (the inexact ones, the others), each in the op's order."""
    if out.__class__ is not tuple:
        return ((out,), ()) if _is_inexact(out.dtype) else ((), (out,))
    outs = out
    return (tuple(o for o in outs if _is_inexact(o.dtype)),
            tuple(o for o in outs if not _is_inexact(o.dtype)))


def sum_to(g, shape):
    """``g`` summed over the dimensions an operand of ``shape`` was broadcast along (the
    leading ones and its size-1 ones): the operand's share of a broadcast op's cotangent."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape)
                                      if n == 1 and g.shape[i + lead] != 1)
    return jnp.sum(g, axis=axes, keepdims=True).reshape(shape) if axes else g.reshape(shape)


def _cotangent_like(g, x):
    """A declared backward's gradient ``g`` as ``jax.vjp`` gives it for input ``x``: summed over
    the dimensions ``x`` was broadcast along, in ``x``'s dtype."""
    g = sum_to(g, jnp.shape(x))
    return g if g.dtype == x.dtype else g.astype(x.dtype)


class Remat:
    """A node's residuals where its forward ran alone (``_Compiled.remat``): the input
    arrays, from which the backward recomputes the forward and its VJP."""

    __slots__ = ("arrays",)

    def __init__(self, arrays):
        self.arrays = tuple(arrays)

    def __repr__(self):
        return f"<recomputed from {len(self.arrays)} inputs>"


_fused_backward.residual_classes[:] = [Remat, Pullback]


class _Released(Remat):
    """The residuals of a node whose backward needs its floating inputs' shapes only, once that
    backward ran without ``retain_graph`` (torch saves nothing for such ops: their inputs are
    let go, as torch lets them go). ``arrays`` holds ``_Meta`` in place of those inputs; a
    later backward through the node (legal: nothing was freed) recomputes at zeros."""

    __slots__ = ()

    def concrete(self):
        return tuple(jnp.zeros(a.shape, a.dtype) if a.__class__ is _Meta else a
                     for a in self.arrays)


class _Meta:
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype


class _Compiled:
    """The jitted functions of one op for one static configuration."""

    __slots__ = ("fwd", "fwd_vjp", "bwd", "bwd_remat", "name", "saves", "saved_at", "op",
                 "static", "cast", "needs", "node_cls", "remat_fused",
                 "_vjp_op", "_fwd_vjp_raw", "programs", "stamp", "_reads", "__weakref__")

    def drop_programs(self):
        for f in (self.fwd, self.fwd_vjp, self.bwd, self.bwd_remat):
            f.clear_cache()
        with _lock:
            _budget["programs"] -= self.programs
            self.programs = 0

    def __init__(self, op, static, cast, needs):
        cast = None if cast is None else cast.np
        self.op, self.static, self.cast, self.needs = op, static, cast, needs
        self.programs = 0
        self._reads = {}        # backward signature -> the inputs its backward reads
        self.stamp = 0
        fn = op.fn
        kw = dict(static)
        counts = op.trace_counts
        pullbacks = {}          # input avals -> the pullback structure of their first trace
        # what fwd_vjp computes, as text stable across processes (or None): its residuals then
        # travel in a Pullback named by it, so its traces and the backward's can be kept on disk
        # (made when first needed: a configuration run without grad never needs it, and a new
        # static shape makes a new configuration)
        def make_vjp_ident():
            i = _tiers.stable("op-vjp", op.name, fn, kw, cast, needs, op.vjp)
            if i is not None:
                _BY_VJP_IDENT[i] = self
            return i
        vjp_ident = _tiers.once(make_vjp_ident)

        # (an opmath op with a half-precision result and a number operand computes in float32
        # and rounds once: ``Op``)
        opmath = op.opmath and cast in _HALF

        def compute_dtype(xs):
            if opmath and any(_number_operand(x) for x in xs):
                return _FLOAT32
            return cast

        def bound(kw):
            def f(*xs):
                if cast is None:
                    return fn(*xs, **kw)
                dt = compute_dtype(xs)
                out = fn(*(_cast(x, dt) for x in xs), **kw)
                return out if dt is cast else out.astype(cast)
            return f

        f = bound(kw)

        diff_pos = [i for i, n in enumerate(needs) if n]

        def of_diff(xs):
            """``f`` at ``xs`` as a function of the inputs that need grad: (the inexact outputs,
            the others)."""
            def g(*d):
                full = list(xs)
                for i, v in zip(diff_pos, d):
                    full[i] = v
                return _split(f(*full))
            return g

        def fwd_vjp(*xs):
            diff, vjp, rest = jax.vjp(of_diff(xs), *[xs[i] for i in diff_pos], has_aux=True)
            # Every trace of this function (the interpreter's, jit's) makes its own pullback
            # closure, equivalent to the others but not equal, and the backward is keyed by it.
            # The first trace's closure is kept per input signature and carries the residuals of
            # every later trace: one backward per signature, whichever tier made the residuals.
            leaves, tree = jax.tree_util.tree_flatten(vjp)
            sig = tuple(jax.typeof(x) for x in xs)
            avals = tuple(jax.typeof(x) for x in leaves)
            first, first_avals = pullbacks.setdefault(sig, (tree, avals))
            if first_avals != avals:
                # (a trace under another transformation, a double backward's, may keep other
                # residuals: it keeps its own pullback)
                return diff, rest, vjp
            ident = vjp_ident()
            if ident is not None:
                name = (ident, tuple((tuple(a.shape), str(a.dtype), bool(a.weak_type))
                                         for a in sig))
                _PULLBACK_TREES.setdefault(name, first)
                return diff, rest, Pullback(name, leaves)
            if first is not tree:
                vjp = jax.tree_util.tree_unflatten(first, leaves)
            return diff, rest, vjp

        def bwd(vjp, cots):
            return vjp(cots)

        n_in = len(needs)

        rule = op.vjp

        def bwd_remat(*a):
            # the backward of a forward that ran alone (``Remat``): the VJP at its inputs
            xs, cots = a[:n_in], a[n_in:]
            if rule is not None:
                if cast is None:
                    cx = xs
                else:
                    dt = compute_dtype(xs)
                    cx = tuple(_cast(x, dt) for x in xs)
                got = rule(tuple(cots), cx, needs, **kw)
                if got is not NotImplemented:
                    return tuple(_cotangent_like(g, xs[i]) for g, i in zip(got, diff_pos))
            g = of_diff(xs)
            return jax.vjp(lambda *d: g(*d)[0], *[xs[i] for i in diff_pos])[1](tuple(cots))

        def counted(kind, raw):
            def traced(*xs):
                with _lock:
                    counts[kind] += 1
                _compiled_one(self)
                return raw(*xs)
            return jax.jit(_tiers.inlined(traced))

        # each a Tiered: interpreted for a signature's first calls, then jax.jit (torchlike._tiers)
        poly = op.poly
        shape = kw.get(op.shape_arg) if op.shape_arg is not None and poly else None
        if shape.__class__ is tuple:
            # the op's forwards at other static shapes share its symbolic traces
            fam = (tuple(kv for kv in static if kv[0] != op.shape_arg), cast)
            with _lock:
                table, ident = op.families.get(fam) or op.families.setdefault(fam, (
                    {}, _tiers.once(lambda: _tiers.stable("op-family", op.name, fn, fam,
                                                    op.shape_arg))))
            poly = _shape_poly.Family(table, shape, lambda s: bound({**kw, op.shape_arg: s}),
                                      ident)

        def prefixed(prefix):
            def ident():
                i = vjp_ident()
                return None if i is None else prefix + i
            return ident
        # (identities are functions, made on first use: see Tiered)
        pure = op.poly is not False         # (an impure function is never traced behind)
        self.fwd = Tiered(f, lambda: counted("fwd", f), op.name, poly=poly,
                          ident=lambda: _tiers.stable("op", op.name, fn, kw, cast), pure=pure)
        self.fwd.selects = op.view is not None
        self._fwd_vjp_raw = fwd_vjp
        self.fwd_vjp = Tiered(fwd_vjp, lambda: counted("fwd_vjp", fwd_vjp), op.name,
                              _finish_vjp, ident=vjp_ident, pure=pure)
        self.bwd = Tiered(bwd, lambda: counted("bwd", bwd), op.name, ident=prefixed("bwd|"),
                          pure=pure)
        self.bwd_remat = Tiered(bwd_remat, lambda: counted("bwd", bwd_remat), op.name,
                                poly=op.poly, ident=prefixed("bwd-remat|"), pure=pure)
        self.name = op.grad_name(kw) if callable(op.grad_name) else op.grad_name
        self.saves = op.saves(kw) if callable(op.saves) else op.saves
        # the input positions whose tensors the node saves (None: every tensor input)
        self.saved_at = _gm.saved_positions(self.saves, needs)
        self._vjp_op = None
        self.node_cls = node_class(self.name) if self.name else Node
        # (fused eager records the forward alone, the backward recomputing it)
        self.remat_fused = REMAT and FUSED_REMAT and bool(op.poly)

    def forward_with_vjp(self, arrays, now=False):
        """``(diff, rest, vjp)``. Where the tier would interpret the forward-with-VJP (its first
        calls at a signature), the forward runs alone and ``vjp`` is a ``Remat``: the forward
        and the recomputing backward are pure functions of arrays, traced once per shape
        pattern (torchlike._shape_poly), where a forward-with-VJP is traced per shape
        (``jax.vjp``'s trace costs four times the forward's). After those calls the compiled
        forward-with-VJP runs, and its Pullback is marked ``late`` (its backward's first calls
        were the recomputing backward's). ``now``: in fused eager, a call that runs at once
        (``_learn_now``), past the recording's attempt."""
        if not (REMAT and self.op.poly):
            return self.fwd_vjp(*arrays)
        if _fused.ACTIVE and FUSED_REMAT:
            return (*_split(self.fwd.now(*arrays) if now else self.fwd(*arrays)), Remat(arrays))
        got = self.fwd_vjp.call_claiming(*arrays)
        if got is not _tiers.CLAIMED:
            if got[2].__class__ is Pullback:
                got[2].late = True
            return got
        with _tiers.claimed():
            out = self.fwd(*arrays)
        return (*_split(out), Remat(arrays))

    def backward(self, vjp, cots):
        """The node's backward on arrays: the cached jitted VJP (or, after ``remat``, the
        forward recomputed with its VJP)."""
        if vjp.__class__ is Remat:
            return self.bwd_remat(*vjp.arrays, *cots)
        if vjp.__class__ is _Released:
            return self.bwd_remat(*vjp.concrete(), *cots)
        if vjp.__class__ is Pullback and vjp.late:
            return self.bwd.call_late(vjp, cots)
        return self.bwd(vjp, cots)

    def release(self, vjp):
        """The residuals a node of this entry keeps once its backward ran without
        ``retain_graph``, where torch saved nothing (an op that saves nothing: a view, a sum, an
        add; or one whose ``saves`` positions no gradient needed: addmm with only its bias
        needing grad; the node calls this for those only). With a declared backward, which then
        reads its floating inputs' shapes only: ``_Released`` in place of a recomputing
        backward's inputs; else None (they stay)."""
        if vjp.__class__ is not Remat or self.op.vjp is None:
            return None
        kept = []
        for a in vjp.arrays:
            c = a.__class__
            if c is _Deferred or c is _tiers._ArrayImpl:
                d = a.dtype
                if d.kind in "fc" or d.kind == "V":     # (V: bfloat16 and the float8s)
                    a = _Meta(a.shape, d)
            kept.append(a)
        return _Released(kept)

    def stand_ins(self, vjp):
        """A released node's inputs for a backward recorded as an op (``create_graph``)."""
        T = _Tensor
        return tuple(T._make(a) if a.__class__ in (_Deferred, _tiers._ArrayImpl) else a
                     for a in vjp.concrete())

    def backward_graph(self, inputs, cots):
        """The node's backward on Tensors, recorded as an op (``create_graph=True``). An input
        the backward does not read (a linear layer's bias, for the gradients of its input and
        weight) goes in without its history, as torch's backward graph does not reach it: its
        gradient through these gradients stays None instead of becoming a zero."""
        reads = self._backward_reads(inputs, cots)
        if reads is not None:
            T = _Tensor
            inputs = tuple(x if r or not isinstance(x, T) or not x._requires_grad
                           else x.detach() for x, r in zip(inputs, reads))
        out = apply(self.vjp_op(), *inputs, *cots, n_in=len(inputs), n_cot=len(cots))
        return out if isinstance(out, tuple) else (out,)

    def _backward_reads(self, inputs, cots):
        """Per input, whether the backward's outputs depend on it (jax's dead-code analysis of
        the backward's trace, once per signature), or None where that is not known."""
        T = _Tensor
        args = (*inputs, *cots)
        key = tuple((a._d.shape, a._d.dtype) if isinstance(a, T) else a.__class__ for a in args)
        reads = self._reads.get(key, False)
        if reads is False:
            fn, n_in, n_cot = self.vjp_op().fn, len(inputs), len(cots)
            try:
                # (jax's internal dead-code elimination: which inputs the outputs depend on)
                from jax._src.interpreters.partial_eval import dce_jaxpr
                closed = jax.make_jaxpr(lambda *a: fn(*a, n_in=n_in, n_cot=n_cot))(
                    *[_spec_of(a._d) if isinstance(a, T) else a for a in args])
                _j, used = dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars),
                                     instantiate=False)
                reads = tuple(used[:n_in])
            except Exception:  # noqa: BLE001  (unknown: every input keeps its history)
                reads = None
            self._reads[key] = reads
        return reads

    def vjp_op(self):
        """The backward of this entry as an op of its own (used by ``create_graph=True``).

        Its inputs are the forward inputs followed by the cotangents of the differentiable
        outputs; its outputs are the gradients of the inputs that need grad. Being an op, it is
        recorded on the tape, so gradients of gradients work.
        """
        if self._vjp_op is None:
            base = self

            def backward_fn(*args, n_in, n_cot):
                xs, cots = args[:n_in], args[n_in:]
                _diff, _rest, vjp = base._fwd_vjp_raw(*xs)
                grads = vjp(tuple(cots))
                return tuple(grads) if len(grads) != 1 else grads[0]

            op = Op(self.name + "Backward", backward_fn, promote=None,
                    grad_name=self.name + "Backward")
            with _lock:
                if self._vjp_op is None:
                    self._vjp_op = op
        return self._vjp_op


class Op:
    """One op: a pure jax function ``fn(*arrays, **static)`` plus how to promote and name it.

    promote: ``None`` (inputs pass as they are), ``"common"`` (cast every input to torch's
    result type), ``"float"`` (the same, but integer and bool results become the default float).
    grad_name: torch's ``grad_fn`` class name, or a function of the static kwargs giving it.
    opmath: for a float16/bfloat16 result with a number among the operands (a Python number,
    a 0-dim tensor of another dtype), the operands converted to float32 from their own dtypes
    (the number not rounded to the result's dtype first) and the result rounded once, as
    torch's CPU kernels compute with a number (mul, div).
    saves: False for ops whose torch backward saves no tensors (their graph may be run twice).
    differentiable: False for ops with no gradient (comparisons, argmax, ...).
    view: None, or the op's view rule (``torchlike._storage.view_rule(...)``): an object whose
    ``mark(entry, args, arrays, result, static)`` makes each call's outputs aliases of its first
    input. The registry only calls it.
    shape_arg: see ``defop``. poly: False for an op whose function is not a pure function of its
    arrays and static arguments (``call_jax`` records its output structure per shape, a
    compiled function's node reads the state of its call): its forward is traced at every
    shape, and its backward uses the residuals of a forward-with-VJP, never a recomputation.
    """

    __slots__ = ("name", "fn", "promote", "grad_name", "saves", "differentiable", "cache",
                 "trace_counts", "view", "shape_arg", "families", "poly", "vjp", "opmath")

    def __init__(self, name, fn, *, promote=None, grad_name=None, saves=True,
                 differentiable=True, view=None, shape_arg=None, poly=True, vjp=None,
                 opmath=False):
        self.name = name
        self.opmath = opmath
        self.vjp = vjp          # a declared backward (see ``defop``), or None: jax.vjp's
        self.shape_arg = shape_arg
        self.poly = poly        # a pure function: traced per shape pattern, recomputable
        # shape_arg's op: the other statics -> (a shared shape_poly table, its identity)
        self.families = {}
        self.fn = fn
        self.promote = promote
        self.grad_name = grad_name or (name.capitalize() + "Backward0")
        self.saves = saves
        self.differentiable = differentiable
        self.view = _DeferredView(view) if view is True or (
            view is not None and not hasattr(view, "mark")) else view
        self.cache = {}
        self.trace_counts = {"fwd": 0, "fwd_vjp": 0, "bwd": 0}

    def compiled(self, static, cast, needs):
        key = (static, cast, needs)
        c = self.cache.get(key)
        if c is None:
            with _lock:
                c = self.cache.get(key)
                if c is None:
                    c = self.cache[key] = _Compiled(self, static, cast, needs)
        return c

    def __repr__(self):
        return f"<op {self.name}>"


def defop(name, *, promote=None, grad_name=None, saves=True, differentiable=True, view=None,
          shape_arg=None, vjp=None, opmath=False):
    """Decorator: declare ``fn`` as the op ``name`` in the registry and return the Op.

    saves: what torch's backward of this op keeps (checked against in-place writes at
    backward): True (its inputs), "others" (an input only when another input needs grad, as
    for mul and matmul), a dict ``{position: positions}`` (an input only when one of those
    inputs needs grad: addmm's ``{1: (2,), 2: (1,)}``), "output", "both", False (nothing), or
    a function of the static kwargs giving one of those (getitem saves its index tensors
    only). An op that saves something is freed after a backward without ``retain_graph`` (a
    second one raises torch's error); one that saves nothing may run backward again.
    view: the op's view rule (``torchlike._storage.view_rule(overlap=...)``) if its outputs
    alias its first input; ``True`` or a predicate of the static kwargs for the storage
    module's default rule.
    shape_arg: the static keyword that is the result's shape (``view``'s ``shape``): the op's
    configurations that differ only in it share their shape-polymorphic traces
    (``torchlike._shape_poly.Family``).
    vjp: the op's backward written out, ``vjp(cots, xs, needs, **static)`` -> the gradients of
    the inputs that need grad, in order (each summed to its input's shape and cast to its dtype
    by the registry), or ``NotImplemented`` for a configuration it does not cover (then
    ``jax.vjp`` of the function): what a first call's backward traces (``bwd_remat``), several
    times cheaper to trace than ``jax.vjp``'s linearize-and-transpose. ``xs`` are the inputs
    after the op's promotion, ``cots`` the cotangents of its float outputs (jax's convention:
    rules are declared for real dtypes).
    """
    def deco(fn):
        op = Op(name, fn, promote=promote, grad_name=grad_name, saves=saves,
                differentiable=differentiable, view=view, shape_arg=shape_arg, vjp=vjp,
                opmath=opmath)
        with _lock:
            if name in OPS:
                raise ValueError(f"op {name!r} is already declared (in "
                                 f"{OPS[name].fn.__module__}); each op is declared once: pick "
                                 f"another name")
            OPS[name] = op
        return op
    return deco


class _DeferredView:
    """``view=True`` / ``view=predicate``: the storage module's default rule, made on first use.

    ``default_view_rule`` is installed by ``torchlike._storage`` when it is imported (the
    registry does not import storage: storage builds on the registry).
    """

    __slots__ = ("when",)

    def __init__(self, when):
        self.when = None if when is True else when

    def mark(self, entry, args, arrays, result, static):
        if self.when is None or self.when(static):
            default_view_rule().mark(entry, args, arrays, result, static)


default_view_rule = None    # set by torchlike._storage: () -> its default view rule


def clear_caches():
    """Drop every jitted function: each op's and every cache in ``torchlike._caches``."""
    with _lock:
        for e in _LIVE:
            e.drop_programs()
        _LIVE.clear()
        _RECIPES.clear()
        for op in list(OPS.values()):
            op.cache.clear()
            op.families.clear()
            for k in op.trace_counts:
                op.trace_counts[k] = 0
    _caches.clear_all()


def trace_counts(name=None):
    """How many times op ``name`` traced its forward, forward-with-VJP and backward.

    ``name`` may also be a cache registered in ``torchlike._caches`` (``"engine"``,
    ``"storage"``, ``"optim"``, ...). Without a name: ``{name: counts}`` for every op that has
    traced and every registered cache.
    """
    if name is None:
        with _lock:
            out = {n: dict(op.trace_counts) for n, op in OPS.items()
                   if any(op.trace_counts.values())}
        out.update(_caches.counts_all())
        return out
    op = OPS.get(name)
    if op is None and name in _caches.names():
        return _caches.counts_all()[name]
    return dict(OPS[name].trace_counts)


def trace_total():
    """Every op's and every registered cache's traces, summed: how many programs jax.jit has
    traced so far (tests pin it across steps)."""
    return sum(sum(v.values()) for v in trace_counts().values() if isinstance(v, dict))


# ------------------------------------------------------------------ promotion

_PY_SCALARS = (bool, int, float, complex)


def _as_number(a):
    """A numpy scalar operand as torch's argument parser reads it: a Python number of its kind
    (a floating one, and a bool_, as a float; an integer as an int), so it promotes as a Python
    number does (``int8_tensor * np.float32(0.5)`` is float32, not int8); anything else as it
    is."""
    if not isinstance(a, _np.generic):
        return a
    k = a.dtype.kind
    if k in "fb":
        return float(a)
    if k in "iu":
        return int(a)
    if k == "c":
        return complex(a)
    return a


_PROMOTED: dict = {}        # (promote, default dtype, operand kinds) -> result dtype
_PROMOTED_MAX = 4096


def _result_dtype(op, args):
    """torch's result dtype for ``args`` (a torchlike dtype); ``op.promote`` decides int->float.
    Cached by the operands' kinds: each tensor's dtype and whether it is 0-dim, each Python
    scalar's type (the default dtype, which a float scalar takes, is part of the key)."""
    T = _Tensor
    key = [op.promote, D._default[0]]
    for a in args:
        c = a.__class__
        if c is T or isinstance(a, T):
            d = a._d
            key.append((d.dtype, not d.shape))
        elif c in _PY_SCALARS or a is None:
            key.append(c)
        else:
            return _promoted(op, args)       # (anything else: not cached)
    return _promoted_cached(tuple(key), op, args)


def _promoted_cached(key, op, args):
    """``_promoted(op, args)``, cached by the operands' kinds ``key``."""
    r = _PROMOTED.get(key)
    if r is None:
        if len(_PROMOTED) >= _PROMOTED_MAX:
            _PROMOTED.clear()
        r = _PROMOTED[key] = _promoted(op, args)
    return r


def _promoted(op, args):
    T = _Tensor
    r = None
    simple = True
    for a in args:
        if isinstance(a, T):
            d = a._d
            if r is None:
                r = d.dtype
            elif d.dtype != r:
                simple = False
            if not d.ndim:
                simple = False
        elif a is not None:
            simple = False
    if simple and r is not None:
        # the common case: tensors of one dtype, all with dims
        r = D.from_jax(r)
    else:
        dims, zeros, scalars = [], [], []
        for a in args:
            if isinstance(a, T):
                (dims if a._d.ndim else zeros).append(a.dtype)
            elif isinstance(a, _PY_SCALARS):
                scalars.append(D.scalar_dtype(a))
        r = D.result_type_of(dims, zeros, scalars)
    if op.promote == "float" and r.category < D._FLOAT:
        r = D.get_default_dtype()
    return r


# ------------------------------------------------------------------ apply

def apply(op, *args, **static):
    """Run ``op`` on Tensors / Python scalars ``args``; record a tape node when grad is needed.

    Returns a Tensor, or a tuple of Tensors for multi-output ops.
    """
    T = _Tensor
    st = _state
    recipe = None
    now = False
    if _fused.ACTIVE and _apply_hooks.current is None and st.autocast is None \
            and not NODE_TRACE[0]:
        out = _record_known(op, args, static, st)
        if out.__class__ is tuple:
            recipe = out                # (no recipe yet: this call's recording keeps one)
        elif out is _NOW:
            now = True                  # (a call of concrete values that runs at once)
        elif out is not None:
            return out
    if _apply_hooks.current is not None:     # forward AD, saved-tensor hooks (autograd/)
        out = _apply_hooks.current(op, args, static)
        if out is not NotImplemented:
            return out
    if st.autocast is not None:
        args = st.autocast(op, args, static)
    # One pass over the operands: their arrays, which need grad, and the key of the result
    # dtype (``_result_dtype``'s, for ``op.promote``: each tensor's dtype and whether it is
    # 0-dim, each Python scalar's type)
    promote = op.promote
    kinds = [promote, D._default[0]] if promote is not None else None
    arrays = []
    needs = []
    grad_on = st.grad_enabled and op.differentiable
    any_need = False
    inference = False
    big = False
    sub = None
    for a in args:
        c = a.__class__
        if c is T or isinstance(a, T):
            if c is not T and sub is None and c._results_keep_class:
                sub = c
            d = a._d
            if d.__class__ is _Deferred and (d.value is not None or not _fused.ACTIVE):
                d = a._data         # resolved (fused eager: a pending one stays deferred)
            if kinds:
                kinds.append((d.dtype, not d.shape))
            n = grad_on and a._requires_grad
            if not n and NODE_TRACE[0] and getattr(_node_local, "on", False) is True:
                d = _untracked(a._data if d.__class__ is _Deferred else d)
            arrays.append(d)
            needs.append(n)
            any_need = any_need or n
            inference = inference or a._is_inference
        else:
            if c not in _PY_SCALARS and a is not None and isinstance(a, _np.generic):
                if a.dtype.kind not in "biufc":     # (a string, bytes, date: no number)
                    raise TypeError(f"{op.name}(): argument must be Tensor, not "
                                    f"numpy.{type(a).__name__}")
                return apply(op, *map(_as_number, args), **static)
            if kinds:
                if c in _PY_SCALARS or a is None:
                    kinds.append(c)
                else:
                    kinds = False           # (another operand: not cached)
            if c is int and not -_I64 <= a < _I64:
                big = True
            arrays.append(a)
            needs.append(False)
    if kinds is None:
        cast = None
    elif kinds is False:
        cast = _promoted(op, args)
    else:
        kinds = tuple(kinds)
        cast = _PROMOTED.get(kinds)
        if cast is None:
            cast = _promoted_cached(kinds, op, args)
    if big:
        arrays = [_big_int(a, cast, args) if a.__class__ is int and not -_I64 <= a < _I64
                  else a for a in arrays]
    skey = tuple(sorted(static.items())) if static else ()
    if not any_need:
        c = op.compiled(skey, cast, ())
        c.stamp = _budget["epoch"]
        try:
            out = c.fwd.now(*arrays) if now else c.fwd(*arrays)
        except (TypeError, ValueError) as e:
            _translate(e, args)
        if _budget["programs"] > MAX_PROGRAMS:
            _over_budget(c)
        if isinstance(out, tuple):
            outs = tuple(T._make(o) for o in out)
        else:
            if recipe is not None:
                if out.__class__ is _Deferred:
                    _learn(recipe, c, c.fwd, arrays)
                elif out.__class__ is _ArrayImpl:
                    _learn_now(recipe)
            outs = T._make(out)
        if op.view is not None:
            op.view.mark(c, args, arrays, outs, static)
        return outs if sub is None else _of_class(outs, sub)
    needs = tuple(needs)
    c = op.compiled(skey, cast, needs)
    if inference:
        _gm.check_inference_saved(args, needs, c.saves)
    c.stamp = _budget["epoch"]
    try:
        out = None
        if _fused.ACTIVE and c.remat_fused and not now:
            # (fused eager: the forward recorded, as forward_with_vjp would, without its calls)
            arrays = tuple(arrays)
            out = _fused.record(c.fwd, arrays)
            if out is None and recipe is not None:
                _learn_now(recipe)
        if out is None:
            diff, rest, vjp = (c.forward_with_vjp(arrays, True) if now
                               else c.forward_with_vjp(arrays))
        else:
            if out.__class__ is _Deferred:
                inexact = _INEXACT_OF.get(out.dtype)
                if inexact is None:
                    inexact = _is_inexact(out.dtype)
                diff, rest = ((out,), ()) if inexact else ((), (out,))
            else:
                diff, rest = _split(out)
            vjp = _new(Remat)
            vjp.arrays = arrays
            if recipe is not None and diff and out.__class__ is _Deferred:
                _learn(recipe, c, c.fwd, arrays)
    except (TypeError, ValueError) as e:
        _translate(e, args)
    if _budget["programs"] > MAX_PROGRAMS:
        _over_budget(c)
    edges = _edges(args, needs)
    node = _new(c.node_cls)
    if len(diff) == 1:
        d0 = diff[0]
        node.__init__(c.name, edges, c, vjp, args, ((d0.shape, d0.dtype),), c.saves)
        outs = [T._make(d0, node, 0)]
    else:
        node.__init__(c.name, edges, c, vjp, args,
                      tuple((o.shape, o.dtype) for o in diff), c.saves)
        outs = [T._make(o, node, i) for i, o in enumerate(diff)]
    if rest:
        # Non-differentiable outputs (integer indices, bools) follow the differentiable ones in
        # the op's own output order; ops with mixed outputs put float outputs first.
        outs.extend(T._make(o) for o in rest)
    if c.saves:
        node._saved_versions = _saved_versions(c, args, outs, len(diff), st)
    result = outs[0] if len(outs) == 1 else tuple(outs)
    if op.view is not None:
        op.view.mark(c, args, arrays, result, static)
    return result if sub is None else _of_class(result, sub)


# ------------------------------------------------------------------ fused eager's known calls
#
# In fused eager a call whose operands are this segment's pending values, concrete
# single-device arrays and Python numbers is recorded from a recipe learned at its first
# recording. Its key (the op, its statics, the default dtype, and each operand's (shape, dtype,
# weak_type) and whether it needs grad, or a number's type; grad mode acts through the needs)
# decides everything ``apply`` works out per call: the result dtype, the op's compiled entry,
# the output's shape. The recording is then one pass over the operands, making what the
# general path's ``_fused.record`` makes (the same segment calls, the same key).

_RECIPES: dict = {}         # recipe key -> (compiled entry, its fused function, output entry)
_RECIPES_MAX = 4096


def _learn(key, c, tiered, arrays):
    """Keep the recipe of a call the general path has just recorded (its output is the
    segment's newest)."""
    shapes = tiered.shapes
    ent = shapes.get(_fused.signature(arrays)) if shapes is not None else None
    if ent is None or not ent[3]:   # (one output only)
        return
    if len(_RECIPES) >= _RECIPES_MAX:
        _RECIPES.clear()
    out_tree, out_keys, nbytes, _single, tree = ent
    # what the node keeps the versions of (``_saved_versions``): the key fixes which operands
    # are Tensors (a recipe's operands are Tensors and Python numbers only)
    tensors = [i for i, x in enumerate(arrays) if x.__class__ not in _PY_SCALARS]
    at = c.saved_at
    plan = tuple((i, None) for i in tensors) if at is None else \
        tuple((i, i) for i in at if i in tensors)
    # (what the recording reads, flat: the entry's attributes read once, here)
    _RECIPES[key] = (c, tiered, out_keys[0], nbytes, tree, out_tree, c.needs, c.node_cls,
                     c.name, c.saves, c.op.view, plan, c.saves == _OUTPUT or c.saves == _BOTH)


_NOW = object()             # the recipe of a call that runs at once (``_learn_now``)
_PLAIN_TENSORS: set = set()     # Tensor subclasses whose results are Tensors (Parameter):
                                # recorded as Tensors are


def _learn_now(key):
    """Keep that the call of recipe key ``key`` runs at once. A call whose operands are
    concrete single-device arrays and numbers (as every key's are, pending values aside) runs
    at once where its key alone says so: ``_fused._scalar_call`` (arrays of at most one element)
    and ``_fused._one_element`` (a view op selecting at most one element), both of shapes and
    concreteness, which the key holds. Its next calls skip the recording's attempt."""
    if len(_RECIPES) >= _RECIPES_MAX:
        _RECIPES.clear()
    _RECIPES[key] = _NOW


def _record_known(op, args, static, st):
    """Record a call from its recipe in one pass over its operands (which makes the recipe's
    key as it goes): the Tensor ``apply`` would return; or, where no recipe is known yet, the
    call's key (the general path records the call and keeps its recipe, ``_learn``); or None
    where no recipe records the call (a Tensor subclass whose results keep its class, an
    inference tensor where grad is on, a value of a segment that failed, a host or sharded
    array, a big integer, any other operand). A call no recipe records leaves nothing in the
    segment.

    In a segment that follows a trail (``_fused._Segment``), a call that is the trail's next
    is recorded from the trail's recipe: the same op, default dtype and statics, each operand
    the same part of the key (a pending value from the trail's slot, with the same need of
    grad; the trail's external input, or a new one of the same key; a number of the same
    type), which the pass checks instead of making the key."""
    grad_on = st.grad_enabled and op.differentiable
    T = _Tensor
    F = _fused
    with F._lock:
        seg = F._seg
        tr = seg.follow
        r = None
        if tr is not None:
            key, r, want = tr.exp[seg.pos]
            if key is None:
                # (the trail's next call is one ``_fused.record`` made: a call of an op with
                # no recipe, which the general path records, checked against the trail there)
                tr = r = None
            elif key[0] is not op or key[1] is not D._default[0] or len(want) != len(args) \
                    or len(key) != len(args) + (3 if static else 2):
                r = None
            else:
                ext, ids, avals = seg.ext, seg.ext_ids, seg.ext_avals
                n_ext = len(ext)
                added = []
                arrays = []
                device = None
                ok = False
                for i, (a, w) in enumerate(zip(args, want), 2):
                    cl = a.__class__
                    if cl is T or cl in _PLAIN_TENSORS:
                        if a._is_inference and grad_on:
                            break
                        x = a._d
                        if x.__class__ is _Deferred:
                            if x.value is None:
                                if x.slot != w or x.seg is not seg or \
                                        key[i][1] != (grad_on and a._requires_grad):
                                    break
                                if device is None:
                                    device = x.device
                                arrays.append(x)
                                continue
                            x = x.value
                        p = key[i]
                        if w >= 0 or p.__class__ is not tuple or \
                                p[1] != (grad_on and a._requires_grad):
                            break       # (the trail's operand here: a pending one, a number)
                    elif cl is float and key[i] is float:
                        x = a
                    elif key[i] is cl and (cl is bool or cl is int and -_I64 <= a < _I64) \
                            and ~w == len(ext):
                        ext.append(a)
                        avals.append(cl)
                        arrays.append(a)
                        continue
                    else:
                        break
                    # (an external input: the trail's, or a new one of the trail's key)
                    k = ids.get(id(x))
                    if k is None:
                        k = len(ext)
                        if ~w != k:
                            break
                        if cl is float:
                            kind = cl
                        else:
                            if x.__class__ is not _ArrayImpl or \
                                    x.sharding.__class__ is not _SingleDevice:
                                break
                            av = x.aval
                            kind = (av.shape, av.dtype, av.weak_type)
                            if kind != tr.ext_avals[k]:
                                break
                        ids[id(x)] = k
                        ext.append(x)
                        avals.append(kind)
                        added.append(id(x))
                    elif ~k != w:
                        break
                    if device is None and cl is not float:
                        device = x.sharding._device
                    arrays.append(x)
                else:
                    try:
                        ok = not static or key[-1] == tuple(sorted(static.items()))
                    except TypeError:
                        pass
                if not ok:
                    _undo(seg, n_ext, added)
                    r = None
            if r is None and tr is not None:
                seg.settle()
        if r is None:
            key = [op, D._default[0]]
            part = key.append
            ext, ids, avals = seg.ext, seg.ext_ids, seg.ext_avals
            n_ext = len(ext)
            refs = []
            arrays = []
            ref, given = refs.append, arrays.append
            added = []          # (inputs this call made: undone where no recipe records it)
            device = None
            for a in args:
                cl = a.__class__
                if cl is not T:
                    if cl is float:
                        part(cl)
                        k = ids.get(id(a))
                        if k is None:
                            k = ids[id(a)] = len(ext)
                            ext.append(a)
                            avals.append(cl)
                            added.append(id(a))
                        ref(~k)
                        given(a)
                        continue
                    if cl is bool or (cl is int and -_I64 <= a < _I64):
                        part(cl)
                        ref(~len(ext))
                        ext.append(a)
                        avals.append(cl)
                        given(a)
                        continue
                    if not isinstance(a, T) or cl._results_keep_class:
                        return _undo(seg, n_ext, added)
                    _PLAIN_TENSORS.add(cl)
                if a._is_inference and grad_on:
                    # (an inference tensor where a gradient may be recorded: the general path
                    # checks it is not saved; under inference mode or no_grad it is an operand)
                    return _undo(seg, n_ext, added)
                d = a._d
                if d.__class__ is _Deferred:
                    v = d.value
                    if v is None:
                        if d.seg is not seg:
                            return _undo(seg, n_ext, added)     # (its segment failed)
                        part((d.key, grad_on and a._requires_grad))
                        ref(d.slot)
                        if device is None:
                            device = d.device
                        given(d)
                        continue
                    d = v           # (computed: its array, as ``_fused.raw`` gives it)
                k = ids.get(id(d))
                if k is None:
                    if d.__class__ is not _ArrayImpl or \
                            d.sharding.__class__ is not _SingleDevice:
                        return _undo(seg, n_ext, added)
                    av = d.aval
                    kind = (av.shape, av.dtype, av.weak_type)
                    k = ids[id(d)] = len(ext)
                    ext.append(d)
                    avals.append(kind)
                    added.append(id(d))
                else:
                    kind = avals[k]
                # (marked concrete: a call on concrete scalars runs now, ``_fused._scalar_call``)
                part((kind, grad_on and a._requires_grad, 0))
                if device is None:
                    device = d.sharding._device
                ref(~k)
                given(d)
            if static:
                part(tuple(sorted(static.items())))
            key = tuple(key)
            try:
                r = _RECIPES.get(key)
            except TypeError:           # (an unhashable static: the general path says so)
                return _undo(seg, n_ext, added)
            if r is None:
                _undo(seg, n_ext, added)
                return key
            if r is _NOW:
                _undo(seg, n_ext, added)
                return _NOW
            if seg.follow is not None:
                seg.settle()        # (the trail made another call here)
        (c, tiered, out_key, nbytes, tree, out_tree, needs, node_cls, name, saves, view,
         save_plan, saves_out) = r
        if device is None:
            device = _tiers._default_device()
        start = len(seg.outs)
        out = _Deferred(out_key, device, seg, start)
        seg.outs.append(_weakref_ref(out))
        if seg.follow is not None:
            F.followed(seg, nbytes)
        else:
            calls = seg._calls
            seg._producers.append(len(calls))
            refs = tuple(refs)
            calls.append((tiered, tree, refs, start, out_tree, 1))
            seg.exp.append((key, r, refs))
            seg._h = hash((seg._h, tiered, tree, refs))
            seg.nbytes += nbytes
            if len(calls) >= F.MAX_CALLS or seg.nbytes >= F.MAX_BYTES:
                F._flush(F._BOUND)
    c.stamp = _budget["epoch"]
    arrays = tuple(arrays)
    if not needs:
        t = T._make(out)
    else:
        vjp = _new(Remat)
        vjp.arrays = arrays
        if len(args) == 2:      # (a binary op, the common call: its edges without a loop)
            a, b = args
            n0, n1 = needs
            if n0:
                g = a.grad_fn
                e0 = (g, a._output_nr) if g is not None and g.__class__ is not _InvalidView \
                    else a._edge()
                if n1:
                    g = b.grad_fn
                    edges = (e0, (g, b._output_nr) if g is not None and
                             g.__class__ is not _InvalidView else b._edge())
                else:
                    edges = (e0,)
            else:
                edges = _edges(args, needs)
        elif len(args) == 1:    # (a unary op)
            a = args[0]
            g = a.grad_fn
            edges = ((g, a._output_nr) if g is not None and g.__class__ is not _InvalidView
                     else a._edge(),)
        else:
            edges = _edges(args, needs)
        node = _new(node_cls)
        node.__init__(name, edges, c, vjp, args, ((out.shape, out.dtype),), saves)
        t = T._make(out, node, 0)
        if saves:
            # (``_saved_versions``, its operands' positions from the recipe)
            saved = []
            for i, p in save_plan:
                a = args[i]
                vc = a._vc
                saved.append((vc, vc[0], a, p))
            if saves_out:
                saved.append((t._vc, 0, None, (out.shape, out.dtype, 0)))
            node._saved_versions = saved if st.allow_mutation is None else st.allow_mutation
    if view is not None:
        view.mark(c, args, arrays, t, static)
    return t


def _undo(seg, n, added):
    """Drop the external inputs a recording left in ``seg`` past its first ``n`` (``added``:
    the ids of the arrays and floats among them); None."""
    for i in added:
        del seg.ext_ids[i]
    del seg.ext[n:]
    del seg.ext_avals[n:]
    return None


_weakref_ref = weakref.ref
_ArrayImpl = _tiers._ArrayImpl
_SingleDevice = jax.sharding.SingleDeviceSharding


def _edges(args, needs):
    """A node's edges: ``(grad_fn, output_nr)`` of each operand that needs grad (a leaf's
    gradient accumulator for a leaf)."""
    edges = []
    for a, n in zip(args, needs):
        if n:
            g = a.grad_fn
            edges.append((g, a._output_nr) if g is not None and g.__class__ is not _InvalidView
                         else a._edge())
    return tuple(edges)


def _saved_versions(c, args, outs, n_diff, st):
    """What torch's backward of a call would read, each with the version it must still be at
    (``Node._saved_versions``)."""
    T = _Tensor
    saves = c.saves
    saved = []
    at = c.saved_at
    if at is None:
        for a in args:
            if isinstance(a, T):
                saved.append((a._vc, a._vc[0], a, None))
    else:
        for i in at:
            a = args[i]
            if isinstance(a, T):
                # (its position: see _storage.commit_inplace)
                saved.append((a._vc, a._vc[0], a, i))
    if saves == _OUTPUT or saves == _BOTH:
        for k, o in enumerate(outs[:n_diff]):
            saved.append((o._vc, 0, None, (tuple(o._d.shape), o._d.dtype, k)))
    return saved if st.allow_mutation is None else st.allow_mutation


def _of_class(out, cls):
    """An op's fresh results as instances of ``cls``, the Tensor subclass among its operands
    (torch's default ``__torch_function__`` converts them; a Parameter's results stay Tensors:
    ``_results_keep_class``). torch converts with ``as_subclass``, an alias whose node is
    AliasBackward0; torchlike's result keeps its op's node (DIFFERENCES.md)."""
    if out.__class__ is tuple:
        return tuple(_with_class(o, cls) for o in out)
    return _with_class(out, cls)


_apply_hooks.bind(apply, lambda: _Tensor)

_new = object.__new__
# a function jax differentiates as a whole tracing (``autograd.grad_mode.node_trace``)
NODE_TRACE, FORWARD, _node_local = _gm.NODE_TRACE, _gm.FORWARD, _gm._node_local


def _spec_of(d):
    """The abstract value of an array or a fused-eager deferred one (its value not read)."""
    return jax.ShapeDtypeStruct(d.shape, d.dtype, weak_type=d.weak_type)


def detached(d):
    """A detached tensor's data: its tangent stopped inside a forward-mode trace."""
    if NODE_TRACE[0] and getattr(_node_local, "on", False) is FORWARD:
        return _untracked(d)
    return d


def _untracked(d):
    """``d`` with jax's gradient stopped (float arrays; others carry none)."""
    if _is_inexact(d.dtype):
        return jax.lax.stop_gradient(d)
    return d


_OUTPUT = "output"
_BOTH = "both"
_I64 = 1 << 63


def _big_int(v, cast, args):
    """A Python int outside int64 as an operand, as torch takes it: below -2**63 or from 2**64
    on, torch's OverflowError; in [2**63, 2**64) a uint64, which wraps (integer results) or
    converts, and which torch will not promote with bool."""
    if v >= 1 << 64:
        raise OverflowError("int too big to convert")
    if v < -_I64:
        raise OverflowError("can't convert negative int to unsigned")
    tensors = [a for a in args if isinstance(a, _Tensor)]
    if tensors and all(t.dtype is D.bool for t in tensors):
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                           "attempted to promote Bool and UInt64")
    return D.host_scalar(v, cast if cast is not None else D.int64)


def _finish_vjp(flat, plan, device):
    """An interpreted forward-with-VJP: outputs on the device, the residuals stay numpy (the
    backward reads them on the host, interpreted or compiled alike)."""
    diff, rest, vjp = jax.tree_util.tree_unflatten(plan.out_tree, flat)
    k = len(diff)
    outs = [_tiers.put(h, a, device) for h, a in zip(flat[:k + len(rest)], plan.avals)]
    return tuple(outs[:k]), tuple(outs[k:]), vjp


def view_forward(c):
    """The forward a view re-runs on its root (to refresh its data after a write, or on element
    numbers for its index map): the entry's tiered forward."""
    return c.fwd


def _translate(e, args):
    """Re-raise a jax shape error as torch's RuntimeError where torch has a message for it."""
    text = str(e).lower()
    if "incompatible shapes" in text:
        msg = broadcast_error([tuple(a._d.shape) for a in args if isinstance(a, _Tensor)])
        if msg:
            raise RuntimeError(msg) from None
    if "incompatible devices" in text:
        devs = [a.device for a in args if isinstance(a, _Tensor)]
        other = [d for d in devs if d != devs[0]]
        if other:
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at "
                               f"least two devices, {devs[0]} and {other[0]}!") from None
    raise e


def broadcast_error(shapes):
    """torch's message for shapes that do not broadcast, or None if they do. As torch's
    ``infer_size``, the shapes are folded left to right (``a`` is the broadcast so far, ``b`` the
    next operand) and the dimensions compared from the last."""
    acc = tuple(shapes[0])
    for s in shapes[1:]:
        ndim = max(len(acc), len(s))
        a = (1,) * (ndim - len(acc)) + acc
        b = (1,) * (ndim - len(s)) + tuple(s)
        for i in range(ndim - 1, -1, -1):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                return (f"The size of tensor a ({a[i]}) must match the size of tensor b "
                        f"({b[i]}) at non-singleton dimension {i}")
        acc = tuple(y if x == 1 else x for x, y in zip(a, b))
    return None


def inplace_broadcast_error(dst, src):
    """torch's message for writing a value of shape ``src`` into a tensor of shape ``dst``
    (``copy_``, an in-place kernel's output): the shapes' broadcast error, or "output with
    shape ... doesn't match the broadcast shape ..." where they broadcast to another shape
    than ``dst``; None where the write is taken."""
    dst, src = tuple(dst), tuple(src)
    msg = broadcast_error([dst, src])
    if msg is not None:
        return msg
    ndim = max(len(dst), len(src))
    a, b = (1,) * (ndim - len(dst)) + dst, (1,) * (ndim - len(src)) + src
    shape = tuple(y if x == 1 else x for x, y in zip(a, b))
    if shape != dst:
        return f"output with shape {list(dst)} doesn't match the broadcast shape {list(shape)}"
    return None
