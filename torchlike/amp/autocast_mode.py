"""torch.autocast on torchlike's op registry.

While an autocast region is active, the registry's ``apply`` hands each op's arguments to
``_cast_args`` (through ``grad_mode._state.autocast``), which casts them by torch's op policy
for the region's device type:

* ``lower``: floating tensors (not float64) run in the region's dtype (matmuls, convolutions,
  linear, ...);
* ``fp32``: floating tensors (not float64) run in float32 (losses, norms, exp/log, ...);
* ``fp32_opt``: float32 unless the op was given a ``dtype`` (sum, prod, softmax, cumsum, ...);
* ``promote``: all floating tensors run in the widest floating type among them (cat, stack,
  addcmul, ...);
* ops not listed run in their inputs' types.

The casts are recorded ops (``ToCopyBackward0``), so gradients reach the float32 parameters.
The tables are torch's (``aten/src/ATen/autocast_mode.cpp``) keyed by torchlike op names.
"""
from __future__ import annotations

import functools
import threading
import warnings

from .. import _device, _fused
from .. import _dtype as D
from ..autograd import grad_mode as _gm

__all__ = ["autocast", "is_autocast_available", "custom_fwd", "custom_bwd",
           "is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype",
           "set_autocast_dtype"]

_DEVICE_TYPES = ("cpu", "cuda")        # the devices torchlike's tensors are on: cast there
# every device type torch's autocast takes, with its default dtype: a region for a device no
# tensor is on is state only (``torch.autocast("mps")`` on a CPU build casts nothing either)
_DEFAULT_DTYPES = {"cpu": D.bfloat16, "cuda": D.float16, "mps": D.float16, "xpu": D.float16,
                   "hpu": D.bfloat16, "xla": D.bfloat16, "ipu": D.float16, "mtia": D.float16,
                   "maia": D.bfloat16, "privateuseone": D.float16}


# (op name) -> rule, or (op name) -> (rule, predicate(static) -> bool)
def _nd3(kw):
    return kw.get("nd") == 3


def _nd23(kw):
    return kw.get("nd") in (2, 3)


_CPU_POLICY = {
    # lower precision
    "convolution": "lower", "conv_transpose": "lower", "linear": "lower",
    # (torch.mv and torch.dot are not on torch's CPU list: they keep float32 where their
    # call marks the matmul op as theirs)
    "matmul": ("lower", lambda kw: kw.get("vector_op") is None),
    "nn_prelu": "lower", "scaled_dot_product_attention": "lower",
    "multi_head_attention": "lower",
    "addmm": ("lower", lambda kw: kw.get("kind") in ("mm", "bmm", "addbmm")),
    # LSTM runs mkldnn_rnn_layer, RNN decomposes into matmuls; GRU's CPU kernel runs in its
    # input's dtype (a lower-precision input takes the weights along); an LSTM with projections
    # decomposes into linears and elementwise ops, which nn's LSTM casts itself (its cell
    # state keeps its dtype)
    "rnn": lambda kw: (None if kw.get("has_proj") else
                       "input_lower" if kw.get("mode") == "GRU" else "lower"),
    "einsum": "lower", "tensordot": "lower",      # composites of bmm/mm in torch
    # float32
    "binary_cross_entropy": "fp32", "binary_cross_entropy_with_logits": "fp32",
    "avg_pool": ("fp32", _nd3), "max_pool": ("fp32", _nd3), "max_pool_indices": ("fp32", _nd3),
    "adaptive_avg_pool": ("fp32", _nd3), "adaptive_max_pool": ("fp32", _nd3),
    "adaptive_max_pool_indices": ("fp32", _nd3),
    # (torch's max_unpool1d runs max_unpool2d: every rank is float32)
    "max_unpool": "fp32", "grid_sampler": "fp32", "fractional_max_pool": "fp32",
    "polar": "fp32", "view_as_complex": "fp32", "stft": "fp32",
    "linalg_inv": "fp32", "linalg_cholesky": "fp32", "linalg_solve": "fp32",
    "linalg_svd": "fp32", "linalg_svdvals": "fp32", "linalg_eig": "fp32",
    "linalg_eigvals": "fp32", "linalg_eigh": "fp32", "linalg_eigvalsh": "fp32",
    "linalg_qr": "fp32", "linalg_lstsq": "fp32", "geqrf": "fp32", "ormqr": "fp32",
    "householder_product": "fp32", "cholesky_inverse": "fp32",
    # (torch's matrix_power and vecdot are matmul and linalg_vecdot there: lower precision)
    "linalg_matrix_power": ("lower", lambda kw: kw.get("n", 2) not in (-1, 0, 1)),
    "linalg_vecdot": "lower",
    "pad": ("fp32", lambda kw: kw.get("mode") in ("reflect", "replicate")),
    "prod": "fp32", "quantile": "fp32", "cdist": "fp32", "trace": "fp32",
    "cholesky_solve": "fp32", "loss_mse": "fp32",
    "cosine_embedding_loss": "fp32", "nll_loss": "fp32", "hinge_embedding_loss": "fp32",
    "poisson_nll_loss": "fp32", "loss_smooth_l1": "fp32", "cross_entropy": "fp32",
    "loss_l1": "fp32", "l1_loss": "fp32", "loss_huber": "fp32", "margin_ranking_loss": "fp32",
    "loss_soft_margin": "fp32", "triplet_margin_loss": "fp32", "multi_margin_loss": "fp32",
    "ctc_loss": "fp32", "kl_div": "fp32", "multilabel_margin_loss": "fp32",
    "lu_factor": "fp32", "lu_unpack": "fp32", "lstsq_sv": "fp32", "solve_triangular": "fp32",
    # promote
    "cat": "promote", "stack": "promote",
    "index_add": ("promote", lambda kw: kw.get("mode") == "copy"),
}

_CUDA_POLICY = {
    # lower precision
    "convolution": "lower", "conv_transpose": "lower", "nn_prelu": "lower", "addmm": "lower",
    "matmul": ("lower", lambda kw: kw.get("ndims") != (1, 1)), "einsum": "lower",
    "linear": "lower", "rnn_cell": "lower", "rnn": "lower",
    "scaled_dot_product_attention": "lower", "multi_head_attention": "lower",
    # float32
    "acos": "fp32", "asin": "fp32", "cosh": "fp32", "erfinv": "fp32", "exp": "fp32",
    "expm1": "fp32", "log": "fp32", "log10": "fp32", "log2": "fp32", "log1p": "fp32",
    "reciprocal": "fp32", "rsqrt": "fp32", "sinh": "fp32", "tan": "fp32", "pow": "fp32",
    "nn_softplus": "fp32", "layer_norm": "fp32", "rms_norm": "fp32", "group_norm": "fp32",
    "linalg_matrix_norm": "fp32", "cosine_similarity": "fp32",
    "poisson_nll_loss": "fp32", "cosine_embedding_loss": "fp32", "nll_loss": "fp32",
    "hinge_embedding_loss": "fp32", "kl_div": "fp32", "loss_l1": "fp32", "l1_loss": "fp32",
    "loss_smooth_l1": "fp32", "loss_huber": "fp32", "loss_mse": "fp32",
    "margin_ranking_loss": "fp32", "multilabel_margin_loss": "fp32",
    "loss_soft_margin": "fp32", "triplet_margin_loss": "fp32", "multi_margin_loss": "fp32",
    "binary_cross_entropy_with_logits": "fp32", "pdist": "fp32", "cdist": "fp32",
    "logsumexp": "fp32", "cross_entropy": "fp32",
    "prod": "fp32_opt", "nn_softmax": "fp32_opt", "nn_log_softmax": "fp32_opt",
    # (torch.norm is linalg_vector_norm's op: torch lists it as fp32, which is what fp32_opt
    # does without a dtype, and torch.norm passes its dtype to the result)
    "cumsum": "fp32_opt", "sum": "fp32_opt", "linalg_vector_norm": "fp32_opt",
    # promote
    "addcmul": "promote", "atan2": "promote", "bilinear": "promote", "cross": "promote",
    "vdot": "promote", "index_put": "promote", "tensordot": "promote",
    "scatter": ("promote", lambda kw: kw.get("mode") == "add"),
    # banned
    "binary_cross_entropy": "banned",
}

_POLICIES = {"cpu": _CPU_POLICY, "cuda": _CUDA_POLICY}

_BANNED = ("torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to "
           "autocast.\nMany models use a sigmoid layer right before the binary cross entropy "
           "layer.\nIn this case, combine the two layers using "
           "torch.nn.functional.binary_cross_entropy_with_logits\nor torch.nn.BCEWithLogitsLoss."
           "  binary_cross_entropy_with_logits and BCEWithLogits are\nsafe to autocast.")


# ops whose static ``dtype`` is their input's dtype (their result is cast to it)
_RESULT_DTYPE_OPS = frozenset({"trace"})


def _rule(policy, name, static):
    r = policy.get(name)
    if r is None:
        return None
    if isinstance(r, tuple):
        rule, pred = r
        return rule if pred(static) else None
    return r(static) if callable(r) else r      # (a rule chosen by the static kwargs)


# ------------------------------------------------------------------ thread-local state

class _State(threading.local):
    def __init__(self):
        self.enabled = dict.fromkeys(_DEFAULT_DTYPES, False)
        self.dtype = dict(_DEFAULT_DTYPES)
        self.depth = 0


_state = _State()


def _type_of(device_type, unknown=None):
    """The autocast device type of ``device_type`` ('cuda:0' is 'cuda'; torch's parse error for
    'foo'); one autocast does not know raises ``unknown`` (None: the type is returned)."""
    t = _device.device(device_type).type
    if unknown is not None and t not in _DEFAULT_DTYPES:
        raise RuntimeError(unknown)
    return t


_UNKNOWN = "unknown device type for autocast in get_autocast_dispatch_key_from_device_type"


def is_autocast_available(device_type):
    return device_type in _DEFAULT_DTYPES


def is_autocast_enabled(device_type=None):
    if device_type is None:
        return _state.enabled["cuda"]
    return _state.enabled[_type_of(device_type, _UNKNOWN)]


def set_autocast_enabled(device_type, enabled=None):
    if enabled is None:          # the deprecated one-argument form: cuda
        device_type, enabled = "cuda", device_type
    _state.enabled[_type_of(device_type, _UNKNOWN)] = bool(enabled)
    _install()


def get_autocast_dtype(device_type):
    if _type_of(device_type) == "hip":
        return _state.dtype["cuda"]     # (a ROCm GPU's: torch's answer on every build)
    return _state.dtype[_type_of(device_type, "unsupported scalarType")]


def set_autocast_dtype(device_type, dtype):
    t = _type_of(device_type)
    if t in _DEFAULT_DTYPES:        # (torch ignores a type autocast does not know)
        _state.dtype[t] = dtype


def _install():
    _gm._state.autocast = _cast_args if any(_state.enabled[d] for d in _DEVICE_TYPES) \
        else None


# ------------------------------------------------------------------ the cast

def _tensor_type(arr):
    if not _device.cuda_devices():
        return "cpu"
    return _device.of_array(arr).type


def _eligible(a, T):
    if not isinstance(a, T):
        return False
    dt = a._d.dtype
    return dt.kind == "f" or dt.name == "bfloat16"


def _cast_args(op, args, static):
    """The registry's autocast hook: ``args`` cast by torch's policy for ``op``."""
    from .._registry import _Tensor as T
    name = op.name
    if name == "to_copy":
        return args
    for dev_type in _DEVICE_TYPES:
        if not _state.enabled[dev_type]:
            continue
        policy = _POLICIES[dev_type]
        if dev_type == "cuda" and name == "matmul" and static.get("ndims") == (1, 1):
            rule = "promote"
        else:
            rule = _rule(policy, name, static)
        if rule is None:
            continue
        cand = [i for i, a in enumerate(args) if _eligible(a, T)
                and _tensor_type(_fused.raw(a)) == dev_type]
        if not cand:
            continue
        if rule == "banned":
            raise RuntimeError(_BANNED)
        if rule == "input_lower":
            # (the first argument's dtype, where it is the autocast dtype: the others follow)
            if not cand or cand[0] != 0 or args[0].dtype is not _state.dtype[dev_type]:
                continue
            rule = "lower"
        if rule == "lower":
            target = _state.dtype[dev_type]
        elif rule == "fp32":
            target = D.float32
        elif rule == "fp32_opt":
            if static.get("dtype") is not None or cand[0] != 0:
                continue
            target = D.float32
            cand = [0]
        else:   # promote
            target = _state.dtype[dev_type]
            for i in cand:
                target = D.promote_types(target, args[i].dtype)
        if name in _RESULT_DTYPE_OPS and static.get("dtype") == args[cand[0]]._d.dtype:
            # the op casts its result to a static dtype taken from its input: follow the cast
            # (apply reads ``static`` after this hook)
            static["dtype"] = target.np
        args = list(args)
        for i in cand:
            a = args[i]
            if a.dtype is not target and a.dtype is not D.float64:
                args[i] = a.to(target)
        return tuple(args)
    return args


# Functions nn composes from several ops (torch autocasts them as one op): their policy
# entries are applied by ``cast_composite``, which such a function calls on its inputs.
COMPOSITE_NAMES = frozenset({"linear", "cross_entropy", "loss_l1", "l1_loss", "grid_sampler",
                             "linalg_vecdot"})


def lower_dtype(t):
    """The autocast dtype of tensor ``t``'s device where autocast is on there, else None."""
    dev = _tensor_type(_fused.raw(t))
    return _state.dtype[dev] if _state.enabled.get(dev) else None


class _Named:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name


def cast_composite(name, *tensors, **static):
    """``tensors`` cast by the autocast policy of op ``name`` at ``static`` (as ``apply`` casts
    an op's arguments; None entries stay None): for a function that checks its inputs' dtypes
    before its op runs, as torch's autocast casts them before the kernel's checks. The tensors
    unchanged when autocast is off."""
    if _gm._state.autocast is None:
        return tensors
    present = [t for t in tensors if t is not None]
    cast = iter(_cast_args(_Named(name), tuple(present), static))
    return tuple(None if t is None else next(cast) for t in tensors)


# ------------------------------------------------------------------ the context manager

class autocast:
    """``torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)``: a context
    manager and decorator running listed ops in lower precision (see the module docstring).

    >>> with torchlike.autocast("cpu"):
    ...     (torchlike.ones(2, 2) @ torchlike.ones(2, 2)).dtype
    torch.bfloat16
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: "
                             f"`{type(device_type)}`")
        # (torch reads the type's dtype first: its errors for 'foo' and 'meta')
        fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        if not is_autocast_available(device_type):
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}'")
        if device_type == "privateuseone":
            raise AssertionError(
                "Tried to use AMP with the `privateuseone` backend, but the backend has not "
                "registered a module or  the module miss some necessary funcs. The backend "
                "should register a module by `torch._register_device_module`, and the module "
                "must have these funcs: \n`get_amp_supported_dtype() -> List[torch.dtype]`. \n")
        self.device = device_type
        self.fast_dtype = fast_dtype
        self._cache_enabled = True if cache_enabled is None else cache_enabled
        if enabled:
            if device_type == "cuda":
                if not _device.cuda_devices():
                    warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                                  "autocast.", stacklevel=2)
                    enabled = False
            elif self.fast_dtype not in (D.bfloat16, D.float16):
                name = device_type.upper()
                warnings.warn(
                    f"In {name} autocast, but the target dtype is not supported. Disabling "
                    f"autocast.\n{name} Autocast only supports dtypes of torch.bfloat16, "
                    f"torch.float16 currently.", stacklevel=2)
                enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev = _state.enabled[self.device]
        self.prev_fastdtype = _state.dtype[self.device]
        _state.enabled[self.device] = self._enabled
        _state.dtype[self.device] = self.fast_dtype
        _state.depth += 1
        _install()
        return self

    def __exit__(self, *exc):
        _state.enabled[self.device] = self.prev
        _state.dtype[self.device] = self.prev_fastdtype
        _state.depth -= 1
        _install()
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with autocast(self.device, dtype=self.fast_dtype, enabled=self._enabled,
                          cache_enabled=self._cache_enabled):
                return func(*args, **kwargs)
        return wrapper


# ------------------------------------------------------------------ custom autograd.Function

def _cast_inputs(value, dtype):
    from .._registry import _Tensor as Tensor
    if isinstance(value, Tensor):
        return value.to(dtype) if value.is_floating_point() and value.dtype is not D.float64 \
            else value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_inputs(v, dtype) for v in value)
    if isinstance(value, dict):
        return {k: _cast_inputs(v, dtype) for k, v in value.items()}
    return value


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorate a custom Function's ``forward``: with ``cast_inputs``, floating inputs are cast
    to it and the forward runs with autocast off (when autocast is on at the call)."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast_inputs(args, cast_inputs),
                           **_cast_inputs(kwargs, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorate a custom Function's ``backward``: it runs with the forward's autocast state."""
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=getattr(ctx, "_fwd_used_autocast", False),
                      dtype=getattr(ctx, "_dtype", None)):
            return bwd(*args, **kwargs)
    return decorate_bwd
