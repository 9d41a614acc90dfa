"""Frequently used torch names outside the op surface, each against torch 2.13: legacy
Variable, autograd switches, graph.increment_version, torch.overrides' helpers, symbolic-shape
helpers on plain numbers, get_device_module, nn.utils.stateless / skip_init /
rnn.invert_permutation, nn.init.sparse_, utils.hooks helpers."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchlike as tl


def test_variable():
    for m in (torch, tl):
        V = m.autograd.Variable
        x = m.ones(2)
        v = V(x, requires_grad=True)
        assert v.requires_grad and x.requires_grad is False and v.is_leaf
        assert isinstance(x, V) and isinstance(v, V) and not isinstance(1.0, V)
        assert V(x).requires_grad is False
        assert type(v) is m.Tensor


def test_set_multithreading_enabled():
    for m in (torch, tl):
        assert m.autograd.is_multithreading_enabled() is True
        with m.autograd.set_multithreading_enabled(False):
            assert m.autograd.is_multithreading_enabled() is False
            x = m.ones(2, requires_grad=True)
            (x * 2).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]
        assert m.autograd.is_multithreading_enabled() is True


def test_increment_version():
    msgs = []
    for m in (torch, tl):
        x = m.ones(2, requires_grad=True)
        y = x.exp()
        z = (y * y).sum()
        v0 = y._version
        m.autograd.graph.increment_version(y)
        assert y._version == v0 + 1
        m.autograd.graph.increment_version([y])
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as info:
            z.backward()
        msgs.append(str(info.value).split(":")[0])
    assert msgs[0] == msgs[1]


def test_overrides():
    x = tl.ones(2)
    O = tl.overrides
    assert O.has_torch_function((x,)) is False
    assert O.has_torch_function_unary(x) is False
    assert O.has_torch_function_variadic(x, x) is False
    assert O.is_tensor_like(x) and not O.is_tensor_like(1.0)
    assert torch.overrides.is_tensor_like(torch.ones(1)) and not torch.overrides.is_tensor_like(1.)
    # (the dispatch itself: tests/test_torch_function_overrides.py)
    assert O.handle_torch_function(tl.add, (x,), x, x).tolist() == \
        torch.overrides.handle_torch_function(torch.add, (torch.ones(2),), torch.ones(2),
                                              torch.ones(2)).tolist()
    assert set(torch.overrides.__all__) <= set(dir(O))
    assert tl.nn.functional.linear is not None
    # (DIFFERENCES: a subclass's own __torch_function__ is not dispatched, so library code that
    # asks is told False, where torch says True; modes are not entered)

    class Sub(tl.Tensor):
        pass
    assert O.has_torch_function((tl.ones(1).as_subclass(Sub),)) is False

    class Mode(O.TorchFunctionMode):
        pass
    with pytest.raises(NotImplementedError, match="TorchFunctionMode cannot be entered"):
        with Mode():
            pass


@pytest.mark.parametrize("name, args", [("sym_int", (3.7,)), ("sym_int", (-3.7,)),
                                        ("sym_float", (3,)), ("sym_max", (2, 5)),
                                        ("sym_min", (2, 5)), ("sym_not", (True,)),
                                        ("sym_ite", (False, 1, 2)), ("sym_sum", ([1, 2, 3],)),
                                        ("sym_sqrt", (9,))])
def test_sym_helpers(name, args):
    want = getattr(torch, name)(*args)
    got = getattr(tl, name)(*args)
    assert got == want and type(got) is type(want)


def test_sym_types():
    for m in (torch, tl):
        assert not isinstance(3, m.SymInt) and not isinstance(3.0, m.SymFloat)
        assert not isinstance(True, m.SymBool)


def test_get_device_module():
    assert tl.get_device_module("cpu") is tl.cpu
    assert tl.get_device_module(tl.device("cuda:0")) is tl.cuda
    assert tl.get_device_module("mps") is tl.mps
    assert tl.get_device_module(None) in (tl.cpu, tl.cuda)
    assert torch.get_device_module("cpu") is torch.cpu
    for m in (torch, tl):
        with pytest.raises(RuntimeError, match="Invalid value of device '3', expect "
                                               "torch.device, str, or None"):
            m.get_device_module(3)


def test_stateless_functional_call():
    res = []
    for m in (torch, tl):
        lin = m.nn.Linear(2, 1)
        params = {"weight": m.tensor([[1.0, 2.0]]), "bias": m.tensor([0.5])}
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = m.nn.utils.stateless.functional_call(lin, params, (m.ones(1, 2),))
        res.append((out.tolist(), [(x.category, str(x.message)) for x in w]))
    assert res[0] == res[1]


def test_skip_init():
    for m in (torch, tl):
        lin = m.nn.utils.skip_init(m.nn.Linear, 3, 4, bias=False)
        assert type(lin).__name__ == "Linear" and tuple(lin.weight.shape) == (4, 3)
        assert lin.bias is None
        with pytest.raises(RuntimeError, match="Expected a Module; got"):
            m.nn.utils.skip_init(int)

        class NoDevice(m.nn.Module):
            def __init__(self):
                super().__init__()
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip "
                                               "initialization"):
            m.nn.utils.skip_init(NoDevice)


def test_invert_permutation():
    p = np.array([3, 0, 2, 1])
    got = tl.nn.utils.rnn.invert_permutation(tl.tensor(p))
    want = torch.nn.utils.rnn.invert_permutation(torch.tensor(p))
    assert got.tolist() == want.tolist() and got.dtype.name == "int64"
    assert tl.nn.utils.rnn.invert_permutation(None) is None


@pytest.mark.parametrize("sparsity", [0.1, 0.5, 0.9])
def test_init_sparse(sparsity):
    for m in (torch, tl):
        w = m.nn.init.sparse_(m.empty(10, 6), sparsity, std=0.5)
        zeros = (w == 0).sum(dim=0).tolist()
        assert zeros == [int(np.ceil(sparsity * 10))] * 6
        with pytest.raises(ValueError, match="Only tensors with 2 dimensions are supported"):
            m.nn.init.sparse_(m.empty(3), 0.1)


def test_utils_hooks():
    res = []
    for m in (torch, tl):
        H = m.utils.hooks

        @H.unserializable_hook
        def quiet(g):
            return g
        assert quiet.__torch_unserializable__ is True
        x = m.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            H.warn_if_has_hooks(x)
        res.append(len(w))
    assert res == [0, 0]


def test_stream_and_event():
    seen = []
    for m in (torch, tl):
        s = m.Stream()
        row = [repr(s), str(s.device), s.query(), s.synchronize(), s.stream_id, s.device_index,
               s == m.Stream(), hash(s) == hash(m.Stream())]
        with s:
            row.append("entered")
        e = m.Event()
        row.append(repr(e))
        for call in (lambda: e.record(s), s.record_event):
            with pytest.raises(RuntimeError, match="cpu backend doesn't support events."):
                call()
        row += [e.query(), e.synchronize(), e.wait()]
        with pytest.raises(ValueError, match="Both events must be created with argument "
                                               "'enable_timing=True'."):
            e.elapsed_time(m.Event())
        seen.append(row)
    assert seen[0] == seen[1]


def test_register_multi_grad_hook():
    seen = []
    for m in (torch, tl):
        G = m.autograd.graph
        a, b, c = (m.ones(2, requires_grad=True) for _ in range(3))
        log = []
        h = G.register_multi_grad_hook(
            (a, b, c), lambda gs: log.append([None if g is None else g.tolist() for g in gs]))
        (a * 2 + b).sum().backward()
        (a * 3).sum().backward()
        h.remove()
        (a * 2).sum().backward()
        h = G.register_multi_grad_hook((a, b), lambda g: log.append(g.tolist()), mode="any")
        (a * 2 + b * 5).sum().backward()
        h.remove()
        with pytest.raises(ValueError, match="Expects mode to be one of"):
            G.register_multi_grad_hook((a,), print, mode="some")
        seen.append(log)
    assert seen[0] == seen[1]


def test_gradient_edges():
    res = []
    for m in (torch, tl):
        G = m.autograd.graph
        x = m.ones(2, requires_grad=True)
        y = x * 2
        z = (y * 3).sum()
        ey, ex = G.get_gradient_edge(y), G.get_gradient_edge(x)
        assert isinstance(ey, G.GradientEdge) and ey.node is y.grad_fn and ey.output_nr == 0
        assert type(ex.node).__name__ == "AccumulateGrad"
        (gy,) = m.autograd.grad(z, ey, retain_graph=True)
        gx, gy2 = m.autograd.grad(z, [ex, y])
        res.append((gy.tolist(), gx.tolist(), gy2.tolist()))
        with pytest.raises(RuntimeError, match="It is not possible to get the gradient edge for "
                                               "a Tensor that does not require gradients"):
            G.get_gradient_edge(m.ones(1))
    assert res[0] == res[1]


def test_gradient_edge_as_output_is_refused():
    x = tl.ones(2, requires_grad=True)
    y = x * 2
    with pytest.raises(NotImplementedError, match="a GradientEdge as an output is not "
                                                  "supported"):
        tl.autograd.grad(tl.autograd.graph.get_gradient_edge(y), x)
