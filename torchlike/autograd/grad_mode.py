"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (thread-local)."""
from __future__ import annotations

import functools
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]


class _State(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.inference = False
        # autocast policy (torchlike.amp): None, or a callable ``(op, args, static) -> args``
        # that the registry's ``apply`` calls before promotion
        self.autocast = None


_state = _State()


def is_grad_enabled() -> bool:
    """True when operations are being recorded for autograd in this thread."""
    return _state.grad_enabled


def is_inference_mode_enabled() -> bool:
    return _state.inference


class _Mode:
    """Base of the grad-mode context managers; each is also a decorator."""

    def __call__(self, fn):
        if isinstance(fn, type):
            raise TypeError(f"{type(self).__name__} can decorate functions, not classes")

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return type(self)()

    def __enter__(self):
        self._prev = (_state.grad_enabled, _state.inference)
        self._set()
        return None

    def __exit__(self, *exc):
        _state.grad_enabled, _state.inference = self._prev
        return False


class no_grad(_Mode):
    """Context manager and decorator that disables gradient recording.

    >>> with torchlike.no_grad():
    ...     y = x * 2          # y.requires_grad is False
    """

    def _set(self):
        _state.grad_enabled = False


class enable_grad(_Mode):
    """Context manager and decorator that enables gradient recording inside no_grad."""

    def _set(self):
        _state.grad_enabled = True


class set_grad_enabled(_Mode):
    """``set_grad_enabled(mode)``: a function call sets the mode; also a context manager."""

    def __init__(self, mode: bool):
        self.mode = bool(mode)
        self._prev = (_state.grad_enabled, _state.inference)
        _state.grad_enabled = self.mode

    def clone(self):
        return _SetGrad(self.mode)

    def _set(self):
        _state.grad_enabled = self.mode

    def __enter__(self):
        # the state was already set in __init__; remember what to restore
        return None


class _SetGrad(set_grad_enabled):
    def __init__(self, mode):
        self.mode = mode

    def __enter__(self):
        self._prev = (_state.grad_enabled, _state.inference)
        self._set()


class inference_mode(_Mode):
    """Like no_grad; tensors created inside are inference tensors (see DIFFERENCES.md)."""

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def clone(self):
        return type(self)(self.mode)

    def __call__(self, fn=None):
        if isinstance(fn, bool) or fn is None:
            return type(self)(fn if fn is not None else True)
        return super().__call__(fn)

    def _set(self):
        if self.mode:
            _state.grad_enabled = False
            _state.inference = True
