"""A root's views are held weakly (``torchlike._storage.AliasSet``): a write through the root
reaches the views alive, dead views cost nothing, and the registry of a root viewed again and
again stays bounded."""
import gc

import torchlike
from torchlike import _storage


def _registry(t):
    return t.__dict__.get("_aliases")


def test_live_views_are_seen_and_dead_ones_are_not():
    x = torchlike.zeros(4)
    a, b = x[:2], x[2:]
    reg = _registry(x)
    assert bool(reg) and len(reg) == 2 and set(map(id, reg)) == {id(a), id(b)}
    del a
    gc.collect()
    assert len(reg) == 1 and list(reg)[0] is b
    x.add_(1)                       # (the write reaches the live view)
    assert b.tolist() == [1.0, 1.0]
    del b
    gc.collect()
    assert not reg and list(reg) == []


def test_a_root_viewed_again_and_again_keeps_a_bounded_registry():
    x = torchlike.arange(10.)
    keep = x[1:3]
    for i in range(5000):
        v = x[i % 8:i % 8 + 2]
        assert v.tolist() == [float(i % 8), float(i % 8 + 1)]
    del v
    reg = _registry(x)
    assert len(reg.refs) <= 64          # (dead entries pruned as it grows)
    assert list(reg) == [keep]
    x.mul_(2)
    assert keep.tolist() == [2.0, 4.0]


def test_a_set_built_from_views_and_a_rebound_tensor():
    x = torchlike.zeros(3)
    v = x[1:]
    s = _storage.AliasSet([v, v])       # (one entry per tensor)
    assert len(s) == 1 and list(s) == [v]
    y = torchlike.ones(2)
    v.set_(y)                           # (v leaves x's registry: it reads y's storage)
    assert all(u is not v for u in (_registry(x) or ()))
    x.add_(5)
    assert v.tolist() == [1.0, 1.0]
