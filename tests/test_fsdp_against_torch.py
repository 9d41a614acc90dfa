"""FSDP2 (``fully_shard``), tensor parallelism, DTensor and distributed checkpoint programs
against torch (gloo), rank by rank: tests/distributed_workers/fsdp_dtensor.py spawned with 2
ranks under each library, one CPU device per rank as under torchrun (both jobs at once, each
under a timeout, every process reaped).

A fully sharded model takes each rank's own batch and gives its own outputs and loss; the
gradients are averaged over the ranks; parameters (and their gradients and state-dict values)
are DTensors sharded on dim 0 whose ``to_local()`` is torch's shard. Tensor-parallel modules
take and give each rank's blocks as torch's styles say."""
import os

import pytest

from distributed_workers.once import once
from distributed_workers.side_by_side import close as _close, run_jobs

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "distributed_workers", "fsdp_dtensor.py")


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    return once(tmp_path_factory, "fsdp-dtensor", lambda d: run_jobs(WORKER, d))


def _ours(jobs, check, r):
    ours = jobs["torchlike"][r][check]
    assert not isinstance(ours, str), ours
    return ours


def _same(jobs, check, skip=(), tol=1e-5):
    for r in range(2):
        ours, theirs = _ours(jobs, check, r), jobs["torch"][r][check]
        assert not isinstance(theirs, str), theirs
        for k in theirs:
            if k not in skip:
                assert _close(ours[k], theirs[k], tol), (r, k, ours[k], theirs[k])


def test_fully_shard_training_equals_torch(jobs):
    """Blocks then the root sharded, AdamW: each rank's losses, every parameter's
    ``full_tensor()`` and ``to_local()`` after training; the parameters are DTensors with
    torch's placements, device mesh (its repr) and local shapes; the module is ``FSDP<Net>``.
    The head's 5 rows over 2 ranks: torch's uneven shards (3 and 2 rows) locally; its
    ``shape`` is the padded one here (DIFFERENCES.md)."""
    _same(jobs, "c_fsdp2_train", skip=("params", "sd"), tol=1e-4)
    for r in range(2):
        ours, theirs = _ours(jobs, "c_fsdp2_train", r), jobs["torch"][r]["c_fsdp2_train"]
        for k, v in theirs["params"].items():
            if k.startswith("head."):
                assert ours["params"][k][:2] + ours["params"][k][3:] == v[:2] + v[3:]
                assert ours["params"][k][2][0] == 6 and v[2][0] == 5
            else:
                assert ours["params"][k] == v, (r, k)
        assert ours["sd"] == theirs["sd"]     # DTensor values, torch's shapes


def test_fully_shard_gradients_are_averaged_shards(jobs):
    """``reshard_after_forward=False`` blocks: each rank's loss, its local output, and the
    gradients: DTensors sharded as their parameters (Shard(0)) holding the ranks' average."""
    _same(jobs, "c_fsdp2_grads", tol=1e-4)


def test_set_requires_gradient_sync_accumulates_as_torch(jobs):
    _same(jobs, "c_fsdp2_no_sync", tol=1e-4)


def test_mixed_precision_policy(jobs):
    """param_dtype bfloat16: a bfloat16 output, float32 parameters and gradients within
    bfloat16's rounding of torch's."""
    _same(jobs, "c_fsdp2_mp", skip=("grad", "loss"))
    for r in range(2):
        ours, theirs = _ours(jobs, "c_fsdp2_mp", r), jobs["torch"][r]["c_fsdp2_mp"]
        assert _close(ours["loss"], theirs["loss"], 1e-2)
        for k, v in theirs["grad"].items():
            assert ours["grad"][k][0] == v[0]
            assert _close(ours["grad"][k][1][0], v[1][0], 2e-2), k


def test_unshard_reshard(jobs):
    """unshard()/reshard() keep DTensor parameters (torch's root module shows its own
    parameters unsharded in between); unshard(async_op=True) gives a handle to wait on."""
    for r in range(2):
        ours, theirs = _ours(jobs, "c_fsdp2_unshard", r), jobs["torch"][r]["c_fsdp2_unshard"]
        assert ours["resharded"].keys() == theirs["resharded"].keys()
        assert ours["handle"] == "UnshardHandle" and theirs["handle"] == "_UnshardHandleImpl"
        for k, v in theirs["resharded"].items():
            assert ours["resharded"][k][0] == v[0] == "DTensor"


def test_dtensor_as_torchs(jobs):
    """distribute_tensor with Shard(0)/Shard(1)/Replicate, redistribute, to_local,
    full_tensor, from_local (Shard, Replicate, Partial), elementwise ops and matmul giving
    DTensors with placements, repr, a leaf's gradient. ``sum()`` is reduced at once here
    (Replicate; torch keeps Partial(sum) until asked: DIFFERENCES.md)."""
    _same(jobs, "c_dtensor_basic", skip=("sum",))
    for r in range(2):
        ours, theirs = _ours(jobs, "c_dtensor_basic", r), jobs["torch"][r]["c_dtensor_basic"]
        assert ours["sum"][0] == theirs["sum"][0] == "DTensor"
        assert ours["sum"][2] == theirs["sum"][2]
        assert (ours["sum"][1], theirs["sum"][1]) == ("(Replicate(),)", "(Partial(sum),)")


def test_distributed_checkpoint_of_a_fully_sharded_model(jobs):
    """get_model_state_dict / get_optimizer_state_dict (sharded DTensors, and full), dcp.save
    into a directory, dcp.load into a fresh sharded model and optimizer: the loaded parameters,
    the next step's losses and parameters, and set_model_state_dict of the full state dict,
    as torch's (the files are torchlike's own: DIFFERENCES.md)."""
    _same(jobs, "c_dcp_state_dict", tol=1e-5)
    for r in range(2):
        ours = _ours(jobs, "c_dcp_state_dict", r)
        assert ours["resume"][0] == ours["resume"][1] and all(ours["resume"][2])
        assert ours["msd"]["head.weight"][0] == "DTensor"
    assert jobs["torchlike"][1]["c_dcp_state_dict"]["msd"]["head.weight"][2][2] == [2, 8]


def test_tensor_parallel_mlp_equals_torch(jobs):
    """ColwiseParallel then RowwiseParallel: the parameters are DTensors with torch's
    placements and local shards; the column-parallel layer gives each rank its block of
    the hidden features, the model the whole output (torch's is an AsyncCollectiveTensor, a
    Tensor subclass); gradients and an SGD step as torch's."""
    _same(jobs, "c_tp_mlp", skip=("out",), tol=1e-5)
    for r in range(2):
        ours, theirs = _ours(jobs, "c_tp_mlp", r), jobs["torch"][r]["c_tp_mlp"]
        assert _close(ours["out"][1], theirs["out"][1], 1e-5)
        assert (ours["out"][0], theirs["out"][0]) == ("Tensor", "AsyncCollectiveTensor")


def test_sequence_parallel_equals_torch(jobs):
    """SequenceParallel LayerNorm on each rank's sequence block, a column-parallel layer
    taking Shard(1) inputs, a row-parallel layer giving Shard(1) outputs: each rank's output
    block and the gradients as torch's."""
    _same(jobs, "c_tp_seq", skip=("out",), tol=1e-5)
    for r in range(2):
        ours, theirs = _ours(jobs, "c_tp_seq", r), jobs["torch"][r]["c_tp_seq"]
        assert _close(ours["out"][1], theirs["out"][1], 1e-5)


def test_clip_grad_norm_of_fully_sharded_parameters(jobs):
    """nn.utils.clip_grad_norm_ over DTensor gradients: the norm over every rank's shards (a
    DTensor, as torch's) and the clipped training as torch's."""
    _same(jobs, "c_clip", tol=1e-4)


def test_fsdp1_wrapper_trains_as_fully_shard(jobs):
    """FullyShardedDataParallel with ModuleWrapPolicy (torch 2.13's refuses CPU devices, so
    the oracle is torch's fully_shard training of the same model, which FSDP1 equals):
    each rank's losses and the FULL_STATE_DICT (rank0_only: empty on rank 1) as torch's trained
    parameters; SHARDED_STATE_DICT gives DTensors holding torch's shards; summon_full_params
    shows whole parameters on every rank; size_based_auto_wrap_policy wraps the Linears; a
    full state dict loads into a fresh wrapper; clip_grad_norm_'s norms as torch's."""
    for r in range(2):
        ours, theirs = _ours(jobs, "c_fsdp1", r), jobs["torch"][r]["c_fsdp2_train"]
        assert _close(ours["losses"], theirs["losses"], 1e-4)
        if r == 0:
            assert _close(ours["full_sd"], theirs["full"], 1e-4)
        else:
            assert ours["full_sd"] == {}
        for k, v in ours["sharded_sd"].items():
            assert v[0] == "DTensor" and _close(v[1], theirs["local"][k], 1e-4), k
        assert _close(ours["summon"], theirs["full"]["blocks.0.fc1.bias"][0], 1e-4)
        assert ours["wrapped"].count("FullyShardedDataParallel") == 3
        assert ours["size_wrapped"].count("FullyShardedDataParallel") == 5
        assert ours["loaded_loss"][0] == ours["loaded_loss"][1]
        clip = jobs["torch"][r]["c_clip"]["norms"]
        assert _close(ours["clip_norms"], [c[1] for c in clip], 1e-4)


def test_state_dict_options_as_torchs(jobs):
    """get_model_state_dict (DTensor shards), full_state_dict (whole tensors on every rank;
    with cpu_offload on rank 0 only, the others get {}), get_optimizer_state_dict's FQN keys,
    param_groups and DTensor state, set_model_state_dict of a full state dict and with
    broadcast_from_rank0 (rank 1 passes {})."""
    _same(jobs, "c_dcp_options", tol=1e-5)
    assert jobs["torchlike"][1]["c_dcp_options"]["full_off"] == {}


def test_mixed_precision_output_dtype_casts_the_outputs():
    """MixedPrecisionPolicy: floating inputs to ``param_dtype`` (the output follows), and with
    ``output_dtype`` the module's floating outputs cast to it, as torch's FSDP2 post-forward
    casts them (integer outputs untouched); one process, a 1-device mesh."""
    import torchlike
    from torchlike.distributed.device_mesh import init_device_mesh
    from torchlike.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    class Two(torchlike.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torchlike.nn.Linear(4, 3)

        def forward(self, x):
            y = self.lin(x)
            return {"y": y, "i": y.argmax(-1)}

    mesh = init_device_mesh("cpu", (1,))
    got = []
    for out_dt in (None, torchlike.float32):
        m = Two()
        fully_shard(m, mesh=mesh, mp_policy=MixedPrecisionPolicy(
            param_dtype=torchlike.bfloat16, output_dtype=out_dt))
        out = m(torchlike.ones(2, 4))
        got.append((out["y"].dtype, out["i"].dtype))
    assert got == [(torchlike.bfloat16, torchlike.int64), (torchlike.float32, torchlike.int64)]


def test_mixed_precision_casts_inputs_inside_containers():
    """MixedPrecisionPolicy casts the floating tensors of the module's inputs, positional and
    keyword, to ``param_dtype`` inside tuples, lists and dicts too (torch's
    ``_apply_to_tensors``), and leaves integer tensors and other values as they are; one
    process, a 1-device mesh."""
    import torchlike
    from torchlike.distributed.device_mesh import init_device_mesh
    from torchlike.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    class Seen(torchlike.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torchlike.nn.Linear(4, 3)

        def forward(self, pair, d, *, k=None):
            self.seen = (pair[0].dtype, pair[1].dtype, d["x"].dtype, d["n"], k.dtype)
            return self.lin(pair[0])

    m = Seen()
    fully_shard(m, mesh=init_device_mesh("cpu", (1,)),
                mp_policy=MixedPrecisionPolicy(param_dtype=torchlike.bfloat16))
    m([torchlike.ones(2, 4), torchlike.arange(3)], {"x": torchlike.ones(1), "n": 5},
      k=torchlike.ones(2))
    assert m.seen == (torchlike.bfloat16, torchlike.int64, torchlike.bfloat16, 5,
                      torchlike.bfloat16)
