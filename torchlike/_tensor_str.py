"""``repr``/``str`` of tensors, character for character as PyTorch prints them.

The algorithm follows torch's printing rules (precision 4, linewidth 80, summarise above 1000
elements with 3 edge items; integer mode, fixed or scientific notation chosen from the nonzero
finite values), computed on numpy copies of the data.
"""
from __future__ import annotations

import contextlib
import math

import numpy as np

from . import _dtype as D
from ._dtype import c_type_format  # noqa: F401  (torchlike.return_types's)


class _PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _PrintOptions()



def _node_name(fn):
    """A grad_fn as a tensor's repr names it: without the C++ namespace ``name()`` gives
    torch's own nodes (``<CopySlices>``)."""
    return fn.name().rsplit("::", 1)[-1]

def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """torch.set_printoptions."""
    if profile == "default":
        PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, 1000
        PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
    elif profile == "short":
        PRINT_OPTS.precision, PRINT_OPTS.threshold = 2, 1000
        PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 80
    elif profile == "full":
        PRINT_OPTS.precision, PRINT_OPTS.threshold = 4, math.inf
        PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 3, 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """torch._tensor_str.get_printoptions: the current options, as ``set_printoptions``
    keywords."""
    return {"precision": PRINT_OPTS.precision, "threshold": PRINT_OPTS.threshold,
            "edgeitems": PRINT_OPTS.edgeitems, "linewidth": PRINT_OPTS.linewidth,
            "sci_mode": PRINT_OPTS.sci_mode}


@contextlib.contextmanager
def printoptions(**kwargs):
    """torch._tensor_str.printoptions: ``set_printoptions(**kwargs)`` inside the block, the
    previous options restored after it."""
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    def __init__(self, values: np.ndarray, floating: bool, counted=None):
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        flat = values.reshape(-1)
        p = PRINT_OPTS.precision
        if not floating:
            for v in flat.tolist():
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        vals = flat.astype(np.float64)
        # ``counted``: which values choose the notation, where torch's isfinite/ne(0) differ
        nz = vals[np.isfinite(vals) & (vals != 0) if counted is None else counted.reshape(-1)]
        if nz.size == 0:
            return
        a = np.abs(nz)
        mn, mx = float(a.min()), float(a.max())
        self.int_mode = bool(np.all(nz == np.ceil(nz)))
        self.sci_mode = ((mx / mn > 1000.0 or mx > 1.0e8 or mn < 1.0e-4)
                         if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode)
        for v in nz.tolist():
            if self.sci_mode:
                s = f"{v:.{p}e}"
            elif self.int_mode:
                s = f"{v:.0f}" + "."
            else:
                s = f"{v:.{p}f}"
            self.max_width = max(self.max_width, len(s))

    def width(self):
        return self.max_width

    def format(self, value):
        p = PRINT_OPTS.precision
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{value:{self.max_width}.{p}e}"
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{value:.{p}f}"
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


def _fmt_val(v, f1, f2):
    if f2 is None:
        return f1.format(v)
    real_str = f1.format(v.real)
    imag_str = (f2.format(v.imag) + "j").lstrip()
    if imag_str[0] in "+-":
        return real_str + imag_str
    return real_str + "+" + imag_str


def _vector_str(a, indent, summarize, f1, f2):
    element_length = f1.width() + 2
    if f2 is not None:
        element_length += f2.width() + 1
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    e = PRINT_OPTS.edgeitems
    if summarize and not e:
        data = ["..."]
    elif summarize and a.shape[0] > 2 * e:
        data = ([_fmt_val(v, f1, f2) for v in a[:e].tolist()] + [" ..."]
                + [_fmt_val(v, f1, f2) for v in a[-e:].tolist()])
    else:
        data = [_fmt_val(v, f1, f2) for v in a.tolist()]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _str_with_formatter(a, indent, summarize, f1, f2):
    if a.ndim == 0:
        return _fmt_val(a.item(), f1, f2)
    if a.ndim == 1:
        return _vector_str(a, indent, summarize, f1, f2)
    e = PRINT_OPTS.edgeitems
    if summarize and a.shape[0] > 2 * e:
        idx = list(range(e)) + [None] + list(range(a.shape[0] - e, a.shape[0]))
    else:
        idx = list(range(a.shape[0]))
    slices = ["..." if i is None else _str_with_formatter(a[i], indent + 1, summarize, f1, f2)
              for i in idx]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized(a):
    e = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return np.concatenate([a[:e], a[-e:]]) if a.shape[0] > 2 * e else a
    if not e:
        return a[tuple(slice(0, 0) for _ in range(a.ndim))]
    rows = (list(range(e)) + list(range(a.shape[0] - e, a.shape[0]))
            if a.shape[0] > 2 * e else range(a.shape[0]))
    if not rows:                # (a negative edgeitems: no rows, torch.stack's error)
        raise RuntimeError("stack expects a non-empty TensorList")
    return np.stack([_summarized(a[i]) for i in rows])


def _edges(a):
    """``a`` cut to what a summarized print reads: along each dimension longer than
    ``2 * edgeitems + 1``, its edge items and the one after the first (which stands for the
    "..."), so the conversions below copy no more than is printed."""
    e = PRINT_OPTS.edgeitems
    if not isinstance(e, int) or e < 0:     # (an odd value fails later, as torch's)
        return a
    for d, n in enumerate(a.shape):
        if n > 2 * e + 1:
            a = np.take(a, np.r_[0:e + 1, n - e:n], axis=d)
    return a


def _values_str(a: np.ndarray, dt, indent):
    if a.size == 0:
        return "[]"
    summarize = a.size > PRINT_OPTS.threshold
    if summarize:
        a = _edges(a)
    src = _summarized(a) if summarize else a
    if dt.is_complex:
        f1 = _Formatter(src.real, True)
        f2 = _Formatter(src.imag, True)
        return _str_with_formatter(a, indent, summarize, f1, f2)
    counted = None
    if dt is D.float8_e8m0fnu:
        # torch prints it from its own isfinite (true for its NaN) and ne(0) (0 converts to
        # 2**-127, the zero byte), so a NaN among the values makes min/max NaN: fixed notation
        counted = src.view(np.uint8) != 0
        a, src = a.astype(np.float32), src.astype(np.float32)
    elif dt in D.FLOAT8:
        a, src = a.astype(np.float16), src.astype(np.float16)     # torch prints them as half
    if dt is D.bfloat16 or dt is D.float16 or dt in D.FLOAT8:
        a = a.astype(np.float64)
        src = src.astype(np.float64)
    return _str_with_formatter(a, indent, summarize,
                               _Formatter(src, dt.is_floating_point, counted), None)


def _tensor_str(self, indent):
    """torch._tensor_str._tensor_str: the text of ``self``'s values (``[]`` when it has none),
    its lines after the first indented by ``indent``."""
    return _values_str(np.asarray(self._data), self.dtype, indent)


def _add_suffixes(tensor_str, suffixes, indent):
    parts = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for s in suffixes:
        if last_line_len + len(s) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + s)
            last_line_len = indent + len(s)
        else:
            parts.append(", " + s)
            last_line_len += len(s) + 2
    parts.append(")")
    return "".join(parts)


def tensor_repr(t, tensor_contents=None):
    """torch's ``_str``: ``tensor(<values>, <suffixes>)``, the suffixes wrapped at the line
    width; ``tensor_contents`` (a string) stands for the values (``Tensor.__repr__``'s
    keyword)."""
    c = type(t)
    plain = bool(c.__dict__.get("_plain_repr"))
    # torch's: "tensor(" for a Tensor or a Parameter, a subclass's own name otherwise
    prefix = "tensor(" if plain else c.__name__ + "("
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    meta = t.device.type == "meta"
    dt = t.dtype
    default = D.get_default_dtype()
    # (torch's default complex dtype: complex128 beside a float64 default, else complex64)
    has_default = dt in (default, D.complex128 if default is D.float64 else D.complex64,
                         D.int64, D.bool)
    body = tensor_contents
    if meta or t.numel() == 0:
        # no values to print (a meta tensor's are "..."): the size where it is not (0,), the
        # dtype where it is not the default float dtype
        if meta or t.dim() != 1:
            suffixes.append(f"size={tuple(t.shape)}")
        if dt is not default:
            suffixes.append("dtype=" + repr(dt))
        if body is None:
            body = "..." if meta else "[]"
    else:
        if not PRINT_OPTS.edgeitems:        # (torch: no edge items shown, so the size)
            suffixes.append(f"size={tuple(t.shape)}")
        if not has_default:
            suffixes.append("dtype=" + repr(dt))
        if body is None:
            body = _tensor_str(t, indent)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{_node_name(t.grad_fn)}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    fw = t.__dict__.get("_fw")           # a forward AD tangent (torchlike.autograd.forward_ad)
    if fw is not None and fw[0]["alive"]:
        suffixes.append(f"tangent={fw[1]!r}")
    out = _add_suffixes(prefix + body, suffixes, indent)
    if not plain:
        from .nn.parameter import Parameter
        if isinstance(t, Parameter):     # (a Parameter subclass: torch's ``Parameter(...)``)
            out = f"Parameter({out})"
    return out


def _str(self, *, tensor_contents=None):
    """torch._tensor_str._str: what ``Tensor.__repr__`` prints."""
    return tensor_repr(self, tensor_contents=tensor_contents)
