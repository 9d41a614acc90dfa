"""torchlike.optim.lr_scheduler against torch's: lr (and momentum) sequences and state dicts."""
import copy
import math
import warnings

import numpy as np
import pytest
import torch

import torchlike


def _opt(m, kind="sgd"):
    ps = [m.tensor([1.0, 2.0], requires_grad=True), m.tensor([3.0], requires_grad=True)]
    groups = [{"params": ps[:1]}, {"params": ps[1:], "lr": 0.05}]
    if kind == "sgd":
        return m.optim.SGD(groups, lr=0.1, momentum=0.9)
    return m.optim.Adam(groups, lr=0.1)


def _lam(e):
    return 0.95 ** e


def _mul(e):
    return 0.9 if e % 2 else 1.0


SCHEDS = {
    "LambdaLR": lambda S, o: S.LambdaLR(o, _lam),
    "LambdaLR_list": lambda S, o: S.LambdaLR(o, [_lam, lambda e: 1.0 / (e + 1)]),
    "MultiplicativeLR": lambda S, o: S.MultiplicativeLR(o, _mul),
    "StepLR": lambda S, o: S.StepLR(o, step_size=7, gamma=0.5),
    "MultiStepLR": lambda S, o: S.MultiStepLR(o, milestones=[3, 10, 10, 25], gamma=0.3),
    "ConstantLR": lambda S, o: S.ConstantLR(o, factor=0.25, total_iters=6),
    "LinearLR": lambda S, o: S.LinearLR(o, start_factor=0.1, end_factor=0.9, total_iters=13),
    "ExponentialLR": lambda S, o: S.ExponentialLR(o, gamma=0.93),
    "CosineAnnealingLR": lambda S, o: S.CosineAnnealingLR(o, T_max=9, eta_min=0.001),
    "CosineAnnealingWarmRestarts": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=5,
                                                                              eta_min=0.01),
    "CosineAnnealingWarmRestarts_mult": lambda S, o: S.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2),
    "OneCycleLR": lambda S, o: S.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=41),
    "OneCycleLR_linear_3phase": lambda S, o: S.OneCycleLR(
        o, max_lr=0.8, epochs=4, steps_per_epoch=11, anneal_strategy="linear",
        three_phase=True, pct_start=0.25),
    "CyclicLR": lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4),
    "CyclicLR_tri2": lambda S, o: S.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.1,
                                             step_size_up=3, step_size_down=5,
                                             mode="triangular2"),
    "CyclicLR_exp": lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=5,
                                            mode="exp_range", gamma=0.97),
    "PolynomialLR": lambda S, o: S.PolynomialLR(o, total_iters=17, power=2.0),
    "SequentialLR": lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=5), S.ExponentialLR(o, gamma=0.9),
            S.CosineAnnealingLR(o, T_max=10)], milestones=[5, 20]),
    "ChainedScheduler": lambda S, o: S.ChainedScheduler(
        [S.ConstantLR(o, factor=0.5, total_iters=4), S.ExponentialLR(o, gamma=0.9),
         S.StepLR(o, 6, 0.5)]),
}
ADAM = {"OneCycleLR", "CyclicLR_exp"}
N = 40


def _record(opt):
    out = []
    for g in opt.param_groups:
        out.append(g["lr"])
        if "momentum" in g:
            out.append(g["momentum"])
        if "betas" in g:
            out.extend(g["betas"])
    return out


def _run(m, name, steps=N, state=None):
    opt = _opt(m, "adam" if name in ADAM else "sgd")
    sched = SCHEDS[name](m.optim.lr_scheduler, opt)
    seq = [(list(sched.get_last_lr()), _record(opt))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(steps):
            opt.step()
            sched.step()
            seq.append((list(sched.get_last_lr()), _record(opt)))
    return seq, opt, sched


def _same(a, b):
    np.testing.assert_allclose(np.array(a, dtype=float), np.array(b, dtype=float),
                               rtol=1e-13, atol=0)


def _plain(v):
    """State-dict values without callables, comparable across libraries."""
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_plain(x) for x in v)
    if callable(v):
        return "<fn>"
    return v


@pytest.mark.parametrize("name", list(SCHEDS))
def test_sequence_matches_torch(name):
    tseq, _, tsched = _run(torch, name)
    lseq, _, lsched = _run(torchlike, name)
    assert len(tseq) == len(lseq)
    for i, ((tl, tr), (ll, lr_)) in enumerate(zip(tseq, lseq)):
        _same(ll, tl)
        _same(lr_, tr)
    tsd, lsd = _plain(tsched.state_dict()), _plain(lsched.state_dict())
    assert set(tsd) == set(lsd)
    for k in tsd:
        if k in ("_schedulers",):
            continue
        assert type(lsd[k]) is type(tsd[k]) or isinstance(tsd[k], float), k
        if isinstance(tsd[k], float) and not math.isinf(tsd[k]):
            _same([lsd[k]], [tsd[k]])
        elif isinstance(tsd[k], list) and tsd[k] and isinstance(tsd[k][0], float):
            _same(lsd[k], tsd[k])
        else:
            assert lsd[k] == tsd[k], k


@pytest.mark.parametrize("name", ["StepLR", "CosineAnnealingLR", "OneCycleLR", "SequentialLR",
                                  "CyclicLR_tri2", "LambdaLR", "CosineAnnealingWarmRestarts"])
def test_resume_from_state_dicts(name):
    """Run 15 steps, state_dict both, fresh objects load them, 25 more == 40 straight."""
    tseq, _, _ = _run(torch, name)
    _, opt, sched = _run(torchlike, name, steps=15)
    osd, ssd = copy.deepcopy(opt.state_dict()), copy.deepcopy(_plain(sched.state_dict()))
    opt2 = _opt(torchlike, "adam" if name in ADAM else "sgd")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sched2 = SCHEDS[name](torchlike.optim.lr_scheduler, opt2)
        opt2.load_state_dict(osd)
        sched2.load_state_dict({k: v for k, v in ssd.items()} if "lr_lambdas" not in ssd else
                               {**ssd, "lr_lambdas": [None] * len(ssd["lr_lambdas"])})
        for i in range(15, N):
            opt2.step()
            sched2.step()
            _same(sched2.get_last_lr(), tseq[i + 1][0])
            _same(_record(opt2), tseq[i + 1][1])


@pytest.mark.parametrize("name,epochs", [
    ("StepLR", [0, 3, 7, 8, 20, 14]), ("MultiStepLR", [2, 10, 30, 4]),
    ("ExponentialLR", [1, 5, 2]), ("CosineAnnealingLR", [3, 9, 12, 1]),
    ("LinearLR", [2, 13, 20, 5]), ("ConstantLR", [1, 6, 3]), ("PolynomialLR", [4, 17, 30]),
    ("CosineAnnealingWarmRestarts_mult", [0, 2.5, 4, 10, 25, 1])])
def test_closed_form_with_epoch_argument(name, epochs):
    res = {}
    for m in (torch, torchlike):
        opt = _opt(m)
        sched = SCHEDS[name](m.optim.lr_scheduler, opt)
        seq = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for e in epochs:
                opt.step()
                sched.step(e)
                seq.append(list(sched.get_last_lr()))
        res[m.__name__] = seq
    _same(res["torchlike"], res["torch"])


@pytest.mark.parametrize("kw", [dict(), dict(mode="max", factor=0.5, patience=2, cooldown=1),
                                dict(threshold_mode="abs", threshold=0.1, patience=1,
                                     min_lr=[0.02, 0.001]),
                                dict(mode="max", threshold_mode="abs", patience=0, eps=0.01)])
def test_reduce_lr_on_plateau(kw):
    rng = np.random.default_rng(3)
    metrics = list(np.concatenate([np.linspace(1, 0.5, 10), 0.5 + rng.random(30) * 0.1]))
    res = {}
    for m in (torch, torchlike):
        opt = _opt(m)
        sched = m.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
        seq = []
        for v in metrics:
            opt.step()
            sched.step(float(v))
            seq.append(list(sched.get_last_lr()) + [sched.num_bad_epochs,
                                                    sched.cooldown_counter, sched.best])
        res[m.__name__] = (seq, _plain(sched.state_dict()))
    _same(res["torchlike"][0], res["torch"][0])
    assert set(res["torchlike"][1]) == set(res["torch"][1])


def test_warns_when_scheduler_steps_before_optimizer():
    for m in (torch, torchlike):
        opt = _opt(m)
        sched = m.optim.lr_scheduler.StepLR(opt, 2)
        with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
            sched.step()


def test_errors_like_torch():
    for m in (torch, torchlike):
        S = m.optim.lr_scheduler
        with pytest.raises(ValueError, match="Factor should be < 1.0"):
            S.ReduceLROnPlateau(_opt(m), factor=1.5)
        with pytest.raises(ValueError, match="total_steps OR"):
            S.OneCycleLR(_opt(m), max_lr=0.1)
        with pytest.raises(KeyError, match="initial_lr"):
            S.StepLR(_opt(m), 3, last_epoch=4)
        with pytest.raises(TypeError, match="is not an Optimizer"):
            S.StepLR(object(), 3)
        o = _opt(m)
        with pytest.raises(ValueError, match="Tried to step"):
            s = S.OneCycleLR(o, max_lr=0.1, total_steps=2)
            for _ in range(3):
                o.step()
                s.step()


@pytest.mark.parametrize("name", ["StepLR", "ExponentialLR", "CosineAnnealingLR", "LambdaLR"])
def test_constructed_with_last_epoch(name):
    """The old resume idiom: an optimizer holding 'initial_lr' and a scheduler built with
    last_epoch=k continue as torch's do."""
    res = {}
    for m in (torch, torchlike):
        opt = _opt(m)
        for g in opt.param_groups:
            g["initial_lr"] = g["lr"]
            g["lr"] = g["lr"] * 0.7
        S = m.optim.lr_scheduler
        sched = {"StepLR": lambda: S.StepLR(opt, 3, 0.5, last_epoch=4),
                 "ExponentialLR": lambda: S.ExponentialLR(opt, 0.9, last_epoch=4),
                 "CosineAnnealingLR": lambda: S.CosineAnnealingLR(opt, 10, last_epoch=4),
                 "LambdaLR": lambda: S.LambdaLR(opt, _lam, last_epoch=4)}[name]()
        seq = [list(sched.get_last_lr())]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(12):
                opt.step()
                sched.step()
                seq.append(list(sched.get_last_lr()))
        res[m.__name__] = seq
    _same(res["torchlike"], res["torch"])


@pytest.mark.parametrize("kw", [dict(swa_lr=0.02), dict(swa_lr=[0.05, 0.01], anneal_epochs=3,
                                                        anneal_strategy="linear"),
                                dict(swa_lr=0.03, anneal_epochs=0)])
def test_swalr_matches_torch(kw):
    res = {}
    for m in (torch, torchlike):
        opt = _opt(m)
        sched = m.optim.swa_utils.SWALR(opt, **kw)
        seq = [list(sched.get_last_lr())]
        for _ in range(15):
            opt.step()
            sched.step()
            seq.append(list(sched.get_last_lr()))
        res[m.__name__] = (seq, set(sched.state_dict()))
    _same(res["torchlike"][0], res["torch"][0])
    assert res["torchlike"][1] == res["torch"][1]
