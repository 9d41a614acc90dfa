"""What one eager MLP training step compiles, pinned: a change that adds XLA programs to a step
(or makes a second step with the same shapes compile again) fails here."""
import torchlike as torch
from torchlike import _registry as R

# programs one Linear-ReLU-Linear-ReLU-Linear + cross_entropy + Adam step compiles on new shapes:
# per op its forward-with-VJP and backward (ReLU shared by both layers), the gathers refreshing
# the weights' transposed views after the update, and one jitted Adam update for the group. The
# transposes themselves (data movement) and their index maps run on the host for their first
# HOST_CALLS calls at a shape, then compile: forward (index map), forward-with-VJP and backward
# for three weight shapes.
MLP_STEP_PROGRAMS = 16
HOT_TRANSPOSE_PROGRAMS = 9


def _total():
    return sum(sum(v.values()) for v in R.trace_counts().values() if isinstance(v, dict))


def test_mlp_step_compile_count_is_pinned():
    nn = torch.nn
    torch.manual_seed(0)
    # shapes no other test uses, so every program of the step is new here
    m = nn.Sequential(nn.Linear(37, 23), nn.ReLU(), nn.Linear(23, 23), nn.ReLU(),
                      nn.Linear(23, 7))
    opt = torch.optim.Adam(m.parameters(), lr=1e-3)
    x, y = torch.randn(13, 37), torch.randint(0, 7, (13,))
    before = _total()
    counts = []
    for _ in range(R.HOST_CALLS + 3):
        loss = nn.functional.cross_entropy(m(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        counts.append(_total() - before)
    assert counts[0] == MLP_STEP_PROGRAMS, counts
    warm = counts[1:R.HOST_CALLS]
    assert warm == [counts[0]] * len(warm), "a warm step compiled again"
    # the step after HOST_CALLS: the transposes compile, once
    assert counts[R.HOST_CALLS] == MLP_STEP_PROGRAMS + HOT_TRANSPOSE_PROGRAMS, counts
    assert counts[R.HOST_CALLS + 1:] == [counts[R.HOST_CALLS]] * 2, counts


def test_a_new_batch_size_compiles_only_batch_dependent_programs():
    nn = torch.nn
    m = nn.Sequential(nn.Linear(41, 19), nn.ReLU(), nn.Linear(19, 5))
    opt = torch.optim.SGD(m.parameters(), lr=0.1)

    def step(b):
        loss = nn.functional.cross_entropy(m(torch.randn(b, 41)), torch.randint(0, 5, (b,)))
        opt.zero_grad()
        loss.backward()
        opt.step()

    step(11)
    first = _total()
    step(11)
    assert _total() == first
    step(12)
    grown = _total() - first
    assert 0 < grown < first     # weight-shaped programs (transposes, optimizer) are reused
