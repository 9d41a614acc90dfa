"""nn.functional.linear_cross_entropy, nn.LinearCrossEntropyLoss and
nn.LinearCrossEntropyOptions vs torch: values and gradients on the reference and the chunked
path for every reduction / ignore_index / label_smoothing / weight option, the graph's
behaviour (second backward, double backward), the fallback warning and the errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchlike
from oracle import check_raises

R = np.random.default_rng(11)
N, IN, C = 9, 5, 7


def data(K=(), probs=False, unbatched=False):
    x = R.standard_normal((IN,) if unbatched else (N, IN)).astype(np.float32)
    w = (R.standard_normal((C, *K, IN)) * 0.5).astype(np.float32)
    b = R.standard_normal((C, *K)).astype(np.float32)
    if probs:
        p = R.random(((C,) if unbatched else (N, C)) + K).astype(np.float32)
        t = p / p.sum(axis=0 if unbatched else 1, keepdims=True)
    else:
        t = R.integers(0, C, () if unbatched else (N, *K))
        if not unbatched:
            t.reshape(-1)[::4] = 2      # a class that ignore_index=2 drops
    cw = (R.random(C) + 0.5).astype(np.float32)
    return x, w, b, t, cw


def run(lib, arrays, kw, bias=True, cls_weight=False, options=None, dtype=np.float32):
    x, w, b, t, cw = arrays
    xs = lib.tensor(x.astype(dtype), requires_grad=True)
    ws = lib.tensor(w.astype(dtype), requires_grad=True)
    bs = lib.tensor(b.astype(dtype), requires_grad=True) if bias else None
    ts = lib.tensor(t) if t.dtype.kind == "i" else lib.tensor(t.astype(dtype))
    kw = dict(kw)
    if cls_weight:
        kw["weight"] = lib.tensor(cw.astype(dtype))
    if options is not None:
        kw["options"] = lib.nn.LinearCrossEntropyOptions(**options)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loss = lib.nn.functional.linear_cross_entropy(xs, ws, ts, linear_bias=bs, **kw)
    (loss * lib.linspace(0.5, 1.5, loss.numel()).reshape(loss.shape).to(loss.dtype)).sum() \
        .backward()
    grads = [xs.grad, ws.grad] + ([bs.grad] if bias else [])
    return (loss.detach().float().numpy(), [g.float().numpy() for g in grads],
            [str(c.message) for c in caught if "linear_cross_entropy" in str(c.message)],
            loss.grad_fn.name())


def compare(arrays, kw, rtol=1e-4, atol=1e-5, **opts):
    t = run(torch, arrays, kw, **opts)
    ours = run(torchlike, arrays, kw, **opts)
    assert ours[0].shape == t[0].shape
    np.testing.assert_allclose(ours[0], t[0], rtol=rtol, atol=atol)
    for a, b in zip(ours[1], t[1]):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    assert ours[2] == t[2]          # the fallback warning, or none
    assert ours[3] == t[3]          # the graph node
    return t


KWS = [
    {},
    {"reduction": "sum"},
    {"reduction": "none"},
    {"ignore_index": 2},
    {"reduction": "none", "ignore_index": 2},
    {"reduction": "sum", "ignore_index": 2},
    {"label_smoothing": 0.2},
    {"label_smoothing": 0.1, "reduction": "none", "ignore_index": 2},
]
OPTIONS = [None, {}, {"batch_chunk_size": 2}, {"batch_chunk_size": 4, "allow_retain_graph": True},
           {"chunking_method": "aspect_ratio:2"}, {"acc_policy": "accurate"}]


@pytest.mark.parametrize("kw", KWS, ids=[str(k) for k in KWS])
@pytest.mark.parametrize("options", OPTIONS, ids=[str(o) for o in OPTIONS])
@pytest.mark.parametrize("cls_weight", [False, True])
def test_class_indices(kw, options, cls_weight):
    compare(data(), kw, options=options, cls_weight=cls_weight)


@pytest.mark.parametrize("options", [None, {}])
@pytest.mark.parametrize("kw", [{}, {"reduction": "none"}, {"ignore_index": 1}])
def test_unbatched_and_no_bias(options, kw):
    compare(data(unbatched=True), kw, options=options)
    compare(data(), kw, options=options, bias=False)


@pytest.mark.parametrize("kw", [{}, {"reduction": "sum", "label_smoothing": 0.3},
                                {"reduction": "none"}])
@pytest.mark.parametrize("options", [None, {}])
def test_class_probabilities(kw, options):
    compare(data(probs=True), kw, options=options)
    compare(data(probs=True, unbatched=True), kw, options=options)


@pytest.mark.parametrize("kw", [{}, {"reduction": "none", "ignore_index": 2},
                                {"label_smoothing": 0.1}])
@pytest.mark.parametrize("options", [None, {}])
def test_k_dimensional(kw, options):
    compare(data(K=(2, 3)), kw, options=options, cls_weight=True)


def test_all_ignored_mean_is_nan():
    x, w, b, t, cw = data()
    compare((x, w, b, np.full_like(t, 2), cw), {"ignore_index": 2}, options={})


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("options", [None, {}, {"acc_dtype": "float32"}])
def test_low_precision(dtype, options):
    """float16/bfloat16: the chunked path accumulates in float32 (acc_dtype None resolves to
    it), the result has the input's dtype."""
    arrays = data()
    res = {}
    for lib in (torch, torchlike):
        opts = None if options is None else {
            k: getattr(lib, v) if k == "acc_dtype" else v for k, v in options.items()}
        x, w, b, t, cw = arrays
        xs = lib.tensor(x).to(getattr(lib, dtype))
        ws = lib.tensor(w).to(getattr(lib, dtype))
        loss = lib.nn.functional.linear_cross_entropy(
            xs, ws, lib.tensor(t), options=None if opts is None
            else lib.nn.LinearCrossEntropyOptions(**opts))
        assert str(loss.dtype).endswith(dtype)
        res[lib] = float(loss.float())
    exact = float(torch.nn.functional.cross_entropy(
        torch.tensor(arrays[0]).double() @ torch.tensor(arrays[1]).double().T,
        torch.tensor(arrays[3])))
    tol = 0.02 * abs(exact) + 1e-2
    assert abs(res[torchlike] - exact) < tol and abs(res[torch] - exact) < tol


def _twice(lib, arrays, reduction, options, retain):
    x, w, b, t, cw = arrays
    xs = lib.tensor(x, requires_grad=True)
    loss = lib.nn.functional.linear_cross_entropy(
        xs, lib.tensor(w), lib.tensor(t), reduction=reduction,
        options=lib.nn.LinearCrossEntropyOptions(**options))
    loss.sum().backward(retain_graph=retain)
    try:
        loss.sum().backward()
    except RuntimeError as e:
        return str(e)
    return xs.grad.numpy()


@pytest.mark.parametrize("reduction,options,retain", [
    ("mean", {}, True), ("mean", {}, False), ("sum", {"allow_retain_graph": True}, True),
    ("sum", {"allow_retain_graph": True}, False), ("none", {}, True), ("none", {}, False)])
def test_second_backward(reduction, options, retain):
    arrays = data()
    t = _twice(torch, arrays, reduction, options, retain)
    ours = _twice(torchlike, arrays, reduction, options, retain)
    if isinstance(t, str):
        assert ours == t
    else:
        np.testing.assert_allclose(ours, t, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_chunked_backward_is_not_differentiable(reduction):
    for lib in (torch, torchlike):
        x, w, b, t, cw = data()
        xs, ws = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        loss = lib.nn.functional.linear_cross_entropy(
            xs, ws, lib.tensor(t), reduction=reduction,
            options=lib.nn.LinearCrossEntropyOptions())
        grads = lib.autograd.grad(loss.sum(), [xs, ws], create_graph=True)
        assert [g.requires_grad for g in grads] == [False, False]
        # the reference path's double backward matches torch's (checked by value)
    refs = {}
    rx, rw, _, rt, _ = data()
    for lib in (torch, torchlike):
        xs, ws = lib.tensor(rx, requires_grad=True), lib.tensor(rw, requires_grad=True)
        loss = lib.nn.functional.linear_cross_entropy(xs, ws, lib.tensor(rt),
                                                      reduction=reduction)
        g, = lib.autograd.grad(loss.sum(), xs, create_graph=True)
        refs[lib] = lib.autograd.grad((g * g).sum(), ws)[0].numpy()
    np.testing.assert_allclose(refs[torchlike], refs[torch], rtol=1e-4, atol=1e-5)


def _opts(L, **kw):
    return L.nn.LinearCrossEntropyOptions(**kw)


def _f(L, x=(N, IN), w=(C, IN), t=None, **kw):
    target = L.randint(0, C, (N,)) if t is None else t(L)
    return L.nn.functional.linear_cross_entropy(L.randn(*x), L.randn(*w), target, **kw)


ERRORS = [
    ("input 3-D", lambda L: _f(L, x=(1, N, IN))),
    ("weight 1-D", lambda L: _f(L, w=(IN,))),
    ("in_features", lambda L: _f(L, w=(C, IN + 1))),
    ("bias shape", lambda L: _f(L, linear_bias=L.randn(C - 1))),
    ("K-dim unbatched", lambda L: L.nn.functional.linear_cross_entropy(
        L.randn(IN), L.randn(C, 2, IN), L.randint(0, C, (2,)))),
    ("ignore_index with probabilities", lambda L: _f(L, t=lambda L: L.rand(N, C),
                                                     ignore_index=3)),
    ("int32 target, options", lambda L: _f(L, t=lambda L: L.randint(0, C, (N,)).int(),
                                           options=_opts(L))),
    ("target out of range, options", lambda L: _f(L, t=lambda L: L.full((N,), C),
                                                  options=_opts(L))),
    ("dtypes differ, options", lambda L: L.nn.functional.linear_cross_entropy(
        L.randn(N, IN).double(), L.randn(C, IN), L.randint(0, C, (N,)), options=_opts(L))),
    ("options not options", lambda L: _f(L, options=3)),
    ("chunk size and method disagree", lambda L: _f(
        L, options=_opts(L, batch_chunk_size=5, chunking_method="aspect_ratio"))),
    ("acc_policy", lambda L: _opts(L, acc_policy="fast")),
    ("chunking_method", lambda L: _opts(L, chunking_method="aspect_ratio:0")),
    ("chunking_method name", lambda L: _opts(L, chunking_method="square")),
    ("batch_chunk_size", lambda L: _opts(L, batch_chunk_size=0)),
    ("acc_dtype", lambda L: _opts(L, acc_dtype=L.int32)),
    ("module weight shape", lambda L: L.nn.LinearCrossEntropyLoss(IN, C, weight=L.ones(C - 1))),
    ("module label_smoothing", lambda L: L.nn.LinearCrossEntropyLoss(IN, C,
                                                                     label_smoothing=1.5)),
]


@pytest.mark.parametrize("label,call", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(label, call):
    ours, t = check_raises(lambda m: call(m))
    assert type(ours) is type(t)
    assert str(ours).replace("torchlike.", "torch.") == str(t)


def test_options_dataclass():
    for lib in (torch, torchlike):
        o = lib.nn.LinearCrossEntropyOptions(batch_chunk_size=3)
        with pytest.raises(Exception):
            o.batch_chunk_size = 4          # frozen
    assert repr(torchlike.nn.LinearCrossEntropyOptions(acc_dtype=torchlike.float32)) == \
        repr(torch.nn.LinearCrossEntropyOptions(acc_dtype=torch.float32))
    for kw in ({}, {"batch_chunk_size": 3}, {"chunking_method": "aspect_ratio:2"},
               {"chunking_method": None}, {"acc_policy": "balanced"}):
        for nb, nc, dt in ((64, 1000, "float32"), (7, 3, "bfloat16"), (100, 50, "float16")):
            a = torch.nn.LinearCrossEntropyOptions(**kw)._adjust(
                nb, 16, nc, getattr(torch, dt), torch.device("cpu"))
            b = torchlike.nn.LinearCrossEntropyOptions(**kw)._adjust(
                nb, 16, nc, getattr(torchlike, dt), torchlike.device("cpu"))
            assert repr(b) == repr(a)


@pytest.mark.parametrize("kw", [{}, {"bias": True, "out_features": (2, 3)},
                                {"bias": True, "reduction": "none", "ignore_index": 1},
                                {"label_smoothing": 0.2, "reduction": "sum"}])
@pytest.mark.parametrize("options", [None, {}])
def test_module(kw, options):
    K = kw.get("out_features", ())
    x = R.standard_normal((N, IN)).astype(np.float32)
    t = R.integers(0, C, (N, *K))
    res = {}
    for lib in (torch, torchlike):
        m = lib.nn.LinearCrossEntropyLoss(
            IN, C, weight=lib.tensor(np.linspace(0.5, 1.5, C, dtype=np.float32)),
            options=None if options is None else lib.nn.LinearCrossEntropyOptions(**options),
            **kw)
        res[lib] = m
    with torch.no_grad():
        for p_t, p_l in zip(res[torch].parameters(), res[torchlike].parameters()):
            p_l.data = torchlike.tensor(p_t.detach().numpy())
    out = {}
    for lib, m in res.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loss = m(lib.tensor(x), lib.tensor(t))
        loss.sum().backward()
        out[lib] = (loss.detach().numpy(), [p.grad.numpy() for p in m.parameters()],
                    [(n, tuple(p.shape)) for n, p in m.named_parameters()], list(m.state_dict()),
                    repr(m))
    np.testing.assert_allclose(out[torchlike][0], out[torch][0], rtol=1e-4, atol=1e-5)
    for a, b in zip(out[torchlike][1], out[torch][1]):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    assert out[torchlike][2:4] == out[torch][2:4]
    assert out[torchlike][4].replace("torchlike.", "torch.") == out[torch][4]
