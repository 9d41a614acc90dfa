"""torchlike.distributions against torch.distributions.

Each family is built with the same parameters in torch and torchlike (``FAMILIES``: a factory
written once against a module ``m``); its statistics (mean, mode, variance, stddev, entropy,
perplexity), log_prob / cdf / icdf at the same points, and the gradients of those with respect
to the parameters are compared over two batch shapes. Samples come from different generators,
so they are checked for shape, dtype and support; ``rsample`` gradients are compared given the
same noise. Then ``expand``, every KL pair torch registers among these families, and the
``validate_args`` errors.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchlike
from tests.oracle import _np, assert_close

SHAPES = [(3,), (2, 3)]          # the second is also what expand() of the first gives
K = 3                                   # categories / event size



@pytest.fixture(autouse=True)
def _torch_validates_args():
    """torch's default validation is on; importing torch.compile's machinery (as
    tests/test_compile.py does in the same worker) turns it off process-wide."""
    torch.distributions.Distribution.set_default_validate_args(True)
    torchlike.distributions.Distribution.set_default_validate_args(True)

def _rng(shape, salt=0):
    return np.random.default_rng(abs(hash((shape, salt))) % 2 ** 32)


def _f32(x):
    return np.asarray(x, dtype=np.float32)


def _pd(rng, shape, n=K):
    a = rng.normal(size=shape + (n, n))
    return _f32(a @ np.swapaxes(a, -1, -2) + n * np.eye(n))


def _tril(rng, shape, n=K):
    a = np.tril(rng.normal(size=shape + (n, n)), -1)
    return _f32(a + np.eye(n) * rng.uniform(0.5, 1.5, size=shape + (n, 1)))


def _simplex(rng, shape, n=K):
    return _f32(rng.dirichlet(np.ones(n), size=shape))


# name -> (factory(m, *params), params(rng, shape), values(rng, shape) in the support)
# values have a leading sample dim of 2 so broadcasting against the batch is exercised.
def _u(rng, s, lo, hi):
    return _f32(rng.uniform(lo, hi, s))


S = (2,)
FAMILIES = {
    "Normal": (lambda m, a, b: m.distributions.Normal(a, b),
               lambda r, s: [_f32(r.normal(size=s)), _u(r, s, 0.5, 2)],
               lambda r, s: _f32(r.normal(size=S + s))),
    "LogNormal": (lambda m, a, b: m.distributions.LogNormal(a, b),
                  lambda r, s: [_f32(r.normal(size=s)), _u(r, s, 0.5, 1.5)],
                  lambda r, s: _u(r, S + s, 0.2, 3)),
    "HalfNormal": (lambda m, b: m.distributions.HalfNormal(b),
                   lambda r, s: [_u(r, s, 0.5, 2)], lambda r, s: _u(r, S + s, 0.1, 3)),
    "Bernoulli": (lambda m, p: m.distributions.Bernoulli(probs=p),
                  lambda r, s: [_u(r, s, 0.1, 0.9)],
                  lambda r, s: _f32(r.integers(0, 2, S + s))),
    "BernoulliLogits": (lambda m, lg: m.distributions.Bernoulli(logits=lg),
                        lambda r, s: [_f32(r.normal(size=s))],
                        lambda r, s: _f32(r.integers(0, 2, S + s))),
    "Binomial": (lambda m, p: m.distributions.Binomial(10, probs=p),
                 lambda r, s: [_u(r, s, 0.1, 0.9)],
                 lambda r, s: _f32(r.integers(0, 11, S + s))),
    "BinomialLogits": (lambda m, lg: m.distributions.Binomial(m.full(lg.shape, 6.0), logits=lg),
                       lambda r, s: [_f32(r.normal(size=s))],
                       lambda r, s: _f32(r.integers(0, 7, S + s))),
    "Categorical": (lambda m, p: m.distributions.Categorical(probs=p),
                    lambda r, s: [_simplex(r, s)],
                    lambda r, s: r.integers(0, K, S + s)),
    "CategoricalLogits": (lambda m, lg: m.distributions.Categorical(logits=lg),
                          lambda r, s: [_f32(r.normal(size=s + (K,)))],
                          lambda r, s: r.integers(0, K, S + s)),
    "OneHotCategorical": (lambda m, p: m.distributions.OneHotCategorical(probs=p),
                          lambda r, s: [_simplex(r, s)],
                          lambda r, s: _f32(np.eye(K)[r.integers(0, K, S + s)])),
    "Multinomial": (lambda m, p: m.distributions.Multinomial(5, probs=p),
                    lambda r, s: [_simplex(r, s)],
                    lambda r, s: _f32(r.multinomial(5, np.ones(K) / K, size=S + s))),
    "Poisson": (lambda m, a: m.distributions.Poisson(a),
                lambda r, s: [_u(r, s, 0.5, 4)], lambda r, s: _f32(r.integers(0, 6, S + s))),
    "Geometric": (lambda m, p: m.distributions.Geometric(probs=p),
                  lambda r, s: [_u(r, s, 0.2, 0.9)],
                  lambda r, s: _f32(r.integers(0, 6, S + s))),
    "Uniform": (lambda m, a, b: m.distributions.Uniform(a, a + b),
                lambda r, s: [_f32(r.normal(size=s)), _u(r, s, 1, 2)],
                lambda r, s: _u(r, S + s, 0.0, 0.9)),   # shifted by low in _value below
    "Beta": (lambda m, a, b: m.distributions.Beta(a, b),
             lambda r, s: [_u(r, s, 0.5, 3), _u(r, s, 0.5, 3)],
             lambda r, s: _u(r, S + s, 0.05, 0.95)),
    "Gamma": (lambda m, a, b: m.distributions.Gamma(a, b),
              lambda r, s: [_u(r, s, 0.5, 3), _u(r, s, 0.5, 2)],
              lambda r, s: _u(r, S + s, 0.1, 4)),
    "Chi2": (lambda m, a: m.distributions.Chi2(a),
             lambda r, s: [_u(r, s, 1, 5)], lambda r, s: _u(r, S + s, 0.1, 6)),
    "Exponential": (lambda m, a: m.distributions.Exponential(a),
                    lambda r, s: [_u(r, s, 0.5, 2)], lambda r, s: _u(r, S + s, 0.0, 3)),
    "Laplace": (lambda m, a, b: m.distributions.Laplace(a, b),
                lambda r, s: [_f32(r.normal(size=s)), _u(r, s, 0.5, 2)],
                lambda r, s: _f32(r.normal(size=S + s))),
    "Cauchy": (lambda m, a, b: m.distributions.Cauchy(a, b),
               lambda r, s: [_f32(r.normal(size=s)), _u(r, s, 0.5, 2)],
               lambda r, s: _f32(r.normal(size=S + s))),
    "StudentT": (lambda m, d, a, b: m.distributions.StudentT(d, a, b),
                 lambda r, s: [_u(r, s, 0.5, 5), _f32(r.normal(size=s)), _u(r, s, 0.5, 2)],
                 lambda r, s: _f32(r.normal(size=S + s))),
    "Dirichlet": (lambda m, c: m.distributions.Dirichlet(c),
                  lambda r, s: [_u(r, s + (K,), 0.5, 3)],
                  lambda r, s: _simplex(r, S + s)),
    "MultivariateNormal": (lambda m, a, L: m.distributions.MultivariateNormal(a, scale_tril=L),
                           lambda r, s: [_f32(r.normal(size=s + (K,))), _tril(r, s)],
                           lambda r, s: _f32(r.normal(size=S + s + (K,)))),
    "MultivariateNormalCov": (
        lambda m, a, C: m.distributions.MultivariateNormal(a, covariance_matrix=C),
        lambda r, s: [_f32(r.normal(size=s + (K,))), _pd(r, s)],
        lambda r, s: _f32(r.normal(size=S + s + (K,)))),
    "MultivariateNormalPrec": (
        lambda m, a, P: m.distributions.MultivariateNormal(a, precision_matrix=P),
        lambda r, s: [_f32(r.normal(size=s + (K,))), _pd(r, s)],
        lambda r, s: _f32(r.normal(size=S + s + (K,)))),
    "LowRankMultivariateNormal": (
        lambda m, a, W, d: m.distributions.LowRankMultivariateNormal(a, W, d),
        lambda r, s: [_f32(r.normal(size=s + (K,))), _f32(r.normal(size=s + (K, 2))),
                      _u(r, s + (K,), 0.5, 2)],
        lambda r, s: _f32(r.normal(size=S + s + (K,)))),
    "Independent": (lambda m, a, b: m.distributions.Independent(m.distributions.Normal(a, b), 1),
                    lambda r, s: [_f32(r.normal(size=s)), _u(r, s, 0.5, 2)],
                    lambda r, s: _f32(r.normal(size=S + s))),
    "MixtureSameFamily": (
        lambda m, lg, a, b: m.distributions.MixtureSameFamily(
            m.distributions.Categorical(logits=lg), m.distributions.Normal(a, b)),
        lambda r, s: [_f32(r.normal(size=s + (K,))), _f32(r.normal(size=s + (K,))),
                      _u(r, s + (K,), 0.5, 2)],
        lambda r, s: _f32(r.normal(size=S + s))),
    "RelaxedBernoulli": (lambda m, p: m.distributions.RelaxedBernoulli(m.tensor(0.7), probs=p),
                         lambda r, s: [_u(r, s, 0.1, 0.9)],
                         lambda r, s: _u(r, S + s, 0.05, 0.95)),
    "RelaxedOneHotCategorical": (
        lambda m, p: m.distributions.RelaxedOneHotCategorical(m.tensor(0.7), probs=p),
        lambda r, s: [_simplex(r, s)], lambda r, s: _simplex(r, S + s)),
    "TransformedDistribution": (
        lambda m, a, b: m.distributions.TransformedDistribution(
            m.distributions.Normal(a, b),
            [m.distributions.AffineTransform(1.0, 2.0), m.distributions.ExpTransform()]),
        lambda r, s: [_f32(r.normal(size=s)), _u(r, s, 0.5, 1.5)],
        lambda r, s: _u(r, S + s, 0.3, 5)),
    "TanhSigmoid": (
        lambda m, a, b: m.distributions.TransformedDistribution(
            m.distributions.Normal(a, b),
            [m.distributions.TanhTransform(), m.distributions.AffineTransform(0.5, 0.5),
             m.distributions.SigmoidTransform().inv]),
        lambda r, s: [_f32(r.normal(size=s)), _u(r, s, 0.5, 1.5)],
        lambda r, s: _f32(r.normal(size=S + s))),
    "ContinuousBernoulli": (lambda m, p: m.distributions.ContinuousBernoulli(probs=p),
                            lambda r, s: [_u(r, s, 0.1, 0.9)],
                            lambda r, s: _u(r, S + s, 0.05, 0.95)),
    "FisherSnedecor": (lambda m, a, b: m.distributions.FisherSnedecor(a, b),
                       lambda r, s: [_u(r, s, 1, 6), _u(r, s, 1, 6)],
                       lambda r, s: _u(r, S + s, 0.1, 3)),
    "GeneralizedPareto": (lambda m, a, b, c: m.distributions.GeneralizedPareto(a, b, c),
                          lambda r, s: [_f32(r.normal(size=s)), _u(r, s, 0.5, 2),
                                        _u(r, s, -0.3, 0.3)],
                          lambda r, s: _u(r, S + s, 0.1, 2)),
    "Gumbel": (lambda m, a, b: m.distributions.Gumbel(a, b),
               lambda r, s: [_f32(r.normal(size=s)), _u(r, s, 0.5, 2)],
               lambda r, s: _f32(r.normal(size=S + s))),
    "HalfCauchy": (lambda m, b: m.distributions.HalfCauchy(b),
                   lambda r, s: [_u(r, s, 0.5, 2)], lambda r, s: _u(r, S + s, 0.1, 3)),
    "InverseGamma": (lambda m, a, b: m.distributions.InverseGamma(a, b),
                     lambda r, s: [_u(r, s, 0.5, 4), _u(r, s, 0.5, 2)],
                     lambda r, s: _u(r, S + s, 0.1, 3)),
    "Kumaraswamy": (lambda m, a, b: m.distributions.Kumaraswamy(a, b),
                    lambda r, s: [_u(r, s, 0.5, 3), _u(r, s, 0.5, 3)],
                    lambda r, s: _u(r, S + s, 0.05, 0.95)),
    "LKJCholesky": (lambda m, c: m.distributions.LKJCholesky(K, c),
                    lambda r, s: [_u(r, s, 0.5, 3)], lambda r, s: _corr_cholesky(r, S + s)),
    "LogisticNormal": (lambda m, a, b: m.distributions.LogisticNormal(a, b),
                       lambda r, s: [_f32(r.normal(size=s + (K - 1,))),
                                     _u(r, s + (K - 1,), 0.5, 2)],
                       lambda r, s: _simplex(r, S + s)),
    "NegativeBinomial": (lambda m, p: m.distributions.NegativeBinomial(m.full(p.shape, 3.0),
                                                                       probs=p),
                         lambda r, s: [_u(r, s, 0.1, 0.9)],
                         lambda r, s: _f32(r.integers(0, 8, S + s))),
    "Pareto": (lambda m, a, b: m.distributions.Pareto(a, b),
               lambda r, s: [_u(r, s, 0.5, 2), _u(r, s, 0.5, 4)],
               lambda r, s: _u(r, S + s, 0.0, 3)),
    "VonMises": (lambda m, a, c: m.distributions.VonMises(a, c),
                 lambda r, s: [_f32(r.normal(size=s)), _u(r, s, 0.5, 5)],
                 lambda r, s: _u(r, S + s, -3, 3)),
    "Weibull": (lambda m, a, c: m.distributions.Weibull(a, c),
                lambda r, s: [_u(r, s, 0.5, 2), _u(r, s, 0.5, 3)],
                lambda r, s: _u(r, S + s, 0.1, 3)),
    "Wishart": (lambda m, df, C: m.distributions.Wishart(df, covariance_matrix=C),
                lambda r, s: [_u(r, s, 3.5, 6), _pd(r, s)], lambda r, s: _pd(r, S + s)),
}


def _value(name, params, v):
    if name == "Uniform":              # inside [low, high)
        return _f32(params[0] + v * params[1])
    if name == "Pareto":               # above scale
        return _f32(params[0] * (1 + v))
    if name == "GeneralizedPareto":    # above loc, below the upper end for concentration < 0
        return _f32(params[0] + v * params[1])
    return v


def _corr_cholesky(rng, shape, n=K):
    c = _pd(rng, shape, n).astype(np.float64)
    d = np.sqrt(np.diagonal(c, axis1=-2, axis2=-1))
    return _f32(np.linalg.cholesky(c / d[..., :, None] / d[..., None, :]))


def _build(name, m, params, grad=True):
    fn = FAMILIES[name][0]
    ts = [m.tensor(p, requires_grad=grad and p.dtype.kind == "f") for p in params]
    return fn(m, *ts), ts


def _both(name, shape, grad=True):
    params = FAMILIES[name][1](_rng(shape), shape)
    dt, tt = _build(name, torch, params, grad)
    dl, tl = _build(name, torchlike, params, grad)
    return params, (dt, tt), (dl, tl)


def _compare(name, what, f_t, f_l, pt, pl, atol=1e-5, rtol=2e-4):
    """``f(dist)`` in both; the same exception class, or equal values, dtypes and gradients."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out_t = f_t()
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            f_l()
        return
    out_l = f_l()
    assert str(out_l.dtype) == str(out_t.dtype), f"{name}.{what}: dtype"
    assert_close(out_l, out_t, atol, rtol, f"{name}.{what}")
    if not out_t.requires_grad:
        return
    assert out_l.requires_grad, f"{name}.{what} does not require grad"
    cot = np.random.default_rng(1).standard_normal(out_t.shape).astype(np.float32)
    # ignore non-finite entries (e.g. a variance that is inf by definition)
    cot = np.where(np.isfinite(_np(out_t)), cot, 0).astype(np.float32)
    leaves_t = [p for p in pt if p.requires_grad]
    leaves_l = [p for p in pl if p.requires_grad]
    try:
        gt = torch.autograd.grad(out_t, leaves_t, torch.tensor(cot), allow_unused=True,
                                 retain_graph=True)
    except Exception as e:  # noqa: BLE001  (e.g. no derivative in a shape parameter)
        with pytest.raises(type(e), match=str(e)[:20]):
            torchlike.autograd.grad(out_l, leaves_l, torchlike.tensor(cot), allow_unused=True,
                                    retain_graph=True)
        return
    gl = torchlike.autograd.grad(out_l, leaves_l, torchlike.tensor(cot), allow_unused=True,
                                 retain_graph=True)
    for k, (a, b) in enumerate(zip(gl, gt)):
        if b is None:
            assert a is None or not np.any(_np(a)), f"{name}.{what}: grad {k} should be None"
            continue
        assert_close(a, b, atol * 10, rtol * 10, f"{name}.{what}: grad {k}")


STATS = ["mean", "mode", "variance", "stddev"]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_vs_torch(name, shape):
    # gradients on the first shape only: each new shape compiles every backward again
    params, (dt, pt), (dl, pl) = _both(name, shape, grad=shape == SHAPES[0])
    if name == "Wishart":
        assert dl.event_shape == (K, K)
    assert tuple(dl.batch_shape) == tuple(dt.batch_shape)
    assert tuple(dl.event_shape) == tuple(dt.event_shape)
    assert type(dl.batch_shape) is torchlike.Size
    assert dl.has_rsample == dt.has_rsample
    assert dl.has_enumerate_support == dt.has_enumerate_support
    assert repr(dl) == repr(dt)
    assert repr(dl.support) == repr(dt.support)
    for s in STATS:
        _compare(name, s, lambda: getattr(dt, s), lambda: getattr(dl, s), pt, pl)
    _compare(name, "entropy", dt.entropy, dl.entropy, pt, pl)
    _compare(name, "perplexity", dt.perplexity, dl.perplexity, pt, pl)
    v = _value(name, params, FAMILIES[name][2](_rng(shape, 1), shape))
    _compare(name, "log_prob", lambda: dt.log_prob(torch.tensor(v)),
             lambda: dl.log_prob(torchlike.tensor(v)), pt, pl)
    _compare(name, "cdf", lambda: dt.cdf(torch.tensor(v)),
             lambda: dl.cdf(torchlike.tensor(v)), pt, pl)
    q = _u(_rng(shape, 2), S + tuple(dt.batch_shape), 0.05, 0.95)
    _compare(name, "icdf", lambda: dt.icdf(torch.tensor(q)),
             lambda: dl.icdf(torchlike.tensor(q)), pt, pl)
    if dt.has_enumerate_support:
        _compare(name, "enumerate_support", dt.enumerate_support, dl.enumerate_support, pt, pl)
        _compare(name, "enumerate_support(False)", lambda: dt.enumerate_support(False),
                 lambda: dl.enumerate_support(False), pt, pl)


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_sample_shapes_and_support(name):
    shape = SHAPES[0]
    # no grad: rsample gradients are tested below (a traced backward per family is costly)
    params, (dt, pt), (dl, pl) = _both(name, shape, grad=False)
    torchlike.manual_seed(0)
    for sample_shape in [(), (2,)]:            # (2,) + batch: the shapes log_prob used
        st = dt.sample(sample_shape)
        sl = dl.sample(sample_shape)
        assert tuple(sl.shape) == tuple(st.shape), name
        assert str(sl.dtype) == str(st.dtype), name
        assert not sl.requires_grad
        if name == "VonMises":
            assert bool(((sl >= -np.pi) & (sl < np.pi)).all())
        assert bool(dl.support.check(sl).all()), f"{name}: sample outside the support"
        if dt.has_rsample:
            rl = dl.rsample(sample_shape)
            assert tuple(rl.shape) == tuple(st.shape)
    if dt.has_rsample:
        assert tuple(dl.rsample().shape) == tuple(dt.rsample().shape)
    else:
        with pytest.raises(NotImplementedError):
            dl.rsample()


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_expand(name):
    shape = SHAPES[0]
    params, (dt, pt), (dl, pl) = _both(name, shape, grad=False)
    et, el = dt.expand(SHAPES[1]), dl.expand(SHAPES[1])
    assert type(el) is type(dl)
    assert tuple(el.batch_shape) == tuple(et.batch_shape)
    assert tuple(el.event_shape) == tuple(et.event_shape)
    assert el._validate_args == dl._validate_args
    v = _value(name, params, FAMILIES[name][2](_rng(shape, 1), shape))
    _compare(name, "expand.log_prob", lambda: et.log_prob(torch.tensor(v)),
             lambda: el.log_prob(torchlike.tensor(v)), pt, pl)
    _compare(name, "expand.mean", lambda: et.mean, lambda: el.mean, pt, pl)
    assert tuple(el.sample().shape) == tuple(et.sample().shape)


# ------------------------------------------------------------------ KL divergences

def _family_of(cls_name):
    """The FAMILIES entry building an instance of exactly this class."""
    return {"Distribution": None, "ExponentialFamily": None}.get(cls_name, cls_name)


def _registered_pairs():
    from torch.distributions.kl import _KL_REGISTRY
    return sorted((p.__name__, q.__name__) for p, q in _KL_REGISTRY)


KL_GRADS = {("Normal", "Normal"), ("MultivariateNormal", "MultivariateNormal"),
            ("Beta", "Beta"), ("Categorical", "Categorical"), ("Gamma", "Gamma"),
            ("LowRankMultivariateNormal", "MultivariateNormal"), ("Dirichlet", "Dirichlet")}


def test_kl_registry_matches_torch():
    from torchlike.distributions.kl import _KL_REGISTRY
    assert sorted((p.__name__, q.__name__) for p, q in _KL_REGISTRY) == _registered_pairs()


@pytest.mark.parametrize("pair", [p for p in _registered_pairs() if _family_of(p[0])],
                         ids="-".join)
def test_kl_divergence(pair):
    fp, fq = pair
    shape = SHAPES[0]
    grad = pair in KL_GRADS
    pp = FAMILIES[fp][1](_rng(shape, 3), shape)
    pq = FAMILIES[fq][1](_rng(shape, 4), shape)
    p_t, tp = _build(fp, torch, pp, grad)
    q_t, tq = _build(fq, torch, pq, grad)
    p_l, lp = _build(fp, torchlike, pp, grad)
    q_l, lq = _build(fq, torchlike, pq, grad)
    _compare(f"kl{pair}", "kl", lambda: torch.distributions.kl_divergence(p_t, q_t),
             lambda: torchlike.distributions.kl_divergence(p_l, q_l), tp + tq, lp + lq)


@pytest.mark.parametrize("name", ["Normal", "Gamma", "Bernoulli", "Dirichlet", "Poisson"])
def test_kl_and_entropy_by_bregman_divergence(name):
    """The ExponentialFamily fallbacks (autograd of the log normaliser) equal torch's."""
    from torch.distributions import kl as tkl
    from torchlike.distributions import kl as lkl
    shape = SHAPES[0]
    p_t, tp = _build(name, torch, FAMILIES[name][1](_rng(shape, 3), shape))
    q_t, tq = _build(name, torch, FAMILIES[name][1](_rng(shape, 4), shape))
    p_l, lp = _build(name, torchlike, FAMILIES[name][1](_rng(shape, 3), shape))
    q_l, lq = _build(name, torchlike, FAMILIES[name][1](_rng(shape, 4), shape))
    _compare(name, "expfamily kl", lambda: tkl._kl_expfamily_expfamily(p_t, q_t),
             lambda: lkl._kl_expfamily_expfamily(p_l, q_l), tp + tq, lp + lq, atol=1e-4)
    from torch.distributions.exp_family import ExponentialFamily as TEF
    from torchlike.distributions.exp_family import ExponentialFamily as LEF
    _compare(name, "bregman entropy", lambda: TEF.entropy(p_t), lambda: LEF.entropy(p_l),
             tp, lp, atol=1e-4)


def test_kl_dispatch_errors_and_register_kl():
    D = torchlike.distributions
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p "
                                                  "type Normal and q type Categorical"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(torchlike.tensor([0.5, 0.5])))
    with pytest.raises(NotImplementedError, match="cross KL-divergence between different "
                                                  "exponential families"):
        D.kl._kl_expfamily_expfamily(D.Normal(0.0, 1.0), D.Exponential(1.0))

    class MyNormal(D.Normal):
        pass

    # a subclass dispatches to its parent's registration until it registers its own
    assert float(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0))) == pytest.approx(0.5)

    @D.register_kl(MyNormal, D.Normal)
    def _kl_mine(p, q):
        return torchlike.tensor(42.0)

    try:
        assert float(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 1.0))) == 42.0
    finally:
        D.kl._KL_REGISTRY.pop((MyNormal, D.Normal))
        D.kl._KL_MEMOIZE.clear()


# ------------------------------------------------------------------ validate_args

def _raise_both(fn):
    """``fn(m)`` raises in torch and torchlike with the same class and message."""
    errs = []
    for m in (torch, torchlike):
        with pytest.raises(Exception) as e:
            fn(m)
        errs.append(e.value)
    assert type(errs[1]) is type(errs[0]), (errs[1], errs[0])
    assert str(errs[1]) == str(errs[0])


@pytest.mark.parametrize("case", [
    lambda m: m.distributions.Normal(m.tensor([0.0, 1.0]), m.tensor([-1.0, 2.0])),
    lambda m: m.distributions.Normal(0.0, -1.0),
    lambda m: m.distributions.Exponential(m.tensor([1.0, 2.0])).log_prob(m.tensor([-1.0, 1.0])),
    lambda m: m.distributions.Categorical(probs=m.tensor([[0.5, -0.5], [0.5, 0.5]])),
    lambda m: m.distributions.Categorical(m.tensor([0.5, 0.5])).log_prob(m.tensor([2])),
    lambda m: m.distributions.Bernoulli(probs=m.tensor([0.5, 1.5])),
    lambda m: m.distributions.Bernoulli(m.tensor([0.5])).log_prob(m.tensor([0.5])),
    lambda m: m.distributions.Bernoulli(),
    lambda m: m.distributions.Bernoulli(probs=0.5, logits=0.0),
    lambda m: m.distributions.Beta(m.tensor([1.0]), m.tensor([0.0])),
    lambda m: m.distributions.Gamma(m.tensor([1.0]), m.tensor([1.0])).log_prob(
        m.tensor([-1.0])),
    lambda m: m.distributions.Uniform(m.tensor([1.0]), m.tensor([0.0])),
    lambda m: m.distributions.Uniform(0.0, 1.0).log_prob(m.tensor(2.0)),
    lambda m: m.distributions.Geometric(probs=m.tensor([0.0, 0.5])),
    lambda m: m.distributions.Dirichlet(m.tensor(1.0)),
    lambda m: m.distributions.Dirichlet(m.tensor([1.0, 1.0])).log_prob(m.tensor([0.3, 0.3])),
    lambda m: m.distributions.Poisson(m.tensor([1.0])).log_prob(m.tensor([0.5])),
    lambda m: m.distributions.Binomial(m.tensor([2.5]), m.tensor([0.5])),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2)),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.tensor([[1.0, 2.0], [2.0, 1.0]])),
    lambda m: m.distributions.MultivariateNormal(m.zeros(2), m.eye(2)).log_prob(m.zeros(3)),
    lambda m: m.distributions.Normal(m.zeros(3), 1.0).log_prob(m.zeros(2)),
    lambda m: m.distributions.Normal(0.0, 1.0).log_prob(0.5),
    lambda m: m.distributions.Independent(m.distributions.Normal(0.0, 1.0), 1),
    lambda m: m.distributions.LowRankMultivariateNormal(m.zeros(2), m.zeros(3, 1), m.ones(2)),
    lambda m: m.distributions.Multinomial(m.tensor(3), m.tensor([0.5, 0.5])),
    lambda m: m.distributions.MixtureSameFamily(m.distributions.Normal(0.0, 1.0),
                                                m.distributions.Normal(0.0, 1.0)),
    lambda m: m.distributions.TransformedDistribution(m.distributions.Normal(0.0, 1.0), 3),
], ids=lambda c: str(c.__code__.co_firstlineno))
def test_validate_args_errors(case):
    _raise_both(case)


def test_validate_args_switches():
    D = torchlike.distributions
    assert D.Distribution._validate_args is True
    D.Normal(0.0, -1.0, validate_args=False)             # no check for this instance
    d = D.Normal(0.0, 1.0, validate_args=False)
    assert bool(torchlike.isfinite(d.log_prob(torchlike.tensor(0.5))))
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(0.0, -1.0)
        D.Exponential(1.0).log_prob(torchlike.tensor(-1.0))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args("yes")
    # expand keeps the instance's setting and skips re-validation
    e = D.Normal(torchlike.tensor([0.0]), 1.0, validate_args=False).expand((3,))
    assert e._validate_args is False


# ------------------------------------------------------------------ rsample gradients

def _grads(m, out, leaves):
    cot = m.tensor(np.random.default_rng(2).standard_normal(tuple(out.shape)).astype(np.float32))
    return m.autograd.grad(out, leaves, cot)


def _same_noise_case(monkeypatch, name, shape, sample_shape, noise_fn_names):
    """rsample in both libraries with every ``noise_fn`` replaced by one fixed draw."""
    params = FAMILIES[name][1](_rng(shape), shape)
    results = []
    for m in (torch, torchlike):
        rng = np.random.default_rng(7)

        def fixed(shape, *a, _m=m, **k):
            return _m.tensor(rng.uniform(0.05, 0.95, tuple(shape)).astype(np.float32))

        def fixed_normal(shape, dtype=None, device=None, _m=m):
            return _m.tensor(rng.standard_normal(tuple(shape)).astype(np.float32))

        def fixed_gamma(alpha, _m=m):
            return _m.tensor(rng.uniform(0.5, 2.0, tuple(alpha.shape)).astype(np.float32))

        for mod_name, fn in noise_fn_names:
            mod = __import__(f"{m.__name__}.distributions.{mod_name}",
                             fromlist=["_"]) if mod_name else m
            repl = {"_standard_normal": fixed_normal, "rand": fixed,
                    "_standard_gamma": fixed_gamma}[fn]
            monkeypatch.setattr(mod, fn, repl)
        d, leaves = _build(name, m, params)
        x = d.rsample(sample_shape)
        results.append((x, _grads(m, x, leaves)))
        monkeypatch.undo()
    (xt, gt), (xl, gl) = results
    assert_close(xl, xt, 1e-5, 1e-5, f"{name} rsample")
    for a, b in zip(gl, gt):
        assert_close(a, b, 1e-4, 1e-4, f"{name} rsample grad")


@pytest.mark.parametrize("name,patches", [
    ("Normal", [("normal", "_standard_normal")]),
    ("LogNormal", [("normal", "_standard_normal")]),
    ("HalfNormal", [("normal", "_standard_normal")]),
    ("Independent", [("normal", "_standard_normal")]),
    ("TransformedDistribution", [("normal", "_standard_normal")]),
    ("MultivariateNormal", [("multivariate_normal", "_standard_normal")]),
    ("MultivariateNormalPrec", [("multivariate_normal", "_standard_normal")]),
    ("LowRankMultivariateNormal", [("lowrank_multivariate_normal", "_standard_normal")]),
    ("StudentT", [("studentT", "_standard_normal"), ("gamma", "_standard_gamma")]),
    ("Uniform", [(None, "rand")]),
    ("RelaxedBernoulli", [(None, "rand")]),
    ("RelaxedOneHotCategorical", [(None, "rand")]),
    ("Kumaraswamy", [(None, "rand")]),
    ("ContinuousBernoulli", [(None, "rand")]),
    ("GeneralizedPareto", [(None, "rand")]),
], ids=lambda x: x if isinstance(x, str) else "")
def test_rsample_gradient_given_the_same_noise(monkeypatch, name, patches):
    _same_noise_case(monkeypatch, name, SHAPES[0], (2,), patches)


@pytest.mark.parametrize("name,noise", [
    # x = f(params, eps): recover eps from our draw, push it through torch's formula
    ("Exponential", lambda p, x: (x * p[0],
                                  lambda m, t, e: e / t[0])),
    ("Laplace", lambda p, x: (x, None)),
    ("Cauchy", lambda p, x: ((x - p[0]) / p[1], lambda m, t, e: t[0] + e * t[1])),
])
def test_rsample_gradient_is_the_reparameterisation(name, noise):
    shape = SHAPES[0]
    params = FAMILIES[name][1](_rng(shape), shape)
    d, leaves = _build(name, torchlike, params)
    x = d.rsample((2,))
    gl = _grads(torchlike, x, leaves)
    xn = _np(x)
    if name == "Laplace":      # x = loc - scale * sign(u) * log1p(-|u|)
        s = (xn - params[0]) / params[1]

        def f(m, t, e):
            return t[0] + t[1] * e
        eps = s
    else:
        eps, f = noise(params, xn)
    tt = [torch.tensor(p, requires_grad=True) for p in params]
    gt = _grads(torch, f(torch, tt, torch.tensor(eps.astype(np.float32))), tt)
    for a, b in zip(gl, gt):
        assert_close(a, b, 1e-4, 1e-4, f"{name} rsample grad")


@pytest.mark.parametrize("name", ["Gamma", "Chi2"])
def test_gamma_rsample_implicit_gradient(name):
    """d x / d concentration of a Gamma draw is torch's _standard_gamma_grad at that draw."""
    shape = SHAPES[0]
    params = FAMILIES[name][1](_rng(shape), shape)
    d, leaves = _build(name, torchlike, params)
    x = d.rsample()
    g = torchlike.autograd.grad(x.sum(), leaves)
    rate = _np(d.rate)
    conc = torch.tensor(_np(d.concentration))
    dx_dc = torch._standard_gamma_grad(conc, torch.tensor(_np(x) * rate)).numpy() / rate
    if name == "Gamma":
        np.testing.assert_allclose(_np(g[0]), dx_dc, rtol=1e-3, atol=1e-5)
        np.testing.assert_allclose(_np(g[1]), -_np(x) / rate, rtol=1e-4, atol=1e-6)
    else:                      # Chi2(df) = Gamma(df / 2, 1 / 2)
        np.testing.assert_allclose(_np(g[0]), dx_dc * 0.5, rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("name", ["Dirichlet", "Beta", "FisherSnedecor", "InverseGamma"])
def test_gamma_based_rsample_is_differentiable(name):
    """Gradients flow through Gamma-based draws (pathwise; see DIFFERENCES.md for Dirichlet)."""
    shape = SHAPES[0]
    d, leaves = _build(name, torchlike, FAMILIES[name][1](_rng(shape), shape))
    g = torchlike.autograd.grad(d.rsample((2,)).sum(), leaves)
    assert all(bool(torchlike.isfinite(x).all()) for x in g)
    assert any(bool((x != 0).any()) for x in g)


# ------------------------------------------------------------------ transforms and constraints

@pytest.mark.parametrize("make,x", [
    (lambda T, m: T.ExpTransform(), lambda r: r.normal(size=(2, 3))),
    (lambda T, m: T.SigmoidTransform(), lambda r: r.normal(size=(2, 3))),
    (lambda T, m: T.TanhTransform(), lambda r: r.normal(size=(2, 3))),
    (lambda T, m: T.SoftplusTransform(), lambda r: r.normal(size=(2, 3))),
    (lambda T, m: T.AffineTransform(m.tensor([1.0, -2.0, 0.5]), m.tensor([2.0, -1.0, 3.0])),
     lambda r: r.normal(size=(2, 3))),
    (lambda T, m: T.AffineTransform(1.0, 2.0, event_dim=1), lambda r: r.normal(size=(2, 3))),
    (lambda T, m: T.PowerTransform(m.tensor(2.0)), lambda r: r.uniform(0.5, 2, (2, 3))),
    (lambda T, m: T.StickBreakingTransform(), lambda r: r.normal(size=(2, 3))),
    (lambda T, m: T.SoftmaxTransform(), lambda r: r.normal(size=(2, 3))),
    (lambda T, m: T.LowerCholeskyTransform(), lambda r: r.normal(size=(2, 3, 3))),
    (lambda T, m: T.PositiveDefiniteTransform(), lambda r: r.normal(size=(2, 3, 3))),
    (lambda T, m: T.CorrCholeskyTransform(), lambda r: r.normal(size=(2, 3))),
    (lambda T, m: T.ReshapeTransform((2, 3), (3, 2)), lambda r: r.normal(size=(2, 3))),
    (lambda T, m: T.IndependentTransform(T.ExpTransform(), 1), lambda r: r.normal(size=(2, 3))),
    (lambda T, m: T.ComposeTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)]),
     lambda r: r.normal(size=(2, 3))),
    (lambda T, m: T.CatTransform([T.ExpTransform(), T.identity_transform], 1, [1, 2]),
     lambda r: r.normal(size=(2, 3))),
    (lambda T, m: T.StackTransform([T.ExpTransform(), T.SigmoidTransform(),
                                    T.identity_transform], 1), lambda r: r.normal(size=(2, 3))),
    (lambda T, m: T.CumulativeDistributionTransform(m.distributions.Normal(0.0, 1.0)),
     lambda r: r.normal(size=(2, 3))),
    (lambda T, m: T.ExpTransform().inv, lambda r: r.uniform(0.5, 2, (2, 3))),
    (lambda T, m: T.AbsTransform(), lambda r: r.normal(size=(2, 3))),
], ids=lambda x: str(x.__code__.co_firstlineno) if callable(x) else "")
def test_transform_vs_torch(make, x):
    x = _f32(x(np.random.default_rng(5)))
    tt, tl = make(torch.distributions.transforms, torch), make(
        torchlike.distributions.transforms, torchlike)
    assert repr(tl) == repr(tt)
    assert tl.bijective == tt.bijective
    assert repr(tl.domain) == repr(tt.domain) and repr(tl.codomain) == repr(tt.codomain)
    assert (tl == make(torchlike.distributions.transforms, torchlike)) == (
        tt == make(torch.distributions.transforms, torch))
    xt, xl = torch.tensor(x, requires_grad=True), torchlike.tensor(x, requires_grad=True)
    yt, yl = tt(xt), tl(xl)
    assert_close(yl, yt, 1e-5, 1e-5, "forward")
    assert tuple(tl.forward_shape(xl.shape)) == tuple(tt.forward_shape(xt.shape))
    assert tuple(tl.inverse_shape(yl.shape)) == tuple(tt.inverse_shape(yt.shape))
    _compare(repr(tt), "inv", lambda: tt.inv(yt.detach()), lambda: tl.inv(yl.detach()), [], [],
             atol=1e-4)
    _compare(repr(tt), "log_abs_det_jacobian", lambda: tt.log_abs_det_jacobian(xt, yt),
             lambda: tl.log_abs_det_jacobian(xl, yl), [xt], [xl], atol=1e-4)
    # a cached transform returns the exact input for the inverse of its last output
    try:
        c = tl.with_cache(1)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            tt.with_cache(1)
        return
    y = c(xl)
    assert c.inv(y) is xl


@pytest.mark.parametrize("cname", [
    "real", "positive", "nonnegative", "unit_interval", "simplex", "real_vector",
    "lower_cholesky", "positive_definite", "corr_cholesky", "lower_triangular",
    "greater_than(1.5)", "less_than(-1.0)", "interval(-1.0, 3.0)", "half_open_interval(0.0, 2.0)",
    "greater_than_eq(0.5)", "independent(positive, 1)", "boolean", "nonnegative_integer",
    "integer_interval(0, 3)", "one_hot", "symmetric", "positive_semidefinite", "square",
    "multinomial(4)", "cat([positive, real], 1, [1, 2])", "stack([positive, real, real], 1)"])
def test_constraints_and_bijections(cname):
    tc = eval("torch.distributions.constraints." + cname.replace(
        "(positive", "(torch.distributions.constraints.positive").replace(
        "[positive, real", "[torch.distributions.constraints.positive, "
        "torch.distributions.constraints.real").replace(", real]", ", torch.distributions."
                                                        "constraints.real]"))
    lc = eval("torchlike.distributions.constraints." + cname.replace(
        "(positive", "(torchlike.distributions.constraints.positive").replace(
        "[positive, real", "[torchlike.distributions.constraints.positive, "
        "torchlike.distributions.constraints.real").replace(", real]", ", torchlike."
                                                            "distributions.constraints.real]"))
    assert repr(lc) == repr(tc)
    assert lc.is_discrete == tc.is_discrete and lc.event_dim == tc.event_dim
    rng = np.random.default_rng(3)
    for x in [rng.normal(size=(2, 3, 3)), np.abs(rng.normal(size=(2, 3, 3))),
              rng.integers(0, 2, (2, 3, 3)), _pd(rng, (2,)), _corr_cholesky(rng, (2,)),
              _simplex(rng, (2, 3))]:
        x = _f32(x)
        try:
            want = tc.check(torch.tensor(x))
        except Exception as e:  # noqa: BLE001
            with pytest.raises(type(e)):
                lc.check(torchlike.tensor(x))
            continue
        assert_close(lc.check(torchlike.tensor(x)), want, what=cname)
    for reg in ("biject_to", "transform_to"):
        try:
            tt = getattr(torch.distributions, reg)(tc)
        except NotImplementedError:
            with pytest.raises(NotImplementedError):
                getattr(torchlike.distributions, reg)(lc)
            continue
        tl = getattr(torchlike.distributions, reg)(lc)
        assert repr(tl) == repr(tt), reg
        u = _f32(rng.normal(size=(2, 3, 3) if lc.event_dim == 2 or "Lower" in repr(tl)
                            else (2, 3)))
        if "CorrCholesky" in repr(tt):
            u = u[..., 0]
        _compare(cname, reg, lambda: tt(torch.tensor(u)), lambda: tl(torchlike.tensor(u)),
                 [], [], atol=1e-4)


def test_utils_and_misc_api():
    D, T = torchlike.distributions, torch.distributions
    x = np.arange(6, dtype=np.float32)
    v = D.utils.vec_to_tril_matrix(torchlike.tensor(x))
    assert_close(v, T.utils.vec_to_tril_matrix(torch.tensor(x)))
    assert_close(D.utils.tril_matrix_to_vec(v), T.utils.tril_matrix_to_vec(
        T.utils.vec_to_tril_matrix(torch.tensor(x))))
    assert_close(D.utils.probs_to_logits(torchlike.tensor([0.0, 0.25, 1.0]), is_binary=True),
                 T.utils.probs_to_logits(torch.tensor([0.0, 0.25, 1.0]), is_binary=True))
    assert_close(D.utils.clamp_probs(torchlike.tensor([0.0, 1.0], dtype=torchlike.float64)),
                 T.utils.clamp_probs(torch.tensor([0.0, 1.0], dtype=torch.float64)))
    a, b = D.utils.broadcast_all(torchlike.tensor([1.0, 2.0], dtype=torchlike.float64), 3)
    assert b.dtype == torchlike.float64 and tuple(b.shape) == (2,)
    with pytest.raises(ValueError, match="Input arguments must all be instances of Number"):
        D.utils.broadcast_all("a")
    assert D.utils.euler_constant == T.utils.euler_constant
    with pytest.warns(FutureWarning):
        assert tuple(D.Normal(0.0, 1.0).sample_n(3).shape) == (3,)
    d = D.Normal(torchlike.zeros(2), 1.0)
    assert_close(d.perplexity(), T.Normal(torch.zeros(2), 1.0).perplexity())
    assert set(D.__all__) == set(T.__all__)
    assert set(D.constraints.__all__) == set(T.constraints.__all__)
    assert set(D.transforms.__all__) == set(T.transforms.__all__)


def _shapes_as_given(m):
    D = m.distributions
    out = []
    for kw in ({"batch_shape": (3,)}, {"event_shape": [2]}, {}, {"batch_shape": m.Size([4])}):
        d = D.Distribution(validate_args=False, **kw)
        out.append((repr(d.batch_shape), repr(d.event_shape)))
    return out


def test_distribution_keeps_its_shapes_as_given():
    """``Distribution(batch_shape=(3,))`` keeps the tuple, as torch's (pyro's
    ZeroInflatedPoisson shows ``()`` where a Size would print ``torch.Size([])``)."""
    assert _shapes_as_given(torchlike) == _shapes_as_given(torch)
