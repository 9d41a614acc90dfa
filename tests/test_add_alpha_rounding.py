"""add/sub with alpha round as torch's CPU kernel (one fused multiply-add: in float32 for float32,
exactly for float64), and the
optimizers built on it (SGD's updates, weight decay) match torch bit for bit in the
interpreted first calls and the compiled later ones."""
import numpy as np
import pytest
import torch

import torchlike as tl


def _pair(dt, n=4096, seed=0):
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal(n).astype(np.float32) for _ in range(2))
    return a, b


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("alpha", [-0.01, 0.1, 0.9, 1.7])
def test_add_sub_alpha(dt, alpha):
    a, b = _pair(dt)
    if dt == "float64":       # (full float64 values, exponents spread, and cancellations)
        rng = np.random.default_rng(7)
        a = rng.standard_normal(a.size) * np.exp2(rng.integers(-60, 60, a.size))
        b = rng.standard_normal(a.size) * np.exp2(rng.integers(-60, 60, a.size))
        a[:500] = -(b[:500] * alpha)
    ta, tb = torch.tensor(a), torch.tensor(b)
    la, lb = tl.tensor(a), tl.tensor(b)
    for _ in range(10):   # interpreted first calls, then compiled
        for ft, fl in [(lambda: ta.add(tb, alpha=alpha), lambda: la.add(lb, alpha=alpha)),
                       (lambda: ta.sub(tb, alpha=alpha), lambda: la.sub(lb, alpha=alpha)),
                       (lambda: torch.add(ta, tb, alpha=alpha), lambda: tl.add(la, lb, alpha=alpha)),
                       (lambda: ta.clone().add_(tb, alpha=alpha),
                        lambda: la.clone().add_(lb, alpha=alpha))]:
            np.testing.assert_array_equal(fl().numpy(), ft().numpy())


def _train(lib, cls, kw, steps, dt="float32", n=1000):
    rng = np.random.default_rng(3)
    p = lib.nn.Parameter(lib.tensor(rng.standard_normal(n).astype(np.float32)).to(getattr(lib, dt)))
    opt = getattr(lib.optim, cls)([p], **kw)
    for _ in range(steps):
        p.grad = lib.tensor(rng.standard_normal(n).astype(np.float32)).to(getattr(lib, dt))
        opt.step()
    return p.detach().numpy()


SGD_CONFIGS = [dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.1, momentum=0.9, nesterov=True),
               dict(lr=0.1, momentum=0.9, weight_decay=0.01, dampening=0.1),
               dict(lr=0.1, weight_decay=0.01, maximize=True)]


@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("kw", SGD_CONFIGS)
def test_sgd_bitwise(kw, foreach, dt):
    kw = dict(kw, foreach=foreach)
    for steps in (3, 11):   # interpreted only; then compiled steps too
        np.testing.assert_array_equal(_train(tl, "SGD", kw, steps, dt),
                                      _train(torch, "SGD", kw, steps, dt))
