"""torchlike.nn.init: in-place initialisers with torch's bounds (run under no_grad)."""
from __future__ import annotations

import math
import warnings

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .. import _random
from .. import _tiers
from .parameter import is_lazy, uninitialized_use_error

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_", "eye_",
           "dirac_", "trunc_normal_", "orthogonal_", "kaiming_uniform_", "kaiming_normal_",
           "xavier_uniform_", "xavier_normal_", "sparse_", "sparse"]


def calculate_gain(nonlinearity, param=None):
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, int) or isinstance(param, float):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fans(t):
    if t.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    rf = 1
    for s in t.shape[2:]:
        rf *= s
    return t.shape[1] * rf, t.shape[0] * rf


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid_modes}")
    fan_in, fan_out = _fans(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _write(t, arr, generator=None):
    if _tiers.on_host() and not isinstance(arr, jax.core.Tracer):
        # the cast on the host: an eager astype compiles a program per shape
        t._set_data(_tiers.to_device(np.asarray(arr).astype(t._d.dtype)))
    else:
        t._set_data(arr.astype(t._d.dtype))
    return t


def _need_float(tensor, kernel):
    """torch's error for its random kernels on an integer or bool tensor."""
    dt = tensor.dtype
    if not (dt.is_floating_point or dt.is_complex):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{D.legacy_name(dt)}\'')


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    _need_float(tensor, "check_uniform_bounds")
    k = _random.next_key_data(generator)
    return _write(tensor, _random.draw_now(jax.random.uniform, k, tensor._d.shape,
                                           jnp.float64, a, b))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    _need_float(tensor, "normal_kernel_cpu")
    k = _random.next_key_data(generator)
    z = _random.draw_now(jax.random.normal, k, tensor._d.shape, jnp.float64)
    if _tiers.on_host() and not isinstance(z, jax.core.Tracer):
        z = np.asarray(z)               # the same float64 arithmetic, without a program
    return _write(tensor, mean + std * z)


def constant_(tensor, val):
    return _write(tensor, jnp.full(tensor._d.shape, val))


def zeros_(tensor):
    return constant_(tensor, 0)


def ones_(tensor):
    return constant_(tensor, 1)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op",
                      stacklevel=3)   # (the caller of _skips_meta's wrapper)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op",
                      stacklevel=3)   # (the caller of _skips_meta's wrapper)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    return normal_(tensor, 0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _fans(tensor)
    a = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


_calculate_fan_in_and_fan_out = _fans


def eye_(tensor):
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _write(tensor, jnp.eye(*tensor._d.shape))


def dirac_(tensor, groups=1):
    d = tensor.ndim
    if d not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor._d.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per = sizes[0] // groups
    m = min(out_per, sizes[1])
    a = jnp.zeros(sizes)
    for g in range(groups):
        for i in range(m):
            idx = (g * out_per + i, i) + tuple(s // 2 for s in sizes[2:])
            a = a.at[idx].set(1)
    return _write(tensor, a)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """A normal(mean, |std|) draw truncated to [a, b]."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.")   # (torch's: its own line)
    std = abs(std)
    lo, hi = (a - mean) / std, (b - mean) / std
    if a > b:
        tensor.uniform_(a, b)       # (torch draws from [a, b) here: its range error)
    _need_float(tensor, "normal_kernel_cpu")
    k = _random.next_key(generator)
    z = jax.random.truncated_normal(k, lo, hi, tensor._d.shape, jnp.float64)
    return _write(tensor, jnp.clip(mean + std * z, a, b))


def orthogonal_(tensor, gain=1, generator=None):
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    _need_float(tensor, "normal_kernel_cpu")
    rows = tensor._d.shape[0]
    cols = tensor.numel() // rows
    k = _random.next_key(generator)
    flat = jax.random.normal(k, (rows, cols), jnp.float64)
    if rows < cols:
        flat = flat.T
    q, r = jnp.linalg.qr(flat)
    q = q * jnp.sign(jnp.diagonal(r))
    if rows < cols:
        q = q.T
    return _write(tensor, gain * q.reshape(tensor._d.shape))


def _deprecated_alias(meth):
    """torch's pre-0.4 names without the trailing underscore: the same init, with its warning."""
    new, old = meth.__name__, meth.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        import warnings
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new}`.",
                      FutureWarning, stacklevel=2)
        return meth(*args, **kwargs)

    deprecated_init.__name__ = deprecated_init.__qualname__ = old
    return deprecated_init


# what torch's initializer first uses of an uninitialized (lazy) parameter, where that is not
# the initializer itself (which checks for torch-function overrides): a Tensor method, or shape
_LAZY_FIRST_USE = {"zeros_": "zero_", "ones_": "fill_", "kaiming_normal_": "shape",
                   "xavier_uniform_": "dim", "xavier_normal_": "dim", "eye_": "dim",
                   "dirac_": "dim", "orthogonal_": "dim", "sparse_": "dim",
                   "trunc_normal_": "new_tensor"}


def _skips_meta(fn):
    """An initializer that leaves a ``meta`` tensor as it is (it has no data) and refuses an
    uninitialized one, as torch's."""
    @functools.wraps(fn)
    def init(tensor, *args, **kwargs):
        if is_lazy(tensor):
            raise uninitialized_use_error(tensor, _LAZY_FIRST_USE.get(fn.__name__, init))
        if tensor.device.type == "meta":
            return tensor
        return fn(tensor, *args, **kwargs)
    return init


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fill the 2-D ``tensor`` from N(0, std) with ``ceil(sparsity * rows)`` zeros per column
    (random rows), as torch's."""
    import torchlike
    if tensor.ndimension() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with torchlike.no_grad():
        tensor.normal_(0, std, generator=generator)
        for col_idx in range(cols):
            zero_indices = torchlike.randperm(rows, generator=generator)[:num_zeros]
            tensor[zero_indices, col_idx] = 0
    return tensor


def sparse(tensor, sparsity, std=0.01):
    """Deprecated name of ``sparse_``."""
    warnings.warn("`nn.init.sparse` is now deprecated in favor of `nn.init.sparse_`.",
                  FutureWarning, stacklevel=2)
    return sparse_(tensor, sparsity, std)


for _name in [n for n in __all__ if n.endswith("_")]:
    globals()[_name] = _skips_meta(globals()[_name])


def _no_grad_uniform_(tensor, a, b, generator=None):
    return uniform_(tensor, a, b, generator)


def _no_grad_normal_(tensor, mean, std, generator=None):
    return normal_(tensor, mean, std, generator)


def _no_grad_trunc_normal_(tensor, mean, std, a, b, generator=None):
    return trunc_normal_(tensor, mean, std, a, b, generator)


def _no_grad_fill_(tensor, val):
    return constant_(tensor, val)


def _no_grad_zero_(tensor):
    return zeros_(tensor)


uniform = _deprecated_alias(uniform_)
normal = _deprecated_alias(normal_)
constant = _deprecated_alias(constant_)
eye = _deprecated_alias(eye_)
dirac = _deprecated_alias(dirac_)
xavier_uniform = _deprecated_alias(xavier_uniform_)
xavier_normal = _deprecated_alias(xavier_normal_)
kaiming_uniform = _deprecated_alias(kaiming_uniform_)
kaiming_normal = _deprecated_alias(kaiming_normal_)
orthogonal = _deprecated_alias(orthogonal_)
from .._tensor import Tensor  # noqa: E402,F401  (torch.nn.init.Tensor, as torch re-exports it)
