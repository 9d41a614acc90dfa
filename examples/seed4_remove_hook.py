"""Seed example 4: a removed hook is not called."""
import torchlike as torch

t = torch.tensor([1.0, 2.0], requires_grad=True)
res = t * 3
res = res.sum()


def simple_hook(grad):
    print("Hook called!")
    return grad


hook_handle = t.register_hook(simple_hook)
hook_handle.remove()

res.backward()
print("Backward complete")
