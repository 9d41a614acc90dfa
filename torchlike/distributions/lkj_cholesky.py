"""LKJCholesky: the LKJ distribution over Cholesky factors of correlation matrices."""
from __future__ import annotations

import math

import torchlike as torch
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import _mvlgamma, broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJCholesky(dim, concentration=1.0); sampled by the onion method (Lewandowski et al.)."""

    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = torch.arange(self.dim - 1, dtype=self.concentration.dtype)
        offset = torch.cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal_conc.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), torch.Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._expand_params(LKJCholesky, batch_shape, _instance, ("concentration",),
                                  copy=("dim",))
        new._beta = self._beta.expand(torch.Size(batch_shape) + (self.dim,))
        return new

    def sample(self, sample_shape=torch.Size()):
        with torch.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u = torch.randn(self._extended_shape(sample_shape), dtype=y.dtype).tril(-1)
            u = u / u.norm(dim=-1, keepdim=True)
            first = torch.arange(self.dim).view(-1, 1) == 0   # row 0 has no off-diagonal
            u = torch.where(first, torch.zeros_like(u), u)
            w = torch.sqrt(y) * u
            eps = torch.finfo(w.dtype).tiny
            diag = torch.clamp(1 - torch.sum(w ** 2, dim=-1), min=eps).sqrt()
            return w + torch.diag_embed(diag)

    def log_prob(self, value):
        # from Lewandowski et al. (2009), equation 16, on the Cholesky factor
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = torch.arange(2, self.dim + 1)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = torch.sum(order * diag.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize = (0.5 * dm1 * math.log(math.pi) + _mvlgamma(alpha - 0.5, dm1)
                     - torch.lgamma(alpha) * dm1)
        return unnormalized - normalize
