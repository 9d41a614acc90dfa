"""Devices: torch.device parsing, device= on factories, default device, moves, torch.cuda,
torch.accelerator, torch.mps, torch.cpu and torch.backends, each against torch (on a CPU-only
jax, torch's CPU build is the oracle for queries and errors; with a GPU the GPU tests run)."""
import pickle
import warnings

import numpy as np
import pytest
import torch

import torchlike

from oracle import assert_close

HAS_GPU = torchlike.cuda.is_available()
TORCH_GPU = torch.cuda.is_available()
cpu_only = pytest.mark.skipif(HAS_GPU or TORCH_GPU, reason="CPU-build behaviour")
gpu_only = pytest.mark.skipif(not HAS_GPU, reason="needs a jax GPU backend")


def outcome(fn, m):
    """(value repr, or exception class name and message) of ``fn(m)``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(m)
    except Exception as e:          # noqa: BLE001 - the class is what we compare
        return ("raises", type(e).__name__, str(e).split("\n")[0])
    return ("value", repr(r))


def same(fn, fragment_only=False):
    ours, theirs = outcome(fn, torchlike), outcome(fn, torch)
    if fragment_only and ours[0] == theirs[0] == "raises":
        assert ours[1] == theirs[1], (ours, theirs)
        return ours
    assert ours == theirs, (ours, theirs)
    return ours


# ------------------------------------------------------------------ torch.device

DEVICE_CASES = [
    lambda m: m.device("cpu"), lambda m: m.device("cuda"), lambda m: m.device("cuda:1"),
    lambda m: m.device("cuda", 1), lambda m: m.device("cpu", 0), lambda m: m.device("mps"),
    lambda m: m.device("xla:0"), lambda m: m.device("meta"),
    lambda m: m.device(type="cuda", index=0), lambda m: m.device(m.device("cuda:1")),
    lambda m: m.device("foo"), lambda m: m.device("CUDA"), lambda m: m.device("tpu"),
    lambda m: m.device("cuda:x"), lambda m: m.device("cuda:-1"), lambda m: m.device("cuda:01"),
    lambda m: m.device(" cuda"), lambda m: m.device("cuda:1", 2),
    lambda m: m.device("cuda", index=-1), lambda m: m.device(-1),
    lambda m: m.device("cuda", "x"),
    lambda m: str(m.device("cuda", 0)), lambda m: str(m.device("cpu")),
    lambda m: m.device("cuda:0").index, lambda m: m.device("cuda").index,
    lambda m: m.device("cuda:3").type,
    lambda m: m.device("cuda") == m.device("cuda:0"), lambda m: m.device("cpu") == "cpu",
    lambda m: m.device("cpu:0") == m.device("cpu"), lambda m: m.device("cpu") == m.device("cpu"),
    lambda m: hash(m.device("cuda:1")) == hash(m.device("cuda", 1)),
    lambda m: pickle.loads(pickle.dumps(m.device("cuda:1"))),
    lambda m: {m.device("cpu"): 1}[m.device("cpu")],
]


@pytest.mark.parametrize("i", range(len(DEVICE_CASES)))
def test_device_objects(i):
    same(DEVICE_CASES[i])


@cpu_only
def test_device_int_without_accelerator():
    same(lambda m: m.device(0))
    same(lambda m: m.zeros(2).to(0))
    same(lambda m: m.zeros(2, device=0))


def test_device_none_is_type_error():
    assert outcome(lambda m: m.device(None), torchlike)[:2] == \
        outcome(lambda m: m.device(None), torch)[:2]


# ------------------------------------------------------------------ factories and moves

FACTORIES = [
    lambda m, d: m.zeros(2, device=d), lambda m, d: m.ones(2, 3, device=d),
    lambda m, d: m.full((2,), 1.5, device=d), lambda m, d: m.empty(2, device=d),
    lambda m, d: m.tensor([1.0, 2.0], device=d), lambda m, d: m.arange(3, device=d),
    lambda m, d: m.linspace(0, 1, 3, device=d), lambda m, d: m.eye(2, device=d),
    lambda m, d: m.rand(2, device=d), lambda m, d: m.randn(2, device=d),
    lambda m, d: m.randint(0, 3, (2,), device=d), lambda m, d: m.randperm(3, device=d),
    lambda m, d: m.zeros_like(m.zeros(2), device=d), lambda m, d: m.ones_like(m.zeros(2), device=d),
    lambda m, d: m.full_like(m.zeros(2), 3, device=d), lambda m, d: m.rand_like(m.zeros(2), device=d),
    lambda m, d: m.randn_like(m.zeros(2), device=d),
    lambda m, d: m.randint_like(m.zeros(2), 3, device=d),
    lambda m, d: m.as_tensor([1, 2], device=d), lambda m, d: m.scalar_tensor(1.0, device=d),
    lambda m, d: m.logspace(0, 1, 3, device=d),
]


@pytest.mark.parametrize("i", range(len(FACTORIES)))
def test_factory_device_cpu(i):
    for d in ("cpu", torchlike.device("cpu"), None):
        t = FACTORIES[i](torchlike, d)
        ref = FACTORIES[i](torch, d if not isinstance(d, torchlike.device) else "cpu")
        assert repr(t.device) == repr(ref.device)
        assert t.is_cpu and not t.is_cuda


@cpu_only
@pytest.mark.parametrize("i", range(len(FACTORIES)))
def test_factory_device_cuda_errors_like_cpu_build(i):
    for d in ("cuda", "cuda:0"):
        same(lambda m: FACTORIES[i](m, d))


@cpu_only
@pytest.mark.parametrize("dev", ["mps", "xla"])
def test_factory_unsupported_backends(dev):
    ours = outcome(lambda m: m.zeros(2, device=dev), torchlike)
    theirs = outcome(lambda m: m.zeros(2, device=dev), torch)
    assert ours[:2] == theirs[:2]
    assert f"with arguments from the '{dev.upper()}' backend" in ours[2]


@cpu_only
def test_moves_and_pin_memory_like_cpu_build():
    same(lambda m: m.zeros(2).cuda())
    same(lambda m: m.zeros(2).to("cuda"))
    same(lambda m: m.zeros(2).to(m.device("cuda:0")))
    same(lambda m: m.zeros(2, pin_memory=True))


def test_to_cpu_keeps_tensor_and_dtype_device_kwargs():
    for m in (torchlike, torch):
        x = m.ones(3, requires_grad=True)
        assert x.to("cpu") is x and x.cpu() is x
        y = x.to(device="cpu", dtype=m.float64)
        assert str(y.dtype) == "torch.float64" and y.device.type == "cpu"
    same(lambda m: m.zeros(2).to("cpu"))
    same(lambda m: m.zeros(2).cpu().is_cuda)


def test_tensor_of_tensor_and_as_tensor_device():
    same(lambda m: m.tensor(m.ones(2)).device)
    same(lambda m: m.as_tensor(m.ones(2), device="cpu").device)


# ------------------------------------------------------------------ default device

def test_default_device_context_and_setter():
    for m in (torchlike, torch):
        assert repr(m.get_default_device()) == "device(type='cpu')"
        with m.device("cpu") as d:
            assert repr(m.get_default_device()) == "device(type='cpu')"
            assert m.zeros(2).device.type == "cpu"
        assert repr(d) == "device(type='cpu')"
        m.set_default_device("cpu")
        assert repr(m.get_default_device()) == "device(type='cpu')"
        m.set_default_device(None)
        assert repr(m.get_default_device()) == "device(type='cpu')"


@cpu_only
def test_default_device_cuda_like_cpu_build():
    def fn(m):
        m.set_default_device("cuda")
        try:
            return m.zeros(2)
        finally:
            m.set_default_device(None)
    same(fn)

    def fn2(m):
        m.set_default_device("cuda")
        try:
            return m.get_default_device()
        finally:
            m.set_default_device(None)
    same(fn2)
    assert torchlike.zeros(2).device.type == "cpu"


# ------------------------------------------------------------------ torch.cuda on a CPU build

CUDA_QUERIES = [
    "is_available()", "device_count()", "current_device()", "get_device_name()",
    "get_device_name(0)", "get_device_capability()", "get_device_properties(0)",
    "synchronize()", "empty_cache()", "manual_seed(0)", "manual_seed_all(0)",
    "memory_allocated()", "max_memory_allocated()", "memory_reserved()",
    "max_memory_reserved()", "memory_stats()", "is_initialized()", "Stream()", "Event()",
    "is_bf16_supported()", "current_stream()", "init()", "get_rng_state()", "seed()",
    "ipc_collect()", "mem_get_info()", "get_arch_list()", "set_device('cpu')",
    "device('cpu')", "device(-1).__enter__()", "device(0).__enter__()", "memory_summary()",
    "FloatTensor(2)", "LongTensor([1])", "FloatTensor", "LongTensor",
    "is_tf32_supported()", "has_half", "has_magma", "get_sync_debug_mode()",
    "set_sync_debug_mode(0)", "get_gencode_flags()", "set_per_process_memory_fraction(0.5)",
    "get_per_process_memory_fraction()", "memory_stats_as_nested_dict()",
    "can_device_access_peer(0, 0)", "utilization()", "list_gpu_processes()",
    "default_generators", "set_stream(None)", "CUDAGraph()", "temperature()",
    "caching_allocator_alloc(10)", "host_memory_stats()",
    "set_device(-1)",
]


@cpu_only
@pytest.mark.parametrize("q", CUDA_QUERIES)
def test_cuda_queries_like_cpu_build(q):
    same(lambda m: eval("m.cuda." + q, {"m": m}))


@cpu_only
def test_cuda_set_device_and_peak_reset_raise():
    # torch's CPU build raises AttributeError from its C bindings here; torchlike the
    # AssertionError of every other CUDA call (DIFFERENCES.md)
    for q in ("set_device(0)", "reset_peak_memory_stats()"):
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            eval("torchlike.cuda." + q)


def test_cuda_tensor_types_isinstance():
    for m in (torchlike, torch):
        assert not isinstance(m.zeros(1), m.cuda.FloatTensor)
        assert isinstance(m.zeros(1), m.FloatTensor)


def test_cuda_misc_names():
    assert issubclass(torchlike.cuda.OutOfMemoryError, RuntimeError)
    assert torchlike.cuda.device_of(torchlike.zeros(1)).idx == torch.cuda.device_of(
        torch.zeros(1)).idx
    with torchlike.cuda.device_of(torchlike.zeros(1)):
        pass
    with torchlike.cuda.nvtx.range("x"):
        torchlike.cuda.nvtx.range_push("y")
        torchlike.cuda.nvtx.range_pop()


# ------------------------------------------------------------------ accelerator, mps, cpu

OTHER_QUERIES = [
    "accelerator.is_available()", "accelerator.current_accelerator()",
    "accelerator.device_count()", "accelerator.current_device_index()",
    "accelerator.synchronize()", "mps.is_available()", "mps.device_count()",
    "mps.synchronize()", "mps.empty_cache()", "mps.manual_seed(0)", "cpu.is_available()",
    "cpu.device_count()", "cpu.current_device()", "cpu.synchronize()",
    "cpu.set_device('cpu')", "cpu.is_initialized()", "accelerator.memory_allocated()",
    "accelerator.empty_cache()", "accelerator.max_memory_allocated()",
]


@cpu_only
@pytest.mark.parametrize("q", OTHER_QUERIES)
def test_accelerator_mps_cpu_queries(q):
    same(lambda m: eval("m." + q, {"m": m}))


def test_cpu_stream_and_amp_names():
    with torchlike.cpu.stream(torchlike.cpu.current_stream()):
        pass
    assert torchlike.cpu.amp.autocast is not None


# ------------------------------------------------------------------ backends

BACKEND_QUERIES = [
    "cudnn.is_available()", "cudnn.enabled", "cudnn.benchmark", "cudnn.deterministic",
    "cudnn.version()", "cudnn.allow_tf32", "cudnn.benchmark_limit",
    "cuda.matmul.allow_tf32", "cuda.is_built()",
    "cuda.matmul.allow_fp16_reduced_precision_reduction",
    "cuda.matmul.allow_bf16_reduced_precision_reduction", "cuda.matmul.foo",
    "mps.is_available()", "mps.is_built()", "mps.is_macos13_or_newer()",
    "mkldnn.is_available()", "mkldnn.enabled", "opt_einsum.is_available()",
    "opt_einsum.enabled", "opt_einsum.strategy", "openmp.is_available()",
    "mkl.is_available()", "cuda.flash_sdp_enabled()", "cuda.math_sdp_enabled()",
    "cuda.mem_efficient_sdp_enabled()", "cuda.cudnn_sdp_enabled()",
    "cuda.is_flash_attention_available()", "cuda.SDPBackend.MATH",
    "mps.is_macos_or_newer(13, 0)",
]


@cpu_only
@pytest.mark.parametrize("q", BACKEND_QUERIES)
def test_backend_queries(q):
    same(lambda m: eval("m.backends." + q, {"m": m}))


def test_backend_switches_round_trip():
    for m in (torchlike, torch):
        m.backends.cudnn.benchmark = True
        m.backends.cudnn.deterministic = True
        assert m.backends.cudnn.benchmark and m.backends.cudnn.deterministic
        m.backends.cudnn.benchmark = False
        m.backends.cudnn.deterministic = False
        with m.backends.cudnn.flags(enabled=False):
            assert m.backends.cudnn.enabled is False
        assert m.backends.cudnn.enabled is True


def test_allow_tf32_is_matmul_precision():
    out = []
    for m in (torchlike, torch):
        r = []
        m.backends.cuda.matmul.allow_tf32 = True
        r.append(m.get_float32_matmul_precision())
        m.backends.cuda.matmul.allow_tf32 = False
        r.append(m.get_float32_matmul_precision())
        m.set_float32_matmul_precision("medium")
        r.append(m.backends.cuda.matmul.allow_tf32)
        m.set_float32_matmul_precision("highest")
        r.append(m.backends.cuda.matmul.allow_tf32)
        out.append(r)
    assert out[0] == out[1]
    same(lambda m: setattr(m.backends.cuda.matmul, "foo", 1))


def test_backend_module_paths_import():
    import importlib
    for name in ("cudnn", "cuda", "mps", "mkldnn", "opt_einsum", "mkl", "openmp"):
        importlib.import_module("torchlike.backends." + name)


# ------------------------------------------------------------------ on a GPU (device runs)

@gpu_only
def test_gpu_round_trip_and_grad():
    x = torchlike.arange(6.0).reshape(2, 3).requires_grad_()
    y = x.cuda()
    assert y.is_cuda and repr(y.device) == "device(type='cuda', index=0)"
    assert y.grad_fn.name() == "ToCopyBackward0"
    z = (y * y).sum()
    z.backward()
    assert x.grad.device.type == "cpu"
    assert_close(x.grad, torch.arange(6.0).reshape(2, 3) * 2)
    back = (y * 2).cpu()
    assert back.device.type == "cpu"
    assert_close(back, torch.arange(6.0).reshape(2, 3) * 2)
    torchlike.cuda.synchronize()


@gpu_only
def test_gpu_factories_default_device_and_memory():
    t = torchlike.zeros(1024, 1024, device="cuda")
    assert t.device.type == "cuda"
    with torchlike.device("cuda"):
        assert torchlike.ones(2).device.type == "cuda"
    assert torchlike.ones(2).device.type == "cpu"
    assert torchlike.cuda.memory_allocated() >= 4 * 1024 * 1024
    torchlike.cuda.reset_peak_memory_stats()
    assert torchlike.cuda.max_memory_allocated() >= torchlike.cuda.memory_allocated() > 0
    assert torchlike.cuda.memory_reserved() >= 0
    p = torchlike.cuda.get_device_properties(0)
    assert p.total_memory > 0 and torchlike.cuda.get_device_name() == p.name
    assert torchlike.cuda.current_device() == 0
    e0, e1 = torchlike.cuda.Event(enable_timing=True), torchlike.cuda.Event(enable_timing=True)
    e0.record()
    (t @ t).sum().item()
    e1.record()
    assert e0.elapsed_time(e1) >= 0
    s = torchlike.cuda.Stream()
    with torchlike.cuda.stream(s):
        pass
    torchlike.cuda.synchronize()
    assert torchlike.backends.cudnn.is_available()
    assert torchlike.accelerator.is_available()


_MOVE_SCRIPT = r'''
import jax, numpy as np
import torchlike as tl
from torchlike._tensor import Tensor
d0, d1 = jax.devices("cpu")[:2]
x = Tensor._make(jax.device_put(np.arange(3.0), d1)).requires_grad_()
y = x.to("cpu")
assert y is not x and y._data.devices() == {d0}, y._data.devices()
assert y.grad_fn.name() == "ToCopyBackward0"
assert y.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
(y * y).sum().backward()
assert x.grad._data.devices() == {d1}
np.testing.assert_allclose(np.asarray(x.grad._data), [0.0, 2.0, 4.0])
# create_graph: the moved gradient is itself differentiable
x2 = Tensor._make(jax.device_put(np.arange(3.0), d1)).requires_grad_()
(g,) = tl.autograd.grad((x2.to("cpu") ** 3).sum(), x2, create_graph=True)
g.sum().backward()
np.testing.assert_allclose(np.asarray(x2.grad._data), [0.0, 6.0, 12.0])
with tl.no_grad():
    assert x.to("cpu").grad_fn is None
print("MOVE-OK")
'''


def test_device_move_is_recorded_as_to_copy(tmp_path):
    """A move between two jax devices (two host devices here: XLA's forced device count) is a
    ToCopyBackward0 node whose backward, also under create_graph, moves the gradient back."""
    import os
    import subprocess
    import sys
    path = tmp_path / "move.py"
    path.write_text(_MOVE_SCRIPT)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, str(path)], env=env, capture_output=True, text=True,
                       timeout=300)
    assert "MOVE-OK" in r.stdout, r.stderr[-3000:]


@pytest.mark.parametrize("dev", ["mps", "xpu", "xla", "ipu"])
@pytest.mark.parametrize("how", ["to", "module_to", "factory"])
def test_devices_torch_has_no_backend_for_here_raise_as_torch(dev, how):
    """A move says it as torch's ``to`` ("not linked with support", XPU's assertion), a factory
    as its allocation."""
    from oracle import same_as_torch
    f = {"to": lambda m: m.zeros(1).to(dev), "module_to": lambda m: m.nn.Linear(1, 1).to(dev),
         "factory": lambda m: m.zeros(1, device=dev)}[how]
    # (a factory's message is torch's first sentence and torchlike's explanation)
    same_as_torch(f, msg=how != "factory" or dev == "xpu")


@pytest.mark.parametrize("kind", ["xpu", "ipu", "mtia"])
def test_moves_to_devices_torch_was_not_built_with(kind):
    """``Module.xpu()/ipu()/mtia()`` and ``Tensor.to(kind)`` raise torch's errors (class and
    message) on a machine without those devices."""
    from oracle import same_as_torch
    same_as_torch(lambda m: getattr(m.nn.Linear(1, 1), kind)())
    same_as_torch(lambda m: m.ones(1).to(kind))
