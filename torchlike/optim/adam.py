"""torch.optim.adam: the Adam optimizer under torch's module path (its functional ``adam(...)``
form is not provided: an ImportError / AttributeError names it)."""
from ._algorithms import Adam  # noqa: F401

__all__ = ["Adam"]
