"""torchlike.distributed: torch.distributed on jax's multi-process engine.

Two views of one engine (README "Distributed"):

* the per-rank view -- one process per rank, started by ``python -m torchlike.distributed.run``
  or ``torchlike.multiprocessing.spawn``: process groups and eager collectives
  (``distributed_c10d``), ``nn.parallel.DistributedDataParallel``, ``DistributedSampler``;
* the global view -- jax arrays spanning devices: ``device_mesh.init_device_mesh``, DTensor
  (``distributed.tensor``), FSDP2's ``fully_shard`` (``distributed.fsdp``) and tensor
  parallelism (``distributed.tensor.parallel``).

``get_world_size()`` is the number of processes (ranks); a DeviceMesh counts devices.
"""
from __future__ import annotations

from . import distributed_c10d  # noqa: F401
from .distributed_c10d import *  # noqa: F401,F403
from .distributed_c10d import __all__ as _c10d_all

__all__ = list(_c10d_all) + ["init_device_mesh", "DeviceMesh"]


def __getattr__(name):
    if name in ("init_device_mesh", "DeviceMesh"):
        from . import device_mesh
        return getattr(device_mesh, name)
    if name == "GradBucket":
        from .algorithms.ddp_comm_hooks.default_hooks import GradBucket
        return GradBucket
    import importlib
    if name in ("device_mesh", "tensor", "fsdp", "run", "checkpoint", "launch",
                "elastic", "algorithms", "optim", "_tensor"):
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError:
            pass
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
