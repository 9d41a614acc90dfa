"""torch.func.vmap as one ``jax.vmap`` of the torch-style function."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from .. import _random
from .. import _vmap_levels
from .._tensor import Tensor
from . import _core as C
from . import _pytree as P
from ._tape import maybe_on_tape

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")


def _get_name(func):
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({_get_name(func.func)}, ...)"
    return repr(func)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """torch.func.vmap: ``func`` over a dimension of its inputs, traced once by ``jax.vmap``.

    ``in_dims``/``out_dims`` are ints, None, or (nested) tuples/lists/dicts matching the inputs
    and outputs; ``chunk_size`` splits the batch into chunks (one trace per chunk shape);
    ``randomness``: 'error' (random ops raise), 'same' (one draw shared by the batch) or
    'different' (each batch element draws its own values).
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return maybe_on_tape("vmap", lambda a, k: _vmap_impl(
            func, in_dims, out_dims, randomness, chunk_size, a, k), args, kwargs, func)

    return wrapped


def _check_out_dims(out_dims, func):
    bad = ValueError(
        f"vmap({_get_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None or "
        f"a python collection of ints representing where in the outputs the vmapped dimension "
        f"should appear.")
    if isinstance(out_dims, int):
        return
    for d in P.tree_flatten(out_dims)[0]:
        if not (d is None or isinstance(d, int)):
            raise bad


def _process_inputs(in_dims, args, func):
    name = _get_name(func)
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to "
                         f"be int or a (potentially nested) tuple matching the structure of "
                         f"inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, "
                         f"or you are trying to vmap over a function with no inputs. The latter "
                         f"is unsupported.")
    flat_args, spec = P.tree_flatten(args)
    flat_dims = P.broadcast_prefix(in_dims, spec)
    if flat_dims is None:
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
            f"structure of `inputs`. in_dims has structure {P.tree_flatten(in_dims)[1]} but "
            f"inputs has structure {spec}.")
    for i, (arg, d) in enumerate(zip(flat_args, flat_dims)):
        if d is not None and (not isinstance(d, int) or isinstance(d, bool)):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for an input but in_dim must be either an integer dimension or "
                             f"None.")
        if isinstance(d, int) and not isinstance(arg, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for an input but the input is of type {type(arg)}. We cannot vmap "
                             f"over non-Tensor arguments, please use None as the respective "
                             f"in_dim")
        if d is not None and (d < -arg.dim() or d >= arg.dim()):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for some input, but that input is a Tensor of dimensionality "
                             f"{arg.dim()} so expected in_dim to satisfy -{arg.dim()} <= in_dim "
                             f"< {arg.dim()}.")
        if d is not None and d < 0:
            flat_dims[i] = d % arg.dim()
    sizes = [arg._d.shape[d] for arg, d in zip(flat_args, flat_dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0], flat_dims, flat_args, spec


def _vmap_impl(func, in_dims, out_dims, randomness, chunk_size, args, kwargs):
    _check_out_dims(out_dims, func)
    batch, flat_dims, flat_args, spec = _process_inputs(in_dims, args, func)
    name = _get_name(func)
    bpos = [i for i, d in enumerate(flat_dims) if d is not None]
    axes = [flat_dims[i] for i in bpos]
    arrays = [flat_args[i]._data for i in bpos]
    snap = C.snapshot(C.outside_tensors(func, args, kwargs))

    if chunk_size is None or chunk_size >= batch:
        chunks = [(0, batch)]
    else:
        chunks = [(s, min(s + chunk_size, batch)) for s in range(0, batch, chunk_size)]
    results = []
    # 'same' with chunks: every chunk draws the same values (torch restores the rng state)
    rng_state = (_random.get_rng_state() if randomness == "same" and len(chunks) > 1
                 else None)
    try:
        for lo, hi in chunks:
            if rng_state is not None:
                _random.set_rng_state(rng_state)
            if len(chunks) == 1:
                arrs = arrays
            else:
                arrs = [jax.lax.slice_in_dim(a, lo, hi, axis=ax) for a, ax in zip(arrays, axes)]
            results.append(_run_chunk(func, name, out_dims, randomness, flat_args, flat_dims,
                                      spec, bpos, axes, arrs, hi - lo, kwargs))
    finally:
        C.check_no_leak(snap, "vmap", vmap=True)
    if len(results) == 1:
        outs, rebuild, odims = results[0]
        return rebuild(outs)
    _, rebuild, odims = results[0]
    cat = []
    for k, d in enumerate(odims):
        if d is None:
            cat.append(results[0][0][k])
        else:
            cat.append(jnp.concatenate([r[0][k] for r in results], axis=d))
    return rebuild(cat)


def _run_chunk(func, name, out_dims, randomness, flat_args, flat_dims, spec, bpos, axes, arrays,
               size, kwargs):
    out_axes = []          # filled while tracing: jax reads out_axes after the trace
    info = {}

    def inner(idx, *arrs):
        leaves = list(flat_args)
        for i, a in zip(bpos, arrs):
            t = leaves[i] = Tensor._make(a)
            # (inside a differentiating transform: tracked as the tensor it batches)
            t._requires_grad = flat_args[i]._requires_grad
        call_args = P.tree_unflatten(leaves, spec)
        with C.traced("vmap"), C.randomness_level(randomness, idx), \
                _vmap_levels.level(idx._trace):
            out = func(*call_args, **kwargs)
        oleaves, ospec = P.tree_flatten(out)
        if isinstance(out, Tensor):
            if isinstance(out_dims, int) or out_dims is None:
                odims = [out_dims]
            elif isinstance(out_dims, tuple) and len(out_dims) == 1:
                odims = list(out_dims)
            else:
                odims = None
        else:
            odims = P.broadcast_prefix(out_dims, ospec)
        if odims is None:
            raise ValueError(
                f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible "
                f"with the structure of `outputs`. out_dims has structure "
                f"{P.tree_flatten(out_dims)[1]} but outputs has structure {ospec}.")
        arrs_out, kept = [], []
        for k, (v, d) in enumerate(zip(oleaves, odims)):
            if isinstance(v, Tensor):
                n = v._data.ndim + 1          # (the output's rank with its batch dimension)
                if d is not None and not -n <= d < n:
                    raise IndexError(f"Dimension out of range (expected to be in range of "
                                     f"[{-n}, {n - 1}], but got {d})")
                arrs_out.append(v._data)
                kept.append(k)
                out_axes.append(d)
            elif d is not None:
                raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got "
                                 f"type {type(v)}. Did you mean to set out_dims= to None for "
                                 f"output?")
        # keep only the non-Tensor leaves: the Tensors wrap this trace's tracers
        info.update(leaves=[None if isinstance(v, Tensor) else v for v in oleaves], spec=ospec,
                    kept=kept, odims=[odims[k] for k in kept])
        return arrs_out

    idx = jnp.arange(size, dtype=jnp.uint32)
    try:
        outs = jax.vmap(inner, in_axes=(0, *axes), out_axes=out_axes, axis_size=size)(idx, *arrays)
    except ValueError as e:
        if "out_axes" in str(e) and "None" in str(e):
            raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor when "
                             f"out_dim is None") from None
        raise
    leaves, ospec, kept = info["leaves"], info["spec"], info["kept"]

    def rebuild(arrs):
        new = list(leaves)
        for k, a in zip(kept, arrs):
            new[k] = C.wrap(a)
        return P.tree_unflatten(new, ospec)

    odims = [None if d is None else (d if d >= 0 else d + jnp.ndim(a))
             for d, a in zip(info["odims"], outs)]
    return list(outs), rebuild, odims
