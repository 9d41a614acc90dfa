"""Pieces of typical training programs (tutorial models, optimizer and scheduler loops, data
loaders) run on torch and torchlike side by side: same weights and data, same printed values,
reprs, warnings and errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchlike
from nn_util import det_init
from oracle import assert_close

R = np.random.default_rng(2024)


def f32(*shape, scale=1.0):
    return (R.standard_normal(shape) * scale).astype(np.float32)




def caught(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [(x.category, str(x.message)) for x in w]


# ------------------------------------------------------------------ recurrent cells

@pytest.mark.parametrize("ctor", [
    lambda nn: nn.LSTMCell(3, 4), lambda nn: nn.LSTMCell(3, 4, bias=False),
    lambda nn: nn.GRUCell(3, 4), lambda nn: nn.RNNCell(3, 4),
    lambda nn: nn.RNNCell(3, 4, nonlinearity="relu"),
], ids=["lstm", "lstm_nobias", "gru", "rnn_tanh", "rnn_relu"])
def test_rnn_cell_outputs_print_torchs_grad_fn(ctor):
    x = f32(2, 3)
    outs = []
    for m in (torch, torchlike):
        cell = det_init(ctor(m.nn))
        out = cell(m.tensor(x))
        h = out[0] if isinstance(out, tuple) else out
        outs.append((h, repr(h)))
    assert_close(outs[1][0], outs[0][0])
    assert outs[1][1] == outs[0][1]


# ------------------------------------------------------------------ optimizers

def test_optimizer_repr_with_param_groups():
    def build(m):
        return m.optim.SGD([{"params": [m.zeros(1)]}, {"params": [m.zeros(1)], "lr": 0.5}],
                           lr=0.1, momentum=0.9)
    assert repr(build(torchlike)) == repr(build(torch))
    assert repr(torchlike.optim.Adam([torchlike.zeros(1)])) == \
        repr(torch.optim.Adam([torch.zeros(1)]))


def test_lbfgs_int_lr_keeps_state_step_an_int():
    w0, x, y = f32(4, 3), f32(8, 3), f32(8, 4)
    states = []
    for m in (torch, torchlike):
        lin = m.nn.Linear(3, 4, bias=False)
        with m.no_grad():
            lin.weight.copy_(m.tensor(w0))
        opt = m.optim.LBFGS(lin.parameters(), max_iter=3)

        def closure():
            opt.zero_grad()
            loss = m.nn.functional.mse_loss(lin(m.tensor(x)), m.tensor(y))
            loss.backward()
            return loss
        opt.step(closure)
        st = opt.state[lin.weight]
        states.append((st["t"], type(st["t"]), st["n_iter"], st["func_evals"]))
        states.append(lin.weight)
    assert states[2] == states[0]
    assert_close(states[3], states[1])


# ------------------------------------------------------------------ data loading

def test_dataloader_pin_memory_without_accelerator_warns():
    if torchlike.accelerator.is_available():
        pytest.skip("an accelerator pins memory")

    def first(m):
        ds = m.utils.data.TensorDataset(m.arange(6.0).reshape(3, 2))
        return next(iter(m.utils.data.DataLoader(ds, batch_size=2, pin_memory=True)))[0]
    out, w = caught(lambda: first(torchlike))
    ref, wref = caught(lambda: first(torch))
    assert_close(out, ref)
    assert w == wref and len(w) == 1


def test_lstm_cell_state_has_its_own_node():
    """torch's c is an AddBackward0 and h a MulBackward0: two nodes, as torchlike's."""
    x = f32(2, 3)
    names = []
    for m in (torch, torchlike):
        h, c = det_init(m.nn.LSTMCell(3, 4))(m.tensor(x))
        names.append((type(h.grad_fn).__name__, type(c.grad_fn).__name__,
                      c.grad_fn is h.grad_fn))
    assert names[1] == names[0] == ("MulBackward0", "AddBackward0", False)


def _custom_sgd(m):
    class MySGD(m.optim.Optimizer):
        def __init__(self, params, lr=0.1):
            super().__init__(params, dict(lr=lr))

        @m.no_grad()
        def step(self, closure=None):
            loss = None
            if closure is not None:
                with m.enable_grad():
                    loss = closure()
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self.state[p]["step"] = self.state[p].get("step", 0) + 1
                        p.add_(p.grad, alpha=-group["lr"])
            return loss
    return MySGD


@pytest.mark.parametrize("kind", ["custom", "SGD", "LBFGS"])
def test_step_hooks_run_around_every_optimizer_class_step(kind):
    """torch wraps each optimizer class's step (a user subclass's own step too) with the
    global and per-optimizer step hooks; a pre hook may return new (args, kwargs)."""
    logs = []
    for m in (torch, torchlike):
        from importlib import import_module
        optmod = import_module(m.__name__ + ".optim.optimizer")
        log = []
        w = m.nn.Parameter(m.tensor([1.0, -2.0]))
        make = {"custom": _custom_sgd(m), "SGD": m.optim.SGD, "LBFGS": m.optim.LBFGS}[kind]
        opt = make([w], lr=0.1)

        def closure():
            opt.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss
        h1 = optmod.register_optimizer_step_pre_hook(
            lambda o, a, k: log.append(("gpre", type(o).__name__, len(a), sorted(k))))
        h2 = optmod.register_optimizer_step_post_hook(
            lambda o, a, k: log.append(("gpost", len(a), sorted(k))))
        opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", a[0] is o, sorted(k))))
        opt.register_step_post_hook(lambda o, a, k: log.append(("post", len(a))))
        opt.step(closure)
        opt.step(closure=closure)
        h1.remove()
        h2.remove()
        opt.register_step_pre_hook(lambda o, a, k: ((o,), {"closure": closure}))
        log.append(round(float(opt.step()), 6))
        opt.register_step_pre_hook(lambda o, a, k: 5)
        with pytest.raises(RuntimeError) as e:
            opt.step(closure)
        log.append(str(e.value).split(" must ")[1])
        log.append(w.detach().numpy().round(5).tolist())
        logs.append(log)
    assert logs[1] == logs[0]


def test_full_backward_hook_without_input_grads_warns_and_sees_none_inputs():
    x = f32(2, 3)
    res = []
    for m in (torch, torchlike):
        lin = det_init(m.nn.Linear(3, 2))
        seen = []
        lin.register_full_backward_hook(
            lambda mod, gin, gout: seen.append((gin, tuple(gout[0].shape))))

        def run():
            lin(m.tensor(x)).sum().backward()
        _, w = caught(run)
        res.append((seen, w, lin.weight.grad))
    assert res[1][0] == res[0][0] == [((None,), (2, 2))]
    assert res[1][1] == res[0][1] and len(res[0][1]) == 1
    assert_close(res[1][2], res[0][2])


# ------------------------------------------------------------------ module API

def test_sequential_repeats_with_mul():
    out = []
    for m in (torch, torchlike):
        s = m.nn.Sequential(m.nn.Linear(2, 2), m.nn.ReLU())
        r = s * 2
        r2 = 3 * m.nn.Sequential(m.nn.Tanh())
        s *= 2
        errs = []
        for bad in (lambda: s * 0, lambda: s * 1.5):
            try:
                bad()
            except (TypeError, ValueError) as e:
                errs.append((type(e).__name__, str(e).replace(m.__name__, "torch")))
        out.append((repr(r), r[0] is r[2], repr(r2), repr(s), s[1] is s[3], errs))
    assert out[1] == out[0]


def test_legacy_weight_norm_warns_and_refuses_a_second_hook():
    res, x = [], f32(2, 3)
    for m in (torch, torchlike):
        lin = det_init(m.nn.Linear(3, 4))
        lin, w = caught(lambda: m.nn.utils.weight_norm(lin))
        try:
            m.nn.utils.weight_norm(lin)
        except RuntimeError as e:
            err = str(e)
        res.append(([(c, msg.replace(m.__name__, "torch")) for c, msg in w], err,
                    [n for n, _ in lin.named_parameters()], lin(m.tensor(x))))
    assert res[1][:3] == res[0][:3]
    assert_close(res[1][3], res[0][3])


@pytest.mark.parametrize("weights,n,replacement", [
    ([0.0, 0.0, 1.0, 2.0], 3, False), ([0.0, 0.0, 0.0], 2, True), ([1.0, 2.0], 3, False),
], ids=["zero_weights_without_replacement", "all_zero", "too_many"])
def test_weighted_random_sampler_draws_and_errors_as_multinomial(weights, n, replacement):
    """torch's sampler is one torch.multinomial call: zero-weight indices are drawn once the
    others are used up (without replacement); its errors are multinomial's."""
    res = []
    for m in (torch, torchlike):
        s = m.utils.data.WeightedRandomSampler(weights, n, replacement=replacement)
        try:
            out = list(s)
            res.append(("ok", len(out), sorted(out)[-2:], all(isinstance(i, int) for i in out)))
        except RuntimeError as e:
            res.append(("err", str(e)))
    assert res[1] == res[0]


def test_random_split_empty_split_warns_at_the_callers_line():
    ws = []
    for m in (torch, torchlike):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m.utils.data.random_split(range(3), [0.5, 0.5, 0.0])
        ws.append([(x.filename, str(x.message)) for x in w])
    assert ws[1] == ws[0] and ws[0][0][0] == __file__


WORKERS_SCRIPT = """\
import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset, TensorDataset, get_worker_info


def main():
    class Local(Dataset):
        def __len__(self):
            return 6

        def __getitem__(self, i):
            return torch.tensor([i, i * 2])

    class Stream(IterableDataset):
        def __iter__(self):
            info = get_worker_info()
            return iter(range(info.id, 6, info.num_workers))

    ds = TensorDataset(torch.arange(6.0))
    dl = DataLoader(ds, batch_size=2, num_workers=2,
                    collate_fn=lambda b: torch.stack([x[0] for x in b]) * 10)
    print([t.tolist() for t in dl])
    print([t.tolist() for t in DataLoader(Local(), batch_size=4, num_workers=2,
                                          worker_init_fn=lambda i: None)])
    print(sorted(t.item() for t in DataLoader(Stream(), num_workers=2)))


if __name__ == "__main__":
    main()
"""


def test_worker_lambdas_and_local_classes_as_under_fork(tmp_path):
    """torch forks its workers on Linux, so a lambda collate_fn / worker_init_fn and classes
    defined in a function work; torchlike's spawned workers get them through cloudpickle."""
    pytest.importorskip("cloudpickle")
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    (tmp_path / "train.py").write_text(WORKERS_SCRIPT)
    env = dict(os.environ, PYTHONPATH=root)
    outs = [subprocess.run([sys.executable, *runner, "train.py"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
            for runner in ([], ["-m", "torchlike"])]
    assert outs[0].returncode == 0, outs[0].stderr
    assert outs[1].returncode == 0, outs[1].stderr
    assert outs[1].stdout == outs[0].stdout


def test_worker_arguments_pickle_cannot_carry_raise_pickles_error():
    """(DIFFERENCES.md, Data loading) a forked torch worker inherits a lock; a spawned one
    cannot get it by any pickler."""
    import threading
    ds = torchlike.utils.data.TensorDataset(torchlike.arange(4.0))
    ds.lock = threading.Lock()
    with pytest.raises(TypeError, match="cannot pickle '_thread.lock' object"):
        list(torchlike.utils.data.DataLoader(ds, num_workers=1))


@pytest.mark.parametrize("call", [
    lambda m: m.nn.functional.mse_loss(m.ones(2, 3), m.ones(3)),
    lambda m: m.nn.functional.l1_loss(m.ones(2, 3), m.ones(1, 3)),
    lambda m: m.nn.functional.kl_div(m.zeros(2, 3), m.ones(2, 3)),
    lambda m: m.nn.functional.dropout2d(m.ones(2, 3, 4)),
    lambda m: m.nn.functional.dropout3d(m.ones(2, 3)),
    lambda m: m.nn.functional.upsample(m.ones(1, 1, 2, 2), scale_factor=2),
    lambda m: m.nn.functional.upsample_bilinear(m.ones(1, 1, 2, 2), scale_factor=2),
], ids=["mse_size", "l1_size", "kl_div_mean", "dropout2d_3d", "dropout3d_2d", "upsample",
        "upsample_bilinear"])
def test_functional_warnings_name_the_callers_line(call):
    ws = []
    for m in (torch, torchlike):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            call(m)
        ws.append([(x.category, x.filename, x.lineno, str(x.message)) for x in w])
    assert ws[1] == ws[0] and ws[0] and ws[0][0][1] == __file__


# ------------------------------------------------------------------ nn.utils.rnn

def test_unpad_sequence_transposes_its_input_in_place_and_copies_by_mask():
    seqs = [f32(n, 2) for n in (3, 5, 2)]
    res = []
    for m in (torch, torchlike):
        ts = [m.tensor(s, requires_grad=True) for s in seqs]
        padded = m.nn.utils.rnn.pad_sequence(ts)
        out = m.nn.utils.rnn.unpad_sequence(padded, m.tensor([3, 5, 2]))
        res.append((tuple(padded.shape), [tuple(o.shape) for o in out],
                    [type(o.grad_fn).__name__ for o in out], out))
    assert res[1][:3] == res[0][:3]
    for a, b in zip(res[1][3], res[0][3]):
        assert_close(a, b)


@pytest.mark.parametrize("lengths,enforce_sorted", [
    ([3, 0, 2], False), ([2, 3], True), ([3, 2, 2, 1], True), ([3, 0, 2], True),
    ([2, 4, 1], True),
], ids=["zero_unsorted", "short_sorted", "long_sorted", "zero_sorted", "unsorted"])
def test_pack_padded_sequence_checks_in_torchs_order(lengths, enforce_sorted):
    x = f32(4, 3, 2)
    errs = []
    for m in (torch, torchlike):
        try:
            m.nn.utils.rnn.pack_padded_sequence(m.tensor(x), m.tensor(lengths),
                                                enforce_sorted=enforce_sorted)
            errs.append(None)
        except RuntimeError as e:
            errs.append(str(e))
    assert errs[1] == errs[0] and errs[0] is not None


# ------------------------------------------------------------------ nn.init

@pytest.mark.parametrize("call", [
    lambda I, t: I.kaiming_uniform_(t, mode="bad"),
    lambda I, t: I.kaiming_normal_(t, mode="FAN_OUT"),
    lambda I, t: I.calculate_gain("leaky_relu", "x"),
    lambda I, t: I.calculate_gain("leaky_relu", True),
    lambda I, t: I._calculate_correct_fan(t, "fan_out"),
    lambda I, t: I._calculate_fan_in_and_fan_out(t),
    lambda I, t: I._no_grad_fill_(t, 0.25),
    lambda I, t: I._no_grad_zero_(t),
    lambda I, t: I.uniform_(t.long()),
    lambda I, t: I.normal_(t.bool()),
    lambda I, t: I.xavier_normal_(t.int()),
    lambda I, t: I.kaiming_uniform_(t.long()),
    lambda I, t: I.trunc_normal_(t.long()),
    lambda I, t: I.orthogonal_(t.long()),
], ids=["bad_mode", "upper_mode", "slope_str", "slope_bool", "correct_fan", "fans", "fill",
        "zero", "uniform_long", "normal_bool", "xavier_int", "kaiming_long", "trunc_long",
        "orthogonal_long"])
def test_init_modes_gains_helpers_and_dtype_errors(call):
    res = []
    for m in (torch, torchlike):
        t = m.ones(6, 4, 3)
        try:
            out = call(m.nn.init, t)
            res.append(("ok", out if not isinstance(out, m.Tensor) else
                        (str(out.dtype).split(".")[-1], tuple(out.shape))))
        except (ValueError, NotImplementedError) as e:
            res.append((type(e).__name__, str(e)))
    assert res[1] == res[0]


def test_consume_prefix_of_a_data_parallel_checkpoint():
    res = []
    for m in (torch, torchlike):
        from importlib import import_module
        utils = import_module(m.__name__ + ".nn.modules.utils")
        net = m.nn.Sequential(m.nn.Linear(2, 3), m.nn.BatchNorm1d(3))
        sd = m.nn.DataParallel(net).state_dict()
        keys = list(sd.keys())
        utils.consume_prefix_in_state_dict_if_present(sd, "module.")
        r = m.nn.Sequential(m.nn.Linear(2, 3), m.nn.BatchNorm1d(3)).load_state_dict(sd)
        res.append((keys, list(sd.keys()), sorted(sd._metadata.keys()), repr(r),
                    utils._list_with_default([None, 4], [1, 2, 3])))
    assert res[1] == res[0]


class _Box:
    def __init__(self, v):
        self.v = v


def test_collate_with_a_custom_type_map():
    """torch >= 2.0's collate(batch, collate_fn_map=...) and default_collate_fn_map, which
    default_collate consults (programs register their own types there)."""
    res = []
    batch = [{"x": np.float32(i), "box": _Box(i), "t": (i, [i * 1.5])} for i in range(3)]
    for m in (torch, torchlike):
        from importlib import import_module
        cm = import_module(m.__name__ + ".utils.data._utils.collate")

        def collate_box(b, *, collate_fn_map):
            return [x.v for x in b]
        own = {**cm.default_collate_fn_map, _Box: collate_box}
        out = cm.collate(batch, collate_fn_map=own)
        try:
            cm.default_collate(batch)
        except TypeError as e:
            err = str(e).replace(m.__name__, "torch")
        cm.default_collate_fn_map[_Box] = collate_box
        try:
            out2 = m.utils.data.default_collate(batch)
            loader = list(m.utils.data.DataLoader(batch, batch_size=2))
        finally:
            del cm.default_collate_fn_map[_Box]
        res.append((repr(out), err, repr(out2), repr(loader),
                    cm.collate_int_fn([1, 2]).dtype == m.int64))
    assert res[1] == res[0]


def test_nll_loss2d_warns_deprecated_and_computes_nll():
    x = f32(2, 3, 2, 2)
    t = np.array([[[0, 1], [2, 1]], [[1, 1], [0, 2]]])
    res = []
    for m in (torch, torchlike):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            loss = m.nn.NLLLoss2d(ignore_index=2)
        res.append(([(x_.category, x_.filename, str(x_.message)) for x_ in w],
                    loss(m.nn.functional.log_softmax(m.tensor(x), 1), m.tensor(t))))
    assert res[1][0] == res[0][0] and len(res[0][0]) == 1
    assert_close(res[1][1], res[0][1])


def test_deprecated_container_subclass_and_concat_dataset_alias_warn():
    res = []
    for m in (torch, torchlike):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")

            class Sub(m.nn.Container):
                pass
            Sub(a=m.nn.Linear(1, 1))
            m.nn.Container(a=m.nn.Linear(1, 1))
            sizes = m.utils.data.ConcatDataset([[1, 2], [3]]).cummulative_sizes
        res.append(([(x.category, x.filename, x.lineno, str(x.message)) for x in w], sizes))
    assert res[1] == res[0] and len(res[0][0]) == 3


def test_sparse_adam_trains_sparse_embeddings():
    """word2vec-style: Embedding/EmbeddingBag(sparse=True) with optim.SparseAdam (torch's
    gradients are sparse; torchlike's dense ones are updated at their nonzero rows)."""
    rng = np.random.default_rng(7)
    batches = [(rng.integers(0, 10, 5), rng.integers(0, 10, 5), rng.integers(0, 10, (5, 2)))
               for _ in range(4)]
    res = []
    for m in (torch, torchlike):
        u = m.nn.Embedding(10, 4, sparse=True, padding_idx=0)
        bag = m.nn.EmbeddingBag(10, 4, mode="sum", sparse=True)
        det_init(u)
        det_init(bag, seed=3)
        opt = m.optim.SparseAdam([u.weight, bag.weight], lr=0.05)
        losses = []
        for c, o, ctx in batches:
            opt.zero_grad()
            loss = -(m.nn.functional.logsigmoid((u(m.tensor(c)) * u(m.tensor(o))).sum(-1))
                     + bag(m.tensor(ctx)).sum(-1) * 0.1).mean()
            loss.backward()
            opt.step()
            losses.append(loss.item())
        res.append((losses, u.weight, bag.weight, opt.state[u.weight]["exp_avg_sq"]))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-5)
    for a, b in zip(res[1][1:], res[0][1:]):
        assert_close(a, b)


class _SizedStream(torchlike.utils.data.IterableDataset):
    def __iter__(self):
        return iter(range(7))

    def __len__(self):
        return 3

    def __repr__(self):
        return "SizedStream()"


class _TorchSizedStream(torch.utils.data.IterableDataset):
    __iter__, __len__, __repr__ = (_SizedStream.__iter__, _SizedStream.__len__,
                                   _SizedStream.__repr__)


@pytest.mark.parametrize("batch_size", [2, None])
def test_iterable_dataset_yielding_past_its_len_warns(batch_size):
    res = []
    for m, ds in ((torch, _TorchSizedStream()), (torchlike, _SizedStream())):
        dl = m.utils.data.DataLoader(ds, batch_size=batch_size)
        n = len(dl)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = [b if batch_size is None else b.tolist() for b in dl]
        res.append((n, out, [(x.filename, str(x.message)) for x in w]))
    assert res[1] == res[0] and res[0][2]


def test_module_share_memory_warns_that_processes_get_copies():
    """(DIFFERENCES.md, Data loading) torch shares the storages; torchlike cannot and says so,
    as Tensor.share_memory_ does."""
    model = torchlike.nn.Linear(2, 2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert model.share_memory() is model
    assert len(w) == 1 and w[0].filename == __file__
    assert "cannot put a tensor in memory shared between processes" in str(w[0].message)
    assert not model.weight.is_shared()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        torchlike.nn.ReLU().share_memory()
    assert not w
