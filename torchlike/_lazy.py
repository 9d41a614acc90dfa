"""Submodules imported on first attribute access (``torchlike.cuda``, ``torchlike.utils.data``)."""
from __future__ import annotations

import importlib


def lazy_submodules(package, names):
    """A module ``__getattr__`` that imports ``package.<name>`` for ``name`` in ``names``.

    A submodule that does not exist (a torch namespace not provided yet) is an AttributeError
    naming it, as for any missing attribute; errors inside an existing submodule propagate.
    """
    names = frozenset(names)

    def __getattr__(name):
        if name in names:
            full = f"{package}.{name}"
            try:
                return importlib.import_module(full)
            except ModuleNotFoundError as e:
                if e.name != full:
                    raise
                raise AttributeError(
                    f"module {package!r} has no attribute {name!r} "
                    f"(torch's {full.replace('torchlike', 'torch', 1)} is not provided yet)"
                ) from None
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
