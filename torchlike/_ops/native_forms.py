"""torch's top-level native forms of nn.functional ops, which also return what the kernel saves
for backward: ``native_layer_norm`` (output, mean, rstd), ``native_batch_norm`` (output,
save_mean, save_invstd), ``native_dropout`` (output, mask) and ``embedding_bag`` (output,
offset2bag, bag_size, max_indices). The output is nn.functional's (its checks, its backward);
the other results follow torch's CPU kernels and do not require grad.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .._registry import apply, defop
from .._tensor import Tensor
from ._surface import public

__all__ = ["native_layer_norm", "native_batch_norm", "native_dropout", "embedding_bag"]


def _no_grad():
    from ..autograd import grad_mode
    return grad_mode.no_grad()


# ------------------------------------------------------------------ norms

@public
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """``layer_norm``'s output, and the mean and reciprocal std of each normalized slice (in
    ``input``'s dtype, shaped ``input.shape[:axis] + (1,) * len(normalized_shape)``)."""
    from ..nn import functional as F
    out = F.layer_norm(input, normalized_shape, weight, bias, eps)
    n = len(tuple(normalized_shape))
    dims = tuple(range(input.dim() - n, input.dim()))
    with _no_grad():
        x = input.detach()
        xf = x.float() if x.dtype in (D.float16, D.bfloat16) else x
        mean = xf.mean(dims, keepdim=True) if dims else xf.clone()
        var = ((xf - mean) ** 2).mean(dims, keepdim=True) if dims else xf * 0
        rstd = (var + eps).rsqrt()
    return out, mean.to(input.dtype), rstd.to(input.dtype)


@public
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                      eps):
    """``batch_norm``'s output (updating the running statistics in training), and the batch
    mean and inverse std per channel in training (empty tensors in evaluation)."""
    from ..nn import functional as F
    with _no_grad():
        x = input.detach()
        if training and x.dim() >= 2 and x.numel() > 0:
            dims = (0,) + tuple(range(2, x.dim()))
            xf = x.float() if x.dtype in (D.float16, D.bfloat16) else x
            mean = xf.mean(dims)
            shape = (1, -1) + (1,) * (x.dim() - 2)
            invstd = (((xf - mean.reshape(shape)) ** 2).mean(dims) + eps).rsqrt()
            save = (mean.to(input.dtype), invstd.to(input.dtype))
        else:
            save = None
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if save is None:
        from .. import empty
        save = (empty(0, dtype=input.dtype), empty(0, dtype=input.dtype))
    return (out, *save)


# ------------------------------------------------------------------ dropout

def _masked(x, keep, scale, grad_scale):
    """``x`` times ``keep * scale``, whose backward scales by ``grad_scale`` (torch's
    native_dropout_backward: 1 unless ``train`` was given as True)."""
    @jax.custom_vjp
    def f(x, keep):
        return jnp.where(keep, x * jnp.asarray(scale, x.dtype), jnp.zeros_like(x))

    def fwd(x, keep):
        return f(x, keep), keep

    def bwd(keep, g):
        return (jnp.where(keep, g * jnp.asarray(grad_scale, g.dtype), jnp.zeros_like(g)),
                None)

    f.defvjp(fwd, bwd)
    return f(x, keep)


@defop("native_dropout", grad_name="NativeDropoutBackward0")
def _native_dropout(x, key, p, train):
    keep = (jnp.ones(x.shape, bool) if train is False
            else jax.random.bernoulli(jax.random.wrap_key_data(key), 1.0 - p, x.shape))
    scale = 1.0 if train is False else (1.0 / (1.0 - p) if p < 1 else 0.0)
    return _masked(x, keep, scale, scale if train else 1.0), keep


@public
def native_dropout(input, p, train):
    """(output, mask): each element kept with probability ``1 - p`` and scaled by
    ``1 / (1 - p)`` (``mask``: the kept ones, bool); ``train=False`` keeps every element.
    As torch's, the gradient is scaled only when ``train`` is True (None drops but does not
    scale the gradient)."""
    from .. import _random
    from ..nn.functional import _dropout_float_only
    if train is not False:
        _dropout_float_only(input)
    return apply(_native_dropout, input, _random.next_key_data(), p=float(p),
                 train=None if train is None else bool(train))


# ------------------------------------------------------------------ embedding_bag

_MODES = {0: "sum", 1: "mean", 2: "max"}


@public
def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, *padding_idx):
    """``nn.functional.embedding_bag``'s output (``mode``: 0 sum, 1 mean, 2 max), and torch's
    CPU kernel's ``offset2bag`` (each index's bag; empty for sum without ``padding_idx``),
    ``bag_size`` (the non-padding indices per bag; zeros for sum) and ``max_indices`` (max:
    the weight row of each output element; mean: ``bag_size``; sum: zeros), in the indices'
    dtype."""
    from ..nn import functional as F
    # (torch's overload with ``padding_idx`` takes it by position only: a keyword is refused)
    if len(padding_idx) > 1:
        raise TypeError(f"embedding_bag() takes from 3 to 9 positional arguments but "
                        f"{8 + len(padding_idx)} were given")
    padding_idx = padding_idx[0] if padding_idx else None
    if mode not in _MODES:
        raise RuntimeError("`mode` must be sum, mean, or max.")
    if per_sample_weights is not None and mode != 0:
        raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
    out = F.embedding_bag(indices, weight, offsets, scale_grad_by_freq=scale_grad_by_freq,
                          mode=_MODES[mode], sparse=sparse,
                          per_sample_weights=per_sample_weights,
                          include_last_offset=include_last_offset, padding_idx=padding_idx)
    idx = np.asarray(indices._data).reshape(-1).astype(np.int64)
    off = np.asarray(offsets._data).astype(np.int64)
    if include_last_offset:
        off = off[:-1]
    nbags = len(off)
    seg = np.searchsorted(off, np.arange(idx.size), side="right") - 1
    pad = None if padding_idx is None else (
        padding_idx + weight.shape[0] if padding_idx < 0 else padding_idx)
    valid = np.ones(idx.size, bool) if pad is None else idx != pad
    it = indices.dtype.np
    if mode == 0:
        offset2bag = seg if pad is not None else np.zeros(0, np.int64)
        bag_size = np.zeros(nbags, np.int64)
        max_indices = np.zeros(nbags, np.int64)
    else:
        offset2bag = seg
        bag_size = np.bincount(seg[valid], minlength=nbags)
        if mode == 1:
            max_indices = bag_size
        else:
            w = np.asarray(weight.detach().float()._data) if weight.dtype in (
                D.float16, D.bfloat16) else np.asarray(weight._data)
            max_indices = np.zeros((nbags, weight.shape[1]), np.int64)
            best = np.zeros((nbags, weight.shape[1]), w.dtype)
            seen = np.zeros(nbags, bool)
            for i in np.nonzero(valid)[0]:      # (torch's loop: the first maximum wins)
                b, row = seg[i], w[idx[i]]
                better = row > best[b] if seen[b] else np.ones(row.shape, bool)
                best[b] = np.where(better, row, best[b])
                max_indices[b] = np.where(better, idx[i], max_indices[b])
                seen[b] = True
    extra = tuple(Tensor._make(jnp.asarray(np.asarray(a).astype(it)))
                  for a in (offset2bag, bag_size, max_indices))
    return (out, *extra)
