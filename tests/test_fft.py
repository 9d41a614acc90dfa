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
            Case(f"{name}-{size}-pad", _f(name, **{size: sv}), (X,)),
            Case(f"{name}-{size}-trim", _f(name, **{size: 3 if name in ONE_D else (2, 3)}), (X,)),
        ]
        if name in ("fft", "rfft", "irfft", "fft2", "ihfftn", "hfft"):
            cases.append(Case(f"{name}-int", _f(name), (XI,), grad=False))
        for norm in ("forward", "ortho"):        # "backward" is the default rows
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


# ------------------------------------------------------------------ windows

WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
def test_windows(name):
    for n in (0, 1, 2, 5, 8):
        for periodic in (True, False):
            check(Case(f"{name}-{n}-{periodic}", lambda m: getattr(m, name)(n, periodic), (),
                       grad=False))
    check(Case(f"{name}-f64", lambda m: getattr(m, name)(7, dtype=m.float64), (), grad=False,
               atol=1e-12))
    check(Case(f"{name}-f16", lambda m: getattr(m, name)(6, dtype=m.float16), (), grad=False,
               atol=2e-3))
    check(Case(f"{name}-requires-grad", lambda m: getattr(m, name)(4, requires_grad=True), (),
               grad=False))
    check_raises(lambda m: getattr(m, name)(-1), match="requires non-negative window_length")
    check_raises(lambda m: getattr(m, name)(4, dtype=m.int64),
                 match=f"{name} expects floating point dtypes, got: TensorOptions(dtype=long int")
    check_raises(lambda m: getattr(m, name)(4, dtype=m.complex64), match="not implemented for")


def test_window_parameters():
    check(Case("hamming-alpha-beta", lambda m: m.hamming_window(9, False, 0.5, 0.4), (),
               grad=False))
    check(Case("kaiser-beta", lambda m: m.kaiser_window(9, False, 5.0), (), grad=False))
    check(Case("kaiser-beta-periodic", lambda m: m.kaiser_window(10, True, beta=0.5), (),
               grad=False))
    check(Case("kaiser-periodic-by-name", lambda m: m.kaiser_window(10, periodic=False,
                                                                    beta=0.5), (), grad=False))
    # (torch's overloads take beta after periodic: a beta alone is refused, whole message)
    want = None
    try:
        torch.kaiser_window(7, beta=5.0)
    except TypeError as e:
        want = str(e)
    with pytest.raises(TypeError) as got:
        torchlike.kaiser_window(7, beta=5.0)
    assert str(got.value) == want


# ------------------------------------------------------------------ stft / istft

SIG = rng.standard_normal((2, 20)).astype(np.float32)
SIG1 = rng.standard_normal(16).astype(np.float64)
HANN8 = np.asarray(torch.hann_window(8).numpy())
ZSIG = (rng.standard_normal(16) + 1j * rng.standard_normal(16)).astype(np.complex64)


def _stft(**kw):
    kw.setdefault("return_complex", True)
    return lambda m, x, w: _ri(m, m.stft(x, 8, window=w, **kw))


STFT = [
    Case("stft", _stft(), (SIG, HANN8)),
    Case("stft-1d-f64", _stft(hop_length=3), (SIG1, HANN8.astype(np.float64)), atol=1e-10),
    Case("stft-no-center", _stft(center=False), (SIG, HANN8)),
    Case("stft-twosided", _stft(onesided=False), (SIG, HANN8)),
    Case("stft-normalized", _stft(normalized=True), (SIG, HANN8)),
    Case("stft-win-length", lambda m, x, w: _ri(m, m.stft(x, 8, 4, 6, w, return_complex=True)),
         (SIG, HANN8[:6])),
    Case("stft-constant-pad", _stft(pad_mode="constant", hop_length=5), (SIG, HANN8)),
    Case("stft-replicate-pad", _stft(pad_mode="replicate"), (SIG, HANN8)),
    Case("stft-circular-pad", _stft(pad_mode="circular"), (SIG, HANN8)),
    Case("stft-real-output", _stft(return_complex=False), (SIG, HANN8)),
    Case("stft-complex-input", _stft(), (ZSIG, HANN8)),
    Case("stft-method", lambda m, x, w: _ri(m, x.stft(8, 2, window=w, return_complex=True)),
         (SIG, HANN8)),
    Case("stft-n-fft-eq-length", lambda m, x, w: _ri(m, m.stft(x, 20, window=w, center=False,
                                                              return_complex=True)),
         (SIG, np.ones(20, np.float32))),
    Case("stft-mixed-dtypes", _stft(), (SIG, HANN8.astype(np.float64))),
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", STFT, ids=str)
def test_stft_table(case):
    check(case)


def _spec(x, **kw):
    return torch.stft(torch.tensor(x), 8, window=torch.hann_window(8, dtype=torch.float64
                                                                    if x.dtype == np.float64
                                                                    else torch.float32),
                      return_complex=True, **kw).numpy()


SPEC = _spec(SIG)
SPEC1 = _spec(SIG1, hop_length=3)


def _istft(**kw):
    return lambda m, s, w: m.istft(s, 8, window=w, **kw)


ISTFT = [
    Case("istft", _istft(), (SPEC, HANN8)),
    Case("istft-1d-f64", _istft(hop_length=3), (SPEC1, HANN8.astype(np.float64)), atol=1e-10),
    Case("istft-length-short", _istft(length=13), (SPEC, HANN8)),
    Case("istft-length-long", _istft(length=27), (SPEC, HANN8)),
    Case("istft-normalized", _istft(normalized=True), (SPEC, HANN8)),
    Case("istft-ones-no-center", lambda m, s, w: m.istft(s, 8, window=w, center=False),
         (_spec(SIG, center=False), np.ones(8, np.float32))),
    Case("istft-twosided", lambda m, s, w: m.istft(s, 8, window=w, onesided=False),
         (_spec(SIG, onesided=False), HANN8)),
    Case("istft-return-complex", lambda m, s, w: _ri(m, m.istft(s, 8, window=w,
                                                                return_complex=True)),
         (_spec(SIG, onesided=False), HANN8)),
    Case("istft-method", lambda m, s, w: s.istft(8, window=w), (SPEC, HANN8)),
    Case("istft-win-length", lambda m, s, w: m.istft(s, 8, 2, 6, w),
         (_spec(SIG), HANN8[:6] + 0.5)),
    Case("roundtrip", lambda m, x, w: m.istft(m.stft(x, 8, window=w, return_complex=True), 8,
                                              window=w), (SIG, HANN8)),
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("case", ISTFT, ids=str)
def test_istft_table(case):
    check(case)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("fn,inputs,match", [
    (lambda m, x: m.stft(x, 8), (SIG,), "requires the return_complex parameter"),
    (lambda m, x: m.stft(x, 21, center=False, return_complex=True), (SIG,),
     "expected 0 < n_fft < 20, but got n_fft=21"),
    (lambda m, x: m.stft(x, 8, window=m.ones(5), return_complex=True), (SIG,),
     "expected a 1D window tensor of size equal to win_length=8, but got window with size [5]"),
    (lambda m, x: m.stft(x, 8, win_length=9, return_complex=True), (SIG,),
     "stft(torch.FloatTensor[2, 28], n_fft=8, hop_length=2, win_length=9, window=None"),
    (lambda m, x: m.stft(x, 8, hop_length=0, return_complex=True), (SIG,),
     "expected hop_length > 0, but got hop_length=0"),
    (lambda m, x: m.stft(x[None], 8, return_complex=True), (SIG,), "expected a 1D or 2D tensor"),
    (lambda m, x: m.stft(x.long(), 8, return_complex=True), (SIG,),
     "expected a tensor of floating point or complex values"),
    (lambda m, x: m.stft(x, 8, onesided=True, return_complex=True), (ZSIG,),
     "Cannot have onesided output if window or input is complex"),
    (lambda m, x: m.stft(x, 8, pad_mode="bogus", return_complex=True), (SIG,),
     "Unrecognised padding mode bogus"),
    (lambda m, x: m.stft(x, 8, return_complex=True, align_to_window=True), (SIG,),
     "align_to_window should only be set when center = false"),
    (lambda m, x: m.stft(x[:, :3], 8, return_complex=True), (SIG,),
     "Padding size should be less than the corresponding input dimension"),
    (lambda m, s: m.istft(s.real, 8), (SPEC,), "istft requires a complex-valued input tensor"),
    (lambda m, s: m.istft(s[None, None], 8), (SPEC,), "expected a tensor with 3 or 4 dim"),
    (lambda m, s: m.istft(s[:, :4], 8), (SPEC,), "to match n_fft / 2 + 1 when onesided=True"),
    (lambda m, s: m.istft(s, 8, onesided=False), (SPEC,), "to match n_fft when onesided=False"),
    (lambda m, s: m.istft(s, 8, hop_length=9), (SPEC,), "expected 0 < hop_length <= win_length"),
    (lambda m, s: m.istft(s, 8, win_length=9, hop_length=2), (SPEC,),
     "expected 0 < win_length <= n_fft"),
    (lambda m, s: m.istft(s, 8, window=m.ones(5)), (SPEC,), "Invalid window shape"),
    (lambda m, s: m.istft(s, 8, window=m.ones(8, dtype=m.complex64)), (SPEC,),
     "Complex windows are incompatible with return_complex=False"),
    (lambda m, s: m.istft(s, 8, return_complex=True), (SPEC,), "Cannot have onesided output"),
    (lambda m, s: m.istft(s, 8, window=m.hann_window(8), center=False), (SPEC,),
     "window overlap add min: 1"),
    (lambda m, s: m.istft(s[:, :, :0], 8), (SPEC,), "input tensor cannot be empty."),
])
def test_stft_errors(fn, inputs, match):
    check_raises(fn, *inputs, match=match)


def test_stft_warnings():
    # torch's own warnings are TORCH_WARN_ONCE (seen once per process): compared in fresh
    # processes, each call made twice
    from oracle import fresh_process_outputs
    code = """
import sys, warnings
import numpy as np
m = __import__(sys.argv[1])
warnings.simplefilter("always")
sig = m.tensor(np.sin(np.arange(32.) * 0.3).astype(np.float32))
for _ in range(2):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        spec = m.stft(sig, 8, return_complex=True)
        m.stft(sig, 8, window=m.hann_window(8), return_complex=False)
        m.istft(spec, 8)
        m.istft(spec, 8, window=m.hann_window(8), length=40)
    print([str(x.message) for x in w])
"""
    out = fresh_process_outputs(code)
    assert out["torchlike"] == out["torch"] and out["torch"].count("\n") == 2, out


def test_stft_align_to_window_with_short_window_not_implemented():
    x = torchlike.tensor(SIG)
    with pytest.raises(NotImplementedError, match="align_to_window"):
        torchlike.stft(x, 8, win_length=6, window=torchlike.hann_window(6), center=False,
                       align_to_window=True, return_complex=True)
    # with a full-length window the alignment changes nothing: compared with torch
    check(Case("stft-align-full", lambda m, x, w: _ri(m, m.stft(
        x, 8, window=w, center=False, align_to_window=True, return_complex=True)), (SIG, HANN8)))
