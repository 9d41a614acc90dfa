"""Arithmetic with torch's type promotion: add, sub, mul, div, floor_divide, remainder, pow, neg,
and their in-place forms; integer division by zero raises torch's error."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from .._registry import apply, defop, sum_to as _sum_to
from ._surface import alias, method, public
from .special_ops import no_derivative
from .._storage import apply_


__all__ = ['add', 'sub', 'subtract', 'mul', 'multiply', 'div', 'divide', 'true_divide', 'neg',
           'negative', 'pow', 'rsub', 'floor_divide', 'remainder']


# ------------------------------------------------------------------ arithmetic

def _real(g):
    return not jnp.iscomplexobj(g)


def _add_vjp(cots, xs, needs, alpha=1, sign=1):
    """AddBackward0 / SubBackward0: ``g`` and ``±alpha * g`` (summed to each input's shape by
    the registry)."""
    (g,) = cots
    if not _real(g):
        return NotImplemented
    out = [g] if needs[0] else []
    if needs[1]:
        f = sign * alpha
        out.append(g if f == 1 else -g if f == -1 else g * f)
    return out


def _mul_vjp(cots, xs, needs):
    """MulBackward0: ``g * b`` and ``g * a``."""
    (g,), (a, b) = cots, xs
    if not _real(g):
        return NotImplemented
    return [g * o for o, n in ((b, needs[0]), (a, needs[1])) if n]


def _div_vjp(cots, xs, needs):
    """DivBackward0: ``g / b`` and ``-g * a / b^2``."""
    (g,), (a, b) = cots, xs
    if not _real(g):
        return NotImplemented
    out = []
    if needs[0]:
        out.append(g / b)
    if needs[1]:
        out.append(-g * a / (b * b))
    return out


def _scaled(b, alpha):
    """``b * alpha`` in ``b``'s dtype (torch's alpha takes no part in the promotion)."""
    return b if alpha == 1 else (b * alpha).astype(jnp.result_type(b))


def _two_sum(x, y):
    s = x + y
    bb = s - x
    return s, (x - (s - bb)) + (y - bb)


def _round_odd(s, e):
    """``s`` (a float64 sum) rounded to odd given its error ``e``: the last bit set where the
    sum was inexact, the truncation toward zero underneath."""
    bits = jax.lax.bitcast_convert_type(s, jnp.int64)
    odd = (bits - ((e < 0) != (s < 0)).astype(jnp.int64)) | 1
    return jnp.where(jnp.isfinite(e) & (e != 0), jax.lax.bitcast_convert_type(odd, s.dtype), s)


def fma64(x, y, z):
    """Correctly rounded float64 ``x * y + z`` (torch's vectorized fmadd) from exact steps
    only: Dekker's product (halves split by rounding to 26 bits, so every partial product is
    exact and no contraction by XLA can change it), then Boldo and Melquiond's sum of three
    with a round-to-odd middle step. numpy's interpreter computes the same bits."""
    def split(v):
        h = jax.lax.reduce_precision(v, exponent_bits=11, mantissa_bits=25)
        return h, v - h
    p = x * y
    xh, xl = split(x)
    yh, yl = split(y)
    err = ((xh * yh - p) + xh * yl + xl * yh) + xl * yl
    th, tl = _two_sum(z, err)
    vh, vl = _two_sum(p, th)
    w, we = _two_sum(vl, tl)
    r = vh + _round_odd(w, we)
    ok = jnp.isfinite(r) & jnp.isfinite(err)
    return jnp.where(ok, r, p + z)


def _fma_alpha32(a, b, alpha, sign):
    """``fma_add`` for float32, float16 and bfloat16: the alpha taken in their dtype, ``b *
    alpha`` exact in float64, the sum rounded once to float32 (rounded to odd in float64 first:
    53 >= 24 + 2 bits, Boldo and Melquiond's theorem), then to the half type, as the kernel's
    float32 fmadd converts back."""
    dt = jnp.result_type(a)
    al = jnp.asarray(alpha).astype(dt).astype(jnp.float64)
    b64 = b.astype(jnp.float64) * al
    s, e = _two_sum(a.astype(jnp.float64), -b64 if sign == -1 else b64)
    return _round_odd(s, e).astype(jnp.float32).astype(dt)


def fma_add(a, b, alpha, sign=1):
    """torch's CPU ``a + sign * alpha * b`` (its vectorized ``fmadd(b, alpha, a)``) for real
    floating ``a``/``b``, rounded once, from exact operations only (XLA's contraction of a
    product into an add cannot change it; numpy's interpreter computes the same bits); ``alpha``
    a Python number or a traced float64. None for other dtypes."""
    dt = jnp.result_type(a)
    if dt in (jnp.float16, jnp.bfloat16, jnp.float32):
        return _fma_alpha32(a, b, alpha, sign)
    if dt == jnp.float64:
        al = jnp.asarray(alpha, jnp.float64)
        return fma64(b, -al if sign == -1 else al, a)
    return None


def _half_alpha(f, sign=1):
    """``f(a, b, alpha)`` where floating types with ``alpha != 1`` take torch's fused
    multiply-add, rounding once (``fma_add``)."""
    def g(a, b, alpha=1):
        if alpha != 1 and not isinstance(alpha, complex):
            r = fma_add(a, b, alpha, sign)
            if r is not None:
                return r
        return f(a, _scaled(b, alpha))
    return g


@defop("add", promote="common", saves=False, grad_name="AddBackward0", vjp=_add_vjp)
def _add(a, b, alpha=1):
    return _half_alpha(lambda x, y: x + y)(a, b, alpha)


@defop("sub", promote="common", saves=False, grad_name="SubBackward0",
       vjp=lambda cots, xs, needs, alpha=1: _add_vjp(cots, xs, needs, alpha, -1))
def _sub(a, b, alpha=1):
    return _half_alpha(lambda x, y: x - y, -1)(a, b, alpha)


@defop("rsub", promote="common", saves=False, grad_name="RsubBackward1")
def _rsub(a, b, alpha=1):
    return _half_alpha(lambda x, y: x - y, -1)(b, a, alpha)


@defop("mul", promote="common", saves="others", grad_name="MulBackward0", vjp=_mul_vjp,
       opmath=True)
def _mul(a, b):
    return a * b


@defop("div", promote="float", grad_name="DivBackward0", vjp=_div_vjp, opmath=True)
def _div(a, b):
    return a / b


def _opmath(f):
    """``f`` computed in float32 for float16/bfloat16 operands and rounded once, as torch's
    CPU kernels do (their opmath type); other dtypes as they are."""
    def g(*xs, **kw):
        dt = next((x.dtype for x in xs if hasattr(x, "dtype")), None)
        if dt in (jnp.float16, jnp.bfloat16):
            up = [x.astype(jnp.float32) if hasattr(x, "dtype") and x.dtype == dt else x
                  for x in xs]
            return f(*up, **kw).astype(dt)
        return f(*xs, **kw)
    return g


def _div_floor_float(a, b):
    """torch's div_floor_floating: the quotient from fmod (1.0 // 0.1 is 9, not
    floor(1.0 / 0.1) = 10), rounded to the nearest integer, a signed zero for a zero quotient."""
    mod = jnp.fmod(a, b)
    div = (a - mod) / b
    div = jnp.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    fl = jnp.floor(div)
    fl = jnp.where(div - fl > 0.5, fl + 1, fl)
    q = a / b
    out = jnp.where(div != 0, fl, jnp.copysign(jnp.zeros_like(q), q))
    return jnp.where(b == 0, jnp.floor(q), out)


@defop("div_mode", promote="common", grad_name="DivBackward0", opmath=True)
def _div_mode(a, b, rounding_mode):
    if rounding_mode == "trunc":
        if jnp.issubdtype(a.dtype, jnp.integer):
            q = jnp.where(b == 0, 0, a // jnp.where(b == 0, 1, b))
            return jnp.where((q < 0) & (q * b != a), q + 1, q)
        return jnp.trunc(a / b)
    if jnp.issubdtype(a.dtype, jnp.integer):
        return jnp.floor_divide(a, b)
    if jnp.iscomplexobj(a):
        return jnp.floor(a / b)
    return _div_floor_float(a, b)         # (in the dtype itself: torch's reduced-float kernel)


# ------------------------------------------------------------------ integer division by zero
#
# torch raises ``RuntimeError: ZeroDivisionError`` for an integer (or bool) result divided by
# zero (//, %, div with rounding_mode, fmod, remainder and their in-place forms). A Python int
# divisor is checked for free; an integer tensor divisor is read back to the host (one jitted
# any(x == 0) and a sync; on CPU a numpy read of the host buffer, ~15 us) ONLY when both operands are integers. Float results never check.

_any_zero = jax.jit(lambda x: jnp.any(x == 0))
_ON_CPU = jax.default_backend() == "cpu"


def _int_like(x):
    if isinstance(x, Tensor):
        return x.dtype.category < D._FLOAT
    return isinstance(x, int)


def check_int_div(a, b, kernel=None):
    """Raise torch's ``RuntimeError: ZeroDivisionError`` for integer ``a`` / zero ``b``; with
    ``kernel``, first torch's NotImplementedError where both promote to bool (no kernel)."""
    a, b = (int(v) if isinstance(v, np.integer) else v for v in (a, b))   # (numpy's integers)
    if kernel is not None and _is_bool(a) and _is_bool(b):
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    if kernel is not None and any(isinstance(x, complex) or isinstance(x, Tensor)
                                  and x.dtype.is_complex for x in (a, b)):
        from .typeinfo import result_type
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{D.legacy_name(result_type(a, b))}'")
    if not (_int_like(b) and _int_like(a)):
        return
    if isinstance(a, Tensor) and a._d.size == 0:
        return         # torch checks inside the kernel: an empty result never divides
    if isinstance(b, Tensor):
        d = b._data
        if isinstance(d, jax.core.Tracer) or d.size == 0:
            return     # traced (inside compile): the value is not known here
        if _ON_CPU:
            zero = bool((np.asarray(d) == 0).any())   # a host array already: ~15 us
        else:
            zero = bool(_any_zero(d))                 # one reduced bool comes back
        if zero:
            raise RuntimeError("ZeroDivisionError")
    elif b == 0 or (isinstance(a, Tensor) and not isinstance(b, bool) and
                    -2 ** 63 <= b < 2 ** 64 and D.host_scalar(b, _result_dtype(a, b)) == 0):
        # (torch converts the number to the integer result dtype first: 256 is a uint8 zero)
        raise RuntimeError("ZeroDivisionError")


def _result_dtype(a, b):
    from .typeinfo import result_type
    return result_type(a, b)


@defop("remainder", promote="common", grad_name="RemainderBackward0",
       saves={0: (1,), 1: (1,)})                       # (read by other's gradient only)
def _remainder(a, b):
    return jnp.remainder(a, b)


@defop("neg", saves=False, grad_name="NegBackward0")
def _neg(a):
    return -a


def _pow_name(kw):
    return {"ts": "PowBackward0", "tt": "PowBackward1", "st": "PowBackward2"}[kw["kind"]]


@defop("pow", promote="common", grad_name=_pow_name,
       saves=lambda kw: True if kw["kind"] == "ts" else "both")   # (x ** t: the result too)
def _pow(a, b, kind):
    # torch masks the exponent's zero so that d/dx x**0 is 0, not nan, at x = 0
    if jnp.issubdtype(a.dtype, jnp.integer):
        return _int_pow(a, b)
    if jnp.iscomplexobj(a):
        return _pow_complex(a, b, kind)
    return _pow_masked(a, b)


def _powi(a, b):
    """torch's powi_impl: binary exponentiation over every bit of a non-negative exponent,
    wrapping as the dtype does (jnp.power reads only the exponent's low 6 bits)."""
    a, b = jnp.broadcast_arrays(a, b)
    acc = jnp.ones_like(a)
    one = jnp.ones_like(b)
    for _ in range(jnp.dtype(a.dtype).itemsize * 8):
        acc = jnp.where((b & one) != 0, acc * a, acc)
        a = a * a
        b = jax.lax.shift_right_logical(b, one)
    return acc


def _int_pow(a, b):
    """torch's integer power: a negative exponent gives 1 for base 1, +-1 for base -1, else 0."""
    b = jnp.asarray(b, a.dtype)
    if not jnp.issubdtype(a.dtype, jnp.signedinteger):
        return _powi(a, b)
    neg = b < 0
    pos = _powi(a, jnp.where(neg, 0, b))
    one = jnp.ones_like(pos)
    negv = jnp.where(a == 1, one, jnp.where(a == -1, jnp.where(b % 2 == 0, one, -one),
                                             jnp.zeros_like(pos)))
    return jnp.where(neg, negv, pos)


def _check_int_pow(input, exponent):
    # torch has no pow kernel for bool (a bool tensor to a bool scalar power is the tensor's
    # own fill: _pow_bool)
    if _is_bool(input) and _is_bool(exponent) and not (
            isinstance(input, Tensor) and isinstance(exponent, bool)):
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    # torch refuses an integer tensor to a negative Python-int power (a tensor exponent computes)
    if (isinstance(input, Tensor) and isinstance(exponent, int) and exponent < 0
            and input.dtype.category < D._FLOAT):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    # torch's kernel takes a number exponent in an integer or half-precision result dtype (a
    # checked conversion; float and double take it as a double)
    if isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        e = exponent.item() if isinstance(exponent, np.generic) else exponent
        dt = _result_dtype(input, e)
        if dt.category < D._FLOAT or dt in (D.float16, D.bfloat16):
            D.check_scalar(e, dt)


@jax.custom_vjp
def _pow_masked(a, b):
    return jnp.power(a, b)


def _pow_fwd(a, b):
    out = jnp.power(a, b)
    return out, (a, b, out)


def _pow_bwd(res, g):
    a, b, out = res
    ga = jnp.where(b == 0, 0.0, g * b * jnp.power(a, b - 1)).astype(a.dtype)
    gb = jnp.where((a == 0) & (jnp.real(b) >= 0), 0.0, g * out * jnp.log(a)).astype(b.dtype)
    return _sum_to(ga, a.shape), _sum_to(gb, jnp.shape(b))


_pow_masked.defvjp(_pow_fwd, _pow_bwd)


def _c10_recip(z):
    """1 / z as c10::complex divides (numpy's algorithm): 1 / 0 is inf + nanj."""
    c, d = jnp.real(z), jnp.imag(z)
    abs_c, abs_d = jnp.abs(c), jnp.abs(d)
    one, zero = jnp.ones_like(c), jnp.zeros_like(c)
    big_c = abs_c >= abs_d
    rat = jnp.where(big_c, d / c, c / d)
    scl = 1 / jnp.where(big_c, c + d * rat, d + c * rat)
    re = jnp.where(big_c, (one + zero * rat) * scl, (one * rat + zero) * scl)
    im = jnp.where(big_c, (zero - one * rat) * scl, (zero * rat - one) * scl)
    both0 = (abs_c == 0) & (abs_d == 0)
    re = jnp.where(both0, one / abs_c, re)
    im = jnp.where(both0, zero / abs_d, im)
    return jax.lax.complex(re, im)


def _cpow(a, b, kind):
    """torch's complex pow (values only): std::pow, exp(b log a), whose zero base gives
    inf + nanj for an exponent of negative real part, nan + nanj for a zero (or nan) real part
    and 0 - 0j (0 + 0j for a negative imaginary part) for a positive one; a Python-number
    exponent of 0, 1, 2, 3, -2, 0.5, -0.5 or -1 is torch's fill, copy, products, sqrt, rsqrt and
    reciprocal (c10's division)."""
    r = jnp.power(a, b)
    br, bi = jnp.real(b), jnp.imag(b)
    nan = jnp.asarray(jnp.nan, br.dtype)
    zre = jnp.where(br < 0, jnp.inf, jnp.where(br > 0, 0, nan)).astype(br.dtype)
    zim = jnp.where(br > 0, jnp.where(jnp.isfinite(br) & (bi < 0), 0.0, -0.0), nan)
    r = jnp.where(a == 0, jax.lax.complex(zre, zim.astype(br.dtype)), r)
    if kind != "ts":
        return r
    # (a zero-dim exponent: the comparisons below are on a scalar, selected elementwise)
    sq = jnp.sqrt(a)
    sq = jnp.where(a == 0, jax.lax.complex(jnp.zeros_like(jnp.real(a)), jnp.imag(a)), sq)
    aa = a * a
    for e, v in ((0, jnp.ones_like(a)), (1, a), (2, aa), (3, aa * a), (-2, _c10_recip(aa)), (0.5, sq),
                 (-0.5, _c10_recip(sq)), (-1, _c10_recip(a))):
        r = jnp.where(b == e, v, r)
    return r


@functools.partial(jax.custom_vjp, nondiff_argnums=(2,))
def _pow_complex(a, b, kind):
    return _cpow(a, b, kind)


def _pow_complex_fwd(a, b, kind):
    out = _cpow(a, b, kind)
    return out, (a, b, out)


_pow_complex.defvjp(_pow_complex_fwd, lambda kind, res, g: _pow_bwd(res, g))


def _alpha(alpha, input=None, other=None, inplace=False):
    """The op's ``alpha`` keyword, after torch's check of it against the result dtype (of
    ``input`` and ``other`` when given; in place, a result ``input`` cannot hold fails its
    cast first). A 0-dim tensor (or numpy scalar) alpha is read as its Python number, as
    torch's Scalar parameter reads it: the op's static argument is a number."""
    if isinstance(alpha, Tensor):
        alpha = alpha.item()
    elif isinstance(alpha, np.generic):
        alpha = D.parser_scalar(alpha)      # (a numpy bool is no bool there)
    if input is not None and not (alpha.__class__ is int and alpha == 1):
        from .typeinfo import can_cast, result_type
        try:
            dt = result_type(input, other)
        except TypeError:
            dt = None
        if dt is not None and not (inplace and not can_cast(dt, input.dtype)):
            if isinstance(alpha, bool) and dt is not D.bool:
                raise RuntimeError("Boolean alpha only supported for Boolean results.")
            if isinstance(alpha, (float, complex)) and not (dt.is_floating_point
                                                             or dt.is_complex):
                raise RuntimeError("For integral input tensors, argument alpha must not be a "
                                   "floating point number.")
            if isinstance(alpha, complex) and not dt.is_complex:
                raise RuntimeError("For non-complex input tensors, argument alpha must not be a "
                                   "complex number.")
            if isinstance(alpha, (int, float, complex)):
                D.check_scalar(alpha, dt)
    # alpha=1 (the common case) shares the compiled entry of a plain add/sub
    return {} if alpha == 1 else {"alpha": alpha}


@public(method=True, out=True)
def add(input, other, *, alpha=1):
    """input + alpha * other, with torch's type promotion."""
    return apply(_add, input, other, **_alpha(alpha, input, other))


def _is_bool(x):
    return x.dtype is D.bool if isinstance(x, Tensor) else isinstance(x, bool)


def _check_sub(a, b):
    """torch refuses ``-`` on bool operands (tensors or Python bools); an int outside int64
    fails torch's argument parsing first (``apply`` raises its OverflowError)."""
    if _is_bool(a) or _is_bool(b):
        for x in (a, b):
            if x.__class__ is int and not -2 ** 63 <= x < 2 ** 64:
                return
        if _is_bool(a) and _is_bool(b):
            raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                               "supported. Use the `^` or `logical_xor()` operator instead.")
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def _check_neg(a):
    if a.dtype is D.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


@public(method=True, out=True, also=("subtract",))
def sub(input, other, *, alpha=1):
    """input - alpha * other."""
    _check_sub(input, other)
    return apply(_sub, input, other, **_alpha(alpha, input, other))


subtract = alias(sub, "subtract")


def rsub(input, other, alpha=1):
    _check_sub(input, other)
    return apply(_rsub, input, other, **_alpha(alpha, input, other))


@public(method=True, out=True, also=("multiply",))
def mul(input, other):
    return apply(_mul, input, other)


multiply = alias(mul, "multiply")


@public(method=True, out=True, also=("divide",))
def div(input, other, *, rounding_mode=None):
    """True division (integers give the default float) or 'trunc' / 'floor' rounding."""
    if rounding_mode is None:
        return apply(_div, input, other)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    check_int_div(input, other, f"div_{rounding_mode}_cpu")
    return apply(_div_mode, input, other, rounding_mode=rounding_mode)


divide = alias(div, "divide")


@public(method=True, inplace=True, out=True)
def true_divide(input, other):
    return apply(_div, input, other)


@defop("floor_divide", promote="common", grad_name="NotImplemented", saves=False,
       opmath=True)
def _floor_divide(a, b):
    """``div(rounding_mode="floor")``, without a derivative (torch has none for floor_divide:
    its output requires grad and a backward through it raises)."""
    return no_derivative(lambda a, b: _div_mode.fn(a, b, "floor"), "floor_divide")(a, b)


@public(method=True, inplace=True, out=True)
def floor_divide(input, other):
    check_int_div(input, other, "div_floor_cpu")
    return apply(_floor_divide, input, other)


@public(method=True, inplace=True, out=True)
def remainder(input, other):
    check_int_div(input, other, "remainder_cpu")
    return apply(_remainder, input, other)


@public(method=True, out=True, also=("negative",), top_inplace=True)
def neg(input):
    _check_neg(input)
    return apply(_neg, input)


negative = neg


@public(method=True, out=True)
def pow(input, exponent):
    """input ** exponent; either may be a Python scalar."""
    if isinstance(input, Tensor):
        kind = "tt" if isinstance(exponent, Tensor) else "ts"
    else:
        kind = "st"
    _check_int_pow(input, exponent)
    if kind == "ts" and input.dtype is D.bool and isinstance(exponent, bool):
        return input.clone() if exponent else input.new_ones(input.shape)
    return apply(_pow, input, exponent, kind=kind)


# ------------------------------------------------------------------ Tensor methods and dunders

@method("add_")
def _add_(self, other, *, alpha=1):
    return apply_(_add, self, other, **_alpha(alpha, self, other, inplace=True))


@method("sub_", "subtract_")
def _sub_(self, other, *, alpha=1):
    _check_sub(self, other)
    return apply_(_sub, self, other, **_alpha(alpha, self, other, inplace=True))


@method("mul_", "multiply_")
def _mul_(self, other):
    return apply_(_mul, self, other)


@method("div_", "divide_")
def _div_(self, other, *, rounding_mode=None):
    if rounding_mode is None:
        return apply_(_div, self, other)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' "
                           f"but found '{rounding_mode}'")
    check_int_div(self, other, f"div_{rounding_mode}_cpu")
    return apply_(_div_mode, self, other, rounding_mode=rounding_mode)


@method("pow_")
def _pow_(self, exponent):
    _check_int_pow(self, exponent)
    if self.dtype is D.bool and isinstance(exponent, bool):
        return self if exponent else self.fill_(True)
    return apply_(_pow, self, exponent, kind="tt" if isinstance(exponent, Tensor) else "ts")


@method("neg_", "negative_")
def _neg_(self):
    _check_neg(self)
    return apply_(_neg, self)
