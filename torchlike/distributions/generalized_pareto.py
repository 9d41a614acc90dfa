"""The GeneralizedPareto distribution."""
from __future__ import annotations

import math
from numbers import Number, Real

import torchlike as torch
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """GeneralizedPareto(loc, scale, concentration); concentration 0 is the exponential
    limit (handled without dividing by zero)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        scalar = all(isinstance(v, Number) for v in (loc, scale, concentration))
        super().__init__(torch.Size() if scalar else self.loc.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, batch_shape, _instance,
                                   ("loc", "scale", "concentration"))

    def _safe_conc(self, zero=None):
        # log_prob and the survival function compare with torch.tensor(0.0), as torch's: a
        # float64 distribution raises there (isclose's "Double did not match Float"), as torch
        eq_zero = torch.isclose(self.concentration,
                                torch.zeros_like(self.concentration) if zero is None else zero)
        return eq_zero, torch.where(eq_zero, torch.ones_like(self.concentration),
                                    self.concentration)

    def rsample(self, sample_shape=torch.Size()):
        u = torch.rand(self._extended_shape(sample_shape), dtype=self.loc.dtype)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, c = self._safe_conc(torch.tensor(0.0))
        y = 1 / c + torch.ones_like(z)
        nonzero = torch.where(y == 0, y, y * torch.log1p(c * z))
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -log_scale - torch.where(eq_zero, z, nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, c = self._safe_conc(torch.tensor(0.0))
        return torch.where(eq_zero, -z, -torch.log1p(c * z) / c)

    def log_cdf(self, value):
        return torch.log1p(-torch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return torch.exp(self.log_cdf(value))

    def icdf(self, value):
        eq_zero, c = self._safe_conc()
        logu = torch.log1p(-value)
        return torch.where(eq_zero, self.loc - self.scale * logu,
                           self.loc + self.scale / c * torch.expm1(-c * logu))

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        c = torch.where(valid, self.concentration, 0.5)
        return torch.where(valid, self.loc + self.scale / (1 - c), float("nan"))

    @property
    def variance(self):
        valid = self.concentration < 0.5
        c = torch.where(valid, self.concentration, 0.25)
        return torch.where(valid, self.scale ** 2 / ((1 - c) ** 2 * (1 - 2 * c)), float("nan"))

    def entropy(self):
        return torch.broadcast_to(torch.log(self.scale) + self.concentration + 1,
                                  self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = torch.where(self.concentration < 0, lower - self.scale / self.concentration,
                            float("inf"))
        return constraints.interval(lower, upper)
