"""Models the distributed tests build in torch and in torchlike alike (``make_*(torch)``), with
weights drawn from numpy so both libraries start from the same values."""
import math

import numpy as np

VOCAB, D, HEADS, T, HIDDEN = 13, 12, 2, 8, 30     # 13 and 30: not divisible by the meshes


def make_gpt(torch):
    """A one-block minGPT: embeddings, causal self-attention, a GELU MLP, a tied-free head."""
    nn, F = torch.nn, torch.nn.functional

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            # no key bias: its gradient is zero in exact arithmetic (softmax ignores a shift
            # shared by every key), so Adam would amplify rounding noise there
            self.q, self.k, self.v = nn.Linear(D, D), nn.Linear(D, D, bias=False), nn.Linear(D, D)
            self.proj = nn.Linear(D, D)

        def forward(self, x):
            b, n, c = x.shape
            q, k, v = (f(x).view(b, n, HEADS, c // HEADS).transpose(1, 2)
                       for f in (self.q, self.k, self.v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(c // HEADS))
            mask = torch.tril(torch.ones(n, n, dtype=torch.bool))
            att = F.softmax(att.masked_fill(~mask, float("-inf")), dim=-1)
            return self.proj((att @ v).transpose(1, 2).reshape(b, n, c))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.proj = nn.Linear(D, HIDDEN), nn.Linear(HIDDEN, D)

        def forward(self, x):
            return self.proj(F.gelu(self.fc(x)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.attn = nn.LayerNorm(D), Attention()
            self.ln2, self.mlp = nn.LayerNorm(D), MLP()

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(VOCAB, D), nn.Embedding(T, D)
            self.h = nn.ModuleList([Block()])
            self.ln_f = nn.LayerNorm(D)
            self.head = nn.Linear(D, VOCAB, bias=False)

        def forward(self, idx):
            x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
            for blk in self.h:
                x = blk(x)
            return self.head(self.ln_f(x))

    m = GPT()
    set_weights(torch, m, 0)
    return m


TP_PLAN = {"h.*.attn.q": "col", "h.*.attn.k": "col", "h.*.attn.v": "col",
           "h.*.attn.proj": "row", "h.*.mlp.fc": "col", "h.*.mlp.proj": "row"}


def gpt_batch(torch, seed=1, b=4):
    rng = np.random.default_rng(seed)
    return (torch.tensor(rng.integers(0, VOCAB, (b, T))),
            torch.tensor(rng.integers(0, VOCAB, (b, T))))


def gpt_loss(torch, model, x, y):
    logits = model(x)
    return logits, torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))


def set_weights(torch, model, seed):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            w = rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3
            if name.endswith(("ln1.weight", "ln2.weight", "ln_f.weight")):
                w = 1.0 + w
            p.copy_(torch.tensor(w))


def dense_gpt_run(torch, steps=3, opt="adamw"):
    """The unsharded reference: forward, gradients and ``steps`` optimizer steps (AdamW at
    lr 0.02, or SGD at lr 0.1)."""
    m = make_gpt(torch)
    opt = (torch.optim.AdamW(m.parameters(), lr=0.02) if opt == "adamw"
           else torch.optim.SGD(m.parameters(), lr=0.1))
    x, y = gpt_batch(torch)
    out = {"losses": []}
    for it in range(steps):
        opt.zero_grad()
        logits, loss = gpt_loss(torch, m, x, y)
        loss.backward()
        if it == 0:
            out["out0"] = logits.tolist()
            out["grads0"] = [q.grad.tolist() for q in m.parameters()]
        opt.step()
        out["losses"].append(loss.item())
    out["state_keys"] = list(m.state_dict().keys())
    out["state"] = [v.tolist() for v in m.state_dict().values()]
    return out
