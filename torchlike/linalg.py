"""torchlike.linalg: torch.linalg's functions (the ops live in ``torchlike._ops.linalg``,
``products`` and ``factorizations``)."""
from ._ops.linalg import (LinAlgError,  # noqa: F401
                          linalg_slogdet as slogdet,
                          linalg_qr as qr,
                          linalg_matrix_power as matrix_power,
                          linalg_cross as cross,
                          linalg_multi_dot as multi_dot,
                          linalg_inv as inv, linalg_inv_ex as inv_ex,
                          linalg_det as det,
                          linalg_solve as solve,
                          linalg_cholesky as cholesky, linalg_cholesky_ex as cholesky_ex,
                          linalg_svd as svd, linalg_svdvals as svdvals,
                          linalg_pinv as pinv,
                          linalg_eigh as eigh, linalg_eigvalsh as eigvalsh,
                          linalg_norm as norm, linalg_vector_norm as vector_norm,
                          linalg_matrix_norm as matrix_norm,
                          linalg_lstsq as lstsq)
from ._ops.products import matmul  # noqa: F401

from ._ops.factorizations import (matrix_exp, solve_triangular, lu_factor,  # noqa
                                linalg_lu as lu, linalg_lu_solve as lu_solve,
                                matrix_rank, cond, linalg_vander as vander, eigvals, eig, solve_ex,
                                lu_factor_ex, tensorinv, tensorsolve,
                                linalg_diagonal as diagonal, householder_product,
                                ldl_factor, ldl_factor_ex, ldl_solve)

from ._ops._surface import public as _public  # noqa: E402

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
           "lstsq", "cross", "multi_dot", "matmul", "vecdot", "inv_ex", "cholesky_ex",
           "ldl_factor", "ldl_factor_ex", "ldl_solve"]


@_public(out=True)
def vecdot(x, y, *, dim=-1):
    """sum(conj(x) * y) along ``dim`` (with broadcasting)."""
    return (x.conj() * y if x.is_complex() else x * y).sum(dim)
