"""Per-module input layouts and padded-parameter views without module hooks.

The global view's modules convert their inputs onto the mesh (tensor-parallel input layouts,
FSDP's batch sharding) and show padded FSDP parameters unpadded during ``forward``. Done with
forward hooks, ``torchlike.compile`` would have to break the graph; so the module's class is
swapped for a subclass (same name) whose ``forward`` does it, as torch's ``fully_shard``
swaps in ``FSDP<Class>``."""
from __future__ import annotations

__all__ = ["add_input_fn", "shim"]

_CLASSES = {}


class _Shim:
    def forward(self, *args, **kwargs):
        for fn in self._tl_input_fns:
            args = fn(self, args)
        padded = self.__dict__.get("_fsdp_padded")
        if padded:
            for name, d0 in padded.items():
                self.__dict__[name] = self._parameters[name][:d0]
        try:
            return self._tl_base.forward(self, *args, **kwargs)
        finally:
            if padded:
                for name in padded:
                    self.__dict__.pop(name, None)


def shim(module, extra_bases=(), prefix=""):
    """Swap ``module``'s class for its shimmed subclass (idempotent; ``extra_bases`` mixed in,
    ``prefix`` added to the class name)."""
    cls = type(module)
    if isinstance(module, _Shim):
        if all(isinstance(module, b) for b in extra_bases):
            return module
        base = module._tl_base
    else:
        base = cls
        object.__setattr__(module, "_tl_input_fns", [])
        object.__setattr__(module, "_tl_base", base)
    key = (base, tuple(extra_bases), prefix)
    new = _CLASSES.get(key)
    if new is None:
        new = _CLASSES[key] = type(prefix + base.__name__, tuple(extra_bases) + (_Shim, base),
                                   {"__module__": base.__module__})
    module.__class__ = new
    return module


def add_input_fn(module, fn):
    """Run ``fn(module, args) -> args`` before ``module.forward``."""
    shim(module)
    module._tl_input_fns.append(fn)
