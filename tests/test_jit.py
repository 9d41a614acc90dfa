"""torch.jit as a thin layer: script/trace compute the same as eager; decorators; save/load
raise a clear error."""
import io
import typing

import numpy as np
import pytest
import torch

import torchlike

from oracle import assert_close

X = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)


def _model(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Linear(3, 4), m.nn.ReLU(), m.nn.Linear(4, 2))


def _copy(src, dst):
    dst.load_state_dict({k: torchlike.tensor(v.detach().numpy()) for k, v in src.state_dict().items()})


def test_script_and_trace_compute_the_same():
    ref = _model(torch)
    ours = _model(torchlike)
    _copy(ref, ours)
    x_t, x_o = torch.tensor(X), torchlike.tensor(X)
    for wrap in ("script", "trace"):
        r = getattr(torch.jit, wrap)(ref, *(() if wrap == "script" else (x_t,)))
        o = getattr(torchlike.jit, wrap)(ours, *(() if wrap == "script" else (x_o,)))
        assert_close(o(x_o), r(x_t))
        o(x_o).sum().backward()

    def f(a, b):
        return (a * b).relu().sum(0)
    for m, x in ((torch, x_t), (torchlike, x_o)):
        assert_close(m.jit.script(f)(x, x), f(x, x))
        assert_close(m.jit.trace(f, (x, x))(x, x), f(x, x))
    assert_close(torchlike.jit.trace_module(ours, {"forward": x_o})(x_o), ref(x_t))


def test_script_trace_save_and_load_warn_as_deprecated_as_torch():
    import warnings

    def caught(m, call):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                call(m)
            except NotImplementedError:     # (torchlike has no TorchScript archives)
                pass
        return [(r.category.__name__, str(r.message)) for r in w
                if issubclass(r.category, DeprecationWarning)]

    for call in (lambda m: m.jit.script(m.nn.Linear(2, 2)),
                 lambda m: m.jit.trace(lambda x: x * 2, (m.ones(2),)),
                 lambda m: m.jit.save(m.jit.script(m.nn.Linear(2, 2)), io.BytesIO())):
        assert caught(torchlike, call) == caught(torch, call)[:len(caught(torchlike, call))]
        assert caught(torchlike, call)


def test_decorators_and_queries():
    for m in (torch, torchlike):
        assert m.jit.is_scripting() is False and m.jit.is_tracing() is False
        assert m.jit.Final is typing.Final
        assert m.jit.annotate(int, 3) == 3
        assert m.jit.isinstance([1], typing.List[int])
        assert not m.jit.isinstance([1], typing.List[str])
        assert m.jit.isinstance({"a": 1}, typing.Dict[str, int])

        @m.jit.ignore
        def g(x):
            return x + 1

        @m.jit.ignore(drop=True)
        def h(x):
            return x + 2

        @m.jit.unused
        def u(x):
            return x + 3

        @m.jit.export
        def e(x):
            return x + 4
        assert (g(1), h(1), u(1), e(1)) == (2, 3, 4, 5)

        class M(m.nn.Module):
            c: m.jit.Final[int] = 2

            def __init__(self):
                super().__init__()
                self.k = m.jit.Attribute(3, int)

            def forward(self, x):
                return x * self.k * self.c
        out = m.jit.script(M())(m.ones(2))
        assert out.tolist() == [6.0, 6.0]
        fut = m.jit.fork(lambda a: a * 2, m.ones(1))
        assert m.jit.wait(fut).tolist() == [2.0]
        assert m.jit.freeze(m.jit.script(M().eval())) is not None


def test_script_module_subclass():
    class S(torchlike.jit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.lin = torchlike.nn.Linear(2, 2)

        @torchlike.jit.script_method
        def forward(self, x):
            return self.lin(x)
    s = S()
    assert isinstance(s, torchlike.nn.Module)
    assert s(torchlike.ones(1, 2)).shape == (1, 2)


def test_save_load_raise_naming_alternative(tmp_path):
    m = torchlike.jit.script(torchlike.nn.Linear(2, 2))
    with pytest.raises(NotImplementedError, match="state_dict"):
        torchlike.jit.save(m, str(tmp_path / "m.pt"))
    with pytest.raises(NotImplementedError, match="torchlike.load"):
        torchlike.jit.load(str(tmp_path / "m.pt"))


def test_annotations_module_names():
    """``from torch.jit.annotations import List`` (timm's densenet): the typing names and the
    BroadcastingList annotations."""
    import importlib
    ours = importlib.import_module("torchlike.jit.annotations")
    theirs = importlib.import_module("torch.jit.annotations")
    for name in ("Any", "Dict", "List", "Optional", "Tuple", "Union"):
        assert getattr(ours, name) is getattr(theirs, name), name
    for name in ("BroadcastingList1", "BroadcastingList2", "BroadcastingList3"):
        assert getattr(ours, name)[int] is getattr(theirs, name)[int] is None
    assert ours.Future is torchlike.jit.Future
