"""What a backward node saved, under torch's names: ``grad_fn._saved_<name>`` and
``grad_fn._raw_saved_<name>``.

    >>> y = x.exp(); y.grad_fn._saved_result        # a Tensor equal to y
    >>> (a * b).grad_fn._saved_self is a            # True, as torch
    >>> x.pow(2).grad_fn._saved_exponent            # 2

torch generates these attributes per node class from its ``derivatives.yaml``: the tensors a
backward formula reads (inputs by their argument name, ``result`` for the output) and the
non-tensor arguments it reads (dims, scalars, sizes). ``TABLE`` below holds the same names for
the node classes of torchlike's common ops, each with how to read it from what the node already
holds: its op's inputs (``node.inputs``), its static arguments (``node.compiled.static``), its
input metadata, its outputs. A name not in the table is an AttributeError, as for a name torch's
class does not have; torchlike never answers a value it cannot derive.

Tensors are answered as torch answers them: an input the node saved is that very object
(``_saved_self is x``); an input the backward of the call does not read (``(a * 3)`` saves no
``self``) is None; a Python number the op wrapped into a tensor is a 0-dim tensor of int64 /
float64 / complex128 / bool (the same object on each access); ``_saved_result`` is a new Tensor
each access, equal to the output, with the output's ``grad_fn``. Reading a saved tensor after a
backward without ``retain_graph`` freed the node raises torch's RuntimeError; reading a saved
result that an in-place write changed raises torch's version error. Non-tensor values stay
readable after the backward, as torch's. Integers of torch's ``int64_t`` fields (dims,
``ignore_index``, ``diagonal``, ...) read as torch reads them: a negative one wrapped as uint64
(``2**64 - 1`` for -1). torchlike's ops keep a dim normalized (``x.sum(-1)`` of a 2-D tensor keeps
dim 1), so a dim the call spelled negative reads as its non-negative equivalent, where torch
answers the spelling (DIFFERENCES.md).

``_raw_saved_<name>`` is a ``SavedTensor``: ``register_hooks(pack, unpack)`` packs the tensor
now and puts the pair on the node (``node.packed``, as ``saved_tensors_hooks`` does), so the
backward and every ``_saved_<name>`` read unpack it. Under hooks a read returns a new tensor in
the saved one's place in the graph, as torch's.
"""
from __future__ import annotations

import gc
from weakref import ref as _weakref

__all__ = ["lookup", "names", "SavedTensor", "meta_kind", "keep_meta", "bind"]

# (this module imports nothing of torchlike: the tape gives it what it reads, ``bind``)
_graph = {}


def bind(tensor_class, freed_message, version_message):
    """Given by ``graph``: the Tensor class (a function returning it), torch's freed-graph
    message, and its in-place version error (``version_message(node, now, expected, tensor,
    meta)``)."""
    _graph.update(tensor_class=tensor_class, freed=freed_message, version=version_message)


_U64 = 1 << 64

_FREED_HOOKS_MSG = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate values "
    "of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you need to "
    "access saved variables after calling backward.")
STRIDES_GONE = ("torchlike: the strides of a view the op read are not kept past the backward "
                "once the view no longer exists")
_RAW_RESULT_MSG = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is "
    "not supported, please use out-of-place `.detach()` instead")


def _wrap(v):
    """An int64_t as torch's generated getter returns it (unsigned: -1 -> 2**64 - 1)."""
    if v.__class__ is int and v < 0:
        return v + _U64
    return v


def _wrap_all(v):
    return None if v is None else tuple(_wrap(d) for d in v)


# ------------------------------------------------------------------ specs

class _Spec:
    tensor = False      # a tensor name: freed after backward, with a ``_raw_saved_`` twin
    # what it reads of the inputs, kept by ``Node.release`` past the backward: ("shape" |
    # "arg" | "stride", position) pairs
    keeps = ()

    def available(self, node):
        return True


class In(_Spec):
    """The op's input at argument ``pos``; saved where an input in ``when`` needs grad (None:
    always). A Python number there is the tensor torch wraps it into."""

    tensor = True

    def __init__(self, pos, when=None, only=None):
        self._pos, self.when, self.only = pos, when, only

    def available(self, node):
        return self.only is None or self.only(node)

    def at(self, node):
        """The argument position (None: the call has no such argument)."""
        p = self._pos
        return p if p.__class__ is int else p(node)

    def recorded(self, node):
        """Whether the call saved this tensor at all (torch's None where not: readable after
        the backward too)."""
        if self.when is not None:
            needs = node.compiled.needs
            if not any(needs[j] for j in self.when if j < len(needs)):
                return False
        pos = self.at(node)
        return pos is not None and pos < len(node.compiled.needs)

    def saved(self, node):
        if not self.recorded(node):
            return False
        inputs = node.inputs
        if inputs is None:
            raise RuntimeError(_graph["freed"])
        return inputs[self.at(node)] is not None

    def get(self, node, name):
        if not self.recorded(node):
            return None
        _check_alive(node)
        if not self.saved(node):
            return None
        pos = self.at(node)
        hooked = _hooked_entry(node, pos, None)
        if hooked is not None:
            return _as_saved(node.inputs[pos], hooked)
        a = node.inputs[pos]
        if isinstance(a, _T()):
            return a
        return _wrapped_number(node, pos, a)

    def value(self, node):
        """The saved tensor itself (no unpack hook), for ``_raw_saved_``."""
        pos = self.at(node)
        a = node.inputs[pos]
        return a if isinstance(a, _T()) else _wrapped_number(node, pos, a)


class Out(_Spec):
    """The op's ``k``-th differentiable output (torch's ``result``; ``result1``... of several)."""

    tensor = True

    def __init__(self, k=0):
        self.k = k

    def get(self, node, name):
        _check_alive(node)
        hooked = _hooked_entry(node, None, self.k)
        if hooked is not None:
            return _T()._make(hooked._data, node, self.k)
        return _result(node, self.k)

    def value(self, node):
        return _result(node, self.k)


class St(_Spec):
    """A static argument of the op, through ``conv`` (default: as kept)."""

    def __init__(self, key, conv=None, default=None):
        self.key, self.conv, self.default = key, conv, default

    def get(self, node, name):
        v = dict(node.compiled.static).get(self.key, self.default)
        return v if self.conv is None else self.conv(v)


class Const(_Spec):
    def __init__(self, value):
        self.value_ = value

    def get(self, node, name):
        return self.value_


class Fn(_Spec):
    """Any other value: ``fn(node)``; ``when(node)`` says whether the node has the name."""

    def __init__(self, fn, when=None, tensor=False, keeps=()):
        self.fn, self.when, self.tensor, self.keeps = fn, when, tensor, keeps

    def available(self, node):
        return self.when is None or self.when(node)

    def get(self, node, name):
        if self.tensor:
            _check_alive(node)
        return self.fn(node)

    def value(self, node):
        return self.fn(node)


class Arg(_Spec):
    """A non-tensor argument of the op (``pow``'s exponent), kept past the backward."""

    def __init__(self, pos, conv=None):
        self.pos, self.conv = pos, conv
        self.keeps = (("arg", pos),)

    def get(self, node, name):
        v = _arg(node, self.pos)
        return v if self.conv is None else self.conv(v)


class Sizes(_Spec):
    """The shape of input ``pos`` when recorded (``_saved_self_sym_sizes``)."""

    def __init__(self, pos, item=None):
        self.pos, self.item = pos, item
        self.keeps = (("shape", pos),)

    def get(self, node, name):
        s = _shape(node, self.pos)
        return s if self.item is None else s[self.item]


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class Numel(Sizes):
    def get(self, node, name):
        return _numel(_shape(node, self.pos))


class Strides(_Spec):
    """The strides of input ``pos`` when recorded, saved where an input in ``when`` needs grad
    (else torch's empty tuple)."""

    def __init__(self, pos, when):
        self.pos, self.when = pos, when
        self.keeps = (("shape", pos), ("stride", pos))

    def get(self, node, name):
        needs = node.compiled.needs
        if not any(needs[j] for j in self.when if j < len(needs)):
            return ()
        return _stride(node, self.pos)


# ------------------------------------------------------------------ reading the node

def _T():
    return _graph["tensor_class"]()


def _check_alive(node):
    if node.freed:
        raise RuntimeError(_graph["freed"])


def _as_saved(orig, u):
    """An unpack hook's value as torch's SavedVariable returns it: a new tensor with the saved
    tensor's place in the graph (its ``grad_fn``; a leaf's gradient accumulator)."""
    T = _T()
    if not isinstance(u, T) or not isinstance(orig, T):
        return u
    if orig.grad_fn is not None:
        return T._make(u._data, orig.grad_fn, orig._output_nr)
    t = T._make(u._data)
    if orig._requires_grad:
        t._requires_grad = True
        t._acc = orig._edge()[0]
    return t


def _memo(node):
    try:
        return node._memo_saved
    except AttributeError:
        node._memo_saved = m = {}
        return m


def _wrapped_number(node, pos, v):
    """A Python number as the 0-dim tensor torch wraps it into (one object per node)."""
    m = _memo(node)
    t = m.get(("wrapped", pos))
    if t is None:
        import jax.numpy as jnp
        import numpy as np
        dt = (np.bool_ if v.__class__ is bool else np.int64 if isinstance(v, int)
              else np.complex128 if isinstance(v, complex) else np.float64)
        t = m[("wrapped", pos)] = _T()._make(jnp.asarray(np.asarray(v, dt)))
    return t


def _gone(what):
    return RuntimeError(f"torchlike: this node no longer holds its inputs' {what}")


def _shape(node, pos):
    """The shape input ``pos`` had when recorded (None for a non-tensor argument)."""
    inputs = node.inputs
    if inputs is not None:
        d = getattr(inputs[pos], "_d", None)
        return None if d is None else tuple(d.shape)
    m = _memo(node)
    if ("shape", pos) in m:
        s = m[("shape", pos)]
        return None if s is None else tuple(s)
    arrays = getattr(node.vjp, "arrays", None)
    if arrays is not None and hasattr(arrays[pos], "shape"):
        return tuple(arrays[pos].shape)
    raise _gone("sizes")


def _arg(node, pos):
    """The op's non-tensor argument at ``pos``."""
    inputs = node.inputs
    if inputs is not None:
        return inputs[pos]
    m = _memo(node)
    if ("arg", pos) in m:
        return m[("arg", pos)]
    raise _gone("arguments")


def _stride(node, pos):
    inputs = node.inputs
    if inputs is not None:
        return inputs[pos].stride()
    m = _memo(node)
    if ("stride", pos) not in m:
        raise _gone("strides")
    st = m[("stride", pos)]
    if st is None:
        return _contiguous_strides(_shape(node, pos))
    t = st()
    if t is None:
        raise RuntimeError(STRIDES_GONE)
    return t.stride()


def keep_meta(node, plan):
    """Called by ``Node.release`` before it lets the inputs go: keep what the non-tensor names
    of the node's class read (``plan``: ``meta_kind``'s pairs): an input's shape, a
    non-tensor argument, the strides of an input with a layout of its own (None: contiguous).
    Kept raw and only those: it runs in the backward."""
    inputs = node.inputs
    n = len(inputs)
    # (a new memo: what an earlier read cached of the inputs is let go with them; reading the
    # slot while unset would cost an AttributeError)
    kept = node._memo_saved = {}
    for key in plan:
        pos = key[1]
        if pos >= n:
            continue
        a = inputs[pos]
        d = getattr(a, "_d", None)
        kind = key[0]
        if kind == "shape":
            kept[key] = None if d is None else d.shape
        elif kind == "arg":
            kept[key] = a if d is None else None
        elif node.compiled.needs[pos]:      # (torch keeps an input's strides for its own
            # gradient only; a view's are computed when read, from the view while it lives:
            # computing them here would cost the backward microseconds a node)
            kept[key] = _weakref(a) if d is not None and (
                a._alias is not None or "_layout" in a.__dict__) else None


def _hooked_entry(node, pos, k):
    """The unpacked value of a saved tensor packed by hooks (``saved_tensors_hooks`` or
    ``_raw_saved_*.register_hooks``): the unpack hook runs, as torch's getter runs it."""
    packed = node.packed
    if packed is None:
        return None
    unpack, entries = packed
    j = 0
    for p, epos, result in entries:
        if pos is not None and epos == pos:
            return unpack(p)
        if pos is None and epos is None:
            if j == k:
                return unpack(p)
            j += 1
    return None


def _entry_exists(node, pos, k):
    packed = node.packed
    if packed is None:
        return False
    j = 0
    for _p, epos, _r in packed[1]:
        if pos is not None and epos == pos:
            return True
        if pos is None and epos is None:
            if j == k:
                return True
            j += 1
    return False


def _result(node, k):
    """The node's ``k``-th differentiable output, as a new Tensor with its ``grad_fn``: the
    live output's data; else the forward recomputed from the arrays it ran on (kept by a
    recomputing backward, or the inputs where none was written in place since)."""
    _version_message = _graph["version"]
    T = _T()
    saved = node._saved_versions
    if saved.__class__ is list:
        outs = [s for s in saved if s[2] is None]
        if k < len(outs):
            vc, expected, _t, meta = outs[k]
            if vc[0] != expected:
                raise RuntimeError(_version_message(node, vc[0], expected, None, meta))
    live = None
    for o in gc.get_referrers(node):
        if isinstance(o, T) and o.grad_fn is node and o._output_nr == k:
            live = o
            break
    if live is not None:
        if live._vc[0] != 0:
            raise RuntimeError(_version_message(node, live._vc[0], 0, None,
                                                (tuple(live._d.shape), live._d.dtype)))
        return T._make(live._data, node, k)
    data = _recomputed(node, k)
    if data is None:
        raise RuntimeError(
            f"torchlike: the result {node.name()} saved cannot be read: its output tensor no "
            f"longer exists and an input was written in place since (torchlike keeps no copy "
            f"of it outside the backward's residuals)")
    return T._make(data, node, k)


def _contiguous_strides(shape):
    # (``_strides.contiguous_strides``'s rule; _strides imports autograd.graph, which imports
    # this module: tests/test_import_graph.py keeps the layers free of cycles)
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(out))


def _recomputed(node, k):
    import jax.numpy as jnp
    T = _T()
    c = node.compiled
    vjp = node.vjp
    if vjp.__class__.__name__ == "Remat":
        # (the registry's residuals of a recomputing backward: the arrays the forward ran on;
        # a fused-eager one may be pending, resolved through a Tensor)
        arrays = [a if isinstance(a, (int, float, complex, bool)) or a is None
                  else T._make(a)._data for a in vjp.arrays]
    else:
        inputs = node.inputs
        if inputs is None:
            return None
        stale = node.stale_saved() if node._saved_versions.__class__ is list else None
        tracked = {id(s[2]) for s in node._saved_versions or () if s[2] is not None} \
            if node._saved_versions.__class__ is list else set()
        for a in inputs:
            if isinstance(a, T) and id(a) not in tracked and a._vc[0] != 0:
                return None
        if stale is not None:
            return None
        arrays = [a._data if isinstance(a, T) else a for a in inputs]
    out = c.fwd(*arrays)
    outs = out if out.__class__ is tuple else (out,)
    diff = [o for o in outs if jnp.issubdtype(o.dtype, jnp.inexact)]
    return diff[k] if k < len(diff) else None


# ------------------------------------------------------------------ the raw saved tensor

class SavedTensor:
    """torch's ``torch._C._autograd.SavedTensor``: one saved tensor of a node, whose
    ``register_hooks(pack, unpack)`` packs it now and unpacks it where the backward (or a
    ``_saved_*`` read) needs it."""

    __slots__ = ("_node", "_spec", "_name")

    def __init__(self, node, spec, name):
        self._node, self._spec, self._name = node, spec, name

    def _pos_k(self):
        s = self._spec
        if isinstance(s, In):
            return s.at(self._node), None
        if isinstance(s, Out):
            return None, s.k
        raise NotImplementedError(f"torchlike: hooks on {self._name}, which torchlike computes "
                                  f"on reading it, are not supported")

    def _is_none(self):
        s = self._spec
        return isinstance(s, In) and not s.saved(self._node)

    def register_hooks(self, pack_hook, unpack_hook):
        if not (callable(pack_hook) and callable(unpack_hook)):
            raise TypeError(
                "register_hooks(): incompatible function arguments. The following argument types "
                "are supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: "
                "collections.abc.Callable, arg1: collections.abc.Callable) -> None\n\nInvoked "
                f"with: {self!r}, {pack_hook!r}, {unpack_hook!r}")
        node = self._node
        if node.freed:
            raise RuntimeError(_FREED_HOOKS_MSG)
        if not isinstance(self._spec, (In, Out)):
            self._pos_k()
        if self._is_none():
            raise RuntimeError("Calling register_hooks on a saved tensor with value None is "
                               "forbidden")
        pos, k = self._pos_k()
        packed = node.packed
        if packed is not None and (packed[0] is not _own_unpack or _entry_exists(node, pos, k)):
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already "
                               "been set. Hint: only one pair of hooks is allowed at a time.")
        if pos is not None and not isinstance(node.inputs[pos], _T()):
            raise NotImplementedError(
                f"torchlike: hooks on the number {node.name()} wrapped into a tensor "
                f"({self._name}) are not supported")
        value = self._spec.value(node)
        result = None if pos is not None else value._data
        entry = ((pack_hook(value), unpack_hook), pos, result)
        if packed is None:
            node.packed = (_own_unpack, [entry])
        else:
            packed[1].append(entry)

    def unpack(self):
        node = self._node
        _check_alive(node)
        if isinstance(self._spec, Out):
            raise RuntimeError(_RAW_RESULT_MSG)
        if self._is_none():
            return None
        return self._spec.get(node, self._name)

    @property
    def data(self):
        node = self._node
        if node.freed or self._is_none():
            return None
        if isinstance(self._spec, Out):
            raise RuntimeError(_RAW_RESULT_MSG)
        return self._spec.value(node)

    @property
    def unpack_hook(self):
        node = self._node
        packed = node.packed
        if packed is None:
            return None
        pos, k = self._pos_k()
        j = 0
        for p, epos, _r in packed[1]:
            if (pos is not None and epos == pos) or (pos is None and epos is None and j == k):
                return p[1] if packed[0] is _own_unpack else packed[0]
            if pos is None and epos is None:
                j += 1
        return None

    def __repr__(self):
        return f"<torch._C._autograd.SavedTensor object at {hex(id(self))}>"


def _own_unpack(p):
    """The unpack of entries ``register_hooks`` packed: each carries its own unpack hook."""
    packed, unpack = p
    return unpack(packed)


# ------------------------------------------------------------------ static conversions

def _dims(v):
    """A dim list as torch's ``dim`` of a reduction: None, or a tuple (int64: wrapped)."""
    return _wrap_all(v)


def _integral(v):
    """A float order that is an integer as torch's default spelling of it (``x.norm()``'s 2)."""
    return int(v) if v.__class__ is float and v.is_integer() else v


def _enum_reduction(v):
    return {"none": 0, "mean": 1, "sum": 2}.get(v, v)


def _default(torch_default):
    """A float static that is torch's default when equal to it (torch keeps the Python
    number it was given: ``F.softplus`` passes 1 and 20, ints)."""
    def conv(v):
        return torch_default if v == torch_default else v
    return conv


def _padding(v):
    """convolution's padding pairs as torch's ``padding`` (symmetric only)."""
    return tuple(p[0] if isinstance(p, tuple) else p for p in v)


def _symmetric_padding(node):
    pad = dict(node.compiled.static).get("padding", ())
    return all(not isinstance(p, tuple) or p[0] == p[1] for p in pad)


def _batched(node):
    return not dict(node.compiled.static).get("unbatched", False)


def _clamp_bound(which_pos):
    """clamp's min (0) or max (1): the scalar argument, or None where the call gave none."""
    def fn(node):
        which = dict(node.compiled.static).get("which")
        if which == "both":
            pos = 1 + which_pos
        elif which == ("lo" if which_pos == 0 else "hi"):
            pos = 1
        else:
            return None
        return _arg(node, pos) if pos < len(node.compiled.needs) else None
    return fn


def _clamp_scalar(node):
    st = dict(node.compiled.static)
    return st.get("scalar") is True and st.get("which") in ("both", "lo", "hi")


def _split_size(node):
    sizes = dict(node.compiled.static)["sizes"]
    return sizes[0]


def _layer_norm_stat(which):
    """native_layer_norm's ``result1`` (mean) / ``result2`` (rstd), shape ``[*lead, 1...]``,
    computed from the saved input."""
    def fn(node):
        import jax.numpy as jnp
        st = dict(node.compiled.static)
        x = node.inputs[0]._data
        n = st["n"]
        axes = tuple(range(x.ndim - n, x.ndim))
        xf = x.astype(jnp.float32) if x.dtype.itemsize < 4 else x
        mean = jnp.mean(xf, axis=axes, keepdims=True)
        if which == 0:
            v = mean
        else:
            v = 1.0 / jnp.sqrt(jnp.mean(jnp.square(xf - mean), axis=axes, keepdims=True)
                               + st["eps"])
        return _T()._make(v.astype(x.dtype))
    return fn


def _ln_weight_pos(node):
    return 1 if dict(node.compiled.static).get("has_w") else None


def _ln_bias_pos(node):
    st = dict(node.compiled.static)
    return (2 if st.get("has_w") else 1) if st.get("has_b") else None


def _nll_weight_pos(node):
    return 2 if len(node.compiled.needs) > 2 else None


def _getitem_one(kind):
    """A getitem torch records as one ``slice`` (``kind`` "S") or ``select`` ("I") of the
    tensor itself: full slices, then that one entry."""
    def guard(node):
        name = node.compiled.op.name
        if name != "getitem":
            return name == ("slice" if kind == "S" else "select")   # (narrow, select)
        spec = dict(node.compiled.static).get("spec", ())
        if spec and spec[0] == ("e",):
            spec = spec[1:]
        return bool(spec) and spec[-1][0] == kind and \
            all(e == ("s", None, None, None) for e in spec[:-1])
    return guard


def _getitem_dim(node):
    """The dim of the slice / select: from the op's own ``dim``, or its place in ``[]``
    (counted from the end after an ellipsis)."""
    st = dict(node.compiled.static)
    if "spec" not in st:
        return _wrap(st["dim"])
    spec = st["spec"]
    if spec[0] == ("e",):
        return len(_shape(node, 0)) - (len(spec) - 1)
    return len(spec) - 1


def _int_arg(pos):
    """An integer argument the op takes as an array (a start, an index), while the node holds
    it: its inputs, or the integer arrays a recomputing backward keeps."""
    def fn(node):
        inputs = node.inputs
        if inputs is not None:
            return int(inputs[pos])
        arrays = getattr(node.vjp, "arrays", None)
        if arrays is not None and pos < len(arrays) and \
                getattr(getattr(arrays[pos], "dtype", None), "kind", None) in ("i", "u"):
            return int(arrays[pos])
        kept = _memo(node).get(("arg", pos))
        if kept is not None:
            return int(kept)
        raise _gone("index arguments")
    return fn


def _pads_flat(v):
    """The op's per-dim pad pairs (first dim first) as torch's flat pad (last dim first)."""
    return tuple(p for pair in reversed(v) for p in pair)


def _pool_padding(node):
    return all(p[0] == p[1] for p in dict(node.compiled.static)["pads"])


def _st(key):
    return lambda node: dict(node.compiled.static).get(key)


def _stat_dtype_ok(node):
    # (the statistics torch saves of a float16/bfloat16 input are its CPU kernels' choice)
    return str(node.out_meta[0][1]) in ("float32", "float64")


def _norm_stats(which, axes_of, shape_of):
    """Mean (``which`` 0) or 1/sqrt(biased var + eps) (1) of the saved input over
    ``axes_of(x)``, reshaped to ``shape_of(x)`` (batch_norm's / group_norm's ``result1`` /
    ``result2``)."""
    def fn(node):
        import jax.numpy as jnp
        st = dict(node.compiled.static)
        x = node.inputs[0]._data
        xs = jnp.reshape(x, shape_of(x, st, "in"))
        axes = axes_of(xs)
        mean = jnp.mean(xs, axis=axes)
        v = mean if which == 0 else 1.0 / jnp.sqrt(
            jnp.mean(jnp.square(xs - jnp.expand_dims(mean, axes)), axis=axes) + st["eps"])
        return _T()._make(jnp.reshape(v, shape_of(x, st, "out")).astype(x.dtype))
    return fn


def _bn_stat(which):
    def fn(node):
        import jax.numpy as jnp
        if not dict(node.compiled.static).get("training"):
            return _T()._make(jnp.zeros((0,), node.out_meta[0][1]))
        return _norm_stats(which, lambda xs: (0,) + tuple(range(2, xs.ndim)),
                           lambda x, st, k: x.shape if k == "in" else (x.shape[1],))(node)
    return fn


def _bn_pos(which):
    """batch_norm's argument positions: input, running mean?, running var?, weight?, bias?"""
    def fn(node):
        st = dict(node.compiled.static)
        pos = 1
        for key, has in (("running_mean", st.get("has_stats")),
                         ("running_var", st.get("has_stats")),
                         ("weight", st.get("has_w")), ("bias", st.get("has_b"))):
            if key == which:
                return pos if has else None
            pos += 1 if has else 0
        return None
    return fn


def _bce_pos(which):
    """binary_cross_entropy_with_logits's: input, target, weight?, pos_weight?"""
    def fn(node):
        st = dict(node.compiled.static)
        if which == "weight":
            return 2 if st.get("has_w") else None
        return (3 if st.get("has_w") else 2) if st.get("has_pw") else None
    return fn


def _clampt_pos(which):
    """clamp's tensor bounds: min (0) / max (1) at their argument positions, or None."""
    def fn(node):
        w = dict(node.compiled.static).get("which")
        if w == "both":
            return 1 + which
        return 1 if w == ("lo", "hi")[which] else None
    return fn


def _narrow_end(node):
    return int(_arg(node, 1)) + dict(node.compiled.static)["length"]


def _plain_index(node):
    """A getitem that torch records as one ``index`` of the tensor itself: tensor indices, full
    slices and an ellipsis only (a basic index before them makes torch index a view)."""
    spec = dict(node.compiled.static).get("spec", ())
    return all(e[0] in ("t", "e") or e == ("s", None, None, None) for e in spec) and \
        any(e[0] == "t" for e in spec)


def _nll_total_weight(node):
    """nll_loss's ``total_weight``: the summed weights of the targets not ignored (0 for
    ``reduction='none'``), in the input's dtype."""
    import jax.numpy as jnp
    st = dict(node.compiled.static)
    x, target = node.inputs[0], node.inputs[1]
    dt = x._data.dtype
    if st["reduction"] == "none":
        return _T()._make(jnp.zeros((), dt))
    t = target._data
    keep = t != st["ignore_index"]
    pos = _nll_weight_pos(node)
    if pos is None:
        total = jnp.sum(keep).astype(dt)
    else:
        w = node.inputs[pos]._data
        total = jnp.sum(jnp.where(keep, w[jnp.where(keep, t, 0)], 0)).astype(dt)
    return _T()._make(total)


def _correction_known(node):
    # (``x.var()`` and ``x.var(dim=None, correction=1)`` keep the same statics: torch answers
    # None for the first, 1 for the second)
    st = dict(node.compiled.static)
    return not (st.get("dims") is None and st.get("correction") == 1)


# ------------------------------------------------------------------ the table

_UNARY_SELF = ("Sin", "Cos", "Atan", "Log", "Log1P", "Log2", "Log10", "Abs", "Erf", "Erfc",
               "Silu", "Sinh", "Cosh", "Asin", "Acos", "Asinh", "Acosh", "Atanh", "Mish",
               "Hardswish", "Hardsigmoid", "Lgamma", "Digamma")
_UNARY_RESULT = ("Exp", "Exp2", "Expm1", "Tanh", "Sigmoid", "Sqrt", "Rsqrt", "Reciprocal",
                 "Relu", "Tan")

TABLE: dict = {}
for _n in _UNARY_SELF:
    TABLE[_n + "Backward0"] = {"self": In(0)}
for _n in _UNARY_RESULT:
    TABLE[_n + "Backward0"] = {"result": Out(0)}

TABLE.update({
    # activations
    "GeluBackward0": {"approximate": St("approximate", default="none"), "self": In(0)},
    "LeakyReluBackward0": {"negative_slope": St("slope"), "self": In(0)},
    "EluBackward0": {"alpha": St("alpha"), "input_scale": St("input_scale", _default(1)),
                     "scale": St("scale", _default(1)), "self": In(0)},
    "SoftplusBackward0": {"beta": St("beta", _default(1)),
                          "threshold": St("threshold", _default(20)), "self": In(0)},
    "HardtanhBackward0": {"max_val": St("max_val"), "min_val": St("min_val"), "self": In(0)},
    # arithmetic
    "MulBackward0": {"other": In(1, when=(0,)), "self": In(0, when=(1,))},
    "DivBackward0": {"other": In(1, when=(0, 1)), "self": In(0, when=(1,))},
    # (ATen's Tensor-Scalar overloads, which torch's C++ losses call: the number as given)
    "MulBackward1": {"other": Arg(1)},
    "DivBackward1": {"other": Arg(1)},
    "AddBackward0": {"alpha": St("alpha", default=1)},
    "SubBackward0": {"alpha": St("alpha", default=1)},
    "RsubBackward1": {"alpha": St("alpha", default=1)},
    "MaximumBackward0": {"other": In(1), "self": In(0)},
    "MinimumBackward0": {"other": In(1), "self": In(0)},
    "PowBackward0": {"exponent": Fn(lambda n: 2 if n.compiled.op.name == "square"
                                     else _arg(n, 1), keeps=(("arg", 1),)),
                     "self": In(0)},
    "PowBackward1": {"exponent": In(1), "result": Out(0), "self": In(0)},
    "PowBackward2": {"exponent": In(1), "result": Out(0),
                     "self": Arg(0)},
    # matrix products
    "MmBackward0": {"mat2": In(1, when=(0,)), "mat2_sym_sizes": Sizes(1),
                    "mat2_sym_strides": Strides(1, when=(1,)),
                    "self": In(0, when=(1,)), "self_sym_sizes": Sizes(0),
                    "self_sym_strides": Strides(0, when=(0,))},
    "MvBackward0": {"self": In(0, when=(1,)), "vec": In(1, when=(0,))},
    "AddmmBackward0": {"alpha": St("alpha", default=1), "beta": St("beta", default=1),
                       "mat1": In(1, when=(2,)), "mat1_sym_sizes": Sizes(1),
                       "mat1_sym_strides": Strides(1, when=(1,)),
                       "mat2": In(2, when=(1,)), "mat2_sym_sizes": Sizes(2),
                       "mat2_sym_strides": Strides(2, when=(2,))},
    # reductions
    "SumBackward0": {"self_sym_sizes": Sizes(0)},
    "SumBackward1": {"dim": St("dims", _dims), "keepdim": St("keepdim"),
                     "self_sym_sizes": Sizes(0)},
    "MeanBackward0": {"self_sym_numel": Numel(0), "self_sym_sizes": Sizes(0)},
    "MeanBackward1": {"dim": St("dims", _dims), "keepdim": St("keepdim"),
                      "self_sym_numel": Numel(0), "self_sym_sizes": Sizes(0)},
    "MaxBackward1": {"result": Out(0), "self": In(0)},
    "MinBackward1": {"result": Out(0), "self": In(0)},
    "MaxBackward0": {"dim": St("dim", _wrap), "keepdim": St("keepdim"),
                     "self_sym_sizes": Sizes(0)},
    "MinBackward0": {"dim": St("dim", _wrap), "keepdim": St("keepdim"),
                     "self_sym_sizes": Sizes(0)},
    "AmaxBackward0": {"dim": St("dims", _dims), "keepdim": St("keepdim"), "result": Out(0),
                      "self": In(0)},
    "AminBackward0": {"dim": St("dims", _dims), "keepdim": St("keepdim"), "result": Out(0),
                      "self": In(0)},
    "ProdBackward0": {"result": Out(0), "self": In(0)},
    "ProdBackward1": {"dim": St("dim", _wrap), "keepdim": St("keepdim"), "result": Out(0),
                      "self": In(0)},
    "VarBackward0": {"correction": Fn(lambda n: dict(n.compiled.static)["correction"],
                                      when=_correction_known),
                     "dim": St("dims", _dims), "keepdim": St("keepdim"), "self": In(0)},
    "StdBackward0": {"correction": Fn(lambda n: dict(n.compiled.static)["correction"],
                                      when=_correction_known),
                     "dim": St("dims", _dims), "keepdim": St("keepdim"), "result": Out(0),
                     "self": In(0)},
    "LinalgVectorNormBackward0": {"dim": St("dim", _dims), "keepdim": St("keepdim"),
                                  "ord": St("ord", _integral), "result": Out(0),
                                  "self": In(0)},
    "LogsumexpBackward0": {"dim": St("dims", _dims), "keepdim": St("keepdim"),
                           "result": Out(0), "self": In(0)},
    "SoftmaxBackward0": {"dim": St("dim", _wrap), "result": Out(0)},
    "LogSoftmaxBackward0": {"dim": St("dim", _wrap), "result": Out(0)},
    "CumsumBackward0": {"dim": St("dim", _wrap)},
    # shapes and views
    "ViewBackward0": {"self_sym_sizes": Sizes(0)},
    "TransposeBackward0": {"dim0": St("d0", _wrap), "dim1": St("d1", _wrap)},
    "PermuteBackward0": {"dims": St("dims", _wrap_all)},
    "UnsqueezeBackward0": {"dim": St("dim", _wrap)},
    "SqueezeBackward0": {"self_sym_sizes": Sizes(0)},
    "SqueezeBackward2": {"dim": St("dims", _wrap_all), "self_sym_sizes": Sizes(0)},
    "SqueezeBackward1": {"dim": Fn(lambda n: _wrap(dict(n.compiled.static)["dims"][0]),
                                   when=lambda n: dict(n.compiled.static).get("kind") == "int"),
                         "self_sym_sizes": Fn(lambda n: _shape(n, 0), keeps=(("shape", 0),),
                                              when=lambda n: dict(n.compiled.static).get("kind")
                                              == "int")},
    "ExpandBackward0": {"self_sym_sizes": Sizes(0)},
    "CatBackward0": {"dim": St("dim", _wrap)},
    "UnbindBackward0": {"dim": St("dim", _wrap)},
    "StackBackward0": {"dim": St("dim", _wrap)},
    "SplitBackward0": {"dim": St("dim", _wrap), "self_sym_sizes": Sizes(0),
                       "split_size": Fn(_split_size,
                                        when=lambda n: len(dict(n.compiled.static)["sizes"]) > 1)},
    "SplitWithSizesBackward0": {"dim": St("dim", _wrap), "self_sym_sizes": Sizes(0),
                                "split_sizes": St("sizes")},
    # (narrow; a slice with [] — whose ``end`` torchlike does not keep as spelled: an open
    # end is torch's INT64_MAX — has no ``end``)
    "SliceBackward0": {
        "dim": Fn(_getitem_dim, keeps=(("shape", 0),)),
        "end": Fn(_narrow_end, keeps=(("arg", 1),),
                  when=lambda n: n.compiled.op.name == "slice"),
        "self_sym_sizes": Sizes(0), "start": Fn(_int_arg(1), keeps=(("arg", 1),)),
        "step": Fn(lambda n: 1 if n.compiled.op.name == "slice"
                   else dict(n.compiled.static)["spec"][-1][2])},
    "SelectBackward0": {"dim": Fn(_getitem_dim, keeps=(("shape", 0),)),
                        "index": Fn(_int_arg(1), keeps=(("arg", 1),)),
                        "self_sym_sizes": Sizes(0)},
    "TrilBackward0": {"diagonal": St("diagonal", _wrap)},
    "TriuBackward0": {"diagonal": St("diagonal", _wrap)},
    "RepeatBackward0": {"repeats": St("reps"), "self_sym_sizes": Sizes(0)},
    # indexing
    "GatherBackward0": {"dim": St("dim", _wrap), "index": In(1, when=(0,)),
                        "self": In(0, when=(0,)), "sparse_grad": Const(False)},
    "IndexSelectBackward0": {"dim": St("dim", _wrap), "index": In(1, when=(0,)),
                             "self_sym_sizes": Sizes(0)},
    "ClampBackward1": {"max": Fn(_clamp_bound(1), when=_clamp_scalar,
                                 keeps=(("arg", 1), ("arg", 2))),
                       "min": Fn(_clamp_bound(0), when=_clamp_scalar, keeps=(("arg", 1),)),
                       "self": In(0)},
    "WhereBackward0": {"condition": In(0, when=(1, 2))},
    "MaskedFillBackward0": {"mask": In(1, when=(0, 2))},
    "IndexBackward0": {"self_sym_sizes": Sizes(0)},
    "ScatterAddBackward0": {"dim": St("dim", _wrap), "index": In(1, when=(2,))},
    "ScatterBackward0": {"dim": St("dim", _wrap), "index": In(1, when=(0, 2))},
    "ScatterReduceBackward0": {"dim": St("dim", _wrap), "include_self": St("include_self"),
                               "index": In(1), "reduce": St("reduce"), "result": Out(0),
                               "self": In(0), "src": In(2)},
    "IndexAddBackward0": {"alpha": St("alpha", _default(1)), "dim": St("dim", _wrap),
                          "index": In(1, when=(2,)), "source": In(2, when=(2,)),
                          "source_dim": Fn(lambda n: len(_shape(n, 2)), keeps=(("shape", 2),))},
    "TopkBackward0": {"dim": St("dim", _wrap), "self_sym_sizes": Sizes(0)},
    "SortBackward0": {"dim": St("dim", _wrap), "self_sym_sizes": Sizes(0)},
    "LogSigmoidBackward0": {"self": In(0)},
    "FlipBackward0": {"dims": St("dims", _wrap_all)},
    "RollBackward0": {"dims": St("dims", _wrap_all), "shifts": St("shifts", _wrap_all)},
    "DiagonalBackward0": {"dim1": St("dim1", _wrap), "dim2": St("dim2", _wrap),
                          "offset": St("offset", _wrap), "self_sym_sizes": Sizes(0)},
    "UnfoldBackward0": {"dimension": St("dim", _wrap), "self_sym_sizes": Sizes(0),
                        "size": St("size"), "step": St("step")},
    "TraceBackward0": {"self_sym_sizes": Sizes(0)},
    "PixelShuffleBackward0": {"upscale_factor": St("r")},
    "PixelUnshuffleBackward0": {"downscale_factor": St("r")},
    "ConstantPadNdBackward0": {"pad": St("pads", _pads_flat)},
    "ReflectionPad1DBackward0": {"padding": St("pads", _pads_flat), "self": In(0)},
    "ReflectionPad2DBackward0": {"padding": St("pads", _pads_flat), "self": In(0)},
    "ReplicationPad1DBackward0": {"padding": St("pads", _pads_flat), "self": In(0)},
    "ReplicationPad2DBackward0": {"padding": St("pads", _pads_flat), "self": In(0)},
    # more arithmetic
    "Atan2Backward0": {"other": In(1), "self": In(0)},
    "XlogyBackward0": {"other": In(1), "self": In(0)},
    "HypotBackward0": {"other": In(1, when=(1,)), "result": Out(0), "self": In(0, when=(0,))},
    "AddcmulBackward0": {"tensor1": In(1, when=(2,)), "tensor2": In(2, when=(1,)),
                         "value": St("value")},
    "AddcdivBackward0": {"tensor1": In(1, when=(2,)), "tensor2": In(2, when=(1, 2)),
                         "value": St("value")},
    "LerpBackward0": {"weight": Arg(2)},
    "LerpBackward1": {"end": In(1, when=(2,)), "self": In(0, when=(2,)),
                      "weight": In(2, when=(0, 1))},
    "ClampBackward0": {"max": In(_clampt_pos(1)), "min": In(_clampt_pos(0)), "self": In(0)},
    "DotBackward0": {"self": In(0, when=(1,)), "tensor": In(1, when=(0,))},
    "BaddbmmBackward0": {"alpha": St("alpha", default=1), "batch1": In(1, when=(2,)),
                         "batch2": In(2, when=(1,)), "beta": St("beta", default=1)},
    "CumprodBackward0": {"dim": St("dim", _wrap), "result": Out(0), "self": In(0)},
    # more activations
    "HardshrinkBackward0": {"lambd": St("lambd"), "self": In(0)},
    "ThresholdBackward0": {"self": In(0), "threshold": St("threshold")},
    "GluBackward0": {"dim": St("dim", _wrap), "self": In(0)},
    # more nn
    "SmoothL1LossBackward0": {"beta": St("beta"), "reduction": St("reduction", _enum_reduction),
                              "self": In(0), "target": In(1)},
    "HuberLossBackward0": {"delta": St("delta"), "reduction": St("reduction", _enum_reduction),
                           "self": In(0), "target": In(1)},
    "BinaryCrossEntropyBackward0": {"reduction": St("reduction", _enum_reduction),
                                    "self": In(0), "target": In(1),
                                    "weight": In(lambda n: 2 if len(n.compiled.needs) > 2
                                                 else None)},
    "BinaryCrossEntropyWithLogitsBackward0": {
        "pos_weight": In(_bce_pos("pos_weight")),
        "reduction": St("reduction", _enum_reduction), "self": In(0), "target": In(1),
        "weight": In(_bce_pos("weight"))},
    "MaxPool2DWithIndicesBackward0": {
        "dilation": St("d"), "kernel_size": St("k"),
        "padding": Fn(lambda n: _padding(dict(n.compiled.static)["pads"]), when=_pool_padding),
        "self": In(0)},
    "AvgPool2DBackward0": {"count_include_pad": St("count_include_pad"),
                           "divisor_override": St("divisor", lambda v: None if v is None
                                                  else int(v)),
                           "kernel_size": St("k"), "padding": St("p"), "self": In(0)},
    "UpsampleNearest2DBackward0": {"output_size": St("size"),
                                   "scales_h": Fn(lambda n: _st("scales")(n)[0]),
                                   "scales_w": Fn(lambda n: _st("scales")(n)[1]),
                                   "self_sym_sizes": Sizes(0)},
    "UpsampleBilinear2DBackward0": {"align_corners": St("align_corners"),
                                    "output_size": St("size"),
                                    "scales_h": Fn(lambda n: _st("scales")(n)[0]),
                                    "scales_w": Fn(lambda n: _st("scales")(n)[1]),
                                    "self_sym_sizes": Sizes(0)},
    "NativeBatchNormBackward0": {
        "eps": St("eps"), "input": In(0),
        "result1": Fn(_bn_stat(0), tensor=True, when=_stat_dtype_ok),
        "result2": Fn(_bn_stat(1), tensor=True, when=_stat_dtype_ok),
        # (the running statistics of a training call are not the op's arguments: torchlike
        # updates them outside it)
        "running_mean": In(_bn_pos("running_mean"), only=_st("has_stats")),
        "running_var": In(_bn_pos("running_var"), only=_st("has_stats")),
        "training": St("training"), "weight": In(_bn_pos("weight"))},
    "NativeGroupNormBackward0": {
        "C": Sizes(0, item=1),
        "HxW": Fn(lambda n: _numel(_shape(n, 0)[2:]), keeps=(("shape", 0),)),
        # (no result1/result2: torch's are outputs of the node, with a gradient; torchlike's
        # group_norm has one output)
        "N": Sizes(0, item=0), "eps": St("eps"), "group": St("groups"), "input": In(0),
        "weight": In(lambda n: 1 if dict(n.compiled.static).get("has_w") else None)},
    # nn
    "NativeLayerNormBackward0": {
        "bias": In(_ln_bias_pos),
        "input": In(0),
        "normalized_shape": Fn(lambda n: _shape(n, 0)[-dict(n.compiled.static)["n"]:],
                               keeps=(("shape", 0),)),
        "result1": Fn(_layer_norm_stat(0), tensor=True),
        "result2": Fn(_layer_norm_stat(1), tensor=True),
        "weight": In(_ln_weight_pos)},
    "ConvolutionBackward0": {
        "bias_sym_sizes_opt": Fn(lambda n: _shape(n, 2) if len(n.compiled.needs) > 2
                                 else (0,), keeps=(("shape", 2),)),
        "dilation": St("dilation"), "groups": St("groups"), "input": In(0),
        "output_padding": Fn(lambda n: dict(n.compiled.static).get(
            "output_padding", (0,) * dict(n.compiled.static)["nd"])),
        "padding": St("padding", _padding), "stride": St("stride"),
        "transposed": Fn(lambda n: n.compiled.op.name == "conv_transpose"),
        "weight": In(1)},
    "EmbeddingBackward0": {"indices": In(0),
                           "padding_idx": St("padding_idx",
                                             lambda v: _U64 - 1 if v is None else _wrap(v)),
                           "scale_grad_by_freq": St("scale_grad_by_freq"),
                           "sparse": Const(False), "weight_sym_argsize_0": Sizes(1, item=0)},
    "NllLossBackward0": {"ignore_index": St("ignore_index", _wrap),
                         "reduction": St("reduction", _enum_reduction),
                         "self": In(0), "target": In(1),
                         "total_weight": Fn(_nll_total_weight, tensor=True),
                         "weight": In(_nll_weight_pos)},
    # (no scale: torch keeps whether one was given; no logsumexp: torch's CPU kernel's own)
    "ScaledDotProductFlashAttentionForCpuBackward0": {
        "attn_mask": In(lambda n: None), "dropout_p": St("dropout_p"), "is_causal": St("causal"),
        "key": In(1), "output": Out(0), "query": In(0), "value": In(2)},
    "MseLossBackward0": {"reduction": St("reduction", _enum_reduction), "self": In(0),
                         "target": In(1)},
})

# which torchlike ops each class's table describes (another op of the same class name, or the
# same op in a configuration torch records differently, has none of its names)
OPS = {
    "MulBackward0": ("mul",), "DivBackward0": ("div",),
    "MulBackward1": ("scalar_arith",), "DivBackward1": ("scalar_arith",),
    "AddBackward0": ("add",),
    "SubBackward0": ("sub",), "RsubBackward1": ("rsub",), "PowBackward0": ("pow", "square"),
    "PowBackward1": ("pow",), "PowBackward2": ("pow",),
    "MmBackward0": ("matmul", "mm"), "MvBackward0": ("matmul", "mv"),
    "AddmmBackward0": ("addmm",),
    "SumBackward0": ("sum",), "SumBackward1": ("sum",), "MeanBackward0": ("mean",),
    "MeanBackward1": ("mean",), "MaxBackward1": ("max_full",), "MinBackward1": ("max_full",),
    "MaxBackward0": ("max_dim",), "MinBackward0": ("max_dim",), "AmaxBackward0": ("amax",),
    "AminBackward0": ("amax",), "ProdBackward0": ("prod",), "ProdBackward1": ("prod",),
    "VarBackward0": ("var",), "StdBackward0": ("std",),
    "LinalgVectorNormBackward0": ("linalg_vector_norm",),
    "LogsumexpBackward0": ("logsumexp",), "SoftmaxBackward0": ("nn_softmax",),
    "LogSoftmaxBackward0": ("nn_log_softmax",), "CumsumBackward0": ("cumsum",),
    "ViewBackward0": ("view",), "TransposeBackward0": ("transpose",),
    "PermuteBackward0": ("permute",), "UnsqueezeBackward0": ("unsqueeze",),
    "SqueezeBackward1": ("squeeze",),
    "SqueezeBackward0": ("squeeze",), "SqueezeBackward2": ("squeeze",),
    "ExpandBackward0": ("expand",), "CatBackward0": ("cat",),
    "StackBackward0": ("stack",), "UnbindBackward0": ("unbind",), "SplitBackward0": ("split",),
    "SplitWithSizesBackward0": ("split",), "TrilBackward0": ("tril",),
    "TriuBackward0": ("triu",), "RepeatBackward0": ("tile",), "GatherBackward0": ("gather",),
    "IndexSelectBackward0": ("index_select",), "ClampBackward1": ("clamp",),
    "WhereBackward0": ("where",), "MaskedFillBackward0": ("masked_fill",),
    "NativeLayerNormBackward0": ("layer_norm",),
    "ConvolutionBackward0": ("convolution", "conv_transpose"),
    "EmbeddingBackward0": ("embedding",), "NllLossBackward0": ("nll_loss",),
    "MseLossBackward0": ("loss_mse",),
    "ScaledDotProductFlashAttentionForCpuBackward0": ("scaled_dot_product_attention",),
    "GeluBackward0": ("nn_gelu",),
    "LeakyReluBackward0": ("nn_leaky_relu",), "EluBackward0": ("nn_elu",),
    "SoftplusBackward0": ("nn_softplus",), "HardtanhBackward0": ("nn_hardtanh",),
    "MaximumBackward0": ("maximum",), "MinimumBackward0": ("minimum",),
    "SliceBackward0": ("slice", "getitem"), "SelectBackward0": ("getitem", "select"),
    "IndexBackward0": ("getitem",),
    "ScatterAddBackward0": ("scatter",), "ScatterBackward0": ("scatter",),
    "IndexAddBackward0": ("index_add",), "TopkBackward0": ("topk",), "SortBackward0": ("sort",),
    "FlipBackward0": ("flip",), "RollBackward0": ("roll",), "DiagonalBackward0": ("diagonal",),
    "UnfoldBackward0": ("unfold",), "TraceBackward0": ("trace",),
    "PixelShuffleBackward0": ("pixel_shuffle",), "PixelUnshuffleBackward0": ("pixel_shuffle",),
    "ConstantPadNdBackward0": ("pad",), "ReflectionPad1DBackward0": ("pad",),
    "ReflectionPad2DBackward0": ("pad",), "ReplicationPad1DBackward0": ("pad",),
    "ReplicationPad2DBackward0": ("pad",), "Atan2Backward0": ("atan2",),
    "XlogyBackward0": ("xlogy",), "HypotBackward0": ("hypot",),
    "AddcmulBackward0": ("addcmul",), "AddcdivBackward0": ("addcmul",),
    "LerpBackward0": ("lerp",), "LerpBackward1": ("lerp",), "ClampBackward0": ("clamp",),
    "DotBackward0": ("matmul",), "BaddbmmBackward0": ("addmm",), "CumprodBackward0": ("cumsum",),
    "HardshrinkBackward0": ("nn_hardshrink",), "ThresholdBackward0": ("nn_threshold",),
    "GluBackward0": ("nn_glu",), "SmoothL1LossBackward0": ("loss_smooth_l1",),
    "HuberLossBackward0": ("loss_huber",),
    "BinaryCrossEntropyBackward0": ("binary_cross_entropy",),
    "BinaryCrossEntropyWithLogitsBackward0": ("binary_cross_entropy_with_logits",),
    "MaxPool2DWithIndicesBackward0": ("max_pool",), "AvgPool2DBackward0": ("avg_pool",),
    "UpsampleNearest2DBackward0": ("interpolate",), "UpsampleBilinear2DBackward0": ("interpolate",),
    "NativeBatchNormBackward0": ("batch_norm",), "NativeGroupNormBackward0": ("group_norm",),
}

# a class's names apply to a node only where this holds (its static arguments say torch records
# the call under that class with those names)
_GUARDS = {
    "MmBackward0": lambda n: dict(n.compiled.static).get("ndims", (2, 2)) == (2, 2),
    "MvBackward0": lambda n: dict(n.compiled.static).get("ndims", (2, 1)) == (2, 1),
    "AddmmBackward0": lambda n: dict(n.compiled.static).get("kind", "mm") == "mm",
    "ConvolutionBackward0": lambda n: _batched(n) and _symmetric_padding(n),
    "PowBackward0": lambda n: n.compiled.op.name == "square" or
    dict(n.compiled.static).get("kind") == "ts",
    "PowBackward1": lambda n: dict(n.compiled.static).get("kind") == "tt",
    "PowBackward2": lambda n: dict(n.compiled.static).get("kind") == "st",
    "ClampBackward1": lambda n: dict(n.compiled.static).get("scalar") is True,
    "IndexBackward0": _plain_index,
    "SliceBackward0": _getitem_one("S"),
    "SelectBackward0": _getitem_one("I"),
    "SqueezeBackward0": lambda n: dict(n.compiled.static).get("kind") is None,
    "SqueezeBackward2": lambda n: dict(n.compiled.static).get("kind") == "tuple",
    "ScaledDotProductFlashAttentionForCpuBackward0": lambda n: dict(n.compiled.static).get(
        "mask_kind") is None and not dict(n.compiled.static).get("math") and not
    dict(n.compiled.static).get("gqa"),
    "ScatterAddBackward0": lambda n: dict(n.compiled.static).get("mode") == "add",
    "ScatterBackward0": lambda n: dict(n.compiled.static).get("mode") == "set",
    "IndexAddBackward0": lambda n: dict(n.compiled.static).get("mode") == "add",
    "CumprodBackward0": lambda n: dict(n.compiled.static).get("prod") is True,
    "CumsumBackward0": lambda n: not dict(n.compiled.static).get("prod"),
    "AddcmulBackward0": lambda n: dict(n.compiled.static).get("div") is False,
    "AddcdivBackward0": lambda n: dict(n.compiled.static).get("div") is True,
    "LerpBackward0": lambda n: dict(n.compiled.static).get("tensor_weight") is False,
    "LerpBackward1": lambda n: dict(n.compiled.static).get("tensor_weight") is True,
    "ClampBackward0": lambda n: dict(n.compiled.static).get("scalar") is False,
    "DotBackward0": lambda n: dict(n.compiled.static).get("vector_op") == "dot",
    "BaddbmmBackward0": lambda n: dict(n.compiled.static).get("kind") == "bmm",
    "PixelShuffleBackward0": lambda n: dict(n.compiled.static).get("inverse") is False,
    "PixelUnshuffleBackward0": lambda n: dict(n.compiled.static).get("inverse") is True,
    "ConstantPadNdBackward0": lambda n: dict(n.compiled.static).get("mode") == "constant",
    "MaxPool2DWithIndicesBackward0": lambda n: dict(n.compiled.static).get("nd") == 2,
    "AvgPool2DBackward0": lambda n: dict(n.compiled.static).get("nd") == 2,
    "UpsampleNearest2DBackward0": lambda n: dict(n.compiled.static).get("nd") == 2,
    "UpsampleBilinear2DBackward0": lambda n: dict(n.compiled.static).get("nd") == 2,
}


def _specs(node):
    """The name -> spec table of ``node``, or None where it has no names."""
    cls = type(node).__name__
    table = TABLE.get(cls)
    if table is None:
        return None
    c = node.compiled
    op = getattr(c, "op", None)
    if op is None or not hasattr(c, "static"):
        return None
    ops = OPS.get(cls)
    if ops is not None and op.name not in ops:
        return None
    if ops is None and op.name.lower().replace("_", "").removeprefix("nn") != \
            cls[:-len("Backward0")].lower():
        # (a unary op's class is its name: ExpBackward0 is exp's)
        if not (cls == "Log1PBackward0" and op.name == "log1p"):
            return None
    guard = _GUARDS.get(cls)
    if guard is not None and not guard(node):
        return None
    return table


def meta_kind(cls_name):
    """What ``Node.release`` keeps for a node class's non-tensor names (``keep_meta``): its
    specs' ("shape" | "arg" | "stride", position) pairs; empty: nothing."""
    table = TABLE.get(cls_name)
    if not table:
        return ()
    return tuple(sorted({k for spec in table.values() for k in spec.keeps}))


def names(node):
    """The ``_saved_*`` and ``_raw_saved_*`` names ``node`` answers (for ``dir``)."""
    table = _specs(node)
    if table is None:
        return []
    out = []
    for n, s in table.items():
        if s.available(node):
            out.append("_saved_" + n)
            if s.tensor:
                out.append("_raw_saved_" + n)
    return out


def lookup(node, attr):
    """``node._saved_<name>`` / ``node._raw_saved_<name>``, or AttributeError."""
    raw = attr.startswith("_raw_saved_")
    name = attr[len("_raw_saved_"):] if raw else attr[len("_saved_"):]
    table = _specs(node)
    spec = None if table is None else table.get(name)
    if spec is None or not spec.available(node) or (raw and not spec.tensor):
        raise AttributeError(f"'{type(node).__name__}' object has no attribute '{attr}'")
    if raw:
        return SavedTensor(node, spec, name)
    return spec.get(node, name)
