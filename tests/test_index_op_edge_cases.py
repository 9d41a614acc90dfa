"""index_copy / index_fill / index_add / index_reduce (and index_select beside them) at their
edges, and uint8 masks in indexing, against torch: empty index tensors and sources, zero-size
dims, negative and out-of-range dims and indices (each op's own error class and words, in
torch's order), bool and complex inputs to index_reduce, the uint8 deprecation warning (where
torch gives it and where it does not) and the index errors around it."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch

import torchlike
from oracle import assert_close, both_outcomes, fresh_process_outputs, same_dtype

SHAPES = [(0,), (3,), (2, 3), (0, 3), (3, 0), (2, 0, 3), ()]
INDICES = [[], [0], [1, 0], [-1], [5]]


def _dims(shape):
    n = len(shape)
    return sorted({0, -1, 1, n - 1, n, -n - 1})


def _source_shape(shape, dim, count):
    n = len(shape)
    out = list(shape)
    if n and -n <= dim < n:
        out[dim % n] = count
    return tuple(out)


def _same(fn, atol=0.0):
    """fn(m): the same exception (class and message) or the same dtype, shape and values."""
    got = both_outcomes(fn)
    if got is None:
        return
    ours, theirs = got
    assert same_dtype(ours, theirs), f"dtype {ours.dtype} != torch {theirs.dtype}"
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert_close(ours, theirs, atol=atol, rtol=0)


def _cases():
    for shape in SHAPES:
        for dim in _dims(shape):
            for idx in INDICES:
                for idt in ("int64", "int32"):
                    yield pytest.param(shape, dim, idx, idt,
                                       id=f"{shape}-dim{dim}-idx{idx}-{idt}".replace(" ", ""))


def _inputs(m, shape, dim, idx, idt):
    x = m.arange(int(np.prod(shape)), dtype=m.float32).reshape(shape)
    src = m.ones(_source_shape(shape, dim, len(idx)), dtype=m.float32) * 10
    return x, m.tensor(idx, dtype=getattr(m, idt)), src


@pytest.mark.parametrize("shape, dim, idx, idt", list(_cases()))
def test_index_copy_fill_add_select_edges_match_torch(shape, dim, idx, idt):
    def run(op):
        def fn(m):
            x, i, s = _inputs(m, shape, dim, idx, idt)
            return op(m, x, i, s)
        _same(fn)
    run(lambda m, x, i, s: x.index_copy(dim, i, s))
    run(lambda m, x, i, s: x.index_copy_(dim, i, s))
    run(lambda m, x, i, s: m.index_copy(x, dim, i, s))
    run(lambda m, x, i, s: x.index_fill(dim, i, 7.0))
    run(lambda m, x, i, s: x.index_fill_(dim, i, m.tensor(7.0)))
    run(lambda m, x, i, s: x.index_add(dim, i, s))
    run(lambda m, x, i, s: x.index_add_(dim, i, s, alpha=2))
    run(lambda m, x, i, s: m.index_add(x, dim, i, s))
    run(lambda m, x, i, s: x.index_select(dim, i))


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_index_reduce_edges_match_torch(shape, reduce, include_self):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")         # (the once-a-process beta warning)
        for dim in _dims(shape):
            for idx in INDICES:
                for idt in ("int64", "int32"):
                    def fn(m):
                        x, i, s = _inputs(m, shape, dim, idx, idt)
                        return x.index_reduce(dim, i, s, reduce, include_self=include_self)
                    _same(fn)


# the words torch uses, pinned (the sweeps above compare whole messages with torch's)

def test_index_copy_and_fill_into_an_empty_dim_raise_torchs_storage_error():
    # the kernels view the input with the index's count along dim (stride 0): a storage of
    # size 0 cannot hold that view
    for m in (torch, torchlike):
        with pytest.raises(RuntimeError, match=re.escape(
                "setStorage: sizes [1, 3], strides [0, 1], storage offset 0, and itemsize 4 "
                "requiring a storage size of 12 are out of bounds for storage of size 0")):
            m.zeros(0, 3).index_copy(0, m.tensor([0]), m.ones(1, 3))
        with pytest.raises(RuntimeError, match=re.escape(
                "setStorage: sizes [2, 1, 3], strides [3, 0, 1], storage offset 0, and "
                "itemsize 8 requiring a storage size of 48")):
            m.zeros(2, 0, 3, dtype=m.float64).index_fill(1, m.tensor([5]), 1.0)


def test_index_copy_and_fill_of_an_empty_input_read_no_index():
    # another dim is empty: the kernels iterate over nothing, so an index out of range is
    # never read
    for fn in (lambda m: m.zeros(0, 3).index_copy(1, m.tensor([5]), m.ones(0, 1)),
               lambda m: m.zeros(0, 3).index_fill(-1, m.tensor([-7]), 1.0),
               lambda m: m.zeros(2, 0, 3).index_copy(2, m.tensor([9]), m.ones(2, 0, 1))):
        _same(fn)
        assert fn(torchlike).numel() == 0


def test_index_fill_checks_the_index_dtype_before_the_dim():
    for m in (torch, torchlike):
        with pytest.raises(IndexError, match=re.escape(
                "index_fill_(): Expected dtype int64 for index.")):
            m.zeros(3).index_fill(5, m.tensor([0], dtype=m.int32), 1.0)
        with pytest.raises(IndexError, match="Dimension out of range"):
            m.zeros(3).index_fill(5, m.zeros(2, 2, dtype=m.int64), 1.0)


def test_index_add_words_its_errors_by_kernel_path():
    # the first and last dims go through scatter_add_ only for an alpha of 1 and an int64
    # index (RuntimeError naming the index); otherwise the slice loop's IndexError
    x = lambda m: m.zeros(2, 3)
    src = lambda m: m.ones(2, 1)
    cases = [
        (lambda m: x(m).index_add(1, m.tensor([5]), src(m)), RuntimeError,
         "index 5 is out of bounds for dimension 1 with size 3"),
        (lambda m: x(m).index_add(-1, m.tensor([-1]), src(m)), RuntimeError,
         "index -1 is out of bounds for dimension 1 with size 3"),
        (lambda m: x(m).index_add(1, m.tensor([5]), src(m), alpha=2), IndexError,
         "index out of range in self"),
        (lambda m: x(m).index_add(1, m.tensor([5], dtype=m.int32), src(m)), IndexError,
         "index out of range in self"),
        (lambda m: x(m).index_add(1, m.tensor([5]), src(m), alpha=1.0), RuntimeError,
         "index 5 is out of bounds for dimension 1 with size 3"),
    ]
    for fn, cls, msg in cases:
        for m in (torch, torchlike):
            with pytest.raises(cls) as e:
                fn(m)
            assert str(e.value) == msg, (m.__name__, str(e.value))


def test_index_reduce_errors_in_kernel_order():
    cases = [
        # without the input's values the slices are first filled: index_fill_'s words
        (lambda m: m.zeros(3).index_reduce(0, m.tensor([5]), m.ones(1), "amax",
                                           include_self=False),
         IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
        (lambda m: m.zeros(3, 2).index_reduce(0, m.tensor([-5]), m.ones(1, 2), "prod",
                                              include_self=False),
         IndexError, "index -5 is out of bounds for dimension 0 with size 3"),
        # (index_fill_ takes -1; the reduction's own check does not)
        (lambda m: m.zeros(3, 2).index_reduce(0, m.tensor([-1]), m.ones(1, 2), "prod",
                                              include_self=False),
         IndexError, "index out of range in self"),
        # an empty dim: the kernel's select of slice 0 along it fails first
        (lambda m: m.zeros(0, 3).index_reduce(0, m.tensor([0]), m.ones(1, 3), "mean"),
         IndexError, "select(): index 0 out of range for tensor of size [0, 3] at dimension 0"),
        (lambda m: m.zeros(3).index_reduce(0, m.tensor([3]), m.ones(1), "amin"),
         IndexError, "index out of range in self"),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn, cls, msg in cases:
            for m in (torch, torchlike):
                with pytest.raises(cls) as e:
                    fn(m)
                assert str(e.value) == msg, (m.__name__, str(e.value))


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", ["bool", "complex64", "int64", "float16"])
def test_index_reduce_bool_and_complex_inputs_match_torch(dtype, reduce, include_self):
    # bool and complex reach only the multi-dim kernel with the input kept (prod works; bool
    # has no floor division for mean, complex no maximum/minimum), and only where an index
    # is in range first
    x = lambda m: m.tensor([[3, 0, 1, 5], [2, 2, 0, 1], [1, 4, 6, 0]]).to(getattr(m, dtype))
    s = lambda m: m.tensor([[1, 2, 0, 3], [4, 1, 1, 2]]).to(getattr(m, dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for idx in ([2, 2], [-1, 0], [0, 7], []):
            src = s if idx else (lambda m: s(m)[:0])
            _same(lambda m: x(m).index_reduce(0, m.tensor(idx, dtype=m.int64), src(m), reduce,
                                              include_self=include_self))
            _same(lambda m: x(m)[0].index_reduce(0, m.tensor([3, 3, 0]), x(m)[1, :3], reduce,
                                                 include_self=include_self))


def test_index_ops_empty_index_and_source_match_torch():
    empty = lambda m: m.tensor([], dtype=m.int64)
    cases = [
        lambda m: m.zeros(3, 2).index_copy(0, empty(m), m.zeros(0, 2)),
        lambda m: m.zeros(3, 2).index_copy(0, empty(m), m.zeros(0)),           # wrong rank
        lambda m: m.zeros(3, 2).index_add(1, empty(m), m.zeros(3, 0)),
        lambda m: m.zeros(3, 2).index_add(0, m.tensor([1]), m.zeros(0, 2)),     # count
        lambda m: m.zeros(3).index_add(0, empty(m), m.ones(0, dtype=m.float64)),  # dtype
        lambda m: m.zeros(3).index_add(0, m.tensor([], dtype=m.int8), m.ones(0)),
        lambda m: m.zeros(3).index_copy(0, m.tensor([]), m.ones(0)),           # float index
        lambda m: m.zeros(3).index_fill(0, m.zeros(0, 2, dtype=m.int64), 1.0),
        lambda m: m.zeros(3, dtype=m.uint8).index_fill(0, empty(m), 300),      # value checked
        lambda m: m.zeros(3, dtype=m.bool).index_add(0, empty(m), m.zeros(0, dtype=m.bool)),
        lambda m: m.zeros(3).index_copy(0, m.tensor([1, 2]), m.tensor(5.)),     # 0-d source
    ]
    for fn in cases:
        _same(fn)


# ------------------------------------------------------------------ uint8 masks

U8_WARNING = ("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
              "torch.bool instead.")


def _record(fn, m):
    """(outcome, the warnings' messages with torch's '(Triggered internally ...)' cut)."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(m)
            out = ("ok", tuple(r.shape), np.asarray(r.tolist()).tolist())
        except Exception as e:  # noqa: BLE001
            out = (type(e).__name__, str(e))
    return out, [str(x.message).split(" (Triggered internally")[0] for x in w
                 if issubclass(x.category, UserWarning)]


def _setitem(key, value):
    def fn(m):
        x = m.arange(12.).reshape(3, 4)
        k = key(m)
        x[k] = value(m) if callable(value) else value
        return x
    return fn


U8 = lambda m, v: m.tensor(v, dtype=m.uint8)
X = lambda m: m.arange(12.).reshape(3, 4)
MASK_CASES = {
    "rows": lambda m: X(m)[U8(m, [1, 0, 1])],
    "whole": lambda m: X(m)[U8(m, [[1, 0, 0, 1]] * 3)],
    "nonzero-values-are-true": lambda m: X(m)[U8(m, [2, 0, 255])],
    "columns": lambda m: X(m)[:, U8(m, [1, 0, 1, 1])],
    "with-int": lambda m: X(m)[U8(m, [1, 0, 1]), 1],
    "with-index-tensor": lambda m: X(m)[U8(m, [1, 0, 1]), m.tensor([0, 3])],
    "two-masks": lambda m: X(m)[U8(m, [1, 0, 1]), U8(m, [1, 0, 0, 1])],
    "empty-input": lambda m: m.zeros(0, 3)[U8(m, [])],
    "0-dim-true": lambda m: X(m)[m.tensor(1, dtype=m.uint8)],      # read as a bool: no warning
    "0-dim-false": lambda m: X(m)[m.tensor(0, dtype=m.uint8)],
    "0-dim-numpy": lambda m: X(m)[np.array(1, dtype=np.uint8)],
    "numpy-mask": lambda m: X(m)[np.array([1, 0, 1], dtype=np.uint8)],
    # errors: the warning comes first (torch reads the masks in order, warning for each uint8
    # one, and checks each one's shape as it reads it)
    "wrong-size": lambda m: X(m)[U8(m, [1, 0])],
    "wrong-size-2d": lambda m: X(m)[U8(m, [[1, 0]])],
    "wrong-size-columns": lambda m: X(m)[:, U8(m, [1, 0, 1])],
    "wrong-size-then-second-mask": lambda m: X(m)[U8(m, [1, 0]), U8(m, [1, 0, 0, 1])],
    "bool-wrong-then-uint8": lambda m: X(m)[m.tensor([True]), U8(m, [1, 0, 0, 1])],
    # the basic indices apply first: an int out of range beats a wrong mask, and the mask is
    # checked against the basic-indexed tensor's shape
    "int-error-before-mask-error": lambda m: X(m)[U8(m, [1, 0]), 7],
    "mask-against-selected-shape": lambda m: m.zeros(2, 3, 4)[U8(m, [1, 0]), 1],
    "mask-after-select": lambda m: m.zeros(2, 3, 4)[1, U8(m, [1, 0])],
    "mask-after-none": lambda m: m.zeros(2, 3, 4)[:, U8(m, [1, 0]), None],
    "float-index-before-mask": lambda m: X(m)[U8(m, [1, 0, 1]), m.tensor([0.5])],
    # the index tensors broadcast together (a mask as its nonzero() columns)
    "broadcast-mismatch": lambda m: X(m)[U8(m, [1, 0, 1]), m.tensor([0, 3, 1])],
    "bool-broadcast-mismatch": lambda m: X(m)[m.tensor([True, False, True]),
                                             m.tensor([0, 3, 1])],
    "int-broadcast-mismatch": lambda m: X(m)[m.tensor([0, 1]), m.tensor([0, 3, 1])],
    "broadcast-before-bounds": lambda m: X(m)[m.tensor([0, 9]), m.tensor([0, 3, 1])],
    "bounds-after-mask": lambda m: X(m)[U8(m, [1, 0, 1]), m.tensor([9, 0])],
    # assignment: a lone mask with a one-element value is torch's masked_fill_, which refuses
    # uint8 without the indexing warning; any other value is index_put_ (warning, works)
    "set-scalar": _setitem(lambda m: U8(m, [1, 0, 1]), -1.0),
    "set-one-element-tensor": _setitem(lambda m: U8(m, [1, 0, 1]), lambda m: m.tensor([3.])),
    "set-wrong-size-scalar": _setitem(lambda m: U8(m, [1, 0]), -1.0),
    "set-tensor": _setitem(lambda m: U8(m, [1, 0, 1]), lambda m: m.ones(2, 4)),
    "set-two-masks-scalar": _setitem(lambda m: (U8(m, [1, 0, 1]), U8(m, [1, 0, 0, 1])), -1.0),
    "set-slice-and-mask-scalar": _setitem(lambda m: (slice(None), U8(m, [1, 0, 0, 1])), -1.0),
    "set-0-dim": _setitem(lambda m: m.tensor(1, dtype=m.uint8), -1.0),
    "index-put-scalar": lambda m: X(m).index_put_((U8(m, [1, 0, 1]),), m.tensor(5.)),
    "index-put-accumulate": lambda m: X(m).index_put_((U8(m, [1, 0, 1]),), m.tensor(5.),
                                                      accumulate=True),
    "index-put-wrong-size": lambda m: X(m).index_put_((U8(m, [1, 0]),), m.tensor(5.)),
    "index-put-out-of-place": lambda m: m.index_put(X(m), (U8(m, [1, 0, 1]),),
                                                    m.ones(2, 4)),
    "masked-select": lambda m: X(m).masked_select(U8(m, [[1, 0, 0, 1]] * 3)),
    "masked-fill": lambda m: X(m).masked_fill(U8(m, [[1, 0, 0, 1]] * 3), 0.),
}


@pytest.mark.parametrize("name", list(MASK_CASES))
def test_uint8_mask_indexing_matches_torch_with_its_warnings(name):
    fn = MASK_CASES[name]
    ours, theirs = _record(fn, torchlike), _record(fn, torch)
    assert ours == theirs


def test_uint8_mask_warns_before_its_shape_error():
    for m in (torch, torchlike):
        out, warned = _record(lambda m: X(m)[U8(m, [1, 0])], m)
        assert out[0] == "IndexError" and "The shape of the mask [2]" in out[1]
        assert warned == [U8_WARNING]
        out, warned = _record(lambda m: X(m)[U8(m, [1, 0, 1])], m)
        assert out[0] == "ok" and warned == [U8_WARNING]
        out, warned = _record(_setitem(lambda m: U8(m, [1, 0, 1]), 0.0), m)
        assert out == ("RuntimeError", "masked_fill_ only supports boolean masks, but got mask "
                                       "with dtype unsigned char") and warned == []


def test_where_takes_a_uint8_condition_with_a_once_a_process_warning():
    code = (
        "import sys, warnings, importlib\n"
        "m = importlib.import_module(sys.argv[1])\n"
        "c = m.tensor([1, 0, 2], dtype=m.uint8)\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    a = m.where(c, m.ones(3), 0.)\n"
        "    b = m.where(c, 5, m.zeros(3, dtype=m.int64))\n"
        "print(a.tolist(), b.tolist(), b.dtype)\n"
        "print([str(x.message).split(' (Triggered')[0] for x in w])\n")
    out = fresh_process_outputs(code)
    assert out["torch"] == out["torchlike"]
    assert "where received a uint8 condition tensor" in out["torch"]
    assert out["torch"].count("where received") == 1


# (function, its arguments after the input, from a module)
_OUT_CASES = {
    "index_add": lambda m: (0, m.tensor([0, 2]), m.ones(2, 2) * 3),
    "index_copy": lambda m: (0, m.tensor([0, 2]), m.ones(2, 2) * 3),
    "index_reduce": lambda m: (0, m.tensor([0, 2]), m.ones(2, 2) * 3, "amax"),
    "scatter": lambda m: (0, m.tensor([[0, 1], [2, 0]]), m.ones(2, 2) * 3),
    "scatter_add": lambda m: (0, m.tensor([[0, 1], [2, 0]]), m.ones(2, 2) * 3),
    "scatter_reduce": lambda m: (0, m.tensor([[0, 1], [2, 0]]), m.ones(2, 2) * 3, "sum"),
}


@pytest.mark.filterwarnings("ignore:index_reduce")
@pytest.mark.parametrize("name", sorted(_OUT_CASES))
def test_index_and_scatter_ops_take_out_of_the_result_dtype(name):
    """torch.index_add/index_copy/index_reduce/scatter/scatter_add/scatter_reduce(...,
    out=): written and returned, torch's values; an out of another dtype raises torch's error
    (no cast)."""
    got = []
    for m in (torch, torchlike):
        o = m.empty(0)
        r = getattr(m, name)(m.zeros(3, 2), *_OUT_CASES[name](m), out=o)
        assert r is o
        got.append(o.tolist())
    assert got[0] == got[1]
    for dt in ("int64", "float64"):
        msgs = []
        for m in (torch, torchlike):
            with pytest.raises(RuntimeError) as e:
                getattr(m, name)(m.zeros(3, 2), *_OUT_CASES[name](m),
                                 out=m.empty(3, 2, dtype=getattr(m, dt)))
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]
