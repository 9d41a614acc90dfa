"""torchlike.save / torchlike.load against real torch's checkpoint format, both directions."""
import io
import os
import pickle
import sys
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch

import torchlike

R = np.random.default_rng(7)
NP_DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
             "uint8", "bool", "complex64", "complex128"]


def _np_data(name, shape=(3, 4)):
    if name == "bool":
        return R.random(shape) > 0.5
    if name.startswith("complex"):
        return (R.standard_normal(shape) + 1j * R.standard_normal(shape)).astype(name)
    if name in ("float32", "float64", "float16"):
        return R.standard_normal(shape).astype(name)
    if name == "bfloat16":
        return R.standard_normal(shape).astype(np.float32)
    info = np.iinfo(name)
    return R.integers(max(info.min, -1000), min(info.max, 1000), shape).astype(name)


def _make(m, name, shape=(3, 4)):
    a = _np_data(name, shape)
    t = m.tensor(a.copy())
    if name == "bfloat16":
        t = t.to(getattr(m, "bfloat16"))
    return t


def _np(t):
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return (t.float() if t.dtype == torch.bfloat16 else t).numpy().copy()
    a = np.array(t.detach()._data)
    return a.astype(np.float32) if t.dtype is torchlike.bfloat16 else a


def assert_same(ours, theirs, path="obj"):
    """Structure, tensor dtypes, shapes, values and requires_grad equal across libraries."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, torchlike.Tensor), f"{path}: {type(ours)}"
        assert str(ours.dtype) == str(theirs.dtype), f"{path}: {ours.dtype} != {theirs.dtype}"
        assert tuple(ours.shape) == tuple(theirs.shape), path
        assert ours.requires_grad == theirs.requires_grad, path
        assert isinstance(ours, torchlike.nn.Parameter) == isinstance(theirs, torch.nn.Parameter)
        np.testing.assert_array_equal(_np(ours), _np(theirs), err_msg=path)
    elif isinstance(theirs, dict):
        assert type(ours).__name__ == type(theirs).__name__, path
        assert list(ours) == list(theirs), path
        for k in theirs:
            assert_same(ours[k], theirs[k], f"{path}[{k!r}]")
    elif isinstance(theirs, (list, tuple)) and not isinstance(theirs, torch.Size):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), path
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert_same(a, b, f"{path}[{i}]")
    elif isinstance(theirs, (torch.dtype, torch.Size, torch.device)):
        assert str(ours) == str(theirs) or repr(ours) == repr(theirs), path
    else:
        assert type(ours) is type(theirs) and ours == theirs, f"{path}: {ours!r} != {theirs!r}"


def _payload(m):
    """The same nested checkpoint built with torch or torchlike."""
    rs = np.random.default_rng(11)
    global R
    R = rs
    tensors = OrderedDict((n, _make(m, n)) for n in NP_DTYPES)
    p = m.nn.Parameter(m.tensor(np.arange(6, dtype=np.float32).reshape(2, 3)))
    frozen = m.nn.Parameter(m.tensor([1.0, 2.0]), requires_grad=False)
    return {
        "tensors": tensors,
        "scalar0d": m.tensor(3.5),
        "int0d": m.tensor(7),
        "empty": m.zeros(0, 3),
        "leaf_rg": m.tensor([1.0, -2.0], requires_grad=True),
        "params": [p, frozen],
        "nested": {"list": [1, 2.5, "s", None, True, (3, "t")], "bytes": b"\x00\x01",
                   "deep": {"x": {"y": [m.ones(2, 2, dtype=m.float64)]}}},
        "shared": [tensors["float32"], tensors["float32"]],
        "dtype": m.float16, "size": m.Size([2, 5]),
        "epoch": 12, "lr": 0.125, "name": "run-1",
    }


def test_torch_to_torchlike_all_dtypes(tmp_path):
    f = tmp_path / "torch.pt"
    ref = _payload(torch)
    torch.save(ref, f)
    got = torchlike.load(f)
    assert_same(got, ref)
    assert got["shared"][0] is got["shared"][1]


def test_torchlike_to_torch_weights_only(tmp_path):
    f = tmp_path / "tl.pt"
    ours = _payload(torchlike)
    torchlike.save(ours, f)
    got = torch.load(f, weights_only=True)
    assert_same(ours, got)
    assert got["shared"][0] is got["shared"][1]
    # and torchlike reads its own file back
    assert_same(torchlike.load(f), got)


def test_views_offsets_and_shared_storage_from_torch():
    base = torch.arange(60, dtype=torch.float32).reshape(5, 12)
    obj = {"base": base, "t": base.t(), "slice": base[1:4, 2::3], "row": base[3],
           "exp": torch.ones(3, 1).expand(3, 4), "i64": torch.arange(10)[1::2]}
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    assert_same(torchlike.load(buf), obj)


def test_file_objects_both_directions():
    buf = io.BytesIO()
    torchlike.save({"w": torchlike.ones(2, 2)}, buf)
    buf.seek(0)
    assert torch.equal(torch.load(buf, weights_only=True)["w"], torch.ones(2, 2))
    buf2 = io.BytesIO()
    torch.save([torch.full((2,), 3, dtype=torch.int64)], buf2)
    buf2.seek(0)
    out = torchlike.load(buf2)
    assert out[0].dtype is torchlike.int64 and out[0].tolist() == [3, 3]


def test_archive_layout_matches_torch(tmp_path):
    f = tmp_path / "a.pt"
    torchlike.save({"w": torchlike.ones(3), "b": torchlike.zeros(2, dtype=torchlike.int64)}, f)
    with zipfile.ZipFile(f) as z:
        names = z.namelist()
        assert {"archive/data.pkl", "archive/byteorder", "archive/version",
                "archive/data/0", "archive/data/1"} <= set(names)
        assert z.read("archive/byteorder") == b"little"
        for info in z.infolist():
            assert info.compress_type == zipfile.ZIP_STORED
            if "/data/" in info.filename:
                start = info.header_offset + 30 + len(info.filename) + len(info.extra)
                assert start % 64 == 0
        assert np.frombuffer(z.read("archive/data/0"), "<f4").tolist() == [1.0, 1.0, 1.0]


def test_module_state_dict_both_directions(tmp_path):
    x = R.standard_normal((5, 4)).astype(np.float32)
    tl_lin = torchlike.nn.Linear(4, 3)
    t_lin = torch.nn.Linear(4, 3)
    f = tmp_path / "torch_linear.pt"
    torch.save(t_lin.state_dict(), f)
    tl_lin.load_state_dict(torchlike.load(f))
    np.testing.assert_allclose(_np(tl_lin(torchlike.tensor(x))),
                               _np(t_lin(torch.tensor(x))), rtol=1e-6, atol=1e-6)
    tl_lin2 = torchlike.nn.Linear(4, 3)
    f2 = tmp_path / "tl_linear.pt"
    torchlike.save(tl_lin2.state_dict(), f2)
    t_lin.load_state_dict(torch.load(f2, weights_only=True))
    np.testing.assert_allclose(_np(tl_lin2(torchlike.tensor(x))),
                               _np(t_lin(torch.tensor(x))), rtol=1e-6, atol=1e-6)


def _grads(step, shapes):
    rs = np.random.default_rng(100 + step)
    return [rs.standard_normal(s).astype(np.float32) for s in shapes]


@pytest.mark.parametrize("direction", ["torch_to_torchlike", "torchlike_to_torch"])
def test_optimizer_and_scheduler_checkpoint_cross_library(tmp_path, direction):
    """Train 10 steps in one library, checkpoint, resume 10 steps in the other."""
    shapes = [(3, 4), (3,)]
    src, dst = (torch, torchlike) if direction == "torch_to_torchlike" else (torchlike, torch)

    def build(m, init):
        ps = [m.tensor(a.copy(), requires_grad=True) for a in init]
        opt = m.optim.AdamW(ps, lr=0.05, amsgrad=True)
        sched = m.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        return ps, opt, sched

    def train(m, ps, opt, sched, steps):
        for s in steps:
            for p, g in zip(ps, _grads(s, shapes)):
                p.grad = m.tensor(g)
            opt.step()
            sched.step()

    init = [np.ones(s, np.float32) * 0.3 for s in shapes]
    ref = build(torch, init)
    train(torch, *ref, range(20))
    ps, opt, sched = build(src, init)
    train(src, ps, opt, sched, range(10))
    f = tmp_path / "ckpt.pt"
    src.save({"params": [p.detach() for p in ps], "opt": opt.state_dict(),
              "sched": sched.state_dict()}, f)
    ck = dst.load(f, weights_only=True)
    ps2, opt2, sched2 = build(dst, [_np(p) for p in ck["params"]])
    opt2.load_state_dict(ck["opt"])
    sched2.load_state_dict(ck["sched"])
    train(dst, ps2, opt2, sched2, range(10, 20))
    for a, b in zip(ps2, ref[0]):
        np.testing.assert_allclose(_np(a), _np(b), rtol=2e-5, atol=2e-6)
    assert sched2.get_last_lr() == ref[2].get_last_lr()


# ---------------------------------------------------------------------------- refusals
class _Evil:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def test_malicious_pickle_in_archive_refused(tmp_path):
    marker = tmp_path / "pwned"
    f = tmp_path / "evil.pt"
    torch.save({"w": torch.ones(2), "x": _Evil(marker)}, f)
    with pytest.raises(pickle.UnpicklingError):
        torch.load(f, weights_only=True)          # the oracle refuses it too
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        torchlike.load(f)
    with pytest.raises(pickle.UnpicklingError, match="posix.system|os.system"):
        torchlike.load(f, weights_only=True)
    assert not marker.exists()


def test_malicious_bare_pickle_refused(tmp_path):
    marker = tmp_path / "pwned2"
    f = tmp_path / "evil.pkl"
    f.write_bytes(pickle.dumps(_Evil(marker), protocol=2))
    with pytest.raises(pickle.UnpicklingError):
        torch.load(f, weights_only=True)
    with pytest.raises(pickle.UnpicklingError):
        torchlike.load(f)
    assert not marker.exists()


def test_weights_only_false_allows_plain_python_objects(tmp_path):
    f = tmp_path / "obj.pt"
    torchlike.save({"c": OrderedDict(a=1), "s": {1, 2}, "cx": 1 + 2j, "fn": np.float64}, f)
    with pytest.raises(pickle.UnpicklingError):
        torchlike.load(f)
    out = torchlike.load(f, weights_only=False)
    assert out["s"] == {1, 2} and out["fn"] is np.float64


@pytest.mark.parametrize("cut", [0, 10, 0.5, 0.9, -22])
def test_truncated_file_clear_error(tmp_path, cut):
    f = tmp_path / "t.pt"
    torchlike.save({"w": torchlike.ones(100)}, f)
    data = f.read_bytes()
    n = cut if isinstance(cut, int) and cut >= 0 else (
        int(len(data) * cut) if isinstance(cut, float) else len(data) + cut)
    g = tmp_path / "trunc.pt"
    g.write_bytes(data[:n])
    with pytest.raises((RuntimeError, EOFError)) as ours:
        torchlike.load(g)
    with pytest.raises((RuntimeError, EOFError)) as theirs:
        torch.load(g, weights_only=True)
    assert type(ours.value) is type(theirs.value)
    if n > 0:
        assert "zip archive" in str(ours.value) or "corrupt" in str(ours.value)


def test_corrupt_record_detected(tmp_path):
    f = tmp_path / "c.pt"
    torchlike.save({"w": torchlike.arange(64, dtype=torchlike.float32)}, f)
    data = bytearray(f.read_bytes())
    with zipfile.ZipFile(f) as z:
        info = z.getinfo("archive/data/0")
        start = info.header_offset + 30 + len(info.filename) + len(info.extra)
    data[start + 5] ^= 0xFF
    g = tmp_path / "c2.pt"
    g.write_bytes(bytes(data))
    with pytest.raises(RuntimeError, match="corrupt"):
        torchlike.load(g)


def test_garbage_and_missing_records(tmp_path):
    g = tmp_path / "garbage.pt"
    g.write_bytes(b"this is not a checkpoint at all" * 10)
    with pytest.raises(RuntimeError, match="Invalid magic number"):
        torchlike.load(g)
    h = tmp_path / "missing.pt"
    buf = io.BytesIO()
    torchlike.save({"w": torchlike.ones(3)}, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as zin, zipfile.ZipFile(h, "w") as zout:
        for n in zin.namelist():
            if not n.endswith("data/0"):
                zout.writestr(n, zin.read(n))
    with pytest.raises(RuntimeError, match="missing"):
        torchlike.load(h)


def test_save_is_atomic(tmp_path):
    f = tmp_path / "keep.pt"
    torchlike.save({"w": torchlike.ones(2)}, f)
    before = f.read_bytes()
    with pytest.raises(Exception):
        torchlike.save({"w": torchlike.zeros(2), "bad": lambda: 0}, f)
    assert f.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["keep.pt"]


@pytest.mark.parametrize("ml", ["cpu", torchlike.device("cpu"), {"cpu": "cpu"},
                                lambda storage, loc: storage, None])
def test_map_location_accepted(tmp_path, ml):
    f = tmp_path / "m.pt"
    torch.save({"w": torch.arange(4.0)}, f)
    assert torchlike.load(f, map_location=ml)["w"].tolist() == [0.0, 1.0, 2.0, 3.0]


# ---------------------------------------------------------------------------- nn layers
LAYERS = [("Linear", (4, 3), {}), ("Linear", (4, 3), {"bias": False}),
          ("Conv1d", (2, 3, 3), {}), ("Conv2d", (2, 3, 3), {}), ("Conv3d", (1, 2, 2), {}),
          ("ConvTranspose1d", (2, 3, 3), {}), ("ConvTranspose2d", (2, 3, 3), {}),
          ("BatchNorm1d", (5,), {}), ("BatchNorm2d", (3,), {}), ("BatchNorm3d", (2,), {}),
          ("LayerNorm", (6,), {}), ("GroupNorm", (2, 4), {}), ("RMSNorm", (4,), {}),
          ("InstanceNorm1d", (3,), {"affine": True, "track_running_stats": True}),
          ("Embedding", (10, 4), {}), ("Bilinear", (3, 4, 5), {}), ("PReLU", (), {}),
          ("Sequential", None, {})]
LAYERS = [c for c in LAYERS if hasattr(torchlike.nn, c[0])]


def _layer(m, name, args, kw):
    if name == "Sequential":
        return m.nn.Sequential(m.nn.Linear(3, 4), m.nn.ReLU(), m.nn.Linear(4, 2))
    return getattr(m.nn, name)(*args, **kw)


def _randomize(sd, seed):
    rs = np.random.default_rng(seed)
    out = OrderedDict()
    for k, v in sd.items():
        if v.dtype == torch.int64:
            out[k] = torch.tensor(rs.integers(0, 100, tuple(v.shape)))
        else:
            out[k] = torch.tensor(rs.standard_normal(tuple(v.shape)).astype(np.float32))
    return out


@pytest.mark.parametrize("name,args,kw", LAYERS, ids=[c[0] + str(i) for i, c in
                                                     enumerate(LAYERS)])
def test_layer_state_dicts_both_directions(tmp_path, name, args, kw):
    t_mod = _layer(torch, name, args, kw)
    t_mod.load_state_dict(_randomize(t_mod.state_dict(), 1))
    f = tmp_path / "t.pt"
    torch.save(t_mod.state_dict(), f)
    l_mod = _layer(torchlike, name, args, kw)
    loaded = torchlike.load(f)
    l_mod.load_state_dict(loaded, strict=True)
    assert_same(l_mod.state_dict(), t_mod.state_dict())
    # and back: torchlike's (re-randomized) state_dict into a torch module
    l_mod.load_state_dict(OrderedDict((k, torchlike.tensor(v.numpy())) for k, v in
                                      _randomize(t_mod.state_dict(), 2).items()))
    g = tmp_path / "l.pt"
    torchlike.save(l_mod.state_dict(), g)
    t_mod2 = _layer(torch, name, args, kw)
    t_mod2.load_state_dict(torch.load(g, weights_only=True), strict=True)
    assert_same(l_mod.state_dict(), t_mod2.state_dict())


# ---------------------------------------------------------------------------- resume
def _mlp(m, init):
    model = m.nn.Sequential(m.nn.Linear(4, 8), m.nn.Tanh(), m.nn.Linear(8, 1))
    model.load_state_dict(OrderedDict((k, m.tensor(v.copy())) for k, v in init.items()))
    opt = m.optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.05, amsgrad=True)
    sched = m.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.05, total_steps=40)
    return model, opt, sched


def _step(m, model, opt, sched, xb, yb):
    opt.zero_grad()
    loss = ((model(xb) - yb) ** 2).mean()
    loss.backward()
    opt.step()
    sched.step()
    return float(loss.detach())


def test_resume_training_equals_straight_run(tmp_path, monkeypatch):
    """N steps, save model/optimizer/scheduler/generator, fresh objects load them, M more
    steps: equal to N+M steps straight through, in torchlike, and close to torch's run.
    Bit-equal runs need one tier throughout (DIFFERENCES.md): the interpreter is off, and so
    is fused eager (a segment's first meeting runs op by op, its repeats as one program)."""
    from torchlike import _tiers
    monkeypatch.setattr(_tiers, "INTERPRET_CALLS", 0)
    old_mode = torchlike.eager.set_mode("strict")
    try:
        _resume_training_equals_straight_run(tmp_path)
    finally:
        torchlike.eager.set_mode(old_mode)


def _resume_training_equals_straight_run(tmp_path):
    from torchlike.utils.data import DataLoader, TensorDataset
    rs = np.random.default_rng(0)
    X = rs.standard_normal((40, 4)).astype(np.float32)
    Y = np.sin(X.sum(1, keepdims=True)).astype(np.float32)
    init = OrderedDict((k, v.detach().numpy().copy()) for k, v in
                       torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(),
                                           torch.nn.Linear(8, 1)).state_dict().items())
    ds = TensorDataset(torchlike.tensor(X), torchlike.tensor(Y), torchlike.arange(40))

    def loader(gen):
        return DataLoader(ds, batch_size=8, shuffle=True, generator=gen)

    # straight: 8 epochs x 5 batches = 40 steps
    model, opt, sched = _mlp(torchlike, init)
    gen = torchlike.Generator().manual_seed(123)
    order, straight_losses = [], []
    for _ in range(8):
        for xb, yb, ib in loader(gen):
            order.append(ib.tolist())
            straight_losses.append(_step(torchlike, model, opt, sched, xb, yb))
    straight = {k: np.array(v._data) for k, v in model.state_dict().items()}

    # resumed: 4 epochs, checkpoint, fresh objects, 4 more epochs
    model, opt, sched = _mlp(torchlike, init)
    gen = torchlike.Generator().manual_seed(123)
    losses = []
    for _ in range(4):
        for xb, yb, ib in loader(gen):
            losses.append(_step(torchlike, model, opt, sched, xb, yb))
    f = tmp_path / "ckpt.pt"
    torchlike.save({"model": model.state_dict(), "opt": opt.state_dict(),
                    "sched": sched.state_dict(), "gen": gen.get_state(), "epoch": 4}, f)
    del model, opt, sched, gen
    ck = torchlike.load(f)
    model, opt, sched = _mlp(torchlike, {k: v * 0 + 9 for k, v in init.items()})
    model.load_state_dict(ck["model"])
    opt.load_state_dict(ck["opt"])
    sched.load_state_dict(ck["sched"])
    gen = torchlike.Generator()
    gen.set_state(ck["gen"])
    for _ in range(ck["epoch"], 8):
        for xb, yb, ib in loader(gen):
            losses.append(_step(torchlike, model, opt, sched, xb, yb))
    assert losses == straight_losses
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(np.array(v._data), straight[k], err_msg=k)

    # torch, fed the same batches, ends at the same place (float32 tolerance)
    tmodel, topt, tsched = _mlp(torch, init)
    tlosses = [_step(torch, tmodel, topt, tsched, torch.tensor(X[idx]), torch.tensor(Y[idx]))
               for idx in order]
    np.testing.assert_allclose(straight_losses, tlosses, rtol=1e-4, atol=1e-6)
    for k, v in tmodel.state_dict().items():
        np.testing.assert_allclose(straight[k], v.detach().numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=k)


# ---------------------------------------------------------------------------- pinned differences
def test_legacy_format_is_read_not_written(tmp_path):
    """DIFFERENCES.md: torch's pre-1.6 (non-zip) format is read (the values as torch reads
    them: tests/test_serialization_files.py), not written."""
    f = tmp_path / "legacy.pt"
    torch.save({"w": torch.ones(2)}, f, _use_new_zipfile_serialization=False)
    assert torchlike.load(f)["w"].tolist() == torch.load(f)["w"].tolist() == [1.0, 1.0]
    with pytest.raises(NotImplementedError, match="zip format"):
        torchlike.save({"w": torchlike.ones(2)}, tmp_path / "ours.pt",
                       _use_new_zipfile_serialization=False)


def test_pickled_torch_objects_other_than_tensors_refused(tmp_path):
    """DIFFERENCES.md: a whole pickled torch module names torch classes torchlike cannot map,
    even with weights_only=False."""
    f = tmp_path / "module.pt"
    torch.save(torch.nn.Linear(2, 2), f)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global"):
        torchlike.load(f)
    with pytest.raises(pickle.UnpicklingError, match="cannot load the torch global"):
        torchlike.load(f, weights_only=False)


def test_map_location_callable_is_called_as_torch(tmp_path):
    """(Was test_map_location_callable_is_not_called: the callable is now called as torch
    calls it, once per storage with (storage, location tag); returning None keeps the default
    placement.)"""
    f = tmp_path / "m.pt"
    torch.save({"w": torch.arange(3.0), "v": torch.arange(2)}, f)
    calls, tcalls = [], []
    out = torchlike.load(f, map_location=lambda s, loc: calls.append(loc))
    torch.load(f, map_location=lambda s, loc: tcalls.append(loc))
    assert calls == tcalls == ["cpu", "cpu"] and out["w"].device.type == "cpu"
    assert out["w"].tolist() == [0.0, 1.0, 2.0]


def test_example_train_mlp_runs_and_torch_reads_its_checkpoint(tmp_path):
    """examples/train_mlp.py end to end (2 epochs); its checkpoint loads in real torch and a
    torch model with those weights predicts what the torchlike model predicts."""
    import subprocess
    ck = tmp_path / "mlp.pt"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, os.path.join(root, "examples", "train_mlp.py"),
                          "--epochs", "2", "--ckpt", str(ck)], capture_output=True, text=True,
                         timeout=300, cwd=root)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "final validation accuracy" in out.stdout
    state = torch.load(ck, weights_only=True)
    assert state["epoch"] == 1 and set(state) >= {"model", "optimizer", "scheduler"}
    tmodel = torch.nn.Sequential(torch.nn.Linear(2, 64), torch.nn.Tanh(),
                                 torch.nn.Linear(64, 64), torch.nn.Tanh(),
                                 torch.nn.Linear(64, 2))
    tmodel.load_state_dict(state["model"])
    sys.path.insert(0, os.path.join(root, "examples"))
    try:
        import train_mlp
    finally:
        sys.path.pop(0)
    lmodel = train_mlp.make_model()
    lmodel.load_state_dict(torchlike.load(ck)["model"])
    x = np.random.default_rng(0).standard_normal((16, 2)).astype(np.float32)
    np.testing.assert_allclose(_np(lmodel(torchlike.tensor(x))),
                               tmodel(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-5)
    topt = torch.optim.AdamW(tmodel.parameters())
    topt.load_state_dict(state["optimizer"])         # torch accepts torchlike's optimizer state

    # the same script on real torch (only its import line changed); its checkpoint resumes in
    # torchlike objects
    src = open(os.path.join(root, "examples", "train_mlp.py")).read()
    assert src.count("\nimport torchlike as torch\n") == 1
    tscript = tmp_path / "train_mlp_torch.py"
    tscript.write_text(src.replace("\nimport torchlike as torch\n", "\nimport torch\n"))
    tck = tmp_path / "mlp_torch.pt"
    out = subprocess.run([sys.executable, str(tscript), "--epochs", "2", "--ckpt", str(tck)],
                         capture_output=True, text=True, timeout=300, cwd=root)
    assert out.returncode == 0, out.stderr[-2000:]
    ck = torchlike.load(tck)
    lmodel.load_state_dict(ck["model"])
    lopt = torchlike.optim.AdamW(lmodel.parameters(), lr=1e-3, weight_decay=1e-4)
    lopt.load_state_dict(ck["optimizer"])
    lsched = torchlike.optim.lr_scheduler.OneCycleLR(lopt, max_lr=2e-2, total_steps=50)
    lsched.load_state_dict(ck["scheduler"])
    first = next(iter(lmodel.parameters()))
    assert lsched.last_epoch == 25 and lopt.state[first]["step"].item() == 25


def _shared_storage_outcome(m, f):
    out = m.load(f, weights_only=False)
    out["base"].add_(100)                     # (a write to one is seen by the others)
    with m.no_grad():
        out["p"].mul_(-1)
    return [out["again"] is out["base"], out["view"].tolist(), out["t"].tolist(),
            out["t"].stride(), out["t"].is_contiguous(), out["col"].stride(),
            out["col"].tolist(), out["tied"].tolist(), out["pv"].tolist(),
            out["pv"].requires_grad, type(out["p"]).__name__, out["p"].requires_grad]


def test_tensors_sharing_a_storage_load_sharing_it(tmp_path):
    """As torch: tensors saved over one storage (views, tied weights, a parameter and a view
    of it) load as views of one storage, with torch's strides."""
    base = torch.arange(12.0).reshape(3, 4)
    p = torch.nn.Parameter(torch.arange(4.0))
    f = tmp_path / "shared.pt"
    torch.save({"view": base[1, 1:], "base": base, "again": base, "t": base.t(),
                "col": base[:, 1], "tied": base.detach(), "p": p, "pv": p.detach()[1:3]}, f)
    assert _shared_storage_outcome(torchlike, f) == _shared_storage_outcome(torch, f)
    g = tmp_path / "shared_tl.pt"          # (torchlike's own files: the same)
    base = torchlike.arange(12.0).reshape(3, 4)
    p = torchlike.nn.Parameter(torchlike.arange(4.0))
    torchlike.save({"view": base[1, 1:], "base": base, "again": base, "t": base.t(),
                    "col": base[:, 1], "tied": base.detach(), "p": p, "pv": p.detach()[1:3]},
                   g)
    assert _shared_storage_outcome(torchlike, g) == _shared_storage_outcome(torch, f)


def test_loading_never_imports_torch(tmp_path):
    """A torch checkpoint loads in a process where torch is not importable at all."""
    import subprocess
    f = tmp_path / "w.pt"
    torch.save({"w": torch.ones(2, 3, dtype=torch.bfloat16), "n": 3}, f)
    code = ("import sys; sys.modules['torch'] = None\n"      # any 'import torch' now fails
            "import torchlike\n"
            f"sd = torchlike.load({str(f)!r})\n"
            "torchlike.save(sd, sys.argv[1])\n"
            "print(sd['w'].dtype, sd['w'].shape, sd['n'])\n")
    g = tmp_path / "back.pt"
    out = subprocess.run([sys.executable, "-c", code, str(g)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "torch.bfloat16 torch.Size([2, 3]) 3"
    assert torch.equal(torch.load(g, weights_only=True)["w"], torch.ones(2, 3,
                                                                          dtype=torch.bfloat16))


@pytest.mark.parametrize("proto", [2, 3, 4, 5])
def test_torch_files_of_every_pickle_protocol(proto):
    obj = {"w": torch.ones(2, dtype=torch.float64), "bytes": b"xy", "set": {1, 2},
           "complex": 1 + 2j, "bytearray": bytearray(b"q"), "od": OrderedDict(a=(1, 2))}
    buf = io.BytesIO()
    torch.save(obj, buf, pickle_protocol=proto)
    buf.seek(0)
    assert_same(torchlike.load(buf), obj)
    if proto == 2:          # torch's weights_only reader handles protocol 2 only
        out = io.BytesIO()
        torchlike.save({**obj, "w": torchlike.ones(2, dtype=torchlike.float64)}, out)
        out.seek(0)
        assert_same(torchlike.load(io.BytesIO(out.getvalue())), torch.load(out,
                                                                          weights_only=True))


def test_saving_a_local_class_or_function_raises_torchs_error():
    """An object whose class, or a function, defined inside a function cannot be pickled:
    torch's C pickler raises AttributeError("Can't pickle local object ..."), and code that
    catches it (falling back to saving a state_dict) sees the same class here."""
    def objects(m):
        class Local:
            pass

        def helper():
            return 1
        return [{"a": Local()}, {"f": helper}, Local]

    for ours, theirs in zip(objects(torchlike), objects(torch)):
        with pytest.raises(AttributeError) as e_t:
            torch.save(theirs, io.BytesIO())
        with pytest.raises(AttributeError) as e_l:
            torchlike.save(ours, io.BytesIO())
        assert str(e_l.value) == str(e_t.value)
