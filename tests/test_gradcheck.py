"""torch.autograd.gradcheck / gradgradcheck against torch 2.13: verdicts on correct and wrong
backward formulas, GradcheckError and its message, raise_exception=False, input checks."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from torch.autograd.gradcheck import GradcheckError as TError

import torchlike as tl
from torchlike.autograd.gradcheck import GradcheckError as LError

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _fresh_rng():
    """Each test draws the same inputs whatever ran before it (in this worker)."""
    global RNG
    RNG = np.random.default_rng(0)

GOOD = {
    "sin": (lambda m, x: m.sin(x), [(3,)]),
    "matmul": (lambda m, a, b: a @ b, [(2, 3), (3, 2)]),
    "softmax": (lambda m, x: m.softmax(x, dim=-1), [(2, 3)]),
    "layer_norm": (lambda m, x, w: m.nn.functional.layer_norm(x, (3,), w), [(2, 3), (3,)]),
    "two_outputs": (lambda m, a, b: (a[:2] * b, a.sum()), [(3,), (2,)]),
    "index_int_output": (lambda m, x: (x.max(dim=0).values * 2, x.argmax()), [(3, 2)]),
    "tanh_mlp": (lambda m, x, w: m.tanh(x @ w).pow(2).sum(1), [(2, 3), (3, 4)]),
}


def _inputs(m, shapes, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(m.tensor(rng.standard_normal(s), dtype=m.float64, requires_grad=True)
                 for s in shapes)


@pytest.mark.parametrize("name", list(GOOD))
def test_correct_backwards_pass(name):
    fn, shapes = GOOD[name]
    for m in (torch, tl):
        args = _inputs(m, shapes)
        assert m.autograd.gradcheck(lambda *a: fn(m, *a), args) is True
        assert m.autograd.gradgradcheck(lambda *a: fn(m, *a), args) is True


def _bad_function(m, factor=2.0, detach_in_backward=False):
    class Bad(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin()

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            if detach_in_backward:
                x = x.detach()
            return g * x.cos() * factor
    return Bad.apply


def test_wrong_backward_message():
    msgs = []
    for m, err in ((torch, TError), (tl, LError)):
        (x,) = _inputs(m, [(3,)])
        with pytest.raises(err) as info:
            m.autograd.gradcheck(_bad_function(m), (x,))
        msgs.append(str(info.value))
        assert m.autograd.gradcheck(_bad_function(m), (x,), raise_exception=False) is False
    assert msgs[0] == msgs[1]
    assert issubclass(LError, RuntimeError)
    assert tl.autograd.gradcheck is tl.autograd.gradcheck.__globals__["gradcheck"]


def test_wrong_double_backward():
    """A backward that detaches its saved input: first order right, second order wrong."""
    res = []
    for m in (torch, tl):
        (x,) = _inputs(m, [(3,)])
        f = _bad_function(m, factor=1.0, detach_in_backward=True)
        first = m.autograd.gradcheck(f, (x,))
        second = m.autograd.gradgradcheck(f, (x,), raise_exception=False)
        res.append((first, second))
    assert res[0] == res[1] == (True, False)


def test_mismatch_in_second_input_and_output():
    msgs = []
    for m, err in ((torch, TError), (tl, LError)):
        a, b = _inputs(m, [(2,), (2,)])
        bad = _bad_function(m)

        def f(a, b):
            return a * 3, a + bad(b)
        with pytest.raises(err) as info:
            m.autograd.gradcheck(f, (a, b))
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
    assert msgs[0].startswith("Jacobian mismatch for output 1 with respect to input 1,")


def test_tolerances():
    res = []
    for m in (torch, tl):
        (x,) = _inputs(m, [(3,)])
        f = _bad_function(m, factor=1.0 + 1e-4)
        res.append((m.autograd.gradcheck(f, (x,), raise_exception=False),
                    m.autograd.gradcheck(f, (x,), rtol=1e-3, atol=0, raise_exception=False),
                    m.autograd.gradcheck(f, (x,), rtol=0, atol=1e-6, raise_exception=False)))
    assert res[0] == res[1]


def test_float32_warns_and_fails_like_torch():
    res = []
    x = RNG.standard_normal(3).astype(np.float32)
    for m in (torch, tl):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ok = m.autograd.gradcheck(m.sin, (m.tensor(x, requires_grad=True),),
                                      raise_exception=False)
        res.append((ok, [str(a.message) for a in w]))
    assert res[0] == res[1]


def test_input_errors():
    for m in (torch, tl):
        with pytest.raises(ValueError, match="gradcheck expects at least one input tensor to "
                                             "require gradient, but none of them have "
                                             "requires_grad=True."):
            m.autograd.gradcheck(m.sin, (m.ones(2, dtype=m.float64),))


def test_given_grad_outputs():
    res = []
    go = RNG.standard_normal((2, 2))
    for m in (torch, tl):
        a, b = _inputs(m, [(2, 3), (3, 2)])
        g = m.tensor(go, dtype=m.float64, requires_grad=True)
        res.append(m.autograd.gradgradcheck(lambda a, b: (a @ b).sin(), (a, b), (g,)))
    assert res == [True, True]
