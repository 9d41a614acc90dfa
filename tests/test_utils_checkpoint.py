"""torch.utils.checkpoint vs torch: values, gradients (inputs and parameters), dropout RNG
replay, warnings and errors."""
import warnings

import numpy as np
import pytest
import torch

import torchlike

from oracle import assert_close

X = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)


def _net(m):
    m.manual_seed(0)
    return m.nn.Sequential(m.nn.Linear(3, 5), m.nn.Tanh(), m.nn.Linear(5, 4), m.nn.ReLU(),
                           m.nn.Linear(4, 2))


def _pair():
    ref, ours = _net(torch), _net(torchlike)
    ours.load_state_dict({k: torchlike.tensor(v.detach().numpy())
                          for k, v in ref.state_dict().items()})
    return ours, ref


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_values_and_grads(reentrant):
    ours, ref = _pair()
    res = []
    for m, net in ((torchlike, ours), (torch, ref)):
        x = m.tensor(X, requires_grad=True)
        out = m.utils.checkpoint.checkpoint(lambda a: net(a) * 2, x, use_reentrant=reentrant)
        (out ** 2).sum().backward()
        res.append((out, x.grad, [p.grad for p in net.parameters()], out.grad_fn.name()))
    (o1, g1, p1, n1), (o2, g2, p2, n2) = res
    assert n1 == n2
    assert_close(o1, o2)
    assert_close(g1, g2)
    for a, b in zip(p1, p2):
        assert_close(a, b)


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_sequential(reentrant):
    ours, ref = _pair()
    res = []
    for m, net in ((torchlike, ours), (torch, ref)):
        x = m.tensor(X, requires_grad=True)
        out = m.utils.checkpoint.checkpoint_sequential(net, 2, x, use_reentrant=reentrant)
        out.sum().backward()
        res.append((out, x.grad, [p.grad for p in net.parameters()]))
    assert_close(res[0][0], res[1][0])
    assert_close(res[0][1], res[1][1])
    for a, b in zip(res[0][2], res[1][2]):
        assert_close(a, b)


def test_recompute_replays_dropout_and_runs_in_backward():
    calls = []

    def f(a):
        calls.append(1)
        return torchlike.nn.functional.dropout(a, 0.5, training=True) * 3
    x = torchlike.tensor(X, requires_grad=True)
    out = torchlike.utils.checkpoint.checkpoint(f, x, use_reentrant=True)
    assert len(calls) == 1 and out.grad_fn.name() == "CheckpointFunctionBackward"
    out.sum().backward()
    assert len(calls) == 2
    mask = (out != 0).float()
    assert_close(x.grad, torch.tensor(np.asarray(mask._data)) * 6)


def test_warnings_and_errors_match_torch():
    for m in (torchlike, torch):
        x = m.tensor(X, requires_grad=True)
        with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
            m.utils.checkpoint.checkpoint(lambda a: a * 2, x)
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            y = m.utils.checkpoint.checkpoint(lambda a: a * 2, m.ones(2), use_reentrant=True)
        assert not y.requires_grad
        with pytest.raises(ValueError, match="Unexpected keyword arguments: foo"):
            m.utils.checkpoint.checkpoint(lambda a: a, x, use_reentrant=True, foo=1)
        with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
            m.utils.checkpoint.checkpoint(lambda a: a, x, use_reentrant=True, debug=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = m.utils.checkpoint.checkpoint(lambda a, b: a * b, x, 3.0, use_reentrant=True)
        assert y.requires_grad
