"""NumPy scalars as operands of tensors: on either side the tensor's operator runs (numpy does
not turn the tensor into an array), and a scalar does not promote within its category
(np.float64 scalar * float32 tensor is float32), compared with torch."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike

SCALARS = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int8, np.uint8, np.bool_]
DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "uint8", "bool"]
OPS = {"mul": lambda a, b: a * b, "add": lambda a, b: a + b, "sub": lambda a, b: a - b}


def _dtype(m, scalar, dtype, op, left):
    t = m.ones(2, dtype=getattr(m, dtype))
    s = scalar(1)
    try:
        r = OPS[op](s, t) if left else OPS[op](t, s)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__
    return str(r.dtype) if isinstance(r, (torch.Tensor, torchlike.Tensor)) else type(r).__name__


def test_numpy_scalar_operands_as_torch():
    gaps = set()
    for op in sorted(OPS):
        for scalar in SCALARS:
            for dtype in DTYPES:
                ours_l = _dtype(torchlike, scalar, dtype, op, True)
                ours_r = _dtype(torchlike, scalar, dtype, op, False)
                assert ours_l == ours_r, (op, scalar, dtype, ours_l, ours_r)   # both ways
                theirs = _dtype(torch, scalar, dtype, op, False)
                if ours_r != theirs:
                    gaps.add((op, np.dtype(scalar).name, dtype, ours_r, theirs))
    assert not gaps     # (numpy scalars promote as the Python numbers torch reads them as)


def test_float64_scalar_times_float32_tensor_is_float32():
    r = np.float64(2.0) * torchlike.ones(2)
    assert isinstance(r, torchlike.Tensor) and r.dtype is torchlike.float32
    assert (np.float64(2.0) * torch.ones(2)).dtype == torch.float32


# ------------------------------------------------------------------ numpy arrays as operands
# torch's operators leave a numpy array to numpy: numpy computes on the tensor's values (a
# tensor that requires grad refuses, as its numpy() does) and gives a tensor back with numpy's
# dtype (float32 * float64 array is float64); comparisons other than == and != and an array on
# the left raise Python's TypeError; torch.add and the like refuse the array

ARRAY_OPERANDS = {
    "mul_float64": lambda m: m.ones(2) * np.array([2.0, 3.0]),
    "mul_float32": lambda m: m.ones(2) * np.array([2.0, 3.0], np.float32),
    "mul_int": lambda m: m.ones(2) * np.array([2, 3]),
    "add_0dim": lambda m: m.ones(2) + np.array(2.0),
    "div": lambda m: m.ones(2) / np.array([2.0, 4.0]),
    "matmul": lambda m: m.ones(2, 2) @ np.ones(2),
    "requires_grad": lambda m: m.ones(2, requires_grad=True) * np.array([2.0, 3.0]),
    "array_on_the_left": lambda m: np.array([2.0, 3.0]) * m.ones(2),
    "less_than": lambda m: m.ones(2) < np.array([2.0, 0.0]),
    "equal": lambda m: m.ones(2) == np.array([1.0, 0.0]),
    "torch_add": lambda m: m.add(m.ones(2), np.array([2.0, 3.0])),
    "in_place_add": lambda m: (lambda t: (t.__iadd__(np.array([1.0, 2.0])), t))(m.ones(2)),
    "augmented_add": lambda m: (lambda t: [t := t + np.array([1.0, 2.0]), t][1])(m.ones(2)),
    # numpy's ufuncs on a tensor give a tensor back (bool as uint8), as torch's __array_wrap__
    "np_exp": lambda m: np.exp(m.tensor([1.0, 2.0])),
    "np_add": lambda m: np.add(m.tensor([1.0, 2.0]), 1),
    "np_maximum": lambda m: np.maximum(m.tensor([1.0, 3.0]), 2),
    "np_isnan": lambda m: np.isnan(m.tensor([1.0, float("nan")])),
}


@pytest.mark.parametrize("name", ARRAY_OPERANDS)
def test_numpy_array_operands_as_torch(name):
    import warnings
    from oracle import same_as_torch
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # (numpy's, about torch's wrap)
        same_as_torch(ARRAY_OPERANDS[name])


NUMPY_SCALAR_CALLS = {
    "int8_floordiv_first": lambda m: np.int64(3) // m.tensor([2, 5], dtype=m.int8),
    "float32_times_int": lambda m: np.float32(0.5) * m.tensor([1, 3]),
    "bool_and_bool_tensor": lambda m: m.tensor([True, False]) & np.True_,
    "add_function": lambda m: m.add(m.tensor([1, 2], dtype=m.int8), np.float32(0.5)),
    "where_scalar": lambda m: m.where(m.tensor([True, False]), m.tensor([1, 2]), np.float32(0.5)),
    "clamp_bound": lambda m: m.tensor([1, 2], dtype=m.int8).clamp(max=np.float32(1.5)),
    "pow_reflected": lambda m: np.float32(2) ** m.tensor([1, 2]),
    "fill_keeps_dtype": lambda m: m.tensor([1, 2], dtype=m.int8).fill_(np.float32(1.7)),
}


@pytest.mark.parametrize("name", NUMPY_SCALAR_CALLS)
def test_numpy_scalars_are_read_as_python_numbers(name):
    from oracle import same_as_torch
    same_as_torch(NUMPY_SCALAR_CALLS[name])


@pytest.mark.parametrize("value", ["datetime64", "void", "str_", "bytes_"])
def test_a_numpy_scalar_that_is_no_number_raises_a_type_error(value):
    """``t + np.datetime64(...)`` or ``torch.add(t, np.str_("a"))``: a TypeError as torch's
    (numpy's UFuncTypeError is one), not a recursion without end; the function form names the
    type as torch's parser does."""
    import numpy as np
    v = {"datetime64": lambda: np.datetime64("2020-01-01"), "void": lambda: np.void(b"a"),
         "str_": lambda: np.str_("a"), "bytes_": lambda: np.bytes_(b"a")}[value]()
    for m in (torch, torchlike):
        with pytest.raises(TypeError):
            m.ones(1) + v
        with pytest.raises(TypeError, match=f"must be Tensor, not numpy.{type(v).__name__}"):
            m.add(m.ones(1), v)
