"""One rank of the per-rank checks; runs unchanged on torch (``per_rank.py torch OUT``) and
torchlike (``per_rank.py torchlike OUT``) under a launcher, then runs the examples named after
OUT (``name,path,arg,...``: a copy importing this library) and keeps what they print. Writes
OUT.rank<r>.json. torchlike's ranks (4 CPU devices each) also check the global view across the
two processes and a compiled DDP step, and end with a collective only rank 0 calls: its
watchdog ends the job."""
import contextlib
import datetime
import importlib
import io
import json
import os
import runpy
import sys
import time
import warnings

import numpy as np

LIB = sys.argv[1]
torch = importlib.import_module(LIB)
out_path = sys.argv[2]
dist = torch.distributed
nn = torch.nn

# ---------------------------------------------------------------- the examples (first: each
# initialises and destroys its own process group)
examples = {}


def agreed_port(k):
    """A rendezvous port for this job's ``k``-th process group: rank 0 takes a port the OS has
    free and publishes it beside OUT; the other ranks wait for it. (Ports at fixed offsets from
    the launcher's collided with gloo's and other jobs' ephemeral ports now and then: torch's
    store client then failed with "Connection reset by peer".)"""
    path = f"{out_path}.port{k}"
    if os.environ["RANK"] == "0":
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with open(path + ".tmp", "w") as f:
            f.write(str(port))
        os.replace(path + ".tmp", path)
        return port
    deadline = time.monotonic() + 120
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            raise TimeoutError(f"rank 0 published no port at {path}")
        time.sleep(0.02)
    return int(open(path).read())


for k, spec in enumerate(sys.argv[3:]):
    name, path, *args = spec.split(",")
    argv, sys.argv = sys.argv, [path] + args
    # a fresh rendezvous port per process group: torch's store on a port this process
    # already used can hang a later init_process_group
    os.environ["MASTER_PORT"] = str(agreed_port(k))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        runpy.run_path(path, run_name="__main__")
    sys.argv = argv
    examples["example_" + name] = buf.getvalue()

os.environ["MASTER_PORT"] = str(agreed_port("main"))
dist.init_process_group("gloo")
r, n = dist.get_rank(), dist.get_world_size()
res = {"rank": r, "world": n}
if LIB == "torchlike":
    from torchlike import _tiers
    res["background_compile"] = _tiers.BACKGROUND_COMPILE
    res["interpret_budget"] = _tiers.INTERPRET_BUDGET


def tl(t):
    return t.detach().tolist() if t is not None else None


# ---------------------------------------------------------------- collectives
x = torch.arange(6.).reshape(2, 3) + 10 * r
for op in ["SUM", "AVG", "PRODUCT", "MIN", "MAX"]:
    y = x.clone()
    dist.all_reduce(y, op=getattr(dist.ReduceOp, op))
    res["all_reduce_" + op] = tl(y)
i = torch.tensor([5, 6]) + r
for op in ["BAND", "BOR", "BXOR", "SUM"]:
    y = i.clone()
    dist.all_reduce(y, op=getattr(dist.ReduceOp, op))
    res["all_reduce_int_" + op] = [tl(y), str(y.dtype)]
s = torch.tensor(float(r + 1))
dist.all_reduce(s)
res["all_reduce_scalar"] = [s.item(), list(s.shape)]
lst = [torch.zeros(2, 3) for _ in range(n)]
dist.all_gather(lst, x)
res["all_gather"] = [tl(t) for t in lst]
o = torch.zeros(2 * n, 3)
dist.all_gather_single(o, x)
res["all_gather_single"] = tl(o)
o = torch.zeros(2 * n, 3)
with warnings.catch_warnings(record=True) as w:     # (the names before torch 2.13: deprecated)
    warnings.simplefilter("always")
    dist.all_gather_into_tensor(o, x)
    res["all_gather_into_tensor"] = [tl(o), [(x.category.__name__, str(x.message)) for x in w]]
o = torch.zeros(2 * 3 // n if 6 % n == 0 else 1)
dist.reduce_scatter_single(o, x.reshape(-1))
res["reduce_scatter_single"] = tl(o)
o = torch.zeros(6 // n)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    dist.reduce_scatter_tensor(o, x.reshape(-1), op=dist.ReduceOp.MAX)
    res["reduce_scatter_tensor_max"] = [tl(o), [(x.category.__name__, str(x.message))
                                                 for x in w]]
y = x.clone()
dist.broadcast(y, src=n - 1)
res["broadcast"] = tl(y)
o = torch.zeros(2 * n, 3)
src = torch.arange(6. * n).reshape(2 * n, 3) + 100 * r
dist.all_to_all_single(o, src)
res["all_to_all_single"] = tl(o)
y = x.clone()
dist.reduce(y, dst=0)
res["reduce"] = tl(y)
objs = [None] * n
dist.all_gather_object(objs, {"rank": r, "s": "x" * (r + 1)})
res["all_gather_object"] = objs
bl = [r, "from %d" % r, {"k": [r]}]
dist.broadcast_object_list(bl, src=n - 1)
res["broadcast_object_list"] = bl
g = dist.new_group([0, n - 1]) if n > 1 else dist.new_group([0])
y = x.clone()
dist.all_reduce(y, group=g)
res["new_group_all_reduce"] = tl(y)
res["new_group_rank"] = dist.get_rank(g)
if n > 1:
    if r == 0:
        dist.send(x * 2, dst=1)
    elif r == 1:
        y = torch.zeros(2, 3)
        dist.recv(y, src=0)
        res["recv"] = tl(y)
dist.barrier()

# ---------------------------------------------------------------- DDP + DistributedSampler
DDP = torch.nn.parallel.DistributedDataParallel
DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset
DistributedSampler = torch.utils.data.distributed.DistributedSampler


def set_params(model, seed):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))


def mlp():
    return nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 3))


data = np.random.default_rng(0).standard_normal((22, 5)).astype(np.float32)
target = np.random.default_rng(1).standard_normal((22, 3)).astype(np.float32)
ds = TensorDataset(torch.tensor(data), torch.tensor(target))
for shuffle in (False, True):
    smp = DistributedSampler(ds, shuffle=shuffle, seed=3)
    orders = []
    for ep in range(2):
        smp.set_epoch(ep)
        orders.append(list(smp))
    res[f"sampler_shuffle_{shuffle}"] = orders

model = mlp()
set_params(model, 100 + r)                  # ranks differ: DDP must broadcast rank 0's
ddp = DDP(model, bucket_cap_mb=0.0001)      # several buckets
res["ddp_init_params"] = [tl(p) for p in model.parameters()]
res["ddp_keys"] = list(ddp.state_dict().keys())
opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
smp = DistributedSampler(ds, shuffle=True, seed=3)
loader = DataLoader(ds, batch_size=3, sampler=smp)
losses = []
for ep in range(2):
    smp.set_epoch(ep)
    for xb, yb in loader:
        opt.zero_grad()
        loss = nn.functional.mse_loss(ddp(xb), yb)
        loss.backward()
        opt.step()
        losses.append(loss.item())
res["ddp_losses"] = losses
res["ddp_params"] = [tl(p) for p in model.parameters()]

# no_sync: two local micro-batches accumulated, then one synchronised backward
model = mlp()
set_params(model, 7)
ddp = DDP(model)
xs = torch.tensor(data[:12]).reshape(3, 4, 5)[:, 2 * r:2 * r + 2]
ys = torch.tensor(target[:12]).reshape(3, 4, 3)[:, 2 * r:2 * r + 2]
with ddp.no_sync():
    for k in range(2):
        nn.functional.mse_loss(ddp(xs[k]), ys[k], reduction="sum").backward()
res["no_sync_local_grad"] = [tl(p.grad) for p in model.parameters()]
nn.functional.mse_loss(ddp(xs[2]), ys[2], reduction="sum").backward()
res["no_sync_grad"] = [tl(p.grad) for p in model.parameters()]


# find_unused_parameters: a branch only rank 0 uses, and one no rank uses
class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 2)
        self.b = nn.Linear(3, 2)
        self.never = nn.Linear(3, 2)

    def forward(self, x, use_b):
        y = self.a(x)
        return y + self.b(x) if use_b else y


m = Branchy()
set_params(m, 11)
ddp = DDP(m, find_unused_parameters=True)
ddp(torch.tensor(data[:2, :3]), r == 0).sum().backward()
res["unused_grads"] = [tl(p.grad) for p in m.parameters()]

m = Branchy()
set_params(m, 11)
ddp = DDP(m)
ddp(torch.tensor(data[:2, :3]), True).sum().backward()
try:
    ddp(torch.tensor(data[:2, :3]), True)
    res["unused_error"] = None
except RuntimeError as e:
    res["unused_error"] = str(e).split("\n")[0]

# buffers: rank 0's running stats are broadcast before each forward
bn = nn.Sequential(nn.Linear(5, 4), nn.BatchNorm1d(4))
set_params(bn, 5)
ddp = DDP(bn)
ddp(torch.tensor(data[4 * r:4 * r + 4]))
res["bn_running_mean_after_1"] = tl(bn[1].running_mean)
ddp(torch.tensor(data[4 * r:4 * r + 4]))
res["bn_running_mean_after_2"] = tl(bn[1].running_mean)

# SyncBatchNorm (torch runs it on GPUs only): equal to BatchNorm over the ranks' joined batch
if sys.argv[1] == "torchlike":
    full = torch.tensor(np.random.default_rng(3).standard_normal((4 * n, 3, 2)).astype(np.float32))
    xs = full[4 * r:4 * r + 4].clone().requires_grad_(True)
    sbn = nn.SyncBatchNorm(3)
    with torch.no_grad():
        sbn.weight.copy_(torch.tensor([1.0, 2.0, 0.5]))
    w = torch.arange(24.0).reshape(4, 3, 2) / 10
    (sbn(xs) * w).sum().backward()
    ref = nn.BatchNorm1d(3)
    with torch.no_grad():
        ref.weight.copy_(torch.tensor([1.0, 2.0, 0.5]))
    xf = full.clone().requires_grad_(True)
    (ref(xf) * w.repeat(n, 1, 1)).sum().backward()
    wg = sbn.weight.grad.clone()
    dist.all_reduce(wg)
    res["syncbn_out_diff"] = float((sbn(xs.detach()) - ref(full)[4 * r:4 * r + 4]).abs().max())
    res["syncbn_xgrad_diff"] = float((xs.grad - xf.grad[4 * r:4 * r + 4]).abs().max())
    res["syncbn_wgrad_diff"] = float((wg - ref.weight.grad).abs().max())
    res["syncbn_running_var_diff"] = float((sbn.running_var - ref.running_var).abs().max())
    conv = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.Linear(2, 3),
                                                                 nn.BatchNorm1d(3)))
    res["syncbn_convert"] = type(conv[1]).__name__

# ---------------------------------------------------------------- compiled DDP step
if sys.argv[1] == "torchlike":
    import warnings

    def ddp_run(compiled, steps=2):
        m = mlp()
        set_params(m, 7)
        ddp = DDP(m)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.1)

        def step(x, y):
            opt.zero_grad()
            loss = nn.functional.mse_loss(ddp(x), y)
            loss.backward()
            opt.step()
            return loss
        f = torch.compile(step) if compiled else step
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            losses = [f(torch.tensor(data[4 * r:4 * r + 4]),
                        torch.tensor(target[4 * r:4 * r + 4])).item() for _ in range(steps)]
        return losses, [tl(p) for p in m.parameters()], [str(x.message) for x in w]

    with torch.eager.strict():      # (the graph-broken compiled step runs op by op: its bits
        eager, eager_params, _ = ddp_run(False)     # are strict eager's, not a fused program's)
    comp, comp_params, warned = ddp_run(True)
    res["compiled_ddp"] = {"same_losses": eager == comp, "same_params": eager_params == comp_params,
                           "warnings": warned}

# ---------------------------------------------------------------- the global view, 2 processes
if sys.argv[1] == "torchlike":
    import jax
    import jax.experimental.multihost_utils as mhu
    from torchlike.distributed.device_mesh import init_device_mesh
    from torchlike.distributed.fsdp import fully_shard
    from torchlike.distributed.tensor import Shard, distribute_tensor
    th = {"local_devices": len(jax.local_devices()), "devices": len(jax.devices())}
    mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("dp",))
    xd = torch.arange(32.).reshape(8, 4)
    d = distribute_tensor(xd, mesh, [Shard(0)])
    th["to_local"] = d.to_local().tolist()
    th["full"] = d.full_tensor().tolist()
    rng = np.random.default_rng(0)
    W = [rng.standard_normal(s).astype(np.float32) * 0.4 for s in [(12, 6), (12,), (3, 12),
                                                                    (3,)]]
    xb = rng.standard_normal((8, 6)).astype(np.float32)
    yb = rng.standard_normal((8, 3)).astype(np.float32)
    m = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
    with torch.no_grad():
        for q, w in zip(m.parameters(), W):
            q.copy_(torch.tensor(w))
    fully_shard(m, mesh=mesh)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = nn.functional.mse_loss(m(torch.tensor(xb)), torch.tensor(yb))
        loss.backward()
        opt.step()
        losses.append(np.asarray(loss._data.addressable_shards[0].data).item())
    th["losses"] = losses
    th["state"] = {k: np.asarray(mhu.process_allgather(v._data, tiled=True)).tolist()
                   for k, v in m.state_dict().items()}
    res["two_hosts"] = th

dist.barrier()
dist.destroy_process_group()

res.update(examples)
with open(f"{out_path}.rank{r}.json", "w") as f:
    json.dump(res, f)

if LIB != "torchlike":
    # the oracle's results are written: end without torch's C++ teardown, whose gloo threads
    # abort the process at exit about one run in eight ("terminate called without an active
    # exception", SIGABRT)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)

# ---------------------------------------------------------------- a diverging rank
if LIB == "torchlike":
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=5))
    t = x.clone()
    if r == 0:
        dist.all_reduce(t)
        print("rank 0 passed a collective rank 1 never called", flush=True)
    else:
        time.sleep(120)
