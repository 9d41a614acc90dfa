"""The public surface, declared where each function is defined, and ``bind``: the one writer of
Tensor's methods, in-place forms and operators.

A family module declares each public function's surface at its definition::

    @public(method=True, inplace=True, out=True)
    def add(input, other, *, alpha=1): ...

``method``: ``Tensor.add`` is the function (``also`` names aliases with the same surface);
``inplace``: ``Tensor.add_`` is its in-place form (``inplace_of``, torch's checks) unless the
family declares its own ``add_``; ``out``: torch's ``out=`` wraps the function itself (``with_out``),
so ``torchlike.add`` and the family's ``add`` are one object; ``top_inplace``: ``torchlike.add_``
is ``Tensor.add_``. Methods with their own signature are declared with ``@method("view")`` or
``methods(view_as=...)``. ``bind(torchlike, Tensor)`` writes every declaration and the operator
table; a name declared twice raises, as ``defop`` does for ops.
"""
from __future__ import annotations

from .._storage import inplace_of, with_out, write_out  # noqa: F401  (re-exported for families)

__all__ = ["bind", "public", "method", "methods", "inplace_methods", "toplevel", "with_out",
           "write_out", "inplace_of", "declared"]

# (owner, attribute, object or a callable resolving it at bind, declaring module)
_DECLARED = []


def _declare(owner, name, obj, where):
    if owner == "Tensor" and getattr(obj, "_handles_out", False):
        obj = obj.__wrapped__          # as in torch, Tensor methods take no out=
    _DECLARED.append((owner, name, obj, where))


class _resolve:
    """``Tensor.<name>``, looked up when ``bind`` writes a top-level declaration."""
    def __init__(self, name):
        self.name = name


def public(fn=None, *, method=False, inplace=False, out=False, top_inplace=False, also=(),
           dtype_from_out=False, name=None):
    """Declare ``fn``'s surface at its definition (see the module docstring); returns ``fn``, or
    ``fn`` with torch's ``out=`` when ``out`` is set."""
    if fn is None:
        return lambda f: public(f, method=method, inplace=inplace, out=out,
                                top_inplace=top_inplace, also=also,
                                dtype_from_out=dtype_from_out, name=name)
    name = name or fn.__name__
    where = fn.__module__
    top = (name, *also) if top_inplace is True else tuple(top_inplace or ())
    for n in (name, *also):
        if method:
            _declare("Tensor", n, fn, where)
        if inplace:
            _declare("Tensor", n + "_", inplace_of(fn, n), where)
        if n in top:
            _declare("torch", n + "_", _resolve(n + "_"), where)
    return with_out(fn, name, dtype_from_out) if out else fn


def method(*names):
    """Decorator: ``fn`` is ``Tensor.<name>`` for each of ``names`` (a method with its own
    signature, or one torch has no function for)."""
    def deco(fn):
        for n in names:
            _declare("Tensor", n, fn, fn.__module__ if hasattr(fn, "__module__") else None)
        return fn
    return deco


def methods(**attrs):
    """Declare ``Tensor.<name> = obj`` for each pair (methods, properties, aliases)."""
    import sys
    where = sys._getframe(1).f_globals.get("__name__")
    for n, obj in attrs.items():
        _declare("Tensor", n, obj, where)


def inplace_methods(**fns):
    """Declare ``Tensor.<name>_`` as the in-place form of each function (``inplace_of``)."""
    import sys
    where = sys._getframe(1).f_globals.get("__name__")
    for n, f in fns.items():
        _declare("Tensor", n + "_", inplace_of(f, n), where)


def toplevel(*names):
    """Declare ``torchlike.<name>`` as ``Tensor.<name>`` (torch's top-level in-place forms)."""
    import sys
    where = sys._getframe(1).f_globals.get("__name__")
    for n in names:
        _declare("torch", n, _resolve(n), where)


def declared():
    """``[(owner, name, where)]`` of every declaration, in declaration order."""
    return [(o, n, w) for o, n, _obj, w in _DECLARED]


# ------------------------------------------------------------------ torch's name tables
# (transitional: names not yet declared at their definition)

# torch functions that are also Tensor methods: Tensor.<n> is torchlike.<n>
METHODS = frozenset("""
    abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr adjoint all allclose
    amax amin aminmax angle any arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax
    argmin argsort argwhere as_strided as_strided_scatter asin asinh atan atan2 atanh baddbmm
    bernoulli bincount bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift
    bitwise_xor bmm broadcast_to ceil cholesky cholesky_inverse cholesky_solve chunk clamp
    clamp_max clamp_min clip clone conj conj_physical copysign corrcoef cos cosh count_nonzero
    cov cross cummax cummin cumprod cumsum deg2rad dequantize det detach diag diag_embed
    diagflat diagonal diagonal_scatter diff digamma dist div divide dot dsplit eig eq equal erf
    erfc erfinv exp exp2 expm1 fix flatten flip fliplr flipud float_power floor floor_divide
    fmax fmin fmod frac frexp gather gcd ge geqrf ger get_device greater greater_equal gt
    hardshrink hash_tensor heaviside histc histogram hsplit hypot i0 igamma igammac imag
    index_add index_copy index_fill index_put index_reduce index_select inner int_repr inverse
    is_complex is_conj is_distributed is_floating_point is_inference is_neg is_nonzero
    is_same_size is_signed isclose isfinite isinf isnan isneginf isposinf isreal istft kron
    kthvalue lcm ldexp le lerp less less_equal lgamma log log10 log1p log2 log_softmax logaddexp
    logaddexp2 logcumsumexp logdet logical_and logical_not logical_or logical_xor logit
    logsumexp lstsq lt lu lu_solve masked_fill masked_scatter masked_select matmul matrix_exp
    matrix_power max maximum mean median min minimum mm mode moveaxis movedim msort mul
    multinomial multiply mv mvlgamma nan_to_num nanmean nanmedian nanquantile nansum narrow
    narrow_copy ne neg negative nextafter nonzero nonzero_static norm not_equal numel orgqr
    ormqr outer permute pinverse polygamma positive pow prelu prod put q_per_channel_axis
    q_per_channel_scales q_per_channel_zero_points q_scale q_zero_point qr quantile rad2deg
    ravel real reciprocal relu remainder renorm repeat_interleave reshape resolve_conj
    resolve_neg roll rot90 round rsqrt scatter scatter_add scatter_reduce select select_scatter
    sgn sigmoid sign signbit sin sinc sinh slice_inverse slice_scatter slogdet smm softmax solve
    sort split split_with_sizes sqrt square squeeze sspaddmm std stft sub subtract sum svd
    swapaxes swapdims symeig t take take_along_dim tan tanh tensor_split tile topk trace
    transpose triangular_solve tril triu true_divide trunc unbind unflatten unique
    unique_consecutive unsafe_chunk unsafe_split unsafe_split_with_sizes unsqueeze var vdot
    vsplit where xlogy
""".split())

# Tensor.<n>_ exists: the in-place form of Tensor.<n>
INPLACE = frozenset("""
    abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr arccos arccosh arcsin
    arcsinh arctan arctan2 arctanh as_strided asin asinh atan atan2 atanh baddbmm bernoulli
    bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor ceil
    clamp clamp_max clamp_min clip conj_physical copysign cos cosh cumprod cumsum deg2rad detach
    digamma div divide eq erf erfc erfinv exp exp2 expm1 fix float_power floor floor_divide fmod
    frac gcd ge greater greater_equal gt heaviside hypot i0 igamma igammac index_add index_copy
    index_fill index_put index_reduce lcm ldexp le lerp less less_equal lgamma log log10 log1p
    log2 logical_and logical_not logical_or logical_xor logit lt masked_fill masked_scatter mul
    multiply mvlgamma nan_to_num ne neg negative nextafter not_equal polygamma pow put rad2deg
    reciprocal relu remainder renorm requires_grad resize resize_as round rsqrt scatter
    scatter_add scatter_reduce sgn sigmoid sign sin sinc sinh sqrt square squeeze sub subtract
    swapaxes swapdims t tan tanh transpose tril triu true_divide trunc unsqueeze xlogy
""".split())

# torch functions that take out=
OUT_TORCH = frozenset("""
    abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr alias_copy all amax amin
    aminmax angle any arange arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin
    argsort asin asinh atan atan2 atanh baddbmm bernoulli bitwise_and bitwise_left_shift
    bitwise_not bitwise_or bitwise_right_shift bitwise_xor bmm bucketize cat ccol_indices_copy
    ceil chain_matmul cholesky cholesky_inverse cholesky_solve clamp clamp_max clamp_min clip
    col_indices_copy column_stack complex concat concatenate conj_physical copysign cos cosh
    cross crow_indices_copy cummax cummin cumprod cumsum deg2rad detach_copy diag diagonal_copy
    diff digamma div divide dot dsmm dstack empty eq erf erfc erfinv exp exp2 expm1 eye fix
    float_power floor floor_divide fmax fmin fmod frac frexp frobenius_norm gcd ge geqrf ger
    greater greater_equal gt hardshrink hash_tensor heaviside histc histogram hsmm hspmm hstack
    hypot i0 igamma igammac indices_copy inner inverse isin isneginf isposinf kron kthvalue lcm
    ldexp le lerp less less_equal lgamma linspace log log10 log1p log2 log_softmax logaddexp
    logaddexp2 logcumsumexp logical_and logical_not logical_or logical_xor logit logspace
    logsumexp lstsq lt lu_solve lu_unpack masked_select matmul matrix_power matrix_rank max
    maximum mean median min minimum mkldnn_adaptive_avg_pool2d mm mode msort mul multinomial
    multiply mv mvlgamma nan_to_num nanmean nanmedian nanquantile nansum ne neg negative
    nextafter nonzero norm normal not_equal nuclear_norm ones orgqr ormqr outer polar pow prod
    qr quantile rad2deg rand randint randn randperm range reciprocal remainder round
    row_indices_copy row_stack rsqrt saddmm scatter searchsorted select_copy sgn sigmoid sign
    signbit sin sinc sinh slice_copy slice_scatter slogdet softmax solve sort split_copy spmm
    sqrt square squeeze_copy sspaddmm stack std sub subtract sum svd symeig t_copy take
    take_along_dim tan tanh tensordot threshold topk transpose_copy triangular_solve tril triu
    true_divide trunc unbind_copy unsqueeze_copy values_copy var vdot view_as_complex_copy
    view_as_real_copy view_copy vstack where xlogy zeros
""".split())

# torch.linalg functions that take out=
OUT_LINALG = frozenset("""
    cholesky cholesky_ex cond cross det eig eigh eigvals eigvalsh householder_product inv inv_ex
    ldl_factor ldl_factor_ex ldl_solve lstsq lu lu_factor lu_factor_ex lu_solve matmul
    matrix_norm matrix_power matrix_rank multi_dot norm pinv qr slogdet solve solve_ex svd
    svdvals tensorinv tensorsolve vecdot vector_norm
""".split())

# torch.special functions that take out=
OUT_SPECIAL = frozenset("""
    airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 chebyshev_polynomial_t
    chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w digamma entr erf erfc
    erfcx erfinv exp2 expit expm1 gammainc gammaincc gammaln hermite_polynomial_h
    hermite_polynomial_he i0 i0e i1 i1e laguerre_polynomial_l legendre_polynomial_p log1p
    log_ndtr logit logsumexp modified_bessel_i0 modified_bessel_i1 modified_bessel_k0
    modified_bessel_k1 multigammaln ndtr ndtri psi round scaled_modified_bessel_k0
    scaled_modified_bessel_k1 shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u
    shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w sinc spherical_bessel_j0
    xlog1py xlogy zeta
""".split())

# torch.fft functions that take out=
OUT_FFT = frozenset("""
    fft fft2 fftfreq fftn hfft hfft2 hfftn ifft ifft2 ifftn ihfft ihfft2 ihfftn irfft irfft2
    irfftn rfft rfft2 rfftfreq rfftn
""".split())

# torch.nn.functional functions that take out=
OUT_FUNCTIONAL = frozenset("""
    avg_pool2d avg_pool3d gelu hardshrink linear logsigmoid normalize softplus softshrink
""".split())


# torch.<n>_ exists at the top level (torch.relu_, torch.sin_, ...)
TOP_INPLACE = frozenset("""
    abs acos acosh addmv alpha_dropout arccos arccosh arcsin arcsinh arctan arctanh as_strided
    asin asinh atan atanh ceil celu clamp clamp_max clamp_min clip conj_physical cos cosh
    deg2rad detach dropout embedding_renorm erf erfc exp exp2 expm1 feature_alpha_dropout
    feature_dropout fill fix floor frac gcd i0 index_put lcm ldexp log log10 log1p log2 logit
    nan_to_num neg negative rad2deg reciprocal relu resize_as resize_as_sparse round rrelu rsqrt
    selu sigmoid sin sinc sinh sqrt square tan tanh threshold trunc xlogy zero
""".split())

_OUT_DTYPE_IS_COMPUTE_DTYPE = frozenset({"cumsum", "cumprod"})   # torch computes in out's dtype


def wire_out(ns, names):
    """Give the functions ``names`` of namespace ``ns`` torch's ``out=`` (``with_out``).
    Tensor methods keep the plain functions: torch's methods take no ``out``."""
    import inspect
    for n in names:
        f = ns[n]
        try:
            if "out" not in inspect.signature(f).parameters:
                continue
        except (TypeError, ValueError):
            continue
        ns[n] = with_out(f, n, n in _OUT_DTYPE_IS_COMPUTE_DTYPE)


# ------------------------------------------------------------------ nn ops at the top level

def _nn_toplevel(F):
    """torch's top-level (and ``torch.Tensor``) forms of nn ops, as adapters onto ``F``."""
    def softmax(input, dim, dtype=None, *, out=None):
        return F.softmax(input, dim, dtype=dtype)

    def log_softmax(input, dim, dtype=None, *, out=None):
        return F.log_softmax(input, dim, dtype=dtype)

    def dropout(input, p, train):
        return F.dropout(input, p, training=train)

    def alpha_dropout(input, p, train):
        return F.alpha_dropout(input, p, training=train)

    def feature_alpha_dropout(input, p, train):
        return F.feature_alpha_dropout(input, p, training=train)

    def feature_dropout(input, p, train):
        return F.dropout2d(input, p, training=train) if input.dim() == 4 else \
            F.dropout1d(input, p, training=train) if input.dim() == 3 else \
            F.dropout3d(input, p, training=train)

    def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05,
                   cudnn_enable=True):
        return F.layer_norm(input, normalized_shape, weight, bias, eps)

    def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
        return F.group_norm(input, num_groups, weight, bias, eps)

    def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
                   cudnn_enabled):
        return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                            eps)

    def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                      eps, cudnn_enabled):
        return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                               momentum, eps)

    def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
        return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                           scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)

    def threshold(input, threshold, value, *, out=None):
        return F.threshold(input, threshold, value)

    def rms_norm(input, normalized_shape, weight=None, eps=None):
        return F.rms_norm(input, normalized_shape, weight, eps)

    def adaptive_max_pool1d(input, output_size):
        return F.adaptive_max_pool1d(input, output_size, return_indices=True)

    def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                                ceil_mode=False):
        return F.max_pool1d(input, kernel_size, stride or None, padding, dilation,
                            ceil_mode=ceil_mode, return_indices=True)

    def _pool(fname):
        def pool(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
            return getattr(F, fname)(input, kernel_size, stride or None, padding, dilation,
                                     ceil_mode=ceil_mode)
        pool.__name__ = fname
        return pool

    def _avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False,
                    count_include_pad=True):
        return F.avg_pool1d(input, kernel_size, stride or None, padding, ceil_mode,
                            count_include_pad)

    def _same(name):
        return getattr(F, name, None)

    def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                    groups):
        n = weight.dim() - 2
        if n not in (1, 2, 3):
            raise RuntimeError(f"Expected 3D, 4D or 5D weight for convolution, got {weight.dim()}D")
        if transposed:
            return getattr(F, f"conv_transpose{n}d")(input, weight, bias, stride, padding,
                                                     output_padding, groups, dilation)
        return getattr(F, f"conv{n}d")(input, weight, bias, stride, padding, dilation, groups)

    # torch's top-level losses take the reduction as an enum (0 none, 1 mean, 2 sum), default 0
    red = {0: "none", 1: "mean", 2: "sum"}

    def _r(r):
        if r not in red:
            raise RuntimeError(f"{r} is not a valid value for reduction")
        return red[r]

    def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
        return F.cosine_embedding_loss(input1, input2, target, margin, reduction=_r(reduction))

    def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
        return F.hinge_embedding_loss(input, target, margin, reduction=_r(reduction))

    def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
        return F.margin_ranking_loss(input1, input2, target, margin, reduction=_r(reduction))

    def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-06, swap=False,
                            reduction=0):
        return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                     reduction=_r(reduction))

    def kl_div(input, target, reduction=0, *, log_target=False):
        return F.kl_div(input, target, reduction=_r(reduction), log_target=log_target)

    def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                         reduction=0):
        return F.binary_cross_entropy_with_logits(input, target, weight, reduction=_r(reduction),
                                                  pos_weight=pos_weight)

    def poisson_nll_loss(input, target, log_input, full, eps, reduction):
        return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                                  reduction=_r(reduction))

    def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
                 zero_infinity=False):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                          reduction=_r(reduction), zero_infinity=zero_infinity)

    table = dict(softmax=softmax, log_softmax=log_softmax, dropout=dropout,
                 alpha_dropout=alpha_dropout, feature_alpha_dropout=feature_alpha_dropout,
                 feature_dropout=feature_dropout, layer_norm=layer_norm, group_norm=group_norm,
                 batch_norm=batch_norm, instance_norm=instance_norm, embedding=embedding,
                 threshold=threshold, rms_norm=rms_norm, adaptive_max_pool1d=adaptive_max_pool1d,
                 max_pool1d_with_indices=max_pool1d_with_indices,
                 max_pool1d=_pool("max_pool1d"), max_pool2d=_pool("max_pool2d"),
                 max_pool3d=_pool("max_pool3d"), avg_pool1d=_avg_pool1d,
                 cosine_embedding_loss=cosine_embedding_loss,
                 hinge_embedding_loss=hinge_embedding_loss,
                 margin_ranking_loss=margin_ranking_loss,
                 triplet_margin_loss=triplet_margin_loss, kl_div=kl_div,
                 binary_cross_entropy_with_logits=binary_cross_entropy_with_logits,
                 poisson_nll_loss=poisson_nll_loss, ctc_loss=ctc_loss, convolution=convolution)
    # the same signature at the top level as in nn.functional
    for n in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "adaptive_avg_pool1d", "bilinear", "celu", "selu", "prelu",
              "rrelu", "hardshrink", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
              "pairwise_distance", "cosine_similarity", "pdist", "native_channel_shuffle"):
        f = _same(n)
        if f is not None:
            table[n] = f
    if getattr(F, "rms_norm", None) is None:
        del table["rms_norm"]
    return table


# methods torch has for nn ops (``x.softmax(dim)``); in-place forms for the activations
_NN_METHODS = ("softmax", "log_softmax", "prelu", "hardshrink", "relu", "selu", "celu",
               "rrelu", "threshold", "sigmoid", "tanh")


# Python operators that torch defines on Tensor: dunder -> (Tensor method, reflected)
# Python's operators: dunder -> (name, how). "method": Tensor.<name> itself; "reflected":
# ``ns.<name>(other, self)``; "function": ``ns.<name>(self, other)`` (a function Tensor has no
# method for). Operators with their own code (``__rtruediv__``, ``__pos__``) are in DUNDER_FNS.
DUNDERS = {
    **{f"__{d}__": (m, "method") for d, m in (
        ("add", "add"), ("radd", "add"), ("sub", "sub"), ("mul", "mul"), ("rmul", "mul"),
        ("truediv", "div"), ("floordiv", "floor_divide"), ("mod", "remainder"), ("pow", "pow"),
        ("neg", "neg"), ("abs", "abs"), ("invert", "bitwise_not"),
        ("eq", "eq"), ("ne", "ne"), ("lt", "lt"), ("le", "le"), ("gt", "gt"), ("ge", "ge"),
        ("and", "bitwise_and"), ("rand", "bitwise_and"), ("or", "bitwise_or"),
        ("ror", "bitwise_or"), ("xor", "bitwise_xor"), ("rxor", "bitwise_xor"),
        ("lshift", "bitwise_left_shift"), ("rshift", "bitwise_right_shift"),
        ("iadd", "add_"), ("isub", "sub_"), ("imul", "mul_"), ("itruediv", "div_"),
        ("ipow", "pow_"), ("ilshift", "bitwise_left_shift_"),
        ("irshift", "bitwise_right_shift_"), ("iand", "bitwise_and_"), ("ior", "bitwise_or_"),
        ("ixor", "bitwise_xor_"), ("ifloordiv", "floor_divide_"), ("imod", "remainder_"),
        ("imatmul", "matmul_"), ("matmul", "matmul"))},
    **{f"__r{d}__": (m, "reflected") for d, m in (
        ("floordiv", "floor_divide"), ("mod", "remainder"), ("pow", "pow"),
        ("lshift", "bitwise_left_shift"), ("rshift", "bitwise_right_shift"))},
    "__rsub__": ("rsub", "function"),
}


def _rtruediv(self, other):
    # torch: other / self == self.reciprocal() * other (grad_fn MulBackward0)
    return self.reciprocal() * other


DUNDER_FNS = {"__rtruediv__": _rtruediv, "__pos__": lambda self: self}


def _has(cls, n):
    return getattr(cls, n, None) is not None


def _write_declared(ns, Tensor):
    """Write every declaration; a name declared twice (or already in Tensor's class body)
    raises."""
    owners = {"Tensor": Tensor, "torch": ns}
    seen = {}
    # Tensor's attributes first: a top-level in-place form is resolved from Tensor.<n>_
    for owner, n, obj, where in sorted(_DECLARED, key=lambda d: d[0] != "Tensor"):
        o = owners[owner]
        if (owner, n) in seen or (owner == "Tensor" and n in Tensor.__dict__):
            first = seen.get((owner, n), "the Tensor class (or a direct assignment)")
            raise RuntimeError(f"{owner}.{n} is declared twice: in {first} and in {where}")
        seen[owner, n] = where
        if isinstance(obj, _resolve):
            obj = getattr(Tensor, obj.name)
        setattr(o, n, obj)


def bind(ns, Tensor):
    """Attach the surface: declarations, nn ops at the top level, methods, in-place forms,
    ``out=``."""
    _write_declared(ns, Tensor)
    F = ns.nn.functional
    for n, f in _nn_toplevel(F).items():
        if not _has(ns, n):
            setattr(ns, n, f)
    # methods: Tensor.<n> is the function, unless a family gave Tensor its own
    for n in sorted(METHODS | set(_NN_METHODS)):
        f = ns.__dict__.get(n)
        if f is not None and callable(f) and not _has(Tensor, n):
            setattr(Tensor, n, getattr(f, "__wrapped__", f) if getattr(f, "_handles_out", False)
                    else f)
    # in-place forms of methods
    for n in sorted(INPLACE):
        if not _has(Tensor, n + "_") and _has(Tensor, n):
            setattr(Tensor, n + "_", inplace_of(getattr(Tensor, n), n))
    # top-level in-place forms torch has (torch.relu_, torch.sin_, ...)
    for n in sorted(TOP_INPLACE):
        if not _has(ns, n + "_") and _has(Tensor, n + "_"):
            setattr(ns, n + "_", getattr(Tensor, n + "_"))
    for d, (m, how) in DUNDERS.items():
        if d in Tensor.__dict__:
            continue
        if how == "method" and _has(Tensor, m):
            setattr(Tensor, d, getattr(Tensor, m))
        elif how == "reflected" and _has(ns, m):
            setattr(Tensor, d, (lambda f: lambda self, other: f(other, self))(getattr(ns, m)))
        elif how == "function" and _has(ns, m):
            setattr(Tensor, d, getattr(ns, m))
    for d, f in DUNDER_FNS.items():
        if d not in Tensor.__dict__:
            setattr(Tensor, d, f)
    # out=: after the methods, which (as in torch) take no out
    for table, mod in ((OUT_TORCH, ns), (OUT_LINALG, ns.linalg), (OUT_FUNCTIONAL, F)):
        for n in table:
            f = mod.__dict__.get(n)
            if f is not None and callable(f) and not isinstance(f, type):
                setattr(mod, n, with_out(f, n, n in _OUT_DTYPE_IS_COMPUTE_DTYPE))
