"""torchlike.__version__ compares as torch's TorchVersion does, and says it is torchlike."""
from __future__ import annotations

import operator

import pytest
from packaging.version import Version, parse
from torch._vendor.packaging.version import Version as TorchsPackagingVersion
from torch.torch_version import TorchVersion as TorchsVersion

import torchlike

OTHERS = ["2.0", "2.2", "2.13", "2.13.0", "2.13.0+cpu", "2.13.1", "2.14.0a0", "2.13.0rc1",
          "2.13.0.dev20250101", "2.13.0.post1", "3", "1.13.1", "10.0", "parrot", "",
          (2, 0), (2, 13), (2, 13, 0), (2, 13, 1), (3,), [1, 9], Version("2.12.1"),
          Version("2.13.0+torchlike0.1.0"), Version("2.13.0a0")]
OPS = [operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]


def test_version_string():
    v = torchlike.__version__
    assert v == "2.13.0+torchlike0.1.0" and isinstance(v, str)
    assert torchlike.version.__version__ is v
    assert torchlike.__torchlike_version__ == torchlike.version.torchlike_version == "0.1.0"
    p = parse(v)
    assert p.release == (2, 13, 0) and p.local == "torchlike0.1.0" and p.base_version == "2.13.0"
    assert v.split("+")[0].split(".")[:2] == ["2", "13"]


@pytest.mark.parametrize("other", OTHERS, ids=repr)
def test_comparisons_as_torchs_torchversion(other):
    ours, theirs = torchlike.__version__, TorchsVersion(str(torchlike.__version__))
    # torch's TorchVersion knows its vendored packaging's Version class; ours, packaging's
    their_other = TorchsPackagingVersion(str(other)) if isinstance(other, Version) else other
    for op in OPS:
        assert op(ours, other) == op(theirs, their_other), (op, other)


def test_version_module_attributes():
    import torch
    for name in ("cuda", "hip", "debug", "git_version"):
        assert hasattr(torchlike.version, name) and hasattr(torch.version, name)
    assert torchlike.version.hip is None and torchlike.version.debug is False
    assert "torchlike" in torchlike.version.git_version


def test_typical_version_gates():
    v = torchlike.__version__
    assert v >= "2.2" and v >= (2, 1) and not v < "2.0" and parse(v) >= parse("2.2")
    assert tuple(int(p) for p in v.split("+")[0].split(".")[:2]) >= (2, 2)
    assert hash(v) == hash("2.13.0+torchlike0.1.0")
