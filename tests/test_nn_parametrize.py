"""nn.utils.parametrize / parametrizations / legacy spectral_norm against torch: state_dict
keys, values, gradients, assignment through right_inverse, caching, removal and errors."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike
from oracle import assert_close

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4)).astype(np.float32)


def _pair(make):
    torch.manual_seed(0)
    t = make(torch)
    l = make(torchlike)
    l.load_state_dict({k: torchlike.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    return t, l


class _Sym:
    @staticmethod
    def make(m):
        class Symmetric(m.nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).transpose(-1, -2)

            def right_inverse(self, A):
                return A.triu()
        return Symmetric


def _grads(m, mod, x):
    xt = m.tensor(x, requires_grad=True)
    y = mod(xt)
    (y * y).sum().backward()
    return y, xt.grad


def test_register_parametrization_as_torch():
    def make(m):
        lin = m.nn.Linear(4, 4)
        m.nn.utils.parametrize.register_parametrization(lin, "weight", _Sym.make(m)())
        return lin
    t, l = _pair(make)
    assert list(l.state_dict()) == list(t.state_dict()) == [
        "bias", "parametrizations.weight.original"]
    assert type(l).__name__ == type(t).__name__ == "ParametrizedLinear"
    assert repr(l) == repr(t)
    P = torchlike.nn.utils.parametrize
    assert P.is_parametrized(l) and P.is_parametrized(l, "weight")
    assert not P.is_parametrized(l, "bias")
    assert P.type_before_parametrizations(l) is torchlike.nn.Linear
    assert_close(l.weight, t.weight)
    ty, tg = _grads(torch, t, X)
    ly, lg = _grads(torchlike, l, X)
    assert_close(ly, ty)
    assert_close(lg, tg)
    assert_close(l.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad)
    # assignment goes through right_inverse
    A = rng.standard_normal((4, 4)).astype(np.float32)
    t.weight = torch.tensor(A)
    l.weight = torchlike.tensor(A)
    assert_close(l.parametrizations.weight.original, t.parametrizations.weight.original)
    assert_close(l.weight, t.weight)
    # cached: one evaluation inside the context
    with torchlike.nn.utils.parametrize.cached():
        assert l.weight is l.weight
    assert l.weight is not l.weight
    # removal keeps the parametrized value (or the original)
    for keep in (True, False):
        t2, l2 = _pair(make)
        P.remove_parametrizations(l2, "weight", leave_parametrized=keep)
        torch.nn.utils.parametrize.remove_parametrizations(t2, "weight", leave_parametrized=keep)
        assert type(l2) is torchlike.nn.Linear
        assert list(l2.state_dict()) == list(t2.state_dict())
        assert isinstance(l2.weight, torchlike.nn.Parameter)
        assert_close(l2.weight, t2.weight)


def test_chained_parametrizations_and_buffers():
    def make(m):
        class Scale(m.nn.Module):
            def forward(self, X):
                return 2 * X

            def right_inverse(self, X):
                return X / 2
        lin = m.nn.Linear(4, 4)
        lin.register_buffer("mask", m.ones(4, 4))
        P = m.nn.utils.parametrize
        P.register_parametrization(lin, "weight", _Sym.make(m)())
        P.register_parametrization(lin, "weight", Scale())
        P.register_parametrization(lin, "mask", Scale())
        return lin
    t, l = _pair(make)
    assert list(l.state_dict()) == list(t.state_dict())
    assert repr(l) == repr(t)
    assert_close(l.weight, t.weight)
    assert_close(l.mask, t.mask)
    ty, tg = _grads(torch, t, X)
    ly, lg = _grads(torchlike, l, X)
    assert_close(lg, tg)


def test_parametrize_errors():
    for m in (torch, torchlike):
        P = m.nn.utils.parametrize

        class Bad(m.nn.Module):
            def forward(self, X):
                return X[0]
        with pytest.raises(ValueError, match="may not change the shape"):
            P.register_parametrization(m.nn.Linear(2, 2), "weight", Bad())
        with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
            P.register_parametrization(m.nn.Linear(2, 2), "nope", Bad())
        with pytest.raises(ValueError, match="does not have a parametrization"):
            P.remove_parametrizations(m.nn.Linear(2, 2), "weight")

        class NoInv(m.nn.Module):
            def forward(self, X):
                return X * 1
        lin = P.register_parametrization(m.nn.Linear(2, 2), "weight", NoInv())
        with pytest.raises(RuntimeError, match="does not implement right_inverse"):
            lin.weight = m.zeros(2, 2)
        with pytest.raises(RuntimeError, match="Serialization of parametrized modules"):
            import pickle
            pickle.dumps(lin)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_parametrization(dim):
    def make(m):
        return m.nn.utils.parametrizations.weight_norm(m.nn.Linear(4, 5), dim=dim)
    t, l = _pair(make)
    assert list(l.state_dict()) == list(t.state_dict()) == [
        "bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    assert_close(l.weight, t.weight)
    ty, tg = _grads(torch, t, X)
    ly, lg = _grads(torchlike, l, X)
    assert_close(ly, ty)
    assert_close(lg, tg)
    for k in ("original0", "original1"):
        assert_close(getattr(l.parametrizations.weight, k).grad,
                     getattr(t.parametrizations.weight, k).grad)


def test_weight_norm_loads_the_legacy_keys():
    old = torch.nn.utils.weight_norm(torch.nn.Linear(4, 5))
    sd = {k: torchlike.tensor(v.detach().numpy()) for k, v in old.state_dict().items()}
    new_t = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(4, 5))
    new_t.load_state_dict(old.state_dict())
    new_l = torchlike.nn.utils.parametrizations.weight_norm(torchlike.nn.Linear(4, 5))
    new_l.load_state_dict(sd)
    assert_close(new_l.weight, new_t.weight)


@pytest.mark.parametrize("omap", ["householder", None])
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5)])
def test_orthogonal_without_trivialization_starts_from_the_weights_reflectors(shape, omap):
    """``use_trivialization=False``: the weight is stored as its QR reflectors (``geqrf``, R's
    diagonal made signs), so the parametrized weight, the stored original and an assigned
    orthogonal matrix's reflectors are torch's (a square weight's default map, the matrix
    exponential, refuses the assignment, as torch's does)."""
    n, k = shape
    w = rng.standard_normal(shape).astype(np.float32)
    q = np.linalg.qr(rng.standard_normal((max(shape), max(shape))))[0][:n, :k].astype(np.float32)
    res = []
    for m in (torch, torchlike):
        lin = m.nn.Linear(k, n, bias=False)
        lin.weight = m.nn.Parameter(m.tensor(w))
        m.nn.utils.parametrizations.orthogonal(lin, orthogonal_map=omap,
                                               use_trivialization=False)
        first = (lin.weight.detach().clone(),
                 lin.parametrizations.weight.original.detach().clone())
        try:
            with m.no_grad():
                lin.weight = m.tensor(q)
        except NotImplementedError as e:
            res.append(first + (str(e),))
            continue
        res.append(first + (lin.parametrizations.weight.original.detach(),
                            lin.weight.detach()))
    assert len(res[1]) == len(res[0]) == (3 if n == k and omap is None else 4)
    for got, want in zip(res[1], res[0]):
        if isinstance(want, str):
            assert got == want
        else:
            assert_close(got, want, atol=1e-5)


@pytest.mark.parametrize("make_mod", [lambda m: m.nn.Linear(4, 5),
                                      lambda m: m.nn.Conv2d(2, 3, 3),
                                      lambda m: m.nn.ConvTranspose2d(2, 3, 3)],
                         ids=["Linear", "Conv2d", "ConvTranspose2d"])
def test_spectral_norm_parametrization(make_mod):
    def make(m):
        return m.nn.utils.parametrizations.spectral_norm(make_mod(m))
    t, l = _pair(make)          # copies torch's _u/_v
    assert list(l.state_dict()) == list(t.state_dict())
    for mode in ("train", "eval"):
        getattr(t, mode)()
        getattr(l, mode)()
        assert_close(l.weight, t.weight, atol=1e-5)
        assert_close(l.parametrizations.weight[0]._u, t.parametrizations.weight[0]._u,
                     atol=1e-5)
    w_t = torch.linalg.matrix_norm(t.weight.detach().flatten(1), 2)
    w_l = torchlike.linalg.matrix_norm(l.weight.detach().flatten(1), 2)
    assert_close(w_l, w_t, atol=1e-4)


@pytest.mark.parametrize("shape,omap", [((4, 4), None), ((4, 4), "cayley"), ((3, 5), None),
                                        ((5, 3), "matrix_exp"), ((5, 3), "householder")])
def test_orthogonal(shape, omap):
    n, k = shape
    w = rng.standard_normal(shape).astype(np.float32)
    res = []
    for m in (torch, torchlike):
        lin = m.nn.Linear(k, n, bias=False)
        lin.weight = m.nn.Parameter(m.tensor(w))
        m.nn.utils.parametrizations.orthogonal(lin, orthogonal_map=omap)
        res.append(lin)
    t, l = res
    assert list(l.state_dict()) == list(t.state_dict())
    assert repr(l) == repr(t)
    lw = l.weight
    g = lw.mT @ lw if n >= k else lw @ lw.mT
    assert_close(g, torchlike.eye(min(n, k)), atol=1e-5)
    if n == k or omap == "householder" or (omap is None and n != k):
        # torch's start does not depend on its random completion here: same weight
        assert_close(lw, t.weight, atol=1e-5)
    x = rng.standard_normal((3, k)).astype(np.float32)
    ty, tg = _grads(torch, t, x)
    ly, lg = _grads(torchlike, l, x)
    assert tuple(ly.shape) == tuple(ty.shape)
    if n == k or omap == "householder" or (omap is None and n != k):
        assert_close(lg, tg, atol=1e-4)


@pytest.mark.parametrize("make_mod", [lambda m: m.nn.Linear(4, 5),
                                      lambda m: m.nn.ConvTranspose2d(2, 3, 3)],
                         ids=["Linear", "ConvTranspose2d"])
def test_legacy_spectral_norm(make_mod):
    def make(m):
        return m.nn.utils.spectral_norm(make_mod(m))
    t, l = _pair(make)          # copies torch's weight_u/weight_v
    assert list(l.state_dict()) == list(t.state_dict())
    x = rng.standard_normal((2, 4) if isinstance(t, torch.nn.Linear) else (1, 2, 4, 4)
                            ).astype(np.float32)
    for mode in ("train", "eval", "train"):
        getattr(t, mode)()
        getattr(l, mode)()
        ty, tg = _grads(torch, t, x)
        ly, lg = _grads(torchlike, l, x)
        assert_close(ly, ty, atol=1e-5)
        assert_close(lg, tg, atol=1e-4)
        assert_close(l.weight_u, t.weight_u, atol=1e-5)
        assert_close(l.weight_orig.grad, t.weight_orig.grad, atol=1e-4)
    torch.nn.utils.remove_spectral_norm(t)
    torchlike.nn.utils.remove_spectral_norm(l)
    assert list(l.state_dict()) == list(t.state_dict())
    assert_close(l.weight, t.weight, atol=1e-5)
    for m in (torch, torchlike):
        with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
            m.nn.utils.remove_spectral_norm(m.nn.Linear(2, 2))
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
            m.nn.utils.spectral_norm(m.nn.utils.spectral_norm(m.nn.Linear(2, 2)))


def test_fuse_conv_and_linear_with_batchnorm():
    img = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)

    def make(m):
        conv, bn = m.nn.Conv2d(3, 4, 3), m.nn.BatchNorm2d(4)
        bn.running_mean.normal_()
        bn.running_var.uniform_(0.5, 2.0)
        return m.nn.Sequential(conv, bn).eval()
    t, l = _pair(make)
    tf = torch.nn.utils.fuse_conv_bn_eval(t[0], t[1])
    lf = torchlike.nn.utils.fuse_conv_bn_eval(l[0], l[1])
    assert_close(lf(torchlike.tensor(img)), tf(torch.tensor(img)), atol=1e-5)
    assert isinstance(lf.weight, torchlike.nn.Parameter)

    def make_lin(m):
        lin, bn = m.nn.Linear(4, 5), m.nn.BatchNorm1d(5)
        bn.running_var.uniform_(0.5, 2.0)
        return m.nn.Sequential(lin, bn).eval()
    t, l = _pair(make_lin)
    tf = torch.nn.utils.fuse_linear_bn_eval(t[0], t[1])
    lf = torchlike.nn.utils.fuse_linear_bn_eval(l[0], l[1])
    assert_close(lf(torchlike.tensor(X)), tf(torch.tensor(X)), atol=1e-5)
    for m in (torch, torchlike):
        with pytest.raises(AssertionError, match="Fusion only for eval"):
            m.nn.utils.fuse_linear_bn_eval(m.nn.Linear(2, 2), m.nn.BatchNorm1d(2))


def test_removing_a_parametrization_swaps_the_originals_storage_as_torch():
    """``remove_parametrizations(leave_parametrized=True)`` gives the original parameter the
    parametrized value with torch's ``set_``: the same Parameter object, and a state_dict taken
    before keeps the old original values."""
    def run(m):
        class Sym(m.nn.Module):
            def forward(self, X):
                return X.triu() + X.triu(1).transpose(-1, -2)
        lin = m.nn.Linear(2, 2)
        with m.no_grad():
            lin.weight.copy_(m.tensor([[1., 2.], [3., 4.]]))
        w0 = lin.weight
        m.nn.utils.parametrize.register_parametrization(lin, "weight", Sym())
        sd = lin.state_dict()
        m.nn.utils.parametrize.remove_parametrizations(lin, "weight", leave_parametrized=True)
        return (sd["parametrizations.weight.original"].tolist(), lin.weight.tolist(),
                lin.weight is w0, type(lin.weight).__name__)
    assert run(torchlike) == run(torch)
