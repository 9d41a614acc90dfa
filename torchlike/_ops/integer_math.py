"""Integer and floating-point bit-level math: gcd/lcm, shifts, frexp/ldexp, nextafter,
heaviside."""
from __future__ import annotations


import jax.numpy as jnp

from .. import _dtype as D
from .. import return_types as _return_types
from .._tensor import Tensor
from .._registry import apply, defop
from ._surface import public

__all__ = ["gcd", "lcm", "bitwise_left_shift", "bitwise_right_shift", "frexp", "ldexp",
           "nextafter", "heaviside"]


def _int_only(name, *ts):
    """torch's error where the operands promote to a dtype other than an integer one (bool
    and floating types have no kernel)."""
    from .typeinfo import result_type
    try:
        dt = result_type(*ts)
    except TypeError:
        dt = next((t.dtype for t in ts if isinstance(t, Tensor)
                   and not t.dtype.category < D._FLOAT), None)
    if dt is not None and dt.category != D._INT:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                                  f"'{D.legacy_name(dt)}'")


@defop("gcd", promote="common", differentiable=False)
def _gcd(a, b):
    return jnp.gcd(a, b)


@defop("lcm", promote="common", differentiable=False)
def _lcm(a, b):
    return jnp.lcm(a, b)


@public(method=True, inplace=True, out=True, top_inplace=True)
def gcd(input, other):
    _int_only("gcd", input, other)
    return apply(_gcd, input, other)


@public(method=True, inplace=True, out=True, top_inplace=True)
def lcm(input, other):
    _int_only("lcm", input, other)
    return apply(_lcm, input, other)


def _shift(a, b, left):
    bits = jnp.iinfo(a.dtype).bits if a.dtype != jnp.bool_ else 8
    b = b.astype(a.dtype)
    big = (b < 0) | (b >= bits)
    safe = jnp.where(big, 0, b)
    if left:
        return jnp.where(big, jnp.zeros_like(a), jnp.left_shift(a, safe))
    # arithmetic shift: past the width a negative value gives -1, a positive one 0
    fill = jnp.where(a < 0, -1, 0).astype(a.dtype) if jnp.issubdtype(a.dtype, jnp.signedinteger) \
        else jnp.zeros_like(a)
    return jnp.where(big, fill, jnp.right_shift(a, safe))


@defop("bitwise_left_shift", promote="common", differentiable=False)
def _lshift(a, b):
    return _shift(a, b, True)


@defop("bitwise_right_shift", promote="common", differentiable=False)
def _rshift(a, b):
    return _shift(a, b, False)


@public(method=True, inplace=True, out=True)
def bitwise_left_shift(input, other):
    _int_only("lshift", input, other)
    return apply(_lshift, input, other)


@public(method=True, inplace=True, out=True)
def bitwise_right_shift(input, other):
    _int_only("rshift", input, other)
    return apply(_rshift, input, other)


frexp_result = _return_types.maker("frexp")


@defop("frexp", differentiable=False)
def _frexp(a):
    m, e = jnp.frexp(a)
    return m, e.astype(jnp.int32)


@public(method=True, out=True)
def frexp(input):
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = apply(_frexp, input)
    return frexp_result(m, e)


@public(method=True, inplace=True, out=True, top_inplace=True)
def ldexp(input, other):
    """``input * 2.0 ** other``: in ``input``'s dtype for a floating input and an integer
    exponent tensor (torch's kernel; a bool exponent is refused there), else torch's
    composite (promoting as ``mul`` and ``pow`` do)."""
    from .arithmetic import mul, pow
    if isinstance(other, Tensor) and input.dtype.is_floating_point and \
            other.dtype.category in (D._BOOL, D._INT):
        if other.dtype is D.bool:
            raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool'")
        return mul(input, pow(2.0, other.to(input.dtype)))
    return mul(input, pow(2.0, other))


@defop("nextafter", promote="common", differentiable=False)
def _nextafter(a, b):
    return jnp.nextafter(a, b)


@public(method=True, inplace=True, out=True)
def nextafter(input, other):
    from .typeinfo import result_type
    dt = result_type(input, other) if isinstance(other, Tensor) else input.dtype
    if not dt.is_floating_point:
        raise NotImplementedError(f"\"nextafter_cpu\" not implemented for "
                                  f"'{D.legacy_name(dt)}'")
    return apply(_nextafter, input, other)


@defop("heaviside", promote="common", differentiable=False)
def _heaviside(a, v):
    return jnp.where(a == 0, v, (a > 0).astype(a.dtype)).astype(a.dtype)


@public(method=True, inplace=True, out=True)
def heaviside(input, values):
    if isinstance(values, Tensor) and values.dtype is not input.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different "
                           "dtypes.")
    if input.dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    return apply(_heaviside, input, values)

