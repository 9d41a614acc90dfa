"""DistributedDataParallel (torch.nn.parallel.distributed), one process per rank.

What torch's DDP does, on torchlike's collectives (``torchlike.distributed``):

* construction broadcasts every parameter and buffer from rank 0 (one program for all);
* gradients are grouped into buckets as torch's reducer groups them: one bucket per dtype for
  the first iteration (with ``find_unused_parameters`` on a dynamic graph: a first bucket of
  1 MiB, then ``bucket_cap_mb``, in reverse), rebuilt once after the first synchronised
  backward in the order the gradients became ready. When every gradient of a bucket has been
  accumulated (a post-accumulate-grad hook on each parameter) the bucket is averaged across
  ranks by one jitted collective -- buckets in index order on every rank, as torch's reducer
  launches them -- and written back into ``.grad``; ``register_comm_hook`` replaces that
  average with a hook's (``GradBucket`` in, ``torch.futures.Future`` out);
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
import sys

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


def _assign_buckets(params, order, limits):
    """torch's ``_compute_bucket_assignment_by_size``: parameter indices taken in ``order``,
    one dtype per bucket, a bucket closing once it holds ``limits[k]`` bytes (its ``k``-th
    bucket of that dtype; the last limit repeats)."""
    buckets, open_ = [], {}
    for i in order:
        p = params[i]
        b = open_.setdefault(p.dtype, {"idx": [], "bytes": 0, "k": 0})
        b["idx"].append(i)
        b["bytes"] += p.numel() * p.element_size()
        if b["bytes"] >= limits[min(b["k"], len(limits) - 1)]:
            buckets.append(b["idx"])
            open_[p.dtype] = {"idx": [], "bytes": 0, "k": b["k"] + 1}
    buckets += [b["idx"] for b in open_.values() if b["idx"]]
    return buckets


def _initial_buckets(params, cap_bytes, static_graph, find_unused):
    """torch's first buckets: one per dtype holding every parameter in forward order (unless
    unused parameters are looked for on a dynamic graph: then a first bucket of 1 MiB and
    ``bucket_cap_mb`` after it), listed in reverse."""
    if static_graph or not find_unused:
        limits = [sys.maxsize]
    elif _FIRST_BUCKET_BYTES < cap_bytes:
        limits = [_FIRST_BUCKET_BYTES, cap_bytes]
    else:
        limits = [cap_bytes]
    buckets = _assign_buckets(params, range(len(params)), limits)
    buckets.sort(key=min)
    return list(reversed(buckets))


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
        self._index_of = {id(p): i for i, p in enumerate(params)}
        self._set_buckets(_initial_buckets(params, self.bucket_bytes_cap, static_graph,
                                           find_unused_parameters))
        # torch rebuilds the buckets once, after the first synchronised backward (the second
        # with static_graph), in the order the gradients became ready (not with
        # unused-parameter search on a dynamic graph)
        self._rebuilt = find_unused_parameters and not static_graph
        self._ready_order = []
        self._synced = 0             # backwards whose buckets all went out
        self._pending = None         # per bucket: param indices not yet ready
        self._unused = set()         # param indices this rank did not use (find_unused)
        self._next_bucket = 0
        self._started = False
        self._comm_hook = None
        self._comm_hook_state = None
        self._handles = [p.register_post_accumulate_grad_hook(self._grad_ready) for p in params]

    def _set_buckets(self, buckets):
        object.__setattr__(self, "_buckets", buckets)
        self._bucket_of = {}
        for b, idx in enumerate(buckets):
            for i in idx:
                self._bucket_of[id(self._params[i])] = b

    def _rebuild_buckets(self):
        """torch's bucket rebuild: parameters in the order their gradients became ready in
        the first synchronised backward (the rebuild follows the second with static_graph), a first bucket of ``min(1 MiB, cap)`` bytes, then
        ``bucket_cap_mb``."""
        if (self._rebuilt or len(self._ready_order) != len(self._params)
                or self._synced < (2 if self.static_graph else 1)):
            return
        self._rebuilt = True
        cap = self.bucket_bytes_cap
        self._set_buckets(_assign_buckets(self._params, self._ready_order,
                                          [min(_FIRST_BUCKET_BYTES, cap), cap]))

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
        if _gm.is_grad_enabled():
            self._rebuild_buckets()
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
        i = self._index_of[id(p)]
        if not self._rebuilt and i not in self._ready_order:
            self._ready_order.append(i)
        self._mark(i)
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
            self._synced += 1

    def _reduce_bucket(self, b):
        idx = self._buckets[b]
        ps = [self._params[i] for i in idx]
        arrays = []
        for i, p in zip(idx, ps):
            if p.grad is None or i in self._unused:
                arrays.append(jnp.zeros(tuple(p.shape), p._d.dtype))
            else:
                arrays.append(p.grad._data)
        if self._comm_hook is not None:
            return self._hooked_bucket(b, idx, ps, arrays)
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

    def _hooked_bucket(self, b, idx, ps, arrays):
        """The communication hook's reduction of bucket ``b``: its flat gradient in a
        ``GradBucket``, the hook's future's value written back into ``.grad``."""
        from ...distributed.algorithms.ddp_comm_hooks.default_hooks import GradBucket
        used = [1] * len(idx)
        if self.find_unused_parameters:
            (flags,) = c10d._run("all_reduce", self.process_group,
                                 [jnp.asarray([0 if i in self._unused else 1 for i in idx],
                                              jnp.int32)], c10d.RedOpType.SUM,
                                 what="ALLREDUCE")
            used = flags.tolist()
        flat = Tensor._make(jnp.concatenate([a.reshape(-1) for a in arrays]))
        bucket = GradBucket(b, flat, ps, b == len(self._buckets) - 1)
        out = self._comm_hook(self._comm_hook_state, bucket).wait()
        if not isinstance(out, Tensor):
            raise RuntimeError(f"The communication hook's future must hold a Tensor (the "
                               f"bucket's reduced buffer), got {type(out).__name__}")
        data = out._data.reshape(-1)
        off = 0
        for p, u in zip(ps, used):
            k = p.numel()
            y = data[off:off + k].reshape(tuple(p.shape)).astype(p._d.dtype)
            off += k
            if not u:
                continue
            if p.grad is None:
                p.grad = Tensor._make(y)
            else:
                c10d._write(p.grad, y)

    def register_comm_hook(self, state, hook):
        """Reduce each bucket with ``hook(state, bucket)`` (a ``GradBucket``; returns a
        ``torch.futures.Future`` of the reduced flat gradient) instead of the averaging
        all-reduce; ``torch.distributed.algorithms.ddp_comm_hooks.default_hooks`` has torch's
        default hooks."""
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be "
                               "called once.")
        if not callable(hook):
            raise TypeError("Communication hook must be callable.")
        self._comm_hook = hook
        self._comm_hook_state = state

    def _register_builtin_comm_hook(self, comm_hook_type):
        raise NotImplementedError("DistributedDataParallel._register_builtin_comm_hook: "
                                  "register the Python hook (default_hooks.allreduce_hook or "
                                  "fp16_compress_hook) with register_comm_hook")

    def _set_static_graph(self):
        self.static_graph = True

    def __getstate__(self):
        raise RuntimeError("DistributedDataParallel is not picklable: pickle .module")
