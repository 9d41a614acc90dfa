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


# ------------------------------------------------------------------ torch's argument parsing
#
# torch.linalg's (and torch.fft's) functions are C++ bindings: a call names its parameters as
# torch's schema does (``input``, ``A``, ``B``, ``LU``, ...), a non-tensor where a tensor is
# wanted is a TypeError naming the binding (``linalg_det(): argument 'A' (position 1) must be
# Tensor, not float``), and a missing argument is reported in torch's words. Each public
# function checks its arguments that way and passes them on by position.

# name -> (binding, torch's positional parameters: "name", ":T" a Tensor, ":L" a tuple of
# Tensors, ":N" a Number, "=" optional; None where torch has several overloads (only the first
# argument, ``input``, is checked; a string: the tolerance of pinv's / matrix_rank's listed
# overloads), required keyword-only parameters)
_SIGNATURES = {
    "cholesky": ("linalg_cholesky", ("input:T",)),
    "cholesky_ex": ("linalg_cholesky_ex", ("input:T",)),
    "cond": ("linalg_cond", None),
    "cross": ("linalg_cross", ("input:T", "other:T")),
    "det": ("linalg_det", ("A:T",)),
    "diagonal": ("linalg_diagonal", ("A:T",)),
    "eig": ("linalg_eig", ("input:T",)),
    "eigh": ("linalg_eigh", ("input:T", "UPLO=")),
    "eigvals": ("linalg_eigvals", ("input:T",)),
    "eigvalsh": ("linalg_eigvalsh", ("input:T", "UPLO=")),
    "householder_product": ("linalg_householder_product", ("input:T", "tau:T")),
    "inv": ("linalg_inv", ("A:T",)),
    "inv_ex": ("linalg_inv_ex", ("A:T",)),
    "ldl_factor": ("linalg_ldl_factor", ("input:T",)),
    "ldl_factor_ex": ("linalg_ldl_factor_ex", ("input:T",)),
    "ldl_solve": ("linalg_ldl_solve", ("LD:T", "pivots:T", "B:T")),
    "lstsq": ("linalg_lstsq", ("input:T", "b:T", "rcond=")),
    "lu": ("linalg_lu", ("A:T",)),
    "lu_factor": ("linalg_lu_factor", ("A:T",)),
    "lu_factor_ex": ("linalg_lu_factor_ex", ("A:T",)),
    "lu_solve": ("linalg_lu_solve", ("LU:T", "pivots:T", "B:T")),
    "matmul": ("linalg_matmul", ("input:T", "other:T")),
    "matrix_exp": ("linalg_matrix_exp", ("input:T",)),
    "matrix_norm": ("linalg_matrix_norm", None),
    "matrix_rank": ("linalg_matrix_rank", "tol"),
    "matrix_power": ("linalg_matrix_power", ("input:T", "n")),
    "multi_dot": ("linalg_multi_dot", ("tensors:L",)),
    "norm": ("linalg_norm", None),
    "pinv": ("linalg_pinv", "rcond"),
    "qr": ("linalg_qr", ("A:T", "mode=")),
    "slogdet": ("linalg_slogdet", ("A:T",)),
    "solve": ("linalg_solve", ("A:T", "B:T")),
    "solve_ex": ("linalg_solve_ex", ("A:T", "B:T")),
    "solve_triangular": ("linalg_solve_triangular", ("input:T", "B:T"), ("upper",)),
    "svd": ("linalg_svd", ("A:T", "full_matrices=")),
    "svdvals": ("linalg_svdvals", ("A:T",)),
    "tensorinv": ("linalg_tensorinv", ("input:T", "ind=")),
    "tensorsolve": ("linalg_tensorsolve", ("input:T", "other:T", "dims=")),
    "vander": ("linalg_vander", ("x:T",)),
    "vecdot": ("linalg_vecdot", ("x:T", "y:T")),
    "vector_norm": ("linalg_vector_norm", ("input:T", "ord:N=", "dim=", "keepdim=")),
}


def _tp(v):
    from ._creation import _tp_name
    return _tp_name(v)


def torch_binding(fn, binding, params, required_kw=()):
    """``fn`` called as torch's binding ``binding`` (see above): ``params`` are torch's
    positional parameters, in ``fn``'s order."""
    import functools
    import inspect
    from ._tensor import Tensor
    inner = [p.name for p in inspect.signature(fn).parameters.values()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if params is None or isinstance(params, str):
        first = inner[0]

        @functools.wraps(fn)
        def overloaded(*args, **kwargs):
            v = args[0] if args else kwargs.get("input", kwargs.get(first, None))
            if (args or "input" in kwargs or first in kwargs) and not isinstance(v, Tensor):
                if isinstance(params, str):
                    # (pinv / matrix_rank: torch lists its overloads, the tolerance named
                    # ``params``)
                    got = ", ".join([_tp(a) for a in args] +
                                    [f"{k}={_tp(x)}" for k, x in kwargs.items()])
                    t = params
                    raise TypeError(
                        f"{binding}() received an invalid combination of arguments - got "
                        f"({got}), but expected one of:\n"
                        f" * (Tensor input, *, Tensor atol = None, Tensor rtol = None, bool "
                        f"hermitian = False, Tensor out = None)\n"
                        f" * (Tensor input, *, float atol = None, float rtol = None, bool "
                        f"hermitian = False, Tensor out = None)\n"
                        f" * (Tensor input, Tensor {t}, bool hermitian = False, *, Tensor out "
                        f"= None)\n"
                        f" * (Tensor input, float {t}, bool hermitian = False, *, Tensor out = "
                        f"None)\n")
                where = " (position 1)" if args else ""
                raise TypeError(f"{binding}(): argument 'input'{where} must be Tensor, not "
                                f"{_tp(v)}")
            if "input" in kwargs and not args:
                kwargs = dict(kwargs)
                kwargs[first] = kwargs.pop("input")
            return fn(*args, **kwargs)
        return overloaded
    sig = inspect.signature(fn).parameters.values()
    allowed = None if any(p.kind == p.VAR_KEYWORD for p in sig) else \
        {p.name for p in sig} | {"out"}
    names = [p.split(":")[0].rstrip("=") for p in params]
    kinds = [p.split(":")[1].rstrip("=") if ":" in p else "" for p in params]
    required = [not p.endswith("=") for p in params]
    lo = sum(required) + len(required_kw)       # (torch counts a required keyword too)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if len(args) > len(names):
            takes = (f"{len(names)} positional argument{'s' if len(names) != 1 else ''}"
                     if lo == len(names) else
                     f"from {lo} to {len(names)} positional arguments")
            raise TypeError(f"{binding}() takes {takes} but {len(args)} were given")
        vals = {}
        for i, nm in enumerate(names):
            if i < len(args):
                vals[nm] = args[i]
            elif nm in kwargs:
                vals[nm] = kwargs[nm]
            elif i < len(inner) and inner[i] != nm and inner[i] in kwargs:
                vals[nm] = kwargs[inner[i]]          # (the name torchlike's docs give)
        # (torch's order: each parameter in turn, its type or its absence; then unknown
        # keywords)
        missing = [nm for nm, req in zip(names, required) if req and nm not in vals] + \
            [k for k in required_kw if k not in kwargs]
        for i, (nm, kind) in enumerate(zip(names, kinds)):
            if nm in missing or (missing and i == len(names) - 1 and nm not in vals):
                n = len(missing)
                raise TypeError(f"{binding}() missing {n} required positional argument"
                                f"{'s' if n == 1 else ''}: " +
                                ", ".join(f'"{m}"' for m in missing))
            if nm not in vals or not kind:
                continue
            v = vals[nm]
            if kind == "N":
                import numbers
                ok = isinstance(v, (numbers.Number, Tensor))
            else:
                ok = isinstance(v, Tensor) if kind == "T" else \
                    isinstance(v, (tuple, list)) and all(isinstance(t, Tensor) for t in v)
            if not ok:
                where = f" (position {i + 1})" if i < len(args) else ""
                want = {"T": "Tensor", "N": "Number", "L": "tuple of Tensors"}[kind]
                raise TypeError(f"{binding}(): argument '{nm}'{where} must be {want}, not "
                                f"{_tp(v)}")
        if missing:
            n = len(missing)
            raise TypeError(f"{binding}() missing {n} required positional argument"
                            f"{'s' if n == 1 else ''}: " + ", ".join(f'"{m}"' for m in missing))
        if allowed is not None:
            for k in kwargs:
                if k not in allowed and k not in names:
                    raise TypeError(f"{binding}() got an unexpected keyword argument '{k}'")
        # fn's call: torch's positional values in order (by fn's names after a gap)
        rest = {k: v for k, v in kwargs.items()
                if k not in names and not (k in inner[:len(names)])}
        call, gap = [], False
        for i, nm in enumerate(names):
            if nm not in vals:
                gap = True
            elif gap or i >= len(inner):
                rest[inner[i] if i < len(inner) else nm] = vals[nm]
            else:
                call.append(vals[nm])
        return fn(*call, **rest)
    return wrapper


for _name, _sig in _SIGNATURES.items():
    globals()[_name] = torch_binding(globals()[_name], _sig[0], _sig[1],
                                     _sig[2] if len(_sig) > 2 else ())
del _name, _sig

from . import overrides as _overrides  # noqa: E402
_overrides.make_overridable(globals(), "torch.linalg")  # (__torch_function__: torchlike.overrides)
