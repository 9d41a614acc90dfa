"""Saved-tensor hooks (``torch.autograd.graph.saved_tensors_hooks``, ``save_on_cpu``).

    >>> with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    ...     y = x.sin()             # pack_hook(x) -> packed, called now
    >>> y.sum().backward()          # unpack_hook(packed) -> tensor, called here

For each op recorded inside the block, ``pack_hook(tensor) -> object`` is called once for every
tensor torch's backward of that op saves (the inputs of ``sin``, both factors of ``mul``, the
result of ``exp``, ``tanh``, ``sigmoid``, ``relu``, ...), when the op runs; ``unpack_hook(packed)
-> Tensor`` once for each of them when the op's backward runs. The backward then reads the
unpacked inputs (so an unpack hook that changes values changes the gradients, as in torch).
A saved *result* cannot be substituted (jax's backward keeps its own copy): an unpack hook that
returns different values for one raises instead of being ignored.

Hooks are thread-local; the innermost block's pair is used. Tensors saved by custom
``autograd.Function``s (``ctx.save_for_backward``) are not passed to the hooks.
"""
from __future__ import annotations

import threading

import numpy as np

from . import _apply_hooks

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]

_tls = threading.local()
_active = [0]            # threads with hooks on their stack
_lock = threading.Lock()


def _stack():
    s = getattr(_tls, "stack", None)
    if s is None:
        s = _tls.stack = []
    return s


class saved_tensors_hooks:
    """Context manager: ``pack_hook(tensor) -> Any`` when an op saves a tensor for backward,
    ``unpack_hook(packed) -> Tensor`` when the backward reads it."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        message = getattr(_tls, "disabled", None)
        if message is not None:
            raise RuntimeError(message)
        stack = _stack()
        stack.append((self.pack_hook, self.unpack_hook))
        if len(stack) == 1:
            with _lock:
                _active[0] += 1
                _apply_hooks.install("saved_tensors", _pack_saved)
        return self

    def __exit__(self, *exc):
        stack = _stack()
        stack.pop()
        if not stack:
            with _lock:
                _active[0] -= 1
                if _active[0] == 0:
                    _apply_hooks.uninstall("saved_tensors")
        return False


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back to their device for the backward."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device, non_blocking=pin_memory)

        super().__init__(pack_to_cpu, unpack_from_cpu)


class disable_saved_tensors_hooks:
    """Inside, entering ``saved_tensors_hooks`` raises RuntimeError(error_message)."""

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        self._prev = getattr(_tls, "disabled", None)
        _tls.disabled = self.error_message

    def __exit__(self, *exc):
        _tls.disabled = self._prev
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*args, **kwargs)
        return wrapper


# ------------------------------------------------------------------ the registry's side

def _pack_saved(op, args, static):
    """Run the op, then pack what its node saves (``_saved_versions``: inputs in argument
    order, then results)."""
    stack = getattr(_tls, "stack", None)
    if not stack or getattr(_tls, "busy", False):
        return NotImplemented
    T = _apply_hooks.tensor_class()
    _tls.busy = True
    try:
        out = _apply_hooks.apply(op, *args, **static)
    finally:
        _tls.busy = False
    outs = out if isinstance(out, tuple) else (out,)
    node = next((o.grad_fn for o in outs if isinstance(o, T) and o.grad_fn is not None), None)
    saved = getattr(node, "_saved_versions", None) if node is not None else None
    if not saved or node.packed is not None:
        return out
    pack = stack[-1][0]
    where, j, k = [], 0, 0
    for _vc, _version, tensor, _meta in saved:
        if tensor is not None:              # a saved input: its position among the arguments
            while args[j] is not tensor:
                j += 1
            where.append((tensor, j, None))
            j += 1
        else:                               # a saved result (the differentiable outputs first)
            o = outs[k]
            where.append((o, None, o._data))
            k += 1
    if node.compiled.saves == "others":
        # bilinear ops (mul, div, mm): torch saves the other operand of each input, last first
        where.reverse()
    node.packed = (stack[-1][1], [(pack(t), pos, result) for t, pos, result in where])
    return out


def unpacked_inputs(node):
    """The node's inputs with the unpacked saved tensors in place of the saved ones (the
    unpack hook runs once per saved tensor); None when every one came back unchanged."""
    unpack, entries = node.packed
    inputs = list(node.inputs)
    changed = False
    for packed, pos, result in entries:
        t = unpack(packed)
        if pos is not None:
            if t is not inputs[pos] and t._data is not inputs[pos]._data:
                changed = True
                inputs[pos] = t
        elif t._data is not result and not (
                t._d.shape == result.shape and
                np.array_equal(np.asarray(t._data), np.asarray(result), equal_nan=True)):
            raise NotImplementedError(
                f"saved_tensors_hooks: the unpack hook returned other values for the result "
                f"that {node.name()} saved; torchlike's backward of this op reads its own copy "
                f"of the result, so it cannot use them. Return the saved values unchanged.")
    return inputs if changed else None
