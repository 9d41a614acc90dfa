"""numpy's argument names torch's native functions and methods take (``x.sum(axis=0,
keepdims=True)``, ``torch.cat(ts, axis=0)``), as d2l-style code writes them, against torch;
torch's functions written in Python (``split``, ``norm``, ``unique``, ``F.softmax``) refuse
them, and so does torchlike."""
from __future__ import annotations

import pytest
import torch

import torchlike

CALLS = {
    "Tensor.sum axis": lambda m, x: x.sum(axis=0),
    "Tensor.sum keepdims": lambda m, x: x.sum(1, keepdims=True),
    "torch.sum both": lambda m, x: m.sum(x, axis=1, keepdims=True),
    "torch.mean": lambda m, x: m.mean(x, axis=0),
    "Tensor.mean": lambda m, x: x.mean(axis=1, keepdims=True),
    "torch.cat": lambda m, x: m.cat([x, x], axis=0),
    "torch.stack": lambda m, x: m.stack([x, x], axis=1),
    "Tensor.argmax": lambda m, x: x.argmax(axis=1),
    "torch.max": lambda m, x: m.max(x, axis=1).values,
    "Tensor.max keepdims": lambda m, x: x.max(axis=0, keepdims=True)[0],
    "torch.min": lambda m, x: m.min(x, axis=0)[0],
    "Tensor.std": lambda m, x: x.std(axis=0),
    "torch.var": lambda m, x: m.var(x, axis=1, keepdims=True),
    "Tensor.softmax": lambda m, x: x.softmax(axis=1),
    "torch.softmax": lambda m, x: m.softmax(x, axis=1),
    "torch.log_softmax": lambda m, x: m.log_softmax(x, axis=1),
    "torch.logsumexp": lambda m, x: m.logsumexp(x, axis=1),
    "Tensor.cumsum": lambda m, x: x.cumsum(axis=1),
    "torch.squeeze": lambda m, x: m.squeeze(x[None], axis=0),
    "Tensor.unsqueeze": lambda m, x: x.unsqueeze(axis=0),
    "Tensor.prod": lambda m, x: x.prod(axis=1),
    "Tensor.all": lambda m, x: (x > 0).all(axis=1),
    "torch.any": lambda m, x: m.any(x > 3, axis=0),
    "torch.amax": lambda m, x: m.amax(x, axis=0),
    "torch.sort": lambda m, x: m.sort(x, axis=1).values,
    "Tensor.topk": lambda m, x: x.topk(1, axis=1).values,
    "Tensor.median": lambda m, x: x.median(axis=1).values,
    "torch.count_nonzero": lambda m, x: m.count_nonzero(x, axis=0),
    "torch.unbind": lambda m, x: m.unbind(x, axis=1)[0],
    "Tensor.chunk": lambda m, x: x.chunk(3, axis=1)[0],
    "Tensor.gather": lambda m, x: x.gather(axis=1, index=m.tensor([[0], [1]])),
    "Tensor.index_select": lambda m, x: x.index_select(axis=1, index=m.tensor([0])),
    "torch.nansum": lambda m, x: m.nansum(x, axis=0),
    "Tensor.argsort": lambda m, x: x.argsort(axis=1),
    "torch.diff": lambda m, x: m.diff(x, axis=1),
    # torch's Python-defined functions, and both names at once, refuse numpy's
    "torch.split": lambda m, x: m.split(x, 1, axis=0)[0],
    "Tensor.split": lambda m, x: x.split(1, axis=0)[0],
    "Tensor.norm": lambda m, x: x.norm(axis=1),
    "torch.unique": lambda m, x: m.unique(x, axis=0),
    "Tensor.unflatten": lambda m, x: x.unflatten(axis=1, sizes=(3, 1)),
    "F.softmax": lambda m, x: m.nn.functional.softmax(x, axis=1),
    "F.normalize": lambda m, x: m.nn.functional.normalize(x, axis=1),
    "axis and dim": lambda m, x: x.sum(axis=0, dim=1),
}


def _outcome(m, call):
    x = m.arange(6.0).reshape(2, 3)
    try:
        r = call(m, x)
    except TypeError as e:
        return "TypeError", "unexpected keyword argument 'axis'" in str(e)
    return tuple(r.shape), r.flatten().tolist()


@pytest.mark.parametrize("case", list(CALLS))
def test_numpy_argument_names_as_torch(case):
    assert _outcome(torchlike, CALLS[case]) == _outcome(torch, CALLS[case])
