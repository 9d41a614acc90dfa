"""torchlike.nn.functional: each op declared once (``defop``) as a pure jax function.

Layers in ``torchlike.nn.modules`` call these functions; gradients are jax's VJPs of the same
functions, with torch's conventions where they differ at kinks (``where`` instead of
``maximum``/``clip`` so that the gradient at a boundary is torch's).
"""
from __future__ import annotations

import functools
import itertools
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .. import _fused, _random, _tiers
from ..amp.autocast_mode import cast_composite as _cast_composite   # (autocast casts before
                                                                   # a function's dtype checks)
from ..autograd import grad_mode as _gm
from .._registry import apply, broadcast_error, defop
from .._ops import products as _products
from .._ops.view import _cpp_type, _reshape_copy, _view
from .._storage import check_inplace, commit_inplace
from .._tensor import Tensor

__all__ = [
    "linear", "bilinear", "relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "prelu",
    "rrelu", "elu", "elu_", "selu", "selu_", "celu", "celu_", "gelu", "silu", "mish",
    "sigmoid", "tanh", "hardtanh", "hardtanh_", "hardsigmoid", "hardswish", "softplus",
    "softsign", "softmax", "log_softmax", "softmin", "glu", "threshold", "threshold_",
    "tanhshrink", "logsigmoid", "hardshrink", "softshrink", "gumbel_softmax",
    "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout",
    "embedding", "embedding_bag", "one_hot", "normalize", "cosine_similarity", "pairwise_distance",
    "layer_norm", "rms_norm", "group_norm", "batch_norm", "instance_norm",
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy",
    "linear_cross_entropy", "nll_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "cosine_embedding_loss", "margin_ranking_loss", "triplet_margin_loss", "soft_margin_loss",
    "poisson_nll_loss", "gaussian_nll_loss", "hinge_embedding_loss",
    "multilabel_soft_margin_loss", "multi_margin_loss",
    "ctc_loss", "scaled_dot_product_attention", "pad", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
    "conv_transpose2d", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d",
    "avg_pool3d", "adaptive_avg_pool3d",
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d", "adaptive_max_pool2d",
    "pixel_shuffle", "pixel_unshuffle", "interpolate", "unfold", "fold",
]


# float32 matmuls at full precision, as torch's defaults (no TF32 on GPUs)
_HI = jax.lax.Precision.HIGHEST


def _stacklevel(level, checks=True):
    """The ``stacklevel`` for a ``warnings.warn`` in the calling function that names the frame
    ``level`` (as torch counts it) when the public functions' ``__torch_function__`` layer
    (``overrides.overridable``) and, with ``checks``, the argument-checking wrappers
    (``_refusing``) between are not counted (without: where torch counts frames of its own
    there, as the softmax family's ``_stacklevel`` does)."""
    import sys

    from ..overrides import WRAPPER_CODE
    f, lvl, counted = sys._getframe(1), 1, 1
    while counted < level and f.f_back is not None:
        f, lvl = f.f_back, lvl + 1
        co = f.f_code
        if not (co is WRAPPER_CODE
                or (checks and co.co_name == "checked" and co.co_filename == __file__)):
            counted += 1
    return lvl


def _T(x):
    return x if isinstance(x, Tensor) else None


def _inplace(input, out):
    check_inplace(input)
    return commit_inplace(input, out)


def _tup(v, n):
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            return tuple(int(v[0]) for _ in range(n))
        return tuple(int(a) for a in v)
    return tuple(int(v) for _ in range(n))


def _int_like(v):
    """Whether torch's argument parser takes ``v`` as an int: a Python or numpy integer (not a
    bool) or a 0-dim integer Tensor."""
    if isinstance(v, Tensor):
        return v.ndim == 0 and not (v.dtype.is_floating_point or v.dtype.is_complex
                                    or v.dtype is D.bool)
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _wrapped(dim, ndim):
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim


def _int_arg(fn, dim, pos=" (position 1)"):
    """``dim`` as torch's argument parser takes an int, or its TypeError."""
    if type(dim) is int:
        return dim
    if not _int_like(dim):
        from .._tensor import _type_name
        raise TypeError(f"{fn}(): argument 'dim'{pos} must be int, not {_type_name(dim)}")
    return int(dim)


def _int_dim(fn, dim, ndim, pos=" (position 1)"):
    """An int ``dim`` of ``fn`` wrapped into ``[0, max(ndim, 1))``, as torch's argument parser
    and its dim wrapping check it: a non-int is the parser's TypeError (an integer Tensor
    counts as an int), an int out of range the IndexError."""
    return _wrapped(dim if type(dim) is int else _int_arg(fn, dim, pos), ndim)


def _axes(dim, ndim):
    """A wrapped dim as the reduction axis of a jax function: none for a 0-dim array (torch
    reduces a scalar over its dim 0 or -1)."""
    return dim if ndim else ()


# ================================================================== linear

_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
              "bool": "bool"}


def _legacy(d):
    return D.legacy_name(d)


_LINEAR_DTYPES = frozenset(np.dtype(n) for n in ("float32", "float64", "float16"))


def linear(input, weight, bias=None):
    """input @ weight.T + bias, recorded as torch records it (``AddmmBackward0`` over
    ``TBackward0`` for 2-D input; views around the matmul for other ranks)."""
    if bias is not None and _gm._state.autocast is None and bias.__class__ is weight.__class__ \
            and isinstance(weight, Tensor):
        # the common case, which none of the checks below can refuse: a batch of rows, a
        # matrix and a bias of one floating dtype, sizes that match, no empty product
        d, w, b = input._d, weight._d, bias._d
        dsh, wsh = d.shape, w.shape
        if (len(dsh) >= 2 and len(wsh) == 2 and len(b.shape) == 1 and d.dtype == w.dtype
                and d.dtype == b.dtype and d.dtype in _LINEAR_DTYPES and dsh[-1] == wsh[1]
                and b.shape[0] == wsh[0] and math.prod(dsh) and wsh[0]):
            if _gm._state.grad_enabled and (input._requires_grad or weight._requires_grad
                                            or bias._requires_grad):
                y = _products.linear_graph(bias, input, weight)
                if y is not None:
                    return y
            else:
                y = _products.linear_rows(bias, input, weight)
                return y if len(dsh) == 2 else _rows_back(y, input, (*dsh[:-1], wsh[0]))
    import torchlike as tl
    # torch autocasts linear as one op: its inputs are cast before its dtype checks
    input, weight, bias = _cast_composite("linear", input, weight, bias)
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are "
                           f"{input.ndim}D and {weight.ndim}D")
    if weight.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{weight.ndim}D")
    if bias is not None and not (input.ndim == 2 or bias.ndim == 1
                                 or sum(n != 1 for n in bias.shape) == 1):
        # torch's unfused form (a bias that does not squeeze to one dim): matmul, then the
        # bias added in place into its result
        out = linear(input, weight)
        from .._registry import broadcast_error
        err = broadcast_error([tuple(out.shape), tuple(bias.shape)])
        if err:
            raise RuntimeError(err)
        shape = tuple(np.broadcast_shapes(tuple(out.shape), tuple(bias.shape)))
        if shape != tuple(out.shape):
            raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")
        return out + bias
    if bias is not None:
        # torch's addmm(bias, input's rows, weight.t()): its checks, in its order
        from types import SimpleNamespace as _NS
        rows = 1
        for n in tuple(input.shape)[:-1]:
            rows *= n
        _products._addmm_checks(bias, _NS(dtype=input.dtype, ndim=2,
                                          shape=(rows, input.shape[-1])),
                                _NS(dtype=weight.dtype, ndim=weight.ndim,
                                    shape=tuple(weight.shape)[::-1]))
    if input.ndim >= 1 and weight.ndim == 2 and input.shape[-1] != weight.shape[1]:
        rows = 1
        for n in tuple(input.shape)[:-1]:
            rows *= n
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x"
                           f"{input.shape[-1]} and {weight.shape[1]}x{weight.shape[0]})")
    if input.dtype != weight.dtype and weight.ndim == 2:   # (else matmul's own checks)
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_CPP_NAMES[input.dtype.name]} != {_CPP_NAMES[weight.dtype.name]}")
    if input.ndim == 0 or weight.ndim != 2:
        out = tl.matmul(input, weight.t())
        return out + bias if bias is not None else out
    if bias is not None and input.ndim >= 2 and not (_gm._state.grad_enabled and (
            input.requires_grad or weight.requires_grad or bias.requires_grad)):
        # nothing to record: one op (torch's 3-D result is still a view of the 2-D product)
        y = _products.linear_rows(bias, input, weight)
        return y if input.ndim == 2 else _rows_back(
            y, input, (*tuple(input.shape)[:-1], weight.shape[0]))
    wt = weight.t()
    if input.ndim == 2:
        return tl.addmm(bias, input, wt) if bias is not None else input.mm(wt)
    if input.ndim == 1:
        if bias is not None:
            return tl.addmm(bias, input.view(1, -1), wt).view(-1)
        return input.unsqueeze(0).mm(wt).squeeze_(0)       # (torch's matmul squeezes in place)
    if bias is not None and not input.is_contiguous():
        # torch: the matmul of a strided input, then the bias added in place into its result
        return linear(input, weight).add_(bias)
    lead = tuple(input.shape)[:-1]
    x2 = input.reshape(-1, input.shape[-1])
    if bias is not None:
        return tl.addmm(bias, x2, wt).view(*lead, weight.shape[0])
    # torch: a matmul, whose product is reshaped back (``_unsafe_view``: not a view)
    return apply(_reshape_copy, x2.mm(wt), shape=(*lead, weight.shape[0]))


def _rows_back(y, input, shape):
    """F.linear's product of the rows of an input of more than 2 dimensions, in its shape: a
    view for a contiguous input (torch flattens it), else not (torch's matmul and in-place
    add)."""
    if input.is_contiguous():
        # (``y`` is the product's fresh rows: the view op without its argument parsing)
        return apply(_view, y, shape=tuple(shape))
    return apply(_reshape_copy, y, shape=shape)


@defop("bilinear", promote="common", grad_name="AddBackward0")
def _bilinear(x1, x2, w, *b):
    """torch's ``_trilinear`` as bilinear calls it: per output feature ``k``, the product
    ``x1 @ w[k]`` rounded to the dtype, then each row's dot with ``x2`` rounded again; the bias
    added to that result."""
    dt = x1.dtype
    low = dt in (jnp.float16, jnp.bfloat16)
    acc = jnp.float32 if low else None
    t = jnp.einsum("...i,oij->...oj", x1, w, precision=_HI, preferred_element_type=acc)
    t = t.astype(dt)
    y = jnp.einsum("...oj,...j->...o", t, x2, precision=_HI, preferred_element_type=acc)
    if not b:
        return y.astype(dt)
    if low:     # (rounded explicitly: XLA may keep a low-precision result in float32)
        return (y.astype(dt).astype(jnp.float32) + b[0].astype(jnp.float32)).astype(dt)
    return y + b[0]


def bilinear(input1, input2, weight, bias=None):
    ts = [input1, input2, weight] + ([] if bias is None else [bias])
    if any(t.dtype != input1.dtype for t in ts):
        names = ["input1", "input2", "weight", "bias"]
        raise RuntimeError("All tensors must have the same dtype, got " + ", ".join(
            f"{n}: {_CPP_NAMES[t.dtype.name]}" for n, t in zip(names, ts)))
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and "
                           f"{input2.ndim}")
    for i, (a, b) in enumerate(zip(tuple(input1.shape)[:-1], tuple(input2.shape)[:-1])):
        if a != b:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got "
                               f"{a} and {b}")
    for k, x in ((1, input1), (2, input2)):
        if x.shape[-1] != weight.shape[k]:
            raise RuntimeError(f"bilinear(): input{k} size does not match weight size: got "
                               f"{x.shape[-1]} but expected {weight.shape[k]}")
    if bias is not None and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0]} but expected {weight.shape[0]}")
    if input1.dtype == _tl.bool:
        raise NotImplementedError('"bmm" not implemented for \'Bool\'')
    if bias is None:
        return apply(_bilinear, input1, input2, weight)
    return apply(_bilinear, input1, input2, weight, bias)


# ================================================================== activations

_HALF = (jnp.bfloat16, jnp.float16)


def _opmath(fn):
    """``fn`` computed as torch's CPU kernels compute bfloat16 and float16: in float32, with
    one rounding of the result (its reductions accumulate in float32)."""
    def f(*xs, **kw):
        low = next((x.dtype for x in xs if getattr(x, "dtype", None) in _HALF), None)
        if low is None:
            return fn(*xs, **kw)
        out = fn(*(x.astype(jnp.float32) if x.dtype in _HALF else x for x in xs), **kw)
        if isinstance(out, tuple):
            return tuple(o.astype(low) if o.dtype == jnp.float32 else o for o in out)
        return out.astype(low) if out.dtype == jnp.float32 else out
    f.__name__ = fn.__name__
    f.__doc__ = fn.__doc__
    return f


def _result_if_inplace(kw):
    """``saves`` of an activation whose in-place form (torch's ``...Backward1`` node) reads its
    result: a later write into the tensor raises at the backward, as torch's."""
    return "output" if kw.get("name", "").endswith("Backward1") else True


def _act(name, grad_name, saves=True, vjp=None):
    def deco(fn):
        return defop("nn_" + name, grad_name=grad_name, saves=saves, vjp=vjp)(fn)
    return deco


# relu, sigmoid and tanh are declared once, as top-level ops (torchlike._ops); these call
# them at call time, so the functional form, torchlike.<op> and Tensor.<op> are one op.
import torchlike as _tl  # noqa: E402  (the package is initialised before nn is imported)


def relu(input, inplace=False):
    return _tl.relu_(input) if inplace else _tl.relu(input)


def relu_(input):
    return _tl.relu_(input)


def _number(fn, *args):
    """torch's argument parser: each ``(name, value, position or None)`` must be a Number
    (a Python or numpy number, or a one-element tensor)."""
    for name, v, pos in args:
        if isinstance(v, (bool, int, float, complex, np.number)) or (
                isinstance(v, _tl.Tensor) and v.numel() == 1):
            continue
        where = f" (position {pos})" if pos else ""
        raise TypeError(f"{fn}(): argument '{name}'{where} must be Number, not "
                        f"{type(v).__name__}")


def _native_numbers(fn, params, args, kwargs):
    """The Number arguments of a native in-place activation (``F.elu_`` is torch's native
    ``elu_``): its parser names a bad argument's position only when it was given by position."""
    vals = []
    for i, (name, default) in enumerate(params):
        if i < len(args):
            v, pos = args[i], i + 2
        else:
            v, pos = kwargs.pop(name, default), None
        if name != "training":
            _number(fn, (name, v, pos))
        vals.append(v)
    if len(args) > len(params) or kwargs:
        bad = next(iter(kwargs), None)
        raise TypeError(f"{fn}() got an unexpected keyword argument '{bad}'" if bad else
                        f"{fn}() takes at most {len(params) + 1} arguments")
    return vals


def _float_kernel(kernel, input, complex_ok=False):
    """torch's CPU activation kernels dispatch on floating types only: an integer, bool (or,
    for most, complex) input raises their NotImplementedError (instead of computing in a
    float type)."""
    if not (input.dtype.is_floating_point or (complex_ok and input.dtype.is_complex)):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_legacy(input.dtype)}\'')


@_act("hardtanh", "HardtanhBackward0")
def _hardtanh(x, min_val, max_val, negative_zero=()):
    # (a bound of -0.0 is named in ``negative_zero``: the jit caches' static arguments compare
    # -0.0 equal to 0.0, and torch's result keeps the bound's sign)
    if "min" in negative_zero:
        min_val = -0.0
    if "max" in negative_zero:
        max_val = -0.0

    @jax.custom_jvp
    def f(x):
        # torch's clamp, min(max(x, min_val), max_val): a bound replaces x only where x is
        # strictly beyond it (a -0.0 stays -0.0 at a bound of 0, NaN stays NaN); max_val wins
        # where min_val > max_val
        v = jnp.where(x < min_val, jnp.asarray(min_val, x.dtype), x)
        return jnp.where(v > max_val, jnp.asarray(max_val, x.dtype), v)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        # hardtanh_backward: 0 at and beyond the bounds
        return f(x), jnp.where((x <= min_val) | (x >= max_val), jnp.zeros_like(t), t)
    return f(x)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _hardtanh_op(input, min_val, max_val, inplace)


def _hardtanh_op(input, min_val, max_val, inplace):
    _number("hardtanh_" if inplace else "hardtanh", ("min_val", min_val, 2),
            ("max_val", max_val, 3))
    if input.dtype is D.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input.dtype.is_complex:
        raise NotImplementedError("clamp is not supported for complex types")
    if input.dtype is D.uint8 and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    lo, hi = float(min_val), float(max_val)
    signs = {}
    if (lo == 0 and math.copysign(1, lo) < 0) or (hi == 0 and math.copysign(1, hi) < 0):
        signs["negative_zero"] = tuple(n for n, v in (("min", lo), ("max", hi))
                                       if v == 0 and math.copysign(1, v) < 0)
    out = apply(_hardtanh, input, min_val=lo, max_val=hi, **signs)
    return _inplace(input, out) if inplace else out


def hardtanh_(input, *args, **kwargs):
    # (torch's F.hardtanh_ is the native op: no min_val > max_val check)
    min_val, max_val = _native_numbers("hardtanh_", [("min_val", -1.0), ("max_val", 1.0)],
                                       args, kwargs)
    return _hardtanh_op(input, min_val, max_val, True)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


@_act("leaky_relu", lambda kw: kw.get("name", "LeakyReluBackward0"), saves=_result_if_inplace)
def _leaky_relu(x, slope, name="LeakyReluBackward0"):
    @jax.custom_jvp
    def f(x):
        if x.dtype in (jnp.float16, jnp.bfloat16):      # (x times the float32 slope, rounded)
            neg = (x.astype(jnp.float32) * jnp.float32(slope)).astype(x.dtype)
            return jnp.where(x > 0, x, neg)
        return jnp.where(x > 0, x, x * slope)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        # torch's leaky_relu_backward: x > 0 ? grad : grad * slope (the factor chosen first:
        # a NaN slope stays out of the positive side's gradient)
        if x.dtype in (jnp.float16, jnp.bfloat16):
            # (its float16/bfloat16 kernel: the gradient times the float32 slope, rounded once)
            k = jnp.where(x > 0, jnp.float32(1), jnp.float32(slope))
            return f(x), (t.astype(jnp.float32) * k).astype(x.dtype)
        return f(x), t * jnp.where(x > 0, jnp.ones_like(x), jnp.asarray(slope, x.dtype))
    return f(x)


_NEGATIVE_SLOPE = {
    "elu": "In-place elu backward calculation is triggered with a negative slope which is not "
           "supported. This is caused by calling in-place forward function with a negative "
           "slope, please call out-of-place version instead.",
    "leaky_relu": "In-place leakyReLu backward calculation is triggered with a negative slope "
                  "which is not supported. This is caused by calling in-place forward function "
                  "with a negative slope, please call out-of-place version instead. File an "
                  "issue at https://github.com/pytorch/pytorch if you do require supporting "
                  "in-place leakRelu backward calculation with negative slope"}
_REFUSE_BACKWARD = []


def _refuse_backward(out, message):
    """``out`` whose backward raises torch's ``message``: torch's in-place elu and leaky_relu
    differentiate through their result, which a negative (or NaN) slope makes impossible, and
    their backward refuses it (the forward succeeds)."""
    if not (_gm._state.grad_enabled and out.requires_grad):
        return out
    if not _REFUSE_BACKWARD:
        class _NegativeSlopeInplace(_tl.autograd.Function):
            @staticmethod
            def forward(ctx, x, msg):
                ctx.msg = msg
                return x.clone()

            @staticmethod
            def backward(ctx, grad):
                raise RuntimeError(ctx.msg)
        _REFUSE_BACKWARD.append(_NegativeSlopeInplace)
    return _REFUSE_BACKWARD[0].apply(out, message)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    _number("leaky_relu_" if inplace else "leaky_relu", ("negative_slope", negative_slope, 2))
    _float_kernel("leaky_relu_cpu", input)
    out = apply(_leaky_relu, input, slope=float(negative_slope),
                **({"name": "LeakyReluBackward1"} if inplace else {}))
    if inplace and not negative_slope >= 0:
        out = _refuse_backward(out, _NEGATIVE_SLOPE["leaky_relu"])
    return _inplace(input, out) if inplace else out


def leaky_relu_(input, *args, **kwargs):
    slope, = _native_numbers("leaky_relu_", [("negative_slope", 0.01)], args, kwargs)
    return leaky_relu(input, slope, True)


@_act("prelu", "PreluKernelBackward0")
def _prelu(x, w):
    if w.size != 1 and x.ndim >= 2:
        w = w.reshape((-1,) + (1,) * (x.ndim - 2))
    elif w.size == 1:
        w = w.reshape(())
    return jnp.where(x > 0, x, x * w)


def prelu(input, weight):
    input, weight = _cast_composite("nn_prelu", input, weight)
    if input.dtype != weight.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got {_legacy(input.dtype)} and "
                           f"{_legacy(weight.dtype)}")
    if weight.numel() != 1:
        if input.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.ndim > 1 else 1
        if channels != weight.numel():
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{channels}.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    _float_kernel("prelu_cpu", input)
    return apply(_prelu, input, weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    _number("rrelu_" if inplace else "rrelu", ("lower", lower, 2), ("upper", upper, 3))
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        # torch's rrelu_with_noise (leaky_relu's values at the mean slope)
        _float_kernel("leaky_relu_cpu", input)
        out = apply(_leaky_relu, input, slope=float((lower + upper) / 2),
                    name="RreluWithNoiseBackward1" if inplace else "RreluWithNoiseBackward0")
        if inplace and not (lower + upper) / 2 >= 0:
            out = _refuse_backward(out, _NEGATIVE_SLOPE["leaky_relu"])
        return _inplace(input, out) if inplace else out
    _float_kernel("rrelu_with_noise_out_cpu", input)
    if input.dtype is D.float16:        # (its CPU kernel has bfloat16 but no Half)
        raise NotImplementedError('"rrelu_with_noise_out_cpu" not implemented for \'Half\'')
    key = _random.next_key_data()
    out = apply(_rrelu_train, input, key, lower=float(lower), upper=float(upper),
                **({"name": "RreluWithNoiseBackward1"} if inplace else {}))
    return _inplace(input, out) if inplace else out


@_act("rrelu_train", lambda kw: kw.get("name", "RreluWithNoiseBackward0"),
      saves=_result_if_inplace)
def _rrelu_train(x, key, lower, upper, name="RreluWithNoiseBackward0"):
    a = jax.random.uniform(jax.random.wrap_key_data(key), x.shape, x.dtype, lower, upper)
    # (torch draws the noise where x <= 0)
    return jnp.where(x > 0, x, x * a)


def _elu_value(x, neg, scale, input_scale):
    """elu's forward (both differentiations of it share it); a zero input takes the positive
    branch: 0, also for an infinite alpha."""
    if x.dtype in (jnp.float16, jnp.bfloat16):          # (in float32, rounded once)
        return _elu_value(x.astype(jnp.float32), neg, scale, input_scale).astype(x.dtype)
    return jnp.where(x < 0, neg * jnp.expm1(x * input_scale), x * scale)


@_act("elu", lambda kw: kw.get("name", "EluBackward0"))
def _elu(x, alpha, scale, input_scale, name="EluBackward0"):
    neg = alpha * scale

    @jax.custom_jvp
    def f(x):
        return _elu_value(x, neg, scale, input_scale)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        # torch's elu_backward: x <= 0 ? grad * input_scale * alpha * scale *
        # exp(x * input_scale) : grad * scale
        if x.dtype in (jnp.float16, jnp.bfloat16):
            # (its float16/bfloat16 kernel computes in float32 and rounds once)
            x32, f32 = x.astype(jnp.float32), jnp.float32
            d = jnp.where(x32 <= 0, f32(input_scale * neg) * jnp.exp(x32 * f32(input_scale)),
                          f32(scale))
            return f(x), (t.astype(f32) * d).astype(x.dtype)
        k = jnp.asarray(input_scale * neg, x.dtype)
        return f(x), t * jnp.where(x <= 0, k * jnp.exp(x * input_scale),
                                   jnp.asarray(scale, x.dtype))
    return f(x)


@_act("elu_result", lambda kw: kw.get("name", "EluBackward1"), saves="output")
def _elu_result(x, alpha, scale, input_scale, name="EluBackward1"):
    """In-place elu: torch differentiates through the result y (its input is overwritten):
    y <= 0 ? grad * input_scale * (y + alpha * scale) : grad * scale."""
    neg = alpha * scale

    @jax.custom_jvp
    def f(x):
        return _elu_value(x, neg, scale, input_scale)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        y = f(x)
        yo = y.astype(jnp.float32) if y.dtype in _HALF else y
        k = jnp.where(yo <= 0, input_scale * (yo + neg), jnp.asarray(scale, yo.dtype))
        return y, (t * k).astype(t.dtype)
    return f(x)


def elu(input, alpha=1.0, inplace=False):
    _number("elu_" if inplace else "elu", ("alpha", alpha, 2))
    _float_kernel("elu_cpu", input)
    out = apply(_elu_result if inplace else _elu, input, alpha=float(alpha), scale=1.0,
                input_scale=1.0)
    if inplace and not alpha >= 0:
        out = _refuse_backward(out, _NEGATIVE_SLOPE["elu"])
    return _inplace(input, out) if inplace else out


def elu_(input, *args, **kwargs):
    alpha, = _native_numbers("elu_", [("alpha", 1.0)], args, kwargs)
    return elu(input, alpha, True)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(input, inplace=False):
    _float_kernel("elu_cpu", input)
    # (torch's selu_ differentiates through its result: EluBackward1)
    out = apply(_elu_result if inplace else _elu, input, alpha=_SELU_ALPHA, scale=_SELU_SCALE,
                input_scale=1.0)
    return _inplace(input, out) if inplace else out


def selu_(input):
    return selu(input, True)


def celu(input, alpha=1.0, inplace=False):
    _number("celu_" if inplace else "celu", ("alpha", alpha, 2))
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    _float_kernel("elu_cpu", input)
    out = apply(_elu_result if inplace else _elu, input, alpha=float(alpha), scale=1.0,
                input_scale=1.0 / float(alpha),
                name="CeluBackward1" if inplace else "CeluBackward0")
    if inplace and not alpha >= 0:
        out = _refuse_backward(out, _NEGATIVE_SLOPE["elu"])
    return _inplace(input, out) if inplace else out


def celu_(input, *args, **kwargs):
    alpha, = _native_numbers("celu_", [("alpha", 1.0)], args, kwargs)
    return celu(input, alpha, True)


def _gelu_vjp(cots, xs, needs, approximate):
    """GeluBackward0 for float32/64: ``g * gelu'(x)``."""
    (g,), (x,) = cots, xs
    if x.dtype in _HALF or jnp.iscomplexobj(x):
        return NotImplemented
    if approximate == "tanh":
        k = math.sqrt(2.0 / math.pi)
        t = jnp.tanh(k * (x + 0.044715 * x * x * x))
        d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
    else:
        d = (0.5 * (1 + jax.lax.erf(x * (1 / math.sqrt(2.0))))
             + x * jnp.exp(-0.5 * x * x) * (1 / math.sqrt(2.0 * math.pi)))
    return [g * d]


@_act("gelu", "GeluBackward0", vjp=_gelu_vjp)
@_opmath
def _gelu(x, approximate):
    if approximate == "tanh":
        k = math.sqrt(2.0 / math.pi)
        return 0.5 * x * (1 + jnp.tanh(k * (x + 0.044715 * x * x * x)))
    return 0.5 * x * (1 + jax.lax.erf(x * (1 / math.sqrt(2.0))))


def gelu(input, approximate="none"):
    if not isinstance(approximate, str):
        raise TypeError(f"gelu(): argument 'approximate' must be str, not "
                        f"{type(approximate).__name__}")
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _float_kernel("GeluKernelImpl", input)
    return apply(_gelu, input, approximate=approximate)


def _sigmoid_of(x):
    """torch's kernels' own sigmoid, ``1 / (1 + exp(-x))``: 0 where exp(-x) overflows."""
    return 1 / (1 + jnp.exp(-x))


@_act("silu", "SiluBackward0")
@_opmath
def _silu(x):
    @jax.custom_jvp
    def f(x):
        return x / (1 + jnp.exp(-x))

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        # torch's silu_backward: g * sigmoid * (1 + x * (1 - sigmoid)) (0, not 0 * inf, far
        # below 0)
        s = _sigmoid_of(x)
        return f(x), t * (s * (1 + x * (1 - s)))
    return f(x)


def silu(input, inplace=False):
    _float_kernel("silu_cpu", input, complex_ok=True)
    out = apply(_silu, input)
    return _inplace(input, out) if inplace else out


def _softplus_raw(x, beta=1.0, threshold=20.0):
    bx = x * beta
    # (the exponent capped where the linear branch is taken: at bx == threshold the softplus
    # branch is torch's, and its whole gradient; jnp.minimum would pass half of it)
    capped = jnp.where(bx > threshold, jnp.asarray(threshold, bx.dtype), bx)
    return jnp.where(bx > threshold, x, jnp.log1p(jnp.exp(capped)) / beta)


@_act("mish", "MishBackward0")
@_opmath
def _mish(x):
    @jax.custom_jvp
    def f(x):
        return x * jnp.tanh(jnp.log1p(jnp.exp(x)))      # (torch's kernel)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        # torch's mish_backward: g * (tanh_sp + x * sigmoid * (1 - tanh_sp * tanh_sp))
        s = _sigmoid_of(x)
        tsp = jnp.tanh(jnp.log1p(jnp.exp(x)))
        return f(x), t * (tsp + x * s * (1 - tsp * tsp))
    return f(x)


def mish(input, inplace=False):
    _float_kernel("mish_cpu", input)
    out = apply(_mish, input)
    return _inplace(input, out) if inplace else out


def sigmoid(input):
    return _tl.sigmoid(input)


def tanh(input):
    return _tl.tanh(input)


def _relu6_of(r):
    """torch's ``min(max(r, 0), 6)`` (NaN stays NaN)."""
    r = jnp.where(r < 0, jnp.zeros_like(r), r)
    return jnp.where(r > 6, jnp.full_like(r, 6), r)


@_act("hardsigmoid", "HardsigmoidBackward0")
@_opmath
def _hardsigmoid(x):
    @jax.custom_jvp
    def f(x):
        return _relu6_of(x + 3) / 6

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        # hardsigmoid_backward: g * (float)(1/6) strictly inside (-3, 3), else 0 (NaN too)
        k = jnp.asarray(np.float32(1.0) / np.float32(6.0), x.dtype)
        return f(x), jnp.where((x > -3) & (x < 3), t * k, jnp.zeros_like(t))
    return f(x)


def hardsigmoid(input, inplace=False):
    _float_kernel("hardsigmoid_cpu", input)
    out = apply(_hardsigmoid, input)
    return _inplace(input, out) if inplace else out


@_act("hardswish", "HardswishBackward0")
@_opmath
def _hardswish(x):
    @jax.custom_jvp
    def f(x):
        # torch's x * min(max(x + 3, 0), 6) / 6: -0.0 at and below -3, NaN at -inf
        return x * _relu6_of(x + 3) / 6

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        # hardswish_backward: x <= -3 ? 0 : x < 3 ? g * (x / 3 + 0.5) : g (NaN: g); the
        # factor chosen first (an infinite x's factor would make the masked product NaN)
        k = jnp.where(x <= -3, jnp.zeros_like(x), jnp.where(x < 3, x / 3 + 0.5, jnp.ones_like(x)))
        return f(x), t * k
    return f(x)


def hardswish(input, inplace=False):
    _float_kernel("hardswish_cpu", input)
    out = apply(_hardswish, input)
    return _inplace(input, out) if inplace else out


@_act("softplus", "SoftplusBackward0")
@_opmath
def _softplus(x, beta, threshold):
    @jax.custom_jvp
    def f(x):
        return _softplus_raw(x, beta, threshold)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        # torch's softplus_backward: z = exp(x * beta); x * beta > threshold ? grad :
        # grad * z / (z + 1) (a zero beta: 1/2, not 0/0)
        bx = x * beta
        z = jnp.exp(jnp.where(bx > threshold, jnp.asarray(0, bx.dtype), bx))
        return f(x), t * jnp.where(bx > threshold, jnp.ones_like(z), z / (z + 1)).astype(t.dtype)
    return f(x)


def softplus(input, beta=1.0, threshold=20.0):
    _number("softplus", ("beta", beta, None), ("threshold", threshold, None))
    _float_kernel("softplus_cpu", input)
    return apply(_softplus, input, beta=float(beta), threshold=float(threshold))


@_act("softsign", "DivBackward0")
def _softsign(x):
    @jax.custom_jvp
    def f(x):
        return x / (1 + jnp.abs(x))

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        # torch's composition x / (1 + |x|): DivBackward0's g / d and -g * ((x / d) / d),
        # the latter through abs (times sgn(x)) into the sum
        # (the barrier: XLA would fold (x / d) / d into x / (d * d), which overflows)
        d = 1 + jnp.abs(x)
        q = jax.lax.optimization_barrier(x / d) / d
        return f(x), t / d + (-t * q) * jnp.sign(x)
    return f(x)


def softsign(input):
    if input.dtype is D.bool:       # (torch: input / (1 + input.abs()))
        raise NotImplementedError('"abs_cpu" not implemented for \'Bool\'')
    return _int_to_default_float(apply(_softsign, input), input)


@_act("logsigmoid", "LogSigmoidBackward0")
@_opmath
def _logsigmoid(x):
    @jax.custom_jvp
    def f(x):
        # torch's kernel: min(x, 0) - log1p(exp(-|x|)) (+0.0 at +inf)
        return jnp.minimum(x, 0) - jnp.log1p(jnp.exp(-jnp.abs(x)))

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        # log_sigmoid_backward: g * (max_deriv - sign * z / (1 + z)), z = exp(-|x|)
        neg = x < 0
        z = jnp.exp(-jnp.abs(x))
        one, zero = jnp.ones_like(x), jnp.zeros_like(x)
        return f(x), t * (jnp.where(neg, one, zero) - jnp.where(neg, one, -one) * (z / (1 + z)))
    return f(x)


def logsigmoid(input):
    _float_kernel("log_sigmoid_cpu", input)
    return apply(_logsigmoid, input)


@_act("tanhshrink", "SubBackward0")
def _tanhshrink(x):
    return x - jnp.tanh(x)


def tanhshrink(input):
    if input.dtype is D.bool:       # (torch: input - input.tanh())
        raise RuntimeError(_SUB_BOOL1)
    return _int_to_default_float(apply(_tanhshrink, input), input)


@_act("hardshrink", "HardshrinkBackward0")
def _hardshrink(x, lambd):
    return jnp.where((x >= -lambd) & (x <= lambd), jnp.zeros_like(x), x)


def hardshrink(input, lambd=0.5):
    _number("hardshrink", ("lambd", lambd, 2))
    _float_kernel("hardshrink_cpu", input)
    return apply(_hardshrink, input, lambd=float(lambd))


@_act("softshrink", "SoftshrinkBackward0")
def _softshrink(x, lambd):
    @jax.custom_jvp
    def f(x):
        # torch's kernel: x * 0 inside [-lambd, lambd] (a -0.0 for x <= 0, NaN for NaN)
        return jnp.where(x > lambd, x - lambd, jnp.where(x < -lambd, x + lambd, x * 0))

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        # softshrink_backward: 0 inside [-lambd, lambd], the gradient elsewhere (NaN too)
        return f(x), jnp.where((x >= -lambd) & (x <= lambd), jnp.zeros_like(t), t)
    return f(x)


def softshrink(input, lambd=0.5):
    _number("softshrink", ("lambd", lambd, 2))
    _float_kernel("softshrink_check", input)
    top = D._FLOAT_MAX.get(input.dtype.name)
    if top is not None and not 0 <= lambd <= top:
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{_legacy(input.dtype)}, but found {lambd:g}")
    return apply(_softshrink, input, lambd=float(lambd))


@_act("threshold", lambda kw: kw.get("name", "ThresholdBackward0"))
def _threshold(x, threshold, value, name="ThresholdBackward0"):
    return jnp.where(x <= threshold, jnp.asarray(value, x.dtype), x)


def threshold(input, threshold, value, inplace=False):
    _number("threshold_" if inplace else "threshold", ("threshold", threshold, 2),
            ("value", value, 3))
    if input.dtype is D.bool or input.dtype.is_complex:
        raise NotImplementedError(f'"threshold_cpu" not implemented for '
                                  f"'{D.legacy_name(input.dtype)}'")
    out = apply(_threshold, input, threshold=float(threshold), value=float(value),
                **({"name": "ThresholdBackward1"} if inplace else {}))
    return _inplace(input, out) if inplace else out


def threshold_(input, *args, **kwargs):
    if len(args) + len(kwargs) < 2:
        raise TypeError("threshold_() missing required arguments 'threshold' and 'value'")
    th, value = _native_numbers("threshold_", [("threshold", None), ("value", None)], args,
                                kwargs)
    return globals()["threshold"](input, th, value, True)


@jax.custom_jvp
def _glu_fn(a, b):
    # torch's kernel: a * (1 / (1 + exp(-b))), float16/bfloat16 in float32 rounded once
    if a.dtype in _HALF:
        return (a.astype(jnp.float32) * _sigmoid_of(b.astype(jnp.float32))).astype(a.dtype)
    return a * _sigmoid_of(b)


@_glu_fn.defjvp
def _glu_jvp(primals, tangents):
    (a, b), (ta, tb) = primals, tangents
    # glu_backward: sig(b) stored in the input's dtype; g * sig(b) for a and
    # (1 - sig(b)) * sig(b) * a * g for b (in float32 for float16/bfloat16, rounded once)
    low = a.dtype if a.dtype in _HALF else None
    f32 = (lambda v: v.astype(jnp.float32)) if low else (lambda v: v)
    s = _sigmoid_of(f32(b))
    if low:
        s = f32(s.astype(low))
    k = (1 - s) * s * f32(a)
    out = f32(ta) * s + f32(tb) * k
    return _glu_fn(a, b), (out.astype(low) if low else out)


@_act("glu", "GluBackward0")
def _glu(x, dim):
    a, b = jnp.split(x, 2, axis=dim)
    return _glu_fn(a, b)


def glu(input, dim=-1):
    dim = _int_arg("glu", dim, " (position 2)")
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    dim = _wrapped(dim, input.ndim)
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {n}")
    _float_kernel("glu_cpu", input)
    return apply(_glu, input, dim=dim)


def _get_softmax_dim(name, ndim, stacklevel=3):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=_stacklevel(stacklevel, checks=False))
    return 0 if ndim in (0, 1, 3) else 1


# softmax and log_softmax differentiate by torch's backward formulas, declared as their JVPs
# (jax transposes them into exactly the backward: SoftmaxBackward0's y * (g - sum(g * y)),
# LogSoftmaxBackward0's g - exp(y) * sum(g)); differentiating the forward's own operations
# traced 2-3 times as many equations (a first call's backward: 4.8 ms against 2.0)

@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _softmax_fn(x, dim):
    # (``initial``: the max over an empty dim is -inf, and the softmax of nothing is empty)
    e = jnp.exp(x - jax.lax.stop_gradient(jnp.max(x, axis=dim, keepdims=True,
                                                  initial=-jnp.inf)))
    return e / jnp.sum(e, axis=dim, keepdims=True)


@_softmax_fn.defjvp
def _softmax_jvp(dim, primals, tangents):
    y = _softmax_fn(primals[0], dim)
    a = y * tangents[0]
    return y, a - y * jnp.sum(a, axis=dim, keepdims=True)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _log_softmax_fn(x, dim):
    shifted = x - jax.lax.stop_gradient(jnp.max(x, axis=dim, keepdims=True, initial=-jnp.inf))
    return shifted - jnp.log(jnp.sum(jnp.exp(shifted), axis=dim, keepdims=True))


@_log_softmax_fn.defjvp
def _log_softmax_jvp(dim, primals, tangents):
    y = _log_softmax_fn(primals[0], dim)
    t = tangents[0]
    return y, t - jnp.sum(jnp.exp(y) * t, axis=dim, keepdims=True)


# bfloat16/float16: torch's CPU kernels compute in float32 and round the result once, forward
# and backward alike, and the backward reads the saved output, rounded to the input's dtype:
# SoftmaxBackward0 ``y * (g - sum(g * y))``, LogSoftmaxBackward0 ``g - exp(y) * sum(g)`` with
# ``y`` the low-precision result in float32 (not the forward's float32 value: a few percent of
# the gradient's scale apart). The JVPs below are those backwards' transposes, so jax.vjp of
# the op gives them (the declared rules below leave these dtypes to it).

@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _softmax_low(x, dim):
    return _softmax_fn(x.astype(jnp.float32), dim).astype(x.dtype)


@_softmax_low.defjvp
def _softmax_low_jvp(dim, primals, tangents):
    y = _softmax_low(primals[0], dim)
    yf = y.astype(jnp.float32)
    a = yf * tangents[0].astype(jnp.float32)
    return y, (a - yf * jnp.sum(a, axis=dim, keepdims=True)).astype(y.dtype)


def _log_softmax_low_value(x, dim):
    # torch's CPU kernels compute bfloat16/float16 in float32; over the last dim the sum of
    # exponentials and its log are stored in the input's dtype before the subtraction
    low, xf = x.dtype, x.astype(jnp.float32)
    m = jax.lax.stop_gradient(jnp.max(xf, axis=dim, keepdims=True))
    total = jnp.sum(jnp.exp(xf - m), axis=dim, keepdims=True)
    if dim != x.ndim - 1:
        return (xf - m - jnp.log(total)).astype(low)
    lse = jnp.log(total.astype(low).astype(jnp.float32)).astype(low).astype(jnp.float32)
    return (xf - m - lse).astype(low)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _log_softmax_low(x, dim):
    return _log_softmax_low_value(x, dim)


@_log_softmax_low.defjvp
def _log_softmax_low_jvp(dim, primals, tangents):
    y = _log_softmax_low(primals[0], dim)
    t = tangents[0].astype(jnp.float32)
    e = jnp.exp(y.astype(jnp.float32))
    return y, (t - jnp.sum(e * t, axis=dim, keepdims=True)).astype(y.dtype)


def _softmax_vjp(cots, xs, needs, dim, neg):
    """SoftmaxBackward0 for float32/64: ``y * (g - sum(g * y))`` (negated for softmin);
    bfloat16/float16 are jax.vjp's of ``_softmax_low``."""
    (g,), (x,) = cots, xs
    if x.ndim == 0 or x.dtype in _HALF or jnp.iscomplexobj(x):
        return NotImplemented
    y = _softmax_fn(-x if neg else x, dim)
    gx = y * (g - jnp.sum(g * y, axis=dim, keepdims=True))
    return [-gx if neg else gx]


@_act("softmax", "SoftmaxBackward0", saves="output", vjp=_softmax_vjp)   # (torch saves
def _softmax(x, dim, neg):                                               # the result)
    if neg:
        x = -x
    if x.ndim == 0:
        return jnp.ones_like(x)
    if x.dtype in _HALF:
        return _softmax_low(x, dim)
    return _softmax_fn(x, dim)


def _log_softmax_vjp(cots, xs, needs, dim):
    """LogSoftmaxBackward0: ``g - exp(y) * sum(g)`` (what jax transposes the JVP into);
    bfloat16/float16 are jax.vjp's of ``_log_softmax_low``."""
    (g,), (x,) = cots, xs
    if x.ndim == 0 or x.dtype in _HALF:
        return NotImplemented
    y = _log_softmax_fn(x, dim)
    return [g - jnp.exp(y) * jnp.sum(g, axis=dim, keepdims=True)]


@_act("log_softmax", "LogSoftmaxBackward0", saves="output", vjp=_log_softmax_vjp)
def _log_softmax(x, dim):
    if x.ndim == 0:
        return jnp.zeros_like(x)
    if x.dtype not in _HALF:
        return _log_softmax_fn(x, dim)
    return _log_softmax_low(x, dim)


def _softmax_prep(input, dim, dtype, name, stacklevel):
    if dim is None:
        # (torch's _stacklevel counts its own frames: here this function and the argument
        # check around the public function are two more)
        dim = _get_softmax_dim(name, input.ndim, stacklevel + 2)
    if name == "softmin" and input.dtype is D.bool:     # torch's softmin is (-input).softmax
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If "
                           "you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")
    if dtype is not None:
        input = input.to(dtype)
    kernel = "log_softmax" if name == "log_softmax" else "softmax"
    dim = _int_dim(kernel, dim, input.ndim)
    if not input.dtype.is_floating_point:     # (torch's CPU kernels: no complex either)
        last = "_lastdim" if dim == max(input.ndim, 1) - 1 else ""
        raise NotImplementedError(f'"{kernel}{last}_kernel_impl" not implemented for '
                                  f"'{D.legacy_name(input.dtype)}'")
    return input, dim


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    input, dim = _softmax_prep(input, dim, dtype, "softmax", _stacklevel)
    return apply(_softmax, input, dim=dim, neg=False)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    input, dim = _softmax_prep(input, dim, dtype, "softmin", _stacklevel)
    return apply(_softmax, input, dim=dim, neg=True)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    input, dim = _softmax_prep(input, dim, dtype, "log_softmax", _stacklevel)
    return apply(_log_softmax, input, dim=dim)


@defop("gumbel_softmax",
       grad_name=lambda kw: "AddBackward0" if kw.get("hard") else "SoftmaxBackward0")
def _gumbel_softmax(x, key, tau, hard, dim):
    if x.ndim == 0:         # (the softmax of a scalar: 1, its one-hot too)
        return jnp.ones_like(x)
    g = -jnp.log(jax.random.exponential(jax.random.wrap_key_data(key), x.shape, x.dtype))
    y = jax.nn.softmax((x + g) / tau, axis=dim)
    if hard:
        idx = jnp.argmax(y, axis=dim, keepdims=True)
        y_hard = (jnp.arange(x.shape[dim]).reshape([-1 if i == dim else 1
                                                    for i in range(x.ndim)]) == idx)
        return y_hard.astype(y.dtype) - jax.lax.stop_gradient(y) + y
    return y


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.",
                      stacklevel=_stacklevel(2))
    if not logits.dtype.is_floating_point:      # (torch draws its noise by exponential_)
        raise RuntimeError("Exponential distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{D.legacy_name(logits.dtype)}")
    dim = _int_dim("softmax", dim, logits.ndim)
    return apply(_gumbel_softmax, logits, _random.next_key_data(), tau=float(tau), hard=bool(hard),
                 dim=dim)


# ================================================================== dropout

@defop("dropout", grad_name="MulBackward0")
def _dropout(x, key, p, mask_shape):
    keep = jax.random.bernoulli(jax.random.wrap_key_data(key), 1.0 - p, mask_shape)
    return jnp.where(keep, x * jnp.asarray(1.0 / (1.0 - p), x.dtype), jnp.zeros_like(x))


def _dropout_float_only(input):
    # torch scales by 1 / (1 - p) in the input's dtype: an integer input cannot hold the result
    if not input.is_floating_point() and not input.is_complex():
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{D.legacy_name(input.dtype)}")


def _dropout_impl(input, p, training, inplace, mask_shape):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        out = input * _tl.zeros((), dtype=input.dtype)     # (torch: times a zero of its dtype)
    else:
        _dropout_float_only(input)
        out = apply(_dropout, input, _random.next_key_data(), p=float(p), mask_shape=mask_shape)
    return _inplace(input, out) if inplace else out


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability p, scale the rest by 1/(1-p) (training only)."""
    return _dropout_impl(input, p, training, inplace, tuple(input.shape))


def _feature_dropout(input, p, training, inplace, batched_ndim, name):
    """torch's dropout{1,2,3}d: one mask value per (batch, channel). An input of the unbatched
    rank is one sample (dropout1d / dropout3d); dropout2d keeps torch's historical reading of a
    3-D input as (N, C, L), and any other rank masks its first two dimensions
    (``feature_dropout``), with torch's warnings."""
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    nd = input.ndim
    k = batched_ndim - 2
    if nd not in (batched_ndim - 1, batched_ndim):
        warnings.warn(f"{name}: Received a {nd}-D input to {name}, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and "
                      f"silence this warning, please use dropout instead. Note that {name} "
                      f"exists to provide channel-wise dropout on inputs with {k} spatial "
                      "dimensions, a channel dimension, and an optional batch dimension (i.e. "
                      f"{batched_ndim - 1}D or {batched_ndim}D inputs).", stacklevel=_stacklevel(3))
    if name == "dropout2d" and nd == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
                      "1D dropout behavior is desired - input is interpreted as shape (N, C, L), "
                      "where C is the channel dim. This behavior will change in a future release "
                      "to interpret the input as one without a batch dimension, i.e. shape (C, H, "
                      "W). To maintain the 1D channel-wise dropout behavior, please switch to "
                      "using dropout1d instead.", stacklevel=_stacklevel(3))
    shape = tuple(input.shape)
    if name == "dropout2d":
        lead = shape[:2]                                   # feature_dropout on the input as is
    else:                                                  # unsqueezed to a batch of one
        lead = shape[:2] if nd == batched_ndim else shape[:1]
    mask_shape = tuple(lead) + (1,) * (nd - len(lead))
    return _dropout_impl(input, p, training, inplace, mask_shape)


def dropout1d(input, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout "
                           "on inputs with 1 spatial dimension, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, 3, "dropout1d")


def dropout2d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 4, "dropout2d")


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 5, "dropout3d")


@defop("alpha_dropout", grad_name="AddBackward0")
def _alpha_dropout(x, key, p, mask_shape):
    alpha = 1.7580993408473766
    keep = jax.random.bernoulli(jax.random.wrap_key_data(key), 1.0 - p, mask_shape).astype(x.dtype)
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    b = (keep - 1) * (alpha * a) + alpha * a * p
    return x * (keep * a) + b


def _alpha_impl(input, p, training, inplace, mask_shape):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if p == 1.0:
        out = input * _tl.zeros((), dtype=input.dtype)
    else:
        _dropout_float_only(input)
        out = apply(_alpha_dropout, input, _random.next_key_data(), p=float(p),
                    mask_shape=mask_shape)
    return _inplace(input, out) if inplace else out


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _alpha_impl(input, p, training, inplace, tuple(input.shape))


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    shape = tuple(input.shape)
    return _alpha_impl(input, p, training, inplace, shape[:2] + (1,) * (len(shape) - 2))


# ================================================================== embedding and friends

def _embedding_vjp(cots, xs, needs, padding_idx, scale_grad_by_freq=False):
    """EmbeddingBackward0 (no frequency scaling): each index's row of ``g`` added into the
    weight's gradient, rows at ``padding_idx`` left out."""
    (g,), (idx, w) = cots, xs
    if scale_grad_by_freq or needs[0]:
        return NotImplemented
    if padding_idx is not None:
        g = jnp.where((idx == padding_idx)[..., None], jnp.zeros((), g.dtype), g)
    return [jnp.zeros(w.shape, g.dtype).at[idx.reshape(-1)].add(g.reshape(-1, w.shape[-1]))]


@defop("embedding", grad_name="EmbeddingBackward0", vjp=_embedding_vjp)
def _embedding(idx, w, padding_idx, scale_grad_by_freq=False):
    out = jnp.take(w, idx, axis=0)
    if scale_grad_by_freq:
        # each row's gradient divided by how often its index occurs in the batch (the value is
        # unchanged: sg(out) + 0)
        counts = jnp.zeros((w.shape[0],), w.dtype).at[idx.reshape(-1)].add(1)
        c = jnp.take(counts, idx, axis=0)[..., None]
        sg = jax.lax.stop_gradient(out)
        out = sg + (out - sg) / c
    if padding_idx is None:
        return out
    return jnp.where((idx == padding_idx)[..., None], jax.lax.stop_gradient(out), out)


def _indices_out_of_range(idx, n):
    """Whether an embedding index is outside ``[0, n)`` (numpy or jax arrays)."""
    return ((idx < 0) | (idx >= n)).any() if idx.size else False


def _embedding_error(bad):
    return IndexError("index out of range in self") if bad else None


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    if padding_idx is not None:
        n = weight.shape[0]
        if padding_idx > 0:
            assert padding_idx < n, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -n, "Padding_idx must be within num_embeddings"
            padding_idx = n + padding_idx
    int_index = input.dtype in (D.int64, D.int32)
    if max_norm is not None:
        # (torch renorms the weight first: embedding_renorm_'s checks)
        if weight.dim() != 2:
            raise RuntimeError(f"Expected 2-dimensional tensor, but got {weight.dim()}-dimensional "
                               f"tensor for argument #1 'self' (while checking arguments for "
                               f"embedding_renorm_)")
        if not int_index:
            raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the "
                               f"following scalar types: Long, Int; but got "
                               f"{_cpp_type(input.dtype)} instead (while checking arguments for "
                               "embedding_renorm_)")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if not int_index:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           "following scalar types: Long, Int; but got "
                           f"{_cpp_type(input.dtype)} instead (while checking arguments for "
                           "embedding)")
    # jax would clamp silently; torch refuses (fused eager: computed indices are checked when
    # their segment runs)
    if max_norm is not None or not _fused.defer_check(
            _indices_out_of_range, [_fused.raw(input), weight.shape[0]], _embedding_error,
            within=(0, weight.shape[0] - 1)):
        d = input._data
        r = _fused.value_range(d)   # (read once per index array)
        e = _embedding_error(r[0] < 0 or r[1] >= weight.shape[0] if r is not None else
                             _indices_out_of_range(np.asarray(d), weight.shape[0]))
        if e is not None:
            raise e
    if max_norm is not None:
        _embedding_renorm_(weight, input, float(max_norm), float(norm_type))
    if sparse:
        weight._sparse_embedding = True     # (torch's gradient is sparse: optim.SparseAdam)
    return apply(_embedding, input, weight, padding_idx=padding_idx,
                 scale_grad_by_freq=bool(scale_grad_by_freq))


def _embedding_renorm_(weight, input, max_norm, norm_type):
    """torch's embedding_renorm_: rows looked up whose norm exceeds max_norm are scaled down
    in place (outside autograd)."""
    rows = jnp.asarray(np.unique(np.asarray(input._data)))
    w = weight._data
    sel = w[rows]
    norms = _pnorm(sel.astype(jnp.float32) if sel.dtype == jnp.float16 else sel, norm_type, 1,
                   False)
    scale = jnp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(w.dtype)
    weight._set_data(w.at[rows].set(sel * scale[:, None]))


@defop("one_hot", differentiable=False)
def _one_hot(x, n):
    return (x[..., None] == jnp.arange(n, dtype=x.dtype)).astype(jnp.int64)


def one_hot(tensor, num_classes=-1):
    from .._ops._surface import _int_like
    if not _int_like(num_classes):
        raise TypeError(f"one_hot(): argument 'num_classes' (position 2) must be int, not "
                        f"{type(num_classes).__name__}")
    if tensor.dtype.name != "int64":
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes != -1 and _fused.defer_check(
            _class_values_error_flags, [_fused.raw(tensor), num_classes], _class_values_error,
            within=(0, num_classes - 1)):
        # (fused eager: computed classes checked with their segment, or not at all where
        # known in range)
        return apply(_one_hot, tensor, n=int(num_classes))
    data = np.asarray(tensor._data)
    if num_classes == -1:
        if data.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(data.max()) + 1
    if data.size and data.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if data.size and data.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return apply(_one_hot, tensor, n=int(num_classes))


def _class_values_error_flags(t, n):
    """(a class value is negative, one is at least ``n``): one_hot's checks, numpy or jax."""
    xp = np if isinstance(t, np.ndarray) else jnp
    return xp.stack([(t < 0).any(), (t >= n).any()])


def _class_values_error(flags):
    if flags[0]:
        return RuntimeError("Class values must be non-negative.")
    if flags[1]:
        return RuntimeError("Class values must be smaller than num_classes.")
    return None


def _safe_sqrt(ss):
    # torch's norm backward is 0 at a zero vector (jax's sqrt would give nan)
    pos = ss > 0
    return jnp.where(pos, jnp.sqrt(jnp.where(pos, ss, 1)), 0)


def _pnorm(x, p, axis, keepdims=True):
    if p == 2:
        return _safe_sqrt(jnp.sum(x * x, axis=axis, keepdims=keepdims))
    if p == 1:
        return jnp.sum(jnp.abs(x), axis=axis, keepdims=keepdims)
    if p == float("inf"):
        return jnp.max(jnp.abs(x), axis=axis, keepdims=keepdims)
    # an all-zero slice: norm 0 with a zero gradient, as torch's norm backward (the power's
    # derivative there would be 0 * inf)
    zero = jnp.all(x == 0, axis=axis, keepdims=True)
    xs = jnp.where(zero, jnp.ones_like(x), x)
    s = jnp.sum(jnp.abs(xs) ** p, axis=axis, keepdims=True) ** (1.0 / p)
    s = jnp.where(zero, jnp.zeros_like(s), s)
    return s if keepdims else jnp.squeeze(s, axis=axis)


def _low_norm(x, p, dim):
    """torch's ``vector_norm`` of a bfloat16/float16 ``x``: accumulated in float32, stored in
    ``x``'s dtype; returned as float32 for the ops that use it."""
    return _pnorm(x.astype(jnp.float32), p, dim).astype(x.dtype).astype(jnp.float32)


@defop("normalize", grad_name="DivBackward0")
def _normalize(x, p, dim, eps):
    if x.dtype in _HALF:
        denom = jnp.maximum(_low_norm(x, p, dim), eps).astype(x.dtype).astype(jnp.float32)
        return (x.astype(jnp.float32) / denom).astype(x.dtype)
    return x / jnp.maximum(_pnorm(x, p, dim), eps)


def _vector_norm_dims(dim):
    """``dim`` of torch's ``input.norm(p, dim)`` (linalg_vector_norm's ``int[1]?``) as a list
    of ints, or None; what its parser refuses, its TypeError."""
    if dim is None:
        return None
    from .._tensor import _type_name
    head = "linalg_vector_norm(): argument 'dim'"
    if isinstance(dim, (tuple, list)):
        for i, d in enumerate(dim):
            if isinstance(d, bool):
                raise TypeError(f"{head} (position 3) must be tuple of ints, but found element "
                                f"of type bool at pos {i}")
            if not _int_like(d):
                raise TypeError(f"{head} failed to unpack the object at pos {i + 1} with error "
                                f"\"type must be tuple of ints,but got {_type_name(d)}\"")
        return [int(d) for d in dim]
    if isinstance(dim, bool):
        raise TypeError(f"{head} (position 3) must be tuple of ints, but found element of type "
                        "bool at pos 0")
    if isinstance(dim, Tensor):     # (one element of an integer or bool dtype: an int)
        ok = dim.numel() == 1 and not (dim.dtype.is_floating_point or dim.dtype.is_complex)
    else:
        ok = _int_like(dim)
    if not ok:
        raise TypeError(f"{head} (position 3) must be tuple of ints, not {_type_name(dim)}")
    return [int(dim.item()) if isinstance(dim, Tensor) else int(dim)]


def _reduction_axes(dims, ndim):
    """torch's reduction dims (None or empty: all) as a jax axis: one int, a sorted tuple, or
    none for a 0-dim array; out of range or repeated, torch's errors."""
    if not dims:
        return tuple(range(ndim))
    seen = []
    for d in dims:
        w = _wrapped(d, ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.append(w)
    if ndim == 0:
        return ()
    return seen[0] if len(seen) == 1 else tuple(sorted(seen))


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    dims = [dim] if type(dim) is int else _vector_norm_dims(dim)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):   # (torch: input.norm)
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {D.legacy_name(input.dtype)}")
    axis = _reduction_axes(dims, input.ndim)
    if input.dtype.is_complex:      # torch's composition: the norm of |x| (real), clamped
        from .._ops.linalg import linalg_vector_norm
        denom = linalg_vector_norm(input, float(p), dims, True).clamp_min(float(eps))
        return input / denom.expand_as(input)
    return apply(_normalize, input, p=float(p), dim=axis, eps=float(eps))


@defop("cosine_similarity", promote="float", grad_name="SumBackward1")
def _cosine_similarity(a, b, dim, eps):
    a, b = jnp.broadcast_arrays(a, b)
    if a.dtype in _HALF:
        # torch: each step (norms, quotients, product) stored in the input's dtype
        low, f32 = a.dtype, jnp.float32

        def unit(v):
            n = jnp.maximum(_low_norm(v, 2.0, dim), eps).astype(low).astype(f32)
            return (v.astype(f32) / n).astype(low).astype(f32)
        prod = (unit(a) * unit(b)).astype(low).astype(f32)
        return jnp.sum(prod, axis=dim).astype(low)
    na = jnp.maximum(_safe_sqrt(jnp.sum(a * a, axis=dim, keepdims=True)), eps)
    nb = jnp.maximum(_safe_sqrt(jnp.sum(b * b, axis=dim, keepdims=True)), eps)
    return jnp.sum((a / na) * (b / nb), axis=dim)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    common = D.promote_types(x1.dtype, x2.dtype)
    if not common.is_floating_point:
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{D.legacy_name(common)}")
    if type(dim) is not int:
        dim = _int_arg("cosine_similarity", dim, "")
    bad = broadcast_error((x1.shape, x2.shape))
    if bad:
        raise RuntimeError(bad)
    nd = max(x1.ndim, x2.ndim)
    return apply(_cosine_similarity, x1, x2, dim=_axes(_wrapped(dim, nd), nd), eps=float(eps))


@defop("pairwise_distance", promote="float", grad_name="NormBackward1")
def _pairwise_distance(a, b, p, eps, keepdim):
    d = a - b + eps
    return _pnorm(d, p, _axes(-1, d.ndim), keepdim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    if x1.dtype is D.bool and x2.dtype is D.bool:
        raise RuntimeError(_SUB_BOOL2)
    if not (x1.dtype.is_floating_point or x2.dtype.is_floating_point):
        # torch's norm(x1 - x2 + eps): the norm of a complex difference is real (|d|, not d*d);
        # integers subtract (and wrap) in their own dtype before eps makes them float
        from .._ops.linalg import linalg_vector_norm
        return linalg_vector_norm(x1 - x2 + eps, float(p), -1, bool(keepdim))
    return apply(_pairwise_distance, x1, x2, p=float(p), eps=float(eps), keepdim=bool(keepdim))


# ================================================================== normalisation

def _layer_norm_vjp(cots, xs, needs, n, eps, has_w, has_b):
    """NativeLayerNormBackward0 for float32/64: ``b``'s gradient is ``g`` and ``w``'s is
    ``g * xhat`` (summed over the leading dimensions by the registry); the input's is
    ``rstd * (gx - mean(gx) - xhat * mean(gx * xhat))`` with ``gx = g * w``."""
    (g,), (x, *wb) = cots, xs
    if x.dtype in _HALF or jnp.iscomplexobj(x):
        return NotImplemented
    axes = tuple(range(x.ndim - n, x.ndim))
    mean = jnp.mean(x, axis=axes, keepdims=True)
    rstd = jax.lax.rsqrt(jnp.mean(jnp.square(x - mean), axis=axes, keepdims=True) + eps)
    xhat = (x - mean) * rstd
    out = []
    if needs[0]:
        gx = g * wb[0] if has_w else g
        out.append(rstd * (gx - jnp.mean(gx, axis=axes, keepdims=True)
                           - xhat * jnp.mean(gx * xhat, axis=axes, keepdims=True)))
    if has_w and needs[1]:
        out.append(g * xhat)
    if has_b and needs[1 + has_w]:
        out.append(g)
    return out


@functools.partial(jax.custom_jvp, nondiff_argnums=(0, 1, 2, 3))
def _layer_norm_low(n, eps, has_w, has_b, x, *wb):
    """bfloat16/float16 layer_norm (``wb``: the weight and bias given): computed in float32,
    rounded once. Its backward is torch's: torch keeps the mean and 1/std in the input's dtype
    (float32 where the weight or bias is float32: its mixed-type kernel) and its backward
    reads those rounded values, which moves the input's gradient by up to a few percent of its
    scale from the float32 statistics' one. The JVP is that backward's transpose."""
    return _layer_norm_value(x, *wb, n=n, eps=eps, has_w=has_w, has_b=has_b)


@_layer_norm_low.defjvp
def _layer_norm_low_jvp(n, eps, has_w, has_b, primals, tangents):
    x, *wb = primals
    tx, *twb = tangents
    y = _layer_norm_low(n, eps, has_w, has_b, x, *wb)
    axes = tuple(range(x.ndim - n, x.ndim))
    xf = x.astype(jnp.float32)
    mean = jnp.mean(xf, axis=axes, keepdims=True)
    rstd = jax.lax.rsqrt(jnp.mean(jnp.square(xf - mean), axis=axes, keepdims=True) + eps)
    if not any(t.dtype == jnp.float32 for t in wb):
        mean = mean.astype(x.dtype).astype(jnp.float32)
        rstd = rstd.astype(x.dtype).astype(jnp.float32)
    cnt = float(np.prod([x.shape[a] for a in axes]))
    d = xf - mean
    t = tx.astype(jnp.float32)
    # (the input's gradient rstd*gw - rstd^3/N * d * sum(gw*d) - rstd/N * sum(gw), gw = g*w,
    # is symmetric in its rows: its transpose has the same form)
    ty = (rstd * t - (rstd ** 3 / cnt) * d * jnp.sum(d * t, axis=axes, keepdims=True)
          - (rstd / cnt) * jnp.sum(t, axis=axes, keepdims=True))
    if has_w:
        ty = ty * wb[0].astype(jnp.float32) + d * rstd * twb[0].astype(jnp.float32)
    if has_b:
        ty = ty + twb[-1].astype(jnp.float32)
    return y, ty.astype(y.dtype)


@defop("layer_norm", grad_name="NativeLayerNormBackward0", vjp=_layer_norm_vjp)
def _layer_norm(x, *wb, n, eps, has_w, has_b):
    if x.dtype in _HALF:
        return _layer_norm_low(n, eps, has_w, has_b, x, *wb)
    return _layer_norm_value(x, *wb, n=n, eps=eps, has_w=has_w, has_b=has_b)


def _layer_norm_value(x, *wb, n, eps, has_w, has_b):
    axes = tuple(range(x.ndim - n, x.ndim))
    xf = x.astype(jnp.promote_types(x.dtype, jnp.float32))
    mean = jnp.mean(xf, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(xf - mean), axis=axes, keepdims=True)
    y = (xf - mean) * jax.lax.rsqrt(var + eps)
    if x.dtype not in _HALF:
        y = y.astype(x.dtype)
    i = 0
    if has_w:        # bfloat16/float16: the affine step in float32 too, one rounding
        y = y * wb[i].astype(y.dtype)
        i += 1
    if has_b:
        y = y + wb[i].astype(y.dtype)
    return y.astype(x.dtype)


def _norm_dtype(input, kernel):
    if not input.is_floating_point():
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{D.legacy_name(input.dtype)}'")


def _check_norm_shape(input, normalized_shape, name="layer_norm", params=()):
    """torch's _check_layer_norm_inputs (and rms_norm's), in its order and words."""
    if isinstance(normalized_shape, (int, float)) and not isinstance(normalized_shape, bool):
        raise TypeError(f"{name}(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(normalized_shape).__name__}")
    for i, v in enumerate(normalized_shape):
        if isinstance(v, float):
            raise TypeError(f"{name}(): argument 'normalized_shape' (position 2) must be tuple "
                            f"of ints, but found element of type float at pos {i}")
    ns = tuple(int(v) for v in normalized_shape)
    if not ns:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    for what, t in params:
        if t is not None and tuple(t.shape) != ns:
            raise RuntimeError(f"Expected {what} to be of same shape as normalized_shape, but got "
                               f"{what} of shape {list(t.shape)} and normalized_shape = "
                               f"{list(ns)}")
    shape = tuple(input.shape)
    if shape[len(shape) - len(ns):] != ns or len(ns) > len(shape):
        star = "*, " if name == "layer_norm" else "*"
        raise RuntimeError(f"Given normalized_shape={list(ns)}, expected input with shape "
                           f"[{star}{', '.join(str(s) for s in ns)}], but got input of size"
                           f"{list(shape)}")
    return ns


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    ns = _check_norm_shape(input, normalized_shape, "layer_norm",
                           (("weight", weight), ("bias", bias)))
    _norm_dtype(input, "LayerNormKernelImpl")
    args = [a for a in (weight, bias) if a is not None]
    return apply(_layer_norm, input, *args, n=len(ns), eps=float(eps),
                 has_w=weight is not None, has_b=bias is not None)


@defop("rms_norm", grad_name="MulBackward0")
def _rms_norm(x, *w, n, eps):
    axes = tuple(range(x.ndim - n, x.ndim))
    xf = x.astype(jnp.promote_types(x.dtype, jnp.float32))
    # torch: the epsilon of the computation's dtype (float32 for bfloat16/float16 input)
    e = jnp.finfo(xf.dtype).eps if eps is None else eps
    y = xf * jax.lax.rsqrt(jnp.mean(xf * xf, axis=axes, keepdims=True) + e)
    return (y * w[0] if w else y).astype(x.dtype)


_RMS_MIXED_WARNED = False


def rms_norm(input, normalized_shape, weight=None, eps=None):
    ns = _check_norm_shape(input, normalized_shape, "rms_norm", (("weight", weight),))
    _norm_dtype(input, "rms_norm")
    args = [weight] if weight is not None else []
    global _RMS_MIXED_WARNED
    if weight is not None and weight.dtype != input.dtype and not _RMS_MIXED_WARNED:
        # torch's TORCH_WARN_ONCE: a weight of another dtype takes its composite path
        _RMS_MIXED_WARNED = True
        warnings.warn(f"Mismatch dtype between input and weight: input dtype = "
                      f"{_CPP_NAMES.get(input.dtype.name, input.dtype.name)}, weight dtype = "
                      f"{_CPP_NAMES.get(weight.dtype.name, weight.dtype.name)}, Cannot dispatch "
                      f"to fused implementation.", UserWarning, stacklevel=_stacklevel(2))
    return apply(_rms_norm, input, *args, n=len(ns), eps=None if eps is None else float(eps))


@defop("group_norm", grad_name="NativeGroupNormBackward0")
def _group_norm(x, *wb, groups, eps, has_w, has_b):
    if x.dtype != jnp.bfloat16:
        return _group_norm_value(x, *wb, groups=groups, eps=eps, has_w=has_w, has_b=has_b)
    # bfloat16: computed in float32 and rounded once; torch stores the mean and 1/std in the
    # input's dtype (float32 with float32 parameters) and its backward reads them. (float16:
    # torch's backward is neither this nor jax's derivative of the float32 forward, both an
    # ulp or a few off; the latter is kept)
    low = x.dtype
    value = _group_norm_value(x, *wb, groups=groups, eps=eps, has_w=has_w, has_b=has_b)
    shape = x.shape
    xg = x.astype(jnp.float32).reshape((shape[0], groups, -1))
    mean = jnp.mean(xg, axis=-1, keepdims=True)
    rstd = jax.lax.rsqrt(jnp.mean(jnp.square(xg - mean), axis=-1, keepdims=True) + eps)
    if all(a.dtype == low for a in wb):
        mean, rstd = mean.astype(low).astype(jnp.float32), rstd.astype(low).astype(jnp.float32)
    y = _normalized((2,), xg, jax.lax.stop_gradient(mean),
                    jax.lax.stop_gradient(rstd)).reshape(shape)
    bshape = (1, -1) + (1,) * (x.ndim - 2)
    if has_w:
        y = y * wb[0].astype(jnp.float32).reshape(bshape)
    if has_b:
        y = y + wb[-1].astype(jnp.float32).reshape(bshape)
    return (y + jax.lax.stop_gradient(value.astype(jnp.float32) - y)).astype(low)


@_opmath
def _group_norm_value(x, *wb, groups, eps, has_w, has_b):
    shape = x.shape
    n = shape[0]
    xg = x.reshape((n, groups, int(np.prod(shape[1:])) // groups))   # (n may be 0)
    mean = jnp.mean(xg, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(xg - mean), axis=-1, keepdims=True)
    y = ((xg - mean) * jax.lax.rsqrt(var + eps)).reshape(shape)
    bshape = (1, -1) + (1,) * (x.ndim - 2)
    i = 0
    if has_w:
        y = y * wb[i].reshape(bshape)
        i += 1
    if has_b:
        y = y + wb[i].reshape(bshape)
    return y


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.ndim}")
    c = input.shape[1]
    shape = list(input.shape)
    # torch's Python _verify_batch_size on the grouped shape (num_groups=0: its // raises)
    vsize = [shape[0] * c // num_groups, num_groups] + shape[2:]
    if num_groups > 0 and math.prod([vsize[0]] + vsize[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{vsize}")
    if num_groups <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups,"
                           f" but got input of shape {shape} and num_groups={num_groups}")
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != c):
            # (torch's bias message shows the weight's shape: [0] without a weight)
            shown = (list(t.shape) if what == "weight" else
                     list(weight.shape) if weight is not None else [0])
            raise RuntimeError(f"Expected {what} to be a vector of size equal to the number of "
                               f"channels in input, but got {what} of shape {shown} and input "
                               f"of shape {shape}")
    _norm_dtype(input, "GroupNormKernelImpl")
    args = [a for a in (weight, bias) if a is not None]
    return apply(_group_norm, input, *args, groups=int(num_groups), eps=float(eps),
                 has_w=weight is not None, has_b=bias is not None)


@functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
def _normalized(axes, xf, mean, rstd):
    """``(xf - mean) * rstd`` where ``mean`` and ``rstd`` are ``xf``'s statistics over ``axes``
    as a torch kernel stored them (bfloat16/float16 input: rounded to its dtype), passed as
    values: the derivative is torch's normalisation backward evaluated at those stored values,
    ``rstd * (t - mean(t) - d * rstd**2 * mean(d * t))`` with ``d = xf - mean`` (symmetric:
    its own transpose), not a derivative through their computation and rounding."""
    return (xf - mean) * rstd


@_normalized.defjvp
def _normalized_jvp(axes, primals, tangents):
    xf, mean, rstd = primals
    t = tangents[0]
    d = xf - mean
    cnt = float(np.prod([xf.shape[a] for a in axes]))
    ty = rstd * (t - jnp.sum(t, axis=axes, keepdims=True) / cnt
                 - d * jnp.square(rstd) * jnp.sum(d * t, axis=axes, keepdims=True) / cnt)
    return d * rstd, ty


def _batch_norm_low_train(x, xf, mean, invstd, args, axes, bshape, has_w, has_b, i):
    """A bfloat16/float16 batch norm over the batch statistics: torch's forward (``x * alpha +
    beta`` in float32, one rounding) with its backward (``_normalized``)."""
    low = x.dtype
    w = args[i].reshape(bshape).astype(jnp.float32) if has_w else None
    b = args[i + has_w].reshape(bshape).astype(jnp.float32) if has_b else None
    alpha = invstd * w if has_w else invstd
    beta = (b if has_b else 0.0) - mean * alpha
    value = xf * alpha + beta                     # (torch's forward arithmetic, its bits)
    n = _normalized(axes, xf, jax.lax.stop_gradient(mean), jax.lax.stop_gradient(invstd))
    y = n * w if has_w else n
    if has_b:
        y = y + b
    # the forward's value, the backward of ``n * w + b``
    return (y + jax.lax.stop_gradient(value - y)).astype(low)


@defop("batch_norm", grad_name="NativeBatchNormBackward0")
def _batch_norm(x, *args, training, eps, has_w, has_b, has_stats):
    # torch's CPU kernel: statistics in float32; with bfloat16/float16 parameters (or none)
    # the batch mean and inverse std are stored in the input's dtype; then
    # y = x * alpha + beta with alpha = invstd * weight, beta = bias - mean * alpha in float32
    low = x.dtype if x.dtype in _HALF else None
    params_low = all(a.dtype == x.dtype for a in args)
    xf = x.astype(jnp.float32) if low else x
    axes = (0,) + tuple(range(2, x.ndim))
    bshape = (1, -1) + (1,) * (x.ndim - 2)

    def arg(i):
        a = args[i].reshape(bshape)
        return a.astype(xf.dtype) if low else a

    i = 0
    if training or not has_stats:
        mean = jnp.mean(xf, axis=axes, keepdims=True)
        invstd = jax.lax.rsqrt(jnp.mean(jnp.square(xf - mean), axis=axes, keepdims=True) + eps)
        if low:
            if params_low:
                mean = mean.astype(low).astype(jnp.float32)
                invstd = invstd.astype(low).astype(jnp.float32)
            # torch's backward: its formula with the stored statistics
            return _batch_norm_low_train(x, xf, mean, invstd, args, axes, bshape,
                                         has_w, has_b, 2 if has_stats else 0)
        if has_stats:
            i = 2
    else:
        mean, invstd = arg(0), jax.lax.rsqrt(arg(1) + eps)
        i = 2
    if not low:
        y = (x - mean) * invstd
        if has_w:
            y = y * arg(i)
            i += 1
        if has_b:
            y = y + arg(i)
        return y
    alpha = invstd
    if has_w:
        alpha = alpha * arg(i)
        i += 1
    beta = (arg(i) if has_b else 0.0) - mean * alpha
    return (xf * alpha + beta).astype(low)


@defop("batch_norm_update_stats", differentiable=False)
def _batch_norm_update(x, rm, rv, momentum):
    axes = (0,) + tuple(range(2, x.ndim))
    n = x.size // x.shape[1]
    mean = jnp.mean(x, axis=axes)
    var = jnp.mean(jnp.square(x - mean.reshape((1, -1) + (1,) * (x.ndim - 2))), axis=axes)
    unbiased = var * (n / max(n - 1, 1))
    return ((1 - momentum) * rm + momentum * mean.astype(rm.dtype),
            (1 - momentum) * rv + momentum * unbiased.astype(rv.dtype))


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _batch_norm_impl(input, running_mean, running_var, weight, bias, training, momentum,
                            eps)


def _batch_norm_impl(input, running_mean, running_var, weight, bias, training, momentum, eps):
    if training:
        size = tuple(input.shape)
        n = 1
        for i, s in enumerate(size):
            if i != 1:
                n *= s
        if n == 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {input.shape}")
    if input.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, "
                         f"{input.ndim - 1}], but got 1)")
    if input.ndim >= 2:
        c = input.shape[1]
        for what, t in (("running_mean", running_mean), ("running_var", running_var),
                        ("weight", weight), ("bias", bias)):
            if t is not None and t.numel() != c:
                raise RuntimeError(f"{what} should contain {c} elements not {t.numel()}")
    if not training:
        for what, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is None:
                raise RuntimeError(f"{what} must be defined in evaluation mode")
    _norm_dtype(input, "batch_norm")
    params = [t for t in (weight, bias, running_mean, running_var) if t is not None]
    if any(t.dtype is not input.dtype for t in params):
        # torch's CPU kernel: the parameters in the input's dtype, or float32 ones with a
        # float16 / bfloat16 input
        if any(t.dtype is not D.float32 for t in params):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if input.dtype not in (D.float16, D.bfloat16):
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
    has_stats = running_mean is not None and running_var is not None
    if training and has_stats and input.numel() > 0:
        # (torch leaves the running statistics alone for an empty batch)
        m, v = apply(_batch_norm_update, input.detach(), running_mean, running_var,
                     momentum=float(momentum))
        running_mean._set_data(_fused.raw(m))        # (fused eager: pending stays pending)
        running_var._set_data(_fused.raw(v))
        # training normalises with the batch statistics: the running buffers are not operands
        # of the normalisation, so a later forward's in-place update of them (a module called
        # twice before backward) does not invalidate this one's backward, as in torch
        has_stats = False
    args = [running_mean, running_var] if has_stats else []
    args += [a for a in (weight, bias) if a is not None]
    return apply(_batch_norm, input, *args, training=bool(training), eps=float(eps),
                 has_w=weight is not None, has_b=bias is not None, has_stats=has_stats)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                         f"{input.size()}")
    n, c = input.shape[0], input.shape[1]
    x = input.reshape(1, n * c, *input.shape[2:])
    rm = rv = None
    if running_mean is not None:
        rm = running_mean.detach().repeat(n)        # (pending statistics stay pending)
        rv = running_var.detach().repeat(n)
    # (torch's: a batch norm of the (1, n * c, ...) view with the affine parameters repeated,
    # so that the result keeps the input's dtype and is rounded once)
    w = weight.repeat(n) if weight is not None else None
    b = bias.repeat(n) if bias is not None else None
    out = _batch_norm_impl(x, rm, rv, w, b, use_input_stats, momentum, eps)
    if running_mean is not None and use_input_stats:
        running_mean._set_data(_fused.raw(rm.reshape(n, c).mean(0)))
        running_var._set_data(_fused.raw(rv.reshape(n, c).mean(0)))
    return out.reshape(tuple(input.shape))


# ================================================================== losses

_REDUCTIONS = ("none", "mean", "sum")


def _legacy_reduction(size_average, reduce, reduction):
    """torch's ``_Reduction.legacy_get_string``: the deprecated ``size_average``/``reduce``
    arguments, when given, decide the reduction (with torch's UserWarning, once per call)."""
    if size_average is None and reduce is None:
        return reduction
    from ._reduction import legacy_get_string
    return legacy_get_string(size_average, reduce)


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS and reduction != "batchmean":
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return jnp.mean(loss)
    if reduction == "sum":
        return jnp.sum(loss)
    return loss


_SCALAR_NAMES = {"add": "AddBackward1", "mul": "MulBackward1", "div": "DivBackward1"}


@defop("scalar_arith", promote="float", saves=False,
       grad_name=lambda kw: _SCALAR_NAMES[kw["kind"]])
def _scalar_arith(a, b, kind):
    """``a + b``, ``a * b`` or ``a / b`` for a Python number ``b``: ATen's Tensor-Scalar
    overloads, which torch's C++ losses call (``AddBackward1``, ``MulBackward1``,
    ``DivBackward1``). Python's ``t / 2`` wraps the number in a tensor and is
    ``DivBackward0``."""
    return a + b if kind == "add" else a * b if kind == "mul" else a / b


def _scalar(kind, a, b):
    return apply(_scalar_arith, a, b, kind=kind)


def _loss_name(base):
    def name(kw):
        r = kw.get("reduction")
        return {"mean": "MeanBackward0", "sum": "SumBackward0"}.get(r, base)
    return name


def _pointwise_loss(name, grad_name):
    def deco(fn):
        return defop("loss_" + name, promote="common", grad_name=grad_name)(fn)
    return deco


def _broadcastable(a, b):
    """torch's RuntimeError when ``a`` and ``b`` (in the order torch's composite loss meets
    them) do not broadcast."""
    from .._registry import broadcast_error
    msg = broadcast_error([tuple(a.shape), tuple(b.shape)])
    if msg:
        raise RuntimeError(msg)


def _check_reduction_named(reduction):
    """The reduction check of the losses torch writes in Python (``"x is not valid"``)."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not valid")
    return reduction


def _class_target_dtype(target, what="expected target dtype to be Long or Byte, but got ",
                        input=None):
    if target.dtype not in (D.int64, D.uint8):
        raise RuntimeError(what + D.legacy_name(target.dtype))
    if input is not None and input.ndim > 2 and target.dtype is D.uint8:
        # torch's nll_loss2d kernel (inputs of more than 2 dimensions) takes Long only
        raise RuntimeError("expected scalar type Long but found Byte")


def _no_grad_arg(fn, arg, t):
    """torch's autograd kernels refuse a gradient-requiring tensor for an argument they have no
    derivative for (a loss's class weights)."""
    if t is not None and t.requires_grad and _gm.is_grad_enabled():
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument "
                           f"'{arg}'. This input cannot have requires_grad True.")


def _check_class_weight(weight, n_classes, prefix=""):
    if weight is not None and (weight.ndim != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"{prefix}weight tensor should be defined either for all "
                           f"{n_classes} classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")


def _check_sizes(input, target, name):
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input "
                      f"size ({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.",
                      stacklevel=_stacklevel(3))


@_pointwise_loss("mse", "MseLossBackward0")
def _mse(x, y, reduction):
    return _reduce(jnp.square(x - y), reduction)


def _weighted_loss(elementwise, weight, input, reduction, mean_by_weight=True):
    """torch's Python path for a per-element ``weight`` (mse/l1: mean = sum / sum(weight);
    huber: a plain mean of the weighted losses)."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    loss = elementwise() * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if mean_by_weight else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', "
                     "'sum'.")


_SUB_BOOL2 = ("Subtraction, the `-` operator, with two bool tensors is not supported. Use the "
              "`^` or `logical_xor()` operator instead.")
_SUB_BOOL1 = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
              "trying to invert a mask, use the `~` or `logical_not()` operator instead.")
_NEG_BOOL = ("Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
             "to invert a mask, use the `~` or `logical_not()` operator instead.")
_CLAMP_COMPLEX = "clamp is not supported for complex types"


def _int_to_default_float(out, *ts):
    """torch's composite forms meet a float scalar or a true division on integer operands
    (after their integer steps, which wrap as torch's): the result is the default float dtype,
    not the float64 that x64 jax widens to."""
    if all(not (t.dtype.is_floating_point or t.dtype.is_complex) for t in ts):
        return out.to(D.get_default_dtype())
    return out


def _loss_kernel(kernel, input, target):
    """torch's CPU loss kernels (mse, smooth_l1, huber) dispatch on the floating types of the
    operands' common dtype: an integer, bool or complex one raises their NotImplementedError."""
    common = D.promote_types(input.dtype, target.dtype)
    if not common.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{D.legacy_name(common)}'")


def _expanded(input, target):
    from .. import broadcast_tensors
    return broadcast_tensors(input, target)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _check_sizes(input, target, "mse_loss")
    if weight is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
        x, t = _expanded(input, target)
        return _weighted_loss(lambda: (x - t).pow(2), weight, input, reduction)
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    _loss_kernel("mse_cpu", input, target)
    return apply(_mse, input, target, reduction=reduction)


def _abs_t(d):
    # torch's d|x|/dx at 0 is 0 (sign)
    return jnp.where(d > 0, d, -d) * jnp.where(d == 0, 0.0, 1.0).astype(d.dtype) \
        if False else jnp.abs(d)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """|input - target| reduced, composed as torch composes it (Mean/Sum over Abs over Sub)."""
    input, target = _cast_composite("l1_loss", input, target)   # (autocast: one op)
    _check_sizes(input, target, "l1_loss")
    if weight is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
        x, t = _expanded(input, target)
        return _weighted_loss(lambda: (x - t).abs(), weight, input, reduction)
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    d = (input - target).abs()
    if reduction == "mean":
        return d.mean()
    return d.sum() if reduction == "sum" else d


@_pointwise_loss("smooth_l1", "SmoothL1LossBackward0")
def _smooth_l1(x, y, reduction, beta):
    d = jnp.abs(x - y)
    return _reduce(jnp.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _check_sizes(input, target, "smooth_l1_loss")
    if beta == 0:
        # torch runs l1_loss for beta=0 ((input - target).abs() and the reduction: its graph
        # is Mean/Sum over Abs over Sub)
        return l1_loss(input, target, reduction=reduction)
    _loss_kernel("smooth_l1_cpu", input, target)
    return apply(_smooth_l1, input, target, reduction=reduction, beta=float(beta))


@_pointwise_loss("huber", "HuberLossBackward0")
def _huber(x, y, reduction, delta):
    d = jnp.abs(x - y)
    return _reduce(jnp.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _check_sizes(input, target, "huber_loss")
    if weight is not None:
        x, t = _expanded(input, target)
        return _weighted_loss(lambda: apply(_huber, x, t, reduction="none", delta=float(delta)),
                              weight, input, reduction, mean_by_weight=False)
    _check_reduction(reduction)
    _loss_kernel("huber_cpu", input, target)
    return apply(_huber, input, target, reduction=reduction, delta=float(delta))


@_pointwise_loss("soft_margin", "SoftMarginLossBackward0")
def _soft_margin(x, y, reduction):
    return _reduce(jnp.log1p(jnp.exp(-y * x)), reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """torch computes the loss in place in a tensor of ``input``'s shape and dtype,
    ``neg_out(out, input).mul_(target).exp_().log1p_()``: the result has ``input``'s dtype,
    ``target`` may broadcast to ``input``'s shape but not widen it (torch's "output with
    shape ... doesn't match the broadcast shape ..."), and a bool or integer ``input`` is
    refused by the negation or by the in-place float results."""
    from .._registry import inplace_broadcast_error
    from .._ops.typeinfo import can_cast
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    _no_grad_arg("soft_margin_loss", "target", target)
    if input.dtype is D.bool:
        raise RuntimeError(_NEG_BOOL)
    msg = inplace_broadcast_error(input.shape, target.shape)
    if msg:
        raise RuntimeError(msg)
    common = D.promote_types(input.dtype, target.dtype)
    if not can_cast(common, input.dtype):        # mul_(target)
        raise RuntimeError(f"result type {D.legacy_name(common)} can't be cast to the desired "
                           f"output type {D.legacy_name(input.dtype)}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):       # exp_()
        raise RuntimeError(f"result type {D.legacy_name(D.get_default_dtype())} can't be cast "
                           f"to the desired output type {D.legacy_name(input.dtype)}")
    if target.dtype is not input.dtype:
        target = target.to(input.dtype)
    return apply(_soft_margin, input, target, reduction=reduction)


def _class_last(x, ndim):
    """Move the class dim (1, or 0 for unbatched input) to the end."""
    if ndim == 1:
        return x[None, :]
    return jnp.moveaxis(x, 1, -1)


def _nll_cascade(picked, wt, valid, weighted, reduction):
    """torch's CPU nll_loss reduction in bfloat16/float16: a cascade of 8 partial sums kept in
    the input's dtype (every add rounded), level j flushed into level j+1 after element ``b``
    when ``b % 16 ** (j + 1) == 0`` (ignored elements neither add nor flush), the levels then
    added in order; the mean divides by the total weight, also in the input's dtype."""
    low, f32 = picked.dtype, jnp.float32

    def rnd(v):
        return v.astype(low).astype(f32)

    n = picked.size
    xs = (jnp.arange(n), rnd(picked.reshape(-1).astype(f32) * wt.reshape(-1).astype(f32)),
          wt.reshape(-1).astype(f32), valid.reshape(-1))

    def step(state, x):
        b, t, w, ok = x
        loss, wsum = state
        nl, nw = loss.at[0].set(rnd(loss[0] - t)), wsum.at[0].set(rnd(wsum[0] + w))
        for j in range(7):
            flush = (b % (16 ** (j + 1))) == 0
            nl = jnp.where(flush, nl.at[j + 1].set(rnd(nl[j + 1] + nl[j])).at[j].set(0.0), nl)
            nw = jnp.where(flush, nw.at[j + 1].set(rnd(nw[j + 1] + nw[j])).at[j].set(0.0), nw)
        return (jnp.where(ok, nl, loss), jnp.where(ok, nw, wsum)), None

    zero = jnp.zeros((8,), f32)
    (loss, wsum), _ = _tiers.scan(step, (zero, zero), xs)
    total = jnp.zeros((), f32)
    for j in range(8):
        total = rnd(total + loss[j])
    if reduction == "sum":
        return total.astype(low)
    if weighted:
        tw = jnp.zeros((), f32)
        for j in range(8):
            tw = rnd(tw + wsum[j])
    else:
        tw = rnd(jnp.sum(valid).astype(f32))
    return (total / tw).astype(low)


def _pick_last(x, idx):
    """``x[..., idx[...]]``: one element of the last axis per position (``idx`` in range, int32),
    as one gather with batching dimensions (``take_along_axis`` built the same gather through
    index arithmetic that cost twice as much to trace and differentiate, four times with
    symbolic sizes)."""
    k = idx.ndim
    dn = jax.lax.GatherDimensionNumbers(
        offset_dims=(), collapsed_slice_dims=(k,), start_index_map=(k,),
        operand_batching_dims=tuple(range(k)), start_indices_batching_dims=tuple(range(k)))
    return jax.lax.gather(x, idx[..., None], dn, (1,) * (k + 1),
                          mode=jax.lax.GatherScatterMode.CLIP)


def _nll_core(logp, target, w, ignore_index, reduction, label_smoothing=0.0):
    """logp: (..., C) with class last; target: (...) ints; w: (C,) or None."""
    c = logp.shape[-1]
    valid = target != ignore_index
    safe = jnp.where(valid, target, 0).astype(jnp.int32)
    picked = _pick_last(logp, safe)
    wt = jnp.take(w, safe) if w is not None else jnp.ones_like(picked)
    wt = jnp.where(valid, wt, jnp.zeros_like(wt))
    # an ignored target's term is 0 whatever the total weight: its gradient stays 0 when every
    # target is ignored (torch's backward writes nothing there; -0 * (g / 0) was NaN)
    loss = jnp.where(valid, -picked * wt, jnp.zeros_like(picked))
    if reduction == "none":
        red = loss
        denom = None
    elif logp.dtype in _HALF:
        red = _nll_cascade(picked, wt, valid, w is not None, reduction)
    elif reduction == "sum":
        red = jnp.sum(loss)
    else:
        denom = jnp.sum(wt)
        red = jnp.sum(loss) / denom
    if label_smoothing <= 0:
        return red
    smooth = -jnp.sum(logp * (w if w is not None else 1.0), axis=-1)
    smooth = jnp.where(valid, smooth, jnp.zeros_like(smooth))
    if reduction == "none":
        sred = smooth
    elif reduction == "sum":
        sred = jnp.sum(smooth)
    else:
        if w is not None:
            sred = jnp.sum(smooth) / jnp.sum(jnp.where(valid, jnp.take(w, safe), 0.0))
        else:
            sred = jnp.sum(smooth) / jnp.sum(valid)
    return (1 - label_smoothing) * red + sred * (label_smoothing / c)


def _nll_loss_vjp(cots, xs, needs, ignore_index, reduction, ndim):
    """NllLossBackward0 for (N, C) input of float32/64 and no weight gradient: at each kept
    target's class, ``-g * w[t]`` (``/ sum(w[t])`` for the mean), 0 elsewhere."""
    (g,), (x, target, *w) = cots, xs
    if ndim != 2 or x.dtype in _HALF or any(needs[1:]):
        return NotImplemented
    valid = target != ignore_index
    safe = jnp.where(valid, target, 0).astype(jnp.int32)
    if w:
        wt = jnp.where(valid, jnp.take(w[0], safe), jnp.zeros((), x.dtype))
    else:
        wt = valid.astype(x.dtype)
    if reduction == "none":
        coef = -g * wt
    elif reduction == "sum":
        coef = -g * wt
    else:
        coef = -g * wt / jnp.sum(wt)
    coef = jnp.where(valid, coef, jnp.zeros((), coef.dtype))
    hot = safe[:, None] == jnp.arange(x.shape[-1], dtype=jnp.int32)
    return [jnp.where(hot, coef[:, None], jnp.zeros((), coef.dtype))]


@defop("nll_loss", grad_name=lambda kw: "NllLossBackward0" if kw["ndim"] <= 2
       else "NllLoss2DBackward0", vjp=_nll_loss_vjp)
def _nll_loss(x, target, *w, ignore_index, reduction, ndim):
    logp = _class_last(x, ndim)
    if ndim == 1:
        target = target[None]
    out = _nll_core(logp, target, w[0] if w else None, ignore_index, reduction)
    return out[0] if ndim == 1 and reduction == "none" else out


def _check_float_input(input, kernel):
    """torch's NotImplementedError for integer input to the softmax/nll kernels."""
    if isinstance(input, Tensor) and not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{D.legacy_name(input.dtype)}'")


def _check_target_range(input, target, ignore_index):
    """torch's IndexError for class indices out of range (jax would clamp silently); in fused
    eager, a computed target is checked when its segment runs."""
    c = input.shape[0] if input.ndim == 1 else input.shape[1]
    if _fused.defer_check(_first_bad_target, [_fused.raw(target), c, ignore_index],
                          _target_error, within=(0, c - 1)):
        return
    d = target._data
    r = _fused.value_range(d)       # (the common case: within range, read once per array)
    if r is not None and r[0] >= 0 and r[1] < c:
        return
    t = np.asarray(d)
    e = _target_error(_first_bad_target(t, c, ignore_index))
    if e is not None:
        raise e


def _first_bad_target(t, c, ignore_index):
    """(a class index is out of range, the first that is), numpy or jax."""
    xp = np if isinstance(t, np.ndarray) else jnp
    flat = t.reshape(-1)
    if not flat.size:
        return xp.zeros(2, xp.int64)
    bad = (flat != ignore_index) & ((flat < 0) | (flat >= c))
    return xp.stack([bad.any().astype(xp.int64), flat[xp.argmax(bad)].astype(xp.int64)])


def _target_error(v):
    return IndexError(f"Target {int(v[1])} is out of bounds.") if v[0] else None


def _check_target(input, target, weight=None):
    """torch's nll_loss_nd checks, in its order and words; the class weight's too (checked
    here for inputs of more than 2 dimensions, which torch runs as nll_loss2d)."""
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if input.ndim == 1:
        if target.ndim == 1 and target.shape[0] != 1:
            raise ValueError("For 1D input, 1D target must have size 1, but got target size: "
                             f"{target.shape[0]}")
        if target.ndim > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        return
    if input.ndim == 2:
        # (torch compares the batch sizes first: a (B*T, V) input with a (B, T) target)
        tb = target.shape[0] if target.ndim else 0
        if tb != input.shape[0]:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                             f"batch_size ({tb}).")
        if target.ndim != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        return
    tb = target.shape[0] if target.ndim else 0
    if tb != input.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({tb}).")
    want = (input.shape[0],) + tuple(input.shape[2:])

    def check_weight():
        if weight is not None and weight.numel() != input.shape[1]:
            raise RuntimeError("weight tensor should be defined either for all or no classes")

    if input.ndim == 4:
        if target.ndim != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                               f"targets of dimension: {target.ndim}")
        check_weight()
        if tuple(target.shape) != want:
            raise RuntimeError(f"size mismatch (got input: {list(input.shape)} , target: "
                               f"{list(target.shape)}")
        return
    if tuple(target.shape) != want:
        raise RuntimeError(f"Expected target size {list(want)}, got {list(target.shape)}")
    check_weight()


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    _check_target(input, target, weight)
    _no_grad_arg("nll_loss_forward" if input.ndim <= 2 else "nll_loss2d_forward", "weight",
                 weight)
    if input.ndim <= 2:
        _check_class_weight(weight, input.shape[0] if input.ndim == 1 else input.shape[1])
    if input.ndim == 1 and target.ndim == 1:
        target = target.reshape(())                       # (one class index, as torch reads it)
    _check_float_input(input, "nll_loss_out_frame" if input.ndim <= 2 else "nll_loss2d_forward_out_frame")
    _class_target_dtype(target, input=input)
    _check_target_range(input, target, ignore_index)
    return _nll(input, target, weight, ignore_index, reduction)


def _nll(input, target, weight, ignore_index, reduction):
    """nll_loss's op on checked arguments."""
    args = [weight] if weight is not None else []
    if (input.ndim == 3 or input.ndim > 4) and input.numel() and target.numel():
        # torch's nll_loss_nd: the 2-d loss of (N, C, 1, -1) and (N, 1, -1) reshapes of the
        # contiguous operands, an unreduced result viewed back to the target's shape
        n, c = input.shape[:2]
        ret = apply(_nll_loss, input.contiguous().reshape(n, c, 1, -1),
                    target.contiguous().reshape(n, 1, -1), *args,
                    ignore_index=int(ignore_index), reduction=reduction, ndim=4)
        return ret.view(n, *input.shape[2:]) if reduction == "none" else ret
    return apply(_nll_loss, input, target, *args, ignore_index=int(ignore_index),
                 reduction=reduction, ndim=input.ndim)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """log_softmax + nll_loss (class indices) or the probability form, composed as torch
    composes it, so the graph shows ``NllLossBackward0`` over ``LogSoftmaxBackward0``."""
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    # (torch's autocast runs cross_entropy_loss as one op: in float32 on the CPU)
    input, target, weight = _cast_composite("cross_entropy", input, target, weight)
    if label_smoothing > 1.0:
        # (torch checks the upper bound only: a negative value is no smoothing; a C++ double,
        # 2.0 prints as "2")
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{float(label_smoothing):g}")
    # torch: class probabilities when the shapes are equal, class indices otherwise
    probs = tuple(target.shape) == tuple(input.shape)
    class_dim = 0 if input.ndim == 1 else 1
    if probs:
        if not target.dtype.is_floating_point:
            raise RuntimeError(f"Expected floating point type for target with class "
                               f"probabilities, got {D.legacy_name(target.dtype)}")
        if ignore_index >= 0:
            raise RuntimeError("ignore_index is not supported for floating point target")
        _check_class_weight(weight, input.shape[class_dim], "cross_entropy: ")
    else:
        _check_target(input, target, weight)
        _no_grad_arg("nll_loss_forward" if input.ndim <= 2 else "nll_loss2d_forward", "weight",
                     weight)
        if input.ndim <= 2:
            _check_class_weight(weight, input.shape[class_dim])
        if input.ndim == 1 and target.ndim == 1:
            target = target.reshape(())
        _class_target_dtype(target, input=input)
        _check_target_range(input, target, ignore_index)
    lsm = log_softmax(input, class_dim)
    n_classes = input.shape[class_dim]
    if weight is not None:
        wshape = [1] * input.ndim
        wshape[class_dim] = n_classes
        weight_ = weight.view(tuple(wshape))
    if probs:
        if label_smoothing > 0:
            target = _scalar("add", _scalar("mul", target, 1 - label_smoothing),
                             label_smoothing / n_classes)
        prod = lsm * target if weight is None else lsm * target * weight_
        if reduction == "mean":
            return _scalar("div", -prod.sum(), input.numel() // n_classes if n_classes else 0)
        if reduction == "sum":
            return -prod.sum()
        return -prod.sum(class_dim)
    nll = _nll(lsm, target, weight, ignore_index, reduction)    # (checked above)
    if label_smoothing <= 0:
        return nll
    ignore_mask = target == ignore_index
    smooth = -(lsm * weight_).sum(class_dim) if weight is not None else -lsm.sum(class_dim)
    smooth = smooth.masked_fill(ignore_mask, 0.0)
    if reduction == "mean":
        if weight is not None:
            denom = weight.gather(0, target.masked_select(~ignore_mask).flatten()).sum()
        else:
            denom = (~ignore_mask).sum()
        ret = smooth.sum() / denom
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth
    return (_scalar("mul", nll, 1 - label_smoothing)
            + _scalar("mul", ret, label_smoothing / n_classes))


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``.

    ``input`` is (in_features) or (N, in_features); ``linear_weight`` (C, d_1, ..., d_K,
    in_features) gives the logits (N, C, d_1, ..., d_K) (K-dimensional loss: batched input
    only), ``linear_bias`` (C, d_1, ..., d_K). ``ignore_index`` None is -100 for class indices
    and is refused for class probabilities. ``options`` (``nn.LinearCrossEntropyOptions``)
    chooses the chunked path (``nn.modules.linear_cross_entropy``) for int64 class indices
    with reduction "mean", "sum" or "none", no label smoothing and K == 0; otherwise it warns
    and computes the reference path."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    num_batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError("expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and "
                           f"{linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not num_batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, "
                           f"(N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*num_batches, num_classes, *out_features)
    # class probabilities are told from indices by the target's shape, as cross_entropy does
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    chunkable = (not out_features and reduction in {"mean", "sum", "none"}
                 and label_smoothing == 0.0 and target.dtype == D.int64)
    if options is not None and not chunkable:
        warnings.warn(
            "linear_cross_entropy: ``options`` ignored; chunked path needs reduction in "
            "{'mean','sum','none'}, label_smoothing == 0, target.dtype == int64, out_features "
            f"== (). Got reduction={reduction!r}, label_smoothing={label_smoothing}, "
            f"target.dtype={target.dtype}, out_features={out_features}, tracing=False, "
            f"linear_bias.shape="
            f"{tuple(linear_bias.shape) if linear_bias is not None else None}.", stacklevel=_stacklevel(2))
    if options is not None and chunkable and _chunk_checks(
            input, linear_weight, target, linear_bias, weight, ignore_index, num_classes):
        from .modules.linear_cross_entropy import chunked
        batched = bool(num_batches)
        if not batched:
            input, target = input.unsqueeze(0), target.unsqueeze(0)
        options = options._adjust(num_batches=input.shape[0], in_features=in_features,
                                  num_classes=num_classes, dtype=input.dtype,
                                  device=input.device)
        result = chunked(input, linear_weight, target, linear_bias, weight, reduction,
                         ignore_index, options)
        return result if batched else result.squeeze(0)
    if out_features:
        linear_weight = linear_weight.reshape((math.prod(out_features, start=num_classes),
                                               in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(math.prod(out_features, start=num_classes))
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)


def _chunk_checks(input, linear_weight, target, linear_bias, weight, ignore_index, C):
    """Whether the chunked path can take these operands: the dtypes agree, the target is one
    class per row and the class weights are (C,); when not, the reference path computes, and
    raises torch's error for them. A target outside [0, C) (other than ignore_index) raises
    the chunked path's error."""
    dts = {t.dtype for t in (input, linear_weight, linear_bias) if t is not None}
    if len(dts) != 1 or (weight is not None and tuple(weight.shape) != (C,)):
        return False
    if tuple(target.shape) != tuple(input.shape[:-1]):
        return False
    t = np.asarray(target._data).reshape(-1)
    bad = t[((t < 0) | (t >= C)) & (t != ignore_index)]
    if bad.size:
        # the chunked kernel's gather of the target's logit refuses it
        raise RuntimeError(f"index {bad[0]} is out of bounds for dimension 1 with size {C}")
    return True


@jax.custom_vjp
def _bce_elem(x, y):
    """-(y log x + (1-y) log(1-x)) with the logs clamped at -100, as torch."""
    return -(y * jnp.maximum(jnp.log(x), -100.0) + (1 - y) * jnp.maximum(jnp.log1p(-x), -100.0))


def _bce_elem_fwd(x, y):
    return _bce_elem(x, y), (x, y)


def _bce_elem_bwd(res, g):
    # torch's binary_cross_entropy_backward: (x - y) / max((1 - x) x, 1e-12) (finite at 0 and 1)
    # and its target gradient -logit(x)
    x, y = res
    gx = g * (x - y) / jnp.maximum((1 - x) * x, jnp.asarray(1e-12, x.dtype))
    gy = -g * (jnp.log(x) - jnp.log1p(-x))
    return gx, gy


_bce_elem.defvjp(_bce_elem_fwd, _bce_elem_bwd)


@defop("binary_cross_entropy", promote="common", grad_name="BinaryCrossEntropyBackward0")
def _bce(x, y, *w, reduction):
    loss = _bce_elem(x, y)
    if w:
        loss = loss * w[0]
    return _reduce(loss, reduction)


def _bce_out_of_range(x, y):
    """(an element is outside [0, 1], whether the first is the input's (0) or the target's
    (1)): torch's kernel checks each element's input, then its target (NaN fails both)."""
    xp = np if isinstance(x, np.ndarray) else jnp
    bad_x, bad_y = xp.broadcast_arrays(~((x >= 0) & (x <= 1)), ~((y >= 0) & (y <= 1)))
    either = (bad_x | bad_y).reshape(-1)
    if not either.size:
        return xp.zeros(2, xp.int64)
    first = xp.argmax(either)
    return xp.stack([either.any().astype(xp.int64),
                     (~bad_x.reshape(-1)[first]).astype(xp.int64)])


def _bce_error(v):
    if v[0]:
        return RuntimeError(f"all elements of {'target' if v[1] else 'input'} should be "
                            f"between 0 and 1")
    return None


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    if target.dtype is not input.dtype and _gm._state.autocast is None:
        # (under autocast, torch casts both to float32 before this check)
        raise RuntimeError(f"Found dtype {D.legacy_name(target.dtype)} but expected "
                           f"{D.legacy_name(input.dtype)}")
    _float_kernel("binary_cross_entropy", input)
    _no_grad_arg("binary_cross_entropy", "weight", weight)
    if weight is not None:
        try:
            np.broadcast_shapes(tuple(weight.shape), tuple(input.shape))
            ok = len(weight.shape) <= len(input.shape) and np.broadcast_shapes(
                tuple(weight.shape), tuple(input.shape)) == tuple(input.shape)
        except ValueError:
            ok = False
        if not ok:
            bad = next((i for i in range(1, weight.ndim + 1) if weight.shape[-i] not in
                        (1, input.shape[-i] if i <= input.ndim else 1)), 1)
            raise RuntimeError(f"Attempting to broadcast a dimension of length "
                               f"{weight.shape[-bad]} at -{bad}! Mismatching argument at index 1 "
                               f"had {weight.shape}; but expected shape should be broadcastable "
                               f"to {list(input.shape)}")
    # torch's kernel checks each element's input, then its target: the first element out of
    # [0, 1] in either names which (NaN fails both comparisons, as in torch)
    if not _fused.defer_check(_bce_out_of_range, [_fused.raw(input), _fused.raw(target)],
                              _bce_error):
        e = _bce_error(_bce_out_of_range(np.asarray(input._data), np.asarray(target._data)))
        if e is not None:
            raise e
    args = [weight] if weight is not None else []
    return apply(_bce, input, target, *args, reduction=reduction)


def _clamp_min(v, lo):
    """``v.clamp_min(lo)`` as torch differentiates it: the gradient passes where ``v >= lo``
    (``jnp.maximum`` halves it at a tie); NaN stays NaN."""
    return jnp.where(v < lo, jnp.asarray(lo, v.dtype), v)


def _positive(z):
    """``z`` where ``z > 0``, else 0, as torch's margin kernels sum ``if (z > 0)``: no gradient
    at ``z == 0`` (``jnp.maximum`` passes half), and a NaN counts as nothing."""
    return jnp.where(z > 0, z, jnp.zeros((), z.dtype))


def _softplus_neg(x):
    """log(1 + exp(-x)), as torch's kernel writes it (stable on both sides)."""
    return jnp.log1p(jnp.exp(-jnp.abs(x))) + jnp.maximum(-x, 0)


# binary_cross_entropy_with_logits differentiates by torch's formulas: d/dx = sigmoid(x) - y
# (with pos_weight, (pw * y + 1 - y) * sigmoid(x) - pw * y), d/dy = -x (with pos_weight,
# -x + (pw - 1) * softplus(-x)). Differentiating the forward's max and abs gave 0 - y at x = 0
# (a zero-initialised classifier's first logits) where torch gives 0.5 - y.

@jax.custom_jvp
def _bce_logits_plain(x, y):
    return (1 - y) * x + _softplus_neg(x)


@_bce_logits_plain.defjvp
def _bce_logits_plain_jvp(primals, tangents):
    (x, y), (dx, dy) = primals, tangents
    return _bce_logits_plain(x, y), (jax.nn.sigmoid(x) - y) * dx + (-x) * dy


@jax.custom_jvp
def _bce_logits_pw(x, y, pw):
    return (1 - y) * x + ((pw - 1) * y + 1) * _softplus_neg(x)


@_bce_logits_pw.defjvp
def _bce_logits_pw_jvp(primals, tangents):
    (x, y, pw), (dx, dy, dpw) = primals, tangents
    t = pw * y
    sp = _softplus_neg(x)
    return (_bce_logits_pw(x, y, pw), ((t + 1 - y) * jax.nn.sigmoid(x) - t) * dx
            + (-x + (pw - 1) * sp) * dy + y * sp * dpw)


@defop("binary_cross_entropy_with_logits", promote="common",
       grad_name="BinaryCrossEntropyWithLogitsBackward0")
def _bce_logits(x, y, *wp, reduction, has_w, has_pw):
    i = 0
    w = pw = None
    if has_w:
        w = wp[i]
        i += 1
    if has_pw:
        pw = wp[i]
    if pw is not None:
        loss = _bce_logits_pw(x, y, pw)
    else:
        loss = _bce_logits_plain(x, y)
    if w is not None:
        loss = loss * w
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    if not target.dtype.is_floating_point and input.dtype.is_floating_point:
        raise RuntimeError(f"result type {D.legacy_name(input.dtype)} can't be cast to the "
                           f"desired output type {D.legacy_name(target.dtype)}")
    _float_kernel("log_sigmoid_cpu", input)
    if pos_weight is not None:
        _broadcastable(pos_weight, target)
    _no_grad_arg("binary_cross_entropy_with_logits", "weight", weight)
    _no_grad_arg("binary_cross_entropy_with_logits", "pos_weight", pos_weight)
    args = [a for a in (weight, pos_weight) if a is not None]
    return apply(_bce_logits, input, target, *args, reduction=reduction,
                 has_w=weight is not None, has_pw=pos_weight is not None)


def _kl_div_name(kw):
    # torch.kl_div ends in exp(t) * (t - x) or xlogy(t, t) - t * x, then mean / sum; F.kl_div
    # computes "batchmean" as the sum divided in Python by the batch size (a 0-d input: the sum)
    r = kw["reduction"]
    if r == "batchmean":
        return "DivBackward0" if kw["x_ndim"] else "SumBackward0"
    return _loss_name("MulBackward0" if kw["log_target"] else "SubBackward0")(kw)


@defop("kl_div", promote="common", grad_name=_kl_div_name)
def _kl_div(x, t, reduction, log_target, x_ndim):
    if log_target:
        loss = jnp.exp(t) * (t - x)
    else:
        loss = jax.scipy.special.xlogy(t, t) - t * x
    if reduction == "batchmean":
        return jnp.sum(loss) / (x.shape[0] if x.ndim else 1)
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    legacy = size_average is not None or reduce is not None
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if reduction == "mean" and not legacy:
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", stacklevel=_stacklevel(2))
    if input.dtype.is_complex or target.dtype.is_complex:
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex) or not (
            target.dtype.is_floating_point or target.dtype.is_complex):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    _broadcastable(target, input)
    return apply(_kl_div, input, target, reduction=reduction, log_target=bool(log_target),
                 x_ndim=input.dim())


@defop("cosine_embedding_loss", promote="common", grad_name=_loss_name("AddBackward0"))
def _cos_emb(a, b, y, margin, reduction):
    eps = 1e-12
    prod = jnp.sum(a * b, axis=-1)
    m1 = jnp.sum(a * a, axis=-1) + eps
    m2 = jnp.sum(b * b, axis=-1) + eps
    cos = prod / jnp.sqrt(m1 * m2)
    loss = jnp.where(y == 1, 1 - cos, jnp.where(y == -1, _clamp_min(cos - margin, 0), 0.0))
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target.ndim == 1 and (input1.ndim != 2 or input2.ndim != 2):
        raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    if target.ndim == 0 and (input1.ndim != 1 or input2.ndim != 1):
        raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with "
                           f"sizes {list(input1.shape)} and {list(input2.shape)}.")
    if input1.dtype.is_complex or input2.dtype.is_complex:
        raise NotImplementedError(_CLAMP_COMPLEX)
    from .._registry import broadcast_error
    # torch: the inputs' product broadcasts, then where(target == 1, 1 - cos, ...) broadcasts
    # the target against the cosines (one per row)
    err = broadcast_error([tuple(input1.shape), tuple(input2.shape)])
    if not err:
        rows = tuple(np.broadcast_shapes(tuple(input1.shape), tuple(input2.shape)))[:-1]
        err = broadcast_error([tuple(target.shape), rows])
    if err:
        raise RuntimeError(err)
    # (torch's target only selects between the two branches: no gradient reaches it)
    return apply(_cos_emb, input1, input2, target.detach(), margin=float(margin),
                 reduction=reduction)


@defop("margin_ranking_loss", promote="common", grad_name=_loss_name("ClampMinBackward0"))
def _margin_ranking(a, b, y, margin, reduction):
    return _reduce(_clamp_min(-y * (a - b) + margin, 0), reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.shape}, input2: {input2.shape}, "
                           f"target: {target.shape} ")
    if input1.dtype is D.bool and input2.dtype is D.bool:
        raise RuntimeError(_SUB_BOOL2)
    if any(t.dtype.is_complex for t in (input1, input2, target)):
        raise NotImplementedError(_CLAMP_COMPLEX)
    return _int_to_default_float(apply(_margin_ranking, input1, input2, target,
                                       margin=float(margin), reduction=reduction),
                                 input1, input2, target)


@defop("triplet_margin_loss", promote="common", grad_name=_loss_name("ClampMinBackward0"))
def _triplet(a, p, n, margin, pnorm, eps, swap, reduction):
    dp = _pnorm(a - p + eps, pnorm, -1, False)
    dn = _pnorm(a - n + eps, pnorm, -1, False)
    if swap:
        ds = _pnorm(p - n + eps, pnorm, -1, False)
        dn = jnp.minimum(dn, ds)
    return _reduce(_clamp_min(margin + dp - dn, 0), reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, pd, n = anchor.ndim, positive.ndim, negative.ndim
    if not a == pd == n:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a}D, positive {pd}D, "
                           f"and negative {n}D inputs")
    _broadcastable(anchor, positive)
    _broadcastable(anchor, negative)
    if anchor.dtype is D.bool and positive.dtype is D.bool:
        raise RuntimeError(_SUB_BOOL2)
    if any(t.dtype.is_complex for t in (anchor, positive, negative)):
        # torch composes it of pairwise_distance (real for complex inputs) and clamp_min
        dp = pairwise_distance(anchor, positive, p, eps)
        dn = pairwise_distance(anchor, negative, p, eps)
        if swap:
            dn = _tl.minimum(dn, pairwise_distance(positive, negative, p, eps))
        loss = (margin + dp - dn).clamp_min(0)
        return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss
    return _int_to_default_float(
        apply(_triplet, anchor, positive, negative, margin=float(margin), pnorm=float(p),
              eps=float(eps), swap=bool(swap), reduction=reduction), anchor, positive, negative)


# ================================================================== attention

def _sdpa_grad_name(kw):
    if kw["math"]:
        return "ToCopyBackward0" if kw["upcast"] else "UnsafeViewBackward0"
    return "ScaledDotProductFlashAttentionForCpuBackward0"


@defop("scaled_dot_product_attention", grad_name=_sdpa_grad_name)
def _sdpa(q, k, v, *rest, scale, causal, dropout_p, mask_kind, gqa, math, upcast):
    L, S = q.shape[-2], k.shape[-2]
    if gqa and q.ndim >= 3 and q.shape[-3] != k.shape[-3]:
        rep = q.shape[-3] // k.shape[-3]
        k = jnp.repeat(k, rep, axis=-3)
        v = jnp.repeat(v, rep, axis=-3)
    out_dtype = q.dtype
    if math:
        # torch's math path: half precision computed in float32, sqrt(scale) on each of q and k,
        # masks added as -inf, and a softmax that gives 0 on fully masked rows
        if upcast:
            q, k, v = q.astype(jnp.float32), k.astype(jnp.float32), v.astype(jnp.float32)
        sf = abs(scale) ** 0.5
        s = jnp.matmul(q * (-sf if scale < 0 else sf), jnp.swapaxes(k * sf, -1, -2),
                       precision=_HI)
    else:
        s = jnp.matmul(q * scale, jnp.swapaxes(k, -1, -2), precision=_HI)
    i = 0
    if causal:
        tri = jnp.tril(jnp.ones((L, S), bool))
        s = jnp.where(tri, s, -jnp.inf)
    if mask_kind == "bool":
        s = jnp.where(rest[0], s, -jnp.inf)
        i = 1
    elif mask_kind == "float":
        # a float32 mask on a half-precision query: torch adds it in float32
        s = s.astype(jnp.result_type(s.dtype, rest[0].dtype)) + rest[0]
        i = 1
    # fully masked rows give 0 (torch's flash and math paths both), with finite gradients
    empty = jnp.all(s == -jnp.inf, axis=-1, keepdims=True)
    p = jax.nn.softmax(jnp.where(empty, 0.0, s).astype(s.dtype), axis=-1)
    p = jnp.where(empty, 0.0, p).astype(p.dtype)
    if dropout_p > 0:
        keep = jax.random.bernoulli(jax.random.wrap_key_data(rest[i]), 1 - dropout_p, p.shape)
        p = jnp.where(keep, p / (1 - dropout_p), 0.0)
    return jnp.matmul(p, v, precision=_HI).astype(out_dtype)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    from .attention import select_backend
    from .attention.bias import CausalBias
    if isinstance(attn_mask, CausalBias):
        return attn_mask._dispatch(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                   enable_gqa)
    float_mask = attn_mask is not None and attn_mask.dtype.is_floating_point
    query, key, value, cast_mask = _cast_composite("scaled_dot_product_attention", query, key, value,
                                             attn_mask if float_mask else None)
    if float_mask:
        attn_mask = cast_mask
    # torch's checks (sdp_utils): one dtype for query, key and value; a bool mask or one of
    # the query's dtype. A mask with is_causal=True: torch's CPU flash kernel applies both, its
    # math path raises
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {_CPP_NAMES[query.dtype.name]} key.dtype: "
                           f"{_CPP_NAMES[key.dtype.name]} and value.dtype: "
                           f"{_CPP_NAMES[value.dtype.name]} instead.")
    if attn_mask is not None and attn_mask.dtype.name not in ("bool", "float32") \
            and attn_mask.dtype != query.dtype:
        raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {_CPP_NAMES[attn_mask.dtype.name]} "
                           f"and  query.dtype: {_CPP_NAMES[query.dtype.name]} instead.")
    if query.dtype.is_complex:
        raise NotImplementedError(f'"softmax_lastdim_kernel_impl" not implemented for '
                                  f"'{D.legacy_name(query.dtype)}'")
    if not query.dtype.is_floating_point:
        raise RuntimeError(f"expected scalar type {D.legacy_name(D.get_default_dtype())} but "
                           f"found {D.legacy_name(query.dtype)}")
    use_math = select_backend(query, key, value, attn_mask, dropout_p,
                              enable_gqa) == "math"
    if is_causal and attn_mask is not None and use_math:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if query.dim() >= 2 and key.dim() >= 2 and not enable_gqa:
        qb, kb = tuple(query.shape[:-2]), tuple(key.shape[:-2])
        n = max(len(qb), len(kb))
        qb, kb = (1,) * (n - len(qb)) + qb, (1,) * (n - len(kb)) + kb
        for d, (a, b) in enumerate(zip(qb, kb)):
            if a != b and a != 1 and b != 1:
                raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor "
                                   f"b ({b}) at non-singleton dimension {d}")
    if query.dim() >= 3 and key.dim() == query.dim() and query.shape[-1] != key.shape[-1]:
        nb = 1
        for n in tuple(query.shape[:-2]):
            nb *= n
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{nb}, {query.shape[-1]}] but got: [{nb}, {key.shape[-1]}].")
    if attn_mask is not None and query.dim() >= 2 and key.dim() >= 2:
        # (torch adds the mask to the scores: its broadcast error names their sizes)
        batch = tuple(query.shape[:-2]) if enable_gqa else tuple(
            np.broadcast_shapes(tuple(query.shape[:-2]), tuple(key.shape[:-2])))
        msg = broadcast_error([batch + (query.shape[-2], key.shape[-2]),
                               tuple(attn_mask.shape)])
        if msg is not None:
            raise RuntimeError(msg)
    sc = 1.0 / math.sqrt(query.shape[-1]) if scale is None else float(scale)
    args = []
    kind = None
    if attn_mask is not None:
        kind = "bool" if attn_mask.dtype.name == "bool" else "float"
        args.append(attn_mask)
    if dropout_p > 0:
        args.append(_random.next_key_data())
    upcast = use_math and query.dtype.name in ("float16", "bfloat16")
    return apply(_sdpa, query, key, value, *args, scale=sc, causal=bool(is_causal),
                 dropout_p=float(dropout_p), mask_kind=kind, gqa=bool(enable_gqa), math=use_math,
                 upcast=upcast)


# ================================================================== padding

from .._ops.pad import pad  # noqa: E402,F401  (torch.nn.functional.pad is the one pad op)


# ================================================================== convolution

_DN = {1: ("NCH", "OIH", "NCH"), 2: ("NCHW", "OIHW", "NCHW"), 3: ("NCDHW", "OIDHW", "NCDHW")}


@defop("convolution", promote="common", grad_name="ConvolutionBackward0")
def _conv(x, w, *b, stride, padding, dilation, groups, nd, unbatched):
    if unbatched:
        x = x[None]
    y = jax.lax.conv_general_dilated(x, w, window_strides=stride, padding=padding,
                                     rhs_dilation=dilation, feature_group_count=groups,
                                     dimension_numbers=_DN[nd],
                                     precision=jax.lax.Precision.HIGHEST)
    if b:
        y = y + b[0].reshape((1, -1) + (1,) * nd)
    return y[0] if unbatched else y


def _conv_param(v, nd, name):
    """torch's expand_param_if_needed: one value, or one per spatial dimension."""
    if isinstance(v, (tuple, list)) and len(v) not in (1, nd):
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} "
                           "values to match the convolution dimensions, but got "
                           f"{name}={[int(a) for a in v]}")
    return _tup(v, nd)


_SPATIAL_NAMES = {1: ("height", "width"), 2: ("height", "width"), 3: ("depth", "height", "width")}


def _spatial_listing(name, vals, fill):
    """torch's ``name_height: v ...`` listing (1-d convolutions are 2-d with height ``fill``)."""
    vals = ((fill,) + tuple(vals)) if len(vals) == 1 else tuple(vals)
    return [f"{name}_{d}: {v}" for d, v in zip(_SPATIAL_NAMES[len(vals)], vals)]


def _check_conv_params(nd, stride, padding, dilation, groups, output_padding=None):
    """at::_convolution's checks of the geometry, in torch's order and words."""
    stride = _conv_param(stride, nd, "stride")
    if not isinstance(padding, str):
        padding = _conv_param(padding, nd, "padding")
    dilation = _conv_param(dilation, nd, "dilation")
    if output_padding is not None:
        output_padding = _conv_param(output_padding, nd, "output_padding")
    if not isinstance(padding, str) and any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if output_padding is not None and any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(v <= 0 for v in stride):
        raise RuntimeError("non-positive stride is not supported")
    if int(groups) <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(v <= 0 for v in dilation):
        if output_padding is None:
            raise RuntimeError("non-positive dilation is not supported")
        raise RuntimeError("dilation should be greater than zero, but got "
                           + ", ".join(_spatial_listing("dilation", dilation, 1)))
    if output_padding is not None and any(op >= s and op >= d for op, s, d
                                          in zip(output_padding, stride, dilation)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            + " ".join(_spatial_listing("output_padding", output_padding, 0)
                       + _spatial_listing("stride", stride, 1)
                       + _spatial_listing("dilation", dilation, 1)))
    return stride, padding, dilation, output_padding


_TENSOR_TYPE_NAMES = {"float16": "torch.HalfTensor", "bfloat16": "CPUBFloat16Type",
                      "float32": "torch.FloatTensor", "float64": "torch.DoubleTensor"}


def _mkldnn_mismatch(input, t, what):
    """torch's CPU message for a float16/bfloat16 convolution input with another dtype's
    weight or (transposed) bias."""
    name = lambda x: _TENSOR_TYPE_NAMES.get(x.dtype.name, x.dtype.name)  # noqa: E731
    return (f"Input type ({name(input)}) and {what} type ({name(t)}) should be the same or "
            f"input should be a MKLDNN tensor and {what} is a dense tensor")


def _check_conv_weight_dtype(input, weight):
    if weight.dtype != input.dtype:
        if input.dtype in (D.float16, D.bfloat16):
            raise RuntimeError(_mkldnn_mismatch(input, weight, "weight"))
        raise RuntimeError(f"expected scalar type {D.legacy_name(input.dtype)} but found "
                           f"{D.legacy_name(weight.dtype)}")


def _torch_type_repr(x):
    """``repr(type(x))`` as torch prints it: torchlike's tensor classes under torch's names."""
    from ..nn.parameter import Parameter
    if isinstance(x, Parameter):
        return "<class 'torch.nn.parameter.Parameter'>"
    if isinstance(x, _tl.Tensor):
        return "<class 'torch.Tensor'>"
    return repr(type(x))


def _check_weight_groups(weight, groups):
    if weight.shape[0] % int(groups):
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{list(weight.shape)}] "
                           "instead")


_SAME_WARNED = False


def _convnd(input, weight, bias, stride, padding, dilation, groups, nd, padding_mode="zeros"):
    input, weight, bias = _cast_composite("convolution", input, weight, bias)
    unbatched = input.ndim == nd + 1
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"conv{nd}d, but got input of size: {list(input.shape)}")
    stride, padding, dilation, _ = _check_conv_params(nd, stride, padding, dilation, groups)
    ks = tuple(weight.shape[2:])
    c_in = input.shape[0 if unbatched else 1]
    if bias is not None and bias.dtype != input.dtype:
        raise RuntimeError(f"Input type ({_CPP_NAMES[input.dtype.name]}) and bias type "
                           f"({_CPP_NAMES[bias.dtype.name]}) should be the same")
    _check_weight_groups(weight, groups)
    if c_in != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                           f"expected input{([1] if unbatched else []) + list(input.shape)} "
                           "to have "
                           f"{weight.shape[1] * groups} channels, but got {c_in} channels "
                           "instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {weight.shape[0]} elements, but got bias of "
                           f"size {list(bias.shape)} instead")
    if not isinstance(padding, str):
        p = _tup(padding, nd)
        padded = [int(input.shape[-nd + i]) + 2 * p[i] for i in range(nd)]
        eff = [dilation[i] * (ks[i] - 1) + 1 for i in range(nd)]
        if any(e > s for e, s in zip(eff, padded)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                f"Kernel size: ({' x '.join(map(str, eff))}). Kernel size can't be greater "
                "than actual input size")
    if isinstance(padding, str):
        if padding == "valid":
            pads = tuple((0, 0) for _ in range(nd))
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pads = []
            for d, k in zip(dilation, ks):
                total = d * (k - 1)
                left = total // 2
                pads.append((left, total - left))
            pads = tuple(pads)
            global _SAME_WARNED
            if not _SAME_WARNED and any(lo != hi for lo, hi in pads):
                # torch's TORCH_WARN_ONCE (whatever needs grad): once per process
                _SAME_WARNED = True
                warnings.warn("Using padding='same' with even kernel lengths and odd dilation "
                              "may require a zero-padded copy of the input be created "
                              "(Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/"
                              "native/Convolution.cpp:1101.)", UserWarning,
                              stacklevel=_stacklevel(3))
        else:
            raise ValueError(f"Invalid padding string '{padding}'")
    else:
        p = _tup(padding, nd)
        pads = tuple((a, a) for a in p)
    if padding_mode != "zeros":
        flat = []
        for lo, hi in reversed(pads):
            flat += [lo, hi]
        input = pad(input, flat, mode=padding_mode)
        pads = tuple((0, 0) for _ in range(nd))
    _check_conv_weight_dtype(input, weight)
    if input.dtype is D.bool:      # torch's CPU convolution kernels take every type but bool
        raise NotImplementedError(f'"slow_conv{3 if nd == 3 else 2}d_cpu" not implemented for '
                                  "'Bool'")
    args = [bias] if bias is not None else []
    return apply(_conv, input, weight, *args, stride=stride, padding=pads, dilation=dilation,
                 groups=int(groups), nd=nd, unbatched=unbatched)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 2)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 3)


@defop("conv_transpose", promote="common", grad_name="ConvolutionBackward0")
def _conv_t(x, w, *b, stride, padding, output_padding, dilation, groups, nd, unbatched):
    if unbatched:
        x = x[None]
    cin, cout_g = w.shape[0], w.shape[1]
    ks = w.shape[2:]
    wg = w.reshape((groups, cin // groups, cout_g) + ks)
    wg = jnp.swapaxes(wg, 1, 2).reshape((groups * cout_g, cin // groups) + ks)
    wg = jnp.flip(wg, axis=tuple(range(2, 2 + nd)))
    pads = [(d * (k - 1) - p, d * (k - 1) - p + op)
            for k, p, op, d in zip(ks, padding, output_padding, dilation)]
    y = jax.lax.conv_general_dilated(x, wg, window_strides=(1,) * nd, padding=pads,
                                     lhs_dilation=stride, rhs_dilation=dilation,
                                     feature_group_count=groups, dimension_numbers=_DN[nd],
                                     precision=jax.lax.Precision.HIGHEST)
    if b:
        y = y + b[0].reshape((1, -1) + (1,) * nd)
    return y[0] if unbatched else y


def _conv_tnd(input, weight, bias, stride, padding, output_padding, groups, dilation, nd,
              output_size=None):
    input, weight, bias = _cast_composite("conv_transpose", input, weight, bias)
    unbatched = input.ndim == nd + 1
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"conv_transpose{nd}d, but got input of size: {list(input.shape)}")
    if output_size is not None:
        output_padding = _output_padding_for(input, output_size, weight, stride, padding,
                                             dilation, nd)
    stride, padding, dilation, output_padding = _check_conv_params(
        nd, stride, padding, dilation, groups, output_padding)
    _check_weight_groups(weight, groups)
    c_in = input.shape[0 if unbatched else 1]
    if c_in != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected "
                           f"input{([1] if unbatched else []) + list(input.shape)} to have "
                           f"{weight.shape[0]} channels, but "
                           f"got {c_in} channels instead")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[1] * groups):
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected "
                           f"bias to be 1-dimensional with {weight.shape[1] * groups} elements, "
                           f"but got bias of size {list(bias.shape)} instead")
    _check_conv_weight_dtype(input, weight)
    if not (input.dtype.is_floating_point or input.dtype.is_complex or input.dtype is D.int64):
        # torch's CPU transposed-convolution kernels: floating, complex and int64 only
        raise NotImplementedError(f'"slow_conv_transpose{3 if nd == 3 else 2}d_out_cpu" not '
                                  f"implemented for '{D.legacy_name(input.dtype)}'")
    if bias is not None and bias.dtype != input.dtype:
        if input.dtype in (D.float16, D.bfloat16):
            raise RuntimeError(_mkldnn_mismatch(input, bias, "bias"))
        bias = bias.to(input.dtype)     # (torch's transposed kernel takes the bias as input's)
    args = [bias] if bias is not None else []
    return apply(_conv_t, input, weight, *args, stride=_tup(stride, nd),
                 padding=_tup(padding, nd), output_padding=_tup(output_padding, nd),
                 dilation=_tup(dilation, nd), groups=int(groups), nd=nd, unbatched=unbatched)


def _output_padding_for(input, output_size, weight, stride, padding, dilation, nd):
    """torch's _ConvTransposeNd._output_padding (its messages; ``input.size()[2:]`` as torch
    prints it, also for an unbatched input)."""
    stride, padding, dilation = _tup(stride, nd), _tup(padding, nd), _tup(dilation, nd)
    non_spatial = 2 if input.dim() == nd + 2 else 1
    if len(output_size) == non_spatial + nd:
        output_size = output_size[non_spatial:]
    if len(output_size) != nd:
        raise ValueError(f"ConvTranspose{nd}D: for {input.dim()}D input, output_size must have "
                         f"{nd} or {non_spatial + nd} elements (got {len(output_size)})")
    ks = tuple(weight.shape[2:])
    min_sizes = [(input.shape[d + non_spatial] - 1) * stride[d] - 2 * padding[d]
                 + dilation[d] * (ks[d] - 1) + 1 for d in range(nd)]
    max_sizes = [min_sizes[d] + stride[d] - 1 for d in range(nd)]
    for size, lo, hi in zip(output_size, min_sizes, max_sizes):
        if size < lo or size > hi:
            raise ValueError(f"requested an output size of {output_size}, but valid sizes range "
                             f"from {min_sizes} to {max_sizes} (for an input of "
                             f"{input.size()[2:]})")
    return tuple(int(output_size[d]) - min_sizes[d] for d in range(nd))


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_tnd(input, weight, bias, stride, padding, output_padding, groups, dilation, 1)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_tnd(input, weight, bias, stride, padding, output_padding, groups, dilation, 2)


# ================================================================== pooling

def _pool_grad_name(kw, fmt):
    # torch runs its 1-d poolings as 2-d ones between an unsqueeze and a squeeze
    return "SqueezeBackward1" if kw["nd"] == 1 else fmt.format(kw["nd"])


def _pool_out(L, k, s, p, d, ceil_mode):
    num = L + 2 * p - d * (k - 1) - 1
    if ceil_mode:
        out = -(-num // s) + 1
        if (out - 1) * s >= L + p:
            out -= 1
    else:
        out = num // s + 1
    return out


_WORDS = {2: "two", 3: "three"}


def _ctrunc(a, b):
    """C++ integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _pool_params(kind, nd, kernel_size, stride, padding, dilation):
    """The pooling arguments as per-dimension tuples, with torch's messages for a wrong length
    (``kind``: "max" (max_poolNd), "maxidx" (with indices) or "avg")."""
    name = ("avg" if kind == "avg" else "max") + f"_pool{nd}d"
    no_stride = stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0)

    def check(v, arg):
        if not isinstance(v, (tuple, list)) or len(v) in (1, nd):
            return
        if nd == 1 and kind == "max":
            how = {"kernel_size": "an int, list of ints or", "stride": "None, an int, list of "
                   "ints, or", "padding": "an int, list of ints, or",
                   "dilation": "an int, list of ints or"}[arg]
            msg = f"max_pool1d() {arg} must be {how} tuple of ints of size 1 but got size {len(v)}"
        elif nd == 1:
            msg = f"{name}() argument '{arg}' should contain one int (got {len(v)})"
        elif kind == "avg" and nd == 3:
            how = {"kernel_size": "be", "stride": "be omitted,", "padding": "be"}[arg]
            msg = f"avg_pool3d: {arg} must {how} a single int, or a tuple of three ints"
        else:
            how = {"kernel_size": "either be", "stride": "either be omitted,",
                   "padding": "either be", "dilation": "be either"}[arg]
            msg = f"{name}: {arg} must {how} a single int, or a tuple of {_WORDS[nd]} ints"
        raise RuntimeError(msg)

    check(kernel_size, "kernel_size")
    if not no_stride:
        check(stride, "stride")
    check(padding, "padding")
    if kind != "avg":
        check(dilation, "dilation")
    k = _tup(kernel_size, nd)
    return k, (k if no_stride else _tup(stride, nd)), _tup(padding, nd), _tup(dilation, nd)


def _int_list_arg(fn, arg, pos, value):
    """torch's argument parser for an ``int[]`` argument: a float (or a list holding one) is
    a TypeError, not a size."""
    if value is None or isinstance(value, Tensor):
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            if not isinstance(v, (int, np.integer, Tensor)):
                if i:       # (the parser's second form, counting from 1)
                    raise TypeError(f"{fn}(): argument '{arg}' failed to unpack the object at "
                                    f"pos {i + 1} with error \"type must be tuple of ints,but "
                                    f"got {type(v).__name__}\"")
                raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be tuple of "
                                f"ints, but found element of type {type(v).__name__} at pos 0")
    elif not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be tuple of ints, not "
                        f"{type(value).__name__}")


def _pool_geometry(input, kind, nd, kernel_size, stride, padding, dilation, ceil_mode,
                   divisor_override=None):
    """torch's pooling argument and shape checks, in its order and words; returns the
    per-dimension kernel, stride, padding, dilation, output sizes and (lo, hi) paddings."""
    name = ("avg" if kind == "avg" else "max") + f"_pool{nd}d"
    for arg, value, pos in (("kernel_size", kernel_size, 2), ("stride", stride, 3),
                            ("padding", padding, 4), ("dilation", dilation, 5)):
        if kind != "avg" or arg != "dilation":
            _int_list_arg(name, arg, pos, value)
    k, s, p, d = _pool_params(kind, nd, kernel_size, stride, padding, dilation)
    shape = tuple(input.shape)
    n = len(shape)
    if kind == "avg" and divisor_override is not None and nd > 1 and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if nd == 1 and kind == "max":
        if n not in (2, 3) or any(v == 0 for v in shape[-2:]):
            raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional "
                               f"0 dim batch size for input, but got:{list(shape)}")
        (kk,), (ss,), (pp,), (dd,) = k, s, p, d
        if kk <= 0:
            raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {kk}")
        if ss <= 0:
            raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {ss}")
        if pp < 0:
            raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {pp}")
        if pp > kk // 2:
            raise RuntimeError("max_pool1d() padding should be at most half of kernel size, but "
                               f"got padding={pp} and kernel_size={kk}")
        if dd <= 0:
            raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {dd}")
        o = _pool_out(shape[-1], kk, ss, pp, dd, ceil_mode)
        if o < 1:
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {o}")
        return _pool_pads(shape, k, s, p, d, (o,))
    if nd == 1:
        # torch runs the 1-d poolings with indices and average pooling as 2-d ones of height 1
        if n not in (2, 3):
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {n}-dimensional tensor for "
                               f"argument #1 'self' (while checking arguments for {name})")
        vshape = shape[:-1] + (1, shape[-1])
        vk, vs, vp, vd = (1,) + k, (1,) + s, (0,) + p, (1,) + d
        vnd = 2
    else:
        if n not in (nd + 1, nd + 2):
            if kind == "avg" and nd == 2 and n < 3:
                raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, "
                                 f"{n - 1}], but got -3)")
            if kind == "avg" and nd == 2:
                raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim "
                                   f"batch size for input, but got:{list(shape)}")
            raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected "
                               "for input")
        vshape, vk, vs, vp, vd, vnd = shape, k, s, p, d, nd
    spatial = vshape[-vnd:]
    outs = []
    for L, kk, ss, pp, dd in zip(spatial, vk, vs, vp, vd):
        if ss == 0:
            raise RuntimeError("stride should not be zero")
        if pp < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pp}")
        if pp > _ctrunc((kk - 1) * dd + 1, 2):
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation={dd}")
        outs.append(_pool_out(L, kk, ss, pp, dd, ceil_mode) if kk > 0 and dd > 0 else 0)
    letters = ("H", "W") if vnd == 2 else ("T", "H", "W")
    if any(v <= 0 for v in vk):
        raise RuntimeError("kernel size should be greater than zero, but got "
                           + " ".join(f"k{a}: {v}" for a, v in zip(letters, vk)))
    if any(v <= 0 for v in vs):
        raise RuntimeError("stride should be greater than zero, but got "
                           + " ".join(f"d{a}: {v}" for a, v in zip(letters, vs)))
    if any(v <= 0 for v in vd):
        raise RuntimeError("dilation should be greater than zero, but got "
                           + " ".join(f"dilation{a}: {v}" for a, v in zip(letters, vd)))
    batched = len(vshape) == vnd + 2
    half = any(pp > kk // 2 for pp, kk in zip(vp, vk))
    if vnd == 2:
        if any(v == 0 for v in vshape[-3:]):
            raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                               f"size for input, but got:{list(vshape)}")
        if half:
            raise RuntimeError("pad should be smaller than or equal to half of kernel size, but "
                               f"got padW = {vp[1]}, padH = {vp[0]}, kW = {vk[1]}, kH = {vk[0]}")
    else:
        for i, v in enumerate(vshape[1 if batched else 0:]):
            if v == 0:
                who = ("avg_pool3d()" if kind == "avg"
                       else "max_pool3d_with_indices_out_cpu_template()")
                raise RuntimeError(f"{who}: Expected input's non-batch dimensions to have "
                                   f"positive length, but input has a shape of {list(vshape)} "
                                   f"and non-batch dimension {i} has length zero!")
        if half:
            raise RuntimeError("pad should be smaller than or equal to half of kernel size, but "
                               f"got kT: {vk[0]} kW: {vk[2]} kH: {vk[1]} padT: {vp[0]} "
                               f"padW: {vp[2]} padH: {vp[1]}")
        if kind == "avg" and any(L < kk for L, kk in zip(spatial, vk)):
            raise RuntimeError(
                "input image (" + " ".join(f"{a}: {v}" for a, v in zip(letters, spatial))
                + ") smaller than kernel size ("
                + " ".join(f"k{a}: {v}" for a, v in zip(letters, vk)) + ")")
    if any(o < 1 for o in outs):
        c = vshape[-vnd - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (c,) + tuple(spatial)))}). "
                           f"Calculated output size: ({'x'.join(map(str, (c,) + tuple(outs)))}"
                           "). Output size is too small")
    return _pool_pads(shape, k, s, p, d, tuple(outs[-nd:]))


def _pool_pads(shape, k, s, p, d, outs):
    spatial = shape[-len(k):]
    pads = []
    for L, kk, ss, pp, dd, o in zip(spatial, k, s, p, d, outs):
        extra = max((o - 1) * ss + dd * (kk - 1) + 1 - (L + 2 * pp), 0)
        pads.append((pp, pp + extra))
    return k, s, p, d, tuple(outs), tuple(pads)


@defop("max_pool", grad_name=lambda kw: _pool_grad_name(kw, "MaxPool{}DWithIndicesBackward0"))
def _max_pool(x, k, s, d, pads, nd):
    lead = x.ndim - nd
    # (-inf: a literal, reduce_window's max monoid for autodiff; integers: their minimum)
    init = (-np.inf if jnp.issubdtype(x.dtype, jnp.floating)
            else np.array(jnp.iinfo(x.dtype).min, x.dtype))
    return jax.lax.reduce_window(x, init, jax.lax.max,
                                 (1,) * lead + k, (1,) * lead + s,
                                 [(0, 0)] * lead + list(pads), window_dilation=(1,) * lead + d)


@defop("max_pool_indices",
       grad_name=lambda kw: _pool_grad_name(kw, "MaxPool{}DWithIndicesBackward0"))
def _max_pool_idx(x, k, s, d, pads, nd, outs):
    # windows gathered explicitly: values and flat indices (torch's return_indices)
    lead = x.ndim - nd
    spatial = x.shape[lead:]
    floating = jnp.issubdtype(x.dtype, jnp.floating)
    low = -np.inf if floating else np.array(jnp.iinfo(x.dtype).min, x.dtype)
    xp = jnp.pad(x, [(0, 0)] * lead + list(pads), constant_values=low)
    # the full gather over the padded spatial dims: window element positions per output
    grids = np.meshgrid(*[np.arange(outs[i]) for i in range(nd)],
                        *[np.arange(k[i]) for i in range(nd)], indexing="ij")
    pos = [grids[i] * s[i] + grids[nd + i] * d[i] for i in range(nd)]
    flat_shape = tuple(outs) + (int(np.prod(k)),)
    pos = [p.reshape(flat_shape) for p in pos]
    valid = np.ones(flat_shape, bool)                      # not a padding position
    for i in range(nd):
        valid &= (pos[i] >= pads[i][0]) & (pos[i] < pads[i][0] + spatial[i])
    win = xp[(Ellipsis,) + tuple(pos)]
    # torch's scan: the first NaN, else the first element above the running maximum (from
    # -inf, at the first real position): the first maximum, never a padding position
    key = jnp.where(valid, win, low)
    hit = (key == jnp.max(key, axis=-1, keepdims=True)) & valid
    if floating:
        nan = jnp.isnan(win) & valid
        hit = jnp.where(jnp.any(nan, axis=-1, keepdims=True), nan, hit)
    arg = jnp.argmax(hit, axis=-1)
    # the gradient goes to that element, as in torch
    val = jnp.take_along_axis(win, arg[..., None], axis=-1)[..., 0]
    orig = [jnp.take_along_axis(jnp.broadcast_to(jnp.asarray(pos[i] - pads[i][0]), win.shape),
                                arg[..., None], axis=-1)[..., 0] for i in range(nd)]
    flat = orig[0]
    for i in range(1, nd):
        flat = flat * spatial[i] + orig[i]
    return val, flat.astype(jnp.int64)


def _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, nd):
    k, s, p, d, outs, pads = _pool_geometry(input, "maxidx" if return_indices else "max", nd,
                                            kernel_size, stride, padding, dilation, ceil_mode)
    if input.dtype is D.bool or input.dtype.is_complex or (
            nd == 1 and not return_indices and not input.is_floating_point()):
        name = "max_pool1d_impl" if nd == 1 and not return_indices else f"max_pool{max(nd, 2)}d"
        raise NotImplementedError(f'"{name}" not implemented for '
                                  f"'{D.legacy_name(input.dtype)}'")
    if return_indices or any(v != 1 for v in d):
        out = apply(_max_pool_idx, input, k=k, s=s, d=d, pads=pads, nd=nd, outs=outs)
        return out if return_indices else out[0]
    return apply(_max_pool, input, k=k, s=s, d=d, pads=pads, nd=nd)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices, 1)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices, 2)


def _exact_divisor(d, shape):
    """A constant divisor XLA divides by: its CPU programs would multiply by the constant's
    reciprocal, not correctly rounded (an average of integer values 43.000004, not 43.0), unless
    the divisor is an array hidden from constant folding."""
    return jax.lax.optimization_barrier(jnp.broadcast_to(d, shape))


@defop("avg_pool", grad_name=lambda kw: _pool_grad_name(kw, "AvgPool{}DBackward0"))
def _avg_pool(x, k, s, pads, p, nd, count_include_pad, divisor):
    lead = x.ndim - nd
    win = (1,) * lead + k
    st = (1,) * lead + s
    allpads = [(0, 0)] * lead + list(pads)
    integer = jnp.issubdtype(x.dtype, jnp.integer)
    zero = 0 if integer else 0.0   # (a Python literal: reduce_window's add monoid for autodiff)
    tot = jax.lax.reduce_window(x, zero, jax.lax.add, win, st, allpads)
    if divisor is not None:
        if integer:   # torch's int64 kernel: the sum divided as C++ integers (toward zero)
            return jax.lax.div(tot, jnp.asarray(int(divisor), x.dtype))
        return tot / _exact_divisor(jnp.asarray(divisor, x.dtype), tot.shape)
    spatial = x.shape[lead:]
    if count_include_pad:
        ones = jnp.pad(jnp.ones(spatial, x.dtype), [(pp, pp) for pp in p], constant_values=1)
        cpads = [(0, hi - pp) for (lo, hi), pp in zip(pads, p)]
    else:
        ones = jnp.ones(spatial, x.dtype)
        cpads = list(pads)
    cnt = jax.lax.reduce_window(ones, zero, jax.lax.add, k, s, cpads)
    if integer:
        return jax.lax.div(tot, jnp.broadcast_to(cnt, tot.shape))
    return tot / _exact_divisor(cnt, tot.shape)


def _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override, nd):
    k, s, p, d, outs, pads = _pool_geometry(input, "avg", nd, kernel_size, stride, padding, 1,
                                            ceil_mode, divisor_override)
    if not input.is_floating_point() and input.dtype is not D.int64:
        # (torch's CPU average pooling has float and int64 kernels; 1-d runs the 2-d one)
        kernel = "avg_pool3d_out_frame" if nd == 3 else "avg_pool2d"
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{D.legacy_name(input.dtype)}'")
    return apply(_avg_pool, input, k=k, s=s, pads=pads, p=p, nd=nd,
                 count_include_pad=bool(count_include_pad),
                 divisor=None if divisor_override is None else float(divisor_override))


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _max_poolnd(input, kernel_size, stride, padding, dilation, ceil_mode,
                       return_indices, 3)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override, 3)


def adaptive_avg_pool3d(input, output_size):
    outs = _adaptive_size(input, output_size, 3, "avg")
    if outs == (1, 1, 1) and input.ndim in (4, 5) and input.numel():
        return input.mean((-1, -2, -3), keepdim=True)  # torch's global-pool fast path
    return apply(_adaptive_avg, input, outs=outs, nd=3)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    return _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None,
                       1)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _avg_poolnd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                       divisor_override, 2)


def _adaptive_bounds(L, out):
    starts = [(i * L) // out for i in range(out)]
    ends = [-(-((i + 1) * L) // out) for i in range(out)]
    return starts, ends


def _adaptive_matrix(L, out):
    """The 0/1 matrix summing each output's window of a dim of length ``L``, and each window's
    length."""
    m = np.zeros((out, L))
    starts, ends = _adaptive_bounds(L, out)
    for i, (a, b) in enumerate(zip(starts, ends)):
        m[i, a:b] = 1.0
    return m, np.asarray(ends) - np.asarray(starts)


@defop("adaptive_avg_pool",
       grad_name=lambda kw: _pool_grad_name(kw, "AdaptiveAvgPool{}DBackward0"))
@_opmath
def _adaptive_avg(x, outs, nd):
    # torch's kernel: each window's sum divided by its size (exact on integer-valued data; a
    # mean of per-dim means would round at each step); float16/bfloat16 in float32, rounded
    # once
    cnt = np.ones((1,) * nd)
    for i in range(nd):
        ax = x.ndim - nd + i
        m, lengths = _adaptive_matrix(x.shape[ax], outs[i])
        x = jnp.moveaxis(jnp.tensordot(x, jnp.asarray(m, x.dtype), axes=([ax], [1]),
                                       precision=_HI), -1, ax)
        cnt = cnt * lengths.reshape((1,) * i + (-1,) + (1,) * (nd - 1 - i))
    return x / _exact_divisor(jnp.asarray(cnt, x.dtype), x.shape)


def _out_size(output_size, shape, nd):
    o = output_size if isinstance(output_size, (tuple, list)) else (output_size,) * nd
    return tuple(int(shape[-nd + i]) if v is None else int(v) for i, v in enumerate(o))


def _adaptive_size(input, output_size, nd, kind):
    """The output size of adaptive_{kind}_pool{nd}d, with torch's checks and messages."""
    name = f"adaptive_{kind}_pool{nd}d"
    shape = list(input.shape)
    n = len(shape)
    if nd > 1 and not isinstance(output_size, (int, np.integer)):
        # torch's Python _list_with_default: ints expand, sequences get None filled in
        if not isinstance(output_size, (tuple, list)):
            raise TypeError(f"object of type '{type(output_size).__name__}' has no len()")
        if n <= len(output_size):
            raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
        output_size = [shape[n - len(output_size) + i] if v is None else v
                       for i, v in enumerate(output_size)]
    if nd == 1 and output_size is None:
        raise TypeError(f"{name}(): argument 'output_size' (position 2) must be tuple of ints, "
                        "not NoneType")
    if isinstance(output_size, (tuple, list)):
        for i, v in enumerate(output_size):
            if isinstance(v, float):
                raise TypeError(f"{name}(): argument 'output_size' (position 2) must be tuple of "
                                f"ints, but found element of type float at pos {i}")
    if isinstance(output_size, (tuple, list)) and len(output_size) != (nd if nd > 1 else 1):
        if nd == 1:
            raise RuntimeError(f"{name}() argument 'output_size' should contain one int "
                               f"(got {len(output_size)})")
        if kind == "avg":
            raise RuntimeError(f"{name}: output_size must be {nd}")
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {nd}")
    if nd == 1 and n not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {n}-dimensional tensor for "
                           f"argument #1 'self' (while checking arguments for {name})")
    if nd > 1 and n not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got"
                           f"{':' if kind == 'max' else ''} {shape}")
    outs = _out_size(output_size, input.shape, nd)
    if any(v < 0 for v in outs):
        # (1-d pooling runs as 2-d pooling of height 1)
        vouts = (1,) + outs if nd == 1 else outs
        if kind == "avg":
            vals = [str(v) for v in vouts]
            listed = (", ".join(vals) if len(vals) < 3
                      else ", ".join(vals[:2]) + "," + ",".join(vals[2:]))
            raise RuntimeError(f"adaptive_avg_pool{max(nd, 2)}d: elements of output_size must be "
                               f"greater than or equal to 0 but received {{{listed}}}")
        lead = shape[:-nd] + ([1] if nd == 1 else [])
        bad = next(v for v in outs if v < 0)
        raise RuntimeError(f"Trying to create tensor with negative dimension {bad}: "
                           f"{lead + list(outs)}")
    if kind == "max" and nd > 1:
        for i in range(1, n):
            if shape[i] == 0:
                raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                                   f"dimensions, but input has sizes {shape} with dimension {i} "
                                   "being empty")
    if not input.is_floating_point():
        if kind == "avg" and nd > 1 and all(v == 1 for v in outs) and input.numel():
            # torch's global-pool fast path is a mean: complex computes, the rest its message
            if input.dtype.is_complex:
                return outs
            raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either "
                               "a floating point or complex dtype. Got: "
                               f"{D.legacy_name(input.dtype)}")
        kernel = name + "_cpu" if nd == 3 else name if nd > 1 else f"adaptive_{kind}_pool2d"
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{D.legacy_name(input.dtype)}'")
    return outs


def adaptive_avg_pool1d(input, output_size):
    return apply(_adaptive_avg, input, outs=_adaptive_size(input, output_size, 1, "avg"), nd=1)


def adaptive_avg_pool2d(input, output_size):
    outs = _adaptive_size(input, output_size, 2, "avg")
    if outs == (1, 1) and input.ndim in (3, 4) and input.numel():
        return input.mean((-1, -2), keepdim=True)      # torch's global-pool fast path
    return apply(_adaptive_avg, input, outs=outs, nd=2)


@defop("adaptive_max_pool",
       grad_name=lambda kw: _pool_grad_name(kw, "AdaptiveMaxPool{}DBackward0"))
def _adaptive_max(x, outs, nd):
    # last axis first: the first maximum in row-major order wins ties, as in torch
    for i in reversed(range(nd)):
        ax = x.ndim - nd + i
        L = x.shape[ax]
        starts, ends = _adaptive_bounds(L, outs[i])
        mask = np.zeros((outs[i], L), bool)
        for j, (a, b) in enumerate(zip(starts, ends)):
            mask[j, a:b] = True
        xm = jnp.moveaxis(x, ax, -1)[..., None, :]
        xm = jnp.where(jnp.asarray(mask), xm, -jnp.inf)
        arg = jnp.argmax(xm, axis=-1)
        val = jnp.take_along_axis(xm, arg[..., None], axis=-1)[..., 0]
        x = jnp.moveaxis(val, -1, ax)
    return x


@defop("adaptive_max_pool_indices",
       grad_name=lambda kw: _pool_grad_name(kw, "AdaptiveMaxPool{}DBackward0"))
def _adaptive_max_idx(x, outs, nd):
    lead = x.ndim - nd
    spatial = x.shape[lead:]
    per_axis = []
    for i in range(nd):
        starts, ends = _adaptive_bounds(spatial[i], outs[i])
        kmax = max(e - a for a, e in zip(starts, ends))
        pos = np.array([[min(a + k, e - 1) for k in range(kmax)] for a, e in zip(starts, ends)])
        ok = np.array([[a + k < e for k in range(kmax)] for a, e in zip(starts, ends)])
        per_axis.append((pos, ok, kmax))
    grids = np.meshgrid(*[np.arange(o) for o in outs],
                        *[np.arange(k) for _, _, k in per_axis], indexing="ij")
    pos = [per_axis[i][0][grids[i], grids[nd + i]] for i in range(nd)]
    ok = np.ones(grids[0].shape, bool)
    for i in range(nd):
        ok &= per_axis[i][1][grids[i], grids[nd + i]]
    shape = tuple(outs) + (-1,)
    pos = [p.reshape(shape) for p in pos]
    ok = ok.reshape(shape)
    win = jnp.where(jnp.asarray(ok), x[(Ellipsis,) + tuple(pos)], -jnp.inf)
    arg = jnp.argmax(win, axis=-1)
    val = jnp.take_along_axis(win, arg[..., None], axis=-1)[..., 0]
    flat = np.zeros(shape[:-1] + (ok.shape[-1],), np.int64)
    for i in range(nd):
        flat = flat * spatial[i] + pos[i]
    idx = jnp.take_along_axis(jnp.broadcast_to(jnp.asarray(flat), win.shape), arg[..., None],
                              axis=-1)[..., 0]
    return val, idx


def adaptive_max_pool1d(input, output_size, return_indices=False):
    outs = _adaptive_size(input, output_size, 1, "max")
    if return_indices:
        return apply(_adaptive_max_idx, input, outs=outs, nd=1)
    return apply(_adaptive_max, input, outs=outs, nd=1)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    outs = _adaptive_size(input, output_size, 2, "max")
    if return_indices:
        return apply(_adaptive_max_idx, input, outs=outs, nd=2)
    return apply(_adaptive_max, input, outs=outs, nd=2)


# ================================================================== reshaping layers

@defop("pixel_shuffle", saves=False, grad_name=lambda kw: "PixelUnshuffleBackward0"
       if kw["inverse"] else "PixelShuffleBackward0")
def _pixel_shuffle(x, r, inverse):
    *lead, c, h, w = x.shape
    if not inverse:
        x = x.reshape(tuple(lead) + (c // (r * r), r, r, h, w))
        n = len(lead)
        x = jnp.transpose(x, tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
        return x.reshape(tuple(lead) + (c // (r * r), h * r, w * r))
    x = x.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    n = len(lead)
    x = jnp.transpose(x, tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return x.reshape(tuple(lead) + (c * r * r, h // r, w // r))


def _check_pixel_shuffle(input, r, name, what):
    if input.ndim < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {r}")


def pixel_shuffle(input, upscale_factor):
    r = int(upscale_factor)
    _check_pixel_shuffle(input, r, "pixel_shuffle", "upscale_factor")
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible "
                           f"by the square of upscale_factor, but input.size(-3)={c} is not "
                           f"divisible by {r * r}")
    return apply(_pixel_shuffle, input, r=r, inverse=False)


def pixel_unshuffle(input, downscale_factor):
    r = int(downscale_factor)
    _check_pixel_shuffle(input, r, "pixel_unshuffle", "downscale_factor")
    for d, what in ((-2, "height"), (-1, "width")):
        if input.shape[d] % r:
            raise RuntimeError(f"pixel_unshuffle expects {what} to be divisible by "
                               f"downscale_factor, but input.size({d})={input.shape[d]} is not "
                               f"divisible by {r}")
    return apply(_pixel_shuffle, input, r=r, inverse=True)


_UPSAMPLE_NAMES = {"nearest": "Nearest", "nearest-exact": "NearestExact", "bicubic": "Bicubic",
                   "lanczos": "Lanczos"}
_LINEAR_NAMES = {1: "Linear", 2: "Bilinear", 3: "Trilinear"}


def _upsample_name(kw):
    m = kw["mode"]
    base = _LINEAR_NAMES[kw["nd"]] if m == "linear" else _UPSAMPLE_NAMES[m]
    return f"Upsample{base}{kw['nd']}D" + ("AaBackward0" if kw.get("aa") else "Backward0")


def _from_float_u8(y, dtype):
    """uint8 images: interpolated in float32, rounded to the nearest integer and saturated (torch's
    fixed-point uint8 kernels may differ by one at exact halves)."""
    return jnp.clip(jnp.floor(y + 0.5), 0, 255).astype(dtype)


@defop("interpolate", grad_name=_upsample_name)
def _interpolate(x, size, mode, align_corners, nd, scales):
    if x.dtype == jnp.uint8 and mode == "linear":
        # as _interp_by_matrices: separable passes, last axis first, each rounded to uint8
        for i in reversed(range(nd)):
            ax = x.ndim - nd + i
            y = _interpolate_f(jnp.moveaxis(x, ax, -1).astype(jnp.float32), (size[i],), mode,
                               align_corners, 1, (scales[i],))
            x = _from_float_u8(jnp.moveaxis(y, -1, ax), x.dtype)
        return x
    if x.dtype in (jnp.float16, jnp.bfloat16):
        # torch computes reduced-precision upsampling (and accumulates its gradient) in float32
        y = _interpolate_f(x.astype(jnp.float32), size, mode, align_corners, nd, scales)
        return y.astype(x.dtype)
    return _interpolate_f(x, size, mode, align_corners, nd, scales)


def _nearest_source(L, O, sc, mode, nd):
    """torch's nearest / nearest-exact source indices, in its float32 arithmetic (a float64
    product can land on the other side of an integer: 19.5 / 1.3). torch's 2-d nearest kernel
    (nearest_idx) short-cuts an unchanged or doubled size; its 1-d and 3-d ones do not."""
    i = np.arange(O)
    if mode == "nearest" and nd == 2 and O == L:
        return i
    if mode == "nearest" and nd == 2 and O == 2 * L:
        return i >> 1
    f32 = np.float32
    scale = f32(1.0 / sc) if sc and sc > 0 else f32(L) / f32(O)      # compute_scales_value
    if mode == "nearest":
        src = np.floor(i.astype(f32) * scale)                            # floorf(i * scale)
    else:
        src = np.floor(((i + 0.5) * np.float64(scale)).astype(f32))     # floorf((i + .5) * s)
    return np.minimum(src.astype(np.int64), L - 1)


def _interpolate_f(x, size, mode, align_corners, nd, scales):
    for i in range(nd):
        ax = x.ndim - nd + i
        L, O = x.shape[ax], size[i]
        sc = scales[i]
        if mode in ("nearest", "nearest-exact"):
            x = jnp.take(x, jnp.asarray(_nearest_source(L, O, sc, mode, nd)), axis=ax)
        else:
            if align_corners:
                pos = np.arange(O) * ((L - 1) / (O - 1)) if O > 1 else np.zeros(O)
            else:
                scale = (1.0 / sc) if sc else L / O
                pos = np.maximum((np.arange(O) + 0.5) * scale - 0.5, 0)
            lo = np.minimum(np.floor(pos).astype(np.int64), L - 1)
            hi = np.minimum(lo + 1, L - 1)
            lam = (pos - lo).astype(np.float64)
            shape = [1] * x.ndim
            shape[ax] = O
            lamj = jnp.asarray(lam, x.dtype).reshape(shape)
            x = jnp.take(x, jnp.asarray(lo), axis=ax) * (1 - lamj) + \
                jnp.take(x, jnp.asarray(hi), axis=ax) * lamj
    return x


def _area_scale(L, O, align_corners, sc):
    """torch's area_pixel_compute_scale."""
    if align_corners:
        return (L - 1) / (O - 1) if O > 1 else 0.0
    return (1.0 / sc) if sc else L / O


def _cubic_w(t, a):
    """Keys' cubic convolution weights for offsets t in [0, 1): taps at -1, 0, 1, 2."""
    def c1(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def c2(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.stack([c2(t + 1), c1(t), c1(1 - t), c2(2 - t)], -1)


def _interp_matrix(L, O, mode, align_corners, sc, antialias):
    """The (O, L) matrix of one axis of bicubic or antialiased interpolation (torch's rules)."""
    M = np.zeros((O, L), np.float64)
    scale = _area_scale(L, O, align_corners, sc)
    if antialias:
        interp = {"linear": 2, "bicubic": 4, "lanczos": 6}[mode]
        support = interp * 0.5 * scale if scale >= 1.0 else interp * 0.5
        inv = 1.0 / scale if scale >= 1.0 else 1.0
        for i in range(O):
            center = scale * (i + 0.5)
            lo = max(int(center - support + 0.5), 0)
            hi = min(int(center + support + 0.5), L)
            x = np.abs((np.arange(lo, hi) - center + 0.5) * inv)
            if mode == "linear":
                w = np.where(x < 1, 1 - x, 0.0)
            elif mode == "lanczos":
                # Lanczos-3 (PIL's LANCZOS): sinc(x) sinc(x / 3) on |x| < 3
                w = np.where(x < 3, np.sinc(x) * np.sinc(x / 3), 0.0)
            else:
                a = -0.5
                w = np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                             np.where(x < 2, (((x - 5) * x + 8) * x - 4) * a, 0.0))
            tot = w.sum()
            M[i, lo:hi] = w / tot if tot != 0 else w
        return M
    # bicubic, torch's upsample_bicubic2d: A = -0.75, border taps clamped
    for i in range(O):
        real = scale * i if align_corners else scale * (i + 0.5) - 0.5
        base = math.floor(real)
        w = _cubic_w(np.float64(real - base), -0.75)
        for k in range(4):
            M[i, min(max(base - 1 + k, 0), L - 1)] += w[k]
    return M


@defop("interpolate_matrix", grad_name=_upsample_name)
def _interp_by_matrices(x, *ms, mode, nd, aa):
    if x.dtype == jnp.uint8:
        # torch's (PIL-like) uint8 kernels: one separable pass per axis, the last axis first,
        # each pass's result rounded and saturated to uint8 (a cubic's overshoot is clipped
        # before the next pass)
        for i in reversed(range(nd)):
            ax = x.ndim - nd + i
            y = jnp.tensordot(x.astype(jnp.float32), ms[i].astype(jnp.float32),
                              axes=([ax], [1]), precision=_HI)
            x = _from_float_u8(jnp.moveaxis(y, -1, ax), x.dtype)
        return x
    if x.dtype in (jnp.float16, jnp.bfloat16):
        return _interp_by_matrices_f(x.astype(jnp.float32), ms, nd).astype(x.dtype)
    return _interp_by_matrices_f(x, ms, nd)


def _interp_by_matrices_f(x, ms, nd):
    for i, m in enumerate(ms):
        ax = x.ndim - nd + i
        x = jnp.moveaxis(jnp.tensordot(x, m.astype(x.dtype), axes=([ax], [1]),
                                       precision=_HI), -1, ax)
    return x


_INTERP_MODES = ("nearest", "linear", "bilinear", "bicubic", "trilinear", "lanczos", "area",
                 "nearest-exact")


def _interp_dtype_check(input, mode, nd, antialias):
    """torch's CPU upsampling kernels: floating types, and uint8 for all but (tri)linear; the
    antialiased ones float32/float64/uint8 only. The names are the kernels torch reports."""
    dt = input.dtype
    if dt in (D.float32, D.float64):
        return
    if antialias:
        ok, kernel = dt is D.uint8, "compute_index_ranges_weights"
    elif dt in (D.float16, D.bfloat16):
        return
    elif mode in ("nearest", "nearest-exact"):
        ok = dt is D.uint8
        kernel = ("upsample_nearest2d_channels_last" if nd == 2
                  else "compute_indices_weights_nearest")
    elif mode == "bicubic":
        ok, kernel = dt is D.uint8, "compute_indices_weights_cubic"
    elif mode == "bilinear":
        ok, kernel = dt is D.uint8, "upsample_bilinear2d_channels_last"
    else:
        ok, kernel = False, "compute_indices_weights_linear"
    if not ok:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{D.legacy_name(dt)}\'')


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """torch.nn.functional.interpolate: its Python checks in its order, then the kernels'."""
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes:"
                             " linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    nd = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != nd:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size "
                    f"of {size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                    "and output size in (o1, o2, ...,oK) format.")
            if not all(isinstance(v, (int, np.integer)) or (isinstance(v, Tensor)
                       and not v.is_floating_point()) for v in size):
                raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] "
                                "or Tuple[int, int, int], but got size with types "
                                f"{[type(v) for v in size]}")
            out = [int(v) for v in size]
        else:
            out = [int(size)] * nd
        scales = None
    elif scale_factor is not None:
        out = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != nd:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in (N, C, "
                    "d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(v) for v in scale_factor]
        else:
            scales = [float(scale_factor)] * nd
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        out = [int(input.shape[i + 2] * scales[i]) for i in range(nd)]
        scales = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
                         "and requires a 4-D tensor as input")
    want = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2, "lanczos": 2}
    if mode not in _INTERP_MODES or not 1 <= nd <= 3 or want.get(mode, nd) != nd:
        if mode in ("linear", "bilinear", "trilinear") and 1 <= nd <= 3:
            raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                      f"{want[mode] + 2}D input")
        raise NotImplementedError(
            "Input Error: Only 3D, 4D and 5D input Tensors supported"
            f" (got {input.ndim}D) for the modes: nearest | linear | bilinear | bicubic | "
            f"trilinear | lanczos | area | nearest-exact (got {mode})")
    if mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if mode == "area":
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[nd - 1](input,
                                                                                   out)
    # the kernels' own checks (torch's upsample_*_common_check and compute_output_size)
    if out is None:
        out = [int(input.shape[i + 2] * scales[i]) for i in range(nd)]
    names = ("W",) if nd == 1 else ("H", "W") if nd == 2 else ("D", "H", "W")
    spatial = tuple(int(v) for v in input.shape[2:])
    if any(v <= 0 for v in spatial + tuple(out)):
        listing = lambda vals: ", ".join(f"{n}: {v}" for n, v in zip(names, vals))  # noqa: E731
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({listing(spatial)}) output ({listing(out)})")
    if input.shape[1] == 0 or any(v == 0 for v in spatial):
        raise RuntimeError(f"Non-empty {input.ndim}D data tensor expected but got a tensor with "
                           f"sizes {list(input.shape)}")
    _interp_dtype_check(input, mode, nd, antialias)
    out = tuple(out)
    scales = (None,) * nd if scales is None else tuple(scales)
    mode_k = "linear" if mode in ("linear", "bilinear", "trilinear") else mode
    if mode_k in ("bicubic", "lanczos") or antialias:
        ms = [Tensor._make(jnp.asarray(_interp_matrix(int(input.shape[2 + i]), out[i], mode_k,
                                                      bool(align_corners), scales[i],
                                                      antialias)))
              for i in range(nd)]
        return apply(_interp_by_matrices, input, *ms, mode=mode_k, nd=nd, aa=bool(antialias))
    return apply(_interpolate, input, size=out, mode=mode_k, align_corners=bool(align_corners),
                 nd=nd, scales=scales)


@defop("im2col", grad_name="Im2ColBackward0")
def _unfold(x, k, d, p, s):
    n, c = x.shape[:2]
    patches = jax.lax.conv_general_dilated_patches(
        x, k, s, [(pp, pp) for pp in p], rhs_dilation=d,
        dimension_numbers=("NCHW", "OIHW", "NCHW"), precision=jax.lax.Precision.HIGHEST)
    return patches.reshape(n, c * k[0] * k[1], -1)


def _im2col_sizes_are_ints(op, **kw):
    """torch's argument parser on im2col/col2im's ``int[2]`` arguments (after ``_pair``):
    floats raise its TypeError; positions count from the input (1)."""
    for pos, (name, v) in enumerate(kw.items(), start=2):
        _int_list_arg(op, name, pos, tuple(v) if isinstance(v, (tuple, list)) else (v, v))


def _im2col_params(**kw):
    out = {}
    for name, v in kw.items():
        if isinstance(v, (tuple, list)) and len(v) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(v)}")
        out[name] = _tup(v, 2)
    return out


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """torch's im2col, with its checks (an unbatched 3-D input is one sample)."""
    _im2col_sizes_are_ints("im2col", kernel_size=kernel_size, dilation=dilation,
                           padding=padding, stride=stride)
    if input.ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-input.ndim}, "
                         f"{input.ndim - 1}], but got 2)")
    a = _im2col_params(kernel_size=kernel_size, dilation=dilation, padding=padding,
                       stride=stride)
    k, d, p, s = a["kernel_size"], a["dilation"], a["padding"], a["stride"]
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{k[0]} kernel_width: {k[1]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{d[0]} dilation_width: {d[1]}")
    if min(p) < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} "
                           f"pad_width: {p[1]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} "
                           f"stride_width: {s[1]}")
    shape = list(input.shape)
    if input.ndim not in (3, 4) or any(v == 0 for v in shape[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {shape}")
    hw = shape[-2:]
    blocks = [_ctrunc(hw[i] + 2 * p[i] - (d[i] * (k[i] - 1) + 1), s[i]) + 1 for i in range(2)]
    if min(blocks) < 1:
        raise RuntimeError(f"Given input with spatial size ({hw[0]}, {hw[1]}), kernel_size=("
                           f"{k[0]}, {k[1]}), dilation=({d[0]}, {d[1]}), padding=({p[0]}, "
                           f"{p[1]}), calculated shape of the array of sliding blocks as "
                           f"({blocks[0]}, {blocks[1]}), but its components must be at least "
                           "one.")
    if input.ndim == 3:
        return apply(_unfold, input.unsqueeze(0), k=k, d=d, p=p, s=s).squeeze(0)
    return apply(_unfold, input, k=k, d=d, p=p, s=s)


@defop("col2im", grad_name="Col2ImBackward0")
def _fold(x, out, k, d, p, s):
    n, ckk, _ = x.shape
    c = ckk // (k[0] * k[1])
    H, W = out[0] + 2 * p[0], out[1] + 2 * p[1]
    oh = (H - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (W - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = x.reshape(n, c, k[0], k[1], oh, ow)
    y = jnp.zeros((n, c, H, W), x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            hi = i * d[0]
            wj = j * d[1]
            y = y.at[:, :, hi:hi + s[0] * (oh - 1) + 1:s[0],
                     wj:wj + s[1] * (ow - 1) + 1:s[1]].add(cols[:, :, i, j])
    return y[:, :, p[0]:p[0] + out[0], p[1]:p[1] + out[1]]


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """torch's col2im, with its checks (an unbatched 2-D input is one sample)."""
    _im2col_sizes_are_ints("col2im", output_size=output_size, kernel_size=kernel_size,
                           dilation=dilation, padding=padding, stride=stride)
    a = _im2col_params(output_size=output_size, kernel_size=kernel_size, dilation=dilation,
                       padding=padding, stride=stride)
    out, k, d, p, s = (a["output_size"], a["kernel_size"], a["dilation"], a["padding"],
                       a["stride"])
    if min(k) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: "
                           f"{k[0]} kernel_width: {k[1]}")
    if min(s) <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} "
                           f"stride_width: {s[1]}")
    if min(d) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: "
                           f"{d[0]} dilation_width: {d[1]}")
    if min(p) < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} "
                           f"pad_width: {p[1]}")
    shape = list(input.shape)
    if input.ndim not in (2, 3) or any(v == 0 for v in shape[-2:]):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
                           f"size and non-zero dimensions for input, but got: {shape}")
    planes, length = shape[-2], shape[-1]
    if planes % (k[0] * k[1]):
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={planes} and kernel_size=("
                           f"{k[0]}, {k[1]}).")
    blocks = [(out[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(2)]
    geometry = (f"Given output_size=({out[0]}, {out[1]}), kernel_size=({k[0]}, {k[1]}), "
                f"dilation=({d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), ")
    if length != blocks[0] * blocks[1]:
        raise RuntimeError(geometry + "expected size of input's dimension 2 to match the "
                           f"calculated number of sliding blocks {blocks[0]} * {blocks[1]} = "
                           f"{blocks[0] * blocks[1]}, but got input.size(2)={length}.")
    if min(blocks) < 1:
        raise RuntimeError(geometry + "calculated shape of the array of sliding blocks as ("
                           f"{blocks[0]}, {blocks[1]}), which is too small (non-positive)")
    if input.ndim == 2:
        return apply(_fold, input.unsqueeze(0), out=out, k=k, d=d, p=p, s=s).squeeze(0)
    return apply(_fold, input, out=out, k=k, d=d, p=p, s=s)


# ================================================================== embedding_bag

@defop("embedding_bag", grad_name="EmbeddingBagBackward0")
def _embedding_bag(idx, seg, w, *psw, nbags, mode, padding_idx, scale_grad_by_freq=False):
    rows = jnp.take(w, idx, axis=0)
    if scale_grad_by_freq:
        # each row's gradient divided by its index's count in the whole input (value unchanged)
        counts = jnp.zeros((w.shape[0],), w.dtype).at[idx].add(1)
        sg = jax.lax.stop_gradient(rows)
        rows = sg + (rows - sg) / jnp.take(counts, idx, axis=0)[:, None]
    valid = jnp.ones(idx.shape, bool) if padding_idx is None else idx != padding_idx
    if psw:
        rows = rows * psw[0][:, None]
    rows = jnp.where(valid[:, None], rows, 0)
    if mode == "max":
        neg = jnp.where(valid[:, None], rows, -jnp.inf)
        out = jax.ops.segment_max(neg, seg, num_segments=nbags)
        return jnp.where(jnp.isfinite(out), out, 0)
    s = jax.ops.segment_sum(rows, seg, num_segments=nbags)
    if mode == "sum":
        return s
    cnt = jax.ops.segment_sum(valid.astype(w.dtype), seg, num_segments=nbags)
    return s / jnp.maximum(cnt, 1)[:, None]


def _embedding_bag_index_error(idx, offsets, weight, mode, padding_idx, per_sample_weights,
                               include_last_offset):
    """torch's CPU error for an index outside [0, num_embeddings), which depends on the kernel.

    max mode, float64 weights and a padding_idx take the plain loop: the first bad index, in
    order. float32/float16/bfloat16 sum and mean take fbgemm, run by ``at::parallel_for`` over
    the bags in ``get_num_threads()`` chunks; a failing chunk re-walks its bags with its
    offsets shifted but not rebased (``fbgemm_spmdm_report_error_``), so the position it names
    is ``i`` counted from the chunk's first index while it reads ``indices[offsets[start] + i]``
    and checks ``i < chunk's index count`` first: the message names the right element only in
    the first chunk. (With several failing chunks torch reports whichever thread fails first:
    nearly always a worker's, not the calling thread's first chunk; this reports the second
    failing chunk then.)"""
    n_emb = int(weight.shape[0])
    flat = idx.reshape(-1).astype(np.int64)
    fbgemm = (mode in ("sum", "mean") and padding_idx is None
              and weight.dtype.name in ("float32", "float16", "bfloat16"))
    if not fbgemm:
        bad = next(int(v) for v in flat if v < 0 or v >= n_emb)
        raise RuntimeError(f"embedding_bag: Expected idx >= 0 && idx < num_embeddings but "
                           f"found idx to be {bad}")
    if idx.ndim == 2:
        b, L = idx.shape
        offs = np.arange(0, b * L + 1, max(L, 1), dtype=np.int64)[:b + 1]
    else:
        offs = np.asarray(offsets._data).astype(np.int64)
        if not include_last_offset:
            offs = np.append(offs, flat.size)
    nbags = offs.size - 1
    from .. import _runtime
    tasks = max(1, min(int(_runtime.get_num_threads()), nbags))
    chunk = -(-nbags // tasks)
    failing = [s for s in range(0, nbags, chunk)
               if np.any(((seg := flat[int(offs[s]):int(offs[min(s + chunk, nbags)])]) < 0)
                         | (seg >= n_emb))]
    for s in failing[1:2] or failing[:1]:
        e = min(s + chunk, nbags)
        base, size = int(offs[s]), int(offs[e] - offs[s])
        for m in range(s, e):
            for i in range(int(offs[m]), int(offs[m + 1])):
                if not i < size:
                    raise RuntimeError("Expected i < index_size to be true, but got false.  "
                                       "(Could this error message be improved?  If so, please "
                                       "report an enhancement request to PyTorch.)")
                v = int(flat[base + i])
                if not 0 <= v < n_emb:
                    raise RuntimeError(f"Index {i} of input takes value {v} which is not in "
                                       f"the valid range [0, {n_emb})")
        if int(offs[e]) != size:
            raise RuntimeError("Yout input seems to be incorrect: the last offset value should "
                               "be the size of the indices tensor, but it appears not.")
    raise RuntimeError("embedding_bag: index out of range")   # not reached


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    # torch.nn.functional.embedding_bag's checks, in its order
    if weight.dtype.name == "int64" and input.is_floating_point():
        import warnings
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=_stacklevel(2))
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {_torch_type_repr(offsets)}")
        if input.dtype is D.bool:
            # (torch builds the offsets with arange in the input's dtype)
            raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'")
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    elif mode not in ("sum", "mean"):
        raise ValueError("mode has to be one of sum, mean or max")
    for t in (input, offsets):
        # (torch names both 'indices')
        if t is not None and t.dtype.name not in ("int64", "int32"):
            raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                               "following scalar types: Long, Int; but got "
                               f"torch.{D.legacy_name(t.dtype)}Tensor instead (while checking "
                               "arguments for embedding_bag)")
    if input.dim() == 1:
        off0 = np.asarray(offsets._data)
        if off0.size and int(off0[0]) != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the "
                               "mini-batch has to start from position 0. However, got "
                               f"{int(off0[0])}\n[ torch.{D.legacy_name(offsets.dtype)}Tensor{{}} ]")
        if off0.size and int(off0[-1]) > input.shape[0]:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length "
                               f"{input.shape[0]} but got offsets[-1] of {int(off0[-1])}")
        if off0.size and np.any(np.diff(off0) < 0):
            raise RuntimeError("Expected i < index_size to be true, but got false.  (Could this "
                               "error message be improved?  If so, please report an enhancement "
                               "request to PyTorch.)")
    idx = np.asarray(input._data)
    if idx.size and (idx.min() < 0 or idx.max() >= weight.shape[0]):
        _embedding_bag_index_error(idx, offsets, weight, mode, padding_idx,
                                   per_sample_weights, include_last_offset)
    if max_norm is not None:
        _embedding_renorm_(weight, input, float(max_norm), float(norm_type))
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    if padding_idx is not None and padding_idx < 0:
        padding_idx = weight.shape[0] + padding_idx
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences.")
        b, n = input.shape
        seg = np.repeat(np.arange(b), n)
        flat = input.reshape(-1)
        psw = per_sample_weights.reshape(-1) if per_sample_weights is not None else None
        nbags = b
    else:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        off = np.asarray(offsets._data).astype(np.int64)
        n = input.shape[0]
        if include_last_offset:
            off = off[:-1]
        nbags = len(off)
        seg = np.searchsorted(off, np.arange(n), side="right") - 1
        flat = input
        psw = per_sample_weights
    if not weight.dtype.is_floating_point:
        from .._ops.view import _cpp_type
        raise RuntimeError("Expected tensor for argument #1 'weight' to have one of the following "
                           f"scalar types: Half, BFloat16, Float, Double; but got "
                           f"{_cpp_type(weight.dtype)} instead (while checking arguments for "
                           "embedding_bag)")
    segt = Tensor._make(jnp.asarray(seg, jnp.int32))
    args = [psw] if psw is not None else []
    if sparse:
        weight._sparse_embedding = True     # (torch's gradient is sparse: optim.SparseAdam)
    return apply(_embedding_bag, flat, segt, weight, *args, nbags=int(nbags), mode=mode,
                 padding_idx=padding_idx, scale_grad_by_freq=bool(scale_grad_by_freq))


# ================================================================== ctc_loss

def _lse3(a, b, c):
    m = jnp.maximum(jnp.maximum(a, b), c)
    m_safe = jnp.where(jnp.isfinite(m), m, 0.0)
    s = jnp.exp(a - m_safe) + jnp.exp(b - m_safe) + jnp.exp(c - m_safe)
    pos = s > 0
    return jnp.where(pos, m_safe + jnp.log(jnp.where(pos, s, 1.0)), -jnp.inf)


def _ctc_nll_true(lp, ext, allow_skip, in_len, tgt_len):
    """Per-sample negative log-likelihood; lp (T, N, C), ext (N, L) extended labels."""
    T, N, _ = lp.shape
    L = ext.shape[1]
    neg = jnp.asarray(-jnp.inf, lp.dtype)
    emit = jnp.take_along_axis(lp, jnp.broadcast_to(ext[None], (T, N, L)), axis=2)  # (T, N, L)
    s_idx = jnp.arange(L)
    alpha0 = jnp.where(s_idx[None, :] < jnp.minimum(2, 2 * tgt_len[:, None] + 1), emit[0], neg)

    def step(alpha, inp):
        t, e = inp
        a1 = jnp.concatenate([jnp.full((N, 1), neg), alpha[:, :-1]], axis=1)
        a2 = jnp.concatenate([jnp.full((N, 2), neg), alpha[:, :-2]], axis=1)
        a2 = jnp.where(allow_skip, a2, neg)
        new = _lse3(alpha, a1, a2) + e
        new = jnp.where((t < in_len)[:, None], new, alpha)
        return new, None

    alpha, _ = _tiers.scan(step, alpha0, (jnp.arange(1, T), emit[1:]))
    end = 2 * tgt_len
    last = jnp.take_along_axis(alpha, end[:, None], axis=1)[:, 0]
    prev = jnp.where(tgt_len > 0,
                     jnp.take_along_axis(alpha, jnp.maximum(end - 1, 0)[:, None], axis=1)[:, 0],
                     neg)
    return -_lse3(last, prev, jnp.full_like(last, -jnp.inf)), last


@functools.partial(jax.custom_vjp, nondiff_argnums=(5,))
def _ctc_nll(lp, ext, allow_skip, in_len, tgt_len, zero_infinity=False):
    return _ctc_nll_true(lp, ext, allow_skip, in_len, tgt_len)[0]


def _ctc_fwd(lp, ext, allow_skip, in_len, tgt_len, zero_infinity=False):
    out, vjp, last = jax.vjp(lambda x: _ctc_nll_true(x, ext, allow_skip, in_len, tgt_len), lp,
                             has_aux=True)
    return out, (vjp, lp, in_len, out, ext, tgt_len, last)


def _ctc_bwd(zero_infinity, res, ct):
    vjp, lp, in_len, nll, ext, tgt_len, last = res
    (g,) = vjp(ct)
    # torch's kernel, where the last target is the blank itself: at the last time step its
    # blank gradient is assigned from the last label's position, dropping the final blank's
    # share (exp(alpha + nll) of it)
    blank = ext[:, 0]
    end_label = jnp.take_along_axis(ext, jnp.maximum(2 * tgt_len - 1, 0)[:, None], axis=1)[:, 0]
    lost = (tgt_len > 0) & (end_label == blank) & (in_len > 0)
    share = jnp.where(lost & jnp.isfinite(nll), jnp.exp(last + nll) * ct, 0.0)
    T, C = lp.shape[0], lp.shape[2]
    at = (jnp.arange(T)[:, None, None] == (in_len - 1)[None, :, None]) & \
        (jnp.arange(C)[None, None, :] == blank[None, :, None])
    g = g + jnp.where(at, share[None, :, None], 0.0)
    # torch's kernel returns the gradient for log_softmax inputs: it adds exp(log_probs) on
    # the valid time steps (the two agree once back-propagated through log_softmax)
    T = lp.shape[0]
    valid = (jnp.arange(T)[:, None] < in_len[None, :])[..., None]
    ctf = jnp.where(jnp.isfinite(nll), ct, 0.0)[None, :, None]
    g = jnp.where(jnp.isfinite(g), g, 0.0) + jnp.where(valid, jnp.exp(lp) * ctf, 0.0)
    if not zero_infinity:
        # torch: an impossible alignment (nll = inf) gives NaN on its valid time steps
        # (exp(-inf + inf)); zero_infinity=True gives 0 there
        g = jnp.where(valid & ~jnp.isfinite(nll)[None, :, None], jnp.nan, g)
    return g.astype(lp.dtype), None, None, None, None


_ctc_nll.defvjp(_ctc_fwd, _ctc_bwd)


@defop("ctc_loss", grad_name=lambda kw: {"mean": "MeanBackward0", "sum": "SumBackward0"}.get(
    kw["reduction"], "CtcLossBackward0"))
def _ctc_loss(lp, targets, in_len, tgt_len, blank, reduction, zero_infinity, unbatched,
              concatenated, smax):
    if unbatched:
        lp = lp[:, None, :]
        targets = targets[None]
        in_len = in_len.reshape(1)
        tgt_len = tgt_len.reshape(1)
    N = lp.shape[1]
    tgt_len = tgt_len.astype(jnp.int32)
    in_len = in_len.astype(jnp.int32)
    if concatenated:
        starts = jnp.concatenate([jnp.zeros(1, jnp.int32), jnp.cumsum(tgt_len)[:-1]])
        idx = starts[:, None] + jnp.arange(smax)[None, :]
        tg = jnp.take(targets, jnp.clip(idx, 0, max(targets.shape[0] - 1, 0)))
    else:
        tg = targets[:, :smax] if smax else jnp.zeros((N, 0), targets.dtype)
    tg = jnp.where(jnp.arange(smax)[None, :] < tgt_len[:, None], tg, blank).astype(jnp.int32)
    L = 2 * smax + 1
    ext = jnp.full((N, L), blank, jnp.int32)
    ext = ext.at[:, 1::2].set(tg)
    prev2 = jnp.concatenate([jnp.full((N, 2), blank, jnp.int32), ext[:, :-2]], axis=1)
    # torch's kernel: a skip from s-2 whenever l'[s] != l'[s-2] (the blank positions never
    # skip, their s-2 being blank too; a target equal to the blank skips like any label)
    allow_skip = ext != prev2
    nll = _ctc_nll(lp, ext, allow_skip, in_len, tgt_len, bool(zero_infinity))
    if zero_infinity:
        nll = jnp.where(jnp.isinf(nll), 0.0, nll)
    if reduction == "mean":
        out = jnp.mean(nll / jnp.maximum(tgt_len, 1).astype(nll.dtype))
    elif reduction == "sum":
        out = jnp.sum(nll)
    else:
        out = nll
    return out[0] if unbatched and reduction == "none" else out


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    _check_reduction(reduction)

    def as_t(v):
        if isinstance(v, Tensor):
            return v
        return Tensor._make(jnp.asarray(np.asarray(v, np.int64)))
    input_lengths, target_lengths = as_t(input_lengths), as_t(target_lengths)
    for name, t in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if t.dtype.is_floating_point or t.dtype.is_complex or t.dtype is D.bool:
            raise RuntimeError(f"{name} must be integral")
    unbatched = log_probs.ndim == 2
    batch = 1 if unbatched else log_probs.shape[1]
    n_classes = log_probs.shape[-1]
    if not 0 <= blank < n_classes:
        raise RuntimeError("blank must be in label range")
    if input_lengths.numel() != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if target_lengths.numel() != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    il = np.asarray(input_lengths._data).reshape(-1)
    tl = np.asarray(target_lengths._data).reshape(-1)
    # ctc_loss_allocate_outputs' checks, in its order
    where = " (while checking arguments for ctc_loss_allocate_outputs)"
    for v in tl:
        if int(v) < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got "
                               f"value {int(v)}{where}")
    if not unbatched and targets.ndim == 1:
        if targets.shape[0] != int(tl.sum()):
            raise RuntimeError(f"Expected tensor to have size {int(tl.sum())} at dimension 0, "
                               f"but got size {targets.shape[0]} for argument #2 'targets'"
                               f"{where}")
    elif not unbatched:
        if targets.shape[0] != batch:
            raise RuntimeError(f"Expected tensor to have size {batch} at dimension 0, but got "
                               f"size {targets.shape[0]} for argument #2 'targets'{where}")
        if tl.size and targets.shape[1] < int(tl.max()):
            raise RuntimeError(f"Expected tensor to have size at least {int(tl.max())} at "
                               f"dimension 1, but got size {targets.shape[1]} for argument #2 "
                               f"'targets'{where}")
    for v in il:
        if int(v) < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got "
                               f"value {int(v)}{where}")
        if int(v) > log_probs.shape[0]:
            raise RuntimeError(f"Expected input_lengths to have value at most "
                               f"{log_probs.shape[0]}, but got value {int(v)}{where}")
    concatenated = targets.ndim == 1 and not unbatched
    smax = int(tl.max()) if tl.size else 0
    return apply(_ctc_loss, log_probs, targets, input_lengths, target_lengths, blank=int(blank),
                 reduction=reduction, zero_infinity=bool(zero_infinity), unbatched=unbatched,
                 concatenated=concatenated, smax=smax)


# ================================================================== more losses

# torch's poisson_nll_loss ends in exp(x) - t * x (or x - t * log(x + eps)), to which full
# adds the Stirling term in place
@defop("poisson_nll_loss", promote="common",
       grad_name=lambda kw: _loss_name("AddBackward0" if kw["full"] else "SubBackward0")(kw))
def _poisson_nll(x, t, log_input, full, eps, reduction):
    if log_input:
        loss = jnp.exp(x) - t * x
    else:
        loss = x - t * jnp.log(x + eps)
    if full:
        # torch's ``stirling.masked_fill(target <= 1, 0)``: the masked term's target gradient
        # is 0 * log(0) = NaN at a zero target, as in torch
        st = t * jnp.log(t) - t + 0.5 * jnp.log(2 * jnp.pi * t)
        loss = loss + jnp.where(t <= 1, 0.0, st)
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    _broadcastable(target, input)
    if input.dtype is D.bool or target.dtype is D.bool:
        raise RuntimeError(_SUB_BOOL1)
    return _int_to_default_float(
        apply(_poisson_nll, input, target, log_input=bool(log_input), full=bool(full),
              eps=float(eps), reduction=reduction), input, target)


@jax.custom_vjp
def _clamp_min_identity_grad(v, eps):
    return jnp.maximum(v, eps)


_clamp_min_identity_grad.defvjp(lambda v, eps: (jnp.maximum(v, eps), None),
                                lambda _, g: (g, None))


# torch's gaussian_nll_loss ends in 0.5 * (...), to which full adds 0.5 * log(2 pi) in place
@defop("gaussian_nll_loss", promote="common",
       grad_name=lambda kw: _loss_name("AddBackward0" if kw["full"] else "MulBackward0")(kw))
def _gaussian_nll(x, t, var, full, eps, reduction):
    if var.ndim == x.ndim - 1 or (var.ndim == x.ndim and var.shape[-1] == 1
                                  and x.shape[-1] != 1):
        var = var.reshape(var.shape[:x.ndim - 1] + (1,)) if var.ndim == x.ndim - 1 else var
    # torch clamps var under no_grad: the gradient passes through unchanged
    var = _clamp_min_identity_grad(var, eps)
    loss = 0.5 * (jnp.log(var) + (x - t) ** 2 / var)
    if full:
        loss = loss + 0.5 * jnp.log(2 * jnp.pi)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    _check_reduction_named(reduction)
    if isinstance(var, (int, float)):
        var = Tensor._make(jnp.full(tuple(input.shape), float(var), input._d.dtype))
    ish, vsh = tuple(input.shape), tuple(var.shape)
    if vsh != ish and not (vsh[:-1] == ish[:-1] and vsh[-1:] == (1,)) and vsh != ish[:-1]:
        raise ValueError("var is of incorrect size")
    if var.dtype.is_complex:        # (torch: torch.any(var < 0), then var.clamp_(min=eps))
        raise NotImplementedError(f'"lt_cpu" not implemented for '
                                  f"'{D.legacy_name(var.dtype)}'")
    if bool((np.asarray(var._data) < 0).any()):
        raise ValueError("var has negative entry/entries")
    if not var.dtype.is_floating_point:
        raise RuntimeError(f"result type {D.legacy_name(D.get_default_dtype())} can't be cast "
                           f"to the desired output type {_CPP_NAMES[var.dtype.name]}")
    return apply(_gaussian_nll, input, target, var, full=bool(full), eps=float(eps),
                 reduction=reduction)


@defop("hinge_embedding_loss", promote="common", grad_name=_loss_name("AddBackward0"))
def _hinge_emb(x, t, margin, reduction):
    m = _clamp_min(margin - x, 0)
    loss = jnp.where(t != 1, m, 0.0) + jnp.where(t != -1, x, 0.0)
    return _reduce(loss, reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    _broadcastable(target, input)
    if input.dtype.is_complex:
        raise NotImplementedError(_CLAMP_COMPLEX)
    if input.dtype is D.bool:
        raise RuntimeError(_SUB_BOOL2)
    if not input.dtype.is_floating_point and reduction == "mean":
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {D.legacy_name(input.dtype)}")
    # torch reads the target only through comparisons: it has no gradient (None)
    return apply(_hinge_emb, input, target.detach(), margin=float(margin), reduction=reduction)


@defop("multilabel_soft_margin_loss", promote="common", grad_name=_loss_name("DivBackward0"))
def _mlsm(x, t, *w, reduction):
    loss = -(t * jax.nn.log_sigmoid(x) + (1 - t) * jax.nn.log_sigmoid(-x))
    if w:
        loss = loss * w[0]
    class_dim = x.ndim - 1          # torch's: counted from the front of the (broadcast) loss
    loss = jnp.sum(loss, axis=class_dim) / x.shape[class_dim]
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    reduction = _check_reduction_named(_legacy_reduction(size_average, reduce, reduction))
    _float_kernel("log_sigmoid_cpu", input)        # (torch: logsigmoid(input) first)
    _broadcastable(target, input)
    if input.ndim == 0:             # (torch: input.size(input.dim() - 1))
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    args = [weight] if weight is not None else []
    return apply(_mlsm, input, target, *args, reduction=reduction)


@defop("multi_margin_loss", grad_name="MultiMarginLossBackward0")
def _multi_margin(x, y, *w, p, margin, reduction):
    unb = x.ndim == 1
    if unb:
        x, y = x[None], y.reshape(1)
    c = x.shape[1]
    xy = jnp.take_along_axis(x, y[:, None], axis=1)
    z = _positive(margin - xy + x)
    if p == 2:
        z = z * z
    if w:
        z = z * jnp.take(w[0], y)[:, None]
    z = jnp.where(jnp.arange(c)[None, :] == y[:, None], 0.0, z)
    loss = jnp.sum(z, axis=1) / c
    if unb and reduction == "none":
        return loss[0]
    return _reduce(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if input.ndim > 2 or (input.ndim == 2 and input.shape[1] == 0):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")
    n = 1 if input.ndim < 2 else input.shape[0]
    c = 1 if input.ndim == 0 else input.shape[-1]
    if target.ndim > 1 or target.numel() != n:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{n}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if target.dtype is not D.int64:     # (Long only: a Byte target too)
        raise RuntimeError("expected scalar type Long but found " + D.legacy_name(target.dtype))
    _no_grad_arg("multi_margin_loss", "weight", weight)
    if weight is not None and (weight.ndim != 1 or weight.numel() != c):
        raise RuntimeError(f"inconsistent weight size, expected {c} but got "
                           f"{list(weight.shape)}")
    _check_float_input(input, "multi_margin_loss_cpu_kernel")
    t = np.asarray(target._data)
    if t.size and ((t < 0) | (t >= c)).any():
        raise RuntimeError("target out of range")
    if input.ndim == 0:
        input, target = input.reshape(1), target.reshape(())
    args = [weight] if weight is not None else []
    return apply(_multi_margin, input, target, *args, p=int(p), margin=float(margin),
                 reduction=reduction)


# ================================================================== smaller extras

def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return adaptive_max_pool3d(input, output_size, True)


GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


def adaptive_max_pool3d(input, output_size, return_indices=False):
    outs = _adaptive_size(input, output_size, 3, "max")
    if return_indices:
        return apply(_adaptive_max_idx, input, outs=outs, nd=3)
    return apply(_adaptive_max, input, outs=outs, nd=3)


def rrelu_(input, *args, **kwargs):
    lower, upper, training = _native_numbers(
        "rrelu_", [("lower", 1.0 / 8), ("upper", 1.0 / 3), ("training", False)], args, kwargs)
    return rrelu(input, lower, upper, training, True)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=_stacklevel(2))
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=_stacklevel(2))
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=_stacklevel(2))
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


@defop("channel_shuffle", grad_name="ChannelShuffleBackward0", saves=False)
def _channel_shuffle(x, groups):
    n, c = x.shape[:2]
    rest = x.shape[2:]
    x = x.reshape((n, groups, c // groups) + rest)
    return jnp.swapaxes(x, 1, 2).reshape((n, c) + rest)


def channel_shuffle(input, groups):
    if input.ndim <= 2:
        raise RuntimeError("channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input.shape)}")
    if groups <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got "
                           f"{input.shape[1]} channels and {groups} groups.")
    return apply(_channel_shuffle, input, groups=int(groups))


native_channel_shuffle = channel_shuffle


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd):
    fn = ("max" if math.isinf(norm_type) else "avg") + f"_pool{nd}d"
    _int_list_arg(fn, "kernel_size", 2, kernel_size)       # (torch pools with them as given)
    _int_list_arg(fn, "stride", 3, stride)
    k = _tup(kernel_size, nd)
    if math.isinf(norm_type):
        # torch 2.13: the infinity norm is the largest |x| (-inf: the smallest)
        mp = (max_pool1d, max_pool2d, max_pool3d)[nd - 1]
        if norm_type > 0:
            return mp(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -mp(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    pool = (avg_pool1d, avg_pool2d, avg_pool3d)[nd - 1]
    if stride is not None:
        out = pool(input.pow(norm_type), k, stride, 0, ceil_mode)
    else:
        out = pool(input.pow(norm_type), k, padding=0, ceil_mode=ceil_mode)
    n = 1
    for v in k:
        n *= v
    return (out.sign() * relu(out.abs())).mul(n).pow(1.0 / norm_type)


def _lp_norm(norm_type):
    """torch pools ``input.pow(norm_type)``: an int power keeps an integer input integral
    (its average pooling then divides as integers, or raises for the types it lacks)."""
    if isinstance(norm_type, (int, np.integer)) and not isinstance(norm_type, bool):
        return int(norm_type)
    return float(norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, _lp_norm(norm_type), kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, _lp_norm(norm_type), kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, _lp_norm(norm_type), kernel_size, stride, ceil_mode, 3)


@defop("local_response_norm", grad_name="DivBackward0")
def _lrn(x, size, alpha, beta, k):
    sq = x * x
    pads = [(0, 0)] * x.ndim
    pads[1] = (size // 2, (size - 1) // 2)
    sq = jnp.pad(sq, pads)
    win = [1] * x.ndim
    win[1] = size
    div = jax.lax.reduce_window(sq, 0.0, jax.lax.add, tuple(win), (1,) * x.ndim,
                                [(0, 0)] * x.ndim) / size
    return x / (div * alpha + k) ** beta


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    if input.dim() < 3:
        raise ValueError("Expected 3D or higher dimensionality                          input "
                         f"(got {input.dim()} dimensions)")     # (torch's spaces)
    if not (input.dtype.is_floating_point or input.dtype is D.int64):
        # torch averages the squares with avg_pool2d (3-D input) or avg_pool3d
        kernel = "avg_pool2d" if input.dim() == 3 else "avg_pool3d_out_frame"
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{D.legacy_name(input.dtype)}'")
    if input.numel() == 0:
        return input
    return apply(_lrn, input, size=int(size), alpha=float(alpha), beta=float(beta), k=float(k))


@defop("max_unpool", grad_name=lambda kw: "MaxUnpool3DBackward0" if len(kw["out"]) == 3
       else "MaxUnpool2DBackward0")
def _max_unpool(x, idx, out):
    return _unpool_scatter(x, idx, tuple(out))


@functools.partial(jax.custom_jvp, nondiff_argnums=(2,))
def _unpool_scatter(x, idx, out):
    return _unpool_write(x, idx, out, "set")


@_unpool_scatter.defjvp
def _unpool_scatter_jvp(out, primals, tangents):
    # torch's max_unpool backward gathers the output gradient at every index, so an input whose
    # index repeats (overlapping pooling windows) gets the gradient of that output position each
    # time; a scatter-add tangent transposes to exactly that gather (a scatter-set's would give it
    # only to the one write that won)
    (x, idx), (t, _) = primals, tangents
    return _unpool_write(x, idx, out, "set"), _unpool_write(t, idx, out, "add")


def _unpool_write(x, idx, out, how):
    n, c = x.shape[:2]
    flat = jnp.zeros((n, c, int(np.prod(out))), x.dtype)
    m = int(np.prod(x.shape[2:]))      # (explicit: a batch of 0 leaves no -1 to infer)
    at = flat.at[jnp.arange(n)[:, None, None], jnp.arange(c)[None, :, None],
                 idx.reshape(n, c, m)]
    flat = at.set(x.reshape(n, c, m)) if how == "set" else at.add(x.reshape(n, c, m))
    return flat.reshape((n, c) + tuple(out))


def _last_bad_unpool_index(idx, size):
    """(an index is outside ``[0, size)``, the last that is in memory order): what torch's
    max_unpool kernel reports (it records every bad index and raises the last), numpy or jax."""
    xp = np if isinstance(idx, np.ndarray) else jnp
    flat = idx.reshape(-1)
    if not flat.size:
        return xp.zeros(2, xp.int64)
    bad = (flat < 0) | (flat >= size)
    last = flat.size - 1 - xp.argmax(bad[::-1])
    return xp.stack([bad.any().astype(xp.int64), flat[last].astype(xp.int64)])


def _last_bad_unpool_index_cl(idx, size):
    """The same over a channels-last input, which torch's kernel walks channels innermost."""
    return _last_bad_unpool_index(idx.reshape(idx.shape[:2] + (-1,)).swapaxes(1, 2), size)


def _check_unpool_indices(input, indices, out):
    """torch's RuntimeError for an index outside the output (jax would drop or wrap it
    silently); in fused eager a computed index tensor is checked when its segment runs, while
    torchlike.compile traces inside the program."""
    size = int(np.prod(out))
    dims = "x".join(str(v) for v in out)

    def error(v):
        if not v[0]:
            return None
        return RuntimeError(f"Found an invalid max index: {int(v[1])} (output volumes are of "
                            f"size {dims})")
    cl = (input.ndim == 4 and not input.is_contiguous()
          and input.is_contiguous(memory_format=_channels_last()))
    fn = _last_bad_unpool_index_cl if cl else _last_bad_unpool_index
    d = _fused.raw(indices)
    if isinstance(d, jax.core.Tracer):
        from .._compile._hostchecks import value_check
        value_check(d, lambda a: fn(a, size)[0] != 0, lambda v: error((1, v)),
                    lambda a: fn(a, size)[1])
        return
    if _fused.defer_check(fn, [d, size], error):
        return
    e = error(fn(np.asarray(indices._data), size))
    if e is not None:
        raise e


def _channels_last():
    from .. import channels_last
    return channels_last


def _max_unpoolnd(input, indices, kernel_size, stride, padding, output_size, nd):
    k = _tup(kernel_size, nd)
    s = _tup(stride if stride is not None else kernel_size, nd)
    p = _tup(padding, nd)
    # torch's _unpool_output_size
    default = [(input.shape[-nd + i] - 1) * s[i] + k[i] - 2 * p[i] for i in range(nd)]
    if output_size is not None:
        if len(output_size) == nd + 2:
            output_size = output_size[2:]
        if len(output_size) != nd:
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                             f"elements, but it has a length of '{len(output_size)}'")
        for i in range(nd):
            lo, hi = default[i] - s[i], default[i] + s[i]
            if not lo < output_size[i] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {i} must be between '
                                 f"{lo} and {hi})")
        out = list(output_size)
    else:
        out = list(default)
    for i in range(nd):
        cond = out[i] >= 0
        if isinstance(cond, Tensor):
            # (torch._check_value refuses the tensor its comparison gives)
            raise TypeError("cond must be a bool, but got a Tensor. For tensor conditions, use "
                            "torch._check_tensor_all() to assert that all elements are true.")
        if not isinstance(cond, bool):
            raise TypeError(f"cond must be a bool, but got {type(cond)}")
        if not cond:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{i}]={out[i]}")
    native = "max_unpool3d" if nd == 3 else "max_unpool2d"
    for i, v in enumerate(out):
        if not isinstance(v, int) or (i == 0 and isinstance(v, bool)):
            # (torch's argument parser words the first element and the later ones apart; only
            # its first-element check refuses a bool)
            if i == 0:
                raise TypeError(f"{native}(): argument 'output_size' (position 3) must be tuple "
                                f"of ints, but found element of type {type(v).__name__} at pos 0")
            raise TypeError(f"{native}(): argument 'output_size' failed to unpack the object at "
                            f"pos {i + 1} with error \"type must be tuple of ints,but got "
                            f"{type(v).__name__}\"")
    out = tuple(int(v) for v in out)
    if nd == 3:
        # at::max_unpooling3d_shape_check, in its order
        if indices.dtype is not D.int64:
            raise RuntimeError("elements in indices should be type int64")
        if input.ndim not in (4, 5):
            raise RuntimeError("Input to max_unpooling3d should be a 4d or 5d Tensor, but got a "
                               f"tensor with {input.ndim} dimensions.")
    else:
        # at::max_unpooling2d's checks (1-d runs as 2-d)
        if indices.dtype is not D.int64:
            raise RuntimeError("elements in indices should be type int64 but got: "
                               f"{D.legacy_name(indices.dtype)}")
        if input.ndim not in (nd + 1, nd + 2):
            vnd = input.ndim + (1 if nd == 1 else 0)
            raise RuntimeError("Input to max_unpooling2d should be a 3d or 4d Tensor, but got a "
                               f"tensor with {vnd} dimensions.")
    if tuple(input.shape) != tuple(indices.shape):
        sh = list(input.shape) + ([1] if nd == 1 else [])
        ish = list(indices.shape) + ([1] if nd == 1 else [])
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({sh}) but got indices tensor with shape: {ish}")
    for i in range(1, input.ndim):
        if input.shape[i] == 0:
            sh = list(input.shape) + ([1] if nd == 1 else [])
            raise RuntimeError(f"max_unpooling{3 if nd == 3 else 2}d_forward_out_cpu(): Expected "
                               "input to have non-zero size for non-batch dimensions, but got "
                               f"{sh} with dimension {i} being empty.")
    if nd == 3 and min(s) <= 0:
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(s)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{native}" not implemented for '
                                  f"'{D.legacy_name(input.dtype)}'")
    if input.numel() and int(np.prod(out)):
        # (torch's kernel runs, and checks, only for a non-empty output; 1-d runs as 2-d)
        _check_unpool_indices(input, indices, out + ((1,) if nd == 1 else ()))
    unb = input.ndim == nd + 1
    if unb:
        input, indices = input.unsqueeze(0), indices.unsqueeze(0)
    r = apply(_max_unpool, input, indices, out=out)
    return r.squeeze(0) if unb else r


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpoolnd(input, indices, kernel_size, stride, padding, output_size, 1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpoolnd(input, indices, kernel_size, stride, padding, output_size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpoolnd(input, indices, kernel_size, stride, padding, output_size, 3)


@defop("pdist", saves="both", grad_name="PdistBackward0")
def _pdist(x, p):
    n = x.shape[0]
    i, j = np.triu_indices(n, 1)
    d = x[i] - x[j]
    return _pnorm(d, p, -1, False)


def pdist(input, p=2):
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if input.dtype.name in ("bfloat16", "float16") and input.shape[0] > 1 \
            and input.shape[1] > 0:
        # torch's CPU pdist kernel has no half-precision dtypes (nor under autocast)
        raise NotImplementedError(f'"pdist" not implemented for '
                                  f"'{D.legacy_name(input.dtype)}'")
    return apply(_pdist, input, p=float(p))


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_tnd(input, weight, bias, stride, padding, output_padding, groups, dilation, 3)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    d = distance_function if distance_function is not None else pairwise_distance
    dp = d(anchor, positive)
    dn = d(anchor, negative)
    if swap:
        from .. import minimum
        dn = minimum(dn, d(positive, negative))
    loss = (margin + dp - dn).clamp_min(0)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


@defop("multilabel_margin_loss", grad_name="MultilabelMarginLossBackward0")
def _mlm(x, y, reduction):
    unb = x.ndim == 1
    if unb:
        x, y = x[None], y[None]
    n, c = x.shape
    stop = jnp.cumsum(y < 0, axis=1) > 0
    valid = ~stop
    safe = jnp.where(valid, y, 0)
    is_t = jnp.zeros((n, c), bool).at[jnp.arange(n)[:, None], safe].max(valid)
    xj = jnp.take_along_axis(x, safe, axis=1)                      # (n, k) target scores
    z = _positive(1 - (xj[:, :, None] - x[:, None, :]))            # (n, k, c)
    z = jnp.where(valid[:, :, None] & ~is_t[:, None, :], z, 0)
    loss = jnp.sum(z, axis=(1, 2)) / c
    if unb and reduction == "none":
        return loss[0]
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _check_reduction(_legacy_reduction(size_average, reduce, reduction))
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    _class_target_dtype(target, "expected scalar type Long but found ")
    t = np.asarray(target._data)
    c = input.shape[-1] if input.ndim else 1
    if t.size and ((t < -1) | (t >= c)).any():
        raise RuntimeError("argument #2 'target' is out of range")
    if target.dtype is D.uint8:
        # (torch's kernel reads the targets as Long after checking their range)
        raise RuntimeError("expected scalar type Long but found Byte")
    return apply(_mlm, input, target, reduction=reduction)


# ================================================================== fractional max pooling

def _frac_starts(u, L, O, k, dtype):
    """torch's generate_intervals: window starts from one uniform sample per plane."""
    if O == 1:
        return jnp.full(u.shape + (1,), L - k, jnp.int32)
    alpha = jnp.asarray(L - k, dtype) / jnp.asarray(O - 1, dtype)
    i = jnp.arange(O - 1, dtype=dtype)
    seq = (jnp.floor((i + u[..., None]) * alpha) - jnp.floor(u * alpha)[..., None])
    seq = seq.astype(jnp.int32)
    last = jnp.full(u.shape + (1,), L - k, jnp.int32)
    return jnp.concatenate([seq, last], axis=-1)


@defop("fractional_max_pool",
       grad_name=lambda kw: f"FractionalMaxPool{kw['nd']}DBackward0")
def _fractional_max_pool(x, u, k, outs, nd):
    N, C = x.shape[:2]
    spatial = x.shape[2:]
    # torch's sample order per plane: 2-D (W, H), 3-D (T, H, W)
    order = (1, 0) if nd == 2 else tuple(range(nd))
    idx = []
    for a in range(nd):
        s = _frac_starts(u[..., order[a]].astype(x.dtype), spatial[a], outs[a], k[a], x.dtype)
        win = s[..., :, None] + jnp.arange(k[a])          # (N, C, O_a, k_a)
        win = win.reshape(N, C, *[outs[a] if b == a else 1 for b in range(nd)],
                          *[k[a] if b == a else 1 for b in range(nd)])
        idx.append(win)
    n_ix = jnp.arange(N).reshape((N,) + (1,) * (2 * nd + 1))
    c_ix = jnp.arange(C).reshape((1, C) + (1,) * (2 * nd))
    vals = x[(n_ix, c_ix) + tuple(idx)]                  # (N, C, *outs, *k)
    flat = vals.reshape(N, C, *outs, -1)
    am = jnp.argmax(flat, axis=-1)
    out = jnp.take_along_axis(flat, am[..., None], axis=-1)[..., 0]
    # flat input index of the chosen element, torch's (h * W + w)
    lin = jnp.zeros((N, C) + tuple(outs) + tuple(k), jnp.int64)
    for a in range(nd):
        stride = int(np.prod(spatial[a + 1:]))
        lin = lin + jnp.broadcast_to(idx[a], lin.shape).astype(jnp.int64) * stride
    ind = jnp.take_along_axis(lin.reshape(N, C, *outs, -1), am[..., None], axis=-1)[..., 0]
    return out, ind


def _fractional_max_poolnd(input, kernel_size, output_size, output_ratio, return_indices,
                           _random_samples, nd):
    import torchlike as tl
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         "output_ratio")
    k = _tup(kernel_size, nd)
    if output_size is None:
        if len(output_ratio) > nd:     # a bare float raises TypeError here, as in torch
            raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple "
                             "of Ints.")
        r = tuple(output_ratio) * nd if len(output_ratio) == 1 else tuple(output_ratio)
        output_size = [int(input.shape[-nd + i] * r[i]) for i in range(nd)]
    outs = _tup(output_size, nd)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    names = ("height", "width") if nd == 2 else ("time", "height", "width")
    for a in range(nd):
        L = input.shape[-nd + a]
        if outs[a] + k[a] - 1 > L:
            what = {"height": "pool height", "width": "pool width", "time": "pool time"}[names[a]]
            raise RuntimeError(f"{name}_out(): {what} {k[a]} too large relative to input "
                               f"{names[a]} {L}" if nd == 3 else
                               f"{name}(): {what} {k[a]} too large relative to input "
                               f"{names[a]} {L}")
    unbatched = input.ndim == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    if _random_samples is None:
        _random_samples = tl.rand(x.shape[0], x.shape[1], nd, dtype=input.dtype)
    u = _random_samples
    # (CPU autocast runs torch's fractional_max_pool in float32, its samples cast too)
    x, u = _cast_composite("fractional_max_pool", x, u)
    if u.requires_grad and _gm._state.grad_enabled and input.requires_grad:
        raise RuntimeError(f"The function '{name}' is not differentiable with respect to "
                           "argument 'random_samples'. This input cannot have requires_grad "
                           "True.")
    out, ind = apply(_fractional_max_pool, x, u, k=k, outs=outs, nd=nd)
    if unbatched:
        out, ind = out.squeeze(0), ind.squeeze(0)
    return (out, ind) if return_indices else out


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    return _fractional_max_poolnd(input, kernel_size, output_size, output_ratio,
                                  return_indices, _random_samples, 2)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    return _fractional_max_poolnd(input, kernel_size, output_size, output_ratio,
                                  return_indices, _random_samples, 3)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional_max_poolnd(input, kernel_size, output_size, output_ratio, True,
                                  _random_samples, 2)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _fractional_max_poolnd(input, kernel_size, output_size, output_ratio, True,
                                  _random_samples, 3)


# ================================================================== affine_grid / grid_sample

def _linspace_from_neg_one(n, align_corners, dtype):
    if n <= 1:
        return jnp.zeros((1,), dtype)
    # torch's CPU linspace, bit for bit: a grid point one ulp off a pixel centre moves the
    # floor() of grid_sample's taps, and with it the gradient flowing back to theta
    # (half precision: each of linspace, `* (n - 1)` and `/ n` rounded to the dtype)
    from .._creation import _linspace_np
    r = np.asarray(_linspace_np(-1.0, 1.0, n, D.from_jax(dtype)))
    t = r.dtype.type
    if not align_corners:
        r = (r * t(n - 1)).astype(r.dtype) / t(n)
    return jnp.asarray(r.astype(np.dtype(dtype)))


@defop("affine_grid_generator", grad_name="AffineGridGeneratorBackward0")
def _affine_grid(theta, size, align_corners):
    dt = theta.dtype
    if len(size) == 4:
        N, _, H, W = size
        xs = _linspace_from_neg_one(W, align_corners, dt)
        ys = _linspace_from_neg_one(H, align_corners, dt)
        # torch's base_grid.bmm(theta^T): each output the products summed in order, one
        # rounding each (a grid point one ulp off moves grid_sample's nearest tap at a tie)
        # (half precision: float32 sums rounded once, as torch's reduced-precision bmm)
        up = jnp.float32 if jnp.dtype(dt).itemsize < 4 else dt
        t = theta.astype(up)[:, None, None, :, :]          # (N, 1, 1, 2, 3)
        xs, ys = xs.astype(up), ys.astype(up)
        return (xs[None, None, :, None] * t[..., 0] + ys[None, :, None, None] * t[..., 1]
                + t[..., 2]).astype(dt)
    N, _, D_, H, W = size
    xs = _linspace_from_neg_one(W, align_corners, dt)
    ys = _linspace_from_neg_one(H, align_corners, dt)
    zs = _linspace_from_neg_one(D_, align_corners, dt)
    up = jnp.float32 if jnp.dtype(dt).itemsize < 4 else dt
    t = theta.astype(up)[:, None, None, None, :, :]        # (N, 1, 1, 1, 3, 4)
    xs, ys, zs = xs.astype(up), ys.astype(up), zs.astype(up)
    return (xs[None, None, None, :, None] * t[..., 0] + ys[None, None, :, None, None] * t[..., 1]
            + zs[None, :, None, None, None] * t[..., 2] + t[..., 3]).astype(dt)


_GRID_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False "
                 "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
                 "See the documentation of grid_sample for details.")


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of a batch of affine matrices (torch's affine_grid_generator)."""
    if align_corners is None:
        warnings.warn(_GRID_WARNING, stacklevel=_stacklevel(2))
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    given = size    # torch's messages show it as passed: a list, tuple or torch.Size
    size = tuple(int(s) for s in size)
    if len(size) == 4:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{given}. Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or tuple(theta.shape[-2:]) != (3, 4):
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{given}. Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {given}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                      "when align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.",
                      stacklevel=_stacklevel(2))
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")
    if min(spatial) == 1 and theta.dtype in (D.float16, D.bfloat16):
        # torch's one-point base grid is at::tensor(0, ...), which has no half CPU kernel
        raise NotImplementedError(f'"tensor_cpu" not implemented for '
                                  f"'{D.legacy_name(theta.dtype)}'")
    return apply(_affine_grid, theta, size=size, align_corners=bool(align_corners))


def _unnormalize(coord, size, align_corners):
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(x, twice_low, twice_high):
    if twice_low == twice_high:
        return jnp.zeros_like(x)
    mn = twice_low / 2
    span = (twice_high - twice_low) / 2
    x = jnp.abs(x - mn)
    extra = jnp.fmod(x, span)
    flips = jnp.floor(x / span)
    return jnp.where(jnp.fmod(flips, 2) == 0, extra + mn, span - extra + mn)


def _source_index(coord, size, padding_mode, align_corners):
    return _pad_coord(_unnormalize(coord, size, align_corners), size, padding_mode, align_corners)


def _pad_coord(x, size, padding_mode, align_corners):
    if padding_mode == "border":
        x = _clip_coordinates(x, size)
    elif padding_mode == "reflection":
        x = (_reflect(x, 0, 2 * (size - 1)) if align_corners
             else _reflect(x, -1, 2 * size - 1))
        x = _clip_coordinates(x, size)
    return x


def _clip_coordinates(x, size):
    """``x`` clipped to ``[0, size - 1]`` with torch's gradient (clip_coordinates_set_grad):
    1 strictly inside, 0 on the borders as outside them (jax's clip passes half or all of it
    at a border, where an align_corners grid lands exactly)."""
    return jnp.where((x > 0) & (x < size - 1), x, jax.lax.stop_gradient(jnp.clip(x, 0, size - 1)))


def _cubic_weights(t):
    # torch's get_cubic_upsample_coefficients (A = -0.75)
    A = -0.75

    def conv1(v):
        return ((A + 2) * v - (A + 3)) * v * v + 1

    def conv2(v):
        return ((A * v - 5 * A) * v + 8 * A) * v - 4 * A

    return conv2(t + 1.0), conv1(t), conv1(1.0 - t), conv2(2.0 - t)


def _grid_sample_nd(x, grid, mode, padding_mode, align_corners):
    """torch's grid_sampler_2d / _3d: ``grid[..., 0]`` indexes the last (W) dimension."""
    nd = x.ndim - 2
    N, sizes = x.shape[0], x.shape[2:]
    xt = jnp.moveaxis(x, 1, -1)                            # (N, *spatial, C)
    n = jnp.arange(N).reshape((N,) + (1,) * nd)

    def tap(idx):                                          # float index arrays, one per dim
        inb = functools.reduce(jnp.logical_and, [(i >= 0) & (i <= s - 1)
                                                 for i, s in zip(idx, sizes)])
        ints = tuple(jnp.clip(i, 0, s - 1).astype(jnp.int32) for i, s in zip(idx, sizes))
        v = xt[(n,) + ints]                                # (N, *out_spatial, C)
        return jnp.where(inb[..., None], v, jnp.zeros_like(v))

    raw = [grid[..., nd - 1 - d] for d in range(nd)]       # per spatial dim, outermost first
    if mode == "bicubic":                                  # 4-D only (checked by grid_sample)
        iy, ix = (_unnormalize(c, s, align_corners) for c, s in zip(raw, sizes))
        y0, x0 = jnp.floor(iy), jnp.floor(ix)
        wy, wx = _cubic_weights(iy - y0), _cubic_weights(ix - x0)
        H, W = sizes

        def bounded(yy, xx):
            return tap([_pad_coord(yy, H, padding_mode, align_corners),
                        _pad_coord(xx, W, padding_mode, align_corners)])

        rows = [sum(bounded(y0 - 1 + i, x0 - 1 + j) * wx[j][..., None] for j in range(4))
                for i in range(4)]
        out = sum(rows[i] * wy[i][..., None] for i in range(4))
        return jnp.moveaxis(out, -1, 1)
    coords = [_source_index(c, s, padding_mode, align_corners) for c, s in zip(raw, sizes)]
    if mode == "nearest":
        out = tap([jnp.round(c) for c in coords])
    else:
        lo = [jnp.floor(c) for c in coords]
        out = None
        for corner in itertools.product((0, 1), repeat=nd):
            w = None
            for d in reversed(range(nd)):
                wd = coords[d] - lo[d] if corner[d] else lo[d] + 1 - coords[d]
                w = wd if w is None else w * wd
            term = tap([lo[d] + corner[d] for d in range(nd)]) * w[..., None]
            out = term if out is None else out + term
    return jnp.moveaxis(out, -1, 1)


@defop("grid_sampler_2d", grad_name="GridSampler2DBackward0")
def _grid_sample2d(x, grid, mode, padding_mode, align_corners):
    return _grid_sample_nd(x, grid, mode, padding_mode, align_corners)


@defop("grid_sampler_3d", grad_name="GridSampler3DBackward0")
def _grid_sample3d(x, grid, mode, padding_mode, align_corners):
    return _grid_sample_nd(x, grid, mode, padding_mode, align_corners)


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` at ``grid``'s normalised coordinates (torch's grid_sampler)."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_GRID_WARNING, stacklevel=_stacklevel(2))
        align_corners = False
    # (CPU autocast runs torch's grid_sampler in float32, cast before its checks)
    input, grid = _cast_composite("grid_sampler", input, grid)
    # torch's check_grid_sampler_common, then _2d / _3d's checks, in torch's order
    isz, gsz = list(input.shape), list(grid.shape)
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, but "
                           f"got input with sizes {isz} and grid with sizes {gsz}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last "
                           f"dimension, but got grid with sizes {gsz}")
    for i in range(2, input.dim()):
        if input.shape[i] <= 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {isz} with dimension {i} being "
                               "empty")
    nd = 2 if input.dim() == 4 else 3
    if input.dim() != nd + 2 or grid.dim() != input.dim():
        raise RuntimeError(f"grid_sampler(): expected {nd + 2}D input and grid with same number "
                           f"of dimensions, but got input with sizes {isz} and grid with sizes "
                           f"{gsz}")
    if nd == 3 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if grid.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {D.legacy_name(input.dtype)} but found "
                           f"{D.legacy_name(grid.dtype)}")
    return apply(_grid_sample2d if nd == 2 else _grid_sample3d, input, grid, mode=mode,
                 padding_mode=padding_mode, align_corners=bool(align_corners))


from ._mha_functional import multi_head_attention_forward  # noqa: E402,F401


# ------------------------------------------------------------------ a first argument not a Tensor
#
# torch's functions refuse a first argument that is not a Tensor (``F.gelu(1.0)``); computing a
# value there would be a silent difference. What torch raises was probed against torch 2.13, per
# function: the TypeError of the native function that refuses it (named below where its name or
# its argument's differs from the function's; with ``inplace`` set, the in-place native's), the
# TypeError listing a native's overloads, or, for functions written in Python, the
# AttributeError of the first Tensor attribute they read.

_NATIVE = ("adaptive_avg_pool1d", "adaptive_max_pool1d", "alpha_dropout", "avg_pool1d",
           "avg_pool2d", "avg_pool3d", "batch_norm", "bilinear", "celu", "celu_",
           "channel_shuffle", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "cosine_embedding_loss", "cosine_similarity", "dropout", "elu", "elu_",
           "feature_alpha_dropout", "gelu", "hardshrink", "hardsigmoid", "hardswish", "hardtanh",
           "hardtanh_", "hinge_embedding_loss", "kl_div", "layer_norm", "leaky_relu",
           "leaky_relu_", "linear", "max_pool1d", "max_pool1d_with_indices", "max_pool2d",
           "max_pool2d_with_indices", "max_pool3d", "mish", "multi_margin_loss",
           "multilabel_margin_loss", "native_channel_shuffle", "pad", "pairwise_distance",
           "pdist", "pixel_shuffle", "pixel_unshuffle", "poisson_nll_loss", "prelu", "relu",
           "relu6", "relu_", "rms_norm", "rrelu", "rrelu_", "scaled_dot_product_attention",
           "selu", "selu_", "silu", "soft_margin_loss", "softplus", "softshrink", "threshold",
           "threshold_", "triplet_margin_loss")
_NATIVE_NAMED = {"adaptive_max_pool1d_with_indices": "adaptive_max_pool1d",
                 "cross_entropy": "cross_entropy_loss", "fold": "col2im",
                 "gaussian_nll_loss": "ones_like", "grid_sample": "grid_sampler",
                 "gumbel_softmax": "empty_like", "logsigmoid": "log_sigmoid",
                 "multilabel_soft_margin_loss": "log_sigmoid", "nll_loss": "nll_loss_nd",
                 "one_hot": "one_hot", "unfold": "im2col"}
_IN_PLACE = ("alpha_dropout", "celu", "dropout", "elu", "feature_alpha_dropout", "hardsigmoid",
             "hardswish", "hardtanh", "leaky_relu", "mish", "relu", "relu6", "rrelu", "selu",
             "silu", "threshold")
_OVERLOADS = ("conv1d", "conv2d", "conv3d", "ctc_loss")
# torch's natives exposed as these functions themselves: the Tensor is checked before the
# argument count (for the others, a call Python refuses fails as such first)
_BUILTIN = frozenset(("adaptive_avg_pool1d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
                      "bilinear", "celu_", "channel_shuffle", "conv1d", "conv2d", "conv3d",
                      "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                      "cosine_similarity", "elu_", "gelu", "hardshrink", "hardtanh_",
                      "leaky_relu_", "linear", "logsigmoid", "native_channel_shuffle",
                      "one_hot", "pairwise_distance", "pdist", "pixel_shuffle",
                      "pixel_unshuffle", "prelu", "relu_", "rrelu_",
                      "scaled_dot_product_attention", "selu_", "softplus", "softshrink",
                      "threshold_"))
_READS = {"adaptive_avg_pool2d": "size", "adaptive_avg_pool3d": "size",
          "adaptive_max_pool2d": "size", "adaptive_max_pool2d_with_indices": "size",
          "adaptive_max_pool3d": "size", "affine_grid": "is_floating_point",
          "binary_cross_entropy": "size", "binary_cross_entropy_with_logits": "size",
          "dropout1d": "dim", "dropout2d": "dim", "dropout3d": "dim", "embedding_bag": "dtype",
          "fractional_max_pool2d": "dim", "fractional_max_pool2d_with_indices": "dim",
          "fractional_max_pool3d": "dim", "fractional_max_pool3d_with_indices": "dim",
          "glu": "dim", "group_norm": "dim", "huber_loss": "size", "instance_norm": "size",
          "interpolate": "dim", "l1_loss": "size", "local_response_norm": "dim",
          "log_softmax": "dim", "lp_pool1d": "pow", "lp_pool2d": "pow", "lp_pool3d": "pow",
          "margin_ranking_loss": "dim", "max_pool3d_with_indices": "is_cuda",
          "max_unpool1d": "size", "max_unpool2d": "size", "max_unpool3d": "size",
          "mse_loss": "size", "normalize": "norm", "sigmoid": "sigmoid", "smooth_l1_loss": "size",
          "softmax": "dim", "softmin": "dim", "softsign": "abs", "tanh": "tanh",
          "tanhshrink": "tanh", "triplet_margin_with_distance_loss": "ndim", "upsample": "dim",
          "upsample_bilinear": "dim", "upsample_nearest": "dim"}


def _refusing(fn, name):
    """``fn`` raising torch's error (above) when its first argument is not a Tensor."""
    import functools
    import inspect
    from .._registry import _Tensor
    from .._tensor import _type_name, no_attribute, not_a_tensor
    sig = inspect.signature(fn)
    params = list(sig.parameters)
    first = params[0]
    inplace_at = params.index("inplace") if name in _IN_PLACE and "inplace" in params else None
    native = _NATIVE_NAMED.get(name, name)
    reads = _READS.get(name)

    builtin = name in _BUILTIN

    def refuse(args, kwargs, x):
        if not builtin:
            try:
                sig.bind(*args, **kwargs)
            except TypeError:       # (a call Python refuses first: its own message)
                return fn(*args, **kwargs)
        if reads is not None:
            raise no_attribute(x, reads)
        if name in _OVERLOADS:
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            f"({', '.join(_type_name(a) for a in args)}), but expected a Tensor "
                            f"as '{first}'")
        # (a native named otherwise calls its argument "input")
        label, n = ("input" if name in _NATIVE_NAMED else first), native
        if inplace_at is not None and (args[inplace_at] if len(args) > inplace_at
                                       else kwargs.get("inplace")):
            n = native + "_"
        raise not_a_tensor(n, x, label)

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        x = args[0] if args else kwargs.get(first, _Tensor)
        if not isinstance(x, _Tensor) and x is not _Tensor:
            return refuse(args, kwargs, x)
        return fn(*args, **kwargs)
    return checked


def _embedding_refusing(fn):
    """``embedding``: torch's native takes ``(weight, indices)`` and checks them in that order."""
    import functools
    from .._registry import _Tensor
    from .._tensor import no_attribute, not_a_tensor

    @functools.wraps(fn)
    def checked(input, weight, *args, **kwargs):
        padding_idx = args[0] if args else kwargs.get("padding_idx")
        if padding_idx is not None and not isinstance(weight, _Tensor):
            raise no_attribute(weight, "size")  # (torch checks padding_idx against it first)
        if not isinstance(weight, _Tensor):
            raise not_a_tensor("embedding", weight, "weight")
        if not isinstance(input, _Tensor):
            raise not_a_tensor("embedding", input, "indices", 2)
        return fn(input, weight, *args, **kwargs)
    return checked


def _install_refusals():
    g = globals()
    for name in (*_NATIVE, *_NATIVE_NAMED, *_OVERLOADS, *_READS):
        if name in g and name != "embedding":
            g[name] = _refusing(g[name], name)
    g["embedding"] = _embedding_refusing(g["embedding"])


_install_refusals()


# ---------------------------------------------------------------- torch's private helpers
# (custom attention / normalization layers written as torch's own import these)
def _verify_batch_size(size):
    size_prods = size[0]
    for i in range(len(size) - 2):
        size_prods *= size[i + 2]
    if size_prods == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{size}")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    if mask is not None:
        mask_dtype = mask.dtype
        mask_is_float = mask.is_floating_point()
        if mask_dtype != D.bool and not mask_is_float:
            raise AssertionError(f"only bool and floating types of {mask_name} are supported")
        if check_other and other_type is not None and mask_dtype != other_type:
            warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                          "Use same type for both instead.", stacklevel=_stacklevel(2))
        if not mask_is_float:
            mask = _tl.zeros_like(mask, dtype=target_type).masked_fill_(mask, float("-inf"))
    return mask


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, _tl.Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _in_projection_packed(q, k, v, w, b=None):
    """torch's packed in-projection of multi-head attention: (q, k, v) projected by the
    stacked weight ``w`` (3E, E) and bias ``b``."""
    from ._mha_functional import _in_projection_packed as _packed
    return _packed(q, k, v, w, b)


# (an object that is not a Tensor but defines ``__torch_function__`` takes over the functions
# it is passed to: torchlike.overrides; torch defines these in Python)
from .. import overrides as _overrides  # noqa: E402
_overrides.make_overridable(globals(), "torch.nn.functional", python=True, native={
    # (the functions torch binds from its native ones: their names in its messages)
    **{n: "torch." + n for n in (
        "adaptive_avg_pool1d", "avg_pool1d", "bilinear", "celu_", "channel_shuffle", "conv1d",
        "conv2d", "conv3d", "conv_tbc", "conv_transpose1d", "conv_transpose2d",
        "conv_transpose3d", "cosine_similarity", "hardshrink", "native_channel_shuffle",
        "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "prelu", "relu_",
        "rrelu_", "selu_", "threshold_")},
    **{n: "torch.nn." + n for n in (
        "avg_pool2d", "avg_pool3d", "elu_", "gelu", "hardtanh_", "leaky_relu_", "linear",
        "one_hot", "scaled_dot_product_attention", "softplus", "softshrink")},
    "logsigmoid": "torch.nn.log_sigmoid"})
