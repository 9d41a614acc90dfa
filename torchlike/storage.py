"""torch.storage: the storage classes (``Tensor.untyped_storage()``, ``Tensor.storage()``)."""
from __future__ import annotations

from ._ops.restructure import TypedStorage, UntypedStorage

__all__ = ["TypedStorage", "UntypedStorage"]
