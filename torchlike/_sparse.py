"""Sparse COO tensors: torch's ``torch.sparse_coo`` layout over a dense values Tensor.

A ``SparseTensor`` holds its indices (an int64 numpy array of shape ``(sparse_dim, nnz)``:
indices are concrete, as a graph program builds them once), its values (a torchlike Tensor of
shape ``(nnz, *dense_shape)``, on the tape like any other) and its size. Every product, sum
and conversion is written with dense ops on the values (``index_select``, ``index_add``), so
autograd flows through the existing tape into the values and into the dense operands: a
sparse leaf's ``.grad`` is sparse, with the leaf's pattern (torch.sparse.mm's gradient).

A SparseTensor is not a ``Tensor``: its type defines ``__torch_function__``, so every
torchlike function, method and operator that is handed one gives it the call
(``torchlike.overrides``). The calls it supports are in ``_HANDLERS``; every other one raises
NotImplementedError naming the op (torch's wording for the ops its sparse backend lacks),
never computing on a dense stand-in.

>>> import torchlike as torch
>>> a = torch.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
>>> torch.mm(a, torch.ones(2, 1))
tensor([[2.],
        [3.]])
"""
from __future__ import annotations

import math

import numpy as np

from . import _dtype as D
from . import _runtime

__all__ = ["sparse_coo_tensor", "spmm", "SparseTensor"]


def _tl():
    import torchlike
    return torchlike


def _unsupported(name):
    return NotImplementedError(
        f"Could not run '{name}' with arguments from the 'SparseCPU' backend: torchlike does "
        f"not support the sparse layout (torch.sparse_coo) in {name}(). Convert the sparse "
        f"tensor with .to_dense() first.")


_FORMAT_AS_TENSOR = D.c_type_format("Tensor")


def _sizes(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


# ------------------------------------------------------------------ the tensor

class SparseTensor:
    """A sparse COO tensor (``layout=torch.sparse_coo``): indices, values and a size."""

    __slots__ = ("_ind", "_vals", "_size", "_coalesced", "__weakref__")

    def __init__(self, ind, vals, size, coalesced=False):
        self._ind = ind                 # numpy int64, (sparse_dim, nnz)
        self._vals = vals               # Tensor, (nnz, *dense_shape)
        self._size = tuple(int(s) for s in size)
        self._coalesced = bool(coalesced) or ind.shape[1] < 2

    # -------------------------------------------------------------- metadata
    layout = property(lambda self: _runtime.sparse_coo)
    is_sparse = property(lambda self: True)
    is_sparse_csr = is_quantized = is_mkldnn = is_nested = is_meta = property(
        lambda self: False)
    dtype = property(lambda self: self._vals.dtype)
    device = property(lambda self: self._vals.device)
    is_cuda = property(lambda self: self._vals.is_cuda)
    is_cpu = property(lambda self: self._vals.is_cpu)
    ndim = property(lambda self: len(self._size))

    @property
    def shape(self):
        from ._tensor import Size
        return Size(self._size)

    def size(self, dim=None):
        if dim is None:
            return self.shape
        from ._tensor import _wrap_dim
        return self._size[_wrap_dim(dim, len(self._size))]

    def dim(self):
        return len(self._size)

    ndimension = dim

    def numel(self):
        return math.prod(self._size)

    nelement = numel

    def __len__(self):
        if not self._size:
            raise TypeError("len() of a 0-d tensor")
        return self._size[0]

    def element_size(self):
        return self._vals.element_size()

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    def sparse_dim(self):
        return self._ind.shape[0]

    def dense_dim(self):
        return self._vals.ndim - 1

    def _nnz(self):
        return self._ind.shape[1]

    def is_coalesced(self):
        return self._coalesced

    def _indices(self):
        return _tl().tensor(self._ind, device=self.device)

    def _values(self):
        return self._vals

    def indices(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._indices()

    def values(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._vals

    # -------------------------------------------------------------- autograd
    @property
    def requires_grad(self):
        return self._vals.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self._vals.requires_grad = flag

    def requires_grad_(self, requires_grad=True):
        self._vals.requires_grad_(requires_grad)
        return self

    @property
    def is_leaf(self):
        return self._vals.is_leaf

    @property
    def grad_fn(self):
        return self._vals.grad_fn

    @property
    def grad(self):
        """The gradient of a sparse leaf: sparse, with the leaf's (coalesced) pattern."""
        g = self._vals.grad
        if g is None:
            return None
        if self._coalesced:
            return SparseTensor(self._ind, g, self._size, False)    # (torch's flag)
        # duplicates of one position share its gradient: keep one entry per position
        uniq, first = np.unique(self._lin(), return_index=True)
        ind = np.stack(np.unravel_index(uniq, self._size[:self.sparse_dim()])).astype(
            np.int64).reshape(self.sparse_dim(), -1)
        return SparseTensor(ind, g.index_select(0, _tl().tensor(first)), self._size, False)

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, SparseTensor) or value._size != self._size:
                raise RuntimeError("torchlike: the .grad of a sparse tensor can only be set to "
                                   "None or a sparse tensor of its pattern")
            value = value._vals
        self._vals.grad = value

    def detach(self):
        return SparseTensor(self._ind, self._vals.detach(), self._size, self._coalesced)

    def backward(self, *args, **kwargs):
        raise _unsupported("backward")

    # -------------------------------------------------------------- conversions
    def _lin(self):
        """Each entry's position in the sparse dims, as one linear index (numpy int64)."""
        sd = self.sparse_dim()
        if sd == 0:
            return np.zeros(self._nnz(), np.int64)
        return np.ravel_multi_index(tuple(self._ind), self._size[:sd]).astype(np.int64)

    def to_dense(self, dtype=None, *, masked_grad=None):
        sd = self.sparse_dim()
        rows = math.prod(self._size[:sd])
        v = self._vals
        if dtype is not None:
            v = v.to(dtype)
        if v.dtype is D.bool:
            return _segment_sum(v.to(D.int64), self._lin(), rows).reshape(self._size) != 0
        return _segment_sum(v, self._lin(), rows).reshape(self._size)

    def coalesce(self):
        if self._coalesced:
            return self
        sd = self.sparse_dim()
        uniq, inv = np.unique(self._lin(), return_inverse=True)
        ind = np.stack(np.unravel_index(uniq, self._size[:sd])).astype(np.int64).reshape(
            sd, -1) if sd else np.zeros((0, len(uniq)), np.int64)
        v = self._vals
        vals = (_segment_sum(v.to(D.int64), inv, len(uniq)) != 0 if v.dtype is D.bool
                else _segment_sum(v, inv, len(uniq)))
        return SparseTensor(ind, vals, self._size, True)

    def to(self, *args, **kwargs):
        return self._with_values(self._vals.to(*args, **kwargs))

    def _with_values(self, vals):
        return SparseTensor(self._ind, vals, self._size, self._coalesced)

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return "torch.sparse." + self._vals.type().split(".")[-1]
        return self._with_values(self._vals.type(dtype))

    def cpu(self):
        return self._with_values(self._vals.cpu())

    def cuda(self, *args, **kwargs):
        return self._with_values(self._vals.cuda(*args, **kwargs))

    def clone(self, *, memory_format=None):
        return self._with_values(self._vals.clone())

    def to_sparse(self, sparse_dim=None):
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError(f"sparse dim argument for to_sparse must not be different "
                               f"than sparse dim of original tensor {sparse_dim} "
                               f"{self.sparse_dim()}")
        return self

    # -------------------------------------------------------------- shape
    def transpose(self, dim0, dim1):
        from ._tensor import _wrap_dim
        n, sd = self.dim(), self.sparse_dim()
        d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
        if d0 >= sd or d1 >= sd:
            raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got "
                               f"sparse_dim: {sd}, d0: {d0}, d1: {d1}")
        ind = self._ind.copy()
        ind[[d0, d1]] = ind[[d1, d0]]
        size = list(self._size)
        size[d0], size[d1] = size[d1], size[d0]
        return SparseTensor(ind, self._vals, size, self._coalesced and d0 == d1)

    def t(self):
        if self.sparse_dim() > 2 or self.dense_dim():
            raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, "
                               f"but got {self.sparse_dim()} sparse and {self.dense_dim()} "
                               f"dense dimensions")
        return self if self.dim() < 2 else self.transpose(0, 1)

    # -------------------------------------------------------------- maths
    def mm(self, mat2):
        return mm(self, mat2)

    def matmul(self, other):
        return matmul(self, other)

    def sum(self, dim=None, keepdim=False, dtype=None):
        return sum(self, dim, keepdim, dtype=dtype)

    def add(self, other, *, alpha=1):
        return add(self, other, alpha=alpha)

    def sub(self, other, *, alpha=1):
        return add(self, other, alpha=-alpha)

    def mul(self, other):
        return mul(self, other)

    def div(self, other):
        return div(self, other)

    def neg(self):
        return self._with_values(-self._vals)

    __matmul__ = matmul
    __add__ = add
    __sub__ = sub
    __mul__ = __rmul__ = mul
    __truediv__ = div
    __neg__ = neg

    def __rmatmul__(self, other):
        return matmul(other, self)

    def __radd__(self, other):
        return add(other, self)

    def __rsub__(self, other):
        return add(other, self, alpha=-1)

    __hash__ = object.__hash__

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        raise _unsupported("is_nonzero")

    # -------------------------------------------------------------- refusals
    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def reshape(self, *shape):
        raise RuntimeError("reshape is not implemented for sparse tensors")

    flatten = reshape

    @property
    def nbytes(self):
        raise RuntimeError(
            "nbytes is not defined for sparse tensors.  If you want the size of the "
            "constituent tensors, add the nbytes of the indices and values.  If you want the "
            "size of the  equivalent dense tensor, multiply numel() by element_size()")

    def __getattr__(self, name):
        from ._tensor import Tensor
        if not name.startswith("__") and hasattr(Tensor, name):
            raise _unsupported(name)
        raise AttributeError(f"'Tensor' object has no attribute '{name}'")

    def __iter__(self):
        raise _unsupported("unbind")

    def __getitem__(self, key):
        raise _unsupported("index")

    def __setitem__(self, key, value):
        raise _unsupported("index_put_")

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", str(func))
        h = _HANDLERS.get(name)
        if h is None:
            raise _unsupported(name.strip("_") if name.startswith("__") else name)
        return h(*args, **(kwargs or {}))

    # -------------------------------------------------------------- printing
    def __repr__(self):
        from ._tensor_str import _values_str
        tl = _tl()
        default = D.get_default_dtype()

        def part(t, indent):
            a = np.asarray(t.detach()._data) if not isinstance(t, np.ndarray) else t
            if a.size == 0:
                return f"tensor([], size={tuple(a.shape)})"
            dt = D.int64 if isinstance(t, np.ndarray) else t.dtype
            return "tensor(" + _values_str(a, dt, indent + 7) + ")"

        body = ("tensor(indices=" + part(self._ind, 15) + ",\n" + " " * 7 + "values="
                + part(self._vals, 14))
        suffixes = [f"size={self._size}", f"nnz={self._nnz()}"]
        if self.device.type != "cpu":
            suffixes.append(f"device='{self.device}'")
        if self.dtype not in (default, D.int64, D.bool):
            suffixes.append(f"dtype={self.dtype!r}")
        suffixes.append("layout=torch.sparse_coo")
        if self.grad_fn is not None:
            from ._tensor_str import _node_name
            suffixes.append(f"grad_fn=<{_node_name(self.grad_fn)}>")
        elif self.requires_grad:
            suffixes.append("requires_grad=True")
        from ._tensor_str import PRINT_OPTS
        out = [body, ",\n" + " " * 7 + suffixes[0]]
        line = 7 + len(suffixes[0])
        for s in suffixes[1:]:
            if line + len(s) + 2 > PRINT_OPTS.linewidth:
                out.append(",\n" + " " * 7 + s)
                line = 7 + len(s)
            else:
                out.append(", " + s)
                line += len(s) + 2
        return "".join(out) + ")"

    __str__ = __repr__

    def __format__(self, spec):
        # torch's Tensor.__format__: a 0-dim tensor formats its number (torch's item() of one
        # without entries is the int 0, whatever the dtype), any other tensor only with an
        # empty spec (named Tensor in the error, torch's type of a sparse tensor)
        if not self._size:
            return format(self.detach().to_dense().item() if self._nnz() else 0, spec)
        return _FORMAT_AS_TENSOR(self, spec)


def _cast(name):
    """``SparseTensor.<name>()``: the values cast as ``Tensor.<name>()`` casts them."""
    def cast(self):
        return self._with_values(getattr(self._vals, name)())
    cast.__name__ = cast.__qualname__ = name
    return cast


for _name in ("float", "double", "half", "bfloat16", "long", "int", "bool"):
    setattr(SparseTensor, _name, _cast(_name))
del _name


def _segment_sum(vals, seg, n):
    """``vals``' rows summed into ``n`` rows by ``seg`` (numpy ints): one differentiable
    ``index_add`` into zeros."""
    tl = _tl()
    out = tl.zeros((n,) + tuple(vals.shape[1:]), dtype=vals.dtype, device=vals.device)
    return out.index_add(0, tl.tensor(np.asarray(seg, np.int64), device=vals.device), vals)


def _is_sparse(x):
    return isinstance(x, SparseTensor)


# ------------------------------------------------------------------ construction

def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """torch.sparse_coo_tensor: a sparse tensor of ``values`` at ``indices``
    (``(sparse_dim, nnz)`` ints)."""
    tl = _tl()
    from ._tensor import Tensor
    if isinstance(indices, Tensor):
        ind = np.asarray(indices.detach()._data)
    else:
        ind = np.asarray(indices)
    if ind.dtype.kind not in "iub":
        ind = ind.astype(np.int64)      # (torch converts float indices too)
    ind = ind.astype(np.int64)
    if not isinstance(values, Tensor):
        values = tl.tensor(values, dtype=dtype, device=device)
    if dtype is not None or device is not None:
        values = values.to(device=device, dtype=dtype)
    if ind.ndim == 1 and ind.size == 0:
        ind = ind.reshape(1, 0)
    if ind.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {_sizes(ind.shape)}")
    sd, nnz = ind.shape
    if values.ndim == 0:
        raise RuntimeError(f"values must be 1D+ tensor but got {_sizes(values.shape)}")
    if values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {values.shape[0]}")
    dense = tuple(values.shape[1:])
    if size is None:
        size = tuple(int(m) + 1 for m in ind.max(axis=1)) if nnz else (0,) * sd
        size = size + dense
    size = tuple(int(s) for s in size)
    if len(size) != sd + len(dense):
        raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: len(size) "
                           f"= {len(size)}, sparse_dim = {sd}, dense_dim = {len(dense)}")
    for d in range(sd):
        if nnz and ind[d].min() < 0:
            raise RuntimeError(f"found negative index {ind[d].min()} for dim {d}")
        if nnz and ind[d].max() >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{size[d]} but found index {ind[d].max()}")
    if size[sd:] != dense:
        raise RuntimeError(f"values has incorrect size, expected {_sizes((nnz,) + size[sd:])}, "
                           f"got {_sizes(values.shape)}")
    if requires_grad:
        if not (values.dtype.is_floating_point or values.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        values = values.detach().requires_grad_()
    return SparseTensor(ind, values, size, bool(is_coalesced))


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """Tensor.to_sparse: the nonzero entries of a dense tensor (over its first ``sparse_dim``
    dims) as a coalesced sparse COO tensor."""
    if layout is not None and layout is not _runtime.sparse_coo:
        raise NotImplementedError(f"to_sparse(layout={layout}): torchlike supports the "
                                  f"torch.sparse_coo layout only")
    n = self.ndim
    if sparse_dim is None:
        sparse_dim = n
    elif not 0 <= sparse_dim <= n:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{n}] range, "
                           f"but {sparse_dim} is given")
    elif n > 0 and sparse_dim == 0:
        raise RuntimeError("dense_to_sparse: sparse_dim argument must be in >0 when "
                           "self.dim()>0")
    tl = _tl()
    a = np.asarray(self.detach()._data)
    nz = a != 0
    if sparse_dim < n:
        nz = nz.any(axis=tuple(range(sparse_dim, n)))
    ind = np.stack(np.nonzero(nz)).astype(np.int64).reshape(sparse_dim, -1) if sparse_dim \
        else np.zeros((0, int(nz)), np.int64)      # (a 0-dim tensor: one entry unless zero)
    if sparse_dim:
        vals = self[tuple(tl.tensor(r) for r in ind)]
    else:
        vals = self.unsqueeze(0)[:ind.shape[1]]
    return SparseTensor(ind, vals, tuple(self.shape), True)


# ------------------------------------------------------------------ products

def _dense(x, name, pos):
    from ._tensor import Tensor, not_a_tensor
    if not isinstance(x, Tensor):
        raise not_a_tensor(name, x, "mat2" if pos == 2 else "input", pos)
    return x


def _check_2d_sparse(s):
    if s.sparse_dim() != 2 or s.dense_dim():
        raise RuntimeError(f"addmm: matrices expected, got {s.dim()}D tensor")


def _sparse_dense(s, d):
    """sparse (m x k) @ dense (k x n) -> dense (m x n)."""
    _check_2d_sparse(s)
    if d.ndim != 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[-{max(d.ndim, 1)}, {max(d.ndim, 1) - 1}], but got 1)")
    if d.shape[0] != s._size[1]:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {s._size[1]}, got "
                           f"{d.shape[0]}")
    if d.dtype is not s.dtype:
        raise RuntimeError(f"expected scalar type {_tname(s.dtype)} but found "
                           f"{_tname(d.dtype)}")
    tl = _tl()
    col = tl.tensor(s._ind[1], device=d.device)
    prod = d.index_select(0, col) * s._vals.unsqueeze(1)
    return _segment_sum(prod, s._ind[0], s._size[0])


def _dense_sparse(d, s):
    """dense (m x k) @ sparse (k x n) -> dense (m x n)."""
    _check_2d_sparse(s)
    if d.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if d.dtype is not s.dtype:
        raise RuntimeError(f"expected scalar type {_tname(s.dtype)} but found "
                           f"{_tname(d.dtype)}")
    return _sparse_dense(s.t(), d.t()).t()     # (torch's size check: the transposed one's)


def _sparse_sparse(a, b):
    """sparse (m x k) @ sparse (k x n) -> coalesced sparse (m x n): every pair of entries
    meeting on k, summed per output position."""
    _check_2d_sparse(a)
    _check_2d_sparse(b)
    if a._size[1] != b._size[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._size[0]}x"
                           f"{a._size[1]} and {b._size[0]}x{b._size[1]})")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {_tname(a.dtype)} but found "
                           f"{_tname(b.dtype)}")
    tl = _tl()
    ea, eb = np.nonzero(a._ind[1][:, None] == b._ind[0][None, :])
    lin = a._ind[0][ea] * b._size[1] + b._ind[1][eb]
    uniq, inv = np.unique(lin, return_inverse=True)
    prod = (a._vals.index_select(0, tl.tensor(ea.astype(np.int64)))
            * b._vals.index_select(0, tl.tensor(eb.astype(np.int64))))
    vals = _segment_sum(prod, inv, len(uniq))
    ind = np.stack(np.unravel_index(uniq, (a._size[0], b._size[1]))).astype(np.int64)
    return SparseTensor(ind.reshape(2, -1), vals, (a._size[0], b._size[1]), True)


def _tname(dt):
    return {D.float32: "Float", D.float64: "Double", D.float16: "Half", D.bfloat16: "BFloat16",
            D.int64: "Long", D.int32: "Int", D.int16: "Short", D.int8: "Char", D.uint8: "Byte",
            D.bool: "Bool", D.complex64: "ComplexFloat",
            D.complex128: "ComplexDouble"}.get(dt, str(dt))


def mm(input, mat2, *, out=None):
    """mm with a sparse operand: sparse @ dense and dense @ sparse are dense, sparse @ sparse
    is sparse."""
    if out is not None:
        raise _unsupported("mm(out=)")
    if _is_sparse(input):
        if _is_sparse(mat2):
            return _sparse_sparse(input, mat2)
        return _sparse_dense(input, _dense(mat2, "mm", 2))
    return _dense_sparse(_dense(input, "mm", 1), mat2)


def matmul(input, other, *, out=None):
    """matmul / ``@`` with a sparse operand: a 2-D sparse matrix times a matrix or vector."""
    if _is_sparse(input) and not _is_sparse(other) and getattr(other, "ndim", None) == 1:
        return _sparse_dense(input, other.unsqueeze(1)).squeeze(1)
    for x in (input, other):
        if not _is_sparse(x) and getattr(x, "ndim", 2) > 2:
            raise RuntimeError("expand is unsupported for Sparse tensors")
    return mm(input, other, out=out)


def spmm(input, mat2):
    """torch.spmm: ``mm`` (sparse @ dense, dense @ sparse, or dense @ dense)."""
    return _tl().mm(input, mat2)


# ------------------------------------------------------------------ arithmetic

def add(input, other, *, alpha=1, out=None):
    """dense + sparse is dense; sparse + sparse is sparse; sparse + dense is torch's error."""
    if out is not None:
        raise _unsupported("add(out=)")
    if not _is_sparse(input):
        from ._tensor import Tensor
        if not isinstance(input, Tensor):
            raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                               "instead.")
        if tuple(input.shape) != other._size:
            raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self "
                               f"has size {_sizes(input.shape)} while other has size "
                               f"{_sizes(other._size)} (FYI: dense-sparse addition does not "
                               f"currently support broadcasting)")
        return _tl().add(input, other.to_dense(), alpha=alpha)
    if not _is_sparse(other):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) "
                           "instead.")
    if input._size != other._size:
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but "
                           f"{_sizes(input._size)} != {_sizes(other._size)}")
    if input.sparse_dim() != other.sparse_dim():
        raise _unsupported("add")
    ov = other._vals if alpha == 1 else other._vals * alpha
    iv = input._vals
    if ov.dtype is not iv.dtype:
        ov = ov.to(iv.dtype)
    slots, ind = _merge(input._lin(), other._lin(), input._size[:input.sparse_dim()])
    vals = _segment_sum(_tl().cat([iv, ov]), slots, ind.shape[1])
    return SparseTensor(ind, vals, input._size, input._coalesced and other._coalesced)


def _merge(la, lb, sparse_size):
    """torch's merge of two entry lists (linear positions ``la``, ``lb``), walked in order as
    if each were sorted: the smaller position first, equal positions summed into one entry.
    Returns each entry's output slot (``la``'s then ``lb``'s) and the output indices."""
    slots = np.empty(len(la) + len(lb), np.int64)
    out = []
    i = j = 0
    while i < len(la) or j < len(lb):
        if j == len(lb) or (i < len(la) and la[i] < lb[j]):
            slots[i] = len(out)
            out.append(la[i])
            i += 1
        elif i == len(la) or lb[j] < la[i]:
            slots[len(la) + j] = len(out)
            out.append(lb[j])
            j += 1
        else:
            slots[i] = slots[len(la) + j] = len(out)
            out.append(la[i])
            i += 1
            j += 1
    out = np.asarray(out, np.int64)
    ind = np.stack(np.unravel_index(out, sparse_size)).astype(np.int64).reshape(
        len(sparse_size), -1)
    return slots, ind


def _scalar(x):
    from ._tensor import Tensor
    return (isinstance(x, (int, float, complex, bool)) and not isinstance(x, SparseTensor)) \
        or (isinstance(x, Tensor) and x.ndim == 0)


def mul(input, other, *, out=None):
    """sparse * number (or 0-dim tensor), in either order: sparse."""
    if out is not None:
        raise _unsupported("mul(out=)")
    if _is_sparse(input) and _scalar(other):
        return input._with_values(input._vals * other)
    if _is_sparse(other) and _scalar(input):
        return other._with_values(input * other._vals)
    raise _unsupported("mul")


def div(input, other, *, rounding_mode=None, out=None):
    """sparse / number (or 0-dim tensor): sparse."""
    if out is not None or not (_is_sparse(input) and _scalar(other)):
        raise _unsupported("div")
    return input._with_values(_tl().div(input._vals, other, rounding_mode=rounding_mode))


def neg(input):
    return input.neg()


# ------------------------------------------------------------------ sums

def sum(input, dim=None, keepdim=False, *, dtype=None):
    """torch.sum of a sparse tensor: all of it is a dense scalar; over ``dim`` a sparse tensor
    (dense when no sparse dim is left)."""
    v = input._vals
    if dim is None:
        return v.sum(dtype=dtype)
    from ._tensor import _wrap_dim
    n, sd = input.dim(), input.sparse_dim()
    dims = sorted({_wrap_dim(d, n) for d in ((dim,) if isinstance(dim, int) else dim)})
    sparse_dims = [d for d in dims if d < sd]
    dense_dims = [d - sd + 1 for d in dims if d >= sd]
    if dense_dims:
        v = v.sum(dense_dims, keepdim=keepdim)
    if dtype is not None:
        v = v.to(dtype)
    elif not (v.dtype.is_floating_point or v.dtype.is_complex):
        v = v.to(D.int64)
    keep = [d for d in range(sd) if d not in sparse_dims]
    size = [1 if d in dims else s for d, s in enumerate(input._size)] if keepdim else \
        [s for d, s in enumerate(input._size) if d not in dims]
    if not keep and not keepdim:
        return v.sum(0)
    ind = input._ind.copy() if keepdim else input._ind[keep]
    if keepdim:
        ind[sparse_dims] = 0
    r = SparseTensor(ind, v, size).coalesce()
    r._coalesced = not keepdim      # (torch's flag)
    return r


def _refusing(name):
    def refuse(self, *args, **kwargs):
        raise _unsupported(name)
    refuse.__name__ = f"__{name}__"
    return refuse


# Python's operators torchlike does not compute on a sparse tensor: refused, naming the op
for _name in ("eq", "ne", "lt", "le", "gt", "ge", "pow", "rpow", "abs", "invert", "and",
              "rand", "or", "ror", "xor", "rxor", "mod", "rmod", "floordiv", "rfloordiv",
              "rtruediv", "lshift", "rshift", "pos", "iadd", "isub", "imul", "itruediv",
              "float", "int", "index", "complex"):
    setattr(SparseTensor, f"__{_name}__", _refusing(_name))
del _name

_HANDLERS = {
    "mm": mm, "spmm": mm, "matmul": matmul, "__matmul__": matmul,
    "__rmatmul__": lambda a, b: matmul(b, a), "mv": lambda a, b: matmul(a, b),
    "add": add, "__add__": add, "__radd__": lambda a, b: add(b, a),
    "sub": lambda a, b, *, alpha=1: add(a, b, alpha=-alpha),
    "__sub__": lambda a, b: add(a, b, alpha=-1), "__rsub__": lambda a, b: add(b, a, alpha=-1),
    "mul": mul, "__mul__": mul, "__rmul__": lambda a, b: mul(b, a),
    "div": div, "__truediv__": div, "true_divide": div, "neg": neg, "negative": neg,
    "__neg__": neg, "sum": sum,
    "t": lambda a: a.t(), "transpose": lambda a, d0, d1: a.transpose(d0, d1),
    "detach": lambda a: a.detach(), "clone": lambda a, **k: a.clone(**k),
    "is_tensor": lambda a: True, "numel": lambda a: a.numel(),
}
