"""Seed example 3: inspect the gradient flowing into a Linear layer's input."""
import torchlike as torch

model = torch.nn.Linear(2, 1)
x = torch.tensor([[1.0, 2.0]], requires_grad=True)
y = model(x)
loss = y.sum()


def debug_hook(grad):
    print(f"Intermediate gradient: {grad}")
    return grad


x.register_hook(debug_hook)
loss.backward()
