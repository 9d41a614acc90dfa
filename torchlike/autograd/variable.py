"""``torch.autograd.Variable``: the pre-0.4 wrapper, now the Tensor itself.

``Variable(t, requires_grad=...)`` is a new leaf over ``t``'s storage (``t.detach()``), as
torch's legacy constructor makes; every Tensor is an instance of ``Variable``.
"""
from __future__ import annotations

from .graph import tensor_class

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, tensor_class())

    def __call__(cls, data=None, requires_grad=False, volatile=False):
        Tensor = tensor_class()
        if data is None:
            import jax.numpy as jnp
            return Tensor._make(jnp.zeros((0,), jnp.float32))
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if volatile:
            import warnings
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        # (a new leaf over the same storage, as torch's legacy constructor makes)
        return data.detach().requires_grad_(bool(requires_grad))


class Variable(metaclass=_VariableMeta):
    """The Tensor class under its old name (``isinstance(t, Variable)`` holds for tensors)."""
