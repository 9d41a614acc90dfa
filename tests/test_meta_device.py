"""The ``meta`` device against torch: factories, ``.to("meta")`` (of tensors and whole
modules), modules built on it (``device="meta"`` or ``with torch.device("meta")``),
``Module.to_empty``, ``torch.func.stack_module_state``, repr and the errors of reading data.
Other ops on meta tensors raise a clear NotImplementedError (DIFFERENCES.md)."""
import copy

import pytest
import torch

import torchlike


def _cases(m):
    nn = m.nn

    def built_in_context():
        with m.device("meta"):
            return nn.Sequential(nn.Linear(2, 3), nn.LayerNorm(3), nn.Conv2d(3, 4, 3),
                                 nn.Embedding(5, 2), nn.BatchNorm2d(4))

    def states(mod):
        return {k: (tuple(v.shape), str(v.dtype), str(v.device), v.requires_grad,
                    type(v).__name__) for k, v in mod.state_dict(keep_vars=True).items()}

    return {
        "zeros": lambda: m.zeros(2, 3, device="meta"),
        "empty": lambda: m.empty(4, device="meta"),
        "ones_int64": lambda: m.ones(2, dtype=m.int64, device="meta"),
        "randn_device_object": lambda: m.randn(2, 2, device=m.device("meta")),
        "full": lambda: m.full((2,), 3.0, device="meta"),
        "arange": lambda: m.arange(5, device="meta"),
        "zero_dim": lambda: m.zeros((), device="meta"),
        "requires_grad": lambda: m.ones(2, device="meta", requires_grad=True),
        "float16": lambda: m.zeros(2, dtype=m.float16, device="meta"),
        "to_meta": lambda: m.ones(2, 3).to("meta"),
        "to_meta_then_dtype": lambda: m.ones(2, 3).to("meta").to(m.float64),
        "half_of_meta": lambda: m.ones(2, 3, device="meta").half(),
        "zeros_like_meta": lambda: m.zeros_like(m.ones(2, 3, device="meta")),
        "empty_like_to_meta": lambda: m.empty_like(m.ones(2, 3), device="meta"),
        "linear_to_meta": lambda: nn.Linear(2, 3).to("meta").weight,
        "deepcopy_to_meta": lambda: states(copy.deepcopy(
            nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))).to("meta")),
        "linear_device_meta": lambda: nn.Linear(2, 3, device="meta").bias,
        "conv_device_meta": lambda: states(nn.Conv1d(2, 3, 3, device="meta")),
        "built_in_device_context": lambda: states(built_in_context()),
        "to_empty_cpu": lambda: (lambda mod: {k: v[:4] for k, v in states(mod).items()})(
            built_in_context().to_empty(device="cpu")),
        "is_meta": lambda: (m.zeros(1, device="meta").is_meta, m.zeros(1).is_meta),
        "device": lambda: m.zeros(1, device="meta").device,
        "size": lambda: m.zeros(2, 5, device="meta").size(1),
        "numel": lambda: m.zeros(2, 3, device="meta").numel(),
        "item": lambda: m.zeros(1, device="meta").item(),
        "numpy": lambda: m.zeros(1, device="meta").numpy(),
        "tolist": lambda: m.zeros(1, device="meta").tolist(),
        "to_cpu": lambda: m.zeros(1, device="meta").to("cpu"),
        "stack_module_state": lambda: [
            {k: (tuple(v.shape), str(v.device), v.requires_grad) for k, v in d.items()}
            for d in m.func.stack_module_state([nn.Linear(2, 3).to("meta") for _ in range(4)])],
        "stack_module_state_buffers": lambda: [
            {k: (tuple(v.shape), str(v.device), str(v.dtype)) for k, v in d.items()}
            for d in m.func.stack_module_state([nn.BatchNorm1d(3, device="meta")
                                                for _ in range(2)])],
    }


def _outcome(fn):
    try:
        return "ok", repr(fn())
    except Exception as e:  # noqa: BLE001  (class and message are compared)
        return type(e).__name__, str(e)


@pytest.mark.parametrize("name", sorted(_cases(torch)))
def test_meta_device_as_torch(name):
    assert _outcome(_cases(torchlike)[name]) == _outcome(_cases(torch)[name])


def test_to_empty_gives_real_storage_that_computes():
    with torchlike.device("meta"):
        mod = torchlike.nn.Linear(2, 3)
    mod.to_empty(device="cpu")
    torchlike.nn.init.ones_(mod.weight)
    torchlike.nn.init.zeros_(mod.bias)
    assert mod(torchlike.ones(1, 2)).tolist() == [[2.0, 2.0, 2.0]]


@pytest.mark.parametrize("op", ["add", "matmul", "sum", "fill_", "forward"])
def test_ops_on_meta_tensors_are_a_clear_error(op):
    """Pinned difference (DIFFERENCES.md): torch computes shapes of any op on meta tensors;
    torchlike supports creating, moving and inspecting them, and says so for other ops."""
    x = torchlike.zeros(2, 2, device="meta")
    run = {"add": lambda: x + 1, "matmul": lambda: x @ x, "sum": lambda: x.sum(),
           "fill_": lambda: x.fill_(1.0),
           "forward": lambda: torchlike.nn.Linear(2, 2, device="meta")(x)}[op]
    with pytest.raises(NotImplementedError, match="ops on 'meta' tensors are not supported"):
        run()
    assert (torch.zeros(2, 2, device="meta") @ torch.zeros(2, 2, device="meta")).is_meta
