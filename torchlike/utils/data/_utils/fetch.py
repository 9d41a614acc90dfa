"""torch.utils.data._utils.fetch."""
from .._impl import (_BaseDatasetFetcher, _IterableDatasetFetcher,  # noqa: F401
                     _MapDatasetFetcher)
