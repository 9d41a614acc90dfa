"""torchlike.utils: hooks, data loading, checkpointing, dlpack, benchmark helpers."""
from . import hooks as hooks
from .._lazy import lazy_submodules as _lazy

# submodules on first use (importing ``data`` eagerly would be circular)
# (``tensorboard`` only once imported, as torch's: it needs the tensorboard package, and
# ``hasattr(torch.utils, "tensorboard")`` is False without it)
__getattr__ = _lazy(__name__, {"data", "checkpoint", "dlpack", "benchmark", "cpp_extension",
                               "model_zoo", "_pytree"})
