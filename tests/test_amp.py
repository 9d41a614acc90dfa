"""Mixed precision against torch's CPU autocast (bf16 and fp16) and torch.amp.GradScaler."""
import warnings

import numpy as np
import pytest
import torch

import torchlike

from oracle import assert_close

RNG = np.random.default_rng(0)
A = RNG.standard_normal((3, 4)).astype(np.float32)
B = RNG.standard_normal((4, 5)).astype(np.float32)
X4 = RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)
W4 = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
V = RNG.standard_normal((3, 4)).astype(np.float32)
T = np.array([0, 2, 1])
P = RNG.uniform(0.1, 0.9, (3, 4)).astype(np.float32)
X5 = RNG.standard_normal((1, 2, 4, 4, 4)).astype(np.float32)

# name, fn(m, F, *tensors), inputs
CASES = [
    ("matmul", lambda m, F, a, b: a @ b, (A, B)),
    ("mm", lambda m, F, a, b: m.mm(a, b), (A, B)),
    ("bmm", lambda m, F, a, b: m.bmm(a[None], b[None]), (A, B)),
    ("addmm", lambda m, F, a, b: m.addmm(m.ones(3, 5), a, b), (A, B)),
    ("baddbmm", lambda m, F, a, b: m.baddbmm(m.ones(1, 3, 5), a[None], b[None]), (A, B)),
    ("linear", lambda m, F, a, b: F.linear(a, b.t()), (A, B)),
    ("conv2d", lambda m, F, x, w: F.conv2d(x, w), (X4, W4)),
    ("conv_transpose2d", lambda m, F, x, w: F.conv_transpose2d(x, w.transpose(0, 1)),
     (X4, W4)),
    ("prelu", lambda m, F, a: F.prelu(a, m.tensor([0.25])), (A,)),
    ("sdpa", lambda m, F, a: F.scaled_dot_product_attention(a[None], a[None], a[None]), (A,)),
    ("cat", lambda m, F, a, v: m.cat([(a @ v.t()), a @ v.t().double()[:, :3].float()]),
     (A, V)),
    ("cat_mixed", lambda m, F, a, b: m.cat([a @ b, (a @ b).float()]), (A, B)),
    ("stack", lambda m, F, a, b: m.stack([a @ b, (a @ b).float()]), (A, B)),
    ("mse", lambda m, F, a, v: F.mse_loss(a @ v.t(), m.zeros(3, 3)), (A, V)),
    ("l1", lambda m, F, a, v: F.l1_loss(a @ v.t(), m.zeros(3, 3)), (A, V)),
    ("smooth_l1", lambda m, F, a, v: F.smooth_l1_loss(a @ v.t(), m.zeros(3, 3)), (A, V)),
    ("huber", lambda m, F, a, v: F.huber_loss(a @ v.t(), m.zeros(3, 3)), (A, V)),
    ("nll", lambda m, F, a, v: F.nll_loss(F.log_softmax(a @ v.t(), 1), m.tensor(T)), (A, V)),
    ("cross_entropy", lambda m, F, a, v: F.cross_entropy(a @ v.t(), m.tensor(T)), (A, V)),
    ("cross_entropy_low_target", lambda m, F, a, v: F.cross_entropy(
        a @ v.t(), F.softmax(a @ v.t(), 1)), (A, V)),
    ("l1_low", lambda m, F, a, v: F.l1_loss(a @ v.t(), (a @ v.t()) * 0.5), (A, V)),
    ("bce_logits", lambda m, F, a, v, p: F.binary_cross_entropy_with_logits(a @ v.t(),
                                                                              (p @ p.t()) / 4),
     (A, V, P)),
    ("bce", lambda m, F, p: F.binary_cross_entropy(p.bfloat16(), p), (P,)),
    ("kl_div", lambda m, F, a, v: F.kl_div(a @ v.t(), m.ones(3, 3), reduction="sum"), (A, V)),
    ("softmax_unlisted", lambda m, F, a, b: F.softmax(a @ b, 1), (A, B)),
    ("exp_unlisted", lambda m, F, a, b: m.exp(a @ b), (A, B)),
    ("sum_unlisted", lambda m, F, a, b: (a @ b).sum(), (A, B)),
    ("add_promotes", lambda m, F, a, b: (a @ b) + m.ones(3, 5), (A, B)),
    ("layer_norm_unlisted", lambda m, F, a, b: F.layer_norm(a @ b, (5,)), (A, B)),
    ("prod_fp32", lambda m, F, a, b: m.prod(a @ b, 1), (A, B)),
    ("avg_pool3d_fp32", lambda m, F, x: F.avg_pool3d(x.bfloat16(), 2), (X5,)),
    ("avg_pool2d_unlisted", lambda m, F, x: F.avg_pool2d(x.bfloat16(), 2), (X4,)),
    ("reflect_pad_fp32", lambda m, F, x: F.pad(x[0].bfloat16(), (1, 1), mode="reflect"),
     (X4,)),
    ("tensordot", lambda m, F, a, b: m.tensordot(a, b, 1), (A, B)),
    ("outer_unlisted", lambda m, F, a: m.outer(a[0], a[1]), (A,)),
    ("cdist_fp32", lambda m, F, a: m.cdist(a.bfloat16(), a.bfloat16()), (A,)),
    ("trace_fp32", lambda m, F, a: m.trace(a.bfloat16()), (A,)),
    ("index_copy_promotes", lambda m, F, a, b: m.zeros(3, 5).index_copy(0, m.tensor([0]),
                                                                         (a @ b)[:1]), (A, B)),
    ("double_stays", lambda m, F, a, b: a.double() @ b.double(), (A, B)),
    ("int_matmul", lambda m, F, a, b: (a * 10).long() @ (b * 10).long(), (A, B)),
    ("einsum", lambda m, F, a, b: m.einsum("ij,jk->ik", a, b), (A, B)),
    # inputs of two dtypes (a lower-precision activation and float32 parameters): torch casts
    # them before the kernels' own dtype checks
    ("conv2d_mixed", lambda m, F, x, w: F.conv2d(x.bfloat16(), w, m.ones(4)), (X4, W4)),
    ("conv_transpose2d_mixed", lambda m, F, x, w: F.conv_transpose2d(
        x.bfloat16(), w.transpose(0, 1), m.ones(4)), (X4, W4)),
    ("conv_bn_conv", lambda m, F, x, w: F.conv2d(F.relu(F.batch_norm(
        F.conv2d(x, w, m.ones(4), padding=1), m.zeros(4), m.ones(4), m.ones(4), m.zeros(4))),
        w.transpose(0, 1)[:, :4].reshape(3, 4, 3, 3), m.ones(3)), (X4, W4)),
    ("matmul_mixed", lambda m, F, a, b: a.bfloat16() @ b, (A, B)),
    ("mm_mixed", lambda m, F, a, b: m.mm(a, b.bfloat16()), (A, B)),
    ("bmm_mixed", lambda m, F, a, b: m.bmm(a[None].bfloat16(), b[None]), (A, B)),
    ("addmm_mixed", lambda m, F, a, b: m.addmm(m.ones(3, 5), a.bfloat16(), b), (A, B)),
    ("baddbmm_mixed", lambda m, F, a, b: m.baddbmm(m.ones(1, 3, 5), a[None].bfloat16(),
                                                   b[None]), (A, B)),
    ("einsum_mixed", lambda m, F, a, b: m.einsum("ij,jk->ik", a.bfloat16(), b), (A, B)),
    ("linear_mixed", lambda m, F, a, b: F.linear(a.bfloat16(), b.t(), m.ones(5)), (A, B)),
    ("sdpa_mixed", lambda m, F, a: F.scaled_dot_product_attention(
        a[None].bfloat16(), a[None], a[None], attn_mask=m.zeros(3, 3)), (A,)),
    ("prelu_mixed", lambda m, F, a: F.prelu(a.bfloat16(), m.full((1,), 0.25)), (A,)),
]


def _run(m, fn, inputs, dtype, grad):
    F = m.nn.functional
    ts = [m.tensor(x, requires_grad=grad and x.dtype.kind == "f") for x in inputs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with m.autocast("cpu", dtype=dtype):
            out = fn(m, F, *ts)
    return out, ts


# every case in bfloat16 (CPU autocast's default); a few in float16
_FP16 = {"matmul", "conv2d", "linear", "cat_mixed", "mse", "double_stays"}
PARAMS = [(c, "bfloat16") for c in CASES] + [(c, "float16") for c in CASES if c[0] in _FP16]


@pytest.mark.parametrize("case,dtype", PARAMS, ids=[f"{c[0]}-{d}" for c, d in PARAMS])
def test_cpu_autocast_dtype_and_values(case, dtype):
    name, fn, inputs = case
    ours, tin = _run(torchlike, fn, inputs, getattr(torchlike, dtype), True)
    ref, rin = _run(torch, fn, inputs, getattr(torch, dtype), True)
    assert str(ours.dtype) == str(ref.dtype), name
    assert_close(ours.float(), ref.float(), atol=5e-2, rtol=2e-2, what=name)
    if ref.requires_grad and ref.dtype.is_floating_point:
        ref.float().sum().backward()
        ours.float().sum().backward()
        for a, b in zip(tin, rin):
            if b.grad is not None:
                assert a.grad is not None and str(a.grad.dtype) == str(b.grad.dtype)
                assert_close(a.grad, b.grad, atol=1e-1, rtol=5e-2, what=name + " grad")


@pytest.mark.parametrize("low_input", [False, True])
@pytest.mark.parametrize("kind", ["RNN", "GRU", "GRUCell", "LSTMCell"])
def test_recurrences_under_cpu_autocast(kind, low_input):
    # (torch's LSTM under CPU autocast needs a oneDNN bf16 CPU: not compared here)
    outs = []
    for m in (torchlike, torch):
        m.manual_seed(0)
        layer = getattr(m.nn, kind)(4, 3)
        x = m.tensor(A[:, None, :] if "Cell" not in kind else A)
        if low_input:
            x = x.bfloat16()        # (a lower-precision activation into float32 weights)
        with m.autocast("cpu"):
            y = layer(x)
        y = y[0] if isinstance(y, tuple) else y
        outs.append(str(y.dtype))
    assert outs[0] == outs[1]


def test_nesting_disable_decorator_and_state():
    for m in (torchlike, torch):
        a, b = m.tensor(A), m.tensor(B)
        assert not m.is_autocast_enabled("cpu")
        with m.autocast("cpu"):
            assert m.is_autocast_enabled("cpu")
            assert (a @ b).dtype == m.bfloat16
            with m.autocast("cpu", enabled=False):
                assert not m.is_autocast_enabled("cpu")
                assert (a @ b).dtype == m.float32
            with m.autocast("cpu", dtype=m.float16):
                assert (a @ b).dtype == m.float16
                assert m.get_autocast_dtype("cpu") == m.float16
            assert (a @ b).dtype == m.bfloat16
        assert (a @ b).dtype == m.float32
        assert m.get_autocast_dtype("cpu") == m.bfloat16

        @m.autocast("cpu")
        def f(x, y):
            return x @ y
        assert f(a, b).dtype == m.bfloat16
        assert (a @ b).dtype == m.float32
        assert m.amp.autocast is m.autocast


def test_autocast_errors_and_warnings():
    for m in (torchlike, torch):
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            m.autocast(1)
        with pytest.raises(RuntimeError, match="device type at start of device string: foo"):
            m.autocast("foo")
        with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not "
                                             "supported"):
            with m.autocast("cpu", dtype=m.float64):
                assert (m.tensor(A) @ m.tensor(B)).dtype == m.float32


def _device_type_story(m, dev):
    """Everything autocast says about device type ``dev`` on a CPU build: availability, the
    state functions, a region's state and fast dtype, and a CPU matmul inside it."""
    out = []

    def step(f):
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                r = f()
            out.append((str(r), [str(x.message) for x in w]))
        except (RuntimeError, AssertionError) as e:
            out.append((type(e).__name__, str(e)))

    def region(dtype=None):
        with m.autocast(dev, dtype=dtype) as a:
            return (m.is_autocast_enabled(dev), a.fast_dtype, m.get_autocast_dtype(dev),
                    (m.tensor(A) @ m.tensor(B)).dtype, m.is_autocast_enabled("cpu"))

    step(lambda: m.amp.is_autocast_available(dev))
    step(lambda: (m.is_autocast_enabled(dev), m.get_autocast_dtype(dev)))
    step(region)
    step(lambda: region(m.float32))
    step(lambda: m.is_autocast_enabled(dev))
    return out


@pytest.mark.parametrize("dev", ["cpu", "mps", "xpu", "hpu", "xla", "ipu", "mtia", "maia",
                                 "privateuseone", "meta", "hip"])
def test_autocast_device_types_as_torch(dev):
    """torch's autocast takes every device type it knows (kornia asks about "mps"): a region
    for a device no tensor is on holds state and casts nothing; unknown types raise."""
    ours, theirs = _device_type_story(torchlike, dev), _device_type_story(torch, dev)
    assert ours == theirs


@pytest.mark.skipif(torch.cuda.is_available() or torchlike.cuda.is_available(),
                    reason="CPU-build behaviour")
def test_cuda_autocast_disabled_without_gpu():
    for m in (torchlike, torch):
        with pytest.warns(UserWarning, match="CUDA is not available"):
            ctx = m.autocast("cuda")
        with ctx:
            assert (m.tensor(A) @ m.tensor(B)).dtype == m.float32
        with pytest.warns(FutureWarning, match="torch.cuda.amp.autocast"):
            m.cuda.amp.autocast()
        with pytest.warns(FutureWarning, match="torch.cpu.amp.autocast"):
            c = m.cpu.amp.autocast()
        with c:
            assert (m.tensor(A) @ m.tensor(B)).dtype == m.bfloat16


def test_cuda_policy_table_names_exist():
    from torchlike._registry import OPS
    import torchlike.nn.functional  # noqa: F401
    from torchlike.amp import autocast_mode as am
    for policy in (am._CPU_POLICY, am._CUDA_POLICY):
        missing = [n for n in policy if n not in OPS and n not in am.COMPOSITE_NAMES]
        assert not missing, missing


def test_cast_composite_helper():
    a = torchlike.tensor(A).bfloat16()
    from torchlike.amp.autocast_mode import cast_composite
    assert cast_composite("l1_loss", a)[0].dtype is torchlike.bfloat16
    with torchlike.autocast("cpu"):
        assert cast_composite("l1_loss", a)[0].dtype is torchlike.float32
        assert cast_composite("unknown", a)[0].dtype is torchlike.bfloat16


def test_custom_fwd_bwd():
    class MyMM(torchlike.autograd.Function):
        @staticmethod
        @torchlike.amp.custom_fwd(device_type="cpu", cast_inputs=torchlike.float32)
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a @ b

        @staticmethod
        @torchlike.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g @ b.t(), a.t() @ g

    a = torchlike.tensor(A, requires_grad=True)
    with torchlike.autocast("cpu"):
        out = MyMM.apply(a, torchlike.tensor(B))
    assert out.dtype is torchlike.float32
    out.sum().backward()
    assert_close(a.grad, torch.ones(3, 5) @ torch.tensor(B).t())


# ------------------------------------------------------------------ GradScaler

def _scaler_run(m, grads_inf_at, steps=6, **kw):
    m.manual_seed(0)
    p = m.nn.Parameter(m.tensor([1.0, 2.0]))
    opt = m.optim.SGD([p], lr=0.1)
    scaler = m.amp.GradScaler("cpu", **kw)
    log = []
    for i in range(steps):
        opt.zero_grad()
        loss = (p * p).sum()
        if i in grads_inf_at:
            loss = loss * float("inf")
        scaled = scaler.scale(loss)
        log.append(float(scaled.item()))
        scaled.backward()
        if i % 2 == 0:
            scaler.unscale_(opt)
            log.append(p.grad.tolist())
        scaler.step(opt)
        scaler.update()
        log.append((scaler.get_scale(), scaler._get_growth_tracker(), p.tolist()))
    return log, scaler.state_dict()


def test_grad_scaler_matches_torch():
    kw = dict(init_scale=8.0, growth_factor=2.0, backoff_factor=0.25, growth_interval=2)
    ours = _scaler_run(torchlike, {1, 4}, **kw)
    ref = _scaler_run(torch, {1, 4}, **kw)
    assert ours[1] == ref[1]
    for a, b in zip(ours[0], ref[0]):
        if isinstance(a, tuple):
            assert a[:2] == b[:2]
            np.testing.assert_allclose(a[2], b[2], rtol=1e-6)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-6)


def test_grad_scaler_errors_state_dict_and_disabled():
    for m in (torchlike, torch):
        p = m.nn.Parameter(m.tensor([1.0]))
        opt = m.optim.SGD([p], lr=0.1)
        s = m.amp.GradScaler("cpu", init_scale=4.0)
        assert s.get_scale() == 4.0 and s.is_enabled()
        s.scale((p * 2).sum()).backward()
        s.unscale_(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
            s.unscale_(opt)
        s.step(opt)
        with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
            s.step(opt)
        with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step"):
            s.unscale_(opt)
        s.update(16.0)
        assert s.get_scale() == 16.0
        sd = s.state_dict()
        s2 = m.amp.GradScaler("cpu")
        s2.load_state_dict(sd)
        assert s2.state_dict() == sd
        off = m.amp.GradScaler("cpu", enabled=False)
        assert off.state_dict() == {} and off.get_scale() == 1.0
        x = m.tensor([3.0])
        assert off.scale(x) is x
        with pytest.raises(RuntimeError, match="The source state dict is empty"):
            s2.load_state_dict({})
        with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
            s2.step(opt, closure=lambda: 0)
        out = s2.scale([m.tensor([1.0]), (m.tensor([2.0]),)])
        assert [out[0].item(), out[1][0].item()] == [16.0, 32.0]


@pytest.mark.skipif(torch.cuda.is_available() or torchlike.cuda.is_available(),
                    reason="CPU-build behaviour")
def test_cuda_grad_scaler_disabled_without_gpu():
    for m in (torchlike, torch):
        with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not "
                                             "available"):
            s = m.amp.GradScaler()
        assert not s.is_enabled()
        with pytest.warns(FutureWarning):
            m.cuda.amp.GradScaler()


def test_mv_and_dot_stay_float32_under_cpu_autocast():
    """``mv`` and ``dot`` (functions and methods) keep float32 under CPU autocast, as torch's
    policy lists ``matmul`` and not them (``a @ v`` is lowered); torchlike's are its matmul
    op, called with the function's name. They ran in bfloat16."""
    def story(m):
        a, v = m.tensor(A), m.tensor(A[0])
        with m.autocast("cpu"):
            return [str(x.dtype) for x in (m.mv(a.t(), v[:3]), m.dot(v, v), v.dot(v),
                                           a.t() @ v[:3], m.matmul(v, v))]
    assert story(torchlike) == story(torch)


# torch's per-device autocast switches, deprecated for the forms taking a device type: each
# warns torch's DeprecationWarning and answers as the new form (each call leaves the state as it
# found it)
def _round_trip(m, name, dev_value, default):
    getattr(m, f"set_autocast_{name}")(dev_value)
    got = (getattr(m, f"get_autocast_{name}") if "dtype" in name
           else getattr(m, f"is_autocast_{name}"))()
    getattr(m, f"set_autocast_{name}")(default)
    return got


DEPRECATED_AUTOCAST = {
    "is_cpu": lambda m: m.is_autocast_cpu_enabled(),
    "cpu_dtype": lambda m: m.get_autocast_cpu_dtype(),
    "gpu_dtype": lambda m: m.get_autocast_gpu_dtype(),
    "ipu_dtype": lambda m: m.get_autocast_ipu_dtype(),
    "xla_dtype": lambda m: m.get_autocast_xla_dtype(),
    "is_ipu": lambda m: m.is_autocast_ipu_enabled(),
    "is_xla": lambda m: m.is_autocast_xla_enabled(),
    "set_cpu_enabled": lambda m: (_round_trip(m, "cpu_enabled", True, False),
                                  m.is_autocast_enabled("cpu")),
    "set_cpu_dtype": lambda m: (_round_trip(m, "cpu_dtype", m.float16, m.bfloat16),
                                m.get_autocast_dtype("cpu")),
    "set_gpu_dtype": lambda m: _round_trip(m, "gpu_dtype", m.bfloat16, m.float16),
    "set_xla_enabled": lambda m: _round_trip(m, "xla_enabled", True, False),
    "set_ipu_dtype": lambda m: _round_trip(m, "ipu_dtype", m.bfloat16, m.float16),
    "cache": lambda m: (m.is_autocast_cache_enabled(), m.set_autocast_cache_enabled(False),
                        m.is_autocast_cache_enabled(), m.set_autocast_cache_enabled(True)),
    "set_cpu_enabled_int": lambda m: m.set_autocast_cpu_enabled(1),
    "set_cache_int": lambda m: m.set_autocast_cache_enabled(0),
}


@pytest.mark.parametrize("name", DEPRECATED_AUTOCAST)
def test_deprecated_per_device_autocast_forms_as_torch(name):
    seen = []
    for m in (torch, torchlike):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                got = repr(DEPRECATED_AUTOCAST[name](m)).replace("torchlike.", "torch.")
            except Exception as e:  # noqa: BLE001
                got = (type(e).__name__, str(e))
        seen.append((got, [(x.category.__name__, str(x.message).split(" (Triggered")[0])
                           for x in w]))
    assert seen[1] == seen[0]
    assert not torchlike.is_autocast_enabled("cpu")


def _module_dtypes(m):
    """Modules fed a lower-precision activation under CPU autocast (their parameters float32):
    the dtypes of what comes out."""
    m.manual_seed(0)
    b = m.ones(2, 1, 4, dtype=m.bfloat16)
    out = {}
    with m.autocast("cpu"):
        out["mha"] = m.nn.MultiheadAttention(4, 2)(b, b, b)[0]
        net = m.nn.Sequential(m.nn.Conv2d(3, 4, 3, padding=1), m.nn.BatchNorm2d(4), m.nn.ReLU(),
                              m.nn.Conv2d(4, 2, 3))
        out["conv_bn_conv"] = net(m.ones(1, 3, 5, 5))
        for kind in ("GRUCell", "LSTMCell", "RNNCell"):
            cell = getattr(m.nn, kind)(4, 3)
            for name, x in (("f32", m.ones(2, 4)), ("bf16", m.ones(2, 4, dtype=m.bfloat16))):
                y = cell(x)
                out[f"{kind}_{name}"] = y[0] if isinstance(y, tuple) else y
            h = m.zeros(2, 3)
            y = cell(m.ones(2, 4, dtype=m.bfloat16), (h, h) if kind == "LSTMCell" else h)
            out[f"{kind}_bf16_in_f32_state"] = y[0] if isinstance(y, tuple) else y
        for kind in ("GRU", "RNN"):
            out[kind + "_bf16"] = getattr(m.nn, kind)(4, 3)(b)[0]
    out["instance_norm_no_autocast"] = m.nn.functional.instance_norm(
        m.ones(2, 2, 3, dtype=m.bfloat16), weight=m.ones(2), bias=m.zeros(2))
    return {k: str(v.dtype) for k, v in out.items()}


def test_lower_precision_activations_into_float32_modules():
    """A conv after a BatchNorm, attention, recurrent cells: their float32 parameters meet a
    lower-precision activation; torch casts before its kernels' dtype checks (these raised)."""
    assert _module_dtypes(torchlike) == _module_dtypes(torch)


def test_cuda_amp_custom_fwd_and_bwd_warn_as_torch():
    """torch.cuda.amp.custom_fwd / custom_bwd are deprecated for torch.amp's (device_type=
    'cuda'): the same FutureWarnings, as decorators and as decorator factories."""
    import warnings

    def run(m):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m.cuda.amp.custom_fwd(lambda ctx, x: x)
            m.cuda.amp.custom_bwd(lambda ctx, g: g)
            m.cuda.amp.custom_fwd(cast_inputs=m.float32)
        return [(x.category.__name__, str(x.message)) for x in w]
    assert run(torchlike) == run(torch)


def test_grad_scaler_unscales_a_devices_gradients_in_one_call(monkeypatch):
    """unscale_ runs one call for all of a device's gradients (it ran several array operations
    per parameter), with torch's values and inf flag; in fused eager it reads nothing."""
    from torchlike.amp import grad_scaler as gs
    calls = []
    real = gs._UNSCALE
    monkeypatch.setattr(gs, "_UNSCALE", lambda *a: calls.append(1) or real(*a))

    def run(m, poison):
        m.manual_seed(0)
        model = m.nn.Sequential(m.nn.Linear(3, 4), m.nn.Linear(4, 2))
        opt = m.optim.SGD(model.parameters(), lr=0.1)
        scaler = m.amp.GradScaler("cpu", init_scale=8.0)
        w = model[0].weight
        with m.no_grad():
            for k, p in enumerate(model.parameters()):
                p.copy_(m.arange(p.numel(), dtype=m.float32).reshape(p.shape) * 0.1 - k)
        scaler.scale(model(m.ones(5, 3)).sum()).backward()
        if poison:
            with m.no_grad():
                w.grad[0, 0] = float("inf")
        scaler.unscale_(opt)
        found = sum(v.item() for v in scaler._per_optimizer_states[id(opt)][
            "found_inf_per_device"].values())
        return [p.grad.tolist() for p in model.parameters()], found
    for poison in (False, True):
        ours, theirs = run(torchlike, poison), run(torch, poison)
        assert ours[1] == theirs[1] == float(poison)
        for a, b in zip(ours[0], theirs[0]):
            np.testing.assert_allclose(a, b, rtol=1e-6)
    assert len(calls) == 2
    with torchlike.eager.fused():
        torchlike.sync()
        before = dict(torchlike.eager.stats()["fused"]["cuts"])
        model = torchlike.nn.Linear(3, 2)
        opt = torchlike.optim.SGD(model.parameters(), lr=0.1)
        scaler = torchlike.amp.GradScaler("cpu")
        scaler.scale(model(torchlike.ones(5, 3)).sum()).backward()
        scaler.unscale_(opt)
        after = dict(torchlike.eager.stats()["fused"]["cuts"])
        assert {k: v for k, v in after.items() if v != before.get(k)} == {
            "backward": before.get("backward", 0) + 1}


@pytest.mark.parametrize("loss", ["cross_entropy", "cross_entropy_probs", "l1_loss"])
def test_composite_losses_run_as_one_float32_op_under_cpu_autocast(loss):
    """torch's CPU autocast runs cross_entropy_loss and l1_loss as one op in float32: their
    lower-precision inputs are cast first, so the log-softmax inside runs in float32 too (the
    value to float32 rounding, where its parts in bfloat16 drifted by 1e-3)."""
    def run(m):
        F = m.nn.functional
        x = m.tensor(A).bfloat16()
        with m.autocast("cpu", dtype=m.bfloat16):
            if loss == "cross_entropy":
                out = F.cross_entropy(x, m.tensor(T))
            elif loss == "cross_entropy_probs":
                out = F.cross_entropy(x, m.tensor(P).bfloat16())
            else:
                out = F.l1_loss(x, x * 0.5)
        return str(out.dtype), out.float().item()
    (dt, got), (want_dt, want) = run(torchlike), run(torch)
    assert dt == want_dt
    np.testing.assert_allclose(got, want, rtol=2e-6)
