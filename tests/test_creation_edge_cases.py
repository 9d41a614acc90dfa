"""Issue 15: no silent wrong answers in tensor creation, swept against torch 2.13.

Three classes, each a table of cases run on torch first and then on torchlike: where torch
raises, torchlike raises the same class with the same message; where torch returns, torchlike
returns the same values (bit for bit) and dtype.

1. Python numbers outside a dtype's range (``tensor``, ``as_tensor``, ``full``, ``full_like``,
   ``new_full``, ``new_tensor``, ``scalar_tensor``, ``fill_``, arithmetic with a scalar).
2. Sizes: negative, not fitting int64, element or byte counts that overflow, allocations larger
   than the machine (torch's RuntimeError, never a process abort).
3. Creation numerics: ``linspace``, ``logspace``, ``arange`` over starts/ends/steps and dtypes.
"""
from __future__ import annotations


import numpy as np
import pytest
import torch

import torchlike
from oracle import both_outcomes

INT_DTYPES = ("uint8", "int8", "int16", "int32", "int64")
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
ALL_DTYPES = INT_DTYPES + FLOAT_DTYPES + ("complex64", "complex128", "bool")


def _np(t):
    if isinstance(t, (torch.Tensor, torchlike.Tensor)):
        bf = t.dtype in (torch.bfloat16, torchlike.bfloat16)
        t = t.detach()
        if bf:
            t = t.float()
        return np.asarray(t.numpy() if isinstance(t, torch.Tensor) else t)
    return np.asarray(t)


def same_as_torch(fn, *, exact=True, rtol=0.0):
    """``fn(m)`` gives the same value and dtype (or the same exception) with torch/torchlike."""
    got = both_outcomes(fn, msg="first_line")
    if got is None:
        return
    lv, tv = got
    if not isinstance(tv, torch.Tensor):
        assert lv == tv, f"{lv!r} != torch {tv!r}"
        return
    assert isinstance(lv, torchlike.Tensor), type(lv)
    assert str(lv.dtype) == str(tv.dtype), f"dtype {lv.dtype} != torch {tv.dtype}"
    assert tuple(lv.shape) == tuple(tv.shape), f"shape {tuple(lv.shape)} != {tuple(tv.shape)}"
    a, b = _np(lv), _np(tv)
    if exact or a.dtype.kind not in "fc":
        same = (a == b) | ((a != a) & (b != b)) if a.dtype.kind in "fc" else (a == b)
        if not np.all(same):
            bad = np.nonzero(~np.asarray(same).reshape(-1))[0]
            raise AssertionError(f"{bad.size}/{a.size} elements differ from torch, first at "
                                 f"{bad[0]}: {a.reshape(-1)[bad[:4]]} != torch "
                                 f"{b.reshape(-1)[bad[:4]]}")
    else:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=0, equal_nan=True)


def dt(m, name):
    return getattr(m, name)


# ============================================================ 1. out-of-range Python numbers

VALUES = (300, -255, -256, 2 ** 31, 2 ** 40, 2 ** 63 - 1, 2 ** 63, -2 ** 63, -2 ** 63 - 1,
          2 ** 64, 2 ** 200, 1e10, 1e39, 1e300, float("nan"), float("inf"), 65505.0, 65520.0,
          1.5, -1.0, complex(1, 2), complex(1e300, 0), True)


def _val_id(v):
    return repr(v).replace(" ", "")


TENSOR_ROWS = [(v, d) for v in VALUES for d in ALL_DTYPES]


@pytest.mark.parametrize("value,dtype", TENSOR_ROWS,
                         ids=[f"{_val_id(v)}-{d}" for v, d in TENSOR_ROWS])
def test_tensor_of_a_python_number_as_torch(value, dtype):
    """``tensor([v], dtype=d)``: torch refuses ints outside int64 (ValueError) and values an
    integer dtype cannot hold (RuntimeError); it never wraps."""
    same_as_torch(lambda m: m.tensor([value], dtype=dt(m, dtype)))


INFERRED = [
    ("int_2**63", [2 ** 63]), ("scalar_2**64", 2 ** 64), ("neg_beyond", [-2 ** 63 - 1]),
    ("min_int64", [-2 ** 63]), ("max_int64", 2 ** 63 - 1), ("nested_big", [[1, 2], [2 ** 63, 3]]),
    ("mixed_float_big", [1.0, 2 ** 63]), ("mixed_float_huge", [1.5, 2 ** 2000]),
    ("bool_and_big", [2 ** 63, True]), ("complex_and_big", [1 + 2j, 2 ** 63]),
    ("float_inf_nan", [float("inf"), 1.0, float("nan")]), ("big_float", [1e19, 2.0]),
    ("tuple_big", (2 ** 64, 1)), ("empty", []), ("np_scalar_list", [np.int64(3), 4]),
]


@pytest.mark.parametrize("data", [d for _, d in INFERRED], ids=[n for n, _ in INFERRED])
def test_tensor_inferred_dtype_with_large_ints_as_torch(data):
    same_as_torch(lambda m: m.tensor(data))
    same_as_torch(lambda m: m.as_tensor(data))


GIVEN = [
    ("u8_list_300", [300], "uint8"), ("u8_bool_mix", [True, 300], "uint8"),
    ("i8_nested", [[1, 2], [3, 200]], "int8"), ("i32_float_big", [1e10], "int32"),
    ("i64_float_big", [1e19], "int64"), ("i64_inf", float("inf"), "int64"),
    ("f32_from_2**64", [2 ** 64], "float32"), ("f64_from_2**64", [2 ** 64], "float64"),
    ("f32_int_huge", [2 ** 2000], "float32"), ("bool_from_2**63", [2 ** 63], "bool"),
    ("f32_complex", [1 + 0j], "float32"), ("i32_complex", [1, 1 + 0j], "int32"),
    ("i16_ok_edge", [-2 ** 15, 2 ** 15 - 1], "int16"), ("i16_over", [2 ** 15], "int16"),
    ("u8_np_scalar", [np.int64(300)], "uint8"), ("u8_np_array_wraps", np.array([300]), "uint8"),
    ("u8_neg_wraps", [-1, -255], "uint8"), ("u8_float_neg", [-0.5], "uint8"),
]


@pytest.mark.parametrize("data,dtype", [(d, t) for _, d, t in GIVEN],
                         ids=[n for n, _, _ in GIVEN])
def test_tensor_and_as_tensor_with_dtype_as_torch(data, dtype):
    same_as_torch(lambda m: m.tensor(data, dtype=dt(m, dtype)))
    same_as_torch(lambda m: m.as_tensor(data, dtype=dt(m, dtype)))
    same_as_torch(lambda m: m.zeros(1, dtype=dt(m, dtype)).new_tensor(data))


FILL_ROWS = [(v, d, shape) for v in VALUES for d in ALL_DTYPES
             for shape in ((2,), (1,))]


@pytest.mark.parametrize("value,dtype,shape", FILL_ROWS,
                         ids=[f"{_val_id(v)}-{d}-{len(s) and s[0]}" for v, d, s in FILL_ROWS])
def test_full_and_fill_with_a_python_number_as_torch(value, dtype, shape):
    """``full``/``fill_``/``full_like``/``new_full`` check the number against the dtype (C++
    type names in the message); one-element half tensors are filled through double."""
    same_as_torch(lambda m: m.full(shape, value, dtype=dt(m, dtype)))
    same_as_torch(lambda m: m.zeros(shape, dtype=dt(m, dtype)).fill_(value))
    same_as_torch(lambda m: m.full_like(m.zeros(shape, dtype=dt(m, dtype)), value))
    same_as_torch(lambda m: m.zeros(shape, dtype=dt(m, dtype)).new_full(shape, value))


@pytest.mark.parametrize("value", VALUES, ids=[_val_id(v) for v in VALUES])
@pytest.mark.parametrize("dtype", ("int8", "uint8", "int32", "float16", "float32", "complex64"))
def test_scalar_tensor_and_default_full_as_torch(value, dtype):
    same_as_torch(lambda m: m.scalar_tensor(value, dtype=dt(m, dtype)))
    same_as_torch(lambda m: m.full((2, 1), value))          # dtype inferred from the value


@pytest.mark.parametrize("shape", [(), (0,), (2, 3)], ids=["0d", "empty", "2x3"])
@pytest.mark.parametrize("dtype,value", [("int32", 2 ** 40), ("int8", 300), ("int64", 2 ** 63),
                                         ("float16", 1e10), ("float32", 1e300),
                                         ("uint8", -256), ("int16", float("nan"))])
def test_fill_shapes_as_torch(shape, dtype, value):
    same_as_torch(lambda m: m.zeros(shape, dtype=dt(m, dtype)).fill_(value))
    same_as_torch(lambda m: m.full(shape, value, dtype=dt(m, dtype)))


def test_fill_with_a_tensor_value_wraps_as_torch():
    # torch copies a tensor value (wrapping); only Python numbers are range-checked
    same_as_torch(lambda m: m.zeros(2, dtype=m.int8).fill_(m.tensor(300)))
    same_as_torch(lambda m: m.full((2,), m.tensor(300), dtype=m.int8))


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("value", [300, -1, 2 ** 40, -255])
def test_integer_tensor_plus_a_python_int_wraps_as_torch(dtype, value):
    """Arithmetic with a Python int wraps in the tensor's dtype in torch (no check there)."""
    same_as_torch(lambda m: m.zeros(2, dtype=dt(m, dtype)) + value)
    same_as_torch(lambda m: m.ones((2, 2), dtype=dt(m, dtype)) * value)


# ============================================================ 2. sizes

SIZES = [
    ("2**62", (2 ** 62,)), ("2**31x2**31", (2 ** 31, 2 ** 31)), ("2**40x2**40", (2 ** 40, 2 ** 40)),
    ("2**62x4", (2 ** 62, 4)), ("2**61", (2 ** 61,)), ("2**63", (2 ** 63,)), ("2**64", (2 ** 64,)),
    ("neg", (-1,)), ("neg_second", (2, -3)), ("neg_and_huge", (-1, 2 ** 62)),
    ("zero_then_huge", (0, 2 ** 62)), ("huge_then_zero", (2 ** 62, 2 ** 62, 0)),
    ("stride_overflow", (0, 2 ** 62, 2 ** 62)), ("0x2**63", (0, 2 ** 63)),
    ("alloc_16TB", (2 ** 42,)), ("alloc_huge_2d", (2 ** 22, 2 ** 22)),
    ("three_huge", (2 ** 62, 2 ** 62, 2 ** 62)), ("one_huge_pair", (1, 2 ** 62, 2 ** 62)),
]
MAKERS = [
    ("zeros", lambda m, s: m.zeros(*s)), ("zeros_tuple", lambda m, s: m.zeros(s)),
    ("ones", lambda m, s: m.ones(*s)), ("empty", lambda m, s: m.empty(*s)),
    ("full", lambda m, s: m.full(s, 1.0)), ("rand", lambda m, s: m.rand(*s)),
    ("randn", lambda m, s: m.randn(*s)), ("zeros_f64", lambda m, s: m.zeros(s, dtype=m.float64)),
    ("ones_u8", lambda m, s: m.ones(s, dtype=m.uint8)),
    ("randint", lambda m, s: m.randint(0, 5, s)),
]


def _shape_of(t):
    return tuple(t.shape) if isinstance(t, (torch.Tensor, torchlike.Tensor)) else t


@pytest.mark.parametrize("size", [s for _, s in SIZES], ids=[n for n, _ in SIZES])
@pytest.mark.parametrize("make", [f for _, f in MAKERS], ids=[n for n, _ in MAKERS])
def test_sizes_raise_as_torch_never_abort(make, size):
    """Sizes torch refuses raise its error before anything is allocated (XLA would abort the
    process on an overflowing extent); sizes it accepts give the same shape."""
    same_as_torch(lambda m: _shape_of(make(m, size)))


BAD_SIZE_ARGS = [
    ("float", lambda m: m.zeros(2.5)), ("tuple_float_first", lambda m: m.zeros((2.5,))),
    ("float_second", lambda m: m.zeros(2, 2.5)), ("list_float_second", lambda m: m.zeros([2, 2.5])),
    ("str", lambda m: m.zeros("a")), ("bool", lambda m: m.zeros(True)),
    ("ones_float", lambda m: m.ones(2.5)), ("tensor_size", lambda m: m.zeros(m.tensor(3)).shape),
    ("np_int_size", lambda m: m.zeros(np.int64(3)).shape),
    ("eye_neg", lambda m: m.eye(-1)), ("eye_neg_m", lambda m: m.eye(3, -1)),
    ("eye_huge", lambda m: m.eye(2 ** 31)), ("randperm_neg", lambda m: m.randperm(-1)),
    ("linspace_huge", lambda m: m.linspace(0, 1, 2 ** 62)),
    ("linspace_neg", lambda m: m.linspace(0, 1, -1)),
    ("arange_huge", lambda m: m.arange(0, 2 ** 62)),
    ("arange_huge_float", lambda m: m.arange(0, 2 ** 62, dtype=m.float32)),
    ("arange_too_many", lambda m: m.arange(0, 1e30, 1e-30)),
    ("arange_alloc", lambda m: m.arange(0, 2 ** 42)),
    ("full_int_size", lambda m: m.full(3, 1.0)), ("full_list_size", lambda m: m.full([2], 1.0)),
    ("full_size_obj", lambda m: m.full(m.ones(2, 3).shape, 1.0)),
]


@pytest.mark.parametrize("fn", [f for _, f in BAD_SIZE_ARGS], ids=[n for n, _ in BAD_SIZE_ARGS])
def test_size_arguments_as_torch(fn):
    same_as_torch(fn)


def test_expand_to_a_huge_size_does_not_abort():
    """torch's expand is a view; torchlike materializes (DIFFERENCES.md): an expand larger than
    memory raises a Python exception instead of returning garbage or aborting."""
    assert tuple(torch.ones(1).expand(2 ** 40).shape) == (2 ** 40,)
    with pytest.raises((RuntimeError, MemoryError)):
        torchlike.ones(1).expand(2 ** 40).numel()
    big = torchlike.ones(1).expand(2 ** 20)            # fits: the values are right
    assert tuple(big.shape) == (2 ** 20,) and float(big.sum()) == 2 ** 20


# ============================================================ 3. creation numerics

_CAP = torch.backends.cpu.get_cpu_capability()
# torch's linspace/logspace kernels are element-wise (fused multiply-add where the build has
# FMA); its arange fills 256-bit vectors on AVX2. Other builds round differently: compared to
# 1 ulp there (DIFFERENCES.md).
_EXACT_LIN = _CAP in ("AVX2", "AVX512")
_EXACT_ARANGE = _CAP == "AVX2"

RANGES = [(1, 10, 10), (0, 1, 100), (-3.7, 11.2, 1000), (5, -2, 37), (0, 1, 7), (1e-3, 1e3, 333),
          (0, 1, 1), (2, 3, 2), (-1, 1, 4097), (0.1, 0.7, 50), (1e10, -1e10, 99), (0, 0, 5),
          (3, 3.5, 4097), (-100, 100, 20000), (0.3, -2.9, 41), (7, 7.000001, 12), (0, 1, 0)]
LIN_DTYPES = FLOAT_DTYPES + INT_DTYPES


def _lin_rows(fn):
    rows = []
    for a, b, n in RANGES:
        for d in LIN_DTYPES:
            if fn == "logspace" and max(abs(a), abs(b)) > 30:
                continue
            rows.append((a, b, n, d))
    return rows


def _rtol(d):
    return {"float16": 1e-3, "bfloat16": 8e-3, "float32": 2e-7}.get(d, 3e-16)


@pytest.mark.parametrize("a,b,n,dtype", _lin_rows("linspace"),
                         ids=[f"{a}_{b}_{n}-{d}" for a, b, n, d in _lin_rows("linspace")])
def test_linspace_bit_for_bit_as_torch(a, b, n, dtype):
    """torch steps from both ends: ``linspace(1, 10, 10)[6]`` is exactly 7.0."""
    same_as_torch(lambda m: m.linspace(a, b, n, dtype=dt(m, dtype)), exact=_EXACT_LIN,
                  rtol=_rtol(dtype))


def test_linspace_one_to_ten_is_exact():
    assert torchlike.linspace(1, 10, 10)[6].item() == 7.0 == torch.linspace(1, 10, 10)[6].item()
    same_as_torch(lambda m: m.linspace(1, 10, 10))                    # the default dtype
    same_as_torch(lambda m: m.linspace(m.tensor(1.5), m.tensor(2.5), 5))


@pytest.mark.parametrize("a,b,n,dtype", _lin_rows("logspace"),
                         ids=[f"{a}_{b}_{n}-{d}" for a, b, n, d in _lin_rows("logspace")])
def test_logspace_bit_for_bit_as_torch(a, b, n, dtype):
    same_as_torch(lambda m: m.logspace(a, b, n, dtype=dt(m, dtype)), exact=_EXACT_LIN,
                  rtol=_rtol(dtype))


@pytest.mark.parametrize("base", [2.0, 0.5, 3])
def test_logspace_bases_as_torch(base):
    same_as_torch(lambda m: m.logspace(-2, 3, 17, base=base))
    same_as_torch(lambda m: m.logspace(-2, 3, 17, base=base, dtype=m.float64))
    same_as_torch(lambda m: m.logspace(0, 3, 9, base=base, dtype=m.int64))


ARANGES = [(0, 10, 1), (0, 10, 0.1), (-3.3, 7.7, 0.37), (0, 100, 0.7), (5, -5, -0.3),
           (0.1, 1000, 0.93), (0, 10, 1.5), (0.5, 5, 1), (0, 5, 0.5), (-7, 3, 2), (10, 0, -3),
           (1, 2, 1 / 3), (0, 1e4, 0.01), (0, 1, 0), (0, float("inf"), 1), (5, 0, 1),
           (2.5, 2.5, 1), (-2.5, 7.25, 0.25), (0, float("nan"), 1), (0, 10, float("nan")),
           (0, 10, float("inf")), (0.9, 5.9, 1.9), (-0.5, 5, 1), (2 ** 63, 2 ** 63 + 2, 1)]


def _arange_rows():
    rows = []
    for a, b, c in ARANGES:
        for d in LIN_DTYPES + (None,):
            finite = np.isfinite(b) and np.isfinite(c)
            if d in ("int8", "uint8", "float16", "bfloat16") and finite and \
                    max(abs(a), abs(b)) > 100:
                continue
            if d in ("float16", "bfloat16") and finite and c and abs(b - a) / abs(c) > 2000:
                continue
            rows.append((a, b, c, d))
    return rows


@pytest.mark.parametrize("a,b,c,dtype", _arange_rows(),
                         ids=[f"{a}_{b}_{c}-{d}" for a, b, c, d in _arange_rows()])
def test_arange_as_torch(a, b, c, dtype):
    """Size and values as torch: integer dtypes truncate start and step (``arange(0, 10, 1.5,
    dtype=int64)`` is 0..9, ``int32`` gives 0..6); float dtypes fill vectors from their first
    element."""
    same_as_torch(lambda m: m.arange(a, b, c, dtype=dt(m, dtype) if dtype else None),
                  exact=_EXACT_ARANGE, rtol=_rtol(dtype or "float32"))


def test_arange_forms_as_torch():
    same_as_torch(lambda m: m.arange(5))
    same_as_torch(lambda m: m.arange(5.0))
    same_as_torch(lambda m: m.arange(1, 4))
    same_as_torch(lambda m: m.arange(m.tensor(3)))
    same_as_torch(lambda m: m.arange(0, 10, 1.5, dtype=m.int64))
    same_as_torch(lambda m: m.arange(0.5, 5, dtype=m.int32))
    same_as_torch(lambda m: m.arange(0, 3, dtype=m.complex64))
    same_as_torch(lambda m: m.arange(0, 3, dtype=m.bool))


_INT_RANGES = [(5,), (0,), (2, 7), (-3, 4), (7, 2), (0, 10), (2 ** 24 - 2, 2 ** 24 + 1)]
_RANGE_KEYWORDS = {
    "none": lambda m: {}, "int64": lambda m: {"dtype": m.int64},
    "int32": lambda m: {"dtype": m.int32}, "float32": lambda m: {"dtype": m.float32},
    "float64": lambda m: {"dtype": m.float64}, "int16": lambda m: {"dtype": m.int16},
    "float16": lambda m: {"dtype": m.float16}, "python_float": lambda m: {"dtype": float},
    "float32_grad": lambda m: {"dtype": m.float32, "requires_grad": True},
    "int64_grad": lambda m: {"requires_grad": True}, "cpu": lambda m: {"device": "cpu"},
    "cpu_int32": lambda m: {"device": "cpu", "dtype": m.int32},
}


@pytest.mark.parametrize("kw", sorted(_RANGE_KEYWORDS))
@pytest.mark.parametrize("args", _INT_RANGES, ids=str)
def test_arange_of_python_ints_with_keywords_as_torch(args, kw):
    """``arange(n, dtype=...)``, ``arange(a, b, device=...)``: values, dtype and
    ``requires_grad`` (or torch's error) as torch, across the ranges a dtype holds exactly and
    past them."""
    got = both_outcomes(lambda m: m.arange(*args, **_RANGE_KEYWORDS[kw](m)))
    if got is not None:
        lv, tv = got
        assert (lv.requires_grad, str(lv.device)) == (tv.requires_grad, str(tv.device))
        same_as_torch(lambda m: m.arange(*args, **_RANGE_KEYWORDS[kw](m)).detach())


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64",
                                   "bfloat16", "float16", None])
@pytest.mark.parametrize("args", [(4,), (2, 3), (0,), (3, 0), (1,)], ids=str)
def test_eye_as_torch(args, dtype):
    same_as_torch(lambda m: m.eye(*args, dtype=dt(m, dtype) if dtype else None))


def _full_out(m, shape, value, out_shape, out_dtype):
    out = m.zeros(out_shape, dtype=out_dtype(m))
    r = m.full(shape, value, out=out)
    assert r is out
    return out


@pytest.mark.parametrize("value,out_dtype", [(2.0, lambda m: m.float32), (3, lambda m: m.int64),
                                             (300, lambda m: m.int8),
                                             (1.5, lambda m: m.float64)],
                         ids=["f32", "i64", "i8_overflow", "f64"])
@pytest.mark.parametrize("shape,out_shape", [((3,), (3,)), ((2, 2), (0,))], ids=["same", "resize"])
def test_full_writes_out_as_torch(value, out_dtype, shape, out_shape):
    """``full(..., out=t)`` writes into ``t`` (it was accepted and ignored)."""
    same_as_torch(lambda m: _full_out(m, shape, value, out_shape, out_dtype))


@pytest.mark.parametrize("fn", ["linspace", "logspace"])
@pytest.mark.parametrize("n", [0, 1, 5])
def test_linspace_bool_as_torch(fn, n):
    same_as_torch(lambda m: getattr(m, fn)(0, 1, n, dtype=m.bool))


@pytest.mark.parametrize("args", [(0, 1, 10), (1 + 2j, 3 - 1j, 7), (-1j, 5, 100),
                                  (0.3 + 0.1j, -2.7 + 9.9j, 1001)], ids=str)
@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_linspace_close_to_torch(args, dtype):
    """Complex linspace/logspace: torch's values to rounding (not bit for bit: DIFFERENCES.md)."""
    rtol = 1e-6 if dtype == "complex64" else 1e-15
    same_as_torch(lambda m: m.linspace(*args, dtype=dt(m, dtype)), exact=False, rtol=rtol)
    same_as_torch(lambda m: m.logspace(0, 1, 9, dtype=dt(m, dtype)), exact=False, rtol=rtol * 10)
