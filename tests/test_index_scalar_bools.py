"""Scalar bools in an index (``True``, ``False``, 0-dim bool and uint8 tensors) against torch.

torch reads each as a new dim of size 1 indexed by ``[0]`` (True) or ``[]`` (False): an advanced
index, broadcast with the others (``x[True, True]`` is ``(1, *x.shape)``, ``x[True, idx]`` is
``x[idx]``), placed by the advanced-index rules, never a view, and counted among the tensor
indices in error messages. Swept over every pair of index kinds (and triples with two scalar
bools): values, shape, grad_fn, gradient, whether the result writes through, three
assignments, and the exception class and message where torch raises.
"""
import itertools

import pytest
import torch

import torchlike

ATOMS = {
    "T": lambda m: m.tensor(True), "F": lambda m: m.tensor(False),
    "U1": lambda m: m.tensor(1, dtype=m.uint8), "U0": lambda m: m.tensor(0, dtype=m.uint8),
    "pT": lambda m: True, "pF": lambda m: False,
    "0": lambda m: 0, "s": lambda m: slice(None), "s1": lambda m: slice(1, None),
    "N": lambda m: None, "E": lambda m: Ellipsis, "i0": lambda m: m.tensor(1),
    "i": lambda m: m.tensor([0, 1]), "big": lambda m: m.tensor([5]),
    "empty": lambda m: m.tensor([], dtype=m.long), "m": lambda m: m.tensor([True, False]),
}
BOOLS = ("T", "F", "U1", "U0", "pT", "pF")


def _combos():
    out = []
    for n in (1, 2, 3):
        for combo in itertools.product(ATOMS, repeat=n):
            nb = sum(c in BOOLS for c in combo)
            if nb >= 1 and (n < 3 or (nb >= 2 and combo[0] in ("T", "pF", "U0"))):
                out.append(combo)
    return out


def _error(e):
    return (type(e).__name__, str(e).split("\n")[0])


def _record(m, combo):
    base = lambda: m.arange(24.).reshape(2, 3, 4)  # noqa: E731
    key = lambda: tuple(ATOMS[c](m) for c in combo)  # noqa: E731
    rec = {}
    a = base().requires_grad_()
    try:
        r = a[key()]
        rec["get"] = (tuple(r.shape), r.detach().flatten().tolist(), type(r.grad_fn).__name__)
        if r.numel():
            r.sum().backward()
            rec["grad"] = a.grad.flatten().tolist()
    except Exception as e:  # noqa: BLE001
        rec["get"] = _error(e)
    b = base()
    try:
        v = b[key()]
        if v.numel():
            v.fill_(-7)
        rec["writes through"] = b.flatten().tolist() != base().flatten().tolist()
    except Exception as e:  # noqa: BLE001
        rec["writes through"] = _error(e)
    values = {"number": lambda shape: -1.0, "full": lambda shape: -2 * m.ones(shape),
              "row": lambda shape: m.tensor([-3., -4., -5., -6.])}
    for name, value in values.items():
        b = base()
        try:
            shape = tuple(base()[key()].shape)
            b[key()] = value(shape)
            rec["set " + name] = b.flatten().tolist()
        except Exception as e:  # noqa: BLE001
            rec["set " + name] = _error(e)
    return rec


@pytest.mark.parametrize("combo", _combos(), ids=",".join)
def test_scalar_bools_in_an_index_as_torch(combo):
    assert _record(torchlike, combo) == _record(torch, combo)


def test_scalar_bools_in_an_index_as_torch_in_fused_eager():
    with torchlike.eager.fused():
        for combo in [("T", "T"), ("pT", "i"), ("F", "big"), ("U1", "s", "i"), ("E", "U0"),
                      ("pF", "m"), ("T", "N", "pT")]:
            assert _record(torchlike, combo) == _record(torch, combo), combo


@pytest.mark.parametrize("flag", ["T", "U1", "pT", "F"])
@pytest.mark.parametrize("value", ["self", "part"])
def test_an_assignment_from_the_tensor_itself_raises_torchs_overlap_error(flag, value):
    """A scalar bool's dim is the whole tensor, unsqueezed: a value read from the tensor itself
    shares memory with what the assignment writes."""
    def run(m):
        x = m.arange(4.)
        key = (ATOMS[flag](m), m.tensor([1]))
        try:
            x[key] = x if value == "self" else x[:1]
        except RuntimeError as e:
            return str(e)
        return x.tolist()
    assert run(torchlike) == run(torch)


def test_an_assignment_wrong_twice_names_the_index_mismatch_first():
    """DIFFERENCES.md: an assignment whose index tensors do not broadcast and whose value reads
    the written memory raises torch's IndexError for the indices, where torch names the
    overlap first (a RuntimeError)."""
    def run(m):
        x = m.arange(4.)
        try:
            x[m.tensor(False), m.tensor([0, 1])] = x[:2]
        except (IndexError, RuntimeError) as e:
            return type(e).__name__
    assert run(torch) == "RuntimeError"
    assert run(torchlike) == "IndexError"
