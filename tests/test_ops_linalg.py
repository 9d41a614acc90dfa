"""Issue 3, linear algebra: products and torchlike.linalg against torch (tests/oracle.py)."""
import numpy as np
import pytest

from oracle import check_double_backward, Case, check, check_raises

R = np.random.default_rng(5)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def f64(*shape):
    return R.standard_normal(shape)


def wellcond(*shape, dtype=np.float64):
    """Random square matrices (batched) far from singular."""
    n = shape[-1]
    return (R.standard_normal(shape) * 0.3 + np.eye(n) * 2).astype(dtype)


def spd(m, x):
    """A symmetric positive-definite matrix built from ``x`` inside the case (so that the
    gradient with respect to ``x`` is well defined on both sides)."""
    n = x.shape[-1]
    return x @ x.mT + n * m.eye(n, dtype=x.dtype)


I64 = np.arange(6, dtype=np.int64).reshape(2, 3)
C33 = (R.standard_normal((3, 3)) + 1j * R.standard_normal((3, 3))).astype(np.complex64)
C3 = (R.standard_normal(3) + 1j * R.standard_normal(3)).astype(np.complex64)
ZERO = np.zeros(4, np.float32)
TIES = np.array([1.0, -3.0, 3.0, 0.0], np.float32)
L = __import__("types").SimpleNamespace

CASES = [
    # products
    Case("vdot", lambda m, a, b: m.vdot(a, b), (f32(5), f32(5))),
    Case("vdot_method", lambda m, a, b: a.vdot(b), (f64(3), f64(3))),
    Case("vdot_int", lambda m, a, b: m.vdot(a, b), (np.arange(3), np.arange(3))),
    Case("outer", lambda m, a, b: m.outer(a, b), (f32(3), f32(4))),
    Case("outer_promote", lambda m, a, b: a.outer(b), (f32(3), f64(2))),
    Case("outer_int_float", lambda m, a, b: m.outer(a, b), (np.arange(3), f32(2))),
    Case("ger", lambda m, a, b: m.ger(a, b), (f32(2), f32(2))),
    Case("outer_empty", lambda m, a, b: m.outer(a, b), (f32(0), f32(3))),
    Case("einsum_mm", lambda m, a, b: m.einsum("ij,jk->ik", a, b), (f32(2, 3), f32(3, 4))),
    Case("einsum_list", lambda m, a, b: m.einsum("ij,jk", [a, b]), (f32(2, 3), f32(3, 4))),
    Case("einsum_trace", lambda m, a: m.einsum("ii", a), (f32(3, 3),)),
    Case("einsum_diag", lambda m, a: m.einsum("ii->i", a), (f32(3, 3),)),
    Case("einsum_batch", lambda m, a, b: m.einsum("bij,bjk->bik", a, b),
         (f32(2, 3, 4), f32(2, 4, 2))),
    Case("einsum_ellipsis", lambda m, a, b: m.einsum("...ij,...j->...i", a, b),
         (f32(2, 3, 4), f32(2, 4))),
    Case("einsum_outer", lambda m, a, b: m.einsum("i,j->ij", a, b), (f32(3), f32(2))),
    Case("einsum_sum", lambda m, a: m.einsum("ijk->", a), (f32(2, 3, 4),)),
    Case("einsum_transpose", lambda m, a: m.einsum("ij->ji", a), (f32(2, 3),)),
    Case("einsum_three", lambda m, a, b, c: m.einsum("ij,jk,kl->il", a, b, c),
         (f32(2, 3), f32(3, 4), f32(4, 2))),
    Case("einsum_bcast_one", lambda m, a, b: m.einsum("ij,ij->i", a, b), (f32(3, 4), f32(1, 4))),
    Case("einsum_spaces", lambda m, a, b: m.einsum("i j , j -> i", a, b), (f32(2, 3), f32(3))),
    Case("einsum_int", lambda m, a, b: m.einsum("ij,jk->ik", a, b), (I64, I64.T.copy())),
    Case("tensordot_int_dims", lambda m, a, b: m.tensordot(a, b, 1), (f32(2, 3), f32(3, 4))),
    Case("tensordot_default", lambda m, a, b: m.tensordot(a, b), (f32(2, 3, 4), f32(3, 4, 5))),
    Case("tensordot_lists", lambda m, a, b: m.tensordot(a, b, ([0], [1])), (f32(2, 3), f32(4, 2))),
    Case("tensordot_neg", lambda m, a, b: m.tensordot(a, b, dims=([-1, 0], [0, -1])),
         (f32(3, 2, 4), f32(4, 5, 3))),
    Case("tensordot_zero", lambda m, a, b: m.tensordot(a, b, 0), (f32(2), f32(3))),
    Case("addmm", lambda m, c, a, b: m.addmm(c, a, b), (f32(2, 4), f32(2, 3), f32(3, 4))),
    Case("addmm_bcast", lambda m, c, a, b: m.addmm(c, a, b, beta=0.5, alpha=2),
         (f32(4), f32(2, 3), f32(3, 4))),
    Case("addmm_beta0_nan", lambda m, c, a, b: m.addmm(c, a, b, beta=0),
         (np.full((2, 2), np.nan, np.float32), f32(2, 3), f32(3, 2))),
    Case("addmm_method", lambda m, c, a, b: c.addmm(a, b, alpha=-1), (f32(1, 1), f32(1, 2), f32(2, 1))),
    Case("addmm_", lambda m, c, a, b: (c * 1).addmm_(a, b), (f32(2, 2), f32(2, 3), f32(3, 2))),
    Case("addmm_int", lambda m, c, a, b: m.addmm(c, a, b, beta=2, alpha=3),
         (np.ones((2, 2), np.int64), I64, I64.T.copy())),
    Case("addmv", lambda m, c, a, b: m.addmv(c, a, b, beta=2), (f32(2), f32(2, 3), f32(3))),
    Case("addr", lambda m, c, a, b: m.addr(c, a, b, alpha=0.5), (f32(2, 3), f32(2), f32(3))),
    Case("baddbmm", lambda m, c, a, b: m.baddbmm(c, a, b), (f32(2, 3, 4), f32(2, 3, 5), f32(2, 5, 4))),
    Case("baddbmm_scaled", lambda m, c, a, b: c.baddbmm(a, b, beta=-1, alpha=0.5),
         (f32(3, 1), f32(2, 3, 5), f32(2, 5, 4))),
    Case("baddbmm_", lambda m, c, a, b: (c + 0).baddbmm_(a, b), (f32(2, 2, 2), f32(2, 2, 3), f32(2, 3, 2))),
    Case("addbmm", lambda m, c, a, b: m.addbmm(c, a, b), (f32(3, 4), f32(2, 3, 5), f32(2, 5, 4))),
    Case("kron", lambda m, a, b: m.kron(a, b), (f32(2, 3), f32(3, 2))),
    Case("kron_ndim", lambda m, a, b: m.kron(a, b), (f32(2), f32(2, 3))),
    Case("kron_int", lambda m, a, b: a.kron(b), (I64, np.eye(2, dtype=np.int64))),
    Case("cross", lambda m, a, b: m.cross(a, b, dim=1), (f32(4, 3), f32(4, 3))),
    Case("cross_default_dim", lambda m, a, b: m.cross(a, b), (f32(3, 2), f32(3, 2))),
    Case("cross_method", lambda m, a, b: a.cross(b, -1), (f64(2, 3), f64(2, 3))),
    Case("linalg_cross_bcast", lambda m, a, b: m.linalg.cross(a, b), (f32(4, 3), f32(1, 3))),
    Case("chain_matmul", lambda m, a, b, c: m.linalg.multi_dot([a, b, c]),
         (f32(2, 3), f32(3, 4), f32(4))),
    Case("vecdot", lambda m, a, b: m.linalg.vecdot(a, b), (f32(2, 3), f32(3))),
    # inverse, solve, det
    Case("inv", lambda m, a: m.linalg.inv(a), (wellcond(3, 3),)),
    Case("inv_batched", lambda m, a: m.linalg.inv(a), (wellcond(2, 3, 3, dtype=np.float32),),
         atol=1e-4, rtol=1e-4),
    Case("inverse", lambda m, a: m.inverse(a), (wellcond(2, 2),)),
    Case("inverse_method", lambda m, a: a.inverse(), (wellcond(4, 4),)),
    Case("inv_empty", lambda m, a: m.linalg.inv(a), (np.zeros((0, 0)),)),
    Case("solve", lambda m, a, b: m.linalg.solve(a, b), (wellcond(3, 3), f64(3, 2))),
    Case("solve_vec", lambda m, a, b: m.linalg.solve(a, b), (wellcond(3, 3), f64(3))),
    Case("solve_batched_vec", lambda m, a, b: m.linalg.solve(a, b), (wellcond(2, 3, 3), f64(2, 3))),
    Case("solve_bcast", lambda m, a, b: m.linalg.solve(a, b), (wellcond(3, 3), f64(2, 3, 4))),
    Case("solve_right", lambda m, a, b: m.linalg.solve(a, b, left=False), (wellcond(3, 3), f64(2, 3))),
    Case("det", lambda m, a: m.linalg.det(a), (wellcond(3, 3),)),
    Case("det_batched", lambda m, a: m.det(a), (wellcond(2, 4, 4),)),
    Case("det_method", lambda m, a: a.det(), (f64(2, 2),)),
    Case("det_f32", lambda m, a: m.linalg.det(a), (wellcond(3, 3, dtype=np.float32),),
         atol=1e-4, rtol=1e-4),
    Case("det_singular", lambda m, a: m.linalg.det(a), (np.ones((3, 3)),), grad=False),
    Case("slogdet", lambda m, a: m.linalg.slogdet(a), (f64(3, 3),)),
    Case("slogdet_batched", lambda m, a: m.slogdet(a), (f64(2, 3, 3),)),
    Case("logdet", lambda m, a: m.logdet(spd(m, a)), (f64(3, 3),)),
    Case("logdet_negative", lambda m, a: m.logdet(a), (-np.eye(3),), grad=False),
    Case("matrix_power", lambda m, a: m.linalg.matrix_power(a, 3), (f64(3, 3),)),
    Case("matrix_power_0", lambda m, a: m.matrix_power(a, 0), (f64(2, 3, 3),)),
    Case("matrix_power_neg", lambda m, a: a.matrix_power(-2), (wellcond(3, 3),)),
    Case("matrix_power_int", lambda m, a: m.linalg.matrix_power(a, 2), (np.arange(4).reshape(2, 2),)),
    # decompositions
    Case("cholesky", lambda m, a: m.linalg.cholesky(spd(m, a)), (f64(3, 3),)),
    Case("cholesky_upper", lambda m, a: m.linalg.cholesky(spd(m, a), upper=True), (f64(2, 3, 3),)),
    Case("cholesky_legacy", lambda m, a: m.cholesky(spd(m, a)), (f64(3, 3),)),
    Case("qr", lambda m, a: m.linalg.qr(a), (f64(4, 3),)),
    Case("qr_wide", lambda m, a: m.linalg.qr(a), (f64(2, 3),), grad=False),
    Case("qr_complete", lambda m, a: m.linalg.qr(a, mode="complete"), (f64(4, 2),), grad=False),
    Case("qr_r", lambda m, a: m.linalg.qr(a, mode="r"), (f64(4, 3),), grad=False),
    Case("qr_batched", lambda m, a: m.linalg.qr(a), (f64(2, 3, 3),)),
    Case("svd_reconstruct", lambda m, a: _usv(m.linalg.svd(a, full_matrices=False)), (f64(4, 3),)),
    Case("svd_sign_invariant", lambda m, a: _svd_inv(m.linalg.svd(a, full_matrices=False)),
         (f64(3, 5),)),
    Case("svd_full_shapes", lambda m, a: tuple(t.shape for t in m.linalg.svd(a)), (f64(4, 2),)),
    Case("svd_S_full", lambda m, a: m.linalg.svd(a)[1], (f64(2, 4, 3),), grad=False),
    # torch ignores the gradient of the completing columns of a full SVD; so does torchlike
    Case("svd_full_grad", lambda m, a: _svd_full_inv(m.linalg.svd(a)), (f64(4, 2),)),
    Case("svd_full_grad_wide", lambda m, a: _svd_full_inv(m.linalg.svd(a)), (f64(2, 3),)),
    Case("svd_legacy", lambda m, a: _usv_legacy(m.svd(a)), (f64(4, 3),)),
    Case("svdvals", lambda m, a: m.linalg.svdvals(a), (f64(3, 4),)),
    Case("svdvals_f32", lambda m, a: m.linalg.svdvals(a), (f32(2, 3, 3),), atol=1e-4, rtol=1e-4),
    Case("eigh_values", lambda m, a: m.linalg.eigh(spd(m, a))[0], (f64(3, 3),)),
    Case("eigh_vectors_sq", lambda m, a: m.linalg.eigh(spd(m, a))[1] ** 2, (f64(3, 3),)),
    Case("eigh_upper", lambda m, a: m.linalg.eigh(spd(m, a), UPLO="U").eigenvalues, (f64(2, 3, 3),)),
    Case("eigh_uses_lower", lambda m, a: m.linalg.eigvalsh(a), (f64(3, 3),)),
    Case("eigh_uses_upper", lambda m, a: m.linalg.eigvalsh(a, UPLO="U"), (f64(3, 3),)),
    Case("eigvalsh", lambda m, a: m.linalg.eigvalsh(spd(m, a)), (f64(4, 4),)),
    Case("pinv", lambda m, a: m.linalg.pinv(a), (f64(4, 3),)),
    Case("pinv_wide", lambda m, a: m.linalg.pinv(a), (f64(2, 3, 5),)),
    Case("pinv_rank_deficient", lambda m, a: m.linalg.pinv(a), (np.ones((3, 2)),), grad=False),
    Case("pinv_hermitian", lambda m, a: m.linalg.pinv(spd(m, a), hermitian=True), (f64(3, 3),)),
    Case("pinverse", lambda m, a: m.pinverse(a), (f64(3, 2),)),
    Case("lstsq", lambda m, a, b: m.linalg.lstsq(a, b), (f64(5, 3), f64(5, 2))),
    Case("lstsq_vec", lambda m, a, b: m.linalg.lstsq(a, b).solution, (f64(5, 3), f64(5))),
    Case("lstsq_gelsd", lambda m, a, b: m.linalg.lstsq(a, b, driver="gelsd"), (f64(5, 3), f64(5, 2))),
    Case("lstsq_gels", lambda m, a, b: m.linalg.lstsq(a, b, driver="gels"), (f64(5, 3), f64(5, 2))),
    Case("lstsq_square", lambda m, a, b: m.linalg.lstsq(a, b)[0], (wellcond(3, 3), f64(3, 2))),
    Case("lstsq_batched", lambda m, a, b: m.linalg.lstsq(a, b).solution, (f64(2, 4, 3), f64(2, 4, 1))),
    Case("lstsq_f32", lambda m, a, b: m.linalg.lstsq(a, b).solution, (f32(6, 2), f32(6, 3)),
         atol=1e-4, rtol=1e-4),
    # norms
    Case("vector_norm", lambda m, a: m.linalg.vector_norm(a), (f32(3, 4),)),
    Case("vector_norm_dim", lambda m, a: m.linalg.vector_norm(a, dim=-1, keepdim=True), (f32(3, 4),)),
    Case("vector_norm_dims", lambda m, a: m.linalg.vector_norm(a, 3, dim=(0, 2)), (f32(2, 3, 4),)),
    Case("vector_norm_ord1", lambda m, a: m.linalg.vector_norm(a, 1), (TIES,)),
    Case("vector_norm_ord0", lambda m, a: m.linalg.vector_norm(a, 0), (TIES,)),
    Case("vector_norm_inf_ties", lambda m, a: m.linalg.vector_norm(a, float("inf")), (TIES,)),
    Case("vector_norm_ninf", lambda m, a: m.linalg.vector_norm(a, -float("inf")), (f32(5),)),
    Case("vector_norm_half", lambda m, a: m.linalg.vector_norm(a, 0.5), (f32(5),)),
    Case("vector_norm_at_zero", lambda m, a: m.linalg.vector_norm(a), (ZERO,)),
    Case("vector_norm_p3_at_zero", lambda m, a: m.linalg.vector_norm(a, 3), (ZERO,)),
    Case("vector_norm_inf_at_zero", lambda m, a: m.linalg.vector_norm(a, float("inf")), (ZERO,)),
    Case("vector_norm_dtype", lambda m, a: m.linalg.vector_norm(a, dtype=m.float64), (f32(3),)),
    Case("vector_norm_0dim", lambda m, a: m.linalg.vector_norm(a), (f32(),)),
    Case("vector_norm_empty", lambda m, a: m.linalg.vector_norm(a), (f32(0, 3),)),
    Case("vector_norm_f64", lambda m, a: m.linalg.vector_norm(a, 2, 0), (f64(3, 2),)),
    # torch.norm with a string p: 'fro' over at most two dims is the vector 2-norm, 'nuc' (or
    # 'fro' over more dims) linalg.matrix_norm
    Case("norm_nuc", lambda m, a: m.norm(a, p="nuc"), (f64(3, 4),)),
    Case("norm_nuc_dims", lambda m, a: m.norm(a, p="nuc", dim=(0, 2), keepdim=True),
         (f64(3, 2, 4),)),
    Case("norm_fro_dims", lambda m, a: a.norm(p="fro", dim=(0, 2)), (f32(3, 2, 4),)),
    Case("norm_p1_dim_keepdim_none", lambda m, a: m.norm(a, 1, None, True), (TIES,)),
    Case("matrix_norm_fro", lambda m, a: m.linalg.matrix_norm(a), (f32(2, 3, 4),)),
    Case("matrix_norm_nuc", lambda m, a: m.linalg.matrix_norm(a, "nuc"), (f64(3, 4),)),
    Case("matrix_norm_2", lambda m, a: m.linalg.matrix_norm(a, 2), (f64(3, 4),)),
    Case("matrix_norm_m2", lambda m, a: m.linalg.matrix_norm(a, -2), (f64(2, 3, 3),)),
    Case("matrix_norm_1", lambda m, a: m.linalg.matrix_norm(a, 1), (f64(3, 4),)),
    Case("matrix_norm_m1", lambda m, a: m.linalg.matrix_norm(a, -1, keepdim=True), (f64(3, 4),)),
    Case("matrix_norm_inf", lambda m, a: m.linalg.matrix_norm(a, float("inf"), dim=(0, 2)),
         (f64(3, 2, 4),)),
    Case("matrix_norm_ninf", lambda m, a: m.linalg.matrix_norm(a, -float("inf")), (f64(3, 4),)),
    Case("norm_default", lambda m, a: m.linalg.norm(a), (f32(2, 3, 4),)),
    Case("norm_vec_ord", lambda m, a: m.linalg.norm(a, 3), (f32(5),)),
    Case("norm_mat_ord", lambda m, a: m.linalg.norm(a, "nuc"), (f64(3, 3),)),
    Case("norm_mat_inf", lambda m, a: m.linalg.norm(a, float("inf")), (f64(3, 3),)),
    Case("norm_dim_int", lambda m, a: m.linalg.norm(a, dim=1), (f32(3, 4),)),
    Case("norm_dim_pair", lambda m, a: m.linalg.norm(a, 1, dim=(0, 1), keepdim=True), (f64(3, 4),)),
    Case("norm_at_zero", lambda m, a: m.linalg.norm(a), (np.zeros((2, 2), np.float32),)),
]


# more linear algebra (torchlike/_ops/factorizations.py)
TRI = np.triu(wellcond(3, 3))
CASES += [
    Case("trace", lambda m, a: m.trace(a), (f32(3, 4),)),
    Case("trace_int", lambda m, a: a.trace(), (np.arange(9, dtype=np.int32).reshape(3, 3),)),
    Case("inner", lambda m, a, b: m.inner(a, b), (f32(2, 3), f32(4, 3))),
    Case("inner_1d", lambda m, a, b: m.inner(a, b), (f32(3), f32(3))),
    Case("inner_scalar", lambda m, a, b: m.inner(a, b), (f32(2, 3), f32())),
    Case("dist", lambda m, a, b: m.dist(a, b), (f32(3, 2), f32(2))),
    Case("dist_p1", lambda m, a, b: a.dist(b, 1), (f32(4), f32(4))),
    Case("dist_same", lambda m, a: m.dist(a, a * 1), (f32(3),)),
    Case("cdist", lambda m, a, b: m.cdist(a, b), (f64(4, 3), f64(5, 3))),
    Case("cdist_p1", lambda m, a, b: m.cdist(a, b, p=1), (f64(2, 4, 3), f64(2, 5, 3))),
    Case("cdist_inf", lambda m, a, b: m.cdist(a, b, p=float("inf")), (f64(3, 2), f64(2, 2))),
    Case("cdist_zero_distance", lambda m, a: m.cdist(a, a), (f64(3, 2),)),
    Case("matrix_exp", lambda m, a: m.linalg.matrix_exp(a), (f64(3, 3) * 0.5,)),
    Case("matrix_exp_top", lambda m, a: m.matrix_exp(a), (f64(2, 2, 2) * 0.5,)),
    Case("cholesky_solve", lambda m, a, b: m.cholesky_solve(b, m.linalg.cholesky(spd(m, a))),
         (f64(3, 3), f64(3, 2))),
    Case("cholesky_solve_upper", lambda m, a, b: m.cholesky_solve(
        b, m.linalg.cholesky(spd(m, a), upper=True), upper=True), (f64(3, 3), f64(3, 2))),
    Case("cholesky_inverse", lambda m, a: m.cholesky_inverse(m.linalg.cholesky(spd(m, a))),
         (f64(3, 3),)),
    Case("solve_triangular", lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True),
         (TRI, f64(3, 2))),
    Case("solve_triangular_lower", lambda m, a, b: m.linalg.solve_triangular(a, b, upper=False),
         (wellcond(2, 3, 3), f64(2, 3, 1))),
    Case("solve_triangular_right", lambda m, a, b: m.linalg.solve_triangular(
        a, b, upper=True, left=False), (TRI, f64(2, 3))),
    Case("solve_triangular_unit", lambda m, a, b: m.linalg.solve_triangular(
        a, b, upper=False, unitriangular=True), (f64(3, 3), f64(3, 2))),
    Case("triangular_solve", lambda m, b, a: m.triangular_solve(b, a), (f64(3, 2), TRI)),
    Case("triangular_solve_T", lambda m, b, a: m.triangular_solve(b, a, upper=False,
                                                                   transpose=True),
         (f64(3, 2), np.tril(wellcond(3, 3)))),
    Case("lu_factor", lambda m, a: m.linalg.lu_factor(a), (f64(4, 4),)),
    Case("lu_factor_batched", lambda m, a: m.linalg.lu_factor(a), (f64(2, 3, 3),)),
    Case("lu", lambda m, a: m.linalg.lu(a), (f64(4, 4),)),
    Case("lu_rect", lambda m, a: m.linalg.lu(a), (f64(4, 2),)),
    Case("lu_wide", lambda m, a: m.linalg.lu(a), (f64(2, 3),), grad=False),
    Case("lu_unpack", lambda m, a: m.lu_unpack(*m.linalg.lu_factor(a)), (f64(4, 4),)),
    Case("lu_unpack_batched", lambda m, a: m.lu_unpack(*m.linalg.lu_factor(a)), (f64(2, 3, 3),)),
    Case("lu_solve", lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b),
         (wellcond(3, 3), f64(3, 2))),
    Case("lu_solve_adjoint", lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b,
                                                               adjoint=True),
         (wellcond(3, 3), f64(3, 2))),
    Case("lu_solve_right", lambda m, a, b: m.linalg.lu_solve(*m.linalg.lu_factor(a), b,
                                                             left=False),
         (wellcond(3, 3), f64(2, 3))),
    Case("lu_solve_right_adjoint", lambda m, a, b: m.linalg.lu_solve(
        *m.linalg.lu_factor(a), b, left=False, adjoint=True), (wellcond(3, 3), f64(2, 3))),
    Case("matrix_rank", lambda m, a: m.linalg.matrix_rank(a), (f64(3, 4),)),
    Case("matrix_rank_deficient", lambda m, a: m.linalg.matrix_rank(a), (np.ones((3, 3)),)),
    Case("matrix_rank_tol", lambda m, a: m.linalg.matrix_rank(a, tol=0.5),
         (np.diag([1.0, 0.4, 2.0]),)),
    Case("matrix_rank_atol", lambda m, a: m.linalg.matrix_rank(a, atol=0.5, rtol=0.0),
         (np.diag([1.0, 0.4, 2.0]),)),
    Case("matrix_rank_batched", lambda m, a: m.linalg.matrix_rank(a), (f32(2, 3, 3),)),
    Case("cond", lambda m, a: m.linalg.cond(a), (wellcond(3, 3),)),
    # torch's own backward of cond(A, 'fro' / inf) fails (an in-place write in its formula)
    Case("cond_fro", lambda m, a: m.linalg.cond(a, "fro"), (wellcond(3, 3),), grad=False),
    Case("cond_inf", lambda m, a: m.linalg.cond(a, float("inf")), (wellcond(3, 3),), grad=False),
    Case("cond_rect", lambda m, a: m.linalg.cond(a), (f64(4, 2),)),
    Case("vander", lambda m, a: m.linalg.vander(a), (f64(4),)),
    # torch's own backward of torch.vander fails (an in-place write in its formula)
    Case("torch_vander", lambda m, a: m.vander(a), (f64(4),), grad=False),
    Case("torch_vander_inc", lambda m, a: m.vander(a, 2, increasing=True), (f64(3),),
         grad=False),
    Case("torch_vander_int", lambda m, a: m.vander(a), (np.arange(1, 4),)),
    Case("legacy_lu", lambda m, a: m.lu(a), (f64(3, 3),)),
    Case("legacy_lu_infos", lambda m, a: m.lu(a, get_infos=True), (f64(2, 3, 3),)),
    Case("legacy_lu_solve", lambda m, a, b: m.lu_solve(b, *m.lu(a)), (wellcond(3, 3), f64(3, 2))),
    Case("vander_N", lambda m, a: m.linalg.vander(a, N=2), (f64(2, 3),)),
    Case("vander_int", lambda m, a: m.linalg.vander(a), (np.arange(1, 4),)),
    Case("eigvals", lambda m, a: m.linalg.eigvals(a), (np.diag([3.0, 1.0, 2.0]) + np.triu(
        np.ones((3, 3)), 1),), grad=False),
    Case("linalg_diagonal", lambda m, a: m.linalg.diagonal(a, offset=1), (f32(2, 3, 3),)),
    # complex inputs (forward values and dtypes)
    Case("complex_einsum", lambda m, a, v: m.einsum("ij,j->i", a, v), (C33, C3), grad=False),
    Case("complex_vdot", lambda m, a, v: m.vdot(v, v * 2), (C33, C3), grad=False),
    Case("complex_inv", lambda m, a: m.linalg.inv(a + 3 * m.eye(3)), (C33,), grad=False),
    Case("complex_det", lambda m, a: m.linalg.det(a), (C33,), grad=False),
    Case("complex_svdvals", lambda m, a: m.linalg.svdvals(a), (C33,), grad=False),
    Case("complex_vector_norm", lambda m, v: m.linalg.vector_norm(v), (C3,), grad=False),
    Case("complex_matrix_norm", lambda m, a: m.linalg.matrix_norm(a), (C33,), grad=False),
    Case("complex_solve", lambda m, a, v: m.linalg.solve(a + 3 * m.eye(3), v), (C33, C3),
         grad=False),
    Case("complex_eigvalsh", lambda m, a: m.linalg.eigvalsh(a @ a.mH), (C33,), grad=False),
    Case("complex_outer_mH", lambda m, v: m.outer(v, v).mH + 0, (C3,), grad=False),
    # empty batches and empty matrices
    Case("empty_batch_det", lambda m, a: m.linalg.det(a), (f64(0, 3, 3),)),
    Case("empty_batch_inv", lambda m, a: m.linalg.inv(a), (f64(0, 2, 2),)),
    Case("empty_batch_solve", lambda m, a, b: m.linalg.solve(a, b), (f64(0, 2, 2), f64(0, 2))),
    Case("empty_batch_svdvals", lambda m, a: m.linalg.svdvals(a), (f64(0, 3, 2),)),
    Case("empty_batch_eigh", lambda m, a: m.linalg.eigh(a), (f64(0, 2, 2),)),
    Case("empty_batch_cholesky", lambda m, a: m.linalg.cholesky(a), (f64(0, 2, 2),)),
    Case("empty_batch_qr", lambda m, a: m.linalg.qr(a), (f64(0, 3, 2),)),
    Case("empty_batch_matrix_norm", lambda m, a: m.linalg.matrix_norm(a), (f64(0, 3, 2),)),
    Case("empty_matrix_det", lambda m, a: m.linalg.det(a), (np.zeros((0, 0)),)),
    Case("empty_matrix_slogdet", lambda m, a: m.linalg.slogdet(a), (np.zeros((2, 0, 0)),)),
    Case("empty_matmul_addmm", lambda m, c, a, b: m.addmm(c, a, b), (f32(2, 3), f32(2, 0), f32(0, 3))),
    Case("empty_einsum", lambda m, a, b: m.einsum("ij,jk->ik", a, b), (f32(2, 0), f32(0, 3))),
    Case("empty_outer", lambda m, a, b: m.outer(a, b), (f32(0), f32(0))),
    Case("empty_kron", lambda m, a, b: m.kron(a, b), (f32(0, 2), f32(2, 2))),
    Case("eig", lambda m, a: m.linalg.eig(a), (np.array([[2.0, 1, 0], [0, 3, 1], [1, 0, 1]]),),
         grad=False),
    Case("eig_f32", lambda m, a: m.linalg.eig(a), (np.array([[2.0, 1], [-1, 2]], np.float32),),
         grad=False),
    Case("solve_ex", lambda m, a, b: m.linalg.solve_ex(a, b), (wellcond(3, 3), f64(3))),
    Case("lu_factor_ex", lambda m, a: m.linalg.lu_factor_ex(a), (f64(2, 3, 3),)),
    Case("tensorinv", lambda m, a: m.linalg.tensorinv(a, ind=2),
         (wellcond(6, 6).reshape(2, 3, 6),)),
    Case("tensorinv_ind1", lambda m, a: m.linalg.tensorinv(a, ind=1), (wellcond(4, 4),)),
    Case("tensorsolve", lambda m, a, b: m.linalg.tensorsolve(a, b),
         (wellcond(6, 6).reshape(2, 3, 6), f64(2, 3))),
    Case("tensorsolve_dims", lambda m, a, b: m.linalg.tensorsolve(a, b, dims=(0,)),
         (wellcond(6, 6).reshape(6, 2, 3), f64(2, 3))),
]
BAD_EXTRA = [
    ("trace_1d", lambda m, a: m.trace(a), (f32(3),)),
    ("inner_mismatch", lambda m, a, b: m.inner(a, b), (f32(2, 3), f32(2))),
    ("cdist_cols", lambda m, a, b: m.cdist(a, b), (f32(2, 3), f32(4, 2))),
    ("cdist_1d", lambda m, a, b: m.cdist(a, b), (f32(3), f32(3))),
    ("matrix_exp_rect", lambda m, a: m.linalg.matrix_exp(a), (f32(2, 3),)),
    ("solve_triangular_1d_B", lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True),
     (f32(3, 3), f32(3))),
    ("solve_triangular_shape", lambda m, a, b: m.linalg.solve_triangular(a, b, upper=True),
     (f32(3, 3), f32(2, 2))),
    ("cholesky_solve_dtype", lambda m, a, b: m.cholesky_solve(a, b), (f32(2, 2), f64(2, 2))),
    ("lu_factor_int", lambda m, a: m.linalg.lu_factor(a), (np.eye(2, dtype=np.int64),)),
    ("matrix_rank_1d", lambda m, a: m.linalg.matrix_rank(a), (f32(3),)),
    ("tensorinv_bad", lambda m, a: m.linalg.tensorinv(a, ind=2), (f32(4, 6, 8, 4),)),
    ("eig_rect", lambda m, a: m.linalg.eig(a), (f32(2, 3),)),
    ("cond_inf_rect", lambda m, a: m.linalg.cond(a, float("inf")), (f32(3, 2),)),
]


def _usv(r):
    U, S, Vh = r
    return (U * S.unsqueeze(-2)) @ Vh


def _usv_legacy(r):
    U, S, V = r
    return (U * S.unsqueeze(-2)) @ V.mT


def _svd_full_inv(r):
    U, S, Vh = r
    k = S.shape[-1]
    return S, U[..., :k] ** 2, Vh[..., :k, :] ** 2


def _svd_inv(r):
    U, S, Vh = r
    return S, U * U, Vh * Vh


@pytest.mark.parametrize("case", CASES, ids=str)
def test_linalg_against_torch(case):
    check(case)


@pytest.mark.parametrize("case", [c for c in CASES if c.grad][::4], ids=str)
def test_linalg_autograd_grad(case):
    check(case, autograd_grad=True)


def test_eig_has_no_gradient():
    """Pinned difference (DIFFERENCES.md): linalg.eig's results do not require grad
    (linalg.eigvals has torch's gradient: tests/test_heldout_probabilistic_programs.py)."""
    import torchlike
    a = torchlike.tensor([[2.0, 1.0], [0.0, 3.0]], requires_grad=True)
    w, v = torchlike.linalg.eig(a)
    assert not w.requires_grad and not v.requires_grad


def test_slogdet_fields():
    import torchlike
    r = torchlike.linalg.slogdet(torchlike.eye(2) * 2)
    assert r.sign.item() == 1.0 and abs(r.logabsdet.item() - np.log(4)) < 1e-6


LINALG_ERRORS = [
    ("inv_singular", lambda m, a: m.linalg.inv(a), (np.zeros((2, 2)),)),
    ("inv_singular_batched", lambda m, a: m.linalg.inv(a), (np.stack([np.eye(2), np.zeros((2, 2))]),)),
    ("solve_singular", lambda m, a, b: m.linalg.solve(a, b), (np.ones((2, 2)), f64(2))),
    ("cholesky_not_pd", lambda m, a: m.linalg.cholesky(a), (-np.eye(2),)),
    ("cholesky_not_pd_order2", lambda m, a: m.linalg.cholesky(a), (np.diag([1.0, -1.0]),)),
    ("matrix_power_neg_singular", lambda m, a: m.linalg.matrix_power(a, -1), (np.zeros((2, 2)),)),
]


@pytest.mark.parametrize("name,fn,inputs", LINALG_ERRORS, ids=[e[0] for e in LINALG_ERRORS])
def test_linalg_error(name, fn, inputs):
    """torch raises torch.linalg.LinAlgError (a RuntimeError); so does torchlike, with its own
    class of that name: check_raises compares RuntimeError, the name is checked here."""
    import torch
    import torchlike
    with pytest.raises(torch.linalg.LinAlgError) as te:
        fn(torch, *[torch.tensor(x) for x in inputs])
    with pytest.raises(torchlike.linalg.LinAlgError) as le:
        fn(torchlike, *[torchlike.tensor(x) for x in inputs])
    lerr, terr = le.value, te.value
    assert isinstance(lerr, RuntimeError) and isinstance(terr, RuntimeError)
    assert "LinAlgError" in type(terr).__name__
    assert str(lerr).split(":")[0].replace("torch.", "") == str(terr).split(":")[0].replace(
        "torch.", "")


BAD = [
    ("vdot_2d", lambda m, a, b: m.vdot(a, b), (f32(2, 2), f32(2, 2))),
    ("vdot_dtype", lambda m, a, b: m.vdot(a, b), (f32(3), f64(3))),
    ("vdot_size", lambda m, a, b: m.vdot(a, b), (f32(3), f32(2))),
    ("outer_2d", lambda m, a, b: m.outer(a, b), (f32(3, 1), f32(3))),
    ("einsum_dtype", lambda m, a, b: m.einsum("ij,jk", a, b), (f32(2, 2), f64(2, 2))),
    ("einsum_size", lambda m, a, b: m.einsum("ij,jk", a, b), (f32(2, 3), f32(2, 2))),
    ("einsum_subscripts", lambda m, a: m.einsum("ijk", a), (f32(2, 3),)),
    ("tensordot_mismatch", lambda m, a, b: m.tensordot(a, b, ([0], [0])), (f32(2, 3), f32(4, 2))),
    ("addmm_shape", lambda m, c, a, b: m.addmm(c, a, b), (f32(2, 2), f32(2, 3), f32(3, 3))),
    ("addmm_inner", lambda m, c, a, b: m.addmm(c, a, b), (f32(2, 2), f32(2, 3), f32(2, 2))),
    ("addmm_dtype", lambda m, c, a, b: m.addmm(c, a, b), (f32(2, 2), f32(2, 3), f64(3, 2))),
    ("baddbmm_batch", lambda m, c, a, b: m.baddbmm(c, a, b), (f32(2, 2, 2), f32(2, 2, 3), f32(3, 3, 2))),
    ("baddbmm_2d", lambda m, c, a, b: m.baddbmm(c, a, b), (f32(2, 2), f32(2, 3), f32(3, 2))),
    ("cross_no_3", lambda m, a, b: m.cross(a, b), (f32(2, 4), f32(2, 4))),
    ("cross_dim_not_3", lambda m, a, b: m.linalg.cross(a, b), (f32(2, 4), f32(2, 4))),
    ("inv_not_square", lambda m, a: m.linalg.inv(a), (f32(2, 3),)),
    ("inv_int", lambda m, a: m.linalg.inv(a), (np.eye(2, dtype=np.int64),)),
    ("inv_1d", lambda m, a: m.linalg.inv(a), (f32(3),)),
    ("solve_shape", lambda m, a, b: m.linalg.solve(a, b), (np.eye(2), f64(3))),
    ("det_not_square", lambda m, a: m.linalg.det(a), (f32(3, 2),)),
    ("eigh_not_square", lambda m, a: m.linalg.eigh(a), (f32(3, 2),)),
    ("eigh_uplo", lambda m, a: m.linalg.eigh(a, UPLO="X"), (f32(2, 2),)),
    ("matrix_power_not_square", lambda m, a: m.linalg.matrix_power(a, 2), (f32(3, 2),)),
    ("qr_mode", lambda m, a: m.linalg.qr(a, mode="bad"), (f32(3, 2),)),
    ("vector_norm_int", lambda m, a: m.linalg.vector_norm(a), (np.arange(3),)),
    ("vector_norm_bad_dim", lambda m, a: m.linalg.vector_norm(a, dim=2), (f32(3, 2),)),
    ("vector_norm_inf_empty", lambda m, a: m.linalg.vector_norm(a, float("inf")), (f32(0),)),
    ("matrix_norm_1d", lambda m, a: m.linalg.matrix_norm(a), (f32(3),)),
    ("matrix_norm_ord", lambda m, a: m.linalg.matrix_norm(a, 3), (f32(3, 3),)),
    ("norm_ord_3d", lambda m, a: m.linalg.norm(a, 2), (f32(2, 2, 2),)),
    ("norm_nuc_3d", lambda m, a: m.norm(a, p="nuc"), (f32(2, 2, 2),)),
    ("norm_nuc_int_dim", lambda m, a: m.norm(a, p="nuc", dim=1), (f32(2, 2, 2),)),
    ("norm_fro_3_dims", lambda m, a: m.norm(a, p="fro", dim=(0, 1, 2)), (f32(2, 2, 2),)),
    ("matrix_norm_one_dim", lambda m, a: m.linalg.matrix_norm(a, "fro", (0,)), (f32(2, 2),)),
    ("matrix_norm_nuc_half", lambda m, a: m.linalg.matrix_norm(a.half(), "nuc"), (f32(2, 2),)),
    ("matrix_norm_2_bf16", lambda m, a: m.linalg.matrix_norm(a.bfloat16(), 2), (f32(2, 2),)),
    ("norm_nuc_half", lambda m, a: m.norm(a.half(), p="nuc"), (f32(2, 2),)),
    ("lstsq_rows", lambda m, a, b: m.linalg.lstsq(a, b), (f64(3, 2), f64(4, 1))),
    ("lstsq_driver", lambda m, a, b: m.linalg.lstsq(a, b, driver="nope"), (f64(3, 2), f64(3, 1))),
]


BAD += BAD_EXTRA


@pytest.mark.parametrize("name,fn,inputs", BAD, ids=[b[0] for b in BAD])
def test_linalg_bad_input(name, fn, inputs):
    check_raises(fn, *inputs)


def test_table_size():
    assert len(CASES) >= 170


_double_backward = check_double_backward  # tests/oracle.py


DOUBLE = {
    "vector_norm": lambda m, x: m.linalg.vector_norm(x, dim=1),
    "vector_norm_p3": lambda m, x: m.linalg.vector_norm(x, 3),
    "matrix_norm_nuc": lambda m, x: m.linalg.matrix_norm(x, "nuc"),
    "det": lambda m, x: m.linalg.det(x[:, :3] + 3 * m.eye(3, dtype=x.dtype)),
    "inv": lambda m, x: m.linalg.inv(x[:, :3] + 3 * m.eye(3, dtype=x.dtype)),
    "solve": lambda m, x: m.linalg.solve(x[:, :3] + 3 * m.eye(3, dtype=x.dtype), x[:, 3]),
    "einsum": lambda m, x: m.einsum("ij,ij->i", x, x),
    "addmm": lambda m, x: m.addmm(x[:, :2], x, x.mT[:, :2] * 2),
    "outer_kron": lambda m, x: m.kron(m.outer(x[0], x[1]), x[2:, :2]),
    "cholesky": lambda m, x: m.linalg.cholesky(x @ x.mT + 4 * m.eye(3, dtype=x.dtype)),
}


@pytest.mark.parametrize("name", sorted(DOUBLE))
def test_double_backward_against_torch(name):
    _double_backward(DOUBLE[name])



def test_bad_input_messages_match_torch():
    """Beyond the exception class: torchlike's message is torch's, word for word."""
    mismatched = []
    for name, fn, inputs in BAD:
        lerr, terr = check_raises(fn, *inputs)
        if str(lerr) != str(terr):
            mismatched.append((name, str(lerr), str(terr)))
    assert not mismatched, mismatched
