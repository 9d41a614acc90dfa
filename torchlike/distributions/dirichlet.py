"""The Dirichlet distribution over the simplex."""
from __future__ import annotations

import torchlike as torch
from . import constraints
from ._ops import _standard_gamma
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """Dirichlet(concentration); the last dimension is the event.

    ``rsample`` normalises Gamma(concentration) draws, differentiating through Gamma's implicit
    reparameterisation: an unbiased pathwise gradient, though per draw not torch's
    ``_dirichlet_grad`` (see DIFFERENCES.md).
    """

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Dirichlet, batch_shape, _instance, ("concentration",))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        g = _standard_gamma(self.concentration.expand(shape))
        tiny = torch.finfo(g.dtype).tiny
        g = g + (g.detach().clamp(min=tiny) - g.detach())
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (torch.xlogy(c - 1.0, value).sum(-1) + torch.lgamma(c.sum(-1))
                - torch.lgamma(c).sum(-1))

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, True)
        # every concentration below 1: the mode is the vertex of the largest one
        mask = (self.concentration < 1).all(dim=-1, keepdim=True)
        vertex = torch.nn.functional.one_hot(mode.argmax(dim=-1), cm1.shape[-1]).to(mode)
        return torch.where(mask, vertex, mode)

    @property
    def variance(self):
        c = self.concentration
        c0 = c.sum(-1, True)
        return c * (c0 - c) / (c0.pow(2) * (c0 + 1))

    def entropy(self):
        c = self.concentration
        k = c.size(-1)
        a0 = c.sum(-1)
        return (torch.lgamma(c).sum(-1) - torch.lgamma(a0) - (k - a0) * torch.digamma(a0)
                - ((c - 1.0) * torch.digamma(c)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - torch.lgamma(x.sum(-1))
