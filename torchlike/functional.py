"""torch.functional: the tensor functions torch defines in Python (the same objects as the
top-level ``torchlike.<name>``)."""
from __future__ import annotations

import torchlike as _t

__all__ = ["atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors",
           "cartesian_prod", "block_diag", "cdist", "chain_matmul", "einsum", "istft", "lu",
           "norm", "meshgrid", "pca_lowrank", "split", "stft", "svd_lowrank", "tensordot",
           "unique", "unique_consecutive", "unravel_index"]

globals().update({_n: getattr(_t, _n) for _n in __all__})
