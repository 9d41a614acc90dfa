"""nn.utils.rnn: pad_sequence (packed sequences are not supported)."""
from __future__ import annotations

__all__ = ["pad_sequence"]


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack variable-length sequences into (T, B, *) (or (B, T, *)) padded with a value."""
    from ... import stack
    from .. import functional as F
    max_len = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        extra = max_len - s.shape[0]
        pads = [0, 0] * (s.ndim - 1) + ([0, extra] if padding_side == "right" else [extra, 0])
        padded.append(F.pad(s, pads, value=padding_value) if extra else s)
    out = stack(padded, 0)
    return out if batch_first else out.transpose(0, 1)
