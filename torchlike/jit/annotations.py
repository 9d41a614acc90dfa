"""torch.jit.annotations: the typing names TorchScript signatures are written with."""
from typing import Any, Dict, List, Optional, Tuple, Union  # noqa: F401

from . import Future  # noqa: F401


class BroadcastingListCls:
    """``BroadcastingList2[int]``: an int or a list of two (TorchScript's annotation); subscripting
    gives None, as in torch."""

    def __getitem__(self, types):
        return None


BroadcastingList1 = BroadcastingList2 = BroadcastingList3 = BroadcastingListCls()
