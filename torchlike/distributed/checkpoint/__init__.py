"""torch.distributed.checkpoint (DCP): save and load sharded state dicts.

``dcp.save(state_dict, checkpoint_id=dir)`` writes every tensor of a (nested) state dict as
the blocks its processes hold -- each block once, by the process holding its first replica --
plus one metadata file with the global shapes and dtypes and the non-tensor values.
``dcp.load(state_dict, checkpoint_id=dir)`` reads into the tensors of ``state_dict`` in place,
each laid out as it already is: a checkpoint written on one mesh (or one device) loads onto
another, as torch's resharding load does. Use ``state_dict.get_state_dict`` /
``set_state_dict`` for a model and its optimizers.

The files are torchlike's own (numpy ``.npz`` blocks and a JSON ``.metadata``), not torch's
``.distcp`` format: a DCP checkpoint moves between torchlike jobs; to hand weights to torch,
save a full state dict with ``torchlike.save``.
"""
from __future__ import annotations

import base64
import glob
import json
import os
import pickle

import jax
import numpy as np

from ..._tensor import Tensor
from . import state_dict  # noqa: F401

__all__ = ["save", "load", "FileSystemWriter", "FileSystemReader", "state_dict",
           "async_save", "CheckpointException"]

_FORMAT = "torchlike-dcp/1"


class CheckpointException(RuntimeError):
    pass


class FileSystemWriter:
    def __init__(self, path, single_file_per_rank=True, sync_files=True, thread_count=1,
                 per_thread_copy_ahead=10000000, cache_staged_state_dict=False, overwrite=True):
        self.path = os.fspath(path)


class FileSystemReader:
    def __init__(self, path):
        self.path = os.fspath(path)


def _flatten(obj, path=()):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _flatten(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _flatten(v, path + (i,))
    else:
        yield path, obj


def _key(path):
    return json.dumps([p if isinstance(p, (int, str)) else repr(p) for p in path])


def _dir(checkpoint_id, storage, what):
    if storage is not None:
        return storage.path
    if checkpoint_id is None:
        raise ValueError(f"dcp.{what}: pass checkpoint_id (a directory) or storage_"
                         f"{'writer' if what == 'save' else 'reader'}")
    return os.fspath(checkpoint_id)


def _sync(name):
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils
        multihost_utils.sync_global_devices(name)


def save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
         process_group=None, no_dist=False):
    """Write ``state_dict`` (nested dicts and lists of tensors and plain values) under the
    directory ``checkpoint_id``; every process of the job calls it."""
    path = _dir(checkpoint_id, storage_writer, "save")
    os.makedirs(path, exist_ok=True)
    me = jax.process_index()
    blocks, meta, objects = {}, {}, {}
    for p, v in _flatten(state_dict):
        k = _key(p)
        if isinstance(v, Tensor):
            a = v._data
            meta[k] = {"shape": list(a.shape), "dtype": str(a.dtype)}
            for s in a.addressable_shards:
                if s.replica_id != 0:
                    continue
                start = [0 if sl.start is None else sl.start for sl in
                         (s.index + (slice(None),) * (a.ndim - len(s.index)))]
                blocks[f"{len(blocks)}"] = np.asarray(s.data)
                meta.setdefault("_blocks", {})
                blocks_meta = meta["_blocks"]
                blocks_meta[f"{len(blocks) - 1}"] = [k, start]
        else:
            objects[k] = base64.b64encode(pickle.dumps(v)).decode()
    index = meta.pop("_blocks", {})
    with open(os.path.join(path, f"__{me}_0.distcp"), "wb") as f:
        np.savez(f, **blocks)
    with open(os.path.join(path, f"__{me}_0.index.json"), "w") as f:
        json.dump(index, f)
    if me == 0:
        with open(os.path.join(path, ".metadata"), "w") as f:
            json.dump({"format": _FORMAT, "tensors": meta, "objects": objects}, f)
    _sync("torchlike-dcp-save")
    return None


def load(state_dict, *, checkpoint_id=None, storage_reader=None, planner=None,
         process_group=None, no_dist=False):
    """Read the checkpoint under ``checkpoint_id`` into ``state_dict`` in place: its tensors
    get the saved values in their own layout, its other values the saved ones."""
    path = _dir(checkpoint_id, storage_reader, "load")
    _sync("torchlike-dcp-load")
    try:
        with open(os.path.join(path, ".metadata")) as f:
            meta = json.load(f)
    except FileNotFoundError:
        raise CheckpointException(f"no checkpoint metadata under {path!r}") from None
    if meta.get("format") != _FORMAT:
        raise CheckpointException(f"{path!r} is not a torchlike DCP checkpoint")
    tensors, objects = meta["tensors"], meta["objects"]
    want = {}
    for p, v in _flatten(state_dict):
        k = _key(p)
        if isinstance(v, Tensor):
            if k not in tensors:
                raise RuntimeError(f"Missing key in checkpoint state_dict: {'.'.join(map(str, p))}.")
            m = tensors[k]
            if list(v.shape) != m["shape"]:
                raise RuntimeError(f"Size mismatch between saved {tuple(m['shape'])} and "
                                   f"current: {tuple(v.shape)} for {'.'.join(map(str, p))}")
            want[k] = (v, np.zeros(m["shape"], m["dtype"]))
        elif k in objects:
            _assign(state_dict, p, pickle.loads(base64.b64decode(objects[k])))
        else:
            raise RuntimeError(f"Missing key in checkpoint state_dict: {'.'.join(map(str, p))}.")
    for data_file in sorted(glob.glob(os.path.join(path, "__*_0.distcp"))):
        with open(data_file[:-len(".distcp")] + ".index.json") as f:
            index = json.load(f)
        with np.load(data_file) as blocks:
            for name, (k, start) in index.items():
                if k in want:
                    b = blocks[name]
                    want[k][1][tuple(slice(s, s + n) for s, n in zip(start, b.shape))] = b
    for k, (t, full) in want.items():
        sh = t._data.sharding
        data = jax.make_array_from_callback(full.shape, sh, lambda idx, full=full: full[idx])
        t._set_data(data.astype(t._d.dtype) if data.dtype != t._d.dtype else data)


def _assign(root, path, value):
    for p in path[:-1]:
        root = root[p]
    root[path[-1]] = value


def async_save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
               process_group=None, async_checkpointer_type=None, async_stager=None,
               no_dist=False, use_collectives=True):
    """``save`` done before it returns; the future is already resolved."""
    import concurrent.futures
    save(state_dict, checkpoint_id=checkpoint_id, storage_writer=storage_writer)
    f = concurrent.futures.Future()
    f.set_result(None)
    return f
