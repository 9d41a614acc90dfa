"""The one torch-oracle helper every op test uses.

A case is a function ``fn(m, *args)`` written once against a module ``m`` (real ``torch`` or
``torchlike``) plus numpy inputs. ``check`` runs it on both and compares forward values, dtypes,
shapes and, for float inputs, the gradients through ``.backward()`` (and, with
``autograd_grad=True``, through ``autograd.grad``). ``check_raises`` compares the exception
class (and optionally a message fragment) on bad input.
"""
from __future__ import annotations

import math

from dataclasses import dataclass, field

import numpy as np
import torch

import torchlike


@dataclass
class Case:
    """One row of an op table: ``fn(m, *inputs)`` with ``m`` being torch or torchlike."""

    name: str
    fn: object
    inputs: tuple
    grad: bool = True            # compare gradients of every float input
    atol: float = 1e-5
    rtol: float = 1e-5
    kwargs: dict = field(default_factory=dict)

    def __str__(self):
        return self.name


def _to(m, x, requires_grad):
    if isinstance(x, np.ndarray):
        t = m.tensor(x)
        if requires_grad and x.dtype.kind in "fc":
            t.requires_grad_(True)
        return t
    return x


def _flat(out):
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(_flat(o))
        return res
    if hasattr(out, "values") and hasattr(out, "indices") and not callable(out.values):
        return [out.values, out.indices]
    return [out]


def _np(t):
    if isinstance(t, torch.Tensor):
        t = t.detach()
        if t.dtype == torch.bfloat16:
            t = t.float()
        return t.numpy(force=True)   # force: torch's ZeroTensor gradients (e.g. of sgn)
    if isinstance(t, torchlike.Tensor):
        a = np.asarray(t.detach())
        if t.dtype is torchlike.bfloat16:
            a = a.astype(np.float32)
        return a
    return np.asarray(t)


def assert_close(ours, theirs, atol=1e-5, rtol=1e-5, what="value"):
    a, b = _np(ours), _np(theirs)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != torch {b.shape}"
    if a.dtype == np.bool_ or b.dtype == np.bool_ or a.dtype.kind in "iu":
        np.testing.assert_array_equal(a, b, err_msg=what)
    else:
        np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, equal_nan=True, err_msg=what)


def same_dtype(ours, theirs):
    return str(ours.dtype) == str(theirs.dtype)


def check(case: Case, autograd_grad=False):
    """Compare torchlike against torch for one case: values, dtypes, shapes, gradients."""
    targs = [_to(torch, x, case.grad) for x in case.inputs]
    largs = [_to(torchlike, x, case.grad) for x in case.inputs]
    tout = case.fn(torch, *targs, **case.kwargs)
    lout = case.fn(torchlike, *largs, **case.kwargs)
    touts, louts = _flat(tout), _flat(lout)
    assert len(touts) == len(louts), f"{case}: {len(louts)} outputs, torch gives {len(touts)}"
    for i, (lo, to) in enumerate(zip(louts, touts)):
        if not isinstance(to, torch.Tensor):
            assert lo == to or (lo != lo and to != to), f"{case}: output {i}: {lo} != {to}"
            continue
        assert isinstance(lo, torchlike.Tensor), f"{case}: output {i} is {type(lo)}"
        assert same_dtype(lo, to), f"{case}: output {i} dtype {lo.dtype} != torch {to.dtype}"
        assert tuple(lo.shape) == tuple(to.shape), f"{case}: shape {lo.shape} != {to.shape}"
        assert lo.requires_grad == to.requires_grad, \
            f"{case}: output {i} requires_grad {lo.requires_grad} != torch {to.requires_grad}"
        assert_close(lo, to, case.atol, case.rtol, f"{case}: output {i}")
    if not case.grad:
        return
    diff = [(lo, to) for lo, to in zip(louts, touts)
            if isinstance(to, torch.Tensor) and to.requires_grad]
    if not diff:
        return
    rng = np.random.default_rng(0)
    cots = [rng.standard_normal(to.shape).astype(_np(to).dtype) for _, to in diff]
    t_in = [t for t in targs if isinstance(t, torch.Tensor) and t.requires_grad]
    l_in = [t for t in largs if isinstance(t, torchlike.Tensor) and t.requires_grad]
    tgrads = torch.autograd.grad([to for _, to in diff], t_in,
                                 [torch.tensor(c, dtype=to.dtype) for c, (_, to) in
                                  zip(cots, diff)], allow_unused=True, retain_graph=True)
    if autograd_grad:
        lgrads = torchlike.autograd.grad(
            [lo for lo, _ in diff], l_in,
            [torchlike.tensor(c, dtype=lo.dtype) for c, (lo, _) in zip(cots, diff)],
            allow_unused=True, retain_graph=True)
    else:
        torchlike.autograd.backward([lo for lo, _ in diff],
                                    [torchlike.tensor(c, dtype=lo.dtype)
                                     for c, (lo, _) in zip(cots, diff)])
        lgrads = [t.grad for t in l_in]
    for k, (lg, tg) in enumerate(zip(lgrads, tgrads)):
        if tg is None:
            assert lg is None or np.all(_np(lg) == 0), f"{case}: grad {k} should be None"
            continue
        assert lg is not None, f"{case}: grad {k} missing"
        assert same_dtype(lg, tg), f"{case}: grad {k} dtype {lg.dtype} != torch {tg.dtype}"
        assert_close(lg, tg, case.atol * 10, case.rtol * 10, f"{case}: grad {k}")


def check_raises(fn, *inputs, match=None):
    """torch and torchlike raise the same exception class (and message fragment) on ``fn``."""
    targs = [_to(torch, x, False) for x in inputs]
    largs = [_to(torchlike, x, False) for x in inputs]
    try:
        fn(torch, *targs)
    except Exception as e:  # noqa: BLE001
        terr = e
    else:
        raise AssertionError("torch did not raise: the case is wrong")
    try:
        fn(torchlike, *largs)
        torchlike.sync()        # (fused eager: a value check of a computed input runs here)
    except Exception as e:  # noqa: BLE001
        lerr = e
    else:
        raise AssertionError(f"torchlike did not raise {type(terr).__name__}: {terr}")
    assert type(lerr) is type(terr) or isinstance(lerr, type(terr)), \
        f"torchlike raised {type(lerr).__name__}({lerr}); torch raises {type(terr).__name__}"
    if match is not None:
        assert match in str(terr), f"the case's fragment {match!r} is not in torch's {terr}"
        assert match in str(lerr), f"{match!r} not in torchlike's message {lerr}"
    return lerr, terr


def check_double_backward(fn, x0=None, atol=1e-6, rtol=1e-6):
    """Second-order gradients of ``fn(m, x)`` through ``create_graph=True`` equal torch's."""
    x0 = np.random.default_rng(0).standard_normal((3, 4)) if x0 is None else x0
    res = []
    for m in (torch, torchlike):
        x = m.tensor(x0, requires_grad=True)
        y = fn(m, x)
        g, = m.autograd.grad((y * y).sum(), x, create_graph=True)
        gg, = m.autograd.grad((g * g).sum(), x)
        res.append(np.asarray(gg.detach().tolist()))
    np.testing.assert_allclose(res[1], res[0], atol=atol, rtol=rtol)


def outcome(fn, m):
    """``("ok", fn(m))`` or ``("raise", the exception)``, warnings silenced: one side of a
    torch-vs-torchlike comparison."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return "ok", fn(m)
        except Exception as e:  # noqa: BLE001
            return "raise", e


def both_outcomes(fn, *, msg="exact"):
    """Run ``fn(m)`` with torch and torchlike. If torch raises, torchlike must raise the same
    exception class with the same message (``msg``: ``"exact"``, ``"first_line"`` — torch
    appends a C++ traceback to some messages — or ``None`` to skip it) and None is returned;
    otherwise torchlike must return too, and ``(torchlike value, torch value)`` is returned for
    the caller's value comparison."""
    import torch
    import torchlike
    tk, tv = outcome(fn, torch)
    lk, lv = outcome(fn, torchlike)
    if tk == "raise":
        assert lk == "raise", f"torch raises {type(tv).__name__}({tv}); torchlike returned {lv!r}"
        assert type(lv) is type(tv), \
            f"torchlike raised {type(lv).__name__}({lv}); torch {type(tv).__name__}({tv})"
        t_msg, l_msg = str(tv), str(lv)
        if msg == "first_line" and "\n" in t_msg:
            assert l_msg.startswith(t_msg.split("\n")[0]), f"{l_msg!r} != torch {t_msg!r}"
        elif msg is not None:
            assert l_msg == t_msg, f"message {l_msg!r} != torch {t_msg!r}"
        return None
    assert lk == "ok", f"torchlike raised {type(lv).__name__}({lv}); torch returned {tv!r}"
    return lv, tv


def value_bits(t):
    """A tensor's values as comparable patterns: the sign of a zero counts, NaN is one value
    (a complex tensor's: its real parts', then its imaginary parts')."""
    a = np.asarray(t.tolist())
    if a.dtype.kind == "c":
        return [_real_bits(a.real), _real_bits(a.imag)]
    return _real_bits(a)


def _real_bits(a):
    if a.dtype.kind != "f":
        return a.tolist()
    a = a.astype(np.float64).reshape(-1)
    return [("nan" if v != v else (v, math.copysign(1.0, v))) for v in a.tolist()]


def same_as_torch(fn, *, msg=True, atol=0.0, rtol=0.0, bits=False):
    """``fn(m)`` behaves the same with m = torch and m = torchlike: the same exception (class
    and message: ``msg`` True or ``"exact"``; ``"first_line"``; False or None, the class only),
    or the same values, dtypes and shapes (tensors) and equal other results. ``bits``: tensors'
    values bit for bit (``value_bits``: a zero's sign counts)."""
    got = both_outcomes(fn, msg="exact" if msg is True else (msg or None))
    if got is None:
        return
    lv, tv = got
    outs_t = tv if isinstance(tv, (tuple, list)) else (tv,)
    outs_l = lv if isinstance(lv, (tuple, list)) else (lv,)
    assert len(outs_t) == len(outs_l)
    for a, b in zip(outs_l, outs_t):
        if isinstance(b, torch.Tensor):
            assert isinstance(a, torchlike.Tensor), type(a)
            assert same_dtype(a, b), f"dtype {a.dtype} != torch {b.dtype}"
            assert tuple(a.shape) == tuple(b.shape), f"shape {a.shape} != torch {b.shape}"
            if bits:
                assert value_bits(a) == value_bits(b), f"{a} != torch {b}"
            else:
                assert_close(a, b, atol=atol, rtol=rtol)
        else:
            assert a == b or (a != a and b != b), f"{a!r} != torch {b!r}"


def fresh_process_outputs(code, timeout=120):
    """What ``code`` prints run by a fresh Python with ``sys.argv[1]`` = ``"torch"`` and with
    ``"torchlike"``: for behaviour that happens once a process (torch's warn-once warnings)."""
    import subprocess
    import sys
    return {lib: subprocess.run([sys.executable, "-c", code, lib], capture_output=True,
                                text=True, timeout=timeout).stdout
            for lib in ("torch", "torchlike")}
