"""An in-place op whose other operand aliases its target (``a.mul_(a)``, ``a.mul_(a.detach())``):
torch saved that operand before the write, so its backward raises the version error, where
torchlike used to compute a gradient; the aliasing cases torch accepts still work. A write that
reads a part of its own target (``x[1:].add_(x[:-1])``) raises torch's overlap error where torch
can decide the overlap, and reads the values from before the write where it cannot."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike

CASES = ["a.mul_(b)", "a.mul_(a)", "b.mul_(a)", "a.mul_(a.detach())", "a.mul_(2)",
         "a.mul_(b.detach())", "a.exp_()", "a.add_(a)", "a.mul_(x.detach())", "a.sub_(a)"]


def _outcome(m, case):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = m.tensor([4.0, 5.0, 6.0], requires_grad=True)
    a, b = x * 1, y * 1
    try:
        eval(case).sum().backward()
    except RuntimeError as e:
        return "RuntimeError", str(e)
    return "ok", x.grad.tolist(), None if y.grad is None else y.grad.tolist()


@pytest.mark.parametrize("case", CASES)
def test_in_place_with_an_aliased_operand_as_torch(case):
    assert _outcome(torchlike, case) == _outcome(torch, case)


def _both(fn):
    """``fn(m)`` for torch and torchlike: its result or the error's class and message."""
    out = []
    for m in (torch, torchlike):
        try:
            out.append(fn(m))
        except RuntimeError as e:
            out.append(("RuntimeError", str(e).split("\n")[0]))
    return out


def test_a_view_of_data_or_of_a_detached_tensor_writes_outside_autograd():
    """``p.data[2:4].fill_(1)`` (the LSTM forget-gate bias initialisation) and
    ``x.detach()[0:2].fill_(3)`` write into a leaf that requires grad, as torch allows."""
    def data_slice(m):
        p = m.nn.Parameter(m.zeros(8))
        p.data[2:4].fill_(1.0)
        lstm = m.nn.LSTM(3, 4)
        for name, b in lstm.named_parameters():
            if "bias" in name:
                b.data[4:8].fill_(1.0)
        return p.tolist(), p._version, lstm.bias_ih_l0.tolist()[4:8]

    def detached_slice(m):
        x = m.ones(4, requires_grad=True)
        x.detach()[0:2].fill_(3.0)
        return x.tolist(), x._version

    for fn in (data_slice, detached_slice):
        t, l = _both(fn)
        assert l == t


def test_data_writes_bump_their_own_version_counter():
    """``.data`` has a version counter of its own, shared by its views: writing through it never
    invalidates a saved tensor (torch then silently uses the new values: see DIFFERENCES)."""
    def run(m):
        q = m.nn.Parameter(m.ones(4))
        z = (q * q).sum()
        d = q.data
        d[1:2].fill_(5.0)
        z.backward()
        return q._version, d._version > 0, q.grad.tolist()

    t, l = _both(run)
    assert l[:2] == t[:2]
    assert t[2] == [2.0, 10.0, 2.0, 2.0]      # torch: the saved q's new values
    assert l[2] == [2.0, 2.0, 2.0, 2.0]       # torchlike: the values the forward saved


@pytest.mark.parametrize("how", ["data", "detach", "detach_of_a_view", "data_no_grad_operand"])
def test_a_detached_tensor_written_with_history_gets_it(how):
    """``p.data.mul_(w)`` / ``p.detach().mul_(w)`` with ``w`` requiring grad: the detached
    tensor is a tensor of its own for autograd and takes the op's history (torch), so its
    gradient reaches ``w``; the parameter's storage holds the values, its history unchanged."""
    def run(m):
        w = m.tensor([2., 3., 4.], requires_grad=how != "data_no_grad_operand")
        p = m.nn.Parameter(m.ones(4 if how == "detach_of_a_view" else 3))
        d = {"data": lambda: p.data, "detach": p.detach,
             "detach_of_a_view": lambda: p[1:].detach(),
             "data_no_grad_operand": lambda: p.data}[how]()
        out = d.mul_(w)
        info = (out is d, d.requires_grad, type(d.grad_fn).__name__, d.is_leaf, p.grad_fn,
                p.tolist(), d._version, p._version)
        if d.requires_grad:
            (d * m.arange(1., 4.)).sum().backward()
        return info, None if w.grad is None else w.grad.tolist(), p.grad

    t, l = _both(run)
    assert l == t


def test_a_view_of_a_detached_tensor_written_with_history_raises():
    """torch records ``p.detach()[1:].mul_(w)`` on the detached tensor (CopySlices); a
    torchlike detached tensor has no autograd identity for its views to write into: a clear
    error, not a gradient silently lost (DIFFERENCES.md)."""
    w = torchlike.tensor([2., 3.], requires_grad=True)
    for view in (lambda p: p.detach()[2:], lambda p: p.data[2:]):
        p = torchlike.nn.Parameter(torchlike.ones(4))
        with pytest.raises(RuntimeError, match="into a view of a detached tensor"):
            view(p).mul_(w)
        assert p.tolist() == [1.0] * 4
        with torchlike.no_grad():
            view(p).mul_(w)             # (no history to record: written as torch writes it)
        assert p.tolist() == [1.0, 1.0, 2.0, 3.0]


class _AsIs:
    """A custom Function returning its input as-is (its output is a view that forbids writes),
    filling it through ``.data`` (torchdiffeq's ``_UncheckedAssign``)."""

    @staticmethod
    def make(m):
        class Assign(m.autograd.Function):
            @staticmethod
            def forward(ctx, scratch, value, index):
                ctx.index = index
                scratch.data[index] = value
                return scratch

            @staticmethod
            def backward(ctx, g):
                return g, g[ctx.index], None
        return Assign


def _restricted_view(m, kind, v):
    """A view whose creation forbids in-place writes to it and its base, and its base."""
    if kind == "custom":
        k = m.zeros(2, 3)
        return _AsIs.make(m).apply(k, v * 2, (..., 0)), k
    if kind == "no_grad":
        base = v[:, None] * m.ones(2, 3)
        with m.no_grad():
            return base[0], base
    base = v[:, None] * m.ones(2, 3)
    return base.unbind(0)[0], base


@pytest.mark.parametrize("kind", ["custom", "no_grad", "multi"])
@pytest.mark.parametrize("how", ["data", "data_view", "data_of_view", "direct", "detach"])
def test_writes_through_data_leave_restricted_views_usable(kind, how):
    """A write through ``.data`` (its own version counter) is invisible to autograd: a view
    whose creation forbids writes (a custom Function's as-is output, a view made under no_grad,
    one output of ``unbind``) stays usable, as in torch; a direct write or one through
    ``detach()`` (the shared counter) makes its next use raise torch's error."""
    def run(m):
        v = m.tensor([1.0, 2.0], requires_grad=True)
        view, base = _restricted_view(m, kind, v)
        if how == "data":
            base.data[..., 1] = 5.0
        elif how == "data_view":
            base.data[0].fill_(5.0)
        elif how == "data_of_view":
            view.data.fill_(5.0)
        elif how == "direct":
            with m.no_grad():
                base[..., 1] = 5.0
        else:
            base.detach()[..., 1] = 5.0
        if kind == "custom":
            view = _AsIs.make(m).apply(view, v * 3, (..., 1))
        (view * m.arange(1.0, 1.0 + view.numel()).reshape(view.shape)).sum().backward()
        return (None if v.grad is None else v.grad.tolist(), view.tolist(), base._version,
                view._version)

    t, l = _both(run)
    assert l == t


@pytest.mark.parametrize("write", ["bias", "weight_no_input_grad", "weight_input_grad",
                                   "addmm_self_alias"])
def test_addmm_saves_what_torchs_backward_reads(write):
    """addmm (linear) keeps a matrix only for the other's gradient and never the added input:
    rewriting the bias, or the weight when the input needs no grad, leaves the backward valid;
    rewriting the weight the input's gradient reads raises torch's error."""
    def run(m):
        m.manual_seed(0)
        lin = m.nn.Linear(3, 2)
        x = m.ones(4, 3, requires_grad=write == "weight_input_grad")
        if write == "addmm_self_alias":
            c = m.ones(2, 2, requires_grad=True) * 1
            c.addmm_(c, m.ones(2, 2, requires_grad=True))
            c.sum().backward()
            return "ran"
        o = lin(x)
        with m.no_grad():
            (lin.bias if write == "bias" else lin.weight).mul_(2)
        o.sum().backward()
        return lin.weight.grad.tolist(), lin.bias.grad.tolist()

    t, l = _both(run)
    assert l == t


def test_assigning_data_shares_the_new_tensors_storage_as_torch():
    import torch as T

    def run(m):
        out = []
        q, y = m.zeros(4), m.ones(4)
        q.data = y
        q.add_(1)                                # (through q: y sees it; versions are own)
        out.append((q.tolist(), y.tolist(), q._version, y._version))
        r, z = m.zeros(3, requires_grad=True), m.ones(3)
        r.data = z
        z.mul_(3)                                # (through the new data: r sees it)
        out.append((r.tolist(), r.requires_grad, r.is_leaf))
        p, o = m.nn.Parameter(m.zeros(2)), m.nn.Parameter(m.ones(2))
        p.data = o.data                          # (another tensor's storage: shared)
        with m.no_grad():
            o.add_(1)
        out.append(p.tolist())
        s = m.zeros(2, 3)
        s.data = m.ones(3, 2).t()                # (its layout comes along)
        out.append((s.stride(), s.tolist()))
        w = m.nn.Linear(3, 2).weight
        w.data = w.data.double()                 # (a temporary: a plain root again)
        out.append((w.dtype == m.float64, w._alias is None if m is torchlike else True))
        return out
    assert run(torchlike) == run(T)


def test_assigning_data_to_a_tensor_with_views_moves_the_views_too():
    # DIFFERENCES.md: torch's views keep the old storage; torchlike's follow the tensor
    x = torchlike.zeros(4)
    v = x[:2]
    x.data = torchlike.ones(4)
    x.add_(1)
    assert v.tolist() == [2.0, 2.0]


def _vec(m):
    return m.arange(1.0, 7.0)


def _mat(m):
    return m.arange(1.0, 7.0).reshape(2, 3)


I = [0, 1]
# (target factory, the write): torch raises for a partial overlap of dense operands, and runs
# a full overlap (the same positions) or one it cannot decide
OVERLAP_CASES = {
    "add_ shifted": (_vec, lambda m, x: x[1:].add_(x[:-1])),
    "sub_ alpha shifted": (_vec, lambda m, x: x[1:].sub_(x[:-1], alpha=2)),
    "mul_ shifted": (_vec, lambda m, x: x[1:].mul_(x[:-1])),
    "pow_ shifted": (_vec, lambda m, x: x[1:].pow_(x[:-1])),
    "lerp_ shifted": (_vec, lambda m, x: x[1:].lerp_(x[:-1], 0.5)),
    "addcmul_ shifted": (_vec, lambda m, x: x[1:].addcmul_(x[:-1], x[:-1])),
    "clamp_ by a shifted bound": (_vec, lambda m, x: x[1:].clamp_(x[:-1])),
    "sub_ its own element": (_vec, lambda m, x: x.sub_(x[0])),
    "itruediv its last element": (_vec, lambda m, x: x.__itruediv__(x[-1])),
    "isub its first row": (_mat, lambda m, x: x.__isub__(x[0])),
    "add_ its transpose": (lambda m: m.arange(1.0, 5.0).reshape(2, 2),
                           lambda m, x: x.add_(x.t())),
    "mul out= shifted": (_vec, lambda m, x: m.mul(x[1:], 2, out=x[:-1])),
    "exp out= shifted": (_vec, lambda m, x: m.exp(x[1:], out=x[:-1])),
    "maximum out= shifted": (_vec, lambda m, x: m.maximum(x[1:], x[:-1], out=x[:-1])),
    "cat out= over its operands": (_vec, lambda m, x: m.cat([x[:2], x[2:3]], out=x[1:4])),
    "index_copy_ from itself": (_vec, lambda m, x: x.index_copy_(0, m.tensor(I), x[:2])),
    "index_add_ from itself": (_vec, lambda m, x: x.index_add_(0, m.tensor(I), x[:2])),
    "scatter_ from itself": (_vec, lambda m, x: x.scatter_(0, m.tensor(I), x[:2])),
    "put_ from itself": (_vec, lambda m, x: x.put_(m.tensor(I), x[:2])),
    "copy_ shifted": (_vec, lambda m, x: x[1:].copy_(x[:-1])),
    "copy_ from its transpose": (lambda m: m.arange(1.0, 5.0).reshape(2, 2),
                                 lambda m, x: x.copy_(x.t())),
    "index_put_ from itself": (_vec, lambda m, x: x.index_put_((m.tensor(I),), x[:2])),
    "copy_ its other half": (_vec, lambda m, x: x[3:].copy_(x[:3])),
    "copy_ a broadcast element": (_vec, lambda m, x: x.copy_(x[0])),
    # accepted by torch: the same positions, disjoint parts, self, or undecidable (not dense)
    "add_ itself": (_vec, lambda m, x: x.add_(x)),
    "add_ its detached self": (_vec, lambda m, x: x.add_(x.detach())),
    "add_ a view of all of it": (_vec, lambda m, x: x.add_(x.view(2, 3).view(6))),
    "add_ its other half": (_vec, lambda m, x: x[:3].add_(x[3:])),
    "add_ interleaved halves": (_vec, lambda m, x: x[::2].add_(x[1::2])),
    "row from row": (_mat, lambda m, x: x[1].__isub__(x[0])),
    "flip of itself": (_vec, lambda m, x: x.add_(x.flip(0))),
    "masked_scatter_ (not checked by torch)": (
        _vec, lambda m, x: x[1:].masked_scatter_(x[1:] > 3, x[:-1])),
}


def _overlap_outcome(m, case):
    make, write = OVERLAP_CASES[case]
    x = make(m)
    try:
        write(m, x)
    except RuntimeError as e:
        return "raised", str(e)
    return x.tolist()


@pytest.mark.parametrize("case", list(OVERLAP_CASES))
def test_a_write_reading_part_of_its_target_as_torch(case):
    assert _overlap_outcome(torchlike, case) == _overlap_outcome(torch, case)


def test_a_write_reading_an_undecidable_part_of_its_target_reads_the_old_values():
    # torch cannot decide the overlap of a broadcast column (not dense) and runs its kernel in
    # memory order, reading some values it already wrote; torchlike reads the values from
    # before the write (DIFFERENCES.md)
    x = torchlike.arange(1.0, 7.0).reshape(2, 3)
    x -= x[:, :1]
    assert x.tolist() == [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
    t = torch.arange(1.0, 7.0).reshape(2, 3)
    t -= t[:, :1]
    assert t.tolist() == [[0.0, 2.0, 3.0], [0.0, 5.0, 6.0]]


def test_data_plus_equals_update_as_torch():
    """``p.data += -lr * p.grad`` (makemore's update): the parameter takes the new values, keeps
    its version, its leaf status and its views (made before, they see the write); setting its
    own ``.data`` back is no change of storage."""
    from oracle import both_outcomes

    def fn(m):
        p = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        row = p[1]
        (p * p).sum().backward()
        before = p._version
        for _ in range(2):
            p.data += -0.1 * p.grad
        d = p.data
        d.mul_(2)
        p.data = d
        return (p.detach().clone(), row.detach().clone(), p._version - before, p.is_leaf,
                p.requires_grad, p.grad_fn is None, d._version)
    ours, theirs = both_outcomes(fn)
    np.testing.assert_allclose(np.asarray(ours[0]), theirs[0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ours[1]), theirs[1].numpy(), rtol=1e-6)
    assert ours[2:] == theirs[2:]
