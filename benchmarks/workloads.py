"""Benchmark workloads written once against a module ``m`` that is ``torch`` or ``torchlike``.

Each ``make_*(m)`` returns ``(model, opt, step, batch)``: ``step(x, y)`` is an unchanged PyTorch
training step (forward, loss, ``.backward()``, ``opt.step()``, ``opt.zero_grad()``) that
returns the loss, and ``batch()`` the inputs of one step. ``net`` (the module the step calls)
can be swapped for a compiled module with ``model_holder[0] = compiled``.
"""
from __future__ import annotations

import math

import numpy as np


def _to(m, a):
    return m.tensor(a)


# (a) a chain of 50 small ops with a backward: the per-op dispatch cost
def make_chain(m):
    x = m.ones(16, requires_grad=True)
    holder = [None]

    def step(x_in, y):
        h = x_in
        for i in range(25):
            h = (h * 1.01).sin()
        loss = h.sum()
        loss.backward()
        x_in.grad = None
        return loss

    return None, None, step, lambda: (x, None), holder


# (b) MLP 784-256-256-10, batch 64, Adam
def make_mlp(m):
    m.manual_seed(0)
    nn = m.nn
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                          nn.Linear(256, 10))
    opt = m.optim.Adam(model.parameters(), lr=1e-3)
    holder = [model]
    rng = np.random.default_rng(0)
    x = _to(m, rng.standard_normal((64, 784), np.float32))
    y = _to(m, rng.integers(0, 10, 64))

    def step(x, y):
        loss = m.nn.functional.cross_entropy(holder[0](x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    return model, opt, step, lambda: (x, y), holder


# (c) tiny GPT: 2 blocks, d_model 128, 4 heads, seq 64, batch 8, vocab 256, AdamW
def make_gpt(m, n_layer=2, d=128, n_head=4, seq=64, batch=8, vocab=256):
    m.manual_seed(0)
    nn = m.nn
    F = m.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.fc = nn.Linear(d, 4 * d)
            self.out = nn.Linear(4 * d, d)

        def forward(self, x, mask):
            b, t, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q = q.view(b, t, n_head, d // n_head).transpose(1, 2)
            k = k.view(b, t, n_head, d // n_head).transpose(1, 2)
            v = v.view(b, t, n_head, d // n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // n_head))
            att = F.softmax(att.masked_fill(mask, float("-inf")), dim=-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, d)
            x = x + self.proj(y)
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(seq, d)
            self.blocks = nn.ModuleList([Block() for _ in range(n_layer)])
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)
            self.register_buffer("mask", m.triu(m.ones(seq, seq, dtype=m.bool), diagonal=1))

        def forward(self, idx):
            x = self.tok(idx) + self.pos(m.arange(idx.shape[1]))
            for blk in self.blocks:
                x = blk(x, self.mask)
            return self.head(self.ln(x))

    model = GPT()
    opt = m.optim.AdamW(model.parameters(), lr=3e-4)
    holder = [model]
    rng = np.random.default_rng(0)
    x = _to(m, rng.integers(0, vocab, (batch, seq)))
    y = _to(m, rng.integers(0, vocab, (batch, seq)))

    def step(x, y):
        logits = holder[0](x)
        loss = F.cross_entropy(logits.reshape(-1, vocab), y.reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    return model, opt, step, lambda: (x, y), holder


# (d) eight 1024x1024 matmuls, forward and backward, SGD
def make_matmul(m, n=1024, k=8):
    m.manual_seed(0)
    nn = m.nn

    class Chain(nn.Module):
        def __init__(self):
            super().__init__()
            self.ws = nn.ParameterList([nn.Parameter(m.randn(n, n) / math.sqrt(n))
                                        for _ in range(k)])

        def forward(self, x):
            for w in self.ws:
                x = x @ w
            return x

    model = Chain()
    opt = m.optim.SGD(model.parameters(), lr=1e-3)
    holder = [model]
    x = m.randn(n, n)

    def step(x, y):
        loss = holder[0](x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    return model, opt, step, lambda: (x, None), holder


WORKLOADS = {"chain": make_chain, "mlp": make_mlp, "gpt": make_gpt, "matmul": make_matmul}
