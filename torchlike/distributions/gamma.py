"""The Gamma distribution (shape ``concentration``, inverse scale ``rate``)."""
from __future__ import annotations

from numbers import Number

import torchlike as torch
from . import constraints
from ._ops import _gammainc, _standard_gamma
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """Gamma(concentration, rate). ``rsample`` differentiates through the draw by implicit
    reparameterisation (torch's ``_standard_gamma_grad`` rule)."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, Number) and isinstance(rate, Number)
        super().__init__(torch.Size() if scalar else self.concentration.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        # keep draws off zero, without touching the gradient: torch clamps the detached
        # alias in place (the result stays the division, DivBackward0)
        value.detach().clamp_(min=torch.finfo(value.dtype).tiny)
        return value

    def log_prob(self, value):
        value = torch.as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (torch.xlogy(c, self.rate) + torch.xlogy(c - 1, value) - self.rate * value
                - torch.lgamma(c))

    def entropy(self):
        c = self.concentration
        return c - torch.log(self.rate) + torch.lgamma(c) + (1.0 - c) * torch.digamma(c)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return torch.lgamma(x + 1) + (x + 1) * torch.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return _gammainc(self.concentration, self.rate * value)
