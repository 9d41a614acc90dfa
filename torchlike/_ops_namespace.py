"""``torchlike.ops``: operators by qualified name, as ``torch.ops``.

``torch.ops.<ns>.<op>`` is an ``OpOverloadPacket`` (every overload of the op; calling it picks
the first overload whose schema accepts the arguments) and ``torch.ops.<ns>.<op>.<overload>``
an ``OpOverload`` (``.default`` for the overload without a name).

* Operators defined through ``torchlike.library`` (``custom_op``, ``Library.define``) live in
  their own namespaces and run their registered kernels (``_library/registry.py``).
* ``torch.ops.aten.<op>`` maps torch's built-in operators onto torchlike's functions: the
  top-level function of that name (``aten.add`` -> ``torchlike.add``), else the Tensor method
  (``aten.view``, ``aten.expand``), else ``nn.functional``'s function, ``linalg_*``/``fft_*``/
  ``special_*`` onto those namespaces, and a few ATen-only ops (``slice``, ``index``,
  ``_to_copy``, ``_softmax``, ...). Its overload names are torch 2.13's
  (``_library/aten_overloads.py``); every overload of an op calls the same function, which
  reads its arguments as torch's Python binding does.

>>> import torchlike as torch
>>> torch.ops.aten.add.Tensor(torch.ones(2), torch.ones(2), alpha=2)
tensor([3., 3.])
"""
from __future__ import annotations

import importlib
import os
import types

from ._library import registry as _reg
from ._library.schema import CallError, bind

__all__ = ["ops", "OpOverload", "OpOverloadPacket"]


# ------------------------------------------------------------------ overloads

class OpOverload:
    """One overload of an operator: ``torch.ops.ns.op.overload``."""

    def __init__(self, packet, overload_name, fn, schema=None, opdef=None):
        self._overloadpacket = packet
        self._overloadname = overload_name
        self._op = fn
        self._opdef = opdef
        if schema is not None:
            self._schema = schema
        ns, op = packet._qualified_op_name.split("::")
        self._name = f"{ns}::{op}" + ("" if overload_name == "default" else f".{overload_name}")
        self.__name__ = f"{op}.{overload_name}"
        self.__qualname__ = self._name
        self.__module__ = packet.__module__
        self._tags = list(opdef.tags) if opdef is not None else []
        self._defined_in_python = opdef is not None
        self.is_view = bool(schema is not None and schema._is_view_op()
                            and not schema.is_mutable)

    def __getattr__(self, name):
        if name == "_schema":
            raise NotImplementedError(
                f"torchlike: {self._name} has no schema: torchlike maps torch's built-in "
                f"operators onto its own functions and does not carry ATen's schemas (see "
                f"DIFFERENCES.md)")
        raise AttributeError(f"'OpOverload' object has no attribute '{name}'")

    @property
    def _namespace(self):
        return self._name.split("::", 1)[0]

    @property
    def _opname(self):
        return self._name.split("::", 1)[1].split(".")[0]

    @property
    def namespace(self):
        return self._namespace

    def name(self):
        return self._name

    @property
    def overloadpacket(self):
        return self._overloadpacket

    @property
    def op(self):
        return self._op

    @property
    def tags(self):
        return self._tags

    def __call__(self, /, *args, **kwargs):
        return self._op(*args, **kwargs)

    def redispatch(self, /, keyset, *args, **kwargs):
        """Run the operator below its autograd kernel (what an ``Autograd`` kernel registered
        ``with_keyset=True`` calls)."""
        if self._opdef is None:
            return self._op(*args, **kwargs)
        pos, kw, _, _ = bind(self._opdef.schema, args, kwargs)
        return _reg.dispatch(self._opdef, pos, kw, below_autograd=True)

    def has_kernel_for_dispatch_key(self, k):
        if self._opdef is None:
            return str(k) in ("CPU", "CUDA", "Meta", "CompositeImplicitAutograd")
        return _reg.has_kernel(self._opdef.name, str(k).split(".")[-1])

    def decompose(self, *args, **kwargs):
        return NotImplemented

    def __deepcopy__(self, memo=None):
        return self

    def __repr__(self):
        return f"<OpOverload(op='{self._namespace}.{self._opname}', " \
               f"overload='{self._overloadname}')>"

    def __str__(self):
        return f"{self._namespace}.{self._opname}.{self._overloadname}"

    def __hash__(self):
        return hash((self._name, id(self._op)))


class OpOverloadPacket:
    """Every overload of one operator: ``torch.ops.ns.op``."""

    __file__ = "torch.ops"

    def __init__(self, qualified_op_name, op_name, fn, overload_names, module):
        self._qualified_op_name = qualified_op_name
        self.__name__ = op_name
        self._op = fn
        self._overload_names = list(overload_names)
        self._dir = []
        self.__module__ = module

    def __repr__(self):
        return "<OpOverloadPacket(op='{}.{}')>".format(*self._qualified_op_name.split("::"))

    def __str__(self):
        return "{}.{}".format(*self._qualified_op_name.split("::"))

    def __hash__(self):
        return hash(self._qualified_op_name)

    def __deepcopy__(self, memo=None):
        return self

    @property
    def op(self):
        return self._op

    @property
    def _schemas(self):
        return {n: getattr(self, n)._schema for n in self.overloads()}

    def __getattr__(self, key):
        if key.startswith("__"):
            try:
                return getattr(self._op, key)
            except AttributeError:
                raise AttributeError(
                    f"'{self}' can't have an overload name beginning with '__' and the "
                    f"underlying op {self._op} has no attribute {key} either.") from None
        if key.startswith("_") and key != "_":
            raise AttributeError(f"'OpOverloadPacket' object has no attribute '{key}'")
        overload = self._resolve(key)
        if overload is None:
            raise AttributeError(
                f"The underlying op of '{self}' has no overload name '{key}'")
        setattr(self, key, overload)
        self._dir.append(key)
        return overload

    def _resolve(self, key):
        return None

    def __iter__(self):
        return iter(self._dir)

    def __call__(self, /, *args, **kwargs):
        return self._op(*args, **kwargs)

    def overloads(self):
        return list(self._overload_names)

    def op_overloads(self):
        return [getattr(self, n) for n in self.overloads()]


class _LibraryPacket(OpOverloadPacket):
    """A packet of an operator defined through ``torchlike.library``."""

    def _resolve(self, key):
        name = self._qualified_op_name + ("" if key == "default" else "." + key)
        d = _reg.find(name)
        if d is None:
            return None

        def call(*args, **kwargs):
            return _reg.call(d, args, kwargs)

        call.__name__ = d.opname
        call.__module__ = self.__module__
        return OpOverload(self, key, call, d.schema, d)


def _make_packet_call(packet):
    def call(*args, **kwargs):
        names = [n for n in packet.overloads()]
        if len(names) == 1:
            return getattr(packet, names[0])(*args, **kwargs)
        errors = []
        for n in names:
            ov = getattr(packet, n)
            d = ov._opdef
            try:
                pos, kw, _, _ = bind(d.schema, args, kwargs, several=True)
            except CallError as e:
                errors.append(str(e))
                continue
            return _reg.dispatch(d, pos, kw)
        raise RuntimeError("Overloaded torch operator invoked from Python failed to match any "
                           "schema:\n" + "".join(e + "\n\n" for e in errors))
    return call


# ------------------------------------------------------------------ aten: torch's built-in ops

def _aten_extra():
    """ATen operators with no torchlike function of their name."""
    import torchlike as t
    F = t.nn.functional

    def slice_(self, dim=0, start=None, end=None, step=1):
        key = [slice(None)] * (dim % self.dim()) + [slice(start, end, step)]
        return self[tuple(key)]

    def index(self, indices):
        return self[tuple(slice(None) if i is None else i for i in indices)]

    def to_copy(self, *, dtype=None, layout=None, device=None, pin_memory=None,
                non_blocking=False, memory_format=None):
        return self.to(dtype=dtype if dtype is not None else self.dtype,
                       device=device if device is not None else self.device, copy=True)

    def softmax_(self, dim, half_to_float):
        return F.softmax(self, dim, dtype=t.float32 if half_to_float else None)

    def log_softmax_(self, dim, half_to_float):
        return F.log_softmax(self, dim, dtype=t.float32 if half_to_float else None)

    def copy(self, src, non_blocking=False):
        return src.to(dtype=self.dtype, device=self.device).expand(self.shape).clone()

    def sym_size(self, dim=None):
        return self.size() if dim is None else self.size(dim)

    def sym_stride(self, dim=None):
        return self.stride() if dim is None else self.stride(dim)

    return {"slice": slice_, "index": index, "_to_copy": to_copy, "_softmax": softmax_,
            "_log_softmax": log_softmax_, "copy": copy, "alias": lambda self: self.view(
                self.shape), "lift_fresh": lambda self: self, "lift": lambda self: self,
            "sym_size": sym_size, "sym_stride": sym_stride,
            "sym_numel": lambda self: self.numel(),
            "sym_storage_offset": lambda self: self.storage_offset()}


def aten_function(name):
    """The torchlike function ``torch.ops.aten.<name>`` runs, or None."""
    import torchlike as t
    f = t.__dict__.get(name)
    if f is None and not name.startswith("_"):
        try:
            f = getattr(t, name)
        except AttributeError:
            f = None
    if callable(f) and not isinstance(f, (type, types.ModuleType)):
        return f
    m = getattr(t.Tensor, name, None)
    if callable(m) and not isinstance(m, type):
        def method(*args, **kwargs):
            if "self" in kwargs:
                args = (kwargs.pop("self"),) + args
            return getattr(args[0], name)(*args[1:], **kwargs)
        method.__name__ = name
        return method
    f = getattr(t.nn.functional, name, None)
    if callable(f) and not isinstance(f, type):
        return f
    for prefix, ns in (("linalg_", "linalg"), ("fft_", "fft"), ("special_", "special")):
        if name.startswith(prefix):
            f = getattr(getattr(t, ns), name[len(prefix):], None)
            if callable(f):
                return f
    return _aten_extra().get(name)


class _AtenPacket(OpOverloadPacket):
    def _resolve(self, key):
        if key not in self._overload_names:
            return None
        return OpOverload(self, key, self._op)


def _self_keyword(f, list_returns):
    """An aten op's call: ``self=`` accepted by keyword; results as ATen returns them (a
    list for ``Tensor[]``, a plain tuple for several returns)."""
    def call(*args, **kwargs):
        if "self" in kwargs:
            args = (kwargs.pop("self"),) + args
        out = f(*args, **kwargs)
        if isinstance(out, tuple):
            return list(out) if list_returns else tuple(out)
        return out
    call.__name__ = getattr(f, "__name__", "op")
    call.__wrapped__ = f
    return call


# ------------------------------------------------------------------ namespaces

class _OpNamespace(types.ModuleType):
    """``torch.ops.<ns>``: operator packets by name, made on first access."""

    __file__ = "torch.ops"

    def __init__(self, name):
        super().__init__("torch.ops." + name)
        self.name = name
        self._dir = []

    def __iter__(self):
        return iter(self._dir)

    def __getattr__(self, op_name):
        if op_name in ("__origin__", "__self__"):
            raise AttributeError(
                f"Invalid attribute '{op_name}' for '_OpNamespace' '{self.name}'")
        qual = f"{self.name}::{op_name}"
        module = f"torch.ops.{self.name}"
        names = _reg.overloads_of(self.name, op_name)
        if names:
            packet = _LibraryPacket(qual, op_name, None, names, module)
            packet._op = _make_packet_call(packet)
            packet._op.__name__ = op_name
        elif self.name == "aten" and (f := _aten(op_name)) is not None:
            from ._library.aten_overloads import LIST_RETURNS, OVERLOADS
            packet = _AtenPacket(qual, op_name, _self_keyword(f, op_name in LIST_RETURNS),
                                 OVERLOADS[op_name].split(), module)
        else:
            raise AttributeError(
                f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'")
        setattr(self, op_name, packet)
        self._dir.append(op_name)
        return packet

    def _forget(self, op_name):
        if op_name in vars(self):
            delattr(self, op_name)
        if op_name in self._dir:
            self._dir.remove(op_name)


def _aten(op_name):
    from ._library.aten_overloads import OVERLOADS
    if op_name not in OVERLOADS:
        return None
    return aten_function(op_name)


class _HigherOrderNamespace(types.ModuleType):
    __file__ = "torch.ops"

    def __init__(self):
        super().__init__("torch.ops.higher_order")
        self._dir = []

    def __iter__(self):
        return iter(self._dir)

    def __getattr__(self, name):
        import torchlike as t
        f = {"cond": getattr(t, "cond", None),
             "while_loop": getattr(t, "while_loop", None)}.get(name)
        if f is None:
            raise AttributeError(f"'_HigherOrderNamespace' 'torch.ops.higher_order' object "
                                 f"has no attribute '{name}'")
        setattr(self, name, f)
        self._dir.append(name)
        return f


class _Ops(types.ModuleType):
    """``torch.ops``: a namespace object per operator namespace."""

    __file__ = "_ops.py"

    def __init__(self):
        super().__init__("torch.ops")
        self.loaded_libraries = set()
        self.higher_order = _HigherOrderNamespace()
        self._dir = []

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(f"module 'torch.ops' has no attribute '{name}'")
        namespace = _OpNamespace(name)
        setattr(self, name, namespace)
        self._dir.append(name)
        return namespace

    def __iter__(self):
        return iter(self._dir)

    def import_module(self, module):
        """Import a Python module whose import registers operators."""
        importlib.import_module(module)

    def load_library(self, path):
        """torchlike cannot load a shared library of C++ operators (they are built against
        libtorch's dispatcher): an ``OSError``, as torch's for a library it cannot load."""
        path = os.path.realpath(path) if os.path.exists(path) else path
        if not os.path.exists(path):
            raise OSError(f"Could not load this library: {path}")
        raise OSError(
            f"Could not load this library: {path} (torchlike cannot load compiled torch "
            f"operator libraries: they register C++ kernels with libtorch's dispatcher, which "
            f"torchlike does not have; define the operators in Python with "
            f"torchlike.library.custom_op instead. See DIFFERENCES.md)")


ops = _Ops()


def _forget(ns, op_name):
    """A definition changed: drop the cached packet so the next access sees it."""
    space = vars(ops).get(ns)
    if isinstance(space, _OpNamespace):
        space._forget(op_name)


_reg._listeners.append(_forget)
