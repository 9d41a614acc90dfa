"""torch.Size against live torch: what its constructor accepts (ints and numpy ints kept as
they are, anything whose ``__index__`` gives an int: bools, one-element int tensors), its
errors (TypeError naming the first item that is not an int, tuple's own), ints past int64
(kept; its repr and ``numel`` raise torch's ValueError), and what a Size built from such items
gives back (slices, sums, ``numel``, pickling).

Each case is ``fn(m)`` run through ``same_as_torch``: the same value (with the items' types),
or the same exception class and message.
"""
from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest

from oracle import same_as_torch


class _Index:
    """An object with ``__index__`` (torch.Size takes it as the int it gives)."""

    def __init__(self, v):
        self.v = v

    def __index__(self):
        return self.v


class _IntLike:
    """``__int__`` alone: not an int to torch.Size."""

    def __int__(self):
        return 4


class _IndexRaises:
    def __index__(self):
        raise KeyError("no index")


def _shown(r):
    """A Size's items with their types (torch keeps numpy ints as they are) and its repr, or
    the repr's error (torch's, past int64)."""
    try:
        text = repr(r)
    except ValueError as e:
        text = f"ValueError: {e}"
    return [int(x) for x in r], [type(x).__name__ for x in r], text


ITEMS = {
    # ints past int64: kept; the repr raises torch's ValueError
    "int_2_70": lambda m: [2 ** 70],
    "int_minus_2_70": lambda m: [3, -2 ** 70],
    "int_2_63": lambda m: [2 ** 63],
    "int64_max": lambda m: [2 ** 63 - 1],
    "int64_min": lambda m: [-2 ** 63],
    "negative": lambda m: [-1, 2],
    "bools": lambda m: [True, False],
    "int_subclass_bool_index": lambda m: [_Index(True)],
    "index_object": lambda m: [_Index(4)],
    "index_object_2_70": lambda m: [_Index(2 ** 70)],
    "int_only_object": lambda m: [_IntLike()],
    "index_raising": lambda m: [_IndexRaises()],
    # tensors: their __index__ (one-element int tensors), torch's TypeError otherwise
    "tensor_float_0d": lambda m: [m.tensor(2.)],
    "tensor_int_0d": lambda m: [m.tensor(3)],
    "tensor_bool_0d": lambda m: [m.tensor(True)],
    "tensor_int8_0d": lambda m: [2, m.tensor(5, dtype=m.int8)],
    "tensor_int_one_element": lambda m: [m.tensor([3])],
    "tensor_int_two_elements": lambda m: [m.tensor([3, 4])],
    "tensor_requires_grad": lambda m: [m.tensor(2.5, requires_grad=True)],
    "tensor_meta": lambda m: [m.tensor(3, device="meta")],
    "tensor_big": lambda m: [m.tensor(2 ** 62)],
    "tensor_itself": lambda m: m.tensor([1, 2]),
    # floats, strings, None, nesting
    "float": lambda m: [2.0],
    "float_nan": lambda m: [float("nan")],
    "complex": lambda m: [1j],
    "string_item": lambda m: ["3"],
    "string": lambda m: "34",
    "none": lambda m: [None],
    "nested_list": lambda m: [[1, 2]],
    "nested_tuple": lambda m: [(1,)],
    "third_item_bad": lambda m: [1, 2, "x"],
    # numpy: ints kept as they are (range checked), arrays by their __index__
    "numpy_ints": lambda m: [np.int64(3), np.int32(2), np.uint8(5)],
    "numpy_uint64_max": lambda m: [np.uint64(2 ** 64 - 1)],
    "numpy_uint64_2_63": lambda m: [np.uint64(2 ** 63)],
    "numpy_float": lambda m: [np.float64(3.0)],
    "numpy_bool": lambda m: [np.bool_(True)],
    "numpy_0d_array": lambda m: [np.array(3)],
    "numpy_1d_array": lambda m: [np.array([3])],
    # iterables
    "generator": lambda m: (i for i in range(3)),
    "range": lambda m: range(3),
    "size": lambda m: m.Size([1, 2]),
    "dict": lambda m: {1: 2, 3: 4},
    "empty": lambda m: [],
}


@pytest.mark.parametrize("name", list(ITEMS))
def test_size_from_items(name):
    """Was: a Size past int64 printed (torch: ValueError); a float, meta or two-element tensor
    raised ``Tensor.__index__``'s error (torch: Size's TypeError naming 'Tensor'); numpy ints
    became Python ints; an ``__index__`` that raised was not Size's TypeError."""
    def build(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)     # (__index__ giving a bool)
            return _shown(m.Size(ITEMS[name](m)))
    same_as_torch(build)


CALLS = {
    "int": lambda m: m.Size(3),
    "none": lambda m: m.Size(None),
    "float": lambda m: m.Size(2.0),
    "tensor_0d": lambda m: m.Size(m.tensor(3)),
    "two_arguments": lambda m: m.Size([1], [2]),
    "keyword": lambda m: m.Size(sizes=[1]),
    "no_argument": lambda m: _shown(m.Size()),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_size_call_errors(name):
    same_as_torch(CALLS[name])


def _numpy_size(m):
    return m.Size([np.int64(2), 3, np.uint8(4)])


DERIVED = {
    "slice": lambda m: _shown(_numpy_size(m)[0:2]),
    "add": lambda m: _shown(_numpy_size(m) + (5,)),
    "radd": lambda m: _shown((5,) + _numpy_size(m)),
    "mul": lambda m: _shown(_numpy_size(m) * 2),
    "add_past_int64": lambda m: _numpy_size(m) + (2 ** 64,),
    "add_float": lambda m: _numpy_size(m) + (2.0,),
    "numel": lambda m: (lambda n: (n, type(n).__name__))(_numpy_size(m).numel()),
    # torch's numel is an int64 product: it wraps; an item past int64 is its ValueError
    "numel_wraps": lambda m: [m.Size(s).numel() for s in (
        [2 ** 62, 4], [2 ** 62, 2], [2 ** 32, 2 ** 32], [-1, 3], [])],
    "numel_past_int64": lambda m: m.Size([2, 2 ** 63]).numel(),
    "numel_numpy_past_int64": lambda m: m.Size([np.uint64(2 ** 63)]).numel(),
    "str_past_int64": lambda m: str(m.Size([-2 ** 63 - 1])),
    "format_past_int64": lambda m: format(m.Size([2 ** 70]), ""),
    "hash_past_int64": lambda m: hash(m.Size([2 ** 70, 1])) == hash((2 ** 70, 1)),
    "reduce": lambda m: (lambda r: (r[0] is m.Size, r[1]))(_numpy_size(m).__reduce__()),
    "pickle": lambda m: _shown(pickle.loads(pickle.dumps(_numpy_size(m)))),
    "deepcopy": lambda m: _shown(copy.deepcopy(_numpy_size(m))),
    "as_a_shape": lambda m: tuple(m.zeros(_numpy_size(m)).shape),
}


@pytest.mark.parametrize("name", list(DERIVED))
def test_size_with_numpy_items(name):
    same_as_torch(DERIVED[name])
