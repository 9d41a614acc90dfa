"""How ``import torchlike`` configures jax: 64-bit types and the persistent compilation cache.

64-bit: torch's int64/float64 need ``jax_enable_x64`` (README "Dtype policy").

Compilation cache: every new (op, shape) compiles an XLA program. jax's persistent cache keeps
the compiled programs on disk, so a second run of the same script (or the second pytest-xdist
worker) loads them instead of compiling again. torchlike turns it on, for programs of any size,
in ``$TORCHLIKE_CACHE_DIR`` (default ``$XDG_CACHE_HOME/torchlike/xla``, i.e.
``~/.cache/torchlike/xla``). ``TORCHLIKE_COMPILATION_CACHE=0`` turns it off; a cache directory
the user already gave jax (``JAX_COMPILATION_CACHE_DIR`` or ``jax.config``) is left alone.
jax writes entries atomically, so concurrent processes may share the directory.
"""
from __future__ import annotations

import os

import jax

__all__ = ["configure", "compilation_cache_dir", "cache_subdir"]

_DISABLED = ("0", "false", "off", "no")


def compilation_cache_dir():
    """The directory torchlike's persistent compilation cache uses, or None when it is off."""
    if os.environ.get("TORCHLIKE_COMPILATION_CACHE", "1").lower() in _DISABLED:
        return None
    d = os.environ.get("TORCHLIKE_CACHE_DIR")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "torchlike", "xla")
    return d


def cache_subdir(name, *switches):
    """``<cache dir>/<name>`` beside the compilation cache (``xla``), created; None when the
    compilation cache is off, when one of the environment variables ``switches`` turns this
    directory off, or when it cannot be created."""
    d = compilation_cache_dir()
    if d is None or any(os.environ.get(v, "1").lower() in _DISABLED for v in switches):
        return None
    d = d.rstrip(os.sep)
    d = os.path.join(os.path.dirname(d) if os.path.basename(d) == "xla" else d, name)
    try:
        os.makedirs(d, exist_ok=True)
    except OSError:
        return None
    return d


def configure():
    jax.config.update("jax_enable_x64", True)
    if jax.config.jax_compilation_cache_dir:
        return                      # the user's own jax cache configuration wins
    d = compilation_cache_dir()
    if d is None:
        return
    try:
        os.makedirs(d, exist_ok=True)
    except OSError:
        return                      # read-only home: run without the cache
    jax.config.update("jax_compilation_cache_dir", d)
    # torchlike's programs are small: cache them all, however quick their compile was
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
