"""Hook and autograd semantics against torch.

Each scenario is written once against a module ``m`` (torch or torchlike) and returns a log of
events; the logs (which include tensor reprs) must be identical.
"""
import numpy as np
import pytest
import torch

import torchlike
from oracle import fresh_process_outputs

SCENARIOS = []


def scenario(fn):
    SCENARIOS.append(fn)
    return fn


@scenario
def hook_sees_sum_over_all_uses_including_earlier(m):
    log = []
    x = m.tensor([1.0, 2.0], requires_grad=True)
    a = x * 2          # used before the hook is registered
    x.register_hook(lambda g: log.append(("x", repr(g))))
    b = x * x
    (a + b).sum().backward()
    log.append(repr(x.grad))
    return log


@scenario
def non_leaf_hook_sees_sum_over_uses(m):
    log = []
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 3
    u = y.exp()
    y.register_hook(lambda g: log.append(("y", repr(g))))
    v = y * 2
    (u.sum() + v.sum()).backward()
    log.append(repr(x.grad))
    return log


@scenario
def hooks_run_in_order_each_sees_previous(m):
    log = []
    x = m.tensor([1.0, -1.0], requires_grad=True)
    x.register_hook(lambda g: (log.append(("h1", repr(g))), g * 10)[1])
    x.register_hook(lambda g: log.append(("h2", repr(g))))
    x.register_hook(lambda g: (log.append(("h3", repr(g))), g + 1)[1])
    (x * 2).sum().backward()
    log.append(repr(x.grad))
    return log


@scenario
def non_leaf_replacement_flows_downstream(m):
    log = []
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.register_hook(lambda g: g * 0 + 5)
    y.sum().backward()
    log.append(repr(x.grad))
    return log


@scenario
def retain_grad_sees_hooked_grad_even_if_registered_first(m):
    log = []
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.register_hook(lambda g: g * 3)
    (y * y).sum().backward()
    log += [repr(y.grad), repr(x.grad), y.retains_grad, x.retains_grad]
    return log


@scenario
def leaf_hook_changes_dot_grad(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x.register_hook(lambda g: g * 2)
    (x ** 2).sum().backward()
    return [repr(x.grad)]


@scenario
def remove_before_backward_and_twice(m):
    log = []
    x = m.tensor([1.0, 2.0], requires_grad=True)
    h = x.register_hook(lambda g: log.append("called"))
    h.remove()
    h.remove()
    (x * 3).sum().backward()
    log.append(repr(x.grad))
    return log


@scenario
def remove_from_inside_hook(m):
    log = []
    x = m.tensor([1.0, 2.0], requires_grad=True)
    handles = []

    def once(g):
        log.append(("once", repr(g)))
        handles[0].remove()

    handles.append(x.register_hook(once))
    y = (x * 3).sum()
    y.backward(retain_graph=True)
    y.backward()
    log.append(repr(x.grad))
    return log


@scenario
def hooks_fire_on_every_backward_with_retain_graph(m):
    log = []
    x = m.tensor([2.0], requires_grad=True)
    y = x * x
    y.register_hook(lambda g: log.append(("y", repr(g))))
    x.register_hook(lambda g: log.append(("x", repr(g))))
    z = y.sum()
    z.backward(retain_graph=True)
    z.backward()
    log.append(repr(x.grad))
    return log


@scenario
def hooks_fire_in_autograd_grad(m):
    log = []
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.register_hook(lambda g: (log.append(("y", repr(g))), g * 2)[1])
    x.register_hook(lambda g: (log.append(("x", repr(g))), g + 1)[1])
    (g,) = m.autograd.grad(y.sum(), x)
    log += [repr(g), x.grad is None]
    return log


@scenario
def hook_on_input_of_autograd_grad_nonleaf(m):
    log = []
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x * 4
    y.register_hook(lambda g: (log.append(("y", repr(g))), g * 2)[1])
    (g,) = m.autograd.grad((y * y).sum(), y)
    log.append(repr(g))
    return log


@scenario
def post_accumulate_grad_hook(m):
    log = []
    x = m.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: log.append(("pre", repr(g))))
    x.register_post_accumulate_grad_hook(
        lambda t: log.append(("post", repr(t.grad), m.is_grad_enabled())))
    (x * 2).sum().backward()
    (x * 3).sum().backward()
    log.append(repr(x.grad))
    return log


@scenario
def hook_order_across_tensors(m):
    log = []
    a = m.tensor([1.0], requires_grad=True)
    b = m.tensor([2.0], requires_grad=True)
    c = a * b
    d = c * 2
    e = d + a
    for name, t in (("a", a), ("b", b), ("c", c), ("d", d), ("e", e)):
        t.register_hook(lambda g, name=name: log.append(name))
    e.sum().backward()
    return log


@scenario
def accumulation_across_backward_calls(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    g0 = None
    (x * 2).sum().backward()
    g0 = x.grad
    (x * x).sum().backward()
    return [repr(x.grad), g0 is x.grad]


@scenario
def retain_grad_accumulates(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = y.sum()
    z.backward(retain_graph=True)
    z.backward()
    return [repr(y.grad)]


@scenario
def backward_inputs_argument(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    w = m.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    y.sum().backward(inputs=[x])
    return [repr(x.grad), w.grad is None]


@scenario
def backward_inputs_non_leaf_accumulates_without_warning(m):
    import warnings
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (y * y).sum().backward(inputs=[y], retain_graph=True)
        (y * y).sum().backward(inputs=[y])      # (the second accumulates into y.grad)
    return [repr(y.grad), x.grad is None, [str(w.message) for w in caught]]


@scenario
def backward_inputs_non_leaf_runs_and_frees_its_node(m):
    """torch's engine runs a non-leaf input's own node in ``backward(inputs=[y])`` (its
    gradients go nowhere): its post-hooks run and its saved tensors are freed; autograd.grad
    does not run it."""
    log = []
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x.exp()
    y.grad_fn.register_hook(lambda gi, go: log.append(("post", repr(gi[0]), repr(go[0]))))
    log.append(repr(m.autograd.grad((y * 3).sum(), y)))
    (y * 3).sum().backward(inputs=[y])
    log.append(repr(y.grad))
    for again in (lambda: (y * 3).sum().backward(inputs=[y]), lambda: (y * 3).sum().backward()):
        try:
            again()
            log.append("ran")
        except RuntimeError as e:
            log.append(str(e)[:60])
    z = x + 0                               # (a node that saves nothing runs again)
    (z * 3).sum().backward(inputs=[z])
    (z * 3).sum().backward(inputs=[z])
    log.append(repr(z.grad))
    return log


@scenario
def post_hooks_see_none_for_gradients_no_input_needs(m):
    log = []
    x = m.tensor([1.0, 2.0], requires_grad=True)
    w = m.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    y.grad_fn.register_hook(lambda gi, go: log.append(("post", [repr(g) for g in gi])))
    y.sum().backward(inputs=[w], retain_graph=True)
    m.autograd.grad(y.sum(), [x])
    z = (x * 2) * w
    z.grad_fn.register_hook(lambda gi, go: log.append(("post2", [repr(g) for g in gi])))
    z.sum().backward(inputs=[x])
    return log + [repr(x.grad), repr(w.grad)]


@scenario
def node_post_hook_results_checked(m):
    log = []
    for ret in (lambda gi: (m.ones(3),), lambda gi: (m.ones(3), None),
                lambda gi: (m.ones(2, dtype=m.float64), None), lambda gi: 5,
                lambda gi: (m.ones(2), m.ones(2)), lambda gi: [m.ones(2)],
                lambda gi: (None, None), lambda gi: (gi[0] * 10, None), lambda gi: (3, None)):
        x = m.ones(2, requires_grad=True)
        y = x * 2
        y.grad_fn.register_hook(lambda gi, go, r=ret: r(gi))
        try:
            y.sum().backward()
            log.append(repr(x.grad))
        except (RuntimeError, TypeError) as e:
            log.append((type(e).__name__, str(e)))
    return log


@scenario
def autograd_grad_multiple(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    w = m.tensor([3.0, 4.0], requires_grad=True)
    z = (x * w).sum() + (x ** 3).sum()
    gx, gw = m.autograd.grad(z, (x, w))
    u = m.tensor([5.0], requires_grad=True)
    gu = m.autograd.grad((x * 2).sum(), [x, u], allow_unused=True)
    return [repr(gx), repr(gw), repr(gu[0]), gu[1], x.grad]


@scenario
def gradient_argument_for_nonscalar(m):
    x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = x * x
    y.backward(m.tensor([[1.0, 0.5], [0.0, 2.0]]))
    return [repr(x.grad)]


@scenario
def second_order_create_graph(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x ** 3).sum()
    (g,) = m.autograd.grad(y, x, create_graph=True)
    log = [repr(g.detach()), g.requires_grad]
    (h,) = m.autograd.grad(g.sum(), x)
    log.append(repr(h))
    g2 = m.autograd.grad((x.sin() * x).sum(), x, create_graph=True)[0]
    g2.sum().backward()
    log.append(repr(x.grad))
    return log


@scenario
def third_order(m):
    x = m.tensor(1.5, requires_grad=True)
    y = x.exp() * x ** 4
    g1 = m.autograd.grad(y, x, create_graph=True)[0]
    g2 = m.autograd.grad(g1, x, create_graph=True)[0]
    g3 = m.autograd.grad(g2, x)[0]
    return [f"{g1.item():.2f}", f"{g2.item():.2f}", f"{g3.item():.2f}"]


@scenario
def hook_under_create_graph(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.register_hook(lambda g: g * x)
    (g,) = m.autograd.grad(y.sum(), x, create_graph=True)
    (h,) = m.autograd.grad(g.sum(), x)
    return [repr(g.detach()), repr(h)]


@scenario
def detach_and_requires_grad(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    log = [d.requires_grad, d.is_leaf, y.is_leaf, x.is_leaf, repr(d)]
    z = m.tensor([1.0]).requires_grad_()
    log += [z.requires_grad, z.is_leaf, repr(z)]
    y.detach_()
    log += [y.requires_grad, y.grad_fn is None]
    return log


@scenario
def no_grad_and_friends(m):
    x = m.tensor([1.0], requires_grad=True)
    log = []
    with m.no_grad():
        y = x * 2
        log.append((y.requires_grad, m.is_grad_enabled()))
        with m.enable_grad():
            z = x * 2
            log.append((z.requires_grad, m.is_grad_enabled()))
    log.append(m.is_grad_enabled())
    with m.set_grad_enabled(False):
        log.append((x * 2).requires_grad)
    m.set_grad_enabled(False)
    log.append((x * 2).requires_grad)
    m.set_grad_enabled(True)
    log.append((x * 2).requires_grad)

    @m.no_grad()
    def f(t):
        return t * 2

    log.append(f(x).requires_grad)
    with m.inference_mode():
        w = x * 2
        log.append((w.requires_grad, m.is_grad_enabled()))
    log.append(m.is_grad_enabled())
    return log


@scenario
def backward_twice_on_graph_without_saved_tensors(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    return [repr(x.grad)]


@scenario
def grad_fn_names_and_reprs(m):
    x = m.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    return [repr(x * 2), repr(x + 1), repr(x - 1), repr(2 - x), repr(x / 2), repr(x @ x),
            repr(x.sum()), repr(x.sum(0)), repr(x.mean()), repr((x / 4).exp()), repr(x.tanh()),
            repr(x.sigmoid()), repr(x.relu()), repr(x.t()), repr(x.view(4)), repr(x[0]),
            repr(x[:, 1:]), repr(x.unsqueeze(0)), repr(x.norm()), repr(x ** 2),
            repr(x.log()), repr(x.transpose(0, 1)), repr(x.reshape(-1))]


@scenario
def multi_root_backward(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y * y
    m.autograd.backward([y.sum(), z.sum()])
    return [repr(x.grad)]


def _names(fn):
    return [type(f).__name__ if f is not None else None for f, _ in fn.next_functions]


@scenario
def next_functions_give_every_differentiable_input_a_slot(m):
    x = m.ones(2, 2, requires_grad=True)
    w = m.ones(2, 2)
    F = m.nn.functional
    ys = [x * 3, 3 * x, w * x, x + 1, x - w, x / 2, x ** 2, 2 ** x, x.clamp(0, 1),
          m.where(w > 0, x, w), w @ x, m.addcmul(w, x, w), m.lerp(w, x, 0.5), F.linear(w, x),
          m.cat([w, x]), m.stack([x, w, x]), m.maximum(w, x), F.mse_loss(x, w),
          F.cross_entropy(x, m.tensor([0, 1])), x.masked_fill(w > 0, 0.0),
          x[m.tensor([0])], m.add(w, x, alpha=2)]
    return [_names(y.grad_fn) for y in ys]


@scenario
def node_post_hook_grad_inputs_hold_none_for_inputs_without_a_gradient(m):
    log = []
    x = m.ones(2, requires_grad=True)
    w = m.full((2,), 2.0)
    y = w * x
    y.grad_fn.register_hook(lambda gi, go: log.append([None if g is None else repr(g)
                                                       for g in gi]))
    # (a replacement tuple has torch's layout too: None where no gradient flows)
    y.grad_fn.register_hook(lambda gi, go: (None, gi[1] * 10))
    y.sum().backward()
    return [log, repr(x.grad)]


@scenario
def grads_batched_over_grad_outputs(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    w = m.ones(2, requires_grad=True)
    y = x * x * 3
    g = m.autograd.grad([y], [x, w], grad_outputs=[m.eye(2)], is_grads_batched=True,
                        allow_unused=True)
    y = x * x * 3
    (h,) = m.autograd.grad([y], [x], grad_outputs=[m.eye(2)], is_grads_batched=True,
                           create_graph=True)
    return [repr(g[0]), g[1], repr(h.detach()), repr(m.autograd.grad(h.sum(), x)[0])]


@scenario
def a_grad_mode_decorating_a_generator_holds_while_its_body_runs(m):
    @m.no_grad()
    def numbers(n):
        for _ in range(n):
            sent = yield (m.ones(1, requires_grad=True) * 2).requires_grad, m.is_grad_enabled()
            out.append(("sent", sent, m.is_grad_enabled()))
        return "done"

    @m.enable_grad()
    def enabled():
        yield m.is_grad_enabled()

    out = []
    g = numbers(2)
    out.append(next(g))
    out.append(m.is_grad_enabled())          # (the caller's mode between yields)
    out.append(g.send(7))
    try:
        g.send(8)
    except StopIteration as stop:
        out.append(stop.value)
    with m.no_grad():
        out.append(list(enabled()))
    return out


@pytest.mark.parametrize("fn", SCENARIOS, ids=lambda f: f.__name__)
def test_semantics_match_torch(fn):
    expected = fn(torch)
    got = fn(torchlike)
    assert got == expected


def test_grad_mode_is_thread_local():
    import threading
    seen = []
    with torchlike.no_grad():
        t = threading.Thread(target=lambda: seen.append(torchlike.is_grad_enabled()))
        t.start()
        t.join()
        seen.append(torchlike.is_grad_enabled())
    assert seen == [True, False]


def test_hook_on_tensor_without_grad_raises():
    from oracle import check_raises
    import numpy as np
    check_raises(lambda m, x: x.register_hook(lambda g: g), np.ones(2, np.float32),
                 match="cannot register a hook on a tensor that doesn't require gradient")


def _hook_relative_ordering(m):
    # after torch's test_hook_relative_ordering: tensor pre-hooks, Node pre-hooks, retain_grad,
    # the node, Node post-hooks
    log = []
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    y.register_hook(lambda g: (log.append(("tensor_pre", repr(g))), g * 2)[1])
    y.grad_fn.register_prehook(lambda go: (log.append(("node_pre", repr(go[0]))),
                                           (go[0] + 1,))[1])
    y.grad_fn.register_hook(lambda gi, go: log.append(("node_post", repr(gi[0]),
                                                       repr(go[0]))))
    x.register_post_accumulate_grad_hook(lambda t: log.append(("post_acc", repr(t.grad))))
    y.sum().backward()
    log += [repr(y.grad), repr(x.grad)]
    return log


def test_hook_relative_ordering_matches_torch():
    assert _hook_relative_ordering(torchlike) == _hook_relative_ordering(torch)


_CREATE_GRAPH_WARNS = """
import sys, warnings, importlib
m = importlib.import_module(sys.argv[1])
x = m.ones(2, requires_grad=True)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    m.autograd.grad((x * x).sum(), x, create_graph=True)
    (x * x).sum().backward(create_graph=True)
    (x * x).sum().backward(create_graph=True)
print([(r.category.__name__, str(r.message)[:300]) for r in w])
"""


def test_backward_with_create_graph_warns_once_a_process():
    out = fresh_process_outputs(_CREATE_GRAPH_WARNS)
    assert "reference cycle" in out["torch"] and out["torch"].count("UserWarning") == 1
    assert out["torchlike"] == out["torch"]


def test_next_functions_after_a_backward_list_the_inputs_with_a_gradient():
    """DIFFERENCES.md: a node freed by its backward keeps only its edges in next_functions."""
    def names(m, retain):
        w, x = m.ones(2), m.ones(2, requires_grad=True)
        y = (w * x).sum()
        f = y.grad_fn.next_functions[0][0]
        before = [None if g is None else type(g).__name__ for g, _ in f.next_functions]
        y.backward(retain_graph=retain)
        return before, [None if g is None else type(g).__name__ for g, _ in f.next_functions]
    assert names(torchlike, True) == names(torch, True)
    assert names(torchlike, False)[0] == [None, "AccumulateGrad"]
    assert names(torchlike, False)[1] == ["AccumulateGrad"]
    assert names(torch, False)[1] == [None, "AccumulateGrad"]


@pytest.mark.parametrize("result", ["tensor", "list", "two", "tuple", "none", "shape", "number"])
def test_node_pre_hook_results_are_checked_as_torch(result):
    """A node pre-hook returns None or a tuple of one gradient per output, each of the output's
    type and size: anything else raises torch's error (a Tensor was taken apart row by row)."""
    from oracle import both_outcomes

    def fn(m):
        x = m.ones(3, requires_grad=True)
        y = (x * 2).exp()
        y.grad_fn.register_prehook({
            "tensor": lambda g: g[0] * 0, "list": lambda g: [g[0] * 0],
            "two": lambda g: (g[0], g[0]), "tuple": lambda g: (g[0] * 0,),
            "none": lambda g: None, "shape": lambda g: (m.ones(2),),
            "number": lambda g: (3,)}[result])
        y.sum().backward()
        return x.grad
    got = both_outcomes(fn, msg="first_line")
    if got is not None:
        np.testing.assert_allclose(np.asarray(got[0]), got[1].numpy(), rtol=1e-6)


def test_post_accumulate_grad_hook_must_return_none():
    from oracle import both_outcomes

    def fn(m):
        p = m.ones(2, requires_grad=True)
        p.register_post_accumulate_grad_hook(lambda p: p.grad.mul_(100))
        (p * 3).sum().backward()
        return p.grad
    assert both_outcomes(fn) is None        # (both raise, with torch's message)
