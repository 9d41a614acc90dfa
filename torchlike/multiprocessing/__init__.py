"""torchlike.multiprocessing: Python's multiprocessing plus torch's ``spawn`` helpers.

Tensors travel between processes by pickling (their data is copied: jax arrays have no shared
memory between processes), so the sharing strategies are accepted names only. Use the
``spawn`` start method for processes that run jax (``fork`` after jax started is unsafe)."""
from __future__ import annotations

import multiprocessing
import multiprocessing as _mp
import os
import sys
from multiprocessing import *  # noqa: F401,F403

__all__ = list(getattr(_mp, "__all__", [])) + [
    "spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
    "ProcessExitedException", "SpawnContext", "set_sharing_strategy", "get_sharing_strategy",
    "get_all_sharing_strategies"]

_strategy = ["file_descriptor" if sys.platform != "darwin" else "file_system"]


def get_all_sharing_strategies():
    return {"file_descriptor", "file_system"} if sys.platform != "darwin" else {"file_system"}


def set_sharing_strategy(new_strategy):
    if new_strategy not in get_all_sharing_strategies():
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}")
    _strategy[0] = new_strategy


def get_sharing_strategy():
    return _strategy[0]


class ProcessException(Exception):
    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A spawned process raised an exception."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a nonzero code."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code,
                            self.signal_name)


def _wrap(fn, i, args, error_queue):
    import time
    import traceback
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        # with the time it failed: a peer blocked in a collective with this process fails
        # after it, and the first failure is the one to report
        error_queue.put((time.time(), traceback.format_exc()))
        # at once, as torch's: a normal exit would wait in jax.distributed's shutdown barrier
        # for ranks that may be blocked in a collective with this one
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)


class ProcessContext:
    def __init__(self, processes, error_queues):
        self.processes = processes
        self.error_queues = error_queues

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """True when every process finished; on the first failure the others are ended and
        the failure raised, as torch does (whichever process fails first, while the others
        may still be blocked in a collective)."""
        import multiprocessing.connection
        alive = {p.sentinel: i for i, p in enumerate(self.processes) if p.exitcode is None}
        if alive:
            multiprocessing.connection.wait(list(alive), timeout)
        failed = [i for i, p in enumerate(self.processes) if p.exitcode not in (None, 0)]
        if not failed:
            return all(p.exitcode == 0 for p in self.processes)
        for q in self.processes:
            if q.is_alive():
                q.terminate()
        for q in self.processes:
            q.join(5)
            if q.is_alive():
                q.kill()
                q.join()
        # of the processes that failed before the others were ended, the one that raised
        # first (its peers' collectives fail after it); else the first to exit with a code
        raised = {i: self.error_queues[i].get() for i in failed
                  if not self.error_queues[i].empty()}
        failed = min(raised, key=lambda i: raised[i][0]) if raised else failed[0]
        p = self.processes[failed]
        if failed in raised:
            tb = raised[failed][1]
            msg = f"\n\n-- Process {failed} terminated with the following error:\n{tb}"
            raise ProcessRaisedException(msg, failed, p.pid)
        if p.exitcode < 0:
            import signal
            name = signal.Signals(-p.exitcode).name
            raise ProcessExitedException(f"process {failed} terminated with signal {name}",
                                         failed, p.pid, p.exitcode, name)
        raise ProcessExitedException(
            f"process {failed} terminated with exit code {p.exitcode}", failed, p.pid,
            p.exitcode)


SpawnContext = ProcessContext


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Run ``fn(i, *args)`` for ``i`` in ``range(nprocs)``, each in its own process.

    With ``nprocs > 1`` and the ``spawn`` method the processes form one jax job: process ``i``
    joins ``jax.distributed`` as process ``i`` of ``nprocs`` when it imports torchlike (a
    coordinator on a free localhost port), so ``fn`` may call ``init_process_group(rank=i,
    world_size=nprocs)`` as with torch."""
    ctx = multiprocessing.get_context(start_method)
    procs, queues = [], []
    job = {}
    if nprocs > 1 and start_method == "spawn":
        job = {"TORCHLIKE_JAX_COORDINATOR": f"127.0.0.1:{_free_port()}",
               "TORCHLIKE_JAX_NUM_PROCESSES": str(nprocs),
               # programs on disk are keyed without their device: not shared between ranks
               "TORCHLIKE_PROGRAM_CACHE": os.environ.get("TORCHLIKE_PROGRAM_CACHE", "0")}
    saved = {k: os.environ.get(k) for k in list(job) + ["TORCHLIKE_JAX_PROCESS_ID"]}
    try:
        for i in range(nprocs):
            if job:     # a spawned child inherits the environment at start()
                os.environ.update(job, TORCHLIKE_JAX_PROCESS_ID=str(i))
            q = ctx.SimpleQueue()
            p = ctx.Process(target=_wrap, args=(fn, i, args, q), daemon=daemon)
            p.start()
            procs.append(p)
            queues.append(q)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    context = ProcessContext(procs, queues)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """torch.multiprocessing.spawn (start_method 'spawn')."""
    if start_method != "spawn":
        import warnings
        warnings.warn(f"This method only supports start_method=spawn (got: {start_method}).\n"
                      f"To use a different start_method use:\n\t\t "
                      f"torch.multiprocessing.start_processes(...)", FutureWarning,
                      stacklevel=2)
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
