"""torch.amp.GradScaler: dynamic loss scaling with torch's state machine and state_dict."""
from __future__ import annotations

import warnings
from collections import defaultdict
from enum import Enum

import jax
import jax.numpy as jnp

from .. import _device, _fused, _tiers

__all__ = ["GradScaler", "OptState"]


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _unscale(grads, inv_scale):
    """``grads`` times ``inv_scale`` (each in its dtype), and 1.0 where one holds an inf or a
    NaN (float32), else 0.0."""
    bad = jnp.zeros((), bool)
    out = []
    for g in grads:
        bad = bad | ~jnp.all(jnp.isfinite(g))
        out.append((g * inv_scale.astype(g.dtype)).astype(g.dtype))
    return tuple(out), bad.astype(jnp.float32)


_UNSCALE = _tiers.Tiered(_unscale, lambda: jax.jit(_tiers.inlined(_unscale)), "amp unscale")


class GradScaler:
    """``GradScaler(device='cuda', init_scale=2.**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)``.

    ``scale(loss)`` multiplies by the scale, ``unscale_(opt)`` divides the gradients and notes
    infs/NaNs, ``step(opt)`` skips ``opt.step()`` when any were found, ``update()`` backs the
    scale off after a skipped step and grows it after ``growth_interval`` clean ones.
    """

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled and not _device.cuda_devices():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    # ---- helpers
    def _lazy_init_scale_growth_tracker(self, dev):
        from .. import full
        if self._growth_tracker is not None:
            raise AssertionError("_growth_tracker initialized before _scale")
        self._scale = full((), self._init_scale, dtype=_f32(), device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=_i32(), device=dev)

    def _check_scale_growth_tracker(self, funcname):
        fix = "This may indicate your script did not use scaler.scale(loss or outputs) earlier " \
              "in the iteration."
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def is_enabled(self):
        return self._enabled

    # ---- scale
    def scale(self, outputs):
        """``outputs`` (a tensor or nested list/tuple of tensors) times the current scale."""
        if not self._enabled:
            return outputs
        from .._registry import _Tensor as Tensor
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(outputs.device)

        def apply_scale(val):
            if isinstance(val, Tensor):
                if self._scale is None:
                    self._lazy_init_scale_growth_tracker(val.device)
                return val * self._scale.to(val.device)
            if isinstance(val, (list, tuple)):
                return type(val)(apply_scale(v) for v in val)
            if hasattr(val, "__iter__"):
                return map(apply_scale, val)
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")
        return apply_scale(outputs)

    # ---- unscale
    def _unscale_grads_(self, optimizer, inv_scale, found_inf, allow_fp16):
        from .. import _dtype as D
        from ..autograd.grad_mode import no_grad
        by_device = {}
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    g = param.grad
                    if g is None:
                        continue
                    if not allow_fp16 and g.dtype is D.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    by_device.setdefault(g.device, []).append(g)
        from .._registry import _Tensor as Tensor
        out = {}
        scale = _fused.raw(inv_scale)
        for dev, grads in by_device.items():
            # (one call for a device's gradients: fused eager records it, reading nothing)
            new, bad = _UNSCALE(tuple(_fused.raw(g) for g in grads), scale)
            for g, d in zip(grads, new):
                g._set_data(d)
            out[dev] = Tensor._make(bad)
        if not out:
            out[found_inf.device] = found_inf
        return out

    def unscale_(self, optimizer):
        """Divide ``optimizer``'s gradients by the scale (once per ``update()``)."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        from .. import full
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=_f32(), device=self._scale.device)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, found_inf,
                                                             False)
        state["stage"] = OptState.UNSCALED

    # ---- step / update
    def _maybe_opt_step(self, optimizer, state, *args, **kwargs):
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` unless the unscaled gradients hold infs or NaNs."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, state, *args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Update the scale: ``new_scale`` if given, else back off or grow (torch's rule)."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        from .._registry import _Tensor as Tensor
        from .. import full
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale = full((), new_scale, dtype=_f32(), device=_scale.device)
            else:
                reason = ("new_scale should be a float or a 1-element torch.cuda.FloatTensor or "
                          "torch.FloatTensor with requires_grad=False.")
                if not isinstance(new_scale, Tensor):
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad:
                    raise AssertionError(reason)
                self._scale = Tensor._make(new_scale._data.reshape(()).astype(jnp.float32))
        else:
            found_infs = [f for state in self._per_optimizer_states.values()
                          for f in state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found = any(f.item() != 0 for f in found_infs)
            scale = float(_scale.item())
            tracker = int(_growth_tracker.item())
            if found:
                scale *= self._backoff_factor
                tracker = 0
            else:
                tracker += 1
                if tracker == self._growth_interval:
                    scale *= self._growth_factor
                    tracker = 0
            # torch updates the float32 scale in float32
            scale = float(jnp.float32(scale))
            self._scale = full((), scale, dtype=_f32(), device=_scale.device)
            self._growth_tracker = full((), tracker, dtype=_i32(), device=_scale.device)
        self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)

    # ---- getters / setters
    def _get_scale_async(self):
        return self._scale

    def get_scale(self):
        if self._enabled:
            return self._init_scale if self._scale is None else float(self._scale.item())
        return 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if self._enabled:
            return (self._init_growth_tracker if self._growth_tracker is None
                    else int(self._growth_tracker.item()))
        return 0

    def state_dict(self):
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor,
                    "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        from .. import full
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale = full((), state_dict["scale"], dtype=_f32(), device=self._scale.device)
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker = full((), state_dict["_growth_tracker"], dtype=_i32(),
                                        device=self._growth_tracker.device)

    def __getstate__(self):
        state = self.__dict__.copy()
        if self._enabled:
            state["_per_optimizer_states"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self._enabled:
            self._per_optimizer_states = defaultdict(_refresh_per_optimizer_state)


def _f32():
    from .. import _dtype as D
    return D.float32


def _i32():
    from .. import _dtype as D
    return D.int32
