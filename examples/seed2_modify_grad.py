"""Seed example 2: a hook that doubles the gradient."""
import torchlike as torch

t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
res = t ** 2
res = res.sum()


def modify_grad(grad):
    return grad * 2


t.register_hook(modify_grad)
res.backward()
print(t.grad)
