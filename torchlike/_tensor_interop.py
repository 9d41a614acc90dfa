"""Tensor methods for exchanging data with jax and other array libraries (dlpack, jax views).

``Tensor`` inherits ``InteropMixin``; the methods live here so that interop is one concept in
one file.

Aliasing: a Tensor holds an immutable jax array. ``t.jax()`` returns that very array and
``torchlike.interop.from_jax(a)`` wraps ``a`` without a copy, so both name one buffer; since
neither side can write into a jax array, sharing is safe. An in-place op on the tensor
(``t.add_(1)``) rebinds the tensor to a new array: a jax view taken before keeps the old values.
DLPack consumers (``np.from_dlpack(t)``) get the same buffer: they must treat it as read-only.

Every Tensor class is registered as a jax pytree (one child: the array; ``requires_grad`` and
history are not carried), so ``jax.jit``/``jax.grad``/``jax.vmap``/``jax.tree_util`` accept
Tensors and structures of them; inside, the Tensors wrap tracers.
"""
from __future__ import annotations

import jax


_TENSOR = []          # [torchlike.Tensor], set when the class is created (no import cycle)


def _flatten(t):
    return (t._data,), None


def _unflatten(aux, children):
    return _TENSOR[0]._make(children[0])


def register_pytree(cls):
    """Register ``cls`` (a Tensor class) as a jax pytree node; idempotent."""
    try:
        jax.tree_util.register_pytree_node(cls, _flatten, _unflatten)
    except ValueError:        # already registered
        pass


class InteropMixin:
    __slots__ = ()

    def __init_subclass__(cls, **kwargs):
        # jax matches pytree node types exactly: register Tensor and each subclass
        # (Parameter, Buffer, user subclasses) as it is created.
        super().__init_subclass__(**kwargs)
        if not _TENSOR and InteropMixin in cls.__bases__:
            _TENSOR.append(cls)
        register_pytree(cls)

    # ------------------------------------------------------------ jax
    def jax(self):
        """This tensor's jax array, without a copy (see the module docstring on aliasing)."""
        return self._data

    # ------------------------------------------------------------ dlpack
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if self._requires_grad:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        kw = {}
        if stream is not None:
            kw["stream"] = stream
        if max_version is not None:
            kw["max_version"] = max_version
        if dl_device is not None:
            kw["dl_device"] = dl_device
        if copy is not None:
            kw["copy"] = copy
        return self._data.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()
