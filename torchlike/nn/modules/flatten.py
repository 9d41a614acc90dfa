"""Flatten and Unflatten (torch.nn.modules.flatten)."""
from __future__ import annotations

from .module import Module

__all__ = ['Flatten', 'Unflatten']


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    def __init__(self, dim, unflattened_size):
        super().__init__()
        if isinstance(dim, int):
            if not isinstance(unflattened_size, (tuple, list)):
                raise TypeError("unflattened_size must be tuple of ints, but found type "
                                f"{type(unflattened_size).__name__}")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        d = self.dim % input.ndim
        shape = tuple(input.shape)
        new = shape[:d] + tuple(self.unflattened_size) + shape[d + 1:]
        return input.reshape(*new)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
