"""torch.optim.adadelta: the Adadelta optimizer under torch's module path (its functional ``adadelta(...)``
form is not provided: an ImportError / AttributeError names it)."""
from ._algorithms import Adadelta  # noqa: F401

__all__ = ["Adadelta"]
