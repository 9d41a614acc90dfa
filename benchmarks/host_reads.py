"""Loops that read values back often: strict eager, fused eager and torch side by side.

    python benchmarks/host_reads.py [--rounds 6]

Fused eager pays a cut (the pending segment's bookkeeping, then its program or its replay)
at every host read; a loop that reads after every few ops gives it little to fuse. Patterns:

* ``read_each``: one op, then ``.item()`` of its sum;
* ``branch``: five steps of ``h = h.tanh() * 1.1`` with ``if h.max() > 10`` after each;
* ``new_shape``: a new shape at every call (nothing repeats), then ``.item()``;
* ``grad_step``: a tiny forward and backward, then ``loss.item()``;
* ``elements``: ``float(x[3]) + x[5].item()``;
* ``tolist``: ``(x[:10] * 2).tolist()``.

Everything runs in this one process, torchlike's two modes switched in place
(``torchlike.eager.set_mode``) and interleaved with torch, round after round; the best round
of each is printed, in process CPU time per call (every thread: XLA's as well). Asserts nothing.
"""
from __future__ import annotations

import argparse
import time


def patterns(m):
    x = m.randn(100)
    w = m.randn(100, requires_grad=True)
    count = [0]

    def read_each():
        return (x * 2).sum().item()

    def branch():
        h = x
        for _ in range(5):
            h = h.tanh() * 1.1
            if h.max() > 10:
                break
        return h

    def new_shape():
        count[0] += 1
        return (m.ones(count[0] % 500 + 1) * 3).sum().item()

    def grad_step():
        loss = (w * x).sin().sum()
        loss.backward()
        w.grad = None
        return loss.item()

    def elements():
        return float(x[3]) + x[5].item()

    def tolist():
        return (x[:10] * 2).tolist()

    return {f.__name__: f for f in (read_each, branch, new_shape, grad_step, elements, tolist)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--calls", type=int, default=150)
    a = ap.parse_args()
    import torch
    import torchlike
    libs = {"strict": patterns(torchlike), "fused": patterns(torchlike), "torch": patterns(torch)}
    names = list(libs["torch"])
    print(f"{'pattern':10s} {'torch us':>9s} {'strict us':>10s} {'fused us':>9s} "
          f"{'fused/strict':>13s} {'strict/torch':>13s}")
    for name in names:
        best = dict.fromkeys(libs, float("inf"))
        for lib in libs:                        # (warm-up: first calls, compiles)
            if lib != "torch":
                torchlike.eager.set_mode(lib)
            for _ in range(40):
                libs[lib][name]()
            if lib != "torch":
                torchlike.eager.wait_compiles()
        for _ in range(a.rounds):
            for lib in libs:
                if lib != "torch":
                    torchlike.eager.set_mode(lib)
                f = libs[lib][name]
                t = time.process_time()
                for _ in range(a.calls):
                    f()
                best[lib] = min(best[lib], (time.process_time() - t) / a.calls * 1e6)
        print(f"{name:10s} {best['torch']:9.1f} {best['strict']:10.1f} {best['fused']:9.1f} "
              f"{best['fused'] / best['strict']:12.2f}x {best['strict'] / best['torch']:12.1f}x")
    torchlike.eager.set_mode("strict")


if __name__ == "__main__":
    main()
