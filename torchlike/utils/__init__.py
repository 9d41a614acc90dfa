"""torchlike.utils: hooks, data loading, checkpointing, dlpack, benchmark helpers."""
from . import hooks as hooks

_LAZY = frozenset({"data", "checkpoint", "dlpack", "benchmark", "tensorboard", "cpp_extension",
                   "model_zoo", "_pytree"})


def __getattr__(name):
    # submodules on first use (importing ``data`` eagerly would be circular)
    if name in _LAZY:
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
