"""Strides, contiguity and memory formats against torch.

Every view op's ``stride()`` follows from its input's (views are affine index maps over their
base), ``is_contiguous()`` (in every memory format) agrees with the strides, ``view`` raises
torch's error where no view exists, and copies (``clone``, ``contiguous``, ``to``, ``*_like``)
take the layout torch gives them.
"""
import math

import numpy as np
import pytest
import torch

import torchlike


def _x(m, *shape):
    return m.arange(float(math.prod(shape))).reshape(*shape)


CASES = {
    "t": lambda m: _x(m, 2, 3).t(),
    "T_3d": lambda m: _x(m, 2, 3, 4).T,
    "mT": lambda m: _x(m, 2, 3, 4).mT,
    "mH": lambda m: _x(m, 2, 3, 4).mH,
    "adjoint": lambda m: _x(m, 2, 3, 4).adjoint(),
    "permute": lambda m: _x(m, 2, 3, 4).permute(2, 0, 1),
    "transpose": lambda m: _x(m, 2, 3, 4).transpose(0, 2),
    "swapaxes": lambda m: _x(m, 2, 3, 4).swapaxes(1, 2),
    "movedim": lambda m: _x(m, 2, 3, 4).movedim(0, 2),
    "expand": lambda m: _x(m, 3, 1).expand(3, 4),
    "expand_new_dims": lambda m: _x(m, 3, 1).expand(2, 3, 4),
    "expand_0d": lambda m: m.tensor(1.0).expand(2, 3),
    "expand_new_dim_of_1": lambda m: _x(m, 3, 4).expand(1, 3, 4),
    "expand_of_transposed": lambda m: _x(m, 1, 3).t().expand(3, 5),
    "broadcast_to": lambda m: m.broadcast_to(_x(m, 4), (3, 4)),
    "slice_steps": lambda m: _x(m, 4, 6)[::2, 1::3],
    "slice_to_size_1": lambda m: _x(m, 4, 6)[0:1],
    "slice_empty": lambda m: _x(m, 4, 6)[:, 3:3],
    "index_none": lambda m: _x(m, 4, 6)[:, None],
    "index_none_last": lambda m: _x(m, 4, 6)[..., None],
    "index_int": lambda m: _x(m, 4, 6, 5)[1],
    "index_ellipsis_int": lambda m: _x(m, 4, 6, 5)[..., 2],
    "index_mixed": lambda m: _x(m, 4, 6, 5)[1:, None, ::2, 3],
    "index_false": lambda m: _x(m, 4, 6)[False],
    "index_of_transposed": lambda m: _x(m, 4, 6).t()[1:3],
    "diagonal": lambda m: _x(m, 3, 4).diagonal(),
    "diagonal_offset_dims": lambda m: _x(m, 3, 4, 5).diagonal(1, 0, 2),
    "unfold": lambda m: _x(m, 4, 10).unfold(1, 3, 3),
    "unfold_overlapping": lambda m: _x(m, 4, 10).unfold(1, 3, 1),
    "unfold_0d": lambda m: m.tensor(2.0).unfold(0, 1, 1),
    "as_strided": lambda m: _x(m, 10).as_strided((3, 2), (2, 1), 1),
    "as_strided_size_1": lambda m: _x(m, 10).as_strided((3, 1), (2, 5)),
    "as_strided_overlapping": lambda m: _x(m, 10).as_strided((3, 4), (1, 0)),
    "select": lambda m: _x(m, 3, 4, 5).select(1, 2),
    "narrow": lambda m: _x(m, 3, 4, 5).narrow(2, 1, 3),
    "unsqueeze": lambda m: _x(m, 3, 4).unsqueeze(1),
    "unsqueeze_last": lambda m: _x(m, 3, 4).unsqueeze(2),
    "unsqueeze_of_transposed": lambda m: _x(m, 3, 4).t().unsqueeze(0),
    "squeeze": lambda m: _x(m, 3, 1, 4).squeeze(),
    "squeeze_of_permuted": lambda m: _x(m, 3, 1, 4).permute(2, 1, 0).squeeze(1),
    "view_split_dims": lambda m: _x(m, 4, 6)[:, :3].view(2, 2, 3),
    "view_of_transposed_splits": lambda m: _x(m, 4, 6).t().view(3, 2, 4),
    "view_of_expanded": lambda m: _x(m, 3, 1).expand(3, 4).view(3, 2, 2),
    "view_size_1_dims": lambda m: _x(m, 4, 6)[::2].view(2, 1, 6, 1),
    "view_0d": lambda m: m.tensor(3.0).view(1, 1),
    "view_empty": lambda m: _x(m, 0, 3).t().view(3, 0, 1),
    "reshape_of_transposed": lambda m: _x(m, 4, 6).t().reshape(24),
    "reshape_viewable": lambda m: _x(m, 4, 6).t().reshape(3, 2, 4),
    "flatten_of_transposed": lambda m: _x(m, 2, 3, 4).transpose(1, 2).flatten(0, 1),
    "unflatten_of_transposed": lambda m: _x(m, 4, 6).t().unflatten(1, (2, 2)),
    "split": lambda m: _x(m, 4, 6).split(2, 1)[1],
    "chunk": lambda m: _x(m, 4, 6).chunk(2)[1],
    "unbind": lambda m: _x(m, 4, 6).unbind(1)[2],
    "detach_of_transposed": lambda m: _x(m, 2, 3).t().detach(),
    "data_of_transposed": lambda m: _x(m, 2, 3).t().data,
    "in_place_t_": lambda m: _x(m, 2, 3).t_(),
    "in_place_transpose_of_view": lambda m: _x(m, 2, 3, 4)[1].transpose_(0, 1),
    "zero_numel_transposed": lambda m: _x(m, 0, 3).t(),
    # copies: preserve_format keeps a dense layout, contiguous_format resets it
    "clone_of_transposed": lambda m: _x(m, 2, 3).t().clone(),
    "clone_contiguous_format": lambda m: _x(m, 2, 3).t().clone(memory_format=m.contiguous_format),
    "clone_of_expanded": lambda m: _x(m, 3, 1).expand(3, 4).clone(),
    "clone_of_stepped_slice": lambda m: _x(m, 4, 6)[:, ::2].clone(),
    "contiguous_of_transposed": lambda m: _x(m, 2, 3).t().contiguous(),
    "to_dtype_of_transposed": lambda m: _x(m, 2, 3).t().to(m.float64),
    "double_of_transposed": lambda m: _x(m, 2, 3).t().double(),
    "to_copy_of_transposed": lambda m: _x(m, 2, 3).t().to(m.float32, copy=True),
    "zeros_like_of_transposed": lambda m: m.zeros_like(_x(m, 2, 3).t()),
    "empty_like_of_expanded": lambda m: m.empty_like(_x(m, 3, 1).expand(3, 4)),
    "ones_like_contiguous_format": lambda m: m.ones_like(_x(m, 2, 3).t(),
                                                         memory_format=m.contiguous_format),
    "rand_like_of_permuted": lambda m: m.rand_like(_x(m, 2, 3, 4).permute(1, 2, 0)),
    "full_like_of_transposed": lambda m: m.full_like(_x(m, 2, 3).t(), 2.0),
    # memory formats
    "to_channels_last": lambda m: _x(m, 2, 3, 4, 5).to(memory_format=m.channels_last),
    "contiguous_channels_last": lambda m: _x(m, 2, 3, 4, 5).contiguous(
        memory_format=m.channels_last),
    "channels_last_then_contiguous": lambda m: _x(m, 2, 3, 4, 5).contiguous(
        memory_format=m.channels_last).contiguous(),
    "clone_of_channels_last": lambda m: _x(m, 2, 3, 4, 5).to(
        memory_format=m.channels_last).clone(),
    "empty_like_of_channels_last": lambda m: m.empty_like(_x(m, 2, 3, 4, 5).to(
        memory_format=m.channels_last)),
    "float_of_channels_last": lambda m: _x(m, 2, 3, 4, 5).to(
        memory_format=m.channels_last).to(m.float16),
    "select_of_channels_last": lambda m: _x(m, 2, 3, 4, 5).to(memory_format=m.channels_last)[0],
    "permute_of_channels_last": lambda m: _x(m, 2, 3, 4, 5).to(
        memory_format=m.channels_last).permute(0, 2, 3, 1),
    "slice_of_channels_last": lambda m: _x(m, 2, 3, 4, 5).to(
        memory_format=m.channels_last)[:, 1:],
    "channels_last_one_channel": lambda m: _x(m, 2, 1, 4, 5).contiguous(
        memory_format=m.channels_last),
    "channels_last_3d": lambda m: _x(m, 2, 3, 4, 5, 2).to(memory_format=m.channels_last_3d),
    "empty_channels_last": lambda m: m.empty(2, 3, 4, 5, memory_format=m.channels_last),
    "empty_strided_transposed": lambda m: m.empty_strided((2, 3), (1, 2)),
    "empty_strided_3d": lambda m: m.empty_strided((2, 3, 4), (1, 8, 2)),
    "empty_strided_contiguous": lambda m: m.empty_strided((2, 3), (3, 1)),
    "empty_strided_size_1": lambda m: m.empty_strided((2, 1, 3), (1, 7, 2)),
    "empty_strided_then_t": lambda m: m.empty_strided((2, 3), (1, 2)).t(),
    "empty_strided_clone": lambda m: m.empty_strided((2, 3, 4), (1, 8, 2)).clone(),
    "empty_permuted": lambda m: m.empty_permuted((2, 3, 4), (0, 2, 1)),
    "empty_permuted_rotated": lambda m: m.empty_permuted((2, 3, 4), (2, 0, 1)),
    "new_empty_strided": lambda m: m.ones(2, dtype=m.float64).new_empty_strided((2, 3),
                                                                                 (1, 2)),
    "permuted_to_channels_last_layout": lambda m: _x(m, 2, 4, 5, 3).permute(0, 3, 1, 2),
}


def _layout(m, t):
    return (tuple(t.shape), t.stride(), t.is_contiguous(),
            t.is_contiguous(memory_format=m.channels_last),
            t.is_contiguous(memory_format=m.channels_last_3d),
            t.is_contiguous(memory_format=m.contiguous_format),
            [t.stride(d) for d in range(-t.dim(), t.dim())], t.dim_order())


@pytest.mark.parametrize("name", sorted(CASES))
def test_strides_and_contiguity_match_torch(name):
    want = _layout(torch, CASES[name](torch))
    got = _layout(torchlike, CASES[name](torchlike))
    assert got == want


@pytest.mark.parametrize("name", sorted(CASES))
def test_view_agrees_with_strides(name):
    """``view(-1)`` succeeds exactly where torch's does (and then aliases), else raises
    torch's RuntimeError; ``reshape(-1)`` gives the same values either way."""
    outcome = {}
    for m in (torch, torchlike):
        t = CASES[name](m)
        try:
            v = t.view(-1)
            # an ``empty*`` tensor's values are not defined
            outcome[m] = ("view", v.stride(), None if "empty" in name else v.tolist())
        except RuntimeError as e:
            outcome[m] = ("raises", str(e))
        # (an empty tensor's bytes may hold NaNs in torch: equal_nan)
        np.testing.assert_array_equal(np.asarray(t.reshape(-1).tolist()),
                                      np.asarray(t.contiguous().view(-1).tolist()))
    assert outcome[torchlike] == outcome[torch]


def test_view_error_is_torchs():
    with pytest.raises(RuntimeError) as want:
        torch.zeros(2, 3).t().view(-1)
    with pytest.raises(RuntimeError) as got:
        torchlike.zeros(2, 3).t().view(-1)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("op", ["view", "reshape"])
def test_view_and_reshape_alias_as_torch(op):
    """A reshape that can be a view aliases its input; one that cannot copies (torch)."""
    for make in (lambda m: m.zeros(4, 6)[:, :3], lambda m: m.zeros(4, 6).t(),
                 lambda m: m.zeros(2, 3, 4).transpose(0, 1)):
        seen = []
        for m in (torch, torchlike):
            base = make(m)
            try:
                v = getattr(base, op)(2, -1)
            except RuntimeError:
                seen.append("raises")
                continue
            v.add_(1)
            seen.append(base.sum().item())
        assert seen[0] == seen[1]


def test_contiguous_copies_only_when_needed():
    for m in (torch, torchlike):
        x = _x(m, 2, 3, 4, 5)
        assert x.contiguous() is x
        cl = x.contiguous(memory_format=m.channels_last)
        assert cl is not x and cl.contiguous(memory_format=m.channels_last) is cl
        assert x.to(memory_format=m.contiguous_format) is x
        assert cl.tolist() == x.tolist()


@pytest.mark.parametrize("fmt,shape", [("channels_last", (2, 3, 4)),
                                       ("channels_last_3d", (2, 3, 4, 5))])
def test_memory_format_of_wrong_rank_raises_as_torch(fmt, shape):
    msgs = []
    for m in (torch, torchlike):
        with pytest.raises(RuntimeError) as e:
            m.zeros(shape).contiguous(memory_format=getattr(m, fmt))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_contiguous_preserve_format_raises_as_torch():
    msgs = []
    for m in (torch, torchlike):
        with pytest.raises(RuntimeError) as e:
            m.zeros(2, 3).t().contiguous(memory_format=m.preserve_format)
        msgs.append(str(e.value))
        x = m.zeros(2, 3)
        assert x.contiguous(memory_format=m.preserve_format) is x
    assert msgs[0] == msgs[1]


def test_pointwise_results_are_contiguous():
    """Pinned difference (DIFFERENCES.md): torch's pointwise ops lay their result out as their
    input (a transposed input gives a transposed result); torchlike's results of non-view ops
    are contiguous. Values agree."""
    assert (_x(torch, 2, 3).t() + 1).stride() == (1, 3)
    y = _x(torchlike, 2, 3).t() + 1
    assert y.stride() == (2, 1) and y.is_contiguous()
    assert y.tolist() == (_x(torch, 2, 3).t() + 1).tolist()


def test_a_copy_of_a_non_dense_permuted_tensor_is_contiguous():
    """Pinned difference (DIFFERENCES.md): torch's preserve_format copy of a tensor that is not
    dense (a stepped slice of a permuted one) keeps the input's dim order; torchlike's is
    contiguous (channels_last where the input suggests it). Values agree."""
    def src(m):
        return m.arange(120.).reshape(2, 3, 4, 5).permute(0, 2, 1, 3)[:, ::2]
    for copy in (lambda t: t.clone(), lambda t: t.to(t.dtype, copy=True),
                 lambda t: t.double()):
        assert copy(src(torch)).stride() == (30, 5, 10, 1)
        ours = copy(src(torchlike))
        assert ours.stride() == (30, 15, 5, 1) and ours.is_contiguous()
        assert ours.tolist() == copy(src(torch)).tolist()


@pytest.mark.parametrize("call", [
    lambda m: m.empty_strided((2, 3), (3,)),
    lambda m: m.empty_strided((2, 3), (-1, 1)),
    lambda m: m.ones(2).new_empty_strided((2, 3), (3,)),
    lambda m: m.empty_permuted((2, 3), (0, 0)),
    lambda m: m.empty_permuted((2, 3), (0,)),
    lambda m: m.empty_permuted((2, 3), (1, -1)),
    lambda m: m.ones(2, dtype=m.float64).new_empty_strided((2, 3), (3, 1), dtype=m.int32).dtype,
    lambda m: m.ones(2).new_empty_strided([2, 3], [3, 1], requires_grad=True).requires_grad,
    lambda m: m.empty_strided((2, 3), (1, 2), pin_memory=True),
    lambda m: m.ones(2).new_empty_strided((2, 3), (1, 2), pin_memory=True),
    lambda m: m.empty_permuted((2, 3), (1, 0), pin_memory=True),
    lambda m: m.empty_strided((2, 3), (1, 2), layout=m.strided).stride(),
], ids=["sizes", "negative", "new_sizes", "permuted_duplicate", "permuted_length", "permuted_range",
        "new_dtype", "new_grad", "pin_memory", "new_pin_memory", "permuted_pin_memory",
        "layout"])
def test_strided_factories_as_torch(call):
    seen = []
    for m in (torch, torchlike):
        try:
            seen.append(("ok", str(call(m)).replace("torchlike", "torch")))
        except Exception as e:  # noqa: BLE001
            seen.append((type(e).__name__, str(e)))
    assert seen[1] == seen[0]


def test_empty_strided_with_gaps_or_overlaps_is_contiguous():
    """DIFFERENCES.md: strides. A layout with gaps or overlapping elements has no row-major
    form: such an ``empty_strided`` tensor is contiguous here (torch reports the strides asked
    for, and an overlapping tensor's elements alias each other)."""
    for stride in ((4, 1), (0, 1)):
        t = torchlike.empty_strided((2, 3), stride)
        assert torch.empty_strided((2, 3), stride).stride() == stride
        assert t.stride() == (3, 1) and t.is_contiguous()
