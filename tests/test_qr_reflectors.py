"""LAPACK's QR in raw form, side by side with torch: ``geqrf`` (R and the Householder reflectors
in one matrix, their scales in ``tau``) and ``ormqr`` (a product with the reflectors' Q, from
either side, transposed or not), their values, result types, methods and ``out=``, ``ormqr``'s
gradients and ``geqrf``'s missing one. Argument errors: tests/test_linalg_errors.py."""
import numpy as np
import pytest
import torch

import torchlike

RNG = np.random.default_rng(11)
SHAPES = [(5, 3), (3, 5), (4, 4), (2, 5, 3), (1, 1)]
DTYPES = ["float32", "float64", "complex64", "complex128"]


def _tol(dt):
    return 1e-4 if dt in ("float32", "complex64") else 1e-10


def _array(shape, dt):
    a = RNG.standard_normal(shape)
    if dt.startswith("complex"):
        a = a + 1j * RNG.standard_normal(shape)
    return a.astype(dt)


def _close(got, want, tol):
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype) == str(want.dtype)
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), atol=tol, rtol=tol)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", SHAPES + [(0, 3), (3, 0)], ids=str)
def test_geqrf_matches_lapack_through_torch(shape, dt):
    a = _array(shape, dt)
    want = torch.geqrf(torch.tensor(a))
    got = torchlike.geqrf(torchlike.tensor(a))
    assert type(got).__name__ == type(want).__name__ == "geqrf" and len(got) == 2
    _close(got.a, want.a, _tol(dt))
    _close(got.tau, want.tau, _tol(dt))
    method = torchlike.tensor(a).geqrf()
    _close(method.tau, want.tau, _tol(dt))


def test_geqrf_out_and_its_missing_derivative():
    a = _array((4, 3), "float64")
    out = (torchlike.empty(0, dtype=torchlike.float64), torchlike.empty(0, dtype=torchlike.float64))
    r = torchlike.geqrf(torchlike.tensor(a), out=out)
    assert r[0] is out[0] and r[1] is out[1]
    _close(out[1], torch.geqrf(torch.tensor(a)).tau, 1e-12)
    for m in (torch, torchlike):
        x = m.tensor(a, requires_grad=True)
        res = m.geqrf(x)
        assert res.tau.grad_fn.name() == "GeqrfBackward0"
        with pytest.raises(NotImplementedError, match="the derivative for 'geqrf' is not "
                                                      "implemented."):
            res.a.sum().backward()


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_ormqr_multiplies_by_the_reflectors_q(shape, dt, left, transpose):
    a = _array(shape, dt)
    mn = shape[-2]
    other = _array(shape[:-2] + ((mn, 4) if left else (4, mn)), dt)
    res = []
    for m in (torch, torchlike):
        fa, tau = m.geqrf(m.tensor(a))
        if shape[-1] > mn:                  # (a wide input: its first mn reflectors)
            fa = fa[..., :mn]
        res.append(m.ormqr(fa, tau, m.tensor(other), left=left, transpose=transpose))
    _close(res[1], res[0], 10 * _tol(dt))


@pytest.mark.parametrize("left,transpose", [(True, False), (True, True), (False, False),
                                            (False, True)])
def test_ormqr_gradients_match_torch(left, transpose):
    a = _array((5, 3), "float64")
    other = _array((5, 4) if left else (4, 5), "float64")
    weight = RNG.standard_normal((5, 4) if left else (4, 5))
    grads = []
    for m in (torch, torchlike):
        fa, tau = m.geqrf(m.tensor(a))
        ins = [fa.detach().requires_grad_(), tau.detach().requires_grad_(),
               m.tensor(other, requires_grad=True)]
        r = ins[0].ormqr(ins[1], ins[2], left=left, transpose=transpose)
        assert r.grad_fn.name() == "OrmqrBackward0"
        (r * m.tensor(weight)).sum().backward()
        grads.append([x.grad for x in ins])
    for got, want in zip(grads[1], grads[0]):
        _close(got, want, 1e-10)


def test_ormqr_out():
    a = _array((4, 2), "float32")
    other = _array((4, 3), "float32")
    want = torch.ormqr(*torch.geqrf(torch.tensor(a)), torch.tensor(other))
    out = torchlike.empty(0)
    r = torchlike.ormqr(*torchlike.geqrf(torchlike.tensor(a)), torchlike.tensor(other), out=out)
    assert r is out
    _close(out, want, 1e-5)
