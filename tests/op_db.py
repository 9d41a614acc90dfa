"""The op database: every op table of the suite, indexed by the public function it exercises.

Each ``tests/test_ops_*.py`` table is a list of ``oracle.Case`` rows named ``<op>`` or
``<op>_<variant>`` (the eight-row pattern: plain, ``_method``, ``_f64``, ``_edge``, ``_empty``,
``_0dim``, ``_inplace``, ``_int``); this module gathers them into ``DB[op] -> [Case]`` so that
one test can ask which public ops have no entry and another can run every ``out=``-capable op
with ``out`` through the rows it already has.
"""
from __future__ import annotations

import importlib

import torchlike

TABLES = [
    ("test_ops_core", "CASES"), ("test_ops_pointwise", "CASES"), ("test_ops_reduce", "CASES"),
    ("test_ops_shape", "CASES"), ("test_ops_index", "GET"), ("test_ops_linalg", "CASES"),
    ("test_ops_conversion", "CASES"), ("test_ops_math_families", "CASES"),
    ("test_ops_math_families", "MORE"), ("test_random", "RCASES"),
    ("test_ops_toplevel_forms", "CASES"), ("test_fft", "CASES"), ("test_special", "CASES"),
]


def _load():
    cases = []
    for mod, attr in TABLES:
        try:
            m = importlib.import_module(mod)
        except ImportError:
            continue
        cases.extend(getattr(m, attr, []))
    return cases


def public_ops():
    """torchlike's public functions that are ops (declared in ``torchlike._ops`` or nn's
    functional module), by top-level name."""
    out = {}
    for n, f in vars(torchlike).items():
        if n.startswith("_") or not callable(f) or isinstance(f, type):
            continue
        mod = getattr(f, "__module__", "") or ""
        if mod.startswith(("torchlike._ops", "torchlike.nn.functional", "torchlike._creation")):
            out[n] = f
    return out


def _op_of(name, names):
    best = None
    for p in names:
        if name == p or name.startswith(p + "_"):
            if best is None or len(p) > len(best):
                best = p
    return best


ALL_CASES = _load()
NAMES = set(public_ops())
DB: dict = {}
for _c in ALL_CASES:
    _op = _op_of(_c.name, NAMES)
    if _op is not None:
        DB.setdefault(_op, []).append(_c)
