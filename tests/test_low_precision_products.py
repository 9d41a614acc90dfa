"""The fused multiply-add products (addmm, F.linear, addmv, baddbmm, addbmm) in float16 and
bfloat16 against torch, bit for bit. torch's CPU kernels accumulate the product in float32 and
add ``beta * input`` in float32 before the one rounding to the low-precision dtype (addbmm
adds its batches one ``addmm_`` at a time, rounding after each); a product rounded before the
addition differs by an ulp in many elements (autocast's bfloat16 Linear layers meet it at every
step)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike

R = np.random.default_rng(0)
A = R.standard_normal((6, 8)).astype(np.float32)
B = R.standard_normal((8, 16)).astype(np.float32)
C = R.standard_normal(16).astype(np.float32)
B1 = R.standard_normal((3, 6, 8)).astype(np.float32)
B2 = R.standard_normal((3, 8, 16)).astype(np.float32)

CASES = {
    "addmm": lambda m, t: m.addmm(t(C), t(A), t(B)),
    "addmm_beta_alpha": lambda m, t: m.addmm(t(C), t(A), t(B), beta=0.5, alpha=2),
    "linear": lambda m, t: m.nn.functional.linear(t(A), t(B).t(), t(C)),
    "linear_3d": lambda m, t: m.nn.functional.linear(t(A).reshape(2, 3, 8), t(B).t(), t(C)),
    "Linear_under_autocast": None,
    "addmv": lambda m, t: m.addmv(t(C[:6]), t(A), t(B[:, 0])),
    "baddbmm": lambda m, t: m.baddbmm(t(C), t(B1), t(B2)),
    "addbmm": lambda m, t: m.addbmm(t(C), t(B1), t(B2)),
}


def _autocast_linear(m):
    lin = m.nn.Linear(8, 16)
    with m.no_grad():
        lin.weight.copy_(m.tensor(B.T.copy()))
        lin.bias.copy_(m.tensor(C))
    with m.autocast("cpu", dtype=m.bfloat16):
        return lin(m.tensor(A))


@pytest.mark.xfail(strict=True, reason="the product is rounded to the low-precision dtype "
                   "before the bias is added (torchlike/_ops/products.py _addmm; a fix belongs "
                   "to that file's owners)")
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(CASES))
def test_fused_add_products_round_once(name, dtype):
    out = {}
    for m in (torch, torchlike):
        if name == "Linear_under_autocast":
            if dtype == "float16":
                pytest.skip("autocast on the CPU casts to bfloat16 here")
            r = _autocast_linear(m)
        else:
            r = CASES[name](m, lambda a: m.tensor(a).to(getattr(m, dtype)))
        assert str(r.dtype).endswith(dtype)
        out[m.__name__] = np.asarray(r.detach().float().numpy())
    np.testing.assert_array_equal(out["torchlike"], out["torch"])
