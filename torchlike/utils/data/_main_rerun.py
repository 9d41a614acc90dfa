"""The one-time warning for DataLoader workers that re-run the main script's module code.

Workers start with ``spawn`` (a forked child running jax can deadlock), and a spawned child
imports the main script again to find the dataset's classes: every module-level statement
outside ``if __name__ == "__main__":`` runs again in each worker. torch forks on Linux, so torch
scripts often have such code; rather than re-run it silently, DataLoader says so once, naming
the first such line.
"""
from __future__ import annotations

import ast
import multiprocessing
import sys
import warnings

_warned: set = set()

# statements that only define names (re-running them in a worker does no visible work)
_DEFINITIONS = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                ast.Pass)


def _is_main_guard(node):
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    names = [node.test.left, *node.test.comparators]
    return any(isinstance(n, ast.Name) and n.id == "__name__" for n in names) and any(
        isinstance(n, ast.Constant) and n.value == "__main__" for n in names)


def _does_work(node):
    if isinstance(node, _DEFINITIONS) or _is_main_guard(node):
        return False
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
        return False   # docstring
    if isinstance(node, (ast.Assign, ast.AnnAssign)):
        # `nn = torch.nn`, `N = 10`: no call, nothing to re-run
        value = node.value
        return value is not None and any(isinstance(n, (ast.Call, ast.Await, ast.Yield))
                                         for n in ast.walk(value))
    return True


def first_rerun_line(path):
    """``(line number, source line)`` of the first module-level statement of ``path`` that a
    spawned worker would run again, or None."""
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
        tree = ast.parse(source, path)
    except (OSError, SyntaxError, ValueError):
        return None
    lines = source.splitlines()
    for node in tree.body:
        if _does_work(node):
            return node.lineno, lines[node.lineno - 1].strip()
    return None


def warn_if_workers_rerun_main(num_workers, context):
    """Warn once per script when ``num_workers`` spawned workers would re-run its code."""
    if num_workers <= 0 or multiprocessing.parent_process() is not None:
        return
    method = context if isinstance(context, str) or context is None else \
        context.get_start_method()
    if method == "fork":
        return
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not path or path in _warned or getattr(getattr(main, "__spec__", None), "name", None):
        return    # interactive, already warned, or run with -m (imported by name, guarded)
    _warned.add(path)
    found = first_rerun_line(path)
    if found is None:
        return
    line, text = found
    warnings.warn(
        f"DataLoader workers start as fresh processes ('spawn': JAX cannot be forked safely), "
        f"and each one imports {path} again: its module-level code outside "
        f"`if __name__ == \"__main__\":` runs once more in every worker (from line {line}: "
        f"{text!r}). Move that code under `if __name__ == \"__main__\":` to run it once, or "
        f"use num_workers=0.", UserWarning, stacklevel=3)
