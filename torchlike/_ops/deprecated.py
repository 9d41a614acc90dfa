"""torch's deprecated top-level functions: ``range`` (inclusive end) and the norms' old forms
still work; the linear-algebra entry points torch removed raise torch's RuntimeError."""
from __future__ import annotations

import builtins
import math

from .. import _dtype as D
from ._surface import public

__all__ = ["range", "frobenius_norm", "nuclear_norm", "norm_except_dim", "solve", "lstsq",
           "eig", "symeig", "matrix_rank"]

_REMOVED = "This function was deprecated since version 1.9 and is now removed. "


@public(out=True, dtype_from_out=True)
def range(*args, **kwargs):
    """``torch.range``: like ``arange`` but the end is included (torch warns it is deprecated)."""
    import warnings
    from .._creation import _num, _range_args, arange
    a = _range_args("range", args, kwargs)
    dtype, device, requires_grad = a["dtype"], a["device"], a["requires_grad"]
    start, end, step = (_num(a[k]) for k in ("start", "end", "step"))
    for v in (start, end, step):
        if isinstance(v, complex) and v.imag:
            raise RuntimeError("value cannot be converted to type double without overflow")
    start, end, step = (v.real if isinstance(v, complex) else v for v in (start, end, step))
    # torch's range_out checks, in its order
    if not (step > 0 or step < 0):
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        from .._creation import _fmt_num
        raise RuntimeError(f"unsupported range: {_fmt_num(float(start))} -> "
                           f"{_fmt_num(float(end))}")
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    n = builtins.int(math.floor((end - start) / step)) + 1
    dt = dtype or D.get_default_dtype()
    return arange(n, dtype=D.float64, device=device).mul(step).add(start).to(dt).requires_grad_(
        requires_grad)


@public(out=True)
def frobenius_norm(input, dim, keepdim=False):
    from .. import linalg
    return linalg.vector_norm(input, 2, dim=dim, keepdim=keepdim)


@public(out=True)
def nuclear_norm(input, dim=None, keepdim=False):
    from .. import linalg
    if isinstance(dim, builtins.bool):
        dim, keepdim = None, dim
    return linalg.matrix_norm(input, "nuc", dim=(-2, -1) if dim is None else dim,
                              keepdim=keepdim)


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm over every dimension but ``dim`` (weight_norm's helper)."""
    from .. import linalg
    if dim == -1:
        return linalg.vector_norm(v, pow)
    dims = [d for d in builtins.range(v.dim()) if d != dim]
    return linalg.vector_norm(v, pow, dim=dims, keepdim=True)


# torch's texts after _REMOVED's first sentence (torch/_linalg_utils.py), one per function
_REMOVED_TAILS = {
    'eig': ' `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\nL_complex, V_complex = torch.linalg.eig(A)',
    'symeig': " The default behavior has changed from using the upper triangular portion of the matrix by default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')",
    'solve': ' `torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its arguments reversed and does not return the LU factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should be replaced with:\nX = torch.linalg.solve(A, B)',
    'lstsq': " `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition in the returned tuple (although it returns other information about the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored the residuals of the solution in the last m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field 'residuals' of the returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution",
    'matrix_rank': "\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.",
}


def _removed(name):
    def fn(*args, **kwargs):
        raise RuntimeError(_REMOVED.rstrip() + _REMOVED_TAILS[name])
    fn.__name__ = fn.__qualname__ = name
    return fn


solve = public(_removed("solve"), method=True, out=True)
lstsq = public(_removed("lstsq"), method=True, out=True)
eig = public(_removed("eig"), method=True)
symeig = public(_removed("symeig"), method=True, out=True)
matrix_rank = public(_removed("matrix_rank"), out=True)
