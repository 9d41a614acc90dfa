"""Unmodified torch programs on torchlike: ``python -m torchlike``, ``install_as_torch()``,
the pytest plugin, and the examples run with ``import torch``.

Each program runs in a fresh interpreter (the drop-in changes the import system of the process
it is installed in); the runner's output is compared with the same program run on real torch.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")


def _env():
    env = dict(os.environ)
    # the torchlike under test, whichever way it is installed
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p])
    env.pop("TORCHLIKE_DROPIN", None)
    return env


def _run(args, cwd, timeout=600):
    r = subprocess.run([sys.executable, *args], cwd=cwd, env=_env(), capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0, f"{args} exited {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout


HELPER = """\
import torch


def scaled(x, k):
    return torch.mul(x, k)
"""

PROGRAM = """\
import os
import sys

import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

import helper


class Squares(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return torch.tensor([float(i), float(i * i)]), i % 2


def child(rank, out_dir):
    x = helper.scaled(torch.arange(3.0), rank + 1)
    with open(os.path.join(out_dir, f"child{rank}.txt"), "w") as f:
        f.write(f"{rank} {x.tolist()}")


def main():
    out_dir = sys.argv[1]
    print("argv", sys.argv[2:])
    print("same module", nn.Linear.__module__.split(".")[-1], F.relu is torch.nn.functional.relu)
    layer = nn.Linear(2, 3)
    with torch.no_grad():
        layer.weight.copy_(torch.arange(6.0).reshape(3, 2) / 10)
        layer.bias.fill_(0.5)
    loader = DataLoader(Squares(), batch_size=4, num_workers=2)
    for xb, yb in loader:
        y = F.relu(layer(xb))
        print("batch", [round(v, 4) for v in y.sum(1).tolist()], yb.tolist(), yb.dtype)
    mp.spawn(child, args=(out_dir,), nprocs=2)
    for rank in range(2):
        with open(os.path.join(out_dir, f"child{rank}.txt")) as f:
            print("child", f.read())


if __name__ == "__main__":
    main()
"""


def _program(tmp_path):
    (tmp_path / "helper.py").write_text(HELPER)
    (tmp_path / "program.py").write_text(PROGRAM)
    (tmp_path / "out").mkdir()
    return str(tmp_path / "out")


def test_runner_script_with_workers_and_spawn_children_prints_torchs_output(tmp_path):
    out = _program(tmp_path)
    theirs = _run(["program.py", out, "a", "--b"], cwd=tmp_path)
    ours = _run(["-m", "torchlike", "program.py", out, "a", "--b"], cwd=tmp_path)
    assert "child 1 [0.0, 2.0, 4.0]" in theirs
    assert ours == theirs


PROBE = """\
import sys
import torch, torch.nn as nn, torchlike
from torch.utils.data import DataLoader
print(torch is torchlike, nn is torchlike.nn, DataLoader is torchlike.utils.data.DataLoader,
      sys.argv[1:], __name__)
"""


def test_runner_module_form_runs_a_module_as_main(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "probe.py").write_text(PROBE)
    out = _run(["-m", "torchlike", "-m", "pkg.probe", "x", "-y"], cwd=tmp_path)
    assert out == "True True True ['x', '-y'] __main__\n"


IN_PROCESS = """\
import subprocess, sys
import torchlike
torchlike.install_as_torch()
torchlike.install_as_torch()              # a second call does nothing
import torch
import torch.nn.functional as F
from torch.optim import SGD
print(torch is torchlike, F is torchlike.nn.functional, SGD is torchlike.optim.SGD)
print(torchlike.nn.__spec__.name)         # torchlike's modules keep their own spec
child = subprocess.run([sys.executable, "-c", "import torch; print(torch.__file__.split('/')[-2])"],
                       capture_output=True, text=True)
print(child.stdout.strip())
try:
    import torch.package
except ModuleNotFoundError as e:
    print(type(e).__name__, e.name, "|", e)
"""


def test_install_as_torch_in_process_children_and_missing_modules(tmp_path):
    out = _run(["-c", IN_PROCESS], cwd=tmp_path).splitlines()
    assert out[:3] == ["True True True", "torchlike.nn", "torchlike"]
    assert out[3] == ("ModuleNotFoundError torch.package | No module named 'torch.package': "
                      "torchlike (PyTorch's API on JAX, standing in for torch in this process) "
                      "does not provide torch.package")


def test_install_after_real_torch_raises(tmp_path):
    r = subprocess.run([sys.executable, "-c", "import torch, torchlike\n"
                        "torchlike.install_as_torch()"], cwd=tmp_path, env=_env(),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError: PyTorch itself was imported in this process before "
                           "torchlike's drop-in was installed ('torch' from ")
    assert "python -m torchlike script.py" in last


TORCH_TESTS = """\
import pytest
import torch
import torch.nn as nn


def test_linear_shape():
    assert nn.Linear(3, 2)(torch.zeros(5, 3)).shape == (5, 2)


def test_grad():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_raises():
    with pytest.raises(RuntimeError, match="shape"):
        torch.zeros(2, 3).view(4)


def test_is_torchlike():
    assert torch.__version__ >= "2.2" and "torchlike" in torch.__version__
"""


def test_pytest_plugin_runs_a_torch_test_file(tmp_path):
    (tmp_path / "test_model.py").write_text(TORCH_TESTS)
    out = _run(["-m", "pytest", "-p", "torchlike.pytest_plugin", "-n", "0", "-q",
                "-p", "no:cacheprovider", "test_model.py"], cwd=tmp_path)
    assert "4 passed" in out


def test_runner_usage():
    r = subprocess.run([sys.executable, "-m", "torchlike"], env=_env(), capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 2 and r.stdout.startswith("usage: python -m torchlike script.py")


# examples with the import line changed to `import torch`, run by the runner; their output must
# equal the direct run's (times masked). The long examples run elsewhere (test_nn_examples).
SHORT_EXAMPLES = {
    "seed1_gradient_hook.py": [], "seed2_modify_grad.py": [], "seed3_debug_linear.py": [],
    "seed4_remove_hook.py": [], "seed5_grad_norms.py": [],
    "train_mlp.py": ["--epochs", "2", "--ckpt", "{tmp}/mlp.pt"],
}
LONG_EXAMPLES = {"char_transformer.py", "cnn_classifier.py"}
# multi-process examples: their own launcher runs them (tests/test_distributed_global.py)
DISTRIBUTED_EXAMPLES = {"ddp_train.py", "fsdp_tp.py"}

RUN_ALL = """\
import runpy, sys
import torchlike
for path, args in {runs!r}:
    sys.argv = [path] + args
    torchlike.manual_seed(0)            # examples that draw without seeding
    print("==", path, flush=True)
    runpy.run_path(path, run_name="__main__")
    sys.stdout.flush()
"""


def _mask_times(text):
    text = re.sub(r"\(\d+(\.\d+)? m?s\)", "(T)", text)
    return text.replace("torch_import/", "/")


def test_every_example_is_listed():
    names = {f for f in os.listdir(EXAMPLES) if f.endswith(".py")}
    assert names == set(SHORT_EXAMPLES) | LONG_EXAMPLES | DISTRIBUTED_EXAMPLES


def test_examples_with_import_torch_under_the_runner_print_the_direct_output(tmp_path):
    copies = tmp_path / "torch_import"
    copies.mkdir()
    direct, dropin = [], []
    for name, args in SHORT_EXAMPLES.items():
        src = open(os.path.join(EXAMPLES, name)).read()
        assert src.count("\nimport torchlike as torch\n") == 1, name
        (copies / name).write_text(src.replace("\nimport torchlike as torch\n",
                                               "\nimport torch\n"))
        args = [a.format(tmp=tmp_path) for a in args]
        direct.append((os.path.join(EXAMPLES, name), args))
        dropin.append((str(copies / name), args))
    theirs = _run(["-c", RUN_ALL.format(runs=direct)], cwd=tmp_path)
    ours = _run(["-m", "torchlike", "-c", RUN_ALL.format(runs=dropin)], cwd=tmp_path)
    theirs = theirs.replace(EXAMPLES + "/", "/")
    ours = ours.replace(str(copies) + "/", "/")
    assert ours.count("\n== ") + ours.startswith("== ") == len(SHORT_EXAMPLES)
    assert _mask_times(ours) == _mask_times(theirs)


OPS_MODULE = """\
import torch
import torch._ops
from torch._ops import OpOverload, OpOverloadPacket
print(isinstance(torch.ops.aten.add.Tensor, OpOverload),
      isinstance(torch.ops.aten.add, OpOverloadPacket), torch._ops.ops is torch.ops)
"""


def test_torch_ops_module_is_the_ops_namespace_under_the_runner(tmp_path):
    """``torch._ops`` (where libraries import ``OpOverload`` from) is torchlike's ``torch.ops``
    module, not its op-family package of the same name; the same answers as torch's."""
    (tmp_path / "probe.py").write_text(OPS_MODULE)
    theirs = subprocess.run([sys.executable, "probe.py"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300).stdout
    assert theirs == "True True True\n"
    assert _run(["-m", "torchlike", "probe.py"], cwd=tmp_path) == theirs


SCRIPT_PATHS = """\
import sys, traceback, warnings
import torch
from torch.serialization import MAP_LOCATION, FileLike
warnings.simplefilter("always")
warnings.showwarning = lambda m, c, f, l, *a: print("warned at", f, l)
print(__file__, sys.argv[0], __name__, torch.__name__, torch.torch is torch)
parts = "torch.distributions.transforms.Transform".split(".")
assert parts[0] == torch.__name__           # (pyro's check before it patches a torch name)
import torch.nn.functional as F
print(F.relu(torch.tensor([-1.0, 2.0])).tolist(), torch.func.vmap(torch.sin)(torch.zeros(2)))
import opt_einsum                           # (picks its backend from type(x).__module__)
print(type(torch.ones(1)), type(torch.nn.Parameter(torch.ones(1))),
      opt_einsum.contract("ij,jk->ik", torch.ones(2, 3), torch.ones(3, 4)).sum())
warnings.warn("here")
try:
    raise ValueError("x")
except ValueError:
    print(traceback.extract_tb(sys.exc_info()[2])[-1].filename)
"""


def test_runner_gives_the_script_the_paths_python_does(tmp_path):
    """``__file__`` of the script is absolute and ``sys.argv[0]`` as typed, as under
    `python script.py` (warnings and tracebacks name the full path); ``torch.__name__`` is
    "torch" (pyro checks it before patching torch's functions) and a tensor's class says torch
    (opt_einsum and autoray choose their backend by it); torch.serialization's type aliases
    import (pyro's param store)."""
    (tmp_path / "paths.py").write_text(SCRIPT_PATHS)
    theirs = subprocess.run([sys.executable, "paths.py"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300)
    assert theirs.returncode == 0, theirs.stderr
    assert str(tmp_path / "paths.py") in theirs.stdout
    assert _run(["-m", "torchlike", "paths.py"], cwd=tmp_path) == theirs.stdout
