"""torch.return_types side by side with torch: every op that returns a structseq gives the same
type name, module, fields and repr; the classes behave as torch's (tuple behaviour,
construction from one sequence and its errors, read-only fields, pickling, copying, no
namedtuple API) and are pytree nodes (jax, torch.utils._pytree, torch.func); out= gives the
``*_out`` class; DataLoader collation makes them lists, as torch's does."""
from __future__ import annotations

import copy
import pickle
import re
import warnings

import numpy as np
import pytest
import torch

import torchlike

A = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0], [2.0, 2.0, 6.0]])
SPD = A @ A.T + 3 * np.eye(3)
TALL = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])
V = np.array([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0])


def _lu(m, a):
    LU, piv = m.linalg.lu_factor(a)
    return m.lu_unpack(LU, piv)


# (id, call(m, *tensors), numpy args): each returns a torch.return_types instance in torch
CASES = [
    ("max_dim", lambda m, a: m.max(a, 0), (A,)),
    ("max_method", lambda m, a: a.max(dim=1, keepdim=True), (A,)),
    ("min_dim", lambda m, a: m.min(a, 1), (A,)),
    ("median_dim", lambda m, a: m.median(a, 0), (A,)),
    ("nanmedian_dim", lambda m, a: m.nanmedian(a, 1), (A,)),
    ("mode", lambda m, a: m.mode(a, 0), (A,)),
    ("kthvalue", lambda m, a: m.kthvalue(a, 2, 1), (A,)),
    ("topk", lambda m, a: m.topk(a, 2), (V,)),
    ("topk_2d", lambda m, a: a.topk(2, dim=0), (A,)),
    ("sort", lambda m, a: m.sort(a), (V,)),
    ("sort_2d", lambda m, a: a.sort(dim=0, descending=True), (A,)),
    ("cummax", lambda m, a: m.cummax(a, 0), (V,)),
    ("cummin", lambda m, a: m.cummin(a, 1), (A,)),
    ("aminmax", lambda m, a: m.aminmax(a), (A,)),
    ("aminmax_dim", lambda m, a: m.aminmax(a, dim=0), (A,)),
    ("frexp", lambda m, a: m.frexp(a), (A,)),
    ("histogram", lambda m, a: m.histogram(a, 4), (V,)),
    ("histogram_edges", lambda m, a: m.histogram(a, m.tensor([0.0, 2.0, 10.0],
                                                             dtype=m.float64)), (V,)),
    ("histogramdd", lambda m, a: m.histogramdd(a[:, :2], bins=[2, 3]), (A,)),
    ("slogdet", lambda m, a: m.slogdet(a), (A,)),
    ("linalg_slogdet", lambda m, a: m.linalg.slogdet(a), (A,)),
    ("linalg_slogdet_batch", lambda m, a: m.linalg.slogdet(m.stack([a, 2 * a])), (A,)),
    ("linalg_eigh", lambda m, a: m.linalg.eigh(a), (SPD,)),
    ("linalg_eig", lambda m, a: m.linalg.eig(a), (SPD,)),
    ("linalg_svd", lambda m, a: m.linalg.svd(a), (SPD,)),
    ("svd", lambda m, a: m.svd(a), (SPD,)),
    ("linalg_qr", lambda m, a: m.linalg.qr(a), (TALL,)),
    ("qr", lambda m, a: m.qr(a), (TALL,)),
    ("linalg_inv_ex", lambda m, a: m.linalg.inv_ex(a), (A,)),
    ("linalg_cholesky_ex", lambda m, a: m.linalg.cholesky_ex(a), (SPD,)),
    ("linalg_lu_factor", lambda m, a: m.linalg.lu_factor(a), (A,)),
    ("linalg_lu_factor_ex", lambda m, a: m.linalg.lu_factor_ex(a), (A,)),
    ("linalg_lu", lambda m, a: m.linalg.lu(a), (A,)),
    ("lu_unpack", _lu, (A,)),
    ("lu_get_infos", lambda m, a: m.lu(a, get_infos=True), (A,)),
    ("linalg_solve_ex", lambda m, a, b: m.linalg.solve_ex(a, b), (A, TALL)),
    ("linalg_lstsq", lambda m, a, b: m.linalg.lstsq(a, b), (TALL, A[:, :2])),
    ("triangular_solve", lambda m, a, b: m.triangular_solve(b, m.triu(a)), (SPD, TALL)),
    ("linalg_ldl_factor", lambda m, a: m.linalg.ldl_factor(a), (SPD,)),
    ("linalg_ldl_factor_ex", lambda m, a: m.linalg.ldl_factor_ex(a), (SPD,)),
]


def _run(m, call, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return call(m, *[m.tensor(a) for a in args])


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_structseq_matches_torch(case):
    _, call, args = case
    t = _run(torch, call, args)
    r = _run(torchlike, call, args)
    assert type(t).__module__ == type(r).__module__ == "torch.return_types"
    assert type(r).__name__ == type(t).__name__
    assert type(r).__qualname__ == type(t).__qualname__
    assert str(type(r)) == str(type(t))
    assert type(r).__match_args__ == type(t).__match_args__
    assert (type(r).n_fields, type(r).n_sequence_fields, type(r).n_unnamed_fields) == \
        (type(t).n_fields, type(t).n_sequence_fields, type(t).n_unnamed_fields)
    assert isinstance(r, tuple) and len(r) == len(t)
    assert not hasattr(r, "_fields") and not hasattr(r, "_asdict")
    if case[0] not in ("linalg_eig", "linalg_svd", "svd", "linalg_eigh", "linalg_qr", "qr",
                       "linalg_lstsq", "linalg_ldl_factor", "linalg_ldl_factor_ex"):
        # (decompositions: signs / phases / LAPACK drivers may differ in the last digits)
        assert repr(r) == repr(t)
        assert str(r) == str(t)
    else:
        def shape(text):        # the type line and each field's first line up to its "="
            return [ln.split("=")[0] for ln in text.splitlines() if re.match(r"\w+=|torch", ln)]
        assert shape(repr(r)) == shape(repr(t))
        assert repr(r).count("\n") == repr(t).count("\n")
    for f, a, b in zip(type(t).__match_args__, r, t):
        assert getattr(r, f) is a


def test_namespace_matches_torch():
    names = {n for n in dir(torch.return_types)
             if isinstance(getattr(torch.return_types, n), type)
             and issubclass(getattr(torch.return_types, n), tuple)} - {"_attr"}   # (a loop var)
    assert names <= set(dir(torchlike.return_types))
    for n in names:
        c, tc = getattr(torchlike.return_types, n), getattr(torch.return_types, n)
        assert c.__match_args__ == tc.__match_args__, n
        assert c.__qualname__ == tc.__qualname__ and c.__module__ == tc.__module__
        assert c.__mro__[1:] == (tuple, object)
        assert c.__doc__ is None
    assert set(torchlike.return_types.__all__) == set(torch.return_types.__all__)
    assert [c.__name__ for c in torchlike.return_types.all_return_types] == \
        [c.__name__ for c in torch.return_types.all_return_types]
    assert torchlike.return_types.max is not torchlike.return_types.max_out
    assert "return_types" in dir(torchlike) or torchlike.return_types is not None


def _both(name, values_fn):
    return (getattr(torch.return_types, name)(values_fn(torch)),
            getattr(torchlike.return_types, name)(values_fn(torchlike)))


@pytest.mark.parametrize("values_fn", [
    lambda m: (m.tensor([3.0, 4.0]), m.tensor([1, 1])),
    lambda m: (m.ones(2, 3), m.zeros(2, 3, dtype=m.long)),
    lambda m: (1, "a"),
    lambda m: [m.tensor(1.0), [m.tensor(2)]],
    lambda m: iter((None, 2.5)),
    lambda m: "ab",
], ids=["tensors", "2d", "non_tensor", "list_field", "iterator", "string"])
def test_construction_and_repr(values_fn):
    t, r = _both("max", values_fn)
    assert repr(r) == repr(t) and str(r) == str(t) and f"{r}" == f"{t}"
    assert type(r).__name__ == "max"
    tt = torch.return_types.max((torch.tensor([3.0, 4.0]), torch.tensor([1, 1])))
    assert repr(tt) == ("torch.return_types.max(\nvalues=tensor([3., 4.]),\n"
                        "indices=tensor([1, 1]))")


def _err(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    return None


@pytest.mark.parametrize("call", [
    lambda T: T(),
    lambda T: T((1, 2), {}, 3),
    lambda T: T((1, 2), 3),
    lambda T: T((1, 2), None),
    lambda T: T(1, 2),
    lambda T: T((1, 2, 3)),
    lambda T: T((1,)),
    lambda T: T(x=1),
    lambda T: T((1, 2), foo=1),
    lambda T: T((1, 2), dict={}, foo=1),
    lambda T: T(sequence=(1, 2)),
    lambda T: T((1, 2), dict={"a": 1}),
    lambda T: T((1, 2)).foo,
    lambda T: setattr(T((1, 2)), "values", 3),
    lambda T: setattr(T((1, 2)), "foo", 3),
    lambda T: delattr(T((1, 2)), "indices"),
    lambda T: T((1, 2)).__dict__,
    lambda T: type("S", (T,), {}),
    lambda T: format(T((1, 2)), "s"),      # (torch names its C type: torch.return_types.max)
    lambda T: format(T((1, 2)), ">20"),
])
def test_constructor_and_attribute_errors(call):
    t = _err(lambda: call(torch.return_types.max))
    r = _err(lambda: call(torchlike.return_types.max))
    assert t == r


def test_tuple_behaviour():
    x = torchlike.tensor([[1.0, 5.0], [7.0, 2.0]])
    r = torchlike.max(x, 1)
    v, i = r
    assert v is r[0] is r.values and i is r[1] is r.indices and r[-1] is i
    assert len(r) == 2 and isinstance(r, tuple) and list(r) == [v, i]
    assert r == (v, i) and r == torchlike.return_types.max((v, i)) and hash(r) == hash((v, i))
    assert type(r[:1]) is tuple and type(r + (1,)) is tuple
    assert torchlike.return_types.max((1, 2)).count(2) == 1
    assert torchlike.return_types.max((1, 2)).index(2) == 1
    assert type(r).__match_args__ == ("values", "indices")
    match r:
        case torchlike.return_types.max(values=vv, indices=ii):
            assert vv is v and ii is i
        case _:
            raise AssertionError("match")
    assert sorted(set(dir(type(r))) - set(dir(tuple))) in (
        ["__getattr__", "__match_args__", "__module__", "indices", "n_fields",
         "n_sequence_fields", "n_unnamed_fields", "values"],)
    for name in ("_fields", "_asdict", "_replace", "_make", "_field_defaults"):
        assert hasattr(torch.max(torch.tensor([1.0]), 0), name) is False
        assert hasattr(r, name) is False


def test_pickle_and_copy():
    r = torchlike.sort(torchlike.tensor([[3.0, 1.0], [0.0, 2.0]]), 1)
    for got in (pickle.loads(pickle.dumps(r)), copy.copy(r), copy.deepcopy(r)):
        assert type(got) is type(r) and repr(got) == repr(r)
    assert copy.copy(r)[0] is r[0]
    assert copy.deepcopy(r)[0] is not r[0]
    o = torchlike.return_types.max_out((1, 2))
    assert type(pickle.loads(pickle.dumps(o))) is torchlike.return_types.max_out


OUT_CASES = [
    ("max", lambda m, o: m.max(m.tensor(A), 0, out=o), ("f", "l")),
    ("sort", lambda m, o: m.sort(m.tensor(V), out=o), ("f", "l")),
    ("topk", lambda m, o: m.topk(m.tensor(V), 3, out=o), ("f", "l")),
    ("cummax", lambda m, o: m.cummax(m.tensor(V), 0, out=o), ("f", "l")),
    ("aminmax", lambda m, o: m.aminmax(m.tensor(A), out=o), ("f", "f")),
    ("frexp", lambda m, o: m.frexp(m.tensor(V), out=o), ("f", "i")),
    ("linalg_slogdet", lambda m, o: m.linalg.slogdet(m.tensor(A), out=o), ("f", "f")),
    ("linalg_eigh", lambda m, o: m.linalg.eigh(m.tensor(SPD), out=o), ("f", "f")),
    ("linalg_qr", lambda m, o: m.linalg.qr(m.tensor(A), out=o), ("f", "f")),
    ("histogram", lambda m, o: m.histogram(m.tensor(V), 3, out=o), ("f", "f")),
]


@pytest.mark.parametrize("case", OUT_CASES, ids=[c[0] for c in OUT_CASES])
def test_out_gives_the_out_class(case):
    _, call, kinds = case

    def outs(m):
        dt = {"f": m.float64, "l": m.long, "i": m.int32}
        return tuple(m.empty(0, dtype=dt[k]) for k in kinds)
    t = call(torch, outs(torch))
    r = call(torchlike, outs(torchlike))
    assert type(r).__name__ == type(t).__name__ and type(r).__name__.endswith("_out")
    assert type(r).__module__ == "torch.return_types"
    if case[0] not in ("linalg_eigh", "linalg_qr"):
        assert repr(r) == repr(t)


def test_pytrees():
    import jax
    import torchlike.utils._pytree as tlp
    import torch.utils._pytree as tp
    x = torchlike.tensor([[1.0, 5.0], [7.0, 2.0]])
    r = torchlike.max(x, 1)
    # jax: a node of two leaves (its Tensors' arrays), rebuilt as the same class
    leaves, tree = jax.tree_util.tree_flatten(r, is_leaf=lambda v: isinstance(v, torchlike.Tensor))
    assert len(leaves) == 2 and leaves[0] is r.values
    back = jax.tree_util.tree_unflatten(tree, leaves)
    assert type(back) is type(r) and back[1] is r.indices
    # torch.utils._pytree: as torch's (a registered node, context None)
    leaves, spec = tlp.tree_flatten(r)
    tleaves, tspec = tp.tree_flatten(torch.max(torch.tensor([[1.0, 5.0]]), 1))
    assert len(leaves) == len(tleaves) == 2 and spec.type is type(r)
    assert spec.context is None and tspec.context is None
    back = tlp.tree_unflatten(leaves, spec)
    assert type(back) is type(r) and back.values is r.values
    mapped = tlp.tree_map(lambda v: v * 2, r)
    assert type(mapped) is type(r)


def test_func_transforms_keep_the_class():
    x = np.arange(12.0).reshape(3, 2, 2)
    t = torch.func.vmap(lambda v: torch.max(v, 0))(torch.tensor(x))
    r = torchlike.func.vmap(lambda v: torchlike.max(v, 0))(torchlike.tensor(x))
    assert type(r) is torchlike.return_types.max and repr(r) == repr(t)
    r = torchlike.vmap(lambda v: torchlike.sort(v, 0), out_dims=0)(torchlike.tensor(x))
    assert type(r) is torchlike.return_types.sort
    with pytest.raises(ValueError):     # a tuple prefix is not a structseq's, as in torch
        torchlike.vmap(lambda v: torchlike.max(v, 0), out_dims=(0, 1))(torchlike.tensor(x))
    with pytest.raises(ValueError):
        torch.func.vmap(lambda v: torch.max(v, 0), out_dims=(0, 1))(torch.tensor(x))


def test_collate_makes_lists_as_torch():
    from torch.utils.data import default_collate as tcollate
    from torchlike.utils.data import default_collate as collate
    t = tcollate([torch.max(torch.tensor(A), 0)] * 2)
    r = collate([torchlike.max(torchlike.tensor(A), 0)] * 2)
    assert type(t) is list and type(r) is list and len(r) == 2
    np.testing.assert_array_equal(r[0].numpy(), t[0].numpy())


def test_dtype_messages_use_legacy_names():
    def both(f):
        return _err(lambda: f(torch)), _err(lambda: f(torchlike))
    for f in [lambda m: m.norm(m.tensor([1, 2])),
              lambda m: m.norm(m.tensor([1, 2], dtype=m.int16)),
              lambda m: m.tensor([1, 2], dtype=m.uint8).norm(),
              lambda m: m.linalg.vector_norm(m.tensor([True])),
              lambda m: m.dist(m.tensor([1, 2]), m.tensor([1, 2])),
              lambda m: m.isclose(m.tensor([1.0]), m.tensor([1.0], dtype=m.float64)),
              lambda m: m.tensor([1, 2]) & m.tensor([1.0]),
              lambda m: m.tensor([1.0]).half().bitwise_not(),
              lambda m: m.bitwise_xor(m.tensor([1.0], dtype=m.float64), 1),
              lambda m: m.tensor([1, 2]).masked_fill(m.tensor([1, 0]), 0),
              lambda m: m.histogram(m.tensor([1, 2]), 3),
              lambda m: m.histogram(m.tensor([1, 2]), m.tensor([1, 2])),
              lambda m: m.histogram(m.tensor([1.0, 2]), m.tensor([1.0, 2], dtype=m.float64)),
              lambda m: m.histogram(m.tensor([1.0, 2]), 3, weight=m.tensor([1, 2]))]:
        t, r = both(f)
        assert t is not None and t == r, (t, r)
