"""torch.utils.flop_counter.FlopCounterMode against torch's: the FLOPs of matrix products and
convolutions, per op and per module, forward and backward."""
from __future__ import annotations

import numpy as np
import torch

import torchlike
from torchlike.utils.flop_counter import FlopCounterMode as LMode
from torch.utils.flop_counter import FlopCounterMode as TMode


def _counts(fc):
    return {k: {str(o): v for o, v in sorted(d.items(), key=lambda kv: str(kv[0]))}
            for k, d in sorted(fc.get_flop_counts().items())}


def _rand(m, *shape):
    return m.tensor(np.linspace(-1, 1, int(np.prod(shape)), dtype=np.float32).reshape(shape))


def _model(m):
    class Net(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = m.nn.Sequential(m.nn.Linear(4, 8), m.nn.ReLU(), m.nn.Linear(8, 2))
            self.conv = m.nn.Conv2d(1, 2, 3, padding=1, stride=2)

        def forward(self, x, img):
            return self.net(x).sum() + self.conv(img).sum() + (x @ x.t()).sum()
    return Net()


def _story(m, Mode):
    out = []
    x = _rand(m, 5, 4).requires_grad_()
    img = _rand(m, 2, 1, 7, 7)
    with Mode(display=False, depth=3) as fc:         # (a forward: module names and counts)
        _model(m)(x, img)
    out += [fc.get_total_flops(), _counts(fc)]
    with m.no_grad(), Mode(display=False) as fc:     # (the product family, conv arguments)
        m.bmm(_rand(m, 2, 3, 4), _rand(m, 2, 4, 5))
        m.baddbmm(_rand(m, 2, 3, 5), _rand(m, 2, 3, 4), _rand(m, 2, 4, 5))
        m.matmul(_rand(m, 3, 4), _rand(m, 4))
        m.matmul(_rand(m, 2, 3, 4), _rand(m, 4, 5))
        m.matmul(_rand(m, 2, 1, 3, 4), _rand(m, 3, 4, 5))
        m.nn.functional.linear(_rand(m, 2, 3, 4), _rand(m, 6, 4))
        m.nn.functional.conv1d(_rand(m, 3, 7), _rand(m, 4, 3, 2), dilation=2)
        m.nn.functional.conv2d(_rand(m, 1, 4, 6, 6), _rand(m, 4, 2, 3, 3), groups=2,
                               padding=(1, 0))
    out += [fc.get_total_flops(), _counts(fc)]
    seq = m.nn.Sequential(m.nn.Linear(4, 8), m.nn.ReLU(), m.nn.Linear(8, 2))
    with Mode(display=False) as fc:                 # (a backward: per input needing grad)
        seq(x).sum().backward()
        w = _rand(m, 4, 3).requires_grad_()
        (_rand(m, 5, 4) @ w).sum().backward()
    out += [fc.get_total_flops(), _counts(fc)]
    return out


def test_flop_counts_equal_torchs():
    """Totals, per-op and per-module counts equal torch's: forward products and convolutions
    (a matrix-vector product counts 0, a batched matrix times a matrix as one mm, a broadcast
    product as a bmm), and the backward's products for each input that needs a gradient,
    under the modules that ran the forward. Lightning's model summary builds one at every fit,
    so its import failed without it."""
    assert _story(torchlike, LMode) == _story(torch, TMode)


def test_a_backward_is_counted_under_its_forwards_modules():
    """torch's module tracker leaves a module once any of its inputs has its gradient (here
    the outermost, whose input ``x`` also feeds ``x @ x.t()``), and counts what follows under
    the module whose backward ran last (here the convolution); torchlike counts a backward's
    FLOPs under the modules that ran the op's forward. The totals and per-op counts are
    torch's."""
    x = _rand(torchlike, 5, 4).requires_grad_()
    img = _rand(torchlike, 2, 1, 7, 7)
    model = _model(torchlike)
    with LMode(display=False, depth=3) as fc:
        model(x, img).backward()
    ours = _counts(fc)
    tx = _rand(torch, 5, 4).requires_grad_()
    timg = _rand(torch, 2, 1, 7, 7)
    with TMode(display=False, depth=3) as tfc:
        _model(torch)(tx, timg).backward()
    theirs = _counts(tfc)
    assert fc.get_total_flops() == tfc.get_total_flops()
    assert ours["Global"] == theirs["Global"]
    assert ours["Net.conv"] == {"aten.convolution": 1152, "aten.convolution_backward": 1152}
    assert theirs["Net.conv"] != ours["Net.conv"]
    assert ours["Net"] == ours["Global"] and theirs["Net"] != theirs["Global"]
