"""Sequence-model programs (RNN / LSTM / GRU and cells, packed sequences, attention and
transformers, embeddings, CTC) against real torch: same weights (through state_dict), same
data, same outputs, gradients and exceptions."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torchlike  # noqa: E402
from oracle import assert_close  # noqa: E402

R = np.random.default_rng(7)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def f64(*shape):
    return R.standard_normal(shape)


def _copy(tm, lm):
    sd = {k: torchlike.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    res = lm.load_state_dict(sd)
    assert not res.missing_keys and not res.unexpected_keys


def _pair(ctor):
    torch.manual_seed(0)
    tm, lm = ctor(torch.nn), ctor(torchlike.nn)
    _copy(tm, lm)
    return tm, lm


def _raises_same(fn):
    """Run ``fn(m)`` for torch and torchlike; both must raise the same class and message."""
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(Exception) as le:
        fn(torchlike)
    assert type(le.value).__name__ == type(te.value).__name__, (le.value, te.value)
    assert str(le.value) == str(te.value)


# ---------------------------------------------------------------- RNN argument checks

def _rnn_call(mode, *arrays):
    def fn(M):
        tm, lm = _pair(lambda nn: getattr(nn, mode)(4, 6))
        m = tm if M is torch else lm
        ts = [M.tensor(a) for a in arrays]
        if mode == "LSTM" and len(ts) == 3:
            return m(ts[0], (ts[1], ts[2]))
        return m(*ts)
    return fn


@pytest.mark.parametrize("mode,arrays", [
    ("LSTM", (f32(5, 3, 4), f32(2, 3, 6), f32(1, 3, 6))),      # hidden[0] size
    ("LSTM", (f32(5, 3, 4), f32(1, 3, 6), f32(2, 3, 6))),      # hidden[1] size
    ("LSTM", (f32(5, 3, 4), f32(1, 6), f32(1, 6))),            # batched input, 2-D states
    ("LSTM", (f32(5, 4), f32(1, 1, 6), f32(1, 1, 6))),         # unbatched input, 3-D states
    ("GRU", (f32(5, 3, 4), f32(1, 2, 6))),                     # hidden size
    ("GRU", (f32(5, 4), f32(1, 1, 6))),                        # unbatched input, 3-D hx
    ("GRU", (f32(5, 3, 4), f32(1, 6))),                        # batched input, 2-D hx
    ("RNN", (f32(5, 3, 4, 1),)),                               # 4-D input
    ("GRU", (f64(5, 3, 4),)),                                  # input dtype != weight dtype
    ("LSTM", (np.ones((5, 3, 4), np.int64),)),
    ("GRU", (f32(5, 3, 4), f64(1, 3, 6))),                     # hx dtype != weight dtype
    ("RNN", (f32(5, 3, 4), f64(1, 3, 6))),
], ids=["lstm_h0_size", "lstm_c0_size", "lstm_2d_states", "lstm_unbatched_3d_states",
        "gru_h_size", "gru_unbatched_3d_h", "gru_batched_2d_h", "rnn_4d", "gru_double_input",
        "lstm_int_input", "gru_double_h", "rnn_double_h"])
def test_rnn_bad_input_or_state_raises_like_torch(mode, arrays):
    _raises_same(_rnn_call(mode, *arrays))


@pytest.mark.parametrize("args", ["(4, 0)", "(0, 6)", "(4, 6, 0)", "(4, 6, bias=1)",
                                  "(4, 6, batch_first=None)", "(4.0, 6)",
                                  "(4, 6, proj_size=6)", "(4, 6, dropout=1.5)"])
def test_lstm_constructor_checks_in_torchs_order(args):
    _raises_same(lambda M: eval("M.nn.LSTM" + args))


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("shape", [(0, 3, 4), (0, 4)])
def test_rnn_empty_sequence_raises_like_torch(mode, shape):
    _raises_same(_rnn_call(mode, np.zeros(shape, np.float32)))


def test_gru_and_rnn_refuse_proj_size_keyword_even_zero():
    _raises_same(lambda M: M.nn.GRU(4, 6, proj_size=0))
    _raises_same(lambda M: M.nn.RNN(4, 6, proj_size=2))


def test_rnn_dropout_single_layer_warns_like_torch():
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        torchlike.nn.LSTM(4, 6, dropout=0.5)


# ---------------------------------------------------------------- cells

CELLS = ["RNNCell", "LSTMCell", "GRUCell"]


def _cell_call(mode, *arrays, bias=True):
    def fn(M):
        tm, lm = _pair(lambda nn: getattr(nn, mode)(4, 6, bias=bias))
        m = tm if M is torch else lm
        ts = [M.tensor(a) for a in arrays]
        if len(ts) == 1:
            return m(ts[0])
        return m(ts[0], (ts[1], ts[1]) if mode == "LSTMCell" else ts[1])
    return fn


@pytest.mark.parametrize("mode", CELLS)
@pytest.mark.parametrize("arrays,bias", [
    ((f32(2, 3, 4),), True),                  # 3-D input
    ((f32(3, 5),), True),                     # wrong input_size
    ((f32(3, 4), f32(3, 5)), True),           # wrong hidden_size
    ((f32(3, 4), f32(2, 6)), True),           # batch mismatch
    ((f32(3, 4), f32(1, 3, 6)), True),        # 3-D hidden
    ((f32(4), f32(1, 6)), True),              # unbatched input, batched hidden
    ((f64(3, 4),), True),                     # double input into float weights
    ((f64(3, 4),), False),
    ((f32(3, 4), f64(3, 6)), True),           # double hidden
], ids=["3d_input", "input_size", "hidden_size", "batch", "3d_hidden", "unbatched_vs_2d_h",
        "double_input", "double_input_nobias", "double_hidden"])
def test_rnn_cell_bad_input_raises_like_torch(mode, arrays, bias):
    _raises_same(_cell_call(mode, *arrays, bias=bias))


def test_rnn_cell_unknown_nonlinearity_raises_at_forward():
    _raises_same(lambda M: M.nn.RNNCell(4, 6, nonlinearity="gelu")(M.randn(3, 4)))


def test_lstm_cell_one_hidden_state_raises():
    _raises_same(lambda M: M.nn.LSTMCell(4, 6)(M.zeros(3, 4), (M.zeros(3, 6),)))


# ---------------------------------------------------------------- nn.utils.rnn

def test_pack_padded_sequence_lengths_count_must_match_batch():
    x = f32(4, 3, 2)
    _raises_same(lambda M: M.nn.utils.rnn.pack_padded_sequence(M.tensor(x), [4, 2]))


def test_pad_packed_sequence_total_length_too_short_raises():
    x = f32(4, 3, 2)
    _raises_same(lambda M: M.nn.utils.rnn.pad_packed_sequence(
        M.nn.utils.rnn.pack_padded_sequence(M.tensor(x), [4, 2, 1]), total_length=2))


def test_pad_sequence_trailing_mismatch_raises_and_size_one_broadcasts():
    a, b = f32(4, 3), f32(2, 2)
    _raises_same(lambda M: M.nn.utils.rnn.pad_sequence([M.tensor(a), M.tensor(b)]))
    c = f32(2, 1)
    ours = torchlike.nn.utils.rnn.pad_sequence([torchlike.tensor(a), torchlike.tensor(c)])
    theirs = torch.nn.utils.rnn.pad_sequence([torch.tensor(a), torch.tensor(c)])
    assert_close(ours, theirs)


# ---------------------------------------------------------------- MultiheadAttention

E, H, L, S, NB = 8, 2, 4, 5, 3


def _mha_both(ctor, call, inputs, grad=True, atol=1e-5, rtol=1e-4):
    """Run ``call(M, module, *tensors)`` on torch and torchlike; compare outputs and every
    gradient (NaN positions must agree)."""
    tm, lm = _pair(ctor)
    tm.eval()
    lm.eval()
    res = []
    for M, m in ((torch, tm), (torchlike, lm)):
        ts = [M.tensor(x).requires_grad_(grad) for x in inputs]
        out = call(M, m, *ts)
        res.append((out, ts, m))
    (tout, tts, tm), (lout, lts, lm) = res
    for i, (lo, to) in enumerate(zip(lout, tout)):
        if to is None:
            assert lo is None
            continue
        assert_close(lo, to, atol, rtol, f"output {i}")
    if not grad:
        return
    c = R.standard_normal(tuple(tout[0].shape)).astype(np.float32)
    (torch.nan_to_num(tout[0]) * torch.tensor(c)).sum().backward()
    (torchlike.nan_to_num(lout[0]) * torchlike.tensor(c)).sum().backward()
    for (k, tp), (_, lp) in zip(tm.named_parameters(), lm.named_parameters()):
        assert_close(lp.grad, tp.grad, atol * 10, rtol * 10, f"grad {k}")
    for lt, tt in zip(lts, tts):
        assert_close(lt.grad, tt.grad, atol * 10, rtol * 10, "input grad")


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_fully_masked_key_padding_row_matches_torch(need_weights):
    # need_weights=False runs scaled_dot_product_attention in torch: a batch entry whose keys
    # are all padding attends to nothing (0 before out_proj), not NaN; need_weights=True: NaN
    kpm = np.zeros((NB, S), bool)
    kpm[1] = True
    kpm[0, 3:] = True

    def call(M, m, q, kv):
        return m(q, kv, kv, key_padding_mask=M.tensor(kpm), need_weights=need_weights)
    _mha_both(lambda nn: nn.MultiheadAttention(E, H), call, [f32(L, NB, E), f32(S, NB, E)])


def test_mha_fully_masked_attn_mask_row_matches_torch():
    mask = np.zeros((L, S), bool)
    mask[2] = True

    def call(M, m, q, kv):
        return m(q, kv, kv, attn_mask=M.tensor(mask), need_weights=False)
    _mha_both(lambda nn: nn.MultiheadAttention(E, H, batch_first=True), call,
              [f32(NB, L, E), f32(NB, S, E)])


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_fast_path_fully_masked_row_is_nan_like_torch(need_weights):
    # eval + no_grad + batch_first self-attention: torch's _native_multi_head_attention
    kpm = np.zeros((NB, L), bool)
    kpm[1] = True

    def call(M, m, q):
        with M.no_grad():
            return m(q, q, q, key_padding_mask=M.tensor(kpm), need_weights=need_weights)
    _mha_both(lambda nn: nn.MultiheadAttention(E, H, batch_first=True), call, [f32(NB, L, E)],
              grad=False)


@pytest.mark.parametrize("need_weights", [True, False])
def test_mha_is_causal_hint_replaces_mask_like_torch(need_weights):
    # torch: is_causal with no key_padding_mask and need_weights=False drops attn_mask and runs
    # a causal scaled_dot_product_attention; with need_weights=True the mask is used
    mask = f32(L, L)

    def call(M, m, q):
        return m(q, q, q, attn_mask=M.tensor(mask), is_causal=True, need_weights=need_weights)
    _mha_both(lambda nn: nn.MultiheadAttention(E, H), call, [f32(L, NB, E)])


def test_mha_fast_path_ignores_is_causal_like_torch():
    def call(M, m, q):
        with M.no_grad():
            return m(q, q, q, is_causal=True, need_weights=False)
    _mha_both(lambda nn: nn.MultiheadAttention(E, H, batch_first=True), call, [f32(NB, L, E)],
              grad=False)


def _mha_raise(call, *arrays, **kw):
    def fn(M):
        tm, lm = _pair(lambda nn: nn.MultiheadAttention(E, H, **kw))
        return call(M, tm if M is torch else lm, *[M.tensor(a) for a in arrays])
    _raises_same(fn)


@pytest.mark.parametrize("case", [
    "embed_dim", "mask2d", "mask3d", "kv_len", "batch", "kpm_len", "kpm_batch", "int_mask",
    "query4d", "key2d", "kpm3d", "mask4d", "unbatched_mask3d", "kdim"])
def test_mha_bad_input_raises_like_torch(case):
    q, kv = f32(L, NB, E), f32(S, NB, E)
    if case == "embed_dim":
        _mha_raise(lambda M, m, q: m(q, q, q), f32(L, NB, E + 1))
    elif case == "mask2d":
        _mha_raise(lambda M, m, q: m(q, q, q, attn_mask=M.zeros(L + 1, L)), q)
    elif case == "mask3d":
        _mha_raise(lambda M, m, q: m(q, q, q, attn_mask=M.zeros(NB, L, L)), q)
    elif case == "kv_len":
        _mha_raise(lambda M, m, q, k, v: m(q, k, v), q, kv, f32(S + 1, NB, E))
    elif case == "batch":
        _mha_raise(lambda M, m, q, k: m(q, k, k), q, f32(S, NB + 1, E))
    elif case == "kpm_len":
        _mha_raise(lambda M, m, q: m(q, q, q, key_padding_mask=M.zeros(NB, L + 1,
                                                                       dtype=M.bool)), q)
    elif case == "kpm_batch":
        _mha_raise(lambda M, m, q: m(q, q, q, key_padding_mask=M.zeros(NB + 1, L,
                                                                       dtype=M.bool)), q)
    elif case == "int_mask":
        _mha_raise(lambda M, m, q: m(q, q, q, attn_mask=M.zeros(L, L, dtype=M.int64)), q)
    elif case == "query4d":
        _mha_raise(lambda M, m, q: m(q, q, q), f32(1, L, NB, E))
    elif case == "key2d":
        _mha_raise(lambda M, m, q, k: m(q, k, k), q, f32(S, E))
    elif case == "kpm3d":
        _mha_raise(lambda M, m, q: m(q, q, q, key_padding_mask=M.zeros(1, NB, L,
                                                                       dtype=M.bool)), q)
    elif case == "mask4d":
        _mha_raise(lambda M, m, q: m(q, q, q, attn_mask=M.zeros(1, NB * H, L, L)), q)
    elif case == "unbatched_mask3d":
        _mha_raise(lambda M, m, q: m(q, q, q, attn_mask=M.zeros(H + 1, L, L)), f32(L, E))
    elif case == "kdim":
        _mha_raise(lambda M, m, q, k, v: m(q, k, v), q, f32(S, NB, 5), f32(S, NB, 7),
                   kdim=6, vdim=7)


def test_mha_mismatched_mask_types_warn_like_torch():
    m = torchlike.nn.MultiheadAttention(E, H)
    q = torchlike.randn(L, NB, E)
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask"):
        m(q, q, q, attn_mask=torchlike.zeros(L, L),
          key_padding_mask=torchlike.zeros(NB, L, dtype=torchlike.bool))


# ---------------------------------------------------------------- Transformer

FF = 16


def _no_grad_call(**kw):
    def call(M, m, *xs):
        with M.no_grad():
            return (m(*xs, **{k: (M.tensor(v) if isinstance(v, np.ndarray) else v)
                              for k, v in kw.items()}),)
    return call


@pytest.mark.parametrize("float_mask", [False, True])
def test_encoder_eval_padding_mask_nested_path_matches_torch(float_mask):
    # eval + no_grad with a left-aligned padding mask: torch runs nested tensors and pads the
    # result with 0 (a float -inf/0 mask too); an all-padding sequence gives 0 rows, not NaN
    kpm = np.zeros((3, 5), bool)
    kpm[0, 3:] = True
    kpm[1] = True
    mask = np.where(kpm, -np.inf, 0).astype(np.float32) if float_mask else kpm
    ctor = lambda nn: nn.TransformerEncoder(  # noqa: E731
        nn.TransformerEncoderLayer(E, H, FF, dropout=0.0, batch_first=True), 2)
    _mha_both(ctor, _no_grad_call(src_key_padding_mask=mask), [f32(3, 5, E)], grad=False)


@pytest.mark.parametrize("act", ["relu", "tanh"])
@pytest.mark.parametrize("float_mask", [False, True])
def test_encoder_layer_eval_fully_padded_row_matches_torch(act, float_mask):
    # torch's fused layer (relu/gelu) gives NaN for an all-padding sequence; with another
    # activation it runs the slow path, whose attention gives 0 there
    kpm = np.zeros((3, 5), bool)
    kpm[1] = True
    mask = np.where(kpm, -np.inf, 0).astype(np.float32) if float_mask else kpm

    def ctor(nn):
        a = nn.functional.relu if act == "relu" else nn.functional.tanh
        return nn.TransformerEncoderLayer(E, H, FF, dropout=0.0, batch_first=True, activation=a)
    _mha_both(ctor, _no_grad_call(src_key_padding_mask=mask), [f32(3, 5, E)], grad=False)


def test_encoder_layer_fast_path_gelu_tanh_module_runs_exact_gelu_like_torch():
    ctor = lambda nn: nn.TransformerEncoderLayer(  # noqa: E731
        E, H, FF, dropout=0.0, batch_first=True, activation=nn.GELU(approximate="tanh"))
    x = f32(3, 5, E) * 3
    _mha_both(ctor, _no_grad_call(), [x], grad=False, atol=1e-6, rtol=1e-6)


def test_transformer_src_tgt_mismatch_raises_like_torch():
    def fn_batch(M):
        return M.nn.Transformer(E, H, 1, 1, FF)(M.zeros(5, 3, E), M.zeros(4, 2, E))

    def fn_dim(M):
        return M.nn.Transformer(E, H, 1, 1, FF, batch_first=True)(M.zeros(3, 5, E),
                                                                    M.zeros(3, 4, E + 2))
    _raises_same(fn_batch)
    _raises_same(fn_dim)


def test_encoder_mismatched_mask_types_warn_with_torchs_names():
    enc = torchlike.nn.TransformerEncoder(
        torchlike.nn.TransformerEncoderLayer(E, H, FF, dropout=0.0), 1)
    with pytest.warns(UserWarning, match="mismatched src_key_padding_mask and mask"):
        enc(torchlike.zeros(5, 3, E), mask=torchlike.zeros(5, 5),
            src_key_padding_mask=torchlike.zeros(3, 5, dtype=torchlike.bool))


# ---------------------------------------------------------------- scaled_dot_product_attention

def _sdpa_both(*arrays, **kw):
    outs, grads = [], []
    for M in (torch, torchlike):
        ts = [M.tensor(a).requires_grad_(True) for a in arrays]
        mask = kw.get("attn_mask")
        kk = dict(kw, attn_mask=None if mask is None else M.tensor(mask))
        o = M.nn.functional.scaled_dot_product_attention(*ts, **kk)
        o.sum().backward()
        outs.append(o)
        grads.append([t.grad for t in ts])
    assert_close(outs[1], outs[0], 1e-5, 1e-4)
    for lg, tg in zip(grads[1], grads[0]):
        assert_close(lg, tg, 1e-4, 1e-3)


@pytest.mark.parametrize("float_mask", [False, True])
def test_sdpa_mask_with_is_causal_applies_both_like_torch(float_mask):
    # torch 2.13's CPU flash kernel takes an attn_mask together with is_causal=True
    mask = f32(4, 6) if float_mask else (R.random((4, 6)) < 0.6)
    if not float_mask:
        mask[:, 0] = True
    _sdpa_both(f32(2, 3, 4, 8), f32(2, 3, 6, 8), f32(2, 3, 6, 8), attn_mask=mask,
               is_causal=True)


def test_sdpa_mask_with_is_causal_on_math_path_raises_like_torch():
    # value head dim != query head dim: math backend, which refuses the pair
    q, k, v = f32(2, 3, 4, 8), f32(2, 3, 5, 8), f32(2, 3, 5, 6)
    _raises_same(lambda M: M.nn.functional.scaled_dot_product_attention(
        M.tensor(q), M.tensor(k), M.tensor(v), attn_mask=M.zeros(4, 5), is_causal=True))


@pytest.mark.parametrize("case", ["qkv_dtype", "int_mask", "double_mask", "heads", "head_dim"])
def test_sdpa_bad_input_raises_like_torch(case):
    q = f32(2, 3, 4, 8)

    def fn(M):
        F = M.nn.functional
        t = M.tensor(q)
        if case == "qkv_dtype":
            return F.scaled_dot_product_attention(t.double(), t, t)
        if case == "int_mask":
            return F.scaled_dot_product_attention(t, t, t, attn_mask=M.zeros(4, 4,
                                                                         dtype=M.int64))
        if case == "double_mask":
            return F.scaled_dot_product_attention(t, t, t, attn_mask=M.zeros(4, 4,
                                                                         dtype=M.float64))
        if case == "heads":
            k = M.zeros(2, 2, 4, 8)
            return F.scaled_dot_product_attention(M.zeros(2, 6, 4, 8), k, k)
        k = M.zeros(2, 3, 5, 9)
        return F.scaled_dot_product_attention(t, k, k)
    _raises_same(fn)


# ---------------------------------------------------------------- Embedding / EmbeddingBag

IDX = np.array([[1, 2, 4, 5], [4, 3, 2, 0], [0, 0, 9, 1]], np.int64)


@pytest.mark.parametrize("padding_idx", [None, 0, 2])
@pytest.mark.parametrize("max_norm", [None, 1.0])
def test_embedding_scale_grad_by_freq_matches_torch(padding_idx, max_norm):
    tm, lm = _pair(lambda nn: nn.Embedding(10, 3, padding_idx=padding_idx, max_norm=max_norm,
                                           scale_grad_by_freq=True))
    c = f32(3, 4, 3)
    to, lo = tm(torch.tensor(IDX)), lm(torchlike.tensor(IDX))
    assert_close(lo, to)
    (to * torch.tensor(c)).sum().backward()
    (lo * torchlike.tensor(c)).sum().backward()
    assert_close(lm.weight.grad, tm.weight.grad)


def test_embedding_float_indices_message_names_legacy_type():
    _raises_same(lambda M: M.nn.functional.embedding(M.zeros(3), M.zeros(4, 2)))


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_scale_grad_by_freq_divides_by_index_frequency(mode):
    # the documented rule (F.embedding's): each index's gradient divided by its count in the
    # input. (torch's CPU embedding_bag scales some rows by another index's count; the oracle
    # here is torch's F.embedding followed by the per-bag sum/mean.)
    inp = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 0], np.int64)
    offs = np.array([0, 3, 3, 7], np.int64)
    seg = np.searchsorted(offs, np.arange(len(inp)), side="right") - 1
    w = f32(10, 3)
    c = f32(4, 3)
    tw = torch.tensor(w, requires_grad=True)
    rows = torch.nn.functional.embedding(torch.tensor(inp), tw, scale_grad_by_freq=True)
    bags = torch.zeros(4, 3).index_add(0, torch.tensor(seg), rows)
    if mode == "mean":
        cnt = torch.tensor(np.maximum(np.bincount(seg, minlength=4), 1), dtype=torch.float32)
        bags = bags / cnt[:, None]
    (bags * torch.tensor(c)).sum().backward()
    lw = torchlike.tensor(w, requires_grad=True)
    lo = torchlike.nn.functional.embedding_bag(torchlike.tensor(inp), lw, torchlike.tensor(offs),
                                               mode=mode, scale_grad_by_freq=True)
    assert_close(lo, bags)
    (lo * torchlike.tensor(c)).sum().backward()
    assert_close(lw.grad, tw.grad)


@pytest.mark.parametrize("case", ["max_scale_grad", "bad_mode", "offsets_not_0", "offsets_past_end",
                                  "offsets_decreasing", "psw_shape", "input_3d", "float_offsets",
                                  "weight_1d"])
def test_embedding_bag_bad_arguments_raise_like_torch(case):
    inp = np.array([1, 2, 4, 5, 4, 3, 2, 9, 0, 0], np.int64)

    def fn(M):
        F = M.nn.functional
        i, w, o = M.tensor(inp), M.zeros(10, 3), M.tensor([0, 3, 3, 7])
        if case == "max_scale_grad":
            return F.embedding_bag(i, w, o, mode="max", scale_grad_by_freq=True)
        if case == "bad_mode":
            return F.embedding_bag(i, w, o, mode="min")
        if case == "offsets_not_0":
            return F.embedding_bag(i, w, o + 1)
        if case == "offsets_past_end":
            return F.embedding_bag(i, w, M.tensor([0, 5, 11]))
        if case == "offsets_decreasing":
            return F.embedding_bag(i, w, M.tensor([0, 5, 3]))
        if case == "psw_shape":
            return F.embedding_bag(i, w, o, mode="sum", per_sample_weights=M.ones(3))
        if case == "input_3d":
            return F.embedding_bag(i.reshape(1, 2, 5), w)
        if case == "float_offsets":
            return F.embedding_bag(i, w, o.float())
        return F.embedding_bag(i, M.zeros(10), o)
    _raises_same(fn)


# ---------------------------------------------------------------- CTC

def _log_probs(T, N, C):
    x = f32(T, N, C)
    return (x - np.log(np.exp(x).sum(-1, keepdims=True))).astype(np.float32)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_impossible_alignment_gradient_matches_torch(reduction, zero_infinity):
    # a sample whose targets cannot fit its input length: loss inf and, without
    # zero_infinity, NaN gradients on its valid time steps (torch's exp(-inf + inf))
    T, N, C = 12, 3, 6
    x = f32(T, N, C)
    tg = np.array([[2, 2, 2, 3, 3]] * N, np.int64)
    il, tl = np.array([6, 9, 12]), np.array([5, 5, 5])
    res = []
    for M in (torch, torchlike):
        xx = M.tensor(x, requires_grad=True)
        loss = M.nn.functional.ctc_loss(xx.log_softmax(-1), M.tensor(tg), M.tensor(il),
                                        M.tensor(tl), reduction=reduction,
                                        zero_infinity=zero_infinity)
        (loss.sum() if reduction == "none" else loss).backward()
        res.append((loss, xx.grad))
    assert_close(res[1][0], res[0][0], 1e-5, 1e-4)
    assert_close(res[1][1], res[0][1], 1e-5, 1e-4)


@pytest.mark.parametrize("case", ["targets_too_short", "concat_total", "targets_batch",
                                  "neg_target_length", "neg_input_length", "both"])
def test_ctc_bad_lengths_raise_like_torch(case):
    lp = _log_probs(12, 3, 6)
    tg = R.integers(1, 6, (3, 5)).astype(np.int64)
    il, tl = (12, 10, 8), (5, 3, 4)
    t = tg
    if case == "targets_too_short":
        tl = (6, 3, 4)
    elif case == "concat_total":
        t = tg.reshape(-1)[:9]
    elif case == "targets_batch":
        t = tg[:2]
    elif case == "neg_target_length":
        tl = (5, -1, 4)
    elif case == "neg_input_length":
        il = (12, -1, 8)
    else:
        il, tl = (13, 10, 8), (6, 3, 4)
    _raises_same(lambda M: M.nn.functional.ctc_loss(M.tensor(lp), M.tensor(t), il, tl))


# ---------------------------------------------------------------- PackedSequence / encoder warnings

@pytest.mark.parametrize("method", ["double", "float", "half", "long", "int", "short", "char",
                                    "byte", "cpu"])
def test_packed_sequence_conversion_methods_like_torch(method):
    seqs = [np.abs(f32(n, 2)) * 3 for n in (3, 1, 2)]      # (negative floats to uint8 vary)
    outs = []
    for M in (torch, torchlike):
        p = M.nn.utils.rnn.pack_sequence([M.tensor(s) for s in seqs], enforce_sorted=False)
        q = getattr(p, method)()
        assert type(q).__name__ == "PackedSequence"
        outs.append(q)
    assert str(outs[1].data.dtype) == str(outs[0].data.dtype)
    assert_close(outs[1].data, outs[0].data)
    assert_close(outs[1].sorted_indices, outs[0].sorted_indices)
    assert_close(outs[1].batch_sizes, outs[0].batch_sizes)


@pytest.mark.parametrize("kw", [{}, {"batch_first": True, "norm_first": True},
                                {"batch_first": True, "nhead": 1},
                                {"batch_first": True, "activation": "tanh"},
                                {"batch_first": True}])
def test_transformer_encoder_nested_tensor_warning_like_torch(kw):
    import warnings

    def messages(M):
        k = dict(kw)
        nhead = k.pop("nhead", 2)
        if k.get("activation") == "tanh":
            k["activation"] = M.tanh
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            enc = M.nn.TransformerEncoder(M.nn.TransformerEncoderLayer(8, nhead, 16, **k), 2)
        return [str(x.message) for x in w if "nested" in str(x.message)], enc.use_nested_tensor
    assert messages(torchlike) == messages(torch)


def test_embedding_bag_from_pretrained_like_torch():
    w = f32(10, 3)
    inp, offs = np.array([1, 2, 3, 2, 5]), np.array([0, 2])
    res = []
    for M in (torch, torchlike):
        bag = M.nn.EmbeddingBag.from_pretrained(M.tensor(w), freeze=False, mode="max",
                                                padding_idx=2)
        out = bag(M.tensor(inp), M.tensor(offs))
        out.sum().backward()
        res.append((out, bag.weight.grad, repr(bag),
                    M.nn.EmbeddingBag.from_pretrained(M.tensor(w)).weight.requires_grad))
    assert_close(res[1][0], res[0][0])
    assert_close(res[1][1], res[0][1])
    assert res[1][2:] == res[0][2:]


def test_embedding_bag_weight_shape_checked():
    w = f32(10, 3)
    _raises_same(lambda M: M.nn.EmbeddingBag(10, 4, _weight=M.tensor(w)))


@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence_is_contiguous_like_torch(batch_first):
    # code calls .view on the padded batch; torch's is contiguous in both layouts
    seqs = [f32(3, 2), f32(1, 2), f32(2, 2)]
    ours = torchlike.nn.utils.rnn.pad_sequence([torchlike.tensor(s) for s in seqs],
                                               batch_first=batch_first)
    theirs = torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs],
                                             batch_first=batch_first)
    assert ours.is_contiguous() and tuple(ours.stride()) == theirs.stride()
    assert_close(ours.view(-1, 2), theirs.view(-1, 2))


@pytest.mark.parametrize("need_weights", [True, False])
@pytest.mark.parametrize("masks", ["kpm64", "attn64", "attn16", "bool_and_kpm64"])
def test_mha_mask_of_another_float_dtype_raises_like_torch(need_weights, masks):
    def fn(M):
        tm, lm = _pair(lambda nn: nn.MultiheadAttention(E, H))
        m = tm if M is torch else lm
        q = M.tensor(f32(L, NB, E))
        kw = {"kpm64": dict(key_padding_mask=M.zeros(NB, L, dtype=M.float64)),
              "attn64": dict(attn_mask=M.zeros(L, L, dtype=M.float64)),
              "attn16": dict(attn_mask=M.zeros(L, L, dtype=M.float16)),
              "bool_and_kpm64": dict(attn_mask=M.zeros(L, L, dtype=M.bool),
                                     key_padding_mask=M.zeros(NB, L, dtype=M.float64))}[masks]
        return m(q, q, q, need_weights=need_weights, **kw)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _raises_same(fn)


@pytest.mark.parametrize("kw", [{}, {"bias": False}, {"kdim": 4, "vdim": 4}])
def test_mha_input_dtype_other_than_weights_raises_like_torch(kw):
    def fn(M):
        m = M.nn.MultiheadAttention(E, H, **kw)
        q = M.randn(L, NB, E, dtype=M.float64)
        kv = M.randn(L, NB, kw.get("kdim", E), dtype=M.float64)
        return m(q, kv, kv)
    _raises_same(fn)


def test_encoder_layer_eval_with_mha_subclass_or_patched_forward_runs():
    # the layer's fused-path hint goes only into MultiheadAttention's own forward: a subclass
    # with torch's forward signature, or an instance-patched forward, still runs
    class MyMHA(torchlike.nn.MultiheadAttention):
        def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                    attn_mask=None, average_attn_weights=True, is_causal=False):
            return super().forward(query, key, value, key_padding_mask=key_padding_mask,
                                   need_weights=need_weights, attn_mask=attn_mask,
                                   average_attn_weights=average_attn_weights,
                                   is_causal=is_causal)
    layer = torchlike.nn.TransformerEncoderLayer(E, H, FF, batch_first=True).eval()
    layer.self_attn = MyMHA(E, H, batch_first=True)
    x = torchlike.randn(2, 3, E)
    with torchlike.no_grad():
        assert layer(x).shape == (2, 3, E)
    layer2 = torchlike.nn.TransformerEncoderLayer(E, H, FF, batch_first=True).eval()
    orig = layer2.self_attn.forward

    def patched(q, k, v, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        return orig(q, k, v, key_padding_mask=key_padding_mask, need_weights=True,
                    attn_mask=attn_mask, average_attn_weights=False, is_causal=is_causal)
    layer2.self_attn.forward = patched
    with torchlike.no_grad():
        assert layer2(x).shape == (2, 3, E)


@pytest.mark.parametrize("ctor", ["CrossEntropyLoss(size_average=False)", "NLLLoss(reduce=False)",
                                  "MSELoss(size_average=True, reduce=True)"])
def test_loss_legacy_size_average_reduce_warns_like_torch(ctor):
    import warnings

    def run(M):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m = eval("M.nn." + ctor)
        return m.reduction, [str(x.message) for x in w if "size_average" in str(x.message)]
    assert run(torchlike) == run(torch)


def test_triplet_margin_with_distance_loss_default_distance_is_a_module():
    ours, theirs = torchlike.nn.TripletMarginWithDistanceLoss(), \
        torch.nn.TripletMarginWithDistanceLoss()
    assert repr(ours) == repr(theirs)
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    a, p, n = f32(4, 5), f32(4, 5), f32(4, 5)
    assert_close(ours(*map(torchlike.tensor, (a, p, n))), theirs(*map(torch.tensor, (a, p, n))))


def test_hardtanh_bad_range_message_like_torch():
    _raises_same(lambda M: M.nn.Hardtanh(1.0, -1.0))


def test_rnn_base_unknown_mode_raises_like_torch():
    _raises_same(lambda M: M.nn.RNNBase("FOO", 3, 4))
