"""torch.autograd.graph.saved_tensors_hooks / save_on_cpu / disable_saved_tensors_hooks against
torch 2.13: which tensors are packed, when and how often each hook runs, and the gradients when
an unpack hook changes values."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike as tl

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _fresh_rng():
    """Each test draws the same inputs whatever ran before it (in this worker)."""
    global RNG
    RNG = np.random.default_rng(0)

OPS = {
    "mul": lambda m, a, b: a * b,
    "mul_scalar": lambda m, a, b: a * 2,
    "square": lambda m, a, b: a * a,
    "add": lambda m, a, b: a + b,
    "div": lambda m, a, b: a / b,
    "exp": lambda m, a, b: a.exp(),
    "sin": lambda m, a, b: a.sin(),
    "tanh": lambda m, a, b: a.tanh(),
    "sigmoid": lambda m, a, b: a.sigmoid(),
    "relu": lambda m, a, b: a.relu(),
    "pow": lambda m, a, b: a ** 2,
    "matmul": lambda m, a, b: a @ b,
    "sum": lambda m, a, b: (a * 1).sum(),
    "chain": lambda m, a, b: (a.sin() * b).exp().sum(),
    "linear": lambda m, a, b: m.nn.functional.linear(a.view(1, 4), b.view(1, 4)),
}


def _record(m, fn):
    log = []
    a = m.tensor(RNG.standard_normal(4).astype(np.float32), requires_grad=True)
    b = m.tensor(RNG.standard_normal(4).astype(np.float32), requires_grad=True)
    names = {id(a): "a", id(b): "b"}

    def pack(x):
        fn_name = x.grad_fn.name() if x.grad_fn is not None else None
        log.append(("pack", tuple(x.shape), names.get(id(x)), fn_name))
        return x

    def unpack(x):
        log.append(("unpack", tuple(x.shape)))
        return x
    with m.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = fn(m, a, b)
    log.append("forward done")
    y.sum().backward()
    return log


@pytest.mark.parametrize("name", list(OPS))
def test_pack_and_unpack_calls(name):
    got, want = _record(tl, OPS[name]), _record(torch, OPS[name])
    assert sorted(got[:got.index("forward done")], key=repr) == \
        sorted(want[:want.index("forward done")], key=repr)
    assert got[got.index("forward done"):] == want[want.index("forward done"):]


@pytest.mark.parametrize("name", ["mul", "square", "sin", "exp", "chain", "linear", "sum"])
def test_pack_order(name):
    """Where torchlike's order of one op's saved tensors is torch's (mul, addmm: the other
    operand first; unary ops)."""
    assert _record(tl, OPS[name]) == _record(torch, OPS[name])


def _grads(m, pack, unpack, retain=False):
    x = m.tensor(np.array([0.5, -1.0, 2.0], np.float32), requires_grad=True)
    w = m.tensor(np.array([1.5, 0.25, -0.5], np.float32), requires_grad=True)
    with m.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = ((x * w).sin() * x).sum()
    y.backward(retain_graph=retain)
    if retain:
        y.backward()
    return x.grad.numpy(), w.grad.numpy()


@pytest.mark.parametrize("unpack", ["identity", "double", "zero"])
def test_unpack_values_are_what_backward_reads(unpack):
    hooks = {"identity": lambda t: t, "double": lambda t: t * 2, "zero": lambda t: t * 0}
    want = _grads(torch, lambda t: t, hooks[unpack])
    got = _grads(tl, lambda t: t, hooks[unpack])
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_packed_can_be_anything():
    """Pack to a NumPy array (as an offload to disk would), unpack back to a tensor."""
    for m in (torch, tl):
        got = _grads(m, lambda t: t.detach().numpy().copy(), lambda a: m.from_numpy(a))
        want = _grads(m, lambda t: t, lambda t: t)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-6)


def test_retain_graph_unpacks_each_backward():
    counts = []
    for m in (torch, tl):
        n = {"pack": 0, "unpack": 0}

        def pack(t):
            n["pack"] += 1
            return t

        def unpack(t):
            n["unpack"] += 1
            return t
        g = _grads(m, pack, unpack, retain=True)
        counts.append((n, g[0].tolist()))
    assert counts[0][0] == counts[1][0]
    np.testing.assert_allclose(counts[1][1], counts[0][1], rtol=1e-6)


def test_second_backward_without_retain_raises():
    for m in (torch, tl):
        x = m.ones(3, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = (x.exp() * x).sum()
        y.backward()
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second "
                                               "time"):
            y.backward()


def test_create_graph_with_hooks():
    res = []
    for m in (torch, tl):
        x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t * 2):
            y = (x.sin() * x).sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        res.append((g.detach().numpy(), gg.numpy()))
    for a, b in zip(res[1], res[0]):
        np.testing.assert_allclose(a, b, rtol=1e-5)


def test_innermost_hooks_win_and_none_outside():
    logs = []
    for m in (torch, tl):
        log = []
        x = m.ones(2, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: log.append("outer") or t,
                                                  lambda t: t):
            with m.autograd.graph.saved_tensors_hooks(lambda t: log.append("inner") or t,
                                                      lambda t: t):
                y = x.sin()
            z = y.cos()
        w = z.exp()
        (w.sum()).backward()
        logs.append(log)
    assert logs[0] == logs[1] == ["inner", "outer"]


def test_no_pack_without_grad():
    for m in (torch, tl):
        log = []
        x = m.ones(2)
        with m.autograd.graph.saved_tensors_hooks(lambda t: log.append(1) or t, lambda t: t):
            x.sin()
            with m.no_grad():
                m.ones(2, requires_grad=True).sin()
        assert log == []


def test_save_on_cpu_gradients():
    res = []
    w = RNG.standard_normal((3, 4)).astype(np.float32)
    for m in (torch, tl):
        lin = m.nn.Linear(4, 3)
        with m.no_grad():
            lin.weight.copy_(m.tensor(w))
            lin.bias.zero_()
        x = m.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4), requires_grad=True)
        with m.autograd.graph.save_on_cpu(pin_memory=False):
            y = m.tanh(lin(x)).pow(2).sum()
        y.backward()
        res.append((x.grad.numpy(), lin.weight.grad.numpy()))
    for a, b in zip(res[1], res[0]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_disable_saved_tensors_hooks():
    for m in (torch, tl):
        G = m.autograd.graph
        with G.disable_saved_tensors_hooks("hooks are off in this region"):
            with pytest.raises(RuntimeError, match="hooks are off in this region"):
                with G.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass

        @G.disable_saved_tensors_hooks("decorated")
        def f():
            with G.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
        with pytest.raises(RuntimeError, match="decorated"):
            f()
        with G.saved_tensors_hooks(lambda t: t, lambda t: t):
            pass


def test_changed_saved_result_is_refused():
    """torch's backward of exp reads the unpacked result; torchlike's reads jax's own copy, so a
    hook that changes a saved result raises (DIFFERENCES.md) rather than being ignored."""
    x = tl.ones(3, requires_grad=True)
    with tl.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t * 2):
        y = x.exp().sum()
    with pytest.raises(NotImplementedError, match="the unpack hook returned other values for "
                                                  "the result that ExpBackward0 saved"):
        y.backward()
