"""Spectral helpers at the top level: ``stft``, ``istft`` and the window functions."""
from __future__ import annotations

__all__: list = []
