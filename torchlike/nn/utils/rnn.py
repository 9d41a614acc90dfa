"""nn.utils.rnn: pad_sequence and packed sequences (pack/pad, accepted by RNN/LSTM/GRU)."""
from __future__ import annotations

from collections import namedtuple

import jax.numpy as jnp
import numpy as np

from ..._registry import apply, defop
from ..._tensor import Tensor

__all__ = ["PackedSequence", "pad_sequence", "pack_padded_sequence", "pad_packed_sequence",
           "pack_sequence", "unpad_sequence", "unpack_sequence", "invert_permutation"]


PackedSequence_ = namedtuple("PackedSequence_",
                             ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(PackedSequence_):
    """Time-major packed batch: ``data`` holds the valid steps, ``batch_sizes`` per time step."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = _invert(sorted_indices)
        if batch_sizes is not None:
            # torch's _packed_sequence_init_args: batch_sizes must be a CPU tensor
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should "
                    "never be created manually. They should be instantiated by functions like "
                    "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        else:
            # the PackedSequence((data, batch_sizes), ...) form
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data[0], data[1]
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        if "copy" in kwargs:
            raise RuntimeError(".to() does not accept copy argument")
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def pin_memory(self):
        return type(self)(self.data.pin_memory(), self.batch_sizes,
                          None if self.sorted_indices is None else self.sorted_indices.pin_memory(),
                          None if self.unsorted_indices is None
                          else self.unsorted_indices.pin_memory())

    def cuda(self, *args, **kwargs):
        kwargs.setdefault("device", "cuda")
        return self.to(*args, **kwargs)

    def cpu(self, *args, **kwargs):
        kwargs.setdefault("device", "cpu")
        return self.to(*args, **kwargs)

    def _as(self, name):
        from ... import _dtype
        return self.to(dtype=getattr(_dtype, name))

    def double(self):
        return self._as("float64")

    def float(self):
        return self._as("float32")

    def half(self):
        return self._as("float16")

    def long(self):
        return self._as("int64")

    def int(self):
        return self._as("int32")

    def short(self):
        return self._as("int16")

    def char(self):
        return self._as("int8")

    def byte(self):
        return self._as("uint8")

    @property
    def is_cuda(self):
        return bool(getattr(self.data, "is_cuda", False))

    def is_pinned(self):
        return bool(self.data.is_pinned()) if hasattr(self.data, "is_pinned") else False


def _invert(perm):
    p = np.asarray(perm._data)
    inv = np.empty_like(p)
    inv[p] = np.arange(len(p))
    return Tensor._make(jnp.asarray(inv))


def invert_permutation(permutation):
    """The inverse of the 1-D index tensor ``permutation`` (None passes through)."""
    if permutation is None:
        return None
    return _invert(permutation)


def _positions(batch_sizes):
    """(t, b) of each packed row, time-major."""
    bs = np.asarray(batch_sizes._data if isinstance(batch_sizes, Tensor) else batch_sizes)
    tt = np.concatenate([np.full(n, t) for t, n in enumerate(bs)]).astype(np.int32)
    bb = np.concatenate([np.arange(n) for n in bs]).astype(np.int32)
    return tt, bb, len(bs), int(bs[0])


# (``name``: torch's grad_fn of the result: a packed RNN's output data is a CatBackward0)
@defop("pack_gather", grad_name=lambda kw: kw.get("name", "PackPaddedSequenceBackward0"))
def _gather(x, tt, bb, name="PackPaddedSequenceBackward0"):
    return x[tt, bb]


# torch's _pad_packed_sequence fills a new tensor and copies each step's rows into it
@defop("pack_scatter", grad_name="CopySlices")
def _scatter(data, tt, bb, T, B, fill):
    out = jnp.full((T, B) + data.shape[1:], fill, data.dtype)
    return out.at[tt, bb].set(data)


def _pack_gather(padded, batch_sizes, **name):
    tt, bb, _, _ = _positions(batch_sizes)
    return apply(_gather, padded, Tensor._make(jnp.asarray(tt)), Tensor._make(jnp.asarray(bb)),
                 **name)


def _unpack_padded(packed, padding_value, total_length=None):
    """Padded (T, B, *) in sorted batch order, and the lengths (sorted)."""
    tt, bb, T, B = _positions(packed.batch_sizes)
    if total_length is not None:
        T = max(T, int(total_length))
    padded = apply(_scatter, packed.data, Tensor._make(jnp.asarray(tt)),
                   Tensor._make(jnp.asarray(bb)), T=T, B=B, fill=float(padding_value))
    bs = np.asarray(packed.batch_sizes._data)
    lengths = (np.arange(B)[:, None] < bs[None, :]).sum(1)
    return padded, Tensor._make(jnp.asarray(lengths, jnp.int64))


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    lens = np.asarray(lengths._data if isinstance(lengths, Tensor) else lengths).astype(np.int64)
    batch_dim = 0 if batch_first else 1
    if enforce_sorted:
        sorted_indices = None
    else:
        # (torch sorts and selects before the checks of _pack_padded_sequence below)
        order = np.argsort(-lens, kind="stable")
        sorted_indices = Tensor._make(jnp.asarray(order, jnp.int64))
        lens = lens[order]
        input = input.index_select(batch_dim, sorted_indices)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    # torch's _pack_padded_sequence: the transpose, the lengths' rank, then input.size(1)
    if batch_first and input.dim() < 2:
        input.transpose(0, 1)                     # (raises torch's IndexError)
    if lens.ndim != 1:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lens.ndim}D cpu Long tensor")
    if input.dim() == 0:
        raise IndexError("Dimension specified as 1 but tensor has no dimensions")
    if input.dim() < 2:
        input.size(1)                             # (raises torch's IndexError)
    batch = input.shape[batch_dim]
    if lens.ndim != 1 or len(lens) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lens.size if lens.ndim != 1 else len(lens)} (batch_size={batch})")
    if lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if np.any(np.diff(lens) > 0):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` "
                           "to pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    if batch_first:
        input = input.transpose(0, 1)
    T = int(lens[0])
    batch_sizes = np.array([(lens > t).sum() for t in range(T)], np.int64)
    bst = Tensor._make(jnp.asarray(batch_sizes))
    # torch takes each run of steps with a slice of the padded input, which stops at its length:
    # lengths past it (a length counted before truncation) give batch sizes with no rows behind
    # them, and the packed batch's consumers raise (``_check_packed_rows``)
    data = _pack_gather(input, Tensor._make(jnp.asarray(batch_sizes[:input.shape[0]])))
    return PackedSequence(data, bst, sorted_indices, None)


def _check_packed_rows(data, batch_sizes):
    """torch's packed RNN kernels take each step's rows with ``narrow(0, offset, batch_size)``:
    data with fewer rows than the batch sizes add up to fails at the first step it runs out at
    (a PackedSequence of lengths longer than its padded input)."""
    rows, off = data.shape[0], 0
    for n in np.asarray(batch_sizes._data if isinstance(batch_sizes, Tensor)
                        else batch_sizes).reshape(-1).tolist():
        if off + n > rows:
            raise RuntimeError(f"start ({off}) + length ({n}) exceeds dimension size ({rows}).")
        off += n


def _check_pad_rows(data, batch_sizes):
    """torch's _pad_packed_sequence copies each run of steps of one batch size from a slice of
    the data viewed as (steps, batch size, *): data with fewer rows than the batch sizes add up
    to fails that view."""
    sizes = np.asarray(batch_sizes._data if isinstance(batch_sizes, Tensor)
                       else batch_sizes).reshape(-1).tolist()
    rows, feat = data.shape[0], list(data.shape[1:])
    if not sizes or sum(sizes) <= rows:
        return
    off, prev_i, prev_b = 0, 0, sizes[0]
    for i in range(len(sizes) + 1):
        b = sizes[i] if i != len(sizes) else 0
        if b != prev_b:
            want = prev_b * (i - prev_i)
            got = max(0, min(off + want, rows) - min(off, rows))
            if got != want:
                raise RuntimeError(f"shape '{[i - prev_i, prev_b] + feat}' is invalid for "
                                   f"input of size {got * int(np.prod(feat, dtype=np.int64))}")
            off, prev_i = off + want, i
        prev_b = b


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    if total_length is not None:
        max_seq_length = int(np.asarray(sequence.batch_sizes._data).shape[0])
        if total_length < max_seq_length:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {max_seq_length}")
    _check_pad_rows(sequence.data, sequence.batch_sizes)
    padded, lengths = _unpack_padded(sequence, padding_value, total_length)
    # torch: _pad_packed_sequence (transposed for batch_first), then the batch reordered
    if batch_first:
        padded = padded.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = Tensor._make(lengths._data[sequence.unsorted_indices._data])
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack variable-length sequences into (T, B, *) (or (B, T, *)) padded with a value."""
    from ... import stack
    from .. import functional as F
    if padding_side not in ("left", "right"):
        raise RuntimeError("Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    # torch's kernel reads the first sequence's trailing sizes, then each one's length
    if sequences[0].dim() == 0:
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    if any(s.dim() == 0 for s in sequences):
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    max_len = max(s.shape[0] for s in sequences)
    trailing = tuple(sequences[0].shape[1:])
    from ..._registry import inplace_broadcast_error
    for i, s in enumerate(sequences[1:], 1):
        # torch copies each sequence into its slot (length, *trailing): copy_'s broadcasting
        dst, src = (s.shape[0],) + trailing, tuple(s.shape)
        err = inplace_broadcast_error(dst, src)
        if err:
            raise RuntimeError(err)
        if src != dst:
            sequences[i] = s.expand(tuple(dst))
    # torch fills a new tensor and copies each sequence into its slot (CopySlices), in the
    # first sequence's dtype; stacked along the batch dim directly: contiguous as torch's
    return apply(_pad_sequence, *sequences, batch_first=bool(batch_first),
                 padding_value=padding_value, left=padding_side == "left")


@defop("pad_sequence", grad_name="CopySlices", saves=False)
def _pad_sequence(*seqs, batch_first, padding_value, left):
    dt = seqs[0].dtype
    max_len = max(s.shape[0] for s in seqs)
    padded = []
    for s in seqs:
        extra = max_len - s.shape[0]
        widths = [(extra, 0) if left else (0, extra)] + [(0, 0)] * (s.ndim - 1)
        padded.append(jnp.pad(s.astype(dt), widths,
                              constant_values=jnp.asarray(padding_value).astype(dt)))
    return jnp.stack(padded, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted=True):
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """torch's: ``padded_sequences`` is transposed in place when not ``batch_first``, and each
    sequence is selected by a mask (a copy)."""
    from ..._creation import arange
    unpadded_sequences = []
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    max_length = padded_sequences.shape[1]
    idx = arange(max_length, device=lengths.device)
    for seq, length in zip(padded_sequences, lengths, strict=True):
        mask = idx < length
        unpadded_sequences.append(seq[mask])
    return unpadded_sequences


def unpack_sequence(packed_sequences):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
