"""Elementwise math of two or three operands: clamp, maximum/minimum, fmax/fmin, hypot, atan2,
logaddexp, fmod, copysign, xlogy, float_power, lerp, where, addcmul, addcdiv.

Where ``jax.vjp``'s convention differs from torch's (clamp at its bounds, maximum / minimum with
NaN, fmax / fmin ties, hypot at the edge of its domain) the op carries its own
``jax.custom_vjp``."""
from __future__ import annotations

import builtins

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np

from .. import _barebones, _dtype as D
from .._tensor import Tensor
from . import arithmetic as _pw
from .unary import _check_bcast, _is_int, _need_float
from .._registry import apply, defop, sum_to as _sum_to
from ._surface import alias, method, methods, public
from .._storage import apply_


__all__ = ['clamp', 'clip', 'clamp_min', 'clamp_max', 'float_power', 'lerp', 'hypot', 'logaddexp',
           'logaddexp2', 'maximum', 'minimum', 'fmax', 'fmin', 'where', 'fmod', 'atan2', 'arctan2',
           'xlogy', 'copysign', 'addcmul', 'addcdiv']




# ------------------------------------------------------------------ clamp

def _clamp_vjp_fn(which, scalar):
    @jax.custom_vjp
    def f(x, *b):
        out = x
        if which in ("lo", "both"):
            out = jnp.maximum(out, b[0])
        if which in ("hi", "both"):
            out = jnp.minimum(out, b[-1])
        if _is_int(x):
            return out
        # torch propagates a NaN input; with number bounds it keeps the input where it equals
        # a bound (clamp(-0., min=0) is -0.; with Tensor bounds its vectorized loop takes the
        # bound, its scalar tail the input: jax's max/min kept there)
        return jnp.where(jnp.isnan(x) | (out == x), x, out) if scalar else \
            jnp.where(jnp.isnan(x), x, out)

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


_CLAMP_FNS = {(w, s): _clamp_vjp_fn(w, s) for w in ("lo", "hi", "both") for s in (False, True)}


def _clamp_name(kw):
    # torch's nodes: clamp's by its bounds' kind (ClampBackward1 for numbers, 0 for Tensors);
    # clamp_min's and clamp_max's their own (ClampMinBackward0 for a number, 1 for a Tensor)
    named = kw["named"]
    if named is None:
        return "ClampBackward1" if kw["scalar"] else "ClampBackward0"
    return f"Clamp{named}Backward{0 if kw['scalar'] else 1}"


@defop("clamp", promote="common", grad_name=_clamp_name)
def _clamp(x, *b, which, scalar, named):
    return _CLAMP_FNS[which, scalar](x, *b)


def _clamp_args(min, max, named=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    which = "both" if (min is not None and max is not None) else ("lo" if min is not None
                                                                  else "hi")
    bounds = tuple(b for b in (min, max) if b is not None)
    scalar = not builtins.any(isinstance(b, Tensor) for b in bounds)
    if not scalar and not builtins.all(isinstance(b, Tensor) for b in bounds):
        raise TypeError("clamp() received an invalid combination of arguments - got a Tensor "
                        "and a number as bounds: both must be Tensors or both numbers")
    return bounds, dict(which=which, scalar=scalar, named=named)


def _clamp_scalar_checks(input, bounds, which, inplace):
    """torch's checks of number bounds, in its order: the in-place cast of the promoted type
    (C++ type names), a complex bound, a bool result, a bound outside the result dtype."""
    from .products import _cpp
    kinds = tuple(_scalar_kind(b) for b in bounds)
    rdt = D.result_type_of((input.dtype,), (), kinds) if input.dim() else \
        D.result_type_of((), (input.dtype,), kinds)
    if input.dtype.is_floating_point and builtins.any(isinstance(b, complex) for b in bounds):
        raise RuntimeError("value cannot be converted to type double without overflow")
    if inplace and rdt.category > input.dtype.category:
        raise RuntimeError(f"result type {D.legacy_name(rdt)} can't be cast to the desired "
                           f"output type {_cpp(input.dtype)}")
    if builtins.any(isinstance(b, complex) for b in bounds):
        raise NotImplementedError("clamp is not supported for complex types")
    if rdt is D.bool:
        kernel = {"both": "clamp", "lo": "clamp_min", "hi": "clamp_max"}[which]
        raise NotImplementedError(f"\"{kernel}_scalar_cpu\" not implemented for 'Bool'")
    for b in bounds:
        D.check_scalar(b, rdt)


def _scalar_kind(b):
    """The dtype torch's promotion gives a Python number operand (its category's default)."""
    if isinstance(b, builtins.bool):
        return D.bool
    if isinstance(b, builtins.int):
        return D.int64
    if isinstance(b, complex):
        return D.get_default_dtype().to_complex()
    return D.get_default_dtype()


def _clamp_one(input, min, max, named=None, inplace=False):
    # (numpy scalar bounds are Scalars to torch's parser: a numpy integer an int)
    min, max = D.parser_scalar(min), D.parser_scalar(max)
    bounds, kw = _clamp_args(min, max, named)
    tensors = [b for b in (min, max) if isinstance(b, Tensor)]
    if not input.dtype.is_complex and any(b.dtype.is_complex for b in tensors):
        # (complex tensor bounds: clamp's kernel for two, maximum's or minimum's for one, in the
        # promoted dtype)
        kernel = "clamp" if len(tensors) == 2 else "maximum" if min is not None else "minimum"
        dt = input.dtype
        for b in tensors:
            dt = D._promote2(dt, b.dtype)
        raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for '{D.legacy_name(dt)}'")
    if input.dtype.is_complex:
        # (clamp_min/clamp_max with a tensor bound run maximum/minimum's kernels)
        if named is not None and (isinstance(min, Tensor) or isinstance(max, Tensor)):
            raise NotImplementedError(f"\"{'minimum' if min is None else 'maximum'}_cpu\" not "
                                      f"implemented for '{D.legacy_name(input.dtype)}'")
        raise NotImplementedError("clamp is not supported for complex types")
    if kw["scalar"]:
        _clamp_scalar_checks(input, bounds, kw["which"], inplace)
    if inplace:
        return apply_(_clamp, input, *bounds, **kw)
    _check_bcast(input, *bounds)
    return apply(_clamp, input, *bounds, **kw)


@public(method=True, out=True, top_inplace=True, also=("clip",))
def clamp(input, min=None, max=None):
    """Clamp into [min, max]; bounds are numbers or (broadcasting) Tensors. The gradient
    passes where min <= input <= max (bounds included), as in torch."""
    return _clamp_one(input, min, max)


@method("clamp_", "clip_")
def clamp_(self, min=None, max=None):
    return _clamp_one(self, min, max, inplace=True)


clip = alias(clamp, "clip")


@public(method=True, out=True, top_inplace=True)
def clamp_min(input, min):
    return _clamp_one(input, min, None, "Min")


@public(method=True, out=True, top_inplace=True)
def clamp_max(input, max):
    return _clamp_one(input, None, max, "Max")


methods(clamp_min_=lambda self, min: _clamp_one(self, min, None, "Min", inplace=True),
        clamp_max_=lambda self, max: _clamp_one(self, None, max, "Max", inplace=True))


# ------------------------------------------------------------------ binary math

def _need_float_result(kernel, input, other):
    """torch's error for a float-only kernel whose operands promote to an integer or bool
    dtype (an integer operand with a float one is promoted, and computes)."""
    from .typeinfo import result_type
    try:
        dt = result_type(input, other)
    except TypeError:
        return _need_float(kernel, input, other)
    if not (dt.is_floating_point or (dt.is_complex and kernel in _COMPLEX_KERNELS)):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{D.legacy_name(dt)}'")


_COMPLEX_KERNELS = frozenset({"logaddexp_cpu"})     # (hypot's and logaddexp2's refuse complex)


# torch's binary kernels without complex support: its error's wording per op
_REAL_ONLY = {"maximum": "runtime", "minimum": "runtime", "fmax": "runtime", "fmin": "runtime",
              "atan2": "kernel", "xlogy": "kernel", "copysign": "kernel"}


def _real_only_error(name, input, other):
    if _REAL_ONLY[name] == "runtime":
        raise RuntimeError(f"{name} not implemented for complex tensors.")
    from .typeinfo import result_type
    raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                              f"'{D.legacy_name(result_type(input, other))}'")


def _binary(name, fn, *, promote="common", grad_name=None, inplace=True, float_only=False,
            also=(), top_inplace=False, saves=True):
    """``torchlike.<name>(input, other)`` (a method, with ``out=``) and, with ``inplace``,
    ``Tensor.<name>_``: one op."""
    op = defop(name, promote=promote, grad_name=grad_name, saves=saves)(fn)

    def check(input, other):       # (other's type: _surface._OPERANDS)
        if float_only:
            _need_float_result(name + "_cpu", input, other)
        if name in _REAL_ONLY and any(isinstance(t, Tensor) and t.dtype.is_complex
                                      or isinstance(t, complex) for t in (input, other)):
            _real_only_error(name, input, other)

    def f(input, other):
        check(input, other)
        return apply(op, input, other)

    def f_(self, other):
        check(self, other)
        return apply_(op, self, other)

    f.__name__ = f.__qualname__ = name
    f_.__name__ = f_.__qualname__ = name + "_"
    if inplace:
        methods(**{n + "_": f_ for n in (name, *also)})
    return public(f, method=True, out=True, also=also, top_inplace=top_inplace)


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


def _fmax(a, b):
    # torch's kernel takes ``a`` on a tie (the sign of a zero: ``fmax(0., -0.)`` is 0.), and
    # ``b`` in bfloat16 (computed in float and converted back); a NaN loses to a number
    if a.dtype == jnp.bfloat16:
        return jnp.where(jnp.isnan(a) | (b >= a), b, a)
    return jnp.where(jnp.isnan(b) | (a >= b), a, b)


def _fmin(a, b):
    if a.dtype == jnp.bfloat16:
        return jnp.where(jnp.isnan(a) | (b <= a), b, a)
    return jnp.where(jnp.isnan(b) | (a <= b), a, b)


_fmax_v = _with_vjp(_fmax, _fmax_grads)
_fmin_v = _with_vjp(_fmin, _fmin_grads)
_hypot_v = _with_vjp(_pw._opmath(jnp.hypot), _hypot_grads)
_atan2_v = _with_vjp(jnp.arctan2, _atan2_grads)
_logaddexp_v = _with_vjp(_pw._opmath(jnp.logaddexp), _logaddexp_grads)
_logaddexp2_v = _with_vjp(_pw._opmath(jnp.logaddexp2), _logaddexp2_grads)


def _int_or(v, f):
    return lambda a, b: f(a, b) if _is_int(a) else v(a, b)


maximum = _binary("maximum", _int_or(_maximum_v, jnp.maximum), grad_name="MaximumBackward0",
                  inplace=False)
minimum = _binary("minimum", _int_or(_minimum_v, jnp.minimum), grad_name="MinimumBackward0",
                  inplace=False)
fmax = _binary("fmax", _int_or(_fmax_v, jnp.maximum), grad_name="FmaxBackward0", inplace=False)
fmin = _binary("fmin", _int_or(_fmin_v, jnp.minimum), grad_name="FminBackward0", inplace=False)
hypot = _binary("hypot", lambda a, b: _hypot_v(a, b), grad_name="HypotBackward0",
                float_only=True, saves="both")
atan2 = _binary("atan2", lambda a, b: _atan2_v(a, b), promote="float",
                grad_name="Atan2Backward0", also=("arctan2",))
arctan2 = alias(atan2, "arctan2")
logaddexp = _binary("logaddexp", lambda a, b: _logaddexp_v(a, b),
                    grad_name="LogaddexpBackward0", inplace=False, float_only=True)
logaddexp2 = _binary("logaddexp2", lambda a, b: _logaddexp2_v(a, b),
                     grad_name="Logaddexp2Backward0", inplace=False, float_only=True)
_fmod_op = defop("fmod", promote="common", grad_name="FmodBackward0",
                 saves={0: (1,), 1: (1,)})(jnp.fmod)     # (read by other's gradient only)


@public(method=True, out=True)
def fmod(input, other):
    _pw.check_int_div(input, other, "fmod_cpu")
    return apply(_fmod_op, input, other)


@method("fmod_")
def _fmod_(self, other):
    _pw.check_int_div(self, other, "fmod_cpu")
    return apply_(_fmod_op, self, other)



# copysign and xlogy differentiate by torch's formulas: copysign's input gets result / input (0
# where the input is 0: jax's gave 1), its other nothing; xlogy's input gets xlogy(input != 0,
# other) (0 at input 0, where jax's log(other) was -inf at other 0), its other input / other
_copysign_v = jax.custom_jvp(lambda a, b: jnp.copysign(a, b))
_copysign_v.defjvps(lambda da, r, a, b: jnp.where(a == 0, jnp.zeros((), r.dtype),
                                                  r / jnp.where(a == 0, 1, a)) * da, None)
_xlogy_v = jax.custom_jvp(lambda a, b: jsp.xlogy(a, b))
# torch's: xlogy(grad, other) for self, masked to 0 where self == 0 and other <= 0
_xlogy_v.defjvps(lambda da, r, a, b: jnp.where((a == 0) & (b <= 0), 0, jnp.log(b)).astype(
                     da.dtype) * da,
                 lambda db, r, a, b: a / b * db)


copysign = _binary("copysign", _copysign_v, promote="float", grad_name="CopysignBackward0")
xlogy = _binary("xlogy", _xlogy_v, promote="float",
                grad_name="XlogyBackward0", top_inplace=True)


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


@public(method=True, out=True)
def float_power(input, exponent):
    """input ** exponent computed in double precision (float64, or complex128)."""
    return apply(_float_power, input, exponent, dtype=_fp_dtype(input, exponent).np)


@method("float_power_")
def float_power_(self, exponent):
    dt = _fp_dtype(self, exponent)
    if self.dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype "
                           f"{D.legacy_name(self.dtype)} but the operation's result requires "
                           f"dtype {D.legacy_name(dt)}")
    return apply_(_float_power, self, exponent, dtype=dt.np)




@defop("lerp", grad_name=lambda kw: "LerpBackward1" if kw["tensor_weight"] else "LerpBackward0",
       saves={0: (2,), 1: (2,), 2: (0, 1)})
def _lerp(a, b, w, tensor_weight):
    half = a.dtype in (jnp.float16, jnp.bfloat16)
    w = jnp.asarray(w)
    # a number weight (or a 0-dim one of another dtype) stays float32 for half types
    w = w.astype(jnp.float32 if half and w.dtype != a.dtype else a.dtype)
    if half or a.dtype == jnp.float32:
        dt = a.dtype
        a, b, w = (x.astype(jnp.float32) for x in (a, b, w))
        return _lerp_formula(a, b, w, fused=True).astype(dt)
    return _lerp_formula(a, b, w)


def _lerp_formula(a, b, w, fused=False):
    """torch's lerp kernel: from the nearer end (exact at both); its float32 arithmetic
    (half types' too) fuses each multiply-add, done here in float64, where a float32
    product is exact."""
    d = b - a
    small = jnp.abs(w) < 0.5
    if fused:
        f64 = jnp.float64
        near = a.astype(f64) + w.astype(f64) * d.astype(f64)
        far = b.astype(f64) - d.astype(f64) * (1 - w).astype(f64)
        return jnp.where(small, near, far).astype(jnp.float32)
    return jnp.where(small, a + w * d, b - d * (1 - w))


def _meta_name(d):
    # the C++ type names torch's messages print
    from .._tensor import _CPP
    return _CPP.get(d.name, d.name)


@public(method=True, inplace=True, out=True)
def lerp(input, end, weight):
    """input + weight * (end - input); ``weight`` a number or a Tensor."""
    # torch's meta checks come first (a 0-dim weight is taken as a number, of any dtype)
    for nm, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t.dtype is not input.dtype and (nm == "end" or t.ndim):
            raise RuntimeError(f"expected dtype {_meta_name(input.dtype)} for `{nm}` but got "
                               f"dtype {_meta_name(t.dtype)}")
    _need_float("lerp_kernel_tensor" if isinstance(weight, Tensor) else "lerp_kernel_scalar",
                input)
    if not isinstance(weight, Tensor):
        # (torch's kernel takes a number weight in the input's compute dtype, checked)
        D.check_scalar(weight, D.float32 if input.dtype in (D.float16, D.bfloat16)
                       else input.dtype)
    return apply(_lerp, input, end, weight, tensor_weight=isinstance(weight, Tensor))




@defop("where", grad_name="WhereBackward0", saves={0: (1, 2)})
def _where(c, x, y, dtype):
    return jnp.where(c, jnp.asarray(x).astype(dtype), jnp.asarray(y).astype(dtype))


def _promote_of(*xs):
    dims, zeros, scalars = [], [], []
    for a in xs:
        if isinstance(a, Tensor):
            (dims if a.ndim else zeros).append(a.dtype)
        elif isinstance(a, (builtins.bool, int, float, complex)):
            scalars.append(D.scalar_dtype(a))
        elif isinstance(a, np.generic):
            # (a numpy scalar is a Scalar to torch's parser: an integer an int, a bool or a
            # float a float)
            scalars.append(D.scalar_dtype(D.parser_scalar(a)))
        else:
            zeros.append(D.from_jax(jnp.asarray(a).dtype))
    return D.result_type_of(dims, zeros, scalars)


@public(out=True)
def where(condition, input=None, other=None):
    """Elementwise select (with broadcasting and torch's promotion of input and other);
    ``where(condition)`` is ``nonzero(condition, as_tuple=True)``."""
    if input is None and other is None:
        import numpy as np
        _barebones.require("nonzero_count_cpu", condition)
        # (a 0-dim condition reads as 1-dim, as torch's nonzero does)
        nz = np.nonzero(np.atleast_1d(np.asarray(condition._data)))
        return tuple(Tensor._make(jnp.asarray(i, jnp.int64)) for i in nz)
    if condition.dtype is D.uint8:
        # torch reads a uint8 condition as a bool one, with a deprecation warning (once)
        from .factorizations import _deprecated
        _deprecated("where_uint8", "where received a uint8 condition tensor. This behavior is "
                    "deprecated and will be removed in a future version of PyTorch. Use a "
                    "boolean condition instead.",
                    at="TensorCompare.cpp:621")
        condition = condition.to(D.bool)
    elif condition.dtype is not D.bool:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {D.legacy_name(condition.dtype)}")
    _check_bcast(condition, input, other)
    dt = _promote_of(input, other)
    for v in (input, other):
        if not isinstance(v, Tensor):
            # torch makes a number a 0-dim tensor of the result dtype: checked conversion
            D.check_scalar(v, dt, 1)
    return apply(_where, condition, input, other, dtype=dt.np)


methods(where=lambda self, condition, other: where(condition, self, other))


# ------------------------------------------------------------------ addcmul, addcdiv

@defop("addcmul", promote="common", grad_name=lambda kw: ("AddcdivBackward0" if kw["div"]
                                                          else "AddcmulBackward0"),
       # each factor for the other's gradient (a divisor for its own too)
       saves=lambda kw: {1: (0, 1, 2), 2: (0, 1, 2)} if kw["div"] else {1: (2,), 2: (1,)})
def _addcmul(a, t1, t2, value, div):
    # torch's kernel: self + value * t1 * t2 (or / t2), left to right; for float16/bfloat16
    # in float32 with the value as a float, rounded once
    if a.dtype in (jnp.float16, jnp.bfloat16):
        v = jnp.asarray(value, jnp.float32)
    else:
        v = jnp.asarray(value, a.dtype)
    if a.dtype in (jnp.float32, jnp.float16, jnp.bfloat16) and not div:
        # torch's float32 addcmul (half types' too) fuses its last multiply-add:
        # fma(value * t1, t2, self)
        vt = (v * t1.astype(jnp.float32)).astype(jnp.float64)
        r = a.astype(jnp.float64) + vt * t2.astype(jnp.float32).astype(jnp.float64)
        return r.astype(jnp.float32).astype(a.dtype)
    return _pw._opmath(lambda a, t1, t2: a + (v * t1 / t2 if div else v * t1 * t2))(a, t1, t2)


def _addc_check(name, input, t1, t2, value):
    _check_bcast(input, t1, t2)
    if not isinstance(value, Tensor) and isinstance(input, Tensor):
        # (torch's kernel takes the value in the input's compute dtype, checked)
        D.check_scalar(value, D.float32 if input.dtype in (D.float16, D.bfloat16)
                       else input.dtype)
    if name == "addcmul" and builtins.all(isinstance(t, Tensor) and t.dtype is D.bool
                                          for t in (input, t1, t2)):
        raise NotImplementedError("\"addcmul_cpu_out\" not implemented for 'Bool'")
    if name == "addcdiv" and builtins.all(isinstance(t, Tensor) and t.dtype.category < D._FLOAT
                                          for t in (t1, t2)):
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a "
                           "future  release addcdiv will perform a true division of tensor1 and "
                           "tensor2. The historic addcdiv behavior can be implemented as "
                           "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
                           "for integer inputs and as (input + value * tensor1 / tensor2) for "
                           "float inputs. The future addcdiv behavior is just the latter "
                           "implementation: (input + value * tensor1 / tensor2), for all dtypes.")


@public(method=True, out=True)
def addcmul(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 * tensor2."""
    _addc_check("addcmul", input, tensor1, tensor2, value)
    return apply(_addcmul, input, tensor1, tensor2, value=value, div=False)


@public(method=True, out=True)
def addcdiv(input, tensor1, tensor2, *, value=1):
    """input + value * tensor1 / tensor2 (floating tensors only)."""
    _addc_check("addcdiv", input, tensor1, tensor2, value)
    return apply(_addcmul, input, tensor1, tensor2, value=value, div=True)


@method("addcmul_")
def _addcmul_(self, tensor1, tensor2, *, value=1):
    _addc_check("addcmul", self, tensor1, tensor2, value)
    return apply_(_addcmul, self, tensor1, tensor2, value=value, div=False)


@method("addcdiv_")
def _addcdiv_(self, tensor1, tensor2, *, value=1):
    _addc_check("addcdiv", self, tensor1, tensor2, value)
    return apply_(_addcmul, self, tensor1, tensor2, value=value, div=True)



# ------------------------------------------------------------------ in-place comparisons

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


methods(**{n + "_": _cmp_(w) for n, w in dict(
    eq="eq", ne="ne", lt="lt", le="le", gt="gt", ge="ge", greater="gt", less="lt",
    greater_equal="ge", less_equal="le", not_equal="ne").items()})
