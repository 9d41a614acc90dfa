"""Time to first results in a fresh process: torchlike (empty and warm compilation cache) vs torch.

Workloads, each run in its own new Python process and timed after the imports:

* ``step``: one MLP training step (784-256-256-10, batch 64, Adam);
* ``batches``: four steps at four new batch sizes (61, 62, 63, 64);
* ``generate``: greedy generation of ``--tokens`` tokens with a tiny GPT (2 blocks, d_model 128,
  4 heads, vocab 256) whose context grows each step under ``no_grad`` (nanoGPT's ``generate``);
* ``rss``: resident memory after 1,000 and 5,000 warm MLP steps (torchlike only).

torchlike runs three times per workload: with the interpreter tier off and an empty cache
(every first call compiles), then with the tier (the default) on an empty and on a warm cache.
Prints seconds, same-run ratios to torch and the targets. Asserts nothing.
Run: ``python benchmarks/cold_start.py [--tokens 60] [--only step,batches,generate,rss]``
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
        return f"failed: {out.stderr.strip().splitlines()[-1] if out.stderr else '?'}"
    return out.stdout.split()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=60)
    ap.add_argument("--only", default="step,batches,generate,rss")
    a = ap.parse_args()
    cache = tempfile.mkdtemp(prefix="torchlike-cache-")
    env = dict(os.environ, TORCHLIKE_CACHE_DIR=cache)
    off = dict(env, TORCHLIKE_INTERPRET_CALLS="0", TORCHLIKE_CACHE_DIR=tempfile.mkdtemp(
        prefix="torchlike-cache-off-"))
    targets = {"step": "<=10x / <=5x", "batches": "<=10x", "generate": "<=15x / <=10x"}
    print(f"{'workload':10s} {'torch s':>8s} {'no tier s':>10s} {'cold s':>8s} {'warm s':>8s} "
          f"{'no tier/torch':>14s} {'cold/torch':>11s} {'warm/torch':>11s}  target (cold / warm)")
    for w in a.only.split(","):
        if w == "rss":
            r = run("torchlike", "rss", env, a.tokens)
            print(f"rss MB after 1000 / 5000 steps: {r}")
            continue
        t = run("torch", w, env, a.tokens)
        notier = run("torchlike", w, off, a.tokens)    # every first call compiles
        cold = run("torchlike", w, env, a.tokens)      # empty cache: first calls interpreted
        warm = run("torchlike", w, env, a.tokens)      # the same programs, from the cache
        try:
            t, notier, cold, warm = float(t[0]), float(notier[0]), float(cold[0]), float(warm[0])
            print(f"{w:10s} {t:8.3f} {notier:10.3f} {cold:8.3f} {warm:8.3f} {notier / t:13.1f}x "
                  f"{cold / t:10.1f}x {warm / t:10.1f}x  {targets.get(w, '')}")
        except (TypeError, ValueError, IndexError):
            print(w, t, notier, cold, warm)


if __name__ == "__main__":
    main()
