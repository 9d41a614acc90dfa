"""LinearCrossEntropyOptions: the configuration of linear_cross_entropy's chunked path."""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

from ... import _dtype

__all__ = ["LinearCrossEntropyOptions"]


class _AutoDefault(NamedTuple):
    acc_policy: str
    chunking_method: str


# torch's picks for the "auto" sentinels, per (device type, input dtype)
_AUTO_DEFAULTS = {
    ("cuda", _dtype.bfloat16): _AutoDefault("compact", "aspect_ratio:2"),
    ("cuda", _dtype.float16): _AutoDefault("compact", "aspect_ratio:2"),
    ("cpu", _dtype.bfloat16): _AutoDefault("accurate", "aspect_ratio"),
    ("cpu", _dtype.float16): _AutoDefault("accurate", "aspect_ratio"),
}
_AUTO_FALLBACK = _AutoDefault("compact", "aspect_ratio:2")
_ACC_DTYPES = (_dtype.float16, _dtype.bfloat16, _dtype.float32, _dtype.float64)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Configuration of :func:`torchlike.nn.functional.linear_cross_entropy`'s chunked path,
    which takes the batch ``batch_chunk_size`` rows at a time, so that the full
    ``(num_batches, num_classes)`` logits are never materialized, and accumulates in
    ``acc_dtype``.

    - ``allow_retain_graph``: for the scalar reductions, whether backward may run more than
      once (the gradients are computed in forward; by default the first backward consumes
      them and a second raises). ``reduction="none"`` recomputes in backward and ignores it.
    - ``batch_chunk_size``: rows per chunk (None: one chunk, or ``chunking_method``'s pick).
    - ``chunking_method``: ``"auto"``, ``"aspect_ratio"`` or ``"aspect_ratio:N"`` (chunks
      whose logits take about the input's memory, divided by N), or None.
    - ``acc_policy``: ``"auto"``, ``"accurate"``, ``"balanced"`` or ``"compact"``: torch's
      precision/memory trade-off of its kernels (torchlike accumulates every intermediate in
      ``acc_dtype`` whatever the policy: see DIFFERENCES.md).
    - ``acc_dtype``: the accumulation dtype (None: float32 for float16/bfloat16 input under
      ``acc_policy="auto"``, else the input's dtype).
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: _dtype.dtype | None = None

    def __post_init__(self):
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None
                or (isinstance(self.batch_chunk_size, int) and self.batch_chunk_size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got "
                             f"{self.batch_chunk_size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in _ACC_DTYPES:
            raise ValueError(f"acc_dtype must be one of {{None, torch.float16, torch.bfloat16, "
                             f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass "
                             "acc_dtype=None to let the op pick automatically.")

    @staticmethod
    def _ceil_div(a, b):
        return -(-a // b)

    @staticmethod
    def _resolve_auto_acc_dtype(dtype, device):
        """float32 for float16/bfloat16 input (every jax backend has a mixed-precision
        matmul); None otherwise (the caller keeps the input's dtype)."""
        if device is None or dtype not in (_dtype.float16, _dtype.bfloat16):
            return None
        return _dtype.float32

    def _compute_batch_chunk_size(self, num_batches, in_features, num_classes, method=None):
        method = str(method if method is not None else self.chunking_method)
        if method.startswith("aspect_ratio"):
            factor = int(method.split(":", 1)[1]) if ":" in method else 1
            inc_factor = self._ceil_div(num_classes, in_features)
            target = self._ceil_div(num_batches, inc_factor)
            chunk_size = 1 << (target - 1).bit_length()  # the next power of 2 >= target
            return min(chunk_size // factor, num_batches)
        raise AssertionError(f"unhandled chunking_method: {method!r}")

    def _adjust(self, num_batches, in_features, num_classes, dtype, device=None):
        """These options resolved for one call: the "auto" sentinels and the None defaults
        made concrete (ValueError when batch_chunk_size and chunking_method disagree)."""
        acc_policy = self.acc_policy
        chunking_method = self.chunking_method
        # an explicit batch_chunk_size turns the automatic chunking off
        if chunking_method == "auto" and self.batch_chunk_size is not None:
            chunking_method = None
        if acc_policy == "auto" or chunking_method == "auto":
            ap, cm = (_AUTO_DEFAULTS.get((device.type, dtype), _AUTO_FALLBACK)
                      if device is not None else _AUTO_FALLBACK)
            if acc_policy == "auto":
                acc_policy = ap
            if chunking_method == "auto":
                chunking_method = cm
        batch_chunk_size = (num_batches if self.batch_chunk_size is None
                            else min(self.batch_chunk_size, num_batches))
        if chunking_method is not None:
            batch_chunk_size = self._compute_batch_chunk_size(num_batches, in_features,
                                                              num_classes, chunking_method)
            if self.batch_chunk_size is not None and self.batch_chunk_size != batch_chunk_size:
                raise ValueError(
                    f"batch_chunk_size (={self.batch_chunk_size}) and chunking_method "
                    f"('{chunking_method}') give different chunk sizes ({self.batch_chunk_size} "
                    f"vs {batch_chunk_size}); pass only one.")
        if self.acc_dtype is None:
            auto_acc = (self._resolve_auto_acc_dtype(dtype, device)
                        if self.acc_policy == "auto" else None)
            acc_dtype = auto_acc if auto_acc is not None else dtype
        else:
            acc_dtype = self.acc_dtype
        return dataclasses.replace(self, acc_policy=acc_policy, chunking_method=chunking_method,
                                   batch_chunk_size=max(1, batch_chunk_size),
                                   acc_dtype=acc_dtype)
