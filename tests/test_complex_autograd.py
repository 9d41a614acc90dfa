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


def test_view_as_real_and_view_as_complex_are_copies():
    """DIFFERENCES.md: ``view_as_real`` / ``view_as_complex`` return new tensors with torch's
    values, shapes and gradients, not views: a write into either result does not reach its
    source, and a later write into the source is not seen by the result."""
    import numpy as np
    z = torchlike.tensor([1 + 2j, 3 - 4j])
    r = torchlike.view_as_real(z)
    assert r.tolist() == torch.view_as_real(torch.tensor([1 + 2j, 3 - 4j])).tolist()
    r[0, 0] = 10.0
    assert z.tolist() == [1 + 2j, 3 - 4j]            # torch: (10+2j)
    z.mul_(2)
    assert r[1].tolist() == [3.0, -4.0]               # torch: [6.0, -8.0]
    x = torchlike.tensor([[1.0, 2.0]])
    c = torchlike.view_as_complex(x)
    c.mul_(1j)
    np.testing.assert_array_equal(x.numpy(), [[1.0, 2.0]])   # torch: [[-2.0, 1.0]]


def _conj_story(m):
    import copy
    x = m.tensor([[1 + 2j, 3 - 1j], [0.5j, 2 + 0j]])
    c = x.conj()
    out = [c.is_conj(), c.resolve_conj().is_conj(), x.conj_physical().is_conj(),
           c[0:1].is_conj(), c[0].is_conj(), c.t().is_conj(), c.reshape(-1).is_conj(),
           (c + 0).is_conj(), c.conj().is_conj(), c.clone().is_conj(), m.is_conj(c),
           c.real.is_conj(), c.detach().is_conj(), c.data.is_conj(), c.resolve_conj().tolist(),
           c.tolist(), m.view_as_real(c.resolve_conj()).tolist(), m.resolve_conj(x) is x,
           c.unsqueeze(0).is_conj(), c.to(m.complex128).is_conj(),
           copy.deepcopy(c).is_conj(), copy.copy(c).is_conj(), m.ones(2).conj().is_conj()]
    for f in (lambda: m.view_as_real(c), lambda: m.view_as_real(c[0])):
        try:
            f()
            out.append("no error")
        except RuntimeError as e:
            out.append(str(e))
    return out


def test_conjugate_bit_as_torch():
    """``conj()`` of a complex tensor is marked conjugated (``is_conj``), as are its views and
    detached aliases, not computed results, clones or deep copies; ``resolve_conj`` unmarks it;
    ``view_as_real`` refuses a marked tensor with torch's error. torchlike answered False and
    viewed it as real, where torch raises."""
    assert _conj_story(torchlike) == _conj_story(torch)
