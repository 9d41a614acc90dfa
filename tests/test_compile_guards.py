"""What a compiled program bakes in and what it guards: the Python values its code reads
become constants of the program, so a new value compiles anew (as torch.compile's guards
recompile); Python side effects run when the function is traced."""
from __future__ import annotations

import warnings

import numpy as np
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


def test_a_python_side_effect_runs_when_the_function_is_traced():
    """DIFFERENCES.md: torch's dynamo replays a compiled function's Python side effects (an
    append to a list it closes over) on every call; torchlike runs the function's Python only
    when it traces it: the list grows once."""
    def run(m):
        log = []

        def f(x):
            log.append(1)
            return x * 2
        c = m.compile(f)
        out = [float(c(m.ones(1))) for _ in range(3)]
        return out, len(log)
    assert run(torchlike) == ([2.0] * 3, 1)
    assert run(torch) == ([2.0] * 3, 3)


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


def test_a_number_read_from_a_list_is_a_constant_of_the_program():
    """DIFFERENCES.md: numbers held in a list (or set) the compiled function reads are not part
    of its guard key (a list the function appends to would recompile it every call): a changed
    list item keeps the value of the first trace, where torch's guard sees the change."""
    def run(m):
        scale = [2.0]
        f = m.compile(lambda x: x * scale[0]) if m is torchlike else m.compile(
            lambda x: x * scale[0], backend="eager")
        first = float(f(m.ones(1)))
        scale[0] = 3.0
        return first, float(f(m.ones(1)))
    assert run(torch) == (2.0, 3.0)
    assert run(torchlike) == (2.0, 2.0)
