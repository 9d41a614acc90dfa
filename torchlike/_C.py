"""``torch._C``: the few names of torch's C extension that libraries call from Python.

torch's ``_C`` is its C++ core; torchlike has none. Libraries that run on torch touch a handful
of its names as part of their plumbing (torchmetrics' and Lightning's API-usage logging, the
tracing-state check of code that may run under ``torch.jit.trace``, a Tensor subclass opting
out of ``__torch_function__``, the ``TensorBase`` class): those are here, doing what torch's do
on a CPU-only install. Any other name is an AttributeError that says so.
"""
from __future__ import annotations

from ._random import Generator  # noqa: F401  (torch._C.Generator)
from ._tensor import Tensor as _Tensor

__all__ = ["Generator", "TensorBase", "_TensorBase", "_TensorMeta", "_log_api_usage_once",
           "_get_tracing_state", "_disabled_torch_function_impl", "_get_default_device",
           "PyTorchFileReader", "_nn", "_are_functorch_transforms_active", "_functorch",
           "_len_torch_dispatch_stack"]

TensorBase = _TensorBase = _Tensor
_TensorMeta = type(_Tensor)         # (the Tensor class's metaclass, as torch's)


class PyTorchFileReader:
    """torch's reader of the records of a checkpoint archive (lazy loaders name it); reading
    records this way is not provided: ``torchlike.load`` reads the archive."""

    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torchlike._C.PyTorchFileReader is not provided: load the "
                                  "checkpoint with torchlike.load(path)")


def _log_api_usage_once(event):
    """torch logs the event to its usage telemetry (off unless configured): nothing to do."""
    return None


def _get_tracing_state():
    """Not inside ``torch.jit.trace``: torchlike's trace runs the Python, so None, always."""
    return None


def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
    """A Tensor subclass's ``__torch_function__ = torch._C._disabled_torch_function_impl``:
    the function itself, run without dispatch."""
    return func(*args, **(kwargs or {}))


def _are_functorch_transforms_active():
    """Is a ``torch.func`` transform (vmap, grad, jacrev, ...) tracing in this thread? (kornia
    skips its value checks there)"""
    from .autograd.function import active_transforms
    return bool(active_transforms[0]())


def _len_torch_dispatch_stack():
    """The ``__torch_dispatch__`` modes active: torchlike has none."""
    return 0


class _functorch:
    """``torch._C._functorch``: ``is_functorch_wrapped_tensor`` (kornia's eager-path check)."""

    @staticmethod
    def is_functorch_wrapped_tensor(tensor):
        """Does ``tensor`` carry a ``torch.func`` transform's level? An input of a vmapped or
        differentiated function and a value computed from one do; inside a differentiating
        transform (grad, jacrev, jvp, ...) so does a tensor the function makes (torch wraps it
        at that level; a tensor it captures from outside is counted too), inside vmap alone it
        does not."""
        import jax
        from .autograd.function import active_transforms
        apis = active_transforms[0]()
        return bool(apis) and (isinstance(tensor._d, jax.core.Tracer)
                               or any(a != "vmap" for a in apis))


def _get_default_device():
    return "cpu"


class _nn:
    """``torch._C._nn``: ``_parse_to``, the argument parser of ``Module.to`` (libraries'
    device/dtype mixins call it)."""

    @staticmethod
    def _parse_to(*args, **kwargs):
        """``(device, dtype, non_blocking, memory_format)`` of ``.to(...)``'s arguments."""
        from .nn.modules.module import _parse_to
        fmt = kwargs.pop("memory_format", None)
        return (*_parse_to(*args, **kwargs), fmt)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(f"module 'torchlike._C' has no attribute {name!r} (torch._C is torch's "
                         f"C++ extension; torchlike provides only the few names libraries call "
                         f"from Python)")
