"""Tensor subclasses against torch: ops on an instance of a subclass give instances of it (torch's
default ``__torch_function__`` converts results), a Parameter's give Tensors, ``as_subclass`` is
an alias in the graph, ``Tensor._make_subclass`` a detached one."""
from __future__ import annotations

import pytest

from oracle import same_as_torch


def _classes(m):
    class Sub(m.Tensor):
        pass

    class MyParam(m.nn.Parameter):
        pass

    return Sub, MyParam


RESULTS = {
    "arithmetic": lambda m, s: s + 1,
    "reverse_arithmetic": lambda m, s: m.zeros(2) + s,
    "reduction": lambda m, s: s.sum(),
    "index": lambda m, s: s[0],
    "cat": lambda m, s: m.cat([s, s]),
    "multi_output": lambda m, s: s.max(0),
    "view": lambda m, s: s.view(2, 1),
    "clone": lambda m, s: s.clone(),
    "to": lambda m, s: s.to(m.float64),
    "detach": lambda m, s: s.detach(),
    "in_place_returns_self": lambda m, s: s.add_(1),
}


@pytest.mark.parametrize("name", RESULTS)
def test_ops_on_a_subclass_give_the_subclass(name):
    def run(m):
        Sub, _ = _classes(m)
        out = RESULTS[name](m, m.ones(2).as_subclass(Sub))
        outs = out if isinstance(out, tuple) else (out,)
        return [type(o).__name__ for o in outs], [o.tolist() for o in outs]
    same_as_torch(run)


def test_ops_on_parameters_give_tensors():
    def run(m):
        _, MyParam = _classes(m)
        p, q = m.nn.Parameter(m.ones(2)), MyParam(m.ones(2))
        return [type(t).__name__ for t in (p * 2, p.detach(), p[0], p.clone(), q * 2, q)], \
            q.requires_grad
    same_as_torch(run)


def test_as_subclass_is_an_alias_in_the_graph():
    def run(m):
        Sub, _ = _classes(m)
        w = m.ones(2, requires_grad=True)
        s = w.as_subclass(Sub)
        (s * 2).sum().backward()
        y = w * 3
        t = y.as_subclass(Sub)
        t.add_(1)
        return (type(s).__name__, s.is_leaf, type(s.grad_fn).__name__, s._base is w, w.grad,
                y, t._version, y._version)
    same_as_torch(run)


def test_make_subclass_and_bad_classes_as_torch():
    def run(m):
        Sub, _ = _classes(m)
        z = m.Tensor._make_subclass(Sub, m.ones(2), True)
        return type(z).__name__, z.requires_grad, z.is_leaf
    same_as_torch(run)
    same_as_torch(lambda m: m.ones(1).as_subclass(int))


def test_factories_from_a_subclass_give_plain_tensors():
    """DIFFERENCES.md: torch's conversion also covers factories given a subclass instance
    (``ones_like``, ``new_zeros``); torchlike's give plain Tensors, and a result's grad_fn is its
    op's node where torch's is the conversion's AliasBackward0."""
    import torchlike
    Sub, _ = _classes(torchlike)
    s = torchlike.ones(2, requires_grad=True).as_subclass(Sub)
    assert type(torchlike.ones_like(s)) is torchlike.Tensor
    assert type(s.new_zeros(2)) is torchlike.Tensor
    assert type((s * 2).grad_fn).__name__ == "MulBackward0"


def test_a_subclass_prints_its_name():
    def run(m):
        Sub, _ = _classes(m)
        s = m.ones(2).as_subclass(Sub)
        return repr(s), str(s * 2), repr(m.nn.Parameter(m.ones(2))), repr(m.ones(2))
    same_as_torch(run)
