"""Seed example 5: collect gradient norms in a hook."""
import torchlike as torch

grad_norms = []


def collect_norm(grad):
    norm = grad.norm().item()
    grad_norms.append(norm)
    print(f"Gradient norm: {norm:.4f}")
    return grad


t = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
res = t * t
res = res.sum()

t.register_hook(collect_norm)
res.backward()
print(f"All norms: {grad_norms}")
