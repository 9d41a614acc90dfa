"""nn.utils vs torch: gradient clipping, parameter vectors, pad_sequence."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike
from nn_util import copy_state
from oracle import assert_close

R = np.random.default_rng(5)


def _pair():
    tm = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))
    lm = torchlike.nn.Sequential(torchlike.nn.Linear(4, 5), torchlike.nn.Tanh(),
                                 torchlike.nn.Linear(5, 3))
    copy_state(tm, lm)
    x = R.standard_normal((6, 4)).astype(np.float32) * 3
    (tm(torch.tensor(x)) ** 2).sum().backward()
    (lm(torchlike.tensor(x)) ** 2).sum().backward()
    return tm, lm


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 3.0])
@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_grad_norm(norm_type, max_norm):
    tm, lm = _pair()
    tn = torch.nn.utils.clip_grad_norm_(tm.parameters(), max_norm, norm_type)
    ln = torchlike.nn.utils.clip_grad_norm_(lm.parameters(), max_norm, norm_type)
    assert_close(ln, tn, 1e-4, 1e-5, "total norm")
    for (n, p), (_, q) in zip(lm.named_parameters(), tm.named_parameters()):
        assert_close(p.grad, q.grad, 1e-6, 1e-5, n)


def test_clip_grad_value_and_vectors():
    tm, lm = _pair()
    torch.nn.utils.clip_grad_value_(tm.parameters(), 0.3)
    torchlike.nn.utils.clip_grad_value_(lm.parameters(), 0.3)
    for (n, p), (_, q) in zip(lm.named_parameters(), tm.named_parameters()):
        assert_close(p.grad, q.grad, 1e-6, 1e-5, n)
    tv = torch.nn.utils.parameters_to_vector(tm.parameters())
    lv = torchlike.nn.utils.parameters_to_vector(lm.parameters())
    assert_close(lv, tv, 0, 0, "vector")
    new = R.standard_normal(tv.shape).astype(np.float32)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), tm.parameters())
    torchlike.nn.utils.vector_to_parameters(torchlike.tensor(new), lm.parameters())
    for (n, p), (_, q) in zip(lm.named_parameters(), tm.named_parameters()):
        assert_close(p, q, 0, 0, n)


@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence(batch_first):
    seqs = [R.standard_normal((n, 3)).astype(np.float32) for n in (2, 5, 3)]
    t = torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], batch_first,
                                        padding_value=-1.0)
    l = torchlike.nn.utils.rnn.pad_sequence([torchlike.tensor(s) for s in seqs], batch_first,
                                            padding_value=-1.0)
    assert_close(l, t, 0, 0, "padded")


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm(dim):
    import warnings
    from nn_util import compare_module

    def ctor(nn):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return nn.Sequential(nn.utils.weight_norm(nn.Linear(4, 3), dim=dim), nn.Tanh(),
                                 nn.utils.weight_norm(nn.Conv1d(3, 2, 2), name="weight"))

    x = R.standard_normal((2, 3, 4)).astype(np.float32)
    tm, lm = compare_module(ctor, (x,), atol=1e-5, rtol=1e-4)
    assert [n for n, _ in lm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    torch.nn.utils.remove_weight_norm(tm[0])
    torchlike.nn.utils.remove_weight_norm(lm[0])
    assert [n for n, _ in lm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert_close(lm[0].weight, tm[0].weight, 1e-6, 1e-5, "weight after remove")
