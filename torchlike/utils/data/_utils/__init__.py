"""torch.utils.data._utils: collate, worker and fetch helpers (re-exported from _impl)."""
from . import collate, worker, fetch  # noqa: F401
from .._impl import ExceptionWrapper  # noqa: F401

IS_WINDOWS = False
MP_STATUS_CHECK_INTERVAL = 5.0
