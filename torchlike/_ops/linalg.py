"""Linear algebra: inverse, solve, det / slogdet, the decompositions (cholesky, qr, svd, eigh, lstsq,
pinv) and the norms; ``torchlike.linalg`` re-exports them under torch's names."""
from __future__ import annotations

import functools
import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .. import return_types as _return_types
from .._registry import apply, defop
from ..autograd import grad_mode as _gm
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


def _norm_dtype_check(dtype, self_dt, name):
    """torch's check_linalg_norm_dtype: a norm's ``dtype=`` is floating or complex, complex
    exactly for complex inputs, and the input's dtype promotes to it without narrowing."""
    if dtype is None:
        return
    dt = D.to_dtype(dtype)
    if dt.category < D._FLOAT:
        raise RuntimeError(f"{name}: dtype should be floating point or complex, but got "
                           f"{_tname(dt)}")
    if self_dt.is_complex != dt.is_complex:
        kind = "complex" if self_dt.is_complex else "real"
        raise RuntimeError(f"{name}: dtype should be {kind} for {kind} inputs, but got "
                           f"{_tname(dt)}")
    if D.promote_types(self_dt, dt) is not dt:
        raise RuntimeError(f"{name}: the dtype of the input ({_tname(self_dt)}) should be "
                           f"convertible without narrowing to the specified dtype ({_tname(dt)})")


def _square_check(A, name, what="A"):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: {what} must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _matrix_check(A, name, what="A"):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {what} must have at least 2 dimensions.")


def _half_check(A, name):
    """torch's ``Low precision dtypes not supported`` (a RuntimeError, where a linalg function
    checks the dtype itself rather than its LAPACK kernel's NotImplementedError)."""
    if A.dtype in (D.float16, D.bfloat16):
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got "
                           f"{D.legacy_name(A.dtype)}")


def _kernel_check(A, kernel):
    """torch's CPU LAPACK kernels have no half-precision (or integer) forms."""
    from .factorizations import _low_precision
    _low_precision(A, kernel)


def _return_type(name, fields):
    """The positional maker of ``torch.return_types.<name>`` (one factory: return_types.py)."""
    return _return_types.maker(name)


@defop("lu_info", differentiable=False)
def _lu_info(a):
    """1-based index of the first zero pivot of each LU factorization (0: nonsingular)."""
    if a.shape[-1] == 0:
        return jnp.zeros(a.shape[:-2], jnp.int64)
    lu = jax.lax.linalg.lu(a)[0]
    d = jnp.diagonal(lu, axis1=-2, axis2=-1)
    z = (d == 0)
    return jnp.where(z.any(-1), jnp.argmax(z, -1) + 1, 0).astype(jnp.int64)


def _singular_check(A, name):
    """getrf's info: a LinAlgError for the first singular matrix (its batch element named)."""
    from .factorizations import _batch, _raise_first
    _raise_first(apply(_lu_info, A.detach()), lambda k, v: LinAlgError(
        f"{name}: {_batch(A, k)}The diagonal element {v} is zero, the inversion could not be "
        f"completed because the input matrix is singular."))


# ------------------------------------------------------------------ inverse, solve, det

@defop("linalg_inv", saves="output", grad_name="LinalgInvExBackward0")
def _inv(a):
    return jnp.linalg.inv(a)


def _inv_args(A):
    _float_check(A, "linalg.inv")
    _square_check(A, "linalg.inv")
    _half_check(A, "linalg.inv")


@public(out=True)
def linalg_inv(A):
    _inv_args(A)
    _singular_check(A, "linalg.inv")
    return apply(_inv, A)


InvExResult = _return_types.maker("linalg_inv_ex")


@public(out=True)
def linalg_inv_ex(A, *, check_errors=False):
    """torch.linalg.inv_ex: the inverse and, per matrix, the 1-based index of the first zero
    pivot (0: invertible); a singular input raises only with ``check_errors``."""
    _inv_args(A)
    if check_errors:
        _singular_check(A, "linalg.inv_ex")
    info = apply(_lu_info, A.detach()).to(D.int32)
    return InvExResult(apply(_inv, A), info)


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
    """torch.linalg.solve: ``linalg.solve_ex`` raising for a singular matrix (its checks)."""
    from .factorizations import _solve_ex
    return _solve_ex(A, B, left, True, "linalg.solve")[0]


def _lu_diag_parity(a, transposed):
    """getrf's U diagonal and the sign of its row permutation (+-1, in ``a``'s dtype), of ``a``
    or (``transposed``) of its transpose: torch factors A^T for a contiguous real A (det(A^T) =
    det(A)), which decides the sign of a zero determinant."""
    lu, piv, _ = jax.lax.linalg.lu(jnp.swapaxes(a, -1, -2) if transposed else a)
    swaps = jnp.sum(piv != jnp.arange(piv.shape[-1], dtype=piv.dtype), axis=-1)
    return (jnp.diagonal(lu, axis1=-2, axis2=-1),
            jnp.where(swaps % 2 == 1, -1, 1).astype(a.dtype))


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _det_lu(a, transposed):
    # torch's value: sign(P) * prod(diag(U)) (a singular matrix gives -0 after an odd number of
    # row swaps); the derivative is jax's det's (defined at singular matrices too)
    d, parity = _lu_diag_parity(a, transposed)
    return parity * jnp.prod(d, axis=-1)


@_det_lu.defjvp
def _det_lu_jvp(transposed, primals, tangents):
    return _det_lu(primals[0], transposed), jax.jvp(jnp.linalg.det, primals, tangents)[1]


def _lu_of_transpose(A):
    """Whether torch's det / slogdet factor A^T (a contiguous real A) rather than A."""
    return bool(A.is_contiguous() and not A.is_complex())


@defop("linalg_det", saves="both", grad_name="LinalgDetBackward0")
def _det(a, transposed):
    if a.shape[-1] == 0:
        # the empty product; jax's det has no gradient rule for 0x0 matrices
        return jnp.ones(a.shape[:-2], a.dtype) + jnp.sum(a, axis=(-2, -1))
    return _det_lu(a, transposed)


@public(out=True)
def linalg_det(A):
    _float_check(A, "linalg.det")
    _square_check(A, "linalg.det")
    _kernel_check(A, "lu_cpu")
    return apply(_det, A, transposed=_lu_of_transpose(A))


det = linalg_det

SlogdetResult = _return_types.maker("linalg_slogdet")


@defop("linalg_slogdet", grad_name="LinalgSlogdetBackward0")
def _slogdet(a, transposed):
    if a.shape[-1] == 0:
        z = jnp.sum(a, axis=(-2, -1))
        return jnp.ones(a.shape[:-2], a.dtype), z
    s, l = jnp.linalg.slogdet(a)
    if not jnp.issubdtype(a.dtype, jnp.complexfloating):
        # torch's sign: sign(P) * prod(sgn(diag(U))), sgn(NaN) = 0; so -0 for a singular matrix
        # after an odd number of row swaps, 0 (not NaN) for a NaN
        d, parity = _lu_diag_parity(a, transposed)
        s = parity * jnp.prod(jnp.where(d > 0, 1, jnp.where(d < 0, -1, 0)).astype(a.dtype), -1)
        # (a NaN: torch's sign is +0; the row swaps around a NaN pivot depend on the LU's
        # implementation, and so would the sign of the zero)
        s = jnp.where(jnp.isnan(d).any(-1), jnp.zeros((), s.dtype), s)
    return jax.lax.stop_gradient(s), l


@public(out=True)
def linalg_slogdet(A):
    _float_check(A, "linalg.slogdet")
    _square_check(A, "linalg.slogdet")
    _half_check(A, "linalg.slogdet")
    return SlogdetResult(*apply(_slogdet, A, transposed=_lu_of_transpose(A)))


_SlogdetLegacy = _return_type("slogdet", ["sign", "logabsdet"])


@public(out=True)
def slogdet(input):
    return _SlogdetLegacy(*linalg_slogdet(input))


@defop("logdet", grad_name=lambda kw: "AddBackward0" if kw["complex_"] else "WhereBackward0")
def _logdet(a, complex_=False):
    s, l = jnp.linalg.slogdet(a)
    if complex_:
        # torch's composite for a complex matrix: log(sign) + logabsdet (a complex logarithm)
        # (a singular matrix: -inf + nan j, as torch's)
        return jnp.where(s == 0, jnp.asarray(complex(-np.inf, np.nan), s.dtype), jnp.log(s) + l)
    return jnp.where(s < 0, jnp.nan, jnp.where(s == 0, -jnp.inf, l)).astype(l.dtype)


def logdet(input):
    _float_check(input, "logdet")
    _square_check(input, "logdet")
    _half_check(input, "logdet")
    return apply(_logdet, input, complex_=bool(input.dtype.is_complex))


# ------------------------------------------------------------------ decompositions

@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def hermitian_from(a, upper):
    """The Hermitian matrix LAPACK reads from one triangle of ``a`` (the upper one for
    ``upper``; the diagonal's real part): the other triangle is never read, so a NaN there
    changes nothing. Its derivative is the symmetric part of ``da`` (torch's Hermitian
    backward formulas, e.g. cholesky's and eigh's, give symmetric gradients)."""
    t = jnp.triu(a, 1) if upper else jnp.tril(a, -1)
    d = jnp.diagonal(a, axis1=-2, axis2=-1).real.astype(a.dtype)
    return t + jnp.swapaxes(t, -1, -2).conj() + d[..., None] * jnp.eye(a.shape[-1],
                                                                     dtype=a.dtype)


@hermitian_from.defjvp
def _hermitian_from_jvp(upper, primals, tangents):
    (a,), (da,) = primals, tangents
    return hermitian_from(a, upper), (da + jnp.swapaxes(da, -1, -2).conj()) / 2


@defop("linalg_cholesky", saves="output", grad_name="LinalgCholeskyExBackward0")
def _cholesky(a, upper):
    l = jax.lax.linalg.cholesky(hermitian_from(a, upper), symmetrize_input=False)
    return jnp.swapaxes(l, -1, -2).conj() if upper else l


@public(out=True)
def linalg_cholesky(A, *, upper=False):
    from .factorizations import cholesky_ex
    return cholesky_ex(A, upper, True, "linalg.cholesky")[0]


CholeskyExResult = _return_types.maker("linalg_cholesky_ex")


@public(out=True)
def linalg_cholesky_ex(A, *, upper=False, check_errors=False):
    """``(L, info)``: info is LAPACK's (0, or the order of the failing leading minor); where
    info > 0, L is LAPACK's partial factor (torch's up to n = 128: DIFFERENCES.md)."""
    from .factorizations import cholesky_ex
    return CholeskyExResult(*cholesky_ex(A, upper, check_errors, "linalg.cholesky_ex"))


@public(out=True)
def cholesky(input, upper=False):
    """torch.cholesky (deprecated): linalg.cholesky's factor, its checks named ``cholesky``."""
    from .factorizations import _deprecated, cholesky_ex
    _deprecated("cholesky", "torch.cholesky is deprecated in favor of torch.linalg.cholesky and "
                "will be removed in a future PyTorch release.\nL = torch.cholesky(A)\nshould be "
                "replaced with\nL = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, "
                "upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\nThis "
                "transform will produce equivalent results for all valid (symmetric positive "
                "definite) inputs.",
                at="BatchLinearAlgebra.cpp:1765")
    return cholesky_ex(input, upper, True, "cholesky", args="cholesky")[0]


QRResult = _return_types.maker("linalg_qr")


def _qr_values(a, mode):
    if mode == "r":
        return jnp.zeros((0,), a.dtype), jnp.linalg.qr(a, mode="r")
    q, r = jnp.linalg.qr(a, mode=mode)
    return q, r


def _backward_raises(fn, error):
    """``fn`` (of one array) whose backward raises ``error()`` (torch's refusal to
    differentiate a configuration of an op)."""
    @jax.custom_vjp
    def f(a):
        return fn(a)

    def fwd(a):
        return fn(a), None

    def bwd(_res, _g):
        raise error()

    f.defvjp(fwd, bwd)
    return f


@defop("linalg_qr", saves="output", grad_name="LinalgQrBackward0")
def _qr(a, mode):
    # torch's backward needs Q (not computed for mode='r'), and the reduced Q's columns only
    if mode == "r":
        return _backward_raises(lambda x: _qr_values(x, mode), lambda: RuntimeError(
            "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
            "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
            "linalg.qr."))(a)
    if mode == "complete" and a.shape[-2] > a.shape[-1]:
        return _backward_raises(lambda x: _qr_values(x, mode), lambda: RuntimeError(
            "The QR decomposition is not differentiable when mode='complete' and "
            "nrows > ncols."))(a)
    return _qr_values(a, mode)


@public(out=True)
def linalg_qr(A, mode="reduced"):
    _float_check(A, "linalg.qr")
    _matrix_check(A, "linalg.qr")
    _kernel_check(A, "geqrf_cpu")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    return QRResult(*apply(_qr, A, mode=mode))


_QRLegacy = _return_type("qr", ["Q", "R"])


@public(out=True)
def qr(input, some=True):
    from .factorizations import _deprecated
    _deprecated("qr", "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in "
                "a future PyTorch release.\nThe boolean parameter 'some' has been replaced with "
                "a string parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced "
                "with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete')",
                at="BatchLinearAlgebra.cpp:2505")
    return _QRLegacy(*linalg_qr(input, "reduced" if some else "complete"))


SVDResult = _return_types.maker("linalg_svd")
EighResult = _return_types.maker("linalg_eigh")
LstsqResult = _return_types.maker("linalg_lstsq")


@defop("linalg_svd", saves="output", grad_name="LinalgSvdBackward0")
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


def _svd_args(A):
    """torch's checks of an SVD's input: a float matrix, no half precision, and no NaN (LAPACK's
    gesdd fails to converge: a LinAlgError naming the batch element)."""
    from .factorizations import _svd_check
    _float_check(A, "linalg.svd")
    _matrix_check(A, "linalg.svd")
    _kernel_check(A, "linalg_svd_cpu")
    _svd_check(A)


def _no_driver(driver):
    # (torch takes driver= on CUDA with cuSOLVER only; jax chooses its own algorithm)
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")


@public(out=True)
def linalg_svd(A, full_matrices=True, *, driver=None):
    _no_driver(driver)
    _svd_args(A)
    return SVDResult(*apply(_svd, A, full_matrices=bool(full_matrices)))


@defop("linalg_svdvals", saves="output", grad_name="LinalgSvdBackward0")
def _svdvals(a):
    return jnp.linalg.svd(a, compute_uv=False)


@public(out=True)
def linalg_svdvals(A, *, driver=None):
    _no_driver(driver)
    _svd_args(A)
    if A.requires_grad and _gm._state.grad_enabled:
        # (torch's: the singular vectors too, which its backward saves: S is output 1 of
        # LinalgSvdBackward0, as a version error names it)
        return apply(_svd, A, full_matrices=False)[1]
    return apply(_svdvals, A)


_SVDLegacy = _return_type("svd", ["U", "S", "V"])


@public(out=True)
def svd(input, some=True, compute_uv=True):
    """torch.svd (legacy): U, S, V (not Vh); without ``compute_uv``, U and V are zero-filled
    (m x m and n x n, whatever ``some``), as torch."""
    if input.ndim < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has "
                           f"{input.ndim} dimensions instead")
    if not compute_uv:
        from .._creation import zeros
        S = linalg_svdvals(input)
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        return _SVDLegacy(zeros(*batch, m, m, dtype=input.dtype),
                          S, zeros(*batch, n, n, dtype=input.dtype))
    U, S, Vh = linalg_svd(input, full_matrices=not some)
    return _SVDLegacy(U, S, Vh.mH)


@defop("linalg_eigh", saves="output", grad_name="LinalgEighBackward0")
def _eigh(a, upper):
    # values from one triangle (as LAPACK reads them); the gradient is torch's (symmetric)
    w, v = jnp.linalg.eigh(hermitian_from(a, upper), symmetrize_input=False)
    return w, v


@defop("linalg_eigvalsh", saves="output", grad_name="LinalgEighBackward0")
def _eigvalsh(a, upper):
    return _eigh.fn(a, upper=upper)[0]


def _uplo(UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO == "U"


def _eigh_args(A, name):
    _square_check(A, name)
    _kernel_check(A, "linalg_eigh_cpu")


@public(out=True)
def linalg_eigh(A, UPLO="L"):
    _eigh_args(A, "linalg.eigh")
    return EighResult(*apply(_eigh, A, upper=_uplo(UPLO)))


@public(out=True)
def linalg_eigvalsh(A, UPLO="L"):
    _eigh_args(A, "linalg.eigh")     # (torch names eigvalsh's checks linalg.eigh)
    return apply(_eigvalsh, A, upper=_uplo(UPLO))


@defop("linalg_pinv", saves="both", grad_name="LinalgPinvBackward0")
def _pinv(a, *tols, rtol, atol, hermitian, tol_tensors):
    if a.size == 0:
        return jnp.zeros(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)
    tols = list(tols)
    # a tolerance given as a tensor is an operand (one per matrix of the batch, broadcast)
    atol = tols.pop(0).real if "atol" in tol_tensors else atol
    rtol = tols.pop(0).real if "rtol" in tol_tensors else rtol
    rdt = jnp.finfo(a.dtype).dtype
    rtol = jnp.asarray(rtol, rdt)
    if atol is not None:
        # torch's cutoff max(atol, rtol * largest singular value), as a relative one for jax
        s = jax.lax.stop_gradient(
            jnp.abs(jnp.linalg.eigvalsh(a)) if hermitian
            else jnp.linalg.svd(a, compute_uv=False))
        smax = jnp.max(s, axis=-1)
        rel = jnp.where(smax > 0, jnp.asarray(atol, rdt) / jnp.where(smax > 0, smax, 1), 0)
        rtol = jnp.maximum(rtol, rel)
    if hermitian:
        return _pinv_hermitian(a, rtol)
    return jnp.linalg.pinv(a, rtol=rtol)


@jax.custom_jvp
def _pinv_hermitian(a, rtol):
    """torch's pinv(hermitian=True): the values from eigh of the lower triangle; the gradient
    torch's general pinv formula at the whole input (jax's pinv derivative, at ``a``)."""
    return jnp.linalg.pinv(hermitian_from(a, False), rtol=rtol, hermitian=True)


@_pinv_hermitian.defjvp
def _pinv_hermitian_jvp(primals, tangents):
    a, rtol = primals
    da = tangents[0]
    p = _pinv_hermitian(a, rtol)
    m, n = a.shape[-2:]
    h = lambda x: jnp.conj(jnp.swapaxes(x, -1, -2))     # noqa: E731
    dp = (-p @ da @ p + (p @ h(p)) @ h(da) @ (jnp.eye(m, dtype=a.dtype) - a @ p) +
          (jnp.eye(n, dtype=a.dtype) - p @ a) @ h(da) @ (h(p) @ p))
    return p, dp


@public(out=True)
def linalg_pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    from .._tensor import Tensor
    from .factorizations import _svd_check
    if A.dtype.category < D._FLOAT or A.dtype in (D.float16, D.bfloat16) or A.ndim < 2:
        raise RuntimeError(f"linalg.pinv({D.legacy_name(A.dtype)}{{{list(A.shape)}}}): "
                           f"expected a tensor with 2 or more dimensions of float, double, "
                           f"cfloat or cdouble types")
    if rcond is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg_pinv() received an invalid combination of arguments: "
                            "rcond with atol or rtol")
        atol, rtol = 0.0, rcond            # (torch's rcond overload: atol 0, rtol rcond)
    if not hermitian:
        _svd_check(A)           # (hermitian: eigh, which reads one triangle and never raises)
    if rtol is None:
        # torch: eps * max(m, n) when neither is given, 0 when atol is given
        rtol = 0.0 if atol is not None else \
            float(np.finfo(A.dtype.np).eps) * max(A.shape[-1], A.shape[-2])
    ops, names = [], []
    for nm, v in (("atol", atol), ("rtol", rtol)):
        if isinstance(v, Tensor):
            ops.append(v.detach())
            names.append(nm)
    return apply(_pinv, A, *ops, hermitian=bool(hermitian), tol_tensors=tuple(names),
                 atol=None if atol is None or isinstance(atol, Tensor) else float(atol),
                 rtol=None if isinstance(rtol, Tensor) else float(rtol))


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
        _inv_args(A)
        _singular_check(A, "linalg.inv")
    elif n >= 2 and A.dtype.name == "bool":
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    return apply(_matrix_power, A, n=int(n))


matrix_power = linalg_matrix_power


@defop("linalg_lstsq", grad_name="LinalgLstsqBackward0")
def _lstsq(a, b, vector, rcond, want):
    if vector:
        b = b[..., None]
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    m, n = a.shape[-2:]
    if min(m, n) == 0:
        # an empty system: the zero solution, of rank 0 (the residuals are b's)
        x = jnp.zeros(batch + (n, b.shape[-1]), a.dtype) + 0 * jnp.sum(a) + 0 * jnp.sum(b)
        rank = jnp.zeros(batch, jnp.int64)
    else:
        x = jnp.matmul(jnp.linalg.pinv(a, rtol=rcond), b)
        s = jnp.linalg.svd(jax.lax.stop_gradient(a), compute_uv=False)
        rank = jnp.sum(s > rcond * jnp.max(s, axis=-1, keepdims=True),
                       axis=-1).astype(jnp.int64)
    # (the residuals keep b's column dimension, a vector's too, as torch's)
    if want["residuals"] and min(m, n) == 0 and want.get("gels"):
        # (LAPACK's gels returns at once for an empty system, having zeroed b)
        r = jnp.zeros(batch + (b.shape[-1],), jnp.finfo(a.dtype).dtype)
    elif want["residuals"]:
        r = jnp.sum(jnp.abs(jnp.matmul(a, x) - b) ** 2, axis=-2)
    else:
        r = jnp.zeros((0,), jnp.finfo(a.dtype).dtype)     # (real for a complex system)
    if vector:
        x = x[..., 0]
    rk = rank if want["rank"] else jnp.zeros((0,), jnp.int64)
    return x, r, rk


@defop("lstsq_sv", differentiable=False)
def _lstsq_sv(a, want):
    if want:
        return jnp.linalg.svd(a, compute_uv=False)
    return jnp.zeros((0,), jnp.finfo(a.dtype).dtype)


@public(out=True)
def linalg_lstsq(A, B, rcond=None, *, driver=None):
    from ..amp.autocast_mode import cast_composite
    A, B = cast_composite("linalg_lstsq", A, B)     # (autocast casts before torch's checks)
    # torch's checks, in its order
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if B.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: other must have at least 1 dimension.")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {D.legacy_name(A.dtype)} and other's "
                           f"dtype {D.legacy_name(B.dtype)}")
    if not 0 <= A.ndim - B.ndim <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to "
                           "other.dim() and (input.dim() - other.dim()) <= 1")
    vector = B.ndim == A.ndim - 1
    m, n = A.shape[-2], A.shape[-1]
    if (B.shape[-1] if vector else B.shape[-2]) != m:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match "
                           f"other.size({-1 if vector else -2})")
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           f"gelsy, gelsd, gelss)")
    if A.dtype.name not in ("float32", "float64", "complex64", "complex128"):
        raise RuntimeError("This function doesn't handle types other than float and double")
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
                      want=_Want({"residuals": True, "sv": False, "rank": False,
                                  "gels": driver == "gels"}))[1]
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


def _check_empty_norm(x, ord, d):
    """torch's error for a vector norm with no identity (negative or inf order) over an empty
    reduction."""
    if x.numel() == 0 and ord < 0 or (x.numel() == 0 and ord == float("inf") and
                                       (d is None or any(x.shape[k] == 0 for k in d))):
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on an empty "
                           f"tensor because the operation does not have an identity")


@public(out=True)
def linalg_vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    if isinstance(ord, str):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, "
                        f"not str")
    _float_check(x, "linalg.vector_norm")
    ord = float(ord)
    d = _dims(dim, x.ndim)
    _check_empty_norm(x, ord, d)
    _norm_dtype_check(dtype, x.dtype, "linalg.vector_norm")
    return apply(_vector_norm, x, ord=ord, dim=d, keepdim=bool(keepdim),
                 dtype=None if dtype is None else D.to_dtype(dtype).np)


def _matrix_norm_name(kw):
    # torch's composite: the node its last op leaves
    o = kw["ord"]
    return ("LinalgVectorNormBackward0" if o == "fro" else "SumBackward1" if o == "nuc" else
            "AmaxBackward0" if o > 0 else "AminBackward0")


@defop("linalg_matrix_norm", grad_name=_matrix_norm_name)
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
    _norm_dtype_check(dtype, A.dtype, "linalg.matrix_norm")
    if ord in ("nuc", 2.0, -2.0):
        from .factorizations import _svd_check
        _svd_check(A, (d0, d1))
    if dtype is not None:
        A = A.to(dtype)
    if ord != "fro" and ord != "nuc":
        # torch's composite reduces the singular values (the column/row sums of absolute
        # values) by amax / amin: over an empty dimension a positive order gives 0, a negative
        # one amin's IndexError
        if ord in (2.0, -2.0):
            empty, rdim = min(A.shape[d0], A.shape[d1]) == 0, -1
        else:
            first, second = (d0, d1) if abs(ord) == 1 else (d1, d0)
            empty = A.shape[second] == 0
            rdim = second - 1 if not keepdim and first < second else second
        if empty:
            if ord < 0:
                raise IndexError(f"amin(): Expected reduction dim {rdim} to have non-zero size.")
            return A.abs().sum((d0, d1), keepdim=bool(keepdim))
    return apply(_matrix_norm, A, ord=ord, dims=(d0, d1), keepdim=bool(keepdim))


@public(out=True)
def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    if dim is not None:
        dim = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {list(dim)}")
    if isinstance(ord, str):
        # torch: a string order is a matrix norm, over dims (0, 1) when none are given
        if dim is None and A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input "
                               f"must be 1D or 2D. Got {A.ndim}D.")
        return linalg_matrix_norm(A, ord, (0, 1) if dim is None else dim, keepdim, dtype=dtype)
    if dim is not None and len(dim) == 2:
        return linalg_matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    if dim is None and ord is not None:
        if A.ndim == 2:
            return linalg_matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
        if A.ndim != 1:
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input "
                               f"must be 1D or 2D. Got {A.ndim}D.")
    return linalg_vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


@public(out=True)
def linalg_cross(input, other, *, dim=-1):
    return _cross_impl(input, other, dim, "linalg.cross")


def _chain(ts):
    """torch's multi_dot order: two matrices multiplied, three in the cheaper of (AB)C and
    A(BC) (ties: (AB)C), more in the order of the matrix chain's dynamic programme (the first
    split of least cost)."""
    n = len(ts)
    if n == 2:
        return mm(ts[0], ts[1])
    if n == 3:
        a, b = ts[0].shape[0], ts[1].shape[0]
        c, d = ts[2].shape
        if (a * c) * (b + d) > (b * d) * (a + c):
            return mm(ts[0], mm(ts[1], ts[2]))
        return mm(mm(ts[0], ts[1]), ts[2])
    p = [t.shape[0] for t in ts] + [ts[-1].shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for span in range(1, n):
        for i in range(n - span):
            j = i + span
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k

    def product(i, j):
        if i == j:
            return ts[i]
        k = split[i][j]
        return mm(product(i, k), product(k + 1, j))
    return product(0, n - 1)


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
    res = _chain(ts)
    if first.ndim == 1:
        res = res.squeeze(0)
    if last.ndim == 1:
        res = res.squeeze(-1)
    return _done(res, out, "linalg_multi_dot")


# ------------------------------------------------------------------ Tensor methods

methods(det=det, logdet=logdet, slogdet=slogdet, inverse=inverse, pinverse=pinverse,
        matrix_power=matrix_power, cholesky=cholesky, qr=qr, svd=svd)
