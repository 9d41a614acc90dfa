"""Data-parallel training with DistributedDataParallel, written exactly as for PyTorch.

Each process is one rank; the launcher starts them and sets RANK, WORLD_SIZE, MASTER_ADDR, ...:

    python -m torchlike.distributed.run --nproc-per-node 2 examples/ddp_train.py
    torchrun --nproc-per-node 2 examples/ddp_train.py          # after `import torch` below

DistributedSampler gives each rank its share of the data (the same shuffled order as torch),
DDP averages the gradients across ranks after every backward, so every rank holds the same
parameters; rank 0 reports the loss and checks that the ranks agree.
"""
import argparse

import numpy as np

import torchlike as torch

dist = torch.distributed
nn = torch.nn


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch", type=int, default=16)
    args = ap.parse_args()

    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(0)               # the same data set on every rank
    x = rng.standard_normal((512, 10)).astype(np.float32)
    w_true = rng.standard_normal((10, 1)).astype(np.float32)
    y = np.tanh(x @ w_true) + 0.05 * rng.standard_normal((512, 1)).astype(np.float32)
    ds = torch.utils.data.TensorDataset(torch.tensor(x), torch.tensor(y))
    sampler = torch.utils.data.distributed.DistributedSampler(ds, shuffle=True, seed=0)
    loader = torch.utils.data.DataLoader(ds, batch_size=args.batch, sampler=sampler)

    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 1))
    init = np.random.default_rng(100 + rank)      # ranks start apart: DDP syncs them to rank 0
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(init.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)

    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        total = torch.zeros(2)
        for xb, yb in loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(ddp(xb), yb)
            loss.backward()
            opt.step()
            total += torch.tensor([loss.item() * len(xb), len(xb)])
        dist.all_reduce(total)                    # the epoch's mean loss over every rank
        if rank == 0:
            print(f"epoch {epoch}: loss {total[0].item() / total[1].item():.6f} "
                  f"({world} ranks, {len(sampler)} samples each)")

    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    copies = [torch.zeros_like(flat) for _ in range(world)]
    dist.all_gather(copies, flat)
    if rank == 0:
        same = all(bool((c == flat).all()) for c in copies)
        print(f"parameters identical on all {world} ranks: {same}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
