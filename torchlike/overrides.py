"""``torch.overrides``: the ``__torch_function__`` protocol.

An object that is not a Tensor but whose type defines ``__torch_function__`` (torch's
"Tensor-like" types: the ``ScalarTensor`` of torch's extending notes, a TensorDict) takes over
the calls it is passed to, as in torch: the function is called as
``type(obj).__torch_function__(func, types, args, kwargs)``, the first handler that does not
return NotImplemented giving the result (subclasses' handlers before their bases', then left to
right), torch's TypeError when every one declines. The handlers are consulted where a call
refuses such an argument, so that calls on Tensors pay nothing: the functions of
``nn.functional``, ``linalg``, ``fft`` and ``special`` (``overridable``, one frame more), Tensor
methods and operators, and the top-level functions that check their operands
(``_ops._surface._refused``; ``torch.cat``/``torch.stack`` check their elements). A Tensor
subclass's own ``__torch_function__`` is not dispatched (ops on its instances give instances
of it, as torch's default one does), and modes are not entered: DIFFERENCES.md.
"""
from __future__ import annotations

import functools

__all__ = ["get_ignored_functions", "get_overridable_functions", "get_testing_overrides",
           "handle_torch_function", "has_torch_function", "resolve_name", "is_tensor_like",
           "is_tensor_method_or_property", "wrap_torch_function", "enable_reentrant_dispatch",
           "has_torch_function_unary", "has_torch_function_variadic", "TorchFunctionMode",
           "redispatch_function"]


def _overrides(a):
    """Does ``a`` take over the calls it is passed to: an object that is not a Tensor, whose
    type defines ``__torch_function__``? Not a tensor of the real torch (its default handler
    calls the function back relying on torch's own state: it would recurse without end)."""
    t = type(a)
    return getattr(t, "__torch_function__", None) is not None and \
        not isinstance(a, _tensor_class()) and not _foreign_tensor(t)


def _foreign_tensor(t):
    """Is ``t`` torch's ``torch.Tensor`` or a subclass of it (a program importing both)?"""
    r = _FOREIGN.get(t)
    if r is None:
        r = _FOREIGN[t] = any(c.__name__ == "Tensor" and c.__module__ == "torch"
                              for c in t.__mro__)
    return r


_FOREIGN: dict = {}     # type -> is it a tensor type of the real torch


def _tensor_class():
    from ._tensor import Tensor
    return Tensor


def has_torch_function(relevant_args) -> bool:
    return any(_overrides(a) for a in relevant_args)


def has_torch_function_unary(arg) -> bool:
    return _overrides(arg)


def has_torch_function_variadic(*args) -> bool:
    return any(_overrides(a) for a in args)


def _overloaded_args(relevant):
    """The arguments (and the items of list and tuple arguments) that take over a call, one per
    type, in torch's order: a subclass's before its base's, else left to right."""
    found, types = [], []
    for a in relevant:
        for x in (a if a.__class__ in (list, tuple) else (a,)):
            t = type(x)
            if t in types or not _overrides(x):
                continue
            at = len(found)
            for i, u in enumerate(types):
                if issubclass(t, u):
                    at = i
                    break
            found.insert(at, x)
            types.insert(at, t)
    return found


def overriding(args, kwargs):
    """Is any argument (or an item of a list or tuple argument) one that takes over calls?"""
    for a in (*args, *kwargs.values()) if kwargs else args:
        if a.__class__ in (list, tuple):
            if any(_overrides(x) for x in a):
                return True
        elif _overrides(a):
            return True
    return False


def handled(public_api, relevant, args, kwargs):
    """The first result of the handlers among ``relevant`` (torch's order) that is not
    NotImplemented, each called as ``handler(public_api, types, args, kwargs)``; else
    NotImplemented. With the overriding types: ``(result, types)``."""
    overloaded = _overloaded_args(relevant)
    types = tuple(type(a) for a in overloaded)
    for a in overloaded:
        r = a.__torch_function__(public_api, types, args, kwargs)
        if r is not NotImplemented:
            return r, types
    return NotImplemented, types


def dispatch(public_api, args, kwargs, name=None, python=False):
    """Call ``public_api``'s overrides among ``args``/``kwargs`` (torch's
    ``handle_torch_function``); the first result that is not NotImplemented, else torch's
    TypeError. ``name``: torch's qualified name of the function, for the message; ``python``:
    torch defines the function in Python (its message differs from a native function's)."""
    r, types = handled(public_api, (*args, *kwargs.values()), args,
                       kwargs if kwargs or python else None)
    if r is not NotImplemented:
        return r
    if name is None:
        name = resolve_name(public_api)
    if python:
        raise TypeError(f"no implementation found for '{name}' on types that implement "
                        f"__torch_function__: {list(types)}")
    handlers = "".join(f"  - tensor subclass {t}\n" for t in types)
    raise TypeError(f"Multiple dispatch failed for '{name}'; all __torch_function__ handlers "
                    f"returned NotImplemented:\n\n{handlers}\nFor more information, try "
                    f"re-running with TORCH_LOGS=not_implemented")


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Dispatch ``public_api(*args, **kwargs)`` to the overrides among ``relevant_args`` (none:
    the call itself, as Tensor's own ``__torch_function__`` makes it)."""
    if not has_torch_function(relevant_args):
        return public_api(*args, **kwargs)
    r, types = handled(public_api, relevant_args, args, kwargs)
    if r is not NotImplemented:
        return r
    raise TypeError(f"no implementation found for '{resolve_name(public_api)}' on types that "
                    f"implement __torch_function__: {list(types)}")


def overridable(fn, name, python=False):
    """``fn`` (a public function whose torch name is ``name``) giving the call to the
    overrides among its arguments where it refuses them: a call whose arguments it takes costs
    one frame more, nothing else."""
    @functools.wraps(fn)
    def public(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except (TypeError, AttributeError):
            if not overriding(args, kwargs):
                raise
        return dispatch(public, args, kwargs, name, python)
    public._overridable = True
    return public


# (the code every ``overridable`` wrapper runs: a warning's stacklevel does not count its frame,
# ``torchlike.nn.functional._stacklevel``)
WRAPPER_CODE = overridable(len, "len").__code__


def make_overridable(namespace, prefix, python=False, native=None):
    """Every public function of ``namespace`` (a module's dict) made ``overridable``, named
    ``<prefix>.<name>`` in torch's messages. ``python``: torch defines them in Python, but for
    those of ``native`` (name -> torch's name of its native function)."""
    import types
    native = native or {}
    for n, f in list(namespace.items()):
        if (n[:1] != "_" and isinstance(f, types.FunctionType)
                and not getattr(f, "_overridable", False)
                and (f.__module__ or "").startswith("torchlike")):
            g = namespace[n] = (overridable(f, native[n]) if n in native else
                                overridable(f, f"{prefix}.{n}", python))
            # (found where it is bound: pickled by reference, a function is looked up by its
            # module and name)
            g.__module__, g.__qualname__ = namespace["__name__"], n


def is_tensor_like(inp) -> bool:
    """A Tensor, or an object whose type defines ``__torch_function__``."""
    from ._tensor import Tensor
    return type(inp) is Tensor or hasattr(type(inp), "__torch_function__")


def is_tensor_method_or_property(func) -> bool:
    from ._tensor import Tensor
    return getattr(Tensor, getattr(func, "__name__", ""), None) is func


def get_ignored_functions():
    return set()


def get_overridable_functions():
    return {}


def get_testing_overrides():
    return {}


def resolve_name(f):
    module = getattr(f, "__module__", None) or ""
    return f"{module.replace('torchlike', 'torch', 1)}.{getattr(f, '__qualname__', f)}"


def wrap_torch_function(dispatcher):
    """A decorator making ``func`` dispatch to the overrides among the arguments
    ``dispatcher(*args, **kwargs)`` names."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


def redispatch_function(func, types, args, kwargs):
    """Call ``func`` past the modes: here, with nothing to skip, ``func`` itself."""
    return func(*args, **(kwargs or {}))


class enable_reentrant_dispatch:
    def __enter__(self):
        pass

    def __exit__(self, *exc):
        return False


class TorchFunctionMode:
    """torch's base class of ``__torch_function__`` modes; entering one raises (modes are not
    dispatched by torchlike)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError

    def __enter__(self):
        raise NotImplementedError("torchlike does not dispatch __torch_function__: a "
                                  "TorchFunctionMode cannot be entered")

    def __exit__(self, *exc):
        return False
