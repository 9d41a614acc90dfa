"""torch.utils.data.dataloader: DataLoader and the names torch keeps beside it."""
from ._impl import (DataLoader, default_collate, default_convert, get_worker_info,  # noqa
                    Dataset, IterableDataset, Sampler, SequentialSampler, RandomSampler,
                    BatchSampler, _InfiniteConstantSampler, _DatasetKind, T_co,
                    _BaseDataLoaderIter, _SingleProcessDataLoaderIter,
                    _MultiProcessingDataLoaderIter)

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]
