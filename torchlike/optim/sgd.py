"""torch.optim.sgd: the SGD optimizer under torch's module path (its functional ``sgd(...)``
form is not provided: an ImportError / AttributeError names it)."""
from ._algorithms import SGD  # noqa: F401

__all__ = ["SGD"]
