"""Tensor queries and argument checks real programs meet, each compared with torch: layout and
backend ``is_*`` queries, torch.Size's item types, the non-leaf ``.grad`` warning,
``autograd.grad`` with no inputs, sparse conversions (not provided: a clear error),
``format()`` specs, the ``.data`` setter's checks and ``.T``'s deprecation warnings."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import torchlike
from oracle import fresh_process_outputs


def outcome(fn, m, *args):
    """("ok", a comparable value) or (exception class name, message) of ``fn(m, *args)``."""
    try:
        r = fn(m, *args)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    if isinstance(r, (tuple, list)):
        return "ok", tuple(int(x) if not isinstance(x, (torch.Tensor, torchlike.Tensor))
                           else x.tolist() for x in r)
    return "ok", r

PROPERTIES = ["is_cpu", "is_cuda", "is_ipu", "is_leaf", "is_maia", "is_meta", "is_mkldnn",
              "is_mps", "is_mtia", "is_nested", "is_quantized", "is_sparse", "is_sparse_csr",
              "is_vulkan", "is_xla", "is_xpu"]
METHODS = ["is_complex", "is_conj", "is_contiguous", "is_distributed", "is_floating_point",
           "is_inference", "is_neg", "is_pinned", "is_shared", "is_signed"]
TENSORS = {
    "f32": lambda m: m.ones(2, 3), "i64": lambda m: m.arange(3), "bool": lambda m: m.ones(2) > 0,
    "c64": lambda m: m.ones(2, dtype=m.complex64), "u8": lambda m: m.ones(2, dtype=m.uint8),
    "nonleaf": lambda m: m.ones(2, requires_grad=True) * 2, "0dim": lambda m: m.tensor(1.5),
    "transposed": lambda m: m.ones(2, 3).t(),
}


def test_every_is_query_of_torch_is_covered():
    names = {n for n in dir(torch.ones(1)) if n.startswith("is_")}
    assert names == set(PROPERTIES) | set(METHODS) | {
        "is_coalesced", "is_nonzero", "is_same_size", "is_set_to"}


@pytest.mark.parametrize("kind", sorted(TENSORS))
def test_layout_and_backend_queries_as_torch(kind):
    t, lt = TENSORS[kind](torch), TENSORS[kind](torchlike)
    for name in PROPERTIES:
        assert getattr(lt, name) == getattr(t, name), name
    for name in METHODS:
        assert getattr(lt, name)() == getattr(t, name)(), name
    assert str(lt.layout) == str(t.layout) == "torch.strided"
    assert lt.is_same_size(TENSORS[kind](torchlike)) and t.is_same_size(TENSORS[kind](torch))
    assert lt.is_set_to(lt) == t.is_set_to(t)
    assert outcome(lambda m, x: x.is_coalesced(), torch, t) == \
        outcome(lambda m, x: x.is_coalesced(), torchlike, lt)


SIZES = [[2, 3], [], [np.int64(2)], [True, 2], [2.0], [2, 3.5], ["2"], [None], [1j],
         [np.float32(2)], (x for x in [4, 5])]


@pytest.mark.parametrize("items", SIZES,
                         ids=lambda v: "generator" if hasattr(v, "gi_frame") else repr(v))
def test_size_items_as_torch(items):
    items = list(items)
    theirs = outcome(lambda m, v: m.Size(v), torch, items)
    ours = outcome(lambda m, v: m.Size(v), torchlike, items)
    assert ours == theirs


def test_size_of_int_tensors_and_shapes():
    assert torchlike.Size([torchlike.tensor(3), 4]) == (3, 4)
    assert type(torchlike.ones(2, 3).shape) is torchlike.Size
    assert torchlike.ones(2, 3).shape[1:] == torchlike.Size([3])


def _grad_warnings(m, setup):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        g = setup(m)
    return [str(x.message) for x in w if issubclass(x.category, UserWarning)], g


def _retained(m):
    y = m.ones(2, requires_grad=True) * 2
    y.retain_grad()
    y.sum().backward()
    return y.grad


def _after_backward(m):
    y = m.ones(2, requires_grad=True) * 2
    y.sum().backward()
    return y.grad


GRAD_READS = {
    "nonleaf": lambda m: (m.ones(2, requires_grad=True) * 2).grad,
    "nonleaf_after_backward": _after_backward,
    "leaf": lambda m: m.ones(2, requires_grad=True).grad,
    "plain": lambda m: m.ones(2).grad,
    "retained": _retained,
    "detached": lambda m: (m.ones(2, requires_grad=True) * 2).detach().grad,
}


@pytest.mark.parametrize("case", sorted(GRAD_READS))
def test_non_leaf_grad_warning_as_torch(case):
    tw, tg = _grad_warnings(torch, GRAD_READS[case])
    lw, lg = _grad_warnings(torchlike, GRAD_READS[case])
    assert tw == lw
    assert (tg is None) == (lg is None)


def test_autograd_grad_with_no_inputs_raises_as_torch():
    for inputs in ([], ()):
        theirs = outcome(lambda m, i: m.autograd.grad((m.ones(2, requires_grad=True) * 2).sum(),
                                                      i), torch, inputs)
        ours = outcome(lambda m, i: m.autograd.grad((m.ones(2, requires_grad=True) * 2).sum(),
                                                    i), torchlike, inputs)
        assert ours == theirs


@pytest.mark.parametrize("name", ["to_sparse_csr", "to_sparse_csc", "to_sparse_bsr",
                                  "to_sparse_bsc", "to_mkldnn"])
def test_compressed_sparse_conversions_say_they_are_not_provided(name):
    """The sparse COO layout is provided (tests/test_sparse_coo_against_torch.py); the
    compressed layouts and mkldnn are not."""
    with pytest.raises(NotImplementedError, match=f"torchlike does not provide sparse .* so "
                                                  f"{name}\\(\\) is not provided"):
        getattr(torchlike.ones(2, 2), name)()


def test_record_stream_is_accepted():
    torchlike.ones(2).record_stream(None)


def test_an_integer_tensor_refuses_grad_in_each_callers_words():
    """torch words the refusal three ways: ``requires_grad_()``, the ``requires_grad``
    attribute, and ``nn.Parameter`` (a module built with an integer dtype)."""
    import torch
    import torchlike

    def msgs(m):
        out = []
        for f in (lambda: m.zeros(2, dtype=m.int64).requires_grad_(),
                  lambda: setattr(m.zeros(2, dtype=m.int64), "requires_grad", True),
                  lambda: m.nn.Parameter(m.zeros(2, dtype=m.int64)),
                  lambda: m.nn.Conv2d(4, 4, 3, dtype=m.int64)):
            with pytest.raises(RuntimeError) as info:
                f()
            out.append(str(info.value))
        return out
    assert msgs(torchlike) == msgs(torch)


def _format(m, spec, make):
    try:
        return repr(format(make(m), spec))
    except Exception as e:               # noqa: BLE001 (the class and message are compared)
        return f"{type(e).__name__}: {e}"


@pytest.mark.parametrize("spec", [".2f", "", ">10", "d", ".3e", "s"])
@pytest.mark.parametrize("make", [
    lambda m: m.tensor([1.0, 2.0]), lambda m: m.tensor(2.5), lambda m: m.tensor(3),
    lambda m: m.tensor(2.5, requires_grad=True), lambda m: m.nn.Parameter(m.tensor(1.5))],
    ids=["vector", "float0d", "int0d", "grad0d", "parameter0d"])
def test_format_specs_as_torch(spec, make):
    assert _format(torchlike, spec, make) == _format(torch, spec, make)


def _set_data(m):
    out = []
    x = m.ones(2, requires_grad=True)
    for v in [m.zeros(3, dtype=m.int64), m.zeros(2, dtype=m.float64), [1.0, 2.0],
              m.zeros(2, requires_grad=True)]:
        try:
            x.data = v
            out.append((str(x.dtype), x.requires_grad, tuple(x.shape)))
        except Exception as e:           # noqa: BLE001
            out.append(f"{type(e).__name__}: {e}")
    y = m.zeros(2, dtype=m.int64)
    y.data = m.zeros(2)
    return out + [str(y.dtype)]


def test_data_setter_checks_as_torch():
    assert _set_data(torchlike) == _set_data(torch)


_T_WARNINGS = """
import sys, warnings, importlib
m = importlib.import_module(sys.argv[1])
out = []
for n in (2, 0, 1, 3, 0):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = m.ones([2] * n).T.shape
    out.append((n, list(s), [(r.category.__name__, str(r.message).split(" (Triggered")[0])
                             for r in w]))
print(out)
"""


def test_T_of_a_tensor_not_2d_warns_once_a_process_as_torch():
    out = fresh_process_outputs(_T_WARNINGS)
    assert "deprecated" in out["torch"]
    assert out["torchlike"] == out["torch"]


_FLOAT_WARNS = """
import sys, warnings, importlib
m = importlib.import_module(sys.argv[1])
x = m.ones(1, requires_grad=True)
out = []
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    with m.no_grad():
        float(x)
    out.append(len(w))
    x.item(), int(x), x.tolist()
    out.append(len(w))
    float(x)
    float(x)
    out.append([str(r.message).split(" (Triggered")[0] for r in w])
print(out)
"""


def test_float_of_a_tensor_requiring_grad_warns_once_as_torch():
    out = fresh_process_outputs(_FLOAT_WARNS)
    assert "Converting a tensor" in out["torch"]
    assert out["torchlike"] == out["torch"]


def test_requires_grad_attribute_of_a_non_leaf_as_torch():
    def run(m):
        y = m.ones(2, requires_grad=True) * 2
        out = [y.requires_grad_(True) is y]
        for v in (True, False):
            try:
                y.requires_grad = v
                out.append("set")
            except RuntimeError as e:
                out.append(str(e))
        return out
    assert run(torchlike) == run(torch)


@pytest.mark.parametrize("make", [
    lambda m: (m.ones(2, requires_grad=True) * 2)[:1], lambda m: m.ones(3)[1:],
    lambda m: m.ones(3, requires_grad=True).detach(), lambda m: m.ones(2, requires_grad=True) * 2,
    lambda m: m.ones(3).view(3)], ids=["view of a result", "plain view", "detached", "result",
                                       "view op"])
def test_detach_in_place_refuses_views_as_torch(make):
    def run(m):
        t = make(m)
        try:
            t.detach_()
        except RuntimeError as e:
            return str(e)
        return t.requires_grad, t.grad_fn is None, t.is_leaf
    assert run(torchlike) == run(torch)


PYTHON_NUMBERS = {
    "int_of_real_complex": lambda m: int(m.tensor(2 + 0j)),
    "float_of_real_complex": lambda m: float(m.tensor(2.5 + 0j)),
    "int_of_complex_raises": lambda m: int(m.tensor(2 + 1j)),
    "float_of_complex_raises": lambda m: float(m.tensor(2 + 1j)),
    "index_of_bool": lambda m: (__import__("operator").index(m.tensor(True)),
                                [10, 20, 30][m.tensor(True)]),
    "index_of_float_raises": lambda m: __import__("operator").index(m.tensor(1.5)),
    "rmatmul_of_a_list_raises": lambda m: [[1.0, 2.0]] @ m.ones(2, 2),
    "typename": lambda m: (m.typename(1.0), m.typename([1]), m.typename(len),
                           m.typename(m.ones(1, dtype=m.int64))),
    "is_storage": lambda m: (m.is_storage(m.ones(1).untyped_storage()),
                             m.is_storage(m.ones(1))),
}


def test_from_numpy_of_a_read_only_array_warns_once_as_torch():
    from oracle import fresh_process_outputs
    out = fresh_process_outputs(
        "import sys, warnings, numpy as np\n"
        "m = __import__(sys.argv[1])\n"
        "a = np.zeros(3, np.float32); a.flags.writeable = False\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    print(m.from_numpy(a).tolist(), m.from_numpy(a).tolist())\n"
        "print([str(x.message).split(' (Triggered')[0] for x in w])\n")
    assert out["torchlike"] == out["torch"] and "not writable" in out["torch"]


@pytest.mark.parametrize("name", PYTHON_NUMBERS)
def test_python_numbers_and_names_as_torch(name):
    from oracle import same_as_torch
    same_as_torch(PYTHON_NUMBERS[name])


@pytest.mark.parametrize("call", ["numpy", "asarray", "force", "resolved", "real"])
def test_numpy_of_a_conjugated_tensor_as_torch(call):
    """A tensor with the conjugate bit set refuses ``numpy()`` (and numpy's conversion) unless
    forced or resolved, as torch's."""
    def run(m):
        t = m.tensor([1 + 2j, 3 - 1j]).conj()
        f = {"numpy": lambda: t.numpy(), "asarray": lambda: np.asarray(t),
             "force": lambda: t.numpy(force=True), "resolved": lambda: t.resolve_conj().numpy(),
             "real": lambda: m.tensor([1.0]).conj().numpy()}[call]
        try:
            return f()
        except RuntimeError as e:
            return str(e)
    want, got = run(torch), run(torchlike)
    if isinstance(want, str):
        assert got == want
    else:
        np.testing.assert_array_equal(got, want)
