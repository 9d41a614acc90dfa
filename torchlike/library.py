"""``torch.library``: define operators in Python and register their behaviour.

>>> import torchlike as torch
>>> @torch.library.custom_op("mylib::mysin", mutates_args=())
... def mysin(x: torch.Tensor) -> torch.Tensor:
...     return x.sin()
>>> mysin.register_autograd(lambda ctx, g: g * ctx.x.cos(),
...                         setup_context=lambda ctx, inputs, output: setattr(ctx, "x", inputs[0]))
>>> torch.ops.mylib.mysin(torch.zeros(1))
tensor([0.])

Operators live in torchlike's own registry (``_library/registry.py``): a schema, kernels per
dispatch key, a fake impl for meta tensors. ``torch.ops.<ns>.<op>`` calls them
(``_ops_namespace.py``); ``torch.ops.aten`` maps torch's built-in operators onto torchlike's
functions. What needs torch's C++ dispatcher (overriding ATen kernels, fallbacks, Triton
kernels, ``__torch_dispatch__`` rules, vmap rules, compiled operator libraries) raises a clear
error: see DIFFERENCES.md.
"""
from __future__ import annotations

import functools
import re
import warnings

from ._library import registry as _reg
from ._library.custom_ops import CustomOpDef, _maybe_get_opdef, custom_op, infer_schema
from ._library.registry import Library

__all__ = ["Library", "impl", "define", "fallthrough_kernel", "impl_abstract",
           "register_autocast", "register_fake", "register_torch_dispatch", "register_vmap",
           "get_ctx", "get_kernel", "custom_op", "triton_op", "wrap_triton", "infer_schema"]

Library.__module__ = __name__
CustomOpDef.__module__ = "torchlike._library.custom_ops"

_impls = _reg._impls
_defs = _reg._defs
_keep_alive = []
_reserved_namespaces = ["prim"]
NAMELESS_SCHEMA = re.compile(r"\(.*\) -> .*")


def fallthrough_kernel():
    """A dummy function to pass to ``Library.impl`` in order to register a fallthrough."""
    raise NotImplementedError("fallthrough_kernel() should never be called.")


def _parse_namespace(qualname):
    splits = qualname.split("::")
    if len(splits) != 2:
        raise ValueError(f'Expected `qualname` to be of the form "namespace::name", but got '
                         f'{qualname}. The qualname passed to the torch.library APIs must '
                         f'consist of a namespace and a name, e.g. aten::sin')
    return splits[0], splits[1]


def _library_for(namespace, lib):
    if lib is not None:
        return lib
    use = Library(namespace, "FRAGMENT")
    _keep_alive.append(use)
    return use


@functools.singledispatch
def define(qualname, schema, *, lib=None, tags=()):
    """Define the operator ``qualname`` (``"ns::name"``) with ``schema``
    (``"(Tensor x) -> Tensor"``); register kernels with ``impl``."""
    if not isinstance(qualname, str):
        raise ValueError(f"define(qualname, schema): expected qualname to be instance of str, "
                         f"got {type(qualname)}")
    namespace, name = _parse_namespace(qualname)
    if lib is None:
        lib = Library(namespace, "FRAGMENT")
        _keep_alive.append(lib)
    if not NAMELESS_SCHEMA.fullmatch(schema):
        raise ValueError(f'define(qualname, schema, ...): expected schema to look like e.g. '
                         f'"(Tensor x) -> Tensor" but got "{schema}"')
    lib.define(name + schema, alias_analysis="", tags=tags)


@define.register
def _(lib: Library, schema, alias_analysis=""):
    """The old ``torch.library.define(lib, schema)``: a decorator defining and implementing."""
    def wrap(f):
        name = lib.define(schema, alias_analysis)
        lib.impl(name, f)
        return f
    return wrap


@functools.singledispatch
def impl(qualname, types, func=None, *, lib=None):
    """Register ``func`` as the implementation of ``qualname`` for the device types
    ``types`` (``"cpu"``, ``"cuda"``, ``"default"``: every device); a decorator when
    ``func`` is omitted."""
    return _impl(qualname, types, func, lib=lib)


@impl.register
def _(lib: Library, name, dispatch_key=""):
    """The old ``torch.library.impl(lib, name, dispatch_key)`` decorator."""
    def wrap(f):
        lib.impl(name, f, dispatch_key)
        return f
    return wrap


def _impl(qualname, types, func=None, *, lib=None):
    if isinstance(types, str):
        types = (types,)
    keys = {_reg.kernel_key(t) for t in types}

    def register(func):
        namespace, _ = _parse_namespace(qualname)
        use = _library_for(namespace, lib)
        for key in sorted(keys):
            use.impl(qualname, func, key)

    if func is None:
        return register
    register(func)
    return None


def impl_abstract(qualname, func=None, *, lib=None, _stacklevel=1):
    """Renamed ``register_fake`` in torch 2.4."""
    warnings.warn("`torch.library.impl_abstract` was renamed to `torch.library.register_fake`. "
                  "Please use that instead; we will remove `torch.library.impl_abstract` in a "
                  "future version of PyTorch.", FutureWarning, stacklevel=2)
    return register_fake(qualname, func, lib=lib, _stacklevel=_stacklevel + 1)


def _resolve(op, api):
    from ._ops_namespace import OpOverload
    if not isinstance(op, (str, OpOverload, CustomOpDef)):
        raise ValueError(f"{api}({op}): got unexpected type for op: {type(op)}")
    if isinstance(op, OpOverload):
        op = op._name
    opdef = _maybe_get_opdef(op)
    return opdef if opdef is not None else op


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Register an implementation of ``op`` for ``device_types`` (None: every device)."""
    op = _resolve(op, "register_kernel")
    if isinstance(op, CustomOpDef):
        return op.register_kernel(device_types, func)
    if device_types is None:
        device_types = "CompositeExplicitAutograd"
    return _impl(op, device_types, func, lib=lib)


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    """Register the implementation run on meta tensors: it computes the outputs' shapes and
    dtypes (``torch.empty_like(x)``) without reading data."""
    op = _resolve(op, "register_fake")
    if isinstance(op, CustomOpDef):
        return op.register_fake if func is None else op.register_fake(func)

    def register(func):
        namespace, op_name = _parse_namespace(op)
        use = _library_for(namespace, lib)
        use._register_fake(op_name, func, _stacklevel=_stacklevel + 1,
                           allow_override=allow_override)
        return func

    if func is None:
        return register
    return register(func)


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    """Register ``backward(ctx, *grads)`` as ``op``'s gradient formula;
    ``setup_context(ctx, inputs, output)`` runs in the forward to save what it needs."""
    op = _resolve(op, "register_autograd")
    if isinstance(op, CustomOpDef):
        op.register_autograd(backward, setup_context=setup_context)
        return
    from ._library.custom_ops import _is_functional, _Autograd
    d = _lookup_op(op)
    schema = d.schema
    if not _is_functional(schema):
        raise RuntimeError(f"Cannot register autograd formula for non-functional operator "
                           f"{_overload_str(d)} with schema {schema}. Please create a "
                           f"functional operator and register an autograd formula for that.")
    if any(a.kwarg_only and a.base == "Tensor" for a in schema.arguments):
        raise NotImplementedError(f"register_autograd with kwarg-only Tensor args. In the "
                                  f"original definition of the op, please make your tensors "
                                  f"not kwarg-only. Got: {schema}")
    namespace, opname = _parse_namespace(op)
    use = _library_for(namespace, lib)
    info = _Autograd(d, backward, setup_context)
    use.impl(opname, info.kernel(), "Autograd", with_keyset=True)


def _lookup_op(qualname):
    """The operator ``"ns::op[.overload]"`` as torch's ``lookup_op`` finds it (through
    ``torch.ops``: an AttributeError for an operator nobody defined)."""
    from ._ops_namespace import ops
    namespace, name = _parse_namespace(qualname)
    op, _, overload = name.partition(".")
    packet = getattr(getattr(ops, namespace), op)
    return getattr(packet, overload or "default")._opdef


def _overload_str(d):
    return f"{d.namespace}.{d.opname}.{d.overload_name or 'default'}"


def register_autocast(op, device_type, cast_inputs, /, *, lib=None):
    """Under autocast on ``device_type``, cast ``op``'s floating inputs to ``cast_inputs``
    and run it with autocast off."""
    op = _resolve(op, "register_autocast")
    if isinstance(op, CustomOpDef):
        return op.register_autocast(device_type, cast_inputs)
    raise NotImplementedError(
        "torchlike: register_autocast is supported for operators made by custom_op only")


def register_torch_dispatch(op, torch_dispatch_class, func=None, /, *, lib=None):
    raise NotImplementedError(
        "torchlike: register_torch_dispatch is not supported: torchlike has no "
        "__torch_dispatch__ (tensor subclasses and dispatch modes). See DIFFERENCES.md")


def register_vmap(op, func=None, /, *, lib=None):
    raise NotImplementedError(
        "torchlike: register_vmap is not supported: torchlike.vmap is jax's vmap over a "
        "traced function, which cannot call a custom operator's Python kernel per batch "
        "rule. See DIFFERENCES.md")


def get_ctx():
    """The context of the fake impl running now; None outside one. A fake impl run on meta
    tensors cannot ask for one (it raises torch's error: meta tensors have no data-dependent
    shapes)."""
    ctx = _reg.current_fake_ctx()
    if ctx is not None:
        raise ctx.error()
    return None


def get_kernel(op, dispatch_key):
    """The kernel ``op`` runs at ``dispatch_key`` (a callable ``kernel(keyset, *args)``)."""
    from ._ops_namespace import OpOverload
    if not isinstance(op, (str, OpOverload)):
        raise ValueError(f"get_kernel({op}): got unexpected type for op: {type(op)}")
    name = op._name if isinstance(op, OpOverload) else op
    key = str(dispatch_key).split(".")[-1]
    if key not in _reg.DISPATCH_KEYS:
        raise ValueError(f"Invalid dispatch key: {dispatch_key}")
    d = _reg.lookup(name)
    k = _reg._kernels(d.name, key)
    if k is None:
        raise RuntimeError(f"{d.name} has no kernel registered for {key}")
    fn, with_keyset, _ = k

    def kernel(keyset, *args, **kwargs):
        return fn(keyset, *args, **kwargs) if with_keyset else fn(*args, **kwargs)
    kernel.call_boxed = kernel
    return kernel


def opcheck(op, args, kwargs=None, *, test_utils=None, raise_exception=True, atol=None,
            rtol=None):
    raise NotImplementedError(
        "torchlike: torch.library.opcheck is not supported: its checks (fake tensors, "
        "torch.compile's AOT dispatch, schema mutation tracking) test torch's compilation "
        "stack, which torchlike does not have. Test the operator's values and gradients "
        "directly (torchlike.autograd.gradcheck). See DIFFERENCES.md")


def triton_op(name, fn=None, /, *, mutates_args, schema=None):
    raise NotImplementedError(
        "torchlike: torch.library.triton_op is not supported: Triton kernels need torch's "
        "CUDA tensors and Inductor; write the operator with torchlike.library.custom_op "
        "(jax code runs on the GPU). See DIFFERENCES.md")


def wrap_triton(triton_kernel, /):
    raise NotImplementedError(
        "torchlike: torch.library.wrap_triton is not supported: Triton kernels need torch's "
        "CUDA tensors and Inductor. See DIFFERENCES.md")


class _scoped_library:
    """``with torch.library._scoped_library(ns, kind) as lib:``: registrations undone at the
    end of the block."""

    def __init__(self, *args, **kwargs):
        self._args, self._kwargs = args, kwargs

    def __enter__(self):
        self.lib = Library(*self._args, **self._kwargs)
        return self.lib

    def __exit__(self, *exc):
        self.lib._destroy()
