"""An op whose backward reads its output (torch saves ``result``) raises torch's version error
when that output was modified in place before the backward; one that saves only its inputs
computes. Against torch: ``y = op(x); y.add_(1); y.sum().backward()``."""
import numpy as np
import pytest
import torch as T

import torchlike as torch


def _ops(m):
    F = m.nn.functional
    eye = m.eye(3)

    def sq(x):
        return x.reshape(3, 1) * x.reshape(1, 3)
    return {
        # torch saves the result
        "linalg.inv": lambda x: m.linalg.inv(x.reshape(1, 3).expand(3, 3) + eye * 5),
        "linalg.det": lambda x: m.linalg.det(x.reshape(1, 3).expand(3, 3) + eye),
        "linalg.slogdet": lambda x: m.linalg.slogdet(x.reshape(1, 3).expand(3, 3) + eye)[1],
        "linalg.cholesky": lambda x: m.linalg.cholesky(eye * 2 + sq(x) * 0.1),
        "linalg.qr": lambda x: m.linalg.qr(x.reshape(3, 1).expand(3, 3) + eye)[0],
        "linalg.svdvals": lambda x: m.linalg.svdvals(x.reshape(3, 1).expand(3, 3) + eye),
        "linalg.svd": lambda x: m.linalg.svd(x.reshape(3, 1).expand(3, 3) + eye)[1],
        "linalg.eigvalsh": lambda x: m.linalg.eigvalsh(eye + sq(x)),
        "linalg.eigh": lambda x: m.linalg.eigh(eye + sq(x))[0],
        "cdist": lambda x: m.cdist(x.reshape(1, 3), x.reshape(1, 3) * 2),
        "pdist": lambda x: F.pdist(m.stack([x, x * 2])),
        "exp": lambda x: x.exp(), "sigmoid": lambda x: x.sigmoid(), "tanh": lambda x: x.tanh(),
        "sqrt": lambda x: x.abs().sqrt(), "relu": lambda x: x.relu(),
        "softmax": lambda x: x.softmax(0), "log_softmax": lambda x: x.log_softmax(0),
        "norm": lambda x: x.norm(),
        "linalg.pinv": lambda x: m.linalg.pinv(x.reshape(1, 3).expand(3, 3) + eye),
        "cumprod": lambda x: x.cumprod(0), "prod": lambda x: x.prod(),
        "prod(dim)": lambda x: x.prod(0), "exp2": lambda x: x.exp2(),
        "expm1": lambda x: x.expm1(), "tan": lambda x: x.tan(),
        "logcumsumexp": lambda x: x.logcumsumexp(0), "logsumexp": lambda x: x.logsumexp(0),
        "max": lambda x: x.max(), "min": lambda x: x.min(), "amax": lambda x: x.amax(0),
        "amin": lambda x: x.amin(0), "std": lambda x: x.std(), "median": lambda x: x.median(),
        "nanmedian": lambda x: x.nanmedian(), "pow(tensor, tensor)": lambda x: x.abs().pow(x),
        "pow(number, tensor)": lambda x: 2.0 ** x, "hypot": lambda x: x.hypot(x * 2),
        # torch saves the inputs only
        "matrix_exp": lambda x: m.linalg.matrix_exp(x.reshape(1, 3).expand(3, 3) * 0.1),
        "var": lambda x: x.var(), "cumsum": lambda x: x.cumsum(0), "sin": lambda x: x.sin(),
        "pow(tensor, number)": lambda x: x.pow(2), "median(dim)": lambda x: x.median(0)[0],
        "max(dim)": lambda x: x.max(0)[0], "sum": lambda x: x.sum(),
        "gelu": lambda x: F.gelu(x), "silu": lambda x: F.silu(x), "mean": lambda x: x.mean(),
    }


def _run(m, name):
    x = m.tensor([0.5, -1.5, 2.0], requires_grad=True)
    y = _ops(m)[name](x)
    node = type(y.grad_fn).__name__
    y.add_(1)
    try:
        y.sum().backward()
    except RuntimeError as e:
        return node, str(e).split(";")[0]
    return node, x.grad.numpy()


@pytest.mark.parametrize("name", list(_ops(T)))
def test_a_saved_output_written_in_place_raises_as_in_torch(name):
    (want_node, want), (got_node, got) = _run(T, name), _run(torch, name)
    assert got_node == want_node
    if isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
