"""Argument and value checks that torchlike once got wrong, swept by family against torch:
max_unpool's index/shape/dtype/output_size checks, einsum's dtype handling over several
operands, matmul/addmv with empty operands, F.pad and the factories' argument parsing, and the
memory format ``t.data = other`` takes. Each case runs on real torch and on torchlike: the
same exception class and message, or the same values, dtype and shape."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike
from oracle import both_outcomes


def _same(fn, msg="exact"):
    """torch's outcome of ``fn(m)``: the same exception and message, or the same value."""
    r = both_outcomes(fn, msg=msg)
    if r is None:
        return
    lv, tv = r
    if isinstance(tv, torch.Tensor):
        assert isinstance(lv, torchlike.Tensor), f"torchlike returned {lv!r}"
        assert str(lv.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1], \
            f"dtype {lv.dtype} != torch {tv.dtype}"
        assert tuple(lv.shape) == tuple(tv.shape), f"shape {tuple(lv.shape)} != {tuple(tv.shape)}"
        a = np.asarray(lv.detach().float().tolist() if lv.dtype is torchlike.bfloat16
                       else lv.detach().tolist())
        b = np.asarray(tv.detach().float().tolist() if tv.dtype is torch.bfloat16
                       else tv.detach().tolist())
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    else:
        assert lv == tv, f"{lv!r} != torch {tv!r}"


@pytest.fixture
def one_torch_thread():
    """torch's unpool kernel reports the *last* bad index it meets; with several threads which
    one that is depends on the race, with one thread it is the last in memory order."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


# ================================================================== 1. max_unpool

def _unpool(nd, x_shape, idx, kernel=2, x_dtype="float32", idx_dtype="int64", **kw):
    def fn(m):
        x = m.arange(float(np.prod(x_shape))).reshape(x_shape).to(getattr(m, x_dtype))
        i = m.tensor(idx, dtype=getattr(m, idx_dtype))
        f = getattr(m.nn.functional, f"max_unpool{nd}d")
        return f(x, i, kernel, **kw)
    return fn


UNPOOL_CASES = {
    # out-of-range, negative, and == size indices (torch raises; jax would drop or wrap)
    "1d_oob": _unpool(1, (1, 1, 2), [[[0, 9]]]),
    "1d_neg": _unpool(1, (1, 1, 2), [[[0, -1]]]),
    "1d_eq_size": _unpool(1, (1, 1, 2), [[[0, 4]]]),
    "1d_unbatched_oob": _unpool(1, (1, 2), [[0, 7]]),
    "2d_oob": _unpool(2, (1, 1, 2, 2), [[[[0, 1], [2, 16]]]]),
    "2d_neg": _unpool(2, (1, 1, 2, 2), [[[[0, 1], [2, -3]]]]),
    "2d_unbatched_oob": _unpool(2, (1, 2, 2), [[[0, 1], [2, 16]]]),
    "2d_second_batch_oob": _unpool(2, (2, 1, 2, 2), [[[[0, 1], [2, 3]]], [[[0, 1], [2, 99]]]]),
    "2d_output_size_smaller_oob": _unpool(2, (1, 1, 2, 2), [[[[0, 1], [2, 15]]]],
                                          output_size=(3, 3)),
    "2d_output_size_larger_ok": _unpool(2, (1, 1, 2, 2), [[[[0, 1], [2, 24]]]],
                                        output_size=(5, 5)),
    "2d_empty_output_unchecked": _unpool(2, (1, 1, 1, 1), [[[[5]]]], stride=1, padding=1),
    "3d_oob": _unpool(3, (1, 1, 1, 1, 2), [[[[[0, 100]]]]]),
    "3d_neg": _unpool(3, (1, 1, 1, 1, 2), [[[[[0, -1]]]]]),
    "3d_unbatched_oob": _unpool(3, (1, 1, 1, 2), [[[[0, 16]]]]),
    "2d_channels_last_oob": lambda m: m.nn.functional.max_unpool2d(
        m.arange(8.).reshape(1, 2, 2, 2).contiguous(memory_format=m.channels_last),
        m.tensor([[[[0, 1], [2, 3]], [[0, 5], [17, 3]]]]), 2),
    # index dtype
    "1d_float_idx": _unpool(1, (1, 1, 2), [[[0, 1]]], idx_dtype="float32"),
    "2d_int32_idx": _unpool(2, (1, 1, 1, 2), [[[[0, 1]]]], idx_dtype="int32"),
    "2d_int16_idx": _unpool(2, (1, 1, 1, 2), [[[[0, 1]]]], idx_dtype="int16"),
    "3d_int32_idx": _unpool(3, (1, 1, 1, 1, 2), [[[[[0, 1]]]]], idx_dtype="int32"),
    "3d_int32_idx_oob": _unpool(3, (1, 1, 1, 1, 2), [[[[[0, 100]]]]], idx_dtype="int32"),
    # input dtype (the kernels are floating point only)
    "1d_int_input": _unpool(1, (1, 1, 2), [[[0, 1]]], x_dtype="int32"),
    "2d_long_input_oob": _unpool(2, (1, 1, 1, 2), [[[[0, 99]]]], x_dtype="int64"),
    "2d_bool_input": _unpool(2, (1, 1, 1, 2), [[[[0, 1]]]], x_dtype="bool"),
    "2d_complex_input": _unpool(2, (1, 1, 1, 2), [[[[0, 1]]]], x_dtype="complex64"),
    "3d_long_input": _unpool(3, (1, 1, 1, 1, 2), [[[[[0, 1]]]]], x_dtype="int64"),
    "2d_half_input": _unpool(2, (1, 1, 1, 2), [[[[0, 3]]]], x_dtype="float16"),
    "3d_bf16_input": _unpool(3, (1, 1, 1, 1, 2), [[[[[0, 3]]]]], x_dtype="bfloat16"),
    "1d_f64_input": _unpool(1, (1, 1, 2), [[[0, 3]]], x_dtype="float64"),
    # shapes
    "1d_shape_mismatch": _unpool(1, (1, 1, 2), [[[0]]]),
    "3d_shape_mismatch": _unpool(3, (1, 1, 1, 1, 2), [[[[[0]]]]]),
    "2d_idx_0dim": _unpool(2, (1, 1, 1, 1), 3),
    "1d_4dim": _unpool(1, (1, 1, 1, 2), [[[[0, 1]]]]),
    "3d_3dim": _unpool(3, (1, 1, 2), [[[0, 1]]]),
    "3d_6dim": _unpool(3, (1, 1, 1, 1, 1, 2), [[[[[[0, 1]]]]]]),
    "2d_zero_batch": _unpool(2, (0, 1, 2, 2), np.zeros((0, 1, 2, 2), np.int64)),
    "2d_zero_batch_unbatched": _unpool(2, (0, 1, 2), np.zeros((0, 1, 2), np.int64)),
    "1d_zero_batch": _unpool(1, (0, 1, 2), np.zeros((0, 1, 2), np.int64)),
    "3d_zero_batch": _unpool(3, (0, 1, 1, 1, 2), np.zeros((0, 1, 1, 1, 2), np.int64)),
    "2d_zero_channels": _unpool(2, (1, 0, 2, 2), np.zeros((1, 0, 2, 2), np.int64)),
    "2d_zero_height": _unpool(2, (1, 1, 0, 2), np.zeros((1, 1, 0, 2), np.int64)),
    "1d_zero_width": _unpool(1, (1, 1, 0), np.zeros((1, 1, 0), np.int64)),
    "3d_zero_channels": _unpool(3, (1, 0, 1, 1, 2), np.zeros((1, 0, 1, 1, 2), np.int64)),
    "3d_zero_channels_long": _unpool(3, (1, 0, 1, 1, 2), np.zeros((1, 0, 1, 1, 2), np.int64),
                                     x_dtype="int64"),
    # strides, padding, output_size
    "3d_stride0": _unpool(3, (1, 1, 1, 1, 2), [[[[[0, 1]]]]], stride=0),
    "3d_stride_neg": _unpool(3, (1, 1, 1, 1, 2), [[[[[0, 1]]]]], stride=-1),
    "2d_stride0": _unpool(2, (1, 1, 1, 2), [[[[0, 1]]]], stride=0),
    "1d_negative_default_size": _unpool(1, (1, 1, 1), [[[0]]], kernel=1, stride=1, padding=1),
    "2d_negative_default_size": _unpool(2, (1, 1, 1, 1), [[[[0]]]], kernel=1, stride=1,
                                        padding=1),
    "3d_negative_default_size": _unpool(3, (1, 1, 1, 1, 1), [[[[[0]]]]], kernel=1, stride=1,
                                        padding=1),
    "2d_output_size_out_of_range": _unpool(2, (1, 1, 2, 2), [[[[0, 1], [2, 3]]]],
                                           output_size=(9, 9)),
    "2d_output_size_length": _unpool(2, (1, 1, 2, 2), [[[[0, 1], [2, 3]]]],
                                     output_size=(4, 4, 4)),
    "2d_output_size_full": _unpool(2, (1, 1, 2, 2), [[[[0, 1], [2, 3]]]],
                                   output_size=(1, 1, 5, 5)),
    "2d_output_size_float": _unpool(2, (1, 1, 2, 2), [[[[0, 1], [2, 3]]]],
                                    output_size=[4.5, 4]),
    "3d_output_size_float": _unpool(3, (1, 1, 1, 1, 2), [[[[[0, 1]]]]],
                                    output_size=[2, 2, 4.0]),
    "2d_output_size_int": _unpool(2, (1, 1, 2, 2), [[[[0, 1], [2, 3]]]], output_size=5),
    "2d_pad": _unpool(2, (1, 1, 2, 2), [[[[0, 1], [2, 3]]]], kernel=3, stride=2, padding=1),
    "3d_pad_neg": _unpool(3, (1, 1, 1, 2, 2), [[[[[0, 1], [2, 3]]]]], stride=2, padding=-1),
    "module_oob": lambda m: m.nn.MaxUnpool2d(2)(m.ones(1, 1, 2, 2),
                                                m.tensor([[[[0, 1], [2, 16]]]])),
    "module3d_neg": lambda m: m.nn.MaxUnpool3d(2)(m.ones(1, 1, 1, 1, 2),
                                                  m.tensor([[[[[-2, 1]]]]])),
}


@pytest.mark.parametrize("name", list(UNPOOL_CASES))
def test_max_unpool(name):
    _same(UNPOOL_CASES[name])


def test_max_unpool_reports_last_bad_index(one_torch_thread):
    """Several bad indices: torch (one thread) reports the last in memory order, the input's
    memory order (channels last walks channels innermost)."""
    idx = [[[[0, 1], [2, 20]], [[0, 5], [17, 3]]]]
    _same(lambda m: m.nn.functional.max_unpool2d(m.arange(8.).reshape(1, 2, 2, 2),
                                                 m.tensor(idx), 2))
    _same(lambda m: m.nn.functional.max_unpool2d(
        m.arange(8.).reshape(1, 2, 2, 2).contiguous(memory_format=m.channels_last),
        m.tensor(idx), 2))
    _same(_unpool(3, (1, 1, 1, 1, 3), [[[[[50, -1, 60]]]]]))
    _same(_unpool(1, (2, 1, 3), [[[50, -1, 2]], [[-7, 0, 1]]]))
    # a repeated index: the last write wins (with one torch thread; several race)
    _same(_unpool(2, (1, 1, 2, 2), [[[[0, 0], [0, 3]]]]))


def test_max_unpool_computed_indices():
    """Indices computed by earlier ops (pending in fused eager) are checked too; a bad one
    raises, and what ran before it is unharmed."""
    def fn(m, shift):
        x = m.arange(32.).reshape(2, 1, 4, 4)
        y, i = m.nn.functional.max_pool2d(x, 2, return_indices=True)
        return m.nn.functional.max_unpool2d(y * 2, i + shift, 2)
    _same(lambda m: fn(m, 0))
    _same(lambda m: fn(m, 1))           # 15 + 1 = 16: out of range in both batches
    _same(lambda m: fn(m, -5))          # 5 - 5 = 0 ok, but 0 - 5 < 0


def test_max_unpool_compiled_checks():
    """Under torchlike.compile the check is traced into the program and still raises."""
    F = torchlike.nn.functional

    @torchlike.compile
    def f(x, i):
        return F.max_unpool2d(x * 2, i + 1, 2)
    x = torchlike.ones(1, 1, 2, 2)
    assert float(f(x, torchlike.tensor([[[[0, 1], [2, 3]]]])).sum()) == 8.0
    with pytest.raises(RuntimeError, match=r"Found an invalid max index: 16 \(output volumes "
                                           r"are of size 4x4\)"):
        f(x, torchlike.tensor([[[[0, 1], [2, 15]]]]))
        torchlike.sync()


def test_max_unpool_gradient_through_valid_indices():
    def fn(m):
        x = m.arange(4.).reshape(1, 1, 2, 2).requires_grad_()
        y = m.nn.functional.max_unpool2d(x, m.tensor([[[[0, 5], [5, 15]]]]), 2)
        (y * m.arange(16.).reshape(1, 1, 4, 4)).sum().backward()
        return x.grad
    _same(fn)


@pytest.mark.parametrize("nd,osz", [(2, [4.5, 4]), (2, [4, 4.5]), (2, [4.0, 4]), (2, [True, 4]), (2, [4, True]),
                                    (3, [2.5, 2, 4]), (3, [2, 2, 4.0]), (3, [2, 2.0, 4]),
                                    (3, ["t", 2, 4]), (2, [np.int64(4), 4]),
                                    (2, [np.float64(4), 4]), (1, [np.int64(4)]), (1, [4.0])])
def test_max_unpool_output_size_elements(nd, osz):
    def fn(m):
        shape = (1, 1) + (1,) * (nd - 1) + (2,)
        el = [m.tensor(2) if v == "t" else v for v in osz]
        f = getattr(m.nn.functional, f"max_unpool{nd}d")
        return f(m.ones(shape), m.zeros(shape, dtype=m.long), 2, output_size=el)
    _same(fn)


# ================================================================== 2. einsum, 3+ operands

def _einsum(eq, *specs):
    def fn(m):
        return m.einsum(eq, *[m.arange(1, 1 + int(np.prod(s))).reshape(s).to(getattr(m, d))
                              for d, s in specs])
    return fn


EINSUM_CASES = [
    # torch contracts along opt_einsum's path: jk with kl first, bmm(kl, jk) (sumproduct_pair
    # swaps the pair), so the third operand's dtype is the one "expected"
    ("ij,jk,kl->il", ("float32", (2, 3)), ("float32", (3, 4)), ("float64", (4, 2))),
    ("ij,jk,kl->il", ("float32", (2, 3)), ("float64", (3, 4)), ("float32", (4, 2))),
    ("ij,jk,kl->il", ("int64", (2, 3)), ("float32", (3, 4)), ("float32", (4, 2))),
    ("ij,jk,kl->il", ("float32", (2, 3)), ("float32", (3, 4)), ("bool", (4, 2))),
    ("ij,jk,kl->il", ("float16", (2, 3)), ("float16", (3, 4)), ("float16", (4, 2))),
    ("ij,jk,kl->il", ("int32", (2, 3)), ("int32", (3, 4)), ("int32", (4, 2))),
    ("ij,jk,kl", ("complex64", (2, 3)), ("float32", (3, 4)), ("complex64", (4, 2))),
    # a product that sums nothing is mul, with type promotion
    ("i,i,i->", ("float32", (3,)), ("float64", (3,)), ("float64", (3,))),
    ("i,i,i->", ("float32", (3,)), ("int64", (3,)), ("float32", (3,))),
    ("i,i,i->", ("float32", (3,)), ("float32", (3,)), ("float64", (3,))),
    ("i,i,i->", ("bool", (3,)), ("bool", (3,)), ("bool", (3,))),
    ("i,i,i->", ("float32", (3,)), ("bool", (3,)), ("bool", (3,))),
    ("i,i,i->i", ("int8", (3,)), ("bool", (3,)), ("float16", (3,))),
    ("a,b,c->abc", ("int32", (2,)), ("float64", (3,)), ("bool", (2,))),
    # labels summed on their own first: an integral or bool sum is int64
    ("ij,j,k->i", ("int32", (2, 3)), ("int32", (3,)), ("int32", (2,))),
    ("ij,j,k->i", ("int64", (2, 3)), ("int64", (3,)), ("bool", (2,))),
    ("ij,j,k->ik", ("float32", (2, 3)), ("int64", (3,)), ("float64", (2,))),
    ("ab,bc,cd,de->ae", ("float32", (2, 3)), ("float64", (3, 4)), ("float32", (4, 2)),
     ("float32", (2, 3))),
    ("ab,bc,cd,de->ae", ("int64", (2, 3)), ("int64", (3, 4)), ("int64", (4, 2)),
     ("int32", (2, 3))),
    ("bij,bjk,bkl->bil", ("float32", (2, 2, 3)), ("float32", (2, 3, 2)), ("float64", (2, 2, 2))),
    ("...i,i,i->...", ("float32", (2, 3)), ("float64", (3,)), ("float32", (3,))),
    ("ij,jk,ki->", ("float64", (2, 3)), ("float32", (3, 2)), ("float64", (2, 2))),
    ("Ab,bA,aA->a", ("float32", (2, 3)), ("float32", (3, 2)), ("int64", (4, 2))),
    # broadcast (size-1) and empty dimensions
    ("ij,jk,kl->il", ("float32", (1, 3)), ("float32", (3, 1)), ("float64", (1, 2))),
    ("ij,jk,kl->il", ("float32", (2, 0)), ("float32", (0, 4)), ("float64", (4, 2))),
    # a repeated label's sizes must match
    ("ii,i,i->", ("float32", (2, 1)), ("float32", (2,)), ("float32", (2,))),
    ("ii->", ("int8", (1, 3))),
    ("ii->", ("int8", (3, 3))),
    # two operands (left to right, no opt_einsum)
    ("ij,jk->ik", ("float32", (2, 3)), ("float64", (3, 4))),
    ("ij,jk->ijk", ("float32", (2, 3)), ("float64", (3, 4))),
]


@pytest.mark.parametrize("case", EINSUM_CASES, ids=[c[0] + "-" + "-".join(d for d, _ in c[1:])
                                                     for c in EINSUM_CASES])
def test_einsum_dtypes(case):
    _same(_einsum(*case))


def test_einsum_without_opt_einsum():
    """With opt_einsum off torch contracts left to right, each result put first."""
    cases = [("ij,jk,kl->il", ("float32", (2, 3)), ("float32", (3, 4)), ("float64", (4, 2))),
             ("ij,jk,kl->il", ("float64", (2, 3)), ("float32", (3, 4)), ("float32", (4, 2))),
             ("ab,bc,cd,de->ae", ("float32", (2, 3)), ("float32", (3, 4)), ("int64", (4, 2)),
              ("float32", (2, 3)))]
    try:
        torch.backends.opt_einsum.enabled = False
        torchlike.backends.opt_einsum.enabled = False
        for case in cases:
            _same(_einsum(*case))
    finally:
        torch.backends.opt_einsum.enabled = True
        torchlike.backends.opt_einsum.enabled = True


def test_einsum_mixed_dtype_gradients():
    """A promoting three-operand einsum: values, dtype and the float operands' gradients."""
    def fn(m):
        a = m.arange(1., 4.).requires_grad_()
        c = m.arange(2., 5.).requires_grad_()
        y = m.einsum("i,i,i->i", a, m.tensor([1, 2, 3]), c.double())
        y.sum().backward()
        return m.stack([a.grad, c.grad]), y.detach()
    r = both_outcomes(fn)
    (lg, ly), (tg, ty) = r
    assert str(ly.dtype).split(".")[-1] == str(ty.dtype).split(".")[-1]
    np.testing.assert_allclose(np.asarray(lg.tolist()), np.asarray(tg.tolist()))
    np.testing.assert_allclose(np.asarray(ly.tolist()), np.asarray(ty.tolist()))


# ================================================================== 3. matmul, addmv, empties

def _ones(m, shape, dt="float32"):
    return m.ones(shape, dtype=getattr(m, dt))


MATMUL_CASES = [
    # a vector times an empty batch: torch folds the batch (transposed) into a matrix: mv
    ((0,), (2, 3, 0), "float32", "float32"),
    ((0,), (0, 3, 2), "float32", "float32"),
    ((0,), (1, 3, 0), "int64", "float32"),
    ((3,), (2, 0, 3), "float32", "float32"),
    ((3,), (0, 1, 3), "bool", "bool"),
    ((1,), (2, 1, 0, 3), "float32", "float32"),
    ((0,), (2, 1, 0, 3), "float32", "float64"),     # folded: addmv's dtype error
    ((3,), (2, 3, 0), "float32", "float64"),
    ((3,), (2, 3, 0), "float32", "float32"),
    ((3,), (1, 3, 2), "float32", "float32"),        # a fold that is a view (n == 1)
    ((3,), (2, 3, 2), "float32", "float32"),        # no fold: batched
    ((4,), (2, 3, 2), "float32", "float32"),        # no fold: bmm's size error
    ((2,), (1, 2, 3), "float32", "float64"),        # fold (a view): addmv's dtype error
    ((2,), (2, 2, 3), "float32", "float64"),        # no fold: bmm's dtype error
    # bool products with nothing to compute
    ((0,), (0, 4), "bool", "bool"),
    ((3,), (3, 0), "bool", "bool"),
    ((2, 3), (3, 0), "bool", "bool"),
    ((0, 3), (3, 2), "bool", "bool"),
    ((2, 0, 3), (3,), "bool", "bool"),
    ((2, 2, 3), (3, 0), "bool", "bool"),
    ((2, 3), (3, 2), "bool", "bool"),
]


@pytest.mark.parametrize("sa,sb,da,db", MATMUL_CASES)
def test_matmul_empty_and_folded(sa, sb, da, db):
    _same(lambda m: m.matmul(_ones(m, sa, da), _ones(m, sb, db)))


def test_matmul_vector_requiring_grad_folds():
    """A vector that requires grad makes torch fold even where the fold copies."""
    def fn(m):
        return m.matmul(m.ones(4, requires_grad=True), m.ones(2, 3, 2))
    _same(fn)

    def fn2(m):
        return m.matmul(m.ones(2, requires_grad=True), m.ones(2, 2, 3, dtype=m.float64))
    _same(fn2)


@pytest.mark.parametrize("fn", ["mm", "mv"])
@pytest.mark.parametrize("shapes", [((2, 0), (0, 3)), ((0, 2), (2, 3)), ((2, 3), (3, 0)),
                                    ((0, 0), (0, 0)), ((2, 0), (0,)), ((0, 2), (2,)),
                                    ((2, 3), (3, 2)), ((2, 3), (3,))])
def test_mm_mv_bool_empty(fn, shapes):
    sa, sb = shapes
    if (fn == "mv") != (len(sb) == 1):
        pytest.skip("not this function's shapes")
    _same(lambda m: getattr(m, fn)(_ones(m, sa, "bool"), _ones(m, sb, "bool")))


ADDMV_INPUTS = [(), (1,), (2,), (0,), (3,), (2, 1)]
ADDMV_MATS = [((2, 0), (0,)), ((0, 2), (2,)), ((0, 0), (0,)), ((0, 3), (3,)), ((2, 3), (3,))]


@pytest.mark.parametrize("dt", ["float32", "int64", "bool"])
@pytest.mark.parametrize("inp", ADDMV_INPUTS)
@pytest.mark.parametrize("mat_vec", ADDMV_MATS)
@pytest.mark.parametrize("kw", [{}, {"beta": 0}, {"alpha": 2, "beta": 3}, {"beta": 0.5}],
                         ids=["default", "beta0", "alpha2beta3", "beta_half"])
def test_addmv_empty_matrix(dt, inp, mat_vec, kw):
    """An empty matrix: torch returns zeros of the product's shape (beta 0) or ``input *
    beta`` of ``input``'s own shape (not broadcast)."""
    mat, vec = mat_vec
    _same(lambda m: m.addmv(_ones(m, inp, dt), _ones(m, mat, dt), _ones(m, vec, dt), **kw))


@pytest.mark.parametrize("inp", [(), (1,), (2,)])
@pytest.mark.parametrize("mat_vec", [((2, 0), (0,)), ((2, 3), (3,))])
def test_addmv_out_and_inplace(inp, mat_vec):
    mat, vec = mat_vec
    _same(lambda m: m.addmv(m.full(inp, 2.), _ones(m, mat), _ones(m, vec), out=m.empty(0)))
    _same(lambda m: m.full(inp, 2.).addmv_(_ones(m, mat), _ones(m, vec)))
    _same(lambda m: m.full(inp, 2.).addmv_(_ones(m, mat), _ones(m, vec, "float64")))


def test_addmv_empty_matrix_gradient():
    def fn(m):
        x = m.full((2,), 2., requires_grad=True)
        a = m.ones(2, 0, requires_grad=True)
        y = m.addmv(x, a, m.ones(0), beta=3)
        (y * m.tensor([1., 2.])).sum().backward()
        assert tuple(a.grad.shape) == (2, 0)
        return m.stack([y.detach(), x.grad])
    _same(fn)


@pytest.mark.parametrize("dt", ["int64", "float32", "bool", "complex64"])
@pytest.mark.parametrize("beta", [1, 0.5, 1j, True, 2, 0, False])
@pytest.mark.parametrize("inplace", [False, True])
def test_addmm_empty_contraction(dt, beta, inplace):
    """k == 0: torch scales the result by beta in place (mul_), a cast check of its own."""
    def fn(m):
        x, a, b = _ones(m, (2, 3), dt), _ones(m, (2, 0), dt), _ones(m, (0, 3), dt)
        return x.addmm_(a, b, beta=beta) if inplace else m.addmm(x, a, b, beta=beta)
    _same(fn)


# ================================================================== 4. F.pad arguments

PAD_ARGS = [(None, None), (None,), (1, None), (None, 1), [None, None], (1.0, 1), (1, 1.5),
            ("a", 1), ("1", "1"), 1, None, (True, 1), (1, True), (np.int64(1), 1),
            (1, np.int32(1)), (np.float64(1), 1), [1, 1.0], (1, 1, None), "t15", "t1",
            "t_vec", "t_whole"]


def _pad_arg(m, p):
    if p == "t15":
        return (m.tensor(1.5), 1)
    if p == "t1":
        return (1, m.tensor(1))
    if p == "t_vec":
        return (m.tensor([1, 2]), 1)
    if p == "t_whole":
        return m.tensor([1, 1])
    return p


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("p", PAD_ARGS, ids=[repr(p) for p in PAD_ARGS])
def test_pad_argument_parsing(p, mode):
    _same(lambda m: m.nn.functional.pad(m.ones(1, 2, 3), _pad_arg(m, p), mode=mode))


@pytest.mark.parametrize("p", [(None,), (1, None), 1, (1.0, 1), (True, 1)])
def test_constant_pad_nd_argument_parsing(p):
    _same(lambda m: m.constant_pad_nd(m.ones(2, 3), p))


NEG_PADS = [(1, (-5, 10)), (1, (1, -5)), (1, (-2, -2)), (1, (-3, 0)), (1, (0, -3)),
            (1, (-1, -2)), (2, (-2, -2, 0, 0)), (2, (-2, -2, -2, -2)), (2, (-1, -2, -1, -2)),
            (2, (-1, -2, -2, -2)), (2, (0, 0, -3, 0)), (2, (-3, 0, 0, 0)),
            (3, (-2,) * 6), (3, (-1, -2) * 3), (3, (-2, -2, -2, -2, 0, 0)),
            (3, (0, 0, 0, 0, -3, 0))]


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
@pytest.mark.parametrize("k,p", NEG_PADS, ids=[f"{k}d{p}" for k, p in NEG_PADS])
def test_pad_negative_output_sizes(k, p, mode):
    shape = {1: (1, 2, 3), 2: (1, 1, 3, 3), 3: (1, 1, 3, 3, 3)}[k]
    if mode == "circular" and k == 3 and p == (0, 0, 0, 0, -3, 0):
        pytest.skip("torch's circular pad reads outside a zero-size dim")
    _same(lambda m: m.nn.functional.pad(m.arange(float(np.prod(shape))).reshape(shape), p,
                                        mode=mode))


MIXED_PADS = [(1, (-2, 1)), (1, (-1, 2)), (1, (1, -2)), (1, (-3, 1)), (1, (2, -1)),
              (1, (-5, 10)), (2, (-1, 2, 1, -1)), (2, (2, -1, -2, 2)), (3, (1, -1, -1, 1, 0, 2))]


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
@pytest.mark.parametrize("k,p", MIXED_PADS, ids=[f"{k}d{p}" for k, p in MIXED_PADS])
def test_pad_mixed_sign_values(k, p, mode):
    """A negative pad on one side and a positive one on the other: torch reflects (or
    replicates) about the uncropped input, so values cropped away come back."""
    shape = {1: (1, 2, 3), 2: (1, 1, 3, 3), 3: (1, 1, 3, 3, 3)}[k]

    def fn(m):
        x = m.arange(float(np.prod(shape))).reshape(shape).requires_grad_()
        y = m.nn.functional.pad(x, p, mode=mode)
        (y * m.arange(float(y.numel())).reshape(y.shape)).sum().backward()
        return m.cat([y.detach().reshape(-1), x.grad.reshape(-1)])
    _same(fn)


# ================================================================== 5. t.data = other: layout

def _layout(m, t):
    return (tuple(t.shape), tuple(t.stride()), t.is_contiguous(),
            t.is_contiguous(memory_format=m.channels_last), t.flatten().tolist()[:8])


def _cl_source(m, shape=(2, 3, 4, 5), fmt="channels_last"):
    return m.arange(float(np.prod(shape))).reshape(shape).contiguous(
        memory_format=getattr(m, fmt))


DATA_CASES = {
    "channels_last_into_contiguous": lambda m: (m.zeros(2, 3, 4, 5), _cl_source(m)),
    "contiguous_into_channels_last": lambda m: (
        m.zeros(2, 3, 4, 5).contiguous(memory_format=m.channels_last),
        m.arange(120.).reshape(2, 3, 4, 5)),
    "channels_last_into_other_shape": lambda m: (m.zeros(1), _cl_source(m)),
    "channels_last_into_requires_grad": lambda m: (m.zeros(2, 3, 4, 5, requires_grad=True),
                                                   _cl_source(m)),
    "channels_last_into_parameter": lambda m: (m.nn.Parameter(m.zeros(2, 3, 4, 5)),
                                               _cl_source(m)),
    "permuted_view": lambda m: (m.zeros(2, 3, 4, 5), _cl_source(m).transpose(0, 1)),
    "sliced_view": lambda m: (m.zeros(2, 3, 4, 5), _cl_source(m)[:, :, 1:3]),
    "channels_last_3d": lambda m: (m.zeros(1, 2, 3, 4, 5),
                                   _cl_source(m, (1, 2, 3, 4, 5), "channels_last_3d")),
}


@pytest.mark.parametrize("name", list(DATA_CASES))
def test_data_setter_takes_layout(name):
    res = []
    for m in (torch, torchlike):
        t, other = DATA_CASES[name](m)
        t.data = other
        res.append(_layout(m, t) + (_layout(m, t.data), _layout(m, t.detach()),
                                    t.requires_grad))
    assert res[1] == res[0]


@pytest.mark.parametrize("op", ["mul_", "clone", "index0", "permute_view", "contiguous",
                                "view_error", "reshape", "set_back"])
def test_data_setter_layout_afterwards(op):
    def fn(m):
        t = m.zeros(2, 3, 4, 5)
        t.data = _cl_source(m)
        if op == "mul_":
            return t.mul_(2)
        if op == "clone":
            return t.clone()
        if op == "index0":
            return t[0]
        if op == "permute_view":
            return t.permute(0, 2, 3, 1).view(-1)
        if op == "contiguous":
            return t.contiguous()
        if op == "view_error":
            t.data = _cl_source(m)[:, :, 1:3]
            return t.view(-1)
        if op == "reshape":
            return t.reshape(6, 20)
        t.data = m.arange(120.).reshape(2, 3, 4, 5)
        return t
    r = both_outcomes(fn)
    if r is not None:
        lv, tv = r
        assert _layout(torchlike, lv) == _layout(torch, tv)


# ================================================================== 4b. range factories' parsing

def _fv(m, v):
    """Test values: strings starting with "T" are tensors."""
    if isinstance(v, str) and v.startswith("T"):
        return {"T1": lambda: m.tensor(3), "T2": lambda: m.tensor([1, 2]),
                "Tf": lambda: m.tensor(2.5), "Te": lambda: m.tensor([]),
                "Tb": lambda: m.tensor(True), "Tc": lambda: m.tensor(1 + 1j),
                "T11": lambda: m.tensor([[4]]),
                "Trg": lambda: m.tensor(3., requires_grad=True)}[v]()
    return v


FACTORY_VALUES = ["a", None, 1j, 2 + 0j, "T1", "T2", "Tf", "Te", "Tb", "Tc", "T11", "Trg",
                  True, np.int64(3), np.float32(2.5), np.bool_(True), [3], (3,), 3, 2.5]
FACTORY_FORMS = {
    "arange(v)": lambda m, v: m.arange(v),
    "arange(0,v)": lambda m, v: m.arange(0, v),
    "arange(v,5)": lambda m, v: m.arange(v, 5),
    "arange(0,5,v)": lambda m, v: m.arange(0, 5, v),
    "arange(end=v)": lambda m, v: m.arange(end=v),
    "arange(v,dtype)": lambda m, v: m.arange(v, dtype=m.float32),
    "linspace(v,5,3)": lambda m, v: m.linspace(v, 5, 3),
    "linspace(0,v,3)": lambda m, v: m.linspace(0, v, 3),
    "linspace(0,5,v)": lambda m, v: m.linspace(0, 5, v),
    "linspace(0,5,steps=v)": lambda m, v: m.linspace(0, 5, steps=v),
    "logspace(0,v,3)": lambda m, v: m.logspace(0, v, 3),
    "logspace(0,5,v)": lambda m, v: m.logspace(0, 5, v),
    "logspace(0,5,3,base=v)": lambda m, v: m.logspace(0, 5, 3, base=v),
}


@pytest.mark.parametrize("form", list(FACTORY_FORMS))
@pytest.mark.parametrize("v", FACTORY_VALUES, ids=[repr(v) for v in FACTORY_VALUES])
def test_range_factory_arguments(form, v):
    if (form.startswith("logspace") and "base" not in form
            and v in (1j, 2 + 0j, "Tc")):
        pytest.skip("complex logspace rounds differently (DIFFERENCES.md)")
    _same(lambda m: FACTORY_FORMS[form](m, _fv(m, v)))


@pytest.mark.parametrize("call", [
    lambda m: m.arange(), lambda m: m.arange(start=1), lambda m: m.arange(start=1, end=3),
    lambda m: m.arange(0, end=3), lambda m: m.arange(1, 2, 3, 4),
    lambda m: m.arange(3, foo=1), lambda m: m.arange(3, dtype="float32"),
    lambda m: m.arange(1, end="a"), lambda m: m.arange(3, dtype=m.float32, requires_grad=1),
    lambda m: m.arange(0, None), lambda m: m.arange(0, 5, None),
    lambda m: m.linspace(0, 1), lambda m: m.linspace(0, 1, steps=None),
    lambda m: m.linspace(m.tensor([1.]), m.tensor([[5.]]), 3),
    lambda m: m.logspace(0, m.tensor([5.]), 3), lambda m: m.linspace(0, 5, 3.0),
    lambda m: m.linspace(m.tensor(1., requires_grad=True), 5, 3),
    lambda m: m.logspace(0, 5, 3, base=True), lambda m: m.logspace(0, 5, 3, base=m.tensor(2.)),
])
def test_range_factory_calls(call):
    _same(call)


@pytest.mark.parametrize("call", [
    "range(3)", "range(0,1,1,1,1,1)", "range()", "range(0,5,None)", "range(1j,5)",
    "range(0,5)", "range(0,5,2,dtype=m.int64)", "range(0.5,2.5,0.5)", "range(0,5,0)",
    "range(0,5,-1)", "range(0,float('inf'))", "range(0,5,0.0)", "range(float('nan'),5)",
    "range(0,m.tensor(True))", "range(0,m.tensor(2.5))", "range(0,'a')", "range(0,None)",
    "range(0,m.tensor([1,2]))", "range(start=1)", "range(0,5,requires_grad=True)"])
def test_torch_range_arguments(call):
    import warnings

    def fn(m):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return eval("m." + call)
    _same(fn)


@pytest.mark.parametrize("call", [
    "x.sort(0, stable=True)", "x.sort(0, stable=None)", "x.sort(0, True, stable=True)",
    "x.sort(0, descending=True, stable=True)", "m.sort(x, 0, descending=True, stable=True)",
    "m.sort(x, 0, True, stable=True)", "x.argsort(0, True, stable=True)",
    "m.argsort(x, 0, True, stable=True)", "m.argsort(x, 0, stable=False)",
    "x.sort(stable=True, dim=0)", "m.sort(x, stable=True, dim=0, descending=True)",
    "x.argsort(stable=True)", "x.sort(0, True)", "m.argsort(x, 1, True)",
])
def test_sort_with_stable_takes_dim_and_descending_as_keywords_as_torch(call):
    """``stable=`` selects sort's and argsort's overload whose ``dim`` and ``descending`` are
    keywords: with them positional torch's parser refuses the call (its complaint, or the
    "invalid combination" first line)."""
    def run(m):
        x = m.tensor([[3.0, 1.0, 2.0], [0.5, 0.5, -1.0]])
        return eval(call, {"m": m, "x": x})
    got = both_outcomes(run, msg="first_line")
    if got is not None:
        for a, b in zip(*(r if isinstance(r, tuple) else (r,) for r in got)):
            assert a.tolist() == b.tolist()
