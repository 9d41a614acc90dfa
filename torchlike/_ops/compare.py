"""Comparisons and logic: eq/ne/lt/le/gt/ge (and torch's aliases), logical_* and bitwise_* ops."""
from __future__ import annotations

import builtins

import jax.numpy as jnp

from .. import _dtype as D
from .._tensor import Tensor
from .._registry import apply, defop
from ._surface import alias, methods, public
from .unary import _is_int


__all__ = ['isclose', 'allclose', 'equal', 'isin', 'eq', 'ne', 'lt', 'le', 'gt', 'ge', 'greater', 'less', 'greater_equal', 'less_equal',
           'not_equal', 'logical_and', 'logical_or', 'logical_xor', 'logical_not', 'bitwise_and',
           'bitwise_or', 'bitwise_xor', 'bitwise_not']


# ------------------------------------------------------------------ comparisons and logic

def _cmp(name, f):
    return defop(name, promote="common", differentiable=False)(f)


_eq = _cmp("eq", lambda a, b: a == b)
_ne = _cmp("ne", lambda a, b: a != b)
def _order(name, f):
    """An ordering comparison: torch has no kernel for complex operands."""
    def fn(a, b):
        for x in (a, b):
            if jnp.iscomplexobj(x):
                raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                                          f"'{D.legacy_name(D.from_jax(x.dtype))}'")
        return f(a, b)
    return _cmp(name, fn)


_lt = _order("lt", lambda a, b: a < b)
_le = _order("le", lambda a, b: a <= b)
_gt = _order("gt", lambda a, b: a > b)
_ge = _order("ge", lambda a, b: a >= b)
_land = defop("logical_and", differentiable=False)(
    lambda a, b: jnp.logical_and(a != 0, b != 0))
_lor = defop("logical_or", differentiable=False)(lambda a, b: jnp.logical_or(a != 0, b != 0))
_lxor = defop("logical_xor", differentiable=False)(
    lambda a, b: jnp.logical_xor(a != 0, b != 0))
_lnot = defop("logical_not", differentiable=False)(lambda a: a == 0)


def _bitwise_check(a, name):
    if jnp.issubdtype(a.dtype, jnp.inexact):
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                                  f"'{D.legacy_name(D.from_jax(a.dtype))}'")


def _bw(name, f):
    def fn(a, b):
        _bitwise_check(a, name)
        _bitwise_check(b, name)
        return f(a, b)
    return defop(name, promote="common", differentiable=False)(fn)


_band = _bw("bitwise_and", jnp.bitwise_and)
_bor = _bw("bitwise_or", jnp.bitwise_or)
_bxor = _bw("bitwise_xor", jnp.bitwise_xor)


@defop("bitwise_not", differentiable=False)
def _bnot(a):
    _bitwise_check(a, "bitwise_not")
    return jnp.logical_not(a) if a.dtype == jnp.bool_ else jnp.invert(a)


@public(method=True, out=True)
def eq(input, other):
    return apply(_eq, input, other)


@public(method=True, out=True, also=("not_equal",))
def ne(input, other):
    return apply(_ne, input, other)


@public(method=True, out=True, also=("less",))
def lt(input, other):
    return apply(_lt, input, other)


@public(method=True, out=True, also=("less_equal",))
def le(input, other):
    return apply(_le, input, other)


@public(method=True, out=True, also=("greater",))
def gt(input, other):
    return apply(_gt, input, other)


@public(method=True, out=True, also=("greater_equal",))
def ge(input, other):
    return apply(_ge, input, other)


greater, less, greater_equal, less_equal, not_equal = (
    alias(f, n) for f, n in ((gt, "greater"), (lt, "less"), (ge, "greater_equal"),
                             (le, "less_equal"), (ne, "not_equal")))


@public(method=True, inplace=True, out=True)
def logical_and(input, other):
    return apply(_land, input, other)


@public(method=True, inplace=True, out=True)
def logical_or(input, other):
    return apply(_lor, input, other)


@public(method=True, inplace=True, out=True)
def logical_xor(input, other):
    return apply(_lxor, input, other)


@public(method=True, inplace=True, out=True)
def logical_not(input):
    return apply(_lnot, input)


@public(method=True, out=True)
def bitwise_and(input, other):
    return apply(_band, input, other)


@public(method=True, out=True)
def bitwise_or(input, other):
    return apply(_bor, input, other)


@public(method=True, out=True)
def bitwise_xor(input, other):
    return apply(_bxor, input, other)


def _bitwise_inplace(fn):
    """``Tensor.<fn>_``: as torch, an integer tensor given a float operand fails its cast
    before the kernel refuses floats."""
    from .._storage import inplace_of
    from .typeinfo import result_type
    inplace = inplace_of(fn)

    def m(self, other):
        r = result_type(self, other)
        if r.is_floating_point and not self.dtype.is_floating_point:
            raise RuntimeError(f"result type {D.legacy_name(r)} can't be cast to the desired "
                               f"output type {D.legacy_name(self.dtype)}")
        return inplace(self, other)
    m.__name__ = m.__qualname__ = inplace.__name__
    m.__doc__ = inplace.__doc__
    return m


methods(**{f.__name__ + "_": _bitwise_inplace(f) for f in (bitwise_and, bitwise_or,
                                                             bitwise_xor)})


@public(method=True, inplace=True, out=True)
def bitwise_not(input):
    return apply(_bnot, input)



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
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{D.legacy_name(input.dtype)} did not match "
                           f"{D.legacy_name(other.dtype)}")
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


methods(isclose=isclose, allclose=allclose, equal=equal)


# ------------------------------------------------------------------ isin


@defop("isin", promote="common", differentiable=False)
def _isin(a, b, invert):
    r = jnp.isin(a, jnp.reshape(b, -1))
    return ~r if invert else r


@public(out=True)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` is in ``test_elements`` (either may be a number)."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments - got (" +
                        type(elements).__name__ + ", " + type(test_elements).__name__ + ")")
    for v in (elements, test_elements):
        dt = v.dtype if isinstance(v, Tensor) else D.bool if v.__class__ is bool else \
            D.complex128 if isinstance(v, complex) else None
        if dt is D.bool or dt is not None and dt.is_complex:
            raise RuntimeError(f"Unsupported input type encountered for isin(): "
                               f"{D.legacy_name(dt)}")
    return apply(_isin, elements, test_elements, invert=bool(invert))

