"""Random ops' argument errors against torch: multinomial on empty or invalid distributions
(class and message; a successful call's shape and dtype), and a ``generator=`` that is not a
torch.Generator across every op taking one (torch's argument-parser TypeError, message in
full). Values are never compared: torchlike's streams are its own (DIFFERENCES.md)."""
import numpy as np
import pytest
import torch

import torchlike

INF, NAN = float("inf"), float("nan")


def _outcome(m, fn):
    try:
        r = fn(m)
    except Exception as e:      # noqa: BLE001  (the class and message are what is compared)
        return type(e).__name__, str(e)
    if isinstance(r, (list, tuple)):
        return "ok", len(r)
    return "ok", tuple(r.shape), str(r.dtype).replace("torchlike", "torch")


def _same(fn):
    assert _outcome(torchlike, fn) == _outcome(torch, fn)


# ------------------------------------------------------------------ multinomial

PROBS = {
    "empty": np.zeros(0), "0x0": np.zeros((0, 0)), "2x0": np.zeros((2, 0)),
    "0x3": np.zeros((0, 3)), "zeros": [0.0, 0.0], "zero_row": [[1.0, 1.0], [0.0, 0.0]],
    "negative": [1.0, -1.0], "inf": [1.0, INF], "nan": [1.0, NAN], "neg_inf": [1.0, -INF],
    "negative_row": [[1.0, 1.0], [1.0, -1.0]], "nan_row": [[1.0, 1.0], [NAN, 1.0]],
    "valid": [1.0, 2.0, 3.0], "valid_2d": [[1.0, 2.0], [3.0, 4.0]], "3d": np.ones((1, 1, 2)),
    "0d": 1.0,
}


@pytest.mark.parametrize("replacement", [False, True])
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, -1])
@pytest.mark.parametrize("probs", list(PROBS), ids=str)
def test_multinomial_distribution_errors(probs, n, replacement):
    p = np.asarray(PROBS[probs], np.float32)
    _same(lambda m: m.multinomial(m.tensor(p), n, replacement))


@pytest.mark.parametrize("replacement", [False, True])
def test_multinomial_empty_rows_out(replacement):
    _same(lambda m: m.multinomial(m.zeros(0, 3), 2, replacement,
                                  out=m.empty(0, dtype=m.int64)))


MULTINOMIAL_ARGS = {
    "bool_samples": lambda m: m.multinomial(m.ones(3), True),
    "float_samples": lambda m: m.multinomial(m.ones(3), 2.0),
    "numpy_int_samples": lambda m: m.multinomial(m.ones(3), np.int32(2)),
    "numpy_float_samples": lambda m: m.multinomial(m.ones(3), np.float64(2)),
    "tensor_samples": lambda m: m.multinomial(m.ones(3), m.tensor(2)),
    "float_tensor_samples": lambda m: m.multinomial(m.ones(3), m.tensor(2.0)),
    "str_samples": lambda m: m.multinomial(m.ones(3), "a"),
    "none_samples": lambda m: m.multinomial(m.ones(3), None),
    "keyword_samples": lambda m: m.multinomial(m.ones(3), num_samples=2.0),
    "method_samples": lambda m: m.ones(3).multinomial(2.0),
    "method_keyword_samples": lambda m: m.ones(3).multinomial(num_samples="a"),
    "int_replacement": lambda m: m.multinomial(m.ones(3), 2, replacement=1),
    "numpy_bool_replacement": lambda m: m.multinomial(m.ones(3), 2, np.bool_(True)),
    "none_replacement": lambda m: m.multinomial(m.ones(3), 2, None),
    "method_replacement": lambda m: m.ones(3).multinomial(2, 1),
}


@pytest.mark.parametrize("call", list(MULTINOMIAL_ARGS))
def test_multinomial_argument_types(call):
    _same(MULTINOMIAL_ARGS[call])


NORMAL_SCALARS = {"str": "a", "none": None, "complex": 1j, "numpy_float32": np.float32(0),
                  "numpy_float16": np.float16(1), "bool": True, "numpy_int": np.int64(1),
                  "numpy_complex64": np.complex64(1), "numpy_complex128": np.complex128(1),
                  "longdouble": np.longdouble(1), "clongdouble": np.clongdouble(1),
                  "object": object()}


@pytest.mark.parametrize("which", ["mean", "std"])
@pytest.mark.parametrize("value", list(NORMAL_SCALARS))
def test_normal_scalar_argument_types(value, which):
    v = NORMAL_SCALARS[value]
    _same(lambda m: m.normal(v, 1.0, (2,)) if which == "mean" else m.normal(0.0, v, (2,)))


@pytest.mark.parametrize("args", [((), 1), ((), 3), ((), 2, False), ([0.0, 0.0], 2),
                                  ([1.0, -1.0], 2)], ids=str)
def test_weighted_random_sampler_invalid_weights(args):
    weights, rest = args[0], args[1:]

    def fn(m):
        return list(m.utils.data.WeightedRandomSampler(list(weights), *rest))
    _same(fn)


# ------------------------------------------------------------------ generator=

def _t(m):
    return m.ones(3)


GEN_CALLS = {
    "rand": lambda m, g: m.rand(3, generator=g),
    "randn": lambda m, g: m.randn(3, generator=g),
    "randint_high": lambda m, g: m.randint(5, (3,), generator=g),
    "randint_low_high": lambda m, g: m.randint(0, 5, (3,), generator=g),
    "randperm": lambda m, g: m.randperm(5, generator=g),
    "randperm_dtype": lambda m, g: m.randperm(5, generator=g, dtype=m.int64),
    "randperm_out": lambda m, g: m.randperm(5, generator=g, out=m.empty(5, dtype=m.int64)),
    "rand_like": lambda m, g: m.rand_like(_t(m), generator=g),
    "randn_like": lambda m, g: m.randn_like(_t(m), generator=g, dtype=m.float64),
    "randint_like_high": lambda m, g: m.randint_like(_t(m), 5, generator=g),
    "randint_like_low_high": lambda m, g: m.randint_like(_t(m), 0, 5, generator=g),
    "randint_like_tensor": lambda m, g: m.randint_like(_t(m), _t(m).long(), generator=g),
    "randint_like_kw": lambda m, g: m.randint_like(_t(m), high=5, generator=g),
    "randint_like_tensor_kw": lambda m, g: m.randint_like(_t(m), high=m.tensor(5), generator=g),
    "randint_like_1d_tensor": lambda m, g: m.randint_like(_t(m), m.tensor([5]), generator=g),
    "multinomial": lambda m, g: m.multinomial(_t(m), 2, generator=g),
    "multinomial_repl": lambda m, g: m.multinomial(_t(m), 2, True, generator=g),
    "multinomial_out": lambda m, g: m.multinomial(_t(m), 2, generator=g,
                                                  out=m.empty(2, dtype=m.int64)),
    "multinomial_method": lambda m, g: _t(m).multinomial(2, generator=g),
    "bernoulli": lambda m, g: m.bernoulli(_t(m) / 2, generator=g),
    "bernoulli_p": lambda m, g: m.bernoulli(_t(m), 0.5, generator=g),
    "bernoulli_p_kw": lambda m, g: m.bernoulli(_t(m), p=0.5, generator=g),
    "bernoulli_input_kw": lambda m, g: m.bernoulli(input=_t(m) / 2, generator=g),
    "bernoulli_out": lambda m, g: m.bernoulli(_t(m) / 2, generator=g, out=m.empty(3)),
    "bernoulli_out_first": lambda m, g: m.bernoulli(_t(m) / 2, out=m.empty(3), generator=g),
    "bernoulli_p_out": lambda m, g: m.bernoulli(_t(m), 0.5, generator=g, out=m.empty(3)),
    "bernoulli_p_kw_out": lambda m, g: m.bernoulli(_t(m), out=m.empty(3), p=0.5, generator=g),
    "bernoulli_p_none": lambda m, g: m.bernoulli(_t(m), None, generator=g),
    "bernoulli_method": lambda m, g: (_t(m) / 2).bernoulli(generator=g),
    "bernoulli_method_p": lambda m, g: _t(m).bernoulli(0.5, generator=g),
    "normal_scalars": lambda m, g: m.normal(0.0, 1.0, (3,), generator=g),
    "normal_size_kw": lambda m, g: m.normal(0.0, 1.0, size=(3,), generator=g),
    "normal_tensors": lambda m, g: m.normal(_t(m), _t(m), generator=g),
    "normal_tensor_float": lambda m, g: m.normal(_t(m), 1.0, generator=g),
    "normal_tensor_mean": lambda m, g: m.normal(_t(m), generator=g),
    "normal_float_tensor": lambda m, g: m.normal(1.0, _t(m), generator=g),
    "normal_kw": lambda m, g: m.normal(mean=_t(m), std=_t(m), generator=g),
    "normal_out": lambda m, g: m.normal(_t(m), _t(m), generator=g, out=m.empty(3)),
    "poisson": lambda m, g: m.poisson(_t(m), generator=g),
    "poisson_positional": lambda m, g: m.poisson(_t(m), g),
    "binomial": lambda m, g: m.binomial(_t(m), _t(m) / 2, generator=g),
    "uniform_": lambda m, g: _t(m).uniform_(generator=g),
    "uniform_bounds": lambda m, g: _t(m).uniform_(0, 1, generator=g),
    "normal_": lambda m, g: _t(m).normal_(generator=g),
    "log_normal_": lambda m, g: _t(m).log_normal_(generator=g),
    "exponential_": lambda m, g: _t(m).exponential_(generator=g),
    "cauchy_": lambda m, g: _t(m).cauchy_(generator=g),
    "geometric_": lambda m, g: _t(m).geometric_(0.5, generator=g),
    "random_": lambda m, g: _t(m).random_(generator=g),
    "random_to": lambda m, g: _t(m).random_(5, generator=g),
    "random_from_to": lambda m, g: _t(m).random_(0, 5, generator=g),
    "random_to_kw": lambda m, g: _t(m).random_(to=5, generator=g),
    "random_too_many": lambda m, g: _t(m).random_(0, 5, 6, generator=g),
    "random_too_many_no_generator": lambda m, g: _t(m).random_(0, 5, 6),
    "bernoulli_": lambda m, g: _t(m).bernoulli_(generator=g),
    "bernoulli_float": lambda m, g: _t(m).bernoulli_(0.5, generator=g),
    "bernoulli_p_kw_": lambda m, g: _t(m).bernoulli_(p=0.5, generator=g),
    "bernoulli_tensor": lambda m, g: _t(m).bernoulli_(_t(m) / 2, generator=g),
}

BAD_GENERATORS = {
    "int": lambda m: 3, "str": lambda m: "x", "float": lambda m: 1.5,
    "tensor": lambda m: m.tensor(1.0), "device": lambda m: m.device("cpu"),
}


@pytest.mark.parametrize("gen", list(BAD_GENERATORS), ids=str)
@pytest.mark.parametrize("call", list(GEN_CALLS), ids=str)
def test_generator_must_be_a_generator(call, gen):
    fn, g = GEN_CALLS[call], BAD_GENERATORS[gen]
    out = _outcome(torch, lambda m: fn(m, g(m)))
    assert out[0] == "TypeError"            # (the oracle refuses it)
    assert _outcome(torchlike, lambda m: fn(m, g(m))) == out


@pytest.mark.parametrize("call", list(GEN_CALLS), ids=str)
def test_generator_none_or_a_generator(call):
    fn = GEN_CALLS[call]
    _same(lambda m: fn(m, None))
    _same(lambda m: fn(m, m.Generator().manual_seed(0)))


# ------------------------------------------------------------------ dtypes and bounds

DTYPES = ["float8_e4m3fn", "float8_e5m2", "uint16", "uint32", "complex64", "complex128", "bool",
          "int8", "bfloat16", "float16"]
BY_DTYPE = {
    "randint": lambda m, d: m.randint(0, 2, (3,), dtype=d),
    "randperm": lambda m, d: m.randperm(2, dtype=d),
    "normal_size": lambda m, d: m.normal(0.0, 1.0, (3,), dtype=d),
    "bernoulli": lambda m, d: m.bernoulli(m.ones(3).to(d)),
    "bernoulli_p": lambda m, d: m.bernoulli(m.ones(3).to(d), 0.5),
    "poisson": lambda m, d: m.poisson(m.ones(3).to(d)),
    "multinomial": lambda m, d: m.multinomial(m.ones(3).to(d), 2),
    "rand": lambda m, d: m.rand(3, dtype=d),
    "randn": lambda m, d: m.randn(3, dtype=d),
    "rand_like": lambda m, d: m.rand_like(m.ones(3).to(d)),
    "randint_like": lambda m, d: m.randint_like(m.ones(3).to(d), 2),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", list(BY_DTYPE))
def test_random_ops_by_dtype(op, dtype):
    """torch's refusals of the dtypes its kernels lack (a silent draw before)."""
    _same(lambda m: BY_DTYPE[op](m, getattr(m, dtype)))


BOUNDS = {
    "randint_high_past_int64": lambda m: m.randint(0, 2 ** 64, (3,)),
    "randint_low_past_int64": lambda m: m.randint(2 ** 63, 2 ** 63 + 5, (3,)),
    "randint_low_int64_min": lambda m: m.randint(-2 ** 63, -2 ** 63 + 5, (3,)),
    "randint_like_past_int64": lambda m: m.randint_like(m.ones(3), 2 ** 64),
    "randint_complex_equal_bounds": lambda m: m.randint(5, 5, (3,), dtype=m.complex64),
    "randint_complex_negative_size": lambda m: m.randint(0, 5, (-1,), dtype=m.complex64),
    "randperm_complex_negative": lambda m: m.randperm(-1, dtype=m.complex64),
    "normal_negative_size": lambda m: m.normal(0.0, 1.0, (-1, 2)),
    "normal_int_negative_std": lambda m: m.normal(0.0, -1.0, (3,), dtype=m.int64),
    "normal_int_negative_size": lambda m: m.normal(0.0, 1.0, (-1,), dtype=m.int64),
}


@pytest.mark.parametrize("call", list(BOUNDS))
def test_random_op_bounds(call):
    _same(BOUNDS[call])


FILLS = {"uniform_": (), "normal_": (), "exponential_": (), "geometric_": (0.5,), "cauchy_": (),
         "log_normal_": (), "random_": (), "random_to": (5,), "random_from_to": (0, 5),
         "random_from_none": (0, None), "random_from_3_none": (3, None),
         "random_negative_from": (-1, 3), "random_past_uint16": (0, 70000),
         "random_past_uint32": (2 ** 33,), "bernoulli_": (), "bernoulli_tensor": "tensor"}
FILL_DTYPES = ["float8_e4m3fn", "float8_e5m2", "uint16", "uint32", "uint64", "complex64", "bool",
               "int8", "bfloat16", "float16", "int64"]


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("dtype", FILL_DTYPES)
@pytest.mark.parametrize("fill", list(FILLS))
def test_inplace_fills_by_dtype(fill, dtype):
    args = FILLS[fill]

    def fn(m):
        t = m.zeros(3, dtype=getattr(m, dtype))
        if args == "tensor":
            return t.bernoulli_(m.full((3,), 0.5))
        return getattr(t, fill if not fill.startswith("random") else "random_")(*args)
    _same(fn)


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64"])
def test_random_of_unsigned_dtypes_in_range(dtype):
    t = torchlike.zeros(2000, dtype=getattr(torchlike, dtype)).random_(3, 7)
    v = t.to(torchlike.int64)
    assert t.dtype is getattr(torchlike, dtype)
    assert int(v.min()) >= 3 and int(v.max()) <= 6
    assert len(set(v.tolist())) == 4
