"""Pieces of model and training programs (activation checkpointing, datasets and loaders,
...) run on torch and torchlike side by side: the same values and errors (class and message)."""
from __future__ import annotations

import copy
import importlib
import pickle

import numpy as np
import pytest
import torch

import torchlike
import nn_util
from oracle import same_as_torch

R = np.random.default_rng(11)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def det_init(model, seed=0, scale=0.1):
    return nn_util.det_init(model, seed, scale)


def sub(m, name):
    return importlib.import_module(f"{m.__name__}.{name}")


def leaves(x):
    """The leaves of nested tuples and lists, for a comparison leaf by leaf."""
    if isinstance(x, (tuple, list)):
        return [y for item in x for y in leaves(item)]
    return [x]


# ------------------------------------------------------------------ utils.checkpoint

@pytest.mark.parametrize("how", ["grad", "backward_inputs"])
def test_reentrant_checkpoint_refuses_a_backward_with_inputs(how):
    x0 = f32(4, 3)

    def fn(m):
        lin = det_init(m.nn.Linear(3, 2))
        x = m.tensor(x0, requires_grad=True)
        y = sub(m, "utils.checkpoint").checkpoint(lin, x, use_reentrant=True)
        if how == "grad":
            return m.autograd.grad(y.sum(), x)
        y.sum().backward(inputs=[x])
    same_as_torch(fn)


def test_reentrant_checkpoint_backward_and_non_reentrant_grad():
    x0 = f32(4, 3)

    def fn(m):
        ck = sub(m, "utils.checkpoint").checkpoint
        lin = det_init(m.nn.Sequential(m.nn.Linear(3, 5), m.nn.Tanh(), m.nn.Linear(5, 2)))
        x = m.tensor(x0, requires_grad=True)
        ck(lin, x, use_reentrant=True).pow(2).sum().backward()
        gx, gw = x.grad, lin[0].weight.grad
        g, = m.autograd.grad(ck(lin, x, use_reentrant=False).pow(2).sum(), x)
        return gx, gw, g
    same_as_torch(fn, atol=1e-6, rtol=1e-5)


# ------------------------------------------------------------------ utils.data

def _batched(m):
    class Batched(sub(m, "utils.data").Dataset):
        """A dataset read only in batches (``__getitem__`` refuses)."""

        def __len__(self):
            return 4

        def __getitem__(self, i):
            raise RuntimeError("read one at a time")

        def __getitems__(self, idx):
            return [i * 10 for i in idx]
    return Batched()


def test_stack_dataset_reads_nested_datasets_in_batches():
    def fn(m):
        D = sub(m, "utils.data")
        tup = D.StackDataset(_batched(m), m.arange(4.))
        named = D.StackDataset(a=_batched(m), b=[1, 2, 3, 4])
        return (tup.__getitems__([1, 3]), named.__getitems__([0, 2]),
                list(D.DataLoader(tup, batch_size=3)), list(D.DataLoader(named, batch_size=3)))
    assert [repr(x) for x in fn(torchlike)] == [repr(x) for x in fn(torch)]


def test_stack_dataset_nested_batch_of_the_wrong_size():
    class Short:
        def __len__(self):
            return 4

        def __getitems__(self, idx):
            return [0]
    same_as_torch(lambda m: sub(m, "utils.data").StackDataset(Short(), m.arange(4.))
                  .__getitems__([1, 3]))


def test_subset_subclass_overriding_only_getitem_is_refused():
    def fn(m):
        class Picked(sub(m, "utils.data").Subset):
            def __getitem__(self, i):
                return 1
        Picked(range(3), [0])
    same_as_torch(fn)


@pytest.mark.parametrize("call", [
    lambda D, m: D.TensorDataset(m.ones(3), m.ones(4)),
    lambda D, m: D.ConcatDataset([]),
    lambda D, m: list(D.ChainDataset([[1, 2]])),
], ids=["tensor_sizes", "concat_empty", "chain_map_style"])
def test_dataset_argument_errors(call):
    same_as_torch(lambda m: call(sub(m, "utils.data"), m))


# ------------------------------------------------------------------ nn.init

@pytest.mark.parametrize("kw", [dict(a=2, b=-2), dict(a=2.5, b=-2.0), dict(std=0.0),
                                dict(a=1, b=1)], ids=["reversed", "reversed_float", "std0", "point"])
def test_trunc_normal_bounds_like_torch(kw):
    same_as_torch(lambda m: m.nn.init.trunc_normal_(m.empty(4), **kw))


@pytest.mark.parametrize("kw", [dict(std=-1.0), dict(std=-0.5, a=0.0, b=3.0),
                                dict(mean=5.0)], ids=["neg_std", "neg_std_one_sided", "far_mean"])
def test_trunc_normal_moments_and_warning(kw):
    """A negative std draws as its absolute value (torch's sampler does); a mean far outside
    [a, b] warns."""
    import warnings
    stats = []
    for m in (torch, torchlike):
        m.manual_seed(0)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t = m.nn.init.trunc_normal_(m.empty(40000), **kw)
        stats.append((float(t.mean()), float(t.std()), [str(x.message) for x in w]))
        assert float(t.min()) >= kw.get("a", -2.0) and float(t.max()) <= kw.get("b", 2.0)
    (lm, ls, lw), (tm, ts, tw) = stats[1], stats[0]
    assert abs(lm - tm) < 0.02 and abs(ls - ts) < 0.02 and lw == tw


# ------------------------------------------------------------------ lazy modules

@pytest.mark.parametrize("call", [
    lambda m, p: p.numel(), lambda m, p: p.dim(), lambda m, p: p.sum(), lambda m, p: p.detach(),
    lambda m, p: p.view(-1), lambda m, p: p.shape, lambda m, p: p.share_memory_(),
    lambda m, p: (p.size(), str(p.dtype), p.requires_grad, p.is_floating_point(),
                  repr(p.float()), p.data.shape),
], ids=["numel", "dim", "sum", "detach", "view", "shape", "share_memory", "allowed"])
def test_uninitialized_parameter_refuses_use(call):
    same_as_torch(lambda m: call(m, m.nn.UninitializedParameter()))


def test_uninitialized_parameter_len_names_the_method():
    """torch names ``Tensor.__len__`` by its repr (with its address)."""
    def fn(m):
        try:
            len(m.nn.UninitializedParameter())
        except ValueError as e:
            return str(e).replace(repr(m.Tensor.__len__), "<__len__>")
    same_as_torch(fn)


@pytest.mark.parametrize("init", ["uniform_", "normal_", "constant_", "zeros_", "ones_",
                                  "kaiming_uniform_", "kaiming_normal_", "xavier_uniform_",
                                  "xavier_normal_", "eye_", "dirac_", "trunc_normal_",
                                  "orthogonal_", "sparse_"])
def test_initializers_refuse_an_uninitialized_parameter(init):
    """Each names what torch's initializer first touches (itself, a method, or the shape)."""
    args = {"constant_": (1.0,), "sparse_": (0.1,)}.get(init, ())

    def fn(m):
        fun = getattr(m.nn.init, init)
        try:
            fun(m.nn.UninitializedParameter(), *args)
        except ValueError as e:
            raise ValueError(str(e).replace(repr(fun), "<init>")) from None
    same_as_torch(fn)


@pytest.mark.parametrize("call", [
    lambda m: m.nn.utils.parameters_to_vector([m.nn.UninitializedParameter()]),
    lambda m: m.nn.utils.vector_to_parameters(m.ones(0), [m.nn.UninitializedParameter()]),
    lambda m: m.nn.utils.parameters_to_vector(
        m.nn.Conv2d(3, 4, 3).to(memory_format=m.channels_last).parameters()),
    lambda m: type(copy.deepcopy(m.nn.LazyLinear(2)).weight).__name__,
    lambda m: type(pickle.loads(pickle.dumps(m.nn.UninitializedBuffer()))).__name__,
    lambda m: type(copy.copy(m.nn.UninitializedParameter())).__name__,
], ids=["to_vector", "from_vector", "channels_last_to_vector", "deepcopy", "pickle", "copy"])
def test_uninitialized_parameters_in_nn_utils_and_copies(call):
    same_as_torch(call)


def test_deep_copy_of_a_lazy_batchnorm_raises():
    def fn(m):
        try:
            copy.deepcopy(m.nn.LazyBatchNorm1d())
        except ValueError as e:
            raise ValueError(str(e).replace(repr(m.Tensor.__deepcopy__), "<f>")) from None
    same_as_torch(fn)


def test_counting_a_lazy_models_parameters_raises_until_its_first_call():
    def fn(m):
        net = m.nn.Sequential(m.nn.LazyLinear(4), m.nn.ReLU(), m.nn.LazyLinear(2))
        try:
            sum(p.numel() for p in net.parameters())
        except ValueError as e:
            before = str(e)
        net(m.ones(3, 5))
        return before, sum(p.numel() for p in net.parameters())
    same_as_torch(fn)


def test_lazy_module_share_memory_and_materialize_with_a_live_data_alias():
    def fn(m):
        out = []
        try:
            m.nn.LazyLinear(3).share_memory()
        except RuntimeError as e:
            out.append(str(e))
        p = m.nn.UninitializedParameter()
        alias = p.data
        p.materialize((2, 3))
        return out, tuple(p.shape), type(p).__name__, tuple(alias.shape), p.requires_grad
    same_as_torch(fn)


@pytest.mark.parametrize("lengths", [
    lambda m: [m.tensor(1), m.tensor(3)], lambda m: m.tensor([1, 3]),
    lambda m: [m.tensor(0.25), m.tensor(0.75)], lambda m: [True, 3],
], ids=["tensor_items", "tensor", "tensor_fractions", "bool"])
def test_random_split_lengths_given_as_tensors(lengths):
    same_as_torch(lambda m: [len(s) for s in sub(m, "utils.data").random_split(
        range(4), lengths(m), generator=m.Generator().manual_seed(0))])


@pytest.mark.parametrize("call", [
    lambda D: D.Sampler(None),
    lambda D: type("S", (D.Sampler,), {"__init__": lambda self, d: super(type(self), self)
                                       .__init__(d)})([1]),
    lambda D: len(D.Sampler()),
], ids=["data_source", "subclass_passes_data_source", "len"])
def test_sampler_base_takes_no_arguments(call):
    same_as_torch(lambda m: call(sub(m, "utils.data")))


# ------------------------------------------------------------------ optimizers

def _sparse_embedding_steps(m, name, kw):
    e = det_init(m.nn.Embedding(5, 2, sparse=True))
    opt = getattr(m.optim, name)(e.parameters(), **kw)
    for idx in ([1, 2, 1], [0, 2]):
        opt.zero_grad()
        e(m.tensor(idx)).pow(2).sum().backward()
        opt.step()
    return e.weight.detach()


@pytest.mark.parametrize("name,kw", [
    ("Adam", {}), ("AdamW", {}), ("Adamax", {}), ("NAdam", {}), ("RAdam", {}), ("ASGD", {}),
    ("Rprop", {}), ("RMSprop", {}), ("Adadelta", {}), ("Adafactor", {}),
    ("SGD", dict(lr=0.1, weight_decay=0.1)), ("SGD", dict(lr=0.1, fused=True)),
    ("Adagrad", dict(weight_decay=0.1)), ("Adagrad", dict(fused=True)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.1)),
], ids=lambda v: v if isinstance(v, str) else "-".join(sorted(v)))
def test_optimizers_over_a_sparse_embeddings_gradient(name, kw):
    """torch's gradient of a weight looked up with sparse=True is sparse: most optimizers
    refuse it; SGD and Adagrad take it (the rows looked up move)."""
    same_as_torch(lambda m: _sparse_embedding_steps(m, name, kw), atol=1e-6, rtol=1e-5)


# ------------------------------------------------------------------ checkpoint recomputation

def _bn_block(m):
    return det_init(m.nn.Sequential(m.nn.Linear(3, 3), m.nn.BatchNorm1d(3)))


@pytest.mark.parametrize("reentrant", [True, False])
@pytest.mark.parametrize("program", ["once", "retained_twice", "two_regions", "two_outputs",
                                     "unused", "autograd_grad"])
def test_checkpoint_recomputation_updates_batchnorm_statistics_again(reentrant, program):
    """torch recomputes a checkpointed region when a backward first needs it (either
    variant): BatchNorm's running statistics move a second time."""
    x0 = f32(4, 3)

    def fn(m):
        ck = sub(m, "utils.checkpoint").checkpoint
        net = _bn_block(m)
        x = m.tensor(x0, requires_grad=True)
        if program == "two_outputs":
            a, b = ck(lambda t: (net(t), net(t * 2)), x, use_reentrant=reentrant)
            (a.sum() * b.sum()).backward()
        elif program == "two_regions":
            (ck(net, x, use_reentrant=reentrant).sum()
             + ck(net, x * 2, use_reentrant=reentrant).sum()).backward()
        else:
            y = ck(net, x, use_reentrant=reentrant)
            if program == "unused":
                x.sum().backward()
            elif program == "autograd_grad":
                m.autograd.grad(y.pow(2).sum(), net[0].weight)
            else:
                y.pow(2).sum().backward(retain_graph=program == "retained_twice")
                if program == "retained_twice":
                    y.pow(2).sum().backward()
        bn = net[1]
        return bn.num_batches_tracked, bn.running_mean, bn.running_var, x.grad
    same_as_torch(fn, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("reentrant", [True, False])
@pytest.mark.parametrize("preserve", [True, False])
def test_checkpoint_recomputation_runs_forward_hooks_and_draws(reentrant, preserve):
    """The recomputation runs the region's forward hooks (grad on) and, without
    preserve_rng_state, draws from the global stream."""
    x0 = f32(4, 3)

    def fn(m):
        net = det_init(m.nn.Sequential(m.nn.Linear(3, 3), m.nn.Dropout(0.5)))
        calls = []
        net[0].register_forward_hook(lambda mod, a, o: calls.append(m.is_grad_enabled()))
        x = m.tensor(x0, requires_grad=True)
        m.manual_seed(1)
        sub(m, "utils.checkpoint").checkpoint(net, x, use_reentrant=reentrant,
                                              preserve_rng_state=preserve).sum().backward()
        after = m.rand(3)
        m.manual_seed(1)
        net(x)
        return calls, bool((after == m.rand(3)).all())
    same_as_torch(fn)


def test_reentrant_checkpoint_under_no_grad_warns_that_no_input_needs_grad():
    import warnings

    def fn(m):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with m.no_grad():
                sub(m, "utils.checkpoint").checkpoint(m.nn.Linear(3, 3), m.ones(2, 3),
                                                      use_reentrant=True)
        return [str(x.message) for x in w]
    same_as_torch(fn)


# ------------------------------------------------------------------ utils._pytree

def _tree():
    import collections
    pair = collections.namedtuple("Pair", "a b")
    return {"b": [1, (2, 3)], "a": collections.OrderedDict(z=4, y=pair(5, None)),
            "c": collections.defaultdict(list, {"k": 6}), "d": collections.deque([7, 8])}


def test_pytree_spec_shape_and_repr():
    def fn(m):
        P = sub(m, "utils._pytree")
        leaves, spec = P.tree_flatten(_tree())
        back = P.tree_unflatten([x * 10 if isinstance(x, int) else x for x in leaves], spec)
        return (leaves, repr(spec).replace(m.__name__, "torch"), spec.num_leaves,
                spec.num_nodes, spec.num_children, repr(back), repr(spec.child(1)),
                len(spec.children()))
    same_as_torch(fn)


@pytest.mark.parametrize("rest", [
    lambda: [[3, 4], {"a": 5}], lambda: (1, 2), lambda: {"a": 1}, lambda: [1, 2, 3],
    lambda: _tree()["a"]["y"],
], ids=["prefix", "tuple", "dict", "arity", "namedtuple"])
def test_pytree_map_over_a_tree_with_this_prefix(rest):
    same_as_torch(lambda m: repr(sub(m, "utils._pytree").tree_map(
        lambda x, y: (x, y), [1, 2], rest())))


@pytest.mark.parametrize("tree,rest", [
    ({"a": 1, "b": 2}, {"a": 1, "c": 2}), ({"a": 1, "b": 2}, {"b": 3, "a": 4}),
    ((1, 2), [1, 2]),
], ids=["keys", "key_order", "type"])
def test_pytree_map_dict_keys_and_node_types(tree, rest):
    same_as_torch(lambda m: repr(sub(m, "utils._pytree").tree_map(
        lambda x, y: (x, y), tree, rest)))


def test_pytree_key_paths():
    def fn(m):
        import collections
        P = sub(m, "utils._pytree")
        path_leaves, spec = P.tree_flatten_with_path(_tree())
        return ([(repr(k), P.keystr(k), v) for k, v in path_leaves],
                repr(P.tree_map_with_path(lambda p, x, y: (P.keystr(p), x, y),
                                          [1, {"a": 2}], [[5], {"a": 3}])),
                repr(P.tree_leaves_with_path([1, [2]])),
                P.key_get({"x": [1, (2, 3)]}, (P.MappingKey("x"), P.SequenceKey(1),
                                               P.SequenceKey(0))),
                repr(P.tree_flatten_with_path(5)),
                [str(k) for k in (P.GetAttrKey("a"), P.SequenceKey(2), P.MappingKey("k"))],
                collections.Counter([P.MappingKey("k"), P.MappingKey("k")])[P.MappingKey("k")])
    same_as_torch(fn)


def test_pytree_key_paths_of_a_node_registered_without_keys():
    def fn(m):
        P = sub(m, "utils._pytree")
        box = type("Box", (), {"__init__": lambda self, v: setattr(self, "v", v)})
        P.register_pytree_node(box, lambda b: ([b.v], None), lambda c, _: box(c[0]))
        try:
            assert P.tree_leaves(box(1)) == [1]
            P.tree_flatten_with_path(box(1))
        finally:
            P.SUPPORTED_NODES.pop(box)
    same_as_torch(fn)


# ------------------------------------------------------------------ attention masks

@pytest.mark.parametrize("mask", [(3, 4, 6), (2, 3, 4, 6), (4, 5), (5, 6), (1, 3, 1, 1), (4, 6),
                                  (2, 1, 4, 6)])
@pytest.mark.parametrize("dtype", ["float32", "bool"])
def test_sdpa_mask_that_does_not_broadcast_to_the_scores(mask, dtype):
    same_as_torch(lambda m: m.nn.functional.scaled_dot_product_attention(
        m.ones(2, 2, 4, 8), m.ones(2, 2, 6, 8), m.ones(2, 2, 6, 8),
        attn_mask=m.zeros(mask, dtype=getattr(m, dtype))))


def test_sdpa_gqa_mask_broadcast_names_the_query_heads():
    same_as_torch(lambda m: m.nn.functional.scaled_dot_product_attention(
        m.ones(2, 4, 4, 8), m.ones(2, 2, 6, 8), m.ones(2, 2, 6, 8),
        attn_mask=m.zeros(3, 4, 6), enable_gqa=True))


@pytest.mark.parametrize("workers,ctx", [(1, "fork"), (1, "spawn_object"), (1, 3), (1, "foo"),
                                         (0, "spawn")])
def test_dataloader_multiprocessing_context_option(workers, ctx):
    import multiprocessing
    context = multiprocessing.get_context("spawn") if ctx == "spawn_object" else ctx
    same_as_torch(lambda m: type(sub(m, "utils.data").DataLoader(
        range(3), num_workers=workers, multiprocessing_context=context)
        .multiprocessing_context).__name__)


@pytest.mark.parametrize("workers", [0, 2, 3])
def test_dataloader_warns_about_more_workers_than_cpus(workers, monkeypatch):
    import os
    import warnings
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})

    def fn(m):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            loader = sub(m, "utils.data").DataLoader(range(3), num_workers=workers)
            loader.check_worker_number_rationality()
        return [str(x.message) for x in w]
    same_as_torch(fn)


# ------------------------------------------------------------------ recurrent / attention APIs

@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("packed", [False, True])
def test_rnn_public_checks_that_custom_recurrent_modules_call(kind, packed):
    x0 = f32(3, 5, 4)

    def fn(m):
        r = det_init(getattr(m.nn, kind)(4, 6, batch_first=True, num_layers=2,
                                         bidirectional=True))
        x, bs = m.tensor(x0), None
        if packed:
            p = m.nn.utils.rnn.pack_padded_sequence(x, [5, 2, 3], batch_first=True,
                                                    enforce_sorted=False)
            x, bs = p.data, p.batch_sizes
        h = m.zeros(4, 3, 6)
        hx = (h, h) if kind == "LSTM" else h
        out = [r.get_expected_hidden_size(x, bs)]
        if kind == "LSTM":
            out.append(r.get_expected_cell_size(x, bs))
        r.check_forward_args(x, hx, bs)
        bad_args = [(x, (b, h) if kind == "LSTM" else b) for b in (m.zeros(4, 2, 6),
                                                                   m.zeros(2, 3, 6))]
        if kind == "LSTM":
            bad_args.append((x, (h, m.zeros(4, 2, 6))))
        bad_args += [(x[..., :3], hx), (x[0], hx), (x.double(), hx)]
        for xi, hi in bad_args:
            try:
                r.check_forward_args(xi, hi, bs)
            except (RuntimeError, ValueError) as e:
                out.append((type(e).__name__, str(e)))
        return leaves([out, r.permute_hidden(hx, m.tensor([2, 0, 1])),
                       r.permute_hidden(hx, None) is hx])
    same_as_torch(fn)


def test_mha_merge_masks():
    def fn(m):
        a = m.nn.MultiheadAttention(8, 2, batch_first=True)
        q = m.ones(2, 5, 8)
        kpm = m.tensor([[False] * 5, [False] * 3 + [True] * 2])
        out = [a.merge_masks(None, None, q), a.merge_masks(None, kpm, q)]
        for am in (m.zeros(5, 5, dtype=m.bool), m.zeros(4, 5, 5),
                   m.nn.Transformer.generate_square_subsequent_mask(5)):
            out += [a.merge_masks(am, None, q),
                    a.merge_masks(am, kpm if am.dtype == m.bool else kpm.float(), q)]
        return leaves(out)
    same_as_torch(fn)


def test_adagrad_share_memory_keeps_its_state():
    """(torchlike warns that memory is not shared between processes: DIFFERENCES.md)"""
    def fn(m):
        lin = det_init(m.nn.Linear(2, 2))
        opt = m.optim.Adagrad(lin.parameters(), initial_accumulator_value=0.5)
        return opt.share_memory(), opt.state[lin.weight]["sum"]
    same_as_torch(fn)


def test_a_tied_sparse_embedding_weight_is_refused_by_dense_optimizers():
    """DIFFERENCES.md: a weight that an Embedding(sparse=True) looks up and another module
    uses too (tied) has a dense gradient in torch, which Adam trains; torchlike marks the weight
    as sparse-looked-up and Adam refuses it, as it refuses an untied one (torch's error)."""
    def run(m):
        emb = m.nn.Embedding(5, 3, sparse=True)
        lin = m.nn.Linear(3, 5, bias=False)
        lin.weight = emb.weight
        opt = m.optim.Adam(emb.parameters(), lr=0.1)
        lin(emb(m.tensor([1, 2]))).sum().backward()
        opt.step()
    run(torch)
    with pytest.raises(RuntimeError, match="Adam does not support sparse gradients"):
        run(torchlike)
