"""``python -m torchlike.distributed.run`` -- torchrun for torchlike.

Starts ``--nproc-per-node`` copies of a script on this node, each with torchrun's environment
(``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``, ``LOCAL_WORLD_SIZE``, ``GROUP_RANK``, ``MASTER_ADDR``,
``MASTER_PORT``, ``TORCHELASTIC_RUN_ID``, ...) plus the address of jax's coordination service
(``TORCHLIKE_JAX_COORDINATOR`` = ``MASTER_ADDR:MASTER_PORT``, hosted by rank 0), so that each
rank joins ``jax.distributed`` when it imports torchlike. Multi-node: run it on every node with
the same ``--nnodes``, ``--master-addr`` and ``--master-port`` and each node's ``--node-rank``.

The launcher watches its children: when one fails (non-zero exit or a signal) it ends the others
and exits non-zero, naming the failed rank, as torchrun does; on SIGINT/SIGTERM it forwards the
signal and reaps every child. Elastic restarts (``--max-restarts``) are not run: a failed job
ends.

    python -m torchlike.distributed.run --nproc-per-node 2 train.py --epochs 3
"""
from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import time
import uuid

__all__ = ["main", "parse_args", "get_args_parser", "run"]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get_args_parser():
    p = argparse.ArgumentParser(description="torchlike distributed launcher (torchrun's flags)")
    a = p.add_argument
    a("--nnodes", type=str, default="1:1")
    a("--nproc-per-node", "--nproc_per_node", type=str, default="1")
    a("--node-rank", "--node_rank", type=int, default=0)
    a("--master-addr", "--master_addr", type=str, default="127.0.0.1")
    a("--master-port", "--master_port", type=int, default=None)
    a("--standalone", action="store_true")
    a("--rdzv-backend", "--rdzv_backend", type=str, default="static")
    a("--rdzv-endpoint", "--rdzv_endpoint", type=str, default="")
    a("--rdzv-id", "--rdzv_id", type=str, default="none")
    a("--rdzv-conf", "--rdzv_conf", type=str, default="")
    a("--max-restarts", "--max_restarts", type=int, default=0)
    a("--monitor-interval", "--monitor_interval", type=float, default=0.1)
    a("--start-method", "--start_method", type=str, default="spawn")
    a("--role", type=str, default="default")
    a("-m", "--module", action="store_true")
    a("--no-python", "--no_python", action="store_true")
    a("--run-path", "--run_path", action="store_true")
    a("--log-dir", "--log_dir", type=str, default=None)
    a("--redirects", "-r", type=str, default="0")
    a("--tee", "-t", type=str, default="0")
    a("--local-addr", "--local_addr", type=str, default=None)
    a("--shutdown-timeout", "--shutdown_timeout", type=float, default=5.0,
      help="seconds between SIGTERM and SIGKILL when ending the other ranks")
    a("training_script", type=str)
    a("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args):
    return get_args_parser().parse_args(args)


def _nproc(v):
    if v in ("cpu", "auto", "gpu", "xla"):
        return os.cpu_count() if v == "cpu" else 1
    return int(v)


def _nnodes(v):
    lo, _, hi = v.partition(":")
    if hi and hi != lo:
        raise ValueError(f"--nnodes={v}: elastic node ranges are not supported; give one number")
    return int(lo)


def _child_env(args, local_rank, nproc, nnodes, addr, port, run_id):
    rank = args.node_rank * nproc + local_rank
    world = nnodes * nproc
    env = dict(os.environ)
    env.update({
        "RANK": str(rank), "LOCAL_RANK": str(local_rank), "WORLD_SIZE": str(world),
        "LOCAL_WORLD_SIZE": str(nproc), "GROUP_RANK": str(args.node_rank),
        "GROUP_WORLD_SIZE": str(nnodes), "ROLE_RANK": str(rank), "ROLE_WORLD_SIZE": str(world),
        "ROLE_NAME": args.role, "MASTER_ADDR": addr, "MASTER_PORT": str(port),
        "TORCHELASTIC_RUN_ID": run_id, "TORCHELASTIC_RESTART_COUNT": "0",
        "TORCHELASTIC_MAX_RESTARTS": str(args.max_restarts),
        "TORCHELASTIC_USE_AGENT_STORE": "False",
        "TORCHLIKE_JAX_COORDINATOR": f"{addr}:{port}",
        "TORCHLIKE_JAX_NUM_PROCESSES": str(world), "TORCHLIKE_JAX_PROCESS_ID": str(rank),
    })
    if world > 1:
        # torchlike's on-disk program cache keys programs without the device they were
        # compiled for: a rank would load another rank's executable (see the README)
        env.setdefault("TORCHLIKE_PROGRAM_CACHE", "0")
    if nproc > 1:
        env.setdefault("OMP_NUM_THREADS", "1")
        # one accelerator per rank (jax.distributed reads it; CPU ignores it)
        env.setdefault("JAX_LOCAL_DEVICE_IDS", str(local_rank))
    return env


def _command(args):
    if args.no_python:
        return [args.training_script] + args.training_script_args
    py = [sys.executable, "-u"]
    if args.module:
        return py + ["-m", args.training_script] + args.training_script_args
    return py + [args.training_script] + args.training_script_args


def _describe(code):
    if code < 0:
        try:
            return f"exitcode: {code} (pid killed by signal {signal.Signals(-code).name})"
        except ValueError:
            return f"exitcode: {code}"
    return f"exitcode: {code}"


def _end(procs, timeout):
    """SIGTERM every child still running, SIGKILL those left after ``timeout``, reap all."""
    for p in procs:
        if p.poll() is None:
            try:
                p.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + timeout
    for p in procs:
        left = deadline - time.monotonic()
        try:
            p.wait(max(left, 0.01))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def run(args):
    nproc = _nproc(args.nproc_per_node)
    nnodes = _nnodes(args.nnodes)
    addr, port = args.master_addr, args.master_port or 29500
    if args.standalone:
        addr, port = "127.0.0.1", _free_port()
    elif args.rdzv_endpoint:
        host, _, p = args.rdzv_endpoint.rpartition(":")
        addr, port = (host or addr), int(p or port)
    run_id = args.rdzv_id if args.rdzv_id != "none" else uuid.uuid4().hex[:12]
    cmd = _command(args)
    procs = []
    caught = []

    def forward(signum, frame):
        caught.append(signum)
        for p in procs:
            if p.poll() is None:
                p.send_signal(signum)

    old = {s: signal.signal(s, forward) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        for lr in range(nproc):
            procs.append(subprocess.Popen(
                cmd, env=_child_env(args, lr, nproc, nnodes, addr, port, run_id)))
        while True:
            codes = [p.poll() for p in procs]
            failed = [(i, c) for i, c in enumerate(codes) if c not in (None, 0)]
            if failed or caught:
                _end(procs, args.shutdown_timeout)
                if caught:
                    return 128 + caught[0]
                i, c = failed[0]
                rank = args.node_rank * nproc + i
                sys.stderr.write(
                    f"torchlike.distributed.run: ChildFailedError: {args.training_script} "
                    f"FAILED\nRoot Cause (first observed failure):\n  rank: {rank} (local_rank: "
                    f"{i})\n  {_describe(c)}\n  pid: {procs[i].pid}\nThe other ranks were "
                    f"ended.\n")
                return 1
            if all(c == 0 for c in codes):
                return 0
            time.sleep(args.monitor_interval)
    finally:
        _end(procs, args.shutdown_timeout)
        for s, h in old.items():
            signal.signal(s, h)


def main(args=None):
    sys.exit(run(parse_args(sys.argv[1:] if args is None else args)))


if __name__ == "__main__":
    main()
