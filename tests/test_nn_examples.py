"""The nn examples run and learn (a couple of epochs, on generated data)."""
from __future__ import annotations

import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "examples",
                                                                     name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cnn_classifier_learns(capsys):
    acc = _load("cnn_classifier").main(["--epochs", "2"])
    out = capsys.readouterr().out
    assert "SmallCNN(" in out and "epoch 2" in out
    assert acc > 0.8


def test_seed3_debug_linear_runs(capsys):
    _load("seed3_debug_linear")
    assert "Intermediate gradient" in capsys.readouterr().out


def test_char_transformer_learns(capsys):
    first, last = _load("char_transformer").main(["--steps", "60", "--batch", "16"])
    assert last < first - 0.8
    assert "sample:" in capsys.readouterr().out


def _load_as_torch(name):
    """The example with its first line switched to ``import torch`` (it must run unchanged)."""
    import types
    src = open(os.path.join(ROOT, "examples", name + ".py")).read()
    assert "import torchlike as torch\n" in src
    mod = types.ModuleType(name + "_torch")
    exec(compile(src.replace("import torchlike as torch\n", "import torch\n"), name, "exec"),
         mod.__dict__)
    return mod


def test_examples_run_unchanged_on_torch(capsys):
    acc = _load_as_torch("cnn_classifier").main(["--epochs", "1"])
    assert acc > 0.3
    first, last = _load_as_torch("char_transformer").main(["--steps", "20", "--batch", "8"])
    assert last < first
