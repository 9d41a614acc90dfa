"""Indexing: ``__getitem__`` combinations and ``__setitem__`` (values and gradients) against
torch (tests/oracle.py), then bad input."""
import numpy as np
import pytest

from oracle import check_double_backward, Case, check, check_raises

R = np.random.default_rng(4)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def i64(*shape):
    return R.integers(-9, 9, shape).astype(np.int64)


def setter(key, via_mul=True):
    """A case body: ``y = a * 1; y[key] = value; return y`` (a non-leaf gets written)."""
    def fn(m, a, v=None, *ix):
        y = a * 1 if via_mul else a.clone()
        k = key(m, *ix) if callable(key) else key
        y[k] = v
        return y
    return fn


def setter_scalar(key, value):
    def fn(m, a, *ix):
        y = a * 2
        k = key(m, *ix) if callable(key) else key
        y[k] = value
        return y
    return fn


def tk(m, *xs):
    return tuple(xs)


MASK = np.array([[True, False, True, False], [False, False, True, True], [True] * 4])
ROWS = np.array([True, False, True])

GET = [
    Case("get_int_slice", lambda m, a: a[1, 1:3], (f32(3, 4),)),
    Case("get_neg_slice", lambda m, a: a[-2:, :-1], (f32(3, 4),)),
    Case("get_step_neg_start", lambda m, a: a[-3::2], (f32(5, 2),)),
    Case("get_slice_oob", lambda m, a: a[1:100], (f32(3, 2),)),
    Case("get_empty_slice", lambda m, a: a[2:1], (f32(3, 2),)),
    Case("get_none_ellipsis", lambda m, a: a[None, ..., None, 0], (f32(2, 3),)),
    Case("get_ellipsis_mid", lambda m, a: a[0, ..., 1], (f32(2, 3, 4),)),
    Case("get_list_slice", lambda m, a: a[[0, 2], 1:], (f32(3, 4),)),
    Case("get_slice_list", lambda m, a: a[:, [3, 0, 0]], (f32(3, 4),)),
    Case("get_two_lists", lambda m, a: a[[0, 2], [1, 3]], (f32(3, 4),)),
    Case("get_adv_separated", lambda m, a: a[[0, 1], :, [2, 0]], (f32(2, 3, 4),)),
    Case("get_adv_adjacent", lambda m, a: a[:, [0, 1], [2, 0]], (f32(2, 3, 4),)),
    Case("get_adv_bcast", lambda m, a, i, j: a[i, j], (f32(3, 4), np.array([[0], [2]]),
                                                        np.array([1, 3, 0]))),
    Case("get_tensor_2d_index", lambda m, a, i: a[i], (f32(4, 2), np.array([[0, 3], [1, 1]]))),
    Case("get_neg_tensor_index", lambda m, a, i: a[i], (f32(4, 2), np.array([-1, -4]))),
    Case("get_int_and_tensor", lambda m, a, i: a[1, i], (f32(3, 4), np.array([0, 2]))),
    Case("get_mask_2d", lambda m, a, k: a[k], (f32(3, 4), MASK)),
    Case("get_mask_rows_cols", lambda m, a, k: a[k, 1:], (f32(3, 4), ROWS)),
    Case("get_mask_after_slice", lambda m, a, k: a[:, k], (f32(2, 3), ROWS)),
    Case("get_mask_all_false", lambda m, a, k: a[k], (f32(3, 4), ROWS & False)),
    Case("get_mask_0dim_true", lambda m, a: a[m.tensor(True)], (f32(2),)),
    Case("get_py_bool", lambda m, a: a[True], (f32(2),)),
    Case("get_0dim_ellipsis", lambda m, a: a[...], (f32(),)),
    Case("get_0dim_none", lambda m, a: a[None], (f32(),)),
    Case("get_int_tensor_scalar", lambda m, a: a[m.tensor(1)], (f32(3, 2),)),
    Case("get_int_dtype", lambda m, a: a[[1, 0], ::2], (i64(2, 4),)),
    Case("get_empty_tensor_index", lambda m, a, i: a[i], (f32(3, 2), np.zeros(0, np.int64))),
    Case("get_dup_index_grad", lambda m, a: a[[0, 0, 1, 0]], (f32(3),)),
    Case("get_chain", lambda m, a: a[1:][0][::2], (f32(3, 4),)),
    Case("get_tuple_of_tensors", lambda m, a, i, j: a[(i, j)], (f32(3, 4), np.array([0, 1]),
                                                               np.array([2, 2]))),
]

SET = [
    Case("set_int_scalar", setter_scalar(0, 0.0), (f32(3),)),
    Case("set_row_scalar", setter_scalar(1, -1.0), (f32(3, 4),)),
    Case("set_neg_int", setter_scalar((-1, -2), 5.0), (f32(3, 4),)),
    Case("set_slice", setter(slice(1, 3)), (f32(4, 2), f32(2, 2))),
    Case("set_slice_bcast", setter(slice(None, None, 2)), (f32(5, 3), f32(3))),
    Case("set_slice_bcast_col", setter((slice(None), slice(1, 3))), (f32(3, 4), f32(3, 1))),
    Case("set_neg_slice", setter(slice(-2, None)), (f32(4, 3), f32(2, 3))),
    Case("set_step_slice", setter((slice(None), slice(None, None, 3))), (f32(2, 7), f32(2, 3))),
    Case("set_none", setter((None, 0)), (f32(2, 3), f32(1, 3))),
    Case("set_ellipsis", setter((Ellipsis, 1)), (f32(2, 3, 4), f32(2, 3))),
    Case("set_ellipsis_scalar", setter_scalar(Ellipsis, 2.5), (f32(2, 2),)),
    Case("set_value_leading_ones", setter(0), (f32(2, 3), f32(1, 1, 3))),
    Case("set_0dim_value", setter(slice(None)), (f32(4), f32())),
    Case("set_list", setter([0, 2]), (f32(3, 2), f32(2, 2))),
    Case("set_list_scalar", setter_scalar([2, 0], 9.0), (f32(3),)),
    Case("set_tensor_index", setter(lambda m, i: i), (f32(4, 3), f32(3), np.array([3, 1]))),
    Case("set_tensor_index_neg", setter(lambda m, i: i), (f32(4), f32(2), np.array([-1, 0]))),
    Case("set_two_tensors", setter(lambda m, i, j: (i, j)),
         (f32(3, 4), f32(2), np.array([0, 2]), np.array([3, 1]))),
    Case("set_adv_bcast", setter(lambda m, i, j: (i, j)),
         (f32(3, 4), f32(1), np.array([[0], [2]]), np.array([1, 3]))),
    Case("set_slice_and_tensor", setter(lambda m, i: (slice(1, None), i)),
         (f32(3, 4), f32(2, 2), np.array([0, 3]))),
    Case("set_adv_separated", setter(lambda m, i: (i, slice(None), i)),
         (f32(2, 3, 2), f32(2, 3), np.array([1, 0]))),
    Case("set_mask", setter(lambda m, k: k), (f32(3, 4), f32(8), MASK)),
    Case("set_mask_scalar", setter_scalar(lambda m, k: k, 0.0), (f32(3, 4), MASK)),
    Case("set_mask_bcast", setter(lambda m, k: k), (f32(3, 4), f32(4), ROWS)),
    Case("set_mask_rows_slice", setter(lambda m, k: (k, slice(0, 2))),
         (f32(3, 4), f32(2, 2), ROWS)),
    Case("set_mask_of_self", lambda m, a: _relu_like(m, a), (f32(3, 4),)),
    Case("set_mask_all_false", setter(lambda m, k: k), (f32(3, 4), f32(1), ROWS & False)),
    Case("set_int_tensor", setter_scalar(1, 7), (i64(3),)),
    Case("set_int_with_float_value", lambda m, a: _set_int_float(a), (i64(3),)),
    Case("set_float_with_int_value", setter(0), (f32(2, 2), i64(2))),
    Case("set_f64_value_into_f32", setter(0), (f32(2, 2), R.standard_normal(2))),
    Case("set_bool", setter_scalar(0, True), (np.array([False, True]),)),
    Case("set_empty_index", setter(lambda m, i: i), (f32(3), f32(1), np.zeros(0, np.int64))),
    Case("set_empty_tensor", setter(slice(None)), (f32(0, 3), f32(3))),
    Case("set_0dim_target", setter(Ellipsis), (f32(), f32())),
    Case("set_twice", lambda m, a, v: _twice(a, v), (f32(3, 3), f32(3))),
    Case("set_then_read", lambda m, a, v: _set_then_read(a, v), (f32(4), f32())),
    Case("set_into_zeros_leafless", lambda m, v: _into_zeros(m, v), (f32(2),)),
    Case("set_dup_index_grad_value", setter(lambda m, i: i), (f32(3), f32(3), np.array([1, 1, 0])),
         grad=False),
    Case("set_np_scalar", setter_scalar(0, np.float64(1.5)), (f32(2, 3),)),
    Case("set_bool_list", setter_scalar([True, False], 7.0), (f32(2, 3),)),
    Case("set_int32_index", setter(lambda m, i: i), (f32(3, 2), f32(2), np.array([1], np.int32))),
    Case("set_nested_lists", setter_scalar(([[0, 1]], [[2, 0]]), 7.0), (f32(2, 3),)),
    Case("set_0dim_tensor_index", setter(lambda m, i: i), (f32(3, 2), f32(2), np.array(1))),
    Case("set_tensor_slice_bounds", setter_scalar(lambda m: slice(m.tensor(0), m.tensor(1)), 7.0),
         (f32(2, 3),)),
    Case("set_float_tensor_into_int", setter(0), (i64(2, 3), f32(3))),
    Case("set_ellipsis_none", setter((Ellipsis, None)), (f32(2, 3), f32(2, 3, 1))),
    Case("set_py_false", setter_scalar(False, 5.0), (f32(2, 3),)),
    Case("get_false_then_slice", lambda m, a: a[False, 1:], (f32(2, 3),)),
    Case("get_none_false", lambda m, a: a[None, False], (f32(2, 3),)),
    Case("get_ellipsis_false", lambda m, a: a[..., False], (f32(2, 3),)),
    Case("get_0dim_false", lambda m, a: a[m.tensor(False)], (f32(2),)),
    Case("index_put", lambda m, a, v, i: m.index_put(a, (i,), v), (f32(4), f32(2),
                                                                   np.array([3, 0]))),
    Case("index_put_accumulate", lambda m, a, v, i: a.index_put((i,), v, accumulate=True),
         (f32(4), f32(3), np.array([3, 0, 3]))),
    Case("index_put_", lambda m, a, v, i, j: (a * 1).index_put_((i, j), v),
         (f32(2, 3), f32(2), np.array([1, 0]), np.array([2, 2]))),
]


def _relu_like(m, a):
    y = a * 1
    y[y < 0] = 0.0
    return y


def _set_int_float(a):
    y = a.clone()
    y[0] = 2.7
    return y


def _twice(a, v):
    y = a * 1
    y[0] = v
    y[:, 1] = v * 2
    return y


def _set_then_read(a, v):
    y = a.sin()
    y[2] = v
    return y * y


def _into_zeros(m, v):
    y = m.zeros(3, 2)
    y[1] = v
    return y


CASES = GET + SET


@pytest.mark.parametrize("case", CASES, ids=str)
def test_index_against_torch(case):
    check(case)


@pytest.mark.parametrize("case", [c for c in CASES if c.grad][::3], ids=str)
def test_index_autograd_grad(case):
    check(case, autograd_grad=True)


def test_setitem_gradient_example():
    import torch
    import torchlike
    for m in (torch, torchlike):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        v = m.tensor(5.0, requires_grad=True)
        y = x * 2
        y[0] = 0
        y[1] = v
        (y * m.tensor([1.0, 2.0, 3.0])).sum().backward()
        assert x.grad.tolist() == [0.0, 0.0, 6.0]
        assert v.grad.item() == 2.0
        assert y.grad_fn is not None


def test_setitem_version_and_requires_grad():
    import torchlike
    y = torchlike.zeros(3)
    v0 = y._version
    v = torchlike.tensor(1.0, requires_grad=True)
    y[0] = v
    assert y._version == v0 + 1 and y.requires_grad and not y.is_leaf


def _set(key, value=0.0):
    def fn(m, a):
        a[key] = value
    return fn


BAD = [
    ("set_leaf_requires_grad", lambda m, a: _set(0)(m, a.requires_grad_()), (f32(3),)),
    ("set_oob", _set(5), (f32(3),)),
    ("set_oob_neg", _set(-4), (f32(3),)),
    ("set_too_many", _set((0, 0)), (f32(3),)),
    ("set_shape_mismatch", lambda m, a, v: _set(slice(0, 2), v)(m, a), (f32(3), f32(3))),
    ("set_adv_shape_mismatch", lambda m, a, v: _set([0, 1], v)(m, a), (f32(3), f32(3))),
    ("set_tensor_oob", lambda m, a, i: _set(i)(m, a), (f32(3), np.array([0, 3]))),
    ("set_float_index", lambda m, a, i: _set(i)(m, a), (f32(3), np.array([0.0]))),
    ("set_mask_shape", lambda m, a, k: _set(k)(m, a), (f32(3), np.array([True, False]))),
    ("set_list_value", lambda m, a: _set(0, [1.0, 2.0, 3.0])(m, a), (f32(2, 3),)),
    ("set_ndarray_value", lambda m, a: _set(0, np.ones(3))(m, a), (f32(2, 3),)),
    ("get_oob", lambda m, a: a[3], (f32(3),)),
    ("get_too_many", lambda m, a: a[0, 0], (f32(3),)),
    ("get_tensor_oob", lambda m, a, i: a[i], (f32(3), np.array([4]))),
    ("get_float_index", lambda m, a, i: a[i], (f32(3), np.array([1.0]))),
    ("get_mask_shape", lambda m, a, k: a[k], (f32(3, 2), np.array([True, False]))),
    ("get_neg_step", lambda m, a: a[::-1], (f32(3),)),
    ("get_zero_step", lambda m, a: a[::0], (f32(3),)),
]


@pytest.mark.parametrize("name,fn,inputs", BAD, ids=[b[0] for b in BAD])
def test_index_bad_input(name, fn, inputs):
    check_raises(fn, *inputs)


def test_table_size():
    assert len(CASES) >= 70


_double_backward = check_double_backward  # tests/oracle.py


def _set_cubes(m, x):
    y = x * x
    y[1, 1:3] = x[0, :2] ** 3
    return y


DOUBLE = {
    "setitem": _set_cubes,
    "index_put": lambda m, x: (x * 1).index_put((m.tensor([0, 2]),), x[1] * x[1]),
    "gather": lambda m, x: (x * x).gather(1, m.tensor([[0, 0], [1, 2], [3, 3]])),
    "scatter": lambda m, x: m.zeros(3, 4, dtype=x.dtype).scatter(
        1, m.tensor([[0, 1, 2, 3], [2, 3, 0, 1], [1, 0, 3, 2]]), x * x),
    "cat_split": lambda m, x: m.cat((x * x).split([1, 3], 1), 1),
    "masked_fill": lambda m, x: (x * x).masked_fill(m.tensor([True, False, True, False]), 0.0),
    "scatter_reduce_amax": lambda m, x: (x * x).scatter_reduce(
        1, m.tensor([[0, 0], [1, 1], [2, 2]]), x[:, :2] * 3, "amax"),
    "getitem_adv": lambda m, x: (x ** 3)[[0, 2, 2], 1:],
}


@pytest.mark.parametrize("name", sorted(DOUBLE))
def test_double_backward_against_torch(name):
    _double_backward(DOUBLE[name])


def test_int_and_slice_positions_do_not_retrace():
    """x[i], x[i:i+b] and x[i] = v for many i compile once per structure (the positions are
    traced arguments), so loops over rows or batches stay fast."""
    import torchlike
    from torchlike import _registry as R
    x = torchlike.randn(37, 3)
    before = R.trace_counts("getitem")["fwd"]
    rows = [x[i] for i in range(37)]
    batches = [x[i:i + 5] for i in range(0, 30, 5)]
    assert R.trace_counts("getitem")["fwd"] - before <= 2
    np.testing.assert_array_equal(np.stack([np.asarray(r) for r in rows]),
                                  np.asarray(x))
    assert all(b.shape == (5, 3) for b in batches)
    y = torchlike.zeros(29, 2)
    before = R.trace_counts("index_put")["fwd"]
    for i in range(29):
        y[i] = float(i)
    assert R.trace_counts("index_put")["fwd"] - before <= 1
    assert y[:, 0].tolist() == [float(i) for i in range(29)]


def test_inplace_writes_into_leaf_under_no_grad():
    """Initialisation code: writes into a leaf that requires grad, under no_grad, keep it a
    leaf (torch's behaviour), and later gradients are plain."""
    import torch
    import torchlike
    out = []
    for m in (torch, torchlike):
        w = m.ones(3, 2, requires_grad=True)
        with m.no_grad():
            w[0] = 5.0
            w[:, 1] *= 2
            w.masked_fill_(w > 9, 0.0)
            w.index_fill_(0, m.tensor([2]), -1.0)
            w.scatter_(1, m.tensor([[0], [0], [1]]), 7.0)
        (w * w).sum().backward()
        assert w.is_leaf and w.requires_grad and w.grad_fn is None
        out.append((w.tolist(), w.grad.tolist()))
    assert out[0] == out[1]



def test_bad_input_messages_match_torch():
    """Beyond the exception class: torchlike's message is torch's, word for word."""
    mismatched = []
    for name, fn, inputs in BAD:
        lerr, terr = check_raises(fn, *inputs)
        if str(lerr) != str(terr):
            mismatched.append((name, str(lerr), str(terr)))
    assert not mismatched, mismatched


@pytest.mark.parametrize("shape,key", [
    ((10,), ([5, 10, 15],)), ((10,), ([15, 10],)), ((10,), ([-11, 20],)),
    ((10,), ([3, -12, 11],)), ((10,), ([[1, 12], [11, 0]],)),
    ((3, 4), ([0, 5], [9, 1])), ((3, 4), (slice(None), [1, 7, 9])),
    ((3, 4), ([[0], [4]], [5, 1])),
])
def test_out_of_range_index_names_the_first_bad_element_as_torch(shape, key):
    """torch names the first element (in the broadcast order of the index tensors) with an
    index out of range, and its first such index: not the largest or smallest."""
    import torch
    import torchlike
    msgs = []
    for m in (torch, torchlike):
        x = m.zeros(shape)
        k = tuple(m.tensor(i) if isinstance(i, list) else i for i in key)
        with pytest.raises(IndexError) as info:
            x[k]
        msgs.append(str(info.value))
        with pytest.raises(IndexError) as info:
            x[k] = 1.0
        msgs.append(str(info.value))
    assert msgs[:2] == msgs[2:]


def _outcomes(cases):
    import torch
    import torchlike
    res = []
    for m in (torch, torchlike):
        out = []
        for f in cases:
            try:
                out.append(f(m).tolist())
            except Exception as e:  # noqa: BLE001
                out.append(f"{type(e).__name__}: {e}")
        res.append(out)
    return res


def _put(dt, key, val):
    def f(m):
        x = m.zeros(3, dtype=getattr(m, dt))
        x[key(m) if callable(key) else key] = val(m)
        return x
    return f


def test_advanced_index_put_requires_the_destinations_dtype():
    """``x[tensor_index] = value`` and ``index_put(_)`` take a tensor source only of ``x``'s
    dtype (torch raises, even for a 0-d source); basic indexing and numbers convert."""
    cases = [
        _put("float32", lambda m: m.tensor([0, 2]),
             lambda m: m.tensor([1.5, 2.0], dtype=m.float64)),
        _put("int64", lambda m: m.tensor([0, 2]), lambda m: m.tensor([1.5, 2.0])),
        _put("float32", lambda m: m.tensor([True, False, True]),
             lambda m: m.tensor([1.5, 2.0], dtype=m.float64)),
        _put("float32", lambda m: m.tensor([0, 2]), lambda m: m.tensor(1.5, dtype=m.float64)),
        _put("float32", [0, 2], lambda m: m.tensor([1, 2])),
        _put("float32", slice(0, 2), lambda m: m.tensor([1.5, 2.0], dtype=m.float64)),
        _put("float32", 1, lambda m: m.tensor(1.5, dtype=m.float64)),
        _put("float32", lambda m: m.tensor([0, 2]), lambda m: 1.5),
        lambda m: m.index_put(m.zeros(3), (m.tensor([0, 2]),),
                              m.tensor([1.5, 2.0], dtype=m.float64), accumulate=True),
        lambda m: m.zeros(3, dtype=m.uint8).index_put_((m.tensor([0, 2]),),
                                                       m.tensor([1.5, 2.0], dtype=m.float64)),
    ]
    t, l = _outcomes(cases)
    assert l == t


def test_fill_values_are_converted_with_torchs_overflow_check():
    """masked_fill / index_fill convert their value (a number or a 0-d tensor's item) with
    torch's checked conversion: out of range raises; negative ints wrap for uint8."""
    M = lambda m: m.tensor([True, False, True])     # noqa: E731
    cases = [
        lambda m: m.zeros(3, dtype=m.uint8).masked_fill(M(m), m.tensor(-1.5)),
        lambda m: m.zeros(3, dtype=m.uint8).masked_fill(M(m), 2.5),
        lambda m: m.zeros(3, dtype=m.uint8).masked_fill(M(m), 300),
        lambda m: m.zeros(3, dtype=m.uint8).masked_fill(M(m), -1),
        lambda m: m.zeros(3).masked_fill(M(m), m.tensor(1e300, dtype=m.float64)),
        lambda m: m.zeros(3).masked_fill(M(m), float("-inf")),
        lambda m: m.zeros(3, dtype=m.float16).masked_fill(M(m), 1e6),
        lambda m: m.zeros(3, dtype=m.uint8).index_fill(0, m.tensor([0, 2]), m.tensor(-1.5)),
        lambda m: m.zeros(3, dtype=m.int8).index_fill(0, m.tensor([0, 2]), 200),
    ]
    t, l = _outcomes(cases)
    assert l == t


def _basic_keys():
    """Every index of Python ints and slices over up to two dims of a (4, 3) tensor, in range
    and out of it, with every kind of slice bound and step."""
    ints = [0, 2, -1, -4, 3, 4, -5]
    slices = [slice(None), slice(1, None), slice(None, -1), slice(-2, None), slice(1, 3),
              slice(0, 9), slice(3, 1), slice(None, None, 2), slice(1, None, 3),
              slice(-9, 2), slice(2, 2), slice(None, None, 0), slice(None, None, -1)]
    one = ints + slices
    keys = [(k,) for k in one] + [k for k in one]
    keys += [(a, b) for a in ints[:4] + slices[:6] for b in ints[:5] + slices[6:]]
    keys += [(0, 1, 2), (slice(None), 0, 0)]
    return keys


@pytest.mark.parametrize("key", _basic_keys(), ids=str)
def test_int_and_slice_keys_against_torch(key):
    """The reading of an index of Python ints and slices (its fast path) gives torch's values,
    shape and view, or torch's error, for each such key."""
    from oracle import both_outcomes
    a = f32(4, 3)

    def fn(m):
        x = m.tensor(a)
        y = x[key]
        if y.numel():
            y.add_(1)           # (a view: the write shows through in x)
        return x, y
    got = both_outcomes(fn)
    if got is not None:
        (lx, ly), (tx, ty) = got
        assert tuple(ly.shape) == tuple(ty.shape)
        np.testing.assert_array_equal(np.asarray(ly), ty.numpy())
        np.testing.assert_array_equal(np.asarray(lx), tx.numpy())


@pytest.mark.parametrize("bounds", [(1, 3), (-3, None), (None, 2), (0, 9), (2.0, 3), (1, 3.5),
                                    ("t", 2), (1, "t"), ("np", 3)], ids=str)
def test_slice_bounds_read_through_index_against_torch(bounds):
    """Slice bounds that are tensors or numpy integers are read by ``__index__`` (a loop's
    ``data[i:i + b]``), floats raise torch's TypeError."""
    from oracle import both_outcomes
    a = f32(5, 2)

    def fn(m):
        x = m.tensor(a)
        lo, hi = ((m.tensor(1) if b == "t" else np.int64(1) if b == "np" else b) for b in bounds)
        return x[lo:hi], x[0, lo:hi] if hi is None or not isinstance(hi, float) else None
    got = both_outcomes(fn)
    if got is not None:
        (l1, l2), (t1, t2) = got
        np.testing.assert_array_equal(np.asarray(l1), t1.numpy())
        if t2 is not None:
            np.testing.assert_array_equal(np.asarray(l2), t2.numpy())


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "bool"])
@pytest.mark.parametrize("value", [0, 2, -1, 5, -6])
def test_a_zero_dim_tensor_index_selects_as_torch(value, dtype):
    """``x[i]`` with ``i`` a 0-dim integer tensor selects as an int does (a view, the dim gone),
    with torch's bounds error; a 0-dim uint8 or bool tensor is a mask, as in torch."""
    from oracle import both_outcomes
    a = f32(5, 3)
    v = abs(value) if dtype == "uint8" else bool(value) if dtype == "bool" else value

    def fn(m):
        x = m.tensor(a)
        i = m.tensor(v, dtype=getattr(m, dtype))
        return x[i], x[1:, i], x[i, 1:]
    got = both_outcomes(fn)
    if got is not None:
        for o, t in zip(*got):
            assert tuple(o.shape) == tuple(t.shape)
            np.testing.assert_array_equal(np.asarray(o), t.numpy())
