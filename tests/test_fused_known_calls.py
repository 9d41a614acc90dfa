"""Fused eager's known calls: a call met before (same op, statics, default dtype, grad mode,
operand shapes, dtypes and grad needs) is recorded from the recipe its first recording left
(``_registry._RECIPES``), in one pass over its operands.

Pinned here: a known call records exactly what the general path records (the same segment
calls and key); each thing the recipe key holds, changed between two calls, changes the result
as in strict eager and torch (grad needs, grad mode, the default dtype); what a recipe does not
cover takes the general path and keeps its semantics (inference tensors, Tensor subclasses,
views, saved tensors modified in place)."""
import numpy as np
import pytest
import torch as T

import torchlike as torch
from torchlike import _fused
from torchlike import _registry


@pytest.fixture
def counted(monkeypatch):
    """How many calls were recorded from a recipe."""
    n = [0]
    known = _registry._record_known

    def counting(*a):
        out = known(*a)
        if isinstance(out, torch.Tensor):
            n[0] += 1
        return out
    monkeypatch.setattr(_registry, "_record_known", counting)
    return n


def _chain(m, x, w):
    h = x * 1.5
    for _ in range(3):
        h = (h * w + 0.25).sin()
    h = h.view(2, 8).t().reshape(16) @ w
    return h.sum() + h.mean()


def _recorded(fn):
    """``fn()``'s recording: the pending segment's calls (functions by identity), key hash,
    inputs' kinds and output count, before it runs."""
    _fused.sync()
    out = fn()
    seg = _fused._seg
    got = ([(id(c[0]), c[1], c[2], c[3], c[5]) for c in seg.calls], seg.h,
           list(seg.ext_avals), len(seg.outs))
    _fused.sync()
    return got, out


def test_a_known_call_records_what_the_general_path_records(fused, counted, monkeypatch):
    x = torch.ones(16, requires_grad=True) * 1
    _fused.sync()
    w = torch.linspace(-1, 1, 16, requires_grad=True)
    _registry._RECIPES.clear()
    with monkeypatch.context() as m:
        m.setattr(_registry, "_learn", lambda *a: None)     # (no recipe: the general path)
        first, out1 = _recorded(lambda: _chain(torch, x, w))
    assert counted[0] == 0
    _recorded(lambda: _chain(torch, x, w))          # (the recipes learned)
    counted[0] = 0
    second, out2 = _recorded(lambda: _chain(torch, x, w))
    assert counted[0] == 17             # (every call)
    assert first == second
    assert out1.item() == pytest.approx(out2.item(), rel=1e-6)   # (its program may fuse)


def test_known_calls_give_strict_eagers_values_and_gradients(fused, counted):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal(16).astype(np.float32)
    ws = rng.standard_normal(16).astype(np.float32)

    def run(m):
        x = m.tensor(xs, requires_grad=True)
        w = m.tensor(ws, requires_grad=True)
        loss = _chain(m, x, w)
        loss.backward()
        return loss.item(), x.grad.numpy(), w.grad.numpy()
    want = run(T)
    for _ in range(3):
        got = run(torch)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got[1], want[1], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-5)
    assert counted[0] > 0


def _needs(m, x_requires, w_requires):
    x0 = m.ones(4, requires_grad=x_requires)
    x = x0 * 2                                  # (a pending value in fused eager)
    w = m.full((4,), 3.0, requires_grad=w_requires)
    y = x * w
    got = (y.requires_grad, y.grad_fn is not None and type(y.grad_fn).__name__)
    if y.requires_grad:
        y.sum().backward()
    return got + tuple(None if t.grad is None else t.grad.tolist() for t in (x0, w))


ORDERS = [[(True, True), (True, False), (False, True), (True, True)],
          [(False, True), (True, False), (True, True), (False, False)]]


@pytest.mark.parametrize("order", ORDERS)
def test_a_grad_need_changed_between_calls(fused, counted, order):
    for needs in order:
        assert _needs(torch, *needs) == _needs(T, *needs)
    assert counted[0] > 0


def test_grad_mode_changed_between_calls(fused, counted):
    for grad in (True, False, True, False):
        results = []
        for m in (T, torch):
            x = m.ones(4, requires_grad=True) * 2
            with m.set_grad_enabled(grad):
                y = (x * 3).sin()
            results.append((y.requires_grad, y.grad_fn is None, y.is_leaf))
        assert results[0] == results[1]
    assert counted[0] > 0


@pytest.mark.parametrize("dtype", ["float64", "float32", "float64"])
def test_the_default_dtype_changed_between_calls(fused, counted, dtype):
    old = torch.get_default_dtype()
    try:
        for m in (T, torch):
            m.set_default_dtype(getattr(m, dtype))
        for _ in range(2):
            outs = []
            for m in (T, torch):
                i = m.arange(6) + 1                      # (pending int64 in fused eager)
                outs.append(((i + 1) / 2, i * 0.5, i + 0.5))
            for a, b in zip(*outs):
                assert str(b.dtype) == str(a.dtype)
                np.testing.assert_allclose(b.numpy(), a.numpy())
    finally:
        T.set_default_dtype(T.float32)
        torch.set_default_dtype(old)


def test_a_saved_tensor_modified_in_place_raises_from_a_known_call(fused):
    for _ in range(3):
        for m in (T, torch):
            x = m.ones(4, requires_grad=True)
            h = x * 2
            y = h * h                               # (mul saves both operands)
            h.add_(1)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                y.sum().backward()


def test_an_inference_tensor_is_refused_from_a_known_call(fused):
    for _ in range(3):
        for m in (T, torch):
            with m.inference_mode():
                a = m.ones(4)
            x = m.ones(4, requires_grad=True) * 2
            with pytest.raises(RuntimeError, match="Inference tensors cannot be saved"):
                x * a


def test_a_subclass_operand_keeps_its_class(fused, counted):
    class Mine(torch.Tensor):
        pass
    for _ in range(3):
        x = torch.ones(4, requires_grad=True) * 2
        s = torch.ones(4).as_subclass(Mine)
        assert type(x * s) is Mine
        assert type(x * 2) is torch.Tensor


def test_a_view_from_a_known_call_writes_through(fused, counted):
    for _ in range(3):
        got = []
        for m in (T, torch):
            base = m.arange(16.) * 1
            v = base.view(4, 4).t()
            v[0].mul_(10)
            got.append((base.tolist(), v._version, base._version))
        assert got[0] == got[1]
    assert counted[0] > 0


def test_a_call_no_recipe_records_leaves_nothing_in_the_segment(fused):
    """The recipe's key is made while the operands are taken in: a call that turns out to
    have no recipe (a call on concrete scalars, which runs now, never has one) takes back the
    inputs it added, and the segment's key is as if it had not been met."""
    y = torch.ones(3) * 2
    seg = _fused._seg
    for _ in range(3):
        before = (list(seg.ext_avals), dict(seg.ext_ids), len(seg.calls))
        x = torch.ones(1)                   # (a concrete scalar: new to the segment)
        z = x + 1.5                         # (runs now)
        assert z._d.__class__ is not _fused.Deferred and z.item() == 2.5
        assert (list(seg.ext_avals), dict(seg.ext_ids), len(seg.calls)) == before
    assert _fused._seg is seg and y.tolist() == [2.0] * 3


def test_a_failed_segments_value_raises_its_error_from_a_known_call(fused):
    """A value of a segment that raised is neither pending nor computed: the call takes the
    general path, which raises the segment's error, as the read of the value does."""
    w = torch.ones(3)
    for _ in range(2):
        y = w * (torch.ones(3) * 2)                 # (the recipe learned)
    i = torch.tensor([0, 1, 5])
    for _ in range(_fused.PARTIAL_MAX + 1):
        i = i + 0                       # (too long to compute at the check: it is recorded)
    z = torch.ones(3)[i]                # (5: out of range)
    x = torch.ones(3) * 2               # (recorded after the failing check: it holds its error)
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        _fused.sync()
    assert x._d.value is None and x._d.error is not None
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        w * x
    del z


def test_known_calls_under_inference_mode_make_inference_tensors(fused, counted):
    """Under inference mode (grad off) an inference tensor is an operand like another: its calls
    are known calls, and their results inference tensors, as torch's."""
    for _ in range(3):
        got = []
        for m in (T, torch):
            with m.inference_mode():
                x = m.arange(6.) * 2                    # (an inference tensor, pending)
                y = (x.sin() + 1.5).view(2, 3).sum(0)
            got.append((y.is_inference(), y.requires_grad, y.tolist()))
        assert got[1][:2] == got[0][:2]
        np.testing.assert_allclose(got[1][2], got[0][2], rtol=1e-6)
    assert counted[0] >= 8


def test_a_call_that_runs_at_once_is_known_and_skips_the_recording(fused, monkeypatch):
    # element reads of a concrete tensor (a view selecting one element; index arithmetic on
    # one-element arrays) run at once; from their second call on, their recipe says so and the
    # recording is not attempted. The same op on a pending operand is still recorded.
    x = torch.arange(10.0)
    tx = T.arange(10.0)
    attempts = [0]
    record = _fused.record

    def counting(*a):
        attempts[0] += 1
        return record(*a)
    monkeypatch.setattr(_fused, "record", counting)
    got = [float(x[3]) + x[5].item() + (x[7] * 2).item() for _ in range(4)]
    want = [float(tx[3]) + tx[5].item() + (tx[7] * 2).item() for _ in range(4)]
    assert got == want
    first = attempts[0]
    assert first >= 2               # (the first call of each recipe: the recording's attempt)
    attempts[0] = 0
    got = [float(x[3]) + x[5].item() + (x[7] * 2).item() for _ in range(4)]
    assert got == want and attempts[0] == 0
    assert not _fused._seg.calls
    h = x * 2                       # (pending: x[3]'s op on it is recorded, not run)
    y = h[3]
    assert len(_fused._seg.calls) == 2 and float(y) == 6.0
    z = torch.arange(10.0, requires_grad=True)
    w = z[4] * 3                    # (a differentiable call of one element: at once, known)
    w.backward()
    attempts[0] = 0
    w = z[4] * 3
    assert attempts[0] == 0 and w.grad_fn.name() == "MulBackward0"
    w.backward()
    assert z.grad[4].item() == 6.0      # (3 from each backward)
