"""``torch.compiler.is_compiling()`` inside compiled code, against torch (backend="eager"):
True while traced and in the code around a graph break, False outside and in ``disable``d
code."""
import warnings

import pytest
import torch
import torch._dynamo

import torchlike


def _scenarios(m):
    C = m.compiler

    def plain(x):
        return x + 1, C.is_compiling()

    def after_break(x):
        before = C.is_compiling()
        if x.sum() > 0:                 # data-dependent branch: a graph break
            x = x * 2
        return x, before, C.is_compiling()

    def after_item(x):
        n = x.sum().item()              # a graph break
        return x + n, C.is_compiling()

    @C.disable
    def eager_only():
        return C.is_compiling()

    def calls_disabled(x):
        return x - 1, eager_only(), C.is_compiling()

    class Net(m.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                x = x + 1
            return x, C.is_compiling()

    return {"plain": plain, "after_break": after_break, "after_item": after_item,
            "calls_disabled": calls_disabled, "module_after_break": Net()}


def _compile(m, fn):
    if m is torch:
        torch._dynamo.reset()
        return torch.compile(fn, backend="eager")
    return torchlike.compile(fn)


@pytest.mark.parametrize("name", ["plain", "after_break", "after_item", "calls_disabled",
                                  "module_after_break"])
def test_is_compiling_matches_torch(name):
    seen = {}
    for m in (torch, torchlike):
        fn = _compile(m, _scenarios(m)[name])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs = [fn(m.tensor([1.0, 2.0])) for _ in range(3)]   # first call and cached
        seen[m] = [tuple(o for o in out[1:]) for out in outs]
        assert m.compiler.is_compiling() is False
    assert seen[torchlike] == seen[torch]
