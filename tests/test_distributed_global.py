"""The global view on 8 fake CPU devices (a subprocess: the device count is fixed when jax
starts): DeviceMesh, DTensor placements and redistribute, Partial, FSDP2 and tensor parallel
against the dense model in real torch, and a compiled FSDP+TP step."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "distributed_workers"))

from distributed_workers.once import once

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _run(directory):
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, os.path.join(HERE, "distributed_workers",
                                                     "global_view.py")],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=420)
    assert p.returncode == 0, p.stderr[-4000:]
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


@pytest.fixture(scope="module")
def res(tmp_path_factory):
    return once(tmp_path_factory, "distributed-global", _run)


def test_device_mesh(res):
    assert res["devices"] == 8
    assert res["mesh"] == [[[0, 1, 2, 3], [4, 5, 6, 7]], 4, 2, [2, 4]]


def test_dtensor_placements_and_redistribute(res):
    assert res["spec_s0s1"] == "P('dp', 'tp')" and res["local_shape"] == [2 * 2, 2]
    assert res["full_equal"]
    assert res["redistribute"] == [
        ["P('tp',)", True, ["Replicate()", "Shard(dim=0)"]],
        ["P(None, 'dp')", True, ["Shard(dim=1)", "Replicate()"]],
        ["P()", True, ["Replicate()", "Replicate()"]]]
    assert res["eager_op_on_dtensor"] == float((torch.arange(64.) * 2 + 1).sum())
    assert res["uneven_error"] == "DTensor"


def test_partial_reductions(res):
    assert res["partial_spec"] == "P(unreduced={'tp'})"
    assert res["partial_full"] and res["partial_to_shard"]
    # one process: its local value sits once in each partial group, so the sum is the value
    assert res["from_local_partial_sum"] == 64.0


def _torch_dense(steps=3, opt="adam"):
    rng = np.random.default_rng(0)
    W = [rng.standard_normal(s).astype(np.float32) * 0.4 for s in [(12, 6), (12,), (3, 12),
                                                                    (3,)]]
    xb = torch.tensor(rng.standard_normal((8, 6)).astype(np.float32))
    yb = torch.tensor(rng.standard_normal((8, 3)).astype(np.float32))
    m = torch.nn.Sequential(torch.nn.Linear(6, 12), torch.nn.ReLU(), torch.nn.Linear(12, 3))
    with torch.no_grad():
        for q, w in zip(m.parameters(), W):
            q.copy_(torch.tensor(w))
    o = (torch.optim.Adam(m.parameters(), lr=0.05) if opt == "adam"
         else torch.optim.SGD(m.parameters(), lr=0.1))
    out = {"losses": []}
    for it in range(steps):
        o.zero_grad()
        y = m(xb)
        loss = torch.nn.functional.mse_loss(y, yb)
        loss.backward()
        if it == 0:
            out["out0"] = y.tolist()
            out["grads0"] = [q.grad.tolist() for q in m.parameters()]
        o.step()
        out["losses"].append(loss.item())
    out["state_keys"] = list(m.state_dict().keys())
    out["state"] = [v.tolist() for v in m.state_dict().values()]
    return out


def _close(a, b, tol):
    fa = np.concatenate([np.ravel(np.asarray(x, np.float64)) for x in a])
    fb = np.concatenate([np.ravel(np.asarray(x, np.float64)) for x in b])
    return fa.shape == fb.shape and float(np.max(np.abs(fa - fb))) <= tol


@pytest.mark.parametrize("kind", ["fsdp", "tp", "fsdp_tp"])
def test_sharded_mlp_equals_dense_torch(res, kind):
    ours, ref = res["sharded"][kind], _torch_dense()
    assert _close([ours["out0"]], [ref["out0"]], 1e-5)
    assert _close(ours["grads0"], ref["grads0"], 1e-5)
    assert _close([ours["losses"]], [ref["losses"]], 1e-5)
    assert ours["state_keys"] == ref["state_keys"]          # torch's keys, unpadded shapes
    assert _close(ours["state"], ref["state"], 1e-5)


def test_fsdp_layouts_pad_uneven_dims_and_shard_optimizer_state(res):
    f = res["sharded"]["fsdp"]
    assert f["class"] == "FSDPSequential"
    # specs without trailing Nones: the form XLA gives a compiled step's outputs
    assert f["specs"] == ["P('dp',)", "P('dp',)", "P('dp',)", "P('dp',)"]
    assert f["shapes"] == [[12, 6], [12], [4, 12], [4]]      # 3 rows padded to 4 over dp=2
    assert f["opt_state_specs"] == ["P('dp',)"]
    ft = res["sharded"]["fsdp_tp"]
    assert ft["specs"] == ["P(('dp', 'tp'),)", "P(('dp', 'tp'),)", "P('dp', 'tp')", "P('dp',)"]
    assert ft["shapes"] == [[16, 6], [16], [4, 12], [4]]    # 12 rows padded to 16 over 8
    assert res["sharded"]["tp"]["specs"] == ["P('tp',)", "P('tp',)", "P(None, 'tp')", "P()"]


def _unsharded_gpt(opt, steps):
    import models
    return models.dense_gpt_run(torch, steps=steps, opt=opt)


def _same_run(ours, ref, tol=2e-5):
    assert _close([ours["out0"]], [ref["out0"]], tol)
    assert _close(ours["grads0"], ref["grads0"], tol)        # unpadded, torch's shapes
    assert _close([ours["losses"]], [ref["losses"]], tol)
    assert _close(ours["state"], ref["state"], tol)


def test_fsdp_tp_transformer_equals_the_unsharded_model(res):
    """A minGPT block (attention + MLP) under tensor parallelism (q/k/v and fc column-wise,
    the projections row-wise over tp=4) and FSDP (every block and the root over dp=2):
    forward, gradients and three AdamW steps equal dense torch's. The vocabulary (13) and the
    MLP width (30) do not divide the mesh: they are padded and the module sees torch's
    shapes."""
    ours = res["gpt_eager"]
    _same_run(ours, _unsharded_gpt("adamw", 3))
    import models
    assert ours["state_keys"] == list(models.make_gpt(torch).state_dict().keys())
    assert ours["specs"]["h.0.attn.q.weight"] == "P(('dp', 'tp'),)"     # TP rows, then FSDP
    assert ours["specs"]["h.0.mlp.proj.weight"] == "P('dp', 'tp')"       # row-wise: dim 1
    assert ours["specs"]["wte.weight"] == "P('dp',)"
    assert ours["shapes"]["h.0.mlp.fc.weight"] == [32, 12]               # 30 padded over 8
    assert ours["shapes"]["h.0.mlp.proj.weight"] == [12, 32]             # 30 padded over tp
    assert ours["shapes"]["wte.weight"] == [14, 12]                      # 13 padded over dp
    for name, specs in ours["opt_state_specs"].items():
        assert specs == [ours["specs"][name]], name     # AdamW's moments: the param's layout


def test_compiled_fsdp_tp_step_is_one_program(res):
    """The same FSDP+TP transformer step under torchlike.compile: one trace, one program,
    nothing traced or compiled once warm, parameter and gradient shardings kept, the loss
    replicated, the logits batch-sharded; its SGD steps equal dense torch's."""
    ours = res["gpt_compiled"]
    _same_run(ours, _unsharded_gpt("sgd", 5))
    assert ours["compile_count"] == 1
    assert ours["trace_count_after_3"] == ours["trace_count_after_5"] == 1
    assert ours["steady_xla_compiles"] == 0 and ours["steady_eager_traces"] == 0
    assert ours["param_shardings_kept"] and ours["grad_specs_are_param_specs"]
    assert ours["loss_replicated"] and ours["logits_spec"] == "P('dp',)"


def test_fsdp_tp_example_equals_torch(res, tmp_path_factory):
    """examples/fsdp_tp.py on torchlike (one process, a 2 x 4 mesh, compiled step) and a copy
    importing torch run by torch's ranks (2 processes: a 2 x 1 and a 1 x 2 mesh, eager): the
    same losses."""
    from test_distributed import _losses, _run_jobs
    jobs = once(tmp_path_factory, "distributed-jobs", _run_jobs)
    ours = _losses(res["example_fsdp_tp"])
    assert len(ours) == 3
    assert "laid out as P(('dp', 'tp'),) over 8 devices" in res["example_fsdp_tp"]
    for mesh in ("dp2", "dp1"):
        theirs = _losses(jobs["torch"][0]["example_fsdp_tp_" + mesh])
        assert np.allclose(ours, theirs, atol=2e-5), (mesh, ours, theirs)


def _torch_state_layout():
    """Dense torch after three AdamW steps: get_state_dict's layout and values."""
    from torch.distributed.checkpoint.state_dict import get_state_dict
    import models
    m = models.make_gpt(torch)
    opt = torch.optim.AdamW(m.parameters(), lr=0.02)
    x, y = models.gpt_batch(torch)
    for _ in range(3):
        opt.zero_grad()
        models.gpt_loss(torch, m, x, y)[1].backward()
        opt.step()
    msd, osd = get_state_dict(m, opt)
    return msd, osd


def test_distributed_checkpoint_round_trip_equals_torch(res):
    """get_state_dict of the FSDP+TP transformer after three AdamW steps: torch's model keys
    and FQN-keyed optimizer state, with torch's (unpadded) values; dcp.save, then dcp.load into
    the model laid out by FSDP alone (a resharding load, other initial weights) and
    set_state_dict: the loaded model and optimizer hold torch's values, sharded."""
    msd, osd = _torch_state_layout()
    ours = res["dcp_layout"]
    assert ours["model_keys"] == list(msd)
    assert ours["optim_state_keys"] == {k: sorted(v) for k, v in osd["state"].items()}
    assert ours["param_groups"] == [{"params": g["params"]} for g in osd["param_groups"]]
    rt = res["dcp_round_trip"]
    assert rt["saved_spec"] == "P(('dp', 'tp'),)" and rt["loaded_spec"] == "P('dp',)"
    assert rt["loaded_sharded"]
    assert _close(rt["model"], [v.tolist() for v in msd.values()], 2e-5)
    for got in (ours["optim_state"], rt["optim"]):
        assert list(got) == list(osd["state"])
        for k, st in osd["state"].items():
            for n, v in st.items():
                assert _close([got[k][n]], [v.tolist()], 2e-5), (k, n)
    assert rt["groups"] == rt["saved_groups"]
    assert rt["groups"][0]["lr"] == osd["param_groups"][0]["lr"]
