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
        "cpu_method": lambda: m.zeros(2, device="meta").cpu(),
        "to_dtype_and_cpu": lambda: m.zeros(2, device="meta").to("cpu", m.float64),
        "tensor_of_meta": lambda: m.tensor(m.zeros(2, device="meta")),
        "tensor_of_meta_dtype": lambda: m.tensor(m.zeros(2, device="meta"), dtype=m.int32),
        "tensor_of_meta_requires_grad": lambda: m.tensor(m.zeros(2, device="meta"),
                                                         requires_grad=True),
        "tensor_of_meta_to_cpu": lambda: m.tensor(m.zeros(2, device="meta"), device="cpu"),
        "tensor_pinned_from_tensor": lambda: m.tensor(m.zeros(2), pin_memory=True),
        "tensor_pinned_from_numpy": lambda: m.tensor(m.zeros(2).numpy(), pin_memory=True),
        "stack_module_state": lambda: [
            {k: (tuple(v.shape), str(v.device), v.requires_grad) for k, v in d.items()}
            for d in m.func.stack_module_state([nn.Linear(2, 3).to("meta") for _ in range(4)])],
        "stack_module_state_buffers": lambda: [
            {k: (tuple(v.shape), str(v.device), str(v.dtype)) for k, v in d.items()}
            for d in m.func.stack_module_state([nn.BatchNorm1d(3, device="meta")
                                                for _ in range(2)])],
    }


def _meta(m, *shape, dtype=None):
    return m.empty(*shape, device="meta", dtype=dtype or m.float32)


def _summary(t):
    return (tuple(t.shape), str(t.dtype).replace("torchlike", "torch"), str(t.device),
            t.requires_grad, t._version)


# copies and writes into and out of meta tensors: fn(m) -> a value compared with torch's
WRITES = {
    "copy_from_cpu": lambda m: _summary(_meta(m, 3).copy_(m.ones(3))),
    "copy_returns_self": lambda m: (lambda a: a.copy_(m.ones(3)) is a)(_meta(m, 3)),
    "copy_broadcast": lambda m: _summary(_meta(m, 2, 3).copy_(m.ones(3))),
    "copy_other_dtype": lambda m: _summary(_meta(m, 3, dtype=m.float64).copy_(
        m.ones(3, dtype=m.int64))),
    "copy_from_meta": lambda m: _summary(_meta(m, 3).copy_(_meta(m, 1))),
    "copy_number": lambda m: _summary(_meta(m, 3).copy_(1.5)),
    "copy_bad_shape": lambda m: _meta(m, 3).copy_(m.ones(4)),
    "copy_non_blocking": lambda m: _summary(_meta(m, 3).copy_(m.ones(3), non_blocking=True)),
    "copy_into_leaf_requiring_grad": lambda m: _meta(m, 3).requires_grad_().copy_(m.ones(3)),
    "copy_requires_grad_no_grad_mode": lambda m: (lambda a, b: (
        m.no_grad().__enter__(), _summary(a.copy_(b)), m.set_grad_enabled(True))[1])(
        _meta(m, 3), m.ones(3, requires_grad=True)),
    "copy_out_of_meta": lambda m: m.ones(3).copy_(_meta(m, 3)),
    "copy_out_of_meta_bad_shape": lambda m: m.ones(3).copy_(_meta(m, 4)),
    "copy_out_of_meta_empty": lambda m: m.ones(0).copy_(_meta(m, 0)),
    "to_cpu_copy": lambda m: _meta(m, 3).to("cpu"),
    "fill_": lambda m: _summary(_meta(m, 3).fill_(2)),
    "fill_tensor": lambda m: _summary(_meta(m, 3).fill_(m.tensor(2.0))),
    "fill_1d_tensor": lambda m: _meta(m, 3).fill_(m.tensor([2.0])),
    "zero_": lambda m: _summary(_meta(m, 3).zero_()),
    "versions": lambda m: (lambda a: (a.fill_(1), a.zero_(), a.copy_(m.ones(3)),
                                      a._version)[3])(_meta(m, 3)),
    "load_state_dict_into_meta": lambda m: _summary((lambda lin: (lin.load_state_dict(
        {"weight": m.ones(2, 2), "bias": m.ones(2)}), lin.weight)[1])(
        m.nn.Linear(2, 2, device="meta")))[:4],
}

FILLS = {"uniform_": [(), (2, 1), (0, float("inf"))],
         "normal_": [(), (0, -1), (0, -1.5), (0, float("nan"))],
         "exponential_": [(), (-1,), (0,)], "geometric_": [(0.5,), (0,), (1.5,)],
         "cauchy_": [(), (0, -1), (0, 0)], "log_normal_": [(), (0, -1), (1, -2.5)],
         "random_": [(), (5,), (5, 0), (-1, 2)], "bernoulli_": [(), (2.0,), (-1.0,)]}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_copies_and_writes_with_meta_tensors_as_torch(name):
    assert _outcome(lambda: WRITES[name](torchlike)) == _outcome(lambda: WRITES[name](torch))


@pytest.mark.parametrize("gen", [False, True], ids=["default_generator", "generator"])
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "bool", "complex64"])
@pytest.mark.parametrize("op,args", [(op, a) for op, sets in FILLS.items() for a in sets],
                         ids=str)
def test_random_fills_of_meta_tensors_as_torch(op, args, dtype, gen):
    """torch's meta kernels check fewer things than its CPU ones, in another order and wording;
    nothing is drawn."""
    def fn(m):
        g = m.Generator().manual_seed(0) if gen else None
        return _summary(getattr(_meta(m, 3, dtype=getattr(m, dtype)), op)(*args, generator=g))
    assert _outcome(lambda: fn(torchlike)) == _outcome(lambda: fn(torch))


# the functional samplers on the meta device: fn(m) -> a tensor, compared by _summary
SAMPLERS = {
    "multinomial": lambda m, g: m.multinomial(_meta(m, 4), 2, generator=g),
    "multinomial_rows": lambda m, g: m.multinomial(_meta(m, 2, 4), 5, True, generator=g),
    "multinomial_more_than_categories":
        lambda m, g: m.multinomial(_meta(m, 4), 5, generator=g),
    "multinomial_int":
        lambda m, g: m.multinomial(_meta(m, 4, dtype=m.int64), 2, generator=g),
    "multinomial_empty": lambda m, g: m.multinomial(_meta(m, 0), 1, True, generator=g),
    "multinomial_3d": lambda m, g: m.multinomial(_meta(m, 1, 1, 3), 2, generator=g),
    "multinomial_zero_samples": lambda m, g: m.multinomial(_meta(m, 3), 0, generator=g),
    "multinomial_negative_samples": lambda m, g: m.multinomial(_meta(m, 3), -1, generator=g),
    "multinomial_out_cpu": lambda m, g: m.multinomial(
        _meta(m, 3), 2, out=m.empty(2, dtype=m.int64), generator=g),
    "multinomial_out_meta_from_cpu": lambda m, g: m.multinomial(
        m.ones(3), 2, out=m.empty(2, dtype=m.int64, device="meta"), generator=g),
    "bernoulli": lambda m, g: m.bernoulli(_meta(m, 3), generator=g),
    "bernoulli_p": lambda m, g: m.bernoulli(_meta(m, 3), 0.5, generator=g),
    "bernoulli_bad_p": lambda m, g: m.bernoulli(_meta(m, 3), -1.0, generator=g),
    "bernoulli_int": lambda m, g: m.bernoulli(_meta(m, 3, dtype=m.int64), generator=g),
    "bernoulli_requires_grad":
        lambda m, g: m.bernoulli(_meta(m, 3).requires_grad_(), generator=g),
    "bernoulli_method": lambda m, g: _meta(m, 3).bernoulli(generator=g),
    "bernoulli_out_cpu": lambda m, g: m.bernoulli(_meta(m, 3), out=m.empty(3), generator=g),
    "bernoulli_out_meta_from_cpu":
        lambda m, g: m.bernoulli(m.ones(3) / 2, out=_meta(m, 3), generator=g),
    "bernoulli_tensor_p_": lambda m, g: _meta(m, 3).bernoulli_(_meta(m, 3), generator=g),
    "bernoulli_cpu_p_": lambda m, g: _meta(m, 3).bernoulli_(m.ones(3) / 2, generator=g),
    "normal_tensors": lambda m, g: m.normal(_meta(m, 3), _meta(m, 3), generator=g),
    "normal_broadcast": lambda m, g: m.normal(_meta(m, 3, 1), _meta(m, 2), generator=g),
    "normal_bad_broadcast":
        lambda m, g: m.normal(_meta(m, 2, 3), _meta(m, 4, 1, 2), generator=g),
    "normal_promoted": lambda m, g: m.normal(_meta(m, 3, dtype=m.float16),
                                             _meta(m, 3, dtype=m.float64), generator=g),
    "normal_int_mean":
        lambda m, g: m.normal(_meta(m, 3, dtype=m.int64), _meta(m, 3), generator=g),
    "normal_complex_std":
        lambda m, g: m.normal(_meta(m, 3), _meta(m, 3, dtype=m.complex64), generator=g),
    "normal_tensor_float": lambda m, g: m.normal(_meta(m, 3), 1.0, generator=g),
    "normal_int_tensor_float":
        lambda m, g: m.normal(_meta(m, 3, dtype=m.int64), 1.0, generator=g),
    "normal_negative_std": lambda m, g: m.normal(_meta(m, 3), -1.0, generator=g),
    "normal_float_tensor":
        lambda m, g: m.normal(0.0, _meta(m, 3, dtype=m.float16), generator=g),
    "normal_float_int_tensor":
        lambda m, g: m.normal(0.0, _meta(m, 3, dtype=m.int64), generator=g),
    "normal_meta_and_cpu": lambda m, g: m.normal(_meta(m, 3), m.ones(3), generator=g),
    "normal_size_meta": lambda m, g: m.normal(0.0, 1.0, (3,), device="meta", generator=g),
    "normal_size_meta_int": lambda m, g: m.normal(0.0, 1.0, (3,), device="meta",
                                                  dtype=m.int64, generator=g),
    "normal_size_meta_negative_std":
        lambda m, g: m.normal(0.0, -1.0, (3,), device="meta", generator=g),
    "normal_size_meta_requires_grad": lambda m, g: m.normal(0.0, 1.0, (3,), device="meta",
                                                            requires_grad=True, generator=g),
    "normal_size_out_meta":
        lambda m, g: m.normal(0.0, 1.0, (3,), out=_meta(m, 3), generator=g),
    "normal_size_meta_out_cpu": lambda m, g: m.normal(0.0, 1.0, (3,), device="meta",
                                                      out=m.empty(3), generator=g),
    "normal_out_cpu": lambda m, g: m.normal(_meta(m, 3), 1.0, out=m.empty(3), generator=g),
    "normal_out_meta": lambda m, g: m.normal(_meta(m, 3), 1.0, out=_meta(m, 3), generator=g),
    "poisson": lambda m, g: m.poisson(_meta(m, 3), generator=g),
    "poisson_int": lambda m, g: m.poisson(_meta(m, 3, dtype=m.int64), generator=g),
    "poisson_requires_grad": lambda m, g: m.poisson(_meta(m, 3).requires_grad_(), generator=g),
    "binomial": lambda m, g: m.binomial(_meta(m, 3), _meta(m, 3), generator=g),
    "binomial_int_count":
        lambda m, g: m.binomial(_meta(m, 3, dtype=m.int64), _meta(m, 3), generator=g),
}


@pytest.mark.parametrize("gen", [False, True], ids=["default_generator", "generator"])
@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_samplers_on_meta_tensors_as_torch(name, gen):
    def fn(m):
        return _summary(SAMPLERS[name](m, m.Generator().manual_seed(0) if gen else None))
    assert _outcome(lambda: fn(torchlike)) == _outcome(lambda: fn(torch))


def test_normal_of_a_size_takes_its_device():
    assert torchlike.normal(0.0, 1.0, (3,), device="meta").is_meta
    assert torchlike.normal(0.0, 1.0, (3,), device="cpu").device.type == "cpu"


def test_random_fill_of_a_meta_tensor_draws_nothing():
    g = torchlike.Generator().manual_seed(0)
    first = torchlike.rand(4, generator=g)
    g.manual_seed(0)
    _meta(torchlike, 5).uniform_(generator=g)
    _meta(torchlike, 5).normal_(generator=g)
    assert torchlike.equal(torchlike.rand(4, generator=g), first)


def test_write_of_a_value_requiring_grad_into_meta_is_a_clear_error():
    """Pinned difference (DIFFERENCES.md): torch records the write in the meta tensor's
    history; torchlike says it cannot."""
    src = torchlike.ones(3, requires_grad=True)
    with pytest.raises(NotImplementedError, match="requires grad"):
        _meta(torchlike, 3).copy_(src)
    assert torch.empty(3, device="meta").copy_(torch.ones(3, requires_grad=True)).requires_grad


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


@pytest.mark.parametrize("op", ["add", "matmul", "sum", "clone", "forward"])
def test_ops_on_meta_tensors_are_a_clear_error(op):
    """Pinned difference (DIFFERENCES.md): torch computes shapes of any op on meta tensors;
    torchlike supports creating, moving and inspecting them, and says so for other ops."""
    x = torchlike.zeros(2, 2, device="meta")
    run = {"add": lambda: x + 1, "matmul": lambda: x @ x, "sum": lambda: x.sum(),
           "clone": lambda: x.clone(),
           "forward": lambda: torchlike.nn.Linear(2, 2, device="meta")(x)}[op]
    with pytest.raises(NotImplementedError, match="ops on 'meta' tensors are not supported"):
        run()
    assert (torch.zeros(2, 2, device="meta") @ torch.zeros(2, 2, device="meta")).is_meta
