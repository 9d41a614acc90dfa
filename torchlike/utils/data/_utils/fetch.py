"""torch.utils.data._utils.fetch."""
from .._impl import _MapFetcher, _IterableFetcher  # noqa: F401
