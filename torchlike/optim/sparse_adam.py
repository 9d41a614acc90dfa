"""SparseAdam: Adam whose moments and parameters move only where a sparse gradient has
entries (torch.optim.SparseAdam).

torchlike has no sparse-layout tensors yet: every ``.grad`` is dense. A weight looked up by
``embedding``/``embedding_bag`` with ``sparse=True`` (where torch's gradient is sparse) is
updated at the rows where its dense gradient is nonzero (torch: the rows looked up); torch
refuses other dense gradients, and so does ``step``. The update itself (``_sparse_adam_rows``)
takes a coalesced sparse gradient as (indices, values) over the leading dims.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


@jax.jit
def _rows_update(p, m, v, idx, vals, beta1, beta2, eps, step_size):
    sel = tuple(idx)
    old_m, old_v = m[sel], v[sel]
    dm = (vals - old_m) * (1 - beta1).astype(vals.dtype)
    dv = (vals * vals - old_v) * (1 - beta2).astype(vals.dtype)
    m = m.at[sel].add(dm)
    v = v.at[sel].add(dv)
    numer = dm + old_m
    denom = jnp.sqrt(dv + old_v) + eps.astype(vals.dtype)
    p = p.at[sel].add((-step_size).astype(vals.dtype) * (numer / denom))
    return p, m, v


def _sparse_adam_rows(p, m, v, indices, values, step, *, lr, beta1, beta2, eps, maximize):
    """One SparseAdam update of arrays ``p``, ``m``, ``v`` at the coalesced (unique)
    ``indices`` (sparse_dim x nnz) with gradient ``values`` (nnz x dense dims)."""
    if values.size == 0:
        return p, m, v
    values = -values if maximize else values
    bc1 = 1 - beta1 ** step
    bc2 = 1 - beta2 ** step
    step_size = lr * math.sqrt(bc2) / bc1
    return _rows_update(p, m, v, jnp.asarray(indices), values, jnp.float64(beta1),
                        jnp.float64(beta2), jnp.float64(eps), jnp.float64(step_size))


class SparseAdam(Optimizer):
    """SparseAdam(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, maximize=maximize))
        complex_params = [[i, j] for i, g in enumerate(self.param_groups)
                          for j, p in enumerate(g["params"]) if p.is_complex()]
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    def step(self, closure=None):
        loss = None
        if closure is not None:
            from ..autograd.grad_mode import enable_grad
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                if getattr(p.grad, "is_sparse", False):
                    grad = p.grad.coalesce()
                    indices, values = grad._indices()._data, grad._values()._data
                elif getattr(p, "_sparse_embedding", False):
                    g = p.grad._data
                    rows = np.flatnonzero(np.asarray(g != 0).reshape(g.shape[0], -1).any(1))
                    indices, values = rows[None], g[jnp.asarray(rows)]
                else:
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
                st = self.state[p]
                if len(st) == 0:
                    st["step"] = 0
                    st["exp_avg"] = Tensor._make(jnp.zeros_like(p._data))
                    st["exp_avg_sq"] = Tensor._make(jnp.zeros_like(p._data))
                st["step"] += 1
                new = _sparse_adam_rows(p._data, st["exp_avg"]._data, st["exp_avg_sq"]._data,
                                        indices, values,
                                        st["step"], lr=float(group["lr"]), beta1=beta1,
                                        beta2=beta2, eps=group["eps"],
                                        maximize=group.get("maximize", False))
                p._set_data(new[0])
                st["exp_avg"]._set_data(new[1])
                st["exp_avg_sq"]._set_data(new[2])
        return loss
