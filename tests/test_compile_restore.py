"""Issue 10 regression: a graph break inside a compiled training step leaves no jax tracer in
any state the trace swapped (parameters, their views and ``.detach()`` aliases, ``.grad`` and its
views, optimizer state, generator state, version counters), and the eager re-run gives what a
plain eager run gives (against torch without dropout, against uncompiled torchlike with the same
seed with dropout).
"""
import warnings

import jax
import numpy as np
import pytest
import torch

import torchlike
from oracle import assert_close


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


def _is_tracer(x):
    return isinstance(x, jax.core.Tracer)


def _no_tracer(t, what):
    assert not _is_tracer(t._data), what
    for v in list(t.__dict__.get("_aliases") or ()):
        assert not _is_tracer(v._data), what + " alias"
        assert v._alias.idx is None or not _is_tracer(v._alias.idx), what + " alias index"
    assert t.grad_fn is None, what + " grad_fn"


def run(lib, p, compiled, steps=3, state=None):
    nn = lib.nn
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Dropout(p), nn.Linear(8, 3))
    model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    opt = lib.optim.Adam(model.parameters(), lr=1e-2)
    # aliases that live across the calls: a view and a detached alias of a parameter
    w_row = model[0].weight[1]
    w_det = model[3].weight.detach()
    seen = []

    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        with lib.no_grad():
            model[0].weight[0].mul_(0.5)              # a write through a view of a parameter
            model[3].weight.t()[0].add_(0.01)         # through a view of a view
            model[0].weight.grad[:, 1].zero_()        # through a view of .grad
            model[3].bias.grad.detach().mul_(2.0)     # through a detached alias of .grad
        opt.step()
        seen.append(loss.item())                      # graph break, after every write above
        return loss

    if compiled:
        step = lib.compile(step)
    rng = np.random.default_rng(3)
    lib.manual_seed(7)
    versions = []
    for _ in range(steps):
        x = rng.standard_normal((4, 6), np.float32)
        y = rng.integers(0, 3, 4)
        step(lib.tensor(x), lib.tensor(y))
        versions.append(model[0].weight._version)
    return dict(model=model, opt=opt, seen=seen, w_row=w_row, w_det=w_det,
                versions=versions)


def _state():
    torch.manual_seed(0)
    nn = torch.nn
    m = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Dropout(0.0), nn.Linear(8, 3))
    return {k: v.detach().numpy().copy() for k, v in m.state_dict().items()}


def _compare(a, b, atol):
    assert_close(np.array(a["seen"]), np.array(b["seen"]), atol=atol, what="losses")
    for (n, pa), pb in zip(a["model"].named_parameters(), b["model"].parameters()):
        assert_close(_np(pa), _np(pb), atol=atol, what=n)
        assert_close(_np(pa.grad), _np(pb.grad), atol=atol, what=n + ".grad")
    oa, ob = a["opt"].state_dict()["state"], b["opt"].state_dict()["state"]
    assert sorted(oa) == sorted(ob)
    for i in oa:
        assert sorted(oa[i]) == sorted(ob[i])
        for k in oa[i]:
            assert_close(_np(oa[i][k]), _np(ob[i][k]), atol=atol, what=f"{i}.{k}")
    # the long-lived aliases read their roots' current values
    assert_close(_np(a["w_row"]), _np(a["model"][0].weight[1]), atol=0, what="view")
    assert_close(_np(a["w_det"]), _np(a["model"][3].weight), atol=0, what="detached alias")
    assert_close(_np(a["w_row"]), _np(b["w_row"]), atol=atol, what="view vs reference")


@pytest.mark.parametrize("p", [0.0, 0.5])
def test_graph_break_after_writes_leaves_no_tracer(p):
    state = _state()
    with pytest.warns(UserWarning, match="graph break"):
        lc = run(torchlike, p, True, state=state)
    le = run(torchlike, p, False, state=state)
    model, opt = lc["model"], lc["opt"]
    for n, t in model.named_parameters():
        _no_tracer(t, n)
        _no_tracer(t.grad, n + ".grad")
    for b in model.buffers():
        _no_tracer(b, "buffer")
    for s in opt.state.values():
        for k, v in s.items():
            if isinstance(v, torchlike.Tensor):
                _no_tracer(v, k)
    g = torchlike.default_generator
    assert not _is_tracer(g._key) and g._base is None
    assert isinstance(g._counter, int)
    # one eager write per in-place op and per optimizer step, as in the plain eager run
    assert lc["versions"] == le["versions"]
    # the same random stream as the uncompiled run (dropout masks) and the same numbers
    _compare(lc, le, atol=1e-6)
    if p == 0.0:
        _compare(lc, run(torch, p, False, state=state), atol=1e-5)


def test_graph_break_random_state_matches_eager():
    """After the break the generator is where the eager run leaves it (the trace's draws are
    not counted)."""
    state = _state()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run(torchlike, 0.5, True, steps=2, state=state)
    after_compiled = torchlike.default_generator.get_state().tolist()
    run(torchlike, 0.5, False, steps=2, state=state)
    assert torchlike.default_generator.get_state().tolist() == after_compiled


# ------------------------------------------------------------------ value checks in programs

def test_out_of_range_indices_raise_torchs_error_and_leave_state():
    """Class indices (cross_entropy) and embedding indices out of range inside a compiled step
    or a compiled module raise torch's IndexError when the program runs; nothing is written
    back (torch raises in the forward, before backward and step). In range, no error."""
    torch.manual_seed(0)
    tnet = torch.nn.Sequential(torch.nn.Embedding(5, 4), torch.nn.Flatten(),
                               torch.nn.Linear(8, 3))
    lnet = torchlike.nn.Sequential(torchlike.nn.Embedding(5, 4), torchlike.nn.Flatten(),
                                   torchlike.nn.Linear(8, 3))
    lnet.load_state_dict({k: torchlike.tensor(v.detach().numpy())
                          for k, v in tnet.state_dict().items()})
    opt = torchlike.optim.SGD(lnet.parameters(), lr=0.1)

    def step(x, y):
        loss = torchlike.nn.functional.cross_entropy(lnet(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    cstep = torchlike.compile(step, fullgraph=True)
    x = np.array([[0, 1], [2, 4]])
    cstep(torchlike.tensor(x), torchlike.tensor([0, 2]))        # compiles, in range
    # later calls run the checks first, as their own program (the errors below come from it)
    assert next(iter(cstep._entries.values())).precheck
    topt = torch.optim.SGD(tnet.parameters(), lr=0.1)
    torch.nn.functional.cross_entropy(tnet(torch.tensor(x)), torch.tensor([0, 2])).backward()
    topt.step()
    topt.zero_grad()
    before = [_np(p).copy() for p in lnet.parameters()]
    for bad_x, bad_y in ((x, [0, 5]), (np.array([[0, 7], [1, 1]]), [0, 1])):
        with pytest.raises(IndexError) as ours:
            cstep(torchlike.tensor(bad_x), torchlike.tensor(bad_y))
        with pytest.raises(IndexError) as theirs:
            torch.nn.functional.cross_entropy(tnet(torch.tensor(bad_x)),
                                              torch.tensor(bad_y))
        assert str(ours.value) == str(theirs.value)
        for a, b in zip(lnet.parameters(), before):
            assert_close(_np(a), b, atol=0, what="state after the error")
        assert all(p.grad is None for p in lnet.parameters())
    assert cstep.trace_count == 1
    cmod = torchlike.compile(lnet, fullgraph=True)
    with pytest.raises(IndexError) as ours:
        cmod(torchlike.tensor(np.array([[0, 9], [1, 1]])))
    with pytest.raises(IndexError) as theirs:
        tnet(torch.tensor(np.array([[0, 9], [1, 1]])))
    assert str(ours.value) == str(theirs.value)
    out = cmod(torchlike.tensor(x))
    assert out.grad_fn.name() == "CompiledFunctionBackward"
    tout = tnet(torch.tensor(x))
    assert_close(_np(out), _np(tout), atol=1e-5)
    (out * out).sum().backward()          # the node's backward with the check output
    (tout * tout).sum().backward()
    for a, b in zip(lnet.parameters(), tnet.parameters()):
        assert_close(_np(a.grad), _np(b.grad), atol=1e-5, what="grad")
    for a, b in zip(lnet.parameters(), tnet.parameters()):
        assert_close(_np(a), _np(b), atol=1e-6, what="parameters")


# ------------------------------------------------------------------ writes into non-state

def _cache_net(nn, lib, hidden=True):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            # a tensor reached only through a function the module holds (not state), or a
            # plain tensor attribute (state, as a buffer is)
            self.get = (lambda box: lambda: box[0])([lib.zeros(3)]) if hidden else None
            self.plain = None if hidden else lib.zeros(3)

        @property
        def cache(self):
            return self.get() if self.get else self.plain

        def forward(self, x):
            y = self.lin(x)
            with lib.no_grad():
                self.cache.copy_(y[0])      # written from inside the program
            return y
    return Net()


@pytest.mark.parametrize("how", ["step", "module"])
def test_write_into_tensor_that_is_not_state_falls_back(how):
    """A tensor the compiled function writes but cannot thread (not a parameter, buffer, plain
    tensor attribute of a module, an item of a plain container or user object it holds,
    optimizer state, argument or named global: here a tensor reached only through a function
    the module holds) makes it run eagerly with one warning, and
    the tensor holds the eager values, not a tracer; under fullgraph=True it raises."""
    torch.manual_seed(0)
    tnet = _cache_net(torch.nn, torch)
    lnet = _cache_net(torchlike.nn, torchlike)
    lnet.load_state_dict({k: torchlike.tensor(v.detach().numpy())
                          for k, v in tnet.state_dict().items()})

    def go(lib, net, compiled, fullgraph=False):
        opt = lib.optim.SGD(net.parameters(), lr=0.1)
        fwd = lib.compile(net, fullgraph=fullgraph) if compiled and how == "module" else net

        def step(x):
            loss = fwd(x).square().sum()
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss
        if compiled and how == "step":
            step = lib.compile(step, fullgraph=fullgraph)
        return [float(step(lib.tensor(np.full((2, 3), 0.5 * i, np.float32))))
                for i in range(1, 4)]

    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ours = go(torchlike, lnet, True)
    msgs = [str(x.message) for x in w if "graph break" in str(x.message)]
    assert len(msgs) == 1 and "not state of the compiled function" in msgs[0]
    theirs = go(torch, tnet, False)
    assert_close(np.array(ours), np.array(theirs), atol=1e-5, what="losses")
    assert not _is_tracer(lnet.cache._data)
    assert_close(_np(lnet.cache), _np(tnet.cache), atol=1e-5, what="cache")
    for a, b in zip(lnet.parameters(), tnet.parameters()):
        assert_close(_np(a), _np(b), atol=1e-5)
    with pytest.raises(torchlike._compile.Unsupported, match="not state"):
        go(torchlike, lnet, True, fullgraph=True)
    assert not _is_tracer(lnet.cache._data)


@pytest.mark.parametrize("how", ["step", "module"])
def test_a_plain_tensor_attribute_of_a_module_is_state(how):
    """A module's tensor attribute that is not a registered buffer (``self.t = torch.zeros(3)``)
    is state, as a buffer is: read at its current value on every call (reassigned or written
    in place between calls) and written back when the program writes it, as torch's."""
    torch.manual_seed(0)
    tnet = _cache_net(torch.nn, torch, hidden=False)
    lnet = _cache_net(torchlike.nn, torchlike, hidden=False)
    lnet.load_state_dict({k: torchlike.tensor(v.detach().numpy())
                          for k, v in tnet.state_dict().items()})

    def go(lib, net, compiled):
        opt = lib.optim.SGD(net.parameters(), lr=0.1)
        fwd = lib.compile(net) if compiled and how == "module" else net

        def step(x):
            loss = (fwd(x).square().sum() + net.scale * 1.0).sum()
            loss.backward()
            opt.step()
            opt.zero_grad()
            return loss
        if compiled and how == "step":
            step = lib.compile(step)
        out = []
        for i in range(1, 4):
            net.scale = lib.tensor(float(i))                # reassigned
            out.append(float(step(lib.tensor(np.full((2, 3), 0.5 * i, np.float32)))))
            out.append(net.plain.tolist())                   # written by the program
        return out

    with warnings.catch_warnings():
        warnings.simplefilter("error")                      # (no graph break)
        warnings.filterwarnings("ignore", message="Converting a tensor with requires_grad")
        ours = go(torchlike, lnet, True)
    theirs = go(torch, tnet, False)
    for a, b in zip(ours, theirs):
        assert_close(np.array(a), np.array(b), atol=1e-5)

