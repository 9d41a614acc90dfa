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


# ------------------------------------------------------------------ custom Functions: vjp, jvp, torch.func

def _fw(m):
    import importlib
    return importlib.import_module(m.__name__ + ".autograd.forward_ad")


def _jvp_of(m, cls, *extra):
    """The primal and tangent of each output of ``cls.apply`` on a dual input (tangent 3)."""
    fw = _fw(m)
    with fw.dual_level():
        out = cls.apply(fw.make_dual(m.ones(2), m.full((2,), 3.0)), *extra)
        outs = out if isinstance(out, tuple) else (out,)
        return tuple(x for o in outs for x in (fw.unpack_dual(o).primal * 1,
                                                  fw.unpack_dual(o).tangent))


def _function(m, forward=None, jvp=None, backward=None, vjp=None, setup_context=None):
    attrs = {k: staticmethod(f) for k, f in dict(
        forward=forward, jvp=jvp, backward=backward, vjp=vjp,
        setup_context=setup_context).items() if f is not None}
    return type("F", (m.autograd.Function,), attrs)


def _saved_for_forward(m):
    def forward(ctx, a, b, k):
        ctx.save_for_forward(a)
        ctx.save_for_backward(b)
        ctx.k = k
        return a * b * k

    def jvp(ctx, ta, tb, tk):
        (a,) = ctx.saved_tensors        # save_for_forward's, not save_for_backward's
        return ta * 10 + tb + a * (tk is None) + ctx.k
    return _jvp_of(m, _function(m, forward, jvp), m.full((2,), 2.0), 5.0)


def _new_style(m, grad_scale=100.0):
    def forward(x, k):
        return x.sin() * k

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.k = inputs[1]

    def backward(ctx, g):                # (deliberately not the forward's derivative)
        (x,) = ctx.saved_tensors
        return g * grad_scale * ctx.k + x * 0, None
    return _function(m, forward, backward=backward, setup_context=setup_context)


def _old_style(m):
    return _function(m, lambda ctx, x: x * 2, backward=lambda ctx, g: g * 5)


def _x(m):
    import numpy as np
    return m.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 7 + 0.1)


def _vmappable(m):
    cls = _new_style(m)
    cls.generate_vmap_rule = True
    return cls


CUSTOM_FUNCTIONS = {
    # forward mode calls the Function's jvp, with save_for_forward's tensors
    "jvp_saved_for_forward": _saved_for_forward,
    "jvp_missing_raises": lambda m: _jvp_of(m, _function(
        m, lambda ctx, a: a * 2, backward=lambda ctx, g: g)),
    "jvp_wrong_size_raises": lambda m: _jvp_of(m, _function(
        m, lambda ctx, a: a * 2, lambda ctx, t: t.sum())),
    "jvp_too_many_raises": lambda m: _jvp_of(m, _function(
        m, lambda ctx, a: a * 2, lambda ctx, t: (t * 4, t))),
    "jvp_too_few_raises": lambda m: _jvp_of(m, _function(
        m, lambda ctx, a: (a * 2, a * 3), lambda ctx, t: t * 4)),
    "jvp_two_outputs": lambda m: _jvp_of(m, _function(
        m, lambda ctx, a: (a * 2, a * 3), lambda ctx, t: (t * 4, t * 5))),
    "jvp_cast_to_output_dtype": lambda m: _jvp_of(m, _function(
        m, lambda ctx, a: a.double(), lambda ctx, t: t * 4)),
    "jvp_setup_context_style": lambda m: _jvp_of(m, _function(
        m, lambda a: a * 2, lambda ctx, t: t * ctx.saved_tensors[0] * 7,
        setup_context=lambda ctx, inputs, output: ctx.save_for_forward(inputs[0]))),
    "jvp_input_returned_as_is_raises": lambda m: _jvp_of(m, _function(
        m, lambda ctx, a: a, lambda ctx, t: t * 2)),
    # vjp is backward's other name; defining both is refused
    "vjp_as_backward": lambda m: _backward_of(m, _function(
        m, lambda ctx, a: a * 2, vjp=lambda ctx, g: g * 7)),
    "backward_and_vjp_raises": lambda m: _backward_of(m, _function(
        m, lambda ctx, a: a * 2, backward=lambda ctx, g: g, vjp=lambda ctx, g: g)),
    # torch.func differentiates a Function by its backward (setup_context style only)
    "func_grad": lambda m: m.func.grad(lambda x: _new_style(m).apply(x, 2.0).sum())(_x(m)),
    "func_grad_twice": lambda m: m.func.grad(lambda x: (
        _new_style(m).apply(x, 2.0) + _new_style(m).apply(x * 2, 3.0)).sum())(_x(m)),
    "func_grad_and_value": lambda m: m.func.grad_and_value(
        lambda x: _new_style(m).apply(x, 2.0).sum())(_x(m)),
    "func_vjp": lambda m: m.func.vjp(lambda x: _new_style(m).apply(x, 1.0), _x(m))[1](
        m.ones(2, 3)),
    "func_jacrev": lambda m: m.func.jacrev(lambda x: _new_style(m).apply(x, 1.0))(_x(m)[0]),
    "func_grad_old_style_raises": lambda m: m.func.grad(
        lambda x: _old_style(m).apply(x).sum())(_x(m)),
    "func_vmap_old_style_raises": lambda m: m.func.vmap(_old_style(m).apply)(_x(m)),
    "func_vmap_without_rule_raises": lambda m: m.func.vmap(
        lambda x: _new_style(m).apply(x, 2.0))(_x(m)),
    "func_vmap_generated_rule": lambda m: m.func.vmap(
        lambda x: _vmappable(m).apply(x, 2.0))(_x(m)),
    "func_grad_of_vmap": lambda m: m.func.grad(lambda x: m.func.vmap(
        lambda r: _vmappable(m).apply(r, 2.0))(x).sum())(_x(m)),
    "func_vmap_of_grad": lambda m: m.func.vmap(m.func.grad(
        lambda r: _vmappable(m).apply(r, 2.0).sum()))(_x(m)),
    "func_jvp_without_jvp_raises": lambda m: m.func.jvp(
        lambda x: _new_style(m).apply(x, 1.0), (_x(m),), (m.ones(2, 3),)),
    # a saved tensor written in place before the backward: torch's version error
    "saved_input_modified_raises": lambda m: _saved_then_modified(m, "input"),
    "saved_leaf_modified_under_no_grad_raises": lambda m: _saved_then_modified(m, "leaf"),
    "saved_output_modified_raises": lambda m: _saved_then_modified(m, "output"),
    "saved_unmodified_runs": lambda m: _saved_then_modified(m, None),
}


def _saved_then_modified(m, which):
    def forward(ctx, x):
        out = x * 2
        ctx.save_for_backward(x, out)
        return out

    def backward(ctx, g):
        x, out = ctx.saved_tensors
        return g * x + out
    cls = _function(m, forward, backward=backward)
    a = m.ones(2, requires_grad=True)
    b = a * 1 if which != "leaf" else a
    y = cls.apply(b)
    if which == "input":
        b.add_(1)
    elif which == "leaf":
        with m.no_grad():
            a.add_(1)
    elif which == "output":
        y.mul_(3)
    y.sum().backward()
    return a.grad


def _backward_of(m, cls):
    x = m.ones(2, requires_grad=True)
    cls.apply(x).sum().backward()
    return x.grad


@pytest.mark.parametrize("name", CUSTOM_FUNCTIONS)
def test_custom_function_as_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)     # (torch's own jit.script note)
        same_as_torch(CUSTOM_FUNCTIONS[name], rtol=1e-6)


def test_a_functions_vmap_staticmethod_is_not_called():
    """DIFFERENCES.md: under torch.func.vmap torch calls a Function's ``vmap`` staticmethod;
    torchlike batches the forward's ops as they are (the same values wherever the rule is the
    batched forward, as it must be for torch's own transforms to agree)."""
    import numpy as np
    import torch

    import torchlike

    def run(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def vmap(info, in_dims, x):        # (not the batched forward: times 3)
                return x * 3, in_dims[0]
        return m.func.vmap(F.apply)(_x(m)).numpy()
    np.testing.assert_allclose(run(torch), _x(torch).numpy() * 3)
    np.testing.assert_allclose(run(torchlike), _x(torch).numpy() * 2)


# ------------------------------------------------------------------ grad modes, saved tensors

def _set_grad_enabled_decorator(m):
    @m.set_grad_enabled(False)
    def f(x):
        return (x * 2).requires_grad
    # (making the decorator leaves the mode as it was)
    return m.is_grad_enabled(), f(m.ones(1, requires_grad=True)), m.is_grad_enabled()


def _mutated_after_save(m, backward_inside=True, nested=False):
    ctx = m.autograd.graph.allow_mutation_on_saved_tensors
    with ctx():
        if nested:
            with ctx():
                pass
        x = m.ones(3, requires_grad=True)
        y = x * 1
        z = (y * y).sum()           # (saves y)
        y.mul_(2)
        e = x.exp()
        e.add_(1)                   # (exp saves its output)
        loss = z + (y * 3).sum() + e.sum()
        if backward_inside:
            loss.backward()
            return x.grad, y, e
    loss.backward()


SAVED_AND_MODES = {
    "set_grad_enabled_as_decorator": _set_grad_enabled_decorator,
    "allow_mutation_on_saved_tensors": _mutated_after_save,
    "allow_mutation_backward_outside_raises": lambda m: _mutated_after_save(m, False),
    "allow_mutation_nested_raises": lambda m: _mutated_after_save(m, nested=True),
    "backward_with_empty_inputs_raises": lambda m: (m.ones(2, requires_grad=True) * 2).sum(
        ).backward(inputs=[]),
    "no_grad_decorator_without_parentheses": lambda m: m.no_grad(
        lambda x: (x * 2).requires_grad)(m.ones(1, requires_grad=True)),
    "enable_grad_decorator_without_parentheses": lambda m: _in_no_grad(m, m.enable_grad(
        lambda x: (x * 2).requires_grad), m.ones(1, requires_grad=True)),
    "inference_mode_decorator_without_parentheses": lambda m: m.inference_mode(
        lambda x: (x * 2).is_inference())(m.ones(1)),
    "inference_mode_false_inside_inference_mode": lambda m: _in_inference(m, m.inference_mode(
        False)(lambda x: ((x * 2).is_inference(), m.is_inference_mode_enabled(),
                          m.is_grad_enabled())), m.ones(1)),
    "inference_mode_false_inside_no_grad": lambda m: _in_no_grad(
        m, m.inference_mode(False)(m.is_grad_enabled)),
    "inference_tensor_version_raises": lambda m: _in_inference(m, m.ones, 2)._version,
}


def _in_no_grad(m, fn, *args):
    with m.no_grad():
        return fn(*args)


def _in_inference(m, fn, *args):
    with m.inference_mode():
        return fn(*args)


@pytest.mark.parametrize("name", SAVED_AND_MODES)
def test_grad_modes_and_saved_tensors_as_torch(name):
    same_as_torch(SAVED_AND_MODES[name])


# ------------------------------------------------------------------ gradients of gradients

def _gradient_penalty(m, act):
    """A WGAN-GP critic's gradient penalty (a gradient with create_graph, then its backward):
    the last layer's bias, which the input's gradient does not read, keeps a None .grad."""
    import numpy as np
    rng = np.random.default_rng(0)
    critic = m.nn.Sequential(m.nn.Conv2d(1, 4, 3, padding=1), act(m), m.nn.Conv2d(4, 4, 3,
                             stride=2), act(m), m.nn.Flatten(), m.nn.Linear(36, 1))
    with m.no_grad():
        for i, p in enumerate(critic.parameters()):
            p.copy_(m.tensor(np.sin(np.arange(p.numel(), dtype=np.float32) * 0.37 + i)
                             .reshape(p.shape) * 0.3))
    x = m.tensor(rng.standard_normal((4, 1, 8, 8)).astype(np.float32), requires_grad=True)
    out = critic(x)
    g, = m.autograd.grad(out, x, m.ones_like(out), create_graph=True)
    penalty = ((g.reshape(4, -1).norm(2, dim=1) - 1) ** 2).mean()
    penalty.backward()
    return (penalty, *[p.grad for p in critic.parameters()])


DOUBLE_BACKWARD = {
    "gradient_penalty_leaky_relu": lambda m: _gradient_penalty(m, lambda m: m.nn.LeakyReLU(0.2)),
    "gradient_penalty_tanh": lambda m: _gradient_penalty(m, lambda m: m.nn.Tanh()),
    "linear_hessian_strict_raises": lambda m: m.autograd.functional.hessian(
        lambda x: (x * 3).sum(), m.ones(3), strict=True),
    "gradient_of_a_linear_function_needs_no_grad": lambda m: _grad_requires_grad(m),
}


def _grad_requires_grad(m):
    x = m.ones(3, requires_grad=True)
    g, = m.autograd.grad((x * 2).sum(), x, create_graph=True)
    h, = m.autograd.grad((x ** 2).sum(), x, create_graph=True)
    return g.requires_grad, h.requires_grad


@pytest.mark.parametrize("name", DOUBLE_BACKWARD)
def test_gradients_of_gradients_as_torch(name):
    same_as_torch(DOUBLE_BACKWARD[name], rtol=1e-4, atol=1e-6)
