"""torch.optim.rmsprop: the RMSprop optimizer under torch's module path (its functional ``rmsprop(...)``
form is not provided: an ImportError / AttributeError names it)."""
from ._algorithms import RMSprop  # noqa: F401

__all__ = ["RMSprop"]
