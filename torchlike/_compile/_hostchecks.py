"""Value checks that torch raises on, made traceable while torchlike.compile traces.

Some functions check values on the host before their jitted op runs (class indices of
``cross_entropy``/``nll_loss``, ``embedding`` indices): torch raises where jax would clamp
silently. On a tracer such a check cannot run at trace time; while tracing, these functions are
replaced by versions that compute the check inside the program as an extra output (a bool flag
and the offending value). The compiled program returns the flags; the host reads them right
after the call and raises torch's error *before* anything is written back, so the state is
left as torch leaves it (torch raises in the forward, before backward and step), and values are
never clamped silently. The replacements are installed only for the length of a trace.

A flag output costs one scalar read per check per call (it waits for the program, which the
caller's ``loss.item()`` does anyway on CPU). The earlier design, a host callback inside the
program, cost about 5 ms per call on the MLP step (a host round trip, and jit's C++ fast path
is off for programs with host callbacks); it is kept only for a trace that no compiled step or
module is collecting (``value_check`` outside ``collecting()``).

(The clean home for this is the functions themselves, skipping the host check on tracers and
calling ``value_check``; until then this module keeps the compiled path free of graph breaks.)
"""
from __future__ import annotations

import threading

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["value_check", "index_bounds", "install", "uninstall", "collecting", "raise_failed",
           "is_check_error"]


class _Local(threading.local):
    stack = None


_local = _Local()


class collecting:
    """Context of one trace: the checks its program must return (``.checks``: a list of
    ``(flag, value, make_error)``; ``make_error(value)`` builds torch's exception)."""

    def __init__(self):
        self.checks = []

    def __enter__(self):
        if _local.stack is None:
            _local.stack = []
        _local.stack.append(self)
        return self

    def __exit__(self, *exc):
        _local.stack.pop()
        return False

    def outputs(self):
        """What the program returns for its checks: [] or one int64 array
        ``[flag0, value0, flag1, value1, ...]`` (one device-to-host read per call)."""
        if not self.checks:
            return []
        return [jnp.stack([jnp.asarray(a, jnp.int64).reshape(())
                           for flag, value, _ in self.checks for a in (flag, value)])]

    def errors(self):
        return [mk for _f, _v, mk in self.checks]


def raise_failed(errors, arrays):
    """After a call: raise the first failed check's error (``arrays``: ``outputs()``)."""
    if not errors:
        return
    host = np.asarray(arrays[0])
    for i, mk in enumerate(errors):
        if bool(host[2 * i]):
            err = mk(int(host[2 * i + 1]))
            err._torchlike_value_check = True
            raise err


def is_check_error(e):
    """True when ``e`` is a failed value check raised by ``raise_failed``: an error of the
    program's inputs, not a reason to fall back to eager execution."""
    return getattr(e, "_torchlike_value_check", False)


def value_check(array, bad, error, first=None):
    """Check ``array`` when the program runs. ``bad(a)``: a traceable predicate (jnp);
    ``error``: the exception, or a function of the first offending value (``first(a)``)."""
    stack = _local.stack
    mk = error if callable(error) and not isinstance(error, BaseException) else (
        lambda _v, e=error: type(e)(*e.args))
    if stack:
        flag = jnp.asarray(bad(array), bool)
        value = first(array) if first is not None else jnp.zeros((), jnp.int64)
        stack[-1].checks.append((flag, value, mk))
        return

    def host(a, v):
        if bool(np.asarray(a)):
            raise mk(np.asarray(v).item())
    value = first(array) if first is not None else jnp.zeros((), jnp.int64)
    jax.debug.callback(host, jnp.asarray(bad(array), bool), value)


def index_bounds(index, n, dim):
    """torch's bounds check of a traced integer index into a dimension of size ``n``."""
    def bad(a):
        return (a >= n) | (a < -n)

    def first(a):
        m = jnp.reshape(bad(a), (-1,))
        return jnp.reshape(a, (-1,))[jnp.argmax(m)] if m.size else jnp.zeros((), a.dtype)

    value_check(index, lambda a: jnp.any(bad(a)),
                lambda v: IndexError(
                    f"index {int(v)} is out of bounds for dimension {dim} with size {n}"), first)


_saved = []


def install():
    from ..nn import functional as F
    from .._dtype import _FLOAT
    from .._registry import apply
    from ._trace import is_tracer
    if _saved or not (hasattr(F, "_check_target_range") and hasattr(F, "_embedding")):
        return        # the functions changed shape: their host checks then break the trace
    orig_range = F._check_target_range
    orig_emb = F.embedding

    def check_target_range(input, target, ignore_index):
        if not is_tracer(target._data):
            return orig_range(input, target, ignore_index)
        c = input.shape[0] if input.ndim == 1 else input.shape[1]

        def mask(t):
            return (t != ignore_index) & ((t < 0) | (t >= c))

        def first(t):
            m = jnp.reshape(mask(t), (-1,))
            return jnp.reshape(t, (-1,))[jnp.argmax(m)] if m.size else jnp.zeros((), t.dtype)

        value_check(target._data, lambda t: jnp.any(mask(t)),
                    lambda v: IndexError(f"Target {int(v)} is out of bounds."), first)

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
        value_check(input._data, lambda a: jnp.any((a < 0) | (a >= n)),
                    IndexError("index out of range in self"))
        return apply(F._embedding, input, weight, padding_idx=padding_idx)

    _saved.extend([(F, "_check_target_range", orig_range), (F, "embedding", orig_emb)])
    F._check_target_range = check_target_range
    F.embedding = embedding


def uninstall():
    while _saved:
        mod, name, fn = _saved.pop()
        setattr(mod, name, fn)
