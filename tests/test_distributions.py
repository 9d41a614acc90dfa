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

SHAPES = [(4,), (2, 3)]
K = 3                                   # categories / event size


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
}


def _value(name, params, v):
    if name == "Uniform":              # inside [low, high)
        return _f32(params[0] + v * params[1])
    return v


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
    params, (dt, pt), (dl, pl) = _both(name, shape)
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
    shape = SHAPES[1]
    params, (dt, pt), (dl, pl) = _both(name, shape)
    torchlike.manual_seed(0)
    for sample_shape in [(), (5,)]:
        st = dt.sample(sample_shape)
        sl = dl.sample(sample_shape)
        assert tuple(sl.shape) == tuple(st.shape), name
        assert str(sl.dtype) == str(st.dtype), name
        assert not sl.requires_grad
        assert bool(dl.support.check(sl).all()), f"{name}: sample outside the support"
        if dt.has_rsample:
            rl = dl.rsample(sample_shape)
            assert tuple(rl.shape) == tuple(st.shape)
            assert rl.requires_grad
    if dt.has_rsample:
        assert tuple(dl.rsample().shape) == tuple(dt.rsample().shape)
    else:
        with pytest.raises(NotImplementedError):
            dl.rsample()


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_expand(name):
    shape = SHAPES[0]
    params, (dt, pt), (dl, pl) = _both(name, shape, grad=False)
    et, el = dt.expand((2,) + shape), dl.expand((2,) + shape)
    assert type(el) is type(dl)
    assert tuple(el.batch_shape) == tuple(et.batch_shape)
    assert tuple(el.event_shape) == tuple(et.event_shape)
    assert el._validate_args == dl._validate_args
    v = _value(name, params, FAMILIES[name][2](_rng(shape, 1), shape))
    _compare(name, "expand.log_prob", lambda: et.log_prob(torch.tensor(v)),
             lambda: el.log_prob(torchlike.tensor(v)), pt, pl)
    _compare(name, "expand.mean", lambda: et.mean, lambda: el.mean, pt, pl)
    assert tuple(el.sample((3,)).shape) == tuple(et.sample((3,)).shape)
