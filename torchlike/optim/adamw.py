"""torch.optim.adamw: the AdamW optimizer under torch's module path (its functional ``adamw(...)``
form is not provided: an ImportError / AttributeError names it)."""
from ._algorithms import AdamW  # noqa: F401

__all__ = ["AdamW"]
