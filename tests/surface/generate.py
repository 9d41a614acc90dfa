"""Regenerate ``torch_names.json``: the public names of torch 2.13's namespaces.

Run ``python tests/surface/generate.py`` with torch installed; the test suite reads the JSON
(``tests/test_surface.py``) and diffs torchlike against it both ways.
"""
from __future__ import annotations

import importlib
import inspect
import json
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(__file__))

NAMESPACES = [
    "torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.linalg",
    "torch.optim", "torch.optim.lr_scheduler", "torch.utils.data", "torch.autograd",
    "torch.cuda", "torch.backends.cudnn", "torch.backends.cuda", "torch.backends.mps", "torch.jit", "torch.amp", "torch.fft", "torch.special",
    "torch.distributions", "torch.func", "torch.autograd.functional", "torch.nn.utils",
    "torch.nn.utils.parametrize", "torch.nn.utils.parametrizations", "torch.random",
    "torch.testing", "torch.profiler", "torch.utils.checkpoint", "torch.accelerator",
    "torch.serialization", "torch.compiler", "torch.signal.windows",
]


_FOREIGN = {"typing", "typing_extensions", "collections", "contextlib", "functools", "abc",
            "dataclasses", "warnings", "inspect", "os", "sys", "math", "enum", "itertools",
            "numbers", "weakref", "threading", "io", "pickle", "copyreg", "builtins", "logging",
            "textwrap", "copy", "types", "operator", "pathlib", "re", "uuid", "numpy", "sympy"}


def _public(obj):
    names = set()
    for n in dir(obj):
        if n.startswith("_"):
            continue
        try:
            v = getattr(obj, n)
        except Exception:
            continue
        if isinstance(v, types.ModuleType):
            continue        # submodules are namespaces of their own
        mod = getattr(v, "__module__", None)
        if isinstance(mod, str) and mod.split(".")[0] in _FOREIGN:
            continue        # typing.Any, contextlib.contextmanager, ... re-exported by accident
        names.add(n)
    return names


def main():
    out = {}
    for ns in NAMESPACES:
        if ns == "torch.Tensor":
            obj = torch.Tensor
            names = {n for n in dir(obj) if not n.startswith("_")}
            dunders = {n for n in dir(obj) if n.startswith("__") and n.endswith("__")
                       and n in {"__add__", "__radd__", "__iadd__", "__sub__", "__rsub__",
                                 "__isub__", "__mul__", "__rmul__", "__imul__", "__truediv__",
                                 "__rtruediv__", "__itruediv__", "__floordiv__",
                                 "__rfloordiv__", "__ifloordiv__", "__mod__", "__rmod__",
                                 "__imod__", "__pow__", "__rpow__", "__ipow__", "__matmul__",
                                 "__rmatmul__", "__imatmul__", "__and__", "__rand__",
                                 "__iand__", "__or__", "__ror__", "__ior__", "__xor__",
                                 "__rxor__", "__ixor__", "__lshift__", "__rlshift__",
                                 "__ilshift__", "__rshift__", "__rrshift__", "__irshift__",
                                 "__neg__", "__pos__", "__abs__", "__invert__", "__eq__",
                                 "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
                                 "__getitem__", "__setitem__", "__len__", "__iter__",
                                 "__contains__", "__bool__", "__float__", "__int__",
                                 "__index__", "__complex__", "__array__", "__dlpack__",
                                 "__dlpack_device__", "__reversed__", "__format__",
                                 "__deepcopy__", "__reduce_ex__", "__hash__", "__repr__"}}
            names |= dunders
        else:
            obj = importlib.import_module(ns)
            names = _public(obj)
        out[ns] = sorted(names)
    from out_probe import takes_out
    takes = {}
    for ns in ("torch", "torch.linalg", "torch.special", "torch.fft", "torch.nn.functional"):
        mod = importlib.import_module(ns)
        takes[ns] = sorted(n for n in out[ns] if not n.endswith("_") and callable(getattr(mod, n))
                           and not isinstance(getattr(mod, n), type)
                           and takes_out(getattr(mod, n)))
    path = os.path.join(os.path.dirname(__file__), "torch_names.json")
    with open(path, "w") as f:
        json.dump({"torch_version": torch.__version__, "names": out, "out": takes}, f,
                  indent=0, sort_keys=True)
        f.write("\n")
    print(path, {k: len(v) for k, v in out.items()})


if __name__ == "__main__":
    main()
