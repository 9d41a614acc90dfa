"""Test-session settings.

Compiled programs are not kept on disk across test processes (torchlike._program_cache): a
program loaded from an earlier run would move a signature's jit trace into a background thread,
and the tests that pin trace and program counts need them to happen where they are counted.
tests/test_program_cache.py turns it on in the processes it starts.
"""
import os

os.environ.setdefault("TORCHLIKE_PROGRAM_CACHE", "0")
# compiles in the foreground: the tests that count programs see them when the call returns
# (tests/test_tiers.py covers background compiles)
os.environ.setdefault("TORCHLIKE_BACKGROUND_COMPILE", "0")
# a signature leaves the interpreter at its count alone, whatever its calls cost: the tests that
# count programs see the same ones on every machine (tests/test_tiers.py covers the budget)
os.environ.setdefault("TORCHLIKE_INTERPRET_BUDGET_MS", "0")

import pytest  # noqa: E402


@pytest.fixture
def strict_eager():
    """Strict eager inside the test, whatever ``$TORCHLIKE_EAGER`` says: for the tests that pin
    the per-op dispatch path (its tiers, traces and programs per op), which fused eager's
    recording replaces by design (tests/test_fused_eager.py pins its own)."""
    import torchlike.eager
    with torchlike.eager.strict():
        yield


@pytest.fixture
def fused():
    """Fused eager inside the test (what was pending before it runs first, and what the test
    leaves pending runs at its end)."""
    import torchlike.eager
    from torchlike import _fused
    _fused.sync()
    with torchlike.eager.fused():
        yield
    _fused.sync()


_XLA_COMPILES = []
_LISTENING = [False]


def _on_compile(name, secs, **kw):
    if _LISTENING[0] and name.endswith("backend_compile_duration"):
        _XLA_COMPILES.append(name)


@pytest.fixture
def xla_compiles():
    """The XLA compiles made while the test runs (a list that fills as they happen)."""
    import jax.monitoring
    if not getattr(_on_compile, "registered", False):
        jax.monitoring.register_event_duration_secs_listener(_on_compile)
        _on_compile.registered = True
    del _XLA_COMPILES[:]
    _LISTENING[0] = True
    try:
        yield _XLA_COMPILES
    finally:
        _LISTENING[0] = False


@pytest.fixture(autouse=True)
def _no_pending_work_from_an_earlier_test():
    """In fused eager, what an earlier test left pending (a step's segment waiting for its
    ``zero_grad``, ops nothing read) runs before this test starts: else this test's first
    recorded call would run it, and its replay's traces and cuts would be counted as this
    test's (a test that clears the caches and counts traces saw one trace too many)."""
    from torchlike import _fused
    if _fused._seg.calls:
        try:
            _fused.sync("test boundary")
        except Exception:  # noqa: BLE001  (an error of the earlier test's own pending work)
            pass
    yield


@pytest.fixture(autouse=True)
def _distributions_validate_args():
    """Distribution argument validation on at every test's start, as in a fresh process: torch
    turns its default off process-wide when its compile machinery is imported (as tests that
    compare with torch.compile do), and a test may leave torchlike's off; a later test comparing
    the two then saw one raise where the other did not, depending on the worker's test order."""
    import sys
    for name in ("torch", "torchlike"):
        m = sys.modules.get(name)
        d = getattr(getattr(m, "distributions", None), "Distribution", None) if m else None
        if d is not None:
            d.set_default_validate_args(True)
    yield
