"""Tensor operations as held-out programs write them, swept against live torch.

Each table is a class of cases (forms, dtypes, shapes). torch runs first: where it raises,
torchlike must raise the same class with the same message; where it returns, torchlike must
return the same values, dtypes and shapes.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike

from oracle import fresh_process_outputs, same_as_torch


# ============================================================ 1. ints and tensors in one index

def _x3(m):
    return m.arange(24).reshape(2, 3, 4)


def _x4(m):
    return m.arange(120).reshape(2, 3, 4, 5)


MIXED_GET = {
    "int_slice_list": lambda m: _x3(m)[0, :, [1, 2]],
    "0d_slice_list": lambda m: _x3(m)[m.tensor(0), :, [1, 2]],
    "slice_int_slice_list": lambda m: _x4(m)[:, 0, :, [1, 2]],
    "none_int_slice_list": lambda m: _x4(m)[None, 0, :, [1, 0]],
    "int_ellipsis_list": lambda m: _x4(m)[0, ..., [1, 0]],
    "slice_0d_slice_tensor": lambda m: _x4(m)[:, m.tensor(1), :, m.tensor([1, 0])],
    "list_int_adjacent": lambda m: _x3(m)[[0, 1], 0, [1, 2]],
    "list_slice_int": lambda m: _x3(m)[[0, 1], :, 0],
    "neg_0d_list_0d": lambda m: _x3(m)[m.tensor(-1), [0, 2], m.tensor(1)],
    "int32_0d": lambda m: _x3(m)[m.tensor(1, dtype=m.int32), :, [0]],
    "0d_out_of_range": lambda m: _x3(m)[1, m.tensor(5)],
    "0d_out_of_range_neg": lambda m: _x3(m)[m.tensor(-3)],
}


@pytest.mark.parametrize("name", MIXED_GET)
def test_int_then_tensor_index(name):
    """torch selects with ints (and 0-dim integer tensors) first, then indexes with the tensors:
    x[0, :, [1, 2]] is (3, 2), not numpy's (2, 3)."""
    same_as_torch(MIXED_GET[name])


def _set(m, key, value):
    x = _x3(m)
    x[key(m)] = value(m)
    return x


MIXED_SET = {
    "row_value": (lambda m: (0, slice(None), [1, 2]), lambda m: m.tensor([[100, 200]])),
    "col_value": (lambda m: (0, slice(None), [1, 2]), lambda m: m.tensor([1, 2, 3]).view(3, 1)),
    "scalar": (lambda m: (1, slice(None), [3, 0]), lambda m: m.tensor(-1)),
    "0d_key": (lambda m: (m.tensor(1), slice(None), [1, 2]), lambda m: m.tensor([[7, 8]])),
    "bad_shape": (lambda m: (0, slice(None), [1, 2]), lambda m: m.tensor([[1, 2, 3]])),
}


@pytest.mark.parametrize("name", MIXED_SET)
def test_int_then_tensor_index_assignment(name):
    key, value = MIXED_SET[name]
    same_as_torch(lambda m: _set(m, key, value))


def test_int_then_tensor_index_accumulate_and_grad():
    def acc(m):
        x = _x3(m)
        x[0, :, [1, 2]] += 1
        return x
    same_as_torch(acc)

    def grad(m):
        x = m.arange(24.).reshape(2, 3, 4).requires_grad_()
        x[0, :, [1, 2]].backward(m.arange(6.).view(3, 2))
        return x.grad
    same_as_torch(grad)


def test_0d_integer_tensor_index_is_a_view():
    """x[t] with a 0-dim integer tensor is torch's select: a view that writes through
    (``x[i][j] = v`` with i from a tensor)."""
    def write(m):
        x = m.zeros(3, 4)
        i = m.tensor(2)
        x[i][1] = 5
        row = x[m.tensor(0)]
        row[3] = 9
        x[m.tensor(-1), 0] = 7
        return x
    same_as_torch(write)

    def grad_fn(m):
        x = m.arange(6.).reshape(2, 3).requires_grad_()
        return (type(x[m.tensor(1)].grad_fn).__name__,
                type(x[m.tensor(1), [0]].grad_fn).__name__)
    same_as_torch(grad_fn)


VALUE_SHAPE_ERRORS = {
    "list": lambda m: ([0, 1],),
    "list_slice": lambda m: ([0, 1], slice(1, None)),
    "slice_list": lambda m: (slice(None), [0, 1]),
    "mask": lambda m: (m.zeros(3, 4) > 0.5,),
}


@pytest.mark.parametrize("value_shape", [(1, 3), (1, 1, 3), (2, 1, 3)])
@pytest.mark.parametrize("name", VALUE_SHAPE_ERRORS)
def test_advanced_assignment_value_shape_error(name, value_shape):
    """torch's message names the value's shape with its leading 1s dropped."""
    def fn(m):
        x = m.zeros(3, 4)
        x[VALUE_SHAPE_ERRORS[name](m)] = m.ones(*value_shape)
        return x
    same_as_torch(fn)


# ============================================================ 2. add/sub alpha, complex ordering

ALPHA_FORMS = {
    "add": lambda m, a, b, al: m.add(a, b, alpha=al),
    "sub": lambda m, a, b, al: m.sub(a, b, alpha=al),
    "method_add": lambda m, a, b, al: a.add(b, alpha=al),
    "inplace_add": lambda m, a, b, al: a.clone().add_(b, alpha=al),
    "inplace_sub": lambda m, a, b, al: a.clone().sub_(b, alpha=al),
    "rsub": lambda m, a, b, al: m.rsub(a, b, alpha=al),
}
ALPHA_OPERANDS = {
    "int_int": lambda m: (m.tensor([1, 2]), m.tensor([5, 7])),
    "int_scalar": lambda m: (m.tensor([1, 2]), 3),
    "int_float": lambda m: (m.tensor([1, 2]), m.tensor([1.5, 2.0])),
    "int_0d_float": lambda m: (m.tensor([1, 2]), m.tensor(1.5)),
    "float_int": lambda m: (m.tensor([1.0, 2.0]), 1),
    "bool_bool": lambda m: (m.tensor([True, False]), m.tensor([True, True])),
    "complex": lambda m: (m.tensor([1.0, 2.0]), m.tensor([1j, 2])),
}


@pytest.mark.parametrize("alpha", [2, 1.0, 1.5, True, 1j, -1])
@pytest.mark.parametrize("operands", ALPHA_OPERANDS)
@pytest.mark.parametrize("form", ALPHA_FORMS)
def test_add_sub_alpha(form, operands, alpha):
    """torch checks alpha against the result dtype (a float alpha on integers raises, a bool
    alpha needs a bool result); rsub scales its input by alpha."""
    same_as_torch(lambda m: ALPHA_FORMS[form](m, *ALPHA_OPERANDS[operands](m), alpha),
                  atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("op", ["lt", "le", "gt", "ge", "eq", "ne"])
@pytest.mark.parametrize("operands", [
    lambda m: (m.tensor([1j, 2]), 0), lambda m: (m.tensor([1, 2]), 1j),
    lambda m: (m.tensor([1.0, 2.0]), m.tensor([1j, 1]))])
def test_ordering_comparisons_refuse_complex(op, operands):
    same_as_torch(lambda m: getattr(m, op)(*operands(m)))


@pytest.mark.parametrize("case", [
    lambda m: m.tensor([1], dtype=m.int8).add(m.tensor([1], dtype=m.int8), alpha=1000),
    lambda m: m.tensor([1], dtype=m.int8).add(1, alpha=1000),
    lambda m: m.tensor([1.], dtype=m.float16).add(m.tensor([1.], dtype=m.float16), alpha=1e5),
    lambda m: m.tensor([1], dtype=m.uint8).sub(m.tensor([1], dtype=m.uint8), alpha=255),
])
def test_alpha_overflowing_the_result_dtype(case):
    same_as_torch(case)


def test_alpha_gradients():
    def fn(m):
        x = m.tensor([1., 2.], requires_grad=True)
        y = m.tensor([3., 4.], requires_grad=True)
        (m.add(x, y, alpha=2.5) + m.rsub(x, 5., alpha=1.5) - m.sub(y, x, alpha=-2)).sum()\
            .backward()
        return x.grad, y.grad
    same_as_torch(fn, atol=1e-6)


# ============================================================ 3. warnings torch gives

def _warns(fn):
    """The warning messages (first line, torch's '(Triggered internally ...)' cut) of fn."""
    import warnings
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [str(x.message).split(" (Triggered internally")[0] for x in w]


DOF_CASES = {
    "var_one": lambda m: m.tensor([1.]).var(),
    "std_one": lambda m: m.tensor([1.]).std(),
    "var_mean_one": lambda m: m.var_mean(m.tensor([1.])),
    "std_mean_one": lambda m: m.std_mean(m.tensor([2.])),
    "var_correction_2": lambda m: m.ones(2, 3).var(0, correction=2),
    "var_correction_1_5": lambda m: m.ones(2, 3).var(0, correction=1.5),
    "var_empty": lambda m: m.ones(0).var(),
    "var_empty_out": lambda m: m.ones(3, 0).var(0),
    "var_empty_in": lambda m: m.ones(0, 3).var(1),
    "std_dim_keepdim": lambda m: m.ones(4, 1).std(1, keepdim=True),
    "complex": lambda m: m.ones(2, 3, dtype=m.complex64).var(0, correction=2),
    "fine": lambda m: m.ones(2, 3).std(0),
}


@pytest.mark.parametrize("name", DOF_CASES)
def test_var_std_degrees_of_freedom_warning(name):
    assert _warns(lambda: DOF_CASES[name](torchlike)) == _warns(lambda: DOF_CASES[name](torch))


def test_scatter_reduce_keyword_with_tensor_src_warns():
    def fn(m):
        x = m.zeros(3, 5)
        idx = m.tensor([[0, 1], [2, 3], [4, 0]])
        x.scatter_(1, idx, 2.0, reduce="add")          # a value: no warning
        return x.scatter(1, idx, m.arange(15.).reshape(3, 5), reduce="add")
    from torchlike._ops import factorizations
    factorizations._WARNED.discard("scatter_reduce_src")
    assert _warns(lambda: fn(torchlike)) == [
        "The reduce argument of torch.scatter with Tensor src is deprecated and will be removed "
        "in a future PyTorch release. Use torch.scatter_reduce instead for more reduction "
        "options."]
    same_as_torch(fn)


# ============================================================ 4. torch.tensor of lists

def _rs():
    return np.random.RandomState(0).randn(3)


TENSOR_DATA = {
    "np_float64_scalars": lambda m: [np.float64(1.5), np.float64(2.5)],
    "np_mean_std": lambda m: [_rs().mean(), _rs().std()],
    "np_float64_and_float": lambda m: [2.0, np.float64(1.5)],
    "np_float32_and_float": lambda m: [np.float32(1.5), 2.0],
    "np_int32": lambda m: [np.int32(1), np.int32(2)],
    "np_int32_and_int": lambda m: [np.int32(1), 2],
    "np_int64_and_float": lambda m: [np.int64(1), 2.5],
    "np_float16": lambda m: [np.float16(1)],
    "np_nested": lambda m: [[np.float64(1.)], [2.]],
    "np_bool": lambda m: [np.bool_(True), np.bool_(False)],
    "np_bool_and_int8": lambda m: [True, np.int8(3)],
    "np_uint8_and_negative": lambda m: [np.uint8(3), -1],
    "np_float32_and_float64": lambda m: [np.float32(1), np.float64(2)],
    "np_complex64": lambda m: [np.complex64(1j)],
    "np_arrays": lambda m: [np.array([1., 2]), np.array([3., 4])],
    "np_int32_arrays": lambda m: [np.array([1, 2], dtype=np.int32), np.array([3, 4], np.int32)],
    "tuple": lambda m: (np.float32(1), 2),
    "one_element_tensors": lambda m: [m.ones(1) * i for i in range(3)],
    "int_one_element_tensors": lambda m: [m.tensor([1]), m.tensor([3])],
    "nested_one_element": lambda m: [[m.tensor([1.])], [m.tensor([2.])]],
    "2d_one_element": lambda m: [m.tensor([[1.]])],
    "multi_element_float": lambda m: [m.tensor([1., 2]), m.tensor([3., 4])],
    "multi_element_int": lambda m: [m.tensor([1, 2]), m.tensor([3, 4])],
    "multi_element_bool": lambda m: [m.tensor([True, False])],
    "tensor_then_list": lambda m: [m.tensor([1., 2]), [3., 4]],
    "list_then_tensor": lambda m: [[1., 2.], m.tensor([3., 4])],
    "int8_tensor_and_float": lambda m: [m.tensor(1, dtype=m.int8), 2.5],
    "int_and_float64_tensor": lambda m: [1, m.tensor(2.5, dtype=m.float64)],
    "0d_tensors": lambda m: [m.tensor(1.5), m.tensor(2)],
    "requires_grad_element": lambda m: [m.tensor(1.5, requires_grad=True), 2.0],
}


@pytest.mark.parametrize("name", TENSOR_DATA)
def test_tensor_from_list_dtype_and_shape(name):
    """torch.tensor promotes the elements' own dtypes (numpy scalars and arrays keep theirs:
    [np.float64(x)] is float64) and reads a tensor element as its single value."""
    same_as_torch(lambda m: m.tensor(TENSOR_DATA[name](m)))


@pytest.mark.parametrize("name", ["np_float64_scalars", "np_int32_and_int", "np_arrays"])
def test_as_tensor_from_list_dtype(name):
    same_as_torch(lambda m: m.as_tensor(TENSOR_DATA[name](m)))


WARNING_CASES = {
    "tensor_of_tensor": lambda m: m.tensor(m.ones(2)),
    "tensor_of_tensor_dtype": lambda m: m.tensor(m.ones(2), dtype=m.int32),
    "new_tensor_of_tensor": lambda m: m.ones(2).new_tensor(m.ones(2)),
    "as_tensor_of_tensor": lambda m: m.as_tensor(m.ones(2)),
    "tensor_of_list": lambda m: m.tensor([1.0, 2.0]),
}


@pytest.mark.parametrize("name", WARNING_CASES)
def test_copy_construct_warning(name):
    assert _warns(lambda: WARNING_CASES[name](torchlike)) == \
        _warns(lambda: WARNING_CASES[name](torch))


# ============================================================ 5. reductions over empty dims

@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("shape,dim,keepdim", [((0,), 0, False), ((2, 0), 1, True),
                                               ((0, 3), 0, False), ((0, 3), 1, False)])
def test_logsumexp_over_an_empty_dim(dtype, shape, dim, keepdim):
    """(-inf, as torch; the half-precision path raised numpy's 'zero-size array' error)"""
    same_as_torch(lambda m: m.logsumexp(m.zeros(shape, dtype=getattr(m, dtype)), dim,
                                        keepdim=keepdim))


# ============================================================ 6. list keys and index dtypes

LIST_KEYS = {
    "list_of_lists": lambda m: [[0, 1], [2, 3]],
    "list_of_tensors": lambda m: [m.tensor([0, 1]), m.tensor([2, 3])],
    "list_with_slice": lambda m: [0, slice(1, 3)],
    "list_with_none": lambda m: [None, 0],
    "list_with_ellipsis": lambda m: [Ellipsis, 1],
    "list_with_ndarray": lambda m: [np.array([0, 1])],
    "plain_list": lambda m: [1, 2, 0],
    "bool_list": lambda m: [True, False, True],
    "long_list_of_lists": lambda m: [[0]] * 33,
}


@pytest.mark.parametrize("name", LIST_KEYS)
def test_list_key_read_as_a_tuple(name):
    """torch reads a list holding sequences, tensors, slices, None or Ellipsis as a tuple of
    indices (x[[rows, cols]] is x[rows, cols]), warning that this is deprecated."""
    def get(m):
        return m.arange(12).reshape(3, 4)[LIST_KEYS[name](m)]
    same_as_torch(get)
    assert _warns(lambda: get(torchlike)) == _warns(lambda: get(torch))

    def put(m):
        x = m.arange(12).reshape(3, 4)
        x[LIST_KEYS[name](m)] = -1
        return x
    same_as_torch(put)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8"])
def test_index_tensor_dtypes(dtype):
    """torch indexes with int64, int32 and (deprecated, as a mask) uint8 tensors only; a 0-dim
    integer tensor of any width selects."""
    def fn(m):
        x = m.arange(12).reshape(3, 4)
        return x[m.tensor([1, 0, 1], dtype=getattr(m, dtype))]
    same_as_torch(fn)
    same_as_torch(lambda m: m.arange(12).reshape(3, 4)[m.tensor(1, dtype=getattr(m, dtype))]
                  if dtype != "uint8" else m.zeros(1))
    if dtype in ("int32", "int64", "uint8"):
        assert _warns(lambda: fn(torchlike)) == _warns(lambda: fn(torch))


# ============================================================ 7. float-only binary kernels

_BIN_DTYPES = ["float32", "int64", "bool", "float16", "int32", "complex64"]


@pytest.mark.parametrize("op", ["hypot", "logaddexp", "logaddexp2", "nextafter"])
@pytest.mark.parametrize("da", _BIN_DTYPES)
@pytest.mark.parametrize("db", _BIN_DTYPES + ["0d_int", "0d_float"])
def test_float_only_binary_ops_check_the_promoted_dtype(op, da, db):
    """torch refuses integer operands only where both promote to an integer (or bool) dtype:
    hypot(float, int tensor) computes."""
    def fn(m):
        a = m.tensor([1.5, -2.0, 0.0]).to(getattr(m, da))
        b = (m.tensor(2) if db == "0d_int" else m.tensor(-1.5) if db == "0d_float"
             else m.tensor([3.0, 0.5, -1.0]).to(getattr(m, db)))
        return getattr(m, op)(a, b)
    same_as_torch(fn, atol=1e-3, rtol=1e-3)


@pytest.mark.parametrize("da", ["float16", "float32", "float64", "bfloat16", "int64", "bool"])
@pytest.mark.parametrize("db", ["int64", "int32", "int8", "uint8", "bool", "float32",
                                "float16", "float64"])
def test_ldexp_dtypes(da, db):
    """A floating input with an integer exponent keeps the input's dtype (torch's kernel; a
    bool exponent is refused); otherwise torch's composite input * 2.0 ** other."""
    same_as_torch(lambda m: m.ldexp(m.tensor([1.5, 2.0]).to(getattr(m, da)),
                                    m.tensor([3, -1]).to(getattr(m, db))))


# ============================================================ 8. documented tie orders

@pytest.mark.parametrize("n", [8, 16, 17, 30, 200])
def test_mode_index_beyond_16_elements(n):
    """(DIFFERENCES.md) the value is torch's; the index is the mode's last occurrence, which is
    torch's for at most 16 elements only."""
    a = np.random.RandomState(1).randint(0, 3, (4, n))
    tv, ti = torch.tensor(a).mode(1)
    lv, li = torchlike.tensor(a).mode(1)
    assert lv.tolist() == tv.tolist()
    last = [int(np.nonzero(row == v)[0][-1]) for row, v in zip(a, tv.tolist())]
    assert li.tolist() == last
    if n <= 16:
        assert li.tolist() == ti.tolist()


# ============================================================ 9. einsum forms

EINSUM_CASES = {
    "sublist": lambda m: m.einsum(m.ones(2, 3), [0, 1], m.ones(3), [1], [0]),
    "sublist_implicit": lambda m: m.einsum(m.arange(6.).reshape(2, 3), [0, 1],
                                           m.arange(3.), [1]),
    "sublist_ellipsis": lambda m: m.einsum(m.arange(6.).reshape(2, 3), [Ellipsis, 0], [0]),
    "sublist_big_labels": lambda m: m.einsum(m.ones(2, 2), [30, 51], [51]),
    "sublist_out_of_range": lambda m: m.einsum(m.ones(2), [60]),
    "list_of_operands": lambda m: m.einsum("i", [m.ones(2)]),
    "too_many_operands": lambda m: m.einsum("i->i", m.ones(2), m.ones(2)),
    "too_few_operands": lambda m: m.einsum("i,i->", m.ones(2)),
    "no_operands": lambda m: m.einsum(m.ones(2)),
    "spaces": lambda m: m.einsum("b i d, b j d -> b i j", m.ones(2, 3, 4), m.ones(2, 5, 4)),
}


@pytest.mark.parametrize("name", EINSUM_CASES)
def test_einsum_forms(name):
    same_as_torch(EINSUM_CASES[name])


# ============================================================ 10. unary/special dtype corners

_SPECIAL_HALF = ["i0e", "i1", "i1e", "ndtr", "ndtri", "log_ndtr", "erfcx", "bessel_j0",
                 "bessel_y1", "modified_bessel_k0", "spherical_bessel_j0", "airy_ai"]


@pytest.mark.parametrize("name", _SPECIAL_HALF)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_special_functions_on_half_precision(name, dtype):
    """torch computes i1/i1e in float32 and rounds once, ndtr as its composite of rounded
    steps, and has no half kernel for ndtri, log_ndtr, erfcx and the Bessel family."""
    if name == "i0e":
        pytest.skip("i0e: torch evaluates its Chebyshev series in the low precision")

    def fn(m):
        return getattr(m.special, name)(m.tensor([0.5, 1.0, 2.0, 3.5, -1.2, 0.0])
                                        .to(getattr(m, dtype)))
    same_as_torch(fn)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_sinc_at_integers_in_half_precision(dtype):
    same_as_torch(lambda m: m.sinc(m.tensor([0.5, 1.0, 2.0, 3.5, -3.0, 0.0])
                                   .to(getattr(m, dtype))))


@pytest.mark.parametrize("name", ["abs", "floor", "ceil", "trunc", "round", "fix", "absolute",
                                  "square", "sign", "neg", "positive"])
@pytest.mark.parametrize("inplace", [False, True])
def test_unary_ops_on_bool(name, inplace):
    """torch has no abs/floor/ceil/trunc/round kernel for bool; square promotes to int64."""
    def fn(m):
        x = m.tensor([True, False])
        return getattr(x.clone(), name + "_")() if inplace else getattr(m, name)(x)
    if inplace and name == "positive":
        pytest.skip("no positive_")
    same_as_torch(fn)


# ============================================================ 11. index dtypes of the index ops

INDEX_OPS = {
    "take_along_dim": lambda m, x, i: m.take_along_dim(x, i.view(2, 1), 1),
    "take_along_dim_flat": lambda m, x, i: m.take_along_dim(x, i),
    "index_select": lambda m, x, i: x.index_select(1, i),
    "index_add": lambda m, x, i: x.index_add(1, i, m.ones(2, 2)),
    "index_fill": lambda m, x, i: x.index_fill(1, i, 0.),
    "index_copy": lambda m, x, i: x.index_copy(1, i, m.ones(2, 2)),
    "gather": lambda m, x, i: m.gather(x, 1, i.view(2, 1)),
    "scatter": lambda m, x, i: x.scatter(1, i.view(2, 1), 0.),
    "scatter_add": lambda m, x, i: x.scatter_add(1, i.view(2, 1), m.ones(2, 1)),
    "scatter_reduce": lambda m, x, i: x.scatter_reduce(1, i.view(2, 1), m.ones(2, 1), "amax"),
    "take": lambda m, x, i: m.take(x, i),
    "put": lambda m, x, i: x.put(i, m.ones(2)),
}


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool",
                                   "float32"])
@pytest.mark.parametrize("op", INDEX_OPS)
def test_index_ops_index_dtypes(op, dtype):
    """Which index dtypes each op takes (int32 and int64, or int64 only) and torch's error
    for the others (an int8 index computed here before)."""
    def fn(m):
        return INDEX_OPS[op](m, m.arange(6.).reshape(2, 3),
                             m.tensor([0, 1]).to(getattr(m, dtype)))
    same_as_torch(fn)


# ============================================================ 12. numpy arrays torch cannot read

NDARRAYS = {
    "str": lambda: np.array(["a"]),
    "object": lambda: np.array([1], dtype=object),
    "datetime": lambda: np.zeros(2, dtype="datetime64[s]"),
    "longdouble": lambda: np.zeros(2, dtype=np.longdouble),
    "structured": lambda: np.zeros(2, dtype=[("a", "f4")]),
    "negative_stride": lambda: np.zeros((2, 2))[::-1],
    "negative_stride_cols": lambda: np.arange(6.).reshape(2, 3)[:, ::-1],
    "positive_step": lambda: np.arange(6.)[::2],
    "uint32": lambda: np.arange(3, dtype=np.uint32),
}


@pytest.mark.parametrize("make", ["from_numpy", "tensor", "as_tensor"])
@pytest.mark.parametrize("name", NDARRAYS)
def test_numpy_arrays_torch_refuses(name, make):
    same_as_torch(lambda m: getattr(m, make)(NDARRAYS[name]()))


# ============================================================ 13. bool operands of integer kernels

BOOL_OPS = {
    "floordiv": lambda m, a, b: a // b, "mod": lambda m, a, b: a % b,
    "fmod": lambda m, a, b: m.fmod(a, b), "remainder": lambda m, a, b: m.remainder(a, b),
    "pow": lambda m, a, b: a ** b, "rpow": lambda m, a, b: b ** a,
    "lshift": lambda m, a, b: a << b, "rshift": lambda m, a, b: a >> b,
    "div_trunc": lambda m, a, b: m.div(a, b, rounding_mode="trunc"),
    "div_floor": lambda m, a, b: m.div(a, b, rounding_mode="floor"),
    "rfloordiv": lambda m, a, b: b // a, "rmod": lambda m, a, b: b % a,
    "floor_divide_": lambda m, a, b: a.clone().floor_divide_(b),
    "pow_": lambda m, a, b: a.clone().pow_(b),
    "gcd": lambda m, a, b: m.gcd(a, b if isinstance(b, m.Tensor) else m.tensor(b)),
    "truediv": lambda m, a, b: a / b, "mul": lambda m, a, b: a * b,
}
BOOL_OTHERS = {
    "bool_tensor": lambda m: m.tensor([True, True, False]), "true": lambda m: True,
    "false": lambda m: False, "int": lambda m: 1, "float": lambda m: 2.5,
    "int_tensor": lambda m: m.tensor([1, 2, 3]),
}


@pytest.mark.parametrize("other", BOOL_OTHERS)
@pytest.mark.parametrize("op", BOOL_OPS)
def test_bool_operands_of_integer_kernels(op, other):
    """Where both operands promote to bool torch has no //, %, fmod, pow, shift or gcd kernel
    (a bool tensor to a bool scalar power is itself, or ones); a non-bool operand promotes."""
    same_as_torch(lambda m: BOOL_OPS[op](m, m.tensor([True, False, True]), BOOL_OTHERS[other](m)))


# ============================================================ 14. complex input to real-only ops

COMPLEX_OPS = {
    "maximum": lambda m, c, f: m.maximum(c, f), "minimum": lambda m, c, f: m.minimum(f, c),
    "fmax": lambda m, c, f: m.fmax(c, c), "fmin": lambda m, c, f: m.fmin(f, c),
    "atan2": lambda m, c, f: m.atan2(f, c), "xlogy": lambda m, c, f: m.xlogy(c, f),
    "xlogy_scalar": lambda m, c, f: m.xlogy(f, 1j),
    "clamp": lambda m, c, f: c.clamp(0, 1), "clamp_min": lambda m, c, f: c.clamp(min=0),
    "max": lambda m, c, f: c.max(), "max_dim": lambda m, c, f: c.max(0),
    "min": lambda m, c, f: c.min(), "min_keepdim": lambda m, c, f: c.min(0, keepdim=True),
    "amax": lambda m, c, f: c.amax(0), "amin": lambda m, c, f: c.amin(),
    "aminmax": lambda m, c, f: c.aminmax(), "argmax": lambda m, c, f: c.argmax(),
    "argmin": lambda m, c, f: c.argmin(0), "sort": lambda m, c, f: c.sort(),
    "argsort": lambda m, c, f: c.argsort(), "msort": lambda m, c, f: c.msort(),
    "topk": lambda m, c, f: c.topk(1), "cummax": lambda m, c, f: c.cummax(0),
    "cummin": lambda m, c, f: c.cummin(0), "median": lambda m, c, f: c.median(),
    "nanmedian": lambda m, c, f: c.nanmedian(), "kthvalue": lambda m, c, f: c.kthvalue(1),
    "mode": lambda m, c, f: c.mode(), "floor": lambda m, c, f: c.floor(),
    "ceil_": lambda m, c, f: c.clone().ceil_(), "trunc": lambda m, c, f: c.trunc(),
    "frac": lambda m, c, f: c.frac(), "round": lambda m, c, f: c.round(),
    "round_decimals": lambda m, c, f: c.round(decimals=2), "erf": lambda m, c, f: m.erf(c),
    "fmod": lambda m, c, f: m.fmod(c, 2), "remainder": lambda m, c, f: c % 2,
    "floordiv": lambda m, c, f: c // 2, "div_trunc": lambda m, c, f: c.div(f, rounding_mode="trunc"),
    "float_mod_complex_scalar": lambda m, c, f: f % 1j,
    "lt": lambda m, c, f: c < 1, "abs": lambda m, c, f: c.abs(), "exp": lambda m, c, f: c.exp(),
}


@pytest.mark.parametrize("op", COMPLEX_OPS)
def test_complex_input_to_real_only_ops(op):
    """torch refuses complex input to ordering and rounding ops (here they computed with jax's
    lexicographic order or raised jax's TypeError)."""
    same_as_torch(lambda m: COMPLEX_OPS[op](m, m.tensor([1 + 1j, 2]), m.tensor([1., 3.])),
                  atol=1e-6, rtol=1e-6)


def test_cross_without_dim_warns():
    def fn(m):
        a = m.ones(3, 3)
        return m.cross(a, a)
    from torchlike._ops import factorizations
    factorizations._WARNED.discard("cross_dim")
    # (torch warns once per process: its text, as torch 2.13 gives it)
    assert _warns(lambda: fn(torchlike)) == [
        "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass "
        "the dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will "
        "change to agree with that of linalg.cross in a future release."]
    assert _warns(lambda: fn(torchlike)) == []
    same_as_torch(fn)


# ============================================================ 15. median corners, 0-dim norms

MEDIAN_CASES = {
    "bool_full": lambda m: m.tensor([True]).median(),
    "bool_dim": lambda m: m.tensor([True]).median(0),
    "bool_nan_full": lambda m: m.tensor([True]).nanmedian(),
    "bool_nan_dim": lambda m: m.tensor([True]).nanmedian(0),
    "empty_int64": lambda m: m.zeros(0, dtype=m.long).median(),
    "empty_int32_nan": lambda m: m.zeros(0, dtype=m.int32).nanmedian(),
    "empty_uint8": lambda m: m.zeros(0, dtype=m.uint8).median(),
    "empty_float": lambda m: m.zeros(0).median(),
    "norm_0d_dim": lambda m: m.tensor(2.).norm(dim=0),
    "norm_0d_p1_dim": lambda m: m.tensor(-2.).norm(p=1, dim=-1, keepdim=True),
}


@pytest.mark.parametrize("name", MEDIAN_CASES)
def test_median_and_norm_corners(name):
    same_as_torch(MEDIAN_CASES[name])


# ============================================================ 16. assignment reading its own target

def _x5(m):
    return m.arange(5.)


def _y23(m):
    return m.arange(6.).view(2, 3)


OVERLAP_CASES = {
    "shift_right": (_x5, lambda m, x: slice(1, None), lambda m, x: x[:-1]),
    "self_to_self": (_x5, lambda m, x: slice(None), lambda m, x: x),
    "disjoint": (_x5, lambda m, x: slice(0, 2), lambda m, x: x[3:]),
    "list_from_slice": (_x5, lambda m, x: [1, 2], lambda m, x: x[:2]),
    "mask_from_slice": (_x5, lambda m, x: x > 2, lambda m, x: x[:2]),
    "int_from_0d": (_x5, lambda m, x: 0, lambda m, x: x[1]),
    "slice_from_broadcast": (_x5, lambda m, x: slice(0, 2), lambda m, x: x[1]),
    "list_from_0d": (_x5, lambda m, x: [1, 2], lambda m, x: x[0]),
    "list_from_whole": (_x5, lambda m, x: [0, 1, 2, 3, 4], lambda m, x: x),
    "list_from_gather": (_x5, lambda m, x: [0, 1], lambda m, x: x[[3, 4]]),
    "row_from_row": (_y23, lambda m, x: 0, lambda m, x: x[1]),
    "strided_columns": (_y23, lambda m, x: (slice(None), slice(0, 2)), lambda m, x: x[:, 1:]),
    "int_list_from_other_row": (_y23, lambda m, x: (0, [0, 1]), lambda m, x: x[1, 1:]),
    "mask_from_row": (_y23, lambda m, x: x > 3, lambda m, x: x[0, :2]),
}


@pytest.mark.parametrize("name", OVERLAP_CASES)
def test_assignment_reading_its_own_target(name):
    """torch raises where the value reads memory the assignment writes: a basic-index copy_
    with a partial overlap (x[1:] = x[:-1]), an index_put_ with any overlap (x[[1, 2]] =
    x[:2]); here the write went through with the old values."""
    make, key, value = OVERLAP_CASES[name]

    def fn(m):
        x = make(m)
        x[key(m, x)] = value(m, x)
        return x
    same_as_torch(fn)


# ============================================================ 17. reductions into out= of another dtype

@pytest.mark.parametrize("op", ["sum", "prod"])
@pytest.mark.parametrize("src", ["float32", "float16", "int64", "bool", "uint8"])
@pytest.mark.parametrize("out", ["int64", "int32", "int8", "bool", "float64", "float16"])
def test_sum_prod_compute_in_the_out_dtype(op, src, out):
    """torch's sum/prod with out= and no dtype compute in out's dtype (the input cast first:
    sum([1.5, 1.5], out=long) is 2); here a float sum into an integer out raised."""
    def fn(m):
        x = m.tensor([[1.5, 2.0, 0.0], [3.0, 1.5, 1.0]]).to(getattr(m, src))
        return getattr(m, op)(x, 1, out=m.empty(0, dtype=getattr(m, out)))
    same_as_torch(fn, atol=1e-3, rtol=1e-3)


# ============================================================ operators, softmax over nothing

@pytest.mark.parametrize("fn", [
    lambda m: m.ones(2).repeat(),
    lambda m: m.ones(2).repeat(repeats=(2,)),
    lambda m: +m.tensor([True]),
    lambda m: +m.tensor([1.0, -2.0]),
    lambda m: m.softmax(m.zeros(0), 0),
    lambda m: m.log_softmax(m.zeros(2, 0), 1),
    lambda m: m.nn.functional.softmax(m.zeros(0, 3), 0),
    lambda m: m.softmax(m.tensor([-float("inf"), -float("inf")]), 0),
], ids=["repeat without sizes", "repeat by keyword", "plus of bool", "plus", "softmax of empty",
        "log_softmax over an empty dim", "F.softmax over an empty dim", "softmax of -inf"])
def test_operator_and_softmax_corners(fn):
    same_as_torch(fn)


_MESHGRID_WARNS = """
import sys, warnings, importlib
m = importlib.import_module(sys.argv[1])
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    m.meshgrid(m.ones(2), m.ones(3), indexing="xy")
    m.meshgrid(m.ones(2), m.ones(3))
    m.meshgrid(m.ones(2))
print([str(r.message).split(" (Triggered")[0] for r in w])
"""


def test_meshgrid_without_indexing_warns_once_a_process():
    out = fresh_process_outputs(_MESHGRID_WARNS)
    assert "indexing argument" in out["torch"]
    assert out["torchlike"] == out["torch"]


# ============================================================ options torch's CPU kernels refuse

@pytest.mark.parametrize("fn", [
    lambda m: m.linalg.lu(m.tensor([[2.0, 1.0], [1.0, 3.0]]), pivot=False),
    lambda m: m.linalg.lu_factor(m.tensor([[2.0, 1.0], [1.0, 3.0]]), pivot=False),
    lambda m: m.linalg.svd(m.tensor([[2.0, 1.0], [1.0, 3.0]]), driver="gesvd"),
    lambda m: m.linalg.svdvals(m.tensor([[2.0, 1.0], [1.0, 3.0]]), driver="gesvda"),
    lambda m: m.linalg.svdvals(m.tensor([[2.0, 1.0], [1.0, 3.0]]), driver=None),
], ids=["lu without pivoting", "lu_factor without pivoting", "svd driver", "svdvals driver",
        "svdvals driver None"])
def test_cuda_only_linalg_options_raise_as_on_torchs_cpu(fn):
    same_as_torch(fn, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("view", [
    lambda a: a.T, lambda a: a.transpose(0, 2, 1), lambda a: np.asfortranarray(a),
    lambda a: a.transpose(1, 0, 2)[::-1][::-1]],
    ids=["transpose", "permuted", "fortran", "reversed twice"])
def test_from_numpy_keeps_a_dense_arrays_strides(view):
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

    def run(m):
        t = m.from_numpy(view(a))
        return t.stride(), t.is_contiguous(), t.tolist(), t.reshape(-1)[:5].tolist()
    assert run(torchlike) == run(torch)


def test_from_numpy_of_an_array_with_gaps_is_contiguous():
    """DIFFERENCES.md: the copy of an array with gaps between its elements (a strided slice)
    is compact, where torch's tensor reads the array's memory with its strides."""
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)[:, :, 1]
    t = torchlike.from_numpy(a)
    assert t.stride() == (3, 1) and torch.from_numpy(a).stride() == (12, 4)
    assert t.tolist() == a.tolist()


@pytest.mark.parametrize("probs,n,replacement", [
    ([0.1, -0.2, 0.5], 2, True), ([0.1, float("nan"), 0.5], 2, True),
    ([0.1, float("inf"), 0.5], 2, True), ([0.1, -0.2, 0.5], 1, True),
    ([0.1, -0.2, 0.5], 2, False), ([0.0, 0.0, 0.0], 2, True), ([0.0, 0.0, 0.0], 1, True),
    ([[0.1, -0.2], [0.3, 0.4]], 2, True), ([0.1, float("inf"), 0.5], 1, True)])
def test_multinomial_errors_as_torch(probs, n, replacement):
    same_as_torch(lambda m: m.multinomial(m.tensor(probs, dtype=m.float64), n, replacement))


# ============================================================ conversions: to(), type(), map_()

TO_FORMS = {
    "dtype": lambda m: m.ones(2).to(m.float64),
    "python_type": lambda m: m.ones(2).to(int),
    "device_dtype": lambda m: m.ones(2).to("cpu", m.float16),
    "device_dtype_flags": lambda m: m.ones(2).to("cpu", m.float64, False, True),
    "dtype_keywords": lambda m: m.ones(2).to(dtype=m.float64, device="cpu", copy=True),
    "other_tensor": lambda m: m.ones(2).to(m.zeros(1, dtype=m.int8)),
    "tensor_keyword": lambda m: m.ones(2).to(tensor=m.zeros(1, dtype=m.int8)),
    "memory_format": lambda m: m.ones(1, 2, 3, 4).to(memory_format=m.channels_last).stride(),
    "same_is_self": lambda m: (lambda t: t.to(m.float32) is t)(m.ones(2)),
    "copy_is_new": lambda m: (lambda t: t.to(m.float32, copy=True) is t)(m.ones(2)),
    # torch's TypeError for what none of its overloads takes (torchlike ignored them)
    "legacy_type_class": lambda m: m.ones(2).to(m.DoubleTensor),
    "list": lambda m: m.ones(2).to([1]),
    "numpy_type": lambda m: m.ones(2).to(__import__("numpy").float64),
    "numpy_dtype": lambda m: m.ones(2).to(__import__("numpy").dtype("float64")),
    "dtype_name": lambda m: m.ones(2).to("float64"),
    "unknown_keyword": lambda m: m.ones(2).to(foo=1),
    "int_flag": lambda m: m.ones(2).to("cpu", m.float64, 1),
    "dtype_then_device": lambda m: m.ones(2).to(m.float64, "cpu"),
    "other_keyword": lambda m: m.ones(2).to(other=m.zeros(1)),
    "too_many": lambda m: m.ones(2).to(m.float64, True, True, True),
    # type(): a legacy tensor type, its name, a dtype; others refused as torch
    "type_legacy_class": lambda m: m.ones(2).type(m.DoubleTensor),
    "type_legacy_long": lambda m: m.ones(2).type(m.LongTensor),
    "type_name": lambda m: m.ones(2).type("torch.IntTensor"),
    "type_dtype": lambda m: m.ones(2).type(m.float16),
    "type_numpy_type": lambda m: m.ones(2).type(__import__("numpy").float64),
    "type_python_type": lambda m: m.ones(2).type(float),
    "type_int": lambda m: m.ones(2).type(3),
    "type_no_argument": lambda m: m.ones(2, dtype=m.int16).type(),
    # map_: callable(self element, other element), other broadcast, in place
    "map_": lambda m: (lambda t: (t.map_(m.tensor([3., 4.]), lambda x, y: x * 10 + y), t))(
        m.tensor([[1., 2.], [5., 6.]])),
    "map_other_dtype": lambda m: m.tensor([1., 2.]).map_(m.tensor([1, 2]), lambda x, y: x),
    "map_bad_shape": lambda m: m.tensor([1., 2.]).map_(m.tensor([1., 2., 3.]), lambda x, y: x),
    "map_requires_grad": lambda m: m.tensor([1., 2.], requires_grad=True).map_(
        m.tensor([1., 2.]), lambda x, y: x),
}


@pytest.mark.parametrize("name", TO_FORMS)
def test_conversion_arguments_as_torch(name):
    same_as_torch(TO_FORMS[name])


MASKED_NOTHING = {
    "nan_0d": lambda m: (lambda x: (x.__setitem__(m.tensor(False), float("nan")), x)[1])(
        m.tensor(0.0)),
    "inf_0d": lambda m: (lambda x: (x.__setitem__(m.tensor(3.0) <= 1, float("inf")), x)[1])(
        m.tensor(0.0)),
    "nan_tensor_value": lambda m: (lambda x: (x.__setitem__(m.tensor(False), m.tensor(
        float("nan"))), x)[1])(m.tensor(1.0)),
    "inf_into_2d": lambda m: (lambda x: (x.__setitem__(m.tensor(False), float("inf")), x)[1])(
        m.zeros(2, 2)),
    "true_mask": lambda m: (lambda x: (x.__setitem__(m.tensor(True), float("nan")), x)[1])(
        m.tensor(0.0)),
}


@pytest.mark.parametrize("name", MASKED_NOTHING)
def test_a_false_0dim_mask_writes_nothing(name):
    """``x[cond] = nan`` with a 0-dim False condition leaves x as it is (a nan or inf value
    leaked into every element)."""
    same_as_torch(MASKED_NOTHING[name])


SIZE_ARITHMETIC = {
    "tuple_plus_size": lambda m: (2,) + m.Size([3]),
    "size_plus_tuple": lambda m: m.Size([3]) + (2,),
    "size_plus_list": lambda m: m.Size([3]) + [2],
    "size_times_int": lambda m: m.Size([3]) * 2,
    "int_times_size": lambda m: 2 * m.Size([3]),
}


@pytest.mark.parametrize("name", SIZE_ARITHMETIC)
def test_size_arithmetic_gives_sizes(name):
    def run(m):
        r = SIZE_ARITHMETIC[name](m)
        return type(r).__name__, tuple(r)
    same_as_torch(run)
