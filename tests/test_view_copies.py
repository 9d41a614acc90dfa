"""torch's ``*_copy`` functions (torchlike/_ops/view_copies.py) against torch: values, dtypes,
shapes, strides, own storage, grad_fn names, gradients, ``out=``, argument errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchlike
from oracle import both_outcomes

R = np.random.default_rng(0)
X3 = R.standard_normal((2, 3, 4)).astype(np.float32)
X2 = R.standard_normal((3, 2)).astype(np.float32)
Z = (R.standard_normal(3) + 1j * R.standard_normal(3)).astype(np.complex64)

# (id, copy name, input, args, kwargs, the view it copies: fn(m, x))
CASES = [
    ("view", "view_copy", X3, ([6, 4],), {}, lambda m, x: x.reshape(6, 4)),
    ("view_infer", "view_copy", X3, ((-1,),), {}, lambda m, x: x.reshape(-1)),
    ("view_kw", "view_copy", X3, (), {"size": (4, 6)}, lambda m, x: x.reshape(4, 6)),
    ("view_transposed", "view_copy", X3.transpose(1, 0, 2).copy(), ([6, 4],), {},
     lambda m, x: x.reshape(6, 4)),
    ("t", "t_copy", X2, (), {}, lambda m, x: x.t()),
    ("t_1d", "t_copy", X2[0].copy(), (), {}, lambda m, x: x.t()),
    ("transpose", "transpose_copy", X3, (0, 2), {}, lambda m, x: x.transpose(0, 2)),
    ("transpose_neg", "transpose_copy", X3, (-1, 1), {}, lambda m, x: x.transpose(-1, 1)),
    ("permute", "permute_copy", X3, ((2, 0, 1),), {}, lambda m, x: x.permute(2, 0, 1)),
    ("expand", "expand_copy", X2[:, :1].copy(), ((2, 3, 5),), {},
     lambda m, x: x.expand(2, 3, 5)),
    ("expand_implicit", "expand_copy", X2, ([4, 3, 2],), {"implicit": True},
     lambda m, x: x.expand(4, 3, 2)),
    ("select", "select_copy", X3, (1, 2), {}, lambda m, x: x.select(1, 2)),
    ("select_neg", "select_copy", X3, (-1, -1), {}, lambda m, x: x.select(-1, -1)),
    ("slice", "slice_copy", X3, (2, 1, 4, 2), {}, lambda m, x: x[:, :, 1:4:2]),
    ("slice_default", "slice_copy", X3, (), {}, lambda m, x: x[:]),
    ("slice_kw", "slice_copy", X3, (), {"dim": 1, "start": -2},
     lambda m, x: x[:, -2:]),
    ("slice_clamped", "slice_copy", X3, (2, 1, 100), {}, lambda m, x: x[:, :, 1:]),
    ("slice_empty", "slice_copy", X3, (2, 3, 1), {}, lambda m, x: x[:, :, 3:1]),
    ("diagonal", "diagonal_copy", X3, (1, 1, 2), {}, lambda m, x: x.diagonal(1, 1, 2)),
    ("diagonal_default", "diagonal_copy", X3, (), {}, lambda m, x: x.diagonal()),
    ("unsqueeze", "unsqueeze_copy", X3, (1,), {}, lambda m, x: x.unsqueeze(1)),
    ("unsqueeze_end", "unsqueeze_copy", X3, (-1,), {}, lambda m, x: x.unsqueeze(-1)),
    ("squeeze", "squeeze_copy", X3[:, :1].copy(), (), {}, lambda m, x: x.squeeze()),
    ("squeeze_dim", "squeeze_copy", X3[:, :1].copy(), (1,), {}, lambda m, x: x.squeeze(1)),
    ("squeeze_dims", "squeeze_copy", X3[:1, :1].copy(), ([0, 1],), {},
     lambda m, x: x.squeeze((0, 1))),
    ("unbind", "unbind_copy", X3, (1,), {}, lambda m, x: x.unbind(1)),
    ("unbind_default", "unbind_copy", X3, (), {}, lambda m, x: x.unbind()),
    ("split", "split_copy", X3, (2, 1), {}, lambda m, x: x.split(2, 1)),
    ("split_default", "split_copy", X3, (1,), {}, lambda m, x: x.split(1)),
    ("split_with_sizes", "split_with_sizes_copy", X3, ([1, 3], 2), {},
     lambda m, x: x.split([1, 3], 2)),
    ("as_strided", "as_strided_copy", X3, ((2, 2), (1, 2), 1), {},
     lambda m, x: x.as_strided((2, 2), (1, 2), 1)),
    ("as_strided_overlap", "as_strided_copy", X3, ((3, 3), (1, 1)), {},
     lambda m, x: x.as_strided((3, 3), (1, 1))),
    ("alias", "alias_copy", X3, (), {}, lambda m, x: x),
    ("unfold", "unfold_copy", X3, (2, 2, 1), {}, lambda m, x: x.unfold(2, 2, 1)),
    ("unfold_disjoint", "unfold_copy", X3, (2, 2, 2), {}, lambda m, x: x.unfold(2, 2, 2)),
    ("view_as_real", "view_as_real_copy", Z, (), {}, lambda m, x: m.view_as_real(x)),
]


def _run(m, name, x0, args, kwargs, grad):
    x = m.tensor(x0, requires_grad=grad)
    return x, getattr(m, name)(x, *args, **kwargs)


def _list(r):
    return list(r) if isinstance(r, (tuple, list)) else [r]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_copy_matches_torch(case):
    _id, name, x0, args, kwargs, view = case
    tx, tr = _run(torch, name, x0, args, kwargs, True)
    lx, lr = _run(torchlike, name, x0, args, kwargs, True)
    assert isinstance(tr, tuple) == isinstance(lr, tuple)
    touts, louts = _list(tr), _list(lr)
    assert len(louts) == len(touts)
    # the copy equals the view it copies (torch's own view, as the spec)
    expected = _list(view(torch, tx))
    for to, lo, ev in zip(touts, louts, expected):
        assert lo.dtype is getattr(torchlike, str(to.dtype).split(".")[1])
        assert tuple(lo.shape) == tuple(to.shape) == tuple(ev.shape)
        assert lo.stride() == to.stride()
        assert lo.is_contiguous() and to.is_contiguous()
        np.testing.assert_array_equal(np.asarray(lo.detach()), to.detach().numpy())
        np.testing.assert_array_equal(to.detach().numpy(), ev.detach().numpy())
        assert lo.requires_grad == to.requires_grad
        assert lo.grad_fn.name() == to.grad_fn.name()
        assert to.grad_fn.name().endswith("_copy")
    # gradients: a weighted sum of every output
    w = [R.standard_normal(tuple(t.shape)).astype(np.float32) for t in touts]
    sum(((t if not t.is_complex() else torch.view_as_real(t)) * torch.tensor(c)).sum()
        for t, c in zip(touts, w)).backward()
    sum((o * torchlike.tensor(c)).sum() for o, c in zip(louts, w)).backward()
    np.testing.assert_allclose(np.asarray(lx.grad), tx.grad.numpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_copy_has_its_own_storage(case):
    """Writes to the input do not reach the copy, writes to the copy do not reach the input
    (both as torch)."""
    _id, name, x0, args, kwargs, _view = case
    seen = {}
    for m in (torch, torchlike):
        x, r = _run(m, name, x0, args, kwargs, False)
        outs = _list(r)
        before = [np.array(o.tolist()) for o in outs]
        x.add_(1)
        after_input = [np.array(o.tolist()) for o in outs]
        for o in outs:
            o.mul_(0)
        seen[m.__name__] = (before, after_input, np.array(x.tolist()))
    (tb, ta, tx), (lb, la, lx) = seen["torch"], seen["torchlike"]
    for b, a in zip(tb, ta):
        np.testing.assert_array_equal(a, b)             # torch: the copy kept its values
    for b, a, tb_ in zip(lb, la, tb):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(b, tb_)
    np.testing.assert_array_equal(lx, tx)               # the input kept its values + 1
    np.testing.assert_array_equal(lx, np.asarray(x0) + 1)


def test_unbind_copy_outputs_share_their_grad_fn_name_and_sum_their_gradients():
    for m in (torch, torchlike):
        x = m.tensor(X2, requires_grad=True)
        a, b, c = m.unbind_copy(x)
        assert {t.grad_fn.name() for t in (a, b, c)} == {"UnbindBackward0_copy"}
        (a * 1 + b * 2 + c * 3).sum().backward()
        np.testing.assert_array_equal(np.asarray(x.grad.tolist()),
                                      np.array([[1, 1], [2, 2], [3, 3]], np.float32))


def test_view_copy_dtype_overload():
    x0 = R.standard_normal((2, 4)).astype(np.float32)
    for dt in ("int32", "float16", "uint8"):
        t = torch.view_copy(torch.tensor(x0, requires_grad=True), getattr(torch, dt))
        lt = torchlike.view_copy(torchlike.tensor(x0, requires_grad=True),
                                 getattr(torchlike, dt))
        assert tuple(lt.shape) == tuple(t.shape) and str(lt.dtype) == str(t.dtype)
        assert lt.requires_grad is t.requires_grad is False
        np.testing.assert_array_equal(np.asarray(lt), t.numpy())
    lt = torchlike.view_copy(torchlike.tensor(x0), dtype=torchlike.float16)
    assert tuple(lt.shape) == tuple(torch.view_copy(torch.tensor(x0), dtype=torch.float16).shape)


def test_detach_copy_keeps_requires_grad_and_its_backward_raises():
    for m in (torch, torchlike):
        x = m.tensor(X2, requires_grad=True)
        y = m.detach_copy(x)
        assert y.requires_grad and y.grad_fn.name() == "torch::autograd::NotImplemented"
        np.testing.assert_array_equal(np.asarray(y.tolist()), X2)
        with pytest.raises(RuntimeError, match="derivative for aten::detach_copy is not "
                                               "implemented"):
            y.sum().backward()
        with m.no_grad():
            assert not m.detach_copy(x).requires_grad
        assert not m.detach_copy(m.tensor(X2)).requires_grad


def test_view_as_complex_copy():
    for m in (torch, torchlike):
        z = m.view_as_complex_copy(m.tensor(X2.copy()))
        assert str(z.dtype).endswith("complex64") and tuple(z.shape) == (3,)
        np.testing.assert_array_equal(np.asarray(z.tolist()), X2[:, 0] + 1j * X2[:, 1])
        with pytest.raises(RuntimeError, match="view_as_complex_copy does not support "
                                               "automatic differentiation for outputs with "
                                               "complex dtype."):
            m.view_as_complex_copy(m.tensor(X2, requires_grad=True))
        with m.no_grad():
            assert not m.view_as_complex_copy(m.tensor(X2, requires_grad=True)).requires_grad


# ------------------------------------------------------------------ out=

OUT_CASES = [
    ("t_copy", lambda m, x, o: m.t_copy(x, out=o)),
    ("transpose_copy", lambda m, x, o: m.transpose_copy(x, 0, 1, out=o)),
    ("view_copy", lambda m, x, o: m.view_copy(x, [6], out=o)),
    ("expand_copy", lambda m, x, o: m.expand_copy(x, [2, 3, 2], out=o)),
    ("as_strided_copy", lambda m, x, o: m.as_strided_copy(x, (2, 2), (1, 2), out=o)),
    ("detach_copy", lambda m, x, o: m.detach_copy(x, out=o)),
    ("slice_copy", lambda m, x, o: m.slice_copy(x, 0, 1, out=o)),
    ("select_copy", lambda m, x, o: m.select_copy(x, 1, 0, out=o)),
    ("view_as_real_copy", lambda m, x, o: m.view_as_real_copy(
        m.view_as_complex(x.contiguous()), out=o)),
]


@pytest.mark.parametrize("name,fn", OUT_CASES, ids=[c[0] for c in OUT_CASES])
@pytest.mark.parametrize("out", ["empty", "wrong_shape", "float64", "int64", "requires_grad"])
def test_out(name, fn, out):
    def run(m):
        o = {"empty": lambda: m.empty(0), "wrong_shape": lambda: m.zeros(5),
             "float64": lambda: m.empty(0, dtype=m.float64),
             "int64": lambda: m.empty(0, dtype=m.int64),
             "requires_grad": lambda: m.zeros(0, requires_grad=True)}[out]()
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = fn(m, m.tensor(X2), o)
        return r is o, np.array(o.tolist()), o.dtype, len(w)
    got = both_outcomes(run)
    if got is not None:
        (li, lv, ld, lw), (ti, tv, td, tw) = got
        assert li and ti
        np.testing.assert_array_equal(lv, tv)
        assert str(ld) == str(td) and lw == tw


LIST_OUT = [
    ("unbind_copy", lambda m, x, o: m.unbind_copy(x, out=o), 3),
    ("split_copy", lambda m, x, o: m.split_copy(x, 2, out=o), 2),
    ("split_with_sizes_copy", lambda m, x, o: m.split_with_sizes_copy(x, [2, 1], out=o), 2),
]


@pytest.mark.parametrize("name,fn,n", LIST_OUT, ids=[c[0] for c in LIST_OUT])
@pytest.mark.parametrize("out", ["sized", "empty", "float64", "too_few", "a_tensor",
                                 "broadcast"])
def test_list_out(name, fn, n, out):
    shapes = {"unbind_copy": [(2,)] * 3, "split_copy": [(2, 2), (1, 2)],
              "split_with_sizes_copy": [(2, 2), (1, 2)]}[name]

    def run(m):
        o = {"sized": lambda: [m.zeros(s) for s in shapes],
             "empty": lambda: [m.empty(0) for _ in shapes],
             "float64": lambda: [m.zeros(s, dtype=m.float64) for s in shapes],
             "too_few": lambda: [m.zeros(s) for s in shapes[:-1]],
             "a_tensor": lambda: m.zeros(3),
             "broadcast": lambda: [m.zeros((4,) + s) for s in shapes]}[out]()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(m, m.tensor(X2), o)
        return r, [np.array(t.tolist()) for t in o]
    got = both_outcomes(run)
    if got is not None:
        (lr, lv), (tr, tv) = got
        assert lr is None and tr is None
        for a, b in zip(lv, tv):
            np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------ argument errors

ERRORS = [
    lambda m, x: m.view_copy(x, [5]),
    lambda m, x: m.view_copy(x, [-1, -1]),
    lambda m, x: m.view_copy(x, 6, 4),
    lambda m, x: m.view_copy(x, [6.0]),
    lambda m, x: m.t_copy(x),
    lambda m, x: m.t_copy(3),
    lambda m, x: m.transpose_copy(x, 0, 3),
    lambda m, x: m.transpose_copy(x, 0.5, 1),
    lambda m, x: m.permute_copy(x, (0, 1)),
    lambda m, x: m.permute_copy(x, (0, 1, 1)),
    lambda m, x: m.permute_copy(x, 2, 0, 1),
    lambda m, x: m.expand_copy(x, (3, 3, 4)),
    lambda m, x: m.expand_copy(x, (3, 4)),
    lambda m, x: m.expand_copy(x, 2, 3, 4),
    lambda m, x: m.select_copy(x, 1, 5),
    lambda m, x: m.select_copy(x, 3, 0),
    lambda m, x: m.select_copy(x, 0, 1.5),
    lambda m, x: m.slice_copy(x, 1, 0, 2, 0),
    lambda m, x: m.slice_copy(x, 1, 0, 2, -1),
    lambda m, x: m.slice_copy(x, 3),
    lambda m, x: m.slice_copy(x, 0, 0.5),
    lambda m, x: m.diagonal_copy(x, 0, 1, 1),
    lambda m, x: m.diagonal_copy(x, 0.0),
    lambda m, x: m.unsqueeze_copy(x, 4),
    lambda m, x: m.unsqueeze_copy(x, "a"),
    lambda m, x: m.squeeze_copy(x, 3),
    lambda m, x: m.squeeze_copy(x, 0.0),
    lambda m, x: m.unbind_copy(x, 3),
    lambda m, x: m.unbind_copy(x, 0.0),
    lambda m, x: m.split_copy(x, 0, 1),
    lambda m, x: m.split_copy(x, [1, 2], 1),
    lambda m, x: m.split_with_sizes_copy(x, [1, 1], 1),
    lambda m, x: m.split_with_sizes_copy(x, 2),
    lambda m, x: m.as_strided_copy(x, (5, 5), (5, 5)),
    lambda m, x: m.as_strided_copy(x, (2, 2), (-1, 1)),
    lambda m, x: m.as_strided_copy(x, 2, 1),
    lambda m, x: m.unfold_copy(x, 2, 5, 1),
    lambda m, x: m.unfold_copy(x, 2, 2, 0),
    lambda m, x: m.unfold_copy(x, 0.0, 1, 1),
    lambda m, x: m.view_as_real_copy(x),
    lambda m, x: m.view_as_complex_copy(x),
    lambda m, x: m.view_as_complex_copy(x.long()[..., :2]),
    lambda m, x: m.alias_copy([1.0]),
    lambda m, x: m.expand_copy(x, (2, 3, 4), implicit=1),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_argument_errors_match_torch(k):
    assert both_outcomes(lambda m: ERRORS[k](m, m.tensor(X3)), msg="first_line") is None


def test_differences_a_copy_is_two_nodes_and_its_out_is_written_detached():
    """DIFFERENCES.md: torch's ``t_copy`` is one node over ``x``'s AccumulateGrad, torchlike's
    the view's node then the copy's (same name, same gradient); an ``out=`` whose input
    requires grad is written detached (torch gives it a NotImplemented grad_fn: a backward
    through it raises either way)."""
    def run(m):
        x = m.ones(2, 3, requires_grad=True)
        y = m.t_copy(x)
        nxt = y.grad_fn.next_functions[0][0].name()
        o = m.empty(3, 2)
        m.t_copy(x, out=o)
        try:
            o.sum().backward()
            raised = None
        except RuntimeError as e:
            raised = type(e)
        return y.grad_fn.name(), nxt, o.requires_grad, raised

    assert run(torch) == ("TBackward0_copy", "torch::autograd::AccumulateGrad", True,
                          RuntimeError)
    assert run(torchlike) == ("TBackward0_copy", "TBackward0", False, RuntimeError)
