"""Matrix products check their operands as torch 2.13 does: every pair (or triple) of operand
dtypes, the rank and size errors and the ``out=`` and in-place forms raise torch's exception
class with its exact message (the kernel each op reduces to decides which: dot, addmv, mm, bmm,
addmm, baddbmm, multi_dot, tensordot), and where torch computes, the value and dtype match."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import torchlike

from oracle import assert_close, both_outcomes, same_dtype

R = np.random.default_rng(0)


def _arr(shape):
    return R.integers(0, 3, size=shape).astype(np.float64)


def _compare(fn, arrays, dtypes, out=None):
    """``fn(m, *tensors[, out=])`` on torch and torchlike with the operands in ``dtypes``."""
    def run(m):
        ts = [m.tensor(a, dtype=getattr(m, d)) for a, d in zip(arrays, dtypes)]
        if out is None:
            return fn(m, *ts)
        shape, dt = out
        return fn(m, *ts, out=m.zeros(shape, dtype=getattr(m, dt)))
    res = both_outcomes(run)
    if res is not None:
        ours, theirs = res
        assert same_dtype(ours, theirs), f"dtype {ours.dtype} != torch {theirs.dtype}"
        assert_close(ours, theirs, atol=1e-2, rtol=1e-2)


OPS = {
    "mm": (lambda m, a, b: m.mm(a, b), [(2, 3), (3, 4)]),
    "bmm": (lambda m, a, b: m.bmm(a, b), [(2, 2, 3), (2, 3, 4)]),
    "matmul_1x1": (lambda m, a, b: m.matmul(a, b), [(3,), (3,)]),
    "matmul_2x1": (lambda m, a, b: m.matmul(a, b), [(2, 3), (3,)]),
    "matmul_1x2": (lambda m, a, b: m.matmul(a, b), [(3,), (3, 4)]),
    "matmul_2x2": (lambda m, a, b: m.matmul(a, b), [(2, 3), (3, 4)]),
    "matmul_3x1": (lambda m, a, b: m.matmul(a, b), [(2, 2, 3), (3,)]),
    "matmul_3x2": (lambda m, a, b: m.matmul(a, b), [(2, 2, 3), (3, 4)]),
    "matmul_1x3": (lambda m, a, b: m.matmul(a, b), [(3,), (2, 3, 4)]),
    "matmul_2x3": (lambda m, a, b: m.matmul(a, b), [(2, 3), (2, 3, 4)]),
    "matmul_3x3": (lambda m, a, b: m.matmul(a, b), [(2, 2, 3), (2, 3, 4)]),
    "matmul_4x3": (lambda m, a, b: m.matmul(a, b), [(1, 2, 2, 3), (2, 3, 4)]),
    "matmul_operator": (lambda m, a, b: a @ b, [(2, 3), (3, 4)]),
    "dot": (lambda m, a, b: m.dot(a, b), [(3,), (3,)]),
    "vdot": (lambda m, a, b: m.vdot(a, b), [(3,), (3,)]),
    "mv": (lambda m, a, b: m.mv(a, b), [(2, 3), (3,)]),
    "outer": (lambda m, a, b: m.outer(a, b), [(2,), (3,)]),
    "ger": (lambda m, a, b: m.ger(a, b), [(2,), (3,)]),
    "kron": (lambda m, a, b: m.kron(a, b), [(2, 2), (2, 3)]),
    "inner": (lambda m, a, b: m.inner(a, b), [(2, 3), (4, 3)]),
    "inner_1d": (lambda m, a, b: m.inner(a, b), [(3,), (3,)]),
    "tensordot": (lambda m, a, b: m.tensordot(a, b, dims=1), [(2, 3), (3, 4)]),
    "einsum_mm": (lambda m, a, b: m.einsum("ij,jk->ik", a, b), [(2, 3), (3, 4)]),
    "einsum_no_sum": (lambda m, a, b: m.einsum("i,j->ij", a, b), [(2,), (3,)]),
    "multi_dot_2": (lambda m, a, b: m.linalg.multi_dot([a, b]), [(2, 3), (3, 4)]),
    "linear_no_bias": (lambda m, x, w: m.nn.functional.linear(x, w), [(2, 3), (4, 3)]),
    "addmm": (lambda m, c, a, b: m.addmm(c, a, b), [(2, 4), (2, 3), (3, 4)]),
    "addmm_broadcast": (lambda m, c, a, b: m.addmm(c, a, b), [(4,), (2, 3), (3, 4)]),
    "addmv": (lambda m, c, a, b: m.addmv(c, a, b), [(2,), (2, 3), (3,)]),
    "addr": (lambda m, c, a, b: m.addr(c, a, b), [(2, 3), (2,), (3,)]),
    "baddbmm": (lambda m, c, a, b: m.baddbmm(c, a, b), [(2, 2, 4), (2, 2, 3), (2, 3, 4)]),
    "addbmm": (lambda m, c, a, b: m.addbmm(c, a, b), [(2, 4), (2, 2, 3), (2, 3, 4)]),
    "addmm_inplace": (lambda m, c, a, b: c.addmm_(a, b), [(2, 4), (2, 3), (3, 4)]),
    "addmv_inplace": (lambda m, c, a, b: c.addmv_(a, b), [(2,), (2, 3), (3,)]),
    "addr_inplace": (lambda m, c, a, b: c.addr_(a, b), [(2, 3), (2,), (3,)]),
    "baddbmm_inplace": (lambda m, c, a, b: c.baddbmm_(a, b), [(2, 2, 4), (2, 2, 3), (2, 3, 4)]),
    "addbmm_inplace": (lambda m, c, a, b: c.addbmm_(a, b), [(2, 4), (2, 2, 3), (2, 3, 4)]),
    "multi_dot_3": (lambda m, a, b, c: m.linalg.multi_dot([a, b, c]), [(2, 3), (3, 4), (4, 2)]),
    "multi_dot_vectors": (lambda m, a, b, c: m.linalg.multi_dot([a, b, c]),
                          [(3,), (3, 4), (4,)]),
    "chain_matmul": (lambda m, a, b, c: m.chain_matmul(a, b, c), [(2, 3), (3, 4), (4, 2)]),
    "linear": (lambda m, x, w, b: m.nn.functional.linear(x, w, b), [(2, 3), (4, 3), (4,)]),
    "linear_1d_input": (lambda m, x, w, b: m.nn.functional.linear(x, w, b),
                        [(3,), (4, 3), (4,)]),
    "bilinear": (lambda m, x, y, w: m.nn.functional.bilinear(x, y, w),
                 [(2, 3), (2, 5), (4, 3, 5)]),
}
DTYPES2 = ["float32", "float64", "float16", "bfloat16", "int64", "complex64", "bool", "uint8"]
DTYPES3 = ["float32", "float64", "bool", "int64"]


def _dtype_cases():
    for name, (fn, shapes) in OPS.items():
        dts = DTYPES2 if len(shapes) == 2 else DTYPES3
        for combo in itertools.product(dts, repeat=len(shapes)):
            yield pytest.param(name, combo, id=f"{name}-{'-'.join(combo)}")


@pytest.mark.parametrize("name,dtypes", list(_dtype_cases()))
def test_product_operand_dtypes_match_torch(name, dtypes):
    fn, shapes = OPS[name]
    _compare(fn, [_arr(s) for s in shapes], dtypes)


def test_addmm_with_double_input_and_float_matrices_raises_as_torch():
    _compare(lambda m, c, a, b: m.addmm(c, a, b), [_arr((2, 4)), _arr((2, 3)), _arr((3, 4))],
             ("float64", "float32", "float32"))


def test_baddbmm_with_double_input_and_float_batches_raises_as_torch():
    _compare(lambda m, c, a, b: m.baddbmm(c, a, b),
             [_arr((2, 2, 4)), _arr((2, 2, 3)), _arr((2, 3, 4))], ("float64", "float32", "float32"))


def test_bmm_dtype_mismatch_message_is_torchs():
    _compare(lambda m, a, b: m.bmm(a, b), [_arr((2, 2, 3)), _arr((2, 3, 4))],
             ("float64", "float32"))


OUT = {
    "mm": (lambda m, a, b, out: m.mm(a, b, out=out), [(2, 3), (3, 4)], (2, 4)),
    "bmm": (lambda m, a, b, out: m.bmm(a, b, out=out), [(2, 2, 3), (2, 3, 4)], (2, 2, 4)),
    "matmul": (lambda m, a, b, out: m.matmul(a, b, out=out), [(2, 3), (3, 4)], (2, 4)),
    "matmul_1x1": (lambda m, a, b, out: m.matmul(a, b, out=out), [(3,), (3,)], ()),
    "matmul_2x1": (lambda m, a, b, out: m.matmul(a, b, out=out), [(2, 3), (3,)], (2,)),
    "matmul_3x3": (lambda m, a, b, out: m.matmul(a, b, out=out),
                   [(2, 2, 3), (2, 3, 4)], (2, 2, 4)),
    "dot": (lambda m, a, b, out: m.dot(a, b, out=out), [(3,), (3,)], ()),
    "vdot": (lambda m, a, b, out: m.vdot(a, b, out=out), [(3,), (3,)], ()),
    "mv": (lambda m, a, b, out: m.mv(a, b, out=out), [(2, 3), (3,)], (2,)),
    "outer": (lambda m, a, b, out: m.outer(a, b, out=out), [(2,), (3,)], (2, 3)),
    "inner": (lambda m, a, b, out: m.inner(a, b, out=out), [(2, 3), (4, 3)], (2, 4)),
    "tensordot": (lambda m, a, b, out: m.tensordot(a, b, dims=1, out=out),
                  [(2, 3), (3, 4)], (2, 4)),
    "multi_dot": (lambda m, a, b, out: m.linalg.multi_dot([a, b], out=out),
                  [(2, 3), (3, 4)], (2, 4)),
    "chain_matmul": (lambda m, a, b, out: m.chain_matmul(a, b, out=out),
                     [(2, 3), (3, 4)], (2, 4)),
    "addmm": (lambda m, c, a, b, out: m.addmm(c, a, b, out=out),
              [(2, 4), (2, 3), (3, 4)], (2, 4)),
    "addmv": (lambda m, c, a, b, out: m.addmv(c, a, b, out=out), [(2,), (2, 3), (3,)], (2,)),
    "addr": (lambda m, c, a, b, out: m.addr(c, a, b, out=out), [(2, 3), (2,), (3,)], (2, 3)),
    "baddbmm": (lambda m, c, a, b, out: m.baddbmm(c, a, b, out=out),
                [(2, 2, 4), (2, 2, 3), (2, 3, 4)], (2, 2, 4)),
    "addbmm": (lambda m, c, a, b, out: m.addbmm(c, a, b, out=out),
               [(2, 4), (2, 2, 3), (2, 3, 4)], (2, 4)),
}


def _out_cases():
    for name, (fn, shapes, oshape) in OUT.items():
        for combo in itertools.product(["float32", "float64", "bool"], repeat=len(shapes) + 1):
            yield pytest.param(name, combo, id=f"{name}-{'-'.join(combo)}")


@pytest.mark.parametrize("name,dtypes", list(_out_cases()))
def test_product_out_dtype_checks_match_torch(name, dtypes):
    fn, shapes, oshape = OUT[name]
    _compare(fn, [_arr(s) for s in shapes], dtypes[:-1], out=(oshape, dtypes[-1]))


SHAPES = {
    "mm": (lambda m, a, b: m.mm(a, b),
           [[(3,), (3, 4)], [(2, 3), (4,)], [(2, 3), (4, 5)], [(2, 3, 4), (4, 5)]]),
    "bmm": (lambda m, a, b: m.bmm(a, b),
            [[(2, 3), (2, 3, 4)], [(2, 2, 3), (3, 4)], [(2, 2, 3), (3, 3, 4)],
             [(2, 2, 3), (2, 4, 4)]]),
    "matmul": (lambda m, a, b: m.matmul(a, b),
               [[(), (3,)], [(3,), (4,)], [(2, 3), (4,)], [(3,), (4, 5)], [(2, 3), (4, 5)],
                [(2, 2, 3), (4, 5)], [(2, 3), (2, 4, 5)], [(3,), (2, 4, 5)],
                [(2, 2, 3), (4,)], [(2, 2, 3), (3, 4, 5)], [(2, 1, 2, 3), (3, 4, 5)]]),
    "dot": (lambda m, a, b: m.dot(a, b), [[(3,), (4,)], [(3, 3), (3,)], [(), (3,)]]),
    "vdot": (lambda m, a, b: m.vdot(a, b), [[(3,), (4,)], [(3, 3), (3,)]]),
    "mv": (lambda m, a, b: m.mv(a, b),
           [[(3, 3), (4,)], [(3,), (3,)], [(), (3,)], [(2, 3), (2, 3)]]),
    "inner": (lambda m, a, b: m.inner(a, b), [[(2, 3), (2, 4)], [(), (2, 3)]]),
    "tensordot": (lambda m, a, b: m.tensordot(a, b),
                  [[(2, 3), (3, 4)], [(), (3,)], [(2, 3), (1, 2, 3)], [(2, 3), (2, 4)]]),
    "tensordot_dims1": (lambda m, a, b: m.tensordot(a, b, dims=1),
                        [[(3,), (4,)], [(2, 3), (1, 4)], [(2, 1), (3, 4)]]),
    "multi_dot": (lambda m, a, b, c: m.linalg.multi_dot([a, b, c]),
                  [[(2, 2, 3), (3, 4), (4,)], [(2, 3), (3, 4), (4, 2, 2)],
                   [(2, 3), (3,), (3,)], [(2, 3), (4, 3), (3,)], [(3,), (3, 4), (5,)]]),
    "chain_matmul": (lambda m, a, b: m.chain_matmul(a, b), [[(2, 3), (3,)], [(2, 3), (4, 3)]]),
    "addmm": (lambda m, c, a, b: m.addmm(c, a, b),
              [[(2, 4), (3,), (3, 4)], [(2, 4), (2, 3), (4, 4)], [(3, 4), (2, 3), (3, 4)],
               [(2, 2, 4), (2, 3), (3, 4)]]),
    "addmv": (lambda m, c, a, b: m.addmv(c, a, b),
              [[(2,), (2, 3), (4,)], [(3,), (2, 3), (3,)], [(2, 2), (2, 3), (3,)],
               [(), (2, 3), (4,)]]),
    "addr": (lambda m, c, a, b: m.addr(c, a, b),
             [[(2, 3), (2, 2), (3,)], [(2, 3), (2,), (3, 3)], [(2, 2, 3), (2,), (3,)]]),
    "baddbmm": (lambda m, c, a, b: m.baddbmm(c, a, b),
                [[(2, 2, 4), (2, 3), (2, 3, 4)], [(2, 2, 4), (2, 2, 3), (2, 3)],
                 [(2, 2, 4), (2, 2, 3), (3, 3, 4)], [(2, 5, 4), (2, 2, 3), (2, 3, 4)]]),
    "baddbmm_inplace": (lambda m, c, a, b: c.baddbmm_(a, b),
                        [[(4,), (2, 2, 3), (2, 3, 4)], [(), (2, 2, 3), (2, 3, 4)]]),
    "addmm_inplace": (lambda m, c, a, b: c.addmm_(a, b),
                      [[(), (2, 3), (3, 4)], [(4,), (2, 3), (3, 4)]]),
    "addbmm": (lambda m, c, a, b: m.addbmm(c, a, b),
               [[(2, 4), (2, 3), (2, 3, 4)], [(2, 4), (2, 2, 3), (3, 3, 4)],
                [(2, 4), (2, 2, 3), (2, 4, 4)], [(5, 4), (2, 2, 3), (2, 3, 4)]]),
    "linear_no_bias": (lambda m, x, w: m.nn.functional.linear(x, w),
                       [[(), (4, 3)], [(2, 3), ()], [(), (2, 3, 4)], [(3,), (3,)]]),
    "bilinear": (lambda m, x, y, w: m.nn.functional.bilinear(x, y, w),
                 [[(2, 3), (5,), (4, 3, 5)], [(2, 3), (3, 5), (4, 3, 5)],
                  [(2, 4), (2, 5), (4, 3, 5)], [(2, 3), (2, 6), (4, 3, 5)]]),
}


def _shape_cases():
    for name, (fn, cases) in SHAPES.items():
        for k, shapes in enumerate(cases):
            yield pytest.param(name, k, id=f"{name}-{k}")


@pytest.mark.parametrize("name,k", list(_shape_cases()))
@pytest.mark.parametrize("dtypes", ["same", "mixed"])
def test_product_rank_and_size_errors_match_torch(name, k, dtypes):
    fn, cases = SHAPES[name]
    shapes = cases[k]
    dts = ["float32"] * len(shapes) if dtypes == "same" else \
        ["float32", "float64"] + ["float32"] * (len(shapes) - 2)
    _compare(fn, [_arr(s) for s in shapes], dts)


def test_addbmm_of_uint8_keeps_uint8():
    _compare(lambda m, c, a, b: m.addbmm(c, a, b),
             [_arr((2, 4)), _arr((2, 2, 3)), _arr((2, 3, 4))], ("uint8",) * 3)


def test_kron_of_bool_is_bool():
    _compare(lambda m, a, b: m.kron(a, b), [_arr((2, 2)), _arr((2, 3))], ("bool", "bool"))


@pytest.mark.parametrize("eq", ["i,i->", "i,i->i", "i,j->ij", "ij,j->i", "ij,j->j", "i,i"])
def test_einsum_of_bool_raises_only_where_torch_sums(eq):
    shapes = {"ij,j->i": [(3, 3), (3,)], "ij,j->j": [(3, 3), (3,)]}.get(eq, [(3,), (3,)])
    _compare(lambda m, a, b: m.einsum(eq, a, b), [_arr(s) for s in shapes], ("bool", "bool"))


def test_product_method_takes_no_out():
    import torchlike
    a = torchlike.ones(2, 2)
    with pytest.raises(TypeError):
        a.mm(a, out=torchlike.zeros(2, 2))


ADD = {"addmm": [(2, 4), (2, 3), (3, 4)], "addmv": [(2,), (2, 3), (3,)],
       "addr": [(2, 3), (2,), (3,)], "baddbmm": [(2, 2, 4), (2, 2, 3), (2, 3, 4)],
       "addbmm": [(2, 4), (2, 2, 3), (2, 3, 4)]}
FACTORS = [0, 2, 0.5, True, 1j, float("nan"), float("inf"), -1]


@pytest.mark.parametrize("factor", FACTORS, ids=str)
@pytest.mark.parametrize("which", ["beta", "alpha"])
@pytest.mark.parametrize("dtype", ["float32", "int64", "complex64"])
@pytest.mark.parametrize("name", sorted(ADD))
def test_beta_and_alpha_convert_to_the_result_dtype_as_torch(name, dtype, which, factor):
    if which == "alpha" and factor == float("inf") and dtype != "int64":
        pytest.skip("torch's BLAS applies alpha inside its kernel: nan or inf per element by "
                    "CPU (DIFFERENCES.md; test_infinite_alpha_scales_the_product)")
    _compare(lambda m, *ts: getattr(m, name)(*ts, **{which: factor}),
             [_arr(s) for s in ADD[name]], (dtype,) * 3)


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("name", sorted(ADD))
def test_infinite_alpha_scales_the_product(name, dtype):
    """``alpha=inf``: ``beta * input + inf * (mat1 @ mat2)``, each element ±inf, or nan where
    the product is 0 (torch's result depends on its BLAS kernel: DIFFERENCES.md)."""
    arrays = [_arr(s).astype(dtype) for s in ADD[name]]
    arrays[1].flat[0] = 0          # (a zero row or entry: some products are 0)
    got = getattr(torchlike, name)(*[torchlike.tensor(a) for a in arrays],
                                   alpha=float("inf")).numpy()
    inp, a, b = (x.astype(np.complex128 if dtype == "complex64" else np.float64) for x in arrays)
    prod = {"addmm": lambda: a @ b, "addmv": lambda: a @ b, "addr": lambda: np.outer(a, b),
            "baddbmm": lambda: a @ b, "addbmm": lambda: (a @ b).sum(0)}[name]()
    with np.errstate(invalid="ignore", over="ignore"):
        want = inp + np.inf * prod
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(got)], want[~np.isnan(want)].astype(got.dtype))


@pytest.mark.parametrize("name", sorted(ADD))
def test_zero_alpha_or_beta_with_nonfinite_operands_as_torch(name):
    shapes = ADD[name]
    a0 = _arr(shapes[0])
    a0.flat[0] = np.nan
    _compare(lambda m, *ts: getattr(m, name)(*ts, beta=0), [a0] + [_arr(s) for s in shapes[1:]],
             ("float64",) * 3)
    a1 = _arr(shapes[1])
    a1.flat[0] = np.inf
    _compare(lambda m, *ts: getattr(m, name)(*ts, alpha=0), [_arr(shapes[0]), a1,
                                                             _arr(shapes[2])], ("float64",) * 3)


NON_TENSOR = ["mm", "bmm", "matmul", "dot", "vdot", "mv", "outer", "inner", "kron", "tensordot",
              "addmm", "addmv", "addr", "baddbmm", "addbmm"]


@pytest.mark.parametrize("value", [2.0, [1.0], None], ids=["float", "list", "none"])
@pytest.mark.parametrize("name", NON_TENSOR)
def test_product_of_a_non_tensor_operand_raises_as_torch(name, value):
    def run(m):
        if name in ADD:
            shapes = ADD[name]
            return getattr(m, name)(m.ones(shapes[0]), m.ones(shapes[1]), value)
        first = m.ones(2) if name in ("dot", "vdot", "outer") else m.ones(2, 2)
        return getattr(m, name)(first, value)
    both_outcomes(run)


LINEAR_SHAPES = [((), (4, 3), (4,)), ((3,), (), (4,)), ((2, 3), (3,), ()), ((2, 3), (3,), (2,)),
                 ((3,), (3,), ()), ((3,), (4, 3), (1, 4)), ((2, 2, 2, 3), (4, 3), (1, 4)),
                 ((2, 2, 2, 3), (4, 3), (2, 4)), ((2, 2, 2, 3), (4, 3), (1, 1, 4)),
                 ((2, 2, 2, 3), (4, 3), (4, 1)), ((3,), (2, 3), (1, 1)), ((3,), (2, 3), (2, 1, 4)),
                 ((2, 2, 3), (2,), (2, 3)), ((2, 2, 3), (4, 3), (0, 3)), ((3,), (0, 3), (0, 3)),
                 ((2, 2, 3), (0, 3), (1, 0)), ((2, 3), (0, 3), (5, 0)), ((2, 2, 3), (4, 3), ()),
                 ((2, 3), (4, 3), (2, 4)), ((2, 3), (4, 3), (3, 4)), ((2, 2, 3), (2, 4, 3), (4,))]


@pytest.mark.parametrize("shapes", LINEAR_SHAPES, ids=str)
def test_linear_bias_shapes_take_torchs_fused_or_unfused_path(shapes):
    _compare(lambda m, x, w, b: m.nn.functional.linear(x, w, b), [_arr(s) for s in shapes],
             ("float32",) * 3)
