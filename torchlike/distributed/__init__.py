"""torchlike.distributed: torch.distributed with single-process semantics.

``init_process_group`` follows torch's argument rules (``env://`` reads ``RANK`` and
``WORLD_SIZE``; torch's error when they are missing) and accepts a world of one process, where
every collective is what torch's ``gloo`` backend gives with ``world_size=1``: ``all_reduce``,
``broadcast`` and ``barrier`` leave tensors as they are, ``all_gather`` copies the input into
the single output slot. A world of more processes raises NotImplementedError (torchlike has no
process-group transport; multi-host jax uses ``jax.distributed``).
"""
from __future__ import annotations

import enum
import os

__all__ = ["is_available", "is_initialized", "init_process_group", "destroy_process_group",
           "get_rank", "get_world_size", "get_backend", "barrier", "all_reduce", "reduce",
           "broadcast", "all_gather", "all_gather_into_tensor", "gather", "scatter",
           "reduce_scatter", "reduce_scatter_tensor", "all_to_all", "all_gather_object",
           "broadcast_object_list", "new_group", "ReduceOp", "Backend", "group", "GroupMember",
           "is_nccl_available", "is_gloo_available", "is_mpi_available",
           "is_torchelastic_launched", "get_node_local_rank", "monitored_barrier",
           "ProcessGroup", "get_global_rank", "get_group_rank", "get_process_group_ranks",
           "send", "recv", "isend", "irecv", "Work", "is_backend_available",
           "get_default_backend_for_device", "DistBackendError"]

_NOT_INIT = ("Default process group has not been initialized, please make sure to call "
             "init_process_group.")


class DistBackendError(RuntimeError):
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


ReduceOp = RedOpType


class Backend(str):
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    MPI = "mpi"
    UCC = "ucc"

    def __new__(cls, name):
        return str.__new__(cls, name.lower())


class ProcessGroup:
    def __init__(self, backend, ranks=(0,)):
        self._backend = backend
        self._ranks = list(ranks)

    def rank(self):
        return 0

    def size(self):
        return 1

    def name(self):
        return self._backend


class GroupMember:
    WORLD = None
    NON_GROUP_MEMBER = object()


group = GroupMember


class Work:
    """A finished collective (every call here completes synchronously)."""

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True

    def is_success(self):
        return True


_state = {"pg": None}


def is_available():
    return True


def is_initialized():
    return _state["pg"] is not None


def is_nccl_available():
    return False


def is_gloo_available():
    return True


def is_mpi_available():
    return False


def is_backend_available(backend):
    return backend.lower() == "gloo"


def get_default_backend_for_device(device):
    return "gloo"


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
    return int(v)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Join a process group: a world of one process (see the module docstring)."""
    if _state["pg"] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is None and (init_method is None or init_method.startswith("env://")):
        if rank == -1:
            rank = _env("RANK")
        if world_size == -1:
            world_size = _env("WORLD_SIZE")
    if world_size == -1:
        world_size = 1
    if rank == -1:
        rank = 0
    if world_size != 1 or rank != 0:
        raise NotImplementedError(
            f"torchlike.distributed runs a world of one process (got world_size={world_size}, "
            f"rank={rank}): there is no process-group transport. Run one process, or use "
            f"jax.distributed with jax's sharding for multi-process jobs")
    backend = Backend(backend or "gloo")
    if backend not in ("gloo", "nccl", "cpu:gloo,cuda:nccl"):
        raise ValueError(f"Invalid backend: '{backend}'")
    _state["pg"] = ProcessGroup(str(backend))
    GroupMember.WORLD = _state["pg"]


def destroy_process_group(group=None):
    if _state["pg"] is None:
        raise AssertionError("Process group cannot be None")
    _state["pg"] = None
    GroupMember.WORLD = None


def _check(group=None):
    if _state["pg"] is None:
        raise ValueError(_NOT_INIT)


def get_rank(group=None):
    _check()
    return 0


def get_world_size(group=None):
    _check()
    return 1


def get_backend(group=None):
    _check()
    return _state["pg"].name()


def get_global_rank(group, group_rank):
    return group_rank


def get_group_rank(group, global_rank):
    return global_rank


def get_process_group_ranks(group):
    return [0]


def new_group(ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False,
              group_desc=None, device_id=None):
    _check()
    if ranks is not None and list(ranks) not in ([], [0]):
        raise ValueError(f"new_group ranks {list(ranks)} are not in a world of one process")
    return ProcessGroup(get_backend())


def _done(async_op):
    return Work() if async_op else None


def barrier(group=None, async_op=False, device_ids=None):
    _check()
    return _done(async_op)


monitored_barrier = barrier


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """One process: the reduction of ``tensor`` alone is ``tensor`` (torch's gloo, world 1)."""
    _check()
    return _done(async_op)


def reduce(tensor, dst=0, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    _check()
    return _done(async_op)


def broadcast(tensor, src=0, group=None, async_op=False, group_src=None):
    _check()
    if src != 0:
        raise ValueError(f"Invalid src rank {src}: the world has one process")
    return _done(async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _check()
    if len(tensor_list) != 1:
        raise ValueError(f"all_gather: tensor_list must hold world_size=1 tensors, got "
                         f"{len(tensor_list)}")
    from ..autograd.grad_mode import no_grad
    with no_grad():
        tensor_list[0].copy_(tensor)
    return _done(async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    _check()
    from ..autograd.grad_mode import no_grad
    with no_grad():
        output_tensor.copy_(input_tensor.reshape(output_tensor.shape))
    return _done(async_op)


def gather(tensor, gather_list=None, dst=0, group=None, async_op=False, group_dst=None):
    _check()
    if gather_list is not None:
        all_gather(gather_list, tensor)
    return _done(async_op)


def scatter(tensor, scatter_list=None, src=0, group=None, async_op=False, group_src=None):
    _check()
    if scatter_list:
        from ..autograd.grad_mode import no_grad
        with no_grad():
            tensor.copy_(scatter_list[0])
    return _done(async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    _check()
    from ..autograd.grad_mode import no_grad
    with no_grad():
        output.copy_(input_list[0])
    return _done(async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    _check()
    from ..autograd.grad_mode import no_grad
    with no_grad():
        output.copy_(input.reshape(output.shape))
    return _done(async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    _check()
    from ..autograd.grad_mode import no_grad
    with no_grad():
        output_tensor_list[0].copy_(input_tensor_list[0])
    return _done(async_op)


def all_gather_object(object_list, obj, group=None):
    _check()
    object_list[0] = obj


def broadcast_object_list(object_list, src=0, group=None, device=None, group_src=None):
    _check()


def _p2p(*a, **k):
    _check()
    raise RuntimeError("send/recv need a peer: the world has one process")


send = recv = isend = irecv = _p2p

