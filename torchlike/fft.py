"""torchlike.fft: torch.fft's discrete Fourier transforms.

Three ops, as in ATen: ``fft_c2c`` (complex to complex), ``fft_r2c`` (real to one-sided
complex) and ``fft_c2r`` (one-sided complex to real). Each resizes its input (``n``/``s``: zero
padding or trimming) and normalises inside the one jitted function; the gradient is jax's,
which is torch's in torch's complex convention (the engine conjugates at the boundary).

>>> import torchlike as torch
>>> torch.fft.rfft(torch.tensor([1.0, 2.0, 3.0, 4.0]))
tensor([10.+0.j, -2.+2.j, -2.+0.j])
"""
from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
from jax import lax

from . import _dtype as D
from ._registry import apply, defop
from ._ops.rearrange import roll as _roll
from ._storage import write_out as _write_out
from ._tensor import Tensor

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]

_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


# ------------------------------------------------------------------ jax kernels

def _resize(x, dims, sizes):
    """Zero-pad or trim ``x`` along ``dims`` to ``sizes`` (torch's ``n``/``s``)."""
    for d, n in zip(dims, sizes):
        have = x.shape[d]
        if n < have:
            x = lax.slice_in_dim(x, 0, n, axis=d)
        elif n > have:
            pad = [(0, 0)] * x.ndim
            pad[d] = (0, n - have)
            x = jnp.pad(x, pad)
    return x


def _c2c_axes(x, dims, forward, norm):
    # jnp.fft.fftn transforms at most three axes per call; norms multiply across groups
    f = jnp.fft.fftn if forward else jnp.fft.ifftn
    for i in range(0, len(dims), 3):
        x = f(x, axes=dims[i:i + 3], norm=norm)
    return x


# torch's grad_fn depends on the route ATen takes (a 1-d transform of a real signal is an r2c,
# an inverse one a conj of it): the calls pass its name as ``gname``
@defop("fft_c2c", grad_name=lambda kw: kw["gname"], saves=False)
def _c2c(x, *, dims, sizes, norm, forward, ctype, gname):
    x = _resize(x.astype(ctype), dims, sizes)
    return _c2c_axes(x, dims, forward, norm) if dims else x


@defop("fft_r2c", grad_name=lambda kw: kw["gname"], saves=False)
def _r2c(x, *, dims, sizes, norm, forward, rtype, gname):
    # forward: rfftn; otherwise ihfftn = conj(rfftn) with the inverse's normalisation
    x = _resize(x.astype(rtype), dims, sizes)
    y = jnp.fft.rfft(x, axis=dims[-1], norm=norm if forward else _SWAP[norm])
    if len(dims) > 1:
        y = _c2c_axes(y, dims[:-1], True, norm if forward else _SWAP[norm])
    return y if forward else jnp.conj(y)


@defop("fft_c2r", grad_name="FftC2RBackward0", saves=False)
def _c2r(x, *, dims, sizes, norm, forward, ctype):
    # not forward: irfftn; forward: hfftn = irfftn(conj(x)) with the forward's normalisation
    x = x.astype(ctype)
    if forward:
        x = jnp.conj(x)
        norm = _SWAP[norm]
    x = _resize(x, dims, sizes[:-1] + (sizes[-1] // 2 + 1,))
    if len(dims) > 1:
        x = _c2c_axes(x, dims[:-1], False, norm)
    return jnp.fft.irfft(x, n=sizes[-1], axis=dims[-1], norm=norm)


# ------------------------------------------------------------------ argument handling

_COMPLEX_OF = {"float32": D.complex64, "float64": D.complex128}
_REAL_OF = {"complex64": D.float32, "complex128": D.float64}


def _norm(norm):
    if norm is None:
        return "backward"
    if norm not in _SWAP:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _types(x):
    """(real dtype, complex dtype) the transform of ``x`` computes in (torch's promotion)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"fft: argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    d = x.dtype
    if d.is_complex:
        if d.name not in _REAL_OF:
            raise RuntimeError(f"Unsupported dtype {D.legacy_name(d)}")
        return _REAL_OF[d.name], d
    if not d.is_floating_point:
        d = D.get_default_dtype()
    if d.name not in _COMPLEX_OF:
        raise RuntimeError(f"Unsupported dtype {D.legacy_name(d)}")
    return d, _COMPLEX_OF[d.name]


def _wrap(d, ndim):
    if ndim == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    if not -ndim <= d < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {d})")
    return d % ndim


def _dims_sizes(x, s, dim, name, default_all=True):
    """Resolve torch's (``s``, ``dim``) pair: wrapped unique dims and the signal sizes
    (``None`` entries of sizes mean "as the input", resolved by the caller)."""
    ndim = x.ndim
    if isinstance(dim, int):
        dim = (dim,)
    if s is not None:
        s = (s,) if isinstance(s, int) else tuple(int(v) for v in s)
    if dim is not None:
        dims = tuple(_wrap(int(d), ndim) for d in dim)
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        dims = tuple(range(ndim - len(s), ndim))
    else:
        dims = tuple(range(ndim)) if default_all else ()
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    sizes = tuple(None for _ in dims) if s is None else tuple(None if v == -1 else v for v in s)
    return dims, sizes


def _check_sizes(sizes):
    for n in sizes:
        if n < 1:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _finish(r, out, name):
    if out is None:
        return r
    if r.dtype.is_complex and not out.dtype.is_complex:
        raise RuntimeError(f"{name} expects a complex output tensor, but got "
                           f"{D.legacy_name(out.dtype)}")
    if not r.dtype.is_complex and out.dtype.is_complex:
        raise RuntimeError(f"{name} expects a floating point output tensor, but got "
                           f"{D.legacy_name(out.dtype)}")
    return _write_out(r, out, name)


def _c2c_call(x, s, dim, norm, forward, out, name):
    _, ctype = _types(x)
    norm = _norm(norm)
    dims, sizes = dim
    sizes = tuple(x.shape[d] if n is None else n for d, n in zip(dims, sizes))
    _check_sizes(sizes)
    gname = "FftC2CBackward0"
    if len(dims) == 1 and name in ("fft", "ifft") and not x.dtype.is_complex:
        gname = "FftR2CBackward0" if forward else "ConjBackward0"
    r = apply(_c2c, x, dims=dims, sizes=sizes, norm=norm, forward=forward, ctype=ctype.np,
              gname=gname)
    return _finish(r, out, name)


def _r2c_call(x, s, dim, norm, forward, out, name):
    if x.dtype.is_complex:
        t = D.legacy_name(x.dtype)
        if name in ("rfft", "ihfft"):
            raise RuntimeError(f"{name} expects a real input tensor, but got {t}")
        if name.startswith("rfft"):
            raise RuntimeError(f"rfftn expects a real-valued input tensor, but got {t}")
        raise RuntimeError(f"Only supports floating-point dtypes, but found: {t}")
    rtype, _ = _types(x)
    norm = _norm(norm)
    dims, sizes = dim
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    sizes = tuple(x.shape[d] if n is None else n for d, n in zip(dims, sizes))
    _check_sizes(sizes)
    gname = ("FftR2CBackward0" if forward else
             "ConjBackward0" if len(dims) == 1 else "FftC2CBackward0")
    r = apply(_r2c, x, dims=dims, sizes=sizes, norm=norm, forward=forward, rtype=rtype.np,
              gname=gname)
    return _finish(r, out, name)


def _c2r_call(x, s, dim, norm, forward, out, name):
    _, ctype = _types(x)
    norm = _norm(norm)
    dims, sizes = dim
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    last = sizes[-1]
    if last is None:
        last = 2 * (x.shape[dims[-1]] - 1)
    sizes = tuple(x.shape[d] if n is None else n for d, n in zip(dims[:-1], sizes[:-1])) + (last,)
    _check_sizes(sizes)
    r = apply(_c2r, x, dims=dims, sizes=sizes, norm=norm, forward=forward, ctype=ctype.np)
    return _finish(r, out, name)


def _one(x, n, dim):
    # (torch's one-dimensional transforms take no -1 for "as the input": n=-1 is refused)
    return ((_wrap(int(dim), x.ndim),), (None if n is None else int(n),))


# ------------------------------------------------------------------ the public functions

def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """One-dimensional discrete Fourier transform."""
    _types(input)
    return _c2c_call(input, n, _one(input, n, dim), norm, True, out, "fft")


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """One-dimensional inverse discrete Fourier transform."""
    _types(input)
    return _c2c_call(input, n, _one(input, n, dim), norm, False, out, "ifft")


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional discrete Fourier transform (all dims by default)."""
    _types(input)
    return _c2c_call(input, s, _dims_sizes(input, s, dim, "fftn"), norm, True, out, "fftn")


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    _types(input)
    return _c2c_call(input, s, _dims_sizes(input, s, dim, "ifftn"), norm, False, out, "ifftn")


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    _types(input)
    return _c2c_call(input, s, _dims_sizes(input, s, dim, "fft2"), norm, True, out, "fft2")


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    _types(input)
    return _c2c_call(input, s, _dims_sizes(input, s, dim, "ifft2"), norm, False, out, "ifft2")


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The transform of a real signal: the n // 2 + 1 non-negative frequencies."""
    _types(input)
    return _r2c_call(input, n, _one(input, n, dim), norm, True, out, "rfft")


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of rfft: a real signal of length n (default 2 * (m - 1))."""
    _types(input)
    return _c2r_call(input, n, _one(input, n, dim), norm, False, out, "irfft")


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    _types(input)
    return _r2c_call(input, s, _dims_sizes(input, s, dim, "rfftn"), norm, True, out, "rfftn")


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    _types(input)
    return _c2r_call(input, s, _dims_sizes(input, s, dim, "irfftn"), norm, False, out,
                     "irfftn")


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    _types(input)
    return _r2c_call(input, s, _dims_sizes(input, s, dim, "rfft2"), norm, True, out, "rfft2")


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    _types(input)
    return _c2r_call(input, s, _dims_sizes(input, s, dim, "irfft2"), norm, False, out,
                     "irfft2")


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The transform of a Hermitian-symmetric signal given by its first half: real output."""
    _types(input)
    return _c2r_call(input, n, _one(input, n, dim), norm, True, out, "hfft")


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """The inverse of hfft: the n // 2 + 1 first values of ifft of a real signal."""
    _types(input)
    return _r2c_call(input, n, _one(input, n, dim), norm, False, out, "ihfft")


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    _types(input)
    return _c2r_call(input, s, _dims_sizes(input, s, dim, "hfftn"), norm, True, out, "hfftn")


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    _types(input)
    return _r2c_call(input, s, _dims_sizes(input, s, dim, "ihfftn"), norm, False, out,
                     "ihfftn")


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    _types(input)
    return _c2r_call(input, s, _dims_sizes(input, s, dim, "hfft2"), norm, True, out, "hfft2")


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    _types(input)
    return _r2c_call(input, s, _dims_sizes(input, s, dim, "ihfft2"), norm, False, out,
                     "ihfft2")


# ------------------------------------------------------------------ frequencies and shifts

@defop("fftfreq", differentiable=False)
def _freq(*, n, scale, rfft, dtype):
    # torch: arange, then scaled by 1 / (n * d) in the output dtype
    if rfft:
        k = jnp.arange(n)
    else:
        k = jnp.concatenate([jnp.arange((n - 1) // 2 + 1), jnp.arange(-(n // 2), 0)])
    return k.astype(dtype) * jnp.asarray(scale, dtype)


def _freq_call(name, n, d, out, dtype, device, requires_grad, rfft):
    from ._creation import _finish as _make
    if dtype is None:
        dtype = out.dtype if out is not None else D.get_default_dtype()
    dtype = D.to_dtype(dtype)
    if not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    if dtype.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for "
                                  f"'{D.legacy_name(dtype)}'")
    from ._creation import _tp_name
    if isinstance(n, Tensor) and n.numel() == 1 and n.dtype.category == D._INT:
        n = int(n)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"fft_{name}(): argument 'n' (position 1) must be int, not "
                        f"{_tp_name(n)}")
    if isinstance(d, str) or d is None:
        raise TypeError(f"fft_{name}(): argument 'd' (position 2) must be float, not "
                        f"{_tp_name(d)}")
    n = int(n)
    count = int(n / 2) + 1 if rfft else n        # C++ integer division truncates
    if count < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {count}: [{count}]")
    nd = n * float(d)
    scale = 1.0 / nd if nd else math.copysign(float("inf"), nd)
    r = _make(apply(_freq, n=count, scale=scale, rfft=rfft, dtype=dtype.np)._data, device,
              requires_grad)
    return r if out is None else _write_out(r, out, name)


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of fft for a signal of size n and sample spacing d."""
    return _freq_call("fftfreq", n, d, out, dtype, device, requires_grad, False)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """The non-negative sample frequencies of rfft."""
    return _freq_call("rfftfreq", n, d, out, dtype, device, requires_grad, True)


def _shift_dims(input, dim):
    """fftshift's dims, wrapped with torch's IndexError (roll's)."""
    if dim is None:
        return tuple(range(input.ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if input.ndim == 0 and dims:
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    from ._tensor import _wrap_dim
    return tuple(_wrap_dim(d, input.ndim) for d in dims)


def fftshift(input, dim=None):
    """Move the zero frequency to the centre (a roll by n // 2 along ``dim``)."""
    dims = _shift_dims(input, dim)
    if not dims:
        raise RuntimeError("`shifts` required")
    return _roll(input, tuple(input.shape[d] // 2 for d in dims), dims)


def ifftshift(input, dim=None):
    """The inverse of fftshift (a roll by (n + 1) // 2)."""
    dims = _shift_dims(input, dim)
    if not dims:
        raise RuntimeError("`shifts` required")
    return _roll(input, tuple((input.shape[d] + 1) // 2 for d in dims), dims)


# torch's argument parsing (``torchlike.linalg.torch_binding``): errors name ``fft_<name>``
def _bind_all():
    from .linalg import torch_binding
    g = globals()
    for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
        g[name] = torch_binding(g[name], "fft_" + name, ("input:T", "n=", "dim=", "norm="))
    for name in ("fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2", "fftn", "ifftn",
                 "rfftn", "irfftn", "hfftn", "ihfftn"):
        g[name] = torch_binding(g[name], "fft_" + name, ("input:T", "s=", "dim=", "norm="))
    for name in ("fftshift", "ifftshift"):
        g[name] = torch_binding(g[name], "fft_" + name, ("input:T", "dim="))


_bind_all()

from . import overrides as _overrides  # noqa: E402
_overrides.make_overridable(globals(), "torch.fft")  # (__torch_function__: torchlike.overrides)
