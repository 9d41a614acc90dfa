"""Pieces of sequence-model and language-model programs (attention masks, generation loops,
RNNs over packed batches, CTC and the training utilities around them) run on torch and
torchlike side by side: the same values, dtypes, shapes and errors (class and message)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike
from oracle import same_as_torch

R = np.random.default_rng(23)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def F(m):
    return m.nn.functional


# ------------------------------------------------------------------ attention masks

Q0, K0, V0 = f32(2, 2, 5, 4), f32(2, 2, 5, 4), f32(2, 2, 5, 4)


@pytest.mark.parametrize("qdt", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("mdt", ["float32", "float64", "bfloat16", "float16", "int64", "uint8"])
def test_sdpa_float32_mask_on_any_float_query(qdt, mdt):
    # torch accepts a float32 additive mask whatever the query's floating dtype (HF code
    # builds its masks with torch.finfo(float32).min and runs the model in bfloat16)
    def fn(m):
        q, k, v = (m.tensor(a).to(getattr(m, qdt)) for a in (Q0, K0, V0))
        mask = m.zeros(5, 5).masked_fill(~m.tril(m.ones(5, 5, dtype=m.bool)),
                                          m.finfo(m.float32).min).to(getattr(m, mdt))
        return F(m).scaled_dot_product_attention(q, k, v, attn_mask=mask).float()
    tol = 1e-5 if qdt in ("float32", "float64") else 2e-2
    same_as_torch(fn, atol=tol, rtol=tol)


def test_sdpa_float32_mask_on_bfloat16_query_gradients():
    m0 = f32(5, 5)

    def fn(m):
        q, k, v = (m.tensor(a).bfloat16().requires_grad_() for a in (Q0, K0, V0))
        mask = m.tensor(m0)
        out = F(m).scaled_dot_product_attention(q, k, v, attn_mask=mask)
        out.float().pow(2).sum().backward()
        return out.float(), q.grad.float(), k.grad.float(), v.grad.float(), out.dtype == m.bfloat16
    same_as_torch(fn, atol=3e-2, rtol=3e-2)


# ------------------------------------------------------------------ CTC

CT = f32(10, 2, 5)


@pytest.mark.parametrize("blank", [0, 4])
@pytest.mark.parametrize("targets", [[[1, 2, 2], [3, 1, 0]], [[1, 2, 2], [3, 4, 0]],
                                     [[4, 4, 1], [3, 4, 0]], [[0, 0, 1], [3, 0, 0]],
                                     [[2, 0, 2], [0, 0, 1]]])
@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_ctc_targets_holding_the_blank(blank, targets, reduction):
    # a target equal to the blank index: torch's recursion lets it skip like any label, and
    # its backward drops the final blank's share at the last step when the last target is
    # the blank
    def fn(m):
        lp = m.tensor(CT, requires_grad=True)
        loss = F(m).ctc_loss(lp.log_softmax(2), m.tensor(targets), m.tensor([10, 9]),
                             m.tensor([3, 2]), blank=blank, reduction=reduction)
        loss.sum().backward()
        return loss, lp.grad
    same_as_torch(fn, atol=1e-4, rtol=1e-4)


# ------------------------------------------------------------------ normalisation layers

@pytest.mark.parametrize("first", ["m.float16, m.float32", "m.float32, m.float64",
                                   "m.bfloat16, m.bfloat16"])
def test_rms_norm_warns_once_of_a_weight_of_another_dtype(first):
    from oracle import fresh_process_outputs
    code = ("import sys, warnings\nm = __import__(sys.argv[1])\n"
            "F = m.nn.functional\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            f"    for a, b in [({first}), (m.bfloat16, m.float32), (m.float32, m.float16)]:\n"
            "        y = F.rms_norm(m.ones(2, 3, dtype=a), (3,), weight=m.ones(3, dtype=b))\n"
            "        print(y.dtype)\n"
            "print([(x.category.__name__, str(x.message).split(' (Triggered')[0]) for x in w])")
    out = fresh_process_outputs(code)
    assert out["torch"] and out["torchlike"] == out["torch"]


@pytest.mark.parametrize("a", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("b", ["float32", "float64", "bfloat16", "float16"])
def test_rms_norm_mixed_dtypes_values_and_gradients(a, b):
    x0 = f32(2, 3)

    def fn(m):
        x = m.tensor(x0).to(getattr(m, a)).requires_grad_()
        w = m.tensor([0.5, 1.0, 2.0]).to(getattr(m, b)).requires_grad_()
        y = F(m).rms_norm(x, (3,), weight=w, eps=1e-5)
        y.float().sum().backward()
        return y.float(), x.grad.float(), w.grad.float(), str(y.dtype), str(w.grad.dtype)
    same_as_torch(fn, atol=2e-2, rtol=2e-2)


# ------------------------------------------------------------------ transformer layers

@pytest.mark.parametrize("pad_value", [1.0, 0.5, -1e9, float("-inf")])
@pytest.mark.parametrize("train", [False, True])
def test_encoder_float_key_padding_mask_of_any_value(pad_value, train):
    # `src_key_padding_mask=(ids == pad).float()`: torch's eval fast path (a nested tensor)
    # drops the positions where the mask is nonzero; training adds the mask to the scores
    x0 = f32(2, 5, 8)
    kp = np.where(np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]]) > 0, pad_value, 0.0) \
        .astype(np.float32)

    def fn(m):
        m.manual_seed(0)
        layer = m.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        enc = m.nn.TransformerEncoder(layer, 2)
        r = np.random.default_rng(1)
        with m.no_grad():
            for p in enc.parameters():
                p.copy_(m.tensor((r.standard_normal(tuple(p.shape)) * 0.2).astype(np.float32)))
        enc.train(train)
        with m.no_grad():
            return enc(m.tensor(x0), src_key_padding_mask=m.tensor(kp))
    same_as_torch(fn, atol=1e-5, rtol=1e-4)


# ------------------------------------------------------------------ autocast (cpu, bfloat16)

_A, _S = f32(4, 6), f32(6, 6)

AUTOCAST_CASES = {
    # rotary embeddings computed inside the autocast region
    "polar": lambda m, a, s: m.polar(a.bfloat16().abs(), a.bfloat16()),
    "view_as_complex": lambda m, a, s: m.view_as_complex(a.bfloat16().view(4, 3, 2)),
    "rope_product": lambda m, a, s: m.view_as_real(
        m.view_as_complex(a.bfloat16().view(4, 3, 2))
        * m.polar(m.ones(4, 3), a[:, :3])).flatten(1),
    "grid_sample": lambda m, a, s: m.nn.functional.grid_sample(
        a.bfloat16()[None, None], m.zeros(1, 2, 2, 2, dtype=m.bfloat16), align_corners=False),
    "fractional_max_pool2d": lambda m, a, s: m.nn.functional.fractional_max_pool2d(
        a.bfloat16()[None, None], 2, output_size=2,
        _random_samples=m.full((1, 1, 2), 0.5, dtype=m.bfloat16)),
    "max_unpool1d": lambda m, a, s: m.nn.functional.max_unpool1d(
        *m.nn.functional.max_pool1d(a.bfloat16()[None], 2, return_indices=True), 2),
    "lstsq": lambda m, a, s: m.linalg.lstsq((s @ s.T + m.eye(6)).bfloat16(), s.bfloat16())[0],
    "matrix_power_2": lambda m, a, s: m.linalg.matrix_power(s, 2),
    "matrix_power_-2": lambda m, a, s: m.linalg.matrix_power(s @ s.T + m.eye(6), -2),
    "matrix_power_-1": lambda m, a, s: m.linalg.matrix_power(s @ s.T + m.eye(6), -1),
    "matrix_power_1": lambda m, a, s: m.linalg.matrix_power(s, 1),
    "matrix_power_0": lambda m, a, s: m.linalg.matrix_power(s, 0),
    "stft": lambda m, a, s: m.stft(a.bfloat16().flatten(), 8, return_complex=True,
                                   window=m.hann_window(8)),
    "matmul_vectors": lambda m, a, s: m.matmul(a[0], a[1]),
    "mm": lambda m, a, s: m.mm(a, s),
}


@pytest.mark.parametrize("case", list(AUTOCAST_CASES.values()), ids=list(AUTOCAST_CASES))
def test_cpu_autocast_policy_of_ops_in_sequence_models(case):
    def fn(m):
        a, s = m.tensor(_A), m.tensor(_S)
        with m.autocast("cpu", dtype=m.bfloat16):
            out = case(m, a, s)
        return str(out.dtype), (out.abs() if out.is_complex() else out).float()
    same_as_torch(fn, atol=0.1, rtol=0.1)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("shape", [(3, 4), (1, 4), (2, 0), (0, 3)])
@pytest.mark.parametrize("autocast", [False, True])
def test_pdist_refuses_half_precision(dtype, shape, autocast):
    def fn(m):
        x = m.ones(*shape, dtype=getattr(m, dtype))
        with m.autocast("cpu", enabled=autocast):
            return m.nn.functional.pdist(x)
    same_as_torch(fn)


# ------------------------------------------------------------------ beam bookkeeping errors

@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 3, 4), (2, 3, 4, 5), (0, 3), (2, 0),
                                   (2, 0, 3), (0,)])
@pytest.mark.parametrize("idx", [[7], [-1], [1, 9, 0], [-7, 1], [0], []])
def test_index_select_and_index_add_out_of_range_errors(shape, idx):
    # an out-of-range beam index: torch's CPU kernels word it by the path they take (the
    # dim-1 fast path of index_select, the first/last dim path of index_add; with several
    # bad indices torch's threads may name any of them, so one bad index a case)
    for d in range(-len(shape), len(shape)):
        def sel(m):
            return m.ones(*shape).index_select(d, m.tensor(idx, dtype=m.long))

        def add(m):
            s = list(shape)
            s[d] = len(idx)
            return m.ones(*shape).index_add(d, m.tensor(idx, dtype=m.long), m.ones(*s))
        same_as_torch(sel)
        same_as_torch(add)


@pytest.mark.parametrize("case", [
    ("1d", (3,), [[-7, -4, -5, 100, 3, -3, -1]], 0),
    ("rows", (2, 3), [[7], [-8]], 1),
    ("cols", (2, 3), [[7, 8, 1]], 0),
    ("broadcast_error_first", (2, 3, 4), [[[9, 9]]], 1),
    ("empty_dim", (2, 0), [[1], [0]], 1),
    ("no_dim", (2, 3), [7, 1], None),
    ("no_dim_negative", (2, 3), [-1, 1], None),
])
def test_take_along_dim_wraps_indices_along_a_dim(case):
    # picking beam scores with take_along_dim: along a dim torch takes each index modulo the
    # dim's size (its gradient too); the flattened form refuses them
    _, shape, idx, dim = case

    def fn(m):
        x = (m.arange(float(np.prod(shape))).reshape(shape) * 10).requires_grad_()
        y = m.take_along_dim(x, m.tensor(idx), dim)
        y.sum().backward()
        return y, x.grad
    same_as_torch(fn)


# ------------------------------------------------------------------ embeddings and padding

@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "int8", "bool",
                                   "float32", "bfloat16", "complex64"])
@pytest.mark.parametrize("max_norm", [None, 1.0])
@pytest.mark.parametrize("weight_dims", [1, 2, 3])
def test_embedding_index_dtype_and_weight_checks(dtype, max_norm, weight_dims):
    # token ids kept as uint8/int16 (a compact corpus) must be widened first in torch
    def fn(m):
        w = m.ones(*[4, 3, 2][:weight_dims])
        return F(m).embedding(m.tensor([0, 1], dtype=getattr(m, dtype)), w, max_norm=max_norm)
    same_as_torch(fn)


@pytest.mark.parametrize("seqs", ["[m.tensor(1.), m.ones(2)]", "[m.ones(2), m.tensor(1.)]",
                                  "[m.tensor(1.)]", "[m.ones(2, 3), m.tensor(1.)]"])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence_of_a_zero_dim_tensor(seqs, batch_first):
    def fn(m):
        return m.nn.utils.rnn.pad_sequence(eval(seqs), batch_first=batch_first)
    same_as_torch(fn)


# ------------------------------------------------------------------ argument dtype checks

ARG_DTYPE_CASES = {
    "searchsorted_sorter": lambda m, i: m.searchsorted(m.tensor([3., 1., 2.]), m.tensor([2.5]),
                                                       sorter=i),
    "multi_margin_target": lambda m, i: F(m).multi_margin_loss(m.ones(3, 3), i),
    "multilabel_margin_target": lambda m, i: F(m).multilabel_margin_loss(m.ones(1, 3),
                                                                         i.view(1, 3)),
    "embedding_bag_2d": lambda m, i: F(m).embedding_bag(i.view(1, 3), m.ones(3, 2)),
    "ctc_input_lengths": lambda m, i: F(m).ctc_loss(
        m.ones(4, 3, 3).log_softmax(2), m.tensor([[1, 2]] * 3), i + 2, m.tensor([2, 2, 1])),
    "ctc_target_lengths": lambda m, i: F(m).ctc_loss(
        m.ones(4, 3, 3).log_softmax(2), m.tensor([[1, 2]] * 3), m.tensor([4, 4, 4]), i + 1),
}


@pytest.mark.parametrize("name", list(ARG_DTYPE_CASES))
@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "bool", "float32"])
def test_index_like_argument_dtypes(name, dtype):
    def fn(m):
        i = m.tensor([1, 0, 1] if dtype != "bool" else [True, False, True],
                     dtype=getattr(m, dtype))
        if name.startswith("searchsorted") and dtype != "bool":
            i = m.tensor([1, 2, 0], dtype=getattr(m, dtype))
        return ARG_DTYPE_CASES[name](m, i)
    same_as_torch(fn, atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("sorter", [[1, 2, 0], [1, 2, 5], [1, 2, -1], [1, 2], [[1, 2, 0]]])
def test_searchsorted_sorter_checks(sorter):
    def fn(m):
        return m.searchsorted(m.tensor([3., 1., 2.]), m.tensor([2.5, 0.5]), sorter=m.tensor(sorter))
    same_as_torch(fn)


# ------------------------------------------------------------------ LSTM states

_XL = f32(2, 4, 3)

LSTM_PACKED_STATES = {
    "ok": "(m.zeros(1, 2, 5), m.zeros(1, 2, 5))",
    "h_batch": "(m.zeros(1, 3, 5), m.zeros(1, 3, 5))",
    "h_batch_1": "(m.zeros(1, 1, 5), m.zeros(1, 2, 5))",
    "c_batch": "(m.zeros(1, 2, 5), m.zeros(1, 3, 5))",
    "c_batch_1": "(m.zeros(1, 2, 5), m.tensor(_C1))",
    "layers": "(m.zeros(2, 3, 5), m.zeros(2, 3, 5))",
    "hidden": "(m.zeros(1, 2, 4), m.zeros(1, 2, 5))",
    "h_1d": "(m.zeros(5), m.zeros(1, 2, 5))",
    "c_2d": "(m.zeros(1, 2, 5), m.zeros(2, 5))",
    "h_double": "(m.zeros(1, 2, 5, dtype=m.float64), m.zeros(1, 2, 5))",
}
_C1 = f32(1, 1, 5)


def _seeded_lstm(m, seed, **kw):
    """An LSTM(3, 5) with the same normal weights in both libraries."""
    r = m.nn.LSTM(3, 5, **kw)
    g = np.random.default_rng(seed)
    with m.no_grad():
        for p in r.parameters():
            p.copy_(m.tensor((g.standard_normal(tuple(p.shape)) * 0.3).astype(np.float32)))
    return r


@pytest.mark.parametrize("states", list(LSTM_PACKED_STATES))
@pytest.mark.parametrize("enforce_sorted", [True, False])
@pytest.mark.parametrize("inp", ["x", "x[..., :2]", "x.double()", "x.bfloat16()"])
def test_lstm_on_a_packed_batch_takes_its_states_through_the_kernel(states, enforce_sorted,
                                                                   inp):
    # torch's LSTM skips its module checks on a packed batch: states of a larger batch are
    # taken through the unsorting permutation, a cell state of batch 1 broadcasts, and the
    # rest fails in the kernel with its words
    def fn(m):
        r = _seeded_lstm(m, 3, batch_first=True)
        x = m.tensor(_XL)
        lengths = [4, 2] if enforce_sorted else [2, 4]
        packed = m.nn.utils.rnn.pack_padded_sequence(eval(inp), lengths, batch_first=True,
                                                     enforce_sorted=enforce_sorted)
        out, (h, c) = r(packed, eval(LSTM_PACKED_STATES[states]))
        return out.data, h, c
    same_as_torch(fn, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("h", ["float32", "float64", "bfloat16", "float16", "int64"])
@pytest.mark.parametrize("c", ["float32", "float64", "bfloat16"])
@pytest.mark.parametrize("proj", [0, 2])
def test_lstm_state_dtypes_on_a_float32_input(h, c, proj):
    def fn(m):
        r = _seeded_lstm(m, 4, proj_size=proj)
        hs = proj or 5
        return r(m.ones(3, 2, 3), (m.zeros(1, 2, hs, dtype=getattr(m, h)),
                                   m.zeros(1, 2, 5, dtype=getattr(m, c))))[0]
    if (h, c) == ("float32", "float32"):
        return
    same_as_torch(fn, atol=1e-6, rtol=1e-5)


def test_lstm_projection_warns_once_a_process():
    from oracle import fresh_process_outputs
    code = ("import sys, warnings\nm = __import__(sys.argv[1])\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    r = m.nn.LSTM(3, 5, proj_size=2)\n"
            "    x = m.ones(2, 1, 3)\n"
            "    r(m.nn.utils.rnn.pack_padded_sequence(x, [2]))\n"
            "    r.double()(x.double())\n"
            "    r.float()(x); r(x)\n"
            "print([(x.category.__name__, str(x.message).split(' (Triggered')[0]) for x in w])")
    out = fresh_process_outputs(code)
    assert out["torch"] and out["torchlike"] == out["torch"]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float64"])
@pytest.mark.parametrize("mask_dtype", ["float32", "float64", "bool"])
@pytest.mark.parametrize("train", [True, False])
@pytest.mark.parametrize("need_weights", [True, False])
def test_half_precision_attention_with_the_float32_causal_mask(dtype, mask_dtype, train,
                                                                need_weights):
    # model.bfloat16() with generate_square_subsequent_mask's float32 mask: torch's
    # scaled_dot_product_attention path (need_weights=False) and its fused eval path take it
    x0 = f32(2, 5, 8)
    kpm = np.array([[0, 0, 0, 1, 1], [0] * 5], bool)

    def fn(m):
        g = np.random.default_rng(5)
        layer = m.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        enc = m.nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        attn = m.nn.MultiheadAttention(8, 2, batch_first=True)
        with m.no_grad():
            for p in list(enc.parameters()) + list(attn.parameters()):
                p.copy_(m.tensor((g.standard_normal(tuple(p.shape)) * 0.2).astype(np.float32)))
        enc.to(getattr(m, dtype)).train(train)
        attn.to(getattr(m, dtype)).train(train)
        mask = m.nn.Transformer.generate_square_subsequent_mask(5)
        mask = mask.isinf() if mask_dtype == "bool" else mask.to(getattr(m, mask_dtype))
        x = m.tensor(x0).to(getattr(m, dtype))
        with m.no_grad():
            o = enc(x, mask=mask, src_key_padding_mask=m.tensor(kpm))
            a, w = attn(x, x, x, attn_mask=mask, need_weights=need_weights)
        return o.float(), str(o.dtype), a.float(), w is None
    same_as_torch(fn, atol=5e-2, rtol=5e-2)


@pytest.mark.parametrize("train", [True, False])
def test_encoder_fast_path_mask_warnings(train):
    # torch's fused eval layer never runs MultiheadAttention.forward: only the encoder's own
    # mismatched-mask warnings
    import warnings

    def fn(m):
        layer = m.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
        enc = m.nn.TransformerEncoder(layer, 1, enable_nested_tensor=False).train(train)
        mask = m.nn.Transformer.generate_square_subsequent_mask(5)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with m.no_grad():
                enc(m.ones(2, 5, 8), mask=mask, src_key_padding_mask=m.zeros(2, 5, dtype=m.bool))
        return [str(x.message) for x in w]
    same_as_torch(fn)


@pytest.mark.parametrize("x", ["m.ones(4)", "m.tensor(1.)", "m.ones(3, 4, 2)"])
@pytest.mark.parametrize("lengths", [[4], [[4]], [4, 2, 1], [[4, 2, 1]]])
@pytest.mark.parametrize("batch_first", [True, False])
def test_pack_padded_sequence_argument_errors(x, lengths, batch_first):
    def fn(m):
        p = m.nn.utils.rnn.pack_padded_sequence(eval(x), m.tensor(lengths),
                                                batch_first=batch_first)
        return p.data, p.batch_sizes
    same_as_torch(fn)


@pytest.mark.parametrize("loss", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("shapes", [((8, 6), (2, 4)), ((8, 6), (8, 4)), ((8, 6), ()),
                                    ((1, 6), ()), ((1, 6), (1, 3)), ((8, 6), (7,)),
                                    ((8, 6, 3), (8, 4)), ((6,), (2,))])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_token_loss_target_shape_errors(loss, shapes, label_smoothing):
    # logits flattened to (B*T, V) with the (B, T) targets left unflattened
    inp, tgt = shapes

    def fn(m):
        kw = {"label_smoothing": label_smoothing} if loss == "cross_entropy" else {}
        return getattr(F(m), loss)(m.ones(*inp), m.zeros(tgt, dtype=m.long), **kw)
    same_as_torch(fn)


# ------------------------------------------------------------------ rotary embeddings

VIEW_AS_COMPLEX_INPUTS = {
    "contiguous": "A.view(4, 3, 2)",
    "odd_offset": "A.view(-1)[1:13].view(6, 2)",
    "odd_row_stride": "m.arange(15.).view(3, 5)[:, :2]",
    "odd_stride_size_1": "m.arange(15.).view(3, 5)[2:3, :2]",
    "odd_stride_size_1_odd_offset": "m.arange(15.).view(3, 5)[1:2, :2]",
    "last_stride_2": "A.view(2, 12)[:, ::2].reshape(2, 3, 2)",
    "transposed": "A.view(4, 3, 2).transpose(1, 2)",
    "expanded_pairs": "m.ones(2).expand(3, 2)",
    "expanded_last": "m.ones(3, 1).expand(3, 2)",
    "row_step": "m.arange(8.).view(4, 2)[::2]",
    "zero_dim": "m.tensor(1.)",
    "head_split": "A.view(2, 2, 6).transpose(0, 1)[..., :2]",
}


@pytest.mark.parametrize("name", list(VIEW_AS_COMPLEX_INPUTS))
def test_view_as_complex_layout_checks(name):
    # `torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))` on a sliced or
    # strided activation: torch's view needs the pairs adjacent in memory
    def fn(m):
        A = m.arange(24.).view(4, 6)
        return m.view_as_complex(eval(VIEW_AS_COMPLEX_INPUTS[name]))
    same_as_torch(fn)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_polar_gradient_follows_torchs_sgn_rule(dtype):
    # rotary tables from torch.polar(ones, freqs) and a negative or zero magnitude: torch's
    # polar_backward scales the magnitude's gradient by sgn(result)
    r0 = np.array([0.5, -0.7, 0.0, 2.0, 1.0], np.float32)
    t0 = np.array([0.3, 1.2, -0.4, 0.9, 0.0], np.float32)

    def fn(m):
        r = m.tensor(r0, dtype=getattr(m, dtype), requires_grad=True)
        t = m.tensor(t0, dtype=getattr(m, dtype), requires_grad=True)
        z = m.polar(r, t)
        loss = (m.view_as_real(z) * m.tensor([1., 2.], dtype=getattr(m, dtype))).sum() \
            + (z * z).real.sum()
        gr, gt = m.autograd.grad(loss, (r, t))
        return z, gr, gt
    same_as_torch(fn, atol=1e-6, rtol=1e-5)
