"""torch.signal.windows (torchlike.signal.windows) and the top-level window functions against
torch: values (float32 to float32 rounding, float64 to float64's), dtypes, shapes (M = 0, 1),
autograd flags, argument checks (error class and message), the names and signatures, and the
ways a program reaches the namespace (attribute, import, the drop-in runner)."""
from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

import torchlike
from oracle import assert_close, both_outcomes, same_dtype

NAMES = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
         "general_hamming", "hamming", "hann", "kaiser", "nuttall"]
LENGTHS = [0, 1, 2, 3, 4, 5, 8, 10, 31, 64, 101, 256]
# the windows' own parameters (the first of each: the defaults)
PARAMS = {
    "exponential": [{}, {"tau": 0.5}, {"tau": 3.0}],
    "gaussian": [{}, {"std": 0.9}, {"std": 7.0}],
    "kaiser": [{}, {"beta": 0.0}, {"beta": 5.0}],
    "general_cosine": [{"a": [0.5, 0.3, 0.2]}, {"a": (1.0,)}, {"a": [0.3635819, 0.4891775]}],
    "general_hamming": [{}, {"alpha": 0.6}],
}
# float32: the ops' own rounding (cos, exp, i0 each within an ulp or so of torch's)
TOL = {"float32": dict(atol=2e-6, rtol=2e-6), "float64": dict(atol=1e-13, rtol=1e-13)}


def _window(m, name, M, **kw):
    return getattr(m.signal.windows, name)(M, **kw)


def _same(fn, **tol):
    """fn(m) raises alike (class, message) or returns alike (dtype, shape, values, grad)."""
    got = both_outcomes(fn)
    if got is None:
        return
    ours, theirs = got
    assert same_dtype(ours, theirs), f"dtype {ours.dtype} != torch {theirs.dtype}"
    assert tuple(ours.shape) == tuple(theirs.shape), f"{ours.shape} != torch {theirs.shape}"
    assert ours.requires_grad == theirs.requires_grad
    assert ours.is_leaf == theirs.is_leaf
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    assert_close(ours, theirs, **tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("sym", [True, False])
@pytest.mark.parametrize("name", NAMES)
def test_window_values_match_torch(name, sym, dtype):
    for kw in PARAMS.get(name, [{}]):
        for M in LENGTHS:
            _same(lambda m: _window(m, name, M, sym=sym, dtype=getattr(m, dtype), **kw),
                  **TOL[dtype])


def test_window_values_are_torchs_not_scipy_textbook_forms():
    # torch's own conventions, pinned: a periodic cosine window divides by M + 1, a periodic
    # window of one point is the symmetric one, a periodic exponential window may move its
    # center, hann's ends are exact zeros
    assert torchlike.signal.windows.cosine(4, sym=False).tolist() == pytest.approx(
        [0.309017, 0.809017, 1.0, 0.809017], abs=1e-6)
    for name in NAMES:
        kw = PARAMS.get(name, [{}])[0]
        assert _window(torchlike, name, 1, sym=False, **kw).tolist() == pytest.approx([1.0])
    _same(lambda m: m.signal.windows.exponential(7, sym=False, center=1.5, tau=2.0),
          **TOL["float32"])
    w = torchlike.signal.windows.hann(9, dtype=torchlike.float64)
    assert w[0].item() == 0.0 and w[-1].item() == 0.0 and w[4].item() == 1.0


def test_window_default_dtype_follows_set_default_dtype():
    old = torchlike.get_default_dtype()
    try:
        for m in (torch, torchlike):
            m.set_default_dtype(m.float64)
        for name in NAMES:
            kw = PARAMS.get(name, [{}])[0]
            _same(lambda m: _window(m, name, 6, **kw), **TOL["float64"])
    finally:
        torch.set_default_dtype(torch.float32)
        torchlike.set_default_dtype(old)


@pytest.mark.parametrize("M", [0, 1, 6])
@pytest.mark.parametrize("name", NAMES)
def test_window_requires_grad_and_device(name, M):
    kw = PARAMS.get(name, [{}])[0]
    # requires_grad: an empty or one-point window is a leaf that requires grad; a longer one
    # is computed from a leaf ramp (torch's grad_fn names: ExpBackward0, SumBackward1, ...)
    _same(lambda m: _window(m, name, M, requires_grad=True, **kw), **TOL["float32"])
    _same(lambda m: _window(m, name, M, device="cpu", dtype=m.float64, **kw),
          **TOL["float64"])
    w = _window(torchlike, name, M, device="cpu", requires_grad=True, **kw)
    assert w.device.type == "cpu"
    if M > 1:
        w.sum().backward()      # (the graph is an ordinary one: backward runs)


def _errors(m, name, **kw):
    w = m.signal.windows
    extra = PARAMS.get(name, [{}])[0]
    return getattr(w, name)(**{**extra, **kw})


ERROR_CASES = [
    {"M": -1},
    {"M": -3, "dtype": "int64", "layout": "sparse_coo"},     # M is checked first
    {"M": 3, "layout": "sparse_coo"},
    {"M": 3, "dtype": "int32", "layout": "sparse_coo"},      # then the layout
    {"M": 3, "dtype": "int64"},
    {"M": 3, "dtype": "float16"},
    {"M": 3, "dtype": "bfloat16"},
    {"M": 3, "dtype": "complex64"},
    {"M": 0, "dtype": "int64"},
]


def _resolve_kw(m, kw):
    out = dict(kw)
    for k in ("dtype", "layout"):
        if k in out:
            out[k] = getattr(m, out[k])
    return out


@pytest.mark.parametrize("case", ERROR_CASES, ids=lambda c: "-".join(f"{k}={v}" for k, v in
                                                                      c.items()))
@pytest.mark.parametrize("name", NAMES)
def test_window_common_checks_raise_as_torch(name, case):
    # (hann, hamming, general_hamming and nuttall report under general_cosine's name, as in
    # torch: they are general_cosine with fixed coefficients)
    assert both_outcomes(lambda m: _errors(m, name, **_resolve_kw(m, case))) is None


@pytest.mark.parametrize("fn", [
    lambda m: m.signal.windows.exponential(5, tau=0),
    lambda m: m.signal.windows.exponential(5, tau=-1.5),
    lambda m: m.signal.windows.exponential(5, center=1.0),             # symmetric: no center
    lambda m: m.signal.windows.exponential(0, center=1.0, tau=0),      # tau before center
    lambda m: m.signal.windows.exponential(-1, tau=0),                 # M before tau
    lambda m: m.signal.windows.gaussian(5, std=0),
    lambda m: m.signal.windows.gaussian(5, std=-2.0),
    lambda m: m.signal.windows.gaussian(0, std=0),                     # std before M == 0
    lambda m: m.signal.windows.kaiser(5, beta=-1),
    lambda m: m.signal.windows.kaiser(0, beta=-1),
    lambda m: m.signal.windows.general_cosine(5, a=3),
    lambda m: m.signal.windows.general_cosine(5, a=[]),
    lambda m: m.signal.windows.general_cosine(5),                      # a is required
    lambda m: m.signal.windows.hann(5, True),                          # sym is keyword-only
    lambda m: m.signal.windows.blackman(-2, dtype=m.int64),
], ids=["tau-zero", "tau-negative", "center-symmetric", "tau-before-center", "M-before-tau",
        "std-zero", "std-negative", "std-before-empty", "beta-negative", "beta-before-empty",
        "coefficients-not-iterable", "coefficients-empty", "coefficients-missing",
        "sym-positional", "blackman-own-name"])
def test_window_parameter_checks_raise_as_torch(fn):
    assert both_outcomes(fn) is None


def test_window_of_a_non_integer_length_raises_linspaces_type_error():
    # torch's argument parser: the keywords' types, and (no positional argument) its
    # trailing ", " before the ")"
    for fn in (lambda m: m.signal.windows.hann(2.5),
               lambda m: m.signal.windows.exponential(3.5),
               lambda m: m.linspace(start=0, end=1, steps=2.5),
               lambda m: m.linspace(steps=2.5),
               lambda m: m.linspace(0, end=1, steps=2.5)):
        assert both_outcomes(fn) is None
    try:
        torchlike.signal.windows.hann(2.5)
    except TypeError as e:
        assert "start=int, )" in str(e)


def test_general_cosine_coefficients_unchecked_for_one_point():
    # torch returns ones((1,)) for M = 1 before it looks at the coefficients
    _same(lambda m: m.signal.windows.general_cosine(1, a=3))
    _same(lambda m: m.signal.windows.general_cosine(0, a=[]))


def test_window_names_and_signatures_match_torch():
    assert torchlike.signal.windows.__all__ == torch.signal.windows.__all__
    assert torchlike.signal.__all__ == torch.signal.__all__
    for name in NAMES:
        ours = inspect.signature(getattr(torchlike.signal.windows, name)).parameters
        theirs = inspect.signature(getattr(torch.signal.windows, name)).parameters
        assert list(ours) == list(theirs), name
        for p in theirs:
            assert ours[p].kind == theirs[p].kind, (name, p)
            d = theirs[p].default
            if isinstance(d, (torch.layout, torch.dtype)):
                assert str(ours[p].default) == str(d), (name, p)
            else:
                assert ours[p].default == d, (name, p)
    # the implementation module, at torch's path
    assert torchlike.signal.windows.windows.hann is torchlike.signal.windows.hann


def _run(code, *args, env=None):
    return subprocess.run([sys.executable, *args, "-c", code] if not args else
                          [sys.executable, *args], capture_output=True, text=True,
                          timeout=300, env=env, cwd=os.path.dirname(os.path.dirname(
                              os.path.abspath(__file__))))


def test_signal_is_an_attribute_after_import_torchlike():
    # as torch.signal is after `import torch`: no import of the submodule needed
    assert hasattr(torch, "signal")
    r = _run("import torchlike\nprint(torchlike.signal.windows.hann(3).tolist())")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[0.0, 1.0, 0.0]"
    r = _run("import torchlike.signal.windows as w\nprint(w.bartlett(3).tolist())")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[0.0, 1.0, 0.0]"


def test_dropin_runner_maps_torch_signal_windows(tmp_path):
    script = tmp_path / "uses_signal.py"
    script.write_text(textwrap.dedent("""
        import torch.signal.windows
        from torch.signal.windows import hann
        from torch.signal import windows
        import torch
        assert torch.__name__ == "torch" and torch.__file__.split("/")[-2] == "torchlike"
        assert windows is torch.signal.windows
        print(hann(4, sym=False).tolist(), torch.signal.windows.kaiser(1).tolist())
    """))
    r = _run("", "-m", "torchlike", str(script))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[0.0, 0.5, 1.0, 0.5] [1.0]"


# ------------------------------------------------------------------ the top-level windows

TOP = ["hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window"]
TOP_LENGTHS = [0, 1, 2, 3, 5, 8, 10, 31, 64, 100, 257, 1000, 1001]
# half types: torch computes in the dtype (each op rounded to it), so do we: values agree to
# an ulp of the dtype, where the textbook value in double would be off by up to 100%
TOP_TOL = {"float32": dict(atol=3e-7, rtol=0), "float64": dict(atol=1e-15, rtol=0),
           "float16": dict(atol=1e-3, rtol=0), "bfloat16": dict(atol=8e-3, rtol=0)}
# kaiser: I0(beta * s) turns an ulp of s (torch's vectorised sqrt is not correctly rounded on
# AVX2) into beta ulps of the window
KAISER_TOL = {"float32": dict(atol=1e-6, rtol=0), "float64": dict(atol=5e-15, rtol=0)}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("name", TOP)
def test_top_level_window_values_match_torch(name, periodic, dtype):
    extra = {"kaiser_window": [(), (0.0,), (5.0,)],
             "hamming_window": [(), (0.5, 0.5), (0.6, 0.3)]}.get(name, [()])
    tol = TOP_TOL[dtype]
    if name == "kaiser_window" and dtype in KAISER_TOL:
        tol = KAISER_TOL[dtype]
    for args in extra:
        for M in TOP_LENGTHS:
            _same(lambda m: getattr(m, name)(M, periodic, *args, dtype=getattr(m, dtype)),
                  **tol)


def test_top_level_and_signal_windows_agree_where_torch_does():
    # torch.hann_window(M, periodic=True) is signal.windows.hann(M, sym=False), etc.
    pairs = [("hann_window", "hann"), ("hamming_window", "hamming"),
             ("blackman_window", "blackman"), ("bartlett_window", "bartlett")]
    for top, sig in pairs:
        for M in (5, 16):
            a = getattr(torchlike, top)(M, periodic=False, dtype=torchlike.float64)
            b = getattr(torchlike.signal.windows, sig)(M, sym=True, dtype=torchlike.float64)
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), atol=1e-12)
