"""``grad_fn._saved_<name>`` / ``grad_fn._raw_saved_<name>`` against torch 2.13: which names a
backward node has, their values and types, which are the very tensors given to the op, the error
once a backward freed them, and ``_raw_saved_*.register_hooks``."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike as tl

_U64 = 1 << 64


def _inputs(m):
    rng = np.random.default_rng(0)
    g = lambda a: m.tensor(a, requires_grad=True)    # noqa: E731
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)    # noqa: E731
    return dict(
        a=g(f32(3, 4)), b=g(f32(3, 4)), mm=g(f32(4, 5)), v=g(f32(4)), img=g(f32(1, 2, 5, 5)),
        w=g(f32(3, 2, 3, 3)), bias=g(f32(3)), c=m.tensor(f32(3, 4)),
        idx=m.tensor(np.array([[0, 1, 2, 0], [1, 0, 2, 1], [2, 2, 0, 0]])),
        ix=m.tensor(np.array([[0, 1], [1, 2], [2, 3]])),
        tgt=m.tensor(np.array([0, 3, 1])), i2=m.tensor(np.array([0, 2])),
        im3=g(f32(2, 3, 6, 6)), w3=g(np.ones(3, np.float32)), b3=g(np.zeros(3, np.float32)),
        rm=m.zeros(3), rv=m.ones(3), p01=m.tensor(rng.uniform(0.1, 0.9, (3, 4)).astype(np.float32)),
        F=m.nn.functional, m=m)


# case -> the call, or (the call, the names torch's node has that torchlike's does not answer:
# DIFFERENCES.md)
CASES = {
    # unary math: the input, or the result
    "exp": "a.exp()", "log": "a.abs().log()", "sin": "a.sin()", "cos": "a.cos()",
    "tanh": "a.tanh()", "sigmoid": "a.sigmoid()", "sqrt": "a.abs().sqrt()",
    "rsqrt": "a.abs().rsqrt()", "abs": "a.abs()", "neg": "-a", "reciprocal": "a.reciprocal()",
    "log1p": "a.abs().log1p()", "expm1": "a.expm1()", "erf": "a.erf()", "atan": "a.atan()",
    "tan": "a.tan()", "exp2": "a.exp2()",
    # activations
    "relu": "a.relu()", "gelu": "F.gelu(a)", "gelu_tanh": "F.gelu(a, approximate='tanh')",
    "silu": "F.silu(a)", "leaky_relu": "F.leaky_relu(a, 0.2)", "elu": "F.elu(a)",
    "selu": "F.selu(a)", "softplus": "F.softplus(a)", "softplus_beta": "F.softplus(a, beta=2.0)",
    "hardtanh": "F.hardtanh(a)", "mish": "F.mish(a)", "hardswish": "F.hardswish(a)",
    # binary arithmetic, scalar forms
    "mul": "a * b", "mul_int": "a * 3", "mul_float": "a * 2.5", "mul_const_tensor": "a * c",
    "square": "a * a", "add": "a + b", "add_scalar": "a + 3",
    "add_alpha": "m.add(a, b, alpha=2)", "sub": "a - b", "rsub": "3 - a", "div": "a / b",
    "div_scalar": "a / 3", "rdiv": "3 / a", "div_by_const": "a / c", "const_div": "c / a",
    "maximum": "m.maximum(a, b)", "minimum": "m.minimum(a, b)",
    # pow
    "pow_int": "a.pow(2)", "pow_float": "a.abs().pow(0.5)", "pow_neg": "a.pow(-1)",
    "pow_tensor": "a.abs().pow(b)", "pow_scalar_base": "2 ** a",
    # matrix products
    "matmul": "a @ mm", "mm": "a.mm(mm)", "mm_one_grad": "c.mm(mm)", "mv": "a @ v",
    "addmm": "m.addmm(mm[0], a, mm)", "linear": "F.linear(a, mm.t())",
    "linear_bias": "F.linear(a, b, v[:3])",
    # reductions
    "sum": "a.sum()", "sum_dim": "a.sum(1)", "sum_keepdim": "a.sum(1, keepdim=True)",
    "mean": "a.mean()", "mean_dim": "a.mean(0, keepdim=True)", "mean_dims": "a.mean((0, 1))",
    "max": "a.max()", "amax": "a.amax(1)", "amin": "a.amin(0)", "prod": "a.prod()",
    "prod_dim": "a.prod(1)", "var_dim": "a.var(1)",
    "var_unbiased_false": "a.var(1, unbiased=False)",
    "std_dim": "a.std(1)", "norm": "a.norm()", "norm_dim": "a.norm(dim=1)",
    "logsumexp": "a.logsumexp(1)", "cumsum": "a.cumsum(1)",
    "max_dim": ("a.max(1)[0]", {"_saved_indices"}),
    "std_all": ("a.std()", {"_saved_correction"}),
    # softmax
    "softmax": "a.softmax(1)", "log_softmax": "a.log_softmax(1)",
    "softmax_functional": "F.softmax(a, dim=0)",
    # views and shapes
    "view": "a.view(12)", "reshape": "a.reshape(2, 6)", "flatten": "img.flatten(1)",
    "transpose": "a.transpose(0, 1)", "t": "a.t()", "permute": "a.permute(1, 0)",
    "unsqueeze": "a.unsqueeze(1)", "squeeze": "a[None].squeeze(0)",
    "squeeze_all": "a[None, :, None].squeeze()", "squeeze_dims": "a[None, :, None].squeeze((0, 2))",
    "square_method": "a.square()", "movedim": "img.movedim(0, 2)", "expand": "v.expand(3, 4)",
    "contiguous": "a.t().contiguous()", "clone": "a.clone()", "to_double": "a.double()",
    "cat": "m.cat([a, b], 1)", "stack": "m.stack([a, b])", "split": "a.split(2, 1)[0]",
    "split_sizes": "a.split([1, 3], 1)[0]", "chunk": "a.chunk(2)[0]", "narrow": "a.narrow(1, 1, 2)",
    "narrow_negative_start": "a.narrow(1, -2, 2)", "tril": "a.tril()", "triu": "a.triu(1)",
    "tril_negative": "a.tril(-1)", "repeat": "a.repeat(2, 1)",
    # indexing
    "slice": ("a[1:3]", {"_saved_end"}), "slice_step": ("a[:, ::2]", {"_saved_end"}),
    "slice_open": ("a[:, 1:]", {"_saved_end"}),
    "slice_ellipsis": ("img[..., 1:3]", {"_saved_end"}),
    "select": "a[1]", "select_dim1": "a[:, 2]", "select_ellipsis": "img[..., 2]",
    "select_method": "a.select(1, 2)", "unbind": "a.unbind(1)[0]",
    "gather": "a.gather(1, idx)", "index_select": "a.index_select(0, i2)",
    "index_tensor": ("a[i2]", {"_saved_indices"}), "index_2": ("a[:, i2]", {"_saved_indices"}),
    "clamp": "a.clamp(-0.5, 0.5)", "clamp_min": "a.clamp(min=0)", "clamp_max": "a.clamp(max=2)",
    "where": "m.where(a > 0, a, b)", "masked_fill": "a.masked_fill(a > 0, 0.)",
    # nn
    "layer_norm": "F.layer_norm(a, (4,), b[0], v)", "layer_norm_plain": "F.layer_norm(a, (4,))",
    "layer_norm_weight_only": "F.layer_norm(a, (4,), v)",
    "conv2d": "F.conv2d(img, w, padding=1)",
    "conv2d_bias_stride": "F.conv2d(img, w, bias, stride=2)",
    "conv_transpose2d": "F.conv_transpose2d(img, w.transpose(0, 1), bias)",
    "embedding": "F.embedding(idx, mm)", "embedding_padding": "F.embedding(idx, mm, padding_idx=1)",
    "cross_entropy": "F.cross_entropy(a, tgt)", "nll_loss": "F.nll_loss(a.log_softmax(1), tgt)",
    "nll_loss_sum": "F.nll_loss(a, tgt, reduction='sum', ignore_index=3)",
    "nll_loss_none": "F.nll_loss(a, tgt, reduction='none')",
    "cross_entropy_label_smoothing": "F.cross_entropy(a, tgt, label_smoothing=0.1)",
    "nll_loss_weight": "F.nll_loss(a, tgt, weight=v.detach().abs())",
    "sdpa": ("F.scaled_dot_product_attention(im3, im3 * 2, im3)",
             {"_saved_scale", "_saved_logsumexp"}),
    "sdpa_causal": ("F.scaled_dot_product_attention(im3, b3[None, :, None, None] * im3, im3, "
                    "is_causal=True, scale=0.3)", {"_saved_scale", "_saved_logsumexp"}),
    "mse_loss": "F.mse_loss(a, b)", "mse_loss_sum": "F.mse_loss(a, c, reduction='sum')",
    "smooth_l1_loss": "F.smooth_l1_loss(a, b)", "huber_loss": "F.huber_loss(a, c, delta=0.5)",
    "bce": "F.binary_cross_entropy(a.sigmoid(), p01)",
    "bce_with_logits": "F.binary_cross_entropy_with_logits(a, p01)",
    "bce_with_logits_weights": "F.binary_cross_entropy_with_logits(a, p01, weight=v.detach(), "
                               "pos_weight=v.detach().abs())",
    "batch_norm": ("F.batch_norm(im3, rm, rv, w3, b3, training=True)",
                   {"_saved_running_mean", "_saved_running_var"}),
    "batch_norm_eval": "F.batch_norm(im3, rm, rv, w3, b3, training=False)",
    "group_norm": ("F.group_norm(im3, 3, w3, b3)", {"_saved_result1", "_saved_result2"}),
    "max_pool2d": ("F.max_pool2d(im3, 2, stride=2)",
                   {"_saved_ceil_mode", "_saved_stride", "_saved_result1"}),
    "avg_pool2d": ("F.avg_pool2d(im3, 2, divisor_override=3)",
                   {"_saved_ceil_mode", "_saved_stride"}),
    "interpolate_nearest": "F.interpolate(im3, scale_factor=2)",
    "interpolate_size": "F.interpolate(im3, size=(9, 12))",
    "interpolate_bilinear": "F.interpolate(im3, scale_factor=2, mode='bilinear')",
    "pad": "F.pad(a, (1, 2))", "pad_2d": "F.pad(a, (1, 2, 0, 3))",
    "pad_reflect": "F.pad(im3, (1, 1, 2, 2), mode='reflect')",
    "pad_replicate": "F.pad(im3, (1, 0, 2, 1), mode='replicate')",
    # more shapes, arithmetic, activations
    "flip": "a.flip(0)", "roll": "a.roll(-1, 1)", "diagonal": "a.diagonal(-1)",
    "unfold": "a.unfold(1, 2, 1)", "trace": "a[:, :3].trace()",
    "pixel_shuffle": "F.pixel_shuffle(im3[:, :1].expand(2, 4, 6, 6), 2)",
    "pixel_unshuffle": "F.pixel_unshuffle(im3, 2)",
    "atan2": "m.atan2(a, b)", "xlogy": "m.xlogy(a.abs(), c.abs())", "hypot": "m.hypot(a, c)",
    "addcmul": "m.addcmul(a, a, b, value=0.5)", "addcmul_one": "m.addcmul(c, a, c, value=2)",
    "addcdiv": "m.addcdiv(c, c, a.abs() + 1, value=2)", "lerp": "m.lerp(a, b, 0.3)",
    "lerp_tensor": "m.lerp(a, c, c)", "clamp_tensor": "a.clamp(c, c + 1)",
    "clamp_tensor_min": "a.clamp(min=c)", "dot": "m.dot(a[0], c[0])",
    "baddbmm": "m.baddbmm(a[None, :, :3], a[None], c.t()[None, :, :3])",
    "cumprod": "a.cumprod(1)", "hardshrink": "F.hardshrink(a)",
    "threshold": "F.threshold(a, 0.1, 2.0)", "glu": "F.glu(a, 1)",
    "logsigmoid": ("F.logsigmoid(a)", {"_saved_buffer"}),
    "topk": ("a.topk(2, dim=1)[0]", {"_saved_indices"}),
    "sort": ("a.sort(1)[0]", {"_saved_indices"}),
    "scatter_add": "b.scatter_add(1, ix, a[:, :2])",
    "scatter_add_src_only": "c.scatter_add(1, ix, a[:, :2])",
    "scatter_add_self_only": "a.scatter_add(1, ix, c[:, :2])",
    "scatter": "b.scatter(1, ix, a[:, :2])",
    "scatter_self_only": "a.scatter(1, ix, c[:, :2])",
    "scatter_reduce": "b.scatter_reduce(1, ix, a[:, :2], 'amax', include_self=False)",
    "scatter_reduce_sum": "a.scatter_reduce(1, ix, c[:, :2], 'sum')",
    "index_add": "b.index_add(0, i2, a[:2])",
    "index_add_alpha": "c.index_add(1, i2, a[:, :2], alpha=2.5)",
}


def _case(name):
    spec = CASES[name]
    return spec if isinstance(spec, tuple) else (spec, set())


def _saved_names(node):
    return {n for n in dir(node) if n.startswith("_saved_")}


def _raw_names(node):
    return {n for n in dir(node) if n.startswith("_raw_saved_")}


def _same_value(tv, lv, env_t, env_l, y_t, y_l):
    """torch's saved value ``tv`` and torchlike's ``lv`` agree: the same Python type and value,
    or a tensor of the same values, dtype, history and identity."""
    if isinstance(tv, torch.Tensor):
        assert isinstance(lv, tl.Tensor), lv
        who_t = [k for k, t in env_t.items() if t is tv]
        who_l = [k for k, t in env_l.items() if t is lv]
        assert who_t == who_l                      # `_saved_self is x` where torch's is
        assert (tv is y_t) == (lv is y_l)
        assert tuple(tv.shape) == tuple(lv.shape)
        assert str(tv.dtype) == str(lv.dtype)
        np.testing.assert_allclose(lv.detach().numpy(), tv.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)
        assert (tv.grad_fn is None) == (lv.grad_fn is None)
        if tv.grad_fn is not None:
            assert type(tv.grad_fn).__name__ == type(lv.grad_fn).__name__
    else:
        assert type(lv) is type(tv), (tv, lv)
        assert lv == tv


@pytest.mark.parametrize("name", sorted(CASES))
def test_saved_names_and_values_match_torch(name):
    expr, missing = _case(name)
    env_t, env_l = _inputs(torch), _inputs(tl)
    y_t, y_l = eval(expr, {}, env_t), eval(expr, {}, env_l)
    node_t, node_l = y_t.grad_fn, y_l.grad_fn
    assert type(node_t).__name__ == type(node_l).__name__
    names_t, names_l = _saved_names(node_t), _saved_names(node_l)
    assert names_l == names_t - missing
    assert _raw_names(node_l) == _raw_names(node_t) - {"_raw" + n for n in missing}
    for n in sorted(names_l):
        _same_value(getattr(node_t, n), getattr(node_l, n), env_t, env_l, y_t, y_l)
    for n in missing:
        with pytest.raises(AttributeError):
            getattr(node_l, n)


def test_scalar_overload_nodes_inside_losses():
    """MulBackward1 / DivBackward1 (ATen's Tensor-Scalar overloads, inside torch's C++ losses):
    ``_saved_other`` is the Python number."""
    def walk(m):
        a = m.tensor(np.arange(8, dtype=np.float32).reshape(2, 4) / 8, requires_grad=True)
        loss = m.nn.functional.cross_entropy(a, m.tensor([0, 3]), label_smoothing=0.1)
        out, seen, stack = [], set(), [loss.grad_fn]
        while stack:
            n = stack.pop()
            if n is None or id(n) in seen:
                continue
            seen.add(id(n))
            if type(n).__name__ in ("MulBackward1", "DivBackward1"):
                out.append((type(n).__name__, _saved_names(n), n._saved_other))
            stack.extend(f for f, _ in n.next_functions)
        return sorted(out, key=repr)
    got = walk(tl)
    assert got and got == walk(torch)


def _after_backward(m, name):
    """Each name of the case's node after a backward without ``retain_graph``: its value (a
    tensor as "tensor"), or "freed" where reading it raises torch's error."""
    expr, missing = _case(name)
    y = eval(expr, {}, _inputs(m))
    (y.sum() if y.dim() else y).backward()
    out = {}
    for n in _saved_names(y.grad_fn) - missing:
        try:
            v = getattr(y.grad_fn, n)
        except RuntimeError as e:
            if m is tl and str(e) == tl.autograd.saved_names.STRIDES_GONE:
                v = "strides of a view gone"
            else:
                assert "Trying to backward through the graph a second time" in str(e)
                v = "freed"
        out[n] = "tensor" if isinstance(v, m.Tensor) else v
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_saved_names_after_backward_match_torch(name):
    """Saved tensors are freed; None where the call saved none and every non-tensor value stay
    readable. (DIFFERENCES.md: the strides of an input that was a view, read after the
    backward, need the view to exist still.)"""
    got, want = _after_backward(tl, name), _after_backward(torch, name)
    gone = {n for n, v in got.items() if v == "strides of a view gone"}
    assert all(n.endswith("_sym_strides") and want[n] for n in gone)
    assert {n: v for n, v in got.items() if n not in gone} == \
        {n: v for n, v in want.items() if n not in gone}
    assert name not in ("matmul", "mm", "addmm") or not gone     # (inputs not views)


@pytest.mark.parametrize("m", [torch, tl], ids=["torch", "torchlike"])
def test_strides_of_a_view_input_after_backward(m):
    x = m.randn(3, 4, requires_grad=True)
    w = m.randn(5, 4, requires_grad=True)
    wt = w.t()                          # (alive through the read)
    y = x @ wt
    y.sum().backward()
    assert y.grad_fn._saved_mat2_sym_strides == (1, 4)
    assert y.grad_fn._saved_self_sym_strides == (4, 1)


def test_tutorial_saved_self_and_result():
    # pytorch.org/tutorials/intermediate/autograd_saved_tensors_hooks_tutorial
    for m in (torch, tl):
        x = m.randn(5, requires_grad=True)
        y = x.pow(2)
        assert y.grad_fn._saved_self is x
        assert y.grad_fn._saved_exponent == 2
        y = x.exp()
        r = y.grad_fn._saved_result
        assert r.equal(y) and r is not y and r.grad_fn is y.grad_fn
        assert y.grad_fn._saved_result is not r        # a new tensor each read, as torch
        y = x * 3
        assert y.grad_fn._saved_self is None
        assert y.grad_fn._saved_other is y.grad_fn._saved_other   # the wrapped number: one tensor
        assert y.grad_fn._saved_other.dtype == m.int64 and y.grad_fn._saved_other.item() == 3


@pytest.mark.parametrize("m", [torch, tl], ids=["torch", "torchlike"])
def test_saved_tensors_are_freed_by_backward(m):
    x = m.randn(3, 4, requires_grad=True)
    w = m.randn(4, 2, requires_grad=True)
    p, r, s, c = x.pow(2), x.exp(), (x @ w), x.clamp(min=0.1)
    (p.sum() + r.sum() + s.sum() + c.sum()).backward()
    for node, name in ((p.grad_fn, "_saved_self"), (r.grad_fn, "_saved_result"),
                       (s.grad_fn, "_saved_mat2"), (c.grad_fn, "_saved_self")):
        with pytest.raises(RuntimeError, match="Trying to backward through the graph a second "
                           r"time \(or directly access saved tensors after they have already "
                           r"been freed\)"):
            getattr(node, name)
    # non-tensor values stay readable
    assert p.grad_fn._saved_exponent == 2
    assert s.grad_fn._saved_self_sym_sizes == (3, 4)
    assert s.grad_fn._saved_mat2_sym_sizes == (4, 2)
    assert s.grad_fn._saved_self_sym_strides == (4, 1)
    assert c.grad_fn._saved_min == 0.1 and c.grad_fn._saved_max is None
    with pytest.raises(RuntimeError, match="after it has been freed"):
        p.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)


@pytest.mark.parametrize("m", [torch, tl], ids=["torch", "torchlike"])
def test_sizes_of_nodes_that_save_no_tensor_survive_backward(m):
    x = m.randn(3, 4, requires_grad=True)
    y = x.sum(1)
    z = x.view(12)
    (y.sum() + z.sum()).backward()
    assert y.grad_fn._saved_self_sym_sizes == (3, 4)
    assert y.grad_fn._saved_dim == (1,)
    assert z.grad_fn._saved_self_sym_sizes == (3, 4)
    # addmm where only the bias needs grad saves neither matrix: nothing is freed
    b = m.randn(5, requires_grad=True)
    y = m.addmm(b, m.randn(3, 4), m.randn(4, 5))
    y.sum().backward()
    node = y.grad_fn
    assert node._saved_mat1 is None and node._saved_mat2 is None
    assert (node._saved_mat1_sym_sizes, node._saved_mat2_sym_sizes) == ((3, 4), (4, 5))
    assert node._saved_mat1_sym_strides == node._saved_mat2_sym_strides == ()


@pytest.mark.parametrize("m", [torch, tl], ids=["torch", "torchlike"])
def test_retain_graph_keeps_saved_tensors(m):
    x = m.randn(3, requires_grad=True)
    y = x.sin()
    y.sum().backward(retain_graph=True)
    assert y.grad_fn._saved_self is x
    y = x.exp()
    y.sum().backward(retain_graph=True)
    assert y.grad_fn._saved_result.equal(y)


def test_names_a_node_does_not_have_are_attribute_errors():
    x = tl.randn(3, requires_grad=True)
    for node, name in ((x.pow(2).grad_fn, "_saved_other"),
                       (x.pow(2).grad_fn, "_raw_saved_exponent"),
                       (x.exp().grad_fn, "_saved_self"),
                       ((x + 1).grad_fn, "_saved_self"),
                       (x.sin().grad_fn, "_saved_nonexistent")):
        with pytest.raises(AttributeError, match=f"'{type(node).__name__}' object has no "
                           f"attribute '{name}'"):
            getattr(node, name)
        assert not hasattr(node, name)
    # a leaf's AccumulateGrad and a custom Function's node have none (torch's custom Function
    # node has ``_raw_saved_tensors``, which torchlike's does not)
    class Twice(tl.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    for node in (x.sin().grad_fn.next_functions[0][0], Twice.apply(x).grad_fn):
        assert not [n for n in dir(node) if n.startswith("_saved_")]
        with pytest.raises(AttributeError):
            node._saved_self
    # the tape's own record is not one of torch's saved names
    node = x.sin().grad_fn
    assert "_saved_versions" not in dir(node)
    assert _saved_names(node) == {"_saved_self"}


@pytest.mark.parametrize("m", [torch, tl], ids=["torch", "torchlike"])
def test_saved_result_after_inplace_write_raises(m):
    x = m.randn(5, requires_grad=True)
    for y in (x.exp(), x.abs().pow(x)):
        with m.no_grad():
            y.add_(1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation.*is at "
                           "version 1; expected version 0 instead"):
            y.grad_fn._saved_result


@pytest.mark.parametrize("remat", [True, False], ids=["recomputing", "compiled-vjp"])
def test_saved_result_of_a_node_inside_the_graph(remat, monkeypatch):
    """The result of a node whose output only the graph holds (a walk over next_functions)."""
    from torchlike import _registry
    monkeypatch.setattr(_registry, "REMAT", remat)
    xs = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    got = {}
    for m in (torch, tl):
        x = m.tensor(xs, requires_grad=True)
        for _ in range(3):          # (past the first calls at this signature)
            loss = x.softmax(1).sum()
        got[m] = loss.grad_fn.next_functions[0][0]._saved_result.detach().numpy()
    np.testing.assert_allclose(got[tl], got[torch], rtol=1e-6)


def _hook_log(m):
    """What register_hooks on saved tensors does, as a log."""
    out = []
    x = m.tensor([1., 2., 3.], requires_grad=True)
    y = x.pow(2)

    def pack(t):
        out.append(("pack", tuple(t.shape)))
        return t * 1

    def unpack(t):
        out.append("unpack")
        return t * 10
    y.grad_fn._raw_saved_self.register_hooks(pack, unpack)
    out.append(list(out))
    s = y.grad_fn._saved_self              # the getter unpacks
    out.append((s.tolist(), s is x, s.requires_grad, s.grad_fn is None))
    y.sum().backward()                      # the backward reads the unpacked value
    out.append(x.grad.tolist())
    y = x.pow(2)
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
    for call in (lambda: y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t),
                 lambda: (x * 3).grad_fn._raw_saved_self.register_hooks(lambda t: t,
                                                                           lambda t: t)):
        with pytest.raises(RuntimeError) as e:
            call()
        out.append(str(e.value))
    with pytest.raises(TypeError):
        x.pow(2).grad_fn._raw_saved_self.register_hooks(1, 2)
    # hooks on each saved tensor of one node: each runs once at backward
    a = m.tensor([1., 2.], requires_grad=True)
    b = m.tensor([3., 4.], requires_grad=True)
    y = a * b
    log = []
    y.grad_fn._raw_saved_self.register_hooks(lambda t: (log.append("ps"), t)[1],
                                             lambda t: (log.append("us"), t)[1])
    y.grad_fn._raw_saved_other.register_hooks(lambda t: (log.append("po"), t)[1],
                                              lambda t: (log.append("uo"), t * 2)[1])
    y.sum().backward()
    out.append((sorted(log), a.grad.tolist(), b.grad.tolist()))
    # a saved result, returned unchanged
    y = x.exp()
    log = []
    y.grad_fn._raw_saved_result.register_hooks(lambda t: (log.append("p"), t)[1],
                                               lambda t: (log.append("u"), t)[1])
    x.grad = None
    y.sum().backward()
    out.append((log, np.round(x.grad.numpy(), 5).tolist()))
    r = x.pow(2).grad_fn._raw_saved_self
    out.append((type(r).__name__, r.unpack() is x, r.data is x, r.unpack_hook))
    with pytest.raises(RuntimeError) as e:
        x.exp().grad_fn._raw_saved_result.unpack()
    out.append(str(e.value))
    y = x.pow(2)
    r = y.grad_fn._raw_saved_self
    y.sum().backward()
    out.append(r.data)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph"):
        r.unpack()
    return out


def test_raw_saved_register_hooks_as_torch():
    assert _hook_log(tl) == _hook_log(torch)


def test_saved_tensors_hooks_unpack_on_read():
    for m in (torch, tl):
        log = []
        x = m.randn(3, requires_grad=True)
        with m.autograd.graph.saved_tensors_hooks(lambda t: ("p", t),
                                                  lambda p: (log.append("unpack"), p[1])[1]):
            y = x.pow(2)
        s = y.grad_fn._saved_self
        assert log == ["unpack"]
        assert s is not x and s.equal(x)            # torch's: a new tensor, x's place in the graph
        (s * 3).sum().backward()
        assert x.grad.tolist() == [3.0, 3.0, 3.0]
        with pytest.raises(RuntimeError, match="hooks have already been set"):
            y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)


def _context_hooks_log(m):
    log = []
    x = m.tensor([1., 2.], requires_grad=True)
    with m.autograd.graph.saved_tensors_hooks(lambda t: (log.append("pack"), t)[1],
                                              lambda t: (log.append("unpack"), t)[1]):
        y, z, w = x.exp(), x.sin(), x * x
    log.append("--")
    r = y.grad_fn._saved_result
    log.append(("result", r.tolist() == y.tolist(), r is y, r.grad_fn is y.grad_fn))
    log.append(("self", z.grad_fn._saved_self is x))
    log.append(("mul", w.grad_fn._saved_self is x, w.grad_fn._saved_other is x))
    return log


def test_saved_tensors_hooks_unpack_on_each_read():
    """Under saved_tensors_hooks every read of a saved tensor (inputs and results) runs the
    unpack hook and gives a new tensor, as torch's."""
    assert _context_hooks_log(tl) == _context_hooks_log(torch)


def test_negative_dims_read_normalized():
    """DIFFERENCES.md: torchlike keeps a dim normalized, so a dim spelled negative reads as its
    non-negative equivalent; torch answers the spelling, wrapped as uint64."""
    x_t = torch.randn(3, 4, requires_grad=True)
    x_l = tl.randn(3, 4, requires_grad=True)
    assert x_t.sum(-1).grad_fn._saved_dim == (_U64 - 1,)
    assert x_l.sum(-1).grad_fn._saved_dim == (1,)
    assert x_t.softmax(-1).grad_fn._saved_dim == _U64 - 1
    assert x_l.softmax(-1).grad_fn._saved_dim == 1
    # an int64 the op keeps as spelled reads as torch's: negative ones wrapped
    assert x_l.tril(-1).grad_fn._saved_diagonal == x_t.tril(-1).grad_fn._saved_diagonal == _U64 - 1
    assert x_l.softmax(1).grad_fn._saved_dim == x_t.softmax(1).grad_fn._saved_dim == 1
    # so do a slice's start and a select's index
    assert x_t[-1].grad_fn._saved_index == _U64 - 1
    assert x_l[-1].grad_fn._saved_index == 2
    assert x_t[-2:].grad_fn._saved_start == _U64 - 2
    assert x_l[-2:].grad_fn._saved_start == 1
