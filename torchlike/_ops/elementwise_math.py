"""Elementwise math beyond arithmetic: transcendental and special unary functions, rounding,
clamp, binary math (maximum, hypot, atan2, ...), float_power, lerp, where, nan_to_num, the is*
tests, isclose / allclose / equal, and their in-place forms.

Each op is declared once (``defop``) as a pure jax function; where ``jax.vjp``'s convention
differs from torch's (clamp at its bounds, maximum / minimum with NaN, fmax / fmin ties, hypot
and logit at the edge of their domain) the op carries its own ``jax.custom_vjp``.
"""
from __future__ import annotations

import builtins

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp

from .. import _dtype as D
from .._tensor import Tensor
from . import elementwise as _pw
from .._registry import apply, broadcast_error, defop
from .._storage import (_torch_type_name, apply_, check_inplace,
                       commit_inplace)

__all__ = ["sign", "sgn", "exp2", "expm1", "log2", "log10", "log1p", "tan", "asin", "acos",
           "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "arcsin", "arccos",
           "arctan", "arctan2", "arcsinh", "arccosh", "arctanh", "logit", "erf", "erfc",
           "erfinv", "floor", "ceil", "round", "trunc", "fix", "frac", "clamp", "clip",
           "clamp_min", "clamp_max", "float_power", "lerp", "hypot", "logaddexp", "logaddexp2",
           "maximum", "minimum", "fmax", "fmin", "where", "nan_to_num", "isnan", "isinf",
           "isfinite", "isposinf", "isneginf", "signbit", "fmod", "isclose", "allclose", "equal",
           "deg2rad", "rad2deg", "lgamma", "digamma", "sinc", "xlogy", "copysign", "positive",
           "addcmul", "addcdiv"]

_sum_to = _pw._sum_to


def _is_int(a):
    return not jnp.issubdtype(a.dtype, jnp.inexact)


def _not_impl(name, t):
    raise NotImplementedError(f"\"{name}\" not implemented for '{_torch_type_name(t.dtype)}'")


def _check_bcast(*xs):
    shapes = [tuple(x.shape) for x in xs if isinstance(x, Tensor)]
    msg = broadcast_error(shapes) if len(shapes) > 1 else None
    if msg:
        raise RuntimeError(msg)


def _need_float(name, *ts):
    for t in ts:
        if isinstance(t, Tensor) and not (t.dtype.is_floating_point or t.dtype.is_complex):
            _not_impl(name, t)


# ------------------------------------------------------------------ unary math

def _mk_unary(name, f, promote, grad_name, inplace=True, float_only=False):
    op = defop(name, promote=promote, grad_name=grad_name)(lambda a: f(a))

    def fn(input, *, out=None):
        if float_only:
            _need_float(name + "_cpu", input)
        return apply(op, input)

    def fn_(self):
        if float_only:
            _need_float(name + "_cpu", self)
        return apply_(op, self)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}, elementwise."
    globals()[name] = fn
    setattr(Tensor, name, fn)
    if inplace:
        setattr(Tensor, name + "_", fn_)
    return op


def _int_keep(f):
    # rounding ops leave integer (and bool) tensors as they are
    return lambda a: a if _is_int(a) else f(a)


def _sign_fn(a):
    if a.dtype == jnp.bool_:
        return a
    if _is_int(a):
        return jnp.sign(a)
    return jnp.where(jnp.isnan(a), jnp.zeros_like(a), jnp.sign(a))  # torch: sign(nan) == 0


def _digamma_fn(a):
    # torch: digamma(+-0) is -+inf (jax gives nan)
    return jnp.where(a == 0, jnp.copysign(jnp.asarray(jnp.inf, a.dtype), -a), jsp.digamma(a))


@jax.custom_jvp
def _logit_plain(a):
    return jnp.log(a / (1 - a))


# torch: grad / (x (1 - x)), NaN outside [0, 1]
_logit_plain.defjvps(lambda g, ans, a: g * jnp.where((a < 0) | (a > 1), jnp.nan,
                                                      1 / (a * (1 - a))))


_UNARY = {
    # name: (jax function, promote, grad_fn name)
    "sign": (_sign_fn, None, "SignBackward0"),
    "exp2": (jnp.exp2, "float", "Exp2Backward0"),
    "expm1": (jnp.expm1, "float", "Expm1Backward0"),
    "log2": (jnp.log2, "float", "Log2Backward0"),
    "log10": (jnp.log10, "float", "Log10Backward0"),
    "log1p": (jnp.log1p, "float", "Log1PBackward0"),
    "tan": (jnp.tan, "float", "TanBackward0"),
    "asin": (jnp.arcsin, "float", "AsinBackward0"),
    "acos": (jnp.arccos, "float", "AcosBackward0"),
    "atan": (jnp.arctan, "float", "AtanBackward0"),
    "sinh": (jnp.sinh, "float", "SinhBackward0"),
    "cosh": (jnp.cosh, "float", "CoshBackward0"),
    "asinh": (jnp.arcsinh, "float", "AsinhBackward0"),
    "acosh": (jnp.arccosh, "float", "AcoshBackward0"),
    "atanh": (jnp.arctanh, "float", "AtanhBackward0"),
    "erf": (jsp.erf, "float", "ErfBackward0"),
    "erfc": (jsp.erfc, "float", "ErfcBackward0"),
    "erfinv": (jsp.erfinv, "float", "ErfinvBackward0"),
    "floor": (_int_keep(jnp.floor), None, "FloorBackward0"),
    "ceil": (_int_keep(jnp.ceil), None, "CeilBackward0"),
    "trunc": (_int_keep(jnp.trunc), None, "TruncBackward0"),
    "deg2rad": (jnp.deg2rad, "float", "Deg2RadBackward0"),
    "rad2deg": (jnp.rad2deg, "float", "Rad2DegBackward0"),
    "lgamma": (jsp.gammaln, "float", "LgammaBackward0"),
    "digamma": (_digamma_fn, "float", "DigammaBackward0"),
    "sinc": (jnp.sinc, "float", "SincBackward0"),
}

_UNARY_OPS = {n: _mk_unary(n, *v) for n, v in _UNARY.items()}
_mk_unary("frac", lambda a: a - jnp.trunc(a), None, "FracBackward0", float_only=True)

sgn = sign  # noqa: F821  (the same op: z / |z| for complex, sign for real)
Tensor.sgn, Tensor.sgn_ = Tensor.sign, Tensor.sign_
_SIGN_COMPLEX = ("Unlike NumPy, torch.sign is not intended to support complex numbers. Please "
                 "use torch.sgn instead.")


def sign(input, *, out=None):
    """-1, 0 or 1 elementwise (0 for NaN); complex input is refused, as in torch (use sgn)."""
    if input.dtype.is_complex:
        raise NotImplementedError(_SIGN_COMPLEX)
    return sgn(input)


def _sign_(self):
    if self.dtype.is_complex:
        raise NotImplementedError(_SIGN_COMPLEX)
    return Tensor.sgn_(self)


Tensor.sign, Tensor.sign_ = sign, _sign_
fix = trunc  # noqa: F821
arcsin, arccos, arctan = asin, acos, atan  # noqa: F821
arcsinh, arccosh, arctanh = asinh, acosh, atanh  # noqa: F821
for _a, _b in dict(fix="trunc", arcsin="asin", arccos="acos", arctan="atan",
                   arcsinh="asinh", arccosh="acosh", arctanh="atanh").items():
    setattr(Tensor, _a, getattr(Tensor, _b))
    setattr(Tensor, _a + "_", getattr(Tensor, _b + "_"))


def positive(input):
    if input.dtype is D.bool:
        raise TypeError("The `+` operator, on a bool tensor is not supported.")
    return input


Tensor.positive = positive


@defop("logit", promote="float", grad_name="LogitBackward0")
def _logit(a, eps):
    if eps is None:
        return _logit_plain(a)
    lo, hi = eps, 1 - eps
    z = jnp.clip(jax.lax.stop_gradient(a), lo, hi)
    inside = (a >= lo) & (a <= hi)
    # torch: zero gradient where the input was clamped
    z = jnp.where(inside, a, z)
    return jnp.log(z / (1 - z))


def logit(input, eps=None):
    """log(p / (1 - p)); with ``eps`` the input is first clamped to [eps, 1 - eps]."""
    return apply(_logit, input, eps=None if eps is None else float(eps))


def _round(a, decimals):
    if _is_int(a):
        return a
    if decimals == 0:
        return jnp.round(a)
    if a.dtype in (jnp.float16, jnp.bfloat16):   # torch computes in float32 for half types
        return _round(a.astype(jnp.float32), decimals).astype(a.dtype)
    if decimals > 0:
        s = jnp.asarray(10.0 ** decimals, a.dtype)
        return jnp.round(a * s) / s
    s = jnp.asarray(10.0 ** -decimals, a.dtype)
    return jnp.round(a / s) * s


_round_op = defop("round", grad_name="RoundBackward0")(_round)


def round(input, *, decimals=0):
    """Round half to even, optionally to ``decimals`` decimal places."""
    if decimals != 0 and input.dtype.category < D._FLOAT:
        _not_impl("round_cpu", input)
    return apply(_round_op, input, decimals=int(decimals))


def logit_(self, eps=None):
    return apply_(_logit, self, eps=None if eps is None else float(eps))


def round_(self, *, decimals=0):
    return apply_(_round_op, self, decimals=int(decimals))


Tensor.logit, Tensor.logit_ = logit, logit_
Tensor.round, Tensor.round_ = round, round_


def _mk_test(name, f):
    op = defop(name, differentiable=False)(f)

    def fn(input):
        return apply(op, input)

    fn.__name__ = name
    globals()[name] = fn
    setattr(Tensor, name, fn)


_mk_test("isnan", lambda a: jnp.isnan(a) if not _is_int(a) else jnp.zeros(a.shape, bool))
_mk_test("isinf", lambda a: jnp.isinf(a) if not _is_int(a) else jnp.zeros(a.shape, bool))
_mk_test("isfinite", lambda a: jnp.isfinite(a) if not _is_int(a) else jnp.ones(a.shape, bool))
_mk_test("isposinf", lambda a: jnp.isposinf(a) if not _is_int(a) else jnp.zeros(a.shape, bool))
_mk_test("isneginf", lambda a: jnp.isneginf(a) if not _is_int(a) else jnp.zeros(a.shape, bool))
_mk_test("signbit", lambda a: jnp.signbit(a) if a.dtype != jnp.bool_ else jnp.zeros(a.shape,
                                                                                       bool))


@defop("nan_to_num", grad_name="NanToNumBackward0")
def _nan_to_num(a, nan, posinf, neginf):
    if _is_int(a):
        return a
    fi = jnp.finfo(a.dtype)
    pi = fi.max if posinf is None else posinf
    ni = fi.min if neginf is None else neginf
    return jnp.where(jnp.isnan(a), jnp.asarray(nan, a.dtype),
                     jnp.where(a == jnp.inf, jnp.asarray(pi, a.dtype),
                               jnp.where(a == -jnp.inf, jnp.asarray(ni, a.dtype), a)))


def _ntn_kw(nan, posinf, neginf):
    return dict(nan=float(nan), posinf=None if posinf is None else float(posinf),
                neginf=None if neginf is None else float(neginf))


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    """Replace NaN, +inf and -inf by ``nan``, ``posinf`` (default: the dtype's max) and
    ``neginf`` (default: its min)."""
    return apply(_nan_to_num, input, **_ntn_kw(nan, posinf, neginf))


Tensor.nan_to_num = nan_to_num
Tensor.nan_to_num_ = lambda self, nan=0.0, posinf=None, neginf=None: apply_(
    _nan_to_num, self, **_ntn_kw(nan, posinf, neginf))


# ------------------------------------------------------------------ clamp

def _clamp_vjp_fn(which):
    @jax.custom_vjp
    def f(x, *b):
        out = x
        if which in ("lo", "both"):
            out = jnp.maximum(out, b[0])
        if which in ("hi", "both"):
            out = jnp.minimum(out, b[-1])
        # torch propagates a NaN input
        return jnp.where(jnp.isnan(x), x, out) if not _is_int(x) else out

    def fwd(x, *b):
        return f(x, *b), (x, b)

    def bwd(res, g):
        x, b = res
        z = jnp.zeros_like(g)
        if which == "both":
            lo, hi = b
            gx = jnp.where((x >= lo) & (x <= hi), g, z)
            glo = jnp.where((x < lo) & (lo < hi), g, z)
            ghi = jnp.where((x > hi) | (hi < lo), g, z)
            grads = (glo, ghi)
        elif which == "lo":
            gx = jnp.where(x >= b[0], g, z)
            grads = (jnp.where(x < b[0], g, z),)
        else:
            gx = jnp.where(x <= b[0], g, z)
            grads = (jnp.where(x > b[0], g, z),)
        return (_sum_to(gx, x.shape),) + tuple(_sum_to(gb, jnp.shape(bb))
                                               for gb, bb in zip(grads, b))

    f.defvjp(fwd, bwd)
    return f


_CLAMP_FNS = {w: _clamp_vjp_fn(w) for w in ("lo", "hi", "both")}


def _clamp_name(kw):
    return "ClampBackward1" if kw["scalar"] else {"lo": "ClampMinBackward1",
                                                  "hi": "ClampMaxBackward1"}.get(
        kw["which"], "ClampBackward0")


@defop("clamp", promote="common", grad_name=_clamp_name)
def _clamp(x, *b, which, scalar):
    return _CLAMP_FNS[which](x, *b)


def _clamp_args(min, max):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    which = "both" if (min is not None and max is not None) else ("lo" if min is not None
                                                                  else "hi")
    bounds = tuple(b for b in (min, max) if b is not None)
    scalar = not builtins.any(isinstance(b, Tensor) for b in bounds)
    if not scalar and not builtins.all(isinstance(b, Tensor) for b in bounds):
        raise TypeError("clamp() received an invalid combination of arguments - got a Tensor "
                        "and a number as bounds: both must be Tensors or both numbers")
    return bounds, dict(which=which, scalar=scalar)


def clamp(input, min=None, max=None, *, out=None):
    """Clamp into [min, max]; bounds are numbers or (broadcasting) Tensors. The gradient
    passes where min <= input <= max (bounds included), as in torch."""
    bounds, kw = _clamp_args(min, max)
    _check_bcast(input, *bounds)
    return apply(_clamp, input, *bounds, **kw)


def clamp_(self, min=None, max=None):
    bounds, kw = _clamp_args(min, max)
    return apply_(_clamp, self, *bounds, **kw)


clip = clamp


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


Tensor.clamp = Tensor.clip = clamp
Tensor.clamp_ = Tensor.clip_ = clamp_
Tensor.clamp_min, Tensor.clamp_max = clamp_min, clamp_max
Tensor.clamp_min_ = lambda self, min: clamp_(self, min=min)
Tensor.clamp_max_ = lambda self, max: clamp_(self, max=max)


# ------------------------------------------------------------------ binary math

def _binary(name, fn, *, promote="common", grad_name=None, inplace=True, float_only=False,
            tensor_other=False, method=True):
    op = defop(name, promote=promote, grad_name=grad_name)(fn)

    def check(input, other):
        if tensor_other and not isinstance(other, Tensor):
            raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                            f"{type(other).__name__}")
        if float_only:
            _need_float(name + "_cpu", input, other)

    def f(input, other, *, out=None):
        check(input, other)
        return apply(op, input, other)

    def f_(self, other):
        check(self, other)
        return apply_(op, self, other)

    f.__name__ = f.__qualname__ = name
    globals()[name] = f
    if method:
        setattr(Tensor, name, f)
    if inplace:
        setattr(Tensor, name + "_", f_)
    return op


def _with_vjp(primal, grads):
    """``primal(a, b)`` with the VJP ``grads(a, b, g) -> (ga, gb)`` (full size; summed back to
    the input shapes here)."""
    @jax.custom_vjp
    def h(a, b):
        return primal(a, b)

    def fwd(a, b):
        return primal(a, b), (a, b)

    def bwd(res, g):
        a, b = res
        ga, gb = grads(a, b, g)
        return _sum_to(ga.astype(a.dtype), a.shape), _sum_to(gb.astype(b.dtype), jnp.shape(b))

    h.defvjp(fwd, bwd)
    return h


def _maximum_grads(a, b, g):
    # torch: ties split evenly; a NaN on either side passes the full gradient to both
    half = jnp.where(a == b, g / 2, g)
    return jnp.where(a < b, 0, half), jnp.where(a > b, 0, half)


def _minimum_grads(a, b, g):
    half = jnp.where(a == b, g / 2, g)
    return jnp.where(a > b, 0, half), jnp.where(a < b, 0, half)


def _fmax_grads(a, b, g):
    take_a = (a >= b) | jnp.isnan(b)
    return jnp.where(take_a, g, 0), jnp.where(take_a, 0, g)


def _fmin_grads(a, b, g):
    take_a = (a <= b) | jnp.isnan(b)
    return jnp.where(take_a, g, 0), jnp.where(take_a, 0, g)


def _hypot_grads(a, b, g):
    r = jnp.hypot(a, b)
    return g * a / r, g * b / r


def _atan2_grads(a, b, g):
    d = a * a + b * b
    r = jnp.where(d == 0, 0, 1 / jnp.where(d == 0, 1, d))  # torch: zero gradient at (0, 0)
    return g * b * r, -g * a * r


def _logaddexp_grads(a, b, g):
    return g / (1 + jnp.exp(b - a)), g / (1 + jnp.exp(a - b))


def _logaddexp2_grads(a, b, g):
    return g / (1 + jnp.exp2(b - a)), g / (1 + jnp.exp2(a - b))


_maximum_v = _with_vjp(jnp.maximum, _maximum_grads)
_minimum_v = _with_vjp(jnp.minimum, _minimum_grads)
_fmax_v = _with_vjp(jnp.fmax, _fmax_grads)
_fmin_v = _with_vjp(jnp.fmin, _fmin_grads)
_hypot_v = _with_vjp(jnp.hypot, _hypot_grads)
_atan2_v = _with_vjp(jnp.arctan2, _atan2_grads)
_logaddexp_v = _with_vjp(jnp.logaddexp, _logaddexp_grads)
_logaddexp2_v = _with_vjp(jnp.logaddexp2, _logaddexp2_grads)


def _int_or(v, f):
    return lambda a, b: f(a, b) if _is_int(a) else v(a, b)


_binary("maximum", _int_or(_maximum_v, jnp.maximum), grad_name="MaximumBackward0",
        inplace=False, tensor_other=True)
_binary("minimum", _int_or(_minimum_v, jnp.minimum), grad_name="MinimumBackward0",
        inplace=False, tensor_other=True)
_binary("fmax", _int_or(_fmax_v, jnp.maximum), grad_name="FmaxBackward0", inplace=False,
        tensor_other=True)
_binary("fmin", _int_or(_fmin_v, jnp.minimum), grad_name="FminBackward0", inplace=False,
        tensor_other=True)
_binary("hypot", lambda a, b: _hypot_v(a, b), grad_name="HypotBackward0", float_only=True,
        tensor_other=True)
_binary("atan2", lambda a, b: _atan2_v(a, b), promote="float", grad_name="Atan2Backward0",
        tensor_other=True)
_binary("logaddexp", lambda a, b: _logaddexp_v(a, b), grad_name="LogaddexpBackward0",
        inplace=False, float_only=True, tensor_other=True)
_binary("logaddexp2", lambda a, b: _logaddexp2_v(a, b), grad_name="Logaddexp2Backward0",
        inplace=False, float_only=True, tensor_other=True)
_fmod_op = _binary("fmod", jnp.fmod, grad_name="FmodBackward0")


def fmod(input, other, *, out=None):  # noqa: F811
    _pw.check_int_div(input, other)
    return apply(_fmod_op, input, other)


def _fmod_(self, other):
    _pw.check_int_div(self, other)
    return apply_(_fmod_op, self, other)


Tensor.fmod, Tensor.fmod_ = fmod, _fmod_
_binary("copysign", jnp.copysign, promote="float", grad_name="CopysignBackward0")
_binary("xlogy", lambda a, b: jsp.xlogy(a, b), promote="float", grad_name="XlogyBackward0")
arctan2 = atan2  # noqa: F821
Tensor.arctan2, Tensor.arctan2_ = Tensor.atan2, Tensor.atan2_


# ------------------------------------------------------------------ float_power, lerp, where

@defop("float_power", grad_name="PowBackward1")
def _float_power(a, b, dtype):
    a = jnp.asarray(a).astype(dtype)
    b = jnp.asarray(b).astype(dtype)
    return _pw._pow_masked(a, b)


def _fp_dtype(input, exponent):
    cx = builtins.any((isinstance(x, Tensor) and x.dtype.is_complex) or isinstance(x, complex)
                      for x in (input, exponent))
    return D.complex128 if cx else D.float64


def float_power(input, exponent, *, out=None):
    """input ** exponent computed in double precision (float64, or complex128)."""
    return apply(_float_power, input, exponent, dtype=_fp_dtype(input, exponent).np)


def float_power_(self, exponent):
    dt = _fp_dtype(self, exponent)
    if self.dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{_torch_type_name(self.dtype)} but the operation's result requires "
                           f"dtype {_torch_type_name(dt)}")
    return apply_(_float_power, self, exponent, dtype=dt.np)


Tensor.float_power, Tensor.float_power_ = float_power, float_power_


@defop("lerp", grad_name="LerpBackward0")
def _lerp(a, b, w):
    w = w.astype(a.dtype) if hasattr(w, "dtype") else jnp.asarray(w, a.dtype)
    return a + w * (b - a)


def _meta_name(d):
    # the C++ type names torch's messages print
    return {"float32": "float", "float64": "double", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int"}.get(d.name, d.name)


def lerp(input, end, weight, *, out=None):
    """input + weight * (end - input); ``weight`` a number or a Tensor."""
    _need_float("lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar",
                input)
    for nm, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t.dtype is not input.dtype:
            raise RuntimeError(f"expected dtype {_meta_name(input.dtype)} for `{nm}` but got "
                               f"dtype {_meta_name(t.dtype)}")
    return apply(_lerp, input, end, weight)


def lerp_(self, end, weight):
    check_inplace(self)
    return commit_inplace(self, lerp(self, end, weight))


Tensor.lerp, Tensor.lerp_ = lerp, lerp_


@defop("where", grad_name="WhereBackward0", saves=False)
def _where(c, x, y, dtype):
    return jnp.where(c, jnp.asarray(x).astype(dtype), jnp.asarray(y).astype(dtype))


def _promote_of(*xs):
    dims, zeros, scalars = [], [], []
    for a in xs:
        if isinstance(a, Tensor):
            (dims if a.ndim else zeros).append(a.dtype)
        elif isinstance(a, (builtins.bool, int, float, complex)):
            scalars.append(D.scalar_dtype(a))
        else:                                    # a numpy scalar: a 0-dim tensor
            zeros.append(D.from_jax(jnp.asarray(a).dtype))
    return D.result_type_of(dims, zeros, scalars)


def where(condition, input=None, other=None, *, out=None):
    """Elementwise select (with broadcasting and torch's promotion of input and other);
    ``where(condition)`` is ``nonzero(condition, as_tuple=True)``."""
    if input is None and other is None:
        import numpy as np
        nz = np.nonzero(np.asarray(condition._data))
        return tuple(Tensor._make(jnp.asarray(i, jnp.int64)) for i in nz)
    if condition.dtype is not D.bool:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {_torch_type_name(condition.dtype)}")
    _check_bcast(condition, input, other)
    return apply(_where, condition, input, other, dtype=_promote_of(input, other).np)


Tensor.where = lambda self, condition, other: where(condition, self, other)


# ------------------------------------------------------------------ addcmul, addcdiv

@defop("addcmul", promote="common", grad_name=lambda kw: ("AddcdivBackward0" if kw["div"]
                                                          else "AddcmulBackward0"))
def _addcmul(a, t1, t2, value, div):
    v = jnp.asarray(value, a.dtype)
    return a + v * (t1 / t2 if div else t1 * t2)


def _addc_check(name, input, t1, t2, value):
    _check_bcast(input, t1, t2)
    if name == "addcdiv" and builtins.all(isinstance(t, Tensor) and t.dtype.category < D._FLOAT
                                          for t in (t1, t2)):
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a "
                           "future release addcdiv will perform a true division of tensor1 and "
                           "tensor2. The historic addcdiv behavior can be implemented as "
                           "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
                           "for integer inputs and as (input + value * tensor1 / tensor2) for "
                           "float inputs. The future addcdiv behavior is just the latter "
                           "implementation: (input + value * tensor1 / tensor2), for all dtypes.")


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 * tensor2."""
    _addc_check("addcmul", input, tensor1, tensor2, value)
    return apply(_addcmul, input, tensor1, tensor2, value=value, div=False)


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    """input + value * tensor1 / tensor2 (floating tensors only)."""
    _addc_check("addcdiv", input, tensor1, tensor2, value)
    return apply(_addcmul, input, tensor1, tensor2, value=value, div=True)


def _addcmul_(self, tensor1, tensor2, *, value=1):
    _addc_check("addcmul", self, tensor1, tensor2, value)
    return apply_(_addcmul, self, tensor1, tensor2, value=value, div=False)


def _addcdiv_(self, tensor1, tensor2, *, value=1):
    _addc_check("addcdiv", self, tensor1, tensor2, value)
    return apply_(_addcmul, self, tensor1, tensor2, value=value, div=True)


Tensor.addcmul, Tensor.addcdiv = addcmul, addcdiv
Tensor.addcmul_, Tensor.addcdiv_ = _addcmul_, _addcdiv_


# ------------------------------------------------------------------ isclose, allclose, equal

@defop("isclose", differentiable=False)
def _isclose(a, b, rtol, atol, equal_nan, cdt):
    close = a == b
    if equal_nan and not _is_int(a):
        close = close | (jnp.isnan(a) & jnp.isnan(b))
    if rtol == 0 and atol == 0:
        return close
    ca = a.astype(cdt) if a.dtype == jnp.bool_ else a
    cb = b.astype(cdt) if b.dtype == jnp.bool_ else b
    if _is_int(ca):
        allowed = (atol + jnp.abs(rtol * cb.astype(cdt))).astype(cdt)
        actual = jnp.abs(ca - cb).astype(cdt)
    else:
        allowed = atol + jnp.abs(rtol * cb)
        actual = jnp.abs(ca - cb)
    return close | (jnp.isfinite(actual) & (actual <= allowed))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|input - other| <= atol + rtol * |other|, elementwise (both must have one dtype)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"isclose(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{input.dtype.name} did not match {other.dtype.name}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    return apply(_isclose, input, other, rtol=float(rtol), atol=float(atol),
                 equal_nan=bool(equal_nan), cdt=D.get_default_dtype().np)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True if every element is close (a Python bool)."""
    return builtins.bool(jnp.all(isclose(input, other, rtol, atol, equal_nan)._data))


def equal(input, other):
    """True if the two tensors have the same shape and elements (a Python bool)."""
    if tuple(input.shape) != tuple(other.shape):
        return False
    a, b = input._data, other._data
    if a.dtype != b.dtype:
        dt = D.promote_types(input.dtype, other.dtype).np
        a, b = a.astype(dt), b.astype(dt)
    return builtins.bool(jnp.all(a == b))


Tensor.isclose, Tensor.allclose, Tensor.equal = isclose, allclose, equal


# ------------------------------------------------------------------ in-place forms of the arithmetic ops

def _inplace_of(op, **fixed):
    if op is _pw._remainder or op is _pw._div_mode:
        def f_(self, other):
            _pw.check_int_div(self, other)
            return apply_(op, self, other, **fixed)
        return f_

    def f_(self, other):
        return apply_(op, self, other, **fixed)
    return f_


_CMP = dict(eq=jnp.equal, ne=jnp.not_equal, lt=jnp.less, le=jnp.less_equal, gt=jnp.greater,
            ge=jnp.greater_equal)


@defop("cmp_", promote="common", grad_name=lambda kw: kw["which"].capitalize() + "Backward0")
def _cmp_inplace(a, b, which, dtype):
    # torch's in-place comparison: self's dtype, and a zero gradient (its grad_fn is recorded)
    return jax.lax.stop_gradient(_CMP[which](a, b).astype(dtype))


def _cmp_(which):
    def f_(self, other):
        return apply_(_cmp_inplace, self, other, which=which, dtype=self.dtype.np)
    return f_


for _n, _w in dict(eq="eq", ne="ne", lt="lt", le="le", gt="gt", ge="ge", greater="gt",
                   less="lt", greater_equal="ge", less_equal="le", not_equal="ne").items():
    setattr(Tensor, _n + "_", _cmp_(_w))

for _n, _op in dict(logical_and=_pw._land, logical_or=_pw._lor,
                    logical_xor=_pw._lxor, bitwise_and=_pw._band, bitwise_or=_pw._bor,
                    bitwise_xor=_pw._bxor, remainder=_pw._remainder,
                    true_divide=_pw._div).items():
    setattr(Tensor, _n + "_", _inplace_of(_op))
Tensor.floor_divide_ = _inplace_of(_pw._div_mode, rounding_mode="floor")
Tensor.logical_not_ = lambda self: apply_(_pw._lnot, self)
Tensor.bitwise_not_ = lambda self: apply_(_pw._bnot, self)
Tensor.subtract_, Tensor.multiply_, Tensor.divide_ = Tensor.sub_, Tensor.mul_, Tensor.div_
Tensor.negative_, Tensor.absolute_ = Tensor.neg_, Tensor.abs_
Tensor.__imod__ = Tensor.remainder_
Tensor.__ifloordiv__ = Tensor.floor_divide_
Tensor.__iand__, Tensor.__ior__, Tensor.__ixor__ = (Tensor.bitwise_and_, Tensor.bitwise_or_,
                                                    Tensor.bitwise_xor_)


# ------------------------------------------------------------------ isin

__all__ += ["isin"]


@defop("isin", promote="common", differentiable=False)
def _isin(a, b, invert):
    r = jnp.isin(a, jnp.reshape(b, -1))
    return ~r if invert else r


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` is in ``test_elements`` (either may be a number)."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments - got (" +
                        type(elements).__name__ + ", " + type(test_elements).__name__ + ")")
    return apply(_isin, elements, test_elements, invert=bool(invert))


# ------------------------------------------------------------------ out=

def wire_out(ns, names):
    """Give the functions ``names`` of namespace ``ns`` torch's ``out=`` (``_surface.with_out``).
    Tensor methods keep the plain functions: torch's methods take no ``out``."""
    import inspect
    from ._surface import with_out
    for n in names:
        f = ns[n]
        try:
            if "out" not in inspect.signature(f).parameters:
                continue
        except (TypeError, ValueError):
            continue
        ns[n] = with_out(f, n)


wire_out(globals(), __all__)
