"""torch.autograd.forward_ad against torch 2.13: dual tensors through ops (tangents vs torch's
forward AD and torch.func.jvp), levels, errors, in-place writes, repr."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as t_fw

import torchlike as tl
import torchlike.autograd.forward_ad as l_fw

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _fresh_rng():
    """Each test draws the same inputs whatever ran before it (in this worker)."""
    global RNG
    RNG = np.random.default_rng(0)


def _arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


# each case: fn(m, *tensors) written once for torch and torchlike, the float inputs that get a
# tangent (all of them), and extra non-dual inputs
CASES = {
    "sin_mul": (lambda m, x: m.sin(x) * 2 + x, [(3, 4)]),
    "exp_log": (lambda m, x: m.log(m.exp(x) + 1.5), [(5,)]),
    "matmul": (lambda m, a, b: a @ b, [(3, 4), (4, 2)]),
    "softmax": (lambda m, x: m.softmax(x, dim=-1), [(2, 5)]),
    "sum_mean": (lambda m, x: x.sum(0) + x.mean(), [(3, 4)]),
    "tanh_pow": (lambda m, x: m.tanh(x) ** 3, [(6,)]),
    "div_sqrt": (lambda m, a, b: a / m.sqrt(b * b + 1), [(4,), (4,)]),
    "index_cat": (lambda m, x: m.cat([x[1:], x[:2] * 3]), [(5, 2)]),
    "reshape_t": (lambda m, x: x.reshape(2, 6).t() * 1.5, [(3, 4)]),
    "where": (lambda m, x: m.where(x > 0, x * x, -x), [(7,)]),
    "max_dim": (lambda m, x: x.max(dim=1).values, [(3, 4)]),
    "logsumexp": (lambda m, x: m.logsumexp(x, dim=0), [(4, 3)]),
    "layer_norm": (lambda m, x: m.nn.functional.layer_norm(x, (4,)), [(3, 4)]),
    "gelu": (lambda m, x: m.nn.functional.gelu(x), [(8,)]),
    "scalar_ops": (lambda m, x: 2 - x * 0.5 + 1, [(3,)]),
    "broadcast": (lambda m, a, b: a * b + a, [(3, 1), (1, 4)]),
}


def _run(m, fw, fn, xs, ts):
    with fw.dual_level():
        duals = [fw.make_dual(m.tensor(x), m.tensor(t)) for x, t in zip(xs, ts)]
        out = fn(m, *duals)
        p, t = fw.unpack_dual(out)
        return p.detach().numpy().copy(), None if t is None else t.numpy().copy()


@pytest.mark.parametrize("name", list(CASES))
def test_tangents_match_torch(name):
    fn, shapes = CASES[name]
    xs = [_arr(*s) for s in shapes]
    ts = [_arr(*s) for s in shapes]
    pt, tt = _run(torch, t_fw, fn, xs, ts)
    pl, tl_ = _run(tl, l_fw, fn, xs, ts)
    np.testing.assert_allclose(pl, pt, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(tl_, tt, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["sin_mul", "matmul", "softmax", "layer_norm", "broadcast"])
def test_agrees_with_func_jvp(name):
    """The dual-number tangent equals torch.func.jvp's (and torchlike.func.jvp's)."""
    fn, shapes = CASES[name]
    xs = [_arr(*s) for s in shapes]
    ts = [_arr(*s) for s in shapes]
    _, want = torch.func.jvp(lambda *a: fn(torch, *a), tuple(map(torch.tensor, xs)),
                             tuple(map(torch.tensor, ts)))
    _, mine = tl.func.jvp(lambda *a: fn(tl, *a), tuple(map(tl.tensor, xs)),
                          tuple(map(tl.tensor, ts)))
    _, dual = _run(tl, l_fw, fn, xs, ts)
    np.testing.assert_allclose(dual, want.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(dual, mine.numpy(), rtol=1e-5, atol=1e-6)


def test_module_forward_and_partial_duals():
    """A Linear+tanh MLP with only its input dual: J @ v; parameters carry no tangent."""
    x, v = _arr(4, 3), _arr(4, 3)
    w1, b1, w2 = _arr(5, 3), _arr(5), _arr(2, 5)
    res = []
    for m, fw in ((torch, t_fw), (tl, l_fw)):
        with fw.dual_level():
            d = fw.make_dual(m.tensor(x), m.tensor(v))
            h = m.tanh(m.nn.functional.linear(d, m.tensor(w1), m.tensor(b1)))
            out = m.nn.functional.linear(h, m.tensor(w2))
            res.append(fw.unpack_dual(out).tangent.numpy())
            assert fw.unpack_dual(m.tensor(w1)).tangent is None
    np.testing.assert_allclose(res[1], res[0], rtol=1e-4, atol=1e-5)


def test_no_tangent_cases():
    """Non-differentiable ops, detach, plain tensors and tensors after the level closed."""
    x, v = _arr(5), _arr(5)
    seen = []
    for m, fw in ((torch, t_fw), (tl, l_fw)):
        with fw.dual_level() as level:
            d = fw.make_dual(m.tensor(x), m.tensor(v))
            y = d * 2
            row = [level,
                   fw.unpack_dual(d.argmax()).tangent is None,
                   fw.unpack_dual(d > 0).tangent is None,
                   fw.unpack_dual(d.detach()).tangent is None,
                   fw.unpack_dual(m.tensor(x)).tangent is None,
                   fw.unpack_dual(d.detach() + 1).tangent is None]
            up = fw.unpack_dual(y)
            row += [type(up).__name__, up._fields, fw.unpack_dual(up.primal).tangent is None]
        after = fw.unpack_dual(y)
        row += [after.tangent is None, np.array_equal(after.primal.numpy(), x * 2)]
        seen.append(row)
    assert seen[0] == seen[1]


def test_inplace_write_carries_tangent():
    x, v = _arr(4), _arr(4)
    res = []
    for m, fw in ((torch, t_fw), (tl, l_fw)):
        with fw.dual_level():
            d = fw.make_dual(m.tensor(x), m.tensor(v))
            w = m.zeros(4)
            w.add_(d)
            w.mul_(3)
            res.append(fw.unpack_dual(w).tangent.numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-6)


def test_tangent_dtype_and_float64():
    x = RNG.standard_normal(3)
    res = []
    for m, fw in ((torch, t_fw), (tl, l_fw)):
        with fw.dual_level():
            d = fw.make_dual(m.tensor(x), m.tensor(x.astype(np.float32)))
            t = fw.unpack_dual(m.sin(d)).tangent
            res.append((str(t.dtype).replace("torch.", "").replace("torchlike.", ""),
                        t.numpy()))
    assert res[0][0] == res[1][0] == "float64"
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-12)


def test_errors():
    for m, fw in ((torch, t_fw), (tl, l_fw)):
        x = m.zeros(3)
        with pytest.raises(RuntimeError, match="Trying to create a dual Tensor for forward AD "
                                               "but no level exists, make sure to "
                                               "enter_dual_level\\(\\) first."):
            fw.make_dual(x, x)
        with fw.dual_level():
            with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported at "
                                                   "the moment"):
                with fw.dual_level():
                    pass
            with pytest.raises(RuntimeError, match=r"Trying to set a forward gradient that has "
                               r"a different size than that of the original Tensor, this is not "
                               r"supported. Tensor is of size \[3\] while the given forward "
                               r"gradient is of size \[2\]."):
                fw.make_dual(x, m.zeros(2))
            with pytest.raises(ValueError, match="Expected primal to be floating point or "
                                                 "complex, but got: torch.int64"):
                fw.make_dual(m.arange(3), x)
            with pytest.raises(ValueError, match="Expected tangent to be floating point or "
                                                 "complex, but got: torch.int64"):
                fw.make_dual(x, m.arange(3))
        assert fw.unpack_dual(x) == (x, None)


def test_enter_exit_functions_and_decorator():
    seen = []
    for m, fw in ((torch, t_fw), (tl, l_fw)):
        lvl = fw.enter_dual_level()
        d = fw.make_dual(m.ones(2), m.ones(2))
        with pytest.raises(RuntimeError, match="Trying to exit a forward AD level that was not "
                                               "the last one that was created"):
            fw.exit_dual_level(level=lvl + 1)
        fw.exit_dual_level(level=lvl)

        @fw.dual_level()
        def f():
            d = fw.make_dual(m.ones(2), m.full((2,), 3.0))
            return fw.unpack_dual(d * d).tangent.tolist()
        seen.append((lvl, fw.unpack_dual(d).tangent, f()))
    assert seen[0] == seen[1]


def test_repr_shows_tangent():
    x = np.array([[-0.75, 0.5, 1.0], [0.25, 2.0, -1.5]], np.float32)
    seen = []
    for m, fw in ((torch, t_fw), (tl, l_fw)):
        with fw.dual_level():
            d = fw.make_dual(m.tensor(x), m.ones(2, 3))
            seen.append((repr(d), repr(d[0] * 2)))
    assert seen[0] == seen[1]
