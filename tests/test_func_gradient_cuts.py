"""torch.func transforms cut the gradient where torch's graph stops.

Every differentiating transform is one jax transform of the user's function; what torch's graph
does not track inside it (``detach()``, ``.data``, a ``no_grad`` block, a tensor that does not
require grad) is cut for jax too. Each form through grad, vjp, jvp, jacrev, jacfwd, hessian and
vmap (alone and on the autograd tape) against torch.
"""
import warnings

import numpy as np
import pytest
import torch

import torchlike
from nn_util import grad_reverse

X = np.array([[0.3, -1.2, 2.5], [1.0, 0.5, -0.4]], np.float32)


def _forms(m):
    def no_grad_block(r):
        with m.no_grad():
            s = r * 3
        return r * s

    return {
        "detach": lambda r: r * r.detach(),
        "data": lambda r: r.exp() * r.data,
        "straight_through": lambda r: r + (r.round() - r).detach(),
        "no_grad": no_grad_block,
        "constant": lambda r: r.sin() * m.arange(3.0),
    }


FORMS = sorted(_forms(torch))
TRANSFORMS = ["grad", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap_on_tape",
              "vmap_of_grad"]
# torch's per-level semantics that torchlike does not follow (DIFFERENCES.md; pinned by the
# two tests at the end): a no_grad block or `.data` inside nested transforms (hessian) stop the
# innermost level only
_LEVELS = {("no_grad", "hessian"), ("data", "hessian")}
CASES = [(f, t) for f in FORMS for t in TRANSFORMS if (f, t) not in _LEVELS]


def _run(m, form, transform):
    f = _forms(m)[form]
    x = m.tensor(X[0])
    F = m.func
    if transform == "grad":
        return F.grad(lambda r: f(r).sum())(x)
    if transform == "vjp":
        out, fn = F.vjp(f, x)
        return out, fn(m.arange(3.0) + 1)[0]
    if transform == "jvp":
        return F.jvp(f, (x,), (m.arange(3.0) - 1,))
    if transform == "jacrev":
        return F.jacrev(f)(x)
    if transform == "jacfwd":
        return F.jacfwd(f)(x)
    if transform == "hessian":
        return F.hessian(lambda r: f(r).sum())(x)
    if transform == "vmap_of_grad":
        return F.vmap(F.grad(lambda r: f(r).sum()))(m.tensor(X))
    xs = m.tensor(X, requires_grad=True)
    if transform == "vmap_on_tape":
        F.vmap(f)(xs).pow(2).sum().backward()
    else:
        F.grad(lambda r: f(r).sum())(xs).pow(2).sum().backward()
    return xs.grad


def _np(v):
    if isinstance(v, (tuple, list)):
        return [_np(x) for x in v]
    return v.detach().numpy()


@pytest.mark.parametrize("form,transform", CASES)
def test_transforms_cut_where_torch_does(form, transform):
    if form == "data" and transform == "vmap_on_tape":
        for m in (torch, torchlike):
            with pytest.raises(RuntimeError, match="accessing `data` under vmap transform"):
                _run(m, form, transform)
        return
    ref = _np(_run(torch, form, transform))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _np(_run(torchlike, form, transform))
    np.testing.assert_allclose(np.asarray(ours, dtype=np.float32),
                               np.asarray(ref, dtype=np.float32), rtol=1e-5, atol=1e-5)


def test_no_grad_inside_nested_transforms_stops_every_level():
    """DIFFERENCES.md: in torch a ``no_grad`` block inside nested transforms stops the
    innermost level only (hessian of ``r * (3r under no_grad)`` is 3I); in torchlike it stops
    every level, as ``detach()`` does in both (the result is 0)."""
    def f(m):
        def g(r):
            with m.no_grad():
                s = r * 3
            return (r * s).sum()
        return m.func.hessian(g)(m.tensor(X[0])).numpy()

    np.testing.assert_allclose(f(torch), 3 * np.eye(3), atol=1e-6)
    np.testing.assert_allclose(f(torchlike), np.zeros((3, 3)), atol=1e-6)


def test_data_inside_nested_transforms_stops_every_level():
    """DIFFERENCES.md: ``.data`` inside hessian (jacfwd of jacrev) cuts every level in
    torchlike, as ``detach()`` does: the hessian of ``sum(exp(r) * r.data)`` is
    ``diag(exp(r) * r)``; torch's differs (its ``.data`` unwraps one level)."""
    x = X[0]
    ours = torchlike.func.hessian(lambda r: (r.exp() * r.data).sum())(torchlike.tensor(x))
    np.testing.assert_allclose(ours.numpy(), np.diag(np.exp(x) * x), rtol=1e-5, atol=1e-6)
    ref = torch.func.hessian(lambda r: (r.exp() * r.data).sum())(torch.tensor(x))
    assert not np.allclose(ref.numpy(), ours.numpy(), atol=1e-3)


def test_a_custom_function_under_a_transform_runs_its_backward_as_torch():
    """torch.func differentiates a custom Function (setup_context style) by its backward, not
    by its forward: grad, vjp and jacrev of GradReverse are -2 times the forward's
    derivative, as torch's."""
    def run(m):
        gr = grad_reverse(m)
        x = m.tensor(X[0])
        g = m.func.grad(lambda r: gr.apply(r).sin().sum())(x)
        _, vjp = m.func.vjp(lambda r: gr.apply(r * 3), x)
        j = m.func.jacrev(lambda r: gr.apply(r).exp())(x)
        return g.numpy(), vjp(m.ones(3))[0].numpy(), j.numpy()
    for a, b in zip(run(torchlike), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    np.testing.assert_allclose(run(torchlike)[0], -2 * np.cos(X[0]), rtol=1e-6)
