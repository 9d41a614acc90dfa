"""Every jit cache torchlike keeps, by name, so one call clears or counts them all.

A cache registers ``(clear, counts)``: ``clear()`` drops its compiled programs; ``counts()``
returns a dict of how many times it traced (by entry kind). ``torchlike._registry``'s
``clear_caches()``/``trace_counts()`` cover the op caches and every cache registered here.
"""
from __future__ import annotations

import threading

__all__ = ["register", "clear_all", "counts_all", "names"]

_CACHES: dict = {}
_lock = threading.Lock()


def register(name, clear, counts=None):
    """Register the cache ``name`` (e.g. ``"optim"``, ``"views"``, ``"engine"``, ``"compile"``)."""
    with _lock:
        _CACHES[name] = (clear, counts or (lambda: {}))


def names():
    return sorted(_CACHES)


def clear_all():
    for clear, _ in list(_CACHES.values()):
        clear()


def counts_all():
    """``{cache name: {kind: traces}}`` for every registered cache."""
    return {n: dict(c()) for n, (_, c) in sorted(_CACHES.items())}
