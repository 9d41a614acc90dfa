"""Shape-churn loops (growing context, variable batches, the short last batch) give the same
values as torch and as the jitted (compiled-module) path, also when the program budget evicts.

A new shape is interpreted for its first calls and compiles when it repeats (README "What the
first steps cost"); these tests pin that the values never depend on which tier ran, or on which
programs happened to be compiled, cached or evicted.
"""
import numpy as np
import pytest
import torch

import torchlike
from torchlike import _registry, _tiers


def _gpt(m, vocab=17, d=16, h=2, ctx=16):
    nn, F = m.nn, m.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 2 * d), nn.Linear(2 * d, d)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q, k, v = (t.view(B, T, h, C // h).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / (C // h) ** 0.5)
            mask = m.tril(m.ones(T, T)).view(1, 1, T, T)
            att = F.softmax(att.masked_fill(mask == 0, float("-inf")), dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            x = x + self.proj(y)
            return x + self.out(F.gelu(self.fc(self.ln2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
            self.block = Block()
            self.ln, self.head = nn.LayerNorm(d), nn.Linear(d, vocab)

        def forward(self, idx):
            T = idx.shape[1]
            x = self.tok(idx) + self.pos(m.arange(T))
            return self.head(self.ln(self.block(x)))

    return GPT()


def _twins():
    torch.manual_seed(0)
    tm = _gpt(torch).eval()
    lm = _gpt(torchlike).eval()
    lm.load_state_dict({k: torchlike.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return tm, lm


def _generate(m, model, n):
    """nanoGPT's greedy ``generate``: the context grows by one token per step."""
    idx = m.tensor([[1, 2]])
    last = []
    with m.no_grad():
        for _ in range(n):
            logits = model(idx)[:, -1, :]
            last.append(np.asarray(logits.numpy()))
            idx = m.cat([idx, logits.argmax(-1, keepdim=True)], dim=1)
    return idx.tolist(), np.stack(last)


def test_growing_context_generation_matches_torch_and_the_compiled_path():
    tm, lm = _twins()
    want_idx, want_logits = _generate(torch, tm, 6)
    got_idx, got_logits = _generate(torchlike, lm, 6)
    assert got_idx == want_idx
    np.testing.assert_allclose(got_logits, want_logits, rtol=1e-5, atol=1e-5)
    # the jitted path: the whole forward as one program per length
    c_idx, c_logits = _generate(torchlike, torchlike.compile(lm), 6)
    assert c_idx == got_idx
    np.testing.assert_allclose(c_logits, got_logits, rtol=1e-6, atol=1e-6)


def test_generation_under_a_tight_program_budget_gives_the_same_values(monkeypatch):
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 0)     # every call compiles: the budget binds
    _tm, lm = _twins()
    roomy = _generate(torchlike, lm, 4)
    monkeypatch.setattr(_registry, "MAX_PROGRAMS", 12)
    before = _registry.program_budget()["evictions"]
    tight = _generate(torchlike, lm, 4)
    assert _registry.program_budget()["evictions"] > before   # programs were dropped
    assert tight[0] == roomy[0]
    np.testing.assert_array_equal(tight[1], roomy[1])         # recompiled programs: same bits


@pytest.mark.parametrize("drop_last", [False, True])
def test_variable_batches_and_the_short_last_batch_train_as_torch(drop_last):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((23, 5)).astype(np.float32)
    ys = rng.integers(0, 3, 23)
    torch.manual_seed(0)
    init = {k: v.numpy() for k, v in torch.nn.Sequential(
        torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3)).state_dict().items()}

    def run(m):
        model = m.nn.Sequential(m.nn.Linear(5, 8), m.nn.Tanh(), m.nn.Linear(8, 3))
        model.load_state_dict({k: m.tensor(v) for k, v in init.items()})
        opt = m.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        data = m.utils.data.TensorDataset(m.tensor(xs), m.tensor(ys))
        losses, sizes = [], []
        for bs in (4, 7):           # a new batch size per epoch, each with a short last batch
            for x, y in m.utils.data.DataLoader(data, batch_size=bs, drop_last=drop_last):
                loss = m.nn.functional.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
                sizes.append(len(x))
        return losses, sizes, [p.detach().numpy() for p in model.parameters()]

    want, got = run(torch), run(torchlike)
    assert got[1] == want[1]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    for g, w in zip(got[2], want[2]):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ data movement on the host
#
# Under no grad on the CPU, a data-movement op's first calls at a new shape run its numpy form
# (no program compiled); later calls compile. Both must give torch's values, bit for bit.

_MOVES = {
    "view": lambda m, x: x.view(-1),
    "reshape_noncontig": lambda m, x: x.transpose(0, 1).reshape(-1),
    "transpose": lambda m, x: x.transpose(0, 2),
    "t": lambda m, x: x[0].t(),
    "permute": lambda m, x: x.permute(2, 0, 1),
    "unsqueeze": lambda m, x: x.unsqueeze(1),
    "squeeze_all": lambda m, x: x[:, :1].squeeze(),
    "squeeze_dim": lambda m, x: x[:, :1].squeeze(1),
    "squeeze_dims": lambda m, x: x[:1, :1].squeeze((0, 1)),
    "expand": lambda m, x: x[:, :1].expand(2, 4, 3),
    "clone": lambda m, x: x.clone(),
    "contiguous": lambda m, x: x.transpose(0, 1).contiguous(),
    "flip": lambda m, x: x.flip(0, 2),
    "cat": lambda m, x: m.cat([x, x[:1]], dim=0),
    "stack": lambda m, x: m.stack([x, x], dim=1),
    "unbind": lambda m, x: m.stack(x.unbind(1)[::-1]),
    "split": lambda m, x: x.split([1, 2], dim=2)[1],
    "chunk": lambda m, x: x.chunk(2, dim=1)[1],
    "narrow": lambda m, x: x.narrow(1, 1, 2),
    "select": lambda m, x: x.select(1, -1),
    "diagonal": lambda m, x: x.diagonal(0, 1, 2),
    "getitem_int": lambda m, x: x[1],
    "getitem_basic": lambda m, x: x[..., None, -2:, ::2][:, -1],
    "getitem_tensor": lambda m, x: x[m.tensor([1, 0, 1])],
    "getitem_mask": lambda m, x: x[x.real > 5] if x.dtype != m.bool else x[x],
}
_DTYPES = ["float32", "int64", "bool", "bfloat16", "complex64"]


def _moved(m, name, dtype):
    x = m.arange(24).reshape(2, 4, 3)
    x = (x % 2 == 0) if dtype == "bool" else x.to(getattr(m, dtype))
    with m.no_grad():
        return _MOVES[name](m, x)


def _bits(t):
    if t.dtype == torch.bfloat16:
        t = t.float()
    return t.numpy() if isinstance(t, torch.Tensor) else np.asarray(
        (t.float() if t.dtype == torchlike.bfloat16 else t).numpy())


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("name", sorted(_MOVES))
def test_interpreted_data_movement_gives_torchs_values(name, dtype, monkeypatch):
    want = _bits(_moved(torch, name, dtype))
    got = _moved(torchlike, name, dtype)
    assert tuple(got.shape) == want.shape and str(got.dtype) == f"torch.{dtype}"
    np.testing.assert_array_equal(_bits(got), want)
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 0)        # the compiled path: same bits
    np.testing.assert_array_equal(_bits(_moved(torchlike, name, dtype)), want)


@pytest.mark.usefixtures("strict_eager")
def test_a_new_shape_is_interpreted_then_compiles_once(monkeypatch):
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 3)
    x = torchlike.arange(35.0).reshape(5, 7)      # a shape no other test uses
    before = torchlike._registry.trace_counts("transpose")["fwd"]
    host_before = _tiers.stats()["interpreted"]
    with torchlike.no_grad():
        outs = [x.transpose(0, 1) for _ in range(5)]
    assert _tiers.stats()["interpreted"] - host_before >= 3
    assert _registry.trace_counts("transpose")["fwd"] - before == 1   # the 4th call compiled
    for o in outs:
        np.testing.assert_array_equal(o.numpy(), np.arange(35.0).reshape(5, 7).T)
    # a view made by the interpreter is still a view: writes reach the base
    with torchlike.no_grad():
        v = x.transpose(0, 1)
        v[0, 0] = -1.0
    assert x[0, 0].item() == -1.0


_GRAD_DTYPES = ["float32", "complex64"]


@pytest.mark.parametrize("dtype", _GRAD_DTYPES)
@pytest.mark.parametrize("name", sorted(_MOVES))
def test_interpreted_data_movement_gradients_match_torch(name, dtype, monkeypatch):
    def grad(m):
        x = m.arange(24).reshape(2, 4, 3).to(getattr(m, dtype)).requires_grad_()
        out = _MOVES[name](m, x)
        w = m.arange(out.numel()).reshape(out.shape).to(out.dtype) * (1 + 1j if
                                                                    dtype == "complex64" else 1)
        loss = (out * w).sum()
        (loss.real if dtype == "complex64" else loss).backward()
        return np.asarray(x.grad.numpy())

    want = grad(torch)
    before = _tiers.stats()["interpreted"]
    np.testing.assert_array_equal(grad(torchlike), want)
    assert _tiers.stats()["interpreted"] > before
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 0)        # the compiled path: same bits
    np.testing.assert_array_equal(grad(torchlike), want)


def test_traced_calls_take_the_compiled_path():
    f = torchlike.compile(lambda a: a.transpose(0, 1) * 2)
    f(torchlike.ones(3, 13))
    host_before = _tiers.stats()["interpreted"]
    np.testing.assert_array_equal(f(torchlike.ones(3, 13)).numpy(), 2 * np.ones((13, 3)))
    g = torchlike.compile(lambda a: a.permute(1, 0) + 1)
    np.testing.assert_array_equal(g(torchlike.ones(3, 17)).numpy(), 2 * np.ones((17, 3)))
    assert _tiers.stats()["interpreted"] == host_before


# ------------------------------------------------------------------ random draws at new shapes

_DRAWS = {
    "randn": lambda m: m.randn(7, 5),
    "randn_f64": lambda m: m.randn(3, 11, dtype=m.float64),
    "randn_bf16": lambda m: m.randn(13, dtype=m.bfloat16).float(),
    "randn_c64": lambda m: m.randn(4, 3, dtype=m.complex64),
    "rand": lambda m: m.rand(2, 3, 5),
    "randint": lambda m: m.randint(-4, 9, (6, 7)),
    "randint_i32": lambda m: m.randint(0, 100, (37,), dtype=m.int32),
    "normal_": lambda m: m.nn.init.normal_(m.empty(9, 4), 0.5, 2.0),
    "uniform_": lambda m: m.nn.init.uniform_(m.empty(5, 6), -1.0, 3.0),
    "kaiming": lambda m: m.nn.init.kaiming_uniform_(m.empty(10, 3)),
    "linear": lambda m: m.nn.Linear(6, 19).weight.detach(),
    # samplers whose transform is transcendental (compiled at once: numpy's last bits differ)
    "normal(mean,std)": lambda m: m.normal(m.zeros(5, 3), m.ones(5, 3)),
    "Tensor.normal_": lambda m: m.empty(4, 7).normal_(1.0, 2.0),
    "log_normal_": lambda m: m.empty(4, 7).log_normal_(),
    "exponential_": lambda m: m.empty(4, 7).exponential_(),
    "cauchy_": lambda m: m.empty(4, 7).cauchy_(),
    "geometric_": lambda m: m.empty(4, 7).geometric_(0.3),
    "gamma": lambda m: m.distributions.Gamma(m.ones(4, 7), m.ones(4, 7)).sample(),
}


@pytest.mark.parametrize("name", sorted(_DRAWS))
def test_interpreted_draws_equal_the_compiled_draw(name, monkeypatch):
    def draws():
        out = []
        for _ in range(_tiers.INTERPRET_CALLS + 2):   # across the switch to the compiled draw
            torchlike.manual_seed(5)
            out.append(np.asarray(_DRAWS[name](torchlike).numpy()))
        return out
    check = np.testing.assert_array_equal       # a seeded draw gives the same bits every call
    interpreted = draws()
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 0)
    compiled = draws()
    for a, b in zip(interpreted, compiled):
        check(a, b)
    check(interpreted[0], interpreted[-1])
    np.testing.assert_array_equal(compiled[0], compiled[-1])


@pytest.fixture
def fused_fresh():
    from torchlike import _fused
    _fused.sync()
    _fused.clear()
    _fused.reset_stats()
    with torchlike.eager.fused():
        yield _fused
    _fused.sync()


def test_fused_shapes_taking_turns_compile_a_bounded_number_of_programs(fused_fresh,
                                                                          monkeypatch):
    # A loop over 12 lengths (of at least two elements: one element runs at once), round after
    # round: its segment structure compiles for the first
    # SHAPES_PER_STRUCTURE lengths only (each shape met three times); the others replay through
    # their ops' own tiers. A length the loop then settles on (met twice in a row at its
    # compile decision) compiles still. Values as torch's throughout.
    F = fused_fresh
    monkeypatch.setattr(F, "SHAPES_PER_STRUCTURE", 4)
    got, want = [], []
    for _ in range(4):
        for k in range(2, 14):
            got.append((torchlike.arange(float(k)) * 3).sum().item())
            want.append((torch.arange(float(k)) * 3).sum().item())
    assert got == want
    s = F.stats()
    assert s["compiles"] == 4
    assert s["shape_churn"] == 2 * (12 - 4)      # (the third round and the fourth)
    for _ in range(4):
        assert (torchlike.arange(9.0) * 3).sum().item() == 108.0
    assert F.stats()["compiles"] == 5
    torchlike.eager.wait_compiles()
    before = F.stats()["fused"]
    assert (torchlike.arange(9.0) * 3).sum().item() == 108.0
    assert F.stats()["fused"] == before + 1
