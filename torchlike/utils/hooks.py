"""RemovableHandle: what every ``register_*_hook`` returns."""
from __future__ import annotations

import itertools

__all__ = ["RemovableHandle"]


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
