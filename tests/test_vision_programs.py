"""Vision / generative model programs vs torch: CNN classifiers, norms, pooling, unpooling,
upsampling and GAN/VAE training loops, run with the same weights (copied through the
state_dict) in torch and torchlike, comparing losses, gradients, buffers and errors."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchlike  # noqa: E402
from nn_util import copy_state  # noqa: E402
from oracle import assert_close  # noqa: E402

R = np.random.default_rng(2026)


def f32(*shape, scale=1.0):
    return (R.standard_normal(shape) * scale).astype(np.float32)


def both(fn, *arrays, grad=True):
    """Run fn(m, *tensors) under torch and torchlike; return (outs, grads) per library."""
    res = []
    for m in (torch, torchlike):
        ts = [m.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        out = fn(m, *ts)
        res.append((out, ts))
    return res


def raises_like(fn, *arrays):
    errs = []
    for m in (torch, torchlike):
        with pytest.raises(Exception) as ei:
            fn(m, *[m.tensor(a) for a in arrays])
        errs.append(ei.value)
    te, le = errs
    assert type(le).__name__ == type(te).__name__, (te, le)
    assert str(le) == str(te)


# ---------------------------------------------------------------- max_unpool

def test_max_unpool_overlapping_windows_gradient_reaches_every_duplicate():
    # kernel 3 / stride 2 windows overlap, so one input can be the max of two windows: its
    # index appears twice, and torch's unpool backward gathers the gradient for both
    x = f32(2, 3, 9, 10)
    g = f32(2, 3, 9, 10)
    (to, tin), (lo, lin) = both(lambda m, x: m.nn.MaxUnpool2d(3, stride=2)(
        *m.nn.MaxPool2d(3, stride=2, return_indices=True, ceil_mode=True)(x),
        output_size=x.shape[-2:]), x)
    assert_close(lo, to, 1e-6, 1e-6, "unpool")
    (to * torch.tensor(g)).sum().backward()
    (lo * torchlike.tensor(g)).sum().backward()
    assert_close(lin[0].grad, tin[0].grad, 1e-5, 1e-5, "input grad")


# ---------------------------------------------------------------- batch norm

@pytest.mark.parametrize("ctor", ["BatchNorm2d(4)", "BatchNorm2d(4, momentum=None)",
                                  "BatchNorm2d(4, affine=False)"])
def test_batchnorm_called_twice_before_backward(ctor):
    # a discriminator run on real and fake batches (or a siamese net) calls the same BN twice
    # in training before one backward; the second call's running-stat update must not break
    # the first call's backward
    x = f32(3, 4, 5, 6)
    outs = []
    for m in (torch, torchlike):
        torch.manual_seed(0)
        tbn = eval("torch.nn." + ctor)
        bn = eval("m.nn." + ctor)
        if m is torchlike:
            copy_state(tbn, bn)
        xt = m.tensor(x, requires_grad=True)
        y = bn(xt).square().sum() + bn(xt * 2 + 1).sin().sum()
        y.backward()
        outs.append((y, xt.grad, bn.running_mean, bn.running_var, bn.num_batches_tracked,
                     bn.weight.grad if bn.weight is not None else None))
    for i, (t, l) in enumerate(zip(*outs)):
        if t is None:
            assert l is None
        else:
            assert_close(l, t, 1e-4, 1e-4, f"item {i}")


@pytest.mark.parametrize("train", [True, False])
def test_batchnorm_wrong_channel_count_message(train):
    def fn(m, x):
        bn = m.nn.BatchNorm2d(3)
        bn.train(train)
        return bn(x)
    raises_like(fn, f32(2, 4, 5, 5))


def test_groupnorm_indivisible_channels_message():
    with pytest.raises(ValueError) as te:
        torch.nn.GroupNorm(3, 4)
    with pytest.raises(ValueError) as le:
        torchlike.nn.GroupNorm(3, 4)
    assert str(le.value) == str(te.value)


# ---------------------------------------------------------------- pixel shuffle

@pytest.mark.parametrize("fn,shape", [
    (lambda m, x: m.nn.PixelShuffle(3)(x), (2, 4, 9, 10)),
    (lambda m, x: m.nn.PixelUnshuffle(4)(x), (2, 4, 9, 12)),
    (lambda m, x: m.nn.PixelUnshuffle(3)(x), (2, 4, 9, 10)),
    (lambda m, x: m.nn.functional.pixel_shuffle(x, 0), (2, 4, 4, 4)),
    (lambda m, x: m.nn.functional.pixel_unshuffle(x, 2), (4, 4)),
], ids=["shuffle_channels", "unshuffle_height", "unshuffle_width", "shuffle_zero", "unshuffle_2d"])
def test_pixel_shuffle_bad_shapes_raise_like_torch(fn, shape):
    raises_like(fn, f32(*shape))


# ---------------------------------------------------------------- grid_sample

def _grid_case(m, x, theta, mode, pm, ac, size, scale):
    F = m.nn.functional
    grid = F.affine_grid(theta, size, align_corners=ac) * scale
    return F.grid_sample(x, grid, mode=mode, padding_mode=pm, align_corners=ac)


def _compare_grad_case(fn, *arrays, atol=1e-4):
    (to, tin), (lo, lin) = both(fn, *arrays)
    assert tuple(lo.shape) == tuple(to.shape)
    assert_close(lo, to, atol, 1e-4, "out")
    g = f32(*to.shape)
    (to * torch.tensor(g)).sum().backward()
    (lo * torchlike.tensor(g)).sum().backward()
    for i, (a, b) in enumerate(zip(lin, tin)):
        if b.grad is None:
            assert a.grad is None, f"grad {i}"
            continue
        assert_close(a.grad, b.grad, atol * 10, 1e-3, f"grad {i}")


@pytest.mark.parametrize("ac", [False, True])
@pytest.mark.parametrize("pm", ["zeros", "border", "reflection"])
def test_grid_sample_bicubic(pm, ac):
    theta = f32(2, 2, 3, scale=0.3) + np.eye(2, 3, dtype=np.float32)
    _compare_grad_case(lambda m, x, t: _grid_case(m, x, t, "bicubic", pm, ac, [2, 4, 6, 7], 1.7),
                       f32(2, 4, 9, 10), theta)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("pm", ["zeros", "border", "reflection"])
def test_grid_sample_volumetric(mode, pm):
    theta = f32(2, 3, 4, scale=0.3) + np.eye(3, 4, dtype=np.float32)
    _compare_grad_case(lambda m, x, t: _grid_case(m, x, t, mode, pm, False, [2, 3, 4, 3, 5], 1.5),
                       f32(2, 3, 5, 6, 7), theta)


@pytest.mark.parametrize("mode,xs,gs", [
    ("bilinear", (2, 4, 5, 6), (3, 5, 3, 2)),        # batch sizes differ
    ("bilinear", (2, 4, 5, 6), (2, 5, 3, 3)),        # last grid dim is not 2
    ("bilinear", (2, 3, 4, 5, 6), (2, 5, 3, 3)),     # 5-D input, 4-D grid
    ("bicubic", (2, 3, 4, 5, 6), (2, 5, 3, 3, 3)),   # bicubic is 2-D only
    ("bilinear", (2, 3, 4), (2, 5, 1)),              # 3-D input
    ("bilinear", (2, 3, 0, 4), (2, 5, 3, 2)),        # empty spatial dim
], ids=["batch", "last_dim", "ndim", "bicubic_5d", "input_3d", "empty"])
def test_grid_sample_bad_shapes_raise_like_torch(mode, xs, gs):
    raises_like(lambda m, x, g: m.nn.functional.grid_sample(x, g, mode=mode, align_corners=False),
                f32(*xs), f32(*gs))


def test_grid_sample_grid_dtype_must_match_input():
    raises_like(lambda m, x, g: m.nn.functional.grid_sample(x, g.double(), align_corners=False),
                f32(2, 4, 5, 6), f32(2, 5, 3, 2))


def test_spatial_transformer_network_training():
    # the PyTorch STN tutorial's shape: a localisation net regresses theta, initialised to the
    # identity, then affine_grid + grid_sample warp the input before a classifier
    def build(nn):
        class STN(nn.Module):
            def __init__(self):
                super().__init__()
                self.loc = nn.Sequential(nn.Conv2d(1, 4, 5), nn.MaxPool2d(2, stride=2), nn.ReLU(True))
                self.fc_loc = nn.Sequential(nn.Linear(4 * 4 * 4, 8), nn.ReLU(True), nn.Linear(8, 6))
                self.fc_loc[2].weight.data.zero_()
                self.fc_loc[2].bias.data.copy_(
                    self.fc_loc[2].bias.data.new_tensor([1, 0, 0, 0, 1, 0]))
                self.cls = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(),
                                         nn.Linear(4 * 10 * 10, 5))

            def forward(self, x, mode):
                theta = self.fc_loc(self.loc(x).view(-1, 64)).view(-1, 2, 3)
                grid = nn.functional.affine_grid(theta, x.size(), align_corners=False)
                x = nn.functional.grid_sample(x, grid, mode=mode, align_corners=False)
                return self.cls(x)
        return STN()

    data = [(f32(4, 1, 12, 12), R.integers(0, 5, 4)) for _ in range(3)]
    for mode in ("bilinear", "bicubic"):
        torch.manual_seed(0)
        tm, lm = build(torch.nn), build(torchlike.nn)
        copy_state(tm, lm)
        topt = torch.optim.SGD(tm.parameters(), lr=0.05, momentum=0.9)
        lopt = torchlike.optim.SGD(lm.parameters(), lr=0.05, momentum=0.9)
        for step, (x, y) in enumerate(data * 2):
            losses = []
            for m, model, opt in ((torch, tm, topt), (torchlike, lm, lopt)):
                opt.zero_grad()
                loss = m.nn.functional.cross_entropy(model(m.tensor(x), mode), m.tensor(y))
                loss.backward()
                opt.step()
                losses.append(loss)
            assert_close(losses[1], losses[0], 1e-5, 1e-4, f"{mode} step {step} loss")
        tp = dict(tm.named_parameters())
        for k, p in lm.named_parameters():
            assert_close(p, tp[k], 1e-5, 1e-4, f"{mode} param {k}")


@pytest.mark.parametrize("ac", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_affine_grid_identity_is_torchs_grid_bit_for_bit(ac, dtype):
    # an identity theta must put grid points exactly where torch does (pixel centres): an ulp
    # off flips grid_sample's floor() and the gradient reaching theta
    theta = np.eye(2, 3, dtype=np.float32)[None]
    a = torch.nn.functional.affine_grid(torch.tensor(theta, dtype=getattr(torch, dtype)),
                                        [1, 1, 12, 33], align_corners=ac).numpy()
    b = torchlike.nn.functional.affine_grid(
        torchlike.tensor(theta, dtype=getattr(torchlike, dtype)), [1, 1, 12, 33],
        align_corners=ac).numpy()
    np.testing.assert_array_equal(b, a)


# ---------------------------------------------------------------- convolution geometry checks

def _w(*shape):
    return f32(*shape)


@pytest.mark.parametrize("fn,shapes", [
    (lambda m, x, w: m.nn.functional.conv2d(x, w, padding=-1), ((2, 4, 9, 10), (4, 4, 3, 3))),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, stride=0), ((2, 4, 9, 10), (4, 4, 3, 3))),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, dilation=0), ((2, 4, 9, 10), (4, 4, 3, 3))),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, groups=0), ((2, 4, 9, 10), (4, 4, 3, 3))),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, stride=(1, 1, 1)), ((2, 4, 9, 10), (4, 4, 3, 3))),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, groups=3), ((2, 6, 9, 10), (4, 2, 3, 3))),
    (lambda m, x, w: m.nn.functional.conv2d(x, w, m.zeros(3)), ((2, 4, 9, 10), (4, 4, 3, 3))),
    (lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, stride=2, output_padding=2),
     ((2, 4, 9, 10), (4, 4, 3, 3))),
    (lambda m, x, w: m.nn.functional.conv_transpose1d(x, w, stride=2, output_padding=2),
     ((2, 4, 9), (4, 4, 3))),
    (lambda m, x, w: m.nn.functional.conv_transpose3d(x, w, stride=2, output_padding=2),
     ((1, 4, 3, 4, 5), (4, 4, 3, 3, 3))),
    (lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, padding=-1),
     ((2, 4, 9, 10), (4, 4, 3, 3))),
    (lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, output_padding=-1),
     ((2, 4, 9, 10), (4, 4, 3, 3))),
    (lambda m, x, w: m.nn.functional.conv_transpose2d(x, w), ((2, 4, 9, 10), (3, 4, 3, 3))),
    (lambda m, x, w: m.nn.functional.conv_transpose2d(x, w), ((4, 9), (4, 4, 3, 3))),
    (lambda m, x, w: m.nn.functional.conv_transpose2d(x, w, m.zeros(3)),
     ((2, 4, 9, 10), (4, 2, 3, 3))),
], ids=["neg_padding", "zero_stride", "zero_dilation", "zero_groups", "stride_len",
        "weight_groups", "bias_size", "t_output_padding", "t1_output_padding",
        "t3_output_padding", "t_neg_padding", "t_neg_output_padding", "t_channels", "t_2d_input",
        "t_bias_size"])
def test_conv_bad_geometry_raises_like_torch(fn, shapes):
    raises_like(fn, *[f32(*s) for s in shapes])


def test_conv_transpose_output_padding_below_dilation_is_allowed():
    # torch allows output_padding < stride OR < dilation
    x, w = f32(2, 4, 6, 7), f32(4, 3, 3, 3)
    (to, _), (lo, _) = both(lambda m, x, w: m.nn.functional.conv_transpose2d(
        x, w, stride=1, dilation=3, output_padding=2), x, w, grad=False)
    assert_close(lo, to, 1e-5, 1e-5, "out")


@pytest.mark.parametrize("output_size", [(2, 19, 20), (19,), [30, 30], [2, 4, 30, 30]],
                         ids=["len3", "len1", "too_big", "full_too_big"])
def test_conv_transpose_module_output_size_errors(output_size):
    def fn(m, x):
        return m.nn.ConvTranspose2d(4, 4, 3, stride=2)(x, output_size=output_size)
    raises_like(fn, f32(2, 4, 9, 10))


def test_conv_transpose_module_output_size_full_shape_and_unbatched():
    x = f32(2, 4, 9, 10)
    for call in (lambda mod, m, x: mod(x, output_size=[2, 4, 18, 20]),
                 lambda mod, m, x: mod(x[0], output_size=m.Size([4, 18, 19]))):
        outs = []
        for m in (torch, torchlike):
            torch.manual_seed(0)
            tmod = torch.nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1)
            mod = tmod if m is torch else copy_state(tmod, torchlike.nn.ConvTranspose2d(
                4, 3, 3, stride=2, padding=1))
            outs.append(call(mod, m, m.tensor(x)))
        assert tuple(outs[1].shape) == tuple(outs[0].shape)
        assert_close(outs[1], outs[0], 1e-5, 1e-5, "out")


# ---------------------------------------------------------------- padding modes

@pytest.mark.parametrize("mode,shape,pad", [
    ("reflect", (2, 4, 9, 10), (10, 10, 1, 1)),
    ("reflect", (2, 4, 9, 10), (1, 1, 9, 0)),
    ("reflect", (1, 2, 3, 4, 5), (0, 0, 0, 0, 3, 0)),
    ("circular", (2, 4, 9, 10), (11, 1, 2, 5)),
    ("circular", (2, 4, 9, 10), (1, 1, 10, 0)),
    ("replicate", (2, 4, 9, 10), (1, 1)),
    ("reflect", (9,), (1, 1)),
    ("replicate", (2, 4, 0, 10), (1, 1, 0, 0)),
], ids=["reflect_w", "reflect_h", "reflect_d", "circular_w", "circular_h", "replicate_4d_1pad",
        "reflect_1d", "replicate_empty"])
def test_pad_non_constant_bad_sizes_raise_like_torch(mode, shape, pad):
    raises_like(lambda m, x: m.nn.functional.pad(x, pad, mode=mode), f32(*shape))


def test_circular_pad_up_to_the_whole_dimension():
    (to, _), (lo, _) = both(lambda m, x: m.nn.functional.pad(x, (10, 1, 9, 0), mode="circular"),
                            f32(2, 3, 9, 10), grad=False)
    assert_close(lo, to, 0, 0, "out")


# ---------------------------------------------------------------- pooling checks

_POOL_CASES = {
    "max2d_2d_input": (lambda F, x: F.max_pool2d(x, 2), (9, 10)),
    "max2d_too_small": (lambda F, x: F.max_pool2d(x, 12), (2, 4, 9, 10)),
    "max2d_zero_stride": (lambda F, x: F.max_pool2d(x, 2, stride=0), (2, 4, 9, 10)),
    "max2d_zero_kernel": (lambda F, x: F.max_pool2d(x, 0, stride=1), (2, 4, 9, 10)),
    "max2d_neg_padding": (lambda F, x: F.max_pool2d(x, 2, padding=-1), (2, 4, 9, 10)),
    "max2d_zero_dilation": (lambda F, x: F.max_pool2d(x, 2, dilation=0), (2, 4, 9, 10)),
    "max2d_kernel_len": (lambda F, x: F.max_pool2d(x, (2, 2, 2)), (2, 4, 9, 10)),
    "max2d_stride_len": (lambda F, x: F.max_pool2d(x, 2, stride=(1, 1, 1)), (2, 4, 9, 10)),
    "max2d_idx_too_small": (lambda F, x: F.max_pool2d(x, 12, return_indices=True),
                            (2, 4, 9, 10)),
    "max2d_empty_channels": (lambda F, x: F.max_pool2d(x[:, :0], 2), (2, 4, 9, 10)),
    "max1d_too_small": (lambda F, x: F.max_pool1d(x, 12), (2, 4, 9)),
    "max1d_1d_input": (lambda F, x: F.max_pool1d(x, 2), (9,)),
    "max1d_padding": (lambda F, x: F.max_pool1d(x, 2, padding=2), (2, 4, 9)),
    "max1d_idx_too_small": (lambda F, x: F.max_pool1d(x, 12, return_indices=True), (2, 4, 9)),
    "max1d_idx_4d_input": (lambda F, x: F.max_pool1d(x, 2, return_indices=True), (1, 2, 4, 9)),
    "max3d_too_small": (lambda F, x: F.max_pool3d(x, 6), (1, 2, 4, 5, 6)),
    "max2d_padding_over_half": (lambda F, x: F.max_pool2d(x, (3, 5), 1, (2, 1), 2),
                                (1, 2, 9, 9)),
    "max1d_idx_padding_over_half": (lambda F, x: F.max_pool1d(x, 3, 1, 2, 2, return_indices=True),
                                    (1, 2, 9)),
    "max3d_padding_over_half": (lambda F, x: F.max_pool3d(x, 3, 1, 2, 2), (1, 2, 9, 9, 9)),
    "max3d_zero_kernel": (lambda F, x: F.max_pool3d(x, 0, stride=1), (1, 2, 4, 5, 6)),
    "avg2d_2d_input": (lambda F, x: F.avg_pool2d(x, 2), (9, 10)),
    "avg2d_5d_input": (lambda F, x: F.avg_pool2d(x, 2), (1, 2, 4, 9, 10)),
    "avg2d_too_small": (lambda F, x: F.avg_pool2d(x, 12), (2, 4, 9, 10)),
    "avg2d_neg_padding": (lambda F, x: F.avg_pool2d(x, 2, padding=-1), (2, 4, 9, 10)),
    "avg2d_zero_divisor": (lambda F, x: F.avg_pool2d(x, 2, divisor_override=0), (2, 4, 9, 10)),
    "avg2d_int32": (lambda F, x: F.avg_pool2d(x.int(), 2), (2, 4, 9, 10)),
    "avg1d_4d_input": (lambda F, x: F.avg_pool1d(x, 2), (2, 4, 9, 10)),
    "avg1d_too_small": (lambda F, x: F.avg_pool1d(x, 12), (2, 4, 9)),
    "avg3d_smaller_than_kernel": (lambda F, x: F.avg_pool3d(x, 3, padding=1), (1, 2, 2, 5, 6)),
    "adaptive_avg_len": (lambda F, x: F.adaptive_avg_pool2d(x, (2, 3, 4)), (2, 4, 9, 10)),
    "adaptive_avg_2d_input": (lambda F, x: F.adaptive_avg_pool2d(x, 2), (9, 10)),
    "adaptive_avg_negative": (lambda F, x: F.adaptive_avg_pool2d(x, (-1, 2)), (2, 4, 9, 10)),
    "adaptive_avg1d_len": (lambda F, x: F.adaptive_avg_pool1d(x, (2, 2)), (2, 4, 9)),
    "adaptive_avg1d_1d_input": (lambda F, x: F.adaptive_avg_pool1d(x, 2), (9,)),
    "adaptive_avg3d_len": (lambda F, x: F.adaptive_avg_pool3d(x, (1, 2)), (1, 2, 3, 4, 5)),
    "adaptive_max_len": (lambda F, x: F.adaptive_max_pool2d(x, (2, 3, 4)), (2, 4, 9, 10)),
    "adaptive_max_2d_input": (lambda F, x: F.adaptive_max_pool2d(x, 2), (9, 10)),
    "adaptive_max_negative": (lambda F, x: F.adaptive_max_pool2d(x, (-1, 2)), (2, 4, 9, 10)),
    "adaptive_max_empty": (lambda F, x: F.adaptive_max_pool2d(x[:, :, :0], 2), (2, 4, 9, 10)),
    "adaptive_avg_long": (lambda F, x: F.adaptive_avg_pool2d(x.long(), 2), (2, 4, 9, 10)),
    "adaptive_avg_none_on_2d": (lambda F, x: F.adaptive_avg_pool2d(x, (None, 3)), (9, 10)),
    "adaptive_max_none_on_2d": (lambda F, x: F.adaptive_max_pool2d(x, (None, 3)), (9, 10)),
    "adaptive_avg_output_none": (lambda F, x: F.adaptive_avg_pool2d(x, None), (2, 4, 9, 10)),
    "adaptive_avg1d_output_none": (lambda F, x: F.adaptive_avg_pool1d(x, None), (2, 4, 9)),
    "adaptive_avg_one_element_list": (lambda F, x: F.adaptive_avg_pool2d(x, [3]), (2, 4, 9, 10)),
    "adaptive_max_one_element_list": (lambda F, x: F.adaptive_max_pool2d(x, [3]), (2, 4, 9, 10)),
    "adaptive_avg_float_size": (lambda F, x: F.adaptive_avg_pool2d(x, 2.0), (2, 4, 9, 10)),
    "adaptive_avg_float_element": (lambda F, x: F.adaptive_avg_pool2d(x, (2.5, 3)),
                                   (2, 4, 9, 10)),
    "unpool_output_size": (lambda F, x: F.max_unpool2d(*F.max_pool2d(x, 2, return_indices=True),
                                                       2, output_size=(20, 20)), (2, 4, 9, 10)),
    "unpool_output_size_len": (lambda F, x: F.max_unpool2d(
        *F.max_pool2d(x, 2, return_indices=True), 2, output_size=(2, 20, 20)), (2, 4, 9, 10)),
    "unpool_indices_shape": (lambda F, x: F.max_unpool2d(
        F.max_pool2d(x, 2), F.max_pool2d(x, 2, return_indices=True)[1][..., :3], 2),
        (2, 4, 9, 10)),
    "unpool_indices_dtype": (lambda F, x: F.max_unpool2d(
        F.max_pool2d(x, 2), F.max_pool2d(x, 2, return_indices=True)[1].int(), 2), (2, 4, 9, 10)),
    "unpool_2d_input": (lambda F, x: F.max_unpool2d(x, x.long(), 2), (4, 5)),
}


@pytest.mark.parametrize("case", sorted(_POOL_CASES))
def test_pooling_misuse_raises_like_torch(case):
    fn, shape = _POOL_CASES[case]
    raises_like(lambda m, x: fn(m.nn.functional, x), f32(*shape))


@pytest.mark.parametrize("fn", [
    lambda F, x: F.avg_pool2d(x, 2, padding=1, count_include_pad=True),
    lambda F, x: F.avg_pool2d(x, 2, padding=1, count_include_pad=False, ceil_mode=True),
    lambda F, x: F.avg_pool2d(x, 3, stride=2, padding=1, divisor_override=4),
    lambda F, x: F.avg_pool1d(x.flatten(1, 2), 3),
    lambda F, x: F.avg_pool3d(x.unsqueeze(0), 2),
], ids=["include_pad", "exclude_pad_ceil", "divisor", "1d", "3d"])
def test_avg_pool_int64_stays_int64_and_truncates(fn):
    x = np.arange(-20, 20, dtype=np.int64).reshape(1, 2, 4, 5)
    (to, _), (lo, _) = both(lambda m, x: fn(m.nn.functional, x), x, grad=False)
    assert str(lo.dtype) == str(to.dtype)
    np.testing.assert_array_equal(lo.numpy(), to.numpy())


# ---------------------------------------------------------------- interpolate

_INTERP_ERRORS = {
    "size_and_scale": lambda F, x: F.interpolate(x, size=3, scale_factor=2),
    "neither": lambda F, x: F.interpolate(x),
    "bad_mode": lambda F, x: F.interpolate(x, scale_factor=2, mode="cubic"),
    "size_len": lambda F, x: F.interpolate(x, size=(3, 4, 5)),
    "scale_len": lambda F, x: F.interpolate(x, scale_factor=(2.0, 3.0, 4.0)),
    "float_size": lambda F, x: F.interpolate(x, size=(3.0, 4)),
    "zero_output": lambda F, x: F.interpolate(x, scale_factor=0.05),
    "zero_output_bilinear": lambda F, x: F.interpolate(x, size=(0, 3), mode="bilinear"),
    "recompute_with_size": lambda F, x: F.interpolate(x, size=3, recompute_scale_factor=True),
    "linear_on_4d": lambda F, x: F.interpolate(x, scale_factor=2, mode="linear"),
    "trilinear_on_4d": lambda F, x: F.interpolate(x, scale_factor=2, mode="trilinear"),
    "bilinear_on_3d": lambda F, x: F.interpolate(x[0], scale_factor=2, mode="bilinear"),
    "antialias_nearest": lambda F, x: F.interpolate(x, scale_factor=2, antialias=True),
    "lanczos_no_antialias": lambda F, x: F.interpolate(x, scale_factor=2, mode="lanczos"),
    "lanczos_align_corners": lambda F, x: F.interpolate(x, scale_factor=2, mode="lanczos",
                                                         antialias=True, align_corners=True),
    "nearest_int64": lambda F, x: F.interpolate(x.long(), scale_factor=2),
    "bilinear_int32": lambda F, x: F.interpolate(x.int(), scale_factor=2, mode="bilinear"),
    "linear_uint8": lambda F, x: F.interpolate(x[0].byte(), scale_factor=2, mode="linear"),
    "antialias_half": lambda F, x: F.interpolate(x.half(), scale_factor=0.5, mode="bilinear",
                                                  antialias=True),
}


@pytest.mark.parametrize("case", sorted(_INTERP_ERRORS))
def test_interpolate_misuse_raises_like_torch(case):
    raises_like(lambda m, x: _INTERP_ERRORS[case](m.nn.functional, x), f32(2, 3, 9, 10))


@pytest.mark.parametrize("size", [(5, 17), (9, 10), (23, 6)])
def test_interpolate_lanczos(size):
    _compare_grad_case(lambda m, x: m.nn.functional.interpolate(
        x, size=size, mode="lanczos", antialias=True), f32(2, 3, 9, 10))


@pytest.mark.parametrize("mode,kw", [
    ("nearest", {}), ("nearest-exact", {}),
    ("bilinear", {"align_corners": False}), ("bilinear", {"align_corners": True}),
    ("bicubic", {"align_corners": False}), ("bicubic", {"align_corners": True}),
    ("bilinear", {"antialias": True}), ("bicubic", {"antialias": True}),
    ("lanczos", {"antialias": True}),
], ids=lambda v: v if isinstance(v, str) else "-".join(f"{k}={w}" for k, w in v.items()))
def test_interpolate_uint8_images(mode, kw):
    # resizing a uint8 image interpolates (it used to truncate the weights to nearest-like
    # values) and saturates: torch's fixed-point kernels may round a pixel the other way
    img = np.random.default_rng(7).integers(0, 256, (2, 3, 17, 23)).astype(np.uint8)
    # (cubic and lanczos kernels overshoot: a weight's rounding can move a pixel by 2)
    tol = 0 if mode.startswith("nearest") else (1 if mode == "bilinear" else 2)
    for size in ((9, 11), (40, 31)):
        a = torch.nn.functional.interpolate(torch.tensor(img), size=size, mode=mode, **kw)
        b = torchlike.nn.functional.interpolate(torchlike.tensor(img), size=size, mode=mode,
                                                **kw)
        assert str(b.dtype) == str(a.dtype)
        diff = np.abs(a.numpy().astype(int) - b.numpy().astype(int))
        assert diff.max() <= tol, diff.max()
        assert (diff != 0).mean() < 0.03


# ---------------------------------------------------------------- normalisation checks

def _mod(m, cls, *a, **k):
    torch.manual_seed(0)
    t = getattr(torch.nn, cls)(*a, **k)
    return t if m is torch else copy_state(t, getattr(torchlike.nn, cls)(*a, **k))


_NORM_ERRORS = {
    "groupnorm_weight_size": lambda m, x: _mod(m, "GroupNorm", 2, 6)(x),
    "instancenorm_channels_affine": lambda m, x: _mod(m, "InstanceNorm2d", 3, affine=True)(x),
    "instancenorm_2d_input": lambda m, x: _mod(m, "InstanceNorm2d", 4)(x[0, 0]),
    "instancenorm_one_spatial": lambda m, x: _mod(m, "InstanceNorm2d", 4)(x[:, :, :1, :1]),
    "batchnorm_eval_without_stats": lambda m, x: m.nn.functional.batch_norm(
        x, None, None, training=False),
    "batchnorm_double_input_float_params": lambda m, x: _mod(m, "BatchNorm2d", 4)(x.double()),
    "batchnorm_float_input_double_params": lambda m, x: _mod(m, "BatchNorm2d", 4).double()(x),
    "batchnorm_half_input_double_params": lambda m, x: _mod(m, "BatchNorm2d", 4).double()(
        x.half()),
}


@pytest.mark.parametrize("case", sorted(_NORM_ERRORS))
def test_normalisation_misuse_raises_like_torch(case):
    raises_like(_NORM_ERRORS[case], f32(2, 4, 9, 10))


def test_instancenorm_channel_mismatch_without_affine_warns():
    x = torchlike.tensor(f32(2, 4, 9, 10))
    with pytest.warns(UserWarning, match="does not match num_features"):
        torchlike.nn.InstanceNorm2d(3)(x)


def test_batchnorm_half_input_float_params_is_allowed():
    x = f32(2, 4, 9, 10)
    (to, _), (lo, _) = both(lambda m, x: _mod(m, "BatchNorm2d", 4)(x.half()), x, grad=False)
    assert str(lo.dtype) == str(to.dtype)
    assert_close(lo.float(), to.float(), 2e-3, 2e-3, "out")


# ---------------------------------------------------------------- feature dropout masks

def _mask_shape(y, shape):
    return tuple(s if not np.all(y == np.take(y, [0], axis=i)) else 1
                 for i, s in enumerate(shape))


@pytest.mark.parametrize("cls,shape", [
    ("Dropout2d", (64, 8, 8)), ("Dropout2d", (16, 8, 4, 4)), ("Dropout2d", (64, 8)),
    ("Dropout2d", (4, 8, 3, 3, 3)), ("Dropout1d", (64, 8)), ("Dropout1d", (4, 64, 8)),
    ("Dropout3d", (16, 2, 2, 2)), ("Dropout3d", (16, 2, 2)),
], ids=str)
def test_feature_dropout_masks_the_dimensions_torch_masks(cls, shape):
    # dropout2d reads a 3-D input as (N, C, L) (one mask value per batch and channel), and any
    # other rank by its first two dimensions; the statistics must match torch's
    import warnings
    masks = []
    for m in (torch, torchlike):
        m.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = getattr(m.nn, cls)(0.5)(m.ones(*shape)).numpy()
        masks.append(_mask_shape(y, shape))
    assert masks[1] == masks[0]


def test_dropout2d_3d_input_warns_like_torch():
    with pytest.warns(UserWarning, match="interpreted as shape \\(N, C, L\\)"):
        torchlike.nn.functional.dropout2d(torchlike.ones(4, 8, 8), 0.5)
    with pytest.warns(UserWarning, match="Received a 5-D input to dropout2d"):
        torchlike.nn.functional.dropout2d(torchlike.ones(2, 4, 8, 8, 2), 0.5)


# ---------------------------------------------------------------- grad_fn names

@pytest.mark.parametrize("fn", [
    lambda F, x: F.max_pool1d(x, 2),
    lambda F, x: F.max_pool1d(x, 2, return_indices=True)[0],
    lambda F, x: F.avg_pool1d(x, 2),
    lambda F, x: F.adaptive_avg_pool1d(x, 3),
    lambda F, x: F.adaptive_max_pool1d(x, 3),
    lambda F, x: F.pad(x, (1, 1), mode="circular"),
    lambda F, x: F.pixel_unshuffle(x.unsqueeze(0).expand(2, -1, -1, -1).reshape(2, 4, 2, 6), 2),
], ids=["max_pool1d", "max_pool1d_indices", "avg_pool1d", "adaptive_avg_pool1d",
        "adaptive_max_pool1d", "circular_pad", "pixel_unshuffle"])
def test_grad_fn_names_as_torch(fn):
    x = f32(2, 4, 6)
    (to, _), (lo, _) = both(lambda m, x: fn(m.nn.functional, x), x)
    assert lo.grad_fn.name() == to.grad_fn.name()


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_nearest_source_indices_in_torchs_float32_arithmetic(nd, mode):
    # (19 + 0.5) / 1.3 is 15 in torch's float32 arithmetic and 14.99... in float64; torch's
    # 2-d nearest kernel also short-cuts an unchanged or doubled size (1.1, 2.0001)
    for L in (3, 7, 23):
        for sf in (0.7, 1.1, 1.3, 2.0001, 3.3):
            shape = (1, 1) + (L,) * nd if nd < 3 else (1, 1, L, 4, 3)
            x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
            a = torch.nn.functional.interpolate(torch.tensor(x), scale_factor=sf, mode=mode)
            b = torchlike.nn.functional.interpolate(torchlike.tensor(x), scale_factor=sf,
                                                    mode=mode)
            np.testing.assert_array_equal(b.numpy(), a.numpy(), err_msg=f"L={L} sf={sf}")


def test_reduced_precision_upsampling_gradient_accumulates_in_float32():
    x = f32(2, 3, 5, 6)
    g = f32(2, 3, 10, 12)
    grads = []
    for m in (torch, torchlike):
        t = m.tensor(x).bfloat16().requires_grad_()
        y = m.nn.functional.interpolate(t, scale_factor=2)
        (y * m.tensor(g).bfloat16()).sum().backward()
        grads.append(t.grad.float().numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


# ---------------------------------------------------------------- max pooling corner values

@pytest.mark.parametrize("dtype", ["float32", "uint8", "int8"])
def test_max_pool_indices_never_point_into_padding(dtype):
    # a window whose real values are all the dtype's minimum (-inf, 0 for uint8) must pick its
    # first real element, as torch's scan does, not a padding position
    x = R.integers(0, 2, (1, 2, 5, 5)).astype(np.float32)
    x[0, 0, :2, :2] = -np.inf if dtype == "float32" else 0
    x[0, 1, :3, :3] = -np.inf if dtype == "float32" else 0
    if dtype == "int8":
        x = np.where(np.isinf(x), 0, x) - 128
    arr = x.astype(dtype)
    res = []
    for m in (torch, torchlike):
        t = m.tensor(arr, requires_grad=dtype == "float32")
        v, i = m.nn.functional.max_pool2d(t, 3, stride=2, padding=1, return_indices=True)
        if dtype == "float32":
            v.sum().backward()
        res.append((v.numpy() if dtype != "float32" else v.detach().numpy(), i.numpy(),
                    t.grad.numpy() if dtype == "float32" else None))
    for a, b in zip(res[1], res[0]):
        if b is not None:
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("fn", [
    lambda F, x: F.max_pool2d(x.bool(), 2),
    lambda F, x: F.max_pool1d(x.long()[0], 2),
    lambda F, x: F.max_pool3d(x.bool()[None], 2, return_indices=True),
], ids=["bool_2d", "int64_1d", "bool_3d"])
def test_max_pool_unsupported_dtypes_raise_like_torch(fn):
    raises_like(lambda m, x: fn(m.nn.functional, x), f32(1, 2, 4, 4))


def test_max_pool_uint8():
    x = R.integers(0, 256, (1, 2, 7, 7)).astype(np.uint8)
    for kw in ({"kernel_size": 3, "stride": 2, "padding": 1}, {"kernel_size": 2}):
        a = torch.nn.functional.max_pool2d(torch.tensor(x), **kw)
        b = torchlike.nn.functional.max_pool2d(torchlike.tensor(x), **kw)
        assert str(b.dtype) == str(a.dtype)
        np.testing.assert_array_equal(b.numpy(), a.numpy())


# ---------------------------------------------------------------- segmentation losses

_CE_SHAPES = {
    "4d_target_2d": ((2, 5, 4, 3), (2, 4)),
    "4d_size_mismatch": ((2, 5, 4, 3), (2, 2, 3)),
    "4d_batch": ((2, 5, 4, 3), (3, 4, 3)),
    "3d_target_size": ((2, 5, 4), (2, 3)),
    "5d_target_size": ((2, 5, 4, 3, 2), (2, 4, 3, 1)),
    "1d_target_two": ((5,), (2,)),
}


@pytest.mark.parametrize("fn", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("case", sorted(_CE_SHAPES))
@pytest.mark.parametrize("weighted", [False, True])
def test_class_index_losses_bad_shapes_raise_like_torch(fn, case, weighted):
    xs, ts = _CE_SHAPES[case]
    errs = []
    for m in (torch, torchlike):
        with pytest.raises(Exception) as ei:
            getattr(m.nn.functional, fn)(m.zeros(*xs), m.zeros(*ts, dtype=m.long),
                                         weight=m.ones(3) if weighted else None)
        errs.append(ei.value)
    assert type(errs[1]).__name__ == type(errs[0]).__name__
    assert str(errs[1]) == str(errs[0])


@pytest.mark.parametrize("fn", [
    lambda F, x, w: F.cross_entropy(x, F.softmax(x, 1).argmax(1), weight=w[:5]),
    lambda F, x, w: F.nll_loss(F.log_softmax(x, 1), F.softmax(x, 1).argmax(1), weight=w[:5]),
    lambda F, x, w: F.binary_cross_entropy(x.sigmoid(), x.sigmoid().detach(),
                                           weight=w.view(1, 5, 1, 1)[:, :, :, :1]),
    lambda F, x, w: F.binary_cross_entropy_with_logits(x, x.sigmoid().detach(),
                                                       pos_weight=w.view(5, 1, 1)),
], ids=["cross_entropy", "nll_loss", "bce", "bce_with_logits_pos_weight"])
def test_loss_weights_requiring_grad_raise_like_torch(fn):
    x, w = f32(2, 5, 4, 3), np.abs(f32(5)) + 0.1
    errs = []
    for m in (torch, torchlike):
        with pytest.raises(RuntimeError) as ei:
            fn(m.nn.functional, m.tensor(x, requires_grad=True), m.tensor(w, requires_grad=True))
        errs.append(str(ei.value))
    assert errs[1] == errs[0]


def test_segmentation_cross_entropy_with_weights_and_ignore_index():
    logits = f32(2, 5, 4, 3)
    tgt = R.integers(0, 5, (2, 4, 3))
    tgt[0, 0] = 255
    w = np.abs(f32(5)) + 0.1
    outs = []
    for m in (torch, torchlike):
        x = m.tensor(logits, requires_grad=True)
        loss = m.nn.functional.cross_entropy(x, m.tensor(tgt), weight=m.tensor(w),
                                             ignore_index=255, label_smoothing=0.1)
        loss.backward()
        outs.append((loss, x.grad))
    assert_close(outs[1][0], outs[0][0], 1e-5, 1e-5, "loss")
    assert_close(outs[1][1], outs[0][1], 1e-5, 1e-5, "grad")


# ---------------------------------------------------------------- nn.utils for deployment code

def test_convert_conv_weight_memory_format_and_utils_submodules():
    x = f32(2, 3, 8, 8)
    outs = []
    for m in (torch, torchlike):
        torch.manual_seed(0)
        tnet = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Sequential(
            torch.nn.ConvTranspose2d(4, 2, 3)))
        net = tnet if m is torch else copy_state(tnet, torchlike.nn.Sequential(
            torchlike.nn.Conv2d(3, 4, 3), torchlike.nn.Sequential(
                torchlike.nn.ConvTranspose2d(4, 2, 3))))
        vec = m.nn.utils.convert_parameters.parameters_to_vector(net.parameters())
        assert m.nn.utils.convert_conv2d_weight_memory_format(net, m.channels_last) is net
        assert m.nn.utils.convert_conv3d_weight_memory_format(net, m.channels_last) is net
        outs.append((net(m.tensor(x)), vec))
        assert m.nn.utils.clip_grad.clip_grad_norm_ is m.nn.utils.clip_grad_norm_
        assert m.nn.utils.init.skip_init is m.nn.utils.skip_init
    for i, (a, b) in enumerate(zip(outs[1], outs[0])):
        assert_close(a, b, 1e-5, 1e-5, f"out {i}")


# ---------------------------------------------------------------- embeddings / metric learning

@pytest.mark.parametrize("fn", [
    lambda F, a, b: F.normalize(a, p=3.5, dim=1),
    lambda F, a, b: F.normalize(a, p=0.5, dim=1),
    lambda F, a, b: F.pdist(a, p=1.5),
    lambda F, a, b: F.pairwise_distance(a, b, p=3.0, eps=0.0),
], ids=["normalize_p3.5", "normalize_p0.5", "pdist_p1.5", "pairwise_p3"])
def test_p_norms_of_zero_vectors_have_torchs_gradient(fn):
    # a zero row (a dead embedding, identical rows in pdist) has norm 0 and gradient 0 through
    # the norm, not NaN
    a = f32(4, 8)
    a[1] = 0
    a[3] = a[0]
    b = a.copy()
    b[2] = f32(8)
    _compare_grad_case(lambda m, x, y: fn(m.nn.functional, x, y), a, b)


def test_cosine_embedding_loss_target_gets_no_gradient():
    y = np.array([1, -1, 1, -1], np.float32)
    for m in (torch, torchlike):
        t = m.tensor(y, requires_grad=True)
        m.nn.functional.cosine_embedding_loss(m.tensor(f32(4, 8), requires_grad=True),
                                              m.tensor(f32(4, 8)), t, margin=0.2).backward()
        assert t.grad is None


# ---------------------------------------------------------------- empty batches

def test_batchnorm_empty_batch_leaves_running_stats():
    # (the last, empty batch of a dataset; torch neither updates nor NaNs the statistics)
    outs = []
    x = f32(3, 4, 2, 2)
    for m in (torch, torchlike):
        bn = m.nn.BatchNorm2d(4)
        bn(m.tensor(x))
        y = bn(m.zeros(0, 4, 2, 2))
        outs.append((tuple(y.shape), bn.running_mean.numpy(), bn.running_var.numpy(),
                     int(bn.num_batches_tracked)))
    assert outs[1][0] == outs[0][0] and outs[1][3] == outs[0][3]
    np.testing.assert_allclose(outs[1][1], outs[0][1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(outs[1][2], outs[0][2], rtol=1e-5, atol=1e-6)


def test_groupnorm_empty_batch():
    (to, _), (lo, _) = both(lambda m, x: m.nn.GroupNorm(2, 4)(x), f32(0, 4, 5, 5), grad=False)
    assert tuple(lo.shape) == tuple(to.shape)


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_interpolate_zero_channels_raises_like_torch(mode):
    raises_like(lambda m, x: m.nn.functional.interpolate(x, size=(3, 3), mode=mode),
                f32(2, 0, 2, 2))


# ---------------------------------------------------------------- unfold / fold (patches)

_FOLD_ERRORS = {
    "unfold_5d": lambda F, x: F.unfold(x.unsqueeze(0), 2),
    "unfold_2d": lambda F, x: F.unfold(x[0, 0], 2),
    "unfold_too_big": lambda F, x: F.unfold(x, 10),
    "unfold_zero_stride": lambda F, x: F.unfold(x, 2, stride=0),
    "unfold_kernel_len": lambda F, x: F.unfold(x, (2, 2, 2)),
    "unfold_negative_padding": lambda F, x: F.unfold(x, 2, padding=-1),
    "unfold_zero_dilation": lambda F, x: F.unfold(x, 2, dilation=0),
    "fold_block_count": lambda F, x: F.fold(x.reshape(2, 12, 36)[:, :, :30], (8, 9), 2),
    "fold_channels": lambda F, x: F.fold(x.reshape(2, 12, 36)[:, :11], (8, 9), 2),
    "fold_4d": lambda F, x: F.fold(x, (8, 9), 2),
    "fold_output_size_len": lambda F, x: F.fold(x.reshape(2, 12, 36), (8, 9, 3), 2),
}


@pytest.mark.parametrize("case", sorted(_FOLD_ERRORS))
def test_unfold_fold_misuse_raises_like_torch(case):
    raises_like(lambda m, x: _FOLD_ERRORS[case](m.nn.functional, x), f32(2, 3, 8, 9))


def test_unfold_fold_unbatched():
    _compare_grad_case(lambda m, x: m.nn.functional.fold(
        m.nn.functional.unfold(x, 3, padding=1, stride=2), (8, 9), 3, padding=1, stride=2),
        f32(3, 8, 9))


# ---------------------------------------------------------------- weighted regression losses

@pytest.mark.parametrize("fn", ["mse_loss", "l1_loss", "huber_loss"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_regression_losses_honour_weight(fn, reduction):
    # (torch 2.13's per-element weight; it used to be accepted and ignored)
    x, t, w = f32(3, 4), f32(3, 4), np.abs(f32(3, 4))
    outs = []
    for m in (torch, torchlike):
        xt = m.tensor(x, requires_grad=True)
        y = getattr(m.nn.functional, fn)(xt, m.tensor(t), reduction=reduction, weight=m.tensor(w))
        y.sum().backward()
        outs.append((y, xt.grad))
    assert_close(outs[1][0], outs[0][0], 1e-5, 1e-5, "loss")
    assert_close(outs[1][1], outs[0][1], 1e-5, 1e-5, "grad")


@pytest.mark.parametrize("fn", ["mse_loss", "l1_loss", "huber_loss"])
def test_regression_loss_weight_shape_and_reduction_errors(fn):
    raises_like(lambda m, x, w: getattr(m.nn.functional, fn)(x, x, weight=w[:2]),
                f32(3, 4), f32(3, 4))
    raises_like(lambda m, x, w: getattr(m.nn.functional, fn)(x, x, reduction="avg", weight=w),
                f32(3, 4), f32(3, 4))


def test_adaptive_max_pool3d_with_indices_and_grid_sample_mode_tables():
    x = f32(1, 2, 4, 5, 6)
    a = torch.nn.functional.adaptive_max_pool3d_with_indices(torch.tensor(x), (2, 3, 3))
    b = torchlike.nn.functional.adaptive_max_pool3d_with_indices(torchlike.tensor(x), (2, 3, 3))
    np.testing.assert_array_equal(b[0].numpy(), a[0].numpy())
    np.testing.assert_array_equal(b[1].numpy(), a[1].numpy())
    F, TF = torchlike.nn.functional, torch.nn.functional
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == TF.GRID_SAMPLE_INTERPOLATION_MODES
    assert F.GRID_SAMPLE_PADDING_MODES == TF.GRID_SAMPLE_PADDING_MODES


@pytest.mark.parametrize("p", [float("inf"), -float("inf")])
@pytest.mark.parametrize("nd", [1, 2, 3])
def test_lp_pool_infinity_norm(p, nd):
    x = f32(1, 2, 6, 8)
    xs = x[0] if nd == 1 else x if nd == 2 else x[None]
    _compare_grad_case(lambda m, t: getattr(m.nn.functional, f"lp_pool{nd}d")(
        t, p, 2, ceil_mode=True), xs)


# ---------------------------------------------------------------- whole programs

def _dcgan(nn):
    g = nn.Sequential(
        nn.ConvTranspose2d(8, 16, 4, 1, 0, bias=False), nn.BatchNorm2d(16), nn.ReLU(True),
        nn.ConvTranspose2d(16, 8, 3, 2, 1, output_padding=1, bias=False), nn.BatchNorm2d(8),
        nn.ReLU(True), nn.ConvTranspose2d(8, 1, 4, 2, 1, bias=False), nn.Tanh())
    d = nn.Sequential(
        nn.Conv2d(1, 8, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(8, 16, 4, 2, 1, bias=False), nn.BatchNorm2d(16), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(16, 1, 4, 1, 0, bias=False), nn.Sigmoid(), nn.Flatten(0))
    return g, d


def test_dcgan_discriminator_on_real_and_fake_before_one_backward():
    # the common GAN loop that runs D on the real and the (detached) fake batch and backs up
    # once: BatchNorm is called twice between backward passes
    data = [(np.tanh(f32(6, 1, 16, 16)), f32(6, 8, 1, 1)) for _ in range(3)]
    torch.manual_seed(0)
    tg, td = _dcgan(torch.nn)
    lg, ld = _dcgan(torchlike.nn)
    copy_state(tg, lg)
    copy_state(td, ld)
    recs = []
    for m, g, d in ((torch, tg, td), (torchlike, lg, ld)):
        crit = m.nn.BCELoss()
        od = m.optim.Adam(d.parameters(), lr=2e-4, betas=(0.5, 0.999))
        og = m.optim.Adam(g.parameters(), lr=2e-4, betas=(0.5, 0.999))
        rec = []
        for step in range(4):
            real, z = (m.tensor(a) for a in data[step % 3])
            fake = g(z)
            od.zero_grad()
            loss_d = (crit(d(real), m.ones(6)) + crit(d(fake.detach()), m.zeros(6))) / 2
            loss_d.backward()
            od.step()
            og.zero_grad()
            loss_g = crit(d(fake), m.ones(6))
            loss_g.backward()
            og.step()
            rec += [loss_d, loss_g, d[3].running_mean.clone(), g[1].running_var.clone()]
        g.eval()
        with m.no_grad():
            rec.append(g(m.tensor(data[0][1])))
        recs.append(rec)
    for i, (a, b) in enumerate(zip(recs[1], recs[0])):
        assert_close(a, b, 1e-4, 1e-3, f"record {i}")


@pytest.mark.parametrize("fn", [
    lambda F, x: F.pad(x, (1, 1), mode="reflect", value=1.0),
    lambda F, x: F.pad(x, (1, 1, 1, 1), mode="replicate", value=1.0),
    lambda F, x: F.pad(x, [1.5, 1]),
], ids=["value_for_reflect_1pad", "value_for_replicate", "float_pad"])
def test_pad_argument_errors_like_torch(fn):
    raises_like(lambda m, x: fn(m.nn.functional, x), f32(1, 2, 4, 4))


@pytest.mark.parametrize("name", ["upsample", "upsample_nearest", "upsample_bilinear"])
def test_deprecated_upsample_functions_warn(name):
    x = f32(1, 2, 3, 3)
    with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated"):
        y = getattr(torchlike.nn.functional, name)(torchlike.tensor(x), scale_factor=2)
    with pytest.warns(UserWarning):
        t = getattr(torch.nn.functional, name)(torch.tensor(x), scale_factor=2)
    assert_close(y, t, 1e-6, 1e-6, "out")


@pytest.mark.parametrize("ctor", [
    "Conv2d(3, 4, 3, padding=1, padding_mode='reflect')",
    "Conv2d(3, 4, (2, 5), padding='same', dilation=(3, 1))",
    "ConvTranspose2d(3, 4, 3, stride=2, padding=(1, 2))",
    "Conv1d(3, 4, 3, padding='valid')",
    "Conv3d(2, 2, 3, padding=(0, 1, 2))",
])
def test_conv_reversed_padding_attribute(ctor):
    # third-party convs (timm's "same"-padding Conv2d, custom _conv_forward overrides) read it
    assert (eval("torchlike.nn." + ctor)._reversed_padding_repeated_twice
            == eval("torch.nn." + ctor)._reversed_padding_repeated_twice)


_LN_ERRORS = {
    "ln_int_shape": lambda F, x, w: F.layer_norm(x, 5),
    "ln_float_shape": lambda F, x, w: F.layer_norm(x, [5.0]),
    "ln_empty_shape": lambda F, x, w: F.layer_norm(x, ()),
    "ln_weight_shape": lambda F, x, w: F.layer_norm(x, (5,), w),
    "ln_bias_shape": lambda F, x, w: F.layer_norm(x, (5,), None, w),
    "ln_input_shape": lambda F, x, w: F.layer_norm(x, (4,)),
    "rms_int_shape": lambda F, x, w: F.rms_norm(x, 5),
    "rms_weight_shape": lambda F, x, w: F.rms_norm(x, (5,), w),
    "rms_input_shape": lambda F, x, w: F.rms_norm(x, (3, 4, 5, 6)),
}


@pytest.mark.parametrize("case", sorted(_LN_ERRORS))
def test_layer_and_rms_norm_argument_errors_like_torch(case):
    raises_like(lambda m, x, w: _LN_ERRORS[case](m.nn.functional, x, w), f32(2, 3, 4, 5), f32(4))


_NORM_ARG_ERRORS = {
    "group_norm_zero_groups": lambda F, x: F.group_norm(x, 0),
    "group_norm_negative_groups": lambda F, x: F.group_norm(x, -2),
    "group_norm_one_value_per_group": lambda F, x: F.group_norm(x[:1, :, :1, :1], 4),
    "group_norm_bias_size": lambda F, x: F.group_norm(x, 2, None, x[0, 0, 0]),
    "group_norm_int": lambda F, x: F.group_norm(x.long(), 2),
    "batch_norm_int": lambda F, x: F.batch_norm(x.long(), None, None, training=True),
    "batch_norm_zero_eps_training": lambda F, x: F.batch_norm(x, None, None, training=True,
                                                              eps=0.0),
    "batch_norm_negative_eps": lambda F, x: F.batch_norm(x, x[0, :, 0, 0], x[0, :, 0, 0].abs(),
                                                         eps=-1.0),
    "batch_norm_1d_input": lambda F, x: F.batch_norm(x[0, 0, 0], None, None, training=True),
    "layer_norm_int": lambda F, x: F.layer_norm(x.long(), (3,)),
    "instance_norm_int": lambda F, x: F.instance_norm(x.long()),
    "rms_norm_int": lambda F, x: F.rms_norm(x.int(), (3,)),
    "local_response_norm_2d": lambda F, x: F.local_response_norm(x[0, 0], 2),
}


@pytest.mark.parametrize("case", sorted(_NORM_ARG_ERRORS))
def test_normalisation_argument_errors_like_torch(case):
    raises_like(lambda m, x: _NORM_ARG_ERRORS[case](m.nn.functional, x), f32(2, 4, 3, 3))


def test_instance_norm_zero_eps_is_allowed():
    (to, _), (lo, _) = both(lambda m, x: m.nn.functional.instance_norm(x, eps=0.0),
                            f32(2, 4, 3, 3), grad=False)
    assert_close(lo, to, 1e-4, 1e-4, "out")


@pytest.mark.parametrize("fn", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("shapes", [((2, 5, 4), (2, 4)), ((2, 5, 4, 3), (2, 4, 3))],
                         ids=["3d", "4d"])
def test_uint8_segmentation_targets_raise_like_torch(fn, shapes):
    # a uint8 mask is a common target; torch's nll_loss2d takes int64 only (2-d inputs take
    # uint8 too)
    xs, ts = shapes
    errs = []
    for m in (torch, torchlike):
        with pytest.raises(RuntimeError) as ei:
            getattr(m.nn.functional, fn)(m.zeros(*xs), m.zeros(*ts, dtype=m.uint8))
        errs.append(str(ei.value))
    assert errs[1] == errs[0]


@pytest.mark.parametrize("dtypes", [
    ("float64", "float32", "float32"), ("float32", "float64", None), ("float16", "float32", None),
    ("bfloat16", "float32", None), ("bfloat16", "bfloat16", "float32"),
    ("float16", "float16", "float32"), ("float32", "float16", None),
], ids=lambda d: "-".join(str(v) for v in d))
@pytest.mark.parametrize("fn", ["conv2d", "conv_transpose2d", "conv1d"])
def test_conv_dtype_mismatch_errors_like_torch(fn, dtypes):
    xd, wd, bd = dtypes
    shp, wshp = ((1, 2, 5, 5), (2, 2, 3, 3)) if "2d" in fn else ((1, 2, 5), (2, 2, 3))

    def run(m, x, w, b):
        return getattr(m.nn.functional, fn)(
            x.to(getattr(m, xd)), w.to(getattr(m, wd)), b.to(getattr(m, bd)) if bd else None)
    if xd not in ("float16", "bfloat16"):
        raises_like(run, f32(*shp), f32(*wshp), f32(2))
        return
    # (a half-precision input: torch's CPU runs its oneDNN kernels, which raise these, where the
    # CPU has kernels of that dtype (avx512 for bfloat16); elsewhere its native kernels raise
    # another message, or compute a float32 bias into the result: DIFFERENCES.md. torchlike
    # raises the first)
    with pytest.raises(RuntimeError, match="should be the same"):
        run(torchlike, *(torchlike.tensor(a) for a in (f32(*shp), f32(*wshp), f32(2))))
    try:
        run(torch, *(torch.tensor(a) for a in (f32(*shp), f32(*wshp), f32(2))))
    except RuntimeError:
        pass


def test_conv_transpose_takes_another_float_dtype_bias():
    # torch's transposed convolution accepts a float64 bias for float32 input (result float32)
    (to, tin), (lo, lin) = both(lambda m, x, w, b: m.nn.functional.conv_transpose2d(
        x, w, b.double(), stride=2), f32(1, 2, 5, 5), f32(2, 3, 3, 3), f32(3))
    assert str(lo.dtype) == str(to.dtype)
    assert_close(lo, to, 1e-5, 1e-5, "out")


@pytest.mark.parametrize("fn", [
    lambda F, x: F.channel_shuffle(x, 3),
    lambda F, x: F.channel_shuffle(x, 0),
    lambda F, x: F.channel_shuffle(x[0, 0], 2),
    lambda F, x: F.channel_shuffle(x[0], 2),
], ids=["indivisible", "zero_groups", "2d_input", "unbatched_indivisible"])
def test_channel_shuffle_errors_like_torch(fn):
    raises_like(lambda m, x: fn(m.nn.functional, x), f32(2, 4, 3, 3))


@pytest.mark.parametrize("fn", [
    lambda F, x, p: F.dropout(x, p),
    lambda F, x, p: F.dropout2d(x.view(1, 2, 3, 1), p),
    lambda F, x, p: F.alpha_dropout(x, p, True),
    lambda F, x, p: F.dropout(x.bool(), p),
    lambda F, x, p: F.dropout(x.to(torchlike.uint8 if F is torchlike.nn.functional
                                   else torch.uint8), p),
], ids=["dropout", "dropout2d", "alpha_dropout", "bool", "uint8"])
def test_dropout_of_integer_tensors_like_torch(fn):
    x = np.ones((2, 3), np.int64)
    raises_like(lambda m, t: fn(m.nn.functional, t, 0.5), x)
    for p in (0.0, 1.0):
        (to, _), (lo, _) = both(lambda m, t: fn(m.nn.functional, t, p), x, grad=False)
        assert str(lo.dtype) == str(to.dtype)
        np.testing.assert_array_equal(lo.numpy(), to.numpy())


@pytest.mark.parametrize("case", [
    "max2_k", "max2_s", "max2_p", "max2_d", "max2_tuple0", "max2_tuple1", "max2_str", "avg2_k",
    "avg2_p", "avg3_tuple2", "max1_k", "avg1_k", "max3_k", "lp2_k", "lp1_k", "lp2_inf", "lp2_s",
    "unfold_k", "unfold_s", "unfold_tuple1", "unfold_2d_input", "fold_k", "fold_out", "fold_p",
])
def test_pool_size_arguments_must_be_ints(case):
    """A float (or a list holding one) as a pooling, unfold or fold size (kernel, stride,
    padding, dilation, output size) is torch's argument-parser TypeError (in its two wordings),
    never a size."""
    def call(m):
        F = m.nn.functional
        x1, x2, x3 = m.ones(1, 1, 4), m.ones(1, 1, 4, 4), m.ones(1, 1, 4, 4, 4)
        return {
            "max2_k": lambda: F.max_pool2d(x2, 2.0), "max2_s": lambda: F.max_pool2d(x2, 2, 1.0),
            "max2_p": lambda: F.max_pool2d(x2, 2, 1, 0.0),
            "max2_d": lambda: F.max_pool2d(x2, 2, dilation=1.0),
            "max2_tuple0": lambda: F.max_pool2d(x2, (2.0, 2)),
            "max2_tuple1": lambda: F.max_pool2d(x2, (2, 2.0)),
            "max2_str": lambda: F.max_pool2d(x2, [2, "a"]),
            "avg2_k": lambda: F.avg_pool2d(x2, 2.0), "avg2_p": lambda: F.avg_pool2d(x2, 2, 1, 0.5),
            "avg3_tuple2": lambda: F.avg_pool3d(x3, (2, 2, 2.0)),
            "max1_k": lambda: F.max_pool1d(x1, 2.0), "avg1_k": lambda: F.avg_pool1d(x1, 2.0),
            "max3_k": lambda: F.max_pool3d(x3, 2.0), "lp2_k": lambda: F.lp_pool2d(x2, 2, 2.0),
            "lp1_k": lambda: F.lp_pool1d(x1, 2, 2.0),
            "lp2_inf": lambda: F.lp_pool2d(x2, float("inf"), 2.0),
            "lp2_s": lambda: F.lp_pool2d(x2, 2, (2, 2), 1.0),
            "unfold_k": lambda: F.unfold(x2, 2.0), "unfold_s": lambda: F.unfold(x2, 2, stride=1.0),
            "unfold_tuple1": lambda: F.unfold(x2, (2, 2.0)),
            "unfold_2d_input": lambda: F.unfold(m.ones(2, 2), 2.0),
            "fold_k": lambda: F.fold(m.ones(1, 4, 9), 4, 2.0),
            "fold_out": lambda: F.fold(m.ones(1, 4, 9), 4.0, 2),
            "fold_p": lambda: F.fold(m.ones(1, 4, 9), 4, 2, padding=0.0),
        }[case]()
    msgs = []
    for m in (torch, torchlike):
        with pytest.raises(TypeError) as info:
            call(m)
        msgs.append(str(info.value))
    assert msgs[1] == msgs[0]
