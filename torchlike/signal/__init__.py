"""torchlike.signal: torch.signal's namespace (its window functions, ``signal.windows``).

>>> import torchlike as torch
>>> torch.signal.windows.hann(4)
tensor([0.0000, 0.7500, 0.7500, 0.0000])
"""
from . import windows

__all__ = ["windows"]
