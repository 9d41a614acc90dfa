"""torchlike.autograd: backward, grad, grad modes."""
from __future__ import annotations

import collections.abc
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _fused, _tiers

from . import graph as graph
from .function import Function, FunctionCtx, once_differentiable  # noqa: F401
from .engine import flip_conj, run_backward
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, no_grad,
                        set_grad_enabled)
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: F401
from .variable import Variable  # noqa: F401

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "graph", "gradcheck", "gradgradcheck", "detect_anomaly",
           "set_detect_anomaly", "Variable", "set_multithreading_enabled",
           "is_multithreading_enabled"]


def _as_list(x):
    if x is None:
        return None
    Tensor = graph.tensor_class()
    if isinstance(x, (Tensor, graph.GradientEdge)):
        return [x]
    return list(x)


_SEEDS: dict = {}


def _seed(shape, dtype):
    """The implicit gradient of a scalar output: ones, placed from the host (an eager
    ``jnp.ones`` dispatches two XLA ops: ten times the cost), once per shape, dtype and default
    device (jax arrays are immutable and nothing donates them: one array serves every
    backward)."""
    key = (shape, dtype, _tiers._default_device())
    arr = _SEEDS.get(key)
    if arr is None:
        if len(_SEEDS) > 64:
            _SEEDS.clear()
        arr = _SEEDS[key] = _tiers.put(np.ones(shape, dtype), jax.core.ShapedArray(shape, dtype),
                                       None)
    return arr


def _make_grads(outputs, grad_outputs, create_graph):
    """A gradient per output, as torch's: pairs taken as ``zip`` takes them (an extra gradient
    is ignored, a missing one is the engine's count error, ``_check_counts``)."""
    Tensor = graph.tensor_class()
    grads = []
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if not isinstance(out, (Tensor, graph.GradientEdge)):
            raise AssertionError("Expected output to be a torch.Tensor")
        if not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               f"a grad_fn")
        if g is None:
            if out.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not out.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs "
                                   f"but got {out.dtype!r}")
            arr = _seed(out._d.shape, out._d.dtype)
            grads.append(Tensor._make(arr) if create_graph else arr)
            continue
        if not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
        if tuple(g.shape) != tuple(out.shape):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                f"has a shape of {out.shape}.")
        if create_graph:
            grads.append(flip_conj(g if g.dtype is out.dtype else g.to(out.dtype), True))
        else:
            # (a pending gradient stays pending: the backward joins its segment)
            arr = _fused.raw(g)
            if arr.dtype != out._d.dtype:
                arr = g._data.astype(out._d.dtype)
            grads.append(flip_conj(arr))
    return grads


def _check_counts(outputs, grads):
    if len(outputs) != len(grads):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")


def _check_inputs(inputs, api):
    """The engine's checks of the tensors to differentiate, in order: each a Tensor (or a
    GradientEdge) that requires grad (``backward``'s message is torch's retain_grad one)."""
    Tensor = graph.tensor_class()
    for t in inputs:
        if not isinstance(t, (Tensor, graph.GradientEdge)):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got "
                               f"{type(t).__name__}")
        if isinstance(t, Tensor) and not t.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False"
                               if api == "backward" else
                               "One of the differentiated Tensors does not require grad")


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate into ``.grad`` the gradients of ``tensors`` w.r.t. the graph leaves."""
    tensors = _as_list(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    grad_tensors = _as_list(grad_tensors) or [None] * len(tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if create_graph and not _warned_create_graph:
        _warn_create_graph()
    grads = _make_grads(tensors, grad_tensors, create_graph)
    _check_counts(tensors, grads)
    inputs = _as_list(inputs)
    points = None
    if inputs is not None:
        if len(inputs) == 0:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        _check_inputs(inputs, "backward")
        points = [t._edge() + (t,) for t in inputs]
    roots = [t._edge() for t in tensors]
    captured = run_backward(roots, grads, retain_graph, create_graph, inputs=points)
    if inputs is not None:
        # non-leaf inputs accumulate their captured gradient into .grad, as in torch (one
        # that retains its grad has it from the walk already)
        from .graph import accumulate as _accumulate
        for t, g in zip(inputs, captured):
            if t.grad_fn is not None and g is not None and not t._retains_grad:
                _accumulate(t, g, create_graph)
    if _fused.ACTIVE:
        # fused eager: the segment is dispatched, and the optimizer's step is recorded while
        # it runs (``_fused.backward_end``)
        _fused.backward_end()


_warned_create_graph = False


def _warn_create_graph():
    """torch's warning, once a process, for ``backward(create_graph=True)``."""
    global _warned_create_graph
    _warned_create_graph = True
    warnings.warn(
        "Using backward() with create_graph=True will create a reference cycle between the "
        "parameter and its gradient which can cause a memory leak. We recommend using "
        "autograd.grad when creating the graph to avoid this. If you have to use this "
        "function, make sure to reset the .grad fields of your parameters to None after use "
        "to break the cycle and avoid the leak.", UserWarning, stacklevel=3)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """The gradients of ``outputs`` w.r.t. ``inputs``, as a tuple (no ``.grad`` is touched).

    ``is_grads_batched``: each ``grad_outputs`` tensor has a leading batch dimension, and each
    result stacks the gradients of its rows (torch vmaps the backward; here it runs once a
    row, with the graph kept until the last)."""
    Tensor = graph.tensor_class()
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_list(outputs)
    if type(inputs) is dict:
        # (a dict of inputs: the gradients come back as a dict with its keys)
        return dict(zip(inputs.keys(), grad(
            outputs, list(inputs.values()), grad_outputs, retain_graph, create_graph,
            only_inputs, allow_unused, is_grads_batched, materialize_grads)))
    if isinstance(inputs, collections.abc.Mapping):
        raise TypeError(f"`inputs` argument to `grad()` must be a dict, not "
                        f"{type(inputs).__name__}. Other Mapping types are not supported.")
    inputs_l = _as_list(inputs)
    if not inputs_l:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to "
                      "True). To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", FutureWarning, stacklevel=2)
    grad_outputs = _as_list(grad_outputs) or [None] * len(outputs)
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _batched_grad(outputs, inputs_l, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    if any(isinstance(t, graph.GradientEdge) for t in outputs):
        raise NotImplementedError("autograd.grad: a GradientEdge as an output is not supported "
                                  "by torchlike; pass the output tensor itself")
    grads = _make_grads(outputs, grad_outputs, create_graph)
    _check_counts(outputs, grads)
    _check_inputs(inputs_l, "grad")
    edges = [isinstance(t, graph.GradientEdge) for t in inputs_l]
    roots = [t._edge() for t in outputs]
    points = [(t.node, t.output_nr, None) if e else t._edge() + (t,)
              for t, e in zip(inputs_l, edges)]
    res = run_backward(roots, grads, retain_graph, create_graph, inputs=points, capture=True)
    out = []
    for idx, (t, g) in enumerate(zip(inputs_l, res)):
        if g is None:
            if materialize_grads:
                if edges[idx]:
                    raise RuntimeError("materialize_grads cannot be used when the given input "
                                       "is a GradientEdge")
                z = Tensor._make(jnp.zeros(t._d.shape, t._d.dtype))
                out.append(z.requires_grad_() if create_graph else z)
                continue
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {idx} appears to not have been used in "
                    f"the graph. Set allow_unused=True if this is the desired behavior.")
            out.append(None)
        else:
            g = flip_conj(g, create_graph)
            out.append(g if create_graph else Tensor._make(g))
    return tuple(out)



_STACK = [None]     # torchlike.stack, bound by torchlike/__init__.py (autograd imports nothing
                    # above it)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """``grad`` with ``is_grads_batched=True``: one backward per row of the grad outputs,
    stacked."""
    stack = _STACK[0]
    for i, (out, g) in enumerate(zip(outputs, grad_outputs)):
        if g is not None and tuple(g.shape[1:]) != tuple(out.shape):
            raise RuntimeError(
                f"If `is_grads_batched=True`, we interpret the first dimension of each "
                f"grad_output as the batch dimension. The sizes of the remaining dimensions are "
                f"expected to match the shape of corresponding output, but a mismatch was "
                f"detected: grad_output[{i}] has a shape of {g.shape[1:]} and output[{i}] has a "
                f"shape of {out.shape}. If you only want some tensors in `grad_output` to be "
                f"considered batched, consider using vmap.")
    if any(g is None for g in grad_outputs):
        raise RuntimeError("autograd.grad with is_grads_batched=True needs a grad_outputs "
                           "tensor for each output (its first dimension is the batch)")
    sizes = {int(g.shape[0]) if g.dim() else None for g in grad_outputs}
    if len(sizes) != 1 or None in sizes:
        raise RuntimeError("autograd.grad with is_grads_batched=True: every grad_outputs "
                           "tensor needs the same batch size as its first dimension")
    n = sizes.pop()
    rows = [grad(outputs, inputs, [g[b] for g in grad_outputs],
                 retain_graph=True if b < n - 1 else retain_graph, create_graph=create_graph,
                 allow_unused=allow_unused, materialize_grads=materialize_grads)
            for b in range(n)]
    return tuple(None if col[0] is None else stack(list(col)) for col in zip(*rows))


from . import gradcheck as _gradcheck_module  # noqa: E402
_gradcheck_module.bind(grad)
# torch.autograd.gradcheck is the function (the submodule stays importable by its path)
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402,F401

from .._lazy import lazy_submodules as _lazy  # noqa: E402

# torch.autograd.functional / profiler / forward_ad on first use
__getattr__ = _lazy(__name__, {"functional", "profiler", "forward_ad"})

from .grad_mode import is_multithreading_enabled, set_multithreading_enabled  # noqa: E402,F401
