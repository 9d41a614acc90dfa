"""torchlike.compile benchmark: one command, every workload side by side in one process.

    python benchmarks/compile.py [--steps N] [--only mlp,gpt] [--no-torch-compile] [--cache]

Backends per workload: torchlike eager, torchlike compiled module (eager loop around
``torchlike.compile(model)``), torchlike compiled step (``torchlike.compile(step)``), torch
eager, torch.compile (the step's model; reported as failed with the reason where inductor does
not work on this machine), and a hand-written pure-JAX ``jax.jit`` step with the parameters and
optimizer state donated. Prints ms/step, the ratio to the JAX step, and the warm-up time (the
first calls: trace + compile).

Every contestant is warmed up first (then three more times across a round's boundary); then all are timed in five interleaved rounds (each round
runs every contestant's steps in turn, so all meet the same background load) and each keeps its
best round (the interpreter tier's count alone decides when a signature compiles:
``TORCHLIKE_INTERPRET_BUDGET_MS=0``, so the warm-up reaches the steady state). Timed steps per
round by default: chain 100, mlp 30, gpt 10, matmul 3 (``--steps``
sets one number for all). XLA's persistent compilation cache is off for this process unless
``--cache`` is given, so warm-up times are real compiles, not disk loads. On a quiet 2-core CPU the whole
run takes about 3 minutes without torch.compile; torch.compile's first calls (inductor's C++
build) add a few minutes more (``--no-torch-compile`` skips them).
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import platform
import sys
import time

if "--cache" not in sys.argv:
    os.environ["TORCHLIKE_COMPILATION_CACHE"] = "0"
# the steady state: every signature leaves the interpreter at its count, whatever its calls cost
# (with the default budget a cheap op's programs come only after hundreds of steps, and the
# warm-up would time interpreted steps)
os.environ.setdefault("TORCHLIKE_INTERPRET_BUDGET_MS", "0")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import workloads  # noqa: E402


def _sync(loss):
    if loss is None:
        return
    if hasattr(loss, "_data"):
        jax.block_until_ready(loss._data)
    elif hasattr(loss, "item"):
        loss.item()
    else:
        jax.block_until_ready(loss)


def warm_up(step, batch, warm=12):
    """The first calls: ``warm`` steps, then until a step traces, interprets and compiles
    nothing (a backward whose forward has just compiled meets its compiled signature a step
    later), at most 40 more; their seconds."""
    t0 = time.perf_counter()
    for _ in range(warm):
        _sync(step(*batch()))
    import torchlike
    for _ in range(40):
        torchlike.eager.wait_compiles()     # (the programs compiling in the background are ready)
        before = _tier_counts(torchlike)
        _sync(step(*batch()))
        if _tier_counts(torchlike) == before:
            break
    _sync(step(*batch()))
    return time.perf_counter() - t0


def timeit(step, batch, steps):
    """ms per step over ``steps`` steps (the loss read after each, unless ``--no-read``)."""
    t0 = time.perf_counter()
    for _ in range(steps):
        loss = step(*batch())
        if PER_STEP_READ[0]:
            _read(loss)
    _sync(loss)
    return (time.perf_counter() - t0) / steps * 1e3


def _tier_counts(torchlike):
    st = torchlike.eager.stats()
    return st["interpreted"], st["traces"], st["background"]


PER_STEP_READ = [True]


def _read(loss):
    """The loss read back on the host after every step, as a loop that logs does (no two steps
    fuse into one program; every backend pays its device-to-host sync)."""
    if loss is None:
        return
    if hasattr(loss, "item"):
        loss.item()
    else:
        float(loss)


# ------------------------------------------------------------------ hand-written JAX steps

def _adam(params, grads, state, lr, b1=0.9, b2=0.999, eps=1e-8, wd=0.0):
    t = state["t"] + 1
    m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], grads)
    v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], grads)
    bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
    new = jax.tree.map(lambda p, m, v: p * (1 - lr * wd) - lr / bc1 * m /
                       (jnp.sqrt(v) / jnp.sqrt(bc2) + eps), params, m, v)
    return new, {"t": t, "m": m, "v": v}


def _adam_state(params):
    z = jax.tree.map(jnp.zeros_like, params)
    return {"t": jnp.zeros((), jnp.float32), "m": z, "v": jax.tree.map(jnp.zeros_like, params)}


def _lin(key, i, o, bias=True):
    k1, k2 = jax.random.split(key)
    b = 1 / math.sqrt(i)
    p = {"w": jax.random.uniform(k1, (o, i), jnp.float32, -b, b)}
    if bias:
        p["b"] = jax.random.uniform(k2, (o,), jnp.float32, -b, b)
    return p


def _apply_lin(p, x):
    y = x @ p["w"].T
    return y + p["b"] if "b" in p else y


def _xent(logits, y):
    lp = jax.nn.log_softmax(logits, -1)
    return -jnp.mean(jnp.take_along_axis(lp, y[:, None], 1))


def jax_mlp():
    ks = jax.random.split(jax.random.key(0), 3)
    params = [_lin(ks[0], 784, 256), _lin(ks[1], 256, 256), _lin(ks[2], 256, 10)]
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((64, 784), np.float32))
    y = jnp.asarray(rng.integers(0, 10, 64).astype(np.int32))

    def loss_fn(ps, x, y):
        h = jax.nn.relu(_apply_lin(ps[0], x))
        h = jax.nn.relu(_apply_lin(ps[1], h))
        return _xent(_apply_lin(ps[2], h), y)
    return params, _adam_state(params), loss_fn, (x, y), dict(lr=1e-3)


def jax_gpt(n_layer=2, d=128, n_head=4, seq=64, batch=8, vocab=256):
    ks = iter(jax.random.split(jax.random.key(0), 64))
    blocks = [dict(ln1=dict(g=jnp.ones(d), b=jnp.zeros(d)), qkv=_lin(next(ks), d, 3 * d),
                   proj=_lin(next(ks), d, d), ln2=dict(g=jnp.ones(d), b=jnp.zeros(d)),
                   fc=_lin(next(ks), d, 4 * d), out=_lin(next(ks), 4 * d, d))
              for _ in range(n_layer)]
    params = dict(tok=jax.random.normal(next(ks), (vocab, d)),
                  pos=jax.random.normal(next(ks), (seq, d)), blocks=blocks,
                  ln=dict(g=jnp.ones(d), b=jnp.zeros(d)),
                  head=_lin(next(ks), d, vocab, bias=False))
    params = jax.tree.map(lambda a: a.astype(jnp.float32), params)
    mask = jnp.triu(jnp.ones((seq, seq), bool), 1)
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.integers(0, vocab, (batch, seq)).astype(np.int32))
    y = jnp.asarray(rng.integers(0, vocab, (batch, seq)).astype(np.int32))

    def ln(p, x):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / jnp.sqrt(var + 1e-5) * p["g"] + p["b"]

    def loss_fn(ps, idx, y):
        h = ps["tok"][idx] + ps["pos"][jnp.arange(idx.shape[1])]
        b, t, _ = h.shape
        hd = d // n_head
        for blk in ps["blocks"]:
            q, k, v = jnp.split(_apply_lin(blk["qkv"], ln(blk["ln1"], h)), 3, -1)
            q, k, v = (a.reshape(b, t, n_head, hd).transpose(0, 2, 1, 3) for a in (q, k, v))
            att = jnp.where(mask, -jnp.inf, q @ k.transpose(0, 1, 3, 2) / math.sqrt(hd))
            o = (jax.nn.softmax(att, -1) @ v).transpose(0, 2, 1, 3).reshape(b, t, d)
            h = h + _apply_lin(blk["proj"], o)
            h = h + _apply_lin(blk["out"], jax.nn.gelu(_apply_lin(blk["fc"], ln(blk["ln2"], h)),
                                                       approximate=False))
        logits = _apply_lin(ps["head"], ln(ps["ln"], h))
        return _xent(logits.reshape(-1, vocab), y.reshape(-1))
    return params, _adam_state(params), loss_fn, (x, y), dict(lr=3e-4, wd=1e-2)


def jax_matmul(n=1024, k=8):
    ks = jax.random.split(jax.random.key(0), k + 1)
    params = [jax.random.normal(kk, (n, n), jnp.float32) / math.sqrt(n) for kk in ks[:k]]
    x = jax.random.normal(ks[k], (n, n), jnp.float32)

    def loss_fn(ps, x, y):
        for w in ps:
            x = x @ w
        return jnp.mean(x * x)
    return params, None, loss_fn, (x, None), dict(lr=1e-3)


def jax_chain():
    x = jnp.ones(16, jnp.float32)

    def loss_fn(x, _a, _b):
        h = x
        for _ in range(25):
            h = jnp.sin(h * 1.01)
        return h.sum()
    return x, None, loss_fn, (None, None), {}


def make_jax_step(kind):
    params, state, loss_fn, (x, y), hp = {"mlp": jax_mlp, "gpt": jax_gpt,
                                         "matmul": jax_matmul, "chain": jax_chain}[kind]()

    if kind == "chain":
        @jax.jit
        def step(p):
            return jax.value_and_grad(loss_fn)(p, None, None)
        holder = {"p": params}
        return lambda: step(holder["p"])[0]

    @functools_partial_donate
    def step(params, state, x, y):
        loss, g = jax.value_and_grad(loss_fn)(params, x, y)
        if state is None:
            return jax.tree.map(lambda p, g: p - hp["lr"] * g, params, g), state, loss
        new, st = _adam(params, g, state, hp["lr"], wd=hp.get("wd", 0.0))
        return new, st, loss

    holder = {"p": params, "s": state}

    def run():
        holder["p"], holder["s"], loss = step(holder["p"], holder["s"], x, y)
        return loss
    return run


def functools_partial_donate(fn):
    return jax.jit(fn, donate_argnums=(0, 1))


# ------------------------------------------------------------------ driver

def bench(kind, steps, torch_compile=True, rounds=5):
    """Every contestant warmed up, then timed in ``rounds`` interleaved rounds of ``steps``
    steps each (all exposed to the same background load); each keeps its best round."""
    import torchlike
    import torchlike.eager
    contestants = []        # [label, step, batch, mode context, warm-up s, note]

    def add(label, lib, how, mode=None):
        ctx = mode or contextlib.nullcontext
        try:
            model, opt, step, batch, holder = workloads.WORKLOADS[kind](lib)
            with ctx():
                if how == "module":
                    holder[0] = (torchlike.compile(model) if lib is torchlike
                                 else lib.compile(model))
                elif how == "step":
                    step = torchlike.compile(step)
                cs = warm_up(step, batch)
            for _ in range(3):
                # (the rounds' boundary: leaving fused mode runs the pending segment (the last
                # step's update), so a round's first step is a structure of its own; met three
                # times here, it is compiled before the timed rounds, as in a loop that never
                # switches modes)
                with ctx():
                    _sync(step(*batch()))
                    _sync(step(*batch()))
            contestants.append([label, step, batch, ctx, cs, ""])
        except Exception as e:  # noqa: BLE001
            contestants.append([label, None, None, ctx, float("nan"),
                                f"{type(e).__name__}: {str(e).splitlines()[0][:90]}"])

    add("torchlike eager (strict)", torchlike, "eager")
    add("torchlike eager (fused)", torchlike, "eager", torchlike.eager.fused)
    if kind != "chain":
        add("torchlike compiled module", torchlike, "module")
    add("torchlike compiled step", torchlike, "step")
    try:
        import torch
        torch.set_num_threads(TORCH_THREADS[0] or max(1, os.cpu_count() or 1))
        add("torch eager", torch, "eager")
        if torch_compile and kind != "chain":
            add("torch.compile (module)", torch, "module")
    except ImportError:
        contestants.append(["torch", None, None, contextlib.nullcontext, float("nan"),
                            "torch not installed"])
    jstep = make_jax_step(kind)
    t0 = time.perf_counter()
    for _ in range(3):
        _sync(jstep())
    contestants.append(["pure JAX jit step (donated)", lambda *a: jstep(), lambda: (),
                        contextlib.nullcontext,
                        time.perf_counter() - t0, ""])
    best = {c[0]: float("inf") for c in contestants}
    for _ in range(rounds):
        for c in contestants:
            label, step, batch, ctx = c[:4]
            if step is None:
                continue
            try:
                with ctx():
                    best[label] = min(best[label], timeit(step, batch, steps))
            except Exception as e:  # noqa: BLE001
                c[1] = None
                c[5] = f"{type(e).__name__}: {str(e).splitlines()[0][:90]}"
    return [(label, best[label] if step is not None else float("nan"), cs, note)
            for label, step, _b, _c, cs, note in contestants]


TORCH_THREADS = [0]
_STEPS = {"chain": 100, "mlp": 30, "gpt": 10, "matmul": 3}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--cache", action="store_true",
                    help="keep XLA's persistent compilation cache on (warm-ups then load)")
    ap.add_argument("--only", default="chain,mlp,gpt,matmul")
    ap.add_argument("--no-torch-compile", action="store_true")
    ap.add_argument("--no-read", action="store_true",
                    help="do not read the loss back after every timed step (only the last)")
    ap.add_argument("--torch-threads", type=int, default=0,
                    help="torch's intra-op threads (default: every core; on a loaded machine "
                         "OpenMP's spinning makes torch eager 10-30x slower than with 1)")
    a = ap.parse_args()
    TORCH_THREADS[0] = a.torch_threads
    PER_STEP_READ[0] = not a.no_read
    print(f"# torchlike.compile benchmark, {time.strftime('%Y-%m-%d %H:%M')}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"jax {jax.__version__} on {jax.devices()[0].platform}")
    for kind in a.only.split(","):
        steps = a.steps or _STEPS[kind]
        rows = bench(kind, steps, not a.no_torch_compile)
        jx = rows[-1][1]
        print(f"\n## {kind}  (best of 5 interleaved rounds of {steps} timed steps, after 12 "
              f"warm-up steps and until a step compiles nothing; loss read every step)")
        print(f"| backend | ms/step | x JAX step | warm-up (compile) s | note |")
        print("|---|---|---|---|---|")
        for label, ms, cs, note in rows:
            print(f"| {label} | {ms:.2f} | {ms / jx:.2f} | {cs:.2f} | {note} |")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
