"""The persistent compilation cache: a second process loads the programs the first compiled."""
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import jax, jax.monitoring
    hits = []
    jax.monitoring.register_event_listener(
        lambda name, **kw: hits.append(name) if name.endswith("cache_hits") else None)
    import torchlike as torch
    x = torch.randn(3, 5, requires_grad=True)
    ((x * 2.5).tanh().sum()).backward()
    print("DIR", jax.config.jax_compilation_cache_dir)
    print("HITS", len(hits))
""")


def _run(env):
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if " " in line)
    return lines["DIR"], int(lines["HITS"])


def test_second_process_hits_the_cache(tmp_path):
    # every call compiles (with the interpreter tier, a first process compiles nothing here)
    # (strict eager: the per-op programs are what the cache holds)
    env = dict(os.environ, TORCHLIKE_CACHE_DIR=str(tmp_path / "xla"), TORCHLIKE_INTERPRET_CALLS="0",
               TORCHLIKE_EAGER="strict")
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    d, hits1 = _run(env)
    assert d == str(tmp_path / "xla")
    assert os.listdir(d), "the first process wrote no compiled programs"
    _, hits2 = _run(env)
    assert hits1 == 0
    assert hits2 >= 3        # forward, forward-with-VJP and backward programs at least


def test_cache_can_be_turned_off(tmp_path):
    env = dict(os.environ, TORCHLIKE_CACHE_DIR=str(tmp_path / "xla"),
               TORCHLIKE_COMPILATION_CACHE="0")
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    d, _ = _run(env)
    assert d == "None"
    assert not (tmp_path / "xla").exists()
