"""torch.distributed's process groups and eager collectives, on jax's multi-process engine.

One process per rank (the per-rank view). The ranks joined ``jax.distributed`` when torchlike
was imported (``torchlike/_distributed_env.py``: the launcher and ``multiprocessing.spawn`` put
the job's shape in the environment); ``init_process_group`` checks it and names the world.

A collective over a group of ``n`` ranks builds one global ``jax.Array`` whose rows are the
ranks' local tensors (``jax.make_array_from_single_device_arrays``, sharded ``P("rank")`` over
a 1-D mesh holding one device per rank), runs one cached, jitted ``shard_map`` program with
jax's collective (``psum``, ``pmax``, ``all_gather``, ``psum_scatter``, ``all_to_all``), and
writes this rank's block of the result into the tensor in place, as torch does. On CPU the
processes talk over gloo, on GPU over NCCL, on TPU over ICI: whatever jax's backend uses.

Every collective blocks until its result is ready and is watched: one that runs longer than the
group's ``timeout`` (a rank that never called it) takes the process down with a message naming
the collective, as torch's watchdog does; a blocked XLA collective cannot be cancelled.
"""
from __future__ import annotations

import datetime
import enum
import functools
import os
import pickle
import sys
import threading
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec as P

from .. import _distributed_env

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group",
           "get_rank", "get_world_size", "get_backend", "barrier", "all_reduce", "reduce",
           "broadcast", "all_gather", "all_gather_single", "all_gather_into_tensor", "gather",
           "scatter", "reduce_scatter", "reduce_scatter_single", "reduce_scatter_tensor",
           "all_to_all", "all_to_all_single",
           "all_gather_object", "broadcast_object_list", "gather_object", "scatter_object_list",
           "new_group", "new_subgroups", "new_subgroups_by_enumeration", "ReduceOp",
           "Backend", "group", "GroupMember", "is_nccl_available",
           "is_gloo_available", "is_mpi_available", "is_ucc_available", "is_xccl_available",
           "default_pg_timeout", "is_torchelastic_launched",
           "get_node_local_rank", "monitored_barrier", "ProcessGroup", "get_global_rank",
           "get_group_rank", "get_process_group_ranks", "send", "recv", "isend", "irecv",
           "batch_isend_irecv", "P2POp", "Work", "is_backend_available",
           "get_default_backend_for_device", "DistBackendError", "DistError"]

_NOT_INIT = ("Default process group has not been initialized, please make sure to call "
             "init_process_group.")
_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)
default_pg_timeout = _DEFAULT_TIMEOUT       # (torch's name for it)


class DistError(RuntimeError):
    pass


class DistBackendError(DistError):
    pass


class RedOpType(enum.Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


class ReduceOp:
    """torch.distributed.ReduceOp: ``ReduceOp.SUM`` ... are ``ReduceOp.RedOpType`` members."""
    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM


class Backend(str):
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"
    UCC = "ucc"

    def __new__(cls, name):
        return str.__new__(cls, name.lower())


# ============================================================================ process groups

class ProcessGroup:
    """A group of ranks: ``ranks`` are global ranks, in group-rank order."""

    def __init__(self, backend, ranks, timeout):
        self._backend = str(backend)
        self._ranks = list(ranks)
        self._timeout = timeout
        self._meshes = {}

    def rank(self):
        r = _state.rank
        return self._ranks.index(r) if r in self._ranks else -1

    def size(self):
        return len(self._ranks)

    def name(self):
        return self._backend

    def __repr__(self):
        return f"ProcessGroup(backend={self._backend!r}, ranks={self._ranks})"

    def _mesh(self, platform):
        """A 1-D mesh ``("rank",)`` holding each member rank's first device of ``platform``."""
        m = self._meshes.get(platform)
        if m is None:
            devs = {}
            for d in jax.devices(platform):
                devs.setdefault(d.process_index, d)
            m = self._meshes[platform] = jax.sharding.Mesh(
                np.array([devs[r] for r in self._ranks]), ("rank",))
        return m


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = object()


group = GroupMember


class Work:
    """A finished collective: every collective here completes before it returns. ``result()``
    and ``get_future().value()`` are the collective's output tensors (a list), as in torch."""

    def __init__(self, result=None):
        self._result = [] if result is None else result

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True

    def is_success(self):
        return True

    def exception(self):
        return None

    def source_rank(self):
        raise ValueError("Work.source_rank: only a recv from any source has one")

    def synchronize(self):
        pass

    def block_current_stream(self):
        pass

    def result(self):
        return self._result

    def get_future(self):
        from ..futures import Future
        return Future._completed(self._result)


class _State:
    def __init__(self):
        self.world = None
        self.rank = 0
        self.seq = 0


_state = _State()


def is_available():
    return True


def is_initialized():
    return _state.world is not None


def is_nccl_available():
    return bool(jax.local_devices(backend="gpu")) if _has_platform("gpu") else False


def _has_platform(p):
    try:
        jax.local_devices(backend=p)
        return True
    except RuntimeError:
        return False


def is_gloo_available():
    return True


def is_mpi_available():
    return False


def is_ucc_available():
    return False


def is_xccl_available():
    return False


def is_backend_available(backend):
    return backend.lower() in ("gloo", "nccl")


def get_default_backend_for_device(device):
    t = device if isinstance(device, str) else device.type
    return "nccl" if t.split(":")[0] == "cuda" else "gloo"


def is_torchelastic_launched():
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_node_local_rank(fallback_rank=None):
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank "
                       "to allow `get_node_local_rank` to work, assuming you are not running "
                       "in a multi-device context and want the code to run locally instead.")


def _env(name):
    v = os.environ.get(name)
    if v is None:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: "
                         f"environment variable {name} expected, but not set")
    return v


def _parse_tcp(init_method):
    from urllib.parse import parse_qs, urlparse
    u = urlparse(init_method)
    q = {k: v[0] for k, v in parse_qs(u.query).items()}
    return q


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Name the world this process belongs to (torch's arguments and rendezvous rules).

    A world of more than one process is the jax job this process joined at import (started by
    ``python -m torchlike.distributed.run`` or ``torchlike.multiprocessing.spawn``); its rank
    and size must equal the ones given or read from ``env://`` / ``tcp://...?rank=&world_size=``.
    """
    if _state.world is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is None and (init_method is None or init_method.startswith("env://")):
        if rank == -1:
            rank = int(_env("RANK"))
        if world_size == -1:
            world_size = int(_env("WORLD_SIZE"))
        _env("MASTER_ADDR")
        _env("MASTER_PORT")
    elif init_method is not None and init_method.startswith("tcp://"):
        q = _parse_tcp(init_method)
        rank = int(q.get("rank", rank))
        world_size = int(q.get("world_size", world_size))
        if rank == -1 or world_size == -1:
            raise ValueError("Error initializing torch.distributed using tcp:// rendezvous: "
                             "rank and world_size parameters must be given")
    elif init_method is not None and init_method.startswith("file://"):
        if rank == -1 or world_size == -1:
            raise ValueError("Error initializing torch.distributed using file:// rendezvous: "
                             "rank and world_size parameters must be given")
    if world_size == -1:
        world_size = 1
    if rank == -1:
        rank = 0
    backend = Backend(backend or "gloo")
    if backend not in ("gloo", "nccl", "cpu:gloo,cuda:nccl", "undefined"):
        raise ValueError(f"Invalid backend: '{backend}'")
    joined = _distributed_env.joined()
    if joined is not None:
        if (world_size, rank) != joined:
            raise ValueError(
                f"init_process_group(world_size={world_size}, rank={rank}) does not match the "
                f"job this process joined at import (world_size={joined[0]}, rank={joined[1]}, "
                f"set by the launcher's TORCHLIKE_JAX_NUM_PROCESSES/TORCHLIKE_JAX_PROCESS_ID)")
    elif world_size != 1 or rank != 0:
        raise RuntimeError(
            f"init_process_group(world_size={world_size}, rank={rank}): this process did not "
            f"join a jax.distributed job, and it can no longer: jax's backends started when "
            f"torchlike was imported, and jax.distributed.initialize must run before any device "
            f"is used. Start the ranks with `python -m torchlike.distributed.run "
            f"--nproc-per-node {world_size} script.py` or torchlike.multiprocessing.spawn, "
            f"which make each rank join the job as torchlike is imported.")
    if joined is not None:
        _default_sigterm()
        _exit_on_uncaught_exception()
    _state.rank = rank
    _state.world = ProcessGroup(str(backend), range(world_size),
                                timeout if timeout is not None else _DEFAULT_TIMEOUT)
    GroupMember.WORLD = _state.world


def _default_sigterm():
    """SIGTERM ends a rank, as under torch: jax.distributed's preemption notifier installs a
    C handler that only records it (Python still reports SIG_DFL), so a launcher (or spawn)
    ending the ranks of a failed job would have to wait for SIGKILL. A handler set from Python
    is left alone."""
    import signal
    if (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGTERM) in (None, signal.SIG_DFL)):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _exit_on_uncaught_exception():
    """A rank that dies of an exception exits at once, as under torch: Python's normal exit
    would run jax.distributed's shutdown, which waits for every rank -- and the others may be
    blocked in a collective with this one. The launcher then ends the job."""
    hook = sys.excepthook
    if getattr(hook, "_torchlike_exit", False):
        return

    def excepthook(*args):
        try:
            hook(*args)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(1)
    excepthook._torchlike_exit = True
    sys.excepthook = excepthook


def destroy_process_group(group=None):
    if _state.world is None:
        raise AssertionError("Process group cannot be None")
    if group is None or group is _state.world:
        _state.world = None
        GroupMember.WORLD = None


def _group(g):
    if _state.world is None:
        raise ValueError(_NOT_INIT)
    return _state.world if g is None else g


def get_rank(group=None):
    g = _group(group)
    if g is GroupMember.NON_GROUP_MEMBER:
        return -1
    return g.rank()


def get_world_size(group=None):
    g = _group(group)
    if g is GroupMember.NON_GROUP_MEMBER:
        return -1
    return g.size()


def get_backend(group=None):
    return _group(group).name()


def get_global_rank(group, group_rank):
    g = _group(group)
    if not 0 <= group_rank < g.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {g}")
    return g._ranks[group_rank]


def get_group_rank(group, global_rank):
    g = _group(group)
    if global_rank not in g._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {g}")
    return g._ranks.index(global_rank)


def get_process_group_ranks(group):
    return list(_group(group)._ranks)


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None):
    """A group of ``ranks`` (every rank calls it, as in torch); non-members get
    ``GroupMember.NON_GROUP_MEMBER``."""
    world = _group(None)
    n = world.size()
    if ranks is not None:
        ranks = list(ranks)
        if len(set(ranks)) != len(ranks):
            raise ValueError(f"ranks list must not contain duplicate entries, got {ranks}")
        if len(ranks) > n:
            raise ValueError("the new group's world size should be less or equal to the "
                             "world size set by init_process_group")
        for r in ranks:
            if r < 0 or r >= n:
                raise ValueError(f"Rank {r} is out of range. Valid ranks are 0 to {n - 1} "
                                 f"(world_size={n})")
    ranks = sorted(range(n) if ranks is None else ranks)
    if _state.rank not in ranks:
        return GroupMember.NON_GROUP_MEMBER
    return ProcessGroup(backend or world.name(), ranks, timeout or world._timeout)


def new_subgroups(group_size=None, group=None, timeout=None, backend=None, pg_options=None,
                  group_desc=None):
    """Consecutive subgroups of ``group_size`` ranks; returns (this rank's subgroup, all the
    subgroups), as torch's."""
    world = _group(None)
    n = world.size()
    if group_size is None:
        group_size = 1        # torch: the ranks of one machine (one device per rank here)
    if group_size <= 0:
        raise ValueError(f"The arg 'group_size' ({group_size}) must be positive")
    if group_size > n:
        raise ValueError(f"The arg 'group_size' ({group_size}) must not exceed the world size "
                         f"({n})")
    if n % group_size != 0:
        raise ValueError("The world size must be divisible by 'group_size'")
    return new_subgroups_by_enumeration(
        [list(range(i, i + group_size)) for i in range(0, n, group_size)], timeout, backend)


def new_subgroups_by_enumeration(ranks_per_subgroup_list, timeout=None, backend=None,
                                 pg_options=None, group_desc=None):
    """A subgroup per list of ranks; returns (the subgroup holding this rank, all of them)."""
    if not ranks_per_subgroup_list:
        raise ValueError("The arg 'ranks_per_subgroup_list' cannot be empty")
    subgroups, cur, seen = [], None, set()
    for ranks in ranks_per_subgroup_list:
        sub = new_group(ranks, timeout=timeout, backend=backend)
        if _state.rank in ranks:
            cur = sub
        for r in ranks:
            if r in seen:
                raise ValueError(f"Rank {r} has appeared in both subgroup "
                                 f"{[x for x in ranks_per_subgroup_list if r in x][0]} and "
                                 f"{ranks}")
            seen.add(r)
        subgroups.append(sub)
    return cur, subgroups


# ============================================================================ the watchdog

class _Watchdog:
    """Ends the process when a collective outlives its group's timeout (a diverged rank)."""

    def __init__(self):
        self.current = None
        self.lock = threading.Lock()
        self.thread = None

    def start(self, what, g):
        _state.seq += 1
        with self.lock:
            self.current = (_state.seq, what, time.monotonic(), g)
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, daemon=True,
                                               name="torchlike-dist-watchdog")
                self.thread.start()

    def stop(self):
        with self.lock:
            self.current = None

    def _run(self):
        while True:
            time.sleep(0.2)
            with self.lock:
                cur = self.current
            if cur is None:
                continue
            seq, what, t0, g = cur
            limit = g._timeout.total_seconds()
            ran = time.monotonic() - t0
            if ran > limit:
                sys.stderr.write(
                    f"[Rank {_state.rank}] Watchdog caught collective operation timeout: "
                    f"{what}(SeqNum={seq}) on ranks {g._ranks} ran for {int(ran * 1000)} "
                    f"milliseconds before timing out (timeout {int(limit * 1000)} ms). Some "
                    f"rank did not call this collective: every rank of a group must call the "
                    f"same collectives in the same order. A blocked collective cannot be "
                    f"cancelled: to avoid data inconsistency, we are taking the entire process "
                    f"down.\n")
                sys.stderr.flush()
                os._exit(6)


_watchdog = _Watchdog()


class _watched:
    def __init__(self, what, g):
        self.what, self.g = what, g

    def __enter__(self):
        _watchdog.start(self.what, self.g)

    def __exit__(self, *exc):
        _watchdog.stop()
        return False


# ============================================================================ programs

def _platform(x):
    return next(iter(x.devices())).platform


def _to_global(x, mesh):
    """The global array ``[n * d0, ...]`` whose rank-``r`` block is rank ``r``'s ``x``."""
    local = _my_device(mesh)
    if x.ndim == 0:
        x = x.reshape(1)
    if x.devices() != {local}:
        x = jax.device_put(x, local)
    n = mesh.devices.size
    return jax.make_array_from_single_device_arrays(
        (n * x.shape[0],) + tuple(x.shape[1:]), NamedSharding(mesh, P("rank")), [x])


def _my_device(mesh):
    me = jax.process_index()
    for d in mesh.devices.flat:
        if d.process_index == me:
            return d
    raise RuntimeError("this rank has no device in the group's mesh")


def _local(y, shape=None):
    """This rank's block of the global result ``y`` (reshaped to ``shape``)."""
    b = y.addressable_shards[0].data
    if shape is not None and tuple(b.shape) != tuple(shape):
        b = b.reshape(shape)
    return b


def _prod_fn(a):
    return jnp.prod(a, axis=0)


def _bits(fn):
    return lambda a: functools.reduce(fn, [a[i] for i in range(a.shape[0])])


_GATHERED = {RedOpType.PRODUCT: _prod_fn, RedOpType.BAND: _bits(jnp.bitwise_and),
             RedOpType.BOR: _bits(jnp.bitwise_or), RedOpType.BXOR: _bits(jnp.bitwise_xor)}


def _reduce_block(x, op, n):
    """Inside shard_map: the reduction of every rank's block ``x`` with ``op``."""
    if op is RedOpType.SUM:
        return lax.psum(x, "rank")
    if op is RedOpType.AVG:
        s = lax.psum(x, "rank")
        return s / n if jnp.issubdtype(x.dtype, jnp.inexact) else s // n
    if op is RedOpType.MAX:
        return lax.pmax(x, "rank")
    if op is RedOpType.MIN:
        return lax.pmin(x, "rank")
    if x.dtype == jnp.bool_ and op is RedOpType.PRODUCT:
        return lax.pmin(x.astype(jnp.int8), "rank").astype(jnp.bool_)
    g = lax.all_gather(x, "rank")          # [n, ...]: no prod/bitwise collective primitive
    return _GATHERED[op](g)


@functools.lru_cache(maxsize=None)
def _program(kind, mesh, op=None, n_args=1, extra=None):
    """One jitted shard_map program per (collective, mesh, op); jax caches per shape."""
    n = mesh.devices.size
    spec = P("rank")

    def body(*xs):
        if kind == "all_reduce":
            return tuple(_reduce_block(x, op, n) for x in xs)
        if kind == "mean_prescaled":          # DDP: grads pre-divided by n, then summed
            return tuple(lax.psum(x / n if jnp.issubdtype(x.dtype, jnp.inexact) else x, "rank")
                         for x in xs)
        if kind == "all_gather":              # block [d0,...] -> [n*d0,...] on every rank
            return tuple(lax.all_gather(x, "rank", axis=0, tiled=True) for x in xs)
        if kind == "broadcast":               # exact copy of rank `extra`'s block
            return tuple(lax.all_gather(x, "rank", axis=0, tiled=False)[extra] for x in xs)
        if kind == "reduce_scatter":
            if op is RedOpType.SUM or op is RedOpType.AVG:
                y = tuple(lax.psum_scatter(x, "rank", scatter_dimension=0, tiled=True)
                          for x in xs)
                if op is RedOpType.AVG:
                    y = tuple(v / n for v in y)
                return y
            out = []
            for x in xs:
                r = _reduce_block(x, op, n)
                k = r.shape[0] // n
                out.append(lax.dynamic_slice_in_dim(r, lax.axis_index("rank") * k, k, 0))
            return tuple(out)
        if kind == "all_to_all":
            return tuple(lax.all_to_all(x, "rank", 0, 0, tiled=True) for x in xs)
        raise AssertionError(kind)

    f = jax.shard_map(body, mesh=mesh, in_specs=(spec,) * n_args, out_specs=(spec,) * n_args)
    return jax.jit(f)


def _run(kind, g, arrays, op=None, extra=None, what=None):
    """Run collective ``kind`` over group ``g`` on this rank's ``arrays``; returns the local
    result blocks (as jax arrays, block-shaped)."""
    mesh = g._mesh(_platform(arrays[0]))
    gl = [_to_global(a, mesh) for a in arrays]
    prog = _program(kind, mesh, op, len(gl), extra)
    with _watched(what or kind, g):
        out = prog(*gl)
        jax.block_until_ready(out)
    return [o.addressable_shards[0].data for o in out]


# ============================================================================ helpers

def _member(group):
    g = _group(group)
    if g is GroupMember.NON_GROUP_MEMBER:
        return None
    return g


def _done(async_op, result=None):
    return Work(result) if async_op else None


def _write(t, data):
    """Write ``data`` into tensor ``t`` in place (outside autograd, as torch's collectives)."""
    if tuple(data.shape) != tuple(t.shape):
        data = data.reshape(t.shape)
    if data.dtype != t._d.dtype:
        data = data.astype(t._d.dtype)
    t._set_data(data)


def _check_tensor(t, name="tensor"):
    from .._tensor import Tensor
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor\n             but got {type(t)} instead.")


def _check_tensor_list(ts, name):
    from .._tensor import Tensor
    head = (f"Invalid function argument. Expected parameter `{name}` of type "
            f"List[torch.Tensor]\n             but got {type(ts)}")
    if not isinstance(ts, list):
        raise TypeError(head + " instead.")
    if not all(isinstance(t, Tensor) for t in ts):
        raise TypeError(head + f" with elements of type {[type(t) for t in ts]}.")


_TORCH_TYPE = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
               "int32": "Int", "int64": "Long", "uint16": "UInt16", "uint32": "UInt32",
               "uint64": "UInt64"}


def _check_op(op, dtype):
    """torch's rules for ``op`` on ``dtype`` (gloo): PREMUL_SUM is refused, bitwise ops need
    an integral or bool dtype, AVG (a sum, then ``div_``) a floating one."""
    if op is RedOpType.PREMUL_SUM:
        raise ValueError("Cannot use ReduceOp.PREMUL_SUM with gloo")
    if op in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and \
            jnp.issubdtype(dtype, jnp.inexact):
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if op is RedOpType.AVG and not jnp.issubdtype(dtype, jnp.inexact):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_TORCH_TYPE.get(jnp.dtype(dtype).name, jnp.dtype(dtype).name)}")


def _check_complex(t, op, name="all_reduce"):
    if t.is_complex() and op not in (RedOpType.SUM, RedOpType.AVG, RedOpType.PREMUL_SUM):
        raise ValueError(f"{name} does not support {op} on complex tensors")


def _same_dtype(*tensors):
    """torch's ``_ensure_all_tensors_same_dtype`` (a complex tensor counts as its real
    dtype)."""
    from .._tensor import Tensor
    last = None
    for t in tensors:
        for x in ([t] if isinstance(t, Tensor) else t):
            d = x.dtype
            if d.is_complex:
                d = "torch.float32" if str(d) == "torch.complex64" else "torch.complex128"
            d = str(d)
            if last is None:
                last = d
            elif last != d:
                raise ValueError(f"Invalid usage of tensors with different dtypesFound {last} "
                                 f"and  {x.dtype}")


def _shape_str(shape):
    return "(" + ", ".join(str(int(k)) for k in shape) + ")"


_C10_NAME = {"float32": "float", "float64": "double", "float16": "c10::Half",
             "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
             "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
             "bool": "bool", "complex64": "c10::complex<float>",
             "complex128": "c10::complex<double>"}


def _options(t):
    """A CPU tensor's ``TensorOptions`` as c10 prints it (gloo's type errors quote it)."""
    name = str(t.dtype).replace("torch.", "")
    return (f"TensorOptions(dtype={_C10_NAME.get(name, name)}, device=cpu, layout=Strided, "
            f"requires_grad=false (default), pinned_memory=false (default), "
            f"memory_format=(nullopt))")


def _check_root(g, root, what):
    if not 0 <= root < g.size():
        raise RuntimeError(f"ProcessGroupGloo::{what}: invalid root rank: {root}")


def _bool_in(x, op):
    # SUM over bools is an OR in torch (any rank's True stays True), as MAX
    if x.dtype == jnp.bool_:
        if op is RedOpType.SUM:
            return x, RedOpType.MAX
    return x, op


# ============================================================================ collectives

def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank of the group reached the barrier."""
    g = _member(group)
    if g is None:
        return _done(async_op)
    _run("all_reduce", g, [jnp.zeros((1,), jnp.int32)], RedOpType.SUM, what="BARRIER")
    return _done(async_op, [])


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    g = _member(group)
    if g is None:
        return None
    old = g._timeout
    if timeout is not None:
        g._timeout = timeout
    try:
        barrier(g)
    finally:
        g._timeout = old


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` over the group's ranks with ``op``; every rank gets the result in
    place."""
    _check_tensor(tensor)
    g = _member(group)
    if g is None:
        return _done(async_op)
    _check_complex(tensor, op)
    x, op2 = _bool_in(tensor._data, op)
    _check_op(op, x.dtype)
    (y,) = _run("all_reduce", g, [x], op2, what="ALLREDUCE")
    _write(tensor, y)
    return _done(async_op, [tensor])


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    """As all_reduce, with the result written on rank ``dst`` only."""
    _check_tensor(tensor)
    g = _member(group)
    if g is None:
        return _done(async_op)
    dst_g = _group_peer(g, dst, group_dst, "dst", "reduce")
    _check_complex(tensor, op, "reduce")
    x, op2 = _bool_in(tensor._data, op)
    _check_op(op, x.dtype)
    (y,) = _run("all_reduce", g, [x], op2, what="REDUCE")
    if g.rank() == dst_g:
        _write(tensor, y)
    return _done(async_op, [tensor])


def _group_peer(g, peer, group_peer, name, what=None):
    """The group rank of root ``peer`` (a global rank) or ``group_peer``; ``what`` names the
    collective in gloo's error for a root outside the group."""
    if group_peer is not None:
        if peer is not None:
            raise ValueError(f"Can't specify both {name} and group_{name}")
        r = group_peer
    elif peer is None:
        r = 0
    elif g is _state.world:
        r = peer                   # the world's group ranks are its global ranks
    else:
        r = get_group_rank(g, peer)
    if what is not None:
        _check_root(g, r, what)
    return r


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Every rank's ``tensor`` becomes rank ``src``'s."""
    _check_tensor(tensor)
    g = _member(group)
    if g is None:
        return _done(async_op)
    s = _group_peer(g, src, group_src, "src", "broadcast")
    (y,) = _run("broadcast", g, [tensor._data], extra=s, what="BROADCAST")
    _write(tensor, y)
    return _done(async_op, [tensor])


def _coalesced_broadcast(tensors, src, g):
    """One program broadcasting all ``tensors`` from group rank ``src`` (DDP's module sync)."""
    if not tensors:
        return
    ys = _run("broadcast", g, [t._data for t in tensors], extra=src, what="BROADCAST")
    for t, y in zip(tensors, ys):
        _write(t, y)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """``tensor_list[r]`` becomes rank ``r``'s ``tensor``."""
    _check_tensor_list(tensor_list, "tensor_list")
    _check_tensor(tensor)
    _same_dtype(tensor_list, tensor)
    g = _member(group)
    if g is None:
        return _done(async_op)
    if len(tensor_list) != g.size():
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid output tensor list at index 0 "
                           f"(expected length {g.size()}, got {len(tensor_list)})")
    for t in tensor_list:
        if tuple(t.shape) != tuple(tensor.shape):
            raise RuntimeError(f"ProcessGroupGloo::allgather: invalid tensor size at index 0 "
                               f"(expected {_shape_str(tensor.shape)}, got "
                               f"{_shape_str(t.shape)})")
    x = tensor._data
    (y,) = _run("all_gather", g, [x], what="ALLGATHER")
    y = y.reshape((g.size(),) + tuple(x.shape))
    for i, t in enumerate(tensor_list):
        _write(t, y[i])
    return _done(async_op, [list(tensor_list)])


def all_gather_single(output_tensor, input_tensor, group=None, async_op=False):
    """``output_tensor`` ([n * d0, ...]; under nccl also [n, ...]) becomes every rank's
    ``input_tensor`` concatenated (or stacked)."""
    _check_tensor(output_tensor, "output_tensor")
    _check_tensor(input_tensor, "input_tensor")
    g = _member(group)
    if g is None:
        return _done(async_op)
    # gloo gathers into ``output_tensor.chunk(n)``: each chunk must be the input's shape
    gloo = g.name() != "nccl"
    for i, c in enumerate(output_tensor.chunk(g.size()) if gloo and output_tensor.ndim else []):
        if c.dtype != input_tensor.dtype:
            raise RuntimeError(f"ProcessGroupGloo::allgather: invalid tensor type at index {i} "
                               f"(expected {_options(input_tensor)}, got {_options(c)})")
        if tuple(c.shape) != tuple(input_tensor.shape):
            raise RuntimeError(f"ProcessGroupGloo::allgather: invalid tensor size at index {i} "
                               f"(expected {_shape_str(input_tensor.shape)}, got "
                               f"{_shape_str(c.shape)})")
    if output_tensor.numel() != input_tensor.numel() * g.size():
        raise ValueError("Output tensor size must be equal to world_size times input tensor "
                         "size")
    (y,) = _run("all_gather", g, [input_tensor._data], what="_ALLGATHER_BASE")
    _write(output_tensor, y)
    # (gloo gathers into the output's chunks: its future holds them)
    return _done(async_op, list(output_tensor.chunk(g.size())) if async_op else None)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    _check_tensor(tensor)
    if gather_list:
        _check_tensor_list(gather_list, "gather_list")
    _same_dtype(tensor, gather_list or [])
    g = _member(group)
    if g is None:
        return _done(async_op)
    d = _group_peer(g, dst, group_dst, "dst", "gather")
    if g.rank() == d:
        if gather_list is None or len(gather_list) != g.size():
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                         "ranks.")
    x = tensor._data
    (y,) = _run("all_gather", g, [x], what="GATHER")
    if g.rank() == d:
        y = y.reshape((g.size(),) + tuple(x.shape))
        for i, t in enumerate(gather_list):
            _write(t, y[i])
        return _done(async_op, [list(gather_list)])
    return _done(async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    _check_tensor(tensor)
    if scatter_list:
        _check_tensor_list(scatter_list, "scatter_list")
    _same_dtype(tensor, scatter_list or [])
    g = _member(group)
    if g is None:
        return _done(async_op)
    s = _group_peer(g, src, group_src, "src", "scatter")
    n = g.size()
    if g.rank() == s:
        if scatter_list is None or len(scatter_list) != n:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        x = jnp.stack([t._data for t in scatter_list])
    else:
        if scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source "
                             "ranks.")
        x = jnp.zeros((n,) + tuple(tensor.shape), tensor._d.dtype)
    (y,) = _run("broadcast", g, [x], extra=s, what="SCATTER")
    _write(tensor, y[g.rank()])
    return _done(async_op, [tensor])


def reduce_scatter_single(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """``output`` becomes this rank's block of the reduction of every rank's ``input``."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    g = _member(group)
    if g is None:
        return _done(async_op)
    _same_dtype(output, input)
    if input.numel() != output.numel() * g.size():
        raise ValueError("input tensor must be the same size as output size times world size")
    _check_complex(input, op, "reduce_scatter_tensor")
    x, op2 = _bool_in(input._data.reshape((-1,)), op)
    _check_op(op, x.dtype)
    (y,) = _run("reduce_scatter", g, [x], op2, what="_REDUCE_SCATTER_BASE")
    _write(output, y)
    return _done(async_op, [output])


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """``all_gather_single``'s name before torch 2.13, which warns that it is deprecated."""
    warnings.warn("`torch.distributed.all_gather_into_tensor` is deprecated. Please use "
                  "`torch.distributed.all_gather_single` instead.", FutureWarning, stacklevel=2)
    return all_gather_single(output_tensor, input_tensor, group, async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """``reduce_scatter_single``'s name before torch 2.13, which warns that it is deprecated."""
    warnings.warn("`torch.distributed.reduce_scatter_tensor` is deprecated. Please use "
                  "`torch.distributed.reduce_scatter_single` instead.", FutureWarning,
                  stacklevel=2)
    return reduce_scatter_single(output, input, op, group, async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    _check_tensor(output, "output")
    g = _member(group)
    if g is None:
        return _done(async_op)
    _check_tensor_list(input_list, "input_list")
    _same_dtype(output, input_list)
    if len(input_list) != g.size():
        raise ValueError(f"reduce_scatter: input_list must hold world_size={g.size()} tensors, "
                         f"got {len(input_list)}")
    for t in input_list:
        if tuple(t.shape) != tuple(output.shape):
            raise ValueError(f"reduce_scatter: every input must have the output's shape "
                             f"{_shape_str(output.shape)}, got {_shape_str(t.shape)}")
    x, op2 = _bool_in(jnp.concatenate([t._data.reshape((-1,)) for t in input_list]), op)
    _check_op(op, x.dtype)
    (y,) = _run("reduce_scatter", g, [x], op2, what="REDUCE_SCATTER")
    _write(output, y)
    return _done(async_op, [output])


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """Block ``j`` of this rank's ``input`` (split on dim 0 by ``input_split_sizes``, or
    evenly) goes to rank ``j``; ``output`` holds the blocks received, in rank order (split by
    ``output_split_sizes``, or evenly).

    Equal blocks are one jax ``all_to_all``. Given split sizes (every rank passes them, as in
    torch), the ranks first gather each other's input splits (one small all-gather), then every
    block is padded to the largest one, moved by one ``all_to_all``, and unpadded."""
    _check_tensor(output, "output")
    _check_tensor(input, "input")
    _same_dtype(output, input)
    g = _member(group)
    if g is None:
        return _done(async_op)
    n = g.size()
    in_s = list(input_split_sizes or [])
    out_s = list(output_split_sizes or [])
    for sizes, t in ((in_s, input), (out_s, output)):
        if sizes and (len(sizes) != n or sum(sizes) != (t.shape[0] if t.ndim else 1)
                      or min(sizes) < 0):
            raise RuntimeError("Split sizes doesn't match total dim 0 size")
        if not sizes and t.ndim and t.shape[0] % n:
            raise RuntimeError(f"Tensor's dim 0 does not divide equally across group size")
    if input.numel() and output.numel() and \
            tuple(input.shape[1:]) != tuple(output.shape[1:]):
        raise RuntimeError(f"all_to_all_single: input {_shape_str(input.shape)} and output "
                           f"{_shape_str(output.shape)} differ beyond dim 0")
    if not in_s and not out_s:
        if input.numel() != output.numel():
            raise RuntimeError(f"all_to_all_single: output has {output.numel()} elements, the "
                               f"input {input.numel()}: with equal splits they must match")
        (y,) = _run("all_to_all", g, [input._data], what="ALLTOALL_BASE")
        _write(output, y)
        return _done(async_op, [output])
    # every rank's input split sizes: row i is what rank i sends to each rank
    rows = in_s or [input.shape[0] // n] * n
    (got,) = _run("all_gather", g, [jnp.asarray(rows, jnp.int32)], what="ALLTOALL_BASE")
    table = np.asarray(got).reshape(n, n)
    me = g.rank()
    recv = table[:, me].tolist()
    if (out_s or [output.shape[0] // n] * n) != recv:
        raise RuntimeError(f"all_to_all_single: rank {me} expects blocks of "
                           f"{out_s or [output.shape[0] // n] * n} rows (output_split_sizes), "
                           f"the other ranks send {recv} (their input_split_sizes)")
    m = max(int(table.max()), 1)
    x = input._data
    rest = tuple(x.shape[1:])
    offs = np.concatenate([[0], np.cumsum(rows)]).tolist()
    blocks = [jnp.pad(x[offs[j]:offs[j + 1]], [(0, m - rows[j])] + [(0, 0)] * len(rest))
              for j in range(n)]
    (y,) = _run("all_to_all", g, [jnp.concatenate(blocks)], what="ALLTOALL_BASE")
    y = y.reshape((n, m) + rest)
    _write(output, jnp.concatenate([y[i, :recv[i]] for i in range(n)]))
    return _done(async_op, [output])


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    """``output_tensor_list[i]`` becomes rank ``i``'s ``input_tensor_list[me]``: gloo moves
    tensors of one shape, as here."""
    _check_tensor_list(output_tensor_list, "output_tensor_list")
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    _same_dtype(output_tensor_list, input_tensor_list)
    g = _member(group)
    if g is None:
        return _done(async_op)
    n = g.size()
    for name, lst in (("input", input_tensor_list), ("output", output_tensor_list)):
        if len(lst) != n:
            raise RuntimeError(f"ProcessGroupGloo::alltoall: invalid {name} tensor list "
                               f"(expected length {n}, got {len(lst)})")
    first = tuple(input_tensor_list[0].shape)
    for lst in (input_tensor_list, output_tensor_list):
        for i, t in enumerate(lst):
            if tuple(t.shape) != first:
                raise RuntimeError(f"ProcessGroupGloo::alltoall: invalid tensor size at index "
                                   f"{i} (expected {_shape_str(first)}, got "
                                   f"{_shape_str(t.shape)})")
    x = jnp.stack([t._data for t in input_tensor_list])
    (y,) = _run("all_to_all", g, [x], what="ALLTOALL")
    for i, t in enumerate(output_tensor_list):
        _write(t, y[i])
    return _done(async_op, [list(output_tensor_list)])


# ============================================================================ objects

def _gather_bytes(g, payload):
    """Every rank's ``payload`` (bytes), in group-rank order."""
    n = np.int64(len(payload))
    (lens,) = _run("all_gather", g, [jnp.asarray([n])], what="ALLGATHER")
    lens = np.asarray(lens).tolist()
    buf = np.zeros(max(max(lens), 1), np.uint8)
    buf[:len(payload)] = np.frombuffer(payload, np.uint8)
    (data,) = _run("all_gather", g, [jnp.asarray(buf)], what="ALLGATHER")
    data = np.asarray(data).reshape(len(lens), -1)
    return [data[i, :lens[i]].tobytes() for i in range(len(lens))]


def all_gather_object(object_list, obj, group=None):
    """``object_list[r]`` becomes rank ``r``'s ``obj`` (pickled, gathered, unpickled)."""
    g = _member(group)
    if g is None:
        return
    for i, b in enumerate(_gather_bytes(g, pickle.dumps(obj))):
        object_list[i] = pickle.loads(b)


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    g = _member(group)
    if g is None:
        return
    d = _group_peer(g, dst, group_dst, "dst")
    got = _gather_bytes(g, pickle.dumps(obj))
    if g.rank() == d:
        for i, b in enumerate(got):
            object_gather_list[i] = pickle.loads(b)


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Every rank's ``object_list`` becomes rank ``src``'s (in place)."""
    g = _member(group)
    if g is None:
        return
    s = _group_peer(g, src, group_src, "src")
    payload = pickle.dumps(list(object_list)) if g.rank() == s else b""
    got = pickle.loads(_gather_bytes(g, payload)[s])
    object_list[:] = got


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None):
    g = _member(group)
    if g is None:
        return
    s = _group_peer(g, src, group_src, "src")
    payload = pickle.dumps(list(scatter_object_input_list)) if g.rank() == s else b""
    objs = pickle.loads(_gather_bytes(g, payload)[s])
    scatter_object_output_list[0] = objs[g.rank()]


# ============================================================================ point to point

@functools.lru_cache(maxsize=None)
def _p2p_program(mesh, src_pos):
    f = jax.shard_map(lambda x: lax.all_gather(x, "rank", axis=0, tiled=False)[src_pos],
                      mesh=mesh, in_specs=P("rank"), out_specs=P("rank"))
    return jax.jit(f)


def _p2p(tensor, me, peer, sending, what):
    """One program over the two ranks' devices: ``src``'s block copied to ``dst``. Both ranks
    run it (``send`` on one, ``recv`` on the other), as jax's collectives require."""
    _check_tensor(tensor)
    world = _group(None)
    if peer == me:
        raise ValueError(f"Invalid destination rank: destination rank should not be the same "
                         f"as the rank of the current process.")
    pair = ProcessGroup(world.name(), sorted((me, peer)), world._timeout)
    mesh = pair._mesh(_platform(tensor._data))
    src = me if sending else peer
    prog = _p2p_program(mesh, pair._ranks.index(src))
    with _watched(what, pair):
        out = prog(_to_global(tensor._data, mesh))
        jax.block_until_ready(out)
    if not sending:
        _write(tensor, out.addressable_shards[0].data)


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send ``tensor`` to rank ``dst``: blocks until ``dst`` calls ``recv``."""
    g = _group(group)
    dst = g._ranks[group_dst] if group_dst is not None else dst
    _p2p(tensor, _state.rank, dst, True, "SEND")


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into ``tensor`` from rank ``src`` (required: torchlike has no any-source
    receive); returns ``src``."""
    g = _group(group)
    src = g._ranks[group_src] if group_src is not None else src
    if src is None:
        raise NotImplementedError("recv from any source (src=None): jax's programs name both "
                                  "ranks of a transfer; pass src")
    _p2p(tensor, _state.rank, src, False, "RECV")
    return src


def _no_async_p2p(*args, **kwargs):
    raise NotImplementedError(
        "isend/irecv/batch_isend_irecv: torchlike's point-to-point transfers are one jax "
        "program run by both ranks, so they block until the peer runs its side; there is no "
        "queue of pending transfers. Use send/recv in an order both ranks share, or a "
        "collective (all_gather, all_to_all_single).")


isend = irecv = batch_isend_irecv = _no_async_p2p


class P2POp:
    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        self.op, self.tensor, self.peer, self.group, self.tag = op, tensor, peer, group, tag
