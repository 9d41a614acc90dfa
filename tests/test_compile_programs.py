"""What a steady compiled training step runs, pinned: after warm-up an MLP step and a minGPT-style
step (causal-mask view buffers) trace nothing, compile no XLA program, and run two programs
per call: the step, and its value checks split off to run first (``_step._precheck``)."""
import math

import jax
import jax.monitoring
import numpy as np

import torchlike as L
from torchlike import _registry as R

_COMPILES = []
_ON = [False]


def _listener(name, secs, **kw):
    if _ON[0] and name.endswith("backend_compile_duration"):
        _COMPILES.append(name)


jax.monitoring.register_event_duration_secs_listener(_listener)


def _mlp():
    nn = L.nn
    L.manual_seed(0)
    model = nn.Sequential(nn.Linear(29, 17), nn.ReLU(), nn.Linear(17, 17), nn.ReLU(),
                          nn.Linear(17, 5))
    opt = L.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)

    def batch():
        return L.tensor(rng.standard_normal((9, 29), np.float32)), L.tensor(
            rng.integers(0, 5, 9))

    def step(x, y):
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step, batch


def _gpt(vocab=13, d=16, n_head=2, t=8):
    nn, F = L.nn, L.nn.functional
    L.manual_seed(0)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(d)
            self.c_attn = nn.Linear(d, 3 * d)
            self.c_proj = nn.Linear(d, d)
            self.register_buffer("bias", L.tril(L.ones(t, t)).view(1, 1, t, t))

        def forward(self, x):
            b, n, c = x.size()
            q, k, v = self.c_attn(self.ln(x)).split(d, dim=2)
            q, k, v = (a.view(b, n, n_head, c // n_head).transpose(1, 2) for a in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = F.softmax(att.masked_fill(self.bias[:, :, :n, :n] == 0, float("-inf")), -1)
            return x + self.c_proj((att @ v).transpose(1, 2).contiguous().view(b, n, c))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(t, d)
            self.h = nn.ModuleList([Block(), Block()])
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, idx):
            x = self.wte(idx) + self.wpe(L.arange(idx.size(1)))
            for blk in self.h:
                x = blk(x)
            return self.head(x)

    model = GPT()
    opt = L.optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)

    def batch():
        return (L.tensor(rng.integers(0, vocab, (3, t))), L.tensor(rng.integers(0, vocab, (3, t))))

    def step(x, y):
        logits = model(x)
        loss = F.cross_entropy(logits.view(-1, vocab), y.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step, batch


def _steady(make):
    step, batch = make()
    c = L.compile(step, fullgraph=True)
    for _ in range(3):
        c(*batch())
    entry = next(iter(c._entries.values()))
    traces = R.trace_total()
    del _COMPILES[:]
    _ON[0] = True
    try:
        losses = [float(c(*batch())) for _ in range(5)]
    finally:
        _ON[0] = False
    assert all(np.isfinite(losses))
    assert c.trace_count == 1 and c.compile_count == 1     # one program for every step
    assert _COMPILES == []                                   # nothing compiled after warm-up
    assert R.trace_total() == traces                      # no eager op ran or traced
    assert entry.precheck, "the value checks run as their own program before the step"
    return c


def test_steady_mlp_step_runs_one_program_and_its_checks():
    _steady(_mlp)


def test_steady_gpt_step_with_view_buffers_runs_one_program_and_its_checks():
    _steady(_gpt)
