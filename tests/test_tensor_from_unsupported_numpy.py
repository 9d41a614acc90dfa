"""torch.tensor / as_tensor / asarray / Tensor.new_tensor of numpy values torch has no dtype
for (strings, bytes, dates, void, long doubles), as numpy scalars, arrays and list elements,
with and without a dtype, against torch: the error's class and message, or the result's
shape and dtype (a long double stored into a float dtype, bytes and void read as sequences)."""
import datetime

import numpy as np
import pytest
import torch

import torchlike

VALUES = {
    "str_": lambda: np.str_("a"), "str_empty": lambda: np.str_(""),
    "bytes_": lambda: np.bytes_(b"ab"),
    "void": lambda: np.void(b"ab"), "datetime64": lambda: np.datetime64("2020-01-01"),
    "timedelta64": lambda: np.timedelta64(3, "s"), "timedelta64_nat": lambda: np.timedelta64("NaT"),
    "longdouble": lambda: np.longdouble(1.5), "clongdouble": lambda: np.clongdouble(1.5),
    "str_array": lambda: np.array(["a", "b"]), "bytes_array": lambda: np.array([b"a"]),
    "object_array": lambda: np.array([1, "a"], dtype=object),
    "datetime64_array": lambda: np.array(["2020-01-01"], dtype="datetime64[D]"),
    "void_array": lambda: np.zeros(2, dtype="V4"),
    "longdouble_array": lambda: np.ones(2, np.longdouble),
    "structured_array": lambda: np.zeros(2, dtype=[("a", "f4")]),
    "list_str_": lambda: [np.str_("a")], "list_int_str_": lambda: [1, np.str_("ab")],
    "list_bytes_": lambda: [np.bytes_(b"a")], "list_int_bytes_": lambda: [1, np.bytes_(b"a")],
    "list_bytes": lambda: [b"a"], "list_two_bytes": lambda: [b"ab", b"cd"],
    "list_void": lambda: [np.void(b"ab")], "list_datetime64": lambda: [np.datetime64("2020-01-01")],
    "list_float_datetime64": lambda: [1.0, np.datetime64("2020-01-01")],
    "nested_timedelta64": lambda: [[np.timedelta64(1, "s")]],
    "list_longdouble": lambda: [np.longdouble(1)], "list_clongdouble": lambda: [np.clongdouble(1)],
    "nested_str_array": lambda: [np.array(["a"])],
    "datetime": lambda: datetime.datetime(2020, 1, 1),
    "list_int_datetime": lambda: [1, datetime.datetime(2020, 1, 1)],
    "list_float16": lambda: [np.float16(1)], "float32": lambda: np.float32(1.5),
    "list_complex64": lambda: [np.complex64(1)], "list_bool_": lambda: [np.bool_(True)],
    "list_float64": lambda: [np.float64(1.5)],
}

MAKERS = {
    "tensor": lambda m, v: m.tensor(v), "as_tensor": lambda m, v: m.as_tensor(v),
    "asarray": lambda m, v: m.asarray(v),
    "tensor_float32": lambda m, v: m.tensor(v, dtype=m.float32),
    "tensor_int64": lambda m, v: m.tensor(v, dtype=m.int64),
    "tensor_complex64": lambda m, v: m.tensor(v, dtype=m.complex64),
    "tensor_bool": lambda m, v: m.tensor(v, dtype=m.bool),
    "new_tensor": lambda m, v: m.ones(1).new_tensor(v),
    "as_tensor_float64": lambda m, v: m.as_tensor(v, dtype=m.float64),
}


def _outcome(m, fn):
    try:
        r = fn(m)
    except Exception as e:      # noqa: BLE001  (class and message are compared)
        return type(e).__name__, str(e)
    return "ok", tuple(r.shape), str(r.dtype).replace("torchlike", "torch")


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("maker", list(MAKERS))
@pytest.mark.parametrize("value", list(VALUES))
def test_unsupported_numpy_values_as_torch(value, maker):
    def fn(m):
        return MAKERS[maker](m, VALUES[value]())
    assert _outcome(torchlike, fn) == _outcome(torch, fn)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("value,dtype", [("longdouble", "float32"), ("clongdouble", "complex64"),
                                         ("list_bytes", "float32"), ("list_longdouble", "float64")])
def test_stored_values_as_torch(value, dtype):
    """Where torch stores such values, the values are its own."""
    def fn(m):
        return m.tensor(VALUES[value](), dtype=getattr(m, dtype)).tolist()
    assert fn(torchlike) == fn(torch)


RANGES = {
    "arange": lambda m, v: m.arange(v), "arange_from_zero": lambda m, v: m.arange(0, v),
    "linspace": lambda m, v: m.linspace(0, v, 3), "logspace": lambda m, v: m.logspace(0, v, 3),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("value", ["longdouble", "clongdouble"])
@pytest.mark.parametrize("maker", list(RANGES))
def test_long_double_range_bounds_as_torch(maker, value):
    """torch reads a long double bound as a double (a complex one: its real part)."""
    def fn(m):
        r = RANGES[maker](m, VALUES[value]())
        return tuple(r.shape), str(r.dtype).replace("torchlike", "torch"), r.tolist()
    assert fn(torchlike) == fn(torch)


TIMEDELTA_ARGS = {
    "full": lambda m, v: m.full((2,), v),
    "full_float32": lambda m, v: m.full((2,), v, dtype=m.float32),
    "full_like": lambda m, v: m.full_like(m.ones(2), v), "arange": lambda m, v: m.arange(v),
    "arange_from_zero": lambda m, v: m.arange(0, v), "linspace": lambda m, v: m.linspace(0, v, 3),
    "logspace": lambda m, v: m.logspace(0, v, 3), "scalar_tensor": lambda m, v: m.scalar_tensor(v),
    "zeros": lambda m, v: m.zeros(v), "empty": lambda m, v: m.empty(2, v),
    "randint": lambda m, v: m.randint(v, (2,)), "eye": lambda m, v: m.eye(v),
    "fill_": lambda m, v: m.ones(2).fill_(v), "randperm": lambda m, v: m.randperm(v),
    "multinomial": lambda m, v: m.multinomial(m.ones(3), v),
}


@pytest.mark.parametrize("maker", list(TIMEDELTA_ARGS))
def test_timedelta64_as_an_int_or_scalar_argument(maker):
    """A numpy timedelta64 is a numpy integer without ``__index__``: torch's errors."""
    def fn(m):
        return TIMEDELTA_ARGS[maker](m, np.timedelta64(3, "s"))
    assert _outcome(torchlike, fn) == _outcome(torch, fn)
