"""torch's ``*_copy`` functions (``t_copy``, ``view_copy``, ``unbind_copy``, ...): a view op's
result as a new contiguous tensor with its own storage, for graph compilers that cannot alias.

One table, ``_COPIES``: each copy is its view function's result (its argument checks and
errors, its declared backward) passed through ``_fresh``, one node that copies its inputs and
carries torch's ``grad_fn`` name (``TBackward0_copy``); its backward is the identity, so the
gradient is the view's. torch's copies are one node, ours are two: ``t_copy(x).grad_fn``'s
``next_functions`` is the view's node (``TBackward0``), where torch's is ``x``'s
``AccumulateGrad``. An ``out=`` whose input requires grad is written detached (torch gives
``out`` a ``NotImplemented`` grad_fn).

``out=``: torch's copy kernels take an ``out`` of the result's dtype only ("Expected out
tensor to have dtype float, but got double instead") and resize it; the three list-returning
copies write into a list of tensors and return None.
"""
from __future__ import annotations

import jax.numpy as jnp

from .._registry import apply, defop
from .._tensor import Tensor, _wrap_dim
from ._surface import public
from .special_ops import no_derivative

__all__ = ["view_copy", "t_copy", "transpose_copy", "permute_copy", "expand_copy",
           "select_copy", "slice_copy", "diagonal_copy", "unsqueeze_copy", "squeeze_copy",
           "unbind_copy", "split_copy", "split_with_sizes_copy", "as_strided_copy",
           "alias_copy", "detach_copy", "unfold_copy", "view_as_real_copy",
           "view_as_complex_copy"]


@defop("fresh_copy", saves=False, grad_name=lambda kw: kw["grad"])
def _fresh_op(*arrays, grad, many):
    out = tuple(jnp.array(a, copy=True) for a in arrays)
    return out if many else out[0]


def _fresh(view, grad):
    """``view`` (a Tensor or a tuple of them) copied into new storage, contiguous, as one node
    named ``grad`` (else the view's own node name + ``_copy``)."""
    many = isinstance(view, (tuple, list))
    views = tuple(view) if many else (view,)
    if not views:
        return ()
    if grad is None:
        g = next((v.grad_fn for v in views if v.grad_fn is not None), None)
        grad = (g.name() if g is not None else "CloneBackward0") + "_copy"
    out = apply(_fresh_op, *views, grad=grad, many=many)
    return tuple(out) if many else out


# ------------------------------------------------------------------ the views

def _raw(fn):
    """A public function without its argument-type checks (the copy has its own)."""
    return getattr(fn, "_operands_of", fn)


def _combination(name, args):
    from .._tensor import _type_name
    return TypeError(f"{name}() received an invalid combination of arguments - got "
                     f"({', '.join(_type_name(a) for a in args)}), but expected one of:")


def _ints(seq):
    from ._surface import _int_like
    return isinstance(seq, (tuple, list)) and all(_int_like(v, bools=True) for v in seq)


def _view(input, *size, **kwargs):
    """``view_copy(input, size)`` / ``view_copy(input, dtype)``: reshape's values (torch's
    copy reads any layout: a transposed input is taken)."""
    from .. import _dtype as D
    from .view import reshape
    if not size and len(kwargs) == 1 and ("size" in kwargs or "dtype" in kwargs):
        size = tuple(kwargs.values())
    elif kwargs:
        raise _combination("view_copy", (input, *size, *kwargs.values()))
    if len(size) == 1 and isinstance(size[0], D.dtype):
        return input.view(size[0])
    if len(size) != 1 or not _ints(size[0]):
        raise _combination("view_copy", (input, *size))
    return reshape(input, *size)


def _slice(input, dim=0, start=None, end=None, step=1):
    n = input.dim()
    d = _wrap_dim(dim, n)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return input[(slice(None),) * d + (slice(start, end, step),)]


def _squeeze(input, dim=None):
    from .view import squeeze
    return squeeze(input, dim)


def _expand(input, size, *more, implicit=False):
    if more:        # (torch's expand_copy takes the size as one sequence)
        raise TypeError(f"expand_copy() takes 2 positional arguments but {2 + len(more)} were "
                        f"given")
    if not isinstance(implicit, bool):
        raise TypeError(f"expand_copy(): argument 'implicit' must be bool, not "
                        f"{type(implicit).__name__}")
    return input.expand(tuple(size))


def _permute(input, dims, *more):
    from .view import permute
    if more:        # (torch's permute_copy takes the dims as one sequence)
        raise TypeError(f"permute_copy() takes 2 positional arguments but {2 + len(more)} were "
                        f"given")
    return _raw(permute)(input, dims)


def _unfold(input, dimension, size, step):
    return input.unfold(dimension, size, step)


def _alias(input):
    return input.view(tuple(input.shape))


def _view_as_complex(input):
    from ..autograd import grad_mode
    from .complex_numbers import view_as_complex
    out = view_as_complex(input)        # (its argument errors first, as torch's)
    if grad_mode.is_grad_enabled() and input.requires_grad:
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation "
                           "for outputs with complex dtype.")
    return out


def _split(input, split_size, dim=0):
    from .join import split
    if not isinstance(split_size, int):     # (torch's split_copy takes one int)
        raise TypeError(f"split_copy(): argument 'split_size' (position 2) must be int, not "
                        f"{type(split_size).__name__}")
    return _raw(split)(input, split_size, dim)


def _views():
    """copy name -> (the view function, the grad_fn name torch gives: None for the view's own
    node name + ``_copy``, ``multi``: the view returns a tuple)."""
    from . import complex_numbers, join, rearrange, restructure, view
    return {
        "view_copy": (_view, "ViewBackward0_copy"),
        "t_copy": (_raw(view.t), None),
        "transpose_copy": (_raw(view.transpose), None),
        "permute_copy": (_permute, None),
        "expand_copy": (_expand, None),
        "select_copy": (_raw(view.select), None),
        "slice_copy": (_slice, "SliceBackward0_copy"),
        "diagonal_copy": (_raw(rearrange.diagonal), None),
        "unsqueeze_copy": (_raw(view.unsqueeze), None),
        "squeeze_copy": (_squeeze, None),
        "unbind_copy": (_raw(join.unbind), None),
        "split_copy": (_split, "SplitBackward0_copy"),
        "split_with_sizes_copy": (_raw(join.split_with_sizes), "SplitWithSizesBackward0_copy"),
        "as_strided_copy": (_raw(restructure.as_strided), None),
        "alias_copy": (_alias, "AliasBackward0_copy"),
        "unfold_copy": (_unfold, None),
        "view_as_real_copy": (complex_numbers.view_as_real, None),
        "view_as_complex_copy": (_view_as_complex, None),
    }


# ------------------------------------------------------------------ out=

def _cpp(dt):
    from .._tensor import _CPP
    return _CPP.get(dt.name, {"uint16": "short unsigned int", "uint32": "unsigned int",
                              "uint64": "long unsigned int"}.get(dt.name, dt.name))


def _write(result, out, name):
    """torch's copy kernels' ``out=``: ``out`` of ``result``'s dtype, resized to its shape."""
    from .._storage import write_out
    from ..autograd import grad_mode
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out.dtype is not result.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_cpp(result.dtype)}, but got "
                           f"{_cpp(out.dtype)} instead")
    if grad_mode.is_grad_enabled() and out.requires_grad:
        raise RuntimeError(f"aten::{name}(): functions with out=... arguments don't support "
                           f"automatic differentiation, but one of the arguments requires grad.")
    return write_out(result.detach(), out, name)


def _write_list(results, out, name, overload):
    """The list-returning copies' ``out=``: a list of tensors, one per result; returns None.
    ``split_copy`` copies into each (broadcast, any dtype), the others resize and keep dtype."""
    if not isinstance(out, (tuple, list)) or not all(isinstance(o, Tensor) for o in out):
        raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if len(out) != len(results):
        paren = "()" if name == "split_copy" else ""
        raise RuntimeError(f"{name}_{overload}{paren} expected an out= argument of size "
                           f"{len(results)}, got size {len(out)}")
    from ..autograd import grad_mode
    for r, o in zip(results, out):
        if name == "split_copy":
            from .._registry import broadcast_error
            problem = broadcast_error([tuple(o.shape), tuple(r.shape)])
            if problem is not None:
                raise RuntimeError(problem)
            with grad_mode.no_grad():
                o.copy_(r.detach())
        else:
            _write(r, o, name)
    return None


_OUT_OVERLOAD = {"unbind_copy": "int_out", "split_copy": "Tensor_out",
                 "split_with_sizes_copy": "out"}


def _with_out(fn, name):
    """``fn`` with torch's ``out=`` for a copy kernel (``_write``, ``_write_list``)."""
    import functools
    many = name in _OUT_OVERLOAD

    @functools.wraps(fn)
    def g(*args, out=None, **kwargs):
        result = fn(*args, **kwargs)
        if out is None:
            return result
        if many:
            return _write_list(result, out, name, _OUT_OVERLOAD[name])
        return _write(result, out, name)
    g._handles_out = True
    return g


def _make(name, view_fn, grad):
    def copy(input, *args, **kwargs):
        return _fresh(view_fn(input, *args, **kwargs), grad)
    copy.__name__ = copy.__qualname__ = name
    copy.__doc__ = (f"``{name[:-5]}``'s result as a new contiguous tensor with its own storage "
                    f"(torch's ``{name}``).")
    return public(_with_out(copy, name), name=name)


# ------------------------------------------------------------------ detach_copy

# torch's detach_copy keeps requires_grad; backward through it raises
_detach = defop("detach_copy", saves=False, grad_name="torch::autograd::NotImplemented")(
    no_derivative(lambda a: jnp.array(a, copy=True), "detach_copy"))


def detach_copy(input):
    """``input``'s values in new storage; the result requires grad with ``input`` and backward
    through it raises, as torch's."""
    return apply(_detach, input)


detach_copy = public(_with_out(detach_copy, "detach_copy"))

# the copies, one per row of the table (``__all__`` names them)
globals().update({n: _make(n, fn, grad) for n, (fn, grad) in _views().items()})
