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


def _bound_names(nodes, out):
    """Names a module-level block binds, skipping ``if __name__ == "__main__":`` bodies and the
    bodies of functions and classes (their own names count)."""
    for node in nodes:
        if _is_main_guard(node):
            _bound_names(node.orelse, out)
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                out.add((a.asname or a.name).split(".")[0])
            continue
        for child in ast.walk(node):
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                out.add(child.id)
        for field in ("body", "orelse", "finalbody", "handlers"):
            sub = getattr(node, field, None)
            if isinstance(sub, list):
                _bound_names(sub, out)
    return out


def names_a_worker_finds():
    """The names a spawned worker's re-import of the main script defines (None: unknown, so
    take every one as found). A ``python -c`` or interactive main gives the worker nothing."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if not path:
        return set()
    try:
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError, ValueError):
        return None
    return _bound_names(tree.body, set())


def main_objects_workers_miss(state):
    """``{name: object}``: the classes and functions of the main script that ``state`` names and
    that a spawned worker's re-import would not define (defined under the main guard, or in a
    ``python -c`` program). torch's forked workers inherit them; spawned ones must get them by
    value."""
    import pickle
    import types
    found = names_a_worker_finds()
    if found is None:
        return {}
    seen = {}

    class _Probe(pickle.Pickler):
        def reducer_override(self, obj):
            if isinstance(obj, (type, types.FunctionType)) and \
                    getattr(obj, "__module__", None) == "__main__":
                top = obj.__qualname__.split(".")[0]
                if "<locals>" not in obj.__qualname__ and top not in found:
                    seen[obj.__qualname__] = obj
            return NotImplemented

    class _Sink:
        def write(self, b):
            return len(b)

    try:
        _Probe(_Sink(), protocol=pickle.HIGHEST_PROTOCOL).dump(state)
    except Exception:  # noqa: BLE001  (unpicklable: the worker start reports it)
        pass
    return seen
