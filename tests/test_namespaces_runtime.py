"""Top-level knobs and constants (threads, determinism, matmul precision, layouts, memory
formats), torch.testing.assert_close (rules and messages), and the lazily imported namespaces."""
import importlib
import math
import warnings

import numpy as np
import pytest
import torch

import torchlike


def outcome(fn, m):
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = fn(m)
    except Exception as e:          # noqa: BLE001
        return ("raises", type(e).__name__, str(e))
    return ("value", repr(r), [str(x.message).split(" (Triggered internally")[0] for x in w])


def same(fn):
    ours, theirs = outcome(fn, torchlike), outcome(fn, torch)
    assert ours == theirs, (ours, theirs)


# ------------------------------------------------------------------ constants and types

@pytest.mark.parametrize("name", ["pi", "e", "inf", "nan", "newaxis"])
def test_constants(name):
    a, b = getattr(torchlike, name), getattr(torch, name)
    assert type(a) is type(b)
    assert a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))


@pytest.mark.parametrize("name", ["strided", "sparse_coo", "sparse_csr", "sparse_csc",
                                  "sparse_bsr", "sparse_bsc", "jagged", "contiguous_format",
                                  "channels_last", "channels_last_3d", "preserve_format"])
def test_layouts_and_memory_formats(name):
    a, b = getattr(torchlike, name), getattr(torch, name)
    assert repr(a) == repr(b) and str(a) == str(b)
    assert type(a).__name__ == type(b).__name__
    assert isinstance(a, (torchlike.layout, torchlike.memory_format))


def test_tensor_layout_and_factory_layout():
    assert torchlike.zeros(1).layout == torchlike.strided
    assert torchlike.zeros(2, layout=torchlike.strided).shape == (2,)
    with pytest.raises(NotImplementedError, match="layout"):
        torchlike.zeros(2, layout=torchlike.sparse_coo)


def test_version_namespace():
    assert torchlike.version.cuda == (torch.version.cuda if not torch.cuda.is_available()
                                      else torchlike.version.cuda)
    assert torchlike.version.hip is None


def test_config_texts():
    """torch.__config__: show() and parallel_info() are text naming the build and threads."""
    for m in (torchlike, torch):
        assert isinstance(m.__config__.show(), str) and "built with" in m.__config__.show()
        info = m.__config__.parallel_info()
        assert f"at::get_num_threads() : {m.get_num_threads()}" in info
    assert "JAX" in torchlike.__config__.show()


# ------------------------------------------------------------------ knobs

def test_threads():
    for m in (torchlike, torch):
        before = m.get_num_threads()
        m.set_num_threads(1)
        assert m.get_num_threads() == 1
        m.set_num_threads(before)
        assert isinstance(m.get_num_interop_threads(), int)
    same(lambda m: m.set_num_threads(0))
    same(lambda m: m.set_num_threads("a"))


def test_determinism():
    for m in (torchlike, torch):
        assert not m.are_deterministic_algorithms_enabled()
        m.use_deterministic_algorithms(True, warn_only=True)
        r = (m.are_deterministic_algorithms_enabled(),
             m.is_deterministic_algorithms_warn_only_enabled(), m.get_deterministic_debug_mode())
        m.set_deterministic_debug_mode("error")
        r += (m.get_deterministic_debug_mode(), m.is_deterministic_algorithms_warn_only_enabled())
        m.use_deterministic_algorithms(False)
        r += (m.get_deterministic_debug_mode(), m.are_deterministic_algorithms_enabled())
        if m is torchlike:
            ours = r
        else:
            assert ours == r


def test_matmul_precision():
    for m in (torchlike, torch):
        assert m.get_float32_matmul_precision() == "highest"
        for p in ("high", "medium", "highest"):
            m.set_float32_matmul_precision(p)
            assert m.get_float32_matmul_precision() == p
    same(lambda m: m.set_float32_matmul_precision("foo"))
    # the precision reaches jax
    import jax
    torchlike.set_float32_matmul_precision("medium")
    assert jax.config.jax_default_matmul_precision == "bfloat16"
    torchlike.set_float32_matmul_precision("highest")
    assert jax.config.jax_default_matmul_precision == "highest"


def test_misc_knobs():
    for m in (torchlike, torch):
        m.set_warn_always(True)
        assert m.is_warn_always_enabled()
        m.set_warn_always(False)
        assert not m.is_autocast_enabled()
        assert m.get_autocast_dtype("cpu") == m.bfloat16
        assert m.get_autocast_dtype("cuda") == m.float16
        m._assert(True, "fine")
        with pytest.raises(AssertionError, match="bad"):
            m._assert(False, "bad")


# ------------------------------------------------------------------ testing.assert_close

T = torchlike.tensor
CLOSE_CASES = [
    lambda m: m.testing.assert_close(m.tensor([1., 2., 3.]), m.tensor([1., 2.5, 3.])),
    lambda m: m.testing.assert_close(m.tensor([1, 2]), m.tensor([1, 3])),
    lambda m: m.testing.assert_close(m.tensor([1., 2.]), m.tensor([1., 2.], dtype=m.float64)),
    lambda m: m.testing.assert_close(m.tensor([1., 2.]), m.tensor([1., 2.], dtype=m.float64),
                                     check_dtype=False),
    lambda m: m.testing.assert_close(m.tensor([1., 2.]), m.tensor([1., 2., 3.])),
    lambda m: m.testing.assert_close(1.0, 1.5),
    lambda m: m.testing.assert_close(1, 2),
    lambda m: m.testing.assert_close(1, 1.0),
    lambda m: m.testing.assert_close([m.tensor(1.)], [m.tensor(2.)]),
    lambda m: m.testing.assert_close({"a": m.tensor(1.)}, {"a": m.tensor(2.)}),
    lambda m: m.testing.assert_close([1, 2], [1, 2, 3]),
    lambda m: m.testing.assert_close((1, 2), [1, 2]),
    lambda m: m.testing.assert_close(m.tensor(1.), 1.0),
    lambda m: m.testing.assert_close(m.tensor([1.]), np.array([1.])),
    lambda m: m.testing.assert_close(np.array([1.]), np.array([1.])),
    lambda m: m.testing.assert_close(m.tensor([float("nan")]), m.tensor([float("nan")])),
    lambda m: m.testing.assert_close(m.tensor([float("nan")]), m.tensor([float("nan")]),
                                     equal_nan=True),
    lambda m: m.testing.assert_close(m.tensor([1.]), m.tensor([1.1]), rtol=0.2),
    lambda m: m.testing.assert_close(m.tensor([1.]), m.tensor([1.1]), rtol=0.2, atol=0),
    lambda m: m.testing.assert_close(m.tensor([1.]), m.tensor([1.1]), msg="custom"),
    lambda m: m.testing.assert_close(m.tensor([1.]), m.tensor([2.]), msg=lambda s: "X" + s),
    lambda m: m.testing.assert_close(m.tensor([[1., 2.], [3., 4.]]),
                                     m.tensor([[1., 2.], [3., 5.]])),
    lambda m: m.testing.assert_close(m.tensor([True]), m.tensor([False])),
    lambda m: m.testing.assert_close(m.tensor([1.], dtype=m.bfloat16),
                                     m.tensor([1.01], dtype=m.bfloat16)),
    lambda m: m.testing.assert_close("a", "b"),
    lambda m: m.testing.assert_close(m.tensor([1. + 1j]), m.tensor([1. + 2j])),
    lambda m: m.testing.assert_close(m.tensor([0.]), m.tensor([1e-3])),
    lambda m: m.testing.assert_close(None, None),
    lambda m: m.testing.assert_close(m.tensor([1.0]), m.nn.Parameter(m.tensor([1.0]))),
    lambda m: m.testing.assert_close(m.tensor([1., 5., 2.]), m.tensor([2., 1., 2.]),
                                     rtol=0, atol=0),
    lambda m: m.testing.assert_close(m.tensor([1.], dtype=m.float16),
                                     m.tensor([1.001], dtype=m.float16)),
    lambda m: m.testing.assert_close({"a": 1}, {"b": 1}),
    lambda m: m.testing.assert_close([[m.tensor([1.])]], [[m.tensor([3.])]]),
    lambda m: m.testing.assert_close(m.ones(2, 2).t(), m.ones(2, 2), check_stride=True),
    lambda m: m.testing.assert_close(m.ones(2, 2).t(), m.ones(2, 2)),
    lambda m: m.testing.assert_close(m.ones(2, 2)[:, :1], m.ones(2, 1), check_stride=True),
]


def _make_tensor(m, shape, **kw):
    try:
        t = m.testing.make_tensor(shape, **{"dtype": m.float32, "device": "cpu", **kw})
    except ValueError as e:
        return str(e)
    return (tuple(t.shape), str(t.dtype), t.stride(), t.is_contiguous(), t.requires_grad,
            bool(((t >= kw.get("low", -9)) & (t <= kw.get("high", 10))).all()))


MAKE_TENSOR_CASES = [
    ((2, 3), {}), ((4, 4), {"noncontiguous": True}), ((1,), {"noncontiguous": True}),
    ((2, 3, 4, 5), {"memory_format": "channels_last"}), ((3,), {"low": 3, "high": 1}),
    ((3,), {"low": float("nan")}), ((5,), {"dtype": "int64", "low": 0, "high": 3}),
    ((2,), {"dtype": "int64", "requires_grad": True}), ((2,), {"requires_grad": True}),
    ((2, 3), {"noncontiguous": True, "memory_format": "channels_last"}),
]


@pytest.mark.parametrize("shape,kw", MAKE_TENSOR_CASES, ids=[str(c) for c in MAKE_TENSOR_CASES])
def test_make_tensor_layouts_and_checks_as_torch(shape, kw):
    def run(m):
        k = {n: getattr(m, v) if n in ("dtype", "memory_format") else v for n, v in kw.items()}
        return _make_tensor(m, shape, **k)
    assert run(torchlike) == run(torch)


@pytest.mark.parametrize("i", range(len(CLOSE_CASES)))
def test_assert_close_matches_torch(i):
    same(CLOSE_CASES[i])


# ------------------------------------------------------------------ namespaces

NAMESPACES = ["cuda", "cuda.amp", "backends", "backends.cudnn", "backends.cuda", "jit", "amp",
              "amp.autocast_mode", "amp.grad_scaler", "accelerator", "mps", "cpu", "cpu.amp",
              "profiler", "testing", "onnx", "distributed", "multiprocessing", "hub", "types",
              "utils.checkpoint", "utils.benchmark", "utils.data", "utils.data.dataloader",
              "utils.data.dataset", "utils.data.sampler", "utils.data.distributed",
              "autograd.profiler"]


@pytest.mark.parametrize("name", NAMESPACES)
def test_namespace_imports(name):
    importlib.import_module("torchlike." + name)


def test_attribute_access_of_namespaces():
    for name in ("cuda", "backends", "jit", "amp", "autocast", "profiler", "testing",
                 "accelerator", "mps", "cpu"):
        assert getattr(torchlike, name) is not None
    assert torchlike.utils.checkpoint.checkpoint is not None
    assert torchlike.autocast is torchlike.amp.autocast


def _module_aliases(m):
    """torch's modules that name what the top level has (kornia annotates with
    ``torch.torch.Tensor``; ``from torch.storage import TypedStorage``)."""
    f = importlib.import_module(m.__name__ + ".functional")
    st = importlib.import_module(m.__name__ + ".storage")
    tv = importlib.import_module(m.__name__ + ".torch_version")
    return (m.torch is m, m.torch.Tensor is m.Tensor,
            sorted(f.__all__), [getattr(f, n) is getattr(m, n) for n in f.__all__],
            st.TypedStorage is m.TypedStorage, st.UntypedStorage is m.UntypedStorage,
            isinstance(m.ones(2).untyped_storage(), st.UntypedStorage),
            tv.TorchVersion is m.torch_version.TorchVersion, isinstance(m.__version__,
                                                                       tv.TorchVersion),
            tv.TorchVersion(tv.internal_version) >= "2.0")


def test_module_aliases_of_top_level_names():
    same(_module_aliases)


# ------------------------------------------------------------------ profiler

def _profile_run(m):
    from_sched = []
    P = m.profiler
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sch = P.schedule(wait=1, warmup=1, active=2, repeat=1)
    actions = [sch(i).name for i in range(8)]
    with P.profile(activities=[P.ProfilerActivity.CPU], schedule=sch,
                   on_trace_ready=lambda p: from_sched.append(p.step_num)) as p:
        for _ in range(6):
            with P.record_function("region"):
                with P.record_function("inner"):
                    m.ones(2) * 2
            p.step()
    keys = {e.key: e.count for e in p.key_averages() if not e.key.startswith("aten::")}
    with P.profile() as p2:
        with P.record_function("a"):
            pass
        P.record_function("b")(lambda: None)()
    keys2 = {e.key: e.count for e in p2.key_averages() if not e.key.startswith("aten::")}
    with m.autograd.profiler.profile() as p3:
        with m.autograd.profiler.record_function("legacy"):
            m.ones(1) + 1
    keys3 = {e.key: e.count for e in p3.key_averages() if not e.key.startswith("aten::")}
    return actions, from_sched, p.step_num, keys, keys2, keys3, \
        sorted(P.ProfilerActivity.__members__)


def test_profiler_matches_torch(tmp_path):
    assert _profile_run(torchlike) == _profile_run(torch)
    with torchlike.profiler.profile() as p:
        with torchlike.profiler.record_function("region"):
            pass
    table = p.key_averages().table(sort_by="cpu_time_total", row_limit=5)
    assert "region" in table and "Self CPU time total" in table
    path = tmp_path / "trace.json"
    p.export_chrome_trace(str(path))
    import json
    assert [e["name"] for e in json.load(open(path))["traceEvents"]] == ["region"]
    with pytest.raises(AssertionError, match="Invalid profiler schedule arguments"):
        torchlike.profiler.schedule(wait=0, warmup=0, active=0)


# ------------------------------------------------------------------ benchmark

def test_benchmark_timer_measurement():
    import torch.utils.benchmark  # noqa: F401
    for m in (torchlike, torch):
        t = m.utils.benchmark.Timer("x * 2", globals={"x": m.ones(4)}, label="mul")
        r = t.timeit(20)
        assert r.number_per_run == 20 and len(r.times) == 1 and r.mean > 0
        assert r.median == r.mean and r.title == "mul"
        b = t.blocked_autorange(min_run_time=0.01)
        # (its repr scales the unit to the time measured: ns, us, ms or s)
        assert len(b.times) >= 1 and b.median > 0 and "mul" in repr(b)
        assert any(f" {u}" in repr(b) for u in ("ns", "us", "ms", "s")), repr(b)


# ------------------------------------------------------------------ multiprocessing

def test_multiprocessing_names_and_spawn():
    tmp = torchlike.multiprocessing
    # (torchlike imposes no start method of its own)
    assert tmp.get_start_method(allow_none=True) is tmp.multiprocessing.get_start_method(
        allow_none=True)
    assert tmp.get_all_sharing_strategies() == torch.multiprocessing.get_all_sharing_strategies()
    assert tmp.get_sharing_strategy() == torch.multiprocessing.get_sharing_strategy()
    assert tmp.Process is not None and tmp.Queue is not None
    assert tmp.spawn(print, args=(), nprocs=1) is None
    with pytest.raises(tmp.ProcessRaisedException, match="TypeError"):
        tmp.spawn(int, args=("x",), nprocs=1)


def test_share_memory_warns_that_processes_get_copies():
    """DIFFERENCES.md: a tensor cannot be put in shared memory; share_memory_ says so."""
    x = torchlike.ones(2)
    with pytest.warns(UserWarning, match="Hogwild training"):
        assert x.share_memory_() is x
    assert not x.is_shared()


# ------------------------------------------------------------------ hub, onnx

def test_hub_offline_and_cache(tmp_path):
    with pytest.raises(RuntimeError, match="does not download"):
        torchlike.hub.load("pytorch/vision", "resnet18")
    with pytest.raises(RuntimeError, match="not in the hub cache"):
        torchlike.hub.load_state_dict_from_url("https://x/y/w.pth", model_dir=str(tmp_path))
    torch.save({"w": torch.ones(2)}, tmp_path / "w.pth")
    sd = torchlike.hub.load_state_dict_from_url("https://x/y/w.pth", model_dir=str(tmp_path))
    assert sd["w"].tolist() == [1.0, 1.0]
    assert torchlike.hub.get_dir().endswith("hub")
    (tmp_path / "hubconf.py").write_text("def seven(k=0):\n    return 7 + k\n")
    assert torchlike.hub.load(str(tmp_path), "seven", source="local", k=1) == 8


def test_hub_module_constants_are_torchs(monkeypatch, tmp_path):
    """Libraries import torch.hub's constants (timm: ``from torch.hub import HASH_REGEX``) and
    its private ``_get_torch_home``."""
    for name in ("HASH_REGEX", "ENV_GITHUB_TOKEN", "ENV_TORCH_HOME", "ENV_XDG_CACHE_HOME",
                 "DEFAULT_CACHE_DIR", "VAR_DEPENDENCY", "MODULE_HUBCONF", "READ_DATA_CHUNK"):
        assert getattr(torchlike.hub, name) == getattr(torch.hub, name), name
    match = torchlike.hub.HASH_REGEX.search("resnet18-f37072fd.pth")
    assert match.group(1) == torch.hub.HASH_REGEX.search("resnet18-f37072fd.pth").group(1)
    monkeypatch.delenv("TORCH_HOME", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert torchlike.hub._get_torch_home() == torch.hub._get_torch_home()
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert torchlike.hub._get_torch_home() == torch.hub._get_torch_home()
    assert torchlike.hub.get_dir() == torch.hub.get_dir()


def test_onnx():
    assert torchlike.onnx.is_in_onnx_export() is torch.onnx.is_in_onnx_export() is False
    with pytest.raises(NotImplementedError, match="jax.export"):
        torchlike.onnx.export(torchlike.nn.Linear(2, 2), (torchlike.ones(1, 2),), "m.onnx")


# ------------------------------------------------------------------ distributed

def _dist_run(m, port, monkeypatch):
    d = m.distributed
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(k, raising=False)
    out = [d.is_available(), d.is_initialized(), outcome(lambda _: d.init_process_group("gloo"),
                                                         m)[:2],
           outcome(lambda _: d.get_rank(), m)[:3], outcome(lambda _: d.barrier(), m)[:3]]
    d.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=0, world_size=1)
    try:
        t = m.tensor([1.0, 2.0])
        d.all_reduce(t)
        g = [m.zeros(2)]
        d.all_gather(g, m.tensor([3.0, 4.0]))
        d.broadcast(t, 0)
        d.barrier()
        out += [d.is_initialized(), d.get_rank(), d.get_world_size(), d.get_backend(),
                t.tolist(), g[0].tolist(), d.is_nccl_available(), d.is_gloo_available(),
                repr(d.ReduceOp.SUM),
                outcome(lambda _: d.init_process_group("gloo", init_method=f"tcp://127.0.0.1:"
                                                       f"{port + 1}", rank=0, world_size=1),
                        m)[:3]]
    finally:
        d.destroy_process_group()
    out += [d.is_initialized(), outcome(lambda _: d.destroy_process_group(), m)[:3]]
    return out


def test_distributed_single_process_matches_gloo(monkeypatch):
    import socket

    def free_port():        # one the OS has free now (a random one can be taken)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]
    assert (_dist_run(torchlike, free_port(), monkeypatch)
            == _dist_run(torch, free_port(), monkeypatch))
    # a world of more processes is the jax job joined at import (tests/test_distributed.py)
    with pytest.raises(RuntimeError, match="did not join a jax.distributed job"):
        torchlike.distributed.init_process_group("gloo", init_method="tcp://127.0.0.1:1",
                                                 rank=0, world_size=2)
