"""torch.testing.make_tensor: a tensor of random values in [low, high)."""
from __future__ import annotations

__all__ = ["make_tensor"]


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """Random values (torchlike's generator, not torch's stream) with torch's default ranges:
    floats in [-9, 9), integers in [-9, 10) (unsigned from 0), bools either value."""
    from .. import _dtype as D
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    dtype = D.to_dtype(dtype)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous} and "
                         f"memory_format={memory_format}")
    if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype}")
    t = _values(shape, dtype, device, low, high, exclude_zero)
    # torch's layouts: every other element of a tensor twice as long, or a memory format
    if noncontiguous and t.numel() > 1:
        t = t.repeat_interleave(2, dim=-1)[..., ::2]
    elif memory_format is not None:
        t = t.clone(memory_format=memory_format)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _values(shape, dtype, device, low, high, exclude_zero):
    from .. import _dtype as D
    from .._creation import rand, randint
    if dtype is D.bool:
        return randint(0, 2, shape, device=device).bool()
    if not (dtype.is_floating_point or dtype.is_complex):
        lo = (0 if dtype is D.uint8 else -9) if low is None else low
        hi = 10 if high is None else high
        _check_range(lo, hi)
        lo, hi = int(lo), int(hi)
        t = randint(lo, hi, shape, device=device, dtype=dtype)
        if exclude_zero:
            t = t.masked_fill(t == 0, 1)
        return t
    lo = -9 if low is None else low
    hi = 9 if high is None else high
    _check_range(lo, hi)
    lo, hi = float(lo), float(hi)
    real = dtype.to_real() if dtype.is_complex else dtype
    t = rand(*shape, dtype=real, device=device) * (hi - lo) + lo
    if dtype.is_complex:
        im = rand(*shape, dtype=real, device=device) * (hi - lo) + lo
        from .. import complex as _complex
        t = _complex(t, im)
    if exclude_zero:
        from .. import _dtype as _D  # noqa: F401
        t = t.masked_fill(t == 0, 1e-3)
    return t.to(dtype).detach()


def _check_range(low, high):
    import math
    if math.isnan(low) or math.isnan(high):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
