"""Optimizer base: param_groups, state, torch's state_dict layout, and the jitted group update.

Each optimizer declares its update as ONE pure jax function over the whole parameter group::

    update(params, grads, state, hp, **flags) -> (new_params, new_state)

``params``/``grads`` are lists of arrays, ``state`` a dict of lists (one entry per param, ``None``
where a buffer does not exist yet), ``hp`` a dict of float64 scalars (the group's numeric
options, passed as traced arguments so changing ``lr`` never retraces) and ``flags`` the
group's boolean options (static). The function is jitted once per (optimizer class, flags) and
by jax per shapes; results are written back as raw writes (``_storage.write_each``), so
nothing is recorded on the autograd tape. Each parameter's update must depend on that parameter's arrays (and
``hp``) alone, as torch's single-tensor loops do: the interpreter tier's first calls run the
function one parameter at a time (``_per_parameter``), the compiled program takes the group.
"""
from __future__ import annotations

import copy
import functools
from collections import OrderedDict, defaultdict
from itertools import chain

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .. import _shape_poly, _tiers
from .. import _fused
from .._fused import raw as _raw
from .._storage import write_each as _write_each, zero_grads as _zero_grads
from .._tensor import Tensor
from ..utils.hooks import RemovableHandle

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook",
           "required"]

# hooks every optimizer's step calls (before its own pre hooks, after its own post hooks)
_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    """``hook(optimizer, args, kwargs) -> None or (new_args, new_kwargs)``, on every optimizer."""
    h = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[h.id] = hook
    return h


def register_optimizer_step_post_hook(hook):
    """``hook(optimizer, args, kwargs) -> None``, on every optimizer."""
    h = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[h.id] = hook
    return h


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


# ---------------------------------------------------------------- torch's helpers for optimizers
# (third-party optimizers, often copied from torch's own, import these from torch.optim.optimizer)
from collections.abc import Iterable as _Iterable  # noqa: E402
from typing import Any as _Any, Union as _Union  # noqa: E402

Args = tuple
Kwargs = dict
StateDict = dict
ParamsT = _Union[_Iterable[Tensor], _Iterable[dict], _Iterable[tuple]]


def _foreach_types():
    from ..nn.parameter import Parameter
    return [Tensor, Parameter]


def __getattr__(name):
    if name == "_foreach_supported_types":
        return _foreach_types()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _use_grad_for_differentiable(func):
    """torch's decorator of ``step``: runs it with grad mode set to the group's
    ``differentiable`` (False: no graph)."""
    import functools
    from ..autograd import grad_mode

    def _use_grad(*args, **kwargs):
        self = args[0]
        prev = grad_mode.is_grad_enabled()
        try:
            grad_mode.set_grad_enabled(bool(self.defaults.get("differentiable", False)))
            return func(*args, **kwargs)
        finally:
            grad_mode.set_grad_enabled(prev)
    functools.update_wrapper(_use_grad, func)
    return _use_grad


def _get_value(x):
    return x.item() if isinstance(x, Tensor) else x


def _stack_if_compiling(x):
    return x


def _disable_dynamo_if_unsupported(single_tensor_fn=None):
    def wrapper(func):
        return func
    return wrapper


def _get_foreach_kernels_supported_devices():
    return ["cuda", "xpu", "privateuseone"]


def _get_fused_kernels_supported_devices():
    return ["mps", "cuda", "xpu", "hpu", "cpu", "privateuseone"]


def _get_capturable_supported_devices(supports_xla=True):
    devices = ["cuda", "xpu", "hpu", "privateuseone"]
    if supports_xla:
        devices.append("xla")
    return devices


def _default_to_fused_or_foreach(params, differentiable, use_fused=False):
    """torch's choice of implementation: (fused, foreach); foreach only on CUDA-like devices,
    so (use_fused and every parameter floating, False) for torchlike's tensors on the CPU."""
    if differentiable:
        return False, False
    types = _foreach_types()
    fused_devices = _get_fused_kernels_supported_devices()
    foreach_devices = _get_foreach_kernels_supported_devices()
    fused = use_fused and all(
        p is None or (type(p) in types and p.device.type in fused_devices
                      and p.is_floating_point()) for p in params)
    foreach = not fused and all(
        p is None or (type(p) in types and p.device.type in foreach_devices) for p in params)
    return fused, foreach


def _device_dtype_check_for_fused(p, cuda_unsupported=False):
    devices = _get_fused_kernels_supported_devices()
    if cuda_unsupported:
        devices.remove("cuda")
    if not (p.device.type in devices and p.is_floating_point()):
        raise RuntimeError("`fused=True` requires all the params to be floating point Tensors "
                           f"of supported devices: {devices} but {p.dtype} and "
                           f"{p.device.type}")


def _view_as_real(params, *state_and_grads):
    from .. import view_as_real
    for i, p in enumerate(params):
        if p.is_complex():
            params[i] = view_as_real(params[i])
            for st in state_and_grads:
                st[i] = view_as_real(st[i])


def _get_scalar_dtype(is_fused=None):
    if is_fused:
        return D.float32
    return D.float64 if D.get_default_dtype() is D.float64 else D.float32


def _to_scalar(x):
    if isinstance(x, Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


_params_doc = r"""params (iterable): iterable of parameters or named_parameters to optimize
            or iterable of dicts defining parameter groups. When using named_parameters,
            all parameters in all groups should be named"""
_foreach_doc = r"""foreach (bool, optional): whether foreach implementation of optimizer
            is used. (default: None)"""
_fused_doc = r"""fused (bool, optional): whether the fused implementation is used.
            (default: None)"""
_capturable_doc = r"""capturable (bool, optional): whether this instance is safe to
            capture in a graph. (default: False)"""
_differentiable_doc = r"""differentiable (bool, optional): whether autograd should
            occur through the optimizer step in training. (default: False)"""
_maximize_doc = r"""maximize (bool, optional): maximize the objective with respect to the
            params, instead of minimizing (default: False)"""


def _layout_of(t, p):
    """``t`` (a new state tensor shaped as ``p``) with the strides torch's
    ``zeros_like(p, memory_format=torch.preserve_format)`` / ``clone(grad)`` give it:
    channels_last for a channels_last parameter."""
    from .._strides import preserved_strides, set_layout
    if tuple(t._d.shape) == tuple(p._d.shape):
        set_layout(t, preserved_strides(p))
    return t


def _scalar_dtype():
    return jnp.float64 if D.get_default_dtype() is D.float64 else jnp.float32


def _zero_scalar(value=0.0):
    if _tiers.on_host():                # (jnp.asarray compiles a conversion program)
        dt = np.dtype(_scalar_dtype())
        return Tensor._make(_tiers.put(np.asarray(value, dt), _tiers.aval((), dt), None))
    return Tensor._make(jnp.asarray(value, _scalar_dtype()))


def _typename(o):
    if isinstance(o, Tensor):
        return "torch." + {"float32": "Float", "float64": "Double", "int64": "Long",
                           "int32": "Int"}.get(o.dtype.name, o.dtype.name) + "Tensor"
    m = type(o).__module__
    return (m + "." if m not in ("builtins", None) else "") + type(o).__qualname__


_JIT_CACHE: dict = {}
_TRACES = {"update": 0}


def _counted(run, *args):
    _TRACES["update"] += 1
    return run(*args)


def _jitted(fn, flags):
    key = (fn, flags)
    f = _JIT_CACHE.get(key)
    if f is None:
        run = functools.partial(_with_complex, fn, dict(flags))
        # (the parameters and the state are donated: the update overwrites their buffers, as
        # a hand-written JAX step does, where their tensors alone hold them: ``Tiered.owned``)
        jitted = jax.jit(_tiers.inlined(functools.partial(_counted, run)),
                         donate_argnums=_DONATED)
        f = _JIT_CACHE[key] = _tiers.Tiered(run, jitted, "optim",
                                            ident=_tiers.stable("optim", fn, dict(flags)),
                                            donate=_DONATED)
    return f


_DONATED = (0, 2)     # a group update's (params, grads, state, hyperparameters)


def _clear_jit_cache():
    _JIT_CACHE.clear()
    _ONE_CACHE.clear()
    _GROUP_CALLS.clear()
    _TRACES["update"] = 0


# The interpreter tier's first calls of a group update run it one parameter at a time: each
# parameter's update is traced once per shape pattern (``poly``), where the group's function
# traces every parameter's (a GPT's AdamW group: ~1,000 equations, 60 ms to trace, before the
# first step could run). An elementwise update (``Optimizer._elementwise``) takes each
# parameter flattened, so one trace serves every parameter of the group. The compiled program
# stays one per group.
PER_PARAMETER = True
# a group is interpreted per parameter up to this many times the interpreter's bound for one
# call (with the default bound, 16M elements: a 4M-parameter Adam group); past it, compiling the
# group's program costs less than interpreting its first calls
GROUP_BOUND = 4
_ONE_CACHE: dict = {}


def _unflattened(shape, flat, plan, device):
    """A flattened update's results (numpy, flat) in their parameter's ``shape``, on
    ``device`` (the interpreted call's ``finish``)."""
    outs = []
    for h, a in zip(flat, plan.avals):
        if a.shape:                 # (a parameter-shaped array; the others are 0-d)
            h = h.reshape(shape)
            a = jax.core.ShapedArray(shape, a.dtype, weak_type=a.weak_type)
        outs.append(_tiers.put(h, a, device))
    return jax.tree_util.tree_unflatten(plan.out_tree, outs)


def _one(fn, flags, keys, present, hp_keys):
    """A Tiered of ``fn``'s update of one parameter, flat: ``(p, g, *state, *hp)``; state
    ``keys`` in order, ``present`` telling which hold an array (the others are None)."""
    key = (fn, flags, keys, present, hp_keys)
    f = _ONE_CACHE.get(key)
    if f is None:
        n_state = sum(present)

        def one(p, g, *rest):
            it = iter(rest[:n_state])
            state = {k: [next(it) if has else None] for k, has in zip(keys, present)}
            hp = dict(zip(hp_keys, rest[n_state:]))
            new_p, new_state = _with_complex(fn, dict(flags), [p], [g], state, hp)
            return new_p[0], {k: v[0] for k, v in new_state.items()}
        f = _ONE_CACHE[key] = _tiers.Tiered(one, lambda: jax.jit(one), "optim (one parameter)",
                                            ident=_tiers.stable("optim-one", fn, dict(flags),
                                                                keys, present, hp_keys),
                                            poly=_shape_poly.SymbolicFirst())
    return f


def _flat(p, arrays):
    """``arrays`` (a parameter's, its gradient's and state's) as numpy vectors where shaped like
    ``p`` (not 0-d, on the default device), 0-d ones as they are; None otherwise."""
    shape = p.shape
    if not shape:
        return None
    out = []
    for a in arrays:
        if a.__class__ is not _tiers._ArrayImpl or a.committed:
            return None
        if a.shape == shape:
            out.append(np.asarray(a).reshape(-1))
        elif a.shape == ():
            out.append(a)
        else:
            return None
    return out


def _per_parameter(fn, flags, params, grads, arrays, hp, elementwise=False, recorded=False):
    """A group update one parameter at a time; None where a parameter's update cannot be run so
    (the caller runs the group).

    Interpreted (``recorded=False``): the group update the tier claimed, each parameter's
    interpreted. Recorded (fused eager, an elementwise update whose group ``_GroupCall`` could
    not record): each parameter's call recorded; the segment's program holds the updates side
    by side, as the group's program would."""
    keys = tuple(arrays)
    hp_keys = tuple(hp)
    hp_vals = []
    for k in hp_keys:
        v = hp[k]
        if isinstance(v, np.generic):
            # interpreted: a 0-d array, its dtype as the group's trace sees it; recorded: one
            # device scalar per value, shared by the parameters' calls and later steps (one
            # input of the segment, not one per parameter)
            v = _hp_scalar(v) if recorded else np.asarray(v)
        elif v.__class__ is not _tiers._ArrayImpl and not (
                recorded and v.__class__ is _fused.Deferred):
            return None
        hp_vals.append(v)
    new_p, new_state = [], {}
    for i, (p, g) in enumerate(zip(params, grads)):
        st = [arrays[k][i] for k in keys]
        present = tuple(a is not None for a in st)
        ins = [p, g, *[a for a in st if a is not None]]
        one = _one(fn, flags, keys, present, hp_keys)
        if recorded:
            out = one(*ins, *hp_vals)
        else:
            flat = _flat(p, ins) if elementwise else None
            if flat is None:
                out = one.interpreted(*ins, *hp_vals)
            else:
                out = one.interpreted(*flat, *hp_vals,
                                      finish=functools.partial(_unflattened, p.shape))
            if out is None:
                return None
        new_p.append(out[0])
        for k, v in out[1].items():
            new_state.setdefault(k, []).append(v)
    return new_p, new_state


def _run_group(update, flags, fn, args, elementwise):
    """A group update run now (strict eager, a fused segment's replay): the group's program,
    or, for a group of more than one parameter, the interpreter tier's first calls one
    parameter at a time (``_per_parameter``)."""
    if PER_PARAMETER and len(args[0]) > 1:
        out = fn.call_claiming(*args, limit=GROUP_BOUND * _tiers.INTERPRET_MAX_ELEMENTS)
        if out is _tiers.CLAIMED:
            with _tiers.claimed():
                out = _per_parameter(update, flags, *args, elementwise=elementwise)
            out = out or fn.compiled_call(*args)
        return out
    return fn(*args)


class _GroupCall(_tiers.Tiered):
    """Fused eager: an elementwise optimizer's group update recorded as one call, where a call
    per parameter cost a recording each (a GPT's AdamW group: 30 of them a step). Its outputs'
    shapes and dtypes are those of each parameter's update (``_one``, traced once per shape
    pattern), not of a trace of the whole group (every parameter's update, before a cold first
    step could run); the segment's program traces the group's function; a replayed segment
    runs it as strict eager does (``_run_group``)."""

    __slots__ = ("update", "flags", "group")

    def __init__(self, update, flags):
        self.update, self.flags = update, flags
        self.group = group = _jitted(update, flags)
        super().__init__(group.raw, lambda: group.jit, "optim (group, recorded)")

    def record(self, params, grads, arrays, hp):
        """The update's deferred outputs, or None where it must run now (the caller records
        each parameter's update)."""
        vals = {}
        for k, v in hp.items():
            if isinstance(v, np.generic):
                v = _hp_scalar(v)       # (one device scalar per value: see _per_parameter)
            elif v.__class__ is not _tiers._ArrayImpl and v.__class__ is not _fused.Deferred:
                return None
            vals[k] = v
        return _fused.record(self, (params, grads, arrays, vals))

    def __call__(self, *args):
        if _fused._installed:
            args = _fused.concrete(args)
        return _run_group(self.update, self.flags, self.group, args, True)

    def declared_outputs(self, tree, leaves):
        params, grads, arrays, hp = jax.tree_util.tree_unflatten(tree, leaves)
        keys, hp_keys = tuple(arrays), tuple(hp)
        hp_vals = [hp[k] for k in hp_keys]
        new_p, new_state, out_keys = [], None, None
        for i, (p, g) in enumerate(zip(params, grads)):
            st = [arrays[k][i] for k in keys]
            present = tuple(a is not None for a in st)
            one = _one(self.update, self.flags, keys, present, hp_keys)
            tree_i, avals = _fused.abstract(one, [p, g, *[a for a in st if a is not None],
                                                  *hp_vals])
            # (``one`` returns ``(new p, {state key: new state})``)
            _p, where = jax.tree_util.tree_unflatten(tree_i, range(len(avals)))
            if out_keys is None:
                out_keys = tuple(where)
                new_state = {k: [] for k in out_keys}
            if tuple(where) != out_keys or None in where.values():
                return self._traced_outputs(params, grads, arrays, hp)
            new_p.append(_aval(avals[_p]))
            for k in out_keys:
                new_state[k].append(_aval(avals[where[k]]))
        flat, out_tree = jax.tree_util.tree_flatten((new_p, new_state))
        return out_tree, flat

    def _traced_outputs(self, *args):
        """The outputs of a group whose parameters' updates differ in structure: from a trace
        of the group's function."""
        spec = jax.tree_util.tree_map(
            lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type), args)
        out = jax.eval_shape(self.raw, *spec)
        flat, out_tree = jax.tree_util.tree_flatten(out)
        return out_tree, flat


def _aval(key):
    """A recorded value's ``(shape, dtype, weak_type)`` as an abstract value."""
    return jax.ShapeDtypeStruct(key[0], key[1], weak_type=key[2])


def _group_call(update, flags):
    key = (update, flags)
    f = _GROUP_CALLS.get(key)
    if f is None:
        f = _GROUP_CALLS[key] = _GroupCall(update, flags)
    return f


_GROUP_CALLS: dict = {}
_HP_SCALARS: dict = {}


def _hp_scalar(v):
    """numpy scalar ``v`` as a 0-d jax array (its dtype), one per value (bounded)."""
    key = (v.dtype.str, v.tobytes())
    a = _HP_SCALARS.get(key)
    if a is None:
        if len(_HP_SCALARS) >= 256:
            _HP_SCALARS.clear()
        a = _HP_SCALARS[key] = _tiers.put(np.asarray(v), jax.core.ShapedArray((), v.dtype), None)
    return a


def _register_cache():
    from .. import _caches
    _caches.register("optim", _clear_jit_cache, lambda: dict(_TRACES))


_register_cache()


def _as_real(x):
    return jnp.stack([jnp.real(x), jnp.imag(x)], axis=-1)


def _as_complex(x):
    return jax.lax.complex(x[..., 0], x[..., 1])


def _with_complex(fn, flags, params, grads, state, hp):
    """Run ``fn`` with complex parameters (and their gradients and per-element state) viewed
    as real pairs, as torch's optimizers do with ``view_as_real``."""
    cplx = [jnp.iscomplexobj(p) for p in params]
    if not any(cplx):
        return fn(params, grads, state, hp, **flags)
    shapes = [p.shape for p in params]

    def fwd(xs):
        return [(_as_real(x) if c and x is not None and x.shape == sh
                 and jnp.iscomplexobj(x) else x)
                for x, c, sh in zip(xs, cplx, shapes)]

    new_p, new_state = fn(fwd(params), fwd(grads), {k: fwd(v) for k, v in state.items()},
                          hp, **flags)

    def back(xs):
        return [(_as_complex(x) if c and x is not None and x.shape == sh + (2,) else x)
                for x, c, sh in zip(xs, cplx, shapes)]

    return back(new_p), {k: back(v) for k, v in new_state.items()}


_LOW = (jnp.bfloat16, jnp.float16)


def lerp(a, b, w):
    """torch.lerp with a scalar weight, as torch's kernel computes it (bfloat16/float16: in
    float32 with the weight in float32, rounded once)."""
    low = a.dtype if a.dtype in _LOW else None
    if low:
        a, b = a.astype(jnp.float32), b.astype(jnp.float32)
    w = jnp.asarray(w).astype(a.dtype)
    r = jnp.where(jnp.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))
    return r.astype(low) if low else r


def low_op(fn, *xs):
    """A bfloat16/float16 tensor op as torch's CPU kernel computes it: ``fn`` of the operands in
    float32 (Python-number operands as float32), rounded once to the first operand's dtype
    (``addcmul``: ``fn = lambda a, v, b: a + v * b * b``)."""
    low = xs[0].dtype
    return fn(*(jnp.asarray(x).astype(jnp.float32) for x in xs)).astype(low)


def add_alpha(a, b, alpha):
    """torch's ``a.add(b, alpha=alpha)`` (``alpha`` a float64 hyperparameter): its CPU kernel's
    fused multiply-add, rounded once (``_ops.arithmetic.fma_add``) for floating parameters."""
    from .._ops.arithmetic import fma_add
    r = fma_add(a, b, alpha)
    return a + cast(alpha, a) * b if r is None else r


def cast(x, like):
    """A float64 hyperparameter as the parameter's dtype (torch casts Python scalars so)."""
    return jnp.asarray(x).astype(like.dtype)


def scale(a, x, foreach=False):
    """torch's ``a.mul(x)`` for a Python-number hyperparameter ``x``: its CPU kernel takes the
    number in the op's compute type, float32 for bfloat16/float16 ``a`` (not ``x`` rounded to
    ``a``'s dtype), and rounds the product once. ``foreach``: torch's ``_foreach_mul_`` (the
    ``foreach=True`` steps), whose CPU kernel multiplies by ``x`` rounded to ``a``'s dtype."""
    if a.dtype in (jnp.bfloat16, jnp.float16) and not foreach:
        return (a.astype(jnp.float32) * jnp.asarray(x).astype(jnp.float32)).astype(a.dtype)
    return a * cast(x, a)


class Optimizer:
    """Base class of all optimizers (torch.optim.Optimizer)."""

    # subclasses: the pure update function, the numeric (traced) and boolean (static) options
    _update = None
    # the update is elementwise in each parameter's arrays (a flattened parameter's update is
    # the update of the parameter, flattened): Adafactor's, which factors a matrix, is not
    _elementwise = True
    _hp_keys: tuple = ()
    _flag_keys: tuple = ()
    _state_keys: tuple = ()
    # set by torchlike.compile while it traces a step: {id(group): hp dict of traced scalars}
    _traced_hp = None

    def __init__(self, params, defaults):
        if defaults.get("fused") and defaults.get("differentiable"):
            # torch's SGD/Adam/AdamW/Adagrad, after their parameter checks
            raise RuntimeError("`fused` does not support `differentiable`")
        if defaults.get("differentiable"):
            raise NotImplementedError(
                "torchlike optimizers do not support differentiable=True: a step is one "
                "jitted update outside the autograd tape (see DIFFERENCES.md)")
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for g in param_groups:
            self.add_param_group(g)
        if defaults.get("fused") and defaults.get("foreach"):
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    # ------------------------------------------------------------ groups
    def add_param_group(self, param_group):
        """Add a param group (a dict with ``params`` and per-group options)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for p in param_group["params"]:
            if isinstance(p, tuple):
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not self.defaults.get("differentiable", None) and not (p.is_leaf
                                                                       or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        ids = {id(p) for p in tensors}
        if len(ids) != len(tensors):
            import warnings
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for g in self.param_groups:
            seen.update(id(p) for p in g["params"])
            if ("param_names" in param_group) != ("param_names" in g):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {txt} to the optimizer")
        if seen & ids:
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized tensors (to None by default)."""
        _zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    # ------------------------------------------------------------ hooks
    def register_step_pre_hook(self, hook):
        h = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[h.id] = hook
        return h

    def register_step_post_hook(self, hook):
        h = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[h.id] = hook
        return h

    def register_state_dict_pre_hook(self, hook, prepend=False):
        return self._add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        return self._add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        return self._add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        return self._add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    @staticmethod
    def _add_hook(d, hook, prepend):
        h = RemovableHandle(d)
        d[h.id] = hook
        if prepend:
            d.move_to_end(h.id, last=False)
        return h

    # ------------------------------------------------------------ step
    @staticmethod
    def profile_hook_step(func):
        """``func`` (a class's ``step``) calling the global and the optimizer's step hooks, as
        torch wraps every optimizer class's ``step`` (a subclass's own ``step`` included)."""
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self = args[0]
            for pre_hook in list(chain(_global_optimizer_pre_hooks.values(),
                                       self._optimizer_step_pre_hooks.values())):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(f"{func} must return None or a tuple of (new_args, "
                                           f"new_kwargs), but got {result}.")
            out = func(*args, **kwargs)
            for post_hook in list(chain(self._optimizer_step_post_hooks.values(),
                                        _global_optimizer_post_hooks.values())):
                post_hook(self, args, kwargs)
            return out
        return wrapper

    def _patch_step_function(self):
        if not getattr(self.__class__.step, "hooked", None):
            self.__class__.step = self.profile_hook_step(self.__class__.step)
            self.__class__.step.hooked = True

    def step(self, closure=None):
        """Perform one optimization step; ``closure`` re-evaluates the loss and returns it."""
        loss = None
        if closure is not None:
            from ..autograd.grad_mode import enable_grad
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            self._refuse_sparse_grads(group)
            self._step_group(group)
        return loss

    def _sparse_grad_refusal(self, group):
        """The RuntimeError message of a step over a sparse gradient (None where the
        optimizer takes them)."""
        return f"{type(self).__name__} does not support sparse gradients"

    def _refuse_sparse_grads(self, group):
        # (a weight looked up with sparse=True: torch's gradient is sparse, torchlike's dense)
        if any(p.grad is not None and (p.grad.is_sparse or getattr(p, "_sparse_embedding",
                                                                     False))
               for p in group["params"]):
            refusal = self._sparse_grad_refusal(group)
            if refusal is not None:
                raise RuntimeError(refusal)

    def _init_state(self, p, group):
        """Fill ``self.state[p]`` on first use (subclasses)."""

    def _hp(self, group):
        return {k: np.float64(group[k]) for k in self._hp_keys}

    def _flags(self, group):
        return tuple((k, bool(group[k])) for k in self._flag_keys)

    def _state_lists(self, params, group):
        keys = self._state_keys_for(group)
        return {k: [self.state[p].get(k) for p in params] for k in keys}

    def _state_keys_for(self, group):
        return self._state_keys

    def _step_group(self, group):
        params = [p for p in group["params"] if p.grad is not None]
        if not params:
            return
        for p in params:
            self._init_state(p, group)
        st = self._state_lists(params, group)
        arrays = {k: [None if t is None else _raw(t) for t in v] for k, v in st.items()}
        flags = self._flags(group)
        fn = _jitted(type(self)._update, flags)
        traced = self._traced_hp
        hp = traced[id(group)] if traced is not None else self._hp(group)
        args = ([_raw(p) for p in params], [_raw(p.grad) for p in params], arrays, hp)
        if PER_PARAMETER and len(params) > 1 and _fused.ACTIVE and type(self)._elementwise:
            out = None
            if traced is None:
                out = _group_call(type(self)._update, flags).record(*args)
            if out is None:
                out = _per_parameter(type(self)._update, flags, *args, recorded=True) or fn(*args)
        else:
            out = _run_group(type(self)._update, flags, fn, args, type(self)._elementwise)
        new_p, new_state = out
        dst, src = list(params), list(new_p)
        for k, arrs in new_state.items():
            for p, t, a in zip(params, st[k], arrs):
                if a is None:
                    continue
                if t is None:
                    self.state[p][k] = _layout_of(Tensor._make(a), p)
                else:
                    dst.append(t)
                    src.append(a)
        _write_each(dst, src)

    # ------------------------------------------------------------ state dicts
    def state_dict(self):
        """``{'state': {index: {...}}, 'param_groups': [{..., 'params': [indices]}]}``."""
        for hook in list(self._optimizer_state_dict_pre_hooks.values()):
            hook(self)
        mapping = {}
        start = 0

        def pack(group):
            nonlocal start
            packed = {k: v for k, v in group.items() if k != "params"}
            for i, p in enumerate(group["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in group["params"]]
            start += len(packed["params"])
            return packed

        groups = [pack(g) for g in self.param_groups]
        state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                 for k, v in self.state.items()}
        sd = {"state": state, "param_groups": groups}
        for hook in list(self._optimizer_state_dict_post_hooks.values()):
            r = hook(self, sd)
            if r is not None:
                sd = r
        return sd

    def _cast_state(self, param, value, key=None):
        # torch's ``_process_value_according_to_param_policy``: ``value.to(param's dtype)``,
        # which is the saved tensor itself when its dtype already matches (the loaded state
        # aliases the state_dict's tensors, as torch's does)
        if isinstance(value, Tensor):
            if key == "step":
                group = next((g for g in self.param_groups
                              if any(q is param for q in g["params"])), {})
                if group.get("capturable", False) or group.get("fused", False):
                    from .. import float32
                    return value.to(dtype=float32)
                return value
            if param.is_floating_point():
                return value.to(dtype=param.dtype)
            return value
        if isinstance(value, dict):
            return {k: self._cast_state(param, v, key=k) for k, v in value.items()}
        if isinstance(value, (list, tuple)) and not isinstance(value, str):
            return type(value)(self._cast_state(param, v) for v in value)
        return value

    def load_state_dict(self, state_dict):
        """Load a state_dict made by ``state_dict()`` (torchlike's or real torch's layout)."""
        state_dict = dict(state_dict)
        for hook in list(self._optimizer_load_state_dict_pre_hooks.values()):
            r = hook(self, state_dict)
            if r is not None:
                state_dict = r
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(s["params"] for s in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                p = id_map[k]
                state[p] = self._cast_state(p, v)
            else:
                state[k] = v
        new_groups = []
        for g, s in zip(groups, saved_groups):
            s["params"] = g["params"]
            if "param_names" in g and "param_names" not in s:
                s["param_names"] = g["param_names"]
            new_groups.append(s)
        self.__setstate__({"state": state, "param_groups": new_groups})
        for hook in list(self._optimizer_load_state_dict_post_hooks.values()):
            hook(self)

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()
        for name, default in self.defaults.items():
            if default is not required:
                for g in self.param_groups:
                    g.setdefault(name, default)
        if self._builtin_step_tensors():
            for p, s in self.state.items():
                if "step" in s and not isinstance(s["step"], Tensor):
                    s["step"] = _zero_scalar(float(s["step"]))

    def _builtin_step_tensors(self):
        """Whether this optimizer is (or subclasses) one of torch's own, whose ``__setstate__``
        makes a loaded Python ``step`` a tensor; a custom Optimizer keeps its own ``step``
        as it is (an int stays an int), as torch's base class does."""
        return any(c is not Optimizer and c.__module__.startswith("torchlike.optim")
                   for c in type(self).__mro__)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, g in enumerate(self.param_groups):
            s += "\n" + f"Parameter Group {i}\n"
            for k in sorted(g):
                if k != "params":
                    s += f"    {k}: {g[k]}\n"
        return s + ")"
