"""torch.distributed.fsdp.wrap: the auto-wrap policies ``FullyShardedDataParallel`` takes.

A policy is called as torch's: ``policy(module=m, recurse=False, nonwrapped_numel=n)`` says
whether ``m`` (whose parameters not already in a wrapped submodule number ``n``) gets its own
FSDP unit."""
from __future__ import annotations

__all__ = ["always_wrap_policy", "size_based_auto_wrap_policy", "transformer_auto_wrap_policy",
           "lambda_auto_wrap_policy", "ModuleWrapPolicy", "CustomPolicy", "wrap",
           "enable_wrap"]


def always_wrap_policy(*args, **kwargs):
    return True


def size_based_auto_wrap_policy(module, recurse, nonwrapped_numel, min_num_params=int(1e8),
                                force_leaf_modules=None, exclude_wrap_modules=None):
    """Wrap a module holding at least ``min_num_params`` parameters not yet wrapped."""
    from ...nn import ModuleDict, ModuleList, MultiheadAttention
    force_leaf = (MultiheadAttention,) if force_leaf_modules is None else tuple(force_leaf_modules)
    exclude = (ModuleList, ModuleDict) if exclude_wrap_modules is None else tuple(
        exclude_wrap_modules)
    if recurse:
        return not isinstance(module, force_leaf)
    return nonwrapped_numel >= min_num_params and not isinstance(module, exclude)


def transformer_auto_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls):
    """Wrap every instance of the classes in ``transformer_layer_cls``."""
    if recurse:
        return True
    return isinstance(module, tuple(transformer_layer_cls))


def lambda_auto_wrap_policy(module, recurse, nonwrapped_numel, lambda_fn):
    if recurse:
        return True
    return bool(lambda_fn(module))


class ModuleWrapPolicy:
    """Wrap every instance of the given module classes."""

    def __init__(self, module_classes):
        self._module_classes = tuple(set(module_classes))

    def __call__(self, module, recurse, *args, **kwargs):
        return True if recurse else isinstance(module, self._module_classes)


class CustomPolicy:
    """Wrap where ``lambda_fn(module)`` is true (a dict of keyword arguments counts as
    true)."""

    def __init__(self, lambda_fn):
        self._lambda_fn = lambda_fn

    def __call__(self, module, recurse, *args, **kwargs):
        return True if recurse else bool(self._lambda_fn(module))


def wrap(module, **kwargs):
    raise NotImplementedError("torchlike.distributed.fsdp.wrap.wrap: pass auto_wrap_policy to "
                              "FullyShardedDataParallel, or use fully_shard")


def enable_wrap(*args, **kwargs):
    raise NotImplementedError("torchlike.distributed.fsdp.wrap.enable_wrap: pass "
                              "auto_wrap_policy to FullyShardedDataParallel, or use fully_shard")
