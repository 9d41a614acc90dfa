"""torch.distributed.fsdp: FSDP2's ``fully_shard`` as jax shardings (the global view).

``fully_shard(module, mesh=...)`` lays every parameter of ``module`` out on the mesh's first
dimension ("dp"), sharded on dim 0 (on top of a tensor-parallel layout already there:
``P(("dp", "tp"), ...)``), and the module's inputs with their batch dim on "dp". jax's
programs gather what each op needs (XLA inserts the all-gathers and reduce-scatters); the
optimizer's state, made ``*_like`` the parameters, is sharded the same way.

torch shards unevenly (``torch.chunk``); jax refuses a dim not divisible by the mesh. Such a
parameter is stored padded with zeros to the next multiple (``_shim.place_padded``: its
gradient there is 0, so optimizers leave the padding at 0): the module sees the unpadded slice
during forward, and ``state_dict()`` / ``load_state_dict()`` use the unpadded shape, torch's
keys.
"""
from __future__ import annotations

import jax
from jax.sharding import NamedSharding, PartitionSpec as P

from ..._tensor import Tensor
from .._shim import add_call_fn, add_input_fn, call_fn, place_padded, shim, true_shape
from ..device_mesh import init_device_mesh
from ..tensor._api import (DTensor, as_dtensor_param, canonical_spec, global_to_local,
                           is_local, local_to_global, per_rank)
from ..tensor.placement_types import Shard

__all__ = ["fully_shard", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy",
           "CPUOffloadPolicy", "FullyShardedDataParallel", "ShardingStrategy", "StateDictType",
           "FullStateDictConfig", "ShardedStateDictConfig", "FullOptimStateDictConfig",
           "ShardedOptimStateDictConfig", "MixedPrecision", "CPUOffload", "BackwardPrefetch",
           "UnshardHandle", "register_fsdp_forward_method"]


class MixedPrecisionPolicy:
    def __init__(self, param_dtype=None, reduce_dtype=None, output_dtype=None,
                 cast_forward_inputs=True):
        self.param_dtype, self.reduce_dtype = param_dtype, reduce_dtype
        self.output_dtype, self.cast_forward_inputs = output_dtype, cast_forward_inputs


class OffloadPolicy:
    pass


class CPUOffloadPolicy(OffloadPolicy):
    def __init__(self, pin_memory=True):
        self.pin_memory = pin_memory


class UnshardHandle:
    """What ``unshard(async_op=True)`` returns; ``wait()`` returns at once."""

    def wait(self):
        return None


class FSDPModule:
    """Mixed into a module's class by ``fully_shard`` (torch's ``FSDP<Class>``)."""

    def reshard(self):
        """Parameters stay sharded between programs: nothing to free."""

    def unshard(self, async_op=False):
        """jax gathers parameters inside each program: nothing to do ahead (with
        ``async_op=True``, a handle whose ``wait()`` returns at once, as torch's)."""
        return UnshardHandle() if async_op else None

    def set_requires_gradient_sync(self, requires_gradient_sync, *, recurse=True):
        self._fsdp_grad_sync = requires_gradient_sync

    def set_reshard_after_forward(self, reshard_after_forward, recurse=True):
        self._fsdp_reshard = reshard_after_forward

    # Scheduling and memory knobs of torch's FSDP2: jax's programs decide when parameters are
    # gathered and freed, so these record nothing that changes results.
    def set_is_last_backward(self, is_last_backward):
        """(No effect: gradients are reduced inside the backward's programs.)"""

    def set_reshard_after_backward(self, reshard_after_backward, *, recurse=True):
        """(No effect: parameters stay sharded between programs.)"""

    def set_modules_to_forward_prefetch(self, modules):
        """(No effect: XLA schedules the all-gathers.)"""

    def set_modules_to_backward_prefetch(self, modules):
        """(No effect: XLA schedules the all-gathers.)"""

    def set_post_optim_event(self, event):
        """(No effect: no separate all-gather stream.)"""

    def set_unshard_in_backward(self, unshard_in_backward):
        """(No effect: jax gathers what the backward needs.)"""

    def set_requires_all_reduce(self, requires_all_reduce, *, recurse=True):
        """(No effect: one mesh dimension, nothing to all-reduce across replicas.)"""

    def reset_iter_state(self):
        """(Nothing to reset.)"""

    def set_gradient_divide_factor(self, factor):
        raise NotImplementedError("FSDPModule.set_gradient_divide_factor: gradients are "
                                  "averaged over the ranks")

    set_reduce_scatter_divide_factor = set_gradient_divide_factor

    def set_all_reduce_hook(self, hook, *, stream=None):
        raise NotImplementedError("FSDPModule.set_all_reduce_hook: gradients are reduced "
                                  "inside jax's programs")

    def set_custom_all_gather(self, comm):
        raise NotImplementedError("FSDPModule.set_custom_all_gather: XLA inserts the "
                                  "all-gathers")

    def set_custom_reduce_scatter(self, comm):
        raise NotImplementedError("FSDPModule.set_custom_reduce_scatter: XLA inserts the "
                                  "reduce-scatters")


def register_fsdp_forward_method(module, method_name):
    """Let ``module.<method_name>`` (a ``generate``, say) be called as ``forward`` is: with
    each rank's tensors in and out under one device per process."""
    method = getattr(type(module), method_name)

    def wrapped(*args, **kwargs):
        posts = []
        for fn in module.__dict__.get("_tl_call_fns", ()):
            args, kwargs, post = call_fn(fn, module, args, kwargs)
            if post is not None:
                posts.append(post)
        out = method(module, *args, **kwargs)
        for post in reversed(posts):
            out = post(out)
        return out
    object.__setattr__(module, method_name, wrapped)


def _spec_list(a, ndim, jmesh):
    s = getattr(a, "sharding", None)
    if isinstance(s, NamedSharding) and s.mesh == jmesh:
        spec = list(s.spec) + [None] * (ndim - len(s.spec))
        return spec[:ndim]
    return [None] * ndim


def _axes(entry):
    if entry is None:
        return ()
    return tuple(entry) if isinstance(entry, tuple) else (entry,)


def _shard_param(sub, name, p, mesh, dp):
    jm = mesh._jax_mesh
    if p.ndim == 0:
        p._set_data(jax.device_put(p._data, NamedSharding(jm, P())))
        return
    spec = _spec_list(p._data, p.ndim, jm)
    axes = (dp,) + tuple(a for a in _axes(spec[0]) if a != dp)
    spec[0] = axes if len(axes) > 1 else axes[0]
    place_padded(sub, name, NamedSharding(jm, canonical_spec(spec)))


def _state_dtensors(m, state_dict, prefix, local_metadata):
    """State-dict values of fully sharded parameters are DTensors (torch's sharded state
    dict)."""
    for name, p in m._parameters.items():
        v = state_dict.get(prefix + name)
        if isinstance(p, DTensor) and type(v) is Tensor:
            v.__class__ = DTensor
            v._spec = p._get_spec()


def _cast_fn(policy):
    """MixedPrecisionPolicy: the module's floating inputs (positional and keyword) cast to
    ``param_dtype``, its floating outputs to ``output_dtype``."""
    def cast(x, dt):
        if isinstance(x, Tensor):
            return x.to(dt) if x.is_floating_point() else x
        if isinstance(x, (tuple, list)):
            return type(x)(cast(o, dt) for o in x)
        if isinstance(x, dict):
            return {k: cast(v, dt) for k, v in x.items()}
        return x

    def fn(m, args, kwargs):
        dt = policy.param_dtype
        if dt is not None and policy.cast_forward_inputs:
            # (as torch: inside tuples, lists and dicts, keyword arguments too)
            args, kwargs = cast(args, dt), cast(kwargs, dt)
        out_dt = policy.output_dtype
        return args, kwargs, (None if out_dt is None else lambda out: cast(out, out_dt))
    fn.with_kwargs = True
    return fn


def _rank_call_fn(mesh, dp):
    """Per-rank inputs joined into the global batch (on ``dp``), the outputs cut back to this
    rank's rows, their gradients averaged over the ranks: the root module of a per-rank job (a
    module called with global arrays, inside another sharded module, passes them through)."""
    sub = mesh if mesh.ndim == 1 else mesh[dp]
    n = sub.size()

    def fn(m, args):
        if not any(is_local(a) and a.ndim > 0 for a in args):
            return args, None
        args = tuple(local_to_global(a, sub, [Shard(0)]) if is_local(a) and a.ndim > 0
                     else a for a in args)

        def post(out):
            if isinstance(out, Tensor):
                if out.ndim > 0 and out.shape[0] % n == 0:
                    return global_to_local(out, sub, [Shard(0)], 1 / n)
                return out
            if isinstance(out, (tuple, list)):
                return type(out)(post(o) for o in out)
            if isinstance(out, dict):
                return {k: post(v) for k, v in out.items()}
            return out
        return args, post
    return fn


def _shard_inputs(mesh, dp):
    from ..tensor.parallel import _to_mesh
    from ..tensor.placement_types import Shard

    sub = mesh if mesh.ndim == 1 else mesh[dp]

    def fn(m, args):
        return tuple(_to_mesh(a, sub, Shard(0)) for a in args)
    return fn


def fully_shard(module, *, mesh=None, reshard_after_forward=True, shard_placement_fn=None,
                mp_policy=None, offload_policy=None, ignored_params=None):
    """Shard ``module``'s parameters (those not already sharded by an inner ``fully_shard``)
    on dim 0 over the mesh's first dimension; returns ``module``, now an ``FSDPModule``."""
    if mesh is None:
        mesh = init_device_mesh(jax.devices()[0].platform.replace("gpu", "cuda"),
                                (len(jax.devices()),), mesh_dim_names=("dp",))
    dp = mesh._dims[0]
    ignored = {id(p) for p in (ignored_params or ())}
    for sub in module.modules():
        for name, p in list(sub._parameters.items()):
            if p is None or id(p) in ignored or getattr(p, "_fsdp_sharded", False):
                continue
            _shard_param(sub, name, p, mesh, dp)
            q = sub._parameters[name]
            object.__setattr__(q, "_fsdp_sharded", True)
            as_dtensor_param(q, mesh, true_shape(sub, name))
            if mp_policy is not None and mp_policy.param_dtype is not None:
                shim(sub)
                object.__setattr__(sub, "_tl_param_dtype", mp_policy.param_dtype)
            if not sub.__dict__.get("_tl_state_dtensors"):
                sub.register_state_dict_post_hook(_state_dtensors)
                object.__setattr__(sub, "_tl_state_dtensors", True)
    if not isinstance(module, FSDPModule):
        shim(module, (FSDPModule,), "FSDP")
        if mp_policy is not None:
            add_call_fn(module, _cast_fn(mp_policy))
        if per_rank(mesh):
            add_call_fn(module, _rank_call_fn(mesh, dp))
        else:
            add_input_fn(module, _shard_inputs(mesh, dp))
    module._fsdp_mesh = mesh
    return module


from ._fsdp1 import (BackwardPrefetch, CPUOffload, FullOptimStateDictConfig,  # noqa: E402,F401
                     FullStateDictConfig, FullyShardedDataParallel, MixedPrecision,
                     ShardedOptimStateDictConfig, ShardedStateDictConfig, ShardingStrategy,
                     StateDictType)
