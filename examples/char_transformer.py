"""A small character-level transformer language model, written exactly as for PyTorch.

Replace ``import torchlike as torch`` with ``import torch`` and it runs on PyTorch. It trains a
2-layer causal TransformerEncoder (token + learned position embeddings, pre-norm, GELU) on a
short built-in text for a few hundred steps with AdamW and gradient clipping, then samples a
continuation:

    python examples/char_transformer.py [--steps 300] [--block 32]
"""
import argparse
import math
import time

import torchlike as torch

nn = torch.nn
F = torch.nn.functional

TEXT = (
    "It is a truth universally acknowledged, that a single man in possession of a good "
    "fortune, must be in want of a wife. However little known the feelings or views of such a "
    "man may be on his first entering a neighbourhood, this truth is so well fixed in the minds "
    "of the surrounding families, that he is considered the rightful property of some one or "
    "other of their daughters. "
) * 4


class CharTransformer(nn.Module):
    def __init__(self, vocab, block, d_model=64, nhead=4, layers=2, dropout=0.1):
        super().__init__()
        self.block = block
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(block, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=4 * d_model,
                                           dropout=dropout, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d_model),
                                             enable_nested_tensor=False)
        self.head = nn.Linear(d_model, vocab)
        mask = nn.Transformer.generate_square_subsequent_mask(block)
        self.register_buffer("causal_mask", mask, persistent=False)

    def forward(self, idx):
        t = idx.shape[1]
        pos = torch.arange(t)
        x = self.tok(idx) + self.pos(pos)
        x = self.encoder(x, mask=self.causal_mask[:t, :t], is_causal=True)
        return self.head(x)


def get_batch(data, block, batch):
    ix = torch.randint(0, len(data) - block - 1, (batch,))
    x = torch.stack([data[i:i + block] for i in ix.tolist()])
    y = torch.stack([data[i + 1:i + block + 1] for i in ix.tolist()])
    return x, y


@torch.no_grad()
def generate(model, idx, n):
    model.eval()
    for _ in range(n):
        logits = model(idx[:, -model.block:])[:, -1, :]
        nxt = logits.argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, nxt], dim=1)
    model.train()
    return idx


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--block", type=int, default=32)
    ap.add_argument("--batch", type=int, default=32)
    args = ap.parse_args(argv)

    torch.manual_seed(0)
    chars = sorted(set(TEXT))
    stoi = {c: i for i, c in enumerate(chars)}
    data = torch.tensor([stoi[c] for c in TEXT], dtype=torch.long)
    model = CharTransformer(len(chars), args.block)
    print(f"vocab {len(chars)}, parameters {sum(p.numel() for p in model.parameters())}")
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    loss_fn = nn.CrossEntropyLoss()
    t0 = time.time()
    first = None
    for step in range(1, args.steps + 1):
        x, y = get_batch(data, args.block, args.batch)
        logits = model(x)
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if first is None:
            first = loss.item()
        if step % 50 == 0 or step == 1:
            print(f"step {step:4d}  loss {loss.item():.4f}  ({time.time() - t0:.1f} s)")
    prompt = data[:args.block].unsqueeze(0)      # a full block: one compiled shape
    out = generate(model, prompt, 60)[0].tolist()
    print("sample:", "".join(chars[i] for i in out))
    print(f"loss {first:.3f} -> {loss.item():.3f} (uniform would be {math.log(len(chars)):.3f})")
    return first, loss.item()


if __name__ == "__main__":
    main()
