"""The optimizers. Each ``_update`` is a pure function of a whole parameter group (see
``optimizer.py``), written to follow torch's single-tensor CPU implementation op for op, with
Python-float hyperparameter arithmetic done in float64 and cast to the parameter dtype where
torch would cast a Python scalar."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from .. import _fused, _tiers
from .._tensor import Tensor
from .optimizer import (Optimizer, add_alpha, cast, lerp, low_op, scale, _LOW, _zero_scalar,
                        _layout_of)

__all__ = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "Rprop", "ASGD", "Adafactor", "Muon"]

F64 = jnp.float64


def _check(cond, msg):
    if not cond:
        raise ValueError(msg)


def _zeros_like(p):
    return _layout_of(Tensor._make(_tiers.zeros_like(p._d)), p)



def _init_zero_state(self, p, group):
    """First-use state of optimizers whose state is a step counter (torch's float32 0-dim
    tensor) plus buffers of zeros shaped like ``p``."""
    st = self.state[p]
    if len(st) == 0:
        for k in self._state_keys_for(group):
            st[k] = _zero_scalar() if k == "step" else _zeros_like(p)


def _check_lr_eps_wd(lr, eps=0.0, weight_decay=0.0):
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    _check(0.0 <= lr, f"Invalid learning rate: {lr}")
    _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
    _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")


def _check_betas(betas):
    _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
    _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")


def _step(step):
    step = step + 1
    return step, step.astype(F64)


def _foreach_flag(group):
    """The static flag ``foreach=True`` of an update whose multi-tensor step torch takes (none
    otherwise: the single-tensor step's configurations keep their flags)."""
    return (("foreach", True),) if _foreach_step(group) else ()


def _foreach_step(group):
    """Whether torch steps ``group`` with its multi-tensor (``_foreach_*``) implementation:
    ``foreach=True`` without ``differentiable`` or ``fused`` (``None`` on the CPU: the
    single-tensor one). Its ops round some things differently in bfloat16/float16 (``scale``)."""
    return bool(group.get("foreach")) and not group.get("differentiable") \
        and not group.get("fused")


def _decay(p, g, hp, wd, decoupled=False, foreach=False):
    """Weight decay as torch applies it: ``grad + wd * param``, or decoupled
    ``param * (1 - lr * wd)`` (``foreach``: with the foreach step's ``_foreach_mul_``)."""
    if not wd:
        return p, g
    if decoupled:
        return scale(p, 1 - hp["lr"] * hp["weight_decay"], foreach), g
    return p, add_alpha(g, p, hp["weight_decay"])


_CAPTURABLE_DEVICES = ["cuda", "xpu", "hpu", "privateuseone", "xla"]
_CAPTURABLE_DEVICES_NO_XLA = ["cuda", "xpu", "hpu", "privateuseone"]


class _Capturable:
    """``capturable=True`` (CUDA-graph capture) as torch checks it at step time: the params
    and their state must live on a capturable device, which a CPU tensor never does. torch
    raises an AssertionError after initialising the state; so do we. The check is the
    implementation's: torch's single-tensor and ``foreach=True`` (multi-tensor) steps name their
    own device lists (most multi-tensor steps pass ``supports_xla=False``) and wordings, and its
    fused Adam/AdamW step checks nothing (it runs on the CPU)."""

    _capturable_what = "params and state_steps"
    _capturable_devices = _CAPTURABLE_DEVICES
    _capturable_what_foreach = None                 # None: as the single-tensor step's
    _capturable_devices_foreach = _CAPTURABLE_DEVICES_NO_XLA

    def _step_group(self, group):
        if group.get("capturable") and not group.get("fused"):
            params = [p for p in group["params"] if p.grad is not None]
            for p in params:
                self._init_state(p, group)
            if group.get("foreach") and not group.get("differentiable"):
                what = self._capturable_what_foreach or self._capturable_what
                devices = self._capturable_devices_foreach
            else:
                what, devices = self._capturable_what, self._capturable_devices
            if any(p.device.type not in devices for p in params):
                raise AssertionError(f"If capturable=True, {what} must be on "
                                     f"supported devices: {devices}.")
        super()._step_group(group)


class _BetasMixin:
    def _hp(self, group):
        hp = super()._hp(group)
        hp["beta1"], hp["beta2"] = (np.float64(b) for b in group["betas"])
        return hp


# ---------------------------------------------------------------------------- SGD
class SGD(Optimizer):
    """Stochastic gradient descent, optionally with (Nesterov) momentum."""

    _hp_keys = ("lr", "momentum", "dampening", "weight_decay")

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(lr >= 0.0, f"Invalid learning rate: {lr}")
        _check(momentum >= 0.0, f"Invalid momentum value: {momentum}")
        _check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def _sparse_grad_refusal(self, group):
        if group["fused"]:
            return "`_fused_sgd` does not support sparse gradients"
        if group["weight_decay"] != 0:
            return "add(sparse, dense) is not supported. Use add(dense, sparse) instead."
        return None

    def _flags(self, group):
        return (("use_momentum", group["momentum"] != 0), ("wd", group["weight_decay"] != 0),
                ("nesterov", bool(group["nesterov"])),
                ("maximize", bool(group["maximize"]))) + _foreach_flag(group)

    def _state_keys_for(self, group):
        return ("momentum_buffer",) if group["momentum"] != 0 else ()

    @staticmethod
    def _update(params, grads, state, hp, *, use_momentum, wd, nesterov, maximize,
                foreach=False):
        new_p, new_buf = [], []
        bufs = state.get("momentum_buffer", [None] * len(params))
        for p, g, buf in zip(params, grads, bufs):
            g = -g if maximize else g
            p, g = _decay(p, g, hp, wd)
            if use_momentum:
                if buf is None:
                    buf = g
                else:
                    buf = add_alpha(scale(buf, hp["momentum"], foreach), g,
                                    1 - hp["dampening"])
                g = add_alpha(g, buf, hp["momentum"]) if nesterov else buf
            new_p.append(add_alpha(p, g, -hp["lr"]))
            new_buf.append(buf)
        return new_p, ({"momentum_buffer": new_buf} if use_momentum else {})


# ---------------------------------------------------------------------------- Adam / AdamW
class Adam(_Capturable, _BetasMixin, Optimizer):
    """Adam (``decoupled_weight_decay=True`` gives AdamW), with amsgrad and maximize."""

    _hp_keys = ("lr", "eps", "weight_decay")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and "
                             "foreach=True")
        _check_lr_eps_wd(lr, eps, weight_decay)
        _check_betas(betas)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _sparse_grad_refusal(self, group):
        return "Adam does not support sparse gradients, please consider SparseAdam instead"

    def _flags(self, group):
        return (("amsgrad", bool(group["amsgrad"])), ("maximize", bool(group["maximize"])),
                ("wd", group["weight_decay"] != 0),
                ("decoupled", bool(group.get("decoupled_weight_decay", False)))
                ) + _foreach_flag(group)

    def _state_keys_for(self, group):
        keys = ("step", "exp_avg", "exp_avg_sq")
        return keys + ("max_exp_avg_sq",) if group["amsgrad"] else keys

    def _init_state(self, p, group):
        st = self.state[p]
        if len(st) == 0:
            st["step"] = _zero_scalar()
            st["exp_avg"] = _zeros_like(p)
            st["exp_avg_sq"] = _zeros_like(p)
            if group["amsgrad"]:
                st["max_exp_avg_sq"] = _zeros_like(p)

    @staticmethod
    def _update(params, grads, state, hp, *, amsgrad, maximize, wd, decoupled,
                foreach=False):
        b1, b2 = hp["beta1"], hp["beta2"]
        out = {"step": [], "exp_avg": [], "exp_avg_sq": []}
        if amsgrad:
            out["max_exp_avg_sq"] = []
        new_p = []
        for i, (p, g) in enumerate(zip(params, grads)):
            g = -g if maximize else g
            step, s = _step(state["step"][i])
            p, g = _decay(p, g, hp, wd, decoupled, foreach)
            m = lerp(state["exp_avg"][i], g, 1 - b1)
            bc1 = 1 - b1 ** s
            bc2 = 1 - b2 ** s
            step_size = hp["lr"] / bc1
            bc2_sqrt = jnp.sqrt(bc2)
            if p.dtype in _LOW and not foreach:
                # torch's single-tensor step op by op, each bfloat16/float16 op rounded once
                v = low_op(lambda a, c, x: a + c * x * x, scale(state["exp_avg_sq"][i], b2),
                           1 - b2, g)
                if amsgrad:
                    v_used = jnp.maximum(state["max_exp_avg_sq"][i], v)
                    out["max_exp_avg_sq"].append(v_used)
                else:
                    v_used = v
                root = low_op(jnp.sqrt, v_used)
                denom = low_op(lambda a, e: a + e, low_op(lambda a, c: a / c, root, bc2_sqrt),
                               hp["eps"])
                new_p.append(low_op(lambda a, c, x, y: a + c * x / y, p, -step_size, m, denom))
                out["step"].append(step)
                out["exp_avg"].append(m)
                out["exp_avg_sq"].append(v)
                continue
            v = state["exp_avg_sq"][i] * cast(b2, p) + cast(1 - b2, p) * g * g
            if amsgrad:
                vmax = jnp.maximum(state["max_exp_avg_sq"][i], v)
                out["max_exp_avg_sq"].append(vmax)
                denom = jnp.sqrt(vmax) / cast(bc2_sqrt, p) + cast(hp["eps"], p)
            else:
                denom = jnp.sqrt(v) / cast(bc2_sqrt, p) + cast(hp["eps"], p)
            new_p.append(p + cast(-step_size, p) * m / denom)
            out["step"].append(step)
            out["exp_avg"].append(m)
            out["exp_avg_sq"].append(v)
        return new_p, out


class AdamW(Adam):
    """Adam with decoupled weight decay (default 1e-2)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for g in self.param_groups:
            g["decoupled_weight_decay"] = True


# ---------------------------------------------------------------------------- RMSprop
class RMSprop(_Capturable, Optimizer):
    """RMSprop, optionally centered and with momentum."""

    _capturable_devices_foreach = _CAPTURABLE_DEVICES     # (torch: supports_xla)

    _hp_keys = ("lr", "alpha", "eps", "weight_decay", "momentum")

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        _check_lr_eps_wd(lr, eps, 0.0)
        _check(0.0 <= momentum, f"Invalid momentum value: {momentum}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= alpha, f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _flags(self, group):
        return (("centered", bool(group["centered"])), ("use_momentum", group["momentum"] > 0),
                ("wd", group["weight_decay"] != 0), ("maximize", bool(group["maximize"]))
                ) + _foreach_flag(group)

    def _state_keys_for(self, group):
        keys = ("step", "square_avg")
        if group["momentum"] > 0:
            keys += ("momentum_buffer",)
        if group["centered"]:
            keys += ("grad_avg",)
        return keys

    def _init_state(self, p, group):
        st = self.state[p]
        if len(st) == 0:
            st["step"] = _zero_scalar()
            st["square_avg"] = _zeros_like(p)
            if group["momentum"] > 0:
                st["momentum_buffer"] = _zeros_like(p)
            if group["centered"]:
                st["grad_avg"] = _zeros_like(p)

    @staticmethod
    def _update(params, grads, state, hp, *, centered, use_momentum, wd, maximize,
                foreach=False):
        out = {k: [] for k in state}
        new_p = []
        a = hp["alpha"]
        for i, (p, g) in enumerate(zip(params, grads)):
            g = -g if maximize else g
            step, _ = _step(state["step"][i])
            p, g = _decay(p, g, hp, wd)
            if p.dtype in _LOW and not foreach:
                # torch's single-tensor step op by op, each bfloat16/float16 op rounded once
                sq = low_op(lambda x, c, y: x + c * y * y, scale(state["square_avg"][i], a),
                            1 - a, g)
                if centered:
                    ga = lerp(state["grad_avg"][i], g, 1 - a)
                    out["grad_avg"].append(ga)
                    avg = low_op(jnp.sqrt, low_op(lambda x, c, y: x + c * y * y, sq, -1.0, ga))
                else:
                    avg = low_op(jnp.sqrt, sq)
                avg = low_op(lambda x, e: x + e, avg, hp["eps"])
                if use_momentum:
                    buf = low_op(lambda b, x, y: b + x / y,
                                 scale(state["momentum_buffer"][i], hp["momentum"]), g, avg)
                    out["momentum_buffer"].append(buf)
                    p = add_alpha(p, buf, -hp["lr"])
                else:
                    p = low_op(lambda x, c, y, z: x + c * y / z, p, -hp["lr"], g, avg)
                new_p.append(p)
                out["step"].append(step)
                out["square_avg"].append(sq)
                continue
            sq = state["square_avg"][i] * cast(a, p) + cast(1 - a, p) * g * g
            if centered:
                ga = lerp(state["grad_avg"][i], g, 1 - a)
                out["grad_avg"].append(ga)
                avg = jnp.sqrt(sq + cast(-1.0, p) * ga * ga)
            else:
                avg = jnp.sqrt(sq)
            avg = avg + cast(hp["eps"], p)
            if use_momentum:
                buf = state["momentum_buffer"][i] * cast(hp["momentum"], p) + g / avg
                out["momentum_buffer"].append(buf)
                p = p + cast(-hp["lr"], p) * buf
            else:
                p = p + cast(-hp["lr"], p) * g / avg
            new_p.append(p)
            out["step"].append(step)
            out["square_avg"].append(sq)
        return new_p, out


# ---------------------------------------------------------------------------- Adagrad
class Adagrad(Optimizer):
    """Adagrad with lr_decay and an initial accumulator value."""

    _hp_keys = ("lr", "lr_decay", "eps", "weight_decay")
    _state_keys = ("step", "sum")

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False,
                 differentiable=False, fused=None):
        _check_lr_eps_wd(lr)
        _check(0.0 <= lr_decay, f"Invalid lr_decay value: {lr_decay}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= initial_accumulator_value,
               f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        # torch creates the state eagerly, in the constructor
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _init_state(self, p, group):
        st = self.state[p]
        if len(st) == 0:
            st["step"] = _zero_scalar()
            d = _fused.raw(p)       # (its shape and dtype: a pending value stays pending)
            st["sum"] = _layout_of(Tensor._make(jnp.full(
                d.shape, self.defaults["initial_accumulator_value"], d.dtype)), p)

    def share_memory(self):
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    def _sparse_grad_refusal(self, group):
        if group["fused"]:
            return "`fused` does not support sparse grad or complex param"
        if group["weight_decay"] != 0:
            return "weight_decay option is not compatible with sparse gradients"
        return None

    def _flags(self, group):
        return (("wd", group["weight_decay"] != 0),
                ("maximize", bool(group["maximize"]))) + _foreach_flag(group)

    @staticmethod
    def _update(params, grads, state, hp, *, wd, maximize, foreach=False):
        out = {"step": [], "sum": []}
        new_p = []
        for i, (p, g) in enumerate(zip(params, grads)):
            step, s = _step(state["step"][i])
            g = -g if maximize else g
            p, g = _decay(p, g, hp, wd)
            clr = hp["lr"] / (1 + (s - 1) * hp["lr_decay"])
            if p.dtype in _LOW and not foreach:
                # torch's single-tensor step op by op, each bfloat16/float16 op rounded once
                sm = low_op(lambda x, c, y: x + c * y * y, state["sum"][i], 1.0, g)
                std = low_op(lambda x, e: x + e, low_op(jnp.sqrt, sm), hp["eps"])
                new_p.append(low_op(lambda x, c, y, z: x + c * y / z, p, -clr, g, std))
                out["step"].append(step)
                out["sum"].append(sm)
                continue
            sm = state["sum"][i] + cast(1.0, p) * g * g
            std = jnp.sqrt(sm) + cast(hp["eps"], p)
            new_p.append(p + cast(-clr, p) * g / std)
            out["step"].append(step)
            out["sum"].append(sm)
        return new_p, out


# ---------------------------------------------------------------------------- Adadelta
class Adadelta(_Capturable, Optimizer):
    """Adadelta."""

    _capturable_devices = ["cuda", "xpu", "hpu", "privateuseone"]

    _init_state = _init_zero_state

    _hp_keys = ("lr", "rho", "eps", "weight_decay")
    _state_keys = ("step", "square_avg", "acc_delta")

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        _check_lr_eps_wd(lr)
        _check(0.0 <= rho <= 1.0, f"Invalid rho value: {rho}")
        _check(0.0 <= eps, f"Invalid epsilon value: {eps}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _flags(self, group):
        return (("wd", group["weight_decay"] != 0), ("maximize", bool(group["maximize"])))

    @staticmethod
    def _update(params, grads, state, hp, *, wd, maximize):
        out = {k: [] for k in state}
        new_p = []
        rho, eps = hp["rho"], hp["eps"]
        for i, (p, g) in enumerate(zip(params, grads)):
            step, _ = _step(state["step"][i])
            g = -g if maximize else g
            p, g = _decay(p, g, hp, wd)
            sq = state["square_avg"][i] * cast(rho, p) + cast(1 - rho, p) * g * g
            std = jnp.sqrt(sq + cast(eps, p))
            delta = jnp.sqrt(state["acc_delta"][i] + cast(eps, p))
            delta = delta / std * g
            acc = state["acc_delta"][i] * cast(rho, p) + cast(1 - rho, p) * delta * delta
            new_p.append(p + cast(-hp["lr"], p) * delta)
            out["step"].append(step)
            out["square_avg"].append(sq)
            out["acc_delta"].append(acc)
        return new_p, out


# ---------------------------------------------------------------------------- Adamax
class Adamax(_Capturable, _BetasMixin, Optimizer):
    """Adamax (Adam with the infinity norm)."""

    _init_state = _init_zero_state

    _hp_keys = ("lr", "eps", "weight_decay")
    _state_keys = ("step", "exp_avg", "exp_inf")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check_lr_eps_wd(lr, eps)
        _check_betas(betas)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _flags(self, group):
        return (("wd", group["weight_decay"] != 0), ("maximize", bool(group["maximize"])))

    @staticmethod
    def _update(params, grads, state, hp, *, wd, maximize):
        out = {k: [] for k in state}
        new_p = []
        b1, b2 = hp["beta1"], hp["beta2"]
        for i, (p, g) in enumerate(zip(params, grads)):
            g = -g if maximize else g
            step, s = _step(state["step"][i])
            p, g = _decay(p, g, hp, wd)
            m = lerp(state["exp_avg"][i], g, 1 - b1)
            inf = jnp.maximum(state["exp_inf"][i] * cast(b2, p),
                              jnp.abs(g) + cast(hp["eps"], p))
            clr = hp["lr"] / (1 - b1 ** s)
            new_p.append(p + cast(-clr, p) * m / inf)
            out["step"].append(step)
            out["exp_avg"].append(m)
            out["exp_inf"].append(inf)
        return new_p, out


# ---------------------------------------------------------------------------- NAdam
class NAdam(_Capturable, _BetasMixin, Optimizer):
    """NAdam (Nesterov-accelerated Adam), with optional decoupled weight decay."""

    _capturable_what = "params, mu_products and state_steps"
    _capturable_what_foreach = "params, mu_products, and state_steps"

    _hp_keys = ("lr", "eps", "weight_decay", "momentum_decay")
    _state_keys = ("step", "mu_product", "exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check_lr_eps_wd(lr, eps)
        _check_betas(betas)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        _check(0.0 <= momentum_decay, f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        st = self.state[p]
        if len(st) == 0:
            st["step"] = _zero_scalar()
            st["mu_product"] = _zero_scalar(1.0)
            st["exp_avg"] = _zeros_like(p)
            st["exp_avg_sq"] = _zeros_like(p)

    def _flags(self, group):
        return (("wd", group["weight_decay"] != 0), ("maximize", bool(group["maximize"])),
                ("decoupled", bool(group["decoupled_weight_decay"]))) + _foreach_flag(group)

    @staticmethod
    def _update(params, grads, state, hp, *, wd, maximize, decoupled, foreach=False):
        out = {k: [] for k in state}
        new_p = []
        b1, b2, md, lr = hp["beta1"], hp["beta2"], hp["momentum_decay"], hp["lr"]
        for i, (p, g) in enumerate(zip(params, grads)):
            g = -g if maximize else g
            step, s = _step(state["step"][i])
            bc2 = 1 - b2 ** s
            p, g = _decay(p, g, hp, wd, decoupled, foreach)
            mu = b1 * (1.0 - 0.5 * (0.96 ** (s * md)))
            mu_next = b1 * (1.0 - 0.5 * (0.96 ** ((s + 1) * md)))
            mp32 = state["mu_product"][i]
            mp32 = mp32 * mu.astype(mp32.dtype)
            m = lerp(state["exp_avg"][i], g, 1 - b1)
            mp = mp32.astype(F64)
            mp_next = mp * mu_next
            if p.dtype in _LOW and not foreach:
                # torch's single-tensor step op by op, each bfloat16/float16 op rounded once
                v = low_op(lambda x, c, y: x + c * y * y, scale(state["exp_avg_sq"][i], b2),
                           1 - b2, g)
                denom = low_op(jnp.sqrt, low_op(lambda x, c: x / c, v, bc2))
                denom = low_op(lambda x, e: x + e, denom, hp["eps"])
                p = low_op(lambda x, c, y, z: x + c * y / z, p, -lr * (1.0 - mu) / (1.0 - mp),
                           g, denom)
                p = low_op(lambda x, c, y, z: x + c * y / z, p,
                           (-lr * mu_next) / (1.0 - mp_next), m, denom)
            else:
                v = state["exp_avg_sq"][i] * cast(b2, p) + cast(1 - b2, p) * g * g
                denom = jnp.sqrt(v / cast(bc2, p)) + cast(hp["eps"], p)
                p = p + cast(-lr * (1.0 - mu) / (1.0 - mp), p) * g / denom
                p = p + cast((-lr * mu_next) / (1.0 - mp_next), p) * m / denom
            new_p.append(p)
            out["step"].append(step)
            out["mu_product"].append(mp32)
            out["exp_avg"].append(m)
            out["exp_avg_sq"].append(v)
        return new_p, out


# ---------------------------------------------------------------------------- RAdam
class RAdam(_Capturable, _BetasMixin, Optimizer):
    """RAdam (rectified Adam), with optional decoupled weight decay."""

    _init_state = _init_zero_state

    _hp_keys = ("lr", "eps", "weight_decay")
    _state_keys = ("step", "exp_avg", "exp_avg_sq")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check_lr_eps_wd(lr, eps)
        _check_betas(betas)
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _flags(self, group):
        return (("wd", group["weight_decay"] != 0), ("maximize", bool(group["maximize"])),
                ("decoupled", bool(group["decoupled_weight_decay"]))) + _foreach_flag(group)

    @staticmethod
    def _update(params, grads, state, hp, *, wd, maximize, decoupled, foreach=False):
        out = {k: [] for k in state}
        new_p = []
        b1, b2, lr = hp["beta1"], hp["beta2"], hp["lr"]
        for i, (p, g) in enumerate(zip(params, grads)):
            g = -g if maximize else g
            step, s = _step(state["step"][i])
            p, g = _decay(p, g, hp, wd, decoupled, foreach)
            m = lerp(state["exp_avg"][i], g, 1 - b1)
            bc1 = 1 - b1 ** s
            bc2 = 1 - b2 ** s
            rho_inf = 2 / (1 - b2) - 1
            rho_t = rho_inf - 2 * s * (b2 ** s) / bc2
            rect = jnp.sqrt(jnp.maximum((rho_t - 4) * (rho_t - 2) * rho_inf
                                        / ((rho_inf - 4) * (rho_inf - 2) * rho_t), 0.0))
            if p.dtype in _LOW and not foreach:
                # torch's single-tensor step op by op, each bfloat16/float16 op rounded once
                # (``number / tensor`` is torch's ``tensor.reciprocal() * number``)
                v = low_op(lambda x, c, y: x + c * y * y, scale(state["exp_avg_sq"][i], b2),
                           1 - b2, g)
                bcm = low_op(lambda x, c: x / c, m, bc1)
                plain_upd = scale(bcm, lr)
                root = low_op(lambda x, e: x + e, low_op(jnp.sqrt, v), hp["eps"])
                adaptive = scale(low_op(lambda x: 1 / x, root), bc2 ** 0.5)
                rect_upd = scale(low_op(lambda x, y: x * y, plain_upd, adaptive), rect)
                upd = jnp.where(rho_t > 5.0, rect_upd, plain_upd)
                new_p.append(add_alpha(p, upd, -1.0))
                out["step"].append(step)
                out["exp_avg"].append(m)
                out["exp_avg_sq"].append(v)
                continue
            v = state["exp_avg_sq"][i] * cast(b2, p) + cast(1 - b2, p) * g * g
            bcm = m / cast(bc1, p)
            adaptive = cast(bc2 ** 0.5, p) / (jnp.sqrt(v) + cast(hp["eps"], p))
            rect_upd = bcm * cast(lr, p) * adaptive * cast(rect, p)
            plain_upd = bcm * cast(lr, p)
            upd = jnp.where(rho_t > 5.0, rect_upd, plain_upd)
            new_p.append(p + cast(-1.0, p) * upd)
            out["step"].append(step)
            out["exp_avg"].append(m)
            out["exp_avg_sq"].append(v)
        return new_p, out


# ---------------------------------------------------------------------------- Rprop
class Rprop(_Capturable, Optimizer):
    """Resilient backpropagation: per-element step sizes adapted by the gradient's sign."""

    _capturable_devices_foreach = _CAPTURABLE_DEVICES     # (torch: supports_xla)

    _hp_keys = ("lr",)
    _state_keys = ("step", "prev", "step_size")

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 < etas[0] < 1.0 < etas[1], f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        st = self.state[p]
        if len(st) == 0:
            st["step"] = _zero_scalar()
            st["prev"] = _zeros_like(p)
            lr = float(group["lr"])
            fill = complex(lr, lr) if p.is_complex() else lr
            st["step_size"] = _layout_of(Tensor._make(jnp.full_like(p.grad._data, fill)), p)

    def _hp(self, group):
        hp = super()._hp(group)
        hp["etaminus"], hp["etaplus"] = (jnp.float64(e) for e in group["etas"])
        hp["step_size_min"], hp["step_size_max"] = (jnp.float64(s)
                                                    for s in group["step_sizes"])
        return hp

    def _flags(self, group):
        return (("maximize", bool(group["maximize"])),)

    @staticmethod
    def _update(params, grads, state, hp, *, maximize):
        out = {k: [] for k in state}
        new_p = []
        for i, (p, g) in enumerate(zip(params, grads)):
            g = -g if maximize else g
            step, _ = _step(state["step"][i])
            prev, size = state["prev"][i], state["step_size"][i]
            s = jnp.sign(g * prev)
            em, ep = cast(hp["etaminus"], s), cast(hp["etaplus"], s)
            s = jnp.where(s > 0, ep, jnp.where(s < 0, em, jnp.where(s == 0, 1, s)))
            size = jnp.clip(size * s, cast(hp["step_size_min"], size),
                            cast(hp["step_size_max"], size))
            g = jnp.where(s == em, jnp.zeros_like(g), g)
            new_p.append(p + cast(-1.0, p) * jnp.sign(g) * size)
            out["step"].append(step)
            out["prev"].append(g)
            out["step_size"].append(size)
        return new_p, out


# ---------------------------------------------------------------------------- ASGD
class ASGD(_Capturable, Optimizer):
    """Averaged stochastic gradient descent."""

    _capturable_what = "params, mus, etas, and state_steps"

    _hp_keys = ("lr", "lambd", "alpha", "t0", "weight_decay")
    _state_keys = ("step", "eta", "mu", "ax")

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(0.0 <= lr, f"Invalid learning rate: {lr}")
        _check(0.0 <= weight_decay, f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        st = self.state[p]
        if len(st) == 0:
            st["step"] = _zero_scalar()
            st["eta"] = _zero_scalar(float(group["lr"]))
            st["mu"] = _zero_scalar(1.0)
            st["ax"] = _zeros_like(p)

    def _flags(self, group):
        return (("wd", group["weight_decay"] != 0), ("maximize", bool(group["maximize"])))

    @staticmethod
    def _update(params, grads, state, hp, *, wd, maximize):
        out = {k: [] for k in state}
        new_p = []
        lr, lambd = hp["lr"], hp["lambd"]
        for i, (p, g) in enumerate(zip(params, grads)):
            g = -g if maximize else g
            step, s = _step(state["step"][i])
            p, g = _decay(p, g, hp, wd)
            eta, mu, ax = state["eta"][i], state["mu"][i], state["ax"][i]
            eta_v = eta.astype(F64)
            p = scale(p, 1 - lambd * eta_v)
            p = p + cast(-eta_v, p) * g
            ax = jnp.where(mu != 1, ax + (p - ax) * mu.astype(ax.dtype), p)
            new_eta = (lr / ((1 + lambd * lr * s) ** hp["alpha"])).astype(eta.dtype)
            new_mu = (1 / jnp.maximum(1.0, s - hp["t0"])).astype(mu.dtype)
            new_p.append(p)
            out["step"].append(step)
            out["eta"].append(new_eta)
            out["mu"].append(new_mu)
            out["ax"].append(ax)
        return new_p, out


# ---------------------------------------------------------------------------- Adafactor
class Adafactor(Optimizer):
    """Adafactor (factored second moments for matrices), as torch.optim.Adafactor."""

    _elementwise = False        # (a matrix's second moments are factored by rows and columns)
    _hp_keys = ("lr", "beta2_decay", "d", "weight_decay")

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        _check(0.0 >= beta2_decay, f"beta2_decay should be <= 0 but is: {beta2_decay}")
        _check(eps[0] is None or 0.0 <= eps[0], f"epsilon1 should be >= 0 but is: {eps[0]}")
        _check(0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}")
        _check(1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}")
        _check(0.0 <= weight_decay, f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def _init_state(self, p, group):
        if p.is_complex():
            raise RuntimeError("Adafactor does not support complex parameters")
        st = self.state[p]
        if len(st) == 0:
            st["step"] = _zero_scalar()
            g = p.grad._data
            if g.ndim > 1:
                st["row_var"] = Tensor._make(jnp.zeros(g.shape[:-1] + (1,), g.dtype))
                st["col_var"] = Tensor._make(jnp.zeros(g.shape[:-2] + (1,) + g.shape[-1:],
                                                       g.dtype))
            else:
                st["variance"] = Tensor._make(jnp.zeros_like(g))

    def _state_keys_for(self, group):
        return ("step", "row_var", "col_var", "variance")

    def _hp(self, group):
        hp = super()._hp(group)
        eps1, eps2 = group["eps"]
        hp["eps1"] = jnp.float64(0.0 if eps1 is None else eps1)
        hp["eps2"] = jnp.float64(eps2)
        return hp

    def _flags(self, group):
        return (("wd", group["weight_decay"] != 0), ("maximize", bool(group["maximize"])),
                ("eps1_default", group["eps"][0] is None))

    @staticmethod
    def _update(params, grads, state, hp, *, wd, maximize, eps1_default):
        out = {k: [] for k in state}
        new_p = []
        lr = hp["lr"]
        for i, (p, g) in enumerate(zip(params, grads)):
            g = -g if maximize else g
            step, s = _step(state["step"][i])
            eps1 = jnp.float64(jnp.finfo(p.dtype).eps) if eps1_default else hp["eps1"]
            beta_t = s ** hp["beta2_decay"]                      # one_minus_beta2_t
            rho = jnp.minimum(lr, 1 / (s ** 0.5))
            pnorm = jnp.sqrt(jnp.sum(p * p)).astype(F64)
            alpha = jnp.maximum(hp["eps2"], pnorm / (p.size ** 0.5)) * rho
            if wd:
                p = scale(p, 1 - lr * hp["weight_decay"])
            row, col, var = state["row_var"][i], state["col_var"][i], state["variance"][i]
            if g.ndim > 1:
                row_mean = jnp.square(jnp.sqrt(jnp.sum(g * g, -1, keepdims=True))) / g.shape[-1]
                row = lerp(row, row_mean, beta_t)
                col_mean = jnp.square(jnp.sqrt(jnp.sum(g * g, -2, keepdims=True))) / g.shape[-2]
                col = lerp(col, col_mean, beta_t)
                est = jnp.matmul(row, col)
                est = est / jnp.maximum(jnp.mean(row, -2, keepdims=True), cast(eps1, row))
            else:
                var = lerp(var, g * g, beta_t)
                est = var
            update = jax.lax.rsqrt(jnp.maximum(est, cast(eps1 * eps1, est))) * g
            unorm = jnp.sqrt(jnp.sum(update * update)).astype(F64)
            denom = jnp.maximum(1.0, unorm / ((update.size ** 0.5) * hp["d"]))
            new_p.append(p + cast(-alpha / denom, p) * update)
            out["step"].append(step)
            out["row_var"].append(row if g.ndim > 1 else None)
            out["col_var"].append(col if g.ndim > 1 else None)
            out["variance"].append(var if g.ndim <= 1 else None)
        return new_p, out


# ---------------------------------------------------------------------------- Muon
_MUON_NS = (3.4445, -4.7750, 2.0315)        # Keller Jordan's quintic Newton-Schulz coefficients


def _newton_schulz(g, coefficients, steps, eps):
    """torch.optim's ``_zeropower_via_newtonschulz``: ``steps`` quintic iterations toward the
    orthogonal factor of ``g``, in bfloat16 as torch runs them (each product accumulated in
    float32 and its ``addmm`` rounded once, as torch's CPU kernels do)."""
    a, b, c = (np.float32(v) for v in coefficients)
    f32, bf16 = jnp.float32, jnp.bfloat16
    x = g.astype(bf16)
    wide = g.shape[0] > g.shape[1]
    if wide:
        x = x.T
    norm = jnp.sqrt(jnp.sum(jnp.square(x.astype(f32)))).astype(bf16)
    norm = jnp.maximum(norm, eps.astype(f32).astype(bf16))
    x = (x.astype(f32) / norm.astype(f32)).astype(bf16)
    for _ in range(steps):
        gram = jnp.matmul(x, x.T, preferred_element_type=f32).astype(bf16)
        poly = (b * gram.astype(f32) + c * jnp.matmul(gram, gram, preferred_element_type=f32)
                ).astype(bf16)
        x = (a * x.astype(f32) + jnp.matmul(poly, x, preferred_element_type=f32)).astype(bf16)
    return x.T if wide else x


class Muon(Optimizer):
    """Muon (momentum orthogonalized by Newton-Schulz), for 2-D parameters, as
    torch.optim.Muon."""

    _elementwise = False        # (each update orthogonalizes a whole matrix)
    _hp_keys = ("lr", "weight_decay", "momentum", "eps")
    _state_keys = ("momentum_buffer",)

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=_MUON_NS, eps=1e-7, ns_steps=5, adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        _check(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        _check(0.0 <= momentum, f"momentum should be >= 0 but is: {momentum}")
        _check(0.0 <= weight_decay, f"weight decay should be >= 0 but is: {weight_decay}")
        _check(adjust_lr_fn in (None, "original", "match_rms_adamw"),
               f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps,
                        adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _init_state(self, p, group):
        if p.is_complex():
            raise RuntimeError("Muon does not support complex parameters")
        st = self.state[p]
        if "momentum_buffer" not in st:
            st["momentum_buffer"] = _zeros_like(p)

    def _flags(self, group):
        return (("nesterov", bool(group["nesterov"])),
                ("ns_coefficients", tuple(float(c) for c in group["ns_coefficients"])),
                ("ns_steps", int(group["ns_steps"])), ("adjust_lr_fn", group["adjust_lr_fn"]))

    def _step_group(self, group):
        steps, coefficients = group["ns_steps"], group["ns_coefficients"]
        bad = ("Number of steps must be less than 100 for computational efficiency"
               if steps >= 100 else "Coefficients must be a tuple of exactly 3 values"
               if len(coefficients) != 3 else None)
        if bad is not None:
            # torch meets it orthogonalizing the first parameter: every buffer made, the first
            # one updated
            params = [p for p in group["params"] if p.grad is not None]
            for p in params:
                self._init_state(p, group)
            if params:
                from ..autograd.grad_mode import no_grad
                with no_grad():
                    self.state[params[0]]["momentum_buffer"].lerp_(params[0].grad,
                                                                    1 - group["momentum"])
            raise ValueError(bad)
        super()._step_group(group)

    @staticmethod
    def _update(params, grads, state, hp, *, nesterov, ns_coefficients, ns_steps,
                adjust_lr_fn):
        new_p, new_buf = [], []
        lr = hp["lr"]
        for p, g, buf in zip(params, grads, state["momentum_buffer"]):
            buf = lerp(buf, g, 1 - hp["momentum"])
            update = lerp(g, buf, hp["momentum"]) if nesterov else buf
            update = _newton_schulz(update, ns_coefficients, ns_steps, hp["eps"])
            rows, cols = p.shape[:2]
            if adjust_lr_fn is None or adjust_lr_fn == "original":
                ratio = max(1.0, rows / cols) ** 0.5
            else:                                       # "match_rms_adamw"
                ratio = 0.2 * max(rows, cols) ** 0.5
            p = scale(p, 1 - lr * hp["weight_decay"])
            new_p.append(p + cast(-(lr * ratio), p) * update.astype(p.dtype))
            new_buf.append(buf)
        return new_p, {"momentum_buffer": new_buf}
