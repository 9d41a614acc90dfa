"""Numeric programs (linear algebra, spectra, cumulative and counting ops, creation, integer
semantics, sorting, printing) as held-out scripts write them, swept against live torch.

torch runs first: where it raises, torchlike must raise the same class with the same message;
where it returns, torchlike must return the same values, dtypes and shapes.
"""
from __future__ import annotations

import pytest

from oracle import same_as_torch


def _run(table, name, **kw):
    same_as_torch(table[name], **kw)


# ============================================================ 1. linear algebra

_SQ = [[4., 1., 2.], [1., 3., 0.], [2., 0., 5.]]
_NEAR = [[1., 2.], [2., 4.01]]

LINALG = {
    "cross_ndim_mismatch": lambda m: m.linalg.cross(m.ones(2, 3), m.tensor([1., 2., 3.])),
    "cross_dim_ndim_mismatch": lambda m: m.cross(m.ones(3), m.ones(2, 3), dim=-1),
    "cross_same_ndim_broadcast": lambda m: m.linalg.cross(m.ones(1, 3), m.tensor([[1., 2., 3.]])),
    "pinv_atol": lambda m: m.linalg.pinv(m.tensor(_NEAR), atol=0.1),
    "pinv_atol_rtol": lambda m: m.linalg.pinv(m.tensor(_NEAR), atol=0.001, rtol=0.01),
    "pinv_atol_tensor_hermitian": lambda m: m.linalg.pinv(m.tensor(_NEAR),
                                                          atol=m.tensor(0.1), hermitian=True),
    "pinv_rcond_positional": lambda m: m.linalg.pinv(m.tensor(_NEAR), 0.5),
    "pinv_rcond_keyword": lambda m: m.linalg.pinv(m.tensor(_NEAR), rcond=0.5, hermitian=True),
    "pinv_batched_rtol": lambda m: m.linalg.pinv(m.tensor(_NEAR).expand(2, 2, 2),
                                                 rtol=m.tensor([0.1, 1e-7])),
    "removed_eig": lambda m: m.eig(m.tensor(_SQ)),
    "removed_symeig": lambda m: m.tensor(_SQ).symeig(),
    "removed_solve": lambda m: m.solve(m.ones(3, 1), m.tensor(_SQ)),
    "removed_lstsq": lambda m: m.lstsq(m.ones(3, 1), m.tensor(_SQ)),
    "removed_matrix_rank": lambda m: m.matrix_rank(m.tensor(_SQ)),
}


@pytest.mark.parametrize("name", LINALG)
def test_linalg(name):
    _run(LINALG, name, atol=2e-3, rtol=1e-4)


def test_pinv_atol_grad():
    def f(m):
        x = m.tensor(_NEAR, requires_grad=True)
        m.linalg.pinv(x, atol=0.01).sum().backward()
        return x.grad
    same_as_torch(f, atol=1e-3, rtol=1e-3)
