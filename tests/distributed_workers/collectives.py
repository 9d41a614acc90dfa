"""Collectives beyond the basics and DDP's communication hooks, one spawned job per library:
``collectives.py torch|torchlike OUT [WORLD]`` starts WORLD (2) ranks with the library's
``multiprocessing.spawn`` (torch: gloo on localhost), runs every ``c_*`` check on each rank
(an exception is recorded as ``"EXC Type: message"``) and writes OUT.rank<r>.json."""
import importlib
import json
import os
import socket
import sys


def tl(t):
    return [t.tolist(), str(t.dtype), list(t.shape)]


def err(e):
    return "EXC " + type(e).__name__ + ": " + str(e)


def attempt(f):
    try:
        return f()
    except Exception as e:          # every rank raises the same (checked before any transfer)
        return err(e)


def c_reduce_op_dtype_rules(torch, dist, r, n):
    res = {}
    for dt in ["float32", "float64", "int32", "int64", "uint8", "bool", "float16", "bfloat16"]:
        for op in ["SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR"]:
            if op in ("BAND", "BOR", "BXOR") and dt.startswith(("float", "bfloat")):
                continue       # torch's gloo raises that error from its worker thread, late
            x = (torch.tensor([1, 2, 3, 0]) + r).to(getattr(torch, dt))
            res[dt + op] = attempt(lambda: (dist.all_reduce(x, op=getattr(dist.ReduceOp, op)),
                                            tl(x))[1])
    c = torch.tensor([1 + 2j]) * (r + 1)
    res["complex_sum"] = attempt(lambda: (dist.all_reduce(c), tl(torch.view_as_real(c)))[1])
    res["complex_max"] = attempt(lambda: dist.all_reduce(c, op=dist.ReduceOp.MAX))
    return res


def c_tensor_collectives(torch, dist, r, n):
    res = {}
    x = torch.arange(6.).reshape(2, 3) + 10 * r
    o = torch.empty(2 * n, 3)
    dist.all_gather_into_tensor(o, x)
    res["agit"] = tl(o)
    res["agit_size"] = attempt(lambda: dist.all_gather_into_tensor(torch.empty(2 * n + 1, 3), x))
    res["agit_dtype"] = attempt(lambda: dist.all_gather_into_tensor(
        torch.empty(2 * n, 3, dtype=torch.float64), x))
    x = torch.arange(4. * n).reshape(2 * n, 2) + r
    for op in ["SUM", "AVG", "MAX", "MIN", "PRODUCT"]:
        o = torch.empty(2, 2)
        dist.reduce_scatter_tensor(o, x, op=getattr(dist.ReduceOp, op))
        res["rst" + op] = tl(o)
    xi = torch.arange(4 * n).reshape(2 * n, 2) + r
    for op in ["SUM", "BAND", "BXOR", "AVG"]:
        o = torch.empty(2, 2, dtype=torch.int64)
        res["rst_int" + op] = attempt(lambda: (dist.reduce_scatter_tensor(
            o, xi, op=getattr(dist.ReduceOp, op)), tl(o))[1])
    ins = [torch.full((3,), float(i * 10 + r)) for i in range(n)]
    o = torch.empty(3)
    dist.reduce_scatter(o, ins, op=dist.ReduceOp.MAX)
    res["reduce_scatter_list"] = tl(o)
    return res


def c_all_to_all(torch, dist, r, n):
    res = {}
    in_splits = [(r + j) % 3 + 1 for j in range(n)]
    out_splits = [(j + r) % 3 + 1 for j in range(n)]
    x = (torch.arange(float(sum(in_splits))) + 100 * r).unsqueeze(1).repeat(1, 2)
    o = torch.empty(sum(out_splits), 2)
    dist.all_to_all_single(o, x, out_splits, in_splits)
    res["uneven"] = tl(o)
    o = torch.empty(sum(out_splits), 2)
    dist.all_to_all_single(o, x.long().float(), out_splits, in_splits, async_op=True).wait()
    res["uneven_async"] = tl(o)
    x = torch.arange(4. * n).reshape(2 * n, 2) + 100 * r
    o = torch.empty(2 * n, 2)
    dist.all_to_all_single(o, x)
    res["even"] = tl(o)
    res["split_sum"] = attempt(lambda: dist.all_to_all_single(
        torch.empty(2 * n), torch.arange(2. * n), [2] * n, [1] * n))
    res["dtype"] = attempt(lambda: dist.all_to_all_single(
        torch.empty(2 * n, dtype=torch.int64), torch.arange(2. * n)))
    ins = [torch.full((2,), float(10 * r + j)) for j in range(n)]
    outs = [torch.empty(2) for _ in range(n)]
    dist.all_to_all(outs, ins)
    res["list"] = [tl(t) for t in outs]
    res["list_uneven"] = attempt(lambda: dist.all_to_all(
        [torch.empty(r + 1) for _ in range(n)], [torch.empty(j + 1) for j in range(n)]))
    return res


def c_objects_and_roots(torch, dist, r, n):
    res = {}
    ol = [None] * n
    dist.all_gather_object(ol, {"r": r, "t": [r] * (r + 1)})
    res["all_gather_object"] = ol
    bl = [r, {"a": r}, None] if r == 1 else [None, None, None]
    dist.broadcast_object_list(bl, src=1)
    res["broadcast_object_list"] = bl
    out = [None]
    dist.scatter_object_list(out, [{"to": i} for i in range(n)] if r == n - 1 else None,
                             src=n - 1)
    res["scatter_object_list"] = out
    gl = [None] * n if r == 1 else None
    dist.gather_object(("x", r), gl, dst=1)
    res["gather_object"] = gl
    x = torch.tensor([r * 1.0, r + 0.5])
    gl = [torch.empty(2) for _ in range(n)] if r == n - 1 else None
    dist.gather(x, gl, dst=n - 1)
    res["gather"] = None if gl is None else [tl(t) for t in gl]
    o = torch.empty(2)
    dist.scatter(o, [torch.full((2,), float(i)) for i in range(n)] if r == 1 else None, src=1)
    res["scatter"] = tl(o)
    y = torch.tensor([1., 2.]) * (r + 1)
    dist.reduce(y, dst=1, op=dist.ReduceOp.MAX)
    res["reduce_max"] = tl(y) if r == 1 else None
    res["broadcast_root"] = attempt(lambda: dist.broadcast(torch.ones(2), src=n))
    res["reduce_root"] = attempt(lambda: dist.reduce(torch.ones(2), dst=n))
    res["all_gather_len"] = attempt(lambda: dist.all_gather([torch.empty(2)] * (n + 1),
                                                            torch.ones(2)))
    res["all_gather_shape"] = attempt(lambda: dist.all_gather(
        [torch.empty(3) for _ in range(n)], torch.ones(2)))
    res["all_gather_dtype"] = attempt(lambda: dist.all_gather(
        [torch.empty(2, dtype=torch.int64) for _ in range(n)], torch.ones(2)))
    res["all_reduce_list"] = attempt(lambda: dist.all_reduce([torch.ones(2)]))
    return res


def c_work_and_futures(torch, dist, r, n):
    res = {}
    x = torch.tensor([1., 2.]) * (r + 1)
    w = dist.all_reduce(x, async_op=True)
    res["work"] = [type(w).__name__, w.wait(), w.is_completed(), w.is_success(), tl(x)]
    fut = w.get_future()
    res["future"] = [type(fut).__name__, fut.done(), [tl(t) for t in fut.wait()]]
    o = torch.empty(n * 2)
    w = dist.all_gather_into_tensor(o, x, async_op=True)
    w.wait()
    res["all_gather_future"] = [tl(t) for t in w.get_future().wait()]
    w = dist.broadcast(x, src=0, async_op=True)
    res["broadcast_future"] = [tl(t) for t in w.get_future().wait()]
    w = dist.barrier(async_op=True)
    res["barrier"] = [type(w).__name__, w.wait(), dist.barrier()]
    x = torch.tensor([3.]) * (r + 1)
    fut = dist.all_reduce(x, async_op=True).get_future().then(lambda f: f.value()[0] * 2)
    res["then"] = tl(fut.wait())
    return res


def c_groups(torch, dist, r, n):
    import datetime
    res = {}
    g = dist.new_group([1, 0])
    res["group"] = [dist.get_rank(g), dist.get_world_size(g), dist.get_process_group_ranks(g)]
    y = torch.tensor([float(r)])
    dist.broadcast(y, group_src=1, group=g)
    res["group_src"] = tl(y)
    sub, subs = dist.new_subgroups(group_size=2)
    y = torch.tensor([float(r + 1)])
    dist.all_reduce(y, group=sub)
    res["new_subgroups"] = [dist.get_rank(sub), dist.get_world_size(sub), len(subs), tl(y)]
    sub2, subs2 = dist.new_subgroups_by_enumeration([[i for i in range(n) if i % 2 == 0],
                                                     [i for i in range(n) if i % 2]])
    y = torch.tensor([float(r + 1)])
    dist.all_reduce(y, group=sub2)
    res["by_enumeration"] = [dist.get_process_group_ranks(sub2), len(subs2), tl(y)]
    res["bad_rank"] = attempt(lambda: dist.new_group([0, n]))
    res["duplicate"] = attempt(lambda: dist.new_group([0, 0]))
    res["monitored_barrier"] = dist.monitored_barrier(timeout=datetime.timedelta(seconds=60))
    return res


# ---------------------------------------------------------------- DDP communication hooks
def _model(torch, widths=(4, 8, 3)):
    nn = torch.nn
    layers = []
    for a, b in zip(widths, widths[1:]):
        layers += [nn.Linear(a, b), nn.ReLU()]
    m = nn.Sequential(*layers[:-1])
    with torch.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(torch.sin(torch.arange(p.numel()) * 0.7 + i).reshape(p.shape) * 0.3)
    return m


def _step(torch, ddp, r, k=0, width=4, out=3):
    b = torch.arange(5. * (width + out)).reshape(5, width + out) * (0.03 + 0.01 * r + 0.005 * k)
    loss = torch.nn.functional.mse_loss(ddp(torch.sin(b[:, :width])), torch.cos(b[:, width:]))
    loss.backward()
    return loss.item()


def _grads(m):
    return [p.grad.reshape(-1).tolist() for p in m.parameters()]


def c_ddp_comm_hooks(torch, dist, r, n):
    dh = importlib.import_module(
        torch.__name__ + ".distributed.algorithms.ddp_comm_hooks.default_hooks")
    DDP = torch.nn.parallel.DistributedDataParallel
    res = {}
    m = DDP(_model(torch))
    _step(torch, m, r)
    res["no_hook"] = _grads(m)
    for name in ["allreduce_hook", "fp16_compress_hook"]:
        m = DDP(_model(torch))
        m.register_comm_hook(dist.group.WORLD if name != "allreduce_hook" else None,
                             getattr(dh, name))
        _step(torch, m, r)
        res[name] = _grads(m)

    def sum_hook(state, bucket):
        return dist.all_reduce(bucket.buffer(), async_op=True).get_future().then(
            lambda f: f.value()[0])
    m = DDP(_model(torch))
    m.register_comm_hook(None, sum_hook)
    _step(torch, m, r)
    res["sum_hook"] = _grads(m)
    seen = []

    def ones(state, bucket):
        seen.append([bucket.index(), bucket.is_last(),
                     [list(g.shape) for g in bucket.gradients()], list(bucket.buffer().shape)])
        fut = torch.futures.Future()
        fut.set_result(bucket.buffer() * 0 + 1)
        return fut
    m = DDP(_model(torch))
    m.register_comm_hook(state=None, hook=ones)
    _step(torch, m, r)
    res["ones"] = [seen, _grads(m)]
    res["twice"] = attempt(lambda: m.register_comm_hook(None, ones))
    return res


def c_ddp_buckets(torch, dist, r, n):
    """Which parameters each bucket holds, iteration by iteration: torch's first bucketing,
    then its rebuild in gradient-ready order (after the second iteration with
    static_graph)."""
    dh = importlib.import_module(
        torch.__name__ + ".distributed.algorithms.ddp_comm_hooks.default_hooks")
    res = {}
    for kw in [{}, {"bucket_cap_mb": 0.5}, {"find_unused_parameters": True, "bucket_cap_mb": 0.5},
               {"static_graph": True, "bucket_cap_mb": 0.5}]:
        m = _model(torch, (300, 300, 300, 300, 4))
        d = torch.nn.parallel.DistributedDataParallel(m, **kw)
        seen = []

        def spy(state, bucket):
            seen.append([bucket.index(), bucket.is_last(),
                         [list(p.shape) for p in bucket.parameters()]])
            return dh.allreduce_hook(state, bucket)
        d.register_comm_hook(None, spy)
        its = []
        for k in range(3):
            seen.clear()
            _step(torch, d, r, k, 300, 4)
            its.append(list(seen))
        res[repr(sorted(kw.items()))] = [its, _grads(d)[-1]]
    return res


# ---------------------------------------------------------------- ZeroRedundancyOptimizer
def _zero(torch, m, **kw):
    zro = importlib.import_module(torch.__name__ + ".distributed.optim")
    return zro.ZeroRedundancyOptimizer(m.parameters(), optimizer_class=torch.optim.Adam,
                                       lr=0.05, **kw)


def c_zero_training_and_state_dicts(torch, dist, r, n):
    """Adam sharded over the ranks inside DDP: each rank's share, losses, parameters, the
    consolidated state dict (and its refusal elsewhere), a reload into a fresh optimizer and
    a group added later."""
    m = _model(torch, (4, 16, 8, 3))
    ddp = torch.nn.parallel.DistributedDataParallel(m)
    opt = _zero(torch, m)
    res = {"share": [list(p.shape) for g in opt.optim.param_groups for p in g["params"]],
           "losses": []}
    for k in range(3):
        opt.zero_grad()
        res["losses"].append(_step(torch, ddp, r, k, 4, 3))
        opt.step()
    res["params"] = [p.reshape(-1).tolist() for p in m.parameters()]
    opt.consolidate_state_dict(to=0)
    sd = attempt(opt.state_dict)
    if r == 0:
        res["state"] = {i: {k: (tl(v) if hasattr(v, "tolist") else v) for k, v in st.items()}
                        for i, st in sd["state"].items()}
        res["groups"] = [{k: v for k, v in g.items() if k != "params"} | {"params": g["params"]}
                         for g in sd["param_groups"]]
    else:
        res["refused"] = sd
    got = [sd] if r == 0 else [None]
    dist.broadcast_object_list(got, src=0)
    fresh = _zero(torch, m)
    fresh.load_state_dict(got[0])
    fresh.zero_grad()
    _step(torch, ddp, r, 5, 4, 3)
    fresh.step()
    res["after_load"] = [p.reshape(-1).tolist() for p in m.parameters()]
    extra = torch.nn.Parameter(torch.ones(5) * (1 + r))
    fresh.add_param_group({"params": [extra], "lr": 0.5})
    extra.grad = torch.ones(5)
    fresh.step()
    res["added"] = [extra.tolist(), [len(g["params"]) for g in fresh.optim.param_groups]]
    return res


def _barrier(dist, tries=50):
    """A barrier between checks. torch's gloo barrier first waits for the works still in progress
    and re-raises a failed one's error, raised already by that op's own wait (an int AVG's
    division), before it meets the other ranks: on a loaded machine several failed works can
    still be listed, one error per try."""
    for _ in range(tries - 1):
        try:
            return dist.barrier()
        except RuntimeError:
            pass
    dist.barrier()


def run(rank, world, lib, out, port):
    torch = importlib.import_module(lib)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist = torch.distributed
    dist.init_process_group("gloo", rank=rank, world_size=world)
    res = {}
    for name, fn in sorted(globals().items()):
        if name.startswith("c_"):
            try:
                res[name] = fn(torch, dist, rank, world)
            except Exception as e:
                res[name] = err(e)
            _barrier(dist)
    with open(f"{out}.rank{rank}.json", "w") as f:
        json.dump(res, f)
    dist.destroy_process_group()


if __name__ == "__main__":
    lib, out = sys.argv[1], sys.argv[2]
    world = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    importlib.import_module(lib + ".multiprocessing").spawn(
        run, args=(world, lib, out, port), nprocs=world)
