"""``torch.__config__``: how this build was made, as text (``show``, ``parallel_info``).

torchlike has no C++ build of its own: the text names the JAX, jaxlib and numpy it runs on and
the XLA backend and devices it computes with.
"""
from __future__ import annotations

__all__ = ["show", "parallel_info"]


def _versions():
    import jax
    import jaxlib
    import numpy as np
    from .version import __version__
    return __version__, jax.__version__, jaxlib.__version__, np.__version__


def show():
    """The build's configuration, as torch prints it (``print(torch.__config__.show())``)."""
    import jax
    tl, jx, jl, npv = _versions()
    devices = ", ".join(sorted({f"{d.platform}:{d.device_kind}" for d in jax.devices()}))
    return (f"torchlike {tl} built with:\n"
            f"  - JAX {jx}, jaxlib {jl} (every kernel is compiled by XLA)\n"
            f"  - NumPy {npv}\n"
            f"  - XLA backend: {jax.default_backend()} ({devices})\n")


def parallel_info():
    """Thread settings, as torch's ``parallel_info()`` lists them."""
    import os
    from . import _runtime
    return (f"ATen/Parallel:\n"
            f"\tat::get_num_threads() : {_runtime.get_num_threads()}\n"
            f"\tat::get_num_interop_threads() : {_runtime.get_num_interop_threads()}\n"
            f"XLA's CPU thread pool (its size is set when the backend starts)\n"
            f"std::thread::hardware_concurrency() : {os.cpu_count()}\n"
            f"Environment variables:\n"
            f"\tOMP_NUM_THREADS : {os.environ.get('OMP_NUM_THREADS', '[not set]')}\n"
            f"ATen parallel backend: XLA\n")


def _cxx_flags():
    return ""
