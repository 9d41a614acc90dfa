"""The registry's bound on compiled programs: a workload of ever-new shapes plateaus."""
import numpy as np
import pytest
import torch

import torchlike
from torchlike import _registry, _tiers


@pytest.fixture(autouse=True)
def _compile_at_once(monkeypatch):
    """These tests are about compiled programs: no interpreter tier in front of them."""
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 0)


def _step(m, n):
    x = m.tensor(np.linspace(-1, 1, n, dtype=np.float32), requires_grad=True)
    y = (x * 2.0).tanh().sum()
    y.backward()
    return y.item(), x.grad.numpy() if hasattr(x.grad, "numpy") else x.grad


def test_programs_stay_within_the_bound_across_200_shapes(monkeypatch):
    monkeypatch.setattr(_registry, "MAX_PROGRAMS", 60)
    before = _registry.program_budget()["evictions"]
    peak = 0
    for n in range(3, 203):      # 200 new shapes, one program each (forward only)
        x = np.linspace(-2, 2, n, dtype=np.float32)
        np.testing.assert_allclose(torchlike.tanh(torchlike.tensor(x)).numpy(),
                                   torch.tanh(torch.tensor(x)).numpy(), rtol=1e-6, atol=1e-6)
        peak = max(peak, _registry.program_budget()["programs"])
    assert peak <= 60 + 3        # one entry may exceed by the programs of the op tracing now
    assert _registry.program_budget()["evictions"] > before


def test_an_evicted_entry_recompiles_and_gives_the_same_values(monkeypatch):
    monkeypatch.setattr(_registry, "MAX_PROGRAMS", 8)
    first = _step(torchlike, 5)
    for n in range(6, 30):
        _step(torchlike, n)
    again = _step(torchlike, 5)
    assert first[0] == again[0]
    np.testing.assert_array_equal(first[1], again[1])
