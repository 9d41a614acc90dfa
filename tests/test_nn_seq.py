"""Recurrent layers, MultiheadAttention and Transformer layers vs torch (same weights)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchlike
from nn_util import compare_module

R = np.random.default_rng(99)


def f32(*shape, scale=1.0):
    return (R.standard_normal(shape) * scale).astype(np.float32)


def lib_of(nn):
    return torch if nn is torch.nn else torchlike


RNNS = [
    ("RNN", lambda nn: nn.RNN(3, 4), (f32(5, 2, 3),)),
    ("RNN_relu_2l", lambda nn: nn.RNN(3, 4, num_layers=2, nonlinearity="relu"),
     (f32(5, 2, 3),)),
    ("RNN_h0", lambda nn: nn.RNN(3, 4), (f32(5, 2, 3), f32(1, 2, 4))),
    ("RNN_unbatched", lambda nn: nn.RNN(3, 4, bidirectional=True), (f32(5, 3),)),
    ("LSTM", lambda nn: nn.LSTM(3, 4), (f32(6, 2, 3),)),
    ("LSTM_2l_bi_bf", lambda nn: nn.LSTM(3, 5, num_layers=2, bidirectional=True,
                                         batch_first=True), (f32(2, 6, 3),)),
    ("LSTM_nobias", lambda nn: nn.LSTM(3, 4, bias=False), (f32(4, 2, 3),)),
    ("GRU", lambda nn: nn.GRU(3, 4), (f32(6, 2, 3),)),
    ("GRU_2l_bi", lambda nn: nn.GRU(3, 4, num_layers=2, bidirectional=True), (f32(4, 3, 3),)),
    ("GRU_h0_bf", lambda nn: nn.GRU(3, 4, batch_first=True, num_layers=2),
     (f32(2, 5, 3), f32(2, 2, 4))),
    ("GRU_unbatched", lambda nn: nn.GRU(3, 4), (f32(5, 3),)),
]


@pytest.mark.parametrize("name,ctor,inputs", RNNS, ids=[r[0] for r in RNNS])
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_recurrent(name, ctor, inputs, train):
    compare_module(ctor, inputs, train=train, atol=1e-5, rtol=1e-4)


def test_lstm_initial_state():
    h0, c0 = f32(2, 3, 4), f32(2, 3, 4)
    compare_module(lambda nn: nn.LSTM(2, 4, num_layers=2), (f32(5, 3, 2), h0, c0),
                   call=lambda m, x, h, c: m(x, (h, c)), atol=1e-5, rtol=1e-4)


CELLS = [
    ("RNNCell", lambda nn: nn.RNNCell(3, 4), (f32(2, 3), f32(2, 4))),
    ("RNNCell_relu", lambda nn: nn.RNNCell(3, 4, nonlinearity="relu"), (f32(2, 3),)),
    ("GRUCell", lambda nn: nn.GRUCell(3, 4), (f32(2, 3), f32(2, 4))),
    ("GRUCell_unbatched", lambda nn: nn.GRUCell(3, 4, bias=False), (f32(3),)),
    ("LSTMCell", lambda nn: nn.LSTMCell(3, 4), (f32(2, 3),)),
]


@pytest.mark.parametrize("name,ctor,inputs", CELLS, ids=[c[0] for c in CELLS])
def test_cells(name, ctor, inputs):
    compare_module(ctor, inputs, atol=1e-5, rtol=1e-4)


def test_lstm_cell_state():
    compare_module(lambda nn: nn.LSTMCell(3, 4), (f32(2, 3), f32(2, 4), f32(2, 4)),
                   call=lambda m, x, h, c: m(x, (h, c)), atol=1e-5, rtol=1e-4)


def test_rnn_names_repr_and_init():
    for ctor in (lambda nn: nn.LSTM(3, 4, 2, bidirectional=True, batch_first=True,
                                    dropout=0.5),
                 lambda nn: nn.GRU(3, 4, bias=False), lambda nn: nn.RNN(2, 3, 1, "relu"),
                 lambda nn: nn.GRUCell(2, 3, bias=False), lambda nn: nn.RNNCell(2, 3,
                                                                                 nonlinearity="relu")):
        t, l = ctor(torch.nn), ctor(torchlike.nn)
        assert repr(l) == repr(t)
        assert [n for n, _ in l.named_parameters()] == [n for n, _ in t.named_parameters()]
        for (n, p), (_, q) in zip(l.named_parameters(), t.named_parameters()):
            assert tuple(p.shape) == tuple(q.shape)
            bound = 1 / np.sqrt(t.hidden_size)
            a = np.asarray(p.detach())
            assert np.abs(a).max() <= bound
            if a.size >= 20:
                assert np.abs(a).max() > 0.5 * bound


def test_rnn_dropout_between_layers_train_only():
    torchlike.manual_seed(0)
    m = torchlike.nn.GRU(3, 8, num_layers=2, dropout=0.5)
    x = torchlike.randn(4, 2, 3)
    m.eval()
    a = m(x)[0].tolist()
    assert m(x)[0].tolist() == a
    m.train()
    b = m(x)[0]
    assert b.tolist() != a
    b.sum().backward()
    assert m.weight_ih_l0.grad is not None


MHA = [
    ("MHA", lambda nn: nn.MultiheadAttention(8, 2), (f32(5, 3, 8), f32(6, 3, 8), f32(6, 3, 8)),
     None),
    ("MHA_bf", lambda nn: nn.MultiheadAttention(8, 4, batch_first=True),
     (f32(3, 5, 8), f32(3, 6, 8), f32(3, 6, 8)), None),
    ("MHA_kdim", lambda nn: nn.MultiheadAttention(8, 2, kdim=3, vdim=5),
     (f32(5, 2, 8), f32(4, 2, 3), f32(4, 2, 5)), None),
    ("MHA_nobias", lambda nn: nn.MultiheadAttention(6, 3, bias=False),
     (f32(4, 2, 6), f32(4, 2, 6), f32(4, 2, 6)), None),
    ("MHA_bias_kv", lambda nn: nn.MultiheadAttention(6, 3, add_bias_kv=True),
     (f32(4, 2, 6), f32(4, 2, 6), f32(4, 2, 6)), None),
    ("MHA_zero_attn", lambda nn: nn.MultiheadAttention(6, 3, add_zero_attn=True),
     (f32(4, 2, 6), f32(4, 2, 6), f32(4, 2, 6)), None),
    ("MHA_unbatched", lambda nn: nn.MultiheadAttention(6, 2),
     (f32(4, 6), f32(5, 6), f32(5, 6)), None),
    ("MHA_masks", lambda nn: nn.MultiheadAttention(8, 2),
     (f32(5, 3, 8), f32(6, 3, 8), f32(6, 3, 8)),
     dict(attn_mask=np.triu(np.ones((5, 6), bool), 2),
          key_padding_mask=np.array([[0, 0, 0, 0, 1, 1], [0] * 6, [0, 0, 0, 0, 0, 1]], bool))),
    ("MHA_floatmask_perhead", lambda nn: nn.MultiheadAttention(8, 2),
     (f32(5, 3, 8), f32(6, 3, 8), f32(6, 3, 8)),
     dict(attn_mask=f32(6, 5, 6), average_attn_weights=False)),
    ("MHA_noweights", lambda nn: nn.MultiheadAttention(8, 2),
     (f32(5, 3, 8), f32(6, 3, 8), f32(6, 3, 8)), dict(need_weights=False)),
]


@pytest.mark.parametrize("name,ctor,inputs,kw", MHA, ids=[m[0] for m in MHA])
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_multihead_attention(name, ctor, inputs, kw, train):
    kw = kw or {}

    def call(m, q, k, v):
        lib = torch if isinstance(m, torch.nn.Module) else torchlike
        kk = {a: (lib.tensor(b) if isinstance(b, np.ndarray) else b) for a, b in kw.items()}
        return m(q, k, v, **kk)

    compare_module(ctor, inputs, train=train, call=call, atol=1e-5, rtol=1e-4)


def test_mha_self_attention_same_tensor():
    x = f32(4, 2, 6)
    compare_module(lambda nn: nn.MultiheadAttention(6, 2), (x,),
                   call=lambda m, x: m(x, x, x), atol=1e-5, rtol=1e-4)


TRANSFORMERS = [
    ("EncoderLayer", lambda nn: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
     (f32(5, 3, 8),)),
    ("EncoderLayer_bf_normfirst_gelu", lambda nn: nn.TransformerEncoderLayer(
        8, 2, 16, dropout=0.0, batch_first=True, norm_first=True, activation="gelu"),
     (f32(3, 5, 8),)),
    ("Encoder", lambda nn: nn.TransformerEncoder(nn.TransformerEncoderLayer(
        8, 4, 16, dropout=0.0), 2, norm=nn.LayerNorm(8), enable_nested_tensor=False),
     (f32(5, 3, 8),)),
    ("DecoderLayer", lambda nn: nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0),
     (f32(4, 3, 8), f32(5, 3, 8))),
    ("Decoder_normfirst", lambda nn: nn.TransformerDecoder(nn.TransformerDecoderLayer(
        8, 2, 16, dropout=0.0, norm_first=True), 2), (f32(4, 3, 8), f32(5, 3, 8))),
    ("Transformer", lambda nn: nn.Transformer(8, 2, 1, 1, 16, dropout=0.0),
     (f32(5, 2, 8), f32(4, 2, 8))),
]


@pytest.mark.parametrize("name,ctor,inputs", TRANSFORMERS, ids=[t[0] for t in TRANSFORMERS])
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_transformer(name, ctor, inputs, train):
    compare_module(ctor, inputs, train=train, atol=2e-5, rtol=1e-4)


def test_transformer_encoder_causal_mask():
    mask_t = torch.nn.Transformer.generate_square_subsequent_mask(5)
    mask_l = torchlike.nn.Transformer.generate_square_subsequent_mask(5)
    np.testing.assert_array_equal(np.asarray(mask_l), mask_t.numpy())

    def call(m, x):
        lib = torch if isinstance(m, torch.nn.Module) else torchlike
        mk = lib.nn.Transformer.generate_square_subsequent_mask(5)
        pad = lib.tensor(np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], bool))
        return m(x, src_mask=mk, src_key_padding_mask=pad)
    compare_module(lambda nn: nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), (f32(5, 2, 8),),
                   call=call, atol=2e-5, rtol=1e-4)


def test_transformer_structure():
    ctor = lambda nn: nn.Transformer(8, 2, 2, 1, 16)  # noqa: E731
    t, l = ctor(torch.nn), ctor(torchlike.nn)
    assert repr(l) == repr(t)
    assert list(l.state_dict()) == list(t.state_dict())


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("left_aligned", [True, False])
def test_transformer_encoder_padding_fast_path(grad, left_aligned):
    """torch's eval fast path (nested tensors) returns zeros at padded positions; so do we."""
    x = f32(2, 5, 8)
    pad = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], bool)
    if not left_aligned:
        pad = np.array([[0, 1, 0, 0, 1], [0, 0, 0, 0, 0]], bool)

    def call(m, x):
        lib = torch if isinstance(m, torch.nn.Module) else torchlike
        with lib.set_grad_enabled(grad):
            return m(x, src_key_padding_mask=lib.tensor(pad))

    compare_module(lambda nn: nn.TransformerEncoder(
        nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2, norm=nn.LayerNorm(8)),
        (x,), train=False, call=call, atol=2e-5, rtol=1e-4, grad=grad)


PACKED = [
    ("LSTM_bi_2l", lambda nn: nn.LSTM(3, 4, num_layers=2, bidirectional=True), False),
    ("GRU_bf", lambda nn: nn.GRU(3, 4, batch_first=True), True),
    ("RNN_bi", lambda nn: nn.RNN(3, 4, bidirectional=True), False),
]


@pytest.mark.parametrize("name,ctor,bf", PACKED, ids=[p[0] for p in PACKED])
@pytest.mark.parametrize("sorted_", [True, False], ids=["sorted", "unsorted"])
def test_packed_sequences(name, ctor, bf, sorted_):
    lengths = [5, 3, 2, 1] if sorted_ else [3, 5, 1, 2]
    x = f32(4, 5, 3) if bf else f32(5, 4, 3)

    def call(m, x):
        lib = torch if isinstance(m, torch.nn.Module) else torchlike
        rnn = lib.nn.utils.rnn
        p = rnn.pack_padded_sequence(x, lengths, batch_first=bf, enforce_sorted=sorted_)
        out, h = m(p)
        padded, lens = rnn.pad_packed_sequence(out, batch_first=bf, padding_value=-1.0)
        return out.data, h, padded

    compare_module(ctor, (x,), call=call, atol=1e-5, rtol=1e-4)


def test_packed_with_initial_state_and_helpers():
    lengths = [2, 4, 3]
    x, h0, c0 = f32(4, 3, 3), f32(1, 3, 5), f32(1, 3, 5)

    def call(m, x, h, c):
        lib = torch if isinstance(m, torch.nn.Module) else torchlike
        p = lib.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
        out, (hn, cn) = m(p, (h, c))
        return out.data, hn, cn

    compare_module(lambda nn: nn.LSTM(3, 5), (x, h0, c0), call=call, atol=1e-5, rtol=1e-4)
    seqs = [f32(n, 2) for n in (3, 1, 2)]
    for lib in (torch, torchlike):
        p = lib.nn.utils.rnn.pack_sequence([lib.tensor(s) for s in seqs], enforce_sorted=False)
        back = lib.nn.utils.rnn.unpack_sequence(p)
        for a, s in zip(back, seqs):
            np.testing.assert_array_equal(np.asarray(a.tolist(), np.float32), s)
    with pytest.raises(RuntimeError):
        torchlike.nn.utils.rnn.pack_padded_sequence(torchlike.ones(3, 2), [1, 3])


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_lstm_proj_size(train):
    compare_module(lambda nn: nn.LSTM(3, 6, num_layers=2, bidirectional=True, proj_size=4,
                                      batch_first=True), (f32(2, 5, 3),), train=train,
                   atol=1e-5, rtol=1e-4)
    compare_module(lambda nn: nn.LSTM(3, 6, proj_size=2), (f32(5, 2, 3), f32(1, 2, 2),
                                                           f32(1, 2, 6)),
                   call=lambda m, x, h, c: m(x, (h, c)), atol=1e-5, rtol=1e-4)
    t, l = torch.nn.LSTM(3, 6, proj_size=2), torchlike.nn.LSTM(3, 6, proj_size=2)
    assert repr(l) == repr(t)
    assert [(n, tuple(p.shape)) for n, p in l.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]


@pytest.mark.parametrize("kw", [{}, {"proj_size": 4}, {"proj_size": 4, "num_layers": 2},
                                {"dtype": "float64"}], ids=str)
def test_lstm_output_node_is_torchs(kw):
    """torch's CPU LSTM runs oneDNN's layers only for a float32 input without projections
    (its output's node MkldnnRnnLayerBackward0); otherwise its steps are stacked."""
    names = []
    for m in (torch, torchlike):
        k = dict(kw)
        dt = getattr(m, k.pop("dtype", "float32"))
        lstm = m.nn.LSTM(3, 6, **k).to(dt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # (projections: oneDNN's warning, once)
            out, (h, c) = lstm(m.ones(5, 2, 3, dtype=dt, requires_grad=True))
        names.append((out.grad_fn.name(), h.grad_fn.name(), c.grad_fn.name()))
    assert names[0] == names[1]


@pytest.mark.parametrize("kw", [{"proj_size": 4},
                                {"proj_size": 3, "num_layers": 2, "bidirectional": True,
                                 "batch_first": True}], ids=str)
def test_lstm_with_projections_under_cpu_autocast(kw):
    """torch decomposes an LSTM with projections into linears (bfloat16 under autocast) and
    elementwise ops: the output and h_n are bfloat16, c_n keeps float32 (the float32 zeros
    it starts from); the states fed back into the next call are accepted."""
    x = f32(2, 5, 3)
    bf = kw.get("batch_first", False)
    lengths = [5, 3] if bf else [2, 2, 1, 1, 1]
    t = torch.nn.LSTM(3, 6, **kw)
    lt = torchlike.nn.LSTM(3, 6, **kw)
    lt.load_state_dict({k: torchlike.tensor(v.detach().numpy())
                        for k, v in t.state_dict().items()})
    res = []
    for m, mod in ((torch, t), (torchlike, lt)):
        xx = m.tensor(x, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with m.autocast("cpu", dtype=m.bfloat16):
                o, (h, c) = mod(xx)
                o2, (h2, c2) = mod(xx, (h, c))
                packed = m.nn.utils.rnn.pack_padded_sequence(xx, lengths, batch_first=bf)
                po, (ph, pc) = mod(packed)
        (o.float().sum() + o2.float().pow(2).sum() + c2.sum()).backward()
        res.append(([str(v.dtype) for v in (o, h, c, o2, h2, c2, po.data, ph, pc)],
                    [v.detach().float().numpy() for v in (o, h, c, o2, c2, xx.grad,
                                                          mod.weight_hh_l0.grad)],
                    str(mod.weight_hh_l0.grad.dtype)))
    assert res[0][0] == res[1][0]
    assert res[0][2] == res[1][2]
    for a, b in zip(res[0][1], res[1][1]):
        # (bfloat16 steps: a few ulps of rounding apart)
        np.testing.assert_allclose(b, a, atol=2e-2, rtol=2e-2)


def test_lstm_projection_warning_text_is_torchs():
    """torch's TORCH_WARN_ONCE for an LSTM with projections on the CPU, once a process, with
    its "(Triggered internally at ...)" suffix."""
    import subprocess
    import sys
    code = ("import warnings, {m} as t\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    lstm = t.nn.LSTM(3, 4, proj_size=2)\n"
            "    lstm(t.ones(2, 1, 3)); lstm(t.ones(2, 1, 3))\n"
            "print([(x.category.__name__, str(x.message)) for x in w])\n")
    out = [subprocess.run([sys.executable, "-c", code.format(m=m)], capture_output=True,
                          text=True, check=True).stdout for m in ("torch", "torchlike")]
    assert out[0] == out[1]
