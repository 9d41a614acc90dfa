"""torch.autograd.functional (jacobian, hessian, vjp, jvp, hvp, vhp) vs real torch: values,
tuple/non-tuple inputs and outputs, create_graph (then differentiated again), strict errors,
vectorize and strategy."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike

from oracle import assert_close

M = (torch, torchlike)
RNG = np.random.default_rng(0)
A = RNG.standard_normal((3,)).astype(np.float32)
B = RNG.standard_normal((2, 3)).astype(np.float32)
V3 = RNG.standard_normal((3,)).astype(np.float32)
V23 = RNG.standard_normal((2, 3)).astype(np.float32)


def close(a, b, atol=1e-5, rg=True):
    if isinstance(b, (tuple, list)):
        assert isinstance(a, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b):
            close(x, y, atol, rg)
    else:
        assert isinstance(a, torchlike.Tensor)
        assert tuple(a.shape) == tuple(b.shape)
        if rg:
            assert a.requires_grad == b.requires_grad, (a.requires_grad, b.requires_grad)
        assert_close(a, b, atol, atol)


def both(fn, atol=1e-5, rg=True):
    outs = [fn(m) for m in M]
    close(outs[1], outs[0], atol, rg)
    return outs


def raises_both(fn, exc, match):
    msgs = []
    for m in M:
        with pytest.raises(exc, match=match) as e:
            fn(m)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def f1(m):
    return lambda x: (x.exp() * x.sum()).sin()


def f2(m):
    return lambda x, y: (x * y, (x.unsqueeze(0) * y).sum(0) ** 2)


def s1(m):
    return lambda x: (x ** 3).sum() + x.prod()


def s2(m):
    return lambda x, y: (x.sin() * y).sum() + (x * x).sum() * y.sum()


@pytest.mark.parametrize("vectorize", [False, True])
@pytest.mark.parametrize("strategy", ["reverse-mode", "forward-mode"])
def test_jacobian(vectorize, strategy):
    if strategy == "forward-mode" and not vectorize:
        raises_both(lambda m: m.autograd.functional.jacobian(f1(m), m.tensor(A),
                                                             strategy=strategy),
                    NotImplementedError, "only implemented for `vectorize=True`")
        return
    kw = dict(vectorize=vectorize, strategy=strategy)
    both(lambda m: m.autograd.functional.jacobian(f1(m), m.tensor(A), **kw))
    both(lambda m: m.autograd.functional.jacobian(f2(m), (m.tensor(A), m.tensor(B)), **kw))
    both(lambda m: m.autograd.functional.jacobian(lambda x: x * 2, (m.tensor(A),), **kw))
    both(lambda m: m.autograd.functional.jacobian(lambda x, y: x.sum() * 0 + 1.0 + y.sum() * 0,
                                                  (m.tensor(A), m.tensor(B)), **kw))


@pytest.mark.parametrize("vectorize", [False, True])
def test_hessian(vectorize):
    # torch's vectorized hessian returns tensors with a grad_fn even without create_graph;
    # torchlike's do not (DIFFERENCES.md): compare values only there
    rg = not vectorize
    both(lambda m: m.autograd.functional.hessian(s1(m), m.tensor(A), vectorize=vectorize), rg=rg)
    both(lambda m: m.autograd.functional.hessian(s2(m), (m.tensor(A), m.tensor(A)),
                                                 vectorize=vectorize), rg=rg)
    both(lambda m: m.autograd.functional.hessian(s1(m), m.tensor(A), vectorize=vectorize,
                                                 outer_jacobian_strategy="forward-mode")
         if vectorize else m.autograd.functional.hessian(s1(m), m.tensor(A)), rg=rg)
    raises_both(lambda m: m.autograd.functional.hessian(f1(m), m.tensor(A), vectorize=vectorize),
                RuntimeError, "should contain a single element")


def test_vjp_jvp_hvp_vhp_values():
    F = torch, torchlike
    both(lambda m: m.autograd.functional.vjp(f1(m), m.tensor(A), m.tensor(V3)))
    both(lambda m: m.autograd.functional.vjp(f2(m), (m.tensor(A), m.tensor(B)),
                                             (m.tensor(V23), m.tensor(V3))))
    both(lambda m: m.autograd.functional.vjp(lambda x: x.sum(), m.tensor(A)))
    both(lambda m: m.autograd.functional.jvp(f1(m), m.tensor(A), m.tensor(V3)))
    both(lambda m: m.autograd.functional.jvp(f2(m), (m.tensor(A), m.tensor(B)),
                                             (m.tensor(V3), m.tensor(V23))))
    both(lambda m: m.autograd.functional.hvp(s1(m), m.tensor(A), m.tensor(V3)))
    both(lambda m: m.autograd.functional.vhp(s1(m), m.tensor(A), m.tensor(V3)))
    both(lambda m: m.autograd.functional.hvp(s2(m), (m.tensor(A), m.tensor(A)),
                                             (m.tensor(V3), m.tensor(V3))))
    both(lambda m: m.autograd.functional.vhp(s2(m), (m.tensor(A), m.tensor(A)),
                                             (m.tensor(V3), m.tensor(V3))))
    # outputs independent of an input: zeros (strict=False)
    both(lambda m: m.autograd.functional.vjp(lambda x, y: x * 2, (m.tensor(A), m.tensor(A)),
                                             m.tensor(V3)))
    assert F


def test_create_graph_results_are_differentiable():
    def run(m):
        x = m.tensor(A, requires_grad=True)
        v = m.tensor(V3)
        out = []
        for fn in (lambda: m.autograd.functional.jacobian(f1(m), x, create_graph=True),
                   lambda: m.autograd.functional.hessian(s1(m), x, create_graph=True),
                   lambda: m.autograd.functional.vjp(f1(m), x, v, create_graph=True)[1],
                   lambda: m.autograd.functional.jvp(f1(m), x, v, create_graph=True)[1],
                   lambda: m.autograd.functional.hvp(s1(m), x, v, create_graph=True)[1],
                   lambda: m.autograd.functional.vhp(s1(m), x, v, create_graph=True)[1]):
            r = fn()
            (g,) = m.autograd.grad(r.sum(), x)
            out += [r, g]
        # without create_graph nothing is recorded, even for inputs that require grad
        out.append(m.autograd.functional.jacobian(f1(m), x))
        return out

    both(run, atol=1e-4)


def test_strict_and_argument_errors():
    fa = lambda m: m.autograd.functional
    raises_both(lambda m: fa(m).vjp(lambda x, y: x * 2, (m.tensor(A), m.tensor(A)),
                                    m.tensor(V3), strict=True),
                RuntimeError, "independent of input 1")
    raises_both(lambda m: fa(m).jacobian(lambda x: m.ones(3), m.tensor(A), strict=True),
                RuntimeError, "does not require gradients")
    raises_both(lambda m: fa(m).jacobian(lambda x, y: x * 2, (m.tensor(A), m.tensor(A)),
                                         strict=True),
                RuntimeError, "is independent of input 1")
    raises_both(lambda m: fa(m).jacobian(f1(m), m.tensor(A), strict=True, vectorize=True),
                RuntimeError, "are not supported together")
    raises_both(lambda m: fa(m).jacobian(f1(m), m.tensor(A), create_graph=True,
                                         strategy="forward-mode", vectorize=True),
                NotImplementedError, "create_graph=True")
    raises_both(lambda m: fa(m).jacobian(f1(m), m.tensor(A), strategy="sideways"),
                AssertionError, "Expected strategy")
    raises_both(lambda m: fa(m).vjp(f1(m), m.tensor(A)), RuntimeError,
                "The vector v can only be None")
    raises_both(lambda m: fa(m).jvp(f1(m), m.tensor(A), m.ones(4)), RuntimeError,
                "v has invalid size")
    raises_both(lambda m: fa(m).vjp(f2(m), (m.tensor(A), m.tensor(B)), (m.ones(3),)),
                RuntimeError, "v is a tuple of invalid length")
    raises_both(lambda m: fa(m).jacobian(f1(m), [1.0]), TypeError, "must be either a Tensor")
    raises_both(lambda m: fa(m).jacobian(f1(m), (m.tensor(A), 2)), TypeError,
                "value at index 1 has type")
    raises_both(lambda m: fa(m).hvp(f1(m), m.tensor(A), m.tensor(V3)), RuntimeError,
                "should contain a single element")
    raises_both(lambda m: fa(m).vhp(f2(m), (m.tensor(A), m.tensor(B)),
                                    (m.tensor(V3), m.tensor(V23))), RuntimeError,
                "should return a single Tensor")


def test_strict_hessian_of_linear_function_raises_as_torch():
    """The Jacobian of a linear function is constant: its create_graph gradients carry no
    history from the input, and strict mode raises torch's error."""
    for m in (torch, torchlike):
        with pytest.raises(RuntimeError, match="jacobian of the user-provided function with "
                                               "respect to input 0 is independent"):
            m.autograd.functional.hessian(lambda x: x.sum(), m.tensor(A), strict=True)