"""Global-view checks in one process with 8 (fake) devices; prints one JSON line."""
import json
import sys
import time

import jax
import numpy as np

import torchlike as torch
from torchlike.distributed.device_mesh import init_device_mesh
from torchlike.distributed.fsdp import fully_shard
from torchlike.distributed.tensor import DTensor, Partial, Replicate, Shard, distribute_tensor
from torchlike.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                   parallelize_module)

T0 = time.time()


def lap(what):
    sys.stderr.write(f"[global_view] {what}: {time.time() - T0:.1f}s\n")


res = {"devices": len(jax.devices())}
mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
res["mesh"] = [mesh.mesh.tolist(), mesh["tp"].size(), mesh["dp"].size(), mesh.shape]
x = torch.arange(64.).reshape(8, 8)
d = distribute_tensor(x, mesh, [Shard(0), Shard(1)])
res["spec_s0s1"] = str(d._data.sharding.spec)
res["local_shape"] = list(d.to_local().shape)
res["full_equal"] = bool((d.full_tensor() == x).all())
trips = []
for a, b in [([Shard(0), Shard(1)], [Replicate(), Shard(0)]), ([Replicate(), Shard(0)],
             [Shard(1), Replicate()]), ([Shard(1), Replicate()], [Replicate(), Replicate()])]:
    t = distribute_tensor(x, mesh, a).redistribute(mesh, b)
    trips.append([str(t._data.sharding.spec), bool((t.full_tensor() == x).all()),
                  [str(p) for p in t.placements]])
res["redistribute"] = trips
p = distribute_tensor(x, mesh, [Replicate(), Partial()])
res["partial_spec"] = str(p._data.sharding.spec)
res["partial_full"] = bool((p.full_tensor() == x).all())
res["partial_to_shard"] = bool((p.redistribute(mesh, [Replicate(), Shard(0)]).full_tensor()
                                == x).all())
loc = DTensor.from_local(torch.ones(8, 8), mesh, [Replicate(), Partial()])
res["from_local_partial_sum"] = loc.full_tensor().sum().item()
res["eager_op_on_dtensor"] = (d * 2 + 1).sum().item()
try:
    distribute_tensor(torch.ones(6, 8), mesh, [Replicate(), Shard(0)])
except NotImplementedError as e:
    res["uneven_error"] = str(e).split(":")[0]

# FSDP + TP vs the same dense model: forward, gradients, three Adam steps
rng = np.random.default_rng(0)
W = [rng.standard_normal(s).astype(np.float32) * 0.4 for s in [(12, 6), (12,), (3, 12), (3,)]]
xb = rng.standard_normal((8, 6)).astype(np.float32)
yb = rng.standard_normal((8, 3)).astype(np.float32)


def mlp():
    m = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.ReLU(), torch.nn.Linear(12, 3))
    with torch.no_grad():
        for q, w in zip(m.parameters(), W):
            q.copy_(torch.tensor(w))
    return m


res["sharded"] = {}
for kind in ("fsdp", "tp", "fsdp_tp"):
    m = mlp()
    if kind in ("tp", "fsdp_tp"):
        parallelize_module(m, mesh["tp"], {"0": ColwiseParallel(), "2": RowwiseParallel()})
    if kind in ("fsdp", "fsdp_tp"):
        fully_shard(m, mesh=mesh["dp"])
    opt = torch.optim.Adam(m.parameters(), lr=0.05)
    out = {"specs": [str(q._data.sharding.spec) for q in m.parameters()],
           "shapes": [list(q.shape) for q in m.parameters()], "losses": [], "class":
           type(m).__name__}
    for it in range(3):
        opt.zero_grad()
        y = m(torch.tensor(xb))
        loss = torch.nn.functional.mse_loss(y, torch.tensor(yb))
        loss.backward()
        if it == 0:
            out["out0"] = y.tolist()
            out["grads0"] = [g.tolist() for g in
                             [q.grad[:w.shape[0]] for q, w in zip(m.parameters(), W)]]
        opt.step()
        out["losses"].append(loss.item())
    sd = m.state_dict()
    out["state_keys"] = list(sd.keys())
    out["state"] = [v.tolist() for v in sd.values()]
    out["opt_state_specs"] = sorted({str(v._data.sharding.spec) for st in opt.state.values()
                                     for v in st.values() if hasattr(v, "_data")
                                     and v.ndim > 0})
    res["sharded"][kind] = out

lap("mlp")

# ---------------------------------------------------------------- a one-block transformer
import jax.monitoring  # noqa: E402

import models  # noqa: E402
from torchlike import _registry as R  # noqa: E402
from torchlike.distributed._shim import true_shape  # noqa: E402


def shard_gpt(m, kind):
    if "tp" in kind:
        parallelize_module(m, mesh["tp"], {k: ColwiseParallel() if v == "col" else
                                           RowwiseParallel() for k, v in models.TP_PLAN.items()})
    if "fsdp" in kind:
        for blk in m.h:
            fully_shard(blk, mesh=mesh["dp"])
        fully_shard(m, mesh=mesh["dp"])
    return m


def unpadded(m, attr):
    out = []
    for sub in m.modules():
        for name, q in sub._parameters.items():
            if q is None:
                continue
            v = q if attr is None else getattr(q, attr)
            out.append(v[tuple(slice(0, n) for n in true_shape(sub, name))])
    return out


COMPILES = []
jax.monitoring.register_event_duration_secs_listener(
    lambda name, secs, **kw: COMPILES.append(name) if name.endswith("backend_compile_duration")
    else None)


def spec(q):
    return str(getattr(q._data.sharding, "spec", "single device"))

# FSDP + TP eagerly: forward, gradients and three AdamW steps
m = shard_gpt(models.make_gpt(torch), "fsdp_tp")
opt = torch.optim.AdamW(m.parameters(), lr=0.02)
xg, yg = models.gpt_batch(torch)
out = {"specs": {n: spec(q) for n, q in m.named_parameters()},
       "shapes": {n: list(q.shape) for n, q in m.named_parameters()}, "losses": []}
for it in range(3):
    opt.zero_grad()
    logits, loss = models.gpt_loss(torch, m, xg, yg)
    loss.backward()
    if it == 0:
        out["out0"] = logits.tolist()
        out["grads0"] = [g.tolist() for g in unpadded(m, "grad")]
    opt.step()
    out["losses"].append(loss.item())
sd = m.state_dict()
out["state_keys"] = list(sd.keys())
out["state"] = [v.tolist() for v in sd.values()]
out["opt_state_specs"] = {n: sorted({spec(v) for v in opt.state[q].values() if v.ndim > 0})
                          for n, q in m.named_parameters()}
res["gpt_eager"] = out
lap("eager gpt fsdp_tp")

# torch.distributed.checkpoint: the FSDP+TP model and its AdamW state saved, loaded into the
# same model laid out by FSDP alone, then one more step on both
import tempfile  # noqa: E402

import torchlike.distributed.checkpoint as dcp  # noqa: E402
from torchlike.distributed.checkpoint.state_dict import get_state_dict, set_state_dict  # noqa

msd, osd = get_state_dict(m, opt)
res["dcp_layout"] = {"model_keys": list(msd), "optim_state_keys": {k: sorted(v) for k, v in
                                                                   osd["state"].items()},
                     "param_groups": [{k: v for k, v in g.items() if k == "params"}
                                      for g in osd["param_groups"]],
                     "optim_state": {k: {n: v.tolist() for n, v in st.items()}
                                     for k, st in osd["state"].items()}}
ckpt = tempfile.mkdtemp()
dcp.save({"model": msd, "optim": osd}, checkpoint_id=ckpt)
m2 = models.make_gpt(torch)
models.set_weights(torch, m2, 5)                # different values: all come from the file
m2 = shard_gpt(m2, "fsdp")
opt2 = torch.optim.AdamW(m2.parameters(), lr=0.02)
msd2, osd2 = get_state_dict(m2, opt2)
dcp.load({"model": msd2, "optim": osd2}, checkpoint_id=ckpt)
set_state_dict(m2, opt2, model_state_dict=msd2, optim_state_dict=osd2)
msd3, osd3 = get_state_dict(m2, opt2)        # what the loaded model and optimizer hold
res["dcp_round_trip"] = {
    "loaded_spec": spec(m2.h[0].mlp.fc.weight), "saved_spec": spec(m.h[0].mlp.fc.weight),
    "loaded_sharded": all(len(q._data.sharding.device_set) == 8 for q in m2.parameters()),
    "model": [v.tolist() for v in msd3.values()],
    "optim": {k: {n: v.tolist() for n, v in st.items()} for k, st in osd3["state"].items()},
    "groups": [{k: v for k, v in g.items()} for g in osd3["param_groups"]],
    "saved_groups": [{k: v for k, v in g.items()} for g in osd["param_groups"]]}
lap("dcp")

# the FSDP + TP step compiled: one program, shardings kept, nothing retraced or recompiled
m = shard_gpt(models.make_gpt(torch), "fsdp_tp")
opt = torch.optim.SGD(m.parameters(), lr=0.1)
before = {n: q._data.sharding for n, q in m.named_parameters()}


@torch.compile(fullgraph=True)
def step(x, y):
    opt.zero_grad()
    logits, loss = models.gpt_loss(torch, m, x, y)
    loss.backward()
    opt.step()
    return logits, loss


logits, loss = step(xg, yg)
out = {"out0": logits.tolist(), "grads0": [g.tolist() for g in unpadded(m, "grad")],
       "logits_spec": spec(logits), "loss_replicated": loss._data.sharding.is_fully_replicated}
losses = [loss] + [step(xg, yg)[1] for _ in range(2)]
traces, n_compiles, tc = R.trace_total(), len(COMPILES), step.trace_count
losses += [step(xg, yg)[1] for _ in range(2)]
out.update({
    "compile_count": step.compile_count, "trace_count_after_3": tc,
    "trace_count_after_5": step.trace_count, "steady_xla_compiles": len(COMPILES) - n_compiles,
    "steady_eager_traces": R.trace_total() - traces})
out.update({
    "losses": [v.item() for v in losses],
    "param_shardings_kept": all(q._data.sharding == before[n] for n, q in m.named_parameters()),
    "grad_specs_are_param_specs": all(q.grad._data.sharding == before[n]
                                      for n, q in m.named_parameters()),
    "state": [v.tolist() for v in m.state_dict().values()]})
res["gpt_compiled"] = out
lap("compiled gpt fsdp_tp")

# examples/fsdp_tp.py as it is (compiled step), a few steps
import contextlib  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
import runpy  # noqa: E402

example = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "examples", "fsdp_tp.py")
sys.argv = [example, "--steps", "3", "--log-every", "1"]
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    runpy.run_path(example, run_name="__main__")
res["example_fsdp_tp"] = buf.getvalue()
lap("example")
print("RESULT " + json.dumps(res))
