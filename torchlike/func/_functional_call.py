"""torch.func.functional_call, stack_module_state, replace_all_batch_norm_modules_."""
from __future__ import annotations

import contextlib

from .._tensor import Tensor
from . import _core as C

__all__ = ["functional_call", "stack_module_state", "replace_all_batch_norm_modules_"]

_MISSING = object()


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call ``module`` with its parameters and buffers replaced by the given tensors.

    The module's own tensors are swapped back in a ``finally``; several dicts may be given (a
    key in two of them is an error); ``tie_weights`` makes one value serve every tied name;
    ``strict`` requires exactly the module's names.
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        named = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        counts = {}
        for d in parameter_and_buffer_dicts:
            for k in d:
                counts[k] = counts.get(k, 0) + 1
        repeated = [k for k, n in counts.items() if n > 1]
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             f"functional call is ambiguous")
        named = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                         f"dicts, but got {type(parameter_and_buffer_dicts)}")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with reparametrize(module, named, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)


def _all_named(module):
    d = {}
    d.update(module.named_parameters(remove_duplicate=False))
    d.update(module.named_buffers(remove_duplicate=False))
    return d


def _untie(module, named):
    by_tensor = {}
    for name, t in _all_named(module).items():
        by_tensor.setdefault(id(t), set()).add(name)
    tied = {}
    for names in by_tensor.values():
        if len(names) > 1:
            for n in names:
                tied[n] = names
    given = {n for n in named if n in tied}
    for g in given:
        names = tied[g]
        if len(names & given) > 1 and len({id(named[n]) for n in names & given}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             f"which are tied. Consider using tie_weights=False")
    out = dict(named)
    for g in given:
        for n in tied[g]:
            out[n] = named[g]
    return out


def _submodule(module, path, memo):
    if not path:
        return module
    if path in memo:
        return memo[path]
    prefix, dot, attr = path.rpartition(".")
    parent = _submodule(module, prefix, memo) if dot else module
    try:
        sub = getattr(parent, attr)
    except AttributeError:
        raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`") from None
    memo[path] = sub
    return sub


def _swap(module, name, value):
    """Put ``value`` under ``name`` of ``module``; returns what was there (or _MISSING)."""
    if value is not _MISSING and value is not None and not isinstance(value, Tensor):
        raise TypeError(f"{value} is not an instance of torch.Tensor")
    p, b = module._parameters, module._buffers
    if name in p:
        orig = p[name]
        if value is _MISSING:
            del p[name]
        else:
            p[name] = value
    elif name in b:
        orig = b[name]
        if value is _MISSING:
            del b[name]
        else:
            b[name] = value
    else:
        orig = module.__dict__.get(name, _MISSING)
        if value is _MISSING:
            module.__dict__.pop(name, None)
        else:
            object.__setattr__(module, name, value)
    return orig


@contextlib.contextmanager
def reparametrize(module, named, *, tie_weights=True, strict=False):
    """The module with ``named`` tensors swapped in for the body of the ``with``."""
    if tie_weights:
        named = _untie(module, named)
    if strict:
        valid = set(_all_named(module))
        missing = sorted(valid - set(named))
        unexpected = sorted(set(named) - valid)
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(msgs)))
    own = [t for t in _all_named(module).values() if isinstance(t, Tensor)]
    given = [t for t in named.values() if isinstance(t, Tensor)]
    snap = C.snapshot(own + given)
    memo = {}
    swapped = []
    try:
        for name, value in named.items():
            prefix, _, attr = name.rpartition(".")
            sub = _submodule(module, prefix, memo)
            swapped.append((sub, attr, _swap(sub, attr, value)))
        yield
    finally:
        for sub, attr, orig in reversed(swapped):
            _swap(sub, attr, orig)
        C.check_no_leak(snap, "functional_call")


def stack_module_state(models):
    """(params, buffers): each model's tensors stacked along a new leading dim, for
    ``vmap(functional_call)`` model ensembling."""
    from .._ops.join import stack
    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    t0 = type(models[0])
    if not all(type(m) is t0 for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")

    def leaf(tensors, name):
        all_rg = all(t.requires_grad for t in tensors)
        none_rg = all(not t.requires_grad for t in tensors)
        if not all_rg and not none_rg:
            raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
        from ..autograd.grad_mode import no_grad
        if tensors[0].device.type == "meta":
            from .._meta import MetaArray
            from .._tensor import Tensor
            # meta states stack by shape: torch's model-ensembling recipe on the meta device
            r = Tensor._make(MetaArray((len(tensors),) + tuple(tensors[0].shape),
                                       tensors[0]._d.dtype))
            return r.requires_grad_() if all_rg else r
        with no_grad():
            r = stack(list(tensors))
        if all_rg:
            r = r.detach().requires_grad_()
        return r

    ps = [dict(m.named_parameters()) for m in models]
    params = {k: leaf(tuple(p[k] for p in ps), k) for k in ps[0]}
    bs = [dict(m.named_buffers()) for m in models]
    buffers = {k: leaf(tuple(b[k] for b in bs), k) for k in bs[0]}
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """In place: every BatchNorm of ``root`` stops tracking running stats (what vmap over a
    batch-normed model needs); returns ``root``."""
    from ..nn.modules.batchnorm import _BatchNorm
    for m in root.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root
