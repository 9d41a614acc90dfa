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
from .._shim import add_call_fn, add_input_fn, place_padded, shim, true_shape
from ..device_mesh import init_device_mesh
from ..tensor._api import DTensor, canonical_spec, placements_of

__all__ = ["fully_shard", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy",
           "CPUOffloadPolicy", "FullyShardedDataParallel"]


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


def _make_param_class():
    from ...nn.parameter import Parameter

    class FSDPParam(Parameter, DTensor):
        """A fully sharded parameter: an ``nn.Parameter`` that is a DTensor (placements,
        ``device_mesh``, ``to_local()``, ``full_tensor()``), as torch's FSDP2 makes them; its
        ``.grad`` is a DTensor laid out as it (``DTensor.grad``)."""
        __slots__ = ()
        _grad_as_self = True

    FSDPParam.__name__ = FSDPParam.__qualname__ = "DTensor"
    return FSDPParam


_PARAM_CLASS = []


def _as_dtensor_param(p, mesh, shape):
    if not _PARAM_CLASS:
        _PARAM_CLASS.append(_make_param_class())
    if type(p) is not _PARAM_CLASS[0]:
        p.__class__ = _PARAM_CLASS[0]
    object.__setattr__(p, "_spec", (mesh, placements_of(p._data.sharding, mesh._dims)))
    if tuple(shape) != tuple(p.shape):
        object.__setattr__(p, "_tl_shape", tuple(shape))
    else:
        p.__dict__.pop("_tl_shape", None)


def _state_dtensors(m, state_dict, prefix, local_metadata):
    """State-dict values of fully sharded parameters are DTensors (torch's sharded state
    dict)."""
    for name, p in m._parameters.items():
        v = state_dict.get(prefix + name)
        if isinstance(p, DTensor) and type(v) is Tensor:
            v.__class__ = DTensor
            v._spec = p._get_spec()


def _cast_fn(policy):
    """MixedPrecisionPolicy: the module's floating inputs cast to ``param_dtype``."""
    def fn(m, args):
        dt = policy.param_dtype
        if dt is None or not policy.cast_forward_inputs:
            return args, None
        return tuple(a.to(dt) if isinstance(a, Tensor) and a.is_floating_point() else a
                     for a in args), None
    return fn


def per_rank(mesh):
    """Whether ``mesh`` spans processes with one device each (torchrun's layout): modules
    sharded on it then take and give each rank's own tensors, as torch's."""
    jm = mesh._jax_mesh
    if jax.process_count() == 1:
        return False
    me = jax.process_index()
    return sum(d.process_index == me for d in jm.devices.flat) == 1


def _make_rank_functions():
    from ...autograd.function import Function

    class FromRanks(Function):
        """Each rank's tensor -> one global array, the ranks' blocks along dim 0; the
        gradient back is this rank's block."""

        @staticmethod
        def forward(ctx, x, sharding):
            ctx.sharding = sharding
            a = x._data
            dev = next(d for d in sharding.mesh.devices.flat
                       if d.process_index == jax.process_index())
            n = sharding.mesh.shape[sharding.spec[0]]
            shape = (a.shape[0] * n,) + tuple(a.shape[1:])
            return Tensor._make(jax.make_array_from_single_device_arrays(
                shape, sharding, [jax.device_put(a, dev)]))

        @staticmethod
        def backward(ctx, g):
            a = jax.device_put(g._data, ctx.sharding)
            return Tensor._make(jax.device_put(a.addressable_shards[0].data,
                                               jax.local_devices()[0])), None

    class ToRanks(Function):
        """A global array -> this rank's block of dim 0; the gradient back is the ranks'
        gradients joined and averaged (torch's FSDP reduce-scatters gradients with AVG)."""

        @staticmethod
        def forward(ctx, y, sharding):
            ctx.sharding = sharding
            ctx.shape = tuple(y.shape)
            a = jax.device_put(y._data, sharding)
            return Tensor._make(jax.device_put(a.addressable_shards[0].data,
                                               jax.local_devices()[0]))

        @staticmethod
        def backward(ctx, g):
            sh = ctx.sharding
            n = sh.mesh.shape[sh.spec[0]]
            dev = next(d for d in sh.mesh.devices.flat
                       if d.process_index == jax.process_index())
            a = jax.make_array_from_single_device_arrays(
                ctx.shape, sh, [jax.device_put(g._data, dev)])
            return Tensor._make(a / jax.numpy.asarray(n, a.dtype)), None

    return FromRanks, ToRanks


_RANK_FNS = []


def _rank_call_fn(mesh, dp):
    """Per-rank inputs joined into the global batch (on ``dp``), the outputs cut back to this
    rank's rows: the root module of a per-rank job (a module called with global arrays, inside
    another sharded module, passes them through)."""
    jm = mesh._jax_mesh
    sharding = NamedSharding(jm, P(dp))
    n = jm.shape[dp]

    def is_local(x):
        return (isinstance(x, Tensor) and not isinstance(x._data, jax.core.Tracer)
                and x._data.is_fully_addressable and x.ndim > 0)

    def fn(m, args):
        if not _RANK_FNS:
            _RANK_FNS.extend(_make_rank_functions())
        from_ranks, to_ranks = _RANK_FNS
        if not any(is_local(a) for a in args):
            return args, None
        args = tuple(from_ranks.apply(a, sharding) if is_local(a) else a for a in args)

        def post(out):
            if isinstance(out, Tensor):
                if out.ndim > 0 and out.shape[0] % n == 0:
                    return to_ranks.apply(out, sharding)
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
            _as_dtensor_param(q, mesh, true_shape(sub, name))
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


class FullyShardedDataParallel:
    """torch's first FSDP wrapper class. Libraries name it (``isinstance(module,
    FullyShardedDataParallel)``: nothing is one here); wrapping a module with it is refused:
    ``fully_shard`` (FSDP2) is torchlike's FSDP."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torchlike.distributed.fsdp.FullyShardedDataParallel (FSDP1) "
                                  "is not provided: use fully_shard(module, mesh=...) (FSDP2)")
