"""torch's barebones unsigned dtypes (uint16, uint32, uint64) at the op level.

torch 2.13 compiles only some kernels for these dtypes: views, copies and conversions, cat,
indexing by ints and slices, ``==``/``!=``, ``where``, ``*``, ``&``/``|``/``^``, sorting,
unique, the float-valued maths, integer sums. Every other op raises
``NotImplementedError: "<kernel>" not implemented for 'UInt16'`` (the kernel name is torch's,
per op). jax computes all of them, so without this check a torchlike op would return a value
where torch raises.

Once a barebones dtype is first used (``torchlike._dtype.activate_barebones``), ``check`` sees
every op call (``torchlike.autograd._apply_hooks``): an op with an operand of a barebones
dtype runs only if it is in ``ALLOWED``; otherwise it raises torch's error with the kernel
name of ``KERNELS`` (probed against torch 2.13), or the op's own name for an op not probed.
"""
from __future__ import annotations

from . import _dtype as D
from .autograd import _apply_hooks

# registry ops torch computes for barebones operands (of a promoting op: for a barebones
# result dtype; one whose operands promote to a floating type always runs)
ALLOWED = frozenset({
    # views, copies, conversions, shape ops
    "view", "view_dtype", "reshape_copy", "as_strided", "expand", "permute", "t", "transpose",
    "squeeze", "unsqueeze", "select", "slice", "split", "unbind", "unfold", "diagonal",
    "diag_embed", "clone", "copy", "copy_slices", "to_copy", "fill", "zero", "cat", "stack",
    "tile", "repeat_interleave", "roll", "pad", "getitem", "index_put", "where", "flip",
    "rot90", "alias_gather", "set_", "layout_",
    # elementwise kernels torch compiles for them
    "mul", "eq", "ne", "bitwise_and", "bitwise_or", "bitwise_xor", "isnan", "isfinite",
    "isinf", "isposinf", "isneginf", "isreal", "signbit", "isclose", "nan_to_num", "round",
    "floor", "ceil", "trunc",
    # reductions and sorting (integer sums accumulate in int64)
    "sum", "nansum", "prod", "cumsum", "all", "sort", "argsort", "unique_values",
})

# registry op name -> torch's kernel name in its "not implemented" error, or a function of the
# op's static arguments giving it
KERNELS = {
    "add": "add_stub", "sub": "add_stub", "rsub": "add_stub", "diff": "add_stub",
    "abs": "abs_cpu", "neg": "neg_cpu", "sign": "sign_cpu", "sgn": "sign_cpu", "pow": "pow",
    "square": "pow", "addcmul": "addcmul_cpu_out", "fmod": "fmod_cpu",
    "remainder": "remainder_cpu", "floor_divide": "div_floor_cpu",
    "div_mode": lambda kw: f"div_{kw.get('rounding_mode')}_cpu",
    "gcd": "gcd_cpu", "lcm": "lcm_cpu", "heaviside": "heaviside_cpu",
    "lt": "lt_cpu", "le": "le_cpu", "gt": "gt_cpu", "ge": "ge_cpu",
    "maximum": "maximum_cpu", "minimum": "minimum_cpu", "fmax": "fmax_cpu", "fmin": "fmin_cpu",
    "logical_and": "logical_and_cpu", "logical_or": "logical_or_cpu",
    "logical_xor": "logical_xor_cpu", "logical_not": "logical_not_cpu",
    "bitwise_not": "bitwise_not_cpu", "bitwise_left_shift": "lshift_cpu",
    "bitwise_right_shift": "rshift_cpu", "relu": "clamp_min_scalar_cpu",
    "clamp": lambda kw: ({"both": "clamp", "lo": "clamp_min", "hi": "clamp_max"}[kw["which"]]
                         + "_scalar_cpu") if kw.get("scalar") else
    {"both": "clamp_cpu", "lo": "maximum_cpu", "hi": "minimum_cpu"}[kw["which"]],
    "max_full": lambda kw: "max_all" if kw.get("largest", True) else "min_all",
    "max_dim": lambda kw: "max_cpu" if kw.get("largest", True) else "min_cpu",
    "amax": lambda kw: "max_values_cpu" if kw.get("largest", True) else "min_values_cpu",
    "argmax": lambda kw: "argmax_cpu" if kw.get("largest", True) else "argmin_cpu",
    "cummax": lambda kw: "cummax_cpu" if kw.get("largest", True) else "cummin_cpu",
    "median_full": "median_cpu", "nanmedian_full": "nanmedian_cpu", "mode": "mode_cpu",
    "kthvalue": "kthvalue_cpu", "topk": "topk_cpu", "histc": "aminmax_cpu",
    "logcumsumexp": "logcumsumexp_out_cpu", "count_nonzero": "nonzero_count_cpu",
    "nonzero": "nonzero_count_cpu", "nonzero_static": "nonzero_count_cpu",
    "bincount": "bincount_cpu", "searchsorted": "searchsorted_out_cpu",
    "isin": "isin_default_cpu", "tril": "tril", "triu": "triu", "masked_fill": "masked_fill",
    "gather": "scatter_gather_tensor_cpu", "scatter": "scatter_gather_tensor_cpu",
    "scatter_reduce": "scatter_gather_tensor_cpu",
    "take_along_dim": "scatter_gather_tensor_cpu", "take": "take_cpu", "put": "take_put_cpu",
    "index_select": "index_select",
    "index_add": lambda kw: {"add": "index_add_", "copy": "index_copy_cpu",
                             "fill": "index_fill_cpu"}.get(kw.get("mode"), "index_add_"),
    "matmul": lambda kw: {(1, 1): "dot", (2, 1): "addmv_impl_cpu"}.get(
        tuple(kw.get("ndims", ())), "addmm_impl_cpu_" if max(kw.get("ndims", (2,))) <= 2
        else "bmm"),
}

# reductions whose ``dtype=`` (the accumulation dtype) is barebones: torch's kernel names
_ACCUMULATE = {"sum": "sum_cpu", "nansum": "sum_cpu", "prod": "prod_out_cpu",
               "cumsum": lambda kw: "cumprod_out_cpu" if kw.get("prod") else "cumsum_out_cpu"}

_INDEX_ERROR = "tensors used as indices must be long, int, byte or bool tensors"


def _index_error(first):
    """An op whose operands from position ``first`` on are index tensors: torch's IndexError
    for a barebones one."""
    def check(args, static):
        if any(_bare(a) for a in args[first:]):
            return IndexError(_INDEX_ERROR)
    return check


def _index_dtype_error(message):
    def check(args, static):
        if len(args) > 1 and _bare(args[1]):
            return RuntimeError(message)
    return check


def _embedding(args, static):
    if _bare(args[0]):
        return RuntimeError(
            f"Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got CPU{D.legacy_name(args[0].dtype)}Type instead (while "
            f"checking arguments for embedding)")


def _flipped(shape, dims):
    """torch's flip of barebones data runs only as a copy of whole rows: it raises when the
    innermost dimension of size > 1 is among ``dims``."""
    sizes = [i for i, n in enumerate(shape) if n > 1]
    return bool(sizes) and sizes[-1] in {d % len(shape) for d in dims}


def _flip(args, static):
    if _bare(args[0]) and _flipped(args[0].shape, static.get("dims") or ()):
        return not_implemented("flip_cpu", args[0].dtype)


def _rot90(args, static):
    # torch's rot90: k=1 flips dims[1], k=2 both, k=3 dims[0], then transposes
    d0, d1 = static["dims"]
    flips = {0: (), 1: (d1,), 2: (d0, d1), 3: (d0,)}[static["k"] % 4]
    if _bare(args[0]) and _flipped(args[0].shape, flips):
        return not_implemented("flip_cpu", args[0].dtype)


def _index_put(args, static):
    err = _index_error(2)(args, static)
    if err is None and static.get("advanced") and _bare(args[0]):
        err = not_implemented("index_put", args[0].dtype)
    return err


# ops whose errors depend on which operand is barebones (index tensors) or on the shapes
_SPECIAL = {
    "getitem": _index_error(1), "index_put": _index_put,
    "gather": _index_dtype_error("gather(): Expected dtype int32/int64 for index"),
    "index_select": _index_dtype_error("index_select(): Expected dtype int32 or int64 for "
                                       "index"),
    "embedding": _embedding, "flip": _flip, "rot90": _rot90,
}

_NP = frozenset(d._np for d in D.BAREBONES)
_T = []


def _bare(a):
    return isinstance(a, _T[0]) and a._d.dtype in _NP


def not_implemented(kernel, dt):
    """torch's error for a kernel it does not compile for dtype ``dt``."""
    return NotImplementedError(f'"{kernel}" not implemented for \'{D.legacy_name(dt)}\'')


def require(kernel, *tensors):
    """Raise torch's error for ``kernel`` if one of ``tensors`` has a barebones dtype (for
    the functions whose registry op is shared with a kernel of another name)."""
    for t in tensors:
        if _T and _bare(t):
            raise not_implemented(kernel, t.dtype)


def check(op, args, static):
    """Raise torch's error for op ``op`` on a barebones operand it has no kernel for."""
    if static and static.get("dtype") in _NP and op.name in _ACCUMULATE:
        kernel = _ACCUMULATE[op.name]
        raise not_implemented(kernel(static) if callable(kernel) else kernel,
                              D.from_jax(static["dtype"]))
    bare = next((a for a in args if _bare(a)), None)
    if bare is None:
        return NotImplemented
    name = op.name
    special = _SPECIAL.get(name)
    if special is not None:
        err = special(args, static)
        if err is not None:
            raise err
    dt = bare.dtype
    if op.promote is not None:
        dt = _result_dtype(op, args)          # torch's promotion error comes first
        if dt not in D.BAREBONES:
            return NotImplemented
    if name in ALLOWED:
        return NotImplemented
    kernel = KERNELS.get(name, name)
    raise not_implemented(kernel(static) if callable(kernel) else kernel, dt)


def activate():
    from ._registry import _result_dtype
    from ._tensor import Tensor
    globals()["_result_dtype"] = _result_dtype
    _T.append(Tensor)
    _apply_hooks.install("barebones", check)
