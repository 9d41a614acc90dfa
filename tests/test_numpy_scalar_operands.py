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

# (op, numpy scalar, tensor dtype, torchlike's result, torch's): numpy scalars torchlike still
# reads in their own category where torch reads them as Python numbers of another kind
# (torch: np.float32 is a float, np.bool_ a float, np.int* a Python int for bool tensors)
CATEGORY_GAPS = {
    ('add', 'bool', 'bool', 'torch.bool', 'torch.float32'),
    ('add', 'bool', 'int32', 'torch.int32', 'torch.float32'),
    ('add', 'bool', 'int64', 'torch.int64', 'torch.float32'),
    ('add', 'bool', 'uint8', 'torch.uint8', 'torch.float32'),
    ('add', 'float16', 'bool', 'torch.bool', 'torch.float32'),
    ('add', 'float16', 'int32', 'torch.int32', 'torch.float32'),
    ('add', 'float16', 'int64', 'torch.int64', 'torch.float32'),
    ('add', 'float16', 'uint8', 'torch.uint8', 'torch.float32'),
    ('add', 'float32', 'bool', 'torch.bool', 'torch.float32'),
    ('add', 'float32', 'int32', 'torch.int32', 'torch.float32'),
    ('add', 'float32', 'int64', 'torch.int64', 'torch.float32'),
    ('add', 'float32', 'uint8', 'torch.uint8', 'torch.float32'),
    ('add', 'int32', 'bool', 'torch.bool', 'torch.int64'),
    ('add', 'int64', 'bool', 'torch.bool', 'torch.int64'),
    ('add', 'int8', 'bool', 'torch.bool', 'torch.int64'),
    ('add', 'uint8', 'bool', 'torch.bool', 'torch.int64'),
    ('mul', 'bool', 'bool', 'torch.bool', 'torch.float32'),
    ('mul', 'bool', 'int32', 'torch.int32', 'torch.float32'),
    ('mul', 'bool', 'int64', 'torch.int64', 'torch.float32'),
    ('mul', 'bool', 'uint8', 'torch.uint8', 'torch.float32'),
    ('mul', 'float16', 'bool', 'torch.bool', 'torch.float32'),
    ('mul', 'float16', 'int32', 'torch.int32', 'torch.float32'),
    ('mul', 'float16', 'int64', 'torch.int64', 'torch.float32'),
    ('mul', 'float16', 'uint8', 'torch.uint8', 'torch.float32'),
    ('mul', 'float32', 'bool', 'torch.bool', 'torch.float32'),
    ('mul', 'float32', 'int32', 'torch.int32', 'torch.float32'),
    ('mul', 'float32', 'int64', 'torch.int64', 'torch.float32'),
    ('mul', 'float32', 'uint8', 'torch.uint8', 'torch.float32'),
    ('mul', 'int32', 'bool', 'torch.bool', 'torch.int64'),
    ('mul', 'int64', 'bool', 'torch.bool', 'torch.int64'),
    ('mul', 'int8', 'bool', 'torch.bool', 'torch.int64'),
    ('mul', 'uint8', 'bool', 'torch.bool', 'torch.int64'),
    ('sub', 'bool', 'int32', 'torch.int32', 'torch.float32'),
    ('sub', 'bool', 'int64', 'torch.int64', 'torch.float32'),
    ('sub', 'bool', 'uint8', 'torch.uint8', 'torch.float32'),
    ('sub', 'float16', 'int32', 'torch.int32', 'torch.float32'),
    ('sub', 'float16', 'int64', 'torch.int64', 'torch.float32'),
    ('sub', 'float16', 'uint8', 'torch.uint8', 'torch.float32'),
    ('sub', 'float32', 'int32', 'torch.int32', 'torch.float32'),
    ('sub', 'float32', 'int64', 'torch.int64', 'torch.float32'),
    ('sub', 'float32', 'uint8', 'torch.uint8', 'torch.float32'),
}


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
    assert gaps == CATEGORY_GAPS


def test_float64_scalar_times_float32_tensor_is_float32():
    r = np.float64(2.0) * torchlike.ones(2)
    assert isinstance(r, torchlike.Tensor) and r.dtype is torchlike.float32
    assert (np.float64(2.0) * torch.ones(2)).dtype == torch.float32
