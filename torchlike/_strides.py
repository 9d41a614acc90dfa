"""Strides: the layout torch reports for a tensor (``stride()``, ``is_contiguous()``, ``view``).

torchlike's arrays have no layout of their own: values live in row-major jax arrays and views
are index maps over their root (``_storage``). Strides are metadata kept to answer as torch
does:

* a root tensor is contiguous, unless it was made in another memory format
  (``to(memory_format=...)``, ``contiguous(memory_format=...)``, a ``clone``/``*_like``/``to``
  that preserves its input's layout): then it records that layout (``set_layout``);
* a view's strides follow from its parent's through the view op, with the rules of ATen's
  geometry functions (``inferExpandGeometry``, ``computeStride``, ``inferUnsqueezeGeometry``,
  ...), one rule per view op below;
* a view no rule covers (an in-place ``t_``/``transpose_`` rewrote its map) gets the strides of
  its index map: the physical offset of element ``i`` is affine in ``i`` for every view torch
  can make.

Results of other ops are contiguous roots (torch's pointwise ops may instead follow their
input's layout: DIFFERENCES.md).
"""
from __future__ import annotations

import math
import numpy as np

__all__ = ["strides", "contiguous_strides", "channels_last_strides", "view_strides",
           "is_contiguous", "is_non_overlapping_and_dense", "set_layout", "preserved_strides",
           "format_strides", "dim_order", "VIEW_ERROR"]

VIEW_ERROR = ("view size is not compatible with input tensor's size and stride (at least one "
              "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")


def contiguous_strides(shape):
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def channels_last_strides(shape):
    """torch's channels_last (4-d) / channels_last_3d (5-d) strides: the channel dim fastest."""
    n = len(shape)
    order = [1] + list(range(n - 1, 1, -1)) + [0]      # C, then W (, H, D), then N
    out = [0] * n
    acc = 1
    for d in order:
        out[d] = acc
        acc *= max(shape[d], 1)
    return tuple(out)


def _format_order(fmt, n):
    """The dims from fastest to slowest for memory format ``fmt`` (None: not this rank)."""
    name = getattr(fmt, "_name", fmt)
    if name in (None, "contiguous_format", "preserve_format"):
        return list(range(n - 1, -1, -1))
    if (name, n) in (("channels_last", 4), ("channels_last_3d", 5)):
        return [1] + list(range(n - 1, 1, -1)) + [0]
    return None


def format_strides(fmt, shape):
    """Strides of a fresh tensor of ``shape`` in memory format ``fmt`` (torch's errors for a
    format of another rank)."""
    name = getattr(fmt, "_name", fmt)
    n = len(shape)
    if name == "channels_last" and n != 4:
        raise RuntimeError("required rank 4 tensor to use channels_last format")
    if name == "channels_last_3d" and n != 5:
        raise RuntimeError("required rank 5 tensor to use channels_last_3d format")
    if name in ("channels_last", "channels_last_3d"):
        return channels_last_strides(shape)
    return contiguous_strides(shape)


def is_contiguous(t, memory_format=None):
    """torch's ``is_contiguous(memory_format)``: strides equal the format's, size-1 dims free."""
    shape = tuple(t._d.shape)
    st = strides(t)
    order = _format_order(memory_format, len(shape))
    if order is None:
        return False
    if getattr(memory_format, "_name", None) in (None, "contiguous_format", "preserve_format") \
            and 0 in shape:
        return True
    expected = 1
    for d in order:
        if shape[d] != 1:
            if st[d] != expected:
                return False
            expected *= shape[d]
    return True


def is_non_overlapping_and_dense(shape, st):
    """torch's ``is_non_overlapping_and_dense``: some permutation of the dims is contiguous."""
    if len(shape) == 1:
        return shape[0] < 2 or st[0] == 1
    perm = sorted(range(len(shape)), key=lambda d: (shape[d] < 2, st[d]))
    expected = 1
    for d in perm:
        if shape[d] == 1:
            continue
        if st[d] != expected:
            return False
        expected *= shape[d]
    return True


def preserved_strides(t):
    """The strides torch's ``preserve_format`` gives a copy of ``t``: ``t``'s own when they are
    non-overlapping and dense, else channels_last when ``t`` is, else contiguous."""
    shape = tuple(t._d.shape)
    if t._alias is None and "_layout" not in t.__dict__:
        return contiguous_strides(shape)    # (a root with no layout of its own)
    st = strides(t)
    if is_non_overlapping_and_dense(shape, st):
        return st
    if len(shape) in (4, 5) and not is_contiguous(t):
        fmt = "channels_last" if len(shape) == 4 else "channels_last_3d"
        if is_contiguous(t, fmt) or _suggested(shape, st) != "contiguous_format":
            return channels_last_strides(shape)
    return contiguous_strides(shape)


def suggested_format(t):
    """torch's ``suggest_memory_format()``: ``"channels_last"`` (``"channels_last_3d"``) for a
    4-D (5-D) tensor whose strides order as channels-last's, else ``"contiguous_format"``."""
    shape = tuple(t._d.shape)
    if len(shape) not in (4, 5):
        return "contiguous_format"
    return _suggested(shape, strides(t))


def _suggested(shape, st):
    """``suggested_format`` of a 4-D or 5-D tensor of ``shape`` and strides ``st`` (torch's
    ``is_channels_last_strides_2d_s4`` / ``_3d_s5``)."""
    n = len(shape)
    if n not in (4, 5) or st[1] == 0:
        return "contiguous_format"
    lo = 0
    for d in ((1, 3, 2, 0) if n == 4 else (1, 4, 3, 2, 0)):
        if shape[d] == 0 or st[d] < lo or (d == 0 and lo == st[1]):
            return "contiguous_format"      # (torch's default for the ambiguous layouts)
        lo = st[d] * shape[d] if shape[d] > 1 else st[d]
    return "channels_last" if n == 4 else "channels_last_3d"


def dim_order(t):
    """torch's ``dim_order()``: the dims from outermost to innermost in memory (prims'
    ``compute_elementwise_output_logical_to_physical_perm``: contiguous and channels_last
    shortcuts, else an insertion sort on the strides, zero strides ignored)."""
    shape, st = tuple(t._d.shape), strides(t)
    n = len(shape)
    if n <= 1:
        return tuple(range(n))
    contiguous, channels_last = is_contiguous(t), is_contiguous(t, "channels_last")
    if contiguous and not channels_last:
        return tuple(range(n))
    if channels_last and not contiguous:
        return (0, *range(2, n), 1)

    def ge(a, b):
        if b == 0:
            return True
        if a == 0:
            return False
        return a >= b or a % b == 0

    def should_swap(a, b):
        if st[a] == 0 or st[b] == 0:
            return 0
        if st[a] == st[b]:
            return 0 if ge(shape[b], shape[a]) else 1
        if ge(st[b], st[a]):
            return -1
        return 1 if ge(st[a], st[b]) else 0

    perm = list(reversed(range(n)))
    for i in range(1, n):
        d1 = i
        for d0 in reversed(range(i)):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return tuple(reversed(perm))


def set_layout(t, st):
    """Record that root ``t`` holds its elements with strides ``st`` (None: contiguous)."""
    if st is None or tuple(st) == contiguous_strides(t._d.shape):
        t.__dict__.pop("_layout", None)
    else:
        t.__dict__["_layout"] = (tuple(t._d.shape), tuple(st))
    return t


def _root_strides(t):
    lay = t.__dict__.get("_layout")
    shape = tuple(t._d.shape)
    if lay is not None and lay[0] == shape:
        return lay[1]
    return contiguous_strides(shape)


def strides(t):
    """The strides torch reports for ``t``."""
    a = t._alias
    if a is None:
        return _root_strides(t)
    if a.strides is not None and len(a.strides) == t._d.ndim:
        return a.strides
    out = None
    if a.op is not None:
        rule = _RULES.get(a.op[0])
        if rule is not None:
            pst = strides(a.parent)
            out = rule(tuple(a.parent._d.shape), pst, a.op[1], tuple(t._d.shape), a.k)
    if out is None or len(out) != t._d.ndim:
        out = _inferred(t)
    a.strides = tuple(int(s) for s in out)
    return a.strides


def _inferred(t):
    """Strides read off ``t``'s index map (contiguous if the map is not affine)."""
    from ._storage import alias_index, concrete_maps
    shape = tuple(t._d.shape)
    n = math.prod(shape)
    if n == 0:
        return contiguous_strides(shape)
    with concrete_maps():
        idx = alias_index(t)
    root = t._alias.root
    rshape = tuple(root._d.shape)
    idx = np.arange(n, dtype=np.int64) if idx is None else np.asarray(idx).reshape(-1)
    rst = _root_strides(root)
    if rst != contiguous_strides(rshape) and is_non_overlapping_and_dense(rshape, rst):
        phys = sum(c * s for c, s in zip(np.unravel_index(idx, rshape), rst))
    else:
        phys = idx
    phys = np.asarray(phys, np.int64).reshape(shape)
    base = int(phys.reshape(-1)[0])
    out = [0] * len(shape)
    for d, size in enumerate(shape):
        if size > 1:
            pos = [0] * len(shape)
            pos[d] = 1
            out[d] = int(phys[tuple(pos)]) - base
    grid = base + sum(np.arange(size).reshape([-1 if i == d else 1 for i in range(len(shape))])
                      * out[d] for d, size in enumerate(shape))
    if not np.array_equal(grid, phys):
        return contiguous_strides(shape)
    acc = 1
    for d in range(len(shape) - 1, -1, -1):      # size-1 dims: as a contiguous tensor has them
        if shape[d] == 1:
            out[d] = acc
        else:
            acc = out[d] * shape[d] if out[d] else acc
    return tuple(out)


# ------------------------------------------------------------------ ATen's view geometry

def view_strides(oldshape, oldstride, newshape):
    """ATen's ``computeStride``: strides of ``view(newshape)``, or None when no view exists."""
    oldshape, oldstride, newshape = list(oldshape), list(oldstride), list(newshape)
    if not oldshape:
        return tuple([1] * len(newshape))
    numel = math.prod(oldshape)
    if numel == 0 and oldshape == newshape:
        return tuple(oldstride)
    newstride = [0] * len(newshape)
    if numel == 0:
        for d in range(len(newshape) - 1, -1, -1):
            newstride[d] = 1 if d == len(newshape) - 1 else \
                max(newshape[d + 1], 1) * newstride[d + 1]
        return tuple(newstride)
    view_d = len(newshape) - 1
    chunk_base_stride = oldstride[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[tensor_d]
        if tensor_d == 0 or (oldshape[tensor_d - 1] != 1 and
                             oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = oldstride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(newstride)


def _view(shape, st, kw, out, k):
    return view_strides(shape, st, out)


def _transpose(shape, st, kw, out, k):
    st = list(st)
    d0, d1 = kw["d0"], kw["d1"]
    st[d0], st[d1] = st[d1], st[d0]
    return tuple(st)


def _adjoint(shape, st, kw, out, k):
    return tuple(st[:-2]) + (st[-1], st[-2])


def _permute(shape, st, kw, out, k):
    return tuple(st[d] for d in kw["dims"])


def _unsqueeze_at(shape, st, d):
    new = 1 if d >= len(shape) else shape[d] * st[d]
    return list(shape[:d]) + [1] + list(shape[d:]), list(st[:d]) + [new] + list(st[d:])


def _unsqueeze(shape, st, kw, out, k):
    return tuple(_unsqueeze_at(shape, st, kw["dim"])[1])


def _squeeze(shape, st, kw, out, k):
    dims = kw["dims"]
    gone = {d for d in range(len(shape)) if shape[d] == 1 and (dims is None or d in dims)}
    return tuple(s for d, s in enumerate(st) if d not in gone)


def _expand(shape, st, kw, out, k):
    """ATen's ``inferExpandGeometry``."""
    n, lead = len(out), len(out) - len(shape)
    res = [0] * n
    for i in range(n - 1, -1, -1):
        d = i - lead
        size = shape[d] if d >= 0 else 1
        stride = st[d] if d >= 0 else (out[i + 1] * res[i + 1] if i + 1 < n else 1)
        if size != out[i]:
            stride = 0
        res[i] = stride
    return tuple(res)


def _same(shape, st, kw, out, k):
    return tuple(st)


def _drop(dim):
    def rule(shape, st, kw, out, k):
        return tuple(s for d, s in enumerate(st) if d != kw[dim])
    return rule


def _diagonal(shape, st, kw, out, k):
    d1, d2 = kw.get("dim1"), kw.get("dim2")
    if d1 is None or d2 is None:
        return None
    rest = [s for d, s in enumerate(st) if d not in (d1, d2)]
    return tuple(rest) + (st[d1] + st[d2],)


def _unfold(shape, st, kw, out, k):
    if not shape:
        return (1,)
    d = kw["dim"]
    res = list(st)
    res[d] = st[d] * kw["step"]
    return tuple(res) + (st[d] if shape else 1,)


def _getitem(shape, st, kw, out, k):
    """Basic indexing as torch's ``applySlicing``: select, slice (stride times step),
    None (unsqueeze), Ellipsis."""
    spec = kw["spec"]
    if any(s[0] == "t" for s in spec):
        return None
    shape, st = list(shape), list(st)
    consumed = sum(1 for s in spec if s[0] in "iIsS")
    dim = 0
    for s in spec:
        kind = s[0]
        if kind in "iI":
            del shape[dim], st[dim]
        elif kind == "s":
            start, stop, step = slice(*s[1:]).indices(shape[dim])
            shape[dim] = len(range(start, stop, step))
            st[dim] *= step
            dim += 1
        elif kind == "S":
            shape[dim] = s[1]
            st[dim] *= s[2]
            dim += 1
        elif kind == "n":
            shape, st = _unsqueeze_at(shape, st, dim)
            dim += 1
        elif kind == "z":
            shape, st = _unsqueeze_at(shape, st, dim)
            shape[dim] = 0
            dim += 1
        elif kind == "e":
            dim += len(shape) - dim - (consumed - sum(
                1 for t in spec[:spec.index(s)] if t[0] in "iIsS"))
    return tuple(st)


_RULES = {
    "view": _view, "transpose": _transpose, "t": lambda sh, st, kw, o, k: tuple(reversed(st)),
    "adjoint": _adjoint, "permute": _permute, "unsqueeze": _unsqueeze, "squeeze": _squeeze,
    "expand": _expand, "slice": _same, "select": _drop("dim"), "split": _same,
    "unbind": _drop("dim"), "diagonal": _diagonal, "unfold": _unfold, "getitem": _getitem,
    "detach": _same,
}


def obey_layout(u, tensor):
    """torch's ``clone_obey_contract``: a new ``.grad`` ``u`` takes the strides of its
    variable ``tensor`` when those are non-overlapping and dense (channels_last, permuted),
    else contiguous ones (bound into the engine's gradient accumulation)."""
    st = strides(tensor)
    shape = tuple(tensor._d.shape)
    if st == contiguous_strides(shape) or not is_non_overlapping_and_dense(shape, st):
        return u
    if u._alias is not None or tuple(u._d.shape) != shape:
        return u
    return set_layout(u, st)


def _bind():
    from .autograd import graph
    graph.obey_layout[0] = obey_layout


_bind()
