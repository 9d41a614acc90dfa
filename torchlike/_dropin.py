"""Run unmodified PyTorch code on torchlike: every ``import torch`` resolves to torchlike.

    python -m torchlike script.py [args...]          # a script
    python -m torchlike -m package.module [args...]  # a module (pytest, a launcher, ...)
    python -m pytest -p torchlike.pytest_plugin ...  # a torch test suite
    torchlike.install_as_torch()                     # notebooks, conftest.py: call it first

``install`` puts a finder at the front of ``sys.meta_path`` that answers ``torch`` and
``torch.X`` with torchlike's own module objects (``torch.nn is torchlike.nn``), so the
program's imports and its libraries' resolve alike. It also puts a directory holding a ``torch``
package that calls ``install`` (``torchlike/_dropin_shim``) on ``sys.path`` and at the front of
``PYTHONPATH``: child processes inherit it (DataLoader workers and ``multiprocessing.spawn``
children through ``sys.path``, launchers and ``subprocess`` through the environment), so their
``import torch`` is torchlike too. A torch module torchlike does not provide is a
ModuleNotFoundError naming it; real torch imported before ``install`` is a RuntimeError (the
two libraries' tensors do not mix).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import runpy
import sys
import types

SHIM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_dropin_shim")

__all__ = ["install", "installed", "main"]


# torch's modules whose torchlike counterpart has another name (``torchlike._ops`` is the op
# families' package; torch's ``_ops`` holds ``torch.ops`` and its overload classes)
_RENAMED = {"torch._ops": "torchlike._ops_namespace"}


def _target(fullname):
    """torch.X.Y -> torchlike.X.Y"""
    return _RENAMED.get(fullname) or "torchlike" + fullname[len("torch"):]


def _not_provided(fullname):
    return ModuleNotFoundError(
        f"No module named {fullname!r}: torchlike (PyTorch's API on JAX, standing in for torch "
        f"in this process) does not provide {fullname}", name=fullname)


def _resolve(fullname):
    """The torchlike module that stands for torch module ``fullname``."""
    target = _target(fullname)
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as e:
        if e.name is None or not (target == e.name or target.startswith(e.name + ".")):
            raise   # a module that exists failed to import something else: its own error
    # a namespace held as an attribute (not a module file) of its parent
    parent, _, leaf = target.rpartition(".")
    value = getattr(sys.modules.get(parent), leaf, None) if parent else None
    if isinstance(value, types.ModuleType):
        return value
    raise _not_provided(fullname)


class _TorchFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``torch`` and ``torch.*`` -> the torchlike module of the same path."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        module = _resolve(fullname)
        return importlib.machinery.ModuleSpec(
            fullname, self, origin=getattr(module, "__file__", None),
            loader_state=(module, getattr(module, "__spec__", None)),
            is_package=hasattr(module, "__path__"))

    def create_module(self, spec):
        return spec.loader_state[0]

    def exec_module(self, module):
        # the import system stamped the alias spec on torchlike's module: give its own back
        # (relative imports, reload and multiprocessing read __spec__)
        own = module.__spec__.loader_state[1]
        if own is not None:
            module.__spec__ = own


_FINDER = _TorchFinder()


def installed():
    """True when ``import torch`` in this process gives torchlike."""
    import torchlike
    return _FINDER in sys.meta_path and sys.modules.get("torch") is torchlike


def _is_shim(module):
    return (getattr(module, "__file__", None) or "").startswith(SHIM_DIR + os.sep)


def install(*, _shim=None):
    """Make ``import torch`` (and ``torch.X``, ``from torch.X import ...``) give torchlike.

    Call it before anything imports torch: in a notebook's first cell, at the top of a
    ``conftest.py``. Child processes started afterwards inherit it. Calling it again does
    nothing. Raises RuntimeError when real torch was imported already.

        >>> import torchlike
        >>> torchlike.install_as_torch()
        >>> import torch.nn as nn
        >>> nn is torchlike.nn
        True
    """
    import torchlike
    real = [name for name, mod in list(sys.modules.items())
            if (name == "torch" or name.startswith("torch.")) and mod is not None
            and not _is_shim(mod) and mod is not torchlike
            and not (getattr(mod, "__name__", "") or "").startswith("torchlike")]
    if real:
        real.sort(key=lambda name: (name != "torch", name))
        where = getattr(sys.modules.get(real[0]), "__file__", None) or "?"
        raise RuntimeError(
            f"PyTorch itself was imported in this process before torchlike's drop-in was "
            f"installed ({real[0]!r} from {where}); torch and torchlike tensors do not mix, "
            f"so the drop-in cannot take over now. Install it before anything imports torch: "
            f"run the program as `python -m torchlike script.py`, or call "
            f"torchlike.install_as_torch() first (in a notebook, restart the kernel and call it "
            f"in the first cell).")
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    sys.modules["torch"] = torchlike
    # (``torch.__name__`` is "torch": libraries check it, pyro's patches of torch functions;
    # and a tensor's class says torch: autoray and opt_einsum pick their backend from
    # ``type(x).__module__``, and took torchlike for an unknown library)
    torchlike.__name__ = "torch"
    torchlike.Tensor.__module__ = "torch"
    torchlike.nn.Parameter.__module__ = "torch.nn.parameter"
    # children: spawned Python processes take sys.path from the parent (multiprocessing) or
    # PYTHONPATH from the environment (everything else)
    if SHIM_DIR not in sys.path:
        sys.path.insert(1 if sys.path else 0, SHIM_DIR)
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if not parts or parts[0] != SHIM_DIR:
        os.environ["PYTHONPATH"] = os.pathsep.join([SHIM_DIR] + [p for p in parts
                                                                 if p != SHIM_DIR])


_USAGE = """\
usage: python -m torchlike script.py [args...]
       python -m torchlike -m module [args...]
       python -m torchlike -c command [args...]

Runs a PyTorch program on torchlike: every `import torch` (the program's, its libraries' and
its child processes') gives torchlike. A torch test suite: python -m torchlike -m pytest ...
"""


def main(argv=None):
    """The ``python -m torchlike`` command line."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(_USAGE)
        return 0 if argv else 2
    install()
    if argv[0] == "-m":
        if len(argv) < 2:
            sys.stderr.write("python -m torchlike: -m needs a module name\n" + _USAGE)
            return 2
        sys.argv = [argv[1]] + argv[2:]   # run_module puts the module's path in argv[0]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    elif argv[0] == "-c":
        if len(argv) < 2:
            sys.stderr.write("python -m torchlike: -c needs a command\n" + _USAGE)
            return 2
        sys.argv = ["-c"] + argv[2:]
        sys.path[0] = ""
        _run_main(compile(argv[1], "<string>", "exec"), {})
    else:
        path = argv[0]
        if not os.path.exists(path):
            sys.stderr.write(f"python -m torchlike: can't open file {path!r}: "
                             f"[Errno 2] No such file or directory\n")
            return 2
        sys.argv = argv
        full = os.path.abspath(path)
        sys.path[0] = os.path.dirname(full)     # as `python script.py` does
        if os.path.isfile(full) and full.endswith(".py"):
            # (as `python script.py`: ``__file__`` absolute, so tracebacks and warnings name
            # the full path, and ``sys.argv[0]`` as typed, where runpy.run_path sets both)
            with open(full, "rb") as f:
                code = compile(f.read(), full, "exec")
            _run_main(code, {"__file__": full, "__cached__": None})
        else:                                   # a directory or archive with a __main__.py
            runpy.run_path(full, run_name="__main__")
    return 0


def _run_main(code, names):
    """Run ``code`` as the ``__main__`` module, with ``names`` in its namespace."""
    main_module = types.ModuleType("__main__")
    main_module.__dict__.update(names, __builtins__=__builtins__)
    saved = sys.modules["__main__"]
    sys.modules["__main__"] = main_module
    try:
        exec(code, main_module.__dict__)
    finally:
        sys.modules["__main__"] = saved


install_as_torch = install   # torchlike.install_as_torch()
