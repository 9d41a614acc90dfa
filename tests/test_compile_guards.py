"""What a compiled program bakes in and what it guards: the Python values its code reads
become constants of the program, so a new value compiles anew (as torch.compile's guards
recompile); Python side effects run when the function is traced."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchlike

X = np.arange(6, dtype=np.float32).reshape(2, 3) / 7 + 0.1


def test_a_python_value_a_compiled_program_reads_is_guarded():
    """A Python number the compiled code reads (a module attribute, as a gradient-reversal
    layer's lambda; a global; a closure's dict item; an object's attribute) is a constant of
    its program: a new value compiles anew, as torch.compile's guards do, instead of reusing
    the old constant."""
    def run(m, compile):
        class GR(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, lam):
                ctx.lam = lam
                return x.view_as(x)

            @staticmethod
            def backward(ctx, g):
                return -ctx.lam * g, None

        class Net(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.lam = 1.0

            def forward(self, x):
                return (GR.apply(x, self.lam) * SCALE).sin()

        net = compile(Net())
        cfg = {"k": 1.0}
        f = compile(lambda x: x * cfg["k"])
        out = []
        global SCALE
        for lam, k, scale in ((1.0, 1.0, 1.5), (1.0, 1.0, 1.5), (2.0, 3.0, 1.5), (0.5, 2.0, 3.0)):
            net.lam, cfg["k"], SCALE = lam, k, scale
            x = m.tensor(X, requires_grad=True)
            net(x).sum().backward()
            out += [x.grad.numpy(), f(m.tensor(X)).numpy()]
        return out

    for a, b in zip(run(torchlike, torchlike.compile), run(torch, lambda f: f)):
        np.testing.assert_allclose(a, b, rtol=1e-6)


SCALE = 1.5


def test_a_counter_the_function_increments_is_read_anew_each_call():
    """An attribute the compiled function increments is a guarded value: each call traces
    again (its side effect runs) until the recompile limit, then the function runs eagerly:
    torch's values on every call."""
    def run(m):
        class Obj:
            calls = 0
        o = Obj()

        def f(x):
            o.calls += 1
            return x * o.calls
        c = m.compile(f)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # (the recompile-limit warning)
            return [float(c(m.ones(1))) for _ in range(12)], o.calls
    assert run(torchlike) == run(torch)


def test_a_list_the_function_appends_to_is_guarded():
    """A compiled function appending to a list it closes over changes its guard key on every
    call, as torch's dynamo guards the list's length: each call traces again (the append runs),
    so the list grows as torch's, until the recompile limit (then eager). A print or another
    side effect on a value that is not guarded runs when the function is traced
    (DIFFERENCES.md)."""
    def run(m):
        log = []

        def f(x):
            log.append(1)
            return x * 2
        c = m.compile(f) if m is torchlike else m.compile(f, backend="eager")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # (the recompile-limit warning)
            out = [float(c(m.ones(1))) for _ in range(12)]
        return out, len(log)
    assert run(torchlike) == run(torch) == ([2.0] * 12, 12)


def test_a_view_of_an_argument_returned_is_a_copy():
    """DIFFERENCES.md: the output of a compiled function that is a view of its argument is a
    new tensor in torchlike (a write into the argument is not seen through it); torch's is a
    view. An argument returned as it is stays the caller's object in both."""
    def run(m):
        f = m.compile(lambda x: x[1:]) if m is torchlike else m.compile(
            lambda x: x[1:], backend="eager")
        x = m.tensor(X)
        y = f(x)
        x[1, 0] = 100.0
        same = m.compile(lambda x: x) if m is torchlike else m.compile(lambda x: x,
                                                                        backend="eager")
        return float(y[0, 0]), same(x) is x
    assert run(torch) == (100.0, True)
    assert run(torchlike) == (float(X[1, 0]), True)


def test_a_number_read_from_a_list_is_guarded():
    """Numbers held in a list (or set) the compiled function reads are part of its guard key, as
    torch's guard sees the item read: a changed list item compiles anew (it used to keep the
    first trace's value)."""
    def run(m):
        scale = [2.0]
        big = [float(i) for i in range(100)]
        f = m.compile(lambda x: x * scale[0] + big[3]) if m is torchlike else m.compile(
            lambda x: x * scale[0] + big[3], backend="eager")
        first = float(f(m.ones(1)))
        scale[0] = 3.0
        second = float(f(m.ones(1)))
        big[3] = 10.0
        return first, second, float(f(m.ones(1)))
    assert run(torch) == run(torchlike) == (5.0, 6.0, 13.0)


def test_tensors_a_module_holds_in_plain_containers_are_state():
    """Tensors a module holds in plain lists, tuples and dicts (anchors, per-layer scales, a
    list of its own weights) are read at their current values on every call, as plain tensor
    attributes are: writing into one, replacing one, or rebinding a list item or an attribute
    from one state tensor to another gives eager's result (they used to be constants of the
    program, or read through the first call's identities), for a compiled module and a
    compiled training step alike."""
    def run(m, compile):
        m.manual_seed(0)

        class Net(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = m.nn.Linear(3, 3)
                self.b = m.nn.Linear(3, 3)
                self.layers = [self.a, self.b]
                self.ws = [self.a.weight, self.b.weight]
                self.scales = (m.tensor(2.0), [m.tensor(0.5)])
                self.extra = {"shift": m.ones(3)}
                self.t = self.a.bias

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                x = x * self.scales[0] * self.scales[1][0] + self.extra["shift"] + self.t
                return x.sum() + sum(w.sum() for w in self.ws)

        net = Net()
        with m.no_grad():                   # (the same weights in both libraries)
            for i, p in enumerate(net.parameters()):
                p.copy_(m.tensor(np.linspace(-1, 1, p.numel(), dtype=np.float32) * (i + 1))
                        .reshape(p.shape))
        opt = m.optim.SGD(net.parameters(), lr=0.05)

        def step(x):
            loss = net(x)
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss

        fwd, train = compile(net), compile(step)
        x = m.tensor(X)
        out = []
        for change in range(5):
            if change == 1:
                net.scales[1][0].fill_(3.0)
            elif change == 2:
                net.scales[1][0] = m.tensor(-1.0)
                net.extra["shift"] = m.full((3,), 2.0)
            elif change == 3:
                net.ws[0] = net.b.weight
            elif change == 4:
                net.t = net.b.bias
            for _ in range(2):
                out += [fwd(x).item(), train(x).item()]
        return out

    np.testing.assert_allclose(run(torchlike, torchlike.compile), run(torch, lambda f: f),
                               rtol=1e-5)


class _Config:
    def __init__(self):
        self.scale = 2.0
        self.use_shift = True


class _Anchors:
    def __init__(self, lib):
        self.points = lib.ones(3)


def test_user_objects_a_module_holds_are_scanned():
    """A compiled module's forward that reads a config object's number (``self.cfg.scale``)
    or a tensor held by a helper object (``self.anchors.points``) sees their current values:
    the number is guarded (a new value compiles anew), the tensor is state (a write into it or
    a new tensor is read). Both used to be constants of the first trace."""
    def run(m, compile):
        class Net(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.cfg = _Config()
                self.anchors = _Anchors(m)

            def forward(self, x):
                y = x * self.cfg.scale
                if self.cfg.use_shift:
                    y = y + self.anchors.points
                return y

        net = Net()
        f = compile(net)
        x = m.tensor(X)
        out = [f(x).numpy()]
        net.cfg.scale = 3.0
        out.append(f(x).numpy())
        net.anchors.points.mul_(4)
        out.append(f(x).numpy())
        net.anchors.points = m.full((3,), -1.0)
        out.append(f(x).numpy())
        net.cfg.use_shift = False
        out.append(f(x).numpy())
        return out

    for a, b in zip(run(torchlike, torchlike.compile), run(torch, lambda f: f)):
        np.testing.assert_allclose(a, b, rtol=1e-6)


SUB_SCALE = 2.0
SUB_BIAS = None


def test_globals_read_by_submodules_methods_are_guarded():
    """A global number or tensor read by a submodule's forward, or by a helper method it calls,
    is guarded or state, whether the module or a step calling it is compiled (the globals of
    the compiled function's own code were; those of the modules' methods were baked in)."""
    def run(m, compile):
        global SUB_SCALE, SUB_BIAS
        SUB_SCALE, SUB_BIAS = 2.0, m.ones(3)

        class Sub(m.nn.Module):
            def shift(self):
                return SUB_BIAS

            def forward(self, x):
                return x * SUB_SCALE + self.shift()

        class Net(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.sub = Sub()

            def forward(self, x):
                return self.sub(x)

        net = Net()
        fwd = compile(net)
        step = compile(lambda x: net(x) * 1)
        x = m.tensor(X)
        out = []
        for change in range(3):
            if change == 1:
                SUB_SCALE = 5.0
            elif change == 2:
                SUB_BIAS.mul_(10)
            out += [fwd(x).numpy(), step(x).numpy()]
        return out

    for a, b in zip(run(torchlike, torchlike.compile), run(torch, lambda f: f)):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_a_class_attribute_a_forward_reads_is_guarded():
    """A number in a module's class body (``scale = 2.0``, read as ``self.scale``) is guarded:
    changing it on the class compiles anew (it was a constant of the first trace)."""
    def run(m, compile):
        class Scaled(m.nn.Module):
            scale = 2.0

            def forward(self, x):
                return x * self.scale

        f = compile(Scaled())
        x = m.tensor(X)
        out = [f(x).numpy()]
        Scaled.scale = 4.0
        out.append(f(x).numpy())
        return out

    for a, b in zip(run(torchlike, torchlike.compile), run(torch, lambda f: f)):
        np.testing.assert_allclose(a, b, rtol=1e-6)


W_NP = None


def test_numpy_arrays_and_scalars_a_program_reads_are_guarded():
    """A numpy array (a global, a module attribute) or numpy scalar the compiled code reads is
    part of the guard by its contents: a write into it, or a new array, compiles anew. Its
    values were constants of the first trace."""
    def run(m, compile):
        global W_NP
        W_NP = np.ones(3, np.float32)

        class Net(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.offset = np.float32(0.5)
                self.table = np.arange(3, dtype=np.float32)

            def forward(self, x):
                return x * m.from_numpy(W_NP) + float(self.table.sum()) + self.offset

        net = Net()
        f = compile(net)
        x = m.tensor(X)
        out = [f(x).numpy()]
        W_NP[0] = 5
        out.append(f(x).numpy())
        W_NP = np.zeros(3, np.float32)
        out.append(f(x).numpy())
        net.table[1] = 10
        net.offset = np.float32(-2.0)
        out.append(f(x).numpy())
        return out

    for a, b in zip(run(torchlike, torchlike.compile), run(torch, lambda f: f)):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_a_draw_from_pythons_random_module_breaks_the_graph():
    """A compiled function that draws from Python's ``random`` module or numpy's global
    generator runs eagerly (one graph-break warning), so each call draws anew as in torch,
    where dynamo breaks the graph at such a call; the trace's draws are given back (the eager
    calls draw what torch's do). Its draws used to be constants of the program: the same
    "random" number every call. Under fullgraph=True it raises."""
    import random

    def run(m, compile):
        random.seed(0)
        np.random.seed(0)
        f = compile(lambda x: x * random.random() + float(np.random.rand()))
        x = m.tensor(X)
        return [f(x).numpy() for _ in range(3)]

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ours = run(torchlike, torchlike.compile)
    assert len([x for x in w if "random module" in str(x.message)]) == 1
    for a, b in zip(ours, run(torch, lambda f: f)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    f = torchlike.compile(lambda x: x * random.random(), fullgraph=True)
    import pytest
    with pytest.raises(torchlike._compile.Unsupported, match="random module"):
        f(torchlike.tensor(X))


def test_manual_seed_inside_the_function_breaks_the_graph():
    """``torch.manual_seed`` (or a generator's ``manual_seed``) inside a compiled function is a
    graph break, as in torch's dynamo: the function runs eagerly, so every call reseeds and
    draws the same numbers (a program would have replayed its draws from the state it started
    with); under ``fullgraph=True`` it raises."""
    def run(m):
        def f(x):
            m.manual_seed(3)
            return x + m.rand(2)

        def h(x):
            g = m.Generator().manual_seed(5)
            return x + m.rand(2, generator=g)
        kw = {} if m is torchlike else {"backend": "eager"}
        c, ch = m.compile(f, **kw), m.compile(h, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # (the graph-break warning)
            a, b = c(m.zeros(2)), c(m.zeros(2))
            ha, hb = ch(m.zeros(2)), ch(m.zeros(2))
        return a.tolist() == b.tolist(), ha.tolist() == hb.tolist()
    assert run(torchlike) == run(torch) == (True, True)

    def whole(x):
        torchlike.manual_seed(3)
        return x + 1
    # (torch raises its Unsupported too; its failed fullgraph compile is not run here: it
    # leaves dynamo's frame hook behind, which holds references other tests count)
    with pytest.raises(torchlike._dynamo.exc.Unsupported, match="manual_seed"):
        torchlike.compile(whole, fullgraph=True)(torchlike.zeros(2))


def test_a_tensor_the_function_stores_on_a_module_is_the_calls_value():
    """A compiled module whose forward stores a tensor it computed on itself (an attribute, a
    list it appends to: attention maps kept for plotting, a log) leaves the call's values
    there, as torch's dynamo does (the trace's values used to escape and raise on a later
    read): the function runs eagerly, each store made once a call."""
    def run(m):
        class M(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = m.nn.Linear(2, 2)
                self.hist = []
                with m.no_grad():
                    self.lin.weight.copy_(m.tensor([[1.0, 2.0], [3.0, 4.0]]))
                    self.lin.bias.zero_()

            def forward(self, x):
                y = self.lin(x)
                self.last = y.detach() * 2
                self.hist.append(y.sum().detach())
                return y.relu()
        mod = M()
        c = m.compile(mod) if m is torchlike else m.compile(mod, backend="eager")
        outs = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # (the graph-break warning)
            for i in range(3):
                outs.append(c(m.full((1, 2), float(i + 1))).tolist())
        return outs, mod.last.tolist(), [h.item() for h in mod.hist]
    assert run(torchlike) == run(torch)


def test_a_tensor_the_function_stores_in_its_closure_or_globals_is_the_calls_value():
    """A compiled function (or training step) storing a tensor it computed in a list it closes
    over, a dict, an object's attribute or a global leaves the call's values there, as torch's
    dynamo does (the trace's values used to escape and raise on a later read)."""
    def run(m):
        global _STORED
        _STORED = None
        log, store = [], {}

        class Obj:
            pass
        o = Obj()
        lin = m.nn.Linear(2, 1)
        with m.no_grad():
            lin.weight.fill_(1.0)
            lin.bias.fill_(0.0)
        opt = m.optim.SGD(lin.parameters(), lr=0.1)

        def step(x):
            global _STORED
            opt.zero_grad()
            loss = lin(x).sum()
            loss.backward()
            opt.step()
            log.append(loss.detach())
            store["x2"] = x * 2
            o.val = loss.detach() + 1
            _STORED = x.sum()
            return loss
        c = m.compile(step) if m is torchlike else m.compile(step, backend="eager")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # (graph-break and recompile warnings)
            losses = [c(m.full((1, 2), float(i + 1))).item() for i in range(3)]
        return (losses, [t.item() for t in log], store["x2"].tolist(), o.val.item(),
                _STORED.item(), lin.weight.tolist())
    assert run(torchlike) == run(torch)
