"""FSDP2 + tensor parallelism on a 2 x 4 device mesh, written as for PyTorch.

torchlike runs it in one process driving 8 devices (here 8 fake CPU devices); PyTorch runs the
same file as 8 ranks after `import torch` below:

    python examples/fsdp_tp.py
    torchrun --nproc-per-node 8 examples/fsdp_tp.py

Each block's first Linear is column-parallel and its second row-parallel over "tp"; every
block and the whole model are then fully sharded over "dp" (parameters and optimizer state on
dim 0; dims not divisible by the mesh are padded by torchlike). torchlike sees the global
batch and loss; torch's ranks each take their "dp" share of it, which gives the same
gradients. The compiled step is one XLA program; XLA inserts every collective.
"""
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
    per_rank = "RANK" in os.environ               # torchrun: one process per device
    if per_rank:
        torch.distributed.init_process_group("gloo")
    mesh = mesh_mod.init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    torch.manual_seed(0)
    model = nn.Sequential(Block(16, 64), Block(16, 64), nn.Linear(16, 5))
    for block in model[:2]:
        tp.parallelize_module(block, mesh["tp"], {"fc1": tp.ColwiseParallel(),
                                                  "fc2": tp.RowwiseParallel()})
        fsdp.fully_shard(block, mesh=mesh["dp"])
    fsdp.fully_shard(model, mesh=mesh["dp"])      # the head: 5 rows over dp=2 (uneven)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)

    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((32, 16)).astype(np.float32))
    y = torch.tensor(rng.integers(0, 5, 32))
    if per_rank:                                  # torch: this rank's dp share of the batch
        i = mesh["dp"].get_local_rank()
        x, y = x.chunk(2)[i], y.chunk(2)[i]

    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    step = torch.compile(step)
    for it in range(30):
        loss = step(x, y)
        if it % 10 == 0 or it == 29:
            if not per_rank or torch.distributed.get_rank() == 0:
                print(f"step {it}: loss {loss.item():.4f}")
    if not per_rank:
        w = model[0].fc1.weight
        print(f"block 0 fc1.weight {tuple(w.shape)} laid out as {w._data.sharding.spec} "
              f"over {len(w._data.sharding.device_set)} devices")


if __name__ == "__main__":
    main()
