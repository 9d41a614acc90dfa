"""A rank started by torchlike's launcher joins ``jax.distributed`` on ``import torchlike``.

jax requires ``jax.distributed.initialize`` before anything starts its backends, and
``import torchlike`` looks the backends up (the device fast paths). So a process started by
``python -m torchlike.distributed.run`` or ``torchlike.multiprocessing.spawn`` carries the job's
shape in its environment and joins the job here, before the first device lookup:

* ``TORCHLIKE_JAX_COORDINATOR`` -- ``host:port`` of jax's coordination service (rank 0 hosts it);
* ``TORCHLIKE_JAX_NUM_PROCESSES`` and ``TORCHLIKE_JAX_PROCESS_ID``;
* ``TORCHLIKE_DIST_TIMEOUT`` (seconds, optional) -- how long jax waits for every rank to join.

On CPU the processes' collectives run over gloo (``jax_cpu_collectives_implementation``).
``init_process_group`` then only checks that its rank and world size are the ones joined here.
A rank of a job of several processes compiles in the foreground (``_tiers.BACKGROUND_COMPILE``
off) and leaves the interpreter tier at its count alone (``_tiers.INTERPRET_BUDGET`` 0), so that
every rank leaves it at the same call.
"""
from __future__ import annotations

import os
import sys

__all__ = ["join_from_env", "joined"]

_joined = [None]     # (num_processes, process_id) once joined


def joined():
    """``(num_processes, process_id)`` of the jax job this process joined, or None."""
    return _joined[0]


def _is_launcher():
    """Whether this process is ``python -m torchlike.distributed.run`` itself."""
    argv = getattr(sys, "orig_argv", [])
    return any(a == "-m" and b in ("torchlike.distributed.run", "torchlike.distributed.launch")
               for a, b in zip(argv, argv[1:]))


def join_from_env():
    if _is_launcher():
        # the launcher only starts and watches ranks: it must not take the accelerators
        # (jax's GPU client reserves most of each GPU's memory when it starts)
        import jax
        jax.config.update("jax_platforms", "cpu")
        return
    addr = os.environ.get("TORCHLIKE_JAX_COORDINATOR")
    if not addr or _joined[0] is not None:
        return
    import jax
    # taken out of the environment: this rank's own children (DataLoader workers, ...) are
    # not ranks and must not join the job
    os.environ.pop("TORCHLIKE_JAX_COORDINATOR")
    n = int(os.environ.pop("TORCHLIKE_JAX_NUM_PROCESSES"))
    pid = int(os.environ.pop("TORCHLIKE_JAX_PROCESS_ID"))
    timeout = int(float(os.environ.get("TORCHLIKE_DIST_TIMEOUT", "300")))
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(addr, n, pid, initialization_timeout=timeout)
    _joined[0] = (n, pid)
    if n > 1:
        # every rank must move a function from the interpreter tier to its compiled program at
        # the same call: their float results differ in the last bits, and DDP's ranks keep
        # their parameters equal by computing the same thing (a compile that finishes in the
        # background at a time that depends on the machine's load would let them drift)
        from . import _tiers
        _tiers.BACKGROUND_COMPILE = False
        _tiers.INTERPRET_BUDGET = 0.0       # (the count alone decides: a call's cost varies)
