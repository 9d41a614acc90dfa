"""Where torch's graph stops, a compiled function's gradient stops too.

A function compiled as one tape node (it returns tensors with a live graph) is differentiated by
jax as a whole; what torch's graph does not track inside it (a ``detach()``, ``.data``, a
``no_grad`` block, a tensor that does not require grad) must cut jax's gradient there as well.
Each form against torch eager, compiled as a function and inside a compiled module.
"""
import warnings

import numpy as np
import pytest
import torch

import torchlike
from nn_util import grad_reverse


def _detach(m, x):
    return x * x.detach()


def _data(m, x):
    return x * x.data


def _no_grad_block(m, x):
    with m.no_grad():
        s = x * 3
    return x * s


def _straight_through(m, x):
    return x + (x.round() - x).detach()


def _centered(m, x):
    y = x * 2
    return (y - y.detach().mean()) ** 2 + y.detach() * y


def _requires_grad_off(m, x):
    c = x.detach().clone().requires_grad_(False)
    return (x * c).exp()


def _set_grad_enabled(m, x):
    with m.set_grad_enabled(False):
        s = x.exp()
    with m.enable_grad():
        t = x.sin()
    return s * t


FORMS = [_detach, _data, _no_grad_block, _straight_through, _centered, _requires_grad_off,
         _set_grad_enabled]
X = np.array([0.3, -1.2, 2.5, 0.7], np.float32)


def _grads(m, form, compile):
    x = m.tensor(X, requires_grad=True)
    f = compile(lambda x: form(m, x))
    outs = []
    for _ in range(3):
        y = f(x)
        y.sum().backward()
        outs.append(y.detach().numpy())
    return outs, x.grad.numpy()


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.__name__.strip("_"))
def test_a_compiled_function_cuts_where_torch_does(form):
    ref_outs, ref = _grads(torch, form, lambda f: f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # (compiled: no graph break)
        outs, ours = _grads(torchlike, form, torchlike.compile)
    for a, b in zip(outs, ref_outs):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.__name__.strip("_"))
def test_a_compiled_module_cuts_where_torch_does(form):
    def run(m, compile):
        class Net(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = m.nn.Linear(4, 4)
                with m.no_grad():
                    self.lin.weight.copy_(m.tensor(np.eye(4, dtype=np.float32) * 0.5))
                    self.lin.bias.zero_()

            def forward(self, x):
                return form(m, self.lin(x))

        net = compile(Net())
        x = m.tensor(X, requires_grad=True)
        for _ in range(3):
            net(x).sum().backward()
        return x.grad.numpy(), net.lin.weight.grad.numpy()

    ref = run(torch, lambda f: f)
    ours = run(torchlike, torchlike.compile)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_a_custom_function_in_a_compiled_module_is_compiled_with_its_backward():
    """jax differentiates the compiled forward by the Function's backward (a custom_vjp), not
    by its forward's derivative: torch's gradient, in one program, without a graph break."""
    def run(m, compile):
        gr = grad_reverse(m)

        class Net(m.nn.Module):
            def forward(self, x):
                return gr.apply(x).sin()

        net = compile(Net())
        x = m.tensor(X, requires_grad=True)
        for _ in range(2):
            net(x).sum().backward()
        return x.grad.numpy(), net

    ref, _ = run(torch, lambda f: f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # (no graph break)
        ours, net = run(torchlike, torchlike.compile)
    np.testing.assert_allclose(ours, ref, rtol=1e-6)
    assert net._program.compile_count == 1


@pytest.mark.parametrize("reentrant", [True, False])
def test_activation_checkpointing_in_a_compiled_module(reentrant):
    def run(m, compile):
        from importlib import import_module
        cp = import_module(m.__name__ + ".utils.checkpoint")
        lin = m.nn.Linear(4, 4)
        with m.no_grad():
            lin.weight.copy_(m.tensor(np.eye(4, dtype=np.float32) * 0.7))
            lin.bias.fill_(0.1)

        class Net(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lin

            def forward(self, x):
                return cp.checkpoint(lambda t: self.lin(t).tanh(), x,
                                     use_reentrant=reentrant).sum()

        net = compile(Net())
        x = m.tensor(X, requires_grad=True)
        for _ in range(2):
            net(x).backward()
        return x.grad.numpy(), lin.weight.grad.numpy()

    ref = run(torch, lambda f: f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = run(torchlike, torchlike.compile)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
