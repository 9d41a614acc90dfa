"""Process-wide knobs torch scripts set on line one: threads, determinism, default device, ..."""
from __future__ import annotations

__all__: list = []
