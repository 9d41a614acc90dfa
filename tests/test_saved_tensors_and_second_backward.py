"""What a node keeps after its backward, against torch: an op that saves a tensor (an input's
value, an index, a mask, a condition) is freed by a backward without ``retain_graph``, and a
second backward through it raises torch's error; an op torch saves nothing for (views, adds,
sums) may run backward again, and lets its inputs go after the first."""
import contextlib
import gc
import weakref

import numpy as np
import pytest

import torchlike as T
import torchlike.eager as E

torch = pytest.importorskip("torch")


def _cases(m):
    idx = m.tensor([[0, 2], [1, 0]])
    return {
        # ops that save an index, a mask or a condition
        "masked_fill": lambda a: a.masked_fill(a.detach() > 2, 0.0),
        "where": lambda a: m.where(a.detach() > 2, a, 0.0),
        "gather": lambda a: a.gather(1, idx),
        "index_select": lambda a: a.index_select(1, m.tensor([0, 2])),
        "getitem with a tensor": lambda a: a[:, m.tensor([0, 2])],
        "take": lambda a: a.take(m.tensor([0, 4])),
        "take_along_dim": lambda a: m.take_along_dim(a, idx, 1),
        "scatter": lambda a: m.zeros(2, 3).scatter(1, idx, a[:, :2]),
        "index_add": lambda a: m.zeros(2, 3).index_add(1, m.tensor([0, 2]), a[:, :2]),
        "scatter_reduce": lambda a: m.zeros(2, 3).scatter_reduce(1, idx, a[:, :2], "amax"),
        "put": lambda a: a.clone().put(m.tensor([0]), m.tensor([5.0])),
        "index_put": lambda a: a.index_put((m.tensor([0]),), m.tensor(5.0)),
        "vander": lambda a: m.linalg.vander(a[0]),
        # ops that save nothing
        "getitem with slices": lambda a: a[:, 1:],
        "view": lambda a: a.view(6),
        "add": lambda a: a + 1,
        "sum": lambda a: a.sum(0),
        "cumsum": lambda a: a.cumsum(1),
        "flip": lambda a: a.flip(0),
        "expand": lambda a: a[:1].expand(4, 3),
        "repeat_interleave": lambda a: a.repeat_interleave(2, dim=0),
        "tril": lambda a: a.tril(),
        "pad": lambda a: m.nn.functional.pad(a, (1, 1)),
        "roll": lambda a: a.roll(1, 1),
        "clone": lambda a: a.clone(),
        "neg": lambda a: -a,
        "cat": lambda a: m.cat([a, a]),
        "diagonal": lambda a: a.diagonal(),
        "trace": lambda a: a.trace(),
        "unfold": lambda a: a.unfold(1, 2, 1),
        "as_strided": lambda a: a.as_strided((2, 2), (1, 2)),
        "block_diag": lambda a: m.block_diag(a, a),
        "transpose and reshape": lambda a: a.t().reshape(6),
    }


def _twice(m, name):
    a = m.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) + 1, requires_grad=True)
    y = _cases(m)[name](a)
    y.sum().backward()
    try:
        y.sum().backward()
    except RuntimeError as e:
        return "raises", str(e).split(".")[0]
    return "runs", a.grad.numpy().tolist()


@pytest.mark.parametrize("mode", ["strict", "fused"])
@pytest.mark.parametrize("name", list(_cases(torch)))
def test_a_second_backward_raises_where_torch_saved_a_tensor(name, mode):
    with E.fused() if mode == "fused" else E.strict():
        got = _twice(T, name)
    assert got == _twice(torch, name)


def test_an_index_written_in_place_after_the_forward_raises_at_backward():
    """The saved index is version-checked, as torch's SavedVariable."""
    def run(m):
        a = m.ones(2, 3, requires_grad=True)
        idx = m.tensor([[0, 2], [1, 0]])
        y = a.gather(1, idx)
        idx.add_(0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
    run(torch)
    run(T)


def _views_and_sums(m, h):
    """A graph of ops torch saves nothing for (views, adds, sums)."""
    v = (h.view(3, 8).transpose(0, 1) + 1.5).reshape(6, 4)
    return v.sum(0)


@pytest.mark.parametrize("mode", ["strict", "fused"])
def test_a_graph_that_saves_nothing_runs_backward_again_after_its_inputs_are_let_go(mode):
    """Their recomputing backward's floating inputs are let go after the first backward (what
    torch keeps: nothing), and the next run, plain or with ``create_graph``, gives torch's
    gradients."""
    seed = np.random.default_rng(0).standard_normal(24).astype(np.float32)
    res = {}
    for m in (torch, T):
        ctx = (E.fused() if mode == "fused" else E.strict()) if m is T else \
            contextlib.nullcontext()
        with ctx:
            x = m.tensor(seed, requires_grad=True)
            h = x * 2.0
            out = _views_and_sums(m, h).sum(0, keepdim=True)
            g1 = m.autograd.grad(out.sum() + 0, h)
            if m is T:
                node = out.grad_fn.next_functions[0][0]      # SumBackward: released
                assert node.inputs is None and node.vjp.__class__.__name__ == "_Released"
            (g2,) = m.autograd.grad(out.sum(), h, create_graph=True)
            res[m] = [g1[0].detach().numpy(), g2.detach().numpy()]
    np.testing.assert_allclose(res[T][0], res[torch][0], rtol=1e-6)
    np.testing.assert_allclose(res[T][1], res[torch][1], rtol=1e-6)


def test_a_released_add_lets_its_input_tensor_go():
    """After backward, an add's node no longer holds its inputs (torch's AddBackward0 never
    did): an intermediate the program dropped is freed."""
    x = T.ones(5, requires_grad=True)
    a = x * 3.0
    b = a + 1.0
    ref = weakref.ref(a)
    del a
    gc.collect()
    assert ref() is not None                # (held by the add's node until its backward)
    b.sum().backward()
    gc.collect()
    assert ref() is None
    assert b.grad_fn is not None and x.grad.tolist() == [3.0] * 5


def test_a_fused_step_whose_output_outlives_it_materialises_no_intermediate(monkeypatch):
    """A loop that keeps its last output (``out = model(x)`` alive across the step) runs a
    program whose outputs are the same as one that drops it, plus that output: the
    intermediates between are held by released nodes no longer."""
    from torchlike import _fused
    # (the step's segment runs at the zero_grad: a state earlier tests' loops may have changed)
    monkeypatch.setattr(_fused, "_step_waits", [True, 0])
    def run(keep):
        T.manual_seed(0)
        model = T.nn.Sequential(T.nn.Linear(6, 5), T.nn.Tanh(), T.nn.Linear(5, 4))
        opt = T.optim.SGD(model.parameters(), lr=0.1)
        x = T.ones(3, 6)
        counts = []
        for _ in range(5):
            before = T.eager.stats()["fused"]["materialized"]
            out = (model(x).view(12) + 1.0).sum(0, keepdim=True)
            out.square().sum().backward()
            opt.step()
            if not keep:
                del out
            opt.zero_grad()                 # (the step's segment runs here)
            counts.append(T.eager.stats()["fused"]["materialized"] - before)
        return counts
    with E.fused():
        kept, dropped = run(True), run(False)
    assert [k - d for k, d in zip(kept[1:], dropped[1:])] == [1] * 4


def test_a_second_backward_through_fill_diagonal_runs():
    """DIFFERENCES.md: torch's CopySlices node is freed (a second backward raises); torchlike's
    FillBackward0 saves nothing and runs it, with torch's gradient (that of the first)."""
    def run(m):
        a = m.ones(2, 3, requires_grad=True)
        y = a.clone().fill_diagonal_(0.0)
        y.sum().backward()
        first = a.grad.numpy().tolist()
        try:
            y.sum().backward()
        except RuntimeError as e:
            return first, str(e).split(".")[0]
        return first, a.grad.numpy().tolist()
    t_first, t_second = run(torch)
    l_first, l_second = run(T)
    assert t_first == l_first == [[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]]
    assert t_second.startswith("Trying to backward through the graph a second time")
    assert l_second == [[0.0, 2.0, 2.0], [2.0, 0.0, 2.0]]
