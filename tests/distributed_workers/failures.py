"""Failure modes of a torchlike job: ``diverge`` (only rank 0 calls a collective: the watchdog
ends it after the group timeout) and ``crash`` (rank 1 raises while rank 0 waits in a barrier:
the launcher ends rank 0)."""
import datetime
import sys
import time

import torchlike as torch

dist = torch.distributed
mode = sys.argv[1]
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=3))
r = dist.get_rank()
t = torch.ones(3)
dist.all_reduce(t)
if mode == "diverge":
    if r == 0:
        dist.all_reduce(t)
        print("rank 0 passed a collective rank 1 never called", flush=True)
    else:
        time.sleep(120)
elif mode == "crash":
    if r == 1:
        raise ValueError("rank 1 failed on purpose")
    time.sleep(120)
