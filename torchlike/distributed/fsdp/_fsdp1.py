"""torch's first FSDP wrapper, ``FullyShardedDataParallel``, on ``fully_shard``.

``FullyShardedDataParallel(module, auto_wrap_policy=...)`` wraps the submodules the policy
picks (post-order, as torch's) and then ``module`` itself, each with ``fully_shard`` on a 1-D
mesh of every device: the parameters are sharded on dim 0 and (one device per process, as under
torchrun) each rank's batch goes in and its outputs come out, gradients averaged over the ranks.
The wrapped module is ``_fsdp_wrapped_module`` (``.module``); parameter names carry that prefix
as torch's ``use_orig_params=True`` names do, and state dicts drop it. ``state_dict_type``
picks full (optionally on rank 0 only) or sharded (DTensor) state dicts;
``summon_full_params`` lays the parameters out whole on every device for its duration;
``clip_grad_norm_`` clips by the norm over all ranks' shards. The parameters are the module's
own (torch without ``use_orig_params`` shows one flat parameter per unit instead).
"""
from __future__ import annotations

import contextlib
import enum
from collections import OrderedDict
from dataclasses import dataclass

import jax
from jax.sharding import NamedSharding, PartitionSpec as P

from ... import nn

__all__ = ["FullyShardedDataParallel", "ShardingStrategy", "StateDictType",
           "FullStateDictConfig", "ShardedStateDictConfig", "FullOptimStateDictConfig",
           "ShardedOptimStateDictConfig", "MixedPrecision", "CPUOffload", "BackwardPrefetch"]

_PREFIX = "_fsdp_wrapped_module."


class ShardingStrategy(enum.Enum):
    FULL_SHARD = enum.auto()
    SHARD_GRAD_OP = enum.auto()
    NO_SHARD = enum.auto()
    HYBRID_SHARD = enum.auto()
    _HYBRID_SHARD_ZERO2 = enum.auto()


class BackwardPrefetch(enum.Enum):
    BACKWARD_PRE = enum.auto()
    BACKWARD_POST = enum.auto()


class StateDictType(enum.Enum):
    FULL_STATE_DICT = enum.auto()
    LOCAL_STATE_DICT = enum.auto()
    SHARDED_STATE_DICT = enum.auto()


@dataclass
class StateDictConfig:
    offload_to_cpu: bool = False


@dataclass
class FullStateDictConfig(StateDictConfig):
    rank0_only: bool = False


@dataclass
class ShardedStateDictConfig(StateDictConfig):
    _use_dtensor: bool = False


@dataclass
class OptimStateDictConfig:
    offload_to_cpu: bool = True


@dataclass
class FullOptimStateDictConfig(OptimStateDictConfig):
    rank0_only: bool = False


@dataclass
class ShardedOptimStateDictConfig(OptimStateDictConfig):
    _use_dtensor: bool = False


@dataclass
class MixedPrecision:
    param_dtype: object = None
    reduce_dtype: object = None
    buffer_dtype: object = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True
    _module_classes_to_ignore: tuple = ()


@dataclass
class CPUOffload:
    offload_params: bool = False


def _clean(name):
    return name.replace(_PREFIX, "")


class FullyShardedDataParallel(nn.Module):
    """torch's FSDP1 wrapper over ``fully_shard`` (see the module docstring)."""

    def __init__(self, module, process_group=None, sharding_strategy=None, cpu_offload=None,
                 auto_wrap_policy=None, backward_prefetch=BackwardPrefetch.BACKWARD_PRE,
                 mixed_precision=None, ignored_modules=None, param_init_fn=None,
                 device_id=None, sync_module_states=False, forward_prefetch=False,
                 limit_all_gathers=True, use_orig_params=False, ignored_states=None,
                 device_mesh=None, _wrap=True):
        from . import MixedPrecisionPolicy, fully_shard
        from ..device_mesh import init_device_mesh
        super().__init__()
        if sharding_strategy in (ShardingStrategy.HYBRID_SHARD,
                                 ShardingStrategy._HYBRID_SHARD_ZERO2):
            raise NotImplementedError("FullyShardedDataParallel: HYBRID_SHARD (use fully_shard "
                                      "on a 2-D mesh)")
        if device_mesh is None:
            platform = jax.devices()[0].platform
            device_mesh = init_device_mesh({"gpu": "cuda"}.get(platform, platform),
                                           (len(jax.devices()),))
        if auto_wrap_policy is not None and _wrap:
            self._auto_wrap(module, auto_wrap_policy, dict(
                sharding_strategy=sharding_strategy, mixed_precision=mixed_precision,
                use_orig_params=use_orig_params, device_mesh=device_mesh))
        mp = None
        if mixed_precision is not None and mixed_precision.param_dtype is not None:
            mp = MixedPrecisionPolicy(param_dtype=mixed_precision.param_dtype,
                                      reduce_dtype=mixed_precision.reduce_dtype)
        ignored = [p for m in (ignored_modules or ()) for p in m.parameters()]
        self._fsdp_wrapped_module = fully_shard(module, mesh=device_mesh, mp_policy=mp,
                                                ignored_params=ignored)
        self._tl_sd = (StateDictType.FULL_STATE_DICT, FullStateDictConfig())
        self._tl_mesh = device_mesh

    @staticmethod
    def _auto_wrap(root, policy, kwargs):
        def visit(m):
            for name, child in list(m.named_children()):
                if isinstance(child, FullyShardedDataParallel):
                    continue
                if policy(module=child, recurse=True, nonwrapped_numel=_numel(child)):
                    visit(child)
                if policy(module=child, recurse=False, nonwrapped_numel=_numel(child)):
                    setattr(m, name, FullyShardedDataParallel(child, _wrap=False, **kwargs))
        visit(root)

    @property
    def module(self):
        return self._fsdp_wrapped_module

    def forward(self, *args, **kwargs):
        return self._fsdp_wrapped_module(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_fsdp_wrapped_module"], name)

    # ---- state dicts
    @staticmethod
    def set_state_dict_type(module, state_dict_type, state_dict_config=None,
                            optim_state_dict_config=None):
        config = state_dict_config or (FullStateDictConfig()
                                       if state_dict_type == StateDictType.FULL_STATE_DICT
                                       else ShardedStateDictConfig())
        if state_dict_type == StateDictType.LOCAL_STATE_DICT:
            raise NotImplementedError("FullyShardedDataParallel: LOCAL_STATE_DICT (flat "
                                      "parameters' shards); use SHARDED_STATE_DICT")
        previous = None
        for m in module.modules():
            if isinstance(m, FullyShardedDataParallel):
                previous = previous or m._tl_sd
                m._tl_sd = (state_dict_type, config)
        return previous

    @staticmethod
    @contextlib.contextmanager
    def state_dict_type(module, state_dict_type, state_dict_config=None,
                        optim_state_dict_config=None):
        saved = {m: m._tl_sd for m in module.modules()
                 if isinstance(m, FullyShardedDataParallel)}
        FullyShardedDataParallel.set_state_dict_type(module, state_dict_type, state_dict_config)
        try:
            yield
        finally:
            for m, v in saved.items():
                m._tl_sd = v

    def state_dict(self, *args, **kwargs):
        from ..checkpoint.state_dict import _full
        from ..._tensor import Tensor
        sd = super().state_dict(*args, **kwargs)
        kind, config = self._tl_sd
        out = OrderedDict((_clean(k), v) for k, v in sd.items())
        if kind == StateDictType.FULL_STATE_DICT:
            full = OrderedDict((k, _full(v) if isinstance(v, Tensor) else v)
                               for k, v in out.items())
            if getattr(config, "rank0_only", False) and jax.process_index() != 0:
                return OrderedDict()
            return full
        return out

    def load_state_dict(self, state_dict, strict=True, assign=False):
        names = {_clean(k): k for k in super().state_dict()}
        return super().load_state_dict({names.get(k, k): v for k, v in state_dict.items()},
                                       strict=strict, assign=assign)

    @staticmethod
    def optim_state_dict(model, optim, optim_state_dict=None, group=None):
        from ..checkpoint.state_dict import StateDictOptions, get_optimizer_state_dict
        kind = next((m._tl_sd[0] for m in model.modules()
                     if isinstance(m, FullyShardedDataParallel)), None)
        return get_optimizer_state_dict(model, optim, options=StateDictOptions(
            full_state_dict=kind == StateDictType.FULL_STATE_DICT))

    @staticmethod
    def optim_state_dict_to_load(model, optim, optim_state_dict, is_named_optimizer=False,
                                 load_directly=False, group=None):
        """Loads ``optim_state_dict`` (FQN-keyed) into ``optim`` and returns ``optim``'s state
        dict (what ``optim.load_state_dict`` takes)."""
        from ..checkpoint.state_dict import set_optimizer_state_dict
        set_optimizer_state_dict(model, optim, optim_state_dict)
        return None if load_directly else optim.state_dict()

    # ---- whole parameters
    @staticmethod
    @contextlib.contextmanager
    def summon_full_params(module, recurse=True, writeback=True, rank0_only=False,
                           offload_to_cpu=False, with_grads=False):
        """The parameters laid out whole on every device (readable on every rank) for the
        duration; their values then go back to their shards."""
        saved = []
        for p in module.parameters():
            s = getattr(p._data, "sharding", None)
            if isinstance(s, NamedSharding) and not s.is_fully_replicated:
                saved.append((p, s))
                p._set_data(jax.device_put(p._data, NamedSharding(s.mesh, P())))
        try:
            yield
        finally:
            for p, s in saved:
                p._set_data(jax.device_put(p._data, s))

    def clip_grad_norm_(self, max_norm, norm_type=2.0):
        """Scale the gradients so that their norm over all ranks' shards is at most
        ``max_norm``; returns that total norm (before clipping)."""
        return clip_sharded_grad_norm_(self.parameters(), max_norm, norm_type)

    @staticmethod
    def fsdp_modules(module, root_only=False):
        mods = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        return mods[:1] if root_only else mods


def _numel(m):
    return sum(p.numel() for p in m.parameters()
               if not getattr(p, "_fsdp_sharded", False))


def clip_sharded_grad_norm_(parameters, max_norm, norm_type=2.0):
    """``nn.utils.clip_grad_norm_`` over gradients that may span processes: the norm over all
    of their elements (each rank's shards), the gradients scaled in place by
    ``min(1, max_norm / (norm + 1e-6))``; returns the norm, a tensor on this process."""
    import jax.numpy as jnp
    from ..._tensor import Tensor
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return Tensor._make(jnp.zeros((), jnp.float32))
    norm_type = float(norm_type)
    parts = [jnp.abs(g._data).astype(jnp.float32) for g in grads]
    if norm_type == float("inf"):
        total = jnp.max(jnp.stack([jnp.max(a) for a in parts]))
    else:
        total = sum(jnp.sum(a ** norm_type) for a in parts) ** (1.0 / norm_type)
    coef = jnp.minimum(max_norm / (total + 1e-6), 1.0)
    for g in grads:
        g._set_data((g._data * coef).astype(g._data.dtype))
    a = total
    if not a.is_fully_addressable:
        a = jax.device_put(a, NamedSharding(a.sharding.mesh, P()))
    return Tensor._make(jax.device_put(a.addressable_shards[0].data, jax.local_devices()[0]))
