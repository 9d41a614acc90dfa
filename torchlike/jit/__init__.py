"""torchlike.jit: the thin layer scripts expect when there is no TorchScript.

``script`` and ``trace`` return the function or module itself, which computes exactly what the
eager code does (every op is already a jitted XLA computation; ``torchlike.compile`` fuses a
whole function). ``is_scripting()`` and ``is_tracing()`` are False, so code written for both
paths takes the eager one. ``save``/``load`` of TorchScript archives raise, naming the
alternative. The decorators (``ignore``, ``unused``, ``export``, ``interface``, ...) return
what they decorate.
"""
from __future__ import annotations

import builtins
import typing
import warnings

__all__ = ["script", "trace", "trace_module", "script_if_tracing", "export_opnames", "ignore", "unused", "export", "interface",
           "is_scripting", "is_tracing", "Final", "Attribute", "annotate", "save", "load",
           "freeze", "optimize_for_inference", "fork", "wait", "ScriptModule",
           "ScriptFunction", "script_method", "isinstance", "Error", "enable_onednn_fusion",
           "onednn_fusion_enabled", "set_fusion_strategy", "strict_fusion", "Future",
           "CompilationUnit", "TracerWarning", "RecursiveScriptModule", "TopLevelTracedModule",
           "TracedModule", "TracingCheckError", "set_module", "fuser",
           "last_executed_optimized_graph", "run_frozen_optimizations"]

Final = typing.Final


class Error(RuntimeError):
    """torch.jit.Error."""


class TracerWarning(Warning):
    pass


class TracingCheckError(Exception):
    def __init__(self, graph_diff_error, tensor_compare_error, extra_msg=None):
        super().__init__("Tracing failed sanity checks!\n" + (extra_msg or "")
                         + (graph_diff_error or "") + (tensor_compare_error or ""))


def set_module(obj, mod):
    obj.__module__ = mod


class fuser:
    """``with torch.jit.fuser('fuser1'):`` -- XLA fuses itself; changes nothing."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def last_executed_optimized_graph():
    raise NotImplementedError("torch.jit.last_executed_optimized_graph: torchlike has no "
                              "TorchScript graphs")


def run_frozen_optimizations(mod, optimize_numerics=True, preserved_methods=None):
    return mod


def is_scripting() -> bool:
    """False: torchlike never compiles TorchScript."""
    return False


def is_tracing() -> bool:
    return False


def _deprecated(name, instead="`torch.compile` or `torch.export`"):
    # torch 2.13's warning (attributed to the library's line, as torch's is)
    warnings.warn(f"`torch.jit.{name}` is deprecated. Please switch to {instead}.",
                  DeprecationWarning)


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """The function or module itself (it computes the same; see the module docstring)."""
    _deprecated("script")
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with "
                      "torch.jit.optimized_execution()` instead", FutureWarning, stacklevel=2)
    return obj


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """Run ``func`` once on ``example_inputs`` (as torch's tracer does) and return it."""
    from .._tensor import Tensor
    _deprecated("trace")
    if example_inputs is not None or example_kwarg_inputs is not None:
        args = (example_inputs,) if builtins.isinstance(example_inputs, Tensor) else \
            tuple(example_inputs or ())
        func(*args, **(example_kwarg_inputs or {}))
    return func


def script_if_tracing(fn):
    return fn


def export_opnames(m):
    raise NotImplementedError("torch.jit.export_opnames lists TorchScript operators: torchlike "
                              "has no TorchScript")


def trace_module(mod, inputs, **kwargs):
    for name, args in inputs.items():
        from .._tensor import Tensor
        args = (args,) if builtins.isinstance(args, Tensor) else tuple(args)
        getattr(mod, name)(*args)
    return mod


def _identity_decorator(fn=None, **kwargs):
    if fn is None or builtins.isinstance(fn, bool):
        return lambda f: f
    return fn


def ignore(drop=False, **kwargs):
    """``@ignore`` / ``@ignore(drop=True)``: leaves the function as it is."""
    if callable(drop):
        return drop
    return lambda fn: fn


unused = _identity_decorator
export = _identity_decorator
interface = _identity_decorator
script_method = _identity_decorator
_overload = _identity_decorator
_overload_method = _identity_decorator


def Attribute(value, type=None):
    """``self.x = torch.jit.Attribute(value, type)`` is ``value`` outside TorchScript."""
    return value


def annotate(the_type, the_value):
    return the_value


def isinstance(obj, target_type):
    """Python's isinstance, also for ``List[int]``-style container types (checked
    element-wise, as TorchScript refines them)."""
    origin = typing.get_origin(target_type)
    if origin is None:
        return builtins.isinstance(obj, target_type)
    args = typing.get_args(target_type)
    if origin is typing.Union:
        return any(isinstance(obj, a) for a in args)
    if not builtins.isinstance(obj, origin):
        return False
    if origin in (list, set, frozenset) and args:
        return all(isinstance(v, args[0]) for v in obj)
    if origin is dict and args:
        return all(isinstance(k, args[0]) and isinstance(v, args[1]) for k, v in obj.items())
    if origin is tuple and args:
        if len(args) == 2 and args[1] is Ellipsis:
            return all(isinstance(v, args[0]) for v in obj)
        return len(obj) == len(args) and all(isinstance(v, a) for v, a in zip(obj, args))
    return True


_NO_ARCHIVES = ("TorchScript archives are not supported by torchlike (there is no TorchScript): "
                "save the weights with torchlike.save(model.state_dict(), path) and rebuild the "
                "model in Python, then model.load_state_dict(torchlike.load(path))")


def save(m, f, _extra_files=None):
    _deprecated("save", "`torch.export`")
    raise NotImplementedError(f"torch.jit.save: {_NO_ARCHIVES}")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    _deprecated("load", "`torch.export`")
    raise NotImplementedError(f"torch.jit.load: {_NO_ARCHIVES}")


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    return mod


def optimize_for_inference(mod, other_methods=None):
    return mod


class Future:
    """The result of ``fork``: the call already ran; ``wait()`` returns its value."""

    def __init__(self, value):
        self._value = value

    def wait(self):
        return self._value

    def value(self):
        return self._value

    def done(self):
        return True


def fork(func, *args, **kwargs):
    return Future(func(*args, **kwargs))


def wait(future):
    return future.wait()


_onednn = [False]


def enable_onednn_fusion(enabled):
    _onednn[0] = bool(enabled)


def onednn_fusion_enabled():
    return _onednn[0]


def set_fusion_strategy(strategy):
    return [("STATIC", 2), ("DYNAMIC", 10)]


class strict_fusion:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class optimized_execution:
    def __init__(self, should_optimize=True):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class CompilationUnit:
    def __init__(self, lang=None, _frames_up=0):
        raise NotImplementedError("torch.jit.CompilationUnit compiles TorchScript source, which "
                                  "torchlike does not have: write the functions in Python")


def _module_base():
    from ..nn import Module
    return Module


class ScriptFunction:
    """Type of scripted functions in torch; torchlike's ``script`` returns plain functions, so
    no object is ever an instance of it."""


def __getattr__(name):
    # ScriptModule subclasses nn.Module; defined on first use (nn imports lazily)
    if name in ("ScriptModule", "RecursiveScriptModule", "TopLevelTracedModule",
                "TracedModule"):
        cls = type(name, (_module_base(),), {"__doc__": "An nn.Module (torchlike has no "
                                                         "TorchScript)."})
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
