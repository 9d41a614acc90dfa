"""Loss functions check their inputs as torch does: binary_cross_entropy's range check catches
NaN (torch raises), and its other edge values (0, 1, inf, out of range) match torch."""
from __future__ import annotations

import math

import pytest
import torch

import torchlike

INPUTS = {"nan": [0.5, math.nan], "neg": [-0.1, 0.5], "above": [1.5, 0.5], "inf": [math.inf, 0.2],
          "edges": [0.0, 1.0], "inside": [0.3, 0.7], "empty": []}


def _result(m, x, reduction, dtype):
    t = m.tensor(x, dtype=dtype)
    y = m.ones(len(x), dtype=dtype)
    try:
        r = m.nn.functional.binary_cross_entropy(t, y, reduction=reduction)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return "ok", [round(v, 4) if not math.isnan(v) else "nan"
                  for v in r.float().reshape(-1).tolist()]


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("case", sorted(INPUTS))
def test_binary_cross_entropy_input_checks_as_torch(case, reduction, dtype):
    ours = _result(torchlike, INPUTS[case], reduction, getattr(torchlike, dtype))
    theirs = _result(torch, INPUTS[case], reduction, getattr(torch, dtype))
    assert ours == theirs
