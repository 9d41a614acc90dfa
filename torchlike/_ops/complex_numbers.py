"""Complex numbers: building complex tensors from parts, their angle, and the real/complex
reinterpretations (``view_as_real``/``view_as_complex``, copies here: see DIFFERENCES.md)."""
from __future__ import annotations

import jax
import jax.numpy as jnp

from .. import _dtype as D
from .._tensor import Tensor
from ..amp.autocast_mode import cast_composite
from .._registry import apply, defop
from ._surface import methods, public
from .unary import conj_physical

__all__ = ["conj", "real", "imag", "angle", "complex", "polar", "view_as_real", "view_as_complex", "isreal",
           "is_conj", "resolve_conj", "is_neg", "resolve_neg"]


@defop("angle", promote="float", grad_name="AngleBackward0")
def _angle(a):
    if jnp.iscomplexobj(a):
        return jnp.angle(a)
    # torch: 0 for x >= 0, pi for x < 0, nan for nan; the gradient is zero
    return jnp.where(jnp.isnan(a), a, jnp.where(a < 0, jnp.pi, 0.0).astype(a.dtype))


@public(method=True, out=True)
def angle(input):
    return apply(_angle, input)


def _same_float_pair(name, a, b):
    for t in (a, b):
        if not isinstance(t, Tensor):
            raise TypeError(f"{name}(): argument '{'real' if t is a else 'imag'}' must be "
                            f"Tensor, not {type(t).__name__}")
    if a.dtype not in (D.float32, D.float64, D.float16):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{D.legacy_name(a.dtype)} and {D.legacy_name(b.dtype)}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {D.legacy_name(a.dtype)} but got "
                           f"scalar type {D.legacy_name(b.dtype)} for second argument")


@defop("complex", grad_name="ComplexBackward0")
def _complex(re, im):
    # (lax.complex pairs the parts: ``re + 1j * im`` would make inf * 0 a NaN part)
    return jax.lax.complex(re, im)


@public(out=True)
def complex(real, imag):
    _same_float_pair("complex", real, imag)
    if real.dtype is D.float16:
        raise NotImplementedError("torchlike: complex32 (chalf) has no jax dtype")
    return apply(_complex, real, imag)


def _polar_value(r, theta):
    # (each part a real product, as torch's: no inf * 0 from complex arithmetic, zeros signed)
    return jax.lax.complex(r * jnp.cos(theta), r * jnp.sin(theta))


@jax.custom_vjp
def _polar_fn(r, theta):
    return _polar_value(r, theta)


def _polar_fwd(r, theta):
    z, vjp = jax.vjp(_polar_value, r, theta)
    return z, (vjp, r)


def _polar_bwd(res, ct):
    # torch's polar_backward: grad_abs = real(conj(grad) * sgn(result)), the derivative times
    # sign(abs) (0 where abs is 0, negated where it is negative)
    vjp, r = res
    g_r, g_t = vjp(ct)
    return g_r * jnp.sign(r).astype(g_r.dtype), g_t


_polar_fn.defvjp(_polar_fwd, _polar_bwd)


@defop("polar", grad_name="PolarBackward0")
def _polar(r, theta):
    return _polar_fn(r, theta)


@public(out=True)
def polar(abs, angle):
    # (CPU autocast runs torch's polar in float32: a bfloat16 pair becomes complex64)
    abs, angle = cast_composite("polar", abs, angle)
    _same_float_pair("polar", abs, angle)
    if abs.dtype is D.float16:
        raise NotImplementedError("torchlike: complex32 (chalf) has no jax dtype")
    return apply(_polar, abs, angle)


@defop("view_as_real", grad_name="ViewAsRealBackward0")
def _view_as_real(a):
    return jnp.stack([jnp.real(a), jnp.imag(a)], axis=-1)


def view_as_real(input):
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if is_conj(input):
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To "
                           "resolve the conjugate tensor so you can view it as real, use "
                           "self.resolve_conj(); however, be warned that the resulting tensor "
                           "will NOT alias the original.")
    return apply(_view_as_real, input)


@defop("view_as_complex", grad_name="ViewAsComplexBackward0")
def _view_as_complex(a):
    return jax.lax.complex(a[..., 0], a[..., 1])


def view_as_complex(input):
    (input,) = cast_composite("view_as_complex", input)   # (float32 under CPU autocast)
    if input.dtype is D.float16:
        D.complex32.np              # raises: torch's result would be complex32, jax has none
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError(f"view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: "
                           f"{D.legacy_name(input.dtype)}")
    if input.dim() == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    # torch's view needs the pairs in memory (the strides and offset torch would have; the
    # result here is a copy, see DIFFERENCES)
    strides = input.stride()
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(st % 2 for st, n in zip(strides[:-1], input.shape[:-1]) if n != 1):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return apply(_view_as_complex, input)


@defop("isreal", differentiable=False)
def _isreal(a):
    if jnp.iscomplexobj(a):
        return jnp.imag(a) == 0
    return jnp.ones(a.shape, bool)


@public(method=True)
def isreal(input):
    return apply(_isreal, input)


# torch's conjugate bit: ``conj()`` of a complex tensor is marked as conjugated (its values are
# computed, see DIFFERENCES.md), and so are the views of it; ``resolve_conj`` gives an unmarked
# copy, and ``view_as_real`` refuses a marked tensor, as torch does. There is no negative bit:
# ``neg()`` computes.
def is_conj(input):
    from .typeinfo import tensor_arg
    tensor_arg("is_conj", input)
    return bool(input.__dict__.get("_is_conj"))


def resolve_conj(input):
    return input.clone() if is_conj(input) else input


@public(method=True)
def is_neg(input):
    from .typeinfo import tensor_arg
    tensor_arg("is_neg", input)
    return False


@public(method=True)
def resolve_neg(input):
    return input



# ------------------------------------------------------------------ complex parts

@defop("real", saves=False, grad_name="SelectBackward0")  # torch: view_as_real + select
def _real(a):
    return jnp.real(a)


@defop("imag", saves=False, grad_name="SelectBackward0")
def _imag(a):
    return jnp.imag(a)


def conj(input):
    """The complex conjugate, marked as conjugated (``is_conj``); computed, not a lazy view of
    ``input`` (DIFFERENCES.md)."""
    if not input.dtype.is_complex:
        return input
    if is_conj(input):          # (conjugating a conjugated tensor: torch's result is unmarked)
        return conj_physical(input)
    out = conj_physical(input)
    out.__dict__["_is_conj"] = True
    return out


def real(input):
    """The real part; a real tensor is returned as it is (see DIFFERENCES.md: not a view)."""
    return input if not input.dtype.is_complex else apply(_real, input)


def imag(input):
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return apply(_imag, input)


methods(conj=conj, resolve_conj=resolve_conj, is_conj=is_conj,
        real=property(real), imag=property(imag))
