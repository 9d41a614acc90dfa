"""float16/bfloat16 backwards of the elementwise ops round as torch's CPU kernels and autograd
formulas do (tanh_backward and bfloat16 sigmoid_backward in float32 with one rounding, float16
sigmoid_backward step by step, sqrt's and rsqrt's formulas op by op): gradients bit for bit
with torch's, in the interpreted first calls and the compiled later ones."""
import numpy as np
import pytest
import torch

import torchlike as tl

N = 2000
_rng = np.random.default_rng(0)
X = (_rng.standard_normal(N) * 2).astype(np.float32)
POS = np.abs(X) + np.float32(0.1)
G = _rng.standard_normal(N).astype(np.float32)

OPS = {"tanh": (lambda m: m.tanh, X), "sigmoid": (lambda m: m.sigmoid, X),
       "sqrt": (lambda m: m.sqrt, POS), "rsqrt": (lambda m: m.rsqrt, POS),
       "F.tanh": (lambda m: m.nn.functional.tanh, X),
       "F.sigmoid": (lambda m: m.nn.functional.sigmoid, X),
       "Tensor.tanh": (lambda m: m.Tensor.tanh, X), "expm1": (lambda m: m.expm1, X)}


def _grad(lib, fn, x, dt):
    t = lib.tensor(x).to(getattr(lib, dt)).requires_grad_()
    y = fn(lib)(t)
    y.backward(lib.tensor(G).to(getattr(lib, dt)))
    return y.detach().float().numpy(), t.grad.float().numpy()


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(OPS))
def test_low_precision_backward_matches_torch(name, dt):
    fn, x = OPS[name]
    ty, tg = _grad(torch, fn, x, dt)
    for call in range(10):          # interpreted first calls, then compiled
        ly, lg = _grad(tl, fn, x, dt)
        same = ly == ty              # (where the forwards agree: rsqrt's differ in a few)
        assert same.mean() > 0.99
        np.testing.assert_array_equal(lg[same], tg[same], err_msg=f"call {call}")


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", ["sigmoid", "expm1", "asinh"])
def test_low_precision_forward_compiled_matches_torch(name, dt):
    """Computed in float32 and rounded once in the compiled calls too (XLA's own float16/bfloat16
    forms of these round differently from the interpreter's and torch's)."""
    want = getattr(torch, name)(torch.tensor(X).to(getattr(torch, dt))).float().numpy()
    for call in range(10):
        got = getattr(tl, name)(tl.tensor(X).to(getattr(tl, dt))).float().numpy()
        np.testing.assert_array_equal(got, want, err_msg=f"call {call}")


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
@pytest.mark.parametrize("shapes", [((3, 5), (3, 4), (6, 5, 4)), ((2, 3, 5), (2, 3, 4), (7, 5, 4)),
                                    ((10, 16), (10, 12), (8, 16, 12))])
@pytest.mark.parametrize("with_bias", [False, True])
def test_bilinear_low_precision_matches_torch(dt, shapes, with_bias):
    """F.bilinear as torch's _trilinear: x1 @ w[k] rounded, each row's dot with x2 rounded, then
    the bias added (interpreted and compiled calls)."""
    rng = np.random.default_rng(5)
    s1, s2, sw = shapes
    arrs = [rng.standard_normal(s).astype(np.float32) for s in (s1, s2, sw)]
    if with_bias:
        arrs.append(rng.standard_normal(sw[0]).astype(np.float32))
    want = torch.nn.functional.bilinear(*[torch.tensor(a).to(getattr(torch, dt))
                                          for a in arrs]).float().numpy()
    for call in range(10):
        got = tl.nn.functional.bilinear(*[tl.tensor(a).to(getattr(tl, dt))
                                          for a in arrs]).float().numpy()
        np.testing.assert_array_equal(got, want, err_msg=f"call {call}")


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
@pytest.mark.parametrize("name,kw", [("leaky_relu", {}), ("leaky_relu", dict(negative_slope=0.2)),
                                     ("elu", {}), ("elu", dict(alpha=0.5)),
                                     ("celu", dict(alpha=0.3)), ("selu", {})])
def test_elu_family_and_leaky_relu_low_precision(name, kw, dt):
    """Their float16/bfloat16 kernels compute in float32 (the slope, alpha and scales
    unrounded) and round once, forward and backward."""
    def run(lib):
        t = lib.tensor(X).to(getattr(lib, dt)).requires_grad_()
        y = getattr(lib.nn.functional, name)(t, **kw)
        y.backward(lib.tensor(G).to(getattr(lib, dt)))
        return y.detach().float().numpy(), t.grad.float().numpy()
    ty, tg = run(torch)
    for call in range(10):
        ly, lg = run(tl)
        np.testing.assert_array_equal(ly, ty, err_msg=f"call {call}")
        np.testing.assert_array_equal(lg, tg, err_msg=f"call {call}")
