"""torch's default DDP communication hooks: ``allreduce_hook`` (what DDP does without a hook),
``fp16_compress_hook`` and ``bf16_compress_hook`` (all-reduce in half precision), and the
``*_wrapper`` forms that compress around another hook.

A hook is ``hook(state, bucket) -> torch.futures.Future`` whose value is the bucket's reduced
flat gradient (``bucket.buffer()``'s shape and dtype); DDP writes it back into the
parameters' ``.grad``.
"""
from __future__ import annotations

from ... import distributed_c10d as dist

__all__ = ["GradBucket", "allreduce_hook", "fp16_compress_hook", "bf16_compress_hook",
           "fp16_compress_wrapper", "bf16_compress_wrapper"]


class GradBucket:
    """One bucket of DDP gradients, flattened into ``buffer()`` (torch's ``dist.GradBucket``):
    the parameters in bucket order, their gradients as views of the buffer."""

    def __init__(self, index, buffer, params, is_last):
        self._index, self._buffer, self._params, self._is_last = index, buffer, params, is_last

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def set_buffer(self, buffer):
        self._buffer = buffer

    def is_last(self):
        return self._is_last

    def parameters(self):
        return list(self._params)

    def gradients(self):
        out, off = [], 0
        flat = self._buffer
        for p in self._params:
            k = p.numel()
            out.append(flat[off:off + k].view(p.shape))
            off += k
        return out

    def offsets(self):
        out, off = [], 0
        for p in self._params:
            out.append(off)
            off += p.numel()
        return out


def _allreduce_fut(process_group, tensor):
    group = process_group if process_group is not None else dist.group.WORLD
    tensor.div_(group.size())
    return dist.all_reduce(tensor, group=group, async_op=True).get_future().then(
        lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """Average the bucket over the group: divide, then all-reduce (SUM)."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    group = process_group if process_group is not None else dist.group.WORLD
    size = group.size()
    buffer = bucket.buffer()
    compressed = buffer.to(dtype).div_(size)
    fut = dist.all_reduce(compressed, group=group, async_op=True).get_future()

    def decompress(fut):
        decompressed = bucket.buffer()
        decompressed.copy_(fut.value()[0])
        return decompressed
    return fut.then(decompress)


def fp16_compress_hook(process_group, bucket):
    """Average the bucket in float16 (cast, divide, all-reduce, cast back)."""
    from .... import float16
    return _compress_hook(float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """Average the bucket in bfloat16 (cast, divide, all-reduce, cast back)."""
    from .... import bfloat16
    return _compress_hook(bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    def wrapper(hook_state, bucket):
        buffer = bucket.buffer()
        bucket.set_buffer(buffer.to(dtype))
        fut = hook(hook_state, bucket)

        def decompress(fut):
            buffer.copy_(fut.value())
            return buffer
        return fut.then(decompress)
    return wrapper


def fp16_compress_wrapper(hook):
    from .... import float16
    return _compress_wrapper(float16, hook)


def bf16_compress_wrapper(hook):
    from .... import bfloat16
    return _compress_wrapper(bfloat16, hook)
