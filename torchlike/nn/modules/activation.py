"""Activation modules: thin wrappers over ``torchlike.nn.functional`` with torch's reprs."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ... import _creation, _random
from ..._registry import apply, defop
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh",
           "SiLU", "Mish", "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink",
           "LeakyReLU", "LogSigmoid", "Softplus", "Softshrink", "PReLU", "Softsign",
           "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax",
           "MultiheadAttention"]


def _ip(inplace, lead):
    return (", inplace=True" if lead else "inplace=True") if inplace else ""


class Threshold(Module):
    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}{_ip(self.inplace, True)}"


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return _ip(self.inplace, False)


class RReLU(Module):
    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return f"lower={self.lower}, upper={self.upper}{_ip(self.inplace, True)}"


class Hardtanh(Module):
    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            min_val = min_value
        if max_value is not None:
            max_val = max_value
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        assert self.max_val > self.min_val, \
            f"max_val ({self.max_val}) must be greater than min_val ({self.min_val})"

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}{_ip(self.inplace, True)}"


class ReLU6(Hardtanh):
    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _ip(self.inplace, False)


class _Simple(Module):
    _fn = None

    def forward(self, input):
        return type(self)._fn(input)


class Sigmoid(_Simple):
    _fn = staticmethod(F.sigmoid)


class Tanh(_Simple):
    _fn = staticmethod(F.tanh)


class Softsign(_Simple):
    _fn = staticmethod(F.softsign)


class Tanhshrink(_Simple):
    _fn = staticmethod(F.tanhshrink)


class LogSigmoid(_Simple):
    _fn = staticmethod(F.logsigmoid)


class _InplaceOnly(Module):
    _fn = None
    _repr = False

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, inplace=self.inplace)

    def extra_repr(self):
        return _ip(self.inplace, False) if self._repr else ""


class Hardsigmoid(_InplaceOnly):
    _fn = staticmethod(F.hardsigmoid)


class Hardswish(_InplaceOnly):
    _fn = staticmethod(F.hardswish)


class SiLU(_InplaceOnly):
    _fn = staticmethod(F.silu)
    _repr = True


class Mish(_InplaceOnly):
    _fn = staticmethod(F.mish)
    _repr = True


class SELU(_InplaceOnly):
    _fn = staticmethod(F.selu)
    _repr = True


class ELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}{_ip(self.inplace, True)}"


class CELU(ELU):
    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class GLU(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={repr(self.approximate)}"


class Hardshrink(Module):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    def forward(self, input):
        return F.softshrink(input, self.lambd)


class LeakyReLU(Module):
    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}{_ip(self.inplace, True)}"


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class PReLU(Module):
    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(_creation.empty(num_parameters, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        from .. import init as _init
        _init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class _SoftmaxBase(Module):
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        # (torch passes 5 to reach its module's call: its Module.__call__ is two frames,
        # torchlike's one)
        return type(self)._fn(input, self.dim, _stacklevel=4)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmin(_SoftmaxBase):
    _fn = staticmethod(F.softmin)


class Softmax(_SoftmaxBase):
    _fn = staticmethod(F.softmax)


class LogSoftmax(_SoftmaxBase):
    _fn = staticmethod(F.log_softmax)


class Softmax2d(Module):
    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=4)


# ------------------------------------------------------------------ attention

_HI = jax.lax.Precision.HIGHEST


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """torch.nn.functional._mha_shape_check: the ranks of query, key, value and the masks."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.dim()}-D tensor "
                                 "instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                                 f"2-D or 3-D but found {attn_mask.dim()}-D tensor instead")
    elif query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be "
                                 f"2-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 1-D but found {key_padding_mask.dim()}-D tensor "
                                 "instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor "
                                     "instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
    else:
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             f"{query.dim()}-D query tensor")


# torch's last steps name the outputs' grad_fn: ``weights.mean(dim=1)`` (MeanBackward1) or
# ``weights.view(bsz, H, L, S)`` (ViewBackward0), ``output.view(L, bsz, E)`` (ViewBackward0,
# added as a view when the weights are averaged)
@defop("multi_head_attention",
       grad_name=lambda kw: "MeanBackward1" if kw.get("average") else "ViewBackward0")
def _mha(q, k, v, *rest, H, separate, has_in_bias, has_out_bias, has_bias_kv, add_zero_attn,
         mask_kind, mask_ndim, kpm_kind, dropout_p, average, causal=False, safe=False):
    """torch's multi_head_attention_forward as one op. ``causal``: scaled_dot_product_attention's
    is_causal (top-left ``tril`` over the final keys) in place of a mask; ``safe``: the
    need_weights=False path (scaled_dot_product_attention), where a row with every key masked
    attends to nothing (output 0, no gradient) instead of NaN."""
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
    if causal:
        scores = jnp.where(jnp.tril(jnp.ones((L, S), bool)), scores, -jnp.inf)
    if safe:
        dead = jnp.all(scores == -jnp.inf, axis=-1, keepdims=True)
        attn = jnp.where(dead, 0, jax.nn.softmax(jnp.where(dead, 0, scores), axis=-1))
    else:
        attn = jax.nn.softmax(scores, axis=-1)
    if dropout_p > 0:
        keepm = jax.random.bernoulli(jax.random.wrap_key_data(key), 1 - dropout_p, attn.shape)
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

    def _torch_fast_path(self, query, key, value, attn_mask, key_padding_mask):
        """Whether torch's forward takes its fast path (torch._native_multi_head_attention).
        The values are the slow path's except for a query row whose every key is masked: the
        fast path gives NaN there even with need_weights=False, where the slow path's
        scaled_dot_product_attention gives 0."""
        from ... import backends
        from ...autograd import grad_mode
        if any(m is not None and m.is_floating_point() for m in (attn_mask, key_padding_mask)):
            return False
        if (not backends.mha.get_fastpath_enabled() or query.dim() != 3
                or not (query is key and key is value) or self.training
                or self.in_proj_weight is None or self.in_proj_bias is None
                or query.dtype != self.in_proj_weight.dtype or self.num_heads % 2 == 1
                or not self.batch_first or self.bias_k is not None or self.add_zero_attn
                or not self._qkv_same_embed_dim):
            return False
        import torchlike
        if torchlike.is_autocast_enabled():
            return False
        args = (query, self.in_proj_weight, self.in_proj_bias, self.out_proj.weight,
                self.out_proj.bias)
        if grad_mode.is_grad_enabled() and any(a is not None and a.requires_grad for a in args):
            return False
        return True

    def merge_masks(self, attn_mask, key_padding_mask, query):
        """``(mask, type)``: the key padding mask (type 1), or the attention mask expanded to
        (batch, heads, L, L) with the padding mask added when there is one (type 2), or
        ``(None, None)``; torch's helper of its fused path."""
        mask_type = None
        merged_mask = None
        if key_padding_mask is not None:
            mask_type = 1
            merged_mask = key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                attn_mask_expanded = attn_mask.view(batch_size, -1, seq_len, seq_len)
            else:
                attn_mask_expanded = attn_mask.view(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1)
            merged_mask = attn_mask_expanded
            if key_padding_mask is not None:
                key_padding_mask_expanded = key_padding_mask.view(
                    batch_size, 1, 1, seq_len).expand(-1, self.num_heads, -1, -1)
                merged_mask = attn_mask_expanded + key_padding_mask_expanded
        return merged_mask, mask_type

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False, *, _fast=None):
        import warnings
        # torch's MultiheadAttention.forward and F.multi_head_attention_forward: their checks,
        # in their order
        for m, name in ((key_padding_mask, "key_padding_mask"), (attn_mask, "attn_mask")):
            if m is not None and m.dtype.name != "bool" and not m.is_floating_point():
                raise AssertionError(f"only bool and floating types of {name} are supported")
        if key_padding_mask is not None and attn_mask is not None \
                and key_padding_mask.dtype != attn_mask.dtype and _fast is not True:
            # (torch's fused encoder layer runs without this module's forward: no warning)
            warnings.warn("Support for mismatched key_padding_mask and attn_mask is deprecated. "
                          "Use same type for both instead.", stacklevel=2)
        batched = query.dim() == 3
        # _fast: TransformerEncoderLayer says torch runs its fused layer (same semantics)
        fast = self._torch_fast_path(query, key, value, attn_mask, key_padding_mask) \
            if _fast is None else _fast
        if self.batch_first and batched:
            query, key, value = (x.transpose(0, 1) for x in (query, key, value))
        _mha_shape_check(query, key, value, key_padding_mask, attn_mask, self.num_heads)
        if fast:
            is_causal = False     # torch's fast path takes no is_causal: the mask, as given
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use "
                               "the Transformer module method `generate_square_subsequent_mask`"
                               " to create this mask.")
        causal = False
        if is_causal and key_padding_mask is None and not need_weights:
            # torch drops the mask and runs scaled_dot_product_attention(is_causal=True)
            attn_mask, causal = None, True
        E = query.shape[-1]
        if E != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but "
                                 f"got {E}")
        if not self._qkv_same_embed_dim:
            if tuple(key.shape[:-1]) != tuple(value.shape[:-1]):
                raise AssertionError(f"key's sequence and batch dims {key.shape[:-1]} do not "
                                     f"match value's {value.shape[:-1]}")
        elif tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape "
                                 f"{value.shape}")
        if not self._qkv_same_embed_dim:
            for name, x, w in (("key", key, self.k_proj_weight),
                               ("value", value, self.v_proj_weight)):
                if x.shape[-1] != w.shape[1]:
                    raise AssertionError(f"expecting {name} weights shape of "
                                         f"{(E, x.shape[-1])}, but got {w.shape}")
        elif key.shape[-1] != self.kdim or value.shape[-1] != self.vdim:
            d, w = (key, self.kdim) if key.shape[-1] != self.kdim else (value, self.vdim)
            rows = 1
            for n in tuple(d.shape)[:-1]:
                rows *= n
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x"
                               f"{d.shape[-1]} and {w}x{self.embed_dim})")
        wdt = (self.in_proj_weight if self._qkv_same_embed_dim else self.q_proj_weight).dtype
        from ...autograd import grad_mode
        for x in (query, key, value):
            # the in-projection's linear refuses another dtype than its weight's (autocast
            # casts both first)
            if x.dtype != wdt and grad_mode._state.autocast is None:
                from ..._dtype import legacy_name
                if self.in_proj_bias is not None:
                    raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                                       f"{legacy_name(x.dtype)} and {legacy_name(wdt)}")
                raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                                   f"{legacy_name(x.dtype).lower()} != "
                                   f"{legacy_name(wdt).lower()}")
        tgt_len, src_len = query.shape[0], key.shape[0]
        bsz = query.shape[1] if batched else 1
        if attn_mask is not None:
            if attn_mask.dim() == 2 and tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, src_len)}.")
            if attn_mask.dim() == 3 and batched and tuple(attn_mask.shape) != (
                    bsz * self.num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(bsz * self.num_heads, tgt_len, src_len)}.")
        if batched and key.shape[1] != bsz:
            raise RuntimeError(f"shape '[{src_len}, {bsz * self.num_heads}, {self.head_dim}]' "
                               f"is invalid for input of size {key.shape[0] * key.shape[1] * self.embed_dim}")
        if key_padding_mask is not None:
            extra = int(self.bias_k is not None) + int(bool(self.add_zero_attn))
            kshape = (1,) + tuple(key_padding_mask.shape) if not batched \
                else tuple(key_padding_mask.shape)
            if kshape[0] != bsz:
                raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                     f"{kshape[0]}")
            if kshape[1] != src_len:
                raise AssertionError(f"Expected key_padded_mask.shape[1] to be "
                                     f"{src_len + extra}, but got {kshape[1] + extra}")
        canon = [query.dtype if m.dtype.name == "bool" else m.dtype
                 for m in (attn_mask, key_padding_mask) if m is not None]
        if canon:
            # the merged float mask (a bool one takes the query's dtype) must have the query's
            # dtype: torch's baddbmm (need_weights) or scaled_dot_product_attention refuses
            # another
            import torchlike
            mdt = canon[0] if len(canon) == 1 else torchlike.promote_types(*canon)
            # (scaled_dot_product_attention, the need_weights=False path, takes a float32 mask
            # on any query; torch's fused fast path takes any float mask)
            sdpa_ok = not need_weights and mdt.name == "float32"
            if mdt != query.dtype and not fast and not sdpa_ok:
                from ..functional import _CPP_NAMES
                qn, mn = _CPP_NAMES[query.dtype.name], _CPP_NAMES[mdt.name]
                if need_weights and not fast:
                    raise RuntimeError(f"Input dtypes must be the same, got: input {mn}, "
                                       f"batch1: {qn}, batch2: {qn}")
                raise RuntimeError(f"Expected attn_mask dtype to be bool or float or to match "
                                   f"query dtype, but got attn_mask.dtype: {mn} and  "
                                   f"query.dtype: {qn} instead.")
        if not batched:
            query, key, value = (x.unsqueeze(1) for x in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
            if attn_mask is not None and attn_mask.dim() == 3:
                attn_mask = attn_mask.reshape(self.num_heads, tgt_len, src_len)
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
            args.append(_random.next_key_data())
        out, w = apply(_mha, *args, H=self.num_heads, separate=not self._qkv_same_embed_dim,
                       has_in_bias=self.in_proj_bias is not None,
                       has_out_bias=self.out_proj.bias is not None,
                       has_bias_kv=self.bias_k is not None, add_zero_attn=self.add_zero_attn,
                       mask_kind=mask_kind, mask_ndim=None if attn_mask is None
                       else attn_mask.dim(), kpm_kind=kpm_kind, dropout_p=float(p),
                       average=bool(average_attn_weights), causal=causal,
                       safe=not need_weights and not fast)
        if self.batch_first and batched:
            out = out.transpose(0, 1)
        elif batched and average_attn_weights and out.grad_fn is not None:
            out = out.view(tuple(out.shape))
        if not batched:
            out = out.squeeze(1)
            w = w.squeeze(0)
        return out, (w if need_weights else None)
