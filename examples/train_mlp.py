"""Train an MLP classifier end to end: data, model, optimizer, scheduler, checkpoint, resume.

A PyTorch training script with ``import torchlike as torch`` (replace that line with
``import torch`` and it runs on PyTorch). It generates a two-spirals data
set, trains with AdamW + OneCycleLR from a DataLoader, saves a checkpoint halfway (in PyTorch's
own file format), resumes from it in fresh objects and finishes. Runs in well under a minute on
a laptop CPU:

    python examples/train_mlp.py [--epochs 20] [--workers 0] [--ckpt PATH]
"""
import argparse
import math
import os
import sys
import tempfile
import time

import numpy as np

import torchlike as torch

nn = torch.nn
DataLoader = torch.utils.data.DataLoader
TensorDataset = torch.utils.data.TensorDataset
random_split = torch.utils.data.random_split


def spirals(n, noise=0.15, seed=0):
    rs = np.random.default_rng(seed)
    t = np.sqrt(rs.random(n)) * 3 * math.pi
    label = rs.integers(0, 2, n)
    sign = np.where(label == 0, 1.0, -1.0)
    x = np.stack([sign * t * np.cos(t), sign * t * np.sin(t)], 1) / (3 * math.pi)
    x += rs.normal(0, noise / 3, x.shape)
    return x.astype(np.float32), label.astype(np.int64)


def make_model():
    return nn.Sequential(nn.Linear(2, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(),
                         nn.Linear(64, 2))


def progress(epoch, epochs, i, n, loss, lr, width=24):
    done = int(width * i / n)
    bar = "#" * done + "." * (width - done)
    sys.stdout.write(f"\repoch {epoch + 1:>2}/{epochs} [{bar}] {i:>3}/{n} "
                     f"loss {loss:.4f} lr {lr:.2e}")
    sys.stdout.flush()


def evaluate(model, loader):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for xb, yb in loader:
            pred = model(xb).argmax(1)
            correct += int((pred == yb).sum())
            total += len(yb)
    model.train()
    return correct / total


def train_epochs(model, opt, sched, loader, val_loader, loss_fn, start, stop, epochs):
    for epoch in range(start, stop):
        t0 = time.time()
        running = 0.0
        for i, (xb, yb) in enumerate(loader, 1):
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            sched.step()
            running += float(loss.detach())
            progress(epoch, epochs, i, len(loader), running / i, sched.get_last_lr()[0])
        acc = evaluate(model, val_loader)
        print(f"  val acc {acc:.3f}  ({(time.time() - t0) * 1000:.0f} ms)")
    return acc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--ckpt", default=os.path.join(tempfile.gettempdir(), "mlp_checkpoint.pt"))
    args = ap.parse_args()

    torch.manual_seed(0)
    x, y = spirals(2000)
    data = TensorDataset(torch.tensor(x), torch.tensor(y))
    train_set, val_set = random_split(data, [0.8, 0.2], generator=torch.Generator().manual_seed(0))
    gen = torch.Generator().manual_seed(1)
    loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, generator=gen,
                        num_workers=args.workers, persistent_workers=args.workers > 0)
    val_loader = DataLoader(val_set, batch_size=256)

    def build():
        model = make_model()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-4)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=2e-2,
                                                    total_steps=args.epochs * len(loader))
        return model, opt, sched

    loss_fn = nn.CrossEntropyLoss()
    model, opt, sched = build()
    half = args.epochs // 2
    train_epochs(model, opt, sched, loader, val_loader, loss_fn, 0, half, args.epochs)

    torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                "scheduler": sched.state_dict(), "generator": gen.get_state(),
                "epoch": half}, args.ckpt)
    print(f"checkpoint written to {args.ckpt} (loadable by torch.load as well)")

    # resume in fresh objects, as a new process would
    ck = torch.load(args.ckpt)
    model, opt, sched = build()
    model.load_state_dict(ck["model"])
    opt.load_state_dict(ck["optimizer"])
    sched.load_state_dict(ck["scheduler"])
    gen.set_state(ck["generator"])
    acc = train_epochs(model, opt, sched, loader, val_loader, loss_fn, ck["epoch"], args.epochs,
                       args.epochs)
    print(f"final validation accuracy: {acc:.3f}")
    return acc


if __name__ == "__main__":
    main()
