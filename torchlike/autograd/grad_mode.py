"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode (thread-local)."""
from __future__ import annotations

import functools
import inspect
import threading

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]
# also here (not exported): check_inference_inplace, check_inference_saved (torch's refusals of
# inference tensors outside inference mode)


class _State(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.inference = False
        # autocast policy (torchlike.amp): None, or a callable ``(op, args, static) -> args``
        # that the registry's ``apply`` calls before promotion
        self.autocast = None
        # inside ``autograd.graph.allow_mutation_on_saved_tensors``: what new nodes hold as
        # their saved versions (nothing to check), else None
        self.allow_mutation = None


_state = _State()


def is_grad_enabled() -> bool:
    """True when operations are being recorded for autograd in this thread."""
    return _state.grad_enabled


def is_inference_mode_enabled() -> bool:
    return _state.inference


class _Mode:
    """Base of the grad-mode context managers; each is also a decorator, with or without its
    parentheses (``@no_grad()``, ``@no_grad``)."""

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]):
            return cls()(args[0])               # (``@no_grad``: the decorated function)
        return super().__new__(cls)

    def __call__(self, fn):
        if isinstance(fn, type):
            raise TypeError(f"{type(self).__name__} can decorate functions, not classes")
        if inspect.isgeneratorfunction(fn):
            return self._generator(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def _generator(self, fn):
        """A decorated generator function: the mode holds while its body runs, between
        yields (the caller's mode holds while the caller runs), as torch's decorator does."""
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            gen = fn(*args, **kwargs)
            try:
                with self.clone():
                    value = gen.send(None)
                while True:
                    try:
                        request = yield value
                    except GeneratorExit:
                        with self.clone():
                            gen.close()
                        raise
                    except BaseException as e:      # (thrown in by the caller: passed on)
                        with self.clone():
                            value = gen.throw(e)
                    else:
                        with self.clone():
                            value = gen.send(request)
            except StopIteration as stop:
                return stop.value
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

    def __call__(self, fn):
        # as a decorator, the call that made it set nothing: the mode is restored
        _state.grad_enabled = self._prev[0]
        return super().__call__(fn)

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
        # (inference_mode(False), as torch's: neither inference mode nor no_grad)
        _state.grad_enabled = not self.mode
        _state.inference = self.mode


# ------------------------------------------------------------------ inference tensors
#
# torch refuses three uses of a tensor made under inference_mode once outside it: writing into
# it in place, asking it to require grad, and saving it for the backward of a recorded op.

INFERENCE_INPLACE_MSG = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
    "clone to get a normal tensor before doing inplace update.See "
    "https://github.com/pytorch/rfcs/pull/17 for more details.")
INFERENCE_REQUIRES_GRAD_MSG = (
    "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
INFERENCE_SAVED_MSG = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `torch.no_grad()` instead of "
    "`torch.inference_mode()`.")


def check_inference_inplace(t):
    """torch's error for an in-place write into inference tensor ``t`` outside inference mode
    (also under no_grad). One attribute read on the hot path."""
    if t._is_inference and not _state.inference:
        raise RuntimeError(INFERENCE_INPLACE_MSG)


def saved_positions(saves, needs):
    """The input positions whose tensors a node keeps for its backward, from its op's ``saves``
    rule (as the registry's ``defop``: True or ``"both"`` = its tensor inputs, ``"others"`` =
    an input only when another input needs grad, a dict ``{position: positions}`` = an input
    when one of those needs grad, ``"output"``/False = no input) and the per-argument ``needs``
    flags: a tuple, or None for every tensor input."""
    n = len(needs)
    if not saves or saves == "output":
        return ()
    if saves == "others":
        # bilinear ops (mul, matmul): an input is read by the other inputs' gradients
        return tuple(i for i in range(n) if any(needs[j] for j in range(n) if j != i))
    if saves.__class__ is dict:
        # addmm's {1: (2,), 2: (1,)}: each matrix is read by the other's gradient, the added
        # input by none
        return tuple(i for i in range(n) if saves.get(i)
                     and any(needs[j] for j in saves[i] if j < n))
    return None


def check_inference_saved(args, needs, saves=True):
    """torch's error when a recorded op would save an inference tensor for its backward.

    Call it where a tape node is recorded (grad mode on, some input needs grad), with the op's
    ``args``, the per-argument ``needs`` flags and the op's ``saves`` rule (``saved_positions``
    reads it)."""
    at = saved_positions(saves, needs)
    for i in range(len(args)) if at is None else at:
        if getattr(args[i], "_is_inference", False):
            raise RuntimeError(INFERENCE_SAVED_MSG)


_multithreading = [True]


def is_multithreading_enabled() -> bool:
    return _multithreading[0]


class set_multithreading_enabled:
    """torch's switch for its multithreaded backward; torchlike's backward is one thread, so
    it only records the choice (at once, or for a ``with`` block)."""

    def __init__(self, mode: bool):
        self.prev = _multithreading[0]
        _multithreading[0] = bool(mode)

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _multithreading[0] = self.prev
        return False


# ------------------------------------------------------------------ whole-function tracing

# a function jax differentiates as a whole tracing (a compiled module's node, a torch.func
# transform, interop.jax_function): what torch's graph does not track inside it (a tensor that
# does not require grad: detached, ``.data``, made under ``no_grad``) is cut for jax too, where
# ``apply`` reads its inputs (``torchlike._registry``)
NODE_TRACE = [0]                    # (traces under way, in any thread)
_node_local = threading.local()     # .on: this thread's mode (True, FORWARD) or False
_node_lock = threading.Lock()
FORWARD = "forward"


class node_trace:
    """Context: this thread traces a function jax differentiates as a whole; ``forward``: by
    forward mode (jvp), where torch's grad mode does not stop tangents, only ``detach()`` and
    ``.data`` do."""

    def __init__(self, forward=False):
        self.mode = FORWARD if forward else True

    def __enter__(self):
        self.outer = getattr(_node_local, "on", False)
        _node_local.on = self.mode
        with _node_lock:
            NODE_TRACE[0] += 1

    def __exit__(self, *exc):
        _node_local.on = self.outer
        with _node_lock:
            NODE_TRACE[0] -= 1
        return False


def node_tracing():
    """This thread's whole-function trace mode (True, FORWARD), or False."""
    return bool(NODE_TRACE[0]) and getattr(_node_local, "on", False)
