"""RNN, LSTM, GRU (layers, bidirectional, batch_first, dropout, initial states) and cells.

The whole stacked recurrence is one op (``rnn`` in this file): a ``jax.lax.scan`` per layer and
direction, so forward and backward are each one jitted call.
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp

from ... import _creation, _random, _tiers
from ... import _dtype as D
from ...autograd import grad_mode as _gm
from ..._registry import apply, defop
from ..._tensor import Tensor
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_HI = jax.lax.Precision.HIGHEST
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


def _cell(mode, x_proj, h, c, w_hh, b_hh, w_hr=None):
    """One step given the input projection ``x W_ih^T + b_ih``."""
    gh = jnp.matmul(h, w_hh.T, precision=_HI)
    if b_hh is not None:
        gh = gh + b_hh
    if mode == "RNN_TANH":
        return jnp.tanh(x_proj + gh), None
    if mode == "RNN_RELU":
        z = x_proj + gh
        return jnp.where(z > 0, z, 0), None
    if mode == "LSTM":
        g = x_proj + gh
        i, f, gg, o = jnp.split(g, 4, axis=-1)
        c2 = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(gg)
        h2 = jax.nn.sigmoid(o) * jnp.tanh(c2)
        if w_hr is None:
            return h2, c2
        # (under autocast c2, and so h2, may be wider than the weights: the projection's
        # linear casts h2 to theirs)
        return jnp.matmul(h2.astype(w_hr.dtype), w_hr.T, precision=_HI), c2
    xr, xz, xn = jnp.split(x_proj, 3, axis=-1)
    hr, hz, hn = jnp.split(gh, 3, axis=-1)
    r = jax.nn.sigmoid(xr + hr)
    z = jax.nn.sigmoid(xz + hz)
    n = jnp.tanh(xn + r * hn)
    return (1 - z) * n + z * h, None


def _run_direction(mode, x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse, valid=None, w_hr=None):
    xp = jnp.matmul(x, w_ih.T, precision=_HI)
    if b_ih is not None:
        xp = xp + b_ih
    lstm = mode == "LSTM"

    def step(carry, inp):
        h, c = carry
        xt, v = inp
        h2, c2 = _cell(mode, xt, h, c, w_hh, b_hh, w_hr)
        if v is not None:
            # packed sequences: past a sequence's end the state is carried and the output is 0
            h2 = jnp.where(v[:, None], h2, h)
            if lstm:
                c2 = jnp.where(v[:, None], c2, c)
            return (h2, c2 if lstm else c), jnp.where(v[:, None], h2, 0)
        return (h2, c2 if lstm else c), h2

    (hT, cT), ys = _tiers.scan(step, (h0, c0 if lstm else jnp.zeros((), x.dtype)),
                                (xp, valid), reverse=reverse)
    return ys, hT, cT


@defop("rnn", grad_name=lambda kw: "MkldnnRnnLayerBackward0" if kw.get("onednn")
       else "StackBackward0")
def _rnn(x, hx, *rest, mode, num_layers, num_dirs, has_bias, dropout, has_key,
         has_lengths=False, has_proj=False, onednn=False):
    """x: (T, B, I); hx (and cx for LSTM): (L*D, B, H); the flat weights; a key; lengths.
    ``onednn``: torch's CPU LSTM runs oneDNN's layers (a float32 input, no projections), its
    output's node is theirs; its other recurrences stack their steps (StackBackward0)."""
    lstm = mode == "LSTM"
    i = 0
    cx = None
    if lstm:
        cx = rest[0]
        i = 1
    per = (4 if has_bias else 2) + (1 if has_proj else 0)
    valid = None
    if has_lengths:
        lengths = rest[-1]
        rest = rest[:-1]
        valid = jnp.arange(x.shape[0])[:, None] < lengths[None, :]
    key = rest[-1] if has_key else None
    weights = rest[i:len(rest) - (1 if has_key else 0)]
    hs, cs = [], []
    inp = x
    for layer in range(num_layers):
        outs = []
        for d in range(num_dirs):
            k = (layer * num_dirs + d)
            w = weights[k * per:(k + 1) * per]
            w_ih, w_hh = w[0], w[1]
            b_ih, b_hh = (w[2], w[3]) if has_bias else (None, None)
            w_hr = w[-1] if has_proj else None
            ys, hT, cT = _run_direction(mode, inp, hx[k], cx[k] if lstm else None, w_ih, w_hh,
                                        b_ih, b_hh, reverse=d == 1, valid=valid, w_hr=w_hr)
            outs.append(ys)
            hs.append(hT)
            if lstm:
                cs.append(cT)
        last = outs
        inp = outs[0] if num_dirs == 1 else jnp.concatenate(outs, axis=-1)
        if dropout > 0 and layer < num_layers - 1:
            layer_key = jax.random.fold_in(jax.random.wrap_key_data(key), layer)
            keep = jax.random.bernoulli(layer_key, 1 - dropout, inp.shape)
            # p == 1 zeroes every element (no 1/0 scale: its gradient would be nan)
            inp = jnp.where(keep, inp * (1 / (1 - dropout) if dropout < 1 else 0), 0)
    # the last layer's outputs per direction and each layer's final states, unstacked: the
    # module joins them with torchlike.cat/stack, so the graph is torch's (h_n: StackBackward0)
    return tuple(last) + tuple(hs) + tuple(cs)


def _weight_dtype_error(dt, wdt, bias):
    """torch's error for an input or hidden state whose dtype is not the weights': the message
    of the matmul its kernel reaches (addmm with a bias, mm without)."""
    from ..._dtype import legacy_name
    if bias:
        return RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                            f"{legacy_name(dt)} and {legacy_name(wdt)}")
    return RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                        f"{legacy_name(dt).lower()} != {legacy_name(wdt).lower()}")


def _stack(mode, x, h0, c0, params, has_biases, num_layers, dropout, train, bidirectional,
           lengths=None):
    """The stacked recurrence on time-major ``x`` (T, B, I) from checked states and weights:
    ``(output, h_n, c_n)`` (``c_n`` None unless LSTM). nn.RNN/LSTM/GRU and torch.rnn_tanh,
    rnn_relu, lstm and gru all compute here; ``lengths`` (per batch entry, sorted) marks the
    valid steps of a packed batch."""
    import torchlike as _tl
    lstm = mode == "LSTM"
    nd = 2 if bidirectional else 1
    has_proj = lstm and h0.shape[-1] != c0.shape[-1]
    if has_proj and _gm._state.autocast is not None:
        # torch decomposes an LSTM with projections into linears (autocast: lower precision)
        # and elementwise ops: the gates and h are of the autocast dtype, the cell state is
        # the gates' dtype promoted with c0's (float32 c0: float32)
        x, h0, params = _autocast_proj_lstm(x, h0, params)
    args = [x, h0] + ([c0] if lstm else []) + list(params)
    has_key = bool(train) and dropout > 0 and num_layers > 1
    if has_key:
        args.append(_random.next_key_data())
    if lengths is not None:
        args.append(lengths)
    outs = apply(_rnn, *args, mode=mode, num_layers=num_layers, num_dirs=nd,
                 has_bias=bool(has_biases), dropout=float(dropout) if has_key else 0.0,
                 has_key=has_key, has_lengths=lengths is not None, has_proj=has_proj,
                 onednn=lstm and not has_proj and x.dtype is D.float32)
    n = num_layers * nd
    out = outs[0] if nd == 1 else _tl.cat(outs[:nd], -1)
    hn = _tl.stack(outs[nd:nd + n])
    cn = _tl.stack(outs[nd + n:]) if lstm else None
    return out, hn, cn


def _autocast_proj_lstm(x, h0, params):
    """The input, h0 and weights of an LSTM with projections cast to the autocast dtype of
    their device (the casts of torch's linears inside its decomposed LSTM)."""
    from ...amp import autocast_mode as A
    low = A.lower_dtype(x)
    if low is None:
        return x, h0, params

    def cast(t):
        return t.to(low) if t.dtype.is_floating_point and t.dtype is not D.float64 else t
    return cast(x), cast(h0), [cast(w) for w in params]


def _stack_packed(mode, data, batch_sizes, h0, c0, params, has_biases, num_layers, dropout,
                  train, bidirectional):
    """``_stack`` on a packed batch (``data`` (sum(batch_sizes), I), states in batch_sizes'
    order): the packed output's data, h_n, c_n."""
    from ..utils.rnn import PackedSequence, _pack_gather, _unpack_padded
    padded, lengths = _unpack_padded(PackedSequence(data, batch_sizes), 0.0)
    out, hn, cn = _stack(mode, padded, h0, c0, params, has_biases, num_layers, dropout, train,
                         bidirectional, lengths=lengths)
    # (torch's packed output data is the layers' directions concatenated: CatBackward0)
    return _pack_gather(out, batch_sizes, name="CatBackward0"), hn, cn


_PROJ_WARNED = False


class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0, device=None,
                 dtype=None):
        super().__init__()
        # torch's checks, in torch's order
        if not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1 \
                or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            import warnings
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: "
                            f"{type(batch_first).__name__}")
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: "
                            f"{type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: "
                            f"{type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden * num_directions
                suffix = "_reverse" if direction == 1 else ""
                params = [Parameter(_creation.empty(gate_size, layer_input_size, dtype=dtype)),
                          Parameter(_creation.empty(gate_size, real_hidden, dtype=dtype))]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    params += [Parameter(_creation.empty(gate_size, dtype=dtype)),
                               Parameter(_creation.empty(gate_size, dtype=dtype))]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    params.append(Parameter(_creation.empty(proj_size, hidden_size,
                                                            dtype=dtype)))
                    names.append("weight_hr_l{}{}")
                names = [n.format(layer, suffix) for n in names]
                for n, p in zip(names, params):
                    setattr(self, n, p)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, w) for w in ws] for ws in self._all_weights]

    def flatten_parameters(self):
        pass

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def forward(self, input, hx=None):
        from ..utils.rnn import PackedSequence
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        return self._forward(input, hx)

    def _forward_packed(self, packed, hx):
        from ..utils.rnn import PackedSequence, _check_packed_rows
        lstm = self.mode == "LSTM"
        data, batch_sizes = packed.data, packed.batch_sizes
        if lstm:
            # torch's LSTM permutes the given states and runs its kernel on a packed batch
            # without its module checks: the kernel's errors, and states of a larger batch
            # (unsorted batches) taken through the permutation
            if hx is not None:
                hx = self.permute_hidden(tuple(hx), packed.sorted_indices)
            hx = self._lstm_packed_checks(data, hx, int(batch_sizes[0]))
            self._check_input(data)
            h0, c0 = self._states(hx, int(batch_sizes[0]), data.dtype)
        else:
            self._check_input(data)
            h0, c0 = self._states(hx, int(batch_sizes[0]), data.dtype)
            if hx is not None:
                h0 = self.permute_hidden(h0, packed.sorted_indices)
        _check_packed_rows(data, batch_sizes)
        out, hn, cn = _stack_packed(self.mode, data, batch_sizes, h0, c0, self._flat_weights,
                                    self.bias, self.num_layers, self.dropout, self.training,
                                    self.bidirectional)
        out = PackedSequence(out, batch_sizes, packed.sorted_indices, packed.unsorted_indices)
        if packed.unsorted_indices is not None:
            un = packed.unsorted_indices
            hn = hn.index_select(1, un)
            cn = cn.index_select(1, un) if lstm else None
        return out, ((hn, cn) if lstm else hn)

    def _lstm_packed_checks(self, data, hx, B):
        """torch's LSTM kernel's errors on a packed batch (its module checks are skipped
        there), in the kernel's order; a cell state of batch 1 broadcasts as in the kernel."""
        import torchlike as _tl
        legacy = D.legacy_name
        wdt = self._flat_weights[0].dtype
        gates = 4 * self.hidden_size
        if hx is not None:
            h, c = hx
            for t in (h, c):
                if t.dim() < 3:
                    n = max(t.dim(), 1)
                    raise IndexError(f"Dimension out of range (expected to be in range of "
                                     f"[{-n}, {n - 1}], but got 2)")
            if (h.shape[2] != c.shape[2]) != (self.proj_size > 0):
                raise RuntimeError("got an incorrect number of RNN parameters")
            nd = 2 if self.bidirectional else 1
            if h.shape[0] == c.shape[0] != self.num_layers * nd:
                raise RuntimeError("Expected more hidden states in stacked_rnn")
        autocast = _tl.is_autocast_enabled() or _tl.is_autocast_enabled("cpu")
        if data.dtype != wdt and not autocast:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                               f"{legacy(data.dtype)} and {legacy(wdt)}")
        if data.dim() == 2 and data.shape[-1] != self.input_size:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({data.shape[0]}x"
                               f"{data.shape[1]} and {self.input_size}x{gates})")
        if hx is None:
            return hx
        if h.dtype != wdt and not autocast:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                               f"{legacy(h.dtype)} and {legacy(wdt)}")
        if h.shape[1] != B:
            if h.shape[1] == 1:
                raise RuntimeError(f"output with shape [1, {gates}] doesn't match the broadcast "
                                   f"shape [{B}, {gates}]")
            raise RuntimeError(f"The size of tensor a ({h.shape[1]}) must match the size of "
                               f"tensor b ({B}) at non-singleton dimension 0")
        if c.shape[1] != B:
            if c.shape[1] != 1:
                raise RuntimeError(f"The size of tensor a ({B}) must match the size of tensor b "
                                   f"({c.shape[1]}) at non-singleton dimension 0")
            c = c.expand(c.shape[0], B, c.shape[2])
        return h, c

    def _check_input(self, input, dims=None):
        """torch's module checks of the input's dtype, number of dimensions (``dims``: any
        when None) and feature size."""
        wdt = self._flat_weights[0].dtype
        if input.dtype != wdt:
            import torchlike as _tl
            if not (_tl.is_autocast_enabled() or _tl.is_autocast_enabled("cpu")):
                raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                                 f"({wdt}). Convert input: input.to({wdt}), or convert model: "
                                 f"model.to({input.dtype})")
        if dims is not None and input.dim() != dims:
            raise RuntimeError(f"input must have {dims} dimensions, got {input.dim()}")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _states(self, hx, B, dtype, onednn=False):
        """The initial (h0, c0) for a batch of B: zeros, or ``hx`` checked as torch's module
        checks it (batched: (L*D, B, H) each)."""
        lstm = self.mode == "LSTM"
        nd = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        shape = (self.num_layers * nd, B, real_hidden)
        cshape = (self.num_layers * nd, B, self.hidden_size)
        if hx is None:
            return (_creation.zeros(*shape, dtype=dtype),
                    _creation.zeros(*cshape, dtype=dtype) if lstm else None)
        h0, c0 = (hx[0], hx[1]) if lstm else (hx, None)
        if lstm:
            self.check_hidden_size(h0, shape, "Expected hidden[0] size {}, got {}")
            self.check_hidden_size(c0, cshape, "Expected hidden[1] size {}, got {}")
        else:
            self.check_hidden_size(h0, shape)
        wdt = self._flat_weights[0].dtype
        if onednn:
            # torch's CPU LSTM runs oneDNN on a float32 input: its errors for the states
            if any(t.dtype not in (D.float32, D.bfloat16, D.float16) for t in (h0, c0)):
                raise RuntimeError("get_mkldnn_dtype: unsupported data type")
            if any(t.dtype is not D.float32 for t in (h0, c0)):
                raise RuntimeError("could not create a primitive descriptor for the LSTM forward "
                                   "propagation primitive. Run workload with environment "
                                   "variable ONEDNN_VERBOSE=all to get additional diagnostic "
                                   "information.")
        if lstm and self.proj_size > 0 and _gm._state.autocast is not None:
            from ...amp import autocast_mode as A
            if A.lower_dtype(h0) is not None:
                # (torch's decomposed LSTM: its linears cast h, the cell state keeps its dtype)
                return h0, c0
        if h0.dtype != wdt:
            raise _weight_dtype_error(h0.dtype, wdt, self.bias)
        if lstm and c0.dtype != wdt:
            # torch's kernel: the new state takes c's dtype promoted with the gates'; a wider
            # one reaches the next matmul (the projection's, without bias, first)
            up = D.promote_types(wdt, c0.dtype)
            if up != wdt:
                raise _weight_dtype_error(up, wdt, self.bias and self.proj_size == 0)
            c0 = c0.to(wdt)
        return h0, c0

    # torch's public checks (custom recurrent modules built on RNNBase call them)
    def check_input(self, input, batch_sizes):
        self._check_input(input, 2 if batch_sizes is not None else 3)

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch,
                self.proj_size if self.proj_size > 0 else self.hidden_size)

    def check_hidden_size(self, hx, expected_hidden_size, msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def _forward(self, input, hx=None):
        lstm = self.mode == "LSTM"
        if input.dim() not in (2, 3):
            name = {"LSTM": "LSTM", "GRU": "GRU"}.get(self.mode, "RNN")
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
                             f"{' tensor' if name == 'RNN' else ''} instead")
        batched = input.dim() == 3
        if hx is not None:
            want = 3 if batched else 2
            kind = "batched 3-D" if batched else "unbatched 2-D"
            if lstm:
                dims = (hx[0].dim(), hx[1].dim())
                if dims != (want, want):
                    raise RuntimeError(f"For {kind} input, hx and cx should also be "
                                       f"{want}-D but got ({dims[0]}-D, {dims[1]}-D) "
                                       "tensors")
            elif hx.dim() != want:
                raise RuntimeError(f"For {kind} input, hx should also be {want}-D but "
                                   f"got {hx.dim()}-D tensor")
        x = input
        if not batched:
            x = x.unsqueeze(1)
        elif self.batch_first:
            x = x.transpose(0, 1)
        self._check_input(input)
        if hx is not None and not batched:
            hx = tuple(h.unsqueeze(1) for h in hx) if lstm else hx.unsqueeze(1)
        onednn = lstm and input.dtype is D.float32 and input.numel() != 0
        if onednn and self.proj_size > 0:
            onednn = False
            global _PROJ_WARNED
            if not _PROJ_WARNED:
                # torch's TORCH_WARN_ONCE (its oneDNN LSTM has no projections)
                _PROJ_WARNED = True
                import warnings
                from ..._ops.factorizations import triggered
                warnings.warn("LSTM with projections is not supported with oneDNN. Using "
                              "default implementation." + triggered("RNN.cpp:1512"),
                              UserWarning, stacklevel=3)
        h0, c0 = self._states(hx, x.shape[1], input.dtype, onednn=onednn)
        if x.shape[0] == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        out, hn, cn = _stack(self.mode, x, h0, c0, self._flat_weights, self.bias,
                             self.num_layers, self.dropout, self.training, self.bidirectional)
        if not batched:
            out = out.squeeze(1)
            hn = hn.squeeze(1)
            cn = cn.squeeze(1) if cn is not None else None
        elif self.batch_first:
            out = out.transpose(0, 1)
        return (out, (hn, cn)) if lstm else (out, hn)


class RNN(RNNBase):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__(mode, *args, **kwargs)


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


@defop("rnn_cell_state", grad_name="AddBackward0", saves=False,
       vjp=lambda cots, xs, needs: cots)
def _cell_state(c):
    """lstm_cell's c (its h's op is named MulBackward0; torch's c = f * c + i * g is an
    AddBackward0): the value itself, under its own grad_fn name."""
    return c


# grad_fn names are those of the last op of ATen's CPU cells (lstm_cell's h = o * tanh(c), whose
# c = f * c + i * g is an AddBackward0 in torch; gru_cell's (h - n) * z + n)
@defop("rnn_cell", promote="common", grad_name=lambda kw: {"LSTM": "MulBackward0",
                                                           "GRU": "AddBackward0",
                                                           "RNN_RELU": "ReluBackward0"}
       .get(kw["mode"], "TanhBackward0"))
def _rnn_cell(x, h, *rest, mode, has_bias):
    lstm = mode == "LSTM"
    c = rest[0] if lstm else None
    w = rest[1:] if lstm else rest
    xp = jnp.matmul(x, w[0].T, precision=_HI)
    if has_bias:
        xp = xp + w[2]
    h2, c2 = _cell(mode, xp, h, c, w[1], w[3] if has_bias else None)
    return (h2, c2) if lstm else h2


class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(_creation.empty(num_chunks * hidden_size, input_size,
                                                   dtype=dtype))
        self.weight_hh = Parameter(_creation.empty(num_chunks * hidden_size, hidden_size,
                                                   dtype=dtype))
        if bias:
            self.bias_ih = Parameter(_creation.empty(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(_creation.empty(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _run(self, mode, input, hx, cx=None):
        name = type(self).__name__ if type(self).__name__ in ("RNNCell", "LSTMCell",
                                                              "GRUCell") else \
            {"LSTM": "LSTMCell", "GRU": "GRUCell"}.get(mode, "RNNCell")
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        if mode == "LSTM":
            for idx, value in enumerate(() if hx is None else (hx, cx)):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
        elif hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        B = input.shape[0]
        if hx is None:
            hx = _creation.zeros(B, self.hidden_size, dtype=input.dtype)
        elif not batched:
            hx = hx.unsqueeze(0)
        if mode == "LSTM":
            if cx is None:
                cx = _creation.zeros(B, self.hidden_size, dtype=input.dtype)
            elif not batched:
                cx = cx.unsqueeze(0)
        # aten's rnn-cell checks (check_rnn_cell_forward_input / _hidden), in its order
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        for idx, h in enumerate((hx, cx) if mode == "LSTM" else (hx,)):
            if h.shape[0] != B:
                raise RuntimeError(f"Input batch size {B} doesn't match hidden{idx} batch size "
                                   f"{h.shape[0]}")
            if h.dim() < 2 or h.shape[1] != self.hidden_size:
                got = h.shape[1] if h.dim() >= 2 else None
                raise RuntimeError(f"hidden{idx} has inconsistent hidden_size: got {got}, "
                                   f"expected {self.hidden_size}")
        weights = [self.weight_ih, self.weight_hh]
        if self.bias:
            weights += [self.bias_ih, self.bias_hh]
        if _gm._state.autocast is not None:
            input, hx, cx, weights = _autocast_cell(mode, input, hx, cx, weights)
        wdt = weights[0].dtype
        for t in (input, hx):
            if t.dtype != wdt:
                raise _weight_dtype_error(t.dtype, wdt, self.bias)
        args = [input, hx]
        if mode == "LSTM":
            args.append(cx)
        args += weights
        out = apply(_rnn_cell, *args, mode=mode, has_bias=bool(self.bias))
        if mode == "LSTM" and out[1].grad_fn is not None:
            out = (out[0], apply(_cell_state, out[1]))
        if not batched:
            out = tuple(o.squeeze(0) for o in out) if isinstance(out, tuple) else out.squeeze(0)
        return out


def _autocast_cell(mode, input, hx, cx, weights):
    """A cell under autocast, as torch's CPU cells (composites) come out: RNNCell's products
    run in the autocast dtype; GRUCell's and LSTMCell's in their input's dtype where the state
    shares it, else in float32 (the state's)."""
    from ...amp import autocast_mode as A
    states = [hx] + ([cx] if mode == "LSTM" else [])
    low = A.lower_dtype(input)
    if low is None:
        return input, hx, cx, weights
    if mode not in ("LSTM", "GRU"):
        target = low
    else:
        target = input.dtype if all(t.dtype is input.dtype for t in states) else D.float32

    def cast(t):
        return t if t.dtype is target or not t.dtype.is_floating_point else t.to(target)
    states = [cast(t) for t in states]
    return (cast(input), states[0], states[1] if mode == "LSTM" else cx,
            [cast(w) for w in weights])


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            if input.dim() not in (1, 2):
                raise ValueError(f"RNNCell: Expected input to be 1D or 2D, got {input.dim()}D "
                                 "instead")
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        mode = "RNN_TANH" if self.nonlinearity == "tanh" else "RNN_RELU"
        return self._run(mode, input, hx)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, dtype=dtype)

    def forward(self, input, hx=None):
        if isinstance(hx, Tensor) and input.dim() == 2:
            # torch hands a batched input's hx straight to lstm_cell, whose parser wants a
            # tuple (an unbatched input's hx is split as (hx[0], hx[1]) first)
            raise TypeError("lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, "
                            "not Tensor")
        if hx is not None and len(hx) != 2:
            if input.dim() not in (1, 2):
                raise ValueError(f"LSTMCell: Expected input to be 1D or 2D, got {input.dim()}D "
                                 "instead")
            raise RuntimeError("lstm_cell expects two hidden states")
        h, c = (None, None) if hx is None else (hx[0], hx[1])
        return self._run("LSTM", input, h, c)


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, dtype=dtype)

    def forward(self, input, hx=None):
        return self._run("GRU", input, hx)


# ------------------------------------------------------------------ torch.lstm, gru, rnn_*
# ATen's functional forms that torch's modules call: two overloads each, the packed one
# (data, batch_sizes, ...) tried first as torch's argument parser does.

def _is_tensors(v):
    return isinstance(v, (list, tuple)) and len(v) > 0 and all(isinstance(t, Tensor) for t in v)


def _is_int(v):
    import numbers
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_float(v):
    import numbers
    return isinstance(v, numbers.Real)


_KINDS = {"Tensor": lambda v: isinstance(v, Tensor), "tuple of Tensors": _is_tensors,
          "bool": lambda v: isinstance(v, bool), "int": _is_int, "float": _is_float}
_TAIL = (("tuple of Tensors", "params"), ("bool", "has_biases"), ("int", "num_layers"),
         ("float", "dropout"), ("bool", "train"), ("bool", "bidirectional"))


def _overloads(lstm):
    hx = ("tuple of Tensors" if lstm else "Tensor", "hx")
    return ((("Tensor", "data"), ("Tensor", "batch_sizes"), hx) + _TAIL,
            (("Tensor", "input"), hx) + _TAIL + (("bool", "batch_first"),))


def _parse(name, args, kwargs):
    """Bind a call to the first of torch's overloads it fits: (packed?, {name: value})."""
    from ..._creation import _tp_name
    overloads = _overloads(name == "lstm")
    for packed, sig in zip((True, False), overloads):
        names = [n for _, n in sig]
        if len(args) > len(sig) or any(k not in names[len(args):] for k in kwargs):
            continue
        bound = dict(zip(names, args), **kwargs)
        if len(bound) == len(sig) and all(_KINDS[k](bound[n]) for k, n in sig):
            return packed, bound
    got = [_tp_name(a) for a in args] + [f"{k}={_tp_name(v)}" for k, v in kwargs.items()]
    raise TypeError(f"{name}() received an invalid combination of arguments - got "
                    f"({', '.join(got)}), but expected one of:\n" +
                    "".join(" * (" + ", ".join(f"{k} {n}" for k, n in sig) + ")\n"
                            for sig in overloads))


def _functional(mode, name, args, kwargs):
    """torch.<name>: ATen's checks of the states and weights, then ``_stack``."""
    from ..._dtype import legacy_name
    packed, a = _parse(name, args, kwargs)
    lstm = mode == "LSTM"
    x = a["data"] if packed else a["input"]
    params, has_biases, num_layers = list(a["params"]), a["has_biases"], int(a["num_layers"])
    dropout, train, bidirectional = float(a["dropout"]), a["train"], a["bidirectional"]
    if lstm:
        if len(a["hx"]) != 2:
            raise RuntimeError("lstm expects two hidden states")
        h0, c0 = a["hx"]
    else:
        h0, c0 = a["hx"], None
    nd = 2 if bidirectional else 1
    proj = lstm and h0.dim() == 3 and c0.dim() == 3 and h0.shape[2] != c0.shape[2]
    per = (4 if has_biases else 2) + (1 if proj else 0)
    if len(params) % per:
        raise RuntimeError("got an incorrect number of RNN parameters")
    for h in (h0, c0) if lstm else (h0,):
        if h.dim() != 3 or h.shape[0] != num_layers * nd:
            raise RuntimeError("Expected more hidden states in stacked_rnn")
    if len(params) // per != num_layers * nd:
        raise RuntimeError("Expected more weights in stacked_rnn")
    if packed:
        batch_sizes = a["batch_sizes"]
        if batch_sizes.dtype.name != "int64":
            raise RuntimeError(f"expected scalar type Long but found "
                               f"{legacy_name(batch_sizes.dtype)}")
        sizes = [int(n) for n in batch_sizes.reshape(-1).tolist()]
        if batch_sizes.dim() != 1 or not sizes or sizes[-1] < 1 or \
                any(b < n for b, n in zip(sizes, sizes[1:])):
            raise RuntimeError(f"{name}: batch_sizes must be a 1-D non-increasing tensor of "
                               f"positive sizes, got {sizes}")
        if x.dim() != 2 or x.shape[0] != sum(sizes):
            raise RuntimeError(f"{name}: expected packed data of shape ({sum(sizes)}, "
                               f"input_size) for batch_sizes {sizes}, got {list(x.shape)}")
        T, B = len(sizes), sizes[0]
    else:
        if x.dim() != 3:
            if x.dim() < 3:
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-max(x.dim(), 1)}, {max(x.dim(), 1) - 1}], but got 2)")
            raise RuntimeError(f"{name}: expected a 3-D input, got {x.dim()}-D")
        T, B = (x.shape[1], x.shape[0]) if a["batch_first"] else (x.shape[0], x.shape[1])
        if T == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    gates = _GATES[mode]
    H = c0.shape[2] if lstm else h0.shape[2]
    real_hidden = h0.shape[2]
    for h, size in ((h0, real_hidden), (c0, H)) if lstm else ((h0, H),):
        if packed and h.shape[1] != B:
            raise RuntimeError(f"The size of tensor a ({h.shape[1]}) must match the size of "
                               f"tensor b ({B}) at non-singleton dimension 0")
        if tuple(h.shape) != (num_layers * nd, B, size):
            raise RuntimeError(f"Expected hidden size {(num_layers * nd, B, size)}, got "
                               f"{list(h.shape)}")
    wdt = params[0].dtype
    for t in (x, h0, c0) if lstm else (x, h0):
        if t.dtype != wdt:
            raise _weight_dtype_error(t.dtype, wdt, has_biases)
    if not wdt.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{legacy_name(wdt)}")
    for k in range(num_layers * nd):
        w = params[k * per:(k + 1) * per]
        in_size = x.shape[-1] if k < nd else real_hidden * nd
        if w[0].dim() != 2 or w[0].shape[1] != in_size:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({T * B}x{in_size} "
                               f"and {'x'.join(map(str, reversed(w[0].shape)))})")
        want = [(gates * H, in_size), (gates * H, real_hidden)]
        want += [(gates * H,), (gates * H,)] if has_biases else []
        want += [(real_hidden, H)] if proj else []
        if [tuple(p.shape) for p in w] != want:
            raise RuntimeError(f"{name}: the weights of layer {k // nd}"
                               f"{' (reverse)' if k % nd else ''} have shapes "
                               f"{[list(p.shape) for p in w]}, expected {[list(s) for s in want]}")
        if any(p.dtype != wdt for p in w):
            raise RuntimeError(f"{name}: all weights must have the dtype {wdt}")
    if train and dropout != 0 and num_layers > 1 and not 0 <= dropout <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout:g}")
    if packed:
        out, hn, cn = _stack_packed(mode, x, batch_sizes, h0, c0, params, has_biases,
                                    num_layers, dropout, train, bidirectional)
    else:
        if a["batch_first"]:
            x = x.transpose(0, 1)
        out, hn, cn = _stack(mode, x, h0, c0, params, has_biases, num_layers, dropout, train,
                             bidirectional)
        if a["batch_first"]:
            out = out.transpose(0, 1)
    return (out, hn, cn) if lstm else (out, hn)


def lstm(*args, **kwargs):
    """torch.lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first) -> (output, h_n, c_n); or (data, batch_sizes, hx, params, has_biases,
    num_layers, dropout, train, bidirectional) for a packed batch. ``hx`` is (h_0, c_0);
    ``params`` per layer and direction: w_ih, w_hh[, b_ih, b_hh][, w_hr]."""
    return _functional("LSTM", "lstm", args, kwargs)


def gru(*args, **kwargs):
    """torch.gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first) -> (output, h_n); or the packed overload (data, batch_sizes, hx, ...)."""
    return _functional("GRU", "gru", args, kwargs)


def rnn_tanh(*args, **kwargs):
    """torch.rnn_tanh: torch.gru's signature, an Elman recurrence with tanh."""
    return _functional("RNN_TANH", "rnn_tanh", args, kwargs)


def rnn_relu(*args, **kwargs):
    """torch.rnn_relu: torch.gru's signature, an Elman recurrence with relu."""
    return _functional("RNN_RELU", "rnn_relu", args, kwargs)


def _apply_permutation(tensor, permutation, dim=1):
    """torch's helper: ``tensor.index_select(dim, permutation)``."""
    return tensor.index_select(dim, permutation)
