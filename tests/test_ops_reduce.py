"""Issue 3, reductions: one table against torch (tests/oracle.py), plus bad input."""
import numpy as np
import pytest

import torchlike
from oracle import Case, check, check_raises

R = np.random.default_rng(4)
nan, inf = np.nan, np.inf


def f32(*shape):
    return np.asarray(R.standard_normal(shape), np.float32)


def f64(*shape):
    return np.asarray(R.standard_normal(shape), np.float64)


def distinct(*shape):
    """Floats without ties (a permutation), so that tie-breaking never matters."""
    n = int(np.prod(shape))
    return (R.permutation(n).astype(np.float32) * 0.37 - n * 0.1).reshape(shape)


def ints(*shape, lo=-5, hi=6):
    return R.integers(lo, hi, shape).astype(np.int64)


TIES = np.array([[1.0, 3.0, 3.0, 2.0], [2.0, 2.0, 1.0, 2.0]], np.float32)
TIES1 = np.array([1.0, 3.0, 3.0, 2.0, 3.0], np.float32)
NANS = np.array([[1.0, nan, 3.0], [nan, nan, 0.5], [2.0, -1.0, 4.0]], np.float32)
EDGE = np.array([0.0, -0.0, 1.0, -2.5, inf, -inf], np.float32)
I64 = np.array([3, -2, 0, 7, -5, 7], np.int64)
I32 = np.array([[3, -2, 0], [7, -5, 7]], np.int32)
B = np.array([[True, False, True], [True, True, True]])
U8 = np.array([[1, 0, 2], [3, 4, 5]], np.uint8)
E0 = np.zeros((0, 3), np.float32)
S0 = np.array(0.7, np.float32)
ZEROS = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 4.0], [1.0, 2.0, 3.0]], np.float32)

# tie-heavy inputs: torch's CPU median / kthvalue / topk index choice among ties is reproduced
TIE_ROWS = np.array([[1.0, 2.0, 2.0, 3.0, 2.0], [2.0, 1.0, 2.0, 1.0, 0.5],
                     [4.0, 4.0, 4.0, 4.0, 4.0]], np.float32)
TIE_RANDOM = R.integers(0, 3, (4, 13)).astype(np.float32)
TIE_LARGE = np.round(R.standard_normal((2, 300)), 0).astype(np.float32)

NAN_TIES = np.where(R.random((4, 9)) < 0.3, nan, R.integers(0, 3, (4, 9))).astype(np.float32)

CASES = []


def add(*cases):
    CASES.extend(cases)


add(
    # prod
    Case("prod", lambda m, a: m.prod(a), (f32(3, 4),)),
    Case("prod_dim", lambda m, a: a.prod(1), (f32(3, 4),)),
    Case("prod_dim_keepdim", lambda m, a: a.prod(0, keepdim=True), (f32(3, 4),)),
    Case("prod_neg_dim", lambda m, a: a.prod(-1), (f32(2, 3, 4),)),
    Case("prod_zeros", lambda m, a: a.prod(1), (ZEROS,)),
    Case("prod_zeros_full", lambda m, a: a.prod(), (ZEROS[2:] * ZEROS[:1],)),
    Case("prod_one_zero_full", lambda m, a: a.prod(), (np.array([2.0, 0.0, 3.0], np.float32),)),
    Case("prod_int", lambda m, a: a.prod(), (I64,)),
    Case("prod_int32_dim", lambda m, a: a.prod(1), (I32,)),
    Case("prod_bool", lambda m, a: a.prod(), (B,)),
    Case("prod_dtype", lambda m, a: a.prod(dtype=m.float64), (f32(4),)),
    Case("prod_empty", lambda m, a: a.prod(), (E0,)),
    Case("prod_empty_dim", lambda m, a: a.prod(0), (E0,)),
    Case("prod_0dim", lambda m, a: a.prod(), (S0,)),
    Case("prod_0dim_dim", lambda m, a: a.prod(0), (S0,)),
    Case("prod_f64", lambda m, a: m.prod(a, 0), (f64(3, 2),)),
    # var / std
    Case("var", lambda m, a: a.var(), (f32(3, 4),)),
    Case("var_dim", lambda m, a: m.var(a, 1), (f32(3, 4),)),
    Case("var_dims_keepdim", lambda m, a: m.var(a, (0, 2), keepdim=True), (f32(2, 3, 4),)),
    Case("var_unbiased_false", lambda m, a: m.var(a, unbiased=False), (f32(5),)),
    Case("var_positional_unbiased", lambda m, a: m.var(a, False), (f32(5),)),
    Case("var_dim_unbiased", lambda m, a: m.var(a, 0, True), (f32(3, 2),)),
    Case("var_correction0", lambda m, a: m.var(a, dim=1, correction=0), (f32(3, 4),)),
    Case("var_correction2", lambda m, a: a.var(correction=2), (f32(6),)),
    Case("var_correction_too_big", lambda m, a: a.var(correction=3), (f32(2),), grad=False),
    Case("var_single", lambda m, a: a.var(), (f32(1),), grad=False),
    Case("var_f64", lambda m, a: a.var(0), (f64(4, 3),)),
    Case("var_empty", lambda m, a: a.var(), (E0,), grad=False),
    Case("var_0dim", lambda m, a: a.var(correction=0), (S0,)),
    Case("var_nan", lambda m, a: a.var(1), (NANS,), grad=False),
    Case("var_complex", lambda m, a: a.var(), (np.array([1 + 1j, 2, -1j], np.complex64),),
         grad=False),
    Case("std_complex_dim", lambda m, a: a.std(0), (np.array([[1 + 1j, 2], [3j, 1]],
                                                             np.complex128),), grad=False),
    Case("var_half", lambda m, a: a.half().var(), (f32(6),), atol=1e-2, rtol=1e-2),
    Case("std_bf16", lambda m, a: a.bfloat16().std(), (f32(6),), atol=2e-2, rtol=2e-2),
    Case("std", lambda m, a: a.std(), (f32(3, 4),)),
    Case("std_dim", lambda m, a: m.std(a, 0), (f32(3, 4),)),
    Case("std_keepdim", lambda m, a: m.std(a, 1, keepdim=True, correction=0), (f32(3, 4),)),
    Case("std_unbiased_false", lambda m, a: m.std(a, (0, 1), unbiased=False), (f32(3, 4),)),
    Case("std_zero", lambda m, a: a.std(), (np.full(4, 2.0, np.float32),)),
    Case("std_zero_dim", lambda m, a: a.std(1), (np.array([[2.0, 2.0], [1.0, 3.0]], np.float32),)),
    Case("std_f64", lambda m, a: a.std(-1), (f64(2, 5),)),
    Case("std_mean", lambda m, a: m.std_mean(a, 1), (f32(3, 4),)),
    Case("var_mean", lambda m, a: m.var_mean(a, correction=0), (f32(3, 4),)),
    Case("var_mean_keepdim", lambda m, a: m.var_mean(a, 0, keepdim=True), (f32(3, 4),)),
    # max / min full: the gradient is split evenly among ties (and among NaNs)
    Case("max_full", lambda m, a: a.max(), (distinct(3, 4),)),
    Case("max_full_ties", lambda m, a: m.max(a), (TIES,)),
    Case("min_full_ties", lambda m, a: a.min(), (TIES,)),
    Case("max_full_nan", lambda m, a: m.max(a), (NANS,)),
    Case("min_full_nan", lambda m, a: m.min(a), (NANS,)),
    Case("max_full_inf", lambda m, a: a.max(), (EDGE,)),
    Case("max_full_int", lambda m, a: a.max(), (I64,)),
    Case("min_full_bool", lambda m, a: a.min(), (B,)),
    Case("max_full_0dim", lambda m, a: a.max(), (S0,)),
    Case("max_full_f64", lambda m, a: a.max(), (f64(5),)),
    # max / min along a dim: (values, indices), gradient to the selected index only
    Case("max_dim", lambda m, a: a.max(1), (distinct(3, 4),)),
    Case("max_dim_keepdim", lambda m, a: m.max(a, 0, keepdim=True), (distinct(3, 4),)),
    Case("max_dim_kw", lambda m, a: m.max(a, dim=-1), (distinct(2, 3, 4),)),
    Case("max_dim_ties", lambda m, a: a.max(1), (TIES,)),
    Case("max_dim_ties_1d", lambda m, a: a.max(0), (TIES1,)),
    Case("min_dim_ties", lambda m, a: a.min(1), (TIES,)),
    Case("min_dim", lambda m, a: m.min(a, 0), (distinct(3, 4),)),
    Case("max_dim_nan", lambda m, a: a.max(1), (NANS,)),
    Case("min_dim_nan", lambda m, a: a.min(0), (NANS,)),
    Case("max_dim_int", lambda m, a: a.max(1), (I32,)),
    Case("min_dim_bool", lambda m, a: a.min(0), (B,)),
    Case("max_dim_0dim", lambda m, a: a.max(0), (S0,)),
    Case("max_dim_empty_other", lambda m, a: a.max(1), (E0,)),
    Case("max_dim_values_attr", lambda m, a: a.max(1).values * 2, (distinct(3, 4),)),
    Case("max_dim_indices_attr", lambda m, a: a.max(1).indices, (distinct(3, 4),)),
    Case("max_binary", lambda m, a, b: m.max(a, b), (f32(3, 4), f32(4))),
    Case("min_binary_ties", lambda m, a, b: a.min(b), (TIES1, TIES1[::-1].copy())),
    Case("max_binary_int", lambda m, a, b: m.max(a, b), (I64, I64[::-1].copy())),
    # amax / amin
    Case("amax", lambda m, a: a.amax(), (distinct(3, 4),)),
    Case("amax_dim", lambda m, a: m.amax(a, 1), (TIES,)),
    Case("amin_dim", lambda m, a: m.amin(a, 1), (TIES,)),
    Case("amax_full_ties", lambda m, a: a.amax(), (TIES,)),
    Case("amin_dims_keepdim", lambda m, a: m.amin(a, (0, 1), keepdim=True), (TIES,)),
    Case("amax_dim0_keepdim", lambda m, a: a.amax(0, keepdim=True), (TIES,)),
    Case("amax_3d", lambda m, a: a.amax((0, 2)), (np.round(f32(2, 3, 4)),)),
    Case("amax_nan", lambda m, a: a.amax(1), (NANS,)),
    Case("amax_int", lambda m, a: a.amax(0), (I32,)),
    Case("amin_bool", lambda m, a: a.amin(1), (B,)),
    Case("amax_0dim", lambda m, a: a.amax(), (S0,)),
    Case("amax_empty_dim", lambda m, a: a.amax(1), (E0,)),
    Case("aminmax", lambda m, a: m.aminmax(a), (TIES,)),
    Case("aminmax_dim", lambda m, a: a.aminmax(dim=1), (TIES,)),
    # argmax / argmin
    Case("argmax", lambda m, a: a.argmax(), (distinct(3, 4),)),
    Case("argmax_dim", lambda m, a: m.argmax(a, 1), (distinct(3, 4),)),
    Case("argmax_keepdim", lambda m, a: m.argmax(a, 0, keepdim=True), (distinct(3, 4),)),
    Case("argmax_full_keepdim", lambda m, a: m.argmax(a, keepdim=True), (distinct(3, 4),)),
    Case("argmax_ties", lambda m, a: a.argmax(1), (TIES,)),
    Case("argmin_ties", lambda m, a: a.argmin(1), (TIES,)),
    Case("argmin", lambda m, a: m.argmin(a), (TIES,)),
    Case("argmax_nan", lambda m, a: a.argmax(1), (NANS,)),
    Case("argmin_nan", lambda m, a: a.argmin(0), (NANS,)),
    Case("argmax_nan_full", lambda m, a: a.argmax(), (NANS,)),
    Case("argmax_int", lambda m, a: a.argmax(), (I64,)),
    Case("argmax_0dim", lambda m, a: a.argmax(), (S0,)),
    Case("argmax_0dim_dim", lambda m, a: a.argmax(0), (S0,)),
    Case("argmax_requires_grad", lambda m, a: (a * 2).argmax(0), (f32(4),)),
    # median
    Case("median_full", lambda m, a: a.median(), (distinct(3, 5),)),
    Case("median_full_even", lambda m, a: m.median(a), (distinct(4),)),
    Case("median_full_ties", lambda m, a: a.median(), (TIES,)),
    Case("median_full_nan", lambda m, a: a.median(), (NANS,)),
    Case("median_full_int", lambda m, a: a.median(), (I64,)),
    Case("median_full_empty", lambda m, a: a.median(), (E0,), grad=False),
    Case("median_full_0dim", lambda m, a: a.median(), (S0,)),
    Case("median_dim", lambda m, a: a.median(1), (distinct(3, 5),)),
    Case("median_dim_even", lambda m, a: m.median(a, 0, keepdim=True), (distinct(4, 3),)),
    Case("median_dim_nan", lambda m, a: a.median(1), (NANS,)),
    Case("median_dim_int", lambda m, a: a.median(1), (I32,), grad=False),
    Case("median_dim_ties", lambda m, a: a.median(1), (TIE_ROWS,)),
    Case("median_dim_ties_random", lambda m, a: a.median(1), (TIE_RANDOM,)),
    Case("median_dim_ties_dim0", lambda m, a: a.median(0, keepdim=True), (TIE_RANDOM,)),
    Case("median_dim_0dim", lambda m, a: a.median(0), (S0,)),
    # nanmedian
    Case("nanmedian_full", lambda m, a: a.nanmedian(), (NANS,)),
    Case("nanmedian_full_no_nan", lambda m, a: m.nanmedian(a), (distinct(3, 4),)),
    Case("nanmedian_full_all_nan", lambda m, a: a.nanmedian(), (np.full(3, nan, np.float32),)),
    Case("nanmedian_full_ties", lambda m, a: a.nanmedian(), (TIES,)),
    Case("nanmedian_dim", lambda m, a: a.nanmedian(1), (NANS,)),
    Case("nanmedian_dim0_keepdim", lambda m, a: m.nanmedian(a, 0, keepdim=True), (NANS,)),
    Case("nanmedian_ties_random", lambda m, a: a.nanmedian(1), (NAN_TIES,)),
    Case("nanmedian_all_nan_rows", lambda m, a: a.nanmedian(1),
         (np.full((2, 7), nan, np.float32),)),
    Case("nanmedian_all_nan_long", lambda m, a: a.nanmedian(0), (np.full(13, nan, np.float32),)),
    Case("nanmedian_int", lambda m, a: a.nanmedian(1), (I32,), grad=False),
    Case("nanmedian_int_full", lambda m, a: a.nanmedian(), (I64,)),
    Case("nanmedian_0dim", lambda m, a: a.nanmedian(0), (S0,)),
    # kthvalue
    Case("kthvalue", lambda m, a: a.kthvalue(2), (distinct(3, 5),)),
    Case("kthvalue_dim", lambda m, a: m.kthvalue(a, 3, 0), (distinct(4, 3),)),
    Case("kthvalue_keepdim", lambda m, a: m.kthvalue(a, 1, dim=1, keepdim=True),
         (distinct(3, 4),)),
    Case("kthvalue_last", lambda m, a: a.kthvalue(5), (distinct(5),)),
    Case("kthvalue_int", lambda m, a: a.kthvalue(2, 0), (np.array([5, 1, 3, 2], np.int64),)),
    Case("kthvalue_ties", lambda m, a: a.kthvalue(3, 1), (TIE_ROWS,)),
    Case("kthvalue_ties_random", lambda m, a: a.kthvalue(4, 1), (TIE_RANDOM,)),
    Case("kthvalue_ties_dim0", lambda m, a: m.kthvalue(a, 2, 0), (TIE_RANDOM,)),
    Case("kthvalue_nan", lambda m, a: a.kthvalue(3, 1), (NANS,)),
    Case("kthvalue_0dim", lambda m, a: a.kthvalue(1), (S0,)),
    # mode
    Case("mode", lambda m, a: a.mode(), (np.array([2.0, 1.0, 2.0, 1.0, 3.0], np.float32),)),
    Case("mode_rows", lambda m, a: m.mode(a, 1), (np.array([[1., 2, 2, 1], [3, 3, 0, 0],
                                                            [5, 4, 4, 4]], np.float32),)),
    Case("mode_dim0_keepdim", lambda m, a: m.mode(a, 0, keepdim=True),
         (np.array([[1., 2], [3, 0], [1, 0]], np.float32),)),
    Case("mode_all_distinct", lambda m, a: a.mode(1), (np.array([[1., 2], [3, 0]], np.float32),)),
    Case("mode_int", lambda m, a: a.mode(), (np.array([1, 1, 2, 2, 2, 1, 0], np.int64),)),
    Case("mode_random_int", lambda m, a: a.mode(1), (ints(4, 9, lo=0, hi=4),)),
    Case("mode_bool", lambda m, a: a.mode(), (np.array([True, False, True, False]),)),
    Case("mode_inf", lambda m, a: a.mode(), (np.array([inf, 1.0, inf, -inf], np.float32),)),
    Case("mode_0dim", lambda m, a: a.mode(), (S0,)),
    # logsumexp
    Case("logsumexp", lambda m, a: m.logsumexp(a, 1), (f32(3, 4),)),
    Case("logsumexp_keepdim", lambda m, a: a.logsumexp(0, keepdim=True), (f32(3, 4),)),
    Case("logsumexp_dims", lambda m, a: m.logsumexp(a, (0, 1)), (f32(3, 4),)),
    Case("logsumexp_big", lambda m, a: m.logsumexp(a * 100, 1), (f32(3, 4),)),
    Case("logsumexp_inf", lambda m, a: m.logsumexp(a, 1),
         (np.array([[inf, 1.0], [-inf, -inf], [-inf, 2.0]], np.float32),)),
    Case("logsumexp_int", lambda m, a: m.logsumexp(a, 0), (I64,)),
    Case("logsumexp_f64", lambda m, a: m.logsumexp(a, -1), (f64(2, 3),)),
    Case("logsumexp_empty", lambda m, a: m.logsumexp(a, 0), (E0,)),
    Case("logsumexp_0dim", lambda m, a: m.logsumexp(a, 0), (S0,)),
    # cumsum / cumprod
    Case("cumsum", lambda m, a: m.cumsum(a, 1), (f32(3, 4),)),
    Case("cumsum_dim0", lambda m, a: a.cumsum(0), (f32(3, 4),)),
    Case("cumsum_neg", lambda m, a: a.cumsum(-1), (f32(2, 3, 4),)),
    Case("cumsum_int", lambda m, a: a.cumsum(0), (I64,)),
    Case("cumsum_int32", lambda m, a: a.cumsum(1), (I32,)),
    Case("cumsum_bool", lambda m, a: a.cumsum(1), (B,)),
    Case("cumsum_dtype", lambda m, a: m.cumsum(a, 0, dtype=m.float64), (f32(4),)),
    Case("cumsum_0dim", lambda m, a: a.cumsum(0), (S0,)),
    Case("cumsum_empty", lambda m, a: a.cumsum(0), (E0,)),
    Case("cumsum_half", lambda m, a: a.half().cumsum(0), (f32(6),), atol=1e-2, rtol=1e-2),
    Case("prod_half", lambda m, a: a.half().prod(), (f32(6),), atol=1e-2, rtol=1e-2),
    Case("amax_half", lambda m, a: a.half().amax(), (TIES,)),
    Case("max_dim_bf16", lambda m, a: a.bfloat16().max(1), (TIES,)),
    Case("sort_half", lambda m, a: a.half().sort(), (distinct(8),)),
    Case("logsumexp_half", lambda m, a: a.half().logsumexp(0), (f32(6),), atol=1e-2,
         rtol=1e-2),
    Case("cumsum_inplace", lambda m, a: a.clone().cumsum_(0), (f32(4),)),
    Case("cumprod", lambda m, a: m.cumprod(a, 1), (f32(3, 4),)),
    Case("cumprod_zeros", lambda m, a: a.cumprod(1), (ZEROS,)),
    Case("cumprod_int", lambda m, a: a.cumprod(0), (I64,)),
    Case("cumprod_bool", lambda m, a: a.cumprod(0), (B,)),
    Case("cumprod_inplace", lambda m, a: a.clone().cumprod_(0), (f32(4),)),
    # cummax / cummin: ties give the last index; NaN is taken and kept
    Case("cummax", lambda m, a: m.cummax(a, 1), (distinct(3, 4),)),
    Case("cummax_ties", lambda m, a: a.cummax(0), (TIES1,)),
    Case("cummax_rows_ties", lambda m, a: a.cummax(1), (TIES,)),
    Case("cummin_ties", lambda m, a: a.cummin(1), (TIES,)),
    Case("cummax_nan", lambda m, a: a.cummax(0),
         (np.array([1.0, 3.0, 3.0, nan, 2.0, 5.0, nan, 7.0], np.float32),)),
    Case("cummin_nan", lambda m, a: a.cummin(1), (NANS,)),
    Case("cummax_int", lambda m, a: a.cummax(0), (I64,)),
    Case("cummax_0dim", lambda m, a: a.cummax(0), (S0,)),
    Case("cummax_empty", lambda m, a: a.cummax(0), (E0,)),
    # all / any / count_nonzero
    Case("all", lambda m, a: a.all(), (B,)),
    Case("all_dim", lambda m, a: m.all(a, 1), (B,)),
    Case("any_dim", lambda m, a: m.any(a, 0), (B,)),
    Case("any_keepdim", lambda m, a: a.any(1, keepdim=True), (B,)),
    Case("all_float", lambda m, a: a.all(), (ZEROS,)),
    Case("any_float_dim", lambda m, a: a.any(1), (ZEROS,)),
    Case("all_int", lambda m, a: m.all(a), (I64,)),
    Case("all_uint8", lambda m, a: a.all(), (U8,)),
    Case("any_uint8_dim", lambda m, a: a.any(0), (U8,)),
    Case("all_dims", lambda m, a: m.all(a, (0, 1)), (B,)),
    Case("all_empty", lambda m, a: a.all(), (E0,)),
    Case("any_empty", lambda m, a: a.any(), (E0,)),
    Case("any_nan", lambda m, a: a.any(), (np.array([0.0, nan], np.float32),)),
    Case("all_0dim", lambda m, a: a.all(), (S0,)),
    Case("count_nonzero", lambda m, a: m.count_nonzero(a), (ZEROS,)),
    Case("count_nonzero_dim", lambda m, a: a.count_nonzero(1), (ZEROS,)),
    Case("count_nonzero_dims", lambda m, a: a.count_nonzero((0, 1)), (ZEROS,)),
    Case("count_nonzero_int", lambda m, a: m.count_nonzero(a), (I64,)),
    Case("count_nonzero_bool", lambda m, a: m.count_nonzero(a, 0), (B,)),
    Case("count_nonzero_nan", lambda m, a: m.count_nonzero(a), (NANS,)),
    # sort / argsort / msort
    Case("sort", lambda m, a: a.sort(), (distinct(3, 4),)),
    Case("sort_dim0", lambda m, a: m.sort(a, 0), (distinct(3, 4),)),
    Case("sort_descending", lambda m, a: m.sort(a, descending=True), (distinct(3, 4),)),
    Case("sort_positional_desc", lambda m, a: a.sort(0, True), (distinct(3, 4),)),
    Case("sort_ties", lambda m, a: a.sort(), (TIES,)),
    Case("sort_ties_desc", lambda m, a: a.sort(descending=True), (TIES,)),
    Case("sort_stable", lambda m, a: m.sort(a, stable=True), (TIES,)),
    Case("sort_stable_desc", lambda m, a: m.sort(a, stable=True, descending=True), (TIES,)),
    Case("sort_nan", lambda m, a: a.sort(1), (NANS,)),
    Case("sort_nan_desc", lambda m, a: a.sort(1, descending=True), (NANS,)),
    Case("sort_inf", lambda m, a: a.sort(), (EDGE,)),
    Case("sort_int", lambda m, a: a.sort(), (I64,)),
    Case("sort_int_desc", lambda m, a: m.sort(a, 1, True), (I32,)),
    Case("sort_bool", lambda m, a: a.sort(1), (B,)),
    Case("sort_0dim", lambda m, a: a.sort(), (S0,)),
    Case("sort_empty", lambda m, a: a.sort(0), (E0,)),
    Case("sort_ties_large_stable", lambda m, a: a.sort(stable=True), (TIE_LARGE,)),
    Case("sort_ties_large_stable_desc", lambda m, a: a.sort(descending=True, stable=True),
         (TIE_LARGE,)),
    Case("sort_ties_16", lambda m, a: a.sort(), (TIE_LARGE[:, :16],)),
    Case("sort_large_no_ties", lambda m, a: a.sort(descending=True), (distinct(2, 300),)),
    Case("sort_neg_zero", lambda m, a: a.sort(), (np.array([0.0, -0.0, 0.0], np.float32),)),
    Case("sort_bool_desc", lambda m, a: a.sort(descending=True),
         (np.array([False, True, False, True]),)),
    Case("sort_f64", lambda m, a: a.sort(), (f64(6),)),
    Case("argsort", lambda m, a: a.argsort(), (distinct(3, 4),)),
    Case("argsort_desc", lambda m, a: m.argsort(a, 0, descending=True), (distinct(3, 4),)),
    Case("argsort_ties", lambda m, a: m.argsort(a, stable=True), (TIES,)),
    Case("argsort_ties_desc", lambda m, a: a.argsort(descending=True), (TIES,)),
    Case("argsort_int", lambda m, a: a.argsort(), (I64,)),
    Case("argsort_nan", lambda m, a: a.argsort(1), (NANS,)),
    Case("msort", lambda m, a: m.msort(a), (distinct(3, 4),)),
    # topk
    Case("topk", lambda m, a: a.topk(2), (distinct(3, 5),)),
    Case("topk_smallest", lambda m, a: m.topk(a, 3, largest=False), (distinct(3, 5),)),
    Case("topk_dim0", lambda m, a: m.topk(a, 2, dim=0), (distinct(4, 3),)),
    Case("topk_all", lambda m, a: a.topk(5), (distinct(5),)),
    Case("topk_zero", lambda m, a: a.topk(0), (distinct(5),)),
    Case("topk_int", lambda m, a: a.topk(3), (np.array([5, 1, 9, 3, 2], np.int64),)),
    Case("topk_inf", lambda m, a: a.topk(3), (EDGE[2:],)),
    Case("topk_ties", lambda m, a: a.topk(2, 1), (TIE_ROWS,)),
    Case("topk_ties_smallest", lambda m, a: a.topk(3, 1, largest=False), (TIE_ROWS,)),
    Case("topk_ties_random", lambda m, a: a.topk(5), (TIE_RANDOM,)),
    Case("topk_ties_random_small", lambda m, a: m.topk(a, 4, largest=False), (TIE_RANDOM,)),
    Case("topk_ties_dim0", lambda m, a: a.topk(3, 0), (TIE_RANDOM,)),
    Case("topk_nan", lambda m, a: a.topk(2, 1), (NANS,)),
    Case("topk_nan_smallest", lambda m, a: a.topk(2, 1, largest=False), (NANS,)),
    Case("topk_one_large", lambda m, a: a.topk(1), (TIE_LARGE,)),
    Case("topk_one_large_smallest", lambda m, a: a.topk(1, largest=False), (TIE_LARGE,)),
    Case("topk_unsorted", lambda m, a: a.topk(4, sorted=False), (distinct(3, 9),)),
    Case("topk_unsorted_ties", lambda m, a: m.topk(a, 5, sorted=False), (TIE_RANDOM,)),
    Case("topk_unsorted_smallest", lambda m, a: a.topk(3, largest=False, sorted=False),
         (TIE_ROWS,)),
    Case("topk_unsorted_large", lambda m, a: a.topk(1, sorted=False), (TIE_LARGE,)),
    Case("topk_0dim", lambda m, a: a.topk(1), (S0,)),
    # keepdim=True without dim keeps every dim (size 1); all / any with dim=() reduce nothing
    Case("var_keepdim_nodim", lambda m, a: a.var(keepdim=True), (f32(2, 3),)),
    Case("std_keepdim_nodim", lambda m, a: m.std(a, keepdim=True, correction=0), (f32(2, 3),)),
    Case("var_mean_keepdim_nodim", lambda m, a: m.var_mean(a, keepdim=True), (f32(2, 3),)),
    Case("amax_keepdim_nodim", lambda m, a: a.amax(keepdim=True), (TIES,)),
    Case("amin_keepdim_nodim", lambda m, a: m.amin(a, keepdim=True), (TIES,)),
    Case("aminmax_keepdim_nodim", lambda m, a: m.aminmax(a, keepdim=True), (TIES,)),
    Case("all_keepdim_nodim", lambda m, a: a.all(keepdim=True), (B,)),
    Case("any_keepdim_nodim", lambda m, a: m.any(a, keepdim=True), (B,)),
    Case("all_empty_dims", lambda m, a: m.all(a, dim=()), (ZEROS,)),
    Case("nansum_keepdim_nodim", lambda m, a: m.nansum(a, keepdim=True), (NANS,)),
    Case("nanmean_keepdim_nodim", lambda m, a: m.nanmean(a, keepdim=True), (NANS,)),
    Case("amax_empty_dims", lambda m, a: a.amax(dim=()), (TIES,)),
    Case("var_empty_dims", lambda m, a: a.var(dim=()), (f32(2, 3),), grad=False),
    # out=
    Case("max_dim_out", lambda m, a: m.max(a, 1, out=(m.zeros(3), m.zeros(3, dtype=m.long))),
         (distinct(3, 4),), grad=False),
    Case("sort_out", lambda m, a: m.sort(a, out=(m.zeros(3, 4), m.zeros(3, 4, dtype=m.long))),
         (distinct(3, 4),), grad=False),
    Case("cumsum_out", lambda m, a: m.cumsum(a, 0, out=m.zeros(6, dtype=m.long)), (I64,),
         grad=False),
    Case("amax_out", lambda m, a: m.amax(a, 1, out=m.zeros(2)), (TIES,), grad=False),
    Case("std_out_f64", lambda m, a: m.std(a, 1, out=m.zeros(3, dtype=m.float64)),
         (f32(3, 4),), grad=False),
    Case("prod_out", lambda m, a: m.prod(a, 0, out=m.zeros((), dtype=m.long)), (I64,),
         grad=False),
    Case("cumsum_out_dtype", lambda m, a: m.cumsum(a, 0, out=m.zeros(3, dtype=m.long)),
         (np.array([0.6, 0.6, 1.7], np.float32),), grad=False),
    Case("cumprod_out_f64", lambda m, a: m.cumprod(a, 0, out=m.zeros(3, dtype=m.float64)),
         (f32(3),), grad=False),
    Case("argmax_out", lambda m, a: m.argmax(a, 1, out=m.zeros(3, dtype=m.long)),
         (distinct(3, 4),), grad=False),
    Case("logsumexp_out", lambda m, a: m.logsumexp(a, 1, out=m.zeros(3)), (f32(3, 4),),
         grad=False),
    Case("topk_out", lambda m, a: m.topk(a, 2, out=(m.zeros(3, 2), m.zeros(3, 2,
                                                                        dtype=m.long))),
         (distinct(3, 4),), grad=False),
    # quantile / nanquantile
    Case("quantile", lambda m, a: m.quantile(a, 0.3), (distinct(3, 5),)),
    Case("quantile_dim", lambda m, a: a.quantile(0.75, dim=1), (distinct(3, 5),)),
    Case("quantile_dim_keepdim", lambda m, a: m.quantile(a, 0.5, 0, True), (distinct(4, 3),)),
    Case("quantile_q_tensor", lambda m, a, q: m.quantile(a, q, dim=1),
         (distinct(3, 5), np.array([0.0, 0.1, 0.5, 1.0], np.float32))),
    Case("quantile_q_tensor_keepdim", lambda m, a, q: m.quantile(a, q, dim=1, keepdim=True),
         (distinct(3, 5), np.array([0.25, 0.9], np.float32))),
    Case("quantile_q_tensor_full_keepdim", lambda m, a, q: m.quantile(a, q, keepdim=True),
         (distinct(2, 3), np.array([0.25, 0.9], np.float32))),
    Case("quantile_q_0dim", lambda m, a, q: m.quantile(a, q, dim=0), (distinct(4, 3),
                                                                      np.array(0.4, np.float32))),
    Case("quantile_ties", lambda m, a: a.quantile(0.4, dim=1), (TIE_ROWS,)),
    Case("quantile_nan", lambda m, a: a.quantile(0.5, dim=1), (NANS,)),
    Case("quantile_f64", lambda m, a: a.quantile(0.35), (f64(7),)),
    Case("quantile_0dim", lambda m, a: m.quantile(a, 0.5, dim=0, keepdim=True), (S0,)),
    Case("nanquantile", lambda m, a: m.nanquantile(a, 0.5, dim=1), (NANS,)),
    Case("nanquantile_full", lambda m, a: a.nanquantile(0.8), (NANS,)),
    Case("nanquantile_all_nan", lambda m, a: m.nanquantile(a, 0.5, dim=1),
         (np.array([[nan, nan], [1.0, nan]], np.float32),)),
)
for _interp in ("lower", "higher", "midpoint", "nearest"):
    add(Case(f"quantile_{_interp}", lambda m, a, i=_interp: m.quantile(
        a, m.tensor([0.1, 0.5, 0.625, 0.9]), dim=1, interpolation=i), (distinct(2, 9),)),
        Case(f"nanquantile_{_interp}", lambda m, a, i=_interp: m.nanquantile(
            a, 0.5, dim=1, interpolation=i), (NANS,)))
add(
    # logcumsumexp
    Case("logcumsumexp", lambda m, a: m.logcumsumexp(a, 1), (f32(3, 4),)),
    Case("logcumsumexp_dim0", lambda m, a: a.logcumsumexp(0), (f64(3, 4),)),
    Case("logcumsumexp_big", lambda m, a: a.logcumsumexp(-1), (f32(2, 5) * 100,)),
    Case("logcumsumexp_inf", lambda m, a: a.logcumsumexp(0),
         (np.array([-inf, -inf, 1.0, inf, 2.0], np.float32),), grad=False),
    Case("logcumsumexp_0dim", lambda m, a: a.logcumsumexp(0), (S0,)),
    Case("logcumsumexp_empty", lambda m, a: a.logcumsumexp(0), (E0,)),
    # nansum / nanmean
    Case("nansum", lambda m, a: m.nansum(a), (NANS,)),
    Case("nansum_dim", lambda m, a: a.nansum(1), (NANS,)),
    Case("nansum_int", lambda m, a: m.nansum(a), (I64,)),
    Case("nanmean", lambda m, a: m.nanmean(a), (NANS,)),
    Case("nanmean_dim", lambda m, a: a.nanmean(0, keepdim=True), (NANS,)),
    # unique (eager): sorted, inverse, counts, dim
    Case("unique", lambda m, a: m.unique(a), (np.array([3, 1, 2, 1, 3], np.int64),)),
    Case("unique_inverse_counts", lambda m, a: m.unique(a, return_inverse=True,
                                                        return_counts=True),
         (np.array([3, 1, 2, 1, 3], np.int64),)),
    Case("unique_unsorted", lambda m, a: m.unique(a, sorted=False, return_counts=True),
         (np.array([3, 1, 2, 1, 3], np.int64),)),
    Case("unique_float_2d", lambda m, a: a.unique(return_inverse=True),
         (np.array([[1.5, 0.0], [1.5, -2.0]], np.float32),), grad=False),
    Case("unique_nan", lambda m, a: m.unique(a, return_counts=True),
         (np.array([3.0, 1.0, nan, 1.0, nan], np.float32),), grad=False),
    Case("unique_bool", lambda m, a: m.unique(a), (B,)),
    Case("unique_dim0", lambda m, a: m.unique(a, dim=0, return_inverse=True,
                                              return_counts=True),
         (np.array([[3, 1], [3, 1], [0, 2]], np.int64),)),
    Case("unique_dim1", lambda m, a: m.unique(a, dim=1),
         (np.array([[3, 1, 3], [0, 2, 0]], np.int64),)),
    Case("unique_empty", lambda m, a: m.unique(a, return_counts=True), (E0,), grad=False),
    Case("unique_random", lambda m, a: m.unique(a, return_inverse=True), (ints(20),)),
    Case("unique_requires_grad", lambda m, a: m.unique(a).requires_grad, (f32(4),),
         grad=False),
    # unique_consecutive (eager)
    Case("unique_consecutive", lambda m, a: m.unique_consecutive(a, return_inverse=True,
                                                                 return_counts=True),
         (np.array([1, 1, 2, 2, 3, 1, 1, 2], np.int64),)),
    Case("unique_consecutive_plain", lambda m, a: a.unique_consecutive(),
         (np.array([[1, 1], [2, 2]], np.int64),)),
    Case("unique_consecutive_float", lambda m, a: m.unique_consecutive(a, return_counts=True),
         (np.array([1.0, 1.0, nan, nan, 2.0], np.float32),), grad=False),
    Case("unique_consecutive_dim0", lambda m, a: m.unique_consecutive(
        a, dim=0, return_inverse=True, return_counts=True),
        (np.array([[1, 2], [1, 2], [3, 4], [1, 2]], np.int64),)),
    Case("unique_consecutive_dim1", lambda m, a: m.unique_consecutive(a, dim=1),
         (np.array([[1, 1, 2], [3, 3, 4]], np.int64),)),
    Case("unique_consecutive_empty", lambda m, a: m.unique_consecutive(a, return_counts=True),
         (np.zeros(0, np.int64),)),
    Case("unique_consecutive_requires_grad", lambda m, a: a.unique_consecutive().requires_grad,
         (f32(4),), grad=False),
    # bincount (eager length)
    Case("bincount", lambda m, a: m.bincount(a), (np.array([1, 1, 3, 0, 5], np.int64),)),
    Case("bincount_minlength", lambda m, a: a.bincount(minlength=8),
         (np.array([1, 1, 3], np.int64),)),
    Case("bincount_minlength_small", lambda m, a: a.bincount(minlength=2),
         (np.array([1, 1, 3], np.int64),)),
    Case("bincount_weights", lambda m, a, w: m.bincount(a, w),
         (np.array([1, 1, 3, 0], np.int64), f32(4)), grad=False),
    Case("bincount_weights_f64", lambda m, a, w: m.bincount(a, weights=w),
         (np.array([1, 1, 3, 0], np.int64), f64(4)), grad=False),
    Case("bincount_weights_int", lambda m, a, w: m.bincount(a, weights=w),
         (np.array([1, 1, 3, 0], np.int64), np.array([1, 2, 3, 4], np.int64))),
    Case("bincount_int32", lambda m, a: m.bincount(a), (np.array([2, 0, 2], np.int32),)),
    Case("bincount_uint8", lambda m, a: m.bincount(a), (np.array([2, 0, 2], np.uint8),)),
    Case("bincount_empty", lambda m, a: m.bincount(a), (np.zeros(0, np.int64),)),
    Case("bincount_empty_minlength", lambda m, a: m.bincount(a, minlength=3),
         (np.zeros(0, np.int64),)),
    Case("bincount_random", lambda m, a: m.bincount(a), (ints(50, lo=0, hi=10),)),
    # histc
    Case("histc", lambda m, a: m.histc(a, 4, min=0, max=3),
         (np.array([1.0, 1.0, 3.0, 0.2, -1.0, 4.0], np.float32),)),
    Case("histc_auto_range", lambda m, a: a.histc(10), (f32(100),)),
    Case("histc_default_bins", lambda m, a: m.histc(a), (f32(200),)),
    Case("histc_constant", lambda m, a: m.histc(a, 4), (np.ones(3, np.float32),)),
    Case("histc_f64", lambda m, a: m.histc(a, 5, -2, 2), (f64(50),)),
    Case("histc_empty", lambda m, a: m.histc(a, 3), (np.zeros(0, np.float32),)),
    Case("histc_nan", lambda m, a: m.histc(a, 4, 0, 3), (np.array([1.0, nan, 2.0], np.float32),)),
    Case("histc_2d", lambda m, a: a.histc(6, -1, 1), (f32(5, 6),)),
)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_reduce_against_torch(case):
    check(case)


@pytest.mark.parametrize("case", [c for c in CASES if c.grad][::5], ids=str)
def test_reduce_autograd_grad(case):
    check(case, autograd_grad=True)


def test_table_counts():
    names = {c.name for c in CASES}
    assert len(names) == len(CASES), "duplicate case names"
    assert len(CASES) >= 200


RAISES = [
    ("max_empty", lambda m, a: a.max(), (E0,)),
    ("max_empty_dim", lambda m, a: a.max(0), (E0,)),
    ("amax_empty", lambda m, a: a.amax(), (E0,)),
    ("amin_empty_dim", lambda m, a: a.amin(0), (E0,)),
    ("argmin_bool", lambda m, a: a.argmin(1), (B,)),
    ("argmax_bool", lambda m, a: a.argmax(), (B,)),
    ("argmax_empty", lambda m, a: a.argmax(), (E0,)),
    ("max_bad_dim", lambda m, a: a.max(2), (f32(3, 4),)),
    ("max_scalar_other", lambda m, a: m.max(a, 1.0), (f32(3),)),
    ("argmax_bad_dim", lambda m, a: a.argmax(-3), (f32(3, 4),)),
    ("sum_bad_dim", lambda m, a: m.prod(a, 5), (f32(3),)),
    ("prod_tuple_dim", lambda m, a: m.prod(a, (0,)), (f32(3),)),
    ("std_int", lambda m, a: a.std(), (I64,)),
    ("var_int", lambda m, a: m.var(a, 0), (I64,)),
    ("var_dup_dims", lambda m, a: m.var(a, (0, 0)), (f32(3, 4),)),
    ("kthvalue_k_big", lambda m, a: a.kthvalue(6), (f32(5),)),
    ("kthvalue_k_zero", lambda m, a: a.kthvalue(0), (f32(5),)),
    ("topk_k_big", lambda m, a: a.topk(6), (f32(5),)),
    ("sort_bad_dim", lambda m, a: a.sort(2), (f32(3, 4),)),
    ("cumsum_bad_dim", lambda m, a: a.cumsum(2), (f32(3, 4),)),
    ("cummax_bad_dim", lambda m, a: a.cummax(-3), (f32(3, 4),)),
    ("logsumexp_no_dim", lambda m, a: m.logsumexp(a), (f32(3),)),
    ("logsumexp_bad_dim", lambda m, a: m.logsumexp(a, 1), (f32(3),)),
    ("nanmedian_empty_dim", lambda m, a: a.nanmedian(0), (E0,)),
    ("median_empty_dim", lambda m, a: a.median(0), (E0,)),
    ("all_bad_dim", lambda m, a: a.all(3), (B,)),
    ("bincount_float", lambda m, a: m.bincount(a), (f32(3),)),
    ("bincount_negative", lambda m, a: m.bincount(a), (np.array([-1, 1], np.int64),)),
    ("bincount_2d", lambda m, a: m.bincount(a), (np.array([[1, 1]], np.int64),)),
    ("bincount_weights_len", lambda m, a, w: m.bincount(a, w),
     (np.array([1, 1], np.int64), f32(3))),
    ("bincount_minlength_neg", lambda m, a: m.bincount(a, minlength=-1),
     (np.array([1, 1], np.int64),)),
    ("histc_int", lambda m, a: m.histc(a), (I64,)),
    ("histc_bins", lambda m, a: m.histc(a, -1), (f32(3),)),
    ("histc_min_gt_max", lambda m, a: m.histc(a, 3, 2, 1), (f32(3),)),
    ("unique_bad_dim", lambda m, a: m.unique(a, dim=2), (f32(3, 4),)),
    ("quantile_int", lambda m, a: m.quantile(a, 0.5), (I64,)),
    ("quantile_q_range", lambda m, a: m.quantile(a, 1.5), (f32(3),)),
    ("quantile_q_tensor_range", lambda m, a, q: m.quantile(a, q), (f32(3),
                                                                 np.array([1.5], np.float32))),
    ("quantile_q_dtype", lambda m, a, q: m.quantile(a, q), (f32(3), np.array([0.5]))),
    ("quantile_q_2d", lambda m, a, q: m.quantile(a, q), (f32(3),
                                                       np.array([[0.5]], np.float32))),
    ("quantile_empty", lambda m, a: m.quantile(a, 0.5), (np.zeros(0, np.float32),)),
    ("quantile_interp", lambda m, a: m.quantile(a, 0.5, interpolation="foo"), (f32(3),)),
    ("quantile_bad_dim", lambda m, a: m.quantile(a, 0.5, dim=2), (f32(3, 2),)),
    ("logcumsumexp_int", lambda m, a: m.logcumsumexp(a, 0), (I64,)),
    ("topk_bool", lambda m, a: a.topk(2), (np.array([False, True, True]),)),
    ("kthvalue_bool", lambda m, a: a.kthvalue(2), (np.array([True, False, True]),)),
    ("max_out_requires_grad", lambda m, a: m.amax(a.requires_grad_(), out=m.zeros(())),
     (f32(3),)),
    ("sort_out_not_pair", lambda m, a: m.sort(a, out=m.zeros(3)), (f32(3),)),
    ("nanmean_int", lambda m, a: m.nanmean(a), (I64,)),
]


# torch's message fragment, where torchlike words it the same way
MATCH = {
    "max_empty": "Expected reduction dim to be specified for input.numel() == 0",
    "max_empty_dim": "Expected reduction dim 0 to have non-zero size",
    "amax_empty": "Expected reduction dim to be specified for input.numel() == 0",
    "argmax_empty": "Expected reduction dim to be specified for input.numel() == 0",
    "argmin_bool": "does not support bool input",
    "max_bad_dim": "Dimension out of range (expected to be in range of [-2, 1], but got 2)",
    "std_int": "std and var only support floating point and complex dtypes",
    "var_dup_dims": "appears multiple times in the list of dims",
    "kthvalue_k_big": "selected number k out of range",
    "topk_k_big": "selected index k out of range",
    "median_empty_dim": "Expected reduction dim 0 to have non-zero size",
    "nanmedian_empty_dim": "Expected reduction dim 0 to have non-zero size",
    "bincount_float": "not implemented for 'Float'",
    "bincount_negative": "bincount only supports 1-d non-negative integral inputs",
    "bincount_2d": "bincount only supports 1-d non-negative integral inputs",
    "bincount_weights_len": "weights should be 1-d and have the same length as input",
    "bincount_minlength_neg": "minlength should be >= 0",
    "histc_int": "not implemented for 'Long'",
    "histc_bins": "bins must be > 0",
    "histc_min_gt_max": "max must be larger than min",
    "quantile_int": "input tensor must be either float or double dtype",
    "quantile_q_range": "q must be in the range [0, 1] but got 1.5",
    "quantile_q_tensor_range": "q values must be in the range [0, 1]",
    "quantile_q_dtype": "q tensor must be same dtype as the input tensor",
    "quantile_q_2d": "q must be a scalar or 1D tensor",
    "quantile_empty": "input tensor must be non-empty",
    "quantile_interp": "interpolation must be one of linear, lower, higher, midpoint or nearest",
    "logcumsumexp_int": "not implemented for 'Long'",
    "topk_bool": "topk does not support bool dtypes on CPU",
    "kthvalue_bool": "not implemented for 'Bool'",
}


@pytest.mark.parametrize("name,fn,inputs", RAISES, ids=[r[0] for r in RAISES])
def test_reduce_bad_input(name, fn, inputs):
    check_raises(fn, *inputs, match=MATCH.get(name))


# ---- documented difference (DIFFERENCES.md): sort(stable=False) of more than 16 elements
def test_unstable_sort_ties_select_equal_values():
    """torch's CPU sort(stable=False) runs std::sort (introsort) on more than 16 elements, whose
    order among equal values is unspecified; torchlike always sorts stably. Values agree, and
    the indices are a permutation ordering the values (ties in index order)."""
    import torch
    x = TIE_LARGE
    v, i = torchlike.sort(torchlike.tensor(x))
    tv, _ = torch.sort(torch.tensor(x))
    np.testing.assert_array_equal(np.asarray(v), tv.numpy())
    np.testing.assert_array_equal(np.asarray(i), np.argsort(x, axis=-1, kind="stable"))


# ---- documented difference (DIFFERENCES.md): topk's partial_sort path with ties
def test_topk_partial_sort_ties_as_torch():
    """For ``k >= 2`` and ``k * 64 <= n`` torch's CPU topk runs std::partial_sort (a heap),
    whose order among equal values torchlike replays: indices, values and the gradient as
    torch's."""
    import torch
    x = np.round(np.random.default_rng(9).standard_normal((2, 200)), 1).astype(np.float32)
    x[:, [7, 50, 120]] = 9.0
    lx = torchlike.tensor(x, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    v, i = torchlike.topk(lx, 3)
    tv, ti = torch.topk(tx, 3)
    np.testing.assert_array_equal(np.asarray(v.detach()), tv.detach().numpy())
    np.testing.assert_array_equal(np.asarray(i), ti.numpy())
    assert ti[0].tolist() != [7, 50, 120]       # (not index order: the heap's)
    v.sum().backward()
    tv.sum().backward()
    np.testing.assert_array_equal(np.asarray(lx.grad), tx.grad.numpy())


# ---- second order (create_graph=True) through the reductions with their own VJP
def _second(m, fn, x):
    t = m.tensor(x, requires_grad=True)
    y = fn(m, t)
    g, = m.autograd.grad(y.sum(), t, create_graph=True)
    (g * g).sum().backward()
    return t.grad.detach().numpy() if m.__name__ == "torch" else np.asarray(t.grad)


SECOND = {
    "logsumexp": lambda m, a: m.logsumexp(a, 1),
    "std": lambda m, a: a.std(1),
    "var": lambda m, a: a.var(),
    "prod": lambda m, a: a.prod(1),
    "cumprod": lambda m, a: a.cumprod(1),
    "amax": lambda m, a: (a * a).amax(1),
    "max_full": lambda m, a: (a * a).max(),
    "median_full": lambda m, a: (a * a).median(),
    "sort": lambda m, a: (a * a).sort(1).values * a,
    "max_dim": lambda m, a: (a * a).max(1).values,
    "topk": lambda m, a: (a * a).topk(2, 1).values,
    "kthvalue": lambda m, a: (a * a).kthvalue(2, 1).values,
    "cummax": lambda m, a: (a * a).cummax(1).values,
    "quantile": lambda m, a: (a * a).quantile(0.3, dim=1),
    "nanmedian": lambda m, a: (a * a).nanmedian(1).values,
    "logcumsumexp": lambda m, a: (a * a).logcumsumexp(1),
}


@pytest.mark.parametrize("name", list(SECOND))
def test_second_order_against_torch(name):
    import torch
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(_second(torchlike, SECOND[name], x),
                               _second(torch, SECOND[name], x), rtol=1e-4, atol=1e-4)


def test_var_empty_dims_gradient_is_that_of_the_full_var():
    """torch's var(dim=()) reduces over all dims but its backward divides by N - 1 with N = 1
    (an infinite gradient); torchlike gives the gradient of var() (DIFFERENCES.md)."""
    import torch
    x = np.random.default_rng(1).standard_normal((2, 3)).astype(np.float32)
    lx = torchlike.tensor(x, requires_grad=True)
    lx.var(dim=()).backward()
    tx = torch.tensor(x, requires_grad=True)
    tx.var().backward()
    np.testing.assert_allclose(np.asarray(lx.grad), tx.grad.numpy(), rtol=1e-5)


def test_mode_with_nan_counts_nans_as_one_value():
    """torch's CPU mode sorts with NaN (an unspecified order), so its result on NaN input has no
    rule to match (DIFFERENCES.md). torchlike counts the NaNs as one value, the largest, and
    returns the last index of the mode."""
    cases = {(nan, 1.0, nan, 1.0, nan): (nan, 4), (nan, nan, 1.0): (nan, 1),
             (2.0, nan, 2.0, nan): (2.0, 2), (1.0, nan, 3.0): (1.0, 0)}
    for x, (value, index) in cases.items():
        v, i = torchlike.tensor(np.array(x, np.float32)).mode()
        np.testing.assert_equal(v.item(), value)
        assert i.item() == index


@pytest.mark.parametrize("kw", [{}, {"dim": 1}, {"dim": 0, "keepdim": True}],
                         ids=["all", "dim1", "dim0_keepdim"])
def test_aminmax_is_one_node_as_torch_records_it(kw):
    """aminmax's two outputs share one node, AminmaxBackward0, that saves the input and both
    results; each output's gradient is split evenly among its ties."""
    import torch
    x = np.array([[1., 3., 3., 0.], [2., 2., 5., 2.], [0., 0., 1., 1.]], np.float32)
    got = []
    for m in (torch, torchlike):
        t = m.tensor(x, requires_grad=True)
        lo, hi = m.aminmax(t, **kw)
        assert lo.grad_fn is hi.grad_fn and (lo.output_nr, hi.output_nr) == (0, 1)
        got.append((type(lo.grad_fn).__name__,
                    [type(f).__name__ for f, _ in lo.grad_fn.next_functions]))
        (lo * 2 + hi * 3).sum().backward()
        got.append(t.grad.numpy())
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            lo2, hi2 = m.aminmax(t * 1, **kw)
            hi2.add_(1)
            lo2.sum().backward()
    assert got[0] == got[2] == ("AminmaxBackward0", ["AccumulateGrad"])
    np.testing.assert_array_equal(got[3], got[1])


# ---- documented difference (DIFFERENCES.md): a half-precision prod is rounded once
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_prod_is_the_product_rounded_once(dtype):
    """torchlike's float16 / bfloat16 ``prod`` is the exact product rounded once (float32
    accumulation); torch's CPU kernel multiplies in the half dtype and can differ by an ulp or
    more over long products. Over a handful of values both agree."""
    import ml_dtypes
    import torch
    half = np.float16 if dtype == "float16" else ml_dtypes.bfloat16
    rng = np.random.default_rng(0)
    differs = 0
    for n in (5, 17, 40, 100, 300):
        x = rng.uniform(0.9, 1.1, n).astype(half)
        exact = half(np.prod(x.astype(np.float64)))
        ours = torchlike.tensor(x.astype(np.float32)).to(getattr(torchlike, dtype)).prod()
        theirs = torch.tensor(x.astype(np.float32)).to(getattr(torch, dtype)).prod()
        assert ours.float().item() == float(exact), n
        differs += theirs.float().item() != float(exact)
        if n <= 5:
            assert theirs.float().item() == float(exact)
    assert differs >= 1     # (the documented difference is there)


@pytest.mark.parametrize("kind", ["ints", "zeros", "nan", "signed zero"])
def test_topk_index_choice_among_ties_as_torch(kind):
    """torch's CPU topk is libstdc++'s partial_sort for ``k * 64 <= n`` (a heap select, then
    the heap's sort) and otherwise its nth_element, then std::sort of the first k - 1
    (introsort's partitions past 16 elements, then an insertion sort), whose arrangements of
    equal values (and NaNs, and -0.0 against 0.0) torchlike replays: indices equal torch's
    for every k, both directions, sorted or not."""
    import torch as T
    rng = np.random.default_rng(3)
    for n in (40, 300, 2000):
        a = rng.integers(0, max(2, n // 10), n).astype(np.float32)
        if kind == "zeros":
            a[rng.random(n) < 0.7] = 0
        elif kind == "nan":
            a[rng.random(n) < 0.1] = np.nan
        elif kind == "signed zero":
            a[rng.random(n) < 0.3] = -0.0
            a[rng.random(n) < 0.3] = 0.0
        for k in sorted({2, 3, 7, n // 5, n // 2, n - 1}):
            for largest in (True, False):
                for srt in (True, False):
                    want = T.topk(T.from_numpy(a.copy()), k, largest=largest, sorted=srt)
                    got = torchlike.topk(torchlike.tensor(a), k, largest=largest, sorted=srt)
                    np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
                    np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())


@pytest.mark.parametrize("kind", ["ints", "nan", "signed zero"])
def test_kthvalue_index_choice_among_ties_as_torch(kind):
    """torch's CPU kthvalue is a median-of-three Hoare quickselect, whose choice among values
    equal to the k-th (and NaNs, and -0.0 against 0.0) torchlike replays: indices equal
    torch's for every k, along either dim."""
    import torch as T
    rng = np.random.default_rng(5)
    for shape, dim in (((3, 300), 1), ((300, 2), 0), ((2, 2000), -1)):
        a = rng.integers(0, 6, shape).astype(np.float32)
        if kind == "nan":
            a[rng.random(shape) < 0.2] = np.nan
        elif kind == "signed zero":
            a[rng.random(shape) < 0.3] = -0.0
            a[rng.random(shape) < 0.3] = 0.0
        n = shape[dim]
        for k in sorted({1, 2, n // 3, n // 2, n - 1, n}):
            want = T.kthvalue(T.from_numpy(a.copy()), k, dim=dim)
            got = torchlike.kthvalue(torchlike.tensor(a), k, dim=dim)
            np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
            np.testing.assert_array_equal(got.values.numpy(), want.values.numpy())
