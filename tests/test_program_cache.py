"""Compiled programs on disk (torchlike._program_cache): a second process loads them when a
signature leaves the interpreter; foreign, stale and corrupt entries are ignored, never run."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from torchlike import _program_cache

# an op, its gradient and an optimizer step, called past the interpreter's calls
SCRIPT = textwrap.dedent("""
    import json, numpy as np
    import torchlike as t
    from torchlike import _program_cache, _tiers
    w = t.nn.Parameter(t.tensor(np.linspace(-1, 1, 21, dtype=np.float32).reshape(3, 7)))
    opt = t.optim.SGD([w], lr=0.1)
    x = t.tensor(np.linspace(0, 2, 14, dtype=np.float32).reshape(7, 2))
    for _ in range(_tiers.INTERPRET_CALLS + 3):
        loss = (w @ x).tanh().sum()
        opt.zero_grad(); loss.backward(); opt.step()
    print(json.dumps({"w": w.detach().numpy().tolist(), **_program_cache.stats()}))
""")


def _run(cache_dir, **env):
    e = dict(os.environ, TORCHLIKE_CACHE_DIR=str(cache_dir), TORCHLIKE_PROGRAM_CACHE="1",
             TORCHLIKE_EAGER="strict", **env)     # (per-op programs: strict eager)
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=e, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _programs(cache_dir):
    d = os.path.join(str(cache_dir), "programs")
    return [os.path.join(d, n) for n in os.listdir(d) if not n.startswith(".")]


def test_a_second_process_loads_the_programs_and_computes_the_same(tmp_path):
    cold = _run(tmp_path)
    assert cold["saved"] > 0 and cold["loaded"] == 0
    assert len(_programs(tmp_path)) == cold["saved"]
    warm = _run(tmp_path)
    assert warm["loaded"] >= cold["saved"] - 1     # every program the cold run compiled (the
    # backward of a loaded forward may meet its compiled twin's pullback: one more compile)
    assert warm["ignored"] == 0
    np.testing.assert_array_equal(np.array(warm["w"]), np.array(cold["w"]))


def test_corrupt_and_foreign_entries_are_ignored_and_removed(tmp_path):
    cold = _run(tmp_path)
    files = _programs(tmp_path)
    assert files
    corrupt, foreign = files[0::2], files[1::2]
    for p in corrupt:
        with open(p, "r+b") as f:           # a valid header, a damaged program
            blob = f.read()
            f.seek(len(blob) // 2)
            f.write(b"\0garbage\0" * 8)
    for p in foreign:
        with open(p, "rb") as f:
            blob = f.read()
        rest = blob.split(b"\n", 2)
        meta = json.loads(rest[1])
        meta["jax"] = "0.0.1"               # another jax wrote it
        with open(p, "wb") as f:
            f.write(rest[0] + b"\n" + json.dumps(meta, sort_keys=True).encode() + b"\n" + rest[2])
    again = _run(tmp_path)
    np.testing.assert_array_equal(np.array(again["w"]), np.array(cold["w"]))
    assert again["ignored"] >= len(foreign)
    for p in foreign:                       # removed (and maybe written anew by this process)
        if os.path.exists(p):
            with open(p, "rb") as f:
                assert b'"0.0.1"' not in f.read()


def test_two_processes_share_one_directory(tmp_path):
    e = dict(os.environ, TORCHLIKE_CACHE_DIR=str(tmp_path), TORCHLIKE_PROGRAM_CACHE="1",
             TORCHLIKE_EAGER="strict")
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT], env=e, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=300)
            assert p.returncode == 0, err[-3000:]
            outs.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    np.testing.assert_array_equal(np.array(outs[0]["w"]), np.array(outs[1]["w"]))
    assert not [n for n in os.listdir(tmp_path / "programs") if n.startswith(".tmp-")]
    warm = _run(tmp_path)
    assert warm["loaded"] > 0 and warm["ignored"] == 0


@pytest.mark.parametrize("switch", ["TORCHLIKE_COMPILATION_CACHE", "TORCHLIKE_PROGRAM_CACHE"])
def test_the_cache_switches_off(tmp_path, switch):
    e = dict(os.environ, TORCHLIKE_CACHE_DIR=str(tmp_path), TORCHLIKE_PROGRAM_CACHE="1",
             TORCHLIKE_EAGER="strict")
    e[switch] = "0"
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=e, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    stats = json.loads(out.stdout.strip().splitlines()[-1])
    assert stats["saved"] == 0 and stats["loaded"] == 0
    assert not (tmp_path / "programs").exists()


def test_the_directory_is_bounded(tmp_path, monkeypatch):
    for i in range(10):
        p = tmp_path / f"entry{i}"
        p.write_bytes(b"x" * 1000)
        os.utime(p, (i, i))                 # entry0 is the least recently used
    monkeypatch.setattr(_program_cache, "MAX_BYTES", 5000)
    _program_cache._bound(str(tmp_path))
    left = sorted(os.listdir(tmp_path))
    assert sum(os.path.getsize(tmp_path / n) for n in left) <= 5000 * 3 // 4
    assert "entry9" in left and "entry0" not in left


@pytest.mark.parametrize("params", [
    (lambda x: x.sum(0), lambda x: x.sum(1)),                 # reduce axes
    (lambda x: x.reshape(6, 2), lambda x: x.reshape(2, 6)),   # shapes
    (lambda x: x[None, :, 0].T * 0 + x[:, 1][None].T,         # broadcast dimensions
     lambda x: x[None, :, 1].T * 0 + x[:, 0][None].T),
])
def test_keys_tell_programs_apart_by_every_parameter(params):
    import jax
    import jax.numpy as jnp
    x = jnp.arange(12.0).reshape(6, 2)
    a, b = (jax.make_jaxpr(f)(x) for f in params)
    assert _program_cache.key(a) != _program_cache.key(b)
    assert _program_cache.key(a) == _program_cache.key(jax.make_jaxpr(params[0])(x))


def test_programs_jax_loaded_from_its_own_cache_are_not_written_again(tmp_path):
    """An executable jax took from its persistent cache fails to run in another process once
    serialized again: only programs this process compiled are kept."""
    e = dict(os.environ, TORCHLIKE_CACHE_DIR=str(tmp_path), TORCHLIKE_PROGRAM_CACHE="0",
             TORCHLIKE_EAGER="strict")
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=e, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    first = json.loads(out.stdout.strip().splitlines()[-1])
    second = _run(tmp_path)          # jax's cache answers every compile
    assert second["saved"] == 0
    third = _run(tmp_path)
    assert third["loaded"] == 0 and third["ignored"] == 0
    np.testing.assert_array_equal(np.array(third["w"]), np.array(first["w"]))


def test_a_donating_program_is_stored_under_a_name_of_its_own():
    # (a program that takes over its inputs must never be loaded for a caller that did not
    # prepare them: an optimizer's group update and a one-parameter update can trace alike)
    import jax
    import jax.numpy as jnp
    closed = jax.make_jaxpr(lambda p, s: (p - s, s * 0.9))(jnp.ones(3), jnp.ones(3))
    assert _program_cache.key(closed) == _program_cache.key(closed, ())
    assert _program_cache.key(closed, (0,)) != _program_cache.key(closed)
    assert _program_cache.key(closed, (0,)) != _program_cache.key(closed, (0, 1))


def test_the_background_thread_runs_urgent_items_first_and_wait_waits_for_all():
    """One thread runs what ``warm`` is handed: an urgent item (a fused segment's program)
    before every waiting one that is not, the others in order; ``wait`` returns once all that
    was handed before it ran; an item's error is its future's."""
    import threading
    started, gate, ran = threading.Event(), threading.Event(), []
    # (holds the thread while the rest queue)
    first = _program_cache.warm(lambda: started.set() or gate.wait())
    assert started.wait(60)
    futs = [_program_cache.warm(lambda k=k: ran.append(k) or k) for k in ("a", "b")]
    futs.append(_program_cache.warm(lambda: ran.append("urgent") or "u", urgent=True))
    futs.append(_program_cache.warm(lambda: 1 / 0))
    futs.append(_program_cache.warm(lambda: ran.append("later urgent"), urgent=True))
    assert ran == [] and not first.done()
    gate.set()
    assert _program_cache.wait(60)
    assert ran == ["urgent", "later urgent", "a", "b"]
    assert [f.result() for f in futs[:3]] == ["a", "b", "u"]
    with pytest.raises(ZeroDivisionError):
        futs[3].result()


def test_what_is_still_queued_at_exit_is_cancelled():
    """At exit the queued items are dropped: their futures are cancelled (a reader gets
    CancelledError), the running one finishes."""
    import concurrent.futures
    import threading
    started, gate, ran = threading.Event(), threading.Event(), []
    running = _program_cache.warm(lambda: started.set() or gate.wait())
    assert started.wait(60)
    queued = _program_cache.warm(lambda: ran.append("queued"))
    _program_cache._drop()
    gate.set()
    assert running.result(60) is True
    with pytest.raises(concurrent.futures.CancelledError):
        queued.result(60)
    assert _program_cache.wait(60) and ran == []
