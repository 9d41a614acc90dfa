"""Shape-polymorphic traces of op forwards (torchlike._shape_poly): one symbolic trace per shape
pattern, specialized to each signature, with the comparisons its Python made as guards.

Pinned here: the results are those of a concrete trace, bit for bit, over a sweep of ops and
shapes (broadcasting against 1, equal sizes, reductions, indexing, joins, reshapes); a branch
on a size retraces when the size decides it otherwise; what cannot be symbolic falls back to a
concrete trace; generation with a growing context specializes instead of tracing; the switch."""
import collections
import threading

import numpy as np
import pytest

import torchlike as torch
from torchlike import _registry, _shape_poly, _tiers

pytestmark = pytest.mark.usefixtures("strict_eager")    # (the per-op tiers' own traces)


def _own_symbolic_traces(monkeypatch):
    """A list that gets an entry for each symbolic trace this thread makes (the process-wide
    counts also see the threads an earlier test left running)."""
    made, symbolic, me = [], _shape_poly._symbolic, threading.get_ident()

    def counting(*args):
        got = symbolic(*args)
        if got is not None and threading.get_ident() == me:
            made.append(got)
        return got
    monkeypatch.setattr(_shape_poly, "_symbolic", counting)
    return made


F = torch.nn.functional
RNG = np.random.default_rng(7)


def _t(*shape, dtype=np.float32):
    if np.dtype(dtype).kind == "f":
        return torch.tensor(RNG.standard_normal(shape).astype(dtype))
    return torch.tensor(RNG.integers(0, 3, shape).astype(dtype))


# (name, function of tensors, the input shapes of each call: same patterns, other sizes)
CASES = [
    ("add_broadcast", lambda a, b: a + b, [[(5, 1), (1, 7)], [(6, 1), (1, 2)], [(3, 1), (1, 3)]]),
    ("add_equal_sizes", lambda a, b: a * b - a, [[(4, 4), (4, 4)], [(9, 9), (9, 9)]]),
    ("add_row", lambda a, b: a + b, [[(5, 7), (7,)], [(8, 3), (3,)], [(2, 2), (2,)]]),
    ("sum_mean", lambda a: a.sum(0) + a.mean(-1).sum(), [[(5, 6)], [(7, 3)], [(4, 4)]]),
    ("var_std", lambda a: a.var(1) + a.std(0).mean(), [[(5, 6)], [(3, 9)]]),
    ("softmax", lambda a: F.softmax(a, -1), [[(2, 5, 5)], [(2, 6, 6)], [(3, 4, 7)]]),
    ("log_softmax", lambda a: F.log_softmax(a, 1), [[(4, 9)], [(6, 2)]]),
    ("layer_norm", lambda a, w, b: F.layer_norm(a, (a.shape[-1],), w, b),
     [[(1, 5, 8), (8,), (8,)], [(1, 6, 8), (8,), (8,)], [(1, 9, 8), (8,), (8,)]]),
    ("linear", lambda x, w, b: F.linear(x, w, b),
     [[(5, 8), (3, 8), (3,)], [(6, 8), (3, 8), (3,)], [(2, 8), (3, 8), (3,)]]),
    ("matmul_batched", lambda a, b: a @ b,
     [[(2, 4, 5, 3), (2, 4, 3, 5)], [(2, 4, 6, 3), (2, 4, 3, 6)], [(3, 2, 7, 5), (3, 2, 5, 7)]]),
    ("gelu_tanh", lambda a: F.gelu(a) + torch.tanh(a), [[(3, 5)], [(4, 6)]]),
    ("transpose_contig", lambda a: a.transpose(1, 2).contiguous(), [[(2, 5, 3)], [(2, 7, 4)]]),
    ("getitem_last", lambda a: a[:, -1, :], [[(1, 5, 8)], [(1, 9, 8)], [(2, 3, 8)]]),
    ("getitem_slice", lambda a: a[1:3] * 2, [[(5, 4)], [(6, 4)], [(3, 4)]]),
    ("cat", lambda a, b: torch.cat([a, b], 1), [[(1, 5), (1, 1)], [(1, 6), (1, 1)]]),
    ("cat_equal", lambda a, b: torch.cat([a, b], 0), [[(3, 4), (3, 4)], [(5, 2), (5, 2)]]),
    ("argmax_keepdim", lambda a: a.argmax(-1, keepdim=True), [[(1, 7)], [(1, 9)], [(3, 3)]]),
    ("masked_fill", lambda a, m: a.masked_fill(m > 1, float("-inf")),
     [[(1, 4, 5, 5), (1, 1, 5, 5)], [(1, 4, 6, 6), (1, 1, 6, 6)]]),
    ("tril", lambda a: torch.tril(a), [[(5, 5)], [(6, 6)], [(4, 7)]]),
    ("embedding", lambda w, i: F.embedding(i, w), [[(9, 4), (1, 5)], [(9, 4), (1, 7)]]),
    ("cumsum_flip", lambda a: a.cumsum(0).flip(1), [[(5, 3)], [(6, 4)]]),
    ("sort_topk", lambda a: a.sort(-1)[0][..., :2] + a.topk(2, -1)[0], [[(3, 5)], [(4, 6)]]),
    ("where_clamp", lambda a, b: torch.where(a > 0, a, b).clamp(-0.5, 0.5),
     [[(5, 6), (5, 6)], [(2, 3), (2, 3)]]),
    ("pow_exp", lambda a: (a.abs() + 1).pow(0.5).exp(), [[(4, 2)], [(5, 3)]]),
    ("int_sum", lambda a: a.sum(0) * 2, [[(5, 3)], [(6, 4)]], np.int64),
]


def _inputs(name, shapes, dtype):
    if name == "embedding":
        return [_t(*shapes[0]), torch.tensor(RNG.integers(0, 9, shapes[1]))]
    return [_t(*s, dtype=dtype) for s in shapes]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_specialized_traces_give_the_concrete_traces_bits(case, monkeypatch):
    name, fn, calls = case[:3]
    dtype = case[3] if len(case) > 3 else np.float32
    inputs = [_inputs(name, shapes, dtype) for shapes in calls]
    results = {}
    for on in (False, True):
        monkeypatch.setattr(_shape_poly, "ENABLED", on)
        _registry.clear_caches()
        before = _shape_poly.stats()
        with torch.no_grad():
            results[on] = [fn(*xs) for xs in inputs]
    after = _shape_poly.stats()
    for a, b in zip(results[False], results[True]):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    # symbolic traces were made (whether a later call could reuse one is up to its guards, which
    # jax's own shape rules add to: test_a_sweep_specializes_more_than_it_traces counts reuse)
    assert after["symbolic"] > before["symbolic"]


def test_a_sweep_specializes_more_than_it_traces(monkeypatch):
    monkeypatch.setattr(_shape_poly, "ENABLED", True)
    _registry.clear_caches()
    before = _shape_poly.stats()
    with torch.no_grad():
        for n in range(5, 13):
            x = _t(1, n, 8)
            F.softmax(x @ x.transpose(1, 2), -1).sum(-1)
    after = _shape_poly.stats()
    specialized = after["specialized"] - before["specialized"]
    assert specialized >= 2 * 7
    assert after["symbolic"] - before["symbolic"] < specialized / 2


_OPS = {}


def _op(fn):
    """``fn`` declared once as a test op (the registry refuses a name twice)."""
    name = "test_shape_poly_" + fn.__name__
    if name not in _OPS:
        _OPS[name] = _registry.defop(name)(fn)
    return _OPS[name]


def branchy(x):
    # Python that branches on a size: a trace for 3 rows must not serve 4 rows
    if x.shape[0] == 3:
        return x * 2
    return x + 1


def test_a_branch_on_a_size_retraces_where_the_size_decides_otherwise(monkeypatch):
    monkeypatch.setattr(_shape_poly, "ENABLED", True)
    op = _op(branchy)
    symbolic = _own_symbolic_traces(monkeypatch)
    before = _shape_poly.stats()
    with torch.no_grad():
        four = _registry.apply(op, torch.zeros(4, 5))      # (a pattern's first shape: concrete)
        three = _registry.apply(op, torch.zeros(3, 5))     # symbolic, guarded by rows == 3
        six = _registry.apply(op, torch.zeros(6, 2))       # the guard decides otherwise
        five = _registry.apply(op, torch.zeros(5, 4))      # the second trace's guard holds
    after = _shape_poly.stats()
    assert four.tolist() == [[1.0] * 5] * 4                # x + 1
    assert three.tolist() == [[0.0] * 5] * 3               # x * 2: the 3-row branch
    assert six.tolist() == [[1.0] * 2] * 6
    assert five.tolist() == [[1.0] * 4] * 5
    assert after["guard_misses"] - before["guard_misses"] >= 1
    assert len(symbolic) == 2
    assert after["specialized"] - before["specialized"] >= 1


def truthy(x):
    # the truth of a size expression: zero at 2 rows, so a 3-row trace must not serve
    if x.shape[0] - 2:
        return x + 1
    return x - 1


def test_the_truth_of_a_size_expression_is_a_guard(monkeypatch):
    monkeypatch.setattr(_shape_poly, "ENABLED", True)
    op = _op(truthy)
    with torch.no_grad():
        three = _registry.apply(op, torch.zeros(3, 4))
        two = _registry.apply(op, torch.zeros(2, 4))       # same pattern, the guard decides
        five = _registry.apply(op, torch.zeros(5, 7))
    assert three.tolist() == [[1.0] * 4] * 3
    assert two.tolist() == [[-1.0] * 4] * 2
    assert five.tolist() == [[1.0] * 7] * 5


def needs_ints(x):
    # a numpy buffer of the input's shape: cannot be symbolic
    return x + np.arange(int(x.shape[0]) * x.shape[1], dtype=np.float32).reshape(x.shape)


def test_what_cannot_be_symbolic_is_traced_concretely(monkeypatch):
    monkeypatch.setattr(_shape_poly, "ENABLED", True)
    op = _op(needs_ints)
    before = _shape_poly.stats()
    with torch.no_grad():
        a = _registry.apply(op, torch.zeros(2, 3))
        b = _registry.apply(op, torch.zeros(3, 2))
    assert a.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert b.tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    assert _shape_poly.stats()["failed"] - before["failed"] == 1     # then marked: once


def test_growing_context_generation_specializes_instead_of_tracing(monkeypatch):
    def generate():
        torch.manual_seed(0)
        emb, lin = torch.nn.Embedding(40, 16), torch.nn.Linear(16, 40)
        ln = torch.nn.LayerNorm(16)
        idx = torch.zeros(1, 1, dtype=torch.long)
        before = _tiers.stats()["traces"] + _shape_poly.stats()["symbolic"]
        with torch.no_grad():
            for _ in range(12):
                h = F.gelu(ln(emb(idx)))
                att = F.softmax(h @ h.transpose(1, 2), -1) @ h
                idx = torch.cat([idx, lin(att)[:, -1].argmax(-1, keepdim=True)], dim=1)
        return idx.tolist(), _tiers.stats()["traces"] + _shape_poly.stats()["symbolic"] - before
    monkeypatch.setattr(_shape_poly, "ENABLED", False)
    _registry.clear_caches()
    want, concrete = generate()
    monkeypatch.setattr(_shape_poly, "ENABLED", True)
    _registry.clear_caches()
    got, poly = generate()
    assert got == want
    assert poly * 3 < concrete, (poly, concrete)


def test_view_configurations_share_one_symbolic_trace(monkeypatch):
    """``view``/``reshape``/``expand`` at a new static shape (a growing context's
    ``view(B, T, h, d)``) reuse the op's symbolic trace: a static size equal to an input size
    is that size's symbol."""
    monkeypatch.setattr(_shape_poly, "ENABLED", True)
    _registry.clear_caches()
    symbolic = _own_symbolic_traces(monkeypatch)
    before = _shape_poly.stats()
    with torch.no_grad():
        for n in range(5, 10):
            x = _t(1, n, 12)
            np.testing.assert_array_equal(x.view(1, n, 3, 4).numpy(),
                                          x.numpy().reshape(1, n, 3, 4))
            np.testing.assert_array_equal(x.transpose(1, 2).reshape(12, n).numpy(),
                                          x.numpy().transpose(0, 2, 1).reshape(12, n))
            r = _t(1, n)
            np.testing.assert_array_equal(r.expand(n, n).numpy(),
                                          np.broadcast_to(r.numpy(), (n, n)))
    after = _shape_poly.stats()
    # one symbolic trace per op configuration family (view, transpose, the copying reshape of a
    # transposed tensor, expand; the first size traced concretely, one guard miss allowed) and
    # a specialization for every other size (without the families: one trace per size)
    assert 4 <= len(symbolic) <= 5
    assert after["specialized"] - before["specialized"] >= 10


@pytest.mark.parametrize("src,dst", [((4, 8), (8, 4)), ((3, 8), (8, 3)), ((4, 8), (2, 16)),
                                     ((2, 6), (2, 2, 3)), ((6, 6), (36,)), ((3, 2), (2, 3))])
def test_a_static_size_equal_to_an_input_size_by_coincidence(src, dst, monkeypatch):
    monkeypatch.setattr(_shape_poly, "ENABLED", True)
    x = _t(*src)
    with torch.no_grad():
        np.testing.assert_array_equal(x.view(*dst).numpy(), x.numpy().reshape(dst))
        np.testing.assert_array_equal(x.t().reshape(*dst).numpy(), x.numpy().T.reshape(dst))


def test_compiled_guards_decide_as_the_recorded_comparisons():
    from jax import export
    _shape_poly._install()
    d0, d1 = export.symbolic_shape("d0, d1", scope=export.SymbolicScope())
    guards = ((d0, "__ge__", 2, True), (d1 - d0, "__ne__", 0, True),
              (2 * d0 + 1, "__eq__", d1, False), (d0 // 2, "__lt__", d1 % 3 + 1, True),
              (d0 * d1, "__gt__", 7, True), (d1, "__le__", 5, False))
    check = _shape_poly._compiled(guards)
    assert check is not None
    decided = set()
    for a in range(9):
        for b in range(9):
            env = {"d0": a, "d1": b}
            want = _shape_poly._holds(guards, env)     # jax's own evaluation of each term
            assert check(env) == want, env
            decided.add(want)
    assert decided == {True, False}


def test_the_switch_turns_it_off(monkeypatch):
    monkeypatch.setattr(_shape_poly, "ENABLED", False)
    before = _shape_poly.stats()
    with torch.no_grad():
        for n in (11, 12, 13):
            (_t(n, 3) * 2).sum()
    assert _shape_poly.stats() == before


# ------------------------------------------------------------------ running a symbolic trace

def _shapeless_uses():
    """A function per primitive the interpreter declares shapeless, of float32 ``x``, ``y``,
    int32 ``i``, ``j`` and complex64 ``z`` of one symbolic shape (a, b)."""
    import jax
    from jax import lax
    jnp = jax.numpy
    unary = ["abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "cbrt", "ceil", "cos",
             "cosh", "digamma", "erf", "erf_inv", "erfc", "exp", "exp2", "expm1", "floor",
             "is_finite", "lgamma", "log", "log1p", "logistic", "neg", "rsqrt", "sign", "sin",
             "sinh", "sqrt", "square", "tan", "tanh", "bessel_i0e", "bessel_i1e"]
    uses = {n: (lambda f: lambda x, y, i, j, z: f(x))(getattr(lax, n)) for n in unary}
    binary = ["add", "atan2", "div", "max", "min", "mul", "nextafter", "pow", "rem", "sub",
              "eq", "ne", "lt", "le", "gt", "ge", "igamma", "igammac", "zeta"]
    uses.update({n: (lambda f: lambda x, y, i, j, z: f(x, y))(getattr(lax, n)) for n in binary})
    ints = {"and": lax.bitwise_and, "or": lax.bitwise_or, "xor": lax.bitwise_xor,
            "shift_left": lax.shift_left, "shift_right_logical": lax.shift_right_logical,
            "shift_right_arithmetic": lax.shift_right_arithmetic}
    uses.update({n: (lambda f: lambda x, y, i, j, z: f(i, j))(f) for n, f in ints.items()})
    uses.update({
        "not": lambda x, y, i, j, z: lax.bitwise_not(i),
        "population_count": lambda x, y, i, j, z: lax.population_count(i),
        "clz": lambda x, y, i, j, z: lax.clz(i),
        "round": lambda x, y, i, j, z: lax.round(x * 3),
        "regularized_incomplete_beta": lambda x, y, i, j, z: lax.betainc(
            jnp.abs(x) + 1, jnp.abs(y) + 1, lax.logistic(x)),
        "clamp": lambda x, y, i, j, z: lax.clamp(jnp.float32(-0.5), x, jnp.float32(0.5)),
        "real": lambda x, y, i, j, z: lax.real(z), "imag": lambda x, y, i, j, z: lax.imag(z),
        "conj": lambda x, y, i, j, z: lax.conj(z),
        "convert_element_type": lambda x, y, i, j, z: lax.convert_element_type(x, np.int32),
        "copy": lambda x, y, i, j, z: jnp.array(x, copy=True),
        "stop_gradient": lambda x, y, i, j, z: lax.stop_gradient(x),
        "transpose": lambda x, y, i, j, z: lax.transpose(x, (1, 0)),
        "concatenate": lambda x, y, i, j, z: lax.concatenate([x, y], 1),
        "select_n": lambda x, y, i, j, z: lax.select_n(i > 0, x, y),
        "integer_pow": lambda x, y, i, j, z: lax.integer_pow(x, 3),
        "argmax": lambda x, y, i, j, z: jnp.argmax(x, 1),
        "argmin": lambda x, y, i, j, z: jnp.argmin(x, 0),
        "add_any": lambda x, y, i, j, z: jax.grad(lambda t: (t * t + t).sum())(x),
    })
    for n in ("sum", "prod", "max", "min"):
        uses["reduce_" + n] = (lambda n: lambda x, y, i, j, z: getattr(jnp, n)(x, 1))(n)
    for n in ("and", "or", "xor"):
        uses["reduce_" + n] = (lambda n: lambda x, y, i, j, z: getattr(lax, f"reduce_{n}")(
            i > 0, (0,)))(n)
    for n in ("sum", "prod", "max", "min", "logsumexp"):
        uses["cum" + n] = (lambda n: lambda x, y, i, j, z: getattr(lax, f"cum{n}")(x, 1))(n)
    return uses


def test_shapeless_steps_are_made_once_and_give_the_concrete_traces_bits():
    """In a symbolic trace, a primitive declared shapeless (``_interpret.SHAPELESS``: its rule
    reads no size) gets its step made once, shared by every set of sizes (``bind``); the steps
    that need sizes are made per set. Every declared primitive is run here at two sets of sizes
    against the concrete trace of the same function, bit for bit: a rule that read a size would
    fail (or differ)."""
    import jax
    from jax import export
    from torchlike import _interpret as I
    uses = _shapeless_uses()
    assert set(I.SHAPELESS) - {"copy_p"} <= set(uses)     # (copy_p: an older jax's name)
    rng = np.random.default_rng(3)
    met = set()
    for name, fn in sorted(uses.items()):
        a, b = export.symbolic_shape("a, b")
        specs = [jax.ShapeDtypeStruct((a, b), d) for d in
                 (np.float32, np.float32, np.int32, np.int32, np.complex64)]
        closed, _ = _tiers.trace(fn, specs)
        assert I.check(closed) is None, name
        met |= {e.primitive.name for e in closed.jaxpr.eqns}
        plans = []
        for n, m in ((3, 5), (4, 7)):
            args = [rng.standard_normal((n, m)).astype(np.float32),
                    rng.standard_normal((n, m)).astype(np.float32),
                    rng.integers(-9, 9, (n, m)).astype(np.int32),
                    rng.integers(0, 40, (n, m)).astype(np.int32),
                    (rng.standard_normal((n, m)) + 1j).astype(np.complex64)]
            plan = I.bind(closed, _shape_poly.Subst({"a": n, "b": m}))
            plans.append(plan)
            got = I.run_plan(plan, *args)
            want = I.run(_tiers.trace(fn, args)[0], *args)
            for g, w in zip(got, want):
                assert g.shape == w.shape and g.dtype == w.dtype, name
                np.testing.assert_array_equal(g, w, err_msg=name)
        for s0, s1, e in zip(plans[0].steps, plans[1].steps, closed.jaxpr.eqns):
            if e.primitive.name in I.SHAPELESS and not any(
                    I._has_size(v) for v in e.params.values()):
                assert s0[0] is s1[0], (name, e.primitive.name)    # made once
    assert set(I.SHAPELESS) - {"copy_p"} <= met


def test_calls_join_their_callers_plan_and_are_made_once_across_sizes():
    """A call's sub-jaxpr (``custom_jvp_call``: ``jax.nn.relu``, torchlike's softmax; ``pjit``;
    ``checkpoint``) is inlined into the plan of its caller: in a symbolic trace its shapeless
    equations are made once, not re-planned as one late step at every set of sizes, and the
    values are the concrete trace's."""
    import jax
    import jax.numpy as jnp
    from jax import export
    from torchlike import _interpret as I
    from torchlike.nn import functional as F

    def fn(x, y):
        h = jax.nn.relu(x) * 2
        h = jax.checkpoint(lambda u: jnp.tanh(u) + y)(h)
        return F._softmax_fn(jax.jit(lambda u: u - 1)(h), 1)
    a, b = export.symbolic_shape("a, b")
    closed, _ = _tiers.trace(fn, [jax.ShapeDtypeStruct((a, b), np.float32)] * 2)
    names = {e.primitive.name for e in closed.jaxpr.eqns}
    assert "custom_jvp_call" in names and names & {"checkpoint", "remat2"}, names
    plan = I._closed_plan(closed)
    assert not [e.primitive.name for _, e, _ in plan.late if e.primitive.name in I._CALLS]
    rng = np.random.default_rng(5)
    plans = []
    for n, m in ((3, 5), (4, 7)):
        args = [rng.standard_normal((n, m)).astype(np.float32) for _ in range(2)]
        plans.append(I.bind(closed, _shape_poly.Subst({"a": n, "b": m})))
        got = I.run_plan(plans[-1], *args)
        want = I.run(_tiers.trace(fn, args)[0], *args)
        np.testing.assert_array_equal(got[0], want[0])
    shared = sum(s0[0] is s1[0] for s0, s1 in zip(plans[0].steps, plans[1].steps))
    assert shared >= 6          # relu's max, mul, tanh, add, sub, exp, div... made once


def test_size_expressions_evaluate_as_jax_evaluates_them():
    """The compiled Python of size expressions (shapes of a symbolic trace, guards) gives jax's
    values: powers (jax writes ``a^3``), floor division, remainders, max and min."""
    from jax import export
    a, b = export.symbolic_shape("a, b")
    exprs = [a * a * a - 1, a * b + 2, a * a * b, (a * b) // 3, (a + 5) % b, export.symbolic_shape(
        "max(a, b)")[0], 2 * a - b + 7]
    for env in ({"a": 4, "b": 8}, {"a": 7, "b": 3}, {"a": 2, "b": 2}):
        for e in exprs:
            want = int(e._evaluate(env))
            assert _shape_poly._sizer(e, e)(env) == want, (str(e), env)
            assert _shape_poly._compiled([(e, "__eq__", want, True)])(env), (str(e), env)
            assert not _shape_poly._compiled([(e, "__eq__", want + 1, True)])(env)
        shape = (1, a * a, b)
        assert _shape_poly._sizer(shape, shape)(env) == (1, env["a"] ** 2, env["b"])


_DRAWS = """
import json
import numpy as np
import torchlike as torch
from torchlike import _random, _shape_poly, _tiers
_shape_poly.ENABLED = True
sizes = range(5, 13)

def draws():
    torch.manual_seed(3)
    return [(torch.randint(0, 1000, (n,)).numpy(), torch.rand(n, 3).numpy(),
             torch.randn(2, n).numpy()) for n in sizes]
before, tier = _shape_poly.stats(), _tiers.stats()
got = draws()
after, tier_after = _shape_poly.stats(), _tiers.stats()
_tiers.set_interpret_calls(0)
_random._draws.clear()
want = draws()
same = all(np.array_equal(a, b) for g, w in zip(got, want) for a, b in zip(g, w))
print(json.dumps({"poly": {k: after[k] - before[k] for k in after},
                  "tier": {k: tier_after[k] - tier[k] for k in tier if k != "unsupported"},
                  "same": same}))
"""


def test_draws_at_new_sizes_share_a_symbolic_trace(tmp_path):
    """A sampler's draws at new sizes (``randint``, ``rand``, and the random bits behind
    ``randn``) specialize one shape-pattern trace of the sampler instead of tracing it per size,
    with the bits of the compiled draws, and the interpreter ran them all. (In a fresh process
    with an empty trace store: the counts are the per-op tier's own, whatever other tests left
    in a worker's tables and threads.)"""
    import json
    import os
    import subprocess
    import sys
    env = dict(os.environ, TORCHLIKE_CACHE_DIR=str(tmp_path), TORCHLIKE_INTERPRET_CALLS="8",
               TORCHLIKE_BACKGROUND_COMPILE="0", TORCHLIKE_EAGER="strict")
    out = subprocess.run([sys.executable, "-c", _DRAWS], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    moved = json.loads(out.stdout.splitlines()[-1])
    poly, tier = moved["poly"], moved["tier"]
    n_sizes = 8
    # each sampler: its first size traced concretely, its second symbolically, the rest
    # specialize that trace
    assert poly["specialized"] == 3 * (n_sizes - 2), moved
    assert poly["symbolic"] == 3 and poly["guard_misses"] == 0, moved
    assert tier["interpreted"] == 3 * n_sizes and tier["errors"] == 0, moved
    assert moved["same"], moved


def test_a_growing_size_is_traced_symbolically_from_its_second_pattern(monkeypatch):
    """A size that grows from 1 meets two patterns of one skeleton (size 1 is a constant, 2 and
    up a symbol): the first is traced concretely, the second symbolically at once (not first
    concretely again), and every later size specializes it."""
    from jax._src.export.shape_poly import _DimExpr
    monkeypatch.setattr(_shape_poly, "ENABLED", True)
    torch.sync()        # (fused eager: an earlier test's pending calls run now, not in the count)
    _registry.clear_caches()
    made = []
    trace = _tiers.trace
    me = threading.get_ident()

    def counting(f, args):
        if threading.get_ident() == me:     # (a thread an earlier test left running traces too)
            made.append((f, any(d.__class__ is _DimExpr for a in args
                                for d in getattr(a, "shape", ()))))
        return trace(f, args)
    monkeypatch.setattr(_tiers, "trace", counting)
    before = _shape_poly.stats()
    with torch.no_grad():
        for n in range(1, 7):
            torch.special.log_softmax(_t(1, n, 8) * 3.0, -1)
    after = _shape_poly.stats()
    # (two ops, mul and log_softmax: each one concrete trace at size 1, then one symbolic at
    # size 2, which every later size specializes)
    concrete = collections.Counter(f for f, symbolic in made if not symbolic)
    symbolic = collections.Counter(f for f, symbolic in made if symbolic)
    assert sorted(concrete.values()) == [1, 1], made
    assert sorted(symbolic.values()) == [1, 1] and symbolic.keys() == concrete.keys(), made
    assert after["specialized"] - before["specialized"] >= 2 * 4, (made, before, after)


def test_a_symbolic_trace_leaves_its_callers_arguments_to_reference_counting(monkeypatch):
    """jax keeps the TypeError a symbolic size raises in a local of ``_canonicalize_dimension``,
    a cycle through its frame that holds its callers' frames: the op's arguments would then
    live until the next garbage collection (in fused eager, pending values that became a
    segment's outputs, and its key with them, as the collector happened to run). The trace
    frees that garbage: an argument dropped after a symbolically traced call is freed at once."""
    import gc
    import weakref
    monkeypatch.setattr(_shape_poly, "ENABLED", True)
    _registry.clear_caches()
    gc.collect()
    gc.disable()
    try:
        freed = []
        for n in (5, 6, 7):         # (the second shape of the pattern traces symbolically)
            x = _t(2, n, 8)
            with torch.no_grad():
                F.softmax(x @ x.transpose(1, 2), -1)
            ref = weakref.ref(x)
            del x
            freed.append(ref() is None)
        assert _shape_poly.stats()["symbolic"] > 0
    finally:
        gc.enable()
    assert freed == [True, True, True]


def test_jax_interning_an_aval_decides_no_guard(monkeypatch):
    """jax interns avals: creating one looks it up in a table of live avals, comparing its shape
    with those of entries whose hashes share bits with it. A symbolic trace compares its sizes
    there with whatever concrete shapes the process holds: such a comparison is not the op's
    and records no guard (else a trace at size 3 that met a stored ``(1, 3, 8)`` would be
    guarded by ``d0 == 3`` and traced again at every other size)."""
    from jax._src import core
    monkeypatch.setattr(_shape_poly, "ENABLED", True)
    made = _own_symbolic_traces(monkeypatch)
    _registry.clear_caches()
    held = [core.ShapedArray((1, k, 8), np.dtype(np.float32)) for k in range(2, 30000)]
    with torch.no_grad():
        for n in (1, 2, 3):             # (size 1 traced concretely, 2 symbolically)
            torch.special.log_softmax(_t(1, n, 8) * 3.0, -1)
    assert made
    sizes = [(str(lhs), name, rhs) for _closed, _tree, guards in made
             for lhs, name, rhs, _result in guards if isinstance(rhs, int) and rhs > 1]
    assert not sizes, sizes
    del held
