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
