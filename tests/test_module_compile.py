"""nn.Module.compile (in place, as torch's) and Tensor.record_stream, against torch 2.13 where
torch can run on the CPU."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import torch

import torchlike as tl

RNG = np.random.default_rng(0)
X = RNG.standard_normal((5, 4)).astype(np.float32)
Y = RNG.standard_normal((5, 2)).astype(np.float32)


def _net(m):
    m.manual_seed(0)
    net = m.nn.Sequential(m.nn.Linear(4, 8), m.nn.Tanh(), m.nn.Linear(8, 2))
    with m.no_grad():
        for i, p in enumerate(net.parameters()):
            p.copy_(m.tensor(np.linspace(-1, 1, p.numel(), dtype=np.float32).reshape(p.shape)
                             * (i + 1)))
    return net


def test_compile_in_place_keeps_type_and_state_dict():
    nets = []
    for m in (torch, tl):
        net = _net(m)
        assert net.compile() is None
        nets.append((type(net).__name__, list(net.state_dict().keys()),
                     [n for n, _ in net.named_modules()], "_compiled_call_impl" in net.__dict__))
    assert nets[0] == nets[1]


def test_compiled_values_and_training_match_torch_eager():
    """Three SGD steps of the compiled torchlike module equal torch's eager steps."""
    res = []
    for m, compiled in ((torch, False), (tl, True)):
        net = _net(m)
        if compiled:
            net.compile()
        opt = m.optim.SGD(net.parameters(), lr=0.1)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = m.nn.functional.mse_loss(net(m.tensor(X)), m.tensor(Y))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        res.append((losses, [p.detach().numpy().copy() for p in net.parameters()]))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-5)
    for a, b in zip(res[1][1], res[0][1]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_compiled_module_runs_one_program():
    net = _net(tl)
    net.compile()
    out = net(tl.tensor(X))
    assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"
    net(tl.tensor(X) * 2)
    assert len(net._compiled_call_impl._program._entries) == 1


def test_hooks_still_run():
    seen = []
    for m in (torch, tl):
        net = _net(m)
        if m is tl:
            net.compile()
        calls = []
        net.register_forward_pre_hook(lambda mod, a: calls.append("pre"))
        net.register_forward_hook(lambda mod, a, o: o * 2)
        out = net(m.tensor(X))
        seen.append((calls, out.detach().numpy().copy()))
    assert seen[0][0] == seen[1][0] == ["pre"]
    np.testing.assert_allclose(seen[1][1], seen[0][1], rtol=1e-5, atol=1e-6)


def test_copies_are_not_compiled():
    for m in (torch, tl):
        net = m.nn.Linear(2, 2)
        net.compile()
        for c in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
            assert "_compiled_call_impl" not in c.__dict__
            with m.no_grad():
                c.weight.zero_()
                c.bias.zero_()
            assert c(m.ones(1, 2)).abs().sum().item() == 0
            assert net(m.ones(1, 2)).abs().sum().item() != 0


def test_compile_disabled_and_eval_mode():
    net = _net(tl)
    net.compile(disable=True)
    assert "_compiled_call_impl" not in net.__dict__
    net = tl.nn.Sequential(tl.nn.Linear(4, 4), tl.nn.Dropout(0.5))
    net.compile()
    net.eval()
    x = tl.tensor(X)
    np.testing.assert_allclose(net(x).detach().numpy(), net[0](x).detach().numpy(), rtol=1e-6)


def test_record_stream_is_a_no_op():
    """torch's record_stream keeps a CUDA tensor's memory alive for another stream; jax tracks
    buffer lifetimes itself, so it does nothing (also on the CPU, where torch's kernel is
    missing: DIFFERENCES.md)."""
    x = tl.ones(3)
    assert x.record_stream(None) is None
    assert x.tolist() == [1.0, 1.0, 1.0]
    assert hasattr(torch.Tensor, "record_stream")
