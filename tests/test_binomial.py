"""torch.binomial vs torch: the draws are torchlike's stream (not torch's), so the tests compare
distribution properties with a fixed seed, the exact edge cases, dtypes, shapes, the graph and
torch's argument errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike
from oracle import check_raises


def both(fn):
    return fn(torch), fn(torchlike)


@pytest.mark.parametrize("n,p", [(10.0, 0.3), (1.0, 0.5), (50.0, 0.9), (1000.0, 0.02),
                                 (3.0, 0.999)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_mean_variance_and_support(n, p, dtype):
    torchlike.manual_seed(1234)
    size = 20000
    count = torchlike.full((size,), n, dtype=getattr(torchlike, dtype))
    prob = torchlike.full((size,), p, dtype=getattr(torchlike, dtype))
    x = torchlike.binomial(count, prob)
    assert x.dtype == getattr(torchlike, dtype) and tuple(x.shape) == (size,)
    v = x.numpy().astype(np.float64)
    assert np.all(v == np.round(v)) and v.min() >= 0 and v.max() <= n
    mean, var = n * p, n * p * (1 - p)
    # 6 standard errors of the sample mean and of the sample variance
    assert abs(v.mean() - mean) < 6 * np.sqrt(var / size) + 1e-9
    assert abs(v.var() - var) < 6 * np.sqrt(2 * var ** 2 / size + var / size) + 1e-9
    # torch's own draws satisfy the same bounds (the test's statistics are torch's law)
    t = torch.binomial(torch.full((size,), n, dtype=getattr(torch, dtype)),
                       torch.full((size,), p, dtype=getattr(torch, dtype))).double().numpy()
    assert abs(t.mean() - mean) < 6 * np.sqrt(var / size) + 1e-9


# count, prob: the cases whose draws are certain, equal to torch's
EXACT = [
    ("count 0", [0.0, 0.0, 0.0], [0.1, 0.5, 1.0]),
    ("prob 0", [1.0, 7.0, 100.0], [0.0, 0.0, 0.0]),
    ("prob 1", [1.0, 7.0, 100.0], [1.0, 1.0, 1.0]),
    ("prob above 1 clamps", [4.0, 9.0], [1.5, 3.0]),
    ("prob below 0 clamps", [4.0, 9.0], [-0.5, -3.0]),
    ("negative count", [-1.0, -5.5], [0.5, 0.5]),
    ("fractional count, prob 1 draws the count", [2.5, 7.9], [1.0, 1.0]),
    ("nan prob", [3.0], [float("nan")]),
    ("infinite count, prob 1", [float("inf")], [1.0]),
    ("nan or infinite count, prob 0", [float("nan"), float("-inf")], [0.0, 1.0]),
    ("empty", [], []),
]


@pytest.mark.parametrize("label,count,prob", EXACT, ids=[e[0] for e in EXACT])
def test_certain_draws_equal_torch(label, count, prob):
    t, ours = both(lambda L: L.binomial(L.tensor(count), L.tensor(prob)))
    np.testing.assert_array_equal(ours.numpy(), t.numpy())
    assert str(ours.dtype) == str(t.dtype)


def test_fractional_count_truncates():
    torchlike.manual_seed(0)
    v = torchlike.binomial(torchlike.full((5000,), 2.5), torchlike.full((5000,), 0.5)).numpy()
    assert set(np.unique(v)) == {0.0, 1.0, 2.0}


def test_broadcast_shapes():
    for cs, ps in (((3, 1), (1, 4)), ((1, 4), (3, 1)), ((3,), (1,)), ((), ()), ((2, 3), (3,))):
        t, ours = both(lambda L: L.binomial(L.full(cs, 5.0), L.full(ps, 0.5)))
        assert tuple(ours.shape) == tuple(t.shape)


def test_reproducible_under_seed_and_generator():
    c, p = torchlike.full((100,), 20.0), torchlike.full((100,), 0.4)
    torchlike.manual_seed(7)
    a = torchlike.binomial(c, p)
    torchlike.manual_seed(7)
    b = torchlike.binomial(c, p)
    assert torchlike.equal(a, b)
    assert not torchlike.equal(torchlike.binomial(c, p), b)
    g1 = torchlike.Generator().manual_seed(3)
    g2 = torchlike.Generator().manual_seed(3)
    assert torchlike.equal(torchlike.binomial(c, p, g1), torchlike.binomial(c, p, generator=g2))
    assert torchlike.equal(torchlike.binomial(count=c, prob=p, generator=g1),
                           torchlike.binomial(c, p, g2))


def test_graph_requires_grad_and_backward_raises():
    for lib in (torch, torchlike):
        c = lib.tensor([2.0, 5.0], requires_grad=True)
        out = lib.binomial(c, lib.tensor([0.5, 0.5]))
        assert out.requires_grad and out.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::binomial is not "
                                               "implemented"):
            out.sum().backward()
        p = lib.tensor([0.5, 0.5], requires_grad=True)
        assert lib.binomial(lib.tensor([2.0, 5.0]), p).requires_grad
        assert not lib.binomial(lib.tensor([2.0, 5.0]), p.detach()).requires_grad


ERRORS = [
    ("half", lambda L: L.binomial(L.ones(3).half(), L.ones(3).half())),
    ("bfloat16", lambda L: L.binomial(L.ones(3).bfloat16(), L.ones(3).bfloat16())),
    ("prob dtype differs", lambda L: L.binomial(L.ones(3), L.ones(3).double())),
    ("count dtype differs", lambda L: L.binomial(L.ones(3).double(), L.ones(3))),
    ("half prob", lambda L: L.binomial(L.ones(3), L.ones(3).half())),
    ("integer count", lambda L: L.binomial(L.ones(3).long(), L.ones(3))),
    ("integer prob", lambda L: L.binomial(L.ones(3), L.ones(3).long())),
    ("bool count", lambda L: L.binomial(L.ones(3).bool(), L.ones(3).bool())),
    ("complex count", lambda L: L.binomial(L.ones(3).to(L.complex64), L.ones(3))),
    ("shapes", lambda L: L.binomial(L.ones(3), L.ones(2))),
    ("float prob", lambda L: L.binomial(L.ones(3), 0.5)),
    ("float count", lambda L: L.binomial(5.0, L.ones(3))),
    ("generator not a Generator", lambda L: L.binomial(L.ones(3), L.ones(3), generator=1)),
]


@pytest.mark.parametrize("label,call", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors(label, call):
    ours, t = check_raises(lambda m: call(m))
    assert type(ours) is type(t)
    assert str(ours) == str(t)


def test_non_finite_count_draws_nan():
    """DIFFERENCES.md: with 0 < prob < 1 a nan or infinite count draws nan (torch's kernel
    never returns for a nan count, and gives inf or nan for an infinite one)."""
    out = torchlike.binomial(torchlike.tensor([float("nan"), float("inf")]),
                             torchlike.tensor([0.5, 0.5]))
    assert np.isnan(out.numpy()).all()


# distributions.Binomial.sample draws through torch.binomial, as torch's does: its edge cases,
# dtypes and errors are binomial's
BINOMIAL_SAMPLES = [
    ("a prob of 1 draws the fractional count, 0 draws 0",
     lambda L: L.distributions.Binomial(L.tensor([2.5, 3.0, 0.0]), validate_args=False,
                                        probs=L.tensor([1.0, 0.0, 0.5])).sample((2,))),
    ("infinite logits", lambda L: L.distributions.Binomial(
        L.tensor([2.5, 3.0]), logits=L.tensor([float("inf"), -float("inf")]),
        validate_args=False).sample()),
    ("an infinite count at prob 1", lambda L: L.distributions.Binomial(
        L.tensor([float("inf")]), probs=L.tensor([1.0]), validate_args=False).sample()),
    ("float64", lambda L: L.distributions.Binomial(
        L.tensor([4.0, 0.0], dtype=L.float64), probs=L.tensor([1.0, 0.5], dtype=L.float64))
     .sample((3,))),
]


@pytest.mark.parametrize("label,call", BINOMIAL_SAMPLES, ids=[s[0] for s in BINOMIAL_SAMPLES])
def test_distribution_sample_edge_cases(label, call):
    t, ours = both(call)
    assert ours.dtype == getattr(torchlike, str(t.dtype).split(".")[-1])
    assert tuple(ours.shape) == tuple(t.shape)
    np.testing.assert_array_equal(ours.numpy(), t.numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_distribution_sample_refuses_what_binomial_refuses(dtype):
    def call(L):
        return L.distributions.Binomial(5, probs=L.tensor([0.3], dtype=getattr(L, dtype))) \
            .sample()
    with pytest.raises(Exception) as t:
        call(torch)
    with pytest.raises(Exception) as ours:
        call(torchlike)
    assert type(ours.value) is type(t.value) and str(ours.value) == str(t.value)


def test_distribution_sample_shape_graph_and_moments():
    def draw(L):
        p = L.tensor([0.2, 0.7], requires_grad=True)
        return L.distributions.Binomial(L.tensor([8.0, 3.0]), probs=p).sample((20000,))
    t, ours = both(draw)
    assert tuple(ours.shape) == tuple(t.shape) and ours.dtype == torchlike.float32
    assert ours.requires_grad is t.requires_grad is False and ours.grad_fn is None
    v = ours.numpy()
    assert np.all(v == np.round(v)) and v.min() >= 0 and np.all(v.max(0) <= [8, 3])
    # 6 standard errors of the sample means (the streams differ from torch's)
    n, p = np.array([8.0, 3.0]), np.array([0.2, 0.7])
    assert np.all(np.abs(v.mean(0) - n * p) < 6 * np.sqrt(n * p * (1 - p) / len(v)))
    np.testing.assert_allclose(t.numpy().mean(0), n * p, atol=0.05)
