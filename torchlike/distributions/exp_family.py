"""ExponentialFamily: distributions with density exp(<t(x), theta> - F(theta) + k(x))."""
from __future__ import annotations

import torchlike as torch
from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Base of exponential families; ``entropy`` (and the fallback KL between two members of
    the same family) come from the log normalizer by autograd (Bregman divergence)."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg = self._log_normalizer(*nparams)
        grads = torch.autograd.grad(lg.sum(), nparams, create_graph=True)
        result = result + lg
        for p, g in zip(nparams, grads):
            result = result - (p * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
