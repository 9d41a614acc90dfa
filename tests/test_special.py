"""torch.special and the top-level special functions (i0, polygamma, mvlgamma, igamma,
igammac) against torch: values at ordinary and edge points, dtypes, shapes, gradients (first
order everywhere torch has them, second order for a few), methods, out=, errors, and the
functions torch has no gradient for."""
import numpy as np
import pytest
import torch

import torchlike
from oracle import Case, check, check_double_backward, check_raises

rng = np.random.default_rng(0)
REAL = np.array([-3.3, -1.2, -0.3, 0.2, 0.7, 1.6, 4.1], np.float32)
POS = np.array([0.15, 0.6, 1.3, 2.8, 7.5], np.float32)
UNIT = np.array([0.02, 0.3, 0.5, 0.81, 0.97], np.float32)
EDGE = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1.0, 1e10, -1e10, 1e-20, -2.5, 3.7,
                 40.0, -40.0, 2.0, 5.0, 5.01, 8.4, 104.0], np.float32)
EMPTY = np.zeros((0, 3), np.float32)
ZERO_DIM = np.array(0.7, np.float32)
INTS = np.array([1, 2, 3], np.int64)

# name: (domain where torch's gradient is finite, or None when torch has no gradient)
UNARY = {
    "i0": REAL, "i0e": REAL, "i1": REAL, "i1e": REAL, "ndtr": REAL, "ndtri": UNIT,
    "log_ndtr": REAL, "erfcx": REAL, "entr": POS, "expit": REAL, "gammaln": POS, "psi": POS,
    "digamma": POS, "erf": REAL, "erfc": REAL, "erfinv": UNIT, "exp2": REAL, "expm1": REAL,
    "log1p": POS, "sinc": REAL, "round": None, "logit": UNIT,
    "spherical_bessel_j0": None, "modified_bessel_i0": None, "modified_bessel_i1": None,
    "bessel_j0": None, "bessel_j1": None, "bessel_y0": None, "bessel_y1": None,
    "modified_bessel_k0": None, "modified_bessel_k1": None, "scaled_modified_bessel_k0": None,
    "scaled_modified_bessel_k1": None, "airy_ai": None,
}


def _u(name, **kw):
    return lambda m, x: getattr(m.special, name)(x, **kw)


# the same ops as torchlike.<name>: their own tables test them; here values, grads and out=
SHARED_UNARY = {"i0", "expit", "gammaln", "psi", "digamma", "erf", "erfc", "erfinv", "exp2",
                "expm1", "log1p", "sinc", "round", "logit"}


def _unary_cases():
    # few rows per function (each new shape / dtype compiles): edges in both float widths,
    # gradients where torch has them, empty / 0-dim / integer / out= once each
    cases = []
    for name, dom in UNARY.items():
        grad = dom is not None
        x = dom if grad else EDGE        # the same shapes as the edge rows: no new compiles
        cases.append(Case(f"{name}-out", lambda m, x, _n=name: getattr(m.special, _n)(
            x, out=m.zeros(x.shape)), (x,), grad=False))
        if grad:
            cases.append(Case(f"{name}", _u(name), (x,)))
        if name in SHARED_UNARY:
            continue
        if grad:
            cases.append(Case(f"{name}-f64", _u(name), (x.astype(np.float64),), atol=1e-10))
        cases += [
            Case(f"{name}-edges", _u(name), (EDGE,), grad=False, atol=1e-6, rtol=1e-5),
            Case(f"{name}-edges-f64", _u(name), (EDGE.astype(np.float64),), grad=False,
                 atol=1e-12, rtol=1e-10),
        ]
        if name in ("i0e", "i1", "ndtr", "entr", "bessel_j0", "modified_bessel_k0", "airy_ai"):
            cases += [Case(f"{name}-0dim", _u(name), (ZERO_DIM,), grad=False),
                      Case(f"{name}-int", _u(name), (INTS,), grad=False),
                      Case(f"{name}-empty", _u(name), (EMPTY,))]
        if not grad:
            cases.append(Case(f"{name}-no-grad", lambda m, x, _n=name: getattr(m.special, _n)(
                x.requires_grad_()).requires_grad, (EDGE,), grad=False))
    return cases


@pytest.mark.parametrize("case", _unary_cases(), ids=str)
def test_unary(case):
    check(case)


BINARY = [
    Case("xlog1py", lambda m, x, y: m.special.xlog1py(x, y), (REAL, POS[None].T)),
    Case("xlog1py-edges", lambda m, x, y: m.special.xlog1py(x, y),
         (np.array([0, 0, 1, 2, -1, 0, np.nan, 0], np.float32),
          np.array([np.nan, -1, 0.5, -2, 3, -3, 1, np.inf], np.float32)), False),
    Case("xlog1py-zero-x-grad", lambda m, x, y: m.special.xlog1py(x, y),
         (np.array([0.0, 0.0, 1.0], np.float32), np.array([-1.0, 2.0, 0.5], np.float32))),
    Case("xlog1py-scalar-first", lambda m, y: m.special.xlog1py(2.0, y), (POS,)),
    Case("xlog1py-scalar-second", lambda m, x: m.special.xlog1py(x, 3), (REAL,)),
    Case("xlog1py-f64", lambda m, x, y: m.special.xlog1py(x, y),
         (REAL.astype(np.float64), REAL.astype(np.float64) + 4)),
    Case("xlog1py-out", lambda m, x, y: m.special.xlog1py(x, y, out=m.zeros(7)), (REAL, POS[:1]),
         False),
    Case("xlogy", lambda m, x, y: m.special.xlogy(x, y), (REAL, POS[None].T)),
    Case("zeta-values", lambda m, x, q: m.special.zeta(x, q),
         (np.array([2, 3, 1, 0.5, 4, -1, 2, np.inf, 3, 2], np.float32),
          np.array([1, 2, 1, 1, 0.5, 1, -1.5, 2, -2, 0], np.float32)), False),
    Case("zeta-grad-q", lambda m, q: m.special.zeta(3.0, q), (POS,)),
    Case("zeta-grad-q-tensor-x", lambda m, q: m.special.zeta(m.tensor([2.0, 3.5]), q),
         (POS[:2],)),
    Case("zeta-f64", lambda m, x, q: m.special.zeta(x, q),
         (POS.astype(np.float64) + 1.5, POS.astype(np.float64)), False, atol=1e-10),
    Case("gammainc", lambda m, a, x: m.special.gammainc(a.detach(), x), (POS, POS[::-1].copy())),
    Case("gammaincc", lambda m, a, x: m.special.gammaincc(a.detach(), x),
         (POS, POS[::-1].copy())),
    Case("gammainc-edges", lambda m, a, x: m.special.gammainc(a, x),
         (np.array([0.5, 1, 2, 5, 0, -1, np.inf, np.nan, 3, np.inf, 0], np.float32),
          np.array([0.3, 1, 3, 2, 1, 1, 1, 1, np.inf, np.inf, 0], np.float32)), False),
    Case("gammaincc-edges", lambda m, a, x: m.special.gammaincc(a, x),
         (np.array([0.5, 1, 2, 5, 0, -1, np.inf, np.nan, 3, np.inf, 0], np.float32),
          np.array([0.3, 1, 3, 2, 1, 1, 1, 1, np.inf, np.inf, 0], np.float32)), False),
    Case("igamma-top-level", lambda m, a, x: m.igamma(a.detach(), x), (POS, UNIT)),
    Case("igammac-method", lambda m, a, x: a.detach().igammac(x), (POS, UNIT)),
    Case("igamma-f64-broadcast", lambda m, a, x: m.igamma(a, x),
         (POS.astype(np.float64)[:, None], UNIT.astype(np.float64)), False, atol=1e-10),
    Case("igamma-out", lambda m, a, x: m.igamma(a, x, out=m.zeros(5)), (POS, UNIT), False),
    Case("igamma_", lambda m, a, x: a.clone().igamma_(x), (POS, UNIT), False),
    Case("igammac_", lambda m, a, x: a.clone().igammac_(x), (POS, UNIT), False),
]


@pytest.mark.parametrize("case", BINARY, ids=str)
def test_binary(case):
    check(case)


GAMMA = [
    Case(f"polygamma-{n}", lambda m, x, _n=n: m.special.polygamma(_n, x), (dom,))
    for n, dom in ((0, POS), (1, REAL), (2, POS), (3, REAL), (4, POS))
] + [
    Case(f"polygamma-{n}-edges", lambda m, x, _n=n: m.polygamma(_n, x), (EDGE,), False,
         rtol=1e-4)
    for n in (0, 1, 2, 3)
] + [
    Case(f"polygamma-{n}-edges-f64", lambda m, x, _n=n: m.polygamma(_n, x),
         (EDGE.astype(np.float64),), False, rtol=1e-8)
    for n in (1, 2)
] + [
    Case("polygamma-method", lambda m, x: x.polygamma(2), (POS,)),
    Case("polygamma_", lambda m, x: x.clone().polygamma_(1), (POS,)),
    Case("polygamma-int", lambda m, x: m.polygamma(1, x), (INTS,), False),
    Case("polygamma-0dim", lambda m, x: m.polygamma(1, x), (ZERO_DIM,)),
    Case("polygamma-empty", lambda m, x: m.polygamma(1, x), (EMPTY,)),
    Case("polygamma-out", lambda m, x: m.polygamma(1, x, out=m.zeros(5)), (POS,), False),
    Case("multigammaln", lambda m, x: m.special.multigammaln(x, 3), (POS + 1.5,)),
    Case("multigammaln-p1", lambda m, x: m.special.multigammaln(x, 1), (POS,)),
    Case("multigammaln-below-domain", lambda m, x: m.special.multigammaln(x, 3), (POS,), False),
    Case("mvlgamma-int", lambda m, x: m.mvlgamma(x, 2), (INTS,), False),
    Case("mvlgamma-f64", lambda m, x: m.mvlgamma(x, 4), (POS.astype(np.float64) + 2,),
         atol=1e-10),
    Case("mvlgamma-method", lambda m, x: x.mvlgamma(2), (POS + 1,)),
    Case("mvlgamma_", lambda m, x: x.clone().mvlgamma_(2), (POS + 1,)),
    Case("mvlgamma-empty", lambda m, x: m.mvlgamma(x, 2), (EMPTY,)),
    Case("mvlgamma-out", lambda m, x: m.mvlgamma(x, 2, out=m.zeros(5)), (POS + 1,), False),
    Case("i0-method", lambda m, x: x.i0(), (REAL,)),
    Case("i0_", lambda m, x: x.clone().i0_(), (REAL,)),
    Case("i0-top-level-int", lambda m, x: m.i0(x), (INTS,), False),
    Case("i0-out", lambda m, x: m.i0(x, out=m.zeros(7)), (REAL,), False),
]


@pytest.mark.parametrize("case", GAMMA, ids=str)
def test_gamma_family(case):
    check(case)


# ------------------------------------------------------------------ shared ops and reductions

def test_same_ops_as_top_level():
    x = torchlike.tensor(POS, requires_grad=True)
    for sp, top in [("erf", "erf"), ("expit", "sigmoid"), ("gammaln", "lgamma"),
                    ("psi", "digamma"), ("i0", "i0"), ("log1p", "log1p")]:
        a = getattr(torchlike.special, sp)(x)
        b = getattr(torchlike, top)(x)
        assert a.grad_fn.name() == b.grad_fn.name()
        np.testing.assert_array_equal(np.asarray(a.tolist()), np.asarray(b.tolist()))


SHARED = [
    Case("logsumexp", lambda m, x: m.special.logsumexp(x, 1), (rng.standard_normal((3, 4)),)),
    Case("logsumexp-keepdim", lambda m, x: m.special.logsumexp(x, (0, 1), keepdim=True),
         (rng.standard_normal((3, 4)).astype(np.float32),)),
    Case("softmax", lambda m, x: m.special.softmax(x, 0),
         (rng.standard_normal((3, 4)).astype(np.float32),)),
    Case("softmax-dtype", lambda m, x: m.special.softmax(x, 1, dtype=m.float64),
         (rng.standard_normal((3, 4)).astype(np.float32),)),
    Case("log_softmax", lambda m, x: m.special.log_softmax(x, -1),
         (rng.standard_normal((3, 4)).astype(np.float32),)),
    Case("logit-eps", lambda m, x: m.special.logit(x, eps=0.1), (UNIT,)),
    Case("round-decimals", lambda m, x: m.special.round(x * 10, decimals=1), (REAL,)),
    Case("xlogy-scalar", lambda m, y: m.special.xlogy(2.0, y), (POS,)),
]


@pytest.mark.parametrize("case", SHARED, ids=str)
def test_shared(case):
    check(case)


# ------------------------------------------------------------------ orthogonal polynomials

POLY = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
        "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
        "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
        "laguerre_polynomial_l", "legendre_polynomial_p"]
# no NaN input: torch's kernels return an uninitialised value for NaN at degree >= 2
# (DIFFERENCES.md); torchlike gives NaN
PX = np.array([-2.0, -1.0, -0.5, 0.0, 0.3, 0.7, 1.0, 1.5, 3.0, 0.9], np.float32)
PN = np.array([0, 1, 2, 3, 4, 5, 10, 6, 9, 3], np.float32)


@pytest.mark.parametrize("name", POLY)
def test_polynomials(name):
    f = getattr(torch.special, name)
    for n in (-1, 0, 1, 2, 5, 7, 9, 12):
        check(Case(f"{name}-{n}", lambda m, x: getattr(m.special, name)(x, n), (PX,), False,
                   atol=1e-4, rtol=1e-4))
    check(Case(f"{name}-tensor-n", lambda m, x, n: getattr(m.special, name)(x, n), (PX, PN),
               False, atol=1e-3, rtol=1e-4))
    if name in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "hermite_polynomial_h",
                "legendre_polynomial_p", "shifted_chebyshev_polynomial_w"):
        check(Case(f"{name}-f64-broadcast", lambda m, x, n: getattr(m.special, name)(x, n),
                   (PX.astype(np.float64)[:, None], PN.astype(np.float64)), False, atol=1e-8,
                   rtol=1e-8))
    check(Case(f"{name}-no-grad", lambda m, x: getattr(m.special, name)(
        x.requires_grad_(), 3).requires_grad, (PX,), False))
    assert f is not None


@pytest.mark.parametrize("name", ["chebyshev_polynomial_t", "hermite_polynomial_h"])
def test_polynomial_arguments(name):
    check(Case(f"{name}-scalar-x", lambda m, n: getattr(m.special, name)(0.4, n), (PN,), False,
               atol=1e-4, rtol=1e-4))
    check(Case(f"{name}-int", lambda m, x: getattr(m.special, name)(x, 3), (INTS,), False))
    check(Case(f"{name}-out", lambda m, x: getattr(m.special, name)(x, 2, out=m.zeros(10)),
               (PX,), False))


def test_hermite_degree_limit_and_nonfinite_n():
    check(Case("hermite-h-limit", lambda m, x: m.special.hermite_polynomial_h(x, 200),
               (np.array([0.1], np.float32),), False))
    check(Case("hermite-he-limit", lambda m, x: m.special.hermite_polynomial_he(x, 129),
               (np.array([0.1], np.float32),), False))
    check(Case("hermite-h-inf-n", lambda m, x, n: m.special.hermite_polynomial_h(x, n),
               (np.array([0.3, 0.3], np.float32), np.array([np.inf, np.nan], np.float32)),
               False))


# ------------------------------------------------------------------ gradients torch lacks, errors

@pytest.mark.parametrize("fn", [
    lambda m, a, x: m.special.gammainc(a, x),
    lambda m, a, x: m.special.gammaincc(a, x),
    lambda m, a, x: m.special.zeta(a + 1, x),
], ids=["gammainc", "gammaincc", "zeta"])
def test_not_implemented_derivative(fn):
    msgs = []
    for m in (torch, torchlike):
        a = m.tensor(POS, requires_grad=True)
        y = fn(m, a, m.tensor(UNIT))
        assert y.requires_grad
        with pytest.raises(NotImplementedError) as e:
            y.sum().backward()
        msgs.append(str(e.value))
    assert msgs[1] in msgs[0], msgs


@pytest.mark.parametrize("fn,inputs,match", [
    (lambda m, x: m.special.polygamma(-1, x), (POS,), "does not support negative n"),
    (lambda m, x: m.polygamma(-2, x), (POS,), "does not support negative n"),
    (lambda m, x: m.igamma(x, x), (INTS,), "\"igamma_cpu\" not implemented for 'Long'"),
    (lambda m, x: m.special.gammaincc(x, x), (INTS,), "not implemented for 'Long'"),
    (lambda m, x: m.mvlgamma(x, 0), (POS + 2,), "p has to be greater than or equal to 1"),
    (lambda m, x: m.special.i0(x, out=m.zeros(2)), (POS.astype(np.float64),), None),
])
def test_errors(fn, inputs, match):
    if match is None:
        # an out= of the wrong shape is resized, with torch's warning, as torch does
        import torch
        res = []
        for m in (torch, torchlike):
            with pytest.warns(UserWarning, match="was resized"):
                res.append(fn(m, *[m.tensor(x) for x in inputs]))
        assert tuple(res[1].shape) == tuple(res[0].shape)
        np.testing.assert_allclose(np.asarray(res[1]), res[0].numpy(), rtol=1e-10)
        return
    check_raises(fn, *inputs, match=match)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.i0(x),
    lambda m, x: m.polygamma(1, x.abs() + 0.5),
    lambda m, x: m.special.i1(x),
    lambda m, x: m.special.ndtr(x),
    lambda m, x: m.special.log_ndtr(x),
    lambda m, x: m.special.xlog1py(x, x.abs()),
    lambda m, x: m.special.entr(x.abs() + 0.1),
], ids=["i0", "polygamma", "i1", "ndtr", "log_ndtr", "xlog1py", "entr"])
def test_double_backward(fn):
    check_double_backward(fn, atol=1e-6, rtol=1e-6)


def test_surface_matches_torch():
    names = {n for n in dir(torch.special) if not n.startswith("_")}
    names -= {"Tensor", "torch", "common_args", "multi_dim_common"}
    missing = sorted(n for n in names if not hasattr(torchlike.special, n))
    assert not missing, missing
    for n in ("i0", "polygamma", "mvlgamma", "igamma", "igammac"):
        assert hasattr(torchlike, n)
    for n in ("i0", "i0_", "polygamma", "polygamma_", "mvlgamma", "mvlgamma_", "igamma",
              "igamma_", "igammac", "igammac_", "stft", "istft"):
        assert hasattr(torchlike.Tensor, n) and hasattr(torch.Tensor, n), n


def test_polynomial_nan_is_nan():
    # torch returns an uninitialised value for NaN at degree >= 2 (DIFFERENCES.md)
    x = torchlike.tensor([float("nan")])
    for name in POLY:
        assert np.isnan(getattr(torchlike.special, name)(x, 3).item()), name
