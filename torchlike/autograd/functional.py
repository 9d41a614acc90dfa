"""torch.autograd.functional: jacobian, hessian, vjp, jvp, hvp, vhp on torchlike's tape.

These follow torch's own construction (they are built on ``autograd.grad``, so ``create_graph``
and ``strict`` behave as in torch; ``jvp``/``hvp`` use the double-backward trick). With
``vectorize=True`` (and ``create_graph=False``) the Jacobian is computed by
``torchlike.func.jacrev``/``jacfwd``: one ``jax.vmap`` over the standard basis instead of one
backward pass per output element. ``vectorize=True, create_graph=True`` runs the per-row loop on
the tape (same values, differentiable).
"""
from __future__ import annotations

from .._tensor import Tensor
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]


def _tuple(x, arg_name, fn_name):
    """(was a tuple, as a tuple), with torch's TypeError for non-Tensors."""
    is_tuple = isinstance(x, tuple)
    xs = x if is_tuple else (x,)
    for i, el in enumerate(xs):
        if not isinstance(el, Tensor):
            where = (f"the value at index {i} has type {type(el)}." if is_tuple
                     else f"the given {arg_name} has type {type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but {where}")
    return is_tuple, xs


def _untuple(res, unpack):
    """Undo the tuple wrapping: ``unpack`` is one flag or (outer, inner) flags."""
    if isinstance(unpack, tuple):
        outer, inner = unpack
        if not inner:
            res = tuple(r[0] for r in res)
        if not outer:
            res = res[0]
        return res
    return res if unpack else res[0]


def _prep(inputs, create_graph, need_graph):
    out = []
    for t in inputs:
        if create_graph and t.requires_grad:
            out.append(t.view_as(t))
        else:
            out.append(t.detach().requires_grad_(bool(need_graph)))
    return tuple(out)


def _post(xs, create_graph):
    if isinstance(xs[0], Tensor):
        return xs if create_graph else tuple(t.detach() for t in xs)
    return tuple(_post(x, create_graph) for x in xs)


def _check_v(v, other, other_is_tuple):
    if len(v) != len(other):
        if other_is_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.size() != b.size():
            pre = f"Entry {i} in " if other_is_tuple else ""
            raise RuntimeError(f"{pre}v has invalid size: should be {b.size()} but got "
                               f"{a.size()}.")


_STRICT_MSGS = {
    "outputs": ("Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when "
                "running in strict mode."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of "
                    "the user-provided function. This is not allowed in strict mode."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided "
                 "function with respect to input {i} is independent of the input. This is not "
                 "allowed in strict mode. You should ensure that your function is twice "
                 "differentiable and that the jacobian depends on the inputs (this would be "
                 "violated by a linear function for example)."),
    "hessian": ("The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs."),
}


def _check_rg(xs, kind, strict):
    if not strict:
        return
    for i, t in enumerate(xs):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError(_STRICT_MSGS[kind].format(i=i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    from . import grad as _autograd_grad
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    outs, gos = [], []
    for o, g in zip(outputs, grad_outputs):
        if o is not None and o.requires_grad:
            outs.append(o)
            gos.append(g)
    if not outs:
        return (None,) * len(inputs)
    return _autograd_grad(outs, inputs, gos, allow_unused=True, create_graph=create_graph,
                          retain_graph=retain_graph)


_ZERO_MSGS = {
    "back": ("The output of the user-provided function is independent of input {i}. This is "
             "not allowed in strict mode."),
    "back_trick": ("The gradient with respect to the input is independent of entry {i} in the "
                   "grad_outputs when using the double backward trick to compute forward mode "
                   "gradients. This is not allowed in strict mode."),
    "double_back": ("The jacobian of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode."),
    "double_back_trick": ("The hessian of the user-provided function is independent of entry "
                          "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                          "prevents from using the double backward trick to replace forward "
                          "mode AD."),
}


def _zeros_for_none(grads, refs, strict, create_graph, stage):
    from .._creation import zeros_like
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_ZERO_MSGS[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               f"create_graph=True.")
        res.append(g)
    return tuple(res)


def _single_v_check(v, xs, kind):
    if v is None and (len(xs) != 1 or xs[0].nelement() != 1):
        raise RuntimeError(f"The vector v can only be None if the {kind} a single Tensor with a "
                           f"single element.")


# ------------------------------------------------------------------ vjp / jvp

def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J) as torch.autograd.functional.vjp."""
    with enable_grad():
        in_tuple, inputs = _tuple(inputs, "inputs", "vjp")
        inputs = _prep(inputs, create_graph, True)
        outputs = func(*inputs)
        out_tuple, outputs = _tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_rg(outputs, "outputs", strict)
        if v is not None:
            _, v = _tuple(v, "v", "vjp")
            v = _prep(v, create_graph, False)
            _check_v(v, outputs, out_tuple)
        else:
            _single_v_check(v, outputs, "user-provided function returns")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _grad(outputs, inputs, v, create_graph=create_graph)
        res = _zeros_for_none(res, inputs, strict, create_graph, "back")
    return (_untuple(_post(outputs, create_graph), out_tuple),
            _untuple(_post(res, create_graph), in_tuple))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v) as torch.autograd.functional.jvp (double-backward trick)."""
    from .._creation import zeros_like
    with enable_grad():
        in_tuple, inputs = _tuple(inputs, "inputs", "jvp")
        inputs = _prep(inputs, create_graph, True)
        if v is not None:
            _, v = _tuple(v, "v", "jvp")
            v = _prep(v, create_graph, False)
            _check_v(v, inputs, in_tuple)
        else:
            _single_v_check(v, inputs, "input to the user-provided function is")
        outputs = func(*inputs)
        out_tuple, outputs = _tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_rg(outputs, "outputs", strict)
        gouts = tuple(zeros_like(o, requires_grad=True) for o in outputs)
        gins = _grad(outputs, inputs, gouts, create_graph=True)
        _check_rg(gins, "grad_inputs", strict)
    with set_grad_enabled(True) if create_graph else _null():
        res = _grad(gins, gouts, v, create_graph=create_graph)
        res = _zeros_for_none(res, outputs, strict, create_graph, "back_trick")
    return (_untuple(_post(outputs, create_graph), out_tuple),
            _untuple(_post(res, create_graph), out_tuple))


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


# ------------------------------------------------------------------ jacobian / hessian

def _jacobian_vectorized(func, inputs, in_tuple, strategy):
    """Vectorised Jacobian through torchlike.func (one jax.vmap over the standard basis)."""
    from ..func import jacfwd, jacrev
    info = {}

    def f(*xs):
        out = func(*xs)
        info["out_tuple"] = isinstance(out, tuple)
        return out

    argnums = tuple(range(len(inputs)))
    tr = jacrev if strategy == "reverse-mode" else jacfwd
    jac = tr(f, argnums=argnums)(*[t.detach() for t in inputs])
    if not info["out_tuple"]:
        jac = (jac,)
    return _untuple(tuple(tuple(j) for j in jac), (info["out_tuple"], in_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs`` as torch.autograd.functional.jacobian."""
    from .._ops.join import stack
    from .._creation import zeros_like
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, '
                             '"forward-mode" tends to be more performant. Otherwise, prefer to '
                             'use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                'torch.autograd.functional.jacobian: `create_graph=True` and '
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `create_graph=False` or `strategy="reverse-mode"`.')
        if strict:
            raise RuntimeError(
                'torch.autograd.functional.jacobian: `strict=True` and '
                '`strategy="forward-mode"` are not supported together (yet). Please either '
                'set `strict=False` or `strategy="reverse-mode"`.')
        in_tuple, inputs = _tuple(inputs, "inputs", "jacobian")
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-"
                                      "reverse Hessian isonly implemented for `vectorize=True`.")
        return _jacobian_vectorized(func, inputs, in_tuple, strategy)
    with enable_grad():
        in_tuple, inputs = _tuple(inputs, "inputs", "jacobian")
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either "
                               "set `strict=False` or `vectorize=False`.")
        if vectorize and not create_graph:
            return _jacobian_vectorized(func, inputs, in_tuple, strategy)
        inputs = _prep(inputs, create_graph, True)
        outputs = func(*inputs)
        out_tuple, outputs = _tuple(outputs, "outputs of the user-provided function",
                                    "jacobian")
        _check_rg(outputs, "outputs", strict)
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for j in range(out.nelement()):
                vj = _grad((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
                for k, (g, x) in enumerate(zip(vj, inputs)):
                    if g is not None:
                        if strict and create_graph and not g.requires_grad:
                            raise RuntimeError(
                                f"The jacobian of the user-provided function is independent of "
                                f"input {i}. This is not allowed in strict mode when "
                                f"create_graph=True.")
                        rows[k].append(g)
                    else:
                        if strict:
                            raise RuntimeError(
                                f"Output {i} of the user-provided function is independent of "
                                f"input {k}. This is not allowed in strict mode.")
                        rows[k].append(zeros_like(x))
            jac.append(tuple(
                (stack(r, 0) if r else zeros_like(x).reshape((0,) + tuple(x.shape)))
                .view(tuple(out.size()) + tuple(x.size()))
                for r, x in zip(rows, inputs)))
        jac = _post(tuple(jac), create_graph)
        return _untuple(jac, (out_tuple, in_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar ``func`` at ``inputs`` (torch.autograd.functional.hessian)."""
    in_tuple, inputs = _tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    if vectorize and not create_graph and not strict:
        from ..func import jacfwd, jacrev
        argnums = tuple(range(len(inputs)))
        _hessian_output_check(func, inputs, strict)
        inner = jacrev(lambda *xs: func(*xs).reshape(()), argnums=argnums)
        outer = jacfwd if outer_jacobian_strategy == "forward-mode" else jacrev
        h = outer(inner, argnums=argnums)(*[t.detach() for t in inputs])
        return _untuple(tuple(tuple(r) for r in h), (in_tuple, in_tuple))

    def single(*xs):
        out = func(*xs)
        out_tuple, t_out = _tuple(out, "outputs of the user-provided function", "hessian")
        _check_rg(t_out, "outputs", strict)
        if out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return out.squeeze()

    def jac_func(*xs):
        if outer_jacobian_strategy == "forward-mode":
            xs = tuple(t.requires_grad_(True) for t in xs)
        j = jacobian(single, xs, create_graph=True)
        _check_rg(j, "jacobian", strict)
        return j

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _untuple(res, (in_tuple, in_tuple))


def _hessian_output_check(func, inputs, strict):
    from .grad_mode import no_grad
    with no_grad():
        out = func(*inputs)
    if isinstance(out, tuple) or not isinstance(out, Tensor):
        raise RuntimeError("The function given to hessian should return a single Tensor")
    if out.nelement() != 1:
        raise RuntimeError("The Tensor returned by the function given to hessian should "
                           "contain a single element")


# ------------------------------------------------------------------ hvp / vhp

def _scalar_fn_grad(func, inputs, v, create_graph, strict, name):
    in_tuple, inputs = _tuple(inputs, "inputs", name)
    inputs = _prep(inputs, create_graph, True)
    if v is not None:
        _, v = _tuple(v, "v", name)
        v = _prep(v, create_graph, False)
        _check_v(v, inputs, in_tuple)
    else:
        _single_v_check(v, inputs, "input to the user-provided function is")
    outputs = func(*inputs)
    out_tuple, outputs = _tuple(outputs, "outputs of the user-provided function", name)
    _check_rg(outputs, "outputs", strict)
    if out_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain "
                           f"a single element")
    jac = _grad(outputs, inputs, create_graph=True)
    _check_rg(jac, "jacobian", strict)
    return in_tuple, inputs, v, out_tuple, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H) as torch.autograd.functional.vhp."""
    with enable_grad():
        in_tuple, inputs, v, out_tuple, outputs, jac = _scalar_fn_grad(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _grad(jac, inputs, v, create_graph=create_graph)
        res = _zeros_for_none(res, inputs, strict, create_graph, "double_back")
    return (_untuple(_post(outputs, create_graph), out_tuple),
            _untuple(_post(res, create_graph), in_tuple))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v) as torch.autograd.functional.hvp (double-backward trick)."""
    from .._creation import zeros_like
    with enable_grad():
        in_tuple, inputs, v, out_tuple, outputs, jac = _scalar_fn_grad(
            func, inputs, v, create_graph, strict, "hvp")
        gjac = tuple(zeros_like(x, requires_grad=True) for x in inputs)
        dback = _grad(jac, inputs, gjac, create_graph=True)
        _check_rg(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _grad(dback, gjac, v, create_graph=create_graph)
        res = _zeros_for_none(res, inputs, strict, create_graph, "double_back_trick")
    return (_untuple(_post(outputs, create_graph), out_tuple),
            _untuple(_post(res, create_graph), in_tuple))
