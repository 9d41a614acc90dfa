"""Warnings torch raises from its C++ code end with "(Triggered internally at
/__w/pytorch/pytorch/...:LINE.)": torchlike's give the same full text (its ``triggered``
helper in ``torchlike/_ops/factorizations.py``). Once-per-process warnings are compared with
torch's ``set_warn_always(True)`` and torchlike's once-state cleared."""
from __future__ import annotations

import warnings

import pytest
import torch

import torchlike

CASES = {
    "index_reduce": lambda m: m.zeros(3).index_reduce(0, m.tensor([0]), m.ones(1), "prod"),
    "std": lambda m: m.ones(1).std(),
    "var_complex": lambda m: m.ones(1, dtype=m.complex64).var(),
    "std_dim": lambda m: m.ones(2, 1).std(dim=1),
    "var_mean": lambda m: m.var_mean(m.ones(1)),
    "std_mean": lambda m: m.std_mean(m.ones(1)),
    "cov": lambda m: m.cov(m.ones(1, 1)),
    "chain_matmul": lambda m: m.chain_matmul(m.ones(2, 2), m.ones(2, 2)),
    "chain_matmul_out": lambda m: m.chain_matmul(m.ones(2, 2), m.ones(2, 2), out=m.empty(2, 2)),
    "meshgrid": lambda m: m.meshgrid(m.ones(2), m.ones(2)),
    "index_uint8": lambda m: m.ones(3)[m.tensor([1, 0, 1], dtype=m.uint8)],
    "where_uint8": lambda m: m.where(m.tensor([1, 0], dtype=m.uint8), m.ones(2), m.zeros(2)),
    "triangular_solve": lambda m: m.triangular_solve(m.ones(2, 1), m.eye(2)),
    "lu": lambda m: m.lu(m.eye(3)),
    "lu_solve": lambda m: m.lu_solve(m.ones(2, 1), *m.linalg.lu_factor(m.eye(2))),
    "cholesky": lambda m: m.cholesky(m.eye(3)),
    "qr": lambda m: m.qr(m.eye(2)),
    "cross_without_dim": lambda m: m.cross(m.ones(3, 3), m.ones(3, 3)),
    "T_0d": lambda m: m.ones(()).T,
    "T_1d": lambda m: m.ones(3).T,
    "mT_0d": lambda m: m.ones(()).mT,
    "mH_0d": lambda m: m.ones(()).mH,
    "H_0d": lambda m: m.ones(()).H,
    "adjoint_0d": lambda m: m.ones(()).adjoint(),
    "complex_to_real": lambda m: m.ones(2, dtype=m.complex64).to(m.float32),
    "scatter_reduce_tensor_src": lambda m: m.zeros(3).scatter(0, m.tensor([0, 1]), m.ones(2),
                                                              reduce="add"),
    "stft_without_window": lambda m: m.stft(m.ones(64), 16, return_complex=True),
}


def _messages(m, fn):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        fn(m)
    return [(w.category.__name__, str(w.message)) for w in got]


@pytest.fixture
def warn_always():
    from torchlike._ops import factorizations, products, view
    before = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    factorizations._WARNED.clear()
    products._CHAIN_MATMUL_WARNED[:] = [False, False]
    view._MESHGRID_WARNED.clear()
    yield
    torch.set_warn_always(before)


@pytest.mark.parametrize("name", list(CASES))
def test_full_warning_text_as_torch(name, warn_always):
    from torchlike._ops import spectral
    spectral._WARNED.clear()
    expected = _messages(torch, CASES[name])
    assert expected and all("(Triggered internally at /__w/pytorch/pytorch/" in msg
                            for _, msg in expected)
    assert _messages(torchlike, CASES[name]) == expected


_SCALAR_OF_GRAD = """
import json, sys, warnings
import {lib} as torch
w = torch.ones(1, requires_grad=True)
seen = []
for phase, grad in (("no_grad", False), ("grad", True), ("again", True)):
    with torch.set_grad_enabled(grad), warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        float(w)
        torch.tensor([w, w])
    seen.append([phase, [(x.category.__name__, str(x.message), x.lineno) for x in got]])
print(json.dumps(seen))
"""


def test_a_tensor_requiring_grad_made_a_number_warns_once_as_torch():
    """``float(t)`` and ``torch.tensor([t, ...])`` of a tensor that requires grad share torch's
    one warning: once a process (in a fresh one here), only with grad mode on, with the C++
    suffix, naming the user's line."""
    import json
    import subprocess
    import sys

    def run(lib):
        r = subprocess.run([sys.executable, "-c", _SCALAR_OF_GRAD.format(lib=lib)],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-2000:]
        return json.loads(r.stdout.strip().splitlines()[-1])
    expected = run("torch")
    assert [len(msgs) for _phase, msgs in expected] == [0, 1, 0]
    assert run("torchlike") == expected
