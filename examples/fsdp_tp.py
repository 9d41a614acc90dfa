"""FSDP2 + tensor parallelism on a 2-D ("dp", "tp") device mesh, written as for PyTorch.

torchlike runs it in one process driving 8 devices (here 8 fake CPU devices, a 2 x 4 mesh);
PyTorch runs the same file as one process per device after `import torch` below:

    python examples/fsdp_tp.py
    torchrun --nproc-per-node 8 examples/fsdp_tp.py            # torch: a 2 x 4 mesh
    torchrun --nproc-per-node 2 examples/fsdp_tp.py --dp 1      # torch: a 1 x 2 mesh

Each block's first Linear is column-parallel and its second row-parallel over "tp"; every
block and the whole model are then fully sharded over "dp" (parameters and optimizer state on
dim 0; the head's 5 rows do not divide dp=2: torch shards them unevenly, torchlike pads).
torchlike sees the global batch and loss; torch's ranks each take their "dp" share of it,
which gives the same gradients, so both print the same losses. torchlike compiles the step
into one XLA program (XLA inserts every collective); `--no-compile` runs it eagerly.
"""
import argparse
import importlib
import os

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")  # torchlike

import numpy as np  # noqa: E402

import torchlike as torch  # noqa: E402

nn = torch.nn
mesh_mod = importlib.import_module(torch.__name__ + ".distributed.device_mesh")
fsdp = importlib.import_module(torch.__name__ + ".distributed.fsdp")
tp = importlib.import_module(torch.__name__ + ".distributed.tensor.parallel")


class Block(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)

    def forward(self, x):
        return x + self.fc2(nn.functional.gelu(self.fc1(x)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--log-every", type=int, default=10)
    ap.add_argument("--dp", type=int, default=2, help="size of the mesh's 'dp' dimension")
    ap.add_argument("--no-compile", action="store_true")
    args = ap.parse_args()

    per_rank = "RANK" in os.environ               # torchrun: one process per device
    if per_rank:
        torch.distributed.init_process_group("gloo")
        n = torch.distributed.get_world_size()
    else:
        import jax
        n = len(jax.devices())
    mesh = mesh_mod.init_device_mesh("cpu", (args.dp, n // args.dp),
                                     mesh_dim_names=("dp", "tp"))
    model = nn.Sequential(Block(16, 64), Block(16, 64), nn.Linear(16, 5))
    rng = np.random.default_rng(0)                # the same weights in torch and torchlike
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.2))
    for block in model[:2]:
        tp.parallelize_module(block, mesh["tp"], {"fc1": tp.ColwiseParallel(),
                                                  "fc2": tp.RowwiseParallel()})
        fsdp.fully_shard(block, mesh=mesh["dp"])
    fsdp.fully_shard(model, mesh=mesh["dp"])      # the head: 5 rows over dp=2 (uneven)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)

    x = torch.tensor(rng.standard_normal((32, 16)).astype(np.float32))
    y = torch.tensor(rng.integers(0, 5, 32))
    if per_rank:                                  # torch: this rank's dp share of the batch
        i = mesh["dp"].get_local_rank()
        x, y = x.chunk(args.dp)[i], y.chunk(args.dp)[i]

    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    if not args.no_compile:
        step = torch.compile(step)
    for it in range(args.steps):
        loss = step(x, y)
        if per_rank:                              # torch: the mean of the dp shares' losses
            loss = loss.detach().clone()
            torch.distributed.all_reduce(loss, group=mesh["dp"].get_group())
            loss = loss / args.dp
        if it % args.log_every == 0 or it == args.steps - 1:
            if not per_rank or torch.distributed.get_rank() == 0:
                print(f"step {it}: loss {loss.item():.6f}")
    if not per_rank:
        w = model[0].fc1.weight
        print(f"block 0 fc1.weight {tuple(w.shape)} laid out as {w._data.sharding.spec} "
              f"over {len(w._data.sharding.device_set)} devices")
    else:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
