"""Special functions exposed at the top level (``torchlike.i0``, ``polygamma``, ...), declared
once here and shared with ``torchlike.special``."""
from __future__ import annotations

__all__: list = []
