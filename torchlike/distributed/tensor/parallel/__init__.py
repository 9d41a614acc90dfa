"""torch.distributed.tensor.parallel: tensor-parallel plans as jax shardings.

``ColwiseParallel`` shards a Linear's weight ``[out, in]`` on dim 0 (``P("tp", None)``, bias
``P("tp")``): its output is sharded on the last dim. ``RowwiseParallel`` shards the weight on
dim 1 (``P(None, "tp")``, bias replicated): jax inserts the all-reduce of the partial products.
``SequenceParallel`` keeps a module's parameters replicated and shards its input on the
sequence dim. Inputs enter the mesh as the style's ``input_layouts`` say (replicated by
default); the layers' math is jax's, on sharded arrays. A sharded dim the mesh does not
divide is padded with zeros (torch shards it unevenly): the module computes with the unpadded
slice, as FSDP's padded parameters.
"""
from __future__ import annotations

import fnmatch

import jax

from .._api import (DTensor, as_dtensor_param, global_to_local, is_local, local_to_global,
                    per_rank)
from .._api import sharding_of as _sharding
from ..._shim import add_call_fn, add_input_fn, place_padded, true_shape
from ..placement_types import Replicate, Shard

__all__ = ["parallelize_module", "ColwiseParallel", "RowwiseParallel", "SequenceParallel",
           "ParallelStyle", "PrepareModuleInput", "PrepareModuleOutput"]


def _place_param(module, name, mesh, placements):
    """Lay parameter ``name`` out on ``mesh`` (an uneven dim is padded: ``_shim.place_padded``)."""
    p = module._parameters[name]
    place_padded(module, name, _sharding(mesh, placements, p.ndim))
    as_dtensor_param(module._parameters[name], mesh, true_shape(module, name))


def _rank_fn(mesh, in_layout, out_layout, use_local_output):
    """One device per process: each rank's tensor inputs are its blocks of ``in_layout``
    (joined into global arrays); the output is this rank's block of ``out_layout``
    (``use_local_output``) or a DTensor laid out so, as torch's styles give them."""
    from ...._tensor import Tensor

    def fn(m, args):
        args = tuple(local_to_global(a, mesh, [in_layout]) if is_local(a) and a.ndim > 0
                     else a for a in args)

        def post(out):
            if not isinstance(out, Tensor) or out.ndim == 0:
                return out
            if use_local_output:
                return global_to_local(out, mesh, [out_layout])
            out = _to_mesh(out, mesh, out_layout)
            if type(out) is Tensor:
                out.__class__ = DTensor
            return out
        return args, post
    return fn


def _to_mesh(x, mesh, placement):
    from ...._tensor import Tensor
    if not isinstance(x, Tensor):
        return x
    pl = [placement] * mesh.ndim
    if isinstance(placement, Shard) and x.shape[placement.dim] % mesh.size():
        pl = [Replicate()] * mesh.ndim
    sh = _sharding(mesh, pl, x.ndim)
    if not isinstance(x._data, jax.core.Tracer) and x._data.sharding == sh:
        return x
    return _DevicePut.apply(x, sh)


def _make_device_put():
    from ....autograd.function import Function

    class DevicePut(Function):
        """Re-lay ``x`` out as ``sharding``; the gradient goes back to ``x``'s layout."""
        _jax_differentiable = True   # (its backward is the forward's derivative)

        @staticmethod
        def forward(ctx, x, sharding):
            from ...._tensor import Tensor
            ctx.src = None if isinstance(x._data, jax.core.Tracer) else x._data.sharding
            return Tensor._make(_put(x._data, sharding))

        @staticmethod
        def backward(ctx, g):
            from ...._tensor import Tensor
            if ctx.src is None:         # traced: the compiled program picks the layout
                return g, None
            return Tensor._make(_put(g._data, ctx.src)), None

    return DevicePut


def _put(a, sharding):
    """``a`` laid out as ``sharding`` (a constraint inside a traced program)."""
    if isinstance(a, jax.core.Tracer):
        return jax.lax.with_sharding_constraint(a, sharding)
    return jax.device_put(a, sharding)


class _Lazy:
    cls = None

    def apply(self, *a):
        if _Lazy.cls is None:
            _Lazy.cls = _make_device_put()
        return _Lazy.cls.apply(*a)


_DevicePut = _Lazy()


class ParallelStyle:
    input_layout = Replicate()

    def _apply(self, module, mesh):
        raise NotImplementedError

    def _input_hook(self, mesh, placement):
        def fn(m, args):
            return tuple(_to_mesh(a, mesh, placement) for a in args)
        return fn


class ColwiseParallel(ParallelStyle):
    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):
        self.input_layouts = input_layouts or Replicate()
        self.output_layouts = output_layouts or Shard(-1)
        self.use_local_output = use_local_output

    def _apply(self, module, mesh):
        for name in ("weight", "bias"):
            if module._parameters.get(name) is not None:
                _place_param(module, name, mesh, [Shard(0)] * mesh.ndim)
        if per_rank(mesh):
            add_call_fn(module, _rank_fn(mesh, self.input_layouts, self.output_layouts,
                                         self.use_local_output))
        add_input_fn(module, self._input_hook(mesh, self.input_layouts))
        return module


class RowwiseParallel(ParallelStyle):
    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):
        self.input_layouts = input_layouts or Shard(-1)
        self.output_layouts = output_layouts or Replicate()
        self.use_local_output = use_local_output

    def _apply(self, module, mesh):
        w = module._parameters.get("weight")
        if w is not None:
            _place_param(module, "weight", mesh, [Shard(w.ndim - 1)] * mesh.ndim)
        if module._parameters.get("bias") is not None:
            _place_param(module, "bias", mesh, [Replicate()] * mesh.ndim)
        if per_rank(mesh):
            add_call_fn(module, _rank_fn(mesh, self.input_layouts, self.output_layouts,
                                         self.use_local_output))
        return module


class SequenceParallel(ParallelStyle):
    def __init__(self, *, sequence_dim=1, use_local_output=False):
        self.sequence_dim = sequence_dim
        self.use_local_output = use_local_output

    def _apply(self, module, mesh):
        for name, p in list(module._parameters.items()):
            if p is not None:
                _place_param(module, name, mesh, [Replicate()] * mesh.ndim)
        if per_rank(mesh):
            layout = Shard(self.sequence_dim)
            add_call_fn(module, _rank_fn(mesh, layout, layout, self.use_local_output))
        add_input_fn(module, self._input_hook(mesh, Shard(self.sequence_dim)))
        return module


class PrepareModuleInput(ParallelStyle):
    def __init__(self, *, input_layouts=None, desired_input_layouts=None, **kw):
        self.desired = desired_input_layouts

    def _apply(self, module, mesh):
        want = self.desired if isinstance(self.desired, (list, tuple)) else [self.desired]

        def fn(m, args):
            return tuple(_to_mesh(a, mesh, w) if w is not None else a
                         for a, w in zip(args, list(want) + [None] * len(args)))
        add_input_fn(module, fn)
        return module


class PrepareModuleOutput(ParallelStyle):
    def __init__(self, *, output_layouts=None, desired_output_layouts=None, **kw):
        self.desired = desired_output_layouts

    def _apply(self, module, mesh):
        want = self.desired

        def hook(m, args, out):
            return _to_mesh(out, mesh, want)
        module.register_forward_hook(hook)
        return module


def parallelize_module(module, device_mesh=None, parallelize_plan=None, *, src_data_rank=0):
    """Apply ``parallelize_plan`` ({fqn or pattern: style} or one style) to ``module``."""
    mesh = device_mesh
    if mesh is None:
        from ...device_mesh import init_device_mesh
        mesh = init_device_mesh("cpu", (len(jax.devices()),))
    if mesh.ndim != 1:
        raise ValueError(f"parallelize_module: expected a 1-D mesh (e.g. mesh['tp']), got "
                         f"{mesh.ndim}-D")
    if parallelize_plan is None:
        return module
    if isinstance(parallelize_plan, ParallelStyle):
        return parallelize_plan._apply(module, mesh)
    for pattern, style in parallelize_plan.items():
        hits = [(n, m) for n, m in module.named_modules() if n and fnmatch.fnmatchcase(n, pattern)]
        if not hits:
            raise ValueError(f"parallelize_module: no submodule matches {pattern!r}")
        for _, m in hits:
            style._apply(m, mesh)
    return module
