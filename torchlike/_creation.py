"""Tensor creation: tensor, as_tensor, from_numpy, zeros/ones/full/empty, arange, linspace, eye,
the ``*_like`` family and the random constructors rand, randn, randint, randperm."""
from __future__ import annotations

import builtins
import functools
import math
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from . import _device
from . import _fused
from . import _dtype as D
from . import _random
from . import _tiers
from . import _vmap_levels
from ._meta import NO_DATA_ERROR, MetaArray, is_meta
from ._tensor import Tensor
from ._storage import with_out, write_out

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty",
           "zeros_like", "ones_like", "full_like", "empty_like", "arange", "linspace",
           "logspace", "eye", "rand", "randn", "randint", "randperm", "rand_like", "randn_like",
           "randint_like", "is_tensor", "scalar_tensor"]


def _finish(arr, device=None, requires_grad=False, pin_memory=False, layout=None):
    """A new leaf tensor over ``arr`` on ``device`` (the default device when None)."""
    if pin_memory:
        _pin_error()
    if layout is not None and str(layout) != "torch.strided":
        raise NotImplementedError(f"layout={layout}: torchlike tensors are dense (torch.strided)")
    t = Tensor._make(_device.put(arr, device))
    if requires_grad:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t.requires_grad_(True)
    return t


def _pin_error():
    if _device.accelerator_type() is None:
        raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; no "
                           "pinned memory allocator is available on this system.")
    raise NotImplementedError("pin_memory=True: jax manages host buffers itself; pass "
                              "pin_memory=False (transfers with .to(device) still work)")


def _infer_np(data, dtype=None):
    """Convert nested Python data to numpy with torch's dtype inference.

    Returns ``(array, dtype, python)``; ``python`` is True when ``data`` was Python numbers
    (lists, tuples, scalars), whose conversion torch checks (``_checked_python``).
    """
    if isinstance(data, Tensor):
        return np.asarray(data._data), data.dtype, False
    if isinstance(data, np.ndarray):
        check_ndarray(data)
        return data, D.from_jax(data.dtype), False
    if isinstance(data, np.generic):
        if _numpy_readable(data.dtype):
            return np.asarray(data), D.from_jax(data.dtype), True
        return _infer_np(_stored_values(data, dtype), dtype)
    if isinstance(data, (list, tuple)):
        if _unsized_head(data):
            raise TypeError("len() of unsized object")
        if _tensor_leaves(data):
            return _from_tensor_leaves(data)
        if any(isinstance(x, Tensor) for x in data):
            parts = [_infer_np(x, dtype) for x in data]
            dt = parts[0][1]
            for _, d, _p in parts[1:]:
                dt = D._promote2(dt, d)
            if dt is D.uint64:
                # torch reads each element through its unsigned 64-bit conversion, which
                # takes Python ints only
                raise TypeError("an integer is required")
            return (np.stack([p[0] for p in parts]) if parts else np.zeros(0)), dt, False
    try:
        a = np.array(data)
    except OverflowError:
        a = np.array(data, dtype=object)
    except ValueError:
        err, sizes = _bad_data(data, dtype)
        if err is not None:
            raise err from None
        if 0 not in sizes:          # (bytes among lists of numbers: their values)
            return _infer_np(_stored_values(data, dtype), dtype)
        a = np.zeros(sizes)         # (torch reads no element past a size of 0: [[], [1]])
    k = a.dtype.kind
    if not (k in "uO" or _numpy_readable(a.dtype)):
        # strings, bytes, dates, long doubles among the elements: torch's error, or (stored
        # into a float dtype: a long double, bytes read as a sequence) the values torch reads
        return _infer_np(_stored_values(data, dtype), dtype)
    if k in "uO" or (k == "f" and a.size and bool((np.abs(a) >= _TWO63).any())):
        # ints outside int64 (numpy made them uint64, object or float64): torch's rules need
        # the Python values themselves (rare: the common path above is one numpy call)
        return _scan_python(data, dtype), None, True
    if dtype is None and isinstance(data, (list, tuple)):
        dt = _numpy_leaves_dtype(data)
        if dt is not None:
            return a, dt, True
    if k == "b":
        dt = D.bool
    elif k in "iu":
        dt = D.int64
    elif k == "f":
        dt = D.get_default_dtype()
    elif k == "c":
        dt = D.get_default_dtype().to_complex()
    elif a.size == 0:
        dt = D.get_default_dtype()
    else:
        raise _bad_data(data, dtype)[0] or TypeError(f"Could not infer dtype of {a.dtype}")
    return a, dt, True


def _unsized_head(data):
    """Whether nested lists ``data`` reach a 0-d ndarray along their first elements: torch's
    parser reads the sizes along them, and a 0-d ndarray is a sequence without a length."""
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
        while isinstance(data, np.ndarray) and data.ndim and len(data):
            data = data[0]
    return isinstance(data, np.ndarray) and data.ndim == 0


def _tensor_leaves(data):
    """Whether nested lists ``data`` reach a Tensor along their first elements: torch reads
    the sizes along them, not into a tensor, so the tensors there are elements."""
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
    return isinstance(data, Tensor)


def _from_tensor_leaves(data):
    """``(array, dtype, python)`` of nested lists whose elements are tensors (each read as
    torch reads one: its single element) or numbers, the dtypes promoted together."""
    if isinstance(data, Tensor):
        if data.requires_grad:
            from ._tensor import warn_scalar_of_grad
            warn_scalar_of_grad()
        if data.numel() != 1:
            if data.dtype.category in (D._BOOL, D._INT):
                raise TypeError("only integer tensors of a single element can be converted "
                                "to an index")
            raise ValueError("only one element tensors can be converted to Python scalars")
        return np.asarray(data.detach()._data).reshape(()), data.dtype, False
    if not isinstance(data, (list, tuple)):
        return _infer_np(data)
    parts = [_from_tensor_leaves(x) for x in data]
    dt = parts[0][1]
    for _, d, _p in parts[1:]:
        dt = D._promote2(dt, d)
    if dt is D.uint64:
        # torch reads each element through its unsigned 64-bit conversion, which takes
        # Python ints only
        raise TypeError("an integer is required")
    return np.stack([p[0] for p in parts]), dt, False


def _leaf_types(data, out):
    """The types of the non-sequence elements of nested lists/tuples ``data``, into ``out``."""
    kinds = set(map(type, data))
    for seq in (list, tuple):
        if seq in kinds:
            kinds.discard(seq)
            for x in data:
                if type(x) is seq:
                    _leaf_types(x, out)
    out |= kinds
    return out


def _leaf_arrays(data, out):
    for x in data:
        if isinstance(x, (list, tuple)):
            _leaf_arrays(x, out)
        elif isinstance(x, np.ndarray):
            out.append(x.dtype)
    return out


_PY_KINDS = {bool: "bool", int: "int64", float: None, complex: "complex"}


def _numpy_leaves_dtype(data):
    """torch's dtype for a list holding numpy scalars or arrays: every element's dtype (a
    numpy one's own, a Python number's as torch infers it) promoted together, not a Python
    number's kind (``[np.float64(1.5)]`` is float64, ``[np.int32(1)]`` int32). None when the
    list holds Python numbers only."""
    kinds = _leaf_types(data, set())
    if not any(issubclass(k, (np.generic, np.ndarray)) for k in kinds):
        return None
    dts = []
    for k in kinds:
        if issubclass(k, np.generic):
            dts.append(D.from_jax(np.dtype(k)))
        elif k in _PY_KINDS:
            name = _PY_KINDS[k]
            dts.append(D.get_default_dtype() if name is None else
                       D.get_default_dtype().to_complex() if name == "complex" else
                       getattr(D, name))
        elif not issubclass(k, np.ndarray):
            return None
    if np.ndarray in kinds or any(issubclass(k, np.ndarray) for k in kinds):
        dts.extend(D.from_jax(d) for d in _leaf_arrays(data, []))
    dt = dts[0]
    for d in dts[1:]:
        dt = D._promote2(dt, d)
    return dt


_NUMPY_KINDS = frozenset("biufc")
_NUMPY_NAMES = ("float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
                "uint64, uint32, uint16, uint8, and bool")


def _ml_dtype(dt):
    """Whether ``dt`` is one of jax's extra numpy types (bfloat16, the float8s)."""
    if dt.kind != "V" or dt.names is not None:
        return False
    try:
        D.from_jax(dt)
    except Exception:  # noqa: BLE001
        return False
    return True


def _numpy_readable(dt):
    """Whether torch has a dtype for numpy dtype ``dt``."""
    k = dt.kind
    return (k in _NUMPY_KINDS or _ml_dtype(dt)) and not (
        (k == "f" and dt.itemsize > 8) or (k == "c" and dt.itemsize > 16))


def _unreadable_numpy(dt):
    return TypeError(f"can't convert np.ndarray of type numpy.{dt.type.__name__}. The only "
                     f"supported types are: {_NUMPY_NAMES}.")


def _stored_values(data, dtype):
    """``data`` (a numpy scalar, or nested lists) holding values numpy has no torch dtype for,
    as torch reads it: its error (``_bad_data``), or the values it stores: a long double as a
    Python number (into a float or complex dtype), bytes and a numpy void read as sequences
    (of their bytes; a void of no fields is empty)."""
    err = _bad_data(data, dtype)[0]
    if err is not None:
        raise err
    complex_ = D.to_dtype(dtype).is_complex

    def read(x, top=False):
        if isinstance(x, (list, tuple)):
            return [read(y) for y in x]
        if isinstance(x, np.void) or (isinstance(x, bytes) and not top):
            return [read(y) for y in x]
        if isinstance(x, np.generic) and not _numpy_readable(x.dtype):
            return complex(x) if complex_ else float(x.real)
        return x
    return read(data, True)


def check_ndarray(a):
    """torch's errors for a numpy array it cannot read: a dtype without a torch type, a
    negative stride (``a[::-1]``)."""
    if not _numpy_readable(a.dtype):
        raise _unreadable_numpy(a.dtype)
    if not a.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte "
                         "order. Conversion between byte orders is currently not supported.")
    if any(st < 0 for st in a.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and "
                         "tensors with negative strides are not currently supported. (You can "
                         "probably work around this by making a copy of your array  with "
                         "array.copy().) ")


def _bad_data(data, dtype=None):
    """(torch's error for ``data``, or None, and the sizes read from it), in the order
    torch.tensor's parser meets them: the sizes, read along the first elements (a string
    there: ValueError; an ndarray is a sequence, a 0-d one without a length: TypeError);
    without a dtype, the dtype inferred from every element in order (a string: TypeError;
    None, a dict: RuntimeError); then, where the sizes hold no 0, each value as it is stored
    (a sequence of another length: ValueError; a value that is not a number: TypeError,
    worded for the dtype). ``[[], [1]]`` and ``[[], 5]`` are (2, 0) tensors."""
    sizes = []
    head = data
    while isinstance(head, (list, tuple, np.ndarray, np.void)) or (
            isinstance(head, bytes) and head is not data):
        # (an ndarray is a sequence to torch's parser: its length, then its first element;
        # a 0-d one has no length)
        if isinstance(head, np.ndarray) and head.ndim == 0:
            return TypeError("len() of unsized object"), ()
        sizes.append(len(head))
        if not len(head):
            break
        head = head[0]
    if isinstance(data, (str, bytes)):
        return TypeError(f"new(): invalid data type '{_tp_name(data)}'"), ()
    if isinstance(head, str):
        return ValueError("too many dimensions 'str'"), ()
    numbers = (bool, int, float, complex, np.generic, np.ndarray, Tensor)
    if dtype is None:
        def no_dtype(x):        # the error of the first element with no dtype, or None
            if isinstance(x, (list, tuple)):
                return next((b for b in map(no_dtype, x) if b is not None), None)
            if isinstance(x, np.generic) and not _numpy_readable(x.dtype):
                return _unreadable_numpy(x.dtype)
            if isinstance(x, (str, bytes)):
                return TypeError(f"new(): invalid data type '{_tp_name(x)}'")
            return None if isinstance(x, numbers) else RuntimeError(
                f"Could not infer dtype of {_tp_name(x)}")
        bad = no_dtype(data)
        if bad is not None:
            return bad, ()

        def kinds(x):
            if isinstance(x, (list, tuple)):
                return any(map(kinds, x))
            return isinstance(x, (float, complex, np.floating, np.complexfloating))
        real = kinds(data)
    else:
        real = D.to_dtype(dtype).category >= D._FLOAT
    integer = dtype is not None and D.to_dtype(dtype).category == D._INT

    def value_error(x):
        if dtype is None and isinstance(x, (str, bytes)):
            return TypeError(f"new(): invalid data type '{_tp_name(x)}'")
        if real and not isinstance(x, (str, bytes)) and hasattr(x, "__float__"):
            try:                        # (a date: Python's own error)
                float(x)
            except (TypeError, ValueError) as e:
                return TypeError(str(e))
            return None
        if real:
            return TypeError(f"must be real number, not {_tp_name(x)}")
        return TypeError(f"'{_tp_name(x)}' object cannot be interpreted as an integer")

    def walk(x, d):
        if d == len(sizes):
            if isinstance(x, np.ndarray) and x.ndim:
                try:                    # (numpy's own error: a 1-element array's is worded
                    float(x)            # by the numpy version)
                except TypeError as e:
                    return TypeError(str(e))
            if isinstance(x, (list, tuple)) or not isinstance(x, numbers) or (
                    isinstance(x, np.generic) and not _numpy_readable(x.dtype)):
                return value_error(x)
            if integer and x.__class__ is int and not -2 ** 63 <= x < 2 ** 63:
                return ValueError("Overflow when unpacking long long")
            return None
        if not isinstance(x, (list, tuple, str, bytes, np.void)) and not (
                isinstance(x, np.ndarray) and x.ndim):  # (a string is a sequence there)
            return TypeError("not a sequence")
        if len(x) != sizes[d]:
            return ValueError(f"expected sequence of length {sizes[d]} at dim {d} "
                              f"(got {len(x)})")
        return next((e for e in (walk(y, d + 1) for y in x) if e is not None), None)

    if 0 in sizes:                      # (no element is stored, none read)
        return None, tuple(sizes)
    return walk(data, 0), tuple(sizes)


_TWO63 = 2.0 ** 63


class _Scanned:
    """Python data holding ints outside int64: its values and what torch infers from them."""

    __slots__ = ("data", "kind", "big")

    def __init__(self, data, kind, big):
        self.data, self.kind, self.big = data, kind, big


def _scan_python(data, dtype=None):
    kinds = set()
    big = [False]

    def walk(x):
        if isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
            return
        x = D.python_scalar(x)
        if isinstance(x, bool):
            kinds.add("b")
        elif isinstance(x, int):
            kinds.add("i")
            if not -2 ** 63 <= x < 2 ** 63:
                big[0] = True
        elif isinstance(x, float):
            kinds.add("f")
        elif isinstance(x, complex):
            kinds.add("c")
        else:
            raise _bad_data(data, dtype)[0] or TypeError(
                f"Could not infer dtype of {type(x).__name__}")

    walk(data)
    kind = next((k for k in "cfib" if k in kinds), "f")
    return _Scanned(data, kind, big[0])


def _map(x, f):
    if isinstance(x, (list, tuple)):
        return [_map(y, f) for y in x]
    return f(D.python_scalar(x))


def _from_scanned(sc, dt):
    """The numpy array torch builds from scanned Python data for dtype ``dt``."""
    if dt.category == D._BOOL:
        return np.array(_map(sc.data, bool))
    if dt.category == D._INT:
        if sc.big:
            raise ValueError("Overflow when unpacking long long")
        return np.array(_map(sc.data, lambda v: v if isinstance(v, (int, complex)) else float(v)))
    conv = complex if dt.category == D._COMPLEX or sc.kind == "c" else float
    # float(int) raises Python's OverflowError for ints beyond double, as torch does
    return np.array(_map(sc.data, conv))


def _checked_python(a, dt, data):
    """torch's checks when Python numbers ``data`` (read as ``a``) become dtype ``dt``
    (``tensor()``, ``as_tensor``)."""
    k = a.dtype.kind
    cat = dt.category
    if k == "c" and (cat == D._INT or cat == D._FLOAT and (type(data) is complex or isinstance(
            data, (list, tuple)) and complex in _leaf_types(data, set()))):
        # (a numpy complex has __float__: its real part, with numpy's ComplexWarning)
        raise TypeError("'complex' object cannot be interpreted as an integer" if cat == D._INT
                        else "must be real number, not complex")
    if cat != D._INT or not a.size:
        return
    lo, hi = D._INT_RANGE[dt.name]
    if k in "iu":
        if dt is D.int64:
            return
        mn, mx = int(a.min()), int(a.max())
        # torch lets negative ints wrap for unsigned types: -hi ... hi
        bad = mx > hi or (mn < -hi if lo == 0 else mn < lo)
    elif k == "f":
        with np.errstate(invalid="ignore"):
            bad = bool(np.isnan(a).any()) or float(a.min()) < float(lo) or \
                float(a.max()) > float(hi)
    else:
        return
    if bad:
        raise RuntimeError(f"value cannot be converted to type {dt.name} without overflow")


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (nested lists, scalars, numpy arrays, tensors).

    Python floats become the default dtype (float32), ints int64, bools bool. Python numbers
    that do not fit the dtype raise torch's errors (ints outside int64: ValueError; values
    outside an integer dtype: RuntimeError), they do not wrap.
    """
    _check_kw("tensor", dtype=dtype, device=device, requires_grad=requires_grad,
              pin_memory=pin_memory)
    if isinstance(data, Tensor):
        copy_construct_warning("torch.tensor(sourceTensor)")
    if pin_memory and isinstance(data, (Tensor, np.ndarray)):
        raise RuntimeError(f"Can't pin tensor constructed from "
                           f"{'a variable' if isinstance(data, Tensor) else 'numpy'}")
    return _tensor(data, dtype, device, requires_grad, pin_memory)


def copy_construct_warning(form):
    """torch's warning when ``form`` (``torch.tensor(sourceTensor)``, ...) copies a tensor."""
    import warnings
    from ._ops.factorizations import _user_stacklevel
    warnings.warn(f"To copy construct from a tensor, it is recommended to use "
                  f"sourceTensor.detach().clone() or "
                  f"sourceTensor.detach().clone().requires_grad_(True), rather than {form}.",
                  UserWarning, stacklevel=_user_stacklevel())


def _tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """``tensor`` after its argument checks."""
    if isinstance(data, (list, tuple)) and data and isinstance(data[0], np.ndarray):
        from ._ops.factorizations import _deprecated
        _deprecated("tensor_from_ndarrays", "Creating a tensor from a list of numpy.ndarrays "
                    "is extremely slow. Please consider converting the list to a single "
                    "numpy.ndarray with numpy.array() before converting to a tensor.")
    if (dtype is not None and D.to_dtype(dtype) is D.uint64 or isinstance(data, np.uint64)) \
            and not isinstance(data, (np.ndarray, Tensor)):
        return _finish(_tiers.to_device(_uint64_python(data)), device, requires_grad,
                       pin_memory)
    if isinstance(data, Tensor) and is_meta(data):
        # (torch copies a meta tensor to a meta tensor: shape and dtype, no data to read)
        if device is not None and _device.device(device).type != "meta":
            raise NotImplementedError(NO_DATA_ERROR)
        dt = D.to_dtype(dtype) if dtype is not None else data.dtype
        return _finish(MetaArray(tuple(data.shape), dt.np), data.device, requires_grad,
                       pin_memory)
    a, dt, python = _infer_np(data, dtype)
    if dt is None:
        # scanned Python data (ints outside int64): torch's inference, then its conversion
        dt = D.to_dtype(dtype) if dtype is not None else (
            D.get_default_dtype().to_complex() if a.kind == "c" else
            D.get_default_dtype() if a.kind == "f" else D.bool if a.kind == "b" else D.int64)
        a = _from_scanned(a, dt)
    else:
        dt = D.to_dtype(dtype) if dtype is not None else dt
    if dt.category in (D._INT, D._BOOL):
        bad = _numpy_not_integer(data, dt)
        if bad is not None:
            # (torch stores an integer element through ``__index__``, which numpy's bool and
            # floats (but float64, a Python float) lack)
            raise TypeError(f"'{_tp_name(bad)}' object cannot be interpreted as an integer")
    if python:
        _checked_python(a, dt, data)
    if device is None and isinstance(data, Tensor):
        device = data.device
    # jax may alias an aligned numpy buffer on CPU; torch.tensor always copies
    with np.errstate(all="ignore"):
        if (dt.category == D._INT or dt in D.FLOAT8) and isinstance(a, np.ndarray):
            arr = D.cast(a, dt.np, np)      # torch's float -> integer (wraps), -> float8 rules
        else:
            arr = np.array(a, dtype=dt.np, copy=True)
    return _finish(_tiers.to_device(arr), device, requires_grad, pin_memory)


def _numpy_not_integer(data, dt):
    """The first numpy scalar of ``data`` (one, or nested lists) that torch cannot store into
    integer or bool dtype ``dt`` (a float other than float64, a complex, a bool into an
    integer dtype), or None."""
    def bad(k):
        return issubclass(k, np.generic) and not issubclass(
            k, (np.integer, float, bytes, np.void)) and not (      # (those two: sequences)
            dt is D.bool and issubclass(k, np.bool_))
    if not isinstance(data, (list, tuple)):
        return data if bad(type(data)) else None
    if not any(map(bad, _leaf_types(data, set()))):
        return None

    def first(x):
        if isinstance(x, (list, tuple)):
            return next((b for b in map(first, x) if b is not None), None)
        return x if bad(type(x)) else None
    return first(data)


def _uint64_python(data):
    """Python data as uint64, as torch reads it: each element through its unsigned 64-bit
    integer conversion, which takes Python ints (and bools) only."""
    def check(x):
        if isinstance(x, (list, tuple)):
            for y in x:
                check(y)
        elif not isinstance(x, int):
            raise TypeError("an integer is required")
        elif x < 0:
            raise OverflowError("can't convert negative int to unsigned")
        elif x >= 2 ** 64:
            raise OverflowError("int too big to convert")
    if not isinstance(data, (list, tuple)) or data:
        err, _sizes = _bad_data(data, D.int64)
        if isinstance(err, (ValueError, TypeError)) and "Overflow" not in str(err) and \
                "interpreted as an integer" not in str(err):
            raise err                   # ragged or not a sequence: torch's parse errors
    check(data)
    return np.array(data, dtype=np.uint64)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        out = data if dtype is None or data.dtype is D.to_dtype(dtype) else data.to(dtype)
        return out if device is None else _device.move(out, device)
    _warn_readonly(data)
    return _tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """``torch.asarray``: ``obj`` as a tensor, sharing a tensor's (or a storage's) data where it
    can (``copy=True``: never; ``copy=False``: always, or torch's error). A storage is read as
    its bytes, viewed as ``dtype`` (int64 by default, as torch)."""
    from ._ops.restructure import UntypedStorage, TypedStorage
    if isinstance(obj, TypedStorage):
        obj, dtype = obj.untyped(), obj.dtype if dtype is None else dtype
    if isinstance(obj, UntypedStorage):
        # (torch reads a storage's bytes as int64 unless told, dropping a partial last element)
        want = D.int64 if dtype is None else D.to_dtype(dtype)
        out = obj._bytes()
        if want is not D.uint8:
            n = out.shape[0]
            out = out[:n - n % want.itemsize].view(want)
    elif isinstance(obj, Tensor):
        want = obj.dtype if dtype is None else D.to_dtype(dtype)
        if copy is False:
            _check_alias(obj.dtype, want)
        out = obj if want is obj.dtype else obj.to(want)
        if copy and out is obj:
            out = obj.clone()
    else:
        if copy is False:
            # (an ndarray, which torch shares, is copied here: DIFFERENCES.md, from_numpy)
            if isinstance(obj, np.generic):
                raise RuntimeError("can't alias NumPy scalars. Either remove copy=False or "
                                   "transform it in a ndarray. ")
            if not isinstance(obj, np.ndarray):
                raise ValueError("can't alias arbitrary sequence into a tensor.")
            if dtype is not None:
                _check_alias(D.from_jax(obj.dtype), D.to_dtype(dtype))
        if not copy and isinstance(obj, np.ndarray) and (
                dtype is None or D.to_dtype(dtype) is D.from_jax(obj.dtype)):
            _warn_readonly(obj)         # (torch shares the array's memory here)
        if isinstance(obj, np.generic) and not _numpy_readable(obj.dtype):
            raise _unreadable_numpy(obj.dtype)      # (torch reads it as a 0-d array)
        out = _tensor(obj, dtype=dtype)
    if device is not None:
        out = _device.move(out, device)
    if requires_grad:
        out = out.detach() if out.grad_fn is not None else out
        out.requires_grad_(True)
    return out


def _check_alias(have, want):
    """``asarray(copy=False)``: torch's error where the dtype would change."""
    if want is not have:
        raise ValueError(f"can't alias tensor with dtype '{D.legacy_name(have)}' into dtype "
                         f"'{D.legacy_name(want)}'.")


_warned_readonly = [False]


def _warn_readonly(arr):
    """torch's warning (once a program) when a tensor is made from a read-only ndarray's
    memory: ``from_numpy``, ``as_tensor`` and ``asarray`` where it would share the array."""
    if isinstance(arr, np.ndarray) and not arr.flags.writeable and not _warned_readonly[0]:
        _warned_readonly[0] = True
        import warnings
        from ._ops.factorizations import _user_stacklevel, triggered
        warnings.warn("The given NumPy array is not writable, and PyTorch does not support "
                      "non-writable tensors. This means writing to this tensor will result in "
                      "undefined behavior. You may want to copy the array to protect its data "
                      "or make it writable before converting it to a tensor. This type of "
                      "warning will be suppressed for the rest of this program."
                      + triggered("torch/csrc/utils/tensor_numpy.cpp:213"), UserWarning,
                      stacklevel=_user_stacklevel())


def from_numpy(ndarray):
    """A tensor with the values of ``ndarray`` (copied: see DIFFERENCES.md)."""
    if not isinstance(ndarray, np.ndarray):
        from ._tensor import _type_name
        raise TypeError(f"expected np.ndarray (got {_type_name(ndarray)})")
    check_ndarray(ndarray)
    _warn_readonly(ndarray)
    D.activate_for(ndarray.dtype)       # (before any op runs on the tensor)
    t = Tensor._make(_device.put(_tiers.to_device(np.array(ndarray, copy=True)), "cpu"))
    if ndarray.ndim > 1 and not ndarray.flags.c_contiguous and ndarray.itemsize:
        # torch's tensor reads the array's memory with its strides; a dense array's layout
        # (a transpose, Fortran order) is kept, one with gaps between rows is copied compactly
        from ._strides import is_non_overlapping_and_dense, set_layout
        st = tuple(s // ndarray.itemsize for s in ndarray.strides)
        if is_non_overlapping_and_dense(ndarray.shape, st):
            set_layout(t, st)
    return t


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    _check_kw("scalar_tensor", dtype=dtype, device=device, requires_grad=requires_grad)
    _check_number("scalar_tensor", "s", 1, s)
    dt = D.to_dtype(dtype) if dtype is not None else D.get_default_dtype()
    if isinstance(s, Tensor):
        s = s.item()
    s = D.check_scalar(s, dt, 1)
    return _finish(_tiers.to_device(np.asarray(D.host_scalar(s, dt))), device, requires_grad)


def is_tensor(obj):
    return isinstance(obj, Tensor)


# ------------------------------------------------------------------ sizes
#
# torch checks a size before allocating: negative dimensions, dimensions that do not fit
# int64, an element count or byte count that overflows, strides that overflow, and (on the
# CPU) an allocation larger than the machine can give. XLA would abort the process on some of
# these ("overflow in static extent product"), so they are checked here on the host.

_I64_MAX = 2 ** 63 - 1
_U64 = 2 ** 64


def _size(size, name="zeros"):
    """torch's size argument (ints, or one tuple/list of ints) as a tuple, with its errors."""
    seq = len(size) == 1 and isinstance(size[0], (tuple, list))
    if seq:
        size = tuple(size[0])
    out = []
    for i, s in enumerate(size):
        if isinstance(s, Tensor) and _int_tensor(s):
            s = int(s.item())
        elif isinstance(s, np.timedelta64):     # (an int to the parser, without __index__)
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got "
                            f"numpy.timedelta64\"")
        elif isinstance(s, np.integer):
            s = int(s)
        if (isinstance(s, bool) and i == 0) or not isinstance(s, numbers.Integral):
            tn = _tp_name(s)        # (torch takes a bool as an int after the first size)
            if len(size) == 1 and not seq:
                raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, "
                                f"not {tn}")
            if i == 0 and seq:
                raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, "
                                f"but found element of type {tn} at pos 0")
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got {tn}\"")
        s = int(s)
        if not -2 ** 63 <= s <= _I64_MAX:
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos "
                            f"{i + 1} with error \"Overflow when unpacking long long\"")
        out.append(s)
    for s in out:
        if s < 0:
            if name == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {out}")
    return tuple(out)


def _int_tensor(t):
    """torch takes a one-element integer tensor where it wants an int (a size)."""
    return t.numel() == 1 and t.dtype.category == D._INT


def _tp_name(x):
    """The type name torch's argument parser prints for ``x`` (``Py_TYPE(x)->tp_name``)."""
    t = type(x)
    mod = t.__module__ or ""
    if mod == "torchlike" or mod.startswith("torchlike."):
        if t.__name__ == "Generator":
            return "torch._C.Generator"
        if t.__name__ in ("dtype", "Size", "layout", "device", "memory_format", "finfo",
                          "iinfo", "tensortype"):
            return "torch." + t.__name__
        return t.__name__
    if mod == "builtins" or t.__flags__ & _HEAPTYPE:
        return t.__name__       # (a class defined in Python: tp_name is its bare name)
    return f"{mod}.{t.__name__}"


def _arg_desc(args, kwargs):
    """The "got (...)" of torch's invalid-combination TypeError (its ``_argDesc``): the
    positional arguments' types, then the keywords' (in reverse order); with no positional
    argument torch leaves the last ", " in: ``(steps=float, )``."""
    text = "".join([f"{_tp_name(a)}, " for a in args] +
                   [f"{k}={_tp_name(v)}, " for k, v in reversed(list(kwargs.items()))])
    return f"({text[:-2] if args else text})"


_HEAPTYPE = 1 << 9          # (Py_TPFLAGS_HEAPTYPE: a class made by a class statement)


# torch's keyword-only factory parameters: (check, the type name its messages give)
def _is(kind):
    def check(v):
        from . import _runtime
        return isinstance(v, getattr(_runtime, kind))
    return check


_PARAM = {
    "generator": (lambda v: isinstance(v, _random.Generator), "torch.Generator"),
    "out": (lambda v: isinstance(v, Tensor), "Tensor"),
    "memory_format": (_is("memory_format"), "torch.memory_format"),
    "dtype": (lambda v: isinstance(v, D.dtype) or v in (builtins.float, builtins.int,
                                                         builtins.bool, builtins.complex),
              "torch.dtype"),
    "layout": (_is("layout"), "torch.layout"),
    "device": (lambda v: isinstance(v, (str, _device.device)) or
               (isinstance(v, int) and not isinstance(v, builtins.bool)), "torch.device"),
    "pin_memory": (lambda v: isinstance(v, builtins.bool), "bool"),
    "requires_grad": (lambda v: isinstance(v, builtins.bool), "bool"),
}
_OPTS = ("out", "dtype", "layout", "device", "pin_memory", "requires_grad")


def _check_number(name, arg, pos, v):
    """torch's Scalar parameter: a number, or a 0-dim tensor that does not require grad."""
    _no_index(v)
    if isinstance(v, (numbers.Number, np.bool_)) or (
            isinstance(v, Tensor) and v.ndim == 0 and not v.requires_grad):
        return
    raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Number, not "
                    f"{_tp_name(v)}")


def _check_kw(name, **kw):
    """torch's type checks of a factory's keyword options (``dtype`` must be a torch.dtype or
    a Python type, ``requires_grad`` a bool, ...)."""
    for k, v in kw.items():
        if v is not None and k in _PARAM and not _PARAM[k][0](v):
            raise TypeError(f"{name}(): argument '{k}' must be {_PARAM[k][1]}, not "
                            f"{_tp_name(v)}")


def _parse_sized(name, args, kwargs, params):
    """torch's argument parser on ``name(*size, <keyword-only params>)``: the size as varargs
    ints, one tuple/list, or ``size=``; each keyword checked in order; then unknown or doubled
    keywords. Raises torch's TypeError; returns the size tuple."""
    if args:
        a0 = args[0]
        if isinstance(a0, (tuple, list)):
            if len(args) > 1:
                raise TypeError(f"{name}() takes 1 positional argument but {len(args)} were "
                                f"given")
            if a0 and not _intlike(a0[0]):
                raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, "
                                f"but found element of type {_tp_name(a0[0])} at pos 0")
            size = (tuple(a0),)
        elif _intlike(a0):
            size = args
        elif len(args) > 1:
            raise TypeError(f"{name}() takes 1 positional argument but {len(args)} were given")
        else:
            raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
                            f"{_tp_name(a0)}")
    elif "size" in kwargs:
        v = kwargs["size"]
        if not isinstance(v, (tuple, list)) or (v and not _intlike(v[0])):
            raise TypeError(f"{name}(): argument 'size' must be tuple of ints, not "
                            f"{_tp_name(v)}")
        size = (tuple(v),)
    else:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    for p in params:
        if p in kwargs and kwargs[p] is not None and not _PARAM[p][0](kwargs[p]):
            raise TypeError(f"{name}(): argument '{p}' must be {_PARAM[p][1]}, not "
                            f"{_tp_name(kwargs[p])}")
    for k in kwargs:
        if k == "size" and args:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        if k != "size" and k not in params:
            raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
    return size


def _intlike(v):
    return (isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_))
            or isinstance(v, Tensor) and _int_tensor(v))


def _signature(params):
    return "(tuple of ints size, *, " + ", ".join(
        f"{_PARAM[p][1]} {p}" + ("" if p == "generator" else
                                  " = False" if _PARAM[p][1] == "bool" else " = None")
        for p in params) + ")"


def _invalid_combination(name, args, kwargs, overloads):
    return TypeError(f"{name}() received an invalid combination of arguments - got "
                     f"{_arg_desc(args, kwargs)}, but expected one of:\n" +
                     "".join(f" * {_signature(o)}\n" for o in overloads))


def parser_error(name, args, kwargs, overloads, arg=None):
    """torch's argument parser refusing a call of ``name(*args, **kwargs)`` (``args`` without a
    method's self) whose keyword ``arg`` (one of ``_PARAM``) has the wrong type, or (``arg``
    None) that matches no overload. ``overloads``: the signatures torch lists, each as the text
    inside its parentheses. Like torch's parser, the error names ``arg`` when only one overload
    takes that many arguments, else lists the overloads; an overload of as many entries as
    arguments (its ``*`` counted) notes the keywords that name none of its parameters without a
    default."""
    n = len(args) + len(kwargs)

    def arity(sig):
        params = [e for e in sig.split(", ") if e not in ("*", "")]
        return sum("=" not in e for e in params), len(params)

    plausible = [o for o in overloads if arity(o)[0] <= n <= arity(o)[1]]
    if arg is not None and (len(overloads) == 1 or len(plausible) == 1):
        return TypeError(f"{name}(): argument '{arg}' must be {_PARAM[arg][1]}, not "
                         f"{_tp_name(kwargs[arg])}")
    lines = []
    for sig in overloads:
        lines.append(f" * ({sig})\n")
        entries = sig.split(", ")
        if len(entries) == n:
            named = {e.split(" ")[-1] for e in entries if "=" not in e}
            bad = [k for k in reversed(list(kwargs)) if k not in named]
            if bad:
                lines.append(f"      didn't match because some of the keywords were incorrect: "
                             f"{', '.join(bad)}\n")
    return TypeError(f"{name}() received an invalid combination of arguments - got "
                     f"{_arg_desc(args, kwargs)}, but expected one of:\n" + "".join(lines))


def checks_generator(name, overloads=None, method=False):
    """Decorator: ``fn`` refuses a ``generator=`` that is not a torch.Generator (or None) with
    torch's TypeError (``parser_error``), before anything else reads its arguments.
    ``overloads``: torch's signatures (None: one, with ``torch.Generator generator``);
    ``method``: the first argument is self."""
    overloads = overloads or ("*, torch.Generator generator = None",)

    def deco(fn):
        @functools.wraps(fn)
        def checked(*args, **kwargs):
            g = kwargs.get("generator")
            if g is not None and not isinstance(g, _random.Generator):
                raise parser_error(name, args[1:] if method else args, kwargs, overloads,
                                   "generator")
            return fn(*args, **kwargs)
        return checked
    return deco


# the keyword options of torch's factory signatures, after ``*``
_FACTORY_TAIL = ("torch.dtype dtype = None, torch.layout layout = None, torch.device device = "
                 "None, bool pin_memory = False, bool requires_grad = False")
_LIKE_TAIL = "torch.memory_format memory_format = None, " + _FACTORY_TAIL


def _with_and_without_generator(head, tail):
    return (f"{head}*, torch.Generator generator, {tail}", f"{head}*, {tail}")


def _factory_args(name, args, kwargs, overloads):
    """Parse a size factory's arguments against torch's visible overloads (each a tuple of
    keyword-only parameter names); returns ``(shape, options)``. Like torch, an error names
    the argument when only one overload takes that many arguments, else lists the overloads.
    ``out=`` gives the dtype when ``dtype`` is not given; a different ``dtype`` raises."""
    n = len(args) + len(kwargs)
    err = None
    for params in overloads:
        try:
            size = _parse_sized(name, args, kwargs, params)
        except TypeError as e:
            err = err or e
            continue
        if "generator" in params and "generator" not in kwargs and len(overloads) > 1:
            err = err or TypeError(f"{name}(): argument 'generator' must be torch.Generator")
            continue
        break
    else:
        plausible = [o for o in overloads
                     if (2 if "generator" in o else 1) <= n <= len(o) + 1]
        if len(plausible) == 1:
            _parse_sized(name, args, kwargs, plausible[0])
        if len(overloads) == 1:
            raise err
        raise _invalid_combination(name, args, kwargs, overloads)
    opts = {k: v for k, v in kwargs.items() if k != "size"}
    for k, v in (("requires_grad", False), ("pin_memory", False)):
        if opts.get(k) is None:
            opts[k] = v
    if opts.get("dtype") in (builtins.float, builtins.int, builtins.bool, builtins.complex):
        opts["dtype"] = {builtins.float: D.float64, builtins.int: D.int64,
                         builtins.bool: D.bool, builtins.complex: D.complex128}[opts["dtype"]]
    out = opts.get("out")
    if out is not None:
        if opts.get("dtype") is None:
            opts["dtype"] = out.dtype
        elif D.to_dtype(opts["dtype"]) is not out.dtype:
            raise RuntimeError(f"dtype {D.legacy_name(D.to_dtype(opts['dtype']))} does not match "
                               f"dtype of out parameter ({D.legacy_name(out.dtype)})")
    return _size(size, name), opts


def _sized_factory(name, impl, overloads):
    """``name(*size, **options)`` with torch's argument parsing around ``impl(shape, ...)``;
    ``out=`` takes the result (and ``requires_grad``, as torch sets it on ``out``)."""
    import inspect

    def factory(*args, **kwargs):
        shape, opts = _factory_args(name, args, kwargs, overloads)
        out = opts.pop("out", None)
        if out is None:
            return impl(shape, **opts)
        rg = opts.pop("requires_grad")
        r = write_out(impl(shape, **opts), out, name)
        if rg:
            r.requires_grad_(True)
        return r
    factory.__name__ = factory.__qualname__ = name
    factory.__module__ = __name__
    factory.__doc__ = impl.__doc__
    P = inspect.Parameter
    allp = [p for o in overloads for p in o]
    factory.__signature__ = inspect.Signature(
        [P("size", P.VAR_POSITIONAL)] +
        [P(p, P.KEYWORD_ONLY, default=False if _PARAM[p][1] == "bool" else None)
         for p in dict.fromkeys(allp)])
    return factory


def _storage_bytes(shape, itemsize):
    """torch's storage size of a contiguous ``shape`` (c10's overflow-checked u64 product)."""
    n = 1
    over = False
    for s in shape:
        n *= s
        if n >= _U64:
            over = True
            n %= _U64
    n *= itemsize
    if n >= _U64:
        over = True
        n %= _U64
    if over or n > _I64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    stride = 1
    for s in reversed(shape[1:]):
        stride *= s if s > 1 else 1
        if stride > _I64_MAX:
            raise RuntimeError("Stride calculation overflowed")
    return n


_RAM = [None]


def _ram_bytes():
    """Physical memory plus swap (what the CPU allocator can give at most)."""
    if _RAM[0] is None:
        total = 0
        try:
            with open("/proc/meminfo") as f:
                for line in f:
                    if line.startswith(("MemTotal:", "SwapTotal:")):
                        total += int(line.split()[1]) * 1024
        except (OSError, ValueError, IndexError):
            total = 0
        if not total:
            try:
                import os
                total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
            except (ValueError, OSError, AttributeError):
                total = 1 << 62
        _RAM[0] = total
    return _RAM[0]


def _check_alloc(shape, dt, device=None):
    """Raise torch's errors for a new tensor of ``shape`` and dtype ``dt`` that cannot exist
    (instead of XLA aborting the process or the kernel killing it)."""
    nbytes = _storage_bytes(shape, dt.itemsize)
    if nbytes > (1 << 30) and nbytes > _ram_bytes():
        dev = _device.default_device() if device is None else _device.device(device)
        if dev.type == "cpu":
            raise RuntimeError(f"[enforce fail at alloc_cpu.cpp:127] err == 0. "
                               f"DefaultCPUAllocator: can't allocate memory: you tried to "
                               f"allocate {nbytes} bytes. Error code 12 (Cannot allocate "
                               f"memory)")
    return nbytes


def _dt(dtype, default=None):
    if dtype is None:
        return default or D.get_default_dtype()
    return D.to_dtype(dtype)


def _to_jax(vals, dt):
    """numpy values as a jax array of ``dt`` (device_put: ``jnp.asarray`` compiles per shape)."""
    vals = np.asarray(vals)
    if vals.dtype == dt.np:
        return _tiers.to_device(vals)
    return jnp.asarray(vals, dt.np)


def _filled(shape, value, dt):
    """A jax array of ``shape`` filled with the numpy scalar ``value``: on the CPU from a numpy
    buffer (``jnp.full`` compiles a program per shape), elsewhere made on the device."""
    n = 1
    for d in shape:
        n *= d
    # small arrays only (numpy refuses (0, 2**62); a big fill is cheaper as a program)
    if _tiers.on_host() and 0 < n <= _tiers.HOST_MAX_ELEMENTS:
        return _tiers.to_device(np.full(shape, value, dt.np))
    return jnp.full(shape, value, dt.np)


def _zeros(shape, dtype=None, layout=None, device=None, requires_grad=False,
           pin_memory=False):
    dt = _dt(dtype)
    _check_alloc(shape, dt, device)
    return _finish(_filled(shape, _ZERO_BITS.get(dt, 0), dt), device, requires_grad,
                   pin_memory, layout)


# torch's zeros of float8_e8m0fnu (no zero: its zero byte is 2**-127) are zero bytes
_ZERO_BITS = {D.float8_e8m0fnu: np.zeros((), D.float8_e8m0fnu._np)}


def _ones(shape, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    dt = _dt(dtype)
    _check_alloc(shape, dt, device)
    return _finish(_filled(shape, 1, dt), device, requires_grad, pin_memory, layout)


def _empty(shape, dtype=None, layout=None, device=None, requires_grad=False,
           pin_memory=False, memory_format=None):
    """Uninitialised in torch; zeros here."""
    from ._strides import format_strides, set_layout
    dt = _dt(dtype)
    _check_alloc(shape, dt, device)
    out = _finish(_filled(shape, _ZERO_BITS.get(dt, 0), dt), device, requires_grad,
                  pin_memory, layout)
    return out if memory_format is None else set_layout(out, format_strides(memory_format,
                                                                            shape))


zeros = _sized_factory("zeros", _zeros, [_OPTS])
ones = _sized_factory("ones", _ones, [_OPTS])
empty = _sized_factory("empty", _empty, [("memory_format",) + _OPTS])


def _scalar_default(v):
    if isinstance(v, Tensor):
        # (a Tensor fill value is read as a Scalar: its category's default dtype)
        if v.dtype is D.bool:
            return D.bool
        if v.dtype.is_complex:
            return D.get_default_dtype().to_complex()
        return D.get_default_dtype() if v.dtype.is_floating_point else D.int64
    _no_index(v)
    v = D.parser_scalar(v)          # (torch's parser reads a numpy bool as a float)
    if isinstance(v, bool):
        return D.bool
    if isinstance(v, numbers.Integral):
        return D.int64
    if isinstance(v, complex):
        return D.get_default_dtype().to_complex()
    return D.get_default_dtype()


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    """``size`` filled with ``fill_value``; a value outside the dtype's range raises torch's
    "value cannot be converted to type ... without overflow"."""
    _check_kw("full", out=out, dtype=dtype, layout=layout, device=device,
              requires_grad=requires_grad, pin_memory=pin_memory)
    _check_number("full", "fill_value", 2, fill_value)
    if out is not None and dtype is not None and D.to_dtype(dtype) is not out.dtype:
        raise RuntimeError(f"dtype {D.legacy_name(D.to_dtype(dtype))} does not match dtype of "
                           f"out parameter ({D.legacy_name(out.dtype)})")
    if out is not None and dtype is None:
        dtype = out.dtype
    dt = _dt(dtype, _scalar_default(fill_value))
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    shape = _size((size,), "full")
    fill_value = D.check_scalar(fill_value, dt, math.prod(shape))
    _check_alloc(shape, dt, device)
    r = _finish(_filled(shape, D.host_scalar(fill_value, dt), dt), device, requires_grad,
                pin_memory, layout)
    if out is not None:
        return write_out(r, out, "full")
    return r


def _like(t, dtype):
    return t.dtype if dtype is None else D.to_dtype(dtype)


def _like_dev(t, device):
    """*_like factories keep the input's device unless given one."""
    return t.device if device is None else device


def _keeps_layout(fn, name=None):
    """A ``*_like`` factory whose result has the layout torch gives it: ``input``'s
    (``memory_format=torch.preserve_format``, the default) or ``memory_format``'s; a
    non-Tensor ``input`` raises torch's TypeError."""
    name = name or fn.__name__
    # (a random draw's batching follows vmap's randomness: 'same' draws one unbatched value)
    tied = not name.startswith("rand")

    @functools.wraps(fn)
    def like(input, *args, memory_format=None, **kwargs):
        from ._ops.convert import _copy_strides
        from ._strides import set_layout
        if not isinstance(input, Tensor):
            from . import overrides
            if overrides._overrides(input):     # (a Tensor-like object takes the call over)
                import torchlike
                if memory_format is not None:
                    kwargs["memory_format"] = memory_format
                return overrides.dispatch(getattr(torchlike, name), (input, *args), kwargs,
                                          "torch." + name)
            from ._tensor import not_a_tensor
            raise not_a_tensor(name, input)
        _check_kw(name, memory_format=memory_format, **kwargs)
        out = fn(input, *args, **kwargs)
        if tied:
            out = _vmap_levels.tie_tensor(out, input)   # (batched in a vmap, as ``input`` is)
        if out._alias is None:
            set_layout(out, _copy_strides(input, memory_format))
        return out
    like.__name__ = like.__qualname__ = name
    return like


@_keeps_layout
def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    dt = _like(input, dtype)
    return _finish(_filled(input._d.shape, _ZERO_BITS.get(dt, 0), dt),
                   _like_dev(input, device), requires_grad, layout=layout)


@_keeps_layout
def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    return _finish(_filled(input._d.shape, 1, _like(input, dtype)),
                   _like_dev(input, device), requires_grad, layout=layout)


empty_like = _keeps_layout(zeros_like.__wrapped__, "empty_like")


@_keeps_layout
def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    _check_number("full_like", "fill_value", 2, fill_value)
    dt = _like(input, dtype)
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    shape = tuple(input._d.shape)
    fill_value = D.check_scalar(fill_value, dt, math.prod(shape))
    return _finish(_filled(shape, D.host_scalar(fill_value, dt), dt),
                   _like_dev(input, device), requires_grad, layout=layout)


def _num(v):
    _no_index(v)
    if isinstance(v, (np.longdouble, np.clongdouble)):
        return float(v.real)    # (.item() keeps the numpy type; torch reads a double)
    return v.item() if isinstance(v, Tensor) else D.python_scalar(v)


# ------------------------------------------------------------------ ranges, as torch computes them
#
# torch's CPU kernels (read off their results): linspace steps from both ends, the first half
# ``start + step*i`` and the second half ``end - step*(steps-1-i)``, each a fused multiply-add
# in the output dtype (double for integer dtypes, truncated); arange computes in the
# accumulate type (double for float, float for half types, int64 for integers) and fills
# vectors of 32 bytes from their first element (``base + k*step``), the tail element-wise.
# Computed here on the host with numpy, bit for bit (fused multiply-adds are emulated exactly).

_F64 = np.float64


def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(x):
    t = 134217729.0 * x
    hi = t - (t - x)
    return hi, x - hi


def _fma64(a, b, c):
    """Correctly rounded ``a*b + c`` in float64, elementwise (numpy has no fma)."""
    a, b, c = np.broadcast_arrays(np.asarray(a, _F64), np.asarray(b, _F64), np.asarray(c, _F64))
    with np.errstate(all="ignore"):
        p = a * b
        ah, al = _split(a)
        bh, bl = _split(b)
        e = ((ah * bh - p) + ah * bl + al * bh) + al * bl
        s, t = _two_sum(p, c)
        u = t + e
        r = s + u
        fin = np.isfinite(r) & np.isfinite(p) & (np.abs(a) < 1e300) & (np.abs(b) < 1e300)
        d = (s - r) + u
        half = np.spacing(np.abs(r)) / 2
        tol = half * 2.0 ** -20
        ad = np.abs(d)
        sus = fin & (u != 0) & ((np.abs(ad - half) <= tol) | (np.abs(ad - half / 2) <= tol) |
                                ~((np.abs(s) <= 2 * np.abs(r)) & (np.abs(r) <= 2 * np.abs(s))))
    r = np.where(fin, r, a * b + c)
    if sus.any():
        from fractions import Fraction
        r = r.copy()
        for i in zip(*np.nonzero(sus)):
            r[i] = float(Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i])))
    return r


def _round32(s, t):
    """float32 rounding of the exact sum ``s + t`` (``s`` its float64 rounding, ``t`` the rest)."""
    with np.errstate(all="ignore"):
        r = s.astype(np.float32)
        rb = r.astype(_F64)
        diff = s - rb
        nz = (diff != 0) & (t != 0)
        if nz.any():
            # s is a float32 midpoint only when the float64 sum lost the deciding bits
            other = np.nextafter(r, np.where(diff > 0, np.float32(np.inf), np.float32(-np.inf)))
            mid = (rb + other.astype(_F64)) / 2
            fix = nz & (s == mid) & (np.sign(t) == np.sign(diff))
            r = np.where(fix, other, r)
    return r


def _fma32(a, b, c):
    """Correctly rounded ``a*b + c`` in float32 for float32 ``a``, ``c`` and integers ``b``
    below 2**29 (their product is exact in float64)."""
    a, b, c = np.broadcast_arrays(np.asarray(a, _F64), np.asarray(b, _F64), np.asarray(c, _F64))
    with np.errstate(all="ignore"):
        s, t = _two_sum(a * b, c)
    return _round32(s, t)


_HALF = {"float16": np.float16, "bfloat16": np.dtype(jnp.bfloat16).type}   # numpy scalars (usable
#                                                  in a trace: jnp.bfloat16() makes a jax array)


def _complex_of(re, im, cdt):
    out = np.empty(re.shape, cdt)
    out.real, out.imag = re, im
    return out


def _linspace_np(start, end, steps, dt):
    """torch's CPU linspace as a numpy array of dtype ``dt`` (steps >= 2)."""
    i = np.arange(steps, dtype=np.int64)
    lo = i < steps // 2
    k = np.where(lo, i, steps - 1 - i)
    name = dt.name
    with np.errstate(all="ignore"):
        if name in ("complex64", "complex128"):
            # c10::complex: each part as the real dtype's kernel computes it
            s, e = complex(start), complex(end)
            if name == "complex64":
                rt, fma = np.float32, _fma32
            else:
                rt, fma = _F64, _fma64
            parts = []
            for sp, ep in ((s.real, e.real), (s.imag, e.imag)):
                sp, ep = rt(sp), rt(ep)
                step = rt(rt(ep - sp) / rt(steps - 1))
                parts.append(np.where(lo, fma(step, k, sp), fma(-step, k, ep)).astype(rt))
            return _complex_of(parts[0], parts[1], dt.np)
        if name == "float64":
            s, e = _F64(start), _F64(end)
            step = (e - s) / _F64(steps - 1)
            return np.where(lo, _fma64(step, k, s), _fma64(-step, k, e))
        if name == "float32":
            s, e = np.float32(start), np.float32(end)
            step = np.float32(e - s) / np.float32(steps - 1)
            return np.where(lo, _fma32(step, k, s), _fma32(-step, k, e)).astype(np.float32)
        if name in _HALF:
            h = _HALF[name]
            s, e = h(start), h(end)
            f = np.float32
            step = h(f(h(f(e) - f(s))) / f(h(steps - 1)))
            kh = k.astype(h).astype(f)
            prod = (f(step) * kh).astype(h).astype(f)
            return np.where(lo, f(s) + prod, f(e) - prod).astype(h)
        # integer dtypes: the step is a double, the values truncated
        s = _F64(D.host_scalar(start, dt))
        e = _F64(D.host_scalar(end, dt))
        step = (e - s) / _F64(steps - 1)
        v = np.where(lo, _fma64(step, k, s), _fma64(-step, k, e))
        return np.trunc(v).astype(np.int64).astype(dt.np)


# ------------------------------------------------------------------ range factories' parsing
#
# torch's argument parser over arange/linspace/logspace's overloads: a value of the wrong type
# names the argument when only one overload takes that many arguments, else every overload is
# listed ("invalid combination").

_RANGE_KW = (("Tensor", "out", None), ("torch.dtype", "dtype", None),
             ("torch.layout", "layout", None), ("torch.device", "device", None),
             ("bool", "pin_memory", False), ("bool", "requires_grad", False))
_NO_OUT = tuple(p for p in _RANGE_KW if p[1] != "out")
_REQ = object()

_RANGE_OVERLOADS = {
    "arange": [((("Number", "end", _REQ),), _RANGE_KW),
               ((("Number", "start", _REQ), ("Number", "end", _REQ)), _NO_OUT),
               ((("Number", "start", _REQ), ("Number", "end", _REQ), ("Number", "step", 1)),
                _RANGE_KW)],
    "linspace": [(((a, "start", _REQ), (b, "end", _REQ), ("int", "steps", _REQ)), _RANGE_KW)
                 for a, b in (("Tensor", "Tensor"), ("Number", "Tensor"), ("Tensor", "Number"),
                              ("Number", "Number"))],
}
_RANGE_OVERLOADS["range"] = [((("Number", "start", _REQ), ("Number", "end", _REQ),
                                ("Number", "step", 1)), _RANGE_KW)]
_RANGE_OVERLOADS["logspace"] = [(pos + (("float", "base", 10.0),), kw)
                                for pos, kw in _RANGE_OVERLOADS["linspace"]]


def _range_type_ok(tp, v):
    if tp == "Tensor":
        return isinstance(v, Tensor)
    if isinstance(v, Tensor):
        if v.ndim != 0:
            return False
        if tp == "Number":
            return not v.requires_grad
        if tp == "int":
            return v.dtype.category == D._INT
        return tp == "float" and not v.requires_grad
    if tp == "Number":
        return isinstance(v, (numbers.Number, np.number, np.bool_))
    if tp == "int":
        return isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_))
    if tp == "float":
        return isinstance(v, (numbers.Real, np.integer, np.floating, np.bool_))
    if tp == "torch.dtype":
        return isinstance(v, D.dtype) or v in (float, int, bool, complex)
    if tp == "bool":
        return isinstance(v, (bool, np.bool_))
    return True


def _range_sig(pos, kw):
    parts = [f"{tp} {n}" + ("" if d is _REQ else f" = {d}") for tp, n, d in pos]
    parts.append("*")
    parts += [f"{tp} {n} = {d}" for tp, n, d in kw]
    return "(" + ", ".join(parts) + ")"


def _range_bind(name, args, kwargs, pos, kw, raise_):
    """Bind ``args``/``kwargs`` to one overload: {name: value}, or None (``raise_``: torch's
    error for the first bad argument)."""
    names = [n for _, n, _ in pos] + [n for _, n, _ in kw]
    missing = [n for i, (_, n, d) in enumerate(pos) if d is _REQ and i >= len(args)
               and n not in kwargs]
    if raise_ and len(args) > len(pos):
        least = sum(d is _REQ for _, _, d in pos)
        raise TypeError(f"{name}() takes from {least} to {len(pos)} positional arguments but "
                        f"{len(args)} were given")
    if missing and raise_:
        # (torch's plural is the other way round)
        word = "arguments" if len(missing) == 1 else "argument"
        raise TypeError(f"{name}() missing {len(missing)} required positional {word}: "
                        + ", ".join(f'"{n}"' for n in missing))
    if missing or len(args) > len(pos) or any(k not in names for k in kwargs) or \
            any(n in kwargs for _, n, _ in pos[:len(args)]):
        return None
    out = {}
    for i, (tp, n, d) in enumerate(tuple(pos) + tuple(kw)):
        if i < len(args):
            v, where = args[i], f" (position {i + 1})"
        elif n in kwargs:
            v, where = kwargs[n], ""
        else:
            out[n] = d
            continue
        if v is None and d is None:
            out[n] = None
            continue
        if not _range_type_ok(tp, v):
            if raise_:
                raise TypeError(f"{name}(): argument '{n}'{where} must be {tp}, not "
                                f"{_tp_name(v)}")
            return None
        out[n] = v
    return out


def _range_args(name, args, kwargs):
    """Parse a range factory's arguments as torch does: {parameter: value}."""
    overloads = _RANGE_OVERLOADS[name]
    if len(overloads) == 1:
        return _range_bind(name, args, kwargs, *overloads[0], True)
    for pos, kw in overloads:
        got = _range_bind(name, args, kwargs, pos, kw, False)
        if got is not None:
            return got
    n = len(args) + len(kwargs)
    plausible = [(pos, kw) for pos, kw in overloads
                 if sum(d is _REQ for _, _, d in pos) <= n <= len(pos) + len(kw)]
    if len(plausible) == 1:
        _range_bind(name, args, kwargs, *plausible[0], True)
    raise TypeError(f"{name}() received an invalid combination of arguments - got "
                    f"{_arg_desc(args, kwargs)}, but expected one of:\n" +
                    "".join(f" * {_range_sig(pos, kw)}\n" for pos, kw in overloads))


def _complex_ends(name, dtype):
    """A complex start or end infers the default complex dtype: a real ``dtype`` refuses it."""
    if dtype is not None and not D.to_dtype(dtype).is_complex:
        inferred = D.promote_types(D.get_default_dtype(), D.complex64)
        raise RuntimeError(f"torch.{name}(): inferred dtype {D.CPP_NAMES[inferred.name]} can't be "
                           f"safely cast to passed dtype {D.legacy_name(D.to_dtype(dtype))}")


def _zero_dim_ends(name, start, end):
    """linspace/logspace's check of tensor ``start``/``end``: 0-dimensional only."""
    ts = [(w, t) for w, t in (("start", start), ("end", end)) if isinstance(t, Tensor)]
    bad = [f"{w} with {t.ndim} dimension(s)" for w, t in ts
           if t.ndim != 0 or len(ts) == 2]      # (both tensors: torch names both)
    if any(t.ndim != 0 for _, t in ts):
        raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got "
                           f"{' and '.join(bad)}.")


def _range_scalar(v, what):
    v = _num(v)
    if isinstance(v, complex):
        raise TypeError(f"{what}(): argument must be a real number, not complex")
    return D.parse_scalar(v)


@functools.partial(with_out, dtype_from_out=True)      # (torch computes in out's dtype)
def linspace(*args, **kwargs):
    """``steps`` values from ``start`` to ``end``, computed as torch's CPU kernel does."""
    a = _range_args("linspace", args, kwargs)
    start, end, steps, dtype, device, requires_grad = (
        a["start"], a["end"], a["steps"], a["dtype"], a["device"], a["requires_grad"])
    _zero_dim_ends("linspace", start, end)
    start, end = _num(start), _num(end)
    if isinstance(start, complex) or isinstance(end, complex):
        _complex_ends("linspace", dtype)
    if dtype is None and (isinstance(start, complex) or isinstance(end, complex)):
        dtype = D.promote_types(D.get_default_dtype(), D.complex64)   # (torch's complex default)
    if isinstance(steps, Tensor):
        steps = int(steps.item())
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _dt(dtype)
    _check_alloc((steps,), dt, device)
    if (dt is D.bool or dt in D.BAREBONES or dt in D.FLOAT8) and steps > 1:
        raise NotImplementedError(f"\"linspace_cpu\" not implemented for '{D.legacy_name(dt)}'")
    if dt.category != D._COMPLEX and (isinstance(start, complex) or isinstance(end, complex)):
        return _finish(jnp.linspace(start, end, steps, dtype=dt.np), device, requires_grad)
    start = D.check_scalar(start, dt, steps)
    end = D.check_scalar(end, dt, steps)
    if steps == 0:
        vals = np.zeros(0, dt.np)
    elif steps == 1:
        vals = np.array([D.host_scalar(start, dt)])
    else:
        vals = _linspace_np(start, end, steps, dt)
    return _finish(_to_jax(vals, dt), device, requires_grad)


def _pow(b, x):
    """The C library's ``pow`` (overflow, zero and negative bases as numpy's: inf, nan)."""
    try:
        return math.pow(b, x)
    except (ValueError, ZeroDivisionError, OverflowError):
        with np.errstate(all="ignore"):
            return float(np.power(b, x))


@functools.partial(with_out, dtype_from_out=True)
def logspace(*args, **kwargs):
    """``base ** linspace(start, end, steps)``, computed as torch's CPU kernel does."""
    a = _range_args("logspace", args, kwargs)
    start, end, steps, base, dtype, device, requires_grad = (
        a["start"], a["end"], a["steps"], a["base"], a["dtype"], a["device"],
        a["requires_grad"])
    _zero_dim_ends("logspace", start, end)
    base = _num(base)
    if isinstance(base, complex):
        if base.imag:
            raise RuntimeError("value cannot be converted to type double without overflow")
        base = base.real
    start, end = _num(start), _num(end)
    if isinstance(start, complex) or isinstance(end, complex):
        _complex_ends("logspace", dtype)
    if dtype is None and (isinstance(start, complex) or isinstance(end, complex)):
        dtype = D.promote_types(D.get_default_dtype(), D.complex64)   # (torch's complex default)
    if isinstance(steps, Tensor):
        steps = int(steps.item())
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = _dt(dtype)
    _check_alloc((steps,), dt, device)
    if (dt is D.bool or dt in D.BAREBONES) and steps > 1:
        raise NotImplementedError(f"\"logspace_cpu\" not implemented for '{D.legacy_name(dt)}'")
    if dt.category == D._COMPLEX or isinstance(start, complex) or isinstance(end, complex):
        # complex: jax's logspace (torch's complex kernel rounds differently: DIFFERENCES.md)
        return _finish(jnp.logspace(start, end, steps, base=base, dtype=dt.np), device,
                       requires_grad)
    start = D.check_scalar(start, dt, steps)
    end = D.check_scalar(end, dt, steps)
    with np.errstate(all="ignore"):
        if steps == 0:
            vals = np.zeros(0, dt.np)
        else:
            # start and end in the dtype, their difference in the dtype, the exponents in
            # double (not fused), pow in double, then the cast to the dtype
            s, e = D.host_scalar(start, dt), D.host_scalar(end, dt)
            if dt.category in (D._INT, D._BOOL):
                diff = _F64(int(e) - int(s))
            elif dt.name in _HALF:
                diff = _F64(_HALF[dt.name](np.float32(e) - np.float32(s)))
            else:
                diff = _F64(e - s)
            if steps == 1:
                ex = np.array([_F64(s)])
            else:
                step = diff / _F64(steps - 1)
                i = np.arange(steps, dtype=np.int64)
                lo = i < steps // 2
                k = np.where(lo, i, steps - 1 - i).astype(_F64)
                ex = np.where(lo, _F64(s) + step * k, _F64(e) - step * k)
            # (math.pow is the C library's pow, as torch's kernel calls; numpy's float64 power
            # is a SIMD approximation on AVX-512 machines, off in the last bit)
            v = np.array([_pow(float(base), x) for x in ex.tolist()], dtype=_F64)
            vals = _to_int_dtype(v, dt) if dt.category == D._INT else v.astype(dt.np)
    return _finish(_to_jax(vals, dt), device, requires_grad)


def _to_int_dtype(v, dt):
    """C's double -> integer conversion on x86 (as torch's kernels store): truncation, and the
    "integer indefinite" value for what does not fit (narrow types go through int32)."""
    v = np.trunc(v)
    if dt is D.int64:
        bad = ~(np.abs(v) < 2.0 ** 63) & ~(v == -2.0 ** 63)
        out = np.where(bad, 0, v).astype(np.int64)
        return np.where(bad, np.int64(-2 ** 63), out)
    bad = ~((v >= -2.0 ** 31) & (v < 2.0 ** 31))
    out = np.where(bad, -2 ** 31, np.where(bad, 0, v)).astype(np.int64)
    return out.astype(np.int32).astype(dt.np)


def _arange_np(start, step, n, dt):
    """torch's CPU arange values (``n`` of them) in dtype ``dt``."""
    i = np.arange(n, dtype=np.int64)
    name = dt.name
    if dt.category == D._INT:
        s = int(D.host_scalar(start, D.int64))
        st = int(D.host_scalar(step, D.int64))
        with np.errstate(all="ignore"):
            return (np.int64(s) + np.int64(st) * i).astype(dt.np)
    width = 32 // dt.itemsize           # elements per 256-bit vector (AVX2)
    nvec = (n // (2 * width)) * 2 * width
    k = i % width
    blk = i - k
    with np.errstate(all="ignore"):
        if name in ("float64", "float32"):
            s, st = _F64(start), _F64(step)
            base = _fma64(st, blk, s)
            if name == "float32":
                base = base.astype(np.float32).astype(_F64)
            vec = _fma64(k, st, base)
            tail = _fma64(st, i, s)
            return np.where(i < nvec, vec, tail).astype(dt.np)
        # half types accumulate in float
        f = np.float32
        s, st = f(start), f(step)
        base = _fma32(st, blk, s).astype(_HALF[name]).astype(_F64)
        vec = _fma32(st, k, base)
        tail = _fma32(st, i, s)
        return np.where(i < nvec, vec, tail).astype(dt.np)


@functools.partial(with_out, dtype_from_out=True)
def arange(*args, **kwargs):
    """Values from ``start`` to ``end`` (exclusive); int64 for integer arguments. The size and
    values follow torch's CPU kernel (an integer dtype truncates ``start`` and ``step``)."""
    if 0 < len(args) <= 2 and args[0].__class__ is int and args[-1].__class__ is int and (
            not kwargs or kwargs.keys() <= _ARANGE_QUICK_KW):
        # ``arange(n)``, ``arange(a, b)`` with Python ints (position ids, index ranges), in
        # int64 or a dtype that holds every value of the range exactly: no check below can
        # refuse an increasing range of such values, and torch's kernel computes them exactly
        start, end = (0, args[0]) if len(args) == 1 else args
        dtype = kwargs.get("dtype")
        dt = D.int64 if dtype is None else (
            dtype if dtype.__class__ is D.dtype and dtype in _ARANGE_QUICK_DTYPES else None)
        if dt is not None and kwargs.get("requires_grad", False).__class__ is bool and \
                0 <= end - start <= _ARANGE_QUICK and \
                -_ARANGE_QUICK <= start <= _ARANGE_QUICK - (end - start):
            return _finish(_tiers.to_device(np.arange(start, end, dtype=dt.np)),
                           kwargs.get("device"), kwargs.get("requires_grad", False))
    a = _range_args("arange", args, kwargs)
    start, end, step = a.get("start", 0), a["end"], a.get("step", 1)
    dtype, device, requires_grad = a["dtype"], a["device"], a["requires_grad"]
    # (torch's parser reads a numpy bool as a double)
    start, end, step = (float(v) if isinstance(v, np.bool_) else _num(v)
                        for v in (start, end, step))
    for v in (start, end, step):
        if isinstance(v, complex):
            if v.imag:
                # (torch reads a Number as a double: a complex one overflows that)
                raise RuntimeError("value cannot be converted to type double without overflow")
            v = v.real
        D.parse_scalar(v)
    start, end, step = (v.real if isinstance(v, complex) else v for v in (start, end, step))
    is_float = any(isinstance(v, float) for v in (start, end, step))
    dt = _dt(dtype, D.get_default_dtype() if is_float else D.int64)
    if dt.category not in (D._INT, D._FLOAT) or dt in D.BAREBONES or dt in D.FLOAT8:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{D.legacy_name(dt)}'")
    ds, de, dst = (float(D.check_scalar(v, D.float64)) for v in (start, end, step))
    if not (dst > 0 or dst < 0):
        raise RuntimeError("step must be nonzero")
    if not (np.isfinite(ds) and np.isfinite(de)):
        raise RuntimeError(f"unsupported range: {_fmt_num(ds)} -> {_fmt_num(de)}")
    if not ((dst > 0 and de >= ds) or (dst < 0 and de <= ds)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dt.category == D._INT:
        xs, xe, xst = (int(D.host_scalar(D.check_scalar(v, D.int64), D.int64))
                       for v in (start, end, step))
    else:
        xs, xst = ds, dst
        if dt.name in _HALF:
            xs, xst = float(np.float32(xs)), float(np.float32(xst))
    if dt is D.int64:
        if xst == 0:
            raise ValueError("step must be nonzero")
        sgn = (xst > 0) - (xst < 0)
        num = xe - xs + xst - sgn
        q = abs(num) // abs(xst)
        size_d = float(q if (num >= 0) == (xst > 0) else -q)
    else:
        with np.errstate(all="ignore"):
            size_d = float(np.ceil((de - ds) / dst))
    if not (size_d >= 0 and size_d <= float(_I64_MAX)):
        raise RuntimeError("invalid size, possible overflow?")
    n = int(size_d)
    _check_alloc((n,), dt, device)
    vals = _arange_np(xs, xst, n, dt)
    return _finish(_to_jax(vals, dt), device, requires_grad)


_ARANGE_QUICK = 1 << 24
# arange's quick path: its keywords, and the dtypes holding every integer up to _ARANGE_QUICK
_ARANGE_QUICK_KW = frozenset(("dtype", "device", "requires_grad"))
_ARANGE_QUICK_DTYPES = frozenset((D.int64, D.int32, D.float32, D.float64))


def _fmt_num(v):
    if isinstance(v, float) and np.isfinite(v) and v == int(v):
        return str(int(v))
    return str(v)


def _no_index(v):
    """torch reads a numpy timedelta64 (a numpy integer) as an int, through the ``__index__``
    it lacks: its TypeError."""
    if isinstance(v, np.timedelta64):
        raise TypeError("'numpy.timedelta64' object cannot be interpreted as an integer")


def _int_arg(v):
    """``v`` as torch's int parameter takes it (an int, a numpy int or a one-element integer
    tensor; not a bool), else None."""
    _no_index(v)
    if isinstance(v, (bool, np.bool_)):
        return None
    if isinstance(v, (numbers.Integral, np.integer)):
        return int(v)
    if isinstance(v, Tensor) and _int_tensor(v):
        return int(v.item())
    return None


_NO_M = object()


def _eye(n, m=_NO_M, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         **kwargs):
    """torch.eye's argument parsing (its two overloads: ``(n)`` and ``(n, m)``)."""
    given = [n] + ([] if m is _NO_M else [m])
    opts = dict(out=out, dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)
    ni, mi = _int_arg(n), None if m is _NO_M else _int_arg(m)
    bad = ni is None or (m is not _NO_M and mi is None) or kwargs
    if not bad:
        try:
            _check_kw("eye", **opts)
        except TypeError:
            bad = True
    if bad:
        kw = {k: v for k, v in opts.items()
              if v is not None and not (k == "requires_grad" and v is False)}
        kw.update(kwargs)
        if m is _NO_M and not kw:           # one argument: one overload takes it
            if ni is None:
                raise TypeError(f"eye(): argument 'n' (position 1) must be int, not "
                                f"{_tp_name(n)}")
            _check_kw("eye", **opts)
        sig = ("Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
               "torch.device device = None, bool pin_memory = False, bool requires_grad = False")
        raise TypeError(f"eye() received an invalid combination of arguments - got "
                        f"{_arg_desc(given, kw)}, but expected one of:\n"
                        f" * (int n, *, {sig})\n * (int n, int m, *, {sig})\n")
    if out is not None:
        if dtype is None:
            dtype = out.dtype
        elif D.to_dtype(dtype) is not out.dtype:
            raise RuntimeError(f"dtype {D.legacy_name(D.to_dtype(dtype))} does not match dtype "
                               f"of out parameter ({D.legacy_name(out.dtype)})")
        r = _eye_impl(ni, mi, dtype=dtype, layout=layout, device=device)
        r = write_out(r, out, "eye")
        if requires_grad:
            r.requires_grad_(True)
        return r
    return _eye_impl(ni, mi, dtype=dtype, layout=layout, device=device,
                     requires_grad=requires_grad)


def _eye_impl(n, m=None, *, dtype=None, layout=None, device=None, requires_grad=False):
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    dt = _dt(dtype)
    _check_alloc((n, n if m is None else m), dt, device)
    if dt in D.BAREBONES:
        raise NotImplementedError(f"\"eye\" not implemented for '{D.legacy_name(dt)}'")
    if dt in _ZERO_BITS:        # (the off-diagonal zeros as torch's zero bytes)
        e = jnp.where(jnp.eye(n, m, dtype=bool), jnp.eye(n, m, dtype=dt.np), _ZERO_BITS[dt])
    else:                       # (made on the host: jnp.eye dispatches four programs)
        e = _tiers.to_device(np.eye(n, m, dtype=dt.np))
    return _finish(e, device, requires_grad, layout=layout)


def eye(n, m=_NO_M, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
        **kwargs):
    """The identity matrix ``n x n`` (or ``n x m``), with torch's argument errors."""
    return _eye(n, m, out=out, dtype=dtype, layout=layout, device=device,
                requires_grad=requires_grad, **kwargs)


# ------------------------------------------------------------------ random

def _random_dtype(dt, kernel):
    if dt.category in (D._INT, D._BOOL) or dt in D.FLOAT8:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{D.legacy_name(dt)}\'')


def _draw(sampler, shape, dt, generator):
    """``sampler`` (jax.random.uniform/normal) in ``dt``; a complex dtype draws its real and
    imaginary parts (each with variance 1/2 for the normal, as torch)."""
    key = _random.next_key_data(generator)
    if dt.category != D._COMPLEX:
        return _random.draw(sampler, key, shape, dt.np)
    part = D.float64 if dt is D.complex128 else D.float32
    arr = _random.draw(sampler, key, tuple(shape) + (2,), part.np)
    if sampler is jax.random.normal:
        arr = arr * np.sqrt(0.5).astype(part.np)
    return jax.lax.complex(arr[..., 0], arr[..., 1])


def _rand(shape, generator=None, dtype=None, layout=None, device=None,
          requires_grad=False, pin_memory=False):
    """Uniform samples in [0, 1)."""
    dt = _dt(dtype)
    _random_dtype(dt, "check_uniform_bounds")
    _check_alloc(shape, dt, device)
    return _finish(_draw(jax.random.uniform, shape, dt, generator), device, requires_grad,
                   pin_memory, layout=layout)


def _randn(shape, generator=None, dtype=None, layout=None, device=None,
           requires_grad=False, pin_memory=False):
    """Standard normal samples."""
    dt = _dt(dtype)
    _random_dtype(dt, "normal_kernel_cpu")
    _check_alloc(shape, dt, device)
    return _finish(_draw(jax.random.normal, shape, dt, generator), device, requires_grad,
                   pin_memory, layout=layout)


rand = _sized_factory("rand", _rand, [("generator",) + _OPTS, _OPTS])
randn = _sized_factory("randn", _randn, [("generator",) + _OPTS, _OPTS])


_RANDINT_OPTS = ("Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
                 "torch.device device = None, bool pin_memory = False, "
                 "bool requires_grad = False")
_RANDINT_SIGS = "".join(
    f" * ({args}, *, {gen}{_RANDINT_OPTS})\n"
    for args in ("int high, tuple of ints size", "int low, int high, tuple of ints size")
    for gen in ("torch.Generator generator, ", ""))


def _randint_args(args, kwargs):
    """torch.randint's parsing of ``(high, size)`` / ``(low, high, size)``: returns
    ``(low, high, size)`` or raises torch's TypeError (naming the argument when only one
    overload takes that many arguments, else listing the overloads)."""
    n = len(args) + len(kwargs)

    def combo():
        return TypeError(f"randint() received an invalid combination of arguments - got "
                         f"{_arg_desc(args, kwargs)}, but expected one of:\n" + _RANDINT_SIGS)
    names = ("high", "size") if len(args) <= 2 and "low" not in kwargs else \
        ("low", "high", "size")
    vals = dict(zip(names, args))
    for k in names[len(args):]:
        if k in kwargs:
            vals[k] = kwargs[k]
    if len(args) > 3 or any(k not in vals for k in names):
        raise combo()
    only = n == 2           # only (high, size) without a generator takes two arguments
    for pos, k in enumerate(names[:-1], 1):
        if _int_arg(vals[k]) is None:
            if only:
                where = f" (position {pos})" if pos <= len(args) else ""
                raise TypeError(f"randint(): argument '{k}'{where} must be int, not "
                                f"{_tp_name(vals[k])}")
            raise combo()
    size = vals["size"]
    if not isinstance(size, (tuple, list)) or (size and not _intlike(size[0])):
        if only or n == 1:
            where = f" (position {len(names)})" if len(args) == len(names) else ""
            if isinstance(size, (tuple, list)):
                raise TypeError(f"randint(): argument 'size'{where} must be tuple of ints, but "
                                f"found element of type {_tp_name(size[0])} at pos 0")
            raise TypeError(f"randint(): argument 'size'{where} must be tuple of ints, not "
                            f"{_tp_name(size)}")
        raise combo()
    low = _int_arg(vals["low"]) if "low" in vals else 0
    return low, _int_arg(vals["high"]), tuple(size)


def randint(*args, generator=None, dtype=None, layout=None, device=None, requires_grad=False,
            pin_memory=False, out=None, **kwargs):
    """Integers uniform in [low, high); int64 by default: ``randint(high, size)`` or
    ``randint(low, high, size)`` with torch's argument errors."""
    given = dict(kwargs)
    for k, v, d in (("generator", generator, None), ("dtype", dtype, None),
                    ("layout", layout, None), ("device", device, None),
                    ("requires_grad", requires_grad, False), ("pin_memory", pin_memory, False),
                    ("out", out, None)):
        if v is not d:
            given[k] = v
    bad = [k for k in kwargs if k not in ("low", "high", "size")]
    try:
        _check_kw("randint", generator=generator, dtype=dtype, layout=layout, device=device,
                  requires_grad=requires_grad, pin_memory=pin_memory, out=out)
    except TypeError:
        bad.append("?")
    pos_kw = {k: v for k, v in kwargs.items() if k in ("low", "high", "size")}
    if bad:
        _randint_args(args, given)          # its own error first, when it has one
        raise TypeError(f"randint() received an invalid combination of arguments - got "
                        f"{_arg_desc(args, given)}, but expected one of:\n" + _RANDINT_SIGS)
    extra = {k: v for k, v in given.items() if k not in pos_kw}
    low, high, size = _randint_args(args, {**pos_kw, **extra})
    if out is not None:
        if dtype is None:
            dtype = out.dtype
        r = _randint(low, high, size, generator=generator, dtype=dtype, layout=layout,
                     device=device)
        return write_out(r, out, "randint")
    return _randint(low, high, size, generator=generator, dtype=dtype, layout=layout,
                    device=device, requires_grad=requires_grad)


def _randint(low, high, size, *, generator=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    if not (-2 ** 63 <= low <= _I64_MAX and -2 ** 63 <= high <= _I64_MAX):
        raise ValueError("Overflow when unpacking long long")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    dt, shape = _dt(dtype, D.int64), _size((size,), "randint")
    if dt.is_complex:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                           "boolean types")
    if dt in D.FLOAT8:
        raise NotImplementedError(f"\"random_update_from_to\" not implemented for "
                                  f"'{D.legacy_name(dt)}'")
    _randint_bounds(low, high, dt)
    _check_alloc(shape, dt, device)
    arr = _random.draw(jax.random.randint, _random.next_key_data(generator), shape, low, high,
                       np.int64)
    _fused.bound(arr, low, high - 1)        # (an index check of the draw then reads nothing)
    if arr.dtype != dt.np:
        arr = arr.astype(dt.np)
    return _finish(arr, device, requires_grad, layout=layout)


_C_NAMES = {"bool": "bool", "uint8": "unsigned char", "int8": "signed char",
            "int16": "short int", "int32": "int", "float16": "c10::Half",
            "uint16": "short unsigned int", "uint32": "unsigned int"}


def _randint_bounds(low, high, dt):
    """torch's check that [low, high) fits the result dtype."""
    if dt.name not in _C_NAMES:
        return
    lo, hi = (0, 1) if dt is D.bool else (-65504, 65504) if dt is D.float16 else \
        D._INT_RANGE[dt.name]
    if low < lo:
        raise RuntimeError(f"from is out of bounds for {_C_NAMES[dt.name]}")
    if high - 1 > hi:
        raise RuntimeError(f"to - 1 is out of bounds for {_C_NAMES[dt.name]}")


def _randperm_bounds(n, dt):
    if dt is D.bool or dt in D.BAREBONES or dt.is_complex or dt in D.FLOAT8:
        raise NotImplementedError(f"\"randperm\" not implemented for '{D.legacy_name(dt)}'")
    if dt.category == D._INT and n - 1 > D._INT_RANGE[dt.name][1]:
        name = "int" if dt is D.int32 else f"{dt.name}_t"
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    if dt is D.float16 and n > 2049:
        raise RuntimeError("n cannot be greater than 2049 for Half type.")
    if dt is D.float32 and n > 2 ** 24 + 1:
        raise RuntimeError("n cannot be greater than 2^24+1 for Float type.")


@checks_generator("randperm", _with_and_without_generator(
    "int n, ", "Tensor out = None, " + _FACTORY_TAIL))
@with_out
def randperm(n, *, generator=None, dtype=None, layout=None, device=None,
             requires_grad=False, pin_memory=False):
    ni = _int_arg(n)
    if ni is None:
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not {_tp_name(n)}")
    n = ni
    _check_kw("randperm", dtype=dtype, layout=layout, device=device,
              requires_grad=requires_grad, pin_memory=pin_memory)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dt = _dt(dtype, D.int64)
    _randperm_bounds(n, dt)
    _check_alloc((n,), dt, device)
    arr = jax.random.permutation(_random.next_key(generator), n).astype(dt.np)
    return _finish(arr, device, requires_grad, layout=layout)


@checks_generator("rand_like", _with_and_without_generator("Tensor input, ", _LIKE_TAIL))
@_keeps_layout
def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None):
    return rand(*input.shape, generator=generator, dtype=_like(input, dtype),
                device=_like_dev(input, device), requires_grad=requires_grad, layout=layout)


@checks_generator("randn_like", _with_and_without_generator("Tensor input, ", _LIKE_TAIL))
@_keeps_layout
def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None):
    return randn(*input.shape, generator=generator, dtype=_like(input, dtype),
                 device=_like_dev(input, device), requires_grad=requires_grad, layout=layout)


@checks_generator("randint_like", sum((_with_and_without_generator(h, _LIKE_TAIL) for h in (
    "Tensor input, int low, int high, ", "Tensor input, Tensor high, ",
    "Tensor input, int high, ")), ()))
@_keeps_layout
def randint_like(input, low=0, high=None, *, generator=None, dtype=None, layout=None,
                 device=None, requires_grad=False, memory_format=None):
    if high is None:
        low, high = 0, low
    if isinstance(high, Tensor):
        # (torch's overload of a Tensor high: a 0-dim one, its value truncated to an integer)
        if high.ndim != 0:
            raise RuntimeError("high must be a scalar tensor and on CPU")
        high = int(high.item())
    return randint(low, high, tuple(input.shape), generator=generator,
                   dtype=_like(input, dtype), device=_like_dev(input, device),
                   requires_grad=requires_grad, layout=layout)


def _legacy_tensor(cls, *args, **kwargs):
    """``torch.Tensor(data)`` (a float32 copy) or ``torch.Tensor(*sizes)`` (uninitialised)."""
    if cls is not Tensor and not args:
        return object.__new__(cls)
    from ._ops.typeinfo import legacy_new
    t = legacy_new(None, args, kwargs)
    if cls is Tensor:
        return t
    out = object.__new__(cls)
    for s in Tensor.__slots__:
        if s not in ("__weakref__", "__dict__"):
            setattr(out, s, getattr(t, s))
    return out
