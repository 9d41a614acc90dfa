"""DTensor on jax: a Tensor whose jax array carries a ``NamedSharding`` over a DeviceMesh.

``distribute_tensor(t, mesh, placements)`` places the full tensor ``t`` (the same on every
process) as a global jax array; eager ops on DTensors are jax ops on sharded arrays (jax's
sharding propagation decides their outputs' layout; the results are plain Tensors holding
sharded arrays); ``torchlike.compile`` of a step keeps the shardings in one program.

Per process: ``to_local()`` is the shard held by this process's first device of the mesh, and
``from_local(local, ...)`` takes this process's block (with one device per process, as under
torchrun with DTensor, that is torch's per-rank local tensor; with one process driving every
device it is the whole tensor for ``Shard``/``Replicate``).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P

from ..._tensor import Tensor
from ..device_mesh import DeviceMesh
from .placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "distribute_tensor", "distribute_module", "spec_of", "sharding_of",
           "placements_of"]


def _norm_placements(mesh, placements):
    if placements is None:
        placements = [Replicate()] * mesh.ndim
    placements = list(placements)
    if len(placements) != mesh.ndim:
        raise ValueError(f"`placements` must have the same length as `device_mesh.ndim`! "
                         f"Found placements length: {len(placements)}, and device_mesh.ndim: "
                         f"{mesh.ndim}.")
    for p in placements:
        if not isinstance(p, Placement):
            raise TypeError(f"placements must be Placement objects, got {type(p).__name__}")
    return placements


def spec_of(mesh, placements, ndim):
    """The PartitionSpec for ``placements`` (per mesh dim) of a tensor with ``ndim`` dims."""
    entries = [[] for _ in range(ndim)]
    unreduced = set()
    for name, p in zip(mesh._dims, placements):
        if isinstance(p, Shard):
            d = p.dim + ndim if p.dim < 0 else p.dim
            if not 0 <= d < ndim:
                raise IndexError(f"Shard(dim={p.dim}) of a {ndim}-d tensor")
            entries[d].append(name)
        elif isinstance(p, Partial):
            unreduced.add(name)
    spec = [None if not e else (e[0] if len(e) == 1 else tuple(e)) for e in entries]
    return canonical_spec(spec, unreduced)


def canonical_spec(entries, unreduced=()):
    """``P(*entries)`` without trailing ``None``s: the form XLA gives a program's outputs, so a
    parameter's sharding compares equal before and after a compiled step (and jit's cache
    keeps one entry)."""
    entries = list(entries)
    while entries and entries[-1] is None:
        entries.pop()
    return P(*entries, unreduced=set(unreduced)) if unreduced else P(*entries)


def _explicit(mesh):
    m = mesh._jax_mesh
    return Mesh(m.devices, m.axis_names, axis_types=(AxisType.Explicit,) * len(m.axis_names))


def _check_even(mesh, spec, shape):
    for d, e in enumerate(spec.partitions):
        axes = () if e is None else (e if isinstance(e, tuple) else (e,))
        k = 1
        for a in axes:
            k *= mesh._jax_mesh.shape[a]
        if k > 1 and shape[d] % k:
            raise NotImplementedError(
                f"DTensor: dim {d} of size {shape[d]} cannot be sharded over {k} devices: jax "
                f"shards evenly (torch would make uneven chunks). Pad the tensor to a multiple "
                f"of {k}, shard another dim, or replicate it (fully_shard pads for you).")


def sharding_of(mesh, placements, ndim):
    spec = spec_of(mesh, placements, ndim)
    m = _explicit(mesh) if spec.unreduced else mesh._jax_mesh
    return NamedSharding(m, spec)


def _entry_axes(entry):
    if entry is None:
        return ()
    return tuple(entry) if isinstance(entry, tuple) else (entry,)


def placements_of(sharding, dims):
    """torch's placements (one per mesh dim named in ``dims``) of a jax ``NamedSharding``."""
    out = []
    spec = sharding.spec
    for n in dims:
        pl = Replicate()
        for d, e in enumerate(spec):
            if n in _entry_axes(e):
                pl = Shard(d)
        if n in (spec.unreduced or ()):
            pl = Partial()
        out.append(pl)
    return tuple(out)


def _mesh_of(a):
    """The DeviceMesh (all of its dims) a jax array lies on: a 1-d mesh of its devices when it
    has no NamedSharding."""
    s = a.sharding
    platform = next(iter(s.device_set)).platform
    kind = {"gpu": "cuda", "tpu": "xla"}.get(platform, platform)
    if isinstance(s, NamedSharding):
        jm = s.mesh
        if any(t != AxisType.Auto for t in jm.axis_types):
            jm = Mesh(jm.devices, jm.axis_names, axis_types=(AxisType.Auto,) * len(jm.axis_names))
        return DeviceMesh(kind, None, _jax_mesh=jm, _dims=jm.axis_names), s
    devs = np.empty(len(s.device_set), dtype=object)
    for i, d in enumerate(sorted(s.device_set, key=lambda d: d.id)):
        devs[i] = d
    jm = Mesh(devs, ("dim_0",), axis_types=(AxisType.Auto,))
    return DeviceMesh(kind, None, _jax_mesh=jm, _dims=("dim_0",)), NamedSharding(jm, P())


def _local_block(a, true_shape=None):
    """This process's block of ``a`` (its first device of ``a``'s devices), cut to
    ``true_shape`` (a padded tensor's unpadded extent: torch's uneven ``torch.chunk`` shard,
    possibly empty)."""
    me = jax.process_index()
    shards = sorted((s for s in a.addressable_shards if s.device.process_index == me),
                    key=lambda s: s.device.id)
    if not shards:
        raise RuntimeError("to_local: this process holds no device of the mesh")
    s = shards[0]
    data = s.data
    if true_shape is not None and tuple(true_shape) != tuple(a.shape):
        cut = []
        for sl, n, m in zip(tuple(s.index) + (slice(None),) * (a.ndim - len(s.index)),
                            true_shape, a.shape):
            start = 0 if sl.start is None else sl.start
            stop = m if sl.stop is None else sl.stop
            cut.append(slice(0, max(0, min(stop, n) - start)))
        data = data[tuple(cut)]
    return data


class DTensor(Tensor):
    """A Tensor over a sharded jax array, with its mesh and placements (those of an op's result
    are read off its jax array's sharding)."""

    _grad_as_self = False

    @classmethod
    def _wrap(cls, data, mesh, placements, requires_grad=False):
        t = cls._make(data)
        t._spec = (mesh, tuple(placements))
        if requires_grad:
            t.requires_grad_(True)
        return t

    def _get_spec(self):
        spec = self.__dict__.get("_spec")
        if spec is None:
            mesh, sh = _mesh_of(self._data)
            spec = (mesh, placements_of(sh, mesh._dims))
        return spec

    @property
    def device_mesh(self):
        return self._get_spec()[0]

    @property
    def placements(self):
        return tuple(self._get_spec()[1])

    @property
    def grad(self):
        """The gradient, a DTensor: laid out as autograd's jax ops left it (its placements
        read off its sharding), or, for a fully sharded parameter, as the parameter (torch's
        FSDP reduce-scatters gradients into the parameter's shards)."""
        g = Tensor.grad.fget(self)
        if g is not None and type(g) is Tensor:
            g.__class__ = DTensor
            if self._grad_as_self:
                traced = (isinstance(g._data, jax.core.Tracer)
                          or isinstance(self._data, jax.core.Tracer))
                if not traced and g._data.sharding != self._data.sharding:
                    g._set_data(jax.device_put(g._data, self._data.sharding))
                g._spec = self._get_spec()
                if "_tl_shape" in self.__dict__:
                    g._tl_shape = self._tl_shape
        return g

    @grad.setter
    def grad(self, value):
        Tensor.grad.fset(self, value)

    def to_local(self, *, grad_placements=None):
        """This process's shard (torch's per-rank local tensor; an uneven dim's last shards
        are short or empty, as ``torch.chunk`` makes them)."""
        spec = self.__dict__.get("_spec")
        if spec is not None and not any(isinstance(p, Partial) for p in spec[1]):
            mesh, pl = spec
            s = self._data.sharding
            laid = (isinstance(s, NamedSharding) and set(mesh._dims) <= set(s.mesh.axis_names)
                    and placements_of(s, mesh._dims) == tuple(pl))
            coord = None if laid else mesh.get_coordinate()
            if coord is not None:
                # (a value not laid out as its placements say, e.g. a padded parameter's
                # unpadded state-dict entry: torch.chunk's block of the whole value)
                from ._utils import _local_shape_and_offset
                full = self.full_tensor()._data
                shape, off = _local_shape_and_offset(full.shape, mesh.shape, coord, pl)
                return Tensor._make(full[tuple(slice(o, o + n) if o < m else slice(0, 0)
                                               for o, n, m in zip(off, shape, full.shape))])
        return Tensor._make(_local_block(self._data, self.__dict__.get("_tl_shape")))

    def full_tensor(self, *, grad_placements=None):
        """The whole tensor, on this process's first device (a reduction for Partial)."""
        mesh = self.device_mesh
        rep = _reshard(self._data, mesh, [Replicate()] * mesh.ndim)
        a = rep.addressable_shards[0].data
        true = self.__dict__.get("_tl_shape")
        if true is not None and tuple(true) != tuple(a.shape):
            a = a[tuple(slice(0, n) for n in true)]
        return Tensor._make(a)

    def redistribute(self, device_mesh=None, placements=None, *, async_op=False,
                     forward_dtype=None, backward_dtype=None):
        mesh = device_mesh or self.device_mesh
        placements = _norm_placements(mesh, placements)
        _check_even(mesh, spec_of(mesh, placements, self.ndim), self.shape)
        return DTensor._wrap(_reshard(self._data, mesh, placements), mesh, placements)

    @staticmethod
    def from_local(local_tensor, device_mesh=None, placements=None, *, run_check=False,
                   shape=None, stride=None):
        mesh = device_mesh
        placements = _norm_placements(mesh, placements)
        x = np.asarray(local_tensor.detach().numpy())
        sh = sharding_of(mesh, placements, x.ndim)
        if any(isinstance(p, Partial) for p in placements):
            # this process's partial value on its first device of each partial group, zeros
            # on the others: the unreduced sum over devices is the sum over processes
            data = _partial_from(x, mesh, placements, sh)
        else:
            data = jax.make_array_from_process_local_data(sh, x, shape and tuple(shape))
        return DTensor._wrap(data, mesh, placements)

    def __repr__(self, *, tensor_contents=None):
        return (f"DTensor(local_tensor={self.to_local()!r}, device_mesh={self.device_mesh}, "
                f"placements={self.placements})")


def _partial_from(x, mesh, placements, sharding):
    jm = mesh._jax_mesh
    names = list(jm.axis_names)
    part_axes = [names.index(n) for n, p in zip(mesh._dims, placements) if isinstance(p, Partial)]
    me = jax.process_index()
    seen = set()
    arrays = []
    idx_map = NamedSharding(sharding.mesh, P(*sharding.spec.partitions)
                            ).addressable_devices_indices_map(x.shape)
    for pos, d in np.ndenumerate(jm.devices):
        if d.process_index != me:
            continue
        key = tuple(v for k, v in enumerate(pos) if k not in part_axes)
        block = x[idx_map[d]]
        if key in seen:
            block = np.zeros_like(block)
        seen.add(key)
        arrays.append(jax.device_put(block, d))
    return jax.make_array_from_single_device_arrays(x.shape, sharding, arrays)


def _reshard(a, mesh, placements):
    target = sharding_of(mesh, placements, a.ndim)
    src = a.sharding
    src_unreduced = isinstance(src, NamedSharding) and bool(src.spec.unreduced)
    if not (src_unreduced or target.spec.unreduced):
        return jax.device_put(a, target)
    # unreduced (Partial) arrays live on the Explicit twin of the mesh: reshard there
    em = _explicit(mesh)
    if not src_unreduced:
        spec = src.spec if isinstance(src, NamedSharding) else P()
        a = jax.device_put(a, NamedSharding(em, spec))
    out = jax.reshard(a, NamedSharding(em, target.spec))
    if not target.spec.unreduced:       # back on the mesh eager ops use
        out = jax.device_put(out, NamedSharding(mesh._jax_mesh, target.spec))
    return out


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0):
    """``tensor`` (the full value, the same on every process) laid out on ``device_mesh``."""
    if device_mesh is None:
        from ..device_mesh import init_device_mesh
        device_mesh = init_device_mesh("cpu", (len(jax.devices()),))
    placements = _norm_placements(device_mesh, placements)
    kinds = {p.reduce_op for p in placements if isinstance(p, Partial)}
    if len(kinds) > 1:
        raise ValueError("distribute_tensor: mixed Partial reduce types")
    x = np.asarray(tensor.detach().numpy())
    sh = sharding_of(device_mesh, placements, x.ndim)
    _check_even(device_mesh, sh.spec, x.shape)
    if sh.spec.unreduced:
        if jax.process_count() > 1:
            x = x if jax.process_index() == 0 else np.zeros_like(x)
        data = _partial_from(x, device_mesh, placements, sh)
    else:
        data = jax.make_array_from_callback(x.shape, sh, lambda idx: x[idx])
    return DTensor._wrap(data, device_mesh, placements, tensor.requires_grad)


def distribute_module(module, device_mesh=None, partition_fn=None, input_fn=None,
                      output_fn=None):
    """Run ``partition_fn(name, submodule, mesh)`` over the module tree (default: every
    parameter and buffer replicated on ``device_mesh``)."""
    from .parallel import _place_param
    mesh = device_mesh
    for name, sub in module.named_modules():
        if partition_fn is not None:
            partition_fn(name, sub, mesh)
        else:
            for pname in list(sub._parameters):
                if sub._parameters[pname] is not None:
                    _place_param(sub, pname, mesh, [Replicate()] * mesh.ndim)
    if input_fn is not None:
        module.register_forward_pre_hook(lambda m, args: input_fn(m, args, mesh))
    if output_fn is not None:
        module.register_forward_hook(lambda m, args, out: output_fn(m, out, mesh))
    return module


# ---------------------------------------------------------------- one device per process

def per_rank(mesh):
    """Whether ``mesh`` spans processes with one device each (torchrun's layout): sharded
    modules on it then take and give each rank's own tensors, as torch's."""
    if jax.process_count() == 1:
        return False
    me = jax.process_index()
    return sum(d.process_index == me for d in mesh._jax_mesh.devices.flat) == 1


def is_local(x):
    """A Tensor whose array lives on this process only (a rank's own tensor)."""
    return (isinstance(x, Tensor) and not isinstance(x._data, jax.core.Tracer)
            and x._data.is_fully_addressable)


def _my_device(jmesh):
    me = jax.process_index()
    return next(d for d in jmesh.devices.flat if d.process_index == me)


def _make_rank_functions():
    from ...autograd.function import Function

    class LocalToGlobal(Function):
        """This rank's block -> the global array laid out as ``sharding`` (of ``shape``); the
        gradient back is this rank's block of the global gradient."""

        @staticmethod
        def forward(ctx, x, sharding, shape):
            ctx.sharding = sharding
            a = jax.device_put(x._data, _my_device(sharding.mesh))
            return Tensor._make(jax.make_array_from_single_device_arrays(
                tuple(shape), sharding, [a]))

        @staticmethod
        def backward(ctx, g):
            a = jax.device_put(g._data, ctx.sharding)
            local = _local_block(a)
            return Tensor._make(jax.device_put(local, jax.local_devices()[0])), None, None

    class GlobalToLocal(Function):
        """A global array -> this rank's block of it laid out as ``sharding``; the gradient
        back is the ranks' blocks joined (times ``scale``)."""

        @staticmethod
        def forward(ctx, y, sharding, scale):
            ctx.sharding, ctx.scale, ctx.shape = sharding, scale, tuple(y.shape)
            a = jax.device_put(y._data, sharding)
            return Tensor._make(jax.device_put(_local_block(a), jax.local_devices()[0]))

        @staticmethod
        def backward(ctx, g):
            sh = ctx.sharding
            a = jax.make_array_from_single_device_arrays(
                ctx.shape, sh, [jax.device_put(g._data, _my_device(sh.mesh))])
            if ctx.scale != 1:
                a = a * jnp.asarray(ctx.scale, a.dtype)
            return Tensor._make(a), None, None

    return LocalToGlobal, GlobalToLocal


_RANK_FNS = []


def local_to_global(x, mesh, placements):
    """Rank ``x``'s block of a tensor laid out as ``placements`` on ``mesh`` (each Shard dim
    ``mesh``-size times longer globally), as ``DTensor.from_local``; differentiable."""
    if not _RANK_FNS:
        _RANK_FNS.extend(_make_rank_functions())
    shape = list(x.shape)
    for name, p in zip(mesh._dims, placements):
        if isinstance(p, Shard):
            shape[p.dim % x.ndim] *= mesh._jax_mesh.shape[name]
    return _RANK_FNS[0].apply(x, sharding_of(mesh, placements, x.ndim), tuple(shape))


def global_to_local(y, mesh, placements, scale=1):
    """This rank's block of ``y`` laid out as ``placements``; differentiable (the gradient
    joined over the ranks, times ``scale``)."""
    if not _RANK_FNS:
        _RANK_FNS.extend(_make_rank_functions())
    return _RANK_FNS[1].apply(y, sharding_of(mesh, placements, y.ndim), scale)


def _make_param_class():
    from ...nn.parameter import Parameter

    class DTensorParameter(Parameter, DTensor):
        """A sharded parameter (``fully_shard``, tensor parallelism): an ``nn.Parameter`` that
        is a DTensor (placements, ``device_mesh``, ``to_local()``, ``full_tensor()``), as
        torch's; its ``.grad`` is a DTensor laid out as it (``DTensor.grad``)."""
        __slots__ = ()
        _grad_as_self = True

    DTensorParameter.__name__ = DTensorParameter.__qualname__ = "DTensor"
    return DTensorParameter


_PARAM_CLASS = []


def as_dtensor_param(p, mesh, shape):
    """Make parameter ``p`` (laid out on ``mesh``'s jax mesh) a DTensor parameter over
    ``mesh``, of true shape ``shape`` (smaller than ``p``'s where it is padded)."""
    if not _PARAM_CLASS:
        _PARAM_CLASS.append(_make_param_class())
    if type(p) is not _PARAM_CLASS[0]:
        p.__class__ = _PARAM_CLASS[0]
    object.__setattr__(p, "_spec", (mesh, placements_of(p._data.sharding, mesh._dims)))
    if tuple(shape) != tuple(p.shape):
        object.__setattr__(p, "_tl_shape", tuple(shape))
    else:
        p.__dict__.pop("_tl_shape", None)
