"""Fused eager: a graph's backward, once the engine has walked it, is one recorded call.

Pinned here: a repeated backward records one call (plus the leaves' accumulation) and gives the
engine's gradients to the bit; anything that can observe the walk (hooks of every kind, retained
gradients, saved-tensor hooks, ``inputs=``, ``create_graph``, anomaly mode) keeps the engine's
walk; errors keep their place (a modified saved tensor, a freed graph, an op without a
derivative raise in ``backward()``); graphs of one structure at other shapes, several roots,
unused outputs of multi-output ops and ``retain_graph`` give strict mode's gradients."""
import numpy as np
import pytest

import torchlike as torch
import torchlike.eager as E
from torchlike import _fused
from torchlike.autograd import fused_backward


def _model():
    torch.manual_seed(0)
    nn = torch.nn
    return nn.Sequential(nn.Linear(7, 5), nn.Tanh(), nn.Linear(5, 3))


def _grads(model):
    return [p.grad.numpy().copy() for p in model.parameters()]


def _steps(n, sizes=(4,), hook=None):
    """``n`` backwards of one model at the batch ``sizes`` in turn (gradients accumulate);
    the gradients after each."""
    model = _model()
    rng = np.random.default_rng(0)
    out = []
    for i in range(n):
        x = torch.tensor(rng.standard_normal((sizes[i % len(sizes)], 7), np.float32))
        h = model[1](model[0](x))
        if hook is not None:
            hook(model, h)
        loss = (model[2](h) ** 2).mean()
        loss.backward()
        out.append(_grads(model))
    return out


def _recorded(fn):
    before = _fused.stats()["recorded"]
    fn()
    _fused.sync()
    return _fused.stats()["recorded"] - before


def test_a_repeated_backward_is_one_recorded_call_with_the_engines_gradients(fused,
                                                                             monkeypatch):
    model = _model()
    x = torch.randn(4, 7)

    def backward():
        (model(x) ** 2).mean().backward()

    forward = _recorded(lambda: (model(x) ** 2).mean())
    first = _recorded(backward)             # the engine walks it: a call per node and sum
    later = [_recorded(backward) for _ in range(5)]
    # one call for the walk, one sum per leaf into its existing .grad
    assert later == [1 + 4 + forward] * 5, (forward, first, later)
    assert first > later[0]


@pytest.mark.parametrize("fuse_after", [1, 100], ids=["programs", "replayed"])
def test_a_recorded_backward_gives_the_engines_gradients_to_the_bit(fused, monkeypatch,
                                                                  fuse_after):
    """Segments run as fused programs from their first meeting, or replayed call by call:
    either way the recorded walk sums what the engine sums, in its order. (Every call is
    compiled: which calls the interpreter tier serves depends on when background compiles
    finish, and its numpy kernels round differently from XLA's.)"""
    from torchlike import _tiers
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 0)
    monkeypatch.setattr(_fused, "FUSE_AFTER", fuse_after)
    got = _steps(6, sizes=(4,))
    monkeypatch.setattr(fused_backward, "ENABLED", False)
    walked = _steps(6, sizes=(4,))
    for a, b in zip(got, walked):
        for ga, gb in zip(a, b):
            np.testing.assert_array_equal(ga, gb)


def test_graphs_of_one_structure_at_other_shapes_give_strict_modes_gradients(fused):
    got = _steps(8, sizes=(4, 9, 2))
    with E.strict():
        ref = _steps(8, sizes=(4, 9, 2))
    for a, b in zip(got, ref):
        for ga, gb in zip(a, b):
            np.testing.assert_allclose(ga, gb, rtol=1e-5, atol=1e-6)


def _tensor_hook(model, h):
    h.register_hook(lambda g: g * 2)


def _retained(model, h):
    h.retain_grad()


def _leaf_hook(model, h):
    if not getattr(model[0].weight, "_hooked", False):
        model[0].weight.register_hook(lambda g: g + 1)
        model[0].weight._hooked = True


def _node_prehook(model, h):
    h.grad_fn.register_prehook(lambda go: (go[0] * 3,))


def _node_hook(model, h):
    h.grad_fn.register_hook(lambda gi, go: (gi[0] * 0.5,))


def _post_accumulate(model, h):
    if not getattr(model[2].bias, "_hooked", False):
        def double(p):
            p.grad.mul_(2)          # (a post-accumulate-grad hook returns None)
        model[2].bias.register_post_accumulate_grad_hook(double)
        model[2].bias._hooked = True


@pytest.mark.parametrize("hook", [_tensor_hook, _retained, _leaf_hook, _node_prehook,
                                  _node_hook, _post_accumulate])
def test_hooks_of_every_kind_keep_the_engines_walk(fused, hook):
    """A hook registered on a graph that was already recorded as one call runs, and changes
    the gradients as in strict mode."""
    calls = []

    def counted(model, h):
        calls.append(1)
        if len(calls) > 2:              # (the first two backwards are plain: the graph is
            hook(model, h)              # recorded as one call from the second on)
    got = _steps(5, hook=counted)
    calls.clear()
    with E.strict():
        ref = _steps(5, hook=counted)
    for a, b in zip(got, ref):
        for ga, gb in zip(a, b):
            np.testing.assert_allclose(ga, gb, rtol=1e-5, atol=1e-6)


def test_a_retained_gradient_of_a_recorded_graph(fused):
    w = torch.ones(3, requires_grad=True)
    for i in range(4):
        h = w * 2
        if i == 3:
            h.retain_grad()
        (h * h).sum().backward()
    assert h.grad.tolist() == [4.0, 4.0, 4.0]
    assert w.grad.tolist() == [32.0, 32.0, 32.0]


def test_saved_tensor_hooks_keep_the_engines_walk(fused):
    w = torch.ones(3, requires_grad=True)
    packed = []
    for i in range(4):
        if i == 3:
            with torch.autograd.graph.saved_tensors_hooks(lambda t: packed.append(1) or t * 2,
                                                          lambda t: t):
                y = (w * w).sum()
        else:
            y = (w * w).sum()
        y.backward()
    assert packed                       # the hook packed what the node saved
    # three plain backwards (2 each), then one whose saved inputs were doubled (4)
    assert w.grad.tolist() == [10.0, 10.0, 10.0]


def test_a_modified_saved_tensor_raises_in_backward(fused):
    a = torch.ones(3, requires_grad=True)
    for i in range(4):
        b = a * 1
        c = b.sin()
        if i == 3:
            b.mul_(2)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                c.sum().backward()
        else:
            c.sum().backward()


def test_a_second_backward_through_a_freed_recorded_graph_raises(fused):
    w = torch.ones(3, requires_grad=True)
    for _ in range(3):
        y = (w.sin() * w).sum()
        y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        y.backward()


def test_retain_graph_backwards_of_a_recorded_graph_accumulate(fused):
    w = torch.ones(3, requires_grad=True)
    for _ in range(3):
        w.grad = None
        y = (w.sin() * w).sum()
        y.backward(retain_graph=True)
        y.backward()
    with E.strict():
        v = torch.ones(3, requires_grad=True)
        z = (v.sin() * v).sum()
        z.backward(retain_graph=True)
        z.backward()
    np.testing.assert_array_equal(w.grad.numpy(), v.grad.numpy())


def test_an_op_without_a_derivative_raises_in_every_backward(fused):
    x = torch.ones(2, 3, requires_grad=True)
    for _ in range(3):
        y = x // 2
        with pytest.raises(RuntimeError, match="derivative for aten::floor_divide is not "
                                               "implemented"):
            y.sum().backward()


def test_several_roots_and_an_unused_output_give_strict_modes_gradients(fused):
    def run():
        w = torch.arange(6.0, requires_grad=True)
        for _ in range(4):
            a, b = w.reshape(2, 3).unbind(0)
            m, _i = w.reshape(3, 2).max(1)      # (its indices output gets no gradient)
            torch.autograd.backward([(a * b).sum(), m.exp().sum()])
        return w.grad.numpy().copy()
    got = run()
    with E.strict():
        ref = run()
    np.testing.assert_allclose(got, ref, rtol=1e-6)


@pytest.mark.parametrize("how", ["inputs", "create_graph", "anomaly"])
def test_backwards_the_engine_must_walk(fused, how):
    w = torch.ones(3, requires_grad=True)
    for _ in range(4):
        w.grad = None
        y = (w.exp() * w).sum()
        if how == "inputs":
            y.backward(inputs=[w])
        elif how == "create_graph":
            y.backward(create_graph=True)
            assert w.grad.requires_grad
        else:
            with torch.autograd.detect_anomaly():
                y.backward()
    np.testing.assert_allclose(w.grad.detach().numpy(), np.full(3, 2 * np.e, np.float32), rtol=1e-6)


def test_graphs_recorded_in_strict_mode_backward_in_fused_mode(monkeypatch):
    """A forward run strict holds the compiled forward-with-VJP's residuals (once its first
    calls are past the interpreter): its nodes, walked by a fused backward recorded as one
    call, give strict mode's gradients."""
    from torchlike import _tiers
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 2)

    def run(fused_backward_on):
        model = _model()
        x = torch.randn(4, 7)
        kinds = set()
        for _ in range(8):
            with E.strict():                # (whatever $TORCHLIKE_EAGER says)
                loss = (model(x) ** 2).mean()
            kinds.add(type(loss.grad_fn.next_functions[0][0].vjp).__name__)
            if fused_backward_on:
                with E.fused():
                    loss.backward()
                _fused.sync()
            else:
                with E.strict():
                    loss.backward()
        return kinds, _grads(model)
    fused_backward._plans.clear()
    kinds, got = run(True)
    assert "Pullback" in kinds, kinds
    assert any(p is not True and any(p.plan.pullback) for p in fused_backward._plans.values())
    _kinds, ref = run(False)
    for ga, gb in zip(got, ref):
        np.testing.assert_allclose(ga, gb, rtol=1e-6, atol=1e-7)


# graphs of many shapes: each program runs four times (the engine walks the first, the rest are
# one recorded call each) and its gradients are compared with strict mode's
def _prog_multi_output(w, x):
    v, i = (x * w).max(dim=1)                   # (the indices: no gradient)
    a, b = (x + w).chunk(2, dim=1)
    c, _unused = (x - w).chunk(2, dim=0)        # (an output without a cotangent: zeros)
    return v.sum() + (a * 2).sum() - b.exp().mean() + c.square().sum()


def _prog_views(w, x):
    y = (x @ w.t()).view(2, 2, 4).transpose(0, 1)
    z = y[:, 1:, ::2].reshape(-1)
    return (z * z).sum() + y.permute(2, 0, 1).contiguous().sum(0).pow(2).mean()


def _prog_shared(w, x):
    h = x * w                                   # (one tensor, many uses: sums in order)
    return (h * h).sum() + h.sin().sum() + (h + w).tanh().mean() + w.sum()


def _prog_indexing(w, x):
    idx = torch.tensor([0, 3, 1, 3])
    g = (x * w)[:, idx]
    m = torch.where(x > 0, x * w, w.exp())
    return g.sum() + m.sum() + x.gather(1, idx.expand(4, 4)).mul(w[:, :4]).sum()


def _prog_reductions(w, x):
    h = torch.cat([x * w, x - w], dim=0)
    return h.logsumexp(1).sum() + h.norm() + h.var(0).sum() + h.cumsum(1)[:, -1].sum()


def _prog_nn(w, x):
    F = torch.nn.functional
    h = F.layer_norm(x[:, :4] @ w.t(), (4,))
    h = F.gelu(h) + F.softmax(h, -1)
    return F.cross_entropy(h, torch.tensor([0, 1, 2, 3])) + F.mse_loss(h, x[:, :4])


def _prog_two_roots_one_leaf_twice(w, x):
    a = (w * 3).sum()
    return a + (w * w * x[:, :4]).sum() + a


@pytest.mark.parametrize("prog", [_prog_multi_output, _prog_views, _prog_shared, _prog_indexing,
                                  _prog_reductions, _prog_nn, _prog_two_roots_one_leaf_twice])
def test_graph_families_give_strict_modes_gradients(fused, prog):
    def run():
        rng = np.random.default_rng(5)
        w = torch.tensor(rng.standard_normal((4, 6), np.float32), requires_grad=True)
        grads = []
        for i in range(4):
            x = torch.tensor(rng.standard_normal((4, 6), np.float32), requires_grad=i % 2 == 0)
            w.grad = None
            prog(w[:, :4] if prog is _prog_nn or prog is _prog_two_roots_one_leaf_twice
                 else w, x).backward()
            grads.append(w.grad.numpy().copy())
            if x.grad is not None:
                grads.append(x.grad.numpy().copy())
        return grads
    before = _fused.stats()["graph_backwards"]
    got = run()
    assert _fused.stats()["graph_backwards"] > before
    with E.strict():
        ref = run()
    assert len(got) == len(ref)
    for a, b in zip(got, ref):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
