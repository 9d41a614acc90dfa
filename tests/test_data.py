"""torchlike.utils.data against torch.utils.data: datasets, samplers, collation, DataLoader."""
import collections
import collections.abc
import pickle
import re
import sys
import os

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import torchlike
import torchlike.utils.data as lud

sys.path.insert(0, os.path.dirname(__file__))
import _data_helpers as H  # noqa: E402
from oracle import fresh_process_outputs  # noqa: E402

LIBS = [(torch, tud), (torchlike, lud)]


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.numpy().copy()
    return np.array(t._data)


def same(ours, theirs, path="x"):
    """Equal structure, container types, tensor dtypes/shapes/values."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, torchlike.Tensor), f"{path}: {type(ours)}"
        assert str(ours.dtype) == str(theirs.dtype), f"{path}: {ours.dtype} != {theirs.dtype}"
        assert tuple(ours.shape) == tuple(theirs.shape), f"{path}: {ours.shape}"
        np.testing.assert_array_equal(_np(ours), _np(theirs), err_msg=path)
    elif isinstance(theirs, dict):
        assert type(ours) is type(theirs) and list(ours) == list(theirs), path
        for k in theirs:
            same(ours[k], theirs[k], f"{path}[{k!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert type(ours).__name__ == type(theirs).__name__, \
            f"{path}: {type(ours).__name__} != {type(theirs).__name__}"
        assert len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs)):
            same(a, b, f"{path}[{i}]")
    else:
        assert type(ours) is type(theirs) and ours == theirs, f"{path}: {ours!r} != {theirs!r}"


def both(fn):
    """fn(m, ud) on (torch, torch.utils.data) and (torchlike, torchlike.utils.data)."""
    return fn(torchlike, lud), fn(torch, tud)


X = np.arange(40, dtype=np.float32).reshape(10, 4)
Y = np.arange(10, dtype=np.int64) % 3


def tensor_ds(m, ud):
    return ud.TensorDataset(m.tensor(X.copy()), m.tensor(Y.copy()))


# ---------------------------------------------------------------------------- datasets
def test_tensor_dataset():
    ours, theirs = both(lambda m, ud: [tensor_ds(m, ud)[i] for i in (0, 3, -1)]
                        + [len(tensor_ds(m, ud))])
    same(ours, theirs)
    for m, ud in LIBS:
        with pytest.raises(AssertionError, match="Size mismatch"):
            ud.TensorDataset(m.zeros(3), m.zeros(4))


def test_concat_subset_stack():
    def f(m, ud):
        a, b = tensor_ds(m, ud), ud.TensorDataset(m.tensor(X[:3].copy() * 2),
                                                  m.tensor(Y[:3].copy()))
        c = a + b
        sub = ud.Subset(c, [12, 0, 11, 5])
        st = ud.StackDataset(a, a)
        std = ud.StackDataset(x=a, y=ud.Subset(b + b + b + b, list(range(10))))
        return ([len(c), c.cumulative_sizes, c[10], c[-1], c[4], len(sub), sub[0], sub[2],
                 st[1], len(st)], std[2])
    same(*both(f))
    for m, ud in LIBS:
        with pytest.raises(AssertionError, match="should not be an empty iterable"):
            ud.ConcatDataset([])
        with pytest.raises(ValueError, match="Size mismatch"):
            ud.StackDataset(tensor_ds(m, ud), ud.TensorDataset(m.zeros(2)))


def test_random_split():
    ds = list(range(23))
    for lengths in ([10, 13], [0.5, 0.3, 0.2], [0.25, 0.25, 0.25, 0.25]):
        ours = lud.random_split(ds, lengths, generator=torchlike.Generator().manual_seed(1))
        theirs = tud.random_split(ds, lengths, generator=torch.Generator().manual_seed(1))
        assert [len(s) for s in ours] == [len(s) for s in theirs]
        flat = sorted(x for s in ours for x in s)
        assert flat == ds
        again = lud.random_split(ds, lengths, generator=torchlike.Generator().manual_seed(1))
        assert [list(s) for s in again] == [list(s) for s in ours]
    other = lud.random_split(ds, [10, 13], generator=torchlike.Generator().manual_seed(2))
    assert [list(s) for s in other] != [list(s) for s in
                                        lud.random_split(ds, [10, 13],
                                                         torchlike.Generator().manual_seed(1))]
    for m, ud in LIBS:
        with pytest.raises(ValueError, match="Sum of input lengths"):
            ud.random_split(ds, [5, 5])


# ---------------------------------------------------------------------------- samplers
def test_sequential_and_batch_samplers():
    def f(m, ud):
        out = []
        for bs in (1, 3, 5, 11):
            for dl in (False, True):
                b = ud.BatchSampler(ud.SequentialSampler(range(10)), bs, dl)
                out.append((list(b), len(b)))
        return out
    ours, theirs = both(f)
    assert ours == theirs
    for m, ud in LIBS:
        with pytest.raises(ValueError, match="batch_size should be a positive integer"):
            ud.BatchSampler(range(3), 0, False)
        with pytest.raises(ValueError, match="drop_last should be a boolean"):
            ud.BatchSampler(range(3), 2, 1)


def test_random_sampler():
    data = list(range(17))
    g = torchlike.Generator().manual_seed(5)
    a = list(lud.RandomSampler(data, generator=g))
    assert sorted(a) == data and a != data
    b = list(lud.RandomSampler(data, generator=torchlike.Generator().manual_seed(5)))
    assert a == b
    assert list(lud.RandomSampler(data, generator=g)) != a      # the generator advanced
    r = list(lud.RandomSampler(data, replacement=True, num_samples=70,
                               generator=torchlike.Generator().manual_seed(0)))
    assert len(r) == 70 and set(r) <= set(data)
    n = list(lud.RandomSampler(data, num_samples=40,
                               generator=torchlike.Generator().manual_seed(0)))
    assert len(n) == 40 and sorted(n[:17]) == data and sorted(n[17:34]) == data
    torchlike.manual_seed(3)
    c = list(lud.RandomSampler(data))
    torchlike.manual_seed(3)
    assert list(lud.RandomSampler(data)) == c               # the global seed decides
    assert len(lud.RandomSampler(data, num_samples=5)) == len(
        tud.RandomSampler(data, num_samples=5))
    for m, ud in LIBS:
        with pytest.raises(ValueError, match="num_samples should be a positive integer"):
            ud.RandomSampler(data, num_samples=0)
        with pytest.raises(TypeError, match="replacement should be a boolean"):
            ud.RandomSampler(data, replacement=1)


def test_subset_and_weighted_samplers():
    idx = [3, 9, 4, 12]
    s = list(lud.SubsetRandomSampler(idx, generator=torchlike.Generator().manual_seed(0)))
    assert sorted(s) == sorted(idx) and len(lud.SubsetRandomSampler(idx)) == 4
    w = [0.0, 1.0, 5.0, 0.0, 2.0]
    draws = list(lud.WeightedRandomSampler(w, 400,
                                           generator=torchlike.Generator().manual_seed(0)))
    counts = collections.Counter(draws)
    assert set(counts) == {1, 2, 4} and counts[2] > counts[4] > counts[1]
    nr = list(lud.WeightedRandomSampler(w, 3, replacement=False))
    assert sorted(nr) == [1, 2, 4]
    assert str(lud.WeightedRandomSampler(w, 3).weights.dtype) == str(
        tud.WeightedRandomSampler(w, 3).weights.dtype)
    for m, ud in LIBS:
        with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist"):
            list(ud.WeightedRandomSampler([1.0, 2.0], 3, replacement=False))
        with pytest.raises(ValueError, match="weights should be a 1d sequence"):
            ud.WeightedRandomSampler([[1.0, 2.0]], 3)
        with pytest.raises(ValueError, match="num_samples should be a positive integer"):
            ud.WeightedRandomSampler([1.0], 0)


def test_iterable_dataset_without_iter_cannot_be_made():
    # torch's IterableDataset is abstract over __iter__ (typing.Iterable): no instance
    for m, ud in LIBS:
        class NoIter(ud.IterableDataset):
            pass

        class WithIter(ud.IterableDataset):
            def __iter__(self):
                return iter([1, 2])
        for cls in (ud.IterableDataset, NoIter):
            with pytest.raises(TypeError, match="Can't instantiate abstract class "
                               f"{cls.__name__} with abstract method __iter__"):
                cls()
        assert list(WithIter()) == [1, 2]
        assert isinstance(WithIter(), collections.abc.Iterable)
        assert list(ud.ChainDataset([WithIter(), WithIter()])) == [1, 2, 1, 2]


def test_random_sampler_with_replacement_over_nothing_raises_as_torch():
    msg = "random_ expects 'from' to be less than 'to', but got from=0 >= to=0"
    for m, ud in LIBS:
        for n in (3, 40):
            with pytest.raises(RuntimeError, match=msg):
                list(ud.RandomSampler([], replacement=True, num_samples=n))


def test_loader_over_tensor_datasets_indexes_as_torch_does():
    """Each batch of a TensorDataset (or Subsets of one) is what indexing sample by sample
    gives: float and bool indices, nested index lists, an empty batch and out-of-bounds
    indices give torch's results and errors."""
    def run(sampler=None, batch_sampler=None, batch_size=1, subset=None):
        def f(m, ud):
            ds = ud.TensorDataset(m.arange(6, dtype=m.float32).reshape(3, 2), m.arange(3))
            if subset is not None:
                ds = ud.Subset(ds, subset)
            kw = (dict(batch_sampler=batch_sampler) if batch_sampler is not None
                  else dict(sampler=sampler, batch_size=batch_size))
            try:
                return list(ud.DataLoader(ds, **kw))
            except Exception as e:  # noqa: BLE001
                return type(e).__name__, str(e)
        ours, theirs = both(f)
        same(ours, theirs)
        return theirs
    assert run(sampler=[1.0])[0] == "IndexError"
    run(sampler=[True])                                  # t[True]: a new leading dim
    run(sampler=[np.int32(2), np.uint8(1), 2], batch_size=2)
    run(batch_sampler=[[[0, 1], [1, 2]]])                # each sample a [0, 1] index
    assert run(batch_sampler=[[]])[0] == "IndexError"
    assert run(sampler=[-4])[0] == "IndexError"
    assert run(sampler=[2], subset=[0, 1]) == ("IndexError", "list index out of range")
    run(sampler=[1, -1], subset=[2, 0], batch_size=2)


# ---------------------------------------------------------------------------- collation
Point = collections.namedtuple("Point", "x y")


def _samples(m):
    return [
        [1, 2, 3],
        [1.5, 2.5],
        [True, False],
        ["a", "b"],
        [b"x", b"y"],
        [np.float32(1.5), np.float32(2.0)],
        [np.int64(3), np.int64(4)],
        [np.ones((2, 3), np.float32), np.zeros((2, 3), np.float32)],
        [np.array([1, 2], np.int32), np.array([3, 4], np.int32)],
        [(1, 2.0, "s"), (3, 4.0, "t")],
        [[1, 2], [3, 4]],
        [{"a": 1, "b": np.ones(2)}, {"a": 2, "b": np.zeros(2)}],
        [collections.OrderedDict(z=1, a=2.0), collections.OrderedDict(z=3, a=4.0)],
        [Point(1, 2.0), Point(3, 4.0)],
        [m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])],
        [m.tensor(5), m.tensor(6)],
        [(m.tensor([1, 2]), {"k": [m.tensor(0.5), 7]})] * 3,
    ]


@pytest.mark.parametrize("i", range(17))
def test_default_collate_matches_torch(i):
    ours = lud.default_collate(_samples(torchlike)[i])
    theirs = tud.default_collate(_samples(torch)[i])
    same(ours, theirs)


@pytest.mark.parametrize("i", range(17))
def test_default_convert_matches_torch(i):
    same(lud.default_convert(_samples(torchlike)[i][0]),
         tud.default_convert(_samples(torch)[i][0]))


def test_collate_errors_like_torch():
    for m, ud in LIBS:
        with pytest.raises(RuntimeError, match="each element in list of batch should be of "
                                               "equal size"):
            ud.default_collate([[1, 2], [3]])
        with pytest.raises(TypeError, match="default_collate: batch must contain"):
            ud.default_collate([object(), object()])
        with pytest.raises(TypeError, match="default_collate: batch must contain"):
            ud.default_collate([np.array(["a"]), np.array(["b"])])
        with pytest.raises(RuntimeError, match="stack expects each tensor to be equal size"):
            ud.default_collate([m.zeros(2), m.zeros(3)])
        # a tensor first, then a number: torch.stack's error
        with pytest.raises(TypeError, match="^expected Tensor as element 1 in argument 0, but "
                                            "got int$"):
            ud.default_collate([m.tensor(2), 1])
        with pytest.raises(NotImplementedError, match="cannot be pickled"):
            pickle.dumps(iter(ud.DataLoader([1, 2])))


_READ_ONLY = """
import importlib, sys, warnings
import numpy as np
ud = importlib.import_module(sys.argv[1] + ".utils.data")
a = np.ones(2)
a.flags.writeable = False
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    ud.default_collate([a, a])
    ud.default_collate([a, a])
print([str(x.message).split(".")[0] for x in w])
"""


def test_collating_read_only_arrays_warns_once_as_torch():
    out = fresh_process_outputs(_READ_ONLY)
    assert out["torchlike"] == out["torch"] and "not writable" in out["torch"]


# ---------------------------------------------------------------------------- DataLoader
@pytest.mark.parametrize("kw", [dict(), dict(batch_size=3), dict(batch_size=4, drop_last=True),
                                dict(batch_size=None), dict(batch_size=20)])
def test_loader_batches_match_torch(kw):
    ours, theirs = both(lambda m, ud: (list(ud.DataLoader(tensor_ds(m, ud), **kw)),
                                       len(ud.DataLoader(tensor_ds(m, ud), **kw))))
    same(ours, theirs)


def test_loader_over_subsets_matches_torch():
    def f(m, ud):
        ds = tensor_ds(m, ud)
        sub = ud.Subset(ud.Subset(ds, [9, 2, 5, 7, 0, 1, -2]), [6, 0, 3, 2, 4])
        return (list(ud.DataLoader(sub, batch_size=2)), sub[1], ds[-3],
                list(ud.DataLoader(ud.Subset(ds, []), batch_size=2)))
    same(*both(f))
    for m, ud in LIBS:
        with pytest.raises(IndexError, match="out of bounds"):
            list(ud.DataLoader(ud.Subset(tensor_ds(m, ud), [1, 10]), batch_size=2))
        with pytest.raises(IndexError, match="out of bounds"):
            tensor_ds(m, ud)[10]


def test_loader_collation_of_python_samples():
    ours, theirs = both(lambda m, ud: list(ud.DataLoader(H.Squares(7), batch_size=3)))
    same(ours, theirs)
    ours, theirs = both(lambda m, ud: list(ud.DataLoader(H.Squares(3), batch_size=None)))
    same(ours, theirs)


def test_loader_sampler_batch_sampler_collate_fn():
    def f(m, ud):
        ds = tensor_ds(m, ud)
        a = list(ud.DataLoader(ds, batch_size=2, sampler=[9, 1, 4, 4, 0]))
        b = list(ud.DataLoader(ds, batch_sampler=[[0, 1, 2], [7], [3, 3]]))
        c = list(ud.DataLoader(range(7), batch_size=3, collate_fn=lambda b: sum(b)))
        d = len(ud.DataLoader(ds, batch_sampler=[[0, 1, 2], [7]]))
        return a, b, c, d
    same(*both(f))


def test_loader_shuffle_with_generator():
    ds = lud.TensorDataset(torchlike.arange(50))

    def epoch(loader):
        return [int(v) for (b,) in loader for v in b.tolist()]
    l1 = lud.DataLoader(ds, batch_size=8, shuffle=True,
                        generator=torchlike.Generator().manual_seed(0))
    e1, e2 = epoch(l1), epoch(l1)
    assert sorted(e1) == list(range(50)) and e1 != list(range(50)) and e1 != e2
    l2 = lud.DataLoader(ds, batch_size=8, shuffle=True,
                        generator=torchlike.Generator().manual_seed(0))
    assert epoch(l2) == e1 and epoch(l2) == e2
    assert len(l1) == len(tud.DataLoader(list(range(50)), batch_size=8, shuffle=True))


def test_iterable_dataset_single_process():
    def f(m, ud):
        ds = H.make_sharded(m.__name__, 3, 14)
        return (list(ud.DataLoader(ds, batch_size=4)),
                list(ud.DataLoader(ds, batch_size=4, drop_last=True)),
                list(ud.DataLoader(ds, batch_size=None)), len(ud.DataLoader(ds, batch_size=4)))
    same(*both(f))


def test_loader_option_errors_like_torch():
    for m, ud in LIBS:
        ds = tensor_ds(m, ud)
        it = H.make_sharded(m.__name__, 0, 4)
        cases = [
            (dict(num_workers=-1), "num_workers option should be non-negative"),
            (dict(batch_sampler=[[0]], batch_size=2), "batch_sampler option is mutually"),
            (dict(sampler=[0, 1], shuffle=True), "sampler option is mutually exclusive"),
            (dict(batch_size=None, drop_last=True), "batch_size=None option disables"),
            (dict(prefetch_factor=2), "prefetch_factor option could only be specified"),
            (dict(persistent_workers=True), "persistent_workers option needs num_workers"),
        ]
        for kw, msg in cases:
            with pytest.raises(ValueError, match=msg):
                ud.DataLoader(ds, **kw)
        with pytest.raises(ValueError, match="expected unspecified shuffle option"):
            ud.DataLoader(it, shuffle=True)
        # prefetch_factor=0 is allowed at construction; a multi-process iterator refuses it
        # (nothing would ever be fetched)
        zero = ud.DataLoader(ds, num_workers=1, prefetch_factor=0)
        with pytest.raises(AssertionError, match="^prefetch_factor must be greater than 0 for "
                                                 "MultiProcessingDataLoaderIter$"):
            iter(zero)
        loader = ud.DataLoader(ds, batch_size=2, pin_memory=True)
        assert len(list(loader)) == 5
        with pytest.raises(ValueError, match="batch_size attribute should not be set"):
            loader.batch_size = 3


def test_fetchers_and_collate_internals_under_torchs_names():
    # names some programs reach into: torch.utils.data._utils.fetch / .collate, _DatasetKind
    def f(m, ud):
        fetch, col = ud._utils.fetch, ud._utils.collate
        ds = tensor_ds(m, ud)
        out = [fetch._MapDatasetFetcher(ds, True, ud.default_collate, False).fetch([3, 1]),
               fetch._MapDatasetFetcher([5, 6], False, ud.default_convert, False).fetch(1),
               ud._DatasetKind.create_fetcher(ud._DatasetKind.Map, ds, False, ud.default_convert,
                                              False).fetch(2),
               issubclass(fetch._IterableDatasetFetcher, fetch._BaseDatasetFetcher),
               col.np_str_obj_array_pattern.search(np.array(["a"]).dtype.str) is not None]
        it = fetch._IterableDatasetFetcher(iter([1, 2, 3]), True, ud.default_collate, True)
        out.append(it.fetch([0, 1]))
        try:
            it.fetch([0, 1])                # one left: dropped (drop_last)
        except StopIteration:
            out.append("stop")
        try:
            fetch._BaseDatasetFetcher(ds, True, None, False).fetch([0])
        except NotImplementedError:
            out.append("abstract")
        return out
    same(*both(f))


# ---------------------------------------------------------------------------- workers
def test_worker_info_is_torchs_frozen_dataclass():
    def f(m, ud):
        info = ud.get_worker_info
        w = ud._utils.worker.WorkerInfo(id=1, num_workers=2, seed=3, dataset=None)
        out = [repr(w), pickle.loads(pickle.dumps(w)) == w, info() is None]
        for fn in (lambda: setattr(w, "id", 3), lambda: setattr(w, "other", 3),
                   lambda: ud._utils.worker.WorkerInfo(id=1)):
            try:
                fn()
            except Exception as e:  # noqa: BLE001
                out.append((type(e).__name__, str(e)))
        return out
    ours, theirs = both(f)
    assert ours == theirs


def test_workers_map_style_order_info_and_persistence():
    ds = H.WorkerTagged(11, "torchlike")
    loader = lud.DataLoader(ds, batch_size=2, num_workers=2, persistent_workers=True,
                            worker_init_fn=H.Squares, generator=torchlike.Generator())
    assert len(loader) == 6
    for _ in range(2):                                  # two epochs, same worker processes
        batches = list(loader)
        assert [b["i"].tolist() for b in batches] == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9],
                                                       [10]]
        # torch's round robin: batch k is fetched by worker k % num_workers
        assert [b["wid"].tolist() for b in batches] == [[0, 0], [1, 1], [0, 0], [1, 1], [0, 0],
                                                         [1]]
        assert all(v == 2 for b in batches for v in b["nw"].tolist())
        assert len({v for b in batches for v in b["seed"].tolist()}) == 1   # base_seed + id
    # DIFFERENCES.md: workers are spawned (torch forks on Linux; fork is unsafe under JAX)
    assert type(loader._iterator._workers[0]._popen).__module__ == \
        "multiprocessing.popen_spawn_posix"
    loader._iterator._shutdown_workers()
    assert all(not w.is_alive() for w in loader._iterator._workers)
    ref = list(tud.DataLoader(H.Squares(9), batch_size=4))   # in order, as with workers
    same(list(lud.DataLoader(H.Squares(9), batch_size=4, num_workers=2)), ref)


def test_workers_iterable_dataset_matches_torch():
    # worker 0 yields 0..4 (two batches), worker 1 yields 5..8 (one batch, then it is done):
    # the interleaving and the early-exhausted worker follow torch
    ours = list(lud.DataLoader(H.make_sharded("torchlike", 0, 9), batch_size=4,
                               num_workers=2))
    theirs = list(tud.DataLoader(H.make_sharded("torch", 0, 9), batch_size=4, num_workers=2))
    same(ours, theirs)
    assert [b.tolist() for b in ours] == [[0, 1, 2, 3], [5, 6, 7, 8], [4]]


def test_worker_error_carries_worker_traceback():
    loader = lud.DataLoader(H.Failing(10, 5), batch_size=2, num_workers=2)
    with pytest.raises(ValueError) as ours:
        list(loader)
    # torch's own ExceptionWrapper gives the reference message format (running torch's
    # forked workers here would be slow to shut down: the parent process runs JAX threads)
    from torch._utils import ExceptionWrapper
    try:
        H.Failing(10, 5)[5]
    except ValueError:
        wrapped = ExceptionWrapper(where="in DataLoader worker process 0")
    with pytest.raises(ValueError) as theirs:
        wrapped.reraise()
    msg = str(ours.value)
    assert msg.splitlines()[:2] == str(theirs.value).splitlines()[:2]
    assert "Caught ValueError in DataLoader worker process 0." in msg
    assert "Caught ValueError in DataLoader worker process 0." in str(theirs.value)
    assert "Traceback (most recent call last)" in msg
    assert "sample 5 is broken on purpose" in msg and "__getitem__" in msg
    assert "_data_helpers.py" in msg


def _torchs_dead_worker_message():
    """torch's error (its SIGCHLD handler's, in C) for a worker that exited with code 3: a
    child process is left unreaped for torch to find."""
    import subprocess
    child = subprocess.Popen([sys.executable, "-c", "import os; os._exit(3)"])
    try:
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)     # exited, not reaped
        torch._C._set_worker_pids(id(child), (child.pid,))
        try:
            torch._C._error_if_any_worker_fails()
        except RuntimeError as e:
            return str(e)
        finally:
            torch._C._remove_worker_pids(id(child))
    finally:
        child.wait()
    raise AssertionError("torch did not report the dead worker")


def test_dead_worker_is_reported():
    loader = lud.DataLoader(H.Exiting(), batch_size=1, num_workers=1)
    with pytest.raises(RuntimeError, match="exited unexpectedly") as ours:
        list(loader)
    # H.Exiting's worker exits with code 3: torch's words for that, the pid aside
    theirs = _torchs_dead_worker_message()
    pid_of = re.compile(r"\(pid (\d+)\)")
    assert pid_of.sub("(pid N)", str(ours.value)) == pid_of.sub("(pid N)", theirs)


def test_workers_in_order_false_hands_out_ready_batches():
    loader = lud.DataLoader(H.SlowFirst(), batch_size=2, num_workers=2, in_order=False)
    batches = [b.tolist() for b in loader]
    assert sorted(x for b in batches for x in b) == list(range(8))
    assert batches[0] != [0, 1] and batches.index([0, 1]) > 0    # the slow batch came later


def test_distributed_sampler():
    def f(m, ud):
        out = []
        for n, reps, dl in ((10, 3, False), (10, 3, True), (2, 5, False), (12, 4, False)):
            for rank in range(reps):
                s = ud.DistributedSampler(range(n), num_replicas=reps, rank=rank, shuffle=False,
                                          drop_last=dl)
                out.append((list(s), len(s)))
        return out
    ours, theirs = both(f)
    assert ours == theirs
    shards = [list(lud.DistributedSampler(range(11), 3, r, seed=4)) for r in range(3)]
    assert set(sum(shards, [])) == set(range(11)) and all(len(s) == 4 for s in shards)
    s = lud.DistributedSampler(range(11), 3, 0, seed=4)
    e0 = list(s)
    s.set_epoch(1)
    assert list(s) != e0 and list(lud.DistributedSampler(range(11), 3, 0, seed=4)) == e0
    for m, ud in LIBS:
        with pytest.raises(ValueError, match="Invalid rank 3"):
            ud.DistributedSampler(range(4), num_replicas=3, rank=3)


def _signature(fn):
    import inspect
    return [(p.name, p.kind, p.default is inspect.Parameter.empty,
             p.default if isinstance(p.default, (bool, int, str, type(None))) else
             type(p.default).__name__)
            for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("name", tud.__all__)
def test_public_signatures_are_torchs(name):
    """Each public function's and each public class's methods' parameters: names, kinds,
    which are required, simple defaults (random_split's generator: the default generator)."""
    theirs, ours = getattr(tud, name), getattr(lud, name, None)
    if name in ("IterDataPipe", "MapDataPipe", "DFIterDataPipe", "DataChunk",
                "functional_datapipe", "guaranteed_datapipes_determinism", "non_deterministic",
                "runtime_validation", "runtime_validation_disabled", "argument_validation"):
        assert ours is None       # torch's legacy DataPipes: not provided
        return
    if not isinstance(theirs, type):
        assert _signature(ours) == _signature(theirs)
        return
    diffs = [attr for attr in dir(theirs)
             if (not attr.startswith("_") or attr == "__init__")
             and callable(getattr(theirs, attr)) and not isinstance(getattr(theirs, attr), type)
             and (not hasattr(ours, attr)
                  or _signature(getattr(ours, attr)) != _signature(getattr(theirs, attr)))]
    assert diffs == []
