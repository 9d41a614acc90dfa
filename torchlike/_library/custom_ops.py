"""``torchlike.library.custom_op``: a Python function made an operator, as torch's
``torch._library.custom_ops``.

The operator's schema is inferred from the function's annotations (``infer_schema``). Its
kernels run below autograd (their own ops are not recorded), its mutated inputs' version
counters are bumped, and its outputs may not alias its inputs. Autograd goes through one
``torchlike.autograd.Function`` per operator (``GeneratedBackwardFor_<ns>_<op>_default``, as
torch names it), whose backward calls the formula given to ``register_autograd``, or raises
torch's error when none was.
"""
from __future__ import annotations

import collections.abc
import inspect
import typing
import weakref
from contextlib import contextmanager

from ..autograd import grad_mode as _gm
from ..autograd.function import Function
from . import registry as _reg

__all__ = ["custom_op", "CustomOpDef", "infer_schema"]


# ------------------------------------------------------------------ infer_schema

def _supported_param_types():
    import torchlike as t
    from torchlike import types as ttypes
    base = [(t.Tensor, "Tensor", True, True, False), (int, "SymInt", True, False, True),
            (float, "float", True, False, True), (bool, "bool", True, False, True),
            (str, "str", False, False, False), (ttypes.Number, "Scalar", True, False, False),
            (t.dtype, "ScalarType", False, False, False),
            (t.device, "Device", False, False, False)]
    out = {}
    for py, cpp, list_base, opt_base_list, opt_list_base in base:
        out[py] = cpp
        out[typing.Optional[py]] = cpp + "?"
        seqs = lambda ty: (typing.Sequence[ty], typing.List[ty],  # noqa: E731,UP006
                           collections.abc.Sequence[ty], list[ty])
        if list_base:
            for s in seqs(py):
                out[s] = cpp + "[]"
        if opt_base_list:
            for s in seqs(typing.Optional[py]):
                out[s] = cpp + "?[]"
        if opt_list_base:
            for s in seqs(py):
                out[typing.Optional[s]] = cpp + "[]?"
    return out


def _supported_return_types():
    import torchlike as t
    from torchlike import types as ttypes
    return {t.Tensor: "Tensor", typing.List[t.Tensor]: "Tensor[]",  # noqa: UP006
            list[t.Tensor]: "Tensor[]", int: "SymInt", float: "float", bool: "bool",
            ttypes.Number: "Scalar"}


def _type_repr(d):
    """Annotations as torch prints them in its messages (``torch.Tensor``, not ours)."""
    return str(d).replace("torchlike.", "torch.").replace("typing.Union[int, float, bool]",
                                                          "int | float | bool")


def infer_schema(prototype_function, /, *, mutates_args, op_name=None, tags=()):
    """The schema of ``prototype_function`` from its type annotations, as torch infers it:
    ``(Tensor x, SymInt n=2) -> Tensor``; ``mutates_args`` names the Tensor arguments it
    writes (or ``"unknown"``: all of them)."""
    sig = inspect.signature(prototype_function)
    glb = getattr(prototype_function, "__globals__", {})
    if type(mutates_args) is not str:
        mutates_args = tuple(mutates_args)

    def error_fn(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature "
                         f"{_type_repr(sig)})")

    def resolve(ann):
        if isinstance(ann, str):
            try:
                return eval(ann, glb)
            except NameError as e:
                error_fn(f"Unsupported type annotation {ann}. It is not a type. ({e}). If you "
                         f"are using 'from __future__ import annotations', note that "
                         f"annotations are evaluated lazily as strings; make sure all types "
                         f"referenced in annotations are importable at module scope, not "
                         f"only inside a local function.")
            except Exception as e:
                error_fn(f"Unsupported type annotation {ann}. It is not a type. "
                         f"({type(e).__name__}: {e})")
        return ann

    supported = _supported_param_types()
    params = []
    seen = set()
    kw_only = False
    for idx, (name, p) in enumerate(sig.parameters.items()):
        if p.kind not in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          inspect.Parameter.KEYWORD_ONLY):
            error_fn("We do not support positional-only args, varargs, or varkwargs.")
        if p.kind == inspect.Parameter.KEYWORD_ONLY and not kw_only:
            params.append("*")
            kw_only = True
        if p.annotation is inspect.Parameter.empty:
            error_fn(f"Parameter {name} must have a type annotation.")
        ann = resolve(p.annotation)
        if ann not in supported:
            if typing.get_origin(ann) is tuple:
                error_fn(f"Parameter {name} has unsupported type {_type_repr(p.annotation)}. "
                         f"We do not support Tuple inputs in schema. As a workaround, please "
                         f"try to use List instead. \n\nThe valid types are: "
                         f"{_type_repr(supported.keys())}.")
            error_fn(f"Parameter {name} has unsupported type {_type_repr(p.annotation)}. "
                     f"The valid types are: {_type_repr(supported.keys())}.")
        st = supported[ann]
        if type(mutates_args) is str:
            if mutates_args != "unknown":
                raise ValueError("mutates_args must either be a sequence of the names of the "
                                 "arguments that are mutated or the string 'unknown'. ")
            if st.startswith("Tensor"):
                st = f"Tensor(a{idx}!)" + st[len("Tensor"):]
        elif name in mutates_args:
            if not st.startswith("Tensor"):
                error_fn(f"Parameter {name} is in mutable_args but only Tensors or "
                         f"collections of Tensors can be mutated")
            st = f"Tensor(a{idx}!)" + st[len("Tensor"):]
        seen.add(name)
        if p.default is inspect.Parameter.empty:
            params.append(f"{st} {name}")
        else:
            params.append(f"{st} {name}={_default_text(p.default, name, error_fn)}")
    if mutates_args != "unknown":
        missing = set(mutates_args) - seen
        if missing:
            error_fn(f"{missing} in mutates_args were not found in the custom op's signature. "
                     f"mutates_args should contain the names of all args that the custom op "
                     f"mutates, or just the string 'unknown' if you don't know.")
    ret = _parse_return(resolve(sig.return_annotation), error_fn)
    if op_name is not None:
        return f"{op_name}({', '.join(params)}) -> {ret}"
    return f"({', '.join(params)}) -> {ret}"


def _default_text(v, name, error_fn):
    import torchlike as t
    if v is None or isinstance(v, (int, float, bool)):
        return str(v)
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, t.device):
        return f'"{v}"'
    if isinstance(v, t.dtype):
        return str(v)[len("torch."):] if str(v).startswith("torch.") else str(v)
    error_fn(f"Parameter {name} has an unsupported default value type "
             f"{_type_repr(type(v))}. Please file an issue on GitHub so we can prioritize "
             f"this.")


def _parse_return(ann, error_fn):
    if ann is None:
        return "()"
    if ann is inspect.Parameter.empty:
        error_fn("No return type annotation was provided. Please add one.")
    rets = _supported_return_types()
    if typing.get_origin(ann) is not tuple:
        if ann not in rets:
            error_fn(f"Return has unsupported type {_type_repr(ann)}. The valid types are: "
                     f"{_type_repr(rets)}.")
        return rets[ann]
    args = typing.get_args(ann)
    for a in args:
        if a not in rets:
            error_fn(f"Return has unsupported type {_type_repr(ann)}. The valid types are: "
                     f"{_type_repr(rets)}.")
    out = ", ".join(rets[a] for a in args)
    if len(args) == 1:
        out = "(" + out + ")"
    return "(" + out + ")"


# ------------------------------------------------------------------ custom_op

def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Make ``fn`` an operator ``"namespace::name"`` (a decorator, or called with ``fn``).

    >>> @torchlike.library.custom_op("mylib::scale", mutates_args=())
    ... def scale(x: torchlike.Tensor, k: float) -> torchlike.Tensor:
    ...     return x * k
    >>> torchlike.ops.mylib.scale(torchlike.ones(2), 3.0)
    tensor([3., 3.])
    """
    def inner(fn):
        tags_ = _normalize_tags(tags)
        schema_str = schema if schema is not None else infer_schema(
            fn, mutates_args=mutates_args)
        namespace, opname = name.split("::")
        result = CustomOpDef(namespace, opname, schema_str, fn, tags_,
                             source=_reg._source(1))
        if schema is not None:
            expected = {a.name for a in result._opdef.schema.arguments
                        if a.alias_info is not None and a.alias_info.is_write}
            if expected != set(mutates_args):
                raise ValueError(
                    f"Attempted to create a custom op with `mutates_args={mutates_args}` and "
                    f"`schema={schema}. The schema suggests that the op mutates {expected}"
                    f"which is different from what was provided to us in `mutates_args`. "
                    f"Please make these consistent.")
        result.register_kernel(device_types)(fn)
        return result

    if fn is None:
        return inner
    return inner(fn)


def _normalize_tags(tags):
    if tags is None:
        return ()
    if not isinstance(tags, (tuple, list, set, frozenset)):
        tags = (tags,)
    return tuple(dict.fromkeys(tags))


OPDEF_TO_LIB = {}
OPDEFS = weakref.WeakValueDictionary()


def _library_allowing_overwrite(namespace, name):
    qualname = f"{namespace}::{name}"
    if qualname in OPDEF_TO_LIB:
        OPDEF_TO_LIB.pop(qualname)._destroy()
    lib = _reg.Library(namespace, "FRAGMENT")
    OPDEF_TO_LIB[qualname] = lib
    return lib


class CustomOpDef:
    """The operator ``custom_op`` made; calling it calls the operator. Register more
    behaviour with ``register_kernel``, ``register_fake``, ``register_autograd``."""

    def __init__(self, namespace, name, schema, fn, tags=(), source=None):
        self._namespace = namespace
        self._name = name
        self._schema = schema
        self._tags = _normalize_tags(tags)
        self._init_fn = fn
        self._backend_fns = {}
        self._abstract_fn = None
        self._setup_context_fn = None
        self._backward_fn = None
        self._vmap_fn = None
        self._autocast_dtype = {}
        self._disabled_kernel = set()
        self._lib = _library_allowing_overwrite(namespace, name)
        self._register_to_dispatcher()
        if source is not None:
            self._opdef.source = source
        OPDEFS[self._qualname] = self

    @property
    def _qualname(self):
        return f"{self._namespace}::{self._name}"

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    @property
    def _opoverload(self):
        from .._ops_namespace import ops
        return getattr(getattr(ops, self._namespace), self._name).default

    # -- registration with the registry
    def _register_to_dispatcher(self):
        from .schema import parse_schema
        parsed = parse_schema(self._name + self._schema)
        if any(a.kwarg_only and a.base == "Tensor" for a in parsed.arguments):
            raise NotImplementedError(
                f"custom_op with kwarg-only Tensor args. Please make your tensors not "
                f"kwarg-only. Got: {self._name + self._schema}")
        self._lib.define(self._name + self._schema, tags=self._tags)
        d = _reg.lookup(self._qualname)
        d.custom = self
        d.bump_mutated = parsed.is_mutable
        self._opdef = d
        self._lib._register_fake(self._name, self._fake_impl, _stacklevel=2)
        self._lib.impl(self._name, self._autograd_impl(), "Autograd", with_keyset=True)

    def _fake_impl(self, *args, **kwargs):
        if self._abstract_fn is None:
            schema = self._opdef.schema
            if schema.is_mutable and not schema.returns:
                return None
            raise RuntimeError(
                f"There was no fake impl registered for {self}. This is necessary for "
                f"torch.compile/export/fx tracing to work. Please use "
                f"`{self._init_fn.__name__}.register_fake` to add an fake impl.")
        return self._abstract_fn(*args, **kwargs)

    def _autograd_impl(self):
        return _make_autograd_impl(self)

    def register_kernel(self, device_types, fn=None, /):
        """Register ``fn`` as the implementation for ``device_types`` (``"cpu"``,
        ``"cuda"``, a sequence of them, or None: every device)."""
        def inner(fn):
            dts = [device_types] if device_types is None or isinstance(device_types, str) \
                else list(device_types)
            for dt in dts:
                if dt not in self._backend_fns:
                    key = "CompositeExplicitAutograd" if dt is None else _reg.kernel_key(dt)
                    self._lib.impl(self._name, self._backend_impl(dt), key)

                def wrapped(*args, _dt=dt, _fn=fn, **kwargs):
                    if _dt in self._disabled_kernel:
                        return self._init_fn(*args, **kwargs)
                    return _fn(*args, **kwargs)

                self._backend_fns[dt] = wrapped
            return fn

        if fn is None:
            return inner
        return inner(fn)

    def _backend_impl(self, device_type):
        def backend_impl(*args, **kwargs):
            result = self._backend_fns[device_type](*args, **kwargs)
            _check_aliasing(self._name, args, kwargs, result)
            return result
        return backend_impl

    def register_fake(self, fn, /):
        """Register the implementation run on meta tensors (shapes and dtypes only)."""
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """Register ``backward(ctx, *grads)`` (and ``setup_context(ctx, inputs, output)``,
        run in the forward) as this operator's autograd formula."""
        schema = self._opdef.schema
        if not _is_functional(schema):
            raise RuntimeError(
                f"Cannot register autograd formula for non-functional operator {self} with "
                f"schema {schema}. Please create a functional operator and register an "
                f"autograd formula for that.")
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    @contextmanager
    def set_kernel_enabled(self, device_type, enabled=True):
        """Disable (or re-enable) the kernel registered for ``device_type`` in a block: the
        decorated function runs instead."""
        was_disabled = device_type in self._disabled_kernel
        if enabled:
            self._disabled_kernel.discard(device_type)
        else:
            self._disabled_kernel.add(device_type)
        try:
            yield
        finally:
            if was_disabled:
                self._disabled_kernel.add(device_type)
            else:
                self._disabled_kernel.discard(device_type)

    def register_vmap(self, func=None):
        raise NotImplementedError(
            "torchlike: register_vmap is not supported: torchlike.vmap is jax's vmap over a "
            "traced function, which cannot call a custom operator's Python kernel per batch "
            "rule. See DIFFERENCES.md")

    def register_torch_dispatch(self, torch_dispatch_class, fn=None, /):
        raise NotImplementedError(
            "torchlike: register_torch_dispatch is not supported: torchlike has no "
            "__torch_dispatch__ (tensor subclasses and dispatch modes). See DIFFERENCES.md")

    def register_autocast(self, device_type, cast_inputs):
        """Under autocast on ``device_type``, cast floating inputs to ``cast_inputs`` and run
        the operator with autocast off."""
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: "
                             f"`{type(device_type)}`")
        self._autocast_dtype[device_type] = cast_inputs
        prev = _reg._kernels(self._opdef.name, "Autograd")

        def autocast_impl(keyset, *args, **kwargs):
            import torchlike as t
            if t.is_autocast_enabled(device_type):
                with t.autocast(device_type, enabled=False):
                    args = _cast(args, device_type, cast_inputs)
                    return prev[0](keyset, *args, **kwargs)
            return prev[0](keyset, *args, **kwargs)

        self._lib.impl(self._name, autocast_impl, "Autograd", with_keyset=True)


def _cast(value, device_type, dtype):
    import torchlike as t
    if isinstance(value, t.Tensor):
        ok = value.is_floating_point() and value.device.type == device_type \
            and value.dtype is not t.float64
        return value.to(dtype) if ok else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def _is_functional(schema):
    if schema.is_mutable:
        return False
    rets = schema.returns
    view = any(r.alias_info is not None and not r.alias_info.is_write for r in rets)
    if view:
        n_in = sum(a.base == "Tensor" and a.suffix == "" for a in schema.arguments)
        n_out = sum(r.base == "Tensor" and r.suffix == "" for r in rets)
        return n_in == 1 and n_out == 1
    return bool(rets)


def _check_aliasing(name, args, kwargs, result):
    """A custom operator's outputs may not be (views of) its inputs or of each other."""
    from .._tensor import Tensor
    from .._storage import storage_root
    seen = {id(storage_root(t)) for t in _reg._tensors(list(args) + list(kwargs.values()))}
    outs = result if isinstance(result, (tuple, list)) else (result,)
    for t in _reg._tensors(outs):
        key = id(storage_root(t))
        if key in seen:
            raise RuntimeError(
                f"{name} (with implementation in {inspect.getmodule(_check_aliasing)}): The "
                f"output of this custom operator (1) must not also be an input to this custom "
                f"operator and (2) may not alias any inputs to this custom operator or other "
                f"returns. The most common way to trigger this error is if we have y = "
                f"custom_op(x) and y and x are the same Tensor. Please instead return a clone "
                f"of the offending output tensor(s) (e.g. return x.clone()) or refactor the "
                f"custom operator to not return y.")
        seen.add(key)
    del Tensor


# ------------------------------------------------------------------ autograd

class _Autograd:
    """The autograd formula ``register_autograd`` gives an operator ``Library`` defined."""

    def __init__(self, d, backward, setup_context):
        self._opdef = d
        self._backward_fn = backward
        self._setup_context_fn = setup_context

    def kernel(self):
        return _make_autograd_impl(self)


def _make_autograd_impl(info):
    """The ``Autograd`` kernel of an operator: its generated Function when grad mode is on
    and an input requires grad, else its kernels below autograd."""
    generated = _generated_function(info)

    def autograd_impl(keyset, *args, **kwargs):
        if _gm.is_grad_enabled() and any(t.requires_grad for t in _reg._tensors(args)):
            return generated(args, kwargs)
        return _reg.run_backend(info._opdef, args, kwargs)

    return autograd_impl


def _generated_function(opdef):
    """The autograd.Function torch generates for a custom op, on torchlike's Function: its
    forward runs the kernels below autograd and calls ``setup_context``; its backward calls
    the registered formula. Tensor-list arguments and outputs are flattened around it."""
    from .._tensor import Tensor
    d = opdef._opdef
    name = f"GeneratedBackwardFor_{d.namespace}_{d.opname}_{d.overload_name or 'default'}"
    has_kwarg_only = any(a.kwarg_only for a in d.schema.arguments)

    def forward(ctx, *flat):
        meta = flat[-1]
        args = _unflatten(flat[:-1], meta.in_spec)
        result = _reg.run_backend(d, args, meta.kwargs)
        if opdef._setup_context_fn is not None:
            full_args, full_kwargs = _fill_defaults(d.schema, args, meta.kwargs)
            if has_kwarg_only:
                opdef._setup_context_fn(ctx=ctx, inputs=full_args,
                                        keyword_only_inputs=full_kwargs, output=result)
            else:
                opdef._setup_context_fn(ctx=ctx, inputs=full_args, output=result)
        meta.result_is_tuple = isinstance(result, tuple)
        outs = result if meta.result_is_tuple else (result,)
        flat_out, meta.out_spec = _flatten(outs)
        return tuple(flat_out)

    def backward(ctx, *grads):
        if opdef._backward_fn is None:
            raise RuntimeError(
                f"Trying to backward through {d.schema.name.replace('::', '.')}."
                f"{d.overload_name or 'default'} but no autograd formula was registered. "
                f"Please use register_autograd to add one.")
        meta = ctx._pt_metadata
        user_grads = _unflatten(grads, meta.out_spec)
        prev = ctx.needs_input_grad
        try:
            ctx.needs_input_grad = _unflatten(prev[:-1], meta.in_spec)
            result = opdef._backward_fn(ctx, *user_grads)
        finally:
            ctx.needs_input_grad = prev
        if not isinstance(result, tuple):
            result = (result,)
        flat_grads, spec = _flatten(result, grads=True)
        if meta.has_lists and spec != meta.in_spec:
            raise RuntimeError(
                f"Expected the return from backward to be of the same structure as the "
                f"inputs. Got: {spec} (return from backward), {meta.in_spec} (inputs)")
        return tuple(flat_grads) + (None,)

    def forward_with_meta(ctx, *flat):
        out = forward(ctx, *flat)
        ctx._pt_metadata = flat[-1]
        return out

    Generated = type(name, (Function,), {"forward": staticmethod(forward_with_meta),
                                         "backward": staticmethod(backward)})

    def apply(args, kwargs):
        flat, in_spec = _flatten(args)
        meta = _Metadata(in_spec, kwargs, any(isinstance(s, int) for s in in_spec))
        out = Generated.apply(*flat, meta)
        out = out if isinstance(out, tuple) else (out,)
        result = _unflatten(out, meta.out_spec)
        return tuple(result) if meta.result_is_tuple else result[0]

    del Tensor
    return apply


class _Metadata:
    def __init__(self, in_spec, kwargs, has_lists):
        self.in_spec = in_spec
        self.kwargs = kwargs
        self.has_lists = has_lists
        self.out_spec = None
        self.result_is_tuple = None


def _flatten(values, grads=False):
    """Lists of tensors spread into single values; the spec says which positions were lists
    (an int: the list's length) and which single values (None)."""
    from .._tensor import Tensor
    flat, spec = [], []
    for v in values:
        if isinstance(v, list) and (grads or all(isinstance(x, Tensor) for x in v)):
            flat.extend(v)
            spec.append(len(v))
        else:
            flat.append(v)
            spec.append(None)
    return flat, tuple(spec)


def _unflatten(flat, spec):
    out, i = [], 0
    for s in spec:
        if s is None:
            out.append(flat[i])
            i += 1
        else:
            out.append(list(flat[i:i + s]))
            i += s
    return tuple(out)


def _fill_defaults(schema, args, kwargs):
    pos = [a for a in schema.arguments if not a.kwarg_only]
    full = list(args) + [a.default_value for a in pos[len(args):]]
    kw = {a.name: kwargs.get(a.name, a.default_value)
          for a in schema.arguments if a.kwarg_only}
    return tuple(full), kw


def _maybe_get_opdef(op):
    if isinstance(op, CustomOpDef):
        return op
    if hasattr(op, "_overloadpacket"):
        op = op._name
    if isinstance(op, str):
        return OPDEFS.get(op)
    return None
