"""A rank that fails (plain Python, no torchlike): rank 1 raises while rank 0 sleeps; the
launcher must end rank 0 and name rank 1."""
import os
import time

if os.environ["RANK"] == "1":
    raise ValueError("rank 1 failed on purpose")
time.sleep(120)
