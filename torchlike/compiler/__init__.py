"""``torchlike.compiler``: the user-facing knobs of ``torchlike.compile`` (``torch.compiler``).

Nothing here imports ``torch._dynamo``-style machinery: ``config`` holds the few settings
(``recompile_limit``, ``cache_size_limit``), ``disable`` keeps a function out of compiled
programs, ``is_compiling`` says whether code is being traced, ``reset`` drops every program.
"""
from __future__ import annotations

import functools

from .._compile import _api, _trace
from .._compile._api import config, reset  # noqa: F401

__all__ = ["compile", "reset", "allow_in_graph", "disable", "is_compiling",
           "is_dynamo_compiling", "is_exporting", "set_stance", "list_backends", "config",
           "cudagraph_mark_step_begin", "assume_constant_result", "substitute_in_graph"]


def compile(*args, **kwargs):
    """``torchlike.compile`` (``torch.compiler.compile``)."""
    return _api.compile(*args, **kwargs)


def is_compiling():
    """True while torchlike.compile traces code into a program, and in a compiled function
    that runs eagerly after a graph break (torch compiles the code around a break); False in
    code marked ``disable`` (``torch.compiler``)."""
    return _trace.is_tracing() or (_trace.in_break_fallback() and not _api._local.disabled)


is_dynamo_compiling = is_compiling


def is_exporting():
    return False


def allow_in_graph(fn):
    """A no-op: every torchlike function is traced into the program already."""
    return fn


def assume_constant_result(fn):
    """``fn``'s result is a constant of the program that calls it: what torchlike's compile does
    with any Python call it traces (the function runs while tracing, its result is baked in),
    so ``fn`` itself."""
    return fn


def substitute_in_graph(*args, **kwargs):
    raise NotImplementedError("torchlike.compiler.substitute_in_graph is not supported")


def disable(fn=None, recursive=True, *, reason=None):
    """Keep ``fn`` out of compiled programs: called outside one it runs eagerly (and, unless
    ``recursive=False``, compiled functions it calls run eagerly too); reached while tracing,
    the enclosing compiled function falls back to eager execution (a graph break, with one
    warning)."""
    if fn is None:
        return functools.partial(disable, recursive=recursive, reason=reason)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if _trace.is_tracing():
            raise _trace.GraphBreak(f"{getattr(fn, '__qualname__', fn)!r} is marked "
                                    f"torchlike.compiler.disable"
                                    + (f" ({reason})" if reason else ""))
        if not recursive:
            return fn(*args, **kwargs)      # (the functions it calls may still compile)
        _api._local.disabled += 1
        try:
            return fn(*args, **kwargs)
        finally:
            _api._local.disabled -= 1
    wrapper._torchlike_disable = True
    return wrapper


def set_stance(stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
    """``"default"``, ``"force_eager"`` (compiled functions run eagerly), ``"eager_on_recompile"``
    (use existing programs, run eagerly instead of recompiling) or ``"fail_on_recompile"``."""
    if stance not in ("default", "force_eager", "eager_on_recompile", "fail_on_recompile"):
        raise RuntimeError(f"invalid torch.compile stance '{stance}'")
    if skip_guard_eval_unsafe or force_backend is not None:
        raise NotImplementedError("set_stance(skip_guard_eval_unsafe=, force_backend=) are "
                                  "not supported")
    config.stance = stance


def list_backends(exclude_tags=("debug", "experimental")):
    return sorted(_api._BACKENDS)


def cudagraph_mark_step_begin():
    """A no-op (XLA programs need no CUDA-graph step marks)."""
