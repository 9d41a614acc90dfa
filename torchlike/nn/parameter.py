"""nn.Parameter: a leaf Tensor that Modules register as a parameter."""
from __future__ import annotations

import os
import sys

from .._fused import raw as _raw
from .._storage import parameter_of
from .._tensor import Tensor
from .._tensor_str import tensor_repr

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer"]


def _keep_layout(p, data, st=None):
    """``p`` (a new root with ``data``'s values) takes ``data``'s strides (``st``: as they were
    before ``data`` became ``p``'s alias) when they are non-overlapping and dense
    (channels_last, permuted), as torch's Parameter, which shares ``data``'s storage, reports
    them."""
    from .._strides import contiguous_strides, is_non_overlapping_and_dense, set_layout, strides
    st = strides(data) if st is None else st
    shape = tuple(data.shape)
    if st != contiguous_strides(shape) and is_non_overlapping_and_dense(shape, st):
        set_layout(p, st)
    return p


class Parameter(Tensor):
    """A Tensor that is a module parameter; ``requires_grad=True`` by default."""

    __slots__ = ()
    _results_keep_class = False     # (ops on a Parameter give Tensors, as torch's disabled
                                    # __torch_function__ does)
    _plain_repr = True

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .._creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            # torch's custom-tensor path: ``data.detach()`` (its AttributeError for a list)
            data.detach()
        from .._strides import strides
        st = strides(data)
        p = parameter_of(cls, data)        # (shares data's storage, as torch's does)
        if p._alias is None:
            _keep_layout(p, data, st)
        p._requires_grad = False
        p._is_inference = data._is_inference    # torch refuses requires_grad on one below
        if requires_grad:
            p._set_requires_grad(True, "Only Tensors of floating point and complex dtype "
                                       "can require gradients")
        return p

    def __repr__(self):
        return "Parameter containing:\n" + tensor_repr(self)

    def __reduce_ex__(self, proto):
        import numpy as np
        return (_rebuild_parameter, (np.asarray(self._data), self._requires_grad))

    def __deepcopy__(self, memo):
        """A new parameter over a copy of the data, as torch's (its ``.grad`` is not copied:
        ``copy.deepcopy(model)`` after a backward gives a model without gradients)."""
        if id(self) in memo:
            return memo[id(self)]
        p = type(self)(_keep_layout(Tensor._make(_raw(self)), self), self._requires_grad)
        memo[id(self)] = p
        return p


def _rebuild_parameter(array, requires_grad):
    import jax.numpy as jnp
    return Parameter(Tensor._make(jnp.asarray(array)), requires_grad)


class _BufferMeta(type):
    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(metaclass=_BufferMeta):
    """``nn.Buffer(t, persistent=True)``: assigning it to a Module attribute registers a buffer.

    As in torch, the object is a plain Tensor marked as a buffer.
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from .._creation import empty
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t


# the Tensor methods an uninitialized parameter or buffer allows (torch's ``_allowed_methods``)
_UNINITIALIZED_ALLOWED = frozenset({
    "size", "copy_", "is_complex", "is_floating_point", "half", "float", "double", "char",
    "short", "int", "long", "cuda", "cpu", "to", "get_device"})
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# torchlike's helpers written over the Tensor API, as torch's Python ones are: their uses of an
# uninitialized tensor are the program's
_HELPERS = (os.path.join(_PACKAGE, "nn", "utils") + os.sep,
            os.path.join(_PACKAGE, "nn", "init.py"))


def _called_by_the_program():
    """Whether the caller of the function asking is the program (torchlike's own tensor
    machinery reads an uninitialized tensor freely)."""
    f = sys._getframe(2).f_code.co_filename
    return not f.startswith(_PACKAGE) or f.startswith(_HELPERS)


def uninitialized_use_error(t, use):
    """torch's error for the program's ``use`` of the uninitialized tensor ``t``: ``"shape"``,
    the name of a Tensor method, or a function (one checking for torch-function overrides)."""
    if use == "shape":
        return RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. "
            "This error usually happens in `load_state_dict` when trying to load "
            "an uninitialized parameter into an initialized one. "
            "Call `forward` to initialize the parameters before accessing their attributes.")
    func = f"<method '{use}' of 'torch._C.TensorBase' objects>" if isinstance(use, str) else use
    return ValueError(
        f"Attempted to use an uninitialized parameter in {func}. This error happens when you "
        "are using a `LazyModule` or explicitly manipulating "
        f"`torch.nn.parameter.{type(t).__name__}` objects. When using LazyModules Call "
        "`forward` with a dummy batch to initialize the parameters before calling torch "
        "functions")


class UninitializedTensorMixin:
    """torch's mixin of the uninitialized (lazy) parameter and buffer classes: until
    ``materialize``, the program's calls of a Tensor method other than the few above, its
    reads of ``shape`` and ``share_memory_`` raise (torch's ``__torch_function__`` refuses
    them). A copy or a pickle is a new uninitialized tensor (a deep copy of a buffer raises), as
    torch's."""

    __slots__ = ()

    def __getattribute__(self, name):
        if name == "shape" and _called_by_the_program():
            raise uninitialized_use_error(self, name)
        attr = super().__getattribute__(name)
        if (name[0] != "_" and name not in _UNINITIALIZED_ALLOWED
                and callable(getattr(Tensor, name, None))
                and getattr(type(self), name) is getattr(Tensor, name)
                and _called_by_the_program()):
            raise uninitialized_use_error(self, name)
        return attr

    def __len__(self):
        raise uninitialized_use_error(self, Tensor.__len__)

    def share_memory_(self):
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. "
            "Call `forward` to initialize the parameters before calling "
            "`module.share_memory()`.")

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def is_lazy(param):
    """Whether ``param`` is an uninitialized parameter or buffer of a lazy module."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter with no shape yet; ``materialize(shape)`` turns it into a Parameter."""

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        from .._creation import empty
        return Parameter.__new__(cls, empty(0, dtype=dtype), requires_grad)

    def materialize(self, shape, device=None, dtype=None):
        from .._creation import empty
        self.data = empty(*shape, dtype=dtype or self.dtype)
        self.__class__ = self.cls_to_become

    def __deepcopy__(self, memo):
        return memo.setdefault(id(self), self.__class__(self.requires_grad))

    def __repr__(self):
        return "<UninitializedParameter>"


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer with no shape yet; ``materialize(shape)`` turns it into a plain Tensor."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        from .._creation import empty
        t = cls._make(empty(0, dtype=dtype)._data)
        if requires_grad:
            t.requires_grad_(True)
        return t

    def materialize(self, shape, device=None, dtype=None):
        from .._creation import empty
        self.data = empty(*shape, dtype=dtype or self.dtype)
        self.__class__ = self.cls_to_become

    def __deepcopy__(self, memo):
        raise uninitialized_use_error(self, Tensor.__deepcopy__)

    def __repr__(self):
        return "<UninitializedBuffer>"
