"""torch._dynamo.eval_frame: where libraries find ``OptimizedModule`` (accelerate's
``unwrap_model``, Hugging Face's Trainer): the class of ``torchlike.compile(module)``."""
from __future__ import annotations

__all__ = ["OptimizedModule"]


def __getattr__(name):
    if name == "OptimizedModule":
        from .._compile._api import _optimized_module
        return _optimized_module()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
