"""Tiers of execution: a function's first calls at a signature are interpreted, repeats compile.

Every jitted function of the dispatch path (an op's forward, forward-with-VJP and backward, the
engine's and storage's helpers, an optimizer's group update) is a ``Tiered``: ``jax.jit`` of the
function plus an interpreter tier. On the CPU backend, for concrete inputs, the first
``INTERPRET_CALLS`` calls at a signature (the input pytree's structure, shapes and dtypes) trace
the function to a jaxpr once (about a millisecond) and evaluate it with numpy
(``torchlike._interpret``): no XLA compile, which costs 10-300 ms a program. Past those calls
the signature stays interpreted until its interpreted calls have taken ``INTERPRET_BUDGET`` in
all (20 ms; ``TORCHLIKE_INTERPRET_BUDGET_MS``): a call far cheaper than its compile is
interpreted for as long as interpreting it has cost less than compiling it would (on two
cores a compile also slows the steps it runs beside, by 1.4-2x), and costly calls leave as
soon as they have cost it, before their count. The call that leaves starts its compile in a
background thread and is interpreted, as are the calls until the program is ready (``TORCHLIKE_BACKGROUND_COMPILE=0``: that call
compiles in the foreground); from then on the function runs through ``jax.jit``, so a loop
reaches its compiled programs without waiting for them, and a shape met only a few times
(generation with a growing context, the short last batch, a unit test) never compiles. A
graph's backward (``autograd/fused_backward.py``) whose walks have cost what compiling its
interpreted forwards would sends those forwards to the compiler, so that one cheap op does not
keep a training step from its programs.

Integer, bool and data-movement results are exact; float results may differ from the compiled
program's in the last bits (summation order, transcendental implementations).
``TORCHLIKE_INTERPRET_CALLS=0`` (or ``torchlike.eager.set_interpret_calls(0)``) turns the tier
off for bit-stable runs. Tracers, accelerators and arrays sharded over several devices always
take the compiled path; a jaxpr holding a primitive the interpreter has no numpy form for is
compiled at once (counted in ``stats()["fallbacks"]``).
"""
from __future__ import annotations

import atexit
import os
import sys
import threading
from time import perf_counter as _clock

import jax
import jax.numpy as jnp
import numpy as np
from jax._src import core as _jcore
from jax._src.lib import xla_client as _xc


__all__ = ["Tiered", "tiered", "INTERPRET_CALLS", "HOST_MAX_ELEMENTS", "on_host", "stats",
           "set_interpret_calls", "set_interpret_budget", "held", "call_on_host", "iota", "put",
           "to_device", "trace", "inlined", "scan", "fori_loop", "zeros_like", "stable", "made",
           "once"]

INTERPRET_CALLS = int(os.environ.get("TORCHLIKE_INTERPRET_CALLS", "8"))
# fills, zeros and element numbers are built with numpy up to this size (a compile costs more)
HOST_MAX_ELEMENTS = int(os.environ.get("TORCHLIKE_HOST_MAX_ELEMENTS", str(1 << 22)))
# the interpreter is not used past this many input elements (numpy would be slower than a compile)
INTERPRET_MAX_ELEMENTS = int(os.environ.get("TORCHLIKE_INTERPRET_MAX_ELEMENTS", str(1 << 22)))
# a signature leaving the interpreter compiles in a background thread while its calls stay
# interpreted (0: the call that leaves compiles in the foreground)
BACKGROUND_COMPILE = os.environ.get("TORCHLIKE_BACKGROUND_COMPILE", "1") != "0"
# a signature due to leave the interpreter stays there for this many calls made within
# ``held()`` (fused eager's replays) before it leaves anyway
HELD_CALLS = int(os.environ.get("TORCHLIKE_HELD_CALLS", "64"))
# a signature past its first ``INTERPRET_CALLS`` calls leaves the interpreter once its
# interpreted calls have taken this long in all (seconds): a compile costs 30-300 ms of a core,
# and a cheap call met once a step pays that back only after thousands of steps (0: leave at
# the count alone)
INTERPRET_BUDGET = float(os.environ.get("TORCHLIKE_INTERPRET_BUDGET_MS", "20")) / 1e3
_SEEN_MAX = 1024            # signatures remembered per function (then forgotten, counting anew)

_stats = {"interpreted": 0, "traces": 0, "trace_loads": 0, "fallbacks": 0, "errors": 0,
          "background": 0}
_unsupported: dict = {}
_lock = threading.Lock()
_host = []                  # [bool]: is jax's default backend the CPU (decided on first use)

_ArrayImpl = type(jax.device_put(np.zeros(())))  # the concrete array class (jax.Array is abstract)
try:                                        # jax's typed PRNG key arrays (a dropout's key)
    from jax._src.random.prng import PRNGKeyArray as _KeyArray
except ImportError:
    _KeyArray = None


def _single_device(a):
    return len(a.sharding.device_set) == 1
_SCALARS = (int, float, bool, complex)
_COMPILE = object()         # a call's answer: run the compiled path
CLAIMED = object()          # Tiered.call_claiming: the caller computes this call
_PAST = 1 << 62             # a signature's count once it must not be interpreted (nor loaded)


def on_host():
    """Is jax's default backend the CPU (where numpy work needs no transfer)?"""
    if not _host:
        _host.append(jax.default_backend() == "cpu")
    return _host[0]


_held = threading.local()
_charge = threading.local()     # .to: the entry a claimed call's stand-in calls are charged to
_UNBOUNDED = 2              # ``_held.on`` within ``held(bounded=False)``


class held:
    """Within: a signature due to leave the interpreter stays in it (no compile starts) for up
    to ``HELD_CALLS`` calls (``bounded=False``: for every call); it leaves at its next call
    outside. Fused eager replays segments so: a repeating one will run as one program (its
    calls' own programs would never run), and a segment that does not repeat (generation with
    a growing context) meets each signature a few times (compiling each costs far more than
    interpreting it there). A segment whose program is compiling is replayed unbounded: its
    calls' programs, compiled behind it, would only take the cores from the steps that follow
    (makemore's loop ran 3x slower for 300 steps after its program was ready)."""

    __slots__ = ("was", "bounded")

    def __init__(self, bounded=True):
        self.bounded = bounded

    def __enter__(self):
        self.was = getattr(_held, "on", False)
        _held.on = True if self.bounded else _UNBOUNDED
        return self

    def __exit__(self, *exc):
        _held.on = self.was
        return False


def _holding(h, ent):
    """Does the hold ``h`` (``_held.on`` or False) keep a signature due to leave the interpreter
    (its entry ``ent``) there for this call?"""
    return h is _UNBOUNDED or (h and ent[4] < HELD_CALLS)


def _entry():
    """A signature's entry: its calls, ``{tree: plan}``, ``{tree: loaded program}``, the
    background compile, its calls held past its leaving (``held``), the seconds its
    interpreted calls took (``INTERPRET_BUDGET``)."""
    return [0, None, None, None, 0, 0.0]


class claimed:
    """Within: the calls standing in for the call just claimed (``Tiered.call_claiming``) are
    charged to the claimed call's signature, the time they take in all: it leaves the
    interpreter once they have cost ``INTERPRET_BUDGET``, and they, charged nothing, do not
    leave for it (a forward-with-VJP's forward alone: its own program would not run once the
    forward-with-VJP's does)."""

    __slots__ = ("was", "t")

    def __enter__(self):
        self.was = getattr(_charge, "to", None)
        _charge.to = getattr(_charge, "last", None)
        self.t = _clock()
        return self

    def __exit__(self, *exc):
        ent = _charge.to
        _charge.to = self.was
        if ent is not None:
            ent[5] += _clock() - self.t
        return False


def set_interpret_budget(seconds):
    """Set ``INTERPRET_BUDGET`` (0: a signature leaves the interpreter at its count alone);
    returns the old value."""
    global INTERPRET_BUDGET
    old, INTERPRET_BUDGET = INTERPRET_BUDGET, float(seconds)
    return old


def set_interpret_calls(n):
    """Interpret each signature's first ``n`` calls (0: compile at once, bit-stable)."""
    global INTERPRET_CALLS
    old, INTERPRET_CALLS = INTERPRET_CALLS, int(n)
    return old


def stats():
    """``{"interpreted", "traces", "trace_loads", "fallbacks", "errors", "background",
    "unsupported"}``: calls evaluated by the interpreter, jaxprs traced for it and jaxprs loaded
    from disk instead (torchlike._trace_store), signatures compiled at once because of an
    unsupported primitive (by name in ``unsupported``), interpreter failures (compiled
    instead) and compiles handed to the background thread."""
    with _lock:
        out = dict(_stats)
        out["unsupported"] = dict(_unsupported)
    return out


def iota(shape):
    """Element numbers 0..n-1 in ``shape`` (int64) from numpy on the CPU, else None."""
    n = 1
    for d in shape:
        n *= d
    if on_host() and 0 < n <= HOST_MAX_ELEMENTS:
        return to_device(np.arange(n, dtype=np.int64).reshape(shape))
    return None


def zeros_like(a):
    """Zeros of ``a``'s shape and dtype on its device (``a``: a jax array or a fused eager
    deferred value): from numpy on the CPU, where ``jnp.zeros_like`` compiles a program per
    shape; on the device, or sharded like ``a``, otherwise."""
    n = 1
    for d in a.shape:
        n *= d
    if on_host() and 0 < n <= HOST_MAX_ELEMENTS:      # (numpy refuses (0, 2**62))
        if a.__class__ is _ArrayImpl:
            devs = a.sharding.device_set
            if len(devs) == 1:
                dev = next(iter(devs)) if a.committed else None
                return put(np.zeros(a.shape, a.dtype), aval(a.shape, a.dtype), dev)
        elif a.__class__ is _fused.Deferred and a.device is not None:
            return put(np.zeros(a.shape, a.dtype), aval(a.shape, a.dtype), a.device)
    return jax.numpy.zeros_like(_fused.concrete((a,))[0] if a.__class__ is _fused.Deferred
                                else a)


_shardings: dict = {}


def _sharding(device):
    sh = _shardings.get(device)
    if sh is None:
        sh = _shardings[device] = jax.sharding.SingleDeviceSharding(device)
    return sh


_first_device = []


def _finish_dispatched():
    """At exit, wait for the programs still running: eager dispatch does not wait for a step's
    backward and update (a loss read waits for the forward only), and the process's exit frees
    XLA's CPU kernels (oneDNN's generated code) under a program that still runs them: a script
    ending right after its last step crashed with SIGSEGV. Every computation a live array waits
    for is waited for (registered after jax's own exit hook, so run before it); a process that
    started no backend starts none."""
    try:
        from jax._src import xla_bridge
        if not xla_bridge.backends_are_initialized():
            return
        arrays = jax.live_arrays()
    except Exception:  # noqa: BLE001  (a backend already gone: nothing runs)
        return
    for a in arrays:
        try:
            a.block_until_ready()
        except Exception:  # noqa: BLE001  (a deleted or failed array: nothing to wait for)
            pass


atexit.register(_finish_dispatched)


def _default_device():
    d = jax.config.jax_default_device
    if isinstance(d, jax.Device):
        return d
    if not _first_device:
        _first_device.append(jax.local_devices()[0])   # this process's (multi-process jobs)
    return _first_device[0]


def put(h, aval, device):
    """numpy ``h`` as a jax array of ``aval`` on ``device`` (committed) or the default device.

    jaxlib's batched device put directly: ``jax.device_put`` costs ten times as much in Python,
    and ``jnp.asarray`` compiles a program per shape."""
    if h.__class__ is not np.ndarray:
        h = np.asarray(h)
    if not h.flags.c_contiguous:
        h = h.copy(order="C")       # (np.ascontiguousarray would make a 0-d array 1-d)
    committed = device is not None
    if not committed:
        device = _default_device()
    return _xc.batched_device_put(aval, _sharding(device), [h], [device], committed)


def to_device(h):
    """numpy ``h`` as an uncommitted jax array on the default device: ``jax.device_put(h)`` at a
    tenth of its Python cost (like it, it may alias an aligned buffer on the CPU)."""
    if h.__class__ is not np.ndarray:
        h = np.asarray(h)
    return put(h, aval(h.shape, h.dtype), None)


def aval(shape, dtype):
    """The abstract value of an array of ``shape`` and ``dtype`` (not weak-typed), made once
    (jax builds one in about 2 us; it is immutable)."""
    key = (shape, dtype)
    a = _AVALS.get(key)
    if a is None:
        if len(_AVALS) > 4096:
            _AVALS.clear()
        a = _AVALS[key] = jax.core.ShapedArray(shape, dtype)
    return a


_AVALS: dict = {}


_LEAF = jax.tree_util.tree_structure(0)


def _hosts(leaves):
    """A call's leaves for the interpreter: ``(host values, their element count, the device
    of its committed arrays or None)``, or None where an array spans several devices."""
    device = None
    size = 0
    hosts = []
    for a in leaves:
        if a.__class__ is _ArrayImpl:
            if a.committed:
                devs = a.sharding.device_set
                if len(devs) != 1:
                    return None
                device = next(iter(devs))
            size += a.size
            hosts.append(np.asarray(a))
        else:
            if isinstance(a, np.ndarray):
                size += a.size
            hosts.append(a)
    return hosts, size, device


def call_on_host(f, *args):
    """``f(*args)`` where ``args`` may hold numpy arrays (never weak-typed: see
    ``Tiered.interpret_on_host``): a plain ``Tiered`` interprets it with results left in
    numpy where its tier would interpret it, a function with a ``host_call`` of its own
    runs that; otherwise the call is made with the numpy arrays as device arrays."""
    if f.__class__ is Tiered:
        out = f.interpret_on_host(args, getattr(_held, "on", False))
        if out is not None:
            return out
    else:
        own = getattr(f, "host_call", None)     # (a call of its own kind: a graph backward)
        if own is not None:
            return own(*args)
    return f(*on_device(args))


def on_device(tree):
    """``tree`` with its numpy arrays as (uncommitted) device arrays."""
    leaves, td = jax.tree_util.tree_flatten(tree)
    if not any(a.__class__ is np.ndarray for a in leaves):
        return tree
    return jax.tree_util.tree_unflatten(
        td, [to_device(a) if a.__class__ is np.ndarray else a for a in leaves])


def trace(f, args):
    """``jax.make_jaxpr(inlined(f), return_shape=True)(*args)`` (the output "shape" a pytree
    of avals), traced by jax's tracer directly: ``make_jaxpr`` builds a ``jax.jit`` around
    ``f`` and infers its parameters each call, which took three quarters of the time to trace
    a small op."""
    if _direct is None:
        return jax.make_jaxpr(inlined(f), return_shape=True)(*args)
    trace_to_jaxpr, debug_info, abstractify, FlatTree = _direct
    args = tuple(args)
    avals = FlatTree.flatten((args, {})).map(abstractify)
    closed, out = trace_to_jaxpr(inlined(f), avals, debug_info("torchlike", f, args, {}))
    return closed, out.unflatten()


try:            # (jax's internal tracer entry point; make_jaxpr where it is not there)
    from jax._src import api_util as _api_util
    from jax._src import core as _jcore
    from jax._src.interpreters import partial_eval as _pe
    from jax._src.tree_util import FlatTree as _FlatTree
    _direct = (_pe.trace_to_jaxpr, _api_util.debug_info, _jcore.shaped_abstractify, _FlatTree)
except (ImportError, AttributeError):
    _direct = None


def inlined(f):
    """``f``, tracing jax's own jitted helpers (most of ``jax.numpy``) inline.

    Every trace of the dispatch path (the interpreter's, jit's, the trace store's) goes through
    this: a jitted ``jax.numpy`` function met while tracing costs a nested jit lookup each call,
    and inlining halves the time to trace an op (an Adam group update: 11 ms instead of 23). The
    jaxpr holds the same primitives either way. ``jax.lax`` loops would run unrolled in Python
    under ``jax.disable_jit``; the ops that loop use ``scan`` and ``fori_loop`` below."""
    def run_inlined(*args, **kwargs):
        with jax.disable_jit():
            return f(*args, **kwargs)
    return run_inlined


def scan(*args, **kwargs):
    """``jax.lax.scan``, a loop in the jaxpr even inside ``inlined``."""
    with jax.disable_jit(False):
        return jax.lax.scan(*args, **kwargs)


def fori_loop(*args, **kwargs):
    """``jax.lax.fori_loop``, a loop in the jaxpr even inside ``inlined``."""
    with jax.disable_jit(False):
        return jax.lax.fori_loop(*args, **kwargs)


class _Plan:
    """A signature's interpreter plan: the interpreter's steps (``run``), the output avals and
    structure, and its jaxpr (made from a shape-polymorphic trace when first asked for: only a
    signature that compiles needs it)."""

    __slots__ = ("_jaxpr", "out_tree", "avals", "name", "run", "_symbolic", "weak", "single",
                 "stays")

    def __init__(self, jaxpr, out_tree, sizes=None):
        self.out_tree = out_tree
        self.name = None            # its entry in the program cache, once needed
        self.stays = _stays_on_host(jaxpr)
        if sizes is None:
            self._jaxpr, self._symbolic = jaxpr, None
            self.run = _interpret.bind(jaxpr, None)
        else:                       # a symbolic trace, run at ``sizes``
            subst = _shape_poly.Subst(sizes)
            self._jaxpr, self._symbolic = None, (jaxpr, subst)
            self.run = _interpret.bind(jaxpr, subst)
        self.avals = [jax.core.ShapedArray(a.shape, a.dtype, weak_type=a.weak_type)
                      for a in self.run.out_avals]
        self.weak = tuple(k for k, a in enumerate(self.avals) if a.weak_type)
        self.single = out_tree == _LEAF     # (one output, not in a container)

    @property
    def jaxpr(self):
        j = self._jaxpr
        if j is None:
            closed, subst = self._symbolic
            j = self._jaxpr = subst.closed(closed)
        return j


# primitives whose numpy form runs several times faster than XLA's CPU code: a signature whose
# trace holds one, and no control flow, stays interpreted on the CPU, never compiled (measured
# 2026-12-06, 2-core EPYC, a stable argsort along rows: XLA 55 us for 1x256, 225 for 32x64,
# 4.5 ms for 64x512; numpy 4.4, 18 and 1.4 ms; torch's sort of 32x64 16 us). The interpreter
# walks loops and branches step by step: a function with one (topk's tie handling, 280 us
# interpreted for 1x256 against about 80 compiled) compiles as any other.
STAY_ON_HOST = frozenset(os.environ.get("TORCHLIKE_STAY_ON_HOST", "sort").split(",")) - {""}
_CONTROL_FLOW = frozenset(("cond", "while", "scan"))


def _stays_on_host(jaxpr):
    """Does ``jaxpr`` (or one nested in it) bind a primitive of ``STAY_ON_HOST``, and no
    loop or branch?"""
    todo = [getattr(jaxpr, "jaxpr", jaxpr)]
    found = False
    while todo:
        for eqn in todo.pop().eqns:
            name = eqn.primitive.name
            if name in _CONTROL_FLOW:
                return False
            found = found or name in STAY_ON_HOST
            todo.extend(_jcore.jaxprs_in_params(eqn.params))
    return found


class Tiered:
    """``jax.jit(raw)`` with the interpreter tier in front (see the module docstring).

    raw: the function to trace for the interpreter (side-effect free: trace counters belong in
    ``jitted`` only). jitted: ``jax.jit`` of it, with its counters, or a function making it
    (called when the first program is needed: making a ``jax.jit`` costs about 0.2 ms, and
    most signatures of a new op configuration never compile). finish: ``finish(flat, plan,
    device)`` builds the result from the interpreted outputs (numpy, flat); by default every
    leaf becomes a jax array on ``device``.
    """

    __slots__ = ("raw", "_jit", "_make_jit", "seen", "finish", "name", "shapes", "ident",
                 "poly", "pure", "donate", "selects", "__weakref__")
    # fused eager's abstract evaluation makes the interpreter's plan of a call's signature,
    # unless its class declares its outputs (``(tree, leaves) -> (structure, avals)`` of the
    # call's input structure and leaves: a graph's backward, an optimizer's group update)
    declared_outputs = None
    # whose declared outputs do not depend on the inputs' shapes and dtypes (a graph's
    # backward: its leaves' gradients): fused eager finds them by the input structure alone
    outputs_fixed = False

    def __init__(self, raw, jitted, name="", finish=None, ident=None, poly=False, pure=True,
                 donate=()):
        self.raw, self.name = raw, name
        # the arguments ``jitted`` donates (``donate_argnums``): containers of arrays each held
        # by one owner that the caller gives the call's results (an optimizer's parameters and
        # state); a leaf someone else holds too goes in as a copy (``owned``). The compiled
        # program is never run from disk or in the background on a call's own arrays
        self.donate = donate
        # pure=False: tracing ``raw`` touches state the calling thread uses (a compiled
        # function's node swaps its state tensors' data while traced; a user's jax function):
        # it is never traced in a background thread
        self.pure = pure
        # a view op's forward (it selects its input's elements): fused eager runs a call of it
        # on concrete inputs with at most one element out now (``_fused.record``)
        self.selects = False
        if hasattr(jitted, "lower"):            # a jax.jit already
            self._jit, self._make_jit = jitted, None
        else:
            self._jit, self._make_jit = None, jitted
        self.finish = finish
        self.seen = {}
        self.shapes = None          # fused eager: output shapes per signature (_fused)
        # what ``raw`` computes, as text that is the same in every process (``stable``), or
        # None: its traces are kept on disk under it (torchlike._trace_store); or a function
        # making it, called when first needed (``identity``)
        self.ident = ident
        # a pure function of its inputs' values and shapes: its signatures are traced once per
        # shape pattern (torchlike._shape_poly; None: every signature traced; a
        # ``_shape_poly.Family``: the pattern table is shared with the op's other shapes; a
        # ``_shape_poly.SymbolicFirst``: patterns traced symbolically from their first shape)
        self.poly = None if poly is None or poly is False else poly

    @property
    def jit(self):
        j = self._jit
        if j is None:
            with _lock:
                if self._jit is None:
                    self._jit = self._make_jit()
            j = self._jit
        return j

    def clear_cache(self):
        if self._jit is not None:
            self._jit.clear_cache()
        self.seen.clear()
        self.shapes = None
        if self.poly.__class__ is dict:
            self.poly = True
        elif self.poly.__class__ is _shape_poly.SymbolicFirst:
            self.poly.clear()

    def _cache_size(self):
        """How many programs jax.jit holds for this function."""
        return 0 if self._jit is None else self._jit._cache_size()

    def __call__(self, *args):
        if _fused.ACTIVE:
            out = _fused.record(self, args)
            if out is not None:
                return out
            args = self._concrete(args)     # (a call that runs now: tracers, sharded inputs)
        elif _fused._installed:
            args = self._concrete(args)
        return self.now(*args)

    def now(self, *args):
        """The call run at once through the tiers, past fused eager's recording (no deferred
        value among ``args``)."""
        if INTERPRET_CALLS and (_host[0] if _host else on_host()):
            out = self._interpret(args)
            if out is not _COMPILE:
                return out
        return self.compiled_call(*args)

    def _concrete(self, args):
        """``args`` with fused eager's pending values resolved. A donating function gets the
        resolved values of its donated arguments as copies: a deferred value may be shared by
        several tensors, which no count of its array's references sees."""
        got = _fused.concrete(args)
        if got is not args and self.donate:
            got = _copied(got, self.donate)
        return got

    def compiled_call(self, *args):
        """The call through the compiled program, past the tier."""
        if self.donate:
            return self.jit(*self.owned(args))
        return self.jit(*args)

    def owned(self, args):
        """``args`` with every array leaf of a donated argument that more than its owner and its
        container reference replaced by a copy: the program takes over the others' buffers."""
        args = list(args)
        for i in self.donate:
            args[i] = _owned(args[i])
        return args

    def call_late(self, *args):
        """A call whose signature's first calls another function served (the registry's
        backward of a forward-with-VJP whose first calls ran as the forward alone): a new
        signature is past the tier's first calls and leaves it at this call (compiled in the
        foreground) or, with background compiles, at the next (this one interpreted, so that
        the compile can run behind the calls)."""
        return self._call_as(args, late=True)

    def call_claiming(self, *args, limit=None):
        """A call, or ``CLAIMED`` where the tier would interpret it: counted as an interpreted
        call, and the caller computes it another way (the registry runs a forward-with-VJP's
        first calls as the forward alone, recomputed in the backward: both shape-polymorphic,
        no VJP traced; an optimizer runs its group update one parameter at a time). As in a
        call, the one that leaves the tier starts the compile in the background (with
        ``BACKGROUND_COMPILE``), and the calls until it is ready are claimed too.
        limit: the size bound of the call as a whole, in place of ``INTERPRET_MAX_ELEMENTS``
        (for a caller that splits it: each part is bounded as usual)."""
        return self._call_as(args, claim=True, limit=limit)

    def _call_as(self, args, late=False, claim=False, limit=None):
        if _fused.ACTIVE:
            return self(*args)              # (recorded)
        if _fused._installed:
            args = self._concrete(args)
        if INTERPRET_CALLS and (_host[0] if _host else on_host()):
            out = self._interpret(args, late, claim, limit)
            if out is not _COMPILE:
                return out
        return self.compiled_call(*args)

    # ---------------------------------------------------------------- the tier

    def _signature(self, args):
        """(key, flat leaves) of a call; None where the compiled path must run."""
        key = []
        simple = True
        for a in args:
            t = a.__class__
            if t is _ArrayImpl or t is np.ndarray:
                key.append((a.shape, a.dtype))
            elif t in _SCALARS:
                key.append(t)
            elif t is _KeyArray and _single_device(a):
                key.append((a.shape, a.dtype))      # (a dropout's key: its data is interpreted)
            else:
                simple = False
                break
        if simple:
            return tuple(key), args, None
        # a pytree (a VJP's residuals, an optimizer's state): counted by its leaves alone, so a
        # backward keeps its count when its forward moves from the interpreter to the compiled
        # program (their pullbacks are different closures over the same residuals)
        leaves, tree = jax.tree_util.tree_flatten(args)
        key = []
        for a in leaves:
            t = a.__class__
            if t is _ArrayImpl or t is np.ndarray or isinstance(a, np.generic):
                key.append((a.shape, a.dtype))
            elif t in _SCALARS:
                key.append(t)
            elif t is _KeyArray and _single_device(a):
                key.append((a.shape, a.dtype))
            else:
                return None     # a tracer or something jit must decide about
        return tuple(key), leaves, tree

    def _entry_of(self, args):
        """``(entry, key, leaves, tree)`` of a call's signature (``_signature``), its entry
        made at its first call: its calls, ``{tree: plan}``, ``{tree: loaded program}``, the
        background compile, its calls held past its leaving (``held``). None where the
        compiled path must run."""
        sig = self._signature(args)
        if sig is None:
            return None
        key, leaves, tree = sig
        seen = self.seen
        ent = seen.get(key)
        if ent is None:
            if len(seen) >= _SEEN_MAX:
                seen.clear()
            ent = seen[key] = _entry()
        elif ent[0] < INTERPRET_CALLS and ent[5] >= INTERPRET_BUDGET > 0:
            # (costly calls: they have cost what a compile would before their count, so the
            # signature leaves now)
            ent[0] = INTERPRET_CALLS
        return ent, key, leaves, tree

    def _interpret(self, args, late=False, claim=False, limit=None):
        got = self._entry_of(args)
        if got is None:
            return _COMPILE
        ent, key, leaves, tree = got
        if late:            # (an entry counted earlier, by another caller, moves on too)
            ent[0] = max(ent[0], INTERPRET_CALLS - (1 if BACKGROUND_COMPILE else 0))
        if ent[0] >= INTERPRET_CALLS:
            plans = ent[1]
            if ent[0] < _PAST and plans and tree in plans and plans[tree].stays:
                return self._run(ent, args, key, leaves, tree, claim, limit)
            if ent[0] == INTERPRET_CALLS:       # the call that leaves the interpreter
                if ent[5] < INTERPRET_BUDGET:
                    # (its interpreted calls have cost less than a compile: it stays)
                    return self._run(ent, args, key, leaves, tree, claim, limit)
                if _holding(getattr(_held, "on", False), ent):
                    ent[4] += 1         # (held: interpreted; a call outside leaves)
                    return self._run(ent, args, key, leaves, tree, claim, limit)
                ent[0] += 1
                if not (BACKGROUND_COMPILE and self.pure and (claim or ent[1] and tree in ent[1])):
                    return self._first_compiled(ent, tree, args)
                # compiled in the background; this call and the next are interpreted until
                # the program is ready
                if self.donate:     # (compiled from the shapes: the call keeps its arrays)
                    args = _abstract(args)
                ent[3] = _program_cache.warm(lambda: self._compile_behind(ent, tree, args))
                with _lock:
                    _stats["background"] += 1
            else:
                behind = ent[3]
                if behind is not None and not behind.done():
                    pass                        # interpreted while the compile runs
                else:
                    ent[3] = None
                    loaded = ent[2]
                    if loaded:
                        exe = loaded.get(tree)
                        if exe is not None:     # from disk, until jax.jit's own is ready
                            return exe(*(self.owned(args) if self.donate else args))
                    return _COMPILE
        ent[0] += 1
        return self._run(ent, args, key, leaves, tree, claim, limit)

    def spend(self, args):
        """The signature of ``args`` leaves the interpreter at its next call past its first
        ``INTERPRET_CALLS``, as if its interpreted calls had cost ``INTERPRET_BUDGET``."""
        got = self._entry_of(args)
        if got is not None:
            got[0][5] = max(got[0][5], INTERPRET_BUDGET)

    def interpret_on_host(self, args, held=False):
        """A call as ``__call__`` would interpret it, its results left in numpy (a weak-typed
        one, which numpy cannot mark, on the device): numpy results are never weak-typed, so
        ``to_device`` makes each the array the call would have returned. None where the tier
        would not interpret the call now (the caller makes it: ``call_on_host``). Counted as
        a call. ``held``: as within ``held()``. For fused eager's replay of a segment, whose
        values between its calls need no device arrays."""
        got = self._entry_of(args)
        if got is None:
            return None
        ent, key, leaves, tree = got
        n = ent[0]
        within = n == INTERPRET_CALLS and ent[5] < INTERPRET_BUDGET
        if n >= INTERPRET_CALLS and not (within or n == INTERPRET_CALLS
                                         and _holding(held, ent)):
            return None
        got = _hosts(leaves)
        if got is None or got[2] is not None or got[1] > INTERPRET_MAX_ELEMENTS:
            return None     # (sharded, committed: its device decides, or too big: its own path)
        hosts = got[0]
        got = self._plan_and_run(ent, args, key, tree, hosts)
        if got is None:
            return None                     # (compiled from now on: the call's own path)
        plan, flat = got
        if n < INTERPRET_CALLS:
            ent[0] = n + 1
        elif not within:
            ent[4] += 1
        for k in plan.weak:
            if flat[k].__class__ is np.ndarray:
                flat[k] = put(flat[k], plan.avals[k], None)
        return flat[0] if plan.single else jax.tree_util.tree_unflatten(plan.out_tree, flat)

    def interpreted(self, *args, finish=None):
        """The call interpreted whatever its count (its plan made or reused as in a call), or
        ``None`` where the interpreter cannot run it (it is not counted): for a caller that
        splits a call the tier claimed into smaller ones (an optimizer's group update, its
        parameters one by one). ``finish``: in place of the Tiered's own, for this call."""
        got = self._entry_of(args)
        if got is None:
            return None
        ent, key, leaves, tree = got
        out = self._run(ent, args, key, leaves, tree, False, None, finish)
        return None if out is _COMPILE else out

    def _run(self, ent, args, key, leaves, tree, claim, limit, finish=None):
        """Interpret a call of signature entry ``ent`` (``CLAIMED`` with ``claim``), or
        ``_COMPILE``."""
        got = _hosts(leaves)
        if got is None:
            ent[0] = _PAST                  # sharded: always compiled
            return _COMPILE
        hosts, size, device = got
        if size > (INTERPRET_MAX_ELEMENTS if limit is None else limit):
            ent[0] = _PAST
            return _COMPILE
        if claim:
            _charge.last = ent
            return CLAIMED
        got = self._plan_and_run(ent, args, key, tree, hosts)
        if got is None:
            return _COMPILE
        plan, flat = got
        finish = finish or self.finish
        if finish is not None:
            return finish(flat, plan, device)
        if plan.single:
            return put(flat[0], plan.avals[0], device)
        return jax.tree_util.tree_unflatten(
            plan.out_tree, [put(h, a, device) for h, a in zip(flat, plan.avals)])

    def _plan_and_run(self, ent, args, key, tree, hosts):
        """The plan of signature entry ``ent`` (made at its first call) run on ``hosts``:
        ``(plan, flat outputs)``, or None where the interpreter cannot run it (a primitive it
        has no numpy form for, counted in ``fallbacks``, or its own defect, in ``errors``):
        the signature takes the compiled path from then on."""
        plans = ent[1]
        if plans is None:
            plans = ent[1] = {}
        plan = plans.get(tree)
        if plan is None:
            plan = self._new_plan(args, key, tree)
            if plan.__class__ is str:       # a primitive the interpreter has no numpy form for
                with _lock:
                    _stats["fallbacks"] += 1
                    _unsupported[plan] = _unsupported.get(plan, 0) + 1
                ent[0] = _PAST
                return None
            plans[tree] = plan
        t = _clock()
        try:
            flat = _interpret.run_plan(plan.run, *hosts)
        except Exception:           # an interpreter defect: the compiled path answers
            with _lock:
                _stats["errors"] += 1
            ent[0] = _PAST
            return None
        if getattr(_charge, "to", None) is None:    # (else a claimed call's stand-in)
            ent[5] += _clock() - t
        _stats["interpreted"] += 1      # (a counter: a lost update under threads is harmless)
        return plan, flat

    def identity(self):
        """``ident``, made now if it was given as a function."""
        i = self.ident = made(self.ident)
        return i

    def _new_plan(self, args, key, tree):
        """The interpreter's plan of a new signature, or the name of the primitive it lacks:
        from the op's shape-polymorphic trace of the signature's pattern, from the trace store,
        or traced now (and stored)."""
        if self.poly is not None and tree is None and _shape_poly.ENABLED:
            got = _shape_poly.trace(self, args)
            if got is not None:
                closed, sizes, out_tree = got
                if _interpret.check(closed) is None:
                    try:
                        return _Plan(closed, out_tree, sizes)
                    except _interpret.Unsupported:
                        pass
                # (a primitive of the symbolic trace the interpreter lacks: traced anew)
        stored = None
        ident = self.identity()
        if ident is not None:
            stored = _trace_store.get(ident, (key, tree))
        if stored is not None:
            jaxpr, out_tree = stored
            with _lock:
                _stats["trace_loads"] += 1
        else:
            jaxpr, shape = trace(self.raw, args)
            out_tree = jax.tree_util.tree_structure(shape)
            with _lock:
                _stats["traces"] += 1
            if ident is not None:           # (a symbolic trace is kept by _shape_poly)
                _trace_store.put(ident, (key, tree), jaxpr, out_tree)
        bad = _interpret.check(jaxpr)
        if bad is not None:
            return bad
        return _Plan(jaxpr, out_tree)

    def _compile_behind(self, ent, tree, args):
        """The background thread's compile of a signature leaving the interpreter (errors are
        left to the foreground call that meets them)."""
        try:
            if self.donate:
                # (``args`` are shapes: a donating program runs on a call's arrays in the
                # foreground only; compiled here, stored on disk, loaded by a foreground call)
                self._compile_stored(ent, tree, args)
            elif self._first_compiled(ent, tree, args) is _COMPILE:
                self.jit(*args)
        except Exception:
            pass

    def _compile_stored(self, ent, tree, spec):
        """Compile a donating program from ``spec`` (shapes) and store it on disk."""
        cache = _program_cache
        name = self._disk_name(ent, tree)
        hits = cache.jax_cache_hits()
        self.jit.lower(*spec).compile()
        if name is not None and cache.jax_cache_hits() == hits:
            cache.save(name, self.jit, spec)

    def _disk_name(self, ent, tree):
        """The program's name in torchlike._program_cache, or None (no cache, no plan)."""
        plan = ent[1].get(tree) if ent[1] else None
        if plan is None or _program_cache.directory() is None:
            return None
        if plan.name is None:
            plan.name = _program_cache.key(plan.jaxpr, self.donate)
        return plan.name

    def _first_compiled(self, ent, tree, args):
        """A signature's first compiled call: its program from disk (torchlike._program_cache),
        else compiled by jax.jit and stored there."""
        cache = _program_cache
        name = self._disk_name(ent, tree)
        if name is None:
            return _COMPILE
        plan = ent[1][tree]
        # (a donating program's arrays are gone once it ran: what is kept is their shapes)
        spec = _abstract(args) if self.donate else args
        exe = cache.load(name, jax.tree_util.tree_structure((args, {})), plan.out_tree)
        if exe is not None:
            try:
                # waited for once: an executable XLA cannot run fails when it is dispatched
                # (a donating one runs on copies: the call keeps its arrays if it fails)
                out = jax.block_until_ready(exe(*(_copied(args, self.donate) if self.donate
                                                  else args)))
            except Exception:       # a program that does not run here: compile it
                cache.discard(name)
                exe = None
        if exe is None:
            hits = cache.jax_cache_hits()
            out = self.compiled_call(*args)
            if cache.jax_cache_hits() == hits:      # compiled here, not loaded by jax
                cache.save(name, self.jit, spec)
            return out
        loaded = ent[2]
        if loaded is None:
            loaded = ent[2] = {}
        loaded[tree] = exe

        def fast_path():            # jax.jit's own dispatch for this signature, then switch
            if self.donate:
                self.jit.lower(*spec).compile()
            else:
                self.jit(*args)
            loaded.pop(tree, None)
        if self.pure:               # (an impure function keeps the loaded program)
            cache.warm(fast_path)
        return out


def _copied(args, donate):
    """``args`` with every array of the donated arguments copied."""
    args = list(args)
    for i in donate:
        args[i] = jax.tree_util.tree_map(
            lambda a: jnp.copy(a) if a.__class__ is _ArrayImpl else a, args[i])
    return args


def _owned(x):
    """Donated argument ``x`` (lists, tuples and dicts of arrays) rebuilt with every array that
    more than its owner and its container reference replaced by a copy. (An array outside a
    container is always copied: who holds it cannot be counted.)"""
    c = x.__class__
    if c is list or c is tuple:
        out = list(x)
        for i in range(len(out)):
            # (references: its owner, ``x``, ``out`` and getrefcount's argument)
            if out[i].__class__ is _ArrayImpl:
                if sys.getrefcount(out[i]) > _OWNED:
                    out[i] = jnp.copy(out[i])
            elif out[i].__class__ in (list, tuple, dict):
                out[i] = _owned(out[i])
        return out if c is list else tuple(out)
    if c is dict:
        return {k: _owned(v) for k, v in x.items()}
    if c is _ArrayImpl:
        return jnp.copy(x)
    return x


_OWNED = 4


def _abstract(args):
    """``args`` with every array as its shape, dtype and (committed) sharding: what a compile
    needs to make the program a call with the arrays themselves finds compiled."""
    return jax.tree_util.tree_map(
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype,
                                       sharding=a.sharding if a.committed else None,
                                       weak_type=a.weak_type)
        if a.__class__ is _ArrayImpl else a, args)


def plan_of(f, tree, leaves):
    """The interpreter's plan of ``f`` at the signature of ``leaves`` (arrays, deferred values
    with shape and dtype, scalars; ``tree`` their structure), made as a first interpreted call
    makes it (its pattern's symbolic trace, the trace store, or traced now) and kept for that
    call; or None (a weak-typed input, whose signature the interpreter does not key, or a
    primitive it lacks): fused eager's abstract evaluation of a call, which then traces it."""
    if not INTERPRET_CALLS:
        return None
    key = []
    spec = []
    for a in leaves:
        t = a.__class__
        if t in _SCALARS:
            key.append(t)
            spec.append(a)
        else:
            if getattr(a, "weak_type", False):     # (numpy inputs are not weak)
                return None
            key.append((a.shape, a.dtype))
            spec.append(jax.ShapeDtypeStruct(a.shape, a.dtype))
    key = tuple(key)
    flat = _is_flat_tuple(tree, len(leaves))
    ptree = None if flat else tree
    ent = f.seen.get(key)
    if ent is not None and ent[1]:
        plan = ent[1].get(ptree)
        if plan is not None:
            return plan
    args = tuple(spec) if flat else jax.tree_util.tree_unflatten(tree, spec)
    plan = f._new_plan(args, key, ptree)
    if plan.__class__ is str:
        return None
    if ent is None:
        if len(f.seen) >= _SEEN_MAX:
            return plan
        ent = f.seen[key] = _entry()
    if ent[1] is None:
        ent[1] = {}
    ent[1].setdefault(ptree, plan)
    return plan


def seed_plan(f, tree, leaves, jaxpr, out_tree):
    """Give ``f``'s interpreter the plan of a signature traced elsewhere (fused eager's abstract
    evaluation), so its first interpreted call does not trace again. ``leaves``: the call's
    flattened inputs (arrays, deferred values with shape and dtype, scalars)."""
    if not INTERPRET_CALLS:
        return
    if _interpret.check(jaxpr) is not None:
        return
    key = []
    for a in leaves:
        t = a.__class__
        key.append(t if t in _SCALARS else (a.shape, a.dtype))
    flat = _is_flat_tuple(tree, len(leaves))
    ent = f.seen.get(tuple(key))
    if ent is None:
        if len(f.seen) >= _SEEN_MAX:
            return
        ent = f.seen[tuple(key)] = _entry()
    if ent[1] is None:
        ent[1] = {}
    ent[1].setdefault(None if flat else tree, _Plan(jaxpr, out_tree))


_FLAT: dict = {}


def _is_flat_tuple(tree, n):
    """Is ``tree`` the structure of ``args`` in ``f(*args)`` with every arg a leaf?"""
    t = _FLAT.get(n)
    if t is None:
        t = _FLAT[n] = jax.tree_util.tree_structure(tuple(range(n)))
    return tree == t


def tiered(raw, jitted=None, name="", finish=None, ident=None):
    """A ``Tiered`` of ``raw`` (``jitted`` defaults to ``jax.jit(raw)``)."""
    return Tiered(raw, (lambda: jax.jit(inlined(raw))) if jitted is None else jitted, name, finish,
                  ident)


def made(ident):
    """An identity (``stable`` text or None), or one given as a function (made on first use),
    made now."""
    return ident if ident is None or ident.__class__ is str else ident()


def once(make):
    """``make``, called once: later calls return its first result."""
    box = []

    def once():
        if not box:
            box.append(make())
        return box[0]
    return once


_STABLE_LEAVES = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis))


def stable(*parts):
    """Text naming ``parts`` that is the same in every process that computes the same thing,
    or None. Allowed: Python scalars and strings, tuples, lists, dicts, slices, numpy dtypes,
    scalars and arrays (by content), types and enum members (by name), torchlike dtypes,
    functions (module, name, code, defaults and closure, recursively) and ``functools.partial``.
    Anything else (an object whose text would be an address, or would not show its whole state)
    gives None: its traces are not kept across processes."""
    out = []
    try:
        for p in parts:
            out.append(_stable(p, 0))
    except _NotStable:
        return None
    return "|".join(out)


class _NotStable(Exception):
    pass


_describing = threading.local()     # the custom derivatives ``stable`` is describing (cycles)


def _stable(o, depth):
    if depth > 12:
        raise _NotStable
    t = o.__class__
    if t in _STABLE_LEAVES:
        return repr(o)
    d = depth + 1
    if (t is tuple or t is list or t is dict) and len(o) > 256:
        raise _NotStable                # (an identity is made once per function; keep it cheap)
    if t is tuple or t is list:
        return t.__name__[0] + "(" + ",".join(_stable(x, d) for x in o) + ")"
    if t is dict:
        items = sorted((_stable(k, d), _stable(v, d)) for k, v in o.items())
        return "d(" + ",".join(f"{k}:{v}" for k, v in items) + ")"
    if t is slice:
        return f"slice({_stable(o.start, d)},{_stable(o.stop, d)},{_stable(o.step, d)})"
    if isinstance(o, np.dtype):
        return "dtype:" + o.str + o.name
    if isinstance(o, np.generic):
        return f"np:{o.dtype.str}:{o.tobytes().hex()}"
    if t is np.ndarray:
        if o.dtype.hasobject or o.nbytes > (1 << 20):
            raise _NotStable
        import hashlib
        return f"nd:{o.dtype.str}{o.shape}:" + hashlib.sha256(
            np.ascontiguousarray(o).tobytes()).hexdigest()
    if isinstance(o, type):
        return f"type:{o.__module__}.{o.__qualname__}"
    if t is np.ufunc:
        return f"npufunc:{o.__name__}"
    import enum
    if isinstance(o, enum.Enum):
        return f"enum:{t.__module__}.{t.__qualname__}.{o.name}"
    import functools
    import types
    if t is functools.partial:
        return f"partial({_stable(o.func, d)},{_stable(o.args, d)},{_stable(o.keywords, d)})"
    if t is types.FunctionType:
        cells = tuple(c.cell_contents for c in (o.__closure__ or ()))
        return (f"fn:{o.__module__}.{o.__qualname__}:{_code(o.__code__)}:"
                f"{_stable(o.__defaults__, d)}:{_stable(o.__kwdefaults__, d)}:"
                f"{_stable(cells, d)}")
    if t is types.BuiltinFunctionType:
        return f"builtin:{getattr(o, '__module__', None)}.{o.__qualname__}"
    if t.__module__ == "torchlike._dtype" and t.__qualname__ == "dtype":
        return "tl:" + repr(o)
    if t.__module__.startswith("jax."):
        # jax's wrappers of a function: custom derivatives, jit, ufuncs (by what they wrap)
        name = t.__qualname__
        if name in ("custom_jvp", "custom_vjp"):
            # (a rule made by ``defjvps`` refers back to its custom_jvp: named as "self")
            active = _describing.__dict__.setdefault("ids", [])
            if id(o) in active:
                return "self"
            active.append(id(o))
            try:
                if name == "custom_jvp":
                    return (f"custom_jvp({_stable(o.fun, d)},{_rule(o.fun, o.jvp, d)},"
                            f"{_stable(o.nondiff_argnums, d)})")
                return (f"custom_vjp({_stable(o.fun, d)},{_rule(o.fun, o.fwd, d)},"
                        f"{_rule(o.fun, o.bwd, d)},{_stable(o.nondiff_argnums, d)})")
            finally:
                active.pop()
        if name == "ufunc":
            return f"ufunc({_stable(o._func, d)},{_stable(o.nin, d)},{_stable(o.nout, d)})"
    wrapped = getattr(o, "__wrapped__", None)
    if wrapped is not None and type(wrapped) is types.FunctionType and \
            t.__name__ == "PjitFunction":
        return f"jit({_stable(wrapped, d)})"
    raise _NotStable


def _rule(fun, rule, depth):
    """A custom derivative's rule: stable, or (for jax's own functions, whose rules its version
    fixes) by name."""
    try:
        return _stable(rule, depth)
    except _NotStable:
        f = getattr(fun, "__wrapped__", fun)
        if getattr(f, "__module__", "").startswith("jax") and hasattr(rule, "__qualname__"):
            return f"rule:{rule.__module__}.{rule.__qualname__}"
        raise


_CODES: dict = {}            # code object -> its fingerprint (code objects are immutable)


def _code(c):
    """A code object's fingerprint: its bytecode, constants (nested code recursively) and names."""
    got = _CODES.get(c)
    if got is None:
        import hashlib
        h = hashlib.sha256(c.co_code)
        for k in c.co_consts:
            h.update((_code(k) if k.__class__ is c.__class__ else _stable(k, 0)).encode())
        h.update(repr((c.co_names, c.co_varnames, c.co_freevars)).encode())
        got = h.hexdigest()[:24]
        if len(_CODES) >= 4096:
            _CODES.clear()
        _CODES[c] = got
    return got


from . import _fused  # noqa: E402  (fused eager records Tiered calls; it imports this module)
from . import _shape_poly  # noqa: E402
from . import _interpret, _program_cache, _trace_store  # noqa: E402
