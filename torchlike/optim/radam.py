"""torch.optim.radam: the RAdam optimizer under torch's module path (its functional ``radam(...)``
form is not provided: an ImportError / AttributeError names it)."""
from ._algorithms import RAdam  # noqa: F401

__all__ = ["RAdam"]
