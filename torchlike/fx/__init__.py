"""torch.fx's names, for code that checks against them: tracing is not provided.

torch.fx traces Python code into a graph of torch calls (``symbolic_trace``) that passes
rewrite. torchlike has no such tracer (its programs are jax traces). Libraries name fx's
classes without tracing (``isinstance(x, torch.fx.Proxy)``, a return annotation
``-> torch.fx.GraphModule``), so the classes exist and nothing is ever an instance of them;
tracing, or making a graph, raises NotImplementedError.
"""
from __future__ import annotations

__all__ = ["GraphModule", "Graph", "Node", "Proxy", "Tracer", "Interpreter", "Transformer",
           "symbolic_trace", "wrap"]

_MSG = ("torchlike.fx: torch.fx's graph tracing is not provided (torchlike compiles with jax "
        "traces: torchlike.compile, torchlike.func); {} cannot be made")


def _refuse(name):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError(_MSG.format(name))
    return __init__


class Graph:
    __init__ = _refuse("a Graph")


class Node:
    __init__ = _refuse("a Node")


class Proxy:
    __init__ = _refuse("a Proxy")


class Tracer:
    __init__ = _refuse("a Tracer")


class Interpreter:
    __init__ = _refuse("an Interpreter")


class Transformer(Interpreter):
    __init__ = _refuse("a Transformer")


def __getattr__(name):
    if name == "GraphModule":           # (an nn.Module subclass, as torch's)
        from ..nn.modules.module import Module

        class GraphModule(Module):
            __init__ = _refuse("a GraphModule")
        GraphModule.__module__ = __name__
        globals()["GraphModule"] = GraphModule
        return GraphModule
    raise AttributeError(f"module {__name__!r} has no attribute {name!r} (torch.fx's tracing "
                         f"is not provided)")


def symbolic_trace(root, concrete_args=None):
    raise NotImplementedError(_MSG.format("a traced GraphModule"))


def wrap(fn_or_name):
    """Marks a function as a leaf of fx's tracing: with no tracer, the function itself."""
    return fn_or_name
