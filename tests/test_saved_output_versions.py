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
        "exp": lambda x: x.exp(), "sigmoid": lambda x: x.sigmoid(), "tanh": lambda x: x.tanh(),
        "sqrt": lambda x: x.abs().sqrt(), "relu": lambda x: x.relu(),
        "softmax": lambda x: x.softmax(0), "log_softmax": lambda x: x.log_softmax(0),
        "norm": lambda x: x.norm(),
        "linalg.pinv": lambda x: m.linalg.pinv(x.reshape(1, 3).expand(3, 3) + eye),
        # torch saves the inputs only
        "matrix_exp": lambda x: m.linalg.matrix_exp(x.reshape(1, 3).expand(3, 3) * 0.1),
        "var": lambda x: x.var(), "cumsum": lambda x: x.cumsum(0), "sin": lambda x: x.sin(),
        "gelu": lambda x: F.gelu(x), "silu": lambda x: F.silu(x), "mean": lambda x: x.mean(),
    }


def _run(m, name):
    x = m.tensor([0.5, -1.5, 2.0], requires_grad=True)
    y = _ops(m)[name](x)
    y.add_(1)
    try:
        y.sum().backward()
    except RuntimeError as e:
        return str(e).split(";")[0]
    return x.grad.numpy()


@pytest.mark.parametrize("name", list(_ops(T)))
def test_a_saved_output_written_in_place_raises_as_in_torch(name):
    want, got = _run(T, name), _run(torch, name)
    if isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
