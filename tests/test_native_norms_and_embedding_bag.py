"""torch's native forms (torchlike/_ops/native_forms.py) against torch: ``embedding_bag``'s four
results, ``native_layer_norm``'s (output, mean, rstd), ``native_batch_norm``'s (output,
save_mean, save_invstd, and the running statistics it updates), ``native_dropout``'s (output,
mask): values, dtypes, shapes, grad_fn names, gradients, errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike
from oracle import both_outcomes

R = np.random.default_rng(0)
W = R.standard_normal((10, 3)).astype(np.float32)
IDX = np.array([1, 2, 4, 5, 4, 3, 2, 9])
PSW = R.random(8).astype(np.float32)


def _np(t):
    t = t.detach()
    return np.asarray(t.float().tolist() if "bfloat16" in str(t.dtype) else t.tolist())


def _same(lo, to, what, atol=1e-5):
    assert str(lo.dtype) == str(to.dtype), f"{what}: dtype {lo.dtype} != torch {to.dtype}"
    assert tuple(lo.shape) == tuple(to.shape), f"{what}: shape {lo.shape} != {to.shape}"
    assert lo.requires_grad == to.requires_grad, what
    np.testing.assert_allclose(_np(lo), _np(to), atol=atol, rtol=1e-5, err_msg=what)


# ------------------------------------------------------------------ embedding_bag

BAGS = [
    ("plain", [0, 4], {}),
    ("empty_bag", [0, 4, 4], {}),
    ("include_last_offset", [0, 4, 8], {"include_last_offset": True}),
    ("last_offset_empty_bag", [0, 4, 4, 8], {"include_last_offset": True}),
    ("padding_idx", [0, 4], {"padding_idx": 4}),
    ("padding_idx_empty_bag", [0, 4, 4], {"padding_idx": 2}),
    ("negative_padding_idx", [0, 3], {"padding_idx": -1}),
    ("one_bag", [0], {}),
    ("per_sample_weights", [0, 4], {"per_sample_weights": PSW}),
    ("per_sample_weights_padding", [0, 4], {"per_sample_weights": PSW, "padding_idx": 4}),
]


@pytest.mark.parametrize("mode", [0, 1, 2], ids=["sum", "mean", "max"])
@pytest.mark.parametrize("case", BAGS, ids=[b[0] for b in BAGS])
@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
def test_embedding_bag_matches_torch(case, mode, index_dtype):
    _id, off, kw = case
    res, grads = {}, {}
    for m in (torch, torchlike):
        w = m.tensor(W, requires_grad=True)
        dt = getattr(m, index_dtype)
        k = dict(kw)
        if "per_sample_weights" in k:
            k["per_sample_weights"] = m.tensor(PSW, requires_grad=True)
        # (torch takes padding_idx by position only)
        args = (k.get("per_sample_weights"), k.get("include_last_offset", False)) + (
            (k["padding_idx"],) if "padding_idx" in k else ())
        outcome = None
        try:
            o = m.embedding_bag(w, m.tensor(IDX, dtype=dt), m.tensor(off, dtype=dt), False,
                                mode, False, *args)
        except RuntimeError as e:
            outcome = (type(e), str(e))
            o = None
        res[m.__name__] = o if o is not None else outcome
        if o is not None:
            assert isinstance(o, tuple) and len(o) == 4
            (o[0] * m.tensor(np.arange(o[0].numel(), dtype=np.float32)
                             .reshape(tuple(o[0].shape)))).sum().backward()
            grads[m.__name__] = [_np(w.grad)] + (
                [_np(k["per_sample_weights"].grad)] if "per_sample_weights" in k else [])
    t, lt = res["torch"], res["torchlike"]
    if not isinstance(t, tuple) or not isinstance(t[0], torch.Tensor):
        assert lt == t                       # (torch's error: per_sample_weights with mean/max)
        return
    for i, what in enumerate(("output", "offset2bag", "bag_size", "max_indices")):
        _same(lt[i], t[i], what)
    assert lt[0].grad_fn.name() == t[0].grad_fn.name() == "EmbeddingBagBackward0"
    for a, b in zip(grads["torchlike"], grads["torch"]):
        np.testing.assert_allclose(a, b, atol=1e-5, rtol=1e-5)


def test_embedding_bag_max_takes_the_first_maximum():
    w = np.array([[1.0, 2.0], [1.0, 5.0], [0.0, 5.0]], np.float32)
    for m in (torch, torchlike):
        o = m.embedding_bag(m.tensor(w), m.tensor([0, 1, 2]), m.tensor([0]), False, 2)
        assert o[3].tolist() == [[0, 1]]


EB_ERRORS = [
    lambda m: m.embedding_bag(m.tensor(W), m.tensor(IDX), m.tensor([0, 4]), False, 1, False,
                              m.tensor(PSW)),
    lambda m: m.embedding_bag(m.tensor(W), m.tensor(IDX), m.tensor([0, 4]), False, 3),
    lambda m: m.embedding_bag(m.tensor(W), m.tensor(IDX.astype(np.float32)),
                              m.tensor([0, 4]), False, 0),
    lambda m: m.embedding_bag(m.tensor(W), m.tensor([1, 10]), m.tensor([0]), False, 0),
    lambda m: m.embedding_bag(m.tensor(W), m.tensor(IDX), m.tensor([1, 4]), False, 0),
]


@pytest.mark.parametrize("k", range(len(EB_ERRORS)))
def test_embedding_bag_errors(k):
    assert both_outcomes(EB_ERRORS[k], msg="first_line") is None


# ------------------------------------------------------------------ native_layer_norm

LN = [
    ("last_dim", (2, 3, 4), [4], True),
    ("two_dims", (2, 3, 4), [3, 4], True),
    ("no_affine", (2, 3, 4), (4,), False),
    ("all_dims", (3, 4), [3, 4], True),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", LN, ids=[c[0] for c in LN])
def test_native_layer_norm_matches_torch(case, dtype):
    _id, shape, ns, affine = case
    x0 = R.standard_normal(shape) * 3 + 1
    w0, b0 = R.standard_normal(tuple(ns)), R.standard_normal(tuple(ns))
    res, grads = {}, {}
    for m in (torch, torchlike):
        dt = getattr(m, dtype)
        x = m.tensor(x0, dtype=dt, requires_grad=True)
        w = m.tensor(w0, dtype=dt, requires_grad=True) if affine else None
        b = m.tensor(b0, dtype=dt, requires_grad=True) if affine else None
        o = m.native_layer_norm(x, ns, w, b, 1e-5)
        assert isinstance(o, tuple) and len(o) == 3
        o[0].pow(2).sum().backward()
        res[m.__name__] = o
        grads[m.__name__] = [_np(t.grad) for t in (x, w, b) if t is not None]
    t, lt = res["torch"], res["torchlike"]
    for i, what in enumerate(("output", "mean", "rstd")):
        _same(lt[i], t[i], what, atol=1e-4)
    assert lt[0].grad_fn.name() == t[0].grad_fn.name() == "NativeLayerNormBackward0"
    for a, b in zip(grads["torchlike"], grads["torch"]):
        np.testing.assert_allclose(a, b, atol=1e-4, rtol=1e-4)


def test_native_layer_norm_half_stats_in_its_dtype():
    x0 = R.standard_normal((2, 8)).astype(np.float32)
    t = torch.native_layer_norm(torch.tensor(x0).bfloat16(), [8], None, None, 1e-5)
    lt = torchlike.native_layer_norm(torchlike.tensor(x0).bfloat16(), [8], None, None, 1e-5)
    for a, b, what in zip(lt, t, ("output", "mean", "rstd")):
        _same(a, b, what, atol=2e-2)


def test_native_layer_norm_errors():
    x0 = R.standard_normal((2, 3)).astype(np.float32)
    assert both_outcomes(lambda m: m.native_layer_norm(m.tensor(x0), [4], None, None, 1e-5),
                         msg="first_line") is None


# ------------------------------------------------------------------ native_batch_norm

@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(4, 3), (4, 3, 5), (2, 3, 2, 2)])
@pytest.mark.parametrize("stats", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_native_batch_norm_matches_torch(training, shape, stats, affine):
    if not training and not stats:
        pytest.skip("torch 2.13 crashes (SIGSEGV) on evaluation without running statistics")
    x0 = R.standard_normal(shape) * 2 + 0.5
    c = shape[1]
    w0, b0 = R.standard_normal(c), R.standard_normal(c)
    rm0, rv0 = R.standard_normal(c), R.random(c) + 0.5
    res = {}
    for m in (torch, torchlike):
        x = m.tensor(x0, dtype=m.float32, requires_grad=True)
        w = m.tensor(w0, dtype=m.float32, requires_grad=True) if affine else None
        b = m.tensor(b0, dtype=m.float32, requires_grad=True) if affine else None
        rm = m.tensor(rm0, dtype=m.float32) if stats else None
        rv = m.tensor(rv0, dtype=m.float32) if stats else None
        o = m.native_batch_norm(x, w, b, rm, rv, training, 0.3, 1e-5)
        assert isinstance(o, tuple) and len(o) == 3
        o[0].pow(2).sum().backward()
        res[m.__name__] = (o, [_np(t.grad) for t in (x, w, b) if t is not None],
                           [_np(t) for t in (rm, rv) if t is not None])
    (t, tg, ts), (lt, lg, ls) = res["torch"], res["torchlike"]
    for i, what in enumerate(("output", "save_mean", "save_invstd")):
        _same(lt[i], t[i], what, atol=1e-4)
    assert lt[0].grad_fn.name() == t[0].grad_fn.name() == "NativeBatchNormBackward0"
    for a, b in zip(lg + ls, tg + ts):
        np.testing.assert_allclose(a, b, atol=1e-4, rtol=1e-4)


# ------------------------------------------------------------------ native_dropout

@pytest.mark.parametrize("train", [True, None, False])
@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_native_dropout_matches_torch(train, p):
    """Random streams differ: each side's output is its input times its own mask / (1 - p);
    the mask's dtype and shape, the grad_fn, the gradient (mask / (1 - p), or the mask for
    train=None) and, for
    train=False or p in {0, 1}, the mask itself equal torch's."""
    x0 = R.standard_normal((64, 32)).astype(np.float32) + 3.0    # (no zeros)
    got = {}
    for m in (torch, torchlike):
        x = m.tensor(x0, requires_grad=True)
        out, mask = m.native_dropout(x, p, train)
        assert str(mask.dtype) == "torch.bool" and tuple(mask.shape) == (64, 32)
        assert out.requires_grad and not mask.requires_grad
        assert out.grad_fn.name() == "NativeDropoutBackward0"
        out.sum().backward()
        mk = np.asarray(mask.tolist())
        scale = 1.0 if train is False else (1 / (1 - p) if p < 1 else 0.0)
        np.testing.assert_allclose(np.asarray(out.detach().tolist()), x0 * mk * scale,
                                   rtol=1e-6)
        grad_scale = scale if train else 1.0        # (torch: train=None does not scale it)
        np.testing.assert_allclose(np.asarray(x.grad.tolist()), mk * grad_scale, rtol=1e-6)
        got[m.__name__] = mk
    if train is False or p in (0.0, 1.0):
        np.testing.assert_array_equal(got["torchlike"], got["torch"])
    else:       # the kept fraction is near 1 - p on both sides
        for mk in got.values():
            assert abs(mk.mean() - (1 - p)) < 0.05


def test_embedding_bag_takes_padding_idx_by_position_only():
    def run(m):
        w, i, o = m.randn(5, 3), m.tensor([0, 2, 1]), m.tensor([0, 2])
        try:
            m.embedding_bag(w, i, o, padding_idx=0)
        except TypeError as e:
            return str(e)
        return None
    assert run(torchlike) == run(torch) is not None
