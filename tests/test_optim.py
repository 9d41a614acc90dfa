"""torchlike.optim against torch.optim: same params, same gradient sequence, 50 steps."""
import copy

import jax
import numpy as np
import pytest
import torch

import torchlike
from torchlike.optim import optimizer as _opt_mod

SHAPES = [(3, 4), (4,), (2, 1, 3)]
STEPS = 50
R = np.random.default_rng(1234)
P0 = [R.standard_normal(s).astype(np.float32) for s in SHAPES]
GRADS = [[R.standard_normal(s).astype(np.float32) for s in SHAPES] for _ in range(STEPS)]

CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("Adam", dict(lr=0.01, amsgrad=True, maximize=True, weight_decay=0.05)),
    ("Adam", dict(lr=0.01, weight_decay=0.05, decoupled_weight_decay=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.01, maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1, alpha=0.9)),
    ("RMSprop", dict(lr=0.01, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adagrad", dict(lr=0.1, maximize=True, eps=1e-6)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.1)),
    ("Adadelta", dict(maximize=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("Adamax", dict(maximize=True)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(maximize=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(maximize=True, betas=(0.9, 0.9))),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=10, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, t0=0, maximize=True)),
    ("Adafactor", dict()),
    ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, eps=(1e-20, 1e-2), d=1.5,
                       weight_decay=0.1)),
    ("Adafactor", dict(maximize=True, lr=0.1)),
]


def _ids(c):
    return c[0] + "-" + "-".join(f"{k}={v}" for k, v in c[1].items())


def _np(t):
    # always a copy: torchlike.tensor(ndarray) may alias the numpy buffer (see final report)
    if isinstance(t, torch.Tensor):
        return t.detach().numpy().copy()
    return np.array(t.detach())


def make(m, name, kwargs, groups=None):
    ps = [m.tensor(a.copy(), requires_grad=True) for a in P0]
    cls = getattr(m.optim, name)
    if groups is None:
        opt = cls(ps, **kwargs)
    else:
        opt = cls([{"params": ps[:1], **groups}, {"params": ps[1:]}], **kwargs)
    return ps, opt


def run(m, ps, opt, steps):
    for t in steps:
        for p, g in zip(ps, GRADS[t]):
            p.grad = m.tensor(g)
        opt.step()


def assert_params(lps, tps, rtol=2e-5, atol=2e-6):
    for i, (a, b) in enumerate(zip(lps, tps)):
        np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, err_msg=f"param {i}")


def assert_state(lopt, topt, rtol=2e-5, atol=2e-6):
    lsd, tsd = lopt.state_dict(), topt.state_dict()
    assert lsd["param_groups"] == tsd["param_groups"]
    assert list(lsd["state"]) == list(tsd["state"])
    for k in tsd["state"]:
        ls, ts = lsd["state"][k], tsd["state"][k]
        assert list(ls) == list(ts), f"state keys {list(ls)} != torch {list(ts)}"
        for name in ts:
            a, b = ls[name], ts[name]
            if isinstance(b, torch.Tensor):
                assert isinstance(a, torchlike.Tensor), name
                assert str(a.dtype) == str(b.dtype), f"{name}: {a.dtype} != {b.dtype}"
                assert tuple(a.shape) == tuple(b.shape), name
                np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, err_msg=name)
            else:
                assert a == b, name


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_50_steps_match_torch(case):
    name, kw = case
    tps, topt = make(torch, name, kw)
    lps, lopt = make(torchlike, name, kw)
    run(torch, tps, topt, range(STEPS))
    run(torchlike, lps, lopt, range(STEPS))
    assert_params(lps, tps)
    assert_state(lopt, topt)
    for p in lps:
        assert p.requires_grad and p.grad_fn is None and p.is_leaf


@pytest.mark.parametrize("case", CASES,
                         ids=_ids)
def test_state_dict_round_trip_and_resume(case):
    """25 steps, state_dict, a fresh optimizer loads it, 25 more == 50 straight in torch."""
    name, kw = case
    tps, topt = make(torch, name, kw)
    run(torch, tps, topt, range(STEPS))
    lps, lopt = make(torchlike, name, kw)
    run(torchlike, lps, lopt, range(25))
    sd = copy.deepcopy(lopt.state_dict())
    lps2 = [torchlike.tensor(_np(p), requires_grad=True) for p in lps]
    lopt2 = getattr(torchlike.optim, name)(lps2, **kw)
    lopt2.load_state_dict(sd)
    run(torchlike, lps2, lopt2, range(25, STEPS))
    assert_params(lps2, tps)
    assert_state(lopt2, topt)


@pytest.mark.parametrize("name,kw", [("Adam", dict(lr=0.01, amsgrad=True)),
                                     ("SGD", dict(lr=0.1, momentum=0.9)),
                                     ("NAdam", dict()), ("RMSprop", dict(centered=True,
                                                                         momentum=0.5))])
def test_load_torch_state_dict(name, kw):
    """A state_dict made by real torch loads into torchlike's optimizer and continues."""
    tps, topt = make(torch, name, kw)
    run(torch, tps, topt, range(20))
    tsd = topt.state_dict()
    conv = {"state": {k: {n: (torchlike.tensor(v.numpy().copy())
                              if isinstance(v, torch.Tensor) else v)
                          for n, v in s.items()} for k, s in tsd["state"].items()},
            "param_groups": copy.deepcopy(tsd["param_groups"])}
    lps = [torchlike.tensor(_np(p), requires_grad=True) for p in tps]
    lopt = getattr(torchlike.optim, name)(lps, **kw)
    lopt.load_state_dict(conv)
    run(torch, tps, topt, range(20, 40))
    run(torchlike, lps, lopt, range(20, 40))
    assert_params(lps, tps)
    assert_state(lopt, topt)


def test_param_groups_per_group_options():
    for name, kw, gkw in [("SGD", dict(lr=0.1, momentum=0.9), dict(lr=0.01, momentum=0.5)),
                          ("Adam", dict(lr=0.01), dict(lr=0.1, betas=(0.5, 0.9),
                                                       amsgrad=True))]:
        tps, topt = make(torch, name, kw, groups=gkw)
        lps, lopt = make(torchlike, name, kw, groups=gkw)
        run(torch, tps, topt, range(30))
        run(torchlike, lps, lopt, range(30))
        assert_params(lps, tps)
        assert_state(lopt, topt)


def test_lr_change_matches_and_does_not_retrace(monkeypatch):
    from torchlike import _tiers
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 0)   # jit's cache from the first step
    tps, topt = make(torch, "Adam", dict(lr=0.01))
    lps, lopt = make(torchlike, "Adam", dict(lr=0.01))
    run(torch, tps, topt, range(3))
    run(torchlike, lps, lopt, range(3))
    fn = next(f for (k, fl), f in _opt_mod._JIT_CACHE.items()
              if k is torchlike.optim.Adam._update and dict(fl) == dict(
                  amsgrad=False, maximize=False, wd=False, decoupled=False))
    n = fn._cache_size()
    for t in range(3, 20):
        for o in (topt, lopt):
            for g in o.param_groups:
                g["lr"] = 0.01 * (0.9 ** t)
                g["betas"] = (0.9 - 0.01 * t, 0.999)
        run(torch, tps, topt, [t])
        run(torchlike, lps, lopt, [t])
    assert fn._cache_size() == n
    assert_params(lps, tps)


def test_add_param_group_and_missing_grads():
    tps, topt = make(torch, "SGD", dict(lr=0.1, momentum=0.9))
    lps, lopt = make(torchlike, "SGD", dict(lr=0.1, momentum=0.9))
    textra = torch.tensor(P0[0].copy(), requires_grad=True)
    lextra = torchlike.tensor(P0[0].copy(), requires_grad=True)
    topt.add_param_group({"params": textra, "lr": 0.3})
    lopt.add_param_group({"params": lextra, "lr": 0.3})
    for t in range(10):
        for m, ps, extra, opt in ((torch, tps, textra, topt), (torchlike, lps, lextra, lopt)):
            for i, (p, g) in enumerate(zip(ps, GRADS[t])):
                p.grad = None if (i == 1 and t % 3 == 0) else m.tensor(g)
            extra.grad = m.tensor(GRADS[t][0] * 2)
            opt.step()
    assert_params(lps + [lextra], tps + [textra])
    assert_state(lopt, topt)
    with pytest.raises(ValueError, match="more than one parameter group"):
        lopt.add_param_group({"params": [lps[0]]})


def test_zero_grad():
    lps, lopt = make(torchlike, "SGD", dict(lr=0.1))
    for p, g in zip(lps, GRADS[0]):
        p.grad = torchlike.tensor(g)
    lopt.zero_grad(set_to_none=False)
    assert all(np.all(_np(p.grad) == 0) for p in lps)
    lopt.zero_grad()
    assert all(p.grad is None for p in lps)


def test_step_does_not_record_and_bumps_version():
    lps, lopt = make(torchlike, "Adam", dict(lr=0.1))
    v0 = [p._version for p in lps]
    run(torchlike, lps, lopt, [0])
    assert all(p._version > v for p, v in zip(lps, v0))
    assert all(p.grad_fn is None for p in lps)


def test_closure_and_real_training():
    """A small regression problem trained with backward(): same loss curve as torch."""
    X = R.standard_normal((32, 5)).astype(np.float32)
    w_true = R.standard_normal((5, 1)).astype(np.float32)
    Y = X @ w_true
    W0 = R.standard_normal((5, 1)).astype(np.float32) * 0.1
    losses = {}
    for m in (torch, torchlike):
        w = m.tensor(W0.copy(), requires_grad=True)
        x, y = m.tensor(X), m.tensor(Y)
        opt = m.optim.Adam([w], lr=0.05)

        def closure():
            opt.zero_grad()
            loss = ((x @ w - y) ** 2).mean()
            loss.backward()
            return loss
        losses[m.__name__] = [float(opt.step(closure)) for _ in range(30)]
    np.testing.assert_allclose(losses["torchlike"], losses["torch"], rtol=1e-4, atol=1e-6)
    assert losses["torchlike"][-1] < losses["torchlike"][0]


def test_constructor_errors_like_torch():
    p = [torchlike.tensor([1.0], requires_grad=True)]
    for m, ps in ((torch, [torch.tensor([1.0], requires_grad=True)]), (torchlike, p)):
        with pytest.raises(ValueError, match="Invalid learning rate"):
            m.optim.SGD(ps, lr=-1)
        with pytest.raises(ValueError, match="Nesterov momentum requires"):
            m.optim.SGD(ps, lr=0.1, nesterov=True)
        with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
            m.optim.Adam(ps, betas=(0.9, 1.0))
        with pytest.raises(ValueError, match="empty parameter list"):
            m.optim.Adam([])
        with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
            m.optim.Adam(ps[0])
        with pytest.raises(TypeError, match="can only optimize Tensors"):
            m.optim.Adam([1.0])
        with pytest.raises(ValueError, match="non-leaf"):
            m.optim.Adam([ps[0] * 2])


def test_float64_params():
    for name, kw in [("Adam", dict(lr=0.01, amsgrad=True)), ("RMSprop", dict(centered=True))]:
        res = {}
        for m in (torch, torchlike):
            ps = [m.tensor(a.astype(np.float64), requires_grad=True) for a in P0]
            opt = getattr(m.optim, name)(ps, **kw)
            for t in range(20):
                for p, g in zip(ps, GRADS[t]):
                    p.grad = m.tensor(g.astype(np.float64))
                opt.step()
            res[m.__name__] = ps
            assert str(ps[0].dtype) == "torch.float64"
        assert_params(res["torchlike"], res["torch"], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,kw", [("Adam", dict(lr=0.01, amsgrad=True)),
                                     ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
                                     ("RMSprop", dict(centered=True, momentum=0.3)),
                                     ("NAdam", dict()), ("Adagrad", dict())])
def test_complex_params_match_torch(name, kw):
    """torch treats complex parameters as pairs of reals (view_as_real)."""
    rs = np.random.default_rng(5)
    c0 = (rs.standard_normal((3, 2)) + 1j * rs.standard_normal((3, 2))).astype(np.complex64)
    gs = [(rs.standard_normal((3, 2)) + 1j * rs.standard_normal((3, 2))).astype(np.complex64)
          for _ in range(20)]
    res = {}
    for m in (torch, torchlike):
        p = m.tensor(c0.copy(), requires_grad=True)
        r = m.tensor(P0[1].copy(), requires_grad=True)
        opt = getattr(m.optim, name)([p, r], **kw)
        for t, g in enumerate(gs):
            p.grad = m.tensor(g)
            r.grad = m.tensor(GRADS[t][1])
            opt.step()
        res[m.__name__] = (p, r, opt)
    lp, lr_, lopt = res["torchlike"]
    tp, tr, topt = res["torch"]
    assert str(lp.dtype) == "torch.complex64"
    assert_params([lp, lr_], [tp, tr])
    assert_state(lopt, topt)


@pytest.mark.parametrize("kw", [dict(max_iter=4), dict(line_search_fn="strong_wolfe", max_iter=4),
                                dict(history_size=3, max_iter=5, lr=0.5),
                                dict(line_search_fn="strong_wolfe", history_size=2,
                                     max_iter=5)])
def test_lbfgs_matches_torch(kw):
    """L-BFGS on a small least-squares problem with a closure (real backward passes)."""
    rs = np.random.default_rng(9)
    A = rs.standard_normal((40, 30)).astype(np.float32)
    b = rs.standard_normal((40, 1)).astype(np.float32)
    w0 = rs.standard_normal((30, 1)).astype(np.float32)
    res = {}
    for m in (torch, torchlike):
        w = m.tensor(w0.copy(), requires_grad=True)
        a, bb = m.tensor(A), m.tensor(b)
        opt = m.optim.LBFGS([w], **kw)

        def closure():
            opt.zero_grad()
            loss = ((a @ w - bb) ** 2).sum() + (w ** 4).sum() * 0.1
            loss.backward()
            return loss
        losses = [float(opt.step(closure).detach()) for _ in range(3)]
        res[m.__name__] = (losses, w, opt.state_dict())
    np.testing.assert_allclose(res["torchlike"][0], res["torch"][0], rtol=1e-4, atol=1e-5)
    assert_params([res["torchlike"][1]], [res["torch"][1]], rtol=1e-4, atol=1e-5)
    ls, ts = res["torchlike"][2]["state"][0], res["torch"][2]["state"][0]
    assert set(ls) == set(ts)
    assert ls["n_iter"] == ts["n_iter"] and ls["func_evals"] == ts["func_evals"]
    assert len(ls["old_dirs"]) == len(ts["old_dirs"])


def test_differentiable_flag_refused():
    """DIFFERENCES.md: torch can differentiate through step(); torchlike refuses the flag."""
    tp = torch.tensor([1.0], requires_grad=True)
    torch.optim.SGD([tp], lr=0.1, differentiable=True)           # accepted by torch
    lp = torchlike.tensor([1.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        torchlike.optim.SGD([lp], lr=0.1, differentiable=True)
    torchlike.optim.Adam([lp], foreach=True, fused=False, capturable=True)  # accepted, no-ops


def test_tensor_lr_with_scheduler():
    res = {}
    for m in (torch, torchlike):
        ps, opt = make(m, "Adam", dict(lr=m.tensor(0.01)))
        sched = m.optim.lr_scheduler.StepLR(opt, 3, 0.5)
        for t in range(10):
            for p, g in zip(ps, GRADS[t]):
                p.grad = m.tensor(g)
            opt.step()
            sched.step()
        res[m.__name__] = (ps, float(sched.get_last_lr()[0]))
        assert isinstance(opt.param_groups[0]["lr"], m.Tensor)
    assert_params(res["torchlike"][0], res["torch"][0])
    assert res["torchlike"][1] == pytest.approx(res["torch"][1], rel=1e-7)


def test_deepcopy_hooks_and_named_params():
    res = {}
    for m in (torch, torchlike):
        ps = [m.tensor(a.copy(), requires_grad=True) for a in P0]
        opt = m.optim.SGD([("a", ps[0]), ("b", ps[1]), ("c", ps[2])], lr=0.1, momentum=0.9)
        calls = []
        opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
        h = opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
        run(m, ps, opt, range(3))
        h.remove()
        run(m, ps, opt, [3])
        clone = copy.deepcopy(opt)
        run(m, clone.param_groups[0]["params"], clone, [4])
        res[m.__name__] = (calls, opt.state_dict(), clone.param_groups[0]["params"])
    assert res["torchlike"][0] == res["torch"][0]
    assert res["torchlike"][1]["param_groups"] == res["torch"][1]["param_groups"]
    assert res["torchlike"][1]["param_groups"][0]["param_names"] == ["a", "b", "c"]
    assert_params(res["torchlike"][2], res["torch"][2])


def test_load_state_dict_errors_like_torch():
    for m in (torch, torchlike):
        ps, opt = make(m, "Adam", dict(lr=0.1))
        run(m, ps, opt, [0])
        sd = opt.state_dict()
        other = m.optim.Adam([{"params": ps[:1]}, {"params": ps[1:]}])
        with pytest.raises(ValueError, match="different number of parameter groups"):
            other.load_state_dict(sd)
        small = m.optim.Adam(ps[:2])
        with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
            small.load_state_dict(sd)
        # options come from the state_dict, the parameters stay the optimizer's own
        fresh = m.optim.Adam(ps, lr=0.5, amsgrad=True)
        fresh.load_state_dict(sd)
        assert fresh.param_groups[0]["lr"] == 0.1 and not fresh.param_groups[0]["amsgrad"]
        assert fresh.param_groups[0]["params"][0] is ps[0]
        assert str(fresh.state[ps[0]]["step"].dtype) == "torch.float32"


@pytest.mark.parametrize("name,kw", [("SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
                                     ("Adam", dict(lr=0.01)), ("AdamW", dict(lr=0.01)),
                                     ("RMSprop", dict(lr=0.01, centered=True)),
                                     ("Adagrad", dict(lr=0.1)), ("Adadelta", dict()),
                                     ("Adamax", dict()), ("NAdam", dict()), ("RAdam", dict()),
                                     ("Rprop", dict()), ("ASGD", dict()),
                                     ("Adafactor", dict(lr=0.05))])
def test_training_an_mlp_matches_torch(name, kw):
    """Real nn modules and backward passes: the loss curve follows torch's."""
    rs = np.random.default_rng(21)
    X = rs.standard_normal((16, 3)).astype(np.float32)
    Y = np.tanh(X @ rs.standard_normal((3, 2))).astype(np.float32)
    init = {k: v.detach().numpy().copy() for k, v in
            torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(),
                                torch.nn.Linear(8, 2)).state_dict().items()}
    curves = {}
    for m in (torch, torchlike):
        model = m.nn.Sequential(m.nn.Linear(3, 8), m.nn.Tanh(), m.nn.Linear(8, 2))
        model.load_state_dict({k: m.tensor(v.copy()) for k, v in init.items()})
        opt = getattr(m.optim, name)(model.parameters(), **kw)
        x, y = m.tensor(X), m.tensor(Y)
        curve = []
        for _ in range(15):
            opt.zero_grad()
            loss = m.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            curve.append(float(loss.detach()))
        curves[m.__name__] = curve
    np.testing.assert_allclose(curves["torchlike"], curves["torch"], rtol=2e-4, atol=1e-6)


# ---------------------------------------------------------------------------- swa_utils
def _bn_net(m):
    net = m.nn.Sequential(m.nn.Linear(3, 4), m.nn.BatchNorm1d(4), m.nn.Tanh(), m.nn.Linear(4, 2))
    rs = np.random.default_rng(2)
    net.load_state_dict({k: (m.tensor(rs.standard_normal(tuple(v.shape)).astype(np.float32))
                             if v.is_floating_point() else v)
                         for k, v in net.state_dict().items()})
    return net


@pytest.mark.parametrize("how", ["swa", "ema_multi", "ema_fn", "swa_fn", "buffers"])
def test_averaged_model_matches_torch(how):
    res = {}
    for m in (torch, torchlike):
        S = m.optim.swa_utils
        net = _bn_net(m)
        kw = {"swa": {}, "ema_multi": {"multi_avg_fn": S.get_ema_multi_avg_fn(0.9)},
              "ema_fn": {"avg_fn": S.get_ema_avg_fn(0.8)}, "swa_fn": {"avg_fn": S.get_swa_avg_fn()},
              "buffers": {"use_buffers": True, "multi_avg_fn": S.get_ema_multi_avg_fn(0.7)}}[how]
        avg = S.AveragedModel(net, **kw)
        opt = m.optim.SGD(net.parameters(), lr=0.1)
        x = m.tensor(np.random.default_rng(3).standard_normal((8, 3)).astype(np.float32))
        for _ in range(6):
            opt.zero_grad()
            net(x).pow(2).mean().backward()
            opt.step()
            avg.update_parameters(net)
        avg.eval()
        res[m.__name__] = (avg.state_dict(), avg(x))
    lsd, tsd = res["torchlike"][0], res["torch"][0]
    assert list(lsd) == list(tsd)
    for k in tsd:
        assert str(lsd[k].dtype) == str(tsd[k].dtype), k
        np.testing.assert_allclose(_np(lsd[k]), _np(tsd[k]), rtol=1e-5, atol=1e-6, err_msg=k)
    np.testing.assert_allclose(_np(res["torchlike"][1]), _np(res["torch"][1]), rtol=1e-5,
                               atol=1e-6)


def test_update_bn_matches_torch():
    rs = np.random.default_rng(4)
    batches = [rs.standard_normal((5, 3)).astype(np.float32) for _ in range(4)]
    res = {}
    for m in (torch, torchlike):
        net = _bn_net(m)
        loader = [(m.tensor(b), m.tensor(0)) for b in batches]
        net.eval()
        m.optim.swa_utils.update_bn(loader, net)
        assert not net.training
        bn = net[1]
        res[m.__name__] = (bn.running_mean, bn.running_var, bn.num_batches_tracked, bn.momentum)
    for a, b in zip(res["torchlike"][:3], res["torch"][:3]):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6)
    assert res["torchlike"][3] == res["torch"][3] == 0.1


# ---------------------------------------------------------------------------- Muon
# Muon orthogonalizes each update in bfloat16 (as torch does): torchlike's Newton-Schulz
# iterations are torch's bit for bit, but an update one float32 ulp away (torch's lerp kernel
# fuses its multiply-add) can round to a neighbouring bfloat16, which moves a parameter by about
# lr * 2**-8: the tolerances below are that, over 50 steps
MUON_SHAPES = [(6, 4), (4, 6), (5, 5)]
MUON_P0 = [R.standard_normal(s).astype(np.float32) for s in MUON_SHAPES]
MUON_GRADS = [[R.standard_normal(s).astype(np.float32) for s in MUON_SHAPES]
              for _ in range(STEPS)]
MUON_CASES = [dict(), dict(lr=0.02), dict(lr=0.02, nesterov=False, weight_decay=0.0),
              dict(lr=0.01, momentum=0.5, adjust_lr_fn="match_rms_adamw"),
              dict(lr=0.01, ns_steps=3, eps=1e-3, ns_coefficients=(2.0, -1.5, 0.5))]


def _muon_run(m, kw, steps):
    ps = [m.tensor(a.copy(), requires_grad=True) for a in MUON_P0]
    opt = m.optim.Muon(ps, **kw)
    for t in steps:
        for p, g in zip(ps, MUON_GRADS[t]):
            p.grad = m.tensor(g)
        opt.step()
    return ps, opt


@pytest.mark.parametrize("kw", MUON_CASES, ids=lambda kw: "-".join(f"{k}={v}" for k, v in
                                                                     kw.items()) or "defaults")
def test_muon_50_steps_match_torch(kw):
    tps, topt = _muon_run(torch, kw, range(STEPS))
    lps, lopt = _muon_run(torchlike, kw, range(STEPS))
    tol = kw.get("lr", 1e-3) * 2 ** -6
    assert_params(lps, tps, rtol=1e-5, atol=tol)
    assert_state(lopt, topt, rtol=1e-5, atol=1e-5)
    # resumed from its state_dict half way: the same steps
    _, half = _muon_run(torchlike, kw, range(25))
    resumed = [torchlike.tensor(_np(p), requires_grad=True)
               for p in half.param_groups[0]["params"]]
    ropt = torchlike.optim.Muon(resumed, **kw)
    ropt.load_state_dict(copy.deepcopy(half.state_dict()))
    for t in range(25, STEPS):
        for p, g in zip(resumed, MUON_GRADS[t]):
            p.grad = torchlike.tensor(g)
        ropt.step()
    assert_params(resumed, tps, rtol=1e-5, atol=tol)


def test_muon_errors_and_state_as_torch():
    w = np.arange(12, dtype=np.float32).reshape(3, 4) / 10

    def mk(m, **kw):
        p = m.nn.Parameter(m.tensor(w))
        return p, m.optim.Muon([p], **kw)

    def bad_steps(m, **kw):
        # torch meets the bad option orthogonalizing the first parameter: every momentum
        # buffer is made, the first one updated
        p, o = mk(m, **kw)
        q = m.nn.Parameter(m.ones(2, 2))
        o.add_param_group({"params": [q]})
        p.grad, q.grad = m.ones(3, 4), m.ones(2, 2)
        with pytest.raises(ValueError) as e:
            o.step()
        return (str(e.value), o.state[p]["momentum_buffer"].numpy().round(6).tolist(),
                [len(o.state[x]) for x in (p, q)])

    def complex_param(m):
        p = m.nn.Parameter(m.ones(2, 2, dtype=m.complex64))
        o = m.optim.Muon([p])
        p.grad = m.ones(2, 2, dtype=m.complex64)
        o.step()

    cases = {
        "1d": lambda m: m.optim.Muon([m.nn.Parameter(m.ones(3))]),
        "3d": lambda m: m.optim.Muon([m.nn.Parameter(m.ones(2, 2, 2))]),
        "lr": lambda m: mk(m, lr=-1.0),
        "momentum": lambda m: mk(m, momentum=-1.0),
        "weight_decay": lambda m: mk(m, weight_decay=-1.0),
        "adjust_lr_fn": lambda m: mk(m, adjust_lr_fn="x"),
        "tensor_lr": lambda m: mk(m, lr=m.ones(2)),
        "complex": complex_param,
        "ns_steps": lambda m: bad_steps(m, ns_steps=100),
        "ns_coefficients": lambda m: bad_steps(m, ns_coefficients=(1.0, 2.0)),
        "repr_and_defaults": lambda m: (repr(mk(m)[1]), sorted(mk(m)[1].defaults.items())),
    }
    for name, f in cases.items():
        seen = []
        for m in (torch, torchlike):
            try:
                seen.append(("ok", f(m) if name in ("ns_steps", "ns_coefficients",
                                                   "repr_and_defaults") else None))
            except Exception as e:  # noqa: BLE001
                seen.append((type(e).__name__, str(e)))
        assert seen[1] == seen[0], name


@pytest.mark.parametrize("how", ["fused", "compiled"])
def test_muon_trains_in_fused_eager_and_compiled_steps(how):
    """A 2-layer network trained with Muon: fused eager and ``torchlike.compile`` follow
    torch's losses."""
    import contextlib

    import torchlike.eager
    rs = np.random.default_rng(5)
    w1 = (rs.standard_normal((16, 8)) * 0.3).astype(np.float32)
    w2 = (rs.standard_normal((4, 16)) * 0.3).astype(np.float32)
    x0 = rs.standard_normal((32, 8)).astype(np.float32)
    y0 = rs.integers(0, 4, 32)
    losses = []
    for m in (torch, torchlike):
        model = m.nn.Sequential(m.nn.Linear(8, 16, bias=False), m.nn.ReLU(),
                                m.nn.Linear(16, 4, bias=False))
        with m.no_grad():
            model[0].weight.copy_(m.tensor(w1))
            model[2].weight.copy_(m.tensor(w2))
        opt = m.optim.Muon(model.parameters(), lr=0.02)
        x, y = m.tensor(x0), m.tensor(y0)

        def step(x, y):
            loss = m.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss
        ctx = contextlib.nullcontext()
        if m is torchlike:
            if how == "compiled":
                step = torchlike.compile(step)
            else:
                ctx = torchlike.eager.fused()
        with ctx:
            losses.append([step(x, y).item() for _ in range(8)])
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-5, atol=1e-6)
    assert losses[0][-1] < losses[0][0]


@pytest.mark.usefixtures("strict_eager")    # (the update's own program: fused eager records it)
def test_a_steady_update_overwrites_the_buffers_only_its_tensors_hold():
    """The compiled group update takes over the buffers of the parameters and the state it
    replaces (jit donation, as a hand-written JAX step): no allocation and free per tensor and
    step. An array something else holds (a JAX handle; a detached alias, which torch updates
    in place) is never taken: the update works on a copy, and values match torch's."""
    import torchlike.interop
    from torchlike import _tiers
    w0 = R.standard_normal((5, 3)).astype(np.float32)
    tw = torch.nn.Parameter(torch.tensor(w0))
    lw = torchlike.nn.Parameter(torchlike.tensor(w0))
    topt = torch.optim.Adam([tw], lr=0.1)
    lopt = torchlike.optim.Adam([lw], lr=0.1)

    def step(m, w, opt, k):
        opt.zero_grad()
        (w * m.tensor(GRADS[k][0][:1, :1].item())).square().sum().backward()
        opt.step()
    for k in range(_tiers.INTERPRET_CALLS + 3):        # (past the interpreted first calls)
        step(torch, tw, topt, k)
        step(torchlike, lw, lopt, k)
    state = lopt.state[lw]
    where = [t._d.unsafe_buffer_pointer() for t in (lw, state["exp_avg"], state["exp_avg_sq"])]
    # (ready first: XLA may copy a donated buffer a running program is still writing)
    jax.block_until_ready([lw._d, state["exp_avg"]._d, state["exp_avg_sq"]._d])
    step(torchlike, lw, lopt, 0)
    step(torch, tw, topt, 0)
    assert [t._d.unsafe_buffer_pointer()
            for t in (lw, state["exp_avg"], state["exp_avg_sq"])] == where
    held = torchlike.interop.jax_view(lw)
    kept = np.array(held)
    alias, talias = lw.detach(), tw.detach()
    for k in range(3):
        step(torchlike, lw, lopt, k)
        step(torch, tw, topt, k)
    assert not held.is_deleted()
    np.testing.assert_array_equal(np.asarray(held), kept)
    np.testing.assert_allclose(lw.detach().numpy(), tw.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(alias.numpy(), talias.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.usefixtures("strict_eager")
def test_updates_keep_overwriting_their_buffers_after_fused_eager_ran():
    # (once fused eager ran in the process, strict calls pass through its check for pending
    # values: it must hand the update the caller's own containers, or every array looks held)
    import torchlike.eager
    from torchlike import _tiers
    with torchlike.eager.fused():
        (torchlike.ones(3) * 2).sum().item()
    w = torchlike.nn.Parameter(torchlike.tensor(P0[0]))
    opt = torchlike.optim.Adam([w], lr=0.1)
    for _ in range(_tiers.INTERPRET_CALLS + 3):
        opt.zero_grad()
        (w * 3).sum().backward()
        opt.step()
    where = w._d.unsafe_buffer_pointer()
    jax.block_until_ready(w._d)
    opt.zero_grad()
    (w * 3).sum().backward()
    opt.step()
    assert w._d.unsafe_buffer_pointer() == where


def _old_style_adam(m):
    """An optimizer written as older third-party code writes one (RAdam/AdaBound style):
    an int step in its state, deprecated add_/addcmul_/addcdiv_ signatures, out= aliasing."""
    import math

    class OldAdam(m.optim.Optimizer):
        def __init__(self, params, lr=1e-2, betas=(0.9, 0.999), eps=1e-8, amsgrad=True):
            super().__init__(params, dict(lr=lr, betas=betas, eps=eps, amsgrad=amsgrad))

        @m.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = p.grad.data
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = 0
                        state["exp_avg"] = m.zeros_like(p.data)
                        state["exp_avg_sq"] = m.zeros_like(p.data)
                        state["max_exp_avg_sq"] = m.zeros_like(p.data)
                    exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                    beta1, beta2 = group["betas"]
                    state["step"] += 1
                    exp_avg.mul_(beta1).add_(1 - beta1, grad)
                    exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)
                    m.max(state["max_exp_avg_sq"], exp_avg_sq, out=state["max_exp_avg_sq"])
                    denom = (state["max_exp_avg_sq"].sqrt()
                             / math.sqrt(1 - beta2 ** state["step"])).add_(group["eps"])
                    p.data.addcdiv_(-group["lr"] / (1 - beta1 ** state["step"]), exp_avg,
                                    denom)
    return OldAdam


def test_an_old_style_optimizer_and_its_state_dict_as_torch():
    import io
    import warnings
    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(6, 4)

    def run(m):
        m.manual_seed(0)
        net = m.nn.Linear(4, 1)
        with m.no_grad():
            net.weight.copy_(m.tensor([[0.3, -0.2, 0.1, 0.4]]))
            net.bias.fill_(0.05)
        cls = _old_style_adam(m)
        opt = cls(net.parameters())
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = net(m.tensor(x)).pow(2).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        buf = io.BytesIO()
        m.save(opt.state_dict(), buf)
        buf.seek(0)
        opt2 = cls(net.parameters())
        opt2.load_state_dict(m.load(buf))
        step = opt2.state[net.weight]["step"]          # (an int stays an int)
        opt2.zero_grad()
        net(m.tensor(x)).pow(2).mean().backward()
        opt2.step()
        return losses, type(step).__name__, step, net.weight.detach().numpy()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ours, theirs = run(torchlike), run(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)
    assert ours[1:3] == theirs[1:3] == ("int", 3)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-5)
