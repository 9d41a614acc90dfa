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

__all__ = ["stft", "istft", "hann_window", "hamming_window", "blackman_window",
           "bartlett_window", "kaiser_window"]


# ------------------------------------------------------------------ windows

@defop("window", differentiable=False)
def _window(*, kind, n, periodic, a, b, dtype):
    if n == 0:
        return jnp.zeros((0,), dtype)
    if n == 1:
        return jnp.ones((1,), dtype)
    m = n + 1 if periodic else n
    k = jnp.arange(m, dtype=jnp.float64)
    if kind == "hamming":
        w = a - b * jnp.cos(k * (2 * math.pi / (m - 1)))
    elif kind == "blackman":
        t = k * (math.pi / (m - 1))
        w = 0.08 * jnp.cos(4 * t) - 0.5 * jnp.cos(2 * t) + 0.42
    elif kind == "bartlett":
        t = k * (2.0 / (m - 1))
        half = ((m - 1) >> 1) + 1
        w = jnp.where(k >= half, 2 - t, t)
    else:  # kaiser, a = beta
        alpha = (m - 1) / 2.0
        w = jsp.i0(a * jnp.sqrt(jnp.maximum(1 - ((k - alpha) / alpha) ** 2, 0))) / jsp.i0(a)
    return w[:n].astype(dtype)


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


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, requires_grad=False):
    """I0(beta sqrt(1 - ((k - a) / a)^2)) / I0(beta), a = (N - 1) / 2."""
    return _make_window("kaiser_window", "kaiser", window_length, periodic, beta, 0, dtype,
                        device, requires_grad)


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
                      UserWarning, stacklevel=2)
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
                      UserWarning, stacklevel=2)
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
                      UserWarning, stacklevel=2)
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
