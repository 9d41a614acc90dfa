"""Finding the state a compiled function reads and writes.

A compiled function's state is reached from what the function can name: its arguments, its
closure cells, the globals its code (and the code of plain Python functions it names) refers
to, and the attributes of user objects among those (``self.model``, ``trainer.opt``). From
there: modules (their parameters and buffers), optimizers (their parameters, ``.grad``s, state
and hyperparameters), schedulers (their optimizer), Tensors and Generators.
"""
from __future__ import annotations

import os
import types

from .._random import Generator, default_generator
from .._tensor import Tensor

__all__ = ["Found", "discover"]

_TL_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_MAX_DEPTH = 4


class Found:
    __slots__ = ("modules", "opts", "tensors", "gens")

    def __init__(self):
        self.modules, self.opts, self.tensors, self.gens = [], [], [], []


def _library_code(fn):
    f = getattr(getattr(fn, "__code__", None), "co_filename", "") or ""
    return f.startswith(_TL_DIR) or "/site-packages/" in f or "/dist-packages/" in f


def _code_names(code, out):
    out.update(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code_names(c, out)


def discover(fn, args, kwargs):
    from ..nn.modules.module import Module
    from ..optim.optimizer import Optimizer
    found = Found()
    seen = set()

    def scan(obj, depth):
        if id(obj) in seen or depth > _MAX_DEPTH:
            return
        seen.add(id(obj))
        if isinstance(obj, Tensor):
            found.tensors.append(obj)
        elif isinstance(obj, Module):
            found.modules.append(obj)
        elif isinstance(obj, Optimizer):
            found.opts.append(obj)
        elif isinstance(obj, Generator):
            found.gens.append(obj)
        elif isinstance(obj, (types.ModuleType, type, str, bytes, int, float, complex, bool)):
            return
        elif isinstance(obj, types.MethodType):
            scan(obj.__self__, depth)
            scan(obj.__func__, depth)
        elif isinstance(obj, types.FunctionType):
            if depth and _library_code(obj):
                return
            names = set()
            _code_names(obj.__code__, names)
            g = obj.__globals__
            for n in sorted(names):
                if n in g:
                    scan(g[n], depth + 1)
            for cell in obj.__closure__ or ():
                try:
                    scan(cell.cell_contents, depth + 1)
                except ValueError:      # an empty cell
                    pass
            for d in obj.__defaults__ or ():
                scan(d, depth + 1)
            for d in (obj.__kwdefaults__ or {}).values():
                scan(d, depth + 1)
        elif isinstance(obj, (list, tuple, set, frozenset)):
            if len(obj) <= 256:
                for x in obj:
                    scan(x, depth + 1)
        elif isinstance(obj, dict):
            if len(obj) <= 256:
                for x in list(obj.values()):
                    scan(x, depth + 1)
        elif hasattr(obj, "optimizer") and isinstance(getattr(obj, "optimizer", None),
                                                       Optimizer):
            scan(obj.optimizer, depth)          # an lr scheduler
        elif isinstance(getattr(obj, "__dict__", None), dict) and \
                not type(obj).__module__.startswith(("torchlike", "jax", "numpy", "builtins")):
            for x in list(vars(obj).values()):
                scan(x, depth + 1)

    scan(fn, 0)
    for a in args:
        scan(a, 1)
    for a in kwargs.values():
        scan(a, 1)
    if default_generator not in found.gens:
        found.gens.insert(0, default_generator)
    return found
