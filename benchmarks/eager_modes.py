"""Strict and fused eager side by side, each contestant alone in a fresh process.

    python benchmarks/eager_modes.py [--only chain,mlp,gpt,matmul] [--repeats 2]

The training steps of ``workloads.py`` (loss read every step) under torchlike strict eager,
torchlike fused eager, torch eager and the hand-written JAX step of ``compile.py``. Each run
is its own process: warm-up steps (then, for torchlike, until the background compiles are
done), then five timed rounds, keeping the best; every contestant runs ``--repeats`` times,
interleaved, and the median is printed with the ratios. Wall and CPU time (every thread of
the process: XLA's, the background compiles') are both given.

``compile.py`` times every contestant in one process; there, a strict and a fused model of
eight 1024x1024 matmuls side by side skew each other (measured on 2026-12-06: strict 250 ms,
fused 376, where each alone runs 316-325 and 306-308), which this benchmark avoids.
XLA's persistent compilation cache is off (``TORCHLIKE_COMPILATION_CACHE=0``), and the interpreter
tier's count alone decides when a signature compiles (``TORCHLIKE_INTERPRET_BUDGET_MS=0``): the
warm-up reaches the steady state (``scripts.py`` times the default's first steps).

torch's process imports jax too, as every other contestant's does: torch eager alone in a
process ran the MLP step in 2.8-3.2 ms, and 1.6-1.9 ms once jax (or scipy.special) was imported
in it, before or after torch (2026-12-06, 2-core AMD EPYC): torch is timed at its faster figure.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
STEPS = {"chain": 100, "mlp": 30, "gpt": 10, "matmul": 3}

CHILD = textwrap.dedent("""
    import json, os, sys, time
    sys.path.insert(0, sys.argv[1])
    kind, mode, n = sys.argv[2], sys.argv[3], int(sys.argv[4])
    if mode == "torch":
        import jax  # noqa: F401  (the libraries the other contestants load: see the docstring)
        import torch as lib
        lib.set_num_threads(os.cpu_count() or 1)
    elif mode == "jax":
        import compile as bench
        run = bench.make_jax_step(kind)
    else:
        import torchlike as lib
        lib.eager.set_mode(mode)
    if mode != "jax":
        import workloads
        _model, _opt, step, batch, _holder = workloads.WORKLOADS[kind](lib)
        run = lambda: step(*batch())
    read = lambda loss: float(loss.item() if hasattr(loss, "item") else loss)
    for _ in range(max(20, n)):
        read(run())
    if mode in ("strict", "fused"):
        lib.eager.wait_compiles()
    for _ in range(5):
        read(run())
    wall = cpu = float("inf")
    for _ in range(5):
        t, c = time.perf_counter(), time.process_time()
        for _ in range(n):
            read(run())
        wall = min(wall, (time.perf_counter() - t) / n)
        cpu = min(cpu, (time.process_time() - c) / n)
    print(json.dumps({"ms": wall * 1e3, "cpu_ms": cpu * 1e3}))
""")


def run(kind, mode, n):
    env = dict(os.environ, TORCHLIKE_COMPILATION_CACHE="0", TORCHLIKE_INTERPRET_BUDGET_MS="0")
    r = subprocess.run([sys.executable, "-c", CHILD, HERE, kind, mode, str(n)],
                       capture_output=True, text=True, env=env, timeout=1800)
    if r.returncode:
        return {"error": r.stderr.strip().splitlines()[-1][:120] if r.stderr else r.returncode}
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="chain,mlp,gpt,matmul")
    ap.add_argument("--repeats", type=int, default=2)
    a = ap.parse_args()
    modes = ("strict", "fused", "torch", "jax")
    print(f"# eager modes, each contestant in a fresh process, {time.strftime('%Y-%m-%d %H:%M')}, "
          f"{os.cpu_count()} cores")
    print("| workload | strict | fused | torch eager | JAX step | fused vs strict | fused vs torch "
          "| fused vs JAX | CPU ms strict / fused |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind in a.only.split(","):
        got = {m: [] for m in modes}
        for _ in range(a.repeats):
            for m in modes:
                got[m].append(run(kind, m, STEPS[kind]))
        med = {}
        for m in modes:
            ok = [r for r in got[m] if "ms" in r]
            med[m] = ({"ms": statistics.median(r["ms"] for r in ok),
                       "cpu_ms": statistics.median(r["cpu_ms"] for r in ok)} if ok else None)
        cell = {m: (f"{med[m]['ms']:.2f}" if med[m] else "failed") for m in modes}

        def ratio(x, y):
            return f"{med[x]['ms'] / med[y]['ms']:.2f}x" if med[x] and med[y] else "-"
        cpu = (f"{med['strict']['cpu_ms']:.2f} / {med['fused']['cpu_ms']:.2f}"
               if med["strict"] and med["fused"] else "-")
        print(f"| {kind} | {cell['strict']} | {cell['fused']} | {cell['torch']} | {cell['jax']} "
              f"| {ratio('fused', 'strict')} | {ratio('fused', 'torch')} "
              f"| {ratio('fused', 'jax')} | {cpu} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
