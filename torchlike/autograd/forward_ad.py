"""Forward-mode AD with dual tensors (``torch.autograd.forward_ad``), on ``jax.jvp``.

    >>> import torchlike.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(primal, tangent)
    ...     y = f(x)
    ...     jvp = fwAD.unpack_dual(y).tangent      # J_f(primal) @ tangent

A dual tensor carries its tangent (a Tensor of its shape) beside its value. While a dual level
is open the op registry hands every op call to ``_propagate``: when an input carries a tangent,
the op runs as usual and each floating output receives the tangent ``jax.jvp`` gives for the op's
own jax function at those inputs. Outputs of non-differentiable ops (``argmax``, comparisons)
and of ``detach()`` carry none, as in torch. Leaving the level drops every tangent made in it.

Only one level at a time, as torch. Tangents are values, not recorded on the backward tape
(torch also differentiates them in reverse mode); in-place ops carry the tangent of what they
write into the tensor written, not into the other views of its storage.
"""
from __future__ import annotations

import functools
import threading
from typing import NamedTuple

import jax
import jax.numpy as jnp

from .. import _registry
from . import _apply_hooks
from . import function as _function

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]

_current_level = -1
_live = {}               # level -> its token (a dict: {"alive": bool})
_tls = threading.local()


def _tensor():
    return _apply_hooks.tensor_class()


def tangent_of(t):
    """The tangent ``t`` carries at the open level, or None."""
    fw = t.__dict__.get("_fw")
    if fw is None or not fw[0]["alive"]:
        return None
    return fw[1]


def _set_tangent(t, tangent):
    t.__dict__["_fw"] = (_live[_current_level], tangent)


# ------------------------------------------------------------------ levels

def enter_dual_level():
    """Open a forward AD level (torch allows one at a time); returns its index."""
    global _current_level
    if _current_level >= 0:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _current_level += 1
    _live[_current_level] = {"alive": True}
    _apply_hooks.install("forward_ad", _propagate)
    return _current_level


def exit_dual_level(*, level=None):
    """Close the level: the tangents made in it are dropped."""
    global _current_level
    if level is None:
        level = _current_level
    if level != _current_level:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was "
                           "created. This is not supported.")
    _live.pop(level)["alive"] = False
    _current_level = level - 1
    if _current_level < 0:
        _apply_hooks.uninstall("forward_ad")


class dual_level:
    """Context manager (and decorator) for a forward AD level."""

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapper

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()


# ------------------------------------------------------------------ dual tensors

def _untracked(fn, *args):
    """Run ``fn`` without tangent propagation (a primal view of a dual tensor)."""
    prev = getattr(_tls, "busy", False)
    _tls.busy = True
    try:
        return fn(*args)
    finally:
        _tls.busy = prev


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` carrying ``tangent`` (same shape; cast to ``tensor``'s dtype)."""
    if level is None:
        level = _current_level
    if level < 0:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, "
                           "make sure to enter_dual_level() first.")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}.")
    out = _untracked(tensor.view_as, tensor)
    if tangent.dtype == tensor.dtype and tuple(tangent.stride()) == tuple(tensor.stride()):
        # torch keeps the tangent itself where its layout is the primal's:
        # unpack_dual(make_dual(p, t)).tangent is t (forward-mode AD tutorial)
        tan = tangent
    else:
        # else a copy with the primal's strides
        tan = _untracked(lambda: tensor.new_empty_strided(
            tuple(tensor.shape), tuple(tensor.stride())).copy_(tangent.detach()))
    _set_tangent(out, tan)
    return out


class UnpackedDualTensor(NamedTuple):
    """``unpack_dual``'s result: the primal (a view without tangent) and the tangent."""

    primal: object
    tangent: object


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of ``tensor`` at the open level (tangent None if it has none)."""
    if level is None:
        level = _current_level
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    tangent = tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_untracked(tensor.view_as, tensor), tangent)


# ------------------------------------------------------------------ propagation through ops

def _propagate(op, args, static):
    """The registry's hook while a level is open: ``NotImplemented`` (run the op as usual) when
    no input carries a tangent; else the op's outputs, with their tangents."""
    if getattr(_tls, "busy", False) or not op.differentiable:
        return NotImplemented
    T = _tensor()
    duals = [i for i, a in enumerate(args) if isinstance(a, T) and tangent_of(a) is not None]
    if not duals:
        return NotImplemented
    out = _untracked(lambda: _apply_hooks.apply(op, *args, **static))
    cast = _registry._result_dtype(op, args) if op.promote is not None else None
    cast = None if cast is None else cast.np
    arrays = [a._data if isinstance(a, T) else a for a in args]
    fn = op.fn

    def f(*d):
        xs = list(arrays)
        for i, v in zip(duals, d):
            xs[i] = v
        if cast is not None:
            xs = [x if x is None else _registry._cast(x, cast) for x in xs]
        return fn(*xs, **static)

    def f_inexact(*d):
        r = f(*d)
        r = r if isinstance(r, tuple) else (r,)
        return [o for o in r if jnp.issubdtype(o.dtype, jnp.inexact)], None

    from ..func._eager import _jvp     # jax.jvp, or the double-vjp form for custom_vjp ops
    primals = [arrays[i] for i in duals]
    tangents = [tangent_of(args[i])._data.astype(arrays[i].dtype) for i in duals]
    _, t_outs, _ = _jvp(f_inexact, primals, tangents)
    outs = out if isinstance(out, tuple) else (out,)
    inexact = [o for o in outs
               if isinstance(o, T) and jnp.issubdtype(o._d.dtype, jnp.inexact)]
    for o, t in zip(inexact, t_outs):
        _set_tangent(o, T._make(jnp.asarray(t, o._d.dtype)))
    return out


# ------------------------------------------------------------------ custom Functions

def function_apply(cls, ctx, args, run_forward, has_jvp):
    """``cls.apply`` where an input carries a tangent at the open level: the forward runs
    without tangent propagation, then ``cls.jvp(ctx, *tangents)`` (a tangent per input: zeros
    for a tensor without one, None for any other argument; ``ctx.saved_tensors`` are those of
    ``ctx.save_for_forward``) gives each output's tangent, checked as torch's engine checks
    them. None where no input carries a tangent (the caller applies as usual)."""
    T = _tensor()
    if _current_level < 0 or getattr(_tls, "busy", False) or not any(
            isinstance(a, T) and tangent_of(a) is not None for a in args):
        return None
    if not has_jvp:
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")
    out = _untracked(run_forward)
    outs = out if isinstance(out, tuple) else (out,)
    tangents = []
    for a in args:
        if isinstance(a, T):
            t = tangent_of(a)
            tangents.append(t if t is not None else _zeros_like(a))
        else:
            tangents.append(None)
    saved = ctx._saved
    ctx._saved = tuple(getattr(ctx, "to_save_forward", ()))
    try:
        res = _untracked(cls.jvp, ctx, *tangents)
    finally:
        ctx._saved = saved
    res = res if isinstance(res, tuple) else (res,)
    if len(res) != len(outs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(outs)} but got {len(res)})")
    for i, (o, t) in enumerate(zip(outs, res)):
        if t is None or not isinstance(o, T) or not (o.is_floating_point() or o.is_complex()):
            continue
        if any(o is a for a in args) and id(o) not in ctx.dirty:
            raise RuntimeError("A custom Function's forward is returning a view (or an input "
                               "as-is) but the jvp is not returning a view.")
        if tuple(t.shape) != tuple(o.shape):
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                f"original Tensor, this is not supported. Tensor is of size {list(o.shape)} "
                f"while the given forward gradient is of size {list(t.shape)}.")
        _set_tangent(o, t.detach())          # (in the jvp's dtype, as torch keeps it)
    return out


def _zeros_like(a):
    return _registry._Tensor._make(jnp.zeros(a._d.shape, a._d.dtype))


_function.forward_mode_apply[0] = function_apply
