"""torchlike.utils.data: datasets, samplers, default collation and DataLoader (torch's API).

Worker processes (``num_workers > 0``) are started with the ``spawn`` method by default:
JAX is multithreaded and a forked child that runs jax code can deadlock, so the ``fork``
default torch uses on Linux is not safe here (pass ``multiprocessing_context='fork'`` to opt
in). Shuffled orders come from torchlike's generators: reproducible for a seed, but not the
same permutation torch draws (see DIFFERENCES.md).
"""
from __future__ import annotations

import bisect
import collections
import collections.abc
import copy
import dataclasses
import itertools
import math
import multiprocessing
import os
import pickle
import queue
import random
import sys
import traceback
import warnings
from typing import Generic, Iterable, TypeVar  # noqa: UP035  (abstract, as torch's)

import jax
import numpy as np

from ... import _dtype as D
from ... import _random
from ... import _tiers
from ... import accelerator as _accelerator
from ..._creation import randperm
from ..._fused import Deferred as _Deferred
from ..._tensor import Tensor

__all__ = [
    "Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
    "ChainDataset", "Subset", "random_split", "Sampler", "SequentialSampler", "RandomSampler",
    "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler", "DistributedSampler",
    "DataLoader",
    "default_collate", "default_convert", "get_worker_info", "_DatasetKind",
]

T_co = TypeVar("T_co", covariant=True)


# ============================================================================ datasets
class Dataset(Generic[T_co]):
    """A map-style dataset: subclasses define ``__getitem__`` (and usually ``__len__``)."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset[T_co], Iterable[T_co]):
    """An iterable-style dataset: subclasses define ``__iter__`` (abstract, as in torch: a
    subclass without one cannot be instantiated)."""

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Samples are ``tuple(t[index] for t in tensors)``; all tensors share dim 0."""

    def __init__(self, *tensors):
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class StackDataset(Dataset):
    """Stack datasets of equal length: samples are tuples (positional) or dicts (keywords)."""

    def __init__(self, *args, **kwargs):
        if args:
            if kwargs:
                raise ValueError("Supported either ``tuple``- (via ``args``) or"
                                 "``dict``- (via ``kwargs``) like input/output, but both types "
                                 "are given.")
            self._length = len(args[0])
            if any(self._length != len(d) for d in args):
                raise ValueError("Size mismatch between datasets")
            self.datasets = args
        elif kwargs:
            tmp = list(kwargs.values())
            self._length = len(tmp[0])
            if any(self._length != len(d) for d in tmp):
                raise ValueError("Size mismatch between datasets")
            self.datasets = kwargs
        else:
            raise ValueError("At least one dataset should be passed")

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices):
        """The samples at ``indices``, each nested dataset read through its own
        ``__getitems__`` where it has one."""
        named = isinstance(self.datasets, dict)
        parts = self.datasets.items() if named else enumerate(self.datasets)
        batch = [{} for _ in indices]
        for k, d in parts:
            if callable(getattr(d, "__getitems__", None)):
                items = d.__getitems__(indices)
                if len(items) != len(indices):
                    raise ValueError("Nested dataset's output size mismatch."
                                     f" Expected {len(indices)}, got {len(items)}")
            else:
                items = [d[i] for i in indices]
            for sample, item in zip(batch, items):
                sample[k] = item
        return batch if named else [tuple(sample.values()) for sample in batch]

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """The concatenation of map-style datasets."""

    @staticmethod
    def cumsum(sequence):
        r, s = [], 0
        for e in sequence:
            n = len(e)
            r.append(n + s)
            s += n
        return r

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        sample_idx = idx if dataset_idx == 0 else idx - self.cumulative_sizes[dataset_idx - 1]
        return self.datasets[dataset_idx][sample_idx]

    @property
    def cummulative_sizes(self):
        warnings.warn("`cummulative_sizes` attribute is renamed to `cumulative_sizes`",
                      FutureWarning, stacklevel=2)
        return self.cumulative_sizes


class ChainDataset(IterableDataset):
    """The chaining of iterable datasets."""

    def __init__(self, datasets):
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices
        if (type(self).__getitem__ is not Subset.__getitem__
                and type(self).__getitems__ is Subset.__getitems__):
            # (the DataLoader fetches batches through ``__getitems__``)
            raise NotImplementedError(
                f"{type(self).__name__} overrides __getitem__ but not __getitems__. "
                "When subclassing Subset and overriding __getitem__, you must also override "
                "__getitems__ to ensure DataLoader works correctly with your custom logic. "
                "A simple implementation:\n\n"
                "def __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]")

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=_random.default_generator):
    """Split ``dataset`` into non-overlapping Subsets of the given lengths (or fractions)."""
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        subset_lengths = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ValueError(f"Fraction at index {i} is not between 0 and 1")
            subset_lengths.append(int(math.floor(len(dataset) * frac)))
        remainder = len(dataset) - sum(subset_lengths)
        for i in range(remainder):
            subset_lengths[i % len(subset_lengths)] += 1
        lengths = subset_lengths
        for i, length in enumerate(lengths):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. "
                              f"This might result in an empty dataset.", stacklevel=2)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[offset - length:offset])
            for offset, length in zip(itertools.accumulate(lengths), lengths)]


# ============================================================================ samplers
def _randperm(n, generator):
    return np.asarray(jax.random.permutation(_random.next_key(generator), n)).astype(np.int64)


def _randint(n, size, generator):
    if n <= 0:
        # (torch.randint(high=n, ...): its error for an empty range)
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from=0 >= "
                           f"to={n}")
    return np.asarray(jax.random.randint(_random.next_key(generator), (size,), 0, n,
                                         dtype=np.int64))


def _seeded_generator():
    """A fresh generator seeded from the global one (what torch's samplers do)."""
    seed = int(np.asarray(jax.random.randint(_random.next_key(None), (), 0, 2 ** 62,
                                             dtype=np.int64)))
    return _random.Generator().manual_seed(seed)


class Sampler(Generic[T_co]):
    """Base class: an iterable over dataset indices (or batches of them); it takes no
    arguments (torch 2.2 removed ``data_source``)."""

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler[int]):
    """Indices 0..len-1 in order."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler[int]):
    """A random permutation (or, with replacement, independent draws) of the indices."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        if self._num_samples is None:
            return len(self.data_source)
        return self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = self.generator if self.generator is not None else _seeded_generator()
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from _randint(n, 32, generator).tolist()
            yield from _randint(n, self.num_samples % 32, generator).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from _randperm(n, generator).tolist()
            yield from _randperm(n, generator).tolist()[:self.num_samples % n]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler[int]):
    """The given indices, in random order."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _randperm(len(self.indices), self.generator):
            yield self.indices[int(i)]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler[int]):
    """Indices drawn with probabilities proportional to ``weights``."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if (not isinstance(num_samples, int) or isinstance(num_samples, bool)
                or num_samples <= 0):
            raise ValueError(f"num_samples should be a positive integer value, but got "
                             f"num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got "
                             f"replacement={replacement}")
        w = np.asarray(weights._data if isinstance(weights, Tensor) else weights,
                       dtype=np.float64)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape "
                             f"{tuple(w.shape)}")
        from ..._creation import tensor
        self.weights = tensor(w, dtype=D.float64)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        from ..._ops.sampling import multinomial
        rand_tensor = multinomial(self.weights, self.num_samples, self.replacement,
                                  generator=self.generator)
        yield from iter(rand_tensor.tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler[list]):
    """Groups the indices of ``sampler`` into lists of ``batch_size``."""

    def __init__(self, sampler, batch_size, drop_last):
        if (not isinstance(batch_size, int) or isinstance(batch_size, bool)
                or batch_size <= 0):
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        if self.drop_last:
            while True:
                batch = list(itertools.islice(it, self.batch_size))
                if len(batch) < self.batch_size:
                    return
                yield batch
        while True:
            batch = list(itertools.islice(it, self.batch_size))
            if not batch:
                return
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


from .distributed import DistributedSampler  # noqa: E402  (its own module, as torch)


class _InfiniteConstantSampler(Sampler):
    def __iter__(self):
        while True:
            yield None


# ============================================================================ collation
_COLLATE_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                "lists; found {}")


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def _stack(tensors):
    if (all(isinstance(t, Tensor) and not t.requires_grad for t in tensors)
            and len({t.dtype for t in tensors}) == 1
            # (fused eager: items a transform computed stay pending, stacked by the op)
            and not any(_pending(t) for t in tensors)):
        shapes = {tuple(t.shape) for t in tensors}
        if len(shapes) != 1:
            s0 = tuple(tensors[0].shape)
            bad = next(i for i, t in enumerate(tensors) if tuple(t.shape) != s0)
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(s0)} at entry 0 and {list(tensors[bad].shape)} at "
                               f"entry {bad}")
        # (one device put of the host stack: ``jnp.asarray`` dispatches a program per shape)
        return Tensor._make(_tiers.to_device(np.stack([np.asarray(t._data) for t in tensors])))
    from ... import stack
    return stack(tensors, 0)


def _pending(t):
    d = t._d
    return d.__class__ is _Deferred and d.value is None


def collate(batch, *, collate_fn_map=None):
    """torch's general collation: ``collate_fn_map`` maps a type (or tuple of types) of the
    batch's first element to the function collating the batch; containers recurse."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)

    def rec(samples):
        return collate(samples, collate_fn_map=collate_fn_map)
    if isinstance(elem, collections.abc.Mapping):
        try:
            if isinstance(elem, collections.abc.MutableMapping):
                clone = copy.copy(elem)
                clone.update({k: rec([d[k] for d in batch]) for k in elem})
                return clone
            return elem_type({k: rec([d[k] for d in batch]) for k in elem})
        except TypeError:
            return {k: rec([d[k] for d in batch]) for k in elem}
    if _is_namedtuple(elem):
        return elem_type(*(rec(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        it = iter(batch)
        elem_size = len(next(it))
        if not all(len(e) == elem_size for e in it):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [rec(s) for s in transposed]
        try:
            if isinstance(elem, collections.abc.MutableSequence):
                clone = copy.copy(elem)
                for i, s in enumerate(transposed):
                    clone[i] = rec(s)
                return clone
            return elem_type([rec(s) for s in transposed])
        except TypeError:
            return [rec(s) for s in transposed]
    raise TypeError(_COLLATE_ERR.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    return _stack(batch)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    from ..._creation import as_tensor
    elem = batch[0]
    if elem.dtype.kind in "SaUO":
        raise TypeError(_COLLATE_ERR.format(elem.dtype))
    return collate([as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    from ..._creation import as_tensor
    return as_tensor(np.array(batch))


def collate_float_fn(batch, *, collate_fn_map=None):
    from ..._creation import tensor
    return tensor(batch, dtype=D.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    from ..._creation import tensor
    return tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {Tensor: collate_tensor_fn, np.ndarray: collate_numpy_array_fn,
                          (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
                          float: collate_float_fn, int: collate_int_fn, str: collate_str_fn,
                          bytes: collate_str_fn}


def default_collate(batch):
    """torch's default collation: stack tensors/arrays/numbers, recurse into containers (as
    ``default_collate_fn_map`` says, which a program may extend)."""
    return collate(batch, collate_fn_map=default_collate_fn_map)


def default_convert(data):
    """What DataLoader applies to each sample when auto-batching is off (numpy -> tensor)."""
    from ..._creation import as_tensor
    elem_type = type(data)
    if isinstance(data, Tensor):
        return data
    if elem_type.__module__ == "numpy" and elem_type.__name__ not in ("str_", "string_"):
        if elem_type.__name__ == "ndarray" and data.dtype.kind in "SaUO":
            return data
        return as_tensor(np.asarray(data))
    if isinstance(data, collections.abc.Mapping):
        try:
            if isinstance(data, collections.abc.MutableMapping):
                clone = copy.copy(data)
                clone.update({k: default_convert(data[k]) for k in data})
                return clone
            return elem_type({k: default_convert(data[k]) for k in data})
        except TypeError:
            return {k: default_convert(data[k]) for k in data}
    if _is_namedtuple(data):
        return elem_type(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            if isinstance(data, collections.abc.MutableSequence):
                clone = copy.copy(data)
                for i, d in enumerate(data):
                    clone[i] = default_convert(d)
                return clone
            return elem_type([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data


# ============================================================================ fetching
class _BaseDatasetFetcher:
    """torch's fetcher base: ``fetch(index)`` gives the sample or batch at ``index``."""

    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        self.dataset, self.auto_collation = dataset, auto_collation
        self.collate_fn, self.drop_last = collate_fn, drop_last

    def fetch(self, possibly_batched_index):
        raise NotImplementedError


class _MapDatasetFetcher(_BaseDatasetFetcher):
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.plan = _gather_plan(dataset) if (collate_fn is default_collate
                                              and default_collate_fn_map.get(Tensor)
                                              is collate_tensor_fn
                                              and auto_collation) else None

    def fetch(self, index):
        if self.auto_collation:
            if self.plan is not None:
                # the same result as collating the samples, as one gather per tensor
                batch = _gather(self.plan, index)
                if batch is not None:
                    return batch
            if callable(getattr(self.dataset, "__getitems__", None)):
                data = self.dataset.__getitems__(index)
            else:
                data = [self.dataset[i] for i in index]
        else:
            data = self.dataset[index]
        return self.collate_fn(data)


def _gather_plan(dataset):
    """For a TensorDataset, or Subsets of one, with tensors that need no grad: the tensors
    and the chain of index lists, so a batch is one gather per tensor."""
    maps = []
    while type(dataset) is Subset:
        maps.append(dataset.indices)
        dataset = dataset.dataset
    if type(dataset) is not TensorDataset:
        return None
    if any(t.requires_grad or t.dim() == 0 for t in dataset.tensors):
        return None
    try:
        maps = [np.asarray(m._data if isinstance(m, Tensor) else m, dtype=np.int64)
                for m in maps]
    except (TypeError, ValueError):
        return None
    if any(m.ndim != 1 for m in maps):
        return None
    return dataset.tensors, maps, len(dataset)


def _in_bounds(idx, n):
    """``idx`` wrapped into 0..n-1; None if one is out of bounds."""
    if idx.size and (idx.max() >= n or idx.min() < -n):
        return None
    return idx % n if n else idx


def _gather(plan, index):
    """The batch at ``index``; None where ``index`` is not a flat list of integers (a float,
    bool or nested index) or one is out of bounds: then the samples are read one by one, as
    torch's, which raises the error of the container indexed."""
    import jax.numpy as jnp
    tensors, maps, n = plan
    try:
        idx = np.asarray(index)
    except (TypeError, ValueError):
        return None
    if idx.ndim != 1 or idx.dtype.kind not in "iu":
        return None
    idx = idx.astype(np.int64)
    for m in maps + [None]:                 # outermost Subset first, then the tensors
        wrapped = _in_bounds(idx, n if m is None else len(m))
        if wrapped is None:
            return None
        idx = wrapped if m is None else m[wrapped]
    return [Tensor._make(jnp.take(t._data, idx, axis=0)) for t in tensors]


class _IterableDatasetFetcher(_BaseDatasetFetcher):
    def __init__(self, dataset, auto_collation, collate_fn, drop_last):
        super().__init__(dataset, auto_collation, collate_fn, drop_last)
        self.dataset_iter = iter(dataset)
        self.ended = False

    def fetch(self, index):
        if self.ended:
            raise StopIteration
        if self.auto_collation:
            data = []
            for _ in index:
                try:
                    data.append(next(self.dataset_iter))
                except StopIteration:
                    self.ended = True
                    break
            if len(data) == 0 or (self.drop_last and len(data) < len(index)):
                raise StopIteration
        else:
            data = next(self.dataset_iter)
        return self.collate_fn(data)


def _make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last):
    cls = _IterableDatasetFetcher if iterable else _MapDatasetFetcher
    return cls(dataset, auto_collation, collate_fn, drop_last)


class _DatasetKind:
    """torch's names for the two dataset kinds, and its fetcher factory."""

    Map = 0
    Iterable = 1

    @staticmethod
    def create_fetcher(kind, dataset, auto_collation, collate_fn, drop_last):
        return _make_fetcher(kind != _DatasetKind.Map, dataset, auto_collation, collate_fn,
                             drop_last)


# ============================================================================ workers
@dataclasses.dataclass(frozen=True, slots=True)
class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker process (torch's frozen dataclass:
    ``rng`` is set by torch's thread workers only, which torchlike does not have)."""

    id: int
    num_workers: int
    seed: int
    dataset: Dataset
    rng: object = None
    worker_method: str = "multiprocessing"


_worker_info = None


def get_worker_info():
    """Inside a DataLoader worker: its WorkerInfo (id, num_workers, seed, dataset); else None."""
    return _worker_info


class KeyErrorMessage(str):
    """A KeyError message that prints its newlines."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception raised in a worker, with its traceback text, to re-raise in the parent."""

    def __init__(self, exc_info=None, where="in background"):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:  # noqa: BLE001
            raise RuntimeError(msg) from None
        raise exception


class _IterableDatasetStopIteration:
    def __init__(self, worker_id):
        self.worker_id = worker_id


class _ResumeIteration:
    pass


def _np_seed(base_seed, worker_id):
    return int((base_seed + 7919 * worker_id) % (2 ** 32))


def _worker_loop(iterable, dataset, index_queue, data_queue, auto_collation, collate_fn,
                 drop_last, base_seed, init_fn, worker_id, num_workers):
    global _worker_info
    try:
        seed = base_seed + worker_id
        random.seed(seed)
        _random.manual_seed(seed)
        np.random.seed(_np_seed(base_seed, worker_id))
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed,
                                  dataset=dataset)
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:  # noqa: BLE001
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
        iteration_end = False
        while True:
            r = index_queue.get()
            if r is None:
                break
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                if init_exception is None:
                    fetcher = _make_fetcher(iterable, dataset, auto_collation, collate_fn,
                                            drop_last)
                continue
            if iteration_end:
                continue
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except Exception as e:  # noqa: BLE001
                    if isinstance(e, StopIteration) and iterable:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                    else:
                        data = ExceptionWrapper(
                            where=f"in DataLoader worker process {worker_id}")
            try:
                data_queue.put((idx, data))
            except Exception:  # noqa: BLE001  (an unpicklable result)
                data_queue.put((idx, ExceptionWrapper(
                    where=f"in DataLoader worker process {worker_id}")))
    except KeyboardInterrupt:
        pass
    finally:
        try:
            data_queue.cancel_join_thread()
        except Exception:  # noqa: BLE001
            pass


def _pickled_by_value(state, error, wrapped=False):
    """``state`` (the worker's dataset, collate_fn, worker_init_fn, ...) pickled by cloudpickle,
    which carries by value what pickle refuses to name: a lambda, a function or class defined
    inside a function or in the main script. With fork, torch's workers inherit these objects;
    a spawned worker needs them pickled. Raises ``error`` (pickle's) without cloudpickle."""
    try:
        import cloudpickle
    except ImportError:
        raise error from None
    try:
        # (state, {name: object of the main script the worker must define})
        return cloudpickle.dumps(state if wrapped else (state, {}))
    except Exception:  # noqa: BLE001  (unpicklable by any means: pickle's own error)
        raise error from None


def _worker_loop_by_value(payload, index_queue, data_queue, worker_id, num_workers):
    state, main_objects = pickle.loads(payload)
    main = sys.modules.get("__main__")
    for qualname, obj in main_objects.items():
        # defined in the worker's __main__, so its results pickle back by name
        if "." not in qualname and main is not None and not hasattr(main, qualname):
            setattr(main, qualname, obj)
    iterable, dataset, auto_collation, collate_fn, drop_last, base_seed, init_fn = state
    _worker_loop(iterable, dataset, index_queue, data_queue, auto_collation, collate_fn,
                 drop_last, base_seed, init_fn, worker_id, num_workers)


# ============================================================================ iterators
class _BaseDataLoaderIter:
    def __init__(self, loader):
        self._dataset = loader.dataset
        self._iterable = loader._dataset_kind_iterable
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._collate_fn = loader.collate_fn
        self._num_yielded = 0
        if loader.pin_memory and loader.pin_memory_device:
            warnings.warn("pin_memory_device is deprecated, the current accelerator will be used "
                          "as the device,ignore pin_memory_device="
                          f"'{loader.pin_memory_device}'.", stacklevel=3)
        if loader.pin_memory and not _accelerator.is_available():
            warnings.warn("'pin_memory' argument is set as true but no accelerator is found, "
                          "then device pinned memory won't be used.", stacklevel=3)
        self._base_seed = loader._base_seed()
        self._sampler_iter = iter(self._index_sampler)
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._n_workers = loader.num_workers

    def __iter__(self):
        return self

    def __getstate__(self):
        raise NotImplementedError("{} cannot be pickled", self.__class__.__name__)

    def __len__(self):
        return len(self._index_sampler)

    def _next_index(self):
        return next(self._sampler_iter)

    def _warn_past_length(self, stacklevel):
        """torch's warning when an IterableDataset yields more than ``len(dataloader)`` read
        from its ``__len__`` (the dataset's length, compared with the batches fetched)."""
        n = self._IterableDataset_len_called
        if self._iterable and n is not None and self._num_yielded > n:
            msg = (f"Length of IterableDataset {self._dataset} was reported to be {n}(when "
                   f"accessing len(dataloader)), but {self._num_yielded} samples have been "
                   "fetched. ")
            if self._n_workers:
                msg += ("For multiprocessing data-loading, this could be caused by not properly "
                        "configuring the IterableDataset replica at each worker. Please see "
                        "https://pytorch.org/docs/stable/data.html#torch.utils.data."
                        "IterableDataset for examples.")
            warnings.warn(msg, stacklevel=stacklevel + 1)


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._fetcher = _make_fetcher(self._iterable, self._dataset, self._auto_collation,
                                      self._collate_fn, self._drop_last)

    def __next__(self):
        index = self._next_index()
        data = self._fetcher.fetch(index)
        self._num_yielded += 1
        self._warn_past_length(2)
        return data


def _dead_workers_message(dead):
    """torch's error for workers that died: its SIGCHLD handler's words for one that exited
    with an error code, else its poll's (one killed by a signal)."""
    code = dead[0].exitcode
    if code is not None and code > 0:
        return (f"DataLoader worker (pid {dead[0].pid}) exited unexpectedly with exit code "
                f"{code}. Details are lost due to multiprocessing. Rerunning with num_workers=0 "
                "may give better error trace.")
    pids = ", ".join(str(w.pid) for w in dead)
    return f"DataLoader worker (pid(s) {pids}) exited unexpectedly"


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._num_workers = loader.num_workers
        self._prefetch_factor = loader.prefetch_factor
        self._timeout = loader.timeout
        self._persistent = loader.persistent_workers
        self._in_order = loader.in_order
        if self._num_workers <= 0:
            raise AssertionError("num_workers must be greater than 0 for "
                                 "MultiProcessingDataLoaderIter")
        if self._prefetch_factor <= 0:
            raise AssertionError("prefetch_factor must be greater than 0 for "
                                 "MultiProcessingDataLoaderIter")
        ctx = loader.multiprocessing_context
        if ctx is None:
            ctx = multiprocessing.get_context("spawn")
        self._result_queue = ctx.Queue()
        self._index_queues, self._workers = [], []
        state = (self._iterable, self._dataset, self._auto_collation, self._collate_fn,
                 self._drop_last, self._base_seed, loader.worker_init_fn)
        by_value = None
        if ctx.get_start_method() != "fork":
            from ._main_rerun import main_objects_workers_miss
            missing = main_objects_workers_miss(state)
            if missing:
                by_value = _pickled_by_value((state, missing), pickle.PicklingError(
                    f"Can't pickle {next(iter(missing.values()))!r}: a spawned DataLoader "
                    "worker does not define it (install cloudpickle to pass it by value)"),
                    wrapped=True)
        for i in range(self._num_workers):
            iq = ctx.Queue()
            iq.cancel_join_thread()
            while True:
                if by_value is None:
                    w = ctx.Process(target=_worker_loop,
                                    args=(*state[:2], iq, self._result_queue, *state[2:], i,
                                          self._num_workers), daemon=True)
                else:
                    w = ctx.Process(target=_worker_loop_by_value,
                                    args=(by_value, iq, self._result_queue, i,
                                          self._num_workers), daemon=True)
                try:
                    w.start()
                    break
                except (pickle.PicklingError, AttributeError, TypeError) as e:
                    # (a spawned worker's arguments are pickled before it starts)
                    if by_value is not None or ctx.get_start_method() == "fork":
                        raise
                    by_value = _pickled_by_value(state, e)
            self._index_queues.append(iq)
            self._workers.append(w)
        self._shutdown = False
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._worker_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            for iq in self._index_queues:
                iq.put(_ResumeIteration())
            remaining = self._num_workers
            while remaining > 0:
                r, _ = self._get_data()
                if isinstance(r, _ResumeIteration):
                    remaining -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_put_index(self):
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):
            wid = next(self._worker_cycle)
            if self._workers_status[wid]:
                break
        else:
            return
        self._index_queues[wid].put((self._send_idx, index))
        self._task_info[self._send_idx] = (wid,)
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _get_data(self):
        import time
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = 1.0 if deadline is None else max(0.0, min(1.0, deadline - time.monotonic()))
            try:
                return self._result_queue.get(timeout=wait)
            except queue.Empty:
                dead = [w for w in self._workers if not w.is_alive()]
                if dead:
                    self._shutdown_workers()
                    raise RuntimeError(_dead_workers_message(dead)) from None
                if deadline is not None and time.monotonic() >= deadline:
                    self._shutdown_workers()
                    raise RuntimeError(f"DataLoader timed out after {self._timeout} "
                                       f"seconds") from None

    def __next__(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info is not None and (len(info) == 2 or self._workers_status[info[0]]):
                    break
                self._task_info.pop(self._rcvd_idx, None)
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self._shutdown_workers()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                return self._process(info[1])
            idx, data = self._get_data()
            if isinstance(idx, _ResumeIteration):
                continue
            self._tasks_outstanding -= 1
            if isinstance(data, _IterableDatasetStopIteration):
                self._workers_status[data.worker_id] = False
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if idx not in self._task_info:
                    continue
                if not self._in_order:          # hand it out now (in_order=False)
                    del self._task_info[idx]
                    return self._process(data, advance=False)
                self._task_info[idx] += (data,)
                continue
            del self._task_info[idx]
            return self._process(data)

    def _process(self, data, advance=True):
        if advance:
            self._rcvd_idx += 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            self._shutdown_workers()
            data.reraise()
        self._num_yielded += 1
        self._warn_past_length(3)
        return data

    def _shutdown_workers(self):
        if self._shutdown:
            return
        self._shutdown = True
        for iq in self._index_queues:
            try:
                iq.put(None)
            except Exception:  # noqa: BLE001
                pass
        for w in self._workers:
            w.join(timeout=5)
            if w.is_alive():
                w.terminate()
                w.join(timeout=1)
        for q in self._index_queues + [self._result_queue]:
            try:
                q.cancel_join_thread()
                q.close()
            except Exception:  # noqa: BLE001
                pass

    def __del__(self):
        try:
            self._shutdown_workers()
        except Exception:  # noqa: BLE001
            pass


# ============================================================================ DataLoader
class DataLoader(Generic[T_co]):
    """Iterate over a dataset in (optionally shuffled) batches, optionally in worker processes.

    >>> loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
    >>> for xb, yb in loader: ...
    """

    _FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
               "persistent_workers")

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order
        from ._main_rerun import warn_if_workers_rerun_main
        warn_if_workers_rerun_main(num_workers, self.multiprocessing_context)
        iterable = isinstance(dataset, IterableDataset)
        self._dataset_kind_iterable = iterable
        if iterable:
            if isinstance(shuffle, bool) and shuffle:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler={batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size = None
            drop_last = False
        elif batch_size is None:
            if drop_last:
                raise ValueError("batch_size=None option disables auto-batching and is "
                                 "mutually exclusive with drop_last")
        if sampler is None:
            if iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self._iterator = None
        self._IterableDataset_len_called = None
        self.__initialized = True
        self.check_worker_number_rationality()

    def __setattr__(self, attr, val):
        if self.__dict__.get("_DataLoader__initialized") and attr in self._FROZEN:
            raise ValueError(f"{attr} attribute should not be set after "
                             f"{self.__class__.__name__} is initialized")
        super().__setattr__(attr, val)

    @property
    def multiprocessing_context(self):
        return self._multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context):
        """A start method's name becomes its context; it needs worker processes."""
        if multiprocessing_context is not None:
            if self.num_workers <= 0:
                raise ValueError("multiprocessing_context can only be used with multi-process "
                                 "loading (num_workers > 0), but got "
                                 f"num_workers={self.num_workers}")
            if isinstance(multiprocessing_context, str):
                valid_start_methods = multiprocessing.get_all_start_methods()
                if multiprocessing_context not in valid_start_methods:
                    raise ValueError("multiprocessing_context option should specify a valid "
                                     f"start method in {valid_start_methods!r}, but got "
                                     f"multiprocessing_context={multiprocessing_context!r}")
                multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
            if not isinstance(multiprocessing_context, multiprocessing.context.BaseContext):
                raise TypeError("multiprocessing_context option should be a valid context "
                                "object or a string specifying the start method, but got "
                                f"multiprocessing_context={multiprocessing_context}")
        self._multiprocessing_context = multiprocessing_context

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _base_seed(self):
        key = _random.next_key(self.generator)
        return int(np.asarray(jax.random.randint(key, (), 0, 2 ** 62, dtype=np.int64)))

    def _get_iterator(self):
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    def check_worker_number_rationality(self):
        """Warn (as torch, at construction and at each multi-process iterator) when there are
        more workers than CPUs this process may run on."""
        if not self.num_workers:
            return
        cpuset_checked = hasattr(os, "sched_getaffinity")
        suggest = len(os.sched_getaffinity(0)) if cpuset_checked else os.cpu_count()
        if suggest is not None and self.num_workers <= suggest:
            return
        if suggest is None:
            suggested = ("DataLoader is not able to compute a suggested max number of worker "
                         "in current system.")
        else:
            suggested = (f"Our suggested max number of worker in current system is {suggest}"
                         f"{'' if cpuset_checked else ' (`cpuset` is not taken into account)'}"
                         ", which is smaller than what this DataLoader is going to create.")
        warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in "
                      f"total. {suggested} Please be aware that excessive worker creation might "
                      "get DataLoader running slow or even freeze, lower the worker number to "
                      "avoid potential slowness/freeze if necessary.", stacklevel=2)

    def __iter__(self):
        if self.persistent_workers and self.num_workers > 0:
            if self._iterator is None or self._iterator._shutdown:
                self._iterator = self._get_iterator()
            else:
                self._iterator._reset(self)
            return self._iterator
        return self._get_iterator()

    def __len__(self):
        if self._dataset_kind_iterable:
            # (torch's iterators warn when more batches than this are fetched)
            length = self._IterableDataset_len_called = len(self.dataset)
            if self.batch_size is not None:
                if self.drop_last:
                    length = length // self.batch_size
                else:
                    length = math.ceil(length / self.batch_size)
            return length
        return len(self._index_sampler)

    def __del__(self):
        it = self.__dict__.get("_iterator")
        if it is not None:
            try:
                it._shutdown_workers()
            except Exception:  # noqa: BLE001
                pass

