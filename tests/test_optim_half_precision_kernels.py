"""Half-precision optimizer steps against torch's implementations (DIFFERENCES.md, "The last
bit of an optimizer's step"): ``foreach=False`` steps are torch's bit for bit; torch's foreach
and fused kernels compute in float32 and round in their own places, and torchlike's
``foreach``/``fused`` steps land within a few float16 ulps of them. torch 2.13's fused SGD with
momentum on CPU float16 leaves 16+ element parameters unchanged at its first step (its
vectorised kernel); torchlike applies the update."""
import numpy as np
import pytest
import torch

import torchlike


def _steps(m, name, n=64, steps=5, **kw):
    rng = np.random.default_rng(0)
    p = m.tensor(rng.standard_normal(n).astype(np.float16), requires_grad=True)
    opt = getattr(m.optim, name)([p], lr=1e-2, **kw)
    for _ in range(steps):
        p.grad = m.tensor(rng.standard_normal(n).astype(np.float16))
        opt.step()
    return p.detach().float().numpy()


_OPTIMIZERS = [("SGD", {"momentum": 0.9}), ("Adam", {}), ("AdamW", {}), ("RMSprop", {}),
               ("Adagrad", {})]


def _ulps(a, b):
    a, b = a.astype(np.float16), b.astype(np.float16)
    return (np.abs(a.astype(np.float32) - b.astype(np.float32))
            / np.spacing(np.maximum(np.abs(a), np.abs(b))).astype(np.float32)).max()


@pytest.mark.parametrize("name,kw", _OPTIMIZERS)
def test_half_single_tensor_steps_are_torchs(name, kw):
    np.testing.assert_array_equal(_steps(torchlike, name, **kw, foreach=False),
                                  _steps(torch, name, **kw, foreach=False))


@pytest.mark.parametrize("name,kw", _OPTIMIZERS)
@pytest.mark.parametrize("impl", [{"foreach": True}, {"fused": True}])
def test_half_foreach_and_fused_steps_within_a_few_ulps_of_torchs(name, kw, impl):
    if "fused" in impl and name == "RMSprop":
        pytest.skip("torch has no fused RMSprop")
    if "fused" in impl and name == "SGD":
        pytest.skip("torch's fused SGD half first step: test_torchs_fused_sgd_half_first_step_quirk")
    assert _ulps(_steps(torchlike, name, **kw, **impl), _steps(torch, name, **kw, **impl)) <= 4


def test_torchs_fused_sgd_half_first_step_quirk():
    """torch's fused SGD with momentum (CPU, float16, 16+ elements) does not move the
    parameter at its first step; its single-tensor path and torchlike's do."""
    rng = np.random.default_rng(0)
    p0 = rng.standard_normal(64).astype(np.float16)
    g0 = rng.standard_normal(64).astype(np.float16)
    moved = {}
    for m, kw in ((torch, {"fused": True}), (torch, {"foreach": False}),
                  (torchlike, {"fused": True})):
        p = m.tensor(p0, requires_grad=True)
        opt = m.optim.SGD([p], lr=1e-2, momentum=0.9, **kw)
        p.grad = m.tensor(g0)
        opt.step()
        moved[(m.__name__, *kw)] = not np.array_equal(p.detach().numpy(), p0)
    assert moved == {("torch", "fused"): False, ("torch", "foreach"): True,
                     ("torchlike", "fused"): True}
