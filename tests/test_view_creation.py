"""Views whose creation restricts what may be written, against torch (its "creation meta").

* a view made with grad mode off (or in inference mode) of a tensor that requires grad: it
  requires grad (its gradients go nowhere, its hooks never run), an in-place write with grad
  mode on raises, and so does a view of it; a view made in inference mode of a normal tensor is
  a normal tensor;
* a custom Function's output that is a view (of an input, or of a tensor its forward made) or
  an input returned as it is: a view of it (``_base``, writes show through), which may not be
  written in place with grad; with several outputs, the multiple-views rule;
* after its storage is written (the view itself under no_grad, its base, another view), such a
  view's next use raises torch's message, and its repr names its grad_fn ``Invalid``.

Each case runs the same code on both libraries and compares what it returns or raises.
"""
import re

import pytest
import torch

import torchlike


def _outcome(fn, m):
    try:
        out = fn(m)
    except Exception as e:  # noqa: BLE001
        return ("raises", type(e).__name__, str(e))
    return ("returns", re.sub(r" at 0x[0-9a-f]+", "", repr(out)))


def _view_made_without_grad(m):
    x = m.ones(4, requires_grad=True)
    a = x * 1
    with m.no_grad():
        v = a[:2]
    return x, a, v


def _flags(m):
    x, a, v = _view_made_without_grad(m)
    return v.requires_grad, v.is_leaf, v.grad_fn, v._base is a


def _used_with_grad(m):
    x, a, v = _view_made_without_grad(m)
    y = v * 2
    y.sum().backward()
    return y.requires_grad, type(y.grad_fn).__name__, x.grad, v.grad


def _written_with_grad(m):
    _x, _a, v = _view_made_without_grad(m)
    v.mul_(2)


def _written_without_grad(m):
    _x, a, v = _view_made_without_grad(m)
    with m.no_grad():
        v.mul_(2)
    return v, a


def _then_used(m):
    _x, _a, v = _written_without_grad(m)
    return v * 2


def _base_written(m):
    _x, a, v = _view_made_without_grad(m)
    a.mul_(2)
    return v


def _base_written_then_used(m):
    return _base_written(m) + 1


def _leaf_view(m):
    x = m.ones(4, requires_grad=True)
    with m.no_grad():
        v = x[:2]
    return v


def _leaf_view_written(m):
    _leaf_view(m).mul_(2)


def _leaf_written_under_no_grad(m):
    x = m.ones(4, requires_grad=True)
    with m.no_grad():
        v = x[:2]
        x.mul_(2)           # (an optimizer's step)
    return v


def _leaf_written_then_used(m):
    return _leaf_written_under_no_grad(m) * 3


def _view_of_it(m):
    _x, _a, v = _view_made_without_grad(m)
    w = v[:1]
    return w.requires_grad, type(w.grad_fn).__name__


def _view_of_it_written(m):
    _x, _a, v = _view_made_without_grad(m)
    v[:1].mul_(2)


def _both_without_grad(m):
    x = m.ones(4, requires_grad=True)
    a = x * 1
    with m.no_grad():
        v = a[:2]
        v.mul_(2)
    return a


def _plain_tensor_view(m):
    y = m.ones(3)
    with m.no_grad():
        u = y[:1]
    u.mul_(2)
    return y, u.requires_grad


def _detached_view(m):
    x = m.ones(4, requires_grad=True)
    a = x * 1
    v = a.detach()[:2]
    v.mul_(2)
    return a


def _split_written_without_grad(m):
    x = m.ones(4, requires_grad=True)
    s = (x * 1).split(2)
    with m.no_grad():
        s[0].mul_(2)
    return s[0]


def _split_written_then_used(m):
    return _split_written_without_grad(m) * 2


def _hook_on_it(m):
    x = m.ones(4, requires_grad=True)
    with m.no_grad():
        v = x[:2]
    seen = []
    v.register_hook(seen.append)
    (v * 2).sum().backward()
    return seen, x.grad


def _requires_grad_off(m):
    x = m.ones(4, requires_grad=True)
    with m.no_grad():
        v = x[:2]
    v.requires_grad_(False)
    return v.requires_grad


def _inference_view_of_a_normal_tensor(m):
    t = m.ones(3)
    with m.inference_mode():
        v = t[:2]
    v.mul_(2)
    return t, v.is_inference()


def _inference_view_written_in_normal_mode(m):
    x = m.ones(3, requires_grad=True)
    with m.inference_mode():
        v = x[:2]
    return v.is_inference(), v.requires_grad, v.mul_(2)


def _inference_view_base_written(m):
    x = m.ones(3, requires_grad=True)
    a = x * 1
    with m.inference_mode():
        v = a[:2]
    a.mul_(2)
    return v * 2


def _view_of_inference_view_written(m):
    x = m.ones(3, requires_grad=True)
    a = x * 1
    with m.inference_mode():
        v = a[:2]
    w = v[:1]
    return type(w.grad_fn).__name__, w.mul_(2)


NO_GRAD_CASES = [_hook_on_it, _requires_grad_off, _inference_view_of_a_normal_tensor,
                 _inference_view_written_in_normal_mode, _inference_view_base_written,
                 _view_of_inference_view_written,
                 _flags, _used_with_grad, _written_with_grad, _written_without_grad, _then_used,
                 _base_written, _base_written_then_used, _leaf_view, _leaf_view_written,
                 _leaf_written_under_no_grad, _leaf_written_then_used, _view_of_it,
                 _view_of_it_written, _both_without_grad, _plain_tensor_view, _detached_view,
                 _split_written_without_grad, _split_written_then_used]


@pytest.mark.parametrize("case", NO_GRAD_CASES, ids=lambda f: f.__name__.strip("_"))
def test_views_made_without_grad_as_torch(case):
    assert _outcome(case, torchlike) == _outcome(case, torch)


def _functions(m):
    class View(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view(-1)

        @staticmethod
        def backward(ctx, g):
            return g.view(2, 2) * 2

    class Same(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 3

    class Made(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return (x * 2).view(-1)

        @staticmethod
        def backward(ctx, g):
            return g.view(2, 2) * 2

    class ViewAs(m.autograd.Function):     # (a gradient reversal layer's forward)
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x)

        @staticmethod
        def backward(ctx, g):
            return -g

    class Two(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[0], x.clone()

        @staticmethod
        def backward(ctx, g1, g2):
            return g2

    return {"View": View, "Same": Same, "Made": Made, "ViewAs": ViewAs, "Two": Two}


def _fn_case(name, body):
    def case(m):
        x = m.ones(2, 2, requires_grad=True)
        return body(_functions(m)[name], x, m)
    case.__name__ = f"{name}_{body.__name__}"
    return case


def _is_view(F, x, m):
    y = F.apply(x)
    return y._base is x, y.is_leaf, y._is_view(), type(y.grad_fn).__name__


def _written(F, x, m):
    F.apply(x * 1).mul_(2)


def _written_without_grad_after(F, x, m):
    y = F.apply(x * 1)
    with m.no_grad():
        y.mul_(2)
    return y


def _source_written(F, x, m):
    b = x * 1
    y = F.apply(b)
    with m.no_grad():
        b.add_(1)
    return y


def _view_of_output_written(F, x, m):
    F.apply(x * 1)[0].add_(1)


def _gradient(F, x, m):
    y = F.apply(x)
    (y * 1).sum().backward()
    return x.grad


def _no_grad_call(F, x, m):
    with m.no_grad():
        y = F.apply(x * 1)
        y.mul_(2)
    return y


FUNCTION_CASES = [_fn_case(n, b) for n in ("View", "Same", "Made", "ViewAs")
                  for b in (_is_view, _written, _written_without_grad_after, _source_written,
                            _view_of_output_written, _gradient, _no_grad_call)]


@pytest.mark.parametrize("case", FUNCTION_CASES, ids=lambda f: f.__name__)
def test_custom_function_view_outputs_as_torch(case):
    assert _outcome(case, torchlike) == _outcome(case, torch)


def test_custom_function_with_several_outputs_has_the_multiple_views_rule():
    def case(m):
        x = m.ones(2, 2, requires_grad=True)
        a, _b = _functions(m)["Two"].apply(x * 1)
        a.mul_(2)
    out = _outcome(case, torchlike)
    assert out == _outcome(case, torch)
    assert "returns multiple views" in out[2]


def test_reading_grad_fn_of_an_invalid_view_gives_a_node_named_invalid():
    """DIFFERENCES.md: torch raises at the read of ``grad_fn`` itself; torchlike gives a node
    named ``Invalid`` and raises torch's message at the view's next recorded use."""
    x = torchlike.ones(4, requires_grad=True)
    with torchlike.no_grad():
        v = x[:2]
        x.mul_(2)
    assert v.grad_fn.name() == "Invalid"
    assert "grad_fn=<Invalid>" in repr(v)
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and its base"):
        v * 2
    with torchlike.no_grad():
        assert (v * 2).tolist() == [4.0, 4.0]      # (no history read: as torch)
    tx = torch.ones(4, requires_grad=True)
    with torch.no_grad():
        tv = tx[:2]
        tx.mul_(2)
    with pytest.raises(RuntimeError, match="A view was created in no_grad mode and its base"):
        tv.grad_fn


def _leaf_that_is_a_view(m):
    return m.arange(6.).reshape(2, 3).requires_grad_()


@pytest.mark.parametrize("write", ["mul_", "t_", "zero_", "setitem"])
def test_writing_a_view_that_is_a_leaf_raises_torchs_view_of_a_leaf_error(write):
    """A view that was made to require grad (its base a leaf that does not) is "a view of a leaf
    Variable" to torch's in-place check."""
    def case(m):
        x = _leaf_that_is_a_view(m)
        {"mul_": lambda: x.mul_(2), "t_": x.t_, "zero_": x.zero_,
         "setitem": lambda: x.__setitem__(0, 1.0)}[write]()
    out = _outcome(case, torchlike)
    assert out == _outcome(case, torch)
    assert out[2].startswith("a view of a leaf Variable")


def test_the_non_leaf_grad_warning_names_where_torch_raises_it():
    def case(m):
        import warnings
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            (m.ones(2, requires_grad=True) * 2).grad
        return [str(x.message) for x in w]
    assert _outcome(case, torchlike) == _outcome(case, torch)


def test_unsafe_split_outputs_follow_the_multiple_views_rule():
    """DIFFERENCES.md: torch's unsafe_split outputs are untracked; torchlike's are split's views,
    so one used after its input was written in place raises the multiple-views error."""
    def case(m):
        a = m.ones(4, requires_grad=True) * 1
        first, _second = a.unsafe_split(2)
        a.mul_(2)
        return (first * 2).tolist()
    assert _outcome(case, torch) == ("returns", "[4.0, 4.0]")
    out = _outcome(case, torchlike)
    assert out[0] == "raises" and "returns multiple views" in out[2]


def test_rows_of_a_long_tensor_are_selects_without_the_multiple_views_rule():
    """DIFFERENCES.md: past 64 rows, iterating gives selects: a row written in place with grad
    computes where torch (an unbind's output) raises; up to 64, both raise."""
    def case(n):
        def run(m):
            a = m.ones(n, 2, requires_grad=True) * 1
            row = next(iter(a))
            return row.mul_(2).tolist()
        return run
    for m_out in (_outcome(case(64), torch), _outcome(case(64), torchlike),
                  _outcome(case(65), torch)):
        assert m_out[0] == "raises" and "returns multiple views" in m_out[2]
    assert _outcome(case(65), torchlike) == ("returns", "[2.0, 2.0]")
