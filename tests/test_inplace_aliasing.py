"""An in-place op whose other operand aliases its target (``a.mul_(a)``, ``a.mul_(a.detach())``):
torch saved that operand before the write, so its backward raises the version error, where
torchlike used to compute a gradient; the aliasing cases torch accepts still work."""
from __future__ import annotations

import pytest
import torch

import torchlike

CASES = ["a.mul_(b)", "a.mul_(a)", "b.mul_(a)", "a.mul_(a.detach())", "a.mul_(2)",
         "a.mul_(b.detach())", "a.exp_()", "a.add_(a)", "a.mul_(x.detach())", "a.sub_(a)"]


def _outcome(m, case):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = m.tensor([4.0, 5.0, 6.0], requires_grad=True)
    a, b = x * 1, y * 1
    try:
        eval(case).sum().backward()
    except RuntimeError as e:
        return "RuntimeError", str(e)
    return "ok", x.grad.tolist(), None if y.grad is None else y.grad.tolist()


@pytest.mark.parametrize("case", CASES)
def test_in_place_with_an_aliased_operand_as_torch(case):
    assert _outcome(torchlike, case) == _outcome(torch, case)
