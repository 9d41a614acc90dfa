"""torch.optim.adagrad: the Adagrad optimizer under torch's module path (its functional ``adagrad(...)``
form is not provided: an ImportError / AttributeError names it)."""
from ._algorithms import Adagrad  # noqa: F401

__all__ = ["Adagrad"]
