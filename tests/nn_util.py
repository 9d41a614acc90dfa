"""Helpers for the nn tests: build the same module in torch and torchlike, copy torch's weights
into torchlike through ``load_state_dict``, and compare outputs and every gradient."""
from __future__ import annotations

import numpy as np
import torch

import torchlike

from oracle import assert_close


def copy_state(tmod, lmod):
    sd = {k: torchlike.tensor(v.detach().numpy().copy()) for k, v in tmod.state_dict().items()}
    res = lmod.load_state_dict(sd)
    assert not res.missing_keys and not res.unexpected_keys
    return lmod


def _to(m, x, grad):
    if isinstance(x, np.ndarray):
        t = m.tensor(x)
        if grad and x.dtype.kind == "f":
            t.requires_grad_(True)
        return t
    return x


def _flat(out):
    if isinstance(out, (tuple, list)):
        r = []
        for o in out:
            r.extend(_flat(o))
        return r
    return [out]


def compare_module(ctor, inputs, *, train=True, atol=1e-5, rtol=1e-5, grad=True, call=None,
                   check_buffers=True, steps=1, nograd=()):
    """Build ``ctor(nn)`` in both libraries, copy weights, compare forward/backward.

    ``inputs`` are numpy arrays (float ones get requires_grad); ``call(module, *inputs)``
    defaults to ``module(*inputs)``.
    """
    torch.manual_seed(0)
    tm = ctor(torch.nn)
    lm = ctor(torchlike.nn)
    copy_state(tm, lm)
    tm.train(train)
    lm.train(train)
    call = call or (lambda m, *a: m(*a))
    for step in range(steps):
        targs = [_to(torch, x, grad and i not in nograd) for i, x in enumerate(inputs)]
        largs = [_to(torchlike, x, grad and i not in nograd) for i, x in enumerate(inputs)]
        tout = _flat(call(tm, *targs))
        lout = _flat(call(lm, *largs))
        assert len(tout) == len(lout)
        for i, (lo, to) in enumerate(zip(lout, tout)):
            if to is None:
                assert lo is None
                continue
            assert tuple(lo.shape) == tuple(to.shape), f"output {i}: {lo.shape} vs {to.shape}"
            assert str(lo.dtype) == str(to.dtype), f"output {i}: {lo.dtype} vs {to.dtype}"
            assert_close(lo, to, atol, rtol, f"output {i}")
        if check_buffers:
            tb = dict(tm.named_buffers())
            for k, v in lm.named_buffers():
                assert_close(v, tb[k], atol, rtol, f"buffer {k}")
        if not grad:
            continue
        rng = np.random.default_rng(step)
        pairs = [(lo, to) for lo, to in zip(lout, tout)
                 if isinstance(to, torch.Tensor) and to.requires_grad]
        if not pairs:
            continue
        cots = [rng.standard_normal(tuple(to.shape)).astype(np.float32) for _, to in pairs]
        tl = sum((to * torch.tensor(c, dtype=to.dtype)).sum() for (_, to), c in zip(pairs, cots))
        ll = None
        for (lo, _), c in zip(pairs, cots):
            term = (lo * torchlike.tensor(c, dtype=lo.dtype)).sum()
            ll = term if ll is None else ll + term
        tm.zero_grad()
        lm.zero_grad()
        tl.backward()
        ll.backward()
        for k, (lx, tx) in enumerate(zip(largs, targs)):
            if isinstance(tx, torch.Tensor) and tx.requires_grad:
                assert_close(lx.grad, tx.grad, atol * 10, rtol * 10, f"input grad {k}")
        tp = dict(tm.named_parameters())
        for name, p in lm.named_parameters():
            tg = tp[name].grad
            if tg is None:
                assert p.grad is None or np.all(np.asarray(p.grad) == 0), name
                continue
            assert p.grad is not None, f"no grad for {name}"
            assert_close(p.grad, tg, atol * 10, rtol * 10, f"param grad {name}")
    return tm, lm


def grad_reverse(m):
    """A custom autograd.Function (torch's or torchlike's, ``m``) whose backward is not its
    forward's derivative: identity forward, gradient times -2."""
    class GradReverse(m.autograd.Function):
        @staticmethod
        def forward(x):
            return x.view_as(x)

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return -2 * g
    return GradReverse


def det_init(model, seed=42, scale=0.1):
    """Fill every parameter from a numpy stream (the same values on both libraries)."""
    r = np.random.default_rng(seed)
    m = torch if isinstance(model, torch.nn.Module) else torchlike
    with m.no_grad():
        for _, p in model.named_parameters():
            p.copy_(m.from_numpy((r.standard_normal(tuple(p.shape)) * scale)
                                 .astype(np.float32)))
    return model
