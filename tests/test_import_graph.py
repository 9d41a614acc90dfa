"""The import graph of ``torchlike/``: in the core, one cycle (Tensor <-> the creation functions).

Every ``import``/``from ... import`` in every module of the package is an edge, at module level
AND inside functions (a function-level import is still a dependency: it only defers it). An edge
goes to the module named by the statement; ``from pkg import name`` goes to ``pkg.name`` when that
is a submodule, else to ``pkg``. Parent packages that Python initialises on the way (``a/__init__`` for
``a.b``) are not edges: they are a consequence of the layout, not of the module's code.

Run ``python tests/test_import_graph.py`` to print the modules of every cycle.
"""
from __future__ import annotations

import ast
import os
import sys

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "torchlike")

# the one allowed cycle in the core: Tensor's methods build tensors (``new_*``, ``*_like``) and the
# creation functions build Tensors. Everything else in the core reaches Tensor through the
# registry's late-bound reference (``_registry._Tensor``, set by ``_tensor`` at import).
ALLOWED = {frozenset({"torchlike._tensor", "torchlike._creation"})}

# the core: the modules below the op families
CORE = ("_creation", "_device", "_registry", "_random", "_runtime", "_storage", "_tensor",
        "_tiers", "_caches", "_dtype", "_lazy", "amp", "autograd", "_ops._surface")


def _modules():
    mods = {}
    for dirpath, _dirs, files in os.walk(ROOT):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, os.path.dirname(ROOT))[:-3].replace(os.sep, ".")
            is_pkg = rel.endswith(".__init__")
            name = rel[:-len(".__init__")] if is_pkg else rel
            mods[name] = (path, is_pkg)
    return mods


def _resolve(mod, is_pkg, level, target):
    if level == 0:
        return target
    parts = mod.split(".")
    base = parts if is_pkg else parts[:-1]
    if level > 1:
        base = base[:-(level - 1)]
    return ".".join(base + ([target] if target else []))


def import_graph():
    """``{module: set(modules it imports)}`` restricted to torchlike's own modules."""
    mods = _modules()
    graph = {m: set() for m in mods}
    for mod, (path, is_pkg) in mods.items():
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(mod, is_pkg, node.level, node.module)
                subs = [base + "." + a.name for a in node.names]
                # ``from pkg import submodule`` depends on the submodule; ``from pkg import
                # attr`` on pkg itself
                targets = [t for t in subs if t in mods]
                if len(targets) < len(subs):
                    targets.append(base)
            for t in targets:
                if t in mods and t != mod:
                    graph[mod].add(t)
    return graph


def cycles(graph):
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        x = stack.pop()
                        on.discard(x)
                        comp.add(x)
                        if x == v:
                            break
                    if len(comp) > 1:
                        out.append(frozenset(comp))
                continue
            if w not in index:
                index[w] = low[w] = counter[0]
                counter[0] += 1
                stack.append(w)
                on.add(w)
                work.append((w, iter(sorted(graph[w]))))
            elif w in on:
                low[v] = min(low[v], index[w])
    return out


def _storage_modules():
    return {"torchlike._storage", "torchlike._registry", "torchlike.autograd.engine",
            "torchlike.autograd.graph", "torchlike.autograd.function",
            "torchlike.autograd.grad_mode", "torchlike.autograd", "torchlike._caches"}


# the dispatch path's tiers sit at the bottom, beside the caches: every jitted function of the
# registry, the engine and storage is a ``_tiers.Tiered``, which fused eager (``_fused``) records
TIERS = {"torchlike._tiers", "torchlike._interpret", "torchlike._program_cache",
         "torchlike._trace_store", "torchlike._fused", "torchlike._shape_poly"}


def test_the_tiers_import_nothing_above_them():
    g = import_graph()
    for m in TIERS:
        above = {t for t in g[m] if t not in TIERS and t != "torchlike._jax_config"}
        assert not above, (m, above)


def test_registry_does_not_know_storage():
    g = import_graph()
    assert "torchlike._storage" in g
    assert "torchlike._storage" not in g["torchlike._registry"]
    assert "torchlike._views" not in g


def test_engine_imports_nothing_above_autograd():
    g = import_graph()
    for m in ("torchlike.autograd", "torchlike.autograd.engine", "torchlike.autograd.graph",
              "torchlike.autograd.function"):
        above = {t for t in g[m] if not t.startswith("torchlike.autograd")
                 and t not in ("torchlike.utils.hooks", "torchlike._caches", "torchlike._lazy",
                               "torchlike._dtype")
                 and t not in TIERS}
        assert not above, (m, above)


def test_storage_imports_only_the_registry_and_below():
    g = import_graph()
    # (_vmap_levels is a leaf: it imports jax alone)
    assert not g["torchlike._vmap_levels"]
    allowed = {"torchlike._registry", "torchlike._caches", "torchlike._dtype",
               "torchlike._vmap_levels"} | TIERS
    above = {t for t in g["torchlike._storage"]
             if t not in allowed and not t.startswith("torchlike.autograd")}
    assert not above, above


def test_storage_registry_engine_are_in_no_cycle_but_tensor_registry():
    """Every cycle through the storage/engine core passes through the Tensor <-> registry link
    (``_tensor`` imports the registry; the registry reaches Tensor): without those two modules
    the core is in no cycle."""
    core = _storage_modules() - {"torchlike._registry"}
    g = import_graph()
    link = {"torchlike._tensor", "torchlike._registry"}
    rest = {m: {t for t in ts if t not in link} for m, ts in g.items() if m not in link}
    bad = [c for c in cycles(rest) if c & core]
    assert not bad, [sorted(c) for c in bad]


def _core(m):
    rest = m[len("torchlike."):]
    return any(rest == c or rest.startswith(c + ".") for c in CORE)


def core_cycles(graph):
    core = {m for m in graph if _core(m)}
    return set(cycles({m: {t for t in graph[m] if t in core} for m in core}))


def test_the_core_has_one_cycle_the_declared_pair():
    assert core_cycles(import_graph()) == ALLOWED


if __name__ == "__main__":
    g = import_graph()
    cs = cycles(g)
    print(f"{len(cs)} cycle(s) (strongly connected components of more than one module)")
    for c in cs:
        print(f"  {len(c)} modules:", " ".join(sorted(x.replace("torchlike.", "") for x in c)))
    for c in core_cycles(g):
        print(f"core: {len(c)} modules:", " ".join(sorted(x.replace("torchlike.", "") for x in c)))
    sys.exit(0)
