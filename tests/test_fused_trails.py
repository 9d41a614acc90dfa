"""Fused eager's trails: a segment that begins after a segment met before follows the calls
that came next then (``_fused._Segment``): each call that is the trail's next (the same op,
statics and default dtype, operands from the same slots with the same grad needs, new inputs of
the same shapes and dtypes) is checked against the trail instead of making its part of the
segment's key; the first call that differs settles the segment, which is then recorded as a new
one.

Pinned here: a steady loop records every call of a step by following (counted in
``stats()["followed"]``) and computes strict eager's values; each thing that can differ from
the trail (an input's shape, grad mode, the op, a static, the default dtype, a number's type),
changed at one step, gives strict eager's result, and that step's segment is the one a fresh
recording makes (the same calls, key and inputs)."""
import contextlib

import numpy as np
import pytest

import torchlike as torch
import torchlike.eager as E
from torchlike import _fused


def _step(x, w, z, change=None):
    """A training-step-shaped chain (forward, backward at its end: one segment a step) whose
    middle can differ from the steady step's in one thing, ``change``."""
    h0 = (x * w + 0.25).sin()
    h = (h0 * 1.5).sin()
    h = h.cos() if change == "op" else h.exp()
    h = h.softmax(0) if change == "static" else h.softmax(1)
    if change == "grad mode":
        with torch.no_grad():
            h = h * 2
    else:
        h = h * 2
    b = h > 0.1
    k = b.long()
    if change == "default dtype":
        with _default(torch.float64):
            f = k * 0.5
    else:
        f = k * 0.5
    g = k * {"number": 3.0, "tensor operand": torch.tensor(3)}.get(change, 3)
    e = b * (True if change == "bool" else 3)
    # (ops with no recipe, recorded by the general path: checked against the trail there)
    first = (h0 if change == "split input" else h).split(3, dim=1)[0]
    last = torch.full((2, 6 if change == "split shape" else 8), 0.5).split(4, dim=1)[-1]
    # (an input taken twice, or two inputs of the same key)
    u = torch.full((2, 8), 0.5)
    both = u * (torch.full((2, 8), 2.0) if change == "other input" else u)
    out = h @ z
    loss = out.sum() + f.sum() + g.sum() + e.sum() + first.sum() + last.sum() + both.sum()
    if loss.requires_grad:
        loss.backward()
    return loss, out, f, g, e, first, last, both


def _inputs(change=None):
    x = torch.arange(16, dtype=torch.float32).reshape(2, 8) / 16
    w = torch.tensor(0.75, requires_grad=True)
    z = torch.full((8, 3 if change == "shape" else 4), 0.125)
    return x, w, z


@contextlib.contextmanager
def _default(dtype):
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def _strict(fn):
    with E.strict():
        return fn()


def _same(got, want):
    for a, b in zip(got, want, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype
        assert a.requires_grad == b.requires_grad
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6,
                                   atol=1e-7)


def test_a_steady_loop_follows_its_trail_and_computes_strict_values(fused):
    x, w, z = _inputs()
    for _ in range(4):
        _step(x, w, z)
        w.grad = None
    _fused.sync()
    before = _fused.stats()
    results = []
    for _ in range(3):
        results.append(_step(x, w, z))
        w.grad = None
    _fused.sync()
    after = _fused.stats()
    recorded = after["recorded"] - before["recorded"]
    assert recorded > 3 * 12
    assert after["followed"] - before["followed"] == recorded, "a steady step left its trail"
    xs, ws, zs = _inputs()
    want = _strict(lambda: _step(xs, ws, zs))
    for got in results:
        _same(got, want)
    _step(x, w, z)
    _fused.sync()
    with E.strict():
        ws.grad = None
        _step(xs, ws, zs)
    _same((w.grad,), (ws.grad,))


@contextlib.contextmanager
def _segments(monkeypatch):
    """The segments run within, as they were cut: their calls (functions by identity), key
    hash, inputs' kinds and output count."""
    got = []
    flush = _fused._flush

    def snapshot(*a, **k):
        seg = _fused._seg
        got.append(([(id(c[0]), c[1], c[2], c[3], c[5]) for c in seg.calls], seg.h,
                    list(seg.ext_avals), len(seg.outs)))
        return flush(*a, **k)
    monkeypatch.setattr(_fused, "_flush", snapshot)
    try:
        yield got
    finally:
        _fused.sync()
        monkeypatch.setattr(_fused, "_flush", flush)


_CHANGES = ("shape", "grad mode", "op", "static", "number", "bool", "tensor operand",
            "default dtype", "split input", "split shape", "other input")


@pytest.mark.parametrize("change", _CHANGES)
def test_a_call_that_differs_from_the_trail_is_recorded_as_new(fused, monkeypatch, change):
    def steady():
        return _step(*_inputs())

    def other():
        return _step(*_inputs(change), change=change)
    other()                         # (its backward's graph known: a call in both recordings)
    _fused.sync()
    for _ in range(4):
        steady()
    _fused.sync()
    before = _fused.stats()
    with _segments(monkeypatch) as after_trail:
        got = other()
    after = _fused.stats()
    followed = after["followed"] - before["followed"]
    assert 5 <= followed < after["recorded"] - before["recorded"]
    _same(steady(), _strict(steady))    # (back on the steady step)
    _fused.sync()
    _fused.clear()                  # (no trail: the differing step recorded afresh)
    with _segments(monkeypatch) as fresh:
        fresh_out = other()
    want = _strict(other)
    assert after_trail and after_trail == fresh
    _same(got, want)
    _same(fresh_out, want)
