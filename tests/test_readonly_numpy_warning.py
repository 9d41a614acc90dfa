"""A tensor made from a read-only ndarray warns as torch does (once a program; the full text
with its '(Triggered internally at ...tensor_numpy.cpp:213.)' suffix), from the same calls."""
import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

import torchlike as tl
from torchlike import _creation

CASES = ["as_tensor(a)", "from_numpy(a)", "tensor(a)", "asarray(a)",
         "as_tensor(a, dtype=M.float32)", "as_tensor(a[::2])", "as_tensor(np.float64(3))",
         "asarray(a, copy=True)", "asarray(a, dtype=M.float32)", "as_tensor(z)"]

_TORCH = """
import json, sys, warnings, numpy as np, torch as M
out = []
for case in json.loads(sys.argv[1]):
    a = np.arange(4.); a.flags.writeable = False
    z = np.array(3.); z.flags.writeable = False
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        eval("M." + case)
    out.append([str(x.message) for x in w if "writable" in str(x.message)])
print(json.dumps(out))
"""


def _torch_messages(case):
    r = subprocess.run([sys.executable, "-c", _TORCH, json.dumps([case, case])],
                       capture_output=True, text=True, check=True)
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case", CASES)
def test_readonly_warning_matches_torch(case):
    want = _torch_messages(case)         # a fresh program: the warning, then none (once)
    _creation._warned_readonly[0] = False
    M = tl  # noqa: F841  (the cases name the module M)
    got = []
    for _ in range(2):
        a = np.arange(4.); a.flags.writeable = False
        z = np.array(3.); z.flags.writeable = False
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            eval("M." + case)
        got.append([str(x.message) for x in w if "writable" in str(x.message)])
        if got[-1]:
            assert w[0].category is UserWarning and "torchlike" not in w[0].filename
    assert got == want
