"""How eager code executes: the interpreter tier in front of XLA's compiled programs.

Every op (and the engine's, storage's, optimizers' and random draws' jitted helpers) runs
through one dispatch path with two tiers. On the CPU backend, the first ``interpret_calls()``
calls at a signature (the op, its static arguments, its inputs' shapes and dtypes) evaluate the
op's jaxpr with numpy: a first call costs about a millisecond of tracing instead of a 10-300 ms
XLA compile. From the next call on the op runs its compiled program. Accelerators and
``torchlike.compile`` always run compiled programs.

    >>> import torchlike, torchlike.eager
    >>> torchlike.eager.interpret_calls()           # $TORCHLIKE_INTERPRET_CALLS, default 8
    8
    >>> with torchlike.eager.interpreting(0):       # compile at once: bit-stable float results
    ...     y = torchlike.ones(3).exp()

Float results of the interpreter may differ from the compiled program's in the last bits;
integer, bool and data-movement results are identical (DIFFERENCES.md).
"""
from __future__ import annotations

import contextlib

from . import _tiers

__all__ = ["interpret_calls", "set_interpret_calls", "interpreting", "stats"]


def interpret_calls():
    """How many calls at a signature are interpreted before it compiles (0: the tier is off)."""
    return _tiers.INTERPRET_CALLS


def set_interpret_calls(n):
    """Interpret each signature's first ``n`` calls (0 turns the tier off); returns the old n."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"set_interpret_calls(): expected an int >= 0, got {n!r}")
    return _tiers.set_interpret_calls(n)


@contextlib.contextmanager
def interpreting(n):
    """Context manager: ``set_interpret_calls(n)`` inside the block, the old value after."""
    old = set_interpret_calls(n)
    try:
        yield
    finally:
        _tiers.set_interpret_calls(old)


def stats():
    """``{"interpreted", "traces", "fallbacks", "errors", "unsupported"}``: calls the interpreter
    ran, jaxprs it traced, signatures compiled at once for a primitive it has no numpy form for
    (``unsupported``: counts by primitive), and interpreter failures answered by the compiled
    path (a defect: please report it)."""
    return _tiers.stats()
