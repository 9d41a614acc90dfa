"""torch.optim.asgd: the ASGD optimizer under torch's module path (its functional ``asgd(...)``
form is not provided: an ImportError / AttributeError names it)."""
from ._algorithms import ASGD  # noqa: F401

__all__ = ["ASGD"]
