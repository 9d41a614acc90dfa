"""torch.nn.grad: the gradients of conv1d/2d/3d with respect to their input and weight.

torch calls ``aten.convolution_backward``; the convolution is linear in each argument, so
these are the vector-Jacobian products of ``F.conv{n}d`` at a zero point of the right shape,
taken with torchlike's autograd (a graph-building result when an argument requires grad).
"""
from __future__ import annotations

from .. import _creation
from ..autograd import grad_mode
from . import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input",
           "conv3d_weight"]


def _conv(nd):
    return {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]


def _graph(*tensors):
    """Whether the result joins the graph (torch's convolution_backward is differentiable in
    the other argument and in grad_output)."""
    return grad_mode.is_grad_enabled() and any(t.requires_grad for t in tensors)


def _input_grad(nd, input_size, weight, grad_output, stride, padding, dilation, groups):
    from ..autograd import grad as _grad
    graph = _graph(weight, grad_output)
    with grad_mode.enable_grad():
        x = _creation.zeros(tuple(input_size), dtype=grad_output.dtype, requires_grad=True)
        out = _conv(nd)(x, weight if graph else weight.detach(), None, stride, padding,
                        dilation, groups)
        g, = _grad(out, x, grad_output, create_graph=graph)
    return g


def _weight_grad(nd, input, weight_size, grad_output, stride, padding, dilation, groups):
    from ..autograd import grad as _grad
    graph = _graph(input, grad_output)
    with grad_mode.enable_grad():
        w = _creation.zeros(tuple(weight_size), dtype=grad_output.dtype, requires_grad=True)
        out = _conv(nd)(input if graph else input.detach(), w, None, stride, padding,
                        dilation, groups)
        g, = _grad(out, w, grad_output, create_graph=graph)
    return g


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _input_grad(1, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _weight_grad(1, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _input_grad(2, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _weight_grad(2, input, weight_size, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _input_grad(3, input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _weight_grad(3, input, weight_size, grad_output, stride, padding, dilation, groups)
