"""Argument errors of tensor factories and nn layer constructors, against torch 2.13.

Each case runs on torch first and then on torchlike: where torch raises, torchlike raises the
same exception class with the same message (first line: torch's "invalid combination" messages
go on to list the overloads); where torch returns, torchlike returns a tensor of the same dtype,
shape and ``requires_grad`` (or a module whose ``repr`` and attributes are torch's).
"""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torchlike
from oracle import both_outcomes


def _same(fn):
    got = both_outcomes(fn, msg="first_line")
    if got is None:
        return
    lv, tv = got
    if isinstance(tv, torch.Tensor):
        assert (str(lv.dtype), tuple(lv.shape), lv.requires_grad) == \
            (str(tv.dtype), tuple(tv.shape), tv.requires_grad)


# ------------------------------------------------------------------ size factories

SIZED = ["zeros", "ones", "empty", "rand", "randn"]

SIZE_CASES = {
    "no_size": lambda m, f: f(),
    "negative": lambda m, f: f(-1),
    "negative_in_varargs": lambda m, f: f(2, -3),
    "negative_in_tuple": lambda m, f: f((2, -3)),
    "float": lambda m, f: f(2.0),
    "float_second": lambda m, f: f(2, 3.0),
    "float_first_of_two": lambda m, f: f(2.0, 3),
    "float_in_tuple": lambda m, f: f((2, 3.0)),
    "float_first_in_tuple": lambda m, f: f((2.0, 3)),
    "float_in_list": lambda m, f: f([2.0]),
    "int_tensor": lambda m, f: f(m.tensor(3)),
    "one_element_int_tensor": lambda m, f: f(m.tensor([3])),
    "two_element_tensor": lambda m, f: f(m.tensor([2, 3])),
    "float_tensor": lambda m, f: f(m.tensor(3.0)),
    "int_tensor_second": lambda m, f: f(2, m.tensor(3)),
    "float_tensor_second": lambda m, f: f(2, m.tensor(3.0)),
    "float_tensor_in_tuple": lambda m, f: f((m.tensor(3.0), 2)),
    "tuple_then_int": lambda m, f: f((2, 3), 4),
    "int_then_tuple": lambda m, f: f(2, (3, 4)),
    "two_tuples": lambda m, f: f((2,), (3,)),
    "size_keyword": lambda m, f: f(size=(2, 3)),
    "size_keyword_int": lambda m, f: f(size=2),
    "size_keyword_float_first": lambda m, f: f(size=(2.0, 3)),
    "size_positional_and_keyword": lambda m, f: f(2, size=(2, 3)),
    "shape_keyword": lambda m, f: f(2, shape=(2, 3)),
    "unknown_keyword": lambda m, f: f(2, foo=1),
    "bad_dtype_then_unknown": lambda m, f: f(2, dtype="float32", foo=1),
    "dtype_str": lambda m, f: f(2, dtype="float32"),
    "dtype_python_float": lambda m, f: f(2, dtype=float),
    "dtype_python_int": lambda m, f: f(2, dtype=int),
    "dtype_python_complex": lambda m, f: f(2, dtype=complex),
    "dtype_numpy": lambda m, f: f(2, dtype=np.float32),
    "dtype_int64": lambda m, f: f(2, dtype=m.int64),
    "dtype_bool": lambda m, f: f(2, dtype=m.bool),
    "dtype_complex_requires_grad": lambda m, f: f(2, dtype=m.complex64, requires_grad=True),
    "dtype_int_requires_grad": lambda m, f: f(2, dtype=m.int64, requires_grad=True),
    "requires_grad_int": lambda m, f: f(2, requires_grad=1),
    "requires_grad_none": lambda m, f: f(2, requires_grad=None),
    "requires_grad_numpy_bool": lambda m, f: f(2, requires_grad=np.bool_(True)),
    "pin_memory_int": lambda m, f: f(2, pin_memory=1),
    "device_float": lambda m, f: f(2, device=1.5),
    "device_bool": lambda m, f: f(2, device=True),
    "layout_int": lambda m, f: f(2, layout=1),
    "layout_strided": lambda m, f: f(2, layout=m.strided),
    "out_resized": lambda m, f: f(2, out=m.zeros(3)),
    "out_int": lambda m, f: f(2, out=m.zeros(2, dtype=m.int64)),
    "out_and_other_dtype": lambda m, f: f(2, out=m.zeros(2), dtype=m.float64),
    "out_and_same_dtype": lambda m, f: f(2, out=m.zeros(2), dtype=m.float32),
    "out_requires_grad": lambda m, f: f(2, out=m.zeros(2), requires_grad=True),
    "out_list": lambda m, f: f(2, out=[1]),
    "dtype_positional": lambda m, f: f(2, 3, m.float64),
    "none": lambda m, f: f(None),
    "string": lambda m, f: f("3"),
    "bool": lambda m, f: f(True),
    "numpy_int": lambda m, f: f(np.int64(2)),
    "numpy_float": lambda m, f: f(np.float64(2)),
    "torch_size": lambda m, f: f(m.Size([2, 3])),
    "torch_size_then_int": lambda m, f: f(m.Size([2, 3]), 4),
    "empty_list": lambda m, f: f([]),
    "empty_tuple": lambda m, f: f(()),
    "pin_memory": lambda m, f: f(2, pin_memory=True),
    "memory_format": lambda m, f: f(2, memory_format=m.contiguous_format),
    "memory_format_int": lambda m, f: f(2, memory_format=1),
    "generator": lambda m, f: f(2, generator=m.Generator()),
    "generator_none": lambda m, f: f(2, generator=None),
    "generator_int": lambda m, f: f(2, generator=1),
    "generator_only": lambda m, f: f(generator=m.Generator()),
}


@pytest.mark.parametrize("case", list(SIZE_CASES))
@pytest.mark.parametrize("name", SIZED)
def test_size_factory_arguments_as_torch(name, case):
    _same(lambda m: SIZE_CASES[case](m, getattr(m, name)))


def test_zeros_without_size_raises_torch_type_error():
    with pytest.raises(TypeError, match='missing 1 required positional arguments: "size"'):
        torchlike.zeros()


@pytest.mark.parametrize("name", SIZED)
def test_size_factory_signature_lists_out(name):
    import inspect
    params = inspect.signature(getattr(torchlike, name)).parameters
    assert "out" in params and "dtype" in params and "requires_grad" in params


OTHER_CASES = {
    "full_bad_fill_str": lambda m: m.full((2,), "a"),
    "full_fill_none": lambda m: m.full((2,), None),
    "full_fill_two_element_tensor": lambda m: m.full([2], m.tensor([1.0, 2.0])),
    "full_fill_zero_dim_tensor": lambda m: m.full([2], m.tensor(1.0)),
    "full_int_size": lambda m: m.full(2, 1.0),
    "full_float_size": lambda m: m.full((2.0,), 1.0),
    "full_negative": lambda m: m.full((-1,), 1.0),
    "full_unknown_keyword": lambda m: m.full((2,), 1, foo=1),
    "full_dtype_str": lambda m: m.full((2,), 1, dtype="f"),
    "full_dtype_python_float": lambda m: m.full((2,), 1, dtype=float),
    "full_int_requires_grad": lambda m: m.full((2,), 1, requires_grad=True),
    "full_requires_grad_int": lambda m: m.full((2,), 1.0, requires_grad=1),
    "full_out": lambda m: m.full((2,), 1, out=m.zeros(2)),
    "full_out_other_dtype": lambda m: m.full((2,), 1, out=m.zeros(2), dtype=m.float64),
    "full_keywords": lambda m: m.full(size=(2,), fill_value=1),
    "zeros_like_list": lambda m: m.zeros_like([1, 2]),
    "zeros_like_unknown_keyword": lambda m: m.zeros_like(m.zeros(2), foo=1),
    "zeros_like_dtype_str": lambda m: m.zeros_like(m.zeros(2), dtype="f"),
    "zeros_like_dtype_python_float": lambda m: m.zeros_like(m.zeros(2), dtype=float),
    "zeros_like_int_requires_grad": lambda m: m.zeros_like(m.zeros(2, dtype=m.int64),
                                                           requires_grad=True),
    "zeros_like_requires_grad_int": lambda m: m.zeros_like(m.zeros(2), requires_grad=1),
    "ones_like_dtype_python_int": lambda m: m.ones_like(m.zeros(2), dtype=int),
    "empty_like_device_float": lambda m: m.empty_like(m.zeros(2), device=1.5),
    "full_like_bad_fill": lambda m: m.full_like(m.zeros(2), "a"),
    "rand_like_int": lambda m: m.rand_like(m.zeros(2, dtype=m.int64)),
    "randn_like_int": lambda m: m.randn_like(m.zeros(2, dtype=m.int64)),
    "rand_like_dtype_int": lambda m: m.rand_like(m.zeros(2), dtype=m.int64),
    "scalar_tensor_str": lambda m: m.scalar_tensor("a"),
    "scalar_tensor_int_requires_grad": lambda m: m.scalar_tensor(1, dtype=m.int64,
                                                                 requires_grad=True),
    "tensor_dtype_str": lambda m: m.tensor(1, dtype="f"),
    "tensor_dtype_python_float": lambda m: m.tensor(1, dtype=float),
    "tensor_dtype_python_complex": lambda m: m.tensor(1, dtype=complex),
    "tensor_int_requires_grad": lambda m: m.tensor([1], requires_grad=True),
    "tensor_requires_grad_int": lambda m: m.tensor(1.0, requires_grad=1),
    "to_python_float": lambda m: m.zeros(2).to(float),
    "to_python_complex": lambda m: m.zeros(2).to(complex),
    "arange_dtype_python_float": lambda m: m.arange(3, dtype=float),
    "arange_int_requires_grad": lambda m: m.arange(3, requires_grad=True),
    "eye_dtype_python_float": lambda m: m.eye(2, dtype=float),
    "eye_int_requires_grad": lambda m: m.eye(2, dtype=m.int64, requires_grad=True),
    "linspace_int_requires_grad": lambda m: m.linspace(0, 1, 3, dtype=m.int64,
                                                       requires_grad=True),
    "randint_float_dtype": lambda m: m.randint(5, (3,), dtype=m.float32),
    "randint_int_requires_grad": lambda m: m.randint(5, (3,), requires_grad=True),
    "randint_negative_size": lambda m: m.randint(5, (-3,)),
    "randperm_negative": lambda m: m.randperm(-1),
    "randperm_float_dtype": lambda m: m.randperm(3, dtype=m.float32),
    "randperm_int_requires_grad": lambda m: m.randperm(3, requires_grad=True),
    "randperm_float": lambda m: m.randperm(3.0),
    "randperm_bool": lambda m: m.randperm(True),
    "randperm_tuple": lambda m: m.randperm((3,)),
    "randperm_int_tensor": lambda m: m.randperm(m.tensor(3)),
    "randperm_float_tensor": lambda m: m.randperm(m.tensor(3.0)),
    "randperm_numpy_int": lambda m: m.randperm(np.int64(3)),
    "randperm_keyword": lambda m: m.randperm(n=3),
    "eye_float": lambda m: m.eye(2.0),
    "eye_bool": lambda m: m.eye(True),
    "eye_tuple": lambda m: m.eye((2,)),
    "eye_none": lambda m: m.eye(None),
    "eye_float_m": lambda m: m.eye(2, 3.0),
    "eye_float_n_with_m": lambda m: m.eye(2.0, 3),
    "eye_none_m": lambda m: m.eye(2, None),
    "eye_unknown_keyword": lambda m: m.eye(2, foo=1),
    "eye_int_tensors": lambda m: m.eye(m.tensor(2), m.tensor(3)),
    "eye_keywords": lambda m: m.eye(n=2, m=3),
    "eye_negative": lambda m: m.eye(-1),
    "eye_negative_m": lambda m: m.eye(2, -1),
    "eye_out_int": lambda m: m.eye(2, out=m.zeros(2, 2, dtype=m.int64)),
    "eye_out_other_dtype": lambda m: m.eye(2, out=m.zeros(2, 2, dtype=m.int64),
                                           dtype=m.float32),
    "eye_dtype_str": lambda m: m.eye(2, dtype="f"),
    "randint_no_arguments": lambda m: m.randint(),
    "randint_high_only": lambda m: m.randint(5),
    "randint_int_size": lambda m: m.randint(5, 3),
    "randint_three_ints": lambda m: m.randint(0, 5, 3),
    "randint_float_high": lambda m: m.randint(5.5, (3,)),
    "randint_float_high_with_low": lambda m: m.randint(0, 5.5, (3,)),
    "randint_float_low": lambda m: m.randint(0.5, 5, (3,)),
    "randint_float_size": lambda m: m.randint(5, (3.0,)),
    "randint_float_second_size": lambda m: m.randint(5, (3, 2.0)),
    "randint_float_size_with_low": lambda m: m.randint(0, 5, (3.0,)),
    "randint_list_size": lambda m: m.randint(5, [3]),
    "randint_torch_size": lambda m: m.randint(5, m.Size([3])),
    "randint_keyword_int_size": lambda m: m.randint(5, size=3),
    "randint_keywords": lambda m: m.randint(high=5, size=(3,)),
    "randint_all_keywords": lambda m: m.randint(low=2, high=5, size=(3,)),
    "randint_unknown_keyword": lambda m: m.randint(5, (3,), foo=1),
    "randint_dtype_str": lambda m: m.randint(5, (3,), dtype="f"),
    "randint_int_tensor_high": lambda m: m.randint(m.tensor(5), (3,)),
    "randint_generator": lambda m: m.randint(2, 5, (3,), generator=m.Generator()),
    "randint_generator_none": lambda m: m.randint(2, 5, (3,), generator=None),
    "randint_out": lambda m: m.randint(5, (3,), out=m.zeros(3)),
    "randint_empty_range": lambda m: m.randint(3, 2, (2,)),
}


@pytest.mark.parametrize("case", list(OTHER_CASES))
def test_factory_arguments_as_torch(case):
    _same(OTHER_CASES[case])


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64",
                                   "float16", "float32"])
@pytest.mark.parametrize("low,high", [(0, 2), (0, 300), (-1, 5), (0, 70000),
                                      (0, 2 ** 31 + 1), (-2 ** 31 - 1, 0)])
def test_randint_bounds_checked_against_dtype_as_torch(dtype, low, high):
    _same(lambda m: m.randint(low, high, (3,), dtype=getattr(m, dtype)))


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64",
                                   "float16"])
@pytest.mark.parametrize("n", [3, 300, 70000])
def test_randperm_length_checked_against_dtype_as_torch(dtype, n):
    _same(lambda m: m.randperm(n, dtype=getattr(m, dtype)))


@pytest.mark.parametrize("name", ["rand", "randn"])
@pytest.mark.parametrize("dtype", ["complex64", "complex128", "float16", "bfloat16"])
def test_random_factories_take_float_and_complex_dtypes(name, dtype):
    _same(lambda m: getattr(m, name)(2, 3, dtype=getattr(m, dtype)))


# ------------------------------------------------------------------ padding modules

def _module_facts(mod):
    return (repr(mod), getattr(mod, "padding", "absent"), getattr(mod, "value", "absent"),
            mod.extra_repr())


PAD_ARGS = {
    "none": (),
    "int": (2,),
    "int_value": (2, 1.5),
    "pair": ((1, 2),),
    "one_element_list": ([3],),
    "float": (1.5,),
    "negative": (-1,),
    "pair_value": ((1, 2), 0.5),
    "three": (2, 3, 4),
}


def _full_padding(n):
    return tuple(range(1, 2 * n + 1))


@pytest.mark.parametrize("args", list(PAD_ARGS) + ["full", "too_long", "value_keyword",
                                                    "int_tensor"])
@pytest.mark.parametrize("kind", ["Constant", "Zero", "Reflection", "Replication", "Circular"])
@pytest.mark.parametrize("n", [1, 2, 3])
def test_padding_module_constructor_and_attributes_as_torch(n, kind, args):
    def make(m):
        cls = getattr(m.nn, f"{kind}Pad{n}d")
        if args == "full":
            return cls(_full_padding(n))
        if args == "too_long":
            return cls([1] * (2 * n + 1))
        if args == "value_keyword":
            return cls(2, value=1.0)
        if args == "int_tensor":
            return cls(m.tensor(1))
        return cls(*PAD_ARGS[args])
    got = both_outcomes(make, msg="exact")
    if got is not None:
        lv, tv = got
        if args == "int_tensor":
            assert repr(lv) == repr(tv)
        else:
            assert _module_facts(lv) == _module_facts(tv)


@pytest.mark.parametrize("args", ["int", "pair", "full", "negative", "too_long", "float"])
@pytest.mark.parametrize("kind", ["Constant", "Zero", "Reflection", "Replication", "Circular"])
@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5])
def test_padding_module_forward_on_each_rank_as_torch(n, kind, args, rank):
    x0 = np.arange(4 ** rank, dtype=np.float32).reshape((4,) * rank)

    def run(m):
        cls = getattr(m.nn, f"{kind}Pad{n}d")
        a = {"full": (_full_padding(n),), "too_long": ([1] * (2 * n + 1),)}.get(args) or \
            PAD_ARGS[args]
        mod = cls(*a, 0.5) if kind == "Constant" else cls(*a)
        return mod(m.tensor(x0))
    got = both_outcomes(run, msg="first_line")
    if got is not None:
        lv, tv = got
        np.testing.assert_array_equal(np.asarray(lv.tolist()), np.asarray(tv.tolist()))


def test_zero_pad_is_a_constant_pad_with_value_zero():
    m = torchlike.nn.ZeroPad2d(1)
    assert isinstance(m, torchlike.nn.ConstantPad2d) and m.value == 0.0
    assert isinstance(torch.nn.ZeroPad2d(1), torch.nn.ConstantPad2d)


def test_constant_pad_requires_value():
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'value'"):
        torchlike.nn.ConstantPad2d(2)


# ------------------------------------------------------------------ convolution modules

CONVS = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

CONV_ARGS = {
    "float_kernel": dict(kernel_size=3.0),
    "float_in_kernel_tuple": dict(kernel_size=(3, 3.0)),
    "zero_kernel": dict(kernel_size=0),
    "negative_kernel": dict(kernel_size=-1),
    "one_element_kernel": dict(kernel_size=(3,)),
    "long_kernel": dict(kernel_size=(3, 3, 3, 3)),
    "none_kernel": dict(kernel_size=None),
    "str_kernel": dict(kernel_size="3"),
    "bool_kernel": dict(kernel_size=True),
    "float_in_channels": dict(in_channels=4.0),
    "float_out_channels": dict(out_channels=4.0),
    "zero_in_channels": dict(in_channels=0),
    "zero_out_channels": dict(out_channels=0),
    "negative_in_channels": dict(in_channels=-1),
    "negative_out_channels": dict(out_channels=-2),
    "numpy_in_channels": dict(in_channels=np.int64(4)),
    "float_stride": dict(stride=1.0),
    "zero_stride": dict(stride=0),
    "float_padding": dict(padding=1.0),
    "negative_padding": dict(padding=-1),
    "one_element_padding": dict(padding=(1,)),
    "same_padding": dict(padding="same"),
    "bad_padding_string": dict(padding="bad"),
    "same_padding_strided": dict(padding="same", stride=2),
    "float_dilation": dict(dilation=1.0),
    "float_groups": dict(groups=2.0),
    "zero_groups": dict(groups=0),
    "indivisible_groups": dict(groups=3),
    "negative_groups": dict(groups=-1),
    "bias_zero": dict(bias=0),
    "reflect_padding_mode": dict(padding_mode="reflect"),
    "output_padding": dict(output_padding=1, stride=2),
    "float_output_padding": dict(output_padding=1.0, stride=2),
    "long_stride": dict(stride=(1, 1, 1, 1)),
}


@pytest.mark.parametrize("case", list(CONV_ARGS) + ["tensor_kernel", "bad_padding_mode"])
@pytest.mark.parametrize("name", CONVS)
def test_conv_constructor_arguments_as_torch(name, case):
    def make(m):
        kw = dict(in_channels=4, out_channels=4, kernel_size=3)
        if case == "tensor_kernel":
            kw["kernel_size"] = m.tensor(3)
        elif case == "bad_padding_mode":
            kw["padding_mode"] = "bad"
        else:
            kw.update(CONV_ARGS[case])
        return getattr(m.nn, name)(**kw)
    # the set in the bad padding_mode message prints in hash order
    got = both_outcomes(make, msg=None if case == "bad_padding_mode" else "first_line")
    if got is not None:
        lv, tv = got
        assert repr(lv) == repr(tv)
        assert [(n, tuple(p.shape)) for n, p in lv.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in tv.named_parameters()]


def test_conv2d_float_kernel_size_raises_type_error():
    with pytest.raises(TypeError, match="must be tuple of ints"):
        torchlike.nn.Conv2d(4, 4, 3.0)


@pytest.mark.parametrize("name", CONVS)
def test_conv_still_builds_and_runs_with_int_arguments(name):
    nd = int(name[-2])
    x0 = np.random.default_rng(0).standard_normal((1, 4) + (5,) * nd).astype(np.float32)
    outs = []
    for m in (torch, torchlike):
        m.manual_seed(0)
        mod = getattr(m.nn, name)(4, 2, 3, stride=1, padding=1)
        with m.no_grad():
            mod.weight.copy_(m.tensor(np.linspace(-1, 1, mod.weight.numel(), dtype=np.float32)
                                      .reshape(tuple(mod.weight.shape))))
            mod.bias.fill_(0.25)
        outs.append(np.asarray(mod(m.tensor(x0)).detach().tolist()))
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-4, atol=1e-4)


# ------------------------------------------------------------------ pooling, fold and unfold modules

POOLS = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
         "LPPool1d", "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]
POOL_ARGS = {"int": (2,), "float": (2.0,), "zero": (0,), "negative": (-1,),
             "float_in_tuple": ((2, 2.0),), "none": (None,), "str": ("2",), "one_element": ((2,),),
             "float_stride": (2, 1.5), "zero_stride": (2, 0), "float_padding": (2, 2, 1.0),
             "no_arguments": (), "bool": (True,), "long_tuple": ((2,) * 4,)}


@pytest.mark.parametrize("args", list(POOL_ARGS))
@pytest.mark.parametrize("name", POOLS)
def test_pooling_constructor_keeps_arguments_as_torch(name, args):
    a = POOL_ARGS[args]
    if name.startswith("LP") and a:
        a = (2.0,) + a
    got = both_outcomes(lambda m: getattr(m.nn, name)(*a), msg="exact")
    if got is not None:
        assert repr(got[0]) == repr(got[1])


ADAPTIVE = ["AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
            "AdaptiveMaxPool2d", "AdaptiveMaxPool3d"]


@pytest.mark.parametrize("args", [(), (2,), (None,), ((None, 2),), (2, True), (2, 1.5),
                                  (2, True, 1)])
@pytest.mark.parametrize("name", ADAPTIVE)
def test_adaptive_pooling_constructor_as_torch(name, args):
    got = both_outcomes(lambda m: getattr(m.nn, name)(*args), msg="exact")
    if got is not None:
        assert repr(got[0]) == repr(got[1])


@pytest.mark.parametrize("kw", [dict(), dict(kernel_size=2, output_size=2),
                                dict(kernel_size=2.0, output_size=2),
                                dict(kernel_size=2, output_ratio=0.5),
                                dict(kernel_size=2, output_ratio=1.5),
                                dict(kernel_size=2, output_ratio=(0.5,)),
                                dict(kernel_size=2, output_size=3, output_ratio=0.5),
                                dict(kernel_size=2), dict(kernel_size=0, output_size=2),
                                dict(kernel_size=(2, 0, 2), output_size=2)])
@pytest.mark.parametrize("name", ["FractionalMaxPool2d", "FractionalMaxPool3d"])
def test_fractional_max_pool_constructor_as_torch(name, kw):
    def make(m):
        mod = getattr(m.nn, name)(**kw)
        return (mod.kernel_size, mod.output_size, mod.output_ratio)
    got = both_outcomes(make, msg="exact")
    if got is not None:
        assert got[0] == got[1]


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=2.0),
                                dict(kernel_size=(2, 2.0)), dict(kernel_size=0),
                                dict(kernel_size=2, dilation=1.0), dict(kernel_size=2, padding=1.0),
                                dict(kernel_size=2, stride=1.0), dict(kernel_size=2, stride=0),
                                dict(kernel_size=(2, 2, 2))])
@pytest.mark.parametrize("name", ["Fold", "Unfold"])
def test_fold_unfold_constructor_as_torch(name, kw):
    def make(m):
        return getattr(m.nn, name)(**(dict(kw, output_size=4) if name == "Fold" else kw))
    got = both_outcomes(make, msg="exact")
    if got is not None:
        assert repr(got[0]) == repr(got[1])


# data torch.tensor cannot read: the error torch's parser meets first (sizes read along the
# first elements, then the inferred dtype, then each value as it is stored), worded for the
# dtype when one is given; and nested sequences of uneven lengths
BAD_DATA = ["x", ["a"], [1, "a"], None, {1: 2}, [None], [1, None], [[1], ["a"]], ["a", "b"],
            [[1, 2], "ab"], [{}], [1.5, "a"], ("a",), [2 ** 70, None], [1, [2]],
            [[1], [2, 3]], [[1], 2], [1.0, [2]], [True, [1]], [[1, 2], [3]],
            [[[1]], [[1, 2]]], [[1], []], [[], [1]], [[[], [1]]], ["a", None], [[1, "a"], [3]],
            b"x", [1, b"x"]]


def _bytes_in_a_list(data):
    return isinstance(data, list) and any(isinstance(x, bytes) for x in data)


@pytest.mark.parametrize("data,dtype", [
    (d, dt) for d in BAD_DATA for dt in (None, "float32", "int64", "bool", "complex64")
    if dt is None or not _bytes_in_a_list(d)], ids=repr)
def test_tensor_of_data_it_cannot_read_as_torch(data, dtype):
    for fn in ("tensor", "as_tensor"):
        seen = []
        for m in (torch, torchlike):
            kw = {} if dtype is None else {"dtype": getattr(m, dtype)}
            try:
                seen.append(str(getattr(m, fn)(data, **kw)).replace("torchlike", "torch"))
            except Exception as e:  # noqa: BLE001
                seen.append((type(e).__name__, str(e)))
        assert seen[1] == seen[0], fn


NEW_FILLED = {
    "sizes": lambda m, t, f: f(2, 3), "tuple": lambda m, t, f: f((2, 3)),
    "size_kw": lambda m, t, f: f(size=[2, 3]), "Size": lambda m, t, f: f(m.Size([2, 3])),
    "none": lambda m, t, f: f(), "negative": lambda m, t, f: f(2, -1),
    "float": lambda m, t, f: f(2.0), "two_tuples": lambda m, t, f: f((2,), 3),
    "twice": lambda m, t, f: f(2, size=(3,)),
    "layout": lambda m, t, f: f(2, layout=m.strided),
    "pin_memory": lambda m, t, f: f(2, pin_memory=False),
    "pin_memory_true": lambda m, t, f: f(2, pin_memory=True),
    "dtype_grad": lambda m, t, f: f(2, dtype=m.float16, requires_grad=True),
}


@pytest.mark.parametrize("method", ["new_zeros", "new_ones", "new_empty"])
@pytest.mark.parametrize("case", NEW_FILLED)
def test_new_filled_tensors_as_torch(method, case):
    seen = []
    for m in (torch, torchlike):
        t = m.ones(2, dtype=m.float64)
        try:
            r = NEW_FILLED[case](m, t, getattr(t, method))
            seen.append((tuple(r.shape), str(r.dtype).replace("torchlike", "torch"),
                         r.requires_grad, r.stride(),
                         None if method == "new_empty" else r.tolist()))
        except Exception as e:  # noqa: BLE001
            seen.append((type(e).__name__, str(e)))
    assert seen[1] == seen[0]


@pytest.mark.parametrize("call", [
    lambda t: t.new_full((2, 3), 5), lambda t: t.new_full(2, 1),
    lambda t: t.new_full((2,), 1, layout=t.new_zeros(1).layout, pin_memory=False),
    lambda t: t.new_full((-1,), 1.0), lambda t: t.new_full(2.0, 1)],
    ids=["plain", "int_size", "layout", "negative", "float_size"])
def test_new_full_as_torch(call):
    seen = []
    for m in (torch, torchlike):
        try:
            r = call(m.ones(2, dtype=m.float64))
            seen.append((tuple(r.shape), str(r.dtype).replace("torchlike", "torch"), r.tolist()))
        except Exception as e:  # noqa: BLE001
            seen.append((type(e).__name__, str(e)))
    assert seen[1] == seen[0]


@pytest.mark.parametrize("data", [[b"x"], [b"a", b"b"], [[1, 2], b"ab"], [b"ab", [1, 2]],
                                  [1, b"a"], [b""]], ids=str)
def test_bytes_in_a_list_with_a_dtype_as_torch(data):
    """Given a dtype, torch reads a bytes element of a list as the sequence of its byte values
    (``torch.tensor([b"x"], dtype=torch.float32)`` is ``[[120.]]``)."""
    def run(m):
        try:
            return m.tensor(data, dtype=m.float32).tolist()
        except TypeError as e:
            return "TypeError", str(e)
    assert run(torchlike) == run(torch)
