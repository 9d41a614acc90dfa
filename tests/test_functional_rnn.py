"""torch.lstm, torch.gru, torch.rnn_tanh, torch.rnn_relu (ATen's functional recurrences, padded
and packed overloads) vs torch: outputs, final states, gradients, argument errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike
from oracle import check_raises

R = np.random.default_rng(7)
GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def arrays(name, I, H, layers=1, dirs=1, bias=True, proj=0):
    """Weights per layer and direction in torch's order (w_ih, w_hh[, b_ih, b_hh][, w_hr])."""
    g, out = GATES[name], []
    real = proj or H
    for layer in range(layers):
        for _ in range(dirs):
            i = I if layer == 0 else real * dirs
            out += [R.standard_normal((g * H, i)), R.standard_normal((g * H, real))]
            if bias:
                out += [R.standard_normal(g * H), R.standard_normal(g * H)]
            if proj:
                out.append(R.standard_normal((proj, H)))
    return [(a * 0.4).astype(np.float32) for a in out]


def to(lib, arrs, grad=False, dtype=np.float32):
    return [lib.tensor(a.astype(dtype), requires_grad=grad) for a in arrs]


# name, T, B, I, H, layers, bidirectional, bias, batch_first, proj
CASES = [
    ("lstm", 5, 3, 4, 6, 1, False, True, False, 0),
    ("lstm", 4, 2, 3, 5, 2, True, True, True, 0),
    ("lstm", 4, 2, 3, 5, 1, False, False, False, 0),
    ("lstm", 5, 3, 4, 6, 2, True, True, False, 2),
    ("gru", 5, 3, 4, 6, 1, False, True, False, 0),
    ("gru", 4, 2, 3, 5, 2, True, False, True, 0),
    ("rnn_tanh", 5, 3, 4, 6, 2, True, True, False, 0),
    ("rnn_relu", 6, 2, 3, 4, 1, False, True, True, 0),
    ("rnn_relu", 3, 1, 2, 3, 3, False, False, False, 0),
]


def _run(lib, name, x, h, c, params, bias, layers, bidir, bf):
    hx = (h, c) if name == "lstm" else h
    return getattr(lib, name)(x, hx, params, bias, layers, 0.0, True, bidir, bf)


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_padded_values_and_gradients(case):
    name, T, B, I, H, layers, bidir, bias, bf, proj = case
    D = 2 if bidir else 1
    x = R.standard_normal((B, T, I) if bf else (T, B, I)).astype(np.float32)
    h = R.standard_normal((layers * D, B, proj or H)).astype(np.float32)
    c = R.standard_normal((layers * D, B, H)).astype(np.float32)
    ws = arrays(name, I, H, layers, D, bias, proj)
    results = {}
    for lib in (torch, torchlike):
        xs, hs, cs = (lib.tensor(a, requires_grad=True) for a in (x, h, c))
        ps = to(lib, ws, grad=True)
        outs = _run(lib, name, xs, hs, cs if name == "lstm" else None, ps, bias, layers,
                    bidir, bf)
        assert len(outs) == (3 if name == "lstm" else 2)
        loss = sum((o * (k + 1.5)).sin().sum() for k, o in enumerate(outs))
        loss.backward()
        grads = [xs.grad, hs.grad] + ([cs.grad] if name == "lstm" else []) + [p.grad for p in ps]
        results[lib] = ([o.detach().numpy() for o in outs], [g.numpy() for g in grads])
    (to_, tg), (lo, lg) = results[torch], results[torchlike]
    for a, b in zip(lo, to_):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=2e-4, atol=2e-5)
    for a, b in zip(lg, tg):
        np.testing.assert_allclose(a, b, rtol=5e-4, atol=5e-5)


@pytest.mark.parametrize("name", ["lstm", "gru", "rnn_tanh"])
@pytest.mark.parametrize("bidir", [False, True])
def test_packed_overload(name, bidir):
    I, H, layers = 3, 4, 2
    D = 2 if bidir else 1
    sizes = [3, 3, 2, 1]
    data = R.standard_normal((sum(sizes), I)).astype(np.float32)
    h = R.standard_normal((layers * D, 3, H)).astype(np.float32)
    c = R.standard_normal((layers * D, 3, H)).astype(np.float32)
    ws = arrays(name, I, H, layers, D)
    results = {}
    for lib in (torch, torchlike):
        d = lib.tensor(data, requires_grad=True)
        hs, cs = lib.tensor(h, requires_grad=True), lib.tensor(c)
        ps = to(lib, ws, grad=True)
        hx = (hs, cs) if name == "lstm" else hs
        outs = getattr(lib, name)(d, lib.tensor(sizes), hx, ps, True, layers, 0.0, False, bidir)
        sum((o * (k + 1.0)).cos().sum() for k, o in enumerate(outs)).backward()
        results[lib] = ([o.detach().numpy() for o in outs],
                        [d.grad.numpy(), hs.grad.numpy()] + [p.grad.numpy() for p in ps])
    for a, b in zip(results[torchlike][0] + results[torchlike][1],
                    results[torch][0] + results[torch][1]):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=5e-4, atol=5e-5)


def test_modules_and_functional_agree():
    """nn.LSTM computes through the same recurrence: module == torch.lstm on its weights."""
    torchlike.manual_seed(0)
    m = torchlike.nn.LSTM(3, 5, num_layers=2, bidirectional=True)
    x = torchlike.randn(4, 2, 3)
    h = torchlike.zeros(4, 2, 5)
    out, (hn, cn) = m(x, (h, h))
    o2, h2, c2 = torchlike.lstm(x, (h, h), m._flat_weights, True, 2, 0.0, False, True, False)
    for a, b in ((out, o2), (hn, h2), (cn, c2)):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


@pytest.mark.parametrize("dtype", [np.float64, np.float16])
def test_dtypes(dtype):
    I, H = 3, 4
    x = R.standard_normal((4, 2, I))
    h = np.zeros((1, 2, H))
    ws = arrays("gru", I, H)
    outs = {}
    for lib in (torch, torchlike):
        o = lib.gru(lib.tensor(x.astype(dtype)), lib.tensor(h.astype(dtype)),
                    to(lib, ws, dtype=dtype), True, 1, 0.0, False, False, False)
        outs[lib] = o
    for a, b in zip(outs[torchlike], outs[torch]):
        assert str(a.dtype) == str(b.dtype)
        tol = 2e-3 if dtype == np.float16 else 1e-10
        np.testing.assert_allclose(a.numpy().astype(np.float64), b.numpy().astype(np.float64),
                                   rtol=tol, atol=tol)


def test_grad_fn_names():
    x = R.standard_normal((4, 2, 3)).astype(np.float32)
    names = {}
    for lib in (torch, torchlike):
        xs = lib.tensor(x, requires_grad=True)
        h = lib.zeros(1, 2, 4)
        names[lib] = (
            [o.grad_fn.name() for o in lib.lstm(xs, (h, h), to(lib, arrays("lstm", 3, 4)),
                                                True, 1, 0.0, False, False, False)],
            [o.grad_fn.name() for o in lib.gru(xs, h, to(lib, arrays("gru", 3, 4)), True, 1,
                                               0.0, False, False, False)])
    assert names[torchlike] == names[torch]


def test_dropout_between_layers():
    """train=True with dropout applies it between layers (draws differ from torch's: compare
    the properties), train=False ignores it; dropout=1 zeroes every later layer's input."""
    x = torchlike.randn(5, 3, 4)
    h = torchlike.zeros(2, 3, 6)
    ps = to(torchlike, arrays("rnn_tanh", 4, 6, layers=2))
    ref = torchlike.rnn_tanh(x, h, ps, True, 2, 0.0, False, False, False)[0]
    assert torchlike.equal(torchlike.rnn_tanh(x, h, ps, True, 2, 0.5, False, False, False)[0],
                           ref)
    torchlike.manual_seed(3)
    a = torchlike.rnn_tanh(x, h, ps, True, 2, 0.5, True, False, False)[0]
    torchlike.manual_seed(3)
    b = torchlike.rnn_tanh(x, h, ps, True, 2, 0.5, True, False, False)[0]
    assert torchlike.equal(a, b) and not torchlike.allclose(a, ref)
    # with the second layer's input all zero, its output is tanh of the bias recurrence alone
    ps_t = to(torch, arrays("rnn_tanh", 4, 6, layers=2))
    ps_l = [torchlike.tensor(p.detach().numpy()) for p in ps_t]
    xt = torch.tensor(x.numpy())
    for train in (True,):
        o_t = torch.rnn_tanh(xt, torch.zeros(2, 3, 6), ps_t, True, 2, 1.0, train, False, False)
        o_l = torchlike.rnn_tanh(x, h, ps_l, True, 2, 1.0, train, False, False)
        for a, b in zip(o_l, o_t):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def _h(lib, *shape, dtype=None):
    return lib.zeros(*shape, dtype=dtype)


def _ws(lib, name, **kw):
    return to(lib, arrays(name, 4, 6, **kw))


# (label, call(lib)): each raises the same error type and message in both
ERRORS = [
    ("lstm one state", lambda L: L.lstm(L.zeros(5, 3, 4), (_h(L, 1, 3, 6),), _ws(L, "lstm"),
                                        True, 1, 0.0, False, False, False)),
    ("lstm three states", lambda L: L.lstm(L.zeros(5, 3, 4), (_h(L, 1, 3, 6),) * 3,
                                           _ws(L, "lstm"), True, 1, 0.0, False, False, False)),
    ("gru param count", lambda L: L.gru(L.zeros(5, 3, 4), _h(L, 1, 3, 6), _ws(L, "gru")[:3],
                                        True, 1, 0.0, False, False, False)),
    ("lstm c size (projection needs 5 weights)",
     lambda L: L.lstm(L.zeros(5, 3, 4), (_h(L, 1, 3, 6), _h(L, 1, 3, 7)), _ws(L, "lstm"),
                      True, 1, 0.0, False, False, False)),
    ("gru too few states", lambda L: L.gru(L.zeros(5, 3, 4), _h(L, 1, 3, 6), _ws(L, "gru"),
                                           True, 2, 0.0, False, False, False)),
    ("gru too few weights", lambda L: L.gru(L.zeros(5, 3, 4), _h(L, 2, 3, 6), _ws(L, "gru"),
                                            True, 2, 0.0, False, False, False)),
    ("gru has_biases False with biases",
     lambda L: L.gru(L.zeros(5, 3, 4), _h(L, 1, 3, 6), _ws(L, "gru"), False, 1, 0.0, False,
                     False, False)),
    ("empty sequence", lambda L: L.rnn_tanh(L.zeros(0, 3, 4), _h(L, 1, 3, 6),
                                            _ws(L, "rnn_tanh"), True, 1, 0.0, False, False,
                                            False)),
    ("input dtype", lambda L: L.gru(L.zeros(5, 3, 4, dtype=L.float64), _h(L, 1, 3, 6),
                                    _ws(L, "gru"), True, 1, 0.0, False, False, False)),
    ("state dtype", lambda L: L.rnn_relu(L.zeros(5, 3, 4), _h(L, 1, 3, 6, dtype=L.float64),
                                         _ws(L, "rnn_relu"), True, 1, 0.0, False, False,
                                         False)),
    ("input dtype no bias", lambda L: L.gru(L.zeros(5, 3, 4, dtype=L.float64), _h(L, 1, 3, 6),
                                            _ws(L, "gru", bias=False), False, 1, 0.0, False,
                                            False, False)),
    ("input size", lambda L: L.rnn_relu(L.zeros(5, 3, 5), _h(L, 1, 3, 6), _ws(L, "rnn_relu"),
                                        True, 1, 0.0, False, False, False)),
    ("integer dtype", lambda L: L.gru(L.zeros(5, 3, 4).long(), _h(L, 1, 3, 6).long(),
                                      [w.long() for w in _ws(L, "gru")], True, 1, 0.0, False,
                                      False, False)),
    ("2-D input", lambda L: L.lstm(L.zeros(5, 4), (_h(L, 1, 3, 6),) * 2, _ws(L, "lstm"), True,
                                   1, 0.0, False, False, False)),
    ("dropout > 1 training", lambda L: L.gru(L.zeros(5, 3, 4), _h(L, 2, 3, 6),
                                             _ws(L, "gru", layers=2), True, 2, 1.5, True, False,
                                             False)),
    ("dropout < 0 training", lambda L: L.gru(L.zeros(5, 3, 4), _h(L, 2, 3, 6),
                                             _ws(L, "gru", layers=2), True, 2, -0.5, True, False,
                                             False)),
    ("packed float batch_sizes", lambda L: L.gru(L.zeros(8, 4), L.tensor([3., 2, 2, 1]),
                                                 _h(L, 1, 3, 6), _ws(L, "gru"), True, 1, 0.0,
                                                 False, False)),
    ("packed int32 batch_sizes", lambda L: L.gru(L.zeros(8, 4), L.tensor([3, 2, 2, 1]).int(),
                                                 _h(L, 1, 3, 6), _ws(L, "gru"), True, 1, 0.0,
                                                 False, False)),
    ("packed state batch", lambda L: L.gru(L.zeros(8, 4), L.tensor([3, 2, 2, 1]),
                                           _h(L, 1, 4, 6), _ws(L, "gru"), True, 1, 0.0, False,
                                           False)),
    # the argument parser's errors
    ("hx None", lambda L: L.gru(L.zeros(5, 3, 4), None, _ws(L, "gru"), True, 1, 0.0, False,
                                False, False)),
    ("lstm hx a tensor", lambda L: L.lstm(L.zeros(5, 3, 4), _h(L, 1, 3, 6), _ws(L, "lstm"),
                                          True, 1, 0.0, False, False, False)),
    ("has_biases int", lambda L: L.gru(L.zeros(5, 3, 4), _h(L, 1, 3, 6), _ws(L, "gru"), 1, 1,
                                       0.0, False, False, False)),
    ("num_layers float", lambda L: L.rnn_tanh(L.zeros(5, 3, 4), _h(L, 1, 3, 6),
                                              _ws(L, "rnn_tanh"), True, 1.0, 0.0, False, False,
                                              False)),
    ("too few arguments", lambda L: L.rnn_relu(L.zeros(5, 3, 4), _h(L, 1, 3, 6),
                                               _ws(L, "rnn_relu"), True, 1, 0.0, False, False)),
    ("params a tensor", lambda L: L.rnn_relu(L.zeros(5, 3, 4), _h(L, 1, 3, 6),
                                             _ws(L, "rnn_relu")[0], True, 1, 0.0, False, False,
                                             False)),
    ("unknown keyword", lambda L: L.gru(L.zeros(5, 3, 4), _h(L, 1, 3, 6), _ws(L, "gru"), True,
                                        1, 0.0, False, False, False, foo=1)),
]


def _message(e):
    # torch's parser adds "didn't match because ..." lines under each overload
    return "\n".join(line for line in str(e).split("\n") if "didn't match" not in line)


@pytest.mark.parametrize("label,call", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(label, call):
    ours, t = check_raises(lambda m: call(m))
    assert type(ours) is type(t)
    assert _message(ours) == _message(t)


def test_keywords_and_tuple_params():
    x = R.standard_normal((4, 2, 3)).astype(np.float32)
    ws = arrays("rnn_relu", 3, 4)
    outs = {}
    for lib in (torch, torchlike):
        outs[lib] = lib.rnn_relu(input=lib.tensor(x), hx=lib.zeros(1, 2, 4),
                                 params=tuple(to(lib, ws)), has_biases=True, num_layers=1,
                                 dropout=0, train=False, bidirectional=False, batch_first=False)
    for a, b in zip(outs[torchlike], outs[torch]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call", [
    lambda L: L.lstm(L.zeros(5, 3, 4, 1), (_h(L, 1, 3, 6), _h(L, 1, 3, 6)), _ws(L, "lstm"),
                     True, 1, 0.0, False, False, False),
    lambda L: L.gru(L.zeros(5, 3, 4), _h(L, 1, 2, 6), _ws(L, "gru"), True, 1, 0.0, False,
                    False, False),
    lambda L: L.lstm(L.zeros(3, 5, 4), (_h(L, 1, 2, 6), _h(L, 1, 2, 6)), _ws(L, "lstm"), True, 1,
                     0.0, False, False, True)],
    ids=["4d_input", "hidden_batch_mismatch", "batch_first_hidden_mismatch"])
def test_inputs_torch_does_not_check_raise(call):
    """DIFFERENCES.md: where torch's functional recurrences compute on a 4-D input, raise a
    broadcast error for a hidden state of another batch, or corrupt the heap (batch_first),
    torchlike raises a RuntimeError naming the expected shape (not run against torch here: one
    case ends torch's process)."""
    with pytest.raises(RuntimeError, match=r"expected a 3-D input|Expected hidden size"):
        call(torchlike)
