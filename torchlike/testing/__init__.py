"""torchlike.testing: ``assert_close`` with torch's rules and messages, ``make_tensor``."""
from ._comparison import assert_close, assert_allclose  # noqa: F401
from ._creation import make_tensor  # noqa: F401

__all__ = ["assert_close", "assert_allclose", "make_tensor"]
