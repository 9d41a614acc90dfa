"""Time to first results in a fresh process: torchlike (empty and warm compilation cache) vs torch.

Workloads, each run in its own new Python process and timed after the imports:

* ``step``: one MLP training step (784-256-256-10, batch 64, Adam);
* ``batches``: four steps at four new batch sizes (61, 62, 63, 64);
* ``generate``: greedy generation of ``--tokens`` tokens with a tiny GPT (2 blocks, d_model 128,
  4 heads, vocab 256) whose context grows each step under ``no_grad`` (nanoGPT's ``generate``);
* ``topk_ties``: the first ``topk`` of a fifth of 12,800 magnitudes with ties (pruning's
  ``l1_unstructured`` of a ``Linear(400, 32)``; torch's tie order is replayed);
* ``rss``: resident memory after 1,000 and 5,000 warm MLP steps (torchlike only).

torchlike runs with the interpreter tier off and an empty cache (every first call compiles,
once), then ``--repeats`` times with the tier (the default): on a new empty cache and on that
cache warm, each round beside a fresh torch process. First calls move between runs (torch's
own by 2-4x), so each column is the median of its rounds, with the range, and the ratios are
those of the medians. Asserts nothing.
Run: ``python benchmarks/cold_start.py [--tokens 60] [--repeats 3]
[--only step,batches,generate,topk_ties,rss]``
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import textwrap

PRELUDE = textwrap.dedent("""
    import sys, time
    if sys.argv[1] == "torch":
        import torch
    else:
        import torchlike as torch
    nn, F = torch.nn, torch.nn.functional

    def mlp():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                             nn.Linear(256, 10))

    def step(model, opt, b):
        x, y = torch.randn(b, 784), torch.randint(0, 10, (b,))
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        return loss.item()

    class Block(nn.Module):
        def __init__(self, d, h):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            self.h = h

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T, self.h, C // self.h).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / (C // self.h) ** 0.5)
            mask = torch.tril(torch.ones(T, T)).view(1, 1, T, T)
            att = F.softmax(att.masked_fill(mask == 0, float("-inf")), dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            x = x + self.proj(y)
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self, vocab=256, d=128, h=4, n=2, ctx=128):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
            self.blocks = nn.Sequential(*[Block(d, h) for _ in range(n)])
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)

        def forward(self, idx):
            T = idx.shape[1]
            x = self.tok(idx) + self.pos(torch.arange(T))
            return self.head(self.ln(self.blocks(x)))

        @torch.no_grad()
        def generate(self, idx, n):
            for _ in range(n):
                logits = self(idx)[:, -1, :]
                idx = torch.cat([idx, logits.argmax(-1, keepdim=True)], dim=1)
            return idx
""")

WORK = {
    "step": """
        model = mlp(); opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        t0 = time.perf_counter(); step(model, opt, 64); print(time.perf_counter() - t0)
    """,
    "batches": """
        model = mlp(); opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        t0 = time.perf_counter()
        for b in (61, 62, 63, 64):
            step(model, opt, b)
        print(time.perf_counter() - t0)
    """,
    "generate": """
        torch.manual_seed(0); model = GPT().eval()
        t0 = time.perf_counter(); model.generate(torch.zeros(1, 1, dtype=torch.long), TOKENS)
        print(time.perf_counter() - t0)
    """,
    "topk_ties": """
        x = (torch.randn(12800, generator=torch.Generator().manual_seed(0)) * 100).round().abs()
        t0 = time.perf_counter(); torch.topk(x, 2560, largest=False).indices.tolist()
        print(time.perf_counter() - t0)
    """,
    "rss": """
        import resource
        model = mlp(); opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        rss = {}
        for i in range(1, 5001):
            step(model, opt, 64)
            if i in (1000, 5000):
                rss[i] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(rss[1000], rss[5000])
    """,
}


def run(backend, work, env, tokens):
    src = PRELUDE + f"\nTOKENS = {tokens}\n" + textwrap.dedent(WORK[work])
    out = subprocess.run([sys.executable, "-c", src, backend], env=env, capture_output=True,
                         text=True, timeout=3600)
    if out.returncode:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr else "?")
    return out.stdout.split()


def _median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def _cell(xs):
    """``median (min-max)`` of a column's rounds."""
    m = _median(xs)
    return f"{m:.3f}" if len(xs) == 1 else f"{m:.3f} ({min(xs):.3f}-{max(xs):.3f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=60)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", default="step,batches,generate,topk_ties,rss")
    a = ap.parse_args()
    targets = {"step": "<=10x / <=5x", "batches": "<=10x", "generate": "<=15x / <=10x"}
    print(f"torch, cold and warm: median (min-max) of {a.repeats} rounds of fresh processes")
    print(f"{'workload':10s} {'torch s':>22s} {'no tier s':>10s} {'cold s':>22s} "
          f"{'warm s':>22s} {'no tier/torch':>14s} {'cold/torch':>11s} {'warm/torch':>11s}"
          f"  target (cold / warm)")
    for w in a.only.split(","):
        if w == "rss":
            env = dict(os.environ, TORCHLIKE_CACHE_DIR=tempfile.mkdtemp(prefix="torchlike-cache-"))
            try:
                r = run("torchlike", "rss", env, a.tokens)
            except RuntimeError as e:
                r = f"failed: {e}"
            print(f"rss MB after 1000 / 5000 steps: {r}")
            continue
        off = dict(os.environ, TORCHLIKE_INTERPRET_CALLS="0", TORCHLIKE_CACHE_DIR=tempfile.mkdtemp(
            prefix="torchlike-cache-off-"))
        got = {"torch": [], "cold": [], "warm": []}
        try:
            notier = float(run("torchlike", w, off, a.tokens)[0])     # every first call compiles
            for _ in range(a.repeats):
                env = dict(os.environ,
                           TORCHLIKE_CACHE_DIR=tempfile.mkdtemp(prefix="torchlike-cache-"))
                got["torch"].append(float(run("torch", w, env, a.tokens)[0]))
                got["cold"].append(float(run("torchlike", w, env, a.tokens)[0]))  # empty cache
                got["warm"].append(float(run("torchlike", w, env, a.tokens)[0]))  # from the cache
        except (RuntimeError, ValueError, IndexError) as e:
            print(w, "failed:", e, got)
            continue
        t, cold, warm = (_median(got[k]) for k in ("torch", "cold", "warm"))
        print(f"{w:10s} {_cell(got['torch']):>22s} {notier:10.3f} {_cell(got['cold']):>22s} "
              f"{_cell(got['warm']):>22s} {notier / t:13.1f}x {cold / t:10.1f}x "
              f"{warm / t:10.1f}x  {targets.get(w, '')}")


if __name__ == "__main__":
    main()
