"""Module full backward hooks, as torch's ``torch.utils.hooks.BackwardHook``.

The module's tensor inputs and outputs that require grad pass through an identity op
(``BackwardHookFunctionBackward``). The post-hook of the outputs' node sees ``grad_output`` (and
runs the backward pre-hooks, which may replace it); the post-hook of the inputs' node sees
``grad_input`` and runs the full backward hooks, which may replace it.
"""
from __future__ import annotations

import os
import sys
import warnings

import jax.numpy as jnp

from ..._registry import apply, defop
from ..._tensor import Tensor
from ...autograd import grad_mode as _gm
from ...autograd.function import view_output


@defop("backward_hook_identity", grad_name="BackwardHookFunctionBackward", saves=False)
def _identity(*xs):
    return tuple(xs) if len(xs) != 1 else xs[0]


_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _user_stacklevel():
    """The ``stacklevel`` naming the first line outside torchlike (the ``backward()`` call)."""
    level, f = 2, sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith(_ROOT):
        level, f = level + 1, f.f_back
    return level


def _checked(originals, values):
    """torch's checks of what a hook function gives back for its node's gradients (it runs
    as a hook named ``hook``): a tensor (or None) of the gradient's size and type."""
    from ..._dtype import legacy_name
    for orig, new in zip(originals, values):
        if new is None or orig is None:
            continue
        if not isinstance(new, Tensor):
            raise TypeError(f"expected Variable, but hook returned '{type(new).__name__}'")
        if tuple(new.shape) != tuple(orig.shape):
            raise RuntimeError("hook 'hook' has changed the size of value")
        if new.dtype != orig.dtype:
            raise RuntimeError(f"hook 'hook' has changed the type of value (was "
                               f"torch.{legacy_name(orig.dtype)}Tensor got "
                               f"torch.{legacy_name(new.dtype)}Tensor)")
    return values


class BackwardHook:
    def __init__(self, module, user_hooks, user_pre_hooks):
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        res = [None] * size
        for idx, val in zip(indices, values):
            res[idx] = val
        return tuple(res)

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[idx] for idx in indices)

    def _apply_on_tensors(self, fn, args):
        idx = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
        if not (idx and _gm._state.grad_enabled):
            return args, None
        new = apply(_identity, *[args[i] for i in idx])
        if not isinstance(new, tuple):
            new = (new,)
        fn(new[0].grad_fn)
        out = list(args)
        # torch's BackwardHookFunction returns its tensors as they are: each output is a view
        # of its input, which may not be written in place with grad (with several tensors, the
        # rule of a function returning several views)
        several = sum(1 for a in args if isinstance(a, Tensor)) > 1
        for i, v in zip(idx, new):
            view_output[0](v, args[i], "BackwardHookFunctionBackward" if several else None)
            out[i] = v
        return tuple(out), idx

    def setup_input_hook(self, args):
        def fn(grad_fn):
            def hook(grad_input, _):
                if self.grad_outputs is None:
                    return None
                res = list(self._pack_with_none(self.input_tensors_index, grad_input,
                                                self.n_inputs))
                # torch routes every tensor input through its hook function: inputs that do not
                # require grad get zero gradients there
                for i, (shape, dt) in self._other_inputs.items():
                    res[i] = Tensor._make(jnp.zeros(shape, dt))
                res = tuple(res)
                for h in self.user_hooks:
                    out = h(self.module, res, self.grad_outputs)
                    if out is None:
                        continue
                    if len(out) != len(res):
                        raise RuntimeError("Backward hook returned an invalid number of "
                                           f"grad_input, got {len(out)}, but expected "
                                           f"{len(res)}")
                    res = out
                self.grad_outputs = None
                return _checked(grad_input, self._unpack_none(self.input_tensors_index, res))
            grad_fn.register_hook(hook)

        res, idx = self._apply_on_tensors(fn, args)
        # torch's wrapped inputs are outputs of a custom Function: modifying one in place in
        # forward raises (checked by check_inputs_unmodified once forward returns)
        self._wrapped = [] if idx is None else [(res[i], res[i]._version) for i in idx]
        self._other_inputs = {i: (tuple(a.shape), a._d.dtype) for i, a in enumerate(args)
                              if isinstance(a, Tensor) and not a.requires_grad}
        self.n_inputs = len(args)
        self.input_tensors_index = idx
        return res

    def check_inputs_unmodified(self):
        """torch's error for an in-place write to a hooked input (its BackwardHookFunction's
        output, a view created inside a custom Function)."""
        for k, (t, version) in enumerate(getattr(self, "_wrapped", ())):
            if t._version != version:
                if len(self._wrapped) == 1:
                    raise RuntimeError(
                        f"Output {k} of BackwardHookFunction is a view and is being modified "
                        "inplace. This view was created inside a custom Function (or because an "
                        "input was returned as-is) and the autograd logic to handle view+inplace "
                        "would override the custom backward associated with the custom "
                        "Function, leading to incorrect gradients. This behavior is forbidden. "
                        "You can fix this by cloning the output of the custom Function.")
                raise RuntimeError(
                    f"Output {k} of BackwardHookFunction is a view and is being modified "
                    "inplace. This view is the output of a function that returns multiple "
                    "views. Such functions do not allow the output views to be modified "
                    "inplace. You should replace the inplace operation by an out-of-place one.")

    def setup_output_hook(self, args):
        def fn(grad_fn):
            def hook(_grad_in, grad_output):
                self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output,
                                                         self.n_outputs)
                if self.user_pre_hooks:
                    expected = len(self.grad_outputs)
                    for h in self.user_pre_hooks:
                        r = h(self.module, self.grad_outputs)
                        if r is None:
                            continue
                        if len(r) != expected:
                            raise RuntimeError("Backward pre hook returned an invalid number of "
                                               f"grad_output, got {len(r)}, but expected "
                                               f"{expected}")
                        self.grad_outputs = r
                local = self.grad_outputs
                if self.input_tensors_index is None:
                    warnings.warn("Full backward hook is firing when gradients are computed with "
                                  "respect to module outputs since no inputs require gradients. "
                                  "See https://docs.pytorch.org/docs/main/generated/torch.nn."
                                  "Module.html#torch.nn.Module.register_full_backward_hook for "
                                  "more details.", stacklevel=_user_stacklevel())
                    grad_inputs = self._pack_with_none([], [], self.n_inputs)
                    for h in self.user_hooks:
                        r = h(self.module, grad_inputs, self.grad_outputs)
                        if r is not None and not (isinstance(r, tuple)
                                                  and all(el is None for el in r)):
                            raise RuntimeError("Backward hook for Modules where no input "
                                               "requires gradient should always return None or "
                                               "None for all gradients.")
                    self.grad_outputs = None
                return _checked(grad_output, tuple(local[i] for i in self.output_tensors_index))
            grad_fn.register_hook(hook)

        is_tuple = isinstance(args, tuple)
        if not is_tuple:
            args = (args,)
        res, idx = self._apply_on_tensors(fn, args)
        self.n_outputs = len(args)
        self.output_tensors_index = idx
        return res if is_tuple else res[0]
