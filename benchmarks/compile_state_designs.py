"""Two ways to give a compiled training step its state, measured side by side in one process.

    python benchmarks/compile_state_designs.py [--steps N] [--repeats R]

Workload: the MLP 784-256-256-10, batch 64, Adam step (benchmarks/workloads.py, (b)).

* explicit state threading (what torchlike.compile does, ``torchlike/_compile/_step.py``): the
  state's arrays go into one ``jax.jit`` program as arguments and come back as outputs, which
  are written back into the same Tensor objects;
* jax's mutable array refs (``jax.new_ref``, jax 0.10): the state lives in ``Ref`` objects that
  the program reads (``ref[...]``) and writes (``ref[...] = v``) in place; nothing comes back.

Each design is measured twice: as a hand-written pure-JAX step (the mechanism alone) and inside
torchlike (the real compiled step vs a prototype that runs the same traced torchlike step with
its persistent state -- parameters and optimizer state -- in refs, kept in sync with the
Tensors: a Tensor whose array changed outside is copied into its ref before the call, and the
written refs are read back into the Tensors after it). Prints per-call time (best of
``--repeats`` timings of ``--steps`` calls) and the first call's time (trace + XLA compile).
The XLA persistent compilation cache is off for this process, so first calls really compile.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time

os.environ.setdefault("TORCHLIKE_COMPILATION_CACHE", "0")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import compile as cb  # noqa: E402  (benchmarks/compile.py: the pure-JAX MLP and Adam)
import workloads  # noqa: E402


def _block(x):
    jax.block_until_ready(x._data if hasattr(x, "_data") else x)


def measure(call, steps, repeats):
    """(first call s, best per-call ms)."""
    t0 = time.perf_counter()
    _block(call())
    first = time.perf_counter() - t0
    for _ in range(3):
        _block(call())
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(steps):
            out = call()
        _block(out)
        best = min(best, (time.perf_counter() - t0) / steps * 1e3)
    return first, best


# ------------------------------------------------------------------ pure JAX

def jax_threaded():
    params, state, loss_fn, (x, y), hp = cb.jax_mlp()

    def step(params, state, x, y):
        loss, g = jax.value_and_grad(loss_fn)(params, x, y)
        new, st = cb._adam(params, g, state, hp["lr"])
        return new, st, loss

    step = jax.jit(step, donate_argnums=(0, 1))
    box = {"p": params, "s": state}

    def call():
        box["p"], box["s"], loss = step(box["p"], box["s"], x, y)
        return loss
    return call


def jax_refs():
    params, state, loss_fn, (x, y), hp = cb.jax_mlp()
    prefs = jax.tree.map(jax.new_ref, params)
    srefs = jax.tree.map(jax.new_ref, state)

    @jax.jit
    def step(prefs, srefs, x, y):
        params = jax.tree.map(lambda r: r[...], prefs)
        state = jax.tree.map(lambda r: r[...], srefs)
        loss, g = jax.value_and_grad(loss_fn)(params, x, y)
        new, st = cb._adam(params, g, state, hp["lr"])
        jax.tree.map(lambda r, v: r.__setitem__(Ellipsis, v), prefs, new)
        jax.tree.map(lambda r, v: r.__setitem__(Ellipsis, v), srefs, st)
        return loss

    return lambda: step(prefs, srefs, x, y)


# ------------------------------------------------------------------ torchlike

def tl_threaded():
    import torchlike
    model, opt, step, batch, holder = workloads.make_mlp(torchlike)
    step = torchlike.compile(step)
    return lambda: step(*batch())


class RefStep:
    """Prototype: torchlike's compiled step with the persistent state in ``jax.Ref``s.

    The step is discovered, pre-initialised and traced exactly as ``torchlike.compile`` does
    (same ``StepState``, same traced body); only the program's boundary differs: parameters and
    optimizer state are refs read and written inside the program, the other state (the zero
    ``.grad``s a step starts from) stays plain arguments. One guard key only (a prototype).
    """

    def __init__(self, fn):
        self.fn = fn
        self.entry = None
        self.holder = [None]
        self.refs = None        # per state position: a Ref, or None (a plain argument)
        self.synced = None      # per state position: the array last copied to/from its ref

    def _build(self, st, treedef, leaves):
        from torchlike._compile import _step
        from torchlike.autograd import grad_mode as gm
        entry = _step.build_step_entry("refstep", self.fn, treedef, leaves,
                                       lambda: self.holder[0], gm._state.grad_enabled)
        body = entry.jitted.__wrapped__
        grads = {i for i in st.grad_idx if i is not None}
        self.refs = [None if i in grads else jax.new_ref(t._data) for i, t in enumerate(st.S)]
        self.synced = [t._data for t in st.S]
        self.plain_pos = [i for i, r in enumerate(self.refs) if r is None]

        def ref_body(refs, plain, g_arrs, hp_arrs, a_arrs):
            s, it = [], iter(plain)
            for r in refs:
                s.append(next(it) if r is None else r[...])
            new, created, outs, flags = body(s, g_arrs, hp_arrs, a_arrs)
            changed = entry.spec[0]
            back = []
            for i, v in zip(changed, new):
                if refs[i] is None:
                    back.append(v)
                else:
                    refs[i][...] = v
            return back, created, outs, flags

        self.jitted = jax.jit(ref_body)
        self.entry = entry

    def __call__(self, *args):
        from torchlike._compile import _api, _step, _trace
        from torchlike._compile._discover import discover
        leaves, treedef = _trace.flatten_args(args, {})
        found = discover(self.fn, args, {})
        made = _api._preinit(found)
        try:
            st = _step.StepState(found)
            if self.entry is None:
                self._build(st, treedef, leaves)
            self.holder[0] = st
            out = _step.run_step_entry(_SpecProxy(self._program, self.entry), st, leaves)
        finally:
            self.holder[0] = None
            _api._undo_preinit(made)
        return out

    def _program(self, s_arrs, g_arrs, hp_arrs, a_arrs):
        refs, synced = self.refs, self.synced
        for i, a in enumerate(s_arrs):
            r = refs[i]
            if r is not None and a is not synced[i]:
                r[...] = a                  # changed outside the program: copy into its ref
        plain = [s_arrs[i] for i in self.plain_pos]
        back, created, outs, flags = self.jitted(refs, plain, g_arrs, hp_arrs, a_arrs)
        new_data, it = [], iter(back)
        for i in self.entry.spec[0]:
            if refs[i] is None:
                new_data.append(next(it))
            else:
                a = refs[i][...]            # read the written ref back into the Tensor
                synced[i] = a
                new_data.append(a)
        return new_data, created, outs, flags


class _SpecProxy:
    """``run_step_entry``'s view of the prototype: its program and the traced entry's spec."""

    def __init__(self, program, entry):
        self.jitted = program
        self._entry = entry

    @property
    def spec(self):
        return self._entry.spec


def tl_refs():
    import torchlike
    model, opt, step, batch, holder = workloads.make_mlp(torchlike)
    return RefStep(step), batch, model, opt


def check_same_numbers(steps=5):
    """The prototype leaves the same parameters as the real compiled step."""
    import numpy as np
    import torchlike
    a = workloads.make_mlp(torchlike)
    sa = torchlike.compile(a[2])
    for _ in range(steps):
        sa(*a[3]())
    b = workloads.make_mlp(torchlike)
    sb = RefStep(b[2])
    for _ in range(steps):
        sb(*b[3]())
    err = max(float(np.abs(np.asarray(p) - np.asarray(q)).max())
              for p, q in zip(a[0].parameters(), b[0].parameters()))
    return err


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    print(f"# compile state designs, MLP 784-256-256-10 batch 64 Adam, "
          f"{time.strftime('%Y-%m-%d %H:%M')}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, jax {jax.__version__} on {jax.devices()[0].platform}")
    rows = []
    for label, make in (("pure JAX, threaded (donated)", jax_threaded),
                        ("pure JAX, refs", jax_refs),
                        ("torchlike.compile step, threaded (built)", tl_threaded)):
        first, ms = measure(make(), a.steps, a.repeats)
        rows.append((label, ms, first))
    step, batch, _m, _o = tl_refs()
    first, ms = measure(lambda: step(*batch()), a.steps, a.repeats)
    rows.append(("torchlike step, refs (prototype)", ms, first))
    print("| design | ms/call | first call (trace + compile) s |")
    print("|---|---|---|")
    for label, ms, first in rows:
        print(f"| {label} | {ms:.3f} | {first:.2f} |")
    err = check_same_numbers()
    print(f"\nrefs prototype vs torchlike.compile, 5 steps: max |parameter difference| = "
          f"{err:.2e}")


if __name__ == "__main__":
    main()
