"""torchlike <-> jax (and DLPack) interop: zero-copy views, call_jax as a tape op (gradients
equal jax.grad of the same math), torchlike modules as pure jax functions under
jax.jit/grad/vmap/lax.scan (a jit-compiled hand-written SGD and Adam loop gives the eager
torchlike loop's parameters), no tracer leaks."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import torchlike
from torchlike import interop

from nn_util import copy_state
from oracle import assert_close

RNG = np.random.default_rng(0)
X = RNG.standard_normal((8, 4)).astype(np.float32)
Y = RNG.standard_normal((8, 2)).astype(np.float32)


def ptr(a):
    return a.unsafe_buffer_pointer()


# ------------------------------------------------------------------ arrays

def test_zero_copy_views_both_ways():
    a = jnp.arange(12.0, dtype=jnp.float32).reshape(3, 4)
    t = interop.from_jax(a)
    assert isinstance(t, torchlike.Tensor) and t.dtype is torchlike.float32
    assert t.jax() is a and ptr(t.jax()) == ptr(a)
    tree = interop.torch_view({"a": a, "b": [a, 3]})
    assert tree["b"][1] == 3 and ptr(tree["b"][0].jax()) == ptr(a)
    back = interop.jax_view(tree)
    assert back["a"] is a
    # numpy through DLPack and __array_interface__: the same buffer, read-only
    n = np.from_dlpack(t)
    assert n.__array_interface__["data"][0] == ptr(a)
    np.testing.assert_array_equal(n, np.arange(12.0).reshape(3, 4))
    # an in-place op rebinds the tensor; the jax array it shared is unchanged
    t.add_(1)
    assert float(a[0, 0]) == 0.0 and float(t[0, 0]) == 1.0


def test_dlpack_with_real_torch_both_ways():
    tt = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    ours = torchlike.utils.dlpack.from_dlpack(tt)
    assert ptr(ours.jax()) == tt.data_ptr()
    assert_close(ours, tt)
    caps = torchlike.from_dlpack(torch.utils.dlpack.to_dlpack(tt))    # legacy capsule
    assert ptr(caps.jax()) == tt.data_ptr()
    lt = torchlike.arange(6, dtype=torchlike.int64)
    back = torch.from_dlpack(lt)
    assert back.data_ptr() == ptr(lt.jax()) and back.dtype == torch.int64
    back2 = torch.utils.dlpack.from_dlpack(torchlike.utils.dlpack.to_dlpack(lt))
    assert back2.data_ptr() == ptr(lt.jax())
    assert lt.__dlpack_device__() == tt.__dlpack_device__()
    for m in (torch, torchlike):
        x = m.ones(2, requires_grad=True)
        with pytest.raises(BufferError, match="Can't export tensors that require gradient"):
            x.__dlpack__()


def test_tensor_is_a_jax_pytree():
    t = torchlike.tensor([1.0, 2.0, 3.0])
    out = jax.jit(lambda d: {"s": (d["x"] * 2).sum(), "y": d["x"].exp()})({"x": t})
    assert isinstance(out["s"], torchlike.Tensor)
    assert_close(out["y"], torch.tensor([1.0, 2.0, 3.0]).exp())
    g = jax.grad(lambda x: (x.sin() * x).sum()._data)(t)
    assert_close(g, torch.func.grad(lambda x: (x.sin() * x).sum())(torch.tensor([1.0, 2, 3])))
    assert jax.tree_util.tree_leaves([t, torchlike.nn.Parameter(torchlike.ones(2))])[1].shape \
        == (2,)


# ------------------------------------------------------------------ jax inside torchlike

def _jax_mlp(p, x):
    h = jnp.tanh(x @ p["w1"] + p["b1"])
    return h @ p["w2"]


def test_call_jax_gradients_equal_jax_grad():
    p = {"w1": RNG.standard_normal((4, 5)).astype(np.float32),
         "b1": RNG.standard_normal((5,)).astype(np.float32),
         "w2": RNG.standard_normal((5, 2)).astype(np.float32)}
    tp = {k: torchlike.tensor(v, requires_grad=True) for k, v in p.items()}
    x = torchlike.tensor(X, requires_grad=True)
    out = interop.call_jax(_jax_mlp, tp, x)
    assert out.grad_fn is not None and out.grad_fn.name() == "CallJaxBackward0"
    loss = ((out - torchlike.tensor(Y)) ** 2).mean()
    loss.backward()

    def ref(p, x):
        return jnp.mean((_jax_mlp(p, x) - Y) ** 2)

    jp = {k: jnp.asarray(v) for k, v in p.items()}
    gp, gx = jax.grad(ref, argnums=(0, 1))(jp, jnp.asarray(X))
    for k in p:
        np.testing.assert_allclose(np.asarray(tp[k].grad._data), gp[k], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(x.grad._data), gx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(loss), float(ref(jp, jnp.asarray(X))), rtol=1e-6)


def test_call_jax_in_a_torchlike_model_static_args_int_outputs_and_double_backward():
    @interop.jax_op
    def scaled_softplus(x, *, beta):
        return jax.nn.softplus(beta * x) / beta, jnp.argmax(x, axis=-1)

    x = torchlike.tensor(X, requires_grad=True)
    y, idx = scaled_softplus(x, beta=2.0)
    assert idx.dtype is torchlike.int64 and not idx.requires_grad
    tx = torch.tensor(X, requires_grad=True)
    ty = torch.nn.functional.softplus(tx, beta=2.0)
    assert_close(y, ty)
    assert_close(idx, tx.argmax(-1))
    (g,) = torchlike.autograd.grad(y.sum(), x, create_graph=True)
    (tg,) = torch.autograd.grad(ty.sum(), tx, create_graph=True)
    assert_close(g, tg)
    (gg,) = torchlike.autograd.grad(g.sum(), x)
    (tgg,) = torch.autograd.grad(tg.sum(), tx)
    assert_close(gg, tgg)
    # a linear layer of torchlike followed by a jax piece, trained by .backward()
    torch.manual_seed(0)
    tlin = torch.nn.Linear(4, 3)
    lin = copy_state(tlin, torchlike.nn.Linear(4, 3))
    out = scaled_softplus(lin(torchlike.tensor(X)), beta=1.0)[0].sum()
    out.backward()
    torch.nn.functional.softplus(tlin(torch.tensor(X))).sum().backward()
    assert_close(lin.weight.grad, tlin.weight.grad)
    assert_close(lin.bias.grad, tlin.bias.grad)


# ------------------------------------------------------------------ torchlike inside jax

def _mlp(nn):
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_jit_training_loop_matches_eager_torchlike_loop(opt):
    torch.manual_seed(0)
    tm = _mlp(torch.nn)
    eager = copy_state(tm, _mlp(torchlike.nn))
    functional = copy_state(tm, _mlp(torchlike.nn))
    lr, steps, b1, b2, eps = 0.05, 5, 0.9, 0.999, 1e-8
    x, y = torchlike.tensor(X), torchlike.tensor(Y)

    o = (torchlike.optim.SGD(eager.parameters(), lr=lr) if opt == "sgd"
         else torchlike.optim.Adam(eager.parameters(), lr=lr, betas=(b1, b2), eps=eps))
    for _ in range(steps):
        o.zero_grad()
        torchlike.nn.functional.mse_loss(eager(x), y).backward()
        o.step()

    (params, buffers), fn = interop.to_jax_function(functional)

    def loss(p, xb, yb):
        return jnp.mean((fn(p, buffers, xb) - yb) ** 2)

    @jax.jit
    def step(p, state, xb, yb):
        g = jax.grad(loss)(p, xb, yb)
        if opt == "sgd":
            return jax.tree_util.tree_map(lambda a, b: a - lr * b, p, g), state
        m, v, t = state
        t = t + 1
        m = jax.tree_util.tree_map(lambda m_, g_: b1 * m_ + (1 - b1) * g_, m, g)
        v = jax.tree_util.tree_map(lambda v_, g_: b2 * v_ + (1 - b2) * g_ * g_, v, g)
        bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
        p = jax.tree_util.tree_map(
            lambda p_, m_, v_: p_ - lr / bc1 * m_ / (jnp.sqrt(v_) / jnp.sqrt(bc2) + eps), p, m, v)
        return p, (m, v, t)

    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    state = (zeros, zeros, jnp.float32(0.0))
    p = params
    xb, yb = x.jax(), y.jax()
    with jax.checking_leaks():
        for _ in range(steps):
            p, state = step(p, state, xb, yb)
    for k, t in eager.named_parameters():
        np.testing.assert_allclose(np.asarray(p[k]), np.asarray(t._data), rtol=2e-5, atol=2e-6)
    # the module itself was not touched: its own parameters are the initial ones
    for k, t in functional.named_parameters():
        np.testing.assert_array_equal(np.asarray(t._data), np.asarray(params[k]))
        assert not isinstance(t._data, jax.core.Tracer)


def test_to_jax_function_under_vmap_scan_and_buffers():
    def ctor(nn):
        return nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))

    torch.manual_seed(0)
    tm = ctor(torch.nn)
    lm = copy_state(tm, ctor(torchlike.nn))
    (params, buffers), fn = interop.to_jax_function(lm, with_buffers=True)
    with jax.checking_leaks():
        out, new_b = jax.jit(fn)(params, buffers, jnp.asarray(X))
    tout = tm(torch.tensor(X))
    np.testing.assert_allclose(np.asarray(out), tout.detach().numpy(), rtol=1e-5, atol=1e-5)
    for k, v in tm.named_buffers():
        np.testing.assert_allclose(np.asarray(new_b[k]), v.numpy(), rtol=1e-5, atol=1e-6)
    # the module's own buffers are unchanged (the update came back as new_b)
    assert float(lm[1].num_batches_tracked) == 0
    # without with_buffers, a buffer update is an error, not a silent loss
    _, fn2 = interop.to_jax_function(lm)
    with pytest.raises(RuntimeError, match="with_buffers=True"):
        fn2(params, buffers, jnp.asarray(X))
    # eval mode under vmap and lax.scan
    lm.eval()
    tm.eval()
    _, fe = interop.to_jax_function(lm)
    per_row = jax.vmap(lambda r: fe(params, new_b, r[None])[0])(jnp.asarray(X))
    np.testing.assert_allclose(np.asarray(per_row), tm(torch.tensor(X)).detach().numpy(),
                               rtol=1e-5, atol=1e-5)

    def body(c, r):
        return c + fe(params, new_b, r[None]).sum(), None

    total, _ = jax.lax.scan(body, jnp.float32(0.0), jnp.asarray(X))
    np.testing.assert_allclose(float(total), float(tm(torch.tensor(X)).sum()), rtol=1e-5)


def test_random_ops_need_a_key_under_jit():
    m = torchlike.nn.Sequential(torchlike.nn.Linear(4, 4), torchlike.nn.Dropout(0.5))
    (p, b), fn = interop.to_jax_function(m)
    with pytest.raises(RuntimeError, match="rng=True"):
        jax.jit(fn)(p, b, jnp.asarray(X))
    (p, b), fk = interop.to_jax_function(m, rng=True)
    f = jax.jit(fk)
    o1 = f(p, b, jax.random.key(0), jnp.asarray(X))
    o2 = f(p, b, jax.random.key(1), jnp.asarray(X))
    o3 = f(p, b, jax.random.key(0), jnp.asarray(X))
    assert not np.array_equal(np.asarray(o1), np.asarray(o2))
    np.testing.assert_array_equal(np.asarray(o1), np.asarray(o3))
    assert ((np.asarray(o1) == 0).mean()) > 0.2


def test_jax_function_of_torch_style_code():
    def f(x, w):
        return torchlike.nn.functional.gelu(x @ w).sum(-1)

    jf = interop.jax_function(f)
    w = RNG.standard_normal((4, 3)).astype(np.float32)
    g = jax.jit(jax.grad(lambda w_: jf(jnp.asarray(X), w_).sum()))(jnp.asarray(w))
    tw = torch.tensor(w, requires_grad=True)
    torch.nn.functional.gelu(torch.tensor(X) @ tw).sum().backward()
    np.testing.assert_allclose(np.asarray(g), tw.grad.numpy(), rtol=1e-5, atol=1e-5)
    captured = torchlike.zeros(3)

    def bad(x):
        captured.add_(x.sum(0)[:3])
        return x

    with pytest.raises(RuntimeError, match="in-place operation wrote"):
        jax.jit(interop.jax_function(bad))(jnp.asarray(X))
    assert not isinstance(captured._data, jax.core.Tracer)


def test_docs_snippets_run():
    """Every python block of docs/interop.md runs as written."""
    import os
    import re
    path = os.path.join(os.path.dirname(__file__), "..", "docs", "interop.md")
    blocks = re.findall(r"```python\n(.*?)```", open(path).read(), re.S)
    assert len(blocks) == 5
    for code in blocks:
        exec(compile(code, "docs/interop.md", "exec"), {"__name__": "docs_snippet"})


def test_a_jax_function_with_a_loop_keeps_its_loop_in_the_op_trace():
    """call_jax traces the user's function as jax does: a lax.scan stays one scan (torchlike
    inlines its own ops' jitted helpers while tracing; a user's loop must not unroll)."""
    from torchlike import _tiers
    seen = []
    trace = _tiers.trace

    def recording(f, args):
        out = trace(f, args)
        seen.append([e.primitive.name for e in out[0].jaxpr.eqns])
        return out

    def cumulative(x):
        return jax.lax.scan(lambda c, v: (c + v, c * v), jnp.zeros((), x.dtype), x)[1]
    x = np.linspace(-1, 1, 300).astype(np.float32)
    import unittest.mock
    with unittest.mock.patch.object(_tiers, "trace", recording):
        got = interop.call_jax(cumulative, torchlike.tensor(x))
    np.testing.assert_allclose(got.numpy(), np.asarray(jax.jit(cumulative)(x)), rtol=1e-6)
    assert seen and all(names.count("scan") == 1 and len(names) < 10 for names in seen), seen


def test_jax_functions_cut_the_gradient_where_torchs_graph_stops():
    """Under jax.grad, a torch-style function's detach(), .data and no_grad blocks stop the
    gradient, as torch's autograd would (jax_function and to_jax_function)."""
    import jax
    import jax.numpy as jnp
    from torchlike import interop

    def f(r):
        with torchlike.no_grad():
            s = r * 3
        return (r * r.detach() + r * s + r * r.data).sum()

    x = np.array([0.3, -1.2, 2.5], np.float32)
    g = jax.grad(interop.jax_function(f))(jnp.asarray(x))
    np.testing.assert_allclose(np.asarray(g), x + 3 * x + x, rtol=1e-6)

    class Straight(torchlike.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torchlike.nn.Parameter(torchlike.tensor(x))

        def forward(self):
            w = self.w
            return (w + (w.round() - w).detach()).sum()

    (params, buffers), fn = interop.to_jax_function(Straight())
    grads = jax.grad(lambda p: fn(p, buffers))(params)
    np.testing.assert_allclose(np.asarray(grads["w"]), np.ones(3), rtol=1e-6)
