"""What one eager MLP training step compiles, pinned: a change that adds XLA programs to a step
(or makes a warm step compile again) fails here. Each count is taken in a fresh process (strict
eager, eight interpreted calls, no background compiles, an empty program cache): the counters
are process-wide, and in a test worker other tests' tables and threads moved them."""
import json
import os
import subprocess
import sys

# programs a Linear-ReLU-Linear-ReLU-Linear + cross_entropy + Adam step compiles once each of its
# signatures has met the interpreter INTERPRET_CALLS times: per op its forward-with-VJP and
# backward, the weights' transposes (forward-with-VJP, backward), the engine's gradient sums and
# one jitted Adam update for the group (traced for the compiled program and the interpreter
# alike). The transposed views die with the step's graph (a backward releases what its nodes
# saved), so the update refreshes none of them. Then one more: the backward's graph, steady once
# every op is compiled, runs as one program from its third meeting (autograd/fused_backward.py).
MLP_STEP_PROGRAMS = 19
CALLS = 8

_PRELUDE = """
import json
import torchlike as torch
from torchlike import _registry as R
nn = torch.nn
"""


def _fresh(code, tmp_path):
    env = dict(os.environ, TORCHLIKE_CACHE_DIR=str(tmp_path), TORCHLIKE_EAGER="strict",
               TORCHLIKE_INTERPRET_CALLS=str(CALLS), TORCHLIKE_BACKGROUND_COMPILE="0")
    out = subprocess.run([sys.executable, "-c", _PRELUDE + code], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.splitlines()[-1])


def test_mlp_step_compile_count_is_pinned(tmp_path):
    counts = _fresh(f"""
torch.manual_seed(0)
m = nn.Sequential(nn.Linear(37, 23), nn.ReLU(), nn.Linear(23, 23), nn.ReLU(), nn.Linear(23, 7))
opt = torch.optim.Adam(m.parameters(), lr=1e-3)
x, y = torch.randn(13, 37), torch.randint(0, 7, (13,))
before = R.trace_total()
counts = []
for _ in range({CALLS + 5}):
    loss = nn.functional.cross_entropy(m(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    counts.append(R.trace_total() - before)
print(json.dumps(counts))
""", tmp_path)
    assert counts[0] == 0, "a cold step compiled"
    # a signature used twice a step (ReLU of the two equal layers) leaves the tier after 4 steps
    assert counts[3] == 0, counts
    # from the step after INTERPRET_CALLS on, every program is compiled, once
    assert counts[CALLS] == MLP_STEP_PROGRAMS, counts
    assert counts[CALLS + 1] == MLP_STEP_PROGRAMS, counts
    assert counts[CALLS + 2:] == [MLP_STEP_PROGRAMS + 1] * 3, counts


def test_a_new_batch_size_compiles_only_batch_dependent_programs(tmp_path):
    got = _fresh(f"""
m = nn.Sequential(nn.Linear(41, 19), nn.ReLU(), nn.Linear(19, 5))
opt = torch.optim.SGD(m.parameters(), lr=0.1)

def step(b):
    loss = nn.functional.cross_entropy(m(torch.randn(b, 41)), torch.randint(0, 5, (b,)))
    opt.zero_grad()
    loss.backward()
    opt.step()

for _ in range({CALLS + 1}):
    step(11)
first = R.trace_total()
step(11)
again = R.trace_total()
for _ in range({CALLS}):
    step(12)
interpreted = R.trace_total()
step(12)
print(json.dumps([first, again, interpreted, R.trace_total()]))
""", tmp_path)
    first, again, interpreted, last = got
    assert again == first, got
    assert interpreted == first, got    # a new batch size's first steps are interpreted
    grown = last - first
    assert 0 < grown < first, got     # weight-shaped programs (transposes, optimizer) are reused
