"""torchlike.mps: Apple's Metal backend is not a jax backend here; every query says so."""
from __future__ import annotations

__all__ = ["is_available", "device_count", "synchronize", "manual_seed", "seed",
           "empty_cache", "current_allocated_memory", "driver_allocated_memory",
           "recommended_max_memory", "set_per_process_memory_fraction"]



def is_available():
    return False


def device_count():
    return 0


def synchronize():
    raise RuntimeError("Cannot execute deviceSynchronize() without MPS backend.")


def manual_seed(seed):
    """Seeds nothing: there is no MPS generator (torch's CPU build does the same)."""


def seed():
    pass


def empty_cache():
    raise RuntimeError("Cannot execute emptyCache() without MPS backend.")


def current_allocated_memory():
    raise RuntimeError("Cannot execute getCurrentAllocatedMemory() without MPS backend.")


def driver_allocated_memory():
    raise RuntimeError("Cannot execute getDriverAllocatedMemory() without MPS backend.")


def recommended_max_memory():
    raise RuntimeError("Cannot execute getRecommendedMaxMemory() without MPS backend.")


def set_per_process_memory_fraction(fraction):
    raise RuntimeError("Cannot execute setMemoryFraction() without MPS backend.")
