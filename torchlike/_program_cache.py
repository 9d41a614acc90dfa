"""Compiled programs on disk under torchlike's own key: the compiled tier's warm start.

When a signature leaves the interpreter tier (its ``INTERPRET_CALLS + 1``-th call,
``torchlike._tiers``) its jaxpr is already known: the interpreter traced it. Its key hashes that
jaxpr's text and constants, the input signature, the jax and jaxlib versions, the backend
(platform, its version, the device kind), 64-bit mode, ``XLA_FLAGS`` and this file format. If the
directory holds an executable under the key it is deserialized and runs the call at once (about
2-8 ms, where jax's own persistent cache still traces and lowers, 20-35 ms, and an empty cache
compiles, 10-300 ms); jax.jit then builds its fast path for the signature in a background thread
and later calls switch to it. Otherwise the call compiles through jax.jit and the executable is
written under the key.

Entries live in ``<cache dir>/programs`` (beside jax's cache, ``$TORCHLIKE_CACHE_DIR``; off with
``TORCHLIKE_PROGRAM_CACHE=0`` or with the compilation cache, ``TORCHLIKE_COMPILATION_CACHE=0``). Each file starts with a header naming
its format and versions and the program's sha256: a foreign, stale or damaged entry is ignored
and removed, never loaded (XLA crashes on a damaged executable).
Writes go to a temporary file renamed into place (atomic, safe across processes); past
``$TORCHLIKE_PROGRAM_CACHE_MB`` (default 1024) the oldest entries are removed.
"""
from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import tempfile
import threading

import jax
import numpy as np

__all__ = ["directory", "key", "load", "save", "discard", "warm", "stats"]

_FORMAT = 1
_MAGIC = b"torchlike-program\n"
MAX_BYTES = int(float(os.environ.get("TORCHLIKE_PROGRAM_CACHE_MB", "1024")) * (1 << 20))
_stats = {"loaded": 0, "saved": 0, "ignored": 0}
_lock = threading.Lock()
_dir = []                   # [path or None], decided on first use
_writes = [0]
_pool = []


def directory():
    """Where programs are kept, or None when the compilation cache is off."""
    if not _dir:
        from ._jax_config import cache_subdir
        _dir.append(cache_subdir("programs", "TORCHLIKE_PROGRAM_CACHE"))
    return _dir[0]


def stats():
    """``{"loaded", "saved", "ignored"}``: executables loaded from disk, written, and entries
    ignored (foreign versions, corrupt files, programs that failed to load)."""
    with _lock:
        return dict(_stats)


def _header():
    dev = jax.devices()[0]
    return {"format": _FORMAT, "jax": jax.__version__,
            "jaxlib": getattr(jax.lib, "__version__", None) or _jaxlib_version(),
            "platform": dev.platform, "device_kind": dev.device_kind,
            "platform_version": dev.client.platform_version,
            "x64": bool(jax.config.jax_enable_x64), "xla_flags": os.environ.get("XLA_FLAGS", "")}


def _jaxlib_version():
    import jaxlib
    return jaxlib.__version__


_header_cache = []


def _header_bytes():
    if not _header_cache:
        _header_cache.append(json.dumps(_header(), sort_keys=True).encode())
    return _header_cache[0]


def key(jaxpr, donate=()):
    """The entry name of ``jaxpr`` (a ClosedJaxpr): a hash of every equation with all its
    parameters, its constants and input types, the arguments its program donates, and the
    versions in the header. Parameters that print as addresses (functions) make names that
    never match: a miss, never a wrong hit."""
    h = hashlib.sha256(_header_bytes())
    if donate:              # (a program that takes over its inputs is another program)
        h.update(f"donate{tuple(donate)}".encode())
    h.update(jaxpr.jaxpr.pretty_print(source_info=False, name_stack=False,
                                      custom_pp_eqn_rules=False).encode())
    h.update(repr([(a.shape, str(a.dtype), a.weak_type) for a in jaxpr.in_avals]).encode())
    for c in jaxpr.consts:
        a = np.asarray(c)
        h.update(f"{a.dtype}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _ignore(path):
    with _lock:
        _stats["ignored"] += 1
    try:
        os.remove(path)
    except OSError:
        pass


_local = threading.local()


def _on_event(event, **_kw):
    if event == "/jax/compilation_cache/cache_hits":
        _local.hits = getattr(_local, "hits", 0) + 1


jax.monitoring.register_event_listener(_on_event)


def jax_cache_hits():
    """How many programs this thread took from jax's persistent cache. An executable jax loaded
    from its cache is not written here: serialized again, it fails to run in another process
    ("Function ... not found"), so only programs this process compiled are kept."""
    return getattr(_local, "hits", 0)


def discard(name):
    """Remove the entry ``name`` (it loaded but did not run)."""
    d = directory()
    if d is not None:
        _ignore(os.path.join(d, name))


def load(name, in_tree, out_tree):
    """The executable stored under ``name``, or None (absent, foreign or corrupt)."""
    d = directory()
    if d is None:
        return None
    path = os.path.join(d, name)
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError:
        return None
    head = _MAGIC + _header_bytes() + b"\n"
    if not blob.startswith(head):
        _ignore(path)               # another format or other versions: never run it
        return None
    digest, payload = blob[len(head):len(head) + 64], blob[len(head) + 65:]
    if hashlib.sha256(payload).hexdigest().encode() != digest:
        _ignore(path)               # damaged: XLA would crash loading it, never try
        return None
    from jax.experimental import serialize_executable
    try:
        exe = serialize_executable.deserialize_and_load(payload, in_tree, out_tree)
    except Exception:
        _ignore(path)
        return None
    with _lock:
        _stats["loaded"] += 1
    try:
        os.utime(path)              # recently used: kept longest when the bound is reached
    except OSError:
        pass
    return exe


def save(name, jitted, args):
    """Write the executable ``jitted`` compiled for ``args`` (already compiled: jax's
    compilation cache answers ``lower().compile()`` without compiling again)."""
    d = directory()
    if d is None:
        return
    from jax.experimental import serialize_executable
    try:
        payload = serialize_executable.serialize(jitted.lower(*args).compile())[0]
    except Exception:               # not serializable on this backend: run without the cache
        return
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-")
        with os.fdopen(fd, "wb") as f:
            f.write(_MAGIC + _header_bytes() + b"\n")
            f.write(hashlib.sha256(payload).hexdigest().encode() + b"\n")
            f.write(payload)
        os.replace(tmp, os.path.join(d, name))
    except OSError:
        return
    with _lock:
        _stats["saved"] += 1
        _writes[0] += 1
        check = _writes[0] % 64 == 1
    if check:
        _bound(d)


def _bound(d):
    """Remove the least recently used entries while the directory is over ``MAX_BYTES``."""
    try:
        entries = []
        total = 0
        for e in os.scandir(d):
            if e.is_file():
                st = e.stat()
                entries.append((st.st_mtime, st.st_size, e.path))
                total += st.st_size
    except OSError:
        return
    if total <= MAX_BYTES:
        return
    entries.sort()
    for _mtime, size, path in entries:
        if total <= MAX_BYTES * 3 // 4:
            break
        try:
            os.remove(path)
            total -= size
        except OSError:
            pass


def warm(fn, urgent=False):
    """Run ``fn`` (jax.jit's first call of a signature, a background compile) in the background
    thread; a future of its result. ``urgent``: before every waiting one that is not (a fused
    eager segment's program, which replaces the per-op programs of its calls: queued behind
    them, the segment would replay op by op until they all compiled). At exit the queued ones
    are dropped (the running one finishes): a script that ends does not wait for programs it
    will not run."""
    if not _pool:
        with _lock:
            if not _pool:
                pool = concurrent.futures.ThreadPoolExecutor(
                    1, thread_name_prefix="torchlike-warm")
                _pool.append(pool)
                # (threading's exit hooks run in reverse order: this one before the pool's
                # own, which would run every queued item)
                hook = getattr(threading, "_register_atexit", None)
                if hook is not None:
                    hook(lambda: (pool.shutdown(wait=False, cancel_futures=True), _drop()))
    fut = concurrent.futures.Future()
    with _lock:
        _queued[0 if urgent else 1].append((fn, fut))
    _pool[0].submit(_run_next)      # (one run per item: each takes the most urgent waiting)
    return fut


_queued = ([], [])          # (urgent, other) items (fn, future) waiting for the thread


def _drop():
    """Cancel what is still queued (at exit: a reader of its future gets CancelledError)."""
    with _lock:
        items = _queued[0] + _queued[1]
        _queued[0].clear()
        _queued[1].clear()
    for _fn, fut in items:
        fut.cancel()


def _run_next():
    with _lock:
        q = _queued[0] or _queued[1]
        if not q:
            return
        fn, fut = q.pop(0)
    if not fut.set_running_or_notify_cancel():
        return
    try:
        fut.set_result(fn())
    except BaseException as e:      # noqa: BLE001 (handed to whoever reads the future)
        fut.set_exception(e)


def wait(timeout=None):
    """Wait for everything handed to ``warm`` so far (one thread runs the urgent items first,
    the others in order: a marker queued now runs after them all). False if ``timeout``
    seconds passed first."""
    if not _pool:
        return True
    try:
        warm(lambda: None).result(timeout)
    except concurrent.futures.TimeoutError:
        return False
    except RuntimeError:            # (the pool is shut down: at exit)
        pass
    return True
