"""torch.utils.data._utils.worker."""
from .._impl import WorkerInfo, get_worker_info, _worker_loop  # noqa: F401

__all__ = ["WorkerInfo", "get_worker_info"]
