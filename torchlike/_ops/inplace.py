"""The in-place writers that are not ``op_`` forms of an out-of-place op: copy_, zero_, fill_."""
from __future__ import annotations

import jax.numpy as jnp

from .._tensor import Tensor
from ._registry import apply, check_inplace, commit_inplace, defop, method

__all__ = []


@defop("copy", saves=False, grad_name="CopyBackwards")
def _copy(dst, src):
    return jnp.broadcast_to(src.astype(dst.dtype), dst.shape)


@defop("fill", saves=False,
       grad_name=lambda kw: "FillBackward1" if kw["tensor_value"] else "FillBackward0")
def _fill(dst, value, tensor_value):
    return jnp.broadcast_to(jnp.asarray(value).astype(dst.dtype), dst.shape)


@defop("zero", saves=False, grad_name="ZeroBackward0")
def _zero(dst):
    return jnp.zeros_like(dst)


def _broadcastable(src_shape, dst_shape):
    if len(src_shape) > len(dst_shape):
        return False
    return all(s in (1, d) for s, d in zip(reversed(src_shape), reversed(dst_shape)))


@method("copy_")
def copy_(self, src, non_blocking=False):
    """Copy ``src``'s values (broadcast and cast) into ``self``; the gradient flows to ``src``."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(src).__name__}")
    if not _broadcastable(tuple(src.shape), tuple(self.shape)):
        raise RuntimeError(f"The size of tensor a ({self.shape[-1] if self.ndim else 1}) must "
                           f"match the size of tensor b ({src.shape[-1] if src.ndim else 1}) at "
                           f"non-singleton dimension {max(self.ndim - 1, 0)}")
    check_inplace(self)
    return commit_inplace(self, apply(_copy, self, src))


@method("fill_")
def fill_(self, value):
    """Set every element to ``value`` (a number or a 0-dim tensor)."""
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.ndim} dimensions.")
    check_inplace(self)
    return commit_inplace(self, apply(_fill, self, value,
                                       tensor_value=isinstance(value, Tensor)))


@method("zero_")
def zero_(self):
    """Set every element to zero."""
    check_inplace(self)
    return commit_inplace(self, apply(_zero, self))
