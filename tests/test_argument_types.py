"""Tensor parameters given what torch's argument parser refuses (a list, a tuple, None, a string,
a numpy array, and for most a Python number) raise torch's TypeError with its message, in the
function, method and in-place forms; what torch takes (a Tensor, a number where it has a
Number overload) computes as torch does. Computing a value there was a silent difference
(``torch.add(x, [1, 1])``, ``x.clamp([0, 0])``, ``x.masked_fill(m, [1, 1])``)."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike

F32 = np.array([0.5, -1.5, 2.0], np.float32)
I32 = np.array([3, 5, 6], np.int32)
MASK = np.array([True, False, True])


def _f(m):
    return m.tensor(F32)


def _i(m):
    return m.tensor(I32)


# op -> (the arguments of a call torch takes: fn(m) -> list, the indices of its Tensor
# operands to replace, the forms: "fn", "method", "inplace")
CASES = {
    **{n: (lambda m: [_f(m), _f(m)], (1,), ("fn", "method", "inplace")) for n in (
        "add", "sub", "mul", "div", "fmod", "remainder", "copysign", "atan2", "hypot",
        "xlogy", "subtract", "multiply", "divide", "true_divide", "floor_divide", "eq",
        "ne", "lt", "le", "gt", "ge", "greater", "less_equal", "nextafter", "igamma")},
    **{n: (lambda m: [_f(m), _f(m)], (1,), ("fn", "method")) for n in (
        "maximum", "minimum", "fmax", "fmin", "logaddexp", "logaddexp2", "logical_and",
        "logical_or", "logical_xor", "isclose", "allclose", "equal", "dist", "kron",
        "heaviside")},
    **{n: (lambda m: [_i(m), _i(m)], (1,), ("fn", "method", "inplace")) for n in (
        "bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm")},
    "pow": (lambda m: [_f(m), _f(m)], (1,), ("fn", "method", "inplace")),
    "float_power": (lambda m: [_f(m).double(), _f(m).double()], (1,), ("fn", "method")),
    "clamp": (lambda m: [_f(m), _f(m), _f(m) + 1], (1, 2), ("fn", "method", "inplace")),
    "clamp_min": (lambda m: [_f(m), _f(m)], (1,), ("fn", "method", "inplace")),
    "clamp_max": (lambda m: [_f(m), _f(m)], (1,), ("fn", "method", "inplace")),
    "lerp": (lambda m: [_f(m), _f(m) * 2, _f(m)], (1, 2), ("fn", "method", "inplace")),
    "addcmul": (lambda m: [_f(m), _f(m), _f(m)], (1, 2), ("fn", "method", "inplace")),
    "addcdiv": (lambda m: [_f(m), _f(m), _f(m) + 3], (1, 2), ("fn", "method", "inplace")),
    "masked_fill": (lambda m: [_f(m), m.tensor(MASK), m.tensor(2.0)], (1, 2),
                    ("fn", "method", "inplace")),
    "masked_select": (lambda m: [_f(m), m.tensor(MASK)], (1,), ("fn", "method")),
    "where": (lambda m: [m.tensor(MASK), _f(m), _f(m) * 3], (1, 2), ("fn",)),
    "outer": (lambda m: [_f(m), _f(m)], (1,), ("fn", "method")),
    "rsub": (lambda m: [_f(m), _f(m)], (1,), ("fn",)),
    "isin": (lambda m: [_f(m), _f(m)], (1,), ("fn",)),
    "cosine_similarity": (lambda m: [_f(m)[None], _f(m)[None]], (1,), ("fn",)),
    "pairwise_distance": (lambda m: [_f(m)[None], _f(m)[None]], (1,), ("fn",)),
    "prelu": (lambda m: [_f(m), m.tensor([0.25])], (1,), ("fn", "method")),
    "conv1d": (lambda m: [m.ones(1, 1, 4), m.ones(1, 1, 2)], (1,), ("fn",)),
    "conv_transpose1d": (lambda m: [m.ones(1, 1, 4), m.ones(1, 1, 2)], (1,), ("fn",)),
    "expand_as": (lambda m: [_f(m)[:1], _f(m)], (1,), ("method",)),
    "type_as": (lambda m: [_f(m), _i(m)], (1,), ("method",)),
    "copy_": (lambda m: [_f(m), _f(m) * 2], (1,), ("method",)),
    "fill_": (lambda m: [_f(m), m.tensor(2.0)], (1,), ("method",)),
}
BAD = {"list": lambda: [1.0, 2.0, 3.0], "tuple": lambda: (1.0,), "None": lambda: None,
       "str": lambda: "a", "ndarray": lambda: np.ones(3, np.float32), "int": lambda: 2,
       "float": lambda: 0.5, "bool": lambda: True}


def _call(m, name, form, args):
    if form == "fn":
        return getattr(m, name)(*args)
    if form == "method":
        return getattr(args[0], name)(*args[1:])
    return getattr(args[0], name + "_")(*args[1:])


def _outcome(m, name, form, args):
    try:
        out = _call(m, name, form, args)
    except Exception as e:      # (the first line: torch lists its overloads after it)
        return type(e), str(e).split("\n")[0]
    if isinstance(out, (m.Tensor,)):
        return "value", out.detach().numpy().tolist()
    return "value", out


def _cases():
    for name, (make, at, forms) in sorted(CASES.items()):
        for form in forms:
            for i in at:
                for bad in BAD:
                    yield pytest.param(name, form, i, bad, id=f"{name}-{form}-{i}-{bad}")


@pytest.mark.parametrize("name,form,i,bad", list(_cases()))
def test_operand_of_another_type_as_torch(name, form, i, bad):
    make = CASES[name][0]
    got = []
    for m in (torch, torchlike):
        args = make(m)
        args[i] = BAD[bad]()
        got.append(_outcome(m, name, form, args))
    want, mine = got
    if want[0] == "value" or mine[0] == "value":
        assert mine[0] == want[0], (want, mine)
        np.testing.assert_allclose(np.asarray(mine[1], np.float64),
                                   np.asarray(want[1], np.float64), rtol=1e-6)
    else:
        assert (mine[0].__name__, mine[1]) == (want[0].__name__, want[1])


@pytest.mark.parametrize("name", sorted(CASES))
def test_tensor_operands_compute_as_torch(name):
    """The check lets every call torch takes through: the same values."""
    make, _at, forms = CASES[name]
    for form in forms:
        want = _outcome(torch, name, form, make(torch))
        mine = _outcome(torchlike, name, form, make(torchlike))
        assert want[0] == "value" and mine[0] == "value", (form, want, mine)
        np.testing.assert_allclose(np.asarray(mine[1], np.float64),
                                   np.asarray(want[1], np.float64), rtol=1e-6)


def test_keyword_operands_name_the_argument_without_a_position():
    x = torchlike.ones(2)
    for call, msg in [
            (lambda: torchlike.add(x, other=[1]),
             "add(): argument 'other' must be Tensor, not list"),
            (lambda: x.add(other=None), "add(): argument 'other' must be Tensor, not NoneType"),
            (lambda: torchlike.add(x, x, alpha="a"),
             "add(): argument 'alpha' must be Number, not str"),
            (lambda: torchlike.eq(x, other=[1]), "eq() received an invalid combination of "
             "arguments - got (Tensor, other=list), but expected one of:"),
            (lambda: torchlike.add([1, 1], x), "add(): argument 'input' (position 1) must be "
             "Tensor, not list")]:
        with pytest.raises(TypeError) as e:
            call()
        assert str(e.value).split("\n")[0] == msg


def test_operators_keep_their_own_operand_rule():
    """Python's operators return NotImplemented (Python raises), and take numpy and jax arrays
    (interop): the functions' check does not run under them."""
    x = torchlike.ones(2)
    with pytest.raises(TypeError, match="unsupported operand"):
        x + [1, 1]
    assert (x == None) is False                    # noqa: E711
    assert (x * 2).tolist() == [2.0, 2.0]


# sizes and dims: (the call on ``x``, a 2x3 float tensor, written once for both libraries)
SIZES = [f"x.{op}({args})" for op, (a, b) in [
    ("view", (3, 2)), ("reshape", (3, 2)), ("permute", (1, 0)), ("repeat", (2, 1)),
    ("expand", (2, 3)), ("tile", (2, 1)), ("broadcast_to", (2, 3)), ("new_zeros", (2, 3)),
    ("new_ones", (2, 3)), ("flip", (0, 1))]
    for args in [f"{float(a)}, {b}", f"{a}, {float(b)}", f"({float(a)}, {b})",
                 f"({a}, {float(b)})", f"[{a}, {float(b)}]", f"{a}, it", f"{a}, ft",
                 f"({a}, ft)", f"{float(a)}", f"({a}, '{b}')", f"({a}, None)", f"{a}, {b}",
                 f"({a}, {b})", f"{a}, True"]] + [
    f"m.{op}(x, {args})" for op in ("reshape", "permute", "tile", "broadcast_to", "flip")
    for args in ("(1.0, 0)", "(1, 0.0)", "(1, 0)")] + [
    "x.unsqueeze(1.0)", "x.unsqueeze(True)", "x.unsqueeze(it)", "x.transpose(0, 1.0)",
    "x.swapaxes(0.0, 1)", "x.select(0, 1.0)", "x.select(0, it // 3)", "x.flatten(0.0)",
    "x.chunk(2.0)", "x.topk(1.0)", "x.diagonal(0.0)", "x.tril(1.0)", "x.triu(diagonal=1.0)",
    "x.unbind(0.0)", "x.cumsum(1.0)", "x.cumprod(dim=1.0)", "x.gather(1.0, lt)",
    "x.index_select(0.0, lt[0])", "x.narrow(1, 0.0, 2)", "x.narrow(1, it // 3, 2)",
    "x.narrow(1, 0, 2)", "m.arange(3).repeat_interleave(2.0)",
    "m.arange(3).repeat_interleave(m.tensor([1, 2, 0]))", "m.cat([x, x], 1.0)",
    "m.stack([x, x], 0.0)", "m.cat([x, x], 1)", "x[0:1.0]", "x[0:it // 3]", "x[::2.0]",
    "m.nn.functional.one_hot(m.tensor([1]), 3.0)", "m.nn.functional.one_hot(m.tensor([1]), 3)",
    # the top level's size is one sequence (the method spreads it); sizes by keyword
    "m.reshape(x, 6)", "m.reshape(x, 3, 2)", "m.permute(x, 0)", "m.permute(x, 1, 0)",
    "m.tile(x, 2)", "m.broadcast_to(x, 3)", "m.flip(x, 1)", "m.flip(x, dims=1)",
    "m.flip(x, 0, 1)", "m.reshape(x, shape=6)", "m.reshape(x, shape=(6,))",
    "x.reshape(shape=(6,))", "x.reshape(shape=(6.0,))", "x.view(size=(6,))", "x.view(size=6.0)",
    "m.permute(x, dims=(1, 0))", "x.permute(dims=[1, 0])", "x.expand(size=(2, 3))",
    "x.repeat(repeats=(1, 2))", "m.tile(x, dims=(2,))", "x.new_zeros(size=(2,))",
    # one sequence of ints as a parameter: sizes, strides, split sizes, split indices
    "m.as_strided(x, [1.0, 1], [1, 1])", "m.as_strided(x, [1, 1], [1, 1.0])",
    "x.as_strided((2, 2), (1.5, 1))", "x.as_strided((2, 2), (1, 1), 0.0)", "x.as_strided(2, 1)",
    "x.as_strided([2, 2], [1, 2], 1)", "x.split_with_sizes([1.0, 1])",
    "x.split_with_sizes([1, 1.0])", "x.split_with_sizes(2)", "x.split_with_sizes([1, 2], 1)",
    "m.unsafe_split_with_sizes(x, [1.0, 1])", "x.unsafe_split(1.0)", "x.hsplit([1.0])",
    "m.hsplit(x, [1, 1.0])", "m.hsplit(x, 2.0)", "x.hsplit(3)", "x.vsplit([1.0])",
    "x.tensor_split([1.0])", "x.tensor_split(2.0)", "x.tensor_split(m.tensor([1, 2]), 1)",
    "x.tensor_split([1, 2], dim=1)", "x.unflatten(1, (3.0, 1))", "x.unflatten(1, (3, 1.0))",
    "x.unflatten(-1, [3, -1])"]


@pytest.mark.parametrize("call", SIZES)
def test_sizes_and_dims_of_another_type_as_torch(call):
    """A size, a dim, a slice bound given a float, a bool, a float tensor, None or a string
    raises torch's TypeError (``int()`` truncated 2.5 to 2 silently: ``x.view(-1, d / 2)``);
    ints and one-element integer tensors work as in torch."""
    got = []
    for m in (torch, torchlike):
        env = {"m": m, "x": m.ones(2, 3), "it": m.tensor(3), "ft": m.tensor(3.0),
               "lt": m.zeros(2, 1, dtype=m.long)}
        try:
            out = eval(call, env)       # noqa: S307  (a table of calls, written once)
            got.append(("value", tuple(out.shape)))
        except Exception as e:
            got.append((type(e).__name__, str(e).split("\n")[0]))
    assert got[1] == got[0]


# reductions and dim-taking functions: the call's arguments after ``x`` ({D}: the dim; {K}:
# keepdim; {T}: dtype), each in function and method form
DIM_CALLS = {
    **{n: ("{D}", "1, keepdim={K}", "dtype={T}") for n in (
        "sum", "mean", "nansum", "nanmean", "prod")},
    **{n: ("{D}", "1, keepdim={K}", None) for n in (
        "std", "var", "std_mean", "var_mean", "max", "min", "amax", "amin", "argmax", "argmin",
        "all", "any", "logsumexp", "median", "nanmedian", "mode")},
    "aminmax": ("dim={D}", "dim=1, keepdim={K}", None),
    **{n: ("{D}", None, "1, dtype={T}") for n in ("softmax", "log_softmax", "cumsum",
                                                   "cumprod")},
    **{n: ("{D}", None, None) for n in ("cummax", "cummin", "squeeze", "count_nonzero", "sort",
                                        "argsort", "flip")},
    "kthvalue": ("1, {D}", "1, 1, keepdim={K}", None),
    "norm": ("2, {D}", "2, 1, keepdim={K}", "2, 1, dtype={T}"),
    "topk": ("1, {D}", None, None), "unique": ("dim={D}", None, None),
    "roll": ("1, {D}", None, None), "movedim": ("{D}, 0", None, None),
    "split": ("1, {D}", None, None), "chunk": ("2, {D}", None, None),
    "unflatten": ("{D}, (1, 3)", None, None), "diff": ("1, {D}", None, None),
}
DIM_VALUES = ["1.0", "True", "None", "'a'", "[0, 1.0]", "(1.0,)", "ft", "it", "1", "(0, 1)",
              "-1"]
KEEPDIM_VALUES = ["1", "'a'", "None", "True", "0.0"]
DTYPE_VALUES = ["'float32'", "1", "m.float64", "None"]
UNMATCHED = {"x.flip(it)"}      # (spread dims: a 0-d int tensor is iterated; torch takes it)


def _dim_calls():
    for n, (d, k, t) in sorted(DIM_CALLS.items()):
        for pre in (f"m.{n}(x, ", f"x.{n}("):
            if pre.startswith("x.") and n in ("std_mean", "var_mean"):
                continue
            calls = [d.format(D=v) for v in DIM_VALUES]
            calls += [k.format(K=v) for v in KEEPDIM_VALUES] if k else []
            calls += [t.format(T=v) for v in DTYPE_VALUES] if t else []
            for c in calls:
                call = pre + c + ")"
                yield pytest.param(call, id=call, marks=[pytest.mark.xfail(strict=True)]
                                   if call in UNMATCHED else [])


def _dim_outcome(m, call):
    def conv(o):
        if isinstance(o, m.Tensor):
            return (str(o.dtype).split(".")[-1], tuple(o.shape),
                    np.asarray(o.detach().numpy(), np.float64).round(5).tolist())
        if isinstance(o, (tuple, list)):
            return tuple(conv(a) for a in o)
        return o
    env = {"m": m, "x": m.arange(6.).reshape(2, 3), "it": m.tensor(1), "ft": m.tensor(1.0)}
    try:
        return "value", conv(eval(call, env))      # noqa: S307  (a table of calls)
    except Exception as e:      # (the first line: torch lists its overloads after it)
        return type(e).__name__, str(e).split("\n")[0]


@pytest.mark.parametrize("call", list(_dim_calls()))
def test_dims_keepdim_and_dtype_of_another_type_as_torch(call):
    """A dim given a float, a bool, None, a string, a list with a float, a float tensor; keepdim
    given a non-bool; dtype given a non-dtype: torch's TypeError and first line (``int()``
    truncated 1.0 silently, and a cache keyed by ``1.0 == 1`` then served the float's error to
    ints); what torch takes (ints, int tensors, tuples, None where optional) computes as
    torch."""
    assert _dim_outcome(torchlike, call) == _dim_outcome(torch, call)


class _UserThing:
    pass


def test_a_user_class_is_named_bare_in_argument_errors():
    """An instance of a class defined in Python is named by its bare class name in the argument
    parser's TypeError, as torch's ``tp_name`` (torchlike prefixed its module: ``__main__.TL``);
    numpy's types keep theirs."""
    import numpy as np
    import torch

    import torchlike

    def msgs(m):
        out = []
        for f in (lambda: m.zeros(_UserThing()), lambda: m.ones(2, dtype=_UserThing()),
                  lambda: m.zeros(np.float32(2.5))):
            try:
                f()
            except TypeError as e:
                out.append(str(e))
        return out
    assert msgs(torchlike) == msgs(torch)
