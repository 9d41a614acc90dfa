"""torchlike.linalg: torch.linalg's functions (the ops live in ``torchlike._ops.linalg``,
``products`` and ``factorizations``)."""
from ._ops import linalg as _L
from ._ops.linalg import (LinAlgError,  # noqa: F401
                          linalg_slogdet as slogdet,
                          linalg_qr as qr,
                          linalg_matrix_power as matrix_power,
                          linalg_cross as cross,
                          linalg_multi_dot as multi_dot)
from ._ops.products import matmul  # noqa: F401

from ._ops.factorizations import (matrix_exp, solve_triangular, lu_factor,  # noqa
                                linalg_lu as lu, linalg_lu_solve as lu_solve,
                                matrix_rank, cond, linalg_vander as vander, eigvals, eig, solve_ex,
                                lu_factor_ex, tensorinv, tensorsolve,
                                linalg_diagonal as diagonal, householder_product)

from ._ops._surface import public as _public  # noqa: E402
from . import _dtype as _D  # noqa: E402

# torch.linalg.LinAlgError is torch._C._LinAlgError: what ``type(e).__name__``, ``__module__``
# and tracebacks show. torchlike has no ``_C`` module to name, so an instance pickles through
# ``_rebuild_linalg_error`` (the class itself stays ``torchlike._ops.products.LinAlgError``).
LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"
LinAlgError.__module__ = "torch._C"


def _rebuild_linalg_error(args, state):
    e = LinAlgError(*args)
    if state:
        e.__dict__.update(state)
    return e


LinAlgError.__reduce__ = lambda self: (_rebuild_linalg_error, (self.args, self.__dict__ or None))

__all__ = ["matrix_exp", "solve_triangular", "lu_factor", "lu", "lu_solve", "matrix_rank",
           "cond", "vander", "eigvals", "diagonal", "eig", "solve_ex", "lu_factor_ex",
           "tensorinv", "tensorsolve", "householder_product",
           "LinAlgError", "norm", "vector_norm", "matrix_norm", "inv", "solve", "det", "slogdet",
           "cholesky", "qr", "svd", "svdvals", "eigh", "eigvalsh", "pinv", "matrix_power",
           "lstsq", "cross", "multi_dot", "matmul", "vecdot", "inv_ex", "cholesky_ex"]


@_public(out=True)
def vecdot(x, y, *, dim=-1):
    """sum(conj(x) * y) along ``dim`` (with broadcasting)."""
    return (x.conj() * y if x.is_complex() else x * y).sum(dim)


@_public(out=True)
def inv_ex(A, *, check_errors=False):
    """torch.linalg.inv_ex: the inverse and, per matrix, the 1-based index of the first zero
    pivot (0: invertible); a singular input raises only with ``check_errors``."""
    from collections import namedtuple
    import torchlike
    from ._ops import linalg as _L
    from ._registry import apply
    r = namedtuple("linalg_inv_ex", ["inverse", "info"])
    _inv_args(A)
    if check_errors:
        _L._singular_check(A, "linalg.inv_ex")
    info = apply(_L._lu_info, A.detach()).to(torchlike.int32)
    return r(apply(_L._inv, A), info)




# ------------------------------------------------------------------ value checks torch makes
#
# The ops below live in ``torchlike._ops.linalg``; torch.linalg's forms add torch's checks of
# LAPACK's info (a NaN refused by the SVD, a NaN failing a Cholesky factorization, the failing
# batch element named) and its argument errors.

@_public(out=True)
def solve(A, B, *, left=True):
    from ._ops.factorizations import _solve_ex
    return _solve_ex(A, B, left, True, "linalg.solve")[0]


@_public(out=True)
def cholesky(A, *, upper=False):
    from ._ops.factorizations import cholesky_ex as _ch
    return _ch(A, upper, True, "linalg.cholesky")[0]


@_public(out=True)
def cholesky_ex(A, *, upper=False, check_errors=False):
    """``(L, info)``: info is LAPACK's (0, or the order of the failing leading minor); L is
    unspecified where info > 0, as in torch."""
    from ._ops.factorizations import cholesky_ex as _ch
    return _L.CholeskyExResult(*_ch(A, upper, check_errors, "linalg.cholesky_ex"))


def _svd_args(A):
    from ._ops.factorizations import _low_precision, _svd_check
    _L._float_check(A, "linalg.svd")
    _L._matrix_check(A, "linalg.svd")
    _low_precision(A, "linalg_svd_cpu")
    _svd_check(A)


def _inv_args(A):
    _L._float_check(A, "linalg.inv")
    _L._square_check(A, "linalg.inv")
    if A.dtype in (_D.float16, _D.bfloat16):
        raise RuntimeError(f"linalg.inv: Low precision dtypes not supported. Got "
                           f"{_D.legacy_name(A.dtype)}")


@_public(out=True)
def inv(A):
    _inv_args(A)
    return _L.linalg_inv(A)


@_public(out=True)
def det(A):
    from ._ops.factorizations import _low_precision
    _L._float_check(A, "linalg.det")
    _L._square_check(A, "linalg.det")
    _low_precision(A, "lu_cpu")
    return _L.linalg_det(A)


@_public(out=True)
def svd(A, full_matrices=True, *, driver=None):
    _svd_args(A)
    return _L.linalg_svd(A, full_matrices, driver=driver)


@_public(out=True)
def svdvals(A, *, driver=None):
    _svd_args(A)
    return _L.linalg_svdvals(A, driver=driver)


@_public(out=True)
def pinv(A, *, atol=None, rtol=None, hermitian=False):
    from ._ops.factorizations import _svd_check
    if A.dtype.category < _D._FLOAT or A.ndim < 2:
        raise RuntimeError(f"linalg.pinv({_D.legacy_name(A.dtype)}{{{list(A.shape)}}}): "
                           f"expected a tensor with 2 or more dimensions of float, double, "
                           f"cfloat or cdouble types")
    if not hermitian:
        _svd_check(A)
    return _L.linalg_pinv(A, atol=atol, rtol=rtol, hermitian=hermitian)


def _eigh_args(A, name):
    _L._square_check(A, name)
    if A.dtype.category < _D._FLOAT:
        raise NotImplementedError(f"\"linalg_eigh_cpu\" not implemented for "
                                  f"'{_D.legacy_name(A.dtype)}'")


@_public(out=True)
def eigh(A, UPLO="L"):
    _eigh_args(A, "linalg.eigh")
    return _L.linalg_eigh(A, UPLO)


@_public(out=True)
def eigvalsh(A, UPLO="L"):
    _eigh_args(A, "linalg.eigvalsh")
    return _L.linalg_eigvalsh(A, UPLO)


def _norm_svd_check(A, ord, dim):
    if ord in (2, -2, "nuc") and A.ndim >= 2 and A.dtype.category >= _D._FLOAT:
        from ._ops.factorizations import _svd_check
        _svd_check(A, dim)


@_public(out=True)
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    r = _L.linalg_matrix_norm(A, ord, dim, keepdim, dtype=dtype)   # (its argument checks)
    _norm_svd_check(A, ord, tuple(dim))
    return r


@_public(out=True)
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    if isinstance(dim, int):
        dim = (dim,)
    if isinstance(ord, str):
        # torch: a string order is a matrix norm, over dims (0, 1) when none are given
        if dim is not None and len(dim) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got {list(dim)}")
        if dim is None and A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input "
                               f"must be 1D or 2D. Got {A.ndim}D.")
        return matrix_norm(A, ord, (0, 1) if dim is None else dim, keepdim, dtype=dtype)
    if (dim is not None and len(dim) == 2) or (dim is None and ord is not None and A.ndim == 2):
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim,
                           keepdim, dtype=dtype)
    return _L.linalg_norm(A, ord, dim, keepdim, dtype=dtype)


@_public(out=True)
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    if isinstance(ord, str):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' (position 2) must be Number, "
                        f"not str")
    return _L.linalg_vector_norm(x, ord, dim, keepdim, dtype=dtype)


@_public(out=True)
def lstsq(A, B, rcond=None, *, driver=None):
    if A.dtype.category >= _D._FLOAT and A.ndim >= 2 and A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {_D.legacy_name(A.dtype)} and other's "
                           f"dtype {_D.legacy_name(B.dtype)}")
    return _L.linalg_lstsq(A, B, rcond, driver=driver)
