"""An in-place op's node keeps ``self`` as it was before the write (torch's ``original_self``, a
copy): a later in-place op on the result does not reach it, and a backward recorded with
``create_graph`` reads the old values. An in-place form whose backward reads its result (torch's
``LeakyReluBackward1`` and kin, ``hypot_``) raises torch's version error instead. Against torch,
each case as a chain ``op; h.add_(1); backward``."""
import numpy as np
import pytest
import torch as T

import torchlike as torch


def _cases(m):
    F = m.nn.functional
    g = m.tensor([2., 3., 4.], requires_grad=True)
    return g, {
        "mul_(tensor)": lambda h: h.mul_(g), "mul_(scalar)": lambda h: h.mul_(2),
        "div_(tensor)": lambda h: h.div_(g), "add_(tensor)": lambda h: h.add_(g),
        "clamp_": lambda h: h.clamp_(min=0), "clamp_(tensor)": lambda h: h.clamp_(max=g),
        "pow_": lambda h: h.pow_(2), "abs_": lambda h: h.abs_(), "sin_": lambda h: h.sin_(),
        "log_": lambda h: h.abs_().log_(), "square_": lambda h: h.square_(),
        "erf_": lambda h: h.erf_(), "atan2_": lambda h: h.atan2_(g),
        "xlogy_": lambda h: h.abs_().xlogy_(g), "addcmul_": lambda h: h.addcmul_(g, g),
        "lerp_": lambda h: h.lerp_(g, 0.3), "masked_fill_": lambda h: h.masked_fill_(
            m.tensor([True, False, False]), 0.),
        "silu(inplace)": lambda h: F.silu(h, inplace=True),
        "threshold_": lambda h: F.threshold_(h, 0.5, 0.),
        "relu6(inplace)": lambda h: F.relu6(h, inplace=True),
        "hardswish(inplace)": lambda h: F.hardswish(h, inplace=True),
        "mish(inplace)": lambda h: F.mish(h, inplace=True),
        # (their backward reads the result: torch raises)
        "exp_": lambda h: h.exp_(), "sigmoid_": lambda h: h.sigmoid_(),
        "tanh_": lambda h: h.tanh_(), "relu_": lambda h: h.relu_(),
        "sqrt_": lambda h: h.abs_().sqrt_(), "reciprocal_": lambda h: h.reciprocal_(),
        "leaky_relu_": lambda h: F.leaky_relu_(h), "elu_": lambda h: F.elu_(h),
        "celu_": lambda h: F.celu_(h), "selu(inplace)": lambda h: F.selu(h, inplace=True),
        "rrelu_": lambda h: F.rrelu_(h, training=False), "hypot_": lambda h: h.hypot_(g),
        "mul_(itself)": lambda h: h.mul_(h),
    }


def _run(m, name):
    x = m.tensor([1., -2., 3.], requires_grad=True)
    g, cases = _cases(m)
    h = x * 1
    cases[name](h)
    h.add_(1)
    try:
        h.sum().backward()
    except RuntimeError as e:
        return type(e), str(e).split("\n")[0][:60]
    return x.grad.numpy(), None if g.grad is None else g.grad.numpy()


@pytest.mark.parametrize("name", list(_cases(T)[1]))
def test_a_write_after_an_inplace_op_as_torch(name):
    want, got = _run(T, name), _run(torch, name)
    if isinstance(want[0], type):
        assert got[0] is want[0]
        assert got[1] == want[1]
    else:
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-7)
        if want[1] is None:
            assert got[1] is None
        else:
            np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-7)


def _second_order(m):
    x = m.tensor([1., -2., 3.], requires_grad=True)
    g = m.tensor([2., 3., 4.], requires_grad=True)
    h = x * 1
    h.mul_(g)
    gg, = m.autograd.grad(h.sum(), g, create_graph=True)
    (gg * gg).sum().backward()
    x2 = m.tensor([1., -2., 3.], requires_grad=True)
    p = x2 * 1
    p.pow_(2)
    gx, = m.autograd.grad(p.sum(), x2, create_graph=True)
    return gg.detach().numpy(), x.grad.numpy(), gx.detach().numpy()


def test_create_graph_reads_self_as_it_was_before_the_write():
    """A gradient of an in-place op's node recorded as ops reads the old ``self``, with its
    history: the second-order gradients through it are torch's."""
    for got, want in zip(_second_order(torch), _second_order(T)):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_the_saved_self_attribute_is_the_value_before_the_write():
    def saved(m):
        x = m.tensor([1., -2., 3.], requires_grad=True)
        h = x * 1
        h.mul_(m.tensor([2., 3., 4.], requires_grad=True))
        return h.grad_fn._saved_self.detach().numpy()
    np.testing.assert_array_equal(saved(torch), saved(T))
