"""The interpreter tier: a signature's first calls evaluate the jaxpr with numpy, repeats compile.

Every test here is about the dispatch path's tiers (torchlike._tiers); the interpreter's own
primitive-by-primitive checks live in tests/test_interpret.py. Results are compared with real
torch, and integer/bool/data-movement results bit for bit with the compiled path.
"""
import contextlib
import itertools

import jax
import numpy as np
import pytest
import torch

import torchlike
from torchlike import _fused, _registry, _tiers
from torchlike.autograd import fused_backward

pytestmark = pytest.mark.usefixtures("strict_eager")    # (the per-op tiers)


def _mlp(m, sizes):
    m.manual_seed(0)
    layers = []
    for a, b in zip(sizes, sizes[1:]):
        layers += [m.nn.Linear(a, b), m.nn.ReLU()]
    return m.nn.Sequential(*layers[:-1])


def _copy_weights(src, dst):
    for (_, p), (_, q) in zip(src.named_parameters(), dst.named_parameters()):
        with torch.no_grad():
            q.copy_(torch.tensor(p.detach().numpy()))


def _steps(m, model, x, y, n, opt_cls="Adam"):
    opt = getattr(m.optim, opt_cls)(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(n):
        loss = m.nn.functional.cross_entropy(model(m.tensor(x)), m.tensor(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def test_a_cold_mlp_training_step_compiles_nothing_and_matches_torch(monkeypatch):
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 8)
    sizes = (29, 17, 13, 5)             # shapes no other test uses
    rng = np.random.default_rng(0)
    x = rng.standard_normal((11, 29)).astype(np.float32)
    y = rng.integers(0, 5, (11,))
    ours = _mlp(torchlike, sizes)
    theirs = _mlp(torch, sizes)
    _copy_weights(ours, theirs)
    before = _registry.trace_total()
    interpreted = _tiers.stats()["interpreted"]
    losses, params = _steps(torchlike, ours, x, y, 3)
    assert _registry.trace_total() == before, "a cold step compiled a program"
    assert _tiers.stats()["interpreted"] > interpreted
    t_losses, t_params = _steps(torch, theirs, x, y, 3)
    np.testing.assert_allclose(losses, t_losses, rtol=1e-5, atol=1e-6)
    for p, q in zip(params, t_params):
        np.testing.assert_allclose(p, q, rtol=1e-4, atol=1e-5)


def test_after_n_calls_the_step_compiles_once_and_never_retraces(monkeypatch):
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 3)
    sizes = (31, 19, 7)
    rng = np.random.default_rng(1)
    x = torchlike.tensor(rng.standard_normal((9, 31)).astype(np.float32))
    y = torchlike.tensor(rng.integers(0, 7, (9,)))
    model = _mlp(torchlike, sizes)
    opt = torchlike.optim.SGD(model.parameters(), lr=0.1)
    counts = []
    for _ in range(8):
        loss = torchlike.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        counts.append(_registry.trace_total())
    assert counts[0] == counts[2], "the interpreted steps compiled"
    assert counts[3] > counts[2], "the fourth step did not reach the compiled programs"
    # the backward's graph, steady from the fourth step, compiles as one program at its third
    # meeting (autograd/fused_backward.py); nothing after
    assert counts[4] == counts[3], "a warm step traced again"
    assert counts[5:] == [counts[3] + 1] * 3, "a warm step traced again"


def test_a_signature_leaving_the_interpreter_compiles_in_the_background(monkeypatch):
    """With background compiles on (the default outside the suite), the call that leaves the
    interpreter starts the compile in the background thread and is interpreted, as are the
    calls until the program is ready; then jit's program answers. Values never change."""
    import jax
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 2)
    monkeypatch.setattr(_tiers, "BACKGROUND_COMPILE", True)
    f = _tiers.tiered(lambda x: x * 3 + 1)
    x = jax.numpy.arange(7.0) + 0.5                 # (a signature no other test uses)
    before = _tiers.stats()
    want = np.arange(7.0) * 3 + 2.5
    outs = [np.asarray(f(x)) for _ in range(3)]     # two interpreted, the third starts the compile
    mid = _tiers.stats()
    assert mid["background"] == before["background"] + 1
    assert mid["interpreted"] == before["interpreted"] + 3
    assert torchlike.eager.wait_compiles(120)       # the background compile finished
    assert f._cache_size() == 1
    outs += [np.asarray(f(x)) for _ in range(3)]    # now jit's program
    after = _tiers.stats()
    assert after["interpreted"] == mid["interpreted"]
    for o in outs:
        np.testing.assert_array_equal(o, want)


def test_a_training_loop_with_background_compiles_matches_the_foreground(monkeypatch):
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 2)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((11, 29)).astype(np.float32)
    y = rng.integers(0, 5, (11,))
    runs = []
    for background in (False, True):
        monkeypatch.setattr(_tiers, "BACKGROUND_COMPILE", background)
        runs.append(_steps(torchlike, _mlp(torchlike, (29, 13, 5)), x, y, 10))
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-5, atol=1e-6)
    for p, q in zip(runs[1][1], runs[0][1]):
        np.testing.assert_allclose(p, q, rtol=1e-5, atol=1e-6)


def test_the_tier_off_switch_gives_the_compiled_bits(monkeypatch):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((7, 23)).astype(np.float32)
    b = rng.standard_normal((23, 5)).astype(np.float32)

    def f(m):
        x = m.tensor(a)
        return (m.tanh(x @ m.tensor(b)).exp().log1p() * 3.0).sum(0)

    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 0)
    off = f(torchlike).numpy()
    # the same ops, each its own compiled program: identical bits
    import jax
    import jax.extend.core
    import jax.numpy as jnp
    z = a
    for op in (lambda x: jnp.tanh(x @ b), jnp.exp, jnp.log1p, lambda x: x * 3.0,
               lambda x: x.sum(0)):
        z = jax.jit(op)(z)
    np.testing.assert_array_equal(off, np.asarray(z))
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 8)
    on = f(torchlike).numpy()
    np.testing.assert_allclose(on, off, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(on, f(torch).numpy(), rtol=1e-5, atol=1e-6)


INTEGER_CASES = [
    ("floor_divide", lambda m, a, b: m.floor_divide(a, b)),
    ("remainder", lambda m, a, b: m.remainder(a, b)),
    ("fmod", lambda m, a, b: m.fmod(a, b)),
    ("bitwise", lambda m, a, b: (a & b) ^ (a | 3)),
    ("shift", lambda m, a, b: a << (b.abs() % 8)),
    ("compare", lambda m, a, b: (a > b) | (a == 0)),
    ("cumsum", lambda m, a, b: a.cumsum(0)),
    ("sort", lambda m, a, b: a.sort(stable=True)[1]),
    ("argmax", lambda m, a, b: a.argmax(0)),
    ("gather", lambda m, a, b: a.gather(0, (b.abs() % 4).long())),
    ("index", lambda m, a, b: a[(b.abs() % 4).long()]),
    ("transpose_view", lambda m, a, b: a.t().reshape(-1)[2:9]),
    ("cat_stack", lambda m, a, b: m.stack([m.cat([a, b]), m.cat([b, a])])),
]


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "int8"])
@pytest.mark.parametrize("name,fn", INTEGER_CASES, ids=[c[0] for c in INTEGER_CASES])
def test_integer_and_data_movement_results_are_exact_on_both_tiers(name, fn, dtype, monkeypatch):
    rng = np.random.default_rng(3)
    lo = 0 if dtype == "uint8" else -50
    a = rng.integers(lo, 50, (4, 5)).astype(dtype)
    b = rng.integers(lo, 50, (4, 5)).astype(dtype)
    b[b == 0] = 1
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 8)
    before = _tiers.stats()["interpreted"]
    on = fn(torchlike, torchlike.tensor(a), torchlike.tensor(b)).numpy()
    assert _tiers.stats()["interpreted"] > before
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 0)
    off = fn(torchlike, torchlike.tensor(a), torchlike.tensor(b)).numpy()
    np.testing.assert_array_equal(on, off)
    assert on.dtype == off.dtype
    expect = fn(torch, torch.tensor(a), torch.tensor(b)).numpy()
    np.testing.assert_array_equal(on, expect)


def test_an_unsupported_primitive_compiles_at_once_and_is_counted(monkeypatch):
    import jax
    from torchlike import _interpret

    calls = []

    def check(jaxpr):
        calls.append(jaxpr)
        return "pretend_primitive"

    monkeypatch.setattr(_interpret, "check", check)
    f = _tiers.tiered(lambda x: x * 3 + 1)
    before = _tiers.stats()
    x = jax.numpy.arange(5.0)
    np.testing.assert_array_equal(np.asarray(f(x)), np.arange(5.0) * 3 + 1)
    np.testing.assert_array_equal(np.asarray(f(x)), np.arange(5.0) * 3 + 1)
    after = _tiers.stats()
    assert len(calls) == 1                  # decided once per signature
    assert after["fallbacks"] == before["fallbacks"] + 1
    assert after["unsupported"]["pretend_primitive"] == \
        before["unsupported"].get("pretend_primitive", 0) + 1
    assert after["interpreted"] == before["interpreted"]


def test_tracers_take_the_compiled_path():
    import jax
    f = _tiers.tiered(lambda x: x * 2)
    before = _tiers.stats()["interpreted"]
    out = jax.jit(lambda x: f(x) + 1)(jax.numpy.ones(3))
    np.testing.assert_array_equal(np.asarray(out), [3.0, 3.0, 3.0])
    assert _tiers.stats()["interpreted"] == before


def test_interpreted_outputs_stay_on_their_input_device():
    import jax
    devs = jax.devices("cpu")
    x = torchlike.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    before = _tiers.stats()["interpreted"]
    y = (x * 2 + 1).t()
    assert _tiers.stats()["interpreted"] > before
    assert y._data.devices() == {devs[0]}
    np.testing.assert_array_equal(y.numpy(), (np.arange(6.0).reshape(2, 3) * 2 + 1).T)


def test_growing_context_generation_compiles_nothing_new(monkeypatch):
    """A loop whose shapes change every step stays on the interpreter: no program per length."""
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 8)
    nn = torchlike.nn
    torchlike.manual_seed(0)
    emb, head = nn.Embedding(50, 24), nn.Linear(24, 50)
    idx = torchlike.tensor([[1, 2, 3]])

    def token(idx):
        h = emb(idx)
        att = (h @ h.transpose(-2, -1)).softmax(-1) @ h
        logits = head(att[:, -1, :])
        return torchlike.cat([idx, logits.argmax(-1, keepdim=True)], dim=1)

    with torchlike.no_grad():
        for _ in range(10):         # the programs that do not depend on the length compile
            idx = token(idx)
        before = _registry.trace_total()
        for _ in range(12):         # every length is new: interpreted, nothing compiles
            idx = token(idx)
    assert idx.shape == (1, 25)
    assert _registry.trace_total() == before


def test_the_public_switch_turns_the_tier_off_and_back():
    import torchlike.eager as eager
    x = torchlike.tensor(np.linspace(0.1, 1.0, 19, dtype=np.float32))    # a new shape
    start = eager.interpret_calls()
    with eager.interpreting(0):
        assert eager.interpret_calls() == 0
        before = eager.stats()["interpreted"]
        off = x.log().numpy()
        assert eager.stats()["interpreted"] == before
    assert eager.interpret_calls() == start
    y = torchlike.tensor(np.linspace(0.1, 1.0, 23, dtype=np.float32))
    before = eager.stats()["interpreted"]
    y.log()
    assert eager.stats()["interpreted"] == before + 1
    import jax
    import jax.extend.core
    import jax.numpy as jnp
    compiled = jax.jit(jnp.log)(np.linspace(0.1, 1.0, 19, dtype=np.float32))
    np.testing.assert_array_equal(off, np.asarray(compiled))      # the compiled program's bits
    with pytest.raises(ValueError, match="expected an int >= 0"):
        eager.set_interpret_calls(-1)
    with pytest.raises(ValueError, match="expected an int >= 0"):
        eager.set_interpret_calls(2.5)


def test_subnormals_survive_the_interpreter_as_in_torch_and_flush_once_compiled():
    """XLA's CPU programs flush subnormal floats to zero; numpy and torch keep them."""
    import torchlike.eager as eager
    x = np.array([1e-39, 3e-39, 1.0, 2.0, 4.0, 8.0, 16.0], np.float32).reshape(7, 1, 1)
    want = (torch.tensor(x) * 1.5).numpy()      # (a shape no other test multiplies: its
    assert want[0] != 0                         # first calls are interpreted in any order)
    np.testing.assert_array_equal((torchlike.tensor(x) * 1.5).numpy(), want)
    with eager.interpreting(0):
        compiled = (torchlike.tensor(x) * 1.5).numpy()
    np.testing.assert_array_equal(compiled.ravel(), [0.0, 0.0, 1.5, 3.0, 6.0, 12.0, 24.0])


_FRESH = """
import jax.monitoring as mon
compiles = []
mon.register_event_duration_secs_listener(
    lambda name, secs, **kw: compiles.append(name) if name.endswith("backend_compile_duration")
    else None)
import torchlike as torch
F = torch.nn.functional
after_import = len(compiles)
torch.manual_seed(0)
g = torch.Generator().manual_seed(2 ** 64 - 1)
model = torch.nn.Sequential(torch.nn.Linear(40, 33), torch.nn.ReLU(), torch.nn.Linear(33, 7))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for b in (9, 8):
    x, y = torch.randn(b, 40, generator=g), torch.randint(0, 7, (b,))
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    loss.item()
print(after_import, len(compiles))
"""


def test_a_fresh_process_compiles_nothing_until_its_shapes_repeat(tmp_path):
    """Import, seeding, generators, parameter init, normal and integer draws, the optimizer's
    state and two training steps at new shapes: no XLA program is compiled (each used to
    compile: jax's key seeding and fold_in, its normal sampler, zeros_like, scalar conversions)."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, TORCHLIKE_CACHE_DIR=str(tmp_path), TORCHLIKE_INTERPRET_CALLS="8")
    out = subprocess.run([sys.executable, "-c", _FRESH], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["0", "0"], out.stdout


def test_generator_keys_are_jaxs_keys_and_seeds_wrap_as_torchs():
    import jax
    for s in (0, 1, 2 ** 31, 2 ** 32 + 5, 2 ** 63 - 1, -1, -2 ** 63, 12345678901):
        g = torchlike.Generator().manual_seed(s)
        np.testing.assert_array_equal(g._key, np.asarray(jax.random.key_data(jax.random.key(s))))
        k = np.asarray(jax.random.key_data(g.next_key()))
        ref = jax.random.fold_in(jax.random.key(s), 0)
        np.testing.assert_array_equal(k, np.asarray(jax.random.key_data(ref)))
    for s in (2 ** 63, 2 ** 64 - 1, -1, -5):
        assert torchlike.Generator().manual_seed(s).initial_seed() == \
            torch.Generator().manual_seed(s).initial_seed()
    for s in (2 ** 64, -2 ** 63 - 1):
        with pytest.raises(ValueError) as ours:
            torchlike.manual_seed(s)
        with pytest.raises(ValueError) as theirs:
            torch.Generator().manual_seed(s)
        assert str(ours.value) == str(theirs.value)


def test_traces_inline_jax_numpy_and_keep_lax_loops():
    import jax
    import jax.extend.core
    import jax.numpy as jnp

    def f(x):
        y = jnp.sqrt(jnp.abs(x)) + jnp.where(x > 0, x, 0.0) + jnp.clip(x, -1, 1)
        c, ys = _tiers.scan(lambda c, v: (c + v, c * v), jnp.float32(0), y)
        return c, ys
    spec = (jax.ShapeDtypeStruct((5,), jnp.float32),)
    closed, _ = _tiers.trace(f, spec)
    names = [e.primitive.name for e in closed.jaxpr.eqns]
    assert not {"jit", "pjit"} & set(names), names
    assert names.count("scan") == 1
    nested = [e.primitive.name for e in jax.make_jaxpr(f)(*spec).jaxpr.eqns]
    assert {"jit", "pjit"} & set(nested)            # what inlining removes
    x = np.linspace(-2, 2, 5, dtype=np.float32)
    got, want = jax.jit(jax.extend.core.jaxpr_as_fun(closed))(x), jax.jit(f)(x)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _batches(m, model, sizes, seed=3):
    rng = np.random.default_rng(seed)
    opt = m.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for b in sizes:
        x = m.tensor(rng.standard_normal((b, 43)).astype(np.float32))
        y = m.tensor(rng.integers(0, 3, (b,)))
        loss = m.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def test_first_calls_of_a_training_step_run_the_forward_and_recompute_it_in_the_backward(
        monkeypatch):
    """A differentiated op's first calls at a signature run its forward alone and the backward
    recomputes it with its VJP (``Remat``): both traced once per shape pattern, so new batch
    sizes specialize instead of tracing ``jax.vjp`` again, with torch's losses and weights."""
    from torchlike import _shape_poly
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 8)
    monkeypatch.setattr(_shape_poly, "ENABLED", True)
    _registry.clear_caches()
    import threading
    from jax._src.export.shape_poly import _DimExpr
    sizes = (43, 47, 3)                 # shapes no other test uses
    ours, theirs = _mlp(torchlike, sizes), _mlp(torch, sizes)
    _copy_weights(ours, theirs)
    x = torchlike.ones(3, 43, requires_grad=True)
    assert isinstance((x * 2).sum().grad_fn.vjp, _registry.Remat)
    # this thread's concrete traces (the counters are the process's: a thread an earlier test
    # left running may trace too)
    me, concrete, trace = threading.get_ident(), [], _tiers.trace

    def counting(f, args):
        if threading.get_ident() == me and not any(
                d.__class__ is _DimExpr for a in args for d in getattr(a, "shape", ())):
            concrete.append(getattr(f, "__qualname__", repr(f)))
        return trace(f, args)
    monkeypatch.setattr(_tiers, "trace", counting)
    poly = _shape_poly.stats()
    # (a pattern's first shape is traced concretely, its second symbolically)
    losses, params = _batches(torchlike, ours, (53, 54))
    first = len(concrete), _shape_poly.stats()
    assert first[0] > 0                 # (the first batch size's traces were seen)
    more, params = _batches(torchlike, ours, (55, 56, 57, 58))
    after = len(concrete), _shape_poly.stats()
    # no new trace at a new batch size, but where a size decides a recorded comparison
    # otherwise (a guard miss traces the pattern again)
    misses = after[1]["guard_misses"] - first[1]["guard_misses"]
    assert after[1]["symbolic"] - first[1]["symbolic"] <= misses
    assert after[0] == first[0], ("a new batch size traced a signature concretely",
                                  concrete[first[0]:])
    assert after[1]["specialized"] - poly["specialized"] > 4 * 8
    t_losses, t_params = _batches(torch, theirs, (53, 54))
    t_more, t_params = _batches(torch, theirs, (55, 56, 57, 58))
    np.testing.assert_allclose(losses + more, t_losses + t_more, rtol=1e-5, atol=1e-6)
    for p, q in zip(params, t_params):
        np.testing.assert_allclose(p, q, rtol=1e-4, atol=1e-5)


def test_the_remat_switch_gives_a_forward_with_vjp_and_the_same_gradients(monkeypatch):
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 8)
    grads = {}
    for on in (True, False):
        monkeypatch.setattr(_registry, "REMAT", on)
        _registry.clear_caches()
        w = torchlike.tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4),
                             requires_grad=True)
        out = (torchlike.tanh(w @ w.t()) * 3).logsumexp(1).sum()
        kind = _registry.Remat if on else _registry.Pullback
        assert isinstance(out.grad_fn.vjp, kind)
        out.backward()
        grads[on] = w.grad.numpy()
    np.testing.assert_allclose(grads[True], grads[False], rtol=1e-6, atol=1e-7)


def _group_and_one_tierseds(opt):
    from torchlike.optim import optimizer as O
    group = [f for (fn, _), f in O._JIT_CACHE.items() if fn is type(opt)._update]
    ones = [f for k, f in O._ONE_CACHE.items() if k[0] is type(opt)._update]
    return group, ones


@pytest.mark.parametrize("opt_cls", ["Adam", "AdamW", "SGD", "RMSprop", "Adafactor"])
def test_an_optimizers_first_steps_run_one_parameter_at_a_time_with_the_groups_bits(
        opt_cls, monkeypatch):
    # the group's function is traced per parameter (a GPT's AdamW group: 60 ms), a parameter's
    # update once per shape pattern; the values are the group's bit for bit
    from torchlike.optim import optimizer as O
    # (every call interpreted: the forward and backward give the same bits in both runs; the
    # backward walked node by node, not compiled as one program at its third meeting)
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 1000)
    monkeypatch.setattr(fused_backward, "STRICT_AFTER", 0)
    sizes = (23, 21, 19, 17, 15, 13, 3)         # twelve parameters, two ranks
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 23)).astype(np.float32)
    y = rng.integers(0, 3, (6,))
    results = {}
    for per_parameter in (True, False):
        monkeypatch.setattr(O, "PER_PARAMETER", per_parameter)
        torchlike.optim.optimizer._clear_jit_cache()
        model = _mlp(torchlike, sizes)
        kw = {"momentum": 0.9} if opt_cls == "SGD" else {}
        opt = getattr(torchlike.optim, opt_cls)(model.parameters(), lr=1e-2, **kw)
        for _ in range(3):
            loss = torchlike.nn.functional.cross_entropy(
                model(torchlike.tensor(x)), torchlike.tensor(y))
            opt.zero_grad()
            loss.backward()
            opt.step()
        results[per_parameter] = [p.detach().numpy().copy() for p in model.parameters()]
        group, ones = _group_and_one_tierseds(opt)
        (g,) = group
        planned = sum(1 for ent in g.seen.values() if ent[1])
        if per_parameter:
            assert planned == 0, "the group's function was traced for the interpreter"
            assert ones and all(f._cache_size() == 0 for f in ones)
            # a plan per parameter shape (six weights, six biases) and state structure (a first
            # step's momentum buffer is None; Adafactor's state of a matrix and of a vector)
            plans = sum(len(ent[1]) for f in ones for ent in f.seen.values() if ent[1])
            assert 12 <= plans <= 24
            # traced symbolically from the first shape: one trace per pattern (distinct-sized
            # matrices, vectors), served to every parameter of it (Adafactor's update reads
            # its sizes as numbers: traced per shape)
            for f in ones:
                for ent in f.seen.values():
                    for plan in (ent[1] or {}).values():
                        assert (plan._symbolic is None) == (opt_cls == "Adafactor")
            # an elementwise update takes every parameter flattened: one pattern (a vector)
            ranks = {len(sig[0][0]) for f in ones for sig in f.seen}
            assert ranks == ({1, 2} if opt_cls == "Adafactor" else {1})
            if opt_cls != "Adafactor":          # (one per state structure)
                for f in ones:
                    patterns = [k for k, e in f.poly.items() if e.__class__ is list]
                    assert len(patterns) == 1, patterns
        else:
            assert planned >= 1 and not ones
        assert g._cache_size() == 0, "a first step compiled the group update"
    for a, b in zip(results[True], results[False]):
        np.testing.assert_array_equal(a, b)


def test_a_group_past_the_size_bound_is_interpreted_per_parameter_and_a_big_parameter_compiles(
        monkeypatch):
    # the size bound applies to each parameter's update; the group's arrays together have a
    # bound of their own (GROUP_BOUND times it)
    from torchlike.optim import optimizer as O
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 8)
    monkeypatch.setattr(_tiers, "INTERPRET_MAX_ELEMENTS", 2000)
    O._clear_jit_cache()
    ps = [torchlike.nn.Parameter(torchlike.ones(300) * i) for i in range(1, 5)]
    opt = torchlike.optim.Adam(ps, lr=0.1)
    for p in ps:
        p.grad = torchlike.full((300,), 0.5)
    opt.step()
    (g,), ones = _group_and_one_tierseds(opt)
    assert g._cache_size() == 0 and ones, "a group of small parameters compiled"
    expected = [torch.ones(300) * i for i in range(1, 5)]
    t_opt = torch.optim.Adam([torch.nn.Parameter(e) for e in expected], lr=0.1)
    for p in t_opt.param_groups[0]["params"]:
        p.grad = torch.full((300,), 0.5)
    t_opt.step()
    for p, q in zip(ps, t_opt.param_groups[0]["params"]):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6)
    # a group past GROUP_BOUND times the bound: compiled at once (cheaper than interpreting it)
    O._clear_jit_cache()
    many = [torchlike.nn.Parameter(torchlike.ones(300)) for _ in range(8)]
    opt = torchlike.optim.Adam(many, lr=0.1)
    for p in many:
        p.grad = torchlike.full((300,), 0.5)
    opt.step()
    (g,), ones = _group_and_one_tierseds(opt)
    assert g._cache_size() == 1 and not ones
    assert float(many[0][0]) == pytest.approx(0.9)
    # a parameter past the bound on its own: the group runs compiled, with the same values
    big = torchlike.nn.Parameter(torchlike.ones(2500))
    small = torchlike.nn.Parameter(torchlike.ones(10))
    opt = torchlike.optim.Adam([big, small], lr=0.1)
    big.grad, small.grad = torchlike.full((2500,), 0.5), torchlike.full((10,), 0.5)
    opt.step()
    assert float(big[0]) == pytest.approx(0.9) and float(small[0]) == pytest.approx(0.9)


def test_a_compiled_functions_node_is_never_traced_in_a_background_thread(monkeypatch):
    # tracing a compiled module's node swaps its parameters' data for tracers: traced behind
    # the calling thread, the parameters were tracers to it (an UnexpectedTracerError at the
    # step the node left the interpreter, or a tracer written into the parameters)
    import jax
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 2)
    monkeypatch.setattr(_tiers, "BACKGROUND_COMPILE", True)
    behind = []
    compile_behind = _tiers.Tiered._compile_behind

    def spy(self, ent, tree, args):
        behind.append(self.name)
        return compile_behind(self, ent, tree, args)
    monkeypatch.setattr(_tiers.Tiered, "_compile_behind", spy)
    torchlike.manual_seed(0)
    model = torchlike.nn.Sequential(torchlike.nn.Linear(7, 5), torchlike.nn.LayerNorm(5))
    compiled = torchlike.compile(model)
    x = torchlike.randn(3, 7)
    for _ in range(6):
        compiled(x).square().sum().backward()
        for p in model.parameters():
            assert not isinstance(p._d, jax.core.Tracer)
    torchlike.eager.wait_compiles()
    assert behind, "nothing compiled in the background"
    assert not [n for n in behind if n.startswith("compiled_")], behind


def test_a_cold_cnn_step_with_batch_norm_and_dropout_compiles_nothing(monkeypatch, xla_compiles):
    """Typed PRNG keys (a dropout's) are interpreted like arrays, and BatchNorm counts its
    batches with an op: a cold step of a small CNN runs no XLA compile at all."""
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 8)
    nn = torchlike.nn
    torchlike.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 5, 3, padding=1), nn.BatchNorm2d(5), nn.ReLU(),
                          nn.Dropout(0.25), nn.Flatten(), nn.Linear(5 * 6 * 7, 4))
    opt = torchlike.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = torchlike.randn(3, 3, 6, 7), torchlike.tensor([0, 3, 1])
    del xla_compiles[:]                 # (the steps', not the model's construction)
    for _ in range(2):
        loss = torchlike.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        assert np.isfinite(loss.item())
    assert xla_compiles == []
    assert int(model[1].num_batches_tracked) == 2


def test_an_interpreted_dropout_draws_the_compiled_programs_mask():
    x = torchlike.ones(5, 41)
    outs = []
    for calls in (8, 0):            # interpreted first calls, then the compiled program
        with torchlike.eager.interpreting(calls):
            torchlike.manual_seed(7)
            outs.append([torchlike.nn.functional.dropout(x, 0.3).numpy() for _ in range(3)])
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)
    assert 0 < (outs[0][0] == 0).sum() < x.numel()


def test_a_donating_call_never_takes_a_pending_value_tensors_share():
    # fused eager's pending values are resolved for a call that runs now; one deferred value
    # may be several tensors' data (a detached alias), which its array's reference count does
    # not show: a donating function gets copies of them
    fn = lambda xs: [x * 2 for x in xs]
    t = _tiers.Tiered(fn, jax.jit(fn, donate_argnums=(0,)), "test donate", donate=(0,))
    with torchlike.eager.fused():
        a = torchlike.arange(4.0) + 1
        b = a.detach()
    assert a._d.__class__ is _fused.Deferred and b._d is a._d
    out = t.compiled_call(*t._concrete(([a._d],)))
    np.testing.assert_array_equal(np.asarray(out[0]), [2, 4, 6, 8])
    np.testing.assert_array_equal(b.numpy(), [1, 2, 3, 4])
    np.testing.assert_array_equal(a.numpy(), [1, 2, 3, 4])


def test_a_donating_function_compiles_once_in_the_background(monkeypatch, xla_compiles):
    """A donating function (an optimizer's update) is compiled in the background from its
    arguments' shapes (never run there on the call's arrays): the foreground then finds that
    program and takes over its owners' buffers."""
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 2)
    monkeypatch.setattr(_tiers, "BACKGROUND_COMPILE", True)

    def update(ps, gs):
        return [p - 0.5 * g for p, g in zip(ps, gs)]
    t = _tiers.Tiered(update, jax.jit(update, donate_argnums=(0,)), "test donating update",
                      donate=(0,))
    owner = type("Owner", (), {})()
    owner.p = jax.numpy.arange(11.0) + 0.25          # (a signature no other test uses)
    g = jax.numpy.ones(11)
    for _ in range(3):
        owner.p = t([owner.p], [g])[0]
    assert torchlike.eager.wait_compiles(120)
    # (an interpreted call's result may sit in memory numpy allocated, which XLA cannot take
    # over: the first compiled call writes a buffer of its own)
    owner.p = t([owner.p], [g])[0]
    del xla_compiles[:]
    where = owner.p.unsafe_buffer_pointer()
    for _ in range(3):
        # (ready first: XLA may copy a donated buffer a running program is still writing)
        owner.p.block_until_ready()
        owner.p = t([owner.p], [g])[0]
    assert xla_compiles == []                        # the background's program answered
    assert owner.p.unsafe_buffer_pointer() == where  # and overwrote the owner's buffer
    np.testing.assert_allclose(np.asarray(owner.p), np.arange(11.0) + 0.25 - 3.5)


def test_held_calls_stay_interpreted_up_to_their_bound(monkeypatch, xla_compiles):
    """Within ``held()`` (fused eager's replays) a signature due to leave the interpreter stays
    there, for up to ``HELD_CALLS`` calls, then leaves as it would have; outside, its next call
    leaves. Values are the same throughout."""
    import jax
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 2)
    monkeypatch.setattr(_tiers, "HELD_CALLS", 3)
    assert torchlike.eager.wait_compiles(120)   # (an earlier test's: not counted here)
    want = np.arange(5.0) * 7 - 0.5

    def calls(f, x, n, held):
        outs = []
        for _ in range(n):
            with (_tiers.held() if held else contextlib.nullcontext()):
                outs.append(np.asarray(f(x)))
        for o in outs:
            np.testing.assert_array_equal(o, want)

    for held in (True, False):
        f = _tiers.tiered(lambda x: x * 7 - 0.5)
        x = jax.numpy.arange(5.0)               # (a signature no other test uses)
        calls(f, x, 2, held)                    # the tier's own calls
        before, interpreted = len(xla_compiles), _tiers.stats()["interpreted"]
        calls(f, x, 3, True)                    # due to leave, held: interpreted
        assert len(xla_compiles) == before and f._cache_size() == 0
        assert _tiers.stats()["interpreted"] == interpreted + 3
        calls(f, x, 1, held)                    # past the bound, or outside: it leaves
        assert f._cache_size() == 1


def test_unbounded_holds_keep_calls_interpreted_past_the_bound(monkeypatch, xla_compiles):
    """``held(bounded=False)`` (the replay of a segment whose program is compiling) keeps a
    signature due to leave the interpreter there for every call, past ``HELD_CALLS``; its next
    call outside leaves. Values are the same throughout."""
    import jax
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 2)
    monkeypatch.setattr(_tiers, "HELD_CALLS", 3)
    assert torchlike.eager.wait_compiles(120)   # (an earlier test's: not counted here)
    f = _tiers.tiered(lambda x: x * 5 + 0.25)
    x = jax.numpy.arange(6.0)                   # (a signature no other test uses)
    want = np.arange(6.0) * 5 + 0.25
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(f(x)), want)
    before, interpreted = len(xla_compiles), _tiers.stats()["interpreted"]
    for _ in range(10):
        with _tiers.held(bounded=False):
            np.testing.assert_array_equal(np.asarray(f(x)), want)
            np.testing.assert_array_equal(                     # (a replay's own path)
                _tiers.call_on_host(f, np.arange(6.0)), want)
    assert len(xla_compiles) == before and f._cache_size() == 0
    assert _tiers.stats()["interpreted"] == interpreted + 20
    np.testing.assert_array_equal(np.asarray(f(x)), want)      # outside: it leaves
    assert f._cache_size() == 1


_STILL_RUNNING_AT_EXIT = """
import torchlike as torch
torch.manual_seed(0)
ws = [torch.nn.Parameter(torch.randn(1024, 1024) / 32) for _ in range(8)]
opt = torch.optim.SGD(ws, lr=1e-3)
x = torch.randn(1024, 1024)
def step():
    h = x
    for w in ws:
        h = h @ w
    loss = h.square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    return loss
step().item()
step().item()
for _ in range(5):
    step()          # (their backwards and updates still run when the script ends)
"""


def test_a_script_ending_while_its_last_steps_run_exits_cleanly():
    """Eager dispatch does not wait for a step's backward and update; a script that ends right
    after dispatching them waits for them at exit (``_tiers._finish_dispatched``): XLA's CPU
    kernels were freed under the running programs, and the process died of SIGSEGV (in 2 to 4
    runs of 6 of this script without the exit hook)."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, TORCHLIKE_INTERPRET_CALLS="0", TORCHLIKE_EAGER="strict",
               TORCHLIKE_COMPILATION_CACHE="0")
    r = subprocess.run([sys.executable, "-c", _STILL_RUNNING_AT_EXIT], env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, (r.returncode, r.stderr[-2000:])


@pytest.mark.parametrize("name,fn", [
    ("sort", lambda x: x.sort(-1)),
    ("argsort", lambda x: x.argsort(0)),
    ("sort_descending", lambda x: x.sort(dim=0, descending=True, stable=True)),
    ("msort", lambda x: x.msort()),
])
def test_a_sorting_function_stays_interpreted_on_the_cpu(name, fn, monkeypatch):
    """A signature whose trace sorts, without a loop or branch, is never compiled on the CPU
    (``_tiers.STAY_ON_HOST``: XLA's CPU sort is several times slower than numpy's); its values
    are torch's; a function that does not sort leaves the interpreter as before."""
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 2)
    monkeypatch.setattr(_tiers, "BACKGROUND_COMPILE", False)
    x = torchlike.tensor(np.random.default_rng(0).standard_normal((6, 9)).astype(np.float32))
    before = _tiers.stats()["interpreted"]
    outs = [_tensors(fn(x)) for _ in range(6)]
    assert _tiers.stats()["interpreted"] - before == 6, "a sorting function compiled"
    y = torchlike.ones(next(_NEW_SIZES), 3)     # (a signature no other test met)
    before = _tiers.stats()["interpreted"]
    for _ in range(6):
        y.exp()
    assert _tiers.stats()["interpreted"] - before == 2, "exp stayed interpreted"
    expected = _tensors(fn(torch.tensor(x.numpy())))
    for o in outs:
        for a, b in zip(o, expected):
            assert np.array_equal(a.numpy(), b.numpy())


def test_a_sorting_function_with_a_branch_compiles(monkeypatch):
    """topk's tie handling is a branch (``cond``), which the interpreter walks step by step:
    it compiles after its first calls as any function does."""
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 2)
    monkeypatch.setattr(_tiers, "BACKGROUND_COMPILE", False)
    x = torchlike.ones(next(_NEW_SIZES), 9)
    before = _tiers.stats()["interpreted"]
    for _ in range(6):
        x.topk(3)
    assert _tiers.stats()["interpreted"] - before == 2


_NEW_SIZES = itertools.count(101)


def _tensors(out):
    return tuple(out) if isinstance(out, tuple) else (out,)


# ------------------------------------------------------------------ the interpreted calls' budget

_TICK = 1 / 1024        # (a clock step exact in binary: summed budgets compare exactly)


def _ticking(monkeypatch, module, step=_TICK):
    """``module``'s clock advances ``step`` seconds at each reading."""
    readings = itertools.count()
    monkeypatch.setattr(module, "_clock", lambda: next(readings) * step)


def test_a_signature_leaves_the_interpreter_once_its_calls_have_cost_the_budget(monkeypatch):
    """Past its first ``INTERPRET_CALLS`` calls a signature stays interpreted until its
    interpreted calls have taken ``INTERPRET_BUDGET`` in all: a call far cheaper than a compile
    is not compiled for a short loop. Here each call costs one tick and the budget is 20."""
    _ticking(monkeypatch, _tiers)
    monkeypatch.setattr(_tiers, "INTERPRET_BUDGET", 20 * _TICK)
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 4)
    monkeypatch.setattr(_tiers, "BACKGROUND_COMPILE", False)
    f = _tiers.tiered(lambda x: x * 5 - 2)
    x = jax.numpy.arange(11.0) + 0.25               # (a signature no other test uses)
    want = np.arange(11.0) * 5 - 0.75
    before = _tiers.stats()["interpreted"]
    for k in range(20):
        np.testing.assert_array_equal(np.asarray(f(x)), want)
        assert f._cache_size() == 0, f"call {k + 1} compiled within the budget"
    assert _tiers.stats()["interpreted"] == before + 20
    np.testing.assert_array_equal(np.asarray(f(x)), want)   # the budget spent: it compiles
    assert f._cache_size() == 1
    assert _tiers.stats()["interpreted"] == before + 20


def test_costly_calls_leave_the_interpreter_before_their_count(monkeypatch):
    """Calls that have cost the budget before the signature's ``INTERPRET_CALLS`` calls leave
    at once: here each call costs 15 ticks against a budget of 20 and a count of 8, so the
    third call compiles."""
    _ticking(monkeypatch, _tiers, step=15 * _TICK)
    monkeypatch.setattr(_tiers, "INTERPRET_BUDGET", 20 * _TICK)
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 8)
    monkeypatch.setattr(_tiers, "BACKGROUND_COMPILE", False)
    f = _tiers.tiered(lambda x: x * 3 + 4)
    x = jax.numpy.arange(17.0) + 0.5                # (a signature no other test uses)
    want = np.arange(17.0) * 3 + 5.5
    before = _tiers.stats()["interpreted"]
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(f(x)), want)
    assert f._cache_size() == 0 and _tiers.stats()["interpreted"] == before + 2
    np.testing.assert_array_equal(np.asarray(f(x)), want)
    assert f._cache_size() == 1 and _tiers.stats()["interpreted"] == before + 2
    # (with no budget, the count alone decides: the suite's setting)
    monkeypatch.setattr(_tiers, "INTERPRET_BUDGET", 0.0)
    g = _tiers.tiered(lambda x: x * 3 - 4)
    for _ in range(8):
        g(x)
    assert g._cache_size() == 0
    g(x)
    assert g._cache_size() == 1


def test_the_public_budget_switch(monkeypatch):
    """``torchlike.eager.set_interpret_budget(ms)`` sets the budget the tier reads (the suite
    runs at 0, the count alone deciding); it refuses what is not a number >= 0."""
    import torchlike.eager as eager
    monkeypatch.setattr(_tiers, "INTERPRET_BUDGET", _tiers.INTERPRET_BUDGET)
    assert eager.set_interpret_budget(12.5) == 0.0
    assert eager.interpret_budget() == 12.5 and _tiers.INTERPRET_BUDGET == 0.0125
    _ticking(monkeypatch, _tiers, step=1e-3)        # (each interpreted call: a millisecond)
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 2)
    monkeypatch.setattr(_tiers, "BACKGROUND_COMPILE", False)
    f = _tiers.tiered(lambda x: x - 7)
    x = jax.numpy.arange(13.0) + 0.5                # (a signature no other test uses)
    for _ in range(13):
        f(x)
    assert f._cache_size() == 0                     # (13 calls: 13 ms, past 12.5 ms)
    f(x)
    assert f._cache_size() == 1
    for bad in (-1, "5", True, float("nan")):
        with pytest.raises(ValueError, match="expected a number >= 0"):
            eager.set_interpret_budget(bad)


def test_a_claimed_forward_with_vjp_is_charged_what_its_forward_alone_costs(monkeypatch):
    """An op's first calls with grad run its forward alone (the forward-with-VJP's calls are
    claimed): their time is the forward-with-VJP's, which compiles once it has cost the budget;
    the forward alone is charged nothing, so it is never compiled for them."""
    _ticking(monkeypatch, _tiers)
    monkeypatch.setattr(_tiers, "INTERPRET_BUDGET", 40 * _TICK)
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 2)
    monkeypatch.setattr(_tiers, "BACKGROUND_COMPILE", False)
    op = _registry.Op("budget_probe", lambda a: a * 3 + 1)
    x = torchlike.ones(6, requires_grad=True)
    counts = []
    for _ in range(30):
        y = _registry.apply(op, x)
        assert float(y.detach().sum()) == 24.0
        counts.append(dict(op.trace_counts))
    assert counts[3]["fwd_vjp"] == 0, "compiled at the count, within the budget"
    assert counts[-1]["fwd_vjp"] == 1, "the forward-with-VJP never left the interpreter"
    assert all(c["fwd"] == 0 for c in counts), "the forward alone was charged and compiled"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(6, 3.0, np.float32))


def _tanh_mlp(a, b, c):
    return torchlike.nn.Sequential(torchlike.nn.Linear(a, b), torchlike.nn.Tanh(),
                                   torchlike.nn.Linear(b, c))


def _graph_steps(n, model, x):
    for _ in range(n):
        model.zero_grad()
        (model(x) ** 2).mean().backward()


def _graph_tier(monkeypatch, walk, sizes):
    """A strict graph's tiers with the ops' own calls costing nothing (they would stay
    interpreted for ever), each engine walk costing ``walk`` seconds and a budget of half a
    second: a model of ``sizes`` (shapes no other test uses) and its input."""
    from torchlike.autograd import engine
    monkeypatch.setattr(_tiers, "_clock", lambda: 0.0)
    if walk:
        _ticking(monkeypatch, engine, step=walk)
    else:
        monkeypatch.setattr(engine, "_clock", lambda: 0.0)
    monkeypatch.setattr(_tiers, "INTERPRET_BUDGET", 0.5)
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 2)
    monkeypatch.setattr(_tiers, "BACKGROUND_COMPILE", False)
    monkeypatch.setattr(fused_backward, "STRICT_AFTER", 2)
    fused_backward._plans.clear()
    fused_backward._walks.clear()
    torchlike.manual_seed(0)
    return _tanh_mlp(*sizes), torchlike.randn(5, sizes[0])


def test_a_cheap_op_does_not_keep_its_graph_from_one_program(monkeypatch):
    """A graph whose nodes recompute forwards the tier interprets walks node by node; once its
    walks have cost what compiling those forwards and the graph would ((recomputing nodes + 1)
    budgets), the forwards leave the interpreter and the graph's backward becomes one program.
    Here each walk costs two budgets: the graph's program comes although its ops' calls cost
    nothing, with the gradients of the walk."""
    model, x = _graph_tier(monkeypatch, 1.0, (13, 6, 3))
    before = fused_backward.stats()
    _graph_steps(2, model, x)
    first = [p.grad.numpy().copy() for p in model.parameters()]
    # (a graph of 5 recomputing nodes: its forwards leave after 3 walks' worth of 6 budgets)
    _graph_steps(3, model, x)
    assert fused_backward.stats()["calls"] == before["calls"], "one program before its time"
    _graph_steps(6, model, x)
    after = fused_backward.stats()
    assert after["programs"] == before["programs"] + 1
    assert after["calls"] > before["calls"]
    for p, g in zip(model.parameters(), first):
        np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-6, atol=1e-7)


def test_without_the_graphs_walks_costing_a_cheap_op_stays_interpreted(monkeypatch):
    """The control of the test above: walks that cost nothing leave the forwards interpreted
    and the graph walking node by node."""
    model, x = _graph_tier(monkeypatch, 0.0, (11, 7, 2))
    before = fused_backward.stats()
    _graph_steps(12, model, x)
    assert fused_backward.stats() == before
