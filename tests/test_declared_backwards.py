"""Ops that declare their backward (``defop(..., vjp=...)``): what a first call's backward traces
instead of ``jax.vjp`` of the op's function (several times cheaper to trace). Each declared rule
is checked against ``jax.vjp`` of the function it differentiates, configuration by
configuration (which inputs need grad, broadcast inputs, factors, reductions, ignored targets),
and every op that declares one must have cases here."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import torchlike as T
from torchlike._registry import OPS

R = np.random.default_rng(0)
F32, F64 = np.float32, np.float64


def f(*shape, dtype=F32):
    return R.standard_normal(shape).astype(dtype)


def targets(n, c, ignore=None):
    t = R.integers(0, c, n)
    if ignore is not None:
        t[::3] = ignore
    return t.astype(np.int64)


# name: [(arrays, static, needs)]
CASES = {
    "rnn_cell_state": [((f(3, 4),), {}, (True,))],
    "addmm": [
        ((f(5), f(3, 4), f(4, 5)), dict(beta=1, alpha=1, kind="mm"), (True, True, True)),
        ((f(3, 5), f(3, 4), f(4, 5)), dict(beta=0.5, alpha=2.0, kind="mm"), (True, True, True)),
        ((f(1, 5), f(3, 4), f(4, 5)), dict(beta=1, alpha=1, kind="mm"), (True, False, True)),
        ((f(5), f(3, 4), f(4, 5)), dict(beta=0, alpha=0, kind="mm"), (True, True, True)),
        ((f(5, dtype=F64), f(3, 4, dtype=F64), f(4, 5, dtype=F64)),
         dict(beta=1, alpha=1, kind="mm"), (False, True, False)),
        ((f(5), f(2, 3, 4), f(5, 4)), dict(beta=1, alpha=1, kind="linear"), (True, True, True)),
        ((f(5), f(3, 4), f(5, 4)), dict(beta=1, alpha=1, kind="linear"), (False, False, True)),
    ],
    "relu": [
        ((np.array([-1.0, 0.0, 2.0, np.nan, -0.0, 3.0], F32),), {}, (True,)),
        ((f(4, 3, dtype=F64),), {}, (True,)),
    ],
    "t": [((f(3, 4),), {}, (True,)), ((f(4),), {}, (True,))],
    "transpose": [((f(2, 3, 4),), dict(d0=0, d1=2), (True,)),
                  ((f(2, 3, 4),), dict(d0=-1, d1=1), (True,))],
    "permute": [((f(2, 3, 4),), dict(dims=(2, 0, 1)), (True,)),
                ((f(2, 3, 4),), dict(dims=(-1, 0, 1)), (True,))],
    "nn_log_softmax": [((f(4, 7),), dict(dim=1), (True,)), ((f(3, 4, 5),), dict(dim=0), (True,)),
                       ((f(6, dtype=F64),), dict(dim=0), (True,))],
    "add": [((f(3, 4), f(4)), {}, (True, True)), ((f(3, 4), f(3, 1)), dict(alpha=2.5), (True, True)),
            ((f(2, 3), np.float32(2.0)), {}, (True, False))],
    "sub": [((f(3, 4), f(4)), {}, (True, True)), ((f(1, 4), f(3, 4)), dict(alpha=-0.5), (True, True))],
    "mul": [((f(3, 4), f(4)), {}, (True, True)), ((f(3, 4), f(3, 4)), {}, (False, True))],
    "div": [((f(3, 4), np.abs(f(4)) + 0.5), {}, (True, True)),
            ((f(3, 4), np.abs(f(3, 1)) + 0.5), {}, (False, True))],
    "masked_fill": [((f(3, 4), R.random((3, 4)) > 0.5, np.float32(-np.inf)), {},
                     (True, False, False)),
                    ((f(3, 4), R.random((2, 3, 4)) > 0.5, np.float32(0.0)), {},
                     (True, False, False))],
    "nn_gelu": [((f(4, 5),), dict(approximate="none"), (True,)),
                ((f(4, 5, dtype=F64),), dict(approximate="tanh"), (True,)),
                ((np.array([-8.0, -1.0, 0.0, 1.0, 8.0], F32),), dict(approximate="none"), (True,))],
    "nn_softmax": [((f(4, 7),), dict(dim=1, neg=False), (True,)),
                   ((f(3, 4, 5, dtype=F64),), dict(dim=0, neg=True), (True,))],
    "sum": [((f(3, 4),), dict(dims=(1,), keepdim=False, dtype=None), (True,)),
            ((f(3, 4, 2),), dict(dims=(0, -1), keepdim=True, dtype=None), (True,)),
            ((f(3, 4),), dict(dims=None, keepdim=False, dtype=None), (True,)),
            ((f(3, 4),), dict(dims=None, keepdim=False, dtype=np.dtype(F64)), (True,))],
    "mean": [((f(3, 4),), dict(dims=(0,), keepdim=False, dtype=None), (True,)),
             ((f(2, 3, 4, dtype=F64),), dict(dims=(1, 2), keepdim=True, dtype=None), (True,)),
             ((f(5),), dict(dims=None, keepdim=False, dtype=None), (True,))],
    "unsqueeze": [((f(3, 4),), dict(dim=1), (True,)), ((f(3),), dict(dim=-1), (True,))],
    "squeeze": [((f(3, 1, 4, 1),), dict(dims=(1, 3), kind="dims"), (True,)),
                ((f(1, 4),), dict(dims=None, kind=None), (True,))],
    "expand": [((f(3, 1),), dict(shape=(2, 3, 4)), (True,)), ((f(4),), dict(shape=(3, 4)), (True,))],
    "clone": [((f(3, 4),), {}, (True,))],
    "cat": [((f(2, 3), f(4, 3), f(1, 3)), dict(dim=0, skip=()), (True, False, True)),
            ((f(2, 3), np.zeros((0,), F32), f(2, 5)), dict(dim=1, skip=(1,)), (True, True, True))],
    "stack": [((f(2, 3), f(2, 3), f(2, 3)), dict(dim=1), (True, False, True))],
    "exp": [((f(3, 4),), {}, (True,))],
    "tanh": [((f(3, 4, dtype=F64),), {}, (True,))],
    "sigmoid": [((f(3, 4),), {}, (True,))],
    "sqrt": [((np.abs(f(3, 4)) + 0.1,), {}, (True,))],
    "view": [((f(2, 3, 4),), dict(shape=(6, 4)), (True,)), ((f(12),), dict(shape=(3, 4)), (True,))],
    "reshape_copy": [((f(2, 3, 4),), dict(shape=(4, 6)), (True,))],
    "split": [((f(4, 9),), dict(sizes=(2, 3, 4), dim=1, name="SplitWithSizes"), (True,)),
              ((f(6, 2),), dict(sizes=(3, 3), dim=0, name="Split"), (True,))],
    "matmul": [((f(3, 4), f(4, 5)), dict(ndims=(2, 2)), (True, True)),
               ((f(2, 3, 3, 4), f(2, 3, 4, 5)), dict(ndims=(4, 4)), (True, True)),
               ((f(2, 3, 4), f(4, 5)), dict(ndims=(3, 2)), (True, True)),      # broadcast b
               ((f(3, 4), f(2, 4, 5)), dict(ndims=(2, 3)), (False, True)),
               ((f(2, 1, 3, 4), f(5, 4, 2)), dict(ndims=(4, 3)), (True, True))],
    "layer_norm": [
        ((f(4, 6), np.abs(f(6)) + 0.5, f(6)), dict(n=1, eps=1e-5, has_w=True, has_b=True),
         (True, True, True)),
        ((f(2, 3, 4, dtype=F64), f(3, 4, dtype=F64)), dict(n=2, eps=1e-6, has_w=True,
                                                            has_b=False), (True, True)),
        ((f(5, 7),), dict(n=1, eps=1e-5, has_w=False, has_b=False), (True,)),
        ((f(4, 6), np.abs(f(6)) + 0.5, f(6)), dict(n=1, eps=1e-5, has_w=True, has_b=True),
         (False, True, False)),
    ],
    "embedding": [
        ((np.array([[0, 2, 2], [4, 1, 0]]), f(5, 3)), dict(padding_idx=None), (False, True)),
        ((np.array([0, 2, 2, 4, 1, 0]), f(5, 3)), dict(padding_idx=2), (False, True)),
    ],
    "nll_loss": [
        ((f(6, 5), targets(6, 5)), dict(ignore_index=-100, reduction="mean", ndim=2),
         (True, False)),
        ((f(6, 5), targets(6, 5, ignore=2)), dict(ignore_index=2, reduction="mean", ndim=2),
         (True, False)),
        ((f(6, 5), targets(6, 5, ignore=-1)), dict(ignore_index=-1, reduction="sum", ndim=2),
         (True, False)),
        ((f(6, 5), targets(6, 5, ignore=-1)), dict(ignore_index=-1, reduction="none", ndim=2),
         (True, False)),
        ((f(6, 5), targets(6, 5), np.abs(f(5)) + 0.1),
         dict(ignore_index=-100, reduction="mean", ndim=2), (True, False, False)),
        ((f(6, 5, dtype=F64), np.full(6, 3, np.int64)),       # every target ignored: zeros
         dict(ignore_index=3, reduction="mean", ndim=2), (True, False)),
    ],
}


def _params():
    for name, cases in CASES.items():
        for k, case in enumerate(cases):
            yield pytest.param(name, case, id=f"{name}-{k}")


@pytest.mark.parametrize("name,case", list(_params()))
def test_declared_backward_equals_jax_vjp(name, case):
    op = OPS[name]
    xs, static, needs = case
    xs = tuple(jnp.asarray(x) for x in xs)
    c = op.compiled(tuple(sorted(static.items())), None, needs)
    out = op.fn(*xs, **static)
    outs = out if isinstance(out, tuple) else (out,)
    cots = tuple(jnp.asarray(R.standard_normal(np.shape(o)).astype(o.dtype)) for o in outs)
    pos = [i for i, n in enumerate(needs) if n]

    def of_diff(*d):
        full = list(xs)
        for i, v in zip(pos, d):
            full[i] = v
        return op.fn(*full, **static)

    want = jax.vjp(of_diff, *[xs[i] for i in pos])[1](cots if isinstance(out, tuple)
                                                      else cots[0])
    rule = op.vjp(cots, xs, needs, **static)
    assert rule is not NotImplemented, "the case is one the rule declares"
    got = c.bwd_remat.raw(*xs, *cots)
    assert len(got) == len(want)
    for g, w, i in zip(got, want, pos):
        assert g.shape == xs[i].shape and g.dtype == xs[i].dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-6, atol=1e-6)


def test_every_declared_backward_has_cases():
    declared = {name for name, op in OPS.items() if op.vjp is not None}
    assert declared == set(CASES)


def test_configurations_a_rule_leaves_to_jax_vjp():
    # complex addmm, half log_softmax, nll_loss over (N, C, d) and with a weight that needs
    # grad: the rule declines and the registry differentiates the function
    c = [f(2, 2) + 1j * f(2, 2)] * 3
    assert OPS["addmm"].vjp((jnp.asarray(c[0]),), tuple(map(jnp.asarray, c)), (True,) * 3,
                            beta=1, alpha=1, kind="mm") is NotImplemented
    h = jnp.asarray(f(3, 4)).astype(jnp.float16)
    assert OPS["nn_log_softmax"].vjp((h,), (h,), (True,), dim=1) is NotImplemented
    x3, t3 = jnp.asarray(f(2, 3, 4)), jnp.asarray(targets(8, 3).reshape(2, 4))
    assert OPS["nll_loss"].vjp((jnp.zeros(()),), (x3, t3), (True, False), ignore_index=-100,
                               reduction="mean", ndim=3) is NotImplemented
    x2, t2, w = jnp.asarray(f(4, 3)), jnp.asarray(targets(4, 3)), jnp.asarray(f(3))
    assert OPS["nll_loss"].vjp((jnp.zeros(()),), (x2, t2, w), (True, False, True),
                               ignore_index=-100, reduction="mean", ndim=2) is NotImplemented


def test_a_first_calls_backward_matches_torch():
    # an MLP's first backward (the declared rules: addmm, t, relu, log_softmax, nll_loss)
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    w1, b1 = rng.standard_normal((7, 5)).astype(F32), rng.standard_normal(7).astype(F32)
    w2, b2 = rng.standard_normal((3, 7)).astype(F32), rng.standard_normal(3).astype(F32)
    x, y = rng.standard_normal((4, 5)).astype(F32), np.array([0, 2, 1, 2])

    def grads(m):
        p = [m.tensor(a, requires_grad=True) for a in (w1, b1, w2, b2)]
        h = m.nn.functional.relu(m.nn.functional.linear(m.tensor(x), p[0], p[1]))
        loss = m.nn.functional.cross_entropy(m.nn.functional.linear(h, p[2], p[3]),
                                             m.tensor(y), ignore_index=1)
        loss.backward()
        return [t.grad.numpy() for t in p]

    for g, want in zip(grads(T), grads(torch)):
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)

