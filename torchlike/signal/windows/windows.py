"""torch.signal.windows' window functions, built from torchlike's tensor ops.

Each window is a ``linspace`` ramp (which carries ``dtype``, ``device`` and ``requires_grad``)
passed through ordinary ops (``exp``, ``sin``, ``cos``, ``i0``, ...), so autograd, dtypes and
devices behave as for any other torchlike computation. The ramps' end points and the order of
the arithmetic are torch's, so float32 values agree with torch's to float32 rounding.

Argument checks come in torch's order and raise torch's errors: the window length, the layout
and the dtype first (``ValueError``), then the window's own parameters. ``hann``, ``hamming``,
``general_hamming`` and ``nuttall`` are ``general_cosine`` with fixed coefficients and report
their errors under that name, as torch's do.

>>> import torchlike as torch
>>> torch.signal.windows.bartlett(5)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""
from __future__ import annotations

import math
from collections.abc import Iterable

import torchlike as _tl

__all__ = [
    "bartlett",
    "blackman",
    "cosine",
    "exponential",
    "gaussian",
    "general_cosine",
    "general_hamming",
    "hamming",
    "hann",
    "kaiser",
    "nuttall",
]

_NUTTALL = [0.3635819, 0.4891775, 0.1365995, 0.0106411]
_BLACKMAN = [0.42, 0.5, 0.08]


def _checked_dtype(name, M, dtype, layout):
    """The window's dtype (the default dtype when None), after torch's common checks."""
    if dtype is None:
        dtype = _tl.get_default_dtype()
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not _tl.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_tl.float32, _tl.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _empty(dtype, layout, device, requires_grad):
    return _tl.empty((0,), dtype=dtype, layout=layout, device=device,
                     requires_grad=requires_grad)


def _one(dtype, layout, device, requires_grad):
    return _tl.ones((1,), dtype=dtype, layout=layout, device=device,
                    requires_grad=requires_grad)


def _ramp(start, end, M, dtype, layout, device, requires_grad):
    """M points from start to end: the window's argument, a leaf when it requires grad."""
    return _tl.linspace(start=start, end=end, steps=M, dtype=dtype, layout=layout,
                        device=device, requires_grad=requires_grad)


def _span(M, sym):
    """SciPy's convention: a periodic window of M points is a symmetric one of M + 1, cut."""
    return M if not sym and M > 1 else M - 1


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=_tl.strided,
                device=None, requires_grad=False):
    r"""The exponential (Poisson) window: ``exp(-|n - center| / tau)``.

    ``center`` defaults to the window's middle and may only be given for a periodic window
    (``sym=False``); ``tau`` must be positive.
    """
    dtype = _checked_dtype("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _empty(dtype, layout, device, requires_grad)
    if center is None:
        center = _span(M, sym) / 2.0
    scale = 1 / tau
    k = _ramp(-center * scale, (-center + (M - 1)) * scale, M, dtype, layout, device,
              requires_grad)
    return _tl.exp(-_tl.abs(k))


def cosine(M, *, sym=True, dtype=None, layout=_tl.strided, device=None, requires_grad=False):
    r"""The cosine (sine) window, SciPy's: ``sin(pi (n + 0.5) / M)``."""
    dtype = _checked_dtype("cosine", M, dtype, layout)
    if M == 0:
        return _empty(dtype, layout, device, requires_grad)
    # (torch's periodic cosine window divides by M + 1, not by M as SciPy's does)
    scale = _tl.pi / (M + 1 if not sym and M > 1 else M)
    k = _ramp(0.5 * scale, (0.5 + (M - 1)) * scale, M, dtype, layout, device, requires_grad)
    return _tl.sin(k)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=_tl.strided, device=None,
             requires_grad=False):
    r"""The Gaussian window: ``exp(-(n / (2 std))^2)`` about the window's middle."""
    dtype = _checked_dtype("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _empty(dtype, layout, device, requires_grad)
    first = -_span(M, sym) / 2.0
    scale = 1 / (std * math.sqrt(2))
    k = _ramp(first * scale, (first + (M - 1)) * scale, M, dtype, layout, device,
              requires_grad)
    return _tl.exp(-(k ** 2))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=_tl.strided, device=None,
           requires_grad=False):
    r"""The Kaiser window: ``I0(beta sqrt(1 - ((n - N/2) / (N/2))^2)) / I0(beta)``.

    ``N`` is ``M - 1`` for a symmetric window, ``M`` for a periodic one; ``beta`` must be
    non-negative.
    """
    dtype = _checked_dtype("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M == 0:
        return _empty(dtype, layout, device, requires_grad)
    if M == 1:
        return _one(dtype, layout, device, requires_grad)
    # beta in the window's dtype, so that beta^2 - k^2 never dips below zero at the ends
    b = _tl.tensor(beta, dtype=dtype, device=device)
    step = 2.0 * b / (M if not sym else M - 1)
    end = _tl.minimum(b, -b + (M - 1) * step)
    k = _ramp(-b, end, M, dtype, layout, device, requires_grad)
    return _tl.i0(_tl.sqrt(b * b - _tl.pow(k, 2))) / _tl.i0(b)


def hamming(M, *, sym=True, dtype=None, layout=_tl.strided, device=None,
            requires_grad=False):
    r"""The Hamming window: ``0.54 - 0.46 cos(2 pi n / (M - 1))``."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=_tl.strided, device=None, requires_grad=False):
    r"""The Hann window: ``0.5 (1 - cos(2 pi n / (M - 1)))``."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=_tl.strided, device=None,
             requires_grad=False):
    r"""The Blackman window: ``0.42 - 0.5 cos(2 pi n / (M - 1)) + 0.08 cos(4 pi n / (M - 1))``."""
    dtype = _checked_dtype("blackman", M, dtype, layout)
    return general_cosine(M, a=_BLACKMAN, sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=_tl.strided, device=None,
             requires_grad=False):
    r"""The Bartlett (triangular) window: ``1 - |2 n / (M - 1) - 1|``."""
    dtype = _checked_dtype("bartlett", M, dtype, layout)
    if M == 0:
        return _empty(dtype, layout, device, requires_grad)
    if M == 1:
        return _one(dtype, layout, device, requires_grad)
    step = 2 / (M if not sym else M - 1)
    k = _ramp(-1, -1 + (M - 1) * step, M, dtype, layout, device, requires_grad)
    return 1 - _tl.abs(k)


def general_cosine(M, *, a, sym=True, dtype=None, layout=_tl.strided, device=None,
                   requires_grad=False):
    r"""The generalized cosine window: ``sum_i (-1)^i a[i] cos(2 pi i n / (M - 1))``.

    ``a`` is the coefficients' list or tuple (checked only for windows of two or more points,
    as torch does).
    """
    dtype = _checked_dtype("general_cosine", M, dtype, layout)
    if M == 0:
        return _empty(dtype, layout, device, requires_grad)
    if M == 1:
        return _one(dtype, layout, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    step = 2 * _tl.pi / (M if not sym else M - 1)
    k = _ramp(0, (M - 1) * step, M, dtype, layout, device, requires_grad)
    coefs = _tl.tensor([(-1) ** i * w for i, w in enumerate(a)], device=device, dtype=dtype,
                       requires_grad=requires_grad)
    order = _tl.arange(coefs.shape[0], dtype=coefs.dtype, device=coefs.device,
                       requires_grad=coefs.requires_grad)
    # one row per term, summed over the terms
    return (coefs.unsqueeze(-1) * _tl.cos(order.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=_tl.strided, device=None,
                    requires_grad=False):
    r"""The generalized Hamming window: ``alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=_tl.strided, device=None,
            requires_grad=False):
    r"""Nuttall's minimum 4-term Blackman-Harris window (SciPy's coefficients)."""
    return general_cosine(M, a=_NUTTALL, sym=sym, dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
