"""Views, in-place ops and version counters against torch (issue 4).

Every scenario runs the same code on torch and torchlike and compares a log of reprs, versions
and gradients: each view op x each in-place family, through the base and through the view, with
and without autograd.
"""
import itertools

import numpy as np
import pytest
import torch

import torchlike

BASE = np.arange(24, dtype=np.float32).reshape(4, 6) / 4 - 2

VIEWS = {
    "slice": lambda b: b[1:3],
    "slice_step": lambda b: b[::2, 1:5:2],
    "select": lambda b: b[2],
    "select_col": lambda b: b[:, 1],
    "narrow": lambda b: b.narrow(1, 2, 3),
    "select_method": lambda b: b.select(0, 1),
    "view": lambda b: b.view(3, 8),
    "reshape": lambda b: b.reshape(2, 12),
    "flatten": lambda b: b.flatten(),
    "transpose": lambda b: b.transpose(0, 1),
    "t": lambda b: b.t(),
    "T": lambda b: b.T,
    "mT": lambda b: b.mT,
    "permute": lambda b: b.permute(1, 0),
    "unsqueeze": lambda b: b.unsqueeze(0),
    "squeeze": lambda b: b.unsqueeze(1).squeeze(1),
    "diagonal": lambda b: b.diagonal(),
    "unbind": lambda b: b.unbind(0)[1],
    "split": lambda b: b.split(2, dim=1)[1],
    "chunk": lambda b: b.chunk(2)[0],
    "view_as": lambda b: b.view_as(b),
    "nested": lambda b: b[1:].t()[2],
    "detach": lambda b: b.detach(),
    "data": lambda b: b.data,
}

INPLACE = {
    "add_": lambda v, m: v.add_(1.5),
    "mul_": lambda v, m: v.mul_(-2),
    "iadd": lambda v, m: v.__iadd__(3),
    "sub_tensor": lambda v, m: v.sub_(m.ones(v.shape[-1:])),
    "div_": lambda v, m: v.div_(4),
    "pow_": lambda v, m: v.pow_(2),
    "exp_": lambda v, m: v.exp_(),
    "relu_": lambda v, m: v.relu_(),
    "zero_": lambda v, m: v.zero_(),
    "fill_": lambda v, m: v.fill_(7),
    "copy_": lambda v, m: v.copy_(m.full(v.shape, 0.5)),
    "clamp_": lambda v, m: v.clamp_(-1, 1),
    "sigmoid_": lambda v, m: v.sigmoid_(),
    "floor_": lambda v, m: v.floor_(),
    "lerp_": lambda v, m: v.lerp_(m.zeros(v.shape), 0.25),
    "masked_fill_": lambda v, m: v.masked_fill_(v > 0, 9.0),
    "setitem": lambda v, m: v.__setitem__(0, 5.0),
    "setitem_mask": lambda v, m: v.__setitem__(v < 0, 0.0),
    "index_add_": lambda v, m: v.index_add_(0, m.tensor([0]), m.ones((1,) + tuple(v.shape[1:]))),
    "index_copy_": lambda v, m: v.index_copy_(0, m.tensor([0]),
                                             m.ones((1,) + tuple(v.shape[1:]))),
    "index_fill_": lambda v, m: v.index_fill_(0, m.tensor([0]), -1.0),
    "scatter_": lambda v, m: v.scatter_(0, m.zeros((1,) + tuple(v.shape[1:]), dtype=m.long),
                                        4.0),
    "scatter_add_": lambda v, m: v.scatter_add_(
        0, m.zeros((1,) + tuple(v.shape[1:]), dtype=m.long), m.ones((1,) + tuple(v.shape[1:]))),
    "put_": lambda v, m: v.put_(m.tensor([0, 2]), m.tensor([8.0, 9.0])),
}


def _run(m, view, op, through_view):
    b = m.tensor(BASE.copy())
    v = VIEWS[view](b)
    other = b[1]
    target = v if through_view else b
    INPLACE[op](target, m)
    return [repr(b), repr(v), repr(other), b._version, v._version, other._version]


@pytest.mark.parametrize("view,op", list(itertools.product(VIEWS, INPLACE)))
def test_write_through_view_is_seen_by_base_and_views(view, op):
    assert _run(torchlike, view, op, True) == _run(torch, view, op, True)


@pytest.mark.parametrize("view", VIEWS)
def test_write_to_base_is_seen_by_view(view):
    for op in ("add_", "mul_", "zero_"):
        assert _run(torchlike, view, op, False) == _run(torch, view, op, False)


def _autograd(m, view, op):
    x = m.tensor(BASE.copy(), requires_grad=True)
    w = m.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6))
    b = x * w
    v = VIEWS[view](b)
    INPLACE[op](v, m)
    loss = (b * b).sum() + (v * 3).sum()
    loss.backward()
    return (b.grad_fn.name(),
            np.asarray(b.detach().tolist()), np.asarray(x.grad.tolist()))


GRAD_VIEWS = [k for k in VIEWS if k not in ("detach", "data")]


@pytest.mark.parametrize("view,op", list(itertools.product(
    GRAD_VIEWS, ["add_", "mul_", "exp_", "zero_", "copy_", "clamp_", "masked_fill_", "setitem",
                 "index_add_", "scatter_"])))
def test_gradients_through_writes_into_views(view, op):
    ours, theirs = _outcome(_autograd, torchlike, view, op), _outcome(_autograd, torch, view, op)
    if theirs[0] == "raised":
        # torch refuses in-place writes into outputs of multi-view ops (unbind, split, chunk)
        assert ours[:2] == theirs[:2]
        assert "is a view and is being modified inplace" in ours[2]
        if view == "unbind" and op != "setitem":
            # (for `v[0] = x` torch names the select view; see DIFFERENCES.md)
            assert ours[2] == theirs[2]
        return
    assert ours[0] == theirs[0]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5)


def _outcome(fn, *args):
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001  (torch's exception is part of the expected outcome)
        return ("raised", type(e).__name__, str(e))


SCENARIOS = []


def scenario(fn):
    SCENARIOS.append(fn)
    return fn


@scenario
def value_written_into_view_gets_its_gradient(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    s = m.tensor([10.0, 20.0], requires_grad=True)
    y = x * 2
    y[1:].copy_(s * s)
    (y * m.tensor([1.0, 2.0, 3.0])).sum().backward()
    return [repr(y), repr(x.grad), repr(s.grad)]


@scenario
def nonleaf_inplace_chain(m):
    x = m.tensor([-1.0, 2.0, -3.0, 4.0], requires_grad=True)
    y = x * 2
    y.mul_(3)
    y.add_(1)
    y.relu_()     # relu_ saves its result: the next write makes backward fail, as in torch
    log = [repr(y), y._version]
    y.sum().backward(retain_graph=True)
    log.append(repr(x.grad))
    y.mul_(2)
    y.sum().backward()
    return log


@scenario
def versions_count_every_write(m):
    t = m.zeros(3)
    log = [t._version]
    t.add_(1)
    log.append(t._version)
    t += 1
    log.append(t._version)
    v = t[1:]
    v.mul_(2)
    log += [t._version, v._version]
    d = t.detach()
    d.zero_()
    log += [t._version, d._version, repr(t)]
    return log


@scenario
def base_and_is_view(m):
    b = m.zeros(2, 3)
    v = b[0]
    vv = v[1:]
    d = b.detach()
    return [v._base is b, vv._base is b, b._base is None, d._base is None, v._is_view(),
            d._is_view(), b.t()._base is b]


@scenario
def leaf_inplace_under_no_grad_allowed(m):
    p = m.tensor([1.0, 2.0], requires_grad=True)
    (p * p).sum().backward()
    with m.no_grad():
        p -= 0.1 * p.grad
        p.grad.zero_()
    p.data.mul_(2)
    p.data.add_(1)
    return [repr(p), repr(p.grad), p.is_leaf, p.requires_grad, p._version]


@scenario
def hook_stays_with_old_grad_fn(m):
    log = []
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: log.append(("hook", repr(g))))
    y.mul_(5)
    y.sum().backward()
    log.append(repr(x.grad))
    return log


@scenario
def retain_grad_moves_to_new_version(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.mul_(3)
    (y * y).sum().backward()
    return [repr(y.grad), repr(x.grad)]


@pytest.mark.parametrize("fn", SCENARIOS, ids=lambda f: f.__name__)
def test_mutation_semantics_match_torch(fn):
    assert _outcome(fn, torchlike) == _outcome(fn, torch)


ERRORS = {
    "saved_input_modified": lambda m: _modify_saved(m, lambda x: x * 1, lambda w: w * w),
    "saved_output_modified": lambda m: _modify_saved(m, lambda x: x * 1, lambda w: w.exp(),
                                                     modify_output=True),
    "saved_transposed_input": lambda m: _modify_saved(m, lambda x: x.t() * 1, lambda w: w * w),
    "leaf_modified_under_no_grad": lambda m: _modify_leaf(m),
    "inplace_on_leaf": lambda m: m.ones(2, requires_grad=True).mul_(2),
    "inplace_on_view_of_leaf": lambda m: m.ones(2, 3, requires_grad=True)[0].mul_(2),
    "write_to_expanded": lambda m: m.ones(3).expand(2, 3).add_(1),
}


def _modify_saved(m, make, use, modify_output=False):
    x = m.ones(2, 3, requires_grad=True)
    w = make(x)
    u = use(w)
    (u if modify_output else w).add_(1)
    u.sum().backward()


def _modify_leaf(m):
    w = m.ones(3, requires_grad=True)
    u = w * w
    with m.no_grad():
        w.add_(1)
    u.sum().backward()


@pytest.mark.parametrize("name", ERRORS)
def test_mutation_errors_match_torch(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](torch)
    with pytest.raises(Exception) as ours:
        ERRORS[name](torchlike)
    assert type(ours.value) is type(theirs.value)
    assert str(ours.value) == str(theirs.value)


def test_no_error_when_unsaved_input_is_modified():
    for m in (torch, torchlike):
        x = m.ones(3, requires_grad=True)
        w = x * 1
        u = w.exp()     # exp saves its result, not its input
        w.add_(1)
        u.sum().backward()
        assert np.allclose(np.asarray(x.grad.tolist()), np.e)


def _training_loop(m, steps=20):
    rng = np.random.default_rng(0)
    X = m.tensor(rng.standard_normal((16, 4)).astype(np.float32))
    Y = m.tensor(rng.standard_normal((16, 1)).astype(np.float32))
    w = m.tensor(rng.standard_normal((4, 1)).astype(np.float32) * 0.3, requires_grad=True)
    b = m.zeros(1, requires_grad=True)
    losses = []
    for step in range(steps):
        h = X @ w + b
        mask = h < -1.0
        h[mask] = 0
        h = h * 1.0
        h[0] = h[0] * 2
        loss = ((h - Y) ** 2).mean()
        loss.backward()
        with m.no_grad():
            w -= 0.1 * w.grad
            b -= 0.1 * b.grad
            w.grad.zero_()
            b.grad.zero_()
        w.data.clamp_(-0.8, 0.8) if hasattr(w.data, "clamp_") else None
        losses.append(round(loss.item(), 5))
    return losses, np.asarray(w.detach().tolist()), np.asarray(b.detach().tolist())


def test_mutation_heavy_training_loop_matches_torch():
    ours = _training_loop(torchlike)
    theirs = _training_loop(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-4, atol=1e-5)


def test_dead_views_are_not_kept_alive():
    import gc
    base = torchlike.zeros(8, 8)
    for i in range(200):
        base[i % 8].add_(1)
        base.t()[1].mul_(1)
    gc.collect()
    assert len(base.__dict__.get("_aliases", ())) == 0
    assert base._version == 400


LAYOUT_OPS = ["y.unsqueeze_(0)", "y.t_()", "y.squeeze_()", "y.squeeze_(0)", "y.transpose_(0, 1)",
              "y.swapaxes_(0, 1)", "y.swapdims_(0, 1)", "y.squeeze_((0,))"]


@pytest.mark.parametrize("code", LAYOUT_OPS)
def test_inplace_view_ops_match_torch(code):
    def run(m):
        x = m.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
        y = x * 2
        exec(code, {"y": y})
        (y * m.arange(3.0).reshape(y.shape)).sum().backward()
        return tuple(y.shape), y.grad_fn.name(), y._version, x.grad.tolist()
    assert run(torchlike) == run(torch)


@scenario
def views_keep_their_elements_when_base_is_transposed_in_place(m):
    z = m.arange(6.0).reshape(2, 3)
    v = z[0]
    d = z.detach()
    z.t_()
    v.add_(10)
    r = m.zeros(2, 3)
    w = r[0]
    r.t_()
    w.add_(10)
    a = m.arange(6.0)
    a.resize_(2, 3)
    b = m.arange(6.0).reshape(2, 3)
    u = b[:, 1]
    u.unsqueeze_(0)
    u.mul_(100)
    return [repr(z), repr(v), repr(d), z._version, repr(r), repr(w), repr(a), repr(b), repr(u)]


@scenario
def inplace_view_op_errors(m):
    log = []
    for code in ("x.unsqueeze_(0)", "x.t_()", "x[0].unsqueeze_(0)", "x.resize_(3, 2)"):
        x = m.ones(2, 3, requires_grad=True)
        try:
            exec(code, {"x": x})
            log.append("ok")
        except RuntimeError as e:
            log.append(str(e))
    return log


def _resize_log(m):
    """Element counts changed by ``resize_``: shrink, grow back within the storage torch kept
    (its elements again), reshape, empty and back, integer and float, with the versions."""
    log = []
    t = m.arange(6.0).reshape(2, 3).clone()
    r = t.resize_(4)
    log += [r is t, t.tolist(), tuple(t.shape), t.stride(), t._version]
    t.add_(10)
    t.resize_(2, 3)                      # (back within the storage: its last two again)
    log += [t.tolist(), t.stride(), t._version]
    t.resize_(1)
    t.resize_(3, 2)
    log += [t.tolist(), t.is_contiguous()]
    z = m.arange(4)
    z.resize_(0)
    log += [z.tolist(), z.dtype == m.int64]
    z.resize_(2, 2)
    log.append(z.tolist())
    e = m.empty(0)
    e.resize_(2, 3)
    log += [tuple(e.shape), e.stride()]
    e.resize_(0)
    log.append(tuple(e.shape))
    for sizes in ((-1,), (2, -1)):
        try:
            m.arange(4.0).resize_(*sizes)
        except RuntimeError as err:
            log.append(str(err))
    try:
        m.ones(2, requires_grad=True).resize_(3)
    except RuntimeError as err:
        log.append(str(err))
    return log


def test_resize_to_another_element_count_as_torch():
    assert _resize_log(torchlike) == _resize_log(torch)


def test_resize_growing_past_the_storage_gives_zeros():
    # (torch's new elements are uninitialized memory: any value is torch's; torchlike's are 0)
    t = torchlike.arange(3.0)
    t.resize_(5)
    assert t.tolist() == [0.0, 1.0, 2.0, 0.0, 0.0]
    with torchlike.no_grad():
        u = torchlike.ones(2, dtype=torchlike.float16)
        u.resize_(1)
        u.resize_(3)
    assert u.tolist() == [1.0, 1.0, 0.0] and u.dtype == torchlike.float16


def test_resize_of_a_view_to_another_element_count_is_a_clear_error():
    base = torchlike.arange(6.0)
    view = base[:2]
    with pytest.raises(NotImplementedError, match="resizes a view, a tensor a view reads"):
        view.resize_(4)
    with pytest.raises(NotImplementedError, match="resizes a view, a tensor a view reads"):
        base.resize_(10)
    assert base.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0] and view.tolist() == [0.0, 1.0]


@scenario
def reshape_of_non_contiguous_is_a_copy(m):
    x = m.arange(6.0).reshape(2, 3)
    y = x.t().reshape(-1)
    y.add_(100)
    z = x[1:].reshape(-1)
    z.add_(10)
    c = x.t().contiguous()
    c.mul_(0)
    s = x[:, ::2]
    a = m.ones(2, 3, requires_grad=True) * 1
    names = [a.t().reshape(-1).grad_fn.name(), a[1:].reshape(-1).grad_fn.name()]
    return [repr(x), y._base is None, z._base is x, x.t().is_contiguous(), x.is_contiguous(),
            s.is_contiguous(), x[1:].is_contiguous(), x.expand(2, 2, 3).is_contiguous(),
            names]


# ------------------------------------------------------------------ repeated elements (overlap)
# torch refuses an in-place write into a tensor several of whose elements are one memory
# location; a view of such a tensor that picks distinct locations is writable.

OVERLAP = {
    "expand_new_dim": lambda m: m.zeros(3).expand(2, 3),
    "expand_size_one": lambda m: m.zeros(3, 1).expand(3, 4),
    "expand_same_shape": lambda m: m.zeros(3, 1).expand(3, 1),
    "row_of_expanded": lambda m: m.zeros(3).expand(2, 3)[0],
    "column_of_expanded": lambda m: m.zeros(3).expand(2, 3)[:, 1],
    "expanded_transposed_row": lambda m: m.zeros(1, 3).expand(2, 3).t()[1],
    "expanded_then_viewed": lambda m: m.zeros(1).expand(3).view(3, 1).t(),
    "detached_expanded": lambda m: m.zeros(2).expand(2, 2).detach(),
    "detached_row_of_expanded": lambda m: m.zeros(2).expand(2, 2)[1].detach(),
    "diagonal_of_expanded": lambda m: m.zeros(3).expand(3, 3).diagonal(),
    "unbind_of_expanded": lambda m: m.zeros(2, 1).expand(2, 3).unbind(1)[0],
    "expand_of_empty": lambda m: m.zeros(0, 1).expand(0, 4),
}


def _write_outcome(m, make, write):
    base_holder = []
    try:
        v = make(m)
        write(v)
        return ("ok", v.tolist())
    except RuntimeError as e:
        return ("RuntimeError", str(e))


@pytest.mark.parametrize("name", OVERLAP)
@pytest.mark.parametrize("write", ["add_", "fill_", "zero_", "copy_", "setitem"])
def test_writes_into_repeated_elements_match_torch(name, write):
    how = {"add_": lambda v: v.add_(1),
           "fill_": lambda v: v.fill_(2.0),
           "zero_": lambda v: v.zero_(),
           "copy_": lambda v: v.copy_(v * 0 + 3),
           "setitem": lambda v: v.__setitem__(..., 4.0)}[write]
    assert _write_outcome(torchlike, OVERLAP[name], how) == \
        _write_outcome(torch, OVERLAP[name], how)


def test_a_view_op_declares_its_own_overlap_rule():
    """``defop(view=view_rule(overlap=...))``: the rule decides, the registry only calls it."""
    import jax.numpy as jnp
    from torchlike import _storage
    from torchlike._registry import Op, apply

    seen = []

    def rule(base, static):
        seen.append((tuple(base.shape), static["shape"]))
        return _storage.broadcasts(base, static)

    op = Op("probe_expand", lambda a, shape: jnp.broadcast_to(a, shape), saves=False,
            view=_storage.view_rule(overlap=rule))
    x = torchlike.zeros(3)
    y = apply(op, x, shape=(2, 3))
    assert seen == [((3,), (2, 3))]
    with pytest.raises(RuntimeError, match="more than one element"):
        y.add_(1)
    y[1].add_(1)                      # one row: distinct elements, written through to x
    assert x.tolist() == [1.0, 1.0, 1.0]
    # a rule saying "no repeats" and a predicate choosing when the op is a view
    op2 = Op("probe_view", lambda a, shape: jnp.reshape(a, shape), saves=False,
             view=_storage.view_rule(when=lambda kw: kw["shape"] != (3,),
                                     overlap=lambda b, kw: False))
    z = apply(op2, x, shape=(3, 1))
    z.mul_(2)
    assert x.tolist() == [2.0, 2.0, 2.0]
    w = apply(op2, x, shape=(3,))        # not a view: writes stay in w
    w.add_(1)
    assert x.tolist() == [2.0, 2.0, 2.0]


def test_fill_of_repeated_elements_in_grad_mode_raises_as_torch():
    """torch raises at backward (its CopySlices cannot write repeated elements); torchlike at
    the write itself, with torch's class and message (DIFFERENCES.md)."""
    def run(m):
        x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
        a = x * 2
        e = a.expand(2, 3)
        e.fill_(5.0)
        b = m.tensor([0.5, 1.5, 2.5], requires_grad=True)
        (a * b).sum().backward()
    with pytest.raises(RuntimeError) as theirs:
        run(torch)
    with pytest.raises(RuntimeError) as ours:
        run(torchlike)
    assert str(ours.value) == str(theirs.value)
    with torchlike.no_grad():          # unrecorded, the same write is allowed, as in torch
        x = torchlike.tensor([1.0, 2.0], requires_grad=True) * 1
        x.expand(3, 2).fill_(4.0)
    assert x.tolist() == [4.0, 4.0]


def test_iterating_a_tensor_yields_unbinds_views_as_torch():
    """``for t in x`` is ``x.unbind(0)``, as in torch: one op whose node (UnbindBackward0) every
    element shares, each element a view writing through to ``x``; a 0-d tensor refuses."""
    log = {}
    for m in (torch, torchlike):
        x = m.tensor(BASE[:3, :2].copy()).requires_grad_()
        y = x * 1
        rows = list(iter(y))
        out = [type(iter(y)).__name__, [type(r.grad_fn).__name__ for r in rows],
               len({id(r.grad_fn) for r in rows})]
        (rows[0] * rows[2]).sum().backward()
        out.append(x.grad.tolist())
        z = m.arange(4)
        elems = [e for e in z]
        elems[1].fill_(9)
        out += [z.tolist(), [int(e) for e in elems]]
        try:
            iter(m.tensor(1.0))
        except TypeError as e:
            out.append(str(e))
        log[m.__name__] = out
    assert log["torchlike"] == log["torch"]


def test_iterating_a_long_tensor_yields_selects_with_torchs_values_and_gradients():
    """Past ``ITER_UNBIND_MAX`` rows each element is a select (SelectBackward0, where torch's
    is UnbindBackward0: DIFFERENCES.md); values, write-through and gradients are torch's."""
    from torchlike import _tensor
    n = _tensor.ITER_UNBIND_MAX
    log = {}
    for m in (torch, torchlike):
        out = []
        for rows in (n, n + 1):
            x = m.arange(rows * 2.0).reshape(rows, 2).requires_grad_()
            y = x * 1
            els = list(y)
            out.append(len(els))
            (els[0] * els[-1]).sum().backward()
            out.append(x.grad.tolist())
            out.append(type(els[1].grad_fn).__name__)
        log[m.__name__] = out
    got, want = log["torchlike"], log["torch"]
    assert got[:3] == want[:3] and got[3:5] == want[3:5]
    assert (want[5], got[5]) == ("UnbindBackward0", "SelectBackward0")
