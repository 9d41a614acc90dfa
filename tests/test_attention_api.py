"""torch.nn.attention against torch 2.13: sdpa_kernel's backend choice (and the math path's
numbers), the causal biases, and flex_attention (block-mask tables, values, lse, gradients)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from torch.nn import attention as t_attn
from torch.nn.attention import bias as t_bias
from torch.nn.attention import flex_attention as t_flex

import torchlike as tl
from torchlike.nn import attention as l_attn
from torchlike.nn.attention import bias as l_bias
from torchlike.nn.attention import flex_attention as l_flex

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _fresh_rng():
    """Each test draws the same inputs whatever ran before it (in this worker)."""
    global RNG
    RNG = np.random.default_rng(0)
DTYPES = ["float32", "float64", "bfloat16", "float16"]


def _both(x, dtype="float32", grad=False):
    """``x`` (numpy) as a torch and a torchlike tensor of ``dtype``."""
    t = torch.tensor(x).to(getattr(torch, dtype))
    t_l = tl.tensor(x).to(getattr(tl, dtype))
    if grad:
        t.requires_grad_(True)
        t_l.requires_grad_(True)
    return t, t_l


def _np(t):
    return t.detach().float().numpy() if hasattr(t, "detach") else np.asarray(t)


def _close(a, b, atol, rtol=0.0):
    np.testing.assert_allclose(_np(a), _np(b), atol=atol, rtol=rtol)


# ------------------------------------------------------------------ SDPBackend, sdpa_kernel

def test_sdpbackend_members():
    assert {m: int(getattr(t_attn.SDPBackend, m)) for m in t_attn.SDPBackend.__members__} == \
        {m.name: int(m) for m in l_attn.SDPBackend}
    assert l_attn.SDPBackend.MATH.name == "MATH" and l_attn.SDPBackend.MATH.value == 0
    assert repr(l_attn.SDPBackend.MATH) == repr(t_attn.SDPBackend.MATH)
    assert str(l_attn.SDPBackend.MATH) == str(t_attn.SDPBackend.MATH)
    assert tl.backends.cuda.SDPBackend is l_attn.SDPBackend
    assert set(t_attn.__all__) <= set(dir(l_attn))


def _switches(m):
    c = m.backends.cuda
    return (c.flash_sdp_enabled(), c.mem_efficient_sdp_enabled(), c.math_sdp_enabled(),
            c.cudnn_sdp_enabled())


@pytest.mark.parametrize("choice", [["MATH"], ["FLASH_ATTENTION"], ["MATH", "CUDNN_ATTENTION"],
                                    ["EFFICIENT_ATTENTION", "FLASH_ATTENTION"]])
def test_sdpa_kernel_switches_and_restores(choice):
    seen = []
    for m, a in ((torch, t_attn), (tl, l_attn)):
        before = _switches(m)
        arg = [getattr(a.SDPBackend, c) for c in choice]
        with a.sdpa_kernel(arg if len(arg) > 1 else arg[0]) as r:
            seen.append((r, _switches(m), [b.name for b in a._cur_sdpa_kernel_backends()]))
        assert _switches(m) == before

        @a.sdpa_kernel(arg)
        def inside():
            return _switches(m)
        seen.append(inside())
        assert _switches(m) == before
    assert seen[0] == seen[2] and seen[1] == seen[3]


def test_sdpa_kernel_rejects_non_backends():
    for a in (t_attn, l_attn):
        with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
            with a.sdpa_kernel("math"):
                pass


def _sdpa_case(m, a, backend, q, k, v, **kw):
    with a.sdpa_kernel(getattr(a.SDPBackend, backend)):
        out = m.nn.functional.scaled_dot_product_attention(q, k, v, **kw)
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("backend", ["MATH", "FLASH_ATTENTION"])
@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"mask": "bool"}, {"mask": "float"},
                                {"scale": -0.3}])
def test_backend_numbers_and_gradients(dtype, backend, kw):
    """Each backend's values and gradients match torch's for that backend (half precision: the
    math path upcasts to float32, the flash path does not)."""
    kw = dict(kw)
    x = [RNG.standard_normal(s).astype(np.float32) for s in ((2, 3, 5, 8), (2, 3, 6, 8),
                                                             (2, 3, 6, 8))]
    mask = kw.pop("mask", None)
    tq, lq = _both(x[0], dtype, grad=True)
    tk, lk = _both(x[1], dtype, grad=True)
    tv, lv = _both(x[2], dtype, grad=True)
    if mask == "bool":
        mb = RNG.random((5, 6)) > 0.3
        mb[:, 0] = True
        kw_t, kw_l = dict(attn_mask=torch.tensor(mb)), dict(attn_mask=tl.tensor(mb))
    elif mask == "float":
        mf = RNG.standard_normal((5, 6)).astype(np.float32)
        tm, lm = _both(mf, dtype)
        kw_t, kw_l = dict(attn_mask=tm), dict(attn_mask=lm)
    else:
        kw_t, kw_l = dict(kw), dict(kw)
    ot = _sdpa_case(torch, t_attn, backend, tq, tk, tv, **kw_t)
    ol = _sdpa_case(tl, l_attn, backend, lq, lk, lv, **kw_l)
    assert ol.dtype.name == str(ot.dtype).split(".")[1]
    assert type(ol.grad_fn).__name__ == type(ot.grad_fn).__name__
    g = RNG.standard_normal(ot.shape).astype(np.float32)
    gt, gl = _both(g, dtype)
    ot.backward(gt)
    ol.backward(gl)
    tol = {"float32": 2e-5, "float64": 1e-10, "bfloat16": 3e-2, "float16": 4e-3}[dtype]
    _close(ol, ot, tol, tol)
    for a, b in ((lq, tq), (lk, tk), (lv, tv)):
        _close(a.grad, b.grad, 4 * tol, tol)


def test_math_upcasts_half_precision():
    """MATH in bfloat16 computes in float32 and rounds once, as torch's math path: its values
    equal torch's MATH values, which differ from torch's flash path's."""
    rng = np.random.default_rng(1)
    x = [rng.standard_normal((1, 2, 16, 32)).astype(np.float32) for _ in range(3)]
    (tq, lq), (tk, lk), (tv, lv) = (_both(a, "bfloat16") for a in x)
    t_math = _sdpa_case(torch, t_attn, "MATH", tq, tk, tv)
    t_flash = _sdpa_case(torch, t_attn, "FLASH_ATTENTION", tq, tk, tv)
    l_math = _sdpa_case(tl, l_attn, "MATH", lq, lk, lv)
    l_flash = _sdpa_case(tl, l_attn, "FLASH_ATTENTION", lq, lk, lv)
    assert (_np(t_math) != _np(t_flash)).mean() > 0.1
    assert (_np(l_math) != _np(t_math)).mean() < 0.01
    np.testing.assert_allclose(_np(l_math), _np(t_math), atol=8e-3)
    np.testing.assert_allclose(_np(l_flash), _np(t_flash), atol=3e-2)


def test_fully_masked_rows_are_zero():
    x = RNG.standard_normal((1, 2, 4, 8)).astype(np.float32)
    m = np.ones((4, 4), bool)
    m[1] = False
    for backend in ("MATH", "FLASH_ATTENTION"):
        tq, lq = _both(x, grad=True)
        ot = _sdpa_case(torch, t_attn, backend, tq, tq, tq, attn_mask=torch.tensor(m))
        ol = _sdpa_case(tl, l_attn, backend, lq, lq, lq, attn_mask=tl.tensor(m))
        ot.sum().backward()
        ol.sum().backward()
        _close(ol, ot, 1e-6)
        assert np.all(_np(ol)[0, :, 1] == 0)
        _close(lq.grad, tq.grad, 1e-5)


def test_no_backend_errors():
    q4 = RNG.standard_normal((1, 2, 4, 8)).astype(np.float32)
    q3 = q4[0]
    for m, a in ((torch, t_attn), (tl, l_attn)):
        q = m.tensor(q4)
        for which in ("EFFICIENT_ATTENTION", "CUDNN_ATTENTION"):
            with pytest.raises(RuntimeError, match="No viable backend for scaled_dot_product_"
                                                   "attention was found. This is likely due"):
                _sdpa_case(m, a, which, q, q, q)
        q = m.tensor(q3)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="No available kernel.  Aborting execution."):
                _sdpa_case(m, a, "FLASH_ATTENTION", q, q, q)
        msgs = [str(x.message) for x in w]
        assert any(s.startswith("Flash attention kernel not used because:") for s in msgs)
        assert any("All fused kernels requires query, key and value to be 4 dimensional, but "
                   "got Query dim: 3, Key dim: 3, Value dim: 3 instead." in s for s in msgs)
        q = m.tensor(q4)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="No available kernel"):
                _sdpa_case(m, a, "FLASH_ATTENTION", q, q, q, dropout_p=0.5)
        assert any("Both fused kernels do not support non-zero dropout." in str(x.message)
                   for x in w)


@pytest.mark.parametrize("shapes", [((1, 4, 3, 8), (1, 2, 3, 8), (1, 2, 3, 8), None),
                                    ((2, 4, 3, 8), (1, 4, 3, 8), (1, 4, 3, 8), None),
                                    ((1, 4, 3, 8), (1, 4, 3, 8), (1, 4, 3, 4), None),
                                    ((1, 4, 3, 8), (1, 4, 3, 8), (1, 4, 3, 8), (1, 3, 3))])
def test_flash_refusals(shapes):
    """Inputs torch's CPU flash kernel refuses: with flash alone, its warnings and error."""
    *qkv, mshape = shapes
    x = [RNG.standard_normal(s).astype(np.float32) for s in qkv]
    seen = []
    for m, a in ((torch, t_attn), (tl, l_attn)):
        kw = {} if mshape is None else {"attn_mask": m.ones(mshape, dtype=m.bool)}
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with pytest.raises(RuntimeError, match="No available kernel.  Aborting execution."):
                _sdpa_case(m, a, "FLASH_ATTENTION", *(m.tensor(v) for v in x), **kw)
        seen.append([str(x.message).split(" (Triggered")[0] for x in w])
    assert seen[0] == seen[1]


def test_gqa_backends():
    x = [RNG.standard_normal(s).astype(np.float32) for s in ((1, 4, 3, 8), (1, 2, 3, 8),
                                                             (1, 2, 3, 8))]
    for backend in ("MATH", "FLASH_ATTENTION"):
        (tq, lq), (tk, lk), (tv, lv) = (_both(a, grad=True) for a in x)
        ot = _sdpa_case(torch, t_attn, backend, tq, tk, tv, enable_gqa=True)
        ol = _sdpa_case(tl, l_attn, backend, lq, lk, lv, enable_gqa=True)
        assert type(ol.grad_fn).__name__ == type(ot.grad_fn).__name__
        ot.sum().backward()
        ol.sum().backward()
        _close(ol, ot, 2e-5)
        for a, b in ((lq, tq), (lk, tk), (lv, tv)):
            _close(a.grad, b.grad, 5e-5)


def test_dropout_uses_math_path_by_default():
    x = RNG.standard_normal((1, 2, 4, 8)).astype(np.float32)
    for m in (torch, tl):
        q = m.tensor(x, requires_grad=True)
        out = m.nn.functional.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
        assert type(out.grad_fn).__name__ == "UnsafeViewBackward0"
        out = m.nn.functional.scaled_dot_product_attention(q, q, q)
        assert type(out.grad_fn).__name__ == "ScaledDotProductFlashAttentionForCpuBackward0"


# ------------------------------------------------------------------ causal biases

@pytest.mark.parametrize("size", [(3, 5), (4, 4), (5, 3)])
@pytest.mark.parametrize("name", ["causal_upper_left", "causal_lower_right"])
def test_causal_bias(size, name):
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        bt = getattr(t_bias, name)(*size)
    with warnings.catch_warnings(record=True) as wl:
        warnings.simplefilter("always")
        bl = getattr(l_bias, name)(*size)
    assert [str(w.message) for w in wl] == [str(w.message) for w in wt]
    assert int(bl.variant) == int(bt.variant) and bl.variant.name == bt.variant.name
    np.testing.assert_array_equal(bl._materialize().numpy(), bt._materialize().numpy())
    assert repr(bl) == repr(bt)
    L, S = size
    x = [RNG.standard_normal((2, 2, n, 8)).astype(np.float32) for n in (L, S, S)]
    (tq, lq), (tk, lk), (tv, lv) = (_both(a, grad=True) for a in x)
    ot = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=bt)
    ol = tl.nn.functional.scaled_dot_product_attention(lq, lk, lv, attn_mask=bl)
    ot.sum().backward()
    ol.sum().backward()
    _close(ol, ot, 2e-5)
    for a, b in ((lq, tq), (lk, tk), (lv, tv)):
        _close(a.grad, b.grad, 5e-5)


def test_causal_bias_errors():
    for b in (t_bias, l_bias):
        with pytest.raises(AssertionError, match="causal_upper_left only supports 2D tensors"):
            b.causal_upper_left(1, 2, 3)
        with pytest.raises(ValueError, match="CausalBias should not be used with causal=True"):
            m = torch if b is t_bias else tl
            q = m.zeros(1, 1, 2, 4)
            m.nn.functional.scaled_dot_product_attention(q, q, q, b.causal_lower_right(2, 2),
                                                         is_causal=True)


# ------------------------------------------------------------------ flex_attention: masks

def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def sliding_window(b, h, q_idx, kv_idx):
    return (q_idx - kv_idx).abs() <= 20


def prefix_lm(b, h, q_idx, kv_idx):
    return kv_idx <= 17


def head_and_batch(b, h, q_idx, kv_idx):
    return (q_idx + kv_idx + b + 2 * h) % 5 != 0


MASKS = {"causal": (causal, causal), "sliding": (sliding_window, sliding_window),
         "causal_or_prefix": (t_flex.or_masks(causal, prefix_lm),
                              l_flex.or_masks(causal, prefix_lm)),
         "causal_and_window": (t_flex.and_masks(causal, sliding_window),
                               l_flex.and_masks(causal, sliding_window)),
         "noop": (t_flex.noop_mask, l_flex.noop_mask),
         "head_and_batch": (head_and_batch, head_and_batch)}

_TABLES = ["kv_num_blocks", "kv_indices", "full_kv_num_blocks", "full_kv_indices",
           "q_num_blocks", "q_indices", "full_q_num_blocks", "full_q_indices"]


@pytest.mark.parametrize("mask", list(MASKS))
@pytest.mark.parametrize("sizes", [(None, None, 100, 130, 32), (2, 3, 64, 64, 16),
                                   (1, 2, 40, 24, (16, 8)), (2, None, 256, 256, 128)])
def test_create_block_mask_tables(mask, sizes):
    B, H, Q, KV, bs = sizes
    bt = t_flex.create_block_mask(MASKS[mask][0], B, H, Q, KV, device="cpu", BLOCK_SIZE=bs)
    bl = l_flex.create_block_mask(MASKS[mask][1], B, H, Q, KV, BLOCK_SIZE=bs)
    for name in _TABLES:
        a, b = getattr(bl, name), getattr(bt, name)
        assert a.dtype.name == "int32" and str(b.dtype) == "torch.int32"
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=name)
    assert bl.shape == bt.shape and bl.BLOCK_SIZE == bt.BLOCK_SIZE
    assert bl.seq_lengths == bt.seq_lengths
    assert bl.sparsity() == pytest.approx(bt.sparsity())
    assert repr(bl) == repr(bt)
    assert bl.to_string() == bt.to_string()
    np.testing.assert_array_equal(bl.to_dense().numpy(), bt.to_dense().numpy())
    np.testing.assert_array_equal(
        l_flex.create_mask(MASKS[mask][1], B, H, Q, KV).numpy(),
        t_flex.create_mask(MASKS[mask][0], B, H, Q, KV, device="cpu").numpy())


def test_create_block_mask_without_full_blocks():
    bt = t_flex.create_block_mask(causal, 1, 1, 64, 64, device="cpu", BLOCK_SIZE=16,
                                  separate_full_blocks=False)
    bl = l_flex.create_block_mask(causal, 1, 1, 64, 64, BLOCK_SIZE=16,
                                  separate_full_blocks=False)
    assert bl.full_kv_num_blocks is None and bt.full_kv_num_blocks is None
    assert repr(bl) == repr(bt)
    np.testing.assert_array_equal(bl.kv_indices.numpy(), bt.kv_indices.numpy())


def test_create_block_mask_rejects_score_mod():
    for f in (t_flex, l_flex):
        with pytest.raises(AssertionError, match="create-block_mask requires a mask_mod"):
            f.create_block_mask(lambda s, b, h, q, kv: s, 1, 1, 8, 8, device="cpu")
        with pytest.raises(AssertionError, match="Expected 4 or 5 positional args, got 3"):
            f.create_block_mask(lambda b, q, kv: q, 1, 1, 8, 8, device="cpu")


# ------------------------------------------------------------------ flex_attention: values

SLOPES = np.array([0.5, 0.25, 0.125, 0.0625], np.float32)


def _score_mods(m, slopes):
    return {
        None: None,
        "alibi": lambda s, b, h, q, kv: s + slopes[h] * (kv - q),
        "softcap": lambda s, b, h, q, kv: 20 * m.tanh(s / 20),
        "relative": lambda s, b, h, q, kv: s + (q - kv) * 0.01,
        "causal_inf": lambda s, b, h, q, kv: m.where(q >= kv, s, -float("inf")),
    }


def _flex_inputs(B, Hq, Hkv, L, S, E, dtype="float32", grad=False):
    x = [RNG.standard_normal(s).astype(np.float32)
         for s in ((B, Hq, L, E), (B, Hkv, S, E), (B, Hkv, S, E))]
    return [_both(a, dtype, grad) for a in x]


@pytest.mark.parametrize("score_mod", [None, "alibi", "softcap", "relative", "causal_inf"])
@pytest.mark.parametrize("mask", [None, "causal", "sliding", "head_and_batch"])
def test_flex_attention_values(score_mod, mask):
    (tq, lq), (tk, lk), (tv, lv) = _flex_inputs(2, 4, 4, 64, 80, 16)
    kt = kl = {}
    if mask is not None:
        kt = dict(block_mask=t_flex.create_block_mask(MASKS[mask][0], 2, 4, 64, 80,
                                                       device="cpu", BLOCK_SIZE=16))
        kl = dict(block_mask=l_flex.create_block_mask(MASKS[mask][1], 2, 4, 64, 80,
                                                       BLOCK_SIZE=16))
    st = _score_mods(torch, torch.tensor(SLOPES))[score_mod]
    sl = _score_mods(tl, tl.tensor(SLOPES))[score_mod]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ot, auxt = t_flex.flex_attention(tq, tk, tv, score_mod=st, **kt,
                                         return_aux=t_flex.AuxRequest(lse=True))
    ol, auxl = l_flex.flex_attention(lq, lk, lv, score_mod=sl, **kl,
                                     return_aux=l_flex.AuxRequest(lse=True))
    assert tuple(ol.shape) == tuple(ot.shape) and ol.dtype.name == "float32"
    _close(ol, ot, 2e-5, 1e-5)
    assert auxl.max_scores is None and auxt.max_scores is None
    assert auxl.lse.dtype.name == "float32"
    _close(auxl.lse, auxt.lse, 2e-5, 1e-5)


@pytest.mark.parametrize("dtype", ["float64", "bfloat16", "float16"])
def test_flex_attention_dtypes_and_gqa(dtype):
    (tq, lq), (tk, lk), (tv, lv) = _flex_inputs(1, 4, 2, 32, 48, 8, dtype)
    bt = t_flex.create_block_mask(causal, None, None, 32, 48, device="cpu", BLOCK_SIZE=16)
    bl = l_flex.create_block_mask(causal, None, None, 32, 48, BLOCK_SIZE=16)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ot, lt = t_flex.flex_attention(tq, tk, tv, block_mask=bt, enable_gqa=True,
                                       return_lse=True)
    ol, ll = l_flex.flex_attention(lq, lk, lv, block_mask=bl, enable_gqa=True,
                                   return_lse=True)
    assert ol.dtype.name == dtype and ll.dtype.name == str(lt.dtype).split(".")[1]
    tol = {"float64": 1e-12, "bfloat16": 8e-3, "float16": 1e-3}[dtype]
    _close(ol, ot, tol, tol)        # one rounding step of the output dtype
    _close(ll, lt, 1e-5 if dtype != "float64" else 1e-12)


def test_flex_attention_fully_masked_rows():
    def none_for_q3(b, h, q, kv):
        return q != 3
    (tq, lq), (tk, lk), (tv, lv) = _flex_inputs(1, 1, 1, 16, 16, 8)
    bt = t_flex.create_block_mask(none_for_q3, 1, 1, 16, 16, device="cpu", BLOCK_SIZE=8)
    bl = l_flex.create_block_mask(none_for_q3, 1, 1, 16, 16, BLOCK_SIZE=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ot, auxt = t_flex.flex_attention(tq, tk, tv, block_mask=bt,
                                         return_aux=t_flex.AuxRequest(lse=True))
    ol, auxl = l_flex.flex_attention(lq, lk, lv, block_mask=bl,
                                     return_aux=l_flex.AuxRequest(lse=True, max_scores=True))
    _close(ol, ot, 2e-5)
    assert np.all(_np(ol)[0, 0, 3] == 0)
    np.testing.assert_array_equal(_np(auxl.lse) == -np.inf, _np(auxt.lse) == -np.inf)
    # max_scores (torch computes it on GPUs only): each row's largest allowed score
    s = (tq @ tk.transpose(-2, -1)) / np.sqrt(8)
    s = s.masked_fill(~t_flex.create_mask(none_for_q3, 1, 1, 16, 16, device="cpu"),
                      float("-inf"))
    _close(auxl.max_scores, s.amax(-1), 2e-5)


def _flex_reference(q, k, v, slopes, mask, scale):
    """flex_attention written out in torch ops (torch's CPU flex_attention has no backward)."""
    L, S = q.shape[-2], k.shape[-2]
    s = q @ k.transpose(-2, -1) * scale
    qi = torch.arange(L).view(L, 1)
    ki = torch.arange(S).view(1, S)
    s = s + slopes.view(-1, 1, 1) * (ki - qi)
    s = s.masked_fill(~mask, float("-inf"))
    return torch.softmax(s, -1) @ v


def test_flex_attention_backward():
    """Gradients of q, k, v and of a learnable ALiBi slope a score_mod captures, against the
    same attention written in torch ops."""
    (tq, lq), (tk, lk), (tv, lv) = _flex_inputs(2, 4, 4, 32, 40, 8, grad=True)
    ts, ls = _both(SLOPES, grad=True)
    bl = l_flex.create_block_mask(sliding_window, None, None, 32, 40, BLOCK_SIZE=8)
    mask = t_flex.create_mask(sliding_window, None, None, 32, 40, device="cpu")

    def alibi(s, b, h, q, kv):
        return s + ls[h] * (kv - q)
    ol = l_flex.flex_attention(lq, lk, lv, score_mod=alibi, block_mask=bl, scale=0.3)
    ot = _flex_reference(tq, tk, tv, ts, mask, 0.3)
    g = RNG.standard_normal(ot.shape).astype(np.float32)
    ot.backward(torch.tensor(g))
    ol.backward(tl.tensor(g))
    _close(ol, ot, 2e-5, 1e-5)
    for a, b in ((lq, tq), (lk, tk), (lv, tv), (ls, ts)):
        _close(a.grad, b.grad, 5e-4, 1e-4)


def test_flex_attention_input_errors():
    for m, f in ((torch, t_flex), (tl, l_flex)):
        q = m.zeros(1, 2, 16, 8)
        with pytest.raises(NotImplementedError, match="NYI: query, key, and value must be 4D"):
            f.flex_attention(q[0], q[0], q[0])
        with pytest.raises(ValueError, match="Expect query and key/value to have the same "
                                             "number of heads but got Hq=2 and Hkv=1"):
            f.flex_attention(q, q[:, :1], q[:, :1])
        small = f.create_block_mask(causal, 1, 1, 8, 8, device="cpu", BLOCK_SIZE=8)
        with pytest.raises(ValueError, match="smaller length than you're using it for"):
            f.flex_attention(q, q, q, block_mask=small)
        big = f.create_block_mask(causal, 1, 1, 32, 32, device="cpu", BLOCK_SIZE=8)
        with pytest.raises(ValueError, match="larger length than you're using it for"):
            f.flex_attention(q, q, q, block_mask=big)
        with pytest.raises(ValueError, match="Cannot specify both return_lse and return_aux"):
            f.flex_attention(q, q, q, return_lse=True, return_aux=f.AuxRequest(lse=True))


def test_flex_namespace():
    assert set(t_flex.__all__) <= set(dir(l_flex))
    assert set(t_bias.__all__) <= set(dir(l_bias))
    assert tl.nn.attention is l_attn
