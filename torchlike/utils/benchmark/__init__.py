"""torch.utils.benchmark: Timer and Measurement (wall time of a statement).

Each timed block ends by waiting for the jax arrays it produced (XLA runs asynchronously, as
CUDA does for torch's Timer, which synchronizes the same way)."""
from .utils.timer import Timer, Measurement, Language  # noqa: F401
from .utils.common import select_unit  # noqa: F401
from .utils.compare import Compare  # noqa: F401

__all__ = ["Timer", "Measurement", "Compare", "Language", "select_unit"]
