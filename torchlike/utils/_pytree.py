"""torch.utils._pytree: nested containers flattened to leaves and a TreeSpec, torch's signatures.

Containers: tuple, list, dict (insertion order), namedtuple, OrderedDict, defaultdict, deque and
classes given to :func:`register_pytree_node`; everything else (tensors, numbers, None) is a
leaf, as in torch. The ``*_with_path`` forms pair each leaf with its key path (a tuple of
``SequenceKey``/``MappingKey``/``GetAttrKey``; :func:`keystr` prints it).

    >>> leaves, spec = tree_flatten({"a": [1, 2], "b": (3,)})
    >>> leaves, tree_unflatten([x * 10 for x in leaves], spec)
    ([1, 2, 3], {'a': [10, 20], 'b': (30,)})
"""
from __future__ import annotations

import collections
import dataclasses
from typing import Any, Callable

__all__ = ["TreeSpec", "LeafSpec", "register_pytree_node", "tree_is_leaf", "tree_flatten",
           "tree_unflatten", "tree_iter", "tree_leaves", "tree_structure", "tree_map",
           "tree_map_", "tree_map_only", "tree_map_only_", "tree_all", "tree_any",
           "tree_all_only", "tree_any_only", "is_namedtuple", "is_namedtuple_class",
           "is_namedtuple_instance", "KeyEntry", "SequenceKey", "MappingKey", "GetAttrKey",
           "keystr", "key_get", "tree_flatten_with_path", "tree_leaves_with_path",
           "tree_map_with_path"]

# flatten_fn(x) -> (children, context); unflatten_fn(children, context) -> x;
# flatten_with_keys_fn(x) -> ([(key, child), ...], context), or None
PyTree = Any
Context = Any
FlattenFunc = Callable[[PyTree], "tuple[list[Any], Context]"]
UnflattenFunc = Callable[["Iterable[Any]", Context], PyTree]
FlattenWithKeysFunc = Callable[[PyTree], "tuple[list[tuple[KeyEntry, Any]], Any]"]
KeyPath = "tuple[KeyEntry, ...]"
NodeDef = collections.namedtuple("NodeDef",
                                 "type flatten_fn unflatten_fn flatten_with_keys_fn")
SUPPORTED_NODES: dict = {}


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None):
    """Make ``cls`` a container: ``flatten_fn(x) -> (children, context)``,
    ``unflatten_fn(children, context) -> x`` (``flatten_with_keys_fn`` for the key paths)."""
    if cls in SUPPORTED_NODES:
        raise ValueError(f"{cls} is already registered as pytree node.")
    SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)


class KeyEntry:
    """One step of a key path: ``get(parent)`` reads the child it names."""


@dataclasses.dataclass(frozen=True)
class SequenceKey(KeyEntry):
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey(KeyEntry):
    key: Any

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey(KeyEntry):
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        return getattr(obj, self.name)


def keystr(kp):
    """A key path as the Python accessors it stands for: ``['x'][1].a``."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    """The subtree of ``obj`` at key path ``kp``."""
    for k in kp:
        obj = k.get(obj)
    return obj


def _sequence_keys(flatten_fn):
    def flatten_with_keys(x):
        children, context = flatten_fn(x)
        return [(SequenceKey(i), c) for i, c in enumerate(children)], context
    return flatten_with_keys


def _mapping_keys(flatten_fn, keys_of=lambda context: context):
    def flatten_with_keys(x):
        children, context = flatten_fn(x)
        return [(MappingKey(k), c) for k, c in zip(keys_of(context), children)], context
    return flatten_with_keys


def is_namedtuple_class(cls):
    return isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "_fields")


def is_namedtuple(obj):
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj):
    return is_namedtuple_class(type(obj))


# the built-in containers' functions, under torch's private names (libraries register their
# own classes with them: transformers' ModelOutput with ``_dict_flatten_with_keys``)
def _tuple_flatten(d):
    return list(d), None


def _tuple_unflatten(values, context):
    return tuple(values)


def _list_flatten(d):
    return list(d), None


def _list_unflatten(values, context):
    return list(values)


def _dict_flatten(d):
    return list(d.values()), list(d.keys())


def _dict_unflatten(values, context):
    return dict(zip(context, values))


def _ordereddict_flatten(d):
    return list(d.values()), list(d.keys())


def _ordereddict_unflatten(values, context):
    return collections.OrderedDict(zip(context, values))


_odict_flatten, _odict_unflatten = _ordereddict_flatten, _ordereddict_unflatten


def _defaultdict_flatten(d):
    return list(d.values()), [d.default_factory, list(d.keys())]


def _defaultdict_unflatten(values, context):
    return collections.defaultdict(context[0], zip(context[1], values))


def _deque_flatten(d):
    return list(d), d.maxlen


def _deque_unflatten(values, context):
    return collections.deque(values, maxlen=context)


def _namedtuple_flatten(d):
    return list(d), type(d)


def _namedtuple_unflatten(values, context):
    return context(*values)


_tuple_flatten_with_keys = _sequence_keys(_tuple_flatten)
_list_flatten_with_keys = _sequence_keys(_list_flatten)
_dict_flatten_with_keys = _mapping_keys(_dict_flatten)
_ordereddict_flatten_with_keys = _mapping_keys(_ordereddict_flatten)
_defaultdict_flatten_with_keys = _mapping_keys(_defaultdict_flatten, lambda ctx: ctx[1])
_deque_flatten_with_keys = _sequence_keys(_deque_flatten)


def _namedtuple_flatten_with_keys(d):
    values, cls = _namedtuple_flatten(d)
    return [(GetAttrKey(f), v) for f, v in zip(cls._fields, values)], cls


for _cls, _f, _u, _k in (
        (tuple, _tuple_flatten, _tuple_unflatten, _tuple_flatten_with_keys),
        (list, _list_flatten, _list_unflatten, _list_flatten_with_keys),
        (dict, _dict_flatten, _dict_unflatten, _dict_flatten_with_keys),
        (collections.OrderedDict, _ordereddict_flatten, _ordereddict_unflatten,
         _ordereddict_flatten_with_keys),
        (collections.defaultdict, _defaultdict_flatten, _defaultdict_unflatten,
         _defaultdict_flatten_with_keys),
        (collections.deque, _deque_flatten, _deque_unflatten, _deque_flatten_with_keys),
        # (every namedtuple class is one node type, ``collections.namedtuple``; the class is
        # the context)
        (collections.namedtuple, _namedtuple_flatten, _namedtuple_unflatten,
         _namedtuple_flatten_with_keys)):
    register_pytree_node(_cls, _f, _u, flatten_with_keys_fn=_k)
del _cls, _f, _u, _k

_BUILTIN_TYPES = frozenset({tuple, list, dict, collections.namedtuple, collections.OrderedDict,
                            collections.defaultdict, collections.deque})
_DICT_TYPES = frozenset({dict, collections.OrderedDict, collections.defaultdict})


def _get_node_type(x):
    t = type(x)
    return collections.namedtuple if is_namedtuple_class(t) else t


@dataclasses.dataclass
class TreeSpec:
    """The structure of a pytree: container type, its context, and the children's specs."""

    type: Any
    context: Any
    children_specs: list

    @property
    def num_leaves(self):
        return sum(c.num_leaves for c in self.children_specs)

    @property
    def num_nodes(self):
        return 1 + sum(c.num_nodes for c in self.children_specs)

    @property
    def num_children(self):
        return len(self.children_specs)

    def is_leaf(self):
        return False

    def children(self):
        return list(self.children_specs)

    def child(self, index):
        return self.children_specs[index]

    def unflatten(self, leaves):
        return tree_unflatten(leaves, self)

    def flatten_up_to(self, tree):
        """The subtrees of ``tree`` at this spec's leaves (``tree`` has this structure, or it
        as a prefix); a mismatch raises ValueError with torch's message."""
        subtrees = []

        def go(spec, node):
            if spec.is_leaf():
                subtrees.append(node)
                return
            node_type = _get_node_type(node)
            if spec.type not in _BUILTIN_TYPES:
                if node_type != spec.type:
                    raise ValueError(f"Type mismatch; expected {spec.type!r}, but got "
                                     f"{node_type!r}.")
                children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
                if len(children) != spec.num_children:
                    raise ValueError(f"Node arity mismatch; expected {spec.num_children}, "
                                     f"but got {len(children)}.")
                if context != spec.context:
                    raise ValueError(f"Node context mismatch for custom node type "
                                     f"{spec.type!r}.")
            else:
                both_dicts = spec.type in _DICT_TYPES and node_type in _DICT_TYPES
                if not both_dicts and node_type != spec.type:
                    raise ValueError(f"Node type mismatch; expected {spec.type!r}, but got "
                                     f"{node_type!r}.")
                if len(node) != spec.num_children:
                    raise ValueError(f"Node arity mismatch; expected {spec.num_children}, "
                                     f"but got {len(node)}.")
                if both_dicts:
                    # (dict types match each other, in any key order)
                    keys = (spec.context if spec.type is not collections.defaultdict
                            else spec.context[1])
                    got, want = set(node), set(keys)
                    if got != want:
                        message = ""
                        if want - got:
                            message += f"; missing key(s): {want - got}"
                        if got - want:
                            message += f"; extra key(s): {got - want}"
                        raise ValueError(f"Node keys mismatch{message}.")
                    children = [node[k] for k in keys]
                else:
                    children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
                    if node_type is not collections.deque and context != spec.context:
                        raise ValueError(f"Node context mismatch for node type {spec.type!r}; "
                                         f"expected {spec.context!r}, but got {context!r}.")
            for child, child_spec in zip(children, spec.children_specs):
                go(child_spec, child)

        go(self, tree)
        return subtrees

    def __repr__(self, indent=0):
        kids = ""
        if self.children_specs:
            indent += 2
            first, *rest = self.children_specs
            kids = first.__repr__(indent) + ("," if rest else "") + ",".join(
                "\n" + " " * indent + c.__repr__(indent) for c in rest)
        return f"TreeSpec({self.type.__name__}, {self.context}, [{kids}])"


class LeafSpec(TreeSpec):
    """The spec of one leaf."""

    def __init__(self):
        super().__init__(None, None, [])

    @property
    def num_leaves(self):
        return 1

    @property
    def num_nodes(self):
        return 1

    def is_leaf(self):
        return True

    def __repr__(self, indent=0):
        return "*"


def tree_is_leaf(tree, is_leaf=None):
    return (is_leaf is not None and is_leaf(tree)) or _get_node_type(tree) not in SUPPORTED_NODES


def tree_flatten(tree, is_leaf=None):
    """``(leaves, spec)`` of ``tree``."""
    leaves = []

    def go(x):
        if tree_is_leaf(x, is_leaf):
            leaves.append(x)
            return LeafSpec()
        t = _get_node_type(x)
        children, context = SUPPORTED_NODES[t].flatten_fn(x)
        return TreeSpec(t, context, [go(c) for c in children])

    spec = go(tree)
    return leaves, spec


def tree_unflatten(leaves, treespec):
    """The tree of ``treespec`` with ``leaves`` in leaf order."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): Expected `treespec` to be instance "
                        f"of TreeSpec but got item of type {type(treespec)}.")
    leaves = list(leaves)
    if len(leaves) != treespec.num_leaves:
        raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but "
                         f"the spec refers to a pytree that holds {treespec.num_leaves} items "
                         f"({treespec}).")
    it = iter(leaves)

    def go(spec):
        if spec.is_leaf():
            return next(it)
        children = [go(c) for c in spec.children_specs]
        return SUPPORTED_NODES[spec.type].unflatten_fn(children, spec.context)

    return go(treespec)


def tree_flatten_with_path(tree, is_leaf=None):
    """``([(key_path, leaf), ...], spec)`` of ``tree``."""
    paths = []

    def go(x, path):
        if tree_is_leaf(x, is_leaf):
            paths.append(path)
            return
        t = _get_node_type(x)
        flatten_with_keys = SUPPORTED_NODES[t].flatten_with_keys_fn
        if flatten_with_keys is None:
            raise ValueError(f"Did not find a flatten_with_keys_fn for type: {t}. Please pass "
                             "a flatten_with_keys_fn argument to register_pytree_node.")
        for k, c in flatten_with_keys(x)[0]:
            go(c, path + (k,))

    go(tree, ())
    leaves, spec = tree_flatten(tree, is_leaf)
    return list(zip(paths, leaves)), spec


def tree_leaves_with_path(tree, is_leaf=None):
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """``func(key_path, leaf, *matching subtrees of rests)`` at every leaf."""
    path_leaves, spec = tree_flatten_with_path(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return tree_unflatten([func(kp, x, *xs) for (kp, x), *xs in zip(path_leaves, *others)],
                          spec)


def tree_iter(tree, is_leaf=None):
    yield from tree_flatten(tree, is_leaf)[0]


def tree_leaves(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None):
    return tree_flatten(tree, is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """``func`` applied to every leaf and the matching subtrees of ``rests`` (each with
    ``tree``'s structure, or it as a prefix)."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    return tree_unflatten([func(*xs) for xs in zip(leaves, *others)], spec)


def tree_map_(func, tree, *rests, is_leaf=None):
    leaves, spec = tree_flatten(tree, is_leaf)
    others = [spec.flatten_up_to(r) for r in rests]
    for xs in zip(leaves, *others):
        func(*xs)
    return tree


def _pred(type_or_types_or_pred):
    if isinstance(type_or_types_or_pred, (type, tuple)) or \
            type(type_or_types_or_pred).__name__ == "UnionType":
        return lambda x: isinstance(x, type_or_types_or_pred)
    return type_or_types_or_pred


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """``func`` applied to the leaves of the given type(s) (or passing the predicate)."""
    pred = _pred(type_or_types_or_pred)
    return tree_map(lambda x: func(x) if pred(x) else x, tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    pred = _pred(type_or_types_or_pred)
    return tree_map_(lambda x: func(x) if pred(x) else None, tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    return all(map(pred, tree_iter(tree, is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    return any(map(pred, tree_iter(tree, is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None):
    check = _pred(type_or_types)
    return all(pred(x) for x in tree_iter(tree, is_leaf) if check(x))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None):
    check = _pred(type_or_types)
    return any(pred(x) for x in tree_iter(tree, is_leaf) if check(x))
