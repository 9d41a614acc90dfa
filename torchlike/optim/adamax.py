"""torch.optim.adamax: the Adamax optimizer under torch's module path (its functional ``adamax(...)``
form is not provided: an ImportError / AttributeError names it)."""
from ._algorithms import Adamax  # noqa: F401

__all__ = ["Adamax"]
