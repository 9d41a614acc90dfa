"""nn.functional's corner values against torch, run on real torch at test time: dims out of
range or of the wrong type, signed zeros, infinities and NaNs through the activations (forward
and gradient, bit for bit), the exactness of average pooling on integer-valued data, and the
warning of padding='same' with an even kernel."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch as T

import torchlike
from oracle import both_outcomes, same_dtype

inf, nan = math.inf, math.nan


def _bits(t):
    """A tensor's values as comparable bit patterns (the sign of a zero, NaN as one value)."""
    a = np.asarray(t.detach().numpy()).astype(np.float64).reshape(-1)
    return [("nan" if v != v else (v, math.copysign(1.0, v))) for v in a.tolist()]


def same(fn, *, bits=True):
    """``fn(m)`` on torch and torchlike: the same exception (class and message), or tensors of
    the same dtype, shape and values (bit for bit with ``bits``: a zero's sign counts) and equal
    other results."""
    got = both_outcomes(fn)
    if got is None:
        return
    lv, tv = got
    outs_t = tv if isinstance(tv, (tuple, list)) else (tv,)
    outs_l = lv if isinstance(lv, (tuple, list)) else (lv,)
    assert len(outs_t) == len(outs_l)
    for a, b in zip(outs_l, outs_t):
        if isinstance(b, T.Tensor):
            assert isinstance(a, torchlike.Tensor), type(a)
            assert same_dtype(a, b), f"dtype {a.dtype} != torch {b.dtype}"
            assert tuple(a.shape) == tuple(b.shape), f"shape {tuple(a.shape)} != torch " \
                f"{tuple(b.shape)}"
            if bits:
                assert _bits(a) == _bits(b), f"{a} != torch {b}"
            else:
                np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(),
                                           rtol=1e-6, atol=1e-6)
        else:
            assert a == b, f"{a!r} != torch {b!r}"


# ============================================================== A. dims

_DIM_FNS = {
    "softmax": lambda F, x, d: F.softmax(x, dim=d),
    "log_softmax": lambda F, x, d: F.log_softmax(x, dim=d),
    "softmin": lambda F, x, d: F.softmin(x, dim=d),
    "glu": lambda F, x, d: F.glu(x, dim=d),
    "normalize": lambda F, x, d: F.normalize(x, dim=d),
    "normalize_p1": lambda F, x, d: F.normalize(x, p=1, dim=d),
    "normalize_p3": lambda F, x, d: F.normalize(x, p=3, dim=d),
    "cosine_similarity": lambda F, x, d: F.cosine_similarity(x, x * 2 - 1, dim=d),
    # (random values: the shape, or the error)
    "gumbel_softmax": lambda F, x, d: F.gumbel_softmax(x, dim=d).shape,
    "gumbel_softmax_hard": lambda F, x, d: F.gumbel_softmax(x, hard=True, dim=d).shape,
}


@pytest.mark.parametrize("dim", range(-4, 4))
@pytest.mark.parametrize("shape", [(2, 4), (4,), ()], ids=str)
@pytest.mark.parametrize("fn", list(_DIM_FNS))
def test_dim_range(fn, shape, dim):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) - 1.5
    same(lambda m: _DIM_FNS[fn](m.nn.functional, m.tensor(x), dim), bits=False)


def test_reported_dims():
    for f in (lambda m, x: m.nn.functional.normalize(x, dim=3),
              lambda m, x: m.nn.functional.cosine_similarity(x, x, dim=3),
              lambda m, x: m.nn.functional.gumbel_softmax(x, dim=-4)):
        same(lambda m: f(m, m.ones(2, 3)))


_BAD_DIMS = [1.0, True, "1", None, np.float64(1), np.int64(1), np.bool_(True)]


@pytest.mark.parametrize("dim", _BAD_DIMS + ["int_tensor", "float_tensor", "1d_tensor"],
                         ids=repr)
@pytest.mark.parametrize("fn", ["softmax", "log_softmax", "softmin", "glu", "normalize",
                                "cosine_similarity", "gumbel_softmax"])
def test_dim_type(fn, dim):
    def run(m):
        d = {"int_tensor": lambda: m.tensor(1), "float_tensor": lambda: m.tensor(1.),
             "1d_tensor": lambda: m.tensor([1])}.get(dim, lambda: dim)() \
            if isinstance(dim, str) else dim
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")     # (softmax's implicit dim)
            return _DIM_FNS[fn](m.nn.functional, m.arange(8.).reshape(2, 4), d)
    same(run, bits=False)


@pytest.mark.parametrize("dim", [(0, 1), [1, 0], (), [], (-1,), (0, -2), (0, 2), (0, 1.0), [5, 5],
                                 None], ids=repr)
@pytest.mark.parametrize("p", [2, 1, 3, inf])
def test_normalize_dim_lists(dim, p):
    same(lambda m: m.nn.functional.normalize(m.arange(6.).reshape(2, 3) - 2, p=p, dim=dim),
         bits=False)


@pytest.mark.parametrize("case", [
    lambda m: m.nn.functional.cosine_similarity(m.ones(3), m.ones(2, 3), dim=-2),
    lambda m: m.nn.functional.cosine_similarity(m.ones(3), m.ones(2, 3), dim=2),
    lambda m: m.nn.functional.cosine_similarity(m.ones(2), m.ones(3), dim=9),
    lambda m: m.nn.functional.cosine_similarity(m.tensor(-2.), m.tensor(3.), dim=0),
    lambda m: m.nn.functional.pairwise_distance(m.tensor(1.), m.tensor(3.)),
    lambda m: m.nn.functional.pairwise_distance(m.tensor(1.), m.tensor(3.), p=3, keepdim=True),
    lambda m: m.nn.functional.normalize(m.tensor(-2.), dim=0),
    lambda m: m.nn.functional.normalize(m.tensor(-2.), p=3, dim=-1),
    lambda m: m.nn.functional.normalize(m.ones(3, dtype=m.long), dim=9),
    lambda m: m.nn.functional.gumbel_softmax(m.tensor(1.5), dim=0),
    lambda m: m.nn.functional.gumbel_softmax(m.tensor(1.5), hard=True, dim=0),
    lambda m: m.nn.functional.gumbel_softmax(m.ones(3, dtype=m.long), dim=9),
    lambda m: type(m.nn.functional.gumbel_softmax(m.ones(2, 3, requires_grad=True),
                                                  hard=True).grad_fn).__name__,
    lambda m: type(m.nn.functional.gumbel_softmax(m.ones(2, 3, requires_grad=True))
                   .grad_fn).__name__,
])
def test_dim_corners(case):
    same(case, bits=False)


def test_gumbel_softmax_eps_warning():
    for m in (T, torchlike):
        with pytest.warns(UserWarning, match="`eps` parameter is deprecated and has no effect."):
            m.nn.functional.gumbel_softmax(m.ones(2, 3), eps=1e-5)


@pytest.mark.parametrize("dim", [
    lambda m: m.tensor([[1]]), lambda m: m.tensor(True), lambda m: m.tensor([1, 0]),
    lambda m: m.tensor([1.]), lambda m: (m.tensor(1),), lambda m: (True,), lambda m: True,
    lambda m: np.bool_(True), lambda m: (np.int64(1),), lambda m: np.array([1])])
def test_normalize_dim_types(dim):
    same(lambda m: m.nn.functional.normalize(m.arange(6.).reshape(2, 3), dim=dim(m)),
         bits=False)
