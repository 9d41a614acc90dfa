"""The legacy constructors (``torch.FloatTensor(...)``, ``torch.Tensor(...)``, ``t.new(...)``)
against torch: every form (sizes, data, a tensor, nothing, a Size), a tensor of another dtype
(torch's TypeError), non-sequence data and keywords torch refuses."""
import numpy as np
import pytest
import torch

import torchlike

LEGACY = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
          "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]
SOURCES = {"float32": [1.5, 2.5], "float64": [1.5, 2.5], "int64": [1, 2], "int32": [1, 2],
           "uint8": [1, 0], "bool": [True, False], "bfloat16": [1.5, 2.5], "float16": [1.5, 2.5]}


def _outcome(fn):
    try:
        r = fn()
    except Exception as e:      # noqa: BLE001  (the class and message are compared)
        return (type(e).__name__, str(e).split("\n")[0])
    if isinstance(r, (torch.Tensor, torchlike.Tensor)):
        return ("tensor", str(r.dtype), tuple(r.shape), r.tolist())
    return ("value", repr(r))


def _same(fn):
    assert _outcome(lambda: fn(torchlike)) == _outcome(lambda: fn(torch))


@pytest.mark.parametrize("src", sorted(SOURCES))
@pytest.mark.parametrize("name", LEGACY + ["Tensor"])
def test_legacy_constructor_of_a_tensor(name, src):
    _same(lambda m: getattr(m, name)(m.tensor(SOURCES[src], dtype=getattr(m, src))))


@pytest.mark.parametrize("src", sorted(SOURCES))
@pytest.mark.parametrize("of", ["float32", "int64", "float16", "bool"])
def test_new_of_a_tensor(of, src):
    _same(lambda m: m.tensor(SOURCES[of], dtype=getattr(m, of)).new(
        m.tensor(SOURCES[src], dtype=getattr(m, src))))


FORMS = {
    "nothing": lambda c: c(),
    "sizes": lambda c: c(2, 3).shape,
    "empty_tuple": lambda c: c(()).shape,
    "list": lambda c: c([1, 2]),
    "nested_list": lambda c: c([[1, 2], [3, 4]]),
    "tuple": lambda c: c((1, 2)),
    "list_of_floats": lambda c: c([1.7, -2.2]),
    "numpy": lambda c: c(np.array([1, 2])),
    "zero_size": lambda c: c(0).shape,
    "float_scalar": lambda c: c(3.0),
    "none": lambda c: c(None),
    "string": lambda c: c("ab"),
    "device_keyword": lambda c: c([1.0], device="cpu"),
    "requires_grad_keyword": lambda c: c([1.0], requires_grad=True),
}


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("name", LEGACY + ["Tensor", "new"])
def test_legacy_constructor_forms(name, form):
    def make(m):
        c = (lambda *a, **k: m.tensor([1.0]).new(*a, **k)) if name == "new" else getattr(m, name)
        return FORMS[form](c)
    _same(make)


@pytest.mark.parametrize("name", ["FloatTensor", "LongTensor", "Tensor", "new"])
def test_legacy_constructor_of_a_size_and_with_dtype(name):
    for m in (torch, torchlike):
        c = (lambda *a, **k: m.tensor([1.0]).new(*a, **k)) if name == "new" else getattr(m, name)
        assert tuple(c(m.Size([2, 3])).shape) == (2, 3)
        with pytest.raises(TypeError, match="new\\(\\) received an invalid combination"):
            c([1.0], dtype=m.float64)


def test_legacy_constructor_of_a_tensor_is_an_alias():
    """Same dtype: an alias of the tensor's storage with autograd history, as torch."""
    for m in (torch, torchlike):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        for y in (m.FloatTensor(x), m.Tensor(x), x.new(x)):
            assert y is not x and y._base is x
            assert type(y.grad_fn).__name__ == "AliasBackward0"
        base = m.tensor([1.0, 2.0])
        m.FloatTensor(base).add_(1)
        assert base.tolist() == [2.0, 3.0]


@pytest.mark.parametrize("form", ["plain", "requires_grad", "volatile"])
def test_variable_as_torch(form):
    """``autograd.Variable``, the pre-0.4 wrapper: the tensor itself (a new leaf when asked for
    grad), and ``volatile=`` warns that it has no effect, as torch's."""
    import warnings

    def run(m):
        kw = {"plain": {}, "requires_grad": {"requires_grad": True},
              "volatile": {"volatile": True}}[form]
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            x = m.ones(2, requires_grad=True) * 2
            v = m.autograd.Variable(x, **kw)
            p = m.autograd.Variable(m.nn.Parameter(m.ones(2)), **kw)
        with m.no_grad():
            v.add_(1)                           # (the same storage)
        return (v is x, v.requires_grad, v.is_leaf, v.grad_fn, x.tolist(), type(p).__name__,
                isinstance(v, m.autograd.Variable), [str(x.message) for x in w])
    assert run(torchlike) == run(torch)
