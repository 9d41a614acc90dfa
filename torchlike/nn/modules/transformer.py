"""The Transformer encoder/decoder layers (torch's slow path); MultiheadAttention is in activation."""
from __future__ import annotations

import copy
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from ... import _creation, _random
from ..._registry import apply, defop
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .container import ModuleList
from .activation import MultiheadAttention
from .dropout import Dropout
from .normalization import LayerNorm
from .linear import Linear
from .module import Module

__all__ = ["TransformerEncoderLayer", "TransformerEncoder",
           "TransformerDecoderLayer", "TransformerDecoder", "Transformer"]

# torch warns once a process when its encoder first builds a nested tensor
_NESTED_WARNED = False


def _canonical_mask(mask, name, other, other_name, dtype):
    """torch.nn.functional._canonical_mask: a bool mask as a float one (-inf where True)."""
    if mask is None:
        return None
    if mask.dtype.name != "bool" and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if other is not None and mask.dtype != other.dtype:
        import warnings
        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use same "
                      "type for both instead.", stacklevel=3)
    if mask.dtype.name == "bool":
        from ... import zeros_like
        return zeros_like(mask, dtype=dtype).masked_fill_(mask, float("-inf"))
    return mask


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

    def _torch_fast_path(self, src):
        """Whether torch's forward runs torch._transformer_encoder_layer_fwd (eval, no grad,
        batch_first, ...). Its values are the slow path's except where a query's every key is
        masked: NaN there, where the slow path's attention gives 0."""
        from ... import backends
        from ...autograd import grad_mode
        sa = self.self_attn
        if (not backends.mha.get_fastpath_enabled() or src.dim() != 3 or self.training
                or not isinstance(sa, MultiheadAttention) or not sa.batch_first
                or sa.in_proj_bias is None or not sa._qkv_same_embed_dim
                or not self.activation_relu_or_gelu or self.norm1.eps != self.norm2.eps
                or sa.num_heads % 2 == 1):
            return False
        import torchlike
        if torchlike.is_autocast_enabled():
            return False
        if any(m._forward_hooks or m._forward_pre_hooks for m in self.modules()):
            return False
        args = (src, sa.in_proj_weight, sa.in_proj_bias, sa.out_proj.weight, sa.out_proj.bias,
                self.norm1.weight, self.norm1.bias, self.norm2.weight, self.norm2.bias,
                self.linear1.weight, self.linear1.bias, self.linear2.weight,
                self.linear2.bias)
        if grad_mode.is_grad_enabled() and any(a is not None and a.requires_grad
                                               for a in args):
            return False
        return True

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        # torch turns bool masks into float (-inf) ones first
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               src_mask, "src_mask", src.dtype)
        src_mask = _canonical_mask(src_mask, "src_mask", None, "", src.dtype)
        self._fast = self._torch_fast_path(src)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal=False):
        kw = {}
        sa = self.self_attn
        if getattr(self, "_fast", False) and type(sa).forward is MultiheadAttention.forward \
                and "forward" not in vars(sa):
            # (only into MultiheadAttention's own forward: a subclass's or a patched one's
            # signature may not take _fast)
            # torch's fused layer: the mask as given (no is_causal), NaN for fully masked rows
            kw = {"_fast": True}
            is_causal = False
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal, **kw)[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        act = self.activation
        if getattr(self, "_fast", False):
            # torch's fused layer applies relu or exact gelu by activation_relu_or_gelu (so a
            # GELU(approximate='tanh') module runs as exact gelu there)
            act = F.relu if self.activation_relu_or_gelu == 1 else F.gelu
        x = self.linear2(self.dropout(act(self.linear1(x))))
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
        L, enc = encoder_layer, "encoder_layer"
        why = ""
        if not isinstance(L, TransformerEncoderLayer):
            why = f"{enc} was not TransformerEncoderLayer"
        elif L.norm_first:
            why = f"{enc}.norm_first was True"
        elif not L.self_attn.batch_first:
            why = (f"{enc}.self_attn.batch_first was not True(use batch_first for better "
                   "inference performance)")
        elif not L.self_attn._qkv_same_embed_dim:
            why = f"{enc}.self_attn._qkv_same_embed_dim was not True"
        elif L.self_attn.in_proj_bias is None:
            why = f"{enc}.self_attn was passed bias=False"
        elif not L.activation_relu_or_gelu:
            why = f"{enc}.activation_relu_or_gelu was not True"
        elif L.norm1.eps != L.norm2.eps:
            why = f"{enc}.norm1.eps was not equal to {enc}.norm2.eps"
        elif L.self_attn.num_heads % 2 == 1:
            why = f"{enc}.self_attn.num_heads is odd"
        if enable_nested_tensor and why:
            import warnings
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False "
                          f"because {why}", stacklevel=2)
            self.use_nested_tensor = False

    def _padded_fast_path(self, src, mask, src_key_padding_mask):
        """Whether torch would run its nested-tensor fast path (padded outputs become 0)."""
        from ...autograd import grad_mode
        first = self.layers[0]
        if (not getattr(self, "use_nested_tensor", False) or first.training or src.dim() != 3
                or src_key_padding_mask is None or mask is not None):
            return False
        # torch canonicalizes a float mask (-inf / 0) and keeps the positions where it is 0
        keep = np.asarray(src_key_padding_mask._data) == 0
        if self.mask_check:
            # torch._nested_tensor_from_mask_left_aligned's checks (src's first two dims, even
            # when batch_first is False)
            if keep.ndim != 2:
                raise RuntimeError("Padding mask should be 2D")
            if keep.shape != tuple(src.shape[:2]):
                raise RuntimeError("Mask size should match input size")
            if not np.all(np.sort(keep, axis=1)[:, ::-1] == keep):
                return False
        args = [src, first.self_attn.in_proj_weight, first.self_attn.in_proj_bias,
                first.self_attn.out_proj.weight, first.self_attn.out_proj.bias,
                first.norm1.weight, first.norm1.bias, first.norm2.weight, first.norm2.bias,
                first.linear1.weight, first.linear1.bias, first.linear2.weight,
                first.linear2.bias]
        if grad_mode.is_grad_enabled() and any(a is not None and a.requires_grad for a in args):
            return False
        global _NESTED_WARNED
        if not _NESTED_WARNED:
            # torch's TORCH_WARN_ONCE when it builds the nested tensor (once a process)
            _NESTED_WARNED = True
            warnings.warn(
                "The PyTorch API of nested tensors is in prototype stage and will change in the "
                "near future. We recommend specifying layout=torch.jagged when constructing a "
                "nested tensor, as this layout receives active development, has better operator "
                "coverage, and works with torch.compile. (Triggered internally at "
                "/__w/pytorch/pytorch/aten/src/ATen/NestedTensorImpl.cpp:177.)",
                UserWarning, stacklevel=3)
        return True

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        src_key_padding_mask = _canonical_mask(src_key_padding_mask, "src_key_padding_mask",
                                               mask, "mask", src.dtype)
        mask = _canonical_mask(mask, "mask", None, "", src.dtype)
        output = src
        nested = self._padded_fast_path(src, mask, src_key_padding_mask)
        layer_mask = src_key_padding_mask
        if nested:
            # torch's nested tensor holds only the positions where the mask is 0 (its
            # logical_not): a float mask of other values than -inf drops its nonzero
            # positions rather than adding them
            layer_mask = Tensor._make(src_key_padding_mask._data != 0)
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=bool(is_causal),
                         src_key_padding_mask=layer_mask)
        if nested:
            # torch runs nested tensors here and pads the result back with zeros
            # (where, not a product: a fully padded sequence is empty there, its rows 0 not NaN)
            from ... import where
            keep = Tensor._make((src_key_padding_mask._data == 0)[..., None])
            output = where(keep, output, 0.0)
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
        is_batched = src.dim() == 3
        if is_batched and src.size(0 if self.batch_first else 1) != \
                tgt.size(0 if self.batch_first else 1):
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.size(-1) != self.d_model or tgt.size(-1) != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
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
