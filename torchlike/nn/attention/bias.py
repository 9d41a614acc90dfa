"""Causal attention biases for ``scaled_dot_product_attention`` (``torch.nn.attention.bias``).

    >>> bias = causal_lower_right(q_len, kv_len)
    >>> out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)

``causal_upper_left`` is ``is_causal=True``; ``causal_lower_right`` aligns the diagonal with the
last key (for decoding with a key/value cache). On the CPU torch materializes the lower-right
mask and runs the ordinary attention with it; so does torchlike.
"""
from __future__ import annotations

from enum import IntEnum

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(IntEnum):
    """``UPPER_LEFT``: ``tril(ones(L, S))``; ``LOWER_RIGHT``: ``tril(ones(L, S), S - L)``."""

    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias:
    """A causal mask described by its variant and sizes, materialized only when needed."""

    def __init__(self, variant: CausalVariant, seq_len_q: int, seq_len_kv: int):
        self.variant = variant
        self.seq_len_q = seq_len_q
        self.seq_len_kv = seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            import warnings
            warnings.warn("Lower right causal bias will produce NaNs in the output when "
                          "seq_len_q > seq_len_kv!")

    def _upper_left(self, device):
        import torchlike
        return torchlike.tril(torchlike.ones(self.seq_len_q, self.seq_len_kv, device=device,
                                             dtype=torchlike.bool))

    def _lower_right(self, device):
        import torchlike
        diagonal_offset = self.seq_len_kv - self.seq_len_q
        return torchlike.tril(torchlike.ones(self.seq_len_q, self.seq_len_kv, device=device,
                                             dtype=torchlike.bool), diagonal=diagonal_offset)

    def _materialize(self, device=None):
        """The boolean mask (True: attend)."""
        if device is None:
            device = "cpu"
        if self.variant == CausalVariant.UPPER_LEFT:
            return self._upper_left(device)
        return self._lower_right(device)

    @staticmethod
    def _dispatch(query, key, value, attn_mask, dropout_p=0.0, is_causal=False, scale=None,
                  enable_gqa=False):
        from ..functional import scaled_dot_product_attention as sdpa
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if attn_mask.seq_len_q == attn_mask.seq_len_kv or \
                attn_mask.variant == CausalVariant.UPPER_LEFT:
            return sdpa(query, key, value, attn_mask=None, dropout_p=dropout_p, is_causal=True,
                        scale=scale, enable_gqa=enable_gqa)
        if attn_mask.variant == CausalVariant.LOWER_RIGHT:
            return sdpa(query, key, value, attn_mask=attn_mask._materialize(query.device),
                        dropout_p=dropout_p, is_causal=False, scale=scale,
                        enable_gqa=enable_gqa)
        raise ValueError("CausalBias.variant must be a CausalVariant type, but found: "
                         f"{attn_mask.variant}")

    def __repr__(self):
        return self._materialize().__repr__()


def causal_upper_left(*size) -> CausalBias:
    """The causal mask aligned to the upper-left corner (``is_causal=True``)."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.UPPER_LEFT, seq_len_q, seq_len_kv)


def causal_lower_right(*size) -> CausalBias:
    """The causal mask aligned to the lower-right corner (the last query sees every key)."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.LOWER_RIGHT, seq_len_q, seq_len_kv)
