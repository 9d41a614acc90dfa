"""Views and aliases on immutable jax arrays: PyTorch's shared-storage semantics.

A tensor produced by a view op (basic indexing, view/reshape, transpose, permute, squeeze,
unsqueeze, expand, diagonal, split/unbind/chunk, ...), by ``detach()`` or by ``.data`` is an
*alias* of a root tensor (the one that owns the storage). It records how it was derived from its
parent; from that, lazily, an integer *index map*: for each of its elements, the flat position
in the root that it reads. With the map, any view is a gather from the root and any write into a
view is a scatter into the root — for every kind of view, with no per-view-op inverse code.

Writes:

* into the root: the root's array is replaced; every live alias is refreshed (a jitted gather);
* into an alias: the new values are scattered into the root, then the same refresh.

Autograd follows torch's CopySlices: a write into a view of a tensor that requires grad is
recorded on the root as a ``CopySlices`` node (gradient: zero at the written positions for the
old root, the gathered cotangent for the written values); aliases that take part in autograd get
a fresh ``AsStridedBackward0`` node reading from the root's new history. The version counter is
one list shared by the root and all its aliases.
"""
from __future__ import annotations

import weakref

import jax
import jax.numpy as jnp

from ._ops._registry import OPS, apply, defop

__all__ = ["write", "make_view", "detached_alias", "alias_index"]


class Alias:
    """How an alias derives from its root: parent tensor, the view op's forward, extra args."""

    __slots__ = ("root", "parent", "fwd", "rest", "k", "detached", "idx", "overlap", "multi")

    def __init__(self, root, parent, fwd, rest, k, detached, overlap, multi=None):
        self.root = root
        self.parent = parent
        self.fwd = fwd
        self.rest = rest
        self.k = k
        self.detached = detached
        self.idx = None
        self.overlap = overlap
        self.multi = multi      # the creating node's name if the op returned several views


def _root_of(t):
    a = t._alias
    return t if a is None else a.root


def _aliases(root):
    d = root.__dict__.get("_aliases")
    if d is None:
        d = root.__dict__["_aliases"] = weakref.WeakSet()
    return d


_iota = jax.jit(lambda n: jnp.arange(n, dtype=jnp.int64), static_argnums=0)


def alias_index(t):
    """The flat root positions read by ``t`` (None: ``t`` reads the whole root as it is)."""
    a = t._alias
    if a is None:
        return None
    if a.idx is None:
        if a.fwd is None:
            return None
        pidx = alias_index(a.parent)
        if pidx is None:
            shape = a.root._data.shape
            pidx = _iota(int(a.root._data.size)).reshape(shape)
        out = a.fwd(pidx, *a.rest)
        a.idx = out[a.k] if isinstance(out, tuple) else out
    return a.idx


def detached_alias(t):
    """``t.detach()``: same storage and version counter, no autograd history."""
    from ._tensor import Tensor
    out = Tensor._make(t._data)
    root = _root_of(t)
    ta = t._alias
    out._vc = root._vc
    out._alias = Alias(root, t, None, (), 0, True, ta is not None and ta.overlap)
    if ta is not None:
        # a detached view reads the same root positions as the view it came from
        out._alias.idx = alias_index(t)
        out._alias.fwd = ta.fwd if out._alias.idx is None else None
    _aliases(root).add(out)
    return out


def make_view(out, parent, fwd, rest, k, overlap=False, multi=None):
    """Register ``out`` (output ``k`` of a view op's ``fwd`` on ``parent``) as an alias."""
    root = _root_of(parent)
    pa = parent._alias
    out._vc = root._vc
    out._alias = Alias(root, parent, fwd, rest, k, False,
                       overlap or (pa is not None and pa.overlap),
                       multi or (pa.multi if pa is not None else None))
    _aliases(root).add(out)
    return out


# ------------------------------------------------------------------ the two tape ops

@defop("alias_gather", saves=False, grad_name="AsStridedBackward0")
def _gather(root, idx):
    return jnp.reshape(root, (-1,))[idx]


@defop("copy_slices", saves=False, grad_name="CopySlices")
def _copy_slices(root, values, idx):
    flat = jnp.reshape(root, (-1,))
    flat = flat.at[jnp.reshape(idx, (-1,))].set(jnp.reshape(values, (-1,)).astype(root.dtype))
    return jnp.reshape(flat, root.shape)


_scatter = jax.jit(lambda root, values, idx: jnp.reshape(
    jnp.reshape(root, (-1,)).at[jnp.reshape(idx, (-1,))].set(
        jnp.reshape(values, (-1,)).astype(root.dtype)), root.shape))
_take = jax.jit(lambda root, idx: jnp.reshape(root, (-1,))[idx])

_OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation.")


def check_writable(t):
    a = t._alias
    if a is not None and a.overlap:
        raise RuntimeError(_OVERLAP)


def write(t, new, grad_out=None):
    """Write ``new`` (a jax array shaped like ``t``) into ``t``.

    ``grad_out``: the Tensor holding ``new`` with its autograd history, when the write is
    recorded (an in-place op in grad mode); None for a raw write (no_grad, optimizers, init).
    """
    a = t._alias
    if a is None:
        t._data = new
        t._vc[0] += 1
        if grad_out is not None and grad_out.grad_fn is not None:
            _rebase(t, grad_out.grad_fn, grad_out._output_nr)
        _refresh(t)
        return
    check_writable(t)
    root = a.root
    idx = alias_index(t)
    track = (grad_out is not None and not a.detached
             and (root._requires_grad or grad_out._requires_grad))
    if track:
        from ._tensor import Tensor
        idx_t = Tensor._make(idx if idx is not None else
                             _iota(int(root._data.size)).reshape(root._data.shape))
        r = apply(OPS["copy_slices"], root, grad_out, idx_t)
        root._data = r._data
        if r.grad_fn is not None:
            _rebase(root, r.grad_fn, 0)
    elif idx is None:
        root._data = new.astype(root._data.dtype).reshape(root._data.shape)
    else:
        root._data = _scatter(root._data, new, idx)
    t._vc[0] += 1   # the root's counter, except for a `.data` alias, which has its own
    _refresh(root)


def _rebase(t, node, output_nr):
    """Give ``t`` a new history. Hooks stay with the old node; retain_grad moves (torch#79996)."""
    old = t.grad_fn
    if t._retains_grad and old is not None and old.retains:
        old.retains.pop(t._output_nr, None)
        if node.retains is None:
            node.retains = {}
        node.retains[output_nr] = weakref.ref(t)
    t.grad_fn = node
    t._output_nr = output_nr
    t._requires_grad = True


def _refresh(root):
    """Make every live alias of ``root`` read the root's current values (and history)."""
    d = root.__dict__.get("_aliases")
    if not d:
        return
    rdata = root._data
    track = root._requires_grad and root.grad_fn is not None
    for v in list(d):
        idx = alias_index(v)
        v._data = rdata.reshape(v._data.shape) if idx is None else _take(rdata, idx)
        if track and not v._alias.detached:
            from ._tensor import Tensor
            g = apply(OPS["alias_gather"], root, Tensor._make(
                idx if idx is not None else _iota(int(rdata.size)).reshape(v._data.shape)))
            _rebase(v, g.grad_fn, 0)


def relayout(t, new_data, layout, node=None):
    """An in-place view op (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``, ``resize_``):
    ``t`` itself takes the new shape/layout ``layout(array)``.

    If ``t`` is a root, its live aliases keep reading the same elements: their index maps are
    translated from the old flat layout to the new one. If ``t`` is an alias, only its own map
    changes (its root is untouched), as in torch.
    """
    a = t._alias
    if a is None:
        d = t.__dict__.get("_aliases")
        if d:
            n = int(t._data.size)
            perm = jnp.reshape(layout(_iota(n).reshape(t._data.shape)), (-1,))
            inv = jnp.zeros((n,), jnp.int64).at[perm].set(_iota(n))
            for v in list(d):
                idx = alias_index(v)
                if idx is None:
                    idx = _iota(n).reshape(v._data.shape)
                v._alias.idx = inv[idx]
    else:
        # fix the maps of every alias of the root first: views taken of ``t`` read the
        # elements they read when they were made, whatever ``t`` becomes
        for v in list(_aliases(a.root)):
            alias_index(v)
        idx = alias_index(t)
        if idx is None:
            idx = _iota(int(a.root._data.size)).reshape(t._data.shape)
        a.idx = layout(idx)
    t._data = new_data
    t._vc[0] += 1
    if node is not None:
        _rebase(t, node, 0)
    return t


def is_contiguous(t):
    """True when ``t`` reads consecutive root elements in row-major order (torch's notion of a
    contiguous tensor, for what a reshape may alias)."""
    a = t._alias
    if a is None:
        return True
    idx = alias_index(t)
    if idx is None:
        return True
    import numpy as np
    flat = np.asarray(idx).reshape(-1)
    return flat.size == 0 or bool((flat == np.arange(flat[0], flat[0] + flat.size)).all())
