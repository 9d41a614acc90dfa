"""nn.functional vs torch through the oracle (values, dtypes, gradients), dropout statistics,
and default initialisation statistics of every layer type vs torch's."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import torchlike
from oracle import Case, check, check_raises

R = np.random.default_rng(7)


def f32(*shape, scale=1.0):
    return (R.standard_normal(shape) * scale).astype(np.float32)


def F(m):
    return m.nn.functional


CASES = [
    Case("softmax", lambda m, x: F(m).softmax(x, dim=1), (f32(3, 4),)),
    Case("softmax_neg", lambda m, x: F(m).softmax(x, dim=-1), (f32(2, 3, 4),)),
    Case("softmax_dtype", lambda m, x: F(m).softmax(x, dim=0, dtype=m.float64), (f32(3, 4),)),
    Case("log_softmax", lambda m, x: F(m).log_softmax(x, 1), (f32(3, 4),)),
    Case("softmin", lambda m, x: F(m).softmin(x, 0), (f32(3, 4),)),
    Case("linear", lambda m, x, w, b: F(m).linear(x, w, b), (f32(4, 3), f32(2, 3), f32(2))),
    Case("linear_nobias", lambda m, x, w: F(m).linear(x, w), (f32(5, 4, 3), f32(2, 3))),
    Case("bilinear", lambda m, a, b, w: F(m).bilinear(a, b, w), (f32(4, 2), f32(4, 3),
                                                                 f32(5, 2, 3))),
    Case("embedding", lambda m, i, w: F(m).embedding(i, w), (np.array([[0, 2], [1, 1]]),
                                                             f32(3, 4))),
    Case("embedding_pad", lambda m, i, w: F(m).embedding(i, w, padding_idx=1),
         (np.array([[0, 2], [1, 1]]), f32(3, 4))),
    Case("one_hot", lambda m, i: F(m).one_hot(i), (np.array([0, 3, 1]),), grad=False),
    Case("one_hot_n", lambda m, i: F(m).one_hot(i, 5), (np.array([[0, 3], [1, 4]]),),
         grad=False),
    Case("normalize", lambda m, x: F(m).normalize(x), (f32(3, 4),)),
    Case("normalize_p1_dim0", lambda m, x: F(m).normalize(x, p=1, dim=0), (f32(3, 4),)),
    Case("normalize_zero", lambda m, x: F(m).normalize(x, dim=-1),
         (np.array([[0.0, 0.0], [3.0, 4.0]], np.float32),)),
    Case("cosine_similarity", lambda m, a, b: F(m).cosine_similarity(a, b), (f32(3, 4),
                                                                             f32(3, 4))),
    Case("cosine_similarity_bcast", lambda m, a, b: F(m).cosine_similarity(a, b, dim=-1),
         (f32(3, 4), f32(1, 4))),
    Case("pairwise_distance", lambda m, a, b: F(m).pairwise_distance(a, b), (f32(3, 4),
                                                                             f32(3, 4))),
    Case("sdpa", lambda m, q, k, v: F(m).scaled_dot_product_attention(q, k, v),
         (f32(2, 3, 5, 4), f32(2, 3, 6, 4), f32(2, 3, 6, 4)), atol=1e-5),
    Case("sdpa_causal", lambda m, q, k, v: F(m).scaled_dot_product_attention(
        q, k, v, is_causal=True, scale=0.3), (f32(2, 5, 4), f32(2, 5, 4), f32(2, 5, 3))),
    Case("sdpa_boolmask", lambda m, q, k, v, msk: F(m).scaled_dot_product_attention(
        q, k, v, attn_mask=msk), (f32(2, 4, 4), f32(2, 6, 4), f32(2, 6, 3),
                                  np.array(R.random((4, 6)) > 0.3) | np.eye(4, 6, dtype=bool))),
    Case("sdpa_floatmask", lambda m, q, k, v, msk: F(m).scaled_dot_product_attention(
        q, k, v, attn_mask=msk), (f32(2, 4, 4), f32(2, 6, 4), f32(2, 6, 3), f32(4, 6))),
    Case("pad_constant", lambda m, x: F(m).pad(x, (1, 2), value=1.5), (f32(2, 3),)),
    Case("pad_constant_neg", lambda m, x: F(m).pad(x, (1, -1, 0, 2)), (f32(2, 3, 4),)),
    Case("pad_reflect", lambda m, x: F(m).pad(x, (2, 1, 1, 1), mode="reflect"),
         (f32(1, 2, 4, 4),)),
    Case("pad_replicate", lambda m, x: F(m).pad(x, (2, 1), mode="replicate"), (f32(1, 2, 4),)),
    Case("pad_circular", lambda m, x: F(m).pad(x, (1, 2, 2, 0), mode="circular"),
         (f32(1, 1, 3, 4),)),
    Case("interpolate_nearest", lambda m, x: F(m).interpolate(x, size=(5, 3)),
         (f32(1, 2, 3, 4),)),
    Case("interpolate_bilinear", lambda m, x: F(m).interpolate(
        x, scale_factor=1.5, mode="bilinear"), (f32(1, 2, 4, 4),)),
    Case("interpolate_nearest_exact", lambda m, x: F(m).interpolate(
        x, scale_factor=1.7, mode="nearest-exact"), (f32(1, 2, 4, 5),)),
    Case("interpolate_area", lambda m, x: F(m).interpolate(x, size=(3, 2), mode="area"),
         (f32(1, 2, 7, 5),)),
    Case("interpolate_nearest_scale", lambda m, x: F(m).interpolate(x, scale_factor=0.6),
         (f32(1, 2, 7, 5),)),
    Case("interpolate_trilinear", lambda m, x: F(m).interpolate(
        x, size=(3, 4, 2), mode="trilinear", align_corners=True), (f32(1, 1, 2, 3, 4),)),
    Case("interpolate_linear_scale", lambda m, x: F(m).interpolate(
        x, scale_factor=2.5, mode="linear"), (f32(2, 3, 4),)),
    Case("conv2d_fn", lambda m, x, w: F(m).conv2d(x, w, stride=2, padding=1),
         (f32(1, 2, 5, 5), f32(3, 2, 3, 3)), atol=1e-4),
    Case("conv1d_fn_same", lambda m, x, w, b: F(m).conv1d(x, w, b, padding="same"),
         (f32(1, 2, 7), f32(3, 2, 3), f32(3)), atol=1e-4),
    Case("max_pool2d_fn", lambda m, x: F(m).max_pool2d(x, 2), (f32(1, 2, 4, 4),)),
    Case("avg_pool2d_fn", lambda m, x: F(m).avg_pool2d(x, 2, 1), (f32(1, 2, 4, 4),)),
    Case("adaptive_avg_pool2d_fn", lambda m, x: F(m).adaptive_avg_pool2d(x, (2, 3)),
         (f32(1, 2, 5, 7),)),
    Case("layer_norm_fn", lambda m, x, w, b: F(m).layer_norm(x, (4,), w, b), (f32(3, 4),
                                                                             f32(4), f32(4))),
    Case("group_norm_fn", lambda m, x: F(m).group_norm(x, 2), (f32(3, 4, 2),)),
    Case("rms_norm_fn", lambda m, x, w: F(m).rms_norm(x, (4,), w), (f32(3, 4), f32(4))),
    Case("batch_norm_eval_fn", lambda m, x, rm, rv: F(m).batch_norm(x, rm.detach(),
                                                                    rv.detach()),
         (f32(4, 3), f32(3), np.abs(f32(3)) + 0.5)),
    Case("batch_norm_train_nostats", lambda m, x: F(m).batch_norm(x, None, None, training=True),
         (f32(4, 3),)),
    Case("gelu", lambda m, x: F(m).gelu(x, approximate="tanh"), (f32(5),)),
    Case("relu6", lambda m, x: F(m).relu6(x * 4), (f32(5),)),
    Case("hardtanh", lambda m, x: F(m).hardtanh(x, -0.5, 0.5), (f32(5),)),
    Case("elu", lambda m, x: F(m).elu(x, 2.0), (f32(5),)),
    Case("leaky_relu", lambda m, x: F(m).leaky_relu(x, 0.3), (f32(5),)),
    Case("prelu", lambda m, x, w: F(m).prelu(x, w), (f32(2, 3, 4), f32(3))),
    Case("glu", lambda m, x: F(m).glu(x, 1), (f32(2, 4, 3),)),
    Case("logsigmoid", lambda m, x: F(m).logsigmoid(x), (f32(5),)),
    Case("threshold", lambda m, x: F(m).threshold(x, 0.2, -1.0), (f32(5),)),
    Case("silu", lambda m, x: F(m).silu(x), (f32(5),)),
    Case("mish", lambda m, x: F(m).mish(x), (f32(5),)),
    Case("softplus", lambda m, x: F(m).softplus(x * 10), (f32(5),)),
    Case("relu_fn", lambda m, x: F(m).relu(x), (f32(5),)),
    Case("dropout_eval", lambda m, x: F(m).dropout(x, 0.5, training=False), (f32(5),)),
    Case("dropout_p0", lambda m, x: F(m).dropout(x, 0.0), (f32(5),)),
    Case("cross_entropy_fn", lambda m, x, y: F(m).cross_entropy(x, y, label_smoothing=0.1),
         (f32(4, 3), np.array([0, 2, 1, 2]))),
    Case("nll_fn", lambda m, x, y: F(m).nll_loss(x, y), (f32(4, 3), np.array([0, 2, 1, 2]))),
    Case("bce_logits_fn", lambda m, x, y: F(m).binary_cross_entropy_with_logits(x, y),
         (f32(4), np.array([0.0, 1.0, 1.0, 0.5], np.float32))),
    Case("mse_fn", lambda m, x, y: F(m).mse_loss(x, y, reduction="sum"), (f32(4), f32(4))),
    Case("kl_div_fn", lambda m, x, y: F(m).kl_div(x, y, reduction="batchmean"),
         (f32(3, 4), np.abs(f32(3, 4)))),
    Case("f64_linear", lambda m, x, w: F(m).linear(x, w),
         (R.standard_normal((3, 2)), R.standard_normal((4, 2)))),
    Case("f64_softmax", lambda m, x: F(m).softmax(x, 1), (R.standard_normal((3, 2)),)),
    Case("f64_layer_norm", lambda m, x: F(m).layer_norm(x, (2,)), (R.standard_normal((3, 2)),)),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_functional(case):
    check(case)


def test_inplace_activations():
    for name, kw in [("relu", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {}),
                     ("hardtanh", {}), ("silu", {}), ("threshold", dict(threshold=0.1,
                                                                        value=2.0))]:
        x = f32(6)
        outs = []
        for m in (torch, torchlike):
            t = m.tensor(x)
            r = getattr(F(m), name)(t, inplace=True, **kw)
            assert r is t
            outs.append(t.tolist())
        np.testing.assert_allclose(outs[1], outs[0], rtol=1e-6, atol=1e-6)


def test_inplace_on_leaf_requiring_grad_raises():
    check_raises(lambda m, x: F(m).relu(x.requires_grad_(), inplace=True), f32(3))


@pytest.mark.parametrize("fn", [
    lambda m, x, y: F(m).cross_entropy(x, y[:2]),
    lambda m, x, y: F(m).nll_loss(x, y.float()),
    lambda m, x, y: F(m).softmax(x, dim=3),
    lambda m, x, y: F(m).one_hot(y, 2),
    lambda m, x, y: F(m).glu(x[:, :3]),
    lambda m, x, y: F(m).binary_cross_entropy(x, x * 0),
    lambda m, x, y: F(m).dropout(x, 1.5),
    lambda m, x, y: F(m).linear(x, m.ones(5, 4)),
    lambda m, x, y: F(m).linear(x.reshape(2, 2, 3), m.ones(5, 4)),
    lambda m, x, y: F(m).embedding(y + 2, x),
    lambda m, x, y: F(m).embedding(y - 1, x),
    lambda m, x, y: F(m).cross_entropy(x, y + 1),
    lambda m, x, y: F(m).cross_entropy(x, y - 1, ignore_index=-2),
    lambda m, x, y: F(m).nll_loss(x, y + 1),
])
def test_functional_errors(fn):
    lerr, terr = check_raises(fn, f32(4, 3), np.array([0, 2, 1, 2]))
    if isinstance(terr, IndexError) or "mat1" in str(terr):
        assert str(lerr) == str(terr)


# ------------------------------------------------------------------ dropout statistics

@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_dropout_statistics_and_gradient(p):
    torchlike.manual_seed(0)
    x = torchlike.ones(200, 200, requires_grad=True)
    y = torchlike.nn.functional.dropout(x, p)
    a = np.asarray(y.detach())
    kept = a != 0
    assert abs(kept.mean() - (1 - p)) < 0.01
    np.testing.assert_allclose(a[kept], 1 / (1 - p), rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), a, rtol=1e-6)
    # the module: train mode drops, eval mode is the identity
    d = torchlike.nn.Dropout(p)
    assert float((d(torchlike.ones(1000)) == 0).float().mean()) > 0
    d.eval()
    assert d(x) is x


def test_dropout_reproducible_with_seed_and_advancing():
    torchlike.manual_seed(3)
    a = torchlike.nn.functional.dropout(torchlike.ones(100)).tolist()
    b = torchlike.nn.functional.dropout(torchlike.ones(100)).tolist()
    torchlike.manual_seed(3)
    assert torchlike.nn.functional.dropout(torchlike.ones(100)).tolist() == a
    assert a != b


def test_dropout2d_channelwise():
    torchlike.manual_seed(0)
    y = torchlike.nn.Dropout2d(0.5)(torchlike.ones(8, 16, 3, 3))
    a = np.asarray(y).reshape(8, 16, 9)
    assert np.all((a == a[..., :1]))
    assert 0 < (a[..., 0] == 0).mean() < 1


def test_alpha_dropout_keeps_selu_statistics():
    torchlike.manual_seed(0)
    x = torchlike.randn(400, 400)
    y = torchlike.nn.AlphaDropout(0.3)(x)
    a = np.asarray(y)
    assert abs(a.mean()) < 0.02 and abs(a.std() - 1) < 0.03
    t = torch.nn.AlphaDropout(0.3)(torch.randn(400, 400))
    assert abs(t.mean().item() - a.mean()) < 0.03 and abs(t.std().item() - a.std()) < 0.03


# ------------------------------------------------------------------ init statistics

INIT_CTORS = {
    "Linear": lambda nn: nn.Linear(200, 300),
    "Conv1d": lambda nn: nn.Conv1d(16, 32, 5),
    "Conv2d": lambda nn: nn.Conv2d(8, 64, 3),
    "Conv2d_groups": lambda nn: nn.Conv2d(8, 64, 3, groups=4),
    "ConvTranspose2d": lambda nn: nn.ConvTranspose2d(16, 32, 3),
    "Embedding": lambda nn: nn.Embedding(300, 64, padding_idx=3),
    "Bilinear": lambda nn: nn.Bilinear(20, 30, 40),
    "PReLU": lambda nn: nn.PReLU(5),
    "LayerNorm": lambda nn: nn.LayerNorm(10),
    "BatchNorm2d": lambda nn: nn.BatchNorm2d(10),
    "GroupNorm": lambda nn: nn.GroupNorm(2, 10),
    "RMSNorm": lambda nn: nn.RMSNorm(10),
}


@pytest.mark.parametrize("name", list(INIT_CTORS), ids=str)
def test_default_init_statistics(name):
    torch.manual_seed(0)
    torchlike.manual_seed(0)
    tm = INIT_CTORS[name](torch.nn)
    lm = INIT_CTORS[name](torchlike.nn)
    tsd, lsd = tm.state_dict(), lm.state_dict()
    assert list(tsd) == list(lsd)
    for k in tsd:
        t = tsd[k].double().numpy() if tsd[k].is_floating_point() else tsd[k].numpy()
        l = np.asarray(lsd[k]).astype(t.dtype)
        assert t.shape == l.shape and str(tsd[k].dtype) == str(lsd[k].dtype), k
        if t.size < 50 or t.std() == 0:
            if t.std() == 0:
                np.testing.assert_array_equal(l, t, err_msg=k)
            continue
        # same family of distribution: bounds, mean and std agree
        n = t.size
        tol = 4 * t.std() / math.sqrt(n) + 1e-6
        assert abs(l.mean() - t.mean()) < tol + 0.02 * t.std(), k
        assert abs(l.std() - t.std()) < (0.03 + 5 / math.sqrt(2 * n)) * t.std(), k
        if name != "Embedding":
            bound = max(abs(t.min()), abs(t.max()))
            assert np.abs(l).max() <= bound * 1.02, k
            assert np.abs(l).max() >= bound * 0.9, k
    if name == "Embedding":
        assert np.all(np.asarray(lm.weight.detach())[3] == 0)


@pytest.mark.parametrize("fn,bounded", [
    (lambda nn, w: nn.init.xavier_uniform_(w), True),
    (lambda nn, w: nn.init.xavier_normal_(w, gain=2), False),
    (lambda nn, w: nn.init.kaiming_uniform_(w, nonlinearity="relu"), True),
    (lambda nn, w: nn.init.kaiming_normal_(w, mode="fan_out"), False),
    (lambda nn, w: nn.init.trunc_normal_(w, std=0.5, a=-0.3, b=0.6), True),
    (lambda nn, w: nn.init.orthogonal_(w), False), (lambda nn, w: nn.init.uniform_(w, -2, 3), True),
    (lambda nn, w: nn.init.normal_(w, 1, 0.5), False),
])
def test_init_functions_statistics(fn, bounded):
    tw = torch.empty(120, 80)
    lw = torchlike.empty(120, 80)
    fn(torch.nn, tw)
    fn(torchlike.nn, lw)
    t, l = tw.numpy().astype(np.float64), np.asarray(lw).astype(np.float64)
    assert abs(l.mean() - t.mean()) < 4 * t.std() / math.sqrt(t.size) + 1e-3
    assert abs(l.std() - t.std()) < 0.05 * t.std()
    if bounded:
        assert l.min() >= t.min() - 0.01 * t.std() and l.max() <= t.max() + 0.01 * t.std()
        assert l.min() <= t.min() + 0.05 * t.std() and l.max() >= t.max() - 0.05 * t.std()


def test_init_exact():
    for fn in (lambda nn, w: nn.init.eye_(w), lambda nn, w: nn.init.constant_(w, 0.3),
               lambda nn, w: nn.init.ones_(w), lambda nn, w: nn.init.zeros_(w)):
        tw, lw = torch.empty(3, 4), torchlike.empty(3, 4)
        fn(torch.nn, tw)
        fn(torchlike.nn, lw)
        np.testing.assert_array_equal(np.asarray(lw), tw.numpy())
    tw, lw = torch.empty(4, 2, 3, 3), torchlike.empty(4, 2, 3, 3)
    torch.nn.init.dirac_(tw, 2)
    torchlike.nn.init.dirac_(lw, 2)
    np.testing.assert_array_equal(np.asarray(lw), tw.numpy())
    for g in ("linear", "relu", "tanh", "selu", "sigmoid", "conv2d"):
        assert torchlike.nn.init.calculate_gain(g) == torch.nn.init.calculate_gain(g)
    assert torchlike.nn.init.calculate_gain("leaky_relu", 0.2) == \
        torch.nn.init.calculate_gain("leaky_relu", 0.2)
    q = torchlike.empty(6, 4)
    torchlike.nn.init.orthogonal_(q)
    a = np.asarray(q)
    np.testing.assert_allclose(a.T @ a, np.eye(4), atol=1e-5)


# ------------------------------------------------------------------ ties in max pooling

@pytest.mark.parametrize("fn", [
    lambda m, x: F(m).max_pool2d(x, 2),
    lambda m, x: F(m).max_pool2d(x, 3, 1, 1),
    lambda m, x: F(m).max_pool2d(x, 2, 1, dilation=2),
    lambda m, x: F(m).max_pool2d(x, 2, return_indices=True)[0],
    lambda m, x: F(m).max_pool1d(x.flatten(2), 3, 2, return_indices=True)[0],
    lambda m, x: F(m).adaptive_max_pool2d(x, (3, 2)),
    lambda m, x: F(m).adaptive_max_pool1d(x.flatten(2), 5),
])
def test_max_pool_ties_route_gradient_like_torch(fn):
    x = np.round(R.random((1, 2, 6, 6)) * 2).astype(np.float32)   # many ties
    check(Case("ties", fn, (x,)))


def test_max_pool_indices_match_torch():
    x = np.round(R.random((2, 3, 7, 6)) * 3).astype(np.float32)
    tv, ti = torch.nn.functional.max_pool2d(torch.tensor(x), 3, 2, 1, return_indices=True)
    lv, li = torchlike.nn.functional.max_pool2d(torchlike.tensor(x), 3, 2, 1,
                                                return_indices=True)
    np.testing.assert_array_equal(np.asarray(lv), tv.numpy())
    np.testing.assert_array_equal(np.asarray(li), ti.numpy())
    assert str(li.dtype) == str(ti.dtype)


def test_sdpa_dropout_and_gumbel_softmax():
    torchlike.manual_seed(0)
    q = torchlike.randn(2, 3, 4, requires_grad=True)
    a = F(torchlike).scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    b = F(torchlike).scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    assert a.tolist() != b.tolist()
    (a.sum() + b.sum()).backward()
    assert q.grad is not None
    g = F(torchlike).gumbel_softmax(torchlike.randn(5, 4), tau=0.5, hard=True)
    np.testing.assert_array_equal(np.asarray(g.sum(-1)), np.ones(5))
    assert set(np.unique(np.asarray(g)).tolist()) <= {0.0, 1.0}
