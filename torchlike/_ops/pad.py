"""Padding: ``torch.nn.functional.pad`` and ``torch.constant_pad_nd``."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .._registry import apply, defop

__all__ = ['constant_pad_nd']


# ------------------------------------------------------------------ pad

# (torch's reflection and replication pads save their input; a constant pad nothing; the
# circular pad's CopySlices is freed by a backward)
@defop("pad", saves=lambda kw: kw["mode"] != "constant",
       grad_name=lambda kw: {"constant": "ConstantPadNdBackward0",
                             "reflect": "ReflectionPad{}DBackward0",
                             "replicate": "ReplicationPad{}DBackward0",
                             "circular": "CopySlices"}[kw["mode"]].format(len(kw["pads"])))
def _pad(a, pads, mode, value):
    """``pads``: ((before, after), ...) for the last len(pads) dims, innermost last."""
    n = a.ndim
    full = [(0, 0)] * (n - len(pads)) + list(pads)
    if mode == "constant":
        cfg = [(lo, hi, 0) for lo, hi in full]
        return jax.lax.pad(a, jnp.asarray(value, a.dtype), cfg)
    if mode in ("reflect", "replicate"):
        # torch's kernels map every output index to an input index of the *uncropped* input
        # (a negative pad on one side shifts the other side's reflection), dim by dim
        for d, (lo, hi) in enumerate(full):
            if lo or hi:
                a = jnp.take(a, _pad_index(mode, a.shape[d], lo, hi), axis=d, mode="clip")
        return a
    # negative pads crop first, then the positive parts are padded
    crop = tuple(slice(max(-lo, 0), a.shape[i] - max(-hi, 0)) for i, (lo, hi) in
                 enumerate(full))
    a = a[crop]
    pos = [(max(lo, 0), max(hi, 0)) for lo, hi in full]
    return jnp.pad(a, pos, mode="wrap")


def _pad_index(mode, n, lo, hi):
    """The input index of each output index along one dim (torch's reflection/replication
    pad kernels' arithmetic)."""
    j = np.arange(max(n + lo + hi, 0))
    if mode == "reflect":
        ip = np.where(j < lo, 2 * lo - j, np.where(j < n + lo, j, 2 * (n + lo - 1) - j))
    else:
        ip = np.clip(j, lo, n + lo - 1)
    return ip - max(lo, 0) + max(-lo, 0)


def pad(input, pad, mode="constant", value=None, _name="pad"):
    """torch.nn.functional.pad: ``pad`` pairs from the last dim backwards."""
    _int_list(_name, "pad", 2, pad)
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
        # torch's constant_pad_nd narrows by the negative pads first, dim by dim
        for i, (lo, hi) in enumerate(pairs):
            size = input._d.shape[n - k + i]
            for p in (lo, hi):
                if p < 0:
                    size += p
                    if size < 0:
                        raise RuntimeError("narrow(): length must be non-negative.")
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
    if mode in ("reflect", "replicate"):
        _negative_output_check(mode, shape, pairs)
    if mode == "circular":
        for i, (lo, hi) in enumerate(pairs):
            if lo > shape[n - k + i] or hi > shape[n - k + i]:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            if shape[n - k + i] + lo + hi < 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension")
    return apply(_pad, input, pads=pairs, mode=mode, value=0)


def _negative_output_check(mode, shape, pairs):
    """reflection/replication padding's output size checks (negative pads crop): every
    padded dim below 1 is "too small"; some negative, torch fails allocating."""
    k = len(pairs)
    ins = shape[len(shape) - k:]
    outs = [d + lo + hi for d, (lo, hi) in zip(ins, pairs)]
    if all(o < 1 for o in outs):
        names = "DHW"[3 - k:]
        if k == 3:
            have = f"D: {ins[0]} H: {ins[1]}, W: {ins[2]}"
        else:
            have = ", ".join(f"{a}: {d}" for a, d in zip(names, ins))
            if k == 2 and mode == "replicate":
                have += " "
        got = " ".join(f"{a}: {o}" for a, o in zip(names, outs))
        raise RuntimeError(f"input ({have}) is too small. Calculated output {got}")
    if any(o < 0 for o in outs):
        if k == 2 and mode == "reflect":
            raise RuntimeError("numel: integer multiplication overflow")
        full = list(shape[:len(shape) - k]) + outs
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{next(o for o in outs if o < 0)}: {full}")


def _int_list(fn, arg, pos, value):
    """torch's argument parser for a ``SymInt[]`` argument (no single int): ints, numpy ints
    and integral one-element tensors; a bool, float, None or string is a TypeError."""
    from .._tensor import Tensor

    def name(v):
        t = type(v)
        if isinstance(v, Tensor):
            return "Tensor"
        return t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be tuple of ints, not "
                        f"{name(value)}")
    for i, v in enumerate(value):
        if isinstance(v, Tensor):
            ok = v.ndim == 0 and not (v.dtype.is_floating_point or v.dtype.is_complex)
        else:
            # (the parser's first-element check refuses a bool; the later elements' does not)
            ok = isinstance(v, (int, np.integer)) and not (i == 0 and isinstance(v, bool))
        if ok:
            continue
        if i:
            raise TypeError(f"{fn}(): argument '{arg}' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got "
                            f"{name(v)}\"")
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be tuple of ints, but "
                        f"found element of type {name(v)} at pos 0")


def constant_pad_nd(input, pad, value=0):
    return globals()["pad"](input, pad, "constant", value, _name="constant_pad_nd")

