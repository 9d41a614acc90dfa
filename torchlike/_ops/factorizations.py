"""Linear algebra beyond products: trace, inner, dist, cdist, matrix_exp, cholesky_solve,
cholesky_inverse, triangular solves, LU (factor, unpack, solve), matrix_rank, cond, vander,
eigvals; the ``torchlike.linalg`` namespace re-exports the linalg ones."""
from __future__ import annotations


import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np

from .. import _dtype as D
from .. import return_types as _return_types
from .. import _tiers
from .._tensor import Tensor
from .._registry import apply, defop
from ._surface import methods, public
from .special_ops import no_derivative
from .linalg import (_float_check, _matrix_check, _square_check, _tname, _vnorm,
                     linalg_matrix_norm, linalg_vector_norm, linalg_svdvals, linalg_inv)
from .products import LinAlgError, _done, _method, _need, _own_out, tensordot

__all__ = ["trace", "inner", "dist", "cdist", "matrix_exp", "cholesky_solve",
           "cholesky_inverse", "triangular_solve", "lu_unpack", "vander", "lu", "lu_solve"]


# ------------------------------------------------------------------ value checks (LAPACK's info)
#
# torch reads LAPACK's ``info`` per matrix after a factorization and raises for the first failing
# matrix of a batch, naming it ("(Batch element k): "). The flags are computed on the device and
# read on the host only where torch raises (the ``*_ex`` forms return them as tensors).

@defop("zero_pivot_info", differentiable=False)
def _zero_pivot_info(a):
    """getrf's / trtri's info per matrix: the 1-based index of the first zero on the diagonal
    of ``a`` (an LU factor, a triangular factor), 0 where there is none."""
    d = jnp.diagonal(a, axis1=-2, axis2=-1)
    if d.shape[-1] == 0:
        return jnp.zeros(d.shape[:-1], jnp.int32)
    z = d == 0
    return jnp.where(z.any(-1), jnp.argmax(z, -1) + 1, 0).astype(jnp.int32)


@defop("nan_matrices", differentiable=False)
def _nan_matrices(a, dims):
    """Per matrix (the dimensions ``dims``), whether it holds a NaN."""
    return jnp.isnan(a).any(axis=dims)


@defop("nonfinite", differentiable=False)
def _nonfinite(a):
    """Whether ``a`` holds an infinity or a NaN (one flag)."""
    return ~jnp.isfinite(a).all()


def _raise_first(info, make_error):
    """Raise ``make_error(k, v)`` for the first matrix k of a batch whose flag v (``info``, an
    integer or bool tensor, one entry per matrix) is nonzero. A host read; while
    torchlike.compile traces, the check becomes an output of the program, read after the call
    (``_compile._hostchecks.value_check``), so it breaks no graph."""
    from .._compile._trace import is_tracer
    d = info._data
    if is_tracer(d):
        from .._compile._hostchecks import value_check
        flat = jnp.reshape(d, (-1,)).astype(jnp.int64)
        if flat.size == 0:
            return
        big = 1 << 31              # (index and value travel as one integer: k * big + v)
        value_check(flat, lambda a: jnp.any(a != 0),
                    lambda v: make_error(int(v) // big, int(v) % big),
                    lambda a: jnp.argmax(a != 0) * big + a[jnp.argmax(a != 0)])
        return
    flat = np.asarray(d).reshape(-1)
    bad = np.flatnonzero(flat)
    if bad.size:
        raise make_error(int(bad[0]), int(flat[bad[0]]))


def _is_traced(t):
    from .._compile._trace import is_tracer
    return is_tracer(t._data)


def _low_precision(A, kernel):
    """torch's CPU LAPACK kernels have no half-precision (nor integer) forms."""
    if A.dtype in (D.float16, D.bfloat16) or A.dtype.category < D._FLOAT:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_tname(A.dtype)}'")


def _batch(A, k):
    return f"(Batch element {k}): " if A.ndim > 2 else ""


def _svd_check(A, dims=(-2, -1)):
    """torch (LAPACK's gesdd) refuses a matrix holding a NaN (an infinity gives NaN values)."""
    if A.numel() == 0:
        return
    dims = tuple(sorted(d % A.ndim for d in dims))
    _raise_first(apply(_nan_matrices, A.detach(), dims=dims), lambda k, _v: LinAlgError(
        f"linalg.svd: {_batch(A, k)}The algorithm failed to converge because the input matrix "
        f"contained non-finite values."))


def _potf2(m, upper):
    """LAPACK's unblocked Cholesky (potf2, left-looking) of one matrix, on the host: ``(factor,
    info)``. info is 0, or the order of the first leading minor that is not positive-definite
    (``ajj <= 0 or isnan(ajj)``: a NaN fails it); the factor is then LAPACK's partial one, as
    torch returns it: the columns before the failing one computed, the failing diagonal entry
    holding its pivot (``ajj``), the later columns the input's. It reads the triangle torch
    reads."""
    a = (np.triu(m).conj().T if upper else np.tril(m)).copy()
    info = 0
    for j in range(a.shape[-1]):
        r = a[j, :j]
        ajj = a[j, j].real - np.vdot(r, r).real
        if not ajj > 0:
            a[j, j] = ajj
            info = j + 1
            break
        ajj = np.sqrt(ajj)
        a[j, j] = ajj
        a[j + 1:, j] = (a[j + 1:, j] - a[j + 1:, :j] @ r.conj()) / ajj
    a = np.tril(a)
    return (a.conj().T if upper else a), info


def cholesky_ex(A, upper=False, check_errors=False, name="linalg.cholesky_ex",
                args="linalg.cholesky"):
    """torch.linalg.cholesky_ex (and, with ``check_errors``, linalg.cholesky and the deprecated
    torch.cholesky): ``(L, info)``. Where info > 0, L is LAPACK's unblocked partial factor
    (torch's for n <= 128; MKL's blocked potrf leaves another above: DIFFERENCES.md). ``name``
    names the failure, ``args`` the argument errors (torch.cholesky: ``cholesky``, and its
    kernel refuses integers)."""
    from .linalg import _cholesky
    from .._creation import tensor
    if args == "linalg.cholesky":
        _float_check(A, args)
    _square_check(A, args)
    _low_precision(A, "cholesky_cpu")
    L = apply(_cholesky, A, upper=bool(upper))
    info = np.zeros(A.shape[:-2], np.int32)
    if L.numel() and apply(_nan_matrices, L.detach(), dims=(L.ndim - 2, L.ndim - 1)).any():
        # jax's factor is NaN where the factorization failed: LAPACK's info and partial factor
        # from the host, for the matrices that hold a NaN
        a = np.asarray(A.detach()._data)
        flat = a.reshape(-1, *a.shape[-2:])
        nan = np.asarray(apply(_nan_matrices, L.detach(),
                               dims=(L.ndim - 2, L.ndim - 1))._data).reshape(-1)
        parts = np.zeros_like(flat)
        for k in np.flatnonzero(nan):
            parts[k], info.reshape(-1)[k] = _potf2(flat[k], upper)
        flat_info = info.reshape(-1)
        bad = np.flatnonzero(flat_info)
        if check_errors and bad.size:
            k = int(bad[0])
            raise LinAlgError(f"{name}: {_batch(A, k)}The factorization could not be completed "
                              f"because the input is not positive-definite (the leading minor "
                              f"of order {int(flat_info[k])} is not positive-definite).")
        if bad.size:
            from .._tensor import Tensor
            mask = np.zeros(flat.shape[0], bool)
            mask[bad] = True
            failed = Tensor._make(jnp.asarray(mask.reshape(a.shape[:-2] + (1, 1))))
            L = L.masked_scatter(failed.expand(tuple(L.shape)), Tensor._make(
                jnp.asarray(parts[bad].reshape(-1))))
    return L, tensor(info, dtype=D.int32)


_WARNED: set = set()


def _user_stacklevel():
    """The ``stacklevel`` (for a ``warnings.warn`` in the caller) naming the first line
    outside torchlike."""
    import os
    import sys
    root = os.path.dirname(os.path.dirname(__file__))
    level, f = 2, sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(root):
        level, f = level + 1, f.f_back
    return level


def triggered(at):
    """The suffix torch gives a warning raised by its C++ code (TORCH_WARN): ``at``, a file and
    line of torch's source, under ``aten/src/ATen/native/`` unless it names its own folder
    (``"ReduceOps.cpp:1861"``, ``"torch/csrc/utils/tensor_numpy.cpp:213"``)."""
    if not at.startswith(("aten/", "torch/", "c10/")):
        at = "aten/src/ATen/native/" + at
    return f" (Triggered internally at /__w/pytorch/pytorch/{at}.)"


def _deprecated(key, message, at=None):
    """torch's TORCH_WARN_ONCE for its deprecated forms: once per process; ``at``: where torch's
    C++ code raises it (its message then ends with torch's ``triggered`` suffix)."""
    if key not in _WARNED:
        _WARNED.add(key)
        import warnings
        warnings.warn(message + (triggered(at) if at else ""), UserWarning,
                      stacklevel=_user_stacklevel())


# ------------------------------------------------------------------ small products

@defop("trace", saves=False, grad_name="TraceBackward0")
def _trace(a, dtype):
    return jnp.trace(a).astype(dtype)


def trace(input):
    if input._d.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim "
                           f"{input._d.ndim}")
    if input.dtype.name == "bool":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    dt = D.int64 if input.dtype.category <= D._INT else input.dtype
    return apply(_trace, input, dtype=dt.np)


@public(out=True)
@_own_out
def inner(input, other, *, out=None):
    _need("inner", ("other", other, 2))
    if input.ndim == 0 or other.ndim == 0:
        return _done(input * other, out, "inner")
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]), out=out)


def dist(input, other, p=2):
    d = input - other
    if not (d.dtype.is_floating_point or d.dtype.is_complex):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {D.legacy_name(d.dtype)} instead.")
    return linalg_vector_norm(d, p)


@jax.custom_vjp
def _inf_dist(d):
    return jnp.max(jnp.abs(d), axis=-1)


def _inf_dist_fwd(d):
    n = _inf_dist(d)
    return n, (d, n)


def _inf_dist_bwd(res, g):
    # torch's cdist backward: every coordinate attaining the max distance gets the whole
    # gradient (linalg.vector_norm's inf-norm shares it among the ties)
    d, n = res
    return (jnp.sign(d) * (jnp.abs(d) == n[..., None]) * g[..., None],)


_inf_dist.defvjp(_inf_dist_fwd, _inf_dist_bwd)


@defop("cdist", promote="common", saves="both", grad_name="CdistBackward0")
def _cdist(x1, x2, p):
    d = x1[..., :, None, :] - x2[..., None, :, :]
    if p == float("inf"):
        return _inf_dist(d)
    return _vnorm(d, float(p), (d.ndim - 1,), False)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values")
    if not x1.dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: "
                           f"{_tname(x1.dtype)}")
    return apply(_cdist, x1, x2, p=float(p))


# ------------------------------------------------------------------ matrix functions

@defop("matrix_exp", grad_name="LinalgMatrixExpBackward0")
def _matrix_exp(a):
    # jax's float32 expm loses about 1e-4 relative once the norm needs squarings (its Pade
    # degree and squaring for float32); torch's is within about 3e-7: float32 and complex64
    # are computed in double precision and rounded once
    up = {jnp.dtype(jnp.float32): jnp.float64, jnp.dtype(jnp.complex64): jnp.complex128}
    wide = up.get(jnp.dtype(a.dtype))
    if wide is None:
        return jsl.expm(a)
    return jsl.expm(a.astype(wide)).astype(a.dtype)


def matrix_exp(A):
    _square_check(A, "linalg.matrix_exp")      # (torch checks the shape first)
    _float_check(A, "linalg.matrix_exp")
    return apply(_matrix_exp, A)


@defop("cholesky_solve", promote="common", grad_name="CholeskySolveBackward0")
def _cholesky_solve(b, l, upper):
    batch = jnp.broadcast_shapes(b.shape[:-2], l.shape[:-2])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    l = jnp.broadcast_to(l, batch + l.shape[-2:])
    return jsl.cho_solve((l, not upper), b)


@public(out=True)
def cholesky_solve(B, L, upper=False):
    if B.ndim < 2 or L.ndim < 2:
        raise RuntimeError("b should have at least 2 dimensions, but has "
                           f"{B.ndim} dimensions instead" if B.ndim < 2 else
                           f"u should have at least 2 dimensions, but has {L.ndim} "
                           f"dimensions instead")
    if B.dtype is not L.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_tname(B.dtype)} and A of type {_tname(L.dtype)} instead.")
    if L.shape[-1] != L.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are "
                           f"{L.shape[-2]} by {L.shape[-1]} matrices")
    if L.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is "
                           f"{L.shape[-2]} by {L.shape[-1]} but each b matrix is {B.shape[-2]} "
                           f"by {B.shape[-1]}")
    _low_precision(L, "cholesky_solve_cpu")
    return apply(_cholesky_solve, B, L, upper=bool(upper))


@public(out=True)
def cholesky_inverse(L, upper=False):
    """(L L^H)^-1 from a Cholesky factor; torch (LAPACK's trtri) raises for a zero on the
    factor's diagonal."""
    _square_check(L, "cholesky_inverse")
    _low_precision(L, "cholesky_inverse_out_cpu")
    _raise_first(apply(_zero_pivot_info, L.detach()), lambda k, v: LinAlgError(
        f"cholesky_inverse: {_batch(L, k)}The diagonal element {v} is zero, the inversion could "
        f"not be completed because the input matrix is singular."))
    return apply(_cholesky_inverse, L, upper=bool(upper))


@defop("cholesky_inverse", grad_name="CholeskyInverseBackward0")
def _cholesky_inverse(l, upper):
    # LAPACK's potri: the triangular inverse (trtri), then its product with its adjoint (lauum);
    # a NaN spreads as there (not over the whole matrix, as a solve against I would)
    # (an upper factor U is the lower L = U^H: A = L L^H either way, and A^-1 = L^-H L^-1)
    low = jnp.conj(jnp.swapaxes(jnp.triu(l), -1, -2)) if upper else jnp.tril(l)
    inv = _lower_inverse(low)
    return jnp.conj(jnp.swapaxes(inv, -1, -2)) @ inv


def _lower_inverse(t):
    """The inverse of lower-triangular ``t`` as LAPACK's ``trti2`` computes it, column by column
    from the last: column ``j`` is ``-inv[j, j]`` times the inverse's lower block applied to
    ``t``'s column below the diagonal (a NaN on the diagonal spreads down its own column only;
    a triangular solve against the identity, XLA's, spreads it over the whole inverse)."""
    n = t.shape[-1]
    rows = jnp.arange(n)
    diag = jnp.diagonal(t, axis1=-2, axis2=-1)

    def column(k, inv):
        j = n - 1 - k
        below = (rows > j)[:, None]
        d = 1 / diag[..., j]
        col = jnp.where(below, jax.lax.dynamic_slice_in_dim(t, j, 1, axis=-1), 0)
        v = inv @ col                                   # (rows above j read zeros)
        new = jnp.where(below, -d[..., None, None] * v,
                        jnp.where(rows[:, None] == j, d[..., None, None], 0))
        return jax.lax.dynamic_update_slice_in_dim(inv, new.astype(inv.dtype), j, axis=-1)
    return jax.lax.fori_loop(0, n, column, jnp.zeros_like(t))


@defop("solve_triangular", promote="common", grad_name="LinalgSolveTriangularBackward0")
def _solve_triangular(a, b, upper, left, unit):
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[-2:])
    a = jnp.triu(a) if upper else jnp.tril(a)
    return jax.lax.linalg.triangular_solve(a, b, left_side=left, lower=not upper,
                                           unit_diagonal=unit)


@public(out=True)
def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """torch.linalg.solve_triangular: B is read in A's dtype (as torch); a zero on A's diagonal
    gives infinities / NaNs, no error (LAPACK's trsm has no info)."""
    _square_check(A, "linalg.solve_triangular")
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    k = B.shape[-2] if left else B.shape[-1]
    if k != A.shape[-1]:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({A.shape[-2]}x"
                           f"{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
    _low_precision(A, "triangular_solve_cpu")
    if B.dtype is not A.dtype:
        B = B.to(A.dtype)
    return apply(_solve_triangular, A, B, upper=bool(upper), left=bool(left),
                 unit=bool(unitriangular))


TriangularSolveResult = _return_types.maker("triangular_solve")


@public(out=True)
def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """torch.triangular_solve (legacy): solves A X = b (or A^T X = b)."""
    _deprecated("triangular_solve", "torch.triangular_solve is deprecated in favor of "
                "torch.linalg.solve_triangularand will be removed in a future PyTorch release.\n"
                "torch.linalg.solve_triangular has its arguments reversed and does not return a "
                "copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\nshould "
                "be replaced with\nX = torch.linalg.solve_triangular(A, B).",
                at="BatchLinearAlgebra.cpp:2273")
    for what, t in (("b", b), ("A", A)):
        if t.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {what} to have at least 2 "
                               f"dimensions, but it has {t.ndim} dimensions instead")
    if b.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_tname(b.dtype)} and A of type {_tname(A.dtype)} instead.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are {A.shape[-2]} "
                           f"by {A.shape[-1]} matrices")
    if A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is "
                           f"{A.shape[-2]} by {A.shape[-1]} but each b matrix is {b.shape[-2]} "
                           f"by {b.shape[-1]}")
    _low_precision(A, "triangular_solve_cpu")
    AA = A.mT if transpose else A
    x = apply(_solve_triangular, AA, b, upper=bool(upper != transpose), left=True,
              unit=bool(unitriangular))
    return TriangularSolveResult(x, A.clone())


# ------------------------------------------------------------------ LU

LUFactorResult = _return_types.maker("linalg_lu_factor")
LUResult = _return_types.maker("linalg_lu")
LUUnpackResult = _return_types.maker("lu_unpack")


@defop("lu_factor", grad_name="LinalgLuFactorExBackward0")
def _lu_factor(a):
    lu, piv, _ = jax.lax.linalg.lu(a)
    return lu, (piv + 1).astype(jnp.int32)


def _lu_checks(A, name):
    """torch's checks of an LU factorization's input (``name``: the function's, as torch
    spells it in the dimension message)."""
    if A.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if A.dtype.category < D._FLOAT or A.dtype in (D.float16, D.bfloat16):
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{_tname(A.dtype)}'")


def _lu_factor_ex(A, pivot, check_errors, name):
    _lu_checks(A, "torch.lu_factor")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the "
                           "CPU")
    LU, piv = apply(_lu_factor, A)
    info = apply(_zero_pivot_info, LU.detach())
    if check_errors:
        _raise_first(info, lambda k, v: RuntimeError(
            f"torch.{name}: {_batch(A, k)}U[{v},{v}] is zero and using it on lu_solve would "
            f"result in a division by zero. If you still want to perform the factorization, "
            f"consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)"))
    return LU, piv, info


@public(out=True)
def lu_factor(A, *, pivot=True):
    """torch.linalg.lu_factor: raises (a RuntimeError, as torch) when U has a zero on its
    diagonal, which lu_solve would divide by."""
    return LUFactorResult(*_lu_factor_ex(A, pivot, True, "linalg.lu_factor")[:2])


def _perm_matrix(perm, n, dtype):
    # P with A = P L U: row perm[i] of A is row i of L U, so P[perm[i], i] = 1
    eye = jnp.eye(n, dtype=dtype)
    return jnp.swapaxes(eye[perm], -1, -2)


@defop("linalg_lu", grad_name="LinalgLuBackward0")
def _lu(a):
    m, n = a.shape[-2:]
    lu, _, perm = jax.lax.linalg.lu(a)
    k = min(m, n)
    L = jnp.tril(lu[..., :, :k], -1) + jnp.eye(m, k, dtype=a.dtype)
    U = jnp.triu(lu[..., :k, :])
    return L, U


@defop("linalg_lu_P", differentiable=False)
def _lu_P(a):
    perm = jax.lax.linalg.lu(a)[2]
    return _perm_matrix(perm, a.shape[-2], a.dtype)


@public(out=True)
def linalg_lu(A, *, pivot=True):
    _lu_checks(A, "linalg.lu")
    if not pivot:
        # (torch's CPU kernel refuses it; jax's LU always pivots, on every device)
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the "
                           "CPU")
    L, U = apply(_lu, A)
    return LUResult(apply(_lu_P, A), L, U)


@defop("lu_unpack", grad_name="LuUnpackBackward0")
def _lu_unpack(lu_data, unpack_data):
    m, n = lu_data.shape[-2:]
    k = min(m, n)
    if unpack_data:
        L = jnp.tril(lu_data[..., :, :k], -1) + jnp.eye(m, k, dtype=lu_data.dtype)
        U = jnp.triu(lu_data[..., :k, :])
    else:
        L = U = jnp.zeros((0,), lu_data.dtype)
    return L, U


@defop("lu_pivots_to_P", differentiable=False)
def _lu_pivots(lu_data, piv, unpack_pivots):
    m = lu_data.shape[-2]
    if unpack_pivots:
        def one(p):
            perm = jnp.arange(m)
            def body(i, perm):
                j = p[i] - 1
                pi, pj = perm[i], perm[j]
                return perm.at[i].set(pj).at[j].set(pi)
            return _tiers.fori_loop(0, p.shape[0], body, perm)
        pf = piv.reshape(-1, piv.shape[-1])
        perms = jax.vmap(one)(pf).reshape(piv.shape[:-1] + (m,))
        P = _perm_matrix(perms, m, lu_data.dtype)
    else:
        P = jnp.zeros((0,), lu_data.dtype)
    return P


@public(out=True)
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    if LU_data.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data.shape)} instead")
    if unpack_pivots:
        if LU_pivots.dtype is not D.int32:
            raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor "
                               "of torch.int32 dtype.\nNote: this function is intended to be "
                               "used with the output produced by torch.linalg.lu_factor")
        m, k = LU_data.shape[-2], min(LU_data.shape[-2:])
        p = np.asarray(LU_pivots.detach()._data) if not _is_traced(LU_pivots) else None
        if LU_pivots.ndim < 1 or LU_pivots.shape[-1] < k or (
                p is not None and p.size and (p.min() < 1 or p.max() > m)):
            raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) "
                               "inclusive.Did you properly pass the result of lu_factor?")
        if LU_pivots.shape[-1] > k:
            LU_pivots = LU_pivots[..., :k]
    L, U = apply(_lu_unpack, LU_data, unpack_data=bool(unpack_data))
    P = apply(_lu_pivots, LU_data, LU_pivots, unpack_pivots=bool(unpack_pivots))
    return LUUnpackResult(P, L, U)


@public(out=True)
def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    _float_check(LU, "torch.linalg.lu_solve")
    if LU.dtype is not B.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but "
                           f"found LU of type {_tname(LU.dtype)} and B of type "
                           f"{_tname(B.dtype)} instead")
    if pivots.dtype is not D.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type "
                           "torch.int32")
    _square_check(LU, "torch.linalg.lu_solve")
    _matrix_check(B, "linalg.lu_solve", "B")
    if (B.shape[-2] if left else B.shape[-1]) != LU.shape[-1]:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({LU.shape[-2]}x{LU.shape[-1]} "
                           f"and {B.shape[-2]}x{B.shape[-1]})")
    if pivots.shape[-1:] != LU.shape[-1:]:
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the "
                           "dimension of the matrix")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(f"linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the "
                           f"same, but got pivots with shape {list(pivots.shape)} instead")
    P, L, U = lu_unpack(LU, pivots)
    if left and not adjoint:
        # A = P L U:  X = U^-1 L^-1 P^T B
        y = solve_triangular(L, P.mT @ B, upper=False, unitriangular=True)
        return solve_triangular(U, y, upper=True)
    if left and adjoint:
        # A^H X = B: U^H L^H P^T X = B
        y = solve_triangular(U.mT, B, upper=False)
        z = solve_triangular(L.mT, y, upper=True, unitriangular=True)
        return P @ z
    if not adjoint:
        # X A = B: X P L U = B
        y = solve_triangular(U, B, upper=True, left=False)
        z = solve_triangular(L, y, upper=False, left=False, unitriangular=True)
        return z @ P.mT
    y = solve_triangular(L.mT, B @ P, upper=True, left=False, unitriangular=True)
    return solve_triangular(U.mT, y, upper=False, left=False)


# ------------------------------------------------------------------ rank, cond, vander, eig

@public(out=True)
def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None):
    if A.dtype.category < D._FLOAT or A.dtype in (D.float16, D.bfloat16):
        raise RuntimeError("This function doesn't handle types other than float and double")
    _matrix_check(A, "torch.linalg.matrix_rank", "input")
    if not hermitian:
        _svd_check(A)
    from .. import no_grad
    with no_grad():
        if hermitian:
            # torch: the eigenvalues' magnitudes, from the lower triangle
            from .linalg import linalg_eigvalsh
            s = linalg_eigvalsh(A).abs()
        else:
            s = linalg_svdvals(A)
        smax = s.amax(-1, keepdim=True) if s.shape[-1] else s.sum(-1, keepdim=True)
        if tol is not None:
            thr = tol
        else:
            if rtol is None:
                rtol = 0.0 if (atol is not None and atol > 0) else \
                    float(np.finfo(A.dtype.np).eps) * max(A.shape[-2], A.shape[-1])
            thr = np.maximum(atol or 0.0, rtol * np.asarray(smax._data))
        thr = thr if isinstance(thr, (int, float)) else Tensor._make(jnp.asarray(thr))
        return (s > thr).sum(-1)


_COND_ORDS = (None, 1, -1, 2, -2, float("inf"), float("-inf"), "fro", "nuc")


@public(out=True)
def cond(A, p=None):
    """torch.linalg.cond: s_max / s_min for p in (None, 2, -2); else ||A||_p ||A^-1||_p, with an
    infinite inverse for a singular matrix and NaN read as infinity (torch's NumPy rule)."""
    if not (p is None or isinstance(p, str) or isinstance(p, (int, float))) or \
            p not in _COND_ORDS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: "
                           f"{p if isinstance(p, str) else format(p, 'g')}")
    if p is None or p in (2, -2):
        _float_check(A, "linalg.svd")
        if A.ndim < 2:
            raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
        if A.numel() == 0:
            return A.abs().sum((-2, -1))
        _svd_check(A)
        s = linalg_svdvals(A)
        if p == -2:
            return s[..., -1] / s[..., 0]
        return s[..., 0] / s[..., -1]
    _float_check(A, "linalg.inv")
    _square_check(A, f"linalg.cond(ord={p if isinstance(p, str) else format(p, 'g')})")
    if A.numel() == 0:
        return A.abs().sum((-2, -1))
    from .linalg import _inv, _lu_info
    inv = apply(_inv, A)
    info = apply(_lu_info, A.detach())
    inv = inv.masked_fill((info > 0)[..., None, None], float("inf"))
    r = linalg_matrix_norm(A, p) * linalg_matrix_norm(inv, p)
    return r.nan_to_num(float("inf"), float("inf"), float("-inf"))


@defop("vander", grad_name="LinalgVanderBackward0")
def _vander(x, n):
    return x[..., None] ** jnp.arange(n, dtype=x.dtype if jnp.issubdtype(x.dtype, jnp.inexact)
                                      else jnp.int64)


def linalg_vander(x, *, N=None):
    if x.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else N
    if n <= 1 and N is not None and N < 1:
        raise RuntimeError("N must be greater than 1.")
    return apply(_vander, x, n=int(n))


@defop("linalg_eigvals", grad_name="LinalgEigBackward0")
def _eigvals(a):
    # differentiable: jax's eigenvalue derivative (diag(V^-1 dA V)) is torch's backward
    return jnp.linalg.eigvals(a)


def _eig_dtype_check(A):
    """torch's geev kernel: complex results of a float input only (no integer input, no
    half-precision kernel)."""
    if A.dtype.category < D._FLOAT:
        raise RuntimeError(f"Unknown Complex ScalarType for {_tname(A.dtype)}")
    if A.dtype in (D.float16, D.bfloat16):
        raise NotImplementedError(f"\"linalg_eig_out_cpu\" not implemented for "
                                  f"'{_tname(A.dtype)}'")


@public(out=True)
def eigvals(A):
    _eig_dtype_check(A)
    _square_check(A, "linalg.eigvals")
    return apply(_eigvals, A)


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return A.diagonal(offset, dim1, dim2)


methods(trace=trace, inner=_method(inner), dist=dist, matrix_exp=matrix_exp,
        cholesky_solve=cholesky_solve, cholesky_inverse=cholesky_inverse,
        triangular_solve=triangular_solve)


# ------------------------------------------------------------------ eig and the *_ex / tensor forms

EigResult = _return_types.maker("linalg_eig")


@defop("linalg_eig", differentiable=False)
def _eig(a):
    w, v = jnp.linalg.eig(a)
    return w, v


@public(out=True)
def eig(A):
    """Eigen-decomposition of a general matrix (complex results; no gradient, see
    DIFFERENCES.md)."""
    _eig_dtype_check(A)
    _square_check(A, "linalg.eig")
    if A.numel():
        _raise_first(apply(_nonfinite, A.detach()), lambda _k, _v: RuntimeError(
            "torch.linalg.eig: input tensor should not contain infs or NaNs."))
    return EigResult(*apply(_eig, A))


SolveExResult = _return_types.maker("linalg_solve_ex")
LUFactorExResult = _return_types.maker("linalg_lu_factor_ex")
LUWithInfoResult = _return_types.maker("_lu_with_info")


def _solve_ex(A, B, left, check_errors, name):
    """torch.linalg.solve_ex / solve: the solution and getrf's info per matrix of A (of A^T for
    ``left=False``, the matrix torch factors); ``check_errors`` raises for the first singular
    matrix, as torch."""
    from .linalg import _lu_info, _solve
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
    _low_precision(A, "lu_cpu")
    info = apply(_lu_info, A.detach()).to(D.int32)     # (torch factors A for both sides)
    if check_errors:
        _raise_first(info, lambda k, _v: LinAlgError(
            f"torch.{name}: {_batch(A, k)}The solver failed because the input matrix is "
            f"singular."))
    return apply(_solve, A, B, vector=bool(vector), left=bool(left)), info


@public(out=True)
def solve_ex(A, B, *, left=True, check_errors=False):
    return SolveExResult(*_solve_ex(A, B, left, check_errors, "linalg.solve_ex"))


@public(out=True)
def lu_factor_ex(A, *, pivot=True, check_errors=False):
    return LUFactorExResult(*_lu_factor_ex(A, pivot, check_errors, "linalg.lu_factor_ex"))


@public(out=True)
def tensorinv(A, ind=2):
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shp = tuple(A.shape)
    left, right = shp[:ind], shp[ind:]
    pl, pr = int(np.prod(left)), int(np.prod(right))
    if pl != pr:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {pr} != {pl}")
    return linalg_inv(A.reshape(pl, pr)).reshape((*right, *left))


@public(out=True)
def tensorsolve(A, B, dims=None):
    from .linalg import linalg_solve
    if dims is not None:
        nd = A.ndim
        dims = [d % nd for d in dims]
        order = [d for d in range(nd) if d not in dims] + dims
        A = A.permute(tuple(order))
    bshape = tuple(B.shape)
    rest = tuple(A.shape[len(bshape):])
    n = int(np.prod(bshape))
    if n != int(np.prod(rest)):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:"
                           f"]) == other.numel(), but got {int(np.prod(rest))} != {n}")
    return linalg_solve(A.reshape(n, n), B.reshape(n)).reshape(tuple(rest))


def vander(x, N=None, increasing=False):
    """torch.vander: powers of a 1-D ``x``, decreasing unless ``increasing``."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is not None and N < 0:
        raise RuntimeError("N must be non-negative.")
    v = apply(_vander, x, n=int(x.shape[0] if N is None else N))
    return v if increasing else v.flip(-1)


@public(out=True)
def legacy_lu(A, pivot=True, get_infos=False):
    """torch.lu (deprecated form): (LU, pivots), or ``_lu_with_info`` (LU, pivots, infos);
    never raises for a singular input."""
    _deprecated("lu", "torch.lu is deprecated in favor of torch.linalg.lu_factor / "
                "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.\n"
                "LU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\nLU, pivots = "
                "torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, "
                "compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
                "torch.linalg.lu_factor_ex(A, compute_pivots)",
                at="BatchLinearAlgebra.cpp:2073")
    LU, piv, info = _lu_factor_ex(A, pivot, False, "lu")
    return LUWithInfoResult(LU, piv, info) if get_infos else (LU, piv)


@public(out=True)
def legacy_lu_solve(b, LU_data, LU_pivots):
    _deprecated("lu_solve", "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand "
                "will be removed in a future PyTorch release.\nNote that torch.linalg.lu_solve "
                "has its arguments reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be "
                "replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)",
                at="BatchLinearAlgebra.cpp:2230")
    return linalg_lu_solve(LU_data, LU_pivots, b)


lu, lu_solve = legacy_lu, legacy_lu_solve


methods(lu=legacy_lu,
        lu_solve=lambda self, LU_data, LU_pivots: legacy_lu_solve(self, LU_data, LU_pivots))


# ------------------------------------------------------------------ Householder products

@defop("householder_product", grad_name="LinalgHouseholderProductBackward0")
def _householder_product(a, tau):
    # Q = H_1 ... H_k applied to the first n columns of I, H_i = I - tau_i v_i v_i^H with
    # v_i = (0, ..., 0, 1, a[i+1:, i]): written out so that jax differentiates it
    m, n = a.shape[-2], a.shape[-1]
    k = tau.shape[-1]
    q = jnp.broadcast_to(jnp.eye(m, n, dtype=a.dtype), a.shape[:-2] + (m, n))
    rows = jnp.arange(m)
    for i in reversed(range(k)):
        v = jnp.where(rows[:, None] > i, a[..., :, i:i + 1], 0)
        v = jnp.where(rows[:, None] == i, jnp.ones_like(v), v)          # (..., m, 1)
        t = tau[..., i][..., None, None]
        q = q - t * v @ (jnp.conj(jnp.swapaxes(v, -1, -2)) @ q)
    return q


@public(out=True)
def householder_product(A, tau):
    """The first n columns of the product of Householder matrices (LAPACK's orgqr)."""
    if A.dim() < 2:
        raise RuntimeError(f"torch.linalg.householder_product: input must have at least 2 "
                           f"dimensions.")
    m, n = A.shape[-2], A.shape[-1]
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-2] must be greater "
                           "than or equal to input.shape[-1]")
    if tau.shape[-1] > n:
        raise RuntimeError("torch.linalg.householder_product: input.shape[-1] must be greater "
                           "than or equal to tau.shape[-1]")
    if tau.ndim != A.ndim - 1:
        raise RuntimeError(f"torch.linalg.householder_product: Expected tau to have one "
                           f"dimension less than input, but got tau.ndim equal to {tau.ndim} "
                           f"and input.ndim is equal to {A.ndim}")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"torch.linalg.householder_product: Expected batch dimensions of tau "
                           f"to be equal to input.shape[:-2], but got {list(tau.shape[:-1])}")
    if A.dtype is not tau.dtype:
        raise RuntimeError(f"torch.linalg.householder_product: tau dtype {_tname(tau.dtype)} "
                           f"does not match input dtype {_tname(A.dtype)}")
    _low_precision(A, "orgqr_cpu")
    return apply(_householder_product, A, tau)


orgqr = householder_product
methods(orgqr=householder_product)
__all__ += ["orgqr"]


# ------------------------------------------------------------------ LAPACK's QR, raw

def _geqrf_raw(a):
    from jax._src.lax import linalg as _lax_linalg     # (jax's geqrf is not public yet)
    if 0 in a.shape:                                    # (LAPACK is not called: nothing to do)
        return a, jnp.zeros(a.shape[:-2] + (min(a.shape[-2:]),), a.dtype)
    return _lax_linalg.geqrf(a)


@defop("geqrf", grad_name="GeqrfBackward0")
def _geqrf(a):
    return no_derivative(_geqrf_raw, "geqrf", declared=True)(a)


_GeqrfResult = _return_types.maker("geqrf")


@public(method=True, out=True)
def geqrf(input):
    """LAPACK's geqrf: ``(a, tau)``, R on and above a's diagonal, the Householder vectors
    below it and their scales in tau (``householder_product`` and ``ormqr`` read them)."""
    if input.dim() < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _low_precision(input, "geqrf_cpu")
    return _GeqrfResult(*apply(_geqrf, input))


@defop("ormqr", grad_name="OrmqrBackward0")
def _ormqr(a, tau, other, left, transpose):
    # Q (mn x mn) = H_1 ... H_k: the Householder product of a's columns completed to a square
    mn, k = a.shape[-2], a.shape[-1]
    square = jnp.concatenate([a, jnp.zeros(a.shape[:-1] + (mn - k,), a.dtype)], -1) \
        if k < mn else a[..., :mn]
    q = _householder_product.fn(square, tau)
    if transpose:
        q = jnp.conj(jnp.swapaxes(q, -1, -2))
    return q @ other if left else other @ q


@public(method=True, out=True)
def ormqr(input, input2, input3, left=True, transpose=False):
    """``Q @ other`` (``other @ Q`` with ``left=False``; Q^H with ``transpose=True``), Q the
    product of the Householder reflectors ``geqrf`` left in ``input`` and ``tau``, without
    forming Q as LAPACK's ormqr does."""
    tau, other = input2, input3
    if input.dim() < 2:
        raise RuntimeError("torch.ormqr: input must have at least 2 dimensions.")
    if other.dim() < 2:
        raise RuntimeError("torch.ormqr: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if tau.shape[-1] != min(other.shape[side], input.shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape[{side}]"
                           f", input.shape[-1])")
    if input.dim() - tau.dim() != 1:
        raise RuntimeError(f"torch.ormqr: Expected tau to have one dimension less than input, "
                           f"but got tau.ndim equal to {tau.dim()} and input.ndim is equal to "
                           f"{input.dim()}")
    if input.dim() != other.dim():
        raise RuntimeError(f"torch.ormqr: Expected other to have the same number of dimensions "
                           f"as input, but got other.ndim equal to {other.dim()} and input.ndim "
                           f"is equal to {input.dim()}")
    if input.dim() > 2:
        batch = tuple(input.shape[:-2])
        for what, t, got in (("tau", tau, tau.shape[:-1]), ("other", other, other.shape[:-2])):
            if tuple(got) != batch:
                raise RuntimeError(f"torch.ormqr: Expected batch dimensions of {what} to be "
                                   f"equal to input.shape[:-2], but got {list(got)}")
    for what, t in (("tau", tau), ("other", other)):
        if t.dtype is not input.dtype:
            raise RuntimeError(f"torch.ormqr: Expected input and {what} to have the same dtype, "
                               f"but input has dtype{_tname(input.dtype)} and {what} has dtype "
                               f"{_tname(t.dtype)}")
    _low_precision(input, "ormqr_cpu")
    return apply(_ormqr, input, tau, other, left=bool(left), transpose=bool(transpose))


__all__ += ["geqrf", "ormqr"]


# ------------------------------------------------------------------ LDL (Bunch-Kaufman)
#
# torch.linalg.ldl_factor(_ex) is LAPACK's sytrf / hetrf on the lower triangle; for the sizes
# torch's MKL factors unblocked its result is sytf2's, replayed here on the host (the same pivot
# decisions, the same compact LD and LAPACK's 1-based pivots, negative for 2x2 blocks), and
# ldl_solve is sytrs. torch has no derivative for either (its grad_fn is NotImplemented).

LDLFactorResult = _return_types.maker("linalg_ldl_factor")
LDLFactorExResult = _return_types.maker("linalg_ldl_factor_ex")


def _idamax(v):
    """i?amax as MKL's: the first index of the largest entry, or of the first NaN."""
    i = int(np.argmax(v))
    return i, v[i]


def _sytf2(m, herm):
    """LAPACK's ?sytf2 / ?hetf2 with uplo = 'L' on one matrix: (LD, pivots, info)."""
    a = np.tril(m).copy()
    n = a.shape[0]
    cplx = np.iscomplexobj(a)
    rt = a.real.dtype.type
    cabs1 = (lambda x: np.abs(x.real) + np.abs(x.imag)) if cplx else np.abs
    cj = np.conj if herm else (lambda x: x)
    dabs = (lambda x: np.abs(x.real)) if herm else cabs1
    alpha = rt((1 + np.sqrt(17.0)) / 8)
    ipiv = np.zeros(n, np.int32)
    info = 0
    if herm:
        a[np.diag_indices(n)] = a.diagonal().real
    k = 0
    while k < n:
        kstep = 1
        absakk = dabs(a[k, k])
        if k < n - 1:
            i, colmax = _idamax(cabs1(a[k + 1:, k]))
            imax = k + 1 + i
        else:
            imax, colmax = k, rt(0)
        if (absakk if absakk > colmax else colmax) == 0:   # (Fortran's MAX: NaN loses)
            info = info or k + 1
            kp = k
        else:
            if absakk >= alpha * colmax:
                kp = k
            else:
                rowmax = _idamax(cabs1(a[imax, k:imax]))[1]
                if imax < n - 1:
                    c2 = _idamax(cabs1(a[imax + 1:, imax]))[1]
                    rowmax = rowmax if rowmax > c2 else c2
                if absakk >= alpha * colmax * (colmax / rowmax):
                    kp = k
                elif dabs(a[imax, imax]) >= alpha * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                t = a[kp + 1:, kk].copy()
                a[kp + 1:, kk] = a[kp + 1:, kp]
                a[kp + 1:, kp] = t
                t = cj(a[kk + 1:kp, kk].copy())
                a[kk + 1:kp, kk] = cj(a[kp, kk + 1:kp])
                a[kp, kk + 1:kp] = t
                if herm:
                    a[kp, kk] = np.conj(a[kp, kk])
                a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                if kstep == 2:
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            if kstep == 1:
                if k < n - 1:
                    r1 = (rt(1) / a[k, k].real) if herm else (a.dtype.type(1) / a[k, k])
                    x = a[k + 1:, k].copy()
                    low = np.tri(n - k - 1, dtype=bool)
                    a[k + 1:, k + 1:] = np.where(low, a[k + 1:, k + 1:] - r1 * np.outer(x, cj(x)),
                                                 a[k + 1:, k + 1:])
                    a[k + 1:, k] = r1 * x
                    if herm:
                        d = np.arange(k + 1, n)
                        a[d, d] = a[d, d].real
            elif k < n - 2:
                if herm:
                    d = np.abs(a[k + 1, k])
                    d11, d22 = a[k + 1, k + 1].real / d, a[k, k].real / d
                    tt = rt(1) / (d11 * d22 - rt(1))
                    d21 = a[k + 1, k] / d
                    dd = tt / d
                    ck, ck1 = a[k + 2:, k].copy(), a[k + 2:, k + 1].copy()
                    wk = dd * (d11 * ck - d21 * ck1)
                    wkp1 = dd * (d22 * ck1 - np.conj(d21) * ck)
                else:
                    d21 = a[k + 1, k]
                    d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
                    tt = a.dtype.type(1) / (d11 * d22 - a.dtype.type(1))
                    d21 = tt / d21
                    ck, ck1 = a[k + 2:, k].copy(), a[k + 2:, k + 1].copy()
                    wk = d21 * (d11 * ck - ck1)
                    wkp1 = d21 * (d22 * ck1 - ck)
                low = np.tri(n - k - 2, dtype=bool)
                a[k + 2:, k + 2:] = np.where(
                    low, a[k + 2:, k + 2:] - np.outer(ck, cj(wk)) - np.outer(ck1, cj(wkp1)),
                    a[k + 2:, k + 2:])
                a[k + 2:, k], a[k + 2:, k + 1] = wk, wkp1
                if herm:
                    d = np.arange(k + 2, n)
                    a[d, d] = a[d, d].real
        if kstep == 1:
            ipiv[k] = kp + 1
        else:
            ipiv[k] = ipiv[k + 1] = -(kp + 1)
        k += kstep
    return a, ipiv, np.int32(info)


def _sytrs(ld, ipiv, b, herm):
    """LAPACK's ?sytrs / ?hetrs with uplo = 'L': solves A X = B from sytf2's (LD, pivots)."""
    a, x = ld, b.copy()
    n = a.shape[0]
    cj = np.conj if herm else (lambda v: v)
    k = 0
    while k < n:                     # L D Y = P^T B
        if ipiv[k] > 0:
            kp = ipiv[k] - 1
            if kp != k:
                x[[k, kp]] = x[[kp, k]]
            x[k + 1:] -= np.outer(a[k + 1:, k], x[k])
            x[k] = x[k] / (a[k, k].real if herm else a[k, k])
            k += 1
        else:
            kp = -ipiv[k] - 1
            if kp != k + 1:
                x[[k + 1, kp]] = x[[kp, k + 1]]
            if k < n - 2:
                x[k + 2:] -= np.outer(a[k + 2:, k], x[k])
                x[k + 2:] -= np.outer(a[k + 2:, k + 1], x[k + 1])
            akm1k = a[k + 1, k]
            akm1 = a[k, k] / cj(akm1k)
            ak = a[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1
            bkm1, bk = x[k] / cj(akm1k), x[k + 1] / akm1k
            x[k], x[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:                    # L^T (L^H) P^T X = Y
        if ipiv[k] > 0:
            if k < n - 1:
                x[k] -= cj(a[k + 1:, k]) @ x[k + 1:]
            kp = ipiv[k] - 1
            if kp != k:
                x[[k, kp]] = x[[kp, k]]
            k -= 1
        else:
            if k < n - 1:
                x[k] -= cj(a[k + 1:, k]) @ x[k + 1:]
                x[k - 1] -= cj(a[k + 1:, k - 1]) @ x[k + 1:]
            kp = -ipiv[k] - 1
            if kp != k:
                x[[k, kp]] = x[[kp, k]]
            k -= 2
    return x


def _ldl_factor_host(a, herm):
    a = np.asarray(a)
    n = a.shape[-1]
    flat = a.reshape(-1, n, n)
    ld = np.zeros_like(flat)
    piv = np.zeros(flat.shape[:2], np.int32)
    info = np.zeros(flat.shape[0], np.int32)
    for k in range(flat.shape[0]):
        ld[k], piv[k], info[k] = _sytf2(flat[k], herm)
    return ld.reshape(a.shape), piv.reshape(a.shape[:-1]), info.reshape(a.shape[:-2])


def _ldl_solve_host(ld, piv, b, herm):
    ld, piv, b = np.asarray(ld), np.asarray(piv), np.asarray(b)
    n = ld.shape[-1]
    batch = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    ldb = np.broadcast_to(ld, batch + ld.shape[-2:]).reshape(-1, n, n)
    pb = np.broadcast_to(piv, batch + piv.shape[-1:]).reshape(-1, n)
    bb = np.broadcast_to(b, batch + b.shape[-2:]).reshape(-1, *b.shape[-2:])
    out = np.stack([_sytrs(ldb[k], pb[k], bb[k], herm) for k in range(bb.shape[0])]) \
        if bb.shape[0] else np.zeros(bb.shape, b.dtype)
    return out.reshape(batch + b.shape[-2:]).astype(b.dtype)


def _ldl_factor_fn(a, hermitian):
    shapes = (jax.ShapeDtypeStruct(a.shape, a.dtype),
              jax.ShapeDtypeStruct(a.shape[:-1], jnp.int32),
              jax.ShapeDtypeStruct(a.shape[:-2], jnp.int32))
    return jax.pure_callback(lambda x: _ldl_factor_host(x, hermitian), shapes, a,
                             vmap_method="sequential")


@defop("linalg_ldl_factor_ex", grad_name="NotImplemented")
def _ldl_factor(a, hermitian):
    if a.shape[-1] == 0:
        return a, jnp.zeros(a.shape[:-1], jnp.int32), jnp.zeros(a.shape[:-2], jnp.int32)
    return no_derivative(lambda x: _ldl_factor_fn(x, hermitian), "linalg_ldl_factor_ex")(a)


@defop("linalg_ldl_solve", grad_name="NotImplemented")
def _ldl_solve(ld, piv, b, hermitian):
    batch = jnp.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    shape = jax.ShapeDtypeStruct(batch + b.shape[-2:], b.dtype)
    if ld.shape[-1] == 0 or b.size == 0:
        return jnp.zeros(shape.shape, b.dtype)

    def solve(ld, b):
        return jax.pure_callback(lambda l, p, x: _ldl_solve_host(l, p, x, hermitian), shape,
                                 ld, piv, b, vmap_method="sequential")
    return no_derivative(solve, "linalg_ldl_solve")(ld, b)


def _ldl_factor_args(A, name):
    _square_check(A, name)
    _float_check(A, name)
    _low_precision(A, "ldl_factor_kernel_cpu")


_UNKNOWN_INFO = ('false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/native/'
                 'BatchLinearAlgebra.cpp":1642, please report a bug to PyTorch. {name}: Unknown '
                 'error code: {v}.')


def _ldl_factor_ex(A, hermitian, check_errors, name):
    _ldl_factor_args(A, "torch.linalg.ldl_factor_ex")
    LD, piv, info = apply(_ldl_factor, A, hermitian=bool(hermitian))
    if check_errors:
        # (torch's check of sytrf's info has no message for it: an internal assert, the batch
        # element unnamed)
        _raise_first(info, lambda _k, v: RuntimeError(_UNKNOWN_INFO.format(name=name, v=v)))
    return LD, piv, info


@public(out=True)
def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """torch.linalg.ldl_factor_ex: LAPACK's Bunch-Kaufman LDL^T (LDL^H with ``hermitian``) of
    the lower triangle: the compact ``LD``, 1-based ``pivots`` (negative: a 2x2 block) and
    sytrf's info (the first zero pivot)."""
    return LDLFactorExResult(*_ldl_factor_ex(A, hermitian, check_errors,
                                             "torch.linalg.ldl_factor_ex"))


@public(out=True)
def ldl_factor(A, *, hermitian=False):
    return LDLFactorResult(*_ldl_factor_ex(A, hermitian, True, "torch.linalg.ldl_factor")[:2])


@public(out=True)
def ldl_solve(LD, pivots, B, *, hermitian=False):
    """torch.linalg.ldl_solve: LAPACK's sytrs from ldl_factor's (LD, pivots)."""
    name = "torch.linalg.ldl_solve"
    _square_check(LD, name)
    _float_check(LD, name)
    if B.dtype is not LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_tname(B.dtype)} and A of type {_tname(LD.dtype)} instead.")
    if B.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"-2)")
    if B.shape[-2] != LD.shape[-1]:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is "
                           f"{LD.shape[-2]} by {LD.shape[-1]} but each b matrix is "
                           f"{B.shape[-2]} by {B.shape[-1]}")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {list(pivots.shape)} instead")
    if pivots.dtype.category != D._INT:
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got "
                           f"{_tname(pivots.dtype)}")
    _low_precision(LD, "ldl_solve_kernel_cpu")
    n = LD.shape[-1]
    if pivots.numel():
        p = apply(_pivot_range, pivots.detach(), n=int(n))
        _raise_first(p, lambda _k, v: RuntimeError(
            "Pivots given to ldl_solve must all satisfy |pivot| >= 1. Did you properly pass the "
            "result of ldl_factor?" if v == 1 else
            "Pivots given to ldl_solve must all satisfy |pivot| <= LD.size(-2). Did you properly "
            "pass the result of ldl_factor?"))
    return apply(_ldl_solve, LD, pivots.to(D.int32), B, hermitian=bool(hermitian))


@defop("ldl_pivot_range", differentiable=False)
def _pivot_range(p, n):
    """1 where a pivot is 0, 2 where |pivot| > n (one flag for all)."""
    a = jnp.abs(p.astype(jnp.int64))
    return jnp.where(jnp.any(a < 1), 1, jnp.where(jnp.any(a > n), 2, 0)).astype(jnp.int32)




# ------------------------------------------------------------------ randomized low-rank SVD

def _floating_dtype(A):
    """The dtype the random projection is drawn in (integers: float32)."""
    if A.is_complex() or A.dtype in (D.float16, D.float32, D.float64):
        return A.dtype
    return D.float32


def _approximate_basis(A, q, niter=2, M=None):
    """Q with q orthonormal columns such that Q Q^H (A - M) approximates A - M (Halko et al.,
    2009, algorithm 4.4: a random projection refined by ``niter`` subspace iterations)."""
    from .. import linalg, randn
    niter = 2 if niter is None else niter
    R = randn(A.shape[-1], q, dtype=_floating_dtype(A), device=A.device)
    X = A @ R
    if M is not None:
        X = X - M @ R
    Q = linalg.qr(X).Q
    for _ in range(niter):
        X = A.mH @ Q
        if M is not None:
            X = X - M.mH @ Q
        Q = linalg.qr(X).Q
        X = A @ Q
        if M is not None:
            X = X - M @ Q
        Q = linalg.qr(X).Q
    return Q


def _svd_lowrank(A, q=6, niter=2, M=None):
    from .. import linalg
    q = 6 if q is None else q
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.size())
    if m < n:
        A = A.mH
        if M is not None:
            M = M.mH
    Q = _approximate_basis(A, q, niter=niter, M=M)
    B = Q.mH @ A
    if M is not None:
        B = B - Q.mH @ M
    U, S, Vh = linalg.svd(B, full_matrices=False)
    V = Vh.mH
    U = Q.matmul(U)
    if m < n:
        U, V = V, U
    return U, S, V


def svd_lowrank(A, q=6, niter=2, M=None):
    """A nearly optimal rank-``q`` SVD ``(U, S, V)``, ``A - M ~ U diag(S) V^H``, by random
    projection (Halko et al., 2009, algorithm 5.1); the projection is drawn from torchlike's
    generator (DIFFERENCES: random streams)."""
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """Principal components of the rows of ``A`` (centered by default) as a low-rank SVD
    ``(U, S, V)``: V's columns are the principal directions, ``S**2 / (m - 1)`` the
    covariance's eigenvalues."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter=niter, M=None)


__all__ += ["svd_lowrank", "pca_lowrank"]
