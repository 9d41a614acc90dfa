"""Unary elementwise math: exp, log, the trigonometric and hyperbolic functions, erf, rounding,
sign, logit, nan_to_num and the is* tests, each declared once with its torch grad_fn name."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp

from .. import _dtype as D
from .._barebones import not_implemented
from .._tensor import Tensor
from .._registry import apply, broadcast_error, defop
from .._storage import apply_
from ._surface import method, methods, public

__all__ = ['abs', 'absolute', 'exp', 'log', 'tanh', 'sigmoid', 'relu', 'sqrt', 'rsqrt', 'sin',
           'cos', 'square', 'reciprocal', 'conj_physical', 'sign', 'sgn', 'exp2', 'expm1', 'log2',
           'log10', 'log1p', 'tan', 'asin', 'acos', 'atan', 'sinh', 'cosh', 'asinh', 'acosh',
           'atanh', 'arcsin', 'arccos', 'arctan', 'arcsinh', 'arccosh', 'arctanh', 'logit', 'erf',
           'erfc', 'erfinv', 'floor', 'ceil', 'round', 'trunc', 'fix', 'frac', 'deg2rad',
           'rad2deg', 'lgamma', 'digamma', 'sinc', 'nan_to_num', 'isnan', 'isinf', 'isfinite',
           'isposinf', 'isneginf', 'signbit', 'positive']


def _is_int(a):
    return not jnp.issubdtype(a.dtype, jnp.inexact)


def _not_impl(name, t):
    raise not_implemented(name, t.dtype)


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

@jax.custom_jvp
def _relu_fn(x):
    return jnp.where(x < 0, jnp.zeros_like(x), x)      # (torch's keeps -0. and NaN)


_relu_fn.defjvps(lambda g, ans, x: jnp.where(x <= 0, 0, g))     # (NaN passes g, as torch)


@jax.custom_jvp
def _abs_fn(x):
    return jnp.abs(x)


def _abs_jvp(g, ans, x):
    # torch: d|x|/dx = sign(x), 0 at 0; for complex x the real part of conj(x)/|x| * g
    if jnp.iscomplexobj(x):
        safe = jnp.where(ans == 0, 1, ans)
        return jnp.real(jnp.where(ans == 0, 0, jnp.conj(x) / safe) * g)
    return g * jnp.sign(x)


_abs_fn.defjvps(_abs_jvp)


def _int_keep(f):
    # rounding ops leave integer (and bool) tensors as they are
    return lambda a: a if _is_int(a) else f(a)


def _sign_fn(a):
    if a.dtype == jnp.bool_:
        return a
    if _is_int(a):
        return jnp.sign(a)
    if jnp.iscomplexobj(a):
        # torch's sgn: z / |z|, 0 at 0; NaN in both parts where a part is not finite (its
        # complex division's answer on its scalar and AVX-512 kernels: DIFFERENCES.md)
        re, im = jnp.real(a), jnp.imag(a)
        r = jnp.abs(a)
        r = jnp.where(r == 0, 1, r)
        nan = jnp.array(complex(float("nan"), float("nan")), a.dtype)
        return jnp.where(a == 0, jnp.zeros_like(a),
                         jnp.where(jnp.isfinite(re) & jnp.isfinite(im),
                                   jax.lax.complex(re / r, im / r), nan))
    # torch: sign(nan) == 0, sign(-0.) == 0. (unsigned)
    return (a > 0).astype(a.dtype) - (a < 0).astype(a.dtype)


@jax.custom_jvp
def _erfinv_fn(a):
    # torch: erfinv(-0.) is -0. (jax's is 0.)
    return jnp.where(a == 0, a, jsp.erfinv(a))


_erfinv_fn.defjvps(lambda g, ans, a: g * (jnp.sqrt(jnp.asarray(jnp.pi, a.dtype)) / 2)
                   * jnp.exp(ans * ans))


def _digamma_fn(a):
    # torch: digamma(+-0) is -+inf (jax gives nan)
    return jnp.where(a == 0, jnp.copysign(jnp.asarray(jnp.inf, a.dtype), -a), jsp.digamma(a))


@jax.custom_jvp
def _lgamma_fn(a):
    return jsp.gammaln(a)


# torch's derivative, digamma with its values at +-0 (jax's was NaN there)
_lgamma_fn.defjvps(lambda g, ans, a: g * _digamma_fn(a))


@jax.custom_jvp
def _logit_plain(a):
    return jnp.log(a / (1 - a))


# torch: grad / (x (1 - x)), NaN outside [0, 1]
_logit_plain.defjvps(lambda g, ans, a: g * jnp.where((a < 0) | (a > 1), jnp.nan,
                                                      1 / (a * (1 - a))))


@jax.custom_vjp
def _reciprocal_real(a):
    return 1 / a


def _reciprocal_fwd(a):
    r = 1 / a
    return r, r


def _reciprocal_bwd(r, g):
    return (g * -(r * r),)        # torch's: grad * -(result * result), each step in the dtype


_reciprocal_real.defvjp(_reciprocal_fwd, _reciprocal_bwd)


def _reciprocal_fn(a):
    return 1 / a if jnp.iscomplexobj(a) else _reciprocal_real(a)


# ops whose torch backward reads their result rather than their input
_SAVES_OUTPUT = {"exp", "exp2", "expm1", "tan", "tanh", "sigmoid", "relu", "sqrt", "rsqrt",
                 "reciprocal"}

# name: (jax function, promote, torch grad_fn name)
def _in_float32(f):
    """``f`` computed in float32 for a float16/bfloat16 input and rounded once (torch's CPU
    kernel for it; jax's would round its intermediate steps to the low precision)."""
    def g(a):
        if a.dtype in (jnp.float16, jnp.bfloat16):
            return f(a.astype(jnp.float32)).astype(a.dtype)
        return f(a)
    return g


_LOW = (jnp.float16, jnp.bfloat16)


def _low_back(name, g, y, x=None):
    """torch's float16/bfloat16 backward of ``name`` from the rounded output ``y``: its kernel
    (tanh_backward, sigmoid_backward) or autograd formula's ops, in float32 with the roundings
    to the dtype torch makes (``r``), the last one by the caller."""
    dt = y.dtype

    def r(v):
        return v.astype(dt).astype(jnp.float32)
    # (rounded explicitly: in one program with the op that made them, XLA may keep a
    # float16/bfloat16 op's result in float32, unrounded; an explicit round trip it keeps)
    g, y = r(g.astype(jnp.float32)), r(y.astype(jnp.float32))
    if name == "tanh":                  # tanh_backward: float(g) * (1 - y*y), one rounding
        out = g * (1 - y * y)
    elif name == "sigmoid":             # bfloat16: in float32; float16: each step in float16
        out = g * (1 - y) * y if dt == jnp.bfloat16 else r(g * r(1 - y)) * y
    elif name == "sqrt":                # grad / (2 * result)
        out = g / r(2 * y)
    elif name == "expm1":               # grad * (result + 1)
        out = g * r(y + 1)
    elif name == "asinh":               # grad * (self.pow(2) + 1).rsqrt()
        x = r(x.astype(jnp.float32))
        out = g * r(jax.lax.rsqrt(r(r(x * x) + 1)))
    else:                               # rsqrt: -0.5 * grad * result.pow(3)
        cube = r(r(y * y) * y) if dt == jnp.bfloat16 else r(y * y * y)
        out = r(-0.5 * g) * cube
    return out.astype(dt)


def _low_precision_vjp(name, f):
    """``f`` whose float16/bfloat16 gradient is torch's (``_low_back``: jax's would differentiate
    the float32 computation inside ``f``); other dtypes as ``f``."""
    @jax.custom_vjp
    def h(a):
        return f(a)

    def fwd(a):
        y = f(a)
        return y, ((y, a) if name == "asinh" else (y, None))

    def bwd(res, g):
        return (_low_back(name, g, *res),)
    h.defvjp(fwd, bwd)

    def wrapped(a):
        return h(a) if a.dtype in _LOW else f(a)
    return wrapped


_UNARY = {
    "exp": (jnp.exp, "float", "ExpBackward0"),
    "log": (jnp.log, "float", "LogBackward0"),
    "tanh": (_low_precision_vjp("tanh", jnp.tanh), "float", "TanhBackward0"),
    "sigmoid": (_low_precision_vjp("sigmoid", _in_float32(jax.nn.sigmoid)), "float",
                "SigmoidBackward0"),
    "sqrt": (_low_precision_vjp("sqrt", jnp.sqrt), "float", "SqrtBackward0"),
    "rsqrt": (_low_precision_vjp("rsqrt", jax.lax.rsqrt), "float", "RsqrtBackward0"),
    "sin": (jnp.sin, "float", "SinBackward0"),
    "cos": (jnp.cos, "float", "CosBackward0"),
    "reciprocal": (_reciprocal_fn, "float", "ReciprocalBackward0"),
    "relu": (_relu_fn, None, "ReluBackward0"),
    "abs": (_abs_fn, None, "AbsBackward0"),
    "square": (lambda a: a * a, None, "PowBackward0"),
    "conj_physical": (jnp.conj, None, "ConjPhysicalBackward0"),
    "sign": (_sign_fn, None, "SignBackward0"),
    "exp2": (_in_float32(jnp.exp2), "float", "Exp2Backward0"),
    "expm1": (_low_precision_vjp("expm1", _in_float32(jnp.expm1)), "float", "Expm1Backward0"),
    "log2": (_in_float32(jnp.log2), "float", "Log2Backward0"),
    "log10": (_in_float32(jnp.log10), "float", "Log10Backward0"),
    "log1p": (jnp.log1p, "float", "Log1PBackward0"),
    "tan": (jnp.tan, "float", "TanBackward0"),
    "asin": (jnp.arcsin, "float", "AsinBackward0"),
    "acos": (jnp.arccos, "float", "AcosBackward0"),
    "atan": (jnp.arctan, "float", "AtanBackward0"),
    "sinh": (jnp.sinh, "float", "SinhBackward0"),
    "cosh": (jnp.cosh, "float", "CoshBackward0"),
    "asinh": (_low_precision_vjp("asinh", _in_float32(jnp.arcsinh)), "float", "AsinhBackward0"),
    "acosh": (jnp.arccosh, "float", "AcoshBackward0"),
    "atanh": (jnp.arctanh, "float", "AtanhBackward0"),
    "erf": (jsp.erf, "float", "ErfBackward0"),
    "erfc": (jsp.erfc, "float", "ErfcBackward0"),
    "erfinv": (_erfinv_fn, "float", "ErfinvBackward0"),
    "floor": (_int_keep(jnp.floor), None, "FloorBackward0"),
    "ceil": (_int_keep(jnp.ceil), None, "CeilBackward0"),
    "trunc": (_int_keep(jnp.trunc), None, "TruncBackward0"),
    "deg2rad": (_in_float32(jnp.deg2rad), "float", "Deg2RadBackward0"),
    "rad2deg": (_in_float32(jnp.rad2deg), "float", "Rad2DegBackward0"),
    "lgamma": (_lgamma_fn, "float", "LgammaBackward0"),
    "digamma": (_digamma_fn, "float", "DigammaBackward0"),
    "sinc": (_in_float32(jnp.sinc), "float", "SincBackward0"),
    "frac": (lambda a: a - jnp.trunc(a), None, "FracBackward0"),
    "sgn": (_sign_fn, None, "SgnBackward0"),      # (sign's complex form: z / |z|)
}
_FLOAT_ONLY = {"frac"}                            # torch refuses integer input
# torch's refusals of complex input: its message, or its kernel's name
_NO_COMPLEX = {"floor": "floor is not supported for complex inputs",
               "ceil": "ceil is not supported for complex inputs",
               "trunc": "trunc is not supported for complex inputs",
               "frac": "frac_cpu", "erf": "erf_vml_cpu", "erfc": "erfc_vml_cpu",
               "erfinv": "erfinv_vml_cpu", "lgamma": "lgamma_vml_cpu", "digamma": "digamma",
               # (a RuntimeError in torch, not its NotImplementedError)
               "deg2rad": (RuntimeError, "deg2rad is not supported for complex tensors."),
               "rad2deg": (RuntimeError, "rad2deg is not supported for complex tensors.")}


def _complex_error(what, t):
    if isinstance(what, tuple):
        raise what[0](what[1])
    if " " in what:
        raise NotImplementedError(what)
    _not_impl(what, t)


# torch's kernels refusing bool input
_NO_BOOL = {"abs": "abs_cpu", "floor": "floor_vml_cpu", "ceil": "ceil_vml_cpu",
            "trunc": "trunc_vml_cpu"}
_NO_OUT = {"relu"}                                # torch.relu takes no out=
_NO_TOP_INPLACE = {"sign", "erfinv", "lgamma", "digamma", "absolute"}   # no torch.<name>_
# torch's other names for the same op: Tensor.<alias>, Tensor.<alias>_, torchlike.<alias>
_ALIASES = {"trunc": ("fix",), "asin": ("arcsin",), "acos": ("arccos",), "atan": ("arctan",),
            "asinh": ("arcsinh",), "acosh": ("arccosh",), "atanh": ("arctanh",)}


# declared backwards (``defop``'s ``vjp``): what a first call's backward traces
def _real_only(rule):
    def f(cots, xs, needs):
        return NotImplemented if jnp.iscomplexobj(cots[0]) else [rule(cots[0], xs[0])]
    return f


def _tanh_back(g, x):
    y = jnp.tanh(x)
    if y.dtype in _LOW:
        return _low_back("tanh", g, y)
    return (g + g * y) * (1 - y)


def _sigmoid_back(g, x):
    y = _in_float32(jax.nn.sigmoid)(x)
    if y.dtype in _LOW:
        return _low_back("sigmoid", g, y)
    return g * (y * (1 - y))


def _sqrt_back(g, x):
    y = jnp.sqrt(x)
    if y.dtype in _LOW:
        return _low_back("sqrt", g, y)
    return g * (0.5 / y)


_VJP = {
    # torch's threshold_backward: 0 where the input is at most 0, the gradient elsewhere (NaN too)
    "relu": lambda cots, xs, needs: [jnp.where(xs[0] <= 0, 0, cots[0])],
    "exp": _real_only(lambda g, x: g * jnp.exp(x)),
    "tanh": _real_only(_tanh_back),
    "sigmoid": _real_only(_sigmoid_back),
    "sqrt": _real_only(_sqrt_back),
}


# torch saves nothing for these (their gradient is zero or a constant factor): a second
# backward through them runs
_SAVES_NOTHING = frozenset({"floor", "ceil", "trunc", "frac", "sign", "deg2rad", "rad2deg"})


def _unary(name, f, promote, grad_name):
    """``torchlike.<name>`` and ``Tensor.<name>_``: one op, declared once."""
    op = defop(name, promote=promote, grad_name=grad_name,
               saves=("output" if name in _SAVES_OUTPUT else
                      False if name in _SAVES_NOTHING else True),
               vjp=_VJP.get(name))(lambda a: f(a))
    check = name in _FLOAT_ONLY
    no_bool = _NO_BOOL.get(name)
    no_complex = _NO_COMPLEX.get(name)

    def fn(input):
        if check:
            _need_float(name + "_cpu", input)
        if name == "relu":
            _relu_dtype(input)
        dt = input.dtype
        if dt is D.bool:
            if no_bool:
                _not_impl(no_bool, input)
            if name == "square":
                input = input.to(D.int64)       # (torch's pow(input, 2): bool promotes)
        elif no_complex and dt.is_complex:
            _complex_error(no_complex, input)
        return apply(op, input)

    def fn_(self):
        if check:
            _need_float(name + "_cpu", self)
        if name == "relu":
            _relu_dtype(self)
        if self.dtype is D.bool:
            if no_bool:
                _not_impl(no_bool, self)
            if name == "square":
                raise RuntimeError("result type Long can't be cast to the desired output type "
                                   "Bool")
        if no_complex and self.dtype.is_complex:
            _complex_error(no_complex, self)
        return apply_(op, self)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}, elementwise."
    fn_.__name__ = fn_.__qualname__ = name + "_"
    return fn, fn_


def _relu_dtype(t):
    """torch's relu: no bool (its own message), no complex (clamp_min's)."""
    if t.dtype is D.bool:
        raise RuntimeError("Boolean inputs not supported for relu")
    if t.dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")


def _declare(name, fn, fn_, also=()):
    methods(**{n + "_": fn_ for n in (name, *also)})
    return public(fn, method=True, out=name not in _NO_OUT, also=also,
                  top_inplace=tuple(n for n in (name, *also) if n not in _NO_TOP_INPLACE))


_FNS = {n: _unary(n, *row) for n, row in _UNARY.items()}
(exp, log, tanh, sigmoid, sqrt, rsqrt, sin, cos, reciprocal, relu, square, conj_physical, exp2,
 expm1, log2, log10, log1p, tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, erf, erfc,
 erfinv, floor, ceil, trunc, deg2rad, rad2deg, lgamma, digamma, sinc, frac) = (
    _declare(n, *_FNS[n], also=_ALIASES.get(n, ())) for n in _UNARY
    if n not in ("abs", "sign", "sgn"))
abs = absolute = _declare("abs", *_FNS["abs"], also=("absolute",))
assert [f.__name__ for f in (exp, frac)] == ["exp", "frac"]   # the unpacking follows _UNARY
fix, arcsin, arccos, arctan, arcsinh, arccosh, arctanh = trunc, asin, acos, atan, asinh, acosh, \
    atanh

# sign and sgn compute alike; torch.sign refuses complex input (use sgn: z / |z|), and saves
# nothing for its (zero) gradient, where sgn saves its input and result
_sign_real, _sign_real_ = _FNS["sign"]
_sgn, _sgn_ = _FNS["sgn"]
methods(sgn_=_sgn_)
sgn = public(_sgn, method=True, out=True, top_inplace=False)
_SIGN_COMPLEX = ("Unlike NumPy, torch.sign is not intended to support complex numbers. Please "
                 "use torch.sgn instead.")


@public(method=True, out=True)
def sign(input):
    """-1, 0 or 1 elementwise (0 for NaN); complex input is refused, as in torch (use sgn)."""
    if input.dtype.is_complex:
        raise NotImplementedError(_SIGN_COMPLEX)
    return _sign_real(input)


@method("sign_")
def _sign_(self):
    if self.dtype.is_complex:
        raise NotImplementedError(_SIGN_COMPLEX)
    return _sign_real_(self)


@public(method=True)
def positive(input):
    if input.dtype is D.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@defop("logit", promote="float", grad_name="LogitBackward0")
def _logit(a, eps):
    if eps is None:
        return _logit_plain(a)
    lo, hi = eps, 1 - eps
    # torch's kernel: x < lo ? lo : (x > hi ? hi : x) (with eps > 0.5, lo > hi)
    sa = jax.lax.stop_gradient(a)
    z = jnp.where(sa < lo, lo, jnp.where(sa > hi, hi, sa))
    inside = (a >= lo) & (a <= hi)
    # torch: zero gradient where the input was clamped
    z = jnp.where(inside, a, z)
    return jnp.log(z / (1 - z))


@public(method=True, out=True, top_inplace=True)
def logit(input, eps=None):
    """log(p / (1 - p)); with ``eps`` the input is first clamped to [eps, 1 - eps]."""
    if input.dtype.is_complex:
        _not_impl("logit_cpu", input)
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


_round_op = defop("round", grad_name="RoundBackward0", saves=False)(_round)


@public(method=True, out=True, top_inplace=True)
def round(input, *, decimals=None):
    """Round half to even, optionally to ``decimals`` decimal places."""
    _round_checks(input, decimals)
    return apply(_round_op, input, decimals=int(decimals or 0))


def _round_checks(input, decimals):
    # torch: an integer tensor rounds to itself only without ``decimals`` (round.decimals's
    # kernels, round_vml for 0 and round for others, have no integer types)
    if decimals is not None and input.dtype.category < D._FLOAT:
        _not_impl("round_cpu" if decimals != 0 else "round_vml_cpu", input)
    if input.dtype is D.bool or input.dtype.is_complex:
        _not_impl("round_cpu" if decimals else "round_vml_cpu", input)


@method("logit_")
def logit_(self, eps=None):
    if self.dtype.is_complex:
        _not_impl("logit_cpu", self)
    return apply_(_logit, self, eps=None if eps is None else float(eps))


@method("round_")
def round_(self, *, decimals=None):
    _round_checks(self, decimals)
    return apply_(_round_op, self, decimals=int(decimals or 0))



def _test(name, f, out=False, complex_error=None):
    """``torchlike.<name>``: an elementwise test (a bool tensor, no gradient); with
    ``complex_error``, torch's NotImplementedError for a complex input (or, for an
    (exception class, message) pair, that exception)."""
    op = defop(name, differentiable=False)(f)

    def fn(input):
        if complex_error is not None and isinstance(input, Tensor) and input.dtype.is_complex:
            _complex_error(complex_error, input)
        return apply(op, input)

    fn.__name__ = fn.__qualname__ = name
    return public(fn, method=True, out=out)


isnan = _test("isnan", lambda a: jnp.isnan(a) if not _is_int(a) else jnp.zeros(a.shape, bool))
isinf = _test("isinf", lambda a: jnp.isinf(a) if not _is_int(a) else jnp.zeros(a.shape, bool))
isfinite = _test("isfinite",
                 lambda a: jnp.isfinite(a) if not _is_int(a) else jnp.ones(a.shape, bool))
isposinf = _test("isposinf",
                 lambda a: jnp.isposinf(a) if not _is_int(a) else jnp.zeros(a.shape, bool),
                 out=True,
                 complex_error=(RuntimeError, "isposinf does not support complex inputs."))
isneginf = _test("isneginf",
                 lambda a: jnp.isneginf(a) if not _is_int(a) else jnp.zeros(a.shape, bool),
                 out=True,
                 complex_error=(RuntimeError, "isneginf does not support complex inputs."))
signbit = _test("signbit",
                lambda a: jnp.signbit(a) if a.dtype != jnp.bool_ else jnp.zeros(a.shape, bool),
                out=True, complex_error="signbit is not implemented for complex tensors.")


@defop("nan_to_num", grad_name="NanToNumBackward0")
def _nan_to_num(a, nan, posinf, neginf):
    if _is_int(a):
        return a
    if jnp.iscomplexobj(a):       # (torch: the real and imaginary parts each)
        return jax.lax.complex(_nan_to_num.fn(a.real, nan, posinf, neginf),
                               _nan_to_num.fn(a.imag, nan, posinf, neginf))
    fi = jnp.finfo(a.dtype)
    pi = fi.max if posinf is None else posinf
    ni = fi.min if neginf is None else neginf
    return jnp.where(jnp.isnan(a), jnp.asarray(nan, a.dtype),
                     jnp.where(a == jnp.inf, jnp.asarray(pi, a.dtype),
                               jnp.where(a == -jnp.inf, jnp.asarray(ni, a.dtype), a)))


def _ntn_kw(nan, posinf, neginf, fn="nan_to_num"):
    # (nan=None is the default, 0.0, as in torch); each a float to torch's parser: a real
    # number or a 0-dim tensor that does not require grad
    import numbers
    for name, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if v is None or isinstance(v, numbers.Real) or (
                isinstance(v, Tensor) and v.ndim == 0 and not v.requires_grad):
            continue
        from .._tensor import _type_name
        raise TypeError(f"{fn}(): argument '{name}' must be float, not {_type_name(v)}")
    return dict(nan=0.0 if nan is None else float(nan),
                posinf=None if posinf is None else float(posinf),
                neginf=None if neginf is None else float(neginf))


@public(method=True, out=True, top_inplace=True)
def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """Replace NaN, +inf and -inf by ``nan``, ``posinf`` (default: the dtype's max) and
    ``neginf`` (default: its min)."""
    return apply(_nan_to_num, input, **_ntn_kw(nan, posinf, neginf))



@method("nan_to_num_")
def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
    return apply_(_nan_to_num, self, **_ntn_kw(nan, posinf, neginf, "nan_to_num_"))
