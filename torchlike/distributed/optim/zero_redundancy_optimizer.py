"""``ZeroRedundancyOptimizer``: ZeRO's first stage over a process group, as torch's.

Each rank keeps the optimizer state of, and updates, its partition of the parameters: each
parameter group's parameters, largest first, each to the rank holding the fewest elements so
far (torch's assignment, so a checkpoint's state indices and a rank's share are torch's). After
the local step every parameter is broadcast from the rank that updated it."""
from __future__ import annotations

import copy
from itertools import chain

from ..._tensor import Tensor
from ...optim.optimizer import Optimizer
from ... import distributed as dist

__all__ = ["ZeroRedundancyOptimizer"]


def _typename(t):
    from ... import typename
    return typename(t)


class ZeroRedundancyOptimizer(Optimizer):
    """``optimizer_class`` over this rank's partition of ``params`` (``self.optim``); ``step``
    updates it and then syncs every parameter from its owner. ``parameters_as_bucket_view``
    is accepted (each parameter is broadcast on its own: the values are the same);
    ``overlap_with_ddp=True`` raises ``NotImplementedError``."""

    def __init__(self, params, optimizer_class, process_group=None,
                 parameters_as_bucket_view=False, overlap_with_ddp=False, **defaults):
        if overlap_with_ddp:
            raise NotImplementedError(
                "ZeroRedundancyOptimizer(overlap_with_ddp=True): torchlike's "
                "DistributedDataParallel runs no optimizer step from its communication hook; "
                "use overlap_with_ddp=False")
        params = self._verify_and_init_params(params)
        self._verify_same_dense_param_type()
        self.initialized = False
        self._partition_cache = []
        self._param_to_rank_cache = {}
        self._param_to_index_cache = {}
        self._index_to_param_cache = []
        Optimizer.__init__(self, params, defaults)
        self._default_device = self._all_params[0].device
        self.process_group = process_group if process_group is not None else dist.group.WORLD
        self.world_size = dist.get_world_size(self.process_group)
        self.rank = dist.get_rank(self.process_group)
        self.global_rank = dist.get_global_rank(self.process_group, self.rank)
        self._overlap_with_ddp = False
        self._optim_defaults = defaults
        self._optim_constructor = optimizer_class
        # (a list of groups, each possibly empty: a rank that owns no parameter still has one)
        self.optim = optimizer_class(self._partition_parameters()[self.rank], **defaults)
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._all_state_dicts = []
        self.initialized = True

    # ------------------------------------------------------------ checks
    def _verify_and_init_params(self, params):
        if isinstance(params, Tensor):
            raise TypeError("`params` argument should be an iterable of Tensors, but got "
                            + _typename(params))
        try:
            all_params = list(params)
        except TypeError as e:
            raise TypeError("`params` argument should be an iterable of Tensors or dicts, but "
                            "got " + _typename(params)) from e
        if not all_params:
            raise ValueError("ZeroRedundancyOptimizer got an empty parameter list")
        if all(isinstance(p, Tensor) for p in all_params):
            self._all_params = all_params
        elif all(isinstance(p, dict) for p in all_params):
            self._all_params = []
            for group in all_params:
                if "params" not in group:
                    raise ValueError("Each parameter group passed-in via `params` must have a "
                                     "'params' key mapping to the parameters in the group")
                self._all_params.extend(group["params"])
        else:
            raise TypeError("`params` argument should be an iterable of Tensors or dicts")
        return all_params

    def _verify_same_dense_param_type(self):
        first = _typename(self._all_params[0])
        for p in self._all_params[1:]:
            other = _typename(p)
            if other != first:
                raise ValueError("ZeroRedundancyOptimizer only supports using the same dense "
                                 f"type for all parameters but got both {first} and {other}")

    # ------------------------------------------------------------ the partition
    def _clear_cache(self):
        self._partition_cache = []
        self._param_to_rank_cache = {}
        self._param_to_index_cache = {}
        self._index_to_param_cache = []

    def _partition_parameters(self):
        """Per rank, its parameter groups (each group's options, its share of the parameters)."""
        if not self._partition_cache:
            parts = [[] for _ in range(self.world_size)]
            sizes = [0] * self.world_size
            for group in self.param_groups:
                shares = [[] for _ in range(self.world_size)]
                for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
                    r = min(range(self.world_size), key=lambda i: (sizes[i], i))
                    shares[r].append(p)
                    sizes[r] += p.numel()
                for r, share in enumerate(shares):
                    g = copy.copy(group)
                    g["params"] = share
                    parts[r].append(g)
            self._partition_cache = parts
        return self._partition_cache

    @property
    def _param_to_rank(self):
        if not self._param_to_rank_cache:
            for r, groups in enumerate(self._partition_parameters()):
                for g in groups:
                    for p in g["params"]:
                        self._param_to_rank_cache[p] = r
        return self._param_to_rank_cache

    @property
    def _param_to_index(self):
        if not self._param_to_index_cache:
            self._param_to_index_cache = {
                p: i for i, p in enumerate(chain.from_iterable(
                    g["params"] for g in self.param_groups))}
        return self._param_to_index_cache

    @property
    def _index_to_param(self):
        if not self._index_to_param_cache:
            self._index_to_param_cache = list(chain.from_iterable(
                g["params"] for g in self.param_groups))
        return self._index_to_param_cache

    def add_param_group(self, param_group):
        """Add a group to every rank's partition (call it on all ranks)."""
        super().add_param_group(param_group)
        if self.initialized:
            self._clear_cache()
            groups = self._partition_parameters()[self.rank]
            if len(groups) == len(self.optim.param_groups) + 1:
                self.optim.add_param_group(groups[-1])

    @staticmethod
    def _sync_param_groups(src, dst):
        if len(src) != len(dst):
            raise AssertionError("Mismatch between number of source and destination parameter "
                                 "groups")
        for s, d in zip(src, dst):
            for k, v in s.items():
                if k != "params":
                    d[k] = v

    # ------------------------------------------------------------ the step
    def _local_step(self, closure=None, **kwargs):
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        loss = (self.optim.step(**kwargs) if closure is None
                else self.optim.step(closure=closure, **kwargs))
        self._sync_param_groups(self.optim.param_groups, self.param_groups)
        return loss

    def _sync_params(self):
        for r, groups in enumerate(self._partition_parameters()):
            src = dist.get_global_rank(self.process_group, r)
            for g in groups:
                for p in g["params"]:
                    dist.broadcast(p.data, src=src, group=self.process_group)

    def step(self, closure=None, **kwargs):
        """This rank's update of its partition, then every parameter from its owner."""
        loss = self._local_step(closure=closure, **kwargs)
        self._sync_params()
        return loss

    # ------------------------------------------------------------ state dicts
    def consolidate_state_dict(self, to=0):
        """Gather every rank's local optimizer state on rank ``to`` (call it on all ranks)."""
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
        local = self.optim.state_dict()
        got = [None] * self.world_size if self.rank == to else None
        dist.gather_object(local, got, dst=dist.get_global_rank(self.process_group, to),
                           group=self.process_group)
        self._all_state_dicts = got if self.rank == to else []

    def state_dict(self):
        """The whole optimizer's state, as one optimizer's over all the parameters (on the rank
        that ``consolidate_state_dict`` gathered it to)."""
        if not self._all_state_dicts:
            raise RuntimeError(
                "Optimizer state has not been consolidated on this rank. Please call "
                f"`consolidate_state_dict(to={self.rank})` on all ranks beforehand if you "
                "meant to save the global state.")
        sd = super().state_dict()
        for r, local in enumerate(self._all_state_dicts):
            for lg, gg in zip(local["param_groups"], self._partition_parameters()[r]):
                for li, p in zip(lg["params"], gg["params"]):
                    if li in local["state"]:
                        sd["state"][self._param_to_index[p]] = local["state"][li]
        sd["state"] = dict(sorted(sd["state"].items()))
        return sd

    def load_state_dict(self, state_dict):
        """Load a ``state_dict()``: each rank keeps the state of its own partition."""
        for index, value in state_dict["state"].items():
            p = self._index_to_param[index]
            if self._param_to_rank[p] != self.rank:
                state_dict["state"][index] = None
            else:
                self.optim.state[p] = {
                    k: (v.clone() if isinstance(v, Tensor) else copy.deepcopy(v))
                    for k, v in value.items()}
        super().load_state_dict(state_dict)
        self._sync_param_groups(state_dict["param_groups"], self.param_groups)
        self._sync_param_groups(self.param_groups, self.optim.param_groups)
