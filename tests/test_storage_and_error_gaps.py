"""Gaps against torch 2.13: masked_scatter's shape/dtype errors (order of the two sizes, the
in-place form's expand error, legacy dtype names), expand's type name, LinAlgError's class,
embedding_bag's out-of-range index errors, Tensor.set_, data_ptr / untyped_storage, and
channels_last gradients and optimizer state."""
from __future__ import annotations

import warnings

import pytest
import torch

import torchlike


def _outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return "ok", tuple(r.shape), r.tolist()


# ------------------------------------------------------------------ masked_scatter

_MS_SHAPES = [(4,), (3,), (4, 3), (2, 1), (1, 3), (2, 3, 1), (5, 2, 3), (2, 2), (2, 3)]
_MS_DTYPES = [("bool", "float32"), ("uint8", "float32"), ("bool", "float64"),
              ("uint8", "float64"), ("float32", "float32"), ("int64", "float32")]


@pytest.mark.parametrize("form", ["method", "inplace", "toplevel"])
@pytest.mark.parametrize("mshape", _MS_SHAPES, ids=str)
@pytest.mark.parametrize("dts", _MS_DTYPES, ids=str)
def test_masked_scatter_errors_as_torch(form, mshape, dts):
    def run(m):
        x = m.zeros(2, 3)
        mask = m.ones(*mshape, dtype=getattr(m, dts[0]))
        src = m.arange(100, dtype=getattr(m, dts[1]))
        if form == "method":
            return x.masked_scatter(mask, src)
        if form == "inplace":
            return x.clone().masked_scatter_(mask, src)
        return m.masked_scatter(x, mask, src)
    assert _outcome(lambda: run(torchlike)) == _outcome(lambda: run(torch))


@pytest.mark.parametrize("inplace", [False, True])
def test_masked_scatter_too_few_source_elements(inplace):
    def run(m):
        x = m.zeros(2, 3)
        mask = m.ones(2, 3, dtype=m.bool)
        return (x.masked_scatter_ if inplace else x.masked_scatter)(mask, m.zeros(4))
    assert _outcome(lambda: run(torchlike)) == _outcome(lambda: run(torch))


def test_masked_scatter_uint8_mask_warns_as_torch():
    for m in (torch, torchlike):
        with pytest.warns(UserWarning, match="received a mask with dtype torch.uint8"):
            with pytest.raises(RuntimeError, match="dtype Byte"):
                m.zeros(2, 3).masked_scatter_(m.ones(2, 3, dtype=m.uint8), m.zeros(6))


@pytest.mark.parametrize("dt", ["bool", "float32", "float64", "int64", "int32", "int16", "int8",
                                "float16", "bfloat16", "uint8", "complex64", "complex128"])
def test_expand_too_few_sizes_names_the_type_as_torch(dt):
    def run(m):
        return m.ones(2, 3, dtype=getattr(m, dt)).expand(3)
    assert _outcome(lambda: run(torchlike)) == _outcome(lambda: run(torch))


# ------------------------------------------------------------------ LinAlgError

def test_linalg_error_class_as_torch():
    for m in (torch, torchlike):
        E = m.linalg.LinAlgError
        assert E.__name__ == E.__qualname__ == "_LinAlgError"
        assert issubclass(E, RuntimeError)
    assert torch.linalg.LinAlgError is torch._C._LinAlgError


@pytest.mark.parametrize("case", ["inv", "solve", "cholesky", "inv_ex"])
def test_linalg_error_is_caught_and_named_as_torch(case):
    def run(m):
        z, n = m.zeros(2, 2), -m.eye(2)
        f = {"inv": lambda: m.linalg.inv(z), "solve": lambda: m.linalg.solve(z, m.ones(2)),
             "cholesky": lambda: m.linalg.cholesky(n),
             "inv_ex": lambda: m.linalg.inv_ex(z, check_errors=True)}[case]
        try:
            f()
        except m.linalg.LinAlgError as e:
            return type(e).__name__, str(e)
        return None
    assert run(torchlike) == run(torch)


def test_linalg_error_pickles():
    import pickle
    E = torchlike.linalg.LinAlgError
    assert type(pickle.loads(pickle.dumps(E("x")))) is E


# ------------------------------------------------------------------ embedding_bag out of range

_EB_CASES = [([1, 7, 2], [0, 1]), ([7, 1, 2], [0, 1]), ([1, 2, 7], [0, 1]), ([1, 2, 7], [0, 2]),
             ([1, 2, 3, 7], [0, 2]), ([1, 7, 2], [0]), ([1, 7], [0, 1]), ([7], [0]),
             ([1, -1], [0]), ([1, 2, -3], [0, 1]), ([1, 2, 7], [0, 0, 2]),
             ([1, 2, 3, 4, 7, 1, 2, 3], [0, 1, 2, 3, 4, 5, 6, 7]),
             ([[1, 7], [2, 3]], None), ([[7, 1], [2, 3]], None), ([[1, 2], [3, 7]], None)]


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("dt", ["float32", "float64", "float16"])
@pytest.mark.parametrize("case", _EB_CASES, ids=str)
def test_embedding_bag_out_of_range_index_as_torch(case, dt, mode, threads):
    def run(m):
        idx, off = case
        w = m.ones(5, 3, dtype=getattr(m, dt))
        old = m.get_num_threads()
        m.set_num_threads(threads)
        try:
            return m.nn.functional.embedding_bag(
                m.tensor(idx), w, None if off is None else m.tensor(off), mode=mode)
        finally:
            m.set_num_threads(old)
    assert _outcome(lambda: run(torchlike)) == _outcome(lambda: run(torch))


@pytest.mark.parametrize("kw", ["padding_idx", "per_sample_weights", "include_last_offset"])
def test_embedding_bag_out_of_range_index_options_as_torch(kw):
    def run(m, idx):
        extra = {"padding_idx": {"padding_idx": 1},
                 "per_sample_weights": {"per_sample_weights": m.ones(3)},
                 "include_last_offset": {"include_last_offset": True}}[kw]
        off = [0, 1, 3] if kw == "include_last_offset" else [0, 1]
        return m.nn.functional.embedding_bag(m.tensor(idx), m.ones(5, 3), m.tensor(off),
                                             mode="sum", **extra)
    for idx in ([1, 7, 2], [7, 1, 2]):
        assert _outcome(lambda: run(torchlike, idx)) == _outcome(lambda: run(torch, idx))
