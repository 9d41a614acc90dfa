"""torch.fft, the window functions and stft / istft against torch: values, dtypes, shapes,
gradients (complex outputs compared through their real and imaginary parts, so the complex
cotangent convention is checked too), out=, and errors."""
import numpy as np
import pytest
import torch

import torchlike
from oracle import Case, check, check_double_backward, check_raises

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4)).astype(np.float32)
X64 = rng.standard_normal((2, 5)).astype(np.float64)
Z = (rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))).astype(np.complex64)
Z3 = (rng.standard_normal((2, 3, 4)) + 1j * rng.standard_normal((2, 3, 4))).astype(np.complex128)
X4 = rng.standard_normal((2, 2, 3, 2)).astype(np.float32)
XI = np.arange(6, dtype=np.int64).reshape(2, 3)


def _ri(m, y):
    """A complex result as (real, imag): real cotangents then cover the whole complex one."""
    return m.stack([y.real, y.imag], -1) if y.is_complex() else y


def _f(name, **kw):
    return lambda m, x: _ri(m, getattr(m.fft, name)(x, **kw))


C2C = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn"]
R2C = ["rfft", "rfft2", "rfftn", "ihfft", "ihfft2", "ihfftn"]
C2R = ["irfft", "irfft2", "irfftn", "hfft", "hfft2", "hfftn"]
ONE_D = {"fft", "ifft", "rfft", "irfft", "hfft", "ihfft"}


def _cases():
    cases = []
    for name in C2C + R2C + C2R:
        size = "n" if name in ONE_D else "s"
        sv = 6 if name in ONE_D else (2, 6)
        cases += [
            Case(f"{name}-f32", _f(name), (X,)),
            Case(f"{name}-f64", _f(name), (X64,), atol=1e-10),
            Case(f"{name}-int", _f(name), (XI,), grad=False),
            Case(f"{name}-{size}-pad", _f(name, **{size: sv}), (X,)),
            Case(f"{name}-{size}-trim", _f(name, **{size: 3 if name in ONE_D else (2, 3)}), (X,)),
        ]
        for norm in ("backward", "forward", "ortho"):
            cases.append(Case(f"{name}-{norm}", _f(name, norm=norm), (X,)))
        if name in ONE_D:
            cases.append(Case(f"{name}-dim0", _f(name, dim=0), (X,)))
        else:
            cases.append(Case(f"{name}-dims", _f(name, dim=(0,) if name.endswith("n") else (1, 0)),
                              (X,)))
        if name not in R2C:
            cases += [Case(f"{name}-complex", _f(name), (Z,)),
                      Case(f"{name}-c128-3d", _f(name), (Z3,), atol=1e-10)]
    cases += [
        Case("fftn-4dims", _f("fftn"), (X4,)),
        Case("rfftn-4dims", _f("rfftn"), (X4,)),
        Case("irfftn-4dims-s", _f("irfftn", s=(2, 2, 3, 4)), (X4,)),
        Case("hfftn-4dims", _f("hfftn"), (X4,)),
        Case("fftn-s-minus1", _f("fftn", s=(-1, 6)), (X,)),
        Case("fftn-0dim", _f("fftn"), (np.array(2.0, np.float32),)),
        Case("fftn-no-dims", _f("fftn", dim=()), (X,)),
        Case("irfft-n-odd", _f("irfft", n=7), (Z,)),
        Case("hfft-n-odd", _f("hfft", n=5), (Z,)),
        Case("ihfft-odd", _f("ihfft"), (X64[:, :5],), atol=1e-10),
        Case("fft-edge-values", _f("fft"), (np.array([0.0, np.inf, 1.0, -2.0], np.float32),),
             grad=False),
        Case("fft-nan", _f("fft"), (np.array([np.nan, 1.0, 2.0], np.float32),), grad=False),
        Case("roundtrip", lambda m, x: m.fft.irfft(m.fft.rfft(x), n=4), (X,)),
        Case("roundtrip-c2c", lambda m, x: _ri(m, m.fft.ifft(m.fft.fft(x) * 2)), (Z,)),
        Case("abs-spectrum", lambda m, x: m.fft.rfft(x).abs(), (X,), atol=1e-4, rtol=1e-4),
    ]
    return cases


@pytest.mark.parametrize("case", _cases(), ids=str)
def test_fft_table(case):
    check(case)


def test_grad_fn_names():
    got = []
    for m in (torch, torchlike):
        x = m.tensor(X, requires_grad=True)
        z = m.tensor(Z, requires_grad=True)
        outs = [m.fft.fft(x), m.fft.fft(z), m.fft.ifft(x), m.fft.fftn(x), m.fft.rfft(x),
                m.fft.rfft2(x), m.fft.irfft(z), m.fft.ihfft(x), m.fft.ihfft2(x), m.fft.hfftn(z),
                m.fft.ihfftn(x, dim=(0,)), m.fft.fftshift(x)]
        got.append([o.grad_fn.name() for o in outs])
    assert got[1] == got[0]


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "fftn", "ihfft", "hfft2"])
def test_out(name):
    res = []
    for m in (torch, torchlike):
        x = m.tensor(X)
        r = getattr(m.fft, name)(x)
        out = m.zeros(r.shape, dtype=r.dtype)
        got = getattr(m.fft, name)(x, out=out)
        assert got is out
        res.append(np.asarray(out.resolve_conj().tolist() if m is torch else out.tolist()))
    np.testing.assert_allclose(res[1], res[0], atol=1e-5)


def test_out_wider_dtype():
    res = []
    for m in (torch, torchlike):
        out = m.zeros(4, dtype=m.complex128)
        m.fft.fft(m.tensor(X[0]), out=out)
        assert out.dtype == m.complex128
        res.append(np.asarray(out.tolist()))
    np.testing.assert_allclose(res[1], res[0], atol=1e-5)


def test_out_requires_grad_raises():
    check_raises(lambda m, x: m.fft.fft(x.requires_grad_(), out=m.zeros(4, dtype=m.complex64)),
                 X[0], match="don't support automatic differentiation")


@pytest.mark.parametrize("fn,inputs,match", [
    (lambda m, x: m.fft.fft(x), (np.array(1.0, np.float32),), "has no dimensions"),
    (lambda m, x: m.fft.fft(x), (np.zeros(0, np.float32),), "Invalid number of data points"),
    (lambda m, x: m.fft.fft(x, n=0), (X,), "Invalid number of data points (0)"),
    (lambda m, x: m.fft.irfft(x), (np.ones(1, np.float32),), "Invalid number of data points"),
    (lambda m, x: m.fft.fft(x, norm="bad"), (X,), 'Invalid normalization mode: "bad"'),
    (lambda m, x: m.fft.fft(x.half()), (X,), "Unsupported dtype Half"),
    (lambda m, x: m.fft.rfft(x), (Z,), "rfft expects a real input tensor, but got ComplexFloat"),
    (lambda m, x: m.fft.rfft2(x), (Z,), "rfftn expects a real-valued input tensor"),
    (lambda m, x: m.fft.ihfftn(x), (Z,), "Only supports floating-point dtypes"),
    (lambda m, x: m.fft.irfftn(x), (np.array(2.0, np.float32),), "irfftn must transform at"),
    (lambda m, x: m.fft.irfft(x, out=m.zeros(6, dtype=m.complex64)), (X,),
     "irfft expects a floating point output tensor"),
    (lambda m, x: m.fft.ihfft(x), (Z,), "ihfft expects a real input tensor"),
    (lambda m, x: m.fft.fft(x, dim=2), (X,), "Dimension out of range"),
    (lambda m, x: m.fft.fft2(x), (X[0],), "Dimension out of range"),
    (lambda m, x: m.fft.fftn(x, s=(2,), dim=(0, 1)), (X,), "must have the same length"),
    (lambda m, x: m.fft.fftn(x, s=(2, 2, 2)), (X,), "but input tensor only has 2 dimensions"),
    (lambda m, x: m.fft.fftn(x, dim=(0, 0)), (X,), "FFT dims must be unique"),
    (lambda m, x: m.fft.rfftn(x), (np.array(2.0, np.float32),), "must transform at least one"),
    (lambda m, x: m.fft.fft(x, out=m.zeros(3, 4)), (X,), "fft expects a complex output tensor"),
    (lambda m, x: m.fft.fftshift(x), (np.array(2.0, np.float32),), "`shifts` required"),
])
def test_fft_errors(fn, inputs, match):
    check_raises(fn, *inputs, match=match)


# ------------------------------------------------------------------ fftfreq and shifts

FREQ = [
    Case("fftfreq-odd", lambda m: m.fft.fftfreq(5), (), grad=False),
    Case("fftfreq-even-d", lambda m: m.fft.fftfreq(6, 0.1), (), grad=False),
    Case("fftfreq-f64", lambda m: m.fft.fftfreq(7, 2.0, dtype=m.float64), (), grad=False),
    Case("fftfreq-zero-spacing", lambda m: m.fft.fftfreq(3, 0.0), (), grad=False),
    Case("rfftfreq-negative-n", lambda m: m.fft.rfftfreq(-1), (), grad=False),
    Case("fftfreq-empty", lambda m: m.fft.fftfreq(0), (), grad=False),
    Case("fftfreq-one", lambda m: m.fft.fftfreq(1), (), grad=False),
    Case("rfftfreq-odd", lambda m: m.fft.rfftfreq(5), (), grad=False),
    Case("rfftfreq-even", lambda m: m.fft.rfftfreq(8, 0.5, dtype=m.float64), (), grad=False),
    Case("fftfreq-requires-grad", lambda m: m.fft.fftfreq(4, requires_grad=True), (), grad=False),
    Case("fftfreq-out", lambda m: m.fft.fftfreq(5, out=m.zeros(5, dtype=m.float64)), (),
         grad=False),
    Case("fftshift", lambda m, x: m.fft.fftshift(x), (X,)),
    Case("fftshift-dim", lambda m, x: m.fft.fftshift(x, dim=1), (X,)),
    Case("fftshift-dims", lambda m, x: m.fft.fftshift(x, dim=(0, -1)), (X64,)),
    Case("fftshift-int", lambda m, x: m.fft.fftshift(x), (np.arange(5),)),
    Case("ifftshift", lambda m, x: m.fft.ifftshift(x), (X64,)),
    Case("ifftshift-dim", lambda m, x: m.fft.ifftshift(x, dim=0), (X,)),
    Case("shift-roundtrip", lambda m, x: m.fft.ifftshift(m.fft.fftshift(x)), (X64,)),
    Case("fftshift-complex", lambda m, x: _ri(m, m.fft.fftshift(x)), (Z,)),
    Case("fftshift-of-fftfreq", lambda m: m.fft.fftshift(m.fft.fftfreq(6)), (), grad=False),
]


@pytest.mark.parametrize("case", FREQ, ids=str)
def test_freq_table(case):
    check(case)


@pytest.mark.parametrize("fn,match", [
    (lambda m: m.fft.fftfreq(5, dtype=m.int64), "requires a floating point or complex dtype"),
    (lambda m: m.fft.fftfreq(-1), "negative dimension"),
    (lambda m: m.fft.fftfreq(4, dtype=m.complex64), "not implemented for 'ComplexFloat'"),
])
def test_freq_errors(fn, match):
    check_raises(fn, match=match)


@pytest.mark.parametrize("fn", [
    lambda m, x: (m.fft.rfft(x) * m.fft.rfft(x)).real,
    lambda m, x: m.fft.irfft(m.fft.fft(x) ** 2, n=4),
    lambda m, x: m.fft.fft2(x).abs(),
], ids=["rfft-square", "fft-pow-irfft", "fft2-abs"])
def test_fft_double_backward(fn):
    check_double_backward(fn, atol=1e-5, rtol=1e-5)
