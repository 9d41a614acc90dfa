"""RemovableHandle: what every ``register_*_hook`` returns."""
from __future__ import annotations

import itertools

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


class RemovableHandle:
    """A handle that removes one hook from one or more id-keyed dicts.

    ``remove()`` is idempotent and safe to call from inside the hook itself.
    """

    _ids = itertools.count()

    def __init__(self, hooks_dict, *, extra_dict=None):
        # plain dicts cannot be weakly referenced; a handle keeps its dicts alive, which is
        # harmless since the dicts never point back at their handles
        self.id = next(RemovableHandle._ids)
        extra = [] if extra_dict is None else (
            extra_dict if isinstance(extra_dict, list) else [extra_dict])
        self._dicts = (hooks_dict, *extra)

    def remove(self) -> None:
        for d in self._dicts:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def unserializable_hook(f):
    """Mark ``f`` as a hook not to be serialized (no warning when its tensor is saved)."""
    f.__torch_unserializable__ = True
    return f


def warn_if_has_hooks(tensor) -> None:
    """Warn for each backward hook of ``tensor`` that saving it will drop."""
    import warnings
    hooks = getattr(tensor, "_backward_hooks", None) or {}
    for hook in hooks.values():
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this "
                          "is expected, you can decorate the function with "
                          "@torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)
