"""Traced jaxprs on disk: a warm start (a second process, same code and shapes) skips tracing.

The interpreter tier (``torchlike._tiers``) traces each function at each new signature with
``jax.make_jaxpr`` (1-75 ms). This module keeps those ClosedJaxprs, with their output PyTreeDef,
in ``<cache dir>/traces`` beside the program cache (``torchlike._program_cache``), under a key
that hashes the caller's identity string, the input signature and every version that could
change a trace (jax, jaxlib, numpy, ml_dtypes, Python, torchlike's version and its source
files' names, sizes and mtimes, 64-bit mode, this file format).

``dumps``/``loads`` turn a ``(closed_jaxpr, out_tree)`` into bytes and back. The format is a
pickle written by a Pickler whose ``reducer_override`` maps every object of a jaxpr to one of
this module's ``_r_*`` rebuild functions (variables, literals, equations, avals, dtypes, arrays,
primitives by name, the enum and NamedTuple classes of ``_CLASSES``...) and refuses anything
else (``dumps`` then returns None: the caller traces, a miss is always safe). The Unpickler's
``find_class`` resolves only those rebuild functions: a cache file never constructs any other
object, so it cannot run code. Callables that the interpreter never calls (custom_jvp's
``jvp_jaxpr_fun``, custom_vjp's ``fwd_jaxpr_thunk``/``bwd``/``out_trees``) become ``_Stub``\\ s
that raise if called (so a loaded custom_vjp jaxpr cannot be differentiated again); effects,
shardings other than the unspecified/empty-mesh ones and unknown primitives or classes make
``dumps`` return None.

Files start with a header (magic, format and versions, the entry's key, the payload's sha256):
foreign, stale, damaged or malicious entries are ignored, counted and removed, never raised
to the caller. Writes run in one background daemon thread (``flush()`` waits for them), go to
a temporary file renamed into place (atomic across processes), and past
``$TORCHLIKE_TRACE_CACHE_MB`` (default 256) the oldest entries are removed. Off with
``TORCHLIKE_TRACE_CACHE=0``, ``TORCHLIKE_PROGRAM_CACHE=0`` or ``TORCHLIKE_COMPILATION_CACHE=0``.
"""
from __future__ import annotations

import enum
import hashlib
import io
import json
import os
import pickle
import queue
import sys
import tempfile
import threading

import jax
import numpy as np
from jax._src import core
from jax._src import source_info_util

from . import _tiers

__all__ = ["dumps", "loads", "get", "put", "get_symbolic", "put_symbolic", "flush", "directory",
           "key", "stats", "register_node"]

_FORMAT = 2
_MAGIC = b"torchlike-trace\n"
_PROTOCOL = 5
MAX_BYTES = int(float(os.environ.get("TORCHLIKE_TRACE_CACHE_MB", "256")) * (1 << 20))

_stats = {"loaded": 0, "saved": 0, "ignored": 0, "unserializable": 0}
_lock = threading.Lock()


class _Refuse(Exception):
    """An object ``dumps`` cannot write faithfully."""


# ------------------------------------------------------------------ stand-ins for callables

class _Stub:
    """Stands in for a callable parameter the interpreter never uses (custom_jvp's jvp rule,
    custom_vjp's fwd/bwd/out_trees); calling it raises."""

    __slots__ = ("what",)

    def __init__(self, what):
        self.what = what

    def __call__(self, *a, **k):
        raise RuntimeError(f"torchlike trace store: {self.what} of a jaxpr loaded from disk "
                           "is not available (trace the function again)")

    def __repr__(self):
        return f"<not stored: {self.what}>"


# (primitive name, parameter) -> callables replaced by a _Stub
_STUBBED = {("custom_jvp_call", "jvp_jaxpr_fun"), ("custom_jvp_call", "jvp_jaxpr_thunk"),
            ("custom_vjp_call", "fwd_jaxpr_thunk"), ("custom_vjp_call", "bwd"),
            ("custom_vjp_call", "out_trees")}


# ------------------------------------------------------------------ allow-listed classes

def _classes():
    """The enum and NamedTuple classes that may occur in parameters: qualified name -> class."""
    out = {}
    from jax._src.lax import lax as L, slicing as S, convolution as C
    cands = [L.Precision, L.RoundingMethod, S.GatherScatterMode, S.GatherDimensionNumbers,
             S.ScatterDimensionNumbers, C.ConvDimensionNumbers, core.MemorySpace]
    for mod, names in (("jax._src.lax.lax", ("DotAlgorithmPreset", "AccuracyMode", "Tolerance",
                                             "DotAlgorithm")),
                       ("jax._src.lax.control_flow.solves", ("_LinearSolveTuple",)),
                       ("jax._src.lax.windowed_reductions", ()),
                       ("jax._src.lax.linalg", ("EigImplementation", "EighImplementation",
                                                "SvdAlgorithm"))):
        m = sys.modules.get(mod)
        for n in names:
            c = getattr(m, n, None)
            if isinstance(c, type):
                cands.append(c)
    for c in cands:
        if issubclass(c, enum.Enum) or (issubclass(c, tuple) and hasattr(c, "_fields")):
            out[f"{c.__module__}.{c.__qualname__}"] = c
    return out


_CLS = []


def _cls_table():
    if not _CLS:
        t = _classes()
        _CLS.append((t, {c: k for k, c in t.items()}))
    return _CLS[0]


def _dtype_table():
    import ml_dtypes
    names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "float32", "float64", "complex64", "complex128"]
    out = {n: np.dtype(n) for n in names}
    for n in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz",
              "float8_e4m3b11fnuz", "float8_e4m3", "float8_e3m4", "float8_e8m0fnu",
              "float4_e2m1fn", "int4", "uint4", "int2", "uint2"):
        t = getattr(ml_dtypes, n, None)
        if t is not None:
            out[np.dtype(t).name] = np.dtype(t)
    return out


_DTYPES = []


def _dtypes():
    if not _DTYPES:
        _DTYPES.append(_dtype_table())
    return _DTYPES[0]


# ------------------------------------------------------------------ primitives by name

_prims = {}             # key -> Primitive
_prim_keys = {}         # id(Primitive) -> key
_scanned = [0]          # len(sys.modules) at the last scan


def _scan_primitives():
    """Index every module-level Primitive of jax's and torchlike's loaded modules: by its name,
    or ``module:attribute`` where two primitives share a name."""
    found = {}
    for mname, mod in list(sys.modules.items()):
        if mod is None or not (mname.startswith("jax") or mname.startswith("torchlike")):
            continue
        try:
            items = list(vars(mod).items())
        except TypeError:
            continue
        for attr, v in items:
            if isinstance(v, core.Primitive):
                found.setdefault(id(v), (v, f"{mname}:{attr}"))
    by_name = {}
    for p, where in found.values():
        by_name.setdefault(p.name, []).append((p, where))
    prims, keys = {}, {}
    for name, ps in by_name.items():
        for p, where in ps:
            k = name if len(ps) == 1 else where
            prims[k] = p
            keys[id(p)] = k
    with _lock:
        _prims.clear()
        _prims.update(prims)
        _prim_keys.clear()
        _prim_keys.update(keys)
        _scanned[0] = len(sys.modules)


def _prim_key(p):
    k = _prim_keys.get(id(p))
    if k is None and _scanned[0] != len(sys.modules):
        _scan_primitives()
        k = _prim_keys.get(id(p))
    if k is None or _prims.get(k) is not p:
        raise _Refuse(f"primitive {p.name} is not a module attribute")
    return k


def _r_prim(k):
    p = _prims.get(k)
    if p is None and _scanned[0] != len(sys.modules):
        _scan_primitives()
        p = _prims.get(k)
    if p is None:
        raise pickle.UnpicklingError(f"unknown primitive {k!r}")
    return p


# ------------------------------------------------------------------ rebuild functions
# (the only names the Unpickler resolves)

_SRC = source_info_util.new_source_info()


def _r_aval(shape, dtype, weak):
    return core.ShapedArray(shape, dtype, weak_type=weak)


def _r_var(aval):
    return core.Var(aval)


def _r_dropvar(aval):
    return core.DropVar(aval)


def _r_lit(val, aval):
    return core.Literal(val, aval)


def _r_ctx(threefry, remove_size_one):
    from jax._src import mesh as mesh_lib
    return core.JaxprEqnContext._create(None, threefry, mesh_lib.empty_abstract_mesh,
                                        remove_size_one, None)


def _r_eqn(invars, outvars, prim, params, ctx):
    return core.JaxprEqn(invars, outvars, prim, params, core.no_effects, _SRC, ctx)


def _r_dbg(traced_for, src, arg_names, result_paths):
    return core.DebugInfo(traced_for, src, arg_names, result_paths)


def _r_jaxpr(constvars, invars, outvars, eqns, dbg):
    return core.Jaxpr(constvars, invars, outvars, eqns, core.no_effects, dbg)


def _r_closed(jaxpr, consts):
    return core.ClosedJaxpr(jaxpr, consts)


def _r_dtype(name):
    d = _dtypes().get(name)
    if d is None:
        raise pickle.UnpicklingError(f"dtype {name!r}")
    return d


def _prng():
    from jax._src.random import prng
    return prng


def _r_keyty(name):
    prng = _prng()
    return prng.KeyTy(prng.prngs[name])


def _r_prng_impl(name):
    return _prng().prngs[name]


def _r_array(dtype, shape, data, typed, weak):
    a = np.frombuffer(bytearray(data), dtype=dtype).reshape(shape)
    if typed:
        from jax._src.literals import TypedNdArray
        return TypedNdArray(a, core.ShapedArray(shape, dtype, weak_type=weak))
    return a


def _r_jarray(dtype, shape, data):
    return jax.device_put(np.frombuffer(bytearray(data), dtype=dtype).reshape(shape))


def _r_scalar(dtype, data):
    return np.frombuffer(data, dtype=dtype)[0]


def _r_typed(kind, value, dtype):
    from jax._src import literals as lt
    cls = {"i": lt.TypedInt, "f": lt.TypedFloat, "c": lt.TypedComplex}[kind]
    return cls(value, dtype)


def _r_complex(re, im):
    return complex(float(re), float(im))


def _r_enum(name, value):
    return _cls_table()[0][name](value)


def _r_named(name, fields):
    cls = _cls_table()[0][name]
    if issubclass(cls, enum.Enum):
        raise pickle.UnpicklingError(name)
    return cls(*fields)


def _r_stub(what):
    return _Stub(str(what))


def _r_sharding(spec):
    from jax._src import mesh as mesh_lib
    from jax.sharding import NamedSharding, PartitionSpec
    return NamedSharding(mesh_lib.empty_abstract_mesh, PartitionSpec(*spec))


def _r_dim(text):
    """A symbolic size (a shape-polymorphic trace's, torchlike._shape_poly) from its text, in
    the scope of the payload being loaded (one scope per payload, as one trace has)."""
    memo = _loading.dims
    d = memo.get(text)
    if d is None:
        from jax import export
        d = memo[text] = export.symbolic_shape(text, scope=_loading.scope)[0]
    return d


def _r_const(name):
    from jax._src import mesh as mesh_lib, named_sharding
    return {"unspecified": named_sharding.UNSPECIFIED,
            "empty_concrete_mesh": mesh_lib.empty_concrete_mesh,
            "empty_abstract_mesh": mesh_lib.empty_abstract_mesh}[name]


_REBUILD = {n: f for n, f in list(globals().items()) if n.startswith("_r_") and callable(f)}
_loading = threading.local()        # .scope, .dims while a payload loads


# ------------------------------------------------------------------ the writer

def _check_dtype(d):
    if _dtypes().get(d.name) != d:
        raise _Refuse(f"dtype {d!r}")
    return d.name


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):     # noqa: C901  (one branch per allowed type)
        t = type(obj)
        if t is core.Var:
            if obj.initial_qdd is not None or obj.final_qdd is not None:
                raise _Refuse("quasi-dynamic data")
            return _r_var, (obj.aval,)
        if t is core.Literal:
            return _r_lit, (obj.val, obj.aval)
        if t is core.ShapedArray:
            plain = core.ShapedArray(obj.shape, obj.dtype, weak_type=obj.weak_type)
            if plain != obj:
                raise _Refuse(f"aval {obj} (sharding, vma or memory space)")
            return _r_aval, (tuple(obj.shape), obj.dtype, bool(obj.weak_type))
        if t is core.JaxprEqn:
            return self._eqn(obj)
        if t is core.DropVar:
            return _r_dropvar, (obj.aval,)
        if t is core.Jaxpr:
            return self._jaxpr(obj)
        if t is core.ClosedJaxpr:
            return _r_closed, (obj.jaxpr, list(obj.consts))
        if isinstance(obj, np.dtype):
            return _r_dtype, (_check_dtype(obj),)
        if isinstance(obj, core.Primitive):
            return _r_prim, (_prim_key(obj),)
        if isinstance(obj, np.ndarray):
            return self._array(obj)
        if isinstance(obj, np.generic):
            return _r_scalar, (_check_dtype(obj.dtype), obj.tobytes())
        if t is complex:
            return _r_complex, (obj.real, obj.imag)
        if t in _typed():
            kind = {int: "i", float: "f", complex: "c"}[t.__mro__[1]]
            return _r_typed, (kind, t.__mro__[1](obj), obj.dtype)
        if t is _Stub:
            return _r_stub, (obj.what,)
        if t is _dim_expr():
            return _r_dim, (_dim_text(obj),)
        if t is core.DebugInfo:
            rp = obj.result_paths
            if callable(rp):
                rp = tuple(rp())
            if not (rp is None or (isinstance(rp, tuple) and all(type(s) is str for s in rp))):
                rp = None
            an = obj.arg_names
            if not (an is None or (isinstance(an, tuple) and
                                   all(s is None or type(s) is str for s in an))):
                an = None
            src = obj.func_src_info if type(obj.func_src_info) is str else "<unknown>"
            return _r_dbg, (str(obj.traced_for), src, an, rp)
        tab = _cls_table()[1]
        name = tab.get(t)
        if name is not None:
            if isinstance(obj, enum.Enum):
                return _r_enum, (name, obj.value)
            return _r_named, (name, tuple(obj))
        return self._other(obj, t)

    def _eqn(self, e):
        if e.effects:
            raise _Refuse(f"effects of {e.primitive.name}")
        ctx = e.ctx
        from jax._src import mesh as mesh_lib
        if ctx.compute_type is not None or ctx.xla_metadata or \
                ctx.cur_abstract_mesh != mesh_lib.empty_abstract_mesh:
            raise _Refuse("equation context")
        params = e.params
        pname = e.primitive.name
        for k in params:
            if (pname, k) in _STUBBED:
                params = {k2: (_Stub(f"{pname}.{k2}") if (pname, k2) in _STUBBED and
                               v2 is not None else v2) for k2, v2 in params.items()}
                break
        return _r_eqn, (e.invars, e.outvars, e.primitive, dict(params),
                        (bool(ctx.threefry_partitionable), bool(ctx.remove_size_one_mesh_axis)))

    def _jaxpr(self, j):
        if j.effects:
            raise _Refuse("jaxpr effects")
        if j.is_high:
            raise _Refuse("high jaxpr")
        return _r_jaxpr, (j.constvars, j.invars, j.outvars, j.eqns, j.debug_info)

    def _array(self, a):
        from jax._src.literals import TypedNdArray
        t = type(a)
        if t is not np.ndarray and t is not TypedNdArray:
            raise _Refuse(f"array type {t.__name__}")
        typed = t is TypedNdArray
        weak = bool(a.aval.weak_type) if typed else False
        return _r_array, (_check_dtype(a.dtype), a.shape,
                          np.ascontiguousarray(a).view(np.ndarray).tobytes(), typed, weak)

    def _other(self, obj, t):
        from jax._src import mesh as mesh_lib, named_sharding
        from jax.sharding import NamedSharding, PartitionSpec
        if obj is named_sharding.UNSPECIFIED:
            return _r_const, ("unspecified",)
        if obj is mesh_lib.empty_concrete_mesh:
            return _r_const, ("empty_concrete_mesh",)
        if obj is mesh_lib.empty_abstract_mesh:
            return _r_const, ("empty_abstract_mesh",)
        if t is NamedSharding and obj.mesh == mesh_lib.empty_abstract_mesh and \
                type(obj.spec) is PartitionSpec:
            spec = tuple(obj.spec)
            if all(s is None or type(s) is str for s in spec) and _r_sharding(spec) == obj:
                return _r_sharding, (spec,)
        if t is _tiers._ArrayImpl:
            if obj.weak_type or not isinstance(obj.dtype, np.dtype):
                raise _Refuse("weakly typed or key array constant")
            h = np.asarray(obj)
            return _r_jarray, (_check_dtype(h.dtype), h.shape, h.tobytes())
        if _REBUILD.get(getattr(obj, "__name__", None)) is obj:
            return NotImplemented       # a rebuild function itself: pickled by name
        prng = _prng()
        if t is prng.KeyTy:
            impl = obj._impl
            if prng.prngs.get(impl.name) is not impl:
                raise _Refuse("unregistered PRNG implementation")
            return _r_keyty, (impl.name,)
        if t is prng.PRNGImpl:
            if prng.prngs.get(obj.name) is not obj:
                raise _Refuse("unregistered PRNG implementation")
            return _r_prng_impl, (obj.name,)
        raise _Refuse(f"{t.__module__}.{t.__qualname__}")


_TYPED = []
_DIM = []


def _dim_expr():
    if not _DIM:
        from jax._src.export import shape_poly
        _DIM.append(shape_poly._DimExpr)
    return _DIM[0]


def _dim_text(d):
    """``d``'s text, which the loader parses back to the same expression (else refused)."""
    from jax import export
    text = str(d)
    if str(export.symbolic_shape(text, scope=export.SymbolicScope())[0]) != text:
        raise _Refuse(f"symbolic size {text}")
    return text


def _typed():
    if not _TYPED:
        from jax._src import literals
        _TYPED.append(frozenset(literals.typed_scalar_types))
    return _TYPED[0]




class _Unpickler(pickle.Unpickler):
    """Resolves only this module's rebuild functions: nothing else can be constructed."""

    def find_class(self, module, name):
        if module == __name__ and name in _REBUILD:
            return _REBUILD[name]
        raise pickle.UnpicklingError(f"refused: {module}.{name}")

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("refused: persistent id")


# ------------------------------------------------------------------ output trees

_NODES: dict = {}            # a registered pytree class -> its tag
_BUILDERS: dict = {}         # tag -> build(aux, children) (the class or a function)


def register_node(tag, cls, build=None):
    """Let output trees hold ``cls`` nodes whose aux data is plain (strings, numbers, bools,
    None and tuples of them): stored by ``tag``, rebuilt by ``build(aux, children)`` (default
    ``cls(aux, children)``). The unpickler still constructs nothing but plain data."""
    _NODES[cls] = tag
    _BUILDERS[tag] = build or cls


def _plain(o):
    t = type(o)
    if t in (str, int, bool, float, type(None)):
        return True
    return t is tuple and all(_plain(x) for x in o)


def _tree_desc(tree):
    """A PyTreeDef of tuples, lists, dicts, None, registered nodes and leaves as plain nested
    tuples."""
    if jax.tree_util.treedef_is_leaf(tree) and tree.num_leaves == 1:
        return "*"
    nd = tree.node_data()
    if nd is None:
        raise _Refuse("tree node")
    kind, aux = nd
    kids = tuple(_tree_desc(c) for c in tree.children())
    if kind is type(None):
        return None
    if kind is tuple:
        return ("t", kids)
    if kind is list:
        return ("l", kids)
    if kind is dict and all(type(k) in (str, int) for k in aux):
        return ("d", tuple(aux), kids)
    tag = _NODES.get(kind)
    if tag is not None and _plain(aux):
        return ("n", tag, aux, kids)
    raise _Refuse(f"tree node {kind}")


def _tree_skeleton(desc):
    if desc == "*":
        return 0
    if desc is None:
        return None
    if not isinstance(desc, tuple):
        raise ValueError("tree")
    if desc[0] == "t":
        return tuple(_tree_skeleton(d) for d in desc[1])
    if desc[0] == "l":
        return [_tree_skeleton(d) for d in desc[1]]
    if desc[0] == "d":
        if len(desc[1]) != len(desc[2]):
            raise ValueError("tree")
        return {k: _tree_skeleton(d) for k, d in zip(desc[1], desc[2])}
    if desc[0] == "n" and len(desc) == 4 and _plain(desc[2]):
        return _BUILDERS[desc[1]](desc[2], [_tree_skeleton(d) for d in desc[3]])
    raise ValueError("tree")


def _tree(desc):
    return jax.tree_util.tree_structure(_tree_skeleton(desc))


# ------------------------------------------------------------------ dumps / loads

def dumps(closed_jaxpr, out_tree, guards=()):
    """``(closed_jaxpr, out_tree)`` as bytes, or None where something in it cannot be written
    faithfully (effects, an unknown primitive, parameter class or tree node, a sharding).
    guards: a shape-polymorphic trace's guards (``torchlike._shape_poly``), kept with it."""
    try:
        desc = _tree_desc(out_tree)
        if _tree(desc) != out_tree or out_tree.num_leaves != len(closed_jaxpr.jaxpr.outvars):
            return None
        buf = io.BytesIO()
        _Pickler(buf, protocol=_PROTOCOL).dump((_FORMAT, closed_jaxpr, desc, tuple(guards)))
        return buf.getvalue()
    except Exception:       # _Refuse, or anything unexpected: the caller traces
        return None


def loads(data):
    """The ``(closed_jaxpr, out_tree)`` of ``dumps``'s bytes, or None (damaged, foreign or
    refused: an object outside the allow-list, an unknown primitive)."""
    got = _loads(data)
    return None if got is None else got[:2]


def _loads(data):
    from jax import export
    _loading.scope, _loading.dims = export.SymbolicScope(), {}
    try:
        fmt, closed, desc, guards = _Unpickler(io.BytesIO(data)).load()
        if fmt != _FORMAT or type(closed) is not core.ClosedJaxpr or type(guards) is not tuple:
            return None
        tree = _tree(desc)
        if tree.num_leaves != len(closed.jaxpr.outvars):
            return None
        return closed, tree, guards
    except Exception:
        return None
    finally:
        _loading.scope = _loading.dims = None


# ------------------------------------------------------------------ keys

_versions_cache = []


def _source_hash():
    """Names, sizes and mtimes of torchlike's package files (any edit changes every key)."""
    root = os.path.dirname(os.path.abspath(__file__))
    h = hashlib.sha256()
    rows = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in files:
            if f.endswith((".py", ".pyi", ".json")):
                p = os.path.join(d, f)
                try:
                    st = os.stat(p)
                except OSError:
                    continue
                rows.append((os.path.relpath(p, root), st.st_size, st.st_mtime_ns))
    for r in sorted(rows):
        h.update(repr(r).encode())
    return h.hexdigest()


def _versions():
    if not _versions_cache:
        import jaxlib
        import ml_dtypes
        version = sys.modules.get("torchlike.version")     # (imported by the package)
        v = {"format": _FORMAT, "jax": jax.__version__, "jaxlib": jaxlib.__version__,
             "numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__,
             "python": list(sys.version_info[:3]),
             "torchlike": str(getattr(version, "__version__", "")),
             "source": _source_hash(), "x64": bool(jax.config.jax_enable_x64)}
        _versions_cache.append(json.dumps(v, sort_keys=True).encode())
    return _versions_cache[0]


_keys: dict = {}
_KEYS_MAX = 1 << 14


def key(ident, sig):
    """The entry name for ``ident`` at ``sig``, or None where the signature's text is not
    stable across processes (an address in a tree's description)."""
    try:
        k = _keys.get((ident, sig))
    except TypeError:
        return None
    if k is None:
        text = _text((str(ident), sig))
        if " at 0x" in text:
            k = ""
        else:
            h = hashlib.sha256(_versions())
            h.update(b"\0" + repr(bool(jax.config.jax_enable_x64)).encode() + b"\0")
            h.update(text.encode())
            k = h.hexdigest()
        if len(_keys) >= _KEYS_MAX:
            _keys.clear()
        _keys[(ident, sig)] = k
    return k or None


_DTYPE_TEXT: dict = {}


def _text(o):
    """``repr(o)`` for the tuples of a signature, with each numpy dtype's text made once (a
    dtype's ``repr`` costs about 30 us in numpy 2)."""
    t = o.__class__
    if t is tuple:
        if len(o) == 1:
            return "(" + _text(o[0]) + ",)"
        return "(" + ", ".join([_text(x) for x in o]) + ")"
    if t.__module__ == "numpy.dtypes":
        got = _DTYPE_TEXT.get(o)
        if got is None:
            got = _DTYPE_TEXT[o] = repr(o)
        return got
    return repr(o)


# ------------------------------------------------------------------ the directory

_dir = []
_listing = [None]           # the entry names in the directory at this process's first lookup


def _listed(d):
    """The names in ``d`` when this process first looked (one listing: a key not in it is a
    miss without a file system call; an entry another process writes later is not seen)."""
    names = _listing[0]
    if names is None:
        try:
            names = set(os.listdir(d))
        except OSError:
            names = set()
        _listing[0] = names
    return names


def directory():
    """Where traces are kept, or None when the cache is off."""
    if not _dir:
        from ._jax_config import cache_subdir
        _dir.append(cache_subdir("traces", "TORCHLIKE_PROGRAM_CACHE", "TORCHLIKE_TRACE_CACHE"))
    return _dir[0]


def _reset():
    """Forget the decided directory and per-process memories (tests)."""
    flush()
    _dir.clear()
    _listing[0] = None
    _keys.clear()
    _total[0] = None
    _versions_cache.clear()


def stats():
    """``{"loaded", "saved", "ignored", "unserializable"}``: entries loaded and written,
    entries ignored and removed (foreign, stale, damaged, refused), and jaxprs ``put`` could
    not write (``dumps`` returned None)."""
    with _lock:
        return dict(_stats)


def _count(what):
    with _lock:
        _stats[what] += 1


def _head(k):
    return _MAGIC + _versions() + b"\n" + k.encode() + b"\n"


def _ignore(path):
    _count("ignored")
    try:
        os.remove(path)
    except OSError:
        pass


def _matches(closed, sig):
    """Do the loaded jaxpr's inputs fit the signature's leaves (where ``sig`` has the
    ``(leaves, tree)`` form)?"""
    if not (isinstance(sig, tuple) and len(sig) == 2 and isinstance(sig[0], tuple) and
            (sig[1] is None or isinstance(sig[1], jax.tree_util.PyTreeDef))):
        return True
    leaves = sig[0]
    if len(leaves) != len(closed.jaxpr.invars):
        return False
    for s, a in zip(leaves, closed.in_avals):
        if isinstance(s, type):
            if a.shape != ():
                return False
        else:
            shape, dtype = s
            if tuple(a.shape) != tuple(shape):
                return False
            if isinstance(dtype, np.dtype) and a.dtype != jax.dtypes.canonicalize_dtype(dtype):
                return False
    return True


def get(ident, sig):
    """The ``(closed_jaxpr, out_tree)`` stored for ``ident`` at ``sig``, or None (absent,
    off, foreign, damaged or refused: those are removed and counted). Never raises."""
    got = _get(ident, sig)
    return None if got is None else got[:2]


def get_symbolic(ident, pattern):
    """The ``(closed_jaxpr, out_tree, guards)`` of a shape-polymorphic trace stored for
    ``ident`` at ``pattern`` (torchlike._shape_poly), or None."""
    return _get(("symbolic", ident), pattern)


def _get(ident, sig):
    try:
        d = directory()
        if d is None:
            return None
        listed = _listed(d)
        if not listed:              # (an empty directory: no key to compute)
            return None
        k = key(ident, sig)
        if k is None or k not in listed:
            return None
        path = os.path.join(d, k)
        try:
            with open(path, "rb") as f:
                blob = f.read()
        except OSError:
            _listed(d).discard(k)
            return None
        head = _head(k)
        if not blob.startswith(head) or blob[len(head) + 64:len(head) + 65] != b"\n":
            _ignore(path)
            return None
        digest, payload = blob[len(head):len(head) + 64], blob[len(head) + 65:]
        if hashlib.sha256(payload).hexdigest().encode() != digest:
            _ignore(path)
            return None
        out = _loads(payload)
        if out is None or not _matches(out[0], sig):
            _ignore(path)
            return None
        _count("loaded")
        try:
            os.utime(path)          # recently used: kept longest when the bound is reached
        except OSError:
            pass
        return out
    except Exception:
        return None


# ------------------------------------------------------------------ writes (one daemon thread)

_q: queue.Queue = queue.Queue()
_worker = []
_pending: set = set()
_total = [None]             # bytes in the directory (scanned at the first write)


def put_symbolic(ident, pattern, closed_jaxpr, out_tree, guards):
    """Store a shape-polymorphic trace and its guards for ``ident`` at ``pattern``."""
    put(("symbolic", ident), pattern, closed_jaxpr, out_tree, guards)


def put(ident, sig, closed_jaxpr, out_tree, guards=()):
    """Store ``closed_jaxpr`` and its ``out_tree`` for ``ident`` at ``sig`` (written in the
    background: ``flush()`` waits). Never raises."""
    try:
        d = directory()
        if d is None:
            return
        k = key(ident, sig)
        if k is None:
            return
        with _lock:
            if k in _pending:
                return
            _pending.add(k)
            if not _worker:
                t = threading.Thread(target=_work, name="torchlike-trace-store", daemon=True)
                t.start()
                _worker.append(t)
                import atexit
                atexit.register(_stop)
        _q.put((d, k, closed_jaxpr, out_tree, guards))
    except Exception:
        pass


def flush():
    """Wait until every ``put`` so far is on disk."""
    if _worker:
        _q.join()


def _stop():
    """At exit: let the writer finish what is queued (a daemon thread killed inside a write
    aborts the interpreter's shutdown), for at most a few seconds."""
    _q.put(None)
    _worker[0].join(timeout=5.0)


def _work():
    while True:
        item = _q.get()
        if item is None:
            _q.task_done()
            return
        d, k, closed, tree, guards = item
        try:
            _write(d, k, closed, tree, guards)
        except Exception:
            pass
        finally:
            with _lock:
                _pending.discard(k)
            _q.task_done()


def _write(d, k, closed, tree, guards):
    payload = dumps(closed, tree, guards)
    if payload is None:
        _count("unserializable")
        return
    blob = _head(k) + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, os.path.join(d, k))
    except OSError:
        try:
            os.remove(tmp)
        except OSError:
            pass
        return
    if _listing[0] is not None:
        _listing[0].add(k)
    _count("saved")
    if _total[0] is None:
        _total[0] = _scan_size(d)[0]
    else:
        _total[0] += len(blob)
    if _total[0] > MAX_BYTES:
        _bound(d)


def _scan_size(d):
    entries, total = [], 0
    try:
        for e in os.scandir(d):
            if e.is_file() and not e.name.startswith(".tmp-"):
                st = e.stat()
                entries.append((st.st_mtime, st.st_size, e.path))
                total += st.st_size
    except OSError:
        pass
    return total, entries


def _bound(d):
    """Remove the oldest entries until the directory is under 3/4 of ``MAX_BYTES``."""
    total, entries = _scan_size(d)
    if total > MAX_BYTES:
        entries.sort()
        for _mtime, size, path in entries:
            if total <= MAX_BYTES * 3 // 4:
                break
            try:
                os.remove(path)
                total -= size
            except OSError:
                pass
    _total[0] = total
