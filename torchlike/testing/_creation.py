"""torch.testing.make_tensor: a tensor of random values in [low, high)."""
from __future__ import annotations

__all__ = ["make_tensor"]


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """Random values (torchlike's generator, not torch's stream) with torch's default ranges:
    floats in [-9, 9), integers in [-9, 10) (unsigned from 0), bools either value."""
    from .. import _dtype as D
    from .._creation import rand, randint
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    dtype = D.to_dtype(dtype)
    if dtype is D.bool:
        return randint(0, 2, shape, device=device).bool()
    if not (dtype.is_floating_point or dtype.is_complex):
        lo = (0 if dtype is D.uint8 else -9) if low is None else int(low)
        hi = 10 if high is None else int(high)
        t = randint(lo, hi, shape, device=device, dtype=dtype)
        if exclude_zero:
            t = t.masked_fill(t == 0, 1)
        return t
    lo = -9.0 if low is None else float(low)
    hi = 9.0 if high is None else float(high)
    real = dtype.to_real() if dtype.is_complex else dtype
    t = rand(*shape, dtype=real, device=device) * (hi - lo) + lo
    if dtype.is_complex:
        im = rand(*shape, dtype=real, device=device) * (hi - lo) + lo
        from .. import complex as _complex
        t = _complex(t, im)
    if exclude_zero:
        from .. import _dtype as _D  # noqa: F401
        t = t.masked_fill(t == 0, 1e-3)
    t = t.to(dtype).detach()
    if requires_grad:
        t.requires_grad_(True)
    return t
