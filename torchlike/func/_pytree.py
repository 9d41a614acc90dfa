"""A small pytree in torch's convention (torch.utils._pytree): tuples, lists, dicts,
OrderedDicts, namedtuples and torch.return_types are nodes; everything else (Tensors, None,
numbers) is a leaf.

jax's tree_util treats None as an empty node, so torch's ``in_dims=(0, None)`` cannot be
flattened with it; the transforms use this module for user-facing structures.
"""
from __future__ import annotations

from collections import OrderedDict

__all__ = ["tree_flatten", "tree_unflatten", "tree_map", "broadcast_prefix", "TreeSpec",
           "treespec_pprint"]


class TreeSpec:
    __slots__ = ("kind", "meta", "children", "num_leaves")

    def __init__(self, kind, meta, children):
        self.kind, self.meta, self.children = kind, meta, children
        self.num_leaves = 1 if kind == "leaf" else sum(c.num_leaves for c in children)

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.kind == other.kind
                and self.meta == other.meta and self.children == other.children)

    def __repr__(self, indent=0):
        """torch's text: ``TreeSpec(tuple, None, [*,\n  *])``, a child per line."""
        if self.kind == "leaf":
            return "*"
        name, context = self.kind, None
        if self.kind in ("dict", "odict"):
            name, context = ("dict" if self.kind == "dict" else "OrderedDict"), list(self.meta)
        elif self.kind == "namedtuple":
            context = self.meta
        elif self.kind == "structseq":
            name = self.meta.__name__
        indent += 2
        kids = (",\n" + " " * indent).join(c.__repr__(indent) for c in self.children)
        return f"TreeSpec({name}, {context}, [{kids}])"


_LEAF = TreeSpec("leaf", None, ())


def _node(x):
    if isinstance(x, tuple):
        if hasattr(type(x), "_fields"):
            return "namedtuple", type(x), list(x)
        if hasattr(type(x), "n_sequence_fields"):      # torch.return_types (structseq)
            return "structseq", type(x), list(x)
        return "tuple", None, list(x)
    if isinstance(x, list):
        return "list", None, list(x)
    if isinstance(x, OrderedDict):
        keys = list(x.keys())
        return "odict", tuple(keys), [x[k] for k in keys]
    if type(x) is dict:
        keys = list(x.keys())
        return "dict", tuple(keys), [x[k] for k in keys]
    return None


def tree_flatten(x):
    """(leaves, spec)."""
    leaves = []

    def rec(v):
        n = _node(v)
        if n is None:
            leaves.append(v)
            return _LEAF
        kind, meta, kids = n
        return TreeSpec(kind, meta, tuple(rec(k) for k in kids))

    spec = rec(x)
    return leaves, spec


def tree_unflatten(leaves, spec):
    it = iter(leaves)

    def rec(s):
        if s.kind == "leaf":
            return next(it)
        kids = [rec(c) for c in s.children]
        if s.kind == "tuple":
            return tuple(kids)
        if s.kind == "list":
            return kids
        if s.kind == "dict":
            return dict(zip(s.meta, kids))
        if s.kind == "odict":
            return OrderedDict(zip(s.meta, kids))
        if s.kind == "structseq":
            return s.meta(kids)
        return s.meta(*kids)

    return rec(spec)


def tree_map(fn, x):
    leaves, spec = tree_flatten(x)
    return tree_unflatten([fn(v) for v in leaves], spec)


def broadcast_prefix(prefix, spec):
    """Flatten ``prefix`` (a tree whose leaves apply to whole subtrees of ``spec``) to one value
    per leaf of ``spec``; None when the structures are incompatible (torch's
    ``_broadcast_to_and_flatten``)."""
    out = []

    def rec(p, s):
        n = _node(p)
        if n is None:
            out.extend([p] * s.num_leaves)
            return True
        if s.kind == "leaf":
            return False
        kind, meta, kids = n
        if kind != s.kind or len(kids) != len(s.children):
            return False
        if kind in ("dict", "odict"):
            if set(meta) != set(s.meta):
                return False
            d = dict(zip(meta, kids))
            kids = [d[k] for k in s.meta]
        elif kind in ("namedtuple", "structseq") and meta is not s.meta:
            return False
        return all(rec(k, c) for k, c in zip(kids, s.children))

    return out if rec(prefix, spec) else None


class _Asterisk(str):
    def __repr__(self):
        return "*"


def treespec_pprint(spec):
    """torch's ``treespec_pprint``: the structure as its containers print, ``*`` a leaf
    (``(*, *)``; vjp's message shows it where vmap's shows the spec itself)."""
    return repr(tree_unflatten([_Asterisk("*")] * spec.num_leaves, spec))
