"""Special functions exposed at the top level (``torchlike.i0``, ``polygamma``, ...), declared
once here and shared with ``torchlike.special`` (``special.i0`` is ``torchlike.i0``,
``special.multigammaln`` is ``mvlgamma``, ``special.gammainc`` is ``igamma``).

Where torch has no gradient (``igamma``'s and ``igammac``'s first argument) the op is a
``jax.custom_vjp`` whose backward raises torch's NotImplementedError when that input needs grad.

>>> import torchlike as torch
>>> torch.polygamma(1, torch.tensor([1.0]))
tensor([1.6449])
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np

from .._barebones import not_implemented
from .._tensor import Tensor
from .._registry import apply, defop
from ._surface import methods, public, toplevel

try:                    # the in-place helper is moving from the registry to _storage
    from .._registry import apply_
except ImportError:     # pragma: no cover
    from .._storage import apply_

__all__ = ["i0", "polygamma", "mvlgamma", "igamma", "igammac"]


def no_grad_for(fn, *, which, name):
    """``fn(*xs)`` with a VJP that raises torch's "derivative for ``name``" error when one of
    the inputs at positions ``which`` needs a gradient; jax's gradients for the others.

    The registry differentiates only the inputs that need grad, but a custom VJP sees all of
    them: the caller passes ``blocked`` (whether a refused input needs grad) as a static flag.
    """
    def make(blocked):
        @jax.custom_vjp
        def f(*xs):
            return fn(*xs)

        def fwd(*xs):
            out, vjp = jax.vjp(fn, *xs)
            return out, vjp

        def bwd(vjp, g):
            if blocked:
                raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
            return vjp(g)

        f.defvjp(fwd, bwd)
        return f

    made = {True: make(True), False: make(False)}
    return lambda *xs, blocked: made[blocked](*xs)


def no_derivative(fn, name, declared=False):
    """``fn`` whose backward raises torch's error for an op without a derivative (its output
    requires grad; ``backward`` through it raises): an op with no formula at all, or
    (``declared``) one whose formula torch declares as not implemented."""
    @jax.custom_vjp
    def f(*xs):
        return fn(*xs)

    def fwd(*xs):
        # (``f`` itself, not ``fn``: under a differentiation nested outside this one (a
        # compiled call's, torch.func's) jax differentiates the forward rule's body, which
        # would give ``fn``'s own derivative, a silent zero for floor)
        return f(*xs), None

    def bwd(_res, _g):
        if declared:
            raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
        raise RuntimeError(f"derivative for aten::{name} is not implemented")

    f.defvjp(fwd, bwd)
    return f


def blocked(args, which):
    """Whether one of ``args[i] for i in which`` is a Tensor that requires grad."""
    return any(isinstance(args[i], Tensor) and args[i].requires_grad for i in which)


def _no_complex(kernel, t):
    """torch's NotImplementedError of a kernel with no complex types."""
    if isinstance(t, Tensor) and t.dtype.is_complex:
        from .unary import _not_impl
        _not_impl(kernel, t)


def _poly_kernel(n):
    return "digamma" if n == 0 else "trigamma" if n == 1 else "polygamma"


# ------------------------------------------------------------------ i0

@jax.custom_jvp
def _i0_fn(x):
    return jsp.i0(x)


# torch's derivative, i1(x) (jax's, through exp(|x|) * i0e(x), was 1 at 0)
_i0_fn.defjvps(lambda g, ans, x: g * jsp.i1(x))


_i0 = defop("i0", promote="float", grad_name="I0Backward0")(_i0_fn)


@public(out=True)
def i0(input):
    """The modified Bessel function of the first kind of order 0."""
    _no_complex("i0_vml_cpu", input)
    return apply(_i0, input)


def _i0_(self):
    _no_complex("i0_vml_cpu", self)
    return apply_(_i0, self)


# ------------------------------------------------------------------ polygamma

def _digamma(x):
    # torch: digamma(+-0) = -+inf, nan at negative integers (jax gives nan at 0)
    return jnp.where(x == 0, jnp.copysign(jnp.asarray(jnp.inf, x.dtype), -x), jsp.digamma(x))


def _trigamma(x):
    # torch's kernel: reflection below 0.5, six recurrence steps, then the asymptotic series
    pi = jnp.asarray(math.pi, x.dtype)
    low = x < 0.5
    s = jnp.sin(pi * x)
    result = jnp.where(low, -(pi * pi) / (s * s), jnp.zeros_like(x))
    x = jnp.where(low, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (x * x)
        x = x + 1
    ixx = 1 / (x * x)
    result = result + (1 + 1 / (2 * x) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))) / x
    return jnp.where(low, -result, result)


_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)


def torch_zeta(x, q):
    """torch's Hurwitz zeta (ATen's Math.h, Cephes's Euler-Maclaurin sum) in double: a
    negative non-integer ``q`` with an integer ``x`` sums from ``q`` on, as torch's does (jax's
    zeta gives garbage there); in the dtype of ``x``/``q`` at the end."""
    out_dt = jnp.result_type(x, q)
    f64 = jnp.float64
    x, q = jnp.broadcast_arrays(jnp.asarray(x, f64), jnp.asarray(q, f64))
    machep = 1.11022302462515654042e-16

    def pw(base, e):          # C's pow for a negative base and an integral exponent
        r = jnp.abs(base) ** e
        odd = jnp.mod(jnp.abs(e), 2) == 1
        return jnp.where((base < 0) & odd, -r, r)

    s = pw(q, -x)
    a, b = q, jnp.zeros_like(q)
    i = jnp.zeros(q.shape, jnp.int32)
    # the cases torch returns before its sum (a pole, a domain error; an infinite q is an
    # integer too) take no part in the loop
    special = (x <= 1) | ((q <= 0) & ((q == jnp.floor(q)) | (x != jnp.floor(x))))
    done = special
    res = jnp.zeros_like(q)

    def cond(st):
        s, a, b, i, done, res = st
        return jnp.any(~done & ((i < 9) | (a <= 9.0)))

    def body(st):
        s, a, b, i, done, res = st
        act = ~done & ((i < 9) | (a <= 9.0))
        i = jnp.where(act, i + 1, i)
        a = jnp.where(act, a + 1.0, a)
        b = jnp.where(act, pw(a, -x), b)
        s = jnp.where(act, s + b, s)
        stop = act & (-machep * s < b) & (b < machep * s)
        res = jnp.where(stop, s, res)
        return s, a, b, i, done | stop, res

    s, a, b, i, done, res = jax.lax.while_loop(cond, body, (s, a, b, i, done, res))
    w = a
    s = s + b * w / (x - 1.0)
    s = s - 0.5 * b
    a = jnp.ones_like(q)
    k = jnp.zeros_like(q)
    for coef in _ZETA_A:
        a = a * (x + k)
        b = b / w
        t = a * b / coef
        s_new = s + t
        stop = ~done & (jnp.abs(t / s_new) < machep)
        s = jnp.where(done, s, s_new)
        res = jnp.where(stop, s, res)
        done = done | stop
        k = k + 1.0
        a = a * (x + k)
        b = b / w
        k = k + 1.0
    res = jnp.where(done, res, s)
    res = jnp.where((q <= 0) & (x != jnp.floor(x)), jnp.nan, res)
    res = jnp.where((q <= 0) & (q == jnp.floor(q)), jnp.inf, res)
    res = jnp.where(x < 1, jnp.nan, res)
    res = jnp.where(x == 1, jnp.inf, res)
    return res.astype(out_dt)


def _polygamma_n(n, x):
    # n >= 2: torch's calc_polygamma, (-1)^(n+1) exp(lgamma(n + 1)) zeta(n + 1, x), in x's
    # dtype around its double zeta; zeta has poles at the non-positive integers
    nn = jnp.maximum(n, 2)
    fact = jnp.exp(jsp.gammaln(nn.astype(x.dtype) + 1))
    sgn = jnp.where(nn % 2 == 1, 1.0, -1.0).astype(x.dtype)
    r = (sgn * fact * torch_zeta((nn + 1).astype(x.dtype), x)).astype(x.dtype)
    pole = (x <= 0) & (x == jnp.floor(x))
    sign = jnp.where(n % 2 == 1, 1.0, -1.0).astype(x.dtype)
    return jnp.where(pole, sign * jnp.inf, r)


@jax.custom_jvp
def _poly_core(n, x):
    return jnp.where(n == 0, _digamma(x), jnp.where(n == 1, _trigamma(x), _polygamma_n(n, x)))


def _poly_jvp(g, ans, n, x):
    return g * _poly_core(n + 1, x)


_poly_core.defjvps(None, _poly_jvp)


@defop("polygamma", promote=None, grad_name="PolygammaBackward0")
def _polygamma(x, *, n, dtype):
    x = x.astype(dtype)
    return _poly_core(jnp.asarray(n, jnp.int64), x)


def _float_dtype(t):
    from .. import _dtype as D
    return t.dtype if (t.dtype.is_floating_point or t.dtype.is_complex) \
        else D.get_default_dtype()


@public(out=True)
def polygamma(n, input):
    """The n-th derivative of the digamma function."""
    if isinstance(n, Tensor) or not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    _no_complex(_poly_kernel(n), input)
    return apply(_polygamma, input, n=n, dtype=_float_dtype(input).np)


def _polygamma_method(self, n):
    return polygamma(n, self)


def _polygamma_(self, n):
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    _no_complex(_poly_kernel(n), self)
    return apply_(_polygamma, self, n=n, dtype=_float_dtype(self).np)


# ------------------------------------------------------------------ mvlgamma

@defop("mvlgamma", promote="float", grad_name="MvlgammaBackward0")
def _mvlgamma(x, *, p):
    i = jnp.arange(p, dtype=x.dtype) / 2
    return (jsp.gammaln(x[..., None] - i).sum(-1)
            + jnp.asarray(p * (p - 1) / 4 * math.log(math.pi), x.dtype))


def _mvlgamma_check(input, p):
    # torch 2.13 no longer checks that every element exceeds (p - 1) / 2
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if input.dtype.name == "bool":
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    _no_complex("arange_cpu", input)         # (torch's arange of the input's dtype)


@public(out=True)
def mvlgamma(input, p):
    """The multivariate log-gamma function of dimension p."""
    _mvlgamma_check(input, p)
    return apply(_mvlgamma, input, p=int(p))


def _mvlgamma_(self, p):
    _mvlgamma_check(self, p)
    if not self.dtype.is_floating_point:
        from .. import _dtype as D
        raise RuntimeError(f"mvlgamma: result type {D.legacy_name(self.dtype)} can't be cast to "
                           f"the desired output type {D.legacy_name(D.get_default_dtype())}")
    return apply_(_mvlgamma, self, p=int(p))


# ------------------------------------------------------------------ igamma / igammac

def _a_inf(a, x, r, value):
    # torch (following SciPy): a = inf gives P = 0, Q = 1 for finite x (nan for x = inf)
    return jnp.where(jnp.isinf(a) & (a > 0) & (x >= 0),
                     jnp.where(jnp.isinf(x), jnp.nan, value).astype(r.dtype), r)


def _igamma_fn(a, x):
    return _a_inf(a, x, jsp.gammainc(a, x), 0.0)


def _igammac_fn(a, x):
    return _a_inf(a, x, jsp.gammaincc(a, x), 1.0)


_ig = no_grad_for(_igamma_fn, which=(0,), name="igamma: input")
_igc = no_grad_for(_igammac_fn, which=(0,), name="igammac: input")
_igamma = defop("igamma", promote="float", grad_name="IgammaBackward0")(
    lambda a, x, *, blocked: _ig(a, x, blocked=blocked))
_igammac = defop("igammac", promote="float", grad_name="IgammacBackward0")(
    lambda a, x, *, blocked: _igc(a, x, blocked=blocked))


def _binary_args(name, input, other):
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")


def _need_float(name, *args):
    from .. import _dtype as D
    ts = [a for a in args if isinstance(a, Tensor)]
    if ts:
        d = D.result_type_of([t.dtype for t in ts if t.ndim], [t.dtype for t in ts if not t.ndim],
                             [])
        if d.is_floating_point:         # (complex too is refused)
            return
        raise not_implemented(f"{name}_cpu", d)


@public(out=True)
def igamma(input, other):
    """The regularised lower incomplete gamma function P(input, other)."""
    _binary_args("igamma", input, other)
    _need_float("igamma", input, other)
    r = apply(_igamma, input, other, blocked=blocked((input, other), (0,)))
    return r


@public(out=True)
def igammac(input, other):
    """The regularised upper incomplete gamma function Q(input, other)."""
    _binary_args("igammac", input, other)
    _need_float("igammac", input, other)
    r = apply(_igammac, input, other, blocked=blocked((input, other), (0,)))
    return r


def _igamma_(self, other):
    _need_float("igamma", self, other)
    return apply_(_igamma, self, other, blocked=blocked((self, other), (0,)))


def _igammac_(self, other):
    _need_float("igammac", self, other)
    return apply_(_igammac, self, other, blocked=blocked((self, other), (0,)))


# ------------------------------------------------------------------ Tensor methods

METHODS = {"i0": i0, "i0_": _i0_, "polygamma": _polygamma_method, "polygamma_": _polygamma_,
           "mvlgamma": mvlgamma, "mvlgamma_": _mvlgamma_, "igamma": igamma,
           "igamma_": _igamma_, "igammac": igammac, "igammac_": _igammac_}
methods(**METHODS)
toplevel("i0_")
