"""Tutorial-style programs (torch.func on models, ...) swept against live torch.

torch runs first: where it raises, torchlike must raise the same class with the same message;
where it returns, torchlike must return the same values, dtypes and shapes.
"""
from __future__ import annotations

import pytest

from oracle import same_as_torch


def _det_init(m, model, scale=0.5):
    with m.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(m.sin(m.arange(p.numel(), dtype=m.float32) + i).reshape(p.shape) * scale)
    return model


# ============================================================ 1. torch.func on a model

def _func_outputs(m):
    from importlib import import_module
    F = import_module(m.__name__ + ".func")
    x = m.tensor([1., 2.], requires_grad=True)
    w = m.tensor([3., 4.], requires_grad=True)
    xd = x.detach()
    model = _det_init(m, m.nn.Linear(2, 1))
    p = {k: v.detach() for k, v in model.named_parameters()}
    outs = {
        "grad_constant": F.grad(lambda a: (a * 2).sum())(x),
        "grad_of_captured": F.grad(lambda a: (a * w).sum())(x),
        "grad_of_detached_input": F.grad(lambda a: (a * a).sum())(xd),
        "grad_and_value": F.grad_and_value(lambda a: (a * 3).sum())(x),
        "vmap_plain": F.vmap(lambda a: a * 2)(xd),
        "vmap_captured": F.vmap(lambda a: a * w)(xd),
        "vmap_captured_detached": F.vmap(lambda a: a * w.detach())(xd),
        "jacrev_captured_detached": F.jacrev(lambda a: a * w.detach())(xd),
        "jacrev_captured": F.jacrev(lambda a: a * w)(xd),
        "functional_call_detached_params": F.functional_call(model, p, (xd,)),
        "vmap_functional_call": F.vmap(lambda pp, a: F.functional_call(model, pp, (a,)),
                                       in_dims=(None, 0))(p, xd.reshape(2, 1).expand(2, 2)),
        "grad_functional_call": F.grad(
            lambda pp: F.functional_call(model, pp, (xd,)).sum())(p)["weight"],
        "grad_and_value_functional_call": F.grad_and_value(
            lambda pp: F.functional_call(model, pp, (xd,)).sum())(p),
        "vmap_two_outputs": F.vmap(lambda a: (a, a.sum() * w))(xd),
        "grad_cut_by_detach": F.grad(lambda a: (a.detach() * w).sum() + a.sum())(xd),
        "grad_times_zero": F.grad(lambda a: (a * a * w * 0).sum())(xd),
    }
    return outs


def _flat_tensors(v):
    if isinstance(v, dict):
        return [t for k in sorted(v) for t in _flat_tensors(v[k])]
    if isinstance(v, (tuple, list)):
        return [t for x in v for t in _flat_tensors(x)]
    return [v]


_FUNC_CASES = [
    "grad_constant", "grad_of_captured", "grad_of_detached_input", "grad_and_value",
    "vmap_plain", "vmap_captured", "vmap_captured_detached", "jacrev_captured_detached",
    "jacrev_captured", "functional_call_detached_params", "vmap_functional_call",
    "grad_functional_call", "grad_and_value_functional_call", "vmap_two_outputs",
    "grad_cut_by_detach", "grad_times_zero"]


@pytest.mark.parametrize("name", _FUNC_CASES)
def test_transform_outputs_require_grad_where_they_depend_on_it(name):
    """An output of a torch.func transform requires grad where it depends, in the graph's
    sense, on a tensor that requires grad (an argument or a captured one); constants,
    detached captures and parameters replaced by ``functional_call`` do not."""
    def f(m):
        ts = _flat_tensors(_func_outputs(m)[name])
        return tuple(ts) + tuple(t.requires_grad for t in ts)
    same_as_torch(f, atol=1e-6, rtol=1e-6)


# ============================================================ 2. einsum of one operand

_EINSUM_VIEWS = ["ij->ji", "ij->ij", "ij", "ji", "...j->j...", "ii->i", "iij->ji", "bchw->bhwc",
                 "ij->i", "ii", "ii->", "i...->..."]


@pytest.mark.parametrize("eq", _EINSUM_VIEWS)
def test_one_operand_einsum_without_a_sum_is_a_view(eq):
    """An einsum of one operand that sums nothing is a view (torch's permute or diagonal):
    its strides, a write through it reaching the input, its node; one that sums is a new
    tensor."""
    def f(m):
        shape = ((2, 2, 3) if eq.startswith("iij") else (2, 3, 2, 4) if eq.startswith("b")
                 else (3, 3) if eq.startswith("ii") else (2, 3))
        base = m.arange(float(m.tensor(shape).prod())).reshape(shape)
        r = m.einsum(eq, base)
        alias, stride, r = r.data_ptr() == base.data_ptr(), r.stride(), r.clone()
        if alias:
            m.einsum(eq, base).fill_(-1.0)
        x = m.ones(shape, requires_grad=True)
        y = m.einsum(eq, x)
        (y * m.arange(float(y.numel())).reshape(y.shape)).sum().backward()
        # (a summing einsum's node is torchlike's own: DIFFERENCES.md, node names)
        node = type(y.grad_fn).__name__ if alias else None
        return (r, stride, alias, base, node, x.grad)
    same_as_torch(f)


# ============================================================ 3. custom autograd Functions

def _custom_functions(m):
    from importlib import import_module
    fn_mod = import_module(m.__name__ + ".autograd.function")

    class Clamp(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, lo, hi):
            ctx.save_for_backward(x)
            ctx.lo, ctx.hi = lo, hi
            return x.clamp(lo, hi)

        @staticmethod
        @fn_mod.once_differentiable
        def backward(ctx, g):
            x, = ctx.saved_tensors
            ctx.seen = ctx.needs_input_grad
            return g * ((x >= ctx.lo) & (x <= ctx.hi)).float(), None, None

    class ScaleInplace(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class SinArgmax(m.autograd.Function):
        @staticmethod
        def forward(x):
            return x.sin(), x.argmax()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])
            ctx.mark_non_differentiable(output[1])

        @staticmethod
        def backward(ctx, g, _):
            x, = ctx.saved_tensors
            return g * x.cos()
    return Clamp, ScaleInplace, SinArgmax


def test_custom_functions_and_their_nodes():
    """A clamp with ``once_differentiable``, an in-place Function (``mark_dirty``) and a
    ``setup_context`` Function with a non-differentiable output: values, gradients, the
    input-grad flags, and the node's repr naming its module (torch's is a Python class)."""
    def f(m):
        Clamp, ScaleInplace, SinArgmax = _custom_functions(m)
        x = m.linspace(-2, 2, 5, requires_grad=True)
        y = Clamp.apply(x, -1.0, 1.0)
        y.sum().backward()
        g1 = x.grad.clone()
        needs = y.grad_fn.seen if hasattr(y.grad_fn, "seen") else None
        a = m.ones(3, requires_grad=True).clone()
        b = ScaleInplace.apply(a)
        node_repr = repr(b.grad_fn).split(" object at ")[0].replace("torchlike.", "torch.")
        (b * m.arange(3.)).sum().backward()
        s, i = SinArgmax.apply(x)
        x.grad = None
        s.sum().backward()
        z = Clamp.apply(x, -1., 1.)
        g, = m.autograd.grad(z.sum(), x, create_graph=True)
        try:
            g.sum().backward()
            err = None
        except RuntimeError as e:
            err = str(e)
        return (y, g1, needs, b is a, b, repr(b).split("grad_fn=")[1], node_repr,
                s.requires_grad, i.requires_grad, i, x.grad, err)
    same_as_torch(f, atol=1e-6, rtol=1e-6)


# ============================================================ 4. backward(inputs=...) of non-leaves

def test_backward_inputs_that_retain_their_grad_accumulate_once():
    """A non-leaf named in ``backward(inputs=...)`` gets its gradient in ``.grad`` once, also
    when it retains its grad (and with a hook on it, the hook's result)."""
    def f(m):
        v = m.ones(3, requires_grad=True)
        w = v * 2
        w.retain_grad()
        w.sum().backward(inputs=[w], retain_graph=True)
        first = w.grad.clone()
        u = w * 3
        u.retain_grad()
        (u * 2).sum().backward(inputs=[u, v], retain_graph=True)
        second = (w.grad.clone(), u.grad.clone(), v.grad.clone())
        w.register_hook(lambda g: g * 10)
        (u * 2).sum().backward(inputs=[w])
        return (first,) + second + (w.grad, u.grad, v.grad)
    same_as_torch(f)


# ============================================================ 5. nn.init warnings

def test_init_warnings_point_where_torchs_do():
    """``kaiming_*_`` of an empty tensor warns at the caller's line; ``trunc_normal_``'s
    warning about its mean points inside the library (torch's comes from a helper)."""
    import warnings

    def f(m):
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            m.nn.init.kaiming_uniform_(m.empty(0, 3))
            m.nn.init.kaiming_normal_(m.empty(3, 0), mode="fan_out")
            m.nn.init.trunc_normal_(m.empty(3), mean=10.0)
        return tuple((w.category.__name__, str(w.message), w.filename == __file__) for w in ws)
    same_as_torch(f)


# ============================================================ 6. Python callables on elements, `in`

_HOST_CALLS = {
    "apply_requires_grad": lambda m: m.ones(2, requires_grad=True).apply_(lambda v: v),
    "apply_non_leaf": lambda m: (m.ones(2, requires_grad=True) * 2).apply_(lambda v: v),
    "apply_detached": lambda m: m.ones(2, requires_grad=True).detach().apply_(lambda v: v * 3),
    "apply_under_no_grad": lambda m: _under_no_grad(
        m, lambda: m.ones(2, requires_grad=True).apply_(lambda v: v)),
    "map_requires_grad": lambda m: m.ones(2, requires_grad=True).map_(m.ones(2), lambda a, b: a),
    "contains_scalar": lambda m: (1 in m.tensor([1, 2]), 3.0 in m.tensor([1., 2.])),
    "contains_tensor": lambda m: m.tensor([2]) in m.tensor([[1, 2], [3, 4]]),
    "contains_mismatched": lambda m: m.ones(2) in m.ones(3),
    "pow_with_a_modulus": lambda m: pow(m.tensor(3), 2, 5),
    "divmod": lambda m: divmod(m.tensor([-7, 7]), 3) + divmod(7, m.tensor(3)),
    "round_to_digits": lambda m: round(m.tensor(2.567), 2),
}


def _under_no_grad(m, fn):
    with m.no_grad():
        return fn()


@pytest.mark.parametrize("name", _HOST_CALLS)
def test_python_callables_on_elements_and_membership(name):
    """``apply_``/``map_`` refuse a tensor that requires grad (also under no_grad), as torch;
    ``x in t`` compares ``x == t`` (its broadcast error names ``x`` first); Python's numeric
    protocols (``pow`` with a modulus is Python's TypeError)."""
    same_as_torch(_HOST_CALLS[name])


# ============================================================ 7. torch.testing in a test suite

_ASSERT_CLOSE = {
    "values": lambda m: m.testing.assert_close(m.tensor([1., 2., 3.]), m.tensor([1., 2.5, 3.1])),
    "dtype": lambda m: m.testing.assert_close(m.tensor([1.]), m.tensor([1.], dtype=m.float64)),
    "shape": lambda m: m.testing.assert_close(m.tensor([1., 2.]), m.tensor([[1., 2.]])),
    "ints": lambda m: m.testing.assert_close(m.tensor([1, 2]), m.tensor([1, 3])),
    "nan": lambda m: m.testing.assert_close(m.tensor([float("nan")]), m.tensor([float("nan")])),
    "only_atol": lambda m: m.testing.assert_close(m.tensor([1.0]), m.tensor([1.1]), atol=0.2),
    "scalars": lambda m: m.testing.assert_close(1.0, 1.1),
    "containers": lambda m: m.testing.assert_close({"a": m.ones(2)}, {"a": m.zeros(2)}),
    "mixed_types": lambda m: m.testing.assert_close(m.ones(2), [1.0, 1.0]),
    "custom_msg": lambda m: m.testing.assert_close(m.ones(2), m.zeros(2), msg="custom"),
    "matrix": lambda m: m.testing.assert_close(m.arange(6.).reshape(2, 3),
                                               m.arange(6.).reshape(2, 3) * 1.01),
    "bools": lambda m: m.testing.assert_close(m.tensor([True]), m.tensor([False])),
    "strides": lambda m: m.testing.assert_close(m.ones(2, 2), m.ones(2, 2).t(), check_stride=True),
    "deprecated_assert_allclose": lambda m: _warning_texts(
        lambda: m.testing.assert_allclose(m.ones(1), m.ones(1))),
}


def _warning_texts(fn):
    import warnings
    with warnings.catch_warnings(record=True) as ws:
        warnings.simplefilter("always")
        fn()
    return tuple((w.category.__name__, str(w.message)) for w in ws)


@pytest.mark.parametrize("name", _ASSERT_CLOSE)
def test_assert_close_messages(name):
    """``torch.testing.assert_close``'s failures (class and whole message) and
    ``assert_allclose``'s deprecation warning, as a third-party test suite meets them."""
    same_as_torch(_ASSERT_CLOSE[name])


def _fn_classes(m):
    F = m.autograd.Function

    class Scale(F):
        @staticmethod
        def forward(x, k=2.0):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    class AddScaled(F):
        @staticmethod
        def forward(ctx, x, y=None, k=2.0):
            ctx.needs = ctx.needs_input_grad
            return x * k + (0 if y is None else y)

        @staticmethod
        def backward(ctx, g):
            return g * 2, g * 5, None

    class ReturnsFloat(F):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return 1.0

    class SavesString(F):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x, None, "s")
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    class Legacy(F):
        def forward(self, x):
            return x
    return Scale, AddScaled, ReturnsFloat, SavesString, Legacy


def _grad_of(m, fn, *args, **kwargs):
    out = fn(*args, **kwargs)
    out.sum().backward()
    return (out,) + tuple(a.grad for a in (*args, *kwargs.values()) if isinstance(a, m.Tensor))


_FN_CALLS = {
    "setup_context_default_bound": lambda m, C, x, w: _grad_of(m, C[0].apply, x),
    "setup_context_keyword": lambda m, C, x, w: _grad_of(m, C[0].apply, x, k=3.0),
    "setup_context_all_keywords": lambda m, C, x, w: _grad_of(m, C[0].apply, x=x, k=4.0),
    "setup_context_missing": lambda m, C, x, w: C[0].apply(k=4.0),
    "keyword_tensor_inputs": lambda m, C, x, w: _grad_of(m, C[1].apply, x=x, y=w),
    "positional_and_keyword": lambda m, C, x, w: _grad_of(m, C[1].apply, x, y=w),
    "needs_input_grad_of_keywords": lambda m, C, x, w: C[1].apply(x, y=w).grad_fn.needs,
    "backward_returns_a_float": lambda m, C, x, w: _grad_of(m, C[2].apply, x),
    "saves_a_string": lambda m, C, x, w: C[3].apply(x),
    "saves_a_string_without_grad": lambda m, C, x, w: C[3].apply(x.detach()),
    "legacy_instance_call": lambda m, C, x, w: C[4]()(x),
    "instantiated": lambda m, C, x, w: _warning_texts(lambda: C[2]()),
}


@pytest.mark.parametrize("name", _FN_CALLS)
def test_function_apply_binding_and_checks(name):
    """``Function.apply`` binds the call to a ``setup_context`` forward's signature (defaults
    included); tensors given by keyword are inputs (``needs_input_grad``, gradients); torch's
    errors for a backward returning a non-tensor, a non-tensor saved for backward (only when
    recording), a legacy instance call, and its warning for instantiating a Function."""
    def f(m):
        x = m.ones(2, requires_grad=True)
        w = m.ones(2, requires_grad=True)
        r = _FN_CALLS[name](m, _fn_classes(m), x, w)
        if isinstance(r, tuple) and r and isinstance(r[0], tuple) and isinstance(r[0][0], str):
            # (warning texts name the class: torch's module path is torchlike's here)
            return tuple((c, t.replace("torchlike", "torch")) for c, t in r)
        return r
    same_as_torch(f)


# ============================================================ 8. whole programs

def _record(m, v):
    """What a program printed, as values ``same_as_torch`` compares: tensors as they are
    (values within the tolerance, dtypes, shapes), Python floats as float64 tensors, containers
    flattened behind a marker of their kind and length, other objects as their text (with
    torch's module name)."""
    if isinstance(v, m.Tensor):
        return [v.detach()]
    if isinstance(v, float):
        return [m.tensor(v, dtype=m.float64)]
    if isinstance(v, (bool, int, type(None))):
        return [v]
    if isinstance(v, dict):
        return [f"<dict {len(v)}>"] + [x for k, val in v.items()
                                       for x in _record(m, str(k)) + _record(m, val)]
    if isinstance(v, (tuple, list)):
        return [f"<{type(v).__name__} {len(v)}>"] + [x for e in v for x in _record(m, e)]
    return [str(v).replace("torchlike", "torch")]


def _same_program_output(program, atol=1e-4, rtol=1e-4):
    finished = set()

    def f(m):
        printed = []
        program(m, lambda *vals: printed.extend(x for v in vals for x in _record(m, v)))
        finished.add(m.__name__)
        return tuple(printed)
    same_as_torch(f, atol=atol, rtol=rtol)
    assert finished == {"torch", "torchlike"}, "the program raised"


# (each program is a script as a tutorial writes it, ``torch`` its module and ``show`` its
# print)

def _prog_policy_gradient(torch, show):
    nn = torch.nn
    F = torch.nn.functional
    Categorical = torch.distributions.Categorical
    Normal = torch.distributions.Normal
    kl_divergence = torch.distributions.kl_divergence
    Bernoulli = torch.distributions.Bernoulli
    Independent = torch.distributions.Independent
    MultivariateNormal = torch.distributions.MultivariateNormal
    torch.manual_seed(0)
    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 16)
            self.head = nn.Linear(16, 3)
        def forward(self, x):
            return self.head(torch.tanh(self.fc(x)))
    pol = Policy()
    with torch.no_grad():
        for i, p in enumerate(pol.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1) / 3)
    opt = torch.optim.Adam(pol.parameters(), lr=1e-2)
    states = torch.linspace(-1, 1, 20).reshape(5, 4)
    logits = pol(states)
    dist = Categorical(logits=logits)
    actions = torch.tensor([0, 2, 1, 1, 0])
    lp = dist.log_prob(actions)
    show(lp)
    show(dist.entropy())
    show(dist.probs)
    show(dist.batch_shape, dist.event_shape)
    rewards = [1.0, 0.0, 0.5, -1.0, 2.0]
    R = 0; returns = []
    for r in reversed(rewards):
        R = r + 0.99 * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + 1e-8)
    show(returns)
    loss = -(lp * returns).sum() - 0.01 * dist.entropy().mean()
    opt.zero_grad(); loss.backward(); opt.step()
    show(loss)
    show(pol.head.weight.grad)
    show(pol.head.bias)
    show(repr(dist))
    n1 = Normal(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
    n2 = Normal(torch.tensor([0.5, 0.0]), torch.tensor([1.5, 1.0]))
    show(kl_divergence(n1, n2))
    show(n1.log_prob(torch.tensor([0.3, -0.2])))
    show(n1.cdf(torch.tensor([0.3, -0.2])), n1.icdf(torch.tensor([0.3, 0.9])))
    show(n1.entropy(), n1.mean, n1.stddev, n1.variance)
    show(repr(n1))
    ind = Independent(n1, 1)
    show(ind.log_prob(torch.tensor([0.3, -0.2])), ind.batch_shape, ind.event_shape)
    c1 = Categorical(probs=torch.tensor([0.2, 0.3, 0.5]))
    c2 = Categorical(probs=torch.tensor([0.4, 0.4, 0.2]))
    show(kl_divergence(c1, c2))
    b = Bernoulli(logits=torch.tensor([0.0, 2.0]))
    show(b.log_prob(torch.tensor([1.0, 0.0])), b.entropy(), b.mean)
    mvn = MultivariateNormal(torch.zeros(2), covariance_matrix=torch.tensor([[2.0, 0.5], [0.5,
                                                                                          1.0]]))
    show(mvn.log_prob(torch.tensor([0.5, -0.5])), mvn.entropy())
    show(mvn.scale_tril)
    try:
        Categorical(probs=torch.tensor([0.2, -0.3]))
    except Exception as e:
        show(type(e).__name__, e)
    try:
        Normal(torch.tensor([0.0]), torch.tensor([-1.0]))
    except Exception as e:
        show(type(e).__name__, e)
    try:
        c1.log_prob(torch.tensor(5))
    except Exception as e:
        show(type(e).__name__, e)
    show(Categorical(logits=torch.tensor([[1.0, 2.0], [0.0, 0.0]])).logits)
    s = Normal(0., 1.)
    show(s.log_prob(torch.tensor(0.5)), s.batch_shape)
    show(torch.distributions.Uniform(0., 2.).log_prob(torch.tensor(1.0)))
    show(kl_divergence(Normal(torch.zeros(3), torch.ones(3)), Normal(torch.ones(3),
                                                                     2*torch.ones(3))).sum())


def _prog_chained_schedulers(torch, show):
    nn = torch.nn
    OneCycleLR = torch.optim.lr_scheduler.OneCycleLR
    CosineAnnealingWarmRestarts = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts
    ReduceLROnPlateau = torch.optim.lr_scheduler.ReduceLROnPlateau
    SequentialLR = torch.optim.lr_scheduler.SequentialLR
    LinearLR = torch.optim.lr_scheduler.LinearLR
    ExponentialLR = torch.optim.lr_scheduler.ExponentialLR
    ChainedScheduler = torch.optim.lr_scheduler.ChainedScheduler
    StepLR = torch.optim.lr_scheduler.StepLR
    MultiStepLR = torch.optim.lr_scheduler.MultiStepLR
    CyclicLR = torch.optim.lr_scheduler.CyclicLR
    LambdaLR = torch.optim.lr_scheduler.LambdaLR
    PolynomialLR = torch.optim.lr_scheduler.PolynomialLR
    ConstantLR = torch.optim.lr_scheduler.ConstantLR
    CosineAnnealingLR = torch.optim.lr_scheduler.CosineAnnealingLR
    MultiplicativeLR = torch.optim.lr_scheduler.MultiplicativeLR
    import warnings
    m = nn.Linear(2, 1)
    def mk(opt=torch.optim.SGD, **kw):
        return opt(m.parameters(), lr=0.1, **kw)
    o = mk(momentum=0.9)
    s = OneCycleLR(o, max_lr=1.0, total_steps=10)
    out = []
    for i in range(10):
        o.step(); s.step(); out.append(round(s.get_last_lr()[0], 6))
    show(out, o.param_groups[0]['momentum'])
    o = mk()
    s = CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2, eta_min=0.01)
    out = []
    for i in range(12):
        o.step(); s.step(); out.append(round(s.get_last_lr()[0], 6))
    show(out)
    o = mk()
    s = CosineAnnealingWarmRestarts(o, T_0=3)
    for e in range(2):
        for b in range(4):
            s.step(e + b / 4)
        show(o.param_groups[0]['lr'])
    o = mk()
    s = ReduceLROnPlateau(o, mode='min', factor=0.5, patience=1, threshold=0.01, cooldown=1,
                          min_lr=0.01)
    for loss in [1.0, 0.9, 0.95, 0.96, 0.97, 0.97, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.0]:
        s.step(loss)
        show(o.param_groups[0]['lr'], s.num_bad_epochs, s.best, s.get_last_lr())
    o = mk()
    s1 = LinearLR(o, start_factor=0.1, total_iters=3)
    s2 = ExponentialLR(o, gamma=0.9)
    s = SequentialLR(o, schedulers=[s1, s2], milestones=[3])
    out = []
    for i in range(8):
        o.step(); s.step(); out.append(round(s.get_last_lr()[0], 6))
    show(out)
    o = mk()
    s = ChainedScheduler([ConstantLR(o, factor=0.5, total_iters=2), ExponentialLR(o, gamma=0.9)])
    out = []
    for i in range(5):
        o.step(); s.step(); out.append(round(o.param_groups[0]['lr'], 6))
    show(out)
    o = mk(momentum=0.9)
    s = CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=2, mode='triangular2')
    out = []
    for i in range(10):
        o.step(); s.step(); out.append(round(s.get_last_lr()[0], 6))
    show(out)
    o = mk()
    s = PolynomialLR(o, total_iters=4, power=2.0)
    out = []
    for i in range(6):
        o.step(); s.step(); out.append(round(s.get_last_lr()[0], 6))
    show(out)
    show(s.state_dict())
    o = mk()
    s = MultiStepLR(o, milestones=[2, 4], gamma=0.5)
    sd = None
    for i in range(3):
        o.step(); s.step()
    sd = s.state_dict()
    show(sd)
    o2 = mk(); s2 = MultiStepLR(o2, milestones=[1], gamma=0.1)
    s2.load_state_dict(sd)
    show(s2.milestones, s2.last_epoch, s2.get_last_lr())
    o = torch.optim.Adam(m.parameters(), lr=0.1)
    s = OneCycleLR(o, max_lr=0.5, epochs=2, steps_per_epoch=3, anneal_strategy='linear',
                   three_phase=True)
    out = []
    for i in range(6):
        o.step(); s.step(); out.append((round(s.get_last_lr()[0], 6),
                                        round(o.param_groups[0]['betas'][0], 6)))
    show(out)
    try:
        s.step()
    except Exception as e:
        show(type(e).__name__, e)
    o = mk()
    s = LambdaLR(o, lr_lambda=lambda e: 0.95 ** e)
    for i in range(3): o.step(); s.step()
    show(s.get_last_lr(), s.last_epoch)
    show(s.state_dict().keys())
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        o = mk(); s = StepLR(o, 2); s.step(); o.step()
        show([str(x.message)[:80] for x in w])
    o = mk(); s = CosineAnnealingLR(o, T_max=5)
    out=[]
    for i in range(12):
        o.step(); s.step(); out.append(round(s.get_last_lr()[0], 6))
    show(out)
    try:
        SequentialLR(o, schedulers=[StepLR(o, 2)], milestones=[1, 2])
    except Exception as e:
        show(type(e).__name__, e)
    try:
        ReduceLROnPlateau(o, mode='foo')
    except Exception as e:
        show(type(e).__name__, e)


def _prog_seq2seq_packed_attention(torch, show):
    nn = torch.nn
    pack_padded_sequence = torch.nn.utils.rnn.pack_padded_sequence
    pad_packed_sequence = torch.nn.utils.rnn.pad_packed_sequence
    pad_sequence = torch.nn.utils.rnn.pad_sequence
    pack_sequence = torch.nn.utils.rnn.pack_sequence
    unpack_sequence = torch.nn.utils.rnn.unpack_sequence
    unpad_sequence = torch.nn.utils.rnn.unpad_sequence
    torch.manual_seed(0)
    def init(mod):
        with torch.no_grad():
            for i, (n, p) in enumerate(mod.named_parameters()):
                w = torch.sin(torch.arange(p.numel(), dtype=torch.float32) * (i + 1) * 0.37)
                p.copy_(w.reshape(p.shape) * 0.3)
    seqs = [torch.tensor([3, 1, 4, 1, 5]), torch.tensor([2, 7]), torch.tensor([6, 6, 2])]
    lengths = torch.tensor([len(s) for s in seqs])
    padded = pad_sequence(seqs, batch_first=True, padding_value=0)
    show(padded, padded.dtype)
    emb = nn.Embedding(10, 4, padding_idx=0); init(emb)
    gru = nn.GRU(4, 5, num_layers=2, batch_first=True, bidirectional=True); init(gru)
    x = emb(padded)
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    show(packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices)
    out, h = gru(packed)
    show(type(out).__name__)
    unp, lens = pad_packed_sequence(out, batch_first=True, total_length=6)
    show(unp.shape, lens)
    show(unp[1])
    show(h.shape, h[:, 0])
    lstm = nn.LSTM(4, 3, batch_first=False, proj_size=2); init(lstm)
    ps = pack_sequence([x[0, :5], x[2, :3], x[1, :2]])
    o, (hh, cc) = lstm(ps)
    show(o.data.shape, hh, cc.shape)
    up = unpack_sequence(o)
    show([u.shape for u in up])
    show(unpad_sequence(padded, lengths, batch_first=True))
    # attention decoder with teacher forcing
    class Dec(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4)
            self.cell = nn.GRUCell(4 + 10, 10)
            self.attn = nn.Linear(10, 10, bias=False)
            self.out = nn.Linear(20, 10)
        def forward(self, tok, h, enc, mask):
            scores = torch.bmm(enc, self.attn(h).unsqueeze(2)).squeeze(2)
            scores = scores.masked_fill(~mask, float('-inf'))
            a = torch.softmax(scores, dim=1)
            ctx = torch.bmm(a.unsqueeze(1), enc).squeeze(1)
            h = self.cell(torch.cat([self.emb(tok), ctx], 1), h)
            return self.out(torch.cat([h, ctx], 1)), h, a
    dec = Dec(); init(dec)
    mask = torch.arange(6)[None, :] < lens[:, None]
    h = unp[:, 0]
    tgt = torch.tensor([[1, 2, 3], [4, 5, 0], [7, 8, 9]])
    loss = 0
    crit = nn.CrossEntropyLoss(ignore_index=0)
    tok = torch.zeros(3, dtype=torch.long)
    for t in range(3):
        logits, h, a = dec(tok, h, unp, mask)
        loss = loss + crit(logits, tgt[:, t])
        tok = tgt[:, t] if t % 2 == 0 else logits.argmax(1)
    show(a)
    show(loss)
    loss.backward()
    show(gru.weight_hh_l1_reverse.grad.norm(), emb.weight.grad[0], dec.attn.weight.grad.sum())
    show(nn.utils.clip_grad_norm_(list(gru.parameters()) + list(dec.parameters()), 0.5))
    show(nn.utils.clip_grad_value_(gru.parameters(), 0.01))
    show(gru)
    show(lstm)
    show(repr(packed)[:60])
    try:
        pack_padded_sequence(x, torch.tensor([5, 2, 3]), batch_first=True)
    except Exception as e:
        show(type(e).__name__, e)
    try:
        pack_padded_sequence(x, torch.tensor([5, 2, 0]), batch_first=True, enforce_sorted=False)
    except Exception as e:
        show(type(e).__name__, e)


def _prog_resnet_checkpoint_round_trip(torch, show):
    import io
    nn = torch.nn
    F = torch.nn.functional
    torch.manual_seed(0)
    class Block(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.b1 = nn.BatchNorm2d(cout)
            self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.b2 = nn.BatchNorm2d(cout)
            self.short = nn.Sequential()
            if stride != 1 or cin != cout:
                self.short = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                           nn.BatchNorm2d(cout))
        def forward(self, x):
            y = F.relu(self.b1(self.c1(x)))
            y = self.b2(self.c2(y))
            return F.relu(y + self.short(x))
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4),
                                      nn.ReLU(inplace=True))
            self.layers = nn.Sequential(Block(4, 4, 1), Block(4, 8, 2))
            self.pool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(8, 5)
        def forward(self, x):
            return self.fc(torch.flatten(self.pool(self.layers(self.stem(x))), 1))
    net = Net()
    with torch.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(torch.cos(torch.arange(p.numel(),
                                           dtype=torch.float32) * 0.7 + i).reshape(p.shape) * 0.2)
    x = torch.sin(torch.arange(2 * 3 * 8 * 8, dtype=torch.float32)).reshape(2, 3, 8, 8)
    y = torch.tensor([1, 3])
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4, nesterov=True)
    for step in range(3):
        net.train()
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(net(x), y, label_smoothing=0.1)
        loss.backward()
        opt.step()
        show(step, round(loss.item(), 5))
    show(net.stem[1].running_mean, net.stem[1].running_var, net.stem[1].num_batches_tracked)
    net.eval()
    with torch.no_grad():
        ev = net(x)
    show(ev)
    buf = io.BytesIO()
    torch.save({'model': net.state_dict(), 'opt': opt.state_dict(), 'epoch': 3}, buf)
    buf.seek(0)
    ck = torch.load(buf, weights_only=True)
    show(sorted(ck['model'].keys())[:6], len(ck['model']))
    show(ck['opt']['param_groups'])
    show(type(ck['opt']['state'][0]['momentum_buffer']), ck['epoch'])
    net2 = Net()
    res = net2.load_state_dict(ck['model'])
    show(res)
    net2.eval()
    with torch.no_grad():
        show(torch.allclose(net2(x), ev), (net2(x) - ev).abs().max())
    opt2 = torch.optim.SGD(net2.parameters(), lr=0.1, momentum=0.9)
    opt2.load_state_dict(ck['opt'])
    show(opt2.param_groups[0]['lr'], opt2.param_groups[0]['nesterov'])
    sd = net.state_dict()
    sd.pop('fc.bias')
    sd['extra'] = torch.zeros(1)
    try:
        net2.load_state_dict(sd)
    except RuntimeError as e:
        show(e)
    show(net2.load_state_dict(sd, strict=False))
    sd = net.state_dict(); sd['fc.weight'] = torch.zeros(3, 3)
    try:
        net2.load_state_dict(sd)
    except RuntimeError as e:
        show(e)
    show(sum(p.numel() for p in net.parameters() if p.requires_grad))
    for n, mod in net.named_modules():
        if isinstance(mod, nn.BatchNorm2d):
            mod.eval(); mod.weight.requires_grad_(False)
    show([n for n, p in net.named_parameters() if not p.requires_grad][:3])
    show(net.layers[1])
    x.requires_grad_(True)
    net.train()
    out = net(x).sum()
    g, = torch.autograd.grad(out, x)
    show(g.shape, g.abs().sum())


def _prog_embedding_bag_text_classifier(torch, show):
    nn = torch.nn
    F = torch.nn.functional
    torch.manual_seed(0)
    class TextClf(nn.Module):
        def __init__(self, vocab, dim, ncls, mode):
            super().__init__()
            self.bag = nn.EmbeddingBag(vocab, dim, mode=mode, sparse=False)
            self.fc = nn.Linear(dim, ncls)
            with torch.no_grad():
                self.bag.weight.copy_(torch.sin(torch.arange(vocab * dim, dtype=torch.float32))
                                      .reshape(vocab, dim))
                self.fc.weight.copy_(torch.cos(torch.arange(ncls * dim, dtype=torch.float32))
                                     .reshape(ncls, dim) * 0.3)
                self.fc.bias.zero_()
        def forward(self, text, offsets, w=None):
            return self.fc(self.bag(text, offsets, per_sample_weights=w))
    batch = [([1, 4, 2], 0), ([3, 3], 1), ([5, 0, 1, 2], 2), ([7], 1)]
    text = torch.cat([torch.tensor(t) for t, _ in batch])
    offsets = torch.tensor([0] + [len(t) for t, _ in batch[:-1]]).cumsum(dim=0)
    labels = torch.tensor([l for _, l in batch])
    show(text, offsets)
    for mode in ["mean", "sum", "max"]:
        m = TextClf(8, 4, 3, mode)
        opt = torch.optim.SGD(m.parameters(), lr=0.5)
        for ep in range(3):
            opt.zero_grad()
            out = m(text, offsets)
            loss = F.cross_entropy(out, labels)
            loss.backward()
            opt.step()
        show(mode, loss.item(), out.argmax(1), m.bag.weight.grad[3])
    m = TextClf(8, 4, 3, "sum")
    w = torch.linspace(0.1, 1.0, len(text))
    show(m(text, offsets, w))
    show(m.bag(text, torch.tensor([0, 3, 5, 9, 10]), ) if False else '')
    bag = nn.EmbeddingBag(8, 3, mode='sum', include_last_offset=True)
    with torch.no_grad(): bag.weight.copy_(torch.arange(24.).reshape(8, 3))
    show(bag(text, torch.tensor([0, 3, 5, 9, 10])))
    bag2 = nn.EmbeddingBag(8, 3, mode='mean', padding_idx=3)
    with torch.no_grad(): bag2.weight.copy_(torch.arange(24.).reshape(8, 3))
    show(bag2(text, offsets))
    show(bag2(torch.tensor([[1, 3], [3, 3]])))
    show(F.embedding_bag(text, torch.arange(24.).reshape(8, 3), offsets, mode='max'))
    show(F.embedding_bag(torch.tensor([1, 2]), torch.arange(24.).reshape(8, 3),
                         torch.tensor([0, 2]), mode='mean'))
    bag3 = nn.EmbeddingBag.from_pretrained(torch.arange(24.).reshape(8, 3), mode='sum',
                                           max_norm=10.0)
    show(bag3(text, offsets), bag3.weight[7])
    show(bag3)
    try:
        bag(text, torch.tensor([0, 3, 5, 9]), per_sample_weights=w)
    except Exception as e:
        show(type(e).__name__, e)
    try:
        bag2(text, offsets, per_sample_weights=w)
    except Exception as e:
        show(type(e).__name__, e)
    try:
        bag2(text.reshape(2, 5), offsets)
    except Exception as e:
        show(type(e).__name__, e)
    try:
        bag2(text, torch.tensor([1, 3]))
    except Exception as e:
        show(type(e).__name__, e)
    try:
        bag2(text.float(), offsets)
    except Exception as e:
        show(type(e).__name__, e)
    emb = nn.Embedding(10, 3, max_norm=1.0)
    with torch.no_grad(): emb.weight.copy_(torch.arange(30.).reshape(10, 3))
    show(emb(torch.tensor([1, 1, 2])), emb.weight[:3])
    e2 = nn.Embedding(5, 2, scale_grad_by_freq=True)
    with torch.no_grad(): e2.weight.fill_(1.)
    e2(torch.tensor([1, 1, 2])).sum().backward()
    show(e2.weight.grad)


def _prog_message_passing_and_patches(torch, show):
    nn = torch.nn
    F = torch.nn.functional
    edge_index = torch.tensor([[0, 1, 1, 2, 3, 3, 4], [1, 0, 2, 1, 4, 2, 3]])
    N = 5
    x = torch.sin(torch.arange(N * 3, dtype=torch.float32)).reshape(N, 3)
    class GCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 4)
            with torch.no_grad():
                self.lin.weight.copy_(torch.cos(torch.arange(12.)).reshape(4, 3) * 0.5)
                self.lin.bias.fill_(0.01)
        def forward(self, x, ei):
            src, dst = ei
            deg = torch.zeros(N).scatter_add_(0, dst, torch.ones(dst.numel())) + 1
            norm = deg[src].rsqrt() * deg[dst].rsqrt()
            h = self.lin(x)
            msg = h[src] * norm.unsqueeze(-1)
            out = torch.zeros(N, 4).index_add_(0, dst, msg)
            out = out + h / deg.unsqueeze(-1)
            return out
    g = GCN()
    out = g(x, edge_index)
    show(out)
    loss = out.pow(2).sum()
    loss.backward()
    show(g.lin.weight.grad)
    agg_max = torch.zeros(N, 3).scatter_reduce(0, edge_index[1].unsqueeze(-1).expand(-1, 3),
                                               x[edge_index[0]], reduce="amax", include_self=False)
    show(agg_max)
    agg_mean = torch.zeros(N, 3).scatter_reduce(0, edge_index[1].unsqueeze(-1).expand(-1, 3),
                                                x[edge_index[0]], reduce="mean", include_self=False)
    show(agg_mean)
    att = (x[edge_index[0]] * x[edge_index[1]]).sum(-1)
    att = att - torch.zeros(N).scatter_reduce(0, edge_index[1], att, "amax",
                                              include_self=False)[edge_index[1]]
    e = att.exp()
    den = torch.zeros(N).index_add(0, edge_index[1], e)
    alpha = e / den[edge_index[1]]
    show(alpha)
    adj = torch.zeros(N, N); adj[edge_index[0], edge_index[1]] = 1
    show(adj, adj.sum(1), torch.nonzero(adj).T, adj.nonzero(as_tuple=True)[0])
    show(torch.zeros(3, dtype=torch.long).index_put_((torch.tensor([0, 0, 2]),),
                                                     torch.tensor([1, 2, 3]), accumulate=True))
    show(torch.zeros(2, 3).index_fill_(1, torch.tensor([0, 2]), -1.0))
    show(torch.zeros(5).index_copy_(0, torch.tensor([4, 0]), torch.tensor([9., 8.])))
    show(F.one_hot(torch.tensor([0, 2, 1]), num_classes=4), F.one_hot(torch.tensor([[1],
                                                                                    [2]])).shape)
    img = torch.arange(2 * 3 * 8 * 8, dtype=torch.float32).reshape(2, 3, 8, 8)
    patches = img.unfold(2, 4, 4).unfold(3, 4, 4)
    show(patches.shape)
    patches = patches.permute(0, 2, 3, 1, 4, 5).reshape(2, 4, 48)
    show(patches[1, 2, :5])
    cols = F.unfold(img, kernel_size=3, padding=1, stride=2)
    show(cols.shape, cols[0, :3, :3])
    back = F.fold(cols, output_size=(8, 8), kernel_size=3, padding=1, stride=2)
    show(back.shape, back[0, 0, :2, :4])
    show(torch.as_strided(torch.arange(9.), (3, 3), (1, 3)), torch.arange(10).unfold(0, 4, 3))
    show(torch.roll(torch.arange(6).reshape(2, 3), shifts=(1, -1), dims=(0, 1)))
    show(img.flatten(2).transpose(1, 2).shape, img.movedim(1, -1).shape, img.swapaxes(0, 1).shape)
    show(torch.einsum('bchw->bhwc', img).stride(), img.permute(0, 2, 3, 1).contiguous().stride())
    t = torch.arange(12).reshape(3, 4)
    show(t[[0, 2]][:, [1, 3]], t[t > 5], t[..., None].shape, t[:, None, :].shape, t[1:, ::2])
    t[t % 2 == 0] = -1
    show(t)
    t[:, 1] += torch.tensor([10, 20, 30])
    show(t, t.masked_select(t > 10))
    show(torch.take(t, torch.tensor([0, 5, 11])),
         torch.take_along_dim(t, torch.tensor([[0], [1], [2]]), dim=1))
    show(t.scatter(1, torch.tensor([[0], [1], [2]]), 100))


def _prog_beam_search(torch, show):
    nn = torch.nn
    F = torch.nn.functional
    V, H, B, K = 7, 6, 2, 3
    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(V, H)
            self.rnn = nn.GRU(H, H, batch_first=True)
            self.out = nn.Linear(H, V)
            with torch.no_grad():
                for i, p in enumerate(self.parameters()):
                    p.copy_(torch.sin(torch.arange(p.numel(),
                                                   dtype=torch.float32) * 1.3 + i).reshape(p.shape))
        def step(self, tok, h):
            o, h = self.rnn(self.emb(tok).unsqueeze(1), h)
            return F.log_softmax(self.out(o.squeeze(1)), -1), h
    lm = LM().eval()
    @torch.no_grad()
    def beam_search(start, steps=4):
        tok = start.repeat_interleave(K)
        h = torch.zeros(1, B * K, H)
        scores = torch.full((B, K), float('-inf')); scores[:, 0] = 0
        scores = scores.view(-1)
        hist = tok.unsqueeze(1)
        for s in range(steps):
            lp, h = lm.step(tok, h)
            cand = (scores.unsqueeze(1) + lp).view(B, K * V)
            top, idx = cand.topk(K, dim=1)
            beam = idx // V
            tok = (idx % V).view(-1)
            base = (torch.arange(B) * K).unsqueeze(1)
            sel = (beam + base).view(-1)
            h = h.index_select(1, sel)
            hist = torch.cat([hist[sel], tok.unsqueeze(1)], 1)
            scores = top.view(-1)
        return hist.view(B, K, -1), scores.view(B, K)
    seqs, sc = beam_search(torch.tensor([1, 4]))
    show(seqs)
    show(sc)
    best = sc.argmax(1)
    show(seqs[torch.arange(B), best])
    show(torch.gather(seqs, 1, best.view(B, 1, 1).expand(-1, 1, seqs.size(2))).squeeze(1))
    @torch.no_grad()
    def greedy(tok, n=5, temp=0.7, topk=3):
        h = None
        out = [tok]
        for _ in range(n):
            lp, h = lm.step(tok, h)
            logits = lp / temp
            v, _ = torch.topk(logits, topk)
            logits[logits < v[:, [-1]]] = -float('inf')
            probs = F.softmax(logits, -1)
            tok = probs.argmax(-1)
            out.append(tok)
        return torch.stack(out, 1), probs
    g, probs = greedy(torch.tensor([0, 3]))
    show(g, probs)
    sorted_logits, sorted_idx = torch.sort(torch.log(probs + 1e-9), descending=True)
    cum = torch.cumsum(F.softmax(sorted_logits, -1), -1)
    remove = cum > 0.9
    remove[..., 1:] = remove[..., :-1].clone(); remove[..., 0] = False
    show(remove, remove.scatter(1, sorted_idx, remove))


def _prog_custom_optimizer(torch, show):
    nn = torch.nn
    Optimizer = torch.optim.Optimizer
    class MySGD(Optimizer):
        def __init__(self, params, lr=0.1, momentum=0.0):
            if lr < 0: raise ValueError(f"Invalid learning rate: {lr}")
            super().__init__(params, dict(lr=lr, momentum=momentum))
        @torch.no_grad()
        def step(self, closure=None):
            loss = None
            if closure is not None:
                with torch.enable_grad():
                    loss = closure()
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None: continue
                    st = self.state[p]
                    if "buf" not in st:
                        st["buf"] = torch.clone(p.grad).detach()
                        st["step"] = 0
                    else:
                        st["buf"].mul_(group["momentum"]).add_(p.grad)
                    st["step"] += 1
                    p.add_(st["buf"], alpha=-group["lr"])
            return loss
    m = nn.Linear(2, 1)
    with torch.no_grad():
        m.weight.copy_(torch.tensor([[0.5, -0.5]])); m.bias.zero_()
    opt = MySGD(m.parameters(), lr=0.1, momentum=0.9)
    show(opt)
    pre, post = [], []
    opt.register_step_pre_hook(lambda o, a, k: pre.append(len(o.param_groups)))
    opt.register_step_post_hook(lambda o, a, k: post.append(o.state[m.weight]["step"]))
    X = torch.tensor([[1., 2.], [3., 4.]]); Y = torch.tensor([[1.], [0.]])
    for i in range(3):
        def closure():
            opt.zero_grad()
            l = ((m(X) - Y) ** 2).mean()
            l.backward()
            return l
        l = opt.step(closure)
        show(i, l.item(), m.weight.data)
    show(pre, post)
    sd = opt.state_dict()
    show(sd["param_groups"], list(sd["state"].keys()), sd["state"][0]["step"])
    opt2 = MySGD(m.parameters(), lr=0.5)
    opt2.load_state_dict(sd)
    show(opt2.param_groups[0]["lr"], opt2.state[m.weight]["buf"])
    m.bias.requires_grad_(False)
    opt.zero_grad()
    show(m.weight.grad, m.bias.grad)
    ((m(X)) ** 2).sum().backward()
    opt.step()
    show(m.bias, m.weight.grad)
    opt.zero_grad(set_to_none=False)
    show(m.weight.grad)
    show(opt.defaults, isinstance(opt, torch.optim.Optimizer))
    opt.register_state_dict_pre_hook(lambda o: show("pre sd"))
    opt.register_state_dict_post_hook(lambda o, sd: sd.update(extra=1) or sd)
    show(sorted(opt.state_dict().keys()))
    opt.register_load_state_dict_pre_hook(lambda o, sd: show("pre load", sorted(sd.keys())))
    opt.load_state_dict(opt.state_dict())
    try:
        MySGD([], lr=0.1)
    except Exception as e:
        show(type(e).__name__, e)
    try:
        MySGD([{"params": [m.weight]}, {"params": [m.weight]}])
    except Exception as e:
        show(type(e).__name__, e)
    try:
        opt.load_state_dict({"state": {}, "param_groups": []})
    except Exception as e:
        show(type(e).__name__, e)
    adam = torch.optim.Adam(m.parameters(), lr=0.01)
    try:
        adam.load_state_dict(opt.state_dict())
    except Exception as e:
        show(type(e).__name__, e)


def _prog_transformer_seq2seq(torch, show):
    import math
    nn = torch.nn
    torch.manual_seed(0)
    def init(mod):
        with torch.no_grad():
            for i, (n, p) in enumerate(mod.named_parameters()):
                w = torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.37 + i)
                p.copy_(w.reshape(p.shape) * (0.2 if p.dim() > 1 else 0.05))
        return mod
    class PosEnc(nn.Module):
        def __init__(self, d, maxlen=50):
            super().__init__()
            pos = torch.arange(maxlen).unsqueeze(1)
            div = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
            pe = torch.zeros(maxlen, 1, d)
            pe[:, 0, 0::2] = torch.sin(pos * div)
            pe[:, 0, 1::2] = torch.cos(pos * div)
            self.register_buffer('pe', pe)
        def forward(self, x):
            return x + self.pe[:x.size(0)]
    class Seq2Seq(nn.Module):
        def __init__(self, V=11, d=8):
            super().__init__()
            self.emb = nn.Embedding(V, d)
            self.pos = PosEnc(d)
            self.tf = nn.Transformer(d, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
                                     dim_feedforward=16, dropout=0.0)
            self.out = nn.Linear(d, V)
        def forward(self, src, tgt, src_pad, tgt_pad):
            tmask = self.tf.generate_square_subsequent_mask(tgt.size(0))
            s = self.pos(self.emb(src) * math.sqrt(8))
            t = self.pos(self.emb(tgt) * math.sqrt(8))
            o = self.tf(s, t, tgt_mask=tmask, src_key_padding_mask=src_pad,
                        tgt_key_padding_mask=tgt_pad, memory_key_padding_mask=src_pad)
            return self.out(o)
    model = init(Seq2Seq())
    src = torch.tensor([[1, 2], [3, 4], [5, 0], [6, 0]])
    tgt = torch.tensor([[9, 9], [2, 3], [4, 0]])
    src_pad = (src == 0).T
    tgt_pad = (tgt == 0).T
    show(model.tf.generate_square_subsequent_mask(3))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(3):
        logits = model(src, tgt[:-1], src_pad, tgt_pad[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, 11), tgt[1:].reshape(-1),
                                           ignore_index=0)
        opt.zero_grad(); loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        show(step, round(loss.item(), 5))
    model.eval()
    with torch.no_grad():
        ys = torch.tensor([[9], [9]]).T
        mem = model.tf.encoder(model.pos(model.emb(src) * math.sqrt(8)),
                               src_key_padding_mask=src_pad)
        for i in range(3):
            t = model.pos(model.emb(ys) * math.sqrt(8))
            o = model.tf.decoder(t, mem,
                                 tgt_mask=model.tf.generate_square_subsequent_mask(ys.size(0)),
                                 memory_key_padding_mask=src_pad)
            nxt = model.out(o[-1]).argmax(-1)
            ys = torch.cat([ys, nxt.unsqueeze(0)], 0)
        show(ys.T, mem.shape, mem[0, 0])
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True, norm_first=True,
                                       activation='gelu')
    enc = init(nn.TransformerEncoder(layer, 2, enable_nested_tensor=False))
    x = torch.sin(torch.arange(2 * 5 * 8.)).reshape(2, 5, 8)
    show(enc(x, is_causal=True, mask=nn.Transformer.generate_square_subsequent_mask(5))[0, :2])
    show(enc(x, src_key_padding_mask=torch.tensor([[False] * 5, [False, False, False, True,
                                                                 True]]))[1, 3])
    mha = init(nn.MultiheadAttention(8, 2, batch_first=True, kdim=6, vdim=4))
    q = torch.cos(torch.arange(2 * 3 * 8.)).reshape(2, 3, 8)
    k = torch.cos(torch.arange(2 * 5 * 6.)).reshape(2, 5, 6)
    v = torch.cos(torch.arange(2 * 5 * 4.)).reshape(2, 5, 4)
    kpm = torch.tensor([[False] * 5, [False, True, False, True, False]])
    o, w = mha(q, k, v, key_padding_mask=kpm, average_attn_weights=False)
    show(o[1], w.shape, w[1, 0])
    o, w = mha(q, k, v, attn_mask=torch.zeros(3, 5).bool(), need_weights=False)
    show(o.sum(), w)
    sd = model.state_dict()
    show(len(sd), list(sd)[:5])


def _prog_saved_tensor_hooks_and_nodes(torch, show):
    fwAD = torch.autograd.forward_ad
    saved_tensors_hooks = torch.autograd.graph.saved_tensors_hooks
    save_on_cpu = torch.autograd.graph.save_on_cpu
    register_multi_grad_hook = torch.autograd.graph.register_multi_grad_hook
    Node = torch.autograd.graph.Node
    packed = []
    def pack(t):
        packed.append(tuple(t.shape))
        return t * 1
    def unpack(t):
        return t
    x = torch.linspace(-1, 1, 4, requires_grad=True)
    with saved_tensors_hooks(pack, unpack):
        y = (x.exp() * x.sin()).sum()
    show(packed)
    y.backward()
    show(x.grad)
    with save_on_cpu(pin_memory=False):
        z = (x * x).tanh().sum()
    z.backward()
    show(x.grad)
    a = torch.ones(2, requires_grad=True); b = torch.ones(2, requires_grad=True)
    seen = []
    h = register_multi_grad_hook((a, b), lambda grads: seen.append([g is None for g in grads]))
    (a * 2).sum().backward()
    ((a * b).sum()).backward()
    show(seen)
    h.remove()
    out = (a * b).exp().sum()
    fn = out.grad_fn
    show(type(fn).__name__, [type(n).__name__ if n else None for n, _ in fn.next_functions])
    def walk(n, d=0):
        if n is None: return
        show(" " * d + type(n).__name__)
        for c, _ in n.next_functions:
            walk(c, d + 1)
    walk(fn)
    calls = []
    hd = fn.register_hook(lambda gi, go: calls.append(("post", len(gi), len(go))))
    hp = fn.register_prehook(lambda go: calls.append(("pre", go[0].shape)))
    out.backward()
    show(calls)
    show(isinstance(fn, Node), fn.name(), fn.metadata)
    e = (a * 3).exp()
    show(torch.allclose(e.grad_fn._saved_result, e))
    primal = torch.tensor([1.0, 2.0]); tangent = torch.tensor([1.0, 0.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(primal, tangent)
        o = (d.sin() * d).sum()
        p, t = fwAD.unpack_dual(o)
        show(p, t)
        lin = torch.nn.Linear(2, 1)
        with torch.no_grad():
            lin.weight.fill_(0.5); lin.bias.zero_()
        show(fwAD.unpack_dual(lin(d)).tangent)
    with torch.autograd.graph.disable_saved_tensors_hooks("no hooks please"):
        try:
            with saved_tensors_hooks(pack, unpack):
                pass
        except RuntimeError as e:
            show(e)
    v = torch.ones(3, requires_grad=True)
    w = v * 2
    w.register_hook(lambda g: show("hook", g))
    w.retain_grad()
    w.sum().backward(retain_graph=True)
    show(w.grad, v.grad)
    w.sum().backward(inputs=[w], retain_graph=True)
    show(w.grad, v.grad)
    show(torch.autograd.grad(w.sum(), v, retain_graph=True, allow_unused=True,
                             materialize_grads=True))
    show(torch.autograd.grad([w.sum(), (w ** 2).sum()], [v], grad_outputs=[torch.tensor(1.),
                                                                           torch.tensor(0.5)]))
    q = torch.ones(2, requires_grad=True)
    r = q * 2
    r.backward(torch.tensor([1., 3.]))
    show(q.grad)
    try:
        r2 = q * 2
        r2.backward()
    except RuntimeError as e:
        show(e)


_PROGRAMS = [_prog_policy_gradient, _prog_chained_schedulers, _prog_seq2seq_packed_attention,
             _prog_resnet_checkpoint_round_trip, _prog_embedding_bag_text_classifier,
             _prog_message_passing_and_patches, _prog_beam_search, _prog_custom_optimizer,
             _prog_transformer_seq2seq, _prog_saved_tensor_hooks_and_nodes]


@pytest.mark.parametrize("program", _PROGRAMS, ids=lambda p: p.__name__[len("_prog_"):])
def test_program(program):
    """Everything the program prints (values, dtypes, shapes, texts, messages) is torch's."""
    _same_program_output(program)


# ============================================================ 9. vmap's structure errors

_VMAP_STRUCTURES = {
    "short_in_dims": lambda m, F, x: F.vmap(lambda a, b: a + b, in_dims=(0,))(x, x),
    "nested_list": lambda m, F, x: F.vmap(lambda a, b: a, in_dims=(0, [0, 1]))(x, (x, x)),
    "dict_input": lambda m, F, x: F.vmap(lambda a: a, in_dims=(0, 0))({"u": x}),
    "out_dims": lambda m, F, x: F.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(x),
    "namedtuple_out": lambda m, F, x: F.vmap(lambda a: a.max(0), out_dims=(0,))(x),
}


@pytest.mark.parametrize("name", _VMAP_STRUCTURES)
def test_vmap_structure_errors_show_torchs_treespecs(name):
    """vmap's error for ``in_dims``/``out_dims`` that do not match the structure shows the
    structures as torch's pytree prints them (``TreeSpec(tuple, None, [*,\\n  *])``)."""
    def f(m):
        from importlib import import_module
        return _VMAP_STRUCTURES[name](m, import_module(m.__name__ + ".func"), m.ones(2, 3))
    same_as_torch(f)


# ============================================================ 10. torch.func's argument checks

def _funcs(m):
    from importlib import import_module
    return import_module(m.__name__ + ".func")


_FUNC_CHECKS = {
    "grad_of_ints": lambda m, F: F.grad(lambda a: a.sum())(m.tensor([1, 2])),
    "vjp_of_ints": lambda m, F: F.vjp(lambda a: a * 2, m.tensor([1, 2]))[0],
    "jacrev_of_ints": lambda m, F: F.jacrev(lambda a: a)(m.tensor([1, 2])),
    "jacfwd_of_ints": lambda m, F: F.jacfwd(lambda a: a.float())(m.tensor([1, 2])),
    "jvp_of_ints": lambda m, F: F.jvp(lambda a: a, (m.tensor([1, 2]),), (m.tensor([1, 2]),)),
    "jvp_int_tangent": lambda m, F: F.jvp(lambda a: a, (m.ones(2),), (m.tensor([1, 2]),)),
    "hessian_of_ints": lambda m, F: F.hessian(lambda a: a.sum())(m.tensor([1, 2])),
    "jvp_tangent_of_another_size": lambda m, F: F.jvp(lambda a: a, (m.ones(2),), (m.ones(3),)),
    "grad_of_a_complex_output": lambda m, F: F.grad(lambda a: (a * 1j).sum())(m.ones(2)),
    "grad_and_value_complex": lambda m, F: F.grad_and_value(lambda a: a.sum())(
        m.tensor([1 + 1j])),
    "jacrev_non_tensor_output": lambda m, F: F.jacrev(lambda a: (a, "s"))(m.ones(2)),
    "jacrev_aux_not_a_pair": lambda m, F: F.jacrev(lambda a: a, has_aux=True)(m.ones(2)),
    "vjp_cotangent_structure": lambda m, F: F.vjp(lambda a: (a, a), m.ones(2))[1](m.ones(2)),
}


@pytest.mark.parametrize("name", _FUNC_CHECKS)
def test_func_transforms_check_their_arguments_as_torch(name):
    """torch.func's errors for inputs that cannot be differentiated (integers: grad/vjp/jacrev's
    RuntimeError, jvp/jacfwd's ValueError from making them dual), a tangent of another size, a
    complex output of grad, and jacrev's messages (torch's name vjp)."""
    same_as_torch(lambda m: _FUNC_CHECKS[name](m, _funcs(m)))


# ============================================================ 11. flex_attention in eager

def test_flex_attention_warns_once_a_process_that_it_runs_unfused():
    """flex_attention called eagerly warns once a process (torch's UserWarning pointing inside
    the library) that it materializes the scores; ``_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG``
    silences it."""
    from oracle import fresh_process_outputs
    code = ("import sys, warnings, importlib; m = __import__(sys.argv[1])\n"
            "fa = importlib.import_module(sys.argv[1] + '.nn.attention.flex_attention')\n"
            "q = m.ones(1, 1, 2, 4)\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    fa.flex_attention(q, q, q); fa.flex_attention(q, q, q, return_lse=True)\n"
            "    fa.flex_attention(q, q, q, return_lse=True)\n"
            "print([(x.category.__name__, str(x.message), 'flex_attention' in x.filename)\n"
            "       for x in w])\n"
            "fa._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = True; fa._warned = set()\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always'); fa.flex_attention(q, q, q)\n"
            "print(len(w))\n")
    out = fresh_process_outputs(code)
    assert out["torch"] and out["torchlike"] == out["torch"]


# ============================================================ 12. where warnings point

_NN_WARNINGS = {
    "softmax_implicit_dim": lambda m, F: F.softmax(m.ones(2, 3)),
    "module_softmax_implicit_dim": lambda m, F: m.nn.Softmax()(m.ones(2, 3)),
    "dropout2d_of_3d": lambda m, F: F.dropout2d(m.ones(2, 3, 4), 0.5),
    "mse_target_size": lambda m, F: F.mse_loss(m.ones(2, 1), m.ones(2)),
    "module_mse_target_size": lambda m, F: m.nn.MSELoss()(m.ones(2, 1), m.ones(2)),
    "kl_div_mean": lambda m, F: F.kl_div(m.zeros(2), m.ones(2)),
    "conv_same_even_kernel": lambda m, F: F.conv1d(m.ones(1, 1, 5), m.ones(1, 1, 2),
                                                   padding="same"),
    "upsample": lambda m, F: F.upsample(m.ones(1, 1, 2), scale_factor=2),
    "grid_sample_align_corners": lambda m, F: F.grid_sample(m.ones(1, 1, 3, 3),
                                                            m.zeros(1, 2, 2, 2)),
    "affine_grid_align_corners": lambda m, F: F.affine_grid(m.zeros(1, 2, 3), (1, 1, 2, 2)),
    "affine_grid_unit_size": lambda m, F: F.affine_grid(m.zeros(1, 2, 3), (1, 1, 1, 2),
                                                        align_corners=True),
    "mha_forward_mismatched_masks": lambda m, F: F.multi_head_attention_forward(
        m.ones(3, 1, 4), m.ones(3, 1, 4), m.ones(3, 1, 4), 4, 2, m.ones(12, 4), m.zeros(12),
        None, None, False, 0.0, m.eye(4), m.zeros(4),
        key_padding_mask=m.zeros(1, 3, dtype=m.bool), attn_mask=m.zeros(3, 3)),
}


@pytest.mark.parametrize("name", _NN_WARNINGS)
def test_functional_warnings_and_where_they_point(name):
    """Each warning's class and text, and whether it points at the caller's line (torch's
    ``stacklevel``) or inside the library; ``multi_head_attention_forward`` warns of a
    key_padding_mask whose type differs from attn_mask's."""
    import warnings

    def f(m):
        with warnings.catch_warnings(record=True) as ws:
            warnings.simplefilter("always")
            _NN_WARNINGS[name](m, m.nn.functional)
        return tuple((w.category.__name__, str(w.message).split(" (Triggered")[0],
                      w.filename == __file__) for w in ws)
    same_as_torch(f)


def test_warnings_of_torchs_python_wrappers_point_inside_the_library():
    """Where torch's function is Python around a C++ warning (``stft``, ``meshgrid``,
    ``chain_matmul``, ``set_default_tensor_type``) its warning points inside the library; where
    it is C++ itself (``istft``) at the caller's line; each warns once a process as torch's."""
    from oracle import fresh_process_outputs
    code = ("import sys, warnings; m = __import__(sys.argv[1]); x = m.ones(16)\n"
            "s = m.stft(x, 8, window=m.ones(8), return_complex=True)\n"
            "calls = [lambda: m.stft(x, 8, return_complex=True),\n"
            "         lambda: x.stft(8, return_complex=False),\n"
            "         lambda: m.istft(s, 8), lambda: s.istft(8),\n"
            "         lambda: m.meshgrid(x[:2], x[:3]), lambda: m.meshgrid([x[:2], x[:3]]),\n"
            "         lambda: m.chain_matmul(m.ones(2, 2), m.ones(2, 2)),\n"
            "         lambda: m.set_default_tensor_type(m.FloatTensor)]\n"
            "for call in calls:\n"
            "    with warnings.catch_warnings(record=True) as ws:\n"
            "        warnings.simplefilter('always'); call()\n"
            "    print([(w.category.__name__, str(w.message)[:50], w.filename == '<string>')\n"
            "           for w in ws])\n")
    out = fresh_process_outputs(code)
    assert out["torch"] and out["torchlike"] == out["torch"]


# ============================================================ 13. autograd.grad / backward arguments

def _sq(m):
    x = m.tensor([1., 2.], requires_grad=True)
    return x, x * x


_AUTOGRAD_ARGS = {
    "input_not_a_tensor": lambda m, x, y: m.autograd.grad(y.sum(), [x, 3]),
    "input_without_grad_first": lambda m, x, y: m.autograd.grad(y.sum(), [m.ones(2), 3]),
    "backward_input_not_a_tensor": lambda m, x, y: y.sum().backward(inputs=[x, 3]),
    "backward_input_without_grad": lambda m, x, y: y.sum().backward(inputs=[m.ones(1)]),
    "output_none": lambda m, x, y: m.autograd.grad([y.sum(), None], [x]),
    "gradient_list_of_floats": lambda m, x, y: y.backward([1., 1.]),
    "fewer_gradients": lambda m, x, y: m.autograd.backward([y.sum(), y.sum()],
                                                          [m.tensor(1.)]),
    "extra_gradient_ignored": lambda m, x, y: m.autograd.grad(
        [y.sum()], [x], grad_outputs=[m.tensor(1.), m.tensor(2.)]),
    "backward_extra_gradient": lambda m, x, y: (
        m.autograd.backward([y.sum()], [m.tensor(1.), m.tensor(2.)]), x.grad),
    "batched_grad_output_shape": lambda m, x, y: m.autograd.grad(
        y, x, grad_outputs=m.ones(2), is_grads_batched=True),
    "batched_rows": lambda m, x, y: m.autograd.grad(
        y, x, grad_outputs=m.eye(2), is_grads_batched=True),
}


@pytest.mark.parametrize("name", _AUTOGRAD_ARGS)
def test_autograd_argument_checks(name):
    """``autograd.grad``/``backward`` check their arguments as torch's Python and engine do:
    gradients paired with outputs as ``zip`` pairs them (an extra one ignored, a missing one the
    engine's count error with the counts in order), inputs checked one by one (a non-tensor, one
    that does not require grad: ``backward``'s message is torch's retain_grad one), and
    ``is_grads_batched``'s shape message."""
    def f(m):
        x, y = _sq(m)
        return _AUTOGRAD_ARGS[name](m, x, y)
    same_as_torch(f)
