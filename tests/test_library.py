"""torch.library and torch.ops against torch 2.13: the same program runs on both modules and
its values, schemas, gradients, version counters, warnings and errors (class and message)
are compared.

Each test uses its own operator namespaces (torch's registry is process-wide).
``python tests/test_library.py --aten-overloads`` regenerates
``torchlike/_library/aten_overloads.py`` from torch.
"""

import itertools
import os
import sys
import warnings

import numpy as np
import pytest
import torch

import torchlike as tl

_count = itertools.count()


def _ns(tag):
    return f"tlt_{tag}_{next(_count)}"


def _plain(v):
    if isinstance(v, (torch.Tensor, tl.Tensor)):
        return ("T", str(v.dtype).split(".")[-1], tuple(v.shape),
                np.asarray(v.detach().tolist()).round(5).tolist() if v.device.type != "meta"
                else "meta")
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [_plain(x) for x in v])
    return v


def outcome(f):
    """``("ok", value)`` or ``(exception class name, message)``."""
    try:
        return ("ok", _plain(f()))
    except Exception as e:         # noqa: BLE001 - the class is what is compared
        return (type(e).__name__, str(e))


def both(program):
    """Run ``program(m)`` with m = torch, then torchlike; return both results."""
    ns = _ns(program.__name__)
    return program(torch, ns), program(tl, ns)


def same(program):
    a, b = both(program)
    assert a == b
    return a


# ------------------------------------------------------------------ custom_op

def test_custom_op_values_names_and_schema():
    def prog(m, ns):
        @m.library.custom_op(f"{ns}::scale", mutates_args=())
        def scale(x: m.Tensor, k: float = 2.0, n: int = 1) -> m.Tensor:
            return x * k * n
        x = m.tensor([1.0, 2.0])
        packet = getattr(m.ops, ns).scale
        return [repr(scale).replace(ns, "NS"), str(packet).replace(ns, "NS"),
                repr(packet).replace(ns, "NS"), str(packet.default).replace(ns, "NS"),
                repr(packet.default).replace(ns, "NS"), packet.default.name().replace(ns, "NS"),
                packet.default.__name__, packet.overloads(), packet.default._overloadname,
                str(packet.default._schema).replace(ns, "NS"), scale._schema,
                packet.default.namespace == ns, packet.default.overloadpacket is packet,
                _plain(scale(x)), _plain(packet(x, 3.0)), _plain(packet.default(x, k=1.0, n=3)),
                outcome(lambda: scale(x, 1.5, 2.5)), outcome(lambda: packet(x, bad=1)),
                outcome(lambda: packet(1.0)), outcome(lambda: packet())]
    res = same(prog)
    assert res[9] == "NS::scale(Tensor x, float k=2., SymInt n=1) -> Tensor"
    assert res[13][3] == [2.0, 4.0]


def test_custom_op_autograd_formula_hooks_and_saved_tensors():
    def prog(m, ns):
        @m.library.custom_op(f"{ns}::mysin", mutates_args=())
        def mysin(x: m.Tensor) -> m.Tensor:
            return x.sin()

        calls = []

        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)
            calls.append(("setup", type(inputs).__name__, _plain(output)))

        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            calls.append(("backward", ctx.needs_input_grad))
            return g * x.cos()

        mysin.register_autograd(backward, setup_context=setup_context)
        x = m.tensor([0.5, 1.0, 2.0], requires_grad=True)
        x.register_hook(lambda g: calls.append(("x hook", _plain(g))))
        y = getattr(m.ops, ns).mysin(x)
        y.register_hook(lambda g: g * 2)
        (y * y).sum().backward()
        with m.no_grad():
            z = mysin(x)
        return [calls, _plain(x.grad), y.grad_fn.name().replace(ns, "NS"), y.requires_grad,
                z.requires_grad, type(y.grad_fn).__name__.replace(ns, "NS")]
    res = same(prog)
    assert res[2] == "GeneratedBackwardFor_NS_mysin_defaultBackward"
    assert res[0][1][0] == "backward"


def test_custom_op_without_autograd_formula_raises_at_backward():
    def prog(m, ns):
        @m.library.custom_op(f"{ns}::f", mutates_args=())
        def f(x: m.Tensor) -> m.Tensor:
            return x * 2
        x = m.ones(2, requires_grad=True)
        y = f(x)
        r = outcome(lambda: y.sum().backward())
        return [y.requires_grad, r[0], r[1].replace(ns, "NS"), f(m.ones(2)).requires_grad]
    res = same(prog)
    assert res[1] == "RuntimeError" and "no autograd formula was registered" in res[2]


def test_custom_op_tensor_lists_several_outputs_and_keyword_only_inputs():
    def prog(m, ns):
        from typing import List, Tuple

        @m.library.custom_op(f"{ns}::g", mutates_args=())
        def g(xs: List[m.Tensor], w: float) -> Tuple[m.Tensor, m.Tensor]:
            return xs[0] * w, xs[1] + w
        seen = []

        def bw(ctx, g1, g2):
            seen.append(ctx.needs_input_grad)
            return [g1 * ctx.w, g2], None

        def sc(ctx, inputs, output):
            seen.append((type(inputs).__name__, type(inputs[0]).__name__, len(output)))
            ctx.w = inputs[1]
        g.register_autograd(bw, setup_context=sc)
        a = m.ones(2, requires_grad=True)
        b = m.ones(2, requires_grad=True)
        o1, o2 = g([a, b], 3.0)
        (o1.sum() + (o2 * o2).sum()).backward()

        @m.library.custom_op(f"{ns}::h", mutates_args=())
        def h(x: m.Tensor, *, k: float) -> List[m.Tensor]:
            return [x * k, x + k]

        def sc2(ctx, inputs, keyword_only_inputs, output):
            seen.append(dict(keyword_only_inputs))
            ctx.k = keyword_only_inputs["k"]
        h.register_autograd(lambda ctx, gs: gs[0] * ctx.k + gs[1], setup_context=sc2)
        x = m.ones(2, requires_grad=True)
        r = h(x, k=2.0)
        (r[0].sum() + r[1].sum()).backward()
        return [str(g._opoverload._schema).replace(ns, "NS"), h._schema, seen, _plain(a.grad),
                _plain(b.grad), type(r).__name__, _plain(x.grad)]
    same(prog)


def test_custom_op_mutation_bumps_the_version_counter():
    def prog(m, ns):
        @m.library.custom_op(f"{ns}::addone_", mutates_args=("x",))
        def addone_(x: m.Tensor) -> None:
            x.add_(1)

        @m.library.custom_op(f"{ns}::fill_into", mutates_args=["out"])
        def fill_into(x: m.Tensor, out: m.Tensor) -> None:
            out.copy_(x * 3)
        t = m.zeros(2)
        v0 = t._version
        r = addone_(t)
        v1 = t._version
        o = m.zeros(2)
        fill_into(m.ones(2), o)
        # a saved tensor written by the op fails the backward
        w = m.ones(2, requires_grad=True)
        s = w * 1
        y = (s * s).sum()
        getattr(m.ops, ns).addone_(s)
        err = outcome(lambda: y.backward())
        return [r, v1 - v0, _plain(t), _plain(o), o._version, err[0],
                err[1].split(":")[0], addone_._schema,
                outcome(lambda: addone_.register_autograd(lambda ctx, g: g))[0]]
    res = same(prog)
    assert res[1] == 2 and res[2][3] == [1.0, 1.0]


def test_custom_op_output_may_not_alias_an_input():
    def prog(m, ns):
        @m.library.custom_op(f"{ns}::ident", mutates_args=())
        def ident(x: m.Tensor) -> m.Tensor:
            return x

        @m.library.custom_op(f"{ns}::view", mutates_args=())
        def view(x: m.Tensor) -> m.Tensor:
            return x[1:]
        a = outcome(lambda: ident(m.ones(2)))
        b = outcome(lambda: view(m.ones(3)))
        return [(a[0], a[1].split(" (with implementation")[0],
                 a[1].split("): ", 1)[1]), (b[0], b[1].split(": ", 1)[-1][:60])]
    res = same(prog)
    assert res[0][0] == "RuntimeError"


def test_custom_op_redefinition_replaces_the_operator():
    def prog(m, ns):
        @m.library.custom_op(f"{ns}::op", mutates_args=())
        def op1(x: m.Tensor) -> m.Tensor:
            return x + 1

        first = _plain(op1(m.zeros(1)))

        @m.library.custom_op(f"{ns}::op", mutates_args=())
        def op2(x: m.Tensor) -> m.Tensor:
            return x + 2
        # (not op1 again: torch's replaced operator object then reads freed state, a
        # std::bad_alloc in some processes)
        return [first, _plain(op2(m.zeros(1))), _plain(getattr(m.ops, ns).op(m.zeros(1)))]
    res = same(prog)
    assert res[0][3] == [1.0] and res[1][3] == [2.0] and res[2][3] == [2.0]


def test_custom_op_device_kernels_and_set_kernel_enabled():
    def prog(m, ns):
        @m.library.custom_op(f"{ns}::k", mutates_args=(), device_types="cpu")
        def k(x: m.Tensor) -> m.Tensor:
            return x + 1
        r1 = k(m.zeros(1))

        @k.register_kernel("cpu")
        def _(x):
            return x + 10
        r2 = k(m.zeros(1))
        with k.set_kernel_enabled("cpu", False):
            r3 = k(m.zeros(1))
        r4 = k(m.zeros(1))
        m.library.register_kernel(k, "cpu", lambda x: x + 100)
        r5 = k(m.zeros(1))
        return [_plain(r) for r in (r1, r2, r3, r4, r5)]
    assert [r[3] for r in same(prog)] == [[1.0], [10.0], [1.0], [10.0], [100.0]]


def test_fake_impls_run_on_meta_tensors():
    def prog(m, ns):
        @m.library.custom_op(f"{ns}::f", mutates_args=())
        def f(x: m.Tensor, n: int = 2) -> m.Tensor:
            return x.repeat(n)
        xm = m.empty(3, device="meta")
        no_fake = outcome(lambda: f(xm))

        @f.register_fake
        def _(x, n=2):
            return x.new_empty(x.shape[0] * n)
        y = f(xm, 3)

        @f.register_fake
        def _(x, n=2):
            ctx = m.library.get_ctx()
            return x.new_empty(ctx.new_dynamic_size())
        dyn = outcome(lambda: f(xm))
        return [no_fake[0], no_fake[1].replace(ns, "NS"), tuple(y.shape), y.device.type,
                dyn[0], dyn[1].split("): ", 1)[-1], m.library.get_ctx()]
    same(prog)


def test_infer_schema():
    from typing import List, Optional, Sequence

    def prog(m, ns):
        T = m.Tensor

        def a(x: T, y: Optional[T], n: int, f: float = 1.5, b: bool = True,
              s: str = "sum", dims: List[int] = None, *, scale: float = 1.0) -> T: ...

        def b(xs: Sequence[T], out: T, dt: Optional[m.dtype] = None) -> List[T]: ...

        def c(x: T, k: Optional[int] = None) -> None: ...

        def d(x: T, y: T) -> "tuple[T, T, int]": ...

        def bad1(x) -> T: ...

        def bad2(x: T, y: dict) -> T: ...

        def bad3(x: T, *args: T) -> T: ...

        def bad4(x: T) -> dict: ...

        def bad5(x: T): ...
        cases = [(a, ()), (b, ("out",)), (c, "unknown"), (d, ()), (bad1, ()), (bad2, ()),
                 (bad3, ()), (bad4, ()), (bad5, ()), (a, ("n",)), (a, ("zz",)), (a, "other")]
        # (torch's list of valid types ends with torch.distributed's GroupName)
        gn = "torch.distributed.distributed_c10d.GroupName"
        return [tuple(x.replace(f", {gn}, typing.Optional[{gn}]", "") for x in
                      outcome(lambda f=f, mut=mut: m.library.infer_schema(f, mutates_args=mut)))
                for f, mut in cases] + [m.library.infer_schema(c, mutates_args=(), op_name="c")]
    res = same(prog)
    assert res[0] == ("ok", "(Tensor x, Tensor? y, SymInt n, float f=1.5, bool b=True, "
                            "str s=\"sum\", SymInt[] dims=None, *, float scale=1.0) -> Tensor")
    assert res[4][0] == "ValueError"


# ------------------------------------------------------------------ Library

_BAD_SCHEMAS = ["q1(Tensor x) -> ", "q2(Tensor x,) -> Tensor", "q3(Tensor) -> Tensor",
                "q5(Tensor x, int n=) -> Tensor", "q9(Tensor x, int n=1, Tensor y) -> Tensor",
                "other::q10(Tensor x) -> Tensor", "q11.(Tensor x) -> Tensor",
                "q12(Tensor x) => Tensor", "q13(tensor x) -> Tensor", "q15(Tensor(a!!) x) -> ()",
                "", "q16(Tensor x, float y=1.0e) -> Tensor", "bar(Tensor x -> Tensor",
                "bar(Tensor x)", "bar(Foo x) -> Tensor"]


def test_library_define_schemas_and_their_errors():
    good = ["foo(Tensor x, int n=2, *, float scale=1.0) -> Tensor",
            "baz(Tensor x, float a=1e-5, float b=0.1, float c=100., float d=-2.5, int[2] e=1, "
            "str f=\"x\", Tensor? g=None, ScalarType? dt=None, Device? dev=None, "
            "SymInt[] sz=[]) -> (Tensor, Tensor a)",
            "baz2(Tensor(a) self) -> Tensor(a)", "baz3(Tensor[] xs) -> Tensor[]",
            "baz4(Tensor(a!) x, Tensor(b!)[] y) -> ()", "baz5(Tensor x) -> (Tensor)",
            "baz6(Tensor x) -> (Tensor, int)", "baz7(Tensor x, *, Tensor(a!) out) -> Tensor(a!)",
            "baz8(Tensor? x, float[]? y, int?[] z, Any q, Layout l, MemoryFormat m, "
            "Generator? g) -> Scalar", "baz9.over(Tensor x, int[] l=[1, 2], bool b=False) -> Tensor"]

    def prog(m, ns):
        lib = m.library.Library(ns, "DEF")
        out = [repr(lib).replace(ns, "NS")]
        for s in good:
            name = lib.define(s)
            op, _, ov = s.split("(")[0].partition(".")
            out.append((name, str(getattr(getattr(getattr(m.ops, ns), op), ov or "default")
                                  ._schema).replace(ns, "NS")))
        for s in _BAD_SCHEMAS:
            r = outcome(lambda s=s: lib.define(s))
            out.append((r[0], r[1].split("(Error occurred")[0].replace(ns, "NS")))
        r = outcome(lambda: lib.define("foo(Tensor x) -> Tensor"))
        out.append((r[0], r[1].split("Duplicate registration")[0].replace(ns, "NS")))
        out.append(outcome(lambda: lib.define("ok(Tensor x) -> Tensor", alias_analysis="PURE")))
        r = outcome(lambda: m.library.Library(ns, "DEF"))
        out.append((r[0], r[1].split("Previous registration")[0].replace(ns, "NS")))
        out.append(outcome(lambda: m.library.Library(ns, "BAD")))
        out.append(outcome(lambda: m.library.Library("prim", "DEF")))
        out.append(outcome(lambda: m.library.define(f"{ns}::zz", "zz(Tensor x) -> Tensor")))
        out.append(outcome(lambda: m.library.define("nonamespace", "(Tensor x) -> Tensor")))
        lib._destroy()
        return out
    res = same(prog)
    assert res[1] == ("foo", "NS::foo(Tensor x, int n=2, *, float scale=1.) -> Tensor")
    assert all(r[0] == "RuntimeError" for r in res[len(good) + 1:len(good) + 1 + 15])


def test_library_kernels_receive_torchs_boxed_arguments():
    def prog(m, ns):
        lib = m.library.Library(ns, "DEF")
        lib.define("foo(Tensor x, int n=2, float f=1.5, int[] l=[1,2], Scalar s=1, *, "
                   "float scale=1.0, str mode='a', bool b=False, int? o=None) -> Tensor")
        got = []

        def k(*args, **kw):
            got.append(([a if not isinstance(a, m.Tensor) else "T" for a in args],
                        sorted(kw.items())))
            return args[0].clone()
        lib.impl("foo", k, "CPU")
        x = m.ones(2)
        op = getattr(m.ops, ns).foo
        calls = [lambda: op(x), lambda: op(x, 2), lambda: op(x, 3), lambda: op(x, 2, 3),
                 lambda: op(x, 2, 1.5, (3, 4)), lambda: op(x, s=2.5), lambda: op(x, scale=2),
                 lambda: op(x, n=True), lambda: op(x, b=1), lambda: op(x, o=3),
                 lambda: op(x=x), lambda: op(x, m.tensor(2.5)), lambda: op(x, m.tensor([3])),
                 lambda: op(x, 3, m.tensor(2)), lambda: op(x, f="a"), lambda: op(x, l=[1.5]),
                 lambda: op(x, mode=1), lambda: op(x, o=1.5), lambda: op(x, x=x),
                 lambda: op(x, s=x), lambda: op(x, l=3), lambda: op(x, 2, 3, [], 1, 5),
                 lambda: op(), lambda: op(2), lambda: op(x, bogus=1),
                 lambda: op(x, m.tensor([3, 4]))]
        res = []
        for c in calls:
            r = outcome(c)
            res.append((r[0], r[1].replace(ns, "NS") if isinstance(r[1], str) else r[1]))
        lib._destroy()
        return [res, got]
    same(prog)


def test_library_dispatch_keys_missing_kernels_and_returns():
    def prog(m, ns):
        lib = m.library.Library(ns, "FRAGMENT")
        for s in ["noimpl(Tensor x) -> Tensor", "ci(Tensor x) -> Tensor",
                  "ce(Tensor x) -> Tensor", "dflt(Tensor x) -> Tensor",
                  "r1(Tensor x) -> Tensor", "r2(Tensor x) -> (Tensor, Tensor)",
                  "r3(Tensor x) -> ()", "r4(Tensor x) -> Tensor", "r5(Tensor x) -> Tensor[]"]:
            lib.define(s)
        lib.impl("ci", lambda x: x * x, "CompositeImplicitAutograd")
        lib.impl("ce", lambda x: x * 3, "CompositeExplicitAutograd")
        lib.impl("dflt", lambda x: x - 1)
        lib.impl("r1", lambda x: (x, x), "CPU")
        lib.impl("r2", lambda x: [x + 1, x + 2], "CPU")
        lib.impl("r3", lambda x: x, "CPU")
        lib.impl("r4", lambda x: 3, "CPU")
        lib.impl("r5", lambda x: (x + 1, x), "CPU")
        ops = getattr(m.ops, ns)
        x = m.ones(2)
        miss = outcome(lambda: ops.noimpl(x))
        out = [(miss[0], miss[1].split(" This could")[0].replace(ns, "NS"))]
        for name in ("ci", "ce", "dflt", "r1", "r2", "r3", "r4", "r5"):
            r = outcome(lambda name=name: getattr(ops, name)(x))
            out.append((r[0], r[1].replace(ns, "NS") if isinstance(r[1], str) else r[1]))
        lib2 = m.library.Library(ns, "IMPL", "CompositeExplicitAutograd")
        lib2.impl("noimpl", lambda x: x + 5)
        out.append(_plain(ops.noimpl(x)))
        lib2._destroy()
        out.append(outcome(lambda: ops.noimpl(x))[0])
        lib._destroy()
        return out
    res = same(prog)
    assert res[0][0] == "NotImplementedError"


def test_library_autograd_fallback_warns_and_composite_implicit_differentiates():
    def prog(m, ns):
        lib = m.library.Library(ns, "DEF")
        lib.define("mul2(Tensor x) -> Tensor")
        lib.define("npsin(Tensor x) -> Tensor")
        lib.define("ci(Tensor x) -> Tensor")
        lib.impl("mul2", lambda x: x * 2, "CPU")
        lib.impl("npsin", lambda x: m.from_numpy(np.sin(x.detach().numpy())), "CPU")
        lib.impl("ci", lambda x: x * x, "CompositeImplicitAutograd")
        ops = getattr(m.ops, ns)
        out = []
        for name in ("mul2", "npsin", "ci"):
            x = m.ones(2, requires_grad=True)
            y = getattr(ops, name)(x)
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                (y * y).sum().backward()
            out.append((name, y.requires_grad, _plain(x.grad),
                        [(c.category.__name__, str(c.message).replace(ns, "NS")[:200])
                         for c in w]))
        with m.no_grad():
            out.append(ops.mul2(m.ones(2, requires_grad=True)).requires_grad)
        lib._destroy()
        return out
    res = same(prog)
    assert res[0][3] and res[2][3] == []


def test_library_mutable_op_does_not_bump_versions_itself():
    def prog(m, ns):
        lib = m.library.Library(ns, "DEF")
        lib.define("inc_(Tensor(a!) x) -> ()")
        lib.impl("inc_", lambda x: (x.add_(1), None)[1], "CPU")
        t = m.zeros(2)
        v = t._version
        getattr(m.ops, ns).inc_(t)
        lib._destroy()
        return [t._version - v, _plain(t)]
    assert same(prog)[0] == 1


def test_library_functions_define_impl_register_fake_register_autograd():
    def prog(m, ns):
        m.library.define(f"{ns}::lin", "(Tensor x, Tensor w, float s=1.0) -> Tensor")

        @m.library.impl(f"{ns}::lin", "cpu")
        def lin(x, w, s=1.0):
            return (x * w) * s

        @m.library.register_fake(f"{ns}::lin")
        def _(x, w, s=1.0):
            return m.empty_like(x)

        def setup(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], inputs[1])
            ctx.s = inputs[2]

        def bw(ctx, g):
            x, w = ctx.saved_tensors
            return g * w * ctx.s, g * x * ctx.s, None
        m.library.register_autograd(f"{ns}::lin", bw, setup_context=setup)
        x = m.tensor([1.0, 2.0], requires_grad=True)
        w = m.tensor([3.0, 4.0], requires_grad=True)
        y = getattr(m.ops, ns).lin(x, w, 2.0)
        y.sum().backward()
        meta = getattr(m.ops, ns).lin(m.empty(2, device="meta"), m.empty(2, device="meta"))
        errs = [outcome(lambda: m.library.register_fake(f"{ns}::nonexist", lambda x: x)),
                outcome(lambda: m.library.register_autograd(f"{ns}::nonexist", lambda x: x)),
                outcome(lambda: m.library.impl(f"{ns}::lin", "blah", lambda x: x)),
                outcome(lambda: m.library.register_fake(3, lambda x: x))]
        m.library.define(f"{ns}::mut", "(Tensor(a!) x) -> ()")
        errs.append(outcome(lambda: m.library.register_autograd(f"{ns}::mut", bw)))
        with warnings.catch_warnings(record=True) as w_:
            warnings.simplefilter("always")
            m.library.impl_abstract(f"{ns}::mut", lambda x: None)
        return [_plain(y), _plain(x.grad), _plain(w.grad), y.grad_fn.name().replace(ns, "NS"),
                meta.device.type, tuple(meta.shape),
                [(e[0], e[1].replace(ns, "NS")) for e in errs],
                [c.category.__name__ for c in w_]]
    same(prog)


def test_library_legacy_decorators_and_scoped_library():
    def prog(m, ns):
        lib = m.library.Library(ns, "DEF")

        @m.library.define(lib, "twice(Tensor x) -> Tensor")
        def twice(x):
            return x * 2
        lib.define("thrice(Tensor x) -> Tensor")

        @m.library.impl(lib, "thrice", "CPU")
        def thrice(x):
            return x * 3
        r = [_plain(getattr(m.ops, ns).twice(m.ones(1))),
             _plain(getattr(m.ops, ns).thrice(m.ones(1)))]
        ns2 = ns + "_s"
        with m.library._scoped_library(ns2, "FRAGMENT") as slib:
            slib.define("f(Tensor x) -> Tensor")
            slib.impl("f", lambda x: x + 1, "CPU")
            r.append(_plain(getattr(m.ops, ns2).f(m.ones(1))))
            r.append(getattr(m.ops, ns2).f.overloads())
        after = outcome(lambda: getattr(m.ops, ns2).f)
        r.append((after[0], after[1].replace(ns2, "NS")))
        r.append(outcome(lambda: lib.impl("thrice", 3, "CPU")))
        r.append(outcome(lambda: lib.impl("thrice", thrice, "CPU", allow_override=False)))
        lib._destroy()
        return r
    same(prog)


# ------------------------------------------------------------------ torch.ops

def test_ops_overloads_packets_and_lookup_errors():
    def prog(m, ns):
        lib = m.library.Library(ns, "DEF")
        lib.define("foo(Tensor x) -> Tensor")
        lib.define("foo.two(Tensor x, Tensor y) -> Tensor")
        lib.define("bar.ov(Tensor x, SymInt[] s, SymInt n, Tensor[] ts, Tensor? o) -> Tensor")
        lib.impl("foo", lambda x: x + 1, "CPU")
        lib.impl("foo.two", lambda x, y: x + y, "CPU")
        lib.impl("bar.ov", lambda *a: a[0] + 1, "CPU")
        ops = getattr(m.ops, ns)
        o = m.ones(1)
        calls = [lambda: ops.foo(o), lambda: ops.foo(o, o), lambda: ops.foo(1),
                 lambda: ops.foo(o, o, o), lambda: ops.foo.two(o),
                 lambda: ops.bar.ov(o, [1.5], 1, [], None), lambda: ops.bar.ov(o, [1], 1.5, [], None),
                 lambda: ops.bar.ov(o, [1], 1, [1], None), lambda: ops.bar.ov(o, [1], 1, [], 1),
                 lambda: ops.bar(o, [1], 1, (o,), None), lambda: ops.bar.default,
                 lambda: ops.nosuch, lambda: ops.foo.default is ops.foo.default,
                 lambda: ops.foo.overloads(), lambda: ops.bar.overloads(),
                 lambda: sorted(ops), lambda: ops.bar.ov.__name__, lambda: ops.bar.ov.name(),
                 lambda: (ops.foo.default.namespace, ops.foo.default._opname)]
        res = []
        for c in calls:
            r = outcome(c)
            res.append((r[0], r[1].replace(ns, "NS") if isinstance(r[1], str) else r[1]))
        lib._destroy()
        return res
    res = same(prog)
    assert res[2][0] == "RuntimeError" and "failed to match any schema" in res[2][1]


_ATEN_CALLS = [
    ("add.Tensor", lambda m, x: m.ops.aten.add.Tensor(x, x, alpha=2)),
    ("add", lambda m, x: m.ops.aten.add(x, 1)),
    ("add.Scalar", lambda m, x: m.ops.aten.add.Scalar(x, 1)),
    ("add self=", lambda m, x: m.ops.aten.add(self=x, other=x)),
    ("mm.default", lambda m, x: m.ops.aten.mm.default(x, x.t())),
    ("relu", lambda m, x: m.ops.aten.relu(x - 2)),
    ("relu.default", lambda m, x: m.ops.aten.relu.default(x - 2)),
    ("view", lambda m, x: m.ops.aten.view(x, [3, 2])),
    ("view.default", lambda m, x: m.ops.aten.view.default(x, [6])),
    ("sum.dim_IntList", lambda m, x: m.ops.aten.sum.dim_IntList(x, [1])),
    ("sum.default", lambda m, x: m.ops.aten.sum.default(x)),
    ("mean.dim", lambda m, x: m.ops.aten.mean.dim(x, [0], True)),
    ("expand", lambda m, x: m.ops.aten.expand.default(m.ones(1, 3), [2, 3])),
    ("permute", lambda m, x: m.ops.aten.permute.default(x, [1, 0])),
    ("t", lambda m, x: m.ops.aten.t.default(x)),
    ("slice", lambda m, x: m.ops.aten.slice.Tensor(x, 1, 0, 2)),
    ("select", lambda m, x: m.ops.aten.select.int(x, 1, 2)),
    ("index", lambda m, x: m.ops.aten.index.Tensor(x, [m.tensor([1, 0])])),
    ("_to_copy", lambda m, x: m.ops.aten._to_copy.default(x, dtype=m.int32)),
    ("_softmax", lambda m, x: m.ops.aten._softmax.default(x, 1, False)),
    ("clone", lambda m, x: m.ops.aten.clone.default(x)),
    ("addmm", lambda m, x: m.ops.aten.addmm.default(m.ones(2), x, x.t())),
    ("gelu", lambda m, x: m.ops.aten.gelu.default(x, approximate="tanh")),
    ("linalg_vector_norm", lambda m, x: m.ops.aten.linalg_vector_norm.default(x)),
    ("zeros", lambda m, x: m.ops.aten.zeros.default([2])),
    ("full", lambda m, x: m.ops.aten.full.default([2], 3.0)),
    ("cat", lambda m, x: m.ops.aten.cat.default([x, x])),
    ("div.Tensor_mode", lambda m, x: m.ops.aten.div.Tensor_mode(x, 4, rounding_mode="floor")),
    ("embedding", lambda m, x: m.ops.aten.embedding.default(m.eye(3), m.tensor([0, 2]))),
    ("copy_", lambda m, x: m.ops.aten.copy_.default(m.zeros(2), m.ones(2))),
    ("sym_size", lambda m, x: m.ops.aten.sym_size.int(x, 1)),
    ("where", lambda m, x: m.ops.aten.where.self(x > 2, x, -x)),
    ("max.dim", lambda m, x: m.ops.aten.max.dim(x, 1)),
    ("split.Tensor", lambda m, x: m.ops.aten.split.Tensor(x, 1, 1)),
    ("convolution", lambda m, x: m.ops.aten.convolution.default(
        m.ones(1, 1, 3, 3), m.ones(1, 1, 2, 2), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)),
    ("names", lambda m, x: [str(m.ops.aten.add.Tensor), repr(m.ops.aten.add.Tensor),
                            m.ops.aten.add.Tensor.name(), m.ops.aten.add.Tensor.__name__,
                            str(m.ops.aten.add), repr(m.ops.aten.add),
                            m.ops.aten.add.Tensor.overloadpacket is m.ops.aten.add,
                            m.ops.aten.mm.overloads()]),
    ("unknown op", lambda m, x: m.ops.aten.nosuchop),
    ("unknown overload", lambda m, x: m.ops.aten.add.nosuch),
    ("unknown namespace op", lambda m, x: m.ops.nosuchns_tl.foo),
]


@pytest.mark.parametrize("name, call", _ATEN_CALLS, ids=[c[0] for c in _ATEN_CALLS])
def test_aten_operators_map_onto_torchlike(name, call):
    got = [outcome(lambda m=m: call(m, m.arange(6.0).reshape(2, 3))) for m in (torch, tl)]
    assert got[0] == got[1]


def test_aten_backward_through_mapped_ops():
    res = []
    for m in (torch, tl):
        x = m.arange(6.0).reshape(2, 3).requires_grad_()
        y = m.ops.aten.mul.Tensor(m.ops.aten.relu.default(x - 2), x)
        m.ops.aten.sum.default(y).backward()
        res.append(_plain(x.grad))
    assert res[0] == res[1]


def test_load_library_of_a_missing_file():
    got = [outcome(lambda m=m: m.ops.load_library("/nonexistent/libfoo.so")) for m in (torch, tl)]
    assert got[0] == got[1] and got[0][0] == "OSError"


def test_aten_overload_table_is_current():
    """``_library/aten_overloads.py`` is torch's overloads of every ATen op torchlike maps
    (regenerate with ``python tests/test_library.py --aten-overloads``)."""
    from torchlike._library.aten_overloads import LIST_RETURNS, OVERLOADS
    want, lists = _aten_overloads_from_torch()
    assert OVERLOADS == want
    assert LIST_RETURNS == lists


# ------------------------------------------------------------------ documented differences

def test_differences_dispatcher_only_features_raise_clear_errors(tmp_path):
    """DIFFERENCES.md: torch.library features that need torch's C++ dispatcher, Triton or
    torch.compile raise NotImplementedError naming the reason."""
    ns = _ns("diff")
    with pytest.raises(NotImplementedError, match="Triton"):
        tl.library.triton_op(f"{ns}::t", mutates_args=())
    with pytest.raises(NotImplementedError, match="Triton"):
        tl.library.wrap_triton(lambda: None)
    with pytest.raises(NotImplementedError, match="opcheck"):
        tl.library.opcheck(tl.ops.aten.add.Tensor, (tl.ones(1), tl.ones(1)))
    with pytest.raises(NotImplementedError, match="built-in operators"):
        tl.library.Library("aten", "IMPL")
    lib = tl.library.Library(ns, "FRAGMENT")
    with pytest.raises(NotImplementedError, match="dispatcher"):
        lib.fallback(lambda *a: None, "CPU")

    @tl.library.custom_op(f"{ns}::f", mutates_args=())
    def f(x: tl.Tensor) -> tl.Tensor:
        return x + 1
    with pytest.raises(NotImplementedError, match="register_vmap"):
        f.register_vmap(lambda info, in_dims, x: (x + 1, 0))
    with pytest.raises(NotImplementedError, match="__torch_dispatch__"):
        tl.library.register_torch_dispatch(f, object, lambda *a: None)
    with pytest.raises(NotImplementedError, match="no schema"):
        tl.ops.aten.add.Tensor._schema
    so = tmp_path / "libops.so"
    so.write_bytes(b"\x7fELF")
    with pytest.raises(OSError, match="torchlike cannot load compiled torch operator"):
        tl.ops.load_library(str(so))
    lib._destroy()


def test_custom_op_inside_a_torch_func_transform_raises_as_torch():
    """A custom op with a registered backward under torch.func.grad raises torch's error (its
    autograd Function is not of the setup_context style torch.func needs); eager, it runs its
    backward."""
    for m in (torch, tl):
        ns = _ns("func")

        @m.library.custom_op(f"{ns}::f", mutates_args=())
        def f(x: m.Tensor) -> m.Tensor:
            return x.sin() * 2
        f.register_autograd(lambda ctx, g: g * 2 * ctx.x.cos(),
                            setup_context=lambda ctx, inputs, output: setattr(ctx, "x",
                                                                              inputs[0]))
        with pytest.raises(RuntimeError, match="must override the setup_context staticmethod"):
            m.func.grad(lambda x: f(x).sum())(m.ones(3))
        x = m.ones(3, requires_grad=True)
        f(x).sum().backward()
        assert np.allclose(x.grad.tolist(), (2 * np.cos(np.ones(3))).tolist())


# ------------------------------------------------------------------ the aten overload table

def _aten_overloads_from_torch():
    import collections

    from torchlike._ops_namespace import aten_function
    ov = collections.defaultdict(list)
    lists = set()
    for s in torch._C._jit_get_all_schemas():
        if not s.name.startswith("aten::"):
            continue
        name = s.name[6:]
        n = s.overload_name or "default"
        if n not in ov[name]:
            ov[name].append(n)
        if len(s.returns) == 1 and str(s.returns[0].type) == "List[Tensor]":
            lists.add(name)
    keep = {n: " ".join(v) for n, v in sorted(ov.items()) if aten_function(n) is not None}
    return keep, {n for n in lists if n in keep}


def _write_aten_overloads():
    table, lists = _aten_overloads_from_torch()
    lines = []
    for name, names in table.items():
        head = f'    "{name}": '
        words, cur, parts = names.split(), "", []
        for w in words:
            if len(head) + len(cur) + len(w) + 4 > 96 and cur:
                parts.append(cur)
                cur = ""
            cur += w + " "
        parts.append(cur.rstrip())
        body = ("\n" + " " * len(head)).join(f'"{p}"' for p in parts)
        lines.append(f"{head}{body},")
    list_lines, cur = [], "    "
    for n in sorted(lists):
        if len(cur) + len(n) + 4 > 96:
            list_lines.append(cur.rstrip())
            cur = "    "
        cur += f'"{n}", '
    list_lines.append(cur.rstrip())
    src = ('"""Torch 2.13\'s overload names of the ATen operators ``torchlike.ops.aten`` maps '
           'onto\ntorchlike\'s functions (``_ops_namespace.aten_function``), from\n'
           '``torch._C._jit_get_all_schemas()``; ``LIST_RETURNS``: the ops that return '
           '``Tensor[]``.\n\nGenerated: ``python tests/test_library.py --aten-overloads``; '
           '``tests/test_library.py::\ntest_aten_overload_table_is_current`` checks it '
           'against torch.\n"""\nOVERLOADS = {\n' + "\n".join(lines) + "\n}\n\n"
           "LIST_RETURNS = {\n" + "\n".join(list_lines) + "\n}\n")
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "torchlike", "_library", "aten_overloads.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(src)
    print(f"wrote {len(table)} operators to {path}")


if __name__ == "__main__":
    if "--aten-overloads" in sys.argv:
        _write_aten_overloads()
