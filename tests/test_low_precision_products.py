"""The fused multiply-add products (addmm, F.linear, addmv, addr, baddbmm, addbmm, multi_dot)
in float16 and bfloat16 against torch, bit for bit. torch's CPU kernels accumulate the product
in float32 and add ``beta * input`` in float32 before the one rounding to the low-precision
dtype (addbmm adds its batches one ``addmm_`` at a time, rounding after each; addmv follows
its gemv path, which depends on the matrix's layout; addr rounds after each operation; F.linear
of a strided input of more than 2 dimensions adds the bias to the rounded product); a product
rounded before the addition differs by an ulp in many elements (autocast's bfloat16 Linear
layers meet it at every step). The factors here are 0, 1 and powers of 2: other factors are
exact in the forward, and the backward then rounds ``g * alpha`` once where torch rounds the
product first (see the report in the commit that added these tests)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike

R = np.random.default_rng(0)
A = R.standard_normal((6, 8)).astype(np.float32)
B = R.standard_normal((8, 16)).astype(np.float32)
C = R.standard_normal(16).astype(np.float32)
B1 = R.standard_normal((3, 6, 8)).astype(np.float32)
B2 = R.standard_normal((3, 8, 16)).astype(np.float32)

CASES = {
    "addmm": lambda m, t: m.addmm(t(C), t(A), t(B)),
    "addmm_beta_alpha": lambda m, t: m.addmm(t(C), t(A), t(B), beta=0.5, alpha=2),
    "linear": lambda m, t: m.nn.functional.linear(t(A), t(B).t(), t(C)),
    "linear_3d": lambda m, t: m.nn.functional.linear(t(A).reshape(2, 3, 8), t(B).t(), t(C)),
    "Linear_under_autocast": None,
    "addmv": lambda m, t: m.addmv(t(C[:6]), t(A), t(B[:, 0])),
    "baddbmm": lambda m, t: m.baddbmm(t(C), t(B1), t(B2)),
    "addbmm": lambda m, t: m.addbmm(t(C), t(B1), t(B2)),
}


def _autocast_linear(m):
    lin = m.nn.Linear(8, 16)
    with m.no_grad():
        lin.weight.copy_(m.tensor(B.T.copy()))
        lin.bias.copy_(m.tensor(C))
    with m.autocast("cpu", dtype=m.bfloat16):
        return lin(m.tensor(A))


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(CASES))
def test_fused_add_products_round_once(name, dtype):
    out = {}
    for m in (torch, torchlike):
        if name == "Linear_under_autocast":
            if dtype == "float16":
                pytest.skip("autocast on the CPU casts to bfloat16 here")
            r = _autocast_linear(m)
        else:
            r = CASES[name](m, lambda a: m.tensor(a).to(getattr(m, dtype)))
        assert str(r.dtype).endswith(dtype)
        out[m.__name__] = np.asarray(r.detach().float().numpy())
    np.testing.assert_array_equal(out["torchlike"], out["torch"])


F = np.float32
X = {k: R.standard_normal(s).astype(F) for k, s in dict(
    a=(6, 8), b=(8, 16), c=(16,), c2=(6, 16), c61=(6, 1), v=(8,), v6=(6,), b1=(3, 6, 8),
    b2=(3, 8, 16), a3=(2, 3, 8), a4=(2, 1, 3, 8), w=(16, 8), cb=(5,), g=(6, 16), gb=(3, 6, 16),
    gv=(6,), g3=(2, 3, 16), g1=(16,)).items()}
X["nan"] = np.full(16, np.nan, F)
FACTORS = [(1, 1), (0, 1), (0.5, -2), (-2, 0.5), (1, 0), (0, 0.5)]

SWEEP = {
    "addmm": lambda m, t, be, al: m.addmm(t("c"), t("a"), t("b"), beta=be, alpha=al),
    "addmm_bias2d": lambda m, t, be, al: m.addmm(t("c2"), t("a"), t("b"), beta=be, alpha=al),
    "addmm_bias_col": lambda m, t, be, al: m.addmm(t("c61"), t("a"), t("b"), beta=be, alpha=al),
    "addmm_nan_input": lambda m, t, be, al: m.addmm(t("nan"), t("a"), t("b"), beta=be, alpha=al),
    "addmm_transposed": lambda m, t, be, al: m.addmm(t("c"), t("a").t().contiguous().t(),
                                                     t("w").t(), beta=be, alpha=al),
    "addmm_empty_k": lambda m, t, be, al: m.addmm(t("c"), t("a")[:, :0], t("b")[:0], beta=be,
                                                  alpha=al),
    "addmm_empty_rows": lambda m, t, be, al: m.addmm(t("c"), t("a")[:0], t("b"), beta=be,
                                                     alpha=al),
    "addmm_out": lambda m, t, be, al: m.addmm(t("c"), t("a"), t("b"), beta=be, alpha=al,
                                              out=m.empty(6, 16, dtype=t("c").dtype)),
    "addmm_": lambda m, t, be, al: t("c2").addmm_(t("a"), t("b"), beta=be, alpha=al),
    "addmv": lambda m, t, be, al: m.addmv(t("v6"), t("a"), t("v"), beta=be, alpha=al),
    "addmv_colmajor": lambda m, t, be, al: m.addmv(t("v6"), t("a").t().contiguous().t(),
                                                   t("v"), beta=be, alpha=al),
    "addmv_strided_vec": lambda m, t, be, al: m.addmv(t("v6"), t("a"), t("b")[:, 3], beta=be,
                                                      alpha=al),
    "addmv_nan_input": lambda m, t, be, al: m.addmv(t("nan")[:6], t("a"), t("v"), beta=be,
                                                    alpha=al),
    "addmv_": lambda m, t, be, al: t("v6").addmv_(t("a"), t("v"), beta=be, alpha=al),
    "addr": lambda m, t, be, al: m.addr(t("c2"), t("v6"), t("c"), beta=be, alpha=al),
    "baddbmm": lambda m, t, be, al: m.baddbmm(t("c"), t("b1"), t("b2"), beta=be, alpha=al),
    "baddbmm_nan_input": lambda m, t, be, al: m.baddbmm(t("nan"), t("b1"), t("b2"), beta=be,
                                                        alpha=al),
    "baddbmm_out": lambda m, t, be, al: m.baddbmm(t("c"), t("b1"), t("b2"), beta=be, alpha=al,
                                                  out=m.empty(3, 6, 16, dtype=t("c").dtype)),
    "addbmm": lambda m, t, be, al: m.addbmm(t("c"), t("b1"), t("b2"), beta=be, alpha=al),
    "addbmm_nan_input": lambda m, t, be, al: m.addbmm(t("nan"), t("b1"), t("b2"), beta=be,
                                                      alpha=al),
    "addbmm_no_batch": lambda m, t, be, al: m.addbmm(t("c"), t("b1")[:0], t("b2")[:0], beta=be,
                                                     alpha=al),
    "addbmm_": lambda m, t, be, al: t("c2").addbmm_(t("b1"), t("b2"), beta=be, alpha=al),
}


def _same(name, r_torch, r_tl, dtype):
    """torch's bits, where the product is rounded as torch rounds it; once the op runs its
    compiled program, XLA's float32 sums may be ordered otherwise than numpy's and torch's (on
    AVX-512 CPUs, a 3-D float16 ``linear``): then an element may land an ulp away, at most one
    in 32 (rounding twice, or in the half dtype, moves a third of them: DIFFERENCES.md, "An op's
    first calls and its later calls may differ in the last bits")."""
    assert str(r_tl.dtype) == str(r_torch.dtype), name
    assert tuple(r_tl.shape) == tuple(r_torch.shape), name
    a = np.asarray(r_tl.detach().float().numpy())
    b = r_torch.detach().float().numpy()
    off = (a != b) & ~(np.isnan(a) & np.isnan(b))
    if not off.any():
        return
    half = {"float16": np.float16, "bfloat16": None}[dtype]
    ulp = (np.spacing(np.abs(b).astype(half)).astype(np.float32) if half is not None
           else np.abs(b) * 2.0 ** -7)
    assert off.sum() <= max(1, off.size // 32), f"{name}: {off.sum()} of {off.size} differ"
    np.testing.assert_array_less(np.abs(a - b)[off], (ulp * 1.01)[off] + 1e-30, err_msg=name)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("factors", FACTORS, ids=str)
@pytest.mark.parametrize("name", list(SWEEP))
def test_factors_layouts_and_forms(name, factors, dtype):
    be, al = factors
    out = []
    for m in (torch, torchlike):
        out.append(SWEEP[name](m, lambda k: m.tensor(X[k]).to(getattr(m, dtype)), be, al))
    _same(name, *out, dtype)


LINEAR = {
    "2d": lambda m, t: m.nn.functional.linear(t("a"), t("w"), t("c")),
    "1d": lambda m, t: m.nn.functional.linear(t("v"), t("w"), t("c")),
    "3d": lambda m, t: m.nn.functional.linear(t("a3"), t("w"), t("c")),
    "4d": lambda m, t: m.nn.functional.linear(t("a4"), t("w"), t("c")),
    "3d_strided": lambda m, t: m.nn.functional.linear(t("a3").transpose(0, 1), t("w"), t("c")),
    "4d_strided": lambda m, t: m.nn.functional.linear(t("a4").transpose(0, 2), t("w"), t("c")),
    "2d_strided": lambda m, t: m.nn.functional.linear(t("a").t().contiguous().t(), t("w"),
                                                      t("c")),
    "bias_2d": lambda m, t: m.nn.functional.linear(t("a"), t("w"), t("c2")),
    "no_bias": lambda m, t: m.nn.functional.linear(t("a3"), t("w")),
    "multi_dot": lambda m, t: m.linalg.multi_dot([t("a"), t("b"), t("w")]),
    "multi_dot_4": lambda m, t: m.linalg.multi_dot([t("v6"), t("a"), t("b"), t("w")]),
    "chain_matmul": lambda m, t: m.chain_matmul(t("a"), t("b"), t("w")),
}


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(LINEAR))
def test_linear_forms(name, dtype, grad):
    out = []
    for m in (torch, torchlike):
        def t(k):
            return m.tensor(X[k]).to(getattr(m, dtype)).requires_grad_(grad)
        out.append(LINEAR[name](m, t))
    _same(name, *out, dtype)


BACKWARD = {
    "addmm": (lambda m, t, be, al: m.addmm(t("c"), t("a"), t("b"), beta=be, alpha=al), "g",
              "c a b"),
    "linear": (lambda m, t, be, al: m.nn.functional.linear(t("a"), t("w"), t("c")), "g",
               "a w c"),
    "linear_3d": (lambda m, t, be, al: m.nn.functional.linear(t("a3"), t("w"), t("c")), "g3",
                  "a3 w c"),
    "linear_1d": (lambda m, t, be, al: m.nn.functional.linear(t("v"), t("w"), t("c")), "g1",
                  "v w c"),
    "addmv": (lambda m, t, be, al: m.addmv(t("v6"), t("a"), t("v"), beta=be, alpha=al), "gv",
              "v6 a v"),
    "addr": (lambda m, t, be, al: m.addr(t("c2"), t("v6"), t("c"), beta=be, alpha=al), "g",
             "c2 v6 c"),
    "baddbmm": (lambda m, t, be, al: m.baddbmm(t("c"), t("b1"), t("b2"), beta=be, alpha=al),
                "gb", "c b1 b2"),
    "addbmm": (lambda m, t, be, al: m.addbmm(t("c"), t("b1"), t("b2"), beta=be, alpha=al), "g",
               "c b1 b2"),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("factors", [(1, 1), (0.5, -2), (0, 1)], ids=str)
@pytest.mark.parametrize("name", list(BACKWARD))
def test_backward(name, factors, dtype):
    fn, g, names = BACKWARD[name]
    got = []
    for m in (torch, torchlike):
        leaves = {k: m.tensor(X[k]).to(getattr(m, dtype)).requires_grad_() for k in names.split()}
        y = fn(m, leaves.__getitem__, *factors)
        y.backward(m.tensor(X[g]).to(getattr(m, dtype)))
        got.append([y] + [leaves[k].grad for k in names.split()])
    for k, a, b in zip(["out"] + names.split(), *got):
        if name == "addbmm" and dtype == "float16" and k in ("b1", "b2"):
            # (torch's bmm of the expanded gradient sums its float32 products in another
            # order: an element may differ by an ulp)
            np.testing.assert_allclose(b.float().numpy(), a.float().numpy(), rtol=2 ** -10)
            continue
        _same(f"{name} {k}", a, b, dtype)


def _autocast_mlp_steps(m, fused=False):
    m.manual_seed(0)
    net = m.nn.Sequential(m.nn.Linear(12, 20), m.nn.Linear(20, 20), m.nn.Linear(20, 5))
    with m.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(m.tensor(np.random.default_rng(i).standard_normal(tuple(p.shape))
                             .astype(F)))
    res = []
    for it in range(4):
        x = m.tensor(np.tile(X["a"], (1, 2))[:, :12] + it)
        with m.autocast("cpu", dtype=m.bfloat16):
            y = net(x)
        y.backward(m.tensor(X["g"][:, :5]).to(m.bfloat16))
        res += [y] + [p.grad.clone() for p in net.parameters()]
        with m.no_grad():
            for p in net.parameters():
                p -= p.grad.to(m.bfloat16).float()       # (a step exact in float32)
                p.grad = None
    return res


@pytest.mark.parametrize("mode", ["strict", "fused"])
def test_autocast_linear_layers_train(mode):
    from torchlike import eager
    ref = _autocast_mlp_steps(torch)
    if mode == "fused":
        with eager.fused():
            got = _autocast_mlp_steps(torchlike)
    else:
        got = _autocast_mlp_steps(torchlike)
    for i, (a, b) in enumerate(zip(ref, got)):
        _same(f"#{i}", a, b, None)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_fused_and_compiled_paths(dtype):
    from torchlike import eager

    def fn(m, c, a, b, b1, b2, v):
        return [m.addmm(c, a, b, beta=0.5, alpha=-2), m.nn.functional.linear(a, b.t(), c),
                m.baddbmm(c, b1, b2), m.addbmm(c, b1, b2, beta=-2), m.addmv(c[:6], a, v),
                m.addmv(c[:6], a.t().contiguous().t(), v, beta=0.5), m.addr(c[:6, None], c[:6], c)]
    keys = ("c", "a", "b", "b1", "b2", "v")
    ref = fn(torch, *[torch.tensor(X[k]).to(getattr(torch, dtype)) for k in keys])
    ins = [torchlike.tensor(X[k]).to(getattr(torchlike, dtype)) for k in keys]
    runs = [fn(torchlike, *ins) for _ in range(3)]
    with eager.fused():
        runs += [fn(torchlike, *ins) for _ in range(4)]
    cf = torchlike.compile(lambda *xs: fn(torchlike, *xs))
    runs += [cf(*ins) for _ in range(2)]
    for run in runs:
        for i, (a, b) in enumerate(zip(ref, run)):
            _same(f"#{i}", a, b, dtype)
