"""Stochastic weight averaging and EMA: a port of torch/optim/swa_utils.py (PyTorch,
BSD-3-Clause). Averages are computed with tensor ops (recorded in fused eager: no host read) and
written into the averaged model's tensors in place outside autograd, following torch's
per-tensor formulas."""
from __future__ import annotations

import itertools
import math
import warnings
from copy import deepcopy

from .._fused import raw as _raw
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _is_inexact(t):
    return t.is_floating_point() or t.is_complex()


def _assign(dst, value):
    """``dst`` holds ``value`` (cast to its dtype), written in place outside autograd."""
    with no_grad():
        if value.dtype is not dst.dtype:
            value = value.to(dst.dtype)
        dst._set_data(_raw(value))


def _lerp(a, b, w):
    import torchlike
    with no_grad():
        return torchlike.lerp(a, b, w)


def get_ema_multi_avg_fn(decay=0.999):
    """In-place EMA over lists of tensors: ``ema = lerp(ema, current, 1 - decay)``."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         f"[0,1] range.")

    def ema_update(ema_param_list, current_param_list, _):
        if _is_inexact(ema_param_list[0]):
            for e, c in zip(ema_param_list, current_param_list):
                _assign(e, _lerp(e, c, 1 - decay))
        else:
            with no_grad():
                for e, c in zip(ema_param_list, current_param_list):
                    _assign(e, e * decay + c * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """In-place running mean over lists of tensors."""

    def swa_update(averaged_param_list, current_param_list, num_averaged):
        n = int(num_averaged.item() if isinstance(num_averaged, Tensor) else num_averaged)
        with no_grad():
            for a, c in zip(averaged_param_list, current_param_list):
                if _is_inexact(a):
                    _assign(a, _lerp(a, c, 1 / (n + 1)))
                else:
                    _assign(a, a + (c - a) / (n + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """``decay * ema + (1 - decay) * current``, one tensor at a time."""
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         f"[0,1] range.")

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """The running mean, one tensor at a time."""

    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and, with ``use_buffers``, buffers) hold a running
    average (SWA by default, or ``avg_fn``/``multi_avg_fn``, e.g. an EMA)."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        from .._creation import tensor
        from .. import _dtype as D
        self.register_buffer("n_averaged", tensor(0, dtype=D.int64))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold ``model``'s current parameters into the average."""
        if self.use_buffers:
            self_param = itertools.chain(self.module.parameters(), self.module.buffers())
            model_param = itertools.chain(model.parameters(), model.buffers())
        else:
            self_param, model_param = self.parameters(), model.parameters()
        mine, theirs = [], []
        n = int(self.n_averaged.item())
        for a, p in zip(self_param, model_param):
            mine.append(a)
            theirs.append(p)
            if n == 0:
                _assign(a, p.detach())
        if n > 0:
            if self.multi_avg_fn is not None:
                groups = {}                     # torch calls it once per (device, dtype)
                for a, p in zip(mine, theirs):
                    g = groups.setdefault(a._d.dtype, ([], []))
                    g[0].append(a)
                    g[1].append(p)
                for ours, models in groups.values():
                    self.multi_avg_fn(ours, models, self.n_averaged)
            elif self.avg_fn is None:
                # torch on CPU: averaged + (current - averaged) / (n_averaged + 1)
                with no_grad():
                    for a, p in zip(mine, theirs):
                        _assign(a, a + (p - a) / (self.n_averaged + 1))
            else:
                for a, p in zip(mine, theirs):
                    _assign(a, self.avg_fn(a.detach(), p.detach(), self.n_averaged))
        if not self.use_buffers:
            for b_swa, b_model in zip(self.module.buffers(), model.buffers()):
                _assign(b_swa, b_model.detach())
        with no_grad():
            _assign(self.n_averaged, self.n_averaged + 1)

def update_bn(loader, model, device=None):
    """Recompute BatchNorm running statistics with one pass over ``loader``."""
    momenta = {}
    for module in model.modules():
        if hasattr(module, "reset_running_stats") and hasattr(module, "running_mean"):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    with no_grad():
        for input in loader:
            if isinstance(input, (list, tuple)):
                input = input[0]
            model(input)
    for bn_module in momenta:
        bn_module.momentum = momenta[bn_module]
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to ``swa_lr`` over ``anneal_epochs``, then hold it."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        swa_lrs = _format_param("swa_lr", optimizer, swa_lr)
        for lr, group in zip(swa_lrs, optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_t = max(0, min(1, (step - 1) / max(1, self.anneal_epochs)))
        prev_alpha = self.anneal_func(prev_t)
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        t = max(0, min(1, step / max(1, self.anneal_epochs)))
        alpha = self.anneal_func(t)
        return [group["swa_lr"] * alpha + lr * (1 - alpha)
                for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = (self._cosine_anneal if anneal_strategy == "cos"
                            else self._linear_anneal)

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
