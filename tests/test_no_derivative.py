"""Ops torch has no derivative for (the unique family, floor_divide): their outputs require grad (with torch's grad_fn name) and a
backward through them raises torch's NotImplementedError; without grad they compute as usual.
(torchlike's unique family differentiated through the selected elements, a gradient where torch
raises.)"""
from __future__ import annotations

import pytest
import torch

import torchlike

CASES = {
    "unique": lambda m, x: x.unique(),
    "unique_sorted_counts": lambda m, x: m.unique(x, return_counts=True)[0],
    "unique_inverse": lambda m, x: m.unique(x, return_inverse=True)[0],
    "unique_dim": lambda m, x: x.unique(dim=0),
    "unique_consecutive": lambda m, x: x.unique_consecutive(),
    "unique_consecutive_dim": lambda m, x: m.unique_consecutive(x, dim=1),
    "floor_divide": lambda m, x: m.floor_divide(x, 2.0),
    "floor_divide_tensor": lambda m, x: x.floor_divide(x.detach() + 1),
    "floordiv_operator": lambda m, x: x // 2,
    "rfloordiv_operator": lambda m, x: 7.0 // x,
}


def _outcome(m, fn):
    x = m.tensor([[1.0, 3.0, 3.0], [1.0, 3.0, 3.0]], requires_grad=True)
    y = fn(m, x)
    # (the node's class name: torch's name() prefixes its C++-only nodes, NotImplemented)
    head = (y.requires_grad, type(y.grad_fn).__name__ if y.grad_fn is not None else None,
            y.tolist())
    try:
        y.sum().backward()
    except Exception as e:  # noqa: BLE001
        return head + (type(e).__name__, str(e))
    return head + ("ok", x.grad.tolist())


@pytest.mark.parametrize("name", CASES)
def test_backward_through_an_op_without_a_derivative_raises_as_torch(name):
    assert _outcome(torchlike, CASES[name]) == _outcome(torch, CASES[name])


@pytest.mark.parametrize("name", CASES)
def test_without_grad_the_values_are_torchs(name):
    x = [[2.0, 1.0, 2.0], [2.0, 1.0, 2.0]]
    got = CASES[name](torchlike, torchlike.tensor(x))
    want = CASES[name](torch, torch.tensor(x))
    assert not got.requires_grad and got.tolist() == want.tolist()


@pytest.mark.parametrize("name", ["floor_divide", "floor_divide_tensor", "floordiv_operator",
                                  "rfloordiv_operator"])
@pytest.mark.parametrize("how", ["compiled", "func_grad"])
def test_a_transform_through_an_op_without_a_derivative_raises_as_torch(name, how):
    """Under a differentiation that traces the whole function (a compiled step's backward,
    torch.func.grad), an op without a derivative still raises torch's error: jax
    differentiated the body of its forward rule there, a silent zero gradient."""
    fn = CASES[name]

    def run(m):
        x = m.tensor([[1.0, 3.0, 3.0], [1.0, 3.0, 3.0]], requires_grad=how == "compiled")
        try:
            if how == "compiled":
                f = m.compile(lambda t: fn(m, t).sum()) if m is torchlike else \
                    (lambda t: fn(m, t).sum())
                f(x).backward()
            else:
                m.func.grad(lambda t: fn(m, t).sum())(x)
        except (RuntimeError, NotImplementedError) as e:
            return type(e).__name__, str(e).splitlines()[0]
        return "no error"
    assert run(torchlike) == run(torch)
