"""Tutorial-style programs (torch.func on models, ...) swept against live torch.

torch runs first: where it raises, torchlike must raise the same class with the same message;
where it returns, torchlike must return the same values, dtypes and shapes.
"""
from __future__ import annotations

import pytest

from oracle import same_as_torch


def _det_init(m, model, scale=0.5):
    with m.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(m.sin(m.arange(p.numel(), dtype=m.float32) + i).reshape(p.shape) * scale)
    return model


# ============================================================ 1. torch.func on a model

def _func_outputs(m):
    from importlib import import_module
    F = import_module(m.__name__ + ".func")
    x = m.tensor([1., 2.], requires_grad=True)
    w = m.tensor([3., 4.], requires_grad=True)
    xd = x.detach()
    model = _det_init(m, m.nn.Linear(2, 1))
    p = {k: v.detach() for k, v in model.named_parameters()}
    outs = {
        "grad_constant": F.grad(lambda a: (a * 2).sum())(x),
        "grad_of_captured": F.grad(lambda a: (a * w).sum())(x),
        "grad_of_detached_input": F.grad(lambda a: (a * a).sum())(xd),
        "grad_and_value": F.grad_and_value(lambda a: (a * 3).sum())(x),
        "vmap_plain": F.vmap(lambda a: a * 2)(xd),
        "vmap_captured": F.vmap(lambda a: a * w)(xd),
        "vmap_captured_detached": F.vmap(lambda a: a * w.detach())(xd),
        "jacrev_captured_detached": F.jacrev(lambda a: a * w.detach())(xd),
        "jacrev_captured": F.jacrev(lambda a: a * w)(xd),
        "functional_call_detached_params": F.functional_call(model, p, (xd,)),
        "vmap_functional_call": F.vmap(lambda pp, a: F.functional_call(model, pp, (a,)),
                                       in_dims=(None, 0))(p, xd.reshape(2, 1).expand(2, 2)),
        "grad_functional_call": F.grad(
            lambda pp: F.functional_call(model, pp, (xd,)).sum())(p)["weight"],
        "grad_and_value_functional_call": F.grad_and_value(
            lambda pp: F.functional_call(model, pp, (xd,)).sum())(p),
        "vmap_two_outputs": F.vmap(lambda a: (a, a.sum() * w))(xd),
        "grad_cut_by_detach": F.grad(lambda a: (a.detach() * w).sum() + a.sum())(xd),
        "grad_times_zero": F.grad(lambda a: (a * a * w * 0).sum())(xd),
    }
    return outs


def _flat_tensors(v):
    if isinstance(v, dict):
        return [t for k in sorted(v) for t in _flat_tensors(v[k])]
    if isinstance(v, (tuple, list)):
        return [t for x in v for t in _flat_tensors(x)]
    return [v]


_FUNC_CASES = [
    "grad_constant", "grad_of_captured", "grad_of_detached_input", "grad_and_value",
    "vmap_plain", "vmap_captured", "vmap_captured_detached", "jacrev_captured_detached",
    "jacrev_captured", "functional_call_detached_params", "vmap_functional_call",
    "grad_functional_call", "grad_and_value_functional_call", "vmap_two_outputs",
    "grad_cut_by_detach", "grad_times_zero"]


@pytest.mark.parametrize("name", _FUNC_CASES)
def test_transform_outputs_require_grad_where_they_depend_on_it(name):
    """An output of a torch.func transform requires grad where it depends, in the graph's
    sense, on a tensor that requires grad (an argument or a captured one); constants,
    detached captures and parameters replaced by ``functional_call`` do not."""
    def f(m):
        ts = _flat_tensors(_func_outputs(m)[name])
        return tuple(ts) + tuple(t.requires_grad for t in ts)
    same_as_torch(f, atol=1e-6, rtol=1e-6)
