"""Matrix products: matmul / @, mm, bmm, mv, dot (the rest of linear algebra comes later)."""
from __future__ import annotations

import jax.numpy as jnp

from .._tensor import Tensor
from ._registry import apply, defop

__all__ = ["matmul", "mm", "bmm", "mv", "dot"]


def _matmul_name(kw):
    na, nb = kw["ndims"]
    if na == -3:
        return "BmmBackward0"
    if na == 2 and nb == 2:
        return "MmBackward0"
    if na == 1 and nb == 1:
        return "DotBackward0"
    if na == 2 and nb == 1:
        return "MvBackward0"
    if na == 1 and nb == 2:
        return "SqueezeBackward4"
    return "UnsafeViewBackward0"


@defop("matmul", promote="common", grad_name=_matmul_name)
def _matmul(a, b, ndims):
    return jnp.matmul(a, b)


def _check(a, b):
    sa, sb = tuple(a._data.shape), tuple(b._data.shape)
    if len(sa) == 0 or len(sb) == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{len(sa)}D and {len(sb)}D")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype.name.replace('float32', 'float')} != "
                           f"{b.dtype.name.replace('float32', 'float')}")
    k_a = sa[-1]
    k_b = sb[0] if len(sb) == 1 else sb[-2]
    if k_a == k_b:
        return
    if len(sa) == 1 and len(sb) == 1:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{sa[0]}] and src "
                           f"[{sb[0]}] to have the same number of elements, but got {sa[0]} "
                           f"and {sb[0]} elements respectively")
    if len(sa) == 2 and len(sb) == 1:
        raise RuntimeError(f"size mismatch, got input ({sa[0]}), mat ({sa[0]}x{sa[1]}), "
                           f"vec ({sb[0]})")
    if len(sa) <= 2 and len(sb) <= 2:
        m1 = "x".join(map(str, sa if len(sa) == 2 else (1,) + sa))
        m2 = "x".join(map(str, sb))
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m1} and {m2})")
    raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                       f"[{sb[0] if len(sb) > 2 else 1}, {k_a}] but got: "
                       f"[{sb[0] if len(sb) > 2 else 1}, {k_b}].")


def matmul(input, other):
    """torch.matmul: dot, mv, mm or a batched product by the inputs' dims."""
    _check(input, other)
    return apply(_matmul, input, other, ndims=(input._data.ndim, other._data.ndim))


def mm(input, mat2):
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return matmul(input, mat2)


def bmm(input, mat2):
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _check(input, mat2)
    return apply(_matmul, input, mat2, ndims=(-3, -3))


def mv(input, vec):
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {vec.ndim}")
    return matmul(input, vec)


def dot(input, other):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D "
                           f"tensors")
    return matmul(input, other)


Tensor.matmul = Tensor.__matmul__ = matmul
Tensor.__rmatmul__ = lambda self, other: matmul(other, self)
Tensor.mm, Tensor.bmm, Tensor.mv, Tensor.dot = mm, bmm, mv, dot
