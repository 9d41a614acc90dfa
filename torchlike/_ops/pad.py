"""Padding: ``torch.nn.functional.pad`` and ``torch.constant_pad_nd``."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .._registry import apply, defop

__all__ = ['constant_pad_nd']


# ------------------------------------------------------------------ pad

@defop("pad", saves=False, grad_name=lambda kw: {"constant": "ConstantPadNdBackward0",
                                                 "reflect": "ReflectionPad{}DBackward0",
                                                 "replicate": "ReplicationPad{}DBackward0",
                                                 "circular": "CopySlices"}[kw["mode"]]
       .format(len(kw["pads"])))
def _pad(a, pads, mode, value):
    """``pads``: ((before, after), ...) for the last len(pads) dims, innermost last."""
    n = a.ndim
    full = [(0, 0)] * (n - len(pads)) + list(pads)
    if mode == "constant":
        cfg = [(lo, hi, 0) for lo, hi in full]
        return jax.lax.pad(a, jnp.asarray(value, a.dtype), cfg)
    # negative pads crop first, then the positive parts are padded
    crop = tuple(slice(max(-lo, 0), a.shape[i] - max(-hi, 0)) for i, (lo, hi) in
                 enumerate(full))
    a = a[crop]
    pos = [(max(lo, 0), max(hi, 0)) for lo, hi in full]
    jmode = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    return jnp.pad(a, pos, mode=jmode)


def pad(input, pad, mode="constant", value=None):
    """torch.nn.functional.pad: ``pad`` pairs from the last dim backwards."""
    for i, p in enumerate(pad):
        if isinstance(p, float):
            raise TypeError("pad(): argument 'pad' (position 2) must be tuple of ints, but found "
                            f"element of type float at pos {i}")
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    n = input._d.ndim
    k = len(pad) // 2
    if k > n:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           "dimension but got padding length " f"{len(pad)} and input of "
                           f"dimension {n}")
    pairs = tuple((pad[2 * i], pad[2 * i + 1]) for i in range(k))[::-1]
    if mode == "constant":
        for i, (lo, hi) in enumerate(pairs):
            size = input._d.shape[n - k + i] + lo + hi
            if size < 0:
                raise RuntimeError(f"The input size {input._d.shape[n - k + i]}, plus "
                                   f"negative padding {lo} and {hi} resulted in a negative "
                                   f"output size, which is invalid. Check dimension "
                                   f"{n - k + i} of your input.")
        return apply(_pad, input, pads=pairs, mode="constant",
                     value=0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    shape = tuple(input._d.shape)
    if k > 3 or n not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {n}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode in ("reflect", "replicate") and any(d == 0 for d in shape[n - k - 1:]):
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 "
                           "batch size and other non-zero dimensions for input, but got: "
                           f"{list(shape)}")
    if mode == "reflect":
        # torch checks the last dimension first (its argument #4, then #6, #8)
        for j, (lo, hi) in enumerate(reversed(pairs)):
            dim = n - 1 - j
            if lo >= shape[dim] or hi >= shape[dim]:
                raise RuntimeError(f"Argument #{4 + 2 * j}: Padding size should be less than "
                                   f"the corresponding input dimension, but got: padding ({lo}, "
                                   f"{hi}) at dimension {dim} of input {list(shape)}")
    if mode == "circular":
        for i, (lo, hi) in enumerate(pairs):
            if lo > shape[n - k + i] or hi > shape[n - k + i]:
                raise RuntimeError("Padding value causes wrapping around more than once.")
    return apply(_pad, input, pads=pairs, mode=mode, value=0)


def constant_pad_nd(input, pad, value=0):
    return globals()["pad"](input, pad, "constant", value)

