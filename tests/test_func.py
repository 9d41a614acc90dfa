"""torch.func (functorch) transforms vs real torch: functional_call, grad, vjp, jvp, linearize,
jacrev, jacfwd, hessian, vmap (in_dims/out_dims/chunk_size/randomness), stack_module_state and
the torch tutorials' patterns (per-sample gradients, ensembling, NTK); trace counts."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike
from torchlike import _registry

from nn_util import copy_state
from oracle import assert_close, same_as_torch

M = (torch, torchlike)
RNG = np.random.default_rng(0)
X = RNG.standard_normal((6, 5)).astype(np.float32)
IMG = RNG.standard_normal((4, 1, 6, 6)).astype(np.float32)
TGT = np.array([0, 2, 1, 2], dtype=np.int64)


def mlp(nn):
    return nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))


def cnn(nn):
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(32, 3))


def pair(ctor):
    torch.manual_seed(0)
    tm = ctor(torch.nn)
    lm = copy_state(tm, ctor(torchlike.nn))
    return tm, lm


def detached(model):
    return {k: v.detach() for k, v in model.named_parameters()}


def close(a, b, atol=1e-5, rtol=1e-5):
    """Compare nested outputs (tuples/lists/dicts of tensors)."""
    if isinstance(b, dict):
        assert isinstance(a, dict) and list(a) == list(b)
        for k in b:
            close(a[k], b[k], atol, rtol)
    elif isinstance(b, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), (type(a), type(b))
        for x, y in zip(a, b):
            close(x, y, atol, rtol)
    else:
        assert isinstance(a, torchlike.Tensor), type(a)
        assert str(a.dtype) == str(b.dtype)
        assert_close(a, b, atol, rtol)


def both(fn, atol=1e-5, rtol=1e-5):
    outs = [fn(m) for m in M]
    close(outs[1], outs[0], atol, rtol)
    return outs


def raises_both(fn, exc, match=None):
    for m in M:
        with pytest.raises(exc, match=match):
            fn(m)


# ------------------------------------------------------------------ functional_call

def test_functional_call_values_restore_and_dicts():
    tm, lm = pair(mlp)
    models = {torch: tm, torchlike: lm}

    def run(m):
        model = models[m]
        params = {k: v.detach() * 2 for k, v in model.named_parameters()}
        x = m.tensor(X)
        a = m.func.functional_call(model, params, (x,))
        b = m.func.functional_call(model, params, x)        # a single arg, not a tuple
        w = {"0.weight": params["0.weight"]}
        rest = {k: v for k, v in params.items() if k != "0.weight"}
        c = m.func.functional_call(model, (w, rest), (x,))  # several dicts
        d = model(x)                                       # own parameters restored
        return a, b, c, d

    both(run)
    orig = [id(p) for p in lm.parameters()]
    run(torchlike)
    assert [id(p) for p in lm.parameters()] == orig

    raises_both(lambda m: m.func.functional_call(
        models[m], ({"0.bias": m.zeros(8)}, {"0.bias": m.zeros(8)}), (m.tensor(X),)),
        ValueError, "appeared in multiple dictionaries")
    raises_both(lambda m: m.func.functional_call(models[m], [1], (m.tensor(X),)),
                ValueError, "Expected all elements")


def test_functional_call_strict_and_tied_weights():
    class Tied:
        def __new__(cls, nn):
            m = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 4))
            m[1].weight = m[0].weight
            return m

    torch.manual_seed(0)
    tm = Tied(torch.nn)
    lm = Tied(torchlike.nn)
    lm[0].weight.data = torchlike.tensor(tm[0].weight.detach().numpy())
    for i in (0, 1):
        lm[i].bias.data = torchlike.tensor(tm[i].bias.detach().numpy())
    models = {torch: tm, torchlike: lm}
    x = X[:, :4]

    both(lambda m: m.func.functional_call(models[m], {"0.weight": m.ones(4, 4)}, (m.tensor(x),)))
    both(lambda m: m.func.functional_call(models[m], {"0.weight": m.ones(4, 4)}, (m.tensor(x),),
                                          tie_weights=False))
    raises_both(lambda m: m.func.functional_call(
        models[m], {"0.weight": m.ones(4, 4), "1.weight": m.zeros(4, 4)}, (m.tensor(x),)),
        ValueError, "which are tied")
    for m in M:
        with pytest.raises(RuntimeError) as e:
            m.func.functional_call(models[m], {"0.weight": m.ones(4, 4), "zz": m.ones(1)},
                                   (m.tensor(x),), strict=True)
        msgs = e.value.args[0] if m is torch else (msgs, e.value.args[0])
    assert msgs[1] == msgs[0]


# ------------------------------------------------------------------ grad family

def _loss(m, model):
    def loss(params, x, y):
        out = m.func.functional_call(model, params, (x,))
        return m.nn.functional.cross_entropy(out, y)
    return loss


@pytest.mark.parametrize("ctor,inp", [(mlp, X[:4]), (cnn, IMG)], ids=["mlp", "cnn"])
def test_grad_grad_and_value_argnums_has_aux(ctor, inp):
    tm, lm = pair(ctor)
    models = {torch: tm, torchlike: lm}

    def run(m):
        model = models[m]
        params, x, y = detached(model), m.tensor(inp), m.tensor(TGT)
        loss = _loss(m, model)
        g = m.func.grad(loss)(params, x, y)
        g2, v2 = m.func.grad_and_value(loss, argnums=(0, 1))(params, x, y)

        def with_aux(p, x, y):
            l = loss(p, x, y)
            return l, {"l2": l * 2, "n": [l.detach()]}
        g3, aux = m.func.grad(with_aux, has_aux=True)(params, x, y)
        g4, (v4, aux4) = m.func.grad_and_value(with_aux, argnums=-2, has_aux=True)(params, x, y)
        return g, g2, v2, g3, aux, g4, v4, aux4

    both(run, atol=1e-5)
    raises_both(lambda m: m.func.grad(lambda x: x * 2)(m.ones(3)), RuntimeError,
                "to return a scalar Tensor")
    raises_both(lambda m: m.func.grad(lambda x: x.sum(), argnums=3)(m.ones(3)), RuntimeError,
                "but only 1 positional inputs")
    raises_both(lambda m: m.func.grad(lambda x, y: x.sum(), argnums=(0, 0))(m.ones(3), m.ones(3)),
                RuntimeError, "unique")
    raises_both(lambda m: m.func.grad(lambda x: x.sum(), has_aux=True)(m.ones(3)), RuntimeError,
                r"\(output, aux\)")


def test_grad_of_grad_and_nested_transforms():
    def run(m):
        f = lambda x: (x.sin() * x).sum()
        x = m.tensor(X[0])
        gg = m.func.grad(lambda x: m.func.grad(f)(x).sum())(x)
        vg = m.func.vmap(m.func.grad(f))(m.tensor(X))
        jv = m.func.jacrev(m.func.grad(f))(x)
        return gg, vg, jv

    both(run)


CT = RNG.standard_normal((6, 3)).astype(np.float32)


def test_vjp_jvp_linearize():
    tm, lm = pair(mlp)
    models = {torch: tm, torchlike: lm}

    def run(m):
        model = models[m]
        x = m.tensor(X)
        out, fn = m.func.vjp(model, x)
        (gx,) = fn(m.tensor(CT))
        out2, fn2, aux = m.func.vjp(lambda a, b: ((a * b).sin(), a.sum()), x, x + 1, has_aux=True)
        g2 = fn2(m.ones(6, 5))
        tan = m.ones(6, 5)
        o3, t3 = m.func.jvp(model, (x,), (tan,))
        o4, t4, aux4 = m.func.jvp(lambda a: (a.exp(), {"s": a.sum()}), (x,), (tan,), has_aux=True)
        o5, lin = m.func.linearize(model, x)
        t5 = lin(tan)
        return out, gx, out2, g2, aux, o3, t3, o4, t4, aux4, o5, t5

    both(run)
    raises_both(lambda m: m.func.jvp(lambda a: a, [m.ones(2)], [m.ones(2)]), RuntimeError,
                "Expected primals to be a tuple")
    raises_both(lambda m: m.func.jvp(lambda a: a, (m.ones(2),), (m.ones(2), m.ones(2))),
                RuntimeError, "same python structure")
    raises_both(lambda m: m.func.vjp(lambda a: (a > 0), m.ones(2)), RuntimeError,
                "floating-point or complex")


@pytest.mark.parametrize("ctor,inp", [(mlp, X[:2]), (cnn, IMG[:1])], ids=["mlp", "cnn"])
def test_jacrev_jacfwd_hessian_of_networks(ctor, inp):
    tm, lm = pair(ctor)
    models = {torch: tm, torchlike: lm}

    def run(m):
        model = models[m]
        params, x = detached(model), m.tensor(inp)
        f = lambda p, x: m.func.functional_call(model, p, (x,))
        jr_x = m.func.jacrev(model)(x)
        jf_x = m.func.jacfwd(model)(x)
        jr_p = m.func.jacrev(f)(params, x)
        if ctor is cnn:                  # keep the convnet case small
            return jr_x, jf_x, jr_p
        jr_both = m.func.jacrev(f, argnums=(0, 1), chunk_size=2)(params, x)
        jf_p = m.func.jacfwd(f, argnums=0)(params, x)
        return jr_x, jf_x, jr_p, jr_both, jf_p

    both(run, atol=1e-5)


def test_hessian_and_aux_and_multi_output_jacobians():
    def run(m):
        x = m.tensor(X[0])
        f = lambda x: (x ** 3).sum() + (x[0] * x[1]).sin()
        h = m.func.hessian(f)(x)
        h2 = m.func.hessian(lambda a, b: (a * b.exp()).sum(), argnums=(0, 1))(x, x * 2)
        j, aux = m.func.jacrev(lambda a: (a.sin(), a.cos().sum()), has_aux=True)(x)
        j2 = m.func.jacrev(lambda a: {"s": a.sin(), "p": (a * a).sum()})(x)
        j3 = m.func.jacfwd(lambda a: (a.sin(), a.exp() * 2))(x)
        j4, aux4 = m.func.jacfwd(lambda a: (a.sin(), a.sum()), has_aux=True)(x)
        # ops whose gradient follows torch's rule (a jax custom_vjp): forward mode still works
        k = lambda a: a.clamp(-0.5, 0.5).prod() + m.maximum(a, a.flip(0)).sum()
        h3 = m.func.hessian(k)(x)
        o5, t5 = m.func.jvp(k, (x,), (m.ones(5),))
        o6, lin = m.func.linearize(lambda a: a.clamp(-0.5, 0.5) * 3, x)
        return h, h2, j, aux, j2, j3, j4, aux4, h3, o5, t5, o6, lin(m.ones(5))

    both(run)
    raises_both(lambda m: m.func.jacrev(lambda a: a, chunk_size=0)(m.ones(2)), ValueError,
                "chunk_size")
    raises_both(lambda m: m.func.jacrev(lambda a: a)(m.ones(2, dtype=m.complex64)), RuntimeError,
                "Expected all inputs to be real")


# ------------------------------------------------------------------ vmap

def test_vmap_in_dims_out_dims_variants():
    def run(m):
        x, y = m.tensor(X), m.tensor(X[0])
        r = []
        r.append(m.func.vmap(m.dot)(x, x))
        r.append(m.func.vmap(m.dot, in_dims=(0, None))(x, y))
        r.append(m.func.vmap(m.mul, in_dims=(1, 0))(x.t(), x))
        r.append(m.func.vmap(m.mul, in_dims=-1)(x.t(), x.t()))
        r.append(m.func.vmap(lambda d: d["a"] * d["b"][0] + d["b"][1],
                             in_dims=({"a": 0, "b": (None, 1)},))(
            {"a": x, "b": (y, x.t())}))
        r.append(m.func.vmap(lambda a, b: (a + b, a * 2), out_dims=(1, 0))(x, x))
        r.append(m.func.vmap(lambda a: (a.sum(), y * 2), out_dims=(0, None))(x))
        r.append(m.func.vmap(lambda a: a * 3, out_dims=-1)(x))
        r.append(m.func.vmap(lambda a, scale=1.0: a * scale)(x, scale=2.0))
        r.append(m.func.vmap(lambda a: {"s": a.sum(), "l": [a, a.max()]})(x))
        r.append(m.func.vmap(lambda a: y)(x))               # unbatched output is broadcast
        r.append(m.func.vmap(m.func.vmap(m.mul), in_dims=(0, 1))(x, x.t()))
        r.append(m.func.vmap(lambda a: a.sum(0), chunk_size=4)(x))
        r.append(m.func.vmap(lambda a, b: (a * b, b + a), in_dims=(0, None), out_dims=(1, 0),
                             chunk_size=2)(x, y))
        return r

    both(run)


def test_vmap_errors_match_torch():
    x = X
    cases = [
        (lambda m: m.func.vmap(m.mul)(m.tensor(x), m.tensor(x[:3])), ValueError,
         "same size in the mapped dimension"),
        (lambda m: m.func.vmap(m.mul, in_dims=(0, 0))(m.tensor(x), 2.0), ValueError,
         "We cannot vmap over non-Tensor arguments"),
        (lambda m: m.func.vmap(m.sin, in_dims=2)(m.tensor(x)), ValueError,
         "so expected in_dim to satisfy"),
        (lambda m: m.func.vmap(m.sin, in_dims=[0])(m.tensor(x)), ValueError,
         "expected `in_dims` to be int or a"),
        (lambda m: m.func.vmap(m.mul, in_dims=(0, 0, 0))(m.tensor(x), m.tensor(x)), ValueError,
         "in_dims is not compatible with the structure"),
        (lambda m: m.func.vmap(lambda: 1)(), ValueError, "got no inputs"),
        (lambda m: m.func.vmap(m.sin, in_dims=(None,))(m.tensor(x)), ValueError,
         "Expected at least one Tensor to vmap over"),
        (lambda m: m.func.vmap(m.sin, in_dims=None)(m.tensor(x)), ValueError,
         "expected `in_dims` to be int or a"),
        (lambda m: m.func.vmap(lambda a: a, out_dims=None)(m.tensor(x)), ValueError,
         "can not return a BatchedTensor when out_dim is None"),
        (lambda m: m.func.vmap(lambda a: 1.0)(m.tensor(x)), ValueError,
         "must only return Tensors"),
        (lambda m: m.func.vmap(lambda a: a, out_dims="x")(m.tensor(x)), ValueError,
         "`out_dims` must be an int, None"),
        (lambda m: m.func.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(m.tensor(x)), ValueError,
         "out_dims is not compatible with the structure of `outputs`"),
        (lambda m: m.func.vmap(m.sin, chunk_size=0), ValueError, "chunk_size should be None"),
        (lambda m: m.func.vmap(lambda a: a * 2, out_dims=2)(m.tensor(x)), IndexError,
         r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
        (lambda m: m.func.vmap(lambda a: a * 2, out_dims=-3)(m.tensor(x)), IndexError,
         r"expected to be in range of \[-2, 1\], but got -3"),
        (lambda m: m.func.vmap(lambda a: (a, a.sum()), out_dims=(0, 1))(m.tensor(x)),
         IndexError, r"expected to be in range of \[-1, 0\], but got 1"),
        (lambda m: m.func.vmap(m.sin, randomness="sometimes"), RuntimeError,
         "Only allowed values for randomness"),
        # a batched tensor's read is vmap's refusal whatever its element count; an unbatched
        # one's is the count's
        (lambda m: m.func.vmap(lambda a: m.tensor(a.item()))(m.tensor(x)), RuntimeError,
         r"vmap: It looks like you're calling .item\(\) on a Tensor"),
        (lambda m: m.func.vmap(lambda a: a * m.ones(2).item())(m.tensor(x)), RuntimeError,
         "a Tensor with 2 elements cannot be converted to Scalar"),
        # ops of data-dependent shape: vmap's refusal names the aten op
        (lambda m: m.func.vmap(m.unique)(m.tensor(x)), RuntimeError,
         r"output dynamic shape. Attempted to vmap over aten::_unique2. Please file"),
        (lambda m: m.func.vmap(lambda a: a.unique())(m.tensor(x)), RuntimeError,
         r"Attempted to vmap over aten::_unique2\."),
        (lambda m: m.func.vmap(m.unique_consecutive)(m.tensor(x)), RuntimeError,
         r"Attempted to vmap over aten::unique_consecutive\."),
        (lambda m: m.func.vmap(lambda a: a.nonzero())(m.tensor(x)), RuntimeError,
         r"Attempted to vmap over aten::nonzero\."),
        (lambda m: m.func.vmap(lambda a: m.masked_select(a, a > 0))(m.tensor(x)), RuntimeError,
         r"vmap: Attempted to vmap over `mask` in torch.masked_select\(self, mask\) We cannot "
         r"support this because for each batch this would return a differently shaped Tensor"),
    ]
    for fn, exc, match in cases:
        raises_both(fn, exc, match)


def test_vmap_randomness_modes():
    x = X
    msg = "called random operation while in randomness error mode"
    for fn in (lambda m, a: a + m.rand(5), lambda m, a: m.nn.functional.dropout(a, 0.5),
               lambda m, a: a + m.randn_like(a)):
        raises_both(lambda m: m.func.vmap(lambda a: fn(m, a))(m.tensor(x)), RuntimeError, msg)
    raises_both(lambda m: m.func.jacfwd(lambda a: a * m.rand(5))(m.tensor(x[0])), RuntimeError,
                msg)

    for m in M:
        same = m.func.vmap(lambda a: a * 0 + m.rand(5), randomness="same")(m.tensor(x))
        diff = m.func.vmap(lambda a: a * 0 + m.rand(5), randomness="different")(m.tensor(x))
        drop_same = m.func.vmap(lambda a: m.nn.functional.dropout(a, 0.5),
                                randomness="same")(m.ones(6, 50))
        drop_diff = m.func.vmap(lambda a: m.nn.functional.dropout(a, 0.5),
                                randomness="different")(m.ones(6, 50))
        assert tuple(same.shape) == tuple(diff.shape) == (6, 5)
        assert bool((same == same[0]).all())
        assert not bool((diff == diff[0]).all())
        assert bool((drop_same == drop_same[0]).all())
        assert not bool((drop_diff == drop_diff[0]).all())
        # 'different' with chunks: still a fresh draw for every element
        ch = m.func.vmap(lambda a: a * 0 + m.rand(5), randomness="different", chunk_size=2)(
            m.tensor(x))
        assert len({tuple(r) for r in ch.tolist()}) == 6
        chs = m.func.vmap(lambda a: a * 0 + m.rand(5), randomness="same", chunk_size=2)(
            m.tensor(x))
        assert bool((chs == chs[0]).all())


def test_vmap_host_reads_raise():
    for fn, match in ((lambda a: a.nonzero(), "nonzero"),
                      (lambda a: a.sum().item(), r"\.item\(\)"),
                      (lambda a: a if a.sum() > 0 else -a, "data-dependent control flow")):
        raises_both(lambda m: m.func.vmap(fn)(m.tensor(X)), RuntimeError, match)


@pytest.mark.parametrize("read", ["item", "float", "bool", "nonzero", "mask"])
def test_vmap_host_reads_raise_torchs_messages(read):
    body = {"item": lambda a: a.sum().item(), "float": lambda a: float(a[0]),
            "bool": lambda a: a if a.sum() > 0 else -a, "nonzero": lambda a: a.nonzero(),
            "mask": lambda a: a[a > 2]}[read]
    same_as_torch(lambda m: m.func.vmap(body)(m.tensor(X)))


def test_vmap_inplace_into_captured_tensor_raises_and_restores():
    for m in M:
        y = m.zeros(5)
        with pytest.raises(RuntimeError):        # torch: a shape error; torchlike: torch's
            m.func.vmap(lambda a: y.add_(a))(m.tensor(X))    # "inplace arithmetic" message
        assert bool((y == 0).all())
    w = torchlike.zeros(5)
    with pytest.raises(RuntimeError, match="inplace arithmetic"):
        torchlike.func.vmap(lambda a: w.copy_(a))(torchlike.tensor(X))
    assert bool((w == 0).all()) and not isinstance(w._data, __import__("jax").core.Tracer)
    # in-place on the function's own (batched) values is fine
    both(lambda m: m.func.vmap(lambda a: a.clone().mul_(2).add_(1))(m.tensor(X)))


# ------------------------------------------------------------------ tutorials

def test_per_sample_gradients_tutorial():
    tm, lm = pair(cnn)
    models = {torch: tm, torchlike: lm}

    def run(m):
        model = models[m]
        params = {k: v.detach() for k, v in model.named_parameters()}
        buffers = {k: v.detach() for k, v in model.named_buffers()}

        def compute_loss(params, buffers, sample, target):
            batch = sample.unsqueeze(0)
            targets = target.unsqueeze(0)
            predictions = m.func.functional_call(model, (params, buffers), (batch,))
            return m.nn.functional.cross_entropy(predictions, targets)

        ft = m.func.vmap(m.func.grad(compute_loss), in_dims=(None, None, 0, 0))
        return ft(params, buffers, m.tensor(IMG), m.tensor(TGT))

    outs = both(run, atol=1e-5)
    # equal to the per-sample loop with .backward() in torch
    for i in range(4):
        tm.zero_grad()
        out = tm(torch.tensor(IMG[i:i + 1]))
        torch.nn.functional.cross_entropy(out, torch.tensor(TGT[i:i + 1])).backward()
        for k, p in tm.named_parameters():
            assert_close(outs[1][k][i], p.grad, 1e-5, 1e-5)


def test_model_ensembling_tutorial():
    import copy
    torch.manual_seed(0)
    tms = [mlp(torch.nn) for _ in range(3)]
    lms = [copy_state(t, mlp(torchlike.nn)) for t in tms]
    models = {torch: tms, torchlike: lms}
    minibatches = RNG.standard_normal((3, 4, 5)).astype(np.float32)

    def run(m):
        ms = models[m]
        params, buffers = m.func.stack_module_state(ms)
        base = copy.deepcopy(ms[0]).to("meta")

        def fmodel(params, buffers, x):
            return m.func.functional_call(base, (params, buffers), (x,))

        same = m.func.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, m.tensor(X[:4]))
        diff = m.func.vmap(fmodel)(params, buffers, m.tensor(minibatches))
        return same, diff, params, [p.requires_grad for p in params.values()]

    outs = [run(m) for m in M]
    close(outs[1][:3], outs[0][:3])
    assert outs[1][3] == outs[0][3]
    raises_both(lambda m: m.func.stack_module_state([]), RuntimeError, "at least one model")
    raises_both(lambda m: m.func.stack_module_state([mlp(m.nn), mlp(m.nn).eval()]), RuntimeError,
                "same training/eval mode")


def test_neural_tangent_kernel_tutorial():
    tm, lm = pair(cnn)
    models = {torch: tm, torchlike: lm}
    x1, x2 = IMG[:3], IMG[1:]

    def run(m):
        model = models[m]
        params = {k: v.detach() for k, v in model.named_parameters()}

        def fnet_single(params, x):
            return m.func.functional_call(model, params, (x.unsqueeze(0),)).squeeze(0)

        def ntk(x1, x2):
            jac1 = m.func.vmap(m.func.jacrev(fnet_single), (None, 0))(params, x1)
            jac1 = [j.flatten(2) for j in jac1.values()]
            jac2 = m.func.vmap(m.func.jacrev(fnet_single), (None, 0))(params, x2)
            jac2 = [j.flatten(2) for j in jac2.values()]
            return m.stack([m.einsum("Naf,Mbf->NMab", a, b) for a, b in zip(jac1, jac2)]).sum(0)

        def ntk_vps(x1, x2):
            def get_ntk(x1, x2):
                def f1(p):
                    return fnet_single(p, x1)

                def f2(p):
                    return fnet_single(p, x2)

                out, vjp_fn = m.func.vjp(f2, params)

                def get_ntk_slice(vec):
                    vjps = vjp_fn(vec)
                    _, jvps = m.func.jvp(f1, (params,), vjps)
                    return jvps

                basis = m.eye(out.numel(), dtype=out.dtype).view(out.numel(), -1)
                return m.func.vmap(get_ntk_slice)(basis)

            r = m.func.vmap(m.func.vmap(get_ntk, (None, 0)), (0, None))(x1, x2)
            return r

        return ntk(m.tensor(x1), m.tensor(x2)), ntk_vps(m.tensor(x1), m.tensor(x2))

    both(run, atol=1e-4, rtol=1e-4)


def test_replace_all_batch_norm_modules_and_vmap_over_bn_model():
    def ctor(nn):
        return nn.Sequential(nn.Linear(5, 4), nn.BatchNorm1d(4), nn.ReLU())

    tm, lm = pair(ctor)
    models = {torch: tm, torchlike: lm}

    def run(m):
        model = m.func.replace_all_batch_norm_modules_(models[m])
        bn = model[1]
        assert bn.running_mean is None and not bn.track_running_stats
        return m.func.vmap(model, in_dims=1)(m.tensor(X.reshape(2, 3, 5)))

    both(run)


# ------------------------------------------------------------------ tracing behaviour

def _op_traces():
    return sum(sum(op.trace_counts.values()) for op in _registry.OPS.values())


def test_vmap_and_grad_trace_the_function_once_per_call_and_ops_once_per_shape():
    tl = torchlike
    model = mlp(tl.nn)
    params = detached(model)
    calls = {"n": 0}

    def loss(p, x):
        calls["n"] += 1                       # counts traces of the Python function
        return tl.func.functional_call(model, p, (x.unsqueeze(0),)).pow(2).sum()

    per_sample = tl.func.vmap(tl.func.grad(loss), in_dims=(None, 0))
    x = tl.tensor(X)
    g1 = per_sample(params, x)
    assert calls["n"] == 1                    # one trace for the whole batch (no loop)
    after_first = _op_traces()
    g2 = per_sample(params, x)
    assert calls["n"] == 2                    # the Python function runs once per call
    assert _op_traces() == after_first        # ...and no op retraced for the same shapes
    close(g2, g1)
    per_sample(params, tl.tensor(X[:3]))      # a new batch size: still one trace of the function
    assert calls["n"] == 3
    tl.func.vmap(tl.func.grad(loss), in_dims=(None, 0), chunk_size=4)(params, x)
    assert calls["n"] == 5                    # one trace per chunk (4 + 2 rows)

    jac_calls = {"n": 0}

    def f(a):
        jac_calls["n"] += 1
        return a.sin() * 2

    tl.func.jacrev(f)(x[0])
    tl.func.jacfwd(f)(x[0])
    tl.func.hessian(lambda a: f(a).sum())(x[0])
    assert jac_calls["n"] == 3


def test_transforms_leave_no_tape_and_no_tracers_behind():
    import jax
    tl = torchlike
    model = mlp(tl.nn)
    params = {k: v for k, v in model.named_parameters()}       # requires_grad leaves
    x = tl.tensor(X)
    with jax.checking_leaks():
        g = tl.func.vmap(tl.func.grad(lambda p, a: tl.func.functional_call(
            model, p, (a,)).sum()), in_dims=(None, 0))(params, x)
        j = tl.func.jacrev(model)(x[0])
    for t in list(g.values()) + [j]:
        assert not isinstance(t._data, jax.core.Tracer)
    # arguments that require grad, and captured parameters, give one TorchFunc node each
    assert g["0.weight"].grad_fn.name() == "TorchFuncBackward"
    assert j.grad_fn.name() == "TorchFuncBackward"
    for p in model.parameters():
        assert not isinstance(p._data, jax.core.Tracer) and p.grad is None
    with jax.checking_leaks():
        sum(v.sum() for v in g.values()).backward()
    assert model[0].weight.grad is not None


# ------------------------------------------------------------------ pinned differences

def test_differences_inplace_inputs_host_reads_and_unsupported_options():
    """DIFFERENCES.md entries for torch.func (each checked against torch's behaviour)."""
    # 1. in-place ops on a transform's inputs do not reach the caller's tensor
    for m, changed in ((torch, True), (torchlike, False)):
        x = m.ones(3)
        m.func.vmap(lambda a: a.add_(1))(x)
        assert bool((x == 2).all()) is changed
    # 2. host reads of traced values inside grad: torch runs eagerly, torchlike traces
    f = lambda m: (lambda a: a.sum() * (2 if a.sum().item() > 0 else 3))
    assert_close(torch.func.grad(f(torch))(torch.ones(3)), torch.full((3,), 2.0))
    with pytest.raises(RuntimeError, match=r"grad: It looks like you're calling \.item\(\)"):
        torchlike.func.grad(f(torchlike))(torchlike.ones(3))
    # 3. a captured view that requires grad is a constant of the transform (a captured root
    #    carries its history, as in torch)
    w = {m: m.ones(4, requires_grad=True) for m in M}
    v = {m: w[m][1:] for m in M}
    outs = {m: m.func.vmap(lambda a: a * v[m])(m.ones(2, 3)) for m in M}
    assert outs[torch].requires_grad and not outs[torchlike].requires_grad
    close(outs[torchlike], outs[torch].detach())
    roots = {m: m.func.vmap(lambda a: a * w[m])(m.ones(2, 4)) for m in M}
    assert roots[torch].requires_grad and roots[torchlike].requires_grad
    # 4. options without an implementation raise
    _, fn = torchlike.func.vjp(torchlike.sin, torchlike.ones(2))
    with pytest.raises(NotImplementedError, match="create_graph=True"):
        fn(torchlike.ones(2), create_graph=True)
    with pytest.raises(NotImplementedError, match="strict=True"):
        torchlike.func.jvp(torchlike.sin, (torchlike.ones(2),), (torchlike.ones(2),), strict=True)


def test_transforms_of_tensors_that_require_grad_are_differentiable_maml():
    """grad/vmap/jacrev called on tensors that require grad record one tape node (MAML's
    inner step, differentiated by the outer .backward())."""
    tm, lm = pair(mlp)
    models = {torch: tm, torchlike: lm}
    y = RNG.standard_normal((6, 3)).astype(np.float32)

    def run(m):
        model = models[m]
        params = {k: v.detach().clone().requires_grad_() for k, v in model.named_parameters()}
        x, t = m.tensor(X), m.tensor(y)

        def inner(p, x, t):
            return m.nn.functional.mse_loss(m.func.functional_call(model, p, (x,)), t)

        g = m.func.grad(inner)(params, x, t)
        new = {k: params[k] - 0.1 * g[k] for k in params}
        outer = inner(new, x * 2, t)
        outer.backward()
        xs = m.tensor(X, requires_grad=True)
        v = m.func.vmap(lambda a: (a.sin() * a).sum())(xs)
        j = m.func.jacrev(lambda a: a.exp() * a.sum())(xs[0])
        (v.sum() + j.sum()).backward()
        return outer, [params[k].grad for k in params], v, j, xs.grad

    outs = both(run, atol=1e-5)
    assert outs[1][2].grad_fn is not None


def test_captured_parameters_get_their_gradients_through_transforms():
    """A transform of a function that captures a model (``vmap(model)``, a physics-informed
    loss ``vmap(jacrev(model))``, ``grad`` of a closure) is differentiated by the outer
    ``.backward()`` w.r.t. the model's parameters, as torch's is: the parameters get torch's
    gradients (they got none)."""
    tm, lm = pair(mlp)
    models = {torch: tm, torchlike: lm}

    def run(m):
        model = models[m]
        model.zero_grad()
        x = m.tensor(X)
        out = m.func.vmap(model)(x)                              # (B, 3)
        jac = m.func.vmap(m.func.jacrev(model))(x)               # (B, 3, 5)
        g = m.func.grad(lambda a: model(a).pow(2).sum())(x[0])   # (5,)
        loss = out.pow(2).mean() + jac.pow(2).mean() + g.pow(2).sum()
        loss.backward()
        return loss, [p.grad for p in model.parameters()]

    outs = both(run, atol=1e-5)
    assert all(g is not None for g in outs[1][1])


def test_complex_inputs_follow_torch_conjugation_convention():
    z = np.array([1 + 2j, 3 - 1j], dtype=np.complex64)

    def run(m):
        a = m.tensor(z)
        g = m.func.grad(lambda a: (a * a.conj()).real.sum() + (a * a).imag.sum())(a)
        _, fn = m.func.vjp(lambda a: a * a.exp(), a)
        _, t = m.func.jvp(lambda a: a * a.exp(), (a,), (a,))
        return g, fn(a), t, m.vmap(m.sin)(a)

    both(run)


def test_rearrange_and_debug_unwrap():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)

    def run(m):
        t = m.tensor(x)
        r = m.func.rearrange
        return [r(t, "a b c -> c (a b)"), r(t, "a (b1 b2) c -> a b1 b2 c", b1=3),
                r(t, "a b c -> (c a) b"), r(t, "... c -> c ..."), r(t, "a ... -> ... a"),
                r([t[0], t[1]], "n b c -> b (n c)"), m.func.debug_unwrap(t)]

    both(run)
    raises_both(lambda m: m.func.rearrange(m.tensor(x), "a b -> a"), ValueError,
                "Identifiers only on one side")
