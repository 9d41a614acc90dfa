"""torch.nn.parallel's multi-GPU primitives against torch on CPU: what they do without tensors,
and torch's errors on CPU tensors (old multi-GPU code imports them; a program guarded by
``torch.cuda.is_available()`` must at least import)."""
import pytest
import torch

import torchlike

from oracle import both_outcomes


def _sg(m):
    return m.nn.parallel.scatter_gather


CASES = {
    "scatter a tuple of ints": lambda m: m.nn.parallel.scatter((1, 2), [0, 1]),
    "scatter a list": lambda m: m.nn.parallel.scatter([1, "a"], [0, 1]),
    "scatter a dict": lambda m: m.nn.parallel.scatter({"a": 1, "b": 2}, [0, 1]),
    "scatter an empty tuple": lambda m: m.nn.parallel.scatter((), [0, 1]),
    "scatter an object": lambda m: m.nn.parallel.scatter(3, [0, 1, 2]),
    "scatter a tensor": lambda m: m.nn.parallel.scatter(m.ones(4), [0]),
    "scatter a tensor in a tuple": lambda m: m.nn.parallel.scatter((1, m.ones(4)), [0]),
    "scatter_kwargs": lambda m: _sg(m).scatter_kwargs((1,), {"k": 2, "j": 3}, [0, 1]),
    "scatter_kwargs of nothing": lambda m: _sg(m).scatter_kwargs((), {}, [0, 1]),
    "scatter_kwargs of a tensor": lambda m: _sg(m).scatter_kwargs((m.ones(2),), {}, [0]),
    "gather None": lambda m: m.nn.parallel.gather([None, None], 0),
    "gather tuples": lambda m: m.nn.parallel.gather([(None,), (None,)], 0),
    "gather dicts": lambda m: m.nn.parallel.gather([{"a": None}, {"a": None}], 0),
    "gather dicts of other keys": lambda m: m.nn.parallel.gather(
        [{"a": None}, {"a": None, "b": None}], 0),
    "gather tensors": lambda m: m.nn.parallel.gather([m.ones(2), m.ones(2)], 0),
    "replicate on no device": lambda m: m.nn.parallel.replicate(m.nn.Linear(2, 2), []),
    "replicate a CPU module": lambda m: m.nn.parallel.replicate(m.nn.Linear(2, 2), [0]),
    "parallel_apply": lambda m: m.nn.parallel.parallel_apply([m.nn.Linear(2, 2)],
                                                             [(m.ones(2),)]),
    "parallel_apply with more inputs": lambda m: m.nn.parallel.parallel_apply(
        [m.nn.Linear(2, 2)], [(m.ones(2),), (m.ones(2),)]),
    "parallel_apply with more kwargs": lambda m: m.nn.parallel.parallel_apply(
        [m.nn.Linear(2, 2)], [(m.ones(2),)], [{}, {}]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_as_torch_on_cpu(name):
    got = both_outcomes(CASES[name])
    if got is not None:
        ours, theirs = got
        assert ours == theirs


def test_the_names_import_as_torchs():
    from torchlike.nn.parallel import gather, parallel_apply, replicate, scatter  # noqa: F401
    for n in ("scatter", "gather", "replicate", "parallel_apply"):
        assert hasattr(torch.nn.parallel, n) and hasattr(torchlike.nn.parallel, n)


def test_the_scatter_gather_module_path():
    from torchlike.nn.parallel.scatter_gather import gather, scatter, scatter_kwargs  # noqa
    from torch.nn.parallel.scatter_gather import gather, scatter, scatter_kwargs  # noqa: F811


def test_tensors_off_the_cpu_are_refused_naming_the_function():
    """torch scatters, gathers, replicates and applies across GPUs; torchlike runs a module on
    one device: tensors on another device than the CPU (the meta device here) raise a
    NotImplementedError naming the function (DIFFERENCES.md)."""
    P = torchlike.nn.parallel
    calls = {"scatter": lambda: P.scatter(torchlike.ones(2, device="meta"), [0]),
             "gather": lambda: P.gather([torchlike.ones(2, device="meta")], 0),
             "replicate": lambda: P.replicate(torchlike.nn.Linear(2, 2, device="meta"), [0])}
    for name, call in calls.items():
        with pytest.raises(NotImplementedError, match=f"torch.nn.parallel.{name}: torchlike "
                                                      f"runs a module on one device"):
            call()
