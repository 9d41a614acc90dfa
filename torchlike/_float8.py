"""torch's float8 dtypes at the op level.

torch 2.13 compiles few kernels for float8_e4m3fn, float8_e5m2, float8_e4m3fnuz,
float8_e5m2fnuz and float8_e8m0fnu: views, copies and conversions, cat, indexing, ``==``/``!=``,
``where``, ``all``/``any``, ``isnan``, tensor-tensor ``mul``, ``abs`` and matrix products (not
for e8m0fnu). Every other op raises ``NotImplementedError: "<kernel>" not implemented for
'Float8_e4m3fn'`` (the kernel name is torch's, per op). jax computes all of them, so without
this check a torchlike op would return a value where torch raises.

Once a float8 dtype is first used (``torchlike._dtype.activate_float8``), ``check`` sees every
op call (``torchlike.autograd._apply_hooks``), as ``torchlike._barebones`` does for the
barebones unsigned types: an op with a float8 operand runs only if it is in ``ALLOWED``;
otherwise it raises torch's error with the kernel name of ``KERNELS`` (probed against torch
2.13), or the op's own name for an op not probed.
"""
from __future__ import annotations

from . import _barebones
from . import _dtype as D
from .autograd import _apply_hooks

# registry ops torch computes for float8 operands (see also ``_SPECIAL``)
ALLOWED = frozenset({
    # views, copies, conversions, shape ops
    "view", "view_dtype", "reshape_copy", "as_strided", "expand", "permute", "t", "transpose",
    "squeeze", "unsqueeze", "select", "slice", "split", "unbind", "unfold", "diagonal",
    "diag_embed", "clone", "copy", "copy_slices", "to_copy", "fill", "zero", "cat", "stack",
    "tile", "repeat_interleave", "roll", "pad", "getitem", "index_put", "where", "flip",
    "rot90", "alias_gather", "set_", "layout_", "index_select", "take", "isinf", "isfinite",
    # the kernels torch compiles for them
    "eq", "ne", "isnan", "all", "any", "mul", "abs", "matmul",
})
# allowed for the other float8 types, not for float8_e8m0fnu (and the reverse)
_NOT_E8M0 = frozenset({"abs", "matmul"})

KERNELS = {
    **_barebones.KERNELS,
    "mul_scalar": "mul_cpu_reduced_float", "div": "div_cpu", "div_mode": "div_cpu",
    "sigmoid": "sigmoid_cpu_reduced_float", "softmax": "softmax_kernel_impl",
    "log_softmax": "log_softmax_kernel_impl", "isinf": "isinf", "isfinite": "isfinite",
    "sort": "sorting_kernel_method_name", "argsort": "sorting_kernel_method_name",
    "unique_values": "unique", "sum": "sum_cpu", "nansum": "sum_cpu", "mean": "sum_cpu",
    "prod": "prod_out_cpu", "cumsum": lambda kw: "cumprod_out_cpu" if kw.get("prod") else
    "cumsum_out_cpu", "lerp": "lerp_kernel_scalar", "signbit": "signbit_cpu",
    "nan_to_num": "nan_to_num", "reciprocal": "reciprocal_cpu", "atan2": "atan2_cpu",
    "isclose": "mul_cpu_reduced_float", "nn_softmax": "softmax_kernel_impl",
    "nn_log_softmax": "log_softmax_kernel_impl", "bitwise_and": "bitwise_and_cpu",
    "bitwise_or": "bitwise_or_cpu", "bitwise_xor": "bitwise_xor_cpu",
    **{f: f"{f}_vml_cpu" for f in ("exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "floor",
                                   "ceil", "trunc", "round", "expm1", "log1p", "log2",
                                   "log10", "rsqrt", "asin", "acos", "atan", "sinh", "cosh")},
}


def _float8(a):
    return isinstance(a, _T[0]) and a._d.dtype in _NP


def _flip(args, static, dt):
    if _barebones._flipped(args[0].shape, static.get("dims") or ()):
        return "flip_cpu"


def _rot90(args, static, dt):
    # torch's rot90: k=1 flips dims[1], k=2 both, k=3 dims[0], then transposes
    d0, d1 = static["dims"]
    flips = {0: (), 1: (d1,), 2: (d0, d1), 3: (d0,)}[static["k"] % 4]
    if _barebones._flipped(args[0].shape, flips):
        return "flip_cpu"


def _mul(args, static, dt):
    # torch's tensor-tensor kernel takes float8; a Python scalar goes through another
    if not all(_float8(a) for a in args):
        return "mul_cpu_reduced_float"


def _matmul(args, static, dt):
    ndims = tuple(static.get("ndims", ()))
    if dt is D.float8_e8m0fnu or ndims != (2, 2):
        return KERNELS["matmul"](static)


def _index_put(args, static, dt):
    if static.get("advanced") and dt is D.float8_e8m0fnu:
        return "index_put"


def _std(args, static, dt):
    return RuntimeError(f"std_var_all: Unsupported dtype {D.legacy_name(dt)}")


def _pad(args, static, dt):
    if static.get("mode") == "constant":
        v = static.get("value")                         # (torch's ``float? value``)
        D.check_scalar(0.0 if v is None else float(v), dt)     # torch's overflow error


def _isinf(args, static, dt):
    if dt is not D.float8_e5m2:                 # (the one float8 type with infinities)
        return "isinf"


def _isfinite(args, static, dt):
    if dt is not D.float8_e5m2 and dt is not D.float8_e8m0fnu:
        return "isfinite"


# ops whose refusal depends on the arguments: a kernel name to refuse with, an exception, or
# None where the op runs
_SPECIAL = {"flip": _flip, "rot90": _rot90, "mul": _mul, "matmul": _matmul,
            "index_put": _index_put, "std": _std, "var": _std, "pad": _pad,
            "isinf": _isinf, "isfinite": _isfinite}


def _product(name, args, dt):
    """torch's float8 ``mul`` and 2-d ``matmul``: computed in float32 (a matrix product
    accumulates there) and rounded once, as ``.to()`` rounds (float8_e4m3fn saturates).
    The result records no autograd node (torch's does: DIFFERENCES.md)."""
    import jax.numpy as jnp
    if dt is D.float8_e8m0fnu:
        # powers of two: the exponents add (in float32 a product at or below 2**-127 is
        # rounded to the zero byte, one past 2**127 is inf, then NaN), computed on the bytes
        # since XLA's CPU arithmetic flushes float32's subnormals (2**-127 is one)
        ea, eb = (jnp.asarray(t._data).view(jnp.uint8).astype(jnp.int32) for t in args)
        e = jnp.clip(ea + eb - 127, 0, 255)
        e = jnp.where((ea == 255) | (eb == 255), 255, e)
        return _T[0]._make(e.astype(jnp.uint8).view(dt._np))
    a, b = (D._widen(t._data, t._d.dtype, jnp) for t in args)
    r = a * b if name == "mul" else jnp.matmul(a, b)
    return _T[0]._make(D._to_float8(r, dt._np, jnp))


def require(kernel, *tensors):
    """Raise torch's error for ``kernel`` if one of ``tensors`` has a float8 dtype (for the
    functions whose registry op is shared with a kernel torch has for float8)."""
    for t in tensors:
        if _T and _float8(t):
            raise _barebones.not_implemented(kernel, t.dtype)


def check(op, args, static):
    """Raise torch's error for op ``op`` on a float8 operand it has no kernel for."""
    f8 = next((a for a in args if _float8(a)), None)
    if f8 is None:
        return NotImplemented
    name = op.name
    dt = f8.dtype
    if op.promote is not None:
        dt = _result_dtype(op, args)          # torch's promotion error comes first
        if dt not in D.FLOAT8:
            return NotImplemented
    e8m0 = dt is D.float8_e8m0fnu
    special = _SPECIAL.get(name)
    if special is not None:
        err = special(args, static or {}, dt)
        if isinstance(err, Exception):
            raise err
        if err is not None:
            raise _barebones.not_implemented(err, dt)
        if name not in ALLOWED:
            return NotImplemented
    if name in ("mul", "matmul"):
        return _product(name, args, dt)
    if name == "isfinite" and e8m0:
        # torch's kernel for it tests nothing: true everywhere, NaN included
        import jax.numpy as jnp
        return _T[0]._make(jnp.ones(f8._d.shape, bool))
    if name in ALLOWED and not (e8m0 and name in _NOT_E8M0):
        return NotImplemented
    kernel = KERNELS.get(name, name)
    raise _barebones.not_implemented(kernel(static) if callable(kernel) else kernel, dt)


_NP = frozenset(D._FLOAT8_NP)
_T = []


def activate():
    from ._registry import _result_dtype
    from ._tensor import Tensor
    globals()["_result_dtype"] = _result_dtype
    _T.append(Tensor)
    _apply_hooks.install("float8", check)
