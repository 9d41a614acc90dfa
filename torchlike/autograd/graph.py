"""Tape nodes: one Node per recorded op call, one AccumulateGrad per leaf that requires grad."""
from __future__ import annotations

import itertools
import weakref

from ..utils.hooks import RemovableHandle

__all__ = ["Node"]

_seq = itertools.count()
_ACC_SEQ = 2 ** 62

_FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")


class Node:
    """A recorded op call: the backward of one forward op (torch's ``grad_fn``).

    ``next_edges[i]`` is ``(node, output_nr)`` for the i-th input whose gradient is computed, or
    ``None``. ``vjp`` holds the residuals of ``jax.vjp`` (a pytree) and ``compiled`` the cached
    jitted backward; ``inputs`` are kept for ``create_graph=True``.
    """

    __slots__ = ("_name", "next_edges", "compiled", "vjp", "inputs", "out_meta", "seq",
                 "pre_hooks", "retains", "saves", "freed", "post_hooks", "_saved_versions",
                 "__weakref__")

    def __init__(self, name, next_edges, compiled, vjp, inputs, out_meta, saves=True):
        self._name = name
        self.next_edges = next_edges
        self.compiled = compiled
        self.vjp = vjp
        self.inputs = inputs
        self.out_meta = out_meta          # ((shape, jnp dtype) | None, ...) per output
        self.seq = next(_seq)
        self.pre_hooks = None             # {output_nr: {id: hook}}
        self.retains = None               # {output_nr: weakref(tensor)}
        self.post_hooks = None
        self.saves = saves
        self.freed = False
        self._saved_versions = None

    def name(self) -> str:
        return self._name

    def __repr__(self):
        return f"<{self._name} object at {hex(id(self))}>"

    @property
    def next_functions(self):
        return tuple((e[0], e[1]) if e is not None else (None, 0) for e in self.next_edges)

    def register_prehook(self, hook, output_nr=0):
        """Node pre-hook ``hook(grad_outputs) -> tuple or None`` (run after tensor hooks)."""
        if self.pre_hooks is None:
            self.pre_hooks = {}
        d = self.pre_hooks.setdefault(("node", 0), {})
        h = RemovableHandle(d)
        d[h.id] = hook
        return h

    def register_hook(self, hook):
        """Node post-hook ``hook(grad_inputs, grad_outputs) -> tuple or None``."""
        if self.post_hooks is None:
            self.post_hooks = {}
        h = RemovableHandle(self.post_hooks)
        self.post_hooks[h.id] = hook
        return h

    def _tensor_hooks(self, output_nr):
        if self.pre_hooks is None:
            self.pre_hooks = {}
        return self.pre_hooks.setdefault(output_nr, {})

    def release(self):
        if self.saves:
            self.vjp = None
            self.inputs = None
            self.freed = True

    def check_alive(self):
        if self.freed:
            raise RuntimeError(_FREED_MSG)
        if self._saved_versions:
            for vc, expected, tensor, meta in self._saved_versions:
                if vc[0] != expected:
                    raise RuntimeError(_version_message(self, vc[0], expected, tensor, meta))


_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half",
               "bfloat16": "BFloat16", "int64": "Long", "int32": "Int", "int16": "Short",
               "int8": "Char", "uint8": "Byte", "bool": "Bool", "complex64": "ComplexFloat",
               "complex128": "ComplexDouble"}


def _version_message(node, now, expected, tensor, meta):
    import re
    import numpy as np
    if tensor is not None:
        shape, dt = tuple(tensor._data.shape), tensor._data.dtype
        fn = tensor.grad_fn
    else:
        (shape, dt), fn = meta, node
    name = _TYPE_NAMES.get(np.dtype(dt).name, str(dt))
    what = f"[torch.{name}Tensor [{', '.join(map(str, shape))}]]"
    if fn is not None:
        what += f", which is output 0 of {re.sub(r'Backward[0-9]*$', '', fn.name())},"
    return ("one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: {what} is at version {now}; expected version {expected} "
            "instead. Hint: enable anomaly detection to find the operation that failed to "
            "compute its gradient, with torch.autograd.set_detect_anomaly(True, "
            "check_nan=False).")


class AccumulateGrad(Node):
    """The node at a leaf: accumulates the incoming gradient into ``variable.grad``."""

    __slots__ = ("variable_ref", "post_acc_hooks")

    def __init__(self, tensor):
        super().__init__("AccumulateGrad", (), None, None, None,
                         ((tuple(tensor.shape), tensor._data.dtype),), saves=False)
        self.variable_ref = weakref.ref(tensor)
        self.post_acc_hooks = None
        # as in torch, leaves accumulate as soon as they are ready (highest priority)
        self.seq = _ACC_SEQ

    @property
    def variable(self):
        return self.variable_ref()
