"""torch's higher-order control-flow functions, run eagerly: ``cond`` and ``while_loop``."""
from __future__ import annotations

from .._tensor import Tensor

__all__ = ["cond", "while_loop"]


def _truth(pred):
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
        return bool(pred.item())
    if not isinstance(pred, (bool, int)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    return bool(pred)


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``."""
    if not isinstance(operands, (tuple, list)):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    return (true_fn if _truth(pred) else false_fn)(*operands)


def while_loop(cond_fn, body_fn, carried_inputs):
    """Run ``body_fn`` on the carried values while ``cond_fn`` holds; returns the final carry."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list, got "
                           f"{type(carried_inputs)}")
    carry = tuple(carried_inputs)
    while _truth(cond_fn(*carry)):
        carry = body_fn(*carry)
        if not isinstance(carry, (tuple, list)):
            carry = (carry,)
        carry = tuple(carry)
        if len(carry) != len(carried_inputs):
            raise RuntimeError("body_fn should return the same number of elements as "
                               "carried_inputs")
    return carry
