"""Linear algebra: inverse, solve, det / slogdet, the decompositions (cholesky, qr, svd, eigh, lstsq,
pinv) and the norms; ``torchlike.linalg`` re-exports them under torch's names."""
from __future__ import annotations

import collections
import functools
import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .._registry import apply, defop
from .._tensor import _wrap_dim
from ._surface import methods, public
from .products import LinAlgError, _cpp, _cross_impl, _done, _own_out, _tname, mm

__all__ = ['det', 'logdet', 'slogdet', 'inverse', 'pinverse', 'matrix_power', 'cholesky', 'svd',
           'qr']


# ------------------------------------------------------------------ checks shared by linalg

def _float_check(A, name):
    if A.dtype.category < D._FLOAT:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {_tname(A.dtype)}")


def _square_check(A, name, what="A"):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: {what} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _matrix_check(A, name, what="A"):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")


@defop("lu_info", differentiable=False)
def _lu_info(a):
    """1-based index of the first zero pivot of each LU factorization (0: nonsingular)."""
    if a.shape[-1] == 0:
        return jnp.zeros(a.shape[:-2], jnp.int64)
    lu = jax.lax.linalg.lu(a)[0]
    d = jnp.diagonal(lu, axis1=-2, axis2=-1)
    z = (d == 0)
    return jnp.where(z.any(-1), jnp.argmax(z, -1) + 1, 0).astype(jnp.int64)


def _singular_check(A, name, solver=False):
    info = np.asarray(apply(_lu_info, A.detach())._data).reshape(-1)
    bad = np.nonzero(info)[0]
    if bad.size:
        k = int(bad[0])
        pre = f"(Batch element {k}): " if A.ndim > 2 else ""
        if solver:
            raise LinAlgError(f"torch.{name}: The solver failed because the input matrix is "
                              f"singular.")
        raise LinAlgError(f"{name}: {pre}The diagonal element {int(info[k])} is zero, the "
                          f"inversion could not be completed because the input matrix is "
                          f"singular.")


# ------------------------------------------------------------------ inverse, solve, det

@defop("linalg_inv", grad_name="LinalgInvExBackward0")
def _inv(a):
    return jnp.linalg.inv(a)


@public(out=True)
def linalg_inv(A):
    _float_check(A, "linalg.inv")
    _square_check(A, "linalg.inv")
    _singular_check(A, "linalg.inv")
    return apply(_inv, A)


inverse = linalg_inv


@defop("linalg_solve", promote="common", grad_name="LinalgSolveExBackward0")
def _solve(a, b, vector, left):
    if not left:
        # X A = B  <=>  A^T X^T = B^T
        a = jnp.swapaxes(a, -1, -2)
        b = jnp.swapaxes(b, -1, -2)
    if vector:
        b = b[..., None]
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    x = jnp.linalg.solve(a, b)
    if vector:
        x = x[..., 0]
    if not left:
        x = jnp.swapaxes(x, -1, -2)
    return x


@public(out=True)
def linalg_solve(A, B, *, left=True):
    _float_check(A, "linalg.solve")
    _square_check(A, "linalg.solve")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {_tname(A.dtype)} and B of type {_tname(B.dtype)} "
                           f"instead")
    vector = left and (B.ndim == 1 or (B.ndim == A.ndim - 1 and
                                        tuple(B.shape[:-1]) == tuple(A.shape[:-2])))
    n = A.shape[-1]
    k = B.shape[-1] if vector else (B.shape[-2] if left else B.shape[-1])
    if k != n:
        bs = (f"{B.shape[-1]}x1" if vector else f"{B.shape[-2]}x{B.shape[-1]}")
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {bs})")
    _singular_check(A, "linalg.solve", solver=True)
    return apply(_solve, A, B, vector=bool(vector), left=bool(left))


@defop("linalg_det", grad_name="LinalgDetBackward0")
def _det(a):
    if a.shape[-1] == 0:
        # the empty product; jax's det has no gradient rule for 0x0 matrices
        return jnp.ones(a.shape[:-2], a.dtype) + jnp.sum(a, axis=(-2, -1))
    return jnp.linalg.det(a)


@public(out=True)
def linalg_det(A):
    _float_check(A, "linalg.det")
    _square_check(A, "linalg.det")
    return apply(_det, A)


det = linalg_det

SlogdetResult = collections.namedtuple("linalg_slogdet", ["sign", "logabsdet"])


@defop("linalg_slogdet", grad_name="LinalgSlogdetBackward0")
def _slogdet(a):
    if a.shape[-1] == 0:
        z = jnp.sum(a, axis=(-2, -1))
        return jnp.ones(a.shape[:-2], a.dtype), z
    s, l = jnp.linalg.slogdet(a)
    return jax.lax.stop_gradient(s), l


@public(out=True)
def linalg_slogdet(A):
    _float_check(A, "linalg.slogdet")
    _square_check(A, "linalg.slogdet")
    return SlogdetResult(*apply(_slogdet, A))


@public(out=True)
def slogdet(input):
    return linalg_slogdet(input)


@defop("logdet", grad_name="LogdetBackward0")
def _logdet(a):
    s, l = jnp.linalg.slogdet(a)
    return jnp.where(s < 0, jnp.nan, jnp.where(s == 0, -jnp.inf, l)).astype(l.dtype)


def logdet(input):
    _float_check(input, "logdet")
    _square_check(input, "logdet")
    return apply(_logdet, input)


# ------------------------------------------------------------------ decompositions

@defop("linalg_cholesky", grad_name="LinalgCholeskyExBackward0")
def _cholesky(a, upper):
    l = jnp.linalg.cholesky(a)
    return jnp.swapaxes(l, -1, -2).conj() if upper else l


def _cholesky_info(A):
    """LAPACK's info per matrix: 0, or the order of the first leading minor that is not
    positive-definite (read on the host: only when the factorization failed)."""
    a = np.asarray(A._data)
    flat = a.reshape(-1, *a.shape[-2:])
    info = np.zeros(flat.shape[0], np.int32)
    for k, m in enumerate(flat):
        lo = np.tril(m) + np.tril(m, -1).conj().T      # torch reads the lower triangle
        for order in range(1, m.shape[-1] + 1):
            try:
                np.linalg.cholesky(lo[:order, :order])
            except np.linalg.LinAlgError:
                info[k] = order
                break
    return info.reshape(a.shape[:-2])


def _cholesky_checked(A, upper, check):
    _float_check(A, "linalg.cholesky")
    _square_check(A, "linalg.cholesky")
    L = apply(_cholesky, A, upper=bool(upper))
    info = np.zeros(A.shape[:-2], np.int32)
    if np.isnan(np.asarray(L._data)).any():
        info = _cholesky_info(A)
        if check:
            for k, order in enumerate(info.reshape(-1)):
                if order:
                    pre = f"(Batch element {k}): " if A.ndim > 2 else ""
                    raise LinAlgError(f"linalg.cholesky: {pre}The factorization could not be "
                                      f"completed because the input is not positive-definite "
                                      f"(the leading minor of order {order} is not "
                                      f"positive-definite).")
    return L, info


@public(out=True)
def linalg_cholesky(A, *, upper=False):
    return _cholesky_checked(A, upper, True)[0]


CholeskyExResult = collections.namedtuple("linalg_cholesky_ex", ["L", "info"])


@public(out=True)
def linalg_cholesky_ex(A, *, upper=False, check_errors=False):
    """``(L, info)``: info is LAPACK's (0, or the order of the failing leading minor); L is
    unspecified where info > 0, as in torch."""
    from .._creation import tensor
    L, info = _cholesky_checked(A, upper, check_errors)
    return CholeskyExResult(L, tensor(info, dtype=D.int32))


@public(out=True)
def cholesky(input, upper=False):
    return linalg_cholesky(input, upper=upper)


QRResult = collections.namedtuple("linalg_qr", ["Q", "R"])


@defop("linalg_qr", grad_name="LinalgQrBackward0")
def _qr(a, mode):
    if mode == "r":
        return jnp.zeros((0,), a.dtype), jnp.linalg.qr(a, mode="r")
    q, r = jnp.linalg.qr(a, mode=mode)
    return q, r


@public(out=True)
def linalg_qr(A, mode="reduced"):
    _float_check(A, "linalg.qr")
    _matrix_check(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    return QRResult(*apply(_qr, A, mode=mode))


@public(out=True)
def qr(input, some=True):
    return linalg_qr(input, "reduced" if some else "complete")


SVDResult = collections.namedtuple("linalg_svd", ["U", "S", "Vh"])
EighResult = collections.namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
LstsqResult = collections.namedtuple("linalg_lstsq",
                                     ["solution", "residuals", "rank", "singular_values"])


@defop("linalg_svd", grad_name="LinalgSvdBackward0")
def _svd(a, full_matrices):
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    m, n = a.shape[-2:]
    if full_matrices and m != n:
        # the completing columns/rows carry no gradient (jax has no full-matrices SVD JVP)
        uf, _, vhf = jnp.linalg.svd(jax.lax.stop_gradient(a), full_matrices=True)
        k = min(m, n)
        u = jnp.concatenate([u, uf[..., k:]], axis=-1)
        vh = jnp.concatenate([vh, vhf[..., k:, :]], axis=-2)
    return u, s, vh


@public(out=True)
def linalg_svd(A, full_matrices=True, *, driver=None):
    _float_check(A, "linalg.svd")
    _matrix_check(A, "linalg.svd")
    return SVDResult(*apply(_svd, A, full_matrices=bool(full_matrices)))


@defop("linalg_svdvals", grad_name="LinalgSvdBackward0")
def _svdvals(a):
    return jnp.linalg.svd(a, compute_uv=False)


@public(out=True)
def linalg_svdvals(A, *, driver=None):
    _float_check(A, "linalg.svdvals")
    _matrix_check(A, "linalg.svdvals")
    return apply(_svdvals, A)


@public(out=True)
def svd(input, some=True, compute_uv=True):
    """torch.svd (legacy): returns U, S, V (not Vh)."""
    U, S, Vh = linalg_svd(input, full_matrices=not some)
    return U, S, Vh.mH if hasattr(Vh, "mH") else Vh.transpose(-2, -1)


@defop("linalg_eigh", grad_name="LinalgEighBackward0")
def _eigh(a, upper):
    t = jnp.triu(a) if upper else jnp.tril(a)
    sym = t + jnp.swapaxes(t, -1, -2).conj() - jnp.eye(a.shape[-1], dtype=a.dtype) * \
        jnp.diagonal(a, axis1=-2, axis2=-1)[..., None, :]
    # values from one triangle (as LAPACK reads them); the gradient is torch's, unsymmetrized
    a = a + jax.lax.stop_gradient(sym - a)
    w, v = jnp.linalg.eigh(a, symmetrize_input=False)
    return w, v


@defop("linalg_eigvalsh", grad_name="LinalgEighBackward0")
def _eigvalsh(a, upper):
    return _eigh.fn(a, upper=upper)[0]


def _uplo(UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO == "U"


@public(out=True)
def linalg_eigh(A, UPLO="L"):
    _float_check(A, "linalg.eigh")
    _square_check(A, "linalg.eigh")
    return EighResult(*apply(_eigh, A, upper=_uplo(UPLO)))


@public(out=True)
def linalg_eigvalsh(A, UPLO="L"):
    _float_check(A, "linalg.eigvalsh")
    _square_check(A, "linalg.eigvalsh")
    return apply(_eigvalsh, A, upper=_uplo(UPLO))


@defop("linalg_pinv", grad_name="LinalgPinvBackward0")
def _pinv(a, rtol, hermitian):
    if a.size == 0:
        return jnp.zeros(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)
    return jnp.linalg.pinv(a, rtol=rtol, hermitian=hermitian)


@public(out=True)
def linalg_pinv(A, *, atol=None, rtol=None, hermitian=False):
    _float_check(A, "linalg.pinv")
    _matrix_check(A, "linalg.pinv")
    if atol is not None:
        raise NotImplementedError("linalg.pinv: atol is not supported by torchlike")
    if rtol is None:
        rtol = float(np.finfo(A.dtype.np).eps) * max(A.shape[-1], A.shape[-2])
    return apply(_pinv, A, rtol=float(rtol), hermitian=bool(hermitian))


def pinverse(input, rcond=1e-15):
    return linalg_pinv(input, rtol=rcond)


@defop("linalg_matrix_power", grad_name="LinalgMatrixPowerBackward0")
def _matrix_power(a, n):
    if n == 0:
        return jnp.broadcast_to(jnp.eye(a.shape[-1], dtype=a.dtype), a.shape)
    if n < 0:
        a = jnp.linalg.inv(a)
        n = -n
    return jnp.linalg.matrix_power(a, n)


@public(out=True)
def linalg_matrix_power(A, n):
    _square_check(A, "linalg.matrix_power")
    if n < 0:
        _float_check(A, "linalg.inv")
        _singular_check(A, "linalg.inv")
    return apply(_matrix_power, A, n=int(n))


matrix_power = linalg_matrix_power


@defop("linalg_lstsq", grad_name="LinalgLstsqBackward0")
def _lstsq(a, b, vector, rcond, want):
    if vector:
        b = b[..., None]
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    x = jnp.matmul(jnp.linalg.pinv(a, rtol=rcond), b)
    m, n = a.shape[-2:]
    s = jnp.linalg.svd(jax.lax.stop_gradient(a), compute_uv=False)
    rank = jnp.sum(s > rcond * jnp.max(s, axis=-1, keepdims=True), axis=-1).astype(jnp.int64)
    if want["residuals"]:
        r = jnp.sum(jnp.abs(jnp.matmul(a, x) - b) ** 2, axis=-2)
        if vector:
            r = r[..., 0]
    else:
        r = jnp.zeros((0,), a.dtype)
    if vector:
        x = x[..., 0]
    rk = rank if want["rank"] else jnp.zeros((0,), jnp.int64)
    return x, r, rk


@defop("lstsq_sv", differentiable=False)
def _lstsq_sv(a, want):
    if want:
        return jnp.linalg.svd(a, compute_uv=False)
    return jnp.zeros((0,), a.dtype)


@public(out=True)
def linalg_lstsq(A, B, rcond=None, *, driver=None):
    _float_check(A, "linalg.lstsq")
    _matrix_check(A, "linalg.lstsq")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {A.dtype} and other's dtype {B.dtype}")
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           f"gelsy, gelsd, gelss)")
    vector = B.ndim == A.ndim - 1
    m, n = A.shape[-2], A.shape[-1]
    if (B.shape[-1] if vector else B.shape[-2]) != m:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    if rcond is None:
        rcond = float(np.finfo(A.dtype.np).eps) * max(m, n)
    want = {"residuals": False, "sv": driver in ("gelsd", "gelss"), "rank": driver != "gels"}
    x, r, rk = apply(_lstsq, A, B, vector=vector, rcond=float(rcond), want=_Want(want))
    sv = apply(_lstsq_sv, A, want=want["sv"])
    if m > n and driver != "gelsy":
        full = bool(np.all(np.asarray(
            apply(_lstsq, A.detach(), B.detach(), vector=vector, rcond=float(rcond),
                  want=_Want({"residuals": False, "sv": False, "rank": True}))[2]._data) == n))
        if full:
            r = apply(_lstsq, A, B, vector=vector, rcond=float(rcond),
                      want=_Want({"residuals": True, "sv": False, "rank": False}))[1]
    return LstsqResult(x, r, rk, sv)


class _Want(dict):
    """A hashable dict of flags (a static kwarg)."""

    def __hash__(self):
        return hash(tuple(sorted(self.items())))


# ------------------------------------------------------------------ norms

def _grad_mask_zero(norm, g):
    return jnp.where(norm == 0, 0, g)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2, 3))
def _vnorm(x, ord, axes, keepdim):
    return _vnorm_val(x, ord, axes, keepdim)


def _vnorm_val(x, ord, axes, keepdim):
    ax = jnp.abs(x)
    if ord == float("inf"):
        return jnp.max(ax, axis=axes, keepdims=keepdim) if x.size else \
            jnp.zeros(_red_shape(x.shape, axes, keepdim), ax.dtype)
    if ord == float("-inf"):
        return jnp.min(ax, axis=axes, keepdims=keepdim)
    if ord == 0:
        return jnp.sum((x != 0).astype(ax.dtype), axis=axes, keepdims=keepdim)
    if ord == 1:
        return jnp.sum(ax, axis=axes, keepdims=keepdim)
    if ord == 2:
        return jnp.sqrt(jnp.sum(ax * ax, axis=axes, keepdims=keepdim))
    return jnp.sum(ax ** ord, axis=axes, keepdims=keepdim) ** (1.0 / ord)


def _red_shape(shape, axes, keepdim):
    axes = range(len(shape)) if axes is None else axes
    return tuple(1 if i in axes else n for i, n in enumerate(shape) if keepdim or i not in axes)


def _vnorm_fwd(x, ord, axes, keepdim):
    n = _vnorm_val(x, ord, axes, keepdim)
    return n, (x, n)


def _vnorm_bwd(ord, axes, keepdim, res, g):
    # torch's linalg_vector_norm backward: zero where the norm is zero, ties share inf-norms
    x, n = res
    if not keepdim:
        ax = range(x.ndim) if axes is None else axes
        for a in sorted(ax):
            n = jnp.expand_dims(n, a)
            g = jnp.expand_dims(g, a)
    sgn = jnp.sign(x)
    if ord == 0:
        gx = jnp.zeros_like(x)
    elif ord == 1:
        gx = sgn * g
    elif ord == 2:
        gx = jnp.where(n == 0, 0, x / jnp.where(n == 0, 1, n)) * g
    elif ord in (float("inf"), float("-inf")):
        ab = jnp.abs(x)
        mask = (ab == n) | jnp.isnan(ab)
        cnt = jnp.sum(mask, axis=axes, keepdims=True)
        gx = sgn * (g / cnt) * mask
    else:
        ab = jnp.abs(x)
        gx = x * ab ** (ord - 2) * g / n ** (ord - 1)
        # (torch: 0 at a zero norm, and at a zero entry, where |x|^(p-2) is infinite for p < 2)
        gx = jnp.where((n == 0) | (x == 0), 0, gx)
    return (gx.astype(x.dtype),)


_vnorm.defvjp(_vnorm_fwd, _vnorm_bwd)


@defop("linalg_vector_norm", saves="both", grad_name="LinalgVectorNormBackward0")
def _vector_norm(x, ord, dim, keepdim, dtype):
    if dtype is not None:
        x = x.astype(dtype)
    if x.dtype in (jnp.float16, jnp.bfloat16):
        # torch accumulates half-precision norms in float32 and rounds once
        return _vnorm(x.astype(jnp.float32), ord, dim, keepdim).astype(x.dtype)
    return _vnorm(x, ord, dim, keepdim)


def _dims(dim, n):
    if dim is None:
        return None
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(sorted(_wrap_dim(d, n) for d in dim)) if n else None


@public(out=True)
def linalg_vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    _float_check(x, "linalg.vector_norm")
    ord = float(ord)
    d = _dims(dim, x.ndim)
    if x.numel() == 0 and ord < 0 or (x.numel() == 0 and ord == float("inf") and
                                       (d is None or any(x.shape[k] == 0 for k in d))):
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on an empty "
                           f"tensor because the operation does not have an identity")
    return apply(_vector_norm, x, ord=ord, dim=d, keepdim=bool(keepdim),
                 dtype=None if dtype is None else D.to_dtype(dtype).np)


@defop("linalg_matrix_norm", grad_name="LinalgMatrixNormBackward0")
def _matrix_norm(a, ord, dims, keepdim):
    d0, d1 = dims
    if ord == "fro":
        return _vnorm(a, 2.0, tuple(sorted(dims)), keepdim)
    if ord in ("nuc", 2.0, -2.0):
        m = jnp.moveaxis(a, (d0, d1), (-2, -1))
        s = jnp.linalg.svd(m, compute_uv=False)
        r = jnp.sum(s, -1) if ord == "nuc" else (jnp.max(s, -1) if ord == 2.0 else
                                                 jnp.min(s, -1))
    else:
        if ord in (1.0, -1.0):
            sums = jnp.sum(jnp.abs(a), axis=d0, keepdims=True)
        else:
            sums = jnp.sum(jnp.abs(a), axis=d1, keepdims=True)
        red = jnp.max if ord > 0 else jnp.min
        r = red(sums, axis=(d0, d1))
    if keepdim:
        for d in sorted(dims):
            r = jnp.expand_dims(r, d)
    return r


@public(out=True)
def linalg_matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    _float_check(A, "linalg.matrix_norm")
    _matrix_check(A, "linalg.matrix_norm")
    if not isinstance(ord, str):
        ord = float(ord)
        if ord not in (1.0, -1.0, 2.0, -2.0, float("inf"), float("-inf")):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord:g} not supported.")
    elif ord not in ("fro", "nuc"):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    dim = tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in dim)}")
    d0, d1 = _wrap_dim(dim[0], A.ndim), _wrap_dim(dim[1], A.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    if ord in ("nuc", 2.0, -2.0) and A.dtype in (D.float16, D.bfloat16):
        # (singular values: torch computes none in half precision)
        raise RuntimeError(f"linalg.matrix_norm: Low precision dtypes not supported. Got "
                           f"{D.legacy_name(A.dtype)}")
    if dtype is not None:
        A = A.to(dtype)
    return apply(_matrix_norm, A, ord=ord, dims=(d0, d1), keepdim=bool(keepdim))


@public(out=True)
def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    if dim is not None and not isinstance(dim, int):
        dim = tuple(dim)
    if dim is not None and not isinstance(dim, int) and len(dim) == 2:
        return linalg_matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is None and ord is not None:
        if A.ndim == 2:
            return linalg_matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        if A.ndim != 1:
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input "
                               f"must be 1D or 2D. Got {A.ndim}D.")
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 2. Got "
                           f"[{dim}]")
    return linalg_vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


@public(out=True)
def linalg_cross(input, other, *, dim=-1):
    return _cross_impl(input, other, dim, "linalg.cross")


@public(out=True)
@_own_out
def linalg_multi_dot(tensors, *, out=None):
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0], tensors[-1]
    if first.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got "
                           f"{first.ndim}D")
    if last.ndim not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got "
                           f"{last.ndim}D")
    for i in range(1, n - 1):
        if tensors[i].ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {tensors[i].ndim}D")
    ts = list(tensors)
    if first.ndim == 1:
        ts[0] = first.unsqueeze(0)
    if last.ndim == 1:
        ts[-1] = last.unsqueeze(-1)
    for i in range(1, n):
        if ts[i].dtype is not ts[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {_cpp(ts[0].dtype)} and tensor {i} {_cpp(ts[i].dtype)}")
        if ts[i - 1].shape[-1] != ts[i].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes "
                               f"{list(tensors[i - 1].shape)} and {list(tensors[i].shape)} "
                               f"cannot be multiplied")
    if out is not None and out.dtype is not ts[0].dtype:
        raise RuntimeError(f"multi_dot(): expected out tensor to have dtype {_cpp(ts[0].dtype)} "
                           f"but got {_cpp(out.dtype)}")
    res = ts[0]
    for t in ts[1:]:
        res = mm(res, t)
    if first.ndim == 1:
        res = res.squeeze(0)
    if last.ndim == 1:
        res = res.squeeze(-1)
    return _done(res, out, "linalg_multi_dot")


# ------------------------------------------------------------------ Tensor methods

methods(det=det, logdet=logdet, slogdet=slogdet, inverse=inverse, pinverse=pinverse,
        matrix_power=matrix_power, cholesky=cholesky, qr=qr, svd=svd)
