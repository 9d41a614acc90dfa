"""Private jax ops the distributions need that torchlike does not export (yet): gamma and
binomial sampling, and the regularized incomplete gamma/beta functions.

Each is declared through the registry (``dist_`` names), so it is jitted, cached and taped like
every other op. Samplers take key data from torchlike's generator (its stream is not torch's).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special as jss

from .._ops._registry import apply, defop
from .. import _random

__all__: list = []


def _key_data(generator=None):
    return jax.random.key_data(_random.next_key(generator))


@defop("dist_standard_gamma", grad_name="StandardGammaBackward0")
def _standard_gamma_op(alpha, kd):
    # jax.random.gamma differentiates with respect to alpha by implicit reparameterisation
    # (d x / d alpha = -(d CDF / d alpha) / pdf at the drawn x), the rule torch uses.
    return jax.random.gamma(jax.random.wrap_key_data(kd), alpha, alpha.shape, alpha.dtype)


def _standard_gamma(alpha, generator=None):
    """Gamma(alpha, 1) samples shaped like ``alpha``, differentiable in ``alpha``."""
    return apply(_standard_gamma_op, alpha, _key_data(generator))


@defop("dist_binomial", differentiable=False)
def _binomial_op(count, probs, kd):
    out = jax.random.binomial(jax.random.wrap_key_data(kd), count, probs, probs.shape,
                              probs.dtype)
    return jnp.where(probs >= 1, count, jnp.where(probs <= 0, 0, out)).astype(probs.dtype)


def _binomial(count, probs, generator=None):
    """Binomial(count, probs) samples shaped like the broadcast inputs."""
    return apply(_binomial_op, count, probs, _key_data(generator))


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
