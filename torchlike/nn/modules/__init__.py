from .module import Module  # noqa: F401
from .linear import Linear, Identity  # noqa: F401
