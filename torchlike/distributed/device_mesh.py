"""torch.distributed.device_mesh on jax devices: a DeviceMesh is a ``jax.sharding.Mesh``.

The global view: one mesh spans every device of every process (``jax.devices()``); one process
may drive all its local devices. ``mesh["tp"]`` is the same jax mesh seen through one of its
dimensions (placements on it leave the other dimensions replicated), so tensors placed on
``mesh["dp"]`` and ``mesh["tp"]`` compose in one program.

>>> mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
>>> mesh["tp"].size()
4
"""
from __future__ import annotations

import math

import jax
import numpy as np
from jax.sharding import AxisType, Mesh

__all__ = ["DeviceMesh", "init_device_mesh"]

_PLATFORM = {"cpu": "cpu", "cuda": "gpu", "gpu": "gpu", "xla": "tpu", "tpu": "tpu"}


def _platform(device_type):
    t = device_type.split(":")[0]
    if t not in _PLATFORM:
        raise RuntimeError(f"DeviceMesh: device type {device_type!r} has no jax platform "
                           f"(use 'cpu', 'cuda' or 'xla')")
    return _PLATFORM[t]


class DeviceMesh:
    """An n-d arrangement of jax devices with named dimensions (torch's DeviceMesh API)."""

    def __init__(self, device_type, mesh, *, mesh_dim_names=None, _jax_mesh=None, _dims=None):
        self.device_type = device_type
        if _jax_mesh is None:
            ids = np.asarray(mesh.tolist() if hasattr(mesh, "tolist") else mesh, dtype=np.int64)
            devs = jax.devices(_platform(device_type))
            if ids.size and (ids.max() >= len(devs) or ids.min() < 0):
                raise RuntimeError(f"DeviceMesh: device ids {ids.tolist()} out of range for "
                                   f"{len(devs)} {device_type} devices")
            names = tuple(mesh_dim_names) if mesh_dim_names else tuple(
                f"dim_{i}" for i in range(ids.ndim))
            arr = np.empty(ids.shape, dtype=object)
            for idx in np.ndindex(ids.shape):
                arr[idx] = devs[int(ids[idx])]
            _jax_mesh = Mesh(arr, names, axis_types=(AxisType.Auto,) * len(names))
            _dims = names
        self._jax_mesh = _jax_mesh
        self._dims = tuple(_dims)
        self.mesh_dim_names = tuple(mesh_dim_names) if mesh_dim_names else (
            self._dims if not self._dims[0].startswith("dim_") else None)

    # ---- torch's API
    @property
    def mesh(self):
        """Device ids (indices in ``jax.devices()``) in this mesh's layout."""
        index = {d: i for i, d in enumerate(jax.devices(self._jax_mesh.devices.flat[0].platform))}
        full = np.vectorize(lambda d: index[d], otypes=[np.int64])(self._jax_mesh.devices)
        # a sub-mesh: the slice through this process's first device along the other dims
        axes = list(self._jax_mesh.axis_names)
        keep = [axes.index(n) for n in self._dims]
        me = next(i for i, d in np.ndenumerate(self._jax_mesh.devices)
                  if d.process_index == jax.process_index())
        sl = tuple(slice(None) if k in keep else me[k] for k in range(len(axes)))
        return full[sl]

    @property
    def ndim(self):
        return len(self._dims)

    @property
    def shape(self):
        return tuple(self._jax_mesh.shape[n] for n in self._dims)

    def size(self, mesh_dim=None):
        if mesh_dim is None:
            return math.prod(self.shape)
        return self.shape[mesh_dim]

    def __getitem__(self, names):
        names = (names,) if isinstance(names, str) else tuple(names)
        if self.mesh_dim_names is None:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names!")
        for n in names:
            if n not in self._dims:
                raise KeyError(f"Invalid mesh_dim_name {n} specified. Valid mesh_dim_names "
                               f"are {list(self._dims)}.")
        return DeviceMesh(self.device_type, None, mesh_dim_names=names,
                          _jax_mesh=self._jax_mesh, _dims=names)

    def get_rank(self):
        return jax.process_index()

    def _my_position(self):
        """This process's device's index in the whole jax mesh, when the process holds exactly
        one of its devices (torchrun's layout: a rank per device); else None."""
        me = jax.process_index()
        mine = [i for i, d in np.ndenumerate(self._jax_mesh.devices) if d.process_index == me]
        return mine[0] if len(mine) == 1 else None

    def get_local_rank(self, mesh_dim=None):
        """This rank's index along ``mesh_dim`` (0 when one process drives several devices of
        the mesh: jax's single controller)."""
        c = self.get_coordinate()
        if c is None:
            return 0
        if mesh_dim is None:
            if self.ndim > 1:
                raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions",
                                   "Optional kwarg `mesh_dim` needs to be specified when "
                                   "device_mesh.ndim > 1.")
            mesh_dim = 0
        if isinstance(mesh_dim, str):
            mesh_dim = self._dims.index(mesh_dim)
        return c[mesh_dim]

    def get_coordinate(self):
        """This rank's coordinate in the mesh (one device per process, as under torchrun);
        None when a process drives several of its devices."""
        pos = self._my_position()
        if pos is None:
            return None
        axes = list(self._jax_mesh.axis_names)
        return [int(pos[axes.index(n)]) for n in self._dims]

    def get_group(self, mesh_dim=None):
        raise NotImplementedError("DeviceMesh.get_group: a DeviceMesh is jax's global view; "
                                  "its dimensions are mesh axes, not process groups")

    def _flatten(self, mesh_dim_name=None):
        raise NotImplementedError("DeviceMesh._flatten")

    def __eq__(self, other):
        return (isinstance(other, DeviceMesh) and self._jax_mesh == other._jax_mesh
                and self._dims == other._dims)

    def __hash__(self):
        return hash((self._jax_mesh, self._dims))

    def __repr__(self):
        """torch's: the sizes (named when the dims have names), the device type and each
        dim's stride in the mesh it was cut from (``TORCH_DISTRIBUTED_DEBUG=DETAIL`` adds
        the device ids)."""
        import os
        if self.mesh_dim_names:
            sizes = "(" + ", ".join(f"{k}={v}" for k, v in zip(self.mesh_dim_names,
                                                               self.shape)) + ")"
        else:
            sizes = f"{self.shape}"
        axes = list(self._jax_mesh.axis_names)
        full = [self._jax_mesh.shape[a] for a in axes]
        stride = tuple(math.prod(full[axes.index(n) + 1:]) for n in self._dims)
        out = f"DeviceMesh({sizes}, '{self.device_type}', stride={stride}"
        if os.environ.get("TORCH_DISTRIBUTED_DEBUG", "") == "DETAIL":
            out += f", Mesh: {self.mesh.tolist()}"
        return out + ")"


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """A mesh of ``prod(mesh_shape)`` jax devices of ``device_type`` (all devices, every
    process)."""
    mesh_shape = tuple(mesh_shape)
    if mesh_dim_names is not None:
        if len(set(mesh_dim_names)) != len(mesh_dim_names):
            raise RuntimeError(f"Each mesh_dim_name must be unique. Found repeated mesh_dim_name "
                               f"in mesh_dim_names {tuple(mesh_dim_names)}")
        if len(mesh_shape) != len(mesh_dim_names):
            raise RuntimeError(f"mesh_shape and mesh_dim_names should have same length! Found "
                               f"len(mesh_dim_names): {len(mesh_dim_names)} and "
                               f"len(mesh_shape):{len(mesh_shape)}.")
    n = len(jax.devices(_platform(device_type)))
    if math.prod(mesh_shape) != n:
        raise RuntimeError(f"init_device_mesh: mesh_shape {mesh_shape} holds "
                           f"{math.prod(mesh_shape)} devices, but jax has {n} {device_type} "
                           f"devices in this job (the global view's mesh spans all of them)")
    return DeviceMesh(device_type, np.arange(n).reshape(mesh_shape),
                      mesh_dim_names=mesh_dim_names)
