"""Indexing: ``Tensor.__getitem__`` with ints, slices, None, Ellipsis, bool masks and integer
tensors or lists, as one op whose static part is the index's structure."""
from __future__ import annotations

import jax
import math
import operator

import numpy as np
import jax.numpy as jnp

from .. import _barebones, _dtype as D
from .._tensor import Tensor
from .._registry import apply, defop
from .._storage import view_rule
from .. import _fused, _tiers
from ._surface import methods, toplevel

__all__ = ["index_put"]


def _index_array(v):
    """A host index array (numpy) as an int64 jax array: a device put (``jnp.asarray`` with a
    dtype compiles a conversion program)."""
    return _tiers.to_device(np.asarray(v, np.int64))


def _operands(arrays):
    """An index's operands for its op: index arrays as Tensors; a position (``x[i]``'s ``i``,
    ``x[i:i + b]``'s start) stays a Python int, an argument of the op's program as any number
    is (one program for every position, and no device put of its own)."""
    return [a if a.__class__ is int else Tensor._make(a) for a in arrays]


def _advanced(spec):
    """Does the index hold an advanced index: an index tensor, a mask's nonzero columns, or a
    scalar bool (torch reads ``True``/``False`` as a new dim indexed by ``[0]``/``[]``)?"""
    return any(s[0] in "tb" for s in spec)


def _getitem_name(kw):
    spec = kw["spec"]
    if _advanced(spec):
        return "IndexBackward0"
    if kw["single_slice"]:
        return "SliceBackward0"
    name = "AliasBackward0"
    for s in spec:
        if s[0] in "iI":
            name = "SelectBackward0"
        elif s[0] == "n":
            name = "UnsqueezeBackward0"
        elif (s[0] == "s" and s[1:] != (None, None, None)) or s[0] == "S":
            name = "SliceBackward0"
    return name


def _index_arrays_saved(first):
    """``saves`` of an op whose index arrays follow its first ``first`` inputs: torch saves
    them (read by the other inputs' gradients) when there are any."""
    def saves(kw):
        if not _advanced(kw["spec"]):
            return False
        return {i: tuple(range(first)) for i in range(first, first + len(kw["spec"]))}
    return saves


_BASIC: dict = {}        # spec -> does it index with ints, slices, None and Ellipsis alone


def _basic_index(kw):
    """Is the index basic (no tensor index): its result is a view of the input, whose elements
    never repeat (a positive step, no index array)."""
    spec = kw["spec"]
    basic = _BASIC.get(spec)
    if basic is None:
        if len(_BASIC) > 4096:
            _BASIC.clear()
        basic = _BASIC[spec] = not _advanced(spec)
    return basic


@defop("getitem", saves=_index_arrays_saved(1),
       view=view_rule(when=_basic_index, overlap=lambda base, kw: False),
       grad_name=_getitem_name)
def _getitem(a, *idx, spec, single_slice):
    return _get_impl(a, spec, idx)


def _bool_axes(spec, ndim):
    """The axes torch inserts for an index's scalar bools (``True``, ``False``, 0-dim bool or
    uint8 tensors), in the unsqueezed tensor's numbering: each is a new dim of size 1 that
    ``[0]`` (True) or ``[]`` (False) then indexes, an advanced index like any other."""
    axes, pos = [], 0
    rest = ndim - sum(1 for s in spec if s[0] in _CONSUMING and s[0] != "b")
    for s in spec:
        k = s[0]
        if k == "b":
            axes.append(pos)
            pos += 1
        elif k in _CONSUMING:
            pos += 1
        elif k == "e":
            pos += rest
    return axes


def _slice_bound(v):
    """A slice's start, stop or step as Python takes it: None or an integer (``__index__``); a
    float raises Python's TypeError, as in torch (``int()`` would truncate 1.5 silently)."""
    if v is None:
        return None
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError("slice indices must be integers or None or have an __index__ "
                        "method") from None


_SELECT = ("I",)


def _parse_basic(shape, key):
    """``_parse`` of the commonest index, Python ints, slices and 0-dim integer tensors one per
    leading dim (``x[i]``, ``x[a:b]``, ``x[:, -1]``, ``x[i:i + b]``): the same spec and arrays
    without the general reading. None for any other index (the general reading raises its
    errors)."""
    if len(key) > len(shape):
        return None
    spec, arrays = [], []
    dim = 0
    for k in key:
        c = k.__class__
        if c is int:
            n = shape[dim]
            if not -n <= k < n:
                return None
            spec.append(_SELECT)
            arrays.append(k % n)
        elif c is slice:
            start, stop, step = k.start, k.stop, k.step
            if not ((start is None or start.__class__ is int)
                    and (stop is None or stop.__class__ is int)):
                try:        # (bounds with ``__index__``: a loop's ``x[i:i + b]``, i a tensor)
                    start, stop = _slice_bound(start), _slice_bound(stop)
                except TypeError:
                    return None
                k = slice(start, stop, step)
            if not (step is None or (step.__class__ is int and step > 0)):
                return None
            n = shape[dim]
            first, last, stride = k.indices(n)
            length = len(range(first, last, stride))
            if (first == 0 and stride == 1 and length == n) or length == 0:
                spec.append(("s", start, stop, step))
            else:
                spec.append(("S", length, stride))
                arrays.append(first)
        elif c is not Tensor or not _select_index(k, shape, dim, spec, arrays):
            return None         # (a 0-dim integer tensor selects: ``for i in idx: x[i]``)
        dim += 1
    return tuple(spec), arrays


def _parse(x, key, warn_uint8=True):
    """Split an index into a hashable spec and the integer index arrays it uses.

    ``warn_uint8``: warn that a uint8 mask is deprecated (torch's index does; its index_put_
    does not where it hands a lone mask and a one-element value to ``masked_fill_``)."""
    if not isinstance(key, tuple):
        key = (key,)
    shape = x._d.shape
    basic = _parse_basic(shape, key)
    if basic is not None:
        return basic
    if not shape and len(key) == 1 and isinstance(key[0], (int, np.integer)) \
            and not isinstance(key[0], bool):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    for k in key:
        _check_key(k)
    # how many dims the index consumes, to place dims after an Ellipsis
    consumed = 0
    for k in key:
        if k is None or k is Ellipsis:
            continue
        if isinstance(k, Tensor) and k.dtype.name in ("bool", "uint8"):
            consumed += k.ndim
        elif not isinstance(k, (bool, np.bool_)):
            consumed += 1
    if consumed > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    key = _expand_ellipses(key, len(shape), consumed)
    spec, arrays = [], []
    bounds = []             # (an integer index tensor's values, its dim's size, its position)
    # torch applies the basic indices (ints, slices, None) first, then checks the tensor
    # indices' dtypes, then reads the masks in order (the uint8 warning, the shape check
    # against the basic-indexed tensor ``post``), then broadcasts them: errors in that order
    post = []
    bad_dtype = False
    masks = []              # (the mask's shape, its first dim in ``post``, whether uint8)
    dim = 0
    for k in key:
        if k is None:
            spec.append(("n",))
            post.append(1)
        elif k is Ellipsis:
            spec.append(("e",))
            post.extend(shape[dim:dim + len(shape) - consumed])
            dim += len(shape) - consumed
        elif isinstance(k, bool):
            spec.append(("b", k))
            post.append(1)
        elif isinstance(k, (int, np.integer)):
            n = shape[dim]
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for dimension {dim} with size {n}")
            # the position is a traced argument: x[i] for many i compiles once
            spec.append(("I",))
            arrays.append(int(k) % n)
            dim += 1
        elif isinstance(k, slice):
            if k.step is not None and k.step <= 0:
                raise ValueError("slice step cannot be zero" if k.step == 0 else
                                 "step must be greater than zero")
            n = shape[dim]
            sl = slice(_slice_bound(k.start), _slice_bound(k.stop), _slice_bound(k.step))
            start, stop, step = sl.indices(n)
            length = len(range(start, stop, step))
            if (start == 0 and step == 1 and length == n) or length == 0:
                spec.append(("s", sl.start, sl.stop, sl.step))
            else:
                # static length and step, traced start: x[i:i + b] compiles once per length
                spec.append(("S", length, step))
                arrays.append(start)
            post.append(length)
            dim += 1
        elif isinstance(k, Tensor) and _select_index(k, shape, dim, spec, arrays):
            dim += 1        # a 0-dim integer tensor selects, as an int does
        elif isinstance(k, Tensor) and _deferred_index(k, shape, dim, spec, arrays):
            post.append(shape[dim])
            dim += 1        # (fused eager: a pending integer index, its bounds checked later)
        else:
            # an index made from Python data inside a traced function is a constant
            t = _constant(k._data) if isinstance(k, Tensor) else _host_index(k)
            if t.dtype == np.bool_ or t.dtype == np.uint8:
                m = np.asarray(t).astype(bool)
                # (a 0-dim uint8 tensor is read as a bool, without the warning)
                masks.append((m.shape, len(post),
                               t.dtype == np.uint8 and warn_uint8 and m.ndim > 0))
                post.extend(shape[dim:dim + m.ndim] if m.ndim else [1])
                if m.shape != tuple(shape[dim:dim + m.ndim]):
                    dim += m.ndim
                    continue        # (raised below, after the basic indices' errors)
                for nz in np.nonzero(m) if m.ndim else ():
                    spec.append(("t",))
                    arrays.append(_index_array(nz))
                if m.ndim == 0:
                    spec.append(("b", bool(m)))
                dim += m.ndim
                continue
            post.append(shape[dim])
            if t.dtype not in (np.int64, np.int32):
                bad_dtype = True
                dim += 1
                continue
            n = shape[dim]
            # torch names the index tensor's position among the tensor indices
            k_adv = sum(1 for s in spec if s[0] in "tb")
            if isinstance(t, jax.core.Tracer):
                # computed inside a traced function: checked when the program runs
                from .._compile._hostchecks import index_bounds
                index_bounds(t, n, k_adv)
            else:
                bounds.append((np.asarray(t), n, k_adv))
            spec.append(("t",))
            # (host data: a device put; ``jnp.asarray`` of numpy dispatches a program, and of
            # a jax array is a no-op that costs about 10 us)
            arrays.append(_tiers.to_device(t) if t.__class__ is np.ndarray else
                          t if t.__class__ is _tiers._ArrayImpl else jnp.asarray(t))
            dim += 1
    post.extend(shape[dim:])
    if bad_dtype:
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    for mshape, at, uint8 in masks:
        if uint8:
            from .factorizations import triggered
            _warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                  "torch.bool instead." + triggered("IndexingUtils.h:37"))
        if mshape != tuple(post[at:at + len(mshape)]):
            bad = next(i for i in range(len(mshape)) if mshape[i] != post[at + i])
            raise IndexError(
                f"The shape of the mask {list(mshape)} at index {bad} does not match the shape "
                f"of the indexed tensor {post} at index {at + bad}")
    if _check_broadcast(spec, arrays) and bounds:
        _check_bounds(bounds)
    return tuple(spec), arrays


def _check_broadcast(spec, arrays):
    """torch's IndexError when the tensor indices (masks as their nonzero() columns, scalar
    bools as ``[0]`` or ``[]``) do not broadcast together; whether they index any element
    (torch checks no index's bounds where they broadcast to none)."""
    it = iter(arrays)
    shapes = []
    for s in spec:
        if s[0] in ("I", "S", "t"):         # (the specs that carry an array)
            a = next(it)
            if s[0] == "t":
                shapes.append(tuple(a.shape))
        elif s[0] == "b":
            shapes.append((int(s[1]),))
    if len(shapes) < 2:
        return True
    try:
        return math.prod(np.broadcast_shapes(*shapes)) > 0
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                         "with shapes " + ", ".join(str(list(sh)) for sh in shapes)) from None


def _check_key(k):
    """torch's refusal of an index element that is none of an int (or ``__index__``), a
    slice, None, Ellipsis, a bool, a Tensor or a sequence (read as torch.tensor reads it: a
    string's error is that one's); a numpy bool has no ``__index__``."""
    if k is None or k is Ellipsis or isinstance(k, (bool, int, slice, Tensor, np.ndarray,
                                                    jax.Array, list, tuple)):
        return
    if isinstance(k, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(k).__name__}'")
    tp = type(k)
    if not isinstance(k, dict) and hasattr(tp, "__getitem__") and hasattr(tp, "__len__"):
        return                  # (a sequence)
    if getattr(tp, "__torch_function__", None) is not None:
        return                  # (an object overriding torch functions: refused as one)
    if isinstance(k, np.bool_) or not hasattr(tp, "__index__"):
        from .._tensor import _type_name
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                         f"byte Variables are valid indices (got {_type_name(k)})")


def _host_index(k):
    """A list or numpy index as torch reads it (``indexing_tensor_from_data``): bool and uint8
    data stay masks, any other data converts to int64 (floats truncate toward zero)."""
    t = np.asarray(k)
    if t.dtype == np.bool_ or t.dtype == np.uint8:
        return t
    if t.dtype.kind == "c":
        raise TypeError("'complex' object cannot be interpreted as an integer")
    return t.astype(np.int64)


def _expand_ellipses(key, ndim, consumed):
    """torch's reading of an index with several Ellipsis (numpy allows one): each stands for
    the dims the rest of the index leaves, full slices past the last dim dropped."""
    if sum(1 for k in key if k is Ellipsis) < 2:
        return key
    out = []
    for k in key:
        out.extend([slice(None)] * (ndim - consumed) if k is Ellipsis else [k])
    extra = consumed + sum(1 for k in key if k is Ellipsis) * (ndim - consumed) - ndim
    while extra > 0 and out and out[-1] == slice(None):
        out.pop()
        extra -= 1
    if extra > 0:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    return tuple(out)


def _check_bounds(bounds):
    """torch's IndexError for the first out-of-range index: the index tensors broadcast
    together, the first element (in order) with an index out of range, its first such index."""
    if not any(((a >= n) | (a < -n)).any() for a, n, _ in bounds):
        return
    try:
        arrays = np.broadcast_arrays(*[a for a, _, _ in bounds])
    except ValueError:
        arrays = [a for a, _, _ in bounds]     # (the indexing op raises torch's shape error)
        if len(arrays) > 1:
            return
    bad = [(a >= n) | (a < -n) for a, (_, n, _) in zip(arrays, bounds)]
    first = int(np.argmax(np.logical_or.reduce(bad).reshape(-1)))
    for a, b, (_, n, k) in zip(arrays, bad, bounds):
        if b.reshape(-1)[first]:
            raise IndexError(f"index {int(a.reshape(-1)[first])} is out of bounds for "
                             f"dimension {k} with size {n}")


def _first_out_of_range(idx, n):
    """Whether an index is out of ``[-n, n)``, and the first that is (a deferred bounds
    check's value)."""
    flat = idx.reshape(-1)
    bad = (flat >= n) | (flat < -n)
    return jnp.stack([bad.any().astype(jnp.int64), flat[jnp.argmax(bad)].astype(jnp.int64)])


def _select_index(k, shape, dim, spec, arrays):
    """A 0-dim integer tensor index: torch selects with it as with an int (its ``item()``), so
    the result is a view and the dim is gone before any advanced index applies. False for
    other tensors."""
    if k.ndim != 0 or k.dtype.category != D._INT or k.dtype.name == "uint8":
        return False
    n = shape[dim]
    t = _constant(k._data)
    if isinstance(t, jax.core.Tracer):
        from .._compile._hostchecks import index_bounds
        index_bounds(t, n, dim)
        t = t.astype(jnp.int64)
        spec.append(("I",))
        arrays.append(jnp.where(t < 0, t + n, t))
        return True
    v = int(np.asarray(t))
    if not -n <= v < n:
        raise IndexError(f"index {v} is out of bounds for dimension {dim} with size {n}")
    spec.append(("I",))
    arrays.append(v % n)
    return True


def _deferred_index(k, shape, dim, spec, arrays):
    """A pending integer index tensor in fused eager: used as it is, its bounds checked when
    its segment runs (``_fused.defer_check``) instead of read now; False otherwise."""
    d = _fused.raw(k)
    if d.__class__ is not _fused.Deferred or d.value is not None:
        return False
    if d.dtype not in (np.int64, np.int32):
        return False        # (masks need their values; other dtypes raise on the eager path)
    n = shape[dim]
    k_adv = sum(1 for s in spec if s[0] in "tb")

    def error(v):
        if v[0]:
            return IndexError(f"index {int(v[1])} is out of bounds for dimension {k_adv} with "
                              f"size {n}")
        return None
    if d.size and not _fused.defer_check(_first_out_of_range, [d, n], error,
                                         within=(-n, n - 1)):
        return False
    spec.append(("t",))
    arrays.append(d)
    return True


def _warn(message):
    import warnings
    from .factorizations import _user_stacklevel
    warnings.warn(message, UserWarning, stacklevel=_user_stacklevel())


def _sequence_key(key):
    """torch's legacy reading of a list index: a list (under 32 long) holding a tensor, a
    sequence, a slice, None or Ellipsis is read as a tuple of indices (``x[[rows, cols]]`` is
    ``x[rows, cols]``), with torch's deprecation warning; any other key as it is."""
    if key.__class__ is not list or len(key) >= 32:
        return key
    for k in key:
        if isinstance(k, (Tensor, list, tuple, slice, np.ndarray)) or k is None \
                or k is Ellipsis:
            _warn("Using a non-tuple sequence for multidimensional indexing is deprecated and "
                  "will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In "
                  "pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)], "
                  "which will result either in an error or a different result")
            return tuple(key)
    return key


def getitem(self, key):
    spec, arrays = _parse(self, _sequence_key(key))
    out = apply(_getitem, self, *_operands(arrays), spec=spec,
                single_slice=isinstance(key, slice))
    if out._d.__class__ is _fused.Deferred and self._d.dtype.kind in "iu":
        # (fused eager: a batch gathered from integer data, ``Xtr[ix]``, lies in the data's
        # range, and the index checks it then meets read nothing)
        _fused.bound_gather(out._d, _fused.raw(self))
    return out


methods(__getitem__=getitem)


# ------------------------------------------------------------------ __setitem__ / index_put

import functools  # noqa: E402

from .._storage import check_inplace, commit_inplace  # noqa: E402
from .._storage import constant as _constant  # noqa: E402


_CONSUMING = "iIsStb"     # (the spec entries that index a dim; "b" one torch inserts)


def _build_key(spec, idx, ndim):
    """The jnp index for ``spec`` plus the dynamic slices to take first:
    [(axis, start, span)] with ``span`` the static extent the slice covers."""
    key, dyn = [], []
    it = iter(idx)
    n_consume = sum(1 for s in spec if s[0] in _CONSUMING)
    dim = 0
    for s in spec:
        kind = s[0]
        if kind == "i":
            key.append(s[1])
        elif kind == "s":
            key.append(slice(*s[1:]))
        elif kind == "n":
            key.append(None)
        elif kind == "b":
            key.append(_ONE if s[1] else _NONE)
        elif kind == "e":
            key.append(Ellipsis)
            dim += ndim - n_consume
            continue
        elif kind == "S":
            length, step = s[1], s[2]
            dyn.append((dim, next(it), (length - 1) * step + 1))
            key.append(slice(None, None, step))
        else:
            key.append(next(it))
        if kind in _CONSUMING:
            dim += 1
    return tuple(key), dyn


def _slice_dyn(a, dyn):
    for axis, start, span in dyn:
        a = jax.lax.dynamic_slice_in_dim(a, start, span, axis=axis)
    return a


def _split_selects(spec, key):
    """torch's two steps for an index mixing ints and tensors: the ints select first (their
    dims gone), then the tensors index what is left, with numpy's placement of the advanced
    dims among those. Returns (the selecting key, the rest) or None when one step is all."""
    if not _advanced(spec) or not any(s[0] in "iI" for s in spec):
        return None
    first, rest = [], []
    for s, k in zip(spec, key):
        if s[0] in "iI":
            first.append(k)
        elif s[0] in _CONSUMING:
            first.append(slice(None))
            rest.append(k)
        elif s[0] == "e":
            first.append(k)
            rest.append(k)
        else:
            rest.append(k)
    return tuple(first), tuple(rest)


_ONE = np.zeros(1, np.int64)    # (a scalar True's index of its new dim; False's: none)
_NONE = np.zeros(0, np.int64)


def _get_impl(a, spec, idx):
    axes = _bool_axes(spec, a.ndim)
    if axes:
        a = jnp.expand_dims(a, axes)
    key, dyn = _build_key(spec, idx, a.ndim)
    split = _split_selects(spec, key)
    if split is not None:
        return _slice_dyn(a, dyn)[split[0]][split[1]]
    return _slice_dyn(a, dyn)[key]


def _set_impl(a, v, spec, idx, mode="set"):
    axes = _bool_axes(spec, a.ndim)
    if axes:
        return jnp.squeeze(_set_into(jnp.expand_dims(a, axes), v, spec, idx, mode), axes)
    return _set_into(a, v, spec, idx, mode)


def _set_into(a, v, spec, idx, mode):
    key, dyn = _build_key(spec, idx, a.ndim)
    sub = _slice_dyn(a, dyn)
    split = _split_selects(spec, key)
    if split is not None:
        part = sub[split[0]]
        part = part.at[split[1]].add(v) if mode == "add" else part.at[split[1]].set(v)
        sub = sub.at[split[0]].set(part)
    else:
        sub = sub.at[key].add(v) if mode == "add" else sub.at[key].set(v)
    if not dyn:
        return sub
    starts = [jnp.zeros((), jnp.int64)] * a.ndim
    for axis, start, _ in dyn:
        starts[axis] = jnp.asarray(start, jnp.int64)
    return jax.lax.dynamic_update_slice(a, sub, starts)


def _fit_value(v, target, advanced=True):
    """torch's value broadcasting for index assignment: leading 1-dims of the value are
    dropped, then it must expand to the indexed shape (torch's messages: index_put_'s for
    advanced indices, expand's for a basic-index view)."""
    shp = tuple(jnp.shape(v))
    while len(shp) > len(target) and shp[0] == 1:
        shp = shp[1:]
    ok = len(shp) <= len(target) and all(
        s == 1 or s == t for s, t in zip(shp[::-1], target[::-1]))
    if not ok:
        if advanced:
            # (torch names the value's shape with every leading 1 dropped)
            bare = list(shp)
            while bare and bare[0] == 1:
                bare.pop(0)
            raise RuntimeError(f"shape mismatch: value tensor of shape {bare} "
                               f"cannot be broadcast to indexing result of shape "
                               f"{list(target)}")
        if len(shp) > len(target):
            from .typeinfo import _TYPE_NAMES
            from .. import _dtype as D
            tn = _TYPE_NAMES[D.from_jax(v.dtype).name]
            raise RuntimeError(f"expand(torch.{tn}{{{list(shp)}}}, size={list(target)}): the "
                               f"number of sizes provided ({len(target)}) must be greater or "
                               f"equal to the number of dimensions in the tensor ({len(shp)})")
        j = next(j for j in range(1, len(shp) + 1) if shp[-j] not in (1, target[-j]))
        raise RuntimeError(f"The expanded size of the tensor ({target[-j]}) must match the "
                           f"existing size ({shp[-j]}) at non-singleton dimension "
                           f"{len(target) - j}.  Target sizes: {list(target)}.  Tensor sizes: "
                           f"{list(shp)}")
    return jnp.broadcast_to(jnp.reshape(v, shp), target)


def _index_put_name(kw):
    return "IndexPutBackward0" if kw["advanced"] else "CopySlices"


def _put_fwd(spec, a, v, *idx):
    return _put(spec, a, v, *idx), idx


def _put_bwd(spec, idx, g):
    # torch: the overwritten positions get no gradient; every written value (duplicates
    # included) gets the gradient at its position
    gv = _get_impl(g, spec, idx)
    return (_set_impl(g, jnp.zeros_like(gv), spec, idx), gv) + (None,) * len(idx)


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def _put(spec, a, v, *idx):
    return _set_impl(a, v, spec, idx)


_put.defvjp(_put_fwd, _put_bwd)


@defop("index_put", saves=_index_arrays_saved(2), grad_name=_index_put_name)
def _index_put(a, value, *idx, spec, accumulate, advanced):
    target = jax.eval_shape(lambda a, *i: _get_impl(a, spec, i), a, *idx).shape
    v = D.cast(_fit_value(jnp.asarray(value), target, advanced), a.dtype)
    if accumulate:
        return _set_impl(a, v, spec, idx, mode="add")
    return _put(spec, a, v, *idx)


from .scatter import _masked_fill  # noqa: E402

# masked_fill's function, recorded as torch's index_put_ records it (its node's name)
_index_put_mask = defop("index_put_mask", grad_name="IndexPutBackward0",
                        saves=False)(_masked_fill.fn)


def _value_arg(self, value):
    if isinstance(value, Tensor):
        return value
    # (torch's numbers: Python's, numpy's integers, and the numpy scalars that subclass
    # Python's float and complex; numpy's float32, float16, complex64 and bool_ are refused)
    if isinstance(value, (bool, int, float, complex, np.integer)):
        value = value.item() if isinstance(value, np.number) else value
        # torch's checked scalar conversion (through double for half/bfloat16): a number
        # outside the dtype raises, never wraps
        if isinstance(value, int) and not -2 ** 63 <= value < 2 ** 63:
            raise ValueError("Overflow when unpacking long long")
        D.check_scalar(value, self.dtype, 1)
        return value
    from .typeinfo import typename
    kind = type(value)
    name = ("numpy." if kind.__module__ == "numpy" else "") + kind.__name__
    raise TypeError(f"can't assign a {name} to a {typename(self)}")


def setitem(self, key, value):
    """``self[key] = value``: an op producing the updated array, committed into ``self``."""
    value = _value_arg(self, value)
    if key is False:
        return      # (torch writes nothing, whatever the value's shape)
    if (isinstance(key, Tensor) and key.dtype is D.bool and not isinstance(value, Tensor)
            and key._d.ndim and key._d.shape == self._d.shape):
        # ``x[x < 0] = 0``: torch's index_put_ fills a lone mask of the tensor's shape with a
        # number (masked_fill_); a select, so the mask is never read on the host (in fused
        # eager a computed mask stays pending)
        check_inplace(self)
        _barebones.require("masked_fill", self)
        commit_inplace(self, apply(_index_put_mask, self, key, value))
        return
    key = _sequence_key(key)
    try:
        dtypes = _advanced_dtypes(key)
    except Exception:       # (a bad index: _parse raises torch's error, in torch's order)
        dtypes = None
    spec, arrays = _parse(self, key, warn_uint8=dtypes is None
                          or not _fills_mask(dtypes, value, False))
    if (self._requires_grad and self.grad_fn is None and not _advanced(spec)
            and _grad_enabled()):
        # torch writes through a view of self here
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")
    check_inplace(self)
    advanced = bool(dtypes)
    _check_overlap(self, key, value, advanced)
    if advanced:
        value = _put_value(self, dtypes, value, False, spec, arrays)
    elif isinstance(value, Tensor):
        from .convert import warn_complex_discard
        warn_complex_discard(value.dtype, self.dtype)      # (torch copies into the view)
    out = apply(_index_put, self, value, *_operands(arrays), spec=spec,
                accumulate=False, advanced=advanced)
    commit_inplace(self, out)


def _basic_part(key):
    """``key`` with each advanced index replaced by full slices over the dims it indexes: the
    view torch's index_put_ writes into (a scalar bool: the new dim it indexes, unsqueezed)."""
    out = []
    for k in (key if isinstance(key, tuple) else (key,)):
        if isinstance(k, (bool, np.bool_)):
            out.append(None)
        elif isinstance(k, (Tensor, np.ndarray)):
            if k.ndim == 0:
                out.append(None if k.dtype in (np.bool_, np.uint8, D.bool, D.uint8) else k)
            elif k.dtype in (np.bool_, np.uint8, D.bool, D.uint8):
                out.extend([slice(None)] * k.ndim)
            else:
                out.append(slice(None))
        elif isinstance(k, (list, tuple)):
            out.append(slice(None))
        else:
            out.append(k)
    return tuple(out)


def _check_overlap(self, key, value, advanced):
    """torch's error where the value reads part of the memory the assignment writes
    (``x[1:] = x[:-1]``: copy_ into the view; ``x[[1, 2]] = x[:2]``: index_put_ into x)."""
    from .. import _storage
    if not isinstance(value, Tensor) or \
            _storage._root_of(value) is not _storage._root_of(self):
        return
    if advanced:
        # index_put_ into the basic part's view: any shared element raises (the same memory
        # too)
        basic = _basic_part(key)
        dest = getitem(self, basic) if basic else self
        if _storage._overlap(dest, value) is not None:
            raise RuntimeError(_storage._PARTIAL_OVERLAP)
        return
    dest = getitem(self, key)
    if tuple(dest.shape) != tuple(value.shape):
        return      # (a broadcast value reads with stride 0: torch does not compare it)
    _storage.check_no_partial_overlap(dest, [value])


def _advanced_dtypes(key):
    """The dtypes (names) of a ``__setitem__`` key's advanced indices, in order, as torch's
    index_put_ gets them: a list or array converted (``_host_index``), a 0-dim bool or uint8
    tensor, or a Python bool in a tuple key, as an integer index (a 0-dim integer selects:
    none)."""
    out = []
    for k in key if isinstance(key, tuple) else (key,):
        if isinstance(k, bool):
            if isinstance(key, tuple):
                out.append("int64")
        elif isinstance(k, Tensor):
            if k.ndim:
                out.append(k.dtype.name)
            elif k.dtype is D.bool or k.dtype is D.uint8:
                out.append("int64")     # (a scalar bool: an index of a new dim, [0] or [])
        elif isinstance(k, (list, np.ndarray)):
            t = _host_index(k)
            out.append(t.dtype.name if t.ndim else "int64")
    return out


def _fills_mask(dtypes, value, accumulate):
    """Whether torch's index_put_ hands the write to ``masked_fill_`` (its
    ``canDispatchToMaskedFill``): one advanced index, a bool or uint8 mask, and a value of one
    element, not accumulated."""
    return not accumulate and len(dtypes) == 1 and dtypes[0] in ("bool", "uint8") and (
        not isinstance(value, Tensor) or value.numel() == 1)


def _put_value(self, dtypes, value, accumulate, spec, arrays):
    """The value index_put_ writes, checked as torch: where the one index is a mask and the
    value a single element, torch fills with ``masked_fill_(mask, value.item())`` (its
    ``canDispatchToMaskedFill``: any value dtype, converted as a scalar; a uint8 mask raises);
    otherwise a tensor value must have the destination's dtype."""
    if _fills_mask(dtypes, value, accumulate):
        if dtypes[0] == "uint8":
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with "
                               "dtype unsigned char")
        _barebones.require("masked_fill", self)
        if isinstance(value, Tensor) and value.dtype is not self.dtype:
            D.check_scalar(value.item(), self.dtype)
            value = value.to(self.dtype)
        return value
    _same_dtype_put(self, value, spec, arrays)
    return value


def _same_dtype_put(self, value, spec, arrays):
    """torch's index_put (advanced indexing) takes a tensor source only of the destination's
    dtype (basic indexing copies, converting); a value of the wrong shape raises first."""
    if isinstance(value, Tensor) and value.dtype is not self.dtype:
        target = jax.eval_shape(lambda a, *i: _get_impl(a, spec, i),
                                *[a if a.__class__ is int else
                                  jax.ShapeDtypeStruct(a.shape, a.dtype)
                                  for a in (self._d, *arrays)]).shape
        _fit_value(np.empty(tuple(value.shape)), target)
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{D.legacy_name(self.dtype)} for the destination and "
                           f"{D.legacy_name(value.dtype)} for the source.")


def _grad_enabled():
    from ..autograd import grad_mode
    return grad_mode._state.grad_enabled


def _index_put_args(name, method, indices, values):
    """torch's argument parsing of index_put(_)'s ``indices`` (a tuple or list of Tensors)
    and ``values`` (a Tensor)."""
    from .._tensor import _type_name
    first = 1 if method else 2
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{name}(): argument 'indices' (position {first}) must be tuple of "
                        f"Tensors, not {_type_name(indices)}")
    for i, k in enumerate(indices):
        if not isinstance(k, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument {first - 1}, but got "
                            f"{_type_name(k)}")
    if not isinstance(values, Tensor):
        raise TypeError(f"{name}(): argument 'values' (position {first + 1}) must be Tensor, "
                        f"not {_type_name(values)}")
    if not indices:
        raise RuntimeError("sym_strides() called on an undefined Tensor")
    return tuple(indices)


def _put_indices(input, key, values, accumulate):
    dtypes = [k.dtype.name for k in key]
    spec, arrays = _parse(input, key, warn_uint8=not _fills_mask(dtypes, values, accumulate))
    values = _put_value(input, dtypes, values, accumulate, spec, arrays)
    return apply(_index_put, input, values, *_operands(arrays), spec=spec,
                 accumulate=bool(accumulate), advanced=True)


def index_put(input, indices, values, accumulate=False):
    key = _index_put_args("index_put", False, indices, values)
    return _put_indices(input, key, values, accumulate)


def _index_put_method(self, indices, values, accumulate=False):
    return _put_indices(self, _index_put_args("index_put", True, indices, values), values,
                      accumulate)


def _index_put_(self, indices, values, accumulate=False):
    key = _index_put_args("index_put_", True, indices, values)
    check_inplace(self)
    _check_overlap(self, key, values, True)
    return commit_inplace(self, _put_indices(self, key, values, accumulate))


methods(__setitem__=setitem, index_put=_index_put_method, index_put_=_index_put_)
toplevel("index_put_")
