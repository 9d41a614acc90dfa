"""Randomized low-rank factorizations (``svd_lowrank``, ``pca_lowrank``) against torch: the
projection is random (torchlike's stream is not torch's: DIFFERENCES, random streams), so the
inputs are of exactly low rank, where the factorization is exact whatever the draw: the
singular values, the reconstruction, the shapes, dtypes, gradients and errors are torch's."""
import numpy as np
import pytest
import torch

import torchlike

def _low_rank(shape, k, dtype):
    # (a generator of its own: the data must not depend on which tests ran before)
    rng = np.random.default_rng(3)
    *batch, m, n = shape
    a = rng.standard_normal((*batch, m, k)) @ rng.standard_normal((*batch, k, n))
    return a.astype(dtype)


CASES = [((20, 10), 3, None, "float64"), ((10, 20), 3, None, "float64"),
         ((2, 30, 12), 4, 5, "float32"), ((8, 8), 2, None, "float64")]


@pytest.mark.parametrize("shape,k,q,dtype", CASES, ids=str)
@pytest.mark.parametrize("fn", ["svd_lowrank", "pca_lowrank"])
def test_low_rank_factorizations_match_torch(fn, shape, k, q, dtype):
    a = _low_rank(shape, k, dtype)
    if fn == "pca_lowrank":
        a = a - a.mean(-2, keepdims=True)       # (centred: its rank stays k)
    tol = 1e-4 if dtype == "float32" else 1e-10
    res = []
    for m in (torch, torchlike):
        m.manual_seed(0)        # (the draw must not depend on which tests ran before)
        A = m.tensor(a, requires_grad=True)
        U, S, V = getattr(m, fn)(A, q=q) if q else getattr(m, fn)(A)
        rec = (U * S.unsqueeze(-2)) @ V.mH
        S[..., :k].sum().backward()
        res.append((U, S, V, rec, A.grad))
    (tu, ts, tv, trec, tg), (lu, ls, lv, lrec, lg) = res
    for t, l in ((tu, lu), (ts, ls), (tv, lv)):
        assert tuple(l.shape) == tuple(t.shape) and str(l.dtype) == str(t.dtype)
    np.testing.assert_allclose(ls.detach().numpy()[..., :k], ts.detach().numpy()[..., :k],
                               rtol=tol, atol=tol * 10)
    np.testing.assert_allclose(lrec.detach().numpy(), a, atol=tol * 100)
    np.testing.assert_allclose(trec.detach().numpy(), a, atol=tol * 100)
    # d(sum of the top-k singular values)/dA = U_k V_k^H: independent of the draw (up to the
    # rounding of the draw's projections: 5e-8 in float64 has been seen)
    np.testing.assert_allclose(lg.numpy(), tg.numpy(), atol=max(tol * 100, 1e-6))


@pytest.mark.parametrize("call", [
    lambda m: m.pca_lowrank(m.ones(3, 4), q=5),
    lambda m: m.pca_lowrank(m.ones(3, 4), q=-1),
    lambda m: m.pca_lowrank(m.ones(3, 4), niter=-1),
    lambda m: m.svd_lowrank(m.ones(4), q=2),
    lambda m: m.svd_lowrank(m.ones(3, 4, dtype=m.int64), q=2),
    lambda m: m.pca_lowrank(m.ones(3, 4, dtype=m.int64), q=2),
], ids=["pca_q_too_big", "pca_q_negative", "pca_niter", "svd_1d", "svd_int", "pca_int"])
def test_low_rank_errors_as_torch(call):
    seen = []
    for m in (torch, torchlike):
        with pytest.raises(Exception) as e:
            call(m)
        seen.append((type(e.value).__name__, str(e.value)))
    assert seen[1] == seen[0]


def test_a_seeded_draw_repeats():
    a = torchlike.tensor(np.random.default_rng(3).standard_normal((12, 9)))
    torchlike.manual_seed(4)
    first = torchlike.svd_lowrank(a, q=4, niter=0)
    torchlike.manual_seed(4)
    again = torchlike.svd_lowrank(a, q=4, niter=0)
    for x, y in zip(first, again):
        np.testing.assert_array_equal(x.numpy(), y.numpy())
