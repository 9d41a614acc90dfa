"""Distributed benchmarks on this machine (CPU):

1. DDP over 2 processes vs 1 process on the same global batch (launcher, gloo): ms per step.
2. Communication per step of DDP, FSDP, TP and FSDP+TP on a 2 x 4 mesh of fake CPU devices,
   read from XLA's compiled program (collective ops and the bytes each device receives).

    python benchmarks/distributed.py            # both parts (spawns its own processes)
"""
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(HERE))
GLOBAL_BATCH, D_IN, HIDDEN, D_OUT, STEPS, WARMUP = 256, 64, 256, 16, 30, 10


# ---------------------------------------------------------------- 1. DDP timing (worker)
def ddp_worker():
    import numpy as np
    import torchlike as torch
    dist = torch.distributed
    dist.init_process_group("gloo")
    r, n = dist.get_rank(), dist.get_world_size()
    model = torch.nn.Sequential(torch.nn.Linear(D_IN, HIDDEN), torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, D_OUT))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((GLOBAL_BATCH, D_IN)).astype(np.float32))
    y = torch.tensor(rng.standard_normal((GLOBAL_BATCH, D_OUT)).astype(np.float32))
    b = GLOBAL_BATCH // n
    xb, yb = x[r * b:(r + 1) * b], y[r * b:(r + 1) * b]
    times = []
    for i in range(STEPS):
        t = time.perf_counter()
        opt.zero_grad()
        torch.nn.functional.mse_loss(ddp(xb), yb).backward()
        opt.step()
        model[0].weight.sum().item()           # wait for the step
        times.append(time.perf_counter() - t)
    dist.barrier()
    if r == 0:
        steady = sorted(times[WARMUP:])
        print("DDP " + json.dumps({"world": n, "median_ms": 1000 * steady[len(steady) // 2],
                                   "buckets": len(ddp._buckets),
                                   "grad_bytes": sum(p.numel() * 4 for p in model.parameters())
                                   }), flush=True)


# ---------------------------------------------------------------- 2. HLO collectives (worker)
_SHAPE = re.compile(r"([a-z]+)(\d+)\[([0-9,]*)\]")


def _bytes(shape_text):
    total = 0
    for kind, bits, dims in _SHAPE.findall(shape_text):
        n = 1
        for d in dims.split(",") if dims else []:
            n *= int(d)
        total += n * max(int(bits), 8) // 8
    return total


def collectives(hlo):
    """{op: [count, bytes]} of the collectives in compiled HLO text (output bytes per device)."""
    out = {}
    for line in hlo.splitlines():
        m = re.search(r"\s(all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute)"
                      r"(-start)?\(", line)
        if not m or "=" not in line:
            continue
        lhs = line.split("=", 1)[1].split(m.group(1))[0]
        c = out.setdefault(m.group(1), [0, 0])
        c[0] += 1
        c[1] += _bytes(lhs)
    return out


def hlo_worker():
    import jax
    import numpy as np
    import torchlike as torch
    from torchlike.distributed.device_mesh import init_device_mesh
    from torchlike.distributed.fsdp import fully_shard
    from torchlike.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel,
                                                       parallelize_module)
    from torchlike.interop import to_jax_function
    from jax.sharding import NamedSharding, PartitionSpec as P

    mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((GLOBAL_BATCH, D_IN)).astype(np.float32)
    y = rng.standard_normal((GLOBAL_BATCH, D_OUT)).astype(np.float32)
    res = {}
    for kind in ("ddp", "fsdp", "tp", "fsdp_tp"):
        m = torch.nn.Sequential(torch.nn.Linear(D_IN, HIDDEN), torch.nn.ReLU(),
                                torch.nn.Linear(HIDDEN, D_OUT))
        if kind in ("tp", "fsdp_tp"):
            parallelize_module(m, mesh["tp"], {"0": ColwiseParallel(), "2": RowwiseParallel()})
        if kind in ("fsdp", "fsdp_tp"):
            fully_shard(m, mesh=mesh["dp"])
        (params, bufs), fn = to_jax_function(m)
        jm = mesh._jax_mesh
        if kind == "ddp":          # the global view of DDP: replicated params, batch over all
            params = {k: jax.device_put(v, NamedSharding(jm, P())) for k, v in params.items()}
            xs = NamedSharding(jm, P(("dp", "tp")))
        elif kind == "tp":
            xs = NamedSharding(jm, P())
        else:
            xs = NamedSharding(jm, P("dp"))
        xa, ya = jax.device_put(x, xs), jax.device_put(y, xs)

        def step(params, xa, ya):
            def loss(p):
                return ((fn(p, bufs, xa) - ya) ** 2).mean()
            value, g = jax.value_and_grad(loss)(params)
            return value, jax.tree_util.tree_map(lambda a, b: a - 0.01 * b, params, g)

        hlo = jax.jit(step, donate_argnums=0).lower(params, xa, ya).compile().as_text()
        res[kind] = collectives(hlo)
    print("HLO " + json.dumps(res), flush=True)


def _run(cmd, env=None):
    e = dict(os.environ, PYTHONPATH=ROOT, **(env or {}))
    p = subprocess.run(cmd, cwd=ROOT, env=e, capture_output=True, text=True, timeout=900)
    if p.returncode:
        sys.stderr.write(p.stderr[-3000:])
        raise SystemExit(p.returncode)
    return p.stdout


def main():
    launch = [sys.executable, "-m", "torchlike.distributed.run", "--standalone"]
    print(f"DDP, global batch {GLOBAL_BATCH}, MLP {D_IN}-{HIDDEN}-{HIDDEN}-{D_OUT}, "
          f"median of steps {WARMUP}..{STEPS}:")
    for n in (1, 2):
        out = _run(launch + ["--nproc-per-node", str(n), HERE, "--ddp-worker"])
        r = json.loads(out.split("DDP ", 1)[1].splitlines()[0])
        print(f"  {n} process(es): {r['median_ms']:.2f} ms/step, {r['buckets']} bucket(s), "
              f"{r['grad_bytes']} gradient bytes all-reduced per rank per step")
    out = _run([sys.executable, HERE, "--hlo-worker"],
               {"XLA_FLAGS": "--xla_force_host_platform_device_count=8"})
    res = json.loads(out.split("HLO ", 1)[1].splitlines()[0])
    print(f"Collectives per training step in XLA's compiled program, mesh dp=2 x tp=4, "
          f"MLP {D_IN}-{HIDDEN}-{D_OUT}, batch {GLOBAL_BATCH} (count, bytes per device):")
    for kind, ops in res.items():
        total = sum(b for _, b in ops.values())
        desc = ", ".join(f"{k} x{c} ({b} B)" for k, (c, b) in sorted(ops.items())) or "none"
        print(f"  {kind:8s} {total:>9d} B: {desc}")


if __name__ == "__main__":
    if "--ddp-worker" in sys.argv:
        ddp_worker()
    elif "--hlo-worker" in sys.argv:
        hlo_worker()
    else:
        main()
