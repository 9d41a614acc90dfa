"""torch.nn.utils.prune against torch 2.13: masks, parameter/buffer names, hooks, forward and
gradients, repeated pruning, global pruning, remove, and the input checks."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.utils.prune as TP

import torchlike as tl
import torchlike.nn.utils.prune as LP

RNG = np.random.default_rng(0)
W = RNG.standard_normal((6, 5)).astype(np.float32)
B = RNG.standard_normal(6).astype(np.float32)
CW = RNG.standard_normal((4, 3, 3, 3)).astype(np.float32)
X = RNG.standard_normal((2, 5)).astype(np.float32)
MASK = (RNG.random((6, 5)) > 0.5).astype(np.float32)


def _linear(m):
    lin = m.nn.Linear(5, 6)
    with m.no_grad():
        lin.weight.copy_(m.tensor(W))
        lin.bias.copy_(m.tensor(B))
    return lin


def _conv(m):
    conv = m.nn.Conv2d(3, 4, 3)
    with m.no_grad():
        conv.weight.copy_(m.tensor(CW))
    return conv


def _apply(m, P, steps, module_fn=_linear):
    mod = module_fn(m)
    for name, kw in steps:
        if name == "custom_from_mask":
            kw = dict(mask=m.tensor(MASK))
        if "importance" in kw:
            kw = dict(kw)
            kw.pop("importance")
            kw["importance_scores"] = m.tensor(-np.arange(30, dtype=np.float32).reshape(6, 5))
        getattr(P, name)(mod, "weight", **kw)
    return mod


STEPS = {
    "identity": [("identity", {})],
    "l1_float": [("l1_unstructured", {"amount": 0.3})],
    "l1_int": [("l1_unstructured", {"amount": 7})],
    "l1_zero": [("l1_unstructured", {"amount": 0})],
    "l1_importance": [("l1_unstructured", {"amount": 0.5, "importance": True})],
    "ln2_rows": [("ln_structured", {"amount": 2, "n": 2, "dim": 0})],
    "ln1_cols": [("ln_structured", {"amount": 0.4, "n": 1, "dim": -1})],
    "lninf": [("ln_structured", {"amount": 1, "n": float("inf"), "dim": 1})],
    "custom": [("custom_from_mask", {})],
    "l1_then_ln": [("l1_unstructured", {"amount": 0.3}),
                   ("ln_structured", {"amount": 1, "n": 2, "dim": 0})],
    "custom_then_l1": [("custom_from_mask", {}), ("l1_unstructured", {"amount": 5})],
    "three": [("l1_unstructured", {"amount": 3}), ("identity", {}),
              ("ln_structured", {"amount": 0.5, "n": 1, "dim": 1})],
}


def _state(mod):
    return ([n for n, _ in mod.named_parameters()], [n for n, _ in mod.named_buffers()],
            sorted(mod.state_dict().keys()),
            [type(h).__name__ for h in mod._forward_pre_hooks.values()])


@pytest.mark.parametrize("case", list(STEPS))
def test_masks_names_forward_and_grads(case):
    mt = _apply(torch, TP, STEPS[case])
    ml = _apply(tl, LP, STEPS[case])
    assert _state(ml) == _state(mt)
    np.testing.assert_array_equal(ml.weight_mask.numpy(), mt.weight_mask.numpy())
    assert ml.weight_mask.dtype.name == str(mt.weight_mask.dtype).split(".")[1]
    np.testing.assert_allclose(ml.weight.detach().numpy(), mt.weight.detach().numpy())
    yt, yl = mt(torch.tensor(X)), ml(tl.tensor(X))
    np.testing.assert_allclose(yl.detach().numpy(), yt.detach().numpy(), rtol=1e-6, atol=1e-6)
    yt.pow(2).sum().backward()
    yl.pow(2).sum().backward()
    np.testing.assert_allclose(ml.weight_orig.grad.numpy(), mt.weight_orig.grad.numpy(),
                               rtol=1e-5, atol=1e-6)
    assert LP.is_pruned(ml) and TP.is_pruned(mt)
    if len(STEPS[case]) > 1:
        hl = next(iter(ml._forward_pre_hooks.values()))
        ht = next(iter(mt._forward_pre_hooks.values()))
        assert [type(h).__name__ for h in hl] == [type(h).__name__ for h in ht]


@pytest.mark.parametrize("case", ["l1_float", "l1_then_ln", "custom"])
def test_remove(case):
    res = []
    for m, P in ((torch, TP), (tl, LP)):
        mod = _apply(m, P, STEPS[case])
        P.remove(mod, "weight")
        res.append((_state(mod), P.is_pruned(mod), type(mod.weight).__name__,
                    mod.weight.requires_grad, mod.weight.detach().numpy().copy()))
        with pytest.raises(ValueError, match="Parameter 'weight' of module .* has to be pruned "
                                             "before pruning can be removed"):
            P.remove(mod, "weight")
    assert res[0][:4] == res[1][:4]
    np.testing.assert_array_equal(res[1][4], res[0][4])


def test_hook_recomputes_after_orig_changes():
    res = []
    for m, P in ((torch, TP), (tl, LP)):
        mod = _apply(m, P, STEPS["l1_float"])
        with m.no_grad():
            mod.weight_orig.mul_(3)
        mod(m.tensor(X))
        res.append(mod.weight.detach().numpy().copy())
    np.testing.assert_allclose(res[1], res[0])


def test_conv_structured():
    res = []
    for m, P in ((torch, TP), (tl, LP)):
        conv = _conv(m)
        P.ln_structured(conv, "weight", amount=0.5, n=2, dim=0)
        P.ln_structured(conv, "weight", amount=1, n=1, dim=1)
        res.append(conv.weight_mask.numpy())
    np.testing.assert_array_equal(res[1], res[0])


def test_global_unstructured():
    res = []
    for m, P in ((torch, TP), (tl, LP)):
        net = m.nn.Sequential(_linear(m), m.nn.ReLU(), _conv(m))
        P.l1_unstructured(net[0], "weight", amount=3)
        params = [(net[0], "weight"), (net[0], "bias"), (net[2], "weight")]
        P.global_unstructured(params, pruning_method=P.L1Unstructured, amount=0.4)
        res.append([net[0].weight_mask.numpy(), net[0].bias_mask.numpy(),
                    net[2].weight_mask.numpy(), _state(net)])
        with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE supported'):
            P.global_unstructured(params, pruning_method=P.LnStructured, amount=1, n=2, dim=0)
    for a, b in zip(res[1][:3], res[0][:3]):
        np.testing.assert_array_equal(a, b)
    assert res[1][3] == res[0][3]


@pytest.mark.parametrize("amount", [0.25, 9])
def test_random_unstructured_counts(amount):
    tl.manual_seed(0)
    mod = _linear(tl)
    LP.random_unstructured(mod, "weight", amount=amount)
    want = amount if isinstance(amount, int) else round(amount * 30)
    assert int((mod.weight_mask == 0).sum()) == want
    assert _state(mod) == _state(TP.random_unstructured(_linear(torch), "weight", amount))


def test_random_structured_channels():
    tl.manual_seed(0)
    conv = _conv(tl)
    LP.random_structured(conv, "weight", amount=2, dim=0)
    kept = conv.weight_mask.sum(dim=(1, 2, 3)).numpy()
    assert sorted(kept.tolist()) == [0, 0, 27, 27]


def test_method_objects_and_prune():
    t = RNG.standard_normal((3, 4)).astype(np.float32)
    res = []
    for m, P in ((torch, TP), (tl, LP)):
        meth = P.L1Unstructured(amount=0.5)
        res.append(meth.prune(m.tensor(t)).numpy())
        assert P.LnStructured(0.5, 2, dim=0).compute_mask(
            m.tensor(t), m.ones(3, 4)).shape == (3, 4)
    np.testing.assert_array_equal(res[1], res[0])


@pytest.mark.parametrize("bad", [
    (lambda P, mod: P.l1_unstructured(mod, "weight", amount=1.5), ValueError,
     r"amount=1.5 should either be a float in the range \[0, 1\] or a non-negative integer"),
    (lambda P, mod: P.l1_unstructured(mod, "weight", amount=-1), ValueError,
     "amount=-1 should either be a float"),
    (lambda P, mod: P.l1_unstructured(mod, "weight", amount="a"), TypeError,
     "Invalid type for amount: a. Must be int or float."),
    (lambda P, mod: P.l1_unstructured(mod, "weight", amount=31), ValueError,
     "amount=31 should be smaller than the number of parameters to prune=30"),
    (lambda P, mod: P.ln_structured(mod, "bias", amount=1, n=2, dim=0), ValueError,
     "Structured pruning can only be applied to multidimensional tensors. Found tensor of "
     "shape"),
    (lambda P, mod: P.ln_structured(mod, "weight", amount=1, n=2, dim=2), IndexError,
     "Invalid index 2 for tensor of size"),
])
def test_errors_and_rollback(bad):
    fn, exc, msg = bad
    states = []
    for m, P in ((torch, TP), (tl, LP)):
        mod = _linear(m)
        with pytest.raises(exc, match=msg):
            fn(P, mod)
        # a failed pruning puts the parameter back (registered anew, so last)
        states.append(_state(mod))
        assert not P.is_pruned(mod)
    assert states[0] == states[1]
