"""Python ints outside int64 as operands of tensor ops: torch wraps or converts those in
[2**63, 2**64) and raises OverflowError beyond (jax raised its own OverflowError for all)."""
import numpy as np
import pytest
import torch

import torchlike

VALUES = [2 ** 63, 2 ** 64 - 1, 2 ** 64, 2 ** 70, -2 ** 63 - 1, -2 ** 63, 2 ** 63 - 1]
DTYPES = ["int8", "int64", "float32", "float64", "bool"]
OPS = {
    "add": lambda t, v: t + v, "radd": lambda t, v: v + t, "mul": lambda t, v: t * v,
    "sub": lambda t, v: t - v, "eq": lambda t, v: t == v, "lt": lambda t, v: t < v,
}


def _run(m, op, dtype, v):
    t = m.tensor([1, 0, 3]).to(getattr(m, dtype))
    try:
        r = OPS[op](t, v)
    except Exception as e:      # noqa: BLE001
        return type(e), str(e)
    return str(r.dtype), r.to(m.float64).numpy() if r.dtype != m.bool else r.numpy()


@pytest.mark.parametrize("v", VALUES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(OPS))
def test_big_python_int_operand_as_torch(op, dtype, v):
    want = _run(torch, op, dtype, v)
    got = _run(torchlike, op, dtype, v)
    if isinstance(want[0], type):
        assert got[0] is want[0] and got[1] == want[1], (got, want)
    else:
        assert got[0] == want[0], (got, want)
        np.testing.assert_array_equal(got[1], want[1])


BOOL_OPS = {
    "b-1": lambda m, b: b - 1, "1-b": lambda m, b: 1 - b, "b-True": lambda m, b: b - True,
    "b-b": lambda m, b: b - b, "i-b": lambda m, b: m.tensor([1, 2]) - b,
    "f-b": lambda m, b: m.tensor([1.0, 2.0]) - b, "i-True": lambda m, b: m.tensor([1, 2]) - True,
    "sub": lambda m, b: m.sub(b, 1), "subtract": lambda m, b: m.subtract(b, b),
    "rsub": lambda m, b: m.rsub(b, 1), "sub_": lambda m, b: b.clone().sub_(1),
    "isub": lambda m, b: _isub(m.tensor([1, 2]), b), "neg": lambda m, b: -b,
    "negative": lambda m, b: m.negative(b), "neg_": lambda m, b: b.clone().neg_(),
    "0d-1": lambda m, b: b[0] - 1, "i-i": lambda m, b: m.tensor([3, 4]) - m.tensor([1, 1]),
}


def _isub(a, b):
    a -= b
    return a


@pytest.mark.parametrize("op", sorted(BOOL_OPS))
def test_subtraction_and_negation_of_bools_as_torch(op):
    def run(m):
        try:
            return "ok", BOOL_OPS[op](m, m.tensor([True, False])).tolist()
        except Exception as e:      # noqa: BLE001
            return type(e), str(e)
    assert run(torchlike) == run(torch)
