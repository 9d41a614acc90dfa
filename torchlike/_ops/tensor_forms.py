"""Top-level function forms torch gives some Tensor methods and constructors (``torch.detach``,
``torch.fill``, ``torch.as_strided_scatter``, ``torch.empty_strided``, ``torch.frombuffer``,
``torch.set_default_tensor_type``) and the recurrent cells (``torch.lstm_cell`` ...)."""
from __future__ import annotations

from .. import _dtype as D
from ._surface import method, methods, public

__all__ = ["detach", "fill", "as_strided_scatter", "empty_strided", "empty_permuted",
           "frombuffer", "set_default_tensor_type", "renorm", "rnn_tanh_cell", "rnn_relu_cell",
           "lstm_cell", "gru_cell"]


def detach(input):
    return input.detach()


def fill(input, value):
    """A copy of ``input`` with every element ``value`` (the out-of-place ``fill_``)."""
    return input.clone().fill_(value) if not input.requires_grad else \
        input * 0 + value


@public(method=True)
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """``input`` with ``src`` written where ``input.as_strided(size, stride, offset)`` reads."""
    out = input.clone()
    out.as_strided(size, stride, storage_offset).copy_(src)
    return out


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """``empty(size)`` reporting ``stride`` (its layout, when non-overlapping and dense: the
    values of torchlike's tensors are row-major arrays, their strides metadata; DIFFERENCES.md:
    strides)."""
    from .._creation import empty
    from .._strides import is_non_overlapping_and_dense, set_layout
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality "
                           f"of strides ({len(stride)})")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    t = empty(*size, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad,
              pin_memory=pin_memory)
    if is_non_overlapping_and_dense(size, stride):
        set_layout(t, stride)
    return t


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """``empty(size)`` laid out in memory in ``physical_layout``'s order of dims (outermost
    first)."""
    size, n = tuple(size), len(size)
    if len(physical_layout) != n:
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {n} is not equal to "
                           f"len(physical_layout) = {len(physical_layout)}")
    seen = set()
    for i, d in enumerate(physical_layout):
        if not 0 <= d < n:
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {n - 1}, "
                               f"but got {d} at index {i}).  NB: negative dims not currently "
                               f"supported; file an issue if you want it.")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    stride, acc = [0] * len(size), 1
    for d in reversed(physical_layout):
        stride[d] = acc
        acc *= max(size[d], 1)
    return empty_strided(size, stride, dtype=dtype, layout=layout, device=device,
                         requires_grad=requires_grad, pin_memory=pin_memory)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A tensor of ``buffer``'s bytes read as ``dtype`` (a copy: DIFFERENCES.md)."""
    import numpy as np
    from .._creation import tensor
    dt = D.to_dtype(dtype)
    n = len(memoryview(buffer).cast("B"))
    # torch's checks (tensor_new.cpp), in its order
    if n == 0 or count == 0:
        raise ValueError(f"both buffer length ({n}) and count ({count}) must not be 0")
    if offset < 0 or offset >= n:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({n} bytes) minus 1")
    size = dt.itemsize
    if count < 0 and (n - offset) % size:
        raise ValueError(f"buffer length ({n - offset} bytes) after offset ({offset} bytes) "
                         f"must be a multiple of element size ({size})")
    actual = (n - offset) // size if count < 0 else count
    if offset + actual * size > n:
        raise ValueError(f"requested buffer length ({actual} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({n} bytes)")
    arr = np.frombuffer(buffer, dtype=dt.np, count=actual, offset=offset)
    return tensor(arr, dtype=dt, requires_grad=requires_grad)


def set_default_tensor_type(t):
    """The deprecated ``torch.set_default_tensor_type(torch.DoubleTensor)``: sets the default
    floating dtype (CUDA types raise: no CUDA tensor types here)."""
    import warnings
    from .factorizations import _WARNED, triggered
    from .typeinfo import _TENSOR_TYPES
    if "set_default_tensor_type" not in _WARNED:       # (torch's TORCH_WARN_ONCE)
        _WARNED.add("set_default_tensor_type")
        warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                      "use torch.set_default_dtype() and torch.set_default_device() as "
                      "alternatives." + triggered("torch/csrc/tensor/python_tensor.cpp:434"),
                      UserWarning)       # (torch's is Python: its own line)
    name = t if isinstance(t, str) else "torch." + t.__name__
    if name.startswith("torch.cuda."):
        raise RuntimeError("torchlike: CUDA tensor types are not available")
    d = _TENSOR_TYPES.get(name[6:])
    if d is None:
        raise TypeError(f"invalid type: '{name}'")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    D.set_default_dtype(d)


@public(method=True, inplace=True, out=True)
def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` with ``p``-norm over ``maxnorm`` rescaled to ``maxnorm``."""
    from .. import linalg
    from .._tensor import _wrap_dim
    if maxnorm < 0:         # (torch's checks in its order; the number as C++ prints it)
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {float(maxnorm):g}")
    if input.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} "
                           f"dimensions")
    d = _wrap_dim(dim, input.dim())
    dims = [k for k in range(input.dim()) if k != d]
    norms = linalg.vector_norm(input, p, dim=dims, keepdim=True)
    return input * _renorm_factor(norms, maxnorm)


def _renorm_factor(norms, maxnorm):
    from .binary_math import where
    return where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.)     # (a NaN norm: kept)


# ------------------------------------------------------------------ recurrent cells

def _linear(x, w, b):
    y = x.matmul(w.t())
    return y if b is None else y + b


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return (_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh)).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return (_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh)).relu()


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    h, c = hx
    gates = _linear(input, w_ih, b_ih) + _linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c2 = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c2.tanh(), c2


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    gi = _linear(input, w_ih, b_ih)
    gh = _linear(hx, w_hh, b_hh)
    ir, iz, in_ = gi.chunk(3, -1)
    hr, hz, hn = gh.chunk(3, -1)
    r = (ir + hr).sigmoid()
    z = (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    return (1 - z) * n + z * hx


# ------------------------------------------------------------------ torch._foreach_*
# The list forms of element-wise ops (EMA updates: ``_foreach_mul_(ema, d)``,
# ``_foreach_add_(ema, params, alpha=1 - d)``, ``_foreach_lerp_``; gradient norms:
# ``_foreach_norm``): each element is the op on the tensors at that position, so values,
# dtypes, promotion errors and autograd are the per-tensor op's. The in-place forms return
# ``self`` (the list or tuple given), the out-of-place ones a tuple.

def _foreach_type_name(x):
    from .._tensor import Tensor
    if isinstance(x, Tensor):
        return "Tensor"
    if isinstance(x, (list, tuple)):
        return type(x).__name__ if not x else \
            f"{type(x).__name__} of [{', '.join(_foreach_type_name(e) for e in x)}]"
    return type(x).__name__


def _foreach_invalid(name, args, overloads, kwargs=None, mismatched=None):
    """torch's refusal of arguments no overload takes: with ``mismatched`` (the overloads in
    the order torch tries them for arguments of the right count), each with its "didn't match"
    line marking every argument, as torch's does."""
    got = ", ".join([type(a).__name__ if isinstance(a, (list, tuple)) else _foreach_type_name(a)
                     for a in args] + [f"{k}={type(v).__name__}" for k, v in
                                       (kwargs or {}).items()])
    if mismatched and not kwargs:
        marks = ", ".join(f"!{_foreach_type_name(a)}!" for a in args)
        # (torch's signatures with keyword-only parameters get no "didn't match" line)
        lines = "\n".join(f" * ({o})" + ("" if "*," in o else
                                           f"\n      didn't match because some of the arguments "
                                           f"have invalid types: ({marks})")
                          for o in mismatched)
    else:
        lines = "\n".join(f" * ({o})" for o in overloads)
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{lines}\n")


def _foreach_list(name, arg, position, overloads, args, mismatched=None):
    from .._tensor import Tensor
    if not isinstance(arg, (list, tuple)):
        if len(overloads) == 1:      # (one signature: torch names the argument)
            pname = overloads[0].split(", ")[position].split(" ")[-1]
            raise TypeError(f"{name}(): argument '{pname}' (position {position + 1}) must be "
                            f"tuple of Tensors, not {_foreach_type_name(arg)}")
        raise _foreach_invalid(name, args, overloads, mismatched=mismatched)
    for i, t in enumerate(arg):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument {position}, but got "
                            f"{type(t).__name__}")
    return list(arg)


def _foreach_nonempty(tensors):
    if not tensors:
        raise RuntimeError("Tensor list must have at least one tensor.")


def _foreach_same_len(a, b):
    if len(a) != len(b):
        raise RuntimeError(f"Tensor lists must have the same number of tensors, got {len(a)} "
                           f"and {len(b)}")


def _foreach_scalar_tensor(t):
    if t.ndim != 0:
        raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {t.ndim} dimensions "
                           f"and {t.numel()} elements.")
    return t


def _is_number(x):
    import numbers
    return isinstance(x, numbers.Number) and not isinstance(x, bool) or isinstance(x, bool)


def _foreach_others(name, self, other, n, overloads, args, allow_tensor=True, mismatched=None):
    """The per-tensor second operands: a number, a list of numbers, a 0-dim tensor or a list
    of tensors."""
    from .._tensor import Tensor
    if isinstance(other, Tensor) and allow_tensor:
        return [_foreach_scalar_tensor(other)] * n, "tensor"
    if _is_number(other):
        return [other] * n, "scalar"
    if isinstance(other, (list, tuple)):
        if other and all(isinstance(o, Tensor) for o in other):
            _foreach_same_len(self, other)
            return list(other), "tensors"
        if all(_is_number(o) for o in other):
            if len(other) != n:
                raise RuntimeError("Tensor list must have same number of elements as scalar "
                                   "list.")
            return list(other), "scalars"
        if not other:
            _foreach_same_len(self, other)
    raise _foreach_invalid(name, args, overloads, mismatched=mismatched)


# torch's grad_fn names of the out-of-place forms, by the form of the second operand (its
# in-place forms record the per-tensor op's node, as here)
_FOREACH_GRAD = {
    "add": {"scalar": "1Scalar", "scalars": "1ScalarList", "tensor": "0Tensor",
            "tensors": "0List"},
    "sub": {"scalar": "1Scalar", "scalars": "1ScalarList", "tensors": "0List"},
    "mul": {"scalar": "1Scalar", "scalars": "1ScalarList", "tensor": "0Tensor",
            "tensors": "0List"},
    "div": {"scalar": "1Scalar", "scalars": "1ScalarList", "tensor": "0Tensor", "tensors": "0"},
    "maximum": {"scalar": "0", "scalars": "1", "tensors": "0List"},
    "minimum": {"scalar": "0", "scalars": "1", "tensors": "0List"},
    "clamp_min": {"scalar": "0Scalar", "scalars": "0ScalarList", "tensors": "1List"},
    "clamp_max": {"scalar": "0Scalar", "scalars": "0ScalarList", "tensors": "1List"},
    "pow": {"scalar": "0Scalar", "scalars": "1", "tensors": "0"},
    "lerp": {"scalar": "0Scalar", "scalars": "0ScalarList", "tensors": "1List"},
    "addcmul": {"scalar": "0Scalar", "scalars": "0ScalarList"},
    "addcdiv": {"scalar": "0Scalar", "scalars": "0ScalarList"},
}


def _foreach_camel(op):
    """torch's node name of an op: clamp_min -> ClampMin, log1p -> Log1P."""
    import re
    return re.sub(r"(?<=\d)[a-z]", lambda g: g.group(0).upper(),
                  "".join(w.capitalize() for w in op.split("_")))


def _foreach_named(outs, op, suffix="0"):
    """Name the nodes of the out-of-place forms' results as torch's (``ForeachMulBackward1Scalar``:
    torch's foreach nodes are ``CppFunction`` objects)."""
    if suffix is None:
        return outs
    from ..autograd.graph import node_class
    name = f"Foreach{_foreach_camel(op)}Backward{suffix}"
    cls = node_class(name if name in _FOREACH_NODE_CLASSES else "CppFunction")
    for o in outs:
        g = o.grad_fn
        if g is not None:
            g._name = name
            g.__class__ = cls
    return outs


# the foreach nodes torch gives a class of their own (the others are CppFunction objects)
_FOREACH_NODE_CLASSES = frozenset({
    "ForeachDivBackward0", "ForeachMaximumBackward0", "ForeachMaximumBackward1",
    "ForeachMinimumBackward0", "ForeachMinimumBackward1", "ForeachPowBackward0",
    "ForeachPowBackward1", "ForeachPowBackward2", "ForeachNormBackward0",
    "ForeachMmBackward0"})


def _inplace_named(tensors, name):
    """torch's in-place foreach forms by a number record the op's Scalar node
    (``AddBackward1``), where the method by a number records ``AddBackward0``."""
    from ..autograd.graph import node_class
    for t in tensors:
        g = t.grad_fn
        if g is not None and g.name() == name.replace("Backward1", "Backward0"):
            g._name = name
            g.__class__ = node_class(name)


def _no_derivative_fn(x, tie, message):
    """``x``; ``tie`` (the tensor written in place) makes the result need grad as it does."""
    import jax

    @jax.custom_vjp
    def f(a, b):
        return a

    def bwd(_res, _g):
        raise RuntimeError(message)

    f.defvjp(lambda a, b: (f(a, b), None), bwd)
    return f(x, tie)


def _declare_no_derivative():
    from .._registry import defop
    return defop("foreach_no_derivative", saves=False, grad_name="NotImplemented")(
        _no_derivative_fn)


_NO_DERIVATIVE = _declare_no_derivative()


def _needs_grad(*tensors):
    from ..autograd.grad_mode import is_grad_enabled
    from .._tensor import Tensor
    return is_grad_enabled() and any(isinstance(t, Tensor) and t.requires_grad
                                     for t in tensors)


def _no_derivative(value, name, tie=None):
    """``value`` recorded as torch's forms without a derivative record it (a
    ``NotImplemented`` node whose backward raises torch's error naming ``name``)."""
    from .._registry import apply
    return apply(_NO_DERIVATIVE, value, value if tie is None else tie,
                 message=f"derivative for {name} is not implemented")


def _no_derivative_inplace(t, value, name):
    from .._storage import check_inplace, commit_inplace
    from ..autograd.grad_mode import check_inference_inplace
    check_inference_inplace(t)
    check_inplace(t)
    return commit_inplace(t, _no_derivative(value, name, t))


def _foreach_binary(op, has_alpha):
    # add, mul and div take a 0-dim Tensor (add by it only with ``alpha``: a 0-dim tensor alone
    # is a Number to it); for the others a 0-dim tensor is a Number
    tensor_overload = op in ("add", "mul", "div")
    alpha = ", *, Number alpha = 1" if has_alpha else ""
    scalar, scalars, other = (("Number exponent", "tuple of Scalars exponent",
                               "tuple of Tensors exponent") if op == "pow" else
                              ("Number scalar", "tuple of Scalars scalars",
                               "tuple of Tensors other"))
    overloads = [f"tuple of Tensors self, {scalar}", f"tuple of Tensors self, {scalars}",
                 *(["tuple of Tensors self, Tensor other" + (alpha if op == "add" else "")]
                   if tensor_overload else []),
                 f"tuple of Tensors self, {other}" + alpha]
    # the order torch tries them in for arguments of the right count
    mismatched = overloads[1:] + overloads[:1] if op in ("mul", "div") else list(overloads)

    def signatures(inplace):
        if op == "pow" and not inplace:
            return ["Number self, tuple of Tensors exponent", *overloads]
        return overloads

    def signatures_tried(inplace):
        if op == "pow" and not inplace:
            return ["Number self, tuple of Tensors exponent", *mismatched]
        return mismatched

    def make(inplace):
        name = f"_foreach_{op}" + ("_" if inplace else "")

        def fn(self, other, **kw):
            from .._tensor import Tensor
            args = (self, other)
            if set(kw) - ({"alpha"} if has_alpha else set()):
                raise _foreach_invalid(name, args, overloads, kw)
            overloads, mismatched = signatures(inplace), signatures_tried(inplace)
            tensors = _foreach_list(name, self, 0, overloads, args,
                                    None if kw else mismatched)
            if "alpha" in kw and not (op == "add" and not isinstance(other, (list, tuple))):
                if not isinstance(other, (list, tuple)):   # (only the Tensor lists take alpha)
                    raise TypeError(f"{name}(): argument 'other' (position 2) must be tuple of "
                                    f"Tensors, not {_foreach_type_name(other)}")
                _foreach_list(name, other, 1, overloads, args)
            _foreach_nonempty(tensors)
            if isinstance(other, Tensor) and (not tensor_overload or (
                    op == "add" and "alpha" not in kw and other.ndim == 0
                    and not other.requires_grad)):
                # a 0-dim tensor that needs no grad is a Number; other tensors match no
                # overload of the ops without a Tensor one
                if other.ndim or other.requires_grad:
                    raise _foreach_invalid(name, args, overloads, mismatched=mismatched)
                other = other.item()
            others, kind = _foreach_others(name, tensors, other, len(tensors), overloads, args,
                                           allow_tensor=tensor_overload, mismatched=mismatched)
            if "alpha" in kw and kind in ("scalar", "scalars"):
                raise _foreach_invalid(name, args, overloads, kw)
            method = op
            if kind in ("scalar", "scalars") and op in ("maximum", "minimum"):
                method = "clamp_min" if op == "maximum" else "clamp_max"   # (Scalar forms)
            if inplace and method in ("clamp_min", "clamp_max") and op in ("maximum",
                                                                           "minimum"):
                # (torch records no derivative for these)
                outs = [_no_derivative_inplace(t, getattr(t, method)(o), name)
                        if _needs_grad(t) else getattr(t, method + "_")(o)
                        for t, o in zip(tensors, others)]
            elif inplace and method in ("maximum", "minimum"):   # (no Tensor.maximum_)
                from .._storage import inplace_of
                from . import binary_math
                f = inplace_of(getattr(binary_math, method), method)
                outs = [f(t, o) for t, o in zip(tensors, others)]
            else:
                outs = [getattr(t, method + ("_" if inplace else ""))(o, **kw)
                        for t, o in zip(tensors, others)]
                if inplace and kind in ("scalar", "scalars") and op in ("add", "sub", "mul",
                                                                         "div"):
                    _inplace_named(tensors, f"{_foreach_camel(op)}Backward1")
            return self if inplace else _foreach_named(tuple(outs), op, _FOREACH_GRAD[op][kind])
        fn.__name__ = fn.__qualname__ = name
        return fn
    return make(False), make(True)


def _foreach_unary(op):
    def make(inplace):
        name = f"_foreach_{op}" + ("_" if inplace else "")
        overloads = ["tuple of Tensors self"]

        def fn(self):
            tensors = _foreach_list(name, self, 0, overloads, (self,))
            _foreach_nonempty(tensors)
            outs = [getattr(t, op + ("_" if inplace else ""))() for t in tensors]
            return self if inplace else _foreach_named(tuple(outs), op)
        fn.__name__ = fn.__qualname__ = name
        return fn
    return make(False), make(True)


def _foreach_pointwise(op):
    """addcmul / addcdiv: ``self[i] + value[i] * t1[i] (* or /) t2[i]``."""
    overloads = ["tuple of Tensors self, tuple of Tensors tensor1, tuple of Tensors tensor2, "
                 "tuple of Scalars scalars",
                 "tuple of Tensors self, tuple of Tensors tensor1, tuple of Tensors tensor2, "
                 "Tensor scalars",
                 "tuple of Tensors self, tuple of Tensors tensor1, tuple of Tensors tensor2, "
                 "Number value = 1"]

    def make(inplace):
        name = f"_foreach_{op}" + ("_" if inplace else "")

        def fn(self, tensor1, tensor2, value=1, scalars=None):
            from .._tensor import Tensor
            if scalars is not None:
                value = scalars
            args = (self, tensor1, tensor2, value)
            tensors = _foreach_list(name, self, 0, overloads, args)
            t1 = _foreach_list(name, tensor1, 1, overloads, args)
            t2 = _foreach_list(name, tensor2, 2, overloads, args)
            _foreach_nonempty(tensors)
            _foreach_same_len(tensors, t1)
            _foreach_same_len(tensors, t2)
            n = len(tensors)
            if isinstance(value, Tensor):
                if value.ndim != 1 or value.numel() != n:
                    raise RuntimeError(f"Expected length of scalars to match input of length "
                                       f"{n} but got {value.numel()} instead.")
                values, kind = [v.item() for v in value.unbind(0)], "tensor"
            elif _is_number(value):
                values, kind = [value] * n, "scalar"
            elif isinstance(value, (list, tuple)) and all(_is_number(v) for v in value):
                if len(value) != n:
                    raise RuntimeError("Tensor list must have same number of elements as "
                                       "scalar list.")
                values, kind = list(value), "scalars"
            else:
                raise _foreach_invalid(name, args, overloads, mismatched=overloads)
            if kind == "tensor" and _needs_grad(*tensors, *t1, *t2):
                # (torch records no derivative for the Tensor-scalars forms)
                nd = name if inplace else f"aten::{name}"
                outs = [_no_derivative_inplace(t, getattr(t, op)(a, b, value=v), nd) if inplace
                        else _no_derivative(getattr(t, op)(a, b, value=v), nd)
                        for t, a, b, v in zip(tensors, t1, t2, values)]
            else:
                outs = [getattr(t, op + ("_" if inplace else ""))(a, b, value=v)
                        for t, a, b, v in zip(tensors, t1, t2, values)]
            return self if inplace else _foreach_named(tuple(outs), op,
                                                       _FOREACH_GRAD[op].get(kind))
        fn.__name__ = fn.__qualname__ = name
        return fn
    return make(False), make(True)


def _foreach_lerp_forms():
    overloads = ["tuple of Tensors self, tuple of Tensors tensors1, tuple of Tensors weights",
                 "tuple of Tensors self, tuple of Tensors tensors1, Tensor weight",
                 "tuple of Tensors self, tuple of Tensors tensors1, Number weight",
                 "tuple of Tensors self, tuple of Tensors tensors1, tuple of Scalars weight"]

    def make(inplace):
        name = "_foreach_lerp" + ("_" if inplace else "")

        def fn(self, tensors1, weight):
            args = (self, tensors1, weight)
            tensors = _foreach_list(name, self, 0, overloads, args)
            ends = _foreach_list(name, tensors1, 1, overloads, args)
            _foreach_nonempty(tensors)
            _foreach_same_len(tensors, ends)
            from .._tensor import Tensor
            mismatched = [overloads[2], overloads[3], overloads[0]]
            if isinstance(weight, Tensor):      # (a 0-dim one needing no grad is a Number)
                if weight.ndim or weight.requires_grad:
                    raise _foreach_invalid(name, args, overloads, mismatched=mismatched)
                weight = weight.item()
            weights, kind = _foreach_others(name, tensors, weight, len(tensors), overloads, args,
                                         mismatched=[overloads[2], overloads[3], overloads[0]])
            outs = [getattr(t, "lerp_" if inplace else "lerp")(e, w)
                    for t, e, w in zip(tensors, ends, weights)]
            return self if inplace else _foreach_named(tuple(outs), "lerp",
                                                       _FOREACH_GRAD["lerp"][kind])
        fn.__name__ = fn.__qualname__ = name
        return fn
    return make(False), make(True)


def _foreach_ord_args(name, self, ord):
    """The tensors of ``_foreach_norm``/``_foreach_powsum(self, ord)``, their arguments checked
    as torch's one signature checks them."""
    import numbers
    overloads = ["tuple of Tensors self, Number ord = 2, *, ScalarType? dtype = None"]
    tensors = _foreach_list(name, self, 0, overloads, (self,))
    if not isinstance(ord, numbers.Number):
        raise TypeError(f"{name}(): argument 'ord' (position 2) must be Number, not "
                        f"{type(ord).__name__}")
    _foreach_nonempty(tensors)
    return tensors


def _foreach_norm(self, ord=2, dtype=None):
    tensors = _foreach_ord_args("_foreach_norm", self, ord)
    from .. import linalg
    norms = tuple(linalg.vector_norm(t, ord, dtype=dtype) for t in tensors)
    return _foreach_named(norms, "norm")


def _foreach_powsum(self, ord=2, dtype=None):
    """``sum(|t| ** ord)`` of each tensor (its dtype's, or ``dtype``'s); torch records no
    derivative for it."""
    tensors = _foreach_ord_args("_foreach_powsum", self, ord)
    outs = []
    for t in tensors:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            # (torch sums integer and bool tensors as int64, which has no kernel)
            raise NotImplementedError("\"powsum_cpu\" not implemented for 'Long'")
        x = t if dtype is None else t.to(dtype)
        v = x.abs().pow(ord).sum()
        outs.append(_no_derivative(v, "aten::_foreach_powsum") if _needs_grad(t) else v)
    return tuple(outs)


def _foreach_mm(self, mat2):
    overloads = ["tuple of Tensors self, tuple of Tensors mat2"]
    tensors = _foreach_list("_foreach_mm", self, 0, overloads, (self, mat2))
    others = _foreach_list("_foreach_mm", mat2, 1, overloads, (self, mat2))
    if not tensors or not others:
        raise RuntimeError("_foreach_mm requires non-empty tensor lists")
    if len(tensors) != len(others):
        raise RuntimeError("_foreach_mm: self and mat2 must have the same number of tensors")
    return _foreach_named(tuple(a.mm(b) for a, b in zip(tensors, others)), "mm")


def _foreach_max(self):
    tensors = _foreach_list("_foreach_max", self, 0, ["tuple of Tensors self"], (self,))
    _foreach_nonempty(tensors)
    return _foreach_named(tuple(t.max() for t in tensors), "max", "1")


def _foreach_clone(self):
    tensors = _foreach_list("_foreach_clone", self, 0, ["tuple of Tensors self"], (self,))
    _foreach_nonempty(tensors)
    return _foreach_named(tuple(t.clone() for t in tensors), "clone")


def _foreach_copy_(self, src, non_blocking=False):
    overloads = ["tuple of Tensors self, tuple of Tensors src, bool non_blocking = False"]
    tensors = _foreach_list("_foreach_copy_", self, 0, overloads, (self, src))
    srcs = _foreach_list("_foreach_copy_", src, 1, overloads, (self, src))
    _foreach_nonempty(tensors)
    _foreach_same_len(tensors, srcs)
    for t, s in zip(tensors, srcs):
        if _needs_grad(t, s):       # (torch records no derivative for _foreach_copy_)
            from .view import broadcast_to
            t.detach().clone().copy_(s.detach())    # (copy_'s checks and errors)
            _no_derivative_inplace(t, broadcast_to(s.to(t.dtype), tuple(t.shape)),
                                   "_foreach_copy_")
        else:
            t.copy_(s, non_blocking)
    return self


def _foreach_zero_(self):
    tensors = _foreach_list("_foreach_zero_", self, 0, ["tuple of Tensors self"], (self,))
    _foreach_nonempty(tensors)
    for t in tensors:
        t.zero_()
    return self


def _foreach_pow(self, exponent):
    """``_foreach_pow(tensors, e)`` and torch's ``_foreach_pow(scalar, tensors)``."""
    from .._tensor import Tensor
    if _is_number(self) and isinstance(exponent, (list, tuple)):
        exps = _foreach_list("_foreach_pow", exponent, 1, ["Number self, tuple of Tensors "
                                                            "exponent"], (self, exponent))
        _foreach_nonempty(exps)
        from .arithmetic import pow as _pow
        return _foreach_named(tuple(_pow(self, e) for e in exps), "pow", "2")
    return _foreach_pow_list(self, exponent)


_foreach_pow_list, _foreach_pow_ = _foreach_binary("pow", False)
_foreach_pow_list.__name__ = "_foreach_pow"


def _declare_foreach():
    g = globals()
    names = ["_foreach_norm", "_foreach_powsum", "_foreach_mm", "_foreach_max", "_foreach_clone", "_foreach_copy_",
             "_foreach_zero_", "_foreach_pow", "_foreach_pow_"]
    for op, alpha in (("add", True), ("sub", True), ("mul", False), ("div", False),
                      ("maximum", False), ("minimum", False), ("clamp_min", False),
                      ("clamp_max", False)):
        g[f"_foreach_{op}"], g[f"_foreach_{op}_"] = _foreach_binary(op, alpha)
        names += [f"_foreach_{op}", f"_foreach_{op}_"]
    for op in ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp",
               "expm1", "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg",
               "reciprocal", "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan",
               "tanh", "trunc"):
        g[f"_foreach_{op}"], g[f"_foreach_{op}_"] = _foreach_unary(op)
        names += [f"_foreach_{op}", f"_foreach_{op}_"]
    for op in ("addcmul", "addcdiv"):
        g[f"_foreach_{op}"], g[f"_foreach_{op}_"] = _foreach_pointwise(op)
        names += [f"_foreach_{op}", f"_foreach_{op}_"]
    g["_foreach_lerp"], g["_foreach_lerp_"] = _foreach_lerp_forms()
    names += ["_foreach_lerp", "_foreach_lerp_"]
    __all__.extend(names)


_declare_foreach()


# ------------------------------------------------------------------ GradScaler's kernels
# torch._amp_foreach_non_finite_check_and_unscale_ / torch._amp_update_scale_, called by
# hand-written loss scalers: written with tensor ops (no host read of found_inf)

def _amp_check(t, what):
    if t.numel() != 1:
        raise RuntimeError(f"{what} must be a 1-element tensor.")


def _amp_foreach_non_finite_check_and_unscale_(self, found_inf, inv_scale):
    """Multiply each tensor by ``inv_scale`` and set ``found_inf`` to 1 where one holds an inf
    or NaN."""
    from .._tensor import Tensor
    from ..autograd.grad_mode import no_grad
    tensors = _foreach_list("_amp_foreach_non_finite_check_and_unscale_", self, 0,
                            ["tuple of Tensors self, Tensor found_inf, Tensor inv_scale"],
                            (self, found_inf, inv_scale))
    _amp_check(inv_scale, "inv_scale")
    _amp_check(found_inf, "found_inf")
    if inv_scale.dtype is not D.float32:
        raise RuntimeError("inv_scale must be a float tensor.")
    if found_inf.dtype is not D.float32:
        raise RuntimeError("found_inf must be a float tensor.")
    if not tensors:
        return None
    for t in tensors:
        if not t.dtype.is_floating_point:
            raise NotImplementedError(
                f"\"_amp_foreach_non_finite_check_and_unscale_cpu\" not implemented for "
                f"'{D.LEGACY_NAMES.get(str(t.dtype).split('.')[-1])}'")
    with no_grad():
        bad = None
        for t in tensors:
            b = t.isfinite().logical_not().any()
            bad = b if bad is None else bad.logical_or(b)
            t.mul_(inv_scale.to(t.dtype) if isinstance(inv_scale, Tensor) else inv_scale)
        found_inf.copy_(found_inf.where(bad.logical_not(), 1.0))
    return None


def _amp_update_scale_(self, growth_tracker, found_inf, scale_growth_factor,
                       scale_backoff_factor, growth_interval):
    """torch's dynamic loss-scale update: back off (and restart the count) after an inf,
    grow after ``growth_interval`` clean steps (where the grown scale is finite); returns
    ``self`` (the scale)."""
    from ..autograd.grad_mode import no_grad
    _amp_check(self, "current_scale")
    _amp_check(growth_tracker, "growth_tracker")
    _amp_check(found_inf, "found_inf")
    if self.dtype is not D.float32:
        raise RuntimeError("current_scale must be a float tensor.")
    if growth_tracker.dtype is not D.int32:
        raise RuntimeError("growth_tracker must be an int tensor.")
    if found_inf.dtype is not D.float32:
        raise RuntimeError("found_inf must be a float tensor.")
    with no_grad():
        inf = found_inf != 0
        succ = growth_tracker + 1
        grow = succ == growth_interval
        grown = self * scale_growth_factor
        grown = grown.where(grown.isfinite(), self)
        scale = (self * scale_backoff_factor).where(inf, grown.where(grow, self))
        count = succ.where(inf.logical_not().logical_and(grow.logical_not()), 0)
        self.copy_(scale)
        growth_tracker.copy_(count)
    return self


__all__.extend(["_amp_foreach_non_finite_check_and_unscale_", "_amp_update_scale_"])
