"""The tensor queries given something that is not a tensor: torch's TypeError, in its words."""
import pytest
import torch

import torchlike

QUERIES = ["is_floating_point", "is_complex", "is_nonzero", "numel", "is_conj", "is_neg",
           "is_inference", "is_signed", "get_device"]
VALUES = {"float": 3.0, "int": 2, "list": [1.0], "none": None, "bool": True, "str": "x"}


def _error(fn):
    with pytest.raises(Exception) as e:
        fn()
    return type(e.value), str(e.value)


@pytest.mark.parametrize("value", sorted(VALUES))
@pytest.mark.parametrize("name", QUERIES)
def test_query_of_a_non_tensor_raises_as_torch(name, value):
    v = VALUES[value]
    assert _error(lambda: getattr(torchlike, name)(v)) == _error(lambda: getattr(torch, name)(v))


@pytest.mark.parametrize("value", sorted(VALUES))
def test_is_same_size_of_a_non_tensor_raises_as_torch(value):
    v = VALUES[value]
    for args in ((v, "t"), ("t", v)):
        want = _error(lambda: torch.is_same_size(*(torch.zeros(2) if a == "t" else a
                                                   for a in args)))
        got = _error(lambda: torchlike.is_same_size(*(torchlike.zeros(2) if a == "t" else a
                                                      for a in args)))
        assert got == want


@pytest.mark.parametrize("name", QUERIES)
def test_query_of_a_tensor_answers_as_torch(name):
    for make in (lambda m: m.tensor([1.5]), lambda m: m.tensor([3]), lambda m: m.tensor([0j])):
        assert getattr(torchlike, name)(make(torchlike)) == getattr(torch, name)(make(torch))
