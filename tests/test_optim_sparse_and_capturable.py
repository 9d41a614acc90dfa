"""optim.SparseAdam and ``capturable=True`` against torch.

torchlike has no sparse-layout tensors: every ``.grad`` is dense, and torch's SparseAdam
refuses dense gradients with a RuntimeError, so ours does too. Its update is compared with
torch's on a coalesced sparse gradient given as (indices, values). ``capturable=True`` on CPU
parameters fails at ``step`` with torch's AssertionError, after the state is initialised.
"""
from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
import torch

import torchlike
from torchlike.optim.sparse_adam import _sparse_adam_rows

CAPTURABLE = ["Adam", "AdamW", "RMSprop", "Adadelta", "Adamax", "NAdam", "RAdam", "Rprop",
              "ASGD"]


def _param(m):
    return m.nn.Parameter(m.tensor(np.arange(6, dtype=np.float32).reshape(2, 3)))


@pytest.mark.parametrize("name", CAPTURABLE)
def test_capturable_on_cpu_raises_at_step(name):
    res = []
    for m in (torch, torchlike):
        p = _param(m)
        opt = getattr(m.optim, name)([p], capturable=True)
        assert opt.defaults["capturable"] is True
        opt.step()                             # no gradients yet: nothing to check
        p.grad = m.ones_like(p)
        with pytest.raises(AssertionError) as e:
            opt.step()
        res.append((str(e.value), sorted(opt.state[p]),
                    np.asarray(p.detach().tolist())))
    assert res[1][0] == res[0][0]
    assert res[1][1] == res[0][1]              # state initialised before the check
    np.testing.assert_array_equal(res[1][2], res[0][2])   # the parameter did not move


def test_capturable_false_and_unsupported_flags():
    for m in (torch, torchlike):
        p = _param(m)
        p.grad = m.ones_like(p)
        m.optim.AdamW([p], capturable=False).step()
    with pytest.raises(TypeError):
        torchlike.optim.SGD([_param(torchlike)], capturable=True)
    with pytest.raises(TypeError):
        torch.optim.SGD([_param(torch)], capturable=True)


def test_sparse_adam_constructor_errors():
    for kw in [dict(lr=0.0), dict(lr=-1.0), dict(eps=0.0), dict(betas=(1.0, 0.9)),
               dict(betas=(0.9, -0.1))]:
        msgs = []
        for m in (torch, torchlike):
            with pytest.raises(ValueError) as e:
                m.optim.SparseAdam([_param(m)], **kw)
            msgs.append(str(e.value))
        assert msgs[0] == msgs[1]
    msgs = []
    for m in (torch, torchlike):
        z = m.nn.Parameter(m.zeros(2, dtype=m.complex64))
        with pytest.raises(ValueError) as e:
            m.optim.SparseAdam([_param(m), z])
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_sparse_adam_dense_grad_error():
    msgs = []
    for m in (torch, torchlike):
        p = _param(m)
        opt = m.optim.SparseAdam([p])
        opt.step()                                 # no grad: nothing happens
        p.grad = m.ones_like(p)
        with pytest.raises(RuntimeError) as e:
            opt.step()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("maximize", [False, True])
def test_sparse_adam_update_matches_torch(maximize):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((5, 3)).astype(np.float32)
    pt = torch.nn.Parameter(torch.tensor(w0))
    opt = torch.optim.SparseAdam([pt], lr=0.1, betas=(0.8, 0.9), maximize=maximize)
    p, mm, v = jnp.asarray(w0), jnp.zeros_like(w0), jnp.zeros_like(w0)
    for step, rows in enumerate([[0, 2], [2, 4], [1, 2, 3]], start=1):
        vals = rng.standard_normal((len(rows), 3)).astype(np.float32)
        idx = np.asarray([rows])
        pt.grad = torch.sparse_coo_tensor(torch.tensor(idx), torch.tensor(vals), (5, 3),
                                          check_invariants=True)
        opt.step()
        p, mm, v = _sparse_adam_rows(p, mm, v, idx, jnp.asarray(vals), step, lr=0.1,
                                     beta1=0.8, beta2=0.9, eps=1e-8, maximize=maximize)
        st = opt.state[pt]
        np.testing.assert_allclose(np.asarray(p), pt.detach().numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(np.asarray(mm), st["exp_avg"].numpy(), rtol=1e-6,
                                   atol=1e-7)
        np.testing.assert_allclose(np.asarray(v), st["exp_avg_sq"].numpy(), rtol=1e-6,
                                   atol=1e-7)
    assert torchlike.optim.SparseAdam.__name__ == "SparseAdam"
