"""Resident memory across many view-then-write iterations (issue 4): it must stay flat.

Each iteration takes views of a tensor (slice, transpose, detach, .data), writes through them
(with and without autograd), and runs a backward through a CopySlices write. The script prints
the resident set size every 1,000 iterations and the growth from the first checkpoint.
Run: ``python benchmarks/view_memory.py [--iters 10000]``. Asserts nothing.
"""
from __future__ import annotations

import argparse
import gc
import resource  # noqa: F401  (documents that Linux's /proc is read below)

import torchlike as torch


def rss_mb():
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * 4096 / 2 ** 20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=10_000)
    args = ap.parse_args()
    base = torch.zeros(64, 64)
    w = torch.ones(64, requires_grad=True)
    marks = []
    for i in range(args.iters):
        v = base[i % 64]
        v.add_(1.0)
        base.t()[3].mul_(0.5)
        base.data.clamp_(-1e3, 1e3) if hasattr(base, "clamp_") else base.data.mul_(1.0)
        y = w * 2
        y[1:5].mul_(3)
        y.sum().backward()
        if i % 1000 == 0:
            gc.collect()
            marks.append((i, rss_mb()))
    gc.collect()
    marks.append((args.iters, rss_mb()))
    print(f"{'iteration':>10}{'RSS MB':>10}")
    for i, m in marks:
        print(f"{i:>10}{m:>10.1f}")
    first = marks[1][1] if len(marks) > 2 else marks[0][1]
    print(f"growth after warm-up (iteration 1000 -> {args.iters}): {marks[-1][1] - first:+.1f} MB")
    print(f"live aliases of the base at the end: {len(base.__dict__.get('_aliases', ()))}")


if __name__ == "__main__":
    main()
