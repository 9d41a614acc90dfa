"""torch._dynamo._trace_wrapped_higher_order_op: ``TransformGetItemToIndex``, the function mode
torch's flex attention runs score functions under (``tensor[idx_tensor]`` read as an index op
that its tracer can take). torchlike's indexing takes tensor indices as they are, so entering
it changes nothing."""
from __future__ import annotations

__all__ = ["TransformGetItemToIndex"]


class TransformGetItemToIndex:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
