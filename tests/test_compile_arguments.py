"""A compiled function's Tensor arguments are the caller's tensors: a backward inside it
accumulates their ``.grad`` and an in-place op writes them, as in torch eager; a backward that
would flow on into autograd history from outside the function runs eagerly (a graph break),
with torch's values. Each case against torch eager.
"""
import warnings

import numpy as np
import pytest
import torch

import torchlike


def _both(make):
    """``make(m, compiled)`` for torch eager and torchlike compiled; returns both results."""
    ref = make(torch, lambda f, **kw: f)
    ours = make(torchlike, torchlike.compile)
    return ref, ours


def _np(v):
    return np.asarray(v.detach().numpy()) if v is not None else None


def test_a_backward_accumulates_the_arguments_grad():
    def make(m, compile):
        x = m.ones(3, requires_grad=True)

        @compile
        def step(x):
            loss = (x * 2).sin().sum()
            loss.backward()
            return loss

        grads = []
        for _ in range(3):
            step(x)
            grads.append(_np(x.grad).copy())
        x.grad = None
        step(x)
        grads.append(_np(x.grad))
        return grads

    with warnings.catch_warnings():
        warnings.simplefilter("error")      # (no graph break: the step compiles)
        ref, ours = _both(make)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_new_argument_tensors_each_call_get_their_own_grads():
    def make(m, compile):
        @compile
        def step(x, w):
            loss = (x @ w).tanh().sum()
            loss.backward()
            return loss

        out = []
        for i in range(4):
            x = m.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3) / (i + 1))
            w = m.tensor(np.ones((3, 2), np.float32) * 0.1 * i, requires_grad=True)
            step(x, w)
            out.append((_np(w.grad), x.grad))
        return out

    ref, ours = _both(make)
    for (gw, gx), (rw, rx) in zip(ours, ref):
        np.testing.assert_allclose(gw, rw, rtol=1e-5, atol=1e-7)
        assert gx is None and rx is None


def test_an_in_place_op_on_an_argument_writes_the_callers_tensor():
    def make(m, compile):
        buf = m.zeros(3)

        @compile
        def step(b, k):
            b.add_(k)
            return b.sum()

        sums = [float(step(buf, m.tensor(float(i)))) for i in range(4)]
        return sums, _np(buf)

    (rs, rb), (os_, ob) = _both(make)
    assert os_ == rs
    np.testing.assert_array_equal(ob, rb)


def test_an_arguments_history_from_outside_gets_its_gradient_eagerly():
    def make(m, compile):
        w = m.full((3,), 2.0, requires_grad=True)

        @compile
        def step(h):
            loss = (h * h).sum()
            loss.backward()
            return loss

        for _ in range(2):
            step(w * 3)
        return _np(w.grad)

    with pytest.warns(UserWarning, match="autograd history from outside"):
        ref, ours = _both(make)
    np.testing.assert_array_equal(ours, ref)


def test_a_captured_tensors_history_from_outside_gets_its_gradient_eagerly():
    def make(m, compile):
        w = m.full((3,), 2.0, requires_grad=True)
        h = w * 3

        @compile
        def step():
            loss = (h * h).sum()
            loss.backward(retain_graph=True)
            return loss

        for _ in range(2):
            step()
        return _np(w.grad), h.grad_fn is not None

    with pytest.warns(UserWarning, match="autograd history from outside"):
        ref, ours = _both(make)
    np.testing.assert_array_equal(ours[0], ref[0])
    assert ours[1] and ref[1]


def test_fullgraph_refuses_a_backward_into_an_outside_history():
    w = torchlike.ones(2, requires_grad=True)

    @torchlike.compile(fullgraph=True)
    def step(h):
        loss = h.exp().sum()
        loss.backward()
        return loss

    with pytest.raises(Exception, match="autograd history from outside"):
        step(w * 2)
    assert w.grad is None
