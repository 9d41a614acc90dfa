"""torch.torch_version: :class:`TorchVersion` and the version it describes (``torch.version``)."""
from __future__ import annotations

from .version import TorchVersion, __version__

__all__ = ["TorchVersion"]

internal_version = str(__version__)
