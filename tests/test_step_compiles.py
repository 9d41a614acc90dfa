"""What one eager MLP training step compiles, pinned: a change that adds XLA programs to a step
(or makes a warm step compile again) fails here."""
import pytest

import torchlike as torch
from torchlike import _registry as R
from torchlike import _tiers

pytestmark = pytest.mark.usefixtures("strict_eager")    # (the per-op programs)

# programs a Linear-ReLU-Linear-ReLU-Linear + cross_entropy + Adam step compiles once each of its
# signatures has met the interpreter INTERPRET_CALLS times: per op its forward-with-VJP and
# backward, the weights' transposes (forward-with-VJP, backward), the engine's gradient sums and
# one jitted Adam update for the group (traced for the compiled program and the interpreter
# alike). The transposed views die with the step's graph (a backward releases what its nodes
# saved), so the update refreshes none of them.
MLP_STEP_PROGRAMS = 19


@pytest.fixture(autouse=True)
def _eight_calls(monkeypatch):
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 8)


def test_mlp_step_compile_count_is_pinned():
    nn = torch.nn
    torch.manual_seed(0)
    # shapes no other test uses, so every program of the step is new here
    m = nn.Sequential(nn.Linear(37, 23), nn.ReLU(), nn.Linear(23, 23), nn.ReLU(),
                      nn.Linear(23, 7))
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    x, y = torch.randn(13, 37), torch.randint(0, 7, (13,))
    before = R.trace_total()
    counts = []
    for _ in range(_tiers.INTERPRET_CALLS + 3):
        loss = nn.functional.cross_entropy(m(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        counts.append(R.trace_total() - before)
    assert counts[0] == 0, "a cold step compiled"
    # a signature used twice a step (ReLU of the two equal layers) leaves the tier after 4 steps
    assert counts[3] == 0, counts
    # from the step after INTERPRET_CALLS on, every program is compiled, once
    assert counts[_tiers.INTERPRET_CALLS] == MLP_STEP_PROGRAMS, counts
    assert counts[_tiers.INTERPRET_CALLS + 1:] == [MLP_STEP_PROGRAMS] * 2, counts


def test_a_new_batch_size_compiles_only_batch_dependent_programs():
    nn = torch.nn
    m = nn.Sequential(nn.Linear(41, 19), nn.ReLU(), nn.Linear(19, 5))
    opt = torch.optim.SGD(m.parameters(), lr=0.1)

    def step(b):
        loss = nn.functional.cross_entropy(m(torch.randn(b, 41)), torch.randint(0, 5, (b,)))
        opt.zero_grad()
        loss.backward()
        opt.step()

    for _ in range(_tiers.INTERPRET_CALLS + 1):
        step(11)
    first = R.trace_total()
    step(11)
    assert R.trace_total() == first
    for _ in range(_tiers.INTERPRET_CALLS):
        step(12)
    assert R.trace_total() == first     # a new batch size's first steps are interpreted
    step(12)
    grown = R.trace_total() - first
    assert 0 < grown < first     # weight-shaped programs (transposes, optimizer) are reused
