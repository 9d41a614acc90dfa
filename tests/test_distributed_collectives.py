"""Collectives beyond the basics and DDP's communication hooks against torch (gloo), rank by
rank: tests/distributed_workers/collectives.py spawned with 2 ranks under each library
(``multiprocessing.spawn``; both jobs at once, each under a timeout, every process reaped).

ReduceOp dtype rules, all_gather_into_tensor / reduce_scatter_tensor, all_to_all_single with
uneven splits, object collectives and roots, gloo's errors for wrong roots, shapes and dtypes,
async work and its futures, new_group / new_subgroups, and DDP's ``register_comm_hook`` (the
default hooks, custom hooks, the buckets a hook sees, torch's bucket rebuild)."""
import json
import math
import os
import signal
import subprocess
import sys
import time

import pytest

from distributed_workers.once import once

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORKER = os.path.join(HERE, "distributed_workers", "collectives.py")
TIMEOUT = 240


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT",
              "TORCHLIKE_JAX_COORDINATOR", "XLA_FLAGS", "JAX_NUM_CPU_DEVICES"):
        env.pop(k, None)
    env["PYTHONWARNINGS"] = "ignore"
    return env


def _run_jobs(d):
    procs = {lib: subprocess.Popen([sys.executable, WORKER, lib, str(d / lib)], cwd=ROOT,
                                   env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, start_new_session=True)
             for lib in ("torchlike", "torch")}
    deadline = time.monotonic() + TIMEOUT
    errs = {}
    for lib, p in procs.items():
        try:
            _, errs[lib] = p.communicate(timeout=max(deadline - time.monotonic(), 1))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)          # the session this test started
            _, errs[lib] = p.communicate()
    for p in procs.values():        # (the other job too, if one timed out)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
    res = {}
    for lib, p in procs.items():
        assert p.returncode == 0, f"{lib} job failed ({p.returncode}):\n{errs[lib][-4000:]}"
        res[lib] = [json.load(open(d / f"{lib}.rank{r}.json")) for r in range(2)]
    return res


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    return once(tmp_path_factory, "distributed-collectives", _run_jobs)


def _close(a, b, tol=1e-5):
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol * max(1, abs(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], tol) for k in a)
    return a == b


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
