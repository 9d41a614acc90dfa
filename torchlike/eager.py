"""How eager code executes: strict or fused, and the interpreter tier in front of XLA.

**Strict** (the default): each op dispatches at once through one path with two tiers. On the
CPU backend, the first ``interpret_calls()`` calls at a signature (the op, its static
arguments, its inputs' shapes and dtypes) evaluate the op's jaxpr with numpy: a first call
costs about a millisecond of tracing instead of a 10-300 ms XLA compile. Past them a signature
stays interpreted until its interpreted calls have taken ``interpret_budget()`` milliseconds in
all, then runs its compiled program (a call far cheaper than a compile is not compiled for a
short loop). Accelerators and ``torchlike.compile`` always run compiled programs. A benchmark of
the steady state sets ``set_interpret_budget(0)`` (the count alone decides) and ends its
warm-up with ``wait_compiles()``.

**Fused** (``TORCHLIKE_EAGER=fused``, ``set_mode("fused")`` or ``with fused():``): ops are
recorded, not dispatched; the ops between two host reads (``item()``, printing, ``numpy()``,
a value check, ``sync()``) run as one XLA program, cached by the segment's structure, so a
training loop runs one program per step. A segment met for the first and second time runs its
ops one by one through the tiers above; from its third meeting it runs its compiled program.
``stats()["fused"]["cuts"]`` says what made segments run.

    >>> import torchlike, torchlike.eager
    >>> torchlike.eager.interpret_calls()           # $TORCHLIKE_INTERPRET_CALLS, default 8
    8
    >>> with torchlike.eager.interpreting(0):       # compile at once: bit-stable float results
    ...     y = torchlike.ones(3).exp()

Float results of the interpreter and of fused programs may differ from the op-by-op compiled
programs' in the last bits; integer, bool and data-movement results are identical
(DIFFERENCES.md).
"""
from __future__ import annotations

import contextlib
import os

from . import _fused
from . import _tiers

__all__ = ["interpret_calls", "set_interpret_calls", "interpreting", "interpret_budget",
           "set_interpret_budget", "stats", "mode", "set_mode", "fused", "strict", "sync",
           "wait_compiles"]


def interpret_calls():
    """How many calls at a signature are interpreted before it compiles (0: the tier is off)."""
    return _tiers.INTERPRET_CALLS


def set_interpret_calls(n):
    """Interpret each signature's first ``n`` calls (0 turns the tier off); returns the old n."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"set_interpret_calls(): expected an int >= 0, got {n!r}")
    return _tiers.set_interpret_calls(n)


def interpret_budget():
    """The milliseconds a signature's interpreted calls may take in all before it compiles
    (``$TORCHLIKE_INTERPRET_BUDGET_MS``, default 20)."""
    return _tiers.INTERPRET_BUDGET * 1e3


def set_interpret_budget(ms):
    """Set ``interpret_budget()`` (0: a signature leaves the interpreter at its count alone);
    returns the old value."""
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not ms >= 0:
        raise ValueError(f"set_interpret_budget(): expected a number >= 0, got {ms!r}")
    return _tiers.set_interpret_budget(ms / 1e3) * 1e3


@contextlib.contextmanager
def interpreting(n):
    """Context manager: ``set_interpret_calls(n)`` inside the block, the old value after."""
    old = set_interpret_calls(n)
    try:
        yield
    finally:
        _tiers.set_interpret_calls(old)


def mode():
    """``"strict"`` or ``"fused"``: how eager ops execute now."""
    return _fused.mode()


def set_mode(name):
    """Switch eager execution to ``"fused"`` or ``"strict"``; returns the previous mode.
    Leaving fused mode runs the pending ops."""
    return _fused.set_mode(name)


@contextlib.contextmanager
def fused():
    """Context manager: fused eager inside the block (pending ops run when it ends)."""
    old = set_mode("fused")
    try:
        yield
    finally:
        set_mode(old)


@contextlib.contextmanager
def strict():
    """Context manager: strict eager inside the block (each op runs at once: debugging)."""
    old = set_mode("strict")
    try:
        yield
    finally:
        set_mode(old)


def sync():
    """Run the ops recorded so far (fused mode; nothing to do in strict mode)."""
    _fused.sync("sync")


def wait_compiles(timeout=None):
    """Wait until the compiles handed to the background thread so far are done (signatures
    leaving the interpreter compile there while their calls stay interpreted): a benchmark's
    warm-up ends here, so that its timed steps run the compiled programs. Returns False if
    ``timeout`` seconds passed first."""
    from . import _program_cache
    return _program_cache.wait(timeout)


def stats():
    """The interpreter tier's counters (``interpreted``, ``traces``, ``trace_loads``,
    ``fallbacks``, ``errors``, ``background``, ``unsupported``: calls it ran, jaxprs it traced
    and loaded from disk, signatures compiled at once for a primitive without a numpy form,
    interpreter failures answered by the compiled path, compiles handed to the background
    thread), under ``"shape_poly"`` the shape-polymorphic traces' (``torchlike._shape_poly``)
    and under ``"fused"`` fused eager's (``torchlike._fused.stats``)."""
    from . import _shape_poly
    out = _tiers.stats()
    out["shape_poly"] = _shape_poly.stats()
    out["fused"] = _fused.stats()
    return out


def _mode_from_environment():
    name = os.environ.get("TORCHLIKE_EAGER", "").strip().lower()
    if name in ("", "strict"):
        return
    if name != "fused":
        raise ValueError(f"TORCHLIKE_EAGER must be 'strict' or 'fused', got {name!r}")
    set_mode("fused")
