"""Finding the state a compiled function reads and writes.

A compiled function's state is reached from what the function can name: its arguments, its
closure cells, the globals its code (and the code of plain Python functions it names) refers
to, and the attributes of user objects among those (``self.model``, ``trainer.opt``). From
there: modules (their parameters and buffers; the methods of their user classes, whose globals
their forward reads), optimizers (their parameters, ``.grad``s, state
and hyperparameters), schedulers (their optimizer), Tensors and Generators; and the Python
values met on the way (numbers, strings, None, numpy arrays and scalars: globals, closure cells,
attributes of modules and user objects, items of dicts and tuples), which a program bakes in,
for its guard key.
"""
from __future__ import annotations

import os
import types
from collections import OrderedDict

import numpy as np

from .._random import Generator, default_generator
from .._tensor import Tensor

__all__ = ["Found", "discover"]

_TL_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_MAX_DEPTH = 4


class Found:
    __slots__ = ("modules", "opts", "tensors", "gens", "values", "holders")

    def __init__(self):
        self.modules, self.opts, self.tensors, self.gens = [], [], [], []
        # the Python numbers, strings and None met on the way (module attributes among them),
        # in the walk's order: a program bakes them in, so they are part of its guard key
        self.values = []
        # where the function could store a tensor it computes (``_trace.Swap.watch``): the
        # lists and dicts met, the user objects' attribute dicts, closure cells, and the
        # global names its code reads ((globals dict, names) pairs)
        self.holders = []


_VALUES = frozenset((int, float, complex, bool, str, bytes, type(None)))


def _value(v):
    """A Python value as a guard: its type and value (nan equal to nan)."""
    return (v.__class__, v if v == v else "nan")


def _array_value(a):
    """A numpy array or scalar as a guard: its type, shape, dtype and contents (their hash past
    4 KB): a program that reads it (``torch.from_numpy(W)``, ``float(W.sum())``) bakes its
    values in, so a write into it or a new array compiles anew, as torch.compile, which reads
    a numpy array as an input, sees the new values."""
    b = np.ascontiguousarray(a).tobytes()
    return (a.__class__, a.shape, a.dtype.str, b if len(b) <= 4096 else hash(b))


def module_values(mod, out, tensors, objects, subs=None):
    """Append the Python values held by ``mod`` and its submodules (``self.scale``,
    ``self.training``, ``p`` of a Dropout) to ``out``: what its forward may read and bake into
    a program (not the private caches of torchlike's own modules); and their tensors that are
    plain attributes, not parameters or buffers (``self.scale = torch.tensor(2.0)``), or items
    of plain lists, tuples and dicts they hold (``self.anchors = [torch.ones(3), ...]``), to
    ``tensors``: state, threaded through the program as parameters are; and the user objects
    they hold (a config, a helper holding a tensor), to ``objects``: scanned as the function's
    own user objects are (their numbers guarded, their tensors state)."""
    add = out.append
    for sub in (walk_modules([mod]) if subs is None else subs):
        own = sub.__class__.__module__.startswith("torchlike.")
        for k, v in vars(sub).items():
            c = v.__class__
            if c in _VALUES:
                if not (own and k[0] == "_"):
                    add((k, c, v if c is not float or v == v else "nan"))
            elif c in _PLAIN:
                if not (own and k[0] == "_") and k not in _MODULE_INTERNALS:
                    _held_tensors(v, tensors, objects, 2)
            elif isinstance(v, Tensor):
                tensors.append(v)
            elif isinstance(v, (np.ndarray, np.generic)):
                if not (own and k[0] == "_"):
                    add((k, _array_value(v)))
            elif not own and is_user_object(v):
                objects.append(v)
    return out


def walk_modules(roots):
    """Every module under ``roots`` once, parents first (``named_modules``' order), as a list,
    without its generators: a call's guard walks them on every call."""
    out, seen = [], set()
    stack = list(reversed(roots))
    while stack:
        m = stack.pop()
        if id(m) in seen:
            continue
        seen.add(id(m))
        out.append(m)
        stack.extend(reversed([c for c in m._modules.values() if c is not None]))
    return out


def is_user_object(v):
    """An instance of a user's class (not a function, class, module, or an object of
    torchlike, jax or numpy): its attributes are scanned."""
    return isinstance(getattr(v, "__dict__", None), dict) and \
        not type(v).__module__.startswith(("torchlike", "jax", "numpy", "builtins"))


def _held_tensors(v, tensors, objects, depth):
    """The tensors and user objects among the items of a plain container ``v`` (and of the
    containers in it, ``depth`` levels down)."""
    if len(v) > 256:
        return
    for x in (v.values() if isinstance(v, dict) else v):
        if isinstance(x, Tensor):
            tensors.append(x)
        elif x.__class__ in _PLAIN:
            if depth:
                _held_tensors(x, tensors, objects, depth - 1)
        elif is_user_object(x):
            objects.append(x)


# a Module's own containers (its parameters, buffers, submodules, hooks)
_MODULE_INTERNALS = frozenset((
    "_parameters", "_buffers", "_modules", "_non_persistent_buffers_set", "_backward_hooks",
    "_backward_pre_hooks", "_forward_hooks", "_forward_hooks_always_called",
    "_forward_hooks_with_kwargs", "_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
    "_load_state_dict_post_hooks", "_load_state_dict_pre_hooks", "_state_dict_hooks",
    "_state_dict_pre_hooks"))


_PLAIN = frozenset((dict, OrderedDict, set, list, tuple))     # (a module's usual attributes)


def _library_code(fn):
    f = getattr(getattr(fn, "__code__", None), "co_filename", "") or ""
    return f.startswith(_TL_DIR) or "/site-packages/" in f or "/dist-packages/" in f


def _code_names(code, out):
    out.update(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            _code_names(c, out)


_NAMES: dict = {}       # code object -> the global names it and its nested code read, sorted


def _sorted_names(code):
    names = _NAMES.get(code)
    if names is None:
        found = set()
        _code_names(code, found)
        names = tuple(sorted(found))
        if len(_NAMES) >= 4096:
            _NAMES.clear()
        _NAMES[code] = names
    return names


def discover(fn, args, kwargs):
    from ..nn.modules.module import Module
    from ..optim.optimizer import Optimizer
    found = Found()
    seen = set()
    classes = set()

    def scan(obj, depth):
        if obj.__class__ in _VALUES:
            found.values.append(_value(obj))
            return
        if isinstance(obj, (np.ndarray, np.generic)):
            found.values.append(_array_value(obj))
            return
        if id(obj) in seen or depth > _MAX_DEPTH:
            return
        seen.add(id(obj))
        if isinstance(obj, Tensor):
            found.tensors.append(obj)
        elif isinstance(obj, Module):
            found.modules.append(obj)
            plain, objects = [], []
            subs = walk_modules([obj])
            module_values(obj, found.values, plain, objects, subs)
            for t in plain:
                scan(t, depth)
            for o in objects:
                scan(o, depth + 1)
            # its (and its submodules') user classes: the globals their forward and helper
            # methods read, their class attributes (``scale = 2.0`` in the class body)
            for sub in subs:
                for klass in type(sub).__mro__:
                    if klass in classes or klass.__module__.startswith(("torchlike", "builtins")):
                        continue
                    classes.add(klass)
                    for k, f in list(vars(klass).items()):
                        if isinstance(f, types.FunctionType):
                            scan(f, depth + 1)
                        elif f.__class__ in _VALUES and k[:2] != "__":
                            found.values.append((k, _value(f)))
        elif isinstance(obj, Optimizer):
            found.opts.append(obj)
        elif isinstance(obj, Generator):
            found.gens.append(obj)
        elif isinstance(obj, (types.ModuleType, type, str, bytes, int, float, complex)):
            return
        elif isinstance(obj, types.MethodType):
            scan(obj.__self__, depth)
            scan(obj.__func__, depth)
        elif isinstance(obj, types.FunctionType):
            if depth and _library_code(obj):
                return
            g = obj.__globals__
            names = _sorted_names(obj.__code__)
            found.holders.append((g, names))
            for n in names:
                if n in g:
                    scan(g[n], depth + 1)
            for cell in obj.__closure__ or ():
                found.holders.append(cell)
                try:
                    scan(cell.cell_contents, depth + 1)
                except ValueError:      # an empty cell
                    pass
            for d in obj.__defaults__ or ():
                scan(d, depth + 1)
            for d in (obj.__kwdefaults__ or {}).values():
                scan(d, depth + 1)
        elif isinstance(obj, (list, tuple, set, frozenset)):
            if obj.__class__ is list:
                found.holders.append(obj)
            if len(obj) <= 256:
                # (the numbers in a list are guarded as torch.compile guards them: a program
                # reading ``k[0]`` bakes it in; a function appending to a list it closes over,
                # a log, changes its key on every call and, as torch's, meets the recompile
                # limit and runs eagerly)
                for x in obj:
                    scan(x, depth + 1)
        elif isinstance(obj, dict):
            if obj.__class__ in (dict, OrderedDict):
                found.holders.append(obj)
            if len(obj) <= 256:
                for x in list(obj.values()):
                    scan(x, depth + 1)
        elif hasattr(obj, "optimizer") and isinstance(getattr(obj, "optimizer", None),
                                                       Optimizer):
            scan(obj.optimizer, depth)          # an lr scheduler
        elif is_user_object(obj):
            found.holders.append(vars(obj))
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
