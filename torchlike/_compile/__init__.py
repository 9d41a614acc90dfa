"""``torchlike.compile``: a module's forward, or a whole training step, as one XLA program.

See docs/compile.md. ``_api.py``: call forms, guards and the bounded cache; ``_node.py``: a
forward as one tape node; ``_step.py``: a training step as one program with its state
threaded through; ``_discover.py``: finding that state; ``_trace.py``: the tracer swap.
"""
from __future__ import annotations

from ._api import compile, CompiledFunction, config, reset  # noqa: F401
from ._trace import Unsupported  # noqa: F401

__all__ = ["compile", "OptimizedModule", "CompiledFunction", "config", "reset", "Unsupported"]


def __getattr__(name):
    if name == "OptimizedModule":
        from ._api import _optimized_module
        return _optimized_module()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
