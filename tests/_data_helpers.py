"""Datasets for the DataLoader worker tests. This module imports neither torch nor torchlike
at the top, so spawned workers start quickly; ``lib`` names the library whose
``get_worker_info`` a dataset consults."""
import importlib
import os

import numpy as np


def _winfo(lib):
    return importlib.import_module(lib + ".utils.data").get_worker_info()


class Squares:
    """Map-style: sample i is (float32 array [i, i*i], i)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return np.array([i, i * i], np.float32), i


class WorkerTagged:
    """Map-style: sample i is (i, worker id, worker seed offset from the first worker)."""

    def __init__(self, n, lib):
        self.n, self.lib = n, lib

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        info = _winfo(self.lib)
        return {"i": i, "wid": info.id, "nw": info.num_workers, "seed": info.seed - info.id}


class Failing:
    """Raises ValueError at one index."""

    def __init__(self, n, fail_at):
        self.n, self.fail_at = n, fail_at

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.fail_at:
            raise ValueError(f"sample {i} is broken on purpose")
        return i


class Exiting:
    """The worker process dies at one index."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 3:
            os._exit(3)
        return i


def _iterable_base(lib):
    return importlib.import_module(lib + ".utils.data").IterableDataset


def make_sharded(lib, start, end):
    """An IterableDataset over range(start, end) that splits the range between workers the
    way torch's documentation shows."""
    base = _iterable_base(lib)

    class Sharded(base):
        def __init__(self):
            self.start, self.end, self.lib = start, end, lib

        def __iter__(self):
            info = _winfo(self.lib)
            if info is None:
                lo, hi = self.start, self.end
            else:
                per = int(np.ceil((self.end - self.start) / info.num_workers))
                lo = self.start + info.id * per
                hi = min(lo + per, self.end)
            return iter(range(lo, hi))

        def __len__(self):
            return self.end - self.start

        def __reduce__(self):
            return (make_sharded, (self.lib, self.start, self.end))

    return Sharded()


class SlowFirst:
    """Sample 0 takes a second; the rest are instant."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 0:
            import time
            time.sleep(1.5)
        return i
