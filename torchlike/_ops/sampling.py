"""Random sampling: normal, bernoulli, multinomial, poisson, binomial and the in-place fills
``uniform_``, ``normal_``, ``bernoulli_``, ``exponential_``, ``random_``, ``geometric_``,
``log_normal_``, ``cauchy_``.

Every sampler is one op whose inputs include the key data drawn from a Generator (or the default
one), so a seed reproduces the same values within torchlike; streams are not torch's (see
DIFFERENCES.md). Samples carry no gradient: like torch, an output that depends on tensors that
require grad requires grad itself, with zero gradients flowing back.
"""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .. import _device, _fused, _random
from .._creation import checks_generator, parser_error
from .._meta import MetaArray, is_meta, meta_write
from .._tensor import Tensor
from .._registry import apply, defop
from ._surface import method, methods, public
from .._storage import check_inplace, commit_inplace
from .special_ops import no_derivative

__all__ = ["normal", "bernoulli", "multinomial", "poisson", "binomial"]


def _key(generator):
    return _random.next_key_data(generator)


def _k(kd):
    return jax.random.wrap_key_data(kd)


def _tname(dt):
    return D.legacy_name(dt)


_P_IN_MSG = ("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error "
             "message be improved?  If so, please report an enhancement request to PyTorch.)")


# ------------------------------------------------------------------ in-place fills

@defop("random_fill", saves=False, grad_name=lambda kw: kw["name"])
def _fill(a, kd, p0, p1, kind, name, bounds=None):
    """Samples shaped like ``a`` (its values only matter for the gradient, which is zero)."""
    key = _k(kd)
    shp, dt = a.shape, a.dtype
    if jnp.issubdtype(dt, jnp.complexfloating):
        # torch fills view_as_real(self): each part drawn alone (a normal's std over sqrt(2))
        part = jnp.float64 if dt == jnp.complex128 else jnp.float32
        if kind == "uniform":
            r = jax.random.uniform(key, shp + (2,), part, p0, p1)
        else:
            r = jax.random.normal(key, shp + (2,), part) * (p1 / np.sqrt(2.0)) + p0
        return jax.lax.complex(r[..., 0], r[..., 1]).astype(dt)
    if kind == "uniform":
        ft = dt if dt != jnp.float16 and dt != jnp.bfloat16 else jnp.float32
        out = jax.random.uniform(key, shp, ft, p0, p1).astype(dt)
    elif kind == "normal":
        out = (jax.random.normal(key, shp, jnp.float64 if dt == jnp.float64 else jnp.float32)
               * p1 + p0).astype(dt)
    elif kind == "log_normal":
        out = jnp.exp(jax.random.normal(key, shp, jnp.float64 if dt == jnp.float64 else
                                        jnp.float32) * p1 + p0).astype(dt)
    elif kind == "exponential":
        out = (jax.random.exponential(key, shp, jnp.float64 if dt == jnp.float64 else
                                      jnp.float32) / p0).astype(dt)
    elif kind == "cauchy":
        out = (jax.random.cauchy(key, shp, jnp.float64 if dt == jnp.float64 else jnp.float32)
               * p1 + p0).astype(dt)
    elif kind == "geometric":
        u = jax.random.uniform(key, shp, jnp.float64, minval=jnp.finfo(jnp.float64).tiny)
        out = jnp.ceil(jnp.log(u) / jnp.log1p(-p0)).astype(dt)
    elif kind == "bernoulli":
        p = jnp.broadcast_to(jnp.asarray(p0), shp)
        out = (jax.random.uniform(key, shp, jnp.float64) < p).astype(dt)
    elif kind == "random":
        lo, hi = bounds
        if hi <= 2 ** 63 - 1:
            out = jax.random.randint(key, shp, lo, hi, dtype=jnp.int64).astype(dt)
        else:
            out = (jax.random.bits(key, shp, jnp.uint64) >> 1).astype(jnp.int64).astype(dt)
    else:
        raise ValueError(kind)
    return out


def _inplace_fill(self, kind, p0, p1, generator, name, bounds=None):
    check_inplace(self)
    if self.dtype in D.BAREBONES:
        # (random_ of an unsigned dtype past uint8, which torch draws and jax's programs do
        # not take: drawn as int64, then cast)
        like = Tensor._make(jnp.zeros(tuple(self.shape), jnp.int64))
        out = apply(_fill, like, _key(generator), p0, p1, kind=kind, name=name, bounds=bounds)
        return commit_inplace(self, out.to(self.dtype))
    out = apply(_fill, self, _key(generator), p0, p1, kind=kind, name=name, bounds=bounds)
    return commit_inplace(self, out)


def _meta_fill(self, kind, generator, *params):
    """An in-place fill of a meta tensor: the checks of torch's meta kernel (its order and
    words: fewer than the CPU kernel's), then nothing drawn (the generator does not advance)."""
    dt = self.dtype
    if generator is not None and kind in ("exponential", "cauchy", "log_normal", "geometric"):
        # (torch's meta forms of these are its Python references, which take no generator)
        raise AssertionError("generator is not supported in refs")
    if kind == "normal":
        if not params[1] >= 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {float(params[1])}")
        if not (dt.is_floating_point or dt.is_complex):
            raise RuntimeError(f"expected a floating-point or complex dtype, but got dtype={dt}")
    elif kind in ("exponential", "cauchy", "log_normal"):
        if not dt.is_floating_point:
            raise RuntimeError(f"log_normal not implemented for {dt}" if kind == "log_normal"
                               else f"{kind.capitalize()} distribution is a continuous "
                               f"probability distribution.         dtype must be a floating "
                               f"point but you specified {dt}")
        what = {"exponential": "lambda", "cauchy": "sigma", "log_normal": "std"}[kind]
        v = params[-1]
        if not v > 0:
            raise RuntimeError(f"{kind}_ expects {what} > 0.0, but found {what}={float(v)}")
    elif kind == "geometric":
        if dt.is_complex or dt is D.bool:
            raise RuntimeError(f"geometric not implemented for {dt}")
        if not 0 < params[0] < 1:
            raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got "
                               f"p={float(params[0])}")
    check_inplace(self)
    return meta_write(self)


def _need_float(self, kernel):
    if not self.dtype.is_floating_point or self.dtype in D.FLOAT8:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_tname(self.dtype)}'")


def _need_float_or_complex(self, kernel):
    if not (self.dtype.is_floating_point or self.dtype.is_complex) or self.dtype in D.FLOAT8:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_tname(self.dtype)}'")


def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kw):
    from_ = kw.pop("from", from_)
    if is_meta(self):
        return _meta_fill(self, "uniform", generator)
    _need_float_or_complex(self, "check_uniform_bounds")
    from_, to = float(from_), float(to)
    # torch's check_uniform_bounds, in the dtype of the values drawn (a complex tensor's parts)
    name = {"complex64": "float32", "complex128": "float64"}.get(self.dtype.name,
                                                                 self.dtype.name)
    fi = np.finfo(D.to_dtype(getattr(D, name)).np)
    lo, hi = float(fi.min), float(fi.max)
    if not lo <= from_ <= hi:
        raise RuntimeError(f"from is out of bounds for {_C_NAMES[name]}")
    if not lo <= to <= hi:
        raise RuntimeError(f"to is out of bounds for {_C_NAMES[name]}")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_:g} > to={to:g}")
    if not to - from_ <= hi:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                           f"{_tname(getattr(D, name))}>::max(), but found to={to:g} and "
                           f"from={from_:g} which result in to-from to exceed the limit")
    return _inplace_fill(self, "uniform", float(from_), float(to), generator, "UniformBackward0")


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    if is_meta(self):
        return _meta_fill(self, "normal", generator, mean, std)
    _need_float_or_complex(self, "normal_kernel_cpu")
    if not std >= 0:                    # (a NaN std too)
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    return _inplace_fill(self, "normal", float(mean), float(std), generator, "NormalBackward0")


def _continuous(self, what, cpp=False):
    """exponential_'s and cauchy_'s refusal of a non-float dtype (after their argument checks)."""
    if not self.dtype.is_floating_point:
        from .products import _cpp
        name = (_UNSIGNED_CPP.get(self.dtype.name) or _cpp(self.dtype)) if cpp else \
            _tname(self.dtype)
        raise RuntimeError(f"{what} distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified {name}")
    if self.dtype in D.FLOAT8:
        raise NotImplementedError(f"\"{what.lower()}_cpu\" not implemented for "
                                  f"'{_tname(self.dtype)}'")


_UNSIGNED_CPP = {"uint16": "short unsigned int", "uint32": "unsigned int",
                 "uint64": "long unsigned int"}


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    if is_meta(self):
        return _meta_fill(self, "log_normal", generator, mean, std)
    _need_float(self, "log_normal_cpu")
    if not std > 0:                     # (a NaN std too)
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    return _inplace_fill(self, "log_normal", float(mean), float(std), generator,
                         "LogNormalBackward0")


def exponential_(self, lambd=1.0, *, generator=None):
    if is_meta(self):
        return _meta_fill(self, "exponential", generator, lambd)
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    _continuous(self, "Exponential")
    return _inplace_fill(self, "exponential", float(lambd), 0.0, generator,
                         "ExponentialBackward0")


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    if is_meta(self):
        return _meta_fill(self, "cauchy", generator, median, sigma)
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    _continuous(self, "Cauchy", cpp=True)
    return _inplace_fill(self, "cauchy", float(median), float(sigma), generator,
                         "CauchyBackward0")


def geometric_(self, p, *, generator=None):
    if is_meta(self):
        return _meta_fill(self, "geometric", generator, p)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    dt = self.dtype
    if dt.is_complex or dt is D.bool or dt in D.FLOAT8 or dt in D.BAREBONES:
        raise NotImplementedError(f"\"geometric_cpu\" not implemented for '{_tname(dt)}'")
    return _inplace_fill(self, "geometric", float(p), 0.0, generator, "GeometricBackward0")


def bernoulli_(self, p=0.5, *, generator=None):
    if is_meta(self):               # (torch's meta kernel checks neither p nor the dtype)
        return _meta_fill(self, "bernoulli", generator)
    if isinstance(p, Tensor):
        # torch's kernel dispatches on self (any real dtype), then on p (floating only)
        if self.dtype.is_complex or self.dtype in D.FLOAT8 or self.dtype in D.BAREBONES:
            raise NotImplementedError(f"\"bernoulli_tensor_cpu_self_\" not implemented for "
                                      f"'{_tname(self.dtype)}'")
        _need_float(p, "bernoulli_tensor_cpu_p_")
        p = p.detach().expand(self.shape)        # (torch's expand error for a bad shape)
        pv = np.asarray(p._data)
        if ((pv < 0) | (pv > 1)).any():
            raise RuntimeError(_P_IN_MSG)
        check_inplace(self)
        pp = jnp.asarray(p._data).astype(jnp.float64)
        out = apply(_fill, self, _key(generator), pp, 0.0, kind="bernoulli",
                    name="BernoulliBackward1")
        return commit_inplace(self, out)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    if self.dtype.is_complex or self.dtype in D.FLOAT8 or self.dtype in D.BAREBONES:
        raise NotImplementedError(f"\"bernoulli_scalar_cpu_\" not implemented for "
                                  f"'{_tname(self.dtype)}'")
    return _inplace_fill(self, "bernoulli", float(p), 0.0, generator, "BernoulliBackward1")


_RANDOM_TO = {"float16": 2 ** 11, "bfloat16": 2 ** 8, "float32": 2 ** 24, "float64": 2 ** 53,
              "int64": 2 ** 63 - 1, "int32": 2 ** 31 - 1, "int16": 2 ** 15 - 1,
              "int8": 2 ** 7 - 1, "uint8": 2 ** 8 - 1, "bool": 1, "uint16": 2 ** 16 - 1,
              "uint32": 2 ** 32 - 1, "uint64": 2 ** 64 - 1}
_TYPE_LIMITS = {"int64": (-2 ** 63, 2 ** 63 - 1), "int32": (-2 ** 31, 2 ** 31 - 1),
                "int16": (-2 ** 15, 2 ** 15 - 1), "int8": (-128, 127), "uint8": (0, 255),
                "bool": (0, 1), "uint16": (0, 2 ** 16 - 1), "uint32": (0, 2 ** 32 - 1),
                "uint64": (0, 2 ** 63 - 1)}     # (torch checks uint64 bounds as int64's)
_C_NAMES = {"int64": "long", "int32": "int", "int16": "short", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool", "float32": "float", "float64": "double",
            "float16": "c10::Half", "bfloat16": "c10::BFloat16", "uint16": "short unsigned int",
            "uint32": "unsigned int", "uint64": "long unsigned int"}
# the float types' mantissa digits (std::numeric_limits<T>::digits)
_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}
_RANDOM_OVERLOADS = (" * (*, torch.Generator generator = None)\n{}"
                     " * (int from, int to, *, torch.Generator generator = None)\n"
                     " * (int to, *, torch.Generator generator = None)\n")
_NO_ARG = object()


def _is_float_arg(v):
    """An argument torch's parser reads as ``float``: a real Python number, a numpy number (a
    complex one: its real part)."""
    return isinstance(v, (int, float, np.number, np.bool_))


def _multinomial_args(method):
    """Decorator: multinomial's argument parse, as torch's (``num_samples`` an int,
    ``replacement`` a bool, each error naming the argument's position when positional);
    ``method``: Tensor.multinomial, whose positions do not count self."""
    def deco(fn):
        @functools.wraps(fn)
        def parsed(*args, **kwargs):
            from .._creation import _tp_name
            from .._creation import _no_index
            for i, (name, ok, want) in enumerate((
                    ("num_samples", _is_int_arg, "int"),
                    ("replacement", lambda v: isinstance(v, bool), "bool"))):
                if len(args) > i + 1:
                    v, where = args[i + 1], f" (position {i + 1 if method else i + 2})"
                elif name in kwargs:
                    v, where = kwargs[name], ""
                else:
                    continue
                _no_index(v)
                if not ok(v):
                    raise TypeError(f"multinomial(): argument '{name}'{where} must be {want}, "
                                    f"not {_tp_name(v)}")
            return fn(*args, **kwargs)
        return parsed
    return deco


def _is_int_arg(v):
    """An argument torch's parser reads as ``int``: a Python or numpy integer (not a bool, not
    a tensor)."""
    if isinstance(v, Tensor):            # (an integer tensor of one element reads as its value)
        return v.numel() == 1 and not (v.dtype.is_floating_point or v.dtype.is_complex or
                                       v.dtype.name == "bool")
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _random_args_error(args, kw):
    from .._creation import _tp_name
    got = ", ".join([_tp_name(a) for a in args] + [f"{k}={_tp_name(v)}" for k, v in kw.items()])
    if kw and not args:
        got += ", "
    note = ""
    if kw and "to" in kw and args:
        note = "      didn't match because some of the keywords were incorrect: to\n"
    elif len(args) == 2:
        note = ("      didn't match because some of the arguments have invalid types: (" +
                ", ".join(f"!{_tp_name(a)}!" for a in args) + ")\n")
    return TypeError(f"random_() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n" + _RANDOM_OVERLOADS.format(note))


def _float_cast(v, name):
    """``static_cast<int64_t>(static_cast<scalar_t>(v))``: v rounded to the float dtype and
    back (None where the float overflows)."""
    with np.errstate(over="ignore"):
        f = float(np.asarray(v, np.float64).astype(D.to_dtype(getattr(D, name)).np))
    return int(f) if np.isfinite(f) else None


def _update_from(frm, name):
    """torch's update_from: ``from`` moved up to the first integer the float dtype holds."""
    fp1 = _float_cast(frm + 1, name)
    if fp1 is not None and fp1 < frm:
        n = max(abs(frm + 1).bit_length() - 1, 0)
        frm = fp1 + (1 << (n - _DIGITS[name] + 1))
    return frm


def _update_to(to, name):
    """torch's update_to: ``to`` moved down to the last integer the float dtype holds."""
    tm1 = _float_cast(to - 1, name)
    if tm1 is not None and tm1 >= to:
        n = max(abs(to - 1).bit_length() - 1, 0)
        to = tm1 - (1 << (n - _DIGITS[name] + 1))
    return to


def _check_random_range(frm, to_inc, name):
    """torch's check_from_to_in_range: both ends within the dtype's values (an error), and, for
    a float dtype, within its exact integers (a warning)."""
    if name in _DIGITS:
        fi = np.finfo(D.to_dtype(getattr(D, name)).np)
        lo, hi = float(fi.min), float(fi.max)
    elif name in _TYPE_LIMITS:
        lo, hi = _TYPE_LIMITS[name]
    else:
        return
    if not lo <= frm <= hi:
        raise RuntimeError(f"from is out of bounds for {_C_NAMES[name]}")
    if not lo <= to_inc <= hi:
        raise RuntimeError(f"to - 1 is out of bounds for {_C_NAMES[name]}")
    if name in _DIGITS:
        import warnings
        d = _DIGITS[name]
        for v, what, line in ((frm, "from", 110), (to_inc, "to - 1", 111)):
            if v < -(1 << d) or v > (1 << d):
                warnings.warn(
                    f"{what} is out of bounds [-(2^{d}), 2^{d}]. Due to precision limitations "
                    f"{_C_NAMES[name]} can support discrete uniform distribution only within "
                    f"this range. This warning will become an error in version 1.7 release, "
                    f"please fix the code in advance (Triggered internally at "
                    f"/__w/pytorch/pytorch/aten/src/ATen/native/DistributionTemplates.h:{line}.)",
                    UserWarning, stacklevel=4)


def random_(self, *args, **kw):
    """Integers uniform in [from, to); ``random_()`` spans the dtype's exact-integer range.
    torch's overloads: ``random_()``, ``random_(to)``, ``random_(from, to)`` (``to`` may be
    None: up to the dtype's largest exact integer), each argument an int."""
    if len(args) > 2 and "generator" in kw:
        raise parser_error("random_", args, kw, _METHOD_OVERLOADS["random_"])
    generator = kw.pop("generator", None)
    if len(args) > 2:
        raise TypeError(f"random_() takes 2 positional arguments but {len(args)} were given")
    if "from" in kw and "from_" in kw:
        raise TypeError("random_() got multiple values for argument 'from'")
    if "from_" in kw:
        kw["from"] = kw.pop("from_")
    bad = [k for k in kw if k not in ("from", "to")]
    if bad:
        raise TypeError(f"random_() got an unexpected keyword argument '{bad[0]}'")
    params = list(args)
    if "from" in kw:
        if len(params) > 0:
            raise _random_args_error(args, kw)
        params.append(kw["from"])
    if "to" in kw:
        if len(params) == 0 and "from" not in kw:
            frm, to = 0, kw["to"]               # random_(to=n)
            if not _is_int_arg(to):
                raise _random_args_error(args, kw)
        elif len(params) == 1:
            frm, to = params[0], kw["to"]
        else:
            raise _random_args_error(args, kw)
    elif len(params) == 2:
        frm, to = params
    elif len(params) == 1:
        if "from" in kw:                        # (torch: from= needs to=)
            raise _random_args_error(args, kw)
        frm, to = 0, params[0]                  # random_(to)
        if not _is_int_arg(to):
            raise _random_args_error(args, kw)
    else:
        frm, to = _NO_ARG, _NO_ARG
    if frm is not _NO_ARG and (not _is_int_arg(frm) or not (to is None or _is_int_arg(to))):
        raise _random_args_error(args, kw)
    if is_meta(self):
        return _meta_fill(self, "random", generator)
    name = self.dtype.name
    if frm is not _NO_ARG:
        frm = int(frm)
        to = None if to is None else int(to)
        for v in (frm, to):
            if v is not None and not -(1 << 63) <= v < (1 << 63):
                raise ValueError("Overflow when unpacking long long")
    dt = self.dtype
    if frm is _NO_ARG and (dt.is_complex or dt in D.FLOAT8 or dt in D.BAREBONES):
        raise NotImplementedError(f"\"random_kernel_cpu\" not implemented for '{_tname(dt)}'")
    if dt.is_complex and to is None:
        raise RuntimeError("random_from_to_impl handles only integral, floating-point and "
                           "boolean types")
    if dt in D.FLOAT8 and to is None:
        raise NotImplementedError(f"\"random_from_to_range_calc\" not implemented for "
                                  f"'{_tname(dt)}'")
    if dt.is_complex and frm < to:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                           "boolean types")
    if dt in D.FLOAT8 and frm < to:
        raise NotImplementedError(f"\"random_update_from_to\" not implemented for "
                                  f"'{_tname(dt)}'")
    if frm is _NO_ARG:
        lo, hi = 0, _RANDOM_TO[name] + 1
    elif to is not None:
        if frm >= to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={frm} >= to={to}")
        if name in _DIGITS:
            frm, to = _update_from(frm, name), _update_to(to, name)
            if frm >= to:
                raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than "
                                   f"'to' casted to dtype, but got from={frm} >= to={to}")
        _check_random_range(frm, to - 1, name)
        lo, hi = frm, to
    else:
        to_inc = _RANDOM_TO[name]
        if name in _DIGITS:
            frm = _update_from(frm, name)
            if not frm < to_inc:
                raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than or "
                                   f"equal to 'to_inc' casted to dtype, but got from={frm} > "
                                   f"to_inc={to_inc}")
        _check_random_range(frm, to_inc, name)
        lo, hi = frm, to_inc + 1
    return _inplace_fill(self, "random", 0.0, 0.0, generator, "RandomBackward0", (lo, hi))


# ------------------------------------------------------------------ functional samplers

@defop("normal", saves=False, grad_name=lambda kw: kw["name"])
def _normal(mean, std, kd, shape, dtype, name):
    if np.issubdtype(dtype, np.complexfloating):
        # a complex draw: each part with variance 1/2, as torch's complex randn
        part = jnp.float64 if dtype == np.complex128 else jnp.float32
        r = jax.random.normal(_k(kd), tuple(shape) + (2,), part) * np.sqrt(0.5).astype(part)
        eps = jax.lax.complex(r[..., 0], r[..., 1])
    else:
        eps = jax.random.normal(_k(kd), shape, jnp.float64 if dtype == np.float64 else
                                jnp.float32)
    m = jnp.asarray(mean)
    s = jnp.asarray(std)
    out = (jax.lax.stop_gradient(m) + jax.lax.stop_gradient(s) * eps).astype(dtype)
    # zero gradients to tensor arguments (torch's NormalBackward); a where, not a product by
    # zero, so an infinite mean or std leaves the draw infinite rather than NaN
    zero = jnp.sum(jnp.where(False, m, 0)) + jnp.sum(jnp.where(False, s, 0))
    return out + zero.astype(dtype)


def _std_negative(s):
    """Whether a standard deviation is negative or NaN (numpy or jax)."""
    xp = np if isinstance(s, np.ndarray) else jnp
    return ~(s >= 0).all() if s.size else xp.asarray(False)


def _std_error(bad):
    return RuntimeError("normal expects all elements of std >= 0.0") if bad else None


@public(out=True)
def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, layout=None,
           device=None, pin_memory=False, requires_grad=False):
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not all(isinstance(v, Tensor) or _is_float_arg(v) for v in (mean, std)):
        raise _normal_args_error(mean, std, size)
    if (mt and is_meta(mean)) or (st and is_meta(std)) or (
            not mt and not st and device is not None and _device.device(device).type == "meta"):
        return _meta_normal(mean, std, size, dtype, requires_grad)
    if st and std.dtype.is_complex:
        raise RuntimeError("normal expects standard deviation to be non-complex")
    if st:
        if not _fused.defer_check(_std_negative, [_fused.raw(std)], _std_error):
            e = _std_error(_std_negative(np.asarray(std._data)))
            if e is not None:
                raise e
    elif not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    if not mt and not st:
        if size is None or isinstance(size, (int, np.integer)):
            raise _normal_args_error(mean, std, size)
        from .._creation import _size
        shape = _size((size,), "normal")
        dt = D.to_dtype(dtype) if dtype is not None else D.get_default_dtype()
        if not (dt.is_floating_point or dt.is_complex) or dt in D.FLOAT8:
            raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{_tname(dt)}'")
        r = apply(_normal, float(mean), float(std), _key(generator), shape=shape, dtype=dt.np,
                  name="NormalBackward0")
        if device is not None:
            r = Tensor._make(_device.put(r._data, device))
        if requires_grad:
            r.requires_grad_(True)
        return r
    if mt and st:
        from .._registry import broadcast_error
        msg = broadcast_error([tuple(mean.shape), tuple(std.shape)])
        if msg:
            raise RuntimeError(msg)
        shape = tuple(np.broadcast_shapes(tuple(mean.shape), tuple(std.shape)))
        dt = mean.dtype                     # (torch: the output takes mean's dtype)
        name = "NormalBackward3"
    elif mt:
        shape, dt, name = tuple(mean.shape), mean.dtype, "NormalBackward1"
    else:
        shape, dt, name = tuple(std.shape), std.dtype, "NormalBackward2"
    if not (dt.is_floating_point or dt.is_complex):
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{_tname(dt)}'")
    return apply(_normal, mean if mt else float(mean), std if st else float(std),
                 _key(generator), shape=shape, dtype=dt.np, name=name)


def _meta_normal(mean, std, size, dtype, requires_grad):
    """normal on the meta device: the checks of torch's meta kernel (its words), the shape and
    dtype of the draw."""
    mt, st = isinstance(mean, Tensor), isinstance(std, Tensor)
    if mt and st and mean.device != std.device:
        raise RuntimeError(f"Tensor on device {mean.device} is not on the expected device "
                           f"{std.device}!")
    if not st and not std >= 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std)}")
    if mt and st:
        shape = _meta_broadcast([tuple(mean.shape), tuple(std.shape)])
        dt = D._promote2(mean.dtype, std.dtype)
        if not (dt.is_floating_point or dt.is_complex):
            dt = D.get_default_dtype()
    elif mt or st:
        t = mean if mt else std
        shape, dt = tuple(t.shape), t.dtype
        if st and not (dt.is_floating_point or dt.is_complex):
            dt = D.get_default_dtype()
    else:
        from .._creation import _size
        if size is None or isinstance(size, (int, np.integer)):
            raise _normal_args_error(mean, std, size)
        shape = _size((size,))
        dt = D.to_dtype(dtype) if dtype is not None else D.get_default_dtype()
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"expected a floating-point or complex dtype, but got dtype={dt}")
    grad = requires_grad or any(isinstance(v, Tensor) and v.requires_grad for v in (mean, std))
    return _meta_result(shape, dt, grad)


def _meta_broadcast(shapes):
    """The broadcast of ``shapes``, or the error of torch's meta kernels (its Python
    reference's broadcast)."""
    common = [1] * max(len(sh) for sh in shapes)
    for i, sh in enumerate(shapes):
        for idx in range(-1, -1 - len(sh), -1):
            if common[idx] == 1:
                common[idx] = sh[idx]
            elif sh[idx] != 1 and sh[idx] != common[idx]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {sh[idx]} at {idx}! "
                    f"Mismatching argument at index {i} had torch.Size({list(sh)}); but "
                    f"expected shape should be broadcastable to {common}")
    return tuple(common)


def _meta_result(shape, dt, requires_grad=False):
    """A sampler's result on the meta device: its shape and dtype, nothing drawn (the generator
    does not advance); it requires grad as torch's (its history is not recorded)."""
    from ..autograd import grad_mode
    out = Tensor._make(MetaArray(tuple(shape), dt.np))
    out._requires_grad = bool(requires_grad) and grad_mode._state.grad_enabled
    return out


_NORMAL_OVERLOADS = (
    "Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None",
    "Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None",
    "float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None",
    "float mean, float std, tuple of ints size, *, torch.Generator generator = None, Tensor out = "
    "None, torch.dtype dtype = None, torch.layout layout = None, torch.device device = None, "
    "bool pin_memory = False, bool requires_grad = False")


def _normal_args_error(mean, std, size):
    from .._creation import _tp_name
    got = ", ".join(_tp_name(a) for a in (mean, std) + (() if size is None else (size,)))
    return TypeError(
        f"normal() received an invalid combination of arguments - got ({got}), but expected "
        f"one of:\n" + "".join(f" * ({o})\n" for o in _NORMAL_OVERLOADS))


@defop("bernoulli", saves=False, grad_name="BernoulliBackward0")
def _bernoulli(p, kd, scalar_p):
    pp = jnp.asarray(scalar_p if scalar_p is not None else p, jnp.float64)
    u = jax.random.uniform(_k(kd), p.shape, jnp.float64)
    out = (u < pp).astype(p.dtype)
    if jnp.issubdtype(p.dtype, jnp.inexact):
        out = out + jnp.sum(p * 0).astype(p.dtype)
    return out


def _p_outside(v):
    """Whether a probability is outside [0, 1] or NaN (numpy or jax)."""
    xp = np if isinstance(v, np.ndarray) else jnp
    return ((v < 0) | (v > 1) | xp.isnan(v)).any() if v.size else xp.asarray(False)


def _p_error(bad):
    return RuntimeError(_P_IN_MSG) if bad else None


@public(out=True)
def bernoulli(input, p=None, *, generator=None):
    if is_meta(input):              # (torch's meta kernel checks neither p nor the dtype)
        return _meta_result(input.shape, input.dtype, input.requires_grad and p is None)
    dt = input.dtype
    if p is None:
        # (torch's kernel dispatches on self, any real dtype, then on p, floating only)
        if dt.is_complex or dt in D.FLOAT8 or dt in D.BAREBONES:
            raise NotImplementedError(f"\"bernoulli_tensor_cpu_self_\" not implemented for "
                                      f"'{_tname(dt)}'")
        if not input.dtype.is_floating_point:
            raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for "
                                      f"'{_tname(input.dtype)}'")
        # (fused eager: computed probabilities are checked with their segment)
        if not _fused.defer_check(_p_outside, [_fused.raw(input)], _p_error):
            e = _p_error(_p_outside(np.asarray(input._data)))
            if e is not None:
                raise e
        return apply(_bernoulli, input, _key(generator), scalar_p=None)
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    if dt.is_complex or dt in D.FLOAT8 or dt in D.BAREBONES:
        raise NotImplementedError(f"\"bernoulli_scalar_cpu_\" not implemented for "
                                  f"'{_tname(dt)}'")
    return apply(_bernoulli, input.detach(), _key(generator), scalar_p=float(p))


@defop("multinomial", differentiable=False)
def _multinomial(p, kd, n, replacement):
    key = _k(kd)
    logits = jnp.log(p.astype(jnp.float64))
    if replacement:
        return jax.random.categorical(key, logits, axis=-1,
                                      shape=(n,) + p.shape[:-1]).T.astype(jnp.int64) \
            if p.ndim == 2 else jax.random.categorical(key, logits, shape=(n,)).astype(jnp.int64)
    g = jax.random.gumbel(key, p.shape, jnp.float64)
    # zero-probability categories come last, in index order (as torch's sampler leaves them)
    keys = jnp.where(p > 0, logits + g, -jnp.inf)
    return jax.lax.top_k(keys, n)[1].astype(jnp.int64)


@public(out=True)
def multinomial(input, num_samples, replacement=False, *, generator=None):
    if is_meta(input):
        return _meta_multinomial(input, int(num_samples))
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_tname(input.dtype)}")
    if input.dtype in D.FLOAT8:
        raise NotImplementedError(f"\"aminmax_cpu\" not implemented for '{_tname(input.dtype)}'")
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    ncat = input.shape[-1]
    if not replacement and num_samples > ncat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if input.numel() == 0 or ncat == 0:
        # (torch returns an empty result before reading the probabilities; with none to
        # read, its one-sample path fails on the extrema, the others on the sum)
        if input.ndim == 2 and input.shape[0] == 0:
            return Tensor._make(jnp.zeros((0, int(num_samples)), jnp.int64))
        if num_samples == 1:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    # (torch's kernel with replacement and several samples words its errors per entry)
    make_error = _multinomial_entry_error if replacement and num_samples > 1 else \
        _multinomial_error
    if not _fused.defer_check(_multinomial_flags, [_fused.raw(input)], make_error):
        e = make_error(_multinomial_flags(np.asarray(input._data)))
        if e is not None:
            raise e
    out = apply(_multinomial, input, _key(generator), n=int(num_samples),
                replacement=bool(replacement))
    _fused.bound(out._d, 0, ncat - 1)       # (an index check of a draw reads nothing)
    return out


def _meta_multinomial(input, n):
    """multinomial on the meta device: the checks of torch's meta kernel (its words; not the
    dtype, nor the count against the categories), the result's shape."""
    if input.ndim == 0:
        raise TypeError('empty() missing 1 required positional arguments: "size"')
    if input.ndim > 2:
        raise RuntimeError(f"The probability distributions dimensions must be 1 or 2, but got "
                           f"{input.ndim}")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    return _meta_result(tuple(input.shape[:-1]) + (n,), D.int64)


def _multinomial_flags(p):
    """(a probability is negative or nan, one is infinite, a row sums to <= 0): multinomial's
    checks."""
    xp = np if isinstance(p, np.ndarray) else jnp
    v = p.astype(xp.float64)
    return xp.stack([((v < 0) | xp.isnan(v)).any(), xp.isinf(v).any(),
                     (v.sum(-1) <= 0).any()])


def _multinomial_error(flags):
    if flags[0] or flags[1]:
        return RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if flags[2]:
        return RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    return None


def _multinomial_entry_error(flags):
    if flags[0]:
        return RuntimeError("invalid multinomial distribution (encountering probability entry "
                            "< 0)")
    if flags[1]:
        return RuntimeError("invalid multinomial distribution (encountering probability entry "
                            "= infinity or NaN)")
    if flags[2]:
        return RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    return None


@defop("poisson", saves=False, grad_name="PoissonBackward0")
def _poisson(rate, kd):
    out = jax.random.poisson(_k(kd), rate.astype(jnp.float64), rate.shape).astype(rate.dtype)
    return out + jnp.sum(rate * 0).astype(rate.dtype)


@checks_generator("poisson")
def poisson(input, generator=None):
    if generator is not None and not isinstance(generator, _random.Generator):
        from .._creation import _tp_name         # (a keyword one: checks_generator)
        raise TypeError(f"poisson(): argument 'generator' (position 2) must be torch.Generator, "
                        f"not {_tp_name(generator)}")
    if is_meta(input):
        return _meta_result(input.shape, input.dtype, input.requires_grad)
    if not input.dtype.is_floating_point or input.dtype in D.FLOAT8:
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for "
                                  f"'{_tname(input.dtype)}'")
    v = np.asarray(input._data)
    if v.size and not (v >= 0).all():          # (a NaN rate too)
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    return apply(_poisson, input, _key(generator))


def _binomial_draws(count, prob, rng):
    """Binomial(count, prob) draws by ``rng`` (numpy: jax's binomial sampler compiles for
    seconds per shape), with the cases of torch's kernel: a count or prob <= 0 draws 0, a prob
    >= 1 draws the count itself (fractional or infinite alike), else the count is truncated to
    an integer; a nan prob, or a non-finite count otherwise, gives nan (torch's kernel never
    returns for a nan count there)."""
    n, p = np.broadcast_arrays(np.asarray(count, np.float64), np.asarray(prob, np.float64))
    zero = (n <= 0) | (p <= 0)
    whole = ~zero & (p >= 1)
    draw = ~zero & (p < 1) & np.isfinite(n)
    out = np.full(n.shape, np.nan)
    out[zero] = 0
    out[whole] = n[whole]
    out[draw] = rng.binomial(np.trunc(n[draw]).astype(np.int64), p[draw])
    return out


# the draws are made on the host and passed in; the op gives its output torch's graph: it
# requires grad with its inputs, and backward through it raises torch's error
_binomial = defop("binomial", saves=False, grad_name="torch::autograd::NotImplemented")(
    no_derivative(lambda count, prob, draws: draws, "binomial"))


# (torch has no meta kernel for binomial)
_NO_META_BINOMIAL = (
    "aten::binomial: attempted to run this operator with Meta tensors, but there was no fake "
    "impl or Meta kernel registered. You may have run into this message while using an "
    "operator with PT2 compilation APIs (torch.compile/torch.export); in order to use this "
    "operator with those APIs you'll need to add a fake impl. Please see the following for "
    "next steps:  https://pytorch.org/tutorials/advanced/custom_ops_landing_page.html")


def binomial(count, prob, generator=None):
    """Draws of Binomial(count, prob), count and prob broadcast, in their (floating) dtype."""
    from .._random import Generator
    from .._registry import broadcast_error
    from .._tensor import not_a_tensor
    from .._creation import _tp_name
    for pos, (name, t) in enumerate((("count", count), ("prob", prob)), 1):
        if not isinstance(t, Tensor):
            raise not_a_tensor("binomial", t, name, pos)
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"binomial(): argument 'generator' must be torch.Generator, not "
                        f"{_tp_name(generator)}")
    if is_meta(count) or is_meta(prob):
        raise NotImplementedError(_NO_META_BINOMIAL)
    for name, t in (("count", count), ("prob", prob)):
        if not t.dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{_tname(t.dtype)}")
    err = broadcast_error([tuple(count.shape), tuple(prob.shape)])
    if err:
        raise RuntimeError(err)
    if prob.dtype != count.dtype:
        raise RuntimeError(f"Found dtype {_tname(prob.dtype)} but expected "
                           f"{_tname(count.dtype)}")
    if count.dtype.name not in ("float32", "float64"):
        raise NotImplementedError(f"\"binomial_cpu\" not implemented for "
                                  f"'{_tname(count.dtype)}'")
    from ..distributions._ops import _host_rng
    draws = _binomial_draws(np.asarray(count.detach()._data), np.asarray(prob.detach()._data),
                            _host_rng(generator))
    return apply(_binomial, count, prob,
                 Tensor._make(jnp.asarray(draws.astype(count.dtype.np))))


_GEN = "torch.Generator generator = None"
_METHOD_OVERLOADS = {
    "bernoulli": (f"*, {_GEN}", f"float p, *, {_GEN}"),
    "bernoulli_": (f"Tensor p, *, {_GEN}", f"float p = 0.5, *, {_GEN}"),
    "random_": (f"*, {_GEN}", f"int from, int to, *, {_GEN}", f"int to, *, {_GEN}"),
}
methods(**{name: checks_generator(name, _METHOD_OVERLOADS.get(name), method=True)(fn)
           for name, fn in dict(uniform_=uniform_, normal_=normal_, log_normal_=log_normal_,
                                exponential_=exponential_, cauchy_=cauchy_,
                                geometric_=geometric_, bernoulli_=bernoulli_, random_=random_,
                                bernoulli=bernoulli,
                                multinomial=_multinomial_args(True)(multinomial)).items()})


from ._surface import public, with_out as _with_out

def _out_on_meta(fn):
    """Decorator: a sampler's ``out=`` refused as torch's where the draw and ``out`` are not
    both on the meta device (a copy across devices), or taking out's meta device (normal's
    size form without a device)."""
    @functools.wraps(fn)
    def checked(*args, **kwargs):
        out = kwargs.get("out")
        if isinstance(out, Tensor):
            ts = [v for v in list(args) + [v for k, v in kwargs.items() if k != "out"]
                  if isinstance(v, Tensor)]
            dev = kwargs.get("device")
            if ts and any(map(is_meta, ts)) != is_meta(out):
                src = "meta" if any(map(is_meta, ts)) else ts[0].device.type
                raise RuntimeError(f"Attempting to copy from device {src} to device "
                                   f"{out.device.type}, but cross-device copies are not "
                                   f"allowed!")
            if not ts and dev is not None and (
                    _device.device(dev).type == "meta") != is_meta(out):
                raise RuntimeError(f"device type {_device.device(dev).type} does not match "
                                   f"device type of out parameter ({out.device.type})")
            if not ts and dev is None and is_meta(out):
                kwargs["device"] = out.device
        return fn(*args, **kwargs)
    return checked


normal = _out_on_meta(checks_generator("normal", _NORMAL_OVERLOADS)(
    _with_out(normal, "normal")))
_BERNOULLI_OVERLOADS = (f"Tensor input, *, {_GEN}, Tensor out = None",
                        f"Tensor input, float p, *, {_GEN}")


def _bernoulli_overloads(fn):
    """torch.bernoulli's parse: ``p`` is a float, given without ``out``."""
    @functools.wraps(fn)
    def parsed(*args, **kwargs):
        given = len(args) > 1 or "p" in kwargs
        if given and ("out" in kwargs or (args[1] if len(args) > 1 else kwargs["p"]) is None):
            raise parser_error("bernoulli", args, kwargs, _BERNOULLI_OVERLOADS)
        return fn(*args, **kwargs)
    return parsed


bernoulli = _out_on_meta(checks_generator("bernoulli", _BERNOULLI_OVERLOADS)(
    _bernoulli_overloads(_with_out(bernoulli, "bernoulli"))))
multinomial = _out_on_meta(checks_generator("multinomial")(
    _multinomial_args(False)(_with_out(multinomial, "multinomial"))))
