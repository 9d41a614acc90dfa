"""torch.return_types: the named tuple classes of torch's multi-output ops.

``torch.max(x, 0)``, ``torch.sort``, ``torch.linalg.slogdet``, ... return instances of these
classes (``*_out`` when called with ``out=``). As torch's (C "structseq" types), they are
tuples with read-only named fields, ``n_fields`` / ``n_sequence_fields`` / ``n_unnamed_fields``
and no namedtuple API (no ``_fields``, ``_asdict``, ``_replace``, ``_make``); they are built
from one sequence, print one field per line, and are registered pytree nodes (jax's tree_util,
``torch.utils._pytree``). One factory, :func:`_structseq`, makes every one of them.

    >>> import torchlike as torch
    >>> torch.return_types.max((torch.tensor(3.), torch.tensor(1)))
    torch.return_types.max(
    values=tensor(3.),
    indices=tensor(1))
"""
from __future__ import annotations

import jax as _jax

from . import _storage
from ._tensor_str import c_type_format

__all__ = ["pytree_register_structseq", "all_return_types"]

all_return_types = []

_MODULE = "torch.return_types"
_CLASSES: dict = {}          # name -> class (public and private)
_OUT = _storage.STRUCTSEQ_OUT  # class -> its ``*_out`` class (what ``out=`` returns)
_NO_DICT = object()


class _Field(property):
    """A structseq field: read through ``tuple.__getitem__``; assigning or deleting it is
    torch's ``AttributeError: readonly attribute``."""

    def __set__(self, obj, value):
        raise AttributeError("readonly attribute")

    def __delete__(self, obj):
        raise AttributeError("readonly attribute")

    def __repr__(self):
        return f"<member {self._name!r} of {self._owner!r} objects>"


def _structseq_new(cls, *args, **kwargs):
    """CPython's ``structseq_new(sequence, dict={})``, with its messages."""
    tp = _MODULE + "." + cls.__qualname__
    if len(args) + len(kwargs) > 2:
        raise TypeError(f"structseq() takes at most 2 arguments "
                        f"({len(args) + len(kwargs)} given)")
    names = ("sequence", "dict")
    for i, k in enumerate(names[:len(args)]):
        if k in kwargs:
            raise TypeError(f"argument for structseq() given by name ({k!r}) and position "
                            f"({i + 1})")
    if not args and "sequence" not in kwargs:
        raise TypeError("structseq() missing required argument 'sequence' (pos 1)")
    for k in kwargs:
        if k not in names:
            raise TypeError(f"{k!r} is an invalid keyword argument for structseq()")
    vals = dict(zip(names, args), **kwargs)
    d = vals.get("dict", _NO_DICT)
    seq = vals["sequence"]
    if type(seq) is not tuple:
        try:
            seq = tuple(seq)
        except TypeError:
            raise TypeError("constructor requires a sequence") from None
    if d is not _NO_DICT and not isinstance(d, dict):
        raise TypeError(f"{tp}() takes a dict as second arg, if any")
    n = cls.n_sequence_fields
    if len(seq) != n:
        raise TypeError(f"{tp}() takes a {n}-sequence ({len(seq)}-sequence given)")
    return tuple.__new__(cls, seq)


def _structseq_repr(self):
    """torch's ``returned_structseq_repr``: the qualified type name, then one
    ``field=repr(value)`` per line."""
    fields = type(self).__match_args__
    return (f"{_MODULE}.{type(self).__qualname__}(\n"
            + ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self)) + ")")


def _structseq_reduce(self):
    # by name through this module: the class's own path, torch.return_types.<name>, is real
    # torch's module wherever torch is importable
    return _rebuild, (type(self).__qualname__, tuple(self))


def _rebuild(name, values):
    return tuple.__new__(_CLASSES[name], values)


def _structseq_getattr(self, name):
    raise AttributeError(f"'{_MODULE}.{type(self).__qualname__}' object has no attribute "
                         f"{name!r}")


def _structseq_setattr(self, name, value):
    if name in type(self).__match_args__:
        raise AttributeError("readonly attribute")
    raise AttributeError(f"'{_MODULE}.{type(self).__qualname__}' object has no attribute "
                         f"{name!r}")


def _structseq_delattr(self, name):
    _structseq_setattr(self, name, None)


@classmethod
def _structseq_init_subclass(cls, **kwargs):
    raise TypeError(f"type '{_MODULE}.{cls.__base__.__qualname__}' is not an acceptable base "
                    f"type")


def _jax_flatten(x):
    return tuple(x), None


def _jax_flatten_with_keys(x):
    return tuple((_jax.tree_util.SequenceKey(i), v) for i, v in enumerate(x)), None


def _structseq(name, fields):
    """The class ``torch.return_types.<name>`` with ``fields``: a tuple subclass as torch's
    structseq (see the module docstring), registered as a jax and a torch pytree node."""
    fields = tuple(fields)
    ns = {"__module__": _MODULE, "__qualname__": name, "__doc__": None, "__slots__": (),
          "__new__": _structseq_new, "__repr__": _structseq_repr,
          "__format__": c_type_format(f"{_MODULE}.{name}"),
          "__reduce__": _structseq_reduce, "__getattr__": _structseq_getattr,
          "__setattr__": _structseq_setattr, "__delattr__": _structseq_delattr,
          "__init_subclass__": _structseq_init_subclass, "__match_args__": fields,
          "n_sequence_fields": len(fields), "n_fields": len(fields), "n_unnamed_fields": 0}
    for i, f in enumerate(fields):
        ns[f] = prop = _Field(_itemgetter(i))
        prop.__doc__, prop._name = "", f
    cls = type(name, (tuple,), ns)
    del cls.__slots__               # (the layout stays: no __dict__, no __weakref__)
    for f in fields:
        ns[f]._owner = f"{_MODULE}.{name}"
    _CLASSES[name] = cls
    _jax.tree_util.register_pytree_with_keys(
        cls, _jax_flatten_with_keys, lambda _, children, cls=cls: tuple.__new__(cls, children),
        _jax_flatten)
    pytree_register_structseq(cls)
    return cls


def _itemgetter(i):
    import operator
    return operator.itemgetter(i)


def pytree_register_structseq(cls):
    """Register ``cls`` (a structseq class) as a ``torch.utils._pytree`` node."""
    from .utils import _pytree

    def structseq_flatten(structseq):
        return list(structseq), None

    def structseq_unflatten(values, context):
        return cls(values)

    _pytree.register_pytree_node(cls, structseq_flatten, structseq_unflatten)


def maker(name):
    """A fast positional constructor for torchlike's ops: ``maker("max")(values, indices)``
    (no checks: the op passes exactly the fields)."""
    cls = _CLASSES[name]

    def make(*values):
        return tuple.__new__(cls, values)
    make.cls = cls
    return make


def out_type(result):
    """The ``*_out`` class that ``out=`` returns for ``result``'s class; None for anything that
    is not a structseq with an out form (a plain tuple, a namedtuple)."""
    return _OUT.get(type(result))


_VI = ("values", "indices")
# torch 2.13's torch.return_types: name -> fields; True marks a class with a ``*_out`` twin
_TABLE = [
    ("_fake_quantize_per_tensor_affine_cachemask_tensor_qparams", ("output", "mask"), False),
    ("_fused_moving_avg_obs_fq_helper", ("output", "mask"), False),
    ("_linalg_det", ("result", "LU", "pivots"), True),
    ("_linalg_eigh", ("eigenvalues", "eigenvectors"), True),
    ("_linalg_slogdet", ("sign", "logabsdet", "LU", "pivots"), True),
    ("_linalg_solve_ex", ("result", "LU", "pivots", "info"), True),
    ("_linalg_svd", ("U", "S", "Vh"), True),
    ("_lu_with_info", ("LU", "pivots", "info"), False),
    ("_scaled_dot_product_cudnn_attention",
     ("output", "logsumexp", "cum_seq_q", "cum_seq_k", "max_q", "max_k", "philox_seed",
      "philox_offset", "debug_attn_mask"), False),
    ("_scaled_dot_product_efficient_attention",
     ("output", "log_sumexp", "philox_seed", "philox_offset"), False),
    ("_scaled_dot_product_flash_attention",
     ("output", "logsumexp", "cum_seq_q", "cum_seq_k", "max_q", "max_k", "rng_state", "unused",
      "debug_attn_mask"), False),
    ("_scaled_dot_product_flash_attention_for_cpu", ("output", "logsumexp"), False),
    ("_unpack_dual", ("primal", "tangent"), False),
    ("aminmax", ("min", "max"), True),
    ("cummax", _VI, True),
    ("cummin", _VI, True),
    ("frexp", ("mantissa", "exponent"), True),
    ("geqrf", ("a", "tau"), True),
    ("histogram", ("hist", "bin_edges"), True),
    ("histogramdd", ("hist", "bin_edges"), False),
    ("kthvalue", _VI, True),
    ("linalg_cholesky_ex", ("L", "info"), True),
    ("linalg_eig", ("eigenvalues", "eigenvectors"), True),
    ("linalg_eigh", ("eigenvalues", "eigenvectors"), True),
    ("linalg_inv_ex", ("inverse", "info"), True),
    ("linalg_ldl_factor", ("LD", "pivots"), True),
    ("linalg_ldl_factor_ex", ("LD", "pivots", "info"), True),
    ("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"), True),
    ("linalg_lu", ("P", "L", "U"), True),
    ("linalg_lu_factor", ("LU", "pivots"), True),
    ("linalg_lu_factor_ex", ("LU", "pivots", "info"), True),
    ("linalg_qr", ("Q", "R"), True),
    ("linalg_slogdet", ("sign", "logabsdet"), True),
    ("linalg_solve_ex", ("result", "info"), True),
    ("linalg_svd", ("U", "S", "Vh"), True),
    ("lu_unpack", ("P", "L", "U"), True),
    ("max", _VI, True),
    ("median", _VI, True),
    ("min", _VI, True),
    ("mode", _VI, True),
    ("nanmedian", _VI, True),
    ("qr", ("Q", "R"), True),
    ("slogdet", ("sign", "logabsdet"), True),
    ("sort", _VI, True),
    ("svd", ("U", "S", "V"), True),
    ("topk", _VI, True),
    ("triangular_solve", ("solution", "cloned_coefficient"), True),
]

for _name, _fields, _has_out in _TABLE:
    _cls = globals()[_name] = _structseq(_name, _fields)
    if _has_out:
        _OUT[_cls] = globals()[_name + "_out"] = _structseq(_name + "_out", _fields)
for _name in sorted(_CLASSES):          # torch's order: dir() of its C module
    if not _name.startswith("_"):
        __all__.append(_name)
        all_return_types.append(_CLASSES[_name])
del _name, _fields, _has_out, _cls
