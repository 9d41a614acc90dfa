"""Running a program on torch and on torchlike and comparing what it gives: the helpers of the
pytorch/examples and pytorch/tutorials programs (``test_pytorch_*_against_torch.py``).

``run_both(build, program)`` builds the program's models in both libraries (torchlike's given
torch's weights), runs ``program(m, models, print)`` on each and compares what it returns
(``same_results``: tensors by dtype, shape, ``requires_grad`` and value; numbers within the
tolerances; the rest exactly) and what it prints (``same_lines``: the same text, each number
within one unit of its last printed digit or the run's tolerance, an object's address masked).
"""
from __future__ import annotations

import builtins
import io
import random
import re
import sys
import warnings

import numpy as np
import torch

import torchlike
from nn_util import copy_state
from oracle import assert_close


class Printed:
    """A ``print`` a program calls: the lines it printed, in order."""

    def __init__(self):
        self.lines = []

    def __call__(self, *args, **kw):
        buf = io.StringIO()
        builtins.print(*args, file=buf, **kw)
        text = re.sub(r" at 0x[0-9a-fA-F]+", " at 0xADDR", buf.getvalue())
        self.lines.extend(text.splitlines())


_NUM = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan")


def _unit(s):
    """One unit of a printed number's last digit; none for a whole number (``2.`` in a
    printed tensor, an index, a count), which must be the same."""
    mant, _, exp = s.lower().partition("e")
    dec = len(mant.partition(".")[2])
    return 10.0 ** (int(exp or 0) - dec) if dec or exp else 0.0


def same_text(ours, theirs, rtol=1e-5):
    assert _NUM.split(ours) == _NUM.split(theirs), f"{ours!r} != torch {theirs!r}"
    for a, b in zip(_NUM.findall(ours), _NUM.findall(theirs)):
        if a == b:
            continue
        fa, fb = float(a), float(b)
        assert abs(fa - fb) <= 1.01 * _unit(b) + rtol * abs(fb), \
            f"{a} != torch {b} in {ours!r} (torch {theirs!r})"


def same_lines(ours, theirs, rtol=1e-5):
    assert len(ours) == len(theirs), f"{len(ours)} lines, torch printed {len(theirs)}:\n" \
        + "\n".join(ours) + "\n--- torch:\n" + "\n".join(theirs)
    for a, b in zip(ours, theirs):
        same_text(a, b, rtol)


def _leaves(x, path="result"):
    if isinstance(x, dict):
        yield (f"{path}:keys", list(x))
        for k, v in x.items():
            yield from _leaves(v, f"{path}[{k!r}]")
    elif isinstance(x, (list, tuple)):
        yield (f"{path}:len", len(x))
        for i, v in enumerate(x):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, x


def _scaled_atol(b, atol, scale_tol):
    a = np.abs(np.asarray(b.detach().float().numpy() if isinstance(b, torch.Tensor) else b,
                          dtype=np.float64))
    a = a[np.isfinite(a)]       # (a mask's infinities compare exactly, and scale nothing)
    return max(atol, scale_tol * float(a.max())) if a.size else atol


def same_results(ours, theirs, atol, rtol, scale_tol=1e-5):
    """Nested results equal torch's: tensors by dtype, shape, requires_grad and value, numpy
    arrays by dtype and value, floats within the tolerances, text by ``same_text``, the rest
    exactly."""
    lo, to = list(_leaves(ours)), list(_leaves(theirs))
    assert [p for p, _ in lo] == [p for p, _ in to], \
        f"result structure differs: {[p for p, _ in lo]} != {[p for p, _ in to]}"
    for (path, a), (_, b) in zip(lo, to):
        if isinstance(b, torch.Tensor):
            assert isinstance(a, torchlike.Tensor), f"{path}: {type(a)}"
            assert str(a.dtype) == str(b.dtype), f"{path}: dtype {a.dtype} != torch {b.dtype}"
            assert a.requires_grad == b.requires_grad, f"{path}: requires_grad"
            tol = _scaled_atol(b, atol, scale_tol) if b.is_floating_point() else atol
            assert_close(a, b, tol, rtol, path)
        elif isinstance(b, np.ndarray):
            assert isinstance(a, np.ndarray) and a.dtype == b.dtype, f"{path}: {a!r}"
            tol = _scaled_atol(b, atol, scale_tol) if b.dtype.kind == "f" else atol
            assert_close(a, b, tol, rtol, path)
        elif isinstance(b, float):
            assert isinstance(a, float), f"{path}: {a!r} is not a float"
            assert abs(a - b) <= atol + rtol * abs(b) or a == b, f"{path}: {a} != torch {b}"
        elif isinstance(b, str):
            same_text(a, b, rtol)
        elif isinstance(b, (torch.dtype, torch.Size)):
            assert str(a) == str(b), f"{path}: {a} != torch {b}"
        else:
            assert type(a) is type(b) and a == b, f"{path}: {a!r} != torch {b!r}"


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def run_both(build, program, *, atol=1e-5, rtol=1e-4, print_rtol=None, seed=0):
    """``build(m)`` the program's model(s) in both libraries (torch's seeded, torchlike's given
    torch's weights), run ``program(m, models, print)`` on each and compare what it returns
    and prints."""
    torch.manual_seed(seed)
    tmodels = build(torch)
    lmodels = build(torchlike)
    for tm, lm in zip(_as_tuple(tmodels), _as_tuple(lmodels)):
        if tm is not None:
            copy_state(tm, lm)
    out = {}
    for m, models in ((torch, tmodels), (torchlike, lmodels)):
        pr = Printed()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            random.seed(seed)
            res = program(m, models, pr)
        out[m] = (res, pr.lines)
    (tres, tlines), (lres, llines) = out[torch], out[torchlike]
    same_lines(llines, tlines, rtol if print_rtol is None else print_rtol)
    same_results(lres, tres, atol, rtol)
    return lres, tres


def no_models(m):
    return None


def params_and_grads(model):
    return {k: (p.detach().clone(), None if p.grad is None else p.grad.clone())
            for k, p in model.named_parameters()}


def module_level(cls, m, module):
    """A class made for library ``m``, reachable by pickle as a module global (whole-model
    ``torch.save``)."""
    name = f"{cls.__name__}_{'torch' if m is torch else 'torchlike'}"
    cls.__qualname__ = name
    cls.__module__ = module
    setattr(sys.modules[module], name, cls)
    return cls
