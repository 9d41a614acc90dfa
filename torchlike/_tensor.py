"""Tensor: a jax array plus torch's autograd metadata. No maths here.

Operators and math methods are attached by the op families in ``torchlike._ops`` (each op is
declared once there); this file holds data access, metadata, autograd entry points and hooks.
"""
from __future__ import annotations

import math
import operator
import warnings
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from . import _device
from . import _dtype as D
from . import _runtime
from . import _fused
from . import _registry
from . import _storage
from . import _strides
from ._tensor_interop import InteropMixin
from .autograd import grad_mode as _gm
from .autograd.graph import AccumulateGrad, InvalidView
from .utils.hooks import RemovableHandle

__all__ = ["Tensor", "Size"]


class Size(tuple):
    """torch.Size: a tuple of ints with torch's repr."""

    def __new__(cls, *args, **kwargs):
        t = tuple.__new__(cls, *args, **kwargs)     # (tuple's errors: two arguments, keywords)
        for s in t:
            if type(s) is not int:
                return tuple.__new__(cls, _size_items(t))
        return t

    def __repr__(self):
        return f"torch.Size([{', '.join(str(_unpack_int64(s)) for s in self)}])"

    __str__ = __repr__
    __format__ = D.c_type_format("torch.Size")

    def numel(self):
        n = 1
        for s in self:
            n *= _unpack_int64(s)
        return (n + _INT64_END) % (2 * _INT64_END) - _INT64_END     # (torch's int64 product)

    def __reduce__(self):
        return Size, (tuple(self),)

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to "
                            f"torch.Size")
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n):
        return Size(tuple(self) * n)

    __rmul__ = __mul__


_SIZES: dict = {}       # shape tuple -> its torch.Size (immutable: one object per shape)


def _size_of(shape):
    r = Size(shape)
    if all(type(d) is int for d in shape):     # (not symbolic sizes)
        if len(_SIZES) >= 4096:
            _SIZES.clear()
        _SIZES[shape] = r
    return r


_INT64_END = 1 << 63


def _size_items(items):
    """The items of a torch.Size as torch's constructor keeps them: ints and numpy ints as they
    are, anything else as the int its ``__index__`` gives (a bool, a one-element int tensor);
    torch's TypeError for an item without one (its ``__index__`` raising: a float tensor, a
    meta one). Ints past int64 are kept: reading them as torch's C++ does raises
    (``_unpack_int64``)."""
    out = []
    for i, s in enumerate(items):
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
            try:
                s = int(operator.index(s))
            except Exception:
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is "
                                f"'{_type_name(s)}')") from None
        out.append(s)
    return out


def _unpack_int64(s):
    """A torch.Size item read as torch's C++ reads it (its repr, ``numel``): an int64, torch's
    ValueError past that."""
    s = int(s)
    if not -_INT64_END <= s < _INT64_END:
        raise ValueError("Overflow when unpacking long long")
    return s


_NON_LEAF_GRAD_MSG = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information. (Triggered internally at "
    "/__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)")

_NOT_SPARSE = ("torchlike does not provide sparse compressed (CSR/CSC/BSR/BSC) or mkldnn "
               "tensors: its sparse tensors are COO (Tensor.to_sparse()), so {name}() is not "
               "provided. Use to_sparse() or keep the tensor dense.")


_REINFORCE_REMOVED = (
    "reinforce() was removed.\nUse torch.distributions instead.\n"
    "See https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\n"
    "probs = policy_network(state)\naction = probs.multinomial()\n"
    "next_state, reward = env.step(action)\naction.reinforce(reward)\naction.backward()\n\n"
    "Use:\n\nprobs = policy_network(state)\n"
    "# NOTE: categorical is equivalent to what used to be called multinomial\n"
    "m = torch.distributions.Categorical(probs)\naction = m.sample()\n"
    "next_state, reward = env.step(action)\nloss = -m.log_prob(action) * reward\n"
    "loss.backward()\n")

_warned_float = [False]


def warn_scalar_of_grad():
    """torch's warning when a tensor that requires grad becomes a Python number (``float(t)``,
    an element of ``torch.tensor([t, ...])``): once a process, and only with grad mode on."""
    if _warned_float[0] or not _gm._state.grad_enabled:
        return
    _warned_float[0] = True
    from ._ops.factorizations import _user_stacklevel, triggered
    warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to unexpected "
                  "behavior.\nConsider using tensor.detach() first."
                  + triggered("torch/csrc/autograd/generated/python_variable_methods.cpp:822"),
                  UserWarning, stacklevel=_user_stacklevel())

_DETACH_VIEW_MSG = (
    "Can't detach views in-place. Use detach() instead. If you are using "
    "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, "
    "gradients are views of DDP buckets, and hence detach_() cannot be called on these "
    "gradients. To fix this error, please refer to the Optimizer.zero_grad() function in "
    "torch/optim/optimizer.py as the solution.")

SHARE_MEMORY_MSG = (
    "torchlike cannot put a tensor in memory shared between processes (jax arrays have no "
    "shared storage): share_memory_() leaves it as it is, and a process that receives it gets "
    "a copy, so in-place updates made in one process (Hogwild training) are not seen by the "
    "others. Send results back through a queue instead.")

_FLOAT_OR_COMPLEX_MSG = "only Tensors of floating point and complex dtype can require gradients"
_GRAD_FROM_BASE = frozenset(("no_grad", "inference"))  # (``_storage.Alias.creation``)
_storage_write = [None]     # torchlike._storage.write, bound on first use (it imports this module)

# the dtypes whose Tensor.numpy() torch refuses (numpy has no such type): torch's names
_NO_NUMPY = {"bfloat16": "BFloat16", "float8_e4m3fn": "Float8_e4m3fn",
             "float8_e5m2": "Float8_e5m2", "float8_e4m3fnuz": "Float8_e4m3fnuz",
             "float8_e5m2fnuz": "Float8_e5m2fnuz", "float8_e8m0fnu": "Float8_e8m0fnu"}


# iterating a tensor of at most this many rows is one ``unbind(0)`` (torch's), longer ones a
# select a row
ITER_UNBIND_MAX = 64



def _layout_error(name, layout):
    """A sparse-layout method of a dense tensor: torch's RuntimeError."""
    def method(self):
        raise RuntimeError(f"{name} expected {layout} tensor layout but got Strided")
    method.__name__ = name
    return method


def _no_dense_kernel(name):
    """A sparse-only method of a dense tensor: torch's dispatcher error (its first lines)."""
    def method(self):
        raise NotImplementedError(
            f"Could not run 'aten::{name}' with arguments from the 'CPU' backend. This could be "
            f"because the operator doesn't exist for this backend, or was omitted during the "
            f"selective/custom build process (if using custom build).")
    method.__name__ = name
    return method

class Tensor(InteropMixin):
    """A torch-style tensor over an immutable jax array.

    >>> t = torchlike.tensor([2.0, 3.0], requires_grad=True)
    >>> (t * 2).sum().backward(); t.grad
    tensor([2., 2.])
    """

    __slots__ = ("_d", "_requires_grad", "grad_fn", "_output_nr", "_grad", "_acc",
                 "_vc", "_retains_grad", "_is_inference", "_alias", "__weakref__", "__dict__")

    # ------------------------------------------------------------ construction
    def __new__(cls, *args, **kwargs):
        # torch.Tensor(data) / torch.Tensor(*sizes): the legacy float constructor
        from ._creation import _legacy_tensor
        return _legacy_tensor(cls, *args, **kwargs)

    @classmethod
    def _make(cls, data, node=None, output_nr=0):
        t = object.__new__(cls)
        t._d = data
        t.grad_fn = node
        t._output_nr = output_nr
        t._requires_grad = node is not None
        t._grad = None
        t._acc = None
        t._vc = [0]
        t._retains_grad = False
        t._is_inference = _gm._state.inference
        t._alias = None
        return t

    # ops whose operands include an instance of a subclass give results of that subclass, as
    # torch's default ``__torch_function__`` converts them (``_registry._of_class``)
    _results_keep_class = True
    _plain_repr = True          # (printed "tensor(...)"; a subclass prints its own name)

    def as_subclass(self, cls):
        """An alias of this tensor (the same storage, ``AliasBackward0`` in its history) as an
        instance of ``cls``."""
        if not (isinstance(cls, type) and issubclass(cls, Tensor)):
            raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                            "Tensor is not possible. Make sure your class inherits from Tensor.")
        return _with_class(Tensor.__getitem__(self, Ellipsis), cls)   # (AliasBackward0)

    @staticmethod
    def _make_subclass(cls, data, require_grad=False, **kwargs):
        """A ``cls`` instance sharing ``data``'s storage, detached, requiring grad as asked."""
        t = _with_class(data.detach(), cls)
        t._requires_grad = bool(require_grad)
        return t

    @classmethod
    def _resolve_data_with(cls, get, set_):
        """Fused eager (``torchlike._fused``): ``_data`` becomes a property that resolves a
        deferred value (until then it is the ``_d`` slot itself)."""
        cls._data = property(get, set_, doc="the tensor's jax array (deferred values resolved)")

    def _set_data(self, data):
        """Write ``data`` into this tensor in place, outside autograd (as under no_grad).

        Bumps the version counter shared with every alias and makes the write visible through
        them (see torchlike/_storage.py).
        """
        w = _storage_write[0]
        if w is None:
            from ._storage import write as w
            _storage_write[0] = w
        w(self, data)

    # The version counter is shared by a tensor and all its views/aliases (torch semantics).
    @property
    def _version(self):
        if self._is_inference:
            raise RuntimeError("Inference tensors do not track version counter.")
        return self._vc[0]

    @_version.setter
    def _version(self, value):
        try:
            self._vc[0] = value
        except AttributeError:
            self._vc = [value]
        try:
            self._alias
        except AttributeError:
            self._alias = None

    @property
    def _base(self):
        """The tensor this one is a view of (None for non-views and detached aliases)."""
        a = self._alias
        return None if a is None or a.detached else a.root

    def _is_view(self):
        return self._base is not None

    # ------------------------------------------------------------ metadata
    @property
    def dtype(self):
        return D.from_jax(self._d.dtype)

    @property
    def shape(self):
        s = self._d.shape
        r = _SIZES.get(s)
        return r if r is not None else _size_of(s)

    def size(self, dim=None):
        if dim is None:
            s = self._d.shape
            r = _SIZES.get(s)
            return r if r is not None else _size_of(s)
        return self._d.shape[_wrap_dim(dim, self._d.ndim)]

    def dim(self):
        return self._d.ndim

    ndimension = dim

    @property
    def ndim(self):
        return self._d.ndim

    def numel(self):
        return math.prod(self._d.shape)

    nelement = numel

    def __len__(self):
        if self._d.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._d.shape[0]

    @property
    def device(self):
        return _device.of_array(self._d)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_complex(self):
        return self.dtype.is_complex

    def element_size(self):
        return self.dtype.itemsize

    def is_inference(self):
        return self._is_inference

    @property
    def layout(self):
        return _runtime.strided     # (sparse COO tensors are torchlike._sparse.SparseTensor)

    # layout and backend queries: dense, strided, quantization-free tensors on jax's cpu/gpu
    is_sparse = is_sparse_csr = is_quantized = is_mkldnn = is_nested = property(
        lambda self: False)
    is_ipu = is_maia = is_mtia = is_vulkan = is_xpu = property(lambda self: False)

    # a dense tensor asked about a sparse layout: torch's answers and errors (an
    # ``Embedding(sparse=True)`` gradient is dense here: see DIFFERENCES)
    def sparse_dim(self):
        return 0

    def dense_dim(self):
        return self.ndim

    coalesce = _layout_error("coalesce", "sparse coordinate")
    indices = _layout_error("indices", "sparse coordinate")
    values = _layout_error("values", "sparse")
    crow_indices = _layout_error("crow_indices", "sparse row compressed")
    col_indices = _layout_error("col_indices", "sparse row compressed")
    ccol_indices = _layout_error("ccol_indices", "sparse column compressed")
    row_indices = _layout_error("row_indices", "sparse column compressed")
    _indices = _no_dense_kernel("_indices")
    _values = _no_dense_kernel("_values")
    _nnz = _no_dense_kernel("_nnz")

    def is_shared(self):
        return False

    def share_memory_(self):
        """torch moves the storage into shared memory, so that processes that receive the
        tensor see each other's in-place writes (Hogwild training). jax arrays cannot live in
        memory shared between processes: a tensor sent to another process is a copy. This
        warns (once a place) and returns ``self`` unshared (DIFFERENCES.md)."""
        warnings.warn(SHARE_MEMORY_MSG, UserWarning, stacklevel=2)
        return self

    def is_coalesced(self):
        raise RuntimeError("is_coalesced expected sparse coordinate tensor layout but got "
                           "Strided")

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        """This tensor's nonzero entries as a coalesced sparse COO tensor
        (``torchlike._sparse``), over its first ``sparse_dim`` dims (all by default)."""
        from ._sparse import to_sparse
        return to_sparse(self, sparse_dim, layout=layout, blocksize=blocksize,
                         dense_dim=dense_dim)

    def to_sparse_csr(self, *args, **kwargs):
        raise NotImplementedError(_NOT_SPARSE.format(name="to_sparse_csr"))

    def to_sparse_csc(self, *args, **kwargs):
        raise NotImplementedError(_NOT_SPARSE.format(name="to_sparse_csc"))

    def to_sparse_bsr(self, *args, **kwargs):
        raise NotImplementedError(_NOT_SPARSE.format(name="to_sparse_bsr"))

    def to_sparse_bsc(self, *args, **kwargs):
        raise NotImplementedError(_NOT_SPARSE.format(name="to_sparse_bsc"))

    def to_mkldnn(self, *args, **kwargs):
        raise NotImplementedError(_NOT_SPARSE.format(name="to_mkldnn"))

    def reinforce(self, reward):
        """Removed from torch long ago; torch keeps it to say what replaced it."""
        raise RuntimeError(_REINFORCE_REMOVED)

    def record_stream(self, stream):
        """Tensor.record_stream: jax tracks buffer lifetimes across streams itself."""

    def stride(self, dim=None):
        from ._strides import strides
        s = strides(self)
        return s if dim is None else s[_wrap_dim(dim, len(s))]

    def is_contiguous(self, memory_format=None):
        if memory_format is None and self._alias is None and "_layout" not in self.__dict__:
            return True     # (a root with no layout of its own has contiguous strides)
        return _strides.is_contiguous(self, memory_format)

    # ------------------------------------------------------------ autograd metadata
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if value.__class__ is not bool:
            raise RuntimeError("requires_grad must be a bool")
        if self.grad_fn is not None and value:
            # (torch's attribute refuses a non-leaf even for True, which requires_grad_ allows)
            raise RuntimeError("you can only change requires_grad flags of leaf variables.")
        self._set_requires_grad(value, _FLOAT_OR_COMPLEX_MSG)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` on a leaf; returns self."""
        if requires_grad.__class__ is not bool:
            kind = type(requires_grad)
            raise TypeError(f"requires_grad_(): argument 'requires_grad' (position 1) must be "
                            f"bool, not {'numpy.' if kind.__module__ == 'numpy' else ''}"
                            f"{kind.__name__}")
        return self._set_requires_grad(requires_grad)

    def _set_requires_grad(self, requires_grad, _dtype_msg=None):
        requires_grad = bool(requires_grad)
        if self.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().")
            return self
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            # (torch's three callers word it three ways: requires_grad_(), the attribute,
            # nn.Parameter)
            raise RuntimeError(_dtype_msg or
                               "only Tensors of floating point dtype can require gradients")
        if requires_grad and self._is_inference and not _gm._state.inference:
            raise RuntimeError(_gm.INFERENCE_REQUIRES_GRAD_MSG)
        a = self._alias
        if not requires_grad and a is not None and a.creation in _GRAD_FROM_BASE:
            return self     # (a view made without grad of a tensor that requires it: torch's
            #                  flag follows the base)
        self._requires_grad = requires_grad
        return self

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        g = self._grad
        if g is None and not self._retains_grad and self.grad_fn is not None:
            import warnings
            warnings.warn(_NON_LEAF_GRAD_MSG, UserWarning, stacklevel=2)
        return g

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                                f"type {_type_name(value)}")
            if value.dtype is not self.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{_CPP.get(value.dtype.name)}' "
                    f"to a tensor with grad_dtype '{D.LEGACY_NAMES.get(self.dtype.name)}'. The gradient "
                    f"must match the tensor's grad_dtype (defaults to the tensor's dtype). You "
                    f"can set the tensor's grad_dtype attribute with a specific dtype, or None to "
                    f"allow any dtype. Set grad_dtype with caution. Diverging the dtypes of a "
                    f"tensor and its gradient may break downstream systems that assume they "
                    f"match.")
            dv, ds = value.device, self.device
            if dv.type != ds.type:
                raise RuntimeError(
                    f"attempting to assign a gradient with device type '{dv.type}' to a tensor "
                    f"with device type '{ds.type}'. Please ensure that the gradient and the "
                    f"tensor are on the same device")
            if dv != ds:
                raise RuntimeError(
                    f"attempting to assign a gradient located on device with index "
                    f"'{dv.index}' to a tensor located on device with index '{ds.index}'. "
                    f"Please ensure that the gradient and the tensor are on the same device")
            if tuple(value.shape) != tuple(self.shape):
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor "
                    f"of size '{list(self.shape)}'. Please ensure that the gradient and the "
                    f"tensor are the same size")
        self._grad = value

    @property
    def retains_grad(self):
        return self._retains_grad

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def data(self):
        """The same storage, detached from autograd, with a version counter of its own."""
        if _vmapping():
            raise RuntimeError("accessing `data` under vmap transform is not allowed")
        t = self.detach()
        t._vc = [0]
        return t

    @data.setter
    def data(self, value):
        # torch swaps the tensor's storage: no version bump; the tensor takes the new data's
        # sizes and strides (a channels_last, permuted or sliced ``value`` keeps its layout)
        # and from then on shares ``value``'s storage (``_storage.take_storage``)
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {_type_name(value)}")
        if self._requires_grad and not (value.dtype.is_floating_point
                                        or value.dtype.is_complex):
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               "point or complex dtype")
        a = value._alias
        if a is not None and a.root is self and a.parent is self and a.op is not None \
                and a.op[0] == "detach" and value._d is self._d:
            return      # (its own storage through its ``.data``: ``p.data += -lr * p.grad``)
        st = _strides.strides(value) if isinstance(value, Tensor) else None
        if not (isinstance(value, Tensor) and _storage.take_storage(self, value)):
            # (a pending value stays pending: ``p.data += -lr * p.grad`` runs no segment)
            self._data = _fused.raw(value)
        if self._alias is None:
            _strides.set_layout(self, st)

    def _edge(self):
        """The (node, output_nr) through which gradient flows into this tensor."""
        g = self.grad_fn
        if g is not None:
            if g.__class__ is InvalidView:
                raise RuntimeError(g.error)
            return (g, self._output_nr)
        acc = self._acc
        if acc is None:
            acc = self._acc = AccumulateGrad(self)
        return (acc, 0)

    def _hook_node(self):
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        return self._edge()

    def register_hook(self, hook):
        """Register ``hook(grad) -> Tensor or None``, run when this tensor's gradient is computed.

        The hook sees the gradient summed over every use of the tensor; several hooks run in
        registration order, each seeing the previous one's result. Returns a RemovableHandle.

        >>> h = t.register_hook(lambda g: g * 2)
        >>> h.remove()
        """
        node, nr = self._hook_node()
        hooks = node._tensor_hooks(nr)
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def register_post_accumulate_grad_hook(self, hook):
        """Register ``hook(tensor) -> None`` on a leaf, run after ``.grad`` is accumulated."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors")
        acc = self._edge()[0]
        if acc.post_acc_hooks is None:
            acc.post_acc_hooks = {}
        handle = RemovableHandle(acc.post_acc_hooks)
        acc.post_acc_hooks[handle.id] = hook
        return handle

    def retain_grad(self):
        """Keep ``.grad`` for a non-leaf tensor after backward (a no-op on leaves)."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.grad_fn is None or self._retains_grad:
            return
        node = self.grad_fn
        if node.retains is None:
            node.retains = {}
        node.retains[self._output_nr] = weakref.ref(self)
        self._retains_grad = True

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute gradients of this tensor w.r.t. graph leaves (see torch.Tensor.backward)."""
        _autograd().backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self):
        """A new tensor sharing this one's data and version counter, outside the graph."""
        t = _storage.detached_alias(self)
        if _registry.NODE_TRACE[0]:
            t._data = _registry.detached(t._data)
        if self._is_inference:
            t._is_inference = True      # torch: a detached inference tensor is one too
        c = self.__class__
        return t if c is Tensor or not c._results_keep_class else _with_class(t, c)

    def detach_(self):
        if self._base is not None:
            raise RuntimeError(_DETACH_VIEW_MSG)
        self.grad_fn = None
        self._output_nr = 0
        self._requires_grad = False
        return self

    # ------------------------------------------------------------ conversion
    def item(self):
        """The single value as a Python number."""
        n = self.numel()
        if n != 1:
            if isinstance(self._d, jax.core.Tracer) and _vmapping():
                from .func import _core     # (torch's vmap refuses the read of a batched one)
                raise RuntimeError(_core._VMAP_ITEM)
            raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
        if self.device.type == "meta":
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return np.asarray(self._data).reshape(()).item()

    def tolist(self):
        return np.asarray(self._data).tolist()

    def numpy(self, *, force=False):
        """A numpy copy of the data (torch shares memory; see DIFFERENCES.md)."""
        self._check_numpy(force)
        return np.array(self._data)

    def _check_numpy(self, force=False, types=True):
        """torch's refusals of a conversion to numpy (``numpy()``; ``np.asarray(t)`` takes the
        types numpy lacks from ml_dtypes: ``types=False``, DIFFERENCES.md)."""
        if self._requires_grad and not force and _gm._state.grad_enabled:
            # (under no_grad torch converts it: botorch's fit reads parameters so)
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        if self.device.type == "meta":
            raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() "
                            "to copy the tensor to host memory first.")
        if types and self.dtype.name in _NO_NUMPY:
            # (numpy has no such type; torch refuses where ml_dtypes would give one)
            raise TypeError(f"Got unsupported ScalarType {_NO_NUMPY[self.dtype.name]}")
        if not force and self.__dict__.get("_is_conj"):
            raise RuntimeError("Can't call numpy() on Tensor that has conjugate bit set. Use "
                               "tensor.resolve_conj().numpy() instead.")

    # numpy scalars and arrays on the left defer to the tensor's reflected operators, as with
    # torch (np.float64(2) * float32 tensor is a float32 tensor)
    __array_priority__ = 1000

    def __array__(self, dtype=None, copy=None):
        self._check_numpy(types=False)      # (torch's __array__ is its numpy())
        a = np.asarray(self._data)
        return a.astype(dtype) if dtype is not None else a

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """numpy's result of an op of this tensor with an array (torch's operators leave
        numpy's arrays to numpy, as torch's): a tensor of the array's dtype, bool as uint8."""
        if array.dtype == bool:
            array = array.astype("uint8")
        from ._creation import from_numpy
        # (ascontiguousarray makes a 0-d result 1-d: np.argmax(t) is 0-d in torch)
        return from_numpy(np.ascontiguousarray(array).reshape(array.shape))

    def __jax_array__(self):
        return self._data

    def _scalar(self, target=None):
        """The single value, for ``int()``/``float()`` (``target``: torch's C++ type name): a
        complex one converts its real part when its imaginary part is 0, else raises torch's
        overflow error."""
        if self.numel() != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        v = self.item()
        if target is not None and v.__class__ is complex:
            if v.imag:
                raise RuntimeError(f"value cannot be converted to type {target} without "
                                   f"overflow")
            v = v.real
        return v

    def __float__(self):
        if self._requires_grad:
            warn_scalar_of_grad()
        return float(self._scalar("double"))

    def __int__(self):
        return int(self._scalar("int64_t"))

    def __bool__(self):
        n = self.numel()
        if n != 1:
            raise RuntimeError(
                "Boolean value of Tensor with no values is ambiguous" if n == 0 else
                "Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    def __index__(self):
        if self.dtype.category > D._INT or self.numel() != 1:     # (bool and integer dtypes)
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __complex__(self):
        return complex(self._scalar())

    def __format__(self, spec):
        # torch's: a plain 0-dim tensor off the meta device formats its number; anything else
        # (a Parameter too) only with an empty spec, as ``str``
        if self._d.ndim == 0 and type(self) is Tensor and not self.is_meta:
            return format(self.detach().item(), spec)
        return object.__format__(self, spec)

    # ------------------------------------------------------------ printing
    def __repr__(self, *, tensor_contents=None):
        from ._tensor_str import tensor_repr
        return tensor_repr(self, tensor_contents=tensor_contents)

    def __str__(self):
        return self.__repr__()

    def __hash__(self):
        return id(self)

    def __iter__(self):
        if self._d.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        n = self._d.shape[0]
        if n <= ITER_UNBIND_MAX:
            return iter(self.unbind(0))     # (as torch: one op, UnbindBackward0 on each element)
        # (a long first dim: one select a row, SelectBackward0 on each; an unbind of thousands
        # of outputs costs seconds to trace: DIFFERENCES.md)
        return (self[i] for i in range(n))

    def __reduce_ex__(self, proto):
        return (_rebuild, (np.asarray(self._data), self._requires_grad))

    def __copy__(self):
        """``copy.copy``: a new tensor over the same storage, as torch's (its reduce rebuilds
        the tensor on the storage itself): the same ``requires_grad``, no history, no
        ``.grad``."""
        t = self.detach()
        if type(self) is not Tensor:
            t = t.as_subclass(type(self))
        t._requires_grad = self._requires_grad
        return t

    def __deepcopy__(self, memo):
        if self.grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.  If you were "
                               "attempting to deepcopy a module, this may be because of a "
                               "torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        if self._alias is not None:
            t = self._deepcopy_view(memo)
        else:
            t = type(self)._make(_fused.raw(self))     # (arrays are immutable: shared; a
            t._requires_grad = self._requires_grad      # pending fused value stays pending)
        t._vc[0] += 1       # (torch's copy is a ``set_`` onto the copied storage: version 1)
        if self._grad is not None:
            t._grad = self._grad.__deepcopy__(memo)
        # (not its views, nor the host copy its data_ptr points at: the copy has its own; nor
        # the conjugate bit, which torch's deep copy resolves)
        t.__dict__.update({k: v for k, v in self.__dict__.items()
                           if k not in _NOT_DEEPCOPIED})
        memo[id(self)] = t
        return t

    def _deepcopy_view(self, memo):
        """A view deep-copied: over its storage root's copy, made once per ``deepcopy`` call
        (``memo``), so tensors that share storage share it in the copy, as torch's. As torch's
        copy (``set_`` onto the copied storage), it is no view for autograd: no history, a
        version counter of its own (``.data``'s), writes allowed in any grad mode."""
        import copy
        from ._storage import storage_root
        t = copy.deepcopy(storage_root(self), memo)
        layout = (tuple(self._d.shape), self.stride(), self.storage_offset())
        if layout != (tuple(t._d.shape), t.stride(), 0):
            with _gm.no_grad():
                t = t.as_strided(*layout)
        t = t.data
        if type(self) is not Tensor:
            t = t.as_subclass(type(self))
        t._requires_grad = self._requires_grad
        return t


def _vmapping():
    """Is torch.func.vmap the innermost transform tracing in this thread?"""
    apis = _func_core()._state.apis
    return bool(apis) and apis[-1] == "vmap"


def _func_core():
    """``torchlike.func._core`` (which imports this module), imported at the first use."""
    core = _LATER.get("func")
    if core is None:
        from .func import _core as core
        _LATER["func"] = core
    return core


def _autograd():
    """``torchlike.autograd`` (which imports this module), imported at the first use."""
    mod = _LATER.get("autograd")
    if mod is None:
        from . import autograd as mod
        _LATER["autograd"] = mod
    return mod


_LATER: dict = {}


def _type_name(v):
    """CPython's ``tp_name`` of ``type(v)`` (what torch's messages print): the bare name for
    builtins and classes defined in Python, ``module.name`` for extension types."""
    tp = type(v)
    if tp.__module__ == "builtins" or tp.__flags__ & (1 << 9):    # Py_TPFLAGS_HEAPTYPE
        return tp.__name__
    return f"{tp.__module__}.{tp.__name__}"


def not_a_tensor(fn, x, name="input", position=1):
    """torch's TypeError for ``fn``'s Tensor argument ``name`` given ``x``."""
    return TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not "
                     f"{_type_name(x)}")


def no_attribute(x, attr):
    """The AttributeError of torch's Python code reading Tensor attribute ``attr`` of ``x``."""
    return AttributeError(f"'{_type_name(x)}' object has no attribute '{attr}'")


def _rebuild(array, requires_grad):
    t = Tensor._make(jnp.asarray(array))
    t._requires_grad = requires_grad
    return t


def _wrap_dim(dim, ndim):
    """torch's dim wrapping with its IndexError message."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


# ``_data`` reads the ``_d`` slot directly; once fused eager mode is used it becomes a property
# that resolves a deferred value (torchlike._fused)
Tensor._data = Tensor.__dict__["_d"]
_fused._tensor_class[0] = Tensor
_registry._Tensor = Tensor


# torch's C++ type names (assigned-grad dtype errors)
_CPP = dict(float32="float", float64="double", float16="c10::Half", bfloat16="c10::BFloat16",
            int64="long int", int32="int", int16="short int", int8="signed char",
            uint8="unsigned char", bool="bool", complex64="c10::complex<float>",
            complex128="c10::complex<double>")


def _with_class(t, cls):
    """``t`` (a fresh tensor) as an instance of Tensor subclass ``cls``."""
    if t.__class__ is cls:
        return t
    try:
        t.__class__ = cls
        return t
    except TypeError:       # (a subclass with slots of its own: a new object, the same slots)
        out = object.__new__(cls)
        for s in Tensor.__slots__:
            if s != "__weakref__" and hasattr(t, s):
                setattr(out, s, getattr(t, s))
        return out


_registry._with_class = _with_class


_NOT_DEEPCOPIED = frozenset(("_aliases", "_data_ptr", "_is_conj"))
