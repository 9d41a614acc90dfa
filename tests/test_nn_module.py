"""nn.Module API vs torch: names and order, state_dict protocol, reprs, hooks and their order."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
import torch

import torchlike
from nn_util import copy_state
from oracle import assert_close, fresh_process_outputs

LIBS = (torch, torchlike)


def both(fn):
    """Run fn(lib) for torch and torchlike; return (torch result, torchlike result)."""
    return fn(torch), fn(torchlike)


def build(lib):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 4)
            self.register_buffer("scale", lib.ones(4))
            self.register_buffer("tmp", lib.zeros(2), persistent=False)
            self.act = nn.ReLU()

        def forward(self, x):
            return self.act(self.fc(x)) * self.scale

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.seq = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Sequential(nn.Linear(4, 2)))
            self.shared = self.seq[0]          # shared module
            self.alpha = nn.Parameter(lib.ones(1))
            self.register_parameter("beta", None)
            self.heads = nn.ModuleDict({"a": nn.Linear(2, 1), "b": nn.Identity()})
            self.plist = nn.ParameterList([nn.Parameter(lib.zeros(2)), lib.ones(3)])
            self.pdict = nn.ParameterDict({"w": nn.Parameter(lib.ones(2, 2))})

        def forward(self, x):
            return self.heads["a"](self.seq(self.block(x))) * self.alpha

    return Net()


def test_named_members_order_and_dedup():
    t, l = both(build)
    assert [n for n, _ in l.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in l.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in l.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in l.named_children()] == [n for n, _ in t.named_children()]
    assert len(list(l.parameters())) == len(list(t.parameters()))
    assert [n for n, _ in l.named_parameters(remove_duplicate=False)] == \
        [n for n, _ in t.named_parameters(remove_duplicate=False)]
    assert [n for n, _ in l.named_modules(remove_duplicate=False)] == \
        [n for n, _ in t.named_modules(remove_duplicate=False)]
    assert [n for n, _ in l.named_parameters(prefix="m", recurse=False)] == \
        [n for n, _ in t.named_parameters(prefix="m", recurse=False)]
    assert [n for n, _ in l.block.named_buffers(prefix="x")] == \
        [n for n, _ in t.block.named_buffers(prefix="x")]


def test_state_dict_keys_and_roundtrip():
    t, l = both(build)
    assert list(l.state_dict().keys()) == list(t.state_dict().keys())
    copy_state(t, l)
    for (k, v), (k2, v2) in zip(l.state_dict().items(), t.state_dict().items()):
        assert k == k2
        assert_close(v, v2, 0, 0, k)
    # state_dict values are detached; keep_vars keeps the Parameters
    sd = l.state_dict()
    assert not sd["alpha"].requires_grad and l.state_dict(keep_vars=True)["alpha"] is l.alpha
    assert list(l.state_dict(prefix="p.").keys()) == list(t.state_dict(prefix="p.").keys())
    # loading keeps parameter identity
    w = l.block.fc.weight
    l.load_state_dict(l.state_dict())
    assert l.block.fc.weight is w


def test_load_state_dict_errors_and_result():
    def run(lib):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        sd = m.state_dict()
        sd = OrderedDict(sd)
        del sd["0.bias"]
        sd["extra"] = lib.zeros(1)
        sd["1.foo"] = lib.zeros(1)
        res = m.load_state_dict(sd, strict=False)
        out = [list(res.missing_keys), list(res.unexpected_keys)]
        try:
            m.load_state_dict(sd)
        except RuntimeError as e:
            out.append(str(e))
        bad = OrderedDict(m.state_dict())
        bad["0.weight"] = lib.zeros(4, 2)
        try:
            m.load_state_dict(bad)
        except RuntimeError as e:
            out.append(str(e))
        out.append(repr(m.load_state_dict(m.state_dict())))
        return out
    t, l = both(run)
    assert l == t


def test_non_persistent_buffer_and_register_errors():
    def run(lib):
        m = lib.nn.Module()
        m.register_buffer("a", lib.ones(2))
        m.register_buffer("b", lib.ones(2), persistent=False)
        out = [list(m.state_dict().keys()), [n for n, _ in m.named_buffers()]]
        for fn in (lambda: m.register_buffer("a.b", lib.ones(1)),
                   lambda: m.register_buffer("", lib.ones(1)),
                   lambda: m.register_buffer("c", 3),
                   lambda: m.register_parameter("p", lib.ones(1)),
                   lambda: m.add_module("x", 3),
                   lambda: setattr(m, "a", 3)):
            try:
                fn()
                out.append("ok")
            except Exception as e:  # noqa: BLE001
                out.append((type(e).__name__, str(e)))
        m.a = lib.zeros(2)
        out.append(m.a.tolist())
        m.a = None
        out.append(list(m.state_dict().keys()))
        return out
    t, l = both(run)
    assert l == t


def test_get_submodule_parameter_buffer():
    t, l = both(build)
    assert type(l.get_submodule("seq.2.0")).__name__ == "Linear"
    assert l.get_parameter("seq.2.0.weight") is l.seq[2][0].weight
    assert l.get_buffer("block.scale") is l.block.scale
    for target in ("seq.9", "block.fc.weight", "nope"):
        with pytest.raises(AttributeError) as te:
            t.get_submodule(target)
        with pytest.raises(AttributeError) as le:
            l.get_submodule(target)
        assert str(le.value) == str(te.value)
    with pytest.raises(AttributeError) as te:
        t.get_parameter("block.scale")
    with pytest.raises(AttributeError) as le:
        l.get_parameter("block.scale")
    assert str(le.value) == str(te.value)


def test_add_module_apply_train_eval_requires_grad():
    def run(lib):
        m = lib.nn.Sequential()
        m.add_module("lin", lib.nn.Linear(2, 2))
        m.register_module("drop", lib.nn.Dropout())
        seen = []
        m.apply(lambda mod: seen.append(type(mod).__name__))
        m.eval()
        flags = [x.training for x in m.modules()]
        m.train()
        flags += [x.training for x in m.modules()]
        m.requires_grad_(False)
        rg = [p.requires_grad for p in m.parameters()]
        try:
            m.train("yes")
        except ValueError as e:
            err = str(e)
        return seen, flags, rg, err, repr(m)
    t, l = both(run)
    assert l == t


def test_zero_grad_and_dtype_conversion():
    for lib in LIBS:
        m = lib.nn.Linear(3, 2)
        m(lib.ones(1, 3)).sum().backward()
        assert m.weight.grad is not None
        m.zero_grad(set_to_none=False)
        assert m.weight.grad is not None and float(m.weight.grad.abs().sum()) == 0
        m.zero_grad()
        assert m.weight.grad is None
        w = m.weight
        m.double()
        assert m.weight is w and str(m.weight.dtype) == "torch.float64"
        assert m(lib.ones(1, 3, dtype=lib.float64)).dtype == lib.float64
        m.float()
        assert str(m.weight.dtype) == "torch.float32"
        m.half()
        assert str(m.bias.dtype) == "torch.float16"
        m.to(lib.float32)
        assert str(m.bias.dtype) == "torch.float32"
        assert m.cpu() is m and m.to("cpu") is m
        bn = lib.nn.BatchNorm1d(2).double()
        assert str(bn.running_mean.dtype) == "torch.float64"
        assert str(bn.num_batches_tracked.dtype) == "torch.int64"


REPR_CTORS = [
    lambda nn: nn.Linear(2, 1),
    lambda nn: nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Sequential(
        nn.Conv2d(1, 2, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(2),
        nn.Sequential(nn.Dropout(0.2), nn.GELU(approximate="tanh")))),
    lambda nn: nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU(), nn.ReLU()]),
    lambda nn: nn.ModuleList(),
    lambda nn: nn.ModuleDict({"x": nn.Tanh(), "y": nn.Softmax(dim=1)}),
    lambda nn: nn.Sequential(OrderedDict(conv=nn.Conv1d(2, 4, 3, dilation=2, groups=2,
                                                        padding_mode="circular", padding=2),
                                         pool=nn.MaxPool2d(2), avg=nn.AvgPool2d(3, 1, 1),
                                         ada=nn.AdaptiveAvgPool2d((2, 3)))),
    lambda nn: nn.Sequential(nn.Embedding(10, 3, padding_idx=0), nn.LayerNorm(3),
                             nn.GroupNorm(1, 3), nn.RMSNorm(3), nn.LeakyReLU(0.2, True),
                             nn.ELU(), nn.CELU(2.0), nn.SELU(), nn.ReLU6(), nn.Hardtanh(),
                             nn.Softplus(), nn.PReLU(3), nn.Threshold(0.1, 0.0), nn.GLU(),
                             nn.Flatten(), nn.Unflatten(1, (2, 2)), nn.Identity(),
                             nn.SiLU(), nn.Mish(), nn.Hardswish(), nn.Hardsigmoid(),
                             nn.Sigmoid(), nn.Tanh(), nn.LogSoftmax(1), nn.Softmin(0),
                             nn.Softsign(), nn.Tanhshrink(), nn.Hardshrink(), nn.Softshrink()),
    lambda nn: nn.Sequential(nn.CrossEntropyLoss(), nn.MSELoss(), nn.BCEWithLogitsLoss(),
                             nn.ConvTranspose2d(2, 3, 3, stride=2, output_padding=1),
                             nn.ZeroPad2d(1), nn.ReflectionPad1d(2), nn.ConstantPad2d(1, 2.0),
                             nn.Upsample(scale_factor=2), nn.PixelShuffle(2),
                             nn.BatchNorm1d(3, affine=False, momentum=None),
                             nn.InstanceNorm2d(3), nn.Dropout2d(), nn.AlphaDropout(0.1),
                             nn.Bilinear(2, 3, 4)),
    lambda nn: nn.ParameterList([nn.Parameter(__import__("torch").zeros(2))])
    if nn.__name__ == "torch.nn" else nn.ParameterList([nn.Parameter(
        __import__("torchlike").zeros(2))]),
]


@pytest.mark.parametrize("i", range(len(REPR_CTORS)))
def test_repr_identical(i):
    t, l = both(lambda lib: repr(REPR_CTORS[i](lib.nn)))
    assert l == t


def test_parameter_containers_repr_and_api():
    def run(lib):
        pl = lib.nn.ParameterList([lib.zeros(2, 3), lib.nn.Parameter(lib.ones(1))])
        pl.append(lib.ones(4))
        pd = lib.nn.ParameterDict({"b": lib.ones(2), "a": lib.nn.Parameter(lib.zeros(3))})
        pd["c"] = lib.ones(1)
        return (repr(pl), repr(pd), len(pl), list(pd.keys()),
                [type(p).__name__ for p in pl], [n for n, _ in pl.named_parameters()],
                [n for n, _ in pd.named_parameters()], repr(lib.nn.Parameter(lib.ones(2))),
                repr(lib.nn.Parameter(lib.ones(2), requires_grad=False)))
    t, l = both(run)
    assert l == t


def test_sequential_and_modulelist_api():
    def run(lib):
        nn = lib.nn
        s = nn.Sequential(nn.Linear(1, 1), nn.ReLU(), nn.Tanh())
        out = [len(s), type(s[-1]).__name__, [type(m).__name__ for m in s[1:]]]
        del s[0]
        out.append(list(s._modules.keys()))
        s.append(nn.Sigmoid())
        s.insert(0, nn.Identity())
        out.append([type(m).__name__ for m in s])
        ml = nn.ModuleList([nn.ReLU()])
        ml.extend([nn.Tanh(), nn.Sigmoid()])
        ml.insert(1, nn.Identity())
        ml += [nn.ReLU()]
        out.append([type(m).__name__ for m in ml])
        out.append([type(m).__name__ for m in ml[1:3]])
        md = nn.ModuleDict([("a", nn.ReLU()), ("b", nn.Tanh())])
        md.update({"c": nn.Sigmoid()})
        out.append((list(md.keys()), "a" in md, len(md)))
        md.pop("a")
        out.append(list(md))
        try:
            s[10]
        except IndexError as e:
            out.append(str(e))
        return out
    t, l = both(run)
    assert l == t


# ------------------------------------------------------------------ hooks

def _hook_run(lib, with_kwargs=False):
    nn = lib.nn
    log = []
    m = nn.Linear(3, 2)
    lin = nn.Sequential(m, nn.ReLU())
    h = []
    h.append(m.register_forward_pre_hook(lambda mod, args: log.append("pre1")))
    h.append(m.register_forward_pre_hook(lambda mod, args: log.append("pre0"), prepend=True))
    h.append(m.register_forward_hook(lambda mod, args, out: log.append("fwd1")))
    h.append(m.register_forward_hook(lambda mod, args, out: log.append("fwd0"), prepend=True))
    h.append(m.register_forward_hook(
        lambda mod, args, kwargs, out: log.append(("fwdkw", sorted(kwargs))), with_kwargs=True))
    h.append(m.register_forward_pre_hook(
        lambda mod, args, kwargs: log.append(("prekw", len(args))), with_kwargs=True))
    h.append(lin.register_forward_hook(lambda mod, args, out: log.append("outer")))
    g = [nn.modules.module.register_module_forward_pre_hook(
        lambda mod, args: log.append("gpre " + type(mod).__name__)),
        nn.modules.module.register_module_forward_hook(
            lambda mod, args, out: log.append("gfwd " + type(mod).__name__))]
    try:
        x = lib.ones(1, 3)
        lin(x)
        for hh in h[:2]:
            hh.remove()
        log.append("--")
        lin(x)
    finally:
        for gg in g:
            gg.remove()
    log.append("--")
    lin(x)
    for hh in h:
        hh.remove()
    log.append("--")
    lin(x)
    return log


def test_forward_hook_order():
    t, l = both(_hook_run)
    assert l == t


def test_forward_hooks_modify_args_and_output():
    def run(lib):
        m = lib.nn.Linear(2, 2)
        with lib.no_grad():
            m.weight.copy_(lib.eye(2)) if hasattr(m.weight, "copy_") else None
        m.weight.data = lib.eye(2)
        m.bias.data = lib.zeros(2)
        m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        m.register_forward_hook(lambda mod, args, out: out + 1)
        m.register_forward_pre_hook(lambda mod, args, kwargs: ((args[0] + 1,), kwargs),
                                    with_kwargs=True)
        return m(lib.tensor([[1.0, 2.0]])).tolist()
    t, l = both(run)
    assert l == t


def test_always_call_forward_hook():
    def run(lib):
        log = []

        class Bad(lib.nn.Module):
            def forward(self, x):
                raise ValueError("boom")

        m = Bad()
        m.register_forward_hook(lambda mod, a, o: log.append(("always", o)), always_call=True)
        m.register_forward_hook(lambda mod, a, o: log.append("never"))
        g = lib.nn.modules.module.register_module_forward_hook(
            lambda mod, a, o: log.append("global-always"), always_call=True)
        try:
            m(lib.ones(1))
        except ValueError as e:
            log.append(str(e))
        finally:
            g.remove()
        return log
    t, l = both(run)
    assert l == t


def _backward_hook_run(lib, modify=False):
    nn = lib.nn
    log = []
    torch_like = lib
    lin = nn.Linear(3, 2)
    with torch_like.no_grad():
        lin.weight.data = torch_like.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]])
        lin.bias.data = torch_like.tensor([0.1, -0.2])

    def pre(mod, gout):
        log.append(("pre", [g.tolist() if g is not None else None for g in gout]))
        if modify:
            return (gout[0] * 2,)

    def post(mod, gin, gout):
        log.append(("post", [g.tolist() if g is not None else None for g in gin],
                    [g.tolist() if g is not None else None for g in gout]))
        if modify and gin[0] is not None:
            return (gin[0] + 1,)

    h1 = lin.register_full_backward_pre_hook(pre)
    h2 = lin.register_full_backward_hook(post)
    x = torch_like.tensor([[1.0, -1.0, 2.0]], requires_grad=True)
    y = lin(x)
    log.append(y.grad_fn.name())
    (y * torch_like.tensor([[1.0, 3.0]])).sum().backward()
    log.append(("xgrad", x.grad.tolist(), lin.weight.grad.tolist()))
    h1.remove()
    h2.remove()
    x.grad = None
    lin(x).sum().backward()
    log.append(("after remove", x.grad.tolist()))
    # input that does not require grad: grad_input is (None,)
    lin.register_full_backward_hook(post)
    lin(torch_like.ones(1, 3)).sum().backward()
    return log


@pytest.mark.parametrize("modify", [False, True])
def test_full_backward_hooks(modify):
    t, l = both(lambda lib: _backward_hook_run(lib, modify))
    assert len(l) == len(t)
    for a, b in zip(l, t):
        if isinstance(b, tuple):
            assert a[0] == b[0]
            np.testing.assert_allclose(np.array(a[1:], dtype=object).tolist()
                                       if False else 0, 0)
            assert repr(a) == repr(b) or _close(a, b), (a, b)
        else:
            assert a == b


def _close(a, b):
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return abs(a - b) < 1e-5
    return a == b


def test_global_backward_hooks_and_multi_io():
    def run(lib):
        nn = lib.nn
        log = []

        class Two(nn.Module):
            def forward(self, a, b, scale):
                return a * b * scale, a + b

        m = Two()
        m.register_full_backward_hook(
            lambda mod, gin, gout: log.append(
                ("mod", [None if g is None else g.tolist() for g in gin],
                 [None if g is None else g.tolist() for g in gout])))
        g1 = nn.modules.module.register_module_full_backward_pre_hook(
            lambda mod, gout: log.append(("gpre", type(mod).__name__)))
        g2 = nn.modules.module.register_module_full_backward_hook(
            lambda mod, gin, gout: log.append(("gpost", type(mod).__name__)))
        try:
            a = lib.tensor([1.0, 2.0], requires_grad=True)
            b = lib.tensor([3.0, 4.0])
            p, s = m(a, b, 2.0)
            p.sum().backward()
        finally:
            g1.remove()
            g2.remove()
        return log
    t, l = both(run)
    assert l == t


def test_handles_context_manager():
    for lib in LIBS:
        log = []
        m = lib.nn.Identity()
        with m.register_forward_hook(lambda *a: log.append(1)):
            m(lib.ones(1))
        m(lib.ones(1))
        assert log == [1]


def test_state_dict_hooks_and_extra_state():
    def run(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(1, 1)
                self.v = 3

            def get_extra_state(self):
                return {"v": self.v}

            def set_extra_state(self, state):
                self.v = state["v"]

        m = M()
        keys = list(m.state_dict().keys())
        sd = m.state_dict()
        sd["_extra_state"] = {"v": 7}
        m.load_state_dict(sd)
        return keys, m.v
    t, l = both(run)
    assert l == t


def test_setattr_reassign_and_delete():
    def run(lib):
        m = lib.nn.Module()
        m.a = lib.nn.Linear(1, 1)
        m.a = None
        out = [list(m._modules.items())]
        m.p = lib.nn.Parameter(lib.ones(1))
        del m.p
        out.append([n for n, _ in m.named_parameters()])
        m.x = lib.nn.ReLU()
        m.x = lib.nn.Parameter(lib.ones(1))   # replaces the module by a parameter
        out.append(([n for n, _ in m.named_parameters()], list(m._modules)))
        try:
            m.x = lib.ones(1)
        except TypeError as e:
            out.append(str(e))
        try:
            m.missing
        except AttributeError as e:
            out.append(str(e))
        return out
    t, l = both(run)
    assert l == t


def test_buffer_class_and_deepcopy_pickle():
    import copy
    import pickle

    def run(lib):
        m = lib.nn.Module()
        m.a = lib.nn.Buffer(lib.ones(2))
        m.b = lib.nn.Buffer(lib.ones(1), persistent=False)
        m.lin = lib.nn.Linear(2, 2)
        c = copy.deepcopy(m)
        p = pickle.loads(pickle.dumps(m))
        out = [list(m.state_dict()), [n for n, _ in m.named_buffers()],
               isinstance(m.a, lib.nn.Buffer), isinstance(lib.ones(1), lib.nn.Buffer),
               c.lin.weight is not m.lin.weight, type(c.lin.weight).__name__,
               c.lin.weight.requires_grad, list(p.state_dict()), [n for n, _ in c.named_buffers()]]
        return out
    t, l = both(run)
    assert l == t


def test_legacy_register_backward_hook_runs_as_torch():
    # the deprecated non-full hook is implemented as torch runs it (issue 12; it used to be
    # refused): it fires once per backward with the output node's gradients, as torch's does
    calls = []
    for lib in (torch, torchlike):
        m = lib.nn.Linear(2, 2)
        h = m.register_backward_hook(lambda mod, gi, go, lib=lib: calls.append(
            (lib.__name__, mod is m, len(go))))
        with pytest.warns(FutureWarning):
            y = m(lib.ones(1, 2, requires_grad=True))
        y.sum().backward()
        h.remove()
        m(lib.ones(1, 2, requires_grad=True)).sum().backward()
    assert calls == [("torch", True, 1), ("torchlike", True, 1)]


def test_global_registration_hooks_and_modules_utils():
    def run(lib):
        log = []
        mm = lib.nn.modules.module
        hs = [mm.register_module_module_registration_hook(
                  lambda m, n, v: log.append(("module", n, type(v).__name__))),
              mm.register_module_parameter_registration_hook(
                  lambda m, n, v: log.append(("param", n, tuple(v.shape)))),
              mm.register_module_buffer_registration_hook(
                  lambda m, n, v: log.append(("buffer", n)))]
        try:
            lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        finally:
            for h in hs:
                h.remove()
        lib.nn.Linear(1, 1)
        u = lib.nn.modules.utils
        log.append((u._pair(3), u._triple((1, 2, 3)), u._single(2)))
        return log
    t, l = both(run)
    assert l == t


def test_load_state_dict_assign_and_forward_with_kwargs():
    def run(lib):
        m = lib.nn.Linear(2, 2)
        sd = {"weight": lib.nn.Parameter(lib.ones(2, 2)), "bias": lib.zeros(2)}
        m.load_state_dict(sd, assign=True)
        out = [m.weight is sd["weight"], type(m.bias).__name__, m.bias.requires_grad,
               m(lib.ones(1, 2)).tolist()]
        return out
    t, l = both(run)
    assert l == t


def test_data_parallel_wrapper_keys_and_repr():
    def run(lib):
        m = lib.nn.DataParallel(lib.nn.Linear(2, 1))
        return list(m.state_dict()), repr(m), type(m.module).__name__
    t, l = both(run)
    assert l == t


def test_a_parameter_shares_its_tensors_storage_as_torchs_does():
    # nn.Parameter(t) shares t's storage: writes to either show in the other, through views,
    # .data, from_pretrained and an optimizer's steps (which still take over the buffer when
    # nothing else holds it)
    from torchlike import _tiers

    def run(m):
        out = []
        x = m.zeros(3)
        p = m.nn.Parameter(x)
        x.add_(1)
        with m.no_grad():
            p.mul_(5)
        out.append((p.detach().tolist(), x.tolist()))
        base = m.arange(12.).reshape(3, 4)
        q, r = m.nn.Parameter(base[1]), m.nn.Parameter(m.ones(4))
        opt = m.optim.Adam([q, r], lr=0.1)
        for _ in range(_tiers.INTERPRET_CALLS + 4):
            opt.zero_grad()
            ((q * r) ** 2).sum().backward()
            opt.step()
        out.append(base.numpy().tolist())
        out.append(r.grad.tolist())
        lin, lin2 = m.nn.Linear(2, 2), m.nn.Linear(2, 2)
        lin2.weight = m.nn.Parameter(lin.weight.data)
        with m.no_grad():
            lin2.weight.add_(1)
        out.append(lin.weight.detach().numpy().tolist() == lin2.weight.detach().numpy().tolist())
        w = m.randn(5, 3)
        emb = m.nn.Embedding.from_pretrained(w, freeze=False)
        with m.no_grad():
            emb.weight.mul_(0)
        out.append(float(w.abs().sum()))
        return out
    ref, got = run(torch), run(torchlike)
    assert got[0] == ref[0] == ([5.0, 5.0, 5.0], [5.0, 5.0, 5.0])
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-5)
    np.testing.assert_allclose(got[2], ref[2], rtol=1e-4)
    assert got[3:] == ref[3:] == [True, 0.0]
    lin = torchlike.nn.Linear(4, 4)        # (a temporary wrapped: a plain root, no alias left)
    assert all(q._alias is None and not q.__dict__.get("_aliases") for q in lin.parameters())


def test_a_parameter_of_a_tensor_in_autograd_shares_its_storage_too():
    def run(m):
        w = m.ones(3, requires_grad=True)
        h = w * 2
        p, q = m.nn.Parameter(w), m.nn.Parameter(h)
        with m.no_grad():
            p.add_(1)
            q.add_(1)
        (p * q).sum().backward()
        return w.tolist(), h.tolist(), p.grad.tolist(), q.grad.tolist(), p.is_leaf, q.is_leaf
    assert run(torchlike) == run(torch)


MODULE_TO_FORMS = {
    "python_type": lambda m, L: L.to(float),
    "tensor_keyword": lambda m, L: L.to(tensor=m.zeros(1, dtype=m.float64)),
    "copy_refused": lambda m, L: L.to(m.float64, copy=True),
    "keywords_sorted_in_the_message": lambda m, L: L.to(zeta=1, alpha=2),
    "positional_then_keyword": lambda m, L: L.to(m.float64, zeta=1),
    "numpy_type": lambda m, L: L.to(__import__("numpy").float64),
    "device_dtype_flag": lambda m, L: L.to("cpu", m.float64, True),
}


@pytest.mark.parametrize("name", MODULE_TO_FORMS)
def test_module_to_parses_as_tensor_to(name):
    """Module.to parses its arguments as torch's _parse_to (Tensor.to's overloads, no copy)."""
    from oracle import same_as_torch

    def run(m):
        p = next(MODULE_TO_FORMS[name](m, m.nn.Linear(2, 2)).parameters())
        return str(p.dtype).replace("torchlike", "torch"), str(p.device)
    same_as_torch(run)


def test_assignment_errors_name_the_tensor_type_as_torch_does():
    # torch.typename: a tensor's legacy type name for every dtype (CharTensor, BFloat16Tensor...)
    def run(lib):
        m = lib.nn.Linear(1, 1)
        m.register_buffer("b", lib.ones(1))
        out = []
        for dtype in (lib.int8, lib.uint8, lib.bfloat16, lib.float16, lib.complex64, lib.bool,
                      lib.int16):
            v = lib.ones(1, dtype=dtype)
            for fn in (lambda: setattr(m, "weight", v), lambda: m.register_parameter("p", v),
                       lambda: setattr(m, "b", np.ones(1)), lambda: m.add_module("x", v)):
                try:
                    fn()
                except TypeError as e:
                    out.append(str(e))
        for name in (1, 2.5, None):
            for fn in (lambda: m.register_buffer(name, None),
                       lambda: m.register_parameter(name, None)):
                try:
                    fn()
                except TypeError as e:
                    out.append(str(e))
        return out
    t, l = both(run)
    assert l == t and any("CharTensor" in s for s in t)


def test_dir_lists_what_torchs_does():
    def run(lib):
        m = lib.nn.Sequential(lib.nn.Linear(1, 1))
        m.forward = lambda x: x            # an instance attribute shadowing the class's
        m.register_buffer("buf", None)
        m.extra = 1
        names = dir(m)
        return ([k for k in names if not k.startswith("_")],
                [k for k in names if k in ("forward", "buf", "extra", "_modules", "0")],
                lib.nn.Module.T_destination.__name__)
    t, l = both(run)
    assert l == t


def test_unpickling_an_old_module_fills_in_the_hook_dicts():
    # a module pickled before these attributes existed: torch's __setstate__ adds them
    def run(lib):
        lib.manual_seed(0)
        m = lib.nn.Linear(2, 1)
        state = m.__getstate__()
        for k in ("_forward_pre_hooks", "_forward_hooks_with_kwargs", "_state_dict_hooks",
                  "_forward_hooks_always_called", "_state_dict_pre_hooks",
                  "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks",
                  "_non_persistent_buffers_set", "_is_full_backward_hook",
                  "_backward_pre_hooks", "_forward_pre_hooks_with_kwargs"):
            del state[k]
        old = type(m).__new__(type(m))
        old.__setstate__(state)
        log = []
        old.register_forward_hook(lambda *a: log.append("hook"))
        old(lib.ones(2)).sum().backward()
        old.load_state_dict(old.state_dict())
        return (log, list(old.state_dict()), old._is_full_backward_hook,
                sorted(k for k in old.__dict__ if "hook" in k))
    t, l = both(run)
    assert l == t


def _members(mod):
    return (list(mod._parameters), list(mod._buffers), list(mod._modules),
            sorted(mod._non_persistent_buffers_set), list(mod.state_dict()),
            "plain" in mod.__dict__)


def test_buffer_assignment_goes_through_register_buffer_as_torchs():
    def run(lib):
        nn = lib.nn
        out = []
        m = nn.Module()
        m.plain = 5
        m.register_buffer("nb", lib.zeros(1), persistent=False)
        for name, value in (("plain", nn.Buffer(lib.ones(1))),      # an attribute exists
                            ("nb", lib.ones(2)),                    # stays non-persistent
                            ("nb", nn.Buffer(lib.ones(3)))):        # the Buffer's own flag
            try:
                setattr(m, name, value)
                out.append("ok")
            except Exception as e:  # noqa: BLE001
                out.append((type(e).__name__, str(e)))
            out.append(_members(m))
        # register_buffer's persistent argument decides, not a Buffer's flag
        m.register_buffer("bb", nn.Buffer(lib.ones(1), persistent=False), persistent=True)
        out.append(_members(m))

        log = []

        class Overrides(nn.Module):
            def register_buffer(self, name, tensor, persistent=True):
                log.append((name, persistent))
                super().register_buffer(name, tensor, persistent)

        class NoPersistent(nn.Module):
            def register_buffer(self, name, tensor):
                log.append(name)
                super().register_buffer(name, tensor)
        a = Overrides()
        a.x = nn.Buffer(lib.ones(1), persistent=False)
        a.x = lib.zeros(1)
        b = NoPersistent()
        b.x = nn.Buffer(lib.ones(1))
        b.x = lib.zeros(1)
        try:
            b.y = nn.Buffer(lib.ones(1), persistent=False)
        except RuntimeError as e:
            log.append(str(e))
        out += [log, _members(a), _members(b)]
        return out
    t, l = both(run)
    assert l == t


def test_setting_a_child_module_to_none_runs_the_registration_hooks():
    def run(lib):
        nn = lib.nn
        log = []
        m = nn.Module()
        m.c = nn.ReLU()
        h = nn.modules.module.register_module_module_registration_hook(
            lambda mod, name, v: log.append((name, type(v).__name__)))
        try:
            m.c = None
            m.d = nn.Tanh()
            m.add_module("e", None)
        finally:
            h.remove()
        return log, list(m._modules)
    t, l = both(run)
    assert l == t


_GLOBAL_NON_FULL = """
import importlib, sys
lib = importlib.import_module(sys.argv[1])
mm = lib.nn.modules.module
log = []
lib.manual_seed(0)
lin = lib.nn.Linear(2, 2)
lin.register_full_backward_pre_hook(lambda mod, go: log.append("local-pre"))
mm.register_module_full_backward_pre_hook(lambda mod, go: log.append("global-pre"))
h = mm.register_module_backward_hook(
    lambda mod, gi, go: log.append(("global", type(mod).__name__, len(gi), len(go))))
lin(lib.ones(1, 2, requires_grad=True)).sum().backward()
h.remove()
try:          # the first global kind stays the only one allowed, even with no hook left
    mm.register_module_full_backward_hook(lambda *a: None)
except RuntimeError as e:
    log.append(str(e))
print(log)
"""


def test_global_non_full_backward_hook_as_torchs():
    # (a fresh process each: the kind of the global backward hooks is set once a process)
    out = fresh_process_outputs(_GLOBAL_NON_FULL)
    assert out["torchlike"] == out["torch"] and "global" in out["torch"]


def test_call_super_init_passes_arguments_on_to_the_next_class():
    def run(lib):
        log = []

        class Mixin:
            def __init__(self, *args, **kwargs):
                log.append((args, kwargs))
                super().__init__()

        class Cooperative(lib.nn.Module, Mixin):
            call_super_init = True

            def __init__(self):
                super().__init__(1, x=2)

        class Plain(lib.nn.Module, Mixin):
            def __init__(self):
                super().__init__()
        Cooperative()
        Plain()                         # call_super_init False: the mixin is not called
        for args, kwargs in (((1,), {}), ((), {"x": 2})):
            class Extra(lib.nn.Module):
                def __init__(self):
                    super().__init__(*args, **kwargs)
            try:
                Extra()
            except TypeError as e:
                log.append(str(e))
        return log
    t, l = both(run)
    assert l == t


def _signature(fn):
    import inspect
    return [(p.name, p.kind, p.default is inspect.Parameter.empty,
             p.default if isinstance(p.default, (bool, int, str, type(None))) else None)
            for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("name", ["Module", "Sequential", "ModuleList", "ModuleDict",
                                  "ParameterList", "ParameterDict"])
def test_public_method_signatures_are_torchs(name):
    # parameter names, kinds, which are required and simple defaults (modules(remove_duplicate),
    # to_empty's required keyword device, forward's positional-only placeholder)
    t_cls, l_cls = getattr(torch.nn, name), getattr(torchlike.nn, name)
    diffs = []
    for attr in dir(t_cls):
        if attr.startswith("_") and attr not in ("__init__", "__call__", "_apply",
                                                 "_load_from_state_dict", "_named_members",
                                                 "_save_to_state_dict"):
            continue
        t_fn = getattr(t_cls, attr)
        if not callable(t_fn) or isinstance(t_fn, type):
            continue
        l_fn = getattr(l_cls, attr, None)
        if l_fn is None or _signature(l_fn) != _signature(t_fn):
            diffs.append(attr)
    assert diffs == []


def test_unimplemented_forward_and_duplicate_modules_as_torch():
    def run(lib):
        nn = lib.nn
        out = [nn.Module.forward.__name__]
        for call in (lambda: nn.Module()(1), lambda: nn.Module()(x=1),
                     lambda: nn.Linear(1, 1).to_empty()):
            try:
                call()
            except (NotImplementedError, TypeError) as e:
                out.append((type(e).__name__, str(e)))
        r = nn.ReLU()
        s = nn.Sequential(r, nn.Sequential(r))
        out += [len(list(s.modules())), len(list(s.modules(remove_duplicate=False)))]
        return out
    t, l = both(run)
    assert l == t
