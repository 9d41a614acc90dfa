"""Script-shaped loops, each in fresh processes: torch, torchlike strict eager, fused eager.

    python benchmarks/scripts.py [--only makemore,bigram,generate] [--repeats 2] [--steps 400]

Workloads (written once against ``torch``, the module under test):

* ``makemore``: the character-level MLP of Karpathy's makemore lecture, written as in the
  lecture: embedding lookup by indexing (``C[Xb]``), a tanh layer with batch norm by hand,
  ``F.cross_entropy``, ``p.grad = None``, a manual SGD update ``p.data += -lr * p.grad``, a
  minibatch drawn with ``torch.randint`` every step and ``loss.item()`` every step;
* ``bigram``: the bigram model of Karpathy's GPT lecture, written as in the lecture: a batch
  made by ``torch.stack`` of slices ``data[i:i+block_size]`` for each ``i`` of a
  ``torch.randint`` draw (a loop over a tensor, each index read on the host), an embedding
  table's logits, ``F.cross_entropy``, ``zero_grad(set_to_none=True)``, AdamW, ``loss.item()``
  every step;
* ``generate``: nanoGPT-style sampling from a tiny GPT (2 blocks, d_model 128): crop the
  context, top-k, softmax, ``torch.multinomial``, ``torch.cat``, under ``no_grad``.

Each process reports its first steps (imports excluded: traces, interpretation, compiles) and
its steady time per step; every contestant runs ``--repeats`` times, interleaved, and the
medians are printed with the ratios to torch. torch runs on the same cores. Asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import textwrap

MAKEMORE = textwrap.dedent("""
    F = torch.nn.functional
    g = torch.Generator().manual_seed(2147483647)
    N, block, vocab, emb, hid = 20000, 3, 27, 10, 200
    Xtr = torch.randint(0, vocab, (N, block), generator=g)
    Ytr = torch.randint(0, vocab, (N,), generator=g)
    C = torch.randn((vocab, emb), generator=g)
    W1 = torch.randn((block * emb, hid), generator=g) * (5 / 3) / (block * emb) ** 0.5
    b1 = torch.randn(hid, generator=g) * 0.01
    W2 = torch.randn((hid, vocab), generator=g) * 0.01
    b2 = torch.randn(vocab, generator=g) * 0
    bngain, bnbias = torch.ones((1, hid)), torch.zeros((1, hid))
    bnmean, bnstd = torch.zeros((1, hid)), torch.ones((1, hid))
    parameters = [C, W1, b1, W2, b2, bngain, bnbias]
    for p in parameters:
        p.requires_grad = True

    def step(i):
        global bnmean, bnstd
        ix = torch.randint(0, Xtr.shape[0], (32,), generator=g)
        Xb, Yb = Xtr[ix], Ytr[ix]
        emb_ = C[Xb]
        h = emb_.view(emb_.shape[0], -1) @ W1 + b1
        mean, std = h.mean(0, keepdim=True), h.std(0, keepdim=True)
        h = bngain * (h - mean) / std + bnbias
        with torch.no_grad():
            bnmean = 0.999 * bnmean + 0.001 * mean
            bnstd = 0.999 * bnstd + 0.001 * std
        loss = F.cross_entropy(torch.tanh(h) @ W2 + b2, Yb)
        for p in parameters:
            p.grad = None
        loss.backward()
        for p in parameters:
            p.data += -0.1 * p.grad
        return loss.item()
""")

BIGRAM = textwrap.dedent("""
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(1337)
    vocab_size, block_size, batch_size = 65, 8, 32
    data = torch.randint(0, vocab_size, (100000,))

    def get_batch():
        ix = torch.randint(len(data) - block_size, (batch_size,))
        x = torch.stack([data[i:i + block_size] for i in ix])
        y = torch.stack([data[i + 1:i + block_size + 1] for i in ix])
        return x, y

    class BigramLanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)

        def forward(self, idx, targets):
            logits = self.token_embedding_table(idx)
            B, T, C = logits.shape
            return F.cross_entropy(logits.view(B * T, C), targets.view(B * T))

    m = BigramLanguageModel()
    optimizer = torch.optim.AdamW(m.parameters(), lr=1e-3)

    def step(i):
        xb, yb = get_batch()
        loss = m(xb, yb)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return loss.item()
""")

GENERATE = textwrap.dedent("""
    import math
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    d, n_head, T, vocab = 128, 4, 64, 256

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x, mask):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (z.view(b, t, n_head, d // n_head).transpose(1, 2) for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // n_head))
            att = F.softmax(att.masked_fill(mask[:t, :t], float("-inf")), dim=-1)
            x = x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(T, d)
            self.blocks = nn.ModuleList([Block() for _ in range(2)])
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)
            self.register_buffer("mask", torch.triu(torch.ones(T, T, dtype=torch.bool), 1))

        def forward(self, idx):
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
            for blk in self.blocks:
                x = blk(x, self.mask)
            return self.head(self.ln(x))

    model = GPT().eval()
    idx = torch.zeros((1, 1), dtype=torch.long)

    def step(i):
        global idx
        with torch.no_grad():
            logits = model(idx[:, -T:])[:, -1, :] / 0.8
            v, _ = torch.topk(logits, 10)
            logits[logits < v[:, [-1]]] = -float("inf")
            nxt = torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)
            idx = torch.cat((idx, nxt), dim=1)
        if i % 50 == 49:
            idx.tolist()
            idx = idx[:, -1:]
""")

WORKLOADS = {"makemore": MAKEMORE, "bigram": BIGRAM, "generate": GENERATE}

CHILD = textwrap.dedent("""
    import json, sys, time
    lib, warm, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    if lib == "torch":
        import torch
    else:
        import torchlike as torch
        if lib == "fused":
            torch.eager.set_mode("fused")
    t0 = time.perf_counter()
    exec(sys.stdin.read())
    for i in range(warm):
        step(i)
    t1 = time.perf_counter()
    for i in range(warm, warm + steps):
        step(i)
    if hasattr(torch, "eager"):
        torch.eager.sync()
    t2 = time.perf_counter()
    print(json.dumps({"first": t1 - t0, "ms": (t2 - t1) / steps * 1e3}))
""")


def run(lib, name, warm, steps):
    env = dict(os.environ, TORCHLIKE_COMPILATION_CACHE="0")
    r = subprocess.run([sys.executable, "-c", CHILD, lib, str(warm), str(steps)],
                       input=WORKLOADS[name], capture_output=True, text=True, env=env,
                       timeout=1800)
    if r.returncode:
        raise RuntimeError(f"{lib} {name} failed:\n{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="makemore,bigram,generate")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--warm", type=int, default=50)
    ap.add_argument("--steps", type=int, default=300)
    a = ap.parse_args()
    libs = ("torch", "strict", "fused")
    for name in a.only.split(","):
        got = {lib: [] for lib in libs}
        for _ in range(a.repeats):
            for lib in libs:
                got[lib].append(run(lib, name, a.warm, a.steps))
        first = {lib: statistics.median(r["first"] for r in got[lib]) for lib in libs}
        ms = {lib: statistics.median(r["ms"] for r in got[lib]) for lib in libs}
        print(f"{name}: first {a.warm} steps (s) / then ms per step, median of {a.repeats}")
        for lib in libs:
            print(f"  {lib:7s} {first[lib]:7.2f} s  {ms[lib]:8.2f} ms   "
                  f"vs torch: {first[lib] / first['torch']:5.1f}x / {ms[lib] / ms['torch']:5.2f}x")


if __name__ == "__main__":
    main()
