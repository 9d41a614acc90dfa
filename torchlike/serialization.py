"""``torchlike.save`` / ``torchlike.load`` in PyTorch's checkpoint format, without torch.

The format (torch >= 1.6) is a zip archive, every record stored uncompressed under one prefix
(``archive/``):

* ``data.pkl``   the pickled object (protocol 2). Each tensor is pickled as
  ``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)``,
  where ``storage`` is a *persistent id* ``('storage', torch.FloatStorage, key, 'cpu', numel)``;
* ``data/<key>`` the raw little-endian bytes of each storage (64-byte aligned, as torch does);
* ``byteorder``, ``version``, ``.format_version``, ``.storage_alignment``,
  ``.data/serialization_id``.

Saving emits only globals on torch's ``weights_only`` allowlist (``collections.OrderedDict``,
``torch._utils._rebuild_tensor_v2``/``_rebuild_parameter``, ``torch.<X>Storage``, dtypes,
``torch.Size``, ``torch.device``), so real ``torch.load(..., weights_only=True)`` accepts the
file. Loading maps those torch globals to torchlike's own rebuild functions; torch is never
imported. ``load`` defaults to ``weights_only=True``: a restricted unpickler (an opcode loop of
its own, never ``pickle``'s ``find_class``) accepts only the allowlist plus the globals given to
``add_safe_globals`` / ``safe_globals``; anything else raises ``pickle.UnpicklingError`` with
torch's message.

``load`` also reads torch's legacy (pre-1.6) format, a stream of pickles (magic number,
protocol version, system info, the object, its storage keys) followed by each storage's element
count and bytes: the object's pickle is first scanned with inert globals (nothing imported or
run) for its storages' types, then, with the storages read, unpickled as ``data.pkl`` is.

Files: ``save`` to a path writes a temporary file next to the (symlink-resolved) target and
renames it over the target, keeping the target's permission bits (a new file gets
``0o666 & ~umask`` as ``open()`` would); where torch would write in place and a rename cannot
stand in for that (a hard-linked or non-regular target, a folder we may not create files in)
it writes in place as torch does. ``load`` checks every record's CRC, refuses duplicate records,
bounds every read by the declared record sizes (and a deflated record by deflate's maximum
ratio), and keeps a stride-0 (expanded) tensor as an ``expand`` view of its small storage.
"""
from __future__ import annotations

import _compat_pickle
import codecs
import enum
import errno
import io
import math
import mmap as _mmap
import os
import pickle
import pickletools
import random
import struct
import sys
import tarfile
import threading
import types
import typing
import warnings
import zipfile
from collections import Counter, OrderedDict
from struct import unpack

import jax
import jax.numpy as jnp
import numpy as np

from . import _dtype as D
from ._device import device as _device
from ._strides import contiguous_strides
from ._tensor import Size, Tensor
from .autograd.grad_mode import no_grad as _no_grad

__all__ = ["save", "load", "DEFAULT_PROTOCOL", "LoadEndianness", "SourceChangeWarning",
           "StorageType", "add_safe_globals", "clear_safe_globals", "get_safe_globals",
           "safe_globals", "get_unsafe_globals_in_checkpoint", "get_default_load_endianness",
           "set_default_load_endianness", "get_crc32_options", "set_crc32_options",
           "get_default_mmap_options", "set_default_mmap_options", "default_restore_location",
           "location_tag", "normalize_storage_type", "validate_cuda_device",
           "check_module_version_greater_or_equal", "register_package", "skip_data",
           "UNSAFE_MESSAGE", "MAGIC_NUMBER", "PROTOCOL_VERSION", "STORAGE_KEY_SEPARATOR",
           "MAP_PRIVATE", "MAP_SHARED", "LONG_SIZE", "INT_SIZE", "SHORT_SIZE", "FileLike",
           "MAP_LOCATION", "STORAGE", "IS_WINDOWS"]

# the type aliases of torch's signatures (libraries annotate with them: pyro's param store)
FileLike = typing.Union[str, os.PathLike, typing.IO[bytes]]
MAP_LOCATION = typing.Optional[typing.Union[
    typing.Callable[[object, str], object], _device, str, dict]]
STORAGE = object
IS_WINDOWS = sys.platform == "win32"

DEFAULT_PROTOCOL = 2
_ALIGN = 64
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
MAGIC_NUMBER = _LEGACY_MAGIC
PROTOCOL_VERSION = 1001
STORAGE_KEY_SEPARATOR = ","
LONG_SIZE = struct.Struct("=l").size
INT_SIZE = struct.Struct("=i").size
SHORT_SIZE = struct.Struct("=h").size
MAP_PRIVATE = getattr(_mmap, "MAP_PRIVATE", 2)
MAP_SHARED = getattr(_mmap, "MAP_SHARED", 1)
_MIN_VERSION, _MAX_VERSION = 1, 10          # the record versions torch 2.13 reads

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
    "likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
    "file from a trusted source.")
_DOCS_MESSAGE = (
    "\n\nCheck the documentation of torch.load to learn more about types accepted by default with "
    "weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
_MINIZ_TAIL = (" This is an internal miniz error. If you are seeing this error, there is a high "
               "likelihood that your checkpoint file is corrupted. This can happen if the "
               "checkpoint was not saved properly, was transferred incorrectly, or the file was "
               "modified after saving.")
_CPU_ONLY = ("If you are running on a CPU-only machine, please use torch.load with "
             "map_location=torch.device('cpu') to map your storages to the CPU.")

# torch storage class name <-> dtype
_STORAGE_DTYPES = {
    "DoubleStorage": D.float64, "FloatStorage": D.float32, "HalfStorage": D.float16,
    "BFloat16Storage": D.bfloat16, "LongStorage": D.int64, "IntStorage": D.int32,
    "ShortStorage": D.int16, "CharStorage": D.int8, "ByteStorage": D.uint8,
    "BoolStorage": D.bool, "ComplexFloatStorage": D.complex64,
    "ComplexDoubleStorage": D.complex128,
}
_DTYPE_STORAGE = {d.name: n for n, d in _STORAGE_DTYPES.items()}
# dtypes torch has and torchlike does not (yet): loading a tensor of one raises a clear error
_TORCH_ONLY_DTYPES = ("complex32", "float4_e2m1fn_x2", "qint8", "quint8", "qint32", "quint4x2",
                      "quint2x4",
                      "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16", "int1", "int2",
                      "int3", "int4", "int5", "int6", "int7", "uint1", "uint2", "uint3",
                      "uint4", "uint5", "uint6", "uint7")


class SourceChangeWarning(Warning):
    pass


# ============================================================================ options
class LoadEndianness(enum.Enum):
    NATIVE = 1
    LITTLE = 2
    BIG = 3


class _Config:
    endianness = None
    mmap = False
    mmap_flags = MAP_PRIVATE
    compute_crc32 = True


_config = _Config()


def get_default_load_endianness():
    """The byte order assumed for a checkpoint without a ``byteorder`` record (None: little)."""
    return _config.endianness


def set_default_load_endianness(endianness):
    if not isinstance(endianness, LoadEndianness) and endianness is not None:
        raise TypeError("Invalid argument type in function set_default_load_endianness")
    _config.endianness = endianness


def get_crc32_options():
    return _config.compute_crc32


def set_crc32_options(compute_crc32):
    """torch skips the CRC32 of each record when False; torchlike always writes a correct one
    (Python's zipfile computes it), which every reader accepts."""
    _config.compute_crc32 = bool(compute_crc32)


def get_default_mmap_options():
    return _config.mmap_flags


class set_default_mmap_options:
    """Context manager or function setting the flags ``load(mmap=True)`` maps the file with."""

    def __init__(self, flags):
        if flags != MAP_PRIVATE and flags != MAP_SHARED:
            raise ValueError("Invalid argument in function set_default_mmap_options, expected "
                             f"mmap.MAP_PRIVATE or mmap.MAP_SHARED, but got {flags}")
        self.prev = _config.mmap_flags
        _config.mmap_flags = flags

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _config.mmap_flags = self.prev


class skip_data:
    """torch's prototype that skips storage bytes: not provided (raises on entry)."""

    def __init__(self, materialize_fake_tensors=False):
        self.materialize_fake_tensors = materialize_fake_tensors

    def __enter__(self):
        raise NotImplementedError("torchlike.serialization.skip_data is not implemented: "
                                  "save and load the whole checkpoint")

    def __exit__(self, *exc):
        return False


def register_package(priority, tagger, deserializer):
    raise NotImplementedError("torchlike.serialization.register_package is not implemented: "
                              "torchlike knows the locations 'cpu' and 'cuda[:i]' only; "
                              "use map_location to remap others")


def check_module_version_greater_or_equal(module, req_version_tuple, error_if_malformed=True):
    version_strs = module.__version__.split(".")
    module_version = tuple(type(req_field)(version_strs[idx])
                           for idx, req_field in enumerate(req_version_tuple)) \
        if all(i < len(version_strs) for i in range(len(req_version_tuple))) else None
    try:
        if module_version is None:
            raise ValueError("not enough fields")
        return module_version >= req_version_tuple
    except Exception as e:
        message = (f"'{module.__name__}' module version string is malformed '{module.__version__}'"
                   f" and cannot be compared with tuple {str(req_version_tuple)}")
        if error_if_malformed:
            raise RuntimeError(message) from e
        warnings.warn(message + ", but continuing assuming that requirement is met", stacklevel=2)
        return True


# ============================================================================ safe globals
_safe_lock = threading.Lock()
_marked_safe = set()


def add_safe_globals(safe_globals):
    """Mark globals (a class/function, or ``(obj, "module.qualname")``) as safe for
    ``load(weights_only=True)``: they can then be named, called, instantiated and built."""
    global _marked_safe
    with _safe_lock:
        _marked_safe = _marked_safe.union(set(safe_globals))


def get_safe_globals():
    """The user-added globals (in no particular order, as torch)."""
    return list(_marked_safe)


def clear_safe_globals():
    global _marked_safe
    with _safe_lock:
        _marked_safe = set()


def _remove_safe_globals(globals_to_remove):
    global _marked_safe
    with _safe_lock:
        _marked_safe = _marked_safe - set(globals_to_remove)


class safe_globals:
    """Context manager adding globals as safe for ``weights_only`` load while it is active."""

    def __init__(self, safe_globals):
        self.safe_globals = safe_globals

    def __enter__(self):
        add_safe_globals(self.safe_globals)

    def __exit__(self, type, value, tb):
        _remove_safe_globals(self.safe_globals)


def _user_allowed_globals():
    rc = {}
    for f in _marked_safe:
        if isinstance(f, tuple):
            if len(f) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got tuple of length: {len(f)}")
            if type(f[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full "
                                f"path, but got: {type(f[1])}")
            f, name = f
            rc[name] = f
        else:
            rc[f"{f.__module__}.{f.__qualname__}"] = f
    return rc


# ============================================================================ saving
class _TorchGlobal:
    """A reference to a torch global, pickled as the GLOBAL opcode ``module\\nname``."""

    __slots__ = ("module", "name")
    _cache: dict = {}

    def __new__(cls, module, name):
        key = (module, name)
        g = cls._cache.get(key)
        if g is None:
            g = object.__new__(cls)
            g.module, g.name = module, name
            cls._cache[key] = g
        return g

    def __repr__(self):
        return f"{self.module}.{self.name}"

    def __call__(self, *args):      # pickle insists that a reduce function be callable
        raise TypeError(f"{self!r} is a placeholder for a torch global")


_REBUILD_V2 = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
_REBUILD_V3 = _TorchGlobal("torch._utils", "_rebuild_tensor_v3")
_UNTYPED = _TorchGlobal("torch.storage", "UntypedStorage")


def _rebuild(ref, offset, size, stride, requires_grad):
    """The reduce tuple torch writes for a tensor over ``ref``: ``_rebuild_tensor_v2`` with a
    typed storage, or for a dtype without a storage class (uint16, uint32, uint64)
    ``_rebuild_tensor_v3`` with an untyped storage and the dtype."""
    args = (ref, offset, size, stride, requires_grad, OrderedDict())
    if ref.dtype.name in _DTYPE_STORAGE:
        return (_REBUILD_V2, args)
    return (_REBUILD_V3, args + (ref.dtype,))
_REBUILD_PARAM = _TorchGlobal("torch._utils", "_rebuild_parameter")


def _storage_layout(arr, stride):
    """The storage a tensor of values ``arr`` and strides ``stride`` is written with: its
    elements in the order of its strides where they describe a dense layout (a transposed or
    channels-last tensor keeps its strides, as torch saves it), else in C order with
    contiguous strides."""
    shape = arr.shape
    order = sorted(range(arr.ndim), key=lambda k: -stride[k])
    expect, dense = 1, True
    for k in reversed(order):
        if shape[k] != 1 and stride[k] != expect:
            dense = False
            break
        expect *= shape[k]
    if dense:
        return np.array(arr.transpose(order).reshape(-1), order="C"), stride
    contiguous, n = [], 1
    for size in reversed(shape):
        contiguous.append(n)
        n *= max(size, 1)
    return np.array(arr.reshape(-1), order="C"), tuple(reversed(contiguous))


class _StorageRef:
    """One tensor's data to be written as ``data/<key>``."""

    __slots__ = ("array", "dtype")

    def __init__(self, array, dtype):
        self.array, self.dtype = array, dtype


def _save_torch_global(pickler, obj):
    pickler.write(pickle.GLOBAL + obj.module.encode() + b"\n" + obj.name.encode() + b"\n")
    pickler.memoize(obj)


class _Pickler(pickle._Pickler):
    """The pure-Python pickler: lets torch globals be written without importing torch."""

    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[_TorchGlobal] = _save_torch_global

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
        self.storages = {}          # key -> _StorageRef
        self._keys = {}             # id(_StorageRef) -> key
        self._root_refs = {}        # id(root tensor) -> _StorageRef of its storage
        self._keep = []             # those roots, alive while pickling

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            key = self._keys.get(id(obj))
            if key is None:
                key = self._keys[id(obj)] = str(len(self._keys))
                self.storages[key] = obj
            if obj.dtype.name not in _DTYPE_STORAGE:
                # an untyped storage counts bytes
                return ("storage", _UNTYPED, key, "cpu", int(obj.array.nbytes))
            storage_type = _TorchGlobal("torch", _DTYPE_STORAGE[obj.dtype.name])
            return ("storage", storage_type, key, "cpu", int(obj.array.size))
        return None

    def reducer_override(self, obj):
        from .nn.parameter import Parameter
        if isinstance(obj, Tensor):
            if isinstance(obj, Parameter):
                # (its data as a tensor over its own storage: a view of it saved with it
                # shares the record)
                plain = obj.detach()
                return (_REBUILD_PARAM, (plain, obj.requires_grad, OrderedDict()))
            if obj.dtype.name not in _DTYPE_STORAGE and obj.dtype not in D.BAREBONES \
                    and obj.dtype not in D.FLOAT8:
                raise pickle.PicklingError(f"cannot save a tensor of dtype {obj.dtype}")
            shared = self._in_root_storage(obj)
            if shared is not None:
                return shared
            arr = np.asarray(obj._data)        # (ascontiguousarray would make 0-d 1-d)
            flat, stride = _storage_layout(arr, tuple(obj.stride()))
            ref = _StorageRef(flat, obj.dtype)
            return _rebuild(ref, 0, tuple(arr.shape), stride, bool(obj.requires_grad))
        if isinstance(obj, Size):
            return (_TorchGlobal("torch", "Size"), (tuple(int(s) for s in obj),))
        if isinstance(obj, _device):
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return (_TorchGlobal("torch", "device"), args)
        return NotImplemented

    def _in_root_storage(self, t):
        """A view, or a tensor that has views, is saved as torch saves it: as a place in its
        root's storage (one record per root, so tensors that share memory share it when
        loaded, and an expanded view keeps its small storage); None for a tensor without views,
        a root with a layout of its own, or a view whose positions are not a strided grid
        (saved as a storage of its own)."""
        a = t._alias
        root = t if a is None else a.root
        if (a is None and not t.__dict__.get("_aliases")) or "_layout" in root.__dict__:
            return None
        from ._storage import alias_index
        idx = None if a is None else alias_index(t)
        if idx is None:                     # (the whole root, as it is)
            if tuple(t._d.shape) != tuple(root._d.shape):
                return None
            off, shape = 0, tuple(t._d.shape)
            strides = contiguous_strides(shape)
        else:
            idx = np.asarray(idx)
            if idx.size == 0:
                return None
            off, shape = int(idx.flat[0]), idx.shape
            strides = []
            for k, n in enumerate(shape):
                pos = [0] * idx.ndim
                pos[k] = 1
                strides.append(int(idx[tuple(pos)]) - off if n > 1 else 0)
            if any(s < 0 for s in strides):
                return None
            grid = off + sum(np.arange(n).reshape([-1 if i == k else 1 for i in range(idx.ndim)])
                             * s for k, (n, s) in enumerate(zip(shape, strides)))
            if not np.array_equal(np.broadcast_to(grid, shape), idx):
                return None
            # (a size-1 dim's stride: torch's, from the view's own strides)
            strides = [s if n > 1 else c for n, s, c in zip(shape, strides, t.stride())]
        ref = self._root_refs.get(id(root))
        if ref is None:
            rarr = np.asarray(root._data)
            ref = _StorageRef(np.array(rarr.reshape(-1), order="C"), root.dtype)
            self._root_refs[id(root)] = ref
            self._keep.append(root)
        return _rebuild(ref, off, tuple(shape), tuple(strides), bool(t.requires_grad))

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, D.dtype):
            obj = _TorchGlobal("torch", obj.name)
        super().save(obj, save_persistent_id)

    def save_global(self, obj, name=None):
        # (torch pickles with the C pickler, which refuses a class or function defined inside
        # a function with this AttributeError; the pure-Python one raises a PicklingError)
        qual = getattr(obj, "__qualname__", None)
        if name is None and isinstance(qual, str) and "<locals>" in qual:
            raise AttributeError(f"Can't pickle local object {qual!r}")
        super().save_global(obj, name)

    dispatch[types.FunctionType] = save_global


def _aligned_info(zf, name):
    """A ZipInfo whose data starts on a 64-byte boundary (torch pads the same way)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    offset = zf.fp.tell() if hasattr(zf.fp, "tell") else 0
    base = offset + 30 + len(name.encode()) + 4
    pad = (-base) % _ALIGN
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    return info


def _prepare_records(obj, protocol):
    """Pickle ``obj`` (before any file is touched) into the archive's list of records."""
    buf = io.BytesIO()
    pickler = _Pickler(buf, protocol)
    pickler.dump(obj)
    records = [("data.pkl", buf.getvalue()), (".format_version", b"1"),
               (".storage_alignment", str(_ALIGN).encode()), ("byteorder", b"little")]
    for key, ref in pickler.storages.items():
        arr = ref.array
        if arr.dtype.byteorder == ">":
            arr = arr.byteswap().view(arr.dtype.newbyteorder("<"))
        records.append((f"data/{key}", arr.tobytes()))
    records.append(("version", b"3\n"))
    records.append((".data/serialization_id",
                    str(random.getrandbits(128)).zfill(40)[:40].encode()))
    return records


def _emit_records(fileobj, records):
    prefix = "archive/"
    with zipfile.ZipFile(fileobj, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, data in records:
            zf.writestr(_aligned_info(zf, prefix + name), data)


def _write_archive(fileobj, obj, protocol):
    _emit_records(fileobj, _prepare_records(obj, protocol))


def _umask():
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    old = os.umask(0o022)        # no /proc: the classic read-and-restore
    os.umask(old)
    return old


def _open_error(err):
    return RuntimeError(f"[enforce fail at inline_container.cc:747] . open file failed with "
                        f"strerror: {os.strerror(err)}")


def _write_in_place(path, obj, protocol):
    """torch's way: open the target for writing (truncating it) and write the archive."""
    records = _prepare_records(obj, protocol)
    try:
        fh = open(path, "wb")
    except OSError as e:
        raise _open_error(e.errno or errno.EACCES) from None
    with fh:
        _emit_records(fh, records)


def _save_path(path, obj, protocol):
    real = os.path.realpath(path)          # write through a symlink, as torch does
    folder = os.path.dirname(real) or "."
    if not os.path.isdir(folder):
        raise RuntimeError(f"Parent directory {os.path.dirname(os.path.abspath(path))} does "
                           f"not exist.")
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise _open_error(e.errno or errno.EACCES) from None
    if st is not None:
        import stat as _stat
        if _stat.S_ISDIR(st.st_mode):
            raise _open_error(errno.EISDIR)
        if not os.access(real, os.W_OK):
            raise _open_error(errno.EACCES)            # a read-only target, as torch refuses it
        if not _stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
            # a device, FIFO or hard-linked file: a rename would replace it, torch writes into it
            return _write_in_place(real, obj, protocol)
    base = os.path.basename(real)
    tmp = fd = None
    for _ in range(100):
        name = os.path.join(folder, f".{base}.tmp-{os.getpid()}-{random.getrandbits(40):010x}")
        try:
            # mode 0o666: the kernel applies the umask, exactly as for open(path, "wb")
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                         0o666)
            tmp = name
            break
        except FileExistsError:
            continue
        except OSError as e:
            if st is not None:             # folder not writable, file is: torch writes in place
                return _write_in_place(real, obj, protocol)
            raise _open_error(e.errno or errno.EACCES) from None
    if tmp is None:
        raise _open_error(errno.EEXIST)
    try:
        with os.fdopen(fd, "wb") as fh:
            fd = None
            if st is not None:
                os.chmod(fh.fileno(), st.st_mode & 0o7777)
                if (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
                    try:
                        os.chown(fh.fileno(), st.st_uid, st.st_gid)
                    except OSError:
                        pass
            _write_archive(fh, obj, protocol)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, real)
        tmp = None
        try:                                   # make the rename itself durable
            dfd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError:
            pass
    finally:
        # any exception, KeyboardInterrupt included, removes the temporary file
        if fd is not None:
            os.close(fd)
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Save ``obj`` to ``f`` (a path or a binary file object) in PyTorch's zip format.

    A path is written through a temporary file in the target's folder and renamed over the
    target, so an interrupted save never leaves a half-written checkpoint (a SIGKILL can leave
    the hidden ``.<name>.tmp-*`` file behind; any exception removes it). The target's permission
    bits are kept; a new file gets ``0o666 & ~umask``. A symlink is written through; a read-only
    target raises torch's RuntimeError.
    """
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("torchlike.save writes only the zip format "
                                  "(_use_new_zipfile_serialization=True)")
    if pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError(f"torchlike.save pickles with its own pickler; pickle_module="
                                  f"{getattr(pickle_module, '__name__', pickle_module)!r} is "
                                  f"not supported")
    if _disable_byteorder_record:
        raise NotImplementedError("torchlike.save always writes the byteorder record "
                                  "(_disable_byteorder_record=True is not supported)")
    if isinstance(f, (str, os.PathLike)):
        _save_path(os.fspath(f), obj, pickle_protocol)
    elif hasattr(f, "write"):
        _write_archive(f, obj, pickle_protocol)
    else:
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a "
                             "'write' attribute")


# ============================================================================ loading: storages
class StorageType:
    """What ``torch.FloatStorage`` and friends unpickle to: just the dtype."""

    def __init__(self, name):
        self.name = name
        self._dtype = _STORAGE_DTYPES.get(name, D.uint8)

    @property
    def dtype(self):
        return self._dtype

    def __str__(self):
        return f"StorageType(dtype={self.dtype})"

    __repr__ = __str__


_StorageType = StorageType


class _MissingDtype:
    """A torch dtype torchlike does not have: loading a tensor of it raises."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"


class _LoadedStorage:
    """A storage read from a checkpoint: its bytes (host) and the device it will live on.

    This is what a callable ``map_location(storage, location)`` receives; return it (or
    ``storage.cpu()`` / ``storage.cuda(i)``), or None for the default placement.
    """

    __slots__ = ("raw", "dtype", "byteorder", "device", "_arr", "_roots")

    def __init__(self, raw, dtype, byteorder, device=None):
        self.raw, self.dtype, self.byteorder = raw, dtype, byteorder
        self.device = device if device is not None else _device("cpu")
        self._arr = {}
        self._roots = {}        # (dtype, device) -> the tensor the storage's tensors view

    def nbytes(self):
        return len(self.raw)

    def size(self):
        return len(self.raw) // self.dtype.np.itemsize

    __len__ = size

    def element_size(self):
        return self.dtype.np.itemsize

    def _moved(self, dev):
        out = _LoadedStorage(self.raw, self.dtype, self.byteorder, dev)
        out._arr, out._roots = self._arr, self._roots
        return out

    def cpu(self):
        return self if self.device.type == "cpu" else self._moved(_device("cpu"))

    def cuda(self, device=None, non_blocking=False):
        loc = "cuda" if device is None else (f"cuda:{device}" if isinstance(device, int)
                                             else str(device))
        return self._moved(_restore_device(loc))

    def to(self, device=None, non_blocking=False):
        return self._moved(_restore_device(str(_device(device))))

    def typed(self, dtype):
        """The bytes as a flat numpy array of ``dtype`` (native byte order)."""
        arr = self._arr.get(dtype.name)
        if arr is None:
            npd = dtype.np
            if npd.itemsize > 1 and self.byteorder != sys.byteorder:
                npd = npd.newbyteorder("<" if self.byteorder == "little" else ">")
            if len(self.raw) % npd.itemsize:
                raise RuntimeError(f"checkpoint is corrupt: a storage of {len(self.raw)} bytes "
                                   f"cannot hold elements of {dtype}")
            arr = np.frombuffer(self.raw, dtype=npd)
            if not arr.dtype.isnative:
                arr = arr.astype(dtype.np)
            self._arr[dtype.name] = arr
        return arr

    def __repr__(self):
        return f"torchlike storage of {self.nbytes()} bytes on {self.device}"


def _gpu_devices():
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


def _restore_device(location):
    """torch's default_restore_location for a location tag: the torchlike device."""
    if location == "cpu":
        return _device("cpu")
    import re
    m = re.fullmatch(r"cuda(?::?(\d+))?", location)
    if m is not None or location.startswith("cuda:"):
        if m is None:
            raise RuntimeError(f"Invalid device string: '{location}'")
        index = int(m.group(1) or 0)
        gpus = _gpu_devices()
        if not gpus:
            raise RuntimeError("Attempting to deserialize object on a CUDA device but "
                               "torch.cuda.is_available() is False. " + _CPU_ONLY)
        if index >= len(gpus):
            raise RuntimeError(f"Attempting to deserialize object on CUDA device {index} but "
                               f"torch.cuda.device_count() is {len(gpus)}. Please use "
                               f"torch.load with map_location to map your storages to an "
                               f"existing device.")
        return _device("cuda", index)
    if location == "meta":
        raise NotImplementedError("torchlike cannot load onto the meta device: load with "
                                  "map_location='cpu', then move with .to('meta')")
    if location.startswith("mps"):
        raise RuntimeError("torch.UntypedStorage(): Storage device not recognized: mps")
    raise RuntimeError(f"don't know how to restore data location of "
                       f"torch.storage.UntypedStorage (tagged with {location})")


def default_restore_location(storage, location):
    """``storage`` placed at ``location`` ('cpu', 'cuda', 'cuda:i'), or torch's RuntimeError."""
    return storage._moved(_restore_device(location)) if isinstance(storage, _LoadedStorage) \
        else _restore_device(location)


def location_tag(storage):
    dev = getattr(storage, "device", None)
    if dev is None:
        raise RuntimeError("don't know how to determine data location of "
                           f"{type(storage).__name__}")
    return str(dev)


def validate_cuda_device(location):
    return _restore_device(location if str(location).startswith("cuda") else
                           str(location)).index


def normalize_storage_type(storage_type):
    return storage_type


def _restorer(map_location):
    """torch's ``_get_restore_location``: (storage, location) -> placed storage."""
    if map_location is None:
        return default_restore_location
    if isinstance(map_location, dict):
        return lambda s, loc: default_restore_location(s, map_location.get(loc, loc))
    if isinstance(map_location, (str, bytes)):
        if isinstance(map_location, bytes):
            raise TypeError("cannot use a string pattern on a bytes-like object")
        return lambda s, loc: default_restore_location(s, map_location)
    if isinstance(map_location, _device):
        return lambda s, loc: default_restore_location(s, str(map_location))

    def call(s, loc):
        result = map_location(s, loc)
        if result is None:
            return default_restore_location(s, loc)
        if not isinstance(result, _LoadedStorage):
            raise TypeError(f"map_location must return None or the storage it was given "
                            f"(moved with .cpu()/.cuda()/.to()), but returned "
                            f"{type(result).__name__}")
        return result
    return call


def _to_jax(arr, dev):
    if dev is None or dev.type == "cpu":
        return jnp.asarray(arr)
    return jax.device_put(arr, _gpu_devices()[dev.index or 0])


# ============================================================================ loading: rebuild
def _phys_bytes():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 1 << 62


def _rebuild_tensor(storage, storage_offset, size, stride, dtype=None):
    if not isinstance(storage, _LoadedStorage):
        raise pickle.UnpicklingError("a tensor's storage is not a checkpoint storage record")
    dtype = storage.dtype if dtype is None else dtype
    arr = storage.typed(dtype)
    size = tuple(int(s) for s in size)
    stride = tuple(int(s) for s in stride)
    storage_offset = int(storage_offset)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: size {list(size)}, "
                           f"stride {list(stride)}")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension: {list(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, "
                           f"got strides: {list(stride)}")
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    numel = int(np.prod(size, dtype=object))
    dev = storage.device
    if numel == 0:
        return Tensor._make(_to_jax(np.zeros(size, arr.dtype), dev))
    needed = storage_offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1
    if needed > arr.size:
        raise RuntimeError("Trying to resize storage that is not resizable")
    item = arr.dtype.itemsize
    # a stride-0 dim (an expanded tensor) is read once: the tensor becomes an expand view of
    # the small array, as torch's tensor is a view of its small storage
    small = tuple(1 if (s == 0 and n > 1) else n for n, s in zip(size, stride))
    if small == size:
        return _shared(storage, arr, dev, storage_offset, size, stride)
    src = arr[storage_offset:]
    if src.dtype in D._FLOAT8_NP:
        src = src.view(np.uint8)        # (as_strided cannot read ml_dtypes' float8 types)
    compact = np.lib.stride_tricks.as_strided(src, shape=small,
                                              strides=tuple(s * item for s in stride)).copy()
    compact = compact.view(arr.dtype)
    base = Tensor._make(_to_jax(compact, dev))
    if small == size:
        return base
    if numel * item > _phys_bytes():
        raise RuntimeError(f"torchlike cannot materialize the expanded tensor of size "
                           f"{list(size)} ({numel * item} bytes, more than this machine's "
                           f"memory): torchlike's expand views hold their values")
    return base.expand(size)


def _shared(storage, arr, dev, offset, size, stride):
    """The tensor at ``offset``/``size``/``stride`` of a storage, sharing it with the storage's
    other tensors, as torch's loaded tensors do (tied weights, a tensor and its views): the
    first tensor covering the whole storage in order is its root (the common case: a tensor
    of its own storage, with no copy of an index map); any other is a view of the root, by
    ``view`` where it covers the whole storage in order, by ``as_strided`` otherwise."""
    key = (arr.dtype.str, str(dev))
    root = storage._roots.get(key)
    whole = (offset == 0 and math.prod(size) == arr.size
             and all(s == c for n, s, c in zip(size, stride, contiguous_strides(size)) if n > 1))
    if root is None:
        root = Tensor._make(_to_jax(arr.reshape(size) if whole else arr.copy(), dev))
        storage._roots[key] = root
        if whole:
            return root
    with _no_grad():
        base = root.detach()        # (outside autograd: the root may become a parameter)
        if whole:
            return base.view(size)
        return base.as_strided(size, stride, offset)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    return _finish(_rebuild_tensor(storage, storage_offset, size, stride), requires_grad,
                   metadata)


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    if isinstance(dtype, _MissingDtype):
        raise NotImplementedError(f"torchlike has no dtype {dtype!r}: a tensor of it cannot "
                                  f"be loaded")
    if not isinstance(dtype, D.dtype):
        raise pickle.UnpicklingError(f"_rebuild_tensor_v3: {dtype!r} is not a dtype")
    return _finish(_rebuild_tensor(storage, storage_offset, size, stride, dtype),
                   requires_grad, metadata)


def _finish(t, requires_grad, metadata):
    if metadata:
        raise NotImplementedError(f"torchlike cannot restore tensor metadata {metadata!r}")
    if requires_grad:
        if t._base is not None:                  # a leaf, as torch's loaded tensor is
            t = Tensor._make(t._data)
        t.requires_grad_(True)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    from .nn.parameter import Parameter
    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError(f"_rebuild_parameter: {type(data).__name__} is not a "
                                     f"tensor")
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = _rebuild_parameter(data, requires_grad)
    _set_obj_state(p, state)
    return p


def _rebuild_device_tensor_from_cpu_tensor(data, dtype, device, requires_grad):
    if not isinstance(data, Tensor):
        raise pickle.UnpicklingError("_rebuild_device_tensor_from_cpu_tensor: not a tensor")
    dev = _restore_device(str(device))
    t = Tensor._make(_to_jax(np.asarray(data.to(dtype)._data), dev))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _set_obj_state(obj, state):
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for k, v in (dict_state or {}).items():
        setattr(obj, k, v)
    for k, v in (slots_state or {}).items():
        setattr(obj, k, v)
    return obj


def _rebuild_from_type_v2(func, new_type, args, state):
    ret = func(*args)
    if new_type is not Tensor and isinstance(new_type, type) and not isinstance(ret, new_type):
        from .nn.parameter import Parameter
        if new_type is Parameter:
            ret = Parameter(ret, ret.requires_grad)
        else:
            raise NotImplementedError(f"torchlike cannot rebuild a tensor as {new_type!r}")
    if state:
        _set_obj_state(ret, state)
    return ret


def _layout(name):
    import torchlike
    return getattr(torchlike, str(name).rsplit(".", 1)[-1], name)


_TORCH_ALLOWED_UNMAPPED = frozenset(
    ["torch._utils." + n for n in (
        "_rebuild_qtensor", "_rebuild_sparse_tensor", "_rebuild_meta_tensor_no_storage",
        "_rebuild_nested_tensor", "_rebuild_wrapper_subclass",
        "_rebuild_device_tensor_from_numpy")]
    + ["torch." + n for n in ("per_tensor_affine", "per_tensor_symmetric", "per_channel_affine",
                              "per_channel_symmetric", "per_channel_affine_float_qparams")])

_GLOBALS_CACHE = []


def _torch_globals():
    if _GLOBALS_CACHE:
        return _GLOBALS_CACHE[0]
    import torchlike
    from .nn.parameter import Parameter
    g = {
        "collections.OrderedDict": OrderedDict,
        "collections.Counter": Counter,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor_v3": _rebuild_tensor_v3,
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._utils._rebuild_device_tensor_from_cpu_tensor":
            _rebuild_device_tensor_from_cpu_tensor,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Tensor": Tensor,
        "torch._tensor.Tensor": Tensor,
        "torch.Size": Size,
        "torch.device": _device,
        "torch.serialization._get_layout": _layout,
        "_codecs.encode": codecs.encode,
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
    }
    for name in _TORCH_ONLY_DTYPES:
        g["torch." + name] = _MissingDtype(name)
    for d in D._ALL:
        g["torch." + d.name] = d
    for alias in ("float", "double", "half", "long", "int", "short", "cfloat", "cdouble"):
        g["torch." + alias] = getattr(D, alias)
    for name in _STORAGE_DTYPES:
        g["torch." + name] = _StorageType(name)
    g["torch.UntypedStorage"] = _StorageType("UntypedStorage")
    g["torch.storage.UntypedStorage"] = g["torch.UntypedStorage"]
    for name in ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
                 "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"):
        cls = getattr(torchlike, name, None)
        if cls is not None:
            g["torch." + name] = cls
    _GLOBALS_CACHE.append(g)
    return g


# ============================================================================ loading: unpicklers
class _Refused(pickle.UnpicklingError):
    """A torch global torchlike cannot map (weights_only=False)."""


class _FullUnpickler(pickle.Unpickler):
    """``weights_only=False``: pickle's own unpickler; torch's globals map to torchlike's."""

    def find_class(self, module, name):
        module, name = _map_py2(module, name)
        full = f"{module}.{name}"
        g = _torch_globals().get(full)
        if g is not None:
            return g
        if module == "torch" or module.startswith("torch."):
            raise _Refused(
                f"torchlike cannot load the torch global {full} (only tensors, parameters, "
                f"storages, dtypes, Size and device are mapped to torchlike)")
        return super().find_class(module, name)


class _FullZipUnpickler(_FullUnpickler):
    def __init__(self, file, storage_loader, **kwargs):
        super().__init__(file, **kwargs)
        self._storage_loader = storage_loader

    def persistent_load(self, pid):
        return self._storage_loader(pid)


# ============================================================================ loading: the archive
_DEFLATE_MAX_RATIO = 1032           # deflate cannot expand a stream by more than this


class _Archive:
    """A checkpoint zip, checked as torch's PyTorchStreamReader checks it, plus CRCs, duplicate
    records and bounded reads."""

    def __init__(self, fobj):
        try:
            fobj.seek(0, 2)
            self.length = fobj.tell()
        except (OSError, ValueError):
            self.length = None
        try:
            self.zf = zipfile.ZipFile(fobj)
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, struct.error) as e:
            kind = ("not a ZIP archive" if self.length is not None and self.length < 22
                    else "failed finding central directory")
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {kind}."
                               + _MINIZ_TAIL + f" (the file is truncated or is not a "
                               f"checkpoint: {e})") from None
        infos = self.zf.infolist()
        if not infos:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: the archive "
                               "has no records." + _MINIZ_TAIL)
        first = infos[0].filename
        if "/" not in first:
            raise RuntimeError(f"[enforce fail at inline_container.cc:180] . file in archive "
                               f"is not in a subdirectory: {first}")
        self.prefix = first.split("/", 1)[0] + "/"
        self.infos = {}
        counts = Counter(i.filename for i in infos)
        for i in infos:
            self.infos[i.filename] = i
        dups = sorted(n for n, c in counts.items() if c > 1)
        if dups:
            raise RuntimeError(f"checkpoint is corrupt: the archive holds more than one record "
                               f"named {', '.join(dups)}; torch would silently read one of "
                               f"them, torchlike refuses the file")
        vname = ".data/version" if self.has(".data/version") else "version"
        if not self.has(vname):
            raise RuntimeError('Expected hasRecord("version") to be true, but got false.  '
                               '(Could this error message be improved?  If so, please report '
                               'an enhancement request to PyTorch.)')
        text = self.read(vname, limit=64).decode("latin-1")
        try:
            version = int(text.strip())
        except ValueError:
            raise RuntimeError(f"[enforce fail at inline_container.cc:215] . Couldn't parse "
                               f"the version {text} as Long Long.") from None
        if version < _MIN_VERSION:
            raise RuntimeError(
                f"[enforce fail at inline_container.cc:219] . Attempted to read a PyTorch file "
                f"with version {version}, but the minimum supported version for reading is "
                f"{_MIN_VERSION}. Your PyTorch script module file is too old. Please regenerate "
                f"it with latest version of PyTorch to mitigate this issue.")
        if version > _MAX_VERSION:
            raise RuntimeError(
                f"[enforce fail at inline_container.cc:230] . Attempted to read a PyTorch file "
                f"with version {version}, but the maximum supported version for reading is "
                f"{_MAX_VERSION}. The version of your PyTorch installation may be too old, "
                f"please upgrade PyTorch to latest version to mitigate this issue.")
        for i in infos:
            if not i.filename.startswith(self.prefix):
                raise RuntimeError(f"[enforce fail at inline_container.cc:340] . file in "
                                   f"archive is not in a subdirectory {self.prefix}: "
                                   f"{i.filename}")

    def has(self, name):
        return self.prefix + name in self.infos

    def read(self, name, expected=None, limit=None):
        full = self.prefix + name
        info = self.infos.get(full)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not "
                               f"found." + _MINIZ_TAIL + f" (the record {full} is missing)")
        if info.flag_bits & 0x1:
            raise RuntimeError(f"checkpoint is corrupt: the record {full} is encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: unsupported "
                               f"compression method {info.compress_type} (torch reads stored "
                               f"and deflated records)")
        size, csize = info.file_size, info.compress_size
        if self.length is not None and csize > self.length:
            raise RuntimeError(f"checkpoint is corrupt: the record {full} claims {csize} bytes, "
                               f"more than the whole file ({self.length} bytes)")
        if info.compress_type == zipfile.ZIP_STORED and size != csize:
            raise RuntimeError(f"checkpoint is corrupt: the stored record {full} has sizes "
                               f"{csize} and {size}")
        if info.compress_type == zipfile.ZIP_DEFLATED and size > csize * _DEFLATE_MAX_RATIO + 64:
            raise RuntimeError(f"checkpoint is corrupt: the record {full} claims to inflate "
                               f"{csize} bytes to {size} bytes, more than deflate can")
        if expected is not None and size != expected:
            raise RuntimeError(f"record size ({size} bytes) does not match expected size "
                               f"({expected} bytes = {expected} elements * 1 bytes/element) "
                               f"for dtype Byte")
        if limit is not None and size > limit:
            raise RuntimeError(f"checkpoint is corrupt: the record {full} holds {size} bytes")
        try:
            with self.zf.open(info) as fh:
                data = fh.read(size + 1)        # bounded by the declared size
        except (zipfile.BadZipFile, EOFError, OSError, ValueError, struct.error,
                NotImplementedError) as e:
            raise RuntimeError(f"checkpoint is corrupt: cannot read {full}: {e}") from None
        except Exception as e:  # zlib.error
            raise RuntimeError(f"checkpoint is corrupt: cannot read {full}: "
                               f"{type(e).__name__}: {e}") from None
        if len(data) != size:
            raise RuntimeError(f"checkpoint is corrupt: the record {full} holds {len(data)} "
                               f"bytes, its header says {size}")
        return data

    def close(self):
        self.zf.close()


def _storage_loader(archive, restore, byteorder, storages):
    def load_storage(pid):
        if not isinstance(pid, tuple):
            raise pickle.UnpicklingError(f"unsupported persistent id in checkpoint: {pid!r}")
        if len(pid) != 5 or _ascii(pid[0]) != "storage":
            raise pickle.UnpicklingError(f"unsupported persistent id in checkpoint: {pid!r}")
        _, storage_type, key, location, numel = pid
        if not isinstance(storage_type, _StorageType):
            raise pickle.UnpicklingError(f"persistent id names a non-storage type: "
                                         f"{storage_type!r}")
        key = _ascii(key)
        if not isinstance(key, str) or not isinstance(numel, int) or numel < 0:
            raise pickle.UnpicklingError(f"invalid persistent id in checkpoint: {pid!r}")
        st = storages.get(key)
        if st is not None:
            return st
        nbytes = numel * storage_type.dtype.np.itemsize
        raw = archive.read(f"data/{key}", expected=nbytes)
        st = _LoadedStorage(raw, storage_type.dtype, byteorder)
        st = restore(st, _ascii(location))
        storages[key] = st
        return st
    return load_storage


# ============================================================================ weights-only unpickler
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")
_OP = {name: getattr(pickle, name)[0] for name in (
    "MARK", "STOP", "POP", "POP_MARK", "DUP", "FLOAT", "INT", "BININT", "BININT1", "LONG",
    "BININT2", "NONE", "PERSID", "BINPERSID", "REDUCE", "STRING", "BINSTRING",
    "SHORT_BINSTRING", "UNICODE", "BINUNICODE", "APPEND", "BUILD", "GLOBAL", "DICT",
    "EMPTY_DICT", "APPENDS", "GET", "BINGET", "INST", "LONG_BINGET", "LIST", "EMPTY_LIST",
    "OBJ", "PUT", "BINPUT", "LONG_BINPUT", "SETITEM", "TUPLE", "EMPTY_TUPLE", "SETITEMS",
    "BINFLOAT", "PROTO", "NEWOBJ", "TUPLE1", "TUPLE2", "TUPLE3", "NEWTRUE", "NEWFALSE",
    "LONG1", "LONG4", "BINBYTES", "SHORT_BINBYTES", "SHORT_BINUNICODE", "BINUNICODE8",
    "BINBYTES8", "EMPTY_SET", "ADDITEMS", "FROZENSET", "NEWOBJ_EX", "STACK_GLOBAL", "MEMOIZE",
    "FRAME", "BYTEARRAY8")}
# the opcodes torch's weights-only unpickler reads (protocol 2); inside a checkpoint's data.pkl
# torchlike also reads the binary opcodes of protocols 1 and 3-5 (torch.save(pickle_protocol=
# 3..5) files), with the same global policy; protocol-0 text opcodes are refused as in torch
_STRICT_OPS = frozenset(_OP[n] for n in (
    "APPEND", "APPENDS", "BINFLOAT", "BINGET", "BININT", "BININT1", "BININT2", "BINPERSID",
    "BINPUT", "BINUNICODE", "BUILD", "EMPTY_DICT", "EMPTY_LIST", "EMPTY_SET", "EMPTY_TUPLE",
    "GLOBAL", "LONG1", "LONG_BINGET", "LONG_BINPUT", "MARK", "NEWFALSE", "NEWOBJ", "NEWTRUE",
    "NONE", "PROTO", "REDUCE", "SETITEM", "SETITEMS", "SHORT_BINSTRING", "STOP", "TUPLE",
    "TUPLE1", "TUPLE2", "TUPLE3"))
_EXTENDED_OPS = _STRICT_OPS | frozenset(_OP[n] for n in (
    "BINBYTES", "SHORT_BINBYTES", "BINBYTES8", "BYTEARRAY8", "SHORT_BINUNICODE", "BINUNICODE8",
    "FRAME", "MEMOIZE", "STACK_GLOBAL", "ADDITEMS", "FROZENSET", "NEWOBJ_EX", "LONG4",
    "BINSTRING", "POP", "POP_MARK", "DUP", "INT"))


def _map_py2(module, name):
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    if module in _compat_pickle.IMPORT_MAPPING:
        return _compat_pickle.IMPORT_MAPPING[module], name
    return module, name


def _unsupported_global(full_path):
    if full_path.startswith("builtins"):
        rest = full_path[len("builtins"):]
        full_path = rest[1:] if rest.startswith(".") else "builtins" + rest
    return pickle.UnpicklingError(
        f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. Please "
        f"use `torch.serialization.add_safe_globals([{full_path}])` or the "
        f"`torch.serialization.safe_globals([{full_path}])` context manager to allowlist this "
        f"global if you trust this class/function.")


class _WeightsOnlyUnpickler:
    """A restricted unpickler: an opcode loop that only ever names allowlisted globals.

    Same policy and error classes as torch's ``torch._weights_only_unpickler`` for the opcodes
    torch reads (``strict=True`` reads only those); ``strict=False`` also reads the opcodes of
    protocols 1 and 3-5 (torchlike loads such files with ``weights_only=True``).
    """

    def __init__(self, file, *, encoding="utf-8", strict=False, persistent_load=None):
        self.read = file.read
        self.readline = file.readline
        self.encoding = encoding
        self.strict = strict
        self.memo = {}
        self._persistent_load = persistent_load
        self.allowed = _torch_globals()
        self._allowed_ids = {id(v) for v in self.allowed.values()}
        from .nn.parameter import Parameter
        self._Parameter = Parameter

    # ---------------------------------------------------------------- globals
    def _global(self, module, name):
        module, name = _map_py2(module, name)
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(
                f"Trying to load unsupported GLOBAL {full} whose module {module} is blocked. "
                f"(Unsupported global: a blocked module cannot be allowlisted.)")
        g = self.allowed.get(full)
        if g is not None:
            return g
        user = self.user
        if full in user:
            return user[full]
        if full in _TORCH_ALLOWED_UNMAPPED:
            raise NotImplementedError(
                f"torchlike cannot rebuild {full} (torch allows it in weights_only loads): "
                f"quantized, sparse, nested, meta and wrapper-subclass tensors are not supported")
        raise _unsupported_global(full)

    @property
    def user(self):
        # read when first needed, as torch does (a malformed entry raises only then)
        try:
            return _user_allowed_globals()
        except (ValueError, TypeError) as e:
            e._torchlike_raw = True
            raise

    def _is_ok(self, obj):
        return id(obj) in self._allowed_ids or any(v is obj for v in self.user.values())

    def _readline_str(self):
        return self.readline()[:-1].decode("utf-8")

    def pop_mark(self):
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _check_set_item_target(self, opcode):
        if type(self.stack[-1]) not in (dict, OrderedDict, Counter):
            raise pickle.UnpicklingError(
                f"Can only {opcode} for dict, collections.OrderedDict, collections.Counter, "
                f"but got {type(self.stack[-1])}")

    def _newobj(self, cls, args, kwargs=None):
        if cls is self._Parameter:
            return self._Parameter(*args, **(kwargs or {}))
        if isinstance(cls, type) and self._is_ok(cls):
            return cls.__new__(cls, *args, **(kwargs or {}))
        raise pickle.UnpicklingError(
            "Can only create new object for nn.Parameter or classes allowlisted via "
            f"`add_safe_globals` but got {cls}")

    def _build(self, inst, state):
        if isinstance(inst, Tensor) or type(inst) is OrderedDict:
            if type(inst) is OrderedDict:
                inst.__dict__.update(state)
            else:
                _set_obj_state(inst, state)
            return
        if self._is_ok(type(inst)):
            if hasattr(inst, "__setstate__"):
                inst.__setstate__(state)
                return
            slotstate = None
            if isinstance(state, tuple) and len(state) == 2:
                state, slotstate = state
            if state:
                inst.__dict__.update(state)
            if slotstate:
                for k, v in slotstate.items():
                    setattr(inst, k, v)
            return
        raise pickle.UnpicklingError(
            "Can only build Tensor, Parameter, OrderedDict or types allowlisted via "
            f"`add_safe_globals`, but got {type(inst)}")

    # ---------------------------------------------------------------- the loop
    def load(self):
        self.metastack = []
        self.stack = []
        read = self.read
        ops = _STRICT_OPS if self.strict else _EXTENDED_OPS
        dispatch = _DISPATCH
        stop = _OP["STOP"]
        while True:
            key = read(1)
            if not key:
                raise EOFError
            k = key[0]
            if k not in ops:
                raise pickle.UnpicklingError(f"Unsupported operand {k}")
            if k == stop:
                return self.stack.pop()
            dispatch[k](self)

    # ---------------------------------------------------------------- opcodes
    def _op_GLOBAL(self):
        module = self._readline_str()
        name = self._readline_str()
        self.stack.append(self._global(module, name))

    def _op_STACK_GLOBAL(self):
        st = self.stack
        name = st.pop()
        module = st.pop()
        if type(name) is not str or type(module) is not str:
            raise pickle.UnpicklingError("STACK_GLOBAL requires str")
        st.append(self._global(module, name))

    def _op_NEWOBJ(self):
        st = self.stack
        args = st.pop()
        cls = st.pop()
        st.append(self._newobj(cls, args))

    def _op_NEWOBJ_EX(self):
        st = self.stack
        kwargs = st.pop()
        args = st.pop()
        cls = st.pop()
        st.append(self._newobj(cls, args, kwargs))

    def _op_REDUCE(self):
        st = self.stack
        args = st.pop()
        func = st[-1]
        if not self._is_ok(func):
            msg = f"Trying to call reduce for unrecognized function {func}"
            if hasattr(func, "__self__"):
                msg += f" which belongs to {func.__self__}"
            raise pickle.UnpicklingError(msg)
        st[-1] = func(*args)

    def _op_BUILD(self):
        st = self.stack
        state = st.pop()
        self._build(st[-1], state)

    def _op_APPEND(self):
        st = self.stack
        item = st.pop()
        lst = st[-1]
        if type(lst) is not list:
            raise pickle.UnpicklingError(f"Can only append to lists, but got {type(lst)}")
        lst.append(item)

    def _op_APPENDS(self):
        items = self.pop_mark()
        lst = self.stack[-1]
        if type(lst) is not list:
            raise pickle.UnpicklingError(f"Can only extend lists, but got {type(lst)}")
        lst.extend(items)

    def _op_SETITEM(self):
        st = self.stack
        v, kk = st.pop(), st.pop()
        self._check_set_item_target("SETITEM")
        st[-1][kk] = v

    def _op_SETITEMS(self):
        items = self.pop_mark()
        self._check_set_item_target("SETITEMS")
        target = self.stack[-1]
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def _op_ADDITEMS(self):
        items = self.pop_mark()
        target = self.stack[-1]
        if type(target) is not set:
            raise pickle.UnpicklingError(f"Can only add items to sets, but got {type(target)}")
        target.update(items)

    def _op_MARK(self):
        self.metastack.append(self.stack)
        self.stack = []

    def _op_TUPLE(self):
        items = self.pop_mark()
        self.stack.append(tuple(items))

    def _op_FROZENSET(self):
        items = self.pop_mark()
        self.stack.append(frozenset(items))

    def _op_TUPLE1(self):
        st = self.stack
        st[-1] = (st[-1],)

    def _op_TUPLE2(self):
        st = self.stack
        st[-2:] = [(st[-2], st[-1])]

    def _op_TUPLE3(self):
        st = self.stack
        st[-3:] = [(st[-3], st[-2], st[-1])]

    def _op_POP(self):
        if self.stack:
            self.stack.pop()
        else:
            self.pop_mark()

    def _op_POP_MARK(self):
        self.pop_mark()

    def _op_DUP(self):
        self.stack.append(self.stack[-1])

    def _op_NONE(self):
        self.stack.append(None)

    def _op_NEWFALSE(self):
        self.stack.append(False)

    def _op_NEWTRUE(self):
        self.stack.append(True)

    def _op_EMPTY_TUPLE(self):
        self.stack.append(())

    def _op_EMPTY_LIST(self):
        self.stack.append([])

    def _op_EMPTY_DICT(self):
        self.stack.append({})

    def _op_EMPTY_SET(self):
        self.stack.append(set())

    def _op_BININT(self):
        self.stack.append(unpack("<i", self.read(4))[0])

    def _op_BININT1(self):
        self.stack.append(self.read(1)[0])

    def _op_BININT2(self):
        self.stack.append(unpack("<H", self.read(2))[0])

    def _op_BINFLOAT(self):
        self.stack.append(unpack(">d", self.read(8))[0])

    def _op_LONG1(self):
        n = self.read(1)[0]
        self.stack.append(pickle.decode_long(self.read(n)))

    def _op_LONG4(self):
        n = unpack("<i", self.read(4))[0]
        if n < 0:
            raise pickle.UnpicklingError("LONG pickle has negative byte count")
        self.stack.append(pickle.decode_long(self._read_exact(n)))

    def _op_INT(self):                     # protocol 1 writes bools as INT
        data = self.readline()
        if data == b"00\n":
            self.stack.append(False)
        elif data == b"01\n":
            self.stack.append(True)
        else:
            self.stack.append(int(data, 0))

    def _op_BINUNICODE(self):
        n = unpack("<I", self.read(4))[0]
        self.stack.append(str(self._read_exact(n), "utf-8", "surrogatepass"))

    def _op_SHORT_BINUNICODE(self):
        n = self.read(1)[0]
        self.stack.append(str(self._read_exact(n), "utf-8", "surrogatepass"))

    def _op_BINUNICODE8(self):
        n = unpack("<Q", self.read(8))[0]
        self.stack.append(str(self._read_exact(n), "utf-8", "surrogatepass"))

    def _op_SHORT_BINSTRING(self):
        n = self.read(1)[0]
        self.stack.append(self._decode_string(self.read(n)))

    def _op_BINSTRING(self):
        n = unpack("<i", self.read(4))[0]
        if n < 0:
            raise pickle.UnpicklingError("BINSTRING pickle has negative byte count")
        self.stack.append(self._decode_string(self._read_exact(n)))

    def _op_BINBYTES(self):
        self.stack.append(self._read_exact(unpack("<I", self.read(4))[0]))

    def _op_SHORT_BINBYTES(self):
        self.stack.append(self._read_exact(self.read(1)[0]))

    def _op_BINBYTES8(self):
        self.stack.append(self._read_exact(unpack("<Q", self.read(8))[0]))

    def _op_BYTEARRAY8(self):
        self.stack.append(bytearray(self._read_exact(unpack("<Q", self.read(8))[0])))

    def _op_BINPERSID(self):
        pid = self.stack.pop()
        if type(pid) is not tuple and type(pid) is not int:
            raise pickle.UnpicklingError(
                f"persistent_load id must be tuple or int, but got {type(pid)}")
        if type(pid) is tuple and len(pid) > 0 and _ascii(pid[0]) != "storage":
            raise pickle.UnpicklingError(
                f"Only persistent_load of storage is allowed, but got {type(pid[0])}")
        if self._persistent_load is None:
            raise pickle.UnpicklingError("unsupported persistent id encountered")
        self.stack.append(self._persistent_load(pid))

    def _op_BINGET(self):
        self.stack.append(self.memo[self.read(1)[0]])

    def _op_LONG_BINGET(self):
        self.stack.append(self.memo[unpack("<I", self.read(4))[0]])

    def _op_BINPUT(self):
        self.memo[self.read(1)[0]] = self.stack[-1]

    def _op_LONG_BINPUT(self):
        i = unpack("<I", self.read(4))[0]
        self.memo[i] = self.stack[-1]

    def _op_MEMOIZE(self):
        self.memo[len(self.memo)] = self.stack[-1]

    def _op_FRAME(self):
        unpack("<Q", self.read(8))

    def _op_PROTO(self):
        proto = self.read(1)[0]
        if proto > pickle.HIGHEST_PROTOCOL:
            raise ValueError(f"unsupported pickle protocol: {proto}")

    def _read_exact(self, n):
        data = self.read(n)
        if len(data) != n:
            raise pickle.UnpicklingError("pickle data was truncated")
        return data

    def _decode_string(self, value):
        if self.encoding == "bytes":
            return value
        return value.decode(self.encoding, "strict")


_DISPATCH = {_OP[name[4:]]: fn for name, fn in vars(_WeightsOnlyUnpickler).items()
             if name.startswith("_op_")}
assert set(_DISPATCH) | {_OP["STOP"]} == set(_EXTENDED_OPS)


def _ascii(s):
    return s.decode("ascii") if isinstance(s, bytes) else s


def _wo_message(message):
    """torch.load's wrapping of a weights-only refusal."""
    import re
    if re.search(r"GLOBAL (\S+) was not an allowed global by default.", message):
        out = ("Weights only load failed. This file can still be loaded, to do so you have two "
               "options, \033[1mdo those steps only if you trust the source of the checkpoint"
               f"\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with "
               "`weights_only=True` please check the recommended steps in the following error "
               "message.\n\tWeightsUnpickler error: " + message)
    else:
        if re.search(r"(\S+) must be (\S+) to load", message):
            return f"Weights only load failed. {message}\n {UNSAFE_MESSAGE}\n"
        out = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
        if not re.search(r"whose module (\S+) is blocked", message):
            out += ("Please file an issue with the following so that we can make "
                    "`weights_only=True` compatible with your use case: WeightsUnpickler error: ")
        out += "\n\n" + message
    return out + _DOCS_MESSAGE


_HYBRIDS = {}


def _corrupt(exc, what):
    """An error torch's unpickler would raise as ``type(exc)`` (IndexError, KeyError, ...):
    raised as a RuntimeError that is also an instance of that class."""
    base = type(exc)
    cls = _HYBRIDS.get(base)
    if cls is None:
        try:
            cls = type(f"Corrupt{base.__name__}", (RuntimeError, base), {"__module__": __name__})
        except TypeError:
            cls = RuntimeError
        _HYBRIDS[base] = cls
    return cls(f"{what} ({base.__name__}: {exc})")


# ============================================================================ loading: entry points
def _check_seekable(f):
    try:
        f.seek(f.tell())
        return True
    except (io.UnsupportedOperation, AttributeError) as e:
        for p in ("seek", "tell"):
            if p in str(e):
                raise type(e)(str(e) + ". You can only torch.load from a file that is seekable. "
                              "Please pre-load the data into a buffer like io.BytesIO and try "
                              "to load from it instead.") from None
        raise


def _is_zip(fobj):
    pos = fobj.tell()
    magic = fobj.read(4)
    fobj.seek(pos)
    if isinstance(magic, str):
        fobj.read()               # a text-mode file: decoding raises as it does for torch
        raise TypeError("torchlike.load needs a file opened in binary mode ('rb')")
    return magic == b"PK\x03\x04"


def _unpickle_errors(run, weights_only, what):
    """Run an unpickling step; its errors are raised with torch's classes."""
    try:
        return run()
    except pickle.UnpicklingError as e:
        if weights_only and not isinstance(e, _Refused):
            raise pickle.UnpicklingError(_wo_message(str(e))) from None
        raise
    except (EOFError, RuntimeError, NotImplementedError):
        raise
    except Exception as e:  # noqa: BLE001  (torch's unpickler fails with these as they are)
        if not weights_only or getattr(e, "_torchlike_raw", False):
            raise
        raise _corrupt(e, what) from e


def _load_non_zip(fobj, map_location, weights_only, pickle_load_args, real_file):
    """Not a zip: torch's legacy format (read by ``_load_legacy``), a bare pickle or anything
    else (refused as torch refuses it)."""
    if real_file and fobj.tell() == 0:
        try:
            with tarfile.open(fileobj=fobj, mode="r:"):
                pass
            is_tar = True
        except (tarfile.TarError, OSError, ValueError, EOFError):
            is_tar = False
        if is_tar:
            if weights_only:
                raise RuntimeError("Cannot use ``weights_only=True`` with files saved in the "
                                   "legacy .tar format. " + UNSAFE_MESSAGE)
            raise RuntimeError("this checkpoint uses torch's legacy .tar format, which "
                               "torchlike does not read")
        fobj.seek(0)
    encoding = pickle_load_args.get("encoding", "utf-8")

    def one():
        if weights_only:
            return _WeightsOnlyUnpickler(fobj, encoding=encoding, strict=True).load()
        return _FullUnpickler(fobj, **pickle_load_args).load()

    what = "Invalid magic number; corrupt file? (not a checkpoint)"
    magic = _unpickle_errors(one, weights_only, what)
    if magic != _LEGACY_MAGIC:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol = _unpickle_errors(one, weights_only, what)
    if protocol != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {protocol}")
    sys_info = _unpickle_errors(one, weights_only, what)
    if isinstance(sys_info, dict) and sys_info.get("little_endian") is False:
        raise RuntimeError("this legacy checkpoint was written on a big-endian machine, "
                           "which torchlike does not read")
    return _load_legacy(fobj, map_location, weights_only, pickle_load_args, what, one)


class _Inert:
    """Anything a legacy checkpoint's pickle names, while it is scanned for its storages:
    calls, state and items are taken and ignored (nothing of the checkpoint runs)."""

    name = None

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return type("_Inert", (_Inert,), {})     # (a type: it may be called or built)

    def __setstate__(self, state):
        pass

    def __setitem__(self, key, value):
        pass

    def append(self, value):
        pass

    def extend(self, values):
        pass


class _ScanUnpickler(pickle.Unpickler):
    """Reads a legacy checkpoint's main pickle for its persistent ids only."""

    def __init__(self, file, pids):
        super().__init__(file, encoding="latin1")
        self._pids = pids

    def find_class(self, module, name):
        # (a class of its own per global: NEWOBJ needs a type, a storage's type its name)
        return type(name, (_Inert,), {"name": name})

    def persistent_load(self, pid):
        self._pids.append(pid)
        if isinstance(pid, tuple) and len(pid) == 4 and pid[0] == "module":
            return pid[1]               # (a pickled module's class, with its source)
        return _Inert()


def _load_legacy(fobj, map_location, weights_only, pickle_load_args, what, one):
    """torch's legacy (pre-1.6) format after its magic number, protocol version and system
    info: the main pickle, whose storages are persistent ids ``('storage', type, key,
    location, numel, view)``; the list of storage keys; then each storage's element count
    (int64) and bytes, in that list's order. The main pickle is scanned first for the storages'
    types (nothing in it runs), the storages are read, and then it is unpickled as a zip
    checkpoint's data.pkl is (weights-only or not), its tensors built on the storages. ``one``
    unpickles the stream's next pickle (as the magic number's was)."""
    encoding = pickle_load_args.get("encoding", "utf-8")

    def unpickle(file, persistent_load):
        if weights_only:
            return _WeightsOnlyUnpickler(file, encoding=encoding, strict=True,
                                         persistent_load=persistent_load).load()
        return _FullZipUnpickler(file, persistent_load, **pickle_load_args).load()

    start = fobj.tell()
    try:
        for _op in pickletools.genops(fobj):   # (to the main pickle's STOP, executing nothing)
            pass
    except Exception:  # noqa: BLE001
        # a truncated or damaged pickle: unpickled as torch does, it fails with torch's error
        # (its tensors built on zeros)
        fobj.seek(start)
        _unpickle_errors(lambda: unpickle(fobj, _zero_storage), weights_only, what)
        raise RuntimeError(f"{what}: the checkpoint's pickle is damaged") from None
    end = fobj.tell()
    fobj.seek(start)
    main = fobj.read(end - start)
    pids = []
    try:
        _ScanUnpickler(io.BytesIO(main), pids).load()
    except Exception as e:  # noqa: BLE001
        raise RuntimeError(f"{what}: {e}") from None
    types = {}
    for pid in pids:
        if isinstance(pid, tuple) and len(pid) == 6 and pid[0] == "storage":
            name = getattr(pid[1], "name", None)
            types[str(pid[2])] = _StorageType(name)
    keys = _unpickle_errors(one, weights_only, what)
    raws = {}
    for key in keys:
        key = str(key)
        st = types.get(key)
        if st is None:
            raise RuntimeError(f"{what}: storage {key!r} is not in the checkpoint's pickle")
        head = fobj.read(8)
        if len(head) != 8:
            raise RuntimeError(f"{what}: storage {key!r} is truncated")
        numel = int.from_bytes(head, "little", signed=True)
        nbytes = numel * st.dtype.np.itemsize
        raw = fobj.read(nbytes)
        if numel < 0 or len(raw) != nbytes:
            raise RuntimeError(f"{what}: storage {key!r} is truncated")
        raws[key] = raw
    restore = _restorer(map_location)
    storages = {}

    def load_storage(pid):
        if isinstance(pid, tuple) and len(pid) == 4 and _ascii(pid[0]) == "module":
            return pid[1]       # (a whole module pickled: its class; torch compares sources)
        if not (isinstance(pid, tuple) and len(pid) == 6 and _ascii(pid[0]) == "storage"):
            raise pickle.UnpicklingError(f"unsupported persistent id in checkpoint: {pid!r}")
        _, storage_type, key, location, numel, view = pid
        if not isinstance(storage_type, _StorageType):
            raise pickle.UnpicklingError(f"persistent id names a non-storage type: "
                                         f"{storage_type!r}")
        if view is not None:
            raise RuntimeError("this legacy checkpoint holds storage views (torch before 0.4), "
                               "which torchlike does not read")
        key = _ascii(key)
        st = storages.get(key)
        if st is None:
            raw = raws.get(key)
            if raw is None:
                raise pickle.UnpicklingError(f"invalid persistent id in checkpoint: {pid!r}")
            st = storages[key] = restore(_LoadedStorage(raw, storage_type.dtype, "little"),
                                         _ascii(location))
        return st

    return _unpickle_errors(lambda: unpickle(io.BytesIO(main), load_storage), weights_only,
                            what)


def _zero_storage(pid):
    """A legacy persistent id's storage as zeros (for a damaged checkpoint's error only)."""
    if not (isinstance(pid, tuple) and len(pid) == 6 and isinstance(pid[1], _StorageType)
            and isinstance(pid[4], int) and 0 <= pid[4] < 1 << 24):
        raise pickle.UnpicklingError(f"unsupported persistent id in checkpoint: {pid!r}")
    return _LoadedStorage(bytes(pid[4] * pid[1].dtype.np.itemsize), pid[1].dtype, "little")


def _load_zip(fobj, map_location, weights_only, pickle_load_args):
    archive = _Archive(fobj)
    try:
        if archive.has("constants.pkl"):
            if weights_only:
                raise RuntimeError("Cannot use ``weights_only=True`` with TorchScript archives "
                                   "passed to ``torch.load``. " + UNSAFE_MESSAGE)
            raise RuntimeError("this is a TorchScript archive (torch.jit.save); torchlike has "
                               "no TorchScript: save a state_dict with torch.save instead")
        byteorder = None
        if archive.has("byteorder"):
            byteorder = archive.read("byteorder", limit=16)
            if byteorder not in (b"little", b"big"):
                raise ValueError("Unknown endianness type: " + byteorder.decode("latin-1"))
            byteorder = byteorder.decode()
        else:
            end = get_default_load_endianness()
            byteorder = {None: "little", LoadEndianness.LITTLE: "little",
                         LoadEndianness.BIG: "big",
                         LoadEndianness.NATIVE: sys.byteorder}[end]
        data = archive.read("data.pkl")
        restore = _restorer(map_location)
        loader = _storage_loader(archive, restore, byteorder, {})
        encoding = pickle_load_args.get("encoding", "utf-8")

        def run():
            if weights_only:
                return _WeightsOnlyUnpickler(io.BytesIO(data), encoding=encoding,
                                             persistent_load=loader).load()
            return _FullZipUnpickler(io.BytesIO(data), loader, **pickle_load_args).load()

        return _unpickle_errors(run, weights_only,
                                "checkpoint is corrupt: data.pkl does not unpickle")
    finally:
        archive.close()


def _env_true(name):
    return os.getenv(name, "0").lower() in ("1", "y", "yes", "true")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Load an object saved by ``torch.save`` or ``torchlike.save`` (a path or a binary,
    seekable file object).

    ``weights_only`` (the default unless a ``pickle_module`` is given) accepts only tensors,
    containers, primitive types, torch's allowlisted globals and those added with
    ``add_safe_globals`` / ``safe_globals``; anything else raises ``pickle.UnpicklingError``
    with torch's message. ``map_location`` is a str, device, dict or callable as in torch
    (a callable gets each storage and its location tag). Errors on bad files have torch's
    classes; a record whose CRC does not match raises ``RuntimeError``.
    """
    weights_only_not_set = weights_only is None
    if weights_only_not_set:
        weights_only = pickle_module is None
    force_wo = _env_true("TORCH_FORCE_WEIGHTS_ONLY_LOAD")
    force_no_wo = _env_true("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    if force_wo and force_no_wo:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set.")
    if force_wo:
        weights_only = True
    elif force_no_wo and weights_only_not_set:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the"
                      "`weights_only` argument was not explicitly passed to `torch.load`, "
                      "forcing weights_only=False.", UserWarning, stacklevel=2)
        weights_only = False
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                               "specified")
    elif pickle_module is not None and pickle_module is not pickle:
        raise NotImplementedError(f"torchlike.load unpickles with pickle; pickle_module="
                                  f"{getattr(pickle_module, '__name__', pickle_module)!r} is "
                                  f"not supported")
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    pickle_load_args = dict(pickle_load_args)
    pickle_load_args.setdefault("encoding", "utf-8")
    if mmap is None:
        mmap = _config.mmap
    is_path = isinstance(f, (str, os.PathLike))
    if mmap and not is_path:
        raise ValueError("f must be a file path in order to use the mmap argument")
    opened = mapped = None
    if is_path:
        opened = fobj = open(os.fspath(f), "rb")
    else:
        fobj = f
        _check_seekable(fobj)
    try:
        if _is_zip(fobj):
            if mmap:
                mapped = _mmap.mmap(opened.fileno(), 0, access=_mmap.ACCESS_READ)
                fobj = _MappedFile(mapped)
            return _load_zip(fobj, map_location, weights_only, pickle_load_args)
        if mmap:
            name = f"{f}, " if isinstance(f, str) else ""
            raise RuntimeError("mmap can only be used with files saved with "
                               f"`torch.save({name}_use_new_zipfile_serialization=True), "
                               "please torch.save your checkpoint with this option in order "
                               "to use mmap.")
        real_file = opened is not None or _has_fileno(fobj)
        return _load_non_zip(fobj, map_location, weights_only, pickle_load_args, real_file)
    finally:
        if mapped is not None:
            mapped.close()
        if opened is not None:
            opened.close()


class _MappedFile(io.RawIOBase):
    """A read-only mmap as the seekable file zipfile wants (records are sliced from the map)."""

    def __init__(self, m):
        self.m = m

    def readable(self):
        return True

    def seekable(self):
        return True

    def seek(self, pos, whence=0):
        self.m.seek(pos, whence)
        return self.m.tell()

    def tell(self):
        return self.m.tell()

    def read(self, n=-1):
        return self.m.read() if n is None or n < 0 else self.m.read(n)

    def readinto(self, b):
        data = self.m.read(len(b))
        b[:len(data)] = data
        return len(data)


def _has_fileno(f):
    try:
        f.fileno()
        return True
    except (AttributeError, OSError, io.UnsupportedOperation, ValueError):
        return False


def get_unsafe_globals_in_checkpoint(f):
    """The globals in a checkpoint's data.pkl that ``weights_only`` would refuse."""
    is_path = isinstance(f, (str, os.PathLike))
    fobj = open(os.fspath(f), "rb") if is_path else f
    try:
        if not _is_zip(fobj):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        archive = _Archive(fobj)
        try:
            if archive.has("constants.pkl"):
                raise ValueError("Expected input to be a checkpoint returned by torch.save but "
                                 "got a torchscript checkpoint")
            data = archive.read("data.pkl")
        finally:
            archive.close()
    finally:
        if is_path:
            fobj.close()
    import pickletools
    found = set()
    strings = []
    for op, arg, _ in pickletools.genops(data):
        if op.name == "GLOBAL":
            module, name = _map_py2(*arg.split(" ", 1))
            found.add(f"{module}.{name}")
        elif op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8"):
            strings.append(arg)
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            module, name = _map_py2(strings[-2], strings[-1])
            found.add(f"{module}.{name}")
    safe = set(_torch_globals()) | set(_user_allowed_globals()) | _TORCH_ALLOWED_UNMAPPED
    return list(found - safe)
