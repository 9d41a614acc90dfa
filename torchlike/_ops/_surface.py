"""The public surface, declared where each function is defined, and ``bind``: the one writer of
Tensor's methods, in-place forms and operators.

A family module declares each public function's surface at its definition::

    @public(method=True, inplace=True, out=True)
    def add(input, other, *, alpha=1): ...

``method``: ``Tensor.add`` is the function (``also`` names aliases with the same surface);
``inplace``: ``Tensor.add_`` is its in-place form (``inplace_of``, torch's checks) unless the
family declares its own ``add_``; ``out``: torch's ``out=`` wraps the function itself
(``out_form``: ``with_out`` and torch's refusals of an ``out`` of another dtype), so
``torchlike.add`` and the family's ``add`` are one object; ``top_inplace``: ``torchlike.add_``
is ``Tensor.add_``. Methods with their own signature are declared with ``@method("view")`` or
``methods(view_as=...)``. ``bind(torchlike, Tensor)`` writes every declaration and the operator
table; a name declared twice raises, as ``defop`` does for ops.
"""
from __future__ import annotations

from .._storage import inplace_of, with_out, write_out  # noqa: F401  (re-exported for families)

__all__ = ["bind", "public", "method", "methods", "inplace_methods", "toplevel", "with_out",
           "write_out", "inplace_of", "declared", "alias"]

# (owner, attribute, object or a callable resolving it at bind, declaring module)
_DECLARED = []


def _declare(owner, name, obj, where):
    _DECLARED.append((owner, name, obj, where))


def _takes_out(fn):
    """Whether ``fn`` (or a function it wraps) has an ``out`` parameter."""
    seen = 0
    while fn is not None and seen < 8:
        code = getattr(fn, "__code__", None)
        if code is not None and "out" in code.co_varnames[:code.co_argcount
                                                          + code.co_kwonlyargcount]:
            return True
        fn, seen = getattr(fn, "__wrapped__", None), seen + 1
    return False


def _refusing_out(fn, name):
    """A method made from a function with ``out=``: torch's methods take none (``np.sum(t)``
    passes ``out=None`` and gets torch's TypeError, not a value)."""
    import functools

    @functools.wraps(fn)
    def method(*args, **kwargs):
        if "out" in kwargs:
            # (torch names the first keyword that is not one of its parameters: numpy's
            # aliases are not, so ``np.sum(t, axis=0)``'s ``axis`` comes before ``out``)
            import inspect
            params = inspect.signature(inspect.unwrap(fn)).parameters
            bad = next(k for k in kwargs if k == "out" or k not in params or k in _NUMPY_NAMES)
            raise TypeError(f"{name}() got an unexpected keyword argument '{bad}'")
        return fn(*args, **kwargs)
    return method


class _resolve:
    """``Tensor.<name>``, looked up when ``bind`` writes a top-level declaration."""
    def __init__(self, name):
        self.name = name


def public(fn=None, *, method=False, inplace=False, out=False, top_inplace=False, also=(),
           dtype_from_out=False, name=None):
    """Declare ``fn``'s surface at its definition (see the module docstring); returns ``fn``, or
    ``fn`` with torch's ``out=`` when ``out`` is set."""
    if fn is None:
        return lambda f: public(f, method=method, inplace=inplace, out=out,
                                top_inplace=top_inplace, also=also,
                                dtype_from_out=dtype_from_out, name=name)
    name = name or fn.__name__
    where = fn.__module__
    top = (name, *also) if top_inplace is True else tuple(top_inplace or ())
    for n in (name, *also):
        if method:
            _declare("Tensor", n, fn, where)
        if inplace:
            _declare("Tensor", n + "_", inplace_of(fn, n), where)
        if n in top:
            _declare("torch", n + "_", _resolve(n + "_"), where)
    if out:
        fn = out_form(fn, name, dtype_from_out)
    return numpy_names(operands_checked(_tensor_first(fn, name), name), name)


# ------------------------------------------------------------------ out= of the result's dtype

# torch's functions whose ``out`` must have the result's dtype (each tensor of a tuple ``out``)
# where other functions cast into it, with the wording of each one's error: given the legacy
# names (``L``) and C++ type names (``C``) of the dtype wanted and the one got. A tuple of
# messages: one per output of a tuple result (``frexp``: the mantissa's, the exponent's). A
# ``_Rule``: torch's rule is another than "the result's dtype" (only some calls refuse, some
# other dtypes are taken).
_C_TYPES = {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "int16": "short int", "int8": "signed char", "uint8": "unsigned char", "bool": "bool",
            "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _c_type(d):
    return _C_TYPES.get(d.name, d.name)


def _expected(w, g):
    return f"Expected out tensor to have dtype {_c_type(w)}, but got {_c_type(g)} instead"


def _found(w, g):
    return f"Found dtype {_legacy(g)} but expected {_legacy(w)}"


def _legacy(d):
    from .. import _dtype as D
    return D.legacy_name(d)


class _Rule:
    """An ``out`` dtype rule other than "the result's dtype, else torch's message":
    ``refuses(wanted, got, args, kwargs)`` is torch's message for an ``out`` of dtype ``got``
    where the result has ``wanted`` (None: torch casts into it; an exception: torch raises that
    rather than a RuntimeError). ``casts``: a dtype taken is cast
    into even where ``write_out`` would refuse the cast (``all``'s uint8 result into a bool
    ``out``). For functions with one result tensor."""

    def __init__(self, refuses, casts=False):
        self.refuses, self.casts = refuses, casts


def _argument(args, kwargs, i, name):
    return args[i] if len(args) > i else kwargs.get(name)


def _bool_or_byte(name):
    # (all/any write into a bool or a uint8 out, whatever the input's dtype; nothing else)
    return _Rule(lambda w, g, a, k: None if g.name in ("bool", "uint8") else
                 f"{name} only supports bool tensor for result, got: {_legacy(g)}", casts=True)


def _tensor_weight(w, g, args, kwargs):
    # (lerp's kernel for a tensor weight refuses another dtype; a number weight's casts)
    from .._tensor import Tensor
    if g is not w and isinstance(_argument(args, kwargs, 2, "weight"), Tensor):
        return _found(w, g)
    return None


# (torch's ldexp kernel, for a floating input and an integer exponent tensor, has no cast to
# another dtype: its check fails, with this message)
_LDEXP_KERNEL = ('!needs_dynamic_casting<func_t>::check(iter) INTERNAL ASSERT FAILED at '
                 '"/__w/pytorch/pytorch/aten/src/ATen/native/cpu/Loops.h":311, please report a '
                 'bug to PyTorch. ')


def _ldexp(w, g, args, kwargs):
    from .. import _dtype as D
    from .._tensor import Tensor
    if not (g.is_floating_point or g.is_complex):
        return f"ldexp can't be cast to the desired output type {_legacy(g)}"
    x, e = _argument(args, kwargs, 0, "input"), _argument(args, kwargs, 1, "other")
    if g is not w and isinstance(x, Tensor) and x.dtype.is_floating_point and \
            isinstance(e, Tensor) and e.dtype.category == D._INT:
        return _LDEXP_KERNEL
    return None


def _asked_dtype(w, g, args, kwargs):
    # (a reduction's explicit dtype must be out's; without one it computes in out's dtype,
    # ``dtype_from_out``, or casts into it)
    return None if kwargs.get("dtype") is None or g is w else _expected(w, g)


def _nansum_dtype(w, g, args, kwargs):
    floating = getattr(_argument(args, kwargs, 0, "input"), "dtype", w).is_floating_point
    if kwargs.get("dtype") is None:
        # (a floating input sums in out's dtype: its kernel has no integer form; an integer
        # input's sum is cast into any out, bool included)
        if floating and not (g.is_floating_point or g.is_complex):
            return NotImplementedError(f"\"nansum_cpu\" not implemented for '{_legacy(g)}'")
        return None
    if g is w:
        return None
    if w.is_floating_point and floating:
        return (f"nansum: provided dtype must match dtype of result. Got {_legacy(g)} and "
                f"{_legacy(w)}.")
    return _expected(w, g)


def _floating_result(w, g, args, kwargs):
    if g.is_floating_point or g.is_complex:
        return None
    return f"logsumexp(): Expected floating point type for result tensor, but got: {_legacy(g)}"


def _histogram_edges(w, g):
    return (f"torch.histogram: input tensor and bin_edges tensor should have the same dtype, "
            f"but got input {_c_type(w)} and bin_edges {_c_type(g)} for dimension 0")


def _histogram_hist(w, g):
    return (f"torch.histogram: input tensor and hist tensor should have the same dtype, but got "
            f"input {_c_type(w)} and hist {_c_type(g)}")


_STRICT_OUT = {
    **{n: _expected for n in ("gather", "take_along_dim", "max", "min", "sort", "topk", "msort",
                              "isin", "norm", "cross", "diag", "tril", "triu", "argmax",
                              "argmin", "index_add", "index_copy", "index_reduce", "scatter",
                              "scatter_add", "scatter_reduce", "aminmax", "frobenius_norm",
                              "lu_unpack", "slice_scatter", "slogdet", "triangular_solve",
                              "argsort", "linalg_inv", "linalg_inv_ex", "softmax",
                              "log_softmax", "linear", "avg_pool2d", "avg_pool3d",
                              "linalg_vector_norm")},
    **{n: _found for n in ("abs", "absolute", "neg", "negative", "floor", "ceil", "round",
                           "sign", "sgn", "trunc", "fix", "frac", "clamp", "clip", "clamp_min",
                           "clamp_max", "conj_physical", "hardshrink", "softshrink", "gelu",
                           "softplus")},
    **{n: lambda w, g: (f"Expected the dtype for input and out to match, but got {_legacy(w)} "
                        f"for input's dtype and {_legacy(g)} for out's dtype.")
       for n in ("amax", "amin")},
    "nonzero": lambda w, g: (f"nonzero: Expected out tensor to have scalar type Long but got "
                             f"scalar type{_legacy(g)}"),
    **{n: lambda w, g: "quantile() out tensor must be same dtype as the input tensor"
       for n in ("quantile", "nanquantile")},
    "take": lambda w, g: (f"take(): self and out expected to have the same dtype, but got "
                          f"self.dtype = {_legacy(w)} and out.dtype = {_legacy(g)}"),
    **{n: lambda w, g, n=n: f"{n}(): self and result must have the same scalar type"
       for n in ("index_select", "masked_select")},
    "nan_to_num": lambda w, g: (f"nan_to_num: dtype of out: {_legacy(g)} should be same as "
                                f"input: {_legacy(w)}"),
    **{n: lambda w, g, n=n: f"{n} does not support non-boolean outputs."
       for n in ("signbit", "isposinf", "isneginf")},
    "where": lambda w, g: f"Expected out type to be {_legacy(w)} but got {_legacy(g)}",
    "kthvalue": lambda w, g: "output values must be of same type as input",
    **{n: lambda w, g: f"expected scalar_type {_legacy(w)} but found {_legacy(g)}"
       for n in ("cummax", "cummin", "logcumsumexp")},
    "logsigmoid": lambda w, g: f"expected scalar type {_legacy(w)} but found {_legacy(g)}",
    "mode": lambda w, g: (f"expected scalar type '{_legacy(w)}' but got '{_legacy(g)}' for "
                          f"values output"),
    **{n: lambda w, g: (f"Expected tensor for 'values' to have the same type as tensor for "
                        f"argument #2 'self'; but type {_tensor_name(g)} does not equal "
                        f"{_tensor_name(w)} (while checking arguments for median)")
       for n in ("median", "nanmedian")},
    **{n: lambda w, g: (f"torch.searchsorted(): output tensor's dtype is wrong, it can only be "
                        f"Int(int32) or Long(int64) depending on whether out_int32 flag is True, "
                        f"but we got output tensor's dtype {_legacy(g)} and out_int32 flag is "
                        f"{w.name == 'int32'}")
       for n in ("searchsorted", "bucketize")},
    "histc": _histogram_hist,
    "histogram": (_histogram_hist, _histogram_edges),
    "frexp": (lambda w, g: (f"torch.frexp() expects mantissa to have dtype {_c_type(w)} but got "
                            f"{_c_type(g)}"),
              lambda w, g: f"torch.frexp() expects exponent to have int dtype but got "
                           f"{_c_type(g)}"),
    "float_power": lambda w, g: (f"the output given to float_power has dtype {_legacy(g)} but "
                                 f"the operation's result requires dtype {_legacy(w)}"),
    "heaviside": lambda w, g: "heaviside is not yet implemented for tensors with different "
                              "dtypes.",
    **{n: lambda w, g: (f"Expected object of scalar type {_legacy(w)} but got scalar type "
                        f"{_legacy(g)} for argument 'out'") for n in ("polar", "complex")},
    **{n: lambda w, g, t=t: f"{t} expected out tensor dtype {_legacy(w)} but got: {_legacy(g)}"
       for n, t in (("nuclear_norm", "linalg.matrix_norm"), ("linalg_matrix_norm",
                                                            "linalg.matrix_norm"),
                    ("linalg_norm", "linalg.norm"))},
    "ormqr": lambda w, g: (f"torch.ormqr: Expected input and result to have the same dtype, but "
                           f"input has dtype{_legacy(w)} and result has dtype {_legacy(g)}"),
    **{n: _bool_or_byte(n) for n in ("all", "any")},
    "lerp": _Rule(_tensor_weight),
    "ldexp": _Rule(_ldexp),
    **{n: _Rule(_asked_dtype) for n in ("sum", "prod", "mean", "cumsum", "cumprod")},
    **{n: _Rule(_nansum_dtype, casts=True) for n in ("nansum", "nanmean")},
    "logsumexp": _Rule(_floating_result),
}


def _tensor_name(d):
    # (torch's legacy type name in the median check; bool has no legacy tensor type)
    return "CPUBoolType" if d.name == "bool" else f"torch.{_legacy(d)}Tensor"


# ------------------------------------------------------------------ out= of some overloads only

# torch's functions where only some overloads take ``out``: its overloads' parameters, as its
# signatures write them ("*": keyword-only from there; "=": optional). A call with ``out`` that
# fits none gets the TypeError torch's argument parser raises (``_overload_error``).
_OUT_OVERLOADS = {
    "prod": ("input, *, dtype=None", "input, dim, keepdim=False, *, dtype=None, out=None"),
    **{n: ("input", "input, dim, keepdim=False, *, out=None") for n in ("median", "nanmedian")},
    "argsort": ("input, *, stable, dim=-1, descending=False, out=None",
                "input, dim=-1, descending=False"),
}


# functions whose Number overloads take no ``out``: with one, each of these parameters must be
# a Tensor (torch's "argument 'other' (position 3) must be Tensor, not float")
_OUT_TENSORS = {"where": ("condition", "input", "other")}


def _parameters(signature):
    """(name, optional, keyword-only) of each parameter of a ``_OUT_OVERLOADS`` signature."""
    params, keyword = [], False
    for p in signature.split(", "):
        if p == "*":
            keyword = True
        else:
            params.append((p.split("=")[0], "=" in p, keyword))
    return params


# sort and argsort: their overloads (the function's, the method's), one taking ``stable`` with
# dim and descending as keywords only
_STABLE_OVERLOADS = {
    "sort": (("input, *, stable, dim=-1, descending=False, out=None",
              "input, dim=-1, descending=False, *, out=None"),
             ("*, stable, dim=-1, descending=False", "dim=-1, descending=False")),
    "argsort": (_OUT_OVERLOADS["argsort"],
                ("*, stable, dim=-1, descending=False", "dim=-1, descending=False")),
}


def _overload_error(name, signatures, args, kwargs):
    """The TypeError torch's parser raises for ``name(*args, **kwargs)`` (None where the call
    fits an overload). As torch's: where exactly one overload takes this many arguments, its own
    complaint (too many positional arguments, missing ones, an unknown keyword); else "an invalid
    combination" (its first line)."""
    from .._tensor import _type_name
    overloads = [_parameters(s) for s in signatures]

    def complaint(params):
        positional = [p for p, _o, kw in params if not kw]
        least = sum(not o for _p, o, _kw in params)
        if len(args) > len(positional):
            if least != len(positional):
                return (f"{name}() takes from {least} to {len(positional)} positional arguments "
                        f"but {len(args)} were given")
            return (f"{name}() takes {least} positional argument{'' if least == 1 else 's'} but "
                    f"{len(args)} {'was' if len(args) == 1 else 'were'} given")
        given = set(positional[:len(args)]) | set(kwargs)
        first = next((i for i, (p, o, _kw) in enumerate(params) if not o and p not in given),
                     None)
        if first is not None:
            # (torch names every required parameter from the first missing one on, and its
            # plural is the other way round)
            missing = [f'"{p}"' for p, o, _kw in params[first:] if not o]
            return (f"{name}() missing {len(missing)} required positional "
                    f"argument{'s' if len(missing) == 1 else ''}: {', '.join(missing)}")
        names = {p for p, _o, _kw in params}
        for k in kwargs:
            if k not in names or k in positional[:len(args)]:
                return f"{name}() got an unexpected keyword argument '{k}'"
        return None

    if any(complaint(params) is None for params in overloads):
        return None
    count = len(args) + len(kwargs)
    plausible = [params for params in overloads
                 if sum(not o for _p, o, _kw in params) <= count <= len(params)]
    if len(plausible) == 1:
        return TypeError(complaint(plausible[0]))
    # (torch lists the keywords last to first; ``out``, taken out of the call, counts as last)
    got = _got(args, dict(reversed(kwargs.items())))
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but "
                     f"expected one of:")


def _got(args, kwargs):
    """The arguments torch's "invalid combination" message shows: their types, then each
    keyword's; with no positional one shown each keyword is followed by ", "."""
    from .._tensor import _type_name
    if not args:
        return "".join(f"{k}={_type_name(a)}, " for k, a in kwargs.items())
    return ", ".join([_type_name(a) for a in args] +
                     [f"{k}={_type_name(a)}" for k, a in kwargs.items()])


def out_form(fn, name, dtype_from_out=False):
    """``fn`` with torch's ``out=`` (``with_out``), refusing what torch's ``name`` refuses: an
    ``out`` of another dtype than the result's (``_STRICT_OUT``), an ``out`` for an overload
    that takes none (``_OUT_OVERLOADS``). ``public(out=True)`` declares it."""
    g = with_out(fn, name, dtype_from_out)
    if g is not fn and (name in _STRICT_OUT or name in _OUT_OVERLOADS):
        g = _strict_out(g, name, dtype_from_out)
    return g


def _strict_out(g, name, dtype_from_out=False):
    """``g`` (a function with ``out=``, ``with_out``) refusing what ``out_form`` says."""
    import functools

    from .._storage import _tensors_in, check_no_partial_overlap
    from .._tensor import Tensor
    fn = g.__wrapped__
    rule, overloads = _STRICT_OUT.get(name), _OUT_OVERLOADS.get(name)

    tensors_only = _OUT_TENSORS.get(name, ())

    @functools.wraps(g)
    def h(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        for i, p in enumerate(tensors_only):
            v = args[i] if i < len(args) else kwargs.get(p)
            if v is not None and not isinstance(v, Tensor):
                from .._tensor import _type_name
                at = f" (position {i + 1})" if i < len(args) else ""
                raise TypeError(f"{name}(): argument '{p}'{at} must be Tensor, not "
                                f"{_type_name(v)}")
        if overloads is not None:
            error = _overload_error(name, overloads, args, {**kwargs, "out": out})
            if error is not None:
                raise error
        if rule is None:
            return g(*args, out=out, **kwargs)
        if dtype_from_out and kwargs.get("dtype") is None and isinstance(out, Tensor):
            kwargs["dtype"] = out.dtype
        for o in _tensors_in((out,)):
            check_no_partial_overlap(o, args)
        result = fn(*args, **kwargs)
        tuples = isinstance(result, tuple)
        if name in ("max", "min") and not tuples and isinstance(out, Tensor):
            # (a full max/min casts into its out, where the dtypes allow it)
            from .typeinfo import can_cast
            if not can_cast(result.dtype, out.dtype):
                raise RuntimeError(
                    "Expected canCast( typeMetaToScalarType(self.dtype()), "
                    "typeMetaToScalarType(out.dtype())) to be true, but got false.  (Could this "
                    "error message be improved?  If so, please report an enhancement request to "
                    "PyTorch.)")
            return write_out(result, out, name)
        if tuples != isinstance(out, (tuple, list)):
            return write_out(result, out, name)      # (its error for a mismatched out)
        for i, (r, o) in enumerate(zip(result, out) if tuples else [(result, out)]):
            got = getattr(o, "dtype", r.dtype)
            if isinstance(rule, _Rule):
                message = rule.refuses(r.dtype, got, args, kwargs)
            else:
                message = None if got is r.dtype else (
                    rule[i] if isinstance(rule, tuple) else rule)(r.dtype, got)
            if message is not None:
                raise message if isinstance(message, Exception) else RuntimeError(message)
        if isinstance(rule, _Rule) and rule.casts and not tuples and isinstance(out, Tensor) \
                and out.dtype is not result.dtype:
            result = result.to(out.dtype)
        return write_out(result, out, name)
    h._handles_out = True
    return h


# numpy's names torch's argument parser takes for its own (``x.sum(axis=0, keepdims=True)``)
_NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim"}
# torch functions written in Python (torch/functional.py, torch/_tensor.py), which its argument
# parser does not read: they refuse numpy's names
_PYTHON_DEFINED = frozenset({"split", "norm", "unique", "unique_consecutive", "unflatten"})


def numpy_names(fn, name):
    """``fn`` taking numpy's ``axis``/``keepdims`` for its ``dim``/``keepdim``, as torch's
    native functions and methods do (not its Python-defined ones: ``F.softmax(x, axis=1)``
    raises); ``fn`` itself when it has neither parameter. The names are read only when the
    call fails with them (no cost to other calls)."""
    if (getattr(fn, "_numpy_names", False) or not callable(fn) or isinstance(fn, type)
            or name in _PYTHON_DEFINED):
        return fn
    import functools
    import inspect
    code = getattr(inspect.unwrap(fn), "__code__", None)
    if code is None:
        return fn
    params = code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
    aliases = {a: c for a, c in _NUMPY_NAMES.items() if c in params and a not in params}
    if not aliases:
        return fn

    @functools.wraps(fn)
    def g(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError:
            if not any(k in aliases for k in kwargs) or \
                    any(aliases[k] in kwargs for k in kwargs if k in aliases):
                raise           # (numpy's name with torch's: torch refuses numpy's)
        return fn(*args, **{aliases.get(k, k): v for k, v in kwargs.items()})
    g._numpy_names = True
    return g


# ------------------------------------------------------------------ Tensor operands

# torch's parameters that take a Tensor (after ``input``/``self``), where torch's argument
# parser refuses anything else: a list, a tuple, None, a string, a numpy array (computing a
# value there was a silent difference). Per function, its Tensor parameters in order, each of
# one kind (probed against torch 2.13):
#   "tensor":   a Tensor only ("atan2(): argument 'other' (position 2) must be Tensor, not int");
#   "number":   a Tensor or a Python number, one signature (add's "argument 'other' ... must be
#               Tensor, not list");
#   "overload": Tensor and Number overloads ("eq() received an invalid combination of arguments
#               - got (Tensor, list), but expected one of: ...");
#   "overload-tensor": a Tensor in each of the overloads (lerp's ``end``, masked_fill's ``mask``);
#   "overload-int": an int or a one-element integer Tensor (narrow's ``start``);
#   "scalar":   a Python number or a Tensor, keyword-only ("argument 'alpha' must be Number");
#   "int":      an int (not a bool, not a float: "argument 'dim' (position 1) must be int");
#   "ints":     a size or a list of dims, as one sequence or spread over the remaining arguments
#               (``x.view(2, 3)``): ints only, with torch's messages for a float at its place;
# a trailing "?": None is taken too (clamp's bounds). In-place forms (``add_``) share the entry;
# "Tensor.<name>": the method's own, where its parameters differ from the function's.
_T, _N, _O, _OT, _S, _I, _IS = ("tensor", "number", "overload", "overload-tensor", "scalar",
                                "int", "ints")
_OI = "overload-int"
# the dim-taking functions' kinds (``_dims_checked``): "dims": an int or a sequence of ints
# (torch's IntArrayRef, "must be tuple of ints"); "bool": a bool only (keepdim); "dtype": a
# torch dtype or None; "any": not checked. A "?" takes None; "int|tensor": an int or any
# Tensor (max's other); "dims|bool": std's unbiased at dim's place; "-overload": refused with
# the overloads' message in every case
_DS, _B, _DT, _ANY = "dims", "bool", "dtype", "any"
_OPERANDS = {
    "add": (("other", _N), ("alpha", _S)), "sub": (("other", _N), ("alpha", _S)),
    **{n: (("other", _N),) for n in ("mul", "div")},
    "where": (("input", _O), ("other", _O)), "Tensor.where": (("condition", _OT), ("other", _O)),
    **{n: (("other", _O),) for n in (
        "eq", "ne", "not_equal", "lt", "less", "le", "less_equal", "gt", "greater", "ge",
        "greater_equal", "fmod", "remainder", "copysign", "divide", "multiply", "subtract",
        "true_divide", "floor_divide", "xlogy", "bitwise_and", "bitwise_or", "bitwise_xor",
        "bitwise_left_shift", "bitwise_right_shift")},
    **{n: (("other", _T),) for n in (
        "atan2", "arctan2", "hypot", "igamma", "igammac", "logaddexp", "logaddexp2",
        "logical_and", "logical_or", "logical_xor", "maximum", "minimum", "fmax", "fmin",
        "nextafter", "gcd", "lcm", "ldexp", "kron", "cross", "dist", "isclose", "allclose",
        "equal", "expand_as", "reshape_as", "view_as", "type_as", "is_same_size")},
    "pow": (("exponent", _O),), "float_power": (("exponent", _O),),
    "fill_": (("value", _O),),
    "clamp": (("min", _O + "?"), ("max", _O + "?")), "clip": (("min", _O + "?"), ("max", _O + "?")),
    "clamp_min": (("min", _O),), "clamp_max": (("max", _O),),
    "lerp": (("end", _OT), ("weight", _O)),
    "masked_fill": (("mask", _OT), ("value", _O)),
    "masked_select": (("mask", _T),), "masked_scatter": (("mask", _T), ("source", _T)),
    **{n: (("tensor1", _T), ("tensor2", _T), ("value", _S)) for n in ("addcmul", "addcdiv")},
    "outer": (("vec2", _T),), "ger": (("vec2", _T),),
    "diagonal_scatter": (("src", _T),), "select_scatter": (("src", _T),),
    "slice_scatter": (("src", _T),), "as_strided_scatter": (("src", _T),),
    "prelu": (("weight", _T),),
    "cosine_similarity": (("x2", _T),), "pairwise_distance": (("x2", _T),),
    "cosine_embedding_loss": (("input2", _T), ("target", _T)),
    "margin_ranking_loss": (("input2", _T), ("target", _T)),
    "heaviside": (("values", _T),), "isin": (("test_elements", _O),),
    "rsub": (("other", _O), ("alpha", _S)),
    "copy_": (("other", _N),), "resize_as_": (("the_template", _T),),
    **{n: (("weight", _T),) for n in ("conv_transpose1d", "conv_transpose2d",
                                      "conv_transpose3d", "convolution")},
    **{n: (("weight", _OT),) for n in ("conv1d", "conv2d", "conv3d")},
    "bilinear": (("input2", _T), ("weight", _T)),
    **{n: (("weight", _T + "?"), ("bias", _T + "?"), ("running_mean", _T + "?"),
           ("running_var", _T + "?")) for n in ("batch_norm", "instance_norm")},
    # sizes and dims
    "Tensor.view": (("size", _IS + "-overload"),), "reshape": (("shape", _IS),),
    "permute": (("dims", _IS),), "repeat": (("repeats", _IS),), "expand": (("size", _IS),),
    "tile": (("dims", _IS),), "broadcast_to": (("size", _IS),), "flip": (("dims", _IS),),
    **{n: (("size", _IS),) for n in ("new_zeros", "new_ones", "new_empty")},
    "unsqueeze": (("dim", _I),), "transpose": (("dim0", _I), ("dim1", _I)),
    "swapaxes": (("axis0", _I), ("axis1", _I)), "swapdims": (("dim0", _I), ("dim1", _I)),
    "select": (("dim", _I), ("index", _I)), "flatten": (("start_dim", _I), ("end_dim", _I)),
    "chunk": (("chunks", _I), ("dim", _I)),
    "diagonal": (("offset", _I), ("dim1", _I), ("dim2", _I)),
    "tril": (("diagonal", _I),), "triu": (("diagonal", _I),), "unbind": (("dim", _I),),
    "gather": (("dim", _I),),
    "index_select": (("dim", _I),),
    "narrow": (("dim", _OI), ("start", _OI), ("length", _OI)),
    "repeat_interleave": (("repeats", _OI),),
    **{n: (("dim", _I),) for n in ("cat", "concat", "concatenate", "stack")},
    # reductions and dim-taking functions (``_dims_checked``; "overloaded" rows: ``_OVERLOADED``)
    **{n: (("dim", _DS + "?"), ("keepdim", _B), ("dtype", _DT)) for n in (
        "sum", "mean", "nansum", "nanmean")},
    "prod": (("dim", _I), ("keepdim", _B), ("dtype", _DT)),
    **{n: (("dim", _DS + "|bool?"), ("unbiased", _ANY), ("keepdim", _B + "-overload"))
       for n in ("std", "var", "std_mean", "var_mean")},
    **{n: (("dim", _I + "|tensor"), ("keepdim", _B)) for n in ("max", "min")},
    **{n: (("dim", _DS + "?"), ("keepdim", _B)) for n in ("amax", "amin", "all", "any")},
    **{n: (("dim", _I + "?"), ("keepdim", _B)) for n in ("argmax", "argmin", "aminmax")},
    "logsumexp": (("dim", _DS), ("keepdim", _B)),
    **{n: (("dim", _I), ("dtype", _DT)) for n in ("softmax", "log_softmax", "cumsum",
                                                    "cumprod")},
    "cummax": (("dim", _I),), "cummin": (("dim", _I),),
    **{n: (("dim", _I), ("keepdim", _B)) for n in ("median", "nanmedian", "mode")},
    "kthvalue": (("k", _I), ("dim", _I), ("keepdim", _B)),
    "squeeze": (("dim", _DS),), "count_nonzero": (("dim", _DS + "?"),),
    "sort": (("dim", _I), ("descending", _ANY)), "argsort": (("dim", _I), ("descending", _ANY)),
    "topk": (("k", _I), ("dim", _I), ("largest", _ANY), ("sorted", _ANY)),
    "roll": (("shifts", _DS), ("dims", _DS + "?")),
    "movedim": (("source", _DS + "-overload"), ("destination", _DS + "-overload")),
    "split": (("split_size", _DS + "-overload"), ("dim", _I)),
    "unflatten": (("dim", _I), ("sizes", _DS + "|list")),
    # sizes and strides: one sequence of ints ("|list": a single int is refused too)
    "as_strided": (("size", _DS + "|list"), ("stride", _DS + "|list"),
                   ("storage_offset", _I + "?")),
    **{n: (("split_sizes", _DS + "|list"), ("dim", _I)) for n in (
        "split_with_sizes", "unsafe_split_with_sizes")},
    "unsafe_split": (("split_size", _I), ("dim", _I)),
    **{n: (("indices", _DS),) for n in ("hsplit", "vsplit", "dsplit")},
    "tensor_split": (("indices", _DS + "|tensor"), ("dim", _I)),
    "diff": (("n", _I), ("dim", _I), ("prepend", _ANY), ("append", _ANY)),
    "unique": (("sorted", _ANY), ("return_inverse", _ANY), ("return_counts", _ANY),
               ("dim", _I + "?")),
    "norm": (("p", _ANY), ("dim", _DS + "?"), ("keepdim", _B), ("dtype", _DT)),
}
# the ``*_copy`` functions whose parameters are their view's (torchlike/_ops/view_copies.py)
_OPERANDS.update({n + "_copy": _OPERANDS[n] for n in (
    "transpose", "select", "unsqueeze", "diagonal", "unbind", "as_strided", "split_with_sizes",
    "squeeze")})
_OPERANDS.update({"unfold_copy": (("dimension", _I), ("size", _I), ("step", _I)),
                  "slice_copy": (("dim", _I), ("start", _I + "?"), ("end", _I + "?"),
                                 ("step", _I))})
# rows whose refusals are torch's "received an invalid combination of arguments" (its
# overloads), but for a bool argument ("keepdim ... must be bool") and a list of dims whose
# later element is refused ("failed to unpack"); the name and the arguments torch's message
# shows, where torch's Python calls another native (``unique_dim``; ``split`` shows ``self``)
_OVERLOADED = frozenset({"sum", "mean", "prod", "std", "var", "std_mean", "var_mean", "max",
                         "min", "all", "any", "squeeze", "count_nonzero", "sort", "argsort",
                         "movedim", "split", "hsplit", "vsplit", "dsplit", "tensor_split",
                         "squeeze_copy"})
_NATIVE = {"unique": ("unique_dim", {"dim": 2}),      # (its positions there, by name)
           "norm": ("linalg_vector_norm", {"dim": 3, "keepdim": 4})}
# the forms whose keepdim is refused with the overloads' message: the functions', and (the
# second set) the methods' too
_KEEPDIM_COMBINED = frozenset({"mean", "max", "min", "all", "any"})
_KEEPDIM_COMBINED_METHOD = frozenset({"all", "any"})
_SHOWS_SELF = frozenset({"split"})
_DIMS_KINDS = frozenset({_DS, _B, _DT, _ANY, _I})
# the function's first argument where it is not a Tensor-only ``input`` (``_tensor_first``)
_FIRST = {"add": _N, "sub": _N, "mul": _N, "div": _N, "where": _OT}
# functions whose Tensor parameters are all Tensors or all numbers (torch's overloads)
_ALIKE = frozenset({"clamp", "clip"})


def alias(fn, name):
    """``fn`` under another of torch's names (``subtract`` for ``sub``): the same function,
    whose argument errors name the alias, as torch's do."""
    return operands_checked(fn, name)


def _refused(error, name, method, args, kwargs):
    """A call of ``torchlike.<name>`` (``Tensor.<name>`` for a ``method``) refusing an argument:
    given to the overrides among its arguments (``torchlike.overrides``: an object that is not
    a Tensor and defines ``__torch_function__``), else ``error`` raised."""
    from .. import overrides
    if overrides.overriding(args, kwargs):
        if method:
            from .._tensor import Tensor
            return overrides.dispatch(getattr(Tensor, name), args, kwargs,
                                      "torch.Tensor." + name)
        import torchlike
        return overrides.dispatch(getattr(torchlike, name), args, kwargs, "torch." + name)
    raise error


def operands_checked(fn, name, method=False):
    """``fn`` raising torch's TypeError where a Tensor parameter of ``name`` (``_OPERANDS``)
    gets something torch's argument parser refuses; ``fn`` itself for the others. ``method``:
    the Tensor method (positions and the arguments listed count from after ``self``)."""
    base = name[:-1] if name.endswith("_") and name not in _OPERANDS else name
    spec = (method and _OPERANDS.get("Tensor." + base)) or _OPERANDS.get(base)
    if spec is None:
        return fn
    first = None if method else _FIRST.get(base)
    alike = base in _ALIKE
    if first is not None:
        spec = (("input", first),) + spec
    fn = getattr(fn, "_operands_of", fn)       # (a function's check, declared as a method)
    if base in _OVERLOADED or all(k.split("-")[0].split("|")[0].rstrip("?") in _DIMS_KINDS
                                  for _p, k in spec):
        return _dims_checked(fn, name, base, spec, method)
    import functools
    import numbers

    import jax
    import numpy as np
    from .._tensor import Tensor, _type_name
    if spec[0][1].startswith(_IS):
        return _ints_checked(fn, name, spec[0][0], method, spec[0][1].endswith("overload"))
    tensors = (Tensor, jax.Array)             # (jax's arrays: interop)
    numbers_ = (Tensor, jax.Array, numbers.Number, np.generic)
    where = {p: i for i, (p, _k) in enumerate(spec)}
    def int_or_tensor(a):
        return isinstance(a, Tensor) or _int_like(a)

    def scalar(a):
        # (torch's Scalar: a number, or a 0-dim tensor that does not require grad)
        return isinstance(a, Tensor) and a.ndim == 0 and not a.requires_grad or \
            not isinstance(a, Tensor) and isinstance(a, numbers_)
    takes = tuple(int_or_tensor if k == _OI else scalar if k == _S else
                  (lambda a, t=numbers_ if k.rstrip("?") in (_N, _O) else tensors:
                   isinstance(a, t)) for _p, k in spec)
    none_ok = tuple(k.endswith("?") for _p, k in spec)
    # (an op with overloads refuses any argument with the overloads' message)
    overload = (any(k.startswith(_O) for _p, k in spec),) * len(spec)
    want = tuple("Number" if k == _S else "Tensor" for _p, k in spec)
    skip = 0 if first is not None else 1      # (the arguments before the first checked one)
    n = len(spec)
    # the classes each parameter takes without a test (a Tensor, a Python number where the
    # kind takes one): most calls' arguments, checked by one set lookup
    plain = frozenset((bool, int, float, complex))
    passes = tuple((plain if k == _S else {int, Tensor} if k == _OI else
                    plain | {Tensor} if k.rstrip("?") in (_N, _O) else {Tensor})
                   for _p, k in spec)

    def refuse(args, kwargs, i, keyword):
        if overload[i]:
            return TypeError(f"{name}() received an invalid combination of arguments - got "
                             f"({_got(args[1 if method else 0:], kwargs)}), but expected one "
                             f"of:")
        p, v = spec[i][0], (kwargs[spec[i][0]] if keyword else args[i + skip])
        at = "" if keyword else f" (position {i + skip + (0 if method else 1)})"
        return TypeError(f"{name}(): argument '{p}'{at} must be {want[i]}, not "
                         f"{_type_name(v)}")

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        for i in range(min(len(args) - skip, n)):
            a = args[i + skip]
            if a.__class__ not in passes[i] and not takes[i](a) and not (
                    a is None and none_ok[i]):
                return _refused(refuse(args, kwargs, i, False), name, method, args, kwargs)
        if kwargs:
            for k, a in kwargs.items():
                i = where.get(k)
                if i is not None and a.__class__ not in passes[i] and \
                        not takes[i](a) and not (a is None and none_ok[i]):
                    return _refused(refuse(args, kwargs, i, True), name, method, args, kwargs)
        if alike:
            given = [a for a in (*args[skip:skip + n], *(kwargs.get(p) for p, _k in spec))
                     if a is not None]
            if 0 < sum(isinstance(a, Tensor) for a in given) < len(given):
                if any(isinstance(a, Tensor) and a.ndim for a in given):
                    raise refuse(args, kwargs, 0, False)
                # (torch's number overload takes a 0-dim tensor as its number)
                args = args[:skip] + tuple(a.item() if isinstance(a, Tensor) else a
                                           for a in args[skip:])
                kwargs = {k: a.item() if k in where and isinstance(a, Tensor) else a
                          for k, a in kwargs.items()}
        return fn(*args, **kwargs)
    checked._operands_of = fn
    checked._operands_name = name
    return checked


def _int_like(v, bools=False):
    """An int as torch's argument parser takes one: a Python or numpy integer (a bool only in
    a list of ints, ``bools``), or an integer tensor of one element."""
    c = v.__class__
    if c is int:
        return True
    if c is bool:
        return bools
    import numpy as np

    from .. import _dtype as D
    from .._tensor import Tensor
    if isinstance(v, (bool, np.bool_)):
        return bools
    if isinstance(v, (int, np.integer)):
        return True
    if isinstance(v, Tensor):
        d = v.dtype
        return not (d.is_floating_point or d.is_complex or d is D.bool) and v.numel() == 1
    return False


class _Unmatched:
    """No argument's class: an argument of a kind with no fast pass (a sequence) is checked."""


def _dims_checked(fn, name, base, spec, method):
    """``fn`` (a reduction, a dim-taking function) raising torch's TypeError where an argument
    of ``spec`` (``_OPERANDS``) is of a type torch's parser refuses (a float or bool dim, a
    non-bool keepdim, a non-dtype dtype). A Python int (a bool for keepdim) passes on the first
    test."""
    import functools

    from .. import _dtype as D
    from .._tensor import Tensor, _type_name
    overloaded = base in _OVERLOADED
    label, positions = _NATIVE.get(base, (name, None))
    keep_combined = base in (_KEEPDIM_COMBINED_METHOD if method else _KEEPDIM_COMBINED)
    same_kind = base == "movedim"       # (source and destination: both ints or both lists)
    shows = 0 if base in _SHOWS_SELF or not method else 1     # (the arguments shown)
    skip = 1
    where = {p: i for i, (p, _k) in enumerate(spec)}
    kinds = tuple(k for _p, k in spec)
    fast = tuple(bool if k.startswith(_B) else type(None) if k == _DT else None if k == _ANY
                 else _Unmatched if k.startswith(_DS + "|list") else int for k in kinds)
    n = len(spec)

    tname = _type_name      # (a Tensor's is "Tensor")

    def combination(args, kwargs):
        got = [tname(a) for a in args[shows:]]
        got = ", ".join(got + [f"{k}={tname(a)}" for k, a in kwargs.items()]) if got else \
            "".join(f"{k}={tname(a)}, " for k, a in kwargs.items())
        return TypeError(f"{name}() received an invalid combination of arguments - got "
                         f"({got}), but expected one of:")

    def problem(kind, v):
        """None where ``v`` is taken; else what torch says: (message, is it the overloads')."""
        if v is None and kind.endswith("?"):
            return None
        kind = kind.rstrip("?")
        every = kind.endswith("-overload")
        kind = kind.replace("-overload", "")
        over = overloaded or every
        if kind.startswith(_B):
            if isinstance(v, bool):
                return None
            return f"must be bool, not {tname(v)}", every or keep_combined
        if kind == _DT:
            if v is None or isinstance(v, D.dtype):
                return None
            return f"must be torch.dtype, not {tname(v)}", over
        if kind.startswith(_I):
            if _int_like(v) or (kind == _I + "|tensor" and isinstance(v, Tensor)):
                return None
            return f"must be int, not {tname(v)}", over
        if kind.startswith(_DS):
            if kind == _DS + "|tensor" and isinstance(v, Tensor):
                return None
            if (_int_like(v) and kind != _DS + "|list") or (
                    kind == _DS + "|bool" and isinstance(v, bool)):
                return None
            if isinstance(v, bool) and positions:       # (torch's Python lists it: [True])
                v = [v]
            if isinstance(v, (tuple, list)):
                if v and not _int_like(v[0]):
                    return (f"must be tuple of ints, but found element of type "
                            f"{tname(v[0])} at pos 0"), over
                for i, e in enumerate(v):
                    if not _int_like(e, bools=True):
                        return (f"failed to unpack the object at pos {i + 1} with error "
                                f"\"type must be tuple of ints,but got {tname(e)}\""), every
                return None
            return f"must be tuple of ints, not {tname(v)}", over
        return None

    def refuse(args, kwargs, i, keyword, message):
        text, combined = message
        if combined:
            return combination(args, kwargs)
        p = spec[i][0]
        if text.startswith("failed"):
            return TypeError(f"{label}(): argument '{p}' {text}")
        at = "" if keyword else f" (position {i + (1 if method else 2)})"
        if positions is not None:       # (torch's Python passes them on by position)
            at = f" (position {positions[p]})" if p in positions else ""
        return TypeError(f"{label}(): argument '{p}'{at} {text}")

    import numpy as np

    native = base not in _PYTHON_DEFINED     # (torch's parser reads a numpy integer as int)

    def as_int(kind, v):
        """An integer tensor taken as a dim, or (by torch's parser) a numpy integer, is passed
        on as its int."""
        if native and isinstance(v, np.integer) or isinstance(v, Tensor) and not kind.endswith(
                "|tensor"):
            return int(v)
        return v

    reads = base in _READS      # (torch's Python reads an attribute of ``input`` first)
    stable = _STABLE_OVERLOADS.get(base)
    if stable is not None:
        stable = stable[1] if method else stable[0]

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        if reads and args and not isinstance(args[0], Tensor):
            return fn(*args, **kwargs)
        if stable is not None and "stable" in kwargs and len(args) > 1:
            # (``stable`` takes the overload whose dim and descending are keywords)
            error = _overload_error(name, stable, args[1:] if method else args, kwargs)
            if error is not None:
                raise error
        for i in range(min(len(args) - skip, n)):
            a = args[i + skip]
            if a.__class__ is not fast[i] and fast[i] is not None:
                message = problem(kinds[i], a)
                if message is not None:
                    raise refuse(args, kwargs, i, False, message)
                b = as_int(kinds[i], a)
                if b is not a:
                    args = args[:i + skip] + (b,) + args[i + skip + 1:]
        if kwargs:
            for k, a in kwargs.items():
                i = where.get(k)
                if i is not None and a.__class__ is not fast[i] and fast[i] is not None:
                    message = problem(kinds[i], a)
                    if message is not None:
                        raise refuse(args, kwargs, i, True, message)
                    kwargs[k] = as_int(kinds[i], a)
        if same_kind and len(args) > 2 and isinstance(args[1], (tuple, list)) != isinstance(
                args[2], (tuple, list)):
            raise combination(args, kwargs)
        return fn(*args, **kwargs)
    checked._operands_of = fn
    checked._operands_name = name
    return checked


def _ints_checked(fn, name, param, method, overloaded):
    """``fn`` whose arguments after ``self``/``input`` are one size (``x.view(2, 3)``,
    ``x.view((2, 3))``): torch's TypeErrors where an element is not an int."""
    import functools

    from .. import _dtype as D
    from .._tensor import _type_name

    tname = _type_name      # (a Tensor's is "Tensor")

    def unpack_error(i, v):
        return TypeError(f"{name}(): argument '{param}' failed to unpack the object at pos "
                         f"{i + 1} with error \"type must be tuple of ints,but got {tname(v)}\"")

    def combination(args, keyword=False):
        got = f"{param}={tname(args[0])}, " if keyword else ", ".join(tname(a) for a in args)
        return TypeError(f"{name}() received an invalid combination of arguments - got "
                         f"({got}), but expected one of:")
    pos = 1 if method else 2

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        if not kwargs:
            for v in args[1:]:
                if v.__class__ is not int:
                    break
            else:
                return fn(*args)        # (ints spread over the arguments: every call's form)
        rest = args[1:]
        keyword = not rest and param in kwargs
        if keyword:                             # (the size by keyword: ``x.view(size=(6,))``)
            kwargs = dict(kwargs)
            rest = (kwargs.pop(param),)
            args = (*args, *rest)
        if len(rest) == 1:
            seq = rest[0]
            if isinstance(seq, (tuple, list)):
                if seq and not _int_like(seq[0]):
                    if overloaded:
                        raise combination(rest, keyword)
                    if keyword:     # (torch's parser then names the sequence's own type)
                        raise TypeError(f"{name}(): argument '{param}' must be tuple of ints, "
                                        f"not {tname(seq)}")
                    raise TypeError(f"{name}(): argument '{param}' (position {pos}) must be "
                                    f"tuple of ints, but found element of type {tname(seq[0])} "
                                    f"at pos 0")
                for i, v in enumerate(seq):
                    if not _int_like(v, bools=True):
                        raise unpack_error(i, v)
            elif not _int_like(seq) and not (overloaded and isinstance(seq, D.dtype)):
                if overloaded:
                    raise combination(rest, keyword)
                raise TypeError(f"{name}(): argument '{param}' (position {pos}) must be tuple "
                                f"of ints, not {tname(seq)}")
        elif rest:
            if not _int_like(rest[0]):
                if overloaded:
                    raise combination(rest, keyword)
                raise TypeError(f"{name}() takes 1 positional argument but {len(rest)} were "
                                f"given")
            for i, v in enumerate(rest):
                if not _int_like(v, bools=True):
                    raise unpack_error(i, v)
        return fn(*args, **kwargs)
    checked._operands_of = fn
    checked._operands_name = name
    return checked


# torch's functions whose ``input`` may be a Python number: with any ``other``, or (the second
# set) only when ``other`` is a Tensor; the others raise TypeError for anything but a Tensor
# there (probed against torch 2.13)
_NUMBERS_TOO = frozenset({"add", "sub", "subtract", "mul", "multiply", "div", "divide",
                          "true_divide", "floor_divide"})
_SCALAR_INPUT = frozenset({"pow", "remainder", "float_power", "xlogy", "bitwise_and",
                           "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                           "bitwise_right_shift", "bucketize"})
# (of those, the ones whose Number-first overload takes no ``out``)
_SCALAR_INPUT_NO_OUT = _SCALAR_INPUT - {"pow", "float_power", "xlogy"}


def _tensor_first(fn, name):
    """``fn`` raising torch's TypeError when its first argument, ``input``, is not a Tensor
    (``torch.exp(2.0)`` raises; computing a value there would be a silent difference). Methods
    keep ``fn`` itself: their ``self`` is a Tensor."""
    import functools
    import inspect
    if name in _NUMBERS_TOO:
        return fn
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return fn
    if not params or params[0].name != "input" or params[0].kind not in (
            params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
        return fn
    from .. import _registry
    from .._tensor import _type_name, no_attribute, not_a_tensor
    from ..overrides import _overrides

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        if args:
            x = args[0]
        elif "input" in kwargs:
            x = kwargs["input"]
        else:
            return fn(*args, **kwargs)
        if not isinstance(x, _registry._Tensor):
            if _overrides(x):           # (a Tensor-like object takes the call over)
                return _refused(not_a_tensor(name, x), name, False, args, kwargs)
            if reads is not None:       # (torch's Python code reads a Tensor attribute first)
                raise no_attribute(x, reads)
            if scalar_input:
                other = args[1] if len(args) > 1 else kwargs.get("other", kwargs.get(
                    "exponent", kwargs.get("boundaries")))
                if isinstance(other, _registry._Tensor):
                    if kwargs.get("out") is None or name not in _SCALAR_INPUT_NO_OUT:
                        return fn(*args, **kwargs)
                    # (torch's Number-first overload has no ``out``)
                    raise TypeError(f"{name}() received an invalid combination of arguments - "
                                    f"got ({_got(args, dict(reversed(kwargs.items())))}), but "
                                    f"expected one of:")
                raise TypeError(f"{name}() received an invalid combination of arguments - got "
                                f"({', '.join(_type_name(a) for a in args)}), but expected a "
                                f"Tensor as 'input' or as the second argument")
            # (torch's one-argument repeat_interleave names its argument 'repeats')
            label = "repeats" if name == "repeat_interleave" and len(args) == 1 else "input"
            raise not_a_tensor(_NATIVE_NAMES.get(name, name), x, label)
        return fn(*args, **kwargs)
    scalar_input = name in _SCALAR_INPUT
    reads = _READS.get(name)
    _CHECKED.append(name)
    return checked


_CHECKED = []       # the functions whose ``input`` must be a Tensor (or, see above, a number)
_NATIVE_NAMES = {"unique": "_unique2"}      # torch's native that refuses it, where renamed
_READS = {"norm": "layout"}     # torch's Python reads this attribute of ``input`` first

# torch's functions defined outside the op families' declarations (views, complex parts,
# linear algebra, splits, statistics) whose ``input`` must be a Tensor too (probed against
# torch 2.13; computing a value there was a silent difference): ``torchlike/__init__.py``
# checks them with ``refuse_non_tensors``
REFUSING = ("adjoint", "binary_cross_entropy_with_logits", "bincount", "clone", "combinations",
            "conj", "count_nonzero", "detach", "diagonal_scatter", "dist", "dsplit", "equal",
            "feature_dropout", "feature_dropout_", "fill", "flip", "gradient", "group_norm",
            "histogramdd", "hsplit", "imag", "is_distributed", "istft", "log_softmax", "logdet",
            "pinverse", "poisson", "real", "resolve_conj", "rsub", "softmax", "squeeze",
            "std_mean", "tile", "trace", "unique", "unique_consecutive", "var_mean",
            "view_as_complex", "view_as_real", "vsplit")


def refuse_non_tensors(namespace):
    """Check ``REFUSING``'s functions in ``namespace`` (torchlike's) with ``_tensor_first``, and
    the Tensor parameters of every function of ``_OPERANDS`` there (``operands_checked``)."""
    for name in REFUSING:
        fn = namespace.get(name)
        if fn is not None and name not in _CHECKED:
            namespace[name] = _tensor_first(fn, name)
    for name in _OPERANDS:
        fn = namespace.get(name)
        if callable(fn) and getattr(fn, "_operands_name", None) != name:
            # (an alias shares its function's object: its check names the alias)
            namespace[name] = operands_checked(fn, name)
    for name, param in _ONE_SEQUENCE.items():
        namespace[name] = _one_sequence(namespace[name], name, param)


# functions whose size or dims are one sequence at the top level (``torch.reshape(x, (6,))``;
# the method spreads them: ``x.reshape(6)``); torchlike's own modules call them with an int
_ONE_SEQUENCE = {"reshape": "shape", "permute": "dims", "tile": "dims", "broadcast_to": "size",
                 "flip": "dims"}


def _one_sequence(fn, name, param):
    """``torchlike.<name>`` refusing a size that is not one sequence, as torch's function."""
    import functools

    from .._tensor import _type_name

    @functools.wraps(fn)
    def top(input, *rest, **kwargs):
        if len(rest) > 1:
            raise TypeError(f"{name}() takes 2 positional arguments but {len(rest) + 1} were "
                            f"given")
        keyword = not rest and param in kwargs
        if keyword:                                 # (the size by keyword: ``shape=(6,)``)
            rest = (kwargs.pop(param),)
        v = rest[0] if rest else ()
        if not isinstance(v, (tuple, list)):
            at = "" if keyword else " (position 2)"
            raise TypeError(f"{name}(): argument '{param}'{at} must be tuple of ints, not "
                            f"{_type_name(v)}")
        return fn(input, *rest, **kwargs)
    return top


def method(*names):
    """Decorator: ``fn`` is ``Tensor.<name>`` for each of ``names`` (a method with its own
    signature, or one torch has no function for)."""
    def deco(fn):
        for n in names:
            _declare("Tensor", n, fn, fn.__module__ if hasattr(fn, "__module__") else None)
        return fn
    return deco


def methods(**attrs):
    """Declare ``Tensor.<name> = obj`` for each pair (methods, properties, aliases)."""
    import sys
    where = sys._getframe(1).f_globals.get("__name__")
    for n, obj in attrs.items():
        _declare("Tensor", n, obj, where)


def inplace_methods(**fns):
    """Declare ``Tensor.<name>_`` as the in-place form of each function (``inplace_of``)."""
    import sys
    where = sys._getframe(1).f_globals.get("__name__")
    for n, f in fns.items():
        _declare("Tensor", n + "_", inplace_of(f, n), where)


def toplevel(*names):
    """Declare ``torchlike.<name>`` as ``Tensor.<name>`` (torch's top-level in-place forms)."""
    import sys
    where = sys._getframe(1).f_globals.get("__name__")
    for n in names:
        _declare("torch", n, _resolve(n), where)


def declared():
    """``[(owner, name, where)]`` of every declaration, in declaration order."""
    return [(o, n, w) for o, n, _obj, w in _DECLARED]


# ------------------------------------------------------------------ nn ops at the top level

def _nn_toplevel(F):
    """torch's top-level (and ``torch.Tensor``) forms of nn ops, as adapters onto ``F``."""
    def softmax(input, dim, dtype=None):
        return F.softmax(input, dim, dtype=dtype)

    def log_softmax(input, dim, dtype=None):
        return F.log_softmax(input, dim, dtype=dtype)

    # the dropouts (and their in-place forms, torch.dropout_(input, p, train)) check p as
    # ATen does: a RuntimeError, also when not training
    def _p(p):
        if not 0 <= p <= 1:
            raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")
        return p

    def dropout(input, p, train):
        return F.dropout(input, _p(p), training=train)

    def alpha_dropout(input, p, train):
        return F.alpha_dropout(input, _p(p), training=train)

    def feature_alpha_dropout(input, p, train):
        return F.feature_alpha_dropout(input, _p(p), training=train)

    def _feature(input, p, train, inplace):
        _p(p)
        return F.dropout2d(input, p, training=train, inplace=inplace) if input.dim() == 4 else \
            F.dropout1d(input, p, training=train, inplace=inplace) if input.dim() == 3 else \
            F.dropout3d(input, p, training=train, inplace=inplace)

    def feature_dropout(input, p, train):
        return _feature(input, p, train, False)

    def dropout_(input, p, train):
        return F.dropout(input, _p(p), training=train, inplace=True)

    def alpha_dropout_(input, p, train):
        return F.alpha_dropout(input, _p(p), training=train, inplace=True)

    def feature_alpha_dropout_(input, p, train):
        return F.feature_alpha_dropout(input, _p(p), training=train, inplace=True)

    def feature_dropout_(input, p, train):
        return _feature(input, p, train, True)

    def embedding_renorm_(input, indices, max_norm, norm_type):
        if indices.dtype.is_floating_point or indices.dtype.is_complex:
            raise RuntimeError(f"Expected tensor for argument #2 'indices' to have one of the "
                               f"following scalar types: Long, Int; but got "
                               f"{indices.type()} instead (while checking arguments for "
                               f"embedding_renorm_)")
        F._embedding_renorm_(input, indices, float(max_norm), float(norm_type))
        return input

    def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05,
                   cudnn_enable=True):
        return F.layer_norm(input, normalized_shape, weight, bias, eps)

    def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
        return F.group_norm(input, num_groups, weight, bias, eps)

    def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                   cudnn_enabled):
        return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                            eps)

    def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                      eps, cudnn_enabled):
        return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                               momentum, eps)

    def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
        return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                           scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)

    def threshold(input, threshold, value):
        return F.threshold(input, threshold, value)

    def rms_norm(input, normalized_shape, weight=None, eps=None):
        return F.rms_norm(input, normalized_shape, weight, eps)

    def adaptive_max_pool1d(input, output_size):
        return F.adaptive_max_pool1d(input, output_size, return_indices=True)

    def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                                ceil_mode=False):
        return F.max_pool1d(input, kernel_size, stride or None, padding, dilation,
                            ceil_mode=ceil_mode, return_indices=True)

    def _pool(fname):
        def pool(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
            return getattr(F, fname)(input, kernel_size, stride or None, padding, dilation,
                                     ceil_mode=ceil_mode)
        pool.__name__ = fname
        return pool

    def _avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False,
                    count_include_pad=True):
        return F.avg_pool1d(input, kernel_size, stride or None, padding, ceil_mode,
                            count_include_pad)

    def _same(name):
        return getattr(F, name, None)

    def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                    groups):
        n = weight.dim() - 2
        if n not in (1, 2, 3):
            raise RuntimeError(f"Expected 3D, 4D or 5D weight for convolution, got {weight.dim()}D")
        if transposed:
            return getattr(F, f"conv_transpose{n}d")(input, weight, bias, stride, padding,
                                                     output_padding, groups, dilation)
        return getattr(F, f"conv{n}d")(input, weight, bias, stride, padding, dilation, groups)

    # torch's top-level losses take the reduction as an enum (0 none, 1 mean, 2 sum), default 0
    red = {0: "none", 1: "mean", 2: "sum"}

    def _r(r):
        if r not in red:
            raise RuntimeError(f"{r} is not a valid value for reduction")
        return red[r]

    def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
        return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_r(reduction))

    def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
        return F.hinge_embedding_loss(input, target, margin, reduction=_r(reduction))

    def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
        return F.margin_ranking_loss(input1, input2, target, margin, reduction=_r(reduction))

    def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
                            reduction=0):
        return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                     reduction=_r(reduction))

    def kl_div(input, target, reduction=0, *, log_target=False):
        return F.kl_div(input, target, reduction=_r(reduction), log_target=log_target)

    def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                         reduction=0):
        return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_r(reduction),
                                                  pos_weight=pos_weight)

    def poisson_nll_loss(input, target, log_input, full, eps, reduction):
        return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                                  reduction=_r(reduction))

    def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
                 zero_infinity=False):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                          reduction=_r(reduction), zero_infinity=zero_infinity)

    table = dict(softmax=softmax, log_softmax=log_softmax, dropout=dropout,
                 alpha_dropout=alpha_dropout, feature_alpha_dropout=feature_alpha_dropout,
                 feature_dropout=feature_dropout,
                 dropout_=dropout_, alpha_dropout_=alpha_dropout_,
                 feature_alpha_dropout_=feature_alpha_dropout_, feature_dropout_=feature_dropout_,
                 embedding_renorm_=embedding_renorm_, layer_norm=layer_norm, group_norm=group_norm,
                 batch_norm=batch_norm, instance_norm=instance_norm, embedding=embedding,
                 threshold=threshold, rms_norm=rms_norm, adaptive_max_pool1d=adaptive_max_pool1d,
                 max_pool1d_with_indices=max_pool1d_with_indices,
                 max_pool1d=_pool("max_pool1d"), max_pool2d=_pool("max_pool2d"),
                 max_pool3d=_pool("max_pool3d"), avg_pool1d=_avg_pool1d,
                 cosine_embedding_loss=cosine_embedding_loss,
                 hinge_embedding_loss=hinge_embedding_loss,
                 margin_ranking_loss=margin_ranking_loss,
                 triplet_margin_loss=triplet_margin_loss, kl_div=kl_div,
                 binary_cross_entropy_with_logits=binary_cross_entropy_with_logits,
                 poisson_nll_loss=poisson_nll_loss, ctc_loss=ctc_loss, convolution=convolution)
    # the same signature at the top level as in nn.functional
    for n in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "adaptive_avg_pool1d", "bilinear", "celu", "selu", "prelu",
              "rrelu", "celu_", "selu_", "rrelu_", "threshold_", "hardshrink", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
              "pairwise_distance", "cosine_similarity", "pdist", "native_channel_shuffle"):
        f = _same(n)
        if f is not None:
            table[n] = f
    if getattr(F, "rms_norm", None) is None:
        del table["rms_norm"]
    return table


# methods torch has for nn ops (``x.softmax(dim)``); in-place forms for the activations
_NN_METHODS = ("softmax", "log_softmax", "prelu", "hardshrink", "selu", "celu", "rrelu",
               "threshold")
# of those top-level forms, the ones torch gives out=
_NN_OUT = ("softmax", "log_softmax", "threshold", "hardshrink")
# nn.functional's functions that take out= in torch (nn.functional defines them; declared here)
_F_OUT = ("avg_pool2d", "avg_pool3d", "gelu", "hardshrink", "linear", "logsigmoid", "normalize",
          "softplus", "softshrink")


def _declare_nn(ns):
    """torch's top-level and Tensor forms of the nn ops, and out= for nn.functional."""
    F = ns.nn.functional
    for n in _F_OUT:
        setattr(F, n, out_form(getattr(F, n), n))
    for n, f in _nn_toplevel(F).items():
        f = out_form(f, n) if n in _NN_OUT else f
        _declare("torch", n, f, __name__)
        if n in _NN_METHODS:
            _declare("Tensor", n, f, __name__)


# Python operators that torch defines on Tensor: dunder -> (Tensor method, reflected)
# Python's operators: dunder -> (name, how). "method": Tensor.<name> itself; "reflected":
# ``ns.<name>(other, self)``; "function": ``ns.<name>(self, other)`` (a function Tensor has no
# method for). Operators with their own code (``__rtruediv__``, ``__pos__``) are in DUNDER_FNS.
DUNDERS = {
    **{f"__{d}__": (m, "method") for d, m in (
        ("add", "add"), ("radd", "add"), ("sub", "sub"), ("mul", "mul"), ("rmul", "mul"),
        ("truediv", "div"), ("floordiv", "floor_divide"), ("mod", "remainder"), ("pow", "pow"),
        ("neg", "neg"), ("abs", "abs"),
        ("eq", "eq"), ("ne", "ne"), ("lt", "lt"), ("le", "le"), ("gt", "gt"), ("ge", "ge"),
        ("and", "bitwise_and"), ("rand", "bitwise_and"), ("or", "bitwise_or"),
        ("ror", "bitwise_or"), ("xor", "bitwise_xor"), ("rxor", "bitwise_xor"),
        ("lshift", "bitwise_left_shift"), ("rshift", "bitwise_right_shift"),
        ("iadd", "add_"), ("isub", "sub_"), ("imul", "mul_"), ("itruediv", "div_"),
        ("ipow", "pow_"), ("ilshift", "bitwise_left_shift_"),
        ("irshift", "bitwise_right_shift_"), ("iand", "bitwise_and_"), ("ior", "bitwise_or_"),
        ("ixor", "bitwise_xor_"), ("ifloordiv", "floor_divide_"), ("imod", "remainder_"),
        ("matmul", "matmul"))},
    **{f"__r{d}__": (m, "reflected") for d, m in (
        ("floordiv", "floor_divide"), ("mod", "remainder"), ("pow", "pow"),
        ("lshift", "bitwise_left_shift"), ("rshift", "bitwise_right_shift"))},
    "__rsub__": ("rsub", "function"),
}


def _rtruediv(self, other):
    # torch: other / self == self.reciprocal() * other (grad_fn MulBackward0)
    return self.reciprocal() * other


def _pos(self):
    # torch's ``+x`` is ``torch.positive``: the tensor itself, refused for bool
    from . import unary
    return unary.positive(self)


def _invert(self):
    # torch's ``~x`` is ``bitwise_not`` for integer and bool tensors, a TypeError for others
    if self.dtype.is_floating_point or self.dtype.is_complex:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return self.bitwise_not()


DUNDER_FNS = {"__rtruediv__": _rtruediv, "__pos__": _pos, "__invert__": _invert}


def _has(cls, n):
    return getattr(cls, n, None) is not None


def _write_declared(ns, Tensor):
    """Write every declaration; a name declared twice (or already set on Tensor or the
    namespace) raises."""
    owners = {"Tensor": Tensor, "torch": ns}
    seen = {}
    # Tensor's attributes first: a top-level in-place form is resolved from Tensor.<n>_
    for owner, n, obj, where in sorted(_DECLARED, key=lambda d: d[0] != "Tensor"):
        o = owners[owner]
        if (owner, n) in seen or n in vars(o):
            first = seen.get((owner, n), "the class body or a module's __all__")
            raise RuntimeError(f"{owner}.{n} is declared twice: in {first} and in {where}")
        seen[owner, n] = where
        if isinstance(obj, _resolve):
            obj = getattr(Tensor, obj.name)
        elif callable(obj) and not isinstance(obj, type):
            method = owner == "Tensor"
            refuse = method and _takes_out(obj)     # (as in torch, methods take no out=)
            obj = numpy_names(operands_checked(obj, n, method=method), n)
            if refuse:
                obj = _refusing_out(obj, n)
        setattr(o, n, obj)


_UNARY = frozenset({"__neg__", "__abs__", "__invert__", "__pos__"})


def _operand_checked(f, operands, method=None, dunder=None):
    """Binary operator ``f``, returning NotImplemented for an operand torch's operators do
    not take (a list, a tuple, None, a string): Python then raises its TypeError, or, for
    ``==`` and ``!=``, compares identities (``x == None`` is False, as in torch); so does
    a three-argument ``pow(t, e, mod)``. An operand that takes over calls
    (``torchlike.overrides``) gets the call of ``Tensor.<method>``, as in torch (``t * s``
    is ``Tensor.mul``); NotImplemented where it declines."""
    common = frozenset((*operands[:1], bool, int, float, complex))   # (no ABC check)

    def op(self, other, *mod):
        if mod:
            return NotImplemented
        if other.__class__ in common or isinstance(other, operands):
            return f(self, other)
        if method is not None:
            from .. import overrides
            if overrides._overrides(other):
                # (all declining: NotImplemented, and Python raises its TypeError, as torch's)
                return overrides.handled(getattr(type(self), method), (other,), (self, other),
                                         None)[0]
        return NotImplemented
    op.__name__ = dunder or getattr(f, "__name__", "op")
    op.__qualname__ = f"Tensor.{op.__name__}"
    op.__wrapped__ = f
    return op


def _numpy_names_at_top(ns):
    """numpy's argument names for the top-level functions the op modules export themselves
    (``from torchlike._ops.<family> import *``; declared ones get them where declared)."""
    import sys
    for n in dir(ns):
        f = getattr(ns, n)
        if getattr(f, "__module__", "").startswith("torchlike._ops.") and \
                f.__class__.__name__ == "function":
            g = numpy_names(f, n)
            if g is not f:
                # (and in its family's module: torchlike.<name> is the family's function)
                for owner in (ns, sys.modules[f.__module__]):
                    for k, v in list(vars(owner).items()):
                        if v is f:
                            setattr(owner, k, g)


def bind(ns, Tensor):
    """Write the surface: every declaration, then Python's operators (``DUNDERS``)."""
    import numbers

    import jax
    import numpy as np
    _declare_nn(ns)
    _write_declared(ns, Tensor)
    _numpy_names_at_top(ns)
    # what torch's operators take: tensors and numbers (numpy's arrays go on to numpy, which
    # computes the op on the tensor's values and gives its result back as a tensor:
    # ``Tensor.__array_wrap__``; == and != take them; jax's arrays are taken for interop)
    operands = (Tensor, numbers.Number, np.generic, jax.Array)
    for d, (m, how) in DUNDERS.items():
        if d in Tensor.__dict__:
            raise RuntimeError(f"Tensor.{d} is declared twice: in the operator table and "
                               f"elsewhere")
        if how == "method":
            f = getattr(Tensor, m)
        elif how == "reflected":
            f = (lambda g: lambda self, other: g(other, self))(getattr(ns, m))
        else:
            f = getattr(ns, m)
        f = getattr(f, "_operands_of", f)     # (the operator checks its operand itself)
        # (torch gives an operand that takes over calls the method: ``Tensor.mul`` for ``*``)
        setattr(Tensor, d, f if d in _UNARY else _operand_checked(
            f, operands + (np.ndarray,) if d in ("__eq__", "__ne__") else operands,
            m if how != "reflected" and _has(Tensor, m) else d, d))
    for d, f in DUNDER_FNS.items():
        setattr(Tensor, d, f if d in _UNARY else _operand_checked(f, operands, d, d))
