"""Numerical gradient checks (``torch.autograd.gradcheck`` / ``gradgradcheck``).

    >>> x = torch.randn(3, dtype=torch.float64, requires_grad=True)
    >>> torch.autograd.gradcheck(torch.sin, (x,))
    True

``gradcheck`` compares, for every differentiable output and every input that requires grad,
the Jacobian from central finite differences (``(f(x + eps) - f(x - eps)) / (2 eps)``, one
element at a time) with the one backward gives (one vector-Jacobian product per output
element), with ``allclose(analytical, numerical, rtol, atol)``. A mismatch raises
``GradcheckError`` with torch's message (the two Jacobians, rows indexed by input elements), or
returns False with ``raise_exception=False``. ``gradgradcheck`` runs the same check on the
function's gradient (``create_graph=True``) with random ``grad_outputs``.

Checks torchlike does not make: ``fast_mode`` checks the full Jacobians (the slow mode);
``check_batched_grad``, ``check_forward_ad`` and the other optional checks are accepted and not
run; complex inputs are refused.
"""
from __future__ import annotations

import warnings

import jax.numpy as jnp

from .graph import tensor_class

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError", "get_numerical_jacobian",
           "get_analytical_jacobian"]


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck`` and ``gradgradcheck`` when a check fails."""


# torchlike.autograd.grad, given by the package (``bind``): this module is imported by it
_grad = None


def bind(grad):
    global _grad
    _grad = grad


def _is_tensor(x):
    return isinstance(x, tensor_class())


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _differentiable_outputs(out):
    return tuple(o for o in _as_tuple(out) if _is_tensor(o) and o.requires_grad)


def _float_outputs(out):
    return tuple(o for o in _as_tuple(out)
                 if _is_tensor(o) and (o.is_floating_point() or o.is_complex()))


def _check_inputs(tupled_inputs):
    any_requires_grad = False
    for idx, inp in enumerate(tupled_inputs):
        if _is_tensor(inp) and inp.requires_grad:
            if inp.is_complex():
                raise NotImplementedError(
                    "gradcheck of complex inputs is not provided by torchlike; check the real "
                    "and imaginary parts as separate real inputs")
            if inp.dtype.name != "float64":
                warnings.warn(
                    f"Input #{idx} requires gradient and is not a double precision floating "
                    "point or complex. This check will likely fail if all the inputs are not of "
                    "double precision floating point or complex. ")
            any_requires_grad = True
    if not any_requires_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")


def _numerical_jacobian(func, inputs, eps):
    """``[[J_io]]``: for input ``i`` (requiring grad) and float output ``o``, the
    ``(numel(input), numel(output))`` central-difference Jacobian."""
    T = tensor_class()
    diff_idx = [i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad]
    outs = _float_outputs(func(*inputs))
    jac = []
    for i in diff_idx:
        x = inputs[i]
        flat = x.detach().reshape(-1).clone()
        cols = [[] for _ in outs]
        for j in range(flat.numel()):
            orig = flat[j].item()
            results = []
            for delta in (eps, -eps):
                pert = flat.clone()
                pert[j] = orig + delta
                args = list(inputs)
                # as torch's in-place perturbation: the input still requires grad (the
                # function may differentiate, as gradgradcheck's does)
                args[i] = pert.reshape(x.shape).requires_grad_(True)
                results.append(tuple(o.detach() for o in _float_outputs(func(*args))))
            for k, (a, b) in enumerate(zip(*results)):
                cols[k].append(((a - b) / (2 * eps)).reshape(-1)._data)
        jac.append([T._make(jnp.stack(c)) if c else o.new_zeros((0, o.numel()))
                    for c, o in zip(cols, outs)])
    return jac


def _analytical_jacobian(func, inputs):
    """The same Jacobians from backward: one ``autograd.grad`` per output element."""
    diff = [x for x in inputs if _is_tensor(x) and x.requires_grad]
    outs = _float_outputs(func(*inputs))
    jac = [[o.new_zeros((x.numel(), o.numel())) for o in outs] for x in diff]
    for k, o in enumerate(outs):
        if not o.requires_grad:
            continue
        for e in range(o.numel()):
            g = o.new_zeros((o.numel(),))
            g[e] = 1
            grads = _grad(o, diff, g.reshape(o.shape), retain_graph=True, allow_unused=True)
            for i, gi in enumerate(grads):
                if gi is not None:
                    jac[i][k][:, e] = gi.reshape(-1).to(o.dtype)
    return jac


def get_numerical_jacobian(fn, inputs, target=None, eps=1e-3, grad_out=1.0):
    """torch's deprecated helper: the numerical Jacobians, one per input requiring grad."""
    return tuple(j[0] for j in _numerical_jacobian(fn, _as_tuple(inputs), eps))


def get_analytical_jacobian(inputs, output, nondet_tol=0.0, grad_out=1.0):
    raise NotImplementedError("torch.autograd.gradcheck.get_analytical_jacobian (deprecated in "
                              "torch) is not provided by torchlike; use gradcheck")


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """True if backward's Jacobians match finite differences; else GradcheckError (or False
    with ``raise_exception=False``)."""
    tupled = _as_tuple(inputs)
    _check_inputs(tupled)
    try:
        if not check_backward_ad:
            return True
        numerical = _numerical_jacobian(func, tupled, eps)
        analytical = _analytical_jacobian(func, tupled)
        for i, (n_in, a_in) in enumerate(zip(numerical, analytical)):
            for o, (n, a) in enumerate(zip(n_in, a_in)):
                if not a.allclose(n.to(a.dtype), rtol, atol):
                    raise GradcheckError(f"Jacobian mismatch for output {o} with respect to "
                                         f"input {i},\nnumerical:{n}\nanalytical:{a}\n")
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """``gradcheck`` of the gradient of ``func`` (computed with ``create_graph=True``) w.r.t.
    the inputs and ``grad_outputs`` (random in [-1, 1) when not given)."""
    tupled = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _differentiable_outputs(func(*tupled))
        grad_outputs = tuple(o.detach().new_empty(o.shape).uniform_(-1, 1).requires_grad_()
                             for o in outs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    n_out = len(grad_outputs)

    def new_func(*args):
        input_args, gos = args[:-n_out], args[-n_out:]
        outputs = _differentiable_outputs(func(*input_args))
        diff = tuple(x for x in input_args if _is_tensor(x) and x.requires_grad)
        grads = _grad(outputs, diff, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(new_func, tupled + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, fast_mode=fast_mode, masked=masked)
