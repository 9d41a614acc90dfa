"""torch._dynamo: the names scripts and test suites call (``reset``, ``config``, ...).

torchlike.compile traces with jax (``torchlike/_compile``), so dynamo's settings have nothing to
steer: ``config`` accepts and keeps any setting, ``reset`` clears torchlike.compile's caches.
"""
from __future__ import annotations

from . import config, eval_frame, exc  # noqa: F401

__all__ = ["reset", "config", "is_compiling", "disable", "allow_in_graph", "mark_dynamic",
           "mark_static", "maybe_mark_dynamic", "mark_static_address", "optimize",
           "assume_constant_result", "OptimizedModule"]


def reset():
    """Forget every compiled function (torchlike.compile's caches)."""
    from ..compiler import reset as _reset
    _reset()


def is_compiling():
    from ..compiler import is_compiling as _is_compiling
    return _is_compiling()


def disable(fn=None, recursive=True, *, reason=None):
    from ..compiler import disable as _disable
    return _disable(fn, recursive, reason=reason)


def allow_in_graph(fn):
    return fn


def assume_constant_result(fn):
    from ..compiler import assume_constant_result as _assume
    return _assume(fn)


def mark_dynamic(t, index, *, min=None, max=None, specialize_on=None):
    """Accepted; jax traces one program per shape."""


def maybe_mark_dynamic(t, index):
    """Accepted; jax traces one program per shape."""


def mark_static(t, index=None):
    """Accepted; every shape is static under jax."""


def mark_static_address(t, guard=True):
    """Accepted; there is no CUDA graph capture."""


def optimize(backend="inductor", *, nopython=False, **kwargs):
    """torch._dynamo.optimize(backend)(fn): ``torchlike.compile(fn, fullgraph=nopython)``."""
    from .._compile import compile as _compile

    def wrap(fn):
        return _compile(fn, fullgraph=nopython)
    return wrap


def __getattr__(name):
    if name == "OptimizedModule":         # (the class of torchlike.compile(module))
        return eval_frame.OptimizedModule
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
