"""Complex autograd follows torch's convention (the conjugate of jax's cotangents)."""
import pytest
import torch

import torchlike

SCENARIOS = []


def scenario(fn):
    SCENARIOS.append(fn)
    return fn


@scenario
def abs_through_product(m):
    x = m.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    (x * (2 - 1j)).abs().sum().backward()
    return [repr(x.grad)]


@scenario
def hook_sees_torch_gradient(m):
    log = []
    x = m.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    x.register_hook(lambda g: log.append(repr(g)))
    (x * x).abs().sum().backward()
    return log + [repr(x.grad)]


@scenario
def hook_replacement_in_torch_convention(m):
    x = m.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g * 1j)
    y.real.sum().backward()
    return [repr(x.grad)]


@scenario
def real_imag_parts(m):
    x = m.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    y = x * 1
    (y.real.sum() * 2 + y.imag.sum() * 3).backward()
    return [repr(x.grad), repr(m.real(x.detach())), repr(x.detach().imag), repr(y.real),
            repr(y.imag)]


@scenario
def autograd_grad_and_conj(m):
    x = m.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    return [repr(g) for g in m.autograd.grad((x * x.conj()).real.sum(), x)]


@scenario
def complex_output_with_gradient_argument(m):
    x = m.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    y = x * x
    y.backward(m.tensor([1j, 1.0]), retain_graph=True)
    g, = m.autograd.grad(y, x, m.tensor([1j, 1.0]), create_graph=True)
    return [repr(x.grad), repr(g.detach())]


@scenario
def retained_complex_grad(m):
    x = m.tensor([1 + 2j], requires_grad=True)
    y = x * (1 + 1j)
    y.retain_grad()
    (y * y.conj()).real.sum().backward()
    return [repr(y.grad), repr(x.grad)]


@pytest.mark.parametrize("fn", SCENARIOS, ids=lambda f: f.__name__)
def test_complex_gradients_match_torch(fn):
    assert fn(torchlike) == fn(torch)


def test_imag_of_real_tensor_raises_like_torch():
    from oracle import check_raises
    import numpy as np
    check_raises(lambda m, a: a.imag, np.ones(2, np.float32),
                 match="imag is not implemented for tensors with non-complex dtypes.")
