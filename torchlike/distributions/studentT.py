"""Student's t distribution."""
from __future__ import annotations

import math

import torchlike as torch
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """StudentT(df, loc=0, scale=1); ``rsample`` is ``loc + scale * X / sqrt(Z / df)`` with
    X ~ N(0, 1) and Z ~ Chi2(df) (reparameterised through Gamma's implicit gradient)."""

    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(StudentT, batch_shape, _instance, ("df", "loc", "scale"))
        new._chi2 = self._chi2.expand(torch.Size(batch_shape))
        return new

    @property
    def mean(self):
        # (torch's own steps: a clone written through masks, IndexPutBackward0)
        if self.loc.dim() == 0:     # (torchlike's 0-dim masked write of nan is not reliable)
            return torch.where(self.df <= 1, torch.tensor(float("nan"), dtype=self.loc.dtype),
                               self.loc)
        m = self.loc.clone(memory_format=torch.contiguous_format)
        m[self.df <= 1] = float("nan")
        return m

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        if df.dim() == 0:
            big = self.scale.pow(2) * df / torch.where(df > 2, df - 2, torch.ones_like(df))
            out = torch.where(df > 2, big, torch.full_like(df, float("inf")))
            return torch.where(df <= 1, torch.full_like(df, float("nan")), out)
        m = self.df.clone(memory_format=torch.contiguous_format)
        m[self.df > 2] = (self.scale[self.df > 2].pow(2) * self.df[self.df > 2]
                          / (self.df[self.df > 2] - 2))
        m[(self.df <= 2) & (self.df > 1)] = float("inf")
        m[self.df <= 1] = float("nan")
        return m

    def rsample(self, sample_shape=torch.Size()):
        shape = self._extended_shape(sample_shape)
        X = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        Z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (X * torch.rsqrt(Z / self.df))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        Z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + torch.lgamma(0.5 * self.df) - torch.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * torch.log1p(y ** 2.0 / self.df) - Z

    def entropy(self):
        df = self.df
        lbeta = torch.lgamma(0.5 * df) + math.lgamma(0.5) - torch.lgamma(0.5 * (df + 1))
        return (self.scale.log()
                + 0.5 * (df + 1) * (torch.digamma(0.5 * (df + 1)) - torch.digamma(0.5 * df))
                + 0.5 * df.log() + lbeta)
