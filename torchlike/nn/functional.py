"""torchlike.nn.functional (the core subset; the nn issue widens it)."""
from __future__ import annotations

import jax.numpy as jnp

from .._ops._registry import apply, defop

__all__ = ["linear", "relu"]


def _linear_name(kw):
    return "AddmmBackward0" if kw["ndim"] == 2 and kw["bias"] else (
        "MmBackward0" if kw["ndim"] == 2 else "ViewBackward0" if kw["bias"] is False
        else "AddBackward0")


@defop("linear", promote="common", grad_name=_linear_name)
def _linear(x, w, *b, ndim, bias):
    y = jnp.matmul(x, w.T)
    return y + b[0] if b else y


def linear(input, weight, bias=None):
    """input @ weight.T + bias."""
    if bias is None:
        return apply(_linear, input, weight, ndim=input.ndim, bias=False)
    return apply(_linear, input, weight, bias, ndim=input.ndim, bias=True)


def relu(input, inplace=False):
    return input.relu_() if inplace else input.relu()
