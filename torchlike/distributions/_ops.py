"""Private ops the distributions need that torchlike does not export (yet): gamma and
poisson sampling, and the regularized incomplete gamma/beta functions (Binomial draws through
``torch.binomial``, as torch's).

Each jax op is declared through the registry (``dist_`` names), so it is jitted, cached and
taped like every other op. Samplers take their keys from torchlike's generator (its stream is
not torch's). jax's own gamma/binomial/poisson samplers take seconds to compile for every new
shape, so gamma draws here use a fixed-round Marsaglia-Tsang sampler on flat arrays padded to
a power of two (one compile per size bucket), and poisson draws are made on the host by numpy
seeded from the same generator.
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special as jss
import numpy as np

from .._registry import apply, defop
from .. import _random

__all__: list = []


def _key_data(generator=None):
    return _random.next_key_data(generator)


def _bucket(n):
    """Samplers run on flat arrays padded to a power of two (at least 16), so one compiled
    sampler serves every shape up to that size."""
    return max(16, 1 << max(n - 1, 0).bit_length())


def _flat_padded(a, fill):
    flat = np.asarray(a).reshape(-1)
    n = flat.size
    return jnp.asarray(np.concatenate([flat, np.full(_bucket(n) - n, fill, flat.dtype)])), n


_GAMMA_ROUNDS = 8


@defop("dist_gamma_draw", differentiable=False)
def _gamma_draw_op(alpha, kd):
    """Marsaglia & Tsang (2000): for alpha >= 1 accept x = d v with v = (1 + c z)^3 when
    log u < z^2 / 2 + d - d v + d log v; alpha < 1 draws at alpha + 1 and scales by
    u^(1 / alpha). ``_GAMMA_ROUNDS`` candidates per element; ``ok`` marks an acceptance."""
    dt = alpha.dtype
    key = jax.random.wrap_key_data(kd)
    k1, k2, k3 = jax.random.split(key, 3)
    boost = alpha < 1
    a = jnp.where(boost, alpha + 1, alpha)
    d = a - 1.0 / 3.0
    c = 1.0 / jnp.sqrt(9.0 * d)
    z = jax.random.normal(k1, (_GAMMA_ROUNDS,) + alpha.shape, dt)
    u = jax.random.uniform(k2, (_GAMMA_ROUNDS,) + alpha.shape, dt)
    v = (1 + c * z) ** 3
    safe_v = jnp.where(v > 0, v, 1)
    accept = (v > 0) & (jnp.log(u) < 0.5 * z * z + d - d * safe_v + d * jnp.log(safe_v))
    first = jnp.argmax(accept, axis=0)
    x = d * jnp.take_along_axis(safe_v, first[None], axis=0)[0]
    ok = jnp.any(accept, axis=0)
    ub = jax.random.uniform(k3, alpha.shape, dt, minval=jnp.finfo(dt).tiny)
    x = jnp.where(boost, x * ub ** (1.0 / alpha), x)
    return x, ok


@jax.custom_vjp
def _gamma_reparam(alpha, x):
    return x


def _gamma_reparam_fwd(alpha, x):
    return x, (alpha, x)


def _gamma_reparam_bwd(res, g):
    # implicit reparameterisation: d x / d alpha = -(d CDF(x; alpha) / d alpha) / pdf(x)
    alpha, x = res
    return g * jax.lax.random_gamma_grad(alpha, x), jnp.zeros_like(x)


_gamma_reparam.defvjp(_gamma_reparam_fwd, _gamma_reparam_bwd)


@defop("dist_standard_gamma", grad_name="StandardGammaBackward0")
def _standard_gamma_op(alpha, x):
    return _gamma_reparam(alpha, x)


def _standard_gamma(alpha, generator=None):
    """Gamma(alpha, 1) samples shaped like ``alpha``, differentiable in ``alpha`` (torch's
    ``_standard_gamma`` with its ``_standard_gamma_grad``)."""
    from .._tensor import Tensor
    a, n = _flat_padded(alpha.detach()._data, 1)
    todo = np.ones(a.shape, bool)
    x = np.zeros(a.shape, np.asarray(a).dtype)
    while todo.any():            # almost never more than once (P(reject) < 0.05 per round)
        xs, ok = apply(_gamma_draw_op, a, _key_data(generator))
        xs, ok = np.asarray(xs._data), np.asarray(ok._data)
        take = todo & ok
        x[take] = xs[take]
        todo &= ~ok
    x = Tensor._make(jnp.asarray(x[:n]).reshape(tuple(alpha.shape)))
    return apply(_standard_gamma_op, alpha, x)


def _host_rng(generator=None):
    """A numpy generator seeded from torchlike's generator (one key per call)."""
    return np.random.default_rng(np.asarray(_key_data(generator)).astype(np.uint32))


def _poisson(rate, generator=None):
    """Poisson(rate) samples shaped like ``rate``, drawn on the host."""
    from .._tensor import Tensor
    r = np.asarray(rate.detach()._data)
    return Tensor._make(jnp.asarray(_host_rng(generator).poisson(r).astype(r.dtype)))


@defop("dist_gammainc", promote="float", grad_name="IgammaBackward0")
def _gammainc_op(a, x):
    return jss.gammainc(jax.lax.stop_gradient(a), x)


_IGAMMA_NO_GRAD = "the derivative for 'igamma: input' is not implemented."


@jax.custom_vjp
def _gammainc_no_a_grad(a, x):
    return jss.gammainc(a, x)


def _gammainc_fwd(a, x):
    return jss.gammainc(a, x), None


def _gammainc_bwd(res, g):
    # torch has no derivative in the shape argument and says so when backward reaches it
    raise NotImplementedError(_IGAMMA_NO_GRAD)


_gammainc_no_a_grad.defvjp(_gammainc_fwd, _gammainc_bwd)


@defop("dist_gammainc_a", promote="float", grad_name="IgammaBackward0")
def _gammainc_a_op(a, x):
    return _gammainc_no_a_grad(a, x)


def _gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x) (torch.special.gammainc);
    like torch's, it has a gradient in ``x`` only (backward into ``a`` raises)."""
    from .._tensor import Tensor
    if isinstance(a, Tensor) and a.requires_grad:
        return apply(_gammainc_a_op, a, x)
    return apply(_gammainc_op, a, x)


@defop("dist_betainc", promote="float", grad_name="BetaincBackward0")
def _betainc_op(a, b, x):
    return jss.betainc(a, b, x)


def _betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b)."""
    return apply(_betainc_op, a, b, x)
