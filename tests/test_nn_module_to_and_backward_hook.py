"""Module.register_backward_hook (the deprecated non-full form, run as torch runs it, with its
warnings), Module.to/cpu/cuda through Tensor.to with torch's argument forms and errors, and
``device=``/``dtype=`` factory kwargs on module constructors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchlike
from oracle import assert_close

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4)).astype(np.float32)


def _copy(tm, lm):
    lm.load_state_dict({k: torchlike.tensor(v.detach().numpy()) for k, v in
                        tm.state_dict().items()})


def _run_hooked(m, mod, x, ret=None):
    seen = []

    def hook(module, grad_input, grad_output):
        seen.append((module is mod, [None if g is None else g.detach().numpy()
                                     if m is torch else np.asarray(g.detach()._data)
                                     for g in grad_input],
                     [np.asarray(g.detach().tolist()) for g in grad_output]))
        if ret is not None:
            return tuple(None if g is None else g * ret for g in grad_input)
    h = mod.register_backward_hook(hook)
    xt = m.tensor(x, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        y = mod(xt)
    (y * y).sum().backward()
    return seen, xt.grad, [str(v.message) for v in w if issubclass(v.category, FutureWarning)], h


@pytest.mark.parametrize("make", [lambda m: m.nn.Linear(4, 5), lambda m: m.nn.ReLU(),
                                  lambda m: m.nn.Tanh(), lambda m: m.nn.Sequential(
                                      m.nn.Linear(4, 2), m.nn.Sigmoid())],
                         ids=["Linear", "ReLU", "Tanh", "Sequential"])
@pytest.mark.parametrize("ret", [None, 2.0])
def test_register_backward_hook_as_torch(make, ret):
    torch.manual_seed(0)
    tm, lm = make(torch), make(torchlike)
    _copy(tm, lm)
    ts, tg, tw, _ = _run_hooked(torch, tm, X, ret)
    ls, lg, lw, _ = _run_hooked(torchlike, lm, X, ret)
    assert lw == tw
    assert len(ls) == len(ts) == 1
    assert ls[0][0] and ts[0][0]
    # the node's grad_inputs, without torch's None entries (DIFFERENCES: next_functions)
    tgi = [g for g in ts[0][1] if g is not None]
    lgi = [g for g in ls[0][1] if g is not None]
    assert len(lgi) == len(tgi)
    for a, b in zip(lgi, tgi):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for a, b in zip(ls[0][2], ts[0][2]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert_close(lg, tg)


def test_backward_hook_handle_and_mixing():
    for m in (torch, torchlike):
        lin = m.nn.Linear(4, 5)
        h = lin.register_backward_hook(lambda *a: None)
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks"):
            lin.register_full_backward_hook(lambda *a: None)
        h.remove()
        calls = []
        lin2 = m.nn.Linear(4, 5)
        lin2.register_full_backward_hook(lambda *a: calls.append(1))
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks"):
            lin2.register_backward_hook(lambda *a: None)


def test_module_to_forms():
    for m in (torch, torchlike):
        lin = m.nn.Linear(2, 2)
        lin.register_buffer("steps", m.tensor(3))
        assert lin.to(m.float64) is lin
        assert lin.weight.dtype == m.float64 and lin.steps.dtype == m.int64
        lin.to("cpu", m.float16)
        assert lin.weight.dtype == m.float16
        lin.to(device="cpu", dtype=m.float32)
        assert lin.bias.dtype == m.float32
        lin.to(m.zeros(1, dtype=m.float64))
        assert lin.weight.dtype == m.float64
        lin.to(m.device("cpu"))
        lin.to("cpu", m.float32, False)
        assert lin.weight.dtype == m.float32
        assert lin.cpu() is lin and lin.weight.device.type == "cpu"
        assert isinstance(lin.weight, m.nn.Parameter)


@pytest.mark.parametrize("call", [
    lambda m, lin: lin.to("float32"), lambda m, lin: lin.to(m.int64),
    lambda m, lin: lin.to(1, 2, 3, 4), lambda m, lin: lin.to("cpu", "float32"),
    lambda m, lin: lin.to("cpu", 3.5), lambda m, lin: lin.to(foo=1, bar="x"),
    lambda m, lin: lin.to(1, 2, 3, foo=1)],
    ids=["str_dtype", "int_dtype", "ints", "two_strs", "float", "kwargs", "args_kwargs"])
def test_module_to_misuse_as_torch(call):
    errs = []
    for m in (torch, torchlike):
        try:
            call(m, m.nn.Linear(2, 2))
        except Exception as e:  # noqa: BLE001
            errs.append(e)
        else:
            errs.append(None)
    te, le = errs
    assert te is not None, "torch did not raise: the case is wrong"
    assert type(le) is type(te), f"torchlike raised {le!r}; torch {te!r}"
    assert str(le) == str(te)


def test_module_cuda_on_cpu_build_raises_as_torch():
    for m in (torch, torchlike):
        if m is torch and torch.cuda.is_available():
            pytest.skip("a CUDA build of torch")
    errs = []
    for m in (torch, torchlike):
        with pytest.raises(Exception) as e:
            m.nn.Linear(2, 2).cuda()
        errs.append(e.value)
    assert type(errs[1]) is type(errs[0])
    assert str(errs[1]) == str(errs[0])


CTORS = [
    ("Linear", (4, 5)), ("Bilinear", (3, 4, 5)), ("Conv1d", (2, 3, 3)), ("Conv2d", (2, 3, 3)),
    ("Conv3d", (2, 3, 2)), ("ConvTranspose2d", (2, 3, 3)), ("BatchNorm1d", (4,)),
    ("BatchNorm2d", (4,)), ("InstanceNorm2d", (4,)), ("LayerNorm", (4,)), ("GroupNorm", (2, 4)),
    ("RMSNorm", (4,)), ("Embedding", (10, 3)), ("EmbeddingBag", (10, 3)), ("PReLU", ()),
    ("LSTM", (4, 3)), ("GRU", (4, 3)), ("RNN", (4, 3)), ("LSTMCell", (4, 3)),
    ("GRUCell", (4, 3)), ("RNNCell", (4, 3)), ("MultiheadAttention", (4, 2)),
    ("TransformerEncoderLayer", (4, 2, 8)), ("TransformerDecoderLayer", (4, 2, 8)),
    ("AdaptiveLogSoftmaxWithLoss", (8, 10, [3, 6])),
]


@pytest.mark.parametrize("name,args", CTORS, ids=[c[0] for c in CTORS])
def test_factory_kwargs_create_parameters_in_that_dtype(name, args):
    for dtype in ("float64", "float16"):
        tm = getattr(torch.nn, name)(*args, device="cpu", dtype=getattr(torch, dtype))
        lm = getattr(torchlike.nn, name)(*args, device="cpu", dtype=getattr(torchlike, dtype))
        td = {k: str(v.dtype) for k, v in tm.state_dict().items()}
        ld = {k: str(v.dtype) for k, v in lm.state_dict().items()}
        assert ld == td


def _module_classes():
    import inspect
    out = []
    for n in sorted(dir(torch.nn)):
        c = getattr(torch.nn, n)
        if (inspect.isclass(c) and not n.startswith("_") and issubclass(c, torch.nn.Module)
                and hasattr(torchlike.nn, n)):
            out.append(n)
    return out


@pytest.mark.parametrize("name", _module_classes())
def test_constructor_signature_as_torch(name):
    """Every constructor takes torch's parameters, in torch's positional order, and torch's
    keyword-only ones (``bias=``, ...) only by keyword."""
    import inspect
    P = inspect.Parameter
    tp = inspect.signature(getattr(torch.nn, name).__init__).parameters
    lp = inspect.signature(getattr(torchlike.nn, name).__init__).parameters
    if any(p.kind is P.VAR_KEYWORD for p in lp.values()) and len(lp) <= 3:
        pytest.skip("forwards *args/**kwargs")
    named = [k for k, p in tp.items() if p.kind not in (P.VAR_POSITIONAL, P.VAR_KEYWORD)]
    missing = [k for k in named if k not in lp]
    assert not missing, f"{name} lacks torch's parameters {missing}"
    pos = [k for k, p in tp.items() if p.kind is P.POSITIONAL_OR_KEYWORD]
    lpos = [k for k, p in lp.items() if p.kind is P.POSITIONAL_OR_KEYWORD]
    assert lpos[:len(pos)] == pos
    kwonly = [k for k, p in tp.items() if p.kind is P.KEYWORD_ONLY]
    assert all(lp[k].kind is P.KEYWORD_ONLY for k in kwonly), f"{name}: {kwonly} keyword-only"


def test_norm_bias_keyword():
    for m in (torch, torchlike):
        bn = m.nn.BatchNorm2d(3, bias=False)
        assert bn.bias is None and bn.weight is not None
        gn = m.nn.GroupNorm(1, 3, bias=False)
        assert gn.bias is None
        inn = m.nn.InstanceNorm1d(3, affine=True, bias=False)
        assert inn.bias is None and inn.weight is not None


def test_an_inplace_op_on_a_full_backward_hooked_output_raises_as_torch():
    """torch wraps the outputs of a module with a full backward hook in a custom Function that
    returns them as-is (views), and refuses an in-place op on them: so does torchlike."""
    def run(m):
        lin = m.nn.Linear(3, 2)
        with m.no_grad():
            lin.weight.fill_(0.5)
            lin.bias.zero_()
        lin.register_full_backward_hook(lambda *a: None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                m.nn.functional.relu(lin(m.ones(2, 3)), inplace=True).sum().backward()
            except RuntimeError as e:
                return str(e).split(" is a view")[0]
        return lin.weight.grad.tolist()
    assert run(torch) == "Output 0 of BackwardHookFunction"
    assert run(torchlike) == "Output 0 of BackwardHookFunction"
