"""torchlike.utils.data: datasets, samplers, collation and DataLoader, with torch's module paths
(``dataloader``, ``dataset``, ``sampler``, ``distributed``, ``_utils.collate``/``worker``).

The implementation lives in ``_impl``; the submodules re-export its names where torch keeps
them."""
from ._impl import *  # noqa: F401,F403
from ._impl import __all__ as _impl_all
from ._impl import (T_co, WorkerInfo, ExceptionWrapper, KeyErrorMessage,  # noqa: F401
                    _worker_loop, _InfiniteConstantSampler)
from . import dataset, sampler, dataloader, distributed, _utils  # noqa: F401,E402
from ._impl import _seeded_generator  # noqa: F401

__all__ = list(_impl_all)

# torch's classes report their submodule (repr, pickling by reference): so do these
for _mod, _names in (("dataset", dataset.__all__), ("sampler", sampler.__all__),
                     ("dataloader", ("DataLoader", "_DatasetKind")),
                     ("distributed", ("DistributedSampler",))):
    for _n in _names:
        _obj = globals()[_n]
        if isinstance(_obj, type):
            _obj.__module__ = f"{__name__}.{_mod}"
del _mod, _names, _n, _obj
