"""autograd.Function: user-defined ops with a Python ``backward``.

>>> class Exp(torchlike.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         y = x.exp()
...         ctx.save_for_backward(y)
...         return y
...     @staticmethod
...     def backward(ctx, g):
...         (y,) = ctx.saved_tensors
...         return g * y
>>> Exp.apply(torchlike.tensor([0.0], requires_grad=True))

``forward`` runs with grad mode off; the outputs get one tape node whose backward calls the
user's ``backward`` (under grad mode when ``create_graph=True``, so it can be differentiated
again). Both the ``forward(ctx, *args)`` style and ``forward(*args)`` + ``setup_context`` work.
"""
from __future__ import annotations

import functools

from . import grad_mode as _gm
from .graph import _FREED_MSG, Node, cotangents, tensor_class

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "once_differentiable"]


class FunctionCtx:
    """The ``ctx`` of a custom Function: saved tensors and per-call flags."""

    def __init__(self):
        self.to_save = ()
        self.needs_input_grad = ()
        self.materialize_grads = True
        self.non_differentiable = set()
        self.dirty = set()
        self._saved = None
        self._freed = False

    def save_for_backward(self, *tensors):
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.to_save_forward = tensors

    @property
    def saved_tensors(self):
        if self._freed:
            raise RuntimeError(_FREED_MSG)
        return self._saved if self._saved is not None else tuple(self.to_save)

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        self.dirty.update(id(t) for t in tensors)

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


class BackwardCFunction(Node):
    """The tape node of one ``Function.apply`` call; each Function has its own subclass,
    ``<Function>Backward`` (``Function._backward_cls``), as in torch."""

    __slots__ = ("fn_cls", "ctx", "n_args", "grad_positions", "outputs", "in_meta")

    def __init__(self, fn_cls, ctx, edges, positions, out_meta, n_args, outputs, in_meta):
        super().__init__(fn_cls.__name__ + "Backward", tuple(edges), None, None, None,
                         out_meta, saves=True)
        self.fn_cls = fn_cls
        self.ctx = ctx
        self.n_args = n_args
        self.grad_positions = positions      # argument index of each edge
        # per forward output: the index of its cotangent (a differentiable output), or the
        # (shape, dtype) of a tensor output without one, or None (not a tensor)
        self.outputs = outputs
        self.in_meta = in_meta      # per forward input: (shape, dtype) of a tensor, or None

    @property
    def _forward_cls(self):
        return self.fn_cls

    def release(self):
        # like torch: a second backward fails only if the function saved tensors
        self.ctx._freed = True
        self.freed = bool(self.ctx.to_save)

    @property
    def materialize_grads(self):
        # outputs without a gradient reach the user's backward as zeros, or as None
        return self.ctx.materialize_grads

    def run(self, cots, create_graph):
        """Call the user's backward with a gradient per forward output (zeros, or None without
        materialized grads, for a non-differentiable tensor output; None for any other
        output); return one gradient per edge."""
        rep = cotangents(create_graph)
        grads_in = []
        for o in self.outputs:
            if o.__class__ is int:
                grads_in.append(rep.to_user(cots[o]))
            elif o is not None and self.ctx.materialize_grads:
                grads_in.append(tensor_class()._make(_jnp().zeros(*o)))
            else:
                grads_in.append(None)
        with _gm.set_grad_enabled(create_graph):
            res = self.fn_cls.backward(self.ctx, *grads_in)
        if not isinstance(res, tuple):
            res = (res,)
        return tuple(rep.from_user(g) for g in self._validated(res))

    def _validated(self, res):
        """The user's gradients for the edges, checked and fitted as torch's engine does: one
        per forward input (extra ones must be None), None for an input that is not a tensor;
        a gradient of another shape summed to the input's if it expands to it (else torch's
        error), and cast to the input's dtype."""
        name, n = self.fn_cls.__name__ + "Backward", self.n_args
        if len(res) < n or any(g is not None for g in res[n:]):
            raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(res)})")
        for i, (g, meta) in enumerate(zip(res, self.in_meta)):
            if g is not None and meta is None:
                raise RuntimeError(f"function {name} returned a gradient different than None "
                                   f"at position {i + 1}, but the corresponding forward input "
                                   f"was not a Variable")
        out = []
        for pos in self.grad_positions:
            g = res[pos]
            if g is not None:
                shape, dtype = self.in_meta[pos]
                if tuple(g.shape) != shape:
                    if not _expands_to(shape, tuple(g.shape)):
                        raise RuntimeError(f"Function {name} returned an invalid gradient at "
                                           f"index {pos} - got {list(g.shape)} but expected "
                                           f"shape compatible with {list(shape)}")
                    g = g.sum_to_size(shape)
                if g.dtype is not dtype:
                    g = g.to(dtype)
            out.append(g)
        return out


def _expands_to(shape, target):
    """Whether a tensor of ``shape`` broadcasts to ``target`` (torch's is_expandable_to)."""
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(reversed(shape), reversed(target)))


def _jnp():
    import jax.numpy as jnp
    return jnp


class _FunctionMeta(type):
    """Gives each Function its node class, ``<name>Backward`` (``_backward_cls``)."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,),
                                 {"__slots__": (), "__module__": BackwardCFunction.__module__,
                                  "__qualname__": name + "Backward"})


class Function(metaclass=_FunctionMeta):
    """Base class of custom autograd functions: define ``forward`` and ``backward`` static
    methods and call ``YourFunction.apply(*args)``."""

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward
    # torchlike's own Functions whose backward is the forward's derivative: jax may
    # differentiate their forward where it differentiates a whole function
    _jax_differentiable = False

    @classmethod
    def apply(cls, *args, **kwargs):
        Tensor = tensor_class()
        ctx = FunctionCtx()
        grad_on = _gm.is_grad_enabled()
        needs = tuple(isinstance(a, Tensor) and a.requires_grad and grad_on for a in args)
        traced = False
        if any(needs):
            traced = _gm.node_tracing()
            if traced and not cls._jax_differentiable:
                # (jax would differentiate the forward's ops and never call this backward)
                raise RuntimeError(
                    f"torchlike: the custom autograd.Function {cls.__name__} is called inside a "
                    f"function that jax differentiates as a whole (a compiled module's forward, "
                    f"a torch.func transform, interop.jax_function), where its backward cannot "
                    f"be used; call it outside the transform (torchlike.compile runs such a "
                    f"function eagerly)")
        ctx.needs_input_grad = needs
        separate = cls.setup_context is not Function.setup_context
        # (where jax differentiates the whole function, the forward's ops are tracked: jax's
        # derivative of them stands for the backward)
        with _gm.enable_grad() if traced else _gm.no_grad():
            if separate:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        dirty = ctx.dirty
        if dirty:
            returned = {id(o) for o in outs}
            if any(i not in returned for i in dirty):
                raise RuntimeError(
                    "Some elements marked as dirty during the forward method were not returned "
                    "as output. The inputs that are modified inplace must all be outputs of the "
                    "Function.")
            for a, n in zip(args, needs):
                if n and id(a) in dirty and a.grad_fn is None:
                    raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                       "in-place operation.")
        if not any(needs):
            return out
        edges, positions = [], []
        for i, (a, n) in enumerate(zip(args, needs)):
            if n:
                edges.append(a._edge())
                positions.append(i)
        diff = [o for o in outs if isinstance(o, Tensor) and id(o) not in ctx.non_differentiable
                and (o.dtype.is_floating_point or o.dtype.is_complex)]
        outputs = []
        for o in outs:
            k = next((k for k, d in enumerate(diff) if o is d), None)
            outputs.append(k if k is not None else
                           (tuple(o._d.shape), o._d.dtype) if isinstance(o, Tensor) else None)
        node = cls._backward_cls(cls, ctx, edges, positions,
                                 tuple((tuple(o._d.shape), o._d.dtype) for o in diff),
                                 len(args), tuple(outputs),
                                 tuple((tuple(a._d.shape), a.dtype) if isinstance(a, Tensor)
                                       else None for a in args))
        wrapped = []
        k = 0
        for o in outs:
            if any(o is d for d in diff):
                t = Tensor._make(o._data, node, k)
                if id(o) in dirty and any(o is a for a in args):
                    # an input modified in place (``mark_dirty``) is returned itself, its history
                    # rebased on this node (a view's base takes it through the copy, as torch's
                    # CopySlices); its version moves on, as in torch
                    if o._base is None:
                        o.grad_fn, o._output_nr, o._requires_grad = node, k, True
                        o._vc[0] += 1
                    else:
                        with _gm.enable_grad():
                            o.copy_(t)
                    t = o
                k += 1
                wrapped.append(t)
            else:
                wrapped.append(o)
        # saved tensors that are outputs must be the wrapped outputs (they carry the history)
        ctx._saved = tuple(next((w for o, w in zip(outs, wrapped) if s is o), s)
                           for s in ctx.to_save)
        return wrapped[0] if single else tuple(wrapped)


def once_differentiable(fn):
    """Mark a backward as not differentiable: it runs with grad mode off."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with _gm.no_grad():
            return fn(ctx, *args)
    return wrapper
