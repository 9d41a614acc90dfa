"""torchlike.func: torch.func (functorch) transforms on jax.

Each transform is one jax transform of the torch-style function: its Tensors wrap jax tracers
while it runs (under ``no_grad``: jax differentiates, the tape records nothing), so the function
runs once per call whatever the batch size, and every op inside compiles once per shape.
See docs/interop.md and DIFFERENCES.md for what differs from torch.
"""
from ._eager import (grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd,  # noqa: F401
                     hessian, functionalize)
from ._functional_call import (functional_call, stack_module_state,  # noqa: F401
                               replace_all_batch_norm_modules_)
from ._vmap import vmap  # noqa: F401
from ._rearrange import rearrange, debug_unwrap  # noqa: F401

vmap.__module__ = __name__

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian",
           "functionalize", "functional_call", "stack_module_state",
           "replace_all_batch_norm_modules_", "vmap", "rearrange", "debug_unwrap"]
