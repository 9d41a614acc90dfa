"""torchlike and jax, both ways.

* arrays: ``from_jax(a)`` / ``torch_view(tree)`` wrap jax arrays as Tensors and
  ``Tensor.jax()`` / ``jax_view(tree)`` unwrap them, all without copies (see
  ``torchlike._tensor_interop`` for who may write: nobody writes into a jax buffer; an in-place
  op on the Tensor rebinds it to a new array).
* jax inside torchlike: ``call_jax(fn, *args)`` runs a pure jax function as ONE op on the
  tape (its backward is ``jax.vjp`` of ``fn``, jitted and cached like any op), so jax, Flax or
  Equinox pieces train with ``.backward()``. ``@jax_op`` makes such a function callable on
  Tensors directly.
* torchlike inside jax: ``to_jax_function(model)`` gives ``((params, buffers), fn)`` with ``fn``
  a pure jax function usable under ``jax.jit``/``jax.grad``/``jax.vmap``/``lax.scan``;
  ``jax_function(f)`` does the same for a torch-style function of Tensors. Tensors are also jax
  pytrees, so ``jax.jit(f)(tensor)`` works directly.
"""
from __future__ import annotations

import functools
import weakref

import jax
import numpy as np

from . import _dtype as D
from ._registry import Op, apply
from ._tensor import Tensor
from .func import _core as C

__all__ = ["from_jax", "torch_view", "jax_view", "call_jax", "jax_op", "to_jax_function",
           "jax_function"]


# ------------------------------------------------------------------ arrays

def from_jax(array):
    """A Tensor over ``array`` (a jax array), sharing its buffer."""
    if isinstance(array, Tensor):
        return array
    if not isinstance(array, (jax.Array, jax.core.Tracer)):
        raise TypeError(f"from_jax: expected a jax array, got {type(array).__name__}")
    D.activate_for(array.dtype)     # (before any op runs on the tensor)
    return Tensor._make(array)


def _is_array(x):
    return isinstance(x, (jax.Array, jax.core.Tracer))


def torch_view(tree):
    """Every jax array in ``tree`` wrapped as a Tensor (no copies)."""
    return jax.tree_util.tree_map(lambda x: Tensor._make(x) if _is_array(x) else x, tree,
                                  is_leaf=lambda x: isinstance(x, Tensor))


def jax_view(tree):
    """Every Tensor in ``tree`` replaced by its jax array (no copies)."""
    return jax.tree_util.tree_map(lambda x: x._data if isinstance(x, Tensor) else x, tree,
                                  is_leaf=lambda x: isinstance(x, Tensor))


# ------------------------------------------------------------------ jax inside torchlike

class _Static:
    """The non-array part of a call_jax call (structure and Python values), hashable for the
    op's cache."""

    __slots__ = ("treedef", "leaves", "dyn", "_h")

    def __init__(self, treedef, leaves, dyn):
        self.treedef, self.leaves, self.dyn = treedef, leaves, dyn
        try:
            self._h = hash((treedef, leaves, dyn))
        except TypeError:
            self._h = None

    def __hash__(self):
        return self._h if self._h is not None else id(self)

    def __eq__(self, other):
        if self is other:
            return True
        if self._h is None or not isinstance(other, _Static) or other._h is None:
            return False
        return (self.treedef == other.treedef and self.dyn == other.dyn
                and self.leaves == other.leaves)

    def __lt__(self, other):
        return id(self) < id(other)


_OPS = weakref.WeakKeyDictionary()
_OPS_STRONG = {}


class _JaxOp:
    """One jax function as a registry Op (not in the global op table)."""

    def __init__(self, fn):
        self.fn = fn
        self.out_info = {}          # (static, avals) -> (out treedef, order)
        name = getattr(fn, "__name__", "jax_fn")
        self.op = Op("call_jax:" + name, self._run, promote=None,
                     grad_name="CallJaxBackward0", poly=False)

    def _run(self, *arrays, static):
        it = iter(arrays)
        leaves = [next(it) if d else v for v, d in zip(static.leaves, static.dyn)]
        args, kwargs = jax.tree_util.tree_unflatten(static.treedef, leaves)
        with jax.disable_jit(False):    # the user's function traces as jax traces it:
            out = self.fn(*args, **kwargs)  # its lax loops stay loops (see _tiers.inlined)
        flat, tree = jax.tree_util.tree_flatten(out)
        flat = [jax.numpy.asarray(o) for o in flat]
        if not flat:
            raise RuntimeError(f"call_jax: {getattr(self.fn, '__name__', self.fn)} returned no "
                               f"arrays")
        # the registry returns differentiable (inexact) outputs first: keep that order always
        inexact = [i for i, o in enumerate(flat) if jax.numpy.issubdtype(o.dtype,
                                                                           jax.numpy.inexact)]
        order = inexact + [i for i in range(len(flat)) if i not in inexact]
        key = (static, tuple((a.shape, str(a.dtype)) for a in arrays))
        self.out_info[key] = (tree, order)
        ordered = tuple(flat[i] for i in order)
        return ordered if len(ordered) != 1 else ordered[0]


def _jax_op(fn):
    try:
        j = _OPS.get(fn)
    except TypeError:
        j = _OPS_STRONG.get(fn)
    if j is None:
        j = _JaxOp(fn)
        try:
            _OPS[fn] = j
        except TypeError:
            _OPS_STRONG[fn] = j
    return j


def call_jax(fn, *args, **kwargs):
    """Run the pure jax function ``fn`` on Tensors as one recorded op.

    ``args``/``kwargs`` are pytrees; Tensors (and jax/numpy arrays) in them reach ``fn`` as jax
    arrays, other values as they are (static: a new value re-traces). The result has ``fn``'s
    structure with its arrays as Tensors; gradients flow to every Tensor input that requires
    grad by ``jax.vjp`` of ``fn`` (integer/bool outputs get no gradient).
    """
    leaves, treedef = jax.tree_util.tree_flatten((args, kwargs),
                                                 is_leaf=lambda x: isinstance(x, Tensor))
    dyn, arrays, statics = [], [], []
    for v in leaves:
        if isinstance(v, Tensor):
            dyn.append(True)
            arrays.append(v)
            statics.append(None)
        elif _is_array(v) or isinstance(v, np.ndarray):
            dyn.append(True)
            arrays.append(Tensor._make(jax.numpy.asarray(v)))
            statics.append(None)
        else:
            dyn.append(False)
            statics.append(v)
    static = _Static(treedef, tuple(statics), tuple(dyn))
    j = _jax_op(fn)
    out = apply(j.op, *arrays, static=static)
    key = (static, tuple((a._d.shape, str(a._d.dtype)) for a in arrays))
    info = j.out_info.get(key)
    if info is None:            # the jit cache matched an equal static from another call
        for (s, av), v in j.out_info.items():
            if s == static and av == key[1]:
                info = v
                break
    tree, order = info
    outs = out if isinstance(out, tuple) else (out,)
    flat = [None] * len(outs)
    for pos, o in zip(order, outs):
        flat[pos] = o
    return jax.tree_util.tree_unflatten(tree, flat)


def jax_op(fn):
    """Decorator: ``fn`` (a pure jax function) becomes callable on Tensors via ``call_jax``."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return call_jax(fn, *args, **kwargs)
    return wrapper


# ------------------------------------------------------------------ torchlike inside jax

def _to_tensors(tree):
    """jax arrays as Tensors jax may differentiate: tracked (``func._core.wrap_tracked``)."""
    return jax.tree_util.tree_map(
        lambda x: C.wrap_tracked(x) if _is_array(x) or isinstance(x, np.ndarray)
        else x, tree, is_leaf=lambda x: isinstance(x, Tensor))


def _from_tensors(tree, api):
    def leaf(x):
        if isinstance(x, Tensor):
            return x._data
        return x
    return jax.tree_util.tree_map(leaf, tree, is_leaf=lambda x: isinstance(x, Tensor))


def jax_function(f):
    """A pure jax function from a torch-style one: jax arrays in ``args`` become Tensors, the
    result's Tensors become jax arrays. Use it under ``jax.jit``, ``jax.grad``, ``jax.vmap``..."""
    @functools.wraps(f)
    def fn(*args, **kwargs):
        args, kwargs = _to_tensors((args, kwargs))
        snap = C.snapshot(C.outside_tensors(f, (), {}))
        try:
            with C.traced("jax_function", differentiating=True):
                out = f(*args, **kwargs)
        finally:
            C.check_no_leak(snap, "jax_function")
        return _from_tensors(out, "jax_function")
    return fn


def to_jax_function(module, *, with_buffers=False, rng=False):
    """``((params, buffers), fn)``: ``module`` as a pure jax function of its state.

    ``params``/``buffers`` are dicts name -> jax array (the module's current values, no
    copies). ``fn(params, buffers, *args, **kwargs)`` runs the module with those values
    (``functional_call``) and returns its output with Tensors as jax arrays; with
    ``with_buffers=True`` it returns ``(output, new_buffers)`` (BatchNorm running stats in
    training mode); otherwise a buffer update raises. With ``rng=True`` the signature is
    ``fn(params, buffers, key, *args, **kwargs)`` and random ops (dropout) draw from ``key``;
    without it, a random op under a jax trace raises (its key would be baked into the trace).
    """
    from .func._functional_call import reparametrize
    params = {k: v._data for k, v in module.named_parameters()}
    buffers = {k: v._data for k, v in module.named_buffers() if v is not None}

    def fn(params, buffers, *args, **kwargs):
        key = None
        if rng:
            if not args:
                raise TypeError("to_jax_function(rng=True): fn(params, buffers, key, *args)")
            key, args = args[0], args[1:]
        p = {k: C.wrap_tracked(v) for k, v in params.items()}
        b = {k: C.wrap_tracked(v) for k, v in buffers.items()}
        b_in = dict(b)
        data_in = {k: t._data for k, t in b.items()}
        targs, tkwargs = _to_tensors((args, kwargs))
        traced_state = any(C.is_tracer(x) for x in jax.tree_util.tree_leaves(
            (params, buffers, args, kwargs)))
        with C.traced("to_jax_function", differentiating=True), C.key_level(key, traced_state):
            with reparametrize(module, {**p, **b}, tie_weights=True):
                out = module(*targs, **tkwargs)
        out = _from_tensors(out, "to_jax_function")
        new_b = {k: t._data for k, t in b_in.items()}
        if with_buffers:
            return out, new_b
        changed = [k for k in new_b if new_b[k] is not data_in[k]]
        if changed:
            raise RuntimeError(
                f"to_jax_function: the module updated buffer(s) {changed} (e.g. BatchNorm "
                f"running stats in training mode); use to_jax_function(module, "
                f"with_buffers=True) to get fn(...) -> (output, new_buffers), or module.eval()")
        return out

    return (params, buffers), fn
