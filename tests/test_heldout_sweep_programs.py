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


# ============================================================ 6. element-wise Python callables, `in`

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
}


def _under_no_grad(m, fn):
    with m.no_grad():
        return fn()


@pytest.mark.parametrize("name", _HOST_CALLS)
def test_python_callables_on_elements_and_membership(name):
    """``apply_``/``map_`` refuse a tensor that requires grad (also under no_grad), as torch;
    ``x in t`` compares ``x == t`` (its broadcast error names ``x`` first)."""
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
