"""The registry's hook point: features that see every op call while they are active.

Forward AD (a dual level open) and saved-tensor hooks each install a function
``hook(op, args, static) -> outputs or NotImplemented``. While one is installed, ``current`` is
the dispatcher below and the registry's ``apply`` calls it first. A hook that handles a call
runs the op itself through ``apply`` (marking itself busy), so the others still see it.

This module imports nothing: the registry gives it ``apply`` and the Tensor class (``bind``).
"""
from __future__ import annotations

current = None           # read by the registry's ``apply`` on every call
apply = None             # the registry's apply (bound)
_tensor_source = None    # () -> the Tensor class (bound)
_hooks: dict = {}


def bind(apply_fn, tensor_source):
    global apply, _tensor_source
    apply, _tensor_source = apply_fn, tensor_source


def tensor_class():
    return _tensor_source()


def _dispatch(op, args, static):
    for hook in tuple(_hooks.values()):
        out = hook(op, args, static)
        if out is not NotImplemented:
            return out
    return NotImplemented


def install(name, hook):
    global current
    _hooks[name] = hook
    current = _dispatch


def uninstall(name):
    global current
    _hooks.pop(name, None)
    if not _hooks:
        current = None
