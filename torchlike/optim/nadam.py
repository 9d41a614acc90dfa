"""torch.optim.nadam: the NAdam optimizer under torch's module path (its functional ``nadam(...)``
form is not provided: an ImportError / AttributeError names it)."""
from ._algorithms import NAdam  # noqa: F401

__all__ = ["NAdam"]
