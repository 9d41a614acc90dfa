"""The registry's ``apply_hook``: features that see every op call while they are active.

Forward AD (a dual level open) and saved-tensor hooks each install a function
``hook(op, args, static) -> outputs or NotImplemented``; the registry calls the dispatcher
below only while one is installed. A hook that handles a call runs the op itself through
``apply`` (marking itself busy), so the others still see it.
"""
from __future__ import annotations

from .. import _registry

_hooks: dict = {}


def _dispatch(op, args, static):
    for hook in tuple(_hooks.values()):
        out = hook(op, args, static)
        if out is not NotImplemented:
            return out
    return NotImplemented


def install(name, hook):
    _hooks[name] = hook
    _registry.apply_hook = _dispatch


def uninstall(name):
    _hooks.pop(name, None)
    if not _hooks:
        _registry.apply_hook = None
