"""torch.optim.rprop: the Rprop optimizer under torch's module path (its functional ``rprop(...)``
form is not provided: an ImportError / AttributeError names it)."""
from ._algorithms import Rprop  # noqa: F401

__all__ = ["Rprop"]
