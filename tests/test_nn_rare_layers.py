"""nn gaps vs torch: bicubic/antialiased interpolate, fractional max pooling with given samples,
AdaptiveLogSoftmaxWithLoss, LPPool3d, MaxUnpool3d, CrossMapLRN2d, and the errors torch raises
on bad input (dtype mismatches, integer softmax, oversized kernels, embedding indices)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike
from oracle import Case, assert_close, check, check_raises

rng = np.random.default_rng(0)
IMG = rng.standard_normal((2, 3, 7, 9)).astype(np.float32)
VOL = rng.standard_normal((1, 2, 6, 7, 8)).astype(np.float32)


# ------------------------------------------------------------------ interpolate

INTERP = [
    dict(scale_factor=2, mode="bicubic"),
    dict(size=(5, 4), mode="bicubic"),
    dict(size=(5, 13), mode="bicubic", align_corners=True),
    dict(size=(3, 4), mode="bilinear", antialias=True),
    dict(scale_factor=0.4, mode="bilinear", antialias=True),
    dict(size=(14, 20), mode="bilinear", antialias=True),
    dict(size=(3, 14), mode="bicubic", antialias=True),
    dict(size=(4, 5), mode="bicubic", antialias=True, align_corners=True),
]


@pytest.mark.parametrize("kw", INTERP, ids=[str(k) for k in INTERP])
def test_interpolate_bicubic_antialias(kw):
    check(Case(str(kw), lambda m, x: m.nn.functional.interpolate(x, **kw), (IMG,),
               atol=1e-5, rtol=1e-5))


def test_interpolate_graph_names_and_module():
    for kw in INTERP[:4]:
        t = torch.nn.functional.interpolate(torch.tensor(IMG, requires_grad=True), **kw)
        lt = torchlike.nn.functional.interpolate(torchlike.tensor(IMG, requires_grad=True), **kw)
        assert lt.grad_fn.name() == type(t.grad_fn).__name__
    check(Case("Upsample bicubic", lambda m, x: m.nn.Upsample(scale_factor=1.5,
                                                              mode="bicubic")(x), (IMG,)))


@pytest.mark.parametrize("mode,shape", [("nearest", IMG.shape), ("bilinear", IMG.shape[1:]),
                                        ("bicubic", IMG.shape[:3]), ("linear", IMG.shape)])
def test_interpolate_antialias_or_rank_errors(mode, shape):
    x = IMG.reshape(-1)[:int(np.prod(shape))].reshape(shape)
    check_raises(lambda m, a: m.nn.functional.interpolate(a, scale_factor=2, mode=mode,
                                                          antialias=mode == "nearest"), x)


# ------------------------------------------------------------------ fractional max pooling

def _frac_case(nd, kw, x, samples):
    def fn(m, a):
        return getattr(m.nn.functional, f"fractional_max_pool{nd}d")(
            a, _random_samples=m.tensor(samples), return_indices=True, **kw)
    return Case(f"frac{nd}d {kw}", fn, (x,), atol=1e-6)


@pytest.mark.parametrize("kw", [dict(kernel_size=2, output_size=3),
                                dict(kernel_size=(2, 3), output_size=(4, 5)),
                                dict(kernel_size=3, output_ratio=(0.5, 0.5)),
                                dict(kernel_size=2, output_size=1)], ids=str)
def test_fractional_max_pool2d(kw):
    s = rng.random((2, 3, 2)).astype(np.float32)
    c = _frac_case(2, kw, IMG, s)
    c.grad = True
    check(c)
    # unbatched input
    check(_frac_case(2, kw, IMG[0], s[:1]))


def test_fractional_max_pool3d():
    s = rng.random((1, 2, 3)).astype(np.float32)
    check(_frac_case(3, dict(kernel_size=2, output_size=(3, 4, 5)), VOL, s))
    check(_frac_case(3, dict(kernel_size=(2, 3, 2), output_ratio=(0.5, 0.6, 0.7)), VOL, s))


def test_fractional_max_pool_modules():
    s = rng.random((2, 3, 2)).astype(np.float32)
    for m in (torch, torchlike):
        mod = m.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.5), _random_samples=m.tensor(s))
        if m is torch:
            ref, tr = mod(torch.tensor(IMG)), repr(mod)
        else:
            assert_close(mod(torchlike.tensor(IMG)), ref)
            assert repr(mod) == tr
            assert list(mod.state_dict()) == ["_random_samples"]
    # without samples: a valid pooling of the right shape (torchlike's own random stream)
    out = torchlike.nn.FractionalMaxPool3d(2, output_size=3)(torchlike.tensor(VOL))
    assert tuple(out.shape) == (1, 2, 3, 3, 3)
    for bad in (dict(), dict(output_size=2, output_ratio=0.5), dict(output_ratio=1.5)):
        check_raises(lambda m, _: m.nn.FractionalMaxPool2d(2, **bad), IMG)
    check_raises(lambda m, a: m.nn.functional.fractional_max_pool2d(a, 3, output_size=6), IMG)
    check_raises(lambda m, a: m.nn.functional.fractional_max_pool3d(a, 3, output_size=5), VOL)
    _msg_equal(lambda m, a, s: m.nn.functional.fractional_max_pool2d(
        a.requires_grad_(), 2, output_size=3, _random_samples=s.requires_grad_()), IMG, s)


# ------------------------------------------------------------------ AdaptiveLogSoftmaxWithLoss

def _asm_pair(**kw):
    t = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], **kw)
    l = torchlike.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], **kw)
    l.load_state_dict({k: torchlike.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return t, l


def test_adaptive_log_softmax_with_loss():
    t, l = _asm_pair(head_bias=True)
    assert list(l.state_dict()) == list(t.state_dict())
    assert repr(l) == repr(t)
    x = rng.standard_normal((6, 8)).astype(np.float32)
    y = np.array([0, 4, 9, 2, 7, 5])
    tx, lx = torch.tensor(x, requires_grad=True), torchlike.tensor(x, requires_grad=True)
    to, lo = t(tx, torch.tensor(y)), l(lx, torchlike.tensor(y))
    assert_close(lo.output, to.output)
    assert_close(lo.loss, to.loss)
    to.loss.backward()
    lo.loss.backward()
    assert_close(lx.grad, tx.grad)
    assert_close(l.head.weight.grad, t.head.weight.grad)
    assert_close(l.tail[1][0].weight.grad, t.tail[1][0].weight.grad)
    assert_close(l.log_prob(lx), t.log_prob(tx))
    assert_close(l.predict(lx), t.predict(tx))
    # unbatched
    assert_close(l(lx[0], torchlike.tensor(y[0])).output, t(tx[0], torch.tensor(y[0])).output)


def test_adaptive_log_softmax_errors():
    for bad in ([], [6, 3], [0, 3], [3, 10], [3, 3]):
        check_raises(lambda m, _: m.nn.AdaptiveLogSoftmaxWithLoss(8, 10, bad), IMG)
    t, l = _asm_pair()
    x = rng.standard_normal((2, 8)).astype(np.float32)
    for y in (np.array([0, 10]), np.array([0, 1, 2]), np.zeros((2, 1), np.int64)):
        with pytest.raises(RuntimeError) as te:
            t(torch.tensor(x), torch.tensor(y))
        with pytest.raises(RuntimeError) as le:
            l(torchlike.tensor(x), torchlike.tensor(y))
        assert str(le.value) == str(te.value)


# ------------------------------------------------------------------ LPPool3d, MaxUnpool3d, CrossMapLRN2d

def test_lppool3d_maxunpool3d_crossmaplrn2d():
    check(Case("LPPool3d", lambda m, x: m.nn.LPPool3d(2, 2)(x), (np.abs(VOL) + 0.1,)))
    check(Case("lp_pool3d", lambda m, x: m.nn.functional.lp_pool3d(x, 3.0, (2, 3, 2), 1),
               (np.abs(VOL) + 0.1,)))

    def unpool(m, x):
        y, i = m.nn.functional.max_pool3d(x, 2, return_indices=True)
        return m.nn.MaxUnpool3d(2)(y, i)
    even = VOL[:, :, :, :6].copy()
    check(Case("MaxUnpool3d", unpool, (even,)))
    t = torch.nn.MaxUnpool3d(2)(*torch.nn.functional.max_pool3d(
        torch.tensor(even, requires_grad=True), 2, return_indices=True))
    l = torchlike.nn.MaxUnpool3d(2)(*torchlike.nn.functional.max_pool3d(
        torchlike.tensor(even, requires_grad=True), 2, return_indices=True))
    assert l.grad_fn.name() == type(t.grad_fn).__name__
    check(Case("CrossMapLRN2d", lambda m, x: m.nn.CrossMapLRN2d(3, alpha=0.3, k=2)(x), (IMG,)))
    assert repr(torchlike.nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    check_raises(lambda m, x: m.nn.CrossMapLRN2d(3)(x), VOL, match="Expected input to be 4D")


# ------------------------------------------------------------------ errors torch raises

X64 = rng.standard_normal((3, 4))
W32 = rng.standard_normal((5, 4)).astype(np.float32)
B32 = rng.standard_normal(5).astype(np.float32)


def _msg_equal(fn, *inputs):
    lerr, terr = check_raises(fn, *inputs)
    assert str(lerr) == str(terr), f"torchlike: {lerr}\ntorch:     {terr}"


@pytest.mark.parametrize("case", [
    lambda m, x, w, b: m.nn.functional.linear(x, w, b),
    lambda m, x, w, b: m.nn.functional.linear(x, w),
    lambda m, x, w, b: m.nn.functional.linear(x[0], w, b),
    lambda m, x, w, b: m.nn.functional.linear(x[0], w),
    lambda m, x, w, b: m.nn.functional.linear(x[None], w, b),
    lambda m, x, w, b: m.nn.functional.linear(x.float(), w, b.double()),
    lambda m, x, w, b: m.nn.functional.linear(x.half(), w, b),
    lambda m, x, w, b: m.nn.functional.linear(x.float(), w[None], b),
], ids=["2d", "2d_nobias", "1d", "1d_nobias", "3d", "bias64", "half", "w3d"])
def test_linear_dtype_mismatch(case):
    _msg_equal(case, X64, W32, B32)


def test_linear_module_float64_input():
    _msg_equal(lambda m, x: m.nn.Linear(4, 5)(x), X64)


def test_conv_dtype_and_kernel_size_errors():
    img64 = IMG.astype(np.float64)
    _msg_equal(lambda m, x, w: m.nn.functional.conv2d(x, w), img64,
               rng.standard_normal((2, 3, 3, 3)).astype(np.float32))
    _msg_equal(lambda m, x, w, b: m.nn.functional.conv2d(x, w, b), IMG,
               rng.standard_normal((2, 3, 3, 3)).astype(np.float32), np.zeros(2))
    small = IMG[:, :, :2, :2].copy()
    _msg_equal(lambda m, x, w: m.nn.functional.conv2d(x, w), small,
               rng.standard_normal((2, 3, 3, 3)).astype(np.float32))
    _msg_equal(lambda m, x, w: m.nn.functional.conv1d(x, w), small[:, :, 0],
               rng.standard_normal((2, 3, 3)).astype(np.float32))
    _msg_equal(lambda m, x, w: m.nn.functional.conv3d(x, w), VOL[:, :, :2],
               rng.standard_normal((2, 2, 3, 3, 3)).astype(np.float32))
    # padding makes it fit: no error, torch's values
    check(Case("conv padded", lambda m, x, w: m.nn.functional.conv2d(x, w, padding=1),
               (small, rng.standard_normal((2, 3, 3, 3)).astype(np.float32))))
    _msg_equal(lambda m, x: m.nn.Conv2d(3, 2, 3)(x), img64)


INT2 = np.array([[1, 2], [3, 4]])


@pytest.mark.parametrize("fn", [
    lambda m, x: m.nn.functional.softmax(x, 0),
    lambda m, x: m.nn.functional.softmax(x, 1),
    lambda m, x: m.nn.functional.log_softmax(x, 0),
    lambda m, x: m.nn.functional.log_softmax(x, -1),
    lambda m, x: m.nn.functional.softmin(x, 1),
    lambda m, x: m.nn.functional.softmax(x.int(), 1),
    lambda m, x: m.nn.functional.softmax(x.bool(), 1),
    lambda m, x: m.nn.functional.nll_loss(x, m.tensor([0, 1])),
    lambda m, x: m.nn.functional.nll_loss(x[None, :, :, None], m.zeros(1, 2, 1).long()),
    lambda m, x: m.nn.functional.cross_entropy(x, m.tensor([0, 1])),
    lambda m, x: m.nn.functional.cross_entropy(x[None], m.zeros(1, 2).long()),
    lambda m, x: m.nn.Softmax(1)(x),
    lambda m, x: m.nn.CrossEntropyLoss()(x, m.tensor([0, 1])),
], ids=["softmax0", "softmax1", "log_softmax0", "log_softmax_last", "softmin", "int32", "bool",
        "nll", "nll2d", "ce", "ce3d", "Softmax", "CrossEntropyLoss"])
def test_integer_input_to_softmax_and_nll(fn):
    _msg_equal(fn, INT2)


def test_softmax_with_dtype_on_integer_input_is_fine():
    check(Case("softmax dtype", lambda m, x: m.nn.functional.softmax(x, 1, dtype=m.float32),
               (INT2,), grad=False))


@pytest.mark.parametrize("idx", [[5], [-1], [0, 3], [[1, -4]]])
def test_embedding_index_out_of_range(idx):
    w = rng.standard_normal((3, 2)).astype(np.float32)
    _msg_equal(lambda m, i, w: m.nn.functional.embedding(i, w), np.array(idx), w)
    _msg_equal(lambda m, i: m.nn.Embedding(3, 2)(i), np.array(idx))


def test_module_to_misuse():
    _msg_equal(lambda m, _: m.nn.Linear(2, 2).to("float32"), INT2)
    _msg_equal(lambda m, _: m.nn.Linear(2, 2).to(m.int64), INT2)
    _msg_equal(lambda m, _: m.nn.Linear(2, 2).to(1, 2, 3, 4), INT2)
    for m in (torch, torchlike):
        lin = m.nn.Linear(2, 2).to(m.float64)
        assert str(lin.weight.dtype).endswith("float64")
        lin = lin.to("cpu", m.float16)
        assert str(lin.bias.dtype).endswith("float16")


@pytest.mark.parametrize("p", [[0.0, 1.0, 0.5], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
def test_bce_at_probabilities_zero_and_one(p):
    y = np.array([0.0, 1.0, 1.0], np.float32)
    for red in ("mean", "sum", "none"):
        check(Case(f"bce {p} {red}", lambda m, x, t: m.nn.functional.binary_cross_entropy(
            x, t, reduction=red), (np.array(p, np.float32), y)))
        check(Case(f"BCELoss weighted {p}", lambda m, x, t: m.nn.BCELoss(
            weight=m.tensor([1.0, 2.0, 3.0]))(x, t), (np.array(p, np.float32), y)))


# ------------------------------------------------------------------ affine_grid / grid_sample

GRID = (rng.random((2, 4, 7, 2)) * 2.6 - 1.3).astype(np.float32)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample(mode, padding_mode, align_corners):
    check(Case(f"grid_sample {mode} {padding_mode} {align_corners}",
               lambda m, x, g: m.nn.functional.grid_sample(
                   x, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners),
               (IMG[:, :, :5, :6].copy(), GRID), atol=1e-5, rtol=1e-4))


@pytest.mark.parametrize("padding_mode", ["border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_gradient_at_the_border(padding_mode, align_corners):
    """A spatial transformer's grid that lands exactly on the border (an align_corners grid of
    a near-identity theta): torch's clipped coordinates pass no gradient there, to the grid
    nor to theta."""
    theta = np.array([[[1, 0.2, 0.1], [-0.1, 0.9, 0.05]], [[0.8, 0, 0], [0, 1.1, -0.2]]],
                     np.float32)
    x = IMG[:2, :1, :6, :6].copy()

    def run(m):
        th, xt = m.tensor(theta, requires_grad=True), m.tensor(x, requires_grad=True)
        g = m.nn.functional.affine_grid(th, (2, 1, 5, 4), align_corners=align_corners)
        y = m.nn.functional.grid_sample(xt, g, padding_mode=padding_mode,
                                        align_corners=align_corners)
        (y ** 2).sum().backward()
        return y.detach().numpy(), xt.grad.numpy(), th.grad.numpy()
    for a, b in zip(run(torchlike), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 3, 4, 5, 6)])
@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid(size, align_corners):
    theta = rng.standard_normal((2, 2, 3) if len(size) == 4 else (2, 3, 4)).astype(np.float32)
    check(Case(f"affine_grid {size}", lambda m, t: m.nn.functional.affine_grid(
        t, size, align_corners=align_corners), (theta,)))


def test_affine_grid_then_grid_sample_graph_and_errors():
    theta = rng.standard_normal((2, 2, 3)).astype(np.float32)
    names = []
    for m in (torch, torchlike):
        t = m.tensor(theta, requires_grad=True)
        g = m.nn.functional.affine_grid(t, (2, 3, 5, 6), align_corners=False)
        y = m.nn.functional.grid_sample(m.tensor(IMG[:, :, :5, :6].copy()), g,
                                        align_corners=False)
        names.append((y.grad_fn.name(), g.grad_fn.name()))
    assert names[0] == names[1]
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        torchlike.nn.functional.affine_grid(torchlike.tensor(theta), (2, 3, 4, 5))
    check_raises(lambda m, t: m.nn.functional.affine_grid(t, (2, 3, 4, 5, 6),
                                                          align_corners=False), theta)
    check_raises(lambda m, t: m.nn.functional.affine_grid(t, (2, 3, 4), align_corners=False),
                 theta)
    check_raises(lambda m, x, g: m.nn.functional.grid_sample(x, g, mode="cubic",
                                                             align_corners=False), IMG, GRID)
    check_raises(lambda m, x, g: m.nn.functional.grid_sample(x, g, padding_mode="wrap",
                                                             align_corners=False), IMG, GRID)
    # bicubic is implemented (tests/test_vision_programs.py compares it); 5-D is bilinear/nearest
    grid3 = np.zeros((IMG.shape[0], 2, 2, 2, 3), np.float32)
    check_raises(lambda m, x, g: m.nn.functional.grid_sample(x, g, mode="bicubic",
                                                             align_corners=False),
                 IMG[:, :, None].copy(), grid3)


def test_deprecated_init_aliases_warn_and_init_as_torch():
    import warnings
    import torch
    import torchlike
    for name in ["uniform", "normal", "constant", "eye", "xavier_uniform", "xavier_normal",
                 "kaiming_uniform", "kaiming_normal", "orthogonal"]:
        for m in (torch, torchlike):
            w = m.zeros(3, 4)
            args = (0.5,) if name == "constant" else ()
            with warnings.catch_warnings(record=True) as rec:
                warnings.simplefilter("always")
                getattr(m.nn.init, name)(w, *args)
            assert any(issubclass(r.category, FutureWarning) and f"nn.init.{name}_" in
                       str(r.message) for r in rec), (m.__name__, name)
            if name in ("constant", "eye"):
                assert w.tolist() == (torch.full((3, 4), 0.5) if name == "constant"
                                      else torch.eye(3, 4)).tolist()
