"""torch.utils._foreach_utils: the grouping and support queries optimizers written against
torch's foreach kernels call (pytorch_optimizer imports them)."""
from __future__ import annotations

from .._tensor import Tensor

__all__ = []

_foreach_supported_types = [Tensor]


def _get_foreach_kernels_supported_devices():
    """The device types with foreach kernels (torch's list; a CPU takes them too)."""
    return ["cuda", "xpu", "mtia", "privateuseone"]


def _get_fused_kernels_supported_devices():
    return ["mps", "cuda", "xpu", "hpu", "cpu", "mtia", "privateuseone"]


def _device_has_foreach_support(device):
    return device.type in _get_foreach_kernels_supported_devices() + ["cpu"]


def _has_foreach_support(tensors, device):
    return _device_has_foreach_support(device) and all(
        t is None or type(t) in _foreach_supported_types for t in tensors)


def _group_tensors_by_device_and_dtype(tensorlistlist, with_indices=False):
    """``{(device, dtype): (the lists' tensors at the indices where the first list's tensor
    has that device and dtype, those indices if with_indices else [])}`` (torch's checks: the
    first list holds no None; tensors of one index share device and dtype)."""
    groups = {}
    for i, t in enumerate(tensorlistlist[0]):
        if t is None:
            raise RuntimeError(f"Tensors of the first list of nested Tensor lists are supposed "
                               f"to be defined but the {i}-th Tensor is not.")
        key = (t.device, t.dtype)
        for lst in tensorlistlist[1:]:
            o = lst[i]
            if o is not None and (o.device, o.dtype) != key and not _exempt(o, key):
                raise RuntimeError(
                    "Tensors of the same index must be on the same device and the same dtype "
                    "except `step` tensors that can be CPU and float32/64, and optimizer "
                    "states that can be bfloat16 for mixed-precision training")
        lists, idx = groups.setdefault(key, ([[] for _ in tensorlistlist], []))
        for out, lst in zip(lists, tensorlistlist):
            out.append(lst[i])
        if with_indices:
            idx.append(i)
    return groups


def _exempt(t, key):
    """torch's exceptions: a one-element CPU float ``step`` tensor, a bfloat16 state."""
    from .. import _dtype as D
    step = t.device.type == "cpu" and t.dtype in (D.float32, D.float64) and t.numel() == 1
    return step or t.dtype is D.bfloat16
