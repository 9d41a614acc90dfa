"""CPU autocast through stacked layers: the second Linear gets the first one's bfloat16 output
and its float32 weight, and casts both as torch does (linear is one autocast op)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike


def _net(m, bias, depth):
    torch.manual_seed(0)
    ref = torch.nn.Sequential(*[torch.nn.Linear(4, 4, bias=bias) for _ in range(depth)])
    if m is torch:
        return ref
    net = m.nn.Sequential(*[m.nn.Linear(4, 4, bias=bias) for _ in range(depth)])
    net.load_state_dict({k: m.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()})
    return net


FORMS = {
    "context": lambda m, f: _ctx(m, f),
    "nested": lambda m, f: _nested(m, f),
    "decorator": lambda m, f: m.autocast("cpu", dtype=m.bfloat16)(f)(),
}


def _ctx(m, f):
    with m.autocast("cpu", dtype=m.bfloat16):
        return f()


def _nested(m, f):
    with m.autocast("cpu", dtype=m.bfloat16):
        with m.autocast("cpu", enabled=False):
            pass
        with m.autocast("cpu", dtype=m.bfloat16):
            return f()


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(3, 4), (4,), (2, 3, 4)])
def test_stacked_linear_under_cpu_autocast_as_torch(form, bias, shape):
    x = np.linspace(-1, 1, int(np.prod(shape)), dtype=np.float32).reshape(shape)
    res = {}
    for m in (torch, torchlike):
        net = _net(m, bias, 3)
        y = FORMS[form](m, lambda: net(m.tensor(x)))
        y.float().sum().backward()
        res[m] = (y, [p.grad for p in net.parameters()])
    (ty, tg), (ly, lg) = res[torch], res[torchlike]
    assert str(ly.dtype) == str(ty.dtype) == "torch.bfloat16"
    np.testing.assert_allclose(np.asarray(ly.float().detach()), ty.float().detach().numpy(),
                               rtol=2e-2, atol=2e-2)
    for a, b in zip(lg, tg):
        assert str(a.dtype) == str(b.dtype) == "torch.float32"
        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=3e-2, atol=3e-2)
