"""torch's checks on what a tensor hook returns (``check_hook_result``).

torch's engine validates a hook's result against the gradient it was given
(``check_variable_result`` in torch/csrc/autograd): a non-Tensor raises TypeError, another
dtype or device raises "hook 'name' has changed the type of value (was ... got ...)", another
shape "hook 'name' has changed the size of value". The engine calls ``check_hook_result``
after each tensor hook that returned something.
"""
from __future__ import annotations

import numpy as np

from .._dtype import LEGACY_NAMES

__all__ = ["check_hook_result", "hook_name", "type_string"]

# torch's Tensor.type() strings (what its message prints); complex types print their legacy
# backend type names
_COMPLEX = {"complex64": "ComplexFloatType", "complex128": "ComplexDoubleType",
            "bfloat16": "BFloat16Type"}


def hook_name(hook):
    """The name torch prints for ``hook``: its ``__name__``, else ``<unknown>``."""
    name = getattr(hook, "__name__", None)
    return name if isinstance(name, str) else "<unknown>"


def _np_name(t):
    return np.dtype(t._d.dtype).name


def type_string(t):
    """torch's ``toString()`` of a tensor's type: ``torch.FloatTensor``,
    ``torch.cuda.FloatTensor``, ``CPUComplexFloatType``, ``CPUBFloat16Type``."""
    name = _np_name(t)
    dev = t.device.type
    if name in _COMPLEX:
        return ("CUDA" if dev == "cuda" else "CPU") + _COMPLEX[name]
    base = LEGACY_NAMES[name] + "Tensor" if name in LEGACY_NAMES else name
    return f"torch.cuda.{base}" if dev == "cuda" else f"torch.{base}"


def check_hook_result(hook, old, new):
    """Raise torch's error if tensor hook ``hook``, given gradient ``old`` (a Tensor),
    returned ``new`` that cannot replace it. ``None`` (keep ``old``) passes.

    Cheap: a type check, a dtype and device comparison, a shape comparison.
    """
    if new is None:
        return
    if not isinstance(new, _tensor_class(old)):
        raise TypeError(f"expected Variable, but hook returned '{_tp_name(new)}'")
    if new._d.dtype != old._d.dtype or new.device.type != old.device.type:
        raise RuntimeError(f"hook '{hook_name(hook)}' has changed the type of value (was "
                           f"{type_string(old)} got {type_string(new)})")
    if tuple(new._d.shape) != tuple(old._d.shape):
        raise RuntimeError(f"hook '{hook_name(hook)}' has changed the size of value")


def _tensor_class(t):
    """Tensor, found from a tensor's own class (autograd imports nothing above itself)."""
    return next((c for c in type(t).__mro__ if c.__name__ == "Tensor"), type(t))


def _tp_name(v):
    tp = type(v)
    if tp.__module__ == "builtins" or tp.__flags__ & (1 << 9):    # Py_TPFLAGS_HEAPTYPE
        return tp.__name__
    return f"{tp.__module__}.{tp.__name__}"
