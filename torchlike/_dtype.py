"""torch dtype objects, their jnp counterparts, the default dtype and torch's type promotion.

JAX runs with 64-bit types enabled (``jax_enable_x64``) from ``import torchlike`` on, so that
int64 and float64 exist as in torch. See README "Dtype policy".
"""
from __future__ import annotations

import jax.numpy as jnp
import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "float32", "float", "float64", "double", "float16", "half", "bfloat16",
    "int8", "int16", "int32", "int", "int64", "long", "uint8", "uint16", "uint32", "uint64",
    "bool", "complex64",
    "cfloat", "complex128", "cdouble", "get_default_dtype", "set_default_dtype",
    "promote_types", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
    "float8_e8m0fnu", "complex32", "chalf", "float4_e2m1fn_x2", "bit", "bits8", "bits16",
    "bits1x8", "bits2x4", "bits4x2",
    *(f"uint{i}" for i in range(1, 8)), *(f"int{i}" for i in range(1, 8)),
]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


def c_type_format(tp_name):
    """A ``__format__`` as CPython's ``object.__format__`` for a C type named ``tp_name``
    (torch's ``torch.Size``, ``torch.dtype``, ``torch.return_types.max``, ...): ``str(self)``
    for an empty spec, else its TypeError, which names the type by ``tp_name``."""
    def __format__(self, spec):
        if spec:
            raise TypeError(f"unsupported format string passed to {tp_name}.__format__")
        return str(self)
    return __format__


class dtype:
    """A torch dtype: ``torchlike.float32`` and friends. Compared by identity, like torch's."""

    __slots__ = ("name", "np", "category", "itemsize", "is_signed", "_rank")

    def __init__(self, name, np_dtype, category, rank):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.category = category
        self.itemsize = self.np.itemsize
        self.is_signed = not (name == "bool" or name.startswith("uint"))
        self._rank = rank

    @property
    def is_floating_point(self):
        return self.category == _FLOAT

    @property
    def is_complex(self):
        return self.category == _COMPLEX

    def to_real(self):
        return {complex64: float32, complex128: float64, complex32: float16}.get(self, self)

    def to_complex(self):
        if self is complex32:
            return self
        if self in BAREBONES or self in FLOAT8 or self in UNBACKED:
            raise RuntimeError(f"Unknown Complex ScalarType for {legacy_name(self)}")
        return {float64: complex128, complex128: complex128}.get(self, complex64)

    def __repr__(self):
        return "torch." + self.name

    __format__ = c_type_format("torch.dtype")

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
# torch's "barebones" unsigned types: tensors of them exist, are created, converted, viewed,
# indexed, copied and compared for equality, while most of torch's kernels are not compiled
# for them (``torchlike._barebones`` raises torch's errors) and they promote only with
# themselves and with floating types


class _Barebones(dtype):
    """A barebones dtype: reading its numpy dtype (what every tensor of it is built from)
    switches on ``torchlike._barebones``' check of op calls, so programs that never use these
    dtypes do not pay for it."""

    __slots__ = ("_np",)

    def __init__(self, name, np_dtype, category, rank):
        self._np = np.dtype(np_dtype)
        self.name = name
        self.category = category
        self.itemsize = self._np.itemsize
        self.is_signed = False
        self._rank = rank

    @property
    def np(self):
        activate_barebones()
        return self._np


uint16 = _Barebones("uint16", np.uint16, _INT, 2)
uint32 = _Barebones("uint32", np.uint32, _INT, 3)
uint64 = _Barebones("uint64", np.uint64, _INT, 4)
BAREBONES = frozenset((uint16, uint32, uint64))

# torch's float8 types: tensors of them are created, converted (``cast``: torch's saturating
# and NaN rules), viewed, copied, indexed and compared for equality, while most kernels are not
# compiled for them (``torchlike._float8`` raises torch's errors); they promote only with
# themselves


class _Float8(_Barebones):
    """A float8 dtype: reading its numpy dtype switches on ``torchlike._float8``'s check of
    op calls (as the barebones dtypes do theirs)."""

    __slots__ = ()

    def __init__(self, name, np_dtype, signed=True):
        super().__init__(name, np_dtype, _FLOAT, 0)
        self.is_signed = signed

    @property
    def np(self):
        activate_float8()
        return self._np


float8_e4m3fn = _Float8("float8_e4m3fn", ml_dtypes.float8_e4m3fn)
float8_e5m2 = _Float8("float8_e5m2", ml_dtypes.float8_e5m2)
float8_e4m3fnuz = _Float8("float8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz)
float8_e5m2fnuz = _Float8("float8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz)
float8_e8m0fnu = _Float8("float8_e8m0fnu", ml_dtypes.float8_e8m0fnu, signed=False)
FLOAT8 = frozenset((float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz,
                    float8_e8m0fnu))
_FLOAT8_NP = {d._np: d for d in FLOAT8}


class _Unbacked(dtype):
    """A torch dtype jax has no arrays of (complex32, the sub-byte and bits types, packed
    float4): the dtype object, its attributes and its promotion are torch's; making a tensor
    of it raises (DIFFERENCES.md, "dtypes without jax arrays")."""

    __slots__ = ("_signed",)

    def __init__(self, name, category, itemsize, signed, rank=0):
        self.name = name
        self.category = category
        self.itemsize = itemsize
        self._signed = signed
        self._rank = rank

    @property
    def is_signed(self):
        if self._signed is None:
            raise RuntimeError("Bits types are undefined")
        return self._signed

    @property
    def np(self):
        raise NotImplementedError(
            f"torchlike: tensors of dtype {self!r} are not supported: jax has no {self.name} "
            f"arrays (see DIFFERENCES.md)")


_BITS = -1       # the bits types' category: neither int nor float, promoting with nothing
complex32 = _Unbacked("complex32", _COMPLEX, 4, True, rank=1)
float4_e2m1fn_x2 = _Unbacked("float4_e2m1fn_x2", _FLOAT, 1, True)
for _i in range(1, 8):
    globals()[f"uint{_i}"] = _Unbacked(f"uint{_i}", _INT, 1, False)
    globals()[f"int{_i}"] = _Unbacked(f"int{_i}", _INT, 1, True)
bits8 = _Unbacked("bits8", _BITS, 1, None)
bits16 = _Unbacked("bits16", _BITS, 2, None)
bits1x8 = _Unbacked("bits1x8", _BITS, 1, None)
bits2x4 = _Unbacked("bits2x4", _BITS, 1, None)
bits4x2 = _Unbacked("bits4x2", _BITS, 1, None)
_SUB_UINT = frozenset(globals()[f"uint{_i}"] for _i in range(1, 8))
_SUB_INT = frozenset(globals()[f"int{_i}"] for _i in range(1, 8))
_BITS_TYPES = frozenset((bits8, bits16, bits1x8, bits2x4, bits4x2))
UNBACKED = frozenset((complex32, float4_e2m1fn_x2, *_SUB_UINT, *_SUB_INT, *_BITS_TYPES))

# torch's aliases
float, double, half = float32, float64, float16
int, long, short = int32, int64, int16
cfloat, cdouble = complex64, complex128
chalf, bit = complex32, uint1

# torch's legacy type names (``torch.LongTensor``, "result type Float can't be cast ..."): the
# one map of them
LEGACY_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
                "int64": "Long", "float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
                "float64": "Double", "complex64": "ComplexFloat", "complex128": "ComplexDouble",
                "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
                "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
                "float8_e4m3fnuz": "Float8_e4m3fnuz", "float8_e5m2fnuz": "Float8_e5m2fnuz",
                "float8_e8m0fnu": "Float8_e8m0fnu", "complex32": "ComplexHalf",
                "float4_e2m1fn_x2": "Float4_e2m1fn_x2", "bits8": "Bits8", "bits16": "Bits16",
                "bits1x8": "Bits1x8", "bits2x4": "Bits2x4", "bits4x2": "Bits4x2",
                **{f"uint{i}": f"UInt{i}" for i in range(1, 8)},
                **{f"int{i}": f"Int{i}" for i in range(1, 8)}}


def legacy_name(d):
    """torch's legacy name of dtype ``d``: ``legacy_name(float32) == "Float"``."""
    return LEGACY_NAMES[d.name]


_ALL = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
        complex64, complex128, uint16, uint32, uint64, *FLOAT8)
_BY_NAME = {d.name: d for d in (*_ALL, *UNBACKED)}
# the barebones and float8 dtypes join _BY_NP when they are first used (activate_*)
_BY_NP = {d.np: d for d in _ALL if d not in BAREBONES and d not in FLOAT8}
_BAREBONES_NP = {d._np: d for d in BAREBONES}
_barebones_on = [False]
_float8_on = [False]


def activate_float8():
    """Switch on the op check of the float8 dtypes (``torchlike._float8``), once."""
    if not _float8_on[0]:
        _float8_on[0] = True
        from . import _float8
        _float8.activate()
        _BY_NP.update(_FLOAT8_NP)


def activate_for(np_dtype):
    """Switch on the op check a tensor of numpy dtype ``np_dtype`` needs (a barebones or
    float8 dtype), for the ways a tensor is made from an outside array (numpy, JAX, DLPack)."""
    if np_dtype in _BAREBONES_NP:
        activate_barebones()
    elif np_dtype in _FLOAT8_NP:
        activate_float8()


def activate_barebones():
    """Switch on the op check of the barebones dtypes (``torchlike._barebones``), once."""
    if not _barebones_on[0]:
        _barebones_on[0] = True
        from . import _barebones
        _barebones.activate()
        _BY_NP.update(_BAREBONES_NP)


def from_jax(np_dtype) -> dtype:
    """The torchlike dtype of a jax/numpy dtype."""
    try:
        return _BY_NP[np_dtype]
    except KeyError:
        d = np.dtype(np_dtype)
        if d in _BY_NP:
            return _BY_NP[d]
        if d in _BAREBONES_NP:
            activate_barebones()
            return _BAREBONES_NP[d]
        if d in _FLOAT8_NP:
            activate_float8()
            return _FLOAT8_NP[d]
        raise TypeError(f"torchlike has no dtype for {d!r}") from None


def to_dtype(d) -> dtype:
    """Accept a torchlike dtype, a numpy/jax dtype, a Python type or a dtype name."""
    if isinstance(d, dtype):
        if isinstance(d, _Barebones):
            d.np                        # (switches its op check on: a tensor of it may follow)
        return d
    if d is _pyfloat:                   # a Python float is a C double, as in torch
        return float64
    if d is _pyint:
        return int64
    if d is _pybool:
        return bool
    if d is _pycomplex:
        return complex128
    if isinstance(d, str):
        name = d.replace("torch.", "")
        aliases = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
                   "int": "int32", "short": "int16", "cfloat": "complex64",
                   "cdouble": "complex128", "chalf": "complex32", "bit": "uint1"}
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
            "only floating-point types are supported as the default type")
    _default[0] = d


# ---------------------------------------------------------------- promotion

_SUB_BYTE_UNSIGNED = BAREBONES | _SUB_UINT     # torch's "barebones unsigned" types
# torch's promotion table has no row for these: its lookup fails an internal assert
_NO_ROW = _SUB_INT | {float4_e2m1fn_x2}
# complex32 with a real type: the complex type of float16 promoted with it
_COMPLEX_OF = {float16: complex32, float32: complex64, float64: complex128}


def _promote2(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a in UNBACKED or b in UNBACKED or a in FLOAT8 or b in FLOAT8:
        if a in _BITS_TYPES or b in _BITS_TYPES:
            raise RuntimeError(f"Promotion from {legacy_name(a)} and {legacy_name(b)} is "
                               f"unsupported.")
        if a in FLOAT8 or b in FLOAT8:
            raise RuntimeError(f"Promotion for Float8 Types is not supported, attempted to "
                               f"promote {legacy_name(a)} and {legacy_name(b)}")
    if (a in _SUB_BYTE_UNSIGNED or b in _SUB_BYTE_UNSIGNED) and \
            not (a.category == _FLOAT or b.category == _FLOAT):
        raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {legacy_name(a)} and {legacy_name(b)}")
    if a in _SUB_BYTE_UNSIGNED or b in _SUB_BYTE_UNSIGNED:
        return a if a.category == _FLOAT else b
    if a in _NO_ROW or b in _NO_ROW:
        ix, line = ("ix_a", 103) if a in _NO_ROW else ("ix_b", 105)
        raise RuntimeError(f'{ix} != -1 INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/c10/'
                           f'core/ScalarType.cpp":{line}, please report a bug to PyTorch. ')
    if complex32 in (a, b):
        other = b if a is complex32 else a
        if other.category == _FLOAT:
            return _COMPLEX_OF[_promote2(float16, other)]
        return complex32 if other.category != _COMPLEX else other
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


# ---------------------------------------------------------------- checked scalar conversion
#
# torch converts a Python number to a tensor's dtype with c10's ``checked_convert``: a value
# outside the dtype's range raises "value cannot be converted to type ... without overflow"
# instead of wrapping. These helpers read Python scalars only (host values: no device sync).

_pyinf = _b.float("inf")
_INT_RANGE = {"uint8": (0, 255), "int8": (-128, 127), "int16": (-2 ** 15, 2 ** 15 - 1),
              "int32": (-2 ** 31, 2 ** 31 - 1), "int64": (-2 ** 63, 2 ** 63 - 1),
              "uint16": (0, 2 ** 16 - 1), "uint32": (0, 2 ** 32 - 1), "uint64": (0, 2 ** 64 - 1)}
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
              "float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308,
              "complex64": 3.4028234663852886e38, "complex128": 1.7976931348623157e308,
              "float8_e4m3fn": 448.0, "float8_e5m2": 57344.0, "float8_e4m3fnuz": 240.0,
              "float8_e5m2fnuz": 57344.0, "float8_e8m0fnu": 1.7014118346046923e38}
# float types whose lowest value is not -max (e8m0fnu's is 2**-127), and those without inf
# (an inf overflows them)
_FLOAT_LOWEST = {"float8_e8m0fnu": 2.0 ** -127}
_NO_INF = frozenset({"float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu"})
# the C++ type names torch's Scalar conversions print (full, fill_, scalar_tensor, ...)
CPP_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
             "int64": "int64_t", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
             "float32": "float", "float64": "double", "complex64": "c10::complex<float>",
             "complex128": "c10::complex<double>", "bool": "bool", "uint16": "uint16_t",
             "uint32": "uint32_t", "uint64": "uint64_t",
             **{d.name: "c10::" + LEGACY_NAMES[d.name] for d in FLOAT8}}


def _real_overflows(v, name):
    """c10's ``overflows<To>(v)`` for a real Python int or float ``v`` and dtype ``name``."""
    r = _INT_RANGE.get(name)
    if r is not None:
        lo, hi = r
        if isinstance(v, _pyint):
            if lo == 0:
                # torch lets negative values wrap for unsigned types: -255 ... 255
                return v > hi or -v > hi
            return v < lo or v > hi
        if v != v:
            return True
        # C++ compares against the limit converted to double
        return v < _pyfloat(lo) or v > _pyfloat(hi)
    m = _FLOAT_MAX[name]
    lo = _FLOAT_LOWEST.get(name, -m) if isinstance(v, _pyfloat) else -m
    if isinstance(v, _pyfloat):
        if v != v:
            return False
        if v in (_pyinf, -_pyinf):
            return name in _NO_INF
    return v > m or v < lo


def python_scalar(v):
    """``v`` as a Python bool/int/float/complex (numpy scalars unwrapped); others unchanged."""
    if isinstance(v, (_pybool, _pyint, _pyfloat, _pycomplex)):
        return v
    if isinstance(v, np.generic):
        return v.item()
    return v


def parser_scalar(v):
    """A numpy scalar as torch's argument parser reads a Scalar: an integer as an int, a
    complex128 (a Python complex) as a complex, any other (bool, floating, complex64: its real
    part, with numpy's ComplexWarning) as a float; other values unchanged."""
    if isinstance(v, np.generic):
        if isinstance(v, np.integer):
            return _pyint(v)
        if isinstance(v, _pycomplex):
            return _pycomplex(v)
        return _pyfloat(v)
    return v


def parse_scalar(v):
    """torch's Python number -> Scalar parse: an int outside [-2**63, 2**64) raises its
    OverflowError (ints in [2**63, 2**64) are held as unsigned, as torch does)."""
    if isinstance(v, _pyint) and not isinstance(v, _pybool):
        if v < -2 ** 63:
            raise OverflowError("can't convert negative int to unsigned")
        if v >= 2 ** 64:
            raise OverflowError("int too big to convert")
    return v


def scalar_overflows(v, d, numel=2):
    """True where torch's checked conversion of Python scalar ``v`` to dtype ``d`` fails.

    ``numel``: torch fills one-element half/bfloat16 tensors through double (so only a complex
    value with an imaginary part overflows there).
    """
    name = d.name
    if name == "bool" or isinstance(v, _pybool):
        return False
    if numel == 1 and (name in ("float16", "bfloat16") or d in FLOAT8):
        name = "float64"
    if isinstance(v, _pycomplex):
        if d.category != _COMPLEX and v.imag != 0:
            return True
        if d.category == _COMPLEX:
            return _real_overflows(v.real, name) or _real_overflows(v.imag, name)
        return _real_overflows(v.real, name)
    if isinstance(v, (_pyint, _pyfloat)):
        return _real_overflows(v, name)
    return False


def check_scalar(v, d, numel=2):
    """Raise torch's error when Python scalar ``v`` does not fit dtype ``d`` (full, fill_,
    scalar_tensor, full_like, new_full); returns ``v`` as a plain Python number."""
    v = parse_scalar(python_scalar(v))
    if scalar_overflows(v, d, numel):
        name = "float64" if (numel == 1 and (d.name in ("float16", "bfloat16") or d in FLOAT8)) \
            else d.name
        raise RuntimeError(f"value cannot be converted to type {CPP_NAMES[name]} without "
                           f"overflow")
    return v


def host_scalar(v, d):
    """A numpy scalar of dtype ``d`` holding Python number ``v`` as torch stores it (ints wrap
    modulo 2**bits where torch allows it, floats truncate toward zero, complex keeps its real
    part for real dtypes, out-of-range floats become inf)."""
    with np.errstate(all="ignore"):
        if d.category == _BOOL:
            return np.bool_(_b.bool(v))
        if isinstance(v, _pycomplex) and d.category != _COMPLEX:
            v = v.real
        if isinstance(v, _pyint) and not isinstance(v, _pybool):
            if d.category == _INT:
                return np.array(v % (1 << 64), np.uint64).astype(d.np)
            return _host_cast(np.array(_pyfloat(v), np.float64), d)
        return _host_cast(np.array(v), d)


def _host_cast(a, d):
    return cast(a, d.np, np) if d in FLOAT8 else a.astype(d.np)


def cast(x, np_dtype, xp=jnp):
    """``x`` (a jax array, or a numpy array with ``xp=np``) converted to ``np_dtype`` as
    torch's CPU kernels convert (``to``, ``type``, ``long()``..., ``copy_``).

    Float (and complex, through its real part) to integer follows C's truncating conversion as
    the x86 instructions torch compiles to give it: the value is truncated toward zero and
    converted to int64 (for int64, uint8, uint32 and uint64) or to int32 (for int32, int16,
    uint16 and int8); what does not fit that type (nan, +-inf, large magnitudes) becomes its
    most negative value; the narrow types then keep the low bits (wrap modulo 2**bits); uint64
    also holds [2**63, 2**64) exactly. So ``-1.5 -> uint8`` is 255,
    ``300.0 -> uint8`` is 44 and ``nan -> int32`` is -2**31. XLA's conversion saturates
    instead, hence this function. Everything else is a plain ``astype``.
    """
    target = np.dtype(np_dtype)
    src = np.dtype(x.dtype)
    if src in _FLOAT8_NP or target in _FLOAT8_NP:
        if src == target:
            return x.astype(target)
        wide = x
        x, src = _from_float8(x, src, target, xp)
        if target in _FLOAT8_NP:
            return _to_float8(x, target, xp, wide)
    if src.kind == "c" and target.kind not in "cb":
        x, src = xp.real(x), np.dtype(xp.real(x).dtype)     # (the imaginary part discarded)
    if target.kind not in "iu" or (src.kind not in "fc" and src != jnp.bfloat16):
        return x.astype(target)
    if x.dtype in (np.float16, jnp.bfloat16):
        x = x.astype(np.float32)
    wide64 = target in (np.int64, np.uint8, np.uint32, np.uint64)
    wide, lim = (np.int64, 2.0 ** 63) if wide64 else (np.int32, 2.0 ** 31)
    t = xp.trunc(x)
    fits = (t >= -lim) & (t < lim)
    with np.errstate(all="ignore"):
        w = xp.where(fits, t, xp.asarray(-lim, x.dtype)).astype(wide)
        if target != np.uint64:
            return w.astype(target)
        # uint64 converts [2**63, 2**64) exactly; past it (and +inf) it gives 0, and nan and
        # values below -2**63 give 2**63 (the wrapped int64 minimum)
        w = w.astype(target)
        high = (t >= lim) & (t < 2 * lim)
        h = xp.where(high, t - lim, xp.asarray(0, x.dtype)).astype(np.int64).astype(target)
        h = h + np.uint64(2 ** 63)
        return xp.where(high, h, xp.where(t >= 2 * lim, np.uint64(0), w))


# ---------------------------------------------------------------- float8 conversions
#
# torch converts to a float8 type through float32 (so a double is rounded twice), rounding to
# nearest even, with its own rules where ml_dtypes and XLA differ: float8_e4m3fn saturates
# (values past +-448 and +-inf become +-448), a NaN becomes the type's NaN with the sign kept
# (0x7f / 0xff: for e5m2, whose NaN payloads ml_dtypes keeps), and float8_e8m0fnu keeps the
# exponent alone (the sign is dropped, 0 and values below 2**-127 become 2**-127), rounding
# by the guard, round and sticky bits of float32's mantissa. Out of a float8 type, values
# widen to float32 exactly; to an integer type, the NaN of the fnuz types and of e8m0fnu
# becomes 0 (the other NaNs and infs follow ``cast``'s float rules).

_E4M3FN_NP, _E5M2_NP, _E8M0_NP = (np.dtype(ml_dtypes.float8_e4m3fn),
                                  np.dtype(ml_dtypes.float8_e5m2),
                                  np.dtype(ml_dtypes.float8_e8m0fnu))
_NAN_TO_ZERO = frozenset(np.dtype(t) for t in (ml_dtypes.float8_e4m3fnuz,
                                               ml_dtypes.float8_e5m2fnuz,
                                               ml_dtypes.float8_e8m0fnu))


_SIGNED_FLOATS = frozenset(np.dtype(t) for t in (np.float16, jnp.bfloat16, np.float32,
                                                   np.float64))


def _from_float8(x, src, target, xp):
    """``x`` of any dtype as float32 when float8 is involved (a float8 source widens exactly;
    a complex one keeps its real part), with the NaN rule of integer targets."""
    if src.kind == "c":
        x = xp.real(x)
    if src.kind in "biu" and target not in _FLOAT8_NP:
        return x, src
    if src in _FLOAT8_NP:
        # (float32's signalling NaN 0x7f800001 becomes float16's quiet NaN in torch's
        # conversion, numpy's keeps it signalling: quiet it first for narrower targets)
        x = _widen(x, src, xp, target.itemsize < 4)
    else:
        x = x.astype(np.float32)
    if src in _NAN_TO_ZERO and target.kind in "iu":
        x = xp.where(xp.isnan(x), xp.zeros((), np.float32), x)
    if target == np.dtype(jnp.bfloat16):
        # torch's float -> bfloat16 makes every NaN its positive quiet NaN
        x = xp.where(xp.isnan(x), _bits(np.uint32(0x7FC00000), np.float32, xp), x)
    return x, np.dtype(np.float32)


def _widen(x, src, xp, quiet=False):
    """float8 ``x`` as float32, NaNs as torch widens them: e4m3fn and e5m2 keep the sign and
    move the mantissa into float32's top mantissa bits (quiet bit set); the NaN of the fnuz
    types and of e8m0fnu becomes 0x7f800001."""
    b = _bits(x, np.uint8, xp).astype(np.uint32)
    if src == _E4M3FN_NP:
        nan = (b & 0x7F) == 0x7F
        nan_bits = (b & 0x80) << 24 | 0x7FC00000 | (b & 0x7) << 20
    elif src == _E5M2_NP:
        nan = (b & 0x7F) > 0x7C
        nan_bits = (b & 0x80) << 24 | 0x7FC00000 | (b & 0x3) << 21
    else:
        nan = b == (0xFF if src == _E8M0_NP else 0x80)
        nan_bits = xp.full(b.shape, 0x7FC00000 if quiet else 0x7F800001, np.uint32)
    return xp.where(nan, _bits(nan_bits.astype(np.uint32), np.float32, xp), x.astype(np.float32))


def _to_float8(x, target, xp, source=None, saturate=True):
    """float32 ``x`` as float8 ``target``, as torch converts it (see above). ``source``: the
    value before its conversion to float32 (a NaN's sign and float64's float32 subnormals are
    read from it: XLA's CPU conversions drop both); ``saturate=False``: float8_e4m3fn's
    overflow becomes NaN, as torch's arithmetic kernels round their float results."""
    with np.errstate(all="ignore"):
        if target == _E8M0_NP:
            b = _bits(x, np.uint32, xp)
            exp = (b >> 23) & 0xFF
            guard = (b & 0x400000) != 0
            up = guard & (((b & 0x3FFFFF) != 0) | (exp > 0))
            e = xp.where(exp == 0xFF, exp, exp + up.astype(np.uint32))
            if source is not None and np.dtype(source.dtype) == np.float64:
                # a float32 subnormal: 2**-126 above 2**-127 (float64's half-way point to the
                # next float32 included in the round-down), else 2**-127
                a = xp.abs(source)
                sub = (a < 2.0 ** -126) & (e <= 1)
                e = xp.where(sub, (a > 2.0 ** -127 + 2.0 ** -150).astype(np.uint32), e)
            return _bits(e.astype(np.uint8), target, xp)
        if target == _E4M3FN_NP and saturate:
            x = xp.clip(x, np.float32(-448.0), np.float32(448.0))
        y = x.astype(target)
        if target in (_E4M3FN_NP, _E5M2_NP):
            # (selected as bytes: a select of float8 values may pass through float32)
            src = source if source is not None and np.dtype(source.dtype) in _SIGNED_FLOATS \
                else x
            if np.dtype(src.dtype).itemsize == 2:
                sign = (_bits(src, np.uint16, xp).astype(np.uint32) >> 8) & 0x80
            elif np.dtype(src.dtype) == np.float64:
                sign = ((_bits(src, np.uint64, xp) >> 56) & 0x80).astype(np.uint32)
            else:
                sign = (_bits(x, np.uint32, xp) >> 24) & 0x80
            nan = (sign | 0x7F).astype(np.uint8)
            y = _bits(xp.where(xp.isnan(x), nan, _bits(y, np.uint8, xp)), target, xp)
        return y


def _bits(x, dt, xp):
    if xp is np:
        return np.asarray(x).view(dt)
    if np.ndim(x) == 0 and isinstance(x, np.generic):
        return np.asarray(x).view(dt)
    import jax
    return jax.lax.bitcast_convert_type(x, dt)
