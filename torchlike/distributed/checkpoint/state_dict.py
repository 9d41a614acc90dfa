"""torch.distributed.checkpoint.state_dict: model and optimizer state dicts keyed by FQN.

``get_state_dict(model, optimizers)`` gives the model's ``state_dict()`` (torch's keys and
shapes: FSDP's and tensor parallelism's padded parameters come unpadded) and the optimizers'
state keyed by parameter names instead of indices (``{"state": {fqn: {...}},
"param_groups": [{..., "params": [fqn, ...]}]}``), as torch's. Tensors keep their layout on the
mesh (sharded, "sharded state dict") unless ``StateDictOptions(full_state_dict=True)``, which
gives whole tensors on one device. ``set_state_dict`` loads both back, padding and re-laying
out each value as its parameter is.
"""
from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from ..._tensor import Tensor
from .._shim import lay_out, true_shape
from ..tensor._api import DTensor

__all__ = ["StateDictOptions", "get_state_dict", "set_state_dict", "get_model_state_dict",
           "get_optimizer_state_dict", "set_model_state_dict", "set_optimizer_state_dict"]


@dataclasses.dataclass
class StateDictOptions:
    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _params(model):
    """{id(param): (fqn, module, name)} in ``named_parameters`` order."""
    out = {}
    for mname, sub in model.named_modules():
        for name, p in sub._parameters.items():
            if p is not None and id(p) not in out:
                fqn = ((mname + "." if mname else "") + name).replace("_fsdp_wrapped_module.", "")
                out[id(p)] = (fqn, sub, name)
    return out


def _unpad(t, shape):
    if tuple(t.shape) == tuple(shape):
        return t
    return Tensor._make(t._data[tuple(slice(0, n) for n in shape)])


def _full(t):
    a = t._data
    if len(a.sharding.device_set) > 1:
        if jax.process_count() > 1:
            from jax.experimental import multihost_utils
            a = multihost_utils.process_allgather(a, tiled=True)
        a = jax.device_put(a, jax.local_devices()[0])
    return Tensor._make(a)


def _options(options):
    return options or StateDictOptions()


def get_model_state_dict(model, *, submodules=None, options=None):
    opts = _options(options)
    sd = model.state_dict()
    if opts.ignore_frozen_params:
        frozen = {fqn for fqn, p in model.named_parameters() if not p.requires_grad}
        sd = {k: v for k, v in sd.items() if k not in frozen}
    if opts.full_state_dict:
        sd = {k: _full(v) if isinstance(v, Tensor) else v for k, v in sd.items()}
        if opts.cpu_offload and jax.process_index() != 0:
            return {}       # (torch's: only rank 0 holds a full state dict offloaded to CPU)
    return sd


def _init_optim_state(opt):
    """torch's: a step with zero gradients at lr 0 creates the optimizer's state (so a fresh
    optimizer's state dict has the tensors ``dcp.load`` reads into)."""
    if opt.state:
        return
    params = [p for g in opt.param_groups for p in g["params"]]
    if any(p.grad is not None for p in params):
        return
    from ... import zeros_like
    for p in params:
        if p.requires_grad:
            p.grad = zeros_like(p)
    lrs = []
    for g in opt.param_groups:
        if "lr" in g:
            lrs.append(g["lr"])
            g["lr"] = 0.0
    opt.step()
    for g in opt.param_groups:
        if "lr" in g:
            g["lr"] = lrs.pop(0)
    opt.zero_grad(set_to_none=True)


def get_optimizer_state_dict(model, optimizers, *, submodules=None, options=None):
    opts = _options(options)
    optimizers = optimizers if isinstance(optimizers, (list, tuple)) else [optimizers]
    for opt in optimizers:
        _init_optim_state(opt)
    info = _params(model)
    state, groups = {}, []
    for opt in optimizers:
        for g in opt.param_groups:
            fqns = []
            for p in g["params"]:
                fqn, sub, name = info[id(p)]
                fqns.append(fqn)
                st = opt.state.get(p)
                if not st:
                    continue
                shape = true_shape(sub, name)
                vals = {}
                for k, v in st.items():
                    if isinstance(v, Tensor) and v.ndim > 0:
                        v = _unpad(v, shape)
                        if opts.full_state_dict:
                            v = _full(v)
                        elif isinstance(p, DTensor) and type(v) is Tensor:
                            v = Tensor._make(v._data)   # (a DTensor as its parameter, torch's)
                            v.__class__ = DTensor
                            v._spec = p._get_spec()
                    vals[k] = v
                state[fqn] = vals
            groups.append({**{k: v for k, v in g.items() if k != "params"}, "params": fqns})
    if opts.full_state_dict and opts.cpu_offload and jax.process_index() != 0:
        return {}           # (torch's: only rank 0 holds a full state dict offloaded to CPU)
    return {"state": state, "param_groups": groups}


def get_state_dict(model, optimizers, *, submodules=None, options=None):
    """``(model_state_dict, optimizer_state_dict)`` keyed by FQN (see the module docstring)."""
    return (get_model_state_dict(model, options=options),
            get_optimizer_state_dict(model, optimizers, options=options))


def _like(value, p):
    """``value`` padded to parameter ``p``'s stored shape and laid out as ``p``."""
    a = value._data if isinstance(value, Tensor) else jnp.asarray(value)
    if tuple(a.shape) != tuple(p.shape):
        a = jnp.pad(a, [(0, m - n) for m, n in zip(p.shape, a.shape)])
    return Tensor._make(lay_out(a.astype(p._d.dtype), p._data.sharding))


def _from_rank0(model, model_state_dict):
    """Rank 0's full state dict on every rank (``broadcast_from_rank0``): the others' values
    are broadcast, shaped as the model's own entries."""
    import numpy as np
    from jax.experimental import multihost_utils
    src = jax.process_index() == 0
    out = {}
    for k, v in model.state_dict().items():
        if not isinstance(v, Tensor):
            out[k] = model_state_dict.get(k, v)
            continue
        mine = model_state_dict.get(k) if src else None
        x = (np.asarray(_full(mine)._data) if mine is not None
             else np.zeros(tuple(v.shape), np.dtype(v._data.dtype)))
        out[k] = Tensor._make(jnp.asarray(multihost_utils.broadcast_one_to_all(
            x, is_source=src)))
    return out


def set_model_state_dict(model, model_state_dict, *, options=None):
    opts = _options(options)
    if opts.broadcast_from_rank0 and jax.process_count() > 1:
        model_state_dict = _from_rank0(model, model_state_dict)
    return model.load_state_dict(model_state_dict, strict=opts.strict)


def set_optimizer_state_dict(model, optimizers, optim_state_dict, *, options=None):
    optimizers = optimizers if isinstance(optimizers, (list, tuple)) else [optimizers]
    info = _params(model)
    by_fqn = {fqn: (p_id, sub, name) for p_id, (fqn, sub, name) in info.items()}
    saved_groups = list(optim_state_dict["param_groups"])
    state = optim_state_dict["state"]
    for opt in optimizers:
        groups, saved = opt.param_groups, saved_groups[:len(opt.param_groups)]
        saved_groups = saved_groups[len(opt.param_groups):]
        packed_state, packed_groups, index = {}, [], 0
        for g, s in zip(groups, saved):
            ids = []
            for p in g["params"]:
                fqn = info[id(p)][0]
                if fqn in state:
                    packed_state[index] = {
                        k: _like(v, p) if isinstance(v, Tensor) and v.ndim > 0 else v
                        for k, v in state[fqn].items()}
                ids.append(index)
                index += 1
            packed_groups.append({**{k: v for k, v in s.items() if k != "params"},
                                  "params": ids})
        opt.load_state_dict({"state": packed_state, "param_groups": packed_groups})
    del by_fqn


def set_state_dict(model, optimizers, *, model_state_dict, optim_state_dict, options=None):
    """Load what ``get_state_dict`` gave (possibly read back by ``dcp.load``)."""
    r = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return r
