"""Values and gradients at kinks and ties, against torch. Losses: a logit exactly 0
(binary_cross_entropy_with_logits of a zero-initialised classifier), a difference exactly 0
(l1, smooth_l1 with beta 0), a margin met exactly (hinge, margin ranking, cosine embedding,
triplet, multi-margin, multilabel margin). torch differentiates these by its own formulas
(sigmoid(x) - y; sign(0) = 0; clamp_min passing the gradient at the boundary; the margin
kernels' strict ``z > 0``), where differentiating the forward's jnp.maximum / jnp.abs halved or
flipped it. Activations at every kink and threshold. Norms and reductions with zero entries and
tied values (torch.norm at a zero entry: 0 for every p, as linalg.vector_norm; cdist's inf-norm
giving each tied coordinate the whole gradient)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import torchlike


def _run(m, fn, arrays, kw, grad_idx):
    try:
        ts = [m.tensor(a, requires_grad=i in grad_idx) if np.asarray(a).dtype.kind == "f"
              else m.tensor(a) for i, a in enumerate(arrays)]
        kw = {k: m.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
        loss = getattr(m.nn.functional, fn)(*ts, **kw)
        loss.sum().backward()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    out = [np.asarray(loss.detach().numpy(), np.float64)]
    out += [ts[i].grad.numpy().astype(np.float64) for i in grad_idx]
    return "ok", out


def _same(a, b):
    if a[0] != "ok" or b[0] != "ok":
        return a == b
    return all(x.shape == y.shape and np.allclose(x, y, rtol=1e-5, atol=1e-6, equal_nan=True)
               for x, y in zip(a[1], b[1]))


def _f(*a):
    return np.array(a, np.float32)


X = {"zeros": _f(0, 0, 0), "equal": _f(0.3, -1, 2), "mixed": _f(0, 0.5, -0.5),
     "probs": _f(0, 0.5, 1)}
Y = {"zeros": _f(0, 0, 0), "equal": _f(0.3, -1, 2), "ones": _f(1, 1, 1), "probs": _f(0, 1, 0.5)}
POINTWISE = [("l1_loss", {}), ("mse_loss", {}), ("smooth_l1_loss", {"beta": 1.0}),
             ("smooth_l1_loss", {"beta": 0.0}), ("huber_loss", {}), ("soft_margin_loss", {}),
             ("binary_cross_entropy_with_logits", {}), ("poisson_nll_loss", {}),
             ("binary_cross_entropy", {})]


@pytest.mark.parametrize("fn,kw", POINTWISE, ids=[f"{f}{k}" for f, k in POINTWISE])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_pointwise_losses_at_zero_differences_and_logits_as_torch(fn, kw, reduction):
    for (xn, x), (yn, y) in itertools.product(X.items(), Y.items()):
        args = ([x[None], y[None]], {**kw, "reduction": reduction}, [0])
        ours, theirs = _run(torchlike, fn, *args), _run(torch, fn, *args)
        assert _same(ours, theirs), (xn, yn, ours, theirs)


TIES = [
    ("margin_ranking_loss", [_f(1, 0.5, 2), _f(0, 0.5, 1), _f(1, -1, 1)], {"margin": 1.0}, [0, 1]),
    ("margin_ranking_loss", [_f(1, 0.5, 2), _f(0, 0.5, 1), _f(-1, -1, 1)], {}, [0, 1]),
    ("hinge_embedding_loss", [_f(1, 0.5, 2, 0), _f(-1, -1, 1, -1)], {}, [0]),
    ("cosine_embedding_loss", [_f([1, 0], [0, 1]), _f([1, 0], [1, 1]), _f(-1, -1)],
     {"margin": 1.0}, [0, 1]),
    ("cosine_embedding_loss", [_f([1, 0], [0, 1]), _f([0, 1], [1, 1]), _f(-1, -1)], {}, [0, 1]),
    ("triplet_margin_loss", [_f([0, 0]), _f([1, 0]), _f([2, 0])], {"eps": 0.0}, [0, 1, 2]),
    ("multi_margin_loss", [_f([1, 0, 2], [0.5, 0.5, 0.5]), np.array([0, 1])], {}, [0]),
    ("multi_margin_loss", [_f([1, 0, 2], [0.5, 0.5, 0.5]), np.array([0, 1])], {"p": 2}, [0]),
    ("multilabel_margin_loss", [_f([1, 0, 2], [0.5, 1.5, 0.5]),
                                np.array([[0, -1, 0], [1, 0, -1]])], {}, [0]),
    ("binary_cross_entropy_with_logits", [_f(0, 0, 1), _f(0, 1, 0.5)],
     {"pos_weight": _f(2, 2, 3)}, [0, 1]),
    ("binary_cross_entropy_with_logits", [_f(0, -3, 40), _f(0.3, 1, 0.5)], {}, [0, 1]),
]


@pytest.mark.parametrize("case", range(len(TIES)), ids=[t[0] for t in TIES])
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_margin_losses_at_ties_and_logit_targets_as_torch(case, reduction):
    fn, arrays, kw, grad_idx = TIES[case]
    args = (arrays, {**kw, "reduction": reduction}, grad_idx)
    ours, theirs = _run(torchlike, fn, *args), _run(torch, fn, *args)
    assert _same(ours, theirs), (ours, theirs)


ACTIVATIONS = [("relu", {}), ("relu6", {}), ("leaky_relu", {}), ("hardtanh", {}),
               ("hardtanh", {"min_val": -0.5, "max_val": 0.5}), ("hardsigmoid", {}),
               ("hardswish", {}), ("elu", {}), ("celu", {}), ("selu", {}), ("gelu", {}),
               ("softplus", {}), ("softplus", {"beta": 2, "threshold": 1}),
               ("threshold", {"threshold": 0.5, "value": -1.0}), ("softshrink", {}),
               ("hardshrink", {}), ("mish", {}), ("logsigmoid", {})]


@pytest.mark.parametrize("fn,kw", ACTIVATIONS, ids=[f"{f}{k}" for f, k in ACTIVATIONS])
def test_activations_at_their_kinks_as_torch(fn, kw):
    # every kink and threshold of the family is met exactly (softplus at beta * x == threshold
    # passed half its gradient)
    x = np.array([-6, -3, -1, -0.5, 0, 0.5, 1, 3, 6, -2, 2, 0.125, -0.125], np.float32)
    got = []
    for m in (torchlike, torch):
        t = m.tensor(x, requires_grad=True)
        getattr(m.nn.functional, fn)(t, **kw).sum().backward()
        got.append(t.grad.numpy())
    np.testing.assert_allclose(got[0], got[1], rtol=1e-5, atol=1e-6)


TIED = np.array([[1, 0, -2, 0], [0, 0, 3, 3], [5, 1, 5, 1]], np.float32)
REDUCTIONS = [
    "x.norm(dim=1, p=1)", "x.norm(dim=1, p=float('-inf'))", "x.norm(dim=1, p=float('inf'))",
    "x.norm(dim=1, p=0.5)", "x.norm(dim=1, p=1.5)", "x.norm(dim=1, p=3)", "x.norm()",
    "x.norm(dim=None, keepdim=True)", "x.norm(p=3, keepdim=True)",
    "m.linalg.vector_norm(x, ord=0.5, dim=1)", "m.linalg.vector_norm(x, ord=1.5)",
    "m.cdist(x, x, p=float('inf'))", "m.cdist(x, x, p=1)", "m.cdist(x, x)",
    "x.max()", "x.amax(1)", "x.max(dim=1).values", "x.median()", "x.median(dim=1).values",
    "x.topk(2, dim=1).values", "x.sort(dim=1).values", "x.cummax(1).values",
    "m.maximum(x, x.flip(1))", "m.clamp(x, 0, 3)", "m.quantile(x, 0.5, dim=1)",
    "m.nn.functional.max_pool1d(x.reshape(1, 3, 4), 2)", "x.logsumexp(1)", "x.std(1)",
]


@pytest.mark.parametrize("expr", REDUCTIONS)
def test_norms_and_reductions_with_zeros_and_ties_as_torch(expr):
    got = []
    for m in (torchlike, torch):
        x = m.tensor(TIED, requires_grad=True)
        y = eval(expr, {"x": x, "m": m})
        (y * m.arange(1.0, y.numel() + 1).reshape(tuple(y.shape))).sum().backward()
        got.append((y.detach().numpy(), x.grad.numpy()))
    (y0, g0), (y1, g1) = got
    assert y0.shape == y1.shape
    np.testing.assert_allclose(y0, y1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g0, g1, rtol=1e-5, atol=1e-6)


SPECIAL_X = np.array([0.0, 1.0, -1.0, 0.5, 2.0, -2.0, 3.0], np.float32)
SPECIAL_Y = np.array([0.0, 1.0, 0.0, 0.5, -2.0, 2.0, 0.0], np.float32)
POINTWISE_OPS = ["m.copysign(x, y)", "m.xlogy(x, y)", "m.special.xlog1py(x, y)", "m.special.i0(x)",
                 "x.lgamma()", "x.abs()", "x.sign()", "x.sqrt()", "x.pow(1.5)", "m.fmod(x, y + 3)",
                 "m.remainder(x, y + 3)", "m.clamp(x, -1, 1)", "m.clamp(x, y)", "m.maximum(x, y)",
                 "m.minimum(x, y)", "m.fmax(x, y)", "m.atan2(x, y)", "m.hypot(x, y)",
                 "m.special.entr(x)", "m.sinc(x)", "m.lerp(x, y, x)"]


@pytest.mark.parametrize("expr", POINTWISE_OPS)
def test_pointwise_ops_at_zeros_and_poles_as_torch(expr):
    # copysign's gradient at 0 (jax: 1, torch: 0), xlogy's at 0 (jax: log(0) = -inf), i0's at 0
    # (jax: 1, torch: i1(0) = 0), lgamma's at the pole 0 (jax: NaN, torch: digamma(0) = -inf)
    got = []
    for m in (torchlike, torch):
        x = m.tensor(SPECIAL_X[1:] if "lgamma" in expr else SPECIAL_X, requires_grad=True)
        y = m.tensor(SPECIAL_Y[1:] if "lgamma" in expr else SPECIAL_Y, requires_grad=True)
        if "lgamma" in expr:
            x = m.cat([m.zeros(1), x.detach()]).requires_grad_()
        r = eval(expr, {"x": x, "y": y, "m": m})
        (r * m.arange(1.0, r.numel() + 1)).sum().backward()
        got.append([r.detach().numpy()] + [t.grad.numpy() if t.grad is not None else None
                                           for t in (x, y)])
    for a, b in zip(*got):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)


# ---- documented differences (DIFFERENCES.md, "Ops: ties and corner cases")

def test_gradient_sign_at_negative_zero_differs_for_rsqrt_pow_half_and_logit():
    # the infinite gradient at -0.0 of these three has the opposite sign to torch's (torch's
    # kernels and jax's formulas treat the zero's sign differently); every other point matches
    for expr in ("x.rsqrt()", "x.pow(0.5)", "m.special.logit(x)"):
        got = []
        for m in (torchlike, torch):
            x = m.tensor([-0.0, 0.25], requires_grad=True)
            eval(expr, {"x": x, "m": m}).sum().backward()
            got.append(x.grad.numpy())
        assert np.isinf(got[0][0]) and got[0][0] == -got[1][0], expr
        np.testing.assert_allclose(got[0][1], got[1][1], rtol=1e-6)


def test_in_place_ops_saving_an_aliased_operand_compute_where_torch_raises():
    # a.div_(a), a.pow_(a), a.atan2_(a): torch's backward raises the version error (it saved
    # the aliased operand before the write); torchlike gives the gradient of the values before
    # the write. a.mul_(a) and a.addcmul_(a, b) raise in both.
    for case in ("a.div_(a)", "a.pow_(a)", "a.atan2_(a)", "a.mul_(a)", "a.addcmul_(a, b)"):
        for m, raises in ((torch, True), (torchlike, case in ("a.mul_(a)", "a.addcmul_(a, b)"))):
            x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
            a, b = x * 1, m.tensor([4.0, 5.0, 6.0], requires_grad=True) * 1
            try:
                eval(case).sum().backward()
                raised = False
            except RuntimeError as e:
                raised = "modified by an inplace operation" in str(e)
            assert raised == raises, (m.__name__, case)
            if not raises:
                assert np.isfinite(x.grad.numpy()).all(), case


def test_bce_with_logits_of_a_wider_input_than_target_keeps_the_wider_dtype():
    # torch returns the target's dtype (its kernel writes into it); torchlike the promoted one
    got = [m.nn.functional.binary_cross_entropy_with_logits(
        m.tensor([0.0, 1.0], dtype=m.float64), m.tensor([0.0, 1.0])) for m in (torchlike, torch)]
    assert got[0].dtype == torchlike.float64 and got[1].dtype == torch.float32
    assert float(got[0]) == pytest.approx(float(got[1]), rel=1e-6)


def test_a_zero_norm_order_gives_a_zero_gradient_where_torch_leaves_none():
    # dist / norm with p = 0 (a count of nonzeros): torch's gradient is undefined (``.grad``
    # stays None), torchlike's is zeros
    x = torchlike.tensor([1.0, 2.0], requires_grad=True)
    torchlike.dist(x, torchlike.zeros(2), 0).backward()
    assert x.grad.tolist() == [0.0, 0.0]
    t = torch.tensor([1.0, 2.0], requires_grad=True)
    torch.dist(t, torch.zeros(2), 0).backward()
    assert t.grad is None
