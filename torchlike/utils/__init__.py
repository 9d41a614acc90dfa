"""torchlike.utils: hooks, data loading, checkpointing, dlpack, benchmark helpers."""
from . import hooks as hooks
from .._lazy import lazy_submodules as _lazy

# submodules on first use (importing ``data`` eagerly would be circular)
__getattr__ = _lazy(__name__, {"data", "checkpoint", "dlpack", "benchmark", "tensorboard",
                               "cpp_extension", "model_zoo", "_pytree"})
