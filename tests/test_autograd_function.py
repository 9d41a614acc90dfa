"""Custom autograd.Function against torch: the same class body runs on both."""
import pytest
import torch

import torchlike


def make_classes(m):
    class Exp(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class StraightThrough(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return (x > 0).float()

        @staticmethod
        def backward(ctx, g):
            return g

    class ScaleAdd(m.autograd.Function):
        """Two tensor inputs, a non-tensor argument, two outputs, needs_input_grad."""

        @staticmethod
        def forward(ctx, a, b, k):
            ctx.save_for_backward(a, b)
            ctx.k = k
            ctx.flags = tuple(ctx.needs_input_grad)
            return a * k + b, a * b

        @staticmethod
        def backward(ctx, g1, g2):
            a, b = ctx.saved_tensors
            ga = g1 * ctx.k + g2 * b if ctx.needs_input_grad[0] else None
            gb = g1 + g2 * a if ctx.needs_input_grad[1] else None
            return ga, gb, None

    class Cube(m.autograd.Function):
        """setup_context style, differentiable backward (double backward works)."""

        @staticmethod
        def forward(x):
            return x ** 3

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x ** 2

    return Exp, StraightThrough, ScaleAdd, Cube


def scenario_exp(m):
    Exp = make_classes(m)[0]
    x = m.tensor([0.0, 1.0, -1.0], requires_grad=True)
    y = Exp.apply(x)
    (y * m.tensor([1.0, 2.0, 3.0])).sum().backward()
    return [repr(y.detach()), y.requires_grad, repr(x.grad)]


def scenario_straight_through_and_hook(m):
    ST = make_classes(m)[1]
    log = []
    x = m.tensor([-1.0, 0.5, 2.0], requires_grad=True)
    y = ST.apply(x * 2)
    y.register_hook(lambda g: log.append(repr(g)))
    (y * 3).sum().backward()
    return log + [repr(y), repr(x.grad)]


def scenario_two_outputs(m):
    SA = make_classes(m)[2]
    a = m.tensor([1.0, 2.0], requires_grad=True)
    b = m.tensor([3.0, 4.0])
    s, p = SA.apply(a, b, 5.0)
    (s.sum() + (p * p).sum()).backward()
    return [repr(s), repr(p), repr(a.grad), b.grad]


def scenario_only_one_output_used(m):
    SA = make_classes(m)[2]
    a = m.tensor([1.0, 2.0], requires_grad=True)
    b = m.tensor([3.0, 4.0], requires_grad=True)
    s, p = SA.apply(a, b, 2.0)
    p.sum().backward()
    return [repr(a.grad), repr(b.grad)]


def scenario_double_backward(m):
    Cube = make_classes(m)[3]
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = Cube.apply(x).sum()
    (g,) = m.autograd.grad(y, x, create_graph=True)
    (h,) = m.autograd.grad(g.sum(), x)
    return [repr(g.detach()), repr(h)]


def scenario_no_grad_input(m):
    Exp = make_classes(m)[0]
    y = Exp.apply(m.tensor([1.0]))
    return [repr(y), y.requires_grad]


def scenario_backward_twice(m):
    Exp = make_classes(m)[0]
    x = m.tensor([1.0], requires_grad=True)
    y = Exp.apply(x).sum()
    y.backward()
    try:
        y.backward()
    except RuntimeError as e:
        return ["raised", str(e)[:60]]
    return ["no error"]


def scenario_every_output_gets_a_gradient(m):
    """backward takes one gradient per forward output: a non-differentiable or integer tensor
    output's is zeros (None without materialized grads), a non-tensor output's None."""
    seen = []

    def grads(gs):
        return [None if g is None else (g.dtype == m.int64, g.tolist()) for g in gs]

    class Mixed(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            i = x.argmax()
            ctx.mark_non_differentiable(i)
            return x * 2, i, 3, x * 3, (x * 5).detach()

        @staticmethod
        def backward(ctx, *gs):
            seen.append(grads(gs))
            return gs[0]

    class Lazy(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            y = x * 5
            ctx.mark_non_differentiable(y)
            return x * 2, y

        @staticmethod
        def backward(ctx, *gs):
            seen.append(grads(gs))
            return gs[0]

    x = m.tensor([1.0, 3.0], requires_grad=True)
    a, i, k, b, c = Mixed.apply(x)
    a.sum().backward()
    p, q = Lazy.apply(x)
    p.sum().backward()
    return [seen, x.grad.tolist(), i.requires_grad, i.grad_fn, k, b.grad_fn is a.grad_fn,
            c.requires_grad, q.requires_grad, q.grad_fn]


def scenario_node_class(m):
    Exp = make_classes(m)[0]
    y = Exp.apply(m.tensor([1.0], requires_grad=True))
    t = type(y.grad_fn)
    return [t.__name__, t.__qualname__, t is Exp._backward_cls,
            isinstance(y.grad_fn, m.autograd.function.BackwardCFunction),
            y.grad_fn._forward_cls is Exp,
            type(Exp.apply(m.tensor([2.0], requires_grad=True)).grad_fn) is t]


SCENARIOS = [scenario_exp, scenario_every_output_gets_a_gradient, scenario_node_class, scenario_straight_through_and_hook, scenario_two_outputs,
             scenario_only_one_output_used, scenario_double_backward, scenario_no_grad_input,
             scenario_backward_twice]


@pytest.mark.parametrize("fn", SCENARIOS, ids=lambda f: f.__name__)
def test_custom_function_matches_torch(fn):
    assert fn(torchlike) == fn(torch)


def test_grad_fn_name():
    Exp = make_classes(torchlike)[0]
    y = Exp.apply(torchlike.tensor([1.0], requires_grad=True))
    assert y.grad_fn.name() == "ExpBackward"
    assert "grad_fn=<ExpBackward>" in repr(y)


_RETURNED_GRADS = {
    "float64 for float32": lambda m, g: (g.double(), None),
    "broadcastable": lambda m, g: (m.ones(1, 2), None),
    "0-dim for a vector": lambda m, g: (m.tensor(1.0), None),
    "wrong shape": lambda m, g: (m.ones(3), None),
    "for a number": lambda m, g: (g, m.ones(1)),
    "extra None": lambda m, g: (g, None, None),
    "extra tensor": lambda m, g: (g, None, m.ones(1)),
    "int64": lambda m, g: (m.ones(2, dtype=m.int64), None),
}


@pytest.mark.parametrize("case", list(_RETURNED_GRADS))
def test_returned_gradients_are_checked_and_fitted_as_torch(case):
    """torch's engine sums a gradient that expands to its input's shape, casts it to the
    input's dtype, and refuses other shapes, extra gradients and gradients for numbers."""
    def run(m):
        class F(m.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return _RETURNED_GRADS[case](m, g)
        x = m.ones(2, requires_grad=True)
        try:
            F.apply(x, 2.0).sum().backward()
        except RuntimeError as e:
            return str(e)
        return str(x.grad.dtype), x.grad.tolist()
    assert run(torchlike) == run(torch)


def test_custom_fwd_cast_inputs_under_autocast_as_torch():
    def run(m):
        class F(m.autograd.Function):
            @staticmethod
            @m.amp.custom_fwd(device_type="cpu", cast_inputs=m.float32)
            def forward(ctx, x):
                return x * 2

            @staticmethod
            @m.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                return g * 2
        x = m.ones(2, dtype=m.bfloat16, requires_grad=True)
        with m.autocast("cpu", dtype=m.bfloat16):
            y = F.apply(x)
        y.sum().backward()
        return str(y.dtype), str(x.grad.dtype), x.grad.tolist()
    assert run(torchlike) == run(torch)


def _once_differentiable_exp(m):
    class Exp(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.exp()

        @staticmethod
        @m.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * x.exp()
    return Exp


@pytest.mark.parametrize("grad_output_requires_grad", [False, True])
def test_once_differentiable_under_create_graph(grad_output_requires_grad):
    """A once_differentiable backward runs without grad; under create_graph a gradient that
    requires grad makes its results require grad through torch's ``Error`` node, whose
    backward raises."""
    seen = {}
    for m in (torch, torchlike):
        Exp = _once_differentiable_exp(m)
        z = m.tensor([0.5, 1.0], requires_grad=True)
        w = m.tensor([2.0, 3.0], requires_grad=grad_output_requires_grad)
        (gz,) = m.autograd.grad(Exp.apply(z), z, grad_outputs=w, create_graph=True)
        err = None
        try:
            gz.sum().backward()
        except RuntimeError as e:
            err = str(e)
        seen[m.__name__] = (gz.tolist(), gz.requires_grad,
                            type(gz.grad_fn).__name__ if gz.grad_fn else None, repr(gz), err)
    assert seen["torch"] == seen["torchlike"]
