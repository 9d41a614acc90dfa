"""The ``meta`` device: tensors with a shape and a dtype and no data (torch's ``meta``).

A meta tensor's ``_data`` is a ``MetaArray``. Factories given ``device="meta"``, ``.to("meta")``
(also of whole modules, after ``copy.deepcopy``) and ``Module.to_empty`` make and unmake them;
``repr``, ``shape``, ``dtype``, ``device``, dtype conversions and
``torch.func.stack_module_state`` work on them. Any other op on a meta tensor raises a
``NotImplementedError`` that says so (torchlike's ops run jax programs, which need data);
``item()``, ``tolist()`` and ``numpy()`` raise torch's errors.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["MetaArray", "is_meta", "meta_like", "OPS_ERROR"]

OPS_ERROR = ("torchlike: ops on 'meta' tensors are not supported: a meta tensor has a shape "
             "and a dtype only. Create meta tensors, move them (.to, Module.to_empty), read "
             "their shape/dtype, or stack module states; compute on a real device.")


class _MetaDevice:
    platform = "meta"
    id = 0


_META_DEVICE = _MetaDevice()


class MetaArray:
    """Shape and dtype of an array that has no data."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    def devices(self):
        return {_META_DEVICE}

    def astype(self, dtype):
        return MetaArray(self.shape, dtype)

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return MetaArray(shape, self.dtype)

    @property
    def __jax_array__(self):
        # a property, so that jax's ``hasattr`` check itself raises: every op on a meta
        # tensor stops here with this message
        raise NotImplementedError(OPS_ERROR)

    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")

    def __repr__(self):
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"


def is_meta(t):
    return isinstance(t._data, MetaArray)


def meta_like(data):
    """A MetaArray of ``data``'s shape and dtype."""
    return MetaArray(data.shape, data.dtype)
