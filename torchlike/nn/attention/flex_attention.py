"""FlexAttention: attention with a user's score modification and mask (``torch.nn.attention.flex_attention``).

    >>> def causal(b, h, q_idx, kv_idx):
    ...     return q_idx >= kv_idx
    >>> def alibi(score, b, h, q_idx, kv_idx):
    ...     return score + slopes[h] * (kv_idx - q_idx)
    >>> mask = create_block_mask(causal, B=None, H=None, Q_LEN=128, KV_LEN=128)
    >>> out = flex_attention(q, k, v, score_mod=alibi, block_mask=mask)

torchlike computes it densely, as torch's reference (unfused) implementation does: the
``(B, H, Q, KV)`` scores in float32 (float64 for float64 inputs), ``score_mod`` applied to them
with broadcast index tensors (``b`` is ``(B, 1, 1, 1)``, ``h`` ``(1, H, 1, 1)``, ``q_idx``
``(1, 1, Q, 1)``, ``kv_idx`` ``(1, 1, 1, KV)``) instead of torch's vmap over scalars, positions
outside the block mask set to ``-inf``, and fully masked rows giving 0 (their logsumexp
``-inf``). Everything is recorded by ordinary ops, so gradients flow to ``q``, ``k``, ``v`` and to
tensors a ``score_mod`` captures (torch's CPU flex_attention has no backward).

``BlockMask`` carries torch's block tables (``kv_num_blocks``, ``kv_indices``, the ``full_*``
ones and their transposes) computed as torch computes them.
"""
from __future__ import annotations

import functools
import inspect
import itertools
import math
import operator
import warnings
from typing import NamedTuple

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "FlexKernelOptions",
           "create_block_mask", "create_mask", "or_masks", "and_masks", "noop_mask"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128
_LARGE_SPARSE_BLOCK_SIZE = 1 << 30

FlexKernelOptions = dict


def _tl():
    import torchlike
    return torchlike


class AuxRequest(NamedTuple):
    """Which auxiliary outputs ``flex_attention`` returns."""

    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """Auxiliary outputs of ``flex_attention`` (None where not requested)."""

    lse: object = None
    max_scores: object = None


# ------------------------------------------------------------------ mask_mod helpers

def noop_mask(batch, head, token_q, token_kv):
    """A mask_mod that masks nothing."""
    return batch.new_ones((), dtype=_tl().bool, device=batch.device)


def _identity(score, batch, head, token_q, token_kv):
    return score


def and_masks(*mask_mods):
    """A mask_mod that is the intersection of ``mask_mods``."""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def and_mask(b, h, q_idx, kv_idx):
        result = b.new_ones((), dtype=_tl().bool)
        for mask in mask_mods:
            result = result & mask(b, h, q_idx, kv_idx)
        return result

    return and_mask


def or_masks(*mask_mods):
    """A mask_mod that is the union of ``mask_mods``."""
    if not all(callable(arg) for arg in mask_mods):
        raise RuntimeError(f"All inputs should be callable mask_mods: {mask_mods}")

    def or_mask(b, h, q_idx, kv_idx):
        result = b.new_zeros((), dtype=_tl().bool)
        for mask in mask_mods:
            result = result | mask(b, h, q_idx, kv_idx)
        return result

    return or_mask


def _mod_arity(fn):
    """4 (a mask_mod) or 5 (a score_mod) positional parameters, as torch counts them."""
    if hasattr(fn, "__code__"):
        n = fn.__code__.co_argcount - len(getattr(fn, "__defaults__", None) or ())
    else:
        n = sum(1 for p in inspect.signature(fn).parameters.values()
                if p.default is inspect.Parameter.empty)
    if n not in (4, 5):
        raise AssertionError(f"Expected 4 or 5 positional args, got {n}")
    return n


def _index_grids(B, H, Q, KV, device=None):
    """``b, h, q_idx, kv_idx`` as broadcasting int64 tensors of shape (B,1,1,1), (1,H,1,1)..."""
    tl = _tl()
    return (tl.arange(B, device=device).view(B, 1, 1, 1),
            tl.arange(H, device=device).view(1, H, 1, 1),
            tl.arange(Q, device=device).view(1, 1, Q, 1),
            tl.arange(KV, device=device).view(1, 1, 1, KV))


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    """The dense boolean mask ``(B, H, Q_LEN, KV_LEN)`` of a mask_mod (or of a score_mod: where
    it does not give ``-inf``)."""
    tl = _tl()
    B = 1 if B is None else B
    H = 1 if H is None else H
    b, h, m, n = _index_grids(B, H, Q_LEN, KV_LEN, device)
    with tl.no_grad():
        if _mod_arity(mod_fn) == 5:
            out = mod_fn(tl.zeros(B, H, Q_LEN, KV_LEN, device=device), b, h, m, n)
            return tl.where(tl.isneginf(out), False, True).broadcast_to((B, H, Q_LEN, KV_LEN))
        mask = mod_fn(b, h, m, n)
        return tl.as_tensor(mask, device=device).broadcast_to((B, H, Q_LEN, KV_LEN)).clone()


# ------------------------------------------------------------------ block tables

def _dense_to_ordered(dense_mask):
    dense_mask = dense_mask.to(dtype=_tl().int32)
    num_blocks_in_row = dense_mask.sum(dim=-1)
    col_indices = _tl().argsort(dense_mask, dim=-1, descending=True, stable=True)
    return num_blocks_in_row.to(_tl().int32), col_indices.to(_tl().int32)


def _ordered_to_dense(num_blocks_in_row, col_indices, num_cols):
    import numpy as np
    nb = num_blocks_in_row.numpy()
    ci = col_indices.numpy()
    max_entries = ci.shape[-1]
    valid = np.arange(max_entries) < nb[..., None]
    dense = np.zeros(ci.shape[:-1] + (num_cols + 1,), np.int32)
    idx = np.where(valid, ci, num_cols)
    np.put_along_axis(dense, idx.astype(np.int64), 1, axis=-1)
    return _tl().from_numpy(np.ascontiguousarray(dense[..., :num_cols]))


def _transpose_ordered(num_blocks_in_row, col_indices):
    dense = _ordered_to_dense(num_blocks_in_row, col_indices, col_indices.shape[-1])
    return _dense_to_ordered(dense.transpose(-2, -1))


def _round_up(x, multiple):
    return (x + multiple - 1) // multiple * multiple


def _convert_mask_to_block_mask(mask, Q_BLOCK_SIZE, KV_BLOCK_SIZE, separate_full_blocks):
    tl = _tl()
    while mask.ndim < 4:
        mask = mask.unsqueeze(0)
    mask = tl.nn.functional.pad(mask, (0, _round_up(mask.shape[-1], KV_BLOCK_SIZE) - mask.shape[-1],
                                       0, _round_up(mask.shape[-2], Q_BLOCK_SIZE) - mask.shape[-2]))
    B, H, Q, KV = mask.shape
    mask = mask.view(B, H, Q // Q_BLOCK_SIZE, Q_BLOCK_SIZE, KV // KV_BLOCK_SIZE, KV_BLOCK_SIZE)
    mask_block_sum = mask.permute(0, 1, 2, 4, 3, 5).sum(dim=[-2, -1])
    if separate_full_blocks:
        full = Q_BLOCK_SIZE * KV_BLOCK_SIZE
        partial = ((mask_block_sum > 0) & (mask_block_sum < full)).to(tl.int8)
        return partial, (mask_block_sum == full).to(tl.int8)
    return (mask_block_sum > 0).to(tl.int8), None


class BlockMask:
    """Which (query block, key block) tiles attention visits, and the mask_mod inside them.

    ``kv_num_blocks[b, h, i]`` / ``kv_indices[b, h, i, :]``: how many and which key blocks query
    block ``i`` visits with ``mask_mod`` applied; ``full_kv_*`` the blocks visited without it
    (entirely unmasked); ``q_*`` the same tables transposed. ``shape`` is
    ``(B, H, Q_LEN, KV_LEN)``.
    """

    def __init__(self, seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks,
                 full_kv_indices, q_num_blocks, q_indices, full_q_num_blocks, full_q_indices,
                 BLOCK_SIZE, mask_mod, **_scheduling):
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        self.seq_lengths = tuple(seq_lengths)
        self.kv_num_blocks = kv_num_blocks
        self.kv_indices = kv_indices
        self.full_kv_num_blocks = full_kv_num_blocks
        self.full_kv_indices = full_kv_indices
        self.q_num_blocks = q_num_blocks
        self.q_indices = q_indices
        self.full_q_num_blocks = full_q_num_blocks
        self.full_q_indices = full_q_indices
        self.BLOCK_SIZE = tuple(BLOCK_SIZE)
        self.mask_mod = mask_mod

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks, kv_indices, full_kv_num_blocks=None,
                       full_kv_indices=None, BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE,
                       mask_mod=None, seq_lengths=None, compute_q_blocks=True, **_scheduling):
        """A BlockMask from its key-block tables (the query-block tables are derived)."""
        if kv_indices.dim() < 2:
            raise RuntimeError("BlockMask must have at least 2 dimensions")
        if (full_kv_num_blocks is None) != (full_kv_indices is None):
            raise AssertionError(
                "full_kv_num_blocks and full_kv_indices must be both provided or omitted")
        q_num_blocks = q_indices = full_q_num_blocks = full_q_indices = None
        if compute_q_blocks:
            q_num_blocks, q_indices = _transpose_ordered(kv_num_blocks, kv_indices)
            if full_kv_num_blocks is not None:
                full_q_num_blocks, full_q_indices = _transpose_ordered(full_kv_num_blocks,
                                                                       full_kv_indices)
        if isinstance(BLOCK_SIZE, int):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        mask_mod = mask_mod if mask_mod is not None else noop_mask
        if seq_lengths is None:
            seq_lengths = (kv_indices.shape[-2] * BLOCK_SIZE[0],
                           kv_indices.shape[-1] * BLOCK_SIZE[1])
        return cls(seq_lengths, kv_num_blocks, kv_indices, full_kv_num_blocks, full_kv_indices,
                   q_num_blocks, q_indices, full_q_num_blocks, full_q_indices, BLOCK_SIZE,
                   mask_mod)

    def as_tuple(self, flatten: bool = True):
        return (self.seq_lengths, self.kv_num_blocks, self.kv_indices, self.full_kv_num_blocks,
                self.full_kv_indices, self.q_num_blocks, self.q_indices,
                self.full_q_num_blocks, self.full_q_indices, *self.BLOCK_SIZE, self.mask_mod)

    @property
    def shape(self):
        *batch_dims, _, _ = self.kv_indices.shape
        return tuple(batch_dims) + self.seq_lengths

    def numel(self) -> int:
        """The number of elements of the mask (sparsity not counted)."""
        return functools.reduce(operator.mul, self.shape, 1)

    def sparsity(self) -> float:
        """The percentage of blocks not computed."""
        computed = int(self.kv_num_blocks.sum().item())
        if self.full_kv_num_blocks is not None:
            computed += int(self.full_kv_num_blocks.sum().item())
        return 100 * (1 - computed * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1] / self.numel())

    def to_dense(self):
        """The block-level mask, ``(B, H, Q blocks, KV blocks)`` int32 (1: visited)."""
        partial = _ordered_to_dense(self.kv_num_blocks, self.kv_indices,
                                    self.kv_indices.shape[-1])
        if self.full_kv_num_blocks is not None:
            return partial | _ordered_to_dense(self.full_kv_num_blocks, self.full_kv_indices,
                                               self.full_kv_indices.shape[-1])
        return partial

    def to(self, device):
        return self

    def to_string(self, grid_size=(20, 20), limit=4) -> str:
        """The block mask drawn in characters (█ visited, space skipped)."""
        dense_mask = self.to_dense()
        *batch_dims, num_rows, num_cols = dense_mask.shape
        if isinstance(grid_size, int):
            max_rows = max_cols = grid_size
        elif grid_size == -1:
            max_rows, max_cols = num_rows, num_cols
        else:
            max_rows, max_cols = grid_size
        row_step = max(1, -(-num_rows // max_rows))
        col_step = max(1, -(-num_cols // max_cols))
        total = []
        for i, batch_idx in enumerate(itertools.product(*[range(n) for n in batch_dims])):
            if i == limit:
                total.append("...")
                total.append("To print out more, set BlockMask.to_string(limit=N)")
                total.append("You can also index (BlockMask[batch, head]) to choose a specific "
                             "batch or head")
                break
            cur = dense_mask
            for idx in batch_idx:
                cur = cur[idx]
            vis = f"{batch_idx}\n"
            for r in range(0, num_rows, row_step):
                for c in range(0, num_cols, col_step):
                    p = cur[r:r + row_step, c:c + col_step].float().mean().item()
                    vis += ("█" if p == 1 else " " if p == 0 else "░") * 2
                vis += "\n"
            total.append(vis)
        return "\n".join(total)

    def __str__(self):
        return self.to_string()

    def __repr__(self):
        def shape_or_none(x):
            return x.shape if x is not None else None
        name = getattr(self.mask_mod, "__name__", self.mask_mod)
        return (f"BlockMask(\n"
                f"    kv_num_blocks={self.kv_num_blocks.shape},\n"
                f"    kv_indices={self.kv_indices.shape},\n"
                f"    full_kv_num_blocks={shape_or_none(self.full_kv_num_blocks)},\n"
                f"    full_kv_indices={shape_or_none(self.full_kv_indices)},\n"
                f"    q_num_blocks={shape_or_none(self.q_num_blocks)},\n"
                f"    q_indices={shape_or_none(self.q_indices)},\n"
                f"    full_q_num_blocks={shape_or_none(self.full_q_num_blocks)},\n"
                f"    full_q_indices={shape_or_none(self.full_q_indices)},\n"
                f"    BLOCK_SIZE={self.BLOCK_SIZE},\n"
                f"    shape={self.shape},\n"
                f"    sparsity={self.sparsity():.2f}%,\n"
                f"    mask_mod={name}\n"
                f")")

    def _dense_mask(self, B, H, Q, KV, device=None):
        """The element-level mask ``(B|1, H|1, Q, KV)``: full blocks, and partial blocks where
        ``mask_mod`` allows."""
        tl = _tl()
        qb, kb = self.BLOCK_SIZE

        def expand(blocks):
            d = blocks.to(tl.bool)
            d = d.repeat_interleave(qb, dim=-2).repeat_interleave(kb, dim=-1)
            return d[..., :Q, :KV]

        partial = expand(_ordered_to_dense(self.kv_num_blocks, self.kv_indices,
                                           _cdiv(KV, kb)))
        with tl.no_grad():
            # mask_mod sees the real batch and (query) head indices, as torch's kernels give it
            inside = tl.as_tensor(self.mask_mod(*_index_grids(B, H, Q, KV, device)))
        mask = partial & inside
        if self.full_kv_num_blocks is not None:
            mask = mask | expand(_ordered_to_dense(self.full_kv_num_blocks,
                                                   self.full_kv_indices, _cdiv(KV, kb)))
        return mask


def _cdiv(a, b):
    return -(-a // b)


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None,
                      BLOCK_SIZE=_DEFAULT_SPARSE_BLOCK_SIZE, _compile=False,
                      separate_full_blocks=True, compute_dq_write_order=False,
                      dq_kv_order=True):
    """The BlockMask of ``mask_mod(b, h, q_idx, kv_idx) -> bool`` for these sizes
    (``B``/``H`` None: broadcast over them)."""
    if _mod_arity(mask_mod) != 4:
        raise AssertionError(f"create-block_mask requires a mask_mod function! Got {mask_mod}")
    B = 1 if B is None else B
    H = 1 if H is None else H
    if isinstance(BLOCK_SIZE, int):
        Q_BLOCK_SIZE = KV_BLOCK_SIZE = BLOCK_SIZE
    else:
        Q_BLOCK_SIZE, KV_BLOCK_SIZE = BLOCK_SIZE
    if _compile:
        warnings.warn(
            "_compile flag on create_block_mask was originally added to work around a "
            "torch.compile limitation. That limitation has since been addressed. So, to compile "
            "create_block_mask, we suggest doing torch.compile(create_block_mask). This still "
            "works for now, but will be removed in the future.", DeprecationWarning,
            stacklevel=2)
    if not isinstance(dq_kv_order, bool):
        raise ValueError("dq_kv_order must be a bool when using create_block_mask")
    mask = create_mask(mask_mod, B, H, Q_LEN, KV_LEN, device)
    partial, full = _convert_mask_to_block_mask(mask, Q_BLOCK_SIZE, KV_BLOCK_SIZE,
                                                separate_full_blocks)
    kv_num, kv_idx = _dense_to_ordered(partial)
    full_num, full_idx = _dense_to_ordered(full) if full is not None else (None, None)
    return BlockMask.from_kv_blocks(kv_num, kv_idx, full_num, full_idx,
                                    BLOCK_SIZE=(Q_BLOCK_SIZE, KV_BLOCK_SIZE),
                                    mask_mod=mask_mod, seq_lengths=(Q_LEN, KV_LEN))


# ------------------------------------------------------------------ flex_attention

_warned = set()
# torch's switch for its eager warning (set it to debug score_mod/mask_mod in eager)
_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = False


def _warn_once(key, message, category=FutureWarning):
    """Warn once a process, pointing inside flex_attention as torch's does; not while
    compiling."""
    from ... import compiler
    if key not in _warned:
        if not compiler.is_compiling():
            warnings.warn(message, category, stacklevel=2)
        _warned.add(key)


def _check_inputs(query, key, value, block_mask, enable_gqa):
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise NotImplementedError("NYI: query, key, and value must be 4D tensors")
    if not enable_gqa and query.size(-3) != key.size(-3):
        raise ValueError(f"Expect query and key/value to have the same number of heads but got "
                         f"Hq={query.size(-3)} and Hkv={key.size(-3)}. Try setting "
                         f"enable_gqa=True for GQA.")
    if enable_gqa and query.size(1) % key.size(1) != 0:
        raise ValueError(f"Expect number of query heads to be a multiple of kv heads for GQA "
                         f"but got Hq={query.size(1)} and Hkv={key.size(1)}.")
    if query.size(0) != key.size(0) and block_mask is None:
        raise ValueError(f"Expect query and key/value to have the same batch size, or non-none "
                         f"block_mask, but got block_mask=None, Bq={query.size(0)}, and "
                         f"Bkv={key.size(0)}.")
    if block_mask is not None:
        bq, bkv = block_mask.shape[-2], block_mask.shape[-1]
        L, S = query.size(-2), key.size(-2)
        if L > bq or S > bkv:
            raise ValueError(
                f"block_mask was created for block_mask.shape={block_mask.shape} but got "
                f"q_len={L} and kv_len={S}. As the block mask was created for a smaller length "
                f"than you're using it for, you likely need to create a new block mask.")
        if (L, S) != (bq, bkv):
            raise ValueError(
                f"block_mask was created for block_mask.shape={block_mask.shape} but got "
                f"q_len={L} and kv_len={S}. As the block mask was created for a larger length "
                f"than you're using it for, you can either 1. create a new block mask with the "
                f"correct length, or 2. 'adjust' the existing block mask to the correct length "
                f"by calling block_mask._adjust(q_len, kv_len). This essentially 'crops' the "
                f"block mask to the upper left corner, which does not work for all mask_mods!")


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None,
                   enable_gqa=False, return_lse=False, kernel_options=None, *,
                   return_aux=None):
    """Attention ``softmax(score_mod(q @ k.T * scale)) @ v`` over the positions ``block_mask``
    allows. ``query`` ``(B, Hq, L, E)``, ``key`` ``(B, Hkv, S, E)``, ``value``
    ``(B, Hkv, S, Ev)``; ``score_mod(score, b, h, q_idx, kv_idx) -> score``.

    Returns the output ``(B, Hq, L, Ev)`` (query's dtype); with ``return_aux`` also an
    ``AuxOutput`` (``lse``: the natural-log logsumexp of each row, float32 (float64 for float64
    inputs); ``max_scores``: each row's largest score; torch computes it only on GPUs), with
    the deprecated ``return_lse`` the logsumexp itself.
    """
    tl = _tl()
    _check_inputs(query, key, value, block_mask, enable_gqa)
    if return_lse and return_aux is not None:
        raise ValueError("Cannot specify both return_lse and return_aux. return_lse is "
                         "deprecated, please use return_aux=AuxRequest(lse=True) instead.")
    if return_lse:
        _warn_once("deprecated_return_lse",
                   "return_lse is deprecated and will be removed in v2.10. Please use "
                   "return_aux=AuxRequest(lse=True) instead.")
    if not _FLEX_ATTENTION_DISABLE_COMPILE_DEBUG:
        _warn_once("flex_attention_performance",
                   "flex_attention called without torch.compile() - this will use an unfused "
                   "implementation that materializes the full scores matrix instead of "
                   "generating a fused kernel.\n\nSOLUTION: Use torch.compile(flex_attention)"
                   "(...)\n\nIf you want to debug your score_mod/mask_mod, you can set:\n"
                   "torch.nn.attention.flex_attention._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = "
                   "True\n\nThis will allow you to use print statements or breakpoints. Note: "
                   "This doesn't work with the backwards pass and may produce incorrect "
                   "results.", UserWarning)
    B, Hq, L, E = query.shape
    Hkv, S = key.size(1), key.size(2)
    if scale is None:
        scale = 1.0 / math.sqrt(E)
    if Hq != Hkv:
        key = key.repeat_interleave(Hq // Hkv, dim=1)
        value = value.repeat_interleave(Hq // Hkv, dim=1)
    work = tl.float64 if query.dtype is tl.float64 else tl.float32
    scores = (query.to(work) @ key.to(work).transpose(-2, -1)) * scale
    if score_mod is not None:
        b, h, m, n = _index_grids(B, Hq, L, S, query.device)
        scores = score_mod(scores, b, h, m, n)
        scores = tl.as_tensor(scores).to(work).broadcast_to((B, Hq, L, S))
    if block_mask is not None:
        mask = block_mask._dense_mask(B, Hq, L, S, query.device)
        scores = scores.masked_fill(~mask, float("-inf"))
    with tl.no_grad():
        masked_rows = (scores == float("-inf")).all(dim=-1, keepdim=True)
    safe = scores.masked_fill(masked_rows, 0.0)
    lse = tl.logsumexp(safe, dim=-1, keepdim=True)
    p = tl.exp(safe - lse).masked_fill(masked_rows, 0.0)
    out = (p @ value.to(work)).to(query.dtype)
    lse = lse.squeeze(-1).masked_fill(masked_rows.squeeze(-1), float("-inf"))
    want_lse = return_lse or (return_aux is not None and return_aux.lse)
    if return_aux is not None:
        max_scores = None
        if return_aux.max_scores:
            max_scores = scores.amax(dim=-1)
        return out, AuxOutput(lse=lse if want_lse else None, max_scores=max_scores)
    if return_lse:
        return out, lse
    return out
