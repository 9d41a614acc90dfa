"""torch dtype objects, their jnp counterparts, the default dtype and torch's type promotion.

JAX runs with 64-bit types enabled (``jax_enable_x64``) from ``import torchlike`` on, so that
int64 and float64 exist as in torch. See README "Dtype policy".
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

__all__ = [
    "dtype", "float32", "float", "float64", "double", "float16", "half", "bfloat16",
    "int8", "int16", "int32", "int", "int64", "long", "uint8", "bool", "complex64",
    "cfloat", "complex128", "cdouble", "get_default_dtype", "set_default_dtype",
    "promote_types",
]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A torch dtype: ``torchlike.float32`` and friends. Compared by identity, like torch's."""

    __slots__ = ("name", "np", "category", "itemsize", "is_signed", "_rank")

    def __init__(self, name, np_dtype, category, rank):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category
        self.itemsize = self.np.itemsize
        self.is_signed = name not in ("uint8", "bool")
        self._rank = rank

    @property
    def is_floating_point(self):
        return self.category == _FLOAT

    @property
    def is_complex(self):
        return self.category == _COMPLEX

    def to_real(self):
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self):
        return {float64: complex128, complex128: complex128}.get(self, complex64)

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


def _by_name(name):
    return _BY_NAME[name]


bool = dtype("bool", np.bool_, _BOOL, 0)
uint8 = dtype("uint8", np.uint8, _INT, 1)
int8 = dtype("int8", np.int8, _INT, 1)
int16 = dtype("int16", np.int16, _INT, 2)
int32 = dtype("int32", np.int32, _INT, 3)
int64 = dtype("int64", np.int64, _INT, 4)
float16 = dtype("float16", np.float16, _FLOAT, 1)
bfloat16 = dtype("bfloat16", jnp.bfloat16, _FLOAT, 1)
float32 = dtype("float32", np.float32, _FLOAT, 2)
float64 = dtype("float64", np.float64, _FLOAT, 3)
complex64 = dtype("complex64", np.complex64, _COMPLEX, 2)
complex128 = dtype("complex128", np.complex128, _COMPLEX, 3)

# torch's aliases
float, double, half = float32, float64, float16
int, long, short = int32, int64, int16
cfloat, cdouble = complex64, complex128

# torch's legacy type names (``torch.LongTensor``, "result type Float can't be cast ..."): the
# one map of them
LEGACY_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
                "int64": "Long", "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
                "float64": "Double", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def legacy_name(d):
    """torch's legacy name of dtype ``d``: ``legacy_name(float32) == "Float"``."""
    return LEGACY_NAMES[d.name]


_ALL = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
        complex64, complex128)
_BY_NAME = {d.name: d for d in _ALL}
_BY_NP = {d.np: d for d in _ALL}


def from_jax(np_dtype) -> dtype:
    """The torchlike dtype of a jax/numpy dtype."""
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        d = np.dtype(np_dtype)
        if d in _BY_NP:
            return _BY_NP[d]
        raise TypeError(f"torchlike has no dtype for {d!r}") from None


def to_dtype(d) -> dtype:
    """Accept a torchlike dtype, a numpy/jax dtype, a Python type or a dtype name."""
    if isinstance(d, dtype):
        return d
    if d is _pyfloat:
        return _default[0]
    if d is _pyint:
        return int64
    if d is _pybool:
        return bool
    if d is _pycomplex:
        return _default[0].to_complex()
    if isinstance(d, str):
        name = d.replace("torch.", "")
        aliases = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
                   "int": "int32", "short": "int16", "cfloat": "complex64",
                   "cdouble": "complex128"}
        return _BY_NAME[aliases.get(name, name)]
    return from_jax(np.dtype(d))


import builtins as _b  # noqa: E402

_pyfloat, _pyint, _pybool, _pycomplex = _b.float, _b.int, _b.bool, _b.complex

# ---------------------------------------------------------------- default dtype

_default = [float32]


def get_default_dtype() -> dtype:
    """The dtype Python floats become (``float32`` unless changed)."""
    return _default[0]


def set_default_dtype(d) -> None:
    """Set the dtype Python floats become; only float32 and float64 (and half types) are allowed."""
    d = to_dtype(d)
    if not d.is_floating_point:
        raise TypeError(
            f"only floating-point types are supported as the default type (got {d!r})")
    _default[0] = d


# ---------------------------------------------------------------- promotion

def _promote2(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a.category == _BOOL:
        return b
    if b.category == _BOOL:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == _COMPLEX and lo.category == _FLOAT:
            return complex128 if (lo is float64 or hi is complex128) else hi
        return hi
    if a.category == _INT:
        if uint8 in (a, b):
            other = b if a is uint8 else a
            return int16 if other in (int8, int16) else other
        return a if a._rank > b._rank else b
    if a.category == _FLOAT:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a._rank > b._rank else b
    return a if a._rank > b._rank else b


def promote_types(type1, type2) -> dtype:
    """torch.promote_types: the smallest dtype both can be cast to, by torch's table."""
    return _promote2(to_dtype(type1), to_dtype(type2))


def _combine(higher, lower):
    # torch's combine_categories: a lower-priority participant only matters if it raises the
    # category (bool < int < float < complex).
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.category == _COMPLEX:
        return higher
    if lower.category == _COMPLEX:
        return higher.to_complex() if higher.category == _FLOAT else lower
    if higher.category == _FLOAT:
        return higher
    if higher.category == _BOOL or lower.category == _FLOAT:
        return _promote2(higher, lower)
    return higher


def scalar_dtype(x) -> dtype:
    """The dtype a Python scalar participates with in promotion (a 'wrapped number')."""
    if isinstance(x, _pybool):
        return bool
    if isinstance(x, _pyint):
        return int64
    if isinstance(x, _pyfloat):
        return _default[0]
    if isinstance(x, _pycomplex):
        return _default[0].to_complex()
    raise TypeError(f"unsupported scalar {type(x).__name__}")


def result_type_of(dims, zeros, scalars) -> dtype:
    """torch's result type from the dtypes of dimensioned tensors, 0-dim tensors and scalars."""
    dim_r = zero_r = wrap_r = None
    for d in dims:
        dim_r = d if dim_r is None else _promote2(dim_r, d)
    for d in zeros:
        zero_r = d if zero_r is None else _promote2(zero_r, d)
    for d in scalars:
        wrap_r = d if wrap_r is None else _promote2(wrap_r, d)
    return _combine(dim_r, _combine(zero_r, wrap_r))
