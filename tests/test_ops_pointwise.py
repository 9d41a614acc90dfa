"""Issue 3, pointwise math: one table against torch (tests/oracle.py), plus bad input."""
import numpy as np
import pytest

import torchlike
from oracle import Case, check, check_raises

R = np.random.default_rng(3)
nan, inf = np.nan, np.inf


def f32(*shape):
    return np.asarray(R.standard_normal(shape), np.float32)


def f64(*shape):
    return np.asarray(R.standard_normal(shape), np.float64)


def unit(*shape):  # inside (-1, 1)
    return np.asarray(R.random(shape) * 1.8 - 0.9, np.float32)


def prob(*shape):  # inside (0, 1)
    return np.asarray(R.random(shape) * 0.9 + 0.05, np.float32)


def pos(*shape):
    return np.asarray(R.random(shape) * 3 + 0.2, np.float32)


def gt1(*shape):
    return np.asarray(R.random(shape) * 3 + 1.1, np.float32)


EDGE = np.array([0.0, -0.0, 1.0, -2.5, inf, -inf, nan], np.float32)
HALVES = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999, -3.7, 0.0], np.float32)
I64 = np.array([3, -2, 0, 7, -5], np.int64)
I32 = np.array([3, -2, 0, 7, -5], np.int32)
B = np.array([True, False, True])
E0 = np.zeros((0, 3), np.float32)
S0 = np.array(0.7, np.float32)  # a 0-dim tensor

CASES = []


def add(*cases):
    CASES.extend(cases)


# ---- unary: random values in the domain, int input, edge values, empty and 0-dim
UNARY = {
    "sign": f32, "exp2": f32, "expm1": f32, "log2": pos, "log10": pos, "log1p": pos,
    "tan": unit, "asin": unit, "acos": unit, "atan": f32, "sinh": f32, "cosh": f32,
    "asinh": f32, "acosh": gt1, "atanh": unit, "erf": f32, "erfc": f32, "erfinv": unit,
    "floor": f32, "ceil": f32, "trunc": f32, "frac": f32, "round": f32, "fix": f32,
    "arcsin": unit, "arccos": unit, "arctan": f32, "arcsinh": f32, "arccosh": gt1,
    "arctanh": unit, "sgn": f32, "deg2rad": f32, "rad2deg": f32, "lgamma": pos,
    "digamma": pos, "sinc": f32, "logit": prob,
}
# torch's gradient of sgn is a ZeroTensor, which the oracle cannot read: their gradient is
# checked through ``op(a) + a`` (gradient 1 exactly when sgn's own gradient is 0)
ZERO_GRAD = {"sgn"}
# torch has no derivative for these in-place forms
NO_INPLACE_GRAD = {"asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh"}
for _n, _gen in UNARY.items():
    _g = _n not in ZERO_GRAD
    if not _g:
        add(Case(f"{_n}_zero_grad", lambda m, a, n=_n: getattr(m, n)(a) + a, (_gen(3, 4),)))
    add(Case(f"{_n}", lambda m, a, n=_n: getattr(m, n)(a), (_gen(3, 4),), grad=_g),
        Case(f"{_n}_method", lambda m, a, n=_n: getattr(a, n)(), (_gen(5),), grad=_g),
        Case(f"{_n}_f64", lambda m, a, n=_n: getattr(m, n)(a), (_gen(4).astype(np.float64),),
             grad=_g),
        Case(f"{_n}_edge", lambda m, a, n=_n: getattr(m, n)(a), (EDGE,), grad=False,
             atol=1e-4),
        Case(f"{_n}_empty", lambda m, a, n=_n: getattr(m, n)(a), (E0,), grad=_g),
        Case(f"{_n}_0dim", lambda m, a, n=_n: getattr(m, n)(a), (_gen(),), grad=_g),
        Case(f"{_n}_inplace", lambda m, a, n=_n: getattr(a.clone(), n + "_")(),
             (_gen(4),), grad=_g and _n not in NO_INPLACE_GRAD))
    if _n != "frac":
        add(Case(f"{_n}_int", lambda m, a, n=_n: getattr(m, n)(a), (I64,), atol=1e-4))

add(
    # gradients at special points
    Case("sign_at_zero_grad", lambda m, a: a.sign(), (np.array([-1., 0., 2.], np.float32),)),
    Case("floor_grad_zero", lambda m, a: a.floor() * a, (f32(4),)),
    Case("asin_at_one", lambda m, a: m.asin(a), (np.array([1.0, -1.0, 0.5], np.float32),)),
    Case("acosh_at_one", lambda m, a: m.acosh(a), (np.array([1.0, 2.0], np.float32),)),
    Case("atanh_at_one", lambda m, a: m.atanh(a), (np.array([1.0, -1.0, 0.], np.float32),)),
    Case("log1p_at_minus_one", lambda m, a: m.log1p(a), (np.array([-1.0, 0.0], np.float32),)),
    Case("erfinv_at_one", lambda m, a: m.erfinv(a), (np.array([1.0, -1.0, 0.], np.float32),)),
    Case("logit_outside", lambda m, a: m.logit(a),
         (np.array([-0.5, 0.0, 0.3, 1.0, 1.5], np.float32),)),
    Case("logit_eps", lambda m, a: m.logit(a, eps=0.1),
         (np.array([-0.5, 0.05, 0.1, 0.3, 0.9, 0.95, 1.5], np.float32),)),
    Case("logit_eps_method", lambda m, a: a.logit(1e-3), (prob(5),)),
    Case("sign_bool", lambda m, a: m.sign(a), (B,)),
    Case("sign_int32", lambda m, a: m.sign(a), (I32,)),
    Case("floor_int32", lambda m, a: m.floor(a), (I32,)),
    Case("exp2_int32", lambda m, a: m.exp2(a), (I32,)),
    Case("log2_bool", lambda m, a: m.log2(a), (B,)),
    Case("signbit", lambda m, a: m.signbit(a), (EDGE,)),
    Case("signbit_int", lambda m, a: a.signbit(), (I64,)),
    Case("positive", lambda m, a: m.positive(a), (f32(3),)),
    # round
    Case("round_half_even", lambda m, a: m.round(a), (HALVES,)),
    Case("round_decimals", lambda m, a: m.round(a, decimals=2), (f32(6) * 10,)),
    Case("round_decimals_neg", lambda m, a: a.round(decimals=-1),
         (np.array([14.0, 15.0, 25.0, -36.0, 123.4], np.float32),)),
    Case("round_decimals_inplace", lambda m, a: a.clone().round_(decimals=1), (f32(5),)),
    Case("round_decimals_f64", lambda m, a: m.round(a, decimals=3), (f64(5) * 100,)),
    Case("trunc_halves", lambda m, a: m.trunc(a), (HALVES,)),
    Case("frac_halves", lambda m, a: m.frac(a), (HALVES,)),
    Case("ceil_halves", lambda m, a: a.ceil(), (HALVES,)),
    # nan_to_num and the is* tests
    Case("nan_to_num", lambda m, a: m.nan_to_num(a), (EDGE,)),
    Case("nan_to_num_args", lambda m, a: m.nan_to_num(a, nan=1.5, posinf=9.0, neginf=-9.0),
         (EDGE,)),
    Case("nan_to_num_method", lambda m, a: a.nan_to_num(posinf=100.0), (EDGE,)),
    Case("nan_to_num_f64", lambda m, a: m.nan_to_num(a), (EDGE.astype(np.float64),)),
    Case("nan_to_num_inplace", lambda m, a: a.clone().nan_to_num_(nan=-1.0), (EDGE,)),
    Case("nan_to_num_int", lambda m, a: m.nan_to_num(a), (I64,)),
    Case("isnan", lambda m, a: m.isnan(a), (EDGE,)),
    Case("isinf", lambda m, a: a.isinf(), (EDGE,)),
    Case("isfinite", lambda m, a: m.isfinite(a), (EDGE,)),
    Case("isposinf", lambda m, a: m.isposinf(a), (EDGE,)),
    Case("isneginf", lambda m, a: m.isneginf(a), (EDGE,)),
    Case("isnan_int", lambda m, a: m.isnan(a), (I64,)),
    Case("isinf_int", lambda m, a: m.isinf(a), (I32,)),
    Case("isfinite_int", lambda m, a: a.isfinite(), (I64,)),
    Case("isfinite_bool", lambda m, a: a.isfinite(), (B,)),
    Case("isnan_requires_grad", lambda m, a: m.isnan(a * 2), (f32(3),)),
    Case("isnan_empty", lambda m, a: m.isnan(a), (E0,)),
    # clamp / clip
    Case("clamp", lambda m, a: m.clamp(a, -0.5, 0.5), (f32(3, 4),)),
    Case("clamp_at_bounds", lambda m, a: m.clamp(a, -1.0, 1.0),
         (np.array([-2.0, -1.0, 0.0, 1.0, 2.0], np.float32),)),
    Case("clamp_min_only", lambda m, a: a.clamp(min=0.0),
         (np.array([-2.0, 0.0, 1.0], np.float32),)),
    Case("clamp_max_only", lambda m, a: a.clamp(max=0.0),
         (np.array([-2.0, 0.0, 1.0], np.float32),)),
    Case("clamp_min_gt_max", lambda m, a: m.clamp(a, 2.0, 1.0),
         (np.array([0.0, 1.5, 3.0], np.float32),)),
    Case("clamp_nan", lambda m, a: m.clamp(a, -1.0, 1.0), (EDGE,)),
    Case("clamp_tensor", lambda m, a, lo, hi: m.clamp(a, lo, hi), (f32(3, 4), f32(4) - 1,
                                                                   f32(3, 1) + 1)),
    Case("clamp_tensor_ties", lambda m, a, lo, hi: m.clamp(a, lo, hi),
         (np.array([0., 1., 2., 3.], np.float32), np.array([0., 1.5, 2., 1.], np.float32),
          np.array([1., 1.5, 2., 0.5], np.float32))),
    Case("clamp_tensor_min_gt_max", lambda m, a, lo, hi: m.clamp(a, lo, hi),
         (np.array([0.0, 1.5, 3.0], np.float32), np.full(3, 2.0, np.float32),
          np.full(3, 1.0, np.float32))),
    Case("clamp_tensor_min", lambda m, a, lo: m.clamp(a, min=lo), (f32(5), f32(5))),
    Case("clamp_tensor_max", lambda m, a, hi: a.clamp(max=hi), (f32(2, 5), f32(5))),
    Case("clamp_min_fn", lambda m, a: m.clamp_min(a, 0.1), (f32(5),)),
    Case("clamp_max_method", lambda m, a: a.clamp_max(0.1), (f32(5),)),
    Case("clamp_min_tensor_method", lambda m, a, b: a.clamp_min(b), (f32(5), f32(5))),
    Case("clip", lambda m, a: m.clip(a, -0.3, 0.3), (f32(6),)),
    Case("clip_method", lambda m, a: a.clip(-0.3), (f32(6),)),
    Case("clamp_int", lambda m, a: m.clamp(a, -1, 4), (I64,)),
    Case("clamp_int_float_bound", lambda m, a: m.clamp(a, -1.5, 4), (I64,)),
    Case("clamp_int32_tensor_i64", lambda m, a, b: m.clamp(a, min=b), (I32, I64)),
    Case("clamp_f32_f64_bound", lambda m, a, b: m.clamp(a, max=b), (f32(5), f64(5))),
    Case("clamp_inplace", lambda m, a: a.clone().clamp_(-0.2, 0.2), (f32(5),)),
    Case("clip_inplace", lambda m, a: a.clone().clip_(max=0.2), (f32(5),)),
    Case("clamp_min_inplace", lambda m, a: a.clone().clamp_min_(0.0), (f32(5),)),
    Case("clamp_max_inplace", lambda m, a: a.clone().clamp_max_(0.0), (f32(5),)),
    Case("clamp_bool", lambda m, a: m.clamp(a, 0, 1), (B,)),
    Case("clamp_empty", lambda m, a: m.clamp(a, 0, 1), (E0,)),
    Case("clamp_0dim", lambda m, a: m.clamp(a, 0.0, 0.5), (S0,)),
    # binary math
    Case("atan2", lambda m, a, b: m.atan2(a, b), (f32(3, 4), f32(4))),
    Case("atan2_method", lambda m, a, b: a.atan2(b), (f32(5), f32(5))),
    Case("arctan2", lambda m, a, b: m.arctan2(a, b), (f32(5), f32(5))),
    Case("atan2_zero", lambda m, a, b: m.atan2(a, b),
         (np.array([0.0, 0.0, -0.0, 1.0], np.float32), np.array([0.0, -0.0, -1.0, 0.0],
                                                                 np.float32))),
    Case("atan2_int", lambda m, a, b: m.atan2(a, b), (I64, I64[::-1].copy())),
    Case("atan2_inplace", lambda m, a, b: a.clone().atan2_(b), (f32(5), f32(5))),
    Case("hypot", lambda m, a, b: m.hypot(a, b), (f32(3, 4), f32(3, 1))),
    Case("hypot_zero", lambda m, a, b: m.hypot(a, b),
         (np.array([0.0, 3.0], np.float32), np.array([0.0, 4.0], np.float32))),
    Case("hypot_inplace", lambda m, a, b: a.clone().hypot_(b), (f32(5), f32(5))),
    Case("hypot_edge", lambda m, a: m.hypot(a, a.flip(0)), (EDGE,), grad=False),
    Case("logaddexp", lambda m, a, b: m.logaddexp(a, b), (f32(3, 4), f32(4))),
    Case("logaddexp_method", lambda m, a, b: a.logaddexp(b), (f64(5), f64(5))),
    Case("logaddexp_inf", lambda m, a, b: m.logaddexp(a, b),
         (np.array([inf, -inf, -inf, 1.0, 3.0], np.float32),
          np.array([inf, -inf, 2.0, -inf, 3.0], np.float32))),
    Case("logaddexp2", lambda m, a, b: m.logaddexp2(a, b), (f32(5), f32(5))),
    Case("maximum", lambda m, a, b: m.maximum(a, b), (f32(3, 4), f32(4))),
    Case("maximum_ties", lambda m, a, b: m.maximum(a, b),
         (np.array([1.0, 2.0, 3.0, 0.0], np.float32), np.array([1.0, 1.0, 3.0, 5.0],
                                                                np.float32))),
    Case("maximum_nan", lambda m, a, b: m.maximum(a, b),
         (np.array([1.0, 2.0, nan, nan], np.float32), np.array([1.0, nan, 3.0, nan],
                                                                np.float32))),
    Case("minimum", lambda m, a, b: a.minimum(b), (f32(3, 1), f32(1, 4))),
    Case("minimum_ties", lambda m, a, b: m.minimum(a, b),
         (np.array([1.0, 2.0, 3.0, 0.0], np.float32), np.array([1.0, 1.0, 3.0, 5.0],
                                                                np.float32))),
    Case("minimum_nan", lambda m, a, b: m.minimum(a, b),
         (np.array([1.0, 2.0, nan, nan], np.float32), np.array([1.0, nan, 3.0, nan],
                                                                np.float32))),
    Case("maximum_int", lambda m, a, b: m.maximum(a, b), (I64, I64[::-1].copy())),
    Case("maximum_int_float", lambda m, a, b: m.maximum(a, b), (I32, f32(5))),
    Case("maximum_0dim", lambda m, a, b: m.maximum(a, b), (f32(4), S0)),
    Case("maximum_bool", lambda m, a, b: m.maximum(a, b), (B, ~B)),
    Case("fmax", lambda m, a, b: m.fmax(a, b), (f32(3, 4), f32(4))),
    Case("fmax_nan_ties", lambda m, a, b: m.fmax(a, b),
         (np.array([1.0, 2.0, nan, nan, 0.0], np.float32),
          np.array([1.0, nan, 3.0, nan, 5.0], np.float32))),
    Case("fmin_nan_ties", lambda m, a, b: a.fmin(b),
         (np.array([1.0, 2.0, nan, nan, 0.0], np.float32),
          np.array([1.0, nan, 3.0, nan, 5.0], np.float32))),
    Case("fmin_int", lambda m, a, b: m.fmin(a, b), (I64, I64[::-1].copy())),
    Case("fmod", lambda m, a, b: m.fmod(a, b), (f32(3, 4) * 5, pos(4))),
    Case("fmod_scalar", lambda m, a: a.fmod(1.5), (f32(6) * 5,)),
    Case("fmod_negative", lambda m, a, b: m.fmod(a, b),
         (np.array([-7.0, 7.0, -7.0, 5.5], np.float32), np.array([3.0, -3.0, -3.0, 2.0],
                                                                  np.float32))),
    Case("fmod_int", lambda m, a: m.fmod(a, 3), (I64,)),
    Case("fmod_int_neg", lambda m, a: m.fmod(a, -4), (I32,)),
    Case("fmod_inplace", lambda m, a: a.clone().fmod_(0.7), (f32(5),)),
    Case("copysign", lambda m, a, b: m.copysign(a, b), (f32(5), f32(5))),
    Case("xlogy", lambda m, a, b: m.xlogy(a, b), (f32(5), pos(5))),
    Case("xlogy_zero", lambda m, a, b: m.xlogy(a, b),
         (np.array([0.0, 0.0, 1.0], np.float32), np.array([0.0, 2.0, 3.0], np.float32)),
         grad=False),
    # float_power
    Case("float_power", lambda m, a, b: m.float_power(a, b), (pos(5), f32(5))),
    Case("float_power_scalar", lambda m, a: m.float_power(a, 2), (f32(2, 3),)),
    Case("float_power_frac", lambda m, a: a.float_power(0.5), (pos(4),)),
    Case("float_power_int", lambda m, a: m.float_power(a, 3), (I64,)),
    Case("float_power_base_scalar", lambda m, a: m.float_power(2, a), (f32(4),)),
    Case("float_power_zero_exp", lambda m, a: m.float_power(a, 0),
         (np.array([0.0, 1.0, 2.0], np.float32),)),
    Case("float_power_inplace", lambda m, a: a.clone().float_power_(2), (f64(4),)),
    # lerp
    Case("lerp_scalar", lambda m, a, b: m.lerp(a, b, 0.3), (f32(3, 4), f32(4))),
    Case("lerp_tensor", lambda m, a, b, w: m.lerp(a, b, w), (f32(3, 4), f32(3, 4), prob(4))),
    Case("lerp_method", lambda m, a, b: a.lerp(b, 0.8), (f64(5), f64(5))),
    Case("lerp_inplace", lambda m, a, b: a.clone().lerp_(b, 0.5), (f32(5), f32(5))),
    Case("lerp_weight_big", lambda m, a, b, w: m.lerp(a, b, w),
         (f32(5), f32(5), np.array([-1.0, 0.0, 0.5, 1.0, 2.0], np.float32))),
    # where
    Case("where", lambda m, c, a, b: m.where(c, a, b), (np.array([True, False, True, False]),
                                                        f32(4), f32(4))),
    Case("where_broadcast", lambda m, a, b: m.where(a > 0, a, b), (f32(3, 4), f32(4))),
    Case("where_scalar", lambda m, a: m.where(a > 0, a, 0.0), (f32(5),)),
    Case("where_scalar_both", lambda m, a: m.where(a > 0, 1.0, 0.0), (f32(5),)),
    Case("where_scalar_int", lambda m, a: m.where(a > 0, a, 0), (I64,)),
    Case("where_int_float", lambda m, a, b: m.where(a > 0, a, b), (I64, f32(5))),
    Case("where_f32_f64", lambda m, a, b: m.where(a > b, a, b), (f32(4), f64(4))),
    Case("where_0dim", lambda m, a, b: m.where(a > 0, a, b), (f32(4), S0)),
    Case("where_method", lambda m, a, b: a.where(a > 0, b), (f32(3, 2), f32(2))),
    Case("where_nan", lambda m, a: m.where(m.isnan(a), 0.0, a), (EDGE,)),
    Case("where_empty", lambda m, a: m.where(a > 0, a, 1.0), (E0,)),
    Case("where_cond_only", lambda m, a: m.where(a > 0), (f32(3, 4),)),
    # complex and half precision
    Case("sgn_complex", lambda m, a: m.sgn(a), (np.array([1 + 1j, 0j, -2 + 0j], np.complex64),),
         grad=False),
    Case("isfinite_complex", lambda m, a: m.isfinite(a),
         (np.array([1 + 1j, complex(inf, 0), complex(0, nan)], np.complex64),)),
    Case("where_numpy_scalar", lambda m, a: m.where(a > 0, a, np.float64(0.5)), (f32(4),)),
    Case("clamp_half", lambda m, a: m.clamp(a.half(), -0.5, 0.5), (f32(6),)),
    Case("maximum_half", lambda m, a, b: m.maximum(a.half(), b.half()), (f32(6), f32(6))),
    Case("round_half", lambda m, a: m.round(a.half()), (HALVES,)),
    Case("round_decimals_half", lambda m, a: m.round(a.half(), decimals=1),
         (np.array([1.25, 2.37, -0.35], np.float32),)),
    Case("exp2_half", lambda m, a: m.exp2(a.half()), (f32(6),), atol=1e-2, rtol=1e-2),
    Case("log1p_bf16", lambda m, a: m.log1p(a.bfloat16()), (np.abs(f32(6)),), atol=2e-2,
         rtol=2e-2),
    Case("atan2_bf16", lambda m, a, b: m.atan2(a.bfloat16(), b.bfloat16()), (f32(6), f32(6)),
         atol=2e-2, rtol=2e-2),
    Case("where_half_float", lambda m, a, b: m.where(a > 0, a.half(), b), (f32(5), f32(5))),
    Case("lerp_half", lambda m, a, b: m.lerp(a.half(), b.half(), 0.25), (f32(5), f32(5)),
         atol=1e-2, rtol=1e-2),
    # addcmul / addcdiv
    Case("addcmul", lambda m, a, b, c: m.addcmul(a, b, c), (f32(3, 4), f32(4), f32(3, 1))),
    Case("addcmul_value", lambda m, a, b, c: a.addcmul(b, c, value=-0.5), (f32(4), f32(4),
                                                                          f32(4))),
    Case("addcmul_inplace", lambda m, a, b, c: a.clone().addcmul_(b, c, value=2),
         (f32(4), f32(4), f32(4))),
    Case("addcmul_int", lambda m, a, b, c: m.addcmul(a, b, c, value=2), (I64, I64, I64)),
    Case("addcmul_int_float_value", lambda m, a: m.addcmul(a, a, a, value=0.5), (I64,)),
    Case("addcmul_mixed", lambda m, a, b, c: m.addcmul(a, b, c), (f32(5), I64, f64(5))),
    Case("addcdiv", lambda m, a, b, c: m.addcdiv(a, b, c, value=0.1), (f32(3, 4), f32(4),
                                                                       pos(3, 1))),
    Case("addcdiv_inplace", lambda m, a, b, c: a.clone().addcdiv_(b, c, value=-1e-2),
         (f32(4), f32(4), pos(4))),
    Case("addcdiv_zero", lambda m, a, b, c: m.addcdiv(a, b, c), (f32(2), f32(2),
                                                                 np.zeros(2, np.float32)),
         grad=False),
    # out=
    Case("clamp_out", lambda m, a: m.clamp(a, 0, 1, out=m.zeros(5)), (f32(5),), grad=False),
    Case("exp2_out_f64", lambda m, a: m.exp2(a, out=m.zeros(5, dtype=m.float64)), (f32(5),),
         grad=False),
    Case("maximum_out", lambda m, a, b: m.maximum(a, b, out=m.zeros(5)), (f32(5), f32(5)),
         grad=False),
    Case("where_out", lambda m, a, b: m.where(a > 0, a, b, out=m.zeros(5)), (f32(5), f32(5)),
         grad=False),
    Case("atan2_out", lambda m, a, b: m.atan2(a, b, out=m.zeros(2, 5)), (f32(2, 5), f32(5)),
         grad=False),
    Case("float_power_out", lambda m, a: m.float_power(a, 2, out=m.zeros(5, dtype=m.float64)),
         (f32(5),), grad=False),
    # isin
    Case("isin", lambda m, a, b: m.isin(a, b), (I64, np.array([[7, 0], [3, 9]], np.int64))),
    Case("isin_float_int", lambda m, a, b: m.isin(a, b), (I64, np.array([7.0, 0.5]))),
    Case("isin_nan", lambda m, a: m.isin(a, float("nan")), (EDGE,)),
    Case("isin_scalar_elements", lambda m, a: m.isin(3, a), (I64,)),
    Case("isin_invert", lambda m, a: m.isin(a, a[:2], invert=True), (f32(5),)),
    Case("isin_empty", lambda m, a, b: m.isin(a, b), (I64, np.zeros(0, np.int64))),
    # isclose / allclose / equal
    Case("isclose", lambda m, a, b: m.isclose(a, b),
         (np.array([1.0, 1.0, 1.0, nan, inf, -inf, 0.0], np.float32),
          np.array([1.0, 1.000001, 1.1, nan, inf, inf, 1e-9], np.float32))),
    Case("isclose_equal_nan", lambda m, a, b: m.isclose(a, b, equal_nan=True),
         (np.array([1.0, nan, nan], np.float32), np.array([1.0, nan, 1.0], np.float32))),
    Case("isclose_tols", lambda m, a, b: a.isclose(b, rtol=0.1, atol=0.01),
         (f32(6), f32(6))),
    Case("isclose_zero_tol", lambda m, a, b: m.isclose(a, b, rtol=0, atol=0),
         (np.array([1.0, 2.0], np.float32), np.array([1.0, 2.0000002], np.float32))),
    Case("isclose_int", lambda m, a, b: m.isclose(a, b, rtol=0.2, atol=1),
         (I64, np.array([3, -3, 2, 9, -5], np.int64))),
    Case("isclose_bool", lambda m, a, b: m.isclose(a, b), (B, ~B)),
    Case("isclose_broadcast", lambda m, a, b: m.isclose(a, b), (f32(3, 4), f32(4))),
    Case("allclose_true", lambda m, a: m.allclose(a, a + 1e-7), (f32(5),)),
    Case("allclose_false", lambda m, a: m.allclose(a, a + 1e-2), (f32(5),)),
    Case("allclose_nan", lambda m, a: m.allclose(a, a), (EDGE,)),
    Case("allclose_nan_eq", lambda m, a: a.allclose(a, equal_nan=True), (EDGE,)),
    Case("equal_true", lambda m, a: m.equal(a, a.clone()), (f32(3, 4),)),
    Case("equal_false", lambda m, a, b: m.equal(a, b), (f32(3), f32(3))),
    Case("equal_shape", lambda m, a: m.equal(a, a.reshape(3, 4)), (f32(12),)),
    Case("equal_nan", lambda m, a: a.equal(a), (EDGE,)),
    Case("equal_int", lambda m, a: m.equal(a, a * 1), (I64,)),
    Case("equal_empty", lambda m, a: m.equal(a, a), (E0,)),
    # in-place forms of the first part's ops
    Case("eq_", lambda m, a, b: a.clone().eq_(b), (np.array([1., 2., 3.], np.float32),
                                                   np.array([1., 0., 3.], np.float32))),
    Case("lt_scalar_", lambda m, a: a.clone().lt_(0.0), (f32(5),)),
    Case("ge_", lambda m, a, b: a.clone().ge_(b), (I64, np.zeros(5, np.int64))),
    Case("ne_", lambda m, a: a.clone().ne_(0), (I64,)),
    Case("gt_", lambda m, a: a.clone().gt_(0.5), (f32(5),)),
    Case("le_", lambda m, a: a.clone().le_(0.5), (f32(5),)),
    Case("greater_", lambda m, a: a.clone().greater_(0.5), (f32(5),)),
    Case("less_equal_", lambda m, a: a.clone().less_equal_(0.5), (f32(5),)),
    Case("not_equal_", lambda m, a: a.clone().not_equal_(0.5), (f32(5),)),
    Case("logical_and_", lambda m, a, b: a.clone().logical_and_(b), (f32(4), B[[0, 1, 2, 0]])),
    Case("logical_or_", lambda m, a, b: a.clone().logical_or_(b), (B, ~B)),
    Case("logical_xor_", lambda m, a, b: a.clone().logical_xor_(b), (I64, I64 * 0)),
    Case("logical_not_", lambda m, a: a.clone().logical_not_(), (I64,)),
    Case("bitwise_and_", lambda m, a: a.clone().bitwise_and_(6), (I64,)),
    Case("bitwise_or_", lambda m, a, b: a.clone().bitwise_or_(b), (B, ~B)),
    Case("bitwise_xor_", lambda m, a: a.clone().bitwise_xor_(3), (I32,)),
    Case("bitwise_not_", lambda m, a: a.clone().bitwise_not_(), (I64,)),
    Case("ixor", lambda m, a: a.clone().__ixor__(3), (I64,)),
    Case("remainder_", lambda m, a: a.clone().remainder_(1.5), (f32(5) * 4,)),
    Case("imod", lambda m, a: a.clone().__imod__(3), (I64,)),
    Case("floor_divide_", lambda m, a: a.clone().floor_divide_(3), (I64,)),
    Case("ifloordiv", lambda m, a: a.clone().__ifloordiv__(0.7), (f32(5),), grad=False),
    Case("true_divide_", lambda m, a, b: a.clone().true_divide_(b), (f32(5), pos(5))),
    Case("subtract_", lambda m, a, b: a.clone().subtract_(b, alpha=2), (f32(5), f32(5))),
    Case("multiply_", lambda m, a, b: a.clone().multiply_(b), (f32(5), f32(5))),
    Case("divide_", lambda m, a, b: a.clone().divide_(b, rounding_mode="floor"),
         (f32(5), pos(5)), grad=False),
    Case("negative_", lambda m, a: a.clone().negative_(), (f32(5),)),
    Case("absolute_", lambda m, a: a.clone().absolute_(), (f32(5),)),
    Case("copysign_", lambda m, a, b: a.clone().copysign_(b), (f32(5), f32(5))),
    Case("xlogy_", lambda m, a, b: a.clone().xlogy_(b), (f32(5), pos(5))),
)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_pointwise_against_torch(case):
    check(case)


@pytest.mark.parametrize("case", [c for c in CASES if c.grad][::9], ids=str)
def test_pointwise_autograd_grad(case):
    check(case, autograd_grad=True)


def test_table_counts():
    names = {c.name for c in CASES}
    assert len(names) == len(CASES), "duplicate case names"
    assert len(CASES) >= 300


# ---- bad input: torch's exception class
RAISES = [
    ("frac_int", lambda m, a: m.frac(a), (I64,)),
    ("hypot_int", lambda m, a: m.hypot(a, a), (I64,)),
    ("logaddexp_int", lambda m, a: m.logaddexp(a, a), (I64,)),
    ("lerp_int", lambda m, a: m.lerp(a, a, 0.5), (I64,)),
    ("lerp_dtype_mismatch", lambda m, a, b: m.lerp(a, b, 0.5), (f32(3), f64(3))),
    ("round_decimals_int", lambda m, a: m.round(a, decimals=1), (I64,)),
    ("clamp_no_bounds", lambda m, a: m.clamp(a), (f32(3),)),
    ("clamp_shape", lambda m, a, b: m.clamp(a, min=b), (f32(3), f32(4))),
    ("maximum_scalar", lambda m, a: m.maximum(a, 1.0), (f32(3),)),
    ("maximum_shape", lambda m, a, b: m.maximum(a, b), (f32(3), f32(2))),
    ("atan2_shape", lambda m, a, b: m.atan2(a, b), (f32(2, 3), f32(2, 2))),
    ("where_float_cond", lambda m, c, a: m.where(c, a, a), (f32(3), f32(3))),
    ("where_shape", lambda m, a, b: m.where(a > 0, a, b), (f32(3), f32(4))),
    ("isclose_dtype", lambda m, a, b: m.isclose(a, b), (f32(3), f64(3))),
    ("isclose_neg_rtol", lambda m, a: m.isclose(a, a, rtol=-1.0), (f32(3),)),
    ("isclose_scalar", lambda m, a: m.isclose(a, 1.0), (f32(3),)),
    ("allclose_shape", lambda m, a, b: m.allclose(a, b), (f32(3), f32(4))),
    ("float_power_inplace_f32", lambda m, a: a.float_power_(2), (f32(3),)),
    ("inplace_int_result_float", lambda m, a: a.sin_(), (I64,)),
    ("addcdiv_int", lambda m, a: m.addcdiv(a, a, a), (I64,)),
    ("addcmul_shape", lambda m, a, b: m.addcmul(a, b, a), (f32(3), f32(2))),
    ("clamp_mixed_bounds", lambda m, a, lo: m.clamp(a, min=lo, max=0.5), (f32(3), f32(3))),
    ("isin_two_numbers", lambda m: m.isin(1, 2), ()),
    ("out_requires_grad", lambda m, a: m.exp2(a.requires_grad_(), out=m.zeros(3)), (f32(3),)),
    ("out_lower_dtype", lambda m, a: m.exp2(a, out=m.zeros(3, dtype=m.long)), (f32(3),)),
    ("sign_complex", lambda m, a: m.sign(a), (np.array([1 + 1j, 0j], np.complex64),)),
    ("sign_complex_inplace", lambda m, a: a.sign_(), (np.array([1 + 1j, 0j], np.complex64),)),
    ("inplace_leaf", lambda m, a: a.requires_grad_().clamp_(0, 1), (f32(3),)),
]


# torch's message fragment, where torchlike words it the same way
MATCH = {
    "frac_int": "not implemented for 'Long'",
    "hypot_int": "not implemented for 'Long'",
    "clamp_no_bounds": "At least one of 'min' or 'max' must not be None",
    "clamp_shape": "must match the size of tensor",
    "where_float_cond": "where expected condition to be a boolean tensor",
    "where_shape": "must match the size of tensor",
    "float_power_inplace_f32": "has dtype Float but the operation's result requires dtype "
                               "Double",
    "inplace_int_result_float": "result type Float can't be cast to the desired output type Long",
    "inplace_leaf": "a leaf Variable that requires grad is being used in an in-place operation",
    "addcdiv_int": "Integer division with addcdiv is no longer supported",
    "out_requires_grad": "functions with out=... arguments don't support automatic "
                         "differentiation, but one of the arguments requires grad",
    "lerp_dtype_mismatch": "expected dtype float for `end` but got dtype double",
}


@pytest.mark.parametrize("name,fn,inputs", RAISES, ids=[r[0] for r in RAISES])
def test_pointwise_bad_input(name, fn, inputs):
    check_raises(fn, *inputs, match=MATCH.get(name))


# ---- second order (create_graph=True) through the ops with their own VJP
def _second(m, fn, x):
    t = m.tensor(x, requires_grad=True)
    y = fn(m, t)
    g, = m.autograd.grad(y.sum(), t, create_graph=True)
    (g * g).sum().backward()
    return t.grad.detach().numpy() if m.__name__ == "torch" else np.asarray(t.grad)


SECOND = {
    "hypot": lambda m, a: m.hypot(a, a * 2),
    "maximum": lambda m, a: m.maximum(a * a, a),
    "fmin": lambda m, a: m.fmin(a * a, a),
    "clamp": lambda m, a: m.clamp(a * a, -0.5, 0.5),
    "clamp_tensor": lambda m, a: m.clamp(a * a, a, a + 1),
    "logaddexp": lambda m, a: m.logaddexp(a, a * a),
    "atan2": lambda m, a: m.atan2(a, a * a + 1),
    "logit": lambda m, a: m.logit(m.sigmoid(a)),
    "float_power": lambda m, a: m.float_power(a, 3),
    "lerp": lambda m, a: m.lerp(a, a * a, 0.3),
    "erfinv": lambda m, a: m.erfinv(m.tanh(a)),
    "addcdiv": lambda m, a: m.addcdiv(a, a, a * a + 1, value=0.5),
    "where": lambda m, a: m.where(a > 0, a * a, a),
}


@pytest.mark.parametrize("name", list(SECOND))
def test_second_order_against_torch(name):
    import torch
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(_second(torchlike, SECOND[name], x),
                               _second(torch, SECOND[name], x), rtol=1e-4, atol=1e-4)


def test_out_of_another_shape_is_resized_as_torch():
    """torch resizes an ``out=`` of the wrong shape (warning when it had elements)."""
    import torch
    for m in (torch, torchlike):
        x = m.tensor(np.ones(3, np.float32))
        o = m.zeros(4)
        with pytest.warns(UserWarning, match="was resized since it had shape"):
            m.clamp(x, 0, 1, out=o)
        assert list(o.shape) == [3]
        v, i = m.zeros(2), m.zeros((), dtype=m.long)
        with pytest.warns(UserWarning):
            m.max(x, 0, out=(v, i))
        assert list(v.shape) == [] and v.item() == 1.0


def test_out_that_is_a_view_is_not_resized():
    """Resizing a view in place is not supported (DIFFERENCES.md): a clear error, not a wrong
    value."""
    x = torchlike.ones(3)
    base = torchlike.zeros(8)
    with pytest.raises(NotImplementedError, match="is a view or has views"):
        torchlike.exp(x, out=base[:4])


@pytest.mark.parametrize("call", [
    "x.clamp_min(0.5)", "x.clamp_min(t)", "x.clamp_max(0.5)", "x.clamp_max(t)",
    "m.clamp_min(x, 0.5)", "m.clamp_max(x, t)", "x.clamp(min=0.5)", "x.clamp(min=t)",
    "x.clamp(max=t)", "x.clamp(t, t + 1)", "x.clamp(0.1, 0.9)", "x.clip(min=t)",
    "x.clone().clamp_min_(0.5)", "x.clone().clamp_max_(t)", "x.clone().clamp_(t, t + 1)"])
def test_clamp_nodes_are_torchs(call):
    """clamp's node by its bounds' kind (ClampBackward1 for numbers, ClampBackward0 for
    Tensors), clamp_min's and clamp_max's their own (ClampMinBackward0 / 1), as torch's."""
    import torch
    names = []
    for m in (torch, torchlike):
        x = m.tensor([0.2, 0.7], requires_grad=True)
        t = m.tensor([0.4, 0.4])
        names.append(eval(call, {"m": m, "x": x, "t": t}).grad_fn.name())   # noqa: S307
    assert names[1] == names[0]
