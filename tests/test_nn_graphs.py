"""Composite graphs as torch records them: ``grad_fn`` names and ``next_functions`` order.

Each row builds the same expression under torch and torchlike and compares the graph two
levels deep: the output's ``grad_fn`` class name and, in order, its next functions' names and
theirs. ``(None, 0)`` entries (inputs that need no gradient) are dropped on both sides: the
tape records edges only for inputs that need grad (DIFFERENCES.md, "next_functions omits None").
Rows whose node names come from ops torchlike names differently are listed in KNOWN with why.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike

rng = np.random.default_rng(0)
X2 = rng.standard_normal((3, 4)).astype(np.float32)
X1 = rng.standard_normal(4).astype(np.float32)
X3 = rng.standard_normal((2, 3, 4)).astype(np.float32)
W = rng.standard_normal((5, 4)).astype(np.float32)
B = rng.standard_normal(5).astype(np.float32)
IMG = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
CW = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
CB = rng.standard_normal(4).astype(np.float32)
T = np.array([1, 0, 3])
P = (rng.random((3, 4)) * 0.8 + 0.1).astype(np.float32)


def L(m, a, rg=True):
    t = m.tensor(a)
    if rg and a.dtype.kind == "f":
        t.requires_grad_(True)
    return t


def graph(out, m, depth=2):
    node = out.grad_fn

    def rec(n, d):
        if n is None:
            return None
        s = n.name()
        if d == 0:
            return s
        kids = [rec(c, d - 1) for c, _ in n.next_functions]
        return (s, tuple(k for k in kids if k is not None))
    return rec(node, depth)


CASES = {
 "linear2d": lambda m, F: F.linear(L(m, X2), L(m, W), L(m, B)),
 "linear2d_nob": lambda m, F: F.linear(L(m, X2), L(m, W)),
 "linear1d": lambda m, F: F.linear(L(m, X1), L(m, W), L(m, B)),
 "linear1d_nob": lambda m, F: F.linear(L(m, X1), L(m, W)),
 "linear3d": lambda m, F: F.linear(L(m, X3), L(m, W), L(m, B)),
 "linear3d_nob": lambda m, F: F.linear(L(m, X3), L(m, W)),
 "linear2d_xnograd": lambda m, F: F.linear(L(m, X2, False), L(m, W), L(m, B)),
 # a strided input: torch's matmul of it, then the bias added in place
 "linear3d_strided": lambda m, F: F.linear(L(m, X3).transpose(0, 1), L(m, W), L(m, B)),
 "linear3d_strided_nob": lambda m, F: F.linear(L(m, X3).transpose(0, 1), L(m, W)),
 "linear4d": lambda m, F: F.linear(L(m, X3).reshape(2, 3, 1, 4) * 1, L(m, W), L(m, B)),
 "linear4d_strided": lambda m, F: F.linear(L(m, X3).reshape(2, 3, 1, 4).transpose(0, 1),
                                          L(m, W), L(m, B)),
 "cross_entropy": lambda m, F: F.cross_entropy(L(m, X2), m.tensor(T)),
 "cross_entropy_sum": lambda m, F: F.cross_entropy(L(m, X2), m.tensor(T), reduction="sum"),
 "cross_entropy_none": lambda m, F: F.cross_entropy(L(m, X2), m.tensor(T), reduction="none"),
 "cross_entropy_probs": lambda m, F: F.cross_entropy(L(m, X2), L(m, P, False)),
 "cross_entropy_ls": lambda m, F: F.cross_entropy(L(m, X2), m.tensor(T), label_smoothing=0.1),
 "nll": lambda m, F: F.nll_loss(L(m, X2), m.tensor(T)),
 "bce_logits": lambda m, F: F.binary_cross_entropy_with_logits(L(m, X2), L(m, P, False)),
 "bce_logits_w": lambda m, F: F.binary_cross_entropy_with_logits(L(m, X2), L(m, P, False), weight=L(m, X1, False)),
 "bce": lambda m, F: F.binary_cross_entropy(L(m, P), L(m, P, False)),
 "mse": lambda m, F: F.mse_loss(L(m, X2), L(m, P, False)),
 "mse_sum": lambda m, F: F.mse_loss(L(m, X2), L(m, P, False), reduction="sum"),
 "mse_none": lambda m, F: F.mse_loss(L(m, X2), L(m, P, False), reduction="none"),
 "l1": lambda m, F: F.l1_loss(L(m, X2), L(m, P, False)),
 "smooth_l1": lambda m, F: F.smooth_l1_loss(L(m, X2), L(m, P, False)),
 "huber": lambda m, F: F.huber_loss(L(m, X2), L(m, P, False)),
 "kl_div": lambda m, F: F.kl_div(L(m, X2), L(m, P, False), reduction="batchmean"),
 "softmax": lambda m, F: F.softmax(L(m, X2), 1),
 "log_softmax": lambda m, F: F.log_softmax(L(m, X2), 1),
 "relu": lambda m, F: F.relu(L(m, X2)),
 "gelu": lambda m, F: F.gelu(L(m, X2)),
 "silu": lambda m, F: F.silu(L(m, X2)),
 "elu": lambda m, F: F.elu(L(m, X2)),
 "leaky_relu": lambda m, F: F.leaky_relu(L(m, X2)),
 "softplus": lambda m, F: F.softplus(L(m, X2)),
 "hardtanh": lambda m, F: F.hardtanh(L(m, X2)),
 "relu6": lambda m, F: F.relu6(L(m, X2)),
 "layer_norm": lambda m, F: F.layer_norm(L(m, X2), (4,), L(m, X1), L(m, X1)),
 "layer_norm_nw": lambda m, F: F.layer_norm(L(m, X2), (4,)),
 "group_norm": lambda m, F: F.group_norm(L(m, IMG), 3, L(m, CB[:3]), L(m, CB[:3])),
 "batch_norm": lambda m, F: F.batch_norm(L(m, IMG), None, None, L(m, CB[:3]), L(m, CB[:3]), True),
 "conv2d": lambda m, F: F.conv2d(L(m, IMG), L(m, CW), L(m, CB)),
 "conv2d_nob": lambda m, F: F.conv2d(L(m, IMG), L(m, CW)),
 "max_pool2d": lambda m, F: F.max_pool2d(L(m, IMG), 2),
 "avg_pool2d": lambda m, F: F.avg_pool2d(L(m, IMG), 2),
 "adaptive_avg_pool2d": lambda m, F: F.adaptive_avg_pool2d(L(m, IMG), 1),
 "dropout_eval": lambda m, F: F.dropout(L(m, X2), training=False),
 "embedding": lambda m, F: F.embedding(m.tensor(T), L(m, W)),
 "normalize": lambda m, F: F.normalize(L(m, X2)),
 "cosine_similarity": lambda m, F: F.cosine_similarity(L(m, X2), L(m, P)),
 "pad": lambda m, F: F.pad(L(m, X2), (1, 1)),
 "interpolate": lambda m, F: F.interpolate(L(m, IMG), scale_factor=2),
 "interpolate_bil": lambda m, F: F.interpolate(L(m, IMG), scale_factor=2, mode="bilinear"),
 "sdpa": lambda m, F: F.scaled_dot_product_attention(L(m, X3), L(m, X3), L(m, X3)),
 "glu": lambda m, F: F.glu(L(m, X2)),
 "one_hot_mul": lambda m, F: F.one_hot(m.tensor(T), 4) * L(m, X2),
 "pixel_shuffle": lambda m, F: F.pixel_shuffle(L(m, rng.standard_normal((1, 4, 2, 2)).astype(np.float32)), 2),
 "lstm_hn": lambda m, F: (lambda net: net(L(m, X3))[1][0])(m.nn.LSTM(4, 3)),
 "lstm_out": lambda m, F: (lambda net: net(L(m, X3))[0])(m.nn.LSTM(4, 3)),
 "gru_hn": lambda m, F: (lambda net: net(L(m, X3))[1])(m.nn.GRU(4, 3)),
 "mha": lambda m, F: (lambda net: net(L(m, X3), L(m, X3), L(m, X3))[0])(m.nn.MultiheadAttention(4, 2)),
}


# rows whose remaining difference is a name owned by another op, with the reason
KNOWN = {
    "kl_div": "kl_div is one op here; torch composes xlogy/sub/sum/div",
    "normalize": "normalize is one op here; torch composes norm/clamp_min/expand/div",
    "cosine_similarity": "one op here; torch composes norms and divisions",
    "sdpa": "torch's CPU math path composes bmm/softmax; torchlike runs one fused op",
    "gru_hn": "torch's CPU GRU is unrolled (AddBackward0 per step); torchlike's recurrence is "
              "one scan op named StackBackward0",
    "mha": "MultiheadAttention is one op here; torch composes linear/bmm/softmax",
}


@pytest.mark.parametrize("name", list(CASES))
def test_graph_as_torch(name):
    fn = CASES[name]
    tg = graph(fn(torch, torch.nn.functional), torch)
    lg = graph(fn(torchlike, torchlike.nn.functional), torchlike)
    if name in KNOWN:
        # the top node at least is torch's, unless the whole composite is one op
        if tg == lg:
            pytest.fail(f"{name} now matches torch: remove it from KNOWN")
        pytest.xfail(KNOWN[name])
    assert lg == tg, f"{name}: torchlike {lg} != torch {tg}"


def test_linear_values_and_grads_through_the_composite():
    for xs in (X1, X2, X3):
        for bias in (True, False):
            res = []
            for m in (torch, torchlike):
                x, w = L(m, xs), L(m, W)
                b = L(m, B) if bias else None
                y = m.nn.functional.linear(x, w, b)
                (y * y).sum().backward()
                res.append([np.asarray(t.detach().tolist()) for t in
                            [y, x.grad, w.grad] + ([b.grad] if bias else [])])
            for a, b_ in zip(*res):
                np.testing.assert_allclose(b_, a, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("grad", [True, False])
@pytest.mark.parametrize("form", ["1d", "2d", "3d", "3d strided", "4d", "4d strided", "rows of 3"])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_output_is_a_view_where_torchs_is(form, bias, grad):
    """F.linear's result is a view of its 2-D product for a contiguous input of more than 2
    dimensions with a bias (torch flattens it), and not otherwise (matmul's reshape back, or the
    in-place bias add of a strided input's product); with or without autograd recording."""
    res = []
    for m in (torch, torchlike):
        x = m.tensor(np.arange(72, dtype=np.float32).reshape(3, 2, 3, 4) / 10)
        x = {"1d": x[0, 0, 0], "2d": x[0, 0], "3d": x[0], "3d strided": x[0].transpose(0, 1),
             "4d": x, "4d strided": x.transpose(1, 2), "rows of 3": x[1:, 0]}[form]
        w, b = L(m, W, grad), L(m, B, grad)
        y = m.nn.functional.linear(x, w, b if bias else None)
        res.append((y._is_view(), tuple(y.shape), y.detach().numpy()))
    assert res[1][:2] == res[0][:2]
    np.testing.assert_allclose(res[1][2], res[0][2], rtol=1e-5, atol=1e-5)
