"""torchlike's public namespaces diffed against torch 2.13's, both ways.

``tests/surface/torch_names.json`` holds torch's public names per namespace (regenerate with
``python tests/surface/generate.py``). Every torch name must exist in torchlike, be a backend
internal (``INTERNAL``: TorchScript's IR types, cuDNN/MIOpen/MKLDNN/FBGEMM entry points,
quantization, sparse layouts, symbolic shapes), or be listed in ``tests/surface/not_yet.py``
with a one-line reason; a listed name that now exists must leave the list. Coverage per
namespace is printed by ``python tests/test_surface.py``.
"""
from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import sys
import types

import pytest

import torchlike

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "surface"))
from not_yet import NOT_YET  # noqa: E402

DATA = json.load(open(os.path.join(HERE, "surface", "torch_names.json")))
TORCH = DATA["names"]

# torch names that are backend internals, not API a torch program calls (pattern, reason)
INTERNAL = [
    (r"^(cudnn|miopen|mkldnn|fbgemm|native)_", "backend kernel entry point"),
    (r"^(quantize|quantized|dequantize|fake_quantize|q_|int_repr|qscheme|choose_qparams)",
     "quantization"),
    (r"^(qint|quint|bits|float8_|float4_|uint[1-7]$|int[1-7]$|complex32$)",
     "dtype with no jax/XLA counterpart here"),
    (r"^per_(channel|tensor)", "quantization scheme"),
    (r"^(sparse_|to_sparse|sparse|coalesce|is_coalesced|indices$|values$|crow_|col_|row_|ccol_|"
     r"dense_dim|_nnz|smm|hsmm|dsmm|sspaddmm|saddmm|spmm|hspmm|is_sparse)", "sparse layouts"),
    (r"^(indices|values)_copy$", "sparse layouts (their view-copy variants)"),
    (r"^(batch_norm_(backward|elemt|gather|stats|update)|grid_sampler|affine_grid_generator|"
     r"fused_moving_avg|empty_quantized|get_file_path|thread_safe_generator)",
     "aten kernels behind nn.functional / SyncBatchNorm, quantization, build info"),
    (r"^(ModuleDict|ParameterDict|BufferDict)$", "TorchScript's containers (nn has the modules)"),
    (r"^(handle_torch_function|has_torch_function.*|BroadcastingList\d|boolean_dispatch|"
     r"assert_int_or_pair|.*_notes|is_tensor_like|enforce_grad_layout_policy|"
     r"is_view_replay_enabled|kineto_available)$",
     "__torch_function__ protocol, TorchScript helpers, docstrings"),
    (r"^(common_args|factory_common_args|multi_dim_common|OpaqueBase|"
     r"get_swap_module_params_on_conversion|is_opaque_reference_type|"
     r"is_traceable_wrapper_subclass)$",
     "docstring fragments and tensor-subclass dispatch internals re-exported by torch"),
    (r"^sym_|^Sym", "symbolic shapes (torch.fx/dynamo)"),
    (r"(Type|Storage|StorageBase)$|^Script|^(Graph|Block|Node|Value|Use|Code|Argument|"
     r"ArgumentSpec|CompleteArgumentSpec|FunctionSchema|AliasDb|CompilationUnit|"
     r"ConcreteModuleType|ConcreteModuleTypeBuilder|ErrorReport|ExecutionPlan|FileCheck|"
     r"Gradient|GraphExecutorState|IODescriptor|LiteScriptModule|LockingLogger|LoggerBase|"
     r"NoopLogger|AggregationType|StaticModule|ThroughputBenchmark|TracingState|"
     r"BenchmarkConfig|BenchmarkExecutionStats|DeepCopyMemoTable|"
     r"DeserializationStorageContext|SerializationStorageContext|PyTorchFileReader|"
     r"PyTorchFileWriter|ScriptModuleSerializer|DispatchKey|DispatchKeySet|"
     r"ExcludeDispatchKeyGuard|OperatorInfo|PRIVATE_OPS|Tag|Capsule|CallStack|"
     r"DisableTorchFunction|DisableTorchFunctionSubclass|InferredType|JITException|"
     r"TYPE_CHECKING|USE_GLOBAL_DEPS|USE_RTLD_GLOBAL_WITH_LIBTORCH|AVG|SUM|"
     r"parse_ir|parse_schema|parse_type_comment|import_ir_module|"
     r"import_ir_module_from_buffer|merge_type_from_type_comment|unify_type_list|fork|wait|"
     r"compiled_with_cxx11_abi|classproperty|"
     r"is_vulkan_available|has_lapack|has_mkl|has_openmp|has_spectral|"
     r"autocast_decrement_nesting|autocast_increment_nesting|"
     r"profiler_allow_cudagraph_cupti_lazy_reinit_cuda12|"
     r"prepare_multiprocessing_environment|init_num_threads|segment_reduce|conv_tbc|"
     r"mkldnn_.*|to_mkldnn|is_mkldnn|is_vulkan|is_ipu|ipu|is_xpu|xpu|is_mtia|mtia|is_maia|"
     r"is_quantized|is_nested|to_padded_tensor|module_load|map2_|map_|reinforce|volatile|"
     r"record_stream|is_shared|share_memory_|storage|storage_type|untyped_storage|"
     r"is_set_to|set_|data_ptr|const_data_ptr|as_subclass|name|grad_dtype)$",
     "TorchScript / dispatcher / storage internals"),
]


def _internal(name):
    for pat, _ in INTERNAL:
        if re.search(pat, name):
            return True
    return False


def _resolve(ns):
    if ns == "torch.Tensor":
        return torchlike.Tensor
    try:
        return importlib.import_module(ns.replace("torch", "torchlike", 1))
    except ImportError:
        return None


def _has(obj, name):
    try:
        return obj is not None and hasattr(obj, name)
    except Exception:
        return False


def _counted(ns, names):
    """The names coverage counts: not internals; at the top level, not ``torch.abs_`` forms."""
    out = [n for n in names if not _internal(n)]
    if ns == "torch":
        out = [n for n in out if not n.endswith("_")]
    return out


def coverage():
    rows = {}
    for ns, names in TORCH.items():
        obj = _resolve(ns)
        names = _counted(ns, names)
        have = [n for n in names if _has(obj, n)]
        rows[ns] = (len(have), len(names))
    return rows


@pytest.mark.parametrize("ns", sorted(TORCH))
def test_every_torch_name_is_present_or_listed(ns):
    obj = _resolve(ns)
    listed = NOT_YET.get(ns, {})
    missing = [n for n in TORCH[ns] if not _internal(n) and not _has(obj, n) and n not in listed]
    assert not missing, f"{ns}: missing and not listed in tests/surface/not_yet.py: {missing}"


@pytest.mark.parametrize("ns", sorted(NOT_YET))
def test_not_yet_list_is_current(ns):
    obj = _resolve(ns)
    present = [n for n in NOT_YET[ns] if _has(obj, n)]
    assert not present, f"{ns}: now implemented, remove from tests/surface/not_yet.py: {present}"
    reasons = [n for n, why in NOT_YET[ns].items() if not why.strip()]
    assert not reasons, f"{ns}: entries without a reason: {reasons}"


# namespaces the renovation issue sets at >= 90 %
@pytest.mark.parametrize("ns", ["torch", "torch.Tensor", "torch.nn", "torch.nn.functional",
                                "torch.linalg"])
def test_core_namespace_coverage(ns):
    have, total = coverage()[ns]
    assert have / total >= 0.90, f"{ns}: {have}/{total}"


def test_names_small_model_code_uses():
    t = torchlike
    for n in ["softmax", "log_softmax", "dropout", "layer_norm", "conv2d", "embedding", "pi",
              "inf", "nan", "e", "LongTensor", "FloatTensor", "channels_last",
              "contiguous_format", "preserve_format", "relu_", "sigmoid", "tanh"]:
        assert _has(t, n), n
    x = t.ones(2, 3)
    for m in ["softmax", "log_softmax", "relu", "sigmoid", "tanh"]:
        assert _has(x, m), m


def test_no_private_module_leaks():
    allowed = {m.replace("torch.", "", 1).split(".")[0] for m in TORCH} | {
        "nn", "optim", "utils", "autograd", "linalg", "random", "serialization", "fft",
        "special", "distributions", "func", "interop", "cuda", "backends", "jit", "amp",
        "testing", "profiler", "compiler", "accelerator", "mps", "cpu", "onnx", "distributed",
        "multiprocessing", "hub", "types", "overrides", "library", "version", "eager",
        "return_types", "fx", "sparse", "futures", "functional", "storage", "torch_version",
        "pytest_plugin"}    # (torchlike's own: ``pytest -p torchlike.pytest_plugin``)
    leaked = []
    for n, v in vars(torchlike).items():
        if n.startswith("_") or not isinstance(v, types.ModuleType):
            continue
        if n not in allowed:
            leaked.append(n)
    assert not leaked, f"modules in torchlike's public namespace: {leaked}"
    for n in ("jax", "jnp", "np", "numpy", "functools", "importlib", "warnings", "math"):
        assert n not in vars(torchlike) or n in TORCH["torch"], n


def test_out_is_accepted_wherever_torch_takes_it():
    bad = []
    for ns, names in DATA["out"].items():
        obj = _resolve(ns)
        for n in names:
            f = getattr(obj, n, None) if obj is not None else None
            if f is None or _internal(n):
                continue
            if not getattr(f, "_handles_out", False):
                try:
                    params = inspect.signature(f).parameters
                except (TypeError, ValueError):
                    params = {}
                if "out" not in params:
                    bad.append(f"{ns}.{n}")
    assert not bad, f"functions that take out= in torch but not here: {bad}"


if __name__ == "__main__":
    for ns, (have, total) in coverage().items():
        print(f"{ns:36s} {have:4d}/{total:<4d} {100 * have / max(total, 1):5.1f}%")


# ------------------------------------------------------------------ the surface's declarations

def test_every_declared_name_is_bound_once():
    """Each family declares its surface at the definition; ``bind`` writes each name once."""
    from torchlike._ops import _surface
    decl = _surface.declared()
    keys = [(owner, name) for owner, name, _where in decl]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    assert not twice, twice
    owners = {"Tensor": torchlike.Tensor, "torch": torchlike}
    unbound = [f"{o}.{n}" for o, n in keys if not hasattr(owners[o], n)]
    assert not unbound, unbound
    assert len(keys) > 500      # the declarations are what binds the methods, not a fallback


def test_bind_refuses_a_name_declared_twice(monkeypatch):
    from torchlike._ops import _surface

    class T:
        pass

    ns = types.SimpleNamespace()
    monkeypatch.setattr(_surface, "_DECLARED", [("Tensor", "twice", len, "a"),
                                                ("Tensor", "twice", abs, "b")])
    with pytest.raises(RuntimeError, match="Tensor.twice is declared twice: in a and in b"):
        _surface._write_declared(ns, T)


def test_out_wraps_the_family_function_itself():
    """``torchlike.add`` is the family's ``add``: an internal caller's ``out=`` is honoured, and
    no function with ``out=`` has an ``out`` parameter it ignores."""
    from torchlike._ops import arithmetic
    assert torchlike.add is arithmetic.add
    x = torchlike.ones(3)
    out = torchlike.empty(3)
    assert arithmetic.add(x, x, out=out) is out
    assert out.tolist() == [2.0, 2.0, 2.0]
    for n, f in vars(torchlike).items():
        if not getattr(f, "_handles_out", False):
            continue
        inner = f.__wrapped__
        mod = importlib.import_module(inner.__module__)
        if inner.__module__.startswith("torchlike._ops") and n in vars(mod):
            assert vars(mod)[n] is f, n
        assert "out" not in inspect.signature(inner).parameters, n


def test_nothing_but_bind_writes_onto_tensor():
    """``bind`` is the one writer of Tensor's attributes (the class body aside)."""
    root = os.path.join(os.path.dirname(HERE), "torchlike")
    pat = re.compile(r"setattr\(Tensor|^\s*Tensor\.[A-Za-z_]+ *=", re.M)
    found = []
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            path = os.path.join(dirpath, f)
            if not f.endswith(".py") or path.endswith(os.path.join("_ops", "_surface.py")):
                continue
            if path.endswith(os.sep + "_tensor.py"):
                continue
            found += [f"{os.path.relpath(path, root)}: {m.group(0)}"
                      for m in pat.finditer(open(path, encoding="utf-8").read())]
    assert not found, found


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "min", "amax", "any", "all",
                                  "std", "var", "cumsum", "sort", "argmax", "median", "norm",
                                  "logsumexp", "topk", "kthvalue", "nansum"])
def test_tensor_methods_take_no_out(name):
    """torch's Tensor methods take no ``out=`` (its functions do): a method call with one
    raises TypeError, so numpy's ``np.sum(t)`` (which passes ``out=None``) raises as torch's
    does instead of computing."""
    import numpy as np
    import torch

    args = {"cumsum": (0,), "logsumexp": (0,), "topk": (1,), "kthvalue": (1,)}.get(name, ())
    for m in (torch, torchlike):
        with pytest.raises(TypeError):
            getattr(m.ones(2, 2), name)(*args, out=None)
    for f in (np.sum, np.mean, np.max, np.any, np.prod):
        with pytest.raises(TypeError):
            f(torch.ones(2))
        with pytest.raises(TypeError):
            f(torchlike.ones(2))
