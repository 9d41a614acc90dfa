"""Top-level function forms torch gives some Tensor methods and constructors (``torch.detach``,
``torch.fill``, ``torch.as_strided_scatter``, ``torch.empty_strided``, ``torch.frombuffer``,
``torch.set_default_tensor_type``) and the recurrent cells (``torch.lstm_cell`` ...)."""
from __future__ import annotations

from .. import _dtype as D
from ._surface import method, methods, public

__all__ = ["detach", "fill", "as_strided_scatter", "empty_strided", "empty_permuted",
           "frombuffer", "set_default_tensor_type", "renorm", "rnn_tanh_cell", "rnn_relu_cell",
           "lstm_cell", "gru_cell"]


def detach(input):
    return input.detach()


def fill(input, value):
    """A copy of ``input`` with every element ``value`` (the out-of-place ``fill_``)."""
    return input.clone().fill_(value) if not input.requires_grad else \
        input * 0 + value


@public(method=True)
def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """``input`` with ``src`` written where ``input.as_strided(size, stride, offset)`` reads."""
    out = input.clone()
    out.as_strided(size, stride, storage_offset).copy_(src)
    return out


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """``empty(size)`` reporting ``stride`` (its layout, when non-overlapping and dense: the
    values of torchlike's tensors are row-major arrays, their strides metadata; DIFFERENCES.md:
    strides)."""
    from .._creation import empty
    from .._strides import is_non_overlapping_and_dense, set_layout
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality "
                           f"of strides ({len(stride)})")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    t = empty(*size, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad,
              pin_memory=pin_memory)
    if is_non_overlapping_and_dense(size, stride):
        set_layout(t, stride)
    return t


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """``empty(size)`` laid out in memory in ``physical_layout``'s order of dims (outermost
    first)."""
    size, n = tuple(size), len(size)
    if len(physical_layout) != n:
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {n} is not equal to "
                           f"len(physical_layout) = {len(physical_layout)}")
    seen = set()
    for i, d in enumerate(physical_layout):
        if not 0 <= d < n:
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and {n - 1}, "
                               f"but got {d} at index {i}).  NB: negative dims not currently "
                               f"supported; file an issue if you want it.")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    stride, acc = [0] * len(size), 1
    for d in reversed(physical_layout):
        stride[d] = acc
        acc *= max(size[d], 1)
    return empty_strided(size, stride, dtype=dtype, layout=layout, device=device,
                         requires_grad=requires_grad, pin_memory=pin_memory)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A tensor of ``buffer``'s bytes read as ``dtype`` (a copy: DIFFERENCES.md)."""
    import numpy as np
    from .._creation import tensor
    dt = D.to_dtype(dtype)
    n = len(memoryview(buffer).cast("B"))
    # torch's checks (tensor_new.cpp), in its order
    if n == 0 or count == 0:
        raise ValueError(f"both buffer length ({n}) and count ({count}) must not be 0")
    if offset < 0 or offset >= n:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({n} bytes) minus 1")
    size = dt.itemsize
    if count < 0 and (n - offset) % size:
        raise ValueError(f"buffer length ({n - offset} bytes) after offset ({offset} bytes) "
                         f"must be a multiple of element size ({size})")
    actual = (n - offset) // size if count < 0 else count
    if offset + actual * size > n:
        raise ValueError(f"requested buffer length ({actual} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({n} bytes)")
    arr = np.frombuffer(buffer, dtype=dt.np, count=actual, offset=offset)
    return tensor(arr, dtype=dt, requires_grad=requires_grad)


def set_default_tensor_type(t):
    """The deprecated ``torch.set_default_tensor_type(torch.DoubleTensor)``: sets the default
    floating dtype (CUDA types raise: no CUDA tensor types here)."""
    import warnings
    from .typeinfo import _TENSOR_TYPES
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    name = t if isinstance(t, str) else "torch." + t.__name__
    if name.startswith("torch.cuda."):
        raise RuntimeError("torchlike: CUDA tensor types are not available")
    d = _TENSOR_TYPES.get(name[6:])
    if d is None:
        raise TypeError(f"invalid type: '{name}'")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    D.set_default_dtype(d)


@public(method=True, inplace=True, out=True)
def renorm(input, p, dim, maxnorm):
    """Each slice along ``dim`` with ``p``-norm over ``maxnorm`` rescaled to ``maxnorm``."""
    from .. import linalg
    if input.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} "
                           f"dimensions")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = dim % input.dim()
    dims = [k for k in range(input.dim()) if k != d]
    norms = linalg.vector_norm(input, p, dim=dims, keepdim=True)
    return input * _renorm_factor(norms, maxnorm)


def _renorm_factor(norms, maxnorm):
    from .binary_math import where
    return where(norms > maxnorm, maxnorm / (norms + 1e-7), 1.)     # (a NaN norm: kept)


# ------------------------------------------------------------------ recurrent cells

def _linear(x, w, b):
    y = x.matmul(w.t())
    return y if b is None else y + b


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return (_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh)).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return (_linear(input, w_ih, b_ih) + _linear(hx, w_hh, b_hh)).relu()


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    h, c = hx
    gates = _linear(input, w_ih, b_ih) + _linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c2 = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c2.tanh(), c2


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    gi = _linear(input, w_ih, b_ih)
    gh = _linear(hx, w_hh, b_hh)
    ir, iz, in_ = gi.chunk(3, -1)
    hr, hz, hn = gh.chunk(3, -1)
    r = (ir + hr).sigmoid()
    z = (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    return (1 - z) * n + z * hx
