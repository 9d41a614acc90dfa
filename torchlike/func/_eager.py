"""torch.func's differentiation transforms (grad, vjp, jvp, linearize, jacrev, jacfwd,
hessian), each one jax transform of the torch-style function (see ``_core``)."""
from __future__ import annotations

import functools

import jax
import jax.numpy as jnp

from .._tensor import Tensor
from . import _core as C
from . import _pytree as P
from ._tape import maybe_on_tape, tape_needed

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian",
           "functionalize"]


# ------------------------------------------------------------------ argnums (torch's checks)

def _wrap_argnum(argnum, n):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < n:
        return argnum
    if -n <= argnum < 0:
        return argnum + n
    raise RuntimeError(f"Got argnum={argnum}, but only {n} positional inputs")


def _argnums(argnums, n):
    if isinstance(argnums, int):
        return _wrap_argnum(argnums, n)
    if isinstance(argnums, tuple):
        out = tuple(_wrap_argnum(a, n) for a in argnums)
        if len(out) == 0:
            raise RuntimeError("argnums must be non-empty")
        if len(set(out)) != len(out):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        return out
    raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")


def _slice(args, argnums):
    return args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)


def _replace(args, new, argnums):
    if isinstance(argnums, int):
        return tuple(new if i == argnums else a for i, a in enumerate(args))
    return tuple(new[argnums.index(i)] if i in argnums else a for i, a in enumerate(args))


def _flat_tensors(tree, api=None):
    leaves, spec = P.tree_flatten(tree)
    for v in leaves:
        if not isinstance(v, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(v)}")
    return leaves, spec


def _check_inexact(leaves, api):
    for v in leaves:
        if not (v.dtype.is_floating_point or v.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")


def _conj_if_complex(a):
    return jnp.conj(a) if jnp.iscomplexobj(a) else a


def _split_aux(out, has_aux, api):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if "
                           f"has_aux is True")
    return out


class _Aux:
    """Aux outputs: Tensor leaves travel as jax values, other leaves on the side."""

    def __init__(self):
        self.rebuild = None

    def take(self, aux):
        arrays, self.rebuild, _ = C.split_output(aux, "aux")
        return arrays

    def give(self, arrays):
        return self.rebuild(arrays)


# ------------------------------------------------------------------ grad

def grad_and_value(func, argnums=0, has_aux=False):
    """torch.func.grad_and_value: (gradient, value) of a scalar function, by ``jax.vjp``."""

    def impl(*args, **kwargs):
        api = "grad_and_value(f)(*args)"
        an = _argnums(argnums, len(args))
        leaves, spec = _flat_tensors(_slice(args, an))
        _check_inexact(leaves, api)
        aux_box = _Aux()
        snap = C.snapshot(C.outside_tensors(func, args, kwargs))

        def f(*arrs):
            diff = P.tree_unflatten([C.wrap_tracked(a) for a in arrs], spec)
            with C.traced("grad", differentiating=True):
                out = func(*_replace(args, diff, an), **kwargs)
            out, aux = _split_aux(out, has_aux, api)
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got "
                                   f"{type(out)}")
            if out.dim() != 0:
                raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {out.dim()} dims. Maybe you wanted to use the "
                                   f"vjp or jacrev APIs instead?")
            if out.dtype.is_complex:
                raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                   f"outputs but got {out.dtype}")
            return out._data, aux_box.take(aux)

        try:
            value, vjp_fn, aux = jax.vjp(f, *[t._data for t in leaves], has_aux=True)
        finally:
            C.check_no_leak(snap, "grad")
        grads = vjp_fn(jnp.ones_like(value))
        g = P.tree_unflatten([C.wrap(_conj_if_complex(x)) for x in grads], spec)
        v = C.wrap(value)
        if has_aux:
            return g, (v, aux_box.give(aux))
        return g, v

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return maybe_on_tape("grad", lambda a, k: impl(*a, **k), args, kwargs, func)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """torch.func.grad: the gradient of a scalar function w.r.t. the ``argnums`` inputs."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, rest = gv(*args, **kwargs)
        if has_aux:
            return g, rest[1]
        return g

    return wrapper


# ------------------------------------------------------------------ vjp

def _out_tensors(out, api):
    leaves, spec = P.tree_flatten(out)
    if not leaves or (len(leaves) == 1 and leaves[0] is None):
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output "
                           f"(got output = {out})")
    for v in leaves:
        if not isinstance(v, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(v)}")
    return leaves, spec


def vjp(func, *primals, has_aux=False):
    """torch.func.vjp: (output, vjp_fn[, aux]); ``vjp_fn(cotangents)`` gives one gradient per
    primal (a tuple). Where a primal (or a tensor ``func`` reaches) requires grad, the output and
    ``vjp_fn``'s gradients carry autograd history, as torch's (each one tape node, which
    recomputes ``func``)."""
    plain = {}
    if tape_needed(primals, {}, func):
        def outputs(a, k):
            r = _vjp(func, *a, has_aux=has_aux)
            return (r[0], r[2]) if has_aux else r[0]
        got = maybe_on_tape("vjp", outputs, primals, {}, func)
    else:
        r = _vjp(func, *primals, has_aux=has_aux)
        plain["fn"] = r[1]
        got = (r[0], r[2]) if has_aux else r[0]

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        # (decided at the call, as torch's: grad mode then, the cotangents' requires_grad)
        if tape_needed((primals, cotangents), {}, func):
            return maybe_on_tape(
                "vjp", lambda a, k: _vjp(func, *a[0], has_aux=has_aux)[1](
                    a[1], retain_graph=retain_graph, create_graph=create_graph),
                (primals, cotangents), {}, func)
        if "fn" not in plain:
            plain["fn"] = _vjp(func, *primals, has_aux=has_aux)[1]
        return plain["fn"](cotangents, retain_graph=retain_graph, create_graph=create_graph)
    if has_aux:
        return got[0], vjp_fn, got[1]
    return got, vjp_fn


def _vjp(func, *primals, has_aux=False):
    api = "vjp(f, *primals)"
    leaves, spec = _flat_tensors(primals)
    _check_inexact(leaves, api)
    aux_box = _Aux()
    info = {}
    snap = C.snapshot(C.outside_tensors(func, primals, {}))

    def f(*arrs):
        args = P.tree_unflatten([C.wrap_tracked(a) for a in arrs], spec)
        with C.traced("vjp", differentiating=True):
            out = func(*args)
        out, aux = _split_aux(out, has_aux, api)
        oleaves, ospec = _out_tensors(out, api)
        for o in oleaves:
            if not (o.dtype.is_floating_point or o.dtype.is_complex):
                raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or "
                                   f"complex Tensors, got Tensor with dtype {o.dtype}")
        info["ospec"] = ospec
        return [o._data for o in oleaves], aux_box.take(aux)

    try:
        outs, jvjp, aux = jax.vjp(f, *[t._data for t in leaves], has_aux=True)
    finally:
        C.check_no_leak(snap, "vjp")
    ospec = info["ospec"]

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        if create_graph:
            raise NotImplementedError("torch.func.vjp: vjp_fn(create_graph=True) is not "
                                      "supported: the result carries no autograd history; "
                                      "nest the transforms instead (e.g. grad of vjp)")
        cleaves, cspec = P.tree_flatten(cotangents)
        if cspec != ospec:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{P.treespec_pprint(cspec)}, primal output: "
                               f"{P.treespec_pprint(ospec)}")
        cts = []
        for c, o in zip(cleaves, outs):
            if not isinstance(c, Tensor):
                raise RuntimeError(f"Expected tensors, got unsupported type {type(c)}")
            if tuple(c._d.shape) != tuple(o.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of "
                                   f"{c.shape} and output[0] has a shape of "
                                   f"torch.Size({list(o.shape)}).")
            cts.append(_conj_if_complex(c._data.astype(o.dtype)))
        grads = jvjp(cts)
        res = P.tree_unflatten([C.wrap(_conj_if_complex(g)) for g in grads], spec)
        return res

    out_tree = P.tree_unflatten([C.wrap(o) for o in outs], ospec)
    if has_aux:
        return out_tree, vjp_fn, aux_box.give(aux)
    return out_tree, vjp_fn


# ------------------------------------------------------------------ jvp / linearize

def _is_custom_vjp_error(e):
    return "custom_vjp" in str(e) and "forward-mode" in str(e)


def _jvp_by_double_vjp(f, primals, tangents):
    """J t without forward mode: the transpose of the linear map u -> vjp(u), applied to t.
    Used where an op carries a ``jax.custom_vjp`` (torch's gradient conventions), which jax
    cannot differentiate in forward mode."""
    outs, vjp_fn, aux = jax.vjp(f, *primals, has_aux=True)
    zeros = [jnp.zeros_like(o) for o in outs]
    _, transpose = jax.vjp(lambda u: tuple(vjp_fn(u)), zeros)
    (touts,) = transpose(tuple(tangents))
    return outs, list(touts), aux


def _jvp(f, primals, tangents):
    """``jax.jvp(f, primals, tangents, has_aux=True)``, falling back to the double-vjp form for
    functions with custom_vjp ops."""
    try:
        return jax.jvp(f, list(primals), list(tangents), has_aux=True)
    except TypeError as e:
        if not _is_custom_vjp_error(e):
            raise
    return _jvp_by_double_vjp(f, primals, tangents)


def _check_tangents(primals, tangents, api):
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{api}: Expected primals to be a tuple. E.g. it should be valid to "
                           f"call f(*primals).")
    pl, ps = P.tree_flatten(primals)
    tl, ts = P.tree_flatten(tangents)
    if ps != ts:
        raise RuntimeError(f"{api}: Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, "
                           f"tangents also must be. Got primals with structure {ps} and "
                           f"tangents with structure {ts}")
    for name, ls in (("primals", pl), ("tangents", tl)):
        if not ls:
            raise RuntimeError(f"{api}: Expected {name} to contain at least one Tensor.")
        for v in ls:
            if not isinstance(v, Tensor):
                raise RuntimeError(f"{api}: Expected {name} to only contain Tensors, got "
                                   f"{type(v)}")
    for p, t in zip(pl, tl):
        _check_dual(p, t)
    return pl, ps, tl


def _check_dual(primal, tangent=None):
    """torch's checks of a (primal, tangent) pair made dual (``forward_ad.make_dual``)."""
    if not (primal.dtype.is_floating_point or primal.dtype.is_complex):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{primal.dtype}")
    if tangent is None:
        return
    if not (tangent.dtype.is_floating_point or tangent.dtype.is_complex):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tuple(primal.shape) != tuple(tangent.shape):
        raise RuntimeError(f"Trying to set a forward gradient that has a different size than "
                           f"that of the original Tensor, this is not supported. Tensor is of "
                           f"size {list(primal.shape)} while the given forward gradient is of "
                           f"size {list(tangent.shape)}.")


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """torch.func.jvp: (output, jvp_out[, aux]) by ``jax.jvp``; one tape node where a primal,
    a tangent or a tensor ``func`` reaches requires grad (torch's results carry history)."""
    return maybe_on_tape("jvp", lambda a, k: _jvp_impl(func, *a, strict=strict, has_aux=has_aux),
                         (primals, tangents), {}, func)


def _jvp_impl(func, primals, tangents, *, strict=False, has_aux=False):
    api = "jvp(f, primals, tangents)"
    if strict:
        raise NotImplementedError("torch.func.jvp(strict=True) is not supported by torchlike "
                                  "(jax gives no way to tell an output independent of inputs)")
    pl, ps, tl = _check_tangents(primals, tangents, api)
    aux_box = _Aux()
    info = {}
    snap = C.snapshot(C.outside_tensors(func, primals, {}))

    def f(*arrs):
        args = P.tree_unflatten([C.wrap_tracked(a) for a in arrs], ps)
        with C.traced("jvp", differentiating=True):
            out = func(*args)
        out, aux = _split_aux(out, has_aux, api)
        oleaves, ospec = _out_tensors(out, api)
        info["ospec"] = ospec
        return [o._data for o in oleaves], aux_box.take(aux)

    parr = [t._data for t in pl]
    tarr = [t._data.astype(p.dtype) for t, p in zip(tl, parr)]
    try:
        outs, touts, aux = _jvp(f, parr, tarr)
    finally:
        C.check_no_leak(snap, "jvp")
    ospec = info["ospec"]
    o = P.tree_unflatten([C.wrap(x) for x in outs], ospec)
    t = P.tree_unflatten([C.wrap(x) for x in touts], ospec)
    if has_aux:
        return o, t, aux_box.give(aux)
    return o, t


def linearize(func, *primals):
    """torch.func.linearize: (output, jvp_fn) with ``jvp_fn(*tangents)`` (by ``jax.linearize``)."""
    api = "linearize"
    leaves, spec = _flat_tensors(primals)
    info = {}

    def f(*arrs):
        args = P.tree_unflatten([C.wrap_tracked(a) for a in arrs], spec)
        with C.traced("linearize", differentiating=True):
            out = func(*args)
        oleaves, ospec = _out_tensors(out, api)
        info["ospec"] = ospec
        return [o._data for o in oleaves]

    parr = [t._data for t in leaves]

    def by_double_vjp():
        outs, vjp_fn = jax.vjp(f, *parr)
        zeros = [jnp.zeros_like(o) for o in outs]
        _, transpose = jax.vjp(lambda u: tuple(vjp_fn(u)), zeros)
        return outs, lambda *ts: transpose(tuple(ts))[0]

    try:
        outs, lin0 = jax.linearize(f, *parr)
    except TypeError as e:
        if not _is_custom_vjp_error(e):
            raise
        outs, lin0 = by_double_vjp()
    state = {"lin": lin0}

    def lin(*ts):
        # jax may only find a custom_vjp op when the linear function is first applied
        try:
            return state["lin"](*ts)
        except TypeError as e:
            if not _is_custom_vjp_error(e):
                raise
            state["lin"] = by_double_vjp()[1]
            return state["lin"](*ts)
    ospec = info["ospec"]

    def jvp_fn(*tangents):
        tl, ts = P.tree_flatten(tangents)
        if ts != spec:
            raise RuntimeError(f"Expected the tangents {ts} to have the same argspec as the "
                               f"primals {spec}")
        for i, (t, p) in enumerate(zip(tl, parr)):
            if not isinstance(t, Tensor):
                raise RuntimeError(f"Expected tensors, got unsupported type {type(t)}")
            if tuple(t._d.shape) != tuple(p.shape):
                raise RuntimeError(f"tangent:{i} with shape {t.shape} in flattened pytree "
                                   f"doesn't match the shape torch.Size({list(p.shape)}) of "
                                   f"the corresponding primal.")
        return P.tree_unflatten([C.wrap(x) for x in lin(*[t._data.astype(p.dtype)
                                                          for t, p in zip(tl, parr)])], ospec)

    return P.tree_unflatten([C.wrap(x) for x in outs], ospec), jvp_fn


# ------------------------------------------------------------------ jacobians

def _error_if_complex(api, leaves, is_input):
    for i, v in enumerate(leaves):
        if v.dtype.is_complex:
            kind = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{api}: Expected all {kind} to be real but received complex "
                               f"tensor at flattened input idx: {i}")


def _map_rows(fn, rows, chunk_size):
    """``jax.vmap(fn)`` over the leading axis of every array in ``rows``, in chunks."""
    n = rows[0].shape[0]
    if chunk_size is None or chunk_size >= n:
        return jax.vmap(fn)(*rows)
    parts = [jax.vmap(fn)(*[r[s:s + chunk_size] for r in rows]) for s in range(0, n, chunk_size)]
    return [jnp.concatenate([p[k] for p in parts], 0) for k in range(len(parts[0]))]


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """torch.func.jacrev: the Jacobian by reverse mode (one ``jax.vjp``, vmapped over the
    standard basis of the outputs; ``chunk_size`` rows at a time)."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    def impl(*args, **kwargs):
        api = "jacrev"
        an = _argnums(argnums, len(args))
        leaves, spec = _flat_tensors(_slice(args, an))
        _error_if_complex(api, leaves, True)
        _check_inexact(leaves, api)
        aux_box = _Aux()
        info = {}
        snap = C.snapshot(C.outside_tensors(func, args, kwargs))

        def f(*arrs):
            diff = P.tree_unflatten([C.wrap_tracked(a) for a in arrs], spec)
            with C.traced("jacrev", differentiating=True):
                out = func(*_replace(args, diff, an), **kwargs)
            # (torch's jacrev is a vjp: its messages name vjp)
            out, aux = _split_aux(out, has_aux, "vjp(f, *primals)")
            oleaves, ospec = _out_tensors(out, "vjp(f, *primals)")
            _error_if_complex(api, oleaves, False)
            info["ospec"] = ospec
            return [o._data for o in oleaves], aux_box.take(aux)

        try:
            outs, jvjp, aux = jax.vjp(f, *[t._data for t in leaves], has_aux=True)
        finally:
            C.check_no_leak(snap, "jacrev")
        sizes = [int(o.size) for o in outs]
        total = sum(sizes)
        eye_dtype = jnp.result_type(*[o.dtype for o in outs])
        basis = jnp.eye(total, dtype=eye_dtype)
        rows, off = [], 0
        for o, n in zip(outs, sizes):
            rows.append(basis[:, off:off + n].reshape((total,) + o.shape).astype(o.dtype))
            off += n

        def one(*cts):
            return list(jvjp(list(cts)))

        grads = _map_rows(one, rows, chunk_size)        # per input: (total, *in_shape)
        jac_leaves = []
        off = 0
        for o, n in zip(outs, sizes):
            per_in = [g[off:off + n].reshape(o.shape + g.shape[1:]) for g in grads]
            jac_leaves.append(P.tree_unflatten([C.wrap(x) for x in per_in], spec))
            off += n
        jac = P.tree_unflatten(jac_leaves, info["ospec"])
        if has_aux:
            return jac, aux_box.give(aux)
        return jac

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return maybe_on_tape("jacrev", lambda a, k: impl(*a, **k), args, kwargs, func)

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """torch.func.jacfwd: the Jacobian by forward mode (``jax.jvp`` vmapped over the standard
    basis of the inputs)."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

    def impl(*args, **kwargs):
        api = "jacfwd"
        an = _argnums(argnums, len(args))
        leaves, spec = _flat_tensors(_slice(args, an))
        _error_if_complex(api, leaves, True)
        for leaf in leaves:
            _check_dual(leaf)
        parr = [t._data for t in leaves]
        sizes = [int(p.size) for p in parr]
        total = sum(sizes)
        basis = jnp.eye(total, dtype=jnp.result_type(*[p.dtype for p in parr]))
        tangents, off = [], 0
        for p, n in zip(parr, sizes):
            tangents.append(basis[:, off:off + n].reshape((total,) + p.shape).astype(p.dtype))
            off += n
        aux_box = _Aux()
        info = {}
        snap = C.snapshot(C.outside_tensors(func, args, kwargs))

        def f(*arrs):
            diff = P.tree_unflatten([C.wrap_tracked(a) for a in arrs], spec)
            with C.traced("jacfwd", differentiating=True):
                out = func(*_replace(args, diff, an), **kwargs)
            out, aux = _split_aux(out, has_aux, "jvp(f, primals, tangents)")
            oleaves, ospec = _out_tensors(out, "jvp(f, primals, tangents)")
            _error_if_complex(api, oleaves, False)
            info["ospec"] = ospec
            return [o._data for o in oleaves], aux_box.take(aux)

        def one(idx, *ts):
            with C.randomness_level(randomness, idx):
                outs, touts, aux = _jvp(f, parr, list(ts))
            return outs, touts, aux

        idx = jnp.arange(total, dtype=jnp.uint32)
        try:
            outs, touts, aux = jax.vmap(one, out_axes=(None, 0, None))(idx, *tangents)
        except ValueError as e:
            if "out_axes" not in str(e):
                raise
            raise RuntimeError("jacfwd: the outputs (or aux) depend on random values drawn "
                               "per basis vector (randomness='different'); use "
                               "randomness='same'") from None
        finally:
            C.check_no_leak(snap, "jacfwd")
        jac_leaves = []
        for o, t in zip(outs, touts):                  # t: (total, *out_shape)
            per_in, off = [], 0
            for p, n in zip(parr, sizes):
                blk = t[off:off + n].reshape(p.shape + o.shape)
                nd_in = p.ndim
                perm = tuple(range(nd_in, nd_in + o.ndim)) + tuple(range(nd_in))
                per_in.append(C.wrap(jnp.transpose(blk, perm)))
                off += n
            jac_leaves.append(P.tree_unflatten(per_in, spec))
        jac = P.tree_unflatten(jac_leaves, info["ospec"])
        if has_aux:
            return jac, aux_box.give(aux)
        return jac

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return maybe_on_tape("jacfwd", lambda a, k: impl(*a, **k), args, kwargs, func)

    return wrapper


def hessian(func, argnums=0):
    """torch.func.hessian: ``jacfwd(jacrev(func, argnums), argnums)``."""
    return jacfwd(jacrev(func, argnums), argnums)


def functionalize(func, *, remove="mutations"):
    """torch.func.functionalize: torchlike programs are already functional underneath (jax
    arrays are immutable; in-place ops produce new arrays), so this returns ``func`` wrapped."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for "
                           f"remove={remove}.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper
