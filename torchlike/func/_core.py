"""Shared machinery of the torch.func transforms: Tensors around jax tracers.

Every transform is ONE jax transform (``jax.vmap``, ``jax.vjp``, ``jax.jvp``, ...) of a pure
function that wraps the incoming jax values (tracers) into torchlike Tensors, runs the user's
torch-style function under ``no_grad`` (the jax transform does the differentiation; the tape
records nothing, so no node can hold a tracer afterwards) and unwraps the outputs.

Host reads of traced values (``.item()``, ``if t:``, data-dependent shapes such as
``nonzero``) cannot work while tracing; ``traced_call`` turns jax's tracer errors into a
RuntimeError naming the torchlike function that read the value.
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading

import jax
import jax.numpy as jnp

from .. import _random
from .._tensor import Tensor
from ..autograd import function as _function
from ..autograd import grad_mode as _gm
from . import _pytree as P

__all__ = ["wrap", "unwrap", "traced_call", "is_tracer", "randomness_level", "tensor_leaves"]

_TRACER_ERRORS = (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError,
                  jax.errors.TracerBoolConversionError, jax.errors.TracerIntegerConversionError)
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_FUNC = os.path.dirname(os.path.abspath(__file__))
_JAX = os.path.dirname(os.path.abspath(jax.__file__))
_SURFACE = os.path.join(_PKG, "_ops", "_surface.py")


def is_tracer(x):
    return isinstance(x, jax.core.Tracer)


def wrap(x):
    """A jax value as a fresh Tensor: no autograd history, or, inside a differentiating
    transform (a transform's result there depends on its inputs), a tracked one (a float
    result requires grad, as a non-leaf: torch lets it be written in place)."""
    t = Tensor._make(x)
    if _gm.node_tracing() and jnp.issubdtype(x.dtype, jnp.inexact):
        t._requires_grad = True
        t = t.clone()
    return t


def wrap_tracked(x):
    """A differentiated input as a fresh Tensor that requires grad (a float one): inside the
    transform, torch's graph from it decides where jax's gradient is cut (``traced``)."""
    t = Tensor._make(x)
    if jnp.issubdtype(x.dtype, jnp.inexact):
        t._requires_grad = True
    return t


def unwrap(t):
    return t._data


def tensor_leaves(tree):
    return [v for v in P.tree_flatten(tree)[0] if isinstance(v, Tensor)]


# ------------------------------------------------------------------ tracing context

class _State(threading.local):
    def __init__(self):
        self.random = []      # stack of (mode, index tracer or None) per vmap level
        self.apis = []        # the transforms tracing, innermost last


_state = _State()
_function.active_transforms[0] = lambda: _state.apis     # (custom Functions check them)


def in_transform():
    """True while a torch.func transform is tracing a function."""
    return bool(_state.apis)


def _culprit(tb):
    """(entry, inner): the torchlike function the user's code called, and the innermost one."""
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    chain = []
    for f in frames:
        fn = os.path.abspath(f.f_code.co_filename)
        lib = fn.startswith(_PKG) and not fn.startswith(_FUNC)
        if fn.startswith(_JAX) or "/numpy/" in fn or fn == _SURFACE:
            continue            # (jax, numpy, and the declarations' argument wrappers)
        if lib:
            chain.append(f.f_code.co_name)
        else:
            chain = []          # user code: what follows is what it called
    if not chain:
        return None, None
    return chain[0], chain[-1]


_ITEM = {"item", "tolist", "numpy", "__array__", "__float__", "__int__", "__complex__",
         "__index__", "__format__"}


# vmap's messages where torch's vmap raises too (its batching rules refuse the same reads)
_VMAP_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap "
              "over calling .item() on a Tensor, please try to rewrite what you're doing with "
              "other operations. If error is occurring somewhere inside PyTorch internals, "
              "please file a bug report.")
_VMAP_CONTROL_FLOW = ("vmap: It looks like you're attempting to use a Tensor in some "
                      "data-dependent control flow. We don't support that yet, please file an "
                      "issue at https://github.com/pytorch/pytorch/issues .")
_VMAP_DYNAMIC = ("vmap: We do not support batching operators that can output dynamic shape. "
                 "Attempted to vmap over aten::{}. Please file an issue at "
                 "https://github.com/pytorch/pytorch/issues if you need this feature.")
_VMAP_MASK = ("vmap: We do not support batching operators that can support dynamic shape. "
              "Attempting to batch over indexing with a boolean mask.")
# the ops of data-dependent shape: their aten name in vmap's refusal
_DYNAMIC_OPS = {"nonzero": "nonzero", "unique": "_unique2",
                "unique_consecutive": "unique_consecutive", "argwhere": "argwhere"}
_VMAP_MASKED_SELECT = ("vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) "
                       "We cannot support this because for each batch this would return a "
                       "differently shaped Tensor. Please file an issue at "
                       "https://github.com/pytorch/pytorch/issues if you need this feature.")


def _host_read_error(api, e):
    entry, inner = _culprit(e.__traceback__)
    names = {entry, inner}
    if api == "vmap":
        if "__bool__" in names or isinstance(e, jax.errors.TracerBoolConversionError):
            return RuntimeError(_VMAP_CONTROL_FLOW)
        if names & {"item", "__float__", "__int__", "__complex__", "__index__"}:
            return RuntimeError(_VMAP_ITEM)
        if entry in _DYNAMIC_OPS:
            return RuntimeError(_VMAP_DYNAMIC.format(_DYNAMIC_OPS[entry]))
        if entry == "masked_select":
            return RuntimeError(_VMAP_MASKED_SELECT)
        if entry in ("getitem", "__getitem__", "setitem", "__setitem__"):
            return RuntimeError(_VMAP_MASK)
    if "__bool__" in names or isinstance(e, jax.errors.TracerBoolConversionError):
        msg = (f"{api}: It looks like you're attempting to use a Tensor in some data-dependent "
               f"control flow (in `{entry}`). torchlike traces the function with jax, so Python "
               f"control flow cannot depend on tensor values; use torch.where or compute the "
               f"condition outside the transform.")
    elif names & _ITEM:
        msg = (f"{api}: It looks like you're calling .item() on a Tensor (in `{entry}`). "
               f"Reading a tensor's value on the host is not possible while torchlike traces "
               f"the function with jax; please rewrite it with other operations.")
    else:
        msg = (f"{api}: `{entry}` reads tensor values on the host (a data-dependent output "
               f"shape or value check, in `{inner}`), which is not possible while torchlike "
               f"traces the function with jax. Attempted to transform over {entry}.")
    return RuntimeError(msg)


_FORWARD_MODE = frozenset({"jvp", "jacfwd", "linearize"})


@contextlib.contextmanager
def traced(api, differentiating=False):
    """Run the body as the inside of a transform, tracer errors explained.

    A differentiating transform (grad, vjp, jvp, jacrev, ...) runs it with grad mode on, its
    inputs requiring grad (``wrap_tracked``): torch's graph then says what is tracked, and what
    it does not track (a ``detach()``, ``.data``, a ``no_grad`` block, a tensor that does not
    require grad) is cut for jax too (``autograd.grad_mode.node_trace``). Other transforms
    (vmap) run it with grad mode off, unless inside a differentiating one (whose tracking goes
    on)."""
    st = _gm._state
    prev = st.grad_enabled
    node = None
    if differentiating:
        st.grad_enabled = True
        node = _gm.node_trace(forward=api in _FORWARD_MODE)
        node.__enter__()
    elif not _gm.node_tracing():
        st.grad_enabled = False
    _state.apis.append(api)
    if len(_state.apis) == 1:
        _patch_generator()
    try:
        yield
    except _TRACER_ERRORS as e:
        raise _host_read_error(api, e).with_traceback(e.__traceback__) from None
    finally:
        _state.apis.pop()
        if not _state.apis:
            _unpatch_generator()
        st.grad_enabled = prev
        if node is not None:
            node.__exit__(None, None, None)


# ------------------------------------------------------------------ randomness under vmap

_RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either "
                 "use the 'same' or 'different' randomness flags on vmap or perform the "
                 "randomness operation out of vmap")
_orig_next_key = None


def _patched_next_key(self):
    key = None
    for mode, arg in _state.random:
        if mode == "error":
            raise RuntimeError(_RANDOM_ERROR)
        if mode == "key":              # to_jax_function(rng=True): keys come from the caller
            counter = arg[1][0]
            arg[1][0] += 1
            key = jax.random.fold_in(arg[0], counter)
        elif mode == "nokey":
            raise RuntimeError(
                "to_jax_function: a random operation ran while the function is traced by jax "
                "without a key: its key would be a constant of the trace (the same values on "
                "every call). Use to_jax_function(module, rng=True) and pass a jax key, or "
                "module.eval() to turn dropout off.")
        elif mode == "different":
            key = jax.random.fold_in(_orig_next_key(self) if key is None else key, arg)
    return _orig_next_key(self) if key is None else key


def _patch_generator():
    global _orig_next_key
    if _orig_next_key is None:
        _orig_next_key = _random.Generator.next_key
        _random.Generator.next_key = _patched_next_key
    _patch_checks()


def _unpatch_generator():
    global _orig_next_key
    if _orig_next_key is not None:
        _random.Generator.next_key = _orig_next_key
        _orig_next_key = None
    _unpatch_checks()


# Host-side checks that only validate values (they raise torch's error for bad input and
# compute nothing) cannot read traced values; while a transform traces they are skipped when
# their input is traced (the values are not known yet), as jax itself does.
# TODO(lead): these checks could skip tracers themselves; then this list goes away.
_VALUE_CHECKS = (("torchlike.nn.functional", "_check_target_range"),)
_saved_checks = {}


def _skip_if_traced(fn):
    def check(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except _TRACER_ERRORS:
            return None
    check.__wrapped__ = fn
    return check


def _patch_checks():
    import importlib
    for mod, name in _VALUE_CHECKS:
        if (mod, name) in _saved_checks:
            continue
        m = importlib.import_module(mod)
        fn = getattr(m, name, None)
        if fn is not None:
            _saved_checks[(mod, name)] = (m, fn)
            setattr(m, name, _skip_if_traced(fn))


def _unpatch_checks():
    for (mod, name), (m, fn) in list(_saved_checks.items()):
        setattr(m, name, fn)
    _saved_checks.clear()


@contextlib.contextmanager
def key_level(key, traced):
    """Random keys for a to_jax_function call: from ``key`` (a jax key, typed or raw uint32
    data), or an error when the call is traced without one."""
    if key is None:
        mode, arg = ("nokey", None) if traced else ("same", None)
    else:
        if not jax.dtypes.issubdtype(getattr(key, "dtype", None), jax.dtypes.prng_key):
            key = jax.random.wrap_key_data(key)
        mode, arg = "key", (key, [0])
    _state.random.append((mode, arg))
    try:
        yield
    finally:
        _state.random.pop()


@contextlib.contextmanager
def randomness_level(mode, idx):
    """One vmap level's randomness mode while its function is traced (``idx``: the batch index
    as a batched tracer, folded into every key drawn in 'different' mode)."""
    _state.random.append((mode, idx))
    try:
        yield
    finally:
        _state.random.pop()


# ------------------------------------------------------------------ leaks into outside tensors

def snapshot(tensors):
    return [(t, t._data) for t in tensors]


def check_no_leak(snap, api, vmap=False):
    """Tensors from outside the transform must not have been given traced values (an in-place
    write of a transformed value into a captured tensor). Restores them and raises."""
    bad = [t for t, d in snap if t._data is not d and is_tracer(t._data) and not is_tracer(d)]
    if not bad:
        return
    for t, d in snap:
        if t._data is not d and is_tracer(t._data):
            object.__setattr__(t, "_data", d)
    if vmap:
        raise RuntimeError(
            "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
            "Tensor `other` in extra_args that has more elements than `self`. This happened due "
            "to `other` being vmapped over but `self` not being vmapped over in a vmap. Please "
            "try to use out-of-place operators instead of inplace arithmetic. If said operator "
            "is being called inside the PyTorch framework, please file a bug report instead.")
    raise RuntimeError(
        f"{api}: an in-place operation wrote a value that depends on the transformed inputs "
        f"into a tensor created outside the function (a captured tensor, module parameter or "
        f"buffer); torchlike cannot keep such a write (the value only exists while tracing). "
        f"Use out-of-place operations, or pass the tensor in (functional_call for module state).")


def outside_tensors(func, args, kwargs):
    """Tensors the caller can see after the call: Tensor arguments and, when ``func`` is a
    module (or a bound method / partial of one), its parameters and buffers."""
    from ..nn import Module
    ts = [t for t in P.tree_flatten((args, kwargs))[0] if isinstance(t, Tensor)]
    mods = _modules_of(func)
    for v in _captured(func):
        if isinstance(v, Tensor):
            ts.append(v)
        elif isinstance(v, Module):
            mods.append(v)
    for m in mods:
        ts.extend(m.parameters())
        ts.extend(b for b in m.buffers() if b is not None)
    return ts


def _captured(func, depth=0):
    """Values a function can reach by name: its closure cells and the globals its code names
    (one level of containers), and those of the functions it closes over (best effort: a write
    into a tensor reached some other way is not detected)."""
    out = []
    code = getattr(func, "__code__", None)
    if code is None or depth > 2:
        return out
    vals = []
    for c in getattr(func, "__closure__", None) or ():
        try:
            vals.append(c.cell_contents)
        except ValueError:
            pass
    g = getattr(func, "__globals__", {})
    vals.extend(g[n] for n in code.co_names if n in g)
    for v in vals:
        if isinstance(v, (list, tuple)):
            out.extend(v)
        elif isinstance(v, dict):
            out.extend(v.values())
        elif callable(v) and hasattr(v, "__code__") and not isinstance(v, type):
            out.extend(_captured(v, depth + 1))
        else:
            out.append(v)
    return out


def _modules_of(func, depth=0):
    from ..nn import Module
    if depth > 3:
        return []
    if isinstance(func, Module):
        return [func]
    out = []
    owner = getattr(func, "__self__", None)
    if isinstance(owner, Module):
        out.append(owner)
    inner = getattr(func, "func", None)          # functools.partial
    if inner is not None:
        out.extend(_modules_of(inner, depth + 1))
        for a in list(getattr(func, "args", ())) + list(getattr(func, "keywords", {}).values()):
            if isinstance(a, Module):
                out.append(a)
    return out


# ------------------------------------------------------------------ outputs

def split_output(out, api, allow_non_tensor=True):
    """Flatten a user output: (jax arrays of its Tensor leaves, rebuild(arrays) -> tree)."""
    leaves, spec = P.tree_flatten(out)
    pos = []
    arrays = []
    for i, v in enumerate(leaves):
        if isinstance(v, Tensor):
            pos.append(i)
            arrays.append(v._data)
        elif not allow_non_tensor:
            raise RuntimeError(f"{api}: expected f(*args) to return only tensors, got "
                               f"unsupported type {type(v)}")

    # the Tensor leaves wrap this trace's tracers: keep only the others
    leaves = [None if isinstance(v, Tensor) else v for v in leaves]

    def rebuild(arrs, as_tensor=wrap):
        new = list(leaves)
        for i, a in zip(pos, arrs):
            new[i] = as_tensor(a)
        return P.tree_unflatten(new, spec)

    return arrays, rebuild, spec
