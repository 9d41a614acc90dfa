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
import inspect
import warnings

from .. import _fused
from . import grad_mode as _gm
from .graph import _FREED_MSG, Node, _version_message, cotangents, tensor_class

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
        self._versions = None       # per saved tensor: (version counter, version, is output)
        self._freed = False

    def save_for_backward(self, *tensors):
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.to_save_forward = tensors

    @property
    def saved_tensors(self):
        if self._freed:
            raise RuntimeError(_FREED_MSG)
        if self._versions:
            self._check_versions()
        return self._saved if self._saved is not None else tuple(self.to_save)

    def _check_versions(self):
        """torch's error for a saved tensor an in-place write changed since the forward."""
        for t, (vc, v, output) in zip(self._saved, self._versions):
            if vc is not None and vc[0] != v:
                if output is None:
                    raise RuntimeError(_version_message(None, vc[0], v, t, None))
                raise RuntimeError(_version_message(_Named(output), vc[0], v, None,
                                                    (tuple(t._d.shape), t._d.dtype)))

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable.update(id(t) for t in tensors)

    def mark_dirty(self, *tensors):
        self.dirty.update(id(t) for t in tensors)

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


class _Named:
    """A node's name where a message reads ``fn.name()`` (the saved output's node)."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name


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

    # torch's node of a Function call is its ctx: what forward stored on ctx reads (and
    # writes) through ``y.grad_fn`` (``y.grad_fn.saved_tensors``, ``y.grad_fn.k``)
    def __getattr__(self, attr):
        try:
            ctx = BackwardCFunction.ctx.__get__(self)
        except AttributeError:
            ctx = None
        if ctx is not None and not attr.startswith("__"):
            try:
                return getattr(ctx, attr)
            except AttributeError:
                pass
        return super().__getattr__(attr)

    def __setattr__(self, attr, value):
        if hasattr(type(self), attr):
            object.__setattr__(self, attr, value)
        else:
            setattr(self.ctx, attr, value)

    def __repr__(self):
        # (a Python class, as torch's: its repr names the module, where a C++ node's does not)
        return f"<{type(self).__module__}.{type(self).__qualname__} object at {hex(id(self))}>"

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
            res = self.fn_cls._user_backward()(self.ctx, *grads_in)
        if not isinstance(res, tuple):
            res = (res,)
        Tensor = tensor_class()
        for g in res:
            if g is not None and not isinstance(g, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
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

    @staticmethod
    def vjp(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def _user_backward(cls):
        """The backward the engine calls: ``backward`` or its other name, ``vjp`` (not
        both, as torch)."""
        if cls.backward is not Function.backward:
            if cls.vjp is not Function.vjp:
                raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function "
                                   "is not allowed. You should only implement one of them.")
            return cls.backward
        return cls.vjp
    # torchlike's own Functions whose backward is the forward's derivative: jax may
    # differentiate their forward where it differentiates a whole function
    _jax_differentiable = False
    # under vmap, the forward's ops are batched as they are (torch: a Function needs this, or
    # a ``vmap`` staticmethod, whose rule torchlike does not call: DIFFERENCES.md)
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError("To use autograd.Function with vmap, you must either override "
                                  "the vmap staticmethod or set generate_vmap_rule=True.")

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd "
                      "functions are all static, so you should invoke them on the class "
                      "itself. Instantiating an autograd function will raise an error in a "
                      "future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please "
            "use new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @classmethod
    def apply(cls, *args, **kwargs):
        Tensor = tensor_class()
        ctx = FunctionCtx()
        separate = cls.setup_context is not Function.setup_context
        if separate:
            # (torch binds the call to forward's signature: setup_context's ``inputs`` hold
            # every positional parameter, defaults included)
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        # (tensors given by keyword are inputs too, after the positional ones, as torch's;
        # forward receives them by keyword)
        inputs = args + tuple(kwargs.values())
        grad_on = _gm.is_grad_enabled()
        needs = tuple(isinstance(a, Tensor) and a.requires_grad and grad_on for a in inputs)
        ctx.needs_input_grad = needs
        _check_transforms(cls, separate)
        tracked = False
        if any(needs) and _gm.node_tracing():
            if cls._jax_differentiable:
                # (torchlike's own Functions: the forward's ops are tracked, and jax's
                # derivative of them stands for the backward)
                tracked = True
            else:
                # (jax differentiates the whole function: the forward becomes one jax function
                # whose derivative is the user's backward, or its jvp in forward mode)
                out = _as_jax_rule(cls, ctx, args, kwargs, needs[:len(args)], separate)
                _check_dirty(ctx, out, args, needs)
                return _record(cls, ctx, args, needs[:len(args)], out)

        def run_forward():
            with _gm.enable_grad() if tracked else _gm.no_grad():
                return _forward(cls, ctx, args, kwargs, separate)

        forward_mode = forward_mode_apply[0]
        out = None if forward_mode is None else forward_mode(
            cls, ctx, args, run_forward, cls.jvp is not Function.jvp)
        if out is None:
            out = run_forward()
        _check_dirty(ctx, out, inputs, needs)
        if not any(needs):
            return out
        return _record(cls, ctx, inputs, needs, out)


def _forward(cls, ctx, args, kwargs, separate):
    """The user's forward, in either style (``forward(ctx, ...)``, or ``forward(...)`` then
    ``setup_context``)."""
    if separate:
        out = cls.forward(*args, **kwargs)
        cls.setup_context(ctx, args, out)
        return out
    return cls.forward(ctx, *args, **kwargs)


def _check_dirty(ctx, out, args, needs):
    """torch's checks of the inputs ``mark_dirty`` names: returned, and not leaves that need
    grad."""
    dirty = ctx.dirty
    if not dirty:
        return
    returned = {id(o) for o in (out if isinstance(out, tuple) else (out,))}
    if any(i not in returned for i in dirty):
        raise RuntimeError(
            "Some elements marked as dirty during the forward method were not returned as "
            "output. The inputs that are modified inplace must all be outputs of the Function.")
    for a, n in zip(args, needs):
        if n and id(a) in dirty and a.grad_fn is None:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                               "operation.")


def _record(cls, ctx, args, needs, out):
    """The forward's outputs with the call's node as their history (a dirty input returned
    rebased on it)."""
    Tensor = tensor_class()
    for i, t in enumerate(ctx.to_save):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"save_for_backward can only save variables, but argument {i} is "
                            f"of type {type(t).__name__}")
    single = not isinstance(out, tuple)
    outs = (out,) if single else out
    dirty = ctx.dirty
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
            t = Tensor._make(_fused.raw(o), node, k)
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
            elif (o._alias is not None and not o._alias.detached) or any(o is a for a in args):
                # a view (of an input or of a tensor the forward made), or an input returned
                # as it is: torch's output is a view of it, which may not be written in place
                # with grad (one output) or at all (several: a function returning views)
                view_output[0](t, o, node.name() if len(outs) > 1 else None)
            k += 1
            wrapped.append(t)
        else:
            wrapped.append(o)
    # saved tensors that are outputs must be the wrapped outputs (they carry the history)
    ctx._saved = tuple(next((w for o, w in zip(outs, wrapped) if s is o), s)
                       for s in ctx.to_save)
    if ctx._saved:
        # (the versions torch's backward checks: an output's is named by this node)
        ctx._versions = [(t._vc, t._vc[0], node.name() if any(t is w for w in wrapped)
                          else None)
                         if isinstance(t, Tensor) else (None, 0, None) for t in ctx._saved]
    return wrapped[0] if single else tuple(wrapped)


# ``(output, source, name)``: make a custom Function's ``output`` a view of ``source``, with the
# restrictions of torch's custom-Function views (``name``: the node's, where the Function has
# several outputs: the multiple-views rule); set by the storage layer (_storage.py)
view_output = [None]


def once_differentiable(fn):
    """Mark a backward as not differentiable: it runs with grad mode off; under
    ``create_graph``, when a gradient it receives requires grad, its results require grad
    through an ``Error`` node whose backward raises (torch's ``DelayedError``)."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with _gm.no_grad():
            outputs = fn(ctx, *args)
        if not _gm.is_grad_enabled():
            return outputs
        Tensor = tensor_class()
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        if not isinstance(outputs, tuple):
            outputs = (outputs,)
        return _DelayedError.apply(*[None if v is None else v.detach().requires_grad_()
                                     for v in outputs])
    return wrapper


class _DelayedError(Function):
    """torch's ``DelayedError``: its outputs (copies of its inputs) have an ``Error`` node
    whose backward raises the message of a twice-differentiated once_differentiable
    backward."""

    @staticmethod
    def forward(ctx, *values):
        out = tuple(None if v is None else v.clone() for v in values)
        return out[0] if len(out) == 1 else out

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("trying to differentiate twice a function that was marked with "
                           "@once_differentiable")


class _ErrorNode(_DelayedError._backward_cls):
    __slots__ = ()

    def __init__(self, *args):
        super().__init__(*args)
        self._name = "Error"


_ErrorNode.__name__ = _ErrorNode.__qualname__ = "Error"
_DelayedError._backward_cls = _ErrorNode


_SETUP_CONTEXT_MSG = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
    "...), it must override the setup_context staticmethod. For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html")


# the torch.func transforms tracing in this thread, innermost last (bound by torchlike.func:
# autograd imports nothing above it)
active_transforms = [lambda: ()]
# forward AD's apply of a Function (bound by autograd.forward_ad when it is imported: no dual
# level can be open before)
forward_mode_apply = [None]


def _check_transforms(cls, separate):
    """torch's requirements of a Function called inside torch.func transforms: the
    ``setup_context`` style, and a vmap rule under vmap."""
    apis = active_transforms[0]()
    if not apis:
        return
    if not separate:
        raise RuntimeError(_SETUP_CONTEXT_MSG)
    if "vmap" in apis and not cls.generate_vmap_rule and cls.vmap is Function.vmap:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
            f"override and implement the vmap staticmethod or set generate_vmap_rule=True. For "
            f"more details, please see https://pytorch.org/docs/main/notes/extending.func.html")


def _as_jax_rule(cls, ctx, args, kwargs, needs, separate):
    """The Function's outputs where jax differentiates the whole function (a torch.func
    transform, a compiled forward): its forward becomes one jax function of the tensors that
    need grad, whose derivative is the user's ``backward`` (``jax.custom_vjp``; the saved
    tensors are its residuals) or, in forward mode, its ``jvp`` (``jax.custom_jvp``).
    ``ctx``'s other attributes stay Python values, set by the forward's one run."""
    import jax
    import jax.numpy as jnp
    Tensor = tensor_class()
    pos = [i for i, n in enumerate(needs) if n]
    made = {}               # the forward's outputs: their structure, the arrays' avals

    def forward(arrays):
        xs = list(args)
        for i, arr in zip(pos, arrays):
            xs[i] = Tensor._make(arr)
        with _gm.no_grad():
            out = _forward(cls, ctx, tuple(xs), kwargs, separate)
        made["out"] = out
        outs = out if isinstance(out, tuple) else (out,)
        datas = tuple(o._data for o in outs if isinstance(o, Tensor))
        made["avals"] = [(d.shape, d.dtype) for d in datas]
        return datas, xs

    def per_output(values):
        """Tensors of ``values`` (one per tensor output) for the user's function: zeros where
        an output has no derivative (None without materialized grads)."""
        out = []
        for v, (sh, dt) in zip(values, made["avals"]):
            if v is not None and jnp.issubdtype(dt, jnp.inexact):
                out.append(Tensor._make(jnp.asarray(v, dt)))
            else:
                out.append(Tensor._make(jnp.zeros(sh, dt)) if ctx.materialize_grads else None)
        return out

    if _gm.node_tracing() is _gm.FORWARD:
        if cls.jvp is Function.jvp:
            raise NotImplementedError("You must implement the jvp function for custom "
                                      "autograd.Function to use it with forward mode AD.")

        @jax.custom_jvp
        def f(*arrays):
            return forward(arrays)[0]

        @f.defjvp
        def f_jvp(primals, tangents):
            datas, xs = forward(primals)
            ctx._saved = tuple(getattr(ctx, "to_save_forward", ()))
            given = dict(zip(pos, tangents))
            tans = [Tensor._make(given[k]) if k in given else
                    Tensor._make(jnp.zeros(x._d.shape, x._d.dtype)) if isinstance(x, Tensor)
                    else None for k, x in enumerate(xs)]
            with _gm.no_grad():
                res = cls.jvp(ctx, *tans)
            res = res if isinstance(res, tuple) else (res,)
            return datas, tuple(jnp.zeros(d.shape, d.dtype) if r is None else
                                jnp.asarray(r._data, d.dtype) for d, r in zip(datas, res))
    else:
        @jax.custom_vjp
        def f(*arrays):
            return forward(arrays)[0]

        def f_fwd(*arrays):
            datas, _xs = forward(arrays)
            saved = tuple(ctx.to_save)
            made["saved"] = [isinstance(t, Tensor) for t in saved]
            return datas, (tuple(t._data for t in saved if isinstance(t, Tensor)),
                           tuple(arrays))

        def f_bwd(res, cots):
            saved, arrays = res
            it = iter(saved)
            ctx._saved = tuple(Tensor._make(next(it)) if t else None for t in made["saved"])
            with _gm.no_grad():
                grads = cls._user_backward()(ctx, *per_output(cots))
            grads = grads if isinstance(grads, tuple) else (grads,)
            return tuple(jnp.zeros(a.shape, a.dtype) if grads[i] is None else
                         jnp.broadcast_to(jnp.asarray(grads[i]._data, a.dtype), a.shape)
                         for i, a in zip(pos, arrays))

        f.defvjp(f_fwd, f_bwd)
    datas = iter(f(*[args[i]._data for i in pos]))
    out = made["out"]
    if not isinstance(out, tuple):
        return Tensor._make(next(datas)) if isinstance(out, Tensor) else out
    return tuple(Tensor._make(next(datas)) if isinstance(o, Tensor) else o for o in out)
