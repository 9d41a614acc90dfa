"""Functions given something that is not a tensor where torch wants one: torch's TypeError, in
its words (the tensor queries, and every op family function whose first argument is ``input``)."""
import numpy as np
import pytest
import torch

import torchlike

QUERIES = ["is_floating_point", "is_complex", "is_nonzero", "numel", "is_conj", "is_neg",
           "is_inference", "is_signed", "get_device"]
VALUES = {"float": 3.0, "int": 2, "list": [1.0], "none": None, "bool": True, "str": "x"}


def _error(fn):
    with pytest.raises(Exception) as e:
        fn()
    return type(e.value), str(e.value)


@pytest.mark.parametrize("value", sorted(VALUES))
@pytest.mark.parametrize("name", QUERIES)
def test_query_of_a_non_tensor_raises_as_torch(name, value):
    v = VALUES[value]
    assert _error(lambda: getattr(torchlike, name)(v)) == _error(lambda: getattr(torch, name)(v))


@pytest.mark.parametrize("value", sorted(VALUES))
def test_is_same_size_of_a_non_tensor_raises_as_torch(value):
    v = VALUES[value]
    for args in ((v, "t"), ("t", v)):
        want = _error(lambda: torch.is_same_size(*(torch.zeros(2) if a == "t" else a
                                                   for a in args)))
        got = _error(lambda: torchlike.is_same_size(*(torchlike.zeros(2) if a == "t" else a
                                                      for a in args)))
        assert got == want


@pytest.mark.parametrize("name", QUERIES)
def test_query_of_a_tensor_answers_as_torch(name):
    for make in (lambda m: m.tensor([1.5]), lambda m: m.tensor([3]), lambda m: m.tensor([0j])):
        assert getattr(torchlike, name)(make(torchlike)) == getattr(torch, name)(make(torch))


def _checked():
    from torchlike._ops import _surface
    return sorted({n for n in _surface._CHECKED if hasattr(torch, n) and hasattr(torchlike, n)})


def test_the_sweep_covers_the_op_families():
    names = _checked()
    assert len(names) > 200
    assert {"exp", "sum", "abs", "relu", "sqrt", "matmul", "argmax", "cumsum", "pow"} <= set(names)
    # and the functions declared elsewhere (views, complex parts, statistics, splits)
    assert {"softmax", "squeeze", "poisson", "resolve_conj", "rsub", "unique", "real",
            "clone"} <= set(names)


def test_every_function_of_input_refuses_a_non_tensor_as_torch():
    """Every top-level function both have whose first argument is ``input``, called with a
    float there and one to three arguments, raises where torch raises, with torch's exception
    class (``torch.poisson(1.0)``, ``torch.rsub(1.0, 0)`` computed values)."""
    import inspect
    import warnings
    wrong = []
    for name in sorted(dir(torchlike)):
        f = getattr(torchlike, name, None)
        if name.startswith("_") or not hasattr(torch, name) or not callable(f) or \
                isinstance(f, type) or name in ("add", "sub", "subtract"):
            continue        # (add(1.0, 0, 1.0): torch's deprecated (input, alpha, other) form)
        try:
            params = list(inspect.signature(f).parameters)
        except (TypeError, ValueError):
            continue
        if not params or params[0] != "input":
            continue
        for args in ((1.0,), (1.0, 0), (1.0, 1.0, 1.0)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    getattr(torch, name)(*args)
                    want = None
                except Exception as e:
                    want = type(e)
                try:
                    getattr(torchlike, name)(*args)
                    got = None
                except Exception as e:
                    got = type(e)
            if got is not want:
                wrong.append((name, len(args), want, got))
    assert not wrong, wrong


@pytest.mark.parametrize("value", ["float", "int", "list"])
def test_a_function_of_a_non_tensor_input_raises_typeerror_as_torch(value):
    """``torch.exp(2.0)`` raises TypeError (a value there would be a silent difference); where
    torch names the argument, the message is torch's."""
    v = VALUES[value]
    wrong = []
    for name in _checked():
        want = _error(lambda: getattr(torch, name)(v))
        try:
            got = _error(lambda: getattr(torchlike, name)(v))
        except BaseException as e:      # (pytest.raises' failure: no exception)
            wrong.append((name, "no error", repr(e)[:60]))
            continue
        if want[0] is TypeError and "must be Tensor, not" in want[1]:
            if got != want:
                wrong.append((name, got, want))
        elif want[0] is TypeError and got[0] is not TypeError:
            wrong.append((name, got, want))
    assert not wrong, wrong


@pytest.mark.parametrize("name", ["pow", "remainder", "float_power", "xlogy", "bitwise_and",
                                  "bitwise_or", "bitwise_xor", "bitwise_left_shift",
                                  "bitwise_right_shift"])
def test_a_number_as_input_needs_a_tensor_as_the_other_argument(name):
    for m in (torch, torchlike):
        with pytest.raises(TypeError):
            getattr(m, name)(2, 3)
    got = getattr(torchlike, name)(2, torchlike.tensor([1, 3]))
    want = getattr(torch, name)(2, torch.tensor([1, 3]))
    assert got.tolist() == want.tolist() and str(got.dtype) == str(want.dtype)


def test_arithmetic_takes_two_numbers_as_torch():
    for name in ("add", "sub", "mul", "div", "floor_divide", "true_divide"):
        got, want = getattr(torchlike, name)(7, 2), getattr(torch, name)(7, 2)
        assert got.item() == want.item() and str(got.dtype) == str(want.dtype), name


@pytest.mark.parametrize("value", ["float", "int", "list"])
@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "rand_like",
                                  "randn_like", "full_like", "randint_like"])
def test_a_like_factory_of_a_non_tensor_raises_as_torch(name, value):
    v = VALUES[value]
    args = (v, 3) if name in ("full_like", "randint_like") else (v,)
    got = _error(lambda: getattr(torchlike, name)(*args))
    want = _error(lambda: getattr(torch, name)(*args))
    assert got[0] is want[0] is TypeError
    if "must be Tensor, not" in want[1]:        # (else torch lists its overloads: DIFFERENCES)
        assert got == want


_ACTIVATIONS = ["gelu", "relu", "silu", "sigmoid", "tanh", "softplus", "elu", "leaky_relu",
                "hardtanh", "selu", "celu", "mish", "logsigmoid", "softsign", "relu6", "hardswish",
                "hardsigmoid", "softshrink", "hardshrink", "tanhshrink", "rrelu", "glu",
                "softmax", "log_softmax", "dropout", "layer_norm", "linear", "embedding",
                "cross_entropy", "mse_loss", "one_hot", "pad", "normalize"]


@pytest.mark.parametrize("value", ["float", "int", "list"])
def test_nn_functional_of_a_non_tensor_raises_as_torch(value):
    """``F.gelu(1.0)`` raises TypeError in torch (its native refuses it), ``F.sigmoid(1.0)``
    AttributeError (Python code reading a Tensor attribute): every function of
    ``nn.functional`` both have, called with a non-Tensor first argument and one to three
    arguments, raises torch's exception class (a value would be a silent difference), with
    torch's message for the common functions' one-argument call. (Where torch first refuses
    another argument's value, torchlike refuses the Tensor: both raise.)"""
    import inspect
    import warnings
    v = VALUES[value]
    TF, LF = torch.nn.functional, torchlike.nn.functional
    names = sorted(n for n in dir(TF) if not n.startswith("_") and hasattr(LF, n)
                   and inspect.isfunction(getattr(LF, n)) and callable(getattr(TF, n)))
    assert len(names) > 120 and set(_ACTIVATIONS) <= set(names)
    wrong = []
    for name in names:
        for n in (1, 2, 3):
            args = (v,) * n
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = _error(lambda: getattr(TF, name)(*args))
                got = _error(lambda: getattr(LF, name)(*args))
            if want[0] is ValueError or "not supported between instances" in want[1] or \
                    "bad operand type" in want[1]:
                continue        # (torch refused another argument's value first)
            if got[0] is not want[0] or (n == 1 and name in _ACTIVATIONS and got != want):
                wrong.append((name, n, want, got))
    assert not wrong, "\n".join(f"{w[0]} {w[1]}: torch {w[2][0].__name__} {w[2][1][:70]!r} "
                                 f"torchlike {w[3][0].__name__} {w[3][1][:70]!r}" for w in wrong)


# Python's operators with an operand torch's operators do not take (a list, a tuple, None, a
# string, a dict, any object): torch returns NotImplemented, so Python raises its TypeError, or
# compares identities for == and != (``x == None`` is False, ``x == [1, 1]`` is False: no
# elementwise comparison). Numbers and numpy scalars are taken.
OPERATOR_CASES = {
    "eq_none": lambda m, x: x == None,  # noqa: E711
    "ne_none": lambda m, x: x != None,  # noqa: E711
    "none_eq": lambda m, x: None == x,  # noqa: E711
    "eq_str": lambda m, x: x == "a", "ne_str": lambda m, x: x != "a",
    "eq_object": lambda m, x: x == object(), "eq_list": lambda m, x: x == [1, 1],
    "eq_tuple": lambda m, x: x == (1, 1), "eq_dict": lambda m, x: x == {},
    "lt_none": lambda m, x: x < None, "add_none": lambda m, x: x + None,
    "add_list": lambda m, x: x + [1, 1], "list_add": lambda m, x: [1, 1] + x,
    "mul_none": lambda m, x: x * None, "pow_none": lambda m, x: x ** None,
    "and_none": lambda m, x: x & None, "matmul_list": lambda m, x: x @ [1.0, 1.0],
    "list_truediv": lambda m, x: [1.0, 1.0] / x, "tuple_mul": lambda m, x: (1,) * x,
    "iadd_list": lambda m, x: x.__iadd__([1, 1]),
    "add_numpy_scalar": lambda m, x: x + np.float32(2), "add_bool": lambda m, x: x + True,
    "mul_complex": lambda m, x: x * (2 + 1j), "rsub": lambda m, x: 2 - x,
    "rpow": lambda m, x: 2 ** x, "eq_tensor": lambda m, x: x == x,
}


@pytest.mark.parametrize("name", OPERATOR_CASES)
def test_operators_with_an_operand_torch_does_not_take(name):
    seen = []
    for m in (torch, torchlike):
        try:
            seen.append(repr(OPERATOR_CASES[name](m, m.ones(2))).replace("torchlike", "torch"))
        except Exception as e:  # noqa: BLE001
            seen.append((type(e).__name__, str(e)))
    assert seen[1] == seen[0]
