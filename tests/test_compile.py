"""Issue 10: torchlike.compile. Compiled modules and compiled training steps against torch eager
(losses, parameters, grads, optimizer state, BatchNorm buffers over 10 steps) and, with dropout
active, against torchlike eager for the same seed (torchlike's random stream is not torch's:
DIFFERENCES.md); guards and retraces counted; graph breaks, hooks, OptimizedModule's surface.
"""
import warnings

import numpy as np
import pytest
import torch

import torchlike
from nn_util import copy_state
from oracle import assert_close

STEPS = 10


# ------------------------------------------------------------------ models (written once for
# torch and torchlike: ``nn`` is torch.nn or torchlike.nn)

def mlp(nn, p):
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Dropout(p), nn.Linear(16, 3))


def cnn(nn, p):
    return nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.Dropout(p), nn.Flatten(), nn.Linear(4 * 5 * 5, 3))


def transformer(nn, p):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(11, 8)
            self.enc = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=p,
                                                  batch_first=True)
            self.head = nn.Linear(8, 11)

        def forward(self, x):
            return self.head(self.enc(self.emb(x)))
    return Net()


def lstm(nn, p):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(3, 8, batch_first=True)
            self.drop = nn.Dropout(p)
            self.head = nn.Linear(8, 2)

        def forward(self, x):
            out, _ = self.rnn(x)
            return self.head(self.drop(out[:, -1]))
    return Net()


def _data(kind, rng):
    if kind == "mlp":
        return rng.standard_normal((4, 6), np.float32), rng.integers(0, 3, 4)
    if kind == "cnn":
        return rng.standard_normal((4, 2, 5, 5), np.float32), rng.integers(0, 3, 4)
    if kind == "transformer":
        return rng.integers(0, 11, (2, 5)), rng.integers(0, 11, 10)
    return rng.standard_normal((3, 4, 3), np.float32), rng.standard_normal((3, 2), np.float32)


# (the transformer's key bias has a zero gradient up to rounding: an Adam-type optimizer would
# amplify that rounding noise, so it trains with SGD)
MODELS = {"mlp": (mlp, "adam"), "cnn": (cnn, "sgd"), "transformer": (transformer, "sgd"),
          "lstm": (lstm, "adamw")}


def _opt(lib, kind, params):
    if kind == "adam":
        return lib.optim.Adam(params, lr=1e-2)
    if kind == "sgd":
        return lib.optim.SGD(params, lr=0.05, momentum=0.9, weight_decay=1e-3)
    if kind == "adamw":
        return lib.optim.AdamW(params, lr=1e-2)
    return lib.optim.RMSprop(params, lr=1e-2)


def _loss(lib, kind, out, y):
    F = lib.nn.functional
    if kind == "transformer":
        return F.cross_entropy(out.reshape(-1, 11), y)
    if kind == "lstm":
        return F.mse_loss(out, y)
    return F.cross_entropy(out, y)


def train(lib, kind, how, p, state, steps=STEPS, seed=5):
    """Train ``kind`` for ``steps`` steps; ``how`` in eager / module / step."""
    ctor, okind = MODELS[kind]
    model = ctor(lib.nn, p)
    if lib is torchlike:
        model.load_state_dict({k: torchlike.tensor(v) for k, v in state.items()})
    else:
        model.load_state_dict({k: torch.tensor(v) for k, v in state.items()})
    opt = _opt(lib, okind, model.parameters())
    net = lib.compile(model) if how == "module" else model

    def step(x, y):
        opt.zero_grad()
        loss = _loss(lib, kind, net(x), y)
        loss.backward()
        opt.step()
        return loss

    if how == "step":
        step = lib.compile(step)
    rng = np.random.default_rng(0)
    lib.manual_seed(seed)
    losses = []
    for _ in range(steps):
        x, y = _data(kind, rng)
        losses.append(float(step(lib.tensor(x), lib.tensor(y))))
    return dict(losses=np.array(losses), model=model, opt=opt, step=step, net=net)


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def assert_same_run(a, b, atol, rtol=1e-4):
    assert_close(a["losses"], b["losses"], atol=atol, rtol=rtol, what="losses")
    sa, sb = a["model"].state_dict(), b["model"].state_dict()
    assert list(sa) == list(sb)
    for k in sa:                      # parameters and buffers (BatchNorm stats, counters)
        assert_close(_np(sa[k]), _np(sb[k]), atol=atol, rtol=rtol, what=k)
    for (n, pa), pb in zip(a["model"].named_parameters(), b["model"].parameters()):
        assert (pa.grad is None) == (pb.grad is None), n
        if pa.grad is not None:
            assert_close(_np(pa.grad), _np(pb.grad), atol=atol, rtol=rtol, what=n + ".grad")
    oa, ob = a["opt"].state_dict()["state"], b["opt"].state_dict()["state"]
    assert sorted(oa) == sorted(ob)
    for i in oa:
        assert sorted(oa[i]) == sorted(ob[i])
        for k in oa[i]:
            assert_close(_np(oa[i][k]), _np(ob[i][k]), atol=atol, rtol=rtol, what=f"{i}.{k}")


def _torch_state(kind, p):
    torch.manual_seed(0)
    tm = MODELS[kind][0](torch.nn, p)
    return {k: v.detach().numpy().copy() for k, v in tm.state_dict().items()}


@pytest.mark.parametrize("kind", list(MODELS))
def test_compiled_equals_eager(kind):
    """Without dropout the compiled runs equal torch eager; with dropout active and one seed
    they equal torchlike eager (same masks: one random stream). The MLP and the CNN check both
    forms both ways; the transformer and the LSTM one form each way (compiles are the cost)."""
    both = kind in ("mlp", "cnn")
    state = _torch_state(kind, 0.0)
    ref = train(torch, kind, "eager", 0.0, state)
    for how in (("module", "step") if both else ("step",)):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            run = train(torchlike, kind, how, 0.0, state)
        # compiled, not a silent eager fallback (a graph break warns)
        assert not [x for x in w if "graph break" in str(x.message)], kind
        assert_same_run(run, ref, atol=2e-4)
    state = _torch_state(kind, 0.3)
    eager = train(torchlike, kind, "eager", 0.3, state)
    rng_after = torchlike.get_rng_state().numpy()
    for how in (("module", "step") if both else ("module",)):
        run = train(torchlike, kind, how, 0.3, state)
        assert_same_run(run, eager, atol=2e-5)
        assert np.array_equal(torchlike.get_rng_state().numpy(), rng_after)
        if how == "step":
            # zero grads and Adam-type state are created before the first trace: one trace;
            # SGD's momentum buffer is made by the first step: a second trace with it
            assert run["step"].trace_count == (2 if MODELS[kind][1] == "sgd" else 1)
        else:
            assert run["net"]._program.compile_count == 1


def test_scheduler_every_step_no_retrace():
    state = _torch_state("mlp", 0.0)

    def go(lib, compiled):
        model = mlp(lib.nn, 0.0)
        model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
        opt = lib.optim.Adam(model.parameters(), lr=0.05, betas=(0.9, 0.99))
        sched = lib.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=40,
                                                  cycle_momentum=True)

        def step(x, y):
            loss = lib.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss
        if compiled:
            step = lib.compile(step)
        rng = np.random.default_rng(1)
        losses = []
        for _ in range(12):
            x, y = _data("mlp", rng)
            losses.append(float(step(lib.tensor(x), lib.tensor(y))))
            sched.step()          # changes lr and beta1 every step
        return losses, model, step

    tl, tm, _ = go(torch, False)
    ll, lm, step = go(torchlike, True)
    assert_close(np.array(ll), np.array(tl), atol=1e-4, rtol=1e-4)
    for a, b in zip(lm.parameters(), tm.parameters()):
        assert_close(_np(a), _np(b), atol=1e-4, rtol=1e-4)
    # one trace: the 11 lr/beta changes retrace nothing
    assert step.trace_count == 1
    assert step.compile_count == 1


def test_new_batch_size_recompiles_once_and_train_eval_flip():
    torch.manual_seed(0)
    tm = cnn(torch.nn, 0.0)
    lm = copy_state(tm, cnn(torchlike.nn, 0.0))
    cm = torchlike.compile(lm)
    rng = np.random.default_rng(0)
    for n in (4, 4, 6, 6, 4):
        x = rng.standard_normal((n, 2, 5, 5), np.float32)
        out = cm(torchlike.tensor(x))
        ref = tm(torch.tensor(x))
        assert_close(_np(out), _np(ref), atol=1e-5, rtol=1e-4)
    assert cm._program.compile_count == 2
    # BatchNorm running statistics were written back as torch's
    assert_close(_np(lm[1].running_mean), _np(tm[1].running_mean), atol=1e-6)
    assert int(lm[1].num_batches_tracked) == int(tm[1].num_batches_tracked) == 5
    cm.eval()
    tm.eval()
    assert not lm.training and not cm.training
    for _ in range(2):
        assert_close(_np(cm(torchlike.tensor(x))), _np(tm(torch.tensor(x))), atol=1e-5)
    assert cm._program.compile_count == 3          # one extra trace for the flip
    cm.train()
    tm.train()
    cm(torchlike.tensor(x))
    assert cm._program.compile_count == 3


def test_graph_break_warns_once_and_fullgraph_raises():
    def f(m, x):
        y = x * 2
        if y.sum() > 0:          # data-dependent Python control flow
            return y + 1
        return y - 1

    cf = torchlike.compile(lambda x: f(torchlike, x))
    xs = [np.array([1.0, 2.0], np.float32), np.array([-3.0, 1.0], np.float32)]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        outs = [cf(torchlike.tensor(x)) for x in xs]
    breaks = [x for x in w if "graph break" in str(x.message)]
    assert len(breaks) == 1
    assert "if y.sum() > 0" in str(breaks[0].message)
    for o, x in zip(outs, xs):
        assert_close(_np(o), _np(f(torch, torch.tensor(x))))
    strict = torchlike.compile(lambda x: f(torchlike, x), fullgraph=True)
    with pytest.raises(torchlike._dynamo.exc.Unsupported, match="fullgraph"):
        strict(torchlike.tensor(xs[0]))

    # .item() inside a compiled training step: falls back, same numbers as eager
    state = _torch_state("mlp", 0.0)
    seen = []

    def go(lib, compiled):
        model = mlp(lib.nn, 0.0)
        model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
        opt = lib.optim.SGD(model.parameters(), lr=0.1)

        def step(x, y):
            loss = lib.nn.functional.cross_entropy(model(x), y)
            seen.append(loss.item())
            loss.backward()
            opt.step()
            opt.zero_grad()
        if compiled:
            step = lib.compile(step)
        rng = np.random.default_rng(1)
        for _ in range(3):
            x, y = _data("mlp", rng)
            step(lib.tensor(x), lib.tensor(y))
        return model

    tm = go(torch, False)
    with pytest.warns(UserWarning, match="graph break"):
        lm = go(torchlike, True)
    for a, b in zip(lm.parameters(), tm.parameters()):
        assert_close(_np(a), _np(b), atol=1e-5)


def _hook_run(lib, compiled, how):
    state = _torch_state("mlp", 0.0)
    model = mlp(lib.nn, 0.0)
    model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    norms = []
    w = model[0].weight
    w.register_hook(lambda g: g * 2)                            # gradient-transforming
    w.register_hook(lambda g: norms.append(float(g.norm())))    # side effect
    model[3].bias.register_hook(lambda g: g.clamp(-0.01, 0.01))
    net = lib.compile(model) if (compiled and how == "module") else model

    def step(x, y):
        loss = lib.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    if compiled and how == "step":
        step = lib.compile(step)
    rng = np.random.default_rng(2)
    losses = []
    for _ in range(4):
        x, y = _data("mlp", rng)
        losses.append(float(step(lib.tensor(x), lib.tensor(y))))
    return losses, norms, model, step


@pytest.mark.parametrize("how", ["module", "step"])
def test_hooks_fire_every_call_and_change_the_result(how):
    tl, tn, tm, _ = _hook_run(torch, False, how)
    ll, ln, lm, step = _hook_run(torchlike, True, how)
    assert len(ln) == len(tn) == 4                     # fired on every call
    assert_close(np.array(ln), np.array(tn), atol=1e-4, rtol=1e-4)
    assert_close(np.array(ll), np.array(tl), atol=1e-5, rtol=1e-4)
    for a, b in zip(lm.parameters(), tm.parameters()):
        assert_close(_np(a), _np(b), atol=1e-5, rtol=1e-4)
    if how == "step":
        assert step.compile_count == 1                 # compiled, not fallen back


def test_module_forward_hooks_fire_every_call():
    torch.manual_seed(0)
    tm = mlp(torch.nn, 0.0)
    lm = copy_state(tm, mlp(torchlike.nn, 0.0))
    calls = {torch: [], torchlike: []}
    for lib, m in ((torch, tm), (torchlike, lm)):
        m.register_forward_hook(lambda mod, a, out, lib=lib: calls[lib].append(out.shape[0]))
        m.register_forward_pre_hook(lambda mod, a: (a[0] * 2,))
    cm = torchlike.compile(lm)
    x = np.ones((2, 6), np.float32)
    for _ in range(3):
        assert_close(_np(cm(torchlike.tensor(x))), _np(tm(torch.tensor(x))), atol=1e-5)
    assert calls[torchlike] == calls[torch] == [2, 2, 2]
    assert cm._program.compile_count == 1
    # a hook on a submodule: eager, with one warning, and it fires every call
    seen = []
    lm[0].register_forward_hook(lambda *a: seen.append(1))
    with pytest.warns(UserWarning, match="submodule"):
        for _ in range(2):
            cm(torchlike.tensor(x))
    assert len(seen) == 2


def test_optimized_module_surface_as_torch():
    torch.manual_seed(0)
    tm = cnn(torch.nn, 0.1)
    lm = copy_state(tm, cnn(torchlike.nn, 0.1))
    tc, lc = torch.compile(tm), torchlike.compile(lm)
    assert type(lc).__name__ == type(tc).__name__ == "OptimizedModule"
    assert isinstance(lc, torchlike.nn.Module)
    assert list(lc.state_dict()) == list(tc.state_dict())
    assert list(lc.state_dict())[0].startswith("_orig_mod.")
    assert [n for n, _ in lc.named_parameters()] == [n for n, _ in tc.named_parameters()]
    assert lc._orig_mod is lm and tc._orig_mod is tm
    assert getattr(lc, "0") is lm[0] and getattr(tc, "0") is tm[0]   # attributes forwarded
    with pytest.raises(TypeError):
        tc[0]
    with pytest.raises(TypeError):
        lc[0]
    assert len(lc) == len(tc) == 6
    lc.eval()
    tc.eval()
    assert lm.training is tm.training is False
    lc.foo = 3
    tc.foo = 3
    assert lm.foo == tm.foo == 3
    assert repr(lc) == repr(tc).replace("torch.", "torchlike.") or \
        repr(lc).splitlines()[0] == repr(tc).splitlines()[0]
    # a torch checkpoint of the compiled module loads into the compiled torchlike module
    sd = {k: torchlike.tensor(v.detach().numpy()) for k, v in tc.state_dict().items()}
    assert not lc.load_state_dict(sd).missing_keys


def test_call_forms_and_compiler_namespace():
    def f(x):
        return (x * 3).sin()

    x = np.linspace(-1, 1, 5, dtype=np.float32)
    ref = _np(f(torch.tensor(x)))
    assert torchlike.compile(f, disable=True) is f
    assert torch.compile(f, disable=True) is f

    @torchlike.compile
    def g(x):
        return (x * 3).sin()

    @torchlike.compile(fullgraph=True, mode="max-autotune", dynamic=False)
    def h(x):
        return (x * 3).sin()

    for fn in (g, h, torchlike.compile(f, backend="eager")):
        assert_close(_np(fn(torchlike.tensor(x))), ref)
    assert g.__name__ == "g"
    with pytest.raises(RuntimeError) as theirs:
        torch.compile(f, mode="fastest")
    with pytest.raises(RuntimeError) as ours:
        torchlike.compile(f, mode="fastest")
    assert str(ours.value) == str(theirs.value)       # (torch's list of modes, "lite" too)
    assert_close(_np(torchlike.compile(f, mode="lite")(torchlike.tensor(x))), ref)
    with pytest.raises(NotImplementedError):
        torchlike.compile(f, backend=lambda gm, inputs: gm)

    comp = torchlike.compiler
    assert comp.is_compiling() is torch.compiler.is_compiling() is False
    seen = []

    @torchlike.compile
    def k(x):
        seen.append(comp.is_compiling())
        return x + 1

    k(torchlike.tensor(x))
    assert seen == [True]                     # traced
    k(torchlike.tensor(x))
    # (the list it appends to is guarded, as torch's dynamo guards it: a new trace)
    assert seen == [True, True]

    @comp.disable
    def untraceable(x):
        return x + float(x.sum())

    @torchlike.compile
    def uses(x):
        return untraceable(x) * 2

    with pytest.warns(UserWarning, match="torchlike.compiler.disable"):
        out = uses(torchlike.tensor(x))
    tx = torch.tensor(x)
    assert_close(_np(out), _np((tx + float(tx.sum())) * 2))
    assert comp.allow_in_graph(f) is f
    comp.reset()
    assert k.compile_count == 0
    k(torchlike.tensor(x))
    assert k.compile_count == 1 and seen == [True] * 3      # reset: traced again
    assert "compile" in torchlike._caches.names() and "optim" in torchlike._caches.names()


def test_recompile_limit_warns_then_runs_eagerly():
    @torchlike.compile
    def f(x):
        return x * 2

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for n in range(1, 12):
            out = f(torchlike.ones(n))
            assert_close(_np(out), _np(torch.ones(n) * 2))
    msgs = [str(x.message) for x in w if "recompile limit" in str(x.message)]
    assert len(msgs) == 1 and "the arguments changed" in msgs[0]
    assert f.compile_count == torchlike.compiler.config.recompile_limit == 8


def test_compiled_function_output_is_one_tape_node():
    torch.manual_seed(0)
    tm = mlp(torch.nn, 0.0)
    lm = copy_state(tm, mlp(torchlike.nn, 0.0))
    fwd = torchlike.compile(lambda x: lm(x).tanh())
    x = np.ones((3, 6), np.float32)
    out = fwd(torchlike.tensor(x))
    assert out.grad_fn.name() == "CompiledFunctionBackward"
    out.sum().backward()
    tout = tm(torch.tensor(x)).tanh()
    tout.sum().backward()
    assert_close(_np(out), _np(tout), atol=1e-6)
    for a, b in zip(lm.parameters(), tm.parameters()):
        assert_close(_np(a.grad), _np(b.grad), atol=1e-5)
