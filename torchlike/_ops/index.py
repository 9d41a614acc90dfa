"""Indexing: ``Tensor.__getitem__`` with ints, slices, None, Ellipsis, bool masks and integer
tensors or lists, as one op whose static part is the index's structure."""
from __future__ import annotations

import numpy as np
import jax.numpy as jnp

from .._tensor import Tensor
from ._registry import apply, defop

__all__ = []


def _getitem_name(kw):
    spec = kw["spec"]
    if any(s[0] == "t" for s in spec):
        return "IndexBackward0"
    if kw["single_slice"]:
        return "SliceBackward0"
    name = "AliasBackward0"
    for s in spec:
        if s[0] == "i":
            name = "SelectBackward0"
        elif s[0] == "n":
            name = "UnsqueezeBackward0"
        elif s[0] == "s" and s[1:] != (None, None, None):
            name = "SliceBackward0"
    return name


@defop("getitem", saves=False, grad_name=_getitem_name)
def _getitem(a, *idx, spec, single_slice):
    key = []
    it = iter(idx)
    for s in spec:
        kind = s[0]
        if kind == "i":
            key.append(s[1])
        elif kind == "s":
            key.append(slice(*s[1:]))
        elif kind == "n":
            key.append(None)
        elif kind == "e":
            key.append(Ellipsis)
        else:
            key.append(next(it))
    return a[tuple(key)]


def _parse(x, key):
    """Split an index into a hashable spec and the integer index arrays it uses."""
    if not isinstance(key, tuple):
        key = (key,)
    shape = x._data.shape
    # how many dims the index consumes, to place dims after an Ellipsis
    consumed = 0
    for k in key:
        if k is None or k is Ellipsis:
            continue
        if isinstance(k, Tensor) and k.dtype.name in ("bool", "uint8"):
            consumed += max(k.ndim, 1) if k.ndim else 0
        else:
            consumed += 1
    if consumed > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    spec, arrays = [], []
    dim = 0
    for k in key:
        if k is None:
            spec.append(("n",))
        elif k is Ellipsis:
            spec.append(("e",))
            dim += len(shape) - consumed
        elif isinstance(k, bool):
            spec.append(("n",))
            if not k:
                spec.append(("t",))
                arrays.append(jnp.zeros((0,), jnp.int64))
        elif isinstance(k, (int, np.integer)):
            n = shape[dim]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {n}")
            spec.append(("i", int(k) % n))
            dim += 1
        elif isinstance(k, slice):
            if k.step is not None and k.step <= 0:
                raise ValueError("step must be greater than zero")
            spec.append(("s", k.start if k.start is None else int(k.start),
                         k.stop if k.stop is None else int(k.stop),
                         k.step if k.step is None else int(k.step)))
            dim += 1
        else:
            t = k._data if isinstance(k, Tensor) else np.asarray(k)
            if t.dtype == np.bool_ or t.dtype == np.uint8:
                m = np.asarray(t).astype(bool)
                if m.shape != tuple(shape[dim:dim + m.ndim]):
                    bad = next(i for i in range(m.ndim) if m.shape[i] != shape[dim + i])
                    raise IndexError(
                        f"The shape of the mask {list(m.shape)} at index {bad} does not match "
                        f"the shape of the indexed tensor {list(shape)} at index {dim + bad}")
                for nz in np.nonzero(m) if m.ndim else ():
                    spec.append(("t",))
                    arrays.append(jnp.asarray(nz, jnp.int64))
                if m.ndim == 0:
                    spec.append(("n",))
                    spec.append(("t",))
                    arrays.append(jnp.asarray(np.nonzero(m.reshape(1))[0], jnp.int64))
                dim += m.ndim
                continue
            if not np.issubdtype(t.dtype, np.integer):
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
            n = shape[dim]
            ta = np.asarray(t)
            if ta.size and (ta.max() >= n or ta.min() < -n):
                bad = int(ta.max()) if ta.max() >= n else int(ta.min())
                raise IndexError(f"index {bad} is out of bounds for dimension {dim} with size {n}")
            spec.append(("t",))
            arrays.append(jnp.asarray(t))
            dim += 1
    return tuple(spec), arrays


def getitem(self, key):
    spec, arrays = _parse(self, key)
    return apply(_getitem, self, *[Tensor._make(a) for a in arrays], spec=spec,
                 single_slice=isinstance(key, slice))


Tensor.__getitem__ = getitem
