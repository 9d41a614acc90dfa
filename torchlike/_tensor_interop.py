"""Tensor methods for exchanging data with jax and other array libraries (dlpack, jax views).

``Tensor`` inherits ``InteropMixin``; the methods live here so that interop is one concept in
one file.
"""
from __future__ import annotations


class InteropMixin:
    __slots__ = ()
