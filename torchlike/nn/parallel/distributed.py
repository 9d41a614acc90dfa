"""DistributedDataParallel (torch.nn.parallel.distributed), one process per rank.

What torch's DDP does, on torchlike's collectives (``torchlike.distributed``):

* construction broadcasts every parameter and buffer from rank 0 (one program for all);
* gradients are grouped into buckets (torch's assignment: parameters in reverse order, a first
  bucket of 1 MiB, then ``bucket_cap_mb``, one dtype per bucket); when every gradient of a
  bucket has been accumulated (a post-accumulate-grad hook on each parameter) the bucket is
  averaged across ranks by one jitted collective -- buckets in index order on every rank, as
  torch's reducer launches them -- and written back into ``.grad``;
* ``no_sync()`` skips the reduction (gradients accumulate locally; the next synchronised
  backward averages the sum);
* ``find_unused_parameters=True`` walks the autograd graph from the forward's outputs and marks
  unreached parameters ready at once (their bucket slot holds zeros); a parameter no rank used
  keeps ``grad`` None. Without it, a parameter that got no gradient leaves its bucket
  unreduced and the next forward raises torch's error;
* ``broadcast_buffers=True`` re-broadcasts buffers from rank 0 before every forward.

``state_dict()`` keys carry the ``module.`` prefix, as in torch.
"""
from __future__ import annotations

import contextlib

import jax.numpy as jnp

from ..._tensor import Tensor
from ...autograd import grad_mode as _gm
from ...distributed import distributed_c10d as c10d
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024
_DEFAULT_BUCKET_MB = 25

_UNUSED_ERR = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by \n"
    "making sure all `forward` function outputs participate in calculating loss. \n"
    "If you already have done the above, then the distributed data parallel module wasn't "
    "able to locate the output tensors in the return value of your module's `forward` "
    "function. Please include the loss function and the structure of the return value of "
    "`forward` of your module when reporting this issue (e.g. list, dict, iterable).\n"
    "Parameter indices which did not receive grad for rank {rank}: {idx}")


def _assign_buckets(params, cap_bytes):
    """torch's ``_compute_bucket_assignment_by_size``: parameter indices, reverse order,
    one dtype per bucket, first bucket 1 MiB."""
    buckets, open_ = [], {}
    limits = [_FIRST_BUCKET_BYTES, cap_bytes]
    for i in reversed(range(len(params))):
        p = params[i]
        key = p.dtype
        b = open_.setdefault(key, {"idx": [], "bytes": 0, "limit": 0})
        b["idx"].append(i)
        b["bytes"] += p.numel() * p.element_size()
        if b["bytes"] >= limits[min(b["limit"], 1)]:
            buckets.append(b["idx"])
            del open_[key]
            # the next bucket of this dtype gets the full cap
            open_[key] = {"idx": [], "bytes": 0, "limit": b["limit"] + 1}
    for b in open_.values():
        if b["idx"]:
            buckets.append(b["idx"])
    return buckets


def _graph_params(outputs):
    """ids of the leaf tensors reachable from ``outputs``' autograd graph."""
    from ...autograd.graph import AccumulateGrad
    stack, seen, found = [], set(), set()

    def visit(o):
        if isinstance(o, Tensor):
            if o.grad_fn is not None:
                stack.append(o.grad_fn)
            elif o.requires_grad:
                found.add(id(o))
        elif isinstance(o, (list, tuple)):
            for v in o:
                visit(v)
        elif isinstance(o, dict):
            for v in o.values():
                visit(v)
    visit(outputs)
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        if isinstance(n, AccumulateGrad):
            v = n.variable
            if v is not None:
                found.add(id(v))
            continue
        for nxt, _ in n.next_functions:
            if nxt is not None:
                stack.append(nxt)
    return found


class DistributedDataParallel(Module):
    """Data parallelism across the ranks of a process group (see the module docstring).

    >>> model = DistributedDataParallel(nn.Linear(4, 2))   # after init_process_group
    >>> model(x).sum().backward()                          # .grad is the ranks' mean
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 delay_all_reduce_named_params=None, param_to_hook_all_reduce=None,
                 mixed_precision=None, device_mesh=None, skip_all_reduce_unused_params=False):
        super().__init__()
        if device_mesh is not None:
            raise NotImplementedError("DistributedDataParallel(device_mesh=...): use "
                                      "process_group (a DeviceMesh is the global view)")
        pg = c10d._group(process_group)
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self.module = module
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.bucket_bytes_cap = int((bucket_cap_mb or _DEFAULT_BUCKET_MB) * 1024 * 1024)
        object.__setattr__(self, "process_group", pg)
        object.__setattr__(self, "_params", params)
        if init_sync and pg.size() > 1:
            c10d._coalesced_broadcast(list(module.parameters()) + list(module.buffers()), 0, pg)
        buckets = _assign_buckets(params, self.bucket_bytes_cap)
        object.__setattr__(self, "_buckets", buckets)
        self._bucket_of = {}
        for b, idx in enumerate(buckets):
            for i in idx:
                self._bucket_of[id(params[i])] = b
        self._index_of = {id(p): i for i, p in enumerate(params)}
        self._pending = None         # per bucket: param indices not yet ready
        self._unused = set()         # param indices this rank did not use (find_unused)
        self._next_bucket = 0
        self._started = False
        self._handles = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in params]

    # ---------------------------------------------------------------- forward
    def forward(self, *inputs, **kwargs):
        if self._pending is not None and self._started:
            missing = sorted(i for s in self._pending for i in s)
            self._pending = None
            raise RuntimeError(_UNUSED_ERR.format(rank=self.process_group.rank(),
                                                  idx=" ".join(map(str, missing))))
        if (self.require_forward_param_sync and self.broadcast_buffers
                and self.process_group.size() > 1):
            bufs = list(self.module.buffers())
            if bufs:
                c10d._coalesced_broadcast(bufs, 0, self.process_group)
        out = self.module(*inputs, **kwargs)
        if _gm.is_grad_enabled() and self.require_backward_grad_sync:
            self._prepare_for_backward(out)
        else:
            self._pending = None
        return out

    def _prepare_for_backward(self, out):
        self._started = False        # a gradient of this iteration arrived
        self._pending = [set(idx) for idx in self._buckets]
        self._ready = [False] * len(self._buckets)
        self._next_bucket = 0
        self._unused = set()
        if self.find_unused_parameters:
            reached = _graph_params(out)
            for i, p in enumerate(self._params):
                if id(p) not in reached:
                    self._unused.add(i)
                    self._mark(i)

    # ---------------------------------------------------------------- backward
    def _grad_ready(self, p):
        if self._pending is None or not self.require_backward_grad_sync:
            return
        self._started = True
        self._mark(self._index_of[id(p)])
        self._launch_ready()

    def _mark(self, i):
        b = self._bucket_of[id(self._params[i])]
        self._pending[b].discard(i)
        if not self._pending[b]:
            self._ready[b] = True

    def _launch_ready(self):
        # buckets go out in index order on every rank, whatever order they became ready in
        while self._next_bucket < len(self._buckets) and self._ready[self._next_bucket]:
            self._reduce_bucket(self._next_bucket)
            self._next_bucket += 1
        if self._next_bucket == len(self._buckets):
            self._pending = None

    def _reduce_bucket(self, b):
        idx = self._buckets[b]
        ps = [self._params[i] for i in idx]
        arrays = []
        for i, p in zip(idx, ps):
            if p.grad is None or i in self._unused:
                arrays.append(jnp.zeros(tuple(p.shape), p._d.dtype))
            else:
                arrays.append(p.grad._data)
        if self.find_unused_parameters:
            arrays.append(jnp.asarray([0 if i in self._unused else 1 for i in idx], jnp.int32))
        out = c10d._run("mean_prescaled", self.process_group, arrays, what="ALLREDUCE")
        used = [1] * len(idx)
        if self.find_unused_parameters:
            used = out[-1].tolist()
        for p, y, u in zip(ps, out, used):
            if not u:
                continue                     # no rank used it: grad stays as it was
            if p.grad is None:
                p.grad = Tensor._make(y.reshape(tuple(p.shape)))
            else:
                c10d._write(p.grad, y)

    # ---------------------------------------------------------------- API
    @contextlib.contextmanager
    def no_sync(self):
        """Gradients accumulate locally inside the context; the first backward after it
        averages the accumulated sum."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        raise NotImplementedError("DistributedDataParallel.join (uneven inputs): every rank must "
                                  "run the same number of steps in torchlike")

    def register_comm_hook(self, state, hook):
        raise NotImplementedError("DistributedDataParallel.register_comm_hook: torchlike "
                                  "averages each bucket with one jitted all-reduce")

    def _set_static_graph(self):
        self.static_graph = True

    def __getstate__(self):
        raise RuntimeError("DistributedDataParallel is not picklable: pickle .module")
