"""``torch.overrides``: the ``__torch_function__`` protocol's helpers.

torchlike does not dispatch ``__torch_function__`` (a subclass's own override and modes are not
called; ops on a subclass's instances give instances of it, as torch's default one does), so
``has_torch_function*`` are False for every argument and library code takes its plain path;
``handle_torch_function`` is never reached that way and raises if called.
"""
from __future__ import annotations

import functools

__all__ = ["get_ignored_functions", "get_overridable_functions", "get_testing_overrides",
           "handle_torch_function", "has_torch_function", "resolve_name", "is_tensor_like",
           "is_tensor_method_or_property", "wrap_torch_function", "enable_reentrant_dispatch",
           "has_torch_function_unary", "has_torch_function_variadic", "TorchFunctionMode",
           "redispatch_function"]


def has_torch_function(relevant_args) -> bool:
    return False


def has_torch_function_unary(arg) -> bool:
    return False


def has_torch_function_variadic(*args) -> bool:
    return False


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    raise NotImplementedError("torchlike does not dispatch __torch_function__: "
                              "handle_torch_function is not provided")


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
    """A decorator that would dispatch ``__torch_function__``: here the function itself."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
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
