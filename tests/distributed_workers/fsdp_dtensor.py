"""FSDP2, tensor-parallel, DTensor and distributed checkpoint programs, one spawned job per
library:
``fsdp_dtensor.py torch|torchlike OUT`` starts 2 ranks with the library's
``multiprocessing.spawn`` (torch: gloo on localhost, one CPU device per rank, as torchrun),
runs every ``c_*`` check on each rank (an exception is recorded as ``"EXC Type: message"``) and
writes OUT.rank<r>.json. ``c_fsdp1`` runs under torchlike only (torch's FSDP1 needs an
accelerator)."""
import functools
import importlib
import json
import os
import shutil
import socket
import sys
import tempfile
import traceback

import numpy as np


def tl(t):
    return [t.tolist(), str(t.dtype), list(t.shape)]

def mods(torch):
    fs = importlib.import_module(torch.__name__ + ".distributed.fsdp")
    dm = importlib.import_module(torch.__name__ + ".distributed.device_mesh")
    return fs, dm


def sharded_model(torch, n):
    """The fsdp module and ``make_model``'s model, each block fully sharded over a 1-D mesh of
    the ``n`` ranks, then the model."""
    fs, dm = mods(torch)
    mesh = dm.init_device_mesh("cpu", (n,))
    m = make_model(torch)
    for b in m.blocks:
        fs.fully_shard(b, mesh=mesh)
    fs.fully_shard(m, mesh=mesh)
    return fs, m


def make_model(torch, d=8, h=12, out=5):
    nn = torch.nn
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(d, h); self.fc2 = nn.Linear(h, d); self.norm = nn.LayerNorm(d)
        def forward(self, x):
            return x + self.fc2(torch.relu(self.fc1(self.norm(x))))
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block() for _ in range(2)])
            self.head = nn.Linear(d, out)
        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return self.head(x)
    torch.manual_seed(0)
    m = Net()
    rng = np.random.default_rng(0)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
    return m

def batch(torch, r, k, n=6, d=8, out=5):
    rng = np.random.default_rng(100 + 10 * r + k)
    return (torch.tensor(rng.standard_normal((n, d)).astype(np.float32)),
            torch.tensor(rng.integers(0, out, n)))

def c_fsdp2_train(torch, dist, r, n):
    fs, m = sharded_model(torch, n)
    res = {}
    res["cls"] = type(m).__name__
    res["isfsdp"] = isinstance(m, fs.FSDPModule)
    res["params"] = {k: [type(p).__name__, str(p.placements), list(p.shape), list(p.to_local().shape), str(p.device_mesh)] for k, p in m.named_parameters()}
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
    losses = []
    for k in range(3):
        x, y = batch(torch, r, k)
        loss = torch.nn.functional.cross_entropy(m(x), y)
        loss.backward()
        opt.step(); opt.zero_grad()
        losses.append(loss.item())
    res["losses"] = losses
    res["full"] = {k: tl(p.full_tensor()) for k, p in m.named_parameters()}
    res["local"] = {k: tl(p.to_local()) for k, p in m.named_parameters()}
    sd = m.state_dict()
    res["sd"] = {k: [type(v).__name__, list(v.shape)] for k, v in sd.items()}
    return res

def c_fsdp2_grads(torch, dist, r, n):
    fs, dm = mods(torch)
    mesh = dm.init_device_mesh("cpu", (n,))
    m = make_model(torch)
    for b in m.blocks:
        fs.fully_shard(b, mesh=mesh, reshard_after_forward=False)
    fs.fully_shard(m, mesh=mesh)
    x, y = batch(torch, r, 0)
    loss = torch.nn.functional.cross_entropy(m(x), y)
    loss.backward()
    res = {"grad": {k: [type(p.grad).__name__, str(p.grad.placements), tl(p.grad.to_local())] for k, p in m.named_parameters()}}
    res["loss"] = loss.item()
    res["loss_type"] = type(loss).__name__
    out = m(x)
    res["out"] = [type(out).__name__, list(out.shape)]
    return res

def c_fsdp2_no_sync(torch, dist, r, n):
    fs, m = sharded_model(torch, n)
    m.set_requires_gradient_sync(False)
    for k in range(2):
        x, y = batch(torch, r, k)
        torch.nn.functional.cross_entropy(m(x), y).backward()
    m.set_requires_gradient_sync(True)
    x, y = batch(torch, r, 2)
    torch.nn.functional.cross_entropy(m(x), y).backward()
    return {k: tl(p.grad.full_tensor()) for k, p in m.named_parameters()}

def c_fsdp2_unshard(torch, dist, r, n):
    fs, m = sharded_model(torch, n)
    m.set_is_last_backward(True)
    m.set_modules_to_forward_prefetch([m.blocks[1]])
    m.blocks[1].set_modules_to_backward_prefetch([m.blocks[0]])
    m.set_reshard_after_backward(True)
    fs.register_fsdp_forward_method(m, "forward")
    m.unshard()
    res = {"unsharded": {k: [type(p).__name__, list(p.shape)] for k, p in m.named_parameters()}}
    m.reshard()
    res["resharded"] = {k: [type(p).__name__, list(p.shape)] for k, p in m.named_parameters()}
    h = m.unshard(async_op=True)
    res["handle"] = type(h).__name__
    if h is not None:
        h.wait()
    m.reshard()
    return res

def c_fsdp2_mp(torch, dist, r, n):
    fs, dm = mods(torch)
    mesh = dm.init_device_mesh("cpu", (n,))
    m = make_model(torch)
    mp = fs.MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    for b in m.blocks:
        fs.fully_shard(b, mesh=mesh, mp_policy=mp)
    fs.fully_shard(m, mesh=mesh, mp_policy=mp)
    x, y = batch(torch, r, 0)
    out = m(x)
    loss = torch.nn.functional.cross_entropy(out.float(), y)
    loss.backward()
    return {"out_dtype": str(out.dtype), "loss": loss.item(), "param_dtype": str(next(m.parameters()).dtype),
            "grad": {k: [str(p.grad.dtype), tl(p.grad.full_tensor())] for k, p in m.named_parameters()}}


def T(torch):
    return importlib.import_module(torch.__name__ + ".distributed.tensor")

def c_dtensor_basic(torch, dist, r, n):
    dt = T(torch)
    mesh = dt.init_device_mesh("cpu", (n,))
    x = torch.arange(24.).reshape(4, 6)
    res = {"mesh": repr(mesh), "mesh_named": repr(dt.init_device_mesh("cpu", (n,), mesh_dim_names=("dp",)))}
    for name, pl in [("s0", [dt.Shard(0)]), ("s1", [dt.Shard(1)]), ("rep", [dt.Replicate()])]:
        d = dt.distribute_tensor(x, mesh, pl)
        res[name] = [tl(d.to_local()), str(d.placements), list(d.shape), tl(d.full_tensor()), type(d).__name__]
    d = dt.distribute_tensor(x, mesh, [dt.Shard(0)])
    e = d.redistribute(mesh, [dt.Shard(1)])
    res["redist_s1"] = [tl(e.to_local()), str(e.placements)]
    f = e.redistribute(mesh, [dt.Replicate()])
    res["redist_rep"] = [tl(f.to_local()), str(f.placements)]
    y = d * 2 + 1
    res["elementwise"] = [type(y).__name__, str(y.placements), tl(y.to_local())]
    s = d.sum()
    res["sum"] = [type(s).__name__, str(s.placements), tl(s.full_tensor())]
    w = dt.distribute_tensor(torch.arange(12.).reshape(6, 2), mesh, [dt.Replicate()])
    mm = d @ w
    res["matmul"] = [type(mm).__name__, str(mm.placements), tl(mm.full_tensor()), tl(mm.to_local())]
    res["repr"] = repr(dt.distribute_tensor(torch.arange(4.), mesh, [dt.Shard(0)]))
    loc = torch.arange(6.).reshape(2, 3) + 10 * r
    fl = dt.DTensor.from_local(loc, mesh, [dt.Shard(0)])
    res["from_local"] = [list(fl.shape), tl(fl.full_tensor()), tl(fl.to_local())]
    fr = dt.DTensor.from_local(loc, mesh, [dt.Replicate()])
    res["from_local_rep"] = [list(fr.shape), tl(fr.to_local())]
    fp = dt.DTensor.from_local(loc, mesh, [dt.Partial()])
    res["from_local_partial"] = [list(fp.shape), tl(fp.full_tensor()), str(fp.redistribute(mesh, [dt.Replicate()]).placements)]
    g = dt.distribute_tensor(torch.ones(4, 2), mesh, [dt.Shard(0)])
    g.requires_grad_(True)
    (g * 3).sum().backward()
    res["grad"] = [type(g.grad).__name__, tl(g.grad.to_local())]
    return res

def c_dcp_state_dict(torch, dist, r, n):
    fs, dm = mods(torch)
    sdm = importlib.import_module(torch.__name__ + ".distributed.checkpoint.state_dict")
    dcp = importlib.import_module(torch.__name__ + ".distributed.checkpoint")
    mesh = dm.init_device_mesh("cpu", (n,))
    m = make_model(torch)
    for b in m.blocks:
        fs.fully_shard(b, mesh=mesh)
    fs.fully_shard(m, mesh=mesh)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
    for k in range(2):
        x, y = batch(torch, r, k)
        torch.nn.functional.cross_entropy(m(x), y).backward()
        opt.step(); opt.zero_grad()
    res = {}
    msd = sdm.get_model_state_dict(m)
    res["msd"] = {k: [type(v).__name__, list(v.shape), tl(v.to_local()) if hasattr(v, "to_local") else None] for k, v in msd.items()}
    full = sdm.get_model_state_dict(m, options=sdm.StateDictOptions(full_state_dict=True))
    res["full"] = {k: [type(v).__name__, tl(v)] if r == 0 else [type(v).__name__, list(v.shape)] for k, v in full.items()}
    osd = sdm.get_optimizer_state_dict(m, opt)
    res["osd_keys"] = sorted(osd["state"].keys())
    res["osd_pg"] = [{k: v for k, v in g.items()} for g in osd["param_groups"]]
    res["osd_state0"] = {k: [type(v).__name__, list(v.shape), tl(v.to_local()) if hasattr(v, "to_local") else tl(v)] for k, v in osd["state"]["blocks.0.fc1.weight"].items()}
    fosd = sdm.get_optimizer_state_dict(m, opt, options=sdm.StateDictOptions(full_state_dict=True, cpu_offload=True))
    res["fosd_head"] = {k: [type(v).__name__, tl(v)] for k, v in fosd["state"]["head.weight"].items()} if r == 0 else None
    # save + load into a fresh model
    d = os.path.join(tempfile.gettempdir(), "sw_dcp_" + torch.__name__ + "_" + os.environ["MASTER_PORT"])
    dcp.save({"model": msd, "optim": osd}, checkpoint_id=d)
    m2 = make_model(torch)
    with torch.no_grad():
        for p in m2.parameters():
            p.zero_()
    for b in m2.blocks:
        fs.fully_shard(b, mesh=mesh)
    fs.fully_shard(m2, mesh=mesh)
    opt2 = torch.optim.AdamW(m2.parameters(), lr=1e-2)
    sd2 = {"model": sdm.get_model_state_dict(m2), "optim": sdm.get_optimizer_state_dict(m2, opt2)}
    dcp.load(sd2, checkpoint_id=d)
    sdm.set_model_state_dict(m2, sd2["model"])
    sdm.set_optimizer_state_dict(m2, opt2, sd2["optim"])
    res["loaded"] = {k: tl(p.full_tensor()) for k, p in m2.named_parameters()}
    x, y = batch(torch, r, 5)
    l1 = torch.nn.functional.cross_entropy(m(x), y); l1.backward(); opt.step()
    l2 = torch.nn.functional.cross_entropy(m2(x), y); l2.backward(); opt2.step()
    res["resume"] = [l1.item(), l2.item(), [torch.equal(a.full_tensor(), b.full_tensor()) for a, b in zip(m.parameters(), m2.parameters())]]
    # full state dict into fresh model via set_model_state_dict with full_state_dict
    m3 = make_model(torch)
    with torch.no_grad():
        for p in m3.parameters():
            p.zero_()
    fs.fully_shard(m3, mesh=mesh)
    sdm.set_model_state_dict(m3, full, options=sdm.StateDictOptions(full_state_dict=True))
    res["from_full"] = {k: tl(p.full_tensor()) for k, p in m3.named_parameters()}
    res["full_after"] = {k: tl(p.full_tensor()) for k, p in m.named_parameters()}
    dist.barrier()
    if r == 0:
        shutil.rmtree(d, ignore_errors=True)
    return res


def mlp(torch):
    nn = torch.nn
    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.w1 = nn.Linear(8, 16); self.w2 = nn.Linear(16, 8)
        def forward(self, x):
            return self.w2(torch.relu(self.w1(x)))
    m = MLP()
    rng = np.random.default_rng(1)
    with torch.no_grad():
        for p in m.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
    return m

def c_tp_mlp(torch, dist, r, n):
    tp = importlib.import_module(torch.__name__ + ".distributed.tensor.parallel")
    dm = importlib.import_module(torch.__name__ + ".distributed.device_mesh")
    mesh = dm.init_device_mesh("cpu", (n,), mesh_dim_names=("tp",))
    m = mlp(torch)
    tp.parallelize_module(m, mesh, {"w1": tp.ColwiseParallel(), "w2": tp.RowwiseParallel()})
    res = {"params": {k: [type(p).__name__, str(p.placements), list(p.shape), tl(p.to_local())] for k, p in m.named_parameters()}}
    x = torch.tensor(np.random.default_rng(7).standard_normal((4, 8)).astype(np.float32))
    out = m(x)
    res["out"] = [type(out).__name__, tl(out)]
    h = m.w1(x)
    res["w1_out"] = [type(h).__name__, list(h.shape)]
    out.sum().backward()
    res["grads"] = {k: [type(p.grad).__name__, str(p.grad.placements), tl(p.grad.to_local())] for k, p in m.named_parameters()}
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    opt.step()
    res["after"] = {k: tl(p.full_tensor()) for k, p in m.named_parameters()}
    return res

def c_tp_seq(torch, dist, r, n):
    tp = importlib.import_module(torch.__name__ + ".distributed.tensor.parallel")
    dm = importlib.import_module(torch.__name__ + ".distributed.device_mesh")
    dt = importlib.import_module(torch.__name__ + ".distributed.tensor")
    mesh = dm.init_device_mesh("cpu", (n,))
    nn = torch.nn
    m = nn.Sequential(nn.LayerNorm(8), nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape) * (i + 1) * 0.3)
    tp.parallelize_module(m, mesh, {"0": tp.SequenceParallel(), "1": tp.ColwiseParallel(input_layouts=dt.Shard(1)), "3": tp.RowwiseParallel(output_layouts=dt.Shard(1))})
    x = torch.linspace(-2, 2, 2 * 4 * 8).reshape(2, 4, 8)
    out = m(x)
    res = {"out": [type(out).__name__, tl(out)]}
    out.sum().backward()
    res["grads"] = {k: tl(p.grad.full_tensor()) for k, p in m.named_parameters()}
    return res


def c_clip(torch, dist, r, n):
    fs, m = sharded_model(torch, n)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
    res = {"norms": []}
    for k in range(2):
        x, y = batch(torch, r, k)
        torch.nn.functional.cross_entropy(m(x), y).backward()
        nrm = torch.nn.utils.clip_grad_norm_(m.parameters(), 0.5)
        res["norms"].append([type(nrm).__name__, nrm.full_tensor().item() if hasattr(nrm, "full_tensor") else nrm.item()])
        opt.step(); opt.zero_grad()
    res["full"] = {k: tl(p.full_tensor()) for k, p in m.named_parameters()}
    return res


def c_fsdp1(torch, dist, r, n):
    """FullyShardedDataParallel (torchlike only: torch 2.13's FSDP1 refuses CPU devices)
    trained as c_fsdp2_train, and with clip_grad_norm_ as c_clip."""
    F = importlib.import_module(torch.__name__ + ".distributed.fsdp")
    W = importlib.import_module(torch.__name__ + ".distributed.fsdp.wrap")
    FSDP = F.FullyShardedDataParallel
    m = make_model(torch)
    model = FSDP(m, auto_wrap_policy=W.ModuleWrapPolicy({type(m.blocks[0])}),
                 use_orig_params=True)
    res = {"wrapped": [type(x).__name__ for x in model.modules()]}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for k in range(3):
        x, y = batch(torch, r, k)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        losses.append(loss.item())
    res["losses"] = losses
    with FSDP.state_dict_type(model, F.StateDictType.FULL_STATE_DICT,
                              F.FullStateDictConfig(offload_to_cpu=True, rank0_only=True)):
        res["full_sd"] = {k: tl(v) for k, v in model.state_dict().items()}
    with FSDP.state_dict_type(model, F.StateDictType.SHARDED_STATE_DICT):
        res["sharded_sd"] = {k: [type(v).__name__, tl(v.to_local())]
                             for k, v in model.state_dict().items()}
    with FSDP.summon_full_params(model):
        res["summon"] = model.module.blocks[0].fc1.bias.tolist()
    m2 = make_model(torch)
    with torch.no_grad():
        for p in m2.parameters():
            p.zero_()
    model2 = FSDP(m2, auto_wrap_policy=functools.partial(W.size_based_auto_wrap_policy,
                                                         min_num_params=100))
    res["size_wrapped"] = [type(x).__name__ for x in model2.modules()]
    with FSDP.state_dict_type(model, F.StateDictType.FULL_STATE_DICT):
        model2.load_state_dict(model.state_dict())
    x, y = batch(torch, r, 9)
    res["loaded_loss"] = [torch.nn.functional.cross_entropy(model(x), y).item(),
                          torch.nn.functional.cross_entropy(model2(x), y).item()]
    m3 = FSDP(make_model(torch))
    opt3 = torch.optim.AdamW(m3.parameters(), lr=1e-2)
    norms = []
    for k in range(2):
        x, y = batch(torch, r, k)
        torch.nn.functional.cross_entropy(m3(x), y).backward()
        norms.append(float(m3.clip_grad_norm_(0.5)))
        opt3.step()
        opt3.zero_grad()
    res["clip_norms"] = norms
    return res


def c_dcp_options(torch, dist, r, n):
    """get/set_model_state_dict and get_optimizer_state_dict with StateDictOptions."""
    fs, dm = mods(torch)
    sdm = importlib.import_module(torch.__name__ + ".distributed.checkpoint.state_dict")
    mesh = dm.init_device_mesh("cpu", (n,))
    m = make_model(torch)
    for b in m.blocks:
        fs.fully_shard(b, mesh=mesh)
    fs.fully_shard(m, mesh=mesh)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
    x, y = batch(torch, r, 0)
    torch.nn.functional.cross_entropy(m(x), y).backward()
    opt.step(); opt.zero_grad()
    res = {}
    msd = sdm.get_model_state_dict(m)
    res["msd"] = {k: [type(v).__name__, list(v.shape), tl(v.to_local())] for k, v in msd.items()}
    full = sdm.get_model_state_dict(m, options=sdm.StateDictOptions(full_state_dict=True, cpu_offload=True))
    res["full_off"] = {k: [type(v).__name__, tl(v)] for k, v in full.items()}
    full2 = sdm.get_model_state_dict(m, options=sdm.StateDictOptions(full_state_dict=True))
    res["full"] = {k: [type(v).__name__, tl(v)] for k, v in full2.items()}
    osd = sdm.get_optimizer_state_dict(m, opt)
    res["osd_keys"] = sorted(osd["state"].keys())
    res["osd_pg"] = osd["param_groups"]
    res["osd_state0"] = {k: [type(v).__name__, list(v.shape), tl(v.to_local()) if hasattr(v, "to_local") else tl(v)] for k, v in osd["state"]["blocks.0.fc1.weight"].items()}
    fosd = sdm.get_optimizer_state_dict(m, opt, options=sdm.StateDictOptions(full_state_dict=True, cpu_offload=True))
    res["fosd"] = {"keys": sorted(fosd.keys()), "state": {k: {kk: [type(vv).__name__, tl(vv)] for kk, vv in v.items()} for k, v in fosd.get("state", {}).items() if k == "head.weight"}}
    m3 = make_model(torch)
    with torch.no_grad():
        for p in m3.parameters():
            p.zero_()
    fs.fully_shard(m3, mesh=mesh)
    sdm.set_model_state_dict(m3, full2, options=sdm.StateDictOptions(full_state_dict=True))
    res["from_full"] = {k: tl(p.full_tensor()) for k, p in m3.named_parameters()}
    m4 = make_model(torch)
    fs.fully_shard(m4, mesh=mesh)
    sdm.set_model_state_dict(m4, full, options=sdm.StateDictOptions(full_state_dict=True, broadcast_from_rank0=True))
    res["from_rank0"] = {k: tl(p.full_tensor()) for k, p in m4.named_parameters()}
    return res


TORCHLIKE_ONLY = ("c_fsdp1",)


def run(rank, world, lib, out, port):
    torch = importlib.import_module(lib)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist = torch.distributed
    dist.init_process_group("gloo", rank=rank, world_size=world)
    res = {}
    for name, fn in sorted(globals().items()):
        if name.startswith("c_") and not (lib == "torch" and name in TORCHLIKE_ONLY):
            try:
                res[name] = fn(torch, dist, rank, world)
            except Exception as e:
                res[name] = ("EXC " + type(e).__name__ + ": " + str(e) + "\n"
                             + traceback.format_exc()[-2000:])
            dist.barrier()
    with open(f"{out}.rank{rank}.json", "w") as f:
        json.dump(res, f)
    if lib == "torch":          # (torch's gloo teardown can abort the process at exit)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    dist.destroy_process_group()


if __name__ == "__main__":
    lib, out = sys.argv[1], sys.argv[2]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    importlib.import_module(lib + ".multiprocessing").spawn(
        run, args=(2, lib, out, port), nprocs=2)
