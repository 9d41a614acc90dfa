"""torchlike.utils: hooks and data loading helpers."""
from . import hooks as hooks
