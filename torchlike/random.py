"""torchlike.random: torch.random's seeding helpers over the default Generator."""
import contextlib

from ._random import (default_generator, get_rng_state, initial_seed, manual_seed,  # noqa
                      seed, set_rng_state)

__all__ = ["manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "fork_rng",
           "default_generator"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """Restore the default generator's state on exit (what the block drew is forgotten)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
