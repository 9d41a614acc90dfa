"""Tensor printing against live torch: ``repr``/``str`` text character for character over a
sweep of dtypes x shapes x value families x print options (odd and out-of-range ones too),
summarized tensors, the suffixes (``device``, ``size``, ``dtype``, ``grad_fn``,
``requires_grad``), Parameter reprs, torch._tensor_str's helpers (``get_printoptions``,
``printoptions``, ``_str(tensor_contents=...)``, ``_tensor_str``), ``format`` of tensors and
the reprs of Size, dtype, device, finfo and iinfo.

Each case is ``fn(m)`` run through ``same_as_torch`` (the same text, or the same exception
class and message); the print options are reset to torch's defaults after every case.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from oracle import same_as_torch

nan, inf = float("nan"), float("inf")


def _reset(f):
    """``f`` with the print options reset after it. An error is raised again without its
    traceback: torch's ``_str`` holds a ``_DisableFuncTorch`` guard in its frame, and a kept
    traceback would leave torch.func disabled for the rest of the process (later tests of
    vmap and grad on torch then fail)."""
    def g(m):
        try:
            return f(m)
        except Exception as e:      # noqa: BLE001
            err = (type(e), e.args)
        finally:
            m.set_printoptions(profile="default")
        raise err[0](*err[1])
    return g


def _cases(table):
    return pytest.mark.parametrize("name", list(table))


# ============================================================ 1. the sweep

FAMILIES = {
    "ints": [0., 1., -2., 3., 100., 7.],
    "frac": [0.5, -1.25, 3.14159, 2.0, 1e-3, 9.99995],
    "huge": [1e10, 1.0, -3.0, 2.5e12, 7.0, 0.0],
    "tiny": [1e-5, 1.0, 2.5, -3e-7, 0.0, 1e-4],
    "nonfinite": [nan, inf, -inf, 1.5, 0.0, -2.0],
    "nonfinite_whole": [nan, inf, -inf, 1.0, 0.0, -2.0],
    "neg_zero": [-0.0, 0.0, -0.0, 1.0, 2.0, -0.0],
    "all_zero": [-0.0, 0.0, -0.0, 0.0, -0.0, 0.0],
    "ratio_1000": [1.0, 999., 1001., 0.5, 3.0, 2.0],
    "at_1e8": [1e8, 1.0, 2., 3., 4., 5.],
}
FLOATS = ["float32", "float64", "float16", "bfloat16", "complex64", "complex128",
          "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"]
SHAPES = [(6,), (), (2, 3), (3, 1, 2)]
OPTIONS = {
    "default": {}, "precision_1": dict(precision=1), "precision_7": dict(precision=7),
    "sci_on": dict(sci_mode=True), "sci_off": dict(sci_mode=False),
    "threshold_2_edge_1": dict(threshold=2, edgeitems=1),
    "threshold_2_edge_0": dict(threshold=2, edgeitems=0),
    "linewidth_12": dict(linewidth=12), "short": dict(profile="short"),
}


def _tensor(m, dtype, vals, shape):
    d = getattr(m, dtype)
    n = math.prod(shape)
    if dtype in INTS:
        a = np.array([1, 0, 7, 100, 3, 2][:n] if dtype in ("bool", "int8") or
                     dtype.startswith("uint") else [2 ** 31 - 1, -2 ** 31, 5, 0, -7, 9][:n])
        return m.tensor(a.astype(np.int64)).to(d).reshape(shape)
    a = np.array(vals[:n])
    if dtype.startswith("complex"):
        a = a + 1j * np.array(vals[::-1][:n])
    return m.tensor(a).to(d).reshape(shape)


SWEEP = {}
for _dt, _shape in itertools.product(FLOATS + INTS, SHAPES):
    for _fam in (FAMILIES if _dt in FLOATS else ["ints"]):
        for _opt in (OPTIONS if _shape == (6,) and _fam in ("frac", "huge", "ints") else
                     ["default"]):
            SWEEP[f"{_dt}-{_shape}-{_fam}-{_opt}"] = _reset(
                lambda m, d=_dt, v=FAMILIES[_fam], s=_shape, o=OPTIONS[_opt]:
                (m.set_printoptions(**o), repr(_tensor(m, d, v, s)))[1])


@_cases(SWEEP)
def test_repr_sweep(name):
    same_as_torch(SWEEP[name])


LARGE = {
    "1d_2000": lambda m: repr(m.arange(2000.) / 7),
    "2d_summarized_rows_and_cols": lambda m: repr(m.arange(4000.).reshape(40, 100) - 2000),
    "3d_summarized": lambda m: repr(m.arange(3000).reshape(10, 15, 20)),
    "summarized_complex": lambda m: repr(m.arange(2000.).reshape(20, 100) * (1 - 0.5j)),
    "summarized_sci": lambda m: repr(m.arange(2000.) ** 3),
    "summarized_transposed": lambda m: str(m.arange(3000.).reshape(30, 100).t()),
    "summarized_float8": lambda m: repr(m.arange(2000.).to(m.float8_e5m2)),
    "summarized_bool": lambda m: repr(m.arange(2000) % 3 == 0),
    "edgeitems_5": _reset(lambda m: (m.set_printoptions(edgeitems=5),
                                     repr(m.arange(1200.).reshape(3, 400)))[1]),
    "full_profile": _reset(lambda m: (m.set_printoptions(profile="full"),
                                      repr(m.arange(1100) * 3))[1]),
    "edges_at_and_past_2e_plus_1": _reset(
        lambda m: (m.set_printoptions(threshold=10, edgeitems=2),
                   [repr(((m.arange(210.).reshape(5, 6, 7) - 100) ** 3 / 7).to(d))
                    for d in (m.float32, m.bfloat16, m.float16, m.float8_e4m3fn)])[1]),
    "edges_e8m0": _reset(lambda m: (m.set_printoptions(threshold=4, edgeitems=1),
                                    repr((m.arange(30.).reshape(5, 6) - 15).exp2()
                                         .to(m.float8_e8m0fnu)))[1]),
    "threshold_inf": _reset(lambda m: (m.set_printoptions(threshold=inf),
                                       repr(m.arange(1002.)))[1]),
}


@_cases(LARGE)
def test_repr_large(name):
    same_as_torch(LARGE[name])


ODD_OPTIONS = [dict(precision=-1), dict(precision=30), dict(linewidth=0), dict(threshold=-1),
               dict(edgeitems=-1, threshold=2), dict(edgeitems=100, threshold=2),
               dict(sci_mode=0), dict(threshold=2.5), dict(edgeitems=1.0, threshold=2),
               dict(profile="short", precision=6), dict(profile="full", threshold=5)]
ODD_VALUES = [lambda m: m.tensor([1.5, 2.25, -3.0, 4e-3, 5.0]),
              lambda m: m.arange(12).reshape(3, 4), lambda m: m.tensor(2.5),
              lambda m: m.tensor([[1 + 2j, 3 - 4j]]),
              lambda m: m.arange(24.).reshape(2, 3, 4).requires_grad_()]


@pytest.mark.parametrize("values", range(len(ODD_VALUES)))
@pytest.mark.parametrize("options", ODD_OPTIONS, ids=str)
def test_repr_odd_options(options, values):
    """Out-of-range and odd-typed options print (or fail) as torch's: a negative edgeitems
    fails in torch.stack with its message."""
    same_as_torch(_reset(lambda m: (m.set_printoptions(**options),
                                    repr(ODD_VALUES[values](m)))[1]))


# ============================================================ 2. suffixes and wrappers

SUFFIXES = {
    "empty_0x3": lambda m: repr(m.zeros(0, 3)),
    "empty_long_1d": lambda m: repr(m.zeros(0, dtype=m.long)),
    "empty_bool": lambda m: repr(m.zeros(2, 0, dtype=m.bool)),
    "empty_requires_grad": lambda m: repr(m.zeros(0, 3, requires_grad=True)),
    "empty_huge_dims": lambda m: [repr(m.empty(0, 2 ** 62)), repr(m.empty(2 ** 62, 2 ** 62, 0))],
    "requires_grad_wrapped": lambda m: repr((m.arange(14, dtype=m.float64) * 1.5)
                                            .requires_grad_()),
    "grad_fn_wrapped": lambda m: repr((m.arange(14, dtype=m.float16) * 1.5)
                                      .requires_grad_() * 2),
    "grad_fn_view": lambda m: repr(m.ones(3, requires_grad=True)[:2]),
    "edgeitems_0_size": _reset(lambda m: (m.set_printoptions(threshold=3, edgeitems=0),
                                          repr(m.arange(10.).reshape(2, 5)))[1]),
    "non_contiguous": lambda m: repr(m.arange(12.).reshape(3, 4)[:, 1::2]),
    "expanded": lambda m: repr(m.tensor([1., 2.]).expand(3, 2)),
    "conj_view": lambda m: repr(m.tensor([1 + 2j, -0.5j]).conj()),
    "param": lambda m: repr(m.nn.Parameter(m.arange(3.))),
    "param_str_no_grad": lambda m: str(m.nn.Parameter(m.ones(2, dtype=m.long),
                                                       requires_grad=False)),
    "params_in_containers": lambda m: repr({"w": [m.nn.Parameter(m.ones(2))],
                                            "b": (m.ones(1), m.tensor(2))}),
    "meta": lambda m: repr(m.ones(2, 3, device="meta")),
    "meta_long_requires_grad": lambda m: repr(m.ones(2, device="meta", requires_grad=True)),
    "return_types_max": lambda m: repr(m.max(m.tensor([[1., 5.], [3., 2.]]), 0)),
    "return_types_sort": lambda m: str(m.sort(m.tensor([3., 1., 2.], requires_grad=True))),
    "return_types_nested": lambda m: repr([m.topk(m.tensor([3, 1, 2]), 2)]),
}


@_cases(SUFFIXES)
def test_repr_suffixes_and_wrappers(name):
    same_as_torch(SUFFIXES[name])


def _param_subclass(m):
    class MyParam(m.nn.Parameter):
        pass
    return repr(MyParam(m.ones(2))) + "\n" + str(MyParam(m.zeros(0), requires_grad=False))


FIXED = {
    # a Parameter subclass prints torch's ``Parameter(<Name>(...))`` under "containing:"
    "param_subclass": _param_subclass,
    # a meta tensor's suffixes wrap at the line width as any tensor's
    "meta_suffixes_wrap": lambda m: repr(m.ones(1000, 1000, 1000, device="meta",
                                                dtype=m.float16, requires_grad=True)),
    "meta_suffixes_narrow": _reset(lambda m: (m.set_printoptions(linewidth=20),
                                              repr(m.ones(3, device="meta",
                                                          dtype=m.float16)))[1]),
    # torch._tensor_str's option helpers
    "get_printoptions": _reset(lambda m: (m.set_printoptions(precision=2, sci_mode=True),
                                          m._tensor_str.get_printoptions())[1]),
    "get_printoptions_default": lambda m: m._tensor_str.get_printoptions(),
    "printoptions_block": lambda m: _in_printoptions(m),
    # ``_str``'s tensor_contents stands for the values; the suffixes stay
    "tensor_contents": lambda m: [m._tensor_str._str(t, tensor_contents="XYZ") for t in (
        m.ones(2), m.ones(2, dtype=m.int8), m.zeros(0, 3), m.ones(2, device="meta"),
        m.ones(2, requires_grad=True) * 2)],
    "tensor_str": lambda m: [m._tensor_str._tensor_str(t, 9) for t in (
        m.arange(40.).reshape(4, 10) / 3, m.zeros(0), m.tensor(2), m.tensor([1j, 2.]))],
}


def _in_printoptions(m):
    with m._tensor_str.printoptions(precision=2, threshold=3):
        inside = repr(m.tensor([1.23456, 2., 3., 4.]))
    return inside, repr(m.tensor([1.23456, 2., 3., 4.])), m._tensor_str.get_printoptions()


@_cases(FIXED)
def test_repr_fixed(name):
    """Cases that differed from torch before: a Parameter subclass's repr lacked torch's
    ``Parameter(...)``; a meta tensor's suffixes were joined on one line past the line width;
    torch._tensor_str had no ``get_printoptions``, ``printoptions``, ``_str`` or
    ``_tensor_str``."""
    same_as_torch(FIXED[name])


# ============================================================ 3. format and the other reprs

FORMAT = {
    "0d_float_spec": lambda m: format(m.tensor(3.14159), ".3f"),
    "0d_int_spec": lambda m: format(m.tensor(3), "05d"),
    "0d_int_as_float": lambda m: format(m.tensor(3), ".2f"),
    "0d_bool": lambda m: [format(m.tensor(True), s) for s in ("", "d", ">6")],
    "0d_uint8_hex": lambda m: format(m.tensor(200, dtype=m.uint8), "x"),
    "0d_complex": lambda m: format(m.tensor(1 + 2j), ".2f"),
    "0d_half": lambda m: [format(m.tensor(1.1, dtype=d), "") for d in (m.float16, m.bfloat16)],
    "0d_requires_grad": lambda m: f"{m.tensor(1.1, requires_grad=True):.1f}",
    "nd_spec": lambda m: format(m.tensor([1.1]), ".3f"),
    "nd_empty_spec": lambda m: f"{m.tensor([1.1, 2.])}",
    "param_0d_spec": lambda m: format(m.nn.Parameter(m.tensor(2.)), ".2f"),
    "item_str": lambda m: [str(m.tensor(1.1, dtype=d).item()) for d in (
        m.float16, m.bfloat16, m.float32, m.float64, m.int8, m.bool, m.complex64)],
    "item_uint64": lambda m: str(m.tensor(2 ** 64 - 1, dtype=m.uint64).item()),
    "size": lambda m: [repr(m.Size([2, 3])), str(m.Size([])), repr(m.ones(2, 3, 4).shape[1:]),
                       f"{m.ones(2).shape}"],
    "dtype": lambda m: [repr(getattr(m, d)) for d in (
        "float", "double", "half", "bfloat16", "long", "cfloat", "uint16", "float8_e4m3fn",
        "float8_e8m0fnu")],
    "device": lambda m: [repr(m.device("cpu")), str(m.device("cuda:1")),
                         repr(m.device("cpu", 0)), repr(m.device("meta"))],
    "finfo": lambda m: [repr(m.finfo(getattr(m, d))) for d in (
        "float16", "bfloat16", "float32", "float64", "complex64", "float8_e4m3fn",
        "float8_e5m2", "float8_e8m0fnu")],
    "iinfo": lambda m: [repr(m.iinfo(getattr(m, d))) for d in (
        "int8", "uint8", "int64", "uint16", "uint64")],
}


@_cases(FORMAT)
def test_format_and_other_reprs(name):
    same_as_torch(FORMAT[name])


# ============================================================ 4. format specs and repr keywords

SPECS = ("", ".2f", "d", ">10", "e", "x", "s", "+.3g")


def _formats(x, specs=SPECS):
    """``format(x, spec)`` for each spec: the text, or the exception's class name and message
    (so that one refused spec does not hide the others)."""
    out = []
    for s in specs:
        try:
            out.append(format(x, s))
        except Exception as e:
            out.append((type(e).__name__, str(e)))
    return out


TENSOR_FORMATS = {
    # a 0-dim meta tensor has no number: format is its repr, a spec torch's TypeError
    "meta_0d": lambda m: m.tensor(1.5, device="meta"),
    "meta_0d_int": lambda m: m.empty((), dtype=m.int64, device="meta"),
    "meta_0d_requires_grad": lambda m: m.empty((), device="meta", requires_grad=True),
    "meta_nd": lambda m: m.empty(2, device="meta"),
    # a 0-dim sparse tensor formats its number (torch's item(): 0 without entries)
    "sparse_0d": lambda m: m.tensor(1.0).to_sparse(),
    "sparse_0d_int": lambda m: m.tensor(3).to_sparse(),
    "sparse_0d_requires_grad": lambda m: m.tensor(2.5, requires_grad=True).to_sparse(),
    "sparse_0d_no_entries": lambda m: m.sparse_coo_tensor(
        m.zeros(0, 0, dtype=m.int64), m.tensor([], dtype=m.float64), ()),
    "sparse_0d_zero": lambda m: m.tensor(-0.).to_sparse(),       # (no entry: torch's item 0)
    "sparse_0d_zero_requires_grad": lambda m: m.tensor(0., requires_grad=True).to_sparse(),
    "sparse_0d_duplicates": lambda m: m.sparse_coo_tensor(
        m.zeros(0, 2, dtype=m.int64), m.tensor([1., 2.]), ()),
    "sparse_nd": lambda m: m.tensor([1.0, 0.]).to_sparse(),
    # plain tensors over dtypes, 0-dim and not
    **{f"0d_{d}": (lambda d: lambda m: m.tensor(-5 if "int" in d else 1.1,
                                                dtype=getattr(m, d)))(d)
       for d in ("float16", "bfloat16", "float32", "float64", "int8", "int64")},
    "0d_uint8": lambda m: m.tensor(250, dtype=m.uint8),
    "0d_bool": lambda m: m.tensor(False),
    "0d_complex": lambda m: m.tensor(1 + 2j, dtype=m.complex64),
    "0d_nan_inf": lambda m: m.tensor([nan, -inf])[1],
    "0d_requires_grad": lambda m: m.tensor(1.5, requires_grad=True),
    "0d_non_leaf": lambda m: m.tensor(1.5, requires_grad=True) * 2,
    "0d_view": lambda m: m.ones(3)[1],
    "0d_big_int": lambda m: m.tensor(2 ** 62),
    "nd_one_element": lambda m: m.ones(1),
    "nd_2d": lambda m: m.ones(2, 2),
    "nd_empty": lambda m: m.ones(0),
    "param_0d": lambda m: m.nn.Parameter(m.tensor(2.)),
    "subclass_0d": lambda m: m.tensor(2.).as_subclass(_subclass(m)),
    "subclass_nd": lambda m: m.ones(2).as_subclass(_subclass(m)),
}


def _subclass(m):
    class MyTensor(m.Tensor):
        pass
    return MyTensor


@_cases(TENSOR_FORMATS)
def test_tensor_format_specs(name):
    """``format(t, spec)`` and f-strings of tensors: a 0-dim meta tensor formatted as its repr
    and refused a spec with torch's TypeError (it called ``.item()`` and raised); a 0-dim
    sparse tensor formatted as its number (it printed its repr)."""
    same_as_torch(lambda m: (lambda t: _formats(t) + [f"{t}", f"{t:}"])(TENSOR_FORMATS[name](m)))


C_TYPES = {
    "size": lambda m: m.Size([2, 3]),
    "size_empty": lambda m: m.ones(()).shape,
    "dtype": lambda m: m.float32,
    "dtype_float8": lambda m: m.float8_e4m3fn,
    "device": lambda m: m.device("cpu"),
    "device_index": lambda m: m.device("cuda", 1),
    "finfo": lambda m: m.finfo(m.bfloat16),
    "finfo_default": lambda m: m.finfo(),
    "finfo_float4": lambda m: m.finfo(m.float4_e2m1fn_x2),
    "dtype_bits": lambda m: m.uint3,
    "iinfo": lambda m: m.iinfo(m.uint8),
    "layout": lambda m: m.strided,
    "layout_sparse": lambda m: m.sparse_coo,
    "memory_format": lambda m: m.channels_last,
    "size_past_int64": lambda m: m.Size([2 ** 70]),
    "return_types": lambda m: m.max(m.ones(2, 2), 0),
    "stream": lambda m: m.Stream(),
    "event": lambda m: m.Event(),
}


@_cases(C_TYPES)
def test_c_type_format_specs(name):
    """``format(x, spec)`` of torch's C types: ``str(x)`` for an empty spec, else the TypeError
    naming the type as torch's C name does (``torch.Size.__format__``; it said ``Size``)."""
    same_as_torch(lambda m: _formats(C_TYPES[name](m)))


def test_generator_repr_and_format():
    """A Generator prints as object's repr of torch's ``torch._C.Generator``, with torchlike's
    path for torch's (``<torchlike._C.Generator object at 0x...>``; it printed
    ``torchlike.Generator``), the default generator too; a spec is torch's TypeError."""
    import re

    import torch
    import torchlike

    def shown(m):
        texts = [repr(m.Generator()), str(m.default_generator), f"{m.Generator()}"]
        return [re.sub(r" at 0x[0-9a-f]+>$", " at ADDR>", t) for t in texts], \
            _formats(m.Generator(), ("d", ">30"))

    want, got = shown(torch), shown(torchlike)
    assert got[0] == [t.replace("<torch.", "<torchlike.", 1) for t in want[0]], got
    assert got[1] == want[1]

    def subclass_repr(m):
        class MyGenerator(m.Generator):
            pass

        g = MyGenerator()
        return repr(g).replace(f" at {id(g):#x}>", " at ADDR>")

    assert subclass_repr(torchlike) == subclass_repr(torch)


REPR_CONTENTS = {
    # Tensor.__repr__'s tensor_contents stands for the values (it was ignored)
    "plain": lambda m: [t.__repr__(tensor_contents="XYZ") for t in (
        m.ones(2), m.ones(2, dtype=m.int8), m.zeros(0, 3), m.tensor(2.))],
    "suffixes": lambda m: [t.__repr__(tensor_contents="[1, 2]") for t in (
        m.ones(2, device="meta"), m.ones(2, requires_grad=True) * 2,
        m.ones(2, dtype=m.float64, requires_grad=True))],
    "none": lambda m: m.arange(3.).__repr__(tensor_contents=None),
    "unbound_on_parameter": lambda m: m.Tensor.__repr__(m.nn.Parameter(m.ones(2)),
                                                         tensor_contents="P"),
    "parameter_refuses_it": lambda m: m.nn.Parameter(m.ones(2)).__repr__(tensor_contents="P"),
    "positional_refused": lambda m: m.ones(2).__repr__("XYZ"),
}


@_cases(REPR_CONTENTS)
def test_repr_tensor_contents(name):
    same_as_torch(REPR_CONTENTS[name])
