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


def _grads_of(dtype, scale):
    """A torch and a torchlike list of parameters with equal gradients of ``dtype``."""
    shapes = [(3, 4), (5,), (2, 2, 2)]
    tp, lp = [], []
    for s in shapes:
        g = (R.standard_normal(s) * scale).astype(np.float32)
        t = torch.zeros(s, dtype=getattr(torch, dtype), requires_grad=True)
        t.grad = torch.tensor(g).to(getattr(torch, dtype))
        l = torchlike.zeros(s, dtype=getattr(torchlike, dtype), requires_grad=True)
        l.grad = torchlike.tensor(g).to(getattr(torchlike, dtype))
        tp.append(t)
        lp.append(l)
    return tp, lp


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "bfloat16"])
@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf"), 0.5, 0.0])
def test_clip_grad_norm_dtypes_and_orders(dtype, norm_type):
    """The total norm is a tensor of the gradients' dtype, computed as torch does (each
    gradient's norm, then the norm of their stack), and gradients keep their dtype."""
    tp, lp = _grads_of(dtype, 3.0)
    tn = torch.nn.utils.clip_grad_norm_(tp, 1.0, norm_type)
    ln = torchlike.nn.utils.clip_grad_norm_(lp, 1.0, norm_type)
    assert ln.dtype.name == str(tn.dtype).split(".")[1] and ln.shape == tn.shape
    tol = 1e-2 if dtype in ("float16", "bfloat16") else 1e-5
    assert_close(ln, tn, tol, tol, "total norm")
    for p, q in zip(lp, tp):
        assert p.grad.dtype.name == str(q.grad.dtype).split(".")[1]
        assert_close(p.grad, q.grad, tol, tol, "clipped grad")


def test_clip_grad_norm_writes_in_place_without_grad():
    """The gradients are scaled in place (same tensors, version bumped), outside autograd,
    and the norm returned carries no graph."""
    tp, lp = _grads_of("float32", 3.0)
    g0 = lp[0].grad
    v0 = g0._version
    total = torchlike.nn.utils.clip_grad_norm_(lp, 0.1)
    assert lp[0].grad is g0 and g0._version > v0
    assert total.grad_fn is None and not total.requires_grad
    tt = torch.nn.utils.clip_grad_norm_(tp, 0.1)
    assert_close(total, tt, 1e-5, 1e-6, "total norm")


def test_clip_grad_norm_edge_cases():
    """No gradients: a 0-d zero norm and nothing scaled; an empty generator warns; a
    non-finite norm raises with error_if_nonfinite (and scales by it without)."""
    t = torch.nn.utils.clip_grad_norm_([torch.zeros(2, requires_grad=True)], 1.0)
    l = torchlike.nn.utils.clip_grad_norm_([torchlike.zeros(2, requires_grad=True)], 1.0)
    assert l.item() == t.item() == 0.0 and l.dtype.name == str(t.dtype).split(".")[1]
    with pytest.warns(UserWarning, match="empty generator"):
        torchlike.nn.utils.clip_grad_norm_((p for p in []), 1.0)
    tp, lp = _grads_of("float32", 1.0)
    tp[0].grad[0, 0] = float("inf")
    lp[0].grad[0, 0] = float("inf")
    with pytest.raises(RuntimeError) as te:
        torch.nn.utils.clip_grad_norm_(tp, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as le:
        torchlike.nn.utils.clip_grad_norm_(lp, 1.0, error_if_nonfinite=True)
    assert str(le.value) == str(te.value)
    tn = torch.nn.utils.clip_grad_norm_(tp, 1.0)
    ln = torchlike.nn.utils.clip_grad_norm_(lp, 1.0)
    assert_close(ln, tn, 0, 0, "inf norm")
    for p, q in zip(lp, tp):
        assert_close(p.grad, q.grad, 0, 0, "grad scaled by an infinite norm")


def test_clip_grad_norm_deprecated_alias_and_value_clip():
    tp, lp = _grads_of("float32", 3.0)
    with pytest.warns(FutureWarning, match="deprecated"):
        ln = torchlike.nn.utils.clip_grad_norm(lp, 1.0)
    with pytest.warns(FutureWarning, match="deprecated"):
        tn = torch.nn.utils.clip_grad_norm(tp, 1.0)
    assert_close(ln, tn, 1e-5, 1e-6, "norm")
    tp, lp = _grads_of("float32", 3.0)
    v0 = lp[1].grad._version
    torch.nn.utils.clip_grad_value_(tp, 0.7)
    torchlike.nn.utils.clip_grad_value_(lp, 0.7)
    assert lp[1].grad._version > v0
    for p, q in zip(lp, tp):
        assert_close(p.grad, q.grad, 0, 0, "value-clipped grad")


def test_clip_grad_norm_stays_in_the_fused_segment():
    """In fused eager, clipping reads nothing on the host (no device move, no in-place write
    and no norm is a cut): a step's only cut is its backward's end."""
    from torchlike import _fused
    m = torchlike.nn.Linear(4, 3)
    opt = torchlike.optim.SGD(m.parameters(), lr=0.1)
    x = torchlike.ones(2, 4)
    with torchlike.eager.fused():
        for _ in range(3):
            torchlike.sync()
            _fused.reset_stats()
            loss = m(x).square().sum()
            loss.backward()
            total = torchlike.nn.utils.clip_grad_norm_(m.parameters(), 0.5)
            opt.step()
            opt.zero_grad()
            loss.item()
            cuts = torchlike.eager.stats()["fused"]["cuts"]
            assert cuts == {"backward": 1}, cuts     # (the read finds the loss computed)
            assert total._d.__class__ is _fused.Deferred



def test_vector_to_parameters_of_an_aliased_parameter_copies_the_values():
    """DIFFERENCES.md: a parameter with a live alias (a detached copy, a state_dict entry) takes
    the vector's values but not a view of its storage (a torchlike storage cannot be shared by
    two roots): a later in-place write into the vector is not seen by it, where torch's is. A
    parameter without aliases shares the vector's storage, as torch's."""
    def run(m, alias):
        lin = m.nn.Linear(2, 1)
        keep = lin.weight.detach() if alias else None  # noqa: F841  (the live alias)
        vec = m.arange(3.)
        m.nn.utils.vector_to_parameters(vec, lin.parameters())
        vec.add_(10)
        return lin.weight.tolist()
    assert run(torch, False) == run(torchlike, False) == [[10.0, 11.0]]
    assert run(torch, True) == [[10.0, 11.0]]
    assert run(torchlike, True) == [[0.0, 1.0]]
