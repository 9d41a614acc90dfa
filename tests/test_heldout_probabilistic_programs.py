"""Numeric and probabilistic programs (random fills and samplers, seeding, linear algebra,
spectral transforms, distributions) as third-party scripts write them, swept against live
torch.

torch runs first: where it raises, torchlike must raise the same class with the same message;
where it returns, torchlike must return the same values, dtypes and shapes (for random draws:
the same shapes and dtypes, the values coming from other streams) and warn the same warnings.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracle import both_outcomes, same_as_torch


def _raises_as_torch(fn):
    """torch raises on ``fn``, and torchlike raises the same class with the same message."""
    import torch
    try:
        fn(torch)
    except Exception:  # noqa: BLE001
        pass
    else:
        raise AssertionError("torch does not raise: the case is wrong")
    assert both_outcomes(fn) is None


def _warnings_of(fn, m):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn(m)
    return [(type(x.message).__name__, str(x.message)) for x in w]


def _same_warnings(fn):
    import torch
    import torchlike
    assert _warnings_of(fn, torchlike) == _warnings_of(fn, torch)


def _ignoring_errors(fn, m):
    try:
        fn(m)
    except Exception:  # noqa: BLE001
        pass


def _kind(t):
    """A draw's shape and dtype (its values come from another stream than torch's)."""
    return tuple(t.shape), str(t.dtype)


# ============================================================ 1. random fills: argument checks

_H = "float16"

FILL_ERRORS = {
    # random_: torch's overloads take ints only; random_(0) is random_(to=0)
    "random_float_from": lambda m: m.empty(3).random_(1.5, 3),
    "random_float_to": lambda m: m.empty(3).random_(1, 2.5),
    "random_float_only": lambda m: m.empty(3).random_(1.5),
    "random_bool_only": lambda m: m.empty(3).random_(True),
    "random_none_only": lambda m: m.empty(3).random_(None),
    "random_float_tensor": lambda m: m.empty(3).random_(m.tensor(2.)),
    "random_to_kw_none": lambda m: m.empty(3).random_(to=None),
    "random_from_kw_alone": lambda m: m.empty(3).random_(**{"from": 2}),
    "random_float_from_to_kw": lambda m: m.empty(3).random_(1.5, to=3),
    "random_three_args": lambda m: m.empty(3).random_(2, 3, 4),
    "random_to_zero": lambda m: m.empty(3).random_(0),
    "random_to_negative": lambda m: m.empty(3).random_(-5),
    "random_empty_still_checks": lambda m: m.empty(0).random_(3, 1),
    # a float dtype: both ends within its values, and from < to once cast to it
    "random_half_to_too_big": lambda m: m.empty(3, dtype=m.float16).random_(0, 70000),
    "random_half_from_too_small": lambda m: m.empty(3, dtype=m.float16).random_(-70000, 0),
    "random_half_to_only_too_big": lambda m: m.empty(3, dtype=m.float16).random_(70000),
    "random_float_cast_collapses": lambda m: m.empty(3).random_(2 ** 30 + 1, 2 ** 30 + 2),
    "random_from_over_to_inc": lambda m: m.empty(3).random_(2 ** 26, None),
    "random_half_from_at_to_inc": lambda m: m.empty(3, dtype=m.float16).random_(2 ** 11, None),
    "random_int8_from_none_too_big": lambda m: m.empty(3, dtype=m.int8).random_(200, None),
    "random_int32_to_too_big": lambda m: m.empty(3, dtype=m.int32).random_(0, 2 ** 40),
    # uniform_: both ends finite in the dtype, and to - from representable
    "uniform_nan_from": lambda m: m.empty(3).uniform_(float("nan"), 1),
    "uniform_nan_to": lambda m: m.empty(3).uniform_(0, float("nan")),
    "uniform_minus_inf": lambda m: m.empty(3).uniform_(-float("inf"), 1),
    "uniform_inf_to": lambda m: m.empty(3).uniform_(0., float("inf")),
    "uniform_empty_inf": lambda m: m.empty(0).uniform_(float("inf"), 1),
    "uniform_half_from_too_big": lambda m: m.empty(3, dtype=m.float16).uniform_(-1e5, 1e5),
    "uniform_range_overflows_float": lambda m: m.empty(3).uniform_(-3e38, 3e38),
    "uniform_range_overflows_double":
        lambda m: m.empty(3, dtype=m.float64).uniform_(-1e308, 1e308),
    "uniform_range_overflows_bfloat16":
        lambda m: m.empty(3, dtype=m.bfloat16).uniform_(-3e38, 3e38),
    "uniform_range_overflows_complex":
        lambda m: m.empty(3, dtype=m.complex64).uniform_(-3e38, 3e38),
    # a NaN standard deviation
    "normal__nan_std": lambda m: m.empty(3).normal_(0., float("nan")),
    "log_normal__nan_std": lambda m: m.empty(3).log_normal_(0., float("nan")),
    "normal_scalar_nan_std": lambda m: m.normal(0., float("nan"), (2,)),
    "normal_tensor_mean_nan_std": lambda m: m.normal(m.zeros(2), float("nan")),
    "normal_tensor_nan_std": lambda m: m.normal(m.zeros(2), m.tensor([1., float("nan")])),
    # normal(float, float) needs a size, a tuple
    "normal_no_size": lambda m: m.normal(0., 1.),
    "normal_int_size": lambda m: m.normal(0., 1., 3),
    # Generator.manual_seed takes an integer only
    "generator_seed_float": lambda m: m.Generator().manual_seed(1.5),
    "generator_seed_bool": lambda m: m.Generator().manual_seed(True),
    "generator_seed_tensor": lambda m: m.Generator().manual_seed(m.tensor(3)),
    "generator_seed_str": lambda m: m.Generator().manual_seed("3"),
    "generator_seed_none": lambda m: m.Generator().manual_seed(None),
    "manual_seed_none": lambda m: m.manual_seed(None),
}


@pytest.mark.parametrize("name", FILL_ERRORS)
def test_random_fill_argument_errors(name):
    _raises_as_torch(FILL_ERRORS[name])


FILL_DRAWS = {
    "random_int_tensor_to": lambda m: _kind(m.empty(3).random_(m.tensor(2))),
    "random_numpy_int": lambda m: _kind(m.empty(3).random_(np.int64(2), 5)),
    "random_to_kw": lambda m: _kind(m.empty(3).random_(to=5)),
    "random_from_to_kw": lambda m: _kind(m.empty(3).random_(0, to=5)),
    "random_from_none": lambda m: _kind(m.empty(3).random_(2, None)),
    "random_half_exact_one": lambda m: m.empty(3, dtype=m.float16).random_(5000, 5001),
    "random_int8_from_none": lambda m: bool((m.empty(50, dtype=m.int8).random_(100, None)
                                             >= 100).all()),
    "random_bool_from_none": lambda m: _kind(m.empty(3, dtype=m.bool).random_(0, None)),
    "uniform_tensor_bounds": lambda m: _kind(m.empty(3).uniform_(m.tensor(0.), 2)),
    "uniform_bool_bound": lambda m: _kind(m.empty(3).uniform_(True, 2)),
    "uniform_equal_bounds": lambda m: m.empty(3).uniform_(1., 1.),
    "normal_inf_std_is_infinite": lambda m: m.normal(0., float("inf"), (4,)).isinf().all(),
    "normal_tensor_inf_std": lambda m: m.normal(m.zeros(2), m.tensor([1., float("inf")]))[1]
    .isinf(),
    "normal__inf_std": lambda m: m.empty(3).normal_(0., float("inf")).isinf().all(),
    "normal_int_tuple_size": lambda m: _kind(m.normal(0, 1, (2,))),
    "manual_seed_float_reads_int": lambda m: m.manual_seed(3.7).initial_seed(),
    "manual_seed_bool_reads_int": lambda m: m.manual_seed(True).initial_seed(),
    "manual_seed_str_reads_int": lambda m: m.manual_seed("3").initial_seed(),
    "manual_seed_tensor_reads_int": lambda m: m.manual_seed(m.tensor(4)).initial_seed(),
}


@pytest.mark.parametrize("name", FILL_DRAWS)
def test_random_fill_draws(name):
    same_as_torch(FILL_DRAWS[name])


FILL_WARNINGS = {
    "random_float_to_past_exact": lambda m: m.empty(3).random_(0, 2 ** 25),
    "random_float_to_only_past_exact": lambda m: m.empty(3).random_(2 ** 25),
    "random_half_both_past_exact": lambda m: m.empty(3, dtype=m.float16).random_(5000, 5001),
    "random_half_from_none_below": lambda m: m.empty(3, dtype=m.float16).random_(-2 ** 11 - 10,
                                                                                  None),
    "random_bfloat16_past_exact": lambda m: m.empty(3, dtype=m.bfloat16).random_(2 ** 9),
    "random_double_past_exact": lambda m: m.empty(3, dtype=m.float64).random_(2 ** 60,
                                                                              2 ** 60 + 5),
    "random_within_exact": lambda m: m.empty(3).random_(0, 2 ** 20),
}


@pytest.mark.parametrize("name", FILL_WARNINGS)
def test_random_fill_precision_warnings(name):
    _same_warnings(FILL_WARNINGS[name])


# ============================================================ 2. linear algebra

_A = [[2., 0.5, 0.1], [0.5, 1.5, 0.2], [0.3, 0.2, 1.]]
_ROT = [[0., -1.], [1., 0.5]]
_TALL = [[1., 2., 0.5], [0.3, -1., 2.], [2., 0., 1.], [-1., 1., 1.]]


def _qr_backward(mode, rows):
    def run(m):
        x = m.tensor(_TALL[:rows], requires_grad=True)
        q, r = m.linalg.qr(x, mode=mode)
        (r.sum() + (q.sum() if q.numel() else 0)).backward()
        return x.grad
    return run


LINALG_ERRORS = {
    # backward through QR where torch's formula does not apply
    "qr_r_backward": _qr_backward("r", 4),
    "qr_r_backward_square": _qr_backward("r", 3),
    "qr_complete_tall_backward": _qr_backward("complete", 4),
    "qr_legacy_some_false_tall_backward":
        lambda m: m.qr(m.tensor(_TALL, requires_grad=True), some=False).R.sum().backward(),
    # linalg.norm: dim of length 1 or 2, whatever the order
    "norm_three_dims": lambda m: m.linalg.norm(m.ones(3, 3, 3), dim=(0, 1, 2)),
    "norm_repeated_dims_ord": lambda m: m.linalg.norm(m.ones(3, 3), ord=2, dim=(0, 1, 1)),
    "norm_empty_dims": lambda m: m.linalg.norm(m.ones(3, 3), dim=()),
    "norm_empty_dims_ord": lambda m: m.linalg.norm(m.ones(3, 3), 1, dim=[]),
    # eig / eigvals: float inputs of a LAPACK precision only
    "eigvals_int": lambda m: m.linalg.eigvals(m.eye(2, dtype=m.int64)),
    "eigvals_uint8": lambda m: m.linalg.eigvals(m.eye(2, dtype=m.uint8)),
    "eigvals_bool": lambda m: m.linalg.eigvals(m.eye(2, dtype=m.bool)),
    "eigvals_bfloat16": lambda m: m.linalg.eigvals(m.eye(2, dtype=m.bfloat16)),
    "eig_bfloat16": lambda m: m.linalg.eig(m.eye(2, dtype=m.bfloat16)),
    "eigvals_not_square": lambda m: m.linalg.eigvals(m.ones(2, 3)),
}


@pytest.mark.parametrize("name", LINALG_ERRORS)
def test_linalg_errors(name):
    _raises_as_torch(LINALG_ERRORS[name])


def _eigvals_grad(loss, a, dtype="float64"):
    def run(m):
        x = m.tensor(a, dtype=getattr(m, dtype), requires_grad=True)
        out = loss(m, x)
        out.backward()
        return out, x.grad, m.linalg.eigvals(x).grad_fn.name()
    return run


LINALG_VALUES = {
    "qr_complete_square_backward": _qr_backward("complete", 3),
    "qr_complete_wide_backward": lambda m: (lambda x: (
        m.linalg.qr(x, mode="complete").R.sum().backward(), x.grad)[1])(
        m.tensor(_TALL, requires_grad=True).T),
    "qr_r_no_grad": lambda m: m.linalg.qr(m.tensor(_TALL), mode="r").R.abs(),
    "norm_one_dim": lambda m: m.linalg.norm(m.tensor(_TALL), dim=[1]),
    "norm_two_dims_no_ord": lambda m: m.linalg.norm(m.tensor(_TALL), dim=(1, 0)),
    # eigenvalue gradients (a stability penalty, a spectral radius, a complex input)
    "eigvals_real_part_penalty": _eigvals_grad(
        lambda m, a: (m.linalg.eigvals(a).real ** 2).sum() + m.linalg.eigvals(a).real.sum(), _A),
    "eigvals_spectral_radius": _eigvals_grad(lambda m, a: m.linalg.eigvals(a).abs().max(), _ROT),
    "eigvals_imag_weighted": _eigvals_grad(
        lambda m, a: (m.linalg.eigvals(a).imag * m.tensor([1., 3.], dtype=a.dtype)).sum(), _ROT),
    "eigvals_float32": _eigvals_grad(lambda m, a: m.linalg.eigvals(a).real.max(), _A, "float32"),
    "eigvals_complex_input": _eigvals_grad(
        lambda m, a: (m.linalg.eigvals(a) * m.tensor([1 + 1j, 2 - 1j], dtype=a.dtype))
        .real.sum(), [[1 + 1j, 2], [0.5j, -1]], "complex128"),
    "eigvals_batched": _eigvals_grad(
        lambda m, a: m.linalg.eigvals(a.expand(2, 3, 3) * m.tensor([1., 2.], dtype=a.dtype)
                                      [:, None, None]).real.sum(), _A),
}


@pytest.mark.parametrize("name", LINALG_VALUES)
def test_linalg_values(name):
    same_as_torch(LINALG_VALUES[name], atol=1e-6, rtol=1e-6)


# one triangle read: LAPACK never looks at the other (a NaN there, or a non-symmetric input)
_NONSYM = [[4., 100., -3.], [2., 3., 50.], [0.5, 1., 2.]]
_NONSYM_UP = [[4., 1., 0.5], [-70., 3., 1.], [20., 9., 2.]]
_HERM = [[3 + 0j, 0.5 - 0.2j, 0.1j], [0.5 + 0.2j, 2, 0.3], [-0.1j, 0.3, 1.5]]


def _grad_of(fn, a, dtype="float64"):
    """fn(m, A) and the gradient of a weighted sum of its outputs with respect to A."""
    def run(m):
        x = m.tensor(a, dtype=getattr(m, dtype), requires_grad=True)
        out = fn(m, x)
        outs = out if isinstance(out, tuple) else (out,)
        total = 0
        for o in outs:
            r = o.abs() if o.is_complex() else o
            total = total + (r * (m.arange(r.numel(), dtype=r.dtype).reshape(r.shape) + 1)).sum()
        total.backward()
        return (*outs, x.grad)
    return run


TRIANGLES = {
    "cholesky_lower_of_nonsymmetric": _grad_of(lambda m, a: m.linalg.cholesky(a), _NONSYM),
    "cholesky_upper_of_nonsymmetric":
        _grad_of(lambda m, a: m.linalg.cholesky(a, upper=True), _NONSYM_UP),
    "cholesky_ex_of_nonsymmetric": _grad_of(lambda m, a: m.linalg.cholesky_ex(a).L, _NONSYM),
    "cholesky_symmetric_gradient": _grad_of(lambda m, a: m.linalg.cholesky(a), _A),
    "cholesky_complex_nonhermitian": _grad_of(
        lambda m, a: m.linalg.cholesky(a), [[3 + 0j, 9 + 2j, -3j], [0.5 + 0.2j, 2, 7],
                                            [-0.1j, 0.3, 1.5]], "complex128"),
    "cholesky_nan_above": lambda m: m.linalg.cholesky(m.tensor([[1., float("nan")], [0., 1.]])),
    "cholesky_upper_inf_below":
        lambda m: m.linalg.cholesky(m.tensor([[1., 0.], [float("inf"), 1.]]), upper=True),
    "gp_marginal_likelihood": _grad_of(
        lambda m, k: m.cholesky_solve(m.tensor([[0.1], [0.5], [-0.2]], dtype=k.dtype),
                                      m.linalg.cholesky(k)), _A),
    "eigh_vectors_gradient": _grad_of(lambda m, a: m.linalg.eigh(a)[1].abs(), _A),
    "eigh_vectors_of_nonsymmetric": _grad_of(lambda m, a: m.linalg.eigh(a)[1].abs(), _NONSYM),
    "eigh_upper_of_nonsymmetric":
        _grad_of(lambda m, a: m.linalg.eigh(a, UPLO="U")[1].abs(), _NONSYM_UP),
    "eigh_complex_vectors": _grad_of(lambda m, a: (m.linalg.eigh(a)[1].abs() ** 2).sum(0),
                                     _HERM, "complex128"),
    "pinv_hermitian_of_nonsymmetric": _grad_of(lambda m, a: m.linalg.pinv(a, hermitian=True),
                                               _NONSYM),
    "pinv_hermitian_symmetric": _grad_of(lambda m, a: m.linalg.pinv(a, hermitian=True), _A),
    "pinv_hermitian_complex": _grad_of(lambda m, a: m.linalg.pinv(a, hermitian=True), _HERM,
                                       "complex128"),
    "pinv_hermitian_singular":
        _grad_of(lambda m, a: m.linalg.pinv(a, hermitian=True), [[1., 1.], [1., 1.]]),
    "matrix_rank_hermitian_reads_lower":
        lambda m: m.linalg.matrix_rank(m.tensor([[1., 100.], [1., 1.]]), hermitian=True),
    "matrix_rank_hermitian_singular_lower":
        lambda m: m.linalg.matrix_rank(m.tensor([[1., 0.], [1., 1.]]), hermitian=True),
}


@pytest.mark.parametrize("name", TRIANGLES)
def test_factorizations_read_one_triangle(name):
    same_as_torch(TRIANGLES[name], atol=1e-6, rtol=1e-6)


LINALG_EDGES = {
    # logdet of a complex matrix is the complex logarithm of the determinant
    "logdet_complex": _grad_of(lambda m, a: m.logdet(a), _HERM, "complex128"),
    "logdet_complex_singular": lambda m: m.logdet(m.zeros(2, 2, dtype=m.complex64)),
    "logdet_complex_grad_fn": lambda m: m.logdet(m.tensor(_HERM, requires_grad=True))
    .grad_fn.name(),
    # lstsq: torch's checks in torch's order, empty systems, real residuals of complex ones
    "lstsq_1d_input": lambda m: m.linalg.lstsq(m.ones(3), m.ones(3)),
    "lstsq_0d_other": lambda m: m.linalg.lstsq(m.ones(3, 2), m.tensor(1.)),
    "lstsq_other_too_many_dims": lambda m: m.linalg.lstsq(m.ones(3, 2), m.ones(2, 3, 2, 1)),
    "lstsq_vector_size": lambda m: m.linalg.lstsq(m.ones(3, 2), m.ones(2)),
    "lstsq_int": lambda m: m.linalg.lstsq(m.ones(3, 2, dtype=m.int64), m.ones(3, 1,
                                                                          dtype=m.int64)),
    "lstsq_half": lambda m: m.linalg.lstsq(m.eye(2, dtype=m.float16), m.eye(2, dtype=m.float16)),
    "lstsq_bool": lambda m: m.linalg.lstsq(m.eye(2, dtype=m.bool), m.eye(2, dtype=m.bool)),
    "lstsq_int_bad_driver": lambda m: m.linalg.lstsq(m.ones(3, 2, dtype=m.int64),
                                                     m.ones(3, dtype=m.int64), driver="foo"),
    "lstsq_no_rows": lambda m: tuple(m.linalg.lstsq(m.ones(0, 2), m.ones(0, 1))),
    "lstsq_no_columns": lambda m: tuple(m.linalg.lstsq(m.ones(2, 0), m.ones(2, 1))),
    "lstsq_empty_gelsd": lambda m: tuple(m.linalg.lstsq(m.ones(0, 0), m.ones(0, 1),
                                                        driver="gelsd")),
    "lstsq_no_columns_gels": lambda m: tuple(m.linalg.lstsq(m.ones(4, 0), m.ones(4, 2),
                                                            driver="gels")),
    "lstsq_batch_no_rows_gelss": lambda m: tuple(m.linalg.lstsq(m.ones(2, 0, 3), m.ones(2, 0, 1),
                                                                driver="gelss")),
    "lstsq_no_columns_gelsd": lambda m: tuple(m.linalg.lstsq(m.ones(4, 0), m.ones(4),
                                                             driver="gelsd")),
    "lstsq_vector_residuals_keep_column": _grad_of(lambda m, a: tuple(m.linalg.lstsq(
        a, m.tensor([1., 2., 0.], dtype=a.dtype), driver="gelsd"))[:2], [[1., 0], [0, 1], [1, 1]]),
    "lstsq_batched_vector_residuals": lambda m: tuple(m.linalg.lstsq(
        m.tensor([[1., 0], [0, 1], [1, 1]]).expand(2, 3, 2), m.tensor([1., 2., 0.]).expand(2, 3),
        driver="gels")),
    "lstsq_complex_gelsd": lambda m: tuple(m.linalg.lstsq(
        m.tensor([[1., 0], [0, 1], [1, 1]], dtype=m.complex64),
        m.ones(3, 1, dtype=m.complex64), driver="gelsd")),
    "lstsq_complex_gels_residuals": lambda m: tuple(m.linalg.lstsq(
        m.tensor([[1., 0], [0, 1], [1, 1]], dtype=m.complex64),
        m.ones(3, 1, dtype=m.complex64), driver="gels")),
    # matrix norms over an empty dimension: 0 for a positive order, amin's error for a negative
    "matrix_norm_2_empty": lambda m: m.linalg.matrix_norm(m.ones(0, 0), 2),
    "matrix_norm_2_no_rows": lambda m: m.linalg.matrix_norm(m.ones(0, 3), 2),
    "matrix_norm_minus2_empty": lambda m: m.linalg.matrix_norm(m.ones(0, 0), -2),
    "matrix_norm_1_no_columns": lambda m: m.linalg.matrix_norm(m.ones(3, 0), 1),
    "matrix_norm_minus1_no_columns": lambda m: m.linalg.matrix_norm(m.ones(3, 0), -1),
    "matrix_norm_minus_inf_no_rows": lambda m: m.linalg.matrix_norm(m.ones(0, 3), -float("inf")),
    "matrix_norm_inf_batch": lambda m: m.linalg.matrix_norm(m.ones(2, 0, 3), float("inf")),
    "matrix_norm_2_keepdim": lambda m: m.linalg.matrix_norm(m.ones(2, 0, 3), 2, keepdim=True),
    "matrix_norm_minus1_keepdim":
        lambda m: m.linalg.matrix_norm(m.ones(3, 0), -1, keepdim=True),
    "norm_2_empty": lambda m: m.linalg.norm(m.ones(0, 0), 2),
    # dtypes torch's kernels refuse
    "trace_bool": lambda m: m.trace(m.eye(2, dtype=m.bool)),
    "matrix_power_bool_square": lambda m: m.linalg.matrix_power(m.eye(2, dtype=m.bool), 2),
    "matrix_power_bool_one": lambda m: m.linalg.matrix_power(m.eye(2, dtype=m.bool), 1),
    "matrix_rank_half": lambda m: m.linalg.matrix_rank(m.eye(2, dtype=m.float16)),
    "matrix_rank_bfloat16_hermitian":
        lambda m: m.linalg.matrix_rank(m.eye(2, dtype=m.bfloat16), hermitian=True),
    "cond_vector": lambda m: m.linalg.cond(m.ones(3)),
    "cond_scalar_2": lambda m: m.linalg.cond(m.tensor(1.), 2),
    "cond_vector_fro": lambda m: m.linalg.cond(m.ones(3), "fro"),
    # CPU autocast casts lstsq's operands to float32 before its dtype checks, as torch's
    "lstsq_bfloat16_under_autocast": lambda m: _under_autocast(m, lambda: m.linalg.lstsq(
        m.tensor(_A).bfloat16(), m.ones(3, 2).bfloat16()).solution),
}


def _under_autocast(m, fn):
    with m.autocast("cpu", dtype=m.bfloat16):
        return fn()


@pytest.mark.parametrize("name", LINALG_EDGES)
def test_linalg_edges(name):
    same_as_torch(LINALG_EDGES[name], atol=1e-5, rtol=1e-5)


# ============================================================ 3. spectral

SPECTRAL_ERRORS = {
    # a centred stft pads the signal (viewed as 3D) before refusing its dimension
    "stft_3d_names_padded_length":
        lambda m: m.stft(m.ones(2, 2, 64), 16, window=m.ones(16), return_complex=True),
    "stft_3d_short_reflect":
        lambda m: m.stft(m.ones(2, 2, 6), 16, window=m.ones(16), return_complex=True),
    "stft_4d_reflect_pad_refused":
        lambda m: m.stft(m.ones(2, 2, 2, 64), 16, window=m.ones(16), return_complex=True),
    "stft_4d_constant_padded":
        lambda m: m.stft(m.ones(2, 2, 2, 64), 16, window=m.ones(16), return_complex=True,
                         pad_mode="constant"),
    "stft_3d_not_centred":
        lambda m: m.stft(m.ones(2, 2, 64), 16, window=m.ones(16), return_complex=True,
                         center=False),
}


@pytest.mark.parametrize("name", SPECTRAL_ERRORS)
def test_spectral_errors(name):
    _raises_as_torch(SPECTRAL_ERRORS[name])


SHIFTS_AND_FREQUENCIES = {
    "fftshift_dim_out_of_range": lambda m: m.fft.fftshift(m.ones(3, 4), dim=(0, 5)),
    "fftshift_negative_dim_out_of_range": lambda m: m.fft.fftshift(m.ones(3, 4), dim=-3),
    "fftshift_scalar_dim": lambda m: m.fft.fftshift(m.tensor(1.), dim=0),
    "ifftshift_scalar_negative_dim": lambda m: m.fft.ifftshift(m.tensor(1.), dim=-1),
    "fftshift_scalar": lambda m: m.fft.fftshift(m.tensor(1.)),
    "fftshift_repeated_dim": lambda m: m.fft.fftshift(m.arange(5), dim=(0, 0)),
    "ifftshift_negative_dim": lambda m: m.fft.ifftshift(m.arange(12).reshape(3, 4), dim=-2),
    "fftfreq_bool_n": lambda m: m.fft.fftfreq(True),
    "rfftfreq_float_n": lambda m: m.fft.rfftfreq(4.5),
    "fftfreq_str_d": lambda m: m.fft.fftfreq(4, "a"),
    "fftfreq_none_d": lambda m: m.fft.fftfreq(4, None),
    "fftfreq_float_tensor_n": lambda m: m.fft.fftfreq(m.tensor(4.)),
    "fftfreq_int_tensor_n": lambda m: m.fft.fftfreq(m.tensor(4)),
    "fftfreq_tensor_d": lambda m: m.fft.fftfreq(4, d=m.tensor(2.)),
    "fftfreq_numpy_n": lambda m: m.fft.fftfreq(np.int64(4)),
}


@pytest.mark.parametrize("name", SHIFTS_AND_FREQUENCIES)
def test_fft_shifts_and_frequencies(name):
    same_as_torch(SHIFTS_AND_FREQUENCIES[name])


# ============================================================ 4. sample statistics

_OBS = [[1., 2., 0.5, 3.], [0.3, -1., 2., 0.], [2., 0., 1., 1.]]

COV = {
    "fweights_float": lambda m: m.cov(m.tensor(_OBS), fweights=m.tensor([1., 2., 1., 3.])),
    "fweights_bool": lambda m: m.cov(m.tensor(_OBS), fweights=m.tensor([True, False, True,
                                                                         True])),
    "fweights_2d": lambda m: m.cov(m.tensor(_OBS), fweights=m.tensor([[1, 2, 1, 3]])),
    "fweights_wrong_numel": lambda m: m.cov(m.tensor(_OBS), fweights=m.tensor([1, 2, 1])),
    "fweights_negative": lambda m: m.cov(m.tensor(_OBS), fweights=m.tensor([1, -2, 1, 3])),
    "fweights_sum_zero": lambda m: m.cov(m.tensor(_OBS), fweights=m.tensor([0, 0, 0, 0])),
    "aweights_int": lambda m: m.cov(m.tensor(_OBS), aweights=m.tensor([1, 2, 1, 3])),
    "aweights_complex": lambda m: m.cov(m.tensor(_OBS), aweights=m.tensor([1., 2, 1, 3],
                                                                         dtype=m.complex64)),
    "aweights_2d": lambda m: m.cov(m.tensor(_OBS), aweights=m.tensor([[1., 2, 1, 3]])),
    "aweights_wrong_numel": lambda m: m.cov(m.tensor(_OBS), aweights=m.tensor([1., 2, 1])),
    "aweights_negative": lambda m: m.cov(m.tensor(_OBS), aweights=m.tensor([1., -2., 1., 3.])),
    "aweights_nan": lambda m: m.cov(m.tensor(_OBS), aweights=m.tensor([1., 2, 1, float("nan")])),
    "aweights_sum_zero": lambda m: m.cov(m.tensor(_OBS), aweights=m.zeros(4)),
    "bool_input": lambda m: m.cov(m.tensor([True, False])),
    "float_correction": lambda m: m.cov(m.tensor(_OBS), correction=1.5),
    "both_weights": lambda m: m.cov(m.tensor(_OBS), fweights=m.tensor([1, 2, 1, 3]),
                                    aweights=m.tensor([0.5, 1., 2., 1.])),
    "one_weighted_observation": lambda m: m.cov(m.tensor(_OBS), fweights=m.tensor([1, 0, 0, 0])),
    "one_observation": lambda m: m.cov(m.tensor([[1.], [2.]])),
    "correction_past_observations": lambda m: m.cov(m.tensor(_OBS), correction=5),
    "weighted_correction_past_weights":
        lambda m: m.cov(m.tensor(_OBS), fweights=m.tensor([1, 0, 1, 0]), correction=2),
    "aweighted_dof_zero": lambda m: m.cov(m.tensor(_OBS), aweights=m.tensor([1., 0, 0, 0])),
}


@pytest.mark.parametrize("name", COV)
def test_cov_weights(name):
    _same_warnings(lambda m: _ignoring_errors(COV[name], m))
    same_as_torch(COV[name], atol=1e-6, rtol=1e-6)


# ============================================================ 5. distributions

def _gpd64(m):
    f64 = m.float64
    return m.distributions.GeneralizedPareto(m.tensor([0.1, 0.5], dtype=f64),
                                             m.tensor([1., 2.], dtype=f64),
                                             m.tensor([0.2, -0.1], dtype=f64))


DISTRIBUTIONS = {
    # torch's GeneralizedPareto compares its concentration with torch.tensor(0.0) in log_prob
    # and the survival function: a float64 distribution raises there, and only there
    "gpd_float64_log_prob": lambda m: _gpd64(m).log_prob(m.tensor([0.3, 0.8],
                                                                  dtype=m.float64)),
    "gpd_float64_cdf": lambda m: _gpd64(m).cdf(m.tensor([0.3, 0.8], dtype=m.float64)),
    "gpd_float64_icdf": lambda m: _gpd64(m).icdf(m.tensor([0.3, 0.8], dtype=m.float64)),
    "gpd_float64_stats": lambda m: (_gpd64(m).mean, _gpd64(m).variance, _gpd64(m).entropy()),
    "gpd_float32_log_prob": lambda m: m.distributions.GeneralizedPareto(
        0., m.tensor([1., 2.]), m.tensor([0.2, 0.])).log_prob(m.tensor([0.3, 0.8])),
}


@pytest.mark.parametrize("name", DISTRIBUTIONS)
def test_distributions(name):
    same_as_torch(DISTRIBUTIONS[name], atol=1e-6, rtol=1e-6)


# ============================================================ 6. torch.special's argument parsing

_SPECIAL_NAMES = ["airy_ai", "bessel_j0", "chebyshev_polynomial_t", "digamma", "entr", "erf",
                  "erfcx", "expit", "gammainc", "gammaln", "hermite_polynomial_he", "i0e",
                  "legendre_polynomial_p", "log_ndtr", "log_softmax", "logit", "logsumexp",
                  "multigammaln", "ndtri", "polygamma", "psi", "round",
                  "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_w", "sinc",
                  "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]
_SPECIAL_CALLS = {
    "no_arguments": ((), {}),
    "a_float": ((2.,), {}),
    "a_list": (([0.5],), {}),
    "two_floats": ((0.5, 2.), {}),
    "unknown_keyword": (("T",), {"foo": 1}),
    "none": ((None,), {}),
    "four_tensors": (("T", "T", "T", "T"), {}),
}
SPECIAL_ARGUMENT_ERRORS = {f"{n}_{c}": (n, c) for n in _SPECIAL_NAMES for c in _SPECIAL_CALLS}


@pytest.mark.parametrize("name", SPECIAL_ARGUMENT_ERRORS)
def test_special_argument_errors(name):
    fname, call = SPECIAL_ARGUMENT_ERRORS[name]
    args, kwargs = _SPECIAL_CALLS[call]

    def run(m):
        real = tuple(m.ones(2) if a == "T" else a for a in args)
        return getattr(m.special, fname)(*real, **kwargs)
    _raises_as_torch(run)


_T2 = [0.5, 1.5]
SPECIAL_CALL_FORMS = {
    "keyword_input": lambda m: m.special.erf(input=m.tensor(_T2)),
    "keyword_x": lambda m: m.special.airy_ai(x=m.tensor(_T2)),
    "keyword_input_where_x": lambda m: m.special.airy_ai(input=m.tensor(_T2)),
    "xlogy_keywords": lambda m: m.special.xlogy(input=m.tensor(_T2), other=m.tensor(_T2)),
    "xlogy_number_other": lambda m: m.special.xlogy(m.tensor(_T2), other=2.),
    "xlogy_number_first": lambda m: m.special.xlogy(2., m.tensor(_T2)),
    "xlogy_number_self_keyword": lambda m: m.special.xlogy(self=2., other=m.tensor(_T2)),
    "xlogy_out_not_tensor": lambda m: m.special.xlogy(m.tensor(_T2), m.tensor(_T2), out=3),
    "xlogy_two_ints": lambda m: m.special.xlogy(2, 3),
    "zeta_two_floats": lambda m: m.special.zeta(2., 1.),
    "polynomial_keywords": lambda m: m.special.chebyshev_polynomial_t(x=m.tensor(_T2), n=2),
    "polynomial_number_x": lambda m: m.special.hermite_polynomial_h(0.5, m.tensor([2, 3])),
    "polynomial_tensor_only": lambda m: m.special.chebyshev_polynomial_t(m.tensor(_T2)),
    "softmax_dtype_positional": lambda m: m.special.softmax(m.tensor(_T2), 0, m.float64),
    "softmax_float_dim": lambda m: m.special.softmax(m.tensor(_T2), 0.5),
    "log_softmax_keywords": lambda m: m.special.log_softmax(input=m.tensor(_T2), dim=0,
                                                            dtype=m.float64),
    "logsumexp_keywords": lambda m: m.special.logsumexp(m.tensor(_T2), dim=0, keepdim=True),
    "logit_eps_positional": lambda m: m.special.logit(m.tensor(_T2), 0.1),
    "logit_eps_str": lambda m: m.special.logit(m.tensor(_T2), "a"),
    "polygamma_keywords": lambda m: m.special.polygamma(n=1, input=m.tensor(_T2)),
    "polygamma_tensor_n": lambda m: m.special.polygamma(m.tensor(1), m.tensor(_T2)),
    "polygamma_float_n": lambda m: m.special.polygamma(1.5, m.tensor(_T2)),
    "multigammaln_float_p": lambda m: m.special.multigammaln(m.tensor([2.5]), 2.),
    "round_decimals_positional": lambda m: m.special.round(m.tensor(_T2), 1),
    "round_decimals_float": lambda m: m.special.round(m.tensor(_T2), decimals=1.5),
    "gammainc_number_other": lambda m: m.special.gammainc(m.tensor(_T2), 2.),
    "softmax_tensor_dtype": lambda m: m.special.softmax(m.ones(2), 0, m.ones(2)),
    "log_softmax_dtype_positional": lambda m: m.special.log_softmax(m.ones(2), 0, m.float64),
    "log_softmax_str_dtype": lambda m: m.special.log_softmax(m.ones(2), 0, dtype="a"),
    "logsumexp_str_dim": lambda m: m.special.logsumexp(m.ones(2), "a"),
    "logsumexp_str_keepdim": lambda m: m.special.logsumexp(m.ones(2), 0, "a"),
    "logsumexp_list_dim_keepdim": lambda m: m.special.logsumexp(m.ones(2, 2), [0], True),
    "xlogy_four_arguments_with_float":
        lambda m: m.special.xlogy(m.ones(1), m.ones(1), 2., m.ones(1)),
    "legendre_four_arguments": lambda m: m.special.legendre_polynomial_p(m.ones(1), 2, m.ones(1),
                                                                         m.ones(1)),
}


@pytest.mark.parametrize("name", SPECIAL_CALL_FORMS)
def test_special_call_forms(name):
    same_as_torch(SPECIAL_CALL_FORMS[name], atol=1e-6, rtol=1e-6)


# ============================================================ 7. linalg / fft argument parsing

_LINALG_NAMES = ["cholesky", "cholesky_ex", "cross", "det", "diagonal", "eig", "eigh", "eigvals",
                 "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_solve",
                 "lstsq", "lu", "lu_factor", "lu_solve", "matmul", "matrix_exp", "matrix_power",
                 "multi_dot", "qr", "slogdet", "solve", "solve_ex", "solve_triangular", "svd",
                 "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot", "vector_norm"]
_FFT_NAMES = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "rfft2", "ihfft2",
              "fftn", "irfftn", "hfftn", "fftshift", "ifftshift"]
_BINDING_CALLS = {
    "no_arguments": ((), {}),
    "a_float": ((2.,), {}),
    "a_numpy_array": ((np.ones((2, 2), np.float32),), {}),
    "unknown_keyword": (("T",), {"foo": 1}),
    "seven_tensors": (("T",) * 7, {}),
}
BINDING_ARGUMENT_ERRORS = {f"{mod}.{n}_{c}": (mod, n, c)
                           for mod, names in (("linalg", _LINALG_NAMES), ("fft", _FFT_NAMES))
                           for n in names for c in _BINDING_CALLS}
# the overloaded functions: a non-tensor input is a TypeError (torch's text for pinv and
# matrix_rank, which list their overloads)
BINDING_ARGUMENT_ERRORS.update({f"linalg.{n}_a_float": ("linalg", n, "a_float")
                                for n in ("cond", "matrix_norm", "norm", "pinv",
                                          "matrix_rank")})


@pytest.mark.parametrize("name", BINDING_ARGUMENT_ERRORS)
def test_linalg_and_fft_argument_errors(name):
    mod, fname, call = BINDING_ARGUMENT_ERRORS[name]
    args, kwargs = _BINDING_CALLS[call]

    def run(m):
        real = tuple(m.ones(2, 2) if isinstance(a, str) else a for a in args)
        return getattr(getattr(m, mod), fname)(*real, **kwargs)
    _raises_as_torch(run)


BINDING_CALL_FORMS = {
    "cholesky_input_keyword": lambda m: m.linalg.cholesky(input=m.tensor(_A)),
    "det_A_keyword": lambda m: m.linalg.det(A=m.tensor(_A)),
    "solve_keywords": lambda m: m.linalg.solve(A=m.tensor(_A), B=m.ones(3)),
    "solve_B_not_tensor": lambda m: m.linalg.solve(m.tensor(_A), 2.),
    "solve_B_keyword_not_tensor": lambda m: m.linalg.solve(m.tensor(_A), B=[1., 2., 3.]),
    "lstsq_b_keyword": lambda m: m.linalg.lstsq(m.tensor(_A), b=m.ones(3, 1)).solution,
    "solve_triangular_missing_upper":
        lambda m: m.linalg.solve_triangular(m.tensor(_A), m.ones(3, 1)),
    "solve_triangular_missing_B_and_upper": lambda m: m.linalg.solve_triangular(m.tensor(_A)),
    "solve_triangular_input_keyword": lambda m: m.linalg.solve_triangular(
        input=m.tensor(_A).triu(), B=m.ones(3, 1), upper=True),
    "vector_norm_str_ord_keyword": lambda m: m.linalg.vector_norm(m.ones(3), ord="fro"),
    "vector_norm_none_ord": lambda m: m.linalg.vector_norm(m.ones(3), None),
    "vector_norm_input_keyword": lambda m: m.linalg.vector_norm(input=m.ones(3), ord=1),
    "multi_dot_float": lambda m: m.linalg.multi_dot(2.),
    "matrix_power_n_keyword": lambda m: m.linalg.matrix_power(m.tensor(_A), n=2),
    "eigh_UPLO_positional": lambda m: m.linalg.eigh(m.tensor(_A), "U")[0],
    "rfft_keywords": lambda m: m.fft.rfft(input=m.ones(8), n=6, norm="ortho"),
    "fft2_s_keyword": lambda m: m.fft.fft2(m.ones(2, 3), s=(3, 3)),
    "fftshift_input_keyword": lambda m: m.fft.fftshift(input=m.arange(5)),
}


@pytest.mark.parametrize("name", BINDING_CALL_FORMS)
def test_linalg_and_fft_call_forms(name):
    same_as_torch(BINDING_CALL_FORMS[name], atol=1e-6, rtol=1e-6)


# ============================================================ 8. pinned differences (DIFFERENCES.md)

def test_phase_dependent_eigenvector_loss_has_a_gradient():
    """torch refuses backward through a complex eigh whose loss depends on the eigenvectors'
    phase (a check of the cotangents' values in its backward); torchlike returns jax's
    gradient (the check would need a host read inside the backward program)."""
    import torch
    import torchlike
    h = [[3 + 0j, 0.5 - 0.2j], [0.5 + 0.2j, 2]]
    t = torch.tensor(h, requires_grad=True)
    with pytest.raises(RuntimeError, match="specified up to multiplication by e"):
        torch.linalg.eigh(t)[1].real.sum().backward()
    x = torchlike.tensor(h, requires_grad=True)
    torchlike.linalg.eigh(x)[1].real.sum().backward()
    assert x.grad is not None and bool(x.grad.isfinite().all())


def test_cholesky_solve_gradient_of_the_unread_triangle():
    """torch's cholesky_solve / cholesky_inverse backward multiplies by the whole input factor,
    so the triangle the values never read gets a gradient; torchlike's is zero there (the
    derivative of the values). The read triangle's gradient agrees."""
    import torch
    import torchlike
    L = [[2., 0., 0.], [0.5, 1.5, 0.], [0.1, 0.2, 1.]]
    grads = []
    for m in (torch, torchlike):
        x = m.tensor(L, dtype=m.float64, requires_grad=True)
        (m.cholesky_solve(m.ones(3, 1, dtype=m.float64), x).sum() +
         m.cholesky_inverse(x).sum()).backward()
        grads.append(np.asarray(x.grad.tolist()))
    np.testing.assert_allclose(np.tril(grads[1]), np.tril(grads[0]), rtol=1e-10, atol=1e-12)
    assert np.abs(np.triu(grads[0], 1)).max() > 1e-3
    assert np.all(np.triu(grads[1], 1) == 0)


def test_cholesky_inverse_forward_tangent_is_the_derivative():
    """torch's forward-mode formula for cholesky_inverse is not the derivative of
    (L L^H)^-1 (a torch bug); torchlike's tangent is (checked by finite differences)."""
    import torch
    import torchlike
    L = np.array([[2., 0.], [0.5, 1.5]])
    tangent = np.tril(np.ones((2, 2)))
    f = lambda a: np.linalg.inv(a @ a.T)                  # noqa: E731
    fd = (f(L + 1e-6 * tangent) - f(L - 1e-6 * tangent)) / 2e-6
    outs = []
    for m in (torch, torchlike):
        _, t = m.func.jvp(m.cholesky_inverse, (m.tensor(L),), (m.tensor(tangent),))
        outs.append(np.asarray(t.tolist()))
    np.testing.assert_allclose(outs[1], fd, rtol=1e-5)
    assert np.abs(outs[0] - fd).max() > 1e-2


def test_cholesky_ex_gradient_at_a_failed_factorization():
    """Backward through cholesky_ex's partial factor (info > 0): torch applies its formula to
    LAPACK's partial factor (finite values); torchlike's gradient is NaN there."""
    import torch
    import torchlike
    a = [[1., 2.], [2., 1.]]
    t = torch.tensor(a, dtype=torch.float64, requires_grad=True)
    torch.linalg.cholesky_ex(t).L.sum().backward()
    assert bool(t.grad.isfinite().all())
    x = torchlike.tensor(a, dtype=torchlike.float64, requires_grad=True)
    torchlike.linalg.cholesky_ex(x).L.sum().backward()
    assert bool(x.grad.isnan().all())
