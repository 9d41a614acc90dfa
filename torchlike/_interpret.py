"""Evaluate a jaxpr with numpy: the interpreter tier's one evaluator.

``run(closed_jaxpr, *args)`` evaluates a ``jax.core.ClosedJaxpr`` (from ``jax.make_jaxpr``) on
numpy arrays with one numpy function per jax *primitive* (``RULES``, keyed by primitive name)
and returns numpy arrays of exactly the output avals' dtypes and shapes. Nothing is compiled.

A jaxpr is turned once into a *plan* (cached on the jaxpr object): a flat list of
``(function, input slots, output slots, slots to free)`` steps whose functions already hold
each equation's params (and whatever they can make ahead: index arrays, strides, constants),
kept as well in the form the run loop walks, by arity (``_code``). Running a plan is a loop of
list reads, one call per equation and list writes (about 0.1-0.2 us an equation beyond the
step's own work; a run sets numpy's error state once, without ``np.errstate``'s Python); each
value is dropped after its last use. Calls (``jit``, ``custom_jvp_call``, ``custom_vjp_call``, ``checkpoint``,
``closed_call``) are inlined into their caller's plan; the other sub-jaxprs
(``custom_linear_solve``, ``scan``, ``while``, ``cond``, ``reduce``, ``reduce_window``) get
plans of their own, built with their parent's.

Semantics are XLA's (CPU backend), checked against jax's compiled results in
``tests/test_interpret.py``: integer division by zero, shifts past the bit width, saturating
float-to-int conversion, ``max``/``min`` of signed zeros, sort's total order, gather/scatter
bounds, the rounding of ``integer_pow`` and ``exp2`` in narrow dtypes. Two differences remain,
both in float results only: transcendental functions and reductions round differently in the
last bits, and XLA's CPU backend flushes subnormal floats to zero (inputs and results) where
numpy keeps them (as torch does).

bfloat16, float16 and float8 values are computed in float32 and each primitive's result is
rounded to its output dtype. PRNG keys are held as their uint32 data; the key primitives
(``random_bits``, ``random_split``, ``random_fold_in``, ``random_seed``, ``random_gamma``) run
jax's own implementation of them, traced once to a jaxpr of ``threefry2x32`` and bit
operations. Special functions (erf, lgamma, digamma, igamma, ...) come from ``scipy.special``
(a dependency of jax itself), imported on first use.

``check(closed_jaxpr)`` returns the first primitive without a numpy form (or None) before any
work is done, building the plan ``run`` then uses; ``run`` raises ``Unsupported`` for it.
``unsupported_counts()`` counts the names met by ``check`` and ``run``.
"""
from __future__ import annotations

import collections
import itertools
import math
import operator
import sys
import weakref

import jax
import ml_dtypes
import numpy as np
from jax.extend import core as _jcore
from jax._src.export.shape_poly import _DimExpr

__all__ = ["run", "run_plan", "bind", "check", "Unsupported", "unsupported_counts", "RULES",
           "SHAPELESS"]


class Unsupported(Exception):
    """A primitive (or a params combination) with no numpy form in this module."""

    def __init__(self, name, why=""):
        super().__init__(f"no numpy form for primitive {name!r}" + (f": {why}" if why else ""))
        self.name = name


_COUNTS: collections.Counter = collections.Counter()


def unsupported_counts():
    """``{primitive name: times met}`` for primitives that had no numpy form."""
    return dict(_COUNTS)


RULES: dict = {}        # primitive name -> make(params, in_avals, out_avals) -> fn(*arrays)

_Literal = _jcore.Literal
_DropVar = _jcore.DropVar
_F32 = np.dtype(np.float32)
_LOWP = {np.dtype(t) for t in (np.float16, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
                               ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3b11fnuz,
                               ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2fnuz)}
for _n in ("float8_e3m4", "float8_e4m3", "float8_e8m0fnu", "float4_e2m1fn"):
    if hasattr(ml_dtypes, _n):
        _LOWP.add(np.dtype(getattr(ml_dtypes, _n)))


def _is_key(aval):
    d = getattr(aval, "dtype", None)
    return d is not None and not isinstance(d, np.dtype) and \
        jax.dtypes.issubdtype(d, jax.dtypes.prng_key)


# ------------------------------------------------------------------ plans

class _Plan:
    __slots__ = ("steps", "code", "template", "in_slots", "out_slots", "in_dtypes",
                 "out_avals", "out_fix", "late", "draw", "__weakref__")

    def __init__(self):
        self.draw = None        # check's verdict on random draws (False: none to refuse)
        self.out_fix = None     # run_plan's per-output dtype or key impl (made on first use)


def _code(steps):
    """``steps`` in the form ``_exec`` walks: ``(kind, fn, a, b, out, dead)`` with kind 1 (one
    input, slot ``a``), 2 (two: ``a``, ``b``), 0 (none), 3 (``a`` a tuple of slots) or 4
    (several outputs: ``a`` the input slots, ``out`` the output slots); ``dead`` is empty
    where no value dies."""
    code = []
    for fn, ins, out, multi, dead in steps:
        if multi:
            code.append((4, fn, ins, None, out, dead))
        elif len(ins) == 1:
            code.append((1, fn, ins[0], None, out, dead))
        elif len(ins) == 2:
            code.append((2, fn, ins[0], ins[1], out, dead))
        elif not ins:
            code.append((0, fn, None, None, out, dead))
        else:
            code.append((3, fn, ins, None, out, dead))
    return tuple(code)


_PLANS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_CLOSED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _np_const(v, aval):
    if _is_key(aval):
        return np.asarray(jax.random.key_data(v))
    a = np.array(v, dtype=aval.dtype)
    a.flags.writeable = False           # one array serves every call
    return a


# call primitives whose sub-jaxpr is the value they compute: their equations join the caller's
# plan (a shape-polymorphic trace's call is then no late step re-planned at every size)
_CALLS = {"jit", "pjit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call",
          "custom_vjp_call_jaxpr", "checkpoint", "remat", "remat2"}


def _inlined(eqn):
    """``(jaxpr, consts)`` of a call equation's sub-jaxpr, or None."""
    if eqn.primitive.name not in _CALLS:
        return None
    p = eqn.params
    j = p.get("jaxpr") or p.get("call_jaxpr") or p.get("fun_jaxpr")
    if j is None:
        return None
    if hasattr(j, "consts"):
        return j.jaxpr, j.consts
    return j, ()


def _plan(jaxpr, consts=()):
    """The plan of an open ``Jaxpr`` whose constvars take ``consts``.

    Calls (``pjit``, ``custom_jvp_call``...) are inlined. In a shape-polymorphic jaxpr
    (symbolic sizes), an equation whose rule needs sizes (sizes in its params, or in its avals
    unless its primitive is ``SHAPELESS``) gets no function here: its step is listed in
    ``plan.late`` and made by ``bind`` for each set of sizes; the others are made once."""
    plan = _Plan()
    late = []
    template = []
    steps = []

    def new_slot(value=None):
        template.append(value)
        return len(template) - 1

    def emit(jaxpr, consts, in_slots):
        env = {}
        for v, c in zip(jaxpr.constvars, consts):
            env[v] = new_slot(c if v.aval is None else _np_const(c, v.aval))
        for v, i in zip(jaxpr.invars, in_slots):
            env[v] = i

        def get(v):
            if isinstance(v, _Literal):
                return new_slot(_np_const(v.val, v.aval))
            i = env.get(v)
            if i is None:
                i = env[v] = new_slot()
            return i

        for eqn in jaxpr.eqns:
            ins = [get(v) for v in eqn.invars]
            sub = _inlined(eqn)
            if sub is not None:
                for o, i in zip(eqn.outvars, emit(sub[0], sub[1], ins)):
                    if not isinstance(o, _DropVar):
                        env[o] = i
                continue
            # (sizes come from the inputs, or from a static argument: a random draw's shape)
            sized = tuple(n for n, v in eqn.params.items() if _has_size(v))
            if sized or (eqn.primitive.name not in SHAPELESS and any(
                    _sized(v.aval) for v in itertools.chain(eqn.invars, eqn.outvars))):
                _supported(eqn)
                late.append((len(steps), eqn, sized))
                fn = None
            else:
                fn = _made(eqn)
            outs = [new_slot() if isinstance(o, _DropVar) else get(o) for o in eqn.outvars]
            if eqn.primitive.multiple_results:
                steps.append((fn, tuple(ins), tuple(outs), True))
            else:
                steps.append((fn, tuple(ins), outs[0], False))
        return [get(v) for v in jaxpr.outvars]

    in_slots = [new_slot() for _ in jaxpr.invars]
    plan.in_slots = tuple(in_slots)
    plan.out_slots = tuple(emit(jaxpr, consts, in_slots))
    plan.template = template
    # free each value after its last use: fresh memory for every intermediate costs page
    # faults (a 256x256 add took 1.3 ms instead of 25 us with all intermediates alive)
    keep = set(plan.out_slots) | {i for i, v in enumerate(template) if v is not None}
    last = {}
    for k, (_, ins, _, _) in enumerate(steps):
        for i in ins:
            last[i] = k
    dead = [[] for _ in steps]
    for i, k in last.items():
        if i not in keep:
            dead[k].append(i)
    plan.steps = tuple((fn, ins, out, multi, tuple(d))
                       for (fn, ins, out, multi), d in zip(steps, dead))
    plan.code = _code(plan.steps)
    plan.late = tuple(late)
    return plan


def _made(eqn, params=None, ins=None, outs=None):
    """``_make``, with a rule's failure on params it does not understand as ``Unsupported``."""
    try:
        return _make(eqn, params, ins, outs)
    except Unsupported:
        raise
    except Exception as e:
        raise Unsupported(eqn.primitive.name, f"{type(e).__name__}: {e}") from e


def _sized(aval):
    """Does ``aval`` have a symbolic size?"""
    for d in getattr(aval, "shape", ()):
        if d.__class__ is _DimExpr:
            return True
    return False


def _symbolic_jaxpr(j):
    return any(_sized(v.aval) for v in itertools.chain(j.constvars, j.invars, j.outvars))


def _has_size(p):
    """Does a param hold a symbolic size (sub-jaxprs included)?"""
    t = p.__class__
    if t is _DimExpr:
        return True
    if isinstance(p, (tuple, list)):
        return any(_has_size(x) for x in p)
    if t is _jcore.ClosedJaxpr:
        return _symbolic_jaxpr(p.jaxpr)
    if t is _jcore.Jaxpr:
        return _symbolic_jaxpr(p)
    return _sized(p) if hasattr(p, "shape") and hasattr(p, "dtype") else False


def _supported(eqn):
    """Raise ``Unsupported`` for a primitive of ``eqn`` (sub-jaxprs included) with no rule: a
    step made late must not be the first to find it."""
    if eqn.primitive.name not in RULES:
        raise Unsupported(eqn.primitive.name)
    for sub in _jcore.jaxprs_in_params(eqn.params):
        for e in sub.eqns:
            _supported(e)


def bind(closed, subst):
    """The plan of shape-polymorphic ``closed`` at one set of sizes: ``subst.aval(aval)`` and
    ``subst.param(param)`` give an aval or a param with its sizes (torchlike._shape_poly). The
    steps ``_plan`` made once are shared; the late ones are made here. A concrete jaxpr's plan
    is returned as it is. Raises ``Unsupported`` as ``check`` does."""
    p = _closed_plan(closed)
    if subst is None:
        if p.late:
            raise Unsupported("a symbolic size", "no sizes given")
        return p
    steps = list(p.steps)
    aval = subst.aval
    for k, eqn, sized in p.late:
        params = eqn.params
        if sized:
            params = dict(params)
            for n in sized:
                params[n] = subst.param(params[n])
        fn = _made(eqn, params, [aval(v.aval) for v in eqn.invars],
                   [aval(v.aval) for v in eqn.outvars])
        _, ins, out, multi, dead = steps[k]
        steps[k] = (fn, ins, out, multi, dead)
    b = _Plan()
    b.steps, b.template, b.in_slots, b.out_slots = tuple(steps), p.template, p.in_slots, \
        p.out_slots
    b.code = _code(b.steps)
    b.in_dtypes, b.late = p.in_dtypes, ()
    b.out_avals = tuple(subst.aval(a) for a in p.out_avals)
    return b


def _closed_plan(closed):
    p = _CLOSED.get(closed)
    if p is None:
        p = _plan(closed.jaxpr, closed.consts)
        p.in_dtypes = tuple(None if _is_key(a) else np.dtype(a.dtype) for a in closed.in_avals)
        p.out_avals = tuple(closed.out_avals)
        _CLOSED[closed] = p
    return p


def _open_plan(jaxpr):
    p = _PLANS.get(jaxpr)
    if p is None:
        p = _PLANS[jaxpr] = _plan(jaxpr, ())
    return p


def _exec(plan, args):
    env = plan.template.copy()
    for i, a in zip(plan.in_slots, args):
        env[i] = a
    return _walk(plan, env)


def _walk(plan, env):
    """Run ``plan``'s steps on ``env`` (its template with the inputs in their slots): the
    output values."""
    for kind, fn, a, b, out, dead in plan.code:
        if kind == 1:
            env[out] = fn(env[a])
        elif kind == 2:
            env[out] = fn(env[a], env[b])
        elif kind == 4:
            for o, v in zip(out, fn(*[env[i] for i in a])):
                env[o] = v
        elif kind == 0:
            env[out] = fn()
        else:
            env[out] = fn(*[env[i] for i in a])
        if dead:
            for i in dead:
                env[i] = None
    return [env[i] for i in plan.out_slots]


def _make(eqn, params=None, ins=None, outs=None):
    """The step function of ``eqn`` (with ``params`` and avals ``ins``, ``outs`` in place of
    its own: a shape-polymorphic equation at one set of sizes)."""
    name = eqn.primitive.name
    rule = RULES.get(name)
    if rule is None:
        raise Unsupported(name)
    if ins is None:
        ins = [v.aval for v in eqn.invars]
        outs = [v.aval for v in eqn.outvars]
        params = eqn.params
    eqn_out = outs[0] if outs else None
    if name not in _KEY_AWARE and not all(isinstance(getattr(a, "dtype", None), np.dtype)
                                          for a in ins + outs) and \
            any(_is_key(a) for a in ins + outs):
        # data movement on PRNG keys moves their uint32 data (a trailing key dimension)
        fix = _KEY_PARAMS.get(name)
        if fix is None:
            raise Unsupported(name, "on PRNG keys")
        params = fix(dict(params), ins, outs)
        ins = [_physical(a) for a in ins]
        outs = [_physical(a) for a in outs]
        if name == "select_n":
            fn = rule(params, ins, outs)
            k = len(outs[0].shape) - len(eqn_out.shape)
            return lambda pred, *cases: fn(np.reshape(pred, np.shape(pred) + (1,) * k), *cases)
        return rule(params, ins, outs)
    if name not in _MOVES and (any(getattr(a, "dtype", None) in _LOWP for a in ins)
                               or any(getattr(a, "dtype", None) in _LOWP for a in outs)):
        # the rule sees float32 avals; its arguments are widened and its results rounded
        fn = rule(params, [_widen(a) for a in ins], [_widen(a) for a in outs])
        return _lowp(fn, [a.dtype for a in outs], eqn.primitive.multiple_results)
    return rule(params, ins, outs)


def _physical(aval):
    if not _is_key(aval):
        return aval
    ks = tuple(aval.dtype._impl.key_shape)
    return jax.core.ShapedArray(tuple(aval.shape) + ks, np.dtype(np.uint32))


def _key_nd(ins, outs):
    a = next(a for a in ins + outs if _is_key(a))
    return tuple(a.dtype._impl.key_shape)


def _kp_reshape(p, ins, outs):
    p["new_sizes"] = tuple(p["new_sizes"]) + _key_nd(ins, outs)
    return p


def _kp_broadcast(p, ins, outs):
    ks = _key_nd(ins, outs)
    n_out = len(p["shape"])
    n_in = len(ins[0].shape)
    p["shape"] = tuple(p["shape"]) + ks
    p["broadcast_dimensions"] = tuple(p["broadcast_dimensions"]) + tuple(
        range(n_out, n_out + len(ks)))
    del n_in
    return p


def _kp_transpose(p, ins, outs):
    n = len(p["permutation"])
    p["permutation"] = tuple(p["permutation"]) + tuple(
        range(n, n + len(_key_nd(ins, outs))))
    return p


def _kp_slice(p, ins, outs):
    ks = _key_nd(ins, outs)
    p["start_indices"] = tuple(p["start_indices"]) + (0,) * len(ks)
    p["limit_indices"] = tuple(p["limit_indices"]) + ks
    if p.get("strides") is not None:
        p["strides"] = tuple(p["strides"]) + (1,) * len(ks)
    return p


def _kp_dynamic_slice(p, ins, outs):
    p["slice_sizes"] = tuple(p["slice_sizes"]) + _key_nd(ins, outs)
    return p


def _kp_same(p, ins, outs):
    return p


_KEY_PARAMS = {"reshape": _kp_reshape, "broadcast_in_dim": _kp_broadcast,
               "transpose": _kp_transpose, "slice": _kp_slice,
               "dynamic_slice": _kp_dynamic_slice, "dynamic_update_slice": _kp_same,
               "squeeze": _kp_same, "expand_dims": _kp_same, "concatenate": _kp_same,
               "select_n": _kp_same, "copy": _kp_same, "copy_p": _kp_same,
               "optimization_barrier": _kp_same, "rev": _kp_same, "split": _kp_same,
               "unstack": _kp_same, "stack": _kp_same, "device_put": _kp_same,
               "empty2": _kp_same}
# primitives whose rules take key avals as they are
_KEY_AWARE = {"random_bits", "random_split", "random_gamma", "random_clone", "random_fold_in", "random_seed", "random_wrap",
              "random_unwrap", "jit", "pjit", "closed_call", "core_call", "custom_jvp_call",
              "custom_vjp_call", "custom_vjp_call_jaxpr", "checkpoint", "remat", "remat2",
              "scan", "while", "cond", "empty2", "empty"}


def _widen(aval):
    return aval.update(dtype=_F32) if getattr(aval, "dtype", None) in _LOWP else aval


def _lowp(fn, out_dtypes, multi):
    """Compute a low-precision float primitive in float32 and round its results."""
    def up(a):
        return a.astype(_F32) if a.dtype in _LOWP else a

    if multi:
        def g(*args):
            return [np.asarray(r).astype(d) for r, d in zip(fn(*map(up, args)), out_dtypes)]
    else:
        d = out_dtypes[0]

        def g(*args):
            return np.asarray(fn(*map(up, args))).astype(d)
    return g


def check(closed_jaxpr):
    """The first primitive of ``closed_jaxpr`` (sub-jaxprs included) with no numpy form, or
    None. Builds and caches the plan ``run`` uses, so calling it first costs nothing extra.

    A random draw transformed by a transcendental function (a normal's ``erf_inv``, an
    exponential's ``log1p``) is refused as well: numpy's transcendentals may differ from XLA's
    in the last bit, and a seeded draw must give the same bits on its first call and its
    hundredth, whichever tier ran it (such jaxprs compile at once)."""
    try:
        plan = _closed_plan(closed_jaxpr)
    except Unsupported as e:
        _COUNTS[e.name] += 1
        return e.name
    bad = plan.draw
    if bad is None:
        bad = plan.draw = _inexact_draw(closed_jaxpr.jaxpr) or False
    if bad:
        _COUNTS[bad] += 1
        return bad
    return None


_RANDOM = {"random_bits", "threefry2x32", "random_gamma"}
_TRANSCENDENTAL = {"erf_inv", "erf", "erfc", "log", "log1p", "exp", "exp2", "expm1", "sin", "cos",
                   "tan", "tanh", "logistic", "pow", "atan2", "asin", "acos", "atan", "sinh",
                   "cosh", "asinh", "acosh", "atanh", "lgamma", "digamma", "igamma", "igammac",
                   "random_gamma_grad", "cbrt", "rsqrt"}


def _inexact_draw(jaxpr):
    """``"<random draw with name>"`` where ``jaxpr`` draws random bits and applies a
    transcendental to floats (sub-jaxprs included), else None."""
    names = set()

    def walk(j):
        for eqn in j.eqns:
            names.add(eqn.primitive.name)
            for sub in _jcore.jaxprs_in_params(eqn.params):
                walk(sub)
    walk(jaxpr)
    if names & _RANDOM:
        t = sorted(names & _TRANSCENDENTAL)
        if t:
            return f"random draw with {t[0]}"
    return None


def _to_np(a, dtype):
    """An argument as numpy, in its aval's dtype (Python scalars come in as any width)."""
    if dtype is None:           # a PRNG key: its uint32 data
        if isinstance(a, jax.Array) and jax.dtypes.issubdtype(a.dtype, jax.dtypes.prng_key):
            return np.asarray(jax.random.key_data(a))
        return np.asarray(a, np.uint32)
    return np.asarray(a, dtype)


def run(closed_jaxpr, *args):
    """Evaluate ``closed_jaxpr`` on ``args`` (numpy or jax arrays, numpy scalars); a list of
    numpy arrays with the output avals' dtypes and shapes. PRNG-key outputs come back as jax
    key arrays. Raises ``Unsupported`` (before any work) for a primitive with no numpy form."""
    try:
        plan = _closed_plan(closed_jaxpr)
    except Unsupported as e:
        _COUNTS[e.name] += 1
        raise
    return run_plan(plan, *args)


def run_plan(plan, *args):
    """``run`` with a plan from ``bind``."""
    env = plan.template.copy()
    # (a plan's inputs are its first slots)
    for k, (a, d) in enumerate(zip(args, plan.in_dtypes)):
        if a.__class__ is not np.ndarray or (a.dtype is not d and a.dtype != d):
            a = _to_np(a, d)
        env[k] = a
    fix = plan.out_fix
    if fix is None:
        # (each output's dtype, or for a PRNG key its implementation's name and None)
        fix = plan.out_fix = tuple((aval.dtype._impl.name, None) if _is_key(aval) else
                                   (None, np.dtype(aval.dtype)) for aval in plan.out_avals)
    token = _ignore_errors()
    try:
        outs = _walk(plan, env)
    finally:
        _extobj_reset(token)
    for k, (impl, d) in enumerate(fix):
        v = outs[k]
        if d is None:
            outs[k] = jax.random.wrap_key_data(np.asarray(v, np.uint32), impl=impl)
        elif v.__class__ is not np.ndarray or (v.dtype is not d and v.dtype != d):
            outs[k] = np.asarray(v, dtype=d)
    return outs


try:
    # np.errstate(all="ignore") for one run, without its Python: the context variable numpy
    # keeps its error state in, set to the ignoring form of the state in force (made once
    # for each state met)
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
    _extobj_get, _extobj_set, _extobj_reset = (_extobj_contextvar.get, _extobj_contextvar.set,
                                              _extobj_contextvar.reset)
    _make_extobj(all="ignore")
except (ImportError, AttributeError, TypeError):             # (another numpy)
    _extobj_contextvar = None

if _extobj_contextvar is not None:
    _ignoring = (None, None)        # (the state in force, its ignoring form)

    def _ignore_errors():
        """Ignore floating-point errors until ``_extobj_reset`` of the token returned."""
        global _ignoring
        cur = _extobj_get()
        got = _ignoring
        if got[0] is not cur:
            got = _ignoring = (cur, _make_extobj(all="ignore"))
        return _extobj_set(got[1])
else:
    def _ignore_errors():
        e = np.errstate(all="ignore")
        e.__enter__()
        return e

    def _extobj_reset(e):
        e.__exit__(None, None, None)


# ------------------------------------------------------------------ rule helpers

_MOVES = set()      # data-movement primitives: no float32 detour for low-precision dtypes
# primitives whose rule reads no size from its avals or params (dtypes, ranks and axes only):
# in a shape-polymorphic jaxpr their steps are made once for every size (see ``bind``)
SHAPELESS = set()


def rule(*names, moves=False, shapeless=False):
    """Register ``make(params, in_avals, out_avals) -> fn(*arrays)`` for primitives ``names``.
    moves: data movement (no float32 detour for low-precision dtypes); shapeless: ``make``
    reads no size (an aval's shape or a size in params), only dtypes, ranks and axes."""
    def deco(make):
        for n in names:
            RULES[n] = make
            if moves:
                _MOVES.add(n)
            if shapeless:
                SHAPELESS.add(n)
        return make
    return deco


def _simple(np_fn, *names, moves=False):
    """A primitive that is ``np_fn(*arrays)`` whatever its params."""
    def make(p, ins, outs):
        return np_fn
    rule(*names, moves=moves, shapeless=True)(make)


def _typed(np_fn, *names):
    """``np_fn(*arrays)`` cast to the output dtype where numpy's result dtype differs."""
    def make(p, ins, outs):
        d = outs[0].dtype

        def f(*a):
            r = np_fn(*a)
            return r if r.dtype == d else r.astype(d)
        return f
    rule(*names, shapeless=True)(make)


def _kind(aval):
    return np.dtype(aval.dtype).kind


# ------------------------------------------------------------------ elementwise arithmetic

_simple(np.add, "add", "add_any")
_simple(np.negative, "neg")
_simple(np.equal, "eq")
_simple(np.not_equal, "ne")
_simple(np.less, "lt")
_simple(np.less_equal, "le")
_simple(np.greater, "gt")
_simple(np.greater_equal, "ge")
_simple(np.bitwise_and, "and")
_simple(np.bitwise_or, "or")
_simple(np.bitwise_xor, "xor")
_simple(np.invert, "not")
_simple(np.isfinite, "is_finite")
_simple(np.floor, "floor")
_simple(np.ceil, "ceil")
_simple(np.arctan2, "atan2")
_simple(np.real, "real")
_simple(np.imag, "imag")
_typed(np.abs, "abs")


@rule("sub", shapeless=True)
def _sub(p, ins, outs):
    return np.logical_xor if _kind(ins[0]) == "b" else np.subtract


@rule("mul", shapeless=True)
def _mul(p, ins, outs):
    d = p.get("out_dtype")
    if d is None:
        return np.multiply
    d = np.dtype(d)
    return lambda x, y: np.multiply(x.astype(d), y.astype(d))


@rule("square", shapeless=True)
def _square(p, ins, outs):
    return lambda x: x * x


@rule("conj", shapeless=True)
def _conj(p, ins, outs):
    d = outs[0].dtype
    return lambda x: np.conj(x).astype(d, copy=False)


@rule("complex")
def _complex(p, ins, outs):
    d = outs[0].dtype

    def f(x, y):
        x, y = np.broadcast_arrays(x, y)
        r = np.empty(x.shape, d)
        r.real = x
        r.imag = y
        return r
    return f


def _signed(d):
    return np.dtype(f"i{np.dtype(d).itemsize}")


def _unsigned(d):
    return np.dtype(f"u{np.dtype(d).itemsize}")


@rule("div", shapeless=True)
def _div(p, ins, outs):
    d = np.dtype(outs[0].dtype)
    if d.kind not in "iu":
        return np.true_divide
    if d.kind == "u":
        def f(x, y):
            z = y == 0
            q = np.floor_divide(x, np.where(z, 1, y).astype(d))
            return np.where(z, np.array(-1).astype(d), q)
        return f
    mn = np.iinfo(d).min

    def f(x, y):
        # XLA: x / 0 is -1, INT_MIN / -1 is INT_MIN, otherwise truncation toward zero
        z = y == 0
        ov = (x == mn) & (y == -1)
        ys = np.where(z | ov, 1, y).astype(d)
        fq = np.floor_divide(x, ys)
        q = np.where((fq < 0) & (fq * ys != x), fq + 1, fq)
        q = np.where(ov, x, q)
        return np.where(z, np.array(-1, d), q).astype(d, copy=False)
    return f


@rule("rem", shapeless=True)
def _rem(p, ins, outs):
    d = np.dtype(outs[0].dtype)
    if d.kind == "f" or d.kind == "c":
        return np.fmod
    if d.kind == "u":
        def f(x, y):
            z = y == 0
            return np.where(z, x, np.remainder(x, np.where(z, 1, y).astype(d)))
        return f

    def f(x, y):
        bad = (y == 0) | (y == -1)
        r = np.fmod(x, np.where(bad, 1, y).astype(d))
        r = np.where(y == -1, 0, r)
        return np.where(y == 0, x, r).astype(d, copy=False)
    return f


@rule("max", shapeless=True)
def _max(p, ins, outs):
    if _kind(ins[0]) != "f":
        return np.maximum

    def f(x, y):
        r = np.maximum(x, y)
        # XLA: max(-0.0, 0.0) is 0.0 in either order (numpy returns its second operand)
        return np.where((x == 0) & (y == 0), x + y, r)
    return f


@rule("min", shapeless=True)
def _min(p, ins, outs):
    if _kind(ins[0]) != "f":
        return np.minimum

    def f(x, y):
        r = np.minimum(x, y)
        return np.where((x == 0) & (y == 0), -((-x) + (-y)), r)
    return f


@rule("clamp", shapeless=True)
def _clamp(p, ins, outs):
    mx = _max(p, ins[1:], outs)
    mn = _min(p, ins[1:], outs)
    return lambda lo, x, hi: mn(mx(x, lo), hi)


@rule("sign", shapeless=True)
def _sign(p, ins, outs):
    k = _kind(ins[0])
    if k == "f":
        return lambda x: np.where(x == 0, x, np.sign(x))
    if k == "c":
        d = np.dtype(outs[0].dtype)

        def f(x):
            # XLA: x / |x| with the real |x| dividing each part; 0 at 0
            a = np.abs(x)
            z = a == 0
            a = np.where(z, 1, a)
            r = np.empty(np.shape(x), d)
            r.real = np.where(z, 0, x.real / a)
            r.imag = np.where(z, 0, x.imag / a)
            return r
        return f
    return np.sign


@rule("select_n", shapeless=True)
def _select_n(p, ins, outs):
    if len(ins) == 2:
        return lambda pred, x: x
    if len(ins) == 3:
        if _kind(ins[0]) == "b":
            return lambda pred, f, t: np.where(pred, t, f)
        return lambda pred, f, t: np.where(pred != 0, t, f)

    def f(pred, *cases):
        shape = np.broadcast_shapes(*[np.shape(c) for c in cases], np.shape(pred))
        return np.choose(np.broadcast_to(pred, shape), [np.broadcast_to(c, shape) for c in cases])
    return f


@rule("nextafter", moves=True, shapeless=True)
def _nextafter(p, ins, outs):
    d = np.dtype(ins[0].dtype)
    if d not in _LOWP:
        return np.nextafter
    u = _unsigned(d)
    nbits = d.itemsize * 8

    # numpy has no nextafter for narrow floats: step the bit pattern
    def f(x, y):
        x, y = np.broadcast_arrays(np.asarray(x, d), np.asarray(y, d))
        xf, yf = x.astype(_F32), y.astype(_F32)
        xb = x.view(u).astype(np.int64)
        tiny = np.where(yf < 0, (1 << (nbits - 1)) | 1, 1)
        step = np.where((xf < yf) == (xf > 0), xb + 1, xb - 1)
        r = np.where(xf == 0, tiny, step)
        r = np.where(xf == yf, y.view(u).astype(np.int64), r)
        out = r.astype(u).view(d)
        return np.where(np.isnan(xf) | np.isnan(yf), np.array(np.nan, d), out)
    return f


@rule("pow", shapeless=True)
def _pow(p, ins, outs):
    d = np.dtype(outs[0].dtype)
    if _kind(ins[1]) in "iu":
        def f(x, y):
            wide = np.complex128 if d.kind == "c" else np.float64
            return np.power(x.astype(wide), y.astype(np.float64)).astype(d)
        return f
    return lambda x, y: np.power(x, y).astype(d, copy=False)


@rule("integer_pow", moves=True, shapeless=True)
def _integer_pow(p, ins, outs):
    # the multiplication chain jax's lowering emits (binary powering), so results are XLA's;
    # low-precision floats multiply in their own dtype (XLA rounds after each multiply)
    y = p["y"]
    d = np.dtype(outs[0].dtype)

    def f(x):
        n = abs(y)
        if n == 0:
            return np.ones_like(x)
        acc = None
        b = x
        while n > 0:
            if n & 1:
                acc = b if acc is None else acc * b
            n >>= 1
            if n > 0:
                b = b * b
        if y < 0:
            acc = np.array(1, d) / acc
        return np.asarray(acc).astype(d, copy=False)
    return f


@rule("round", shapeless=True)
def _round(p, ins, outs):
    if int(p["rounding_method"]) == 1:
        return np.round

    def f(x):
        t = np.trunc(x)
        r = np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)
        return np.copysign(r, x)
    return f


# ------------------------------------------------------------------ transcendental functions

_WIDER = {np.dtype(np.float32): np.float64, np.dtype(np.complex64): np.complex128}


def _unary(np_fn, *names):
    def make(p, ins, outs):
        d = np.dtype(outs[0].dtype)
        wide = _WIDER.get(d)
        if wide is not None:
            # numpy's single-precision loops are ~1 ulp off where XLA's and torch's kernels
            # round correctly (exp(1) in float32): computed in double, rounded once
            return lambda x: np_fn(np.asarray(x, wide)).astype(d)

        def f(x):
            r = np_fn(x)
            return r if r.dtype == d else r.astype(d)
        return f
    rule(*names, shapeless=True)(make)


@rule("exp2", moves=True, shapeless=True)
def _exp2(p, ins, outs):
    d = np.dtype(outs[0].dtype)
    wide = _F32 if d in _LOWP else d
    ln2 = np.asarray(math.log(2)).astype(d)

    # XLA computes exp2(x) as exp(x * ln 2), with ln 2 and the product rounded to x's dtype
    def f(x):
        t = (np.asarray(x) * ln2).astype(d)
        return np.exp(t.astype(wide)).astype(d)
    return f


for _name, _fn in [("exp", np.exp), ("log", np.log), ("log1p", np.log1p),
                   ("expm1", np.expm1), ("tanh", np.tanh), ("sin", np.sin), ("cos", np.cos),
                   ("tan", np.tan), ("asin", np.arcsin), ("acos", np.arccos),
                   ("atan", np.arctan), ("sinh", np.sinh), ("cosh", np.cosh),
                   ("asinh", np.arcsinh), ("acosh", np.arccosh), ("atanh", np.arctanh),
                   ("sqrt", np.sqrt), ("cbrt", np.cbrt)]:
    _unary(_fn, _name)


@rule("rsqrt", shapeless=True)
def _rsqrt(p, ins, outs):
    d = np.dtype(outs[0].dtype)
    one = np.array(1, d)
    return lambda x: one / np.sqrt(x)


@rule("logistic", shapeless=True)
def _logistic(p, ins, outs):
    d = np.dtype(outs[0].dtype)
    one = np.array(1, d)
    if d.kind == "c":
        return lambda x: one / (one + np.exp(-x))

    def f(x):
        # 1/(1+exp(-x)), written so that neither branch overflows
        e = np.exp(-np.abs(x))
        return np.where(x >= 0, one / (one + e), e / (one + e)).astype(d, copy=False)
    return f


def _scipy_special():
    import scipy.special as sp     # a dependency of jax itself; imported on first use
    return sp


# float32 erf is computed with numpy alone (about 30 ns an element) until this many elements
# have been, then by scipy.special (10 ns an element, but 0.1-0.2 s to import): a GELU model's
# first step does not wait for the import, and a process that keeps interpreting erf pays it once
_ERF_NUMPY_BUDGET = 1 << 21
_erf_numpy_done = [0]


# erf(x) / x as a rational function of x*x/4 on |x| <= 2, and erfc(x) * x * exp(x*x) of 4/(x*x) on
# 2 < x <= 6, highest power first: least-squares fits (relative error weighted, Loeb's
# iterations) against mpmath at 40 digits; relative errors under 4e-14 and 2e-12 (the second
# scaled by erfc(x) < 5e-3 in erf)
_ERF_P = (0.00028742222684455254, 0.01760382431130983, -0.006384860588940222,
          0.1510894076294501, -0.4052654262456894, 0.497585664884585, -0.5073784968984991,
          1.1283791670955508)
_ERF_Q = (0.008940841509395711, 0.04046129627092823, 0.0650102202762353, -0.033624600118448006,
          -0.22361702012145274, 0.01921494378805709, 0.883680847999065, 1.0)
_ERFC_P = (0.003989209992678662, 0.1462294924011902, 0.45986892782081706,
           -0.19371426891944632, -0.30734291807901365, 0.9222019897519904, 0.5641895829540146)
_ERFC_Q = (0.022574491904323403, 0.35285891249631757, 0.8031187594902641,
           -0.44300034324816073, -0.3716803250154229, 1.759560425711568, 1.0)


def _horner(coefficients, t):
    r = np.full_like(t, coefficients[0])
    for c in coefficients[1:]:
        r *= t
        r += c
    return r


def _erf_near(x):
    t = x * x * 0.25
    return x * _horner(_ERF_P, t) / _horner(_ERF_Q, t)


def _erf_float64(x):
    """erf in float64 with numpy alone, by two rational approximations (relative error under
    4e-14: float32 results are correctly rounded, but for about one in a million at most)."""
    x = np.asarray(x, np.float64)
    a = np.abs(x)
    near = a <= 2.0
    if near.all():
        return _erf_near(x)
    out = np.empty_like(a)
    out[near] = _erf_near(x[near])
    far = ~near
    b = np.minimum(a[far], 6.0)         # (past 6, erf is 1 in float64)
    u = 4.0 / (b * b)
    r = 1.0 - np.exp(-b * b) / b * (_horner(_ERFC_P, u) / _horner(_ERFC_Q, u))
    out[far] = np.copysign(np.where(np.isnan(a[far]), np.nan, r), x[far])
    return out


def _scipy_loaded():
    return "scipy.special" in sys.modules


def _erf_small(sp_erf):
    """float32 erf: numpy alone while scipy is not imported and the numpy budget lasts
    (``_ERF_NUMPY_BUDGET``), scipy otherwise."""
    def f(x):
        if not _scipy_loaded() and _erf_numpy_done[0] + x.size <= _ERF_NUMPY_BUDGET:
            _erf_numpy_done[0] += x.size
            return _erf_float64(x)
        return sp_erf()(x)
    return f


def _special(name, sp_name, fix=None):
    """A scipy.special function (scipy is a dependency of jax itself; imported on first use),
    with ``fix(result, *args)`` where XLA's edge values differ from scipy's."""
    def make(p, ins, outs):
        d = np.dtype(outs[0].dtype)
        if d in _LOWP:
            d = _F32            # computed in float32, rounded by the low-precision wrapper
        if d.kind != "f":
            raise Unsupported(name, f"dtype {d}")
        if name == "erf" and d == _F32:
            fn = _erf_small(lambda: _scipy_special().erf)
            return lambda x: np.asarray(fn(x)).astype(d, copy=False)
        fn = getattr(_scipy_special(), sp_name)
        if fix is None:
            return lambda *a: np.asarray(fn(*a)).astype(d, copy=False)
        return lambda *a: np.asarray(fix(fn(*a), *a)).astype(d, copy=False)
    rule(name, shapeless=True)(make)


for _name, _sp, _fix in [
        ("erf", "erf", None), ("erfc", "erfc", None), ("erf_inv", "erfinv", None),
        # XLA: lgamma(-inf) = inf, digamma(0) = NaN, igamma(inf, x) = NaN
        ("lgamma", "gammaln", lambda r, x: np.where(x == -np.inf, np.inf, r)),
        ("digamma", "digamma", lambda r, x: np.where(x == 0, np.nan, r)),
        ("igamma", "gammainc", lambda r, a, x: np.where(np.isinf(a), np.nan, r)),
        ("igammac", "gammaincc", lambda r, a, x: np.where(np.isinf(a), np.nan, r)),
        ("bessel_i0e", "i0e", None), ("bessel_i1e", "i1e", None), ("zeta", "zeta", None),
        ("regularized_incomplete_beta", "betainc", None)]:
    _special(_name, _sp, _fix)


# ------------------------------------------------------------------ bits

def _shift_rule(kind):
    def make(p, ins, outs):
        d = np.dtype(outs[0].dtype)
        bits = d.itemsize * 8
        u = _unsigned(d)
        s = _signed(d)

        def f(x, y):
            amt = np.asarray(y).astype(u)        # XLA reads the amount as unsigned
            big = amt >= bits
            a = np.where(big, 0, amt)
            if kind == "left":
                r = np.left_shift(x.astype(u), a.astype(u)).astype(d)
                return np.where(big, np.zeros((), d), r)
            if kind == "logical":
                r = np.right_shift(x.astype(u), a.astype(u)).astype(d)
                return np.where(big, np.zeros((), d), r)
            xs = x.astype(s)
            r = np.right_shift(xs, np.where(big, bits - 1, a).astype(s))
            return r.astype(d)
        return f
    return make


for _k, _n in (("left", "shift_left"), ("logical", "shift_right_logical"),
               ("arith", "shift_right_arithmetic")):
    rule(_n, shapeless=True)(_shift_rule(_k))


@rule("population_count", shapeless=True)
def _popcnt(p, ins, outs):
    d = np.dtype(outs[0].dtype)
    u = _unsigned(d)
    return lambda x: np.bitwise_count(np.asarray(x).view(u)).astype(d)


@rule("clz", shapeless=True)
def _clz(p, ins, outs):
    d = np.dtype(outs[0].dtype)
    bits = d.itemsize * 8
    u = _unsigned(d)

    def f(x):
        v = np.asarray(x).astype(u)
        n = np.zeros(v.shape, np.int64)
        for shift in (32, 16, 8, 4, 2, 1):
            if shift >= bits:
                continue
            top = (v >> u.type(bits - shift)) == 0
            n += np.where(top, shift, 0)
            v = np.where(top, v << u.type(shift), v)
        n += (v >> u.type(bits - 1)) == 0
        return n.astype(d)
    return f


# ------------------------------------------------------------------ conversions

_INT_LIMITS = {}


@rule("convert_element_type", shapeless=True)
def _convert(p, ins, outs):
    src = np.dtype(ins[0].dtype)
    dst = np.dtype(p["new_dtype"])
    if src == dst:
        return lambda x: x
    if dst.kind == "b":
        if src.kind == "c":
            return lambda x: np.real(x) != 0      # jax converts complex to real first
        return lambda x: x != 0
    src_real = src.kind == "c" and dst.kind != "c"
    src_float = src.kind in "fc" or src in _LOWP
    if dst.kind in "iu" and src_float:
        info = np.iinfo(dst)
        lo, hi = info.min, info.max

        def f(x):
            if src_real:
                x = np.real(x)
            x = np.asarray(x)
            if x.dtype in _LOWP:
                x = x.astype(_F32)
            x64 = x.astype(np.float64)
            t = np.trunc(x64)
            r = np.where(np.isnan(t), 0, np.clip(t, lo, hi))
            out = r.astype(dst)
            # float64 cannot hold int64/uint64 max: saturate explicitly
            out = np.where(t >= float(hi), np.array(hi, dst), out)
            return np.where(np.isnan(t), np.zeros((), dst), out)
        return f
    if dst in _LOWP and src == np.float64:
        # XLA narrows float64 to float32 first (double rounding, as it does)
        return lambda x: np.asarray(x).astype(_F32).astype(dst)
    if dst in _LOWP and src.kind in "iu" and src.itemsize > 2:
        return lambda x: np.asarray(x).astype(_F32).astype(dst)
    if src_real:
        return lambda x: np.real(x).astype(dst)
    return lambda x: x.astype(dst) if x.__class__ is np.ndarray else np.asarray(x).astype(dst)


_MOVES.add("convert_element_type")


@rule("bitcast_convert_type", moves=True)
def _bitcast(p, ins, outs):
    dst = np.dtype(p["new_dtype"])
    shape = tuple(outs[0].shape)

    def f(x):
        x = np.ascontiguousarray(x)
        return x.view(dst).reshape(shape)
    return f


@rule("reduce_precision")
def _reduce_precision(p, ins, outs):
    eb, mb = int(p["exponent_bits"]), int(p["mantissa_bits"])
    d = np.dtype(outs[0].dtype)
    if d in _LOWP:
        d = _F32
    fi = np.finfo(d)
    src_m = fi.nmant
    src_e = fi.nexp
    nbits = d.itemsize * 8
    u = _unsigned(d)

    def f(x):
        x = np.asarray(x, d)
        xi = x.view(u).astype(np.uint64)
        if mb < src_m:
            last = 1 << (src_m - mb)
            base_bias = (last >> 1) - 1
            lastbit = (xi & last) >> (src_m - mb)
            xi = (xi + lastbit + base_bias) & ~np.uint64(last - 1) & np.uint64((1 << nbits) - 1)
        if eb < src_e:
            sign_mask = 1 << (nbits - 1)
            exp_mask = ((1 << src_e) - 1) << src_m
            bias = (1 << (src_e - 1)) - 1
            rbias = (1 << (eb - 1)) - 1
            rmax = bias + rbias
            rmin = bias - rbias
            xe = xi & np.uint64(exp_mask)
            over = xe > np.uint64(rmax << src_m)
            under = xe <= np.uint64(rmin << src_m)
            zero = xi & np.uint64(sign_mask)
            inf = zero | np.uint64(exp_mask)
            xi = np.where(over, inf, np.where(under, zero, xi))
        r = xi.astype(u).view(d)
        return np.where(np.isnan(x), x, r)
    return f


# ------------------------------------------------------------------ data movement

@rule("copy", "copy_p", "stop_gradient", moves=True, shapeless=True)
def _identity(p, ins, outs):
    return lambda x: x


@rule("optimization_barrier", "device_put", moves=True)
def _identity_many(p, ins, outs):
    return lambda *xs: list(xs)


@rule("sharding_constraint", "mesh_cast", "reshard", "pvary", "name", "layout_constraint",
      "with_memory_space_constraint", "random_clone", moves=True)
def _identity1(p, ins, outs):
    return lambda x: x


@rule("iota", moves=True)
def _iota(p, ins, outs):
    d = np.dtype(p["dtype"])
    shape = tuple(p["shape"])
    dim = int(p["dimension"])
    n = shape[dim]
    view = [1] * len(shape)
    view[dim] = n
    base = np.arange(n, dtype=d).reshape(view)
    val = np.ascontiguousarray(np.broadcast_to(base, shape))
    val.flags.writeable = False         # one array serves every call
    return lambda: val


@rule("broadcast_in_dim", moves=True)
def _broadcast_in_dim(p, ins, outs):
    shape = tuple(p["shape"])
    bd = tuple(p["broadcast_dimensions"])
    if len(ins) != 1:
        raise Unsupported("broadcast_in_dim", "dynamic shapes")
    in_shape = tuple(ins[0].shape)
    view = [1] * len(shape)
    for i, d in enumerate(bd):
        view[d] = in_shape[i]
    view = tuple(view)
    if view == shape:
        # the same elements in the same order: a reshape (np.reshape's own call)
        return lambda x: x.reshape(shape)
    # a C-contiguous operand (its dimensions longer than 1 at C strides) is broadcast by
    # a read-only view with stride 0 along the broadcast dimensions, made directly (what
    # np.broadcast_to makes, without its nditer); others take np.broadcast_to
    isz = np.dtype(outs[0].dtype).itemsize
    c = [0] * len(in_shape)
    step = isz
    for i in range(len(in_shape) - 1, -1, -1):
        c[i] = step
        step *= in_shape[i]
    big = [i for i, n in enumerate(in_shape) if n != 1]
    strides = [0] * len(shape)
    for i, d in enumerate(bd):
        if in_shape[i] != 1 and in_shape[i] == shape[d]:
            strides[d] = c[i]
    strides = tuple(strides)
    want = tuple(c[i] for i in big)
    pick = operator.itemgetter(*big) if len(big) > 1 else (
        (lambda st: (st[big[0]],)) if big else (lambda st: ()))
    new = np.ndarray

    def f(x):
        if x.itemsize == isz and pick(x.strides) == want:
            r = new(shape, x.dtype, x, 0, strides)
            r.flags.writeable = False
            return r
        return np.broadcast_to(np.reshape(x, view), shape)
    return f


@rule("reshape", moves=True)
def _reshape(p, ins, outs):
    shape = tuple(p["new_sizes"])
    if p.get("dimensions") is not None:
        dims = tuple(p["dimensions"])
        return lambda x: x.transpose(dims).reshape(shape)
    return lambda x: x.reshape(shape)


@rule("squeeze", moves=True)
def _squeeze(p, ins, outs):
    shape = tuple(outs[0].shape)
    return lambda x: x.reshape(shape)


@rule("expand_dims", moves=True)
def _expand_dims(p, ins, outs):
    shape = tuple(outs[0].shape)
    return lambda x: x.reshape(shape)


@rule("transpose", moves=True, shapeless=True)
def _transpose(p, ins, outs):
    perm = tuple(p["permutation"])
    return lambda x: x.transpose(perm)


@rule("rev", moves=True)
def _rev(p, ins, outs):
    dims = tuple(p["dimensions"])
    return lambda x: np.flip(x, dims) if dims else x


@rule("concatenate", moves=True, shapeless=True)
def _concatenate(p, ins, outs):
    dim = int(p["dimension"])
    return lambda *xs: np.concatenate(xs, axis=dim)


@rule("split", moves=True)
def _split(p, ins, outs):
    sizes = [int(s) for s in p["sizes"]]
    axis = int(p["axis"])
    cuts = list(itertools.accumulate(sizes))[:-1]
    return lambda x: np.split(x, cuts, axis=axis)


@rule("slice", moves=True)
def _slice(p, ins, outs):
    starts = p["start_indices"]
    limits = p["limit_indices"]
    strides = p["strides"] or (1,) * len(starts)
    idx = tuple(slice(int(s), int(e), int(st)) for s, e, st in zip(starts, limits, strides))
    return lambda x: x[idx]


@rule("pad", moves=True)
def _pad(p, ins, outs):
    config = [tuple(int(v) for v in c) for c in p["padding_config"]]
    out_shape = tuple(outs[0].shape)
    d = outs[0].dtype

    def f(x, pv):
        x = np.asarray(x)
        # interior padding and positive edge padding into a big buffer, then crop negatives
        full = []
        place = []
        crop = []
        for n, (lo, hi, it) in zip(x.shape, config):
            core_n = n + max(n - 1, 0) * it
            full.append(max(lo, 0) + core_n + max(hi, 0))
            place.append(slice(max(lo, 0), max(lo, 0) + core_n, it + 1))
            crop.append(slice(-min(lo, 0), max(lo, 0) + core_n + max(hi, 0) + min(hi, 0)))
        buf = np.full(full, pv, dtype=d)
        buf[tuple(place)] = x
        return buf[tuple(crop)].reshape(out_shape)
    return f


@rule("dynamic_slice", moves=True)
def _dynamic_slice(p, ins, outs):
    sizes = tuple(int(s) for s in p["slice_sizes"])
    shape = ins[0].shape

    def f(x, *idx):
        sl = []
        for i, n, s in zip(idx, shape, sizes):
            i = min(max(int(i), 0), n - s)
            sl.append(slice(i, i + s))
        return x[tuple(sl)]
    return f


@rule("dynamic_update_slice", moves=True)
def _dynamic_update_slice(p, ins, outs):
    shape = ins[0].shape
    ushape = ins[1].shape

    def f(x, upd, *idx):
        sl = []
        for i, n, s in zip(idx, shape, ushape):
            i = min(max(int(i), 0), n - s)
            sl.append(slice(i, i + s))
        out = np.array(x, copy=True)
        out[tuple(sl)] = upd
        return out
    return f


# ------------------------------------------------------------------ gather / scatter

try:
    from numpy._core.umath import clip as _uclip        # (np.clip's ufunc, without its Python)
except ImportError:
    _uclip = np.clip


def _mode_name(mode):
    return getattr(mode, "name", str(mode)).upper()


@rule("gather", moves=True)
def _gather(p, ins, outs):
    dn = p["dimension_numbers"]
    offset_dims = tuple(dn.offset_dims)
    collapsed = set(dn.collapsed_slice_dims)
    start_map = tuple(dn.start_index_map)
    obatch = tuple(getattr(dn, "operand_batching_dims", ()))
    ibatch = tuple(getattr(dn, "start_indices_batching_dims", ()))
    sizes = tuple(int(s) for s in p["slice_sizes"])
    mode = _mode_name(p["mode"])
    fill = p.get("fill_value")
    op_shape = tuple(ins[0].shape)
    out_shape = tuple(outs[0].shape)
    rank = len(op_shape)
    out_rank = len(out_shape)
    window = [d for d in range(rank) if d not in collapsed and d not in obatch]
    batch_out = [d for d in range(out_rank) if d not in offset_dims]
    d = np.dtype(outs[0].dtype)
    if "FILL" in mode:
        if fill is None:
            fill = np.nan if d.kind in "fc" else (
                True if d.kind == "b" else (np.iinfo(d).min if d.kind == "i" else np.iinfo(d).max))
            if d.kind == "i":
                fill = np.iinfo(d).min
        fillv = np.array(fill).astype(d)
    # offsets along the output's offset dims, as index arrays over the whole output
    offs = {}
    for od, wd in zip(offset_dims, window):
        view = [1] * out_rank
        view[od] = out_shape[od]
        offs[wd] = np.arange(out_shape[od]).reshape(view)
    upper = np.array([op_shape[m] - sizes[m] for m in start_map], np.int64)
    # each operand dimension's index array over the output, made once where it does not
    # depend on the indices: (k, its clip bound, its offsets) for a start index (k: its
    # column in the indices), (None, array) otherwise; the start indices' batch shape
    # ``bshape`` sits at the output's batch dims, with 1 at the offset dims
    bshape = tuple(ins[1].shape[:-1])
    ex = [1] * out_rank
    for pos, n in zip(batch_out, bshape):
        ex[pos] = n
    ex = tuple(ex)
    dims = []
    for dim in range(rank):
        if dim in obatch:
            ib = ibatch[obatch.index(dim)]
            view = [1] * len(bshape)
            view[ib] = bshape[ib]
            st = np.broadcast_to(np.arange(bshape[ib]).reshape(view), bshape)
            if dim in start_map:
                st = np.clip(st, 0, op_shape[dim] - sizes[dim])
        elif dim in start_map:
            dims.append((start_map.index(dim), op_shape[dim] - sizes[dim], offs.get(dim)))
            continue
        else:
            st = np.zeros(bshape, np.int64)
        st = st.reshape(ex)
        if dim in offs:
            st = st + offs[dim]
        dims.append((None, st, None))
    fill_mode = "FILL" in mode
    empty = 0 in op_shape or 0 in out_shape
    clip = _uclip

    def f(x, idx):
        idx = np.asarray(idx).astype(np.int64)
        if fill_mode:
            ok = np.logical_and.reduce((idx >= 0) & (idx <= upper), -1)
        full = []
        for k, st, o in dims:
            if k is not None:
                st = clip(idx[..., k], 0, st).reshape(ex)
                if o is not None:
                    st = st + o
            full.append(st)
        if empty:
            return np.zeros(out_shape, d)
        r = x[tuple(full)]
        if r.shape != out_shape:
            r = np.broadcast_to(r, out_shape)
        if fill_mode:
            r = np.where(ok.reshape(ex), r, fillv)
        return r
    return f


_SCATTER_UFUNC = {"scatter-add": np.add, "scatter_add": np.add, "scatter-mul": np.multiply,
                  "scatter_mul": np.multiply, "scatter-min": None, "scatter_min": None,
                  "scatter-max": None, "scatter_max": None, "scatter": None,
                  "scatter-sub": np.subtract, "scatter_sub": np.subtract}


def _scatter_rule(name):
    def make(p, ins, outs):
        dn = p["dimension_numbers"]
        uwin = tuple(dn.update_window_dims)
        inserted = set(dn.inserted_window_dims)
        smap = tuple(dn.scatter_dims_to_operand_dims)
        obatch = tuple(getattr(dn, "operand_batching_dims", ()))
        ibatch = tuple(getattr(dn, "scatter_indices_batching_dims", ()))
        mode = _mode_name(p["mode"])
        op_shape = tuple(ins[0].shape)
        upd_shape = tuple(ins[2].shape)
        rank = len(op_shape)
        urank = len(upd_shape)
        window = [dd for dd in range(rank) if dd not in inserted and dd not in obatch]
        usc = [dd for dd in range(urank) if dd not in uwin]
        wsize = {wd: upd_shape[ud] for wd, ud in zip(window, uwin)}
        sizes = [wsize.get(dd, 1) for dd in range(rank)]
        kind = name.replace("_", "-")
        if kind == "scatter-min":
            uf = np.minimum
        elif kind == "scatter-max":
            uf = np.maximum
        else:
            uf = _SCATTER_UFUNC[name]

        # each operand dimension's index array over the updates, made once where it does not
        # depend on the indices: (k, window offsets or None) for a start index (column k of
        # the indices), (None, array) otherwise; the indices' batch shape ``bshape`` sits at
        # the update scatter dims, with 1 at the update window dims
        bshape = tuple(ins[1].shape[:-1])
        ex = [1] * urank
        for pos, n in zip(usc, bshape):
            ex[pos] = n
        ex = tuple(ex)
        his = [op_shape[m] - sizes[m] for m in smap]
        clip_mode = mode == "CLIP"
        dims = []
        for dim in range(rank):
            w = None
            if dim in wsize:
                ud = uwin[window.index(dim)]
                view = [1] * urank
                view[ud] = upd_shape[ud]
                w = np.arange(upd_shape[ud]).reshape(view)
            if dim in smap and dim not in obatch:
                dims.append((smap.index(dim), w))
                continue
            if dim in obatch:
                ib = ibatch[obatch.index(dim)]
                view = [1] * len(bshape)
                view[ib] = bshape[ib]
                st = np.broadcast_to(np.arange(bshape[ib]).reshape(view), bshape)
            else:
                st = np.zeros(bshape, np.int64)
            st = st.reshape(ex)
            if w is not None:
                st = st + w
            dims.append((None, np.broadcast_to(st, upd_shape)))
        empty = 0 in upd_shape or 0 in op_shape
        nk = len(smap)

        def f(x, idx, upd):
            out = np.array(x, copy=True)
            idx = np.asarray(idx).astype(np.int64)
            cols = [idx[..., k] for k in range(nk)]
            if clip_mode:
                cols = [_uclip(c, 0, hi) for c, hi in zip(cols, his)]
            valid = np.ones(bshape, bool)
            for c, hi in zip(cols, his):
                valid &= (c >= 0) & (c <= hi)
            full = []
            for k, w in dims:
                if k is None:
                    full.append(w)
                    continue
                st = cols[k].reshape(ex)
                if w is not None:
                    st = st + w
                full.append(np.broadcast_to(st, upd_shape))
            if empty:
                return out
            if valid.all():
                # (every update lands: the masks would take every element, in order)
                sel = tuple(a.reshape(-1) for a in full)
                u = (upd if upd.shape == upd_shape else np.broadcast_to(upd, upd_shape)
                     ).reshape(-1)
            else:
                v = np.broadcast_to(valid.reshape(ex), upd_shape)
                sel = tuple(a[v] for a in full)
                u = np.broadcast_to(upd, upd_shape)[v]
            if uf is None:
                out[sel] = u
            else:
                uf.at(out, sel, u)
            return out
        return f
    return make


for _name in _SCATTER_UFUNC:
    RULES[_name] = _scatter_rule(_name)


# ------------------------------------------------------------------ reductions

def _reduce_rule(np_fn, init_fn=None):
    def make(p, ins, outs):
        axes = tuple(int(a) for a in p["axes"])
        d = np.dtype(outs[0].dtype)
        red = _UFUNC_REDUCE.get(np_fn)
        if red is not None and (d.kind in "fiu" or d.kind == "c" and red[1] is None):
            # the ufunc's reduce, called as np.sum / np.prod / np.max / np.min call it
            uf, init = red
            if init is None:
                def f(x):
                    r = uf(x, axes, d)
                    return r if r.__class__ is np.ndarray else np.asarray(r).astype(
                        d, copy=False)
                return f
            init = init(d)

            def f(x):
                r = uf(x, axis=axes, initial=init)
                return r.astype(d, copy=False) if r.__class__ is np.ndarray else \
                    np.asarray(r).astype(d, copy=False)
            return f

        def f(x):
            r = np_fn(x, axis=axes, d=d)
            return np.asarray(r).astype(d, copy=False)
        return f
    return make


def _sum(x, axis, d):
    return np.sum(x, axis=axis, dtype=d if d.kind != "b" else None)


def _prod(x, axis, d):
    return np.prod(x, axis=axis, dtype=d if d.kind != "b" else None)


def _rmax(x, axis, d):
    if d.kind == "b":
        return np.any(x, axis=axis)
    init = -np.inf if d.kind == "f" else np.iinfo(d).min
    return np.max(x, axis=axis, initial=init)


def _rmin(x, axis, d):
    if d.kind == "b":
        return np.all(x, axis=axis)
    init = np.inf if d.kind == "f" else np.iinfo(d).max
    return np.min(x, axis=axis, initial=init)


def _rand(x, axis, d):
    if d.kind == "b":
        return np.all(x, axis=axis)
    return np.bitwise_and.reduce(x, axis=axis, initial=np.array(-1).astype(d)) if x.size else \
        np.full(np.sum(x, axis=axis).shape, np.array(-1).astype(d))


def _ror(x, axis, d):
    if d.kind == "b":
        return np.any(x, axis=axis)
    return np.bitwise_or.reduce(x, axis=axis, initial=0) if x.size else \
        np.zeros(np.sum(x, axis=axis).shape, d)


def _rxor(x, axis, d):
    if d.kind == "b":
        return np.logical_xor.reduce(x, axis=axis) if x.size else \
            np.zeros(np.sum(x, axis=axis).shape, bool)
    return np.bitwise_xor.reduce(x, axis=axis, initial=0) if x.size else \
        np.zeros(np.sum(x, axis=axis).shape, d)


_UFUNC_REDUCE = {
    _sum: (np.add.reduce, None), _prod: (np.multiply.reduce, None),
    _rmax: (np.maximum.reduce, lambda d: -np.inf if d.kind == "f" else np.iinfo(d).min),
    _rmin: (np.minimum.reduce, lambda d: np.inf if d.kind == "f" else np.iinfo(d).max)}

for _n, _fn in (("sum", _sum), ("prod", _prod), ("max", _rmax), ("min", _rmin),
                ("and", _rand), ("or", _ror), ("xor", _rxor)):
    rule("reduce_" + _n, shapeless=True)(_reduce_rule(_fn))


def _arg_rule(np_fn):
    def make(p, ins, outs):
        axis = int(p["axes"][0])
        d = np.dtype(p["index_dtype"])
        return lambda x: np_fn(x, axis=axis).astype(d)
    return make


rule("argmax", shapeless=True)(_arg_rule(np.argmax))
rule("argmin", shapeless=True)(_arg_rule(np.argmin))


def _cum_rule(kind):
    def make(p, ins, outs):
        axis = int(p["axis"])
        rev = bool(p["reverse"])
        d = np.dtype(outs[0].dtype)

        def f(x):
            if rev:
                x = np.flip(x, axis)
            if kind == "sum":
                r = np.cumsum(x, axis=axis, dtype=d)
            elif kind == "prod":
                r = np.cumprod(x, axis=axis, dtype=d)
            elif kind == "max":
                r = np.maximum.accumulate(x, axis=axis) if x.shape[axis] else x
            elif kind == "min":
                r = np.minimum.accumulate(x, axis=axis) if x.shape[axis] else x
            else:
                r = np.logaddexp.accumulate(x, axis=axis) if x.shape[axis] else x
            if rev:
                r = np.flip(r, axis)
            return np.asarray(r).astype(d, copy=False)
        return f
    return make


for _k in ("sum", "prod", "max", "min", "logsumexp"):
    rule("cum" + _k, shapeless=True)(_cum_rule(_k))


# ------------------------------------------------------------------ sort, top_k

def _sort_key(x):
    """XLA's sort order as a numpy sort key: -0.0 equal to 0.0, every NaN last."""
    if x.dtype.kind == "f" or x.dtype in _LOWP:
        x = np.asarray(x).astype(np.float64) if x.dtype in _LOWP else x
        return [np.where(x == 0, 0, x)]
    if x.dtype.kind == "c":
        return [np.where(x.real == 0, 0, x.real), np.where(x.imag == 0, 0, x.imag)]
    return [x]


def _along_last(shape):
    """The index arrays ``np.take_along_axis(a, i, axis=-1)`` makes for an ``a`` of ``shape``
    (its other dimensions' aranges), made once: ``a[pre + (i,)]`` is its result."""
    n = len(shape)
    return tuple(np.arange(k).reshape((1,) * j + (-1,) + (1,) * (n - j - 1))
                 for j, k in enumerate(shape[:-1]))


@rule("sort", moves=True)
def _sort(p, ins, outs):
    dim = int(p["dimension"])
    nk = int(p["num_keys"])
    shape = tuple(ins[0].shape)
    rank = len(shape)
    # np.moveaxis(o, dim, -1) and back, as the transposes it makes (none for the last axis)
    d = dim % rank
    to_last = tuple(i for i in range(rank) if i != d) + (d,)
    back = tuple(np.argsort(to_last))
    last = d == rank - 1
    pre = _along_last(tuple(shape[i] for i in to_last))

    def f(*ops):
        ops = [np.asarray(o) for o in ops] if last else \
            [np.asarray(o).transpose(to_last) for o in ops]
        keys = []
        for o in ops[:nk]:
            keys.extend(_sort_key(o))
        if ops[0].size == 0:
            return ops if last else [o.transpose(back) for o in ops]
        if len(keys) == 1:
            perm = keys[0].argsort(axis=-1, kind="stable")
        else:
            perm = np.lexsort(keys[::-1], axis=-1)
        at = pre + (perm,)
        return [o[at] for o in ops] if last else [o[at].transpose(back) for o in ops]
    return f


@rule("top_k", moves=True)
def _top_k(p, ins, outs):
    k = int(p["k"])
    axis = int(p.get("axis", -1))
    idx_dtype = np.dtype(outs[1].dtype)

    def f(x):
        x = np.moveaxis(np.asarray(x), axis, -1)
        if x.dtype.kind == "f" or x.dtype in _LOWP:
            xf = x.astype(np.float64)
            nan = np.isnan(xf)
            keys = [np.where(nan, 0, -xf), ~nan]
        elif x.dtype.kind == "b":
            keys = [~x]
        else:
            keys = [~x]
        perm = np.lexsort(keys, axis=-1)[..., :k] if x.size else \
            np.zeros(x.shape[:-1] + (k,), np.int64)
        vals = np.take_along_axis(x, perm, axis=-1) if x.size else \
            np.zeros(x.shape[:-1] + (k,), x.dtype)
        return [np.moveaxis(vals, -1, axis), np.moveaxis(perm.astype(idx_dtype), -1, axis)]
    return f


# ------------------------------------------------------------------ dot, conv

def _find_blas_local():
    """OpenBLAS's ``openblas_set_num_threads_local`` (the calling thread's BLAS threads), or
    None. Small products run single-threaded: on a busy machine a second BLAS thread waiting
    for a core made a 64x784x256 product take 50 ms instead of 0.4 ms."""
    import ctypes
    import glob
    import os
    libdir = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in glob.glob(os.path.join(libdir, "*openblas*")):
        try:
            fn = ctypes.CDLL(path).openblas_set_num_threads_local
        except (OSError, AttributeError):
            continue
        fn.argtypes = [ctypes.c_int]
        fn.restype = ctypes.c_int
        return fn
    return None


_blas_local = _find_blas_local()
_SMALL_PRODUCT = 1 << 25          # multiply-adds below which a product runs on one BLAS thread


def _matmul(x, y, B, work):
    if _blas_local is None or work >= _SMALL_PRODUCT:
        return np.dot(x[0], y[0]) if B == 1 else np.matmul(x, y)
    prev = _blas_local(1)
    try:
        return np.dot(x[0], y[0]) if B == 1 else np.matmul(x, y)
    finally:
        _blas_local(prev)


@rule("dot_general")
def _dot_general(p, ins, outs):
    (lc, rc), (lb, rb) = p["dimension_numbers"]
    lc, rc, lb, rb = map(tuple, (lc, rc, lb, rb))
    ls, rs = tuple(ins[0].shape), tuple(ins[1].shape)
    lf = [d for d in range(len(ls)) if d not in lc and d not in lb]
    rf = [d for d in range(len(rs)) if d not in rc and d not in rb]
    d = np.dtype(outs[0].dtype)
    cd = d
    if d.kind == "b":
        cd = np.dtype(np.int32)
    B = math.prod(ls[i] for i in lb)
    K = math.prod(ls[i] for i in lc)
    M = math.prod(ls[i] for i in lf)
    N = math.prod(rs[i] for i in rf)
    lperm = tuple(lb) + tuple(lf) + tuple(lc)
    rperm = tuple(rb) + tuple(rc) + tuple(rf)
    oshape = tuple(outs[0].shape)
    work = B * M * N * K

    def f(x, y):
        x = x.transpose(lperm).reshape(B, M, K)
        y = y.transpose(rperm).reshape(B, K, N)
        if x.dtype != cd:
            x = x.astype(cd)
        if y.dtype != cd:
            y = y.astype(cd)
        r = _matmul(x, y, B, work)
        if d.kind == "b":
            r = r != 0
        return r.reshape(oshape).astype(d, copy=False)
    return f


@rule("conv_general_dilated")
def _conv(p, ins, outs):
    dn = p["dimension_numbers"]
    lhs_spec, rhs_spec, out_spec = (tuple(s) for s in (dn.lhs_spec, dn.rhs_spec, dn.out_spec))
    strides = tuple(p["window_strides"])
    padding = [tuple(pp) for pp in p["padding"]]
    lhs_dil = tuple(p["lhs_dilation"])
    rhs_dil = tuple(p["rhs_dilation"])
    G = int(p["feature_group_count"])
    BG = int(p["batch_group_count"])
    d = np.dtype(outs[0].dtype)
    nsp = len(strides)
    out_perm = tuple(np.argsort(out_spec))
    letters = "ABCDEFGHIJKLMNOPQRSTUVW"
    sp = letters[:nsp]
    kl = letters[nsp:2 * nsp]

    def f(x, w):
        x = np.transpose(x, lhs_spec).astype(d, copy=False)
        w = np.transpose(w, rhs_spec).astype(d, copy=False)
        N, C = x.shape[:2]
        # lhs dilation and padding (negative padding crops)
        cfg = [(0, 0, 0), (0, 0, 0)] + [(lo, hi, ld - 1) for (lo, hi), ld in
                                        zip(padding, lhs_dil)]
        x = _pad_np(x, cfg, np.zeros((), d))
        ks = w.shape[2:]
        eff = [(k - 1) * rd + 1 for k, rd in zip(ks, rhs_dil)]
        out_sp = [max((n - e) // s + 1, 0) if n >= e else 0
                  for n, e, s in zip(x.shape[2:], eff, strides)]
        O = w.shape[0]
        if N == 0 or 0 in out_sp or O == 0 or x.size == 0:
            r = np.zeros((N // BG, O) + tuple(out_sp), d)
            return np.transpose(r, out_perm)
        win = np.lib.stride_tricks.sliding_window_view(x, eff, axis=tuple(range(2, 2 + nsp)))
        win = win[(slice(None), slice(None))
                  + tuple(slice(None, None, s) for s in strides)
                  + tuple(slice(None, None, rd) for rd in rhs_dil)]
        win = win[(slice(None), slice(None)) + tuple(slice(0, o) for o in out_sp)]
        if BG > 1:
            Nb = N // BG
            win = win.reshape((BG, Nb, C) + win.shape[2:])
            wg = w.reshape((BG, O // BG) + w.shape[1:])
            r = np.einsum(f"gnc{sp}{kl},goc{kl}->ngo{sp}", win, wg, optimize=True)
            r = r.reshape((Nb, O) + r.shape[3:])
        else:
            Cg = C // G
            win = win.reshape((N, G, Cg) + win.shape[2:])
            wg = w.reshape((G, O // G) + w.shape[1:])
            r = np.einsum(f"ngc{sp}{kl},goc{kl}->ngo{sp}", win, wg, optimize=True)
            r = r.reshape((N, O) + r.shape[3:])
        return np.transpose(r.astype(d, copy=False), out_perm)
    return f


def _pad_np(x, config, pv):
    full, place, crop = [], [], []
    for n, (lo, hi, it) in zip(x.shape, config):
        core_n = n + max(n - 1, 0) * it
        full.append(max(lo, 0) + core_n + max(hi, 0))
        place.append(slice(max(lo, 0), max(lo, 0) + core_n, it + 1))
        crop.append(slice(-min(lo, 0), max(lo, 0) + core_n + max(hi, 0) + min(hi, 0)))
    if all(c == (0, 0, 0) for c in config):
        return x
    buf = np.full(full, pv, dtype=x.dtype)
    buf[tuple(place)] = x
    return buf[tuple(crop)]


# ------------------------------------------------------------------ windows

def _window_offsets(wdims, wdil):
    return list(itertools.product(*[range(0, w * dl, dl) for w, dl in zip(wdims, wdil)]))


def _window_slices(off, strides, out_shape):
    return tuple(slice(o, o + (n - 1) * s + 1, s) if n else slice(0, 0)
                 for o, s, n in zip(off, strides, out_shape))


def _reduce_window_rule(kind):
    def make(p, ins, outs):
        wd = tuple(p["window_dimensions"])
        ws = tuple(p["window_strides"])
        pad = [tuple(pp) for pp in p["padding"]]
        bd = tuple(p["base_dilation"])
        wdl = tuple(p["window_dilation"])
        d = np.dtype(outs[0].dtype)
        out_shape = tuple(outs[0].shape)
        offs = _window_offsets(wd, wdl)
        if kind == "sum":
            init, comb = np.zeros((), d), np.add
        elif kind == "max":
            init = np.array(-np.inf if d.kind == "f" else (
                False if d.kind == "b" else np.iinfo(d).min)).astype(d)
            comb = RULES["max"]({}, [ins[0], ins[0]], outs)
        else:
            init = np.array(np.inf if d.kind == "f" else (
                True if d.kind == "b" else np.iinfo(d).max)).astype(d)
            comb = RULES["min"]({}, [ins[0], ins[0]], outs)

        def f(x):
            x = _pad_np(np.asarray(x), [(lo, hi, b - 1) for (lo, hi), b in zip(pad, bd)], init)
            acc = np.full(out_shape, init, d)
            if 0 in out_shape:
                return acc
            for off in offs:
                acc = comb(acc, x[_window_slices(off, ws, out_shape)])
            return np.asarray(acc).astype(d, copy=False)
        return f
    return make


RULES["reduce_window_sum"] = _reduce_window_rule("sum")
RULES["reduce_window_max"] = _reduce_window_rule("max")
RULES["reduce_window_min"] = _reduce_window_rule("min")


@rule("reduce_window")
def _reduce_window(p, ins, outs):
    closed = p["jaxpr"]
    consts = tuple(p.get("consts", ()))
    plan = _plan(closed.jaxpr if hasattr(closed, "jaxpr") else closed,
                 closed.consts if hasattr(closed, "consts") else consts)
    wd = tuple(p["window_dimensions"])
    ws = tuple(p["window_strides"])
    pad = [tuple(pp) for pp in p["padding"]]
    bd = tuple(p["base_dilation"])
    wdl = tuple(p["window_dilation"])
    n = len(outs)
    out_shape = tuple(outs[0].shape)
    offs = _window_offsets(wd, wdl)

    def f(*args):
        xs, inits = args[:n], args[n:]
        xs = [_pad_np(np.asarray(x), [(lo, hi, b - 1) for (lo, hi), b in zip(pad, bd)], i)
              for x, i in zip(xs, inits)]
        accs = [np.full(out_shape, i, o.dtype) for i, o in zip(inits, outs)]
        if 0 in out_shape:
            return accs
        for off in offs:
            sl = _window_slices(off, ws, out_shape)
            accs = _exec(plan, accs + [x[sl] for x in xs])
        return [np.broadcast_to(a, out_shape) for a in accs]
    return f


def _select_fn(prim):
    name = getattr(prim, "name", str(prim))
    if name in ("ge", "gt", "le", "lt"):
        return {"ge": np.greater_equal, "gt": np.greater, "le": np.less_equal,
                "lt": np.less}[name]
    raise Unsupported("select_and_scatter_add", f"select_prim {name}")


@rule("select_and_scatter_add")
def _select_and_scatter_add(p, ins, outs):
    sel = _select_fn(p["select_prim"])
    wd = tuple(p["window_dimensions"])
    ws = tuple(p["window_strides"])
    pad = [tuple(pp) for pp in p["padding"]]
    offs = _window_offsets(wd, (1,) * len(wd))
    op_shape = tuple(ins[1].shape)
    src_shape = tuple(ins[0].shape)
    d = np.dtype(outs[0].dtype)

    def f(source, operand):
        padded_shape = tuple(n + lo + hi for n, (lo, hi) in zip(op_shape, pad))
        x = np.zeros(padded_shape, operand.dtype)
        valid = np.zeros(padded_shape, bool)
        inner = tuple(slice(lo, lo + n) for n, (lo, _) in zip(op_shape, pad))
        x[inner] = operand
        valid[inner] = True
        best = None
        have = np.zeros(src_shape, bool)
        where = np.zeros(src_shape, np.int64)
        for k, off in enumerate(offs):
            sl = _window_slices(off, ws, src_shape)
            cand, ok = x[sl], valid[sl]
            if best is None:
                best = np.zeros(src_shape, operand.dtype)
            take = ok & (~have | ~sel(best, cand))
            best = np.where(take, cand, best)
            where = np.where(take, k, where)
            have |= ok
        out = np.zeros(padded_shape, d)
        if 0 in src_shape:
            return out[inner]
        grid = np.indices(src_shape)
        offs_arr = np.array(offs, np.int64).reshape(len(offs), len(wd))
        pos = tuple(grid[i] * ws[i] + offs_arr[where, i] for i in range(len(wd)))
        sel_pos = tuple(q[have] for q in pos)
        np.add.at(out, sel_pos, np.asarray(source, d)[have])
        return out[inner]
    return f


@rule("select_and_gather_add")
def _select_and_gather_add(p, ins, outs):
    sel = _select_fn(p["select_prim"])
    wd = tuple(p["window_dimensions"])
    ws = tuple(p["window_strides"])
    pad = [tuple(pp) for pp in p["padding"]]
    bd = tuple(p["base_dilation"])
    wdl = tuple(p["window_dilation"])
    offs = _window_offsets(wd, wdl)
    out_shape = tuple(outs[0].shape)
    name = getattr(p["select_prim"], "name", "")
    d = np.dtype(outs[0].dtype)

    def f(tangents, operand):
        od = operand.dtype
        init = np.array(-np.inf if name in ("ge", "gt") else np.inf).astype(od)
        cfg = [(lo, hi, b - 1) for (lo, hi), b in zip(pad, bd)]
        xo = _pad_np(np.asarray(operand), cfg, init)
        xt = _pad_np(np.asarray(tangents, d), cfg, np.zeros((), d))
        acc_o = np.full(out_shape, init, od)
        acc_t = np.zeros(out_shape, d)
        if 0 in out_shape:
            return acc_t
        for off in offs:
            sl = _window_slices(off, ws, out_shape)
            keep = sel(acc_o, xo[sl])
            acc_o = np.where(keep, acc_o, xo[sl])
            acc_t = np.where(keep, acc_t, xt[sl])
        return acc_t
    return f


# ------------------------------------------------------------------ control flow and calls

def _sub_closed(closed):
    return _plan(closed.jaxpr, closed.consts)


@rule("jit", "pjit", "closed_call", "core_call", "custom_jvp_call", "custom_jvp_call_jaxpr",
      "custom_vjp_call",
      "custom_vjp_call_jaxpr", "checkpoint", "remat", "remat2", moves=True)
def _call(p, ins, outs):
    j = p.get("jaxpr") or p.get("call_jaxpr") or p.get("fun_jaxpr")
    if j is None:
        raise Unsupported("call", "no jaxpr param")
    if hasattr(j, "consts"):
        plan = _sub_closed(j)
    else:
        plan = _plan(j, ())
    return lambda *xs: _exec(plan, xs)


@rule("scan", moves=True)
def _scan(p, ins, outs):
    plan = _sub_closed(p["jaxpr"])
    length = int(p["length"])
    rev = bool(p["reverse"])
    nc = int(p["num_consts"])
    ncar = int(p["num_carry"])
    y_avals = [_physical(a) for a in outs[ncar:]]

    def f(*args):
        consts = list(args[:nc])
        carry = list(args[nc:nc + ncar])
        xs = args[nc + ncar:]
        ys = [np.empty(a.shape, a.dtype) for a in y_avals]
        order = range(length - 1, -1, -1) if rev else range(length)
        for i in order:
            r = _exec(plan, consts + carry + [x[i] for x in xs])
            carry = r[:ncar]
            for y, v in zip(ys, r[ncar:]):
                y[i] = v
        return carry + ys
    return f


@rule("while", moves=True)
def _while(p, ins, outs):
    cplan = _sub_closed(p["cond_jaxpr"])
    bplan = _sub_closed(p["body_jaxpr"])
    cn = int(p["cond_nconsts"])
    bn = int(p["body_nconsts"])

    if p["cond_jaxpr"].out_avals[0].shape:
        # a batched predicate (from vmap): loop while any lane runs, and only running lanes
        # take the body's new values
        def f(*args):
            cc = list(args[:cn])
            bc = list(args[cn:cn + bn])
            carry = list(args[cn + bn:])
            while True:
                pred = np.asarray(_exec(cplan, cc + carry)[0])
                if not pred.any():
                    return carry
                new = _exec(bplan, bc + carry)
                carry = [np.where(pred.reshape(pred.shape + (1,) * (np.ndim(n) - pred.ndim)),
                                  n, c) for n, c in zip(new, carry)]
        return f

    def f(*args):
        cc = list(args[:cn])
        bc = list(args[cn:cn + bn])
        carry = list(args[cn + bn:])
        while bool(_exec(cplan, cc + carry)[0]):
            carry = _exec(bplan, bc + carry)
        return carry
    return f


@rule("cond", moves=True)
def _cond(p, ins, outs):
    plans = [_sub_closed(b) for b in p["branches"]]
    n = len(plans)

    def f(index, *args):
        i = min(max(int(index), 0), n - 1)
        return _exec(plans[i], args)
    return f


@rule("platform_index", moves=True)
def _platform_index(p, ins, outs):
    # the branch for the CPU, else the default branch (platforms None)
    platforms = p["platforms"]
    i = next((k for k, g in enumerate(platforms) if g is not None and "cpu" in g),
             next((k for k, g in enumerate(platforms) if g is None), 0))
    val = np.array(i, np.int32)
    val.flags.writeable = False
    return lambda *a: val


@rule("pure_callback", moves=True)
def _pure_callback(p, ins, outs):
    cb = p["callback"]

    def f(*args):
        r = cb(*args)
        return [np.asarray(v, o.dtype).reshape(o.shape) for v, o in
                zip(jax.tree_util.tree_leaves(r), outs)]
    return f


# ------------------------------------------------------------------ random numbers

@rule("random_wrap", "random_unwrap", moves=True)
def _key_identity(p, ins, outs):
    return lambda x: x


def _key_impl(p, ins, outs, base_fn, *what):
    """A key primitive: jax's own implementation on the key data, traced once to a jaxpr (kept
    on disk by torchlike._trace_store under ``what``: the primitive's name, its PRNG
    implementation's name and plain params and shapes)."""
    from . import _trace_store
    ident = repr(("interpret-key",) + what)
    closed = None
    if " at 0x" not in ident:
        got = _trace_store.get(ident, ())
        closed = got[0] if got is not None else None
    if closed is None:
        closed = base_fn()
        if " at 0x" not in ident:
            _trace_store.put(ident, (), closed, jax.tree_util.tree_structure(
                tuple(range(len(closed.jaxpr.outvars)))))
    plan = _sub_closed(closed)
    return lambda *xs: _exec(plan, xs)[0]


def _trace_key(fn, *specs):
    """The jaxpr of a key primitive's implementation (traced as the dispatch path traces)."""
    from . import _tiers
    return _tiers.trace(fn, specs)[0]


def _phys(aval):
    impl = aval.dtype._impl
    return jax.ShapeDtypeStruct(tuple(aval.shape) + tuple(impl.key_shape), np.uint32), impl


@rule("random_bits")
def _random_bits(p, ins, outs):
    from jax._src.random import prng
    phys, impl = _phys(ins[0])
    nd = len(ins[0].shape)
    if impl.name == "threefry2x32" and nd == 0 and jax.config.jax_threefry_partitionable:
        return _threefry_bits(int(p["bit_width"]), tuple(p["shape"]))
    return _key_impl(p, ins, outs, lambda: _trace_key(
        lambda b: prng.random_bits_impl_base(impl, b, nd, bit_width=p["bit_width"],
                                             shape=p["shape"]), phys),
        "random_bits", impl.name, phys.shape, str(phys.dtype), nd, p["bit_width"],
        tuple(p["shape"]))


_KEPT_COUNTS = 1 << 16


def _threefry_bits(width, shape):
    """One threefry key's random bits, as jax's partitionable threefry makes them (its 64-bit
    element numbers through threefry2x32, the two words combined by width), without a trace
    per shape."""
    mix = _threefry(None, None, [jax.core.ShapedArray(shape, np.uint32)])
    dtype = np.dtype(f"uint{width}")
    # the element numbers, made once for a small shape (kept with the plan)
    counts = _counts_2x32(shape) if math.prod(shape) <= _KEPT_COUNTS else None

    def f(key):
        key = np.asarray(key, np.uint32)
        b1, b2 = mix(key[0], key[1], *(counts or _counts_2x32(shape)))
        if width == 64:
            return (b1.astype(dtype) << dtype.type(32)) | b2.astype(dtype)
        bits = b1 ^ b2
        return bits if width == 32 else bits.astype(dtype)
    return f


@rule("random_split")
def _random_split(p, ins, outs):
    from jax._src.random import prng
    phys, impl = _phys(ins[0])
    nd = len(ins[0].shape)
    return _key_impl(p, ins, outs, lambda: _trace_key(
        lambda b: prng.random_split_impl_base(impl, b, nd, shape=p["shape"]), phys),
        "random_split", impl.name, phys.shape, str(phys.dtype), nd, tuple(p["shape"]))


@rule("random_fold_in")
def _random_fold_in(p, ins, outs):
    from jax._src.random import prng
    phys, impl = _phys(ins[0])
    kshape = tuple(ins[0].shape)
    msgs = jax.ShapeDtypeStruct(tuple(ins[1].shape), ins[1].dtype)
    return _key_impl(p, ins, outs, lambda: _trace_key(
        lambda b, m: prng.random_fold_in_impl_base(impl, b, m, kshape), phys, msgs),
        "random_fold_in", impl.name, phys.shape, str(phys.dtype), kshape, msgs.shape,
        str(msgs.dtype))


@rule("random_seed")
def _random_seed(p, ins, outs):
    from jax._src.random import prng
    impl = p["impl"]
    seeds = jax.ShapeDtypeStruct(tuple(ins[0].shape), ins[0].dtype)
    return _key_impl(p, ins, outs, lambda: _trace_key(
        lambda s: prng.random_seed_impl_base(s, impl=impl), seeds),
        "random_seed", impl.name, seeds.shape, str(seeds.dtype))


@rule("threefry2x32")
def _threefry(p, ins, outs):
    shape = tuple(outs[0].shape)
    u32 = np.uint32
    # (the constants as 0-d uint32 arrays, which a ufunc takes faster than scalars: the
    # rotations r and 32 - r of the two round groups, the round numbers)
    c = lambda v: np.array(v, u32)        # noqa: E731
    rot = [[(c(r), c(32 - r)) for r in g] for g in ((13, 15, 26, 6), (17, 29, 16, 24))]
    rounds = [c(i + 1) for i in range(5)]
    parity = c(0x1BD11BDA)
    # (one element is worked on as two: a ufunc writing into its operand of one element, or
    # into a 0-d array, takes three times as long)
    one = math.prod(shape) == 1
    work = (2,) if one else shape
    add, left, right, bor, bxor, empty = (np.add, np.left_shift, np.right_shift,
                                          np.bitwise_or, np.bitwise_xor, np.empty)

    def f(k1, k2, x1, x2):
        # the rounds write into two arrays in place (a fresh array per operation cost more
        # than the arithmetic; out= passed by position: its keyword costs as much again);
        # uint32 arithmetic wraps, as threefry's does
        k1, k2 = np.asarray(k1, u32), np.asarray(k2, u32)
        if one:             # (each operand then has one element)
            k1, k2 = k1.reshape(1), k2.reshape(1)
            x1, x2 = np.asarray(x1, u32).reshape(1), np.asarray(x2, u32).reshape(1)
        ks = [k1, k2, np.asarray(k1 ^ k2 ^ parity)]
        a, b, t = empty(work, u32), empty(work, u32), empty(work, u32)
        add(np.asarray(x1, u32), ks[0], a)
        add(np.asarray(x2, u32), ks[1], b)
        for i in range(5):
            for r, r2 in rot[i % 2]:
                add(a, b, a)
                left(b, r, t)           # b = rotl(b, r) ^ a
                right(b, r2, b)
                bor(b, t, b)
                bxor(b, a, b)
            add(a, ks[(i + 1) % 3], a)
            add(b, ks[(i + 2) % 3], b)
            add(b, rounds[i], b)
        if one:
            return [a[:1].reshape(shape), b[:1].reshape(shape)]
        return [a, b]
    return f


@rule("dim_as_value", moves=True)
def _dim_as_value(p, ins, outs):
    # a dimension used as a value (a shape-polymorphic trace, specialized: ``dim`` is an int)
    val = np.array(p["dim"], np.dtype(outs[0].dtype))
    val.flags.writeable = False
    return lambda: val


def _counts_2x32(shape):
    """The element numbers of ``shape`` as uint64, split into (high, low) uint32 words."""
    n = np.arange(math.prod(shape), dtype=np.uint64).reshape(shape)
    return [(n >> np.uint64(32)).astype(np.uint32), (n & np.uint64(0xFFFFFFFF)).astype(np.uint32)]


@rule("iota_2x32_shape")
def _iota_2x32(p, ins, outs):
    counts = _counts_2x32(tuple(p["shape"]))
    return lambda: counts


# ------------------------------------------------------------------ linear algebra, fft

@rule("cholesky")
def _cholesky(p, ins, outs):
    d = np.dtype(outs[0].dtype)

    def f(x):
        try:
            return np.linalg.cholesky(x).astype(d, copy=False)
        except np.linalg.LinAlgError:
            # XLA returns NaNs for a matrix that is not positive definite; numpy raises
            # (batched: fall back per matrix)
            xs = np.asarray(x).reshape((-1,) + x.shape[-2:])
            out = np.empty_like(xs, dtype=d)
            for i, m in enumerate(xs):
                try:
                    out[i] = np.linalg.cholesky(m)
                except np.linalg.LinAlgError:
                    out[i] = np.nan
            return out.reshape(x.shape)
    return f


@rule("triangular_solve")
def _triangular_solve(p, ins, outs):
    left = bool(p["left_side"])
    lower = bool(p["lower"])
    trans = bool(p["transpose_a"])
    conj = bool(p["conjugate_a"])
    unit = bool(p["unit_diagonal"])
    d = np.dtype(outs[0].dtype)

    def f(a, b):
        n = a.shape[-1]
        a = np.tril(a) if lower else np.triu(a)
        if unit:
            a = a.copy()
            a[..., np.arange(n), np.arange(n)] = 1
        if conj:
            a = np.conj(a)
        low = lower != trans
        if trans:
            a = np.swapaxes(a, -1, -2)
        if not b.size:
            return np.zeros(b.shape, d)
        if left:
            r = _substitute(a, b, low)
        else:
            # x a = b  <=>  a^T x^T = b^T
            r = np.swapaxes(_substitute(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2),
                                        not low), -1, -2)
        return r.astype(d, copy=False)
    return f


def _substitute(a, b, lower):
    """``x`` with ``a x = b`` for triangular ``a`` (``[..., n, n]``), by forward or backward
    substitution, as the compiled triangular solve computes it: each unknown reads only the
    triangle's entries (a NaN above an upper triangle's diagonal reaches the rows above it
    alone, where a general solve's pivoting spreads it to every row)."""
    n = a.shape[-1]
    x = np.zeros(b.shape, np.result_type(a, b))
    for i in (range(n) if lower else range(n - 1, -1, -1)):
        acc = b[..., i, :]
        done = slice(0, i) if lower else slice(i + 1, n)
        if (i if lower else n - 1 - i):
            acc = acc - np.einsum("...j,...jk->...k", a[..., i, done], x[..., done, :])
        x[..., i, :] = acc / a[..., i, i, None]
    return x


@rule("eigh")
def _eigh(p, ins, outs):
    if p.get("subset_by_index") not in (None, (0, ins[0].shape[-1])):
        raise Unsupported("eigh", "subset_by_index")
    lower = bool(p["lower"])
    dv, dw = np.dtype(outs[0].dtype), np.dtype(outs[1].dtype)

    def f(x):
        w, v = np.linalg.eigh(x, UPLO="L" if lower else "U")
        return [v.astype(dv, copy=False), w.astype(dw, copy=False)]
    return f


@rule("lu_pivots_to_permutation")
def _lu_pivots_to_permutation(p, ins, outs):
    m = int(p["permutation_size"])
    d = np.dtype(outs[0].dtype)

    def f(piv):
        piv = np.asarray(piv)
        batch = piv.shape[:-1]
        perm = np.broadcast_to(np.arange(m, dtype=d), batch + (m,)).copy()
        flat = perm.reshape(-1, m)
        pv = piv.reshape(-1, piv.shape[-1])
        for b in range(flat.shape[0]):
            for i in range(pv.shape[1]):
                j = int(pv[b, i])
                if 0 <= j < m:
                    flat[b, i], flat[b, j] = flat[b, j], flat[b, i]
        return flat.reshape(batch + (m,))
    return f


@rule("lu")
def _lu(p, ins, outs):
    dl = np.dtype(outs[0].dtype)
    dp = np.dtype(outs[1].dtype)

    def f(x):
        a = np.array(x, dtype=dl, copy=True)
        batch = a.shape[:-2]
        m, n = a.shape[-2:]
        A = a.reshape((-1, m, n))
        k = min(m, n)
        piv = np.zeros((A.shape[0], k), dp)
        perm = np.broadcast_to(np.arange(m, dtype=dp), (A.shape[0], m)).copy()
        rows = np.arange(A.shape[0])
        for j in range(k):
            col = np.abs(A[:, j:, j])
            pj = np.argmax(col, axis=1) + j           # LAPACK getrf: first largest |a|
            piv[:, j] = pj
            tmp = A[rows, j].copy()
            A[rows, j] = A[rows, pj]
            A[rows, pj] = tmp
            tp = perm[rows, j].copy()
            perm[rows, j] = perm[rows, pj]
            perm[rows, pj] = tp
            diag = A[:, j, j][:, None]
            nz = diag != 0
            A[:, j + 1:, j] = np.where(nz, A[:, j + 1:, j] / np.where(nz, diag, 1),
                                       A[:, j + 1:, j])
            A[:, j + 1:, j + 1:] -= A[:, j + 1:, j][:, :, None] * A[:, j, j + 1:][:, None, :]
        return [A.reshape(a.shape), piv.reshape(batch + (k,)), perm.reshape(batch + (m,))]
    return f


@rule("svd")
def _svd(p, ins, outs):
    if p.get("subset_by_index") not in (None, (0, min(ins[0].shape[-2:]))):
        raise Unsupported("svd", "subset_by_index")
    full = bool(p["full_matrices"])
    uv = bool(p["compute_uv"])
    ds = [np.dtype(o.dtype) for o in outs]

    def f(x):
        if not uv:
            return [np.linalg.svd(x, compute_uv=False).astype(ds[0], copy=False)]
        u, s, vt = np.linalg.svd(x, full_matrices=full)
        return [s.astype(ds[0], copy=False), u.astype(ds[1], copy=False),
                vt.astype(ds[2], copy=False)]
    return f


@rule("qr")
def _qr(p, ins, outs):
    if p.get("pivoting"):
        raise Unsupported("qr", "pivoting")
    mode = "complete" if p["full_matrices"] else "reduced"
    dq, dr = np.dtype(outs[0].dtype), np.dtype(outs[1].dtype)

    def f(x):
        q, r = np.linalg.qr(x, mode=mode)
        return [q.astype(dq, copy=False), r.astype(dr, copy=False)]
    return f


@rule("geqrf")
def _geqrf(p, ins, outs):
    da, dt = np.dtype(outs[0].dtype), np.dtype(outs[1].dtype)

    def f(x):
        h, tau = np.linalg.qr(x, mode="raw")        # (LAPACK's geqrf, its matrix transposed)
        return [np.swapaxes(h, -1, -2).astype(da), tau.astype(dt, copy=False)]
    return f


@rule("eig")
def _eig(p, ins, outs):
    if p.get("compute_left_eigenvectors"):
        raise Unsupported("eig", "left eigenvectors")
    right = bool(p.get("compute_right_eigenvectors", True))
    ds = [np.dtype(o.dtype) for o in outs]

    def f(x):
        w, v = np.linalg.eig(x)
        res = [w.astype(ds[0])]
        if right:
            res.append(v.astype(ds[1]))
        return res
    return f


@rule("custom_linear_solve", moves=True)
def _custom_linear_solve(p, ins, outs):
    lengths = list(p["const_lengths"])
    solve = p["jaxprs"].solve
    plan = _sub_closed(solve)
    start = sum(lengths[:2])
    n_solve = lengths[2]
    n_consts = sum(lengths)

    def f(*args):
        return _exec(plan, list(args[start:start + n_solve]) + list(args[n_consts:]))
    return f


@rule("tile", moves=True)
def _tile(p, ins, outs):
    reps = tuple(int(r) for r in p["reps"])
    return lambda x: np.tile(x, reps)


@rule("stack", moves=True)
def _stack(p, ins, outs):
    axis = int(p["axis"])
    return lambda *xs: np.stack(xs, axis=axis)


@rule("unstack", moves=True)
def _unstack(p, ins, outs):
    axis = int(p["axis"])
    n = ins[0].shape[axis]
    return lambda x: [np.take(x, i, axis=axis) for i in range(n)]


@rule("empty2", "empty", moves=True)
def _empty(p, ins, outs):
    aval = outs[0]
    if _is_key(aval):
        phys, _ = _phys(aval)
        val = np.zeros(phys.shape, np.uint32)
    else:
        val = np.zeros(tuple(aval.shape), aval.dtype)
    return lambda *a: val


def _total_order_key(x):
    """XLA's total order on floats as signed integers: -NaN < -inf < ... < -0.0 < 0.0 < ...
    < inf < NaN."""
    x = np.asarray(x)
    if x.dtype.kind != "f" and x.dtype not in _LOWP:
        return x
    s = _signed(x.dtype)
    i = x.view(s)
    return i ^ ((i >> s.type(x.dtype.itemsize * 8 - 1)) & s.type(np.iinfo(s).max))


def _to_rule(np_fn):
    def make(p, ins, outs):
        return lambda x, y: np_fn(_total_order_key(x), _total_order_key(y))
    return make


for _name, _fn in [("lt_to", np.less), ("le_to", np.less_equal), ("eq_to", np.equal),
                   ("gt_to", np.greater), ("ge_to", np.greater_equal)]:
    RULES[_name] = _to_rule(_fn)
    _MOVES.add(_name)


@rule("random_gamma")
def _random_gamma(p, ins, outs):
    from jax._src.random import core as rcore
    from jax._src.random import prng
    phys, impl = _phys(ins[0])
    a = jax.ShapeDtypeStruct(tuple(ins[1].shape), ins[1].dtype)
    log_space = p["log_space"]
    return _key_impl(p, ins, outs, lambda: _trace_key(
        lambda k, a: rcore._gamma_impl(prng.random_wrap(k, impl=impl), a, log_space=log_space,
                                       use_vmap=True), phys, a),
        "random_gamma", impl.name, phys.shape, str(phys.dtype), a.shape, str(a.dtype),
        bool(log_space))


@rule("reduce")
def _reduce(p, ins, outs):
    # a reduction with its own computation: folded in order along the reduced axes
    plan = _sub_closed(p["jaxpr"])
    dims = tuple(int(d) for d in p["dimensions"])
    n = len(outs)
    out_shapes = [tuple(o.shape) for o in outs]

    def f(*args):
        xs, inits = args[:n], args[n:]
        moved = [np.moveaxis(np.asarray(x), dims, tuple(range(len(dims)))) for x in xs]
        flat = [m.reshape((-1,) + m.shape[len(dims):]) for m in moved]
        accs = [np.full(s, i, o.dtype) for s, i, o in zip(out_shapes, inits, outs)]
        for k in range(flat[0].shape[0] if flat else 0):
            accs = _exec(plan, accs + [fl[k] for fl in flat])
        return [np.broadcast_to(a, s).astype(o.dtype, copy=False)
                for a, s, o in zip(accs, out_shapes, outs)]
    return f


@rule("zeros_like", moves=True)
def _zeros_like(p, ins, outs):
    aval = _physical(outs[0])
    return lambda x: np.zeros(tuple(aval.shape), aval.dtype)


@rule("mulhi")
def _mulhi(p, ins, outs):
    d = np.dtype(outs[0].dtype)
    bits = d.itemsize * 8
    if bits == 64:
        raise Unsupported("mulhi", "64-bit operands")
    wide = np.dtype(np.int64 if d.kind == "i" else np.uint64)
    return lambda x, y: ((x.astype(wide) * y.astype(wide)) >> wide.type(bits)).astype(d)
