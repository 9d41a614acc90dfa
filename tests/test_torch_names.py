"""Public names read as torch's: class paths (``<class 'torchlike.Tensor'>``) and grad_fn node
classes (``type(y.grad_fn).__name__ == 'MulBackward0'``), each compared with real torch."""
from __future__ import annotations

import importlib
import warnings

import numpy as np
import pytest
import torch

import op_db
import torchlike
from oracle import _flat, _to

NAMESPACES = ["", "nn", "optim", "optim.lr_scheduler", "utils.data", "distributions", "autograd",
              "nn.parameter", "amp", "func"]

# classes whose path still differs from torch's: torch's module -> why
CLASS_PATH_GAPS = {
    # legacy tensor types report module 'torch' (their module is the legacy-type map's)
    "BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor",
    "HalfTensor", "IntTensor", "LongTensor", "ShortTensor",
    "OutOfMemoryError",     # torchlike.cuda.OutOfMemoryError (torch: torch.OutOfMemoryError)
    "ScriptModule",         # torchlike.jit.ScriptModule (torch reports module 'torch')
    "PyTorchFileReader",    # torchlike._C.PyTorchFileReader (torch reports module 'torch')
    "Future",               # torchlike.futures.Future (torch.Future is its C base class)
    # optimizers live in one module (torch: one module each, torch.optim.sgd.SGD, ...)
    "ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "NAdam", "RAdam",
    "Muon", "RMSprop", "Rprop", "SGD",
}


def _class_pairs():
    for ns in NAMESPACES:
        tm = importlib.import_module("torch" + ("." + ns if ns else ""))
        lm = importlib.import_module("torchlike" + ("." + ns if ns else ""))
        for name in sorted(dir(tm)):
            t = getattr(tm, name, None)
            if name.startswith("_") or not isinstance(t, type) or \
                    not (t.__module__ or "").startswith("torch"):
                continue
            lt = getattr(lm, name, None)
            if isinstance(lt, type):
                yield ns, name, t, lt


def test_public_classes_report_torchs_paths():
    wrong, n = {}, 0
    for ns, name, t, lt in _class_pairs():
        n += 1
        want = t.__module__.replace("torch", "torchlike", 1) + "." + t.__qualname__
        if lt.__module__ + "." + lt.__qualname__ != want:
            wrong[name] = (lt.__module__ + "." + lt.__qualname__, want)
    assert n > 250
    assert set(wrong) == CLASS_PATH_GAPS, wrong


def test_core_class_reprs():
    x = torchlike.zeros(2)
    assert repr(type(x)) == "<class 'torchlike.Tensor'>"
    assert repr(type(x.shape)) == "<class 'torchlike.Size'>"
    assert repr(type(x.dtype)) == "<class 'torchlike.dtype'>"
    assert repr(type(x.device)) == "<class 'torchlike.device'>"
    assert repr(torchlike.nn.Linear) == "<class 'torchlike.nn.modules.linear.Linear'>"


def test_accumulate_grad_and_device_copy_nodes():
    x = torchlike.ones(2, requires_grad=True)
    y = (x * 2).sum()
    tx = torch.ones(2, requires_grad=True)
    ty = (tx * 2).sum()
    assert repr(type(y.grad_fn)) == repr(type(ty.grad_fn)) == "<class 'SumBackward0'>"
    leaf = y.grad_fn.next_functions[0][0].next_functions[0][0]
    tleaf = ty.grad_fn.next_functions[0][0].next_functions[0][0]
    assert type(leaf).__name__ == type(tleaf).__name__ == "AccumulateGrad"
    assert repr(y.grad_fn).startswith("<SumBackward0 object at 0x")
    assert isinstance(y.grad_fn, torchlike.autograd.graph.Node)
    assert type(x.to("cpu", torchlike.float64).grad_fn).__name__ == \
        type(tx.to("cpu", torch.float64).grad_fn).__name__ == "ToCopyBackward0"


def test_name_of_torchs_own_autograd_nodes_has_their_namespace():
    """``name()`` of the nodes torch implements in its autograd's C++ namespace (a leaf's
    AccumulateGrad, an indexed write's CopySlices, an op without a derivative) carries it; the
    class name and a tensor's repr do not."""
    got = []
    for m in (torch, torchlike):
        x = m.ones(3, requires_grad=True)
        w = x.clone()
        w[0] = 5.0
        nodes = [(x * 1).grad_fn.next_functions[0][0], w.grad_fn, (x // 2).grad_fn]
        got.append(([n.name() for n in nodes], [type(n).__name__ for n in nodes], repr(w)))
    assert got[1] == got[0]
    assert got[0][0] == ["torch::autograd::AccumulateGrad", "torch::autograd::CopySlices",
                         "torch::autograd::NotImplemented"]
    assert got[0][2].endswith("grad_fn=<CopySlices>)")


# op-table rows whose node name differs from torch's: row -> (torch's, torchlike's). Most are ops
# torch composes from others (einsum ends in a ViewBackward0) that torchlike runs as one op.
NODE_NAME_GAPS = {
    'atleast_2d': ('UnsqueezeBackward0', 'ViewBackward0'),
    'chain_matmul': ('ViewBackward0', 'SqueezeBackward1'),
    'combinations': ('StackBackward0', 'IndexBackward0'),
    'cond': ('SqueezeBackward1', 'DivBackward0'),
    'dist': ('DistBackward0', 'LinalgVectorNormBackward0'),
    'einsum_mm': ('ViewBackward0', 'EinsumBackward'),
    'eq_': ('EqBackward1', 'EqBackward0'),
    'fill_diagonal_': ('CopySlices', 'FillBackward0'),
    'fmod': ('FmodBackward1', 'FmodBackward0'),
    'frobenius_norm': ('NormBackward1', 'LinalgVectorNormBackward0'),
    'gradient': ('CatBackward0', 'DivBackward0'),
    'index_copy': ('IndexCopyBackward0', 'IndexAddBackward0'),
    'index_fill': ('IndexFillBackward0', 'IndexAddBackward0'),
    'index_reduce_prod': ('IndexReduceBackward0', 'ScatterReduceBackward0'),
    'ldexp': ('LdexpBackward0', 'MulBackward0'),
    'lu_solve': ('LinalgLuSolveBackward0', 'LinalgSolveTriangularBackward0'),
    'masked_scatter': ('MaskedScatterBackward0', 'PutBackward0'),
    'masked_select': ('MaskedSelectBackward0', 'TakeBackward0'),
    'matrix_power': ('MmBackward0', 'LinalgMatrixPowerBackward0'),
    'nanmean_keepdim_nodim': ('DivBackward0', 'NansumBackward0'),
    'narrow_copy': ('NarrowCopyBackward0', 'CloneBackward0'),
    'norm_except_dim': ('ViewBackward0', 'LinalgVectorNormBackward0'),
    'nuclear_norm': ('PermuteBackward0', 'SumBackward1'),
    'ravel': ('ViewBackward0', 'UnsafeViewBackward0'),
    'renorm': ('RenormBackward0', 'MulBackward0'),
    'repeat_interleave': ('ViewBackward0', 'IndexSelectBackward0'),
    'rot90': ('Rot90Backward0', 'FlipBackward0'),
    'std_mean': ('StdMeanBackward0', 'VarMeanBackward0'),
    'take_along_dim': ('GatherBackward0', 'TakeAlongDimBackward0'),
    'triangular_solve': ('TriangularSolveBackward0', 'LinalgSolveTriangularBackward0'),
    'vander': ('CatBackward0', 'LinalgVanderBackward0'),
}


def _rows():
    """The first row with a float input of every op in the op database."""
    for op in sorted(op_db.DB):
        for case in op_db.DB[op]:
            if getattr(case, "grad", False) and hasattr(case, "inputs") and any(
                    isinstance(x, np.ndarray) and x.dtype.kind in "fc" for x in case.inputs):
                yield case
                break


def test_every_grad_fn_in_the_op_tables_is_named_as_torchs():
    wrong, n = {}, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in _rows():
            touts = _flat(case.fn(torch, *[_to(torch, x, True) for x in case.inputs],
                                  **case.kwargs))
            louts = _flat(case.fn(torchlike, *[_to(torchlike, x, True) for x in case.inputs],
                                  **case.kwargs))
            for to, lo in zip(touts, louts):
                if isinstance(to, torch.Tensor) and to.grad_fn is not None:
                    n += 1
                    names = (type(to.grad_fn).__name__,
                             type(getattr(lo, "grad_fn", None)).__name__)
                    if names[0] != names[1]:
                        wrong.setdefault(case.name, names)
    assert n > 300
    assert wrong == NODE_NAME_GAPS
