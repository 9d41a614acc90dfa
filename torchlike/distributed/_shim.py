"""Per-module input layouts and padded-parameter views without module hooks.

The global view's modules convert their inputs onto the mesh (tensor-parallel input layouts,
FSDP's batch sharding) and show padded FSDP parameters unpadded (and cast to a mixed
precision policy's ``param_dtype``) during ``forward``. Done with
forward hooks, ``torchlike.compile`` would have to break the graph; so the module's class is
swapped for a subclass (same name) whose ``forward`` does it, as torch's ``fully_shard``
swaps in ``FSDP<Class>``."""
from __future__ import annotations

import math

__all__ = ["add_input_fn", "add_call_fn", "call_fn", "shim",
           "place_padded", "true_shape", "lay_out"]

_CLASSES = {}


class _Shim:
    def forward(self, *args, **kwargs):
        posts = []
        for fn in self.__dict__.get("_tl_call_fns", ()):
            args, kwargs, post = call_fn(fn, self, args, kwargs)
            if post is not None:
                posts.append(post)
        for fn in self._tl_input_fns:
            args = fn(self, args)
        padded = self.__dict__.get("_tl_padded") or {}
        cast = self.__dict__.get("_tl_param_dtype")
        views = {name: self._parameters[name][tuple(slice(0, n) for n in shape)]
                 for name, shape in padded.items()}
        if cast is not None:
            for name, p in self._parameters.items():
                if p is not None and p.is_floating_point():
                    views[name] = views.get(name, p).to(cast)
        self.__dict__.update(views)
        try:
            out = self._tl_base.forward(self, *args, **kwargs)
        finally:
            for name in views:
                self.__dict__.pop(name, None)
        for post in reversed(posts):
            out = post(out)
        return out


def shim(module, extra_bases=(), prefix=""):
    """Swap ``module``'s class for its shimmed subclass (idempotent; ``extra_bases`` mixed in,
    ``prefix`` added to the class name)."""
    cls = type(module)
    if isinstance(module, _Shim):
        if all(isinstance(module, b) for b in extra_bases):
            return module
        base = module._tl_base
    else:
        base = cls
        object.__setattr__(module, "_tl_input_fns", [])
        object.__setattr__(module, "_tl_base", base)
    key = (base, tuple(extra_bases), prefix)
    new = _CLASSES.get(key)
    if new is None:
        new = _CLASSES[key] = type(prefix + base.__name__, tuple(extra_bases) + (_Shim, base),
                                   {"__module__": base.__module__})
    module.__class__ = new
    return module


def add_input_fn(module, fn):
    """Run ``fn(module, args) -> args`` before ``module.forward``."""
    shim(module)
    module._tl_input_fns.append(fn)


def add_call_fn(module, fn):
    """Run ``fn(module, args) -> (args, post)`` before ``module.forward`` (ahead of the input
    fns); ``post(output) -> output``, when not None, after it. A ``fn`` whose ``with_kwargs``
    is true is ``fn(module, args, kwargs) -> (args, kwargs, post)``."""
    shim(module)
    if "_tl_call_fns" not in module.__dict__:
        object.__setattr__(module, "_tl_call_fns", [])
    module._tl_call_fns.append(fn)


def call_fn(fn, module, args, kwargs):
    """``(args, kwargs, post)`` of call function ``fn`` (``add_call_fn``)."""
    if getattr(fn, "with_kwargs", False):
        return fn(module, args, kwargs)
    args, post = fn(module, args)
    return args, kwargs, post


def true_shape(module, name):
    """The shape torch gives parameter ``name`` of ``module`` (unpadded)."""
    padded = module.__dict__.get("_tl_padded") or {}
    return tuple(padded.get(name, module._parameters[name].shape))


def place_padded(module, name, sharding):
    """Lay parameter ``name`` out as ``sharding``; a dim its mesh axes do not divide evenly is
    padded with zeros to the next multiple (jax shards evenly, torch also unevenly).

    The padded parameter replaces the old one (optimizers must be built afterwards, as torch
    requires after ``fully_shard``); ``forward`` sees the unpadded slice, ``state_dict()`` and
    ``load_state_dict()`` use the unpadded shape. The padding's gradient is zero, so optimizers
    leave it at zero."""
    import jax
    import jax.numpy as jnp
    from ..nn.parameter import Parameter
    from .._tensor import Tensor
    from ..autograd.grad_mode import no_grad
    p = module._parameters[name]
    spec = list(sharding.spec) + [None] * (p.ndim - len(sharding.spec))
    shape = list(p.shape)
    for d, entry in enumerate(spec[:p.ndim]):
        axes = () if entry is None else (entry if isinstance(entry, tuple) else (entry,))
        k = math.prod(sharding.mesh.shape[a] for a in axes)
        shape[d] = -(-shape[d] // k) * k
    if "_tl_padded" not in module.__dict__:
        object.__setattr__(module, "_tl_padded", {})
        shim(module)
        module.register_state_dict_post_hook(_unpad_state)
        module.register_load_state_dict_pre_hook(_pad_state)
    if shape == list(p.shape):
        p._set_data(lay_out(p._data, sharding))
        return p
    true = true_shape(module, name)
    data = jnp.pad(p._data, [(0, a - b) for a, b in zip(shape, p.shape)])
    with no_grad():
        q = Parameter(Tensor._make(lay_out(data, sharding)),
                      requires_grad=p.requires_grad)
    q.__dict__.update({k: v for k, v in p.__dict__.items() if k.startswith("_fsdp")})
    module._parameters[name] = q
    module._tl_padded[name] = true
    return q


def _unpad_state(m, state_dict, prefix, local_metadata):
    for name, shape in m._tl_padded.items():
        k = prefix + name
        if k in state_dict:
            state_dict[k] = state_dict[k][tuple(slice(0, n) for n in shape)]


def _pad_state(m, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
               error_msgs):
    """Incoming values padded as their parameters are, and laid out as them (``copy_`` would
    take the incoming value's layout)."""
    import jax
    import jax.numpy as jnp
    from .._tensor import Tensor
    for name, p in m._parameters.items():
        k = prefix + name
        v = state_dict.get(k)
        if p is None or v is None:
            continue
        a = v._data if isinstance(v, Tensor) else jnp.asarray(v)
        shape = m._tl_padded.get(name)
        if shape is not None and tuple(a.shape) == tuple(shape):
            a = jnp.pad(a, [(0, x - y) for x, y in zip(p.shape, shape)])
        if tuple(a.shape) == tuple(p.shape):
            state_dict[k] = Tensor._make(lay_out(a, p._data.sharding))


def lay_out(a, sharding):
    """jax array ``a`` laid out as ``sharding``; a process-local ``a`` (a full value each
    process holds, as a full state dict's) onto a sharding spanning processes gives each
    process's devices their blocks of it."""
    import jax
    import numpy as np
    if (not isinstance(a, jax.core.Tracer) and a.is_fully_addressable
            and not sharding.is_fully_addressable):
        x = np.asarray(a)
        return jax.make_array_from_callback(x.shape, sharding, lambda idx: x[idx])
    return jax.device_put(a, sharding)
