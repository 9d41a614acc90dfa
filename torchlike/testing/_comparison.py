"""torch.testing.assert_close: torch's pairing rules, default tolerances and message format.

Tensors are compared with tensors, Python scalars with scalars, sequences and mappings item by
item (a failure names the item: "The failure occurred for item [0]"). Values are compared on
the host with numpy in the tensors' dtype, as torch's comparison does.
"""
from __future__ import annotations

import collections.abc
import numbers

import numpy as np

__all__ = ["assert_close", "assert_allclose"]

# (rtol, atol) by dtype name
_DTYPE_PRECISIONS = {"float16": (0.001, 1e-5), "bfloat16": (0.016, 1e-5),
                     "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
                     "complex32": (0.001, 1e-5), "complex64": (1.3e-6, 1e-5),
                     "complex128": (1e-7, 1e-7)}


class _Fail(Exception):
    def __init__(self, type, msg, id=()):
        self.type, self.msg, self.id = type, msg, id


def _tolerances(dtypes, rtol, atol):
    if (rtol is None) ^ (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return rtol, atol
    rs, as_ = zip(*(_DTYPE_PRECISIONS.get(d, (0.0, 0.0)) for d in dtypes))
    return max(rs), max(as_)


def _mismatch_msg(default_identifier, identifier, extra, abs_diff, abs_idx, atol, rel_diff,
                  rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol):
        msg = (f"{kind.title()} difference: {diff}" if idx is None
               else f"Greatest {kind} difference: {diff} at index {idx}")
        if not equality:
            msg += f" (up to {tol} allowed)"
        return msg + "\n"

    if identifier is None:
        identifier = default_identifier
    elif callable(identifier):
        identifier = identifier(default_identifier)
    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += f"{extra.strip()}\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol)
    msg += diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual, expected, rtol, atol, identifier=None):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", identifier, f"Expected {expected} but got {actual}.",
                         abs_diff, None, atol, rel_diff, None, rtol)


def _isclose(a, e, rtol, atol, equal_nan):
    if a.dtype.kind in "biu" and e.dtype.kind in "biu" and rtol == 0 and atol == 0:
        return a == e
    return np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)


def _np_dtype_name(t):
    return str(t.dtype).replace("torch.", "")


# ------------------------------------------------------------------ pairs

def _compare_scalars(actual, expected, rtol, atol, equal_nan, check_dtype):
    if check_dtype and type(actual) is not type(expected):
        raise _Fail(AssertionError,
                    f"The (d)types do not match: {type(actual)} != {type(expected)}.")
    dt = {bool: None, int: None, float: "float64", complex: "complex128"}
    names = [dt.get(type(x), "float64" if isinstance(x, numbers.Real) and not isinstance(
        x, numbers.Integral) else None) for x in (actual, expected)]
    rtol, atol = _tolerances([n for n in names], rtol, atol)
    if actual == expected:
        return
    if equal_nan and isinstance(actual, (float, complex)) and actual != actual \
            and expected != expected:
        return
    if abs(actual - expected) <= atol + rtol * abs(expected):
        return
    raise _Fail(AssertionError, _scalar_msg(actual, expected, rtol, atol))


def _compare_tensors(actual, expected, rtol, atol, equal_nan, check_device, check_dtype,
                     check_layout, check_stride):
    from .._tensor import Tensor
    if actual.shape != expected.shape:
        raise _Fail(AssertionError, f"The values for attribute 'shape' do not match: "
                                    f"{actual.shape} != {expected.shape}.")
    if check_layout and repr(actual.layout) != repr(expected.layout):
        raise _Fail(AssertionError, f"The values for attribute 'layout' do not match: "
                                    f"{actual.layout} != {expected.layout}.")
    elif check_stride and actual.stride() != expected.stride():
        raise _Fail(AssertionError, f"The values for attribute 'stride()' do not match: "
                                    f"{actual.stride()} != {expected.stride()}.")
    if check_device and actual.device != expected.device:
        raise _Fail(AssertionError, f"The values for attribute 'device' do not match: "
                                    f"{actual.device} != {expected.device}.")
    if check_dtype and actual.dtype is not expected.dtype:
        raise _Fail(AssertionError, f"The values for attribute 'dtype' do not match: "
                                    f"{actual.dtype} != {expected.dtype}.")
    rtol, atol = _tolerances([_np_dtype_name(actual), _np_dtype_name(expected)], rtol, atol)
    a = np.asarray(actual.detach()._data)
    e = np.asarray(expected.detach()._data)
    if a.dtype != e.dtype:
        common = np.promote_types(a.dtype if a.dtype.kind != "V" else np.float32,
                                  e.dtype if e.dtype.kind != "V" else np.float32)
        a, e = a.astype(common), e.astype(common)
    kind_dtype = a.dtype
    if a.dtype.kind == "V" or a.dtype.name == "bfloat16":
        a, e = a.astype(np.float32), e.astype(np.float32)
        kind_dtype = np.dtype(np.float32)
    matches = _isclose(a, e, rtol, atol, equal_nan)
    if np.all(matches):
        return
    if a.ndim == 0:
        msg = _scalar_msg(a.item(), e.item(), rtol, atol)
        raise _Fail(AssertionError, msg)
    n = matches.size
    bad = n - int(matches.sum())
    extra = f"Mismatched elements: {bad} / {n} ({bad / n:.1%})"
    af, ef, mf = a.ravel(), e.ravel(), matches.ravel()
    if kind_dtype.kind in "biu":
        af, ef = af.astype(np.int64), ef.astype(np.int64)
    with np.errstate(all="ignore"):
        abs_diff = np.abs(af - ef)
        abs_diff[mf] = 0
        rel_diff = abs_diff / np.abs(ef)
        rel_diff[mf] = 0
    if abs_diff.dtype.kind in "iu":
        rel_diff = rel_diff.astype(np.float32)
    ia = _argmax_nan(abs_diff)
    ir = _argmax_nan(rel_diff)
    raise _Fail(AssertionError, _mismatch_msg(
        "Tensor-likes", None, extra, abs_diff[ia].item(), _index(np.unravel_index(ia, a.shape)),
        atol, rel_diff[ir].item(), _index(np.unravel_index(ir, a.shape)), rtol))


def _argmax_nan(x):
    """torch.max's index: the first NaN if any, else the first maximum."""
    if x.dtype.kind in "fc":
        nans = np.flatnonzero(np.isnan(x))
        if nans.size:
            return int(nans[0])
    return int(np.argmax(x))


def _index(idx):
    return tuple(int(i) for i in idx)


def _compare(actual, expected, id, opts):
    try:
        return _compare_pair(actual, expected, id, opts)
    except _Fail as f:
        if not f.id:
            f.id = id
        raise


def _compare_pair(actual, expected, id, opts):
    from .._tensor import Tensor
    if isinstance(actual, Tensor) or isinstance(expected, Tensor):
        if not (isinstance(actual, Tensor) and isinstance(expected, Tensor)):
            raise _Fail(TypeError, f"No comparison pair was able to handle inputs of type "
                                   f"{_torch_type(actual)} and {_torch_type(expected)}.")
        if not opts["allow_subclasses"] and type(actual) is not type(expected) and \
                not (_is_param(actual) or _is_param(expected)):
            raise _Fail(TypeError, f"No comparison pair was able to handle inputs of type "
                                   f"{_torch_type(actual)} and {_torch_type(expected)}.")
        return _compare_tensors(actual, expected, opts["rtol"], opts["atol"],
                                opts["equal_nan"], opts["check_device"], opts["check_dtype"],
                                opts["check_layout"], opts["check_stride"])
    if isinstance(actual, np.ndarray) and isinstance(expected, np.ndarray):
        from .._creation import tensor
        return _compare(tensor(actual), tensor(expected), id, opts)
    if actual is None and expected is None:
        return None
    scalar = (bool, int, float, complex)
    if isinstance(actual, scalar) and isinstance(expected, scalar):
        return _compare_scalars(actual, expected, opts["rtol"], opts["atol"],
                                opts["equal_nan"], opts["check_dtype"])
    if _is_seq(actual) and _is_seq(expected):
        if len(actual) != len(expected):
            raise _Fail(AssertionError, f"The length of the sequences mismatch: {len(actual)} "
                                        f"!= {len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, id + (i,), opts)
        return None
    if isinstance(actual, collections.abc.Mapping) and \
            isinstance(expected, collections.abc.Mapping):
        ak, ek = set(actual.keys()), set(expected.keys())
        if ak != ek:
            missing, extra = ek - ak, ak - ek
            raise _Fail(AssertionError, f"The keys of the mappings do not match:\n"
                                        f"Missing keys in the actual mapping: "
                                        f"{sorted(missing, key=repr)}\n"
                                        f"Additional keys in the actual mapping: "
                                        f"{sorted(extra, key=repr)}")
        for k in actual:
            _compare(actual[k], expected[k], id + (k,), opts)
        return None
    raise _Fail(TypeError, f"No comparison pair was able to handle inputs of type "
                           f"{_torch_type(actual)} and {_torch_type(expected)}.")


def _is_param(t):
    return type(t).__name__ == "Parameter"


def _is_seq(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, (str, bytes))


def _torch_type(x):
    """Type names as torch prints them (torchlike.Tensor is torch.Tensor)."""
    from .._tensor import Tensor
    if isinstance(x, Tensor) and type(x) is Tensor:
        return "<class 'torch.Tensor'>"
    return str(type(x))


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Raise AssertionError unless ``actual`` and ``expected`` are close (torch's rules).

    >>> torchlike.testing.assert_close(torchlike.tensor([1.0]), torchlike.tensor([1.0]))
    """
    _tolerances(["float32"], rtol, atol)     # validates the rtol/atol pair early
    opts = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
                check_stride=check_stride)
    try:
        _compare(actual, expected, (), opts)
    except _Fail as f:
        text = f.msg
        if callable(msg):
            text = msg(text)
        elif msg is not None:
            text = msg
        elif f.id:
            text += f"\n\nThe failure occurred for item {''.join(f'[{i!r}]' for i in f.id)}"
        raise f.type(text) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated torch.testing.assert_allclose (equal_nan defaults to True)."""
    import warnings
    warnings.warn("`torch.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `torch.testing.assert_close()` "
                  "instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    from .._tensor import Tensor
    from .._creation import tensor
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances([_np_dtype_name(actual), _np_dtype_name(expected)], None, None)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)
