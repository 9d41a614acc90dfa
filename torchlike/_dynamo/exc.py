"""torch._dynamo.exc: the classes of torch.compile's errors, for ``except`` clauses."""
from __future__ import annotations

from .._compile._trace import InvalidBackend, TorchDynamoException, Unsupported

__all__ = ["TorchDynamoException", "Unsupported", "InvalidBackend"]
