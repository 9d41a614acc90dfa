"""A compiled function's Tensor arguments are the caller's tensors: a backward inside it
accumulates their ``.grad`` and an in-place op writes them, as in torch eager; a backward that
would flow on into autograd history from outside the function runs eagerly (a graph break),
with torch's values. A function compiled as one tape node (it returns a live graph) takes its
arguments' gradients through that node. Each case against torch eager.
"""
import warnings

import numpy as np
import pytest
import torch

import torchlike


def _both(make):
    """``make(m, compiled)`` for torch eager and torchlike compiled; returns both results."""
    ref = make(torch, lambda f, **kw: f)
    ours = make(torchlike, torchlike.compile)
    return ref, ours


def _np(v):
    return np.asarray(v.detach().numpy()) if v is not None else None


def test_a_backward_accumulates_the_arguments_grad():
    def make(m, compile):
        x = m.ones(3, requires_grad=True)

        @compile
        def step(x):
            loss = (x * 2).sin().sum()
            loss.backward()
            return loss

        grads = []
        for _ in range(3):
            step(x)
            grads.append(_np(x.grad).copy())
        x.grad = None
        step(x)
        grads.append(_np(x.grad))
        return grads

    with warnings.catch_warnings():
        warnings.simplefilter("error")      # (no graph break: the step compiles)
        ref, ours = _both(make)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_new_argument_tensors_each_call_get_their_own_grads():
    def make(m, compile):
        @compile
        def step(x, w):
            loss = (x @ w).tanh().sum()
            loss.backward()
            return loss

        out = []
        for i in range(4):
            x = m.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3) / (i + 1))
            w = m.tensor(np.ones((3, 2), np.float32) * 0.1 * i, requires_grad=True)
            step(x, w)
            out.append((_np(w.grad), x.grad))
        return out

    ref, ours = _both(make)
    for (gw, gx), (rw, rx) in zip(ours, ref):
        np.testing.assert_allclose(gw, rw, rtol=1e-5, atol=1e-7)
        assert gx is None and rx is None


def test_an_in_place_op_on_an_argument_writes_the_callers_tensor():
    def make(m, compile):
        buf = m.zeros(3)

        @compile
        def step(b, k):
            b.add_(k)
            return b.sum()

        sums = [float(step(buf, m.tensor(float(i)))) for i in range(4)]
        return sums, _np(buf)

    (rs, rb), (os_, ob) = _both(make)
    assert os_ == rs
    np.testing.assert_array_equal(ob, rb)


def test_an_arguments_history_from_outside_gets_its_gradient_eagerly():
    def make(m, compile):
        w = m.full((3,), 2.0, requires_grad=True)

        @compile
        def step(h):
            loss = (h * h).sum()
            loss.backward()
            return loss

        for _ in range(2):
            step(w * 3)
        return _np(w.grad)

    with pytest.warns(UserWarning, match="autograd history from outside"):
        ref, ours = _both(make)
    np.testing.assert_array_equal(ours, ref)


def test_a_captured_tensors_history_from_outside_gets_its_gradient_eagerly():
    def make(m, compile):
        w = m.full((3,), 2.0, requires_grad=True)
        h = w * 3

        @compile
        def step():
            loss = (h * h).sum()
            loss.backward(retain_graph=True)
            return loss

        for _ in range(2):
            step()
        return _np(w.grad), h.grad_fn is not None

    with pytest.warns(UserWarning, match="autograd history from outside"):
        ref, ours = _both(make)
    np.testing.assert_array_equal(ours[0], ref[0])
    assert ours[1] and ref[1]


def test_fullgraph_refuses_a_backward_into_an_outside_history():
    w = torchlike.ones(2, requires_grad=True)

    @torchlike.compile(fullgraph=True)
    def step(h):
        loss = h.exp().sum()
        loss.backward()
        return loss

    with pytest.raises(Exception, match="autograd history from outside"):
        step(w * 2)
    assert w.grad is None


# ------------------------------------------------------------------ the family, as one table:
# each function compiled with torchlike.compile and run eagerly by torch on the same inputs; the
# results, every involved tensor's .grad and the callers' tensors after the calls compared
# (a compiled training step's returned loss has no grad_fn: DIFFERENCES.md, so requires_grad of
# results is not compared)

def make_inputs(m):
    w = m.tensor(np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    lin = m.nn.Linear(3, 2)
    with m.no_grad():
        lin.weight.copy_(m.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 10))
        lin.bias.copy_(m.tensor([0.1, -0.2]))
    buf = m.zeros(2, 3)
    return w, lin, buf


CASES = {}


def case(f):
    CASES[f.__name__] = f
    return f

@case
def grad_of_arg(m, w, lin, buf, c):
    def f(a):
        l = (a * 3).cos().sum(); l.backward(); return l
    f = c(f)
    r = [f(w) for _ in range(3)]
    return r, w.grad

@case
def grad_of_arg_in_list(m, w, lin, buf, c):
    def f(xs):
        l = (xs[0] * xs[1]).sum(); l.backward(); return l
    f = c(f)
    v = m.ones(2, 3, requires_grad=True)
    r = [f([w, v]) for _ in range(3)]
    return r, w.grad, v.grad

@case
def grad_of_kwarg(m, w, lin, buf, c):
    def f(*, a):
        l = a.exp().sum(); l.backward(); return l
    f = c(f)
    r = [f(a=w) for _ in range(3)]
    return r, w.grad

@case
def param_passed_as_arg(m, w, lin, buf, c):
    def f(p, x):
        l = lin(x).sum() + (p * p).sum(); l.backward(); return l
    f = c(f)
    x = m.ones(4, 3)
    r = [f(lin.weight, x) for _ in range(3)]
    return r, lin.weight.grad, lin.bias.grad

@case
def arg_view_inplace(m, w, lin, buf, c):
    def f(v):
        v.mul_(2).add_(1); return v.sum()
    f = c(f)
    r = [f(buf[0]) for _ in range(3)]
    return r, buf

@case
def arg_inplace_then_return(m, w, lin, buf, c):
    def f(b, k):
        b.add_(k); return b
    f = c(f)
    r = [f(buf, m.tensor(1.5)) for _ in range(3)]
    return r[-1] is buf, buf

@case
def returns_arg(m, w, lin, buf, c):
    def f(a):
        return a
    f = c(f)
    r = f(buf)
    return r is buf,

@case
def grad_then_step_on_arg(m, w, lin, buf, c):
    opt = m.optim.SGD([w], lr=0.1)
    def f(a):
        l = (a ** 2).sum(); l.backward(); opt.step(); opt.zero_grad(); return l
    f = c(f)
    r = [f(w) for _ in range(3)]
    return r, w

@case
def no_grad_arg_used(m, w, lin, buf, c):
    def f(a, x):
        l = (a * x).sum(); l.backward(); return l
    f = c(f)
    xs = [m.full((2, 3), float(i)) for i in range(3)]
    r = [f(w, xi) for xi in xs]
    return r, w.grad, xs[0].grad

@case
def detached_arg(m, w, lin, buf, c):
    def f(a):
        return (a * 2).sum()
    f = c(f)
    r = [f(w.detach()) for _ in range(3)]
    return r, w.grad

@case
def same_tensor_twice(m, w, lin, buf, c):
    def f(a, b):
        l = (a * b).sum(); l.backward(); return l
    f = c(f)
    r = [f(w, w) for _ in range(3)]
    return r, w.grad

@case
def arg_grad_preset(m, w, lin, buf, c):
    w.grad = m.ones(2, 3)
    def f(a):
        l = a.sum(); l.backward(); return l
    f = c(f)
    r = [f(w) for _ in range(2)]
    return r, w.grad

@case
def grad_inside_no_backward(m, w, lin, buf, c):
    def f(a):
        return (a * a).sum()
    f = c(f)
    l = f(w)
    l.backward()
    l2 = f(w)
    l2.backward()
    return l, w.grad

@case
def autograd_grad_of_arg(m, w, lin, buf, c):
    def f(a):
        l = (a.sin() * a).sum()
        g, = m.autograd.grad(l, a)
        return g
    f = c(f)
    r = [f(w) for _ in range(2)]
    return r, w.grad

def conv(v):
    """A result as comparable values: tensors as (values, dtype), the rest as is."""
    if isinstance(v, (torch.Tensor, torchlike.Tensor)):
        return ("T", np.asarray(v.detach().float().numpy()), str(v.dtype).split(".")[-1])
    if isinstance(v, (list, tuple)):
        return [conv(x) for x in v]
    if v is None or isinstance(v, (bool, int, float)):
        return v
    return repr(type(v))


def eq(a, b):
    if isinstance(a, tuple) and a and a[0] == "T":
        return (isinstance(b, tuple) and b[0] == "T" and a[1].shape == b[1].shape
                and np.allclose(a[1], b[1], rtol=1e-5, atol=1e-6) and a[2] == b[2])
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(eq(x, y) for x, y in zip(a, b))
    return a == b


# functions compiled as one tape node (they return a live graph; the backward runs outside)

NODE_CASES = {}


def node_case(f):
    NODE_CASES[f.__name__] = f
    return f


def node_inputs(m):
    w, lin, _buf = make_inputs(m)
    return w, lin


@node_case
def module_arg_requires_grad(m, w, lin, c):
    cm = c(lin)
    for _ in range(3):
        cm(w).sum().backward()
    return w.grad, lin.weight.grad, lin.bias.grad

@node_case
def module_arg_with_history(m, w, lin, c):
    cm = c(lin)
    for _ in range(3):
        cm(w * 2).pow(2).sum().backward()
    return w.grad, lin.weight.grad

@node_case
def function_two_outputs(m, w, lin, c):
    def f(a, b):
        return a.sin() * b, (a * b).sum(1)
    f = c(f)
    v = m.ones(2, 3, requires_grad=True)
    for _ in range(3):
        y, z = f(w, v)
        (y.sum() + z.pow(2).sum()).backward()
    return w.grad, v.grad

@node_case
def function_kwarg_grad(m, w, lin, c):
    def f(x, *, scale):
        return (x * scale).tanh()
    f = c(f)
    s = m.tensor(0.5, requires_grad=True)
    for _ in range(3):
        f(w, scale=s).sum().backward()
    return w.grad, s.grad

@node_case
def function_closure_param(m, w, lin, c):
    def f(x):
        return lin(x).relu()
    f = c(f)
    x = m.ones(4, 3)
    for _ in range(3):
        f(x).sum().backward()
    return lin.weight.grad, lin.bias.grad

@node_case
def no_grad_context_call(m, w, lin, c):
    cm = c(lin)
    with m.no_grad():
        y = cm(w)
    return y, y.requires_grad

@node_case
def output_used_twice(m, w, lin, c):
    cm = c(lin)
    for _ in range(3):
        y = cm(w)
        (y * y + y).sum().backward()
    return w.grad, lin.weight.grad

@node_case
def retain_graph_double(m, w, lin, c):
    cm = c(lin)
    y = cm(w).sum()
    y.backward(retain_graph=True)
    y.backward()
    return w.grad, lin.weight.grad

@node_case
def hook_on_output(m, w, lin, c):
    cm = c(lin)
    seen = []
    for _ in range(2):
        y = cm(w)
        y.register_hook(lambda g: seen.append(g.clone()) or g * 2)
        y.sum().backward()
    return w.grad, seen

@node_case
def int_arg_static(m, w, lin, c):
    def f(x, k):
        return x.pow(k)
    f = c(f)
    for k in (2, 3, 2):
        f(w, k).sum().backward()
    return w.grad

@node_case
def inplace_on_arg_in_forward(m, w, lin, c):
    def f(x, b):
        b.add_(x.detach())
        return x * b
    f = c(f)
    b = m.zeros(2, 3)
    for _ in range(3):
        f(w, b).sum().backward()
    return w.grad, b


@node_case
def captured_tensor_requires_grad(m, w, lin, c):
    v = m.full((3,), 0.5, requires_grad=True)
    h = v * 2                       # (captured with a history outside the function)

    class Net(m.nn.Module):
        def forward(self, x):
            return (x * v).sum() + (x * h).sum()

    net = c(Net())
    for _ in range(2):
        net(w).backward(retain_graph=True)
    return w.grad, v.grad

TABLE = [(name, CASES[name], make_inputs) for name in sorted(CASES)] + [
    (name, NODE_CASES[name], node_inputs) for name in sorted(NODE_CASES)]


@pytest.mark.parametrize("name,fn,inputs", TABLE, ids=[t[0] for t in TABLE])
def test_compiled_functions_arguments_as_torch(name, fn, inputs):
    ref = conv(fn(torch, *inputs(torch), lambda f: f))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = conv(fn(torchlike, *inputs(torchlike), torchlike.compile))
    assert eq(ours, ref), (ours, ref)


def test_a_returned_argument_is_the_callers_tensor():
    """As in torch, a compiled function that returns its argument returns that tensor object,
    and the gradient through its other outputs reaches it."""
    w = torchlike.tensor([0.5, -1.0, 2.0], requires_grad=True)
    lin = torchlike.nn.Linear(3, 3)

    @torchlike.compile
    def f(a):
        return a, a.exp(), lin.weight, lin(a)

    for _ in range(2):
        a, e, weight, y = f(w)
        (a * e).sum().backward()
    assert a is w and weight is lin.weight
    x = w.detach().numpy()
    np.testing.assert_allclose(w.grad.numpy(), 2 * np.exp(x) * (1 + x), rtol=1e-6)


def test_a_double_backward_through_a_compiled_module():
    """DIFFERENCES.md: the input-independent first derivative of a linear layer gives the input a
    zero gradient where torch gives None; the weight's is torch's."""
    def run(m, compile):
        m.manual_seed(0)
        lin = m.nn.Linear(3, 2)
        with m.no_grad():
            lin.weight.copy_(m.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) / 10))
            lin.bias.copy_(m.tensor([0.1, -0.2]))
        w = m.ones(2, 3, requires_grad=True)
        y = compile(lin)(w)
        g, = m.autograd.grad(y.sum(), w, create_graph=True)
        (g * g).sum().backward()
        return g.detach().numpy(), w.grad, lin.weight.grad.numpy()

    rg, rw, rlin = run(torch, lambda f: f)
    og, ow, olin = run(torchlike, torchlike.compile)
    np.testing.assert_allclose(og, rg, rtol=1e-5)
    np.testing.assert_allclose(olin, rlin, rtol=1e-5)
    assert rw is None
    np.testing.assert_array_equal(ow.numpy(), np.zeros((2, 3), np.float32))


def test_an_unknown_backend_raises_dynamos_invalid_backend():
    """torch._dynamo.exc.InvalidBackend (a TorchDynamoException, a RuntimeError), as torch."""
    def run(m):
        try:
            m.compile(lambda x: x * 2, backend="nope")(m.ones(2))
        except m._dynamo.exc.TorchDynamoException as e:
            return type(e).__name__, isinstance(e, RuntimeError), str(e)
    assert run(torchlike) == run(torch)
    assert issubclass(torchlike._dynamo.exc.Unsupported, torchlike._dynamo.exc.TorchDynamoException)
