"""Issue 3, shape family: one table against torch (tests/oracle.py), then bad input."""
import numpy as np
import pytest
import torch

import torchlike
from oracle import Case, check, check_raises

R = np.random.default_rng(3)


def f32(*shape):
    return R.standard_normal(shape).astype(np.float32)


def f64(*shape):
    return R.standard_normal(shape)


def i64(*shape, hi=10):
    return R.integers(-hi, hi, shape).astype(np.int64)


def idx(hi, *shape):
    return R.integers(0, hi, shape).astype(np.int64)


def perm_rows(n, k, cols):
    """A (k, cols) index of distinct values per column in [0, n) (scatter without duplicates)."""
    return np.stack([R.permutation(n)[:k] for _ in range(cols)], 1).astype(np.int64)


B = np.array([[True, False, True], [False, False, True]])
SORTED = np.sort(f32(7))
I3 = np.array([1, -2, 3], np.int64)


def pad_fn(m, x, p, mode="constant", value=None):
    kw = {} if value is None else {"value": value}
    return m.nn.functional.pad(x, p, mode=mode, **kw)


CASES = [
    # view_as, unflatten, movedim, mT, expand_as, contiguous
    Case("view_as", lambda m, a, b: a.view_as(b), (f32(2, 6), f32(3, 4))),
    Case("unflatten", lambda m, a: a.unflatten(1, (2, 3)), (f32(4, 6),)),
    Case("unflatten_infer", lambda m, a: m.unflatten(a, -1, (3, -1)), (f32(4, 6),)),
    Case("unflatten_int", lambda m, a: a.unflatten(0, (2, 2)), (i64(4, 3),)),
    Case("movedim", lambda m, a: m.movedim(a, 0, -1), (f32(2, 3, 4),)),
    Case("movedim_multi", lambda m, a: a.movedim((0, 1), (2, 0)), (f32(2, 3, 4),)),
    Case("moveaxis", lambda m, a: m.moveaxis(a, -1, 0), (f32(2, 3, 4),)),
    Case("mT", lambda m, a: a.mT, (f32(2, 3, 4),)),
    Case("expand_as", lambda m, a, b: a.expand_as(b), (f32(3, 1), f32(2, 3, 4))),
    Case("contiguous", lambda m, a: a.t().contiguous(), (f32(2, 3),)),
    # repeat, repeat_interleave, tile
    Case("repeat", lambda m, a: a.repeat(2, 3), (f32(2, 3),)),
    Case("repeat_newdims", lambda m, a: a.repeat(2, 1, 3), (f32(2, 3),)),
    Case("repeat_0dim", lambda m, a: a.repeat(4), (f32(),)),
    Case("repeat_zero", lambda m, a: a.repeat(0, 2), (f32(2, 3),)),
    Case("repeat_int", lambda m, a: a.repeat(2), (i64(3),)),
    Case("repeat_interleave", lambda m, a: a.repeat_interleave(2), (f32(2, 3),)),
    Case("repeat_interleave_dim", lambda m, a: m.repeat_interleave(a, 3, dim=1), (f32(2, 3),)),
    Case("repeat_interleave_tensor",
         lambda m, a, r: m.repeat_interleave(a, r, dim=0), (f32(3, 2), np.array([1, 0, 3]))),
    Case("repeat_interleave_negdim",
         lambda m, a, r: a.repeat_interleave(r, dim=-1), (f32(2, 2), np.array([2, 1]))),
    Case("repeat_interleave_only", lambda m, r: m.repeat_interleave(r), (np.array([2, 0, 3]),)),
    Case("tile", lambda m, a: m.tile(a, (2,)), (f32(2, 3),)),
    Case("tile_more", lambda m, a: a.tile((2, 1, 2)), (f32(2, 3),)),
    # flip, roll, rot90
    Case("flip", lambda m, a: m.flip(a, (0, 2)), (f32(2, 3, 4),)),
    Case("flip_neg", lambda m, a: a.flip(-1), (f32(2, 3),)),
    Case("flip_int", lambda m, a: a.flip(0), (i64(4),)),
    Case("fliplr", lambda m, a: m.fliplr(a), (f32(2, 3),)),
    Case("flipud", lambda m, a: m.flipud(a), (f32(2, 3),)),
    Case("roll_flat", lambda m, a: m.roll(a, 2), (f32(2, 3),)),
    Case("roll_dim", lambda m, a: a.roll(-1, 1), (f32(2, 3),)),
    Case("roll_multi", lambda m, a: m.roll(a, (1, 5), (0, -1)), (f32(2, 3),)),
    Case("roll_empty", lambda m, a: m.roll(a, 1, 0), (f32(0, 3),)),
    Case("rot90", lambda m, a: m.rot90(a), (f32(2, 3),)),
    Case("rot90_k", lambda m, a: a.rot90(3, (1, 2)), (f32(2, 3, 4),)),
    Case("rot90_neg_k", lambda m, a: m.rot90(a, -1, (-1, 0)), (f32(2, 3),)),
    Case("rot90_k2", lambda m, a: m.rot90(a, 2), (i64(2, 3),)),
    # cat, stack and friends
    Case("cat", lambda m, a, b: m.cat([a, b]), (f32(2, 3), f32(4, 3))),
    Case("cat_dim", lambda m, a, b: m.cat((a, b), dim=-1), (f32(2, 3), f32(2, 1))),
    Case("cat_promote", lambda m, a, b: m.cat([a, b], 1), (f32(2, 3), f64(2, 2))),
    Case("cat_int_bool", lambda m, a, b: m.cat([a, b]), (i64(2), np.array([True, False]))),
    Case("cat_legacy_empty", lambda m, a, b: m.cat([a, b]), (f32(2, 3), f32(0))),
    Case("cat_empty_dim", lambda m, a, b: m.concat([a, b], 0), (f32(0, 3), f32(2, 3))),
    Case("cat_three", lambda m, a, b, c: m.concatenate([a, b, c], 1),
         (f32(2, 1), f32(2, 2), f32(2, 3))),
    Case("cat_single", lambda m, a: m.cat([a]), (f32(3),)),
    Case("stack", lambda m, a, b: m.stack([a, b]), (f32(2, 3), f32(2, 3))),
    Case("stack_last", lambda m, a, b: m.stack([a, b], -1), (f32(2, 3), f32(2, 3))),
    Case("stack_0dim", lambda m, a, b: m.stack([a, b]), (f32(), f32())),
    Case("stack_promote", lambda m, a, b: m.stack([a, b], 1), (f32(2), i64(2))),
    Case("hstack", lambda m, a, b: m.hstack([a, b]), (f32(2, 3), f32(2, 1))),
    Case("hstack_1d", lambda m, a, b: m.hstack([a, b]), (f32(3), f32(2))),
    Case("hstack_0d", lambda m, a, b: m.hstack([a, b]), (f32(), f32())),
    Case("vstack", lambda m, a, b: m.vstack([a, b]), (f32(3), f32(3))),
    Case("vstack_2d", lambda m, a, b: m.vstack([a, b]), (f32(2, 3), f32(1, 3))),
    Case("row_stack", lambda m, a, b: m.row_stack([a, b]), (f32(3), f32(2, 3))),
    Case("dstack", lambda m, a, b: m.dstack([a, b]), (f32(2, 3), f32(2, 3))),
    Case("column_stack", lambda m, a, b: m.column_stack([a, b]), (f32(3), f32(3, 2))),
    # split, chunk, unbind, tensor_split
    Case("split", lambda m, a: m.split(a, 2), (f32(5, 3),)),
    Case("split_sizes", lambda m, a: a.split([1, 2], dim=1), (f32(2, 3),)),
    Case("split_neg_dim", lambda m, a: a.split(1, -1), (f32(2, 3),)),
    Case("split_larger", lambda m, a: a.split(10), (f32(4),)),
    Case("split_zero_section", lambda m, a: a.split([0, 3, 0], 1), (f32(2, 3),)),
    Case("split_int", lambda m, a: m.split(a, 3), (i64(7),)),
    Case("chunk", lambda m, a: m.chunk(a, 3), (f32(5, 2),)),
    Case("chunk_6_4", lambda m, a: a.chunk(4), (f32(6),)),
    Case("chunk_dim", lambda m, a: a.chunk(2, -1), (f32(2, 4),)),
    Case("chunk_more_than_size", lambda m, a: a.chunk(5), (f32(2, 3),)),
    Case("tensor_split_n", lambda m, a: m.tensor_split(a, 3), (f32(7, 2),)),
    Case("tensor_split_idx", lambda m, a: a.tensor_split([1, 4], dim=1), (f32(2, 6),)),
    Case("unbind", lambda m, a: m.unbind(a), (f32(3, 2),)),
    Case("unbind_dim", lambda m, a: a.unbind(-1), (f32(3, 2),)),
    Case("unbind_int", lambda m, a: a.unbind(), (i64(2, 2),)),
    # narrow, select
    Case("narrow", lambda m, a: m.narrow(a, 1, 1, 2), (f32(2, 4),)),
    Case("narrow_neg_start", lambda m, a: a.narrow(0, -2, 2), (f32(4, 2),)),
    Case("narrow_empty", lambda m, a: a.narrow(-1, 4, 0), (f32(2, 4),)),
    Case("select", lambda m, a: m.select(a, 1, 2), (f32(2, 4),)),
    Case("select_neg", lambda m, a: a.select(-1, -1), (f32(2, 3, 4),)),
    Case("select_int", lambda m, a: a.select(0, 1), (i64(2, 3),)),
    # gather, scatter, scatter_add
    Case("gather", lambda m, a, i: m.gather(a, 1, i), (f32(3, 4), idx(4, 3, 5))),
    Case("gather_dim0", lambda m, a, i: a.gather(0, i), (f32(3, 4), idx(3, 2, 3))),
    Case("gather_neg_dim", lambda m, a, i: a.gather(-1, i), (f32(2, 3, 4), idx(4, 2, 3, 2))),
    Case("gather_dup", lambda m, a, i: a.gather(1, i), (f32(2, 3),
                                                         np.array([[0, 0, 0], [2, 2, 1]]))),
    Case("gather_int", lambda m, a, i: a.gather(0, i), (i64(3), idx(3, 4))),
    Case("gather_empty", lambda m, a, i: a.gather(0, i), (f32(3), idx(3, 0))),
    Case("gather_0dim", lambda m, a, i: a.gather(0, i), (f32(), np.array(0))),
    Case("scatter", lambda m, a, i, s: m.scatter(a, 0, i, s),
         (f32(4, 3), perm_rows(4, 2, 3), f32(2, 3))),
    Case("scatter_dim1", lambda m, a, i, s: a.scatter(1, i, s),
         (f32(3, 5), perm_rows(5, 2, 3).T.copy(), f32(3, 2))),
    Case("scatter_src_larger", lambda m, a, i, s: a.scatter(0, i, s),
         (f32(3, 2), np.array([[2, 0]]), f32(2, 3)), grad=False),  # torch's backward fails
    Case("scatter_value", lambda m, a, i: a.scatter(1, i, 2.5),
         (f32(2, 4), np.array([[0, 3], [1, 1]]))),
    Case("scatter_value_kw", lambda m, a, i: m.scatter(a, 1, i, value=-1.0),
         (f32(2, 4), np.array([[2], [0]]))),
    Case("scatter_int", lambda m, a, i, s: a.scatter(0, i, s),
         (i64(3), np.array([2, 0]), i64(2))),
    Case("scatter_reduce_add", lambda m, a, i, s: a.scatter(0, i, s, reduce="add"),
         (f32(3), np.array([2, 2, 0]), f32(3)), grad=False),
    Case("scatter_add", lambda m, a, i, s: m.scatter_add(a, 0, i, s),
         (f32(3, 2), np.array([[0, 1], [0, 0], [2, 1]]), f32(3, 2))),
    Case("scatter_add_dim1", lambda m, a, i, s: a.scatter_add(-1, i, s),
         (f32(2, 3), np.array([[0, 0, 0, 2], [1, 1, 2, 2]]), f32(2, 5)), grad=False),
    Case("scatter_add_dup", lambda m, a, i, s: a.scatter_add(-1, i, s),
         (f32(2, 3), np.array([[0, 0, 0, 2], [1, 1, 2, 2]]), f32(2, 4))),
    Case("scatter_add_int", lambda m, a, i, s: a.scatter_add(0, i, s),
         (i64(3), np.array([1, 1]), i64(2))),
    Case("scatter_", lambda m, a, i, s: (a * 1).scatter_(1, i, s),
         (f32(2, 3), np.array([[2], [0]]), f32(2, 1))),
    Case("scatter_add_", lambda m, a, i, s: (a + 0).scatter_add_(0, i, s),
         (f32(3), np.array([0, 0]), f32(2))),
    # index_select, index_add/copy/fill, take, take_along_dim
    Case("index_select", lambda m, a, i: m.index_select(a, 0, i), (f32(4, 3), np.array([3, 0, 3]))),
    Case("index_select_dim", lambda m, a, i: a.index_select(-1, i), (f32(2, 4), np.array([1]))),
    Case("index_select_empty", lambda m, a, i: a.index_select(0, i), (f32(4, 3), idx(4, 0))),
    Case("index_select_int32", lambda m, a, i: a.index_select(1, i),
         (f32(2, 3), np.array([2, 1], np.int32))),
    Case("index_select_0dim_idx", lambda m, a, i: a.index_select(0, i), (f32(3, 2), np.array(1))),
    Case("index_add", lambda m, a, i, s: a.index_add(0, i, s),
         (f32(4, 2), np.array([0, 3, 0]), f32(3, 2))),
    Case("index_add_alpha", lambda m, a, i, s: m.index_add(a, 1, i, s, alpha=2),
         (f32(2, 3), np.array([2]), f32(2, 1))),
    Case("index_copy", lambda m, a, i, s: a.index_copy(0, i, s),
         (f32(4, 2), np.array([3, 1]), f32(2, 2))),
    Case("index_fill", lambda m, a, i: a.index_fill(1, i, -2.0), (f32(2, 3), np.array([0, 2]))),
    Case("index_fill_", lambda m, a, i: (a * 1).index_fill_(0, i, 3.0), (f32(2, 3), np.array([1]))),
    Case("take", lambda m, a, i: m.take(a, i), (f32(3, 4), np.array([[0, 11], [-1, 5]]))),
    Case("take_int", lambda m, a, i: a.take(i), (i64(2, 2), np.array([3, 0]))),
    Case("take_0dim", lambda m, a, i: m.take(a, i), (f32(), np.array(0))),
    Case("take_along_dim", lambda m, a, i: m.take_along_dim(a, i, 1),
         (f32(3, 4), idx(4, 3, 2))),
    Case("take_along_dim_bcast", lambda m, a, i: m.take_along_dim(a, i, 0),
         (f32(3, 4), idx(3, 2, 1))),
    Case("take_along_dim_flat", lambda m, a, i: a.take_along_dim(i), (f32(3, 4), idx(12, 5))),
    Case("take_along_dim_sorted", lambda m, a, i: m.take_along_dim(a, i, -1),
         (f32(3, 4), np.argsort(f32(3, 4), -1))),
    # masked ops
    Case("masked_select", lambda m, a, k: m.masked_select(a, k), (f32(2, 3), B)),
    Case("masked_select_bcast", lambda m, a, k: a.masked_select(k), (f32(3), B)),
    Case("masked_select_bcast_in", lambda m, a, k: a.masked_select(k), (f32(2, 3), B[0])),
    Case("masked_select_none", lambda m, a, k: a.masked_select(k), (f32(2, 3), B & False)),
    Case("masked_fill", lambda m, a, k: m.masked_fill(a, k, 0.5), (f32(2, 3), B)),
    Case("masked_fill_bcast", lambda m, a, k: a.masked_fill(k, -1.0), (f32(4, 2, 3), B)),
    Case("masked_fill_tensor_value", lambda m, a, k, v: a.masked_fill(k, v), (f32(2, 3), B, f32())),
    Case("masked_fill_inf", lambda m, a, k: a.masked_fill(k, float("-inf")), (f32(2, 3), B)),
    Case("masked_fill_int", lambda m, a, k: a.masked_fill(k, 7), (i64(2, 3), B)),
    Case("masked_fill_int_float_value", lambda m, a, k: a.masked_fill(k, 2.7), (i64(2, 3), B)),
    Case("masked_fill_", lambda m, a, k: (a * 2).masked_fill_(k, 0.0), (f32(2, 3), B)),
    Case("masked_fill_mask_bcast_in", lambda m, a, k: a.masked_fill(k, 1.0),
         (f32(1, 3), B)),
    # triangles and diagonals
    Case("tril", lambda m, a: m.tril(a), (f32(3, 4),)),
    Case("tril_k", lambda m, a: a.tril(-1), (f32(2, 3, 3),)),
    Case("triu", lambda m, a: m.triu(a, 1), (f32(3, 4),)),
    Case("triu_int", lambda m, a: a.triu(), (i64(3, 3),)),
    Case("tril_", lambda m, a: (a * 1).tril_(), (f32(3, 3),)),
    Case("triu_", lambda m, a: (a * 1).triu_(-1), (f32(3, 3),)),
    Case("tril_empty", lambda m, a: m.tril(a), (f32(0, 3),)),
    Case("diag_vec", lambda m, a: m.diag(a), (f32(3),)),
    Case("diag_vec_k", lambda m, a: m.diag(a, -2), (f32(3),)),
    Case("diag_mat", lambda m, a: a.diag(), (f32(3, 4),)),
    Case("diag_mat_k", lambda m, a: m.diag(a, 1), (f32(3, 4),)),
    Case("diag_mat_k_out", lambda m, a: m.diag(a, 5), (f32(3, 4),)),
    Case("diagonal", lambda m, a: m.diagonal(a), (f32(3, 4),)),
    Case("diagonal_dims", lambda m, a: a.diagonal(1, -1, 0), (f32(3, 2, 4),)),
    Case("diagonal_neg", lambda m, a: a.diagonal(-1), (f32(3, 3),)),
    Case("diag_embed", lambda m, a: m.diag_embed(a), (f32(2, 3),)),
    Case("diag_embed_off", lambda m, a: m.diag_embed(a, 1, 0, 2), (f32(2, 3),)),
    Case("diag_embed_neg", lambda m, a: a.diag_embed(-2, -1, 0), (f32(2, 3),)),
    # broadcasting, meshgrid
    Case("broadcast_to", lambda m, a: m.broadcast_to(a, (2, 3, 4)), (f32(3, 1),)),
    Case("broadcast_to_method", lambda m, a: a.broadcast_to((2, -1)), (f32(3),)),
    Case("broadcast_tensors", lambda m, a, b, c: m.broadcast_tensors(a, b, c),
         (f32(3, 1), f32(4), f32())),
    Case("broadcast_tensors_int", lambda m, a, b: m.broadcast_tensors(a, b), (i64(2, 1), f32(3))),
    Case("broadcast_shapes", lambda m: tuple(m.broadcast_shapes((2, 1), (3,), 1)), ()),
    Case("meshgrid_ij", lambda m, a, b: m.meshgrid(a, b, indexing="ij"), (f32(3), f32(2))),
    Case("meshgrid_xy", lambda m, a, b: m.meshgrid(a, b, indexing="xy"), (f32(3), f32(2))),
    Case("meshgrid_three", lambda m, a, b, c: m.meshgrid([a, b, c], indexing="xy"),
         (f32(3), f32(2), f32(4))),
    Case("meshgrid_0dim", lambda m, a, b: m.meshgrid(a, b, indexing="ij"), (f32(), f32(2))),
    # nonzero, searchsorted, bucketize
    Case("nonzero", lambda m, a: m.nonzero(a), (np.array([[0, 1.5, 0], [2, 0, 3]], np.float32),)),
    Case("nonzero_bool", lambda m, a: a.nonzero(), (B,)),
    Case("nonzero_tuple", lambda m, a: m.nonzero(a, as_tuple=True), (B,)),
    Case("nonzero_empty", lambda m, a: a.nonzero(), (np.zeros((2, 0)),)),
    Case("nonzero_0dim", lambda m, a: a.nonzero(), (np.array(3.0),)),
    Case("nonzero_none", lambda m, a: a.nonzero(), (np.zeros(3, np.int64),)),
    Case("nonzero_nan", lambda m, a: a.nonzero(), (np.array([np.nan, 0, -0.0, 1]),)),
    Case("argwhere", lambda m, a: m.argwhere(a), (i64(3, 3, hi=2),)),
    Case("searchsorted", lambda m, s, v: m.searchsorted(s, v), (SORTED, f32(2, 3))),
    Case("searchsorted_right", lambda m, s, v: m.searchsorted(s, v, right=True),
         (np.array([1, 2, 2, 3]), np.array([2, 0, 5]))),
    Case("searchsorted_side", lambda m, s, v: m.searchsorted(s, v, side="right", out_int32=True),
         (np.array([1, 2, 2, 3]), np.array([2, 3]))),
    Case("searchsorted_batched", lambda m, s, v: m.searchsorted(s, v),
         (np.sort(f32(2, 5), -1), f32(2, 3))),
    Case("searchsorted_scalar", lambda m, s: m.searchsorted(s, 0.1), (SORTED,)),
    Case("searchsorted_mixed", lambda m, s, v: m.searchsorted(s, v),
         (np.array([1, 3, 5]), np.array([2.5, 3.0], np.float32))),
    Case("searchsorted_sorter", lambda m, s, v, k: m.searchsorted(s, v, sorter=k),
         (np.array([3.0, 1.0, 2.0, 0.5]), np.array([1.5, 4.0]), np.array([3, 1, 2, 0]))),
    Case("bucketize", lambda m, v, b: m.bucketize(v, b), (f32(3, 2), SORTED)),
    Case("bucketize_right", lambda m, v, b: m.bucketize(v, b, right=True),
         (np.array([1, 5, 6]), np.array([1, 3, 5]))),
    Case("bucketize_int32", lambda m, v, b: v.bucketize(b, out_int32=True) if hasattr(v, "bucketize")
         else None, (np.array([1, 5, 6]), np.array([1, 3, 5]))),
    # pad (the shared helper behind nn.functional.pad)
    Case("pad_constant", lambda m, a: pad_fn(m, a, (1, 2)), (f32(2, 3),)),
    Case("pad_constant_value", lambda m, a: pad_fn(m, a, (1, 0, 0, 2), value=1.5), (f32(2, 3),)),
    Case("pad_negative", lambda m, a: pad_fn(m, a, (-1, 1, 1, -1)), (f32(3, 4),)),
    Case("pad_int", lambda m, a: pad_fn(m, a, (2, 2), value=3), (i64(2, 3),)),
    Case("pad_reflect", lambda m, a: pad_fn(m, a, (2, 1), mode="reflect"), (f32(2, 3, 4),)),
    Case("pad_reflect_2d", lambda m, a: pad_fn(m, a, (1, 1, 2, 0), mode="reflect"),
         (f32(1, 3, 4),)),
    Case("pad_replicate", lambda m, a: pad_fn(m, a, (3, 1), mode="replicate"), (f32(2, 3, 4),)),
    Case("pad_circular", lambda m, a: pad_fn(m, a, (1, 2), mode="circular"), (f32(2, 3, 4),)),
    Case("constant_pad_nd", lambda m, a: m.constant_pad_nd(a, (1, 1), 2.0), (f32(2, 2),)),
]
CASES = [c for c in CASES if c.name != "bucketize_int32"] + [
    Case("bucketize_int32", lambda m, v, b: m.bucketize(v, b, out_int32=True),
         (np.array([1, 5, 6]), np.array([1, 3, 5]))),
    Case("atleast_2d", lambda m, a, b: m.atleast_2d(a, b), (f32(), f32(3))),
    Case("atleast_3d", lambda m, a: m.atleast_3d(a), (f32(2, 3),)),
    Case("swapdims", lambda m, a: m.swapdims(a, 0, -1), (f32(2, 3),)),
]


# more shape ops (torchlike/_ops/restructure.py)
CASES += [
    Case("unfold", lambda m, a: a.unfold(1, 2, 1), (f32(3, 4),)),
    Case("unfold_step", lambda m, a: a.unfold(0, 2, 3), (f32(8, 2),)),
    Case("unfold_neg_dim", lambda m, a: a.unfold(-1, 3, 2), (f32(2, 3, 7),)),
    Case("unfold_0dim", lambda m, a: a.unfold(0, 1, 1), (f32(),)),
    Case("unfold_empty_window", lambda m, a: a.unfold(0, 0, 1), (f32(3, 2),)),
    Case("put", lambda m, a, i, s: a.put(i, s), (f32(3, 4), np.array([0, -1, 5]), f32(3))),
    Case("put_accumulate", lambda m, a, i, s: a.put(i, s, accumulate=True),
         (f32(3, 4), np.array([0, 0, 5]), f32(3))),
    Case("put_", lambda m, a, i, s: (a * 1).put_(i, s), (f32(2, 2), np.array([[3], [1]]), f32(2, 1))),
    Case("masked_scatter", lambda m, a, k, s: a.masked_scatter(k, s), (f32(2, 3), B, f32(4))),
    Case("masked_scatter_bcast", lambda m, a, k, s: a.masked_scatter(k, s),
         (f32(2, 3), B[0], f32(3, 3))),
    Case("masked_scatter_", lambda m, a, k, s: (a + 0).masked_scatter_(k, s), (f32(2, 3), B, f32(3))),
    Case("fill_diagonal_", lambda m, a: (a * 1).fill_diagonal_(2.0), (f32(3, 4),)),
    Case("fill_diagonal_tall", lambda m, a: (a * 1).fill_diagonal_(-1.0), (f32(7, 3),)),
    Case("fill_diagonal_wrap", lambda m, a: (a * 1).fill_diagonal_(5.0, wrap=True), (f32(7, 3),)),
    Case("fill_diagonal_3d", lambda m, a: (a * 1).fill_diagonal_(0.0), (f32(2, 2, 2),)),
    Case("scatter_reduce_sum", lambda m, a, i, s: a.scatter_reduce(0, i, s, "sum"),
         (f32(3), np.array([0, 0, 2, 1]), f32(4))),
    Case("scatter_reduce_sum_no_self", lambda m, a, i, s: m.scatter_reduce(a, 0, i, s, "sum",
                                                                          include_self=False),
         (f32(3), np.array([0, 0, 2]), f32(3))),
    Case("scatter_reduce_prod", lambda m, a, i, s: a.scatter_reduce(1, i, s, "prod"),
         (f32(2, 3), np.array([[0, 0], [2, 1]]), f32(2, 2))),
    Case("scatter_reduce_prod_zeros", lambda m, a, i, s: a.scatter_reduce(0, i, s, "prod"),
         (np.array([2.0, 0.0, 3.0], np.float32), np.array([0, 0, 1, 2, 2]),
          np.array([0.0, 4.0, 5.0, 0.0, 0.0], np.float32))),
    Case("scatter_reduce_prod_no_self", lambda m, a, i, s: a.scatter_reduce(
        0, i, s, "prod", include_self=False), (f32(3), np.array([0, 0, 2]), f32(3))),
    Case("scatter_reduce_mean", lambda m, a, i, s: a.scatter_reduce(1, i, s, "mean"),
         (f32(3, 4), np.array([[0, 0], [1, 1], [3, 3]]), f32(3, 2))),
    Case("scatter_reduce_mean_no_self", lambda m, a, i, s: a.scatter_reduce(
        1, i, s, "mean", include_self=False), (f32(3, 4), np.array([[0, 0], [1, 2], [3, 3]]),
                                               f32(3, 2))),
    Case("scatter_reduce_mean_int", lambda m, a, i, s: a.scatter_reduce(0, i, s, "mean"),
         (i64(4), np.array([0, 0, 3]), i64(3))),
    Case("scatter_reduce_amax", lambda m, a, i, s: a.scatter_reduce(0, i, s, "amax"),
         (f32(4), np.array([0, 0, 2, 3]), f32(4))),
    Case("scatter_reduce_amax_ties", lambda m, a, i, s: a.scatter_reduce(0, i, s, "amax"),
         (np.array([1.0, 2.0, 0.0], np.float32), np.array([0, 0, 1]),
          np.array([1.0, 1.0, 2.0], np.float32))),
    Case("scatter_reduce_amin_no_self", lambda m, a, i, s: a.scatter_reduce(
        0, i, s, "amin", include_self=False), (f32(4), np.array([0, 0, 2]), f32(3))),
    Case("scatter_reduce_amax_int", lambda m, a, i, s: a.scatter_reduce(0, i, s, "amax"),
         (i64(3), np.array([1, 1]), i64(2))),
    Case("index_reduce_prod", lambda m, a, i, s: a.index_reduce(0, i, s, "prod"),
         (f32(3, 2), np.array([0, 0, 2]), f32(3, 2))),
    Case("index_reduce_mean", lambda m, a, i, s: m.index_reduce(a, 1, i, s, "mean",
                                                                include_self=False),
         (f32(2, 3), np.array([2, 2]), f32(2, 2))),
    Case("index_reduce_amax", lambda m, a, i, s: a.index_reduce(0, i, s, "amax"),
         (f32(3), np.array([1, 1, 0]), f32(3))),
    Case("index_reduce_amin_", lambda m, a, i, s: (a * 1).index_reduce_(0, i, s, "amin"),
         (f32(3, 2), np.array([2]), f32(1, 2))),
    Case("as_strided", lambda m, a: m.as_strided(a, (2, 2), (1, 2), 1), (f32(3, 4),)),
    Case("as_strided_windows", lambda m, a: (a * 1).as_strided((3, 3), (1, 1)), (f32(5),)),
    Case("as_strided_of_transpose", lambda m, a: a.t().as_strided((2, 2), (1, 2)), (f32(3, 4),)),
    Case("as_strided_of_slice", lambda m, a: a[1:].as_strided((2,), (1,)), (f32(3, 4),)),
    Case("as_strided_offset", lambda m, a: a.as_strided((2, 3), (3, 1), storage_offset=2),
         (f32(8),)),
    Case("as_strided_zero_stride", lambda m, a: a.as_strided((2, 3), (0, 1)), (f32(4),)),
    Case("select_scatter", lambda m, a, s: m.select_scatter(a, s, 0, -1), (f32(3, 4), f32(4))),
    Case("select_scatter_dim1", lambda m, a, s: a.select_scatter(s, 1, 2), (f32(3, 4), f32(3))),
    Case("slice_scatter", lambda m, a, s: m.slice_scatter(a, s, 1, 0, 4, 2), (f32(3, 4), f32(3, 2))),
    Case("slice_scatter_default", lambda m, a, s: m.slice_scatter(a, s, start=1),
         (f32(3, 2), f32(2, 2))),
    Case("diagonal_scatter", lambda m, a, s: m.diagonal_scatter(a, s, 1), (f32(3, 4), f32(3))),
    Case("diagonal_scatter_neg", lambda m, a, s: m.diagonal_scatter(a, s, -1, 1, 0),
         (f32(3, 4), f32(3))),
    Case("block_diag", lambda m, a, b, c: m.block_diag(a, b, c), (f32(2, 2), f32(3), f32())),
    Case("block_diag_promote", lambda m, a, b: m.block_diag(a, b), (f32(1, 2), f64(2, 1))),
    Case("block_diag_int", lambda m, a, b: m.block_diag(a, b), (i64(2, 2), i64(1, 3))),
    Case("block_diag_empty_block", lambda m, a, b: m.block_diag(a, b), (f32(0, 2), f32(2, 1))),
    Case("cartesian_prod", lambda m, a, b: m.cartesian_prod(a, b), (f32(2), f32(3))),
    Case("cartesian_prod_three", lambda m, a, b, c: m.cartesian_prod(a, b, c),
         (i64(2), i64(2), i64(3))),
    Case("cartesian_prod_one", lambda m, a: m.cartesian_prod(a), (f32(3),)),
    Case("combinations", lambda m, a: m.combinations(a), (f32(4),)),
    Case("combinations_r3", lambda m, a: m.combinations(a, 3), (f32(5),)),
    Case("combinations_repl", lambda m, a: m.combinations(a, 2, with_replacement=True), (i64(3),)),
    Case("combinations_r0", lambda m, a: m.combinations(a, 0), (f32(3),)),
    Case("combinations_r_too_big", lambda m, a: m.combinations(a, 3), (f32(2),)),
    Case("tril_indices", lambda m: m.tril_indices(3, 4, 1), ()),
    Case("triu_indices", lambda m: m.triu_indices(3, 2, -1), ()),
    Case("triu_indices_int32", lambda m: m.triu_indices(4, 4, dtype=m.int32), ()),
    Case("tril_indices_empty", lambda m: m.tril_indices(0, 3), ()),
    Case("diagflat", lambda m, a: m.diagflat(a), (f32(2, 2),)),
    Case("diagflat_offset", lambda m, a: a.diagflat(-1), (f32(3),)),
    Case("hsplit", lambda m, a: m.hsplit(a, 2), (f32(3, 4),)),
    Case("hsplit_idx", lambda m, a: a.hsplit([1, 3]), (f32(3, 4),)),
    Case("hsplit_1d", lambda m, a: m.hsplit(a, 2), (f32(4),)),
    Case("vsplit", lambda m, a: m.vsplit(a, 3), (f32(3, 4),)),
    Case("dsplit", lambda m, a: m.dsplit(a, [1]), (f32(2, 2, 3),)),
    Case("adjoint", lambda m, a: m.adjoint(a), (f32(2, 3, 4),)),
    Case("mH", lambda m, a: a.mH, (f32(3, 2),)),
    Case("H", lambda m, a: a.H, (f32(3, 2),)),
    Case("ravel", lambda m, a: m.ravel(a.t()), (f32(3, 2),)),
    Case("narrow_copy", lambda m, a: m.narrow_copy(a, 1, 1, 2), (f32(2, 4),)),
    Case("split_with_sizes", lambda m, a: a.split_with_sizes([1, 3], 1), (f32(2, 4),)),
    Case("unravel_index", lambda m, i: m.unravel_index(i, (3, 2)), (np.array([4, 1, -1, 6]),)),
    Case("unravel_index_0dim", lambda m, i: m.unravel_index(i, (3, 2)), (np.array(4),)),
    Case("unravel_index_2d", lambda m, i: m.unravel_index(i, m.Size([2, 3, 2])),
         (np.array([[4], [11]]),)),
    Case("unravel_index_int", lambda m, i: m.unravel_index(i, 5), (np.array([7, 2], np.int32),)),
    Case("nonzero_static_pad", lambda m, a: m.nonzero_static(a, size=4), (np.array([0, 1, 0, 2]),)),
    Case("nonzero_static_trunc", lambda m, a: m.nonzero_static(a, size=2, fill_value=7),
         (np.array([[0, 1], [1, 1]]),)),
    Case("nonzero_static_method", lambda m, a: a.nonzero_static(size=3), (B,)),
    Case("sum_to_size", lambda m, a: a.sum_to_size(1, 4), (f32(3, 4),)),
    Case("sum_to_size_lead", lambda m, a: a.sum_to_size((4,)), (f32(2, 3, 4),)),
    Case("sum_to_size_same", lambda m, a: a.sum_to_size(3, 4), (f32(3, 4),)),
]
BAD_EXTRA = [
    ("unfold_too_big", lambda m, a: a.unfold(1, 5, 1), (f32(3, 4),)),
    ("unfold_step0", lambda m, a: a.unfold(1, 2, 0), (f32(3, 4),)),
    ("put_oob", lambda m, a, i, s: a.put(i, s), (f32(2, 2), np.array([4]), f32(1))),
    ("put_count", lambda m, a, i, s: a.put(i, s), (f32(2, 2), np.array([0, 1]), f32(1))),
    ("masked_scatter_short", lambda m, a, k, s: a.masked_scatter(k, s), (f32(2, 3), B, f32(2))),
    ("fill_diagonal_unequal", lambda m, a: a.fill_diagonal_(1.0), (f32(2, 3, 4),)),
    ("fill_diagonal_1d", lambda m, a: a.fill_diagonal_(1.0), (f32(3),)),
    ("scatter_reduce_bad", lambda m, a, i, s: a.scatter_reduce(0, i, s, "foo"),
     (f32(3), np.array([0]), f32(1))),
    ("scatter_reduce_oob", lambda m, a, i, s: a.scatter_reduce(0, i, s, "sum"),
     (f32(3), np.array([3]), f32(1))),
    ("select_scatter_shape", lambda m, a, s: m.select_scatter(a, s, 0, 0), (f32(3, 4), f32(3))),
    ("slice_scatter_shape", lambda m, a, s: m.slice_scatter(a, s, 1, 0, 4, 2), (f32(3, 4), f32(3, 3))),
    ("block_diag_3d", lambda m, a: m.block_diag(a), (f32(2, 2, 2),)),
    ("cartesian_prod_2d", lambda m, a: m.cartesian_prod(a, a), (f32(2, 2),)),
    ("combinations_2d", lambda m, a: m.combinations(a), (f32(2, 2),)),
    ("hsplit_indivisible", lambda m, a: m.hsplit(a, 3), (f32(3, 4),)),
    ("dsplit_2d", lambda m, a: m.dsplit(a, 2), (f32(3, 4),)),
    ("adjoint_1d", lambda m, a: m.adjoint(a), (f32(3),)),
    ("H_3d", lambda m, a: a.H, (f32(2, 2, 2),)),
    ("sum_to_size_bad", lambda m, a: a.sum_to_size(2, 4), (f32(3, 4),)),
    ("index_reduce_sum", lambda m, a, i, s: a.index_reduce(0, i, s, "sum"),
     (f32(3), np.array([0]), f32(1))),
    ("index_reduce_oob", lambda m, a, i, s: a.index_reduce(0, i, s, "amax"),
     (f32(3), np.array([5]), f32(1))),
    ("as_strided_oob", lambda m, a: a.as_strided((2, 2), (1, 2), 20), (f32(3, 4),)),
    ("unravel_index_float", lambda m, i: m.unravel_index(i, (3, 2)), (f32(2),)),
]


# edge values: inf, nan, -0.0, ties, bool and small int dtypes, float64
EDGE = np.array([0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan], np.float32)
CPLX = (R.standard_normal(3) + 1j * R.standard_normal(3)).astype(np.complex64)
B8 = np.array([[True, False], [False, True]])
CASES += [
    Case("edge_cat", lambda m, a: m.cat([a, a.flip(0)]), (EDGE,)),
    Case("edge_roll", lambda m, a: a.roll(3), (EDGE,)),
    Case("edge_gather", lambda m, a, i: a.gather(0, i), (EDGE, np.array([6, 4, 1, 1]))),
    Case("edge_masked_fill_nan", lambda m, a: a.masked_fill(a > 0, float("nan")), (EDGE,)),
    Case("edge_nonzero", lambda m, a: a.nonzero(), (EDGE,)),
    Case("edge_searchsorted_inf", lambda m, s, v: m.searchsorted(s, v),
         (np.array([-np.inf, -1.0, 0.0, 2.0, np.inf], np.float32),
          np.array([-np.inf, np.inf, 0.0, -0.0, 5.0], np.float32))),
    Case("edge_searchsorted_nan", lambda m, s, v: m.searchsorted(s, v, right=True),
         (np.array([0.0, 1.0, np.nan], np.float32), np.array([np.nan, 0.5], np.float32))),
    Case("edge_bucketize_ties", lambda m, v, b: m.bucketize(v, b),
         (np.array([1.0, 1.0, 2.0], np.float32), np.array([1.0, 1.0, 2.0, 2.0], np.float32))),
    Case("edge_scatter_add_inf", lambda m, a, i, s: a.scatter_add(0, i, s),
         (np.zeros(2, np.float32), np.array([0, 0, 1]),
          np.array([np.inf, 1.0, np.nan], np.float32))),
    Case("edge_take_along_dim", lambda m, a, i: m.take_along_dim(a, i), (EDGE, np.array([4, 5, 6]))),
    Case("edge_diag_embed", lambda m, a: m.diag_embed(a[:3]), (EDGE,)),
    Case("bool_stack", lambda m, a, b: m.stack([a, b]), (B8, ~B8)),
    Case("bool_cat_repeat", lambda m, a: m.cat([a, a]).repeat(2, 1), (B8,)),
    Case("bool_tril", lambda m, a: a.tril(), (np.ones((3, 3), bool),)),
    Case("bool_flip", lambda m, a: a.flip(1), (B8,)),
    Case("bool_index_select", lambda m, a, i: a.index_select(1, i), (B8, np.array([1, 1, 0]))),
    Case("bool_take", lambda m, a, i: a.take(i), (B8, np.array([3, 0]))),
    Case("bool_masked_select", lambda m, a, k: a.masked_select(k), (B8, ~B8)),
    Case("bool_gather", lambda m, a, i: a.gather(1, i), (B8, np.array([[1], [1]]))),
    Case("int8_roll", lambda m, a: a.roll(1, 0), (np.arange(6, dtype=np.int8).reshape(3, 2),)),
    Case("uint8_cat_int8", lambda m, a, b: m.cat([a, b]), (np.arange(3, dtype=np.uint8),
                                                           np.arange(2, dtype=np.int8))),
    Case("int16_diag", lambda m, a: m.diag(a), (np.arange(3, dtype=np.int16),)),
    Case("int32_scatter", lambda m, a, i, s: a.scatter(0, i, s),
         (np.zeros(3, np.int32), np.array([2]), np.array([7], np.int32))),
    Case("f64_unfold", lambda m, a: a.unfold(0, 3, 1), (f64(5),)),
    Case("f64_block_diag", lambda m, a, b: m.block_diag(a, b), (f64(2, 2), f64(1, 1))),
    Case("f64_tile", lambda m, a: a.tile((2, 2)), (f64(2),)),
    Case("f64_index_add", lambda m, a, i, s: a.index_add(0, i, s), (f64(3), np.array([0, 0]), f64(2))),
    Case("half_cat", lambda m, a, b: m.cat([a.half(), b.half()]), (f32(2), f32(3)), atol=1e-3,
         rtol=1e-3),
    Case("bf16_stack", lambda m, a, b: m.stack([a.bfloat16(), b.bfloat16()]), (f32(2), f32(2)),
         atol=1e-2, rtol=1e-2),
    Case("half_float_cat_promote", lambda m, a, b: m.cat([a.half(), b]), (f32(2), f32(3)),
         atol=1e-3, rtol=1e-3),
    Case("empty_stack", lambda m, a, b: m.stack([a, b], 1), (f32(0, 2), f32(0, 2))),
    Case("empty_split", lambda m, a: a.split(2), (f32(0),)),
    Case("empty_gather", lambda m, a, i: a.gather(1, i), (f32(2, 0), idx(1, 2, 0))),
    Case("empty_flip", lambda m, a: a.flip(0), (f32(0, 3),)),
    Case("empty_masked_fill", lambda m, a, k: a.masked_fill(k, 1.0), (f32(0, 3), np.zeros((0, 3), bool))),
    Case("empty_diag", lambda m, a: m.diag(a), (f32(0),)),
    Case("empty_meshgrid", lambda m, a, b: m.meshgrid(a, b, indexing="ij"), (f32(0), f32(2))),
    Case("zero_dim_broadcast_to", lambda m, a: m.broadcast_to(a, (2, 2)), (f32(),)),
    Case("zero_dim_flip", lambda m, a: a.flip(()), (f32(),)),
    Case("zero_dim_roll", lambda m, a: m.roll(a, 1), (f32(),)),
    Case("zero_dim_masked_fill", lambda m, a: a.masked_fill(m.tensor(True), 2.0), (f32(),)),
    Case("zero_dim_nonzero_false", lambda m, a: a.nonzero(), (np.array(0.0),)),
    Case("complex_cat_flip", lambda m, a: m.cat([a, a.flip(0)]), (CPLX,), grad=False),
    Case("complex_gather", lambda m, a, i: a.gather(0, i), (CPLX, np.array([2, 0])), grad=False),
    Case("complex_masked_fill", lambda m, a: a.masked_fill(m.tensor([True, False, True]), 1j),
         (CPLX,), grad=False),
    Case("complex_stack_promote", lambda m, a, b: m.stack([a, b]), (CPLX, f32(3)), grad=False),
    Case("zero_dim_index_select", lambda m, a, i: a.index_select(0, i), (f32(), np.array([0]))),
]

@pytest.mark.parametrize("case", CASES, ids=str)
def test_shape_op_against_torch(case):
    check(case)


@pytest.mark.parametrize("case", [c for c in CASES if c.grad][::4], ids=str)
def test_shape_op_autograd_grad(case):
    check(case, autograd_grad=True)


BAD = [
    ("cat_empty_list", lambda m: m.cat([]), ()),
    ("cat_shape", lambda m, a, b: m.cat([a, b], 1), (f32(2, 3), f32(3, 3))),
    ("cat_0dim", lambda m, a, b: m.cat([a, b]), (f32(), f32(2))),
    ("cat_bad_dim", lambda m, a, b: m.cat([a, b], 2), (f32(2, 3), f32(2, 3))),
    ("stack_shape", lambda m, a, b: m.stack([a, b]), (f32(2), f32(3))),
    ("stack_empty", lambda m: m.stack([]), ()),
    ("repeat_too_few", lambda m, a: a.repeat(2), (f32(2, 3),)),
    ("repeat_interleave_bad", lambda m, a, r: a.repeat_interleave(r, 0), (f32(2), np.array([1, 2, 3]))),
    ("flip_dup", lambda m, a: a.flip((0, 0)), (f32(2),)),
    ("flip_bad_dim", lambda m, a: a.flip(2), (f32(2, 3),)),
    ("roll_mismatch", lambda m, a: m.roll(a, (1, 2), 0), (f32(2, 3),)),
    ("roll_bad_dim", lambda m, a: m.roll(a, 1, 5), (f32(2, 3),)),
    ("rot90_same_dims", lambda m, a: m.rot90(a, 1, (0, 0)), (f32(2, 3),)),
    ("split_sum", lambda m, a: a.split([1, 1], 1), (f32(2, 3),)),
    ("chunk_zero", lambda m, a: a.chunk(0), (f32(2, 3),)),
    ("narrow_too_long", lambda m, a: a.narrow(1, 2, 3), (f32(2, 3),)),
    ("narrow_bad_dim", lambda m, a: a.narrow(3, 0, 1), (f32(2, 3),)),
    ("select_oob", lambda m, a: a.select(1, 3), (f32(2, 3),)),
    ("unbind_0dim", lambda m, a: a.unbind(), (f32(),)),
    ("unflatten_bad", lambda m, a: a.unflatten(1, (2, 2)), (f32(2, 3),)),
    ("movedim_mismatch", lambda m, a: m.movedim(a, (0, 1), (1,)), (f32(2, 3),)),
    ("gather_oob", lambda m, a, i: m.gather(a, 1, i), (f32(2, 3), np.array([[5]]))),
    ("gather_neg_oob", lambda m, a, i: m.gather(a, 1, i), (f32(2, 3), np.array([[-4]]))),
    ("gather_bad_dim", lambda m, a, i: m.gather(a, 3, i), (f32(2, 3), np.array([[1]]))),
    ("gather_ndim", lambda m, a, i: m.gather(a, 1, i), (f32(2, 3), np.array([0]))),
    ("gather_float_index", lambda m, a, i: m.gather(a, 1, i), (f32(2, 3), np.array([[0.0]]))),
    ("scatter_oob", lambda m, a, i, s: a.scatter(1, i, s), (f32(2, 3), np.array([[0, 7]]), f32(1, 4))),
    ("scatter_dtype", lambda m, a, i, s: a.scatter(1, i, s), (f32(2, 3), np.array([[0]]), f64(1, 1))),
    ("scatter_src_small", lambda m, a, i, s: a.scatter(1, i, s), (f32(2, 3), np.array([[0, 1]]), f32(1, 1))),
    ("index_select_oob", lambda m, a, i: m.index_select(a, 1, i), (f32(2, 3), np.array([5]))),
    ("index_select_2d", lambda m, a, i: m.index_select(a, 1, i), (f32(2, 3), np.array([[1]]))),
    ("take_oob", lambda m, a, i: m.take(a, i), (f32(2, 3), np.array([7]))),
    ("masked_fill_float_mask", lambda m, a, k: a.masked_fill(k, 0.0), (f32(3), f32(3))),
    ("masked_fill_bcast", lambda m, a, k: a.masked_fill(k, 0.0), (f32(2, 3), np.array([True, False]))),
    ("masked_fill_value_1d", lambda m, a, k, v: a.masked_fill(k, v), (f32(3), np.array([True] * 3), f32(2))),
    ("masked_fill__bcast_self", lambda m, a, k: (a * 1).masked_fill_(k, 0.0), (f32(3), B)),
    ("tril_1d", lambda m, a: m.tril(a), (f32(3),)),
    ("triu_1d", lambda m, a: m.triu(a), (f32(3),)),
    ("diag_3d", lambda m, a: m.diag(a), (f32(2, 2, 2),)),
    ("diagonal_same", lambda m, a: m.diagonal(a, 0, 1, 1), (f32(2, 2),)),
    ("broadcast_to_bad", lambda m, a: m.broadcast_to(a, (3,)), (f32(2),)),
    ("broadcast_tensors_bad", lambda m, a, b: m.broadcast_tensors(a, b), (f32(2), f32(3))),
    ("meshgrid_dtype", lambda m, a, b: m.meshgrid(a, b, indexing="ij"), (f32(2), i64(3))),
    ("searchsorted_batch_mismatch", lambda m, s, v: m.searchsorted(s, v),
     (np.sort(f32(2, 3)), f32(3))),
    ("take_along_dim_ndim", lambda m, a, i: m.take_along_dim(a, i, 1), (f32(2, 3), np.array([0]))),
    ("pad_odd", lambda m, a: pad_fn(m, a, (1,)), (f32(2, 3),)),
    ("pad_reflect_too_big", lambda m, a: pad_fn(m, a, (3, 0), mode="reflect"), (f32(1, 2, 3),)),
]


BAD += BAD_EXTRA


@pytest.mark.parametrize("name,fn,inputs", BAD, ids=[b[0] for b in BAD])
def test_shape_bad_input(name, fn, inputs):
    check_raises(fn, *inputs)


def test_table_size():
    assert len(CASES) >= 240


def test_view_ops_share_storage_like_torch():
    """Writes through the views these ops return reach the base, as in torch."""
    import torch
    import torchlike

    def run(m):
        x = m.zeros(6)
        x.unfold(0, 2, 2)[1, 1] = 5.0
        y = m.zeros(2, 3)
        y.mH[2, 0] = 7.0
        y.narrow(1, 0, 2)[1] = 1.0
        z = m.zeros(2, 3)
        z.movedim(0, 1)[1, 1] = 3.0
        z.unflatten(1, (3, 1))[0, 2] = 4.0
        w = m.zeros(3, 3)
        w.diagonal(1).fill_(2.0) if hasattr(w, "fill_") else None
        w.select(0, 2)[0] = -1.0
        w.split(1, 1)[0][1] = 9.0
        return [x.tolist(), y.tolist(), z.tolist(), w.tolist()]

    assert run(torchlike) == run(torch)


def test_overlapping_unfold_is_a_copy():
    """Pinned difference (DIFFERENCES.md): unfold with step < size returns a copy in
    torchlike, so a write into one window reaches neither the base nor the other windows."""
    import torchlike
    x = torchlike.zeros(5)
    u = x.unfold(0, 2, 1)
    u[0, 1] = 5.0
    assert x.tolist() == [0.0] * 5 and u[1, 0].item() == 0.0


def test_select_and_narrow_positions_do_not_retrace():
    import torchlike
    from torchlike import _registry as R
    x = torchlike.randn(41, 3)
    b_sel, b_nar = R.trace_counts("select")["fwd"], R.trace_counts("slice")["fwd"]
    rows = [x.select(0, i) for i in range(41)]
    wins = [x.narrow(0, i, 4) for i in range(0, 36, 4)]
    assert R.trace_counts("select")["fwd"] - b_sel <= 1
    assert R.trace_counts("slice")["fwd"] - b_nar <= 1
    np.testing.assert_array_equal(np.stack([np.asarray(r) for r in rows]),
                                  np.asarray(x))
    np.testing.assert_array_equal(np.asarray(wins[2]), np.asarray(x)[8:12])


def test_attention_style_code_matches_torch():
    """Ordinary model code mixing this family's ops (chunk, einsum, triu, masked_fill, scatter_,
    gather, stack, repeat, cat, split, linalg) gives torch's loss and gradients."""
    import torch
    import torchlike
    r = np.random.default_rng(0)
    X = r.standard_normal((4, 5, 6)).astype(np.float32)
    W = r.standard_normal((6, 6)).astype(np.float32)
    Y = r.integers(0, 6, (4, 5))

    def run(m):
        x = m.tensor(X, requires_grad=True)
        w = m.tensor(W, requires_grad=True)
        y = m.tensor(Y)
        B, T, D = x.shape
        h = x @ w
        q, k = h.chunk(2, dim=-1)
        att = m.einsum("btd,bsd->bts", q, k) / 3 ** 0.5
        att = att.masked_fill(m.triu(m.ones(T, T), 1).bool(), float("-inf"))
        att = att - att.amax(-1, keepdim=True)
        p = att.exp() / att.exp().sum(-1, keepdim=True)
        o = p @ h
        onehot = m.zeros(B, T, D).scatter_(2, y.unsqueeze(-1), 1.0)
        logp = o - o.exp().sum(-1, keepdim=True).log()
        nll = -(logp.gather(-1, y.unsqueeze(-1)).squeeze(-1)).mean()
        pos = m.arange(T).float()
        pe = m.stack([pos.sin(), pos.cos()], -1).repeat(1, 3)
        z = m.cat([o + pe, onehot], -1).flatten(0, 1)
        loss = nll + sum(s.pow(2).mean() for s in z.split(7)) + m.linalg.vector_norm(w) * 0.1
        loss = loss + m.linalg.det(w.T @ w + m.eye(6)).log() * 0.01
        loss.backward()
        return [loss.item(), x.grad.numpy(), w.grad.numpy()]

    for a, b in zip(run(torchlike), run(torch)):
        np.testing.assert_allclose(a, b, atol=1e-4, rtol=1e-4)


OUT_CASES = [
    ("cat", lambda m, o: m.cat([m.ones(2), m.arange(2.0)], out=o), lambda m: m.zeros(4)),
    ("cat_upcast", lambda m, o: m.cat([m.ones(2), m.ones(1)], out=o),
     lambda m: m.zeros(3, dtype=m.float64)),
    ("stack", lambda m, o: m.stack([m.ones(2), m.zeros(2)], 1, out=o), lambda m: m.zeros(2, 2)),
    ("gather", lambda m, o: m.gather(m.arange(6.0).reshape(2, 3), 1, m.tensor([[2], [0]]),
                                     out=o), lambda m: m.zeros(2, 1)),
    ("index_select", lambda m, o: m.index_select(m.arange(6.0).reshape(2, 3), 1,
                                                 m.tensor([2, 0]), out=o),
     lambda m: m.zeros(2, 2)),
    ("searchsorted", lambda m, o: m.searchsorted(m.tensor([1.0, 3.0]), m.tensor([2.0, 4.0]),
                                                 out=o), lambda m: m.zeros(2, dtype=m.int64)),
    ("addmm", lambda m, o: m.addmm(m.ones(2, 2), m.ones(2, 3), m.ones(3, 2), out=o),
     lambda m: m.zeros(2, 2)),
    ("matmul", lambda m, o: m.matmul(m.ones(2, 3), m.ones(3), out=o), lambda m: m.zeros(2)),
    ("linalg_inv", lambda m, o: m.linalg.inv(m.eye(2) * 2, out=o), lambda m: m.zeros(2, 2)),
    ("vector_norm", lambda m, o: m.linalg.vector_norm(m.ones(4), out=o), lambda m: m.zeros(())),
]


@pytest.mark.parametrize("name,fn,mk", OUT_CASES, ids=[c[0] for c in OUT_CASES])
def test_out_argument_like_torch(name, fn, mk):
    import torch
    import torchlike
    res = []
    for m in (torch, torchlike):
        o = mk(m)
        r = fn(m, o)
        assert r is o
        res.append((str(o.dtype), o.tolist()))
    assert res[0] == res[1]


def test_out_argument_errors():
    import torch
    import torchlike
    for m in (torch, torchlike):
        with pytest.raises(RuntimeError):
            m.cat([m.ones(2, requires_grad=True), m.ones(2)], out=m.zeros(4))
    for m in (torch, torchlike):                 # torch resizes out, with a warning
        o = m.zeros(3)
        with pytest.warns(UserWarning, match="was resized"):
            m.cat([m.ones(2)], out=o)
        assert list(o.shape) == [2]


def test_bad_input_messages_match_torch():
    """Beyond the exception class: torchlike's message is torch's, word for word, for all but
    a few listed bad inputs of this table."""
    differ = {"element_size_args"}      # Python's own arity message names the class
    mismatched = []
    for name, fn, inputs in BAD:
        lerr, terr = check_raises(fn, *inputs)
        if str(lerr) != str(terr) and name not in differ:
            mismatched.append((name, str(lerr), str(terr)))
    assert not mismatched, mismatched



def test_as_strided_and_storage_offset_share_storage_like_torch():
    import torch
    import torchlike

    def run(m):
        x = m.arange(12.0).reshape(3, 4)
        offs = [x[1:].storage_offset(), x[:, 2:].storage_offset(), x.t().storage_offset()]
        y = m.zeros(6)
        y.as_strided((2, 2), (2, 1), 1)[1, 1] = 5.0
        return offs, y.tolist()

    assert run(torchlike) == run(torch)


def test_overlapping_as_strided_is_a_copy():
    """Pinned difference (DIFFERENCES.md): as_strided whose elements share storage positions is
    a copy (reads equal torch's; writes reach neither the source nor the other positions)."""
    import torchlike
    x = torchlike.zeros(5)
    w = x.as_strided((3, 3), (1, 1))
    w[0, 1] = 7.0
    assert x.tolist() == [0.0] * 5 and w[1, 0].item() == 0.0


_SPLITS = [
    ("split_size", lambda m, y: m.split(y, 2)), ("split_sections", lambda m, y: m.split(y, [2, 4])),
    ("method_split", lambda m, y: y.split(2)), ("chunk", lambda m, y: y.chunk(3)),
    ("split_with_sizes", lambda m, y: y.split_with_sizes([3, 3])),
    ("tensor_split", lambda m, y: y.tensor_split(3)),
    ("tensor_split_indices", lambda m, y: y.tensor_split([1, 4])),
    ("hsplit", lambda m, y: m.hsplit(y, 2)), ("vsplit", lambda m, y: m.vsplit(y, [1, 4])),
    ("dsplit", lambda m, y: m.dsplit(y.reshape(2, 3, 4), 2)), ("unbind", lambda m, y: y.unbind()),
    ("unsafe_split", lambda m, y: m.unsafe_split(y, 2)),
    ("unsafe_chunk", lambda m, y: y.unsafe_chunk(2)),
    ("unsafe_split_with_sizes", lambda m, y: y.unsafe_split_with_sizes([2, 4])),
]


@pytest.mark.parametrize("case", _SPLITS, ids=[c[0] for c in _SPLITS])
def test_split_family_nodes_and_inplace_writes_match_torch(case):
    """Each splitting function's grad_fn name; and a write in place to its first output: torch's
    error for a function returning several views (split, chunk, unbind), or, for tensor_split and
    h/v/dsplit (one slice view per section), the write and its gradient. (torch's unsafe forms
    track no views: DIFFERENCES.md.)"""
    _name, f = case

    def run(m):
        x = m.ones(6, 4, requires_grad=True)
        name = f(m, x * 1)[0].grad_fn.name()
        y = x * 1
        parts = f(m, y)
        try:
            parts[0].mul_(2)
        except RuntimeError as e:
            return name, str(e)
        (y * 1).sum().backward()
        return name, parts[0].grad_fn.name(), x.grad.sum().item()

    ours, theirs = run(torchlike), run(torch)
    if case[0].startswith("unsafe"):
        assert ours[0] == theirs[0]
        assert ours[1].startswith("Output 0 of UnsafeSplit") and len(theirs) == 3
    else:
        assert ours == theirs


@pytest.mark.parametrize("dst,src", [((3,), (1, 3)), ((3,), (2, 3)), ((3,), (2, 2)),
                                     ((2, 3), (4,)), ((2, 1), (2, 3)), ((), (2,))])
def test_copy_from_a_shape_that_does_not_broadcast_to_self_raises_torchs_error(dst, src):
    def run(m):
        with pytest.raises(RuntimeError) as e:
            m.zeros(dst).copy_(m.ones(src))
        return str(e.value)
    assert run(torchlike) == run(torch)
