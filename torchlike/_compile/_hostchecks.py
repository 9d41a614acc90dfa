"""Host-side value checks, made traceable while torchlike.compile traces.

Some functions check values on the host before their jitted op runs (class indices of
``cross_entropy``/``nll_loss``, ``embedding`` indices): torch raises where jax would clamp
silently. On a tracer such a check cannot run at trace time; while tracing, these functions are
replaced by versions that run the same check as a host callback inside the program (the error
is raised when the program runs), so a compiled step keeps torch's errors and never clamps
silently. The replacements are installed only for the length of a trace.

(The clean home for this is the functions themselves, skipping the host check on tracers and
calling ``value_check``; until then this module keeps the compiled path free of graph breaks.)
"""
from __future__ import annotations

import jax
import numpy as np

__all__ = ["value_check", "install", "uninstall"]


def value_check(array, bad, error):
    """Raise ``error`` when the program runs if ``bad(numpy array)`` is true."""
    def host(a):
        if bad(np.asarray(a)):
            raise error
    jax.debug.callback(host, array)


_saved = []


def install():
    from ..nn import functional as F
    from .._dtype import _FLOAT
    from .._ops._registry import apply
    from ._trace import is_tracer
    if _saved or not (hasattr(F, "_check_target_range") and hasattr(F, "_embedding")):
        return        # the functions changed shape: their host checks then break the trace
    orig_range = F._check_target_range
    orig_emb = F.embedding

    def check_target_range(input, target, ignore_index):
        if not is_tracer(target._data):
            return orig_range(input, target, ignore_index)
        c = input.shape[0] if input.ndim == 1 else input.shape[1]
        value_check(target._data, lambda t: bool(((t != ignore_index) & ((t < 0) | (t >= c)))
                                                 .any()),
                    IndexError("Target is out of bounds."))

    def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
                  scale_grad_by_freq=False, sparse=False):
        if (not is_tracer(input._data) or max_norm is not None
                or input.dtype.category >= _FLOAT):
            return orig_emb(input, weight, padding_idx, max_norm, norm_type,
                            scale_grad_by_freq, sparse)
        n = weight.shape[0]
        if padding_idx is not None:
            if padding_idx > 0:
                assert padding_idx < n, "Padding_idx must be within num_embeddings"
            elif padding_idx < 0:
                assert padding_idx >= -n, "Padding_idx must be within num_embeddings"
                padding_idx = n + padding_idx
        value_check(input._data, lambda a: a.size and (a.min() < 0 or a.max() >= n),
                    IndexError("index out of range in self"))
        return apply(F._embedding, input, weight, padding_idx=padding_idx)

    _saved.extend([(F, "_check_target_range", orig_range), (F, "embedding", orig_emb)])
    F._check_target_range = check_target_range
    F.embedding = embedding


def uninstall():
    while _saved:
        mod, name, fn = _saved.pop()
        setattr(mod, name, fn)
