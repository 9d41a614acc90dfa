"""torchlike.special: torch.special's functions.

Functions torch also has at the top level are the same ops (``special.erf`` calls
``torchlike.erf``; ``expit`` is ``sigmoid``, ``gammaln`` is ``lgamma``, ``psi`` is
``digamma``, ``multigammaln`` is ``mvlgamma``, ``gammainc`` is ``igamma``); the others are
declared here. The Bessel functions, ``airy_ai`` and the orthogonal polynomials have no
gradient in torch: their outputs do not require grad here either.

>>> import torchlike as torch
>>> torch.special.ndtr(torch.tensor([0.0]))
tensor([0.5000])
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
from jax import lax

import torchlike as _tl
from . import _bessel
from .. import _tiers
from .._barebones import not_implemented
from .._registry import apply, defop
from .._ops.special_ops import _float_dtype, blocked as _blocked, no_grad_for as _no_grad_for
from .._tensor import Tensor

__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
    "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax",
    "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py",
    "xlogy", "zeta"]


def _out(r, out, name):
    if out is None:
        return r
    from .._storage import write_out
    return write_out(r, out, name)


def _need_tensor(name, *args):
    if not any(isinstance(a, Tensor) for a in args):
        raise TypeError(f"special_{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(args[0]).__name__}")


# ------------------------------------------------------------------ the same ops as torchlike.*

def _same(name, top):
    """``special.<name>``: ``torchlike.<top>`` looked up at call time, with ``out=``."""
    def f(*args, out=None, **kwargs):
        return _out(getattr(_tl, top)(*args, **kwargs), out, name)
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"torch.special.{name}: the op ``torchlike.{top}``."
    return f


erf, erfc, erfinv = _same("erf", "erf"), _same("erfc", "erfc"), _same("erfinv", "erfinv")
exp2, expm1, log1p = _same("exp2", "exp2"), _same("expm1", "expm1"), _same("log1p", "log1p")
sinc, xlogy = _same("sinc", "sinc"), _same("xlogy", "xlogy")


def round(input, *, decimals=0, out=None):
    """torch.special.round: torch.round with ``decimals`` always given (an integer tensor
    raises round_vml_cpu's NotImplementedError)."""
    return _out(_tl.round(input, decimals=decimals), out, "round")

digamma, psi = _same("digamma", "digamma"), _same("psi", "digamma")
expit, gammaln = _same("expit", "sigmoid"), _same("gammaln", "lgamma")
i0, polygamma = _same("i0", "i0"), _same("polygamma", "polygamma")
multigammaln = _same("multigammaln", "mvlgamma")
gammainc, gammaincc = _same("gammainc", "igamma"), _same("gammaincc", "igammac")


def logit(input, eps=None, *, out=None):
    return _out(_tl.logit(input, eps), out, "logit")


def logsumexp(input, dim, keepdim=False, *, out=None):
    return _out(_tl.logsumexp(input, dim, keepdim), out, "logsumexp")


def softmax(input, dim, *, dtype=None):
    f = getattr(_tl, "softmax", None) or _tl.nn.functional.softmax
    return f(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    f = getattr(_tl, "log_softmax", None) or _tl.nn.functional.log_softmax
    return f(input, dim, dtype=dtype)


# ------------------------------------------------------------------ unary ops declared here

def _spherical_j0(x):
    small = jnp.abs(x) < 0.5
    x2 = x * x
    series = 1 + x2 * (-1 / 6 + x2 * (1 / 120 + x2 * (-1 / 5040 + x2 * (
        1 / 362880 + x2 * (-1 / 39916800 + x2 * (1 / 6227020800))))))
    safe = jnp.where(small, jnp.ones_like(x), x)
    return jnp.where(jnp.isinf(x), jnp.zeros_like(x),
                     jnp.where(small, series, jnp.sin(safe) / safe))


def _entr(x):
    safe = jnp.where(x > 0, x, jnp.ones_like(x))
    return jnp.where(x > 0, -x * jnp.log(safe),
                     jnp.where(x == 0, jnp.zeros_like(x),
                               jnp.where(jnp.isnan(x), x, -jnp.inf)))


@jax.custom_jvp
def _entr_fn(x):
    return _entr(x)


# torch: grad * -(1 + log(x)) everywhere (nan for x < 0, +inf at 0)
_entr_fn.defjvps(lambda g, ans, x: g * -(1 + jnp.log(x)))


@jax.custom_jvp
def _ndtri_fn(x):
    return jsp.ndtri(x)


# torch: sqrt(2 pi) exp(ndtri(x)^2 / 2)
_ndtri_fn.defjvps(lambda g, ans, x: g * jnp.sqrt(2 * jnp.pi).astype(x.dtype) * jnp.exp(ans * ans / 2))


@jax.custom_jvp
def _erfcx_fn(x):
    return jsp.erfcx(x)


# torch: 2 x erfcx(x) - 2 / sqrt(pi)
_erfcx_fn.defjvps(lambda g, ans, x: g * (2 * x * ans - (2 / jnp.sqrt(jnp.pi)).astype(x.dtype)))


@jax.custom_jvp
def _log_ndtr_fn(x):
    # torch's calc_log_ndtr: log(erfcx(-t) / 2) - t^2 below -1, else log1p(-erfc(t) / 2)
    t = x * jnp.asarray(0.7071067811865476, x.dtype)
    lo = jnp.log(jsp.erfcx(-t) / 2) - t * t
    hi = jnp.log1p(-jax.lax.erfc(t) / 2)
    return jnp.where(x < -1, lo, hi)


def _ndtr_fn(x):
    """torch's composite ndtr, (1 + erf(x * sqrt(1/2))) * 0.5 (its lower tail underflows to 0
    below about -8.3 in float64, as torch's does)."""
    return (1 + jax.lax.erf(x * jnp.asarray(0.7071067811865476, x.dtype))) * 0.5


# torch: exp(-x^2/2 - log_ndtr(x)) / sqrt(2 pi)
_log_ndtr_fn.defjvps(lambda g, ans, x: g * jnp.exp(-x * x / 2 - ans)
                     / jnp.sqrt(2 * jnp.pi).astype(x.dtype))


@jax.custom_jvp
def _i1_fn(x):
    return jsp.i1(x)


# torch: i0(x) - i1(x) / x, 0.5 at x == 0
_i1_fn.defjvps(lambda g, ans, x: g * jnp.where(
    x == 0, jnp.asarray(0.5, x.dtype), jsp.i0(x) - ans / jnp.where(x == 0, 1, x)))


@jax.custom_jvp
def _i1e_fn(x):
    return jsp.i1e(x)


# torch: i0e(x) - i1e(x) (sign(x) + 1 / x), 0.5 at x == 0
_i1e_fn.defjvps(lambda g, ans, x: g * jnp.where(
    x == 0, jnp.asarray(0.5, x.dtype),
    jsp.i0e(x) - ans * (jnp.sign(x) + 1 / jnp.where(x == 0, 1, x))))


@jax.custom_jvp
def _i0e_fn(x):
    return jsp.i0e(x)


# torch: i1e(x) - sign(x) i0e(x)
_i0e_fn.defjvps(lambda g, ans, x: g * (jsp.i1e(x) - jnp.sign(x) * ans))


_UNARY = {
    # name: (jax function, grad_fn name or None for "no gradient in torch")
    "i0e": (_i0e_fn, "SpecialI0EBackward0"),
    "i1": (_i1_fn, "SpecialI1Backward0"),
    "i1e": (_i1e_fn, "SpecialI1EBackward0"),
    "ndtr": (_ndtr_fn, "MulBackward1"),
    "ndtri": (_ndtri_fn, "SpecialNdtriBackward0"),
    "log_ndtr": (_log_ndtr_fn, "SpecialLogNdtrBackward0"),
    "erfcx": (_erfcx_fn, "SpecialErfcxBackward0"),
    "entr": (_entr_fn, "SpecialEntrBackward0"),
    "spherical_bessel_j0": (_spherical_j0, None),
    "modified_bessel_i0": (lambda x: jsp.i0(x), None),
    "modified_bessel_i1": (lambda x: jsp.i1(x), None),
    "bessel_j0": (_bessel.j0, None),
    "bessel_j1": (lambda x: jnp.where(x == 0, x, _bessel.j1(x)), None),   # (j1(-0.) is -0.)
    "bessel_y0": (_bessel.y0, None),
    "bessel_y1": (_bessel.y1, None),
    "modified_bessel_k0": (_bessel.k0, None),
    "modified_bessel_k1": (_bessel.k1, None),
    "scaled_modified_bessel_k0": (_bessel.k0e, None),
    "scaled_modified_bessel_k1": (_bessel.k1e, None),
    "airy_ai": (_bessel.airy_ai, None),
}


# torch's kernels for float16/bfloat16: none for these (NotImplementedError) ...
_NO_HALF = frozenset({"ndtri", "log_ndtr", "erfcx", "spherical_bessel_j0", "modified_bessel_i0",
                      "modified_bessel_i1", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
                      "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
                      "scaled_modified_bessel_k1", "airy_ai"})
# ... these compute in float32 and round once (jax's would compute in the low precision) ...
_FLOAT32_HALF = frozenset({"i1", "i1e"})


def _ndtr_half(x):
    """... and ndtr is torch's composite (1 + erf(x * sqrt(1/2))) * 0.5, each step rounded to
    the input's dtype."""
    low, f32 = x.dtype, jnp.float32

    def r(v):
        return v.astype(low).astype(f32)
    t = r(x.astype(f32) * jnp.float32(0.7071067811865476))
    return (r(1 + r(jax.lax.erf(t))) * 0.5).astype(low)


def _half_aware(name, f):
    def g(x):
        if x.dtype in (jnp.float16, jnp.bfloat16):
            if name == "ndtr":
                return _ndtr_half(x)
            if name in _FLOAT32_HALF:
                return f(x.astype(jnp.float32)).astype(x.dtype)
        return f(x)
    return g


def _refuse(name, dtype):
    raise not_implemented(f"{name}_cpu", dtype)


def _refuse_binary(name, input, other, half=False):
    """torch's NotImplementedError where the promoted dtype of a binary op is complex (or, with
    ``half``, float16/bfloat16): its kernels have no such types."""
    from .._ops.binary_math import _promote_of
    d = _promote_of(input, other)
    if d.is_complex or (half and d.name in ("float16", "bfloat16")):
        _refuse(name, d)


def _mk_unary(name, f, grad_name):
    op = defop("special_" + name, promote="float", grad_name=grad_name or "NotImplemented",
               differentiable=grad_name is not None)(_half_aware(name, f))

    def fn(input, *, out=None):
        _need_tensor(name, input)
        if (name in _NO_HALF and input.dtype.name in ("float16", "bfloat16")) \
                or input.dtype.is_complex:      # (no complex kernels; ndtr's is erf's)
            _refuse("erf_vml" if name == "ndtr" else name, input.dtype)
        return _out(apply(op, input), out, name)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.special.{name}, elementwise."
    return fn


for _name, (_f, _g) in _UNARY.items():
    globals()[_name] = _mk_unary(_name, _f, _g)


# ------------------------------------------------------------------ binary ops

@jax.custom_jvp
def _xlog1py_fn(x, y):
    return jnp.where((x == 0) & ~jnp.isnan(y), jnp.zeros_like(x * y), x * jnp.log1p(y))


# torch: d/dx = xlog1py(grad, y) masked to 0 where x == 0 and y <= -1; d/dy = grad x / (y + 1)
_xlog1py_fn.defjvps(
    lambda g, ans, x, y: g * jnp.where((x == 0) & (y <= -1), 0, jnp.log1p(y)),
    lambda g, ans, x, y: g * x / (y + 1))

_xlog1py = defop("special_xlog1py", promote="float", grad_name="SpecialXlog1PyBackward0")(
    lambda x, y: _xlog1py_fn(x, y))


def xlog1py(input, other, *, out=None):
    """input * log1p(other), 0 where input == 0 (unless other is nan)."""
    _need_tensor("xlog1py", input, other)
    _refuse_binary("xlog1py", input, other)
    return _out(apply(_xlog1py, input, other), out, "xlog1py")


@jax.custom_jvp
def _zeta_plain(x, q):
    # torch's own zeta (its poles, its sum from a negative q)
    from .._ops.special_ops import torch_zeta
    return torch_zeta(x, q)


def _zeta_dq(g, ans, x, q):
    from .._ops.special_ops import torch_zeta
    return g * -x * torch_zeta(x + 1, q)


# the x tangent is never used: a gradient to x raises before (torch has none)
_zeta_plain.defjvps(lambda g, ans, x, q: jnp.zeros_like(ans), _zeta_dq)

_zeta_vjp = _no_grad_for(_zeta_plain, which=(0,), name="zeta")
_zeta = defop("special_zeta", promote="float", grad_name="SpecialZetaBackward0")(
    lambda x, q, *, blocked: _zeta_vjp(x, q, blocked=blocked))


def zeta(input, other, *, out=None):
    """The Hurwitz zeta function sum_k (k + other) ** -input."""
    _need_tensor("zeta", input, other)
    _refuse_binary("zeta", input, other, half=True)
    return _out(apply(_zeta, input, other, blocked=_blocked((input, other), (0,))), out, "zeta")


# ------------------------------------------------------------------ orthogonal polynomials

def _recur(x, n, q1, step):
    """The value after the three-term recurrence ``r = step(j, p, q)`` for j = 1 .. n - 1,
    started from (p, q) = (1, q1); each element stops at its own n (a while loop to max n)."""
    n = jnp.broadcast_to(n, x.shape)
    top = jnp.max(n, initial=1)

    def body(j, pq):
        p, q = pq
        r = step(j.astype(x.dtype), p, q)
        keep = j < n
        return jnp.where(keep, q, p), jnp.where(keep, r, q)

    _, q = _tiers.fori_loop(jnp.asarray(1, n.dtype), top, body,
                         (jnp.ones_like(x), jnp.broadcast_to(q1, x.shape).astype(x.dtype)))
    return q


def _parity(n, even, odd):
    return jnp.where(n % 2 == 0, even, odd)


def _cheb_family(kind, y, n, trig_from):
    """Chebyshev polynomials of the four kinds at y (torch's kernels: ±1 special values, a
    trigonometric form for n > trig_from inside (-1, 1), else the recurrence)."""
    one = jnp.ones_like(y)
    nf = n.astype(y.dtype)
    q1 = {"t": y, "u": 2 * y, "v": 2 * y - 1, "w": 2 * y + 1}[kind]
    rec = _recur(y, n, q1, lambda j, p, q: (y + y) * q - p)
    rec = jnp.where(n == 0, one, rec)
    theta = jnp.arccos(jnp.clip(y, -1, 1))
    if kind == "t":
        at_pos, at_neg = one, _parity(n, one, -one)
        trig = jnp.cos(nf * theta)
    elif kind == "u":
        at_pos, at_neg = nf + 1, _parity(n, nf + 1, -(nf + 1))
        s = jnp.sin(theta)
        trig = jnp.where(s != 0, jnp.sin((nf + 1) * theta) / jnp.where(s != 0, s, 1),
                         (nf + 1) * jnp.cos((nf + 1) * theta) / y)
    elif kind == "v":
        at_pos, at_neg = one, _parity(n, 2 * nf + 1, -(2 * nf + 1))
        trig = jnp.where(jnp.sin(theta / 2) != 1,
                         jnp.cos((nf + 0.5) * theta) / jnp.cos(theta / 2), at_neg)
    else:
        at_pos, at_neg = 2 * nf + 1, _parity(n, one, -one)
        c = jnp.cos(theta / 2)
        trig = jnp.where(c != 1, jnp.sin((nf + 0.5) * theta) / jnp.sin(theta / 2),
                         jnp.where(y > 0, at_pos, at_neg))
    r = jnp.where((n > trig_from) & (jnp.abs(y) < 1), trig, rec)
    return r, at_pos, at_neg


def _chebyshev(kind, shifted):
    # torch's kernels: the ±1 special cases (0 and 1 for the shifted ones), then
    # n > 6 (8 for U, V, W; the shifted W: 4) uses the trigonometric form
    trig_from = 6 if kind == "t" or (shifted and kind != "w") else (4 if shifted else 8)

    def f(x, n):
        n = n.astype(jnp.int64)
        y = x + x - 1 if shifted else x
        r, at_pos, at_neg = _cheb_family(kind, y, n, trig_from)
        if shifted:
            r = jnp.where(x == 1, at_pos, jnp.where(x == 0, at_neg, r))
        else:
            r = jnp.where(jnp.abs(x) == 1, jnp.where(x > 0, at_pos, at_neg), r)
        return jnp.where(n < 0, jnp.zeros_like(x), r)
    return f


def _hermite_h(x, n):
    bad = jnp.isinf(n) | jnp.isnan(n)
    n = jnp.where(bad, -1, n).astype(jnp.int64)
    limit = 128 if x.dtype == jnp.float32 else 512
    r = _recur(x, n, x + x, lambda j, p, q: (x + x) * q - (2 * j) * p)
    r = jnp.where(n > limit, jnp.nan, jnp.where(n == 0, 1, r))
    return jnp.where(n < 0, 0, r).astype(x.dtype)


def _hermite_he(x, n):
    n = n.astype(jnp.int64)
    limit = 128 if x.dtype == jnp.float32 else 512
    r = _recur(x, n, x, lambda j, p, q: x * q - j * p)
    r = jnp.where(n > limit, jnp.nan, jnp.where(n == 0, 1, r))
    return jnp.where(n < 0, 0, r).astype(x.dtype)


def _laguerre(x, n):
    n = n.astype(jnp.int64)
    r = _recur(x, n, 1 - x, lambda j, p, q: (((j + j) + (1 - x)) * q - j * p) / (j + 1))
    r = jnp.where((jnp.abs(x) == 0) | (n == 0), 1, r)
    return jnp.where(n < 0, 0, r).astype(x.dtype)


def _legendre(x, n):
    n = n.astype(jnp.int64)
    r = _recur(x, n, x, lambda j, p, q: ((j + j + 1) * x * q - j * p) / (j + 1))
    r = jnp.where(n == 0, 1, r)
    r = jnp.where(jnp.abs(x) == 1, jnp.where((x > 0) | (n % 2 == 0), 1, -1), r)
    return jnp.where(n < 0, 0, r).astype(x.dtype)


_POLY = {
    "chebyshev_polynomial_t": _chebyshev("t", False),
    "chebyshev_polynomial_u": _chebyshev("u", False),
    "chebyshev_polynomial_v": _chebyshev("v", False),
    "chebyshev_polynomial_w": _chebyshev("w", False),
    "shifted_chebyshev_polynomial_t": _chebyshev("t", True),
    "shifted_chebyshev_polynomial_u": _chebyshev("u", True),
    "shifted_chebyshev_polynomial_v": _chebyshev("v", True),
    "shifted_chebyshev_polynomial_w": _chebyshev("w", True),
    "hermite_polynomial_h": _hermite_h,
    "hermite_polynomial_he": _hermite_he,
    "laguerre_polynomial_l": _laguerre,
    "legendre_polynomial_p": _legendre,
}


def _mk_poly(name, f):
    op = defop("special_" + name, promote="float", differentiable=False)(
        lambda x, n: f(*jnp.broadcast_arrays(x, n)))

    def fn(input, n, *, out=None):
        _need_tensor(name, input, n)
        return _out(apply(op, input, n), out, name)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.special.{name}(input, n): the polynomial of degree n at input."
    return fn


for _name, _f in _POLY.items():
    globals()[_name] = _mk_poly(_name, _f)

del _name, _f, _g


# ------------------------------------------------------------------ torch's argument parsing
#
# torch.special's functions are C++ bindings: their argument errors name ``special_<name>``
# and torch's parameter names, and the binary ones list their overloads (Tensor or Number on
# either side). Each public function checks its arguments that way before running.

# name -> (positional parameters as (name, kind, required), keyword-only parameters); kind
# "Tensor", "int", "float" (checked) or "any"
_UNARY_X = ("airy_ai", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
            "spherical_bessel_j0")
_SIGNATURES = {
    "logit": ((("input", "Tensor", True), ("eps", "float?", False)), ("out",)),
    "logsumexp": ((("input", "Tensor", True), ("dim", "tuple of ints", True),
                   ("keepdim", "bool", False)), ("out",)),
    "softmax": ((("input", "Tensor", True), ("dim", "int", True),
                 ("dtype", "torch.dtype?", False)), ()),
    "log_softmax": ((("input", "Tensor", True), ("dim", "int", True)), ("dtype",)),
    "multigammaln": ((("input", "Tensor", True), ("p", "int", True)), ("out",)),
    "polygamma": ((("n", "int", True), ("input", "Tensor", True)), ("out",)),
    "gammainc": ((("input", "Tensor", True), ("other", "Tensor", True)), ("out",)),
    "gammaincc": ((("input", "Tensor", True), ("other", "Tensor", True)), ("out",)),
    "round": ((("input", "Tensor", True),), ("decimals", "out")),
}
_OVERLOADED = {n: ("input", "other") for n in ("xlogy", "xlog1py", "zeta")}
_OVERLOADED.update({n: ("x", "n") for n in _POLY})


def _tp(v):
    from .._creation import _tp_name
    return _tp_name(v)


def _is_number(v):
    import numbers
    return isinstance(v, numbers.Number) and not isinstance(v, Tensor)


def _kind_ok(kind, v):
    if kind == "Tensor":
        return isinstance(v, Tensor)
    if kind == "int":
        import numbers
        return isinstance(v, numbers.Integral) and not isinstance(v, bool) or \
            (isinstance(v, Tensor) and v.numel() == 1 and not v.dtype.is_floating_point)
    if kind == "float?":
        import numbers
        return v is None or isinstance(v, numbers.Real) or isinstance(v, Tensor)
    if kind == "torch.dtype?":
        return v is None or isinstance(v, _tl.dtype)
    if kind == "bool":
        return isinstance(v, bool)
    if kind == "tuple of ints":
        import numbers
        return isinstance(v, numbers.Integral) or (isinstance(v, (tuple, list)) and all(
            isinstance(d, numbers.Integral) for d in v)) or (isinstance(v, Tensor) and
                                                            v.numel() == 1)
    return True


def _overload_error(name, args, kwargs):
    a, b = _OVERLOADED[name]
    parts = [_tp(v) for v in args]
    kw = [f"{k}={_tp(v)}" for k, v in kwargs.items()]
    got = ", ".join(parts + kw) + (", " if kw and not parts else "")
    first = "self" if a == "input" else a
    overloads = ((f"Tensor {a}, Tensor {b}", ("Tensor", "Tensor")),
                 (f"Number {first}, Tensor {b}", ("Number", "Tensor")),
                 (f"Tensor {a}, Number {b}", ("Tensor", "Number")))
    lines = []
    for text, kinds in overloads:
        lines.append(f" * ({text}, *, Tensor out = None)\n")
        if len(args) == 4 and not kwargs:
            # (torch's parser details the mismatch for four positional arguments: each one
            # past the two operands, each Number parameter, each non-Tensor for a Tensor)
            marks = [f"!{_tp(v)}!" if i >= 2 or kinds[i] == "Number" or
                     not isinstance(v, Tensor) else _tp(v) for i, v in enumerate(args)]
            lines.append(f"      didn't match because some of the arguments have invalid "
                         f"types: ({', '.join(marks)})\n")
    return TypeError(
        f"special_{name}() received an invalid combination of arguments - got ({got}), but "
        f"expected one of:\n" + "".join(lines))


def _check_overloaded(name, args, kwargs):
    """torch's checks of a binary function's overloads; the call's (args, kwargs) in the
    implementation's form: the two operands positional."""
    a, b = _OVERLOADED[name]
    if a == "input" and "self" in kwargs and not args and "input" not in kwargs and \
            _is_number(kwargs["self"]):
        kwargs = dict(kwargs)                   # (the Number overload names it self)
        kwargs["input"] = kwargs.pop("self")
    rest = {k: v for k, v in kwargs.items() if k not in (a, b)}
    vals = list(args)
    ok = len(vals) <= 2 and all(k == "out" for k in rest) and \
        (rest.get("out") is None or isinstance(rest["out"], Tensor))
    for k in (a, b)[len(vals):]:
        if k in kwargs:
            vals.append(kwargs[k])
    if ok and (len(vals) != 2 or any(k in kwargs for k in (a, b)[:len(args)])):
        ok = False
    if ok:
        x, y = vals
        ok = (isinstance(x, Tensor) and (isinstance(y, Tensor) or _is_number(y))) or \
            (_is_number(x) and isinstance(y, Tensor))
    if not ok:
        raise _overload_error(name, args, kwargs)
    return tuple(vals), rest


def _check_signature(name, args, kwargs):
    pos, kwonly = _SIGNATURES.get(name) or (
        ((("x" if name in _UNARY_X else "input"), "Tensor", True),), ("out",))
    names = [p[0] for p in pos]
    lo = sum(1 for p in pos if p[2])
    if len(args) > len(pos):
        takes = f"{len(pos)} positional argument{'s' if len(pos) != 1 else ''}" if \
            lo == len(pos) else f"from {lo} to {len(pos)} positional arguments"
        raise TypeError(f"special_{name}() takes {takes} but {len(args)} were given")
    # (torch's order: each parameter in turn, its type or its absence; then unknown keywords)
    missing = [p[0] for i, p in enumerate(pos) if p[2] and i >= len(args) and
               p[0] not in kwargs]
    for i, (p, kind, _req) in enumerate(pos):
        given = i < len(args)
        if not given and p not in kwargs:
            if p in missing:
                n = len(missing)
                raise TypeError(f"special_{name}() missing {n} required positional argument"
                                f"{'s' if n == 1 else ''}: " +
                                ", ".join(f'"{m}"' for m in missing))
            continue
        v = args[i] if given else kwargs[p]
        if not _kind_ok(kind, v):
            where = f" (position {i + 1})" if given else ""
            want = kind.rstrip("?")
            raise TypeError(f"special_{name}(): argument '{p}'{where} must be {want}, not "
                            f"{_tp(v)}")
    for k in kwargs:
        if k not in names and k not in kwonly:
            raise TypeError(f"special_{name}() got an unexpected keyword argument '{k}'")
    for k, kind in (("decimals", "int"), ("dtype", "torch.dtype?")):
        if k in kwargs and k in kwonly and not _kind_ok(kind, kwargs[k]):
            raise TypeError(f"special_{name}(): argument '{k}' must be {kind.rstrip('?')}, "
                            f"not {_tp(kwargs[k])}")
    if kwargs.get("out") is not None and not isinstance(kwargs["out"], Tensor):
        raise TypeError(f"special_{name}(): argument 'out' must be Tensor, not "
                        f"{_tp(kwargs['out'])}")
    # the implementation's form: torch's positional parameters positional (an integer given
    # as a tensor read as its value), the keyword-only ones (and softmax's dtype) by keyword
    vals, rest = [], {k: v for k, v in kwargs.items() if k in kwonly}
    for i, (p, kind, _req) in enumerate(pos):
        if i < len(args) or p in kwargs:
            v = args[i] if i < len(args) else kwargs[p]
            if kind == "int" and isinstance(v, Tensor):
                v = int(v)
            if p == "dtype":
                rest["dtype"] = v
            else:
                vals.append(v)
        elif p != "dtype":
            break
    return tuple(vals), rest


def _with_torch_args(name, fn):
    check = _check_overloaded if name in _OVERLOADED else _check_signature

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        args, kwargs = check(name, args, kwargs)
        return fn(*args, **kwargs)
    return wrapper


for _name in __all__:
    globals()[_name] = _with_torch_args(_name, globals()[_name])
del _name

from .. import overrides as _overrides  # noqa: E402
_overrides.make_overridable(globals(), "torch.special")  # (__torch_function__: torchlike.overrides)
