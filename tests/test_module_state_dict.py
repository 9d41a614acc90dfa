"""Module.load_state_dict's copy step against torch: the copy is ``Tensor.copy_`` under no_grad
(its casts and their warnings), an exception while copying is one of the load errors, in
torch's words, and a meta parameter is left as it is (torch's warning)."""
from __future__ import annotations

import warnings

import pytest
import torch

import torchlike
from oracle import same_as_torch


def _load(lib, assign=False, **entries):
    """A Linear(2, 2) loaded from its own state_dict with ``entries`` replaced: its weight and
    bias, and the warnings the load gave."""
    lib.manual_seed(0)
    m = lib.nn.Linear(2, 2)
    sd = m.state_dict()
    sd.update(entries)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m.load_state_dict(sd, assign=assign)
    return m.weight.detach(), m.bias.detach(), [str(x.message) for x in w]


def test_a_copy_casts_as_copy_does_and_warns_as_it_does():
    # complex into float: copy_'s warning; bool, float16 and int64 into float: cast
    for value in ([1 + 2j, 3j], [True, False], [1.5, 2.25]):
        def run(m, value=value):
            dtype = {complex: m.complex64, bool: m.bool, float: m.float16}[type(value[0])]
            _, bias, warned = _load(m, bias=m.tensor(value, dtype=dtype))
            return bias, warned
        same_as_torch(run)

    def buffer(m):
        bn = m.nn.BatchNorm1d(2)
        sd = bn.state_dict()
        sd["num_batches_tracked"] = m.tensor(3.7)      # float into an int64 buffer
        sd["running_mean"] = m.tensor([1, 2])          # int64 into float
        bn.load_state_dict(sd)
        return bn.num_batches_tracked, bn.running_mean
    same_as_torch(buffer)


def test_an_exception_while_copying_or_assigning_is_a_load_error():
    # assign=True: an int64 bias cannot become a Parameter that requires grad
    def assign_int(m):
        _load(m, assign=True, bias=m.zeros(2, dtype=m.int64))
    same_as_torch(assign_int)
    with pytest.raises(RuntimeError, match=r'^Error\(s\) in loading state_dict for Linear:\n\t'
                       r'While copying the parameter named "bias", whose dimensions in the '
                       r'model are torch.Size\(\[2\]\) and whose dimensions in the checkpoint '
                       r"are torch.Size\(\[2\]\), an exception occurred : \('Only Tensors of "):
        assign_int(torchlike)

    # with other errors: missing keys first, the copying error after
    def with_missing(m):
        m.manual_seed(0)
        lin = m.nn.Linear(2, 2)
        lin.load_state_dict({"bias": m.zeros(2, dtype=m.int64)}, assign=True)
    same_as_torch(with_missing)

    # a checkpoint's meta tensor has no data to copy: an error of that parameter
    def meta_input(m):
        _load(m, bias=m.empty(2, device="meta"))
    for lib in (torch, torchlike):
        with pytest.raises(RuntimeError, match=r'While copying the parameter named "bias", '
                           r"whose dimensions in the model are torch.Size\(\[2\]\)"):
            meta_input(lib)


def test_a_meta_parameter_is_left_as_it_is_with_torchs_warning():
    def run(m):
        with m.device("meta"):
            lin = m.nn.Linear(2, 2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            res = lin.load_state_dict({"weight": m.ones(2, 2), "bias": m.zeros(2)})
        return (lin.weight.device.type, lin.bias.device.type, lin.weight.is_meta,
                repr(res), [str(x.message) for x in w])
    same_as_torch(run)

    def assigned(m):
        with m.device("meta"):
            lin = m.nn.Linear(2, 2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lin.load_state_dict({"weight": m.ones(2, 2), "bias": m.zeros(2)}, assign=True)
        return lin.weight.detach(), lin.weight.device.type, len(w)
    same_as_torch(assigned)


def test_a_copy_keeps_the_parameter_and_bumps_its_version_once():
    def run(m):
        m.manual_seed(0)
        lin = m.nn.Linear(2, 2)
        w, v = lin.weight, lin.weight._version
        x = m.ones(2, requires_grad=True) * 3           # a checkpoint entry with a graph
        lin.load_state_dict({"weight": m.zeros(2, 2), "bias": x})
        return (lin.weight is w, lin.weight._version - v, lin.bias.detach(),
                lin.bias.is_leaf, lin.bias.grad_fn is None, lin.bias.requires_grad)
    same_as_torch(run)


def test_an_uninitialized_lazy_module_saves_and_loads_as_torchs():
    def run(m):
        nn = m.nn
        out = []
        sd = nn.LazyLinear(2).state_dict()
        out.append([(k, type(v).__name__) for k, v in sd.items()])
        lazy = nn.LazyLinear(2)                  # uninitialized into uninitialized: stays so
        out.append((repr(lazy.load_state_dict(sd)), type(lazy.weight).__name__))
        m.manual_seed(0)
        src = nn.Linear(3, 2)
        lazy.load_state_dict(src.state_dict())   # a checkpoint's shapes materialize it
        out.append((type(lazy.weight).__name__, tuple(lazy.weight.shape),
                    bool((lazy.weight == src.weight).all())))
        bn = nn.LazyBatchNorm1d()
        out.append([(k, type(v).__name__) for k, v in bn.state_dict(keep_vars=True).items()])
        try:                                     # uninitialized into initialized: torch raises
            nn.Linear(3, 2).load_state_dict(nn.LazyLinear(2).state_dict())
        except RuntimeError as e:
            out.append(str(e))
        return out
    same_as_torch(run)
