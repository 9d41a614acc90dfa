"""Issue 3, conversion and metadata against torch: type, type_as, element_size, stride(),
is_tensor, finfo, iinfo, result_type, can_cast, promote_types and friends."""
import numpy as np
import pytest
import torch

import torchlike
from oracle import Case, check, check_raises

R = np.random.default_rng(6)
DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool", "complex64", "complex128"]


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


EDGE_F = np.array([1.0, -2.0, 0.0, -0.0, np.inf, np.nan], np.float32)

CASES = [
    Case("type_str_double", lambda m, a: a.type("torch.DoubleTensor"), (f32(2, 3),)),
    Case("type_str_long", lambda m, a: a.type("torch.LongTensor"), (f32(3) * 5,)),
    Case("type_str_bool", lambda m, a: a.type("torch.BoolTensor"), (f32(3),)),
    Case("type_dtype", lambda m, a: a.type(m.float16), (f32(3),)),
    Case("type_same", lambda m, a: a.type(m.float32), (f32(3),)),
    Case("type_as", lambda m, a, b: a.type_as(b), (f32(3), np.arange(2, dtype=np.int32))),
    Case("type_as_float", lambda m, a, b: a.type_as(b), (np.arange(3), f32(2))),
    Case("to_other", lambda m, a, b: a.to(b), (f32(3), R.standard_normal(2))),
    Case("to_dtype_kw", lambda m, a: a.to(dtype=m.float64), (f32(3),)),
    Case("double_grad", lambda m, a: a.double() * 2, (f32(3),)),
    Case("half_roundtrip", lambda m, a: a.half().float(), (f32(5),), atol=1e-2, rtol=1e-2),
    Case("bfloat16", lambda m, a: a.bfloat16(), (f32(4),), atol=1e-2, rtol=1e-2),
    Case("long_trunc", lambda m, a: (a * 10).long(), (f32(5),)),
    Case("int_from_bool", lambda m, a: a.int(), (np.array([True, False]),)),
    Case("bool_from_float", lambda m, a: a.bool(), (np.array([0.0, -0.0, 0.5, np.nan], np.float32),)),
    Case("contiguous_after_t", lambda m, a: a.t().contiguous() + 0, (f32(2, 3),)),
    Case("view_dtype_f32_i32", lambda m, a: a.view(m.int32), (EDGE_F,)),
    Case("view_dtype_i32_f32", lambda m, a: a.view(m.float32), (np.array([1065353216, -1, 0], np.int32),)),
    Case("view_dtype_f32_i8", lambda m, a: a.view(m.int8), (f32(2, 3),)),
    Case("view_dtype_i8_f32", lambda m, a: a.view(m.float32), (np.arange(8, dtype=np.int8).reshape(1, 8),)),
    Case("view_dtype_f32_f16", lambda m, a: a.view(m.float16), (f32(3),)),
    Case("view_dtype_f64_i64", lambda m, a: a.view(m.int64), (np.array([1.5, -0.0, np.inf]),)),
    Case("view_dtype_bool_u8", lambda m, a: a.view(m.uint8), (np.array([True, False]),)),
    Case("view_dtype_u8_bool", lambda m, a: a.view(m.bool), (np.array([1, 0], np.uint8),)),
    Case("view_dtype_bf16_i16", lambda m, a: a.bfloat16().view(m.int16), (f32(4),)),
    Case("view_dtype_same", lambda m, a: a.view(m.float32) * 2, (f32(3),)),
    Case("view_as_other", lambda m, a, b: a.view_as(b), (f32(6), f32(2, 3))),
    Case("expand_as_other", lambda m, a, b: a.expand_as(b), (f32(1, 3), f32(4, 3))),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_conversion_against_torch(case):
    check(case)


def _both(expr):
    return expr(torch), expr(torchlike)


META = [
    ("type_name", lambda m: [m.zeros(2, dtype=getattr(m, d)).type() for d in DTYPES]),
    ("element_size", lambda m: [m.zeros(2, dtype=getattr(m, d)).element_size() for d in DTYPES]),
    ("itemsize_nbytes", lambda m: [(m.zeros(3, 2, dtype=getattr(m, d)).itemsize,
                                    m.zeros(3, 2, dtype=getattr(m, d)).nbytes) for d in DTYPES]),
    ("stride", lambda m: [m.zeros(s).stride() for s in [(), (3,), (2, 3), (2, 3, 4), (2, 0, 3),
                                                         (1, 1), (4, 1, 5)]]),
    ("stride_dim", lambda m: [m.zeros(2, 3, 4).stride(d) for d in (0, 1, 2, -1, -3)]),
    ("storage_offset", lambda m: m.zeros(3).storage_offset()),
    ("is_signed", lambda m: [m.zeros(1, dtype=getattr(m, d)).is_signed() for d in DTYPES]),
    ("is_storage", lambda m: [m.is_storage(m.zeros(1)), m.is_storage(1)]),
    ("is_tensor", lambda m: [m.is_tensor(m.zeros(1)), m.is_tensor(np.zeros(1)), m.is_tensor(1.0),
                             m.is_tensor([1])]),
    ("is_floating_point", lambda m: [m.is_floating_point(m.zeros(1, dtype=getattr(m, d)))
                                     for d in DTYPES]),
    ("is_complex", lambda m: [m.is_complex(m.zeros(1, dtype=getattr(m, d))) for d in DTYPES]),
    ("is_nonzero", lambda m: [m.is_nonzero(m.tensor(v)) for v in (0.0, 1.5, [0], [True], -1)]),
    ("numel", lambda m: [m.numel(m.zeros(s)) for s in [(), (0,), (2, 3)]]),
    ("is_same_size", lambda m: [m.zeros(2, 3).is_same_size(m.ones(2, 3)),
                                m.zeros(2).is_same_size(m.ones(3))]),
    ("typename", lambda m: [m.typename(m.zeros(1, dtype=getattr(m, d))) for d in DTYPES]),
    ("finfo", lambda m: [(f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution,
                          str(f.dtype))
                         for f in [m.finfo(getattr(m, d)) for d in
                                   ("float32", "float64", "float16", "bfloat16", "complex64",
                                    "complex128")]]),
    ("finfo_default", lambda m: m.finfo().eps),
    ("finfo_repr", lambda m: [repr(m.finfo(getattr(m, d))) for d in ("float32", "float16")]),
    ("iinfo", lambda m: [(i.bits, i.min, i.max, str(i.dtype)) for i in
                         [m.iinfo(getattr(m, d)) for d in ("int64", "int32", "int16", "int8",
                                                            "uint8")]]),
    ("iinfo_repr", lambda m: repr(m.iinfo(m.int8))),
    ("promote_types", lambda m: [str(m.promote_types(getattr(m, a), getattr(m, b)))
                                 for a in DTYPES for b in DTYPES]),
    ("can_cast", lambda m: [m.can_cast(getattr(m, a), getattr(m, b)) for a in DTYPES
                            for b in DTYPES]),
    ("result_type_tensors", lambda m: [str(m.result_type(m.zeros(2, dtype=getattr(m, a)),
                                                         m.zeros(2, dtype=getattr(m, b))))
                                       for a in DTYPES for b in DTYPES]),
    ("result_type_0dim", lambda m: [str(m.result_type(m.zeros(2, dtype=getattr(m, a)),
                                                      m.zeros((), dtype=getattr(m, b))))
                                    for a in DTYPES for b in DTYPES]),
    ("result_type_scalars", lambda m: [str(m.result_type(m.zeros(2, dtype=getattr(m, a)), s))
                                       for a in DTYPES for s in (True, 2, 2.5, 1j)]),
    ("result_type_scalar_first", lambda m: [str(m.result_type(s, m.zeros((), dtype=getattr(m, a))))
                                            for a in DTYPES for s in (True, 2, 2.5)]),
    ("result_type_two_scalars", lambda m: [str(m.result_type(a, b)) for a in (True, 2, 2.5)
                                           for b in (False, 3, 0.5)]),
]


@pytest.mark.parametrize("name,expr", META, ids=[m[0] for m in META])
def test_metadata_against_torch(name, expr):
    t, lt = _both(expr)
    if isinstance(t, list):
        # torch's complex32 (ComplexHalf) has no JAX dtype: see DIFFERENCES.md and the pin below
        lt = [x for x, y in zip(lt, t) if y != "torch.complex32"]
        t = [y for y in t if y != "torch.complex32"]
    assert lt == t, f"{name}: {lt} != torch {t}"


def test_half_with_complex_promotes_to_complex64():
    """Pinned difference: torch gives complex32 for float16 with a complex operand; torchlike,
    having no complex32, gives complex64."""
    h = torchlike.zeros(2, dtype=torchlike.float16)
    assert torchlike.result_type(h, 1j) is torchlike.complex64
    assert torchlike.result_type(h, torchlike.zeros((), dtype=torchlike.complex64)) \
        is torchlike.complex64
    assert str(torch.result_type(torch.zeros(2, dtype=torch.float16), 1j)) == "torch.complex32"


def test_finfo_iinfo_dtype_attribute_and_equality():
    assert torchlike.finfo(torchlike.float32) == torchlike.finfo(torchlike.float32)
    assert torchlike.finfo(torchlike.float32) != torchlike.finfo(torchlike.float64)
    assert torchlike.finfo(torchlike.float32).dtype == torch.finfo(torch.float32).dtype
    assert torchlike.iinfo(torchlike.int32).dtype == torch.iinfo(torch.int32).dtype


def test_finfo_follows_default_dtype():
    torchlike.set_default_dtype(torchlike.float64)
    try:
        assert torchlike.finfo().eps == torch.finfo(torch.float64).eps
    finally:
        torchlike.set_default_dtype(torchlike.float32)


BAD = [
    ("finfo_int", lambda m: m.finfo(m.int32)),
    ("finfo_bool", lambda m: m.finfo(m.bool)),
    ("finfo_str", lambda m: m.finfo("float32")),
    ("iinfo_float", lambda m: m.iinfo(m.float32)),
    ("iinfo_bool", lambda m: m.iinfo(m.bool)),
    ("type_bad_str", lambda m: m.zeros(2).type("DoubleTensor")),
    ("type_dtype_str", lambda m: m.zeros(2).type("torch.float64")),
    ("is_nonzero_many", lambda m: m.is_nonzero(m.tensor([1, 2]))),
    ("is_nonzero_empty", lambda m: m.is_nonzero(m.tensor([]))),
    ("stride_bad_dim", lambda m: m.zeros(2, 3).stride(2)),
    ("view_dtype_0dim", lambda m: m.tensor(1.0).view(m.int8)),
    ("view_dtype_indivisible", lambda m: m.tensor([1, 2, 3], dtype=m.int8).view(m.int16)),
    ("element_size_args", lambda m: m.zeros(2).element_size(1)),
]


@pytest.mark.parametrize("name,fn", BAD, ids=[b[0] for b in BAD])
def test_conversion_bad_input(name, fn):
    check_raises(fn)


def test_table_size():
    assert len(CASES) + len(META) >= 40


def test_view_dtype_reinterprets_but_copies():
    """Pinned difference (DIFFERENCES.md): ``t.view(dtype)`` reads the same bytes as torch does,
    but for a different dtype the result is a copy, so writes do not reach ``t``."""
    x = torchlike.tensor([1.0, 2.0])
    y = x.view(torchlike.int32)
    assert y.tolist() == torch.tensor([1.0, 2.0]).view(torch.int32).tolist()
    y[0] = 0
    assert x.tolist() == [1.0, 2.0]
    z = x.view(torchlike.float32)          # same dtype: an alias, as in torch
    z[1] = 5.0
    assert x.tolist() == [1.0, 5.0]


_VIEW_DTYPE_LAYOUTS = {
    "transposed to smaller": lambda m: m.ones(2, 4).t().view(m.int16),
    "transposed to larger": lambda m: m.ones(4, 2).t().view(m.float64),
    "odd last size": lambda m: m.ones(3).view(m.float64),
    "odd offset": lambda m: m.ones(2, 4)[:, 1:3].view(m.float64),
    "bytes to short": lambda m: m.ones(2, 4, dtype=m.uint8)[:, 1:].view(m.int16),
    "odd row stride": lambda m: m.ones(3, 5)[:, :2].view(m.float64),
    "even row stride": lambda m: m.ones(3, 6)[:, :2].view(m.float64),
    "a 0-dim tensor": lambda m: m.ones(()).view(m.int16),
    "same size transposed": lambda m: m.ones(4, 2).t().view(m.int32),
    "a middle slice to bytes": lambda m: m.ones(2, 3, 4)[:, 1].view(m.int8),
}


@pytest.mark.parametrize("case", list(_VIEW_DTYPE_LAYOUTS))
def test_view_dtype_checks_the_layout_as_torch(case):
    def outcome(m):
        try:
            r = _VIEW_DTYPE_LAYOUTS[case](m)
        except RuntimeError as e:
            return str(e)
        return tuple(r.shape), r.tolist()
    assert outcome(torchlike) == outcome(torch)


def test_bad_input_messages_match_torch():
    """Beyond the exception class: torchlike's message is torch's, word for word."""
    differ = ("element_size_args",)      # Python's own arity message names the class
    mismatched = []
    for name, fn in BAD:
        lerr, terr = check_raises(fn)
        if str(lerr) != str(terr) and name not in differ:
            mismatched.append((name, str(lerr), str(terr)))
    assert not mismatched, mismatched


_LAYOUTS = {
    "matrix.t()": lambda m: m.randn(2, 3).t(),
    "4-D": lambda m: m.randn(2, 3, 4, 5),
    "4-D channels_last": lambda m: m.randn(2, 3, 4, 5).contiguous(memory_format=m.channels_last),
    "4-D permuted": lambda m: m.randn(2, 3, 4, 5).permute(0, 2, 1, 3),
    "4-D strided": lambda m: m.randn(2, 3, 4, 5)[:, :, ::2],
    "4-D as NHWC": lambda m: m.randn(2, 3, 4, 5).permute(0, 2, 3, 1),
    "N111": lambda m: m.randn(3, 1, 1, 1),
    "N111 channels_last": lambda m: m.randn(3, 1, 1, 1).contiguous(memory_format=m.channels_last),
    "NC11 channels_last": lambda m: m.randn(2, 3, 1, 1).contiguous(memory_format=m.channels_last),
    "N1HW channels_last": lambda m: m.randn(2, 1, 4, 5).contiguous(memory_format=m.channels_last),
    "1C1W transposed": lambda m: m.randn(1, 4, 1, 3).transpose(1, 3),
    "expanded": lambda m: m.randn(1, 3, 1, 1).expand(2, 3, 4, 5),
    "5-D channels_last_3d": lambda m: m.randn(2, 3, 2, 4, 5).contiguous(
        memory_format=m.channels_last_3d),
    "5-D permuted": lambda m: m.randn(2, 3, 2, 4, 5).permute(0, 2, 1, 3, 4),
}


@pytest.mark.parametrize("how", ["float()", "double()", "to(float32)", "to(float64)"])
@pytest.mark.parametrize("fmt", [None, "preserve_format", "contiguous_format", "channels_last",
                                 "channels_last_3d"])
@pytest.mark.parametrize("layout", sorted(_LAYOUTS))
def test_a_cast_to_a_memory_format_is_self_where_torch_suggests_that_format(layout, fmt, how):
    """``to``/``float()``... with ``memory_format``: self where the dtype is unchanged and the
    tensor's suggested format (torch's ``suggest_memory_format``, from its strides) is the one
    asked for, else a copy with torch's strides, or torch's error."""
    from oracle import both_outcomes

    def fn(m):
        t = _LAYOUTS[layout](m)
        kw = {} if fmt is None else {"memory_format": getattr(m, fmt)}
        if how.startswith("to("):
            r = t.to(getattr(m, how[3:-1]), **kw)
        else:
            r = getattr(t, how[:-2])(**kw)
        return r is t, r.stride(), r.dtype == t.dtype
    got = both_outcomes(fn)
    if got is not None:
        assert got[0] == got[1]
