"""Numeric programs (linear algebra, spectra, cumulative and counting ops, creation, integer
semantics, sorting, printing) as held-out scripts write them, swept against live torch.

torch runs first: where it raises, torchlike must raise the same class with the same message;
where it returns, torchlike must return the same values, dtypes and shapes.
"""
from __future__ import annotations

import pytest

from oracle import same_as_torch


def _widen(v, m):
    # bfloat16 results compared as float32 (numpy has no bfloat16 to read them into)
    if isinstance(v, m.Tensor) and v.dtype == m.bfloat16:
        return v.float()
    if isinstance(v, tuple):
        return tuple(_widen(x, m) for x in v)
    return v


def _run(table, name, **kw):
    fn = table[name]

    def widened(m):
        v = fn(m)
        if isinstance(v, m.Tensor) and v.dtype == m.bfloat16:
            return v.float(), str(v.dtype)
        return _widen(v, m)
    same_as_torch(widened, **kw)


# ============================================================ 1. linear algebra

_SQ = [[4., 1., 2.], [1., 3., 0.], [2., 0., 5.]]
_NEAR = [[1., 2.], [2., 4.01]]

LINALG = {
    "cross_ndim_mismatch": lambda m: m.linalg.cross(m.ones(2, 3), m.tensor([1., 2., 3.])),
    "cross_dim_ndim_mismatch": lambda m: m.cross(m.ones(3), m.ones(2, 3), dim=-1),
    "cross_same_ndim_broadcast": lambda m: m.linalg.cross(m.ones(1, 3), m.tensor([[1., 2., 3.]])),
    "pinv_atol": lambda m: m.linalg.pinv(m.tensor(_NEAR), atol=0.1),
    "pinv_atol_rtol": lambda m: m.linalg.pinv(m.tensor(_NEAR), atol=0.001, rtol=0.01),
    "pinv_atol_tensor_hermitian": lambda m: m.linalg.pinv(m.tensor(_NEAR),
                                                          atol=m.tensor(0.1), hermitian=True),
    "pinv_rcond_positional": lambda m: m.linalg.pinv(m.tensor(_NEAR), 0.5),
    "pinv_rcond_keyword": lambda m: m.linalg.pinv(m.tensor(_NEAR), rcond=0.5, hermitian=True),
    "pinv_batched_rtol": lambda m: m.linalg.pinv(m.tensor(_NEAR).expand(2, 2, 2),
                                                 rtol=m.tensor([0.1, 1e-7])),
    "removed_eig": lambda m: m.eig(m.tensor(_SQ)),
    "removed_symeig": lambda m: m.tensor(_SQ).symeig(),
    "removed_solve": lambda m: m.solve(m.ones(3, 1), m.tensor(_SQ)),
    "removed_lstsq": lambda m: m.lstsq(m.ones(3, 1), m.tensor(_SQ)),
    "removed_matrix_rank": lambda m: m.matrix_rank(m.tensor(_SQ)),
}


@pytest.mark.parametrize("name", LINALG)
def test_linalg(name):
    _run(LINALG, name, atol=2e-3, rtol=1e-4)


def test_pinv_atol_grad():
    def f(m):
        x = m.tensor(_NEAR, requires_grad=True)
        m.linalg.pinv(x, atol=0.01).sum().backward()
        return x.grad
    same_as_torch(f, atol=1e-3, rtol=1e-3)


# ============================================================ 2. spectra, counting, calculus

_NAN, _INF = float("nan"), float("inf")

COUNTING = {
    "fft_n_minus_one": lambda m: m.fft.fft(m.arange(5.), n=-1),
    "rfft_n_zero": lambda m: m.fft.rfft(m.arange(5.), n=0),
    "irfftn_s_minus_one": lambda m: m.fft.irfftn(m.ones(1, 5, dtype=m.complex64), s=(1, -1)),
    "histc_nan_data": lambda m: m.histc(m.tensor([1., _NAN]), bins=4),
    "histc_single_nan": lambda m: m.histc(m.tensor([_NAN]), bins=4),
    "histc_inf_data": lambda m: m.histc(m.tensor([1., _INF]), bins=4),
    "histc_inf_max": lambda m: m.histc(m.tensor([1.5, 2.25]), bins=4, min=0.5, max=_INF),
    "histc_min_over_max": lambda m: m.histc(m.tensor([1., 2.]), bins=4, min=1, max=0),
    "histc_equal_bounds_use_data": lambda m: m.histc(m.tensor([1., 2.]), bins=4, min=3, max=3),
    "histc_nan_ignored_with_range": lambda m: m.histc(m.tensor([1., 2., _NAN]), bins=2, min=0,
                                                      max=3),
    "histogram_nan_data": lambda m: m.histogram(m.tensor([1., _NAN]), bins=4),
    "histogram_inf_data": lambda m: m.histogram(m.tensor([1., _INF]), bins=4),
    "histogram_range_reversed": lambda m: m.histogram(m.tensor([1., 2.]), bins=4,
                                                      range=(3., 0.)),
    "histogram_range_inf": lambda m: m.histogram(m.tensor([1., 2.]), bins=4, range=(0., _INF)),
    "histogram_empty": lambda m: tuple(m.histogram(m.tensor([]), bins=2)),
    "histogram_bins_zero": lambda m: m.histogram(m.tensor([1.]), bins=0),
    "histogramdd_nan": lambda m: m.histogramdd(m.tensor([[1., _NAN]]), bins=2),
    "histogramdd_range_reversed": lambda m: m.histogramdd(m.tensor([[1., 2.], [0., 5.]]),
                                                          bins=[2, 3], range=[0., 1., 5., 4.]),
    "histogramdd_counts": lambda m: (lambda r: (r.hist, *r.bin_edges))(
        m.histogramdd(m.tensor([[1., 2.], [0., 5.]]), bins=3)),
    "searchsorted_nan_in_sequence": lambda m: m.searchsorted(
        m.tensor([1., 3., _NAN]), m.tensor([_NAN, 4., 1., 3., -_INF, _INF])),
    "searchsorted_nan_right": lambda m: m.searchsorted(
        m.tensor([1., 3., _NAN, _NAN]), m.tensor([_NAN, 4., 1., 3.]), right=True),
    "bucketize_sorted_with_nan": lambda m: m.bucketize(m.tensor([[_NAN, 2.], [5., 0.]]),
                                                       m.tensor([1., 3., _NAN])),
    "searchsorted_sorter_nan": lambda m: m.searchsorted(
        m.tensor([5., _NAN, 1., 3.]), m.tensor([3., 6., _NAN]), sorter=m.tensor([2, 3, 0, 1])),
    "searchsorted_batched": lambda m: m.searchsorted(m.tensor([[1, 3, 5], [2, 4, 6]]),
                                                     m.tensor([[3, 0], [5, 7]]), right=True),
    "searchsorted_bool": lambda m: m.searchsorted(m.tensor([False, True]), m.tensor([True])),
    "searchsorted_complex": lambda m: m.searchsorted(m.tensor([1j]), m.tensor([1j])),
    "searchsorted_bool_values_long_seq": lambda m: m.searchsorted(m.tensor([0, 1]),
                                                                  m.tensor([True])),
}


@pytest.mark.parametrize("name", COUNTING)
def test_spectra_and_counting(name):
    _run(COUNTING, name, atol=1e-5, rtol=1e-5)


def _y(kind):
    return {
        "int": lambda m: m.tensor([1, 2, 4]),
        "float": lambda m: m.tensor([1., 2., 4.]),
        "bool": lambda m: m.tensor([True, False, True]),
        "empty": lambda m: m.tensor([]),
        "empty_rows": lambda m: m.zeros(2, 0),
        "one_int": lambda m: m.tensor([5]),
    }[kind]


CALCULUS = {}
for _k in ("int", "float", "bool", "empty", "empty_rows", "one_int"):
    for _f in ("trapezoid", "trapz", "cumulative_trapezoid"):
        CALCULUS[f"{_f}_{_k}"] = lambda m, f=_f, k=_k: getattr(m, f)(_y(k)(m))
        CALCULUS[f"{_f}_{_k}_dx"] = lambda m, f=_f, k=_k: getattr(m, f)(_y(k)(m), dx=0.5)
        CALCULUS[f"{_f}_{_k}_int_x"] = lambda m, f=_f, k=_k: getattr(m, f)(
            _y(k)(m), m.arange(_y(k)(m).shape[-1]))
        CALCULUS[f"{_f}_{_k}_double_x"] = lambda m, f=_f, k=_k: getattr(m, f)(
            _y(k)(m), m.arange(_y(k)(m).shape[-1], dtype=m.float64))
        CALCULUS[f"{_f}_{_k}_positional_dx"] = lambda m, f=_f, k=_k: getattr(m, f)(_y(k)(m), 2)
CALCULUS.update({
    "trapezoid_x_too_short": lambda m: m.trapezoid(m.ones(2, 3), m.tensor([0., 1.])),
    "cumulative_trapezoid_x_too_short": lambda m: m.cumulative_trapezoid(m.ones(2, 3),
                                                                         m.tensor([0., 1.])),
    "trapezoid_x_along_dim0": lambda m: m.trapezoid(m.ones(2, 3), m.tensor([0., 1.]), dim=0),
    "trapezoid_x_2d": lambda m: m.trapezoid(m.ones(2, 3), m.tensor([[0., 1., 3.], [0., 2., 3.]])),
    "trapezoid_complex_dx": lambda m: m.trapezoid(m.ones(2), dx=1j),
    "trapezoid_bool_dx": lambda m: m.cumulative_trapezoid(m.ones(2), dx=True),
    "trapezoid_tensor_dx": lambda m: m.trapezoid(m.ones(3), dx=m.tensor(2.)),
    "trapezoid_x_and_dx": lambda m: m.trapezoid(m.ones(2), m.ones(2), dx=1),
    "diff_prepend_fewer_dims": lambda m: m.diff(m.ones(2, 3), dim=0, prepend=m.zeros(3)),
    "diff_append_fewer_dims": lambda m: m.diff(m.ones(2, 3), dim=0, append=m.zeros(3)),
    "diff_prepend_wrong_size": lambda m: m.diff(m.ones(2, 3), dim=0, prepend=m.zeros(1, 2)),
    "diff_prepend_0d": lambda m: m.diff(m.ones(2), prepend=m.tensor(0.)),
    "diff_prepend_number": lambda m: m.diff(m.ones(2), prepend=0),
    "diff_prepend_promotes": lambda m: m.diff(m.ones(2, dtype=m.int64), prepend=m.zeros(1)),
})


@pytest.mark.parametrize("name", CALCULUS)
def test_trapezoid_and_diff(name):
    _run(CALCULUS, name, atol=1e-6, rtol=1e-6)


def test_trapezoid_gradients():
    def f(m):
        y = m.tensor([[1., 2., 4.], [0., 1., 1.]], requires_grad=True)
        x = m.tensor([0., 1., 3.], requires_grad=True)
        (m.trapezoid(y, x).sum() + m.cumulative_trapezoid(y, dx=0.5).pow(2).sum()).backward()
        return y.grad, x.grad
    same_as_torch(f, atol=1e-6, rtol=1e-6)


# ============================================================ 3. bounds, in-place dtypes, einsum

_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float32",
           "float64", "bool")
_BOUNDS = {"huge_float": 1e300, "minus_one": -1, "million": 1e6, "half": 1.5, "true": True,
           "inf": float("inf"), "nan": float("nan"), "imag": 1j, "minus_300": -300, "300": 300}

CLAMP = {}
for _d in _DTYPES:
    for _bn, _b in _BOUNDS.items():
        CLAMP[f"clamp_max_{_d}_{_bn}"] = lambda m, d=_d, b=_b: m.clamp(
            m.tensor([1], dtype=getattr(m, d)), max=b)
        CLAMP[f"clamp__min_{_d}_{_bn}"] = lambda m, d=_d, b=_b: m.tensor(
            [1], dtype=getattr(m, d)).clamp_(b)
CLAMP.update({
    "clamp_uint8_both": lambda m: m.clamp(m.tensor([1, 200], dtype=m.uint8), -5, 300),
    "clamp_int8_max": lambda m: m.clamp(m.tensor([1], dtype=m.int8), max=1000),
    "clamp_bool_both": lambda m: m.clamp(m.tensor([True]), True, True),
    "clamp_bool_ints": lambda m: m.clamp(m.tensor([True]), 0, 1),
    "clamp_min_bool": lambda m: m.clamp_min(m.tensor([True]), True),
    "clamp_min__int_float": lambda m: m.arange(5).clamp_min_(1.5),
    "clamp_max__int_float": lambda m: m.arange(5).clamp_max_(1.5),
    "clip__int_float": lambda m: m.arange(5).clip_(1.5, 2.5),
    "clamp__int_tensor_bound": lambda m: m.arange(5).clamp_(m.tensor(1.5)),
    "clamp_int_float_bounds": lambda m: m.clamp(m.arange(5), 1.5, 3.2),
    "clamp_int64_2_63": lambda m: m.clamp(m.tensor([1]), max=2 ** 63),
    "lerp__int_float_end": lambda m: m.arange(3).lerp_(m.ones(3), 0.5),
    "lerp_int": lambda m: m.lerp(m.arange(3), m.arange(3), 0.5),
    "lerp_half_float_end": lambda m: m.lerp(m.ones(3, dtype=m.float16), m.zeros(3), 0.5),
    "lerp_double_0d_weight": lambda m: m.lerp(m.ones(3), m.zeros(3),
                                              m.tensor(0.5, dtype=m.float64)),
    "lerp_int_0d_weight": lambda m: m.lerp(m.ones(3), m.zeros(3), m.tensor(1)),
    "lerp_double_1d_weight": lambda m: m.lerp(m.ones(3), m.zeros(3),
                                              m.tensor([0.5], dtype=m.float64)),
    "index_add__float_into_long": lambda m: m.arange(3).index_add_(0, m.tensor([0]), m.ones(1)),
    "index_add_double_into_float": lambda m: m.ones(3).index_add(0, m.tensor([0]),
                                                                 m.ones(1, dtype=m.float64)),
    "index_add_float_index": lambda m: m.arange(3).index_add_(0, m.tensor([0.]), m.ones(1)),
    "index_add_dtype_before_bounds": lambda m: m.arange(3).index_add_(0, m.tensor([5]),
                                                                      m.ones(1)),
    "index_copy__float_into_long": lambda m: m.arange(3).index_copy_(0, m.tensor([0]),
                                                                     m.ones(1)),
    "index_reduce__double_into_float": lambda m: m.arange(3.).index_reduce_(
        0, m.tensor([0]), m.ones(1, dtype=m.float64), "prod"),
    "addcdiv_int": lambda m: m.addcdiv(m.arange(3), m.arange(3), m.arange(1, 4)),
    "nan_to_num_complex": lambda m: m.nan_to_num(
        m.tensor([complex(_NAN, _INF), complex(-_INF, 1)]), posinf=5.),
    "nan_to_num_complex128": lambda m: m.nan_to_num(
        m.tensor([complex(_NAN, _INF), complex(-_INF, 1)], dtype=m.complex128)),
})


@pytest.mark.parametrize("name", CLAMP)
def test_bounds_and_inplace_dtypes(name):
    _run(CLAMP, name)


_EQUATIONS = ["i1->i", "ij->jj", "ij->k", "ij->i.", "i..j->i", "ij...->...i...", "ij->...i",
              "ij-i", "i,j", "ij->ij->i", "ijk", "ij->", "...ij->...ji", "i j->j", "ij,->i",
              "ij->I", " ij -> j i ", "i...j...->i", "..", "ij.->i", "...", "ij,jk", "ij,j1"]
EINSUM = {}
for _eq in _EQUATIONS:
    EINSUM[f"{_eq!r}_one"] = lambda m, eq=_eq: m.einsum(eq, m.ones(2, 3))
    EINSUM[f"{_eq!r}_two"] = lambda m, eq=_eq: m.einsum(eq, m.ones(2, 3), m.ones(3, 2))


@pytest.mark.parametrize("name", EINSUM)
def test_einsum_equation_errors(name):
    _run(EINSUM, name)


# ============================================================ 4. creation

CREATION = {
    "linspace_complex64_wide": lambda m: m.linspace(-1e5, 1e5, 1500, dtype=m.complex64),
    "linspace_complex128_wide": lambda m: m.linspace(-1e5, 1e5, 1500, dtype=m.complex128),
    "linspace_complex_ends": lambda m: m.linspace(1j, -2.5 + 3j, 101),
    "linspace_complex_ends_128": lambda m: m.linspace(-1e5j, 1e5, 2001, dtype=m.complex128),
    "linspace_complex_one_step": lambda m: m.linspace(1 + 1j, 2, 1),
    "linspace_complex_to_float": lambda m: m.linspace(0, 1j, 3, dtype=m.float32),
    "linspace_complex_to_long": lambda m: m.linspace(0, 1j, 3, dtype=m.int64),
    "logspace_complex_to_float": lambda m: m.logspace(0, 1j, 3, dtype=m.float32),
    "linspace_1d_start_tensor": lambda m: m.linspace(m.tensor([0.]), m.tensor(1.), 3),
    "linspace_1d_end_tensor": lambda m: m.linspace(m.tensor(0.), m.tensor([1.]), 3),
    "logspace_1d_start_number_end": lambda m: m.logspace(m.tensor([0.]), 1, 3),
    "full_double_tensor_fill": lambda m: m.full((2,), m.tensor(3., dtype=m.float64)),
    "full_half_tensor_fill": lambda m: m.full((2,), m.tensor(3., dtype=m.float16)),
    "full_complex128_tensor_fill": lambda m: m.full((2,), m.tensor(1j, dtype=m.complex128)),
    "full_int32_tensor_fill": lambda m: m.full((2,), m.tensor(3, dtype=m.int32)),
    "full_bool_tensor_fill": lambda m: m.full((2,), m.tensor(True)),
    "triu_indices_float": lambda m: m.triu_indices(3, 3, dtype=m.float32),
    "tril_indices_int16": lambda m: m.tril_indices(3, 3, dtype=m.int16),
    "tril_indices_int32": lambda m: m.tril_indices(3, 4, 1, dtype=m.int32),
    "frombuffer_not_multiple": lambda m: m.frombuffer(bytearray(b"\x01\x02\x03"), dtype=m.int32),
    "frombuffer_offset_not_multiple": lambda m: m.frombuffer(bytearray(b"1234"), dtype=m.int32,
                                                             offset=1),
    "frombuffer_count_too_big": lambda m: m.frombuffer(bytearray(b"1234"), dtype=m.uint8,
                                                       count=5),
    "frombuffer_count_zero": lambda m: m.frombuffer(bytearray(b"1234"), dtype=m.uint8, count=0),
    "frombuffer_offset_past_end": lambda m: m.frombuffer(bytearray(b"1234"), dtype=m.uint8,
                                                         offset=5),
    "frombuffer_count_offset": lambda m: m.frombuffer(bytearray(b"\x01\x02\x03\x04"),
                                                      dtype=m.uint8, count=2, offset=1),
}


@pytest.mark.parametrize("name", CREATION)
def test_creation(name):
    _run(CREATION, name)


def test_complex_linspace_prints_as_torch():
    import torch
    import torchlike
    got = repr(torchlike.linspace(-1e5, 1e5, 1500, dtype=torchlike.complex64))
    assert got == repr(torch.linspace(-1e5, 1e5, 1500, dtype=torch.complex64))


# ============================================================ 5. integer powers, random fills

INT_POW = {
    "rpow_int64_wraps": lambda m: 2 ** m.tensor([-7, -1, 0, 5, 7, 100, 64]),
    "rpow_uint8": lambda m: 2 ** m.tensor([0, 5, 7, 100, 128], dtype=m.uint8),
    "pow_tensor_exponents_wrap": lambda m: m.tensor([3, -3, 0, 1, -1, 7]) ** m.tensor(
        [40, 41, 0, 100, 101, 63]),
    "pow_uint8_tensors": lambda m: m.tensor([3, 2], dtype=m.uint8) ** m.tensor(
        [5, 9], dtype=m.uint8),
    "pow_int32_scalar": lambda m: m.tensor([3, -2], dtype=m.int32) ** 31,
    "pow_int16_big_exponent": lambda m: m.tensor([3], dtype=m.int16) ** 2 ** 14,
    "pow_number_base": lambda m: m.pow(3, m.tensor([30, 50])),
    "pow__int": lambda m: m.tensor([5, 3]).pow_(3),
}


@pytest.mark.parametrize("name", INT_POW)
def test_integer_powers(name):
    _run(INT_POW, name)


def _stats(t):
    return [round(float(v), 1) for v in (t.real.mean(), t.imag.mean(), t.real.var(),
                                          t.imag.var())]


RANDOM = {
    "bernoulli__long_self": lambda m: m.zeros(4, dtype=m.int64).bernoulli_(
        m.tensor([1., 0., 1., 1.])),
    "bernoulli__bool_self": lambda m: m.zeros(4, dtype=m.bool).bernoulli_(
        m.tensor([1., 0., 1., 1.])),
    "bernoulli__half_self_double_p": lambda m: m.zeros(4, dtype=m.float16).bernoulli_(
        m.tensor([1., 0., 1., 1.], dtype=m.float64)),
    "bernoulli__long_p": lambda m: m.zeros(4).bernoulli_(m.tensor([1, 0, 1, 1])),
    "bernoulli__complex_self": lambda m: m.zeros(2, dtype=m.complex64).bernoulli_(
        m.tensor([1, 0])),
    "bernoulli__complex_scalar": lambda m: m.zeros(2, dtype=m.complex64).bernoulli_(0.5),
    "bernoulli__p_longer": lambda m: m.zeros(2).bernoulli_(m.tensor([1., 0., 1.])),
    "bernoulli__p_more_dims": lambda m: m.zeros(2).bernoulli_(m.tensor([[1., 0.]])),
    "bernoulli__p_broadcast": lambda m: m.zeros(2, 2).bernoulli_(m.tensor([[1.], [0.]])),
    "poisson_long": lambda m: m.poisson(m.tensor([1, 2])),
    "poisson_negative": lambda m: m.poisson(m.tensor([-1.])),
    "poisson_nan": lambda m: m.poisson(m.tensor([float("nan")])),
    "poisson_zero_rate": lambda m: m.poisson(m.tensor([0., 0.])),
    "exponential__long": lambda m: m.zeros(2, dtype=m.int64).exponential_(),
    "exponential__complex": lambda m: m.zeros(2, dtype=m.complex64).exponential_(),
    "exponential__bad_lambda_first": lambda m: m.zeros(2, dtype=m.complex64).exponential_(-1),
    "cauchy__long": lambda m: m.zeros(2, dtype=m.int64).cauchy_(),
    "cauchy__complex": lambda m: m.zeros(2, dtype=m.complex64).cauchy_(),
    "random__complex": lambda m: m.zeros(2, dtype=m.complex64).random_(),
    "random__complex_bad_range": lambda m: m.zeros(2, dtype=m.complex64).random_(5, 2),
    "geometric__complex": lambda m: m.zeros(2, dtype=m.complex64).geometric_(0.5),
    "uniform__complex_bad_range": lambda m: m.zeros(2, dtype=m.complex64).uniform_(3, 2),
    "normal__complex_bad_std": lambda m: m.zeros(2, dtype=m.complex64).normal_(0, -1),
    "normal__complex_dtype": lambda m: str(m.zeros(2, dtype=m.complex128).normal_(1, 2).dtype),
    "uniform__complex_range": lambda m: (lambda t: bool(
        ((t.real >= 1) & (t.real < 2) & (t.imag >= 1) & (t.imag < 2)).all()))(
        m.zeros(1000, dtype=m.complex64).uniform_(1, 2)),
    "normal__complex_moments": lambda m: _stats(
        m.zeros(40000, dtype=m.complex64).normal_(1, 2)),
    "normal_complex_mean_moments": lambda m: _stats(
        m.normal(m.zeros(40000, dtype=m.complex64), 2.)),
    "normal_complex_std": lambda m: m.normal(0., m.ones(2, dtype=m.complex64)),
    "normal_output_takes_mean_dtype": lambda m: str(m.normal(
        m.zeros(2), m.ones(2, dtype=m.float64)).dtype),
    "normal_output_takes_mean_dtype_half": lambda m: str(m.normal(
        m.zeros(2, dtype=m.float16), m.ones(2)).dtype),
    "normal_complex_mean_double_std": lambda m: str(m.normal(
        m.zeros(2, dtype=m.complex64), m.ones(2, dtype=m.float64)).dtype),
    "rand_like_generator": lambda m: m.rand_like(
        m.ones(2, 3), generator=m.Generator().manual_seed(0)).shape,
    "randn_like_generator": lambda m: str(m.randn_like(
        m.ones(2, dtype=m.float64), generator=m.Generator()).dtype),
    "randint_like_generator": lambda m: str(m.randint_like(
        m.ones(2), 3, 5, generator=m.Generator()).dtype),
}


@pytest.mark.parametrize("name", RANDOM)
def test_random_fills(name):
    _run(RANDOM, name)


def test_like_factories_follow_their_generator():
    import torchlike
    a = torchlike.randn_like(torchlike.ones(4), generator=torchlike.Generator().manual_seed(3))
    b = torchlike.randn_like(torchlike.ones(4), generator=torchlike.Generator().manual_seed(3))
    assert bool((a == b).all())


# ============================================================ 6. copies and graph nodes

def test_diag_of_a_matrix_is_a_copy():
    def f(m):
        x = m.eye(3)
        d = x.diag()
        d[0] = 5
        e = m.diag(x, 1)
        e += 1
        return x, d, e
    same_as_torch(f)


NODE_NAMES = {
    "diag_matrix": lambda m: m.ones(3, 3, requires_grad=True).diag(),
    "kron": lambda m: m.kron(m.ones(2, 2, requires_grad=True), m.ones(2)),
    "tensordot": lambda m: m.tensordot(m.ones(2, 3, requires_grad=True), m.ones(3, 2), 1),
    "logdet": lambda m: m.logdet(m.eye(2, requires_grad=True)),
    "quantile": lambda m: m.quantile(m.arange(5., requires_grad=True), 0.5),
    "nanquantile_dim": lambda m: m.nanquantile(m.ones(5, 2, requires_grad=True),
                                               m.tensor([0.5, 0.2]), dim=0),
    "trapezoid_dx": lambda m: m.trapezoid(m.ones(3, requires_grad=True)),
    "trapezoid_x": lambda m: m.trapezoid(m.ones(3, requires_grad=True), m.ones(3)),
    "cumulative_trapezoid_x": lambda m: m.cumulative_trapezoid(m.ones(3, requires_grad=True),
                                                               m.arange(3.)),
}
for _o in ("fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf")):
    NODE_NAMES[f"matrix_norm_{_o}"] = lambda m, o=_o: m.linalg.matrix_norm(
        m.eye(3, requires_grad=True), o)


@pytest.mark.parametrize("name", NODE_NAMES)
def test_graph_node_names(name):
    """What ``print(result)`` shows after ``grad_fn=``: the node torch's composite ends in."""
    import torch
    import torchlike
    t = NODE_NAMES[name](torch)
    t_like = NODE_NAMES[name](torchlike)
    assert type(t_like.grad_fn).__name__ == type(t.grad_fn).__name__


EMPTY_REDUCTIONS = {
    "mode_empty": lambda m: m.tensor([]).mode(),
    "mode_empty_rows": lambda m: m.zeros(2, 0).mode(),
    "mode_empty_dim0": lambda m: m.zeros(0, 2).mode(0),
    "mode_nonempty_dim": lambda m: m.zeros(0, 2).mode(1),
    "kthvalue_empty": lambda m: m.tensor([]).kthvalue(1),
    "nanmedian_empty_dim": lambda m: m.zeros(0, 2).nanmedian(0),
    "median_empty_dim": lambda m: m.zeros(0, 2).median(0),
    "aminmax_empty_dim": lambda m: m.zeros(0, 2).aminmax(dim=0),
    "argmax_empty_dim": lambda m: m.zeros(0, 2).argmax(0),
}


@pytest.mark.parametrize("name", EMPTY_REDUCTIONS)
def test_reductions_over_empty_dims(name):
    _run(EMPTY_REDUCTIONS, name)


# ============================================================ 7. rounding, logit, half precision

ROUNDING = {}
for _dt in ("int64", "int32", "uint8", "bool", "float16"):
    ROUNDING[f"round_{_dt}"] = lambda m, d=_dt: m.round(m.tensor([1, 0, 1]).to(getattr(m, d)))
    ROUNDING[f"round_decimals0_{_dt}"] = lambda m, d=_dt: m.round(
        m.tensor([1, 0, 1]).to(getattr(m, d)), decimals=0)
    ROUNDING[f"round_decimals1_{_dt}"] = lambda m, d=_dt: m.round(
        m.tensor([1, 0, 1]).to(getattr(m, d)), decimals=1)
    ROUNDING[f"special_round_{_dt}"] = lambda m, d=_dt: m.special.round(
        m.tensor([1, 0, 1]).to(getattr(m, d)))
    ROUNDING[f"round__decimals_{_dt}"] = lambda m, d=_dt: m.tensor([1, 0, 1]).to(
        getattr(m, d)).round_(decimals=1)
    ROUNDING[f"round__{_dt}"] = lambda m, d=_dt: m.tensor([1, 0, 1]).to(getattr(m, d)).round_()
ROUNDING.update({
    "logit_eps_over_half": lambda m: m.logit(m.tensor([0., 0.5, 1., _NAN]), 0.6),
    "logit_eps_over_half_grad": lambda m: (lambda t: (m.logit(t, 0.6).sum().backward(),
                                                      t.grad)[1])(
        m.tensor([0., 0.5, 1.], requires_grad=True)),
})
_HALF_VALUES = [v / 20 for v in range(-200, 201)] + [0.3, 1.7, 5., 100., 1000., 60000.]
for _dt in ("float16", "bfloat16"):
    for _op in ("exp2", "log2", "log10", "deg2rad", "rad2deg"):
        ROUNDING[f"{_op}_{_dt}"] = lambda m, d=_dt, op=_op: getattr(m, op)(
            m.tensor(_HALF_VALUES, dtype=getattr(m, d))).float()


@pytest.mark.parametrize("name", ROUNDING)
def test_rounding_logit_and_half_precision(name):
    tol = 1e-6 if name.startswith("logit") else 0.0     # (logit: the clamp, not its last ulp)
    _run(ROUNDING, name, atol=tol, rtol=tol)


# ============================================================ 8. division and fused arithmetic

def _samples(n=3000, seed=0):
    import numpy as np
    rng = np.random.default_rng(seed)
    return ((rng.standard_normal(n) * 5).astype("float32").tolist(),
            (rng.standard_normal(n) * 3).astype("float32").tolist(),
            rng.standard_normal(n).astype("float32").tolist(),
            rng.choice([0.1, 0.3, -0.7, 1.1, 3., -0.1, 0.2], n).astype("float32").tolist())


_A, _B, _C, _D = _samples()
ARITH = {
    "floor_div_one_by_tenth": lambda m: m.tensor([1.]) // 0.1,
    "floor_div_python_scalar": lambda m: m.tensor(1.) // 0.1,
    "floor_divide_fn": lambda m: m.floor_divide(m.tensor([1., -1., 0.3, 5.]), 0.1),
    "floor_div_zero_signs": lambda m: m.tensor([0., -0., -0.5, 5., -5.]) // m.tensor(
        [3., 3., 3., 0., 0.]),
    "floor_div_inf_nan": lambda m: m.tensor([_INF, _NAN, 3.]) // m.tensor([2., 1., -_INF]),
    "floor_div_grad": lambda m: (lambda t: (m.div(t, 0.7, rounding_mode="floor").sum()
                                            .backward(), t.grad)[1])(
        m.tensor([1., 2.5, -3.], requires_grad=True)),
}
for _dt in ("float32", "float64", "float16", "bfloat16"):
    for _mode in ("floor", "trunc"):
        ARITH[f"div_{_mode}_{_dt}"] = lambda m, d=_dt, mode=_mode: m.div(
            m.tensor(_A).to(getattr(m, d)), m.tensor(_D).to(getattr(m, d)),
            rounding_mode=mode).float()
for _dt in ("float16", "bfloat16", "float32"):
    _T = (lambda d: lambda m, v: m.tensor(v).to(getattr(m, d)))(_dt)
    ARITH.update({
        f"add_alpha_{_dt}": lambda m, T=_T: m.add(T(m, _A), T(m, _B), alpha=0.3).float(),
        f"sub_alpha_{_dt}": lambda m, T=_T: m.sub(T(m, _A), T(m, _B), alpha=-0.01).float(),
        f"add__alpha_{_dt}": lambda m, T=_T: T(m, _A).add_(T(m, _B), alpha=2.5).float(),
        f"lerp_{_dt}": lambda m, T=_T: m.lerp(T(m, _A), T(m, _B), 0.3).float(),
        f"lerp_far_{_dt}": lambda m, T=_T: m.lerp(T(m, _A), T(m, _B), 0.8).float(),
        f"lerp_tensor_{_dt}": lambda m, T=_T: m.lerp(T(m, _A), T(m, _B), T(m, _C)).float(),
        f"addcmul_{_dt}": lambda m, T=_T: m.addcmul(T(m, _A), T(m, _B), T(m, _C),
                                                    value=0.7).float(),
        f"addcdiv_{_dt}": lambda m, T=_T: m.addcdiv(T(m, _A), T(m, _B), T(m, _C),
                                                    value=0.7).float(),
    })
for _dt in ("float16", "bfloat16"):
    _T = (lambda d: lambda m, v: m.tensor(v).to(getattr(m, d)))(_dt)
    ARITH.update({
        f"hypot_{_dt}": lambda m, T=_T: m.hypot(T(m, _A), T(m, _B)).float(),
        f"logaddexp_{_dt}": lambda m, T=_T: m.logaddexp(T(m, _A), T(m, _B)).float(),
        f"logaddexp2_{_dt}": lambda m, T=_T: m.logaddexp2(T(m, _A), T(m, _B)).float(),
    })
# (a few elements where torch's fused/vectorised rounding is not reproduced)
_ARITH_ULPS = {"add_alpha_float16": 2, "add_alpha_bfloat16": 1, "add__alpha_float16": 4,
               "add__alpha_bfloat16": 4}


@pytest.mark.parametrize("name", ARITH)
def test_division_and_fused_arithmetic(name):
    import numpy as np
    import torch
    import torchlike
    allowed = _ARITH_ULPS.get(name)
    if allowed is None:
        _run(ARITH, name)
        return
    a = ARITH[name](torch).numpy()
    b = np.asarray(ARITH[name](torchlike).tolist(), dtype=np.float32)
    assert int((a != b).sum()) <= allowed


CUMULATIVE = {}
for _dt in ("float32", "float16", "bfloat16", "float64"):
    for _op in ("cumsum", "cumprod", "logcumsumexp"):
        CUMULATIVE[f"{_op}_{_dt}"] = lambda m, d=_dt, op=_op: getattr(
            m.tensor(_A if op != "cumprod" else [1 + v / 500 for v in _A]).to(getattr(m, d)),
            op)(0).double()
CUMULATIVE["cumsum_complex64"] = lambda m: m.complex(m.tensor(_A[:100]),
                                                     m.tensor(_B[:100])).cumsum(0)
CUMULATIVE["cumsum_rows"] = lambda m: m.tensor(_A).reshape(30, 100).cumsum(1)


@pytest.mark.parametrize("name", CUMULATIVE)
def test_cumulative_accumulate_as_torch(name):
    """torch's CPU scans accumulate in double for float32 (float32 for half types), rounding
    each output: a float32 cumsum of 3000 samples differed from it in most elements."""
    _run(CUMULATIVE, name)


def _x34(m):
    return m.arange(12.).reshape(3, 4)


SCATTER_SHAPES = {
    "scatter_src_index_too_tall": lambda m: _x34(m).scatter(1, m.tensor([[0]] * 4), m.ones(4, 1)),
    "scatter_src_smaller": lambda m: _x34(m).scatter(1, m.tensor([[0]] * 4), m.ones(3, 1)),
    "scatter_index_longer_than_src": lambda m: _x34(m).scatter(1, m.tensor([[0, 1, 2, 3, 0]]),
                                                               m.ones(1, 4)),
    "scatter_value_index_too_tall": lambda m: _x34(m).scatter(1, m.tensor([[0]] * 4), 1.),
    "scatter_add_index_too_tall": lambda m: _x34(m).scatter_add(1, m.tensor([[0]] * 4),
                                                                m.ones(4, 1)),
    "scatter_reduce_index_too_tall": lambda m: _x34(m).scatter_reduce(
        1, m.tensor([[0]] * 4), m.ones(4, 1), "sum"),
    "gather_index_too_tall": lambda m: _x34(m).gather(1, m.tensor([[0]] * 4)),
}


@pytest.mark.parametrize("name", SCATTER_SHAPES)
def test_scatter_shape_errors(name):
    _run(SCATTER_SHAPES, name)


_SHAPE_SETS = [((3,), (2,)), ((3, 1), (2, 4, 2)), ((2, 3), (4, 1, 3), (5,)), ((3,), 2),
               ((3,), (-1,)), ([1, 2], 4), ((2,), (3, 1), (1, 1, 1)), (), ((),), (None, (2,)),
               ((0,), (1,)), ((0,), (3,)), ((-1,), (1,)), ((2, 3), "ab"), ((1,), (-2,))]
GRIDS = {f"broadcast_shapes_{i}": (lambda m, sh=sh: m.broadcast_shapes(*sh))
         for i, sh in enumerate(_SHAPE_SETS)}
GRIDS.update({
    "broadcast_shapes_sizes": lambda m: m.broadcast_shapes(m.Size([3]), m.Size([2])),
    "meshgrid_dtype_checked_before_indexing": lambda m: m.meshgrid(
        m.tensor([1]), m.tensor([2.]), indexing="foo"),
    "meshgrid_indexing_checked_before_dims": lambda m: m.meshgrid(
        m.ones(2, 2), m.ones(2), indexing="foo"),
})


@pytest.mark.parametrize("name", GRIDS)
def test_broadcast_shapes_and_meshgrid_checks(name):
    _run(GRIDS, name)


# ============================================================ 9. special functions' tails

_ZQ = [-2.5, -0.3, -7.7, -0.5, 2., 1., 1e9, 0., -3., 0.3, 7., 10.5, -9.99, 33.3]
_ZX = [2., 3., 4., 2.5, 1., 0.5, 3., 2., 5., 4., 2.5, 2., 3., 6.]
SPECIAL_TAILS = {}
for _dt in ("float64", "float32"):
    SPECIAL_TAILS.update({
        f"ndtr_lower_tail_{_dt}": lambda m, d=_dt: m.special.ndtr(
            m.tensor([-10., -8.5, -8.2, -6., -3., 0., 2., 9.], dtype=getattr(m, d))),
        f"log_ndtr_{_dt}": lambda m, d=_dt: m.special.log_ndtr(
            m.tensor([-40., -10., -3., -1., -0.5, 0., 2., 5., 7.9, 9.], dtype=getattr(m, d))),
        f"zeta_{_dt}": lambda m, d=_dt: m.special.zeta(m.tensor(_ZX, dtype=getattr(m, d)),
                                                      m.tensor(_ZQ, dtype=getattr(m, d))),
        f"polygamma2_negative_{_dt}": lambda m, d=_dt: m.polygamma(
            2, m.tensor([-9.99, -0.5, -3.3, 0.5, 2., 30., -2., 0.], dtype=getattr(m, d))),
        f"polygamma3_{_dt}": lambda m, d=_dt: m.polygamma(
            3, m.tensor([-9.99, -0.5, 1.5, 1e9], dtype=getattr(m, d))),
    })
SPECIAL_TAILS["log_ndtr_grad"] = lambda m: (lambda t: (m.special.log_ndtr(t).sum().backward(),
                                                       t.grad)[1])(
    m.tensor([-10., -3., -1., -0.5, 0., 2., 9.], dtype=m.float64, requires_grad=True))
SPECIAL_TAILS["zeta_grad_q"] = lambda m: (lambda q: (m.special.zeta(
    m.tensor([2., 3.], dtype=m.float64), q).sum().backward(), q.grad)[1])(
    m.tensor([1.5, 2.5], dtype=m.float64, requires_grad=True))


@pytest.mark.parametrize("name", SPECIAL_TAILS)
def test_special_function_tails(name):
    """torch's own formulas: ndtr's composite (its lower tail underflows to 0), log_ndtr's
    erfcx branch, its Hurwitz zeta (which sums from a negative q), polygamma through it."""
    tol = 1e-6 if name.endswith("float32") else 1e-13
    _run(SPECIAL_TAILS, name, atol=0, rtol=tol)


def test_eigenvectors_agree_with_torch_up_to_sign_or_phase():
    """DIFFERENCES.md: the sign (eigh) or unit phase (eig) of an eigenvector is the LAPACK
    build's choice (torch's MKL, jax's own LAPACK): values agree, vectors up to that factor."""
    import numpy as np
    import torch
    import torchlike
    rng = np.random.default_rng(0)
    m = rng.standard_normal((6, 6))
    s = m + m.T
    for dt in ("float32", "float64"):
        tw, tv = torch.linalg.eigh(torch.tensor(s, dtype=getattr(torch, dt)))
        lw, lv = torchlike.linalg.eigh(torchlike.tensor(s, dtype=getattr(torchlike, dt)))
        np.testing.assert_allclose(np.asarray(lw.tolist()), tw.numpy(), rtol=1e-4, atol=1e-5)
        dots = np.abs((np.asarray(lv.tolist()) * tv.numpy()).sum(0))
        np.testing.assert_allclose(dots, 1, atol=1e-4)
    tw, tv = torch.linalg.eig(torch.tensor(m))
    lw, lv = torchlike.linalg.eig(torchlike.tensor(m))
    np.testing.assert_allclose(np.asarray(lw.tolist()), tw.numpy(), rtol=1e-6)
    dots = np.abs((np.conj(np.asarray(lv.tolist())) * tv.numpy()).sum(0))
    np.testing.assert_allclose(dots, 1, atol=1e-6)


def test_xlogy_gradients_as_torch():
    """xlogy's gradient for ``self`` is log(other), 0 only where self == 0 and other <= 0 (it
    was 0 wherever self == 0: Chi2/Gamma/Dirichlet log_prob gradients came out wrong)."""
    from oracle import same_as_torch

    def run(m):
        s = m.tensor([0., 0., 0., 1., 1., 1., 2., float("nan"), 0.], requires_grad=True)
        y = m.tensor([0.5, 0., float("nan"), 0.5, 0., float("nan"), -1., 0.5, float("inf")],
                     requires_grad=True)
        m.xlogy(s, y).sum().backward()
        df = m.tensor(2.0, requires_grad=True)
        m.distributions.Chi2(df).log_prob(m.tensor(0.5)).backward()
        return s.grad, y.grad, df.grad
    same_as_torch(run, atol=1e-6, rtol=1e-6)
