"""The private torch namespaces libraries and test suites import: torch.utils._pytree (torch's
signatures and flattening order), torch._dynamo (reset, config, ...) and torch._logging."""
from __future__ import annotations

import collections
import importlib

import pytest
import torch
import torch.utils._pytree as tp

import torchlike
import torchlike.utils._pytree as lp

Point = collections.namedtuple("Point", "x y")

TREES = [
    1, None, [], (), {}, [1, (2, 3), {"b": 4, "a": [5, None]}],
    {"z": 1, "a": (2, 3)}, collections.OrderedDict(b=1, a=2), Point(1, (2, 3)),
    collections.deque([1, 2], maxlen=3), collections.defaultdict(list, {"k": [1, 2]}),
    ((((1,),),),), [[], [[]], {"e": ()}],
]


@pytest.mark.parametrize("tree", TREES, ids=repr)
def test_flatten_unflatten_map_as_torch(tree):
    tl, ts = tp.tree_flatten(tree)
    ll, ls = lp.tree_flatten(tree)
    assert ll == tl
    assert ls.num_leaves == ts.num_leaves
    assert lp.tree_unflatten([f"v{i}" for i in range(len(ll))], ls) == \
        tp.tree_unflatten([f"v{i}" for i in range(len(tl))], ts)
    f = lambda x: (x, 1)  # noqa: E731
    assert lp.tree_map(f, tree) == tp.tree_map(f, tree)
    assert lp.tree_map_only(int, lambda x: x * 10, tree) == \
        tp.tree_map_only(int, lambda x: x * 10, tree)
    assert lp.tree_leaves(tree) == tp.tree_leaves(tree)
    assert lp.tree_all(lambda x: x is not None, tree) == tp.tree_all(lambda x: x is not None, tree)
    assert lp.tree_any(lambda x: x == 2, tree) == tp.tree_any(lambda x: x == 2, tree)
    assert lp.tree_structure(tree) == ls


def test_tensors_are_leaves_and_is_leaf_and_rests():
    x = torchlike.ones(2)
    leaves, spec = lp.tree_flatten({"w": x, "b": [x, 3]})
    assert leaves[0] is x and leaves[1] is x and leaves[2] == 3
    assert lp.tree_map(lambda a, b: a + b, [1, (2,)], [10, (20,)]) == [11, (22,)]
    assert lp.tree_flatten([[1, 2], [3]], is_leaf=lambda n: isinstance(n, list) and len(n) == 1)[0] \
        == tp.tree_flatten([[1, 2], [3]], is_leaf=lambda n: isinstance(n, list) and len(n) == 1)[0]
    assert lp.tree_map_only((torchlike.Tensor,), lambda t: t * 2, [x, 1])[0].tolist() == [2, 2]


def test_register_pytree_node_and_errors():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    for m in (tp, lp):
        m.register_pytree_node(Pair, lambda p: ([p.a, p.b], None), lambda c, _: Pair(*c))
        leaves, spec = m.tree_flatten([Pair(1, 2)])
        assert leaves == [1, 2] and m.tree_unflatten([3, 4], spec)[0].b == 4
        with pytest.raises(ValueError, match="already registered"):
            m.register_pytree_node(Pair, lambda p: ([], None), lambda c, _: Pair(0, 0))
        with pytest.raises(ValueError):
            m.tree_unflatten([1], spec)
        with pytest.raises(TypeError):
            m.tree_unflatten([1], None)


def test_dynamo_and_logging_names():
    import logging

    import torchlike._dynamo as dyn
    import torchlike._logging as lg
    for name in ("reset", "config", "is_compiling", "disable", "allow_in_graph", "mark_dynamic",
                 "mark_static"):
        assert hasattr(torch._dynamo, name) and hasattr(dyn, name)
    dyn.config.cache_size_limit = 64
    assert dyn.config.cache_size_limit == 64
    assert dyn.config.suppress_errors is torch._dynamo.config.suppress_errors
    dyn.reset()
    assert dyn.is_compiling() is False
    lg.set_logs(dynamo=logging.INFO, graph_breaks=True)
    f = dyn.disable(lambda a: a + 1)
    assert f(1) == 2
    assert torchlike._dynamo is dyn and torchlike._logging is lg


def _c_story(m):
    class Plain(m.Tensor):
        __torch_function__ = m._C._disabled_torch_function_impl

    t = m.ones(2)
    s = t.as_subclass(Plain)
    import importlib
    dyn = importlib.import_module(m.__name__ + "._dynamo")
    const = importlib.import_module(m.__name__ + ".distributed.constants")
    return [m._C._log_api_usage_once("torchmetrics.metric.Accuracy"),
            m._C._get_tracing_state(), isinstance(t, m._C.TensorBase),
            isinstance(t, m._C._TensorBase), (s + 1).tolist(), type(m._C.Generator()).__name__,
            isinstance(m.Tensor, m._C._TensorMeta), m._C._nn._parse_to("cpu")[:2],
            m._C._nn._parse_to(t.to(m.float64), non_blocking=True)[1:],
            m._C._nn._parse_to(dtype=m.int32, memory_format=m.channels_last)[1:],
            isinstance(m.compile(m.nn.Linear(2, 2)), dyn.OptimizedModule),
            isinstance(m.nn.Linear(2, 2), dyn.OptimizedModule), const.default_pg_timeout,
            isinstance(m.nn.Linear(2, 2), m.ScriptModule),
            _transforms_active(m)]


def _assert_async_outcomes(m):
    out = []
    for args in [(m.tensor(False),), (m.tensor(False), "my msg"), (m.tensor([1, 1]),),
                 (m.tensor(0.),), (m.tensor(2),), (m.tensor([True]),), (m.tensor([]),),
                 (m.tensor(1.5), "unused")]:
        try:
            out.append(m._assert_async(*args))
        except RuntimeError as e:
            out.append(str(e))
    return out


def test_assert_async_as_torch():
    """``torch._assert_async(cond[, msg])`` (kornia's value checks): torch's CPU kernel raises
    at once."""
    assert _assert_async_outcomes(torchlike) == _assert_async_outcomes(torch)


def _transforms_active(m):
    """kornia's check: ``_are_functorch_transforms_active`` outside and inside transforms."""
    import importlib
    F = importlib.import_module(m.__name__ + ".func")
    seen = []

    def f(x):
        seen.append((m._C._are_functorch_transforms_active(),
                     m._C._functorch.is_functorch_wrapped_tensor(x),
                     m._C._functorch.is_functorch_wrapped_tensor(x * 2),
                     m._C._functorch.is_functorch_wrapped_tensor(m.ones(2)),
                     m._C._len_torch_dispatch_stack()))
        return (x * x).sum()

    f(m.ones(2))
    F.vmap(f)(m.ones(3, 2))
    F.grad(f)(m.ones(2))
    F.jacrev(f)(m.ones(2))
    return seen, m._C._are_functorch_transforms_active()


def test_torch_C_names_libraries_call():
    """The few names of torch's C extension that libraries call from Python (torchmetrics'
    API-usage logging at every metric's construction, the tracing-state check, a subclass
    opting out of ``__torch_function__``, ``TensorBase``, Lightning's ``_TensorMeta`` and
    ``_nn._parse_to``), and the names Lightning imports beside them (``_dynamo.OptimizedModule``,
    ``distributed.constants``, ``torch.ScriptModule``) behave as torch's; torchmetrics failed on
    its first metric, Lightning at import. Any other ``_C`` name is an AttributeError saying
    torchlike has no C extension."""
    def norm(xs):
        return [repr(x).replace("torchlike", "torch") for x in xs]
    assert norm(_c_story(torchlike)) == norm(_c_story(torch))
    with pytest.raises(AttributeError, match="C\\+\\+ extension"):
        torchlike._C._cuda_getDeviceCount


_LIBRARY_PLUMBING = r'''
import json, os, sys
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=sys.argv[2])
if sys.argv[1] == "torch":
    import torch
else:
    import torchlike as torch
import importlib
fc = importlib.import_module(torch.__name__ + ".distributed._functional_collectives")
comp = importlib.import_module(torch.__name__ + ".distributed._composable.fsdp")
fsdp = importlib.import_module(torch.__name__ + ".distributed.fsdp")
tw = importlib.import_module(torch.__name__ + "._dynamo._trace_wrapped_higher_order_op")
dist = torch.distributed
dist.init_process_group("gloo", rank=0, world_size=1)
x = torch.arange(6.).reshape(2, 3)
out = [fc.wait_tensor(x).tolist(), fc.all_reduce(x, "sum", dist.group.WORLD).tolist(),
       fc.all_gather_tensor(x, 1, dist.group.WORLD).tolist(),
       fc.reduce_scatter_tensor(x, "sum", 0, dist.group.WORLD).tolist(),
       fc.all_to_all_single(x, None, None, dist.group.WORLD).tolist(),
       comp.fully_shard is fsdp.fully_shard,
       isinstance(torch.nn.Linear(2, 2), fsdp.FullyShardedDataParallel)]
with tw.TransformGetItemToIndex():
    out.append(x[torch.tensor([1, 0])].tolist())
join = importlib.import_module(torch.__name__ + ".distributed.algorithms.join")
lin = torch.nn.Linear(3, 1)
with torch.no_grad():
    lin.weight.copy_(torch.tensor([[0.5, -1.0, 0.25]]))
    lin.bias.fill_(0.1)
model = torch.nn.parallel.DistributedDataParallel(lin)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
with join.Join([model]):
    for i in range(2):
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
        out.append(round(loss.item(), 3))
out.append(issubclass(type(join.JoinHook()), object))
dist.destroy_process_group()
print(json.dumps(out))
'''


def test_distributed_and_dynamo_plumbing_libraries_import(tmp_path):
    """What transformers and accelerate import at import time and call on a plain model: the
    functional collectives (``wait_tensor`` and the collectives that return their result), the
    composable FSDP path, FSDP1's class (for ``isinstance``), flex attention's
    ``TransformGetItemToIndex`` mode, ``distributed.algorithms.join.Join`` (a no-op in a job of
    one process); as torch's on a one-process gloo group. transformers' GPT-2 and accelerate
    failed to import on the first of them."""
    import json
    import socket
    import subprocess
    import sys
    script = tmp_path / "plumbing.py"
    script.write_text(_LIBRARY_PLUMBING)
    outs = []
    for lib in ("torch", "torchlike"):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = str(s.getsockname()[1])
        r = subprocess.run([sys.executable, str(script), lib, port], capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        outs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    assert outs[0] == outs[1]


def _compiler_story(m):
    calls = []

    def inner(x):
        calls.append("inner")
        return x * 2

    @m.compiler.disable(recursive=False)
    def outer(x):
        return inner(x) + 1

    const = m._dynamo.assume_constant_result(lambda: 3)
    f = m.compile(lambda x: outer(x) * const())
    x = m.arange(3.)
    return [outer(x).tolist(), f(x).tolist(), f(x).tolist(), const()]


def test_compiler_disable_non_recursive_and_assume_constant_result():
    """``torch.compiler.disable(recursive=False)`` (transformers decorates flex attention's
    wrapper with it at import) and ``assume_constant_result`` (a decorator, also at import)
    work as torch's: both raised NotImplementedError when applied."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _compiler_story(torchlike) == _compiler_story(torch)


def test_fx_names_exist_and_tracing_raises():
    """``torch.fx``'s classes exist for the code that names them (transformers'
    ``isinstance(x, torch.fx.Proxy)``, Lightning's ``-> torch.fx.GraphModule`` annotation, which
    failed at class definition), and nothing is an instance of them, as nothing is in an
    untraced torch program; tracing raises NotImplementedError."""
    import torchlike.fx as fx
    m = torchlike.nn.Linear(2, 2)
    assert [isinstance(m, fx.GraphModule), isinstance(torchlike.ones(1), fx.Proxy),
            issubclass(fx.GraphModule, torchlike.nn.Module)] == \
        [isinstance(torch.nn.Linear(2, 2), torch.fx.GraphModule),
         isinstance(torch.ones(1), torch.fx.Proxy), issubclass(torch.fx.GraphModule,
                                                                torch.nn.Module)]
    with pytest.raises(NotImplementedError, match="tracing is not provided"):
        fx.symbolic_trace(m)
    with pytest.raises(NotImplementedError, match="tracing is not provided"):
        fx.Graph()
    assert fx.wrap("len") == "len"


@pytest.mark.parametrize("kind", ["tuple", "list", "dict", "ordereddict", "defaultdict", "deque",
                                  "namedtuple"])
def test_builtin_container_functions_under_torchs_private_names(kind):
    """``_dict_flatten_with_keys`` and the other built-in containers' functions under torch's
    private names (transformers registers its ModelOutput with ``_dict_flatten_with_keys``;
    its models failed to import without it), with torch's results; ``PyTree`` names a tree's
    type."""
    tree = {"tuple": (1, 2), "list": [1, 2], "dict": {"b": 1, "a": 2},
            "ordereddict": collections.OrderedDict(b=1, a=2),
            "defaultdict": collections.defaultdict(list, {"k": 1}),
            "deque": collections.deque([1, 2], maxlen=3), "namedtuple": Point(1, 2)}[kind]
    for suffix in ("flatten", "flatten_with_keys"):
        ours = getattr(lp, f"_{kind}_{suffix}")(tree)
        theirs = getattr(tp, f"_{kind}_{suffix}")(tree)
        assert repr(ours) == repr(theirs)
    values, context = getattr(lp, f"_{kind}_flatten")(tree)
    back = getattr(lp, f"_{kind}_unflatten")(values, context)
    assert back == getattr(tp, f"_{kind}_unflatten")(values, context)
    assert type(back) is type(tree)
    assert lp.PyTree is tp.PyTree


def test_kineto_is_not_available():
    """DIFFERENCES.md: torchlike's profiler is its own (host wall times), so
    ``kineto_available()`` is False where torch's CPU build has Kineto."""
    assert torchlike.profiler.kineto_available() is False
    assert torch.profiler.kineto_available() is True


def _library_module_paths(m):
    """Module paths and names libraries import (accelerate's unwrap_model and Trainer, captum,
    performer/reformer, pytorch_optimizer), answered as torch's."""
    imp = importlib.import_module
    n = m.__name__
    ef = imp(n + "._dynamo.eval_frame")
    fsdp = imp(n + ".distributed.fsdp")
    fsdp_mod = imp(n + ".distributed.fsdp.fully_sharded_data_parallel")
    api = imp(n + ".distributed.fsdp.api")
    ckpt = imp(n + ".utils.checkpoint")
    fe = imp(n + ".utils._foreach_utils")
    a = [m.ones(1), m.ones(1, dtype=m.float64), m.ones(2)]
    b = [m.zeros(1), m.zeros(1, dtype=m.float64), None]
    groups = fe._group_tensors_by_device_and_dtype([a, b], with_indices=True)
    try:
        fe._group_tensors_by_device_and_dtype([a, [m.zeros(1, dtype=m.int64)] * 3])
        mixed = None
    except RuntimeError as e:
        mixed = str(e)
    return [isinstance(m.compile(m.nn.Linear(2, 2)), ef.OptimizedModule),
            ef.OptimizedModule is m._dynamo.OptimizedModule,
            fsdp_mod.FullyShardedDataParallel is fsdp.FullyShardedDataParallel,
            api.ShardingStrategy is fsdp.ShardingStrategy,
            m.Future is not None, repr(m.futures.Future[m.Tensor]).split(".")[-1],
            ckpt.get_device_states(m.ones(2), [m.ones(1)], 3),
            m.cuda._initialized, hasattr(m.utils, "tensorboard"),
            sorted((str(k[1]), [[None if t is None else t.tolist() for t in lst] for lst in v[0]],
                    v[1]) for k, v in groups.items()),
            mixed, fe._has_foreach_support(a, m.device("cpu")),
            fe._device_has_foreach_support(m.device("meta"))]


def test_module_paths_libraries_import_as_torch():
    assert _library_module_paths(torchlike) == _library_module_paths(torch)


def test_cpp_extension_imports_and_refuses_builds():
    """peft imports ``load`` at module level and falls back when a build raises."""
    from torchlike.utils import cpp_extension
    assert cpp_extension.CUDA_HOME is None and not cpp_extension.is_ninja_available()
    for build in (lambda: cpp_extension.load("x", ["x.cpp"]),
                  lambda: cpp_extension.load_inline("x", "int f();"),
                  lambda: cpp_extension.CppExtension("x", ["x.cpp"])):
        with pytest.raises(RuntimeError, match="no C\\+\\+ library to build extensions"):
            build()


def test_functorch_wrapped_counts_captured_tensors_inside_grad():
    """The documented difference: a captured tensor inside ``grad`` counts as wrapped in
    torchlike (its arrays carry no level to tell it apart), not in torch."""
    def seen(m):
        c = m.ones(2)
        out = []

        def f(x):
            out.append(m._C._functorch.is_functorch_wrapped_tensor(c))
            return (x * c).sum()
        m.func.grad(f)(m.ones(2))
        m.func.vmap(f)(m.ones(3, 2))
        return out
    assert seen(torch) == [False, False]
    assert seen(torchlike) == [True, False]
