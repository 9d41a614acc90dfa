"""Every public class of ``torch.nn`` is importable from torch's own module path in torchlike.

The list is generated from real torch at test time: for each public class in ``torch.nn``,
``cls.__module__`` names the file torch keeps it in (``torch.nn.modules.batchnorm``); torchlike
must have a class of that name at ``torchlike.nn.modules.batchnorm`` whose own ``__module__`` is
that path, and ``torchlike.nn.<Name>`` must be the same object.
"""
from __future__ import annotations

import importlib
import inspect

import pytest
import torch

import torchlike  # noqa: F401

# torch names not provided yet, each with its reason
NOT_YET: dict = {}


def _torch_classes():
    out = []
    for name in sorted(dir(torch.nn)):
        obj = getattr(torch.nn, name)
        if name.startswith("_") or not inspect.isclass(obj):
            continue
        if not obj.__module__.startswith("torch.nn"):
            continue
        out.append((name, obj.__module__))
    return out


CLASSES = _torch_classes()


def test_the_list_is_torchs():
    # guards against an empty parametrisation (e.g. torch's layout changing)
    names = {n for n, _ in CLASSES}
    assert {"Linear", "Conv2d", "BatchNorm2d", "MultiheadAttention", "Module"} <= names
    assert len(CLASSES) > 150


@pytest.mark.parametrize("name,module", CLASSES, ids=[n for n, _ in CLASSES])
def test_class_at_torchs_path(name, module):
    if name in NOT_YET:
        assert not hasattr(torchlike.nn, name), \
            f"{name} is in NOT_YET but exists: remove it from the list"
        pytest.skip(NOT_YET[name])
    path = "torchlike" + module[len("torch"):]
    mod = importlib.import_module(path)
    assert hasattr(mod, name), f"{path} has no {name} (torch keeps it in {module})"
    cls = getattr(mod, name)
    assert inspect.isclass(cls)
    assert cls.__module__ == path, f"{name}.__module__ is {cls.__module__}, torch's is {module}"
    assert cls.__name__ == name
    assert getattr(torchlike.nn, name) is cls


def test_common_import_lines():
    # lines real code writes, unmodified
    from torchlike.nn.modules.activation import MultiheadAttention
    from torchlike.nn.modules.loss import MSELoss, _Loss, _WeightedLoss  # noqa: F401
    from torchlike.nn.modules.conv import Conv2d, _ConvNd  # noqa: F401
    from torchlike.nn.modules.batchnorm import BatchNorm2d, _BatchNorm, _NormBase  # noqa: F401
    from torchlike.nn.modules.module import Module
    from torchlike.nn.modules.container import Sequential
    from torchlike.nn.modules.utils import _pair
    from torchlike.nn.parameter import Parameter  # noqa: F401
    from torchlike.nn.parallel import DataParallel  # noqa: F401
    assert issubclass(MultiheadAttention, Module) and issubclass(Sequential, Module)
    assert _pair(3) == torch.nn.modules.utils._pair(3)
    for mod in ("batchnorm", "normalization", "dropout", "sparse", "padding", "flatten",
                "pixelshuffle", "upsampling", "distance", "channelshuffle", "fold",
                "instancenorm", "linear", "pooling", "rnn", "transformer", "lazy"):
        importlib.import_module("torchlike.nn.modules." + mod)


def test_no_layers_grab_bag():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("torchlike.nn.modules.layers")


def test_container_deprecated_as_torch():
    with pytest.warns(FutureWarning) as tw:
        tc = torch.nn.Container(a=torch.nn.ReLU())
    with pytest.warns(FutureWarning) as lw:
        lc = torchlike.nn.Container(a=torchlike.nn.ReLU())
    assert str(lw[0].message) == str(tw[0].message)
    assert list(dict(lc.named_children())) == list(dict(tc.named_children()))
