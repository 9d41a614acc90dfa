"""A worker script run as a 2-rank job under torchlike and under torch (gloo) at once, each
under a timeout, in its own session, every process reaped; each rank writes its results as
``<lib>.rank<r>.json``. And the comparison of the two jobs' JSON values."""
import json
import math
import os
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT",
              "TORCHLIKE_JAX_COORDINATOR", "XLA_FLAGS", "JAX_NUM_CPU_DEVICES"):
        env.pop(k, None)
    env["PYTHONWARNINGS"] = "ignore"
    return env


def run_jobs(worker, d, timeout=240, ranks=2):
    """``{lib: [rank 0's results, rank 1's, ...]}`` of ``worker`` run under each library in
    directory ``d``. torch's job, the reference, runs again once where it timed out: its gloo
    ranks can hang on a loaded 2-core machine (once in a CI run, in a DDP bucket test that
    passes alone); torchlike's job does not get a second chance."""
    res = _jobs(worker, d, ("torchlike", "torch"), timeout, ranks)
    if res.get("torch") == "timeout":
        res.update(_jobs(worker, d, ("torch",), timeout, ranks))
    for lib, got in res.items():
        assert not isinstance(got, str), got
    return res


def _jobs(worker, d, libs, timeout, ranks):
    procs = {lib: subprocess.Popen([sys.executable, worker, lib, str(d / lib)], cwd=ROOT,
                                   env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, start_new_session=True)
             for lib in libs}
    deadline = time.monotonic() + timeout
    errs, late = {}, set()
    try:
        for lib, p in procs.items():
            try:
                _, errs[lib] = p.communicate(timeout=max(deadline - time.monotonic(), 1))
            except subprocess.TimeoutExpired:
                late.add(lib)
                os.killpg(p.pid, signal.SIGKILL)          # (the session the job started)
                _, errs[lib] = p.communicate()
    finally:
        for p in procs.values():        # (the other job too, if one timed out or raised)
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate()
    res = {}
    for lib, p in procs.items():
        if lib == "torch" and lib in late:
            res[lib] = "timeout"
        elif p.returncode:
            res[lib] = f"{lib} job failed ({p.returncode}):\n{errs[lib][-4000:]}"
        else:
            res[lib] = [json.load(open(d / f"{lib}.rank{r}.json")) for r in range(ranks)]
    return res


def close(a, b, tol=1e-5):
    """JSON values equal, numbers within ``tol`` relative (NaN equals NaN)."""
    if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return a == b or (math.isnan(a) and math.isnan(b)) or abs(a - b) <= tol * max(1, abs(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k], tol) for k in a)
    return a == b
