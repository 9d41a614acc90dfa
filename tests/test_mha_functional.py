"""torch.nn.functional.multi_head_attention_forward against torch 2.13 (values, attention
weights, gradients), in the configurations models call it with."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike as tl

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _fresh_rng():
    """Each test draws the same inputs whatever ran before it (in this worker)."""
    global RNG
    RNG = np.random.default_rng(0)
E, H, L, S, N = 8, 2, 5, 6, 3


def _weights(separate, bias_kv):
    w = {"in_proj_weight": RNG.standard_normal((3 * E, E)) * 0.3,
         "in_proj_bias": RNG.standard_normal(3 * E) * 0.1,
         "out_proj_weight": RNG.standard_normal((E, E)) * 0.3,
         "out_proj_bias": RNG.standard_normal(E) * 0.1}
    if separate:
        w["q_proj_weight"], w["k_proj_weight"], w["v_proj_weight"] = \
            np.split(w.pop("in_proj_weight"), 3)
    if bias_kv:
        w["bias_k"] = RNG.standard_normal((1, 1, E)) * 0.1
        w["bias_v"] = RNG.standard_normal((1, 1, E)) * 0.1
    return {k: v.astype(np.float32) for k, v in w.items()}


CASES = {
    "self_packed": dict(kind="self"),
    "cross_packed": dict(kind="cross"),
    "separate_clip_style": dict(kind="separate", need_weights=False),
    "bool_mask": dict(kind="self", mask="bool"),
    "float_mask_no_weights": dict(kind="self", mask="float", need_weights=False),
    "key_padding": dict(kind="cross", kpm=True),
    "bias_kv_zero_attn": dict(kind="self", bias_kv=True, add_zero_attn=True, mask="bool"),
    "per_head_weights": dict(kind="self", average=False),
    "unbatched": dict(kind="self", unbatched=True),
}


def _run(m, case, w, x):
    t = {k: m.tensor(v, requires_grad=True) for k, v in w.items()}
    q = m.tensor(x["q"], requires_grad=True)
    if case["kind"] == "self":
        k = v = q
    else:
        k = v = m.tensor(x["kv"], requires_grad=True)
    if case.get("kind") == "separate":
        v = m.tensor(x["kv"] * 0.5, requires_grad=True)
    kw = {}
    if case.get("mask") == "bool":
        kw["attn_mask"] = m.tensor(x["bool_mask"][:, :k.shape[0]])
    elif case.get("mask") == "float":
        kw["attn_mask"] = m.tensor(x["float_mask"][:, :k.shape[0]])
    if case.get("kpm"):
        kw["key_padding_mask"] = m.tensor(x["kpm"])
    if case.get("unbatched"):
        q = k = v = q[:, 0]
    out, weights = m.nn.functional.multi_head_attention_forward(
        q, k, v, E, H, t.get("in_proj_weight"), t["in_proj_bias"], t.get("bias_k"),
        t.get("bias_v"), case.get("add_zero_attn", False), 0.0, t["out_proj_weight"],
        t["out_proj_bias"], training=False, need_weights=case.get("need_weights", True),
        use_separate_proj_weight="q_proj_weight" in t, q_proj_weight=t.get("q_proj_weight"),
        k_proj_weight=t.get("k_proj_weight"), v_proj_weight=t.get("v_proj_weight"),
        average_attn_weights=case.get("average", True), **kw)
    loss = out.pow(2).sum() + (0 if weights is None else weights.sum() * 0.5)
    loss.backward()
    grads = {n: p.grad.numpy() for n, p in t.items() if p.grad is not None}
    return out.detach().numpy(), None if weights is None else weights.detach().numpy(), grads


@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(name):
    case = CASES[name]
    w = _weights(case["kind"] == "separate", case.get("bias_kv", False))
    bool_mask = RNG.random((L, S + 2)) > 0.7
    bool_mask[:, 0] = False
    x = {"q": RNG.standard_normal((L, N, E)).astype(np.float32),
         "kv": RNG.standard_normal((S, N, E)).astype(np.float32),
         "bool_mask": bool_mask,
         "float_mask": (RNG.standard_normal((L, S + 2)) * 0.5).astype(np.float32),
         "kpm": np.array([[False] * S, [False] * (S - 2) + [True] * 2,
                          [False] * (S - 1) + [True]])}
    if case["kind"] == "self":
        x["bool_mask"] = x["bool_mask"][:, :L + 2]
        x["float_mask"] = x["float_mask"][:, :L + 2]
    ot, wt, gt = _run(torch, case, w, x)
    ol, wl, gl = _run(tl, case, w, x)
    np.testing.assert_allclose(ol, ot, rtol=1e-5, atol=2e-6)
    assert (wt is None) == (wl is None)
    if wt is not None:
        np.testing.assert_allclose(wl, wt, rtol=1e-5, atol=2e-6)
    assert gl.keys() == gt.keys()
    for k in gt:
        np.testing.assert_allclose(gl[k], gt[k], rtol=1e-4, atol=1e-5, err_msg=k)


def test_errors():
    for m in (torch, tl):
        q = m.zeros(L, N, E)
        w = m.zeros(3 * E, E)
        with pytest.raises(AssertionError, match="was expecting embedding dimension of 6, but "
                                                 "got 8"):
            m.nn.functional.multi_head_attention_forward(q, q, q, 6, H, w, None, None, None,
                                                         False, 0.0, m.zeros(E, E), None)
        with pytest.raises(RuntimeError, match="The shape of the 2D attn_mask is"):
            m.nn.functional.multi_head_attention_forward(
                q, q, q, E, H, w, None, None, None, False, 0.0, m.zeros(E, E), None,
                attn_mask=m.zeros(2, 2))
