"""Tape nodes, and how each runs its own backward.

One ``Node`` per recorded op call, one ``AccumulateGrad`` per leaf that requires grad (custom
``autograd.Function`` calls get their Function's ``BackwardCFunction`` subclass, in
``function.py``). Every node type
implements ``run(cotangents, create_graph)``: the gradients of its inputs (one per edge) from the
cotangents of its outputs. The engine (``engine.py``) only orders the nodes and routes gradients.

Cotangents travel in one of two representations, chosen once per backward (``cotangents()``):
jax arrays (a plain backward: the cached jitted VJPs run directly), or Tensors
(``create_graph=True``: each backward runs as a recorded op, so it can be differentiated again).
Inside the engine gradients stay in jax's convention for complex numbers; the representation
converts at every place a user sees or gives one (hooks, ``.grad``, custom Functions).

This module imports nothing above ``autograd/``: the Tensor class is given to it (``bind``).
"""
from __future__ import annotations

import itertools
import threading
import weakref
from typing import NamedTuple

import jax
import jax.numpy as jnp

from .. import _caches
from .. import _tiers
from .._fused import Deferred as _Deferred, raw as _raw
from .._dtype import LEGACY_NAMES
from ..utils.hooks import RemovableHandle
from . import grad_mode as _gm
from .hook_checks import check_hook_result, hook_name
from . import saved_names as _saved_names
from . import anomaly_mode as _anomaly_mode
from .anomaly_mode import _mode as _anomaly

__all__ = ["Node", "AccumulateGrad", "bind", "tensor_class", "cotangents", "flip_conj",
           "accumulate"]

_seq = itertools.count()
_ACC_SEQ = 2 ** 62

_FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward.")

# ------------------------------------------------------------------ the Tensor class, injected

_tensor_source = None    # () -> the Tensor class (set by the op registry through ``bind``)


def bind(source):
    """Give autograd the Tensor class, as a function returning it (it exists only later)."""
    global _tensor_source
    _tensor_source = source


def tensor_class():
    return _tensor_source()


# ------------------------------------------------------------------ jitted helpers (one cache)

_TRACES = {"add": 0, "conj": 0}
_trace_lock = threading.Lock()


def _counted(kind, fn):
    def traced(*a):
        with _trace_lock:
            _TRACES[kind] += 1
        return fn(*a)
    return _tiers.Tiered(fn, jax.jit(_tiers.inlined(traced)), kind)


_jit_add = _counted("add", lambda a, b: a + b)
_jit_conj = _counted("conj", jnp.conj)


def _clear():
    _jit_add.clear_cache()
    _jit_conj.clear_cache()
    with _trace_lock:
        for k in _TRACES:
            _TRACES[k] = 0


_caches.register("engine", _clear, lambda: dict(_TRACES))


def flip_conj(g, create_graph=False):
    """Convert a gradient between jax's convention and torch's (they are conjugates).

    jax's VJPs propagate the conjugate of what torch calls the gradient of a complex tensor.
    Real gradients pass through untouched.
    """
    if g is None:
        return None
    if create_graph or not _is_array(g):
        return g.conj() if g.dtype.is_complex else g
    return _jit_conj(g) if g.dtype.kind == "c" else g


def _is_array(g):
    """A jax array, or a fused-eager deferred one."""
    return isinstance(g, jax.Array) or g.__class__ is _Deferred


# ------------------------------------------------------------------ cotangent representations

class _Arrays:
    """Cotangents as jax arrays: a plain backward."""

    create_graph = False

    def add(self, a, b):
        """Sum two pending cotangents (jitted: eager jnp dispatch costs several times more)."""
        if a is None:
            return b
        return _jit_add(a, b) if _is_array(a) else a + b

    def zeros(self, meta):
        return jnp.zeros(*meta)

    def fill(self, buf, metas):
        """All cotangents of a node, zeros for outputs that got none."""
        for b in buf:
            if b is None:
                return tuple(b if b is not None else self.zeros(m) for b, m in zip(buf, metas))
        return tuple(buf)

    def wrap(self, g):
        return None if g is None else tensor_class()._make(g)

    def unwrap(self, t):
        return None if t is None else _raw(t)

    def to_user(self, g):
        """An internal cotangent as the Tensor a user sees (torch's convention)."""
        return None if g is None else tensor_class()._make(flip_conj(g))

    def from_user(self, t, dtype=None):
        """A user's gradient Tensor as an internal cotangent (optionally cast to ``dtype``)."""
        if t is None:
            return None
        d = _raw(t)
        if dtype is not None and d.dtype != dtype:
            d = t._data.astype(dtype)
        return flip_conj(d)


class _Tensors(_Arrays):
    """Cotangents as Tensors (``create_graph=True``): every step is recorded on the tape."""

    create_graph = True

    def add(self, a, b):
        return b if a is None else a + b

    def zeros(self, meta):
        return tensor_class()._make(jnp.zeros(*meta))

    def wrap(self, g):
        return g

    def unwrap(self, t):
        return t

    def to_user(self, g):
        return flip_conj(g, True)

    def from_user(self, t, dtype=None):
        return flip_conj(t, True)


_REPS = (_Arrays(), _Tensors())


def cotangents(create_graph):
    """The cotangent representation of a backward."""
    return _REPS[bool(create_graph)]


# ------------------------------------------------------------------ .grad

_grad_lock = threading.RLock()   # read-modify-write of .grad: concurrent backwards lose nothing


# torch's ``clone_obey_contract`` for a new ``.grad`` of a tensor with strides of its own
# (``torchlike._strides.obey_layout``, bound by that module: the engine imports nothing above
# autograd)
obey_layout = [None]


def _obey_layout(u, tensor):
    if tensor._alias is None and "_layout" not in tensor.__dict__:
        return u                    # (a contiguous root: most parameters)
    f = obey_layout[0]
    return u if f is None else f(u, tensor)


def accumulate(tensor, g, create_graph):
    """Add the internal cotangent ``g`` to ``tensor.grad`` (torch's AccumulateGrad)."""
    u = cotangents(create_graph).to_user(g)
    with _grad_lock:
        if tensor._grad is None:
            # (the engine's gradient has the leaf's shape, dtype and device: the checks of a
            # user's ``.grad =`` are not needed)
            tensor._grad = _obey_layout(u, tensor)
        elif create_graph:
            tensor.grad = tensor.grad + u
        else:
            # in place, as torch does: references to the old .grad see the sum
            tensor.grad._set_data(_jit_add(_raw(tensor.grad), _raw(u)))


def _retain(tensor, g, rep):
    u = rep.to_user(g)
    with _grad_lock:
        if tensor.grad is None:
            tensor.grad = u.detach() if rep.create_graph else u
        elif rep.create_graph:
            tensor.grad = tensor.grad + u
        else:
            tensor.grad = tensor_class()._make(_jit_add(_raw(tensor.grad), _raw(u)))


def _checked_post_hook_result(hook, old, new):
    """What a node hook returned in place of ``grad_inputs`` (a post-hook) or ``grad_outputs``
    (a pre-hook), as torch's engine checks it:
    a tuple of one entry per grad input, each None where the input had None, else a tensor of
    the input's type and size (``hook_checks``)."""
    if not isinstance(new, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(new).__name__}'")
    if len(new) != len(old):
        raise RuntimeError(f"hook '{hook_name(hook)}' has returned an incorrect number of "
                           f"values (got {len(new)}, but expected {len(old)})")
    for o, n in zip(old, new):
        if o is None:
            if n is not None:
                raise RuntimeError("can't replace a None gradient with a non-None value")
        else:
            check_hook_result(hook, o, n)
    return new


# ------------------------------------------------------------------ nodes

class Node:
    """A recorded op call: the backward of one forward op (torch's ``grad_fn``).

    ``next_edges[i]`` is ``(node, output_nr)`` for the i-th input whose gradient is computed, or
    ``None``. ``vjp`` holds the residuals of ``jax.vjp`` (a pytree) and ``compiled`` the op's
    cached entry (its jitted backward, and the backward as an op for ``create_graph``);
    ``inputs`` are kept for ``create_graph=True``.
    """

    __slots__ = ("_name", "next_edges", "compiled", "vjp", "inputs", "out_meta", "seq",
                 "pre_hooks", "retains", "saves", "freed", "post_hooks", "_saved_versions",
                 "packed", "_metadata", "_memo_saved", "__weakref__")

    materialize_grads = True     # outputs without a cotangent get zeros before ``run``
    # what ``release`` keeps of the inputs for the class's non-tensor ``_saved_*`` names
    # (saved_names.meta_kind: shapes, numbers, strides by position; empty: nothing)
    _keeps_meta = ()

    def __new__(cls, name=None, *args, **kwargs):
        # a node of an op is an instance of the class named as torch's (MulBackward0, ...)
        return object.__new__(node_class(name) if cls is Node and name else cls)

    def __init__(self, name, next_edges, compiled, vjp, inputs, out_meta, saves=True):
        self._name = name
        self.next_edges = next_edges
        self.compiled = compiled
        self.vjp = vjp
        self.inputs = inputs
        self.out_meta = out_meta          # ((shape, jnp dtype) | None, ...) per output
        self.seq = next(_seq)
        self.pre_hooks = None             # {output_nr: {id: hook}}, ("node", 0): node pre-hooks
        self.retains = None               # {output_nr: weakref(tensor)}
        self.post_hooks = None
        self.saves = saves
        self.freed = False
        self._saved_versions = None
        self.packed = None                # (unpack_hook, entries): saved_hooks.py
        if _anomaly[0]:
            self.metadata["traceback_"] = _anomaly_mode.forward_stack()

    def name(self) -> str:
        n = self._name
        return "torch::autograd::" + n if n in _CPP_NODES else n

    @property
    def metadata(self):
        """A dict for the user's annotations of this node (made at the first read)."""
        try:
            return self._metadata
        except AttributeError:
            self._metadata = {}
            return self._metadata

    def __getattr__(self, attr):
        # torch's ``_saved_<name>`` / ``_raw_saved_<name>``: what the backward saved, derived
        # from the node's inputs, static arguments and outputs (saved_names.py)
        if attr.startswith(("_saved_", "_raw_saved_")) and attr != "_saved_versions":
            return _saved_names.lookup(self, attr)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")

    def __dir__(self):
        names = _saved_names.names
        # (``_saved_versions`` is the tape's own record, not one of torch's saved names)
        own = set(object.__dir__(self)) - {"_saved_versions", "_memo_saved"}
        return sorted(own | set(names(self)))

    def __repr__(self):
        # (the class, as torch's: a node of an op torch records with a C++-only function is
        # a CppFunction whose name() is the op's)
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def _slots(self):
        """Which of the op's inputs torch gives a slot among ``next_functions`` (its
        differentiable inputs: floating tensors, and the number an arithmetic operator wraps
        into a tensor), each True where this node has an edge for it; None where the node no
        longer knows its inputs (after a backward freed them) or is not an op's."""
        inputs, needs = self.inputs, getattr(self.compiled, "needs", None)
        if (inputs is None or needs.__class__ is not tuple or len(needs) != len(inputs)
                or sum(needs) != len(self.next_edges)):
            return None
        T = tensor_class()
        wraps = getattr(getattr(self.compiled, "op", None), "name", None) in _WRAPS_NUMBERS
        out = []
        for a, n in zip(inputs, needs):
            if n:
                out.append(True)
            elif isinstance(a, T):
                if a.dtype.is_floating_point or a.dtype.is_complex:
                    out.append(False)
            elif wraps and isinstance(a, (int, float, complex)):
                out.append(False)
        return out

    @property
    def next_functions(self):
        """``(node, output_nr)`` per differentiable input, as torch's: ``(None, 0)`` for an input
        that gets no gradient (a tensor that does not require grad, a wrapped number)."""
        edges = tuple((e[0], e[1]) if e is not None else (None, 0) for e in self.next_edges)
        slots = self._slots()
        if slots is None or len(slots) == len(edges):
            return edges
        it = iter(edges)
        return tuple(next(it) if n else (None, 0) for n in slots)

    # ---------------------------------------------------------------- hooks
    def register_prehook(self, hook, output_nr=0):
        """Node pre-hook ``hook(grad_outputs) -> tuple or None`` (run after tensor hooks)."""
        if self.pre_hooks is None:
            self.pre_hooks = {}
        d = self.pre_hooks.setdefault(("node", 0), {})
        h = RemovableHandle(d)
        d[h.id] = hook
        return h

    def register_hook(self, hook):
        """Node post-hook ``hook(grad_inputs, grad_outputs) -> tuple or None``."""
        if self.post_hooks is None:
            self.post_hooks = {}
        h = RemovableHandle(self.post_hooks)
        self.post_hooks[h.id] = hook
        return h

    def _tensor_hooks(self, output_nr):
        if self.pre_hooks is None:
            self.pre_hooks = {}
        return self.pre_hooks.setdefault(output_nr, {})

    def before(self, buf, rep):
        """What runs on the summed cotangents before the backward, in torch's order: 1. each
        output's tensor hooks (registration order, each seeing the previous result); 2. its
        retained ``.grad``; 3. the node pre-hooks."""
        pre = self.pre_hooks
        if pre:
            for nr, hooks in pre.items():
                if isinstance(nr, int) and hooks and buf[nr] is not None:
                    buf[nr] = _run_tensor_hooks(hooks, buf[nr], rep)
        if self.retains:
            for nr, ref in self.retains.items():
                t = ref()
                if t is not None and buf[nr] is not None:
                    _retain(t, buf[nr], rep)
        if pre:
            node_hooks = pre.get(("node", 0))
            if node_hooks:
                go = tuple(rep.to_user(b) for b in buf)
                for hook in list(node_hooks.values()):
                    r = hook(go)
                    if r is not None:
                        go = _checked_post_hook_result(hook, go, r)     # (torch's one check)
                buf = [rep.from_user(g) for g in go]
        return buf

    def after(self, in_grads, buf, rep):
        """Node post-hooks ``hook(grad_inputs, grad_outputs)``; they may replace the former."""
        gi = tuple(rep.wrap(g) for g in in_grads)
        go = tuple(rep.wrap(b) for b in buf)
        slots = self._slots()
        if slots is not None and len(slots) != len(gi):
            # (one per differentiable input, as torch's: None where it gets no gradient)
            it = iter(gi)
            gi = tuple(next(it) if n else None for n in slots)
        for hook in list(self.post_hooks.values()):
            r = hook(gi, go)
            if r is not None:
                gi = _checked_post_hook_result(hook, gi, r)
        if slots is not None and len(slots) != len(in_grads):
            gi = tuple(g for g, n in zip(gi, slots) if n)
        return tuple(rep.unwrap(g) for g in gi)

    # ---------------------------------------------------------------- backward
    def run(self, cotangents, create_graph):
        """The gradients of the inputs: the op's cached jitted VJP on arrays, or the VJP as a
        recorded op on Tensors."""
        if self.packed is not None:
            return self._run_unpacked(cotangents, create_graph)
        if create_graph:
            inputs = self.inputs
            if inputs is None:              # (released: see ``release``)
                inputs = self.compiled.stand_ins(self.vjp)
            return self.compiled.backward_graph(inputs, cotangents)
        return self.compiled.backward(self.vjp, cotangents)

    def _run_unpacked(self, cotangents, create_graph):
        """The backward under saved-tensor hooks: each saved tensor unpacked; if one came back
        changed, the VJP is recomputed at the unpacked inputs."""
        from .saved_hooks import unpacked_inputs
        inputs = unpacked_inputs(self)
        if inputs is None:
            if create_graph:
                return self.compiled.backward_graph(self.inputs, cotangents)
            return self.compiled.backward(self.vjp, cotangents)
        if create_graph:
            # as torch's SavedVariable: the unpacked values, with the saved tensor's history
            T = tensor_class()
            inputs = [u if u is o or not isinstance(o, T) else o + (u.detach() - o.detach())
                      for u, o in zip(inputs, self.inputs)]
            return self.compiled.backward_graph(inputs, cotangents)
        T = tensor_class()
        _d, _r, vjp = self.compiled.fwd_vjp(*(a._data if isinstance(a, T) else a
                                              for a in inputs))
        return self.compiled.backward(vjp, cotangents)

    def release(self):
        if self.saves and (self.saves.__class__ is not dict or self._saved_versions):
            # (a dict's positions are saved only where a gradient reads them: a node that
            # saved none of them is not freed, as torch's)
            if self._keeps_meta and self.inputs is not None:
                _saved_names.keep_meta(self, self._keeps_meta)
            self.vjp = None
            self.inputs = None
            self._saved_versions = None     # (the tensors it checked: they may be freed now)
            self.packed = None
            self.freed = True
        elif self.packed is None and self.inputs is not None:
            # torch saves nothing for the op, so the graph may run again; the inputs a
            # recomputing backward would read are let go where their shapes are all it needs
            release = getattr(self.compiled, "release", None)
            vjp = release(self.vjp) if release is not None else None
            if vjp is not None:
                if self._keeps_meta:
                    _saved_names.keep_meta(self, self._keeps_meta)
                self.vjp = vjp
                self.inputs = None

    def check_alive(self):
        if self.freed:
            raise RuntimeError(_FREED_MSG)
        stale = self.stale_saved()
        if stale is not None:
            vc, expected, tensor, meta = stale
            raise RuntimeError(_version_message(self, vc[0], expected, tensor, meta))

    def stale_saved(self):
        """The first saved tensor an in-place write changed since the node saved it, or
        None."""
        if self._saved_versions:
            for s in self._saved_versions:
                if s[0][0] != s[1]:
                    return s
        return None


def _run_tensor_hooks(hooks, g, rep):
    """``hook(grad) -> Tensor or None`` hooks in order; each sees the previous result."""
    gt = rep.to_user(g)
    for hook in list(hooks.values()):
        r = hook(gt)
        if r is not None:
            check_hook_result(hook, gt, r)      # torch's type / dtype / size checks
            gt = r
    return rep.from_user(gt, g.dtype if not rep.create_graph else None)


def _version_message(node, now, expected, tensor, meta):
    import re
    import numpy as np
    if tensor is not None:
        shape, dt = tuple(tensor._d.shape), tensor._d.dtype
        fn, k = tensor.grad_fn, tensor._output_nr
    else:
        # (meta: the saved output's shape, dtype and, where known, its position)
        shape, dt = meta[0], meta[1]
        fn, k = node, meta[2] if len(meta) > 2 else 0
    name = LEGACY_NAMES.get(np.dtype(dt).name, str(dt))
    what = f"[torch.{name}Tensor [{', '.join(map(str, shape))}]]"
    if fn is not None:
        # (torch names the node without "Backward" and its overload's 0: MaxBackward1 is
        # "Max1", ProdBackward0 "Prod")
        short = re.sub(r"Backward([0-9]*)$", lambda g: g[1].lstrip("0"), fn.name())
        what += f", which is output {k} of {short},"
    return ("one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: {what} is at version {now}; expected version {expected} "
            "instead. Hint: " + (
                "the backtrace further above shows the operation that failed to compute its "
                "gradient. The variable in question was changed in there or anywhere later. "
                "Good luck!" if _anomaly[0] else
                "enable anomaly detection to find the operation that failed to compute its "
                "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False)."))


# ops whose Python number operand torch wraps into a tensor input (``x * 3`` is
# ``mul.Tensor``): it has a slot among the node's ``next_functions``
_WRAPS_NUMBERS = frozenset({"add", "sub", "mul", "div", "rsub"})

_NODE_CLASSES: dict = {}   # name -> Node subclass


def node_class(name):
    """The Node subclass named ``name``: ``type(y.grad_fn).__name__`` and ``repr`` read as
    torch's (``<class 'MulBackward0'>``, module ``builtins`` as in torch)."""
    cls = _NODE_CLASSES.get(name)
    if cls is None:
        cls = _NODE_CLASSES[name] = type(name, (Node,), {
            "__slots__": (), "__module__": "builtins", "__qualname__": name,
            "_keeps_meta": _saved_names.meta_kind(name)})
    return cls


# nodes torch implements in its autograd's own C++ namespace: ``name()`` says so (their class
# name and repr do not)
_CPP_NODES = frozenset({"AccumulateGrad", "CopySlices", "NotImplemented", "Error",
                        "DelayedError", "GraphRoot"})


class AccumulateGrad(Node):
    """The node at a leaf: accumulates the incoming gradient into ``variable.grad``."""

    __slots__ = ("variable_ref", "post_acc_hooks")

    def __init__(self, tensor):
        super().__init__("AccumulateGrad", (), None, None, None,
                         ((tuple(tensor.shape), tensor._d.dtype),), saves=False)
        self.variable_ref = weakref.ref(tensor)
        self.post_acc_hooks = None
        # as in torch, leaves accumulate as soon as they are ready (highest priority)
        self.seq = _ACC_SEQ

    @property
    def variable(self):
        return self.variable_ref()

    def run(self, cotangents, create_graph):
        """Accumulate into ``.grad``, then the post-accumulate-grad hooks. No edges."""
        t = self.variable
        g = cotangents[0]
        if t is None or g is None:
            return ()
        accumulate(t, g, create_graph)
        if self.post_acc_hooks:
            with _gm.enable_grad() if create_graph else _gm.no_grad():
                for hook in list(self.post_acc_hooks.values()):
                    if hook(t) is not None:
                        raise RuntimeError("Tensor post accumulate grad hooks should return "
                                           "None.")
        return ()


class InvalidView(Node):
    """The history of a view whose creation forbids the write its storage received (a view
    made with grad mode off, a custom Function's view output, an output of a function that
    returns several views): torch raises at the view's next use, and its repr names the node
    ``Invalid``. Any use that records raises torch's message (``Tensor._edge``)."""

    __slots__ = ("error",)

    def __init__(self, error):
        super().__init__("Invalid", (), None, None, None, (), saves=False)
        self.error = error

    def run(self, cotangents, create_graph):
        raise RuntimeError(self.error)


def increment_version(tensor):
    """Bump the version counter of ``tensor`` (or of each tensor of an iterable), as an
    in-place write would: saved copies of it then fail the backward's version check."""
    tensors = (tensor,) if isinstance(tensor, tensor_class()) else tensor
    for t in tensors:
        t._vc[0] += 1


# ------------------------------------------------------------------ multi-tensor gradient hooks

_running = threading.local()     # .walk: the plan of the backward running in this thread (engine)


def _will_execute(walk, tensor):
    """Whether the running backward reaches ``tensor``'s node (its hooks will fire)."""
    node = tensor.grad_fn if tensor.grad_fn is not None else tensor._edge()[0]
    return node in walk.nodes


class _MultiHandle:
    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once per backward for a group of tensors.

    ``mode="all"``: ``fn(grads)`` after the gradients of every tensor of the group that this
    backward reaches are computed (None for the others). ``mode="any"``: ``fn(grad)`` with the
    first gradient of the group computed in a backward. Returns a handle (``remove()``).
    """
    supported = ("any", "all")
    if mode not in supported:
        raise ValueError(f"Expects mode to be one of {supported} but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()
    states = weakref.WeakKeyDictionary()      # the running backward's walk -> its state

    def state_of(walk):
        st = states.get(walk)
        if st is None:
            if mode == "all":
                expected = sum(1 for t in tensors if _will_execute(walk, t))
                st = states[walk] = {"grads": [None] * len(tensors), "left": expected}
            else:
                st = states[walk] = {"fired": False}
        return st

    def make_hook(i):
        def hook(grad):
            walk = getattr(_running, "walk", None)
            if walk is None:
                return None
            with lock:
                st = state_of(walk)
                if mode == "any":
                    if st["fired"]:
                        return None
                    st["fired"] = True
                    call = (grad,)
                else:
                    st["grads"][i] = grad
                    st["left"] -= 1
                    if st["left"] > 0:
                        return None
                    call = (list(st["grads"]),)
            fn(*call)
            return None
        return hook

    return _MultiHandle([t.register_hook(make_hook(i)) for i, t in enumerate(tensors)
                         if t.requires_grad])



class GradientEdge(NamedTuple):
    """A gradient edge of the graph: ``node`` and which of its outputs (``output_nr``); usable
    as an input of ``autograd.grad``."""

    node: Node
    output_nr: int
    ownership_token: object = None


def get_gradient_edge(tensor):
    """The edge the gradient of ``tensor`` flows through (its ``grad_fn``, or its
    ``AccumulateGrad`` for a leaf)."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    node, nr = tensor._edge()
    return GradientEdge(node, nr)


class allow_mutation_on_saved_tensors:
    """Context: in-place writes into tensors that nodes recorded inside it saved are allowed,
    and the backward reads the values they had when saved (torch clones a saved tensor on its
    mutation; torchlike's saved values are immutable arrays already, so only the version check
    is lifted). A backward through such nodes outside the context raises torch's error."""

    def __init__(self):
        self.closed = False
        self.unchecked = _Unchecked(self)

    def __enter__(self):
        if _gm._state.allow_mutation is not None:
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        _gm._state.allow_mutation = self.unchecked
        return self

    def __exit__(self, *exc):
        _gm._state.allow_mutation = None
        self.closed = True
        return False


class _Unchecked:
    """The saved versions of a node recorded under ``allow_mutation_on_saved_tensors``: none
    to check while the context is open."""

    __slots__ = ("ctx",)

    def __init__(self, ctx):
        self.ctx = ctx

    def __iter__(self):
        if self.ctx.closed:
            raise AssertionError("Trying to backward outside of the "
                                 "'allow_mutation_on_saved_tensors' contextin which the graph was "
                                 "originally recorded.")
        return iter(())


from .saved_hooks import (saved_tensors_hooks, save_on_cpu,  # noqa: E402,F401
                          disable_saved_tensors_hooks)

_saved_names.bind(tensor_class, _FREED_MSG, _version_message)
