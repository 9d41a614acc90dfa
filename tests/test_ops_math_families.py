"""Complex numbers, integer/bit math, finite differences and integration, sample statistics,
and the uniform ``out=`` / in-place / nn-at-the-top-level surface, all against torch."""
import warnings

import numpy as np
import pytest
import torch

import torchlike
from oracle import Case, check, check_raises

R = np.random.RandomState(0)
A = R.randn(3, 4).astype(np.float32)
B = R.randn(3, 4).astype(np.float32)
A64 = R.randn(5).astype(np.float64)
X = np.sort(R.rand(4)).astype(np.float32) * 3
I = np.array([12, -18, 7, 0, 9], np.int64)
J = np.array([8, 12, -3, 5, 0], np.int64)
S = np.array([0, 1, 3, 63, 64], np.int64)
EDGE = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan], np.float32)
C = (R.randn(3, 2) + 1j * R.randn(3, 2)).astype(np.complex64)

CASES = [
    # complex numbers
    Case("angle_real", lambda m, a: m.angle(a), (A,)),
    Case("angle_edge", lambda m, a: m.angle(a), (EDGE,), grad=False),
    Case("angle_int", lambda m, a: m.angle(a), (I,), grad=False),
    Case("angle_complex", lambda m, c: m.angle(c), (C,), grad=False),
    Case("angle_method", lambda m, a: a.angle(), (A64,)),
    Case("complex", lambda m, a, b: m.complex(a, b).abs(), (A, B)),
    Case("polar", lambda m, a, b: m.view_as_real(m.polar(a.abs(), b)), (A, B)),
    Case("view_as_real", lambda m, a, b: m.view_as_real(m.complex(a, b)) * 2, (A, B)),
    Case("view_as_complex", lambda m, a: m.view_as_complex(a.reshape(3, 2, 2)).abs(), (A,)),
    Case("isreal", lambda m, c: m.isreal(c), (C,), grad=False),
    Case("isreal_real", lambda m, a: m.isreal(a), (A,), grad=False),
    # integer and bit math
    Case("gcd", lambda m, a, b: m.gcd(a, b), (I, J), grad=False),
    Case("lcm", lambda m, a, b: m.lcm(a, b), (I, J), grad=False),
    Case("gcd_method_inplace", lambda m, a, b: a.clone().gcd_(b), (I, J), grad=False),
    Case("lshift", lambda m, a, s: m.bitwise_left_shift(a, s), (I, S), grad=False),
    Case("rshift", lambda m, a, s: m.bitwise_right_shift(a, s), (I, S), grad=False),
    Case("lshift_op", lambda m, a: a << 3, (I,), grad=False),
    Case("rshift_op", lambda m, a: a >> 2, (I,), grad=False),
    Case("rlshift_op", lambda m, a: 1 << a.clamp(0, 10), (I,), grad=False),
    Case("ilshift", lambda m, a: a.clone().__ilshift__(1), (I,), grad=False),
    Case("frexp", lambda m, a: tuple(m.frexp(a)), (A,), grad=False),
    Case("frexp_edge", lambda m, a: tuple(m.frexp(a[:4])), (EDGE,), grad=False),
    Case("ldexp", lambda m, a, e: m.ldexp(a, e), (A, np.array([1, 2, 3, 0], np.int64))),
    Case("ldexp_negative_values", lambda m, a, e: m.ldexp(a, e), (A, np.array([1, -2, 3, -1])),
         grad=False),
    Case("nextafter", lambda m, a, b: m.nextafter(a, b), (A, B), grad=False),
    Case("heaviside", lambda m, a: m.heaviside(a, m.tensor(0.5)), (EDGE,), grad=False),
    # finite differences and integration
    Case("diff", lambda m, a: m.diff(a), (A,)),
    Case("diff_dim0_n2", lambda m, a: m.diff(a, n=2, dim=0), (A,)),
    Case("diff_prepend_append", lambda m, a, b: m.diff(a, dim=1, prepend=b[:, :1],
                                                       append=b[:, 1:]), (A, B)),
    Case("diff_int", lambda m, a: m.diff(a), (I,), grad=False),
    Case("diff_bool", lambda m, a: m.diff(a > 0), (A,), grad=False),
    Case("diff_method", lambda m, a: a.diff(dim=0), (A,)),
    Case("gradient", lambda m, a: m.gradient(a), (A,)),
    Case("gradient_spacing_dim", lambda m, a: m.gradient(a, spacing=2.0, dim=1), (A,)),
    Case("gradient_edge2", lambda m, a: m.gradient(a, edge_order=2, dim=1), (A,)),
    Case("gradient_coords", lambda m, a, x: m.gradient(a, spacing=(x,), dim=1), (A, X)),
    Case("trapezoid", lambda m, a: m.trapezoid(a), (A,)),
    Case("trapezoid_dx", lambda m, a: m.trapezoid(a, dx=0.5, dim=0), (A,)),
    Case("trapezoid_x", lambda m, a, x: m.trapezoid(a, x), (A, X)),
    Case("trapz", lambda m, a, x: m.trapz(a, x, dim=-1), (A, X)),
    Case("cumulative_trapezoid", lambda m, a: m.cumulative_trapezoid(a), (A,)),
    Case("cumulative_trapezoid_x", lambda m, a, x: m.cumulative_trapezoid(a, x), (A, X)),
    # statistics
    Case("cov", lambda m, a: m.cov(a), (A,)),
    Case("cov_correction0", lambda m, a: m.cov(a, correction=0), (A,)),
    Case("cov_1d", lambda m, a: m.cov(a), (A64,)),
    Case("cov_weights", lambda m, a, w: m.cov(a, fweights=m.tensor([1, 2, 1, 3]), aweights=w),
         (A, X)),
    Case("corrcoef", lambda m, a: m.corrcoef(a), (A,)),
    Case("histogram", lambda m, a: tuple(m.histogram(a, 5)), (A,), grad=False),
    Case("histogram_range_density", lambda m, a: tuple(m.histogram(a, 4, range=(-1., 1.),
                                                                   density=True)),
         (A,), grad=False),
    Case("histogram_edges_weight", lambda m, a, w: tuple(m.histogram(
        a, m.tensor([-2., 0., 0.5, 2.]), weight=w)), (A, B), grad=False),
    # nn ops at the top level and as methods
    Case("softmax_top", lambda m, a: m.softmax(a, 1), (A,)),
    Case("softmax_method", lambda m, a: a.softmax(-1), (A,)),
    Case("log_softmax_top", lambda m, a: m.log_softmax(a, 0, dtype=m.float64), (A,)),
    Case("log_softmax_method", lambda m, a: a.log_softmax(dim=1), (A,)),
    Case("dropout_eval", lambda m, a: m.dropout(a, 0.5, False), (A,)),
    Case("layer_norm_top", lambda m, a: m.layer_norm(a, (4,)), (A,)),
    Case("conv1d_top", lambda m, a, w: m.conv1d(a.reshape(1, 3, 4), w.reshape(3, 1, 4)[:, :, :2],
                                                groups=3), (A, B)),
    Case("embedding_top", lambda m, w: m.embedding(w, m.tensor([[0, 2], [1, 1]])), (A,)),
    Case("relu_inplace_top", lambda m, a: m.relu_(a.clone()), (A,), grad=False),
    Case("sin_inplace_top", lambda m, a: m.sin_(a.clone()), (A,), grad=False),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_against_torch(case):
    check(case)


RAISES = [
    ("gcd_float", lambda m, a: m.gcd(a, a), (A,)),
    ("lshift_float", lambda m, a: m.bitwise_left_shift(a, a), (A,)),
    ("frexp_int", lambda m, a: m.frexp(a), (I,)),
    ("complex_int", lambda m, a: m.complex(a, a), (I,)),
    ("complex_mixed", lambda m, a, b: m.complex(a, b), (A[0, :4], A64[:4])),
    ("view_as_real_real", lambda m, a: m.view_as_real(a), (A,)),
    ("view_as_complex_shape", lambda m, a: m.view_as_complex(a), (A,)),
    ("diff_0d", lambda m: m.diff(m.tensor(1.)), ()),
    ("diff_negative_n", lambda m, a: m.diff(a, n=-1), (A,)),
    ("cov_3d", lambda m, a: m.cov(a.reshape(1, 3, 4)), (A,)),
    ("heaviside_mixed", lambda m, a: m.heaviside(a, m.tensor(1, dtype=m.float64)), (A,)),
    ("gradient_too_short", lambda m: m.gradient(m.tensor([1.]), edge_order=1), ()),
]


@pytest.mark.parametrize("name,fn,inputs", RAISES, ids=[r[0] for r in RAISES])
def test_raises_as_torch(name, fn, inputs):
    check_raises(fn, *inputs)


# ------------------------------------------------------------------ out= through one writer

OUT_CASES = [
    ("add", lambda m, a, b, **k: m.add(a, b, **k), (A, B)),
    ("sub", lambda m, a, b, **k: m.sub(a, b, alpha=2, **k), (A, B)),
    ("mul", lambda m, a, b, **k: m.mul(a, b, **k), (A, B)),
    ("div", lambda m, a, b, **k: m.div(a, b, **k), (A, B)),
    ("exp", lambda m, a, **k: m.exp(a, **k), (A,)),
    ("log", lambda m, a, **k: m.log(a.abs(), **k), (A,)),
    ("tanh", lambda m, a, **k: m.tanh(a, **k), (A,)),
    ("sigmoid", lambda m, a, **k: m.sigmoid(a, **k), (A,)),
    ("sqrt", lambda m, a, **k: m.sqrt(a.abs(), **k), (A,)),
    ("sin", lambda m, a, **k: m.sin(a, **k), (A,)),
    ("cos", lambda m, a, **k: m.cos(a, **k), (A,)),
    ("sum_dim", lambda m, a, **k: m.sum(a, 0, **k), (A,)),
    ("mean_dim", lambda m, a, **k: m.mean(a, 1, **k), (A,)),
    ("matmul", lambda m, a, b, **k: m.matmul(a, b.T, **k), (A, B)),
    ("softmax", lambda m, a, **k: m.softmax(a, 1, **k), (A,)),
    ("angle", lambda m, a, **k: m.angle(a, **k), (A,)),
    ("diff", lambda m, a, **k: m.diff(a, **k), (A,)),
    ("clamp", lambda m, a, **k: m.clamp(a, -0.5, 0.5, **k), (A,)),
    ("where", lambda m, a, b, **k: m.where(a > 0, a, b, **k), (A, B)),
    ("cat", lambda m, a, b, **k: m.cat([a, b], **k), (A, B)),
    ("linalg_vector_norm", lambda m, a, **k: m.linalg.vector_norm(a, dim=1, **k), (A,)),
]


@pytest.mark.parametrize("name,fn,inputs", OUT_CASES, ids=[c[0] for c in OUT_CASES])
def test_out_holds_torch_values_and_is_returned(name, fn, inputs):
    expect = fn(torch, *[torch.tensor(x) for x in inputs])
    ours_in = [torchlike.tensor(x) for x in inputs]
    out = torchlike.zeros(*expect.shape, dtype=getattr(torchlike, str(expect.dtype)[6:]))
    r = fn(torchlike, *ours_in, out=out)
    assert r is out
    np.testing.assert_allclose(out.numpy(), expect.numpy(), rtol=1e-5, atol=1e-6)


def test_out_resize_cast_and_errors_as_torch():
    for m in (torch, torchlike):
        a = m.ones(3)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            o = m.zeros(2)
            m.add(a, a, out=o)
        assert list(o.shape) == [3] and o.tolist() == [2.0, 2.0, 2.0]
        assert any("was resized since it had shape [2]" in str(x.message) for x in w)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            o = m.zeros(0)
            m.exp(a, out=o)
        assert list(o.shape) == [3] and not w
        o = m.zeros(3, dtype=m.float64)
        m.exp(a, out=o)
        assert o.dtype == m.float64
        o = m.zeros(3)
        m.add(m.ones(3, dtype=m.int64), 1, out=o)
        assert o.tolist() == [2.0, 2.0, 2.0]
    check_raises(lambda m: m.add(m.ones(3), 1, out=m.zeros(3, dtype=m.int64)),
                 match="can't be cast to the desired output type Long")
    check_raises(lambda m: m.add(m.ones(3), 1, out=[1]))
    check_raises(lambda m: m.exp(m.ones(3, requires_grad=True), out=m.zeros(3)),
                 match="don't support automatic differentiation")
    check_raises(lambda m: m.exp(m.ones(3), out=m.zeros(3, requires_grad=True)),
                 match="don't support automatic differentiation")


def test_out_tuple_results():
    for m in (torch, torchlike):
        x = m.tensor([[1., 5., 2.], [7., 0., 3.]])
        v, i = m.zeros(2), m.zeros(2, dtype=m.int64)
        r = m.max(x, 1, out=(v, i))
        assert r[0] is v and r[1] is i
        assert v.tolist() == [5.0, 7.0] and i.tolist() == [1, 0]



def test_ldexp_gradient_negative_integer_exponent():
    """DIFFERENCES.md: torch's gradient is 0 here (an integer power in its derivative)."""
    x = torchlike.tensor([3.0], requires_grad=True)
    torchlike.ldexp(x, torchlike.tensor([-1])).sum().backward()
    assert x.grad.tolist() == [0.5]
    t = torch.tensor([3.0], requires_grad=True)
    torch.ldexp(t, torch.tensor([-1])).sum().backward()
    assert t.grad.tolist() == [0.0]


# ------------------------------------------------------------------ deprecated, control flow,
# legacy types, tensor metadata

MORE = [
    Case("range_float", lambda m: m.range(0, 1, 0.25), (), grad=False),
    Case("range_long", lambda m: m.range(1, 4, dtype=m.long), (), grad=False),
    Case("frobenius_norm", lambda m, a: m.frobenius_norm(a, (0, 1)), (A,)),
    Case("nuclear_norm", lambda m, a: m.nuclear_norm(a, (0, 1), True), (A,)),
    Case("norm_except_dim", lambda m, a: m.norm_except_dim(a, 2, 0), (A,)),
    Case("cond_true", lambda m, a: m.cond(m.tensor(True), lambda x: x + 1, lambda x: x - 1,
                                          (a,)), (A,)),
    Case("cond_false", lambda m, a: m.cond(False, lambda x: x + 1, lambda x: x * 3, (a,)), (A,)),
    Case("while_loop", lambda m: m.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2),
                                              (m.tensor(0), m.tensor(1.)))[1], (), grad=False),
    Case("split_with_sizes", lambda m, a: m.split_with_sizes(a, [1, 3], 1), (A,)),
    Case("unsafe_chunk", lambda m, a: m.unsafe_chunk(a, 2, 1), (A,)),
    Case("put_top", lambda m, a: m.put(a, m.tensor([0, 5]), m.tensor([9., 8.])), (A,)),
    Case("resize_method", lambda m, a: a.resize(12), (A,), grad=False),
    Case("new_data", lambda m, a: a.new([1, 2]), (A,), grad=False),
    Case("apply_", lambda m, a: a.clone().apply_(lambda v: v * 3 + 1), (A,), grad=False),
    Case("legacy_long", lambda m: m.LongTensor([1, 2]), (), grad=False),
    Case("legacy_float_from_list", lambda m: m.FloatTensor([[1, 2]]), (), grad=False),
]


@pytest.mark.parametrize("case", MORE, ids=str)
def test_more_against_torch(case):
    check(case)


def test_removed_linalg_functions_raise_as_torch():
    for name in ["solve", "lstsq", "eig", "symeig", "matrix_rank"]:
        check_raises(lambda m, n=name: getattr(m, n)(m.eye(2), m.eye(2)) if n in
                     ("solve", "lstsq") else getattr(m, n)(m.eye(2)),
                     match="deprecated since version 1.9 and is now removed")


def test_legacy_types_and_metadata_as_torch():
    for m in (torch, torchlike):
        x = m.LongTensor([1, 2])
        assert isinstance(x, m.LongTensor) and not isinstance(x, m.FloatTensor)
        assert isinstance(m.ones(2), m.FloatTensor)
        assert list(m.FloatTensor(2, 3).shape) == [2, 3]
        assert x.type() == "torch.LongTensor"
        assert m.get_device(x) == -1 and x.get_device() == -1
        assert m.is_signed(x) and not m.is_inference(x)
        assert not x.is_meta and not x.is_pinned() and x.dim_order() == (0,)
        assert (1 in x) and (5 not in x)
        assert [int(v) for v in reversed(m.arange(3))] == [2, 1, 0]
        assert m.ones(2, 2).new(3).shape == (3,)
        with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
            x.pin_memory()
