"""In-place writes inside ``torch.func.vmap``, against torch: a batched value written into a
tensor the vmap does not batch raises (torch's batching rules), and the tensors torch batches
(``*_like`` factories and ``new_*`` methods of a batched tensor, random draws with
randomness='different') take such writes. Before, a write into a tensor made inside the
function silently became a batched value."""
import pytest
import torch

import torchlike

from oracle import both_outcomes

pytestmark = pytest.mark.filterwarnings("ignore:There is a performance drop")

def _run(m, body, randomness="error", out_dims=0):
    x = m.arange(6.0).reshape(2, 3)
    return m.func.vmap(lambda v: body(m, v), randomness=randomness, out_dims=out_dims)(x)


# writes torch refuses: (name, body); torch's message is the generic in-place one for these
_REFUSED_GENERIC = {
    "copy_": lambda m, v: m.zeros(3).copy_(v),
    "setitem": lambda m, v: (lambda o: (o.__setitem__(0, v[1]), o)[1])(m.zeros(3)),
    "sub_": lambda m, v: m.zeros(3).sub_(v),
    "masked_fill_": lambda m, v: m.zeros(3).masked_fill_(v > 2, 1.0),
    "copy_ into a view": lambda m, v: (lambda o: (o[:2].copy_(v[:2]), o)[1])(m.zeros(3)),
    "div_": lambda m, v: m.ones(3).div_(v + 1),
}

# refused in torch too, each worded by its own batching rule (the class is the same)
_REFUSED_OTHER_WORDS = {
    "add_": lambda m, v: m.zeros(3).add_(v),
    "+=": lambda m, v: (lambda o: o.__iadd__(v))(m.zeros(3)),
    "fill_": lambda m, v: m.empty(3).fill_(v.sum()),
    "index_add_": lambda m, v: m.zeros(3).index_add_(0, m.tensor([0, 1]), v[:2]),
    "clamp_": lambda m, v: m.zeros(3).clamp_(min=v),
    "addcmul_": lambda m, v: m.zeros(3).addcmul_(v, v),
    "lerp_": lambda m, v: m.zeros(3).lerp_(v, 0.5),
    "out=": lambda m, v: (lambda o: m.add(o, v, out=o))(m.zeros(3)),
}

# writes torch takes: the target is batched (an input, a clone, a *_like or new_* of one)
_ALLOWED = {
    "clone add_": lambda m, v: v.clone().add_(1),
    "zeros_like add_": lambda m, v: m.zeros_like(v).add_(v),
    "ones_like add_": lambda m, v: m.ones_like(v).add_(v),
    "full_like add_": lambda m, v: m.full_like(v, 2.0).add_(v),
    "empty_like copy_": lambda m, v: m.empty_like(v).copy_(v),
    "zeros_like int add_": lambda m, v: m.zeros_like(v, dtype=m.int64).add_(v.long()),
    "zeros_like of a 0-dim": lambda m, v: m.zeros_like(v.sum()).add_(v.sum()),
    "new_zeros add_": lambda m, v: v.new_zeros(3).add_(v),
    "new_ones mul_": lambda m, v: v.new_ones(3).mul_(v),
    "new_full add_": lambda m, v: v.new_full((3,), 2.0).add_(v),
    "new_empty copy_": lambda m, v: v.new_empty(3).copy_(v),
    "new_zeros wider, a slice written": lambda m, v: (lambda o: (o[:3].add_(v), o)[1])(
        v.new_zeros(5)),
    "unbatched into unbatched": lambda m, v: m.zeros(3).add_(1) + v,
    "input itself": lambda m, v: v.mul_(2),
    "zeros_like setitem": lambda m, v: (lambda o: (o.__setitem__(1, v[0]), o)[1])(
        m.zeros_like(v)),
}


@pytest.mark.parametrize("name", sorted(_REFUSED_GENERIC))
def test_a_batched_write_into_an_unbatched_tensor_raises_as_torch(name):
    with pytest.raises(RuntimeError, match=r"vmap: inplace arithmetic\(self"):
        _run(torch, _REFUSED_GENERIC[name])
    # (both raise, the same class and message)
    assert both_outcomes(lambda m: _run(m, _REFUSED_GENERIC[name]), msg="exact") is None


@pytest.mark.parametrize("name", sorted(_REFUSED_OTHER_WORDS))
def test_other_refused_writes_raise_runtime_error(name):
    """torch's per-op batching rules word these differently (DIFFERENCES.md): the class is
    torch's, the message the generic one."""
    body = _REFUSED_OTHER_WORDS[name]
    with pytest.raises(RuntimeError):
        _run(torch, body)
    with pytest.raises(RuntimeError, match=r"vmap: inplace arithmetic"):
        _run(torchlike, body)


@pytest.mark.parametrize("name", sorted(_ALLOWED))
def test_writes_into_batched_tensors_match_torch(name):
    ours, theirs = both_outcomes(lambda m: _run(m, _ALLOWED[name]).tolist())
    assert ours == theirs


def test_a_like_factory_result_is_batched_so_out_dims_none_refuses_it():
    with pytest.raises(ValueError, match="can not return a BatchedTensor"):
        _run(torch, lambda m, v: m.zeros_like(v), out_dims=None)
    assert both_outcomes(lambda m: _run(m, lambda m, v: m.zeros_like(v), out_dims=None),
                         msg="exact") is None


def test_random_like_follows_randomness():
    """A random draw is batched with randomness='different' (the write is taken) and not with
    'same' (refused), as in torch."""
    def body(m, v):
        return m.rand_like(v).mul_(0).add_(v)
    for m in (torch, torchlike):
        assert _run(m, body, randomness="different").tolist() == [[0.0, 1.0, 2.0],
                                                                  [3.0, 4.0, 5.0]]
        with pytest.raises(RuntimeError):
            _run(m, body, randomness="same")


def test_a_captured_tensor_is_left_unchanged_after_the_refused_write():
    for m in (torch, torchlike):
        g = m.zeros(3)
        with pytest.raises(RuntimeError):
            m.func.vmap(lambda v: g.copy_(v))(m.ones(2, 3))
        assert g.tolist() == [0.0, 0.0, 0.0]


def test_nested_vmap_inner_write_into_the_outer_batched_tensor():
    """A tensor batched by the outer vmap only, written with a value the inner one batches:
    refused in both."""
    def outer(m):
        def f(a):
            o = a.clone()
            return m.func.vmap(lambda b: o.copy_(b))(m.ones(4, 3))
        return m.func.vmap(f)(m.ones(2, 3))
    for m in (torch, torchlike):
        with pytest.raises(RuntimeError):
            outer(m)
