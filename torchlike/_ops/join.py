"""Joining and splitting: cat, stack, hstack/vstack/dstack, atleast_*d, split, tensor_split,
chunk, unbind."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _dtype as D
from .._registry import apply, defop
from .._tensor import Tensor, _wrap_dim
from ._surface import method, public
from .view import _host, _is_t, reshape, tensors_only, unsqueeze

__all__ = ['cat', 'concat', 'concatenate', 'stack', 'hstack', 'vstack', 'row_stack', 'dstack',
           'column_stack', 'split', 'tensor_split', 'chunk', 'unbind', 'atleast_1d', 'atleast_2d',
           'atleast_3d', 'split_with_sizes', 'unsafe_split', 'unsafe_chunk',
           'unsafe_split_with_sizes']


# ------------------------------------------------------------------ cat, stack and friends

def _cat_vjp(cots, xs, needs, dim, skip):
    """CatBackward0: each input's slice of the cotangent (zeros for a skipped input)."""
    (g,) = cots
    out, start = [], 0
    for i, x in enumerate(xs):
        if i in skip:
            if needs[i]:
                out.append(jnp.zeros(jnp.shape(x), g.dtype))
            continue
        n = jnp.shape(x)[dim]
        if needs[i]:
            out.append(jax.lax.slice_in_dim(g, start, start + n, axis=dim))
        start += n
    return out


@defop("cat", promote="common", saves=False, grad_name="CatBackward0", vjp=_cat_vjp)
def _cat(*xs, dim, skip):
    return jnp.concatenate([x for i, x in enumerate(xs) if i not in skip], axis=dim)


def _tensor_list(tensors, name, empty=None):
    """``tensors`` (a sequence of Tensors) as a list: torch's TypeError for a Tensor in its
    place (``torch.cat(x)``) or an element that is not one; ``empty``: the RuntimeError
    message for an empty sequence."""
    if isinstance(tensors, Tensor):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not Tensor")
    tensors = list(tensors)
    if not tensors and empty is not None:
        raise RuntimeError(empty)
    return tensors_only(tensors)


def _overridden(name, tensors, dim):
    """``torchlike.<name>(tensors, dim)``, which refused ``tensors``, given to the overrides
    among them (``torchlike.overrides``): its result in a 1-tuple, or None where no element
    takes over calls. (The handler gets ``dim`` as a keyword where it is not 0: the call's own
    spelling is not known here.)"""
    from .. import overrides
    if overrides.overriding((tensors,), {}):
        import torchlike
        return (overrides.dispatch(getattr(torchlike, name), (tensors,),
                                   {"dim": dim} if dim != 0 else {}, "torch." + name),)
    return None


@public(out=True)
def cat(tensors, dim=0):
    """Concatenate along ``dim``; legacy empty 1-D tensors are skipped, as in torch."""
    try:
        return _joined(tensors, dim, "cat")
    except TypeError:
        over = _overridden("cat", tensors, dim)
        if over is None:
            raise
    return over[0]


@public(out=True)
def concat(tensors, dim=0):
    return _joined(tensors, dim, "concat")


@public(out=True)
def concatenate(tensors, dim=0):
    return _joined(tensors, dim, "concatenate")


def _joined(tensors, dim, name):
    tensors = _tensor_list(tensors, name)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t._d.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               f"concatenated")
    skip = tuple(i for i, t in enumerate(tensors) if t._d.shape == (0,))
    keep = [t for i, t in enumerate(tensors) if i not in skip]
    if not keep:
        return apply(_cat, *tensors, dim=0, skip=())
    ref = keep[0]
    n = ref._d.ndim
    d = _wrap_dim(dim, n)
    for i, t in enumerate(tensors):
        if i in skip:
            continue
        if t._d.ndim != n:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {n} and "
                               f"{t._d.ndim}")
        for k in range(n):
            if k != d and t._d.shape[k] != ref._d.shape[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref._d.shape[k]} but got size "
                                   f"{t._d.shape[k]} for tensor number {i} in the list.")
    return apply(_cat, *tensors, dim=d, skip=skip)


@defop("stack", promote="common", saves=False, grad_name="StackBackward0",
       vjp=lambda cots, xs, needs, dim: [jax.lax.index_in_dim(cots[0], i, axis=dim,
                                                              keepdims=False)
                                         for i, n in enumerate(needs) if n])
def _stack(*xs, dim):
    return jnp.stack(xs, axis=dim)


@public(out=True)
def stack(tensors, dim=0):
    try:
        tensors = _tensor_list(tensors, "stack")
    except TypeError:
        over = _overridden("stack", tensors, dim)
        if over is None:
            raise
        return over[0]
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    s0 = tuple(tensors[0]._d.shape)
    for i, t in enumerate(tensors):
        if tuple(t._d.shape) != s0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(s0)} "
                               f"at entry 0 and {list(t._d.shape)} at entry {i}")
    return apply(_stack, *tensors, dim=_wrap_dim(dim, len(s0) + 1))


def atleast_1d(*tensors):
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = [reshape(t, 1) if t._d.ndim == 0 else t for t in ts]
    return out[0] if len(tensors) == 1 and _is_t(tensors[0]) else tuple(out)


def atleast_2d(*tensors):
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = [reshape(t, 1, -1) if t._d.ndim < 2 else t for t in ts]
    return out[0] if len(tensors) == 1 and _is_t(tensors[0]) else tuple(out)


def atleast_3d(*tensors):
    ts = tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    out = []
    for t in ts:
        n = t._d.ndim
        out.append(reshape(t, 1, -1, 1) if n < 2 else unsqueeze(t, -1) if n == 2 else t)
    return out[0] if len(tensors) == 1 and _is_t(tensors[0]) else tuple(out)


def _stackable(tensors, name, empty=None):
    return _tensor_list(tensors, name, f"{empty or name} expects a non-empty TensorList")


@public(out=True)
def hstack(tensors):
    ts = atleast_1d(_stackable(tensors, "hstack"))
    return cat(ts, 0 if ts[0]._d.ndim == 1 else 1)


@public(out=True)
def vstack(tensors):
    return cat(atleast_2d(_stackable(tensors, "vstack")), 0)


@public(out=True)
def row_stack(tensors):
    return cat(atleast_2d(_stackable(tensors, "row_stack", "vstack")), 0)


@public(out=True)
def dstack(tensors):
    return cat(atleast_3d(_stackable(tensors, "dstack")), 2)


@public(out=True)
def column_stack(tensors):
    ts = [reshape(t, -1, 1) if t._d.ndim <= 1 else t
          for t in _stackable(tensors, "column_stack")]
    return cat(ts, 1)


# ------------------------------------------------------------------ split, chunk, unbind

@defop("split", saves=False, view=True, grad_name=lambda kw: kw["name"] + "Backward0",
       vjp=lambda cots, xs, needs, sizes, dim, name: [jnp.concatenate(cots, axis=dim)]
       if len(cots) == len(sizes) else NotImplemented)
def _split(a, sizes, dim, name):
    # (``name``: torch's node, "Split" for a size, "SplitWithSizes" for sections, and their
    # "Unsafe" forms)
    outs, start = [], 0
    for s in sizes:
        outs.append(jax.lax.slice_in_dim(a, start, start + s, axis=dim))
        start += s
    return tuple(outs)


def _as_tuple(r):
    return r if isinstance(r, tuple) else (r,)


def _split_sizes(input, sizes, dim, name):
    n = input._d.ndim
    if n == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, n)
    return apply(_split, input, sizes=tuple(sizes), dim=d, name=name)


def _sections(input, bounds, d):
    """``tensor_split``'s sections, ``(start, length)`` each, each its own slice view of
    ``input`` (as torch's: one of them may be written in place)."""
    from .view import _slice
    return tuple(apply(_slice, input, jnp.asarray(start, jnp.int64), dim=d, length=s)
                 for start, s in bounds)


@public
def split(tensor, split_size_or_sections, dim=0):
    return _split_any(tensor, split_size_or_sections, dim, "")


@method("split")
def _split_method(self, split_size, dim=0):
    """torch's ``Tensor.split`` (written in Python there: its parameter is ``split_size``, and
    a one-element tensor size is read as its int)."""
    if isinstance(split_size, Tensor):
        try:
            split_size = int(split_size)
        except ValueError:
            pass
    return _split_any(self, split_size, dim, "")


@public(method=True)
def unsafe_split(tensor, split_size, dim=0):
    """``split`` by one size (torch's outputs are not tracked as views; torchlike's are:
    DIFFERENCES.md)."""
    if not isinstance(split_size, int) or isinstance(split_size, bool):
        raise TypeError(f"unsafe_split(): argument 'split_size' (position 2) must be int, not "
                        f"{type(split_size).__name__}")
    return _split_any(tensor, split_size, dim, "Unsafe")


def _split_any(tensor, split_size_or_sections, dim, prefix):
    n = tensor._d.ndim
    if n == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, n)
    size = tensor._d.shape[d]
    if isinstance(split_size_or_sections, int):
        s = split_size_or_sections
        if s < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got "
                               f"split_size={s}")
        if s == 0 and size != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {size}")
        sizes = [s] * (size // s) + ([size % s] if size % s else []) if s else [0]
        if not sizes:
            sizes = [0]
        name = prefix + "Split"
    else:
        if not isinstance(split_size_or_sections, (list, tuple, Tensor)):
            # (torch's Python split passes anything but an int to split_with_sizes)
            from .._tensor import _type_name
            raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position 2) must be "
                            f"tuple of ints, not {_type_name(split_size_or_sections)}")
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != size or any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={sizes}")
        name = prefix + "SplitWithSizes"
    return _as_tuple(_split_sizes(tensor, sizes, d, name))


@public(method=True)
def tensor_split(input, indices_or_sections, dim=0):
    n = input._d.ndim
    if n == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = _wrap_dim(dim, n)
    size = input._d.shape[d]
    if isinstance(indices_or_sections, Tensor):
        t = indices_or_sections
        if t.dtype is not D.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {D.legacy_name(t.dtype)}")
        if t.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {t.ndim} dims")
        indices_or_sections = int(t.item()) if t.ndim == 0 else _host(t).tolist()
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        q, r = divmod(size, k)
        sizes = [q + 1] * r + [q] * (k - r)
        starts = [sum(sizes[:i]) for i in range(k)]
        return _sections(input, list(zip(starts, sizes)), d)
    # torch: section i is ``input.slice(d, idx[i - 1], idx[i])``, with slice's reading of
    # negative and out-of-range bounds (an end before its start gives an empty section)
    idx = [int(i) for i in indices_or_sections]
    bounds = []
    for start, end in zip([0] + idx, idx + [size]):
        start = min(max(start + size if start < 0 else start, 0), size)
        end = min(max(end + size if end < 0 else end, start), size)
        bounds.append((start, end - start))
    return _sections(input, bounds, d)


@public(method=True)
def chunk(input, chunks, dim=0):
    return _chunk(input, chunks, dim, split)


@public(method=True)
def unsafe_chunk(input, chunks, dim=0):
    return _chunk(input, chunks, dim, unsafe_split)


def _chunk(input, chunks, dim, split):
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input._d.ndim
    if n == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    d = _wrap_dim(dim, n)
    size = input._d.shape[d]
    if size == 0:
        return split(input, [0] * chunks, d)       # (every chunk, each empty: torch's)
    return split(input, -(-size // chunks), d)


@defop("unbind", saves=False, view=True, grad_name="UnbindBackward0")
def _unbind(a, dim):
    return tuple(jnp.take(a, i, axis=dim) for i in range(a.shape[dim]))


@public(method=True)
def unbind(input, dim=0):
    n = input._d.ndim
    if n == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = _wrap_dim(dim, n)
    if input._d.shape[d] == 0:
        return ()
    return _as_tuple(apply(_unbind, input, dim=d))


@public(method=True)
def split_with_sizes(input, split_sizes, dim=0):
    return split(input, list(split_sizes), dim)


@public(method=True)
def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return _split_any(input, list(split_sizes), dim, "Unsafe")
