"""Collectives beyond the basics, DDP's communication hooks and ZeRO against torch (gloo), rank by
rank: tests/distributed_workers/collectives.py spawned with 2 ranks under each library
(``multiprocessing.spawn``; both jobs at once, each under a timeout, every process reaped).

ReduceOp dtype rules, all_gather_into_tensor / reduce_scatter_tensor, all_to_all_single with
uneven splits, object collectives and roots, gloo's errors for wrong roots, shapes and dtypes,
async work and its futures, new_group / new_subgroups, and DDP's ``register_comm_hook`` (the
default hooks, custom hooks, the buckets a hook sees, torch's bucket rebuild), and
``ZeroRedundancyOptimizer`` inside DDP."""
import os

import pytest

from distributed_workers.once import once
from distributed_workers.side_by_side import close as _close, run_jobs

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "distributed_workers", "collectives.py")


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    return once(tmp_path_factory, "distributed-collectives", lambda d: run_jobs(WORKER, d))


def _same(jobs, check, skip=()):
    for r in range(2):
        ours, theirs = jobs["torchlike"][r][check], jobs["torch"][r][check]
        assert not isinstance(ours, str), ours
        assert not isinstance(theirs, str), theirs
        for k in theirs:
            if k not in skip:
                assert _close(ours[k], theirs[k]), (r, k, ours[k], theirs[k])


def test_reduce_op_dtype_rules(jobs):
    """AVG needs a floating dtype (torch's sum-then-divide error otherwise), bool takes BXOR,
    complex tensors take SUM/AVG only."""
    _same(jobs, "c_reduce_op_dtype_rules")
    ours = jobs["torchlike"][0]["c_reduce_op_dtype_rules"]
    assert ours["int64AVG"] == ("EXC RuntimeError: result type Float can't be cast to the "
                                "desired output type Long")
    assert ours["boolBXOR"][0] == [False, False, False, True]


def test_tensor_collectives(jobs):
    _same(jobs, "c_tensor_collectives")


def test_all_to_all_uneven_splits(jobs):
    _same(jobs, "c_all_to_all")
    assert jobs["torchlike"][1]["c_all_to_all"]["uneven"][2] == [5, 2]


def test_object_collectives_roots_and_errors(jobs):
    _same(jobs, "c_objects_and_roots")


def test_async_work_and_futures(jobs):
    _same(jobs, "c_work_and_futures")


def test_groups_and_subgroups(jobs):
    _same(jobs, "c_groups")


def test_ddp_comm_hooks(jobs):
    """allreduce_hook equals DDP without a hook; fp16_compress_hook, a summing hook and a hook
    returning a made future give torch's gradients; the bucket a hook sees is torch's."""
    _same(jobs, "c_ddp_comm_hooks")
    ours = jobs["torchlike"][0]["c_ddp_comm_hooks"]
    assert ours["allreduce_hook"] == ours["no_hook"]
    assert ours["twice"] == ("EXC RuntimeError: register_comm_hook or "
                             "register_builtin_comm_hook can only be called once.")


def test_ddp_buckets_and_their_rebuild(jobs):
    """The buckets' parameters, iteration by iteration, exactly; the last bias's gradient
    (three backwards through 300-wide layers, accumulated) within 1e-3: the fused tier's
    matmuls sum in another order than torch's."""
    for r in range(2):
        ours, theirs = jobs["torchlike"][r]["c_ddp_buckets"], jobs["torch"][r]["c_ddp_buckets"]
        assert ours.keys() == theirs.keys()
        for k in theirs:
            assert ours[k][0] == theirs[k][0], (r, k)
            assert _close(ours[k][1], theirs[k][1], 1e-3), (r, k)


# ---------------------------------------------------------------- in this process

def test_futures_as_torchs():
    import torch

    import torchlike
    for lib in (torch, torchlike):
        f = lib.futures.Future()
        order = []
        g = f.then(lambda x: x.value() + 1)
        f.add_done_callback(lambda x: order.append("cb"))
        assert not f.done() and not g.done()
        f.set_result(2)
        assert (f.wait(), g.wait(), g.done(), order) == (2, 3, True, ["cb"])
        with pytest.raises(RuntimeError, match="can only be marked completed once"):
            f.set_result(3)
        h = lib.futures.Future()
        k = h.then(lambda x: x.value())
        h.set_exception(ValueError("boom"))
        with pytest.raises(ValueError, match="boom"):
            h.wait()
        with pytest.raises(RuntimeError,
                           match="^Got the following error when running the callback: "
                                 "ValueError: boom"):
            k.wait()
        a, b = lib.futures.Future(), lib.futures.Future()
        both = lib.futures.collect_all([a, b])
        a.set_result(1)
        assert not both.done()
        b.set_result(2)
        assert [x.value() for x in both.wait()] == [1, 2]
        assert lib.futures.wait_all([a, b]) == [1, 2]


def test_zero_redundancy_optimizer_as_torchs(jobs):
    """ZeroRedundancyOptimizer (Adam) inside DDP: each rank's share of the parameters (torch's
    largest-first assignment), the losses and parameters of three steps, the state dict
    consolidated on rank 0 (its refusal on rank 1), a reload into a fresh optimizer followed by
    a step, and a parameter group added later."""
    for r in range(2):
        ours, theirs = jobs["torchlike"][r]["c_zero_training_and_state_dicts"], \
            jobs["torch"][r]["c_zero_training_and_state_dicts"]
        assert not isinstance(ours, str), ours
        assert ours["share"] == theirs["share"]
        for k in theirs:
            assert _close(ours[k], theirs[k], 1e-4), (r, k, ours[k], theirs[k])
    assert jobs["torch"][1]["c_zero_training_and_state_dicts"]["refused"].startswith(
        "EXC RuntimeError: Optimizer state has not been consolidated")


def test_zero_redundancy_optimizer_overlap_with_ddp_is_a_clear_error():
    import torchlike
    from torchlike.distributed.optim import ZeroRedundancyOptimizer
    with pytest.raises(NotImplementedError, match="overlap_with_ddp=True"):
        ZeroRedundancyOptimizer(torchlike.nn.Linear(2, 2).parameters(),
                                optimizer_class=torchlike.optim.SGD, overlap_with_ddp=True, lr=1)
