"""Linear algebra's errors and its singular / non-finite inputs, side by side with torch (CPU):
the exception's class name and message, or the values, dtypes, shapes and info flags returned.

Each case is ``fn(m)`` run with ``m = torch`` and ``m = torchlike``; inputs are built inside from
nested lists, so both sides see the same numbers."""
import warnings

import numpy as np
import pytest
import torch

import torchlike

NAN, INF = float("nan"), float("inf")
SING = [[1.0, 2.0], [2.0, 4.0]]              # singular: U[2,2] == 0 after one row swap
NPD = [[1.0, 2.0], [2.0, 1.0]]               # symmetric, not positive-definite (order 2)
NANM = [[1.0, NAN], [0.0, 1.0]]              # a NaN above the diagonal
LSING = [[1.0, 0.0], [1.0, 0.0]]             # a Cholesky factor with a zero on its diagonal
EYE = [[1.0, 0.0], [0.0, 1.0]]


def t(m, x, dt="float32"):
    return m.tensor(x, dtype=getattr(m, dt))


def b2(m, a, dt="float32"):
    """A batch of two: the identity, then ``a`` (torch names the failing batch element 1)."""
    return m.stack([t(m, EYE, dt), t(m, a, dt)])


def _qr_args(m, dt, a, tau, other, **dts):
    """ormqr's three arguments of these shapes, filled with ones (dtypes ``dt`` unless named)."""
    return tuple(m.ones(shape, dtype=getattr(m, dts.get(n, dt)))
                 for n, shape in (("a", a), ("tau", tau), ("other", other)))


def _leaves(r):
    if isinstance(r, (tuple, list)):
        return [x for v in r for x in _leaves(v)]
    return [r]


def outcome(fn, m):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = fn(m)
        except Exception as e:                                  # noqa: BLE001
            return ("raise", type(e).__name__, str(e), isinstance(e, RuntimeError),
                    isinstance(e, m.linalg.LinAlgError))
    kind = type(r).__name__ if isinstance(r, tuple) else None
    vals = []
    for v in _leaves(r):
        if hasattr(v, "dtype") and hasattr(v, "shape"):
            vals.append((str(v.dtype).split(".")[-1], tuple(v.shape),
                         np.asarray(v.detach().cpu().numpy() if m is torch else v.numpy())))
        else:
            vals.append(v)
    # (torch's deprecation warnings come once per process: test_deprecated_forms_warn_once)
    return ("value", kind, vals, sorted({str(x.message).split(" (Triggered")[0] for x in w
                                         if "is deprecated" not in str(x.message)}))


def same(fn, rtol=1e-5, atol=1e-6):
    want, got = outcome(fn, torch), outcome(fn, torchlike)
    if want[0] == "raise" or got[0] == "raise":
        assert got == want
        return
    assert got[1] == want[1], "result type"
    assert got[3] == want[3], "warnings"
    assert len(got[2]) == len(want[2])
    for g, w in zip(got[2], want[2]):
        if not isinstance(w, tuple):
            assert g == w
            continue
        assert g[:2] == w[:2], "dtype/shape"
        np.testing.assert_allclose(g[2], w[2], rtol=rtol, atol=atol, equal_nan=True)


L = lambda m: m.linalg      # noqa: E731
DTS = ["float32", "float64"]

# ------------------------------------------------------------------ cases (name, fn(m, dt))

CASES = [
    # LinAlgError's identity
    ("linalg_error_names", lambda m, dt: (m.linalg.LinAlgError.__module__,
                                          m.linalg.LinAlgError.__qualname__,
                                          m.linalg.LinAlgError.__name__,
                                          issubclass(m.linalg.LinAlgError, RuntimeError))),
    # lu_factor / lu_factor_ex / legacy lu
    ("lu_factor_singular", lambda m, dt: L(m).lu_factor(t(m, SING, dt))),
    ("lu_factor_singular_batched", lambda m, dt: L(m).lu_factor(b2(m, SING, dt))),
    ("lu_factor_zero", lambda m, dt: L(m).lu_factor(m.zeros(3, 3, dtype=getattr(m, dt)))),
    ("lu_factor_wide_singular", lambda m, dt: L(m).lu_factor(
        t(m, [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0]], dt))),
    ("lu_factor_tall", lambda m, dt: L(m).lu_factor(t(m, [[1.0, 2.0], [2.0, 4.0], [3.0, 6.5]],
                                                      dt))),
    ("lu_factor_nan", lambda m, dt: L(m).lu_factor(t(m, NANM, dt))),
    ("lu_factor_int", lambda m, dt: L(m).lu_factor(m.eye(2, dtype=m.int64))),
    ("lu_factor_1d", lambda m, dt: L(m).lu_factor(m.ones(2, dtype=getattr(m, dt)))),
    ("lu_factor_no_pivot", lambda m, dt: L(m).lu_factor(t(m, EYE, dt), pivot=False)),
    ("lu_factor_ex_singular", lambda m, dt: L(m).lu_factor_ex(t(m, SING, dt))),
    ("lu_factor_ex_singular_batched", lambda m, dt: L(m).lu_factor_ex(b2(m, SING, dt))),
    ("lu_factor_ex_zero", lambda m, dt: L(m).lu_factor_ex(m.zeros(3, 3, dtype=getattr(m, dt)))),
    ("lu_factor_ex_ok", lambda m, dt: L(m).lu_factor_ex(b2(m, NPD, dt))),
    ("lu_factor_ex_check", lambda m, dt: L(m).lu_factor_ex(t(m, SING, dt), check_errors=True)),
    ("lu_factor_ex_check_batched", lambda m, dt: L(m).lu_factor_ex(b2(m, SING, dt),
                                                                   check_errors=True)),
    ("lu_factor_ex_check_ok", lambda m, dt: L(m).lu_factor_ex(b2(m, NPD, dt),
                                                              check_errors=True)),
    ("lu_factor_ex_int", lambda m, dt: L(m).lu_factor_ex(m.eye(2, dtype=m.int64))),
    ("lu_factor_ex_1d", lambda m, dt: L(m).lu_factor_ex(m.ones(2, dtype=getattr(m, dt)))),
    ("lu_factor_ex_no_pivot", lambda m, dt: L(m).lu_factor_ex(t(m, EYE, dt), pivot=False)),
    ("legacy_lu_infos", lambda m, dt: m.lu(t(m, SING, dt), get_infos=True)),
    ("legacy_lu_infos_batched", lambda m, dt: m.lu(b2(m, SING, dt), get_infos=True)),
    ("legacy_lu_singular", lambda m, dt: m.lu(t(m, SING, dt))),
    ("lu_singular", lambda m, dt: L(m).lu(t(m, SING, dt))),
    ("lu_int", lambda m, dt: L(m).lu(m.eye(2, dtype=m.int64))),
    ("lu_1d", lambda m, dt: L(m).lu(m.ones(2, dtype=getattr(m, dt)))),
    # lu_solve
    ("lu_solve_singular", lambda m, dt: L(m).lu_solve(*L(m).lu_factor_ex(t(m, SING, dt))[:2],
                                                      m.ones(2, 1, dtype=getattr(m, dt)))),
    ("lu_solve_int_pivots", lambda m, dt: L(m).lu_solve(t(m, EYE, dt), m.ones(2, dtype=m.int64),
                                                        m.ones(2, 1, dtype=getattr(m, dt)))),
    ("lu_solve_bad_b", lambda m, dt: L(m).lu_solve(t(m, EYE, dt), m.ones(2, dtype=m.int32),
                                                   m.ones(3, 1, dtype=getattr(m, dt)))),
    ("lu_solve_1d_b", lambda m, dt: L(m).lu_solve(t(m, EYE, dt), m.ones(2, dtype=m.int32),
                                                  m.ones(2, dtype=getattr(m, dt)))),
    ("lu_solve_right_bad_b", lambda m, dt: L(m).lu_solve(t(m, EYE, dt), m.ones(2, dtype=m.int32),
                                                         m.ones(2, 3, dtype=getattr(m, dt)),
                                                         left=False)),
    ("lu_solve_nonsquare", lambda m, dt: L(m).lu_solve(m.ones(2, 3, dtype=getattr(m, dt)),
                                                       m.ones(2, dtype=m.int32),
                                                       m.ones(2, 1, dtype=getattr(m, dt)))),
    # inv / inv_ex / matrix_power
    ("inv_singular", lambda m, dt: L(m).inv(t(m, SING, dt))),
    ("inv_singular_batched", lambda m, dt: L(m).inv(b2(m, SING, dt))),
    ("inv_nan", lambda m, dt: L(m).inv(t(m, NANM, dt))),
    ("inv_int", lambda m, dt: L(m).inv(m.eye(2, dtype=m.int64))),
    ("inv_nonsquare", lambda m, dt: L(m).inv(m.ones(2, 3, dtype=getattr(m, dt)))),
    ("inv_1d", lambda m, dt: L(m).inv(m.ones(3, dtype=getattr(m, dt)))),
    ("inv_ex_singular", lambda m, dt: L(m).inv_ex(t(m, SING, dt))),
    ("inv_ex_singular_batched", lambda m, dt: L(m).inv_ex(b2(m, SING, dt))),
    ("inv_ex_check", lambda m, dt: L(m).inv_ex(t(m, SING, dt), check_errors=True)),
    ("inv_ex_check_batched", lambda m, dt: L(m).inv_ex(b2(m, SING, dt), check_errors=True)),
    ("inv_ex_int", lambda m, dt: L(m).inv_ex(m.eye(2, dtype=m.int64))),
    ("matrix_power_singular", lambda m, dt: L(m).matrix_power(t(m, SING, dt), -1)),
    ("matrix_power_singular_batched", lambda m, dt: L(m).matrix_power(
        m.stack([t(m, EYE, dt), m.zeros(2, 2, dtype=getattr(m, dt))]), -2)),
    ("matrix_power_int_neg", lambda m, dt: L(m).matrix_power(m.eye(2, dtype=m.int64), -1)),
    ("matrix_power_int", lambda m, dt: L(m).matrix_power(m.tensor([[1, 2], [3, 4]]), 2)),
    ("matrix_power_nonsquare", lambda m, dt: L(m).matrix_power(m.ones(2, 3), 2)),
    ("matrix_power_1d", lambda m, dt: L(m).matrix_power(m.ones(2), 2)),
    # solve / solve_ex
    ("solve_singular", lambda m, dt: L(m).solve(t(m, SING, dt), m.ones(2, dtype=getattr(m, dt)))),
    ("solve_singular_batched", lambda m, dt: L(m).solve(b2(m, SING, dt),
                                                        m.ones(2, 2, 1, dtype=getattr(m, dt)))),
    ("solve_singular_left_false", lambda m, dt: L(m).solve(
        t(m, SING, dt), m.ones(1, 2, dtype=getattr(m, dt)), left=False)),
    ("solve_nan", lambda m, dt: L(m).solve(t(m, NANM, dt), m.ones(2, dtype=getattr(m, dt)))),
    ("solve_int", lambda m, dt: L(m).solve(m.eye(2, dtype=m.int64), m.ones(2))),
    ("solve_dtype", lambda m, dt: L(m).solve(t(m, EYE, dt), m.ones(2, dtype=m.float16))),
    ("solve_shape", lambda m, dt: L(m).solve(t(m, EYE, dt), m.ones(3, dtype=getattr(m, dt)))),
    ("solve_ex_singular", lambda m, dt: L(m).solve_ex(t(m, SING, dt),
                                                      m.ones(2, dtype=getattr(m, dt)))),
    ("solve_ex_singular_batched", lambda m, dt: L(m).solve_ex(
        b2(m, SING, dt), m.ones(2, 2, 1, dtype=getattr(m, dt)))),
    ("solve_ex_broadcast_b", lambda m, dt: L(m).solve_ex(
        t(m, EYE, dt), m.ones(3, 2, 1, dtype=getattr(m, dt)))),
    ("solve_ex_left_false", lambda m, dt: L(m).solve_ex(
        t(m, SING, dt), m.ones(1, 2, dtype=getattr(m, dt)), left=False)),
    ("solve_ex_broadcast_a_batch", lambda m, dt: L(m).solve_ex(
        b2(m, SING, dt), m.ones(4, 1, 2, 1, dtype=getattr(m, dt))).info),
    ("solve_broadcast_a_batch", lambda m, dt: L(m).solve(
        b2(m, SING, dt), m.ones(4, 1, 2, 1, dtype=getattr(m, dt)))),
    ("solve_ex_check", lambda m, dt: L(m).solve_ex(t(m, SING, dt),
                                                   m.ones(2, dtype=getattr(m, dt)),
                                                   check_errors=True)),
    ("solve_ex_check_batched", lambda m, dt: L(m).solve_ex(
        b2(m, SING, dt), m.ones(2, 2, 1, dtype=getattr(m, dt)), check_errors=True)),
    ("solve_ex_check_ok", lambda m, dt: L(m).solve_ex(
        b2(m, NPD, dt), m.ones(2, 2, 1, dtype=getattr(m, dt)), check_errors=True)),
    ("solve_ex_nan", lambda m, dt: L(m).solve_ex(t(m, NANM, dt),
                                                 m.ones(2, dtype=getattr(m, dt)))),
    ("solve_ex_int", lambda m, dt: L(m).solve_ex(m.eye(2, dtype=m.int64), m.ones(2))),
    # cholesky / cholesky_ex
    ("cholesky_npd", lambda m, dt: L(m).cholesky(t(m, NPD, dt))),
    ("cholesky_npd_batched", lambda m, dt: L(m).cholesky(b2(m, NPD, dt))),
    ("cholesky_npd_upper", lambda m, dt: L(m).cholesky(t(m, NPD, dt), upper=True)),
    ("cholesky_nan_diag", lambda m, dt: L(m).cholesky(t(m, [[NAN, 0.0], [0.0, 1.0]], dt))),
    ("cholesky_int", lambda m, dt: L(m).cholesky(m.eye(2, dtype=m.int64))),
    ("cholesky_nonsquare", lambda m, dt: L(m).cholesky(m.ones(2, 3, dtype=getattr(m, dt)))),
    ("cholesky_ex_npd_info", lambda m, dt: L(m).cholesky_ex(t(m, NPD, dt)).info),
    ("cholesky_ex_npd_batched_info", lambda m, dt: L(m).cholesky_ex(b2(m, NPD, dt)).info),
    ("cholesky_ex_check", lambda m, dt: L(m).cholesky_ex(t(m, NPD, dt), check_errors=True)),
    ("cholesky_ex_check_batched", lambda m, dt: L(m).cholesky_ex(b2(m, NPD, dt),
                                                                 check_errors=True)),
    ("cholesky_ex_check_ok", lambda m, dt: L(m).cholesky_ex(b2(m, [[2.0, 1.0], [1.0, 2.0]], dt),
                                                            check_errors=True)),
    ("cholesky_ex_int", lambda m, dt: L(m).cholesky_ex(m.eye(2, dtype=m.int64))),
    # cholesky_inverse / cholesky_solve
    ("cholesky_inverse_singular", lambda m, dt: m.cholesky_inverse(t(m, LSING, dt))),
    ("cholesky_inverse_zero", lambda m, dt: m.cholesky_inverse(m.zeros(2, 2,
                                                                       dtype=getattr(m, dt)))),
    ("cholesky_inverse_singular_upper", lambda m, dt: m.cholesky_inverse(
        t(m, [[1.0, 1.0], [0.0, 0.0]], dt), upper=True)),
    ("cholesky_inverse_singular_batched", lambda m, dt: m.cholesky_inverse(b2(m, LSING, dt))),
    ("cholesky_inverse_method", lambda m, dt: t(m, LSING, dt).cholesky_inverse()),
    ("cholesky_inverse_singular_complex", lambda m, dt: m.cholesky_inverse(
        t(m, LSING, dt).to(m.complex64 if dt == "float32" else m.complex128))),
    ("lu_factor_ex_singular_complex", lambda m, dt: L(m).lu_factor_ex(
        t(m, SING, dt).to(m.complex64 if dt == "float32" else m.complex128))),
    ("solve_ex_check_broadcast_b", lambda m, dt: L(m).solve_ex(
        b2(m, SING, dt), m.ones(3, 1, 2, 1, dtype=getattr(m, dt)), check_errors=True)),
    ("cholesky_nan_lower", lambda m, dt: L(m).cholesky(t(m, [[1.0, 0.0], [NAN, 1.0]], dt))),
    ("cholesky_nan_upper", lambda m, dt: L(m).cholesky(t(m, NANM, dt), upper=True)),
    ("cholesky_ex_nan_info", lambda m, dt: L(m).cholesky_ex(b2(m, [[NAN, 0.0], [0.0, 1.0]],
                                                               dt)).info),
    ("eigvals_nonsquare", lambda m, dt: L(m).eigvals(m.ones(2, 3, dtype=getattr(m, dt)))),
    ("cholesky_inverse_ok", lambda m, dt: m.cholesky_inverse(b2(m, [[2.0, 0.0], [1.0, 1.0]], dt))),
    ("cholesky_inverse_int", lambda m, dt: m.cholesky_inverse(m.eye(2, dtype=m.int64))),
    ("cholesky_inverse_1d", lambda m, dt: m.cholesky_inverse(m.ones(2, dtype=getattr(m, dt)))),
    ("cholesky_inverse_nonsquare", lambda m, dt: m.cholesky_inverse(
        m.ones(2, 3, dtype=getattr(m, dt)))),
    ("cholesky_solve_singular", lambda m, dt: m.cholesky_solve(
        m.ones(2, 1, dtype=getattr(m, dt)), t(m, LSING, dt))),
    ("cholesky_solve_int", lambda m, dt: m.cholesky_solve(m.ones(2, 1, dtype=m.int64),
                                                          m.eye(2, dtype=m.int64))),
    ("cholesky_solve_nonsquare", lambda m, dt: m.cholesky_solve(
        m.ones(2, 1, dtype=getattr(m, dt)), m.ones(2, 3, dtype=getattr(m, dt)))),
    ("cholesky_solve_shapes", lambda m, dt: m.cholesky_solve(
        m.ones(3, 1, dtype=getattr(m, dt)), t(m, EYE, dt))),
    # svd family on NaN
    ("svd_nan", lambda m, dt: L(m).svd(t(m, NANM, dt))),
    ("svd_nan_batched", lambda m, dt: L(m).svd(b2(m, NANM, dt))),
    ("svd_nan_reduced", lambda m, dt: L(m).svd(t(m, NANM, dt), full_matrices=False)),
    ("svd_nan_wide", lambda m, dt: L(m).svd(t(m, [[1.0, NAN, 2.0]], dt))),
    ("svdvals_nan", lambda m, dt: L(m).svdvals(t(m, NANM, dt))),
    ("svdvals_nan_batched", lambda m, dt: L(m).svdvals(b2(m, NANM, dt))),
    ("svdvals_nan_complex", lambda m, dt: L(m).svdvals(
        t(m, NANM, dt).to(m.complex64 if dt == "float32" else m.complex128))),
    ("svdvals_int", lambda m, dt: L(m).svdvals(m.eye(2, dtype=m.int64))),
    ("svdvals_empty", lambda m, dt: L(m).svdvals(m.zeros(0, 2, dtype=getattr(m, dt)))),
    ("pinv_nan", lambda m, dt: L(m).pinv(t(m, NANM, dt))),
    ("pinv_nan_batched", lambda m, dt: L(m).pinv(b2(m, NANM, dt))),
    ("matrix_rank_nan", lambda m, dt: L(m).matrix_rank(t(m, NANM, dt))),
    ("matrix_rank_nan_batched", lambda m, dt: L(m).matrix_rank(b2(m, NANM, dt))),
    ("matrix_rank_singular", lambda m, dt: L(m).matrix_rank(b2(m, SING, dt))),
    ("matrix_norm_2_nan", lambda m, dt: L(m).matrix_norm(t(m, NANM, dt), 2)),
    ("matrix_norm_nuc_nan_batched", lambda m, dt: L(m).matrix_norm(b2(m, NANM, dt), "nuc")),
    ("matrix_norm_m2_nan_dims", lambda m, dt: L(m).matrix_norm(
        b2(m, NANM, dt).permute(1, 0, 2), -2, dim=(0, 2))),
    ("matrix_norm_fro_nan", lambda m, dt: L(m).matrix_norm(t(m, NANM, dt))),
    ("norm_2_nan", lambda m, dt: L(m).norm(t(m, NANM, dt), 2)),
    ("norm_nuc_nan_dim", lambda m, dt: L(m).norm(b2(m, NANM, dt), "nuc", dim=(1, 2))),
    ("norm_2_vector_nan", lambda m, dt: L(m).norm(t(m, NANM, dt), 2, dim=1)),
    # cond
    ("cond_nan", lambda m, dt: L(m).cond(t(m, NANM, dt))),
    ("cond_nan_m2", lambda m, dt: L(m).cond(t(m, NANM, dt), -2)),
    ("cond_nan_1", lambda m, dt: L(m).cond(t(m, NANM, dt), 1)),
    ("cond_nan_fro", lambda m, dt: L(m).cond(t(m, NANM, dt), "fro")),
    ("cond_singular_2", lambda m, dt: L(m).cond(t(m, [[1.0, 0.0], [0.0, 0.0]], dt))),
    ("cond_singular_fro", lambda m, dt: L(m).cond(t(m, SING, dt), "fro")),
    ("cond_singular_nuc", lambda m, dt: L(m).cond(t(m, [[1.0, 0.0], [0.0, 0.0]], dt), "nuc")),
    ("cond_singular_1", lambda m, dt: L(m).cond(t(m, SING, dt), 1)),
    ("cond_singular_inf_batched", lambda m, dt: L(m).cond(b2(m, SING, dt), INF)),
    ("cond_singular_m1_batched", lambda m, dt: L(m).cond(b2(m, SING, dt), -1)),
    ("cond_zero_2", lambda m, dt: L(m).cond(m.zeros(2, 2, dtype=getattr(m, dt)))),
    ("cond_zero_fro", lambda m, dt: L(m).cond(m.zeros(2, 2, dtype=getattr(m, dt)), "fro")),
    ("cond_empty_fro", lambda m, dt: L(m).cond(m.zeros(2, 0, 0, dtype=getattr(m, dt)), "fro")),
    ("cond_bad_ord", lambda m, dt: L(m).cond(t(m, EYE, dt), 3)),
    ("cond_bad_str", lambda m, dt: L(m).cond(t(m, EYE, dt), "abc")),
    ("cond_nonsquare_fro", lambda m, dt: L(m).cond(m.ones(2, 3, dtype=getattr(m, dt)), "fro")),
    ("cond_int", lambda m, dt: L(m).cond(m.eye(2, dtype=m.int64))),
    ("cond_int_fro", lambda m, dt: L(m).cond(m.eye(2, dtype=m.int64), "fro")),
    # eig family
    ("eig_nan", lambda m, dt: L(m).eig(t(m, NANM, dt))),
    ("eig_inf", lambda m, dt: L(m).eig(t(m, [[1.0, INF], [0.0, 1.0]], dt))),
    ("eig_nan_batched", lambda m, dt: L(m).eig(b2(m, NANM, dt))),
    ("eigh_nan_lower_ignored", lambda m, dt: L(m).eigh(t(m, NANM, dt))),
    ("eigvalsh_nan_lower_ignored", lambda m, dt: L(m).eigvalsh(b2(m, NANM, dt))),
    ("eigh_nonsquare", lambda m, dt: L(m).eigh(m.ones(2, 3, dtype=getattr(m, dt)))),
    ("eigh_bad_uplo", lambda m, dt: L(m).eigh(t(m, EYE, dt), UPLO="X")),
    ("eigh_int", lambda m, dt: L(m).eigh(m.eye(2, dtype=m.int64))),
    # det / slogdet on singular: values, no error
    ("det_singular", lambda m, dt: L(m).det(t(m, [[1.0, 0.0], [0.0, 0.0]], dt))),
    ("slogdet_singular", lambda m, dt: L(m).slogdet(t(m, [[1.0, 0.0], [0.0, 0.0]], dt))),
    ("det_nan", lambda m, dt: L(m).det(t(m, NANM, dt))),
    ("det_int", lambda m, dt: L(m).det(m.eye(2, dtype=m.int64))),
    # triangular solves on singular: inf/nan values, no error
    ("solve_triangular_singular", lambda m, dt: L(m).solve_triangular(
        t(m, [[1.0, 1.0], [0.0, 0.0]], dt), m.ones(2, 1, dtype=getattr(m, dt)), upper=True)),
    ("solve_triangular_1d_b", lambda m, dt: L(m).solve_triangular(
        t(m, EYE, dt), m.ones(2, dtype=getattr(m, dt)), upper=True)),
    ("solve_triangular_shape", lambda m, dt: L(m).solve_triangular(
        t(m, EYE, dt), m.ones(3, 1, dtype=getattr(m, dt)), upper=True)),
    # qr, householder_product
    ("qr_int", lambda m, dt: L(m).qr(m.eye(2, dtype=m.int64))),
    ("qr_bad_mode", lambda m, dt: L(m).qr(t(m, EYE, dt), mode="x")),
    ("householder_tau_dims", lambda m, dt: L(m).householder_product(
        t(m, EYE, dt), m.ones(2, 2, dtype=getattr(m, dt)))),
    ("householder_tau_batch", lambda m, dt: L(m).householder_product(
        m.ones(2, 3, 2, dtype=getattr(m, dt)), m.ones(3, 2, dtype=getattr(m, dt)))),
    ("householder_wide", lambda m, dt: L(m).householder_product(
        m.ones(2, 3, dtype=getattr(m, dt)), m.ones(2, dtype=getattr(m, dt)))),
    ("householder_1d", lambda m, dt: L(m).householder_product(
        m.ones(3, dtype=getattr(m, dt)), m.ones(1, dtype=getattr(m, dt)))),
    # geqrf, ormqr: each argument check in torch's order, and the kernels' dtypes
    ("geqrf_1d", lambda m, dt: m.geqrf(m.ones(3, dtype=getattr(m, dt)))),
    ("geqrf_int", lambda m, dt: m.geqrf(m.eye(2, dtype=m.int64))),
    ("geqrf_half", lambda m, dt: m.geqrf(m.eye(2, dtype=m.float16))),
    ("geqrf_empty", lambda m, dt: m.geqrf(m.ones(0, 3, dtype=getattr(m, dt)))),
    ("ormqr_input_1d", lambda m, dt: m.ormqr(*_qr_args(m, dt, (3,), (1,), (3, 2)))),
    ("ormqr_other_1d", lambda m, dt: m.ormqr(*_qr_args(m, dt, (3, 2), (2,), (3,)))),
    ("ormqr_other_rows", lambda m, dt: m.ormqr(*_qr_args(m, dt, (3, 2), (2,), (4, 2)))),
    ("ormqr_other_cols_right", lambda m, dt: m.ormqr(*_qr_args(m, dt, (3, 2), (2,), (2, 4)),
                                                     left=False)),
    ("ormqr_tau_short", lambda m, dt: m.ormqr(*_qr_args(m, dt, (3, 2), (1,), (3, 2)))),
    ("ormqr_tau_long", lambda m, dt: m.ormqr(*_qr_args(m, dt, (3, 2), (3,), (3, 2)))),
    ("ormqr_tau_0d", lambda m, dt: m.ormqr(*_qr_args(m, dt, (3, 2), (), (3, 2)))),
    ("ormqr_tau_ndim", lambda m, dt: m.ormqr(*_qr_args(m, dt, (2, 3, 2), (2,), (2, 3, 2)))),
    ("ormqr_other_ndim", lambda m, dt: m.ormqr(*_qr_args(m, dt, (2, 3, 2), (2, 2), (3, 2)))),
    ("ormqr_tau_batch", lambda m, dt: m.ormqr(*_qr_args(m, dt, (2, 3, 2), (3, 2), (2, 3, 2)))),
    ("ormqr_other_batch", lambda m, dt: m.ormqr(*_qr_args(m, dt, (2, 3, 2), (2, 2), (4, 3, 2)))),
    ("ormqr_tau_dtype", lambda m, dt: m.ormqr(*_qr_args(m, dt, (3, 2), (2,), (3, 2), tau="float64"
                                                         if dt == "float32" else "float32"))),
    ("ormqr_other_dtype", lambda m, dt: m.ormqr(*_qr_args(m, dt, (3, 2), (2,), (3, 2),
                                                          other="complex64"))),
    ("ormqr_int", lambda m, dt: m.ormqr(*_qr_args(m, "int32", (3, 2), (2,), (3, 2)))),
    ("ormqr_half", lambda m, dt: m.ormqr(*_qr_args(m, "float16", (3, 2), (2,), (3, 2)))),
    # norms with bad arguments
    ("matrix_norm_bad_ord", lambda m, dt: L(m).matrix_norm(t(m, EYE, dt), 3)),
    ("matrix_norm_bad_str", lambda m, dt: L(m).matrix_norm(t(m, EYE, dt), "abc")),
    ("matrix_norm_1d", lambda m, dt: L(m).matrix_norm(m.ones(2, dtype=getattr(m, dt)))),
    ("matrix_norm_same_dims", lambda m, dt: L(m).matrix_norm(t(m, EYE, dt), dim=(0, 0))),
    ("norm_3d_ord", lambda m, dt: L(m).norm(m.ones(2, 2, 2, dtype=getattr(m, dt)), 2)),
    ("norm_str_1d", lambda m, dt: L(m).norm(m.ones(3, dtype=getattr(m, dt)), "fro")),
    ("norm_str_3d", lambda m, dt: L(m).norm(m.ones(2, 2, 2, dtype=getattr(m, dt)), "fro")),
    ("norm_str_dim3", lambda m, dt: L(m).norm(m.ones(2, 2, 2, dtype=getattr(m, dt)), "fro",
                                              dim=(0, 1, 2))),
    ("norm_str_dim1", lambda m, dt: L(m).norm(m.ones(2, 2, dtype=getattr(m, dt)), "fro",
                                              dim=(0,))),
    ("vector_norm_str", lambda m, dt: L(m).vector_norm(t(m, EYE, dt), "fro")),
    ("vector_norm_int", lambda m, dt: L(m).vector_norm(m.eye(2, dtype=m.int64))),
    # half precision: torch's CPU kernels refuse it
    ("inv_half", lambda m, dt: L(m).inv(m.eye(2, dtype=m.float16))),
    ("inv_ex_bf16", lambda m, dt: L(m).inv_ex(m.eye(2, dtype=m.bfloat16))),
    ("svd_half", lambda m, dt: L(m).svd(m.eye(2, dtype=m.float16))),
    ("svdvals_bf16", lambda m, dt: L(m).svdvals(m.eye(2, dtype=m.bfloat16))),
    ("cholesky_bf16", lambda m, dt: L(m).cholesky(m.eye(2, dtype=m.bfloat16))),
    ("cholesky_ex_half", lambda m, dt: L(m).cholesky_ex(m.eye(2, dtype=m.float16))),
    ("det_half", lambda m, dt: L(m).det(m.eye(2, dtype=m.float16))),
    ("lu_factor_half", lambda m, dt: L(m).lu_factor(m.eye(2, dtype=m.float16))),
    ("eig_int", lambda m, dt: L(m).eig(m.eye(2, dtype=m.int64))),
    ("matrix_rank_int", lambda m, dt: L(m).matrix_rank(m.eye(2, dtype=m.int64))),
    ("det_nonsquare", lambda m, dt: L(m).det(m.ones(2, 3, dtype=getattr(m, dt)))),
    # lstsq
    ("lstsq_singular", lambda m, dt: L(m).lstsq(t(m, SING, dt),
                                                m.ones(2, 1, dtype=getattr(m, dt))).solution),
    ("lstsq_bad_driver", lambda m, dt: L(m).lstsq(t(m, EYE, dt),
                                                  m.ones(2, 1, dtype=getattr(m, dt)),
                                                  driver="x")),
    ("lstsq_dtype", lambda m, dt: L(m).lstsq(t(m, EYE, dt), m.ones(2, 1, dtype=m.float16))),
    ("lstsq_shape", lambda m, dt: L(m).lstsq(t(m, EYE, dt), m.ones(3, 1, dtype=getattr(m, dt)))),
]

# The legacy torch.* and Tensor-method forms: the same checks, declared once with each op
# (torch names most of them linalg.*; torch.cholesky says "cholesky").
F = lambda m, dt: getattr(m, dt)      # noqa: E731
UTRI_SING = [[1.0, 1.0], [0.0, 0.0]]
NAND = [[NAN, 0.0], [0.0, 1.0]]
SYM3 = [[0.01, 2.0, 3.0], [2.0, 1.0, -1.0], [3.0, -1.0, 0.5]]   # indefinite: 2x2 pivots
C = lambda m, dt: m.complex64 if dt == "float32" else m.complex128      # noqa: E731
LEGACY = [
    # torch.svd / Tensor.svd
    ("svd_nan", lambda m, dt: m.svd(t(m, NANM, dt))),
    ("svd_nan_batched", lambda m, dt: m.svd(b2(m, NANM, dt))),
    ("svd_nan_method", lambda m, dt: t(m, NANM, dt).svd()),
    ("svd_nan_no_uv", lambda m, dt: m.svd(t(m, NANM, dt), compute_uv=False)),
    ("svd_no_uv", lambda m, dt: m.svd(t(m, [[3.0, 1.0, 0.0], [1.0, 2.0, 1.0]], dt),
                                      compute_uv=False)),
    ("svd_no_uv_batched", lambda m, dt: m.svd(b2(m, [[3.0, 1.0], [1.0, 2.0]], dt), some=False,
                                              compute_uv=False)),
    ("svd_values", lambda m, dt: m.svd(t(m, [[3.0, 1.0], [1.0, 2.0], [0.0, 1.0]], dt)).S),
    ("svd_int", lambda m, dt: m.svd(m.eye(2, dtype=m.int64))),
    ("svd_half", lambda m, dt: m.svd(m.eye(2, dtype=m.float16))),
    ("svd_half_no_uv", lambda m, dt: m.svd(m.eye(2, dtype=m.float16), compute_uv=False)),
    ("svd_1d", lambda m, dt: m.svd(m.ones(2, dtype=F(m, dt)))),
    ("linalg_svd_1d", lambda m, dt: L(m).svd(m.ones(2, dtype=F(m, dt)))),
    ("svdvals_1d", lambda m, dt: L(m).svdvals(m.ones(2, dtype=F(m, dt)))),
    # torch.pinverse / Tensor.pinverse / linalg.pinv
    ("pinverse_nan", lambda m, dt: m.pinverse(t(m, NANM, dt))),
    ("pinverse_nan_batched", lambda m, dt: m.pinverse(b2(m, NANM, dt))),
    ("pinverse_nan_method", lambda m, dt: t(m, NANM, dt).pinverse()),
    ("pinverse_int", lambda m, dt: m.pinverse(m.eye(2, dtype=m.int64))),
    ("pinverse_half", lambda m, dt: m.pinverse(m.eye(2, dtype=m.float16))),
    ("pinverse_1d", lambda m, dt: m.pinverse(m.ones(2, dtype=F(m, dt)))),
    ("pinv_bf16", lambda m, dt: L(m).pinv(m.eye(2, dtype=m.bfloat16))),
    ("pinv_hermitian_ok", lambda m, dt: L(m).pinv(t(m, [[2.0, 1.0], [1.0, 2.0]], dt),
                                                  hermitian=True)),
    # torch.norm / Tensor.norm (the SVD's NaN check in matrix_norm itself)
    ("norm_nuc_nan", lambda m, dt: m.norm(t(m, NANM, dt), p="nuc")),
    ("norm_nuc_nan_method", lambda m, dt: t(m, NANM, dt).norm(p="nuc")),
    ("norm_nuc_nan_batched", lambda m, dt: m.norm(b2(m, NANM, dt), p="nuc", dim=(1, 2))),
    ("norm_nuc_half", lambda m, dt: m.norm(m.eye(2, dtype=m.float16), p="nuc")),
    ("norm_nuc_1d", lambda m, dt: m.norm(m.ones(2, dtype=F(m, dt)), p="nuc")),
    ("norm_fro_nan", lambda m, dt: m.norm(t(m, NANM, dt), p="fro")),
    ("norm_2_nan", lambda m, dt: m.norm(t(m, NANM, dt), p=2)),
    ("norm_nuc_int", lambda m, dt: m.norm(m.eye(2, dtype=m.int64), p="nuc")),
    ("matrix_norm_nuc_nan", lambda m, dt: L(m).matrix_norm(t(m, NANM, dt), "nuc")),
    ("matrix_norm_2_nan_batched", lambda m, dt: L(m).matrix_norm(b2(m, NANM, dt), 2)),
    ("nuclear_norm_nan", lambda m, dt: m.nuclear_norm(t(m, NANM, dt))),
    # torch.cholesky / Tensor.cholesky: "cholesky:", NaN fails
    ("cholesky_npd", lambda m, dt: m.cholesky(t(m, NPD, dt))),
    ("cholesky_npd_batched", lambda m, dt: m.cholesky(b2(m, NPD, dt))),
    ("cholesky_npd_method", lambda m, dt: t(m, NPD, dt).cholesky()),
    ("cholesky_npd_upper", lambda m, dt: m.cholesky(t(m, NPD, dt), upper=True)),
    ("cholesky_nan_diag", lambda m, dt: m.cholesky(t(m, NAND, dt))),
    ("cholesky_nan_diag_method", lambda m, dt: t(m, NAND, dt).cholesky()),
    ("cholesky_nan_lower", lambda m, dt: m.cholesky(t(m, [[1.0, 0.0], [NAN, 1.0]], dt))),
    ("cholesky_nan_batched", lambda m, dt: m.cholesky(b2(m, NAND, dt))),
    ("cholesky_ok", lambda m, dt: m.cholesky(b2(m, [[2.0, 1.0], [1.0, 2.0]], dt), upper=True)),
    ("cholesky_int", lambda m, dt: m.cholesky(m.eye(2, dtype=m.int64))),
    ("cholesky_half", lambda m, dt: m.cholesky(m.eye(2, dtype=m.float16))),
    ("cholesky_1d", lambda m, dt: m.cholesky(m.ones(2, dtype=F(m, dt)))),
    ("cholesky_nonsquare", lambda m, dt: m.cholesky(m.ones(2, 3, dtype=F(m, dt)))),
    ("linalg_cholesky_1d", lambda m, dt: L(m).cholesky(m.ones(2, dtype=F(m, dt)))),
    # cholesky_ex's L where it fails: LAPACK's partial factor, as torch's
    ("cholesky_ex_npd_L", lambda m, dt: L(m).cholesky_ex(t(m, NPD, dt))),
    ("cholesky_ex_nan_L_batched", lambda m, dt: L(m).cholesky_ex(b2(m, NAND, dt))),
    ("cholesky_ex_npd_upper_L", lambda m, dt: L(m).cholesky_ex(
        t(m, [[1.0, 2.0], [5.0, 1.0]], dt), upper=True)),
    ("cholesky_ex_npd_3x3_L", lambda m, dt: L(m).cholesky_ex(
        t(m, [[4.0, 2.0, 1.0], [2.0, 5.0, 3.0], [1.0, 3.0, 1.0]], dt))),
    ("cholesky_ex_npd_complex_L", lambda m, dt: L(m).cholesky_ex(
        t(m, [[4.0, 2.0, 1.0], [2.0, 5.0, 3.0], [1.0, 3.0, 1.0]], dt).to(
            m.complex64 if dt == "float32" else m.complex128) * (1 + 0j) +
        1j * t(m, [[0.0, -1.0, 0.5], [1.0, 0.0, 0.0], [-0.5, 0.0, 0.0]], dt))),
    ("linalg_cholesky_ex_1d", lambda m, dt: L(m).cholesky_ex(m.ones(2, dtype=F(m, dt)))),
    # cholesky_inverse / cholesky_solve
    ("cholesky_inverse_nan", lambda m, dt: m.cholesky_inverse(t(m, NAND, dt))),
    ("cholesky_inverse_nan_upper", lambda m, dt: m.cholesky_inverse(t(m, NAND, dt), upper=True)),
    ("cholesky_inverse_method_batched", lambda m, dt: b2(m, LSING, dt).cholesky_inverse()),
    ("cholesky_inverse_upper_method", lambda m, dt: t(m, [[2.0, 1.0], [0.0, 1.0]], dt)
     .cholesky_inverse(upper=True)),
    ("cholesky_inverse_half", lambda m, dt: m.cholesky_inverse(m.eye(2, dtype=m.float16))),
    ("cholesky_inverse_3x3", lambda m, dt: m.cholesky_inverse(
        t(m, [[2.0, 0.0, 0.0], [1.0, 3.0, 0.0], [-1.0, 0.5, 1.5]], dt))),
    ("cholesky_solve_nan", lambda m, dt: m.cholesky_solve(m.ones(2, 1, dtype=F(m, dt)),
                                                          t(m, NAND, dt))),
    ("cholesky_solve_batched", lambda m, dt: m.cholesky_solve(m.ones(2, 2, 1, dtype=F(m, dt)),
                                                              b2(m, LSING, dt))),
    ("cholesky_solve_method", lambda m, dt: m.ones(2, 1, dtype=F(m, dt)).cholesky_solve(
        t(m, [[2.0, 0.0], [1.0, 1.0]], dt))),
    ("cholesky_solve_half", lambda m, dt: m.cholesky_solve(m.ones(2, 1, dtype=m.float16),
                                                           m.eye(2, dtype=m.float16))),
    ("cholesky_solve_1d", lambda m, dt: m.cholesky_solve(m.ones(2, dtype=F(m, dt)),
                                                         t(m, EYE, dt))),
    ("cholesky_solve_dtype", lambda m, dt: m.cholesky_solve(m.ones(2, 1, dtype=m.float16),
                                                            t(m, EYE, dt))),
    # det / logdet / slogdet (values and signs: test_det_signed_zero)
    ("det_singular_swap", lambda m, dt: m.det(t(m, SING, dt))),
    ("det_singular_method_batched", lambda m, dt: b2(m, SING, dt).det()),
    ("det_nan_legacy", lambda m, dt: m.det(t(m, NANM, dt))),
    ("det_int_legacy", lambda m, dt: m.det(m.eye(2, dtype=m.int64))),
    ("det_half_legacy", lambda m, dt: m.det(m.eye(2, dtype=m.float16))),
    ("det_1d", lambda m, dt: m.det(m.ones(2, dtype=F(m, dt)))),
    ("det_values", lambda m, dt: m.det(t(m, [[[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]],
                                             [[0.0, 1.0, 2.0], [1.0, 0.0, 3.0], [4.0, -3.0, 8.0]]],
                                             dt))),
    ("logdet_singular", lambda m, dt: m.logdet(t(m, SING, dt))),
    ("logdet_negative", lambda m, dt: m.logdet(t(m, [[0.0, 1.0], [1.0, 0.0]], dt))),
    ("logdet_nan", lambda m, dt: m.logdet(t(m, NANM, dt))),
    ("logdet_method_batched", lambda m, dt: b2(m, SING, dt).logdet()),
    ("logdet_int", lambda m, dt: m.logdet(m.eye(2, dtype=m.int64))),
    ("logdet_half", lambda m, dt: m.logdet(m.eye(2, dtype=m.float16))),
    ("logdet_1d", lambda m, dt: m.logdet(m.ones(2, dtype=F(m, dt)))),
    ("slogdet_singular_legacy", lambda m, dt: m.slogdet(t(m, SING, dt))),
    ("slogdet_nan", lambda m, dt: m.slogdet(t(m, NANM, dt))),
    ("slogdet_method_batched", lambda m, dt: b2(m, SING, dt).slogdet()),
    ("slogdet_negative", lambda m, dt: m.slogdet(t(m, [[0.0, 1.0], [1.0, 0.0]], dt))),
    ("slogdet_int", lambda m, dt: m.slogdet(m.eye(2, dtype=m.int64))),
    ("slogdet_half", lambda m, dt: m.slogdet(m.eye(2, dtype=m.float16))),
    ("linalg_slogdet_bf16", lambda m, dt: L(m).slogdet(m.eye(2, dtype=m.bfloat16))),
    ("slogdet_1d", lambda m, dt: m.slogdet(m.ones(2, dtype=F(m, dt)))),
    ("slogdet_nonsquare", lambda m, dt: m.slogdet(m.ones(2, 3, dtype=F(m, dt)))),
    # torch.inverse / Tensor.inverse / matrix_power
    ("inverse_singular", lambda m, dt: m.inverse(t(m, SING, dt))),
    ("inverse_singular_batched", lambda m, dt: m.inverse(b2(m, SING, dt))),
    ("inverse_method_batched", lambda m, dt: b2(m, SING, dt).inverse()),
    ("inverse_nan", lambda m, dt: m.inverse(t(m, NANM, dt))),
    ("inverse_int", lambda m, dt: m.inverse(m.eye(2, dtype=m.int64))),
    ("inverse_half", lambda m, dt: m.inverse(m.eye(2, dtype=m.float16))),
    ("inverse_1d", lambda m, dt: m.inverse(m.ones(2, dtype=F(m, dt)))),
    ("inverse_nonsquare", lambda m, dt: m.inverse(m.ones(2, 3, dtype=F(m, dt)))),
    ("matrix_power_legacy_singular_batched", lambda m, dt: m.matrix_power(b2(m, SING, dt), -1)),
    ("matrix_power_method_singular", lambda m, dt: t(m, SING, dt).matrix_power(-1)),
    ("matrix_power_half_neg", lambda m, dt: m.matrix_power(m.eye(2, dtype=m.float16), -1)),
    ("matrix_power_nan_neg", lambda m, dt: m.matrix_power(t(m, NANM, dt), -1)),
    ("matrix_power_int_pos", lambda m, dt: m.matrix_power(m.tensor([[1, 2], [3, 4]]), 3)),
    ("inv_ex_half", lambda m, dt: L(m).inv_ex(m.eye(2, dtype=m.float16))),
    # lu_unpack / linalg.lu
    ("lu_unpack_singular", lambda m, dt: m.lu_unpack(*L(m).lu_factor_ex(b2(m, SING, dt))[:2])),
    ("lu_unpack_int_pivots", lambda m, dt: m.lu_unpack(t(m, EYE, dt), m.ones(2, dtype=m.int64))),
    ("lu_unpack_int_pivots_unused", lambda m, dt: m.lu_unpack(
        t(m, EYE, dt), m.ones(2, dtype=m.int64), unpack_pivots=False)),
    ("lu_unpack_1d", lambda m, dt: m.lu_unpack(m.ones(2, dtype=F(m, dt)),
                                               m.ones(2, dtype=m.int32))),
    ("lu_unpack_pivot_range", lambda m, dt: m.lu_unpack(t(m, EYE, dt),
                                                        m.tensor([3, 1], dtype=m.int32))),
    ("lu_unpack_pivot_zero", lambda m, dt: m.lu_unpack(t(m, EYE, dt),
                                                       m.tensor([0, 2], dtype=m.int32))),
    ("lu_unpack_short_pivots", lambda m, dt: m.lu_unpack(t(m, EYE, dt),
                                                         m.ones(1, dtype=m.int32))),
    ("lu_unpack_tall", lambda m, dt: m.lu_unpack(m.ones(3, 2, dtype=F(m, dt)),
                                                 m.tensor([3, 2], dtype=m.int32))),
    ("lu_unpack_wide_range", lambda m, dt: m.lu_unpack(m.ones(2, 3, dtype=F(m, dt)),
                                                       m.tensor([3, 2], dtype=m.int32))),
    ("lu_unpack_int_data", lambda m, dt: m.lu_unpack(m.eye(2, dtype=m.int64),
                                                     m.ones(2, dtype=m.int32))),
    ("linalg_lu_singular_batched", lambda m, dt: L(m).lu(b2(m, SING, dt))),
    ("linalg_lu_zero", lambda m, dt: L(m).lu(m.zeros(2, 2, dtype=F(m, dt)))),
    ("linalg_lu_half", lambda m, dt: L(m).lu(m.eye(2, dtype=m.float16))),
    # torch.qr / Tensor.qr
    ("qr_legacy_singular", lambda m, dt: m.qr(t(m, SING, dt))),
    ("qr_method_complete", lambda m, dt: t(m, [[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]], dt)
     .qr(some=False)),
    ("qr_legacy_int", lambda m, dt: m.qr(m.eye(2, dtype=m.int64))),
    ("qr_legacy_half", lambda m, dt: m.qr(m.eye(2, dtype=m.float16))),
    ("linalg_qr_bf16", lambda m, dt: L(m).qr(m.eye(2, dtype=m.bfloat16))),
    ("qr_legacy_1d", lambda m, dt: m.qr(m.ones(2, dtype=F(m, dt)))),
    ("orgqr_half", lambda m, dt: m.orgqr(m.eye(2, dtype=m.float16), m.ones(2, dtype=m.float16))),
    ("orgqr_int", lambda m, dt: m.orgqr(m.eye(2, dtype=m.int64), m.ones(2, dtype=m.int64))),
    # torch.triangular_solve / linalg.solve_triangular: a zero pivot gives inf / nan, no error
    ("triangular_solve_singular", lambda m, dt: m.triangular_solve(m.ones(2, 1, dtype=F(m, dt)),
                                                                   t(m, UTRI_SING, dt))),
    ("triangular_solve_singular_batched", lambda m, dt: m.triangular_solve(
        m.ones(2, 2, 1, dtype=F(m, dt)), b2(m, UTRI_SING, dt))),
    ("triangular_solve_method", lambda m, dt: m.ones(2, 1, dtype=F(m, dt)).triangular_solve(
        t(m, UTRI_SING, dt), transpose=True)),
    ("triangular_solve_nan", lambda m, dt: m.triangular_solve(m.ones(2, 1, dtype=F(m, dt)),
                                                              t(m, NANM, dt))),
    ("triangular_solve_int", lambda m, dt: m.triangular_solve(m.ones(2, 1, dtype=m.int64),
                                                              m.eye(2, dtype=m.int64))),
    ("triangular_solve_half", lambda m, dt: m.triangular_solve(m.ones(2, 1, dtype=m.float16),
                                                               m.eye(2, dtype=m.float16))),
    ("triangular_solve_1d_b", lambda m, dt: m.triangular_solve(m.ones(2, dtype=F(m, dt)),
                                                               t(m, EYE, dt))),
    ("triangular_solve_1d_A", lambda m, dt: m.triangular_solve(m.ones(2, 1, dtype=F(m, dt)),
                                                               m.ones(2, dtype=F(m, dt)))),
    ("triangular_solve_dtype", lambda m, dt: m.triangular_solve(m.ones(2, 1, dtype=m.int64),
                                                                t(m, EYE, dt))),
    ("triangular_solve_shape", lambda m, dt: m.triangular_solve(m.ones(3, 1, dtype=F(m, dt)),
                                                                t(m, EYE, dt))),
    ("triangular_solve_nonsquare", lambda m, dt: m.triangular_solve(
        m.ones(2, 1, dtype=F(m, dt)), m.ones(2, 3, dtype=F(m, dt)))),
    ("solve_triangular_singular_lower", lambda m, dt: L(m).solve_triangular(
        t(m, LSING, dt), m.ones(2, 1, dtype=F(m, dt)), upper=False)),
    ("solve_triangular_singular_right", lambda m, dt: L(m).solve_triangular(
        t(m, UTRI_SING, dt), m.ones(1, 2, dtype=F(m, dt)), upper=True, left=False)),
    ("solve_triangular_singular_batched", lambda m, dt: L(m).solve_triangular(
        b2(m, UTRI_SING, dt), m.ones(2, 2, 1, dtype=F(m, dt)), upper=True)),
    ("solve_triangular_nan", lambda m, dt: L(m).solve_triangular(
        t(m, NANM, dt), m.ones(2, 1, dtype=F(m, dt)), upper=True)),
    ("solve_triangular_int", lambda m, dt: L(m).solve_triangular(
        m.eye(2, dtype=m.int64), m.ones(2, 1, dtype=m.int64), upper=True)),
    ("solve_triangular_half", lambda m, dt: L(m).solve_triangular(
        m.eye(2, dtype=m.float16), m.ones(2, 1, dtype=m.float16), upper=True)),
    ("solve_triangular_b_cast", lambda m, dt: L(m).solve_triangular(
        t(m, [[3.0, 1.0], [0.0, 7.0]], dt), m.ones(2, 1, dtype=m.float16) / 3, upper=True)),
    ("solve_triangular_b_int", lambda m, dt: L(m).solve_triangular(
        t(m, [[3.0, 1.0], [0.0, 7.0]], dt), m.ones(2, 1, dtype=m.int64) * 3, upper=True)),
    # solve / solve_ex in half precision (getrf has none)
    ("solve_half", lambda m, dt: L(m).solve(m.eye(2, dtype=m.float16),
                                            m.ones(2, dtype=m.float16))),
    ("solve_ex_bf16", lambda m, dt: L(m).solve_ex(m.eye(2, dtype=m.bfloat16),
                                                  m.ones(2, dtype=m.bfloat16))),
    ("eigh_half", lambda m, dt: L(m).eigh(m.eye(2, dtype=m.float16))),
    ("eigvalsh_int_nonsquare", lambda m, dt: L(m).eigvalsh(m.ones(2, 3, dtype=m.int64))),
    # ldl_factor / ldl_factor_ex / ldl_solve: LAPACK's sytrf / sytrs (Bunch-Kaufman)
    ("ldl_factor", lambda m, dt: L(m).ldl_factor(t(m, SYM3, dt))),
    ("ldl_factor_2x2_pivot", lambda m, dt: L(m).ldl_factor(t(m, NPD, dt))),
    ("ldl_factor_ex_batched", lambda m, dt: L(m).ldl_factor_ex(
        m.stack([t(m, SYM3, dt), t(m, [[4.0, 1.0, 0.0], [1.0, 0.0, 2.0], [0.0, 2.0, -3.0]],
                                   dt)]))),
    ("ldl_factor_upper_ignored", lambda m, dt: L(m).ldl_factor(t(m, [[1.0, 5.0], [2.0, 1.0]], dt))),
    ("ldl_factor_hermitian", lambda m, dt: L(m).ldl_factor(
        t(m, SYM3, dt).to(C(m, dt)) +
        1j * t(m, [[0.0, -1.0, 0.5], [1.0, 0.0, 2.0], [-0.5, -2.0, 0.0]], dt), hermitian=True)),
    ("ldl_factor_complex_symmetric", lambda m, dt: L(m).ldl_factor(
        t(m, SYM3, dt).to(C(m, dt)) +
        1j * t(m, [[0.0, 1.0, 0.5], [1.0, 0.0, 2.0], [0.5, 2.0, 0.3]], dt))),
    ("ldl_factor_ex_singular", lambda m, dt: L(m).ldl_factor_ex(b2(m, [[0.0, 0.0], [0.0, 0.0]],
                                                                  dt))),
    ("ldl_factor_singular", lambda m, dt: L(m).ldl_factor(t(m, [[0.0, 0.0], [0.0, 1.0]], dt))),
    ("ldl_factor_singular_batched", lambda m, dt: L(m).ldl_factor(b2(m, [[0.0, 0.0], [0.0, 0.0]],
                                                                     dt))),
    ("ldl_factor_ex_check", lambda m, dt: L(m).ldl_factor_ex(b2(m, [[0.0, 0.0], [0.0, 0.0]], dt),
                                                             check_errors=True)),
    ("ldl_factor_ex_nan", lambda m, dt: L(m).ldl_factor_ex(
        t(m, [[0.01, 2.0, NAN], [2.0, 1.0, 1.0], [NAN, 1.0, 0.0]], dt))),
    ("ldl_factor_ex_nan_diag", lambda m, dt: L(m).ldl_factor_ex(t(m, [[NAN, 1.0], [1.0, 1.0]],
                                                                  dt))),
    ("ldl_factor_empty", lambda m, dt: L(m).ldl_factor(m.zeros(3, 0, 0, dtype=F(m, dt)))),
    ("ldl_factor_int", lambda m, dt: L(m).ldl_factor(m.eye(2, dtype=m.int64))),
    ("ldl_factor_half", lambda m, dt: L(m).ldl_factor(m.eye(2, dtype=m.float16))),
    ("ldl_factor_1d", lambda m, dt: L(m).ldl_factor(m.ones(2, dtype=F(m, dt)))),
    ("ldl_factor_nonsquare", lambda m, dt: L(m).ldl_factor_ex(m.ones(2, 3, dtype=F(m, dt)))),
    ("ldl_solve", lambda m, dt: L(m).ldl_solve(*L(m).ldl_factor(t(m, SYM3, dt)),
                                               t(m, [[1.0, 0.0], [2.0, 1.0], [-1.0, 3.0]], dt))),
    ("ldl_solve_2x2_pivot", lambda m, dt: L(m).ldl_solve(*L(m).ldl_factor(t(m, NPD, dt)),
                                                         m.ones(2, 1, dtype=F(m, dt)))),
    ("ldl_solve_broadcast_b", lambda m, dt: L(m).ldl_solve(*L(m).ldl_factor(t(m, NPD, dt)),
                                                           m.ones(3, 2, 1, dtype=F(m, dt)))),
    ("ldl_solve_hermitian", lambda m, dt: L(m).ldl_solve(*L(m).ldl_factor(
        t(m, SYM3, dt).to(C(m, dt)) +
        1j * t(m, [[0.0, -1.0, 0.5], [1.0, 0.0, 2.0], [-0.5, -2.0, 0.0]], dt), hermitian=True),
        m.ones(3, 1, dtype=m.complex64 if dt == "float32" else m.complex128), hermitian=True)),
    ("ldl_solve_int64_pivots", lambda m, dt: L(m).ldl_solve(
        L(m).ldl_factor(t(m, NPD, dt))[0], m.ones(2, dtype=m.int64), m.ones(2, 1, dtype=F(m, dt)))),
    ("ldl_solve_float_pivots", lambda m, dt: L(m).ldl_solve(
        t(m, EYE, dt), m.ones(2, dtype=F(m, dt)), m.ones(2, 1, dtype=F(m, dt)))),
    ("ldl_solve_pivots_shape", lambda m, dt: L(m).ldl_solve(
        t(m, EYE, dt), m.ones(3, dtype=m.int32), m.ones(2, 1, dtype=F(m, dt)))),
    ("ldl_solve_pivot_zero", lambda m, dt: L(m).ldl_solve(
        t(m, EYE, dt), m.tensor([0, 1], dtype=m.int32), m.ones(2, 1, dtype=F(m, dt)))),
    ("ldl_solve_pivot_large", lambda m, dt: L(m).ldl_solve(
        t(m, EYE, dt), m.tensor([1, 5], dtype=m.int32), m.ones(2, 1, dtype=F(m, dt)))),
    ("ldl_solve_b_1d", lambda m, dt: L(m).ldl_solve(
        t(m, EYE, dt), m.ones(2, dtype=m.int32), m.ones(2, dtype=F(m, dt)))),
    ("ldl_solve_b_rows", lambda m, dt: L(m).ldl_solve(
        t(m, EYE, dt), m.ones(2, dtype=m.int32), m.ones(3, 1, dtype=F(m, dt)))),
    ("ldl_solve_dtype", lambda m, dt: L(m).ldl_solve(
        t(m, EYE, dt), m.ones(2, dtype=m.int32), m.ones(2, 1, dtype=m.float16))),
    ("ldl_solve_int", lambda m, dt: L(m).ldl_solve(
        m.eye(2, dtype=m.int64), m.ones(2, dtype=m.int32), m.ones(2, 1, dtype=m.int64))),
    ("ldl_solve_nonsquare", lambda m, dt: L(m).ldl_solve(
        m.ones(2, 3, dtype=F(m, dt)), m.ones(2, dtype=m.int32), m.ones(2, 1, dtype=F(m, dt)))),
    ("ldl_solve_1d", lambda m, dt: L(m).ldl_solve(
        m.ones(2, dtype=F(m, dt)), m.ones(2, dtype=m.int32), m.ones(2, 1, dtype=F(m, dt)))),
]
CASES += LEGACY


@pytest.mark.parametrize("dt", DTS)
@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_as_torch(name, fn, dt):
    same(lambda m: fn(m, dt), rtol=1e-4 if dt == "float32" else 1e-7,
         atol=1e-5 if dt == "float32" else 1e-9)


def test_linalg_error_pickles_and_is_caught_as_runtime_error():
    import pickle
    E = torchlike.linalg.LinAlgError
    e = pickle.loads(pickle.dumps(E("x")))
    assert type(e) is E and str(e) == "x"
    with pytest.raises(RuntimeError):
        torchlike.linalg.inv(torchlike.zeros(2, 2))


@pytest.mark.parametrize("name,call", [
    ("lu", lambda m: m.lu(m.eye(2))),
    ("lu_solve", lambda m: m.lu_solve(m.ones(2, 1), *m.linalg.lu_factor(m.eye(2)))),
    ("triangular_solve", lambda m: m.triangular_solve(m.ones(2, 1), m.eye(2))),
    ("cholesky", lambda m: m.cholesky(m.eye(2))),
    ("qr", lambda m: m.qr(m.eye(2)))])
def test_deprecated_forms_warn_once(name, call):
    """torch's TORCH_WARN_ONCE: the first call in a process warns, at the caller's line."""
    from torchlike._ops import factorizations
    factorizations._WARNED.discard(name)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        call(torchlike)
        call(torchlike)
    assert len(w) == 1 and w[0].category is UserWarning
    assert str(w[0].message).startswith(f"torch.{name} is deprecated in favor of torch.linalg.")
    assert w[0].filename == __file__


def test_value_checks_compile_without_graph_breaks():
    """While torchlike.compile traces, the checks are outputs of the program: torch's error
    after the call, no graph break."""
    from torchlike._compile import _api

    def f(a):
        return (torchlike.linalg.svdvals(a).sum() + torchlike.linalg.lu_factor(a).LU.sum()
                + torchlike.linalg.solve(a, a).sum() + torchlike.cholesky_inverse(a.tril()).sum())
    cf = torchlike.compile(f)
    ok = torchlike.tensor([[2.0, 1.0], [1.0, 3.0]])
    breaks = _api._STATS["graph_breaks"]
    assert torch.allclose(torch.tensor(cf(ok).item()), torch.tensor(f(ok).item()))
    for bad, msg in [([[1.0, NAN], [0.0, 1.0]], "linalg.svd: The algorithm failed"),
                     (SING, "torch.linalg.lu_factor: U[2,2] is zero"),
                     ([[[1.0, 0.0], [0.0, 1.0]], [[1.0, 2.0], [2.0, 4.0]]],
                      "torch.linalg.lu_factor: (Batch element 1): U[2,2] is zero")]:
        with pytest.raises(RuntimeError) as e:
            cf(torchlike.tensor(bad))
        assert str(e.value).startswith(msg)
    assert _api._STATS["graph_breaks"] == breaks


@pytest.mark.parametrize("dt", DTS)
@pytest.mark.parametrize("name,fn", [
    ("det", lambda m, a: m.det(a)),
    ("linalg_det", lambda m, a: m.linalg.det(a)),
    ("slogdet_sign", lambda m, a: m.slogdet(a).sign),
    ("linalg_slogdet_sign", lambda m, a: m.linalg.slogdet(a)[0]),
])
def test_det_signed_zero(name, fn, dt):
    """torch's det is sign(P) * prod(diag(U)) (its slogdet's sign likewise, sgn(NaN) = 0): a
    singular matrix after an odd number of row swaps gives -0, after none +0."""
    mats = [SING, [[1.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [1.0, 1.0]], [[0.0, 1.0], [0.0, 1.0]],
            [[2.0, 1.0, 0.0], [4.0, 2.0, 0.0], [1.0, 1.0, 1.0]], NANM]
    for a in mats:
        for strided in (False, True):    # (torch factors A^T of a contiguous A, else A)
            x = [t(m, a, dt) for m in (torch, torchlike)]
            if strided:
                x = [v.mT.contiguous().mT for v in x]
            w, g = fn(torch, x[0]).numpy(), fn(torchlike, x[1]).numpy()
            np.testing.assert_array_equal(g, w)
            assert np.signbit(g).tolist() == np.signbit(w).tolist() or np.isnan(w).all(), \
                (a, strided)



# ------------------------------------------------------------------ DIFFERENCES.md pins
#
# Where torchlike's result differs from torch's, each test pins both: torchlike's behaviour and
# torch's, so that a change on either side shows.

def _potf2(a):
    """LAPACK's unblocked Cholesky of the lower triangle, stopping at the first non-positive
    pivot (stored in place); (partial factor, info)."""
    a = np.tril(a).copy()
    for j in range(a.shape[0]):
        ajj = a[j, j] - a[j, :j] @ a[j, :j]
        if not ajj > 0:
            a[j, j] = ajj
            return a, j + 1
        a[j, j] = np.sqrt(ajj)
        a[j + 1:, j] = (a[j + 1:, j] - a[j + 1:, :j] @ a[j, :j]) / a[j, j]
    return a, 0


def _npd(n, k, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, n))
    a = x @ x.T + n * np.eye(n)
    a[k - 1, k - 1] = -1e4            # the leading minor of order k fails
    return a


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex_partial_factor_as_lapacks_unblocked(upper):
    """On failure, cholesky_ex's L is LAPACK's partial factor (potf2: columns before the failing
    one computed, the failing pivot stored on the diagonal, later columns the input's): torch's
    exactly up to n = 128, where MKL's potrf runs unblocked."""
    a = np.stack([np.eye(20), _npd(20, 7)])
    w = torch.linalg.cholesky_ex(torch.tensor(a), upper=upper)
    g = torchlike.linalg.cholesky_ex(torchlike.tensor(a), upper=upper)
    assert g.info.tolist() == w.info.tolist() == [0, 7]
    np.testing.assert_allclose(g.L.numpy(), w.L.numpy(), rtol=1e-12, atol=1e-12)


def test_cholesky_ex_partial_factor_above_128_differs_from_mkls_blocked():
    """DIFFERENCES.md: above n = 128 MKL's blocked potrf leaves another partial factor (the
    failing block's trailing rows are not updated); torchlike's stays potf2's. info agrees, and
    L is unspecified where info > 0 in torch's documentation."""
    a = _npd(130, 100)
    w = torch.linalg.cholesky_ex(torch.tensor(a))
    g = torchlike.linalg.cholesky_ex(torchlike.tensor(a))
    assert int(g.info) == int(w.info) == 100
    ref, info = _potf2(a)
    assert info == 100
    np.testing.assert_allclose(g.L.numpy(), ref, rtol=1e-10, atol=1e-10)
    assert not np.allclose(w.L.numpy(), ref)                       # torch (MKL): blocked
    np.testing.assert_allclose(w.L.numpy()[:, :64], ref[:, :64], rtol=1e-10, atol=1e-10)


def test_qr_of_a_nan_matrix_spreads_nan_differently():
    """DIFFERENCES.md: LAPACK's geqrf applies a reflector with tau = 0 anyway (0 * NaN = NaN
    reaches R's trailing column); jax's QR leaves the column alone."""
    w = torch.linalg.qr(torch.tensor(NANM))
    g = torchlike.linalg.qr(torchlike.tensor(NANM))
    np.testing.assert_array_equal(g.Q.numpy(), w.Q.numpy())
    assert np.isnan(w.R[1, 1].item()) and g.R[1, 1].item() == 1.0
    np.testing.assert_array_equal(g.R.numpy()[:, 0], w.R.numpy()[:, 0])


NEAR_SINGULAR = [[0.0, 0.0, 0.0, 0.0, 0.0],
                 [3 / 7, 1 / 7, -4 / 7, -5 / 7, -13 / 7],
                 [-1.0, 1 / 7, 6 / 7, 0.0, 12 / 7],
                 [3 / 7, 1 / 7, -4 / 7, -5 / 7, -13 / 7],
                 [-5 / 7, 1 / 7, 4 / 7, -1 / 7, 1.0]]          # rank 2, float32


def test_lu_pivots_of_a_rank_deficient_float32_matrix_may_differ():
    """DIFFERENCES.md: once the Schur complement is rounding noise, which row is largest depends
    on the rounding of the update (MKL's kernels vs jax's); both factorizations are valid."""
    w = torch.linalg.lu_factor_ex(torch.tensor(NEAR_SINGULAR))
    g = torchlike.linalg.lu_factor_ex(torchlike.tensor(NEAR_SINGULAR))
    # (torch's pivots vary with the CPU's kernels: [3, 2, 4, 5, 5] on some, torchlike's on
    # others; the steps before the noise agree)
    assert g.pivots.tolist()[:2] == w.pivots.tolist()[:2] == [3, 2]
    for m, f in ((torch, w), (torchlike, g)):
        P, L_, U = m.lu_unpack(f.LU, f.pivots)
        np.testing.assert_allclose((P @ L_ @ U).numpy(), np.float32(NEAR_SINGULAR), atol=1e-6)
    np.testing.assert_allclose(g.LU.numpy()[:2], w.LU.numpy()[:2], rtol=1e-6)   # (two steps)


def test_lstsq_and_eigvals_of_nan_input_return_nan():
    """DIFFERENCES.md: torch's lstsq of a matrix holding NaN fails an internal assert (MKL's
    gelsy reports an illegal argument), its eigvals returns what balancing leaves (or crashes
    the process, test below); torchlike returns NaN."""
    a = [[1.0, NAN], [0.0, 1.0]]
    with pytest.raises(RuntimeError, match="INTERNAL ASSERT FAILED"):
        torch.linalg.lstsq(torch.tensor(a), torch.ones(2, 1))
    r = torchlike.linalg.lstsq(torchlike.tensor(a), torchlike.ones(2, 1))
    assert np.isnan(r.solution.numpy()).all()
    assert torch.linalg.eigvals(torch.tensor(a)).tolist() == [1 + 0j, 1 + 0j]
    assert np.isnan(torchlike.linalg.eigvals(torchlike.tensor(a)).numpy()).all()


def test_eigvals_of_a_full_nan_row_crashes_torch():
    """DIFFERENCES.md: torch's eigvals of [[nan, 1], [1, 1]] ends the process (MKL's gebal gets
    an illegal argument, then a segmentation fault); torchlike returns NaN."""
    import subprocess
    import sys
    code = ("import torch; torch.linalg.eigvals(torch.tensor([[float('nan'), 1.], [1., 1.]]));"
            "print('returned')")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "returned" not in p.stdout
    assert np.isnan(torchlike.linalg.eigvals(torchlike.tensor([[NAN, 1.0], [1.0, 1.0]]))
                    .numpy()).all()


def test_det_gradient_at_an_exactly_singular_matrix():
    """DIFFERENCES.md: at an exactly singular matrix torch's det backward gives zeros; torchlike
    gives the derivative (the adjugate's transpose), as it does near it, where both agree."""
    for a, want_torch in [(SING, [[0.0, 0.0], [0.0, 0.0]]),
                          ([[1.0, 2.0], [2.0, 4.0 + 1e-9]], None)]:
        x = torch.tensor(a, dtype=torch.float64, requires_grad=True)
        torch.linalg.det(x).backward()
        y = torchlike.tensor(a, dtype=torchlike.float64, requires_grad=True)
        torchlike.linalg.det(y).backward()
        adj = np.array([[a[1][1], -a[1][0]], [-a[0][1], a[0][0]]])
        np.testing.assert_allclose(y.grad.numpy(), adj, rtol=1e-6)
        if want_torch is None:
            np.testing.assert_allclose(x.grad.numpy(), adj, rtol=1e-6)
        else:
            np.testing.assert_array_equal(x.grad.numpy(), want_torch)


@pytest.mark.parametrize("n,herm,dt", [(12, False, "float64"), (40, False, "float32"),
                                       (9, True, "complex128"), (150, False, "float64")])
def test_ldl_factor_matches_lapack_pivots(n, herm, dt):
    """LD, pivots and info as torch's (MKL's sytrf), on indefinite matrices with small diagonals
    (1x1 and 2x2 pivots, interchanges); the solve agrees."""
    rng = np.random.default_rng(n)
    x = rng.standard_normal((2, n, n))
    if dt.startswith("complex"):
        x = x + 1j * rng.standard_normal((2, n, n))
    a = x + (np.conj(np.swapaxes(x, -1, -2)) if herm else np.swapaxes(x, -1, -2))
    a[:, np.arange(n), np.arange(n)] *= 0.01
    a = a.astype(dt)
    b = rng.standard_normal((2, n, 3)).astype(dt)
    w = torch.linalg.ldl_factor_ex(torch.tensor(a), hermitian=herm)
    g = torchlike.linalg.ldl_factor_ex(torchlike.tensor(a), hermitian=herm)
    assert g.pivots.tolist() == w.pivots.tolist() and g.info.tolist() == w.info.tolist()
    tol = 1e-3 if dt in ("float32", "complex64") else 1e-9
    np.testing.assert_allclose(g.LD.numpy(), w.LD.numpy(), rtol=tol, atol=tol)
    xs = torch.linalg.ldl_solve(w.LD, w.pivots, torch.tensor(b), hermitian=herm).numpy()
    xg = torchlike.linalg.ldl_solve(g.LD, g.pivots, torchlike.tensor(b), hermitian=herm).numpy()
    np.testing.assert_allclose(xg, xs, rtol=tol, atol=tol)
    np.testing.assert_allclose(a @ xg, b, rtol=tol * 10, atol=tol * 10)


def test_ldl_has_no_derivative_as_torch():
    """torch's ldl_factor / ldl_solve outputs carry a NotImplemented node whose backward
    raises."""
    for m in (torch, torchlike):
        a = m.tensor(NPD, requires_grad=True)
        LD, piv = m.linalg.ldl_factor(a)
        assert LD.requires_grad and not piv.requires_grad
        assert type(LD.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not "
                                               "implemented"):
            LD.sum().backward()
        b = m.ones(2, 1, requires_grad=True)
        x = m.linalg.ldl_solve(LD.detach(), piv, b)
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve is not "
                                               "implemented"):
            x.sum().backward()


def test_ldl_compiles():
    f = lambda a, b: torchlike.linalg.ldl_solve(*torchlike.linalg.ldl_factor(a), b)  # noqa
    a = torchlike.tensor(SYM3)
    b = torchlike.ones(3, 2)
    np.testing.assert_allclose(torchlike.compile(f)(a, b).numpy(), f(a, b).numpy(), rtol=1e-6)
    np.testing.assert_allclose((a @ f(a, b)).numpy(), b.numpy(), rtol=1e-5, atol=1e-5)
