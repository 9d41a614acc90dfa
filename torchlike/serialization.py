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
imported. ``load`` defaults to ``weights_only=True``: any other global is refused with
``pickle.UnpicklingError``.
"""
from __future__ import annotations

import _compat_pickle
import io
import os
import pickle
import random
import struct
import tempfile
import zipfile
from collections import Counter, OrderedDict

import jax.numpy as jnp
import numpy as np

from . import _dtype as D
from ._device import device as _device
from ._tensor import Size, Tensor

__all__ = ["save", "load", "DEFAULT_PROTOCOL"]

DEFAULT_PROTOCOL = 2
_ALIGN = 64
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C

# torch storage class name <-> dtype
_STORAGE_DTYPES = {
    "DoubleStorage": D.float64, "FloatStorage": D.float32, "HalfStorage": D.float16,
    "BFloat16Storage": D.bfloat16, "LongStorage": D.int64, "IntStorage": D.int32,
    "ShortStorage": D.int16, "CharStorage": D.int8, "ByteStorage": D.uint8,
    "BoolStorage": D.bool, "ComplexFloatStorage": D.complex64,
    "ComplexDoubleStorage": D.complex128,
}
_DTYPE_STORAGE = {d.name: n for n, d in _STORAGE_DTYPES.items()}


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
_REBUILD_PARAM = _TorchGlobal("torch._utils", "_rebuild_parameter")


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

    def persistent_id(self, obj):
        if isinstance(obj, _StorageRef):
            key = self._keys.get(id(obj))
            if key is None:
                key = self._keys[id(obj)] = str(len(self._keys))
                self.storages[key] = obj
            storage_type = _TorchGlobal("torch", _DTYPE_STORAGE[obj.dtype.name])
            return ("storage", storage_type, key, "cpu", int(obj.array.size))
        return None

    def reducer_override(self, obj):
        from .nn.parameter import Parameter
        if isinstance(obj, Tensor):
            if isinstance(obj, Parameter):
                plain = Tensor._make(obj._data)
                return (_REBUILD_PARAM, (plain, obj.requires_grad, OrderedDict()))
            if obj.dtype.name not in _DTYPE_STORAGE:
                raise pickle.PicklingError(f"cannot save a tensor of dtype {obj.dtype}")
            arr = np.asarray(obj._data)        # (ascontiguousarray would make 0-d 1-d)
            ref = _StorageRef(np.array(arr.reshape(-1), order="C"), obj.dtype)
            return (_REBUILD_V2, (ref, 0, tuple(arr.shape), tuple(obj.stride()),
                                  bool(obj.requires_grad), OrderedDict()))
        if isinstance(obj, Size):
            return (_TorchGlobal("torch", "Size"), (tuple(int(s) for s in obj),))
        if isinstance(obj, _device):
            args = (obj.type,) if obj.index is None else (obj.type, obj.index)
            return (_TorchGlobal("torch", "device"), args)
        return NotImplemented

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, D.dtype):
            obj = _TorchGlobal("torch", obj.name)
        super().save(obj, save_persistent_id)


def _aligned_info(zf, name):
    """A ZipInfo whose data starts on a 64-byte boundary (torch pads the same way)."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    offset = zf.fp.tell() if hasattr(zf.fp, "tell") else 0
    base = offset + 30 + len(name.encode()) + 4
    pad = (-base) % _ALIGN
    info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
    return info


def _write_archive(fileobj, obj, protocol):
    buf = io.BytesIO()
    pickler = _Pickler(buf, protocol)
    pickler.dump(obj)
    prefix = "archive/"
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
    with zipfile.ZipFile(fileobj, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, data in records:
            zf.writestr(_aligned_info(zf, prefix + name), data)


def save(obj, f, pickle_module=None, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Save ``obj`` to ``f`` (a path or a binary file object) in PyTorch's zip format.

    A path is written through a temporary file in the same folder and renamed over the
    target, so an interrupted save never leaves a half-written checkpoint.
    """
    if not _use_new_zipfile_serialization:
        raise NotImplementedError("torchlike.save writes only the zip format "
                                  "(_use_new_zipfile_serialization=True)")
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        folder = os.path.dirname(os.path.abspath(path))
        fd, tmp = tempfile.mkstemp(prefix=".tmp-" + os.path.basename(path) + "-", dir=folder)
        try:
            with os.fdopen(fd, "wb") as fh:
                _write_archive(fh, obj, pickle_protocol)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    else:
        _write_archive(f, obj, pickle_protocol)


# ============================================================================ loading
class _StorageType:
    """What ``torch.FloatStorage`` and friends unpickle to: just the dtype."""

    def __init__(self, name):
        self.name = name
        self.dtype = _STORAGE_DTYPES.get(name, D.uint8)

    def __repr__(self):
        return f"StorageType(dtype={self.dtype})"


class _LoadedStorage:
    __slots__ = ("array", "dtype", "location")

    def __init__(self, array, dtype, location):
        self.array, self.dtype, self.location = array, dtype, location


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor(storage, storage_offset, size, stride):
    if not isinstance(storage, _LoadedStorage):
        raise pickle.UnpicklingError("a tensor's storage is not a checkpoint storage record")
    arr = storage.array
    size = tuple(int(s) for s in size)
    numel = int(np.prod(size, dtype=np.int64))
    if numel == 0:
        out = np.zeros(size, arr.dtype)
    else:
        stride = tuple(int(s) for s in stride)
        last = storage_offset + sum((n - 1) * s for n, s in zip(size, stride))
        if storage_offset < 0 or last >= arr.size or any(s < 0 for s in stride):
            raise RuntimeError(f"checkpoint is corrupt: a tensor of size {list(size)} and "
                               f"stride {list(stride)} at offset {storage_offset} does not fit "
                               f"its storage of {arr.size} elements")
        item = arr.dtype.itemsize
        out = np.lib.stride_tricks.as_strided(arr[storage_offset:], shape=size,
                                              strides=tuple(s * item for s in stride)).copy()
    return Tensor._make(jnp.asarray(out))


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    from .nn.parameter import Parameter
    return Parameter(data, requires_grad)


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    p = _rebuild_parameter(data, requires_grad)
    _set_obj_state(p, state)
    return p


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
    if state:
        _set_obj_state(ret, state)
    return ret


def _layout(name):
    return name


def _torch_globals():
    from .nn.parameter import Parameter
    g = {
        "collections.OrderedDict": OrderedDict,
        "collections.Counter": Counter,
        "torch._utils._rebuild_tensor_v2": _rebuild_tensor_v2,
        "torch._utils._rebuild_tensor": _rebuild_tensor,
        "torch._utils._rebuild_parameter": _rebuild_parameter,
        "torch._utils._rebuild_parameter_with_state": _rebuild_parameter_with_state,
        "torch._tensor._rebuild_from_type_v2": _rebuild_from_type_v2,
        "torch.nn.parameter.Parameter": Parameter,
        "torch.Tensor": Tensor,
        "torch.Size": Size,
        "torch.device": _device,
        "torch.serialization._get_layout": _layout,
        "_codecs.encode": __import__("codecs").encode,
        "builtins.bytearray": bytearray,
        "builtins.set": set,
        "builtins.complex": complex,
    }
    for d in D._ALL:
        g["torch." + d.name] = d
    for alias in ("float", "double", "half", "long", "int", "short", "cfloat", "cdouble"):
        g["torch." + alias] = getattr(D, alias)
    for name in _STORAGE_DTYPES:
        g["torch." + name] = _StorageType(name)
    g["torch.UntypedStorage"] = _StorageType("UntypedStorage")
    g["torch.storage.UntypedStorage"] = g["torch.UntypedStorage"]
    return g


_UNSAFE_MESSAGE = (
    "In torchlike.load, `weights_only` defaults to True (as in torch >= 2.6): only tensors, "
    "primitive types, dictionaries and the few torch globals of torch's allowlist can be "
    "loaded. If you trust the source of the checkpoint, re-run torchlike.load with "
    "`weights_only=False`, which can run arbitrary code.")


class _Refused(pickle.UnpicklingError):
    """A global refused by the weights_only policy (distinct from a corrupt pickle)."""


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, zf, prefix, weights_only, map_location, storages):
        super().__init__(file, encoding="utf-8")
        self._zf, self._prefix = zf, prefix
        self._weights_only = weights_only
        self._map_location = map_location
        self._storages = storages
        self._globals = _torch_globals()

    def find_class(self, module, name):
        # protocol-2 pickles name Python 2 modules (``__builtin__.set``): map them as pickle does
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        g = self._globals.get(full)
        if g is not None:
            return g
        if self._weights_only:
            raise _Refused(
                f"Weights only load failed. Unsupported global: GLOBAL {full} was not an "
                f"allowed global by default. {_UNSAFE_MESSAGE}")
        if module == "torch" or module.startswith("torch."):
            raise _Refused(
                f"torchlike cannot load the torch global {full} (only tensors, parameters, "
                f"storages, dtypes, Size and device are mapped to torchlike)")
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"unsupported persistent id in checkpoint: {pid!r}")
        _, storage_type, key, location, numel = pid
        if not isinstance(storage_type, _StorageType):
            raise pickle.UnpicklingError(f"persistent id names a non-storage type: "
                                         f"{storage_type!r}")
        key = str(key)
        st = self._storages.get(key)
        if st is not None:
            return st
        dtype = storage_type.dtype
        name = self._prefix + "data/" + key
        try:
            raw = self._zf.read(name)
        except KeyError:
            raise RuntimeError(f"checkpoint is corrupt: the record {name} is missing") from None
        except (zipfile.BadZipFile, EOFError, OSError, ValueError) as e:
            raise RuntimeError(f"checkpoint is corrupt: cannot read {name}: {e}") from e
        itemsize = dtype.np.itemsize
        if storage_type.name == "UntypedStorage":
            numel = len(raw)
        if len(raw) != int(numel) * itemsize:
            raise RuntimeError(f"checkpoint is corrupt: the record {name} holds {len(raw)} "
                               f"bytes, expected {int(numel) * itemsize}")
        arr = np.frombuffer(raw, dtype=dtype.np.newbyteorder("<")
                            if dtype.np.itemsize > 1 else dtype.np)
        if arr.dtype.byteorder not in ("=", "|") and not arr.dtype.isnative:
            arr = arr.astype(dtype.np)
        location = self._map(location)
        st = self._storages[key] = _LoadedStorage(arr, dtype, location)
        return st

    def _map(self, location):
        ml = self._map_location
        if ml is None:
            return location
        if isinstance(ml, dict):
            return ml.get(location, location)
        if isinstance(ml, (str, _device)):
            return str(ml)
        if callable(ml):
            return location   # storages are host arrays; the callable is accepted, see load
        raise TypeError(f"map_location must be a str, device, dict or callable, got "
                        f"{type(ml).__name__}")


def _open_zip(f):
    try:
        return zipfile.ZipFile(f)
    except zipfile.BadZipFile as e:
        raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {e} (the file "
                           f"is truncated or is not a checkpoint)") from e


def _is_zip(fobj):
    pos = fobj.tell()
    magic = fobj.read(4)
    fobj.seek(pos)
    return magic == b"PK\x03\x04"


def _load_non_zip(fobj, weights_only):
    """Not a zip: torch's legacy format or a bare pickle. Checked with the same restricted
    unpickler (so a malicious pickle is refused), then rejected."""
    if fobj.read(1) == b"":
        raise EOFError("Ran out of input")
    fobj.seek(0)
    up = _Unpickler(fobj, None, "", weights_only, None, {})
    try:
        magic = up.load()
    except _Refused:
        raise
    except Exception as e:  # noqa: BLE001
        raise RuntimeError(f"Invalid magic number; corrupt file? ({e})") from e
    if magic == _LEGACY_MAGIC:
        raise RuntimeError("this checkpoint uses torch's legacy (pre-1.6) format, which "
                           "torchlike does not read; re-save it with torch.save in the default "
                           "zip format")
    raise RuntimeError("Invalid magic number; corrupt file?")


def load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None,
         **pickle_load_args):
    """Load an object saved by ``torch.save`` or ``torchlike.save``.

    ``weights_only=True`` (the default) accepts only tensors, containers, primitive types and
    torch's allowlisted globals; anything else raises ``pickle.UnpicklingError``.
    ``map_location`` (str, device, dict or callable) is accepted; every tensor lands on the host.
    A truncated or corrupt file raises ``RuntimeError`` naming what is wrong.
    """
    if weights_only is None:
        weights_only = True
    opened = None
    if isinstance(f, (str, os.PathLike)):
        opened = fobj = open(os.fspath(f), "rb")
    else:
        fobj = f
    try:
        if not _is_zip(fobj):
            return _load_non_zip(fobj, weights_only)
        zf = _open_zip(fobj)
        with zf:
            names = zf.namelist()
            pkl = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
            if not pkl:
                raise RuntimeError("checkpoint is corrupt: no data.pkl record in the archive")
            prefix = pkl[0][:-len("data.pkl")]
            bo = prefix + "byteorder"
            if bo in names and zf.read(bo) not in (b"little",):
                raise RuntimeError("torchlike reads only little-endian checkpoints")
            try:
                data = zf.read(pkl[0])
            except (zipfile.BadZipFile, EOFError, OSError, ValueError) as e:
                raise RuntimeError(f"checkpoint is corrupt: cannot read data.pkl: {e}") from e
            up = _Unpickler(io.BytesIO(data), zf, prefix, weights_only, map_location, {})
            try:
                result = up.load()
            except (_Refused, RuntimeError):
                raise
            except Exception as e:  # noqa: BLE001
                raise RuntimeError(f"checkpoint is corrupt: data.pkl does not unpickle: "
                                   f"{type(e).__name__}: {e}") from e
            return result
    finally:
        if opened is not None:
            opened.close()
