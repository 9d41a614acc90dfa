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

from .._shim import add_input_fn, place_padded, shim
from ..device_mesh import init_device_mesh
from ..tensor._api import canonical_spec

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


class FSDPModule:
    """Mixed into a module's class by ``fully_shard`` (torch's ``FSDP<Class>``)."""

    def reshard(self):
        """Parameters stay sharded between programs: nothing to free."""

    def unshard(self, async_op=False):
        """jax gathers parameters inside each program: nothing to do ahead."""

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


def _shard_inputs(mesh, dp):
    from ..tensor.parallel import _to_mesh
    from ..tensor.placement_types import Shard

    def fn(m, args):
        return tuple(_to_mesh(a, mesh[dp], Shard(0)) for a in args)
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
            object.__setattr__(sub._parameters[name], "_fsdp_sharded", True)
    if not isinstance(module, FSDPModule):
        shim(module, (FSDPModule,), "FSDP")
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
