"""The grad_fn node each loss ends in, as torch names it, for every reduction.

torch's C++ losses divide and multiply by Python numbers through ATen's Tensor-Scalar overloads
(``DivBackward1``, ``MulBackward1``, ``AddBackward1``), where a Python ``t / 2`` is
``DivBackward0``; its Python losses end in the node of their last op (kl_div's "batchmean"
division, gaussian_nll_loss's and poisson_nll_loss's in-place addition of the full term).
Compared: ``type(loss.grad_fn).__name__``, ``loss.grad_fn.name()`` and, two levels down, the
names of the next functions.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchlike

R = np.random.default_rng(5)
N, C = 4, 3
X = R.standard_normal((N, C)).astype(np.float32)
Y = R.standard_normal((N, C)).astype(np.float32)
P = R.random((N, C)).astype(np.float32)
P /= P.sum(1, keepdims=True)
T = np.array([0, 2, 1, 2])
B01 = R.integers(0, 2, (N, C)).astype(np.float32)
SG = np.where(Y >= 0, 1.0, -1.0).astype(np.float32)
V = (R.random((N, C)) + 0.5).astype(np.float32)
ML = np.array([[0, 2, -1], [1, -1, 0], [2, 1, 0], [0, -1, 1]])
X3 = R.standard_normal((N, C, 2)).astype(np.float32)
P3 = R.random((N, C, 2)).astype(np.float32)
P3 /= P3.sum(1, keepdims=True)
T3 = R.integers(0, C, (N, 2))
CTC = R.standard_normal((5, 2, 4)).astype(np.float32)
CT = np.array([[1, 2, 0], [3, 1, 2]])


def L(m, a, grad=True):
    t = m.tensor(a)
    return t.requires_grad_(True) if grad and a.dtype.kind == "f" else t


LOSSES = {
    "cross_entropy": lambda m, F, r: F.cross_entropy(L(m, X), m.tensor(T), reduction=r),
    "cross_entropy_ls": lambda m, F, r: F.cross_entropy(L(m, X), m.tensor(T), reduction=r,
                                                        label_smoothing=0.2),
    "cross_entropy_ls_weight": lambda m, F, r: F.cross_entropy(
        L(m, X), m.tensor(T), reduction=r, label_smoothing=0.2, weight=m.tensor(V[0])),
    "cross_entropy_ls_ignore": lambda m, F, r: F.cross_entropy(
        L(m, X), m.tensor(T), reduction=r, label_smoothing=0.1, ignore_index=2),
    "cross_entropy_probs": lambda m, F, r: F.cross_entropy(L(m, X), L(m, P, False),
                                                           reduction=r),
    "cross_entropy_probs_target_grad": lambda m, F, r: F.cross_entropy(L(m, X), L(m, P),
                                                                       reduction=r),
    "cross_entropy_probs_ls": lambda m, F, r: F.cross_entropy(
        L(m, X), L(m, P, False), reduction=r, label_smoothing=0.2),
    "cross_entropy_probs_ls_target_grad": lambda m, F, r: F.cross_entropy(
        L(m, X), L(m, P), reduction=r, label_smoothing=0.2),
    "cross_entropy_probs_weight": lambda m, F, r: F.cross_entropy(
        L(m, X), L(m, P, False), reduction=r, weight=m.tensor(V[0])),
    "cross_entropy_probs_ls_weight": lambda m, F, r: F.cross_entropy(
        L(m, X), L(m, P, False), reduction=r, label_smoothing=0.3, weight=m.tensor(V[0])),
    "cross_entropy_probs_unbatched": lambda m, F, r: F.cross_entropy(
        L(m, X[0]), L(m, P[0], False), reduction=r),
    "cross_entropy_probs_2d": lambda m, F, r: F.cross_entropy(L(m, X3), L(m, P3, False),
                                                              reduction=r),
    "cross_entropy_2d_ls": lambda m, F, r: F.cross_entropy(L(m, X3), m.tensor(T3), reduction=r,
                                                           label_smoothing=0.2),
    "nll_loss": lambda m, F, r: F.nll_loss(L(m, X), m.tensor(T), reduction=r),
    "mse_loss": lambda m, F, r: F.mse_loss(L(m, X), L(m, Y), reduction=r),
    "l1_loss": lambda m, F, r: F.l1_loss(L(m, X), L(m, Y), reduction=r),
    "smooth_l1_loss": lambda m, F, r: F.smooth_l1_loss(L(m, X), L(m, Y), reduction=r),
    "smooth_l1_loss_beta0": lambda m, F, r: F.smooth_l1_loss(L(m, X), L(m, Y), reduction=r,
                                                             beta=0.0),
    "SmoothL1Loss_beta0": lambda m, F, r: m.nn.SmoothL1Loss(reduction=r, beta=0)(L(m, X),
                                                                                 L(m, Y)),
    "huber_loss": lambda m, F, r: F.huber_loss(L(m, X), L(m, Y), reduction=r),
    "binary_cross_entropy": lambda m, F, r: F.binary_cross_entropy(
        m.sigmoid(L(m, X)), L(m, B01), reduction=r),
    "binary_cross_entropy_with_logits": lambda m, F, r: F.binary_cross_entropy_with_logits(
        L(m, X), L(m, B01), reduction=r),
    "kl_div": lambda m, F, r: F.kl_div(L(m, X), L(m, P), reduction=r),
    "kl_div_log_target": lambda m, F, r: F.kl_div(L(m, X), L(m, P), reduction=r,
                                                  log_target=True),
    "poisson_nll_loss": lambda m, F, r: F.poisson_nll_loss(L(m, X), L(m, V), reduction=r),
    "poisson_nll_loss_full": lambda m, F, r: F.poisson_nll_loss(L(m, X), L(m, V * 3),
                                                                full=True, reduction=r),
    "poisson_nll_loss_no_log": lambda m, F, r: F.poisson_nll_loss(
        L(m, V), L(m, V), log_input=False, reduction=r),
    "poisson_nll_loss_no_log_full": lambda m, F, r: F.poisson_nll_loss(
        L(m, V), L(m, V * 3), log_input=False, full=True, reduction=r),
    "gaussian_nll_loss": lambda m, F, r: F.gaussian_nll_loss(L(m, X), L(m, Y), L(m, V),
                                                             reduction=r),
    "gaussian_nll_loss_full": lambda m, F, r: F.gaussian_nll_loss(
        L(m, X), L(m, Y), L(m, V), full=True, reduction=r),
    "hinge_embedding_loss": lambda m, F, r: F.hinge_embedding_loss(L(m, X), L(m, SG),
                                                                   reduction=r),
    "soft_margin_loss": lambda m, F, r: F.soft_margin_loss(L(m, X), L(m, SG, False),
                                                           reduction=r),
    "multilabel_soft_margin_loss": lambda m, F, r: F.multilabel_soft_margin_loss(
        L(m, X), L(m, B01), reduction=r),
    "multilabel_soft_margin_loss_weight": lambda m, F, r: F.multilabel_soft_margin_loss(
        L(m, X), L(m, B01), weight=m.tensor(V[0]), reduction=r),
    "multilabel_margin_loss": lambda m, F, r: F.multilabel_margin_loss(L(m, X), m.tensor(ML),
                                                                       reduction=r),
    "multi_margin_loss": lambda m, F, r: F.multi_margin_loss(L(m, X), m.tensor(T), reduction=r),
    "multi_margin_loss_weight": lambda m, F, r: F.multi_margin_loss(
        L(m, X), m.tensor(T), weight=m.tensor(V[0]), reduction=r),
    "cosine_embedding_loss": lambda m, F, r: F.cosine_embedding_loss(
        L(m, X), L(m, Y), m.tensor(SG[:, 0]), reduction=r),
    "margin_ranking_loss": lambda m, F, r: F.margin_ranking_loss(L(m, X), L(m, Y), L(m, SG),
                                                                 reduction=r),
    "triplet_margin_loss": lambda m, F, r: F.triplet_margin_loss(L(m, X), L(m, Y), L(m, V),
                                                                 reduction=r),
    "triplet_margin_loss_swap": lambda m, F, r: F.triplet_margin_loss(
        L(m, X), L(m, Y), L(m, V), swap=True, reduction=r),
    "ctc_loss": lambda m, F, r: F.ctc_loss(m.log_softmax(L(m, CTC), 2), m.tensor(CT),
                                           m.tensor([5, 5]), m.tensor([2, 3]), reduction=r),
}

# losses torchlike runs as one op where torch composes several: only the top node is compared
ONE_OP = {"kl_div", "kl_div_log_target", "poisson_nll_loss", "poisson_nll_loss_full",
          "poisson_nll_loss_no_log", "poisson_nll_loss_no_log_full", "gaussian_nll_loss",
          "gaussian_nll_loss_full", "hinge_embedding_loss", "multilabel_soft_margin_loss",
          "multilabel_soft_margin_loss_weight", "cosine_embedding_loss", "margin_ranking_loss",
          "triplet_margin_loss", "triplet_margin_loss_swap", "ctc_loss"}


def names(loss, depth):
    def rec(node, d):
        if node is None:
            return None
        if d == 0:
            return node.name()
        kids = [rec(c, d - 1) for c, _ in node.next_functions]
        return (node.name(), tuple(k for k in kids if k is not None))
    return type(loss.grad_fn).__name__, rec(loss.grad_fn, depth)


def build(m, name, reduction):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # kl_div's "mean" warning
        return LOSSES[name](m, m.nn.functional, reduction)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name", list(LOSSES))
def test_grad_fn_names_as_torch(name, reduction):
    depth = 0 if name in ONE_OP else 2
    assert names(build(torchlike, name, reduction), depth) == \
        names(build(torch, name, reduction), depth)


@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("shape", [(N, C), ()])
def test_kl_div_batchmean(shape, log_target):
    x = R.standard_normal(shape).astype(np.float32)
    p = R.random(shape).astype(np.float32)
    got = []
    for m in (torch, torchlike):
        xs, ps = L(m, x), L(m, p)
        loss = m.nn.functional.kl_div(xs, ps, reduction="batchmean", log_target=log_target)
        loss.backward()
        got.append((names(loss, 0), loss.item(), xs.grad.numpy(), ps.grad.numpy()))
    assert got[1][0] == got[0][0]
    np.testing.assert_allclose(got[1][1], got[0][1], rtol=1e-5)
    for a, b in zip(got[1][2:], got[0][2:]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kw", [{}, {"label_smoothing": 0.25}, {"reduction": "sum"},
                                {"reduction": "none", "label_smoothing": 0.1}])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_cross_entropy_probs_values_and_gradients(kw, dtype):
    # the Tensor-Scalar nodes compute as torch's: values, input and target gradients, dtype
    got = []
    for m in (torch, torchlike):
        xs = m.tensor(X).to(getattr(m, dtype)).requires_grad_(True)
        ps = m.tensor(P).to(getattr(m, dtype)).requires_grad_(True)
        loss = m.nn.functional.cross_entropy(xs, ps, **kw)
        (loss * m.linspace(0.5, 1.5, loss.numel()).reshape(loss.shape).to(loss.dtype)).sum() \
            .backward()
        got.append((loss.dtype, [t.detach().float().numpy() for t in (loss, xs.grad, ps.grad)]))
    assert str(got[1][0]).split(".")[-1] == str(got[0][0]).split(".")[-1]
    tol = 2e-2 if dtype == "bfloat16" else 1e-5
    for a, b in zip(got[1][1], got[0][1]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_cross_entropy_double_backward():
    got = []
    for m in (torch, torchlike):
        xs = L(m, X)
        loss = m.nn.functional.cross_entropy(xs, m.tensor(P), label_smoothing=0.2)
        (g,) = m.autograd.grad(loss, xs, create_graph=True)
        (g * g).sum().backward()
        got.append(xs.grad.numpy())
    np.testing.assert_allclose(got[1], got[0], rtol=1e-5, atol=1e-6)
