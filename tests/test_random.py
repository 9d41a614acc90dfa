"""Issue 3, random: samplers against torch for shape, dtype and requires_grad; ranges and
distribution statistics against the analytic values; reproducibility per seed and Generator.

torchlike's streams are not torch's (DIFFERENCES.md), so values are never compared with torch.
"""
from dataclasses import dataclass

import numpy as np
import pytest
import torch

import torchlike
from oracle import check_raises

N = 20000


@dataclass
class RandCase:
    name: str
    fn: object                  # fn(m, g) -> Tensor (g: a Generator of module m, or None)
    lo: float = None            # every sample >= lo
    hi: float = None            # every sample <= hi (inclusive)
    mean: float = None
    std: float = None
    tol: float = 0.05           # on mean and std, relative to max(1, |value|)
    integer: bool = False       # samples are whole numbers
    values: tuple = None        # samples lie in this set
    gen: bool = True            # the sampler takes a generator

    def __str__(self):
        return self.name


def _t(m, *shape, dtype=None):
    return m.zeros(*shape, dtype=dtype or m.float32)


RCASES = [
    RandCase("rand", lambda m, g: m.rand(N, generator=g), 0, 1, 0.5, (1 / 12) ** 0.5),
    RandCase("rand_f64", lambda m, g: m.rand(100, 200, dtype=m.float64, generator=g), 0, 1, 0.5,
             (1 / 12) ** 0.5),
    RandCase("randn", lambda m, g: m.randn(N, generator=g), mean=0, std=1),
    RandCase("randn_2d", lambda m, g: m.randn(100, 200, generator=g), mean=0, std=1),
    RandCase("randn_odd_f64", lambda m, g: m.randn(99, 201, dtype=m.float64, generator=g),
             mean=0, std=1),
    RandCase("randn_bf16", lambda m, g: m.randn(N, dtype=m.bfloat16, generator=g), mean=0, std=1),
    RandCase("randn_c64_real", lambda m, g: m.randn(N, dtype=m.complex64, generator=g).real,
             mean=0, std=0.5 ** 0.5),
    RandCase("randn_c128_imag", lambda m, g: m.randn(N, dtype=m.complex128, generator=g).imag,
             mean=0, std=0.5 ** 0.5),
    RandCase("randn_past_the_host_draw", lambda m, g: m.randn(1025, 1024, generator=g),
             mean=0, std=1, tol=0.01),
    RandCase("randint", lambda m, g: m.randint(3, 10, (N,), generator=g), 3, 9, 6, (4.0) ** 0.5,
             integer=True),
    RandCase("randint_high_only", lambda m, g: m.randint(5, (N,), generator=g), 0, 4, 2,
             2 ** 0.5, integer=True),
    RandCase("randperm", lambda m, g: m.randperm(1000, generator=g), 0, 999, 499.5,
             ((1000 ** 2 - 1) / 12) ** 0.5, integer=True),
    RandCase("randperm_float", lambda m, g: m.randperm(10, dtype=m.float32, generator=g), 0, 9,
             integer=True),
    RandCase("randperm_empty", lambda m, g: m.randperm(0, generator=g)),
    RandCase("normal_scalars", lambda m, g: m.normal(2.0, 3.0, (N,), generator=g), mean=2,
             std=3),
    RandCase("normal_size_tuple", lambda m, g: m.normal(0.0, 1.0, size=(100, 200), generator=g),
             mean=0, std=1),
    RandCase("normal_mean_tensor", lambda m, g: m.normal(m.full((N,), 5.0), 0.5, generator=g),
             mean=5, std=0.5),
    RandCase("normal_std_tensor", lambda m, g: m.normal(-1.0, m.full((N,), 2.0), generator=g),
             mean=-1, std=2),
    RandCase("normal_both_tensors",
             lambda m, g: m.normal(m.zeros(100, 1), m.ones(200), generator=g), mean=0, std=1),
    RandCase("normal_f64", lambda m, g: m.normal(m.zeros(N, dtype=m.float64), 1.0, generator=g),
             mean=0, std=1),
    RandCase("normal_0dim", lambda m, g: m.normal(m.tensor(1.0), m.tensor(0.0), generator=g),
             1, 1),
    RandCase("bernoulli", lambda m, g: m.bernoulli(m.full((N,), 0.3), generator=g), 0, 1, 0.3,
             (0.21) ** 0.5, values=(0, 1)),
    RandCase("bernoulli_probs", lambda m, g: m.bernoulli(m.tensor([0.0, 1.0] * 100),
                                                         generator=g), values=(0, 1)),
    RandCase("bernoulli_p", lambda m, g: m.bernoulli(m.zeros(N, dtype=m.float64), 0.8,
                                                     generator=g), 0, 1, 0.8, 0.4),
    RandCase("bernoulli_method", lambda m, g: m.full((N,), 0.5).bernoulli(generator=g),
             values=(0, 1), mean=0.5),
    RandCase("multinomial_no_repl", lambda m, g: m.multinomial(m.ones(50), 50, generator=g), 0,
             49, 24.5, integer=True),
    RandCase("multinomial_repl", lambda m, g: m.multinomial(m.tensor([1.0, 3.0]), N, True,
                                                            generator=g), 0, 1, 0.75,
             (0.1875) ** 0.5, integer=True),
    RandCase("multinomial_2d", lambda m, g: m.multinomial(m.tensor([[0.0, 1.0], [1.0, 0.0]]), 1,
                                                          generator=g), 0, 1, 0.5, integer=True),
    RandCase("multinomial_2d_repl", lambda m, g: m.multinomial(m.ones(3, 4), 10, True,
                                                               generator=g), 0, 3, integer=True),
    RandCase("multinomial_zero_prob_last",
             lambda m, g: m.multinomial(m.tensor([0.0, 0.0, 1.0]), 1, generator=g), 2, 2),
    RandCase("multinomial_method", lambda m, g: m.ones(6).multinomial(3, generator=g), 0, 5,
             integer=True),
    RandCase("poisson", lambda m, g: m.poisson(m.full((N,), 4.0), generator=g), 0, None, 4, 2,
             integer=True),
    RandCase("uniform_", lambda m, g: _t(m, N).uniform_(-2, 3, generator=g), -2, 3, 0.5,
             (25 / 12) ** 0.5),
    RandCase("uniform_default", lambda m, g: _t(m, N).uniform_(generator=g), 0, 1, 0.5),
    RandCase("uniform_f64", lambda m, g: _t(m, N, dtype=m.float64).uniform_(generator=g), 0, 1,
             0.5),
    RandCase("uniform_half", lambda m, g: _t(m, N, dtype=m.float16).uniform_(generator=g), 0, 1,
             0.5),
    RandCase("normal_", lambda m, g: _t(m, N).normal_(1.0, 2.0, generator=g), mean=1, std=2),
    RandCase("normal__0dim", lambda m, g: m.zeros(()).normal_(generator=g)),
    RandCase("normal_empty", lambda m, g: _t(m, 0, 3).normal_(generator=g)),
    RandCase("bernoulli_", lambda m, g: _t(m, N).bernoulli_(0.25, generator=g), values=(0, 1),
             mean=0.25),
    RandCase("bernoulli_tensor_p", lambda m, g: _t(m, N).bernoulli_(m.full((N,), 0.6),
                                                                    generator=g),
             values=(0, 1), mean=0.6),
    RandCase("bernoulli_int", lambda m, g: _t(m, N, dtype=m.int64).bernoulli_(0.5, generator=g),
             values=(0, 1), mean=0.5),
    RandCase("exponential_", lambda m, g: _t(m, N).exponential_(2.0, generator=g), 0, None, 0.5,
             0.5),
    RandCase("exponential_default", lambda m, g: _t(m, N, dtype=m.float64).exponential_(
        generator=g), 0, None, 1, 1),
    RandCase("random_range", lambda m, g: _t(m, N).random_(-3, 4, generator=g), -3, 3, 0,
             2, integer=True),
    RandCase("random_to", lambda m, g: _t(m, N, dtype=m.int64).random_(10, generator=g), 0, 9,
             4.5, integer=True),
    RandCase("random_from_kw", lambda m, g: _t(m, N, dtype=m.int32).random_(**{"from": 5, "to": 7},
                                                                           generator=g), 5, 6,
             integer=True),
    RandCase("random_float_full", lambda m, g: _t(m, N).random_(generator=g), 0, 2 ** 24,
             2 ** 23, integer=True),
    RandCase("random_uint8", lambda m, g: _t(m, N, dtype=m.uint8).random_(generator=g), 0, 255,
             127.5, integer=True),
    RandCase("random_bool", lambda m, g: _t(m, N, dtype=m.bool).random_(generator=g),
             values=(0, 1)),
    RandCase("random_int64_full", lambda m, g: _t(m, 100, dtype=m.int64).random_(generator=g),
             0, 2 ** 63 - 1, integer=True),
    RandCase("geometric_", lambda m, g: _t(m, N).geometric_(0.25, generator=g), 1, None, 4,
             (0.75 / 0.0625) ** 0.5, integer=True),
    RandCase("log_normal_", lambda m, g: _t(m, N, dtype=m.float64).log_normal_(0.0, 0.5,
                                                                              generator=g),
             0, None, float(np.exp(0.125))),
    RandCase("cauchy_", lambda m, g: _t(m, 101).cauchy_(generator=g)),
    RandCase("rand_like", lambda m, g: m.rand_like(m.zeros(N, dtype=m.float64)), 0, 1, 0.5,
             gen=False),
    RandCase("randn_like", lambda m, g: m.randn_like(m.zeros(N)), mean=0, std=1, gen=False),
    RandCase("randint_like", lambda m, g: m.randint_like(m.zeros(N), 2, 5), 2, 4, 3,
             integer=True, gen=False),
]


def _gen(m, seed):
    return m.Generator().manual_seed(seed)


@pytest.mark.parametrize("case", RCASES, ids=str)
def test_sampler_matches_torch_metadata(case):
    t = case.fn(torch, _gen(torch, 0))
    lt = case.fn(torchlike, _gen(torchlike, 0))
    assert str(lt.dtype) == str(t.dtype), f"{case}: dtype {lt.dtype} != torch {t.dtype}"
    assert tuple(lt.shape) == tuple(t.shape), f"{case}: shape {lt.shape} != {t.shape}"
    assert lt.requires_grad == t.requires_grad
    v = np.asarray(lt).astype(np.float64)
    tv = t.double().numpy()
    if case.lo is not None:
        assert v.min() >= case.lo and tv.min() >= case.lo, case
    if case.hi is not None:
        assert v.max() <= case.hi and tv.max() <= case.hi, case
    if case.integer:
        assert np.all(v == np.round(v)), case
    if case.values is not None:
        assert set(np.unique(v)) <= set(case.values), case
    for stat, want in (("mean", case.mean), ("std", case.std)):
        if want is None:
            continue
        got = getattr(v, stat)()
        ref = getattr(tv, stat)()
        scale = max(1.0, abs(want))
        assert abs(got - want) <= case.tol * scale, f"{case}: {stat} {got} vs {want}"
        assert abs(ref - want) <= case.tol * scale, f"{case}: torch's own {stat} {ref}"


@pytest.mark.parametrize("case", RCASES, ids=str)
def test_sampler_reproducible(case):
    if case.gen:
        a = case.fn(torchlike, _gen(torchlike, 123))
        b = case.fn(torchlike, _gen(torchlike, 123))
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    torchlike.manual_seed(7)
    c = case.fn(torchlike, None)
    torchlike.manual_seed(7)
    d = case.fn(torchlike, None)
    np.testing.assert_array_equal(np.asarray(c), np.asarray(d))


def test_seeds_differ_and_stream_advances():
    g = torchlike.Generator().manual_seed(1)
    a, b = torchlike.rand(100, generator=g), torchlike.rand(100, generator=g)
    assert not np.array_equal(np.asarray(a), np.asarray(b))
    c = torchlike.rand(100, generator=torchlike.Generator().manual_seed(2))
    assert not np.array_equal(np.asarray(a), np.asarray(c))
    # the global generator is untouched by a private one
    torchlike.manual_seed(3)
    x = torchlike.rand(5)
    torchlike.manual_seed(3)
    torchlike.rand(5, generator=torchlike.Generator().manual_seed(9))
    y = torchlike.rand(5)
    np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_generator_state_roundtrip():
    g = torchlike.Generator().manual_seed(11)
    torchlike.randn(3, generator=g)
    s = g.get_state()
    a = torchlike.zeros(4).normal_(generator=g)
    g.set_state(s)
    b = torchlike.zeros(4).normal_(generator=g)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert g.initial_seed() == 11


@pytest.mark.parametrize("how", ["deepcopy", "pickle", "sampler"])
def test_a_generator_copied_goes_on_with_its_stream(how):
    """torch's generators deep-copy and pickle (``copy.deepcopy(DataLoader(...,
    generator=g))``, a pickled seeded sampler): the copy draws what the original draws next,
    and the two advance separately."""
    import copy
    import pickle
    g = torchlike.Generator().manual_seed(5)
    torchlike.rand(2, generator=g)
    if how == "sampler":
        s = torchlike.utils.data.RandomSampler(range(6), generator=g)
        c = pickle.loads(pickle.dumps(s)).generator
    else:
        c = copy.deepcopy(g) if how == "deepcopy" else pickle.loads(pickle.dumps(g))
    assert (c.initial_seed(), c.device.type) == (5, "cpu")
    a, b = torchlike.rand(3, generator=c), torchlike.rand(3, generator=g)
    assert a.tolist() == b.tolist()
    assert torchlike.rand(1, generator=c).tolist() == torchlike.rand(1, generator=g).tolist()


def _set_state_error(m, state):
    try:
        m.set_rng_state(state(m))
    except (TypeError, RuntimeError) as e:
        return type(e).__name__, str(e).split(" of size ")[0]
    return None


@pytest.mark.parametrize("state", [lambda m: m.ones(3), lambda m: m.ones(3, dtype=m.uint8),
                                   lambda m: [1, 2], lambda m: m.get_rng_state().long()],
                         ids=["float", "short", "list", "int64"])
def test_set_rng_state_refuses_what_torch_refuses(state):
    assert _set_state_error(torchlike, state) == _set_state_error(torch, state) is not None


def test_a_torch_generator_state_seeds_a_reproducible_stream():
    """DIFFERENCES.md: torch's CPU generator state (a torch checkpoint's) seeds torchlike's
    generator from its bytes; the stream is torchlike's, the same for the same state."""
    s = torchlike.tensor(torch.get_rng_state().numpy())
    torchlike.set_rng_state(s)
    a = torchlike.rand(4)
    torchlike.rand(2)
    torchlike.set_rng_state(s)
    b = torchlike.rand(4)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert torchlike.get_rng_state().shape == (16,)


def test_multinomial_without_replacement_distinct():
    g = torchlike.Generator().manual_seed(0)
    for _ in range(5):
        s = torchlike.multinomial(torchlike.rand(3, 20, generator=g) + 0.01, 20, generator=g)
        assert all(sorted(r) == list(range(20)) for r in s.tolist())


def test_multinomial_frequencies():
    p = np.array([0.1, 0.2, 0.7])
    s = torchlike.multinomial(torchlike.tensor(p), N, True,
                              generator=torchlike.Generator().manual_seed(0))
    freq = np.bincount(np.asarray(s), minlength=3) / N
    np.testing.assert_allclose(freq, p, atol=0.02)
    # without replacement, the first draw follows p
    firsts = [torchlike.multinomial(torchlike.tensor(p), 2)[0].item() for _ in range(400)]
    np.testing.assert_allclose(np.bincount(firsts, minlength=3) / 400, p, atol=0.08)


def test_randperm_is_permutation():
    p = torchlike.randperm(257, generator=torchlike.Generator().manual_seed(4))
    assert sorted(p.tolist()) == list(range(257))


def test_sampler_gradients_are_zero_like_torch():
    for m in (torch, torchlike):
        mean = m.zeros(3, requires_grad=True)
        std = m.ones(3, requires_grad=True)
        y = m.normal(mean, std)
        p = m.full((3,), 0.5, requires_grad=True)
        z = m.bernoulli(p)
        w = (mean * 1).uniform_()
        (y.sum() + z.sum() + w.sum()).backward()
        assert mean.grad.tolist() == [0.0] * 3 and std.grad.tolist() == [0.0] * 3
        assert p.grad.tolist() == [0.0] * 3
        assert y.grad_fn is not None and w.grad_fn is not None


def test_inplace_random_on_leaf_requires_grad():
    for m in (torch, torchlike):
        x = m.zeros(3, requires_grad=True)
        with pytest.raises(RuntimeError):
            x.uniform_()
        with m.no_grad():
            x.normal_()
        assert x.is_leaf and x.requires_grad


def _bad(fn):
    return lambda m: fn(m)


BAD = [
    ("uniform_from_gt_to", lambda m: m.zeros(3).uniform_(2, 1)),
    ("uniform_int", lambda m: m.zeros(3, dtype=m.long).uniform_()),
    ("normal_int", lambda m: m.zeros(3, dtype=m.long).normal_()),
    ("normal_neg_std", lambda m: m.zeros(3).normal_(0, -1)),
    ("normal_fn_neg_std", lambda m: m.normal(0.0, -1.0, (2,))),
    ("normal_fn_bcast", lambda m: m.normal(m.zeros(2), m.ones(3))),
    ("exponential_zero", lambda m: m.zeros(3).exponential_(0)),
    ("bernoulli_p_gt_1", lambda m: m.zeros(3).bernoulli_(2)),
    ("bernoulli_input_out_of_range", lambda m: m.bernoulli(m.tensor([2.0]))),
    ("bernoulli_int_input", lambda m: m.bernoulli(m.tensor([1, 0]))),
    ("random_from_ge_to", lambda m: m.zeros(3).random_(5, 3)),
    ("random_uint8_oob", lambda m: m.zeros(3, dtype=m.uint8).random_(0, 300)),
    ("multinomial_too_many", lambda m: m.multinomial(m.tensor([1.0, 2.0]), 3)),
    ("multinomial_zero_sum", lambda m: m.multinomial(m.tensor([0.0, 0.0]), 1)),
    ("multinomial_negative", lambda m: m.multinomial(m.tensor([-1.0, 1.0]), 1)),
    ("multinomial_int", lambda m: m.multinomial(m.tensor([1, 1]), 1)),
    ("multinomial_3d", lambda m: m.multinomial(m.ones(2, 2, 2), 1)),
    ("multinomial_zero_samples", lambda m: m.multinomial(m.tensor([1.0, 2.0]), 0)),
    ("randperm_negative", lambda m: m.randperm(-1)),
    ("randint_empty_range", lambda m: m.randint(5, 5, (2,))),
]


@pytest.mark.parametrize("name,fn", BAD, ids=[b[0] for b in BAD])
def test_random_bad_input(name, fn):
    check_raises(fn)


def test_table_size():
    assert len(RCASES) >= 50


def test_random_module_fork_rng_and_state():
    torchlike.random.manual_seed(5)
    a = torchlike.rand(3)
    torchlike.random.manual_seed(5)
    with torchlike.random.fork_rng():
        torchlike.rand(10)
        torchlike.randn(4)
    b = torchlike.rand(3)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    s = torchlike.random.get_rng_state()
    c = torchlike.randn(2)
    torchlike.random.set_rng_state(s)
    d = torchlike.randn(2)
    np.testing.assert_array_equal(np.asarray(c), np.asarray(d))
    assert torchlike.random.initial_seed() == 5
    assert torchlike.random.default_generator is torchlike.default_generator
    # same API as torch's
    for name in ("manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state",
                 "fork_rng"):
        assert hasattr(torch.random, name) and hasattr(torchlike.random, name)


def test_generator_api_like_torch():
    g, tg = torchlike.Generator(), torch.Generator()
    assert str(g.device) == str(tg.device) and g.device == torchlike.device("cpu")
    assert g.manual_seed(3) is g and tg.manual_seed(3) is tg
    assert g.initial_seed() == tg.initial_seed() == 3
    s = g.seed()
    assert isinstance(s, int) and g.initial_seed() == s


def test_out_argument():
    o = torchlike.zeros(1000)
    r = torchlike.normal(2.0, 1.0, (1000,), out=o)
    assert r is o and abs(o.mean().item() - 2.0) < 0.2
    o = torchlike.zeros(5, dtype=torchlike.int64)
    assert torchlike.multinomial(torchlike.ones(5), 5, out=o) is o
    assert sorted(o.tolist()) == [0, 1, 2, 3, 4]
    o = torchlike.zeros(4)
    assert torchlike.bernoulli(torchlike.ones(4), out=o) is o and o.tolist() == [1.0] * 4



def test_bad_input_messages_match_torch():
    """Beyond the exception class: torchlike's message is torch's, word for word."""
    differ = ()      # Python's own arity message names the class
    mismatched = []
    for name, fn in BAD:
        lerr, terr = check_raises(fn)
        if str(lerr) != str(terr) and name not in differ:
            mismatched.append((name, str(lerr), str(terr)))
    assert not mismatched, mismatched


def test_a_cuda_generator_without_cuda_raises_as_torch():
    from oracle import same_as_torch
    if torchlike.cuda.is_available():
        pytest.skip("a CUDA device is present: the generator is made")
    same_as_torch(lambda m: m.Generator(device="cuda"))
    same_as_torch(lambda m: str(m.Generator(device="cpu").device))


def test_host_keys_are_jaxs_fold_in_for_every_counter_and_key():
    """A generator's key on the CPU is folded in on the host (threefry in Python integers):
    the same bits as jax's ``fold_in`` for any key data and counter, wrapped at 2**32."""
    import jax
    from torchlike import _random
    rng = np.random.default_rng(7)
    keys = [np.array([0, 0], np.uint32), np.array([2 ** 32 - 1] * 2, np.uint32)] + [
        rng.integers(0, 2 ** 32, 2, dtype=np.uint64).astype(np.uint32) for _ in range(40)]
    counters = [0, 1, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 7] + [
        int(c) for c in rng.integers(0, 2 ** 32, 20)]
    for d in keys:
        for c in counters:
            ref = jax.random.key_data(jax.random.fold_in(jax.random.wrap_key_data(d),
                                                         np.uint32(c & 0xFFFFFFFF)))
            np.testing.assert_array_equal(_random._fold_in_on_host(d, c), np.asarray(ref))
    g = torchlike.Generator().manual_seed(3)
    for c in range(5):
        k = g.next_key()
        assert k.dtype == jax.random.key(0).dtype and k.shape == ()
        np.testing.assert_array_equal(
            np.asarray(jax.random.key_data(k)),
            np.asarray(jax.random.key_data(jax.random.fold_in(jax.random.key(3), c))))


_DRAWING = {
    "randint": lambda m, x: m.randint(0, 10, (8,)),
    "rand": lambda m, x: m.rand(5),
    "randn": lambda m, x: m.randn(5),
    "randn_complex": lambda m, x: m.randn(3, dtype=m.complex64),
    "normal_": lambda m, x: m.nn.init.normal_(m.empty(4)),
    "uniform_": lambda m, x: m.nn.init.uniform_(m.empty(4)),
    "dropout": lambda m, x: m.nn.functional.dropout(x, 0.5),
    "alpha_dropout": lambda m, x: m.nn.functional.alpha_dropout(x, 0.5, training=True),
    "rrelu": lambda m, x: m.nn.functional.rrelu(x, training=True),
    "gumbel_softmax": lambda m, x: m.nn.functional.gumbel_softmax(x),
    "native_dropout": lambda m, x: m.native_dropout(x, 0.5, True)[0],
    "sdpa_dropout": lambda m, x: m.nn.functional.scaled_dot_product_attention(
        x[None], x[None], x[None], dropout_p=0.5),
    "mha_dropout": lambda m, x: m.nn.MultiheadAttention(4, 2, dropout=0.5)(x, x, x)[0],
    "lstm_dropout": lambda m, x: m.nn.LSTM(4, 3, num_layers=2, dropout=0.5)(x[:, None])[0],
}


@pytest.mark.parametrize("name", sorted(_DRAWING))
def test_a_draw_makes_no_key_array_on_the_host(name, monkeypatch):
    """A draw's key reaches its op as the key's data (``Generator.next_key_data``): a key
    array made and unwrapped on the host cost half a dropout's Python; the op's traced
    function wraps the data itself. Each draw still advances the generator."""
    from torchlike import _random

    def refuse(data):
        raise AssertionError("a key array was made on the host")
    monkeypatch.setattr(_random, "_wrap_on_host", refuse)
    x = torchlike.randn(3, 4)
    torchlike.manual_seed(0)
    a = _DRAWING[name](torchlike, x)
    b = _DRAWING[name](torchlike, x)
    torchlike.manual_seed(0)
    again = _DRAWING[name](torchlike, x)
    assert torchlike.equal(a, again) and not torchlike.equal(a, b)
