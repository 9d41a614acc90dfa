"""torch.utils.data.dataset: Dataset classes and random_split."""
from ._impl import (Dataset, IterableDataset, TensorDataset, StackDataset,  # noqa: F401
                    ConcatDataset, ChainDataset, Subset, random_split, T_co)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split"]
