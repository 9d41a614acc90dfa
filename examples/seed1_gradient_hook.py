"""Seed example 1: a hook that prints the gradient."""
import torchlike as torch

t = torch.tensor([2.0, 3.0], requires_grad=True)
res = t * 2
res = res.sum()


def hook_fn(grad):
    print(f"Gradient: {grad}")
    return grad


t.register_hook(hook_fn)
res.backward()
