"""The in-place writers that are not ``op_`` forms of an out-of-place op: copy_, zero_, fill_."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .._meta import META_GRAD_ERROR, NO_DATA_ERROR, is_meta, meta_write
from .._tensor import Tensor
from ..autograd.grad_mode import check_inference_inplace
from .._storage import check_inplace, check_no_partial_overlap, commit_inplace
from .._registry import apply, defop
from ._surface import method, toplevel
from .view import required

__all__ = []


@defop("copy", saves=False, grad_name="CopyBackwards")
def _copy(dst, src):
    return jnp.broadcast_to(D.cast(src, dst.dtype), dst.shape)


@defop("fill", saves=False,
       grad_name=lambda kw: "FillBackward1" if kw["tensor_value"] else "FillBackward0")
def _fill(dst, value, tensor_value):
    return jnp.broadcast_to(D.cast(jnp.asarray(value), dst.dtype), dst.shape)


@defop("zero", saves=False, grad_name="ZeroBackward0")
def _zero(dst):
    # (np.zeros' zero bytes: float8_e8m0fnu has no 0, and torch writes its zero byte)
    return jnp.full(dst.shape, np.zeros((), dst.dtype), dst.dtype)


def _broadcastable(src_shape, dst_shape):
    if len(src_shape) > len(dst_shape):
        return False
    return all(s in (1, d) for s, d in zip(reversed(src_shape), reversed(dst_shape)))


@method("copy_")
def copy_(self, src, non_blocking=False):
    """Copy ``src``'s values (broadcast and cast) into ``self``; the gradient flows to ``src``.
    A Python number is copied as a 0-dim tensor (torch's Scalar; other types raise torch's
    TypeError: ``_surface._OPERANDS``)."""
    if not isinstance(src, Tensor):
        from .._creation import scalar_tensor
        src = scalar_tensor(src, device=self.device)
    if is_meta(src) and not is_meta(self):
        raise NotImplementedError(NO_DATA_ERROR)
    if not _broadcastable(tuple(src.shape), tuple(self.shape)):
        from .._registry import inplace_broadcast_error
        raise RuntimeError(inplace_broadcast_error(self.shape, src.shape))
    check_inference_inplace(self)
    check_inplace(self)
    if is_meta(self):
        if src.requires_grad and _grad_enabled():
            raise NotImplementedError(META_GRAD_ERROR.format("copy_"))
        return meta_write(self)
    check_no_partial_overlap(self, (src,))
    from .convert import warn_complex_discard
    warn_complex_discard(src.dtype, self.dtype)
    return commit_inplace(self, apply(_copy, self, src))


def _grad_enabled():
    from ..autograd import grad_mode
    return grad_mode._state.grad_enabled


@method("fill_")
def fill_(self, value):
    """Set every element to ``value`` (a number or a 0-dim tensor)."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
    else:
        from .._creation import _no_index
        _no_index(value)
        # a Python number outside the dtype's range raises torch's error (it does not wrap)
        dt = self.dtype
        value = D.host_scalar(D.check_scalar(value, dt, self.numel()), dt)
    check_inference_inplace(self)
    check_inplace(self, repeats_ok=True)
    if is_meta(self):
        if isinstance(value, Tensor) and value.requires_grad and _grad_enabled():
            raise NotImplementedError(META_GRAD_ERROR.format("fill_"))
        return meta_write(self)
    return commit_inplace(self, apply(_fill, self, value, tensor_value=isinstance(value, Tensor)),
                          repeats_ok=True)


@method("zero_")
def zero_(self):
    """Set every element to zero."""
    check_inference_inplace(self)
    check_inplace(self, repeats_ok=True)
    if is_meta(self):
        return meta_write(self)
    return commit_inplace(self, apply(_zero, self), repeats_ok=True)


# ------------------------------------------------------------------ in-place view ops
# The tensor itself changes shape; recorded as the view op with torch's in-place node names.

@defop("layout_", saves=False, grad_name=lambda kw: kw["name"])
def _layout(a, kind, args, name):
    return _LAYOUTS[kind](a, *args)


_LAYOUTS = {
    "t": lambda a: a.T,
    "transpose": lambda a, d0, d1: jnp.swapaxes(a, d0, d1),
    "squeeze": lambda a, dims: jnp.squeeze(a, tuple(d for d in dims if a.shape[d] == 1)),
    "unsqueeze": lambda a, dim: jnp.expand_dims(a, dim),
    "reshape": lambda a, shape: jnp.reshape(a, shape),
}


def _inplace_layout(self, kind, args, name):
    from .._storage import relayout
    check_inference_inplace(self)
    check_inplace(self)
    out = apply(_layout, self, kind=kind, args=args, name=name)
    return relayout(self, out._data, lambda a: _LAYOUTS[kind](a, *args), out.grad_fn)


def _wrap(dim, n):
    from .._tensor import _wrap_dim
    return _wrap_dim(dim, n)


@method("t_")
def t_(self):
    if self.ndim > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.ndim}D")
    return _inplace_layout(self, "t", (), "TBackward1")


@method("transpose_", "swapaxes_", "swapdims_")
def transpose_(self, dim0, dim1):
    n = self.ndim
    return _inplace_layout(self, "transpose", (_wrap(dim0, n), _wrap(dim1, n)),
                           "TransposeBackward1")


@method("squeeze_")
def squeeze_(self, dim=None):
    n = self.ndim
    if dim is None:
        return _inplace_layout(self, "squeeze", (tuple(range(n)),), "SqueezeBackward3")
    if isinstance(dim, (tuple, list)):
        dims = tuple(_wrap(d, n) for d in dim) if n else ()
        return _inplace_layout(self, "squeeze", (dims,), "SqueezeBackward5")
    return _inplace_layout(self, "squeeze", ((_wrap(dim, n),) if n else (),), "SqueezeBackward4")


@method("unsqueeze_")
def unsqueeze_(self, dim):
    return _inplace_layout(self, "unsqueeze", (_wrap(dim, self.ndim + 1),), "UnsqueezeBackward1")


@method("resize_")
def resize_(self, *sizes, memory_format=None):
    """Resize in place: the same element count is a reshape of the storage; another count
    (a tensor that is not a view and that no view reads) keeps the storage's first elements in
    order, as torch does. A shrunk tensor keeps the elements it let go (torch's storage is not
    shrunk): growing back within them gives them again; elements past them are zeros (torch's
    are uninitialized)."""
    required(sizes, "resize_", "size", self._d.ndim == 0)
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    sizes = tuple(int(s) for s in sizes)
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if any(s < 0 for s in sizes):
        raise RuntimeError("numel: integer multiplication overflow")
    n = 1
    for s in sizes:
        n *= s
    if n == self.numel():
        return _inplace_layout(self, "reshape", (sizes,), "ViewBackward0")
    if self._alias is not None or self.__dict__.get("_aliases") or \
            "_layout" in self.__dict__:
        raise NotImplementedError(
            f"resize_ to {n} elements from {self.numel()}: torchlike resizes a view, a tensor "
            f"a view reads, or one with strides of its own only when the number of elements is "
            f"unchanged (its storage is shared or laid out otherwise); resize a copy "
            f"(.clone()) instead. See DIFFERENCES.md")
    check_inference_inplace(self)
    flat = jnp.ravel(self._data)
    tail = self.__dict__.pop("_resize_tail", None)
    if tail is not None and tail.dtype != flat.dtype:
        tail = None
    if n < flat.size:
        kept, rest = flat[:n], flat[n:]
        tail = rest if tail is None else jnp.concatenate([rest, tail])
    else:
        need = n - flat.size
        back = tail[:need] if tail is not None else flat[:0]
        tail = tail[need:] if tail is not None and tail.size > need else None
        if back.size < need:
            back = jnp.concatenate([back, jnp.zeros(need - back.size, flat.dtype)])
        kept = jnp.concatenate([flat, back])
    if tail is not None and tail.size:
        self.__dict__["_resize_tail"] = tail
    self._set_data(kept.reshape(sizes))
    return self


toplevel("fill_", "zero_", "detach_")   # torch.fill_(t, v), torch.zero_(t), torch.detach_(t)
