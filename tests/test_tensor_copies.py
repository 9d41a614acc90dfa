"""``copy.copy``, ``copy.deepcopy`` and ``pickle`` of tensors, parameters and modules against
torch: what shares storage afterwards (a shallow copy is a new tensor over the same storage;
tensors deep-copied together keep sharing their copied storage, views included), and what
history, ``requires_grad`` and ``.grad`` the copies have."""
from __future__ import annotations

import copy
import pickle

import pytest

from oracle import same_as_torch


def _module_with_view_buffer(m):
    class M(m.nn.Module):
        def __init__(self):
            super().__init__()
            base = m.tril(m.ones(4, 4))
            self.register_buffer("a", base)
            self.register_buffer("mask", base.view(1, 1, 4, 4))     # (minGPT's causal mask)
    mod = copy.deepcopy(M())
    mod.a[0, 1] = 7
    return mod.mask[0, 0, 0, 1], mod.mask.shape


def _shallow(m, make, write=True):
    t = make(m)
    c = copy.copy(t)
    if write:
        with m.no_grad():
            c.add_(1)
    return t, c, type(c).__name__, c.requires_grad, c.is_leaf, c.grad, c is t


def _deep_together(m, make_pair, index):
    a, b = copy.deepcopy(make_pair(m))
    a[index] = 9.0
    return a, b, b.stride(), b.is_contiguous()


def _model_copy_after_backward(m):
    """An EMA or best-model copy made after a backward: torch's has no gradients."""
    model = m.nn.Linear(2, 1)
    model(m.ones(3, 2)).sum().backward()
    c = copy.deepcopy(model)
    return [p.grad for p in c.parameters()], [p.grad is None for p in model.parameters()]


COPIES = {
    "copy_shares_storage": lambda m: _shallow(m, lambda m: m.ones(2)),
    "copy_of_a_leaf_needing_grad": lambda m: _shallow(
        m, lambda m: _with_grad(m.ones(2, requires_grad=True)), write=False),
    "copy_of_a_non_leaf_is_a_leaf": lambda m: _shallow(
        m, lambda m: m.ones(2, requires_grad=True) * 2, write=False)[3:6],
    "copy_of_a_parameter": lambda m: _shallow(m, lambda m: m.nn.Parameter(m.ones(2))),
    "copy_of_a_view": lambda m: _shallow(m, lambda m: m.arange(4.)[1:3]),
    "deepcopy_keeps_a_slice_shared": lambda m: _deep_together(
        m, lambda m: (lambda t: [t, t[1:3]])(m.arange(4.)), 1),
    "deepcopy_keeps_a_transpose_shared": lambda m: _deep_together(
        m, lambda m: (lambda t: (t, t.t()))(m.arange(6.).reshape(2, 3)), (0, 1)),
    "deepcopy_view_first": lambda m: _deep_together(
        m, lambda m: (lambda t: (t.view(2, 2), t))(m.arange(4.)), (0, 1))[:2],
    "deepcopy_module_view_buffer": _module_with_view_buffer,
    "deepcopy_of_a_non_leaf_raises": lambda m: copy.deepcopy(m.ones(2, requires_grad=True) * 2),
    "deepcopy_of_a_parameter_drops_grad": lambda m: (lambda c: (c.grad, c.requires_grad, c))(
        copy.deepcopy(_with_grad(m.nn.Parameter(m.ones(2))))),
    "deepcopy_of_a_model_after_backward": _model_copy_after_backward,
    "deepcopy_keeps_grad": lambda m: (lambda c: (c.grad, c.requires_grad))(
        copy.deepcopy(_with_grad(m.ones(2, requires_grad=True)))),
    "deepcopy_of_data_is_writable": lambda m: _deepcopy_then_write(m, lambda m, p: p.data),
    "deepcopy_of_data_slice_is_writable": lambda m: _deepcopy_then_write(
        m, lambda m, p: p.data[1:]),
    "deepcopy_of_detached_view": lambda m: _deepcopy_then_write(m, lambda m, p: p.detach()[::2]),
    "deepcopy_of_no_grad_view": lambda m: _deepcopy_then_write(m, _no_grad_view),
    "deepcopy_of_no_grad_view_under_no_grad": lambda m: _deepcopy_then_write(
        m, _no_grad_view, write_no_grad=True),
    "pickle_round_trip": lambda m: (lambda r: (r, r.requires_grad, type(r).__name__))(
        pickle.loads(pickle.dumps(m.nn.Parameter(m.arange(3.))))),
}


def _no_grad_view(m, p):
    with m.no_grad():
        return p[1:]


def _deepcopy_then_write(m, view_of, write_no_grad=False):
    """A deep copy of a view of a parameter (torch_optimizer's
    ``copy.deepcopy(p.data)`` momentum buffer) written in place: it is a plain tensor over the
    copied storage, writable in grad mode, its version its own."""
    p = m.nn.Parameter(m.arange(4.))
    v = view_of(m, p)
    c = copy.deepcopy(v)
    before = (c.requires_grad, c.is_leaf, c._base is None, c._version, c.grad_fn)
    if write_no_grad:
        with m.no_grad():
            c.add_(1)
    else:
        c.add_(1)
    c.mul_(m.ones(c.shape, requires_grad=True))
    return before, c, c._version, c.grad_fn is None, p, v._version, p._version, c.stride()


def _with_grad(t):
    t.grad = t.detach() * 3
    return t


@pytest.mark.parametrize("name", COPIES)
def test_copies_as_torch(name):
    same_as_torch(COPIES[name])
