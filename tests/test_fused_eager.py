"""Fused eager mode: ops recorded into segments that run as one cached XLA program at a host read
or at the end of a backward.

Pinned here: a steady training step runs one program and traces nothing new; the cut reasons of
a logging loop (and of one that reads nothing: a backward ends a step's segment); values equal
strict mode's (and torch's); hooks, views, version counters and errors keep eager semantics;
value checks of computed inputs run with the segment; the switches."""
import threading

import numpy as np
import pytest
import torch as T

import torchlike as torch
import torchlike.interop
import torchlike.eager as E
from torchlike import _fused


def _deep(t):
    """``t`` through five more ops: a value whose computation is too long to run at a value
    check (``_fused.PARTIAL_MAX``), so the check is recorded with the segment."""
    for _ in range(5):
        t = t + 0
    return t


def _mlp(m):
    m.manual_seed(0)
    nn = m.nn
    model = nn.Sequential(nn.Linear(31, 19), nn.ReLU(), nn.Linear(19, 19), nn.ReLU(),
                          nn.Linear(19, 6))
    opt = m.optim.Adam(model.parameters(), lr=1e-2)
    rng = np.random.default_rng(1)
    x = m.tensor(rng.standard_normal((9, 31), np.float32))
    y = m.tensor(rng.integers(0, 6, 9))

    def step():
        loss = m.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()
    return model, step


def _gpt(m, d=16, heads=2, seq=8, vocab=11):
    """A minGPT-style block: causal-mask buffer that is a view, AdamW, targets sliced from the
    batch (a value check reads them)."""
    m.manual_seed(0)
    nn, F = m.nn, m.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.ln = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.head = nn.Linear(d, vocab)
            self.register_buffer("mask", m.tril(m.ones(seq, seq)).view(1, 1, seq, seq))

        def forward(self, idx):
            b, t = idx.shape
            x = self.tok(idx)
            q, k, v = self.qkv(self.ln(x)).split(d, dim=2)
            q = q.view(b, t, heads, d // heads).transpose(1, 2)
            k = k.view(b, t, heads, d // heads).transpose(1, 2)
            v = v.view(b, t, heads, d // heads).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) / (d // heads) ** 0.5
            att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf")).softmax(-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, d)
            return self.head(x + y)

    model = Net()
    opt = m.optim.AdamW(model.parameters(), lr=1e-2)
    data = m.tensor(np.random.default_rng(2).integers(0, vocab, (4, seq + 1)))

    def step():
        x, y = data[:, :-1], data[:, 1:]
        logits = model(x)
        loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()
    return model, step


@pytest.mark.parametrize("make", [_mlp, _gpt], ids=["mlp", "gpt"])
def test_steady_step_is_one_program_and_traces_nothing(make, fused):
    _model, step = make(torch)
    for _ in range(_fused.FUSE_AFTER + 1):
        step()              # (the first step's structure differs: its optimizer state is made)
    before = _fused.stats()
    for _ in range(4):
        step()
    after = _fused.stats()
    assert after["segments"] - before["segments"] == 4      # one program per step
    assert after["graph_backwards"] - before["graph_backwards"] == 4    # one call per backward
    assert after["fused"] - before["fused"] == 4
    assert after["compiles"] == before["compiles"]          # no new program
    assert after["traces"] == before["traces"]              # nothing retraced
    # the only full cut of a logging loop is its backward's end (dispatched, not waited for):
    # the loss.item() after the optimizer's step finds the loss computed
    new_cuts = {k: after["cuts"].get(k, 0) - before["cuts"].get(k, 0) for k in after["cuts"]}
    full = {k: v for k, v in new_cuts.items() if v and not k.startswith("partial")}
    assert full == {"backward": 4}, full
    assert after["dropped"] > before["dropped"]             # intermediates never materialised


@pytest.mark.parametrize("make", [_mlp, _gpt], ids=["mlp", "gpt"])
def test_losses_equal_strict_mode_and_torch(make):
    ref_model, torch_step = make(T)
    weights = {k: torch.tensor(v.detach().numpy()) for k, v in ref_model.state_dict().items()}
    ref = [torch_step() for _ in range(6)]
    model, strict_step = make(torch)
    model.load_state_dict(weights)
    strict = [strict_step() for _ in range(6)]
    with E.fused():
        model, fused_step = make(torch)
        model.load_state_dict(weights)
        fused_losses = [fused_step() for _ in range(6)]
    np.testing.assert_allclose(fused_losses, strict, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fused_losses, ref, rtol=1e-4, atol=1e-5)


def test_a_split_read_runs_its_part_and_dispatches_the_rest(monkeypatch):
    """With the split on (accelerators' default), a read whose value needs part of a repeating
    segment runs that part as one program and dispatches the rest as a second, unwaited: the
    same values as strict mode, two programs per read, nothing retraced."""
    def work(m, w):
        u = ((w @ w).tanh() @ w).relu() * 2 + 1             # never read: the rest
        v = ((m.arange(8.0) * 3 + 1).exp() + 1).log() - 1  # read: its own part (5 calls)
        return u, v

    w0 = torch.tensor(np.random.default_rng(3).standard_normal((8, 8), np.float32))
    with E.strict():
        strict = [work(torch, w0 + i) for i in range(6)]
    monkeypatch.setattr(_fused, "SPLIT", True)
    with E.fused():
        got, reads = [], []
        for i in range(6):
            if i == _fused.FUSE_AFTER:          # (compiled: from the third meeting)
                before = _fused.stats()
            u, v = work(torch, w0 + i)
            reads.append(v.tolist())
            got.append(u)
        after = _fused.stats()
        np.testing.assert_allclose([u.tolist() for u in got],
                                   [u.tolist() for u, _ in strict], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(reads, [v.tolist() for _, v in strict], rtol=1e-6)
    assert after["split"] - before["split"] == 3
    assert after["segments"] - before["segments"] == 3
    assert after["traces"] == before["traces"]


def test_a_loop_that_reads_nothing_runs_a_program_per_step(fused):
    """A backward's end dispatches the pending segment (not waited for): a training loop that
    never reads a value runs one program per step instead of growing to the segment bound, and
    so does gradient accumulation without an optimizer."""
    _model, step = _mlp(torch)
    for _ in range(3):
        step()
    model, _ = _mlp(torch)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.ones(5, 31)
    before = _fused.stats()
    for _ in range(6):
        loss = model(x).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    after = _fused.stats()
    assert after["segments"] - before["segments"] == 6
    assert after["cuts"]["backward"] - before["cuts"].get("backward", 0) == 6
    assert after["compiles"] - before["compiles"] == 1       # its third meeting compiles
    assert loss.item() > 0
    before = _fused.stats()
    for _ in range(3):                      # accumulation without a torchlike optimizer
        model(x).square().mean().backward()
    after = _fused.stats()
    assert after["cuts"].get("backward", 0) - before["cuts"].get("backward", 0) == 3


def test_the_optimizer_step_is_recorded_while_the_backward_runs(fused):
    """A backward's end dispatches the pending segment: the optimizer's step and ``zero_grad``
    are recorded after it (the update joins the next step's segment), so the loss read after
    the step is no cut. A loop that zeroes first and one that zeroes after the step cut alike
    and give strict mode's losses; a parameter read after the last step runs its pending
    update and gives strict mode's weights."""
    def run(zero_first, steps=6):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(7, 5), torch.nn.Tanh(), torch.nn.Linear(5, 1))
        opt = torch.optim.Adam(model.parameters(), lr=0.05)
        x = torch.linspace(-1, 1, 21).reshape(3, 7)
        losses, cuts, pending = [], [], []
        for _ in range(steps):
            before = dict(_fused.stats()["cuts"])
            if zero_first:
                opt.zero_grad()
            loss = model(x).square().mean()
            loss.backward()
            pending.append(len(_fused._seg.calls))
            opt.step()
            if not zero_first:
                opt.zero_grad()
                assert all(p.grad is None for p in model.parameters())
            losses.append(loss.item())
            after = _fused.stats()["cuts"]
            cuts.append({k: v - before.get(k, 0) for k, v in after.items()
                         if v != before.get(k, 0)})
        left = len(_fused._seg.calls)
        return losses, cuts, pending, left, model[0].weight.tolist()

    with E.strict():
        strict_losses, _, _, _, strict_weight = run(zero_first=False)
    for zero_first in (False, True):
        losses, cuts, pending, left, weight = run(zero_first)
        assert cuts == [{"backward": 1}] * 6, cuts
        assert pending == [0] * 6           # (dispatched at the backward's end)
        assert left > 0                     # (the last step's update, until the read)
        assert losses == pytest.approx(strict_losses, rel=1e-6)
        np.testing.assert_allclose(weight, strict_weight, rtol=1e-6, atol=1e-7)


def test_a_segment_cut_by_its_bound_is_never_compiled(fused, monkeypatch):
    """A segment cut at its size bound is an arbitrary window of a longer run: it replays
    call by call however often its structure comes back (compiling a 4096-call window took
    minutes)."""
    monkeypatch.setattr(_fused, "MAX_CALLS", 8)
    before = _fused.stats()
    x = torch.ones(3)
    for _ in range(8 * 5):
        x = x * 1.5 - 0.25
    assert x.tolist() == pytest.approx([(1.0 - 0.5) * 1.5 ** 40 + 0.5] * 3, rel=1e-5)
    after = _fused.stats()
    assert after["cuts"]["segment bound"] - before["cuts"].get("segment bound", 0) >= 4
    assert after["compiles"] == before["compiles"]


def test_a_segment_longer_than_the_compile_bound_replays(fused, monkeypatch):
    """A repeating segment of more than ``COMPILE_MAX_CALLS`` calls replays call by call (XLA's
    compile time grows faster than a program's size); one within the bound compiles."""
    def steps(n):
        for _ in range(FUSE + 2):
            x = torch.ones(3)
            for _ in range(n):
                x = x * 1.5 - 0.25
            x.tolist()
    FUSE = _fused.FUSE_AFTER
    monkeypatch.setattr(_fused, "COMPILE_MAX_CALLS", 12)
    before = _fused.stats()
    steps(7)                                # (14 calls a segment)
    assert _fused.stats()["compiles"] == before["compiles"]
    steps(5)                                # (10 calls)
    assert _fused.stats()["compiles"] > before["compiles"]


def test_a_read_that_needs_the_whole_segment_is_not_split(fused, monkeypatch):
    monkeypatch.setattr(_fused, "SPLIT", True)
    before = _fused.stats()
    for _ in range(_fused.FUSE_AFTER + 1):
        x = torch.arange(4.0) * 2
        y = ((x + 1) * (x - 1) + 1) * 2 - 3    # every pending call is an ancestor of y
        assert y.tolist() == [-3.0, 5.0, 29.0, 69.0]
    after = _fused.stats()
    assert after["fused"] - before["fused"] >= 1
    assert after["split"] == before["split"]


def test_a_long_loop_holds_no_old_segments_and_a_bounded_program_cache(fused):
    import gc
    _model, step = _mlp(torch)
    for _ in range(_fused.FUSE_AFTER + 1):
        step()
    programs = _fused.stats()["programs"]
    for _ in range(40):
        step()
    gc.collect()
    alive = [o for o in gc.get_objects() if isinstance(o, _fused._Segment) and o.calls]
    assert len(alive) <= 1                      # only the pending one holds calls
    assert _fused.stats()["programs"] == programs


def test_a_value_collected_while_its_segment_runs_is_no_error(fused, monkeypatch):
    """A tensor alive when its segment is cut, freed by a garbage collection while the segment
    runs (a reference cycle held it): the run goes on (the program is made for the outputs that
    were live at the cut) and the read gets its value."""
    import gc
    run = _fused._run_segment

    def collecting(*args, **kw):
        gc.collect()
        return run(*args, **kw)
    monkeypatch.setattr(_fused, "_run_segment", collecting)
    x = torch.arange(6.0)
    for _ in range(_fused.FUSE_AFTER + 1):          # (the last meeting compiles its program)
        a = _deep(x * 2)                            # (a read of it runs the segment)
        cycle = [a + 1]
        cycle.append(cycle)
        b = a.exp()
        del cycle
        np.testing.assert_allclose(b.numpy(), np.exp(np.arange(6.0) * 2), rtol=1e-6)
    assert _fused.stats()["compiles"] >= 1


def test_ops_return_deferred_values_until_a_host_read(fused):
    x = torch.arange(6.0).reshape(2, 3)
    y = (x * 2 + 1).exp().sum(1)
    assert isinstance(y._d, _fused.Deferred) and y._d.value is None
    assert y.shape == (2,) and y.dtype == torch.float32    # metadata needs no value
    np.testing.assert_allclose(y.numpy(), np.exp(np.arange(6.0).reshape(2, 3) * 2 + 1).sum(1),
                               rtol=1e-6)


def _lecture_batch(m, data, ix, block=4):
    """The GPT lecture's ``get_batch``: a slice of ``data`` at each index of ``ix``."""
    x = m.stack([data[i:i + block] for i in ix])
    y = m.stack([data[i + 1:i + block + 1] for i in ix])
    return x, y


def test_index_arithmetic_on_a_tensors_elements_runs_at_once(fused):
    """``i + block`` on an element of a computed tensor, read at once as a slice bound, runs when
    called (an op on concrete arrays of at most one element): a batch made element by element
    cuts its segment once, not once per bound. Arrays of more elements, or pending ones, are
    recorded as before."""
    data = torch.arange(100) * 3
    ix = torch.randint(0, 90, (8,))
    before = _fused.stats()["cuts"].copy()
    x, y = _lecture_batch(torch, data, ix)
    cuts = _fused.stats()["cuts"]
    # (per list: the first element's bounds, ``i`` and the ``i + 4`` recorded while ``i`` was
    # pending; one cut per bound, 32, without the rule)
    assert sum(cuts.values()) - sum(before.values()) <= 4, dict(cuts)
    i = torch.tensor(5)
    assert not isinstance((i + 1)._d, _fused.Deferred)           # (ran now)
    assert not isinstance(ix[0]._d, _fused.Deferred)   # (an element of a concrete tensor)
    assert isinstance(((ix * 1)[0] + 1)._d, _fused.Deferred)      # (a pending element)
    assert isinstance((data + 1)._d, _fused.Deferred)             # (100 elements: recorded)
    assert isinstance((i + torch.zeros(2, dtype=torch.int64))._d, _fused.Deferred)
    with E.strict():
        want = _lecture_batch(torch, data, torch.tensor(ix.tolist()))
    np.testing.assert_array_equal(x.numpy(), want[0].numpy())
    np.testing.assert_array_equal(y.numpy(), want[1].numpy())
    ref = T.arange(100) * 3
    ti = T.tensor(ix.tolist())
    np.testing.assert_array_equal(x.numpy(), _lecture_batch(T, ref, ti)[0].numpy())


def test_hooks_see_real_gradients_and_a_computing_hook_does_not_cut(fused):
    x = torch.ones(3, requires_grad=True)
    seen = []
    x.register_hook(lambda g: g * 3)
    y = (x * 2).sum()
    y.register_hook(lambda g: seen.append(g) or None)
    before = dict(_fused.stats()["cuts"])
    y.backward()
    new = {k: v - before.get(k, 0) for k, v in _fused.stats()["cuts"].items()
           if v != before.get(k, 0)}
    assert new == {"backward": 1}   # no hook read a value: the backward's end is the only cut
    assert x.grad.tolist() == [6.0, 6.0, 6.0]
    assert seen[0].item() == 1.0


def test_a_hook_that_reads_a_value_cuts_with_its_reason(fused):
    x = torch.ones(2, requires_grad=True)
    got = []
    x.register_hook(lambda g: got.append(g.sum().item()))
    before = _fused.stats()["cuts"]
    (x * 5).sum().backward()
    assert got == [10.0]
    # (a read whose value needs a few calls runs only those: a "partial: item" cut)
    new = [k for k, v in _fused.stats()["cuts"].items() if v > before.get(k, 0)]
    assert any(k.startswith(("item ", "partial: item ")) for k in new), new


def test_views_write_through_and_version_counters(fused):
    x = torch.zeros(4)
    v = x[1:3]
    v.add_(5)
    assert x.tolist() == [0.0, 5.0, 5.0, 0.0]
    a = torch.ones(3, requires_grad=True)
    b = a * 1
    c = b.sin()
    b.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.sum().backward()


def test_shape_errors_surface_where_the_op_is_called(fused):
    with pytest.raises(RuntimeError, match="must match the size"):
        torch.ones(3) + torch.ones(4)


def test_value_checks_of_computed_inputs_raise_torchs_error_where_the_segment_runs(fused):
    """Class indices, embedding indices and binary_cross_entropy's [0, 1] range, computed in the
    segment, are checked when it runs: nothing is read where the op is called, and the error
    is torch's, raised at the read (a concrete input is still checked at the op)."""
    F = torch.nn.functional
    torch.sync()
    before = dict(_fused.stats()["cuts"])
    logits = _deep(torch.zeros(4, 3))
    ok = F.cross_entropy(logits, _deep(torch.tensor([0, 1, 2, 1])))
    emb = torch.nn.Embedding(5, 2)
    e = emb(_deep(torch.tensor([1, 4])))
    b = F.binary_cross_entropy(torch.sigmoid(logits), _deep(torch.ones(4, 3) * 0.5))
    assert _fused.stats()["cuts"] == before
    assert ok.item() == pytest.approx(float(np.log(3)))
    assert e.shape == (2, 2) and b.item() == pytest.approx(float(np.log(2)))
    cases = [
        (lambda m: m.nn.functional.cross_entropy(m.zeros(4, 3) * 2,
                                                 _deep(m.tensor([0, 1, 2, 7]))), IndexError),
        (lambda m: m.nn.functional.embedding(_deep(m.tensor([1, 9])), m.ones(5, 2)),
         IndexError),
        (lambda m: m.nn.functional.binary_cross_entropy(_deep(m.zeros(3) + 2),
                                                        m.ones(3) * 0.5), RuntimeError),
        (lambda m: m.nn.functional.binary_cross_entropy(m.zeros(3) + 0.5,
                                                        _deep(m.ones(3) * -1)), RuntimeError),
    ]
    for make, cls in cases:
        with pytest.raises(cls) as expected:
            make(T)
        out = make(torch)                   # recorded: no error yet
        with pytest.raises(cls) as info:
            out.sum().item()
        assert str(info.value) == str(expected.value)
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):     # concrete: at the op
        F.cross_entropy(logits, torch.tensor([0, 1, 2, 7]))
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):     # a few calls: too
        F.cross_entropy(logits, torch.tensor([0, 1, 2, 7]) + 0)


def test_segment_bound_cuts(fused, monkeypatch):
    monkeypatch.setattr(_fused, "MAX_CALLS", 10)
    x = torch.ones(2)
    for _ in range(25):
        x = x + 1
    assert _fused.stats()["cuts"].get("segment bound", 0) >= 2
    assert x.tolist() == [26.0, 26.0]


def test_another_thread_reads_a_pending_value(fused):
    x = torch.arange(4.0) * 3
    out = []
    t = threading.Thread(target=lambda: out.append(x.tolist()))
    t.start()
    t.join(30)
    assert out == [[0.0, 3.0, 6.0, 9.0]]


def test_compiled_call_runs_the_pending_segment_first(fused):
    f = torch.compile(lambda a: a * 2 + 1)
    x = torch.ones(3) * 4                                   # pending
    y = f(x)
    assert y.tolist() == [9.0, 9.0, 9.0]
    assert _fused.stats()["cuts"].get("torchlike.compile call", 0) >= 1


def test_mode_switches():
    previous = E.set_mode("strict")         # (the suite may run with TORCHLIKE_EAGER=fused)
    try:
        with E.fused():
            assert E.mode() == "fused"
            y = torch.ones(2) + 1
            with E.strict():
                assert E.mode() == "strict"
                z = y * 2                                   # a pending input resolves
                assert z.tolist() == [4.0, 4.0]
            assert E.mode() == "fused"
        assert E.mode() == "strict"
        assert y.tolist() == [2.0, 2.0]
        with pytest.raises(ValueError, match="'fused' or 'strict'"):
            E.set_mode("lazy")
    finally:
        E.set_mode(previous)


def test_environment_variable_selects_the_mode(monkeypatch):
    monkeypatch.setenv("TORCHLIKE_EAGER", "eventually")
    with pytest.raises(ValueError, match="TORCHLIKE_EAGER"):
        E._mode_from_environment()
    monkeypatch.setenv("TORCHLIKE_EAGER", "fused")
    try:
        E._mode_from_environment()
        assert E.mode() == "fused"
    finally:
        E.set_mode("strict")


def test_sync_runs_pending_ops(fused):
    x = torch.ones(3) * 7
    assert x._d.value is None
    torch.sync()
    assert x._d.value is not None
    assert _fused.stats()["cuts"].get("sync", 0) >= 1


def test_detach_and_zeroing_grads_read_nothing(fused):
    """``detach()`` (GAN steps, batch norm's statistics) and ``zero_grad(set_to_none=False)``
    keep pending values pending: neither is a cut."""
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    (model(torch.ones(4, 3)).sum()).backward()
    torch.sync()
    before = dict(_fused.stats()["cuts"])
    y = model(torch.ones(4, 3)) * 2
    z = y.detach()
    assert z._d.__class__ is _fused.Deferred and z._d.value is None
    opt.zero_grad(set_to_none=False)
    model.zero_grad(set_to_none=False)
    assert _fused.stats()["cuts"] == before
    assert z.tolist() == y.tolist()
    assert model.weight.grad.abs().sum().item() == 0.0


def test_normal_draws_and_initializers_are_not_cuts(fused):
    """A host-made normal draw and nn.init's draws run at once: nothing is recorded only to be
    read back (each was a cut)."""
    torch.sync()
    before = dict(_fused.stats()["cuts"])
    torch.manual_seed(0)
    a = torch.randn(4, 3)
    lin = torch.nn.Linear(3, 5)
    torch.nn.init.normal_(lin.weight)
    assert _fused.stats()["cuts"] == before
    with E.strict():
        torch.manual_seed(0)
        b = torch.randn(4, 3)
    assert a.tolist() == b.tolist()


def test_deepcopy_parameters_and_an_ema_update_read_nothing(fused):
    """copy.deepcopy of a module, nn.Parameter of a pending tensor and an EMA
    (AveragedModel.update_parameters) keep pending values pending: its only read is torch's own
    (n_averaged)."""
    import copy
    S = torch.optim.swa_utils
    model = torch.nn.Linear(3, 2)
    ema = S.AveragedModel(model, multi_avg_fn=S.get_ema_multi_avg_fn(0.9))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        model(torch.ones(4, 3)).square().sum().backward()
        opt.step()
        opt.zero_grad()
        ema.update_parameters(model)
    torch.sync()
    before = dict(_fused.stats()["cuts"])
    model(torch.ones(4, 3)).square().sum().backward()
    opt.step()
    with torch.no_grad():
        model.weight.mul_(0.5)              # (pending again after the step's segment ran)
    twin = copy.deepcopy(model)
    p = torch.nn.Parameter(model.weight * 2)
    ema.update_parameters(model)
    new = {k: v - before.get(k, 0) for k, v in _fused.stats()["cuts"].items()
           if v != before.get(k, 0)}
    assert new.pop("backward") == 1
    assert all("swa_utils" in k for k in new) and sum(new.values()) <= 1, new
    assert twin.weight._d.__class__ is _fused.Deferred
    assert p.tolist() == (model.weight * 2).tolist()


def test_a_deferred_index_check_raises_torchs_error_where_its_segment_runs(fused):
    """An integer index computed in the segment is not read when used: its bounds are checked
    when the segment runs. The error is torch's (class and message) with a note naming the
    line that recorded the op; what was recorded before it has its values, what came after
    it raises the same error."""
    x = torch.arange(10.0)
    before = x * 3                          # recorded before the failing index
    idx = _deep(torch.tensor([1, 2, 3]) * 5)    # 10 and 15: out of bounds
    y = x[idx]
    after = y * 2
    with pytest.raises(IndexError) as expected:
        T.arange(10.0)[_deep(T.tensor([1, 2, 3]) * 5)]
    with pytest.raises(IndexError) as info:
        after.sum().item()
    assert str(info.value) == str(expected.value)
    assert "test_fused_eager.py" in info.value.__notes__[0]
    assert before.tolist() == [3.0 * i for i in range(10)]
    with pytest.raises(IndexError, match="index 10 is out of bounds"):
        after.tolist()
    assert _fused.stats()["check_errors"] >= 1


def test_a_passing_deferred_check_reads_nothing_and_blocks_partial_reads(fused):
    """An in-bounds computed index cuts nothing; a read of a value gathered with it runs the
    whole segment (a partial read would skip the check)."""
    torch.sync()
    before = dict(_fused.stats())
    x = torch.arange(10.0) * 2
    idx = _deep(torch.tensor([0, 4, 9]))
    y = x[idx]
    assert _fused.stats()["cuts"] == before["cuts"]
    assert y.sum().item() == 26.0
    after = _fused.stats()
    assert after["partial"] == before["partial"]
    assert after["segments"] == before["segments"] + 1
    with E.strict():
        strict = (torch.arange(10.0) * 2)[torch.tensor([0, 4, 9])]
    assert y.tolist() == strict.tolist()


def test_multinomial_checks_its_probabilities_with_the_segment(fused):
    """Sampling from computed probabilities (a generation loop) reads nothing; invalid ones
    raise torch's error when the segment runs."""
    torch.sync()
    before = dict(_fused.stats()["cuts"])
    probs = _deep(torch.softmax(torch.arange(10.0).reshape(2, 5), -1))
    s = torch.multinomial(probs, 2)
    assert _fused.stats()["cuts"] == before
    assert s.shape == (2, 2) and all(0 <= i < 5 for i in sum(s.tolist(), []))
    bad = torch.multinomial(_deep(torch.tensor([1.0, 2.0]) * -1), 1)
    with pytest.raises(RuntimeError) as info:
        bad.tolist()
    with pytest.raises(RuntimeError) as expected:
        T.multinomial(T.tensor([1.0, 2.0]) * -1, 1)
    assert str(info.value) == str(expected.value)


def test_suspended_regions_of_two_threads_close_in_any_order(fused):
    """A thread's host computation suspends recording while another's is suspended too: the
    first to close must not resume recording inside the other's region (its calls would come
    back deferred), and the last to close resumes it (fused mode is not left off for good)."""
    import threading
    entered, closed_a = threading.Event(), threading.Event()
    seen = {}

    def a():
        with _fused.suspended():
            entered.wait(10)
        closed_a.set()

    def b():
        with _fused.suspended():
            entered.set()
            closed_a.wait(10)
            seen["inside"] = _fused.ACTIVE
            seen["value"] = torch.ones(2) * 3      # runs now: a concrete value
    ta, tb = threading.Thread(target=a), threading.Thread(target=b)
    ta.start()
    tb.start()
    ta.join(20)
    tb.join(20)
    assert seen["inside"] is False
    assert seen["value"]._d.__class__ is not _fused.Deferred
    assert _fused.ACTIVE and E.mode() == "fused"
    assert (torch.ones(2) * 2)._d.__class__ is _fused.Deferred       # recording again


def test_new_batch_sizes_record_forwards_and_recomputing_backwards(fused):
    """Fused eager records an op's forward and a backward that recomputes it (a segment's
    program computes both, XLA sharing the work), not a forward-with-VJP: both are traced once
    per shape pattern, so a step at a batch size never seen traces nothing new (the first
    batch size's symbolic traces specialize), with strict eager's and torch's losses."""
    from torchlike import _caches, _registry, _shape_poly, _tiers

    m0 = torch.nn.Sequential(torch.nn.Linear(13, 11), torch.nn.Tanh(), torch.nn.Linear(11, 5))
    init = {k: v.detach().numpy().copy() for k, v in m0.state_dict().items()}

    def run(m, sizes):
        nn = m.nn
        model = nn.Sequential(nn.Linear(13, 11), nn.Tanh(), nn.Linear(11, 5))
        model.load_state_dict({k: m.tensor(v) for k, v in init.items()})
        opt = m.optim.SGD(model.parameters(), lr=0.1)
        rng = np.random.default_rng(3)
        losses, traced = [], []
        for b in sizes:
            before = (_tiers.stats()["traces"], _fused.stats()["traces"],
                      _shape_poly.stats()["symbolic"])
            x = m.tensor(rng.standard_normal((b, 13), np.float32))
            y = m.tensor(rng.integers(0, 5, b))
            loss = m.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.item())
            traced.append((_tiers.stats()["traces"], _fused.stats()["traces"],
                           _shape_poly.stats()["symbolic"]) != before)
        return losses, traced

    assert _registry.FUSED_REMAT
    sizes = (7, 9, 10, 12)
    _caches.clear_all()         # (the first size traces: earlier tests may have met its patterns)
    losses, traced = run(torch, sizes)
    # the first size traces; by the last nothing is new (a symbolic trace loaded from the
    # trace store, made by other tests at other sizes, may meet a guard at the second or third)
    assert traced[0] and not traced[3], traced
    with E.strict():
        strict_losses, _ = run(torch, sizes)
    torch_losses, _ = run(T, sizes)
    np.testing.assert_allclose(losses, strict_losses, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(losses, torch_losses, rtol=1e-4, atol=1e-5)


def test_a_read_of_a_few_calls_that_are_the_whole_segment_runs_it_as_one(fused):
    """A read whose few calls are every pending call runs the segment (its structure cached:
    compiled from its third meeting), not a partial evaluation of its calls one by one that
    would leave nothing pending: a loop of a few ops and a read runs one program a read."""
    before = _fused.stats()
    for _ in range(_fused.FUSE_AFTER + 2):
        a = torch.arange(20).float().reshape(4, 5)
        b = (a @ a.T).numpy()
    after = _fused.stats()
    ref = np.arange(20.0).reshape(4, 5)
    np.testing.assert_allclose(b, ref @ ref.T)
    assert after["partial"] == before["partial"]
    assert after["fused"] - before["fused"] >= 2


@pytest.mark.parametrize("name", ["AdamW", "Adam", "SGD", "RMSprop", "Adagrad"])
def test_an_elementwise_optimizers_group_update_is_one_recorded_call(fused, name):
    """An elementwise optimizer's update of a group records one call whatever the number of
    parameters, from its first step (state created) on; values are strict mode's."""
    def run(layers):
        torch.manual_seed(0)
        model = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(layers)])
        kw = {"momentum": 0.9} if name in ("SGD", "RMSprop") else {}
        opt = getattr(torch.optim, name)(model.parameters(), lr=1e-2, **kw)
        x = torch.randn(3, 4)
        calls = []
        for _ in range(3):
            model(x).square().mean().backward()
            torch.sync()
            before = _fused.stats()["recorded"]
            opt.step()
            torch.sync()
            calls.append(_fused.stats()["recorded"] - before)
            opt.zero_grad()
        return calls, [p.detach().numpy().copy() for p in model.parameters()]
    for layers in (1, 4):
        calls, got = run(layers)
        assert calls == [1, 1, 1], (layers, calls)
        with E.strict():
            _calls, want = run(layers)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["AdamW", "RMSprop", "Adagrad"])
def test_a_group_updates_declared_outputs_are_those_of_its_traced_function(fused, name):
    """The outputs a recorded group update declares (composed from each parameter's update)
    are those a trace of the group's function gives: structure, shapes, dtypes and weak types,
    before the first step (its state made by the update) and after; a complex parameter's
    among them."""
    import jax
    from torchlike.optim import optimizer as O
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(4, 3)), torch.nn.Parameter(torch.randn(3)),
              torch.nn.Parameter(torch.randn(2, dtype=torch.complex64))]
    kw = {"centered": True, "momentum": 0.5} if name == "RMSprop" else {}
    opt = getattr(torch.optim, name)(params, lr=1e-2, **kw)
    group = opt.param_groups[0]
    for _ in range(2):
        for p in params:
            p.grad = torch.ones_like(p)
            opt._init_state(p, group)           # (as a step begins)
        st = opt._state_lists(params, group)
        arrays = {k: [None if t is None else _fused.raw(t) for t in v] for k, v in st.items()}
        hp = {k: O._hp_scalar(v) for k, v in opt._hp(group).items()}
        args = ([_fused.raw(p) for p in params], [_fused.raw(p.grad) for p in params], arrays, hp)
        call = O._group_call(type(opt)._update, opt._flags(group))
        leaves, tree = jax.tree_util.tree_flatten(args)
        declared = call.declared_outputs(tree, leaves)
        traced = call._traced_outputs(*args)
        assert declared[0] == traced[0]
        assert [(a.shape, a.dtype, a.weak_type) for a in declared[1]] == \
            [(a.shape, a.dtype, a.weak_type) for a in traced[1]]
        opt.step()


def test_an_optimizer_steps_hyperparameters_are_one_input_each(fused, monkeypatch):
    """An elementwise optimizer's update is recorded as one call per group; its
    hyperparameters (lr, betas, eps, weight decay) are one device scalar per value, shared by
    the group's call and by later steps: the step's program takes each once, whatever the
    number of parameters (as numpy inputs they were one per parameter, each converted at every
    dispatch)."""
    seen = []
    run = _fused._run_segment

    def spy(seg, *a, **k):
        seen.append(list(seg.ext))
        return run(seg, *a, **k)
    monkeypatch.setattr(_fused, "_run_segment", spy)

    def ext_of_a_step(layers):
        torch.manual_seed(0)
        model = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(layers)])
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        x = torch.randn(3, 4)
        for _ in range(3):
            del seen[:]
            model(x).square().mean().backward()
            opt.step()
            opt.zero_grad()
        (ext,) = seen
        assert not any(isinstance(a, np.ndarray) for a in ext)
        return [a for a in ext if getattr(a, "dtype", None) == np.float64 and a.shape == ()]

    one, four = ext_of_a_step(1), ext_of_a_step(4)
    assert 0 < len(one) == len(four) <= 6
    assert [id(a) for a in one] == [id(a) for a in four]      # (the same scalars, reused)


def test_a_pending_update_read_inside_a_jit_trace_runs_outside_it(fused, monkeypatch):
    """The update a step leaves pending (recorded after its backward's program) read first by a
    function being traced by jax.jit: the segment runs then, eagerly, so the trace takes the
    updated weight as a constant: its values are arrays, not the trace's tracers."""
    import jax
    import jax.numpy as jnp
    from torchlike import _tiers, interop
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 0)   # (calls compiled: jit calls, which a
    torch.manual_seed(0)                                # trace would stage)
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.ones(4, 3)
    for _ in range(_fused.FUSE_AFTER + 2):  # (the step's segment is a compiled program)
        opt.zero_grad()
        model(x).square().sum().backward()
        opt.step()
    assert model.weight._d.__class__ is _fused.Deferred and model.weight._d.value is None
    f = interop.jax_function(lambda t: (t * model.weight).sum())
    with jax.checking_leaks():
        out = jax.jit(f)(jnp.full((2, 3), 2.0, jnp.float32))
    w = model.weight._d.value
    assert isinstance(w, jax.Array) and not isinstance(w, jax.core.Tracer)
    assert float(out) == pytest.approx(2 * float(np.asarray(w).sum()), rel=1e-6)


def test_a_segments_python_numbers_are_one_program_input_per_kind(fused, monkeypatch):
    """A segment's Python numbers reach its program packed, one array per kind (jit converts a
    number argument on its own, 4-5 us apiece: 25 of them tripled a 50-op chain's dispatch),
    and are unpacked as the numbers jit makes of them: weak-typed (a float32 tensor times a
    Python float stays float32), new values each step with the same program."""
    traced = []
    inlined = _fused._tiers.inlined

    def spy(f):
        g = inlined(f)

        if f.__module__ != _fused.__name__:
            return g                    # (an op's own trace)

        def counted(*args):
            traced.append(len(args))
            return g(*args)
        return counted
    monkeypatch.setattr(_fused._tiers, "inlined", spy)
    x = torch.arange(4.0)
    i = torch.arange(4)
    c = torch.tensor([1 + 1j, 2 - 1j], dtype=torch.complex64)
    for step in range(_fused.FUSE_AFTER + 3):
        s = 0.5 + step
        y = (x * s + 2.25) / 3.0 - s
        k = i * (step + 2) + 7 - step
        b = torch.where(x > 1.5, x, s).masked_fill(i == step % 4, True)
        z = c * (1.5 - 0.5j) + step
        torch.sync()
        assert y.dtype == torch.float32 and k.dtype == torch.int64
        assert b.dtype == torch.float32 and z.dtype == torch.complex64
        np.testing.assert_allclose(y.numpy(), (np.arange(4.0) * s + 2.25) / 3.0 - s, rtol=1e-6)
        np.testing.assert_array_equal(k.numpy(), np.arange(4) * (step + 2) + 7 - step)
        ref = np.where(np.arange(4.0) > 1.5, np.arange(4.0), s)
        ref[step % 4] = 1.0
        np.testing.assert_array_equal(b.numpy(), ref)
        np.testing.assert_allclose(z.numpy(), np.array([1 + 1j, 2 - 1j]) * (1.5 - 0.5j) + step,
                                   rtol=1e-6)
    # one program, traced once: x, i, c and the float, int, bool and complex packs
    assert traced == [7]


def test_a_steps_program_updates_the_buffers_it_takes_over_in_place(fused, monkeypatch):
    """Each parameter and optimizer-state buffer a step's program takes over is paired with its
    own update, which XLA then writes in place. jit pairs donated inputs with outputs of their
    shape first come, first served; paired otherwise (a weight's buffer given its first
    moment's update, computed while the weight is still read), XLA copies every such input
    first: 26 copies in the MLP step, about a tenth of its time on a 2-core CPU."""
    import jax
    made = []
    jit = jax.jit

    def spy(f, **kw):
        j = jit(f, **kw)

        def call(*args):
            made.append((f, kw, [jax.ShapeDtypeStruct(a.shape, a.dtype,
                                                      weak_type=getattr(a, "weak_type", False))
                                 for a in args]))
            return j(*args)
        return call

    class Spied:                    # (jax, as the fused layer sees it, with jit spied on)
        def __getattr__(self, name):
            return spy if name == "jit" else getattr(jax, name)
    monkeypatch.setattr(_fused, "jax", Spied())
    _fused.clear()          # (an earlier test's run of the same step made its program)
    model, step = _mlp(torch)
    for _ in range(_fused.FUSE_AFTER + 1):
        step()
    monkeypatch.setattr(_fused, "jax", jax)
    (f, kw, specs), = [m for m in made if m[1].get("donate_argnums")]
    n_params = len(list(model.parameters()))
    assert len(kw["donate_argnums"]) == 5 * n_params
    text = jit(f, **kw).lower(*specs).compile().as_text()
    copied = [line for line in text.splitlines()
              if " copy(%arg" in line and "[] copy(" not in line]
    assert copied == []


def test_a_read_of_one_call_runs_through_the_ops_own_tiers(fused):
    """A segment of one call cut by a read (a computed tensor read back) runs as strict eager
    runs the op, through its own tiers: it never becomes a segment program, however often it
    comes back; two calls do. An element of a concrete tensor (``x[i].item()``, as a loop that
    logs does) is read at once, as in strict mode: no segment at all."""
    n = 3 * _fused.FUSE_AFTER
    x = torch.arange(12.0).reshape(3, 4)
    torch.sync()
    before = _fused.stats()
    got = [x[i % 3, 1].item() for i in range(n)]
    assert got == [float(4 * (i % 3) + 1) for i in range(n)]
    assert _fused.stats()["segments"] == before["segments"]
    got = [(x + float(i % 3)).tolist()[1][1] for i in range(n)]
    assert got == [5.0 + i % 3 for i in range(n)]
    after = _fused.stats()
    assert after["segments"] - before["segments"] == n
    assert after["compiles"] == before["compiles"]
    assert after["fused"] == before["fused"] and after["replayed"] == before["replayed"]
    got = [((x + float(i % 3)) * 2).tolist()[1][1] for i in range(n)]
    assert got == [2.0 * (5.0 + i % 3) for i in range(n)]
    assert _fused.stats()["compiles"] == after["compiles"] + 1


def test_a_steps_program_takes_over_the_buffers_only_it_references(fused):
    """A steady step's program writes the parameters and the optimizer's state into the buffers
    of the values they replace (jit donation): nothing else references those. An array someone
    else holds (here through JAX interop) is never taken over: it keeps its values and the
    program works on a copy."""
    model, step = _mlp(torch)
    for _ in range(_fused.FUSE_AFTER + 1):
        step()
    n_params = len(list(model.parameters()))
    before = _fused.stats()["donated"]
    step()
    # (each parameter, its two moments, its step count, and its gradient: the previous
    # backward's output, which the update recorded after it takes and zero_grad let go)
    assert _fused.stats()["donated"] - before == 5 * n_params
    held = torchlike.interop.jax_view(model[0].weight)
    kept = np.array(held)
    losses = [step() for _ in range(3)]
    assert not held.is_deleted()
    np.testing.assert_array_equal(np.asarray(held), kept)
    assert not np.array_equal(model[0].weight.detach().numpy(), kept)
    model_s, strict_step = _mlp(torch)
    with E.strict():
        ref = [strict_step() for _ in range(_fused.FUSE_AFTER + 5)]
    np.testing.assert_allclose(losses, ref[-3:], rtol=1e-5)


def test_a_segment_compiles_in_the_background_while_it_replays(fused, monkeypatch):
    """With background compiles on (the default outside the test suite), a segment structure
    met for the third time starts its program's compile in the background thread and is
    replayed call by call until the program is ready, as strict eager interprets an op while
    its program compiles: a loop's first steps never wait for a whole-step compile. Then the
    steps run as the compiled executable; the losses are strict eager's throughout."""
    from torchlike import _tiers
    monkeypatch.setattr(_tiers, "BACKGROUND_COMPILE", True)
    _fused.clear()
    _fused.reset_stats()
    model, step = _mlp(torch)
    losses = [step() for _ in range(_fused.FUSE_AFTER + 1)]
    st = _fused.stats()
    assert st["compiles"] >= 1
    assert E.wait_compiles(120)
    before = _fused.stats()["fused"]
    losses += [step() for _ in range(3)]
    assert _fused.stats()["fused"] - before >= 3
    assert any(e[1] is not None and e[1].executable is not None for e in _fused._programs)
    _model_s, strict_step = _mlp(torch)
    with E.strict():
        ref = [strict_step() for _ in range(len(losses))]
    np.testing.assert_allclose(losses, ref, rtol=1e-5)


def test_a_repeating_segments_replays_start_no_per_op_compiles(fused, monkeypatch, xla_compiles):
    """A segment structure that came back will run as one program: while it replays (before
    its third meeting, and while its program compiles) its calls stay interpreted even past
    their count, so the background thread compiles the segment's program and no per-op
    program of its calls (they would run never, and ahead of it). Values are strict mode's."""
    from torchlike import _tiers
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 2)
    assert E.wait_compiles(120)     # (an earlier test's background compiles: not counted here)
    _fused.clear()
    _fused.reset_stats()
    model, step = _mlp(torch)
    # the first step's structure is its own (the optimizer's state starts); the second meets
    # the steady structure once: its calls run through their tiers as strict eager's, counted
    losses = [step(), step()]
    before = len(xla_compiles)
    losses.append(step())       # met again: its calls are due to leave the interpreter, held
    assert _fused.stats()["replayed"] == 3
    assert len(xla_compiles) == before
    losses += [step() for _ in range(3)]       # the third meeting on: the segment's program
    assert _fused.stats()["fused"] == 3
    _model_s, strict_step = _mlp(torch)
    with E.strict():
        ref = [strict_step() for _ in range(len(losses))]
    np.testing.assert_allclose(losses, ref, rtol=1e-5)


def test_a_segment_replayed_while_its_program_compiles_starts_no_per_op_compiles(
        fused, monkeypatch, xla_compiles):
    """While a repeating segment's program compiles, its replays keep every call interpreted
    however many times it comes (past ``_tiers.HELD_CALLS``): its calls' own programs would
    compile behind it and take the cores from the steps that follow. Values are strict
    mode's."""
    import concurrent.futures
    from torchlike import _program_cache, _tiers
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 2)
    monkeypatch.setattr(_tiers, "HELD_CALLS", 1)
    monkeypatch.setattr(_tiers, "BACKGROUND_COMPILE", True)
    assert E.wait_compiles(120)     # (an earlier test's background compiles: not counted here)
    never = concurrent.futures.Future()         # (the segment's compile, still running)
    warm = _program_cache.warm
    monkeypatch.setattr(_program_cache, "warm",
                        lambda fn, urgent=False: never if urgent else warm(fn, urgent))
    _fused.clear()
    _fused.reset_stats()
    model, step = _mlp(torch)
    losses = [step() for _ in range(_fused.FUSE_AFTER)]
    assert E.wait_compiles(120)     # (what the first steps queued: not this test's concern)
    before = len(xla_compiles)
    losses += [step() for _ in range(4)]
    assert E.wait_compiles(120)
    st = _fused.stats()
    assert st["compiles"] == 1 and st["fused"] == 0
    assert len(xla_compiles) == before
    _model_s, strict_step = _mlp(torch)
    with E.strict():
        ref = [strict_step() for _ in range(len(losses))]
    np.testing.assert_allclose(losses, ref, rtol=1e-5)


def test_a_replay_keeps_interpreted_values_on_the_host(fused, monkeypatch):
    """A segment replayed op by op on the CPU keeps the values the interpreter tier computes
    in numpy from call to call: only what is live at the cut becomes a device array (a
    forward and its graph's backward: one put per live value, not one per call). Values are
    strict mode's, bit for bit (the same numpy functions run either way)."""
    from torchlike import _tiers
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 1000)
    puts = []
    put = _tiers.put
    monkeypatch.setattr(_tiers, "put", lambda *a: puts.append(a[0].shape) or put(*a))

    def run(depth):
        x = torch.tensor(np.linspace(-2, 2, 30, dtype=np.float32).reshape(5, 6),
                         requires_grad=True)
        torch.sync()
        del puts[:]
        h = x
        for _ in range(depth):
            h = (h * 1.5).tanh() - 0.25
        loss = h.sum()
        loss.backward()                 # (the segment runs at the backward's end)
        del h
        n = len(puts)
        return (loss.item(), x.grad.numpy().copy()), n
    run(8)                              # (once: what a first call makes)
    (loss, grad), n_puts = run(8)
    _, n_puts_deeper = run(16)
    # (a backward's seed and the gradient's buffer are made while recording; the replay puts
    # the loss and the gradient: twice as many calls, not one put more)
    assert n_puts == n_puts_deeper <= 4, (n_puts, n_puts_deeper)
    with E.strict():
        (want_loss, want_grad), _ = run(8)
    assert loss == want_loss
    np.testing.assert_array_equal(grad, want_grad)


def test_an_update_through_data_records_one_call(fused):
    """``p.data += -lr * p.grad`` (the lecture scripts' SGD) records the multiply and the add:
    writing the full alias back to its root and refreshing the root from it are the values
    themselves, recorded as nothing. Values are strict mode's."""
    def run():
        torch.manual_seed(0)
        w = torch.randn(3, 4, requires_grad=True)       # (a root, as the lecture's)
        (w * w).sum().backward()
        d = w.data
        g = -0.1 * w.grad
        before = _fused.stats()["recorded"]
        d += g
        torch.sync()
        return _fused.stats()["recorded"] - before, w.detach().numpy().copy()
    calls, got = run()
    assert calls == 1
    with E.strict():
        _calls, want = run()
    np.testing.assert_array_equal(got, want)


def test_host_free_updates_and_moves_are_not_cuts(fused):
    """What only moves pending values between tensors reads none of them: ``p.data +=`` (the
    lecture scripts' SGD), a backward seeded with a pending gradient, a custom Function's
    outputs, ``Module.to``/``float()`` of a module with pending parameters, autocast's
    dispatch, an optimizer whose state starts from a parameter's shape. The values are strict
    mode's."""
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    def run():
        torch.manual_seed(0)
        lin = torch.nn.Linear(3, 2)
        x = torch.ones(4, 3)
        for _ in range(3):
            out = Twice.apply(lin(x))
            out.backward(out.detach() * 0 + 1)
            for p in lin.parameters():
                p.data += -0.1 * p.grad
                p.grad = None
            lin.to(torch.float32)
            lin.float()
            with torch.autocast("cpu", dtype=torch.bfloat16):
                lin(x).float().sum().backward()
            torch.optim.Adagrad(lin.parameters(), lr=0.1)
        return lin

    torch.sync()
    before = dict(_fused.stats()["cuts"])
    lin = run()
    cuts = dict(_fused.stats()["cuts"])
    new = {k: v - before.get(k, 0) for k, v in cuts.items() if v != before.get(k, 0)}
    assert set(new) <= {"backward"}, new        # (a backward's end is not a read)
    got = [p.tolist() for p in lin.parameters()]
    with E.strict():
        want = [p.tolist() for p in run().parameters()]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


def test_parametrizations_norms_and_vector_writes_are_not_cuts(fused):
    """Writes of computed values into module state read none of them: a parametrization's
    right_inverse, spectral_norm's power iteration, instance norm's running statistics,
    ``vector_to_parameters``. The values are strict mode's."""
    class Symmetric(torch.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(0, 1)

        def right_inverse(self, A):
            return A.triu()

    def run():
        torch.manual_seed(0)
        lin = torch.nn.Linear(4, 4)
        torch.nn.utils.parametrize.register_parametrization(lin, "weight", Symmetric())
        sn = torch.nn.utils.spectral_norm(torch.nn.Linear(4, 3))
        inorm = torch.nn.InstanceNorm1d(4, track_running_stats=True)
        x = torch.ones(2, 4, 5) + torch.arange(5.0)
        outs = []
        for _ in range(2):
            lin.weight = lin.weight * 1.0
            outs.append(sn(lin(x.mean(2))))
            outs.append(inorm(x * 2))
            vec = torch.nn.utils.parameters_to_vector(sn.parameters()) * 0.5
            torch.nn.utils.vector_to_parameters(vec, sn.parameters())
        return outs + [inorm.running_mean, inorm.running_var] + list(sn.parameters())

    torch.sync()
    before = dict(_fused.stats()["cuts"])
    got = run()
    cuts = dict(_fused.stats()["cuts"])
    assert cuts == before, {k: v - before.get(k, 0) for k, v in cuts.items()}
    got = [t.detach().numpy() for t in got]
    with E.strict():
        want = [t.detach().numpy() for t in run()]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_drawn_indices_in_range_are_not_checked_by_reading_them(fused):
    """Class targets and embedding indices drawn by ``randint`` within the valid range pass
    their checks by construction: nothing is read (each was a partial run). A draw that can
    leave the range is still checked, with torch's error."""
    torch.manual_seed(0)
    emb = torch.nn.Embedding(7, 3)
    torch.sync()
    before = dict(_fused.stats()["cuts"])
    idx = torch.randint(0, 7, (4, 5))
    target = torch.randint(0, 3, (4,))
    loss = torch.nn.functional.cross_entropy(emb(idx).sum(1), target)
    assert dict(_fused.stats()["cuts"]) == before
    got = loss.item()
    with E.strict():
        torch.manual_seed(0)
        emb = torch.nn.Embedding(7, 3)
        want = torch.nn.functional.cross_entropy(
            emb(torch.randint(0, 7, (4, 5))).sum(1), torch.randint(0, 3, (4,))).item()
    assert got == pytest.approx(want, rel=1e-6)
    with pytest.raises(IndexError, match="index out of range in self"):
        emb(torch.randint(0, 8, (400,)))
    with pytest.raises(IndexError, match="Target 3 is out of bounds"):
        torch.nn.functional.cross_entropy(torch.zeros(400, 3), torch.randint(3, 4, (400,)))


def test_a_view_of_integer_data_is_not_read_by_its_checks(fused):
    """A language model's loss: ``cross_entropy(logits.reshape(-1, V), y.reshape(-1))``: the
    targets are a view of concrete data, whose values are the data's (read once), so their
    check reads nothing (it was a partial run every step). A view of data that leaves the
    range is still checked, with torch's error; a view that reinterprets the bits is not a
    view of the values."""
    y = torch.tensor(np.arange(12).reshape(3, 4) % 5)
    logits = torch.linspace(-1, 1, 60).reshape(3, 4, 5)
    torch.sync()
    before = dict(_fused.stats()["cuts"])
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 5), y.reshape(-1))
    assert dict(_fused.stats()["cuts"]) == before
    want = T.nn.functional.cross_entropy(T.linspace(-1, 1, 60).reshape(-1, 5),
                                         T.tensor(np.arange(12) % 5))
    assert loss.item() == pytest.approx(want.item(), rel=1e-6)
    bad = torch.tensor(np.arange(12).reshape(3, 4))         # (up to 11, with 5 classes)
    with pytest.raises(IndexError, match="out of bounds"):
        torch.nn.functional.cross_entropy(logits.reshape(-1, 5), bad.reshape(-1))
    ones = torch.tensor(np.array([[1, 1]], dtype=np.int32))   # (as one int64: 2**32 + 1)
    with pytest.raises(IndexError, match="out of bounds"):
        torch.nn.functional.cross_entropy(torch.zeros(1, 5), ones.view(torch.int64).reshape(-1))


def test_a_minibatch_gathered_from_integer_data_is_not_read_by_its_checks(fused):
    """makemore's step: ``ix = randint``, ``Xb, Yb = Xtr[ix], Ytr[ix]``, ``C[Xb]``,
    ``cross_entropy(..., Yb)``: the gathered batch lies in the data's range (read once from the
    concrete data), so none of the three index checks reads a value; data that leaves the
    range is still checked, with torch's error."""
    g = torch.Generator().manual_seed(1)
    Xtr = torch.randint(0, 27, (500, 3), generator=g)
    Ytr = torch.randint(0, 27, (500,), generator=g)
    C = torch.randn(27, 4, generator=g)
    W = torch.randn(12, 27, generator=g)
    torch.sync()

    def step():
        ix = torch.randint(0, Xtr.shape[0], (32,), generator=g)
        Xb, Yb = Xtr[ix], Ytr[ix]
        return torch.nn.functional.cross_entropy(C[Xb].view(32, -1) @ W, Yb)

    before = dict(_fused.stats()["cuts"])
    for _ in range(2):
        loss = step()
    assert dict(_fused.stats()["cuts"]) == before
    got = loss.item()
    with E.strict():
        g.manual_seed(5)
        want = [step().item() for _ in range(2)]
    g.manual_seed(5)
    assert [step().item() for _ in range(2)] == pytest.approx(want, rel=1e-6)
    assert np.isfinite(got)
    bad = Xtr.clone()
    bad[7, 1] = 27                  # (a value past C's rows: checked, torch's error)
    torch.sync()
    with pytest.raises(IndexError, match="index 27 is out of bounds for dimension 0 with size 27"):
        C[bad[torch.arange(500)]].sum().item()


def test_gather_and_scatter_of_indices_known_in_range_read_nothing(fused):
    """``q.gather(1, actions)`` with actions drawn by ``randint``/``multinomial`` or taken by
    ``argmax``, and a scatter of them, read no index (each was a partial run); an index
    computed out of range still raises torch's error, at the op (a few calls away) or at the
    cut."""
    torch.manual_seed(0)
    q = torch.randn(8, 4)
    torch.sync()
    before = dict(_fused.stats()["cuts"])
    a = torch.randint(0, 4, (8, 1))
    b = q.argmax(1, keepdim=True)
    c = torch.multinomial(torch.ones(8, 4), 1)
    picked = q.gather(1, a) + q.gather(1, b) + q.gather(1, c)
    onehot = torch.zeros(8, 4).scatter(1, b, 1.0)
    assert dict(_fused.stats()["cuts"]) == before
    np.testing.assert_allclose(onehot.numpy().sum(1), 1.0)
    assert picked.shape == (8, 1)
    with pytest.raises(RuntimeError, match="index 4 is out of bounds for dimension 1 with size 4"):
        q.gather(1, torch.randint(4, 5, (8, 1))).sum().item()
    with pytest.raises(RuntimeError, match="index -1 is out of bounds for dimension 1 with size 4"):
        q.gather(1, _deep(torch.full((8, 1), -1))).sum().item()


def test_a_dataloader_batch_of_transformed_items_is_not_read(fused):
    """Items a Dataset's transform computed are stacked by the op (the host stack read them):
    the batch stays pending and equals strict mode's."""
    class Normalized(torch.utils.data.Dataset):
        def __init__(self):
            self.x = torch.arange(40.0).reshape(10, 4)

        def __len__(self):
            return 10

        def __getitem__(self, i):
            return (self.x[i] - 2.0) / 3.0, i

    def batches():
        return [x for x, _ in torch.utils.data.DataLoader(Normalized(), batch_size=4)]
    torch.sync()
    before = dict(_fused.stats()["cuts"])
    got = batches()
    assert dict(_fused.stats()["cuts"]) == before
    with E.strict():
        want = batches()
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)   # (XLA's fused division)


def test_one_hot_and_normal_checks_of_computed_inputs_read_nothing(fused):
    """``one_hot(actions, n)`` of drawn or argmax'd actions, ``normal(mu, sigma)`` with a
    computed sigma (a VAE's reparametrisation) and ``bernoulli`` of computed probabilities read
    no value: the checks run with the segment
    or not at all (known in range); torch's errors when they fail."""
    torch.manual_seed(0)
    logits = torch.randn(6, 5)
    torch.sync()
    before = dict(_fused.stats()["cuts"])
    oh = torch.nn.functional.one_hot(logits.argmax(1), 5) + torch.nn.functional.one_hot(
        torch.randint(0, 5, (6,)), 5)
    sigma = _deep(logits.exp())
    z = torch.normal(torch.zeros(6, 5), sigma)
    assert dict(_fused.stats()["cuts"]) == before
    assert oh.sum().item() == 12 and z.shape == (6, 5)
    with pytest.raises(RuntimeError, match="Class values must be smaller than num_classes."):
        torch.nn.functional.one_hot(_deep(torch.full((3,), 5)), 5).sum().item()
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        torch.normal(torch.zeros(3), _deep(-torch.ones(3))).sum().item()
    torch.sync()
    before = dict(_fused.stats()["cuts"])
    b = torch.bernoulli(_deep(logits.sigmoid()))      # (an RBM's or a mask's probabilities)
    assert dict(_fused.stats()["cuts"]) == before and b.shape == (6, 5)
    with pytest.raises(RuntimeError, match="Expected p_in >= 0 && p_in <= 1"):
        torch.bernoulli(_deep(torch.full((3,), 1.5))).sum().item()


def test_a_mask_fill_by_setitem_reads_no_mask(fused):
    """``logits[logits < v[:, [-1]]] = -inf`` (nanoGPT's top-k sampling) and ``x[x < 0] = 0``:
    a lone mask of the tensor's shape filled with a number is a select (torch hands it to
    masked_fill_), so the computed mask is never read; torch's values, node name and
    gradients."""
    def run(m):
        x = m.tensor([[-1.0, 2.0, -3.0], [4.0, -5.0, 6.0]], requires_grad=True)
        y = x * 2
        v, _ = m.topk(y, 2)
        y[y < v[:, [-1]]] = -float("inf")
        i = (x.detach() * 3).to(m.int32)
        i[i < 0] = 2.5
        return x, y, i
    torch.sync()
    before = dict(_fused.stats()["cuts"])
    x, y, i = run(torch)
    assert dict(_fused.stats()["cuts"]) == before
    tx, ty, ti = run(T)
    assert y.grad_fn.name() == ty.grad_fn.name() == "IndexPutBackward0"
    y.softmax(1).pow(2).sum().backward()
    ty.softmax(1).pow(2).sum().backward()
    assert y.tolist() == ty.tolist() and i.tolist() == ti.tolist()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)


def test_a_mask_fill_with_a_changing_number_is_one_program_configuration():
    """The filled number is an operand of the select, not a static argument: a clipping loop
    whose threshold changes every step makes one op configuration (each number was one)."""
    from torchlike._ops.index import _index_put_mask
    x = torch.arange(6.0)
    x[x > 9.0] = 9.0
    n = len(_index_put_mask.cache)
    for k in range(5):
        x[x > 4.0 - k * 0.5] = 4.0 - k * 0.5
    assert len(_index_put_mask.cache) == n
    assert x.tolist() == [0.0, 1.0, 2.0, 2.0, 2.0, 2.0]


def test_a_partial_read_keeps_the_other_values_of_its_cone(fused):
    """Reading one element of a pending ``unbind`` (a loop over a computed index tensor, as a
    batch sampler's ``for i in ix``) computes the unbind once: its other elements, still
    referenced, get their values too, so the loop's later reads run nothing."""
    other = _deep(torch.ones(5))       # (pending beside it: the reads are partial)
    ix = torch.arange(6) * 3
    before = _fused.stats()
    got = [int(i) for i in ix]
    after = _fused.stats()
    assert got == [0, 3, 6, 9, 12, 15]
    assert after["partial"] - before["partial"] == 1
    assert other._d.value is None       # (still pending)
    assert other.tolist() == [1.0] * 5


def test_a_float_object_is_one_input_of_its_segment(fused):
    """A Python float is one external input of its segment however many calls take it (a
    constant of a loop's body; the backward recomputing from it): which calls share it follows
    from the code, so a float computed anew each step (a decayed learning rate) keeps one
    segment key, one program, and every step's own value."""
    _fused.sync()
    x = torch.ones(4) * 1
    c = 1.5
    h = x
    for _ in range(10):
        h = h * c
    h = h * float("1.5")            # (another object, of the same value: its own input)
    seg = _fused._seg
    assert [a for a in seg.ext_avals if a is float] == [float, float]
    assert h.tolist() == [1.5 ** 11] * 4
    w = torch.ones(3, requires_grad=True)
    got = []

    def step(i):
        lr = 0.5 * 0.9 ** i
        loss = ((w * lr).sin() + lr).sum()
        loss.backward()
        with torch.no_grad():
            w.sub_(lr * w.grad)
        w.grad = None
        got.append((loss.item(), w.tolist()))
    for i in range(_fused.FUSE_AFTER + 2):
        step(i)
    before = _fused.stats()
    for i in range(_fused.FUSE_AFTER + 2, _fused.FUSE_AFTER + 6):
        step(i)
    after = _fused.stats()
    assert after["compiles"] == before["compiles"]      # (steady: no new segment key)
    assert after["fused"] - before["fused"] == 8        # (a step's two segments, as programs)
    tw = T.ones(3, requires_grad=True)
    for i, (l, wv) in enumerate(got):
        lr = 0.5 * 0.9 ** i
        tl = ((tw * lr).sin() + lr).sum()
        tl.backward()
        with T.no_grad():
            tw -= lr * tw.grad
        tw.grad = None
        assert l == pytest.approx(tl.item(), rel=1e-6)
        np.testing.assert_allclose(wv, tw.tolist(), rtol=1e-6)
