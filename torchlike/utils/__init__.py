"""torchlike.utils: hooks and data loading helpers."""
from . import hooks as hooks


def __getattr__(name):
    # ``torchlike.utils.data`` on first use (importing it eagerly would be circular)
    if name == "data":
        import importlib
        return importlib.import_module(".data", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
