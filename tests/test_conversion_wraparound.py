"""Float -> integer conversion of values an integer dtype cannot hold, against torch 2.13 (CPU).

torch's CPU kernels convert as C does on x86: truncate toward zero to int64 (for int64 and
uint8) or int32 (for int32, int16, int8), what does not fit (nan, inf, large magnitudes) becomes
that type's most negative value, and the narrow types keep the low bits. So
``tensor([-1.5, 300.]).to(uint8)`` is ``[255, 44]``, not XLA's saturated ``[0, 255]``.
Every route into an integer tensor is checked: ``to``, ``type``, the dtype shortcuts,
``torch.tensor``/``as_tensor`` of a float tensor or numpy array, ``copy_``, ``fill_`` with a
0-dim tensor and ``t[key] = float_tensor``; plus torch's checked conversion of Python numbers in
``t[key] = number``.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchlike
from oracle import both_outcomes

VALUES = [-1.5, -0.5, 0.5, 127.9, 128.0, 255.5, 256.0, 300.0, -129.0, -300.7, 32768.0,
          65535.0, 65536.7, -32769.0, 2.0 ** 31, 2.0 ** 31 + 5, -2.0 ** 31 - 1000,
          2.0 ** 32 + 7, 1e10, -1e10, 2.0 ** 62, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64, 1e19, -1e19,
          1e20, -1e20, 1e30, 3e38, float("inf"), float("-inf"), float("nan")]
FLOATS = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
INTS = ["uint8", "int8", "int16", "int32", "int64", "bool"]
SHORTCUT = {"uint8": "byte", "int8": "char", "int16": "short", "int32": "int", "int64": "long",
            "bool": "bool"}


def _src(m, fd):
    return m.tensor(VALUES, dtype=m.float64).to(getattr(m, fd))


ROUTES = {
    "to": lambda m, fd, d: _src(m, fd).to(d),
    "to_dtype_kw": lambda m, fd, d: _src(m, fd).to(dtype=d),
    "type": lambda m, fd, d: _src(m, fd).type(d),
    "shortcut": lambda m, fd, d: getattr(_src(m, fd), SHORTCUT[str(d).split(".")[1]])(),
    "type_as": lambda m, fd, d: _src(m, fd).type_as(m.zeros(1, dtype=d)),
    "tensor_of_tensor": lambda m, fd, d: m.tensor(_src(m, fd), dtype=d),
    "as_tensor": lambda m, fd, d: m.as_tensor(_src(m, fd), dtype=d),
    "copy_": lambda m, fd, d: m.zeros(len(VALUES), dtype=d).copy_(_src(m, fd)),
    "copy_strided": lambda m, fd, d: m.zeros(len(VALUES), 2, dtype=d)[:, 1].copy_(_src(m, fd)),
    "setitem": lambda m, fd, d: _setitem(m.zeros(len(VALUES), dtype=d), slice(None),
                                         _src(m, fd)),
    "transposed": lambda m, fd, d: m.stack([_src(m, fd)] * 2).t().to(d),
}


def _setitem(t, key, value):
    t[key] = value
    return t


def _same(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = both_outcomes(fn, msg="first_line")
    if got is None:
        return
    lv, tv = got
    assert str(lv.dtype) == str(tv.dtype)
    assert lv.tolist() == tv.tolist(), f"\n ours  {lv.tolist()}\n torch {tv.tolist()}"


@pytest.mark.parametrize("route", list(ROUTES))
@pytest.mark.parametrize("fd", FLOATS)
@pytest.mark.parametrize("idt", INTS)
def test_float_to_integer_wraps_as_torch(route, fd, idt):
    _same(lambda m: ROUTES[route](m, fd, getattr(m, idt)))


@pytest.mark.parametrize("fd", ["float16", "float32", "float64", "complex128"])
@pytest.mark.parametrize("idt", INTS)
def test_tensor_of_numpy_float_array_wraps_as_torch(fd, idt):
    a = np.array(VALUES).astype(fd)
    _same(lambda m: m.tensor(a, dtype=getattr(m, idt)))


@pytest.mark.parametrize("idt", INTS[:-1])
@pytest.mark.parametrize("v", [300.7, -1.5, -0.5, float("nan"), float("inf"), 1e30])
def test_fill_with_float_tensor_wraps_as_torch(idt, v):
    _same(lambda m: m.zeros(3, dtype=getattr(m, idt)).fill_(m.tensor(v, dtype=m.float64)))


@pytest.mark.parametrize("n", [1, 7, 64, 1001])
def test_wraparound_holds_at_every_length(n):
    for v in (-1.5, 300.0, 2.0 ** 31 + 5, float("nan")):
        for idt in ("uint8", "int8", "int32"):
            _same(lambda m: m.full((n,), v, dtype=m.float64).to(getattr(m, idt)))


def test_uint8_of_negative_fraction_is_255():
    x = torchlike.tensor([-1.5, 300.0]).to(torchlike.uint8)
    assert x.tolist() == [255, 44] == torch.tensor([-1.5, 300.0]).to(torch.uint8).tolist()


def test_conversion_under_compile_wraps_as_eager():
    f = torchlike.compile(lambda x: x.to(torchlike.uint8))
    assert f(torchlike.tensor([-1.5, 300.0, float("nan")])).tolist() == [255, 44, 0]


@pytest.mark.parametrize("dn", ["uint8", "int8", "int16", "int32", "int64", "float16",
                                "bfloat16", "float32", "bool", "complex64"])
@pytest.mark.parametrize("v", [-1.5, 300.5, -0.5, 255.9, 1e6, 1e40, float("nan"), float("inf"),
                               2 ** 40, -1, 256, 2 ** 63, 1 + 2j, True])
@pytest.mark.parametrize("key", ["int", "slice", "advanced", "mask", "ellipsis"])
def test_setitem_python_number_is_checked_as_torch(dn, v, key):
    def fn(m):
        t = m.zeros(3, dtype=getattr(m, dn))
        k = {"int": 0, "slice": slice(0, 2), "advanced": m.tensor([0, 2]),
             "mask": m.tensor([True, False, True]), "ellipsis": ...}[key]
        t[k] = v
        return t
    got = both_outcomes(fn, msg="first_line")
    if got is not None:
        lv, tv = got
        a, b = np.asarray(lv.float().tolist() if dn == "bfloat16" else lv.tolist()), \
            np.asarray(tv.float().tolist() if dn == "bfloat16" else tv.tolist())
        assert a.dtype == b.dtype and ((a == b) | ((a != a) & (b != b))).all(), (a, b)
