"""Statistics of samples: covariance, correlation, histograms."""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from .. import return_types as _return_types
from .._tensor import Tensor
from .._registry import apply, defop
from ._surface import public

__all__ = ["cov", "corrcoef", "histogram", "histogramdd"]


@defop("cov", promote="float", grad_name="SqueezeBackward0")
def _cov(x, *w, correction, has_f, has_a):
    x = jnp.atleast_2d(x)
    fw = w[0] if has_f else None
    aw = w[-1] if has_a else None
    if fw is None and aw is None:
        n = x.shape[1]
        mean = jnp.mean(x, axis=1, keepdims=True)
        xc = x - mean
        c = xc @ jnp.conj(xc).T / jnp.maximum(n - correction, 0)
    else:
        wt = jnp.ones(x.shape[1], x.real.dtype)
        if fw is not None:
            wt = wt * fw
        if aw is not None:
            wt = wt * aw
        wsum = jnp.sum(wt)
        mean = jnp.sum(x * wt, axis=1, keepdims=True) / wsum
        xc = x - mean
        if correction == 0:
            norm = wsum
        elif aw is None:
            norm = wsum - correction
        else:
            norm = wsum - correction * jnp.sum(wt * aw) / wsum
        c = (xc * wt) @ jnp.conj(xc).T / jnp.maximum(norm, 0)
    return jnp.squeeze(c)


def _host_true(t):
    """The value of a one-element bool tensor read on the host; None while torchlike.compile
    traces (the check is then left to the program's values)."""
    from .._compile._trace import is_tracer
    if is_tracer(t._data):
        return None
    return bool(np.asarray(t._data))


@public(method=True)
def cov(input, *, correction=1, fweights=None, aweights=None):
    """torch's cov, with its checks of the weights (dtype, shape, sign, sum) in its order."""
    import warnings
    from .factorizations import _tname, _user_stacklevel, triggered
    if isinstance(correction, bool) or not isinstance(correction, (int, np.integer)):
        from .._creation import _tp_name
        raise TypeError(f"cov(): argument 'correction' must be int, not {_tp_name(correction)}")
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    if input.dtype.name == "bool":
        raise RuntimeError("cov(): bool dtype is not supported for input")
    n_obs = input.shape[-1] if input.dim() == 2 else input.numel()
    for name, w in (("fweights", fweights), ("aweights", aweights)):
        if w is None:
            continue
        if w.dim() > 1:
            raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                               f"{name} with {w.dim()} dimensions")
        if name == "fweights" and (w.dtype.is_floating_point or w.dtype.is_complex or
                                   w.dtype.name == "bool"):
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got "
                               f"fweights with {_tname(w.dtype)} dtype")
        if name == "aweights" and not w.dtype.is_floating_point:
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got "
                               f"aweights with {_tname(w.dtype)} dtype")
        if w.numel() != n_obs:
            raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                               f"observations in the input but got {w.numel()} != {n_obs}")
        if n_obs and _host_true(w.detach().min().ge(0)) is False:     # (a NaN too)
            raise RuntimeError(f"cov(): {name} cannot be negative")
    ws = [w for w in (fweights, aweights) if w is not None]
    if ws:
        wt = ws[0].detach() if len(ws) == 1 else fweights.detach() * aweights.detach()
        wsum = wt.sum()
        if _host_true(wsum.ne(0)) is False:
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
        if correction == 0:
            low = None
        elif aweights is not None:
            low = (wsum - correction * (wt * aweights.detach()).sum() / wsum).le(0)
        else:
            low = (wsum - correction).le(0)
        low = None if low is None else _host_true(low)
    else:
        low = n_obs - correction <= 0
    if low:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations." + triggered("Correlation.cpp:129"),
                      UserWarning, stacklevel=_user_stacklevel())
    return apply(_cov, input, *ws, correction=int(correction), has_f=fweights is not None,
                 has_a=aweights is not None)


@public(method=True)
def corrcoef(input):
    if input.dim() > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.dim()} dimensions")
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    stddev = d.sqrt() if not c.dtype.is_complex else d.real.sqrt()
    c = c / stddev[:, None]
    c = c / stddev[None, :]
    return c.clamp(-1, 1) if not c.dtype.is_complex else c


histogram_result = _return_types.maker("histogram")


@defop("histogram", differentiable=False)
def _histogram(a, edges, *rest, density, has_w):
    w = rest[-1] if has_w else None
    hist, _ = jnp.histogram(a.reshape(-1), bins=edges,
                            weights=None if w is None else w.reshape(-1))
    hist = hist.astype(a.dtype)
    if density:             # (torch's steps, in the input's dtype)
        hist = hist / hist.sum() / jnp.diff(edges)
    return hist, edges


def _histogram_checks(input, bins, weight):
    """torch's (histogramdd kernel's) dtype checks: C++ type names for a mismatch, legacy names
    for an unsupported dtype."""
    from .._dtype import float32, float64, legacy_name
    from .._tensor import _CPP
    if isinstance(bins, Tensor) and bins.dtype is not input.dtype:
        raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the "
                           f"same dtype, but got input with dtype {_CPP[input.dtype.name]} and "
                           f"bins for dimension 0 with dtype {_CPP[bins.dtype.name]}")
    if isinstance(weight, Tensor) and weight.dtype is not input.dtype:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and "
                           f"weight tensor should have the same dtype, but got "
                           f"input({_CPP[input.dtype.name]}), and "
                           f"weight({_CPP[weight.dtype.name]})")
    if isinstance(bins, Tensor):
        if not input.dtype.is_floating_point:
            raise NotImplementedError(f"\"histogram_cpu\" not implemented for "
                                      f"'{legacy_name(input.dtype)}'")
    elif input.dtype not in (float32, float64):
        raise NotImplementedError(f"\"histogramdd\" not implemented for "
                                  f"'{legacy_name(input.dtype)}'")


def _linear_edges(lo_hi, bins, dtype):
    """torch's edges of ``bins`` equal bins over ``lo_hi`` (an empty range widened by 0.5 each
    way): its linspace in the input's dtype."""
    from .._creation import _linspace_np
    lo, hi = lo_hi
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return _linspace_np(lo, hi, bins + 1, dtype)


def _outer_edges(cols, rng, dims):
    """torch's select_outer_bin_edges: per dimension the range (given, else the data's: ``cols``
    holds each dimension's samples, else [0, 1] for no data), checked finite and ordered."""
    import math
    import numpy as np
    out = []
    for k in builtins_range(dims):
        if rng is not None:
            lo, hi = float(rng[2 * k]), float(rng[2 * k + 1])
        elif cols[k].size:
            col = np.asarray(cols[k], np.float64)
            lo, hi = (math.nan, math.nan) if np.isnan(col).any() else \
                (float(col.min()), float(col.max()))
        else:
            lo, hi = 0.0, 1.0
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension {k}'s range [{lo:g}, {hi:g}] is "
                               f"not finite")
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{lo:g} max {hi:g} for dimension {k}")
        out.append((lo, hi))
    return out


@public(method=True, out=True)
def histogram(input, bins=100, *, range=None, weight=None, density=False):
    from .._creation import tensor
    _histogram_checks(input, bins, weight)
    if not isinstance(bins, Tensor):
        import numpy as np
        if int(bins) <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {int(bins)} for "
                               f"dimension 0")
        data = None if range is not None else [np.asarray(input.detach()._data).reshape(-1)]
        bins = tensor(_linear_edges(_outer_edges(data, range, 1)[0], int(bins), input.dtype))
    rest = [weight] if weight is not None else []
    h, e = apply(_histogram, input, bins, *rest, density=bool(density),
                 has_w=weight is not None)
    return histogram_result(h, e)


histogramdd_result = _return_types.maker("histogramdd")


def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    import numpy as np
    from .._creation import tensor
    a = np.asarray(input.detach().numpy())
    d = a.shape[-1]
    b = [np.asarray(x.numpy()) for x in bins] if isinstance(bins, (list, tuple)) and bins and \
        isinstance(bins[0], Tensor) else bins
    if b is bins:       # (bin counts, not edges: torch's range checks, then its edges)
        rng = _outer_edges([a.reshape(-1, d)[:, k] for k in builtins_range(d)], range, d)
        counts = [int(bins)] * d if isinstance(bins, int) else [int(n) for n in bins]
        b = [_linear_edges(r, n, input.dtype) for r, n in zip(rng, counts)]
    h, edges = np.histogramdd(a.reshape(-1, d), bins=b,
                              weights=None if weight is None else
                              np.asarray(weight.numpy()).reshape(-1))
    h, edges = h.astype(a.dtype), [e.astype(a.dtype) for e in edges]
    if density:             # (torch's steps, in the input's dtype)
        with np.errstate(all="ignore"):
            h = h / h.sum(dtype=a.dtype)
            for k, e in enumerate(edges):
                shape = [1] * d
                shape[k] = -1
                h = h / np.diff(e).reshape(shape)
    return histogramdd_result(tensor(h), tuple(tensor(e) for e in edges))


builtins_range = __builtins__["range"] if isinstance(__builtins__, dict) else __builtins__.range
