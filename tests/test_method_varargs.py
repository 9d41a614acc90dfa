"""Tensor methods' argument forms (varargs dims, a tuple, a keyword) as torch 2.13 takes them."""
import numpy as np
import pytest
import torch

import torchlike

CASES = {
 "flip(0,1)": lambda x: x.flip(0, 1), "flip(0)": lambda x: x.flip(0),
 "tile(2,1,1)": lambda x: x.tile(2, 1, 1), "tile(2)": lambda x: x.tile(2), "tile((2,1))": lambda x: x.tile((2, 1)),
 "repeat(2,1,1)": lambda x: x.repeat(2, 1, 1), "permute(2,0,1)": lambda x: x.permute(2, 0, 1),
 "view(6,4)": lambda x: x.view(6, 4), "reshape(6,4)": lambda x: x.reshape(6, 4), "expand(2,2,3,4)": lambda x: x.expand(2, 2, 3, 4),
 "squeeze(0,1)": lambda x: x[:1, :1].squeeze(0, 1), "new_zeros(2,3)": lambda x: x.new_zeros(2, 3), "new_ones(2)": lambda x: x.new_ones(2),
 "new_empty(2,3)": lambda x: x.new_empty(2, 3).shape, "new_full": lambda x: x.new_full((2,), 3.),
 "new_zeros(size=)": lambda x: x.new_zeros(size=(2, 3)), "new_ones(size=[2])": lambda x: x.new_ones(size=[2]),
 "new_empty(size=)": lambda x: x.new_empty(size=(3,)).shape, "new_ones(dtype of another)": lambda x: x.new_ones(2, dtype=x.long().dtype),
 "new_zeros device": lambda x: str(x.new_zeros(2, device="meta").device), "new_tensor device": lambda x: str(x.new_tensor([1.0]).device),
 "new_full(size=)": lambda x: x.new_full(size=(2,), fill_value=3.), "sum(dim=(0,1))": lambda x: x.sum((0, 1)),
 "amax(0,1)?": lambda x: x.amax((0, 1)), "roll(1,0)": lambda x: x.roll(1, 0), "rot90(1,[0,1])": lambda x: x.rot90(1, [0, 1]),
 "movedim(0,1)": lambda x: x.movedim(0, 1), "resize_(4,6)": lambda x: x.clone().resize_(4, 6).shape, "unflatten": lambda x: x.unflatten(2, (2, 2)),
 "size(1)": lambda x: x.size(1), "stride": lambda x: x.stride(), "mean((0,2))": lambda x: x.mean((0, 2)), "std(0)": lambda x: x.std(0),
 "broadcast_to": lambda x: x.broadcast_to(2, 2, 3, 4) if False else x.broadcast_to((2, 2, 3, 4)), "expand_as": lambda x: x[:1].expand_as(x),
 "split(2,1)": lambda x: x.split(2, 1)[0], "chunk(2,2)": lambda x: x.chunk(2, 2)[1], "tensor_split": lambda x: x.tensor_split(2, 1)[0],
 "narrow": lambda x: x.narrow(0, 1, 1), "unfold": lambda x: x.unfold(2, 2, 1), "transpose(-1,0)": lambda x: x.transpose(-1, 0),
 "swapaxes": lambda x: x.swapaxes(0, 1), "swapdims": lambda x: x.swapdims(0, 1), "moveaxis": lambda x: x.moveaxis(0, -1),
 "view(dtype)": lambda x: x.view(torch.int32 if isinstance(x, torch.Tensor) else torchlike.int32), "flatten(1)": lambda x: x.flatten(1),
 "ravel": lambda x: x.ravel(), "T": lambda x: x[0].T, "mT": lambda x: x.mT, "mH": lambda x: x.mH, "H": lambda x: x[0].H,
 "count_nonzero(0)": lambda x: x.count_nonzero(0), "count_nonzero((0,1))": lambda x: x.count_nonzero((0,1)),
 "norm(dim=(0,1))": lambda x: x.norm(dim=(0, 1)), "logsumexp((0,1))": lambda x: x.logsumexp((0, 1)), "nansum((0,1))": lambda x: x.nansum((0,1)),
 "var((0,1))": lambda x: x.var((0, 1)), "prod(1)": lambda x: x.prod(1), "all((0,1))": lambda x: (x > 3).all((0, 1)), "any((0,1))": lambda x: (x > 3).any((0, 1)),
 "aminmax": lambda x: x.aminmax(dim=0)[0], "max(0)": lambda x: x.max(0)[0], "sort(0)": lambda x: x.sort(0)[0], "topk": lambda x: x.topk(2, 1)[0],
 "cumsum(0)": lambda x: x.cumsum(0), "diff": lambda x: x.diff(dim=0), "flipud": lambda x: x.flipud(), "index_select": lambda x: x.index_select(1, (torch if isinstance(x, torch.Tensor) else torchlike).tensor([0, 2])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_method_argument_forms_match_torch(name):
    f = CASES[name]
    xt, xl = torch.arange(24.).reshape(2, 3, 4), torchlike.arange(24.).reshape(2, 3, 4)
    try:
        want = f(xt)
    except Exception as e:          # torch refuses: torchlike raises the same class
        with pytest.raises(type(e)):
            f(xl)
        return
    got = f(xl)
    if isinstance(want, torch.Tensor):
        assert tuple(got.shape) == tuple(want.shape)
        assert str(got.dtype) == str(want.dtype)
        np.testing.assert_allclose(np.asarray(got.numpy()).astype(float),
                                   want.numpy().astype(float))
    elif isinstance(want, (tuple, torch.Size)):
        assert tuple(got) == tuple(want)
    else:
        assert got == want


def test_layout_is_the_strided_object():
    x = torchlike.ones(2)
    assert x.layout is torchlike.strided and repr(x.layout) == repr(torch.ones(2).layout)
    assert torchlike.zeros(2, layout=x.layout).layout is torchlike.strided


_NO_SIZES = ["view", "reshape", "permute", "expand", "broadcast_to", "flip", "tile",
             "sum_to_size", "resize_"]


@pytest.mark.parametrize("shape", [(2, 3), (1,), ()], ids=str)
@pytest.mark.parametrize("name", _NO_SIZES)
def test_a_sized_method_called_without_its_sizes_raises_as_torch(name, shape):
    """``x.flip()``, ``x.reshape()``... name their missing argument in torch's TypeError (a
    value or a RuntimeError before); a 0-dim or one-element tensor, whose empty sizes the
    library's own calls pass, gives torch's result where torch gives one."""
    from oracle import both_outcomes
    got = both_outcomes(lambda m: getattr(m.ones(*shape).clone(), name)())
    if got is not None:
        np.testing.assert_array_equal(np.asarray(got[0]), got[1].numpy())


@pytest.mark.parametrize("fn", ["reshape", "permute", "broadcast_to"])
def test_a_sized_function_called_without_its_sizes_raises_as_torch(fn):
    from oracle import both_outcomes
    assert both_outcomes(lambda m: getattr(m, fn)(m.ones(2, 3))) is None


@pytest.mark.parametrize("arg", ["tensor", "empty", "list of a list"])
@pytest.mark.parametrize("name", ["cat", "concat", "concatenate", "stack", "hstack", "vstack",
                                  "row_stack", "dstack", "column_stack", "block_diag",
                                  "cartesian_prod", "broadcast_tensors"])
def test_a_tensor_sequence_argument_refuses_what_torch_refuses(name, arg):
    """A Tensor where a sequence of Tensors belongs (``torch.cat(x)``: a value before), an empty
    sequence, a list inside the variadic forms: torch's exception class and message."""
    from oracle import both_outcomes

    def fn(m):
        x = m.ones(2, 2)
        a = {"tensor": x, "empty": [], "list of a list": [x]}[arg]
        return getattr(m, name)(a)
    got = both_outcomes(fn)
    if got is not None:
        ours, theirs = got
        ours = ours if isinstance(ours, tuple) else (ours,)
        theirs = theirs if isinstance(theirs, tuple) else (theirs,)
        assert [tuple(t.shape) for t in ours] == [tuple(t.shape) for t in theirs]


@pytest.mark.parametrize("call", [
    "x.split(split_size=2)", "x.split(split_size=2, dim=0)", "x.split(torch.tensor(4))",
    "x.split([2, 4])", "torch.split(x, split_size_or_sections=[1, 5])",
    "torch.split(x, split_size=2)", "x.unsafe_split(split_size=4)",
    "torch.unsafe_split(x, [1, 5])", "x.unsafe_split(2)",
])
def test_split_parameters_as_torch(call):
    """``Tensor.split``'s parameter is ``split_size`` (torch writes it in Python) and
    ``torch.split``'s ``split_size_or_sections``; ``unsafe_split`` takes one int size."""
    from oracle import both_outcomes
    got = both_outcomes(lambda m: [tuple(t.shape) for t in eval(
        call, {"torch": m, "x": m.arange(6.)})], msg="first_line")
    if got is not None:
        assert got[0] == got[1]


@pytest.mark.parametrize("other", [(3, 2), (6,)], ids=str)
def test_resize_and_resize_as_warn_as_torch(other):
    """The out-of-place ``resize``/``resize_as`` are deprecated (torch's warning, at the
    caller's line); ``resize_as`` takes ``tensor=``."""
    import warnings
    for m in (torch, torchlike):
        x = m.arange(6.)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = x.resize_as(tensor=m.ones(other))
            r2 = x.resize(*other)
        assert tuple(r.shape) == other and tuple(r2.shape) == other
        got = [(str(a.message), a.filename) for a in w]
        assert ("non-inplace resize_as is deprecated", __file__) in got
        assert ("non-inplace resize is deprecated", __file__) in got
