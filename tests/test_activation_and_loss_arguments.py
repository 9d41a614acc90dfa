"""Losses and activations with unusual arguments, against torch 2.13.

Losses: every ``nn.functional`` loss with a target that requires grad gives torch's target
gradient (or None), or raises torch's error (soft_margin_loss); the deprecated
``size_average``/``reduce`` arguments give torch's one UserWarning, in the functional and the
module forms. Activations: invalid or edge parameters (zero/negative/inf/nan alpha, beta,
lambda, threshold, slope, bounds; prelu's weight shapes and dtypes) raise torch's exception
with its message, or give torch's values and gradients."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import torchlike
from oracle import both_outcomes

R = np.random.default_rng(0)
X = R.standard_normal((3, 4))
P = R.random((3, 4)) * 0.8 + 0.1
Y01 = (R.random((3, 4)) > 0.5).astype(np.float64)
YPM = Y01 * 2 - 1
Y1 = np.array([1.0, -1.0, 1.0])
YPOIS = np.array([[0.0, 1.0, 2.0, 0.5], [3.0, 0.0, 1.0, 2.0], [0.0, 0.0, 4.0, 1.0]])


def _close(a, b):
    if (a is None) != (b is None):
        return False
    if a is None:
        return True
    a, b = np.asarray(a.tolist()), np.asarray(b.tolist())
    return a.shape == b.shape and np.allclose(a, b, equal_nan=True, atol=1e-6, rtol=1e-5)


# ------------------------------------------------------------------ losses: target gradients

def _pw(m):
    return m.ones(4, dtype=m.float64) * 2


LOSSES = {
    "l1_loss": (lambda F, m, x, y, **k: F.l1_loss(x, y, **k), X, X[::-1]),
    "mse_loss": (lambda F, m, x, y, **k: F.mse_loss(x, y, **k), X, X[::-1]),
    "mse_loss_broadcast": (lambda F, m, x, y, **k: F.mse_loss(x, y, **k), X, X[0]),
    "smooth_l1_loss": (lambda F, m, x, y, **k: F.smooth_l1_loss(x, y, **k), X, X[::-1] * 0.3),
    "huber_loss": (lambda F, m, x, y, **k: F.huber_loss(x, y, **k), X, X[::-1] * 3),
    "soft_margin_loss": (lambda F, m, x, y, **k: F.soft_margin_loss(x, y, **k), X, YPM),
    "bce_with_logits": (lambda F, m, x, y, **k: F.binary_cross_entropy_with_logits(x, y, **k),
                        X, P),
    "bce_with_logits_pos_weight": (
        lambda F, m, x, y, **k: F.binary_cross_entropy_with_logits(x, y, pos_weight=_pw(m), **k),
        X, P),
    "binary_cross_entropy": (lambda F, m, x, y, **k: F.binary_cross_entropy(x, y, **k),
                             P, P[::-1]),
    "poisson_nll_loss": (lambda F, m, x, y, **k: F.poisson_nll_loss(x, y, **k), X, YPOIS),
    "poisson_nll_loss_full": (lambda F, m, x, y, **k: F.poisson_nll_loss(x, y, full=True, **k),
                              X, YPOIS),
    "poisson_nll_loss_full_no_log": (
        lambda F, m, x, y, **k: F.poisson_nll_loss(x, y, log_input=False, full=True, **k),
        P + 0.5, YPOIS),
    "gaussian_nll_loss": (
        lambda F, m, x, y, **k: F.gaussian_nll_loss(x, y, (x * 0 + 1.5).detach(), **k),
        X, X[::-1]),
    "kl_div": (lambda F, m, x, y, **k: F.kl_div(x, y, **k), np.log(P), P[::-1]),
    "kl_div_log_target": (lambda F, m, x, y, **k: F.kl_div(x, y, log_target=True, **k),
                          np.log(P), np.log(P[::-1])),
    "kl_div_zero_target": (lambda F, m, x, y, **k: F.kl_div(x, y, **k), np.log(P),
                           P * (P > 0.5)),
    "hinge_embedding_loss": (lambda F, m, x, y, **k: F.hinge_embedding_loss(x, y, **k), X, YPM),
    "hinge_embedding_loss_float_target": (
        lambda F, m, x, y, **k: F.hinge_embedding_loss(x, y, **k), X, X[::-1]),
    "multilabel_soft_margin_loss": (
        lambda F, m, x, y, **k: F.multilabel_soft_margin_loss(x, y, **k), X, Y01),
    "cross_entropy_probabilities": (lambda F, m, x, y, **k: F.cross_entropy(x, y, **k),
                                    X, P / P.sum(1, keepdims=True)),
    "cross_entropy_probabilities_smoothing": (
        lambda F, m, x, y, **k: F.cross_entropy(x, y, label_smoothing=0.1, **k),
        X, P / P.sum(1, keepdims=True)),
    "margin_ranking_loss": (lambda F, m, x, y, **k: F.margin_ranking_loss(x, x.flip(0), y, **k),
                            X[:, 0], Y1),
    "cosine_embedding_loss": (
        lambda F, m, x, y, **k: F.cosine_embedding_loss(x, x.flip(0), y, **k), X, Y1),
    "triplet_margin_loss": (lambda F, m, x, y, **k: F.triplet_margin_loss(x, y, x.flip(0), **k),
                            X, X[::-1] * 0.5),
}


def _loss_run(m, name, reduction, input_grad):
    fn, x, y = LOSSES[name]
    xt = m.tensor(np.ascontiguousarray(x), requires_grad=input_grad)
    yt = m.tensor(np.ascontiguousarray(y), requires_grad=True)
    try:
        out = fn(m.nn.functional, m, xt, yt, reduction=reduction)
    except Exception as e:  # noqa: BLE001
        return ("raise", type(e).__name__, str(e))
    if out.requires_grad:
        out.sum().backward()
    return ("ok", out.detach(), out.requires_grad, xt.grad, yt.grad)


@pytest.mark.parametrize("input_grad", [True, False], ids=["input_grad", "target_grad_only"])
@pytest.mark.parametrize("reduction", ["mean", "none", "sum"])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_with_target_requiring_grad_matches_torch(name, reduction, input_grad):
    theirs = _loss_run(torch, name, reduction, input_grad)
    ours = _loss_run(torchlike, name, reduction, input_grad)
    assert ours[0] == theirs[0], f"torchlike {ours}; torch {theirs}"
    if theirs[0] == "raise":
        assert ours == theirs
        return
    assert _close(ours[1], theirs[1]), "value"
    assert ours[2] == theirs[2], "requires_grad"
    assert _close(ours[3], theirs[3]), f"input grad {ours[3]} != torch {theirs[3]}"
    assert _close(ours[4], theirs[4]), f"target grad {ours[4]} != torch {theirs[4]}"


def test_soft_margin_loss_refuses_a_target_requiring_grad():
    def run(m):
        return m.nn.functional.soft_margin_loss(m.zeros(3, requires_grad=True),
                                                m.ones(3, requires_grad=True))
    both_outcomes(run)
    with torchlike.no_grad():   # (no graph: nothing to refuse)
        run(torchlike)


def test_hinge_embedding_loss_target_has_no_gradient():
    x = torchlike.tensor(X, requires_grad=True)
    y = torchlike.tensor(YPM, requires_grad=True)
    torchlike.nn.HingeEmbeddingLoss()(x, y).backward()
    assert y.grad is None and x.grad is not None


def test_poisson_nll_loss_full_target_gradient_is_nan_at_zero_targets():
    y = torchlike.tensor(YPOIS, requires_grad=True)
    torchlike.nn.PoissonNLLLoss(full=True)(torchlike.tensor(X), y).backward()
    assert np.array_equal(np.isnan(np.asarray(y.grad.tolist())), YPOIS == 0)


# ------------------------------------------------------------------ losses: legacy arguments

def _t(m, a):
    return m.tensor(np.ascontiguousarray(a))


CL = np.array([0, 3, 1])
MLT = np.array([[0, 1, -1, 0], [3, -1, 0, 0], [2, 1, 0, -1]])
LEGACY = {
    "l1_loss": lambda m, **k: m.nn.functional.l1_loss(_t(m, X), _t(m, P), **k),
    "mse_loss": lambda m, **k: m.nn.functional.mse_loss(_t(m, X), _t(m, P), **k),
    "smooth_l1_loss": lambda m, **k: m.nn.functional.smooth_l1_loss(_t(m, X), _t(m, P), **k),
    "soft_margin_loss": lambda m, **k: m.nn.functional.soft_margin_loss(_t(m, X), _t(m, YPM),
                                                                         **k),
    "binary_cross_entropy": lambda m, **k: m.nn.functional.binary_cross_entropy(
        _t(m, P), _t(m, P[::-1]), **k),
    "bce_with_logits": lambda m, **k: m.nn.functional.binary_cross_entropy_with_logits(
        _t(m, X), _t(m, P), **k),
    "poisson_nll_loss": lambda m, **k: m.nn.functional.poisson_nll_loss(_t(m, X), _t(m, P), **k),
    "kl_div": lambda m, **k: m.nn.functional.kl_div(_t(m, np.log(P)), _t(m, P), **k),
    "hinge_embedding_loss": lambda m, **k: m.nn.functional.hinge_embedding_loss(
        _t(m, X), _t(m, YPM), **k),
    "multilabel_soft_margin_loss": lambda m, **k: m.nn.functional.multilabel_soft_margin_loss(
        _t(m, X), _t(m, Y01), **k),
    "multilabel_margin_loss": lambda m, **k: m.nn.functional.multilabel_margin_loss(
        _t(m, X), _t(m, MLT), **k),
    "multi_margin_loss": lambda m, **k: m.nn.functional.multi_margin_loss(_t(m, X), _t(m, CL),
                                                                           **k),
    "nll_loss": lambda m, **k: m.nn.functional.nll_loss(_t(m, X), _t(m, CL), **k),
    "cross_entropy": lambda m, **k: m.nn.functional.cross_entropy(_t(m, X), _t(m, CL), **k),
    "margin_ranking_loss": lambda m, **k: m.nn.functional.margin_ranking_loss(
        _t(m, X[:, 0]), _t(m, X[:, 1]), _t(m, Y1), **k),
    "cosine_embedding_loss": lambda m, **k: m.nn.functional.cosine_embedding_loss(
        _t(m, X), _t(m, P), _t(m, Y1), **k),
    "triplet_margin_loss": lambda m, **k: m.nn.functional.triplet_margin_loss(
        _t(m, X), _t(m, P), _t(m, X[::-1]), **k),
    "L1Loss": lambda m, **k: m.nn.L1Loss(**k)(_t(m, X), _t(m, P)),
    "MSELoss": lambda m, **k: m.nn.MSELoss(**k)(_t(m, X), _t(m, P)),
    "BCELoss": lambda m, **k: m.nn.BCELoss(**k)(_t(m, P), _t(m, P[::-1])),
    "KLDivLoss": lambda m, **k: m.nn.KLDivLoss(**k)(_t(m, np.log(P)), _t(m, P)),
    "NLLLoss": lambda m, **k: m.nn.NLLLoss(**k)(_t(m, X), _t(m, CL)),
    "CrossEntropyLoss": lambda m, **k: m.nn.CrossEntropyLoss(**k)(_t(m, X), _t(m, CL)),
    "HingeEmbeddingLoss": lambda m, **k: m.nn.HingeEmbeddingLoss(**k)(_t(m, X), _t(m, YPM)),
    "MultiMarginLoss": lambda m, **k: m.nn.MultiMarginLoss(**k)(_t(m, X), _t(m, CL)),
    "TripletMarginLoss": lambda m, **k: m.nn.TripletMarginLoss(**k)(_t(m, X), _t(m, P),
                                                                   _t(m, X[::-1])),
}
LEGACY_KW = {"none": {}, "size_average_false": {"size_average": False},
             "size_average_true": {"size_average": True}, "reduce_false": {"reduce": False},
             "reduce_true": {"reduce": True},
             "both": {"size_average": False, "reduce": True},
             "both_none": {"size_average": None, "reduce": None},
             "with_reduction": {"reduction": "sum", "size_average": True}}


def _legacy_run(m, name, kw):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = LEGACY[name](m, **kw)
    return (np.round(np.asarray(out.tolist()), 6).tolist(),
            [(x.category, str(x.message)) for x in w])


@pytest.mark.parametrize("kw", sorted(LEGACY_KW))
@pytest.mark.parametrize("name", sorted(LEGACY))
def test_loss_legacy_reduction_arguments_warn_once_as_torch(name, kw):
    assert _legacy_run(torchlike, name, LEGACY_KW[kw]) == _legacy_run(torch, name,
                                                                       LEGACY_KW[kw])


# ------------------------------------------------------------------ activations

XA = np.array([[-3.0, -1.0, -0.5, -0.25, 0.0], [0.25, 0.5, 1.0, 2.0, 25.0]])
INF, NAN = math.inf, math.nan


def _f(m):
    return m.nn.functional


ACTS = {}
for _a in [1.0, 0.0, -1.0, 0.5, INF, NAN]:
    ACTS[f"elu-alpha={_a}"] = lambda m, x, a=_a: _f(m).elu(x, alpha=a)
    ACTS[f"celu-alpha={_a}"] = lambda m, x, a=_a: _f(m).celu(x, alpha=a)
    ACTS[f"CELU-alpha={_a}"] = lambda m, x, a=_a: m.nn.CELU(alpha=a)(x)
    ACTS[f"elu_-alpha={_a}"] = lambda m, x, a=_a: _f(m).elu_(x.clone(), alpha=a)
    ACTS[f"celu_-alpha={_a}"] = lambda m, x, a=_a: _f(m).celu_(x.clone(), alpha=a)
    ACTS[f"elu-inplace-alpha={_a}"] = lambda m, x, a=_a: _f(m).elu(x.clone(), alpha=a,
                                                                   inplace=True)
for _l in [0.5, 0.0, -0.5, -1, INF, NAN]:
    ACTS[f"softshrink-lambd={_l}"] = lambda m, x, v=_l: _f(m).softshrink(x, v)
    ACTS[f"Softshrink-lambd={_l}"] = lambda m, x, v=_l: m.nn.Softshrink(v)(x)
for _l in [0.5, 0.0, -0.5, INF]:
    ACTS[f"hardshrink-lambd={_l}"] = lambda m, x, v=_l: _f(m).hardshrink(x, v)
for _b in [1.0, 0.0, -1.0, 2.0, INF]:
    for _cut in [20.0, 0.0, -1.0]:
        ACTS[f"softplus-beta={_b}-threshold={_cut}"] = \
            lambda m, x, b=_b, t=_cut: _f(m).softplus(x, beta=b, threshold=t)
    ACTS[f"Softplus-beta={_b}"] = lambda m, x, b=_b: m.nn.Softplus(beta=b)(x)
for _lo, _hi in [(-1, 1), (1, -1), (0, 0), (2, 1)]:
    ACTS[f"hardtanh-{_lo},{_hi}"] = lambda m, x, lo=_lo, hi=_hi: _f(m).hardtanh(x, lo, hi)
    ACTS[f"Hardtanh-{_lo},{_hi}"] = lambda m, x, lo=_lo, hi=_hi: m.nn.Hardtanh(lo, hi)(x)
    ACTS[f"hardtanh_-{_lo},{_hi}"] = lambda m, x, lo=_lo, hi=_hi: _f(m).hardtanh_(x.clone(),
                                                                                  lo, hi)
for _th, _v in [(0.0, 0.0), (1.0, -5.0), (NAN, 1.0), (0.5, INF)]:
    ACTS[f"threshold-{_th},{_v}"] = lambda m, x, th=_th, v=_v: _f(m).threshold(x, th, v)
    ACTS[f"threshold_-{_th},{_v}"] = lambda m, x, th=_th, v=_v: _f(m).threshold_(x.clone(), th,
                                                                               v)
for _s in [0.01, 0.0, -0.5, NAN]:
    ACTS[f"leaky_relu-slope={_s}"] = lambda m, x, s=_s: _f(m).leaky_relu(x, s)
    ACTS[f"leaky_relu_-slope={_s}"] = lambda m, x, s=_s: _f(m).leaky_relu_(x.clone(), s)
for _lo, _hi in [(0.1, 0.3), (0.3, 0.1), (-1, -0.5)]:
    ACTS[f"rrelu-eval-{_lo},{_hi}"] = lambda m, x, lo=_lo, hi=_hi: _f(m).rrelu(x, lo, hi)
    ACTS[f"RReLU-eval-{_lo},{_hi}"] = lambda m, x, lo=_lo, hi=_hi: m.nn.RReLU(lo, hi).eval()(x)
    ACTS[f"rrelu_-eval-{_lo},{_hi}"] = lambda m, x, lo=_lo, hi=_hi: _f(m).rrelu_(x.clone(), lo,
                                                                                 hi)
ACTS["rrelu-training-equal-bounds"] = lambda m, x: _f(m).rrelu(x, 0.2, 0.2, training=True)
ACTS["rrelu-training-bounds-swapped"] = lambda m, x: _f(m).rrelu(x, 0.3, 0.1, training=True)
for _ap in ["none", "tanh", "foo", None]:
    ACTS[f"gelu-approximate={_ap}"] = lambda m, x, ap=_ap: _f(m).gelu(x, approximate=ap)
for _d in [0, 1, -1, 2, -3]:
    ACTS[f"glu-dim={_d}"] = lambda m, x, d=_d: _f(m).glu(x, d)
for _w in [(1,), (5,), (2,), (1, 1), ()]:
    ACTS[f"prelu-2d-weight{_w}"] = lambda m, x, w=_w: _f(m).prelu(x, m.full(w, 0.25,
                                                                             dtype=x.dtype))
    ACTS[f"prelu-1d-weight{_w}"] = lambda m, x, w=_w: _f(m).prelu(x[0], m.full(w, 0.25,
                                                                                dtype=x.dtype))
    ACTS[f"prelu-0d-weight{_w}"] = lambda m, x, w=_w: _f(m).prelu(x[0, 0], m.full(
        w, 0.25, dtype=x.dtype))
ACTS["prelu-long-weight"] = lambda m, x: _f(m).prelu(x, m.ones(1, dtype=m.int64))
ACTS["PReLU-float32-weight"] = lambda m, x: m.nn.PReLU()(x)
ACTS["PReLU-channel-mismatch"] = lambda m, x: m.nn.PReLU(3, dtype=x.dtype)(x)


def _act_run(m, name, dtype):
    x = m.tensor(XA, dtype=getattr(m, dtype), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            y = ACTS[name](m, x * 1)
        except Exception as e:  # noqa: BLE001
            return ("raise", type(e).__name__, str(e))
        try:
            y.sum().backward()
        except Exception as e:  # noqa: BLE001
            return ("backward raises", type(e).__name__, str(e), y.detach().float())
    return ("ok", y.detach().float(), str(y.dtype).split(".")[-1], x.grad.float())


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(ACTS))
def test_activation_arguments_match_torch(name, dtype):
    theirs = _act_run(torch, name, dtype)
    ours = _act_run(torchlike, name, dtype)
    assert ours[0] == theirs[0], f"torchlike {ours}; torch {theirs}"
    if theirs[0] == "raise":
        assert ours == theirs
    elif theirs[0] == "backward raises":
        assert ours[:3] == theirs[:3] and _close(ours[3], theirs[3])
    else:
        assert ours[2] == theirs[2], "dtype"
        assert _close(ours[1], theirs[1]), f"value {ours[1]} != torch {theirs[1]}"
        if name == "celu_-alpha=inf":
            # (torch's in-place celu backward with an infinite alpha gives NaN or 1 for the
            # negative inputs by its CPU kernel's vector width: all NaN for float64 where the
            # CPU lacks avx512, 1 elsewhere; DIFFERENCES.md)
            assert _close(ours[3][1], theirs[3][1]) and ours[3][0].isnan()[-1]
            assert all(g != g or g == 1.0 for g in theirs[3][0][:-1].tolist())
            assert ours[3][0][:-1].tolist() == [1.0] * 4
            return
        assert _close(ours[3], theirs[3]), f"gradient {ours[3]} != torch {theirs[3]}"


def test_softplus_beta_zero_gradient_is_torchs_half():
    x = torchlike.tensor([-1.0, 0.0, 2.0], requires_grad=True)
    torchlike.nn.Softplus(beta=0)(x).sum().backward()
    assert x.grad.tolist() == [0.5, 0.5, 0.5]


def test_prelu_channel_mismatch_message_is_torchs():
    both_outcomes(lambda m: m.nn.functional.prelu(m.zeros(2, 5), m.ones(2)))


def test_celu_zero_alpha_message_is_torchs():
    both_outcomes(lambda m: m.nn.functional.celu(m.zeros(2), alpha=0.0))


def test_softshrink_negative_lambda_raises_as_torch():
    for dt in ("float32", "float64", "float16", "bfloat16"):
        both_outcomes(lambda m: m.nn.functional.softshrink(m.zeros(2, dtype=getattr(m, dt)),
                                                           -0.5))


FLOAT_KERNELS = ["elu", "selu", "celu", "softplus", "softshrink", "hardshrink", "leaky_relu",
                 "gelu", "glu", "hardsigmoid", "hardswish", "silu", "mish", "logsigmoid",
                 "rrelu", "rrelu_training", "relu6", "hardtanh", "prelu"]


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool", "float16", "complex64"])
@pytest.mark.parametrize("name", FLOAT_KERNELS)
def test_activation_of_integer_bool_or_complex_input_as_torch(name, dtype):
    def run(m):
        x = m.tensor([1, 2, 0, 4]).to(getattr(m, dtype))
        F = m.nn.functional
        if name == "prelu":
            return F.prelu(x, m.ones(1, dtype=x.dtype))
        if name == "rrelu_training":
            return F.rrelu(x, 0.2, 0.2, training=True)
        return getattr(F, name)(x)
    res = both_outcomes(run)
    if res is not None:
        assert str(res[0].dtype) == str(res[1].dtype)


NUMBER_ARGS = {
    "elu-alpha": lambda m, v: _f(m).elu(m.ones(2), alpha=v),
    "elu_-alpha": lambda m, v: _f(m).elu_(m.ones(2), alpha=v),
    "celu-alpha": lambda m, v: _f(m).celu(m.ones(2), alpha=v),
    "leaky_relu-slope": lambda m, v: _f(m).leaky_relu(m.ones(2), v),
    "hardtanh_-min": lambda m, v: _f(m).hardtanh_(m.ones(2), v, 1.0),
    "softplus-beta": lambda m, v: _f(m).softplus(m.ones(2), beta=v),
    "softplus-threshold": lambda m, v: _f(m).softplus(m.ones(2), threshold=v),
    "softshrink-lambd": lambda m, v: _f(m).softshrink(m.ones(2), v),
    "hardshrink-lambd": lambda m, v: _f(m).hardshrink(m.ones(2), v),
    "threshold-threshold": lambda m, v: _f(m).threshold(m.ones(2), v, 0.0),
    "threshold-value": lambda m, v: _f(m).threshold(m.ones(2), 0.0, v),
    "rrelu-lower": lambda m, v: _f(m).rrelu(m.ones(2), v, 0.3),
    "glu-dim": lambda m, v: _f(m).glu(m.ones(2, 2), v),
    "addmm-beta": lambda m, v: m.addmm(m.ones(2, 2), m.ones(2, 2), m.ones(2, 2), beta=v),
    "addmm-method-beta": lambda m, v: m.ones(2, 2).addmm(m.ones(2, 2), m.ones(2, 2), beta=v),
    "addmm_-alpha": lambda m, v: m.ones(2, 2).addmm_(m.ones(2, 2), m.ones(2, 2), alpha=v),
    "addmv-alpha": lambda m, v: m.addmv(m.ones(2), m.ones(2, 2), m.ones(2), alpha=v),
    "addr-beta": lambda m, v: m.addr(m.ones(2, 2), m.ones(2), m.ones(2), beta=v),
    "baddbmm-beta": lambda m, v: m.baddbmm(m.ones(1, 2, 2), m.ones(1, 2, 2), m.ones(1, 2, 2),
                                           beta=v),
    "addbmm-beta": lambda m, v: m.addbmm(m.ones(2, 2), m.ones(1, 2, 2), m.ones(1, 2, 2), beta=v),
    "tensordot-dims": lambda m, v: m.tensordot(m.ones(2, 2), m.ones(2, 2), dims=v),
}


@pytest.mark.parametrize("value", ["a", None, [1.0], 1.5], ids=["str", "none", "list", "float"])
@pytest.mark.parametrize("name", sorted(NUMBER_ARGS))
def test_non_number_parameters_raise_as_torch(name, value):
    both_outcomes(lambda m: NUMBER_ARGS[name](m, value))


@pytest.mark.parametrize("call", [
    lambda m, x: m.nn.functional.softmax(x), lambda m, x: m.nn.functional.log_softmax(x),
    lambda m, x: m.nn.functional.softmin(x), lambda m, x: m.nn.Softmax()(x),
    lambda m, x: m.nn.LogSoftmax()(x), lambda m, x: m.nn.functional.softmax(x, _stacklevel=2)],
    ids=["softmax", "log_softmax", "softmin", "Softmax", "LogSoftmax", "stacklevel_2"])
def test_implicit_softmax_dim_warns_where_torch_points(call):
    """The implicit-dim deprecation warning names the frame torch's does: the caller of a
    function, a module's call (``module.py``) for a module, ``_stacklevel``'s frame if given."""
    import os
    files = []
    for m in (torch, torchlike):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            call(m, m.ones(2, 3))
        msgs = [r for r in w if "Implicit dimension choice" in str(r.message)]
        assert len(msgs) == 1, [str(r.message) for r in w]
        files.append(os.path.basename(msgs[0].filename))
    assert files[1] == files[0]
