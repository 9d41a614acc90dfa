"""Strict eager: a graph whose backward comes back runs it as one compiled program.

``autograd/fused_backward.py``: at the ``STRICT_AFTER``-th meeting of a graph at one input
signature, its walk compiles into one program (in the background by default; here in the
foreground, so that counts are exact), and later backwards of it are one dispatch instead of one
per node. Nothing about it may be observable: gradients are the engine's (within a fused
program's rounding), hooks and errors keep the engine's walk, shapes that keep changing never
compile.
"""
from __future__ import annotations

import numpy as np
import pytest

T = pytest.importorskip("torch")

import torchlike  # noqa: E402
import torchlike.eager  # noqa: E402
from torchlike import _tiers  # noqa: E402
from torchlike.autograd import fused_backward as FB  # noqa: E402

pytestmark = pytest.mark.usefixtures("strict_eager")


@pytest.fixture(autouse=True)
def _foreground(monkeypatch):
    """Compiles in the foreground (the count of walks before a program is exact), the graphs
    other tests met forgotten, no interpreted first calls."""
    monkeypatch.setattr(_tiers, "BACKGROUND_COMPILE", False)
    monkeypatch.setattr(FB, "STRICT_AFTER", 3)
    FB._clear()
    # (ops compiled from their first call: a node's residuals are of one kind at every step,
    # where the interpreter's first calls recompute and later ones keep a VJP's: two graphs)
    with torchlike.eager.interpreting(0):
        yield


def _chain(m, x, n=6):
    h = x
    for _ in range(n):
        h = (h * 1.5).sin() + h.cos()
    return h.sum()


def _calls():
    return FB.stats()["calls"]


def test_a_repeated_backward_becomes_one_program_with_the_engines_gradients():
    rng = np.random.default_rng(0)
    data = rng.standard_normal(7).astype(np.float32)
    x = torchlike.tensor(data, requires_grad=True)
    xt = T.tensor(data, requires_grad=True)
    _chain(T, xt).backward()
    before = FB.stats()
    grads = []
    for _ in range(6):
        x.grad = None
        _chain(torchlike, x).backward()
        grads.append(x.grad.numpy())
    after = FB.stats()
    # walked by the engine twice, compiled at the third meeting, one call from then on
    assert after["programs"] - before["programs"] == 1
    assert after["calls"] - before["calls"] == 4
    for g in grads:
        np.testing.assert_allclose(g, xt.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[-1], grads[0], rtol=1e-6, atol=1e-7)


def test_gradients_accumulate_into_grad_as_the_engines_do():
    w = torchlike.ones(3, requires_grad=True)
    wt = T.ones(3, requires_grad=True)
    for _ in range(5):
        (w * torchlike.arange(3.0)).exp().sum().backward()
        (wt * T.arange(3.0)).exp().sum().backward()
    assert _calls() > 0
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-5)


def test_a_training_loop_matches_torch_and_runs_one_program_per_step():
    def run(m):
        m.manual_seed(0)
        model = m.nn.Sequential(m.nn.Linear(4, 8), m.nn.Tanh(), m.nn.Linear(8, 2))
        with m.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(m.tensor(np.random.default_rng(i).standard_normal(tuple(p.shape)),
                                 dtype=m.float32) * 0.3)
        opt = m.optim.Adam(model.parameters(), lr=0.01)
        x = m.tensor(np.random.default_rng(9).standard_normal((5, 4)), dtype=m.float32)
        y = m.tensor([0, 1, 1, 0, 1])
        losses = []
        for _ in range(8):
            loss = m.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            losses.append(loss.item())
        return losses, [p.detach().numpy() for p in model.parameters()]

    before = _calls()
    losses, params = run(torchlike)
    assert _calls() - before == 6
    ref_losses, ref_params = run(T)
    np.testing.assert_allclose(losses, ref_losses, rtol=1e-5)
    for p, q in zip(params, ref_params):
        np.testing.assert_allclose(p, q, rtol=1e-4, atol=1e-6)


def test_hooks_keep_the_engines_walk():
    x = torchlike.ones(3, requires_grad=True)
    seen = []
    before = _calls()
    for _ in range(5):
        y = (x * 2).exp()
        y.register_hook(lambda g: seen.append(g.numpy().copy()) or g * 0.5)
        y.sum().backward()
    assert _calls() == before
    assert len(seen) == 5
    np.testing.assert_allclose(x.grad.numpy(), 5 * np.exp(2.0) * np.ones(3), rtol=1e-6)


def test_a_retained_gradient_keeps_the_engines_walk():
    x = torchlike.ones(2, requires_grad=True)
    before = _calls()
    for _ in range(5):
        y = x.exp()
        y.retain_grad()
        (y * 3).sum().backward()
        np.testing.assert_allclose(y.grad.numpy(), [3.0, 3.0])
    assert _calls() == before


def _batch_loss(w, n):
    x = torchlike.arange(n * 3.0).reshape(n, 3) / 10
    return ((x * w).sin() * w).sum()


def test_shapes_that_change_every_step_never_compile():
    w = torchlike.ones(3, requires_grad=True)
    before = FB.stats()
    for n in range(2, 12):
        w.grad = None
        _batch_loss(w, n).backward()
        wt = T.ones(3, requires_grad=True)
        x = T.arange(n * 3.0).reshape(n, 3) / 10
        ((x * wt).sin() * wt).sum().backward()
        np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-5, atol=1e-5)
    after = FB.stats()
    # one graph (its leaf has one shape), a signature per batch size: each met once
    assert after["programs"] == before["programs"]
    assert after["calls"] == before["calls"]


def test_alternating_shapes_compile_one_program_each():
    w = torchlike.ones(3, requires_grad=True)
    before = FB.stats()
    for step in range(8):
        _batch_loss(w, 4 if step % 2 else 5).backward()
    after = FB.stats()
    # the graph known after step 0; each batch size compiles at its third meeting (steps 4
    # and 5) and runs as one program from then on
    assert after["programs"] - before["programs"] == 2
    assert after["calls"] - before["calls"] == 4
    wt = T.ones(3, requires_grad=True)
    for step in range(8):
        n = 4 if step % 2 else 5
        x = T.arange(n * 3.0).reshape(n, 3) / 10
        ((x * wt).sin() * wt).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_an_in_place_change_of_a_saved_tensor_still_raises_torchs_error():
    x = torchlike.ones(3, requires_grad=True)
    before = _calls()
    for step in range(6):
        h = x * 1.5
        z = (h.sin() * 2).exp()
        if step == 5:
            with torchlike.no_grad():
                h.mul_(2)           # (the graph is unchanged; sin's saved input is not)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                z.sum().backward()
        else:
            z.sum().backward()
    assert _calls() - before == 3       # (steps 2 to 4)


def test_retain_graph_runs_the_program_twice():
    x = torchlike.ones(3, requires_grad=True)
    for _ in range(4):
        x.grad = None
        loss = _chain(torchlike, x)
        loss.backward(retain_graph=True)
        first = x.grad.numpy().copy()
        loss.backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * first, rtol=1e-6)
    with pytest.raises(RuntimeError, match="a second time"):
        loss.backward()


def test_a_backward_inside_a_compiled_function_is_traced_by_the_engine():
    w = torchlike.ones(3, requires_grad=True)

    @torchlike.compile
    def step():
        loss = _chain(torchlike, w)
        loss.backward()
        return loss

    before = FB.stats()
    for _ in range(5):
        w.grad = None
        step()
    assert FB.stats() == before
    wt = T.ones(3, requires_grad=True)
    _chain(T, wt).backward()
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-5)


def test_background_compile_walks_in_the_engine_until_the_program_is_ready(monkeypatch):
    monkeypatch.setattr(_tiers, "BACKGROUND_COMPILE", True)
    x = torchlike.ones(5, requires_grad=True)
    before = FB.stats()
    for _ in range(3):
        _chain(torchlike, x).backward()
    assert FB.stats()["programs"] - before["programs"] == 1
    torchlike.eager.wait_compiles()
    _chain(torchlike, x).backward()
    assert FB.stats()["calls"] - before["calls"] == 1
    xt = T.ones(5, requires_grad=True)
    for _ in range(4):
        _chain(T, xt).backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-5)


def test_a_graph_above_the_node_bound_walks_in_the_engine(monkeypatch):
    """A graph with more than ``MAX_NODES`` nodes never becomes one program (XLA's compile
    time grows quickly with size); one within it does."""
    x = torchlike.ones(5, requires_grad=True)
    n = len(_nodes(_chain(torchlike, x)))       # (the chain's graph, leaf included)
    monkeypatch.setattr(FB, "MAX_NODES", n - 1)
    before = _calls()
    for _ in range(6):
        x.grad = None
        _chain(torchlike, x).backward()
    assert _calls() == before
    monkeypatch.setattr(FB, "MAX_NODES", n)
    for _ in range(6):
        x.grad = None
        _chain(torchlike, x).backward()
    assert _calls() > before


def _nodes(root):
    seen, todo = {root.grad_fn}, [root.grad_fn]
    while todo:
        for f, _i in todo.pop().next_functions:
            if f is not None and f not in seen:
                seen.add(f)
                todo.append(f)
    return seen


def test_the_switch_turns_it_off(monkeypatch):
    monkeypatch.setattr(FB, "STRICT_AFTER", 0)
    x = torchlike.ones(3, requires_grad=True)
    before = FB.stats()
    for _ in range(6):
        _chain(torchlike, x).backward()
    assert FB.stats() == before


def test_the_switch_gives_the_node_by_node_bits_at_every_step(monkeypatch):
    """``TORCHLIKE_GRAPH_BACKWARD_AFTER=0`` (with the interpreter off): every step's gradients
    are the first step's, bit for bit."""
    monkeypatch.setattr(FB, "STRICT_AFTER", 0)
    x = torchlike.tensor(np.linspace(-2, 2, 9, dtype=np.float32), requires_grad=True)
    grads = []
    for _ in range(6):
        x.grad = None
        _chain(torchlike, x, n=12).backward()
        grads.append(x.grad.numpy())
    for g in grads[1:]:
        np.testing.assert_array_equal(g, grads[0])


@pytest.mark.parametrize("case", ["mixed dtypes", "complex", "two roots with seeds",
                                  "shared subexpression", "bfloat16"])
def test_graph_families_match_torch_once_compiled(case):
    """Graphs of the families a backward program must get right, past their compile: each
    step's gradients against torch's."""
    rng = np.random.default_rng(5)
    a0 = rng.standard_normal((4, 3))
    b0 = rng.standard_normal(3)

    def make(m):
        if case == "complex":
            a = m.tensor(a0 + 1j * a0[::-1], dtype=m.complex64, requires_grad=True)
            b = m.tensor(b0, dtype=m.float32, requires_grad=True)
        elif case == "bfloat16":
            a = m.tensor(a0, dtype=m.bfloat16, requires_grad=True)
            b = m.tensor(b0, dtype=m.float32, requires_grad=True)
        else:
            a = m.tensor(a0, dtype=m.float64, requires_grad=True)
            b = m.tensor(b0, dtype=m.float32, requires_grad=True)
        return a, b

    def step(m, a, b):
        if case in ("mixed dtypes", "bfloat16"):
            (a * b).tanh().sum().backward()
        elif case == "complex":
            ((a * b).abs() ** 2).sum().backward()
        elif case == "two roots with seeds":
            y = (a * b).sin()
            z = (a - b).exp().sum(0)
            m.autograd.backward([y, z], [m.ones_like(y) * 0.5, m.arange(3.0, dtype=z.dtype)])
        else:
            s = (a * b).sigmoid()
            (s * s + s.sum(1, keepdim=True) * s).mean().backward()

    ours, theirs = make(torchlike), make(T)
    before = _calls()
    for _ in range(5):
        step(torchlike, *ours)
        step(T, *theirs)
        for o, t in zip(ours, theirs):
            assert o.grad.dtype == getattr(torchlike, str(t.grad.dtype).split(".")[1])
            tol = 2e-2 if case == "bfloat16" else 1e-5
            np.testing.assert_allclose(o.grad.detach().float().numpy() if case == "bfloat16"
                                       else o.grad.numpy(),
                                       t.grad.detach().float().numpy() if case == "bfloat16"
                                       else t.grad.numpy(), rtol=tol, atol=tol)
    assert _calls() - before == 3
