"""Traced jaxprs on disk (torchlike._trace_store): a warm start loads them instead of tracing.

Round trips: the jaxprs of torchlike's own ops (forward, forward-with-VJP, backward), a
Linear + cross_entropy + Adam step, control flow, random keys and low-precision floats are
written with ``dumps`` and read with ``loads``; every loaded jaxpr must evaluate with
``torchlike._interpret.run`` bit for bit as the original does. The store: a second process
reads an entry without tracing; damaged, foreign and malicious entries are refused, removed and
counted; the size bound evicts; the off switches; two processes writing one key at once.
"""
import hashlib
import io
import json
import os
import pickle
import subprocess
import sys
import textwrap
import time

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax import lax

import torchlike
from torchlike import _interpret as I
from torchlike import _program_cache, _tiers
from torchlike import _trace_store as T

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RNG = np.random.default_rng(0)
BF16 = np.dtype(ml_dtypes.bfloat16)


# ------------------------------------------------------------------ helpers

def _bits(x):
    """An output as comparable bytes (key arrays by their key data)."""
    if isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        x = jax.random.key_data(x)
    a = np.asarray(x)
    return str(a.dtype), a.shape, a.tobytes()


def _flat_tree(n):
    return jax.tree_util.tree_structure(tuple(range(n)))


def round_trip(closed, leaves, out_tree=None, expect=None):
    """dumps + loads ``closed``; the loaded jaxpr must run bit-identically. Returns the bytes
    (None where dumps refused)."""
    tree = out_tree if out_tree is not None else _flat_tree(len(closed.jaxpr.outvars))
    data = T.dumps(closed, tree)
    if data is None:
        return None
    back = T.loads(data)
    assert back is not None
    loaded, tree2 = back
    assert tree2 == tree
    assert loaded is not closed
    assert [(a.shape, a.dtype, a.weak_type) for a in loaded.in_avals] == \
        [(a.shape, a.dtype, a.weak_type) for a in closed.in_avals]
    assert I.check(loaded) is None
    want = I.run(closed, *leaves) if expect is None else expect
    got = I.run(loaded, *leaves)
    assert [_bits(g) for g in got] == [_bits(w) for w in want]
    return data


def _stubbed(closed):
    """Does the jaxpr hold custom_jvp/custom_vjp calls (their rules print as addresses, so the
    program cache's key of such a jaxpr never matches anyway)?"""
    return any(e.primitive.name in ("custom_jvp_call", "custom_vjp_call")
               for e in _all_eqns(closed.jaxpr))


def _all_eqns(j):
    for e in j.eqns:
        yield e
        for v in e.params.values():
            for s in (v if isinstance(v, (tuple, list)) else (v,)):
                if isinstance(s, jax.extend.core.ClosedJaxpr):
                    yield from _all_eqns(s.jaxpr)
                elif isinstance(s, jax.extend.core.Jaxpr):
                    yield from _all_eqns(s)


def _sig(leaves, tree=None):
    return (tuple(type(a) if isinstance(a, (int, float, bool, complex)) else
                  (np.shape(a), np.asarray(a).dtype) for a in leaves), tree)


@pytest.fixture
def store(tmp_path, monkeypatch):
    """The store on in a fresh directory (the test session turns the program cache off)."""
    monkeypatch.setenv("TORCHLIKE_CACHE_DIR", str(tmp_path))
    for v in ("TORCHLIKE_PROGRAM_CACHE", "TORCHLIKE_COMPILATION_CACHE", "TORCHLIKE_TRACE_CACHE"):
        monkeypatch.delenv(v, raising=False)
    T._reset()
    yield os.path.join(str(tmp_path), "traces")
    T._reset()


def _small():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    closed = jax.make_jaxpr(lambda x: (jnp.tanh(x) * 2, {"s": x.sum()}))(x)
    tree = jax.tree_util.tree_structure((0, {"s": 0}))
    return closed, tree, [x]


# ------------------------------------------------------------------ round trips

@pytest.mark.usefixtures("strict_eager")
def test_torchlike_op_jaxprs_round_trip_bit_identically(monkeypatch):
    """Forward, forward-with-VJP and backward jaxprs of a quarter of the op tables' ops (every
    fourth by name, first case each), plus bf16 and f16 ops: all written, all bit-identical,
    but those holding a host callback (``pure_callback``: torch's tie rules replayed on the
    host), which a cache file may not construct, so they are refused."""
    sys.path.insert(0, HERE)
    import op_db
    import test_interpret as TI
    names = sorted(op_db.DB)
    monkeypatch.setattr(op_db, "DB", {n: op_db.DB[n] for n in names[::4]})
    rec = TI._run_op_tables(monkeypatch, cases_per_op=1)
    a = torchlike.randn(4, 5, requires_grad=True)
    b = torchlike.randn(5, 3)
    for dt in (torchlike.bfloat16, torchlike.float16):
        x = a.to(dt)
        y = (torchlike.softmax(x @ b.to(dt), -1) * 3 + x.sum(1, keepdim=True).exp().mean())
        (y.float().sum() + torchlike.nn.functional.gelu(x).float().mean()).backward()
    kinds = {r[1] for r in rec.records}
    assert kinds == {"fwd", "fwd_vjp", "bwd"}, kinds
    assert len(rec.records) > 300, len(rec.records)
    refused, same_key = [], 0
    callbacks = set()
    for name, kind, closed, leaves, out in rec.records:
        if any(e.primitive.name == "pure_callback" for e in _all_eqns(closed.jaxpr)):
            callbacks.add((name, kind))
            assert T.dumps(closed, jax.tree_util.tree_structure(out)) is None, (name, kind)
            continue
        data = round_trip(closed, leaves, expect=out)
        if data is None:
            refused.append((name, kind))
            continue
        if not _stubbed(closed):
            loaded = T.loads(data)[0]
            assert _program_cache.key(loaded) == _program_cache.key(closed), (name, kind)
            same_key += 1
    lowp = {str(v.aval.dtype) for r in rec.records for e in _all_eqns(r[2].jaxpr)
            for v in e.outvars}
    assert {"bfloat16", "float16"} <= lowp
    print(f"\n{len(rec.records)} op jaxprs round-tripped ({same_key} with the same program-cache "
          f"key), refused: {refused}, host callbacks: {sorted(callbacks)}")
    assert not refused
    assert {n for n, _k in callbacks} <= {"kthvalue", "topk", "linalg_ldl_factor_ex",
                                          "linalg_ldl_solve"}


def test_control_flow_random_keys_and_low_precision_round_trip():
    import test_interpret as TI
    x = RNG.standard_normal(5).astype(np.float32)
    f = TI.control_flow_program()
    closed = jax.make_jaxpr(f)(x, np.int32(2))
    prims = {e.primitive.name for e in _all_eqns(closed.jaxpr)}
    assert {"scan", "while", "cond", "jit", "custom_vjp_call", "custom_jvp_call"} <= prims, prims
    for n in (0, 2, 7):
        assert round_trip(closed, [x, np.int32(n)]) is not None

    # random draws: typed keys in, out and as avals inside; raw key data wrapped
    key = jax.random.key(3)
    kd = np.asarray(jax.random.key_data(key))

    def draws(k, kd):
        k1, k2 = jax.random.split(k)
        w = jax.random.wrap_key_data(kd)
        return (jax.random.uniform(k1, (3, 2)), jax.random.uniform(k2, (4,), jnp.bfloat16),
                jax.random.bits(w, (2,), jnp.uint32), jax.random.split(w, 3),
                jax.random.randint(jax.random.fold_in(k1, 7), (5,), 0, 10))
    closed, shape = jax.make_jaxpr(draws, return_shape=True)(key, kd)
    assert any(jax.dtypes.issubdtype(a.dtype, jax.dtypes.prng_key) for a in closed.in_avals)
    assert round_trip(closed, [key, kd], jax.tree_util.tree_structure(shape)) is not None

    # low precision: bf16 / f16 arithmetic, constants and literals
    h = RNG.standard_normal((3, 4)).astype(BF16)
    c16 = np.arange(4, dtype=np.float16)

    def lowp(h, q):
        return (h * np.asarray(1.5, BF16) + h.sum(0), jnp.tanh(q.astype(jnp.float16)) + c16,
                (h.astype(jnp.float32) @ np.ones((4, 2), np.float32)).astype(jnp.bfloat16))
    closed = jax.make_jaxpr(lowp)(h, c16)
    assert round_trip(closed, [h, c16]) is not None


@pytest.mark.usefixtures("strict_eager")
def test_a_training_step_round_trips_and_the_costs(monkeypatch):
    """A Linear + cross_entropy + Adam step at shapes no other test uses (cold: every jaxpr
    traced by the interpreter tier):
    each jaxpr round-trips bit-identically; dumps/loads cost against tracing. (Forwards-with-VJP
    interpreted, as with ``TORCHLIKE_REMAT=0``: their Pullback trees round-trip too.)"""
    from torchlike import _registry
    from torchlike.optim import optimizer as O
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 8)
    monkeypatch.setattr(_registry, "REMAT", False)
    # the group update traced whole (as it is for its compiled program), the biggest jaxpr
    monkeypatch.setattr(O, "PER_PARAMETER", False)
    traced = []
    trace = _tiers.trace

    def recording(fn, args):            # the interpreter tier's traces (of concrete inputs)
        t0 = time.perf_counter()
        out = trace(fn, args)
        if not any(isinstance(a, jax.ShapeDtypeStruct) for a in jax.tree_util.tree_leaves(args)):
            traced.append((fn, args, out, time.perf_counter() - t0))
        return out
    monkeypatch.setattr(_tiers, "trace", recording)
    m = torchlike
    m.manual_seed(0)
    model = m.nn.Sequential(m.nn.Linear(23, 18), m.nn.ReLU(), m.nn.Linear(18, 6))
    opt = m.optim.Adam(model.parameters(), lr=1e-2)
    x = m.tensor(RNG.standard_normal((10, 23)).astype(np.float32))
    y = m.tensor(RNG.integers(0, 6, (10,)))
    loss = m.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    monkeypatch.setattr(_tiers, "trace", trace)
    assert len(traced) >= 10, len(traced)
    rows = []
    vjp_trees = 0
    for fn, args, (closed, shape), first in traced:
        leaves = [np.asarray(v) if isinstance(v, jax.Array) and
                  not jax.dtypes.issubdtype(v.dtype, jax.dtypes.prng_key) else v
                  for v in jax.tree_util.tree_leaves(args)]
        tree = jax.tree_util.tree_structure(shape)
        data = round_trip(closed, leaves, tree)
        # every tree round-trips, a forward-with-VJP's too: its residuals travel in a named
        # Pullback node (plain aux data), not in jax's pullback closure
        assert data is not None, (repr(tree)[:300], [e.primitive.name for e in closed.jaxpr.eqns])
        vjp_trees += "CustomNode(Pullback[" in repr(tree)
        t0 = time.perf_counter()
        T.dumps(closed, tree)
        t1 = time.perf_counter()
        T.loads(data)
        t2 = time.perf_counter()
        trace(fn, args)
        t3 = time.perf_counter()
        rows.append((len(list(_all_eqns(closed.jaxpr))), t1 - t0, t2 - t1, first, t3 - t2,
                     len(data)))
    rows.sort()
    big = rows[-1]
    med = [float(np.median([r[i] for r in rows])) * 1e3 for i in (1, 2, 3, 4)]
    print(f"\n{len(rows)} step jaxprs: median dumps {med[0]:.2f} ms, loads {med[1]:.2f} ms, "
          f"trace {med[2]:.2f} ms (again: {med[3]:.2f} ms), size "
          f"{int(np.median([r[5] for r in rows]))} B; largest ({big[0]} equations): dumps "
          f"{big[1] * 1e3:.2f} ms, loads {big[2] * 1e3:.2f} ms, trace {big[3] * 1e3:.2f} ms "
          f"(again: {big[4] * 1e3:.2f} ms), {big[5]} B")
    print(f"out trees with a Pullback node: {vjp_trees} of {len(rows)}")
    assert 0 < vjp_trees < len(rows) / 2
    assert big[0] > 100                 # the optimizer's update


def test_what_cannot_be_written_faithfully_is_refused(monkeypatch):
    x = np.ones(3, np.float32)
    # effects
    closed = jax.make_jaxpr(lambda x: (jax.debug.print("{}", x), x * 2)[1])(x)
    assert T.dumps(closed, _flat_tree(1)) is None
    # a primitive that is no module's attribute (it could not be found again)
    p = jax.extend.core.Primitive("not_findable_anywhere")
    p.def_abstract_eval(lambda a: a)
    closed = jax.make_jaxpr(lambda x: p.bind(x))(x)
    assert T.dumps(closed, _flat_tree(1)) is None
    # an unknown object in the parameters
    q = jax.extend.core.Primitive("tl_test_param")
    q.def_abstract_eval(lambda a, **_: a)
    # (findable by name once a jax module holds it, but its parameter is not writable)
    monkeypatch.setattr(jax.extend.core, "_tl_test_param_p", q, raising=False)
    monkeypatch.setattr(T, "_scanned", [0])     # (primitives are indexed again as modules load)
    closed = jax.make_jaxpr(lambda x: q.bind(x, fn=lambda v: v))(x)
    assert T.dumps(closed, _flat_tree(1)) is None
    closed = jax.make_jaxpr(lambda x: q.bind(x, fn=3))(x)
    assert T.loads(T.dumps(closed, _flat_tree(1)))[0].eqns[0].primitive is q
    # an output tree with a node other than tuple/list/dict/None
    import collections
    P = collections.namedtuple("P", "a b")
    closed, shape = jax.make_jaxpr(lambda x: P(x, x), return_shape=True)(x)
    assert T.dumps(closed, jax.tree_util.tree_structure(shape)) is None
    # a leaf count that does not match
    assert T.dumps(closed, _flat_tree(3)) is None
    # damaged bytes are refused by loads, never raised
    data = T.dumps(*_small()[:2])
    for bad in (data[:len(data) // 2], data[:10] + b"\xff" + data[11:], b"", b"junk"):
        assert T.loads(bad) is None
    # stand-ins of custom_vjp rules raise when called
    @jax.custom_vjp
    def cv(x):
        return jnp.sin(x)
    cv.defvjp(lambda x: (jnp.sin(x), x), lambda r, g: (g,))
    closed = jax.make_jaxpr(cv)(x)
    loaded, _ = T.loads(T.dumps(closed, _flat_tree(1)))
    stub = loaded.jaxpr.eqns[0].params["bwd"]
    with pytest.raises(RuntimeError, match="not available"):
        stub()


def test_a_malicious_payload_is_never_run(store, tmp_path):
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))
    closed, tree, _ = _small()
    T.put("evil", _sig([np.zeros((3, 4), np.float32)]), closed, tree)
    T.flush()
    sig = _sig([np.zeros((3, 4), np.float32)])
    k = T.key("evil", sig)
    for payload in (pickle.dumps(Evil()), pickle.dumps((1, Evil(), None)),
                    pickle.dumps(io.BytesIO),          # any other class
                    pickle.dumps(T._Pickler),          # this module, not a rebuild function
                    pickle.dumps(eval)):
        assert T.loads(payload) is None
        with open(os.path.join(store, k), "wb") as f:
            f.write(T._head(k) + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
        T._listing[0] = None
        before = T.stats()["ignored"]
        assert T.get("evil", sig) is None
        assert T.stats()["ignored"] == before + 1
        assert not os.path.exists(os.path.join(store, k))
    assert not marker.exists()


# ------------------------------------------------------------------ the store

def test_put_get_and_damaged_entries(store, monkeypatch):
    closed, tree, leaves = _small()
    sig = _sig(leaves)
    # a key absent from the directory's listing (one per process) costs no look on disk
    monkeypatch.setattr(T, "open", lambda *a, **k: pytest.fail("looked"), raising=False)
    assert T.get("f", sig) is None
    monkeypatch.delattr(T, "open")
    s0 = T.stats()
    T.put("f", sig, closed, tree)
    T.flush()
    assert T.stats()["saved"] == s0["saved"] + 1
    got = T.get("f", sig)
    assert got is not None and got[1] == tree
    assert [_bits(v) for v in I.run(got[0], *leaves)] == [_bits(v) for v in I.run(closed, *leaves)]
    assert T.stats()["loaded"] == s0["loaded"] + 1
    assert T.get("g", sig) is None and T.get("f", _sig([leaves[0][:2]])) is None
    monkeypatch.setattr(T, "open", lambda *a, **k: pytest.fail("looked again"), raising=False)
    assert T.get("g", sig) is None
    monkeypatch.delattr(T, "open")

    k = T.key("f", sig)
    path = os.path.join(store, k)
    good = open(path, "rb").read()
    head = T._head(k)
    foreign = head.replace(jax.__version__.encode(), b"0.0.1")
    assert foreign != head
    other = T.key("other", sig)
    cases = {
        "corrupt": good[:-20] + bytes(b ^ 0x55 for b in good[-20:]),
        "truncated": good[:len(good) // 2],
        "foreign": foreign + good[len(head):],
        "wrong sha": head + b"0" * 64 + good[len(head) + 64:],
        "other key's file": good.replace(k.encode(), other.encode()),
        "empty": b"",
    }
    for what, blob in cases.items():
        with open(path, "wb") as f:
            f.write(blob)
        T._listing[0] = None
        before = T.stats()["ignored"]
        assert T.get("f", sig) is None, what
        assert T.stats()["ignored"] == before + 1, what
        assert not os.path.exists(path), what
    # an entry whose inputs do not fit the signature (a stale or misnamed file)
    wrong = jax.make_jaxpr(lambda x: x + 1)(np.zeros(2, np.float64))
    payload = T.dumps(wrong, _flat_tree(1))
    with open(path, "wb") as f:
        f.write(head + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
    T._listing[0] = None
    assert T.get("f", sig) is None and not os.path.exists(path)
    # an unserializable jaxpr is counted, nothing written
    eff = jax.make_jaxpr(lambda x: (jax.debug.print("{}", x), x)[1])(leaves[0])
    u = T.stats()["unserializable"]
    T.put("eff", sig, eff, _flat_tree(1))
    T.flush()
    assert T.stats()["unserializable"] == u + 1
    assert not os.path.exists(os.path.join(store, T.key("eff", sig)))


def test_keys_depend_on_identity_signature_and_versions(store, monkeypatch):
    x = np.zeros((2, 3), np.float32)
    tree = jax.tree_util.tree_structure(((0, 0), {}))
    base = T.key("f", _sig([x, x], tree))
    assert base == T.key("f", _sig([x, x], tree))
    assert len({base, T.key("g", _sig([x, x], tree)), T.key("f", _sig([x, x])),
                T.key("f", _sig([x, x.astype(np.float64)], tree)),
                T.key("f", _sig([x, 1.0], tree)), T.key("f", _sig([x, 1], tree))}) == 6
    T._keys.clear()
    monkeypatch.setattr(T, "_versions_cache", [b'{"jax": "other"}'])
    assert T.key("f", _sig([x, x], tree)) != base
    # a signature whose text holds an address is never stored
    assert T.key("f", (object,)) is not None
    assert T.key("f", (object(),)) is None


def test_the_size_bound_evicts_the_oldest(store, monkeypatch):
    closed, tree, leaves = _small()
    T.put("first", _sig(leaves), closed, tree)
    T.flush()
    size = os.path.getsize(os.path.join(store, T.key("first", _sig(leaves))))
    monkeypatch.setattr(T, "MAX_BYTES", 4 * size)
    past = time.time() - 1000
    os.utime(os.path.join(store, T.key("first", _sig(leaves))), (past, past))
    for i in range(12):
        T.put(f"f{i}", _sig(leaves), closed, tree)
        T.flush()
    names = os.listdir(store)
    assert sum(os.path.getsize(os.path.join(store, n)) for n in names) <= 4 * size
    assert 2 <= len(names) <= 4, names
    assert T.key("first", _sig(leaves)) not in names          # the oldest went first
    assert T.key("f11", _sig(leaves)) in names                 # the newest stays


@pytest.mark.parametrize("var", ["TORCHLIKE_TRACE_CACHE", "TORCHLIKE_PROGRAM_CACHE",
                                 "TORCHLIKE_COMPILATION_CACHE"])
def test_the_off_switches(store, monkeypatch, var):
    closed, tree, leaves = _small()
    T.put("on", _sig(leaves), closed, tree)
    T.flush()
    assert T.get("on", _sig(leaves)) is not None
    monkeypatch.setenv(var, "0")
    T._reset()
    assert T.directory() is None
    T.put("off", _sig(leaves), closed, tree)
    T.flush()
    assert T.get("on", _sig(leaves)) is None
    assert T.key("off", _sig(leaves)) not in os.listdir(store)


_CHILD = textwrap.dedent("""
    import hashlib, json, sys
    import numpy as np, jax, jax.numpy as jnp
    import torchlike
    from torchlike import _interpret as I, _trace_store as T
    x = np.load(sys.argv[1])
    sig = (((x.shape, x.dtype),), None)
    traced = jax.make_jaxpr
    def no_tracing(*a, **k):
        raise AssertionError("traced")
    jax.make_jaxpr = no_tracing
    got = T.get("parent-fn", sig)
    jax.make_jaxpr = traced
    out = None
    if got is not None:
        out = [hashlib.sha256(np.asarray(v).tobytes()).hexdigest() for v in I.run(got[0], x)]
    # race the other child on one key
    closed = jax.make_jaxpr(lambda x: jnp.cos(x) * 3)(x)
    tree = jax.tree_util.tree_structure((0,))
    for _ in range(40):
        T.put("shared", sig, closed, tree)
        T.flush()
    print(json.dumps({"out": out, "stats": T.stats()}))
""")


def test_a_second_process_loads_without_tracing_and_concurrent_writers(store, tmp_path):
    x = RNG.standard_normal((6, 7)).astype(np.float32)
    xs = str(tmp_path / "x.npy")
    np.save(xs, x)
    closed = jax.make_jaxpr(lambda x: (jnp.exp(jnp.sin(x)) @ x.T).sum(0))(x)
    sig = (((x.shape, x.dtype),), None)
    T.put("parent-fn", sig, closed, _flat_tree(1))
    T.flush()
    want = [hashlib.sha256(np.asarray(v).tobytes()).hexdigest() for v in I.run(closed, x)]
    env = dict(os.environ, TORCHLIKE_CACHE_DIR=os.path.dirname(store), PYTHONPATH=ROOT,
               TORCHLIKE_PROGRAM_CACHE="1")
    env.pop("TORCHLIKE_TRACE_CACHE", None)
    script = str(tmp_path / "child.py")
    with open(script, "w") as f:
        f.write(_CHILD)
    procs = [subprocess.Popen([sys.executable, script, xs], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-2000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    for r in results:
        assert r["out"] == want                     # loaded, not traced, same bits
        assert r["stats"]["loaded"] == 1 and r["stats"]["ignored"] == 0
        assert r["stats"]["saved"] == 40
    assert not [n for n in os.listdir(store) if n.startswith(".tmp-")]
    T._listing[0] = None
    got = T.get("shared", sig)
    assert got is not None
    np.testing.assert_allclose(I.run(got[0], x)[0], np.cos(x) * np.float32(3), rtol=1e-6)


_WARM = """
import json, sys
import jax.monitoring as mon
compiles = []
mon.register_event_duration_secs_listener(
    lambda name, secs, **kw: compiles.append(name) if name.endswith("backend_compile_duration")
    else None)
import torchlike as torch
from torchlike import _shape_poly, _tiers, _trace_store
torch.manual_seed(0)
emb, lin = torch.nn.Embedding(50, 16), torch.nn.Linear(16, 50)
idx = torch.zeros(1, 1, dtype=torch.long)
with torch.no_grad():
    for _ in range(4):                  # a context that grows: every op meets a new shape
        h = torch.nn.functional.gelu(emb(idx)).softmax(-1)
        idx = torch.cat([idx, lin(h)[:, -1].argmax(-1, keepdim=True)], dim=1)
opt = torch.optim.Adam(lin.parameters(), lr=0.1)
lin(torch.randn(3, 16)).square().mean().backward()
opt.step()
_trace_store.flush()
s = _tiers.stats()
sp = _shape_poly.stats()
print(json.dumps({"idx": idx.tolist(), "w": lin.weight.sum().item(),
                  "made": s["traces"] + sp["symbolic"], "specialized": sp["specialized"],
                  "poly_loads": sp["loaded"],
                  "g": lin.weight.grad.square().sum().item(),
                  "traces": s["traces"], "loads": s["trace_loads"], "compiles": len(compiles),
                  "fused_traces": torch.eager.stats()["fused"]["traces"]}))
"""


def test_a_warm_process_loads_the_traces_of_forwards_draws_and_updates(tmp_path):
    """The second process with the same cache directory traces nothing: the forwards of
    generation, the forwards-with-VJP and backwards of a training step, the draws and the
    optimizer's update come from disk, with the first process's results and gradients."""
    env = dict(os.environ, TORCHLIKE_CACHE_DIR=str(tmp_path), TORCHLIKE_PROGRAM_CACHE="1",
               TORCHLIKE_EAGER="strict",     # (the per-op path's traces)
               TORCHLIKE_TRACE_CACHE="1", TORCHLIKE_INTERPRET_CALLS="8")
    env.pop("TORCHLIKE_COMPILATION_CACHE", None)
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", _WARM], env=env, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    assert cold["idx"] == warm["idx"] and cold["w"] == warm["w"] and cold["g"] == warm["g"]
    # (a shape pattern's symbolic trace is kept, with its guards; the second process
    # specializes it to each shape as the first did)
    # (the first process may load a trace it wrote for another configuration of the same op: a
    # forward with and without grad share them)
    assert cold["made"] > 10 and cold["loads"] + cold["poly_loads"] < cold["made"]
    # (rarely one concrete trace: the first process's background writes race its own reads, and
    # a configuration served by another one's pattern trace leaves no trace of its own)
    assert warm["traces"] <= 1 and warm["made"] <= 1, warm
    # (each signature the first process traced is served from disk: by its concrete trace, or
    # by its pattern's symbolic trace, loaded once and specialized; a pattern's symbolic trace
    # also serves the first shape, which the first process traced concretely)
    assert warm["loads"] > 0 and warm["poly_loads"] > 0 and warm["specialized"] > 0
    assert warm["loads"] + warm["specialized"] >= cold["made"], warm
    assert cold["compiles"] == warm["compiles"] == 0     # (writing the store compiles nothing)


def test_a_warm_fused_process_records_from_the_stored_traces(tmp_path):
    """Fused eager's recording takes each call's output shapes from the interpreter's plan of
    its signature: a second process with the same cache directory records the same calls
    (generation with a growing context, a training step, a draw, an update) tracing nothing,
    with the first process's results and gradients."""
    env = dict(os.environ, TORCHLIKE_CACHE_DIR=str(tmp_path), TORCHLIKE_PROGRAM_CACHE="1",
               TORCHLIKE_EAGER="fused", TORCHLIKE_TRACE_CACHE="1",
               TORCHLIKE_INTERPRET_CALLS="8")
    env.pop("TORCHLIKE_COMPILATION_CACHE", None)
    runs = []
    for _ in range(2):
        out = subprocess.run([sys.executable, "-c", _WARM], env=env, capture_output=True,
                             text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-2000:]
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    cold, warm = runs
    assert cold["idx"] == warm["idx"] and cold["w"] == warm["w"] and cold["g"] == warm["g"]
    assert cold["made"] + cold["fused_traces"] > 10, cold
    assert warm["traces"] + warm["fused_traces"] <= 1 and warm["made"] <= 1, warm
    assert warm["loads"] + warm["specialized"] >= cold["made"], warm


@pytest.mark.usefixtures("strict_eager")     # (fused eager records forwards: no pullbacks)
def test_a_backward_without_its_pullback_structure_traces_the_forward_once(monkeypatch):
    """A forward-with-VJP loaded from disk leaves no pullback structure in the process: the
    backward gets it by tracing the forward abstractly, once, with torch's gradients."""
    import torch as real
    from torchlike import _registry
    monkeypatch.setattr(_registry, "REMAT", False)     # (the forward-with-VJP runs at once)
    xv = np.array([[0.5, -1.0, 2.0, 0.125]], np.float32)      # (shapes no other test uses)
    wv = np.array([[1.0, 2.0, 0.5], [3.0, -4.0, 1.5], [0.5, 0.25, -2.0], [1.0, 0.0, 3.0]],
                  np.float32)
    rx, rw = (real.tensor(v, requires_grad=True) for v in (xv, wv))
    real.nn.functional.gelu(rx @ rw).square().sum().backward()
    x, w = (torchlike.tensor(v, requires_grad=True) for v in (xv, wv))
    out = torchlike.nn.functional.gelu(x @ w).square().sum()
    assert isinstance(out.grad_fn.vjp, _registry.Pullback)
    monkeypatch.setattr(_registry, "_PULLBACK_TREES", {})       # as in a process that loaded
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), rx.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.grad.numpy(), rw.grad.numpy(), rtol=1e-5, atol=1e-6)
    ops = sorted({name[0].split("|")[1] for name in _registry._PULLBACK_TREES})
    assert ops == ["'gelu'", "'matmul'", "'square'", "'sum'"] or len(ops) >= 3, ops


def test_stable_identities_tell_functions_apart_and_refuse_what_they_cannot_name():
    def make(k, op):
        return lambda x: op(x) * k
    a, b = make(2.0, np.tanh), make(3.0, np.tanh)
    assert _tiers.stable(a) is not None
    assert _tiers.stable(a) == _tiers.stable(make(2.0, np.tanh))    # the same computation
    assert _tiers.stable(a) != _tiers.stable(b)                     # another captured value
    assert _tiers.stable(a) != _tiers.stable(make(2.0, np.sin))     # another captured function
    assert _tiers.stable(lambda x: x + 1) != _tiers.stable(lambda x: x - 1)   # other code
    assert _tiers.stable(np.arange(3)) != _tiers.stable(np.arange(3) + 1)     # array contents
    assert _tiers.stable(jnp.add) is not None and _tiers.stable(jax.nn.relu) is not None

    class Opaque:
        pass
    assert _tiers.stable(make(Opaque(), np.tanh)) is None       # its text would be an address
    assert _tiers.stable(list(range(300))) is None                # too big to name cheaply
    assert _tiers.stable(np.zeros(1 << 20)) is None


def test_a_symbolic_trace_and_its_guards_round_trip():
    """A shape-polymorphic trace (torchlike._shape_poly) is written with its size expressions
    as text and read back in one fresh scope: it specializes to the same results."""
    from jax import export
    from torchlike import _shape_poly
    d0, d1 = export.symbolic_shape("d0, d1", scope=export.SymbolicScope())
    closed = jax.make_jaxpr(lambda x: (jnp.reshape(x, (d0 * d1,))[: d1 + 1] * 2,
                                       jnp.zeros((d0 // 2, 3)).sum()))(
        jax.ShapeDtypeStruct((d0, d1), np.float32))
    guards = ((d0, "__ge__", 2, True), (d1 - d0, "__ne__", 0, True), (2 * d0 + 1, "__eq__", d1,
                                                                      False))
    blob = T.dumps(closed, _flat_tree(2), guards)
    assert blob is not None
    c2, tree, g2 = T._loads(blob)
    assert str(c2.jaxpr) == str(closed.jaxpr) and tree == _flat_tree(2)
    env = {"d0": 4, "d1": 6}
    assert [(str(a), n, str(b), r) for a, n, b, r in g2] == \
        [(str(a), n, str(b), r) for a, n, b, r in guards]
    assert _shape_poly._holds(g2, env) and not _shape_poly._holds(g2, {"d0": 4, "d1": 9})
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    out = I.run(_shape_poly.specialize(c2, env), x)
    np.testing.assert_array_equal(out[0], x.reshape(-1)[:7] * 2)
    assert out[1] == 0
