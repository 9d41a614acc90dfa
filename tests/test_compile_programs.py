"""What a steady compiled training step runs, pinned: after warm-up an MLP step and a minGPT-style
step (causal-mask view buffers) trace nothing, compile no XLA program, and run two programs
per call: the step, and its value checks split off to run first (``_step._precheck``)."""
import math

import jax
import numpy as np
import pytest

import torchlike as L
from torchlike import _registry as R
from torchlike._compile import _step



def _mlp():
    nn = L.nn
    L.manual_seed(0)
    model = nn.Sequential(nn.Linear(29, 17), nn.ReLU(), nn.Linear(17, 17), nn.ReLU(),
                          nn.Linear(17, 5))
    opt = L.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)

    def batch():
        return L.tensor(rng.standard_normal((9, 29), np.float32)), L.tensor(
            rng.integers(0, 5, 9))

    def step(x, y):
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step, batch


def _gpt(vocab=13, d=16, n_head=2, t=8):
    nn, F = L.nn, L.nn.functional
    L.manual_seed(0)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(d)
            self.c_attn = nn.Linear(d, 3 * d)
            self.c_proj = nn.Linear(d, d)
            self.register_buffer("bias", L.tril(L.ones(t, t)).view(1, 1, t, t))

        def forward(self, x):
            b, n, c = x.size()
            q, k, v = self.c_attn(self.ln(x)).split(d, dim=2)
            q, k, v = (a.view(b, n, n_head, c // n_head).transpose(1, 2) for a in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = F.softmax(att.masked_fill(self.bias[:, :, :n, :n] == 0, float("-inf")), -1)
            return x + self.c_proj((att @ v).transpose(1, 2).contiguous().view(b, n, c))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(t, d)
            self.h = nn.ModuleList([Block(), Block()])
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            x = self.wte(idx) + self.wpe(L.arange(idx.size(1)))
            for blk in self.h:
                x = blk(x)
            return self.head(x)

    model = GPT()
    opt = L.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)

    def batch():
        return (L.tensor(rng.integers(0, vocab, (3, t))), L.tensor(rng.integers(0, vocab, (3, t))))

    def step(x, y):
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, vocab), y.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step, batch


def _steady(make, compiles):
    step, batch = make()
    c = L.compile(step, fullgraph=True)
    for _ in range(3):
        c(*batch())
    entry = next(iter(c._entries.values()))
    traces = R.trace_total()
    del compiles[:]
    losses = [float(c(*batch())) for _ in range(5)]
    assert all(np.isfinite(losses))
    assert c.trace_count == 1 and c.compile_count == 1     # one program for every step
    assert compiles == []                                    # nothing compiled after warm-up
    assert R.trace_total() == traces                      # no eager op ran or traced
    assert entry.precheck, "the value checks run as their own program before the step"
    return c


def test_steady_mlp_step_runs_one_program_and_its_checks(xla_compiles):
    _steady(_mlp, xla_compiles)


def test_steady_gpt_step_with_view_buffers_runs_one_program_and_its_checks(xla_compiles):
    _steady(_gpt, xla_compiles)


def test_the_step_takes_its_host_numbers_as_one_array(monkeypatch):
    # the optimizer's hyperparameters and the generator's (key, counter) reach the program as
    # one float64 array (jit converts each host argument on its own); the values it unpacks are
    # the ones it reads: a scheduler's new lr changes the step without a retrace
    step, batch = _mlp()
    c = L.compile(step, fullgraph=True)
    c(*batch())
    seen = []
    call = _step._call_program

    def spy(entry, args, *rest):
        seen.append([type(a) for a in jax.tree_util.tree_leaves(args)
                     if not isinstance(a, jax.Array)])
        return call(entry, args, *rest)
    monkeypatch.setattr(_step, "_call_program", spy)
    c(*batch())
    assert seen == [[np.ndarray]]
    opt = next(o for o in _opts(step))
    before = [p.detach().clone() for p in opt.param_groups[0]["params"]]
    opt.param_groups[0]["lr"] = 0.0
    c(*batch())
    for a, p in zip(before, opt.param_groups[0]["params"]):
        np.testing.assert_array_equal(a.numpy(), p.detach().numpy())
    assert c.trace_count == 1


def _opts(step):
    return [cell.cell_contents for cell in step.__closure__
            if isinstance(cell.cell_contents, L.optim.Optimizer)]


def _state_outputs(entry):
    """How many state tensors the step's program writes back."""
    return len(entry.spec[0])


def _eager_reference(make, calls):
    """The losses and parameters of the same steps run eagerly."""
    step, batch = make()
    losses = [float(step(*batch())) for _ in range(calls)]
    return losses, step


def test_zero_grad_at_the_end_returns_no_gradients():
    # the step lets its .grads go (zero_grad(set_to_none=True) at its end): the program does
    # not return them; only the parameters and the optimizer's state are written back
    step, batch = _mlp()
    c = L.compile(step, fullgraph=True)
    losses = [float(c(*batch())) for _ in range(4)]
    entry = next(iter(c._entries.values()))
    n_params = 6
    assert _state_outputs(entry) == n_params + 3 * n_params      # params, exp_avg(_sq), step
    assert len(entry.assumes_fresh) == n_params
    assert c.trace_count == 1 and c.compile_count == 1
    ref, _ = _eager_reference(_mlp, 4)
    np.testing.assert_allclose(losses, ref, rtol=1e-5)


def test_gradients_kept_by_the_step_are_returned():
    # zero_grad at the step's start: the .grads live on after the call and are written back
    nn = L.nn

    def make():
        L.manual_seed(0)
        model = nn.Linear(7, 3)
        opt = L.optim.Adam(model.parameters(), lr=0.1)
        x, y = L.randn(5, 7), L.randn(5, 3)

        def step():
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        return model, step

    model, step = make()
    c = L.compile(step, fullgraph=True)
    for _ in range(3):
        c()
    grads = [p.grad.clone() for p in model.parameters()]
    emodel, estep = make()
    for _ in range(3):
        estep()
    for g, p in zip(grads, emodel.parameters()):
        np.testing.assert_allclose(g.numpy(), p.grad.numpy(), rtol=1e-5, atol=1e-7)
    assert c.trace_count == 1


def test_a_gradient_that_is_not_a_fresh_zero_gets_a_program_of_its_own():
    # the first calls' program drops the fresh zero .grads; a call that finds real .grads
    # (an eager backward ran before it) accumulates into them as eager execution does
    nn = L.nn

    def make():
        L.manual_seed(0)
        model = nn.Linear(4, 2)
        opt = L.optim.SGD(model.parameters(), lr=0.1)
        x, y = L.randn(6, 4), L.randn(6, 2)

        def step():
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            kept = [p.grad.clone() for p in model.parameters()]
            opt.step()
            opt.zero_grad()
            return loss, kept
        return model, step, x, y

    model, step, x, y = make()
    c = L.compile(step, fullgraph=True)
    c(), c()
    ((model(x) - y) ** 2).sum().backward()         # real .grads before the next call
    _, kept = c()
    emodel, estep, ex, ey = make()
    estep(), estep()
    ((emodel(ex) - ey) ** 2).sum().backward()
    _, ekept = estep()
    for a, b in zip(kept, ekept):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)
    for a, b in zip(model.parameters(), emodel.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert c.trace_count == 2      # the fresh-zero program and the one for real gradients


def test_a_gradient_the_step_keeps_a_reference_to_is_written_back():
    # a reference taken during the step outlives it: that .grad is returned and written back
    nn = L.nn

    def make():
        L.manual_seed(0)
        model = nn.Linear(4, 2)
        opt = L.optim.SGD(model.parameters(), lr=0.1)
        x, y = L.randn(6, 4), L.randn(6, 2)
        seen = []

        def step():
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            seen.append(model.weight.grad)
            opt.step()
            opt.zero_grad()
            return loss
        return step, seen

    step, seen = make()
    c = L.compile(step, fullgraph=True)
    c()
    estep, eseen = make()
    estep()
    # (the bias's .grad is let go: only it is dropped)
    assert len(next(iter(c._entries.values())).assumes_fresh) == 1
    np.testing.assert_allclose(seen[0].numpy(), eseen[0].numpy(), rtol=1e-5, atol=1e-7)
    assert float(seen[0].abs().sum()) > 0


def test_the_step_overwrites_the_state_it_replaces_and_spares_what_others_hold():
    # the program takes over the buffers of the parameters and the optimizer's state it writes
    # back (each held by its tensor alone), as a hand-written JAX step donates its state; an
    # array someone else holds is not taken (here through JAX interop): it keeps its values
    import torchlike.interop
    step, batch = _mlp()
    c = L.compile(step, fullgraph=True)
    losses = [float(c(*batch())) for _ in range(2)]
    entry = next(iter(c._entries.values()))
    params = list(_opts(step)[0].param_groups[0]["params"])
    where = [p._data.unsafe_buffer_pointer() for p in params]
    losses.append(float(c(*batch())))
    # (overwritten in place: without donation the new values get buffers of their own)
    assert [p._data.unsafe_buffer_pointer() for p in params] == where
    held = torchlike.interop.jax_view(params[0])
    kept = np.array(held)
    losses += [float(c(*batch())) for _ in range(2)]
    assert not held.is_deleted()
    np.testing.assert_array_equal(np.asarray(held), kept)
    assert tuple(entry.spec[0]) in entry.program[2]   # (the donating program ran)
    ref, _ = _eager_reference(_mlp, 5)
    np.testing.assert_allclose(losses, ref, rtol=1e-5)


def test_a_failing_check_after_the_program_leaves_the_state_readable(monkeypatch):
    # a step whose value checks are read after its program (here: not split off) donates
    # nothing: a failing check writes nothing back and the parameters keep their arrays
    monkeypatch.setattr(_step, "_precheck", lambda entry, args: False)
    step, batch = _mlp()
    c = L.compile(step, fullgraph=True)
    for _ in range(2):
        c(*batch())
    params = list(_opts(step)[0].param_groups[0]["params"])
    before = [p.detach().numpy().copy() for p in params]
    x, _y = batch()
    bad = L.full((9,), 7)
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        c(x, bad)
    for b, p in zip(before, params):
        np.testing.assert_array_equal(b, p.detach().numpy())
    assert () in next(iter(c._entries.values())).program[2]
