"""torch's symbolic-shape helpers (``torch.SymInt``, ``torch.sym_max``, ...) on plain numbers.

torchlike traces with jax, whose shapes are concrete Python ints, so these are the plain
operations; ``SymInt``/``SymFloat``/``SymBool`` exist for annotations and ``isinstance`` checks
(no value is ever one, as in eager torch).
"""
from __future__ import annotations

import builtins
import math

__all__ = ["SymInt", "SymFloat", "SymBool", "sym_int", "sym_float", "sym_max", "sym_min",
           "sym_not", "sym_ite", "sym_sum", "sym_sqrt", "get_device_module"]


class SymInt:
    """A symbolic integer under torch.compile; never an eager value."""


class SymFloat:
    """A symbolic float under torch.compile; never an eager value."""


class SymBool:
    """A symbolic bool under torch.compile; never an eager value."""


def sym_int(a):
    return math.trunc(a) if isinstance(a, float) else builtins.int(a)


def sym_float(a):
    return builtins.float(a)


def sym_max(a, b):
    return builtins.max(a, b)


def sym_min(a, b):
    return builtins.min(a, b)


def sym_not(a):
    return not a


def sym_ite(b, t, f):
    return t if b else f


def sym_sum(args):
    return builtins.sum(args)


def sym_sqrt(a):
    return math.sqrt(a)


def get_device_module(device=None):
    """The namespace of a device type (``torchlike.cuda`` for ``"cuda:0"``; the current
    accelerator's, or ``torchlike.cpu``, for None)."""
    import torchlike
    if isinstance(device, torchlike.device):
        name = device.type
    elif isinstance(device, str):
        name = torchlike.device(device).type
    elif device is None:
        acc = torchlike.accelerator.current_accelerator()
        name = acc.type if acc is not None else "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or "
                           "None")
    module = getattr(torchlike, name, None)
    if module is None:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as "
                           f"'torch.{name}'.")
    return module


# public classes report their public path, as torch's do
for _cls in (SymInt, SymFloat, SymBool):
    _cls.__module__ = "torchlike"
