"""Regenerate ``not_yet.py``: torch names torchlike still lacks, keeping the reasons written so
far and giving new entries the reason of the first matching rule below.

Run ``python tests/surface/list_missing.py`` after adding or removing names.
"""
from __future__ import annotations

import os
import pprint
import re
import sys

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)

RULES = [
    (r"^torch\.cuda\.(graph|CUDAGraph|graphs|make_graphed|is_current_stream_capturing|"
     r"caching_allocator|memory_snapshot|_|MemPool|use_mem_pool|change_current_allocator|"
     r"CUDAPluggableAllocator|get_allocator_backend|host_memory|jiterator|nvtx|tunable|"
     r"gds|comm|sparse|ExternalStream|StreamContext|cudart|check_error|nccl|profiler)",
     "CUDA graphs / allocator / driver APIs: no jax counterpart"),
    (r"^torch\.cuda\.", "CUDA runtime detail with no jax counterpart yet"),
    (r"^torch\.backends\.", "backend switch with no XLA counterpart yet"),
    (r"^torch\.accelerator\.", "accelerator runtime detail with no jax counterpart yet"),
    (r"^torch\.jit\.", "TorchScript internals: torchlike has no TorchScript"),
    (r"^torch\.compiler\.", "torch.compile (dynamo/inductor) internal knob"),
    (r"^torch\.profiler\.", "profiler detail beyond record_function regions"),
    (r"^torch\.utils\.checkpoint\.", "selective activation checkpointing API"),
    (r"^torch\.utils\.data\.", "DataPipes / dataset helpers not provided yet"),
    (r"^torch\.serialization\.", "serialization internals"),
    (r"^torch\.autograd\.(Profiler|profiler)", "autograd profiler internals"),
    (r"^torch\.autograd\.", "autograd API not provided yet"),
    (r"^torch\.(uint16|uint32|uint64|bit|chalf)$", "dtype not supported yet"),
    (r"^torch\.Tensor\.", "Tensor method not provided yet"),
    (r"^torch\.nn\.functional\.", "nn.functional op not provided yet"),
    (r"^torch\.nn\.init\.", "deprecated init alias not provided yet"),
    (r"^torch\.nn\.", "nn API not provided yet"),
    (r"^torch\.linalg\.", "linalg function not provided yet"),
    (r"^torch\.(func|fft|special|distributions|optim|random|amp|testing)\.",
     "not provided yet"),
    (r"", "not provided yet"),
]


def reason(full):
    for pat, why in RULES:
        if re.search(pat, full):
            return why
    return "not provided yet"


def main():
    import test_surface as T
    try:
        from not_yet import NOT_YET as OLD
    except ImportError:
        OLD = {}
    out = {}
    for ns, names in sorted(T.TORCH.items()):
        obj = T._resolve(ns)
        miss = [n for n in names if not T._internal(n) and not T._has(obj, n)]
        if miss:
            out[ns] = {n: OLD.get(ns, {}).get(n) or reason(f"{ns}.{n}") for n in sorted(miss)}
    path = os.path.join(HERE, "not_yet.py")
    head = open(path).read().split("NOT_YET = ")[0]
    with open(path, "w") as f:
        f.write(head + "NOT_YET = " + pprint.pformat(out, width=99, sort_dicts=True) + "\n")
    print({k: len(v) for k, v in out.items()})


if __name__ == "__main__":
    main()
