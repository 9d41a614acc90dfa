"""The ``torch.func.vmap`` levels traced in this thread, and what torch's batching rules say
about tensors at the innermost one.

``torchlike.func.vmap`` runs the user's function under ``jax.vmap``: a tensor the function
receives, or computes from one, holds a batch tracer of the vmap's trace; a tensor it creates
(``torch.zeros(3)``) holds a plain array, as torch's is an unbatched tensor. torch refuses an
in-place write of a batched value into an unbatched tensor (the write would need the tensor
to grow a batch dimension): ``check_write``, called by every write of ``torchlike._storage``.
torch's ``*_like`` factories and ``Tensor.new_*`` of a batched tensor give batched tensors
(``zeros_like(x).add_(x)`` is allowed), where jax's constants are unbatched: ``tie`` makes
such a result a batch tracer of the vmap, with its own values.
"""
from __future__ import annotations

import threading

import jax.numpy as jnp
from jax import lax
from jax._src.interpreters import batching as _batching

_BatchTracer = _batching.BatchTracer
_NotMapped = _batching.NotMapped
_local = threading.local()

_INPLACE = (
    "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
    "Tensor `other` in extra_args that has more elements than `self`. This happened due to "
    "`other` being vmapped over but `self` not being vmapped over in a vmap. Please try to use "
    "out-of-place operators instead of inplace arithmetic. If said operator is being called "
    "inside the PyTorch framework, please file a bug report instead.")


class level:
    """The body of one vmap level: ``trace`` is its jax batch trace (a batched input's)."""

    __slots__ = ("trace",)

    def __init__(self, trace):
        self.trace = trace

    def __enter__(self):
        stack = getattr(_local, "stack", None)
        if stack is None:
            stack = _local.stack = []
        stack.append(self.trace)
        return self

    def __exit__(self, *exc):
        _local.stack.pop()
        return False


def active():
    """Is a vmap level traced in this thread?"""
    return bool(getattr(_local, "stack", None))


def _innermost():
    stack = getattr(_local, "stack", None)
    return stack[-1] if stack else None


def _batched(x, trace):
    """Is ``x`` batched by ``trace`` (a tracer of it with a mapped dimension)?"""
    if x.__class__ is not _BatchTracer or x._trace is not trace:
        return False
    bd = x.batch_dim
    return bd is not None and bd.__class__ is not _NotMapped


def check_write(old, new):
    """torch's RuntimeError for an in-place write, inside a vmap, of ``new`` (batched by the
    innermost level) into a tensor whose data ``old`` that level does not batch."""
    trace = _innermost()
    if trace is not None and _batched(new, trace) and not _batched(old, trace):
        raise RuntimeError(_INPLACE)


def tie(value, like):
    """``value`` (a new tensor's array, made from nothing) batched as ``like`` is: a tensor a
    ``*_like`` factory or ``new_*`` method makes from a batched tensor is batched in torch."""
    trace = _innermost()
    if trace is None or not _batched(like, trace) or _batched(value, trace):
        return value
    # (a batched scalar of ``value``'s dtype, ``like``'s first element, broadcast to its shape,
    # and a select that keeps ``value``'s own elements)
    one = jnp.ravel(like)[0] if like.size else jnp.sum(like)
    if jnp.iscomplexobj(one) and not jnp.iscomplexobj(value):
        one = jnp.real(one)
    scalar = lax.convert_element_type(one, value.dtype)
    return lax.select_n(jnp.bool_(True), jnp.broadcast_to(scalar, value.shape), value)


def tie_tensor(out, like):
    """``out`` (a Tensor just made by a ``*_like`` factory or ``new_*`` method of Tensor
    ``like``) batched as ``like`` is, inside a vmap (``tie``); returns ``out``."""
    if active():
        out._d = tie(out._d, like._d)
    return out
