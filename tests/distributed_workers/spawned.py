"""torchlike.multiprocessing.spawn: two processes, torch's tutorial setup, one all_reduce."""
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
    torch.distributed.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(run, args=(2, sys.argv[1]), nprocs=2, join=True)
