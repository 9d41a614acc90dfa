"""torch's deprecated signatures (a Number before the tensors: ``add_(alpha, other)``,
``addcmul_(value, t1, t2)``, ``addmm(beta, input, alpha, mat1, mat2)``) against torch: the same
values, the same refusals where no signature fits, and torch's once-a-process warning."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from oracle import fresh_process_outputs, same_as_torch

A = np.arange(6, dtype=np.float32).reshape(2, 3) / 4 + 0.5
B = np.arange(6, dtype=np.float32).reshape(3, 2) / 5 - 0.3


def _t(m, a):
    return m.tensor(a)


CALLS = {
    "add_method": lambda m: _t(m, A).add(2, _t(m, A)),
    "add_inplace": lambda m: _t(m, A).add_(-0.5, _t(m, A) * 3),
    "add_function": lambda m: m.add(_t(m, A), 2, _t(m, A)),
    "add_function_out": lambda m: _out(m, lambda o: m.add(_t(m, A), 2, _t(m, A), out=o), (2, 3)),
    "sub_method": lambda m: _t(m, A).sub(2, _t(m, A)),
    "sub_inplace": lambda m: _t(m, A).sub_(0.25, _t(m, A)),
    "sub_function": lambda m: m.sub(_t(m, A), 3, _t(m, A)),
    "addcmul_inplace": lambda m: _t(m, A).addcmul_(0.5, _t(m, A), _t(m, A) + 1),
    "addcmul_method": lambda m: _t(m, A).addcmul(2, _t(m, A), _t(m, A)),
    "addcmul_function": lambda m: m.addcmul(_t(m, A), 2, _t(m, A), _t(m, A)),
    "addcdiv_inplace": lambda m: _t(m, A).addcdiv_(-0.1, _t(m, A), _t(m, A) + 2),
    "addcdiv_function": lambda m: m.addcdiv(_t(m, A), 3, _t(m, A), _t(m, A) + 2),
    "addmm_function": lambda m: m.addmm(0.5, _t(m, A @ B), 2.0, _t(m, A), _t(m, B)),
    "addmm_function_beta_only": lambda m: m.addmm(0.5, _t(m, A @ B), _t(m, A), _t(m, B)),
    "addmm_method": lambda m: _t(m, A @ B).addmm(0.5, 2.0, _t(m, A), _t(m, B)),
    "addmm_inplace_beta_only": lambda m: _t(m, A @ B).addmm_(3, _t(m, A), _t(m, B)),
    "addmv_function": lambda m: m.addmv(0.5, _t(m, A[:, 0]), 2.0, _t(m, A), _t(m, B[:, 0])),
    "addr_function": lambda m: m.addr(0.5, _t(m, A), 2.0, _t(m, A[:, 0]), _t(m, B[:, 0])),
    "addbmm_function": lambda m: m.addbmm(0.5, _t(m, A @ B), 2.0, _t(m, A[None]),
                                          _t(m, B[None])),
    "baddbmm_method": lambda m: _t(m, (A @ B)[None]).baddbmm(0.5, 2.0, _t(m, A[None]),
                                                            _t(m, B[None])),
    # no signature fits: torch's own errors
    "add_two_numbers_raises": lambda m: _t(m, A).add(2, 3),
    "addcmul_number_last_raises": lambda m: _t(m, A).addcmul_(_t(m, A), _t(m, A), 0.5),
    "add_inplace_alpha_twice_raises": lambda m: _t(m, A).add_(2, _t(m, A), alpha=3),
}


def _out(m, call, shape):
    o = m.empty(shape)
    r = call(o)
    return r is o, o


@pytest.mark.parametrize("name", CALLS)
def test_deprecated_signature_as_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        same_as_torch(CALLS[name], msg=False, rtol=1e-6)


_WARN = """
import sys, warnings
m = __import__(sys.argv[1])
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    {first}
    {second}
for x in w:
    print(x.category.__name__, str(x.message).split(" (Triggered")[0].replace("\\n", "|"))
"""


@pytest.mark.parametrize("first,second", [
    ("m.ones(3).add_(2, m.ones(3))", "m.ones(3).addcmul_(2, m.ones(3), m.ones(3))"),
    ("m.addmm(0.5, m.ones(2, 2), 2.0, m.ones(2, 3), m.ones(3, 2))", "m.sub(m.ones(2), 2, m.ones(2))"),
    ("m.ones(2, 2).addmm(0.5, 2.0, m.ones(2, 3), m.ones(3, 2))", "m.ones(3).add(1, m.ones(3))"),
    ("m.addbmm(0.5, m.ones(2, 2), m.ones(1, 2, 3), m.ones(1, 3, 2))", "pass"),
], ids=["add_inplace", "addmm_function", "addmm_method", "addbmm_beta_only"])
def test_the_first_deprecated_call_of_a_process_warns_as_torch(first, second):
    out = fresh_process_outputs(_WARN.format(first=first, second=second))
    assert out["torch"].count("UserWarning") == 1
    assert out["torchlike"] == out["torch"]
