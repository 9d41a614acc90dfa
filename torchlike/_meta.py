"""The ``meta`` device: tensors with a shape and a dtype and no data (torch's ``meta``).

A meta tensor's ``_data`` is a ``MetaArray``. Factories given ``device="meta"``, ``.to("meta")``
(also of whole modules, after ``copy.deepcopy``) and ``Module.to_empty`` make and unmake them;
``repr``, ``shape``, ``dtype``, ``device``, dtype conversions and
``torch.func.stack_module_state`` work on them. Writes into a meta tensor (``copy_``,
``fill_``, ``zero_``, the random fills) check their arguments and write nothing, as torch's; a
copy out of one (``copy_`` into a real tensor, ``.to("cpu")``, ``item()``, ``tolist()``,
``numpy()``) raises torch's errors. Any other op on a meta tensor raises a
``NotImplementedError`` that says so (torchlike's ops run jax programs, which need data).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["MetaArray", "is_meta", "meta_like", "meta_write", "OPS_ERROR", "NO_DATA_ERROR",
           "META_GRAD_ERROR"]

OPS_ERROR = ("torchlike: ops on 'meta' tensors are not supported: a meta tensor has a shape "
             "and a dtype only. Create meta tensors, move them (.to, Module.to_empty), read "
             "their shape/dtype, or stack module states; compute on a real device.")
NO_DATA_ERROR = "Cannot copy out of meta tensor; no data!"       # (torch's)
META_GRAD_ERROR = ("torchlike: {} into a 'meta' tensor of a value that requires grad is not "
                   "supported (torch records the write in the meta tensor's autograd history, "
                   "which torchlike cannot run); write under torch.no_grad() or detach the "
                   "value.")


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
        raise NotImplementedError(NO_DATA_ERROR)

    def __repr__(self):
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"


def is_meta(t):
    return isinstance(t._d, MetaArray)      # (the raw slot: a pending value stays pending)


def meta_write(t):
    """An in-place write into meta tensor ``t``, its arguments checked: nothing to write, the
    version counter moves as torch's does; returns ``t``."""
    t._vc[0] += 1
    return t


def meta_like(data):
    """A MetaArray of ``data``'s shape and dtype."""
    return MetaArray(data.shape, data.dtype)
