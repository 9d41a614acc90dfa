"""bfloat16 and float16 ops with an internal reduction, against torch's CPU kernels.

torch computes these in float32 and rounds the result once (log_softmax over the last dim also
stores the sum and its log in the input's dtype, logsumexp rounds each of its composite steps,
nll_loss sums in a cascade of partial sums of the input's dtype): torchlike's results are
bitwise torch's (``BITWISE``). The normalisations accumulate their float32 mean and variance in
another order than torch's kernels, so a rare element lands one step away (``NEAR``: at most one
step, 99% bitwise). A few kernels round where the path depends on the machine's vector width or
thread split (softmax over another dim than the last, bfloat16 batch_norm without affine
parameters, bfloat16 prod, float16 erf): those are compared with torch's own low-precision
tolerance of ``torch.testing.assert_close`` (``TOLERANT``).
"""
import numpy as np
import pytest
import torch

import torchlike

RNG = np.random.default_rng(0)
A = (RNG.standard_normal((4, 6, 37)) * 3).astype(np.float32)
TARGET = RNG.integers(0, 6, (4, 37))
W6 = RNG.standard_normal(6).astype(np.float32)
B6 = RNG.standard_normal(6).astype(np.float32)
W37 = RNG.standard_normal(37).astype(np.float32)
B37 = RNG.standard_normal(37).astype(np.float32)


def _p(m, a, dt):
    return m.tensor(a).to(dt)


BITWISE = {
    "softmax_last": lambda m, x, dt: x.softmax(-1),
    "softmax_2d_last": lambda m, x, dt: x[0].softmax(-1),
    "softmin_last": lambda m, x, dt: m.nn.functional.softmin(x, -1),
    "log_softmax_last": lambda m, x, dt: x.log_softmax(-1),
    "log_softmax_dim1": lambda m, x, dt: x.log_softmax(1),
    "log_softmax_dim0": lambda m, x, dt: x.log_softmax(0),
    "logsumexp": lambda m, x, dt: x.logsumexp(-1),
    "logsumexp_dim1": lambda m, x, dt: x.logsumexp(1),
    "cross_entropy": lambda m, x, dt: m.nn.functional.cross_entropy(x, m.tensor(TARGET)),
    "cross_entropy_sum": lambda m, x, dt: m.nn.functional.cross_entropy(
        x, m.tensor(TARGET), reduction="none"),
    "nll_loss": lambda m, x, dt: m.nn.functional.nll_loss(x, m.tensor(TARGET)),
    "nll_loss_2d_sum": lambda m, x, dt: m.nn.functional.nll_loss(
        x[:, :, 0], m.tensor(TARGET[:, 0]), reduction="sum"),
    "nll_loss_weight_ignore": lambda m, x, dt: m.nn.functional.nll_loss(
        x, m.tensor(np.where(TARGET == 2, -100, TARGET)), _p(m, np.abs(W6) + 0.5, dt)),
    "cross_entropy_long_batch": lambda m, x, dt: m.nn.functional.cross_entropy(
        x.permute(0, 2, 1).reshape(-1, 6), m.tensor(TARGET.reshape(-1))),

    "mse_loss": lambda m, x, dt: m.nn.functional.mse_loss(x, x.flip(0)),
    "l1_loss": lambda m, x, dt: m.nn.functional.l1_loss(x, x.flip(0)),
    "kl_div": lambda m, x, dt: m.nn.functional.kl_div(
        x.log_softmax(-1), x.flip(0).softmax(-1), reduction="batchmean"),
    "bce_with_logits": lambda m, x, dt: m.nn.functional.binary_cross_entropy_with_logits(
        x, (x > 0).to(dt)),
    "sum": lambda m, x, dt: x.sum(-1),
    "sum_all": lambda m, x, dt: x.sum(),
    "sum_dim0": lambda m, x, dt: x.sum(0),
    "nansum": lambda m, x, dt: x.nansum(-1),
    "mean": lambda m, x, dt: x.mean(-1),
    "mean_all": lambda m, x, dt: x.mean(),
    "var": lambda m, x, dt: x.var(-1),
    "std": lambda m, x, dt: x.std(1),
    "var_mean": lambda m, x, dt: m.var_mean(x, -1)[0],
    "std_mean": lambda m, x, dt: m.std_mean(x, 1)[1],
    "norm": lambda m, x, dt: x.norm(dim=-1),
    "vector_norm_1": lambda m, x, dt: m.linalg.vector_norm(x, 1, dim=1),
    "cumsum": lambda m, x, dt: x.cumsum(-1),
    "cumsum_dim0": lambda m, x, dt: x.cumsum(0),
    "logcumsumexp": lambda m, x, dt: x.logcumsumexp(-1),
    "amax": lambda m, x, dt: x.amax(-1),
    "normalize": lambda m, x, dt: m.nn.functional.normalize(x, dim=-1),
    "cosine_similarity": lambda m, x, dt: m.nn.functional.cosine_similarity(x, x.flip(0), -1),
    "matmul": lambda m, x, dt: x @ x.transpose(-1, -2),
    "linear": lambda m, x, dt: m.nn.functional.linear(x, x[0]),
    "sdpa": lambda m, x, dt: m.nn.functional.scaled_dot_product_attention(x, x, x),
    "silu": lambda m, x, dt: m.nn.functional.silu(x),
    "sigmoid": lambda m, x, dt: x.sigmoid(),
    "mish": lambda m, x, dt: m.nn.functional.mish(x),
    "softplus": lambda m, x, dt: m.nn.functional.softplus(x),
}

# float32 statistics summed in another order than torch's: a rare element one step away
NEAR = {
    "layer_norm": lambda m, x, dt: m.nn.functional.layer_norm(x, (37,)),
    "layer_norm_affine": lambda m, x, dt: m.nn.functional.layer_norm(
        x, (37,), _p(m, W37, dt), _p(m, B37, dt)),
    "group_norm": lambda m, x, dt: m.nn.functional.group_norm(x, 3),
    "group_norm_affine": lambda m, x, dt: m.nn.functional.group_norm(
        x, 2, _p(m, W6, dt), _p(m, B6, dt)),
    "batch_norm_affine": lambda m, x, dt: m.nn.functional.batch_norm(
        x, None, None, _p(m, W6, dt), _p(m, B6, dt), training=True),
    "batch_norm_eval": lambda m, x, dt: m.nn.functional.batch_norm(
        x, _p(m, B6, dt), _p(m, np.abs(W6) + 0.5, dt), _p(m, W6, dt), _p(m, B6, dt)),
    "batch_norm_module": lambda m, x, dt: m.nn.BatchNorm1d(6).to(dt)(x),
    "rms_norm": lambda m, x, dt: m.nn.functional.rms_norm(x, (37,)),
    "rms_norm_weight": lambda m, x, dt: m.nn.functional.rms_norm(x, (37,), _p(m, W37, dt)),
}

# torch's own kernel path (vector width, thread split) decides where these round
TOLERANT = {
    "softmax_dim1": lambda m, x, dt: x.softmax(1),
    "softmax_dim0": lambda m, x, dt: x.softmax(0),
    "batch_norm_no_affine": lambda m, x, dt: m.nn.functional.batch_norm(
        x, None, None, training=True),
    "instance_norm": lambda m, x, dt: m.nn.functional.instance_norm(x),
    "prod": lambda m, x, dt: (x / 4).prod(-1),
    "gelu": lambda m, x, dt: m.nn.functional.gelu(x),
    "gelu_tanh": lambda m, x, dt: m.nn.functional.gelu(x, approximate="tanh"),
    "softmax_dtype_float": lambda m, x, dt: x.softmax(-1, dtype=m.float32),
    # ``(1 - ls) * nll``: a Python scalar rounds to the tensor's dtype first (DIFFERENCES.md)
    "cross_entropy_label_smoothing": lambda m, x, dt: m.nn.functional.cross_entropy(
        x, m.tensor(TARGET), label_smoothing=0.1),
}

DTYPES = ["bfloat16", "float16"]


def _run(fn, dtname):
    out, dtypes = [], []
    for m in (torch, torchlike):
        dt = getattr(m, dtname)
        r = fn(m, m.tensor(A).to(dt), dt)
        dtypes.append(str(r.dtype))
        out.append(np.asarray(r.float().tolist(), np.float32))
    assert dtypes[1] == dtypes[0]
    return out


@pytest.mark.parametrize("dtname", DTYPES)
@pytest.mark.parametrize("name", sorted(BITWISE))
def test_low_precision_result_is_torchs_bitwise(name, dtname):
    want, got = _run(BITWISE[name], dtname)
    np.testing.assert_array_equal(got, want)


def _bits(a, dtname):
    """The dtype's bit patterns of float32 values that are exactly representable in it."""
    if dtname == "bfloat16":
        return (a.view(np.int32) >> 16).astype(np.int64)
    return a.astype(np.float16).view(np.int16).astype(np.int64)


@pytest.mark.parametrize("dtname", DTYPES)
@pytest.mark.parametrize("name", sorted(NEAR))
def test_low_precision_result_is_torchs_up_to_summation_order(name, dtname):
    want, got = _run(NEAR[name], dtname)
    steps = np.abs(_bits(got, dtname) - _bits(want, dtname))
    assert steps.max() <= 1
    assert (steps == 0).mean() >= 0.99


@pytest.mark.parametrize("dtname", DTYPES)
@pytest.mark.parametrize("name", sorted(TOLERANT))
def test_low_precision_result_within_torchs_tolerance(name, dtname):
    want, got = _run(TOLERANT[name], dtname)
    dt = torch.float32 if name.endswith("_float") else getattr(torch, dtname)
    torch.testing.assert_close(torch.tensor(got).to(dt), torch.tensor(want).to(dt))


SCALAR_PRODUCTS = {
    "mul": lambda m, t: t * 0.85,
    "rmul": lambda m, t: 1.3 * t,
    "mul_0dim_float32": lambda m, t: t * m.tensor(0.85),
    "mul_": lambda m, t: t.clone().mul_(0.1),
    "div": lambda m, t: t / 1.3,
    "rdiv": lambda m, t: 0.7 / t,
    "div_": lambda m, t: t.clone().div_(0.85),
    "floor_divide": lambda m, t: t // 0.3,
    "div_trunc": lambda m, t: m.div(t, 0.3, rounding_mode="trunc"),
    "add_rounds": lambda m, t: t + 0.85,      # (torch rounds an added number first)
}


@pytest.mark.parametrize("dtname", DTYPES)
@pytest.mark.parametrize("name", sorted(SCALAR_PRODUCTS))
def test_a_number_times_a_half_precision_tensor_as_torch(name, dtname):
    """torch multiplies and divides a float16/bfloat16 tensor by a Python number (or a float32
    0-dim tensor) in float32, the number unrounded, and rounds once; an added number is rounded
    to the dtype first. The same values, bit for bit, and the same gradients."""
    def run(m):
        x = m.linspace(-7.7, 11.3, 501).to(getattr(m, dtname)).requires_grad_()
        y = SCALAR_PRODUCTS[name](m, x)
        out = [y.float().tolist()]
        if name not in ("floor_divide", "div_trunc"):
            g, = m.autograd.grad((y.float() * m.linspace(0.1, 2.0, 501)).sum(), x)
            out.append(g.float().tolist())
        return out
    for ours, theirs in zip(run(torchlike), run(torch)):
        np.testing.assert_array_equal(np.array(ours), np.array(theirs))
