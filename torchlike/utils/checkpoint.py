"""torch.utils.checkpoint: activation checkpointing.

``use_reentrant=True`` (torch's default when unspecified, with its warning) runs ``function``
under ``no_grad`` and records one ``CheckpointFunctionBackward`` node; the backward pass reruns
``function`` with grad on (restoring the random state, so dropout masks repeat) and
backpropagates through the recomputation, as torch's reentrant variant does.

``use_reentrant=False`` records ``function``'s graph as an ordinary forward would: values,
gradients and ``grad_fn`` names equal torch's, but the activations are kept rather than
recomputed (torch frees them through saved-tensor hooks, which torchlike's tape does not have;
see DIFFERENCES.md). torch recomputes the region when a backward first needs it, so its side
effects happen again (BatchNorm's running statistics, forward hooks, draws from an unrestored
random stream): the first gradient reaching the region's outputs in each backward reruns
``function`` for them, its results discarded.
"""
from __future__ import annotations

import contextlib
import functools
import warnings
import weakref

from ..autograd.function import Function
from ..autograd import grad_mode as _gm
from ..autograd.graph import _running

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "detach_variable",
           "check_backward_validity", "CheckpointFunction", "noop_context_fn",
           "set_checkpoint_early_stop", "set_checkpoint_debug_enabled",
           "CheckpointPolicy", "create_selective_checkpoint_contexts", "DefaultDeviceType",
           "get_device_states", "set_device_states"]


class CheckpointError(RuntimeError):
    pass


def detach_variable(inputs):
    """Detached copies of ``inputs`` keeping ``requires_grad`` (torch's helper)."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    return _detach_inputs(inputs)


def check_backward_validity(inputs):
    from .._tensor import Tensor
    if not any(isinstance(x, Tensor) and x.requires_grad for x in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    yield


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    yield


class DefaultDeviceType:
    _default_device_type = "cuda"

    @staticmethod
    def set_device_type(device="cuda"):
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        return DefaultDeviceType._default_device_type


def get_device_states(*args):
    """``(device ids, generator states)`` of the accelerators ``args``' tensors are on (none
    for tensors on the CPU): what a reversible layer restores before recomputing (reformer's,
    performer's)."""
    from .. import cuda
    from .._tensor import Tensor
    from ._pytree import tree_map
    ids = []

    def add(arg):
        if isinstance(arg, Tensor) and arg.device.type not in ("cpu", "meta"):
            ids.append(arg.get_device())
        return arg
    tree_map(add, args)
    states = []
    for i in ids:
        with cuda.device(i):
            states.append(cuda.get_rng_state())
    return ids, states


def set_device_states(devices, states, *, device_type=None):
    """Restore the generator states ``get_device_states`` read."""
    if (device_type or DefaultDeviceType.get_device_type()) == "meta":
        return
    from .. import cuda
    for d, state in zip(devices, states):
        with cuda.device(d):
            cuda.set_rng_state(state)


class CheckpointPolicy:
    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    raise NotImplementedError("selective activation checkpointing (policies per op) is not "
                              "supported by torchlike: use checkpoint(fn, ..., "
                              "use_reentrant=False) without context_fn")


def _detach_inputs(inputs):
    from .._tensor import Tensor
    out = []
    for x in inputs:
        if isinstance(x, Tensor):
            d = x.detach()
            d.requires_grad_(x.requires_grad)
            out.append(d)
        else:
            out.append(x)
    return tuple(out)


class CheckpointFunction(Function):
    """The reentrant checkpoint: forward without a graph, backward recomputes it."""
    _jax_differentiable = True   # (its backward is the forward's derivative)

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        from .._tensor import Tensor
        from .. import _random
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.fwd_rng_state = _random.get_rng_state() if preserve_rng_state else None
        ctx.inputs = []
        ctx.tensor_indices = []
        tensors = []
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                tensors.append(a)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(a)
        ctx.save_for_backward(*tensors)
        ctx.autocast = _autocast_state()
        with _gm.no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        from .._tensor import Tensor
        from .. import autograd
        walk = getattr(_running, "walk", None)
        if walk is not None and walk.targets is not None:
            # (a backward with capture points, ``autograd.grad`` or ``.backward(inputs=)``:
            # the recomputation's own backward would accumulate into ``.grad`` instead)
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() "
                "or passing an `inputs` parameter to .backward(). To resolve this error, you "
                "can either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = _detach_inputs(inputs)
        outputs = _recompute(ctx.run_function, detached, {}, ctx.fwd_rng_state, ctx.autocast)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(x.grad if isinstance(x, Tensor) else None
                                    for x in detached)


def _autocast_state():
    from .. import amp
    return {d: (amp.is_autocast_enabled(d), amp.get_autocast_dtype(d)) for d in ("cpu", "cuda")}


def _recompute(function, args, kwargs, rng_state, autocast, context=None):
    """``function(*args, **kwargs)`` again, with grad on, under the forward's ``autocast``
    state, inside ``context`` and, given the forward's ``rng_state``, drawing the forward's
    random numbers (the stream is left as it was)."""
    from .. import _random, amp
    saved = None
    if rng_state is not None:
        saved = _random.get_rng_state()
        _random.set_rng_state(rng_state)
    try:
        with _gm.enable_grad(), contextlib.ExitStack() as stack:
            for d, (on, dt) in autocast.items():
                if on:
                    stack.enter_context(amp.autocast(d, dtype=dt))
            if context is not None:
                stack.enter_context(context)
            return function(*args, **kwargs)
    finally:
        if saved is not None:
            _random.set_rng_state(saved)


def _rerun_in_each_backward(outputs, rerun):
    """Call ``rerun()`` when the first gradient of a backward reaches one of ``outputs``."""
    from .._tensor import Tensor
    from ._pytree import tree_leaves
    last = [lambda: None]               # (a weak reference to the backward that reran it)

    def hook(grad):
        walk = getattr(_running, "walk", None)
        if walk is not None and last[0]() is walk:
            return
        last[0] = weakref.ref(walk) if walk is not None else (lambda: None)
        rerun()

    for t in tree_leaves(outputs):
        if isinstance(t, Tensor) and t.requires_grad and t.grad_fn is not None:
            t.register_hook(hook)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    """``function(*args)``, recomputed in the backward pass (``use_reentrant=True``) or
    recorded as usual (``use_reentrant=False``); see the module docstring."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be "
            "passed explicitly. Starting in PyTorch 2.9, calling checkpoint "
            "without use_reentrant will raise an exception. use_reentrant=False is "
            "recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        check_backward_validity(args)
        return CheckpointFunction.apply(function, preserve, *args)
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    from .. import _random
    fwd_ctx, recompute_ctx = context_fn()
    rng_state = _random.get_rng_state() if preserve else None
    autocast = _autocast_state()
    with fwd_ctx:
        outputs = function(*args, **kwargs)
    _rerun_in_each_backward(outputs, functools.partial(
        _recompute, function, _detach_inputs(args), kwargs, rng_state, autocast, recompute_ctx))
    return outputs


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a Sequential or list) in ``segments`` chunks, checkpointing all but
    the last."""
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant "
            "parameter should be passed explicitly. "
            "In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is "
            "recommended, but if you need to preserve the current default "
            "behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    from ..nn import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)
