"""Views and reshaping: view, reshape, transpose, permute, squeeze, unsqueeze, expand, flatten,
unflatten, movedim, narrow, select, broadcast_to, meshgrid; the checks their index maps share."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import math
import warnings
import numpy as np

from .. import _dtype as D
from .. import _strides
from .._registry import apply, broadcast_error, defop
from .._tensor import Tensor, _wrap_dim
from ._surface import public, method, methods

__all__ = ['reshape', 'transpose', 'swapaxes', 'permute', 'squeeze', 'unsqueeze', 'flatten', 't',
           'unflatten', 'movedim', 'moveaxis', 'narrow', 'select', 'meshgrid', 'broadcast_to',
           'broadcast_tensors', 'broadcast_shapes', 'swapdims']


def _shape_arg(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for s in shape:
        if s.__class__ is not int:
            return tuple(int(s) for s in shape)
    return shape if shape.__class__ is tuple else tuple(shape)


def infer_shape(shape, numel):
    """Resolve a -1 in ``shape``; torch's RuntimeError when it cannot hold ``numel``."""
    known = 1
    for s in shape:
        if s < 0:
            break
        known *= s
    else:
        if known == numel:
            return tuple(shape)         # (no dimension to infer: the shape as given)
    shape = list(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for i, s in enumerate(shape):
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {shape}")
    known = int(math.prod([s for s in shape if s != -1]))
    if neg:
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {shape} because "
                               f"the unspecified dimension size -1 can be any value and is "
                               f"ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape[neg[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _reshaped_back(cots, xs, needs, **static):
    """The backward of an op that only reshapes (view, unsqueeze, squeeze): the cotangent in
    the input's shape."""
    return [jnp.reshape(cots[0], jnp.shape(xs[0]))]


@defop("view", saves=False, view=True, grad_name="ViewBackward0", shape_arg="shape",
       vjp=_reshaped_back)
def _view(a, shape):
    return jnp.reshape(a, shape)


@defop("transpose", saves=False, view=True, grad_name="TransposeBackward0",
       vjp=lambda cots, xs, needs, d0, d1: [jnp.swapaxes(cots[0], d0, d1)])
def _transpose(a, d0, d1):
    return jnp.swapaxes(a, d0, d1)


@defop("t", saves=False, view=True, grad_name="TBackward0",
       vjp=lambda cots, xs, needs: [cots[0].T])
def _t(a):
    return a.T


@defop("permute", saves=False, view=True, grad_name="PermuteBackward0",
       vjp=lambda cots, xs, needs, dims: [jnp.transpose(
           cots[0], np.argsort([d % max(cots[0].ndim, 1) for d in dims]))])
def _permute(a, dims):
    return jnp.transpose(a, dims)


@defop("unsqueeze", saves=False, view=True, grad_name="UnsqueezeBackward0", vjp=_reshaped_back)
def _unsqueeze(a, dim):
    return jnp.expand_dims(a, dim)


def _squeeze_name(kw):
    return {None: "SqueezeBackward0", "int": "SqueezeBackward1"}.get(kw["kind"],
                                                                      "SqueezeBackward2")


@defop("squeeze", saves=False, view=True, grad_name=_squeeze_name, vjp=_reshaped_back)
def _squeeze(a, dims, kind):
    dims = tuple(d for d in dims if a.shape[d] == 1) if dims is not None else None
    return jnp.squeeze(a, dims)


@defop("expand", saves=False, view=True, grad_name="ExpandBackward0", shape_arg="shape",
       vjp=lambda cots, xs, needs, shape: [cots[0]])      # (summed to the input's shape)
def _expand(a, shape):
    return jnp.broadcast_to(a, shape)


@defop("reshape_copy", saves=False, grad_name="UnsafeViewBackward0", shape_arg="shape",
       vjp=_reshaped_back)
def _reshape_copy(a, shape):
    return jnp.reshape(a, shape)


@public(method=True)
def reshape(input, *shape):
    """The same values in a new shape (one dim may be -1): a view of a contiguous tensor, a
    copy of a non-contiguous one (a transposed or strided view), as in torch."""
    shape = _shape_arg(required(shape, "reshape", "shape", input._d.ndim == 0))
    shape = infer_shape(shape, input.numel())
    if not _viewable(input, shape):
        return apply(_reshape_copy, input, shape=shape)
    return apply(_view, input, shape=shape)


def _viewable(t, shape):
    """Can ``t`` be viewed as ``shape`` (of its size)? ATen's stride rule; a root tensor
    without a layout of its own is contiguous, which every shape views."""
    if t._alias is None and "_layout" not in t.__dict__:
        return True
    return _strides.view_strides(t._d.shape, _strides.strides(t), shape) is not None


@method("view")
def view(self, *shape, **kwargs):
    if kwargs:          # (torch's keywords: view(dtype=...) or view(size=...), alone)
        if shape or len(kwargs) > 1 or not ({"dtype", "size"} & set(kwargs)):
            _view_arguments(shape, kwargs)
        if "dtype" in kwargs:
            return view(self, kwargs["dtype"])
        shape = (kwargs["size"],)
    if len(shape) == 1 and isinstance(shape[0], D.dtype):
        return _view_dtype(self, shape[0])
    if not shape and self._d.ndim:
        _view_arguments(shape, kwargs)
    shape = infer_shape(_shape_arg(shape), self.numel())
    if not _viewable(self, shape):
        raise RuntimeError(_strides.VIEW_ERROR)
    return apply(_view, self, shape=shape)


def _view_arguments(shape, kwargs):
    """torch's TypeError for a call matching neither of view's overloads."""
    names = lambda v: "torch.dtype" if isinstance(v, D.dtype) else type(v).__name__  # noqa: E731
    kw = [f"{k}={names(v)}" for k, v in kwargs.items()]
    # (torch's text: keywords alone end in ", ")
    got = ", ".join([names(a) for a in shape] + kw) if shape else "".join(k + ", " for k in kw)
    bad = [k for k in kwargs if k not in ("dtype", "size")]
    why = (f"\n      didn't match because some of the keywords were incorrect: {', '.join(bad)}"
           if bad else "")
    raise TypeError(f"view() received an invalid combination of arguments - got ({got}), but "
                    f"expected one of:\n * (torch.dtype dtype){why}\n * (tuple of ints size)"
                    f"{why}\n")


@defop("view_dtype", differentiable=False)
def _bitcast(a, dtype):
    src, dst = a.dtype, np.dtype(dtype)
    if src == np.bool_:
        a = a.astype(np.uint8)
    tgt = np.uint8 if dst == np.bool_ else dst
    if a.dtype.itemsize == np.dtype(tgt).itemsize:
        out = jax.lax.bitcast_convert_type(a, tgt)
    elif a.dtype.itemsize > np.dtype(tgt).itemsize:
        out = jax.lax.bitcast_convert_type(a, tgt)          # [..., n, k]
        out = out.reshape(out.shape[:-2] + (-1,))
    else:
        k = np.dtype(tgt).itemsize // a.dtype.itemsize
        out = jax.lax.bitcast_convert_type(a.reshape(a.shape[:-1] + (-1, k)), tgt)
    return out.astype(np.bool_) if dst == np.bool_ else out


def _view_dtype(self, dtype):
    """``t.view(dtype)``: the same bytes read as ``dtype`` (torch's bit reinterpretation)."""
    dtype = D.to_dtype(dtype)
    if dtype is self.dtype:
        # torch: an alias of the same storage that does not take part in autograd
        return self.detach()
    a, b = self.dtype.itemsize, dtype.itemsize
    names = D.LEGACY_NAMES
    if a != b:
        what = (f"to view {names[self.dtype.name]} as {names[dtype.name]} (different element "
                f"sizes)")
        if self._d.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 {what}")
        st = self.stride()
        if b > a:
            # (torch's order: the last size, the storage offset, then the strides)
            k = b // a
            if self._d.shape[-1] % k:
                raise RuntimeError(f"self.size(-1) must be divisible by {k} {what}, but got "
                                   f"{self._d.shape[-1]}")
            off = self.storage_offset()
            if off % k:
                raise RuntimeError(f"self.storage_offset() must be divisible by {k} {what}, "
                                   f"but got {off}")
        if st[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {st[-1]}")
        if b > a:
            for i, n in enumerate(st[:-1]):
                if n % k:
                    raise RuntimeError(f"self.stride({i}) must be divisible by {k} {what}, "
                                       f"but got {n}")
    if dtype in D.UNBACKED:
        dtype.np                        # raises: jax has no arrays of it
    if self.dtype.is_complex or dtype.is_complex:
        raise NotImplementedError("torchlike: view(dtype) between complex and real dtypes")
    return apply(_bitcast, self, dtype=dtype.np)


@public(method=True, also=("swapaxes", "swapdims"))
def transpose(input, dim0, dim1):
    n = input._d.ndim
    return apply(_transpose, input, d0=_wrap_dim(dim0, n), d1=_wrap_dim(dim1, n))


swapaxes = swapdims = transpose


@public(method=True)
def t(input):
    if input._d.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input._d.ndim}D")
    return apply(_t, input)


@public(method=True)
def permute(input, *dims):
    dims = _shape_arg(required(dims, "permute", "dims", input._d.ndim == 0))
    n = input._d.ndim
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does "
                           f"not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {n} is not equal to len(dims) = {len(dims)}")
    wrapped = tuple(_wrap_dim(d, n) for d in dims)
    if len(set(wrapped)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return apply(_permute, input, dims=wrapped)


@public(method=True)
def unsqueeze(input, dim):
    return apply(_unsqueeze, input, dim=_wrap_dim(dim, input._d.ndim + 1))


def squeeze(input, dim=None):
    n = input._d.ndim
    if dim is None:
        return apply(_squeeze, input, dims=None, kind=None)
    # (a 0-dim tensor squeezes nothing, its dims still checked)
    if isinstance(dim, (tuple, list)):
        dims = _dims_list(dim, n)
        return apply(_squeeze, input, dims=dims if n else (), kind="tuple")
    d = _wrap_dim(dim, n)
    return apply(_squeeze, input, dims=(d,) if n else (), kind="int")


@method("squeeze")
def _squeeze_method(self, *dim, **kw):
    """``t.squeeze()``, ``t.squeeze(1)``, ``t.squeeze(0, 1)`` and ``t.squeeze((0, 1))``."""
    if not dim and "dim" not in kw:
        return squeeze(self)
    d = _dims_varargs(dim, kw, "dim")
    return squeeze(self, d[0] if isinstance(d, tuple) and len(dim) == 1 and len(d) == 1
                   and isinstance(dim[0], int) else d)


@public(method=True)
def flatten(input, start_dim=0, end_dim=-1):
    n = input._d.ndim
    if n == 0:
        return reshape(input, 1)
    s, e = _wrap_dim(start_dim, n), _wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shp = input._d.shape
    if s == e:
        return input
    return reshape(input, *shp[:s], -1, *shp[e + 1:])


_CPP_TENSOR_TYPES = ("Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double")


def _cpp_type(dt):
    """torch's C++ ``Tensor::toString()``: ``torch.FloatTensor`` for the eight classic types,
    ``CPUBoolType`` / ``CPUBFloat16Type`` / ``CPUComplexFloatType`` ... for the others."""
    from .. import _dtype as D
    n = D.legacy_name(dt)
    return f"torch.{n}Tensor" if n in _CPP_TENSOR_TYPES else f"CPU{n}Type"


@method("expand")
def expand(self, *sizes):
    sizes = _shape_arg(required(sizes, "expand", "size", self._d.ndim == 0))
    shp = self._d.shape
    if len(sizes) < len(shp):
        raise RuntimeError(f"expand({_cpp_type(self.dtype)}{{{list(shp)}}}, size={list(sizes)}): the "
                           f"number of sizes provided ({len(sizes)}) must be greater or equal to "
                           f"the number of dimensions in the tensor ({len(shp)})")
    lead = len(sizes) - len(shp)
    out = [0] * len(sizes)
    for i in range(len(sizes) - 1, -1, -1):     # (torch checks from the last dimension)
        s = sizes[i]
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            out[i] = s
            continue
        cur = shp[i - lead]
        if s == -1:
            s = cur
        if cur != 1 and s != cur:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing "
                               f"size ({cur}) at non-singleton dimension {i}.  Target sizes: "
                               f"{list(sizes)}.  Tensor sizes: {list(shp)}")
        out[i] = s
    check_materialized_size("expand", tuple(out), self.dtype.itemsize)
    return apply(_expand, self, shape=tuple(out))


_MAX_BYTES = 2 ** 63 - 1


def check_materialized_size(name, shape, itemsize):
    """Refuse a result whose element count or byte size overflows int64 (XLA would abort the
    process while compiling it) with torch's RuntimeError. torchlike materializes expanded
    tensors (DIFFERENCES.md), so ``expand`` to such a size raises where torch gives a view."""
    n = math.prod(int(d) for d in shape)
    if n > _MAX_BYTES:
        raise RuntimeError("numel: integer multiplication overflow")
    if n * itemsize > _MAX_BYTES:
        raise RuntimeError(f"{name}: torchlike materializes this result (see DIFFERENCES.md) "
                           f"and its storage size calculation overflowed with sizes="
                           f"{list(shape)}")




def _reversed_dims(self):
    """``Tensor.T``: the dimensions reversed, with torch's deprecation warnings (once) for
    a tensor that is not 2-D."""
    n = self.ndim
    if n != 2:
        from .factorizations import _deprecated
        _deprecated("T 0-D" if n == 0 else "T not 2-D",
                    "Tensor.T is deprecated on 0-D tensors. This function is the identity in "
                    "these cases." if n == 0 else
                    "The use of `x.T` on tensors of dimension other than 2 to reverse their "
                    "shape is deprecated and it will throw an error in a future release. "
                    "Consider `x.mT` to transpose batches of matrices or "
                    "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions "
                    "of a tensor.",
                    at="TensorShape.cpp:4321" if n == 0 else "TensorShape.cpp:4314")
    return permute(self, tuple(reversed(range(n))))


def _matrix_transpose(self):
    """``Tensor.mT``: the last two dims swapped; torch's error for a 1-D tensor, its warning
    (once) for a 0-D one (the identity)."""
    n = self.ndim
    if n == 1:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                           "Got 1-D tensor.")
    if n == 0:
        from .factorizations import _deprecated
        _deprecated("mT 0-D", "Tensor.mT is deprecated on 0-D tensors. This function is the "
                              "identity in these cases.",
                    at="TensorShape.cpp:4373")
        return permute(self)
    return transpose(self, -2, -1)


methods(view_as=lambda self, other: reshape(self, tuple(other.shape)),
        reshape_as=lambda self, other: reshape(self, tuple(other.shape)),
        expand_as=lambda self, other: expand(self, tuple(other.shape)),
        T=property(_reversed_dims),
        mT=property(_matrix_transpose))
# ================================================================== reshaping, joining, splitting, selecting
#
# Each op below is declared once as a pure jax function; the torch-facing wrappers check
# arguments (with torch's exception classes and messages) and resolve every data-dependent
# size on the host before calling ``apply``, so the jitted kernels see static shapes only.


def required(values, op, param, empty_ok=False):
    """``values``, a method's variadic sizes or dims (``x.reshape(*shape)``); none given is
    torch's TypeError for the missing argument (``x.flip()``), unless ``empty_ok``: torch takes
    the empty sizes of a 0-dim tensor (``x0.reshape()``, ``x0.permute()``)."""
    if not values and not empty_ok:
        raise TypeError(f'{op}() missing 1 required positional arguments: "{param}"')
    return values


def _dims_varargs(dims, kw, name, op=None):
    """``t.flip(0, 1)`` / ``t.flip((0, 1))`` / ``t.flip(dims=(0, 1))``: the one sequence
    (``op``: none given is torch's TypeError for the missing argument)."""
    if op is not None and name not in kw:
        required(dims, op, name)
    if name in kw:
        if dims:
            raise TypeError(f"{name}() got multiple values for argument '{name}'")
        return kw.pop(name)
    if kw:
        raise TypeError(f"got an unexpected keyword argument '{next(iter(kw))}'")
    return dims[0] if len(dims) == 1 and not isinstance(dims[0], (int, np.integer)) else dims


def _is_t(x):
    return isinstance(x, Tensor)


def _dims_list(dims, n, what="dims"):
    if isinstance(dims, (int, np.integer)):
        dims = (int(dims),)
    out = tuple(_wrap_dim(int(d), n) for d in dims)
    if len(set(out)) != len(out):
        d = next(d for d in out if out.count(d) > 1)
        raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return out


def _host(t):
    """The values of an index tensor on the host (for data-dependent sizes and bound checks)."""
    return np.asarray(t._data) if _is_t(t) else np.asarray(t)


def _check_int_index(t, name):
    if not _is_t(t) or t.dtype.category != D._INT:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


# ------------------------------------------------------------------ unflatten, movedim

@public(method=True)
def unflatten(input, dim, sizes):
    n = input._d.ndim
    d = _wrap_dim(dim, n)
    sizes = tuple(int(s) for s in sizes)
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    cur = input._d.shape[d]
    # (torch's infer_size reads the sizes; its errors come wrapped in unflatten's words)
    wrapped = "unflatten got an unexpected error:\n"
    for i, s in enumerate(sizes):
        if s == -1 and sizes.index(-1) < i:
            raise RuntimeError(wrapped + "only one dimension can be inferred")
        if s < -1:
            raise RuntimeError(wrapped + f"invalid shape dimension {s} at index {i} of shape "
                               f"{list(sizes)}")
    known = int(math.prod([s for s in sizes if s != -1]))
    if -1 in sizes:
        if known == 0 and cur == 0:
            raise RuntimeError(wrapped + f"cannot reshape tensor of 0 elements into shape "
                               f"{list(sizes)} because the unspecified dimension size -1 can "
                               f"be any value and is ambiguous")
        if known == 0 or cur % known:
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to "
                               f"the size of dim {dim} ({cur}) in the input tensor")
        sizes = tuple(cur // known if s == -1 else s for s in sizes)
    elif known != cur:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({cur}) in the input tensor")
    shp = input._d.shape
    return apply(_view, input, shape=tuple(shp[:d]) + sizes + tuple(shp[d + 1:]))


@public(method=True, also=("moveaxis",))
def movedim(input, source, destination):
    n = input._d.ndim
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} "
                           f"dims) should contain the same number of dims as destination "
                           f"({list(dst)} dims)")
    wrapped_src = [_wrap_dim(k, n) for k in src]
    wrapped_dst = [_wrap_dim(k, n) for k in dst]
    for name, given, dims in (("source", src, wrapped_src), ("destination", dst, wrapped_dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    src, dst = wrapped_src, wrapped_dst
    order = [None] * max(n, 1)
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    order = [o if o is not None else next(rest) for o in order][:n]
    return apply(_permute, input, dims=tuple(order))


moveaxis = movedim


# ------------------------------------------------------------------ narrow, select

@defop("slice", saves=False, view=True, grad_name="SliceBackward0")
def _slice(a, start, dim, length):
    # ``start`` is traced: narrow(d, i, n) for many i compiles once per length
    return jax.lax.dynamic_slice_in_dim(a, start, length, axis=dim)


@public(method=True)
def narrow(input, dim, start, length):
    n = input._d.ndim
    if n == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, n)
    size = input._d.shape[d]
    if isinstance(start, Tensor) and (start.ndim or start.dtype.category != D._INT):
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    start = int(start)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return apply(_slice, input, jnp.asarray(start, jnp.int64), dim=d, length=int(length))


@defop("select", saves=False, view=True, grad_name="SelectBackward0")
def _select(a, index, dim):
    # ``index`` is traced: select(d, i) for many i compiles once
    return jnp.squeeze(jax.lax.dynamic_slice_in_dim(a, index, 1, axis=dim), dim)


@public(method=True)
def select(input, dim, index):
    n = input._d.ndim
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, n)
    size = input._d.shape[d]
    index = int(index)
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input._d.shape)} at dimension {d}")
    return apply(_select, input, jnp.asarray(index % size, jnp.int64), dim=d)


# ------------------------------------------------------------------ broadcasting, meshgrid

def _broadcast_shape(shapes):
    if not shapes:
        return ()
    msg = broadcast_error(shapes)
    if msg:
        raise RuntimeError(msg)
    return tuple(np.broadcast_shapes(*shapes))


def broadcast_shapes(*shapes):
    """torch._refs._broadcast_shapes: its checks and messages (the argument as given)."""
    import collections.abc
    import numbers
    from .._tensor import Size
    shapes = tuple((x,) if isinstance(x, numbers.Integral) else x
                   for x in shapes if x is not None)
    if not shapes:
        return Size([])
    for shape in shapes:
        if not isinstance(shape, collections.abc.Sequence):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list "
                               f"of ints, got {shape}")
    common = [1] * max(len(shape) for shape in shapes)
    for arg_idx, shape in enumerate(shapes):
        for idx in range(-1, -1 - len(shape), -1):
            if shape[idx] == common[idx]:
                continue
            if common[idx] == 1:
                if shape[idx] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[idx] = shape[idx]
            if shape[idx] == 1:
                continue
            if common[idx] != shape[idx]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {shape[idx]} at {idx}! "
                    f"Mismatching argument at index {arg_idx} had {shape}; but expected shape "
                    f"should be broadcastable to {common}")
    return Size(common)


@public(method=True)
def broadcast_to(input, *size):
    """``input`` expanded to ``size`` (one sequence, or spread: ``x.broadcast_to(2, 3)``)."""
    return expand(input, *_shape_arg(required(size, "broadcast_to", "size", input._d.ndim == 0)))


def tensors_only(tensors):
    """torch's TypeError where an element of a variadic Tensor argument (``*tensors``) is not a
    Tensor (``torch.broadcast_tensors([x, y])``)."""
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            from .._tensor import _type_name
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{_type_name(t)}")
    return tensors


def broadcast_tensors(*tensors):
    tensors_only(tensors)
    shp = _broadcast_shape([tuple(t._d.shape) for t in tensors])
    return tuple(t if tuple(t._d.shape) == shp else expand(t, *shp) for t in tensors)


_MESHGRID_WARNED = []


def meshgrid(*tensors, indexing=None):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing is None and not _MESHGRID_WARNED:
        _MESHGRID_WARNED.append(True)       # (torch's: once a process)
        from .factorizations import triggered
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument." + triggered("TensorShape.cpp:4215"),
                      UserWarning)       # (torch's meshgrid is Python: its own line)
    indexing = indexing or "ij"
    # torch's order: the dtypes, the indexing, then each tensor's dims (after xy's swap)
    for t in tensors:
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    ts = list(tensors)
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    for t in ts:
        if t._d.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
    ts = [reshape(t, -1) if t._d.ndim == 0 else t for t in ts]
    shp = tuple(t._d.shape[0] for t in ts)
    outs = []
    for i, t in enumerate(ts):
        v = [1] * len(ts)
        v[i] = -1
        outs.append(expand(reshape(t, *v), *shp))
    if swap:
        outs[0], outs[1] = outs[1], outs[0]
    return tuple(outs)
