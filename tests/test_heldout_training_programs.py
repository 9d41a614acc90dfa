"""Pieces of training programs (nn.utils helpers, optimizer construction and checkpoints,
transformer encoders in eval mode) run on torch and torchlike side by side: the same values,
errors (class and message), warnings and aliasing."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchlike
import nn_util
from oracle import assert_close, same_as_torch

R = np.random.default_rng(7)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def det_init(model, seed=0, scale=0.1):
    return nn_util.det_init(model, seed, scale)


# ------------------------------------------------------------------ nn.utils

def test_vector_to_parameters_short_vector_raises_views_error():
    def fn(m):
        lin = m.nn.Linear(3, 4)
        v = m.nn.utils.parameters_to_vector(lin.parameters())
        m.nn.utils.vector_to_parameters(v[:3], lin.parameters())
    same_as_torch(fn)


def test_vector_to_parameters_swaps_storage_as_torch():
    """torch sets each parameter's ``.data`` to a view of the vector: an alias of the old
    parameter (a detached copy, a state_dict entry) keeps the old values, and the parameter
    takes the vector's dtype."""
    def fn(m):
        lin = m.nn.Linear(2, 1)
        old = lin.weight.detach()
        sd = lin.state_dict()
        with m.no_grad():
            lin.weight.fill_(5.)
            lin.bias.fill_(1.)
        m.nn.utils.vector_to_parameters(m.arange(3., dtype=m.float64), lin.parameters())
        return old, sd["weight"], lin.weight.detach(), lin.bias.detach(), str(lin.weight.dtype)
    same_as_torch(fn)


def test_vector_to_parameters_round_trip_values():
    w = f32(4, 3)

    def fn(m):
        lin = m.nn.Linear(3, 4)
        with m.no_grad():
            lin.weight.copy_(m.tensor(w))
            lin.bias.zero_()
        v = m.nn.utils.parameters_to_vector(lin.parameters())
        m.nn.utils.vector_to_parameters(v * 2, lin.parameters())
        return lin.weight.detach(), lin.bias.detach(), lin.weight.requires_grad
    same_as_torch(fn)


@pytest.mark.parametrize("call", [
    lambda m: m.nn.utils.rnn.pad_sequence([m.ones(2, 3)], padding_side="middle"),
    lambda m: m.nn.utils.rnn.pad_sequence([]),
    lambda m: m.nn.utils.rnn.pad_sequence([m.ones(2), m.ones(3)], True, -1.0, "left"),
], ids=["bad_side", "empty", "left"])
def test_pad_sequence_arguments(call):
    same_as_torch(call)


# ------------------------------------------------------------------ optimizers

@pytest.mark.parametrize("opt", ["SGD", "Adam", "AdamW", "Adagrad"])
@pytest.mark.parametrize("kw", [dict(fused=True, foreach=True),
                                dict(fused=True, differentiable=True)],
                         ids=["foreach", "differentiable"])
def test_fused_optimizer_flag_conflicts(opt, kw):
    same_as_torch(lambda m: getattr(m.optim, opt)([m.nn.Parameter(m.zeros(1))], lr=0.1, **kw)
                  and None)


@pytest.mark.parametrize("opt", ["Adam", "AdamW"])
def test_adam_tensor_lr_with_foreach_raises(opt):
    same_as_torch(lambda m: getattr(m.optim, opt)([m.nn.Parameter(m.zeros(1))],
                                                  lr=m.tensor(0.1), foreach=True) and None)


@pytest.mark.parametrize("name,kw", [
    ("SGD", dict(lr=0.1, momentum=0.9)), ("Adam", dict(lr=0.1)),
    ("RMSprop", dict(lr=0.1, momentum=0.5)), ("Adagrad", dict(lr=0.1)),
])
def test_optimizer_load_state_dict_aliases_saved_state(name, kw):
    """torch's load_state_dict keeps the saved tensors (``.to`` of a same-dtype tensor is
    itself): two optimizers loaded from one state_dict share their buffers, so stepping one
    moves the other's state too."""
    x = f32(6, 3)

    def fn(m):
        lin = det_init(m.nn.Linear(3, 2))
        opt = getattr(m.optim, name)(lin.parameters(), **kw)
        lin(m.tensor(x)).pow(2).mean().backward()
        opt.step()
        lin2 = det_init(m.nn.Linear(3, 2))
        opt2 = getattr(m.optim, name)(lin2.parameters(), **kw)
        opt2.load_state_dict(opt.state_dict())
        shared = {k: v is opt.state[lin.weight][k] for k, v in opt2.state[lin2.weight].items()}
        with m.no_grad():
            lin2.weight.copy_(lin.weight)
            lin2.bias.copy_(lin.bias)
        for o, mod in ((opt, lin), (opt2, lin2)):
            o.zero_grad()
            mod(m.tensor(x)).pow(2).mean().backward()
            o.step()
        return sorted(shared.items()), lin2.weight.detach()
    same_as_torch(fn, atol=1e-6, rtol=1e-5)


# ------------------------------------------------------------------ transformer encoder

def _eval_encoder(m):
    layer = m.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
    return det_init(m.nn.TransformerEncoder(layer, 2)).eval()


@pytest.mark.parametrize("mask", [
    lambda m: m.zeros(2, 4, dtype=m.bool), lambda m: m.zeros(1, 2, 5, dtype=m.bool),
    lambda m: m.zeros(1, 5, dtype=m.bool),
], ids=["short", "3d", "one_row"])
def test_encoder_eval_padding_mask_size_errors(mask):
    x = f32(2, 5, 8)

    def fn(m):
        with m.no_grad():
            return _eval_encoder(m)(m.tensor(x), src_key_padding_mask=mask(m))
    same_as_torch(fn)


def test_encoder_nested_fast_path_warns_once_per_process():
    from oracle import fresh_process_outputs
    code = """
import sys, warnings
import numpy as np
torch = __import__(sys.argv[1])
layer = torch.nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True)
enc = torch.nn.TransformerEncoder(layer, 2).eval()
x = torch.zeros(2, 5, 8)
pad = torch.tensor([[False, False, False, True, True], [False] * 5])
for i in range(2):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with torch.no_grad():
            out = enc(x, src_key_padding_mask=pad)
    print(i, [(c.category.__name__, str(c.message)) for c in w], out[0, 3].abs().sum().item())
"""
    outs = fresh_process_outputs(code)
    assert "prototype stage" in outs["torch"]
    assert outs["torchlike"] == outs["torch"]


# ------------------------------------------------------------------ module state_dict plumbing

def _custom_loader_module(m, log):
    class Custom(m.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = m.nn.Parameter(m.ones(2))

        # torch's eight-argument signature, as third-party modules override it
        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                                  missing_keys, unexpected_keys, error_msgs):
            log.append((prefix, sorted(state_dict), strict, dict(local_metadata)))
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                          missing_keys, unexpected_keys, error_msgs)

        def get_extra_state(self):
            return {"v": 3}

        def set_extra_state(self, state):
            log.append(("extra", state))
    return m.nn.Sequential(Custom())


@pytest.mark.parametrize("assign", [False, True])
def test_load_from_state_dict_override_with_torchs_signature(assign):
    def fn(m):
        log = []
        src = _custom_loader_module(m, log)
        with m.no_grad():
            src[0].w.mul_(3)
        dst = _custom_loader_module(m, log)
        r = dst.load_state_dict(src.state_dict(), assign=assign)
        return str(r), log, dst[0].w.detach(), type(dst[0].w).__name__
    same_as_torch(fn)


@pytest.mark.parametrize("sd", [
    lambda m: {"weight": m.ones(2, 2), "bias": m.ones(2), "weight.x": m.ones(1)},
    lambda m: {"weight": m.ones(2, 2), "bias": m.ones(2), "bias2": m.ones(1)},
], ids=["dotted_key_under_a_parameter", "plain_unknown"])
def test_load_state_dict_unexpected_key_rules(sd):
    same_as_torch(lambda m: str(m.nn.Linear(2, 2).load_state_dict(sd(m), strict=False)))


def test_load_state_dict_submodule_name_without_dot_is_unexpected():
    def fn(m):
        s = m.nn.Sequential(m.nn.Linear(2, 2))
        return str(s.load_state_dict({"0.weight": m.ones(2, 2), "0.bias": m.ones(2),
                                      "0": m.ones(1)}, strict=False))
    same_as_torch(fn)


def test_load_state_dict_accepts_any_mapping_and_old_one_element_vectors():
    from collections.abc import Mapping

    class Wrapped(Mapping):
        def __init__(self, d):
            self.d = d

        def __getitem__(self, k):
            return self.d[k]

        def __iter__(self):
            return iter(self.d)

        def __len__(self):
            return len(self.d)

    def fn(m):
        class Scalar(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("t", m.tensor(1.0))
        lin = m.nn.Linear(2, 2)
        r1 = lin.load_state_dict(Wrapped({"weight": m.ones(2, 2), "bias": m.zeros(2)}))
        s = Scalar()
        r2 = s.load_state_dict({"t": m.tensor([5.0])})
        return str(r1), str(r2), lin.weight.detach(), s.t
    same_as_torch(fn)


def test_lazy_module_loads_a_checkpoint_then_becomes_its_class():
    w = f32(3, 2)

    def fn(m):
        src = m.nn.Linear(2, 3)
        with m.no_grad():
            src.weight.copy_(m.tensor(w))
            src.bias.fill_(0.5)
        lazy = m.nn.LazyLinear(3)
        r = lazy.load_state_dict(src.state_dict())
        before = (type(lazy).__name__, tuple(lazy.weight.shape), repr(lazy))
        out = lazy(m.ones(1, 2))
        return str(r), before, type(lazy).__name__, repr(lazy), out.detach()
    same_as_torch(fn)


def test_lazy_linear_loaded_then_called_with_wrong_width():
    def fn(m):
        lazy = m.nn.LazyLinear(3)
        lazy.load_state_dict(m.nn.Linear(2, 3).state_dict())
        lazy(m.ones(1, 4))
    same_as_torch(fn)


# ------------------------------------------------------------------ DataLoader workers

_GUARDED_SCRIPT = '''
import sys
torch = __import__(sys.argv[1])
D = torch.utils.data


class Squares(D.Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return i * i


if __name__ == "__main__":
    # defined under the guard: a forked worker inherits them, a spawned one must get them
    class Shifted(D.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            return {"v": i + 100}

    def init_fn(worker_id):
        info = D.get_worker_info()
        assert info.id == worker_id and info.num_workers == 2

    for ds in (Squares(), Shifted()):
        dl = D.DataLoader(ds, batch_size=2, num_workers=2, worker_init_fn=init_fn)
        out = [b["v"].tolist() if isinstance(b, dict) else b.tolist() for b in dl]
        print(type(iter(dl)).__name__, out)
'''


def test_dataloader_workers_get_objects_defined_under_the_main_guard(tmp_path):
    import subprocess
    import sys
    path = tmp_path / "train_script.py"
    path.write_text(_GUARDED_SCRIPT)
    outs = {lib: subprocess.run([sys.executable, str(path), lib], capture_output=True,
                                text=True, timeout=300, cwd=tmp_path)
            for lib in ("torch", "torchlike")}
    assert outs["torch"].returncode == 0, outs["torch"].stderr
    assert outs["torchlike"].returncode == 0, outs["torchlike"].stderr[-3000:]
    assert outs["torchlike"].stdout == outs["torch"].stdout


def test_dataloader_workers_of_a_python_c_program():
    from oracle import fresh_process_outputs
    code = """
import sys
torch = __import__(sys.argv[1])
D = torch.utils.data
class Ds(D.Dataset):
    def __len__(self):
        return 5
    def __getitem__(self, i):
        return (i, float(i) / 2)
dl = D.DataLoader(Ds(), batch_size=2, num_workers=2, collate_fn=lambda b: [x[0] for x in b])
print([b for b in dl])
"""
    outs = fresh_process_outputs(code, timeout=300)
    assert outs["torch"].strip() == "[[0, 1], [2, 3], [4]]"
    assert outs["torchlike"] == outs["torch"]


def test_dataloader_iterator_class_names():
    def fn(m):
        it = iter(m.utils.data.DataLoader(range(3)))
        return type(it).__name__, isinstance(it, m.utils.data.dataloader._BaseDataLoaderIter)
    same_as_torch(fn)


def test_lstm_cell_batched_input_with_a_tensor_hx():
    def fn(m):
        cell = m.nn.LSTMCell(3, 4)
        cell(m.zeros(2, 3), m.zeros(2, 4))
    same_as_torch(fn)


def test_lstm_cell_unbatched_input_splits_a_tensor_hx():
    def fn(m):
        cell = det_init(m.nn.LSTMCell(3, 4))
        h, c = cell(m.ones(3), m.ones(2, 4) * 0.5)
        return h.detach(), c.detach()
    same_as_torch(fn, atol=1e-6, rtol=1e-5)


# ------------------------------------------------------------------ layer arguments

@pytest.mark.parametrize("size", [
    lambda m: m.Size([2, 3, 5, 6]), lambda m: (2, 3, 5, 6), lambda m: [2, 3, 5, 6],
    lambda m: [2, 3, 5], lambda m: [2, 3, 0, 5],
], ids=["torch_size", "tuple", "list", "3d", "zero"])
def test_affine_grid_messages_show_the_size_as_given(size):
    def fn(m):
        theta = m.zeros(2, 1, 3) if len(size(m)) == 4 and 0 not in size(m) else m.zeros(2, 2, 3)
        m.nn.functional.affine_grid(theta, size(m), align_corners=False)
    same_as_torch(fn)


@pytest.mark.parametrize("args", [
    (1, (3, 2)), (1, (2, -1)), (1, [2, 2]), (1, 3), (1, (2.0, 2)), ("a", (("x", 2),)),
    (-1, (2, 2)),
], ids=["bad_product", "inferred", "list", "int", "float", "named", "negative_dim"])
def test_unflatten_module_arguments(args):
    def fn(m):
        mod = m.nn.Unflatten(*args)
        return repr(mod), tuple(mod(m.zeros(3, 4)).shape)
    same_as_torch(fn)


def test_layer_norm_over_no_dimensions():
    same_as_torch(lambda m: (repr(m.nn.LayerNorm([])), tuple(m.nn.LayerNorm([]).weight.shape)))


@pytest.mark.parametrize("ls", [2.0, 1.5, -0.25, 0.0])
@pytest.mark.parametrize("probs", [False, True], ids=["indices", "probabilities"])
def test_cross_entropy_label_smoothing_bounds(ls, probs):
    x = f32(3, 4)

    def fn(m):
        target = m.softmax(m.tensor(x * 2), 1) if probs else m.tensor([0, 1, 3])
        return m.nn.CrossEntropyLoss(label_smoothing=ls)(m.tensor(x), target)
    same_as_torch(fn, atol=1e-6, rtol=1e-6)


# ------------------------------------------------------------------ attention modules

@pytest.mark.parametrize("batch_first", [False, True], ids=["seq_first", "batch_first"])
@pytest.mark.parametrize("average", [True, False], ids=["avg", "per_head"])
@pytest.mark.parametrize("need_weights", [True, False], ids=["weights", "no_weights"])
@pytest.mark.parametrize("batched", [True, False], ids=["batched", "unbatched"])
def test_multihead_attention_outputs_grad_fn_names(batch_first, average, need_weights,
                                                   batched):
    x0 = f32(3, 2, 4) if batched else f32(3, 4)

    def fn(m):
        mha = det_init(m.nn.MultiheadAttention(4, 2, batch_first=batch_first))
        x = m.tensor(x0, requires_grad=True)
        o, w = mha(x, x, x, need_weights=need_weights, average_attn_weights=average)
        names = (type(o.grad_fn).__name__, None if w is None else type(w.grad_fn).__name__)
        (o.sum() + (0 if w is None else w.sum())).backward()
        return names, o.detach(), x.grad
    same_as_torch(fn, atol=1e-6, rtol=1e-5)


# ------------------------------------------------------------------ grad_fn names of layers

@pytest.mark.parametrize("ctor", [
    "nn.LeakyReLU(0.2, inplace=True)", "nn.ELU(inplace=True)", "nn.CELU()", "nn.CELU(0.5)",
    "nn.CELU(inplace=True)", "nn.SELU(inplace=True)", "nn.RReLU().eval()",
    "nn.RReLU(inplace=True).eval()", "nn.Threshold(0.1, 20.0, inplace=True)",
    "nn.Threshold(0.1, -5.0)",
])
def test_activation_grad_fn_names_and_gradients(ctor):
    x0 = np.array([[-1.0, 0.0, 0.05, 2.0], [-0.3, 0.3, -2.0, 0.1]], np.float32)

    def fn(m):
        nn = m.nn
        x = m.tensor(x0, requires_grad=True)
        o = eval(ctor)(x * 1)
        o.pow(2).sum().backward()
        return type(o.grad_fn).__name__, o.detach(), x.grad
    same_as_torch(fn, atol=1e-6, rtol=1e-5)


def test_rrelu_in_place_training_grad_fn_name():
    def fn(m):
        x = m.tensor([[-1.0, 0.5]], requires_grad=True)
        return type(m.nn.RReLU(inplace=True)(x * 1).grad_fn).__name__
    same_as_torch(fn)


def test_channel_shuffle_grad_fn_name():
    x0 = f32(1, 4, 2, 2)

    def fn(m):
        x = m.tensor(x0, requires_grad=True)
        outs = (m.nn.ChannelShuffle(2)(x), m.nn.functional.channel_shuffle(x, 2),
                m.channel_shuffle(x, 2))
        return [type(o.grad_fn).__name__ for o in outs], outs[0].detach()
    same_as_torch(fn)


def test_lstm_cell_state_grad_fn_and_unrolled_gradients():
    x0 = f32(5, 2, 3)

    def fn(m):
        cell = det_init(m.nn.LSTMCell(3, 4))
        x = m.tensor(x0, requires_grad=True)
        h = c = m.zeros(2, 4)
        outs = []
        for t in range(5):
            h, c = cell(x[t], (h, c))
            outs.append(h)
        names = (type(h.grad_fn).__name__, type(c.grad_fn).__name__)
        (m.stack(outs).pow(2).sum() + c.sum()).backward()
        return names, x.grad, cell.weight_hh.grad
    same_as_torch(fn, atol=1e-6, rtol=1e-5)


def test_state_dict_positional_arguments_warn_and_post_hook_rules():
    def fn(m):
        lin = m.nn.Linear(2, 2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            keys = list(lin.state_dict(None, "p."))
        seen = [(x.category.__name__, str(x.message)) for x in w]

        def public(mod, sd, prefix, meta):
            return {"replaced": 1}

        def private(mod, sd, prefix, meta):
            return {"replaced": 2}
        h = lin._register_state_dict_hook(private)
        replaced = lin.state_dict()
        h.remove()
        lin.register_state_dict_post_hook(public)
        try:
            lin.state_dict()
        except RuntimeError as e:
            err = str(e)
        try:
            lin._register_state_dict_hook(public)
        except RuntimeError as e:
            err2 = str(e)
        return keys, seen, dict(replaced), err, err2
    same_as_torch(fn)


# ------------------------------------------------------------------ torch.utils modules

def test_tensorboard_import_without_the_package_and_model_zoo():
    import importlib.util
    if importlib.util.find_spec("tensorboard") is not None:
        with pytest.raises(ImportError, match="SummaryWriter is not provided"):
            importlib.import_module("torchlike.utils.tensorboard")
        return

    def fn(m):
        try:
            importlib.import_module(m.__name__ + ".utils.tensorboard")
        except ImportError as e:
            err = (type(e).__name__, str(e))
        zoo = importlib.import_module(m.__name__ + ".utils.model_zoo")
        return err, zoo.load_url is m.hub.load_state_dict_from_url
    import importlib
    same_as_torch(fn)


# ------------------------------------------------------------------ layer input errors

@pytest.mark.parametrize("call", [
    lambda m: m.nn.Conv1d(3, 4, 3)(m.zeros(2, 5)),
    lambda m: m.nn.Conv2d(3, 4, 3)(m.zeros(2, 5, 5)),
    lambda m: m.nn.ConvTranspose2d(3, 4, 3)(m.zeros(2, 5, 5)),
    lambda m: m.nn.Conv2d(3, 4, 3)(m.zeros(1, 2, 5, 5)),
], ids=["conv1d_unbatched", "conv2d_unbatched", "conv_transpose_unbatched", "batched"])
def test_conv_channel_errors_show_the_batched_input_size(call):
    same_as_torch(call)


@pytest.mark.parametrize("shapes", [
    ((2, 3), (2, 3), (3,)), ((2, 3), (2, 4), (2,)), ((2, 3), (3, 3), (2,)),
    ((2, 3), (2, 3), (1,)), ((1, 3), (2, 3), (2,)),
])
def test_cosine_embedding_loss_broadcast_errors(shapes):
    a, b, t = shapes
    same_as_torch(lambda m: m.nn.CosineEmbeddingLoss()(m.ones(a), m.ones(b), m.ones(t)))


def test_embedding_bag_2d_input_with_offsets_names_torchs_tensor_class():
    same_as_torch(lambda m: m.nn.EmbeddingBag(5, 2)(m.tensor([[1, 2]]), m.tensor([0])))


def test_reshape_transform_shapes_are_torch_sizes():
    def fn(m):
        t = m.distributions.transforms.ReshapeTransform((3,), (3, 1))
        f, i = t.forward_shape((2, 3)), t.inverse_shape((4, 3, 1))
        return type(f).__name__, tuple(f), type(i).__name__, tuple(i)
    same_as_torch(fn)


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_nn_grad_conv_input_and_weight(nd):
    sh, wsh = (2, 4) + (5,) * nd, (6, 2) + (3,) * nd
    x0, w0 = f32(*sh), f32(*wsh)

    def fn(m):
        x = m.tensor(x0, requires_grad=True)
        w = m.tensor(w0, requires_grad=True)
        conv = getattr(m.nn.functional, f"conv{nd}d")
        out = conv(x, w, stride=2, padding=1, groups=2)
        go = m.ones(out.shape) * 0.5
        gi = getattr(m.nn.grad, f"conv{nd}d_input")(x.shape, w, go, stride=2, padding=1,
                                                      groups=2)
        gw = getattr(m.nn.functional.grad, f"conv{nd}d_weight")(x, w.shape, go, stride=2,
                                                                  padding=1, groups=2)
        gi.pow(2).sum().backward()
        return gi.detach(), gw.detach(), gi.requires_grad, gw.requires_grad, w.grad
    same_as_torch(fn, atol=1e-4, rtol=1e-4)


# ------------------------------------------------------------------ full backward hooks

@pytest.mark.parametrize("setup", [
    "k.register_full_backward_pre_hook(lambda mod, go: (m.ones(3),))",
    "k.register_full_backward_hook(lambda mod, gi, go: (m.ones(2, 2),))",
    "k.register_full_backward_hook(lambda mod, gi, go: (m.ones(1, 1, dtype=m.float64),))",
    "k.register_full_backward_hook(lambda mod, gi, go: (3,))",
    "k.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 2,))",
    "k.register_full_backward_pre_hook(lambda mod, go: (go[0] * 3,))",
], ids=["pre_size", "size", "dtype", "not_tensor", "scaled", "pre_scaled"])
def test_full_backward_hook_results_are_checked(setup):
    def fn(m):
        k = det_init(m.nn.Linear(1, 1))
        eval(setup)
        x = m.ones(1, 1, requires_grad=True)
        k(x).sum().backward()
        return x.grad, k.weight.grad
    same_as_torch(fn, atol=1e-6, rtol=1e-6)


def _inplace_modules(m):
    class WritesSecond(m.nn.Module):
        def forward(self, a, b):
            b.add_(1)
            return a + b

    class WritesFirst(m.nn.Module):
        def forward(self, a, b):
            a.add_(1)
            return a + b
    return WritesSecond, WritesFirst


@pytest.mark.parametrize("case", ["relu_inplace", "second_of_two", "second_alone",
                                  "pre_hook_only", "no_grad"])
def test_full_backward_hook_refuses_in_place_writes_to_inputs(case):
    def fn(m):
        WritesSecond, WritesFirst = _inplace_modules(m)
        a = m.ones(2, requires_grad=True) * 1
        b = m.ones(2, requires_grad=True) * 1
        if case == "relu_inplace":
            k = m.nn.ReLU(inplace=True)
            k.register_full_backward_hook(lambda *h: None)
            return k(a).detach()
        if case == "pre_hook_only":
            k = WritesFirst()
            k.register_full_backward_pre_hook(lambda *h: None)
            return k(a, b).detach()
        k = WritesSecond()
        k.register_full_backward_hook(lambda *h: None)
        if case == "second_alone":
            return k(a, m.ones(2)).detach()
        if case == "no_grad":
            with m.no_grad():
                return k(a, b)
        return k(a, b).detach()
    same_as_torch(fn)


@pytest.mark.parametrize("data", [lambda m: [1.0], lambda m: np.zeros(2)], ids=["list", "numpy"])
def test_parameter_of_a_non_tensor(data):
    same_as_torch(lambda m: m.nn.Parameter(data(m)))


# ------------------------------------------------------------------ packed sequences

@pytest.mark.parametrize("enforce_sorted", [False, True], ids=["unsorted", "sorted"])
@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
def test_packed_rnn_grad_fn_names_and_gradients(enforce_sorted, mode, bidirectional):
    lens = [4, 3, 2] if enforce_sorted else [4, 2, 3]
    xs = [f32(n, 3) for n in lens]

    def fn(m):
        U = m.nn.utils.rnn
        seqs = [m.tensor(x, requires_grad=True) for x in xs]
        pk = U.pack_sequence(seqs, enforce_sorted=enforce_sorted)
        rnn = det_init(getattr(m.nn, mode)(3, 2, bidirectional=bidirectional))
        o, h = rnn(pk)
        h = h[0] if mode == "LSTM" else h
        names = [type(U.pad_sequence(seqs).grad_fn).__name__, type(o.data.grad_fn).__name__,
                 type(h.grad_fn).__name__]
        outs = []
        for bf in (False, True):
            out, lengths = U.pad_packed_sequence(o, batch_first=bf)
            names.append(type(out.grad_fn).__name__)
            outs.append(out)
        (outs[1].pow(2).sum() + h.sum()).backward()
        return (names, outs[0].detach(), *[s.grad for s in seqs])
    same_as_torch(fn, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("seqs", [
    lambda m: [m.ones(2, 3), m.ones(1, 2, 3)], lambda m: [m.ones(2, 3), m.ones(3)],
    lambda m: [m.ones(2, 3), m.ones(2, 4)], lambda m: [m.ones(2, 1, 3), m.ones(1, 2, 3)],
    lambda m: [m.ones(2, 1, 3), m.ones(3, 1, 1)], lambda m: [m.tensor([1, 2]), m.tensor([3.5])],
    lambda m: [m.tensor([True]), m.tensor([False, True])],
], ids=["extra_dim", "vector", "mismatch", "wider", "broadcast", "int_first", "bool"])
def test_pad_sequence_copies_into_the_first_sequences_layout(seqs):
    same_as_torch(lambda m: m.nn.utils.rnn.pad_sequence(seqs(m), padding_value=-1))


# ------------------------------------------------------------------ distributions

@pytest.mark.parametrize("df", [[0.5, 1.5, 3.0], 0.5, 1.5, 3.0], ids=["batch", "df_half", "df_1.5",
                                                                    "df_3"])
def test_student_t_moments_and_their_grad_fn(df):
    def fn(m):
        loc = m.zeros(3, requires_grad=True) if isinstance(df, list) else m.tensor(
            0.0, requires_grad=True)
        scale = m.ones(3) * 2 if isinstance(df, list) else m.tensor(2.0)
        d = m.distributions.StudentT(m.tensor(df), loc, scale)
        mean, var = d.mean, d.variance
        names = None
        if isinstance(df, list):
            names = (type(mean.grad_fn).__name__, type(var.grad_fn).__name__ if var.grad_fn
                     else None)
        return names, mean.detach(), var.detach()
    same_as_torch(fn)


def test_gamma_rsample_grad_fn_and_gradient_shape():
    def fn(m):
        a = m.tensor([2.0, 0.7], requires_grad=True)
        s = m.distributions.Gamma(a, m.tensor([1.2, 3.0])).rsample((5,))
        s.sum().backward()
        return type(s.grad_fn).__name__, tuple(s.shape), tuple(a.grad.shape), bool(
            (s > 0).all())
    same_as_torch(fn)


def test_optimizer_module_helpers_that_copied_optimizers_import():
    """A custom optimizer written as torch's own are (typed with ParamsT, step decorated with
    _use_grad_for_differentiable, state read with _get_value, ...)."""
    import importlib
    x0 = f32(4, 3)

    def fn(m):
        om = importlib.import_module(m.__name__ + ".optim.optimizer")

        class MyAdam(m.optim.Optimizer):
            def __init__(self, params: om.ParamsT, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                         differentiable=False):
                super().__init__(params, dict(lr=lr, betas=betas, eps=eps,
                                              differentiable=differentiable))

            @om._use_grad_for_differentiable
            def step(self, closure=None):
                seen.append(m.is_grad_enabled())
                for g in self.param_groups:
                    ps = [p for p in g["params"] if p.grad is not None]
                    seen.append(om._default_to_fused_or_foreach(ps, False, use_fused=False))
                    for p in ps:
                        st = self.state[p]
                        if not st:
                            st["step"] = m.tensor(0.0, dtype=om._get_scalar_dtype())
                            st["m"], st["v"] = m.zeros_like(p), m.zeros_like(p)
                        st["step"] += 1
                        step = om._get_value(st["step"])
                        b1, b2 = g["betas"]
                        st["m"].lerp_(p.grad, 1 - b1)
                        st["v"].mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                        denom = (st["v"] / (1 - b2 ** step)).sqrt().add_(g["eps"])
                        p.addcdiv_(st["m"], denom, value=-g["lr"] / (1 - b1 ** step))
        seen = []
        lin = det_init(m.nn.Linear(3, 2))
        opt = MyAdam(lin.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            lin(m.tensor(x0)).pow(2).sum().backward()
            opt.step()
        return (seen, MyAdam.step.__name__, om._maximize_doc.split("(")[0],
                type(om._get_value(m.tensor(1.0))).__name__, lin.weight.detach())
    same_as_torch(fn, atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("mod,cls", [("adam", "Adam"), ("adamw", "AdamW"), ("sgd", "SGD"),
                                     ("rmsprop", "RMSprop"), ("adagrad", "Adagrad"),
                                     ("adadelta", "Adadelta"), ("adamax", "Adamax"),
                                     ("nadam", "NAdam"), ("radam", "RAdam"), ("asgd", "ASGD"),
                                     ("rprop", "Rprop"), ("lbfgs", "LBFGS"),
                                     ("sparse_adam", "SparseAdam")])
def test_optimizer_submodules(mod, cls):
    import importlib

    def fn(m):
        module = importlib.import_module(f"{m.__name__}.optim.{mod}")
        return getattr(module, cls) is getattr(m.optim, cls)
    same_as_torch(fn)


def test_nn_reduction_module_for_losses_written_as_torchs():
    import importlib

    def fn(m):
        red = importlib.import_module(m.__name__ + ".nn._reduction")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = (red.get_enum("mean"), red.get_enum("elementwise_mean"),
                   red.legacy_get_string(None, False), red.legacy_get_string(False, None),
                   red.legacy_get_enum(True, True, emit_warning=False))
        try:
            red.get_enum("avg")
        except ValueError as e:
            err = str(e)
        return out, [str(x.message) for x in w], err, m.nn._reduction is red
    same_as_torch(fn)


def test_private_nn_names_custom_layers_import():
    """Base classes, helpers and type aliases custom layers written as torch's own use."""
    import importlib

    def fn(m):
        nn, F = m.nn, m.nn.functional
        P = importlib.import_module(m.__name__ + ".nn.modules.pooling")
        C = importlib.import_module(m.__name__ + ".nn.modules.conv")
        RN = importlib.import_module(m.__name__ + ".nn.modules.rnn")
        PA = importlib.import_module(m.__name__ + ".nn.parameter")
        CT = importlib.import_module(m.__name__ + ".nn.common_types")
        mods = [nn.AvgPool1d(2), nn.AvgPool3d(2), nn.AdaptiveAvgPool2d(1), nn.AdaptiveMaxPool1d(2),
                nn.ConvTranspose2d(1, 1, 2), nn.Conv2d(1, 1, 2)]
        kinds = [(isinstance(x, P._AvgPoolNd), isinstance(x, P._AdaptiveAvgPoolNd),
                  isinstance(x, P._AdaptiveMaxPoolNd), isinstance(x, C._ConvTransposeNd),
                  repr(x)) for x in mods]
        lazy = (PA.is_lazy(nn.LazyLinear(2).weight), PA.is_lazy(m.zeros(1)),
                isinstance(nn.LazyLinear(2).weight, PA.UninitializedTensorMixin))
        perm = RN._apply_permutation(m.arange(6).view(2, 3), m.tensor([2, 0, 1]))
        mask = F._canonical_mask(m.tensor([True, False]), "m", None, "o", m.float32)
        try:
            F._verify_batch_size([1, 3])
        except ValueError as e:
            err = str(e)
        q = m.tensor(f32(3, 2, 4) * 0 + 1)
        w = m.arange(48.0).reshape(12, 4) / 48
        proj = F._in_projection_packed(q, q, q, w)
        return (kinds, lazy, perm, mask, err, F._none_or_dtype(m.zeros(1)) == m.float32,
                CT._size_2_t is not None, *proj)
    same_as_torch(fn, atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda m: m.nn.utils.rnn.PackedSequence(m.zeros(3), [2, 1]),
    lambda m: m.nn.utils.rnn.PackedSequence((m.zeros(3, 2), m.tensor([2, 1]))).batch_sizes,
    lambda m: m.nn.utils.rnn.PackedSequence(m.zeros(3, 2)),
    lambda m: type(m.nn.utils.rnn.PackedSequence(m.zeros(3, 2), m.tensor([2, 1]))).__mro__[1]
    .__name__,
    lambda m: m.nn.utils.rnn.PackedSequence(m.zeros(3, 2), m.tensor([2, 1])).to("cpu", copy=True),
    lambda m: m.nn.utils.rnn.PackedSequence(m.zeros(3, 2), m.tensor([2, 1])).to(m.float64).data,
], ids=["list_batch_sizes", "pair", "no_batch_sizes", "base_class", "copy", "dtype"])
def test_packed_sequence_construction(call):
    same_as_torch(call)
