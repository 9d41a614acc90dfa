"""The operator registry behind ``torchlike.library`` and ``torchlike.ops``: schemas, kernels
per dispatch key, fake (meta) implementations, and the call path that picks a kernel the way
torch's dispatcher does for Python-registered operators.

torchlike has no C++ dispatcher: its own ops are Python functions over jax. What this module
keeps is the part of the dispatcher that operators defined through ``torch.library`` can see:

* a kernel per key: a backend (``CPU``, ``CUDA``, ``Meta``), ``CompositeExplicitAutograd``
  (every backend), ``CompositeImplicitAutograd`` (every backend and autograd: its ops are
  differentiated), ``Autograd``/``Autograd<Backend>`` (the autograd step itself);
* the order torch resolves them in: an autograd kernel first, then a composite-implicit one
  (when no backend kernel exists), then the backend's, ``CompositeExplicitAutograd``'s or
  ``CompositeImplicitAutograd``'s kernel; meta tensors use a ``Meta`` kernel or the fake impl;
* torch's autograd fallback for a backend kernel reached with inputs that require grad: its
  ops are recorded, and a backward through it warns (``"an autograd kernel was not registered
  to the Autograd key(s)"``).
"""
from __future__ import annotations

import sys
import threading
import warnings

from ..autograd import grad_mode as _gm
from .schema import CallError, bind, parse_schema

__all__ = ["Library", "OperatorDef", "find", "lookup", "dispatch", "call", "kernel_key"]

_lock = threading.RLock()
_DEFS = {}          # "ns::name" / "ns::name.overload" -> OperatorDef
_KERNELS = {}       # same names -> {dispatch key: [(fn, with_keyset, library), ...]}
_FAKES = {}         # same names -> [(fn, library, source), ...]
_DEF_LIBRARIES = {}  # namespace -> the Library(kind="DEF") that owns it
_listeners = []     # callables(qualnames) told when definitions go away (torch.ops caches)

# torch.library's module-level registries (``torch.library._impls`` / ``_defs``)
_impls = set()
_defs = set()

_DEVICE_KEYS = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "xla": "XLA", "mps": "MPS",
                "xpu": "XPU", "hpu": "HPU", "ipu": "IPU", "mtia": "MTIA", "lazy": "Lazy",
                "privateuseone": "PrivateUse1", "maia": "MAIA", "hip": "HIP", "ve": "VE",
                "fpga": "FPGA", "vulkan": "Vulkan", "mkldnn": "MkldnnCPU", "opengl": "OpenGL",
                "opencl": "OpenCL", "ideep": "IDEEP", "tpu": "XLA"}
_DEVICE_TYPES = ("cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, "
                 "xla, lazy, vulkan, mps, meta, hpu, mtia, privateuseone")
DISPATCH_KEYS = frozenset(
    list(_DEVICE_KEYS.values())
    + ["CompositeExplicitAutograd", "CompositeImplicitAutograd",
       "CompositeExplicitAutogradNonFunctional", "Autograd", "AutogradCPU", "AutogradCUDA",
       "AutogradMeta", "AutogradXLA", "AutogradOther", "AutogradMPS", "AutogradXPU",
       "BackendSelect", "Python", "ADInplaceOrView", "AutocastCPU", "AutocastCUDA",
       "AutocastXPU", "AutocastMPS", "FuncTorchBatched", "Functionalize", "Undefined",
       "PythonDispatcher", "PreDispatch", "Conjugate", "Negative", "ZeroTensor",
       "SparseCPU", "SparseCUDA", "QuantizedCPU", "QuantizedCUDA", "NestedTensorCPU",
       "NestedTensorCUDA", "FuncTorchDynamicLayerFrontMode", "Batched", "Tracer"])


def kernel_key(device_type):
    """The dispatch key of a device type (``"cpu"`` -> ``"CPU"``; ``"default"`` ->
    ``"CompositeExplicitAutograd"``), or a dispatch key given as is."""
    if device_type == "default":
        return "CompositeExplicitAutograd"
    if device_type in DISPATCH_KEYS:
        return device_type
    base = device_type.split(":")[0]
    if base in _DEVICE_KEYS:
        return _DEVICE_KEYS[base]
    raise RuntimeError(f"Expected one of {_DEVICE_TYPES} device type at start of device "
                       f"string: {device_type}")


class DispatchKeySet:
    """What a ``with_keyset=True`` kernel receives first. torchlike has no key sets to
    compute with: ``keyset & anything`` is the keyset, and ``op.redispatch(keyset, ...)``
    runs the operator below its autograd kernel."""

    def __and__(self, other):
        return self

    __rand__ = __or__ = __ror__ = __and__

    def has(self, key):
        return True

    def __repr__(self):
        return "DispatchKeySet(torchlike)"


_KEYSET = DispatchKeySet()


# ------------------------------------------------------------------ definitions

class OperatorDef:
    """One operator overload: its schema and what the library knows about it."""

    def __init__(self, schema, tags, library, source):
        self.schema = schema                 # with its namespace: "ns::name"
        self.tags = tuple(tags)
        self.library = library
        self.source = source
        ns, name = schema.name.split("::", 1)
        self.namespace = ns
        self.opname = name
        self.overload_name = schema.overload_name
        self.name = schema.name + ("." + schema.overload_name if schema.overload_name else "")
        self.custom = None                   # the CustomOpDef that made it, if one did
        self.bump_mutated = False            # custom ops bump their mutated inputs' versions

    @property
    def mutated_positions(self):
        pos = [i for i, a in enumerate(a for a in self.schema.arguments if not a.kwarg_only)
               if a.alias_info is not None and a.alias_info.is_write]
        kws = [a.name for a in self.schema.arguments if a.kwarg_only
               and a.alias_info is not None and a.alias_info.is_write]
        return pos, kws


def find(name):
    """The OperatorDef of ``"ns::op"`` / ``"ns::op.overload"`` (``.default`` allowed), or
    None."""
    if name.endswith(".default"):
        name = name[:-len(".default")]
    return _DEFS.get(name)


def lookup(qualname):
    """``find`` that raises torch's error for an operator nobody defined."""
    d = find(qualname)
    if d is None:
        raise RuntimeError(f"operator {qualname} does not exist")
    return d


def overloads_of(ns, name):
    """The overload names defined for ``ns::name``, in definition order (``"default"`` for
    the one without a name)."""
    prefix = f"{ns}::{name}"
    out = []
    for full, d in _DEFS.items():
        if full == prefix or full.startswith(prefix + "."):
            out.append(d.overload_name or "default")
    return out


def namespaces():
    return sorted({d.namespace for d in _DEFS.values()})


def _kernels(name, key):
    stack = _KERNELS.get(name, {}).get(key)
    return stack[-1] if stack else None


def has_kernel(name, key):
    return _kernels(name, key) is not None


def _source(depth):
    f = sys._getframe(depth + 1)
    return f"{f.f_code.co_filename}:{f.f_lineno}"


# ------------------------------------------------------------------ Library

_RESERVED = ("prim",)


class Library:
    """A set of registrations in one operator namespace, as ``torch.library.Library``.

    ``kind`` is ``"DEF"`` (the namespace's one defining library), ``"FRAGMENT"`` (more
    definitions for a namespace) or ``"IMPL"`` (kernels only); ``dispatch_key`` is the key
    ``impl`` registers to when given none. Its registrations last until it is destroyed
    (garbage collected, or ``_destroy()``).

    >>> lib = Library("mylib", "FRAGMENT")
    >>> lib.define("twice(Tensor x) -> Tensor")
    'twice'
    >>> lib.impl("twice", lambda x: x * 2, "CompositeExplicitAutograd")
    """

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if ns in _RESERVED and kind in ("DEF", "FRAGMENT"):
            raise ValueError(f"{ns} is a reserved namespace. Please try creating a library "
                             f"with another name.")
        if ns == "aten" and kind == "IMPL":
            raise NotImplementedError(
                "torchlike: a Library(\"aten\", \"IMPL\") would override the kernels of "
                "torch's built-in operators; torchlike's ops are Python functions over jax, "
                "not dispatcher entries, so they cannot be overridden this way (define your "
                "own operator in your own namespace instead). See DIFFERENCES.md")
        src = _source(1)
        with _lock:
            if kind == "DEF":
                prev = _DEF_LIBRARIES.get(ns)
                if prev is not None and prev.m is not None:
                    raise RuntimeError(
                        f"Only a single TORCH_LIBRARY can be used to register the namespace "
                        f"{ns}; please put all of your definitions in a single TORCH_LIBRARY "
                        f"block.  If you were trying to specify implementations, consider "
                        f"using TORCH_LIBRARY_IMPL (which can be duplicated).  If you really "
                        f"intended to define operators for a single namespace in a "
                        f"distributed way, you can use TORCH_LIBRARY_FRAGMENT to explicitly "
                        f"indicate this.  Previous registration of TORCH_LIBRARY was "
                        f"registered at {prev._source}; latest registration was registered "
                        f"at {src}")
                _DEF_LIBRARIES[ns] = self
        self.m = True                      # torch's handle; None once destroyed
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._source = src
        self._op_defs = set()
        self._op_impls = set()
        self._kernels = []                 # (name, key, entry) registered by this library
        self._fakes = []                   # (name, entry)
        self._registration_handles = []

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def __del__(self):
        try:
            self._destroy()
        except Exception:
            pass

    def define(self, schema, alias_analysis="", *, tags=()):
        """Define an operator from its schema (``"name(Tensor x) -> Tensor"``) in this
        namespace; returns its name (with the overload, as written)."""
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        if self.m is None:
            raise AssertionError("Library object has been destroyed")
        if self.kind == "IMPL":
            raise RuntimeError(f"Cannot define an operator inside of a TORCH_LIBRARY_IMPL "
                               f"block.  All def()s should be placed in the (unique) "
                               f"TORCH_LIBRARY block for their namespace.  (Error occurred "
                               f"at {_source(1)})")
        if not isinstance(tags, (tuple, list, set, frozenset)):
            tags = (tags,)
        parsed = parse_schema(schema)
        if "::" in parsed.name:
            ns = parsed.name.split("::")[0]
            if ns != self.ns:
                raise RuntimeError(
                    f"Explicitly provided namespace ({ns}) in schema string does not match "
                    f"namespace of enclosing TORCH_LIBRARY block ({self.ns}).  Move this "
                    f"definition to the (unique) TORCH_LIBRARY block corresponding to this "
                    f"namespace (and consider deleting the namespace from your schema "
                    f"string.)  (Error occurred while processing TORCH_LIBRARY block at "
                    f"{self._source})")
            parsed.name = parsed.name.split("::")[1]
        full = parsed.with_namespace(self.ns)
        src = _source(1)
        with _lock:
            d = OperatorDef(full, tags, self, src)
            old = _DEFS.get(d.name)
            if old is not None:
                raise RuntimeError(
                    f"Tried to register an operator ({schema_text(full)}) with the same name "
                    f"and overload name multiple times. Each overload's schema should only "
                    f"be registered with a single call to def(). Duplicate registration: "
                    f"registered at {src}. Original registration: registered at "
                    f"{old.source}")
            _DEFS[d.name] = d
            self._op_defs.add(d.name)
            _defs.add(d.name)
        _notify(d.namespace, d.opname)
        return schema.split("(")[0].strip().split(".")[0]

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=True):
        """Register ``fn`` as the kernel of ``op_name`` for ``dispatch_key`` (this library's
        key when empty; ``CompositeImplicitAutograd`` when both are)."""
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type "
                            f"{type(fn)}")
        if dispatch_key == "":
            dispatch_key = self.dispatch_key
        name = _op_name(op_name, "impl")
        short = name.split("::")[-1]
        key = self.ns + "/" + short + "/" + dispatch_key
        if not allow_override and key in _impls:
            raise RuntimeError(
                "This is not allowed since there's already a kernel registered from python "
                f"overriding {short}'s behavior for {dispatch_key} dispatch key and "
                f"{self.ns} namespace.")
        if self.m is None:
            raise AssertionError("Library object has been destroyed")
        if self.ns == "aten" or name.startswith("aten::"):
            raise NotImplementedError(
                f"torchlike: cannot register a kernel for the built-in operator "
                f"aten::{short}: torchlike's ops are Python functions over jax, not "
                f"dispatcher entries (define your own operator instead). See DIFFERENCES.md")
        qual = name if "::" in name else f"{self.ns}::{name}"
        if qual.endswith(".default"):
            qual = qual[:-len(".default")]
        k = dispatch_key or "CompositeImplicitAutograd"
        entry = (fn, with_keyset, self)
        with _lock:
            _KERNELS.setdefault(qual, {}).setdefault(k, []).append(entry)
            self._kernels.append((qual, k, entry))
            _impls.add(key)
            self._op_impls.add(key)

    def fallback(self, fn, dispatch_key="", *, with_keyset=False):
        raise NotImplementedError(
            "torchlike: Library.fallback (a kernel for every operator at a dispatch key) "
            "needs torch's dispatcher; torchlike's ops do not go through one. See "
            "DIFFERENCES.md")

    def _register_fake(self, op_name, fn, _stacklevel=1, *, allow_override=True):
        qual = f"{self.ns}::{op_name}"
        if qual.endswith(".default"):
            qual = qual[:-len(".default")]
        d = lookup(qual)
        with _lock:
            stack = _FAKES.setdefault(d.name, [])
            if stack and not allow_override and d.custom is None:
                raise RuntimeError(f"register_fake(...): the operator {qual} already has an "
                                   f"fake impl registered at {stack[-1][2]}.")
            entry = (fn, self, _source(_stacklevel + 1))
            stack.append(entry)
            self._fakes.append((d.name, entry))

    def _destroy(self):
        if self.m is None:
            return
        self.m = None
        with _lock:
            for name, key, entry in self._kernels:
                stack = _KERNELS.get(name, {}).get(key, [])
                if entry in stack:
                    stack.remove(entry)
            for name, entry in self._fakes:
                stack = _FAKES.get(name, [])
                if entry in stack:
                    stack.remove(entry)
            gone = []
            for name in self._op_defs:
                d = _DEFS.pop(name, None)
                if d is not None:
                    gone.append((d.namespace, d.opname))
                    _FAKES.pop(name, None)
            _defs.difference_update(self._op_defs)
            _impls.difference_update(self._op_impls)
            if _DEF_LIBRARIES.get(self.ns) is self:
                del _DEF_LIBRARIES[self.ns]
            self._kernels.clear()
            self._fakes.clear()
        for h in self._registration_handles:
            h()
        self._registration_handles.clear()
        for ns, op in gone:
            _notify(ns, op)


def schema_text(schema):
    return str(schema)


def _op_name(op_name, api):
    if isinstance(op_name, str):
        return op_name
    if hasattr(op_name, "_overloadpacket"):         # an OpOverload
        return op_name._name
    raise RuntimeError(f"{api} should be passed either a name or an OpOverload object as the "
                       f"first argument, got {type(op_name)}")


def _notify(ns, opname):
    for f in list(_listeners):
        f(ns, opname)


# ------------------------------------------------------------------ calling an operator

def call(d, args, kwargs, *, several=False):
    """Call operator ``d`` as ``torch.ops.ns.op.overload(*args, **kwargs)`` does."""
    pos, kw, full_args, full_kwargs = bind(d.schema, args, kwargs, several=several)
    return dispatch(d, pos, kw)


def _tensors(values):
    from .._tensor import Tensor
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            for x in v:
                if isinstance(x, Tensor):
                    yield x


def backend_of(pos, kw):
    keys = {t.device.type for t in _tensors(list(pos) + list(kw.values()))}
    if "meta" in keys:
        return "Meta"
    for k in keys:
        if k != "cpu":
            return _DEVICE_KEYS.get(k, k.upper())
    return "CPU"


def dispatch(d, pos, kw, *, below_autograd=False):
    """Run the kernel torch's dispatcher would pick for these (already bound) arguments."""
    name = d.name
    backend = backend_of(pos, kw)
    if not below_autograd:
        k = _kernels(name, "Autograd" + backend) or _kernels(name, "Autograd")
        if k is not None:
            return _finish(d, _invoke(k, pos, kw))
        cia = _kernels(name, "CompositeImplicitAutograd")
        if cia is not None and _kernels(name, backend) is None \
                and _kernels(name, "CompositeExplicitAutograd") is None:
            return _finish(d, _invoke(cia, pos, kw))
    return run_backend(d, pos, kw, backend, below_autograd=below_autograd)


def run_backend(d, pos, kw, backend=None, *, below_autograd=True):
    name = d.name
    if backend is None:
        backend = backend_of(pos, kw)
    k = _kernels(name, backend)
    fake = None
    if k is None and backend == "Meta":
        stack = _FAKES.get(name)
        if stack:
            fake = stack[-1]
    if k is None and fake is None:
        k = _kernels(name, "CompositeExplicitAutograd") or \
            _kernels(name, "CompositeImplicitAutograd")
    if k is None and fake is None:
        raise NotImplementedError(_no_kernel_message(d, backend))
    if d.bump_mutated:
        _bump_versions(d, pos, kw)
    if fake is not None:
        with _gm.no_grad(), _fake_context(d):
            out = fake[0](*pos, **kw)
        return _finish(d, out)
    fallback = (not below_autograd and _gm.is_grad_enabled()
                and any(t.requires_grad for t in _tensors(list(pos) + list(kw.values())))
                and k[0] is not None)
    if d.custom is not None or below_autograd:
        with _gm.no_grad():
            out = _invoke(k, pos, kw)
    else:
        out = _invoke(k, pos, kw)
    out = _finish(d, out)
    if fallback:
        out = _autograd_fallback(d, pos, kw, out)
    return out


def _invoke(k, pos, kw):
    fn, with_keyset, _lib = k
    if with_keyset:
        return fn(_KEYSET, *pos, **kw)
    return fn(*pos, **kw)


def _bump_versions(d, pos, kw):
    from ..autograd.graph import increment_version
    idx, keys = d.mutated_positions
    for i in idx:
        if i < len(pos):
            _bump(pos[i], increment_version)
    for k in keys:
        if k in kw:
            _bump(kw[k], increment_version)


def _bump(v, increment_version):
    from .._tensor import Tensor
    if isinstance(v, Tensor):
        increment_version(v)
    elif isinstance(v, (list, tuple)):
        for x in v:
            if isinstance(x, Tensor):
                increment_version(x)


def _finish(d, out):
    """The kernel's result as the schema's returns: None for ``()``, a tuple for several."""
    from .._tensor import Tensor
    rets = d.schema.returns
    if not rets:
        if out is not None:
            raise RuntimeError(f"Expected PythonKernelHolder for {d.schema.name} to return "
                               f"None but it returned something else instead.")
        return None
    if len(rets) == 1:
        r = rets[0]
        if r.base == "Tensor" and r.suffix == "" and not isinstance(out, Tensor):
            raise RuntimeError(f"Unable to cast {out!r} to Tensor")
        if "[" in r.suffix and isinstance(out, tuple):
            return list(out)
        return out
    if not isinstance(out, (tuple, list)):
        raise RuntimeError(f"Unable to cast {out!r} to Tuple")
    return tuple(out)


def _no_kernel_message(d, backend):
    keys = sorted({k for k, v in _KERNELS.get(d.name, {}).items() if v})
    return (f"Could not run '{d.schema.name}' with arguments from the '{backend}' backend. "
            f"This could be because the operator doesn't exist for this backend, or was "
            f"omitted during the selective/custom build process (if using custom build). "
            f"'{d.schema.name}' is only available for these backends: [{', '.join(keys)}].")


_FALLBACK_WARNING = (
    "{name}: an autograd kernel was not registered to the Autograd key(s) but we are trying "
    "to backprop through it. This may lead to silently incorrect behavior. This behavior is "
    "deprecated and will be removed in a future version of PyTorch. If your operator is "
    "differentiable, please ensure you have registered an autograd kernel to the correct "
    "Autograd key (e.g. DispatchKey::Autograd, DispatchKey::CompositeImplicitAutograd). If "
    "your operator is not differentiable, or to squash this warning and use the previous "
    "behavior, please register torch::CppFunction::makeFallthrough() to "
    "DispatchKey::Autograd.")


def _autograd_fallback(d, pos, kw, out):
    """torch's "warn" autograd fallback: outputs the kernel's ops recorded keep that history
    and warn when a backward reaches them; outputs with no history get one that warns and
    passes no gradient on."""
    from .._tensor import Tensor
    from ..autograd.function import Function
    msg = _FALLBACK_WARNING.format(name=d.schema.name)
    inputs = [t for t in _tensors(list(pos) + list(kw.values())) if t.requires_grad]

    def warn(grad):
        warnings.warn(msg, UserWarning, stacklevel=2)

    class _NotImplemented(Function):
        @staticmethod
        def forward(ctx, o, *ins):
            return o.detach()

        @staticmethod
        def backward(ctx, g):
            warnings.warn(msg, UserWarning, stacklevel=2)
            return (None,) * (1 + len(inputs))

    def fix(o):
        if not isinstance(o, Tensor) or not (o.dtype.is_floating_point or o.dtype.is_complex):
            return o
        if o.requires_grad:
            o.register_hook(warn)
            return o
        return _NotImplemented.apply(o, *inputs)

    if isinstance(out, tuple):
        return tuple(fix(o) for o in out)
    if isinstance(out, list):
        return [fix(o) for o in out]
    return fix(out)


# ------------------------------------------------------------------ fake impls on meta tensors

_ctx = threading.local()


class FakeImplCtx:
    """What ``torch.library.get_ctx()`` finds inside a fake impl run on meta tensors: as in
    torch, asking for it there raises (meta tensors cannot have data-dependent shapes)."""

    def __init__(self, d):
        self._d = d

    def error(self):
        return RuntimeError(
            f"{self._d.schema.name} ({self._d.source}): You're trying to run this operator "
            f"with meta Tensors (as opposed to FakeTensors), but this operator may return an "
            f"output Tensor with data-dependent shape. Meta Tensors don't support operators "
            f"with outputs that have data-dependent shapes but FakeTensors do. If your "
            f"operator does not return an output with data-dependent shape, make sure the "
            f"FakeTensor and/or meta kernel does not call torch.library.get_ctx(). Otherwise, "
            f"please use FakeTensors.")


class _fake_context:
    def __init__(self, d):
        self.d = d

    def __enter__(self):
        self.prev = getattr(_ctx, "ctx", None)
        _ctx.ctx = FakeImplCtx(self.d)

    def __exit__(self, *exc):
        _ctx.ctx = self.prev


def current_fake_ctx():
    return getattr(_ctx, "ctx", None)


__all__ += ["CallError", "DispatchKeySet", "FakeImplCtx", "current_fake_ctx", "run_backend",
            "kernel_key", "has_kernel", "overloads_of", "namespaces", "backend_of"]
