"""torch's deprecated signatures, still accepted with a warning: a Number before the tensors.

Older optimizer and model code calls them (``p.data.add_(-lr, grad)``,
``exp_avg_sq.mul_(beta2).addcmul_(1 - beta2, grad, grad)``, ``p.addcdiv_(-step, m, denom)``,
``torch.addmm(beta, input, alpha, mat1, mat2)``); torch lists them in its
``tools/autograd/deprecated.yaml``. A call that fails with a TypeError in the modern signatures
and matches one of these is made in the modern form instead; the first one in a process warns,
as torch's argument parser does (once, for whichever deprecated overload comes first).
"""
from __future__ import annotations

import functools
import numbers
import warnings

__all__ = ["install"]

# per name, the function form's positional parameters ("input": the tensor a method is called
# on); each is a Tensor but the numbers in _NUMBERS
_SIGNATURES = {
    "add": [("input", "alpha", "other")],
    "sub": [("input", "alpha", "other")],
    "addcmul": [("input", "value", "tensor1", "tensor2")],
    "addcdiv": [("input", "value", "tensor1", "tensor2")],
    **{n: [("beta", "input", "alpha", a, b), ("beta", "input", a, b)]
       for n, (a, b) in (("addmm", ("mat1", "mat2")), ("addmv", ("mat", "vec")),
                         ("addr", ("vec1", "vec2")), ("addbmm", ("batch1", "batch2")),
                         ("baddbmm", ("batch1", "batch2")))},
}
_NUMBERS = ("beta", "alpha", "value")
# (torch's parser takes a Python number for add's and sub's tensor operand too)
_NUMBER_OR_TENSOR = frozenset({("add", "other"), ("sub", "other")})
_OUT_DTYPE = frozenset({"addmm", "baddbmm"})     # (functions with a second modern signature)
_warned = [False]


def install(ns, Tensor):
    """Let ``ns.<name>``, ``Tensor.<name>`` and ``Tensor.<name>_`` take their deprecated
    signatures."""
    import sys
    for name in _SIGNATURES:
        for owner, attr, method in ((ns, name, False), (Tensor, name, True),
                                    (Tensor, name + "_", True)):
            fn = getattr(owner, attr, None)
            if fn is None:
                continue
            g = _accepting(fn, attr, name, method, Tensor)
            setattr(owner, attr, g)
            family = sys.modules.get(getattr(fn, "__module__", ""))
            if not method and getattr(family, attr, None) is fn:
                setattr(family, attr, g)      # (torchlike.<name> is its family's function)


def _accepting(fn, attr, name, method, Tensor):
    @functools.wraps(fn)
    def g(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TypeError:
            call = _modern(attr, name, method, args, kwargs, Tensor)
            if call is None:
                raise
        return fn(*call[0], **call[1])
    return g


def _modern(attr, name, method, args, kwargs, Tensor):
    """``(args, kwargs)`` of the modern call for ``args`` in one of ``name``'s deprecated
    signatures (warning the first time), or None."""
    own = args[:1] if method else ()
    given = args[1:] if method else args
    for params in _SIGNATURES[name]:
        if method:
            params = tuple(p for p in params if p != "input")
        if len(given) != len(params) or any(k != "out" for k in kwargs) or \
                (method and "out" in kwargs):
            continue
        if not all(_fits(name, p, a, Tensor) for p, a in zip(params, given)):
            continue
        if not _warned[0]:
            _warned[0] = True
            warnings.warn(_message(attr, name, method, params), UserWarning, stacklevel=3)
        named = dict(zip(params, given))
        return (*own, *[named[p] for p in params if p not in _NUMBERS]), {
            **{p: named[p] for p in params if p in _NUMBERS}, **kwargs}
    return None


def _fits(name, param, a, Tensor):
    number = isinstance(a, numbers.Number) and not isinstance(a, Tensor)
    if param in _NUMBERS:
        return number
    return isinstance(a, Tensor) or (number and (name, param) in _NUMBER_OR_TENSOR)


def _message(attr, name, method, params):
    """torch's warning for a deprecated overload (its argument parser's text)."""
    def typed(p):
        return ("Number " if p in _NUMBERS else "Tensor ") + p
    out = "" if method else ", *, Tensor out = None"
    old = f"{attr}({', '.join(typed(p) for p in params)}{out})"
    tensors = ", ".join(typed(p) for p in params if p not in _NUMBERS)
    nums = [p for p in _NUMBERS if p in params or (p == "alpha" and "beta" in params)]
    kw = ", ".join(f"Number {p} = 1" for p in nums)
    out = "" if method else ", Tensor out = None"
    new = [f"{attr}({tensors}, *, {kw}{out})"]
    if not method and name in _OUT_DTYPE:
        new.append(f"{attr}({tensors}, torch.dtype out_dtype, *, {kw}{out})")
    return (f"This overload of {attr} is deprecated:\n\t{old}\nConsider using one of the "
            f"following signatures instead:\n\t" + "\n\t".join(new))
