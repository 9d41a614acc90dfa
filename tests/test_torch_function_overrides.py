"""``__torch_function__`` on objects that are not Tensors (torch's "Tensor-like" types, as the
``ScalarTensor`` of torch's extending notes): the functions, methods and operators they are passed
to call their handler, with torch's arguments, order and errors (torch is the oracle)."""
import functools

import pytest
import torch

import torchlike as tl


def _record(lib):
    """A Tensor-like type of ``lib`` whose handler records its calls and answers for the
    functions it handles (the others: NotImplemented)."""
    calls = []
    handled = {lib.add, lib.stack, lib.mean, lib.nn.functional.relu, lib.Tensor.mul,
               lib.Tensor.add, lib.linalg.norm, lib.cat, lib.zeros_like}

    class Like:
        def __init__(self, v):
            self.v = v

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            calls.append((func.__name__, [t.__name__ for t in types],
                          [type(a).__name__ for a in args],
                          None if kwargs is None else
                          {k: str(v).replace("torchlike", "torch") for k, v in kwargs.items()}))
            if func in handled:
                return ("handled", func.__name__)
            return NotImplemented

    class Derived(Like):
        pass
    return Like, Derived, calls


CASES = {
    "function": lambda m, s, d: m.add(s, 1, alpha=2),
    "function, second argument": lambda m, s, d: m.add(m.ones(2), s),
    "list argument": lambda m, s, d: m.stack([m.ones(1), s]),
    "tuple argument, keyword": lambda m, s, d: m.cat((s,), dim=1),
    "subclass first": lambda m, s, d: m.add(s, d),
    "reduction": lambda m, s, d: m.mean(s),
    "*_like factory": lambda m, s, d: m.zeros_like(s, dtype=m.float64),
    "*_like factory, declined": lambda m, s, d: m.full_like(s, 2),
    "cat of the object itself": lambda m, s, d: m.cat(s),
    "nn.functional": lambda m, s, d: m.nn.functional.relu(s),
    "linalg": lambda m, s, d: m.linalg.norm(s),
    "method": lambda m, s, d: m.ones(2).add(s),
    "operator": lambda m, s, d: m.ones(2) * s,
    "operator, declined": lambda m, s, d: m.ones(2) - s,
    "function, declined": lambda m, s, d: m.mul(s, 2),
    "method, declined": lambda m, s, d: m.ones(2).sub(s),
    "nn.functional, declined": lambda m, s, d: m.nn.functional.gelu(s),
}


def _outcome(lib, case):
    Like, Derived, calls = _record(lib)
    try:
        out = CASES[case](lib, Like(1), Derived(2))
    except TypeError as e:
        out = ("TypeError", str(e).replace("torchlike", "torch"))
    names = [(n, types, args, kw) for n, types, args, kw in calls]
    return out, names


@pytest.mark.parametrize("case", list(CASES))
def test_tensor_likes_take_over_calls_as_in_torch(case):
    want, want_calls = _outcome(torch, case)
    got, got_calls = _outcome(tl, case)
    assert got == want
    # the handler's arguments: the function (its name), the overriding types in torch's order,
    # the call's arguments; keyword arguments as torch gives them to a native function (None
    # when none were given); torch's Python-defined functions (nn.functional) pass all their
    # keyword parameters, torchlike's those given (DIFFERENCES.md)
    if case == "nn.functional":
        want_calls = [(n, t, a, {}) for n, t, a, _kw in want_calls]
    assert got_calls == want_calls


def test_scalar_tensor_of_torchs_extending_notes():
    """The ``ScalarTensor`` example of torch's notes on extending torch, unchanged."""
    def run(lib):
        HANDLED_FUNCTIONS = {}

        class ScalarTensor:
            def __init__(self, N, value):
                self._N, self._value = N, value

            def tensor(self):
                return self._value * lib.eye(self._N)

            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                if kwargs is None:
                    kwargs = {}
                if func not in HANDLED_FUNCTIONS or not all(
                        issubclass(t, (lib.Tensor, ScalarTensor)) for t in types):
                    return NotImplemented
                return HANDLED_FUNCTIONS[func](*args, **kwargs)

        def implements(torch_function):
            def decorator(func):
                functools.update_wrapper(func, torch_function)
                HANDLED_FUNCTIONS[torch_function] = func
                return func
            return decorator

        @implements(lib.mean)
        def mean(input):
            return float(input._value) / input._N

        d = ScalarTensor(5, 2)
        out = [lib.mean(d)]
        try:
            lib.sum(d)
        except TypeError as e:
            out.append(str(e).replace("torchlike", "torch"))
        return out
    assert run(tl) == run(torch)


def test_overrides_helpers():
    """``has_torch_function*``, ``handle_torch_function`` and ``wrap_torch_function`` see the
    Tensor-like arguments, as torch's."""
    for m in (torch, tl):
        class S:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return ("S", func.__name__, kwargs)
        O = m.overrides
        assert O.has_torch_function((S(),)) and O.has_torch_function_unary(S())
        assert not O.has_torch_function(([S()],))        # (not inside a list: torch's)
        assert not O.has_torch_function_variadic(m.ones(1), 2)
        assert O.handle_torch_function(m.add, (S(),), 1, 2) == ("S", "add", {})

        @O.wrap_torch_function(lambda a, b=None: (a,))
        def f(a, b=None):
            return "plain"
        assert f(1) == "plain" and f(S()) == ("S", "f", {})


def test_plain_calls_still_refuse_other_objects():
    """An object without ``__torch_function__`` is refused as before (torch's TypeError)."""
    class Plain:
        pass
    for m in (torch, tl):
        with pytest.raises(TypeError, match="must be Tensor, not Plain"):
            m.add(m.ones(1), Plain())
        with pytest.raises(TypeError):
            m.ones(1) * Plain()


def test_differences_indexing_and_the_dim_of_cat():
    """DIFFERENCES: an index that overrides ``__torch_function__`` is refused without its
    handler being called (torch calls it with ``Tensor.__getitem__``), and ``cat``/``stack``
    give their handler ``dim`` as a keyword only where it is not 0 (torch: as the call spelled
    it)."""
    seen = {}
    for m in (torch, tl):
        Like, _Derived, calls = _record(m)
        with pytest.raises(TypeError):
            m.ones(2)[Like(0)]          # (torch: its handler declined)
        getitem = [c[0] for c in calls]
        m.cat((Like(0),), dim=0)
        seen[m] = (getitem, calls[-1][3])
    assert seen[torch] == (["__getitem__"], {"dim": "0"})
    assert seen[tl] == ([], None)


def test_a_tensor_of_the_real_torch_is_not_a_handler():
    """A program importing both (a library loading torch): a real torch tensor's default
    ``__torch_function__`` calls the function back, relying on torch's own state, so it is not
    taken as a handler; mixing the two is refused as any other object is (it used to recurse
    without end)."""
    a, b = tl.ones(2), torch.ones(2)
    for f in (lambda: a + b, lambda: tl.add(a, b), lambda: tl.cat([a, b]),
              lambda: tl.nn.functional.relu(b)):
        with pytest.raises(TypeError):
            f()
    assert (a == b) is False and not tl.overrides.has_torch_function((b,))
