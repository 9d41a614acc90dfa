"""torchlike.linalg: torch.linalg's functions (the ops live in ``torchlike._ops.linalg``,
``products`` and ``factorizations``)."""
from ._ops.linalg import (LinAlgError, linalg_norm as norm,  # noqa: F401
                          linalg_vector_norm as vector_norm, linalg_matrix_norm as matrix_norm,
                          linalg_inv as inv, linalg_solve as solve, linalg_det as det,
                          linalg_slogdet as slogdet, linalg_cholesky as cholesky,
                          linalg_qr as qr, linalg_svd as svd, linalg_svdvals as svdvals,
                          linalg_eigh as eigh, linalg_eigvalsh as eigvalsh,
                          linalg_pinv as pinv, linalg_matrix_power as matrix_power,
                          linalg_lstsq as lstsq, linalg_cross as cross,
                          linalg_multi_dot as multi_dot,
                          linalg_cholesky_ex as cholesky_ex)
from ._ops.products import matmul  # noqa: F401

from ._ops.factorizations import (matrix_exp, solve_triangular, lu_factor,  # noqa
                                linalg_lu as lu, linalg_lu_solve as lu_solve,
                                matrix_rank, cond, linalg_vander as vander, eigvals, eig, solve_ex,
                                lu_factor_ex, tensorinv, tensorsolve,
                                linalg_diagonal as diagonal, householder_product)

from ._ops._surface import public as _public  # noqa: E402

# torch.linalg.LinAlgError is torch._C._LinAlgError: its name is ``_LinAlgError`` (what
# ``type(e).__name__`` and tracebacks show). The class stays importable where it lives
# (``torchlike._ops.products._LinAlgError``), so exceptions still pickle: torchlike has no
# ``_C`` module to name.
LinAlgError.__name__ = LinAlgError.__qualname__ = "_LinAlgError"

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
    _L._float_check(A, "linalg.inv")
    _L._square_check(A, "linalg.inv")
    if check_errors:
        _L._singular_check(A, "linalg.inv_ex")
    info = apply(_L._lu_info, A.detach()).to(torchlike.int32)
    return r(apply(_L._inv, A), info)


