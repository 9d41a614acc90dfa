"""Sorting and order statistics: sort, argsort, msort, topk, kthvalue, median, mode, unique,
unique_consecutive, bincount, histc, quantile/nanquantile, nanmedian, logcumsumexp."""
from __future__ import annotations

import math as _math

import builtins as _bi
import functools
import jax as _jax
import jax.numpy as jnp
import numpy as _np

from .. import _dtype as D
from .._registry import apply, defop
from .._tensor import Tensor, _wrap_dim
from ._surface import methods, public
from .special_ops import no_grad_for
from .reduce import _I64, _RT, _even_split, _gather, _nonempty_dim, _one_dim, _return_type

__all__ = ['median', 'mode', 'topk', 'sort', 'argsort', 'kthvalue', 'unique', 'bincount', 'histc',
           'msort', 'quantile', 'nanquantile', 'logcumsumexp', 'nanmedian', 'unique_consecutive']


# ------------------------------------------------------------------ sort, argsort, topk, kth

def _argsort(a, dim, descending):
    return jnp.argsort(a, axis=dim, stable=True, descending=descending).astype(_I64)


@defop("sort", grad_name="SortBackward0")
def _sort(a, dim, descending):
    if a.ndim == 0:
        return a, jnp.zeros((), _I64)
    idx = _argsort(a, dim, descending)
    return jnp.take_along_axis(a, idx, axis=dim), idx


@defop("argsort", differentiable=False)
def _argsort_op(a, dim, descending):
    if a.ndim == 0:
        return jnp.zeros((), _I64)
    return _argsort(a, dim, descending)


def _no_complex_kernel(input, kernel):
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{D.legacy_name(input.dtype)}'")


def _no_complex_sort(input, what):
    if input.dtype.is_complex:
        raise RuntimeError(f" {what} does not support complex dtypes on CPU")


@public(out=True)
def sort(input, dim=-1, descending=False, stable=False):
    """(values, indices) sorted along ``dim`` (always stable; NaN sorts as the largest)."""
    _no_complex_sort(input, "Sort")
    d = _one_dim(dim, input.ndim)
    return _RT["sort"](*apply(_sort, input, dim=d, descending=bool(descending)))


@public(out=True)
def argsort(input, dim=-1, descending=False, stable=False):
    _no_complex_sort(input, "Sort")
    d = _one_dim(dim, input.ndim)
    return apply(_argsort_op, input, dim=d, descending=bool(descending))


@public(out=True)
def msort(input):
    return sort(input, 0).values


def _comparison(dtype, largest):
    """torch's topk comparison: ``comp(x, y)``, x goes first (NaN greatest)."""
    if dtype.kind not in "fc":
        return (lambda x, y: x > y) if largest else (lambda x, y: x < y)
    if largest:
        return lambda x, y: x > y or (x != x and y == y)
    return lambda x, y: x < y or (x == x and y != y)


def _partial_sort_row(v, k, largest):
    """The indices torch's CPU topk returns for ``k * 64 <= n`` (a numpy row ``v``):
    libstdc++'s ``std::partial_sort`` on (value, index) pairs, replayed step by step: its heap
    select (a heap of the first k under the comparison, each later element better than its top
    popped in) and its sort of the heap (pops from the back)."""
    arr = v.tolist()
    ix = list(range(len(arr)))
    comp = _comparison(v.dtype, largest)

    def adjust(hole, n, value, vi):             # std::__adjust_heap, then __push_heap
        top = child = hole
        while child < (n - 1) // 2:
            child = 2 * (child + 1)
            if comp(arr[child], arr[child - 1]):
                child -= 1
            arr[hole], ix[hole] = arr[child], ix[child]
            hole = child
        if n % 2 == 0 and child == (n - 2) // 2:
            child = 2 * (child + 1)
            arr[hole], ix[hole] = arr[child - 1], ix[child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and comp(arr[parent], value):
            arr[hole], ix[hole] = arr[parent], ix[parent]
            hole = parent
            parent = (hole - 1) // 2
        arr[hole], ix[hole] = value, vi

    def pop(n, result):                         # std::__pop_heap of [0, n) into result
        value, vi = arr[result], ix[result]
        arr[result], ix[result] = arr[0], ix[0]
        adjust(0, n, value, vi)

    if k >= 2:                                  # std::__make_heap
        parent = (k - 2) // 2
        while True:
            adjust(parent, k, arr[parent], ix[parent])
            if parent == 0:
                break
            parent -= 1
    for i in range(k, len(arr)):
        if comp(arr[i], arr[0]):
            pop(k, i)
    for last in range(k - 1, 0, -1):            # std::__sort_heap
        pop(last, last)
    return ix[:k]


def _topk_row(v, k, largest, sort=True):
    """The indices torch's CPU topk returns for ``k * 64 > n`` (a numpy row ``v``):
    libstdc++'s ``nth_element`` (introselect: median-of-three pivot, unguarded partition,
    insertion sort below 4) on (value, index) pairs, then libstdc++'s ``std::sort`` of the
    first k - 1 (introsort's partitions, then its insertion sort: a stable sort under the
    comparison, NaN greatest). Replayed step by step on the host (``_host_rows``): as jax
    while_loops the interpreter tier would walk them one step at a time (seconds for 12,800
    values). The heapsort of a range past the depth limit is not replayed."""
    n = len(v)
    arr = v.tolist()
    ix = list(range(n))
    nan = v.dtype.kind in "fc"
    comp = _comparison(v.dtype, largest)

    def partition_pivot(f, l):
        a, b, c = f + 1, f + (l - f) // 2, l - 1
        ab, bc, ac = comp(arr[a], arr[b]), comp(arr[b], arr[c]), comp(arr[a], arr[c])
        pick = (b if bc else c if ac else a) if ab else (a if ac else c if bc else b)
        arr[f], arr[pick] = arr[pick], arr[f]
        ix[f], ix[pick] = ix[pick], ix[f]
        piv = arr[f]
        first, last = f + 1, l
        while True:
            while first < n - 1 and comp(arr[first], piv):
                first += 1
            last -= 1
            while last > 0 and comp(piv, arr[last]):
                last -= 1
            if not first < last:
                return first
            arr[first], arr[last] = arr[last], arr[first]
            ix[first], ix[last] = ix[last], ix[first]
            first += 1

    f, l = 0, n
    while l - f > 3:
        cut = partition_pivot(f, l)
        if cut <= k - 1:
            f = cut
        else:
            l = cut
    for i in range(f + 1, l):                   # (insertion sort of the last range)
        val, vi = arr[i], ix[i]
        j = i
        while j > f and comp(val, arr[j - 1]):
            j -= 1
        arr[j + 1:i + 1], ix[j + 1:i + 1] = arr[j:i], ix[j:i]
        arr[j], ix[j] = val, vi
    if sort and k > 2:
        m = k - 1
        if m > 16:
            # std::sort's introsort: the partitions of the ranges longer than 16 (disjoint
            # ranges, so in any order: a stack)
            stack = [(0, m, 2 * (m.bit_length() - 1))]
            while stack:
                f, l, d = stack.pop()
                if l - f > 16 and d > 0:
                    cut = partition_pivot(f, l)
                    stack.append((cut, l, d - 1))
                    stack.append((f, cut, d - 1))
        # its final insertion sort: stable under the comparison
        if largest:
            key = (lambda i: (arr[i] == arr[i], -arr[i])) if nan else (lambda i: -arr[i])
        else:
            key = (lambda i: (arr[i] != arr[i], arr[i])) if nan else (lambda i: arr[i])
        order = sorted(range(m), key=key)
        ix[:m] = [ix[i] for i in order]
    return ix[:k]


def _host_rows(rows, fn, k=None):
    """``fn(row)`` (torch's indices: ``k`` of them, or one where ``k`` is None) of each row of
    ``rows`` (a jax array), replayed on the host (``pure_callback``)."""
    tail = () if k is None else (k,)

    def host(r):
        r = _np.asarray(r)
        return _np.array([fn(row) for row in r], _np.int64).reshape(r.shape[:1] + tail)
    return _jax.pure_callback(host, _jax.ShapeDtypeStruct(rows.shape[:1] + tail, _I64), rows,
                              vmap_method="sequential")


@defop("topk", grad_name="TopkBackward0")
def _topk(a, k, dim, largest, sort=True):
    if a.ndim == 0:
        return a, jnp.zeros((), _I64)
    n = a.shape[dim]
    if k == 0 or k == 1 and 64 <= n:
        # (k == 1 of torch's partial_sort: the first extreme element, as a stable sort's)
        idx = _slice_k(_argsort(a, dim, largest), k, dim)
    else:
        x = jnp.moveaxis(_jax.lax.stop_gradient(a), dim, -1)
        batch = x.shape[:-1]
        rows = x.reshape(-1, n)
        replay = lambda r: _host_rows(  # noqa: E731
            r, (lambda row: _partial_sort_row(row, k, largest)) if k * 64 <= n else
            (lambda row: _topk_row(row, k, largest, sort)), k)
        if sort or k * 64 <= n:
            # (sorted, with no two of the k + 1 best equal, torch's indices are the sort's)
            order = _argsort(rows, -1, largest)[:, :k + 1]
            idx = _jax.lax.cond(_ties(jnp.take_along_axis(rows, order, -1)), replay,
                                lambda r: order[:, :k], rows)
        else:     # torch's unsorted order is nth_element's arrangement, ties or not
            idx = replay(rows)
        idx = jnp.moveaxis(idx.reshape(batch + (k,)), -1, dim)
    return jnp.take_along_axis(a, idx, axis=dim), idx


def _slice_k(x, k, dim):
    return _jax.lax.slice_in_dim(x, 0, k, axis=dim)


@public(out=True)
def topk(input, k, dim=-1, largest=True, sorted=True):
    """The k largest (or smallest) elements along ``dim`` as (values, indices), sorted."""
    d = _one_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    if input.dtype is D.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    _no_complex_sort(input, "topk")
    return _RT["topk"](*apply(_topk, input, k=int(k), dim=d, largest=bool(largest),
                              sort=bool(sorted)))


def _quickselect_row(v, k):
    """The index torch's CPU kthvalue returns (a numpy row ``v``, ``k`` from 0): its
    quick_select_template (median-of-three Hoare quickselect, NaN largest) on (value, index)
    pairs, replayed step by step on the host (``_host_rows``: as a jax while_loop the
    interpreter would walk it one step at a time, seconds for 12,800 values)."""
    n = len(v)
    arr = v.tolist()
    ix = list(range(n))
    gt = _comparison(v.dtype, True)

    def swap(a, b):
        arr[a], arr[b] = arr[b], arr[a]
        ix[a], ix[b] = ix[b], ix[a]

    L, R = 0, n - 1
    while R > L:
        if R == L + 1:
            if gt(arr[L], arr[R]):
                swap(L, R)
            break
        swap(L + (R - L) // 2, L + 1)
        if gt(arr[L + 1], arr[R]):
            swap(L + 1, R)
        if gt(arr[L], arr[R]):
            swap(L, R)
        if gt(arr[L + 1], arr[L]):
            swap(L + 1, L)
        piv = arr[L]
        i, j = L + 1, R
        while True:
            i += 1
            while i < n - 1 and gt(piv, arr[i]):
                i += 1
            j -= 1
            while j > 0 and gt(arr[j], piv):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(L, j)
        if j <= k:
            L = i
        if j >= k:
            R = j - 1
    return ix[k]


def _kth_indices(a, k, dim):
    x = jnp.moveaxis(_jax.lax.stop_gradient(a), dim, -1)
    batch, n = x.shape[:-1], x.shape[-1]
    if n < 3:
        order = _argsort(x, -1, False)
        idx = order[..., k - 1]
    else:
        rows = x.reshape(-1, n)
        # (the k-th smallest and its neighbours: unless one is equal to it, torch's index is
        # the sort's)
        order = _argsort(rows, -1, False)[:, max(k - 2, 0):k + 1]
        idx = _jax.lax.cond(
            _ties(jnp.take_along_axis(rows, order, -1)),
            lambda r: _host_rows(r, lambda row: _quickselect_row(row, k - 1)),
            lambda r: order[:, k - 1 - max(k - 2, 0)], rows).reshape(batch)
    return jnp.expand_dims(idx, dim)


def _ties(s):
    """Whether some row of ``s`` (values in sorted order) holds two equal neighbours (or two
    NaNs): only then does torch's selection order among ties decide the indices."""
    eq = s[:, 1:] == s[:, :-1]
    if jnp.issubdtype(s.dtype, jnp.inexact):
        eq = eq | (jnp.isnan(s[:, 1:]) & jnp.isnan(s[:, :-1]))
    return jnp.any(eq)


@defop("kthvalue", grad_name=lambda kw: "MedianBackward1" if kw["median"] else "KthvalueBackward0")
def _kthvalue(a, k, dim, keepdim, median):
    if a.ndim == 0:
        return a, jnp.zeros((), _I64)
    if not median:
        return _gather(a, _kth_indices(a, k, dim), dim, keepdim)
    order = _argsort(a, dim, False)
    if median:
        k = (a.shape[dim] - 1) // 2 + 1
    idx = _jax.lax.slice_in_dim(order, k - 1, k, axis=dim)
    if median and jnp.issubdtype(a.dtype, jnp.inexact):
        # torch.median: a slice holding NaN gives its first NaN
        nan = jnp.isnan(a)
        first_nan = jnp.argmax(nan, axis=dim, keepdims=True).astype(_I64)
        idx = jnp.where(jnp.any(nan, axis=dim, keepdims=True), first_nan, idx)
    return _gather(a, idx, dim, keepdim)


@public(out=True)
def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest element along ``dim`` as (values, indices)."""
    d = _one_dim(dim, input.ndim)
    _nonempty_dim("kthvalue", input, d)
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if input.ndim:          # (torch answers a 0-dim input without its kernel: any dtype)
        _no_complex_kernel(input, "kthvalue_cpu")
        if input.dtype is D.bool:
            raise NotImplementedError("\"kthvalue_cpu\" not implemented for 'Bool'")
    return _RT["kthvalue"](*apply(_kthvalue, input, k=int(k), dim=d, keepdim=bool(keepdim),
                                  median=False))


_full_median_even = _even_split(lambda a: _median_value(a))


def _median_value(a):
    flat = a.reshape(-1)
    n = flat.shape[0]
    if n == 0:
        return jnp.asarray(jnp.nan, a.dtype)
    s = jnp.sort(flat)
    v = s[(n - 1) // 2]
    if jnp.issubdtype(a.dtype, jnp.inexact):
        v = jnp.where(jnp.any(jnp.isnan(flat)), jnp.asarray(jnp.nan, a.dtype), v)
    return v


def _median_checks(input, dim):
    """torch has no median kernel for complex or bool input."""
    kernel = "median_cpu" if dim is None else "median_out"
    _no_complex_kernel(input, kernel)
    if input.dtype is D.bool:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


def _empty_int_median(input):
    """torch's median of an empty integer tensor: its NaN converted to the dtype (int64's
    smallest value, 0 for uint8)."""
    from .._creation import tensor
    with _np.errstate(invalid="ignore"):
        return tensor(_np.array(_np.nan).astype(input.dtype.np), dtype=input.dtype)


@defop("median_full", saves="both", grad_name="MedianBackward0")
def _median_full(a):
    if not jnp.issubdtype(a.dtype, jnp.inexact):
        return _median_value(a)
    return _full_median_even(a)


@public(out=True)
def median(input, dim=None, keepdim=False):
    """median(input): the lower median (NaN if any); median(input, dim): (values, indices)."""
    _median_checks(input, dim)
    if dim is None:
        if input.numel() == 0 and input.dtype.category == D._INT:
            return _empty_int_median(input)
        return apply(_median_full, input)
    d = _one_dim(dim, input.ndim)
    _nonempty_dim("median", input, d)
    return _RT["median"](*apply(_kthvalue, input, k=1, dim=d, keepdim=bool(keepdim),
                                median=True))


@defop("mode", grad_name="ModeBackward0")
def _mode(a, dim, keepdim):
    if a.ndim == 0:
        return a, jnp.zeros((), _I64)
    x = jnp.moveaxis(a, dim, -1)
    batch, n = x.shape[:-1], x.shape[-1]
    flat = x.reshape(-1, n)
    s = jnp.sort(flat, axis=-1)
    lo = _jax.vmap(lambda r: jnp.searchsorted(r, r, side="left"))(s)
    hi = _jax.vmap(lambda r: jnp.searchsorted(r, r, side="right"))(s)
    cnt = hi - lo
    if jnp.issubdtype(a.dtype, jnp.inexact):
        # NaNs (sorted last) count as one value; searchsorted cannot find them
        nans = jnp.isnan(s)
        cnt = jnp.where(nans, jnp.sum(nans, axis=-1, keepdims=True), cnt)
    best = jnp.argmax(cnt, axis=-1)                         # first: the smallest most frequent
    val = jnp.take_along_axis(s, best[:, None], axis=-1)
    same = flat == val
    if jnp.issubdtype(a.dtype, jnp.inexact):
        same = same | (jnp.isnan(flat) & jnp.isnan(val))
    last = n - 1 - jnp.argmax(jnp.flip(same, axis=-1), axis=-1)  # torch: its last index
    idx = jnp.moveaxis(last.reshape(batch + (1,)).astype(_I64), -1, dim)
    return _gather(a, idx, dim, keepdim)


@public(out=True)
def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (smallest on ties) and its last index."""
    _no_complex_kernel(input, "mode_cpu")
    d = _one_dim(dim, input.ndim)
    _nonempty_dim("mode", input, d)
    return _RT["mode"](*apply(_mode, input, dim=d, keepdim=bool(keepdim)))


# ------------------------------------------------------------------ unique, bincount, histc

@defop("take_flat", grad_name="IndexBackward0")
def _take(a, idx, dim):
    if dim is None:
        return a.reshape(-1)[idx]
    return jnp.take(a, idx, axis=dim)


_UNIQUE_GRAD = {"_unique2": "Unique2Backward0", "unique_dim": "UniqueDimBackward0",
                "unique_consecutive": "UniqueConsecutiveBackward0"}
_UNIQUE_TAKES: dict = {}


@defop("unique_values", grad_name=lambda kw: _UNIQUE_GRAD[kw["kind"]])
def _unique_values(a, idx, dim, kind):
    """``_take`` whose backward raises torch's error: torch has no derivative for the unique
    family (its output requires grad; ``backward`` through it raises)."""
    f = _UNIQUE_TAKES.get((kind, dim))
    if f is None:
        f = _UNIQUE_TAKES[(kind, dim)] = no_grad_for(functools.partial(_take.fn, dim=dim),
                                                     which=(0,), name=kind)
    return f(a, idx, blocked=True)


def _unique_checks(input, dim, kernel):
    """torch's refusals of the unique family: complex input (no kernel), a dim of a 0-dim
    tensor, a dim beside other empty dims."""
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{D.legacy_name(input.dtype)}'")
    if dim is None:
        return
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    if input.numel() == 0 and input.shape[_wrap_dim(dim, input.ndim)] != 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements (always sorted, as torch on CPU), optionally with the inverse
    indices and counts; shapes depend on the data, so this runs eagerly."""
    _unique_checks(input, dim, "unique" if dim is None else "unique_dim")
    x = _np.asarray(input._data)
    if dim is None:
        _, first, inv, cnt = _np.unique(x.reshape(-1), return_index=True, return_inverse=True,
                                        return_counts=True, equal_nan=False)
        inv = inv.reshape(x.shape)
    else:
        d = _wrap_dim(dim, input.ndim)
        if x.shape[d] == 0:
            first = _np.zeros(0, _np.int64)
            inv = first
            cnt = first
        else:
            _, first, inv, cnt = _np.unique(x, return_index=True, return_inverse=True,
                                            return_counts=True, axis=d)
            inv = inv.reshape(-1)
    vals = apply(_unique_values, input, jnp.asarray(first, _I64), dim=None if dim is None else d,
                 kind="_unique2" if dim is None else "unique_dim")
    out = [vals]
    if return_inverse:
        out.append(Tensor._make(jnp.asarray(inv, _I64)))
    if return_counts:
        out.append(Tensor._make(jnp.asarray(cnt, _I64)))
    return out[0] if len(out) == 1 else tuple(out)


@defop("bincount", grad_name="BincountBackward0")
def _bincount(x, *w, length, dtype):
    if w:
        return jnp.bincount(x, weights=w[0].astype(dtype), length=length)
    return jnp.bincount(x, length=length).astype(_I64)


def bincount(input, weights=None, minlength=0):
    """Count of each non-negative integer in a 1-d tensor (weighted by ``weights``)."""
    if input.dtype.category != D._INT:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for "
                                  f"'{D.legacy_name(input.dtype)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    x = _np.asarray(input._data)
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != x.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    length = _bi.max(int(x.max()) + 1 if x.size else 0, int(minlength))
    if weights is None:
        return apply(_bincount, input, length=length, dtype=None)
    dt = weights.dtype if weights.dtype in (D.float32, D.float64) else D.float64
    return apply(_bincount, input, weights, length=length, dtype=dt.np)


@defop("histc", differentiable=False)
def _histc(x, bins, lo, hi):
    x = x.reshape(-1)
    lo_, hi_ = jnp.asarray(lo, x.dtype), jnp.asarray(hi, x.dtype)
    inside = (x >= lo_) & (x <= hi_)
    pos = ((x - lo_) * bins / (hi_ - lo_)).astype(_I64)
    pos = jnp.clip(jnp.where(x == hi_, bins - 1, pos), 0, bins - 1)
    return jnp.bincount(jnp.where(inside, pos, 0), weights=inside.astype(x.dtype), length=bins)


@public(out=True)
def histc(input, bins=100, min=0, max=0):
    """Histogram with ``bins`` equal bins over [min, max] (the data range if both are equal)."""
    if input.dtype in D.BAREBONES:
        # torch reaches another kernel first: the data's range, or the bin edges
        raise NotImplementedError(f"\"{'aminmax_cpu' if min == max else 'linspace_cpu'}\" not "
                                  f"implemented for '{D.legacy_name(input.dtype)}'")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for "
                                  f"'{D.legacy_name(input.dtype)}'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    nan_text = "nan"
    if lo == hi:
        x = _np.asarray(input._data)
        if x.size:
            lo, hi = float(x.min()), float(x.max())
            # (torch's vectorised aminmax prints a NaN it met among others as -nan)
            nan_text = "-nan" if x.size > 1 else "nan"
        if lo == hi:
            lo, hi = lo - 1, hi + 1
    if not (_math.isfinite(lo) and _math.isfinite(hi)):
        def g(v):
            return nan_text if v != v else "%g" % v
        raise RuntimeError(f"torch.histc: range of [{g(lo)}, {g(hi)}] is not finite")
    if not lo < hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    return apply(_histc, input, bins=int(bins), lo=lo, hi=hi)


methods(median=median, mode=mode, topk=topk, sort=sort, argsort=argsort, msort=msort, kthvalue=kthvalue, unique=unique,
        bincount=bincount, histc=histc)


# ------------------------------------------------------------------ quantile, logcumsumexp


_INTERP = ("linear", "lower", "higher", "midpoint", "nearest")


def _torch_lerp(a, b, w):
    # torch's lerp kernel: exact at both ends
    return jnp.where(jnp.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


@defop("quantile", grad_name="SqueezeBackward4")      # (torch's composite ends in squeeze)
def _quantile(a, q, dim, keepdim, interpolation, ignore_nan):
    q = jnp.asarray(q, a.dtype)
    x = a.reshape(-1) if dim is None else (a.reshape(1) if a.ndim == 0 else a)
    x = jnp.moveaxis(x, 0 if dim is None else dim, -1)
    order = jnp.argsort(_jax.lax.stop_gradient(x), axis=-1, stable=True)
    s = jnp.take_along_axis(x, order, axis=-1)                       # (..., n)
    n = s.shape[-1]
    isn = jnp.isnan(_jax.lax.stop_gradient(s))
    qb = q.reshape(q.shape + (1,) * s.ndim)                           # (Q.., 1.., 1)
    if ignore_nan:
        cnt = jnp.sum(~isn, axis=-1, keepdims=True).astype(a.dtype)
        ranks = qb * (cnt - 1)
        ranks = jnp.where(ranks < 0, 0, ranks)
    else:
        ranks = jnp.where(jnp.any(isn, axis=-1, keepdims=True), jnp.asarray(n - 1, a.dtype),
                          qb * (n - 1))
    ranks = ranks + jnp.zeros(s.shape[:-1] + (1,), a.dtype)            # (Q.., ..., 1)
    if interpolation == "lower":
        ranks = jnp.floor(ranks)
    elif interpolation == "higher":
        ranks = jnp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = jnp.round(ranks)
    below = ranks.astype(_I64)
    sb = jnp.broadcast_to(s, ranks.shape[:-1] + (n,))
    vals = jnp.take_along_axis(sb, below, axis=-1)
    if interpolation in ("linear", "midpoint"):
        w = jnp.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        above = jnp.ceil(ranks).astype(_I64)
        vals = _torch_lerp(vals, jnp.take_along_axis(sb, above, axis=-1), w)
    vals = vals[..., 0]                                               # (Q.., ...)
    if keepdim:
        nq = q.ndim
        if dim is None:
            vals = vals.reshape(q.shape + (1,) * a.ndim)
        elif a.ndim:
            vals = jnp.expand_dims(vals, nq + dim)
    return vals


def _quantile_call(input, q, dim, keepdim, interpolation, ignore_nan):
    """quantile's and nanquantile's checks, in torch's order and words (both say
    ``quantile()``), then the op."""
    if not isinstance(q, Tensor) and not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
    if interpolation not in _INTERP:
        raise RuntimeError(f"quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if isinstance(q, Tensor) and q.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.dtype is not input.dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        qa = _np.asarray(q._data)
        if qa.size and (qa.min() < 0 or qa.max() > 1):
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
        qarg = q
    else:
        qarg = float(q)
    d = None if dim is None else _one_dim(dim, input.ndim)
    return apply(_quantile, input, qarg, dim=d, keepdim=bool(keepdim),
                 interpolation=interpolation, ignore_nan=ignore_nan)


@public(out=True)
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles over all elements or ``dim`` (NaN if the slice holds a NaN)."""
    return _quantile_call(input, q, dim, keepdim, interpolation, False)


@public(out=True)
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """``quantile`` ignoring NaN (NaN only for an all-NaN slice)."""
    return _quantile_call(input, q, dim, keepdim, interpolation, True)


@defop("logcumsumexp", saves="both", grad_name="LogcumsumexpBackward0")
def _logcumsumexp(a, dim):
    if a.ndim == 0:
        return a
    if a.dtype in (jnp.float32, jnp.float16, jnp.bfloat16):
        # torch accumulates in acc_type (double for float, float for half types)
        acc = jnp.float64 if a.dtype == jnp.float32 else jnp.float32
        return _jax.lax.cumlogsumexp(a.astype(acc), axis=dim).astype(a.dtype)
    return _jax.lax.cumlogsumexp(a, axis=dim)


@public(out=True)
def logcumsumexp(input, dim):
    """log(cumsum(exp(input))) along ``dim``, computed stably."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{D.legacy_name(input.dtype)}'")
    return apply(_logcumsumexp, input, dim=_one_dim(dim, input.ndim))


methods(quantile=quantile, nanquantile=nanquantile, logcumsumexp=logcumsumexp)


# ------------------------------------------------------------------ nanmedian

_RT["nanmedian"] = _return_type("nanmedian")


def _nanmedian_value(a):
    flat = a.reshape(-1)
    if flat.shape[0] == 0:
        return jnp.asarray(jnp.nan, a.dtype)
    s = jnp.sort(flat)                                   # NaN last
    cnt = jnp.sum(~jnp.isnan(flat))
    return s[jnp.maximum((cnt - 1) // 2, 0)]


_full_nanmedian_even = _even_split(_nanmedian_value)


@defop("nanmedian_full", saves="both", grad_name="NanmedianBackward0")
def _nanmedian_full(a):
    if not jnp.issubdtype(a.dtype, jnp.inexact):
        return _median_value(a)
    return _full_nanmedian_even(a)


@defop("nanmedian_dim", grad_name="NanmedianBackward1")
def _nanmedian_dim(a, dim, keepdim):
    if a.ndim == 0:
        return a, jnp.zeros((), _I64)
    order = _argsort(a, dim, False)                      # stable, NaN last
    if jnp.issubdtype(a.dtype, jnp.inexact):
        cnt = jnp.sum(~jnp.isnan(a), axis=dim, keepdims=True)
    else:
        cnt = jnp.full(a.shape[:dim] + (1,) + a.shape[dim + 1:], a.shape[dim])
    pos = jnp.maximum((cnt - 1) // 2, 0)
    idx = jnp.take_along_axis(order, pos, axis=dim)
    # an all-NaN slice: the index libstdc++'s nth_element leaves first (torch's kernel)
    idx = jnp.where(cnt == 0, _allnan_nth_index(a.shape[dim]), idx)
    return _gather(a, idx, dim, keepdim)


def _allnan_nth_index(n):
    """libstdc++ ``nth_element(first, first, last)`` when no element is less than another
    (torch.nanmedian of an all-NaN slice): which original index ends up first."""
    q = list(range(n))
    f, last_ = 0, n
    while last_ - f > 3:
        mid = f + (last_ - f) // 2
        q[f], q[mid] = q[mid], q[f]                      # __move_median_to_first
        first, last = f + 1, last_
        while True:                                      # __unguarded_partition
            last -= 1
            if not first < last:
                break
            q[first], q[last] = q[last], q[first]
            first += 1
        last_ = first                                    # the cut is past nth == 0
    return q[0] if n else 0


@public(out=True)
def nanmedian(input, dim=None, keepdim=False):
    """``median`` ignoring NaN (NaN only for an all-NaN slice)."""
    _median_checks(input, dim)
    if dim is None:
        if input.numel() == 0 and input.dtype.category == D._INT:
            return _empty_int_median(input)
        return apply(_nanmedian_full, input)
    d = _one_dim(dim, input.ndim)
    _nonempty_dim("median", input, d)          # (torch's nanmedian words it as median's)
    return _RT["nanmedian"](*apply(_nanmedian_dim, input, dim=d, keepdim=bool(keepdim)))


methods(nanmedian=nanmedian)


# ------------------------------------------------------------------ unique_consecutive


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse runs of equal consecutive elements (rows along ``dim``); NaNs never compare
    equal. Output shapes depend on the data, so this runs eagerly."""
    _unique_checks(input, dim, "unique")
    x = _np.asarray(input._data)
    if dim is None:
        flat = x.reshape(-1)
        new = _np.ones(flat.shape[0], bool)
        new[1:] = flat[1:] != flat[:-1]
        d, shape = None, x.shape
    else:
        d = _wrap_dim(dim, input.ndim)
        rest = x.size // x.shape[d] if x.shape[d] else 0
        moved = _np.moveaxis(x, d, 0).reshape(x.shape[d], rest)
        new = _np.ones(moved.shape[0], bool)
        new[1:] = (moved[1:] != moved[:-1]).any(axis=1)
        shape = (moved.shape[0],)
    first = _np.flatnonzero(new)
    out = [apply(_unique_values, input, jnp.asarray(first, _I64), dim=d,
                 kind="unique_consecutive")]
    if return_inverse:
        out.append(Tensor._make(jnp.asarray((_np.cumsum(new) - 1).reshape(shape), _I64)))
    if return_counts:
        ends = _np.append(first[1:], new.shape[0])
        out.append(Tensor._make(jnp.asarray(ends - first, _I64)))
    return out[0] if len(out) == 1 else tuple(out)


methods(unique_consecutive=unique_consecutive)
