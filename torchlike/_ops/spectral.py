"""Spectral helpers at the top level: ``stft``, ``istft`` and the window functions.

The windows are one op without tensor inputs (``window``); ``stft`` (pad, frame, window,
transform) and ``istft`` (inverse transform, window, overlap-add, envelope division) are each
one jitted op whose gradients (to the signal and to the window) come from jax. The only host
work is argument checking and istft's check that the window envelope never vanishes.

>>> import torchlike as torch
>>> torch.hann_window(4)
tensor([0.0000, 0.5000, 1.0000, 0.5000])
"""
from __future__ import annotations

import math
import warnings

import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np

from .. import _dtype as D
from .._tensor import Tensor
from .._registry import apply, defop
from ._surface import methods
from .factorizations import _user_stacklevel

__all__ = ["stft", "istft", "hann_window", "hamming_window", "blackman_window",
           "bartlett_window", "kaiser_window"]


# ------------------------------------------------------------------ windows

# Cephes' Chebyshev coefficients for exp(-x) I0(x) on [0, 8] and exp(-x) sqrt(x) I0(x) on
# (8, inf), as torch's ``calc_i0`` holds them (in the computation's type: float or double)
_I0_A = [
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
    9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
    1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
    -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
    1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
    1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1]
_I0_B = [
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
    3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
    2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1]


def _chbevl(x, coeffs):
    b0, b1, b2 = jnp.full_like(x, coeffs[0]), jnp.zeros_like(x), jnp.zeros_like(x)
    for c in coeffs[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + jnp.asarray(c, x.dtype)
    return jnp.asarray(0.5, x.dtype) * (b0 - b2)


def _calc_i0(x):
    """torch's ``calc_i0`` (the Cephes series, in x's type)."""
    x = jnp.abs(x)
    t = x.dtype.type
    small = jnp.exp(x) * _chbevl(x / t(2) - t(2), _I0_A)
    safe = jnp.where(x > 8, x, t(8))
    large = jnp.exp(safe) * _chbevl(t(32) / safe - t(2), _I0_B) / jnp.sqrt(safe)
    return jnp.where(x <= 8, small, large)


@defop("window", differentiable=False)
def _window(*, kind, n, periodic, a, b, dtype):
    # torch's factory kernels, op by op: an arange in the window's dtype, then in-place ops
    # each rounded to that dtype, computed in its "opmath" type (float for float16/bfloat16)
    # with the Python scalars rounded to the dtype; the kaiser kernel is one elementwise
    # function in the opmath type. (float32 values then agree with torch's to its cos/exp rounding;
    # float16/bfloat16 ones carry torch's own rounding, not the textbook value's.)
    dt = jnp.dtype(dtype)
    if n == 0:
        return jnp.zeros((0,), dt)
    if n == 1:
        return jnp.ones((1,), dt)
    m = n + 1 if periodic else n
    op = jnp.dtype(jnp.float32) if dt.itemsize < 4 else dt

    def rnd(x):                     # one torch op's result, in the window's dtype
        return x.astype(op).astype(dt).astype(op)

    def sc(v):                      # a Python scalar operand: ATen's Scalar overloads
        return jnp.asarray(v, op).astype(dt).astype(op)     # round it to the dtype first

    k = rnd(jnp.arange(m, dtype=op))
    if kind == "hamming":
        w = rnd(k * sc(math.pi * 2.0 / (m - 1)))
        w = rnd(jnp.cos(w))
        w = rnd(w * sc(-b))
        w = rnd(w + sc(a))
    elif kind == "blackman":
        t = rnd(k * sc(math.pi / (m - 1)))
        c4 = rnd(rnd(jnp.cos(rnd(t * sc(4)))) * sc(0.08))
        c2 = rnd(rnd(jnp.cos(rnd(t * sc(2)))) * sc(0.5))
        w = rnd(rnd(c4 - c2) + sc(0.42))
    elif kind == "bartlett":
        w = rnd(k * sc(2.0 / (m - 1)))
        half = ((m - 1) >> 1) + 1
        w = jnp.where(jnp.arange(m) >= half, rnd(sc(2) - w), w)
    else:  # kaiser, a = beta: calc_i0(beta * sqrt(|1 - ((k - alpha) / alpha)^2|)) / calc_i0(beta)
        alpha, beta = jnp.asarray((m - 1) / 2.0, op), jnp.asarray(a, op)
        r = (k - alpha) / alpha
        w = _calc_i0(beta * jnp.sqrt(jnp.abs(1 - r * r))) / _calc_i0(beta)
    return w[:n].astype(dt)


_CPP_NAMES = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool"}


def _make_window(name, kind, n, periodic, a, b, dtype, device, requires_grad):
    from .._creation import _finish
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    dtype = D.get_default_dtype() if dtype is None else D.to_dtype(dtype)
    if dtype.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for "
                                  f"'{D.legacy_name(dtype)}'")
    if not dtype.is_floating_point:
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype="
            f"{_CPP_NAMES.get(dtype.name, dtype.name)}, device=cpu, layout=Strided (default), "
            f"requires_grad={'true' if requires_grad else 'false (default)'}, "
            f"pinned_memory=false, memory_format=(nullopt))")
    w = apply(_window, kind=kind, n=n, periodic=bool(periodic), a=float(a), b=float(b),
              dtype=dtype.np)
    return _finish(w._data, device, requires_grad)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                requires_grad=False):
    """0.5 - 0.5 cos(2 pi k / (N - 1)); periodic windows use N = window_length + 1."""
    return _make_window("hann_window", "hamming", window_length, periodic, 0.5, 0.5, dtype,
                        device, requires_grad)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, requires_grad=False):
    """alpha - beta cos(2 pi k / (N - 1))."""
    return _make_window("hamming_window", "hamming", window_length, periodic, alpha, beta, dtype,
                        device, requires_grad)


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    return _make_window("blackman_window", "blackman", window_length, periodic, 0, 0, dtype,
                        device, requires_grad)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    requires_grad=False):
    return _make_window("bartlett_window", "bartlett", window_length, periodic, 0, 0, dtype,
                        device, requires_grad)


_KAISER_OVERLOADS = "".join(
    f" * (int window_length, {pre}*, torch.dtype dtype = None, torch.layout layout = None, "
    f"torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n"
    for pre in ("", "bool periodic, ", "bool periodic, float beta, "))


def kaiser_window(window_length, periodic=None, beta=None, *, dtype=None, layout=None,
                  device=None, requires_grad=False):
    """I0(beta sqrt(1 - ((k - a) / a)^2)) / I0(beta), a = (N - 1) / 2. As torch's overloads,
    ``beta`` comes after ``periodic``: a ``beta`` without it is refused."""
    if periodic is None and beta is not None:
        given = {"dtype": dtype, "layout": layout, "device": device,
                 "requires_grad": requires_grad or None}
        kw = "".join(f", {k}={type(v).__name__}" for k, v in given.items() if v is not None)
        raise TypeError(f"kaiser_window() received an invalid combination of arguments - got "
                        f"({type(window_length).__name__}, beta={type(beta).__name__}{kw}), "
                        f"but expected one of:\n{_KAISER_OVERLOADS}")
    return _make_window("kaiser_window", "kaiser", window_length,
                        True if periodic is None else periodic, 12.0 if beta is None else beta,
                        0, dtype, device, requires_grad)


# ------------------------------------------------------------------ stft

_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
              "circular": "wrap"}


@defop("stft", promote="common", grad_name="SqueezeBackward4")
def _stft(x, w, *, n_fft, hop, pad, pad_mode, onesided, normalized, as_real):
    # x: (B, L); w: (n_fft,) (already centred in n_fft)
    if pad:
        x = jnp.pad(x, ((0, 0), (pad, pad)), mode=pad_mode)
    n_frames = 1 + (x.shape[-1] - n_fft) // hop
    idx = jnp.arange(n_frames)[:, None] * hop + jnp.arange(n_fft)[None, :]
    frames = x[:, idx] * w
    norm = "ortho" if normalized else "backward"
    if onesided:
        y = jnp.fft.rfft(frames, axis=-1, norm=norm)
    else:
        y = jnp.fft.fft(frames, axis=-1, norm=norm)
    y = jnp.swapaxes(y, 1, 2)
    return jnp.stack([y.real, y.imag], -1) if as_real else y


def _desc(t):
    return f"torch.{D.legacy_name(t.dtype)}Tensor{{{list(t.shape)}}}" if t is not None \
        else "None"


def _opt(v):
    return "None" if v is None else str(int(v))


def _pad_window(window, win_length, n_fft, dtype):
    from .._creation import ones, zeros
    if window is None:
        window = ones(win_length, dtype=dtype)
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        from .join import cat
        window = cat([zeros(left, dtype=window.dtype), window,
                      zeros(n_fft - win_length - left, dtype=window.dtype)])
    return window


_WARNED: set = set()
_TRIGGERED = (" (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/"
              "SpectralOps.cpp:{}.)")


def _warn_once(what):
    """torch's TORCH_WARN_ONCE: True the first time a process asks for ``what``."""
    if what in _WARNED:
        return False
    _WARNED.add(what)
    return True


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """Short-time Fourier transform: (B?, N, T) complex, or (B?, N, T, 2) real with
    ``return_complex=False`` (deprecated in torch, as here)."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if window is None and _warn_once("stft_window"):
        warnings.warn("A window was not provided. A rectangular window will be applied,which is "
                      "known to cause spectral leakage. Other windows such as torch.hann_window "
                      "or torch.hamming_window are recommended to reduce spectral leakage.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`." + _TRIGGERED.format(835),
                      UserWarning)       # (torch's stft is Python: its own line)
    complex_in = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None:
        if not complex_in:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in a "
                               "future PyTorch release.")
        return_complex = True
    elif not return_complex and _warn_once("stft_return_complex"):
        warnings.warn("stft with return_complex=False is deprecated. In a future pytorch "
                      "release, stft will return complex tensors for all inputs, and "
                      "return_complex=False will raise an error.\nNote: you can still call "
                      "torch.view_as_real on the complex output to recover the old return "
                      "format." + _TRIGGERED.format(874),
                      UserWarning)       # (torch's stft is Python: its own line)
    hop = n_fft // 4 if hop_length is None else hop_length
    wl = n_fft if win_length is None else win_length
    shape = list(input.shape)
    pad = 0
    if center:
        pad = n_fft // 2
        # torch pads the signal (viewed as 3D) before its checks: a 3D signal is padded too
        # (and refused after), a 4D one refused by F.pad for a non-constant mode
        if input.ndim >= 4 and pad_mode != "constant":
            from ..nn.functional import pad as _pad
            _pad(input, (pad, pad), mode=pad_mode)
        if input.ndim >= 4:
            shape[-1] += 2 * pad
        elif input.ndim >= 1:
            if pad_mode not in _PAD_MODES:
                raise NotImplementedError(f"Unrecognised padding mode {pad_mode}")
            if pad_mode == "reflect" and pad >= shape[-1]:
                raise RuntimeError(
                    f"Argument #4: Padding size should be less than the corresponding input "
                    f"dimension, but got: padding ({pad}, {pad}) at dimension {2} of input "
                    f"{[1] * (3 - input.ndim) + shape}")
            shape[-1] += 2 * pad
    desc = (f"stft(torch.{D.legacy_name(input.dtype)}Tensor{shape}, n_fft={n_fft}, "
            f"hop_length={hop}, win_length={wl}, window={_desc(window)}, "
            f"normalized={int(bool(normalized))}, onesided={_opt(onesided)}, "
            f"return_complex={int(bool(return_complex))}, "
            f"align_to_window={_opt(align_to_window)}) : ")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(desc + "expected a tensor of floating point or complex values")
    if input.ndim not in (1, 2):
        raise RuntimeError(desc + "expected a 1D or 2D tensor")
    length = shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(desc + f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(desc + f"expected hop_length > 0, but got hop_length={hop}")
    if wl <= 0 or wl > n_fft:
        raise RuntimeError(desc + f"expected 0 < win_length <= n_fft, but got win_length={wl}")
    if window is not None and (window.ndim != 1 or window.shape[0] != wl):
        raise RuntimeError(desc + f"expected a 1D window tensor of size equal to win_length="
                           f"{wl}, but got window with size {list(window.shape)}")
    if align_to_window and wl < n_fft:
        raise NotImplementedError("torchlike: stft(align_to_window=True) with win_length < n_fft "
                                  "is not implemented")
    if onesided is None:
        onesided = not complex_in
    elif onesided and complex_in:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    real = D.float64 if input.dtype in (D.float64, D.complex128) else input.dtype
    if not real.is_floating_point:
        real = D.get_default_dtype()
    w = _pad_window(window, wl, n_fft, real)
    x = input if input.ndim == 2 else input.unsqueeze(0)
    y = apply(_stft, x, w, n_fft=n_fft, hop=hop, pad=pad, pad_mode=_PAD_MODES.get(pad_mode),
              onesided=bool(onesided), normalized=bool(normalized), as_real=not return_complex)
    return y if input.ndim == 2 else y.squeeze(0)


# ------------------------------------------------------------------ istft

@defop("istft", promote="common", grad_name="SqueezeBackward1")
def _istft(s, w, *, n_fft, hop, onesided, normalized, return_complex, start, end, pad_tail):
    # s: (B, F, T) complex; w: (n_fft,)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        frames = jnp.fft.ifft(s, axis=1, norm=norm)
    else:
        if not onesided:
            s = s[:, :n_fft // 2 + 1]
        frames = jnp.fft.irfft(s, n=n_fft, axis=1, norm=norm)
    if not return_complex:
        w = w.real                                    # promotion made it complex
    frames = jnp.swapaxes(frames, 1, 2) * w           # (B, T, n_fft)
    b, t = frames.shape[0], frames.shape[1]
    out_len = n_fft + hop * (t - 1)
    idx = (jnp.arange(t)[:, None] * hop + jnp.arange(n_fft)[None, :]).reshape(-1)
    y = jnp.zeros((b, out_len), frames.dtype).at[:, idx].add(frames.reshape(b, -1))
    env = jnp.zeros((out_len,), w.dtype).at[idx].add(jnp.tile(w * w, t))
    y = y[:, start:end] / env[start:end]
    if pad_tail:
        y = jnp.pad(y, ((0, 0), (0, pad_tail)))
    return y


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """Inverse of stft: overlap-add of the inverse transforms, divided by the window envelope."""
    if window is None and _warn_once("istft_window"):
        warnings.warn("A window was not provided. A rectangular window will be applied.Please "
                      "provide the same window used by stft to make the inversion lossless.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`." + _TRIGGERED.format(1035),
                      UserWarning, stacklevel=_user_stacklevel())   # (torch's istft is C++)
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    hop = n_fft // 4 if hop_length is None else hop_length
    wl = n_fft if win_length is None else win_length
    desc = (f"istft(CPU{D.legacy_name(input.dtype)}Type{list(input.shape)}, n_fft={n_fft}, "
            f"hop_length={hop}, win_length={wl}, window={_desc(window)}, "
            f"center={int(bool(center))}, normalized={int(bool(normalized))}, "
            f"onesided={_opt(onesided)}, length={_opt(length)}, "
            f"return_complex={int(bool(return_complex))}) : ")
    if input.numel() == 0:
        raise RuntimeError(desc + "input tensor cannot be empty.")
    if input.ndim not in (2, 3):
        raise RuntimeError(desc + f"expected a tensor with 3 or 4 dimensions, but got "
                           f"{input.ndim + 1}")
    fft_size = input.shape[-2]
    if onesided is None:
        onesided = fft_size != n_fft
    if onesided:
        if n_fft // 2 + 1 != fft_size:
            raise RuntimeError(desc + "expected the frequency dimension (3rd to the last) of the "
                               "input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                               f"{fft_size}")
    elif n_fft != fft_size:
        raise RuntimeError(desc + "expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= wl:
        raise RuntimeError(desc + "expected 0 < hop_length <= win_length")
    if not 0 < wl <= n_fft:
        raise RuntimeError(desc + "expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != wl):
        raise RuntimeError(desc + "Invalid window shape. window has to be 1D and length of "
                           "`win_length`")
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
    elif window is not None and window.dtype.is_complex:
        raise RuntimeError("Complex windows are incompatible with return_complex=False")
    real = D.float64 if input.dtype is D.complex128 else D.float32
    w = _pad_window(window, wl, n_fft, real)
    n_frames = input.shape[-1]
    out_len = n_fft + hop * (n_frames - 1)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = out_len - n_fft // 2 if center else out_len
    stop = min(end, out_len)
    # host check (torch's too): the window envelope must not vanish where the signal is kept
    wn = np.asarray(w.detach()._data)
    env = np.zeros(out_len, wn.dtype)
    for k in range(n_frames):
        env[k * hop:k * hop + n_fft] += wn * wn
    kept = env[start:stop]
    if kept.size == 0:
        raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() == 0."
                           " Specify the reduction dim with the 'dim' argument.")
    if np.abs(kept).min() < 1e-11:
        raise RuntimeError(desc[:-3] + " window overlap add min: 1\n[ CPUBoolType{} ]")
    pad_tail = 0
    if end > out_len:
        if _warn_once("istft_length"):
            warnings.warn("The length of signal is shorter than the length parameter. Result is "
                          "being padded with zeros in the tail. Please check your center and "
                          "hop_length settings." + _TRIGGERED.format(1199),
                          UserWarning, stacklevel=2)
        pad_tail = end - out_len
    x = input if input.ndim == 3 else input.unsqueeze(0)
    y = apply(_istft, x, w, n_fft=n_fft, hop=hop, onesided=bool(onesided),
              normalized=bool(normalized), return_complex=bool(return_complex), start=start,
              end=stop, pad_tail=pad_tail)
    return y if input.ndim == 3 else y.squeeze(0)


# ------------------------------------------------------------------ Tensor methods

def _stft_method(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
                 pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
                 align_to_window=None):
    return stft(self, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
                onesided, return_complex, align_to_window)


def _istft_method(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
                  normalized=False, onesided=None, length=None, return_complex=False):
    return istft(self, n_fft, hop_length, win_length, window, center, normalized, onesided,
                 length, return_complex)


METHODS = {"stft": _stft_method, "istft": _istft_method}
methods(**METHODS)
