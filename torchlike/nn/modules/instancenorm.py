"""Instance normalisation (torch.nn.modules.instancenorm)."""
from __future__ import annotations

import warnings

from .. import functional as F
from .batchnorm import _NormBase
from .lazy import _lazy_norm

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    _nd = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device=device,
                         dtype=dtype, bias=bias)

    def _check_input_dim(self, input):
        if input.dim() not in (self._nd + 1, self._nd + 2):
            raise ValueError(f"expected {self._nd + 1}D or {self._nd + 2}D input (got "
                             f"{input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - (self._nd + 1)
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          "can silence this warning by not passing in num_features, which is "
                          "not used because affine=False", stacklevel=2)
        unbatched = input.dim() == self._nd + 1
        if unbatched:
            input = input.unsqueeze(0)
        out = F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                              self.bias, self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    _nd = 1


class InstanceNorm2d(_InstanceNorm):
    _nd = 2


class InstanceNorm3d(_InstanceNorm):
    _nd = 3


LazyInstanceNorm1d = _lazy_norm(InstanceNorm1d, __name__, affine_default=True,
                                track_default=True)
LazyInstanceNorm2d = _lazy_norm(InstanceNorm2d, __name__, affine_default=True,
                                track_default=True)
LazyInstanceNorm3d = _lazy_norm(InstanceNorm3d, __name__, affine_default=True,
                                track_default=True)
