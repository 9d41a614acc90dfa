"""MultiheadAttention and the Transformer encoder/decoder layers (torch's slow path)."""
from __future__ import annotations

import copy

import jax
import jax.numpy as jnp
import numpy as np

from ... import _creation, _random
from ..._ops._registry import apply, defop
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .container import ModuleList
from .layers import Dropout, LayerNorm
from .linear import Linear
from .module import Module

__all__ = ["MultiheadAttention", "TransformerEncoderLayer", "TransformerEncoder",
           "TransformerDecoderLayer", "TransformerDecoder", "Transformer"]


_HI = jax.lax.Precision.HIGHEST


class NonDynamicallyQuantizableLinear(Linear):
    pass


@defop("multi_head_attention", grad_name="TransposeBackward0")
def _mha(q, k, v, *rest, H, separate, has_in_bias, has_out_bias, has_bias_kv, add_zero_attn,
         mask_kind, mask_ndim, kpm_kind, dropout_p, average):
    L, N, E = q.shape
    i = 0

    def take():
        nonlocal i
        r = rest[i]
        i += 1
        return r

    if separate:
        wq, wk, wv = take(), take(), take()
    else:
        w = take()
        wq, wk, wv = w[:E], w[E:2 * E], w[2 * E:]
    if has_in_bias:
        b = take()
        bq, bk, bv = b[:E], b[E:2 * E], b[2 * E:]
    else:
        bq = bk = bv = None
    out_w = take()
    out_b = take() if has_out_bias else None
    if has_bias_kv:
        bias_k, bias_v = take(), take()
    mask = take() if mask_kind else None
    kpm = take() if kpm_kind else None
    key = take() if dropout_p > 0 else None

    def proj(x, w, b):
        y = jnp.matmul(x, w.T, precision=_HI)
        return y + b if b is not None else y

    qp, kp, vp = proj(q, wq, bq), proj(k, wk, bk), proj(v, wv, bv)
    if mask is not None:
        mask = jnp.where(mask, -jnp.inf, 0.0).astype(q.dtype) if mask_kind == "bool" \
            else mask.astype(q.dtype)
    if kpm is not None:
        kpm = jnp.where(kpm, -jnp.inf, 0.0).astype(q.dtype) if kpm_kind == "bool" \
            else kpm.astype(q.dtype)
    if has_bias_kv:
        kp = jnp.concatenate([kp, jnp.broadcast_to(bias_k, (1, N, E))], axis=0)
        vp = jnp.concatenate([vp, jnp.broadcast_to(bias_v, (1, N, E))], axis=0)
        if mask is not None:
            mask = jnp.pad(mask, [(0, 0)] * (mask.ndim - 1) + [(0, 1)])
        if kpm is not None:
            kpm = jnp.pad(kpm, [(0, 0), (0, 1)])
    if add_zero_attn:
        kp = jnp.concatenate([kp, jnp.zeros((1, N, E), kp.dtype)], axis=0)
        vp = jnp.concatenate([vp, jnp.zeros((1, N, E), vp.dtype)], axis=0)
        if mask is not None:
            mask = jnp.pad(mask, [(0, 0)] * (mask.ndim - 1) + [(0, 1)])
        if kpm is not None:
            kpm = jnp.pad(kpm, [(0, 0), (0, 1)])
    S = kp.shape[0]
    hd = E // H
    # (L, N, E) -> (N, H, L, hd)
    qh = jnp.transpose(qp.reshape(L, N, H, hd), (1, 2, 0, 3))
    kh = jnp.transpose(kp.reshape(S, N, H, hd), (1, 2, 0, 3))
    vh = jnp.transpose(vp.reshape(S, N, H, hd), (1, 2, 0, 3))
    scores = jnp.matmul(qh * (1.0 / jnp.sqrt(jnp.asarray(hd, q.dtype))),
                        jnp.swapaxes(kh, -1, -2), precision=_HI)
    if mask is not None:
        if mask.ndim == 3:
            mask = mask.reshape(N, H, L, S)
        scores = scores + mask
    if kpm is not None:
        scores = scores + kpm[:, None, None, :]
    attn = jax.nn.softmax(scores, axis=-1)
    if dropout_p > 0:
        keepm = jax.random.bernoulli(key, 1 - dropout_p, attn.shape)
        attn = jnp.where(keepm, attn / (1 - dropout_p), 0)
    o = jnp.matmul(attn, vh, precision=_HI)                   # (N, H, L, hd)
    o = jnp.transpose(o, (2, 0, 1, 3)).reshape(L, N, E)
    o = jnp.matmul(o, out_w.T, precision=_HI)
    if out_b is not None:
        o = o + out_b
    weights = jnp.mean(attn, axis=1) if average else attn
    return o, weights


class MultiheadAttention(Module):
    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got "
                             f"embed_dim={embed_dim} and num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        assert self.head_dim * num_heads == self.embed_dim, \
            "embed_dim must be divisible by num_heads"
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_creation.empty(embed_dim, embed_dim, dtype=dtype))
            self.k_proj_weight = Parameter(_creation.empty(embed_dim, self.kdim, dtype=dtype))
            self.v_proj_weight = Parameter(_creation.empty(embed_dim, self.vdim, dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_creation.empty(3 * embed_dim, embed_dim,
                                                            dtype=dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_creation.empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias,
                                                        dtype=dtype)
        if add_bias_kv:
            self.bias_k = Parameter(_creation.empty(1, 1, embed_dim, dtype=dtype))
            self.bias_v = Parameter(_creation.empty(1, 1, embed_dim, dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use "
                               "the Transformer module method `generate_square_subsequent_mask`"
                               " to create this mask.")
        batched = query.dim() == 3
        if self.batch_first and batched:
            query, key, value = (x.transpose(0, 1) for x in (query, key, value))
        if not batched:
            query, key, value = (x.unsqueeze(1) for x in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        args = [query, key, value]
        if self._qkv_same_embed_dim:
            args.append(self.in_proj_weight)
        else:
            args += [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        if self.in_proj_bias is not None:
            args.append(self.in_proj_bias)
        args.append(self.out_proj.weight)
        if self.out_proj.bias is not None:
            args.append(self.out_proj.bias)
        if self.bias_k is not None:
            args += [self.bias_k, self.bias_v]
        mask_kind = kpm_kind = None
        if attn_mask is not None:
            mask_kind = "bool" if attn_mask.dtype.name == "bool" else "float"
            args.append(attn_mask)
        if key_padding_mask is not None:
            kpm_kind = "bool" if key_padding_mask.dtype.name == "bool" else "float"
            args.append(key_padding_mask)
        p = self.dropout if self.training else 0.0
        if p > 0:
            args.append(_random.next_key())
        out, w = apply(_mha, *args, H=self.num_heads, separate=not self._qkv_same_embed_dim,
                       has_in_bias=self.in_proj_bias is not None,
                       has_out_bias=self.out_proj.bias is not None,
                       has_bias_kv=self.bias_k is not None, add_zero_attn=self.add_zero_attn,
                       mask_kind=mask_kind, mask_ndim=None if attn_mask is None
                       else attn_mask.dim(), kpm_kind=kpm_kind, dropout_p=float(p),
                       average=bool(average_attn_weights))
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(1)
            w = w.squeeze(0)
        return out, (w if need_weights else None)


def _get_activation_fn(activation):
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class TransformerEncoderLayer(Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        from .activation import GELU, ReLU
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerDecoderLayer(Module):
    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                            batch_first=batch_first, bias=bias, dtype=dtype)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout,
                                                 batch_first=batch_first, bias=bias,
                                                 dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        self.activation = activation

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                   tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask,
                                              tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask,
                                               memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           is_causal=is_causal, need_weights=False)[0]
        return self.dropout1(x)

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal=False):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask,
                                key_padding_mask=key_padding_mask, is_causal=is_causal,
                                need_weights=False)[0]
        return self.dropout2(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout3(x)


def _get_clones(module, N):
    return ModuleList([copy.deepcopy(module) for _ in range(N)])


class TransformerEncoder(Module):
    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _get_clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        L = encoder_layer
        why = ""
        if not isinstance(L, TransformerEncoderLayer):
            why = "not TransformerEncoderLayer"
        elif (L.norm_first or not L.self_attn.batch_first or not L.self_attn._qkv_same_embed_dim
              or L.self_attn.in_proj_bias is None or not L.activation_relu_or_gelu
              or L.norm1.eps != L.norm2.eps or L.self_attn.num_heads % 2 == 1):
            why = "layer configuration"
        if enable_nested_tensor and why:
            self.use_nested_tensor = False

    def _padded_fast_path(self, src, mask, src_key_padding_mask):
        """Whether torch would run its nested-tensor fast path (padded outputs become 0)."""
        from ...autograd import grad_mode
        first = self.layers[0]
        if (not getattr(self, "use_nested_tensor", False) or first.training or src.dim() != 3
                or src_key_padding_mask is None or mask is not None
                or src_key_padding_mask.dtype.name != "bool"):
            return False
        keep = ~np.asarray(src_key_padding_mask._data)
        if self.mask_check and not np.all(np.sort(keep, axis=1)[:, ::-1] == keep):
            return False
        args = [src, first.self_attn.in_proj_weight, first.self_attn.in_proj_bias,
                first.self_attn.out_proj.weight, first.self_attn.out_proj.bias,
                first.norm1.weight, first.norm1.bias, first.norm2.weight, first.norm2.bias,
                first.linear1.weight, first.linear1.bias, first.linear2.weight,
                first.linear2.bias]
        if grad_mode.is_grad_enabled() and any(a is not None and a.requires_grad for a in args):
            return False
        return True

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        output = src
        nested = self._padded_fast_path(src, mask, src_key_padding_mask)
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=bool(is_causal),
                         src_key_padding_mask=src_key_padding_mask)
        if nested:
            # torch runs nested tensors here and pads the result back with zeros
            keep = Tensor._make(~src_key_padding_mask._data[..., None])
            output = output * keep
        if self.norm is not None:
            output = self.norm(output)
        return output


class TransformerDecoder(Module):
    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _get_clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        output = tgt
        for mod in self.layers:
            output = mod(output, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                         tgt_key_padding_mask=tgt_key_padding_mask,
                         memory_key_padding_mask=memory_key_padding_mask,
                         tgt_is_causal=bool(tgt_is_causal), memory_is_causal=memory_is_causal)
        if self.norm is not None:
            output = self.norm(output)
        return output


class Transformer(Module):
    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False, norm_first=False,
                 bias=True, device=None, dtype=None):
        super().__init__()
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout,
                                            activation, layer_norm_eps, batch_first,
                                            norm_first, bias, dtype=dtype)
            self.encoder = TransformerEncoder(layer, num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias,
                                                        dtype=dtype))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout,
                                            activation, layer_norm_eps, batch_first,
                                            norm_first, bias, dtype=dtype)
            self.decoder = TransformerDecoder(layer, num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias,
                                                        dtype=dtype))
        self._reset_parameters()
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        import numpy as np
        from ..._tensor import Tensor
        m = np.triu(np.full((sz, sz), -np.inf, dtype=np.float32), 1)
        return Tensor._make(jnp.asarray(m, dtype=jnp.float32 if dtype is None else dtype.np))

    def _reset_parameters(self):
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)
