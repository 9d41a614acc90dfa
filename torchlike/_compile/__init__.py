"""``torchlike.compile``: a module's forward, or a whole training step, as one XLA program."""
from __future__ import annotations

__all__ = ["compile"]


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    raise NotImplementedError("torchlike.compile is not built yet")
