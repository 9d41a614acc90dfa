"""torch.utils.data.sampler: index samplers."""
from ._impl import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler,  # noqa
                    WeightedRandomSampler, BatchSampler)

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler"]
