"""torchlike.multiprocessing.spawn: two processes, torch's tutorial setup, one all_reduce; then
rank 1 raises while rank 0 waits in a barrier: spawn ends rank 0 and raises rank 1's error.
Prints the children's pids first (``PIDS [..]``)."""
import json
import os
import sys

import torchlike as torch
import torchlike.multiprocessing as mp


def run(rank, world_size, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "1"         # jax's coordinator was set up by spawn
    torch.distributed.init_process_group("gloo", rank=rank, world_size=world_size)
    t = torch.tensor([1.0, 2.0]) * (rank + 1)
    torch.distributed.all_reduce(t)
    with open(f"{out}.rank{rank}.json", "w") as f:
        json.dump({"rank": torch.distributed.get_rank(), "sum": t.tolist()}, f)
    if rank == 1:
        raise ValueError("rank 1 failed on purpose")
    torch.distributed.barrier()


if __name__ == "__main__":
    ctx = mp.spawn(run, args=(2, sys.argv[1]), nprocs=2, join=False)
    print("PIDS " + json.dumps(ctx.pids()), flush=True)
    while not ctx.join():
        pass
