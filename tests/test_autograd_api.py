"""torch.autograd's public calls against torch: ``autograd.grad``'s options, nodes' metadata,
``Function.mark_dirty``, and the history of views after a write under no_grad. Each case runs
the same code on torch and torchlike and compares values, dtypes, exception class and message.
"""
from __future__ import annotations

import warnings

import pytest

from oracle import same_as_torch


def _grads(m, **kw):
    x = m.ones(2, requires_grad=True)
    y = m.ones(2, requires_grad=True)
    return m.autograd.grad((x * 2).sum(), [x, y], **kw)


GRAD_OPTIONS = {
    "materialize_grads": lambda m: _grads(m, materialize_grads=True),
    "materialize_grads_refuses_allow_unused_false":
        lambda m: _grads(m, materialize_grads=True, allow_unused=False),
    "materialize_grads_create_graph": lambda m: _grads(
        m, materialize_grads=True, create_graph=True)[1].requires_grad,
    "unused_input_raises": lambda m: _grads(m),
    "allow_unused": lambda m: _grads(m, allow_unused=True)[0],
    # the outputs are checked before the inputs
    "output_without_grad": lambda m: m.autograd.grad(m.ones(2).sum(), [m.ones(2)]),
    "input_without_grad": lambda m: m.autograd.grad(
        (m.ones(2, requires_grad=True) * 2).sum(), [m.ones(2)]),
    "inputs_as_dict": lambda m: _dict_grads(m),
    "inputs_as_other_mapping": lambda m: _mapping_grads(m),
}


def _dict_grads(m):
    x = m.ones(2, requires_grad=True)
    y = m.full((2,), 3.0, requires_grad=True)
    out = m.autograd.grad((x * y).sum(), {"b": y, "a": x})
    return list(out), out["a"], out["b"]


def _mapping_grads(m):
    import types
    x = m.ones(2, requires_grad=True)
    return m.autograd.grad((x * 2).sum(), types.MappingProxyType({"a": x}))


@pytest.mark.parametrize("name", GRAD_OPTIONS)
def test_grad_options_as_torch(name):
    same_as_torch(GRAD_OPTIONS[name])


def test_grad_only_inputs_false_warns_as_torch():
    def run(m):
        x = m.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            g, = m.autograd.grad((x * 2).sum(), x, only_inputs=False)
        return g, [(w.category.__name__, str(w.message)) for w in caught]
    same_as_torch(run)


def test_node_metadata_is_a_dict_kept_on_the_node():
    def run(m):
        x = m.ones(2, requires_grad=True)
        y = (x * 2).sum()
        y.grad_fn.metadata["tag"] = 3
        return type(y.grad_fn.metadata).__name__, y.grad_fn.metadata, \
            y.grad_fn.next_functions[0][0].metadata
    same_as_torch(run)


# ------------------------------------------------------------------ Function.mark_dirty

def _dirty_classes(m):
    class Double(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class DoubleNotReturned(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g * 2

    return Double, DoubleNotReturned


def _dirty_input(m):
    Double, _ = _dirty_classes(m)
    w = m.ones(2, requires_grad=True)
    x = w.clone()
    v0 = x._version
    y = Double.apply(x)
    y.sum().backward()
    return w.grad, y is x, x._version - v0, type(x.grad_fn).__name__, x.is_leaf


def _dirty_view(m):
    Double, _ = _dirty_classes(m)
    w = m.ones(4, requires_grad=True)
    b = w.clone()
    x = b[:2]
    y = Double.apply(x)
    b.sum().backward()
    return w.grad, y is x, type(b.grad_fn).__name__, b


DIRTY = {
    "returned_input_is_the_input_rebased": _dirty_input,
    "a_view_rebases_its_base": _dirty_view,
    "a_leaf_that_requires_grad_raises":
        lambda m: _dirty_classes(m)[0].apply(m.ones(2, requires_grad=True)),
    "not_returned_raises":
        lambda m: _dirty_classes(m)[1].apply(m.ones(2, requires_grad=True).clone()),
    "not_returned_raises_without_grad": lambda m: _dirty_classes(m)[1].apply(m.ones(2)),
    "without_grad_returns_the_input": lambda m: (
        lambda x: (_dirty_classes(m)[0].apply(x) is x, x))(m.ones(2)),
}


@pytest.mark.parametrize("name", DIRTY)
def test_mark_dirty_as_torch(name):
    same_as_torch(DIRTY[name])


# ------------------------------------------------------------------ views written under no_grad

VIEWS = {
    "slice": lambda b: b[:2],
    "select": lambda b: b[1],
    "view": lambda b: b.view(2, 2),
    "transpose": lambda b: b.view(2, 2).t(),
    "diagonal": lambda b: b.view(2, 2).diagonal(),
}
WRITES = {
    "mul_": lambda v: v.mul_(2),
    "zero_": lambda v: v.zero_(),
    "copy_": lambda v: v.copy_(v * 0 + 7),
    "the_root": None,
}


@pytest.mark.parametrize("write", WRITES)
@pytest.mark.parametrize("view", VIEWS)
def test_views_of_a_non_leaf_written_under_no_grad_keep_their_history(view, write):
    """torch regenerates a view's history after a write under no_grad (AsStridedBackward0
    into its base): gradients still flow through it and its sibling views."""
    def run(m):
        w = m.arange(4.0).requires_grad_()
        b = w * 1
        v, sibling = VIEWS[view](b), VIEWS[view](b)
        with m.no_grad():
            if WRITES[write] is None:
                b.mul_(3)
            else:
                WRITES[write](v)
        names = [type(t.grad_fn).__name__ for t in (v, sibling, b)]
        (v * sibling).sum().backward()
        return names, v.is_leaf, v._version, b, w.grad
    same_as_torch(run)
