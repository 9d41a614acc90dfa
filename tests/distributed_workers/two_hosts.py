"""2 processes x 4 CPU devices: the per-rank collectives on processes holding several devices,
and the global view over a mesh spanning both processes (FSDP MLP steps). Writes OUT.rank<r>.json."""
import json
import sys

import jax
import numpy as np

import torchlike as torch
from torchlike.distributed.device_mesh import init_device_mesh
from torchlike.distributed.fsdp import fully_shard
from torchlike.distributed.tensor import Shard, distribute_tensor

dist = torch.distributed
dist.init_process_group("gloo")
r = dist.get_rank()
res = {"local_devices": len(jax.local_devices()), "devices": len(jax.devices())}
t = torch.tensor([1.0, 2.0]) * (r + 1)
dist.all_reduce(t)
res["all_reduce"] = t.tolist()

mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("dp",))
x = torch.arange(32.).reshape(8, 4)
d = distribute_tensor(x, mesh, [Shard(0)])
res["to_local"] = d.to_local().tolist()
res["full"] = d.full_tensor().tolist()

rng = np.random.default_rng(0)
W = [rng.standard_normal(s).astype(np.float32) * 0.4 for s in [(12, 6), (12,), (3, 12), (3,)]]
xb = rng.standard_normal((8, 6)).astype(np.float32)
yb = rng.standard_normal((8, 3)).astype(np.float32)
m = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.ReLU(), torch.nn.Linear(12, 3))
with torch.no_grad():
    for q, w in zip(m.parameters(), W):
        q.copy_(torch.tensor(w))
fully_shard(m, mesh=mesh)
opt = torch.optim.SGD(m.parameters(), lr=0.1)
losses = []
for _ in range(3):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(m(torch.tensor(xb)), torch.tensor(yb))
    loss.backward()
    opt.step()
    losses.append(np.asarray(loss._data.addressable_shards[0].data).item())
res["losses"] = losses
res["state"] = {k: np.asarray(jax.experimental.multihost_utils.process_allgather(
    v._data, tiled=True)).tolist() for k, v in m.state_dict().items()}
with open(f"{sys.argv[1]}.rank{r}.json", "w") as f:
    json.dump(res, f)
dist.barrier()
