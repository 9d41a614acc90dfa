"""Corner values against torch: reductions over every dim written as None / () / [] with and
without keepdim, out-of-range dims, complex numbers with infinite parts, signed zeros, the
dtypes each op refuses, and half-precision products. Every case runs on real torch at test time
(``both_outcomes``: the same exception class and message, or the same result)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch as T

import torchlike
from oracle import both_outcomes, same_as_torch, same_dtype, value_bits

inf, nan = math.inf, math.nan


def same(fn, *, msg="exact", bits=True):
    """``fn(m)`` on torch and torchlike: the same exception, or results with the same dtypes,
    shapes and values (bit for bit, with ``bits``: the sign of a zero counts)."""
    if bits:
        same_as_torch(fn, msg=msg, bits=True)
    else:
        same_as_torch(fn, msg=msg, atol=1e-6, rtol=1e-6)


def _grad_name(r):
    return type(r.grad_fn).__name__ if r.grad_fn is not None else None


# ============================================================== A. every dim as None / () / []

_BASE = np.arange(6, dtype=np.float32).reshape(2, 3) + 1
_REDUCTIONS = ["sum", "mean", "nansum", "nanmean", "prod", "amax", "amin", "std", "var",
               "std_mean", "var_mean", "logsumexp", "norm", "any", "all", "count_nonzero",
               "argmax", "argmin", "median", "nanmedian", "mode"]
_ALL_DIMS = [None, (), []]


@pytest.mark.parametrize("keepdim", [None, True, False])
@pytest.mark.parametrize("dim", _ALL_DIMS, ids=["None", "tuple", "list"])
@pytest.mark.parametrize("shape", [(2, 3), (), (0, 3)])
@pytest.mark.parametrize("op", _REDUCTIONS)
def test_reduction_over_all_dims(op, shape, dim, keepdim):
    x = _BASE if shape == (2, 3) else np.zeros(shape, np.float32) + 2.5

    def kw_form(m):
        kw = {"dim": dim} if keepdim is None else {"dim": dim, "keepdim": keepdim}
        return getattr(m, op)(m.tensor(x), **kw)

    def pos_form(m):
        args = ([2] if op == "norm" else []) + [dim] + ([] if keepdim is None else [keepdim])
        return getattr(m, op)(m.tensor(x), *args)

    # prod's refusal of a non-int dim is the argument parser's (torchlike/_ops/_surface.py),
    # whose text differs: the class only there; torch lists keywords in reverse order
    parser = op == "prod"
    same(kw_form, msg=None if parser else "first_line", bits=False)
    same(pos_form, msg=None if parser else "first_line", bits=False)


@pytest.mark.parametrize("call", [
    lambda m, x: x.sum(dim=None, keepdim=True), lambda m, x: x.sum(dim=()),
    lambda m, x: x.sum(), lambda m, x: m.sum(x, [], True), lambda m, x: x.mean(dim=[]),
    lambda m, x: x.mean(dim=None, keepdim=True), lambda m, x: x.mean()])
def test_reduction_over_all_dims_grad_fn(call):
    names = []
    for m in (T, torchlike):
        x = m.ones(2, 3, requires_grad=True)
        r = call(m, x)
        r.sum().backward()
        names.append((_grad_name(r), tuple(r.shape), x.grad.tolist()))
    assert names[1] == names[0]


def test_count_nonzero_refuses_keepdim_with_torch_text():
    same(lambda m: m.count_nonzero(m.ones(2, 3), dim=None, keepdim=True))
    same(lambda m: m.count_nonzero(m.ones(2, 3), (), keepdim=False))
    same(lambda m: m.count_nonzero(m.ones(2, 3), None, True))


# ============================================================== B. dims out of range

_X23 = np.arange(6, dtype=np.float32).reshape(2, 3)
_DIM_OPS = {
    "renorm": lambda m, d: m.renorm(m.tensor(_X23), 2, d, 1.0),
    "renorm_": lambda m, d: m.tensor(_X23).renorm_(2, d, 1.0),
    "renorm_1d": lambda m, d: m.renorm(m.tensor(_X23[0]), 2, d, 1.0),
    "renorm_negative_maxnorm": lambda m, d: m.renorm(m.tensor(_X23), 2, d, -1.0),
    "renorm_maxnorm_g": lambda m, d: m.renorm(m.tensor(_X23), 2, d, -0.1234567891),
    "cross": lambda m, d: m.cross(m.ones(3, 3), m.ones(3, 3), dim=d),
    "linalg.cross": lambda m, d: m.linalg.cross(m.ones(3, 3), m.ones(3, 3), dim=d),
    "tensordot": lambda m, d: m.tensordot(m.tensor(_X23), m.tensor(_X23), dims=([d], [0])),
    "special.logsumexp": lambda m, d: m.special.logsumexp(m.tensor(_X23), d),
    "special.softmax": lambda m, d: m.special.softmax(m.tensor(_X23), d),
    "special.log_softmax": lambda m, d: m.special.log_softmax(m.tensor(_X23), d),
    **{n: (lambda m, d, n=n: getattr(m, n)(m.tensor(_X23), dim=d)) for n in (
        "sum", "mean", "nansum", "nanmean", "prod", "amax", "amin", "std", "var", "logsumexp",
        "any", "all", "count_nonzero", "max", "min", "argmax", "argmin", "cumsum", "cumprod",
        "cummax", "cummin", "softmax", "log_softmax")},
    **{n + "[0, d]": (lambda m, d, n=n: getattr(m, n)(m.tensor(_X23), dim=[0, d])) for n in (
        "sum", "mean", "nansum", "amax", "std", "var_mean", "logsumexp", "count_nonzero")},
}


@pytest.mark.parametrize("d", [1, 2, 3, -3, -4])
@pytest.mark.parametrize("op", sorted(_DIM_OPS))
def test_dim_out_of_range(op, d):
    same(lambda m: _DIM_OPS[op](m, d), bits=False)


# ============================================================== C. complex numbers from infinite parts

_PARTS = [-inf, -1.0, -0.0, 0.0, 0.5, inf, nan]
_RE = np.array([a for a in _PARTS for _b in _PARTS], np.float32)
_IM = np.array([b for _a in _PARTS for b in _PARTS], np.float32)
_COMPLEX_MAKERS = {
    "complex": lambda m, dt: m.complex(m.tensor(_RE, dtype=dt), m.tensor(_IM, dtype=dt)),
    "polar": lambda m, dt: m.polar(m.tensor(np.abs(_RE), dtype=dt), m.tensor(_IM, dtype=dt)),
    "polar_negative_abs": lambda m, dt: m.polar(m.tensor(_RE, dtype=dt),
                                                m.tensor(_IM, dtype=dt)),
    "view_as_complex": lambda m, dt: m.view_as_complex(m.tensor(np.stack([_RE, _IM], -1),
                                                                dtype=dt)),
    "view_as_real": lambda m, dt: m.view_as_real(m.complex(m.tensor(_RE, dtype=dt),
                                                           m.tensor(_IM, dtype=dt))),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", sorted(_COMPLEX_MAKERS))
def test_complex_from_infinite_and_signed_parts(op, dtype):
    same(lambda m: _COMPLEX_MAKERS[op](m, getattr(m, dtype)))


def test_complex_parts_keep_their_gradients():
    grads = []
    for m in (T, torchlike):
        re = m.tensor([1.0, -2.0], requires_grad=True)
        im = m.tensor([0.5, 3.0], requires_grad=True)
        z = m.complex(re, im) * m.polar(re.abs() + 1, im)
        z.abs().sum().backward()
        grads.append((re.grad.tolist(), im.grad.tolist()))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)


# ============================================================== D. signed zeros

_EDGES = [-inf, -1.0, -0.0, 0.0, 1.0, inf, nan, 0.5, -0.5]
_UNARY_FNS = {
    **{n: (lambda m, x, n=n: getattr(m, n)(x)) for n in (
        "abs", "neg", "sign", "sgn", "sqrt", "exp", "expm1", "log1p", "sin", "tan", "asin",
        "atan", "sinh", "tanh", "asinh", "atanh", "erf", "erfinv", "floor", "ceil", "trunc",
        "frac", "round", "fix", "reciprocal", "relu", "square", "positive", "nan_to_num",
        "deg2rad", "rad2deg", "lgamma", "digamma", "sinc", "signbit")},
    **{"special." + n: (lambda m, x, n=n: getattr(m.special, n)(x)) for n in (
        "erfinv", "bessel_j1", "spherical_bessel_j0", "expit", "i1", "i1e", "ndtri",
        "modified_bessel_i1", "entr", "round", "expm1", "log1p")},
    "clamp(min=0)": lambda m, x: m.clamp(x, min=0),
    "clamp(min=-0.)": lambda m, x: m.clamp(x, min=-0.0),
    "clamp(max=0)": lambda m, x: m.clamp(x, max=0),
    "clamp(max=-0.)": lambda m, x: m.clamp(x, max=-0.0),
    "clamp(0, 0)": lambda m, x: m.clamp(x, 0, 0),
    "clamp(-0., -0.)": lambda m, x: m.clamp(x, -0.0, -0.0),
    "clamp_min(0)": lambda m, x: m.clamp_min(x, 0.0),
    "clamp_max(-0.)": lambda m, x: m.clamp_max(x, -0.0),
    "clip(-1, 1)": lambda m, x: m.clip(x, -1, 1),
    "clamp_(min=0)": lambda m, x: x.clone().clamp_(min=0.0),
}


def _exact_ulps(op):
    # ops whose last bit differs from torch's CPU kernels (another algorithm): the sign of
    # zeros and the special values compared, the others to a few ulps
    return op.split(".")[-1] not in ("exp", "expm1", "sinh", "tanh", "asinh", "erf", "sinc",
                                     "digamma", "lgamma", "expit", "i1", "i1e", "ndtri",
                                     "modified_bessel_i1", "spherical_bessel_j0", "entr", "tan",
                                     "sin", "atanh", "asin", "atan", "erfinv", "bessel_j1")


@pytest.mark.parametrize("op", sorted(_UNARY_FNS))
def test_unary_signed_zeros(op):
    x = np.array(_EDGES, np.float32)
    got = both_outcomes(lambda m: _UNARY_FNS[op](m, m.tensor(x)))
    if got is None:
        return
    lv, tv = got
    assert same_dtype(lv, tv) and tuple(lv.shape) == tuple(tv.shape)
    lb, tb = value_bits(lv), value_bits(tv)
    for i, (a, b) in enumerate(zip(lb, tb)):
        if isinstance(a, tuple) and isinstance(b, tuple) and not _exact_ulps(op) and \
                a[0] != 0 and b[0] != 0 and not math.isinf(b[0]):
            assert a[0] == pytest.approx(b[0], rel=1e-5), (x[i], a, b)
        else:
            assert a == b, f"at {x[i]}: {a} != torch {b}"


@pytest.mark.parametrize("op", ["sign", "sgn", "erfinv", "relu", "clamp(min=0)",
                                "clamp(max=-0.)"])
def test_signed_zero_gradients(op):
    grads = []
    for m in (T, torchlike):
        x = m.tensor([-0.0, 0.0, 0.3, -0.7, 0.9], requires_grad=True)
        _UNARY_FNS[op](m, x).sum().backward()
        grads.append(value_bits(x.grad + 0))     # (torch's sign gives a ZeroTensor)
    assert grads[1] == grads[0]


def test_sgn_complex_signed_zero():
    same(lambda m: m.sgn(m.tensor([complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0),
                                    complex(3, -4), complex(nan, 1), complex(1, nan)])))


@pytest.mark.parametrize("z", [complex(inf, 1), complex(inf, inf), complex(-inf, 0),
                               complex(1, inf), complex(0, -inf), complex(inf, nan),
                               complex(-inf, -inf)], ids=str)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_sgn_of_an_infinite_complex_is_nan_in_both_parts(z, dtype):
    """As torch's scalar kernel (a one-element tensor) computes it on every CPU, and its
    AVX-512 kernel on any length; its AVX2 kernel gives nan+0j for some (DIFFERENCES.md)."""
    same(lambda m: m.sgn(m.tensor([z], dtype=getattr(m, dtype))))
    got = torchlike.sgn(torchlike.tensor([z] * 9, dtype=getattr(torchlike, dtype)))
    assert all(np.isnan(v.real) and np.isnan(v.imag) for v in got.tolist())


@pytest.mark.parametrize("n", [1, 2, 7, 40])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("fn", ["fmax", "fmin"])
def test_fmax_fmin_ties_and_nans_bit_for_bit(fn, dtype, n):
    """torch's fmax/fmin take the first operand on a tie of signed zeros (the second in
    bfloat16) and the number over a NaN, at every length (its vector loop and scalar tail
    agree)."""
    x = ([0.0, -0.0, nan, 1.0, -2.0, inf] * n)[:n]
    y = ([-0.0, 0.0, 1.0, nan, -2.0, nan] * n)[:n]
    same(lambda m: getattr(m, fn)(m.tensor(x, dtype=getattr(m, dtype)),
                                  m.tensor(y, dtype=getattr(m, dtype))))


@pytest.mark.parametrize("fn", ["maximum", "minimum"])
def test_maximum_minimum_of_signed_zeros_is_one_zero_at_every_length(fn):
    """The sign of the zero ``maximum``/``minimum`` return for a tie of 0. and -0. is XLA's
    (+0. for maximum, -0. for minimum) at every length; torch's depends on the length and the
    CPU's vector width (DIFFERENCES.md). The values are torch's as numbers."""
    for n in (1, 2, 7, 40):
        x = ([0.0, -0.0] * n)[:n]
        got = getattr(torchlike, fn)(torchlike.tensor(x), -torchlike.tensor(x))
        assert got.tolist() == [0.0] * n
        assert np.signbit(np.asarray(got)).tolist() == [fn == "minimum"] * n
        want = getattr(T, fn)(T.tensor(x), -T.tensor(x))
        np.testing.assert_array_equal(np.asarray(got), want.numpy())     # (0. == -0.)


# ============================================================== E. cross: no promotion, no bool

_CROSS_DTYPES = ["bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64",
                 "complex64"]


@pytest.mark.parametrize("fn", ["cross", "linalg.cross"])
@pytest.mark.parametrize("b", _CROSS_DTYPES)
@pytest.mark.parametrize("a", _CROSS_DTYPES)
def test_cross_dtypes(a, b, fn):
    def call(m):
        x = m.tensor([[1, 0, 1], [0, 1, 1]]).to(getattr(m, a))
        y = m.tensor([[0, 1, 1], [1, 1, 0]]).to(getattr(m, b))
        return m.cross(x, y, dim=1) if fn == "cross" else m.linalg.cross(x, y)
    same(call, bits=False)


def test_cross_checks_shapes_before_dtypes():
    same(lambda m: m.cross(m.tensor([1, 0, 0]), m.tensor([0.0, 1.0]), dim=0))
    same(lambda m: m.cross(m.tensor([[1, 0, 0]]), m.tensor([0.0, 1.0, 0.0]), dim=1))
    same(lambda m: m.cross(m.tensor([1, 0, 0]), m.tensor([0.0, 1.0, 0.0]), dim=3))


# ------------------------------------------------------------------ dtype refusals of the
# unary/special families: each over the dtypes, torch's exception (class and text) or result

_REFUSAL_DTYPES = ["bool", "uint8", "int64", "float16", "bfloat16", "float32", "float64",
                   "complex64"]
_REFUSAL_OPS = {
    "logit": lambda m, t: m.logit(t), "logit_": lambda m, t: t.clone().logit_(),
    "special.logit": lambda m, t: m.special.logit(t),
    "deg2rad": lambda m, t: m.deg2rad(t), "rad2deg": lambda m, t: m.rad2deg(t),
    "deg2rad_": lambda m, t: t.clone().deg2rad_(),
    "lgamma": lambda m, t: m.lgamma(t), "lgamma_": lambda m, t: t.clone().lgamma_(),
    "digamma": lambda m, t: m.digamma(t), "digamma_": lambda m, t: t.clone().digamma_(),
    "polygamma(0)": lambda m, t: m.polygamma(0, t), "polygamma(1)": lambda m, t: m.polygamma(1, t),
    "polygamma(3)": lambda m, t: m.polygamma(3, t),
    "polygamma_(1)": lambda m, t: t.clone().polygamma_(1),
    "i0": lambda m, t: m.i0(t), "i0_": lambda m, t: t.clone().i0_(),
    "mvlgamma": lambda m, t: m.mvlgamma(t, 1), "mvlgamma(p=2)": lambda m, t: m.mvlgamma(t, 2),
    "mvlgamma_": lambda m, t: t.clone().mvlgamma_(1),
    "igamma": lambda m, t: m.igamma(t, t), "igammac": lambda m, t: m.igammac(t, t),
    "igamma_": lambda m, t: t.clone().igamma_(t), "igammac_": lambda m, t: t.clone().igammac_(t),
    "isposinf": lambda m, t: m.isposinf(t), "isneginf": lambda m, t: m.isneginf(t),
    "special.xlog1py": lambda m, t: m.special.xlog1py(t, t),
    "special.zeta": lambda m, t: m.special.zeta(t, t),
    **{f"special.{n}": (lambda n: lambda m, t: getattr(m.special, n)(t))(n) for n in (
        "entr", "erfcx", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
        "spherical_bessel_j0", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
        "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
        "airy_ai", "ndtr", "ndtri", "log_ndtr", "i0", "i0e", "i1", "i1e", "gammaln", "psi",
        "digamma")},
    "special.polygamma": lambda m, t: m.special.polygamma(1, t),
    "special.multigammaln": lambda m, t: m.special.multigammaln(t, 1),
    "special.gammainc": lambda m, t: m.special.gammainc(t, t),
}


def _same_refusal(fn, half):
    """torch's exception (class and exact text), or a result of torch's dtype and shape with
    close values (to 1e-2 for a float16/bfloat16 result, ``half``: their rounding is not what
    these tests check)."""
    tol = 1e-2 if half else 1e-6
    same_as_torch(fn, atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", _REFUSAL_DTYPES)
@pytest.mark.parametrize("op", sorted(_REFUSAL_OPS))
def test_unary_special_dtype_refusals(op, dtype):
    f = _REFUSAL_OPS[op]
    _same_refusal(lambda m: f(m, m.tensor([0.25, 1.0]).to(getattr(m, dtype))),
                  half=dtype in ("float16", "bfloat16"))


@pytest.mark.parametrize("pair", [("float32", "complex64"), ("float16", "int64"),
                                  ("float16", "float32()"), ("float64", "complex128()"),
                                  ("int64", "complex64")])
@pytest.mark.parametrize("op", ["special.xlog1py", "special.zeta", "igamma", "igammac"])
def test_binary_special_refusals_see_the_promoted_dtype(op, pair):
    f = {"special.xlog1py": lambda m, a, b: m.special.xlog1py(a, b),
         "special.zeta": lambda m, a, b: m.special.zeta(a, b),
         "igamma": lambda m, a, b: m.igamma(a, b), "igammac": lambda m, a, b: m.igammac(a, b)}[op]

    def mk(m, d):
        return (m.tensor(0.5) if d.endswith("()") else m.tensor([0.5, 2.0])).to(
            getattr(m, d.rstrip("()")))
    _same_refusal(lambda m: f(m, mk(m, pair[0]), mk(m, pair[1])), half="float16" in pair[0])


# ------------------------------------------------------------------ complex pow of a zero base:
# torch's std::pow, exp(e log 0): inf+nanj for an exponent of negative real part, nan+nanj for
# a zero one, 0-0j for a positive one; its Python-number exponents 0, 1, 2, 3, -2, +-0.5, -1 are
# a fill, a copy, products, sqrt, rsqrt and c10's reciprocal (the signs of zero parts count)

_ZERO_BASES = [complex(0.0, 0.0), complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0)]
_POW_EXPONENTS = [0, 1, 2, 3, -1, -2, 0.5, -0.5, 2.5, -2.5, inf, -inf, 0j, 1j, -1 + 1j, 1 + 1j,
                  1 - 1j, 2 + 0j, -0.5 + 0j, 1.5 + 2j]


@pytest.mark.parametrize("how", ["scalar", "tensor", "0-dim", "scalar base"])
@pytest.mark.parametrize("e", _POW_EXPONENTS, ids=repr)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_pow_of_a_zero_base(dtype, e, how):
    def f(m):
        dt = getattr(m, dtype)
        b = m.tensor(_ZERO_BASES, dtype=dt)
        if how == "scalar":
            return b ** e
        if how == "tensor":
            return b ** m.full((4,), e, dtype=dt)
        if how == "0-dim":
            return b ** m.tensor(e, dtype=dt)
        return 0j ** m.full((4,), e, dtype=dt)
    same(f)


@pytest.mark.parametrize("e", [2, 3, 0.5, -0.5, -1, -2, 1, 0])
def test_complex_pow_by_special_python_exponents(e):
    # torch's sqrt / rsqrt / reciprocal / products on nonzero and infinite bases too (bases
    # whose square roots are exact)
    same(lambda m: m.tensor([2j, -1 + 0j, complex(inf, 0), 4 + 0j, -3 - 4j]) ** e)
