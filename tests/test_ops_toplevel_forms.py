"""torch's top-level forms of nn ops and the remaining aliases, against torch (rows of the op
database for names the family tables do not reach)."""
import numpy as np
import pytest

from oracle import Case, check

R = np.random.RandomState(1)
X = R.randn(2, 4, 6).astype(np.float32)          # (N, C, L)
X4 = R.randn(1, 4, 4, 4).astype(np.float32)      # (N, C, H, W)
X5 = R.randn(1, 2, 4, 4, 4).astype(np.float32)   # (N, C, D, H, W)
W1 = R.randn(4, 3, 3).astype(np.float32)         # conv_transpose1d weight (C_in, C_out, k)
W5 = R.randn(3, 2, 2, 2, 2).astype(np.float32)
A = R.randn(3, 4).astype(np.float32)
B = R.randn(3, 4).astype(np.float32)
Y = np.array([1., -1., 1.], np.float32)
P = np.abs(R.randn(3, 4)).astype(np.float32) + 0.1

CASES = [
    Case("adaptive_avg_pool1d", lambda m, x: m.adaptive_avg_pool1d(x, 3), (X,)),
    Case("avg_pool1d", lambda m, x: m.avg_pool1d(x, 2), (X,)),
    Case("max_pool3d", lambda m, x: m.max_pool3d(x, 2), (X5,)),
    Case("max_pool1d_with_indices", lambda m, x: m.max_pool1d_with_indices(x, 2), (X,)),
    Case("conv3d", lambda m, x, w: m.conv3d(x, w.reshape(3, 2, 2, 2, 2)), (X5, W5)),
    Case("conv_transpose1d", lambda m, x, w: m.conv_transpose1d(x, w), (X, W1)),
    Case("conv_transpose3d", lambda m, x, w: m.conv_transpose3d(x, w.reshape(2, 3, 2, 2, 2)),
         (X5, W5)),
    Case("celu", lambda m, a: m.celu(a, 0.5), (A,)),
    Case("selu", lambda m, a: m.selu(a), (A,)),
    Case("hardshrink", lambda m, a: m.hardshrink(a, 0.3), (A,)),
    Case("hardshrink_method", lambda m, a: a.hardshrink(0.3), (A,)),
    Case("rrelu_eval", lambda m, a: m.rrelu(a, training=False), (A,)),
    Case("alpha_dropout_eval", lambda m, a: m.alpha_dropout(a, 0.5, False), (A,)),
    Case("feature_alpha_dropout_eval", lambda m, x: m.feature_alpha_dropout(x, 0.5, False),
         (X,)),
    Case("feature_dropout_eval", lambda m, x: m.feature_dropout(x, 0.5, False), (X4,)),
    Case("pixel_shuffle", lambda m, x: m.pixel_shuffle(x, 2), (X4,)),
    Case("pixel_unshuffle", lambda m, x: m.pixel_unshuffle(x, 2), (X4,)),
    Case("channel_shuffle", lambda m, x: m.channel_shuffle(x, 2), (X4,), grad=False),
    Case("native_channel_shuffle", lambda m, x: m.native_channel_shuffle(x, 2), (X4,),
         grad=False),
    Case("instance_norm", lambda m, x: m.instance_norm(x, None, None, None, None, True, 0.1,
                                                       1e-5, False), (X,)),
    Case("cosine_embedding_loss", lambda m, a, b, y: m.cosine_embedding_loss(a, b, y),
         (A, B, Y)),
    Case("hinge_embedding_loss", lambda m, a, y: m.hinge_embedding_loss(a[:, 0], y), (A, Y)),
    Case("margin_ranking_loss", lambda m, a, b, y: m.margin_ranking_loss(a[:, 0], b[:, 0], y),
         (A, B, Y)),
    Case("triplet_margin_loss", lambda m, a, b, c: m.triplet_margin_loss(a, b, c), (A, B, P)),
    Case("poisson_nll_loss", lambda m, a, p: m.poisson_nll_loss(a, p, True, False, 1e-8, 1),
         (A, P)),
    Case("cosine_embedding_loss_mean", lambda m, a, b, y: m.cosine_embedding_loss(a, b, y, 0.1, 1),
         (A, B, Y)),
    Case("triplet_margin_loss_sum", lambda m, a, b, c: m.triplet_margin_loss(
        a, b, c, 1.0, 2, 1e-6, False, 2), (A, B, P)),
    Case("kl_div", lambda m, a, b: m.kl_div(a, b.abs()), (A, B)),
    Case("binary_cross_entropy_with_logits", lambda m, a, b: m.binary_cross_entropy_with_logits(
        a, b.sigmoid()), (A, B)),
    Case("embedding_bag", lambda m, w: m.nn.functional.embedding_bag(
        m.tensor([[0, 2], [1, 1]]), w), (A,)),
    # aliases and remaining pointwise forms
    Case("atleast_1d", lambda m, a: m.atleast_1d(a[0, 0]), (A,)),
    Case("conj_physical", lambda m, a: m.conj_physical(a), (A,)),
    Case("conj_physical_inplace", lambda m, a: m.conj_physical_(a.clone()), (A,), grad=False),
    Case("imag", lambda m, a, b: m.imag(m.complex(a, b)), (A, B)),
    Case("greater_equal", lambda m, a, b: m.greater_equal(a, b), (A, B), grad=False),
    Case("less", lambda m, a, b: m.less(a, b), (A, B), grad=False),
    Case("negative", lambda m, a: m.negative(a), (A,)),
    Case("reciprocal", lambda m, a: m.reciprocal(a), (P,)),
    Case("reciprocal_inplace", lambda m, a: m.reciprocal_(a.clone()), (P,), grad=False),
    Case("rsqrt", lambda m, a: m.rsqrt(a), (P,)),
    Case("rsqrt_inplace", lambda m, a: m.rsqrt_(a.clone()), (P,), grad=False),
    Case("square", lambda m, a: m.square(a), (A,)),
    Case("square_inplace", lambda m, a: m.square_(a.clone()), (A,), grad=False),
    Case("cos_inplace", lambda m, a: m.cos_(a.clone()), (A,), grad=False),
    Case("unsafe_split", lambda m, a: m.unsafe_split(a, 2, 1), (A,)),
    Case("unsafe_split_with_sizes", lambda m, a: m.unsafe_split_with_sizes(a, [1, 3], 1), (A,)),
    Case("resize_as_", lambda m, a, b: a.clone().resize_as_(b.reshape(4, 3)), (A, B),
         grad=False),
    Case("resolve_neg", lambda m, a: m.resolve_neg(a), (A,)),
    Case("empty_like_shape", lambda m, a: m.empty_like(a).shape, (A,), grad=False),
    Case("is_conj", lambda m, a: m.is_conj(a), (A,), grad=False),
    Case("is_neg", lambda m, a: m.is_neg(a), (A,), grad=False),
    Case("is_distributed", lambda m, a: m.is_distributed(a), (A,), grad=False),
    Case("convolution", lambda m, x, w: m.convolution(x, w.reshape(3, 4, 2, 2)[:, :, :, :1]
                                                      .reshape(3, 4, 2), None, [1], [1], [1],
                                                      False, [0], 1), (X, W5)),
    Case("convolution_transposed", lambda m, x, w: m.convolution(x, w, None, [2], [0], [1],
                                                                 True, [1], 1), (X, W1)),
    Case("detach_top", lambda m, a: m.detach(a) * 2, (A,), grad=False),
    Case("fill_top", lambda m, a: m.fill(a, 2.5), (A,)),
    Case("as_strided_scatter", lambda m, a, b: m.as_strided_scatter(a, b[0, :2], (2,), (3,), 1),
         (A, B), grad=False),
    Case("empty_strided_shape", lambda m: m.empty_strided((2, 3), (3, 1)).shape, (),
         grad=False),
    Case("renorm", lambda m, a: m.renorm(a, 2, 0, 1.0), (A,)),
    Case("renorm_method_p1", lambda m, a: a.renorm(1, 1, 0.8), (A,)),
    Case("lstm_cell", lambda m, x, h, wi, wh: m.lstm_cell(x, (h, h), wi, wh),
         (A, B, R.randn(16, 4).astype(np.float32), R.randn(16, 4).astype(np.float32))),
    Case("gru_cell", lambda m, x, h, wi, wh: m.gru_cell(x, h, wi, wh),
         (A, B, R.randn(12, 4).astype(np.float32), R.randn(12, 4).astype(np.float32))),
    Case("rnn_tanh_cell", lambda m, x, h, wi, wh, b: m.rnn_tanh_cell(x, h, wi, wh, b[0], b[1]),
         (A, B, R.randn(4, 4).astype(np.float32), R.randn(4, 4).astype(np.float32),
          R.randn(2, 4).astype(np.float32))),
    Case("rnn_relu_cell", lambda m, x, h, wi, wh: m.rnn_relu_cell(x, h, wi, wh),
         (A, B, R.randn(4, 4).astype(np.float32), R.randn(4, 4).astype(np.float32))),
    Case("householder_product", lambda m, a, t: m.linalg.householder_product(a, t[0, :3]),
         (A.T.astype(np.float64).copy(), np.abs(B).astype(np.float64))),
    Case("orgqr", lambda m, a, t: m.orgqr(a, t[0, :2]),
         (A.T.astype(np.float64).copy(), np.abs(B).astype(np.float64))),
    Case("geqrf", lambda m, a: m.geqrf(a), (A.T.astype(np.float64).copy(),), grad=False),
    Case("geqrf_method", lambda m, a: a.geqrf().tau, (A.astype(np.float64),), grad=False),
    Case("ormqr", lambda m, a, o: m.ormqr(*m.geqrf(a.detach()), o),
         (A.T.astype(np.float64).copy(), R.randn(A.shape[1], 3))),
    Case("ormqr_method_right_transposed",
         lambda m, a, o: (lambda f, t: f.ormqr(t, o, left=False, transpose=True))(
             *m.geqrf(a.detach())), (A.T.astype(np.float64).copy(), R.randn(2, A.shape[1]))),
    Case("frombuffer", lambda m: m.frombuffer(bytearray(b"\x01\x00\x02\x00\x03\x00"),
                                              dtype=m.int16, offset=2), (), grad=False),
    Case("bartlett_window", lambda m: m.bartlett_window(7), (), grad=False),
    Case("blackman_window", lambda m: m.blackman_window(6, periodic=False), (), grad=False),
    Case("empty_permuted_shape", lambda m: m.empty_permuted((2, 3, 4), (0, 2, 1)).shape, (),
         grad=False),
    Case("ctc_loss", lambda m, lp: m.ctc_loss(lp.log_softmax(2), m.tensor([[1, 2], [2, 1]]),
                                              m.tensor([3, 3]), m.tensor([2, 2]), 0, 1, False),
         (R.randn(3, 2, 4).astype(np.float32),)),
    Case("histogramdd", lambda m, a: m.histogramdd(a[:, :2], bins=[3, 2]), (A,), grad=False),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_against_torch(case):
    check(case)


@pytest.mark.parametrize("rows", [[[1., 2.], [2., 1.]], [[-1., 0.], [0., 1.]],
                                  [[4., 1., 0.], [1., 3., 0.], [0., 0., -2.]],
                                  [[2., 0.], [0., 3.]]])
def test_cholesky_ex_info_and_error_as_torch(rows):
    import torch
    import torchlike
    a = np.array(rows, np.float64)
    t = torch.linalg.cholesky_ex(torch.tensor(a))
    ours = torchlike.linalg.cholesky_ex(torchlike.tensor(a))
    assert int(ours.info) == int(t.info) and ours.info.dtype == torchlike.int32
    if int(t.info) == 0:
        np.testing.assert_allclose(ours.L.numpy(), t.L.numpy(), rtol=1e-12)
        return
    with pytest.raises(torch.linalg.LinAlgError) as te:
        torch.linalg.cholesky(torch.tensor(a))
    with pytest.raises(torchlike.linalg.LinAlgError) as le:
        torchlike.linalg.cholesky(torchlike.tensor(a))
    assert str(le.value) == str(te.value)


def test_set_default_tensor_type_as_torch():
    import warnings
    import torch
    import torchlike
    for m in (torch, torchlike):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m.set_default_tensor_type(m.DoubleTensor)
            assert m.get_default_dtype() == m.float64 and m.tensor([1.5]).dtype == m.float64
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m.set_default_tensor_type("torch.FloatTensor")
            assert m.get_default_dtype() == m.float32
        finally:
            m.set_default_dtype(m.float32)


def test_symeig_was_removed_as_in_torch():
    import torch
    import torchlike
    for m in (torch, torchlike):
        with pytest.raises(RuntimeError, match="deprecated since version 1.9 and is now removed"):
            m.symeig(m.eye(2))


@pytest.mark.parametrize("name", ["vector_norm", "norm", "dist", "renorm_rows"])
@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_half_precision_norms_accumulate_in_float32_as_torch(name, dt):
    import torch
    import torchlike
    outs = []
    for m in (torch, torchlike):
        x = m.full((4, 1000), 100.0, dtype=getattr(m, dt))
        f = {"vector_norm": lambda: m.linalg.vector_norm(x, dim=1),
             "norm": lambda: m.linalg.norm(x[0]),
             "dist": lambda: m.dist(x[0], x[1] * 0),
             "renorm_rows": lambda: m.renorm(x, 2, 0, 5.0)[:, :3]}[name]
        outs.append(f().float().numpy() if m is torch else f().float().numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-2)


# torch's top-level in-place forms of nn ops: each writes into its input and returns it
INPLACE = {
    "selu_": lambda m, x: m.selu_(x),
    "celu_": lambda m, x: m.celu_(x, 2.0),
    "rrelu_eval": lambda m, x: m.rrelu_(x, 0.1, 0.3),
    "threshold_": lambda m, x: m.threshold_(x, 0.1, 20.0),
    "dropout_eval": lambda m, x: m.dropout_(x, 0.5, False),
    "dropout_p0": lambda m, x: m.dropout_(x, 0.0, True),
    "dropout_p1": lambda m, x: m.dropout_(x, 1.0, True),
    "alpha_dropout_eval": lambda m, x: m.alpha_dropout_(x, 0.5, False),
    "alpha_dropout_p1": lambda m, x: m.alpha_dropout_(x, 1.0, True),
    "functional_alpha_dropout_p1": lambda m, x: m.nn.functional.alpha_dropout(x, 1.0, True,
                                                                              inplace=True),
    "feature_dropout_eval": lambda m, x: m.feature_dropout_(x, 0.5, False),
    "feature_dropout_p1": lambda m, x: m.feature_dropout_(x, 1.0, True),
    "feature_alpha_dropout_p1": lambda m, x: m.feature_alpha_dropout_(x, 1.0, True),
    "dropout_bad_p_not_training": lambda m, x: m.dropout_(x, 1.5, False),
    "dropout_bad_p": lambda m, x: m.dropout(x, -1, True),
    "feature_alpha_dropout_bad_p": lambda m, x: m.feature_alpha_dropout(x, 2.0, True),
    "selu_leaf_requiring_grad": lambda m, x: m.selu_(x.requires_grad_()),
    "embedding_renorm_": lambda m, x: m.embedding_renorm_(x[0], m.tensor([0, 2]), 1.0, 2.0),
    "embedding_renorm_int32_repeated": lambda m, x: m.embedding_renorm_(
        x[1], m.tensor([[1, 1], [2, 1]], dtype=m.int32), 0.3, 1.0),
    "embedding_renorm_float_indices": lambda m, x: m.embedding_renorm_(
        x[0], m.tensor([0.0, 2.0]), 1.0, 2.0),
}


@pytest.mark.parametrize("name", INPLACE)
def test_toplevel_inplace_nn_forms_write_their_input(name):
    import torch

    import torchlike
    seen = []
    for m in (torch, torchlike):
        x = m.tensor(X)
        try:
            r = INPLACE[name](m, x)
        except Exception as e:  # noqa: BLE001
            seen.append((type(e).__name__, str(e)))
            continue
        base = x[0] if name.startswith("embedding_renorm_") and "int32" not in name else \
            x[1] if "int32" in name else x
        seen.append((r is base or r.data_ptr() == base.data_ptr(),
                     np.round(x.detach().numpy(), 5).tolist()))
    assert seen[1] == seen[0]
