"""nn.Module: parameters, buffers and submodules registered by attribute assignment.

Plain dicts hold parameters, buffers, submodules and hooks, as in torch; ``__call__`` is one
line when no hooks are registered. Hook order, signatures and the state_dict protocol follow
torch's ``torch/nn/modules/module.py``.
"""
from __future__ import annotations

import functools
import inspect
import itertools
import warnings
from collections import OrderedDict, namedtuple
from typing import Any, TypeVar


from ..._ops.convert import _to_args     # (torch's to() overloads, for Module.to)
from ..._ops.typeinfo import typename as _typename
from ..._storage import zero_grads as _zero_grads
from ... import _fused, _strides
from ..._tensor import Tensor
from ...utils.hooks import RemovableHandle
from ..parameter import Buffer, Parameter, is_lazy
from ._backward_hook import BackwardHook

__all__ = ["Module", "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_full_backward_hook",
           "register_module_backward_hook",
           "register_module_buffer_registration_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]

# ------------------------------------------------------------------ global hooks

_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_buffer_registration_hooks = OrderedDict()
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()


def register_module_forward_pre_hook(hook):
    """A forward pre-hook common to all modules (runs before each module's own)."""
    h = RemovableHandle(_global_forward_pre_hooks)
    _global_forward_pre_hooks[h.id] = hook
    return h


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """A forward hook common to all modules (runs before each module's own)."""
    h = RemovableHandle(_global_forward_hooks,
                        extra_dict=[_global_forward_hooks_always_called,
                                    _global_forward_hooks_with_kwargs])
    _global_forward_hooks[h.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[h.id] = True
    if always_call:
        _global_forward_hooks_always_called[h.id] = True
    return h


def register_module_full_backward_pre_hook(hook):
    h = RemovableHandle(_global_backward_pre_hooks)
    _global_backward_pre_hooks[h.id] = hook
    return h


_global_is_full_backward_hook = None     # which kind the global backward hooks are, once set


def _set_global_backward_hook_kind(full):
    global _global_is_full_backward_hook
    if _global_is_full_backward_hook is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a "
                           "global Module hook. Please use only one of them.")
    _global_is_full_backward_hook = full


def register_module_full_backward_hook(hook):
    """A full backward hook common to all modules (runs before each module's own)."""
    _set_global_backward_hook_kind(True)
    h = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[h.id] = hook
    return h


def register_module_backward_hook(hook):
    """The deprecated non-full form of ``register_module_full_backward_hook``: the hook is
    registered on each module output's ``grad_fn``, as ``Module.register_backward_hook``."""
    _set_global_backward_hook_kind(False)
    h = RemovableHandle(_global_backward_hooks)
    _global_backward_hooks[h.id] = hook
    return h


def register_module_buffer_registration_hook(hook):
    h = RemovableHandle(_global_buffer_registration_hooks)
    _global_buffer_registration_hooks[h.id] = hook
    return h


def register_module_module_registration_hook(hook):
    h = RemovableHandle(_global_module_registration_hooks)
    _global_module_registration_hooks[h.id] = hook
    return h


def register_module_parameter_registration_hook(hook):
    h = RemovableHandle(_global_parameter_registration_hooks)
    _global_parameter_registration_hooks[h.id] = hook
    return h


def _addindent(s_, num_spaces):
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    s = [(num_spaces * " ") + line for line in s]
    return first + "\n" + "\n".join(s)


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


_EXTRA_STATE_KEY_SUFFIX = "_extra_state"


def _builds_on_device(init):
    """A torchlike module's ``__init__`` whose ``device=`` argument is honoured: parameters
    and buffers are created on that device (``"meta"``: shapes and dtypes only)."""
    import inspect
    params = list(inspect.signature(init).parameters)
    if "device" not in params:
        return init
    pos = params.index("device") - 1            # without self

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        dev = kwargs.get("device", args[pos] if 0 <= pos < len(args) else None)
        if dev is None:
            return init(self, *args, **kwargs)
        from ..._device import device
        with device(dev) if not isinstance(dev, device) else dev:
            return init(self, *args, **kwargs)
    return __init__


def _forward_unimplemented(self, *input):
    """``Module.forward`` of a module that does not define one: raises when called (torch's
    placeholder, under its name; it takes positional inputs only)."""
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function')


class Module:
    """Base class of all modules; subclasses define ``forward``."""

    T_destination = TypeVar("T_destination", bound=dict[str, Any])
    training: bool
    dump_patches = False
    _version = 1
    call_super_init = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None and cls.__module__.startswith("torchlike.nn."):
            cls.__init__ = _builds_on_device(init)

    def __init__(self, *args, **kwargs):
        """The module's empty state; with ``call_super_init`` True, ``args`` and ``kwargs`` go
        on to the next class in the MRO (a cooperative mixin), else they are an error."""
        if self.call_super_init is False and kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if self.call_super_init is False and args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        s = object.__setattr__
        s(self, "training", True)
        s(self, "_parameters", {})
        s(self, "_buffers", {})
        s(self, "_non_persistent_buffers_set", set())
        s(self, "_backward_pre_hooks", OrderedDict())
        s(self, "_backward_hooks", OrderedDict())
        s(self, "_is_full_backward_hook", None)
        s(self, "_forward_hooks", OrderedDict())
        s(self, "_forward_hooks_with_kwargs", OrderedDict())
        s(self, "_forward_hooks_always_called", OrderedDict())
        s(self, "_forward_pre_hooks", OrderedDict())
        s(self, "_forward_pre_hooks_with_kwargs", OrderedDict())
        s(self, "_state_dict_hooks", OrderedDict())
        s(self, "_state_dict_pre_hooks", OrderedDict())
        s(self, "_load_state_dict_pre_hooks", OrderedDict())
        s(self, "_load_state_dict_post_hooks", OrderedDict())
        s(self, "_modules", {})
        if self.call_super_init:
            super().__init__(*args, **kwargs)

    forward = _forward_unimplemented

    def _get_name(self):
        return self.__class__.__name__

    def compile(self, *args, **kwargs):
        """Compile this module's forward in place (torch's ``Module.compile``): arguments as
        ``torchlike.compile``'s. The module keeps its type, ``state_dict`` keys and hooks (which
        run eagerly around the program); its calls run the compiled program."""
        import types
        from ..._compile import _api
        opt = _api.compile(self, *args, **kwargs)
        if opt is self:                    # disable=True
            return
        prog = opt._program
        orig = self.__dict__.get("forward") or types.MethodType(type(self).forward, self)

        def forward(*a, **k):
            if _api._disabled() or _api._trace.is_tracing() or \
                    _api._hooked_submodule(self) is not None:
                return orig(*a, **k)
            return prog.call(self, orig, a, k)
        self.__dict__["_compiled_call_impl"] = opt
        self.__dict__["forward"] = forward

    # ------------------------------------------------------------ call
    def __call__(self, *args, **kwargs):
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks
                or self._backward_pre_hooks or _global_forward_pre_hooks
                or _global_forward_hooks or _global_backward_hooks
                or _global_backward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    _wrapped_call_impl = __call__

    def _call_impl(self, *args, **kwargs):
        result = None
        called_always = set()
        try:
            for hook_id, hook in (*_global_forward_pre_hooks.items(),
                                  *self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    r = hook(self, args, kwargs)
                    if r is not None:
                        if isinstance(r, tuple) and len(r) == 2:
                            args, kwargs = r
                        else:
                            raise RuntimeError(
                                "forward pre-hook must return None or a tuple of (new_args, "
                                f"new_kwargs), but got {r}.")
                else:
                    r = hook(self, args)
                    if r is not None:
                        if not isinstance(r, tuple):
                            r = (r,)
                        args = r

            full_bw, non_full_bw = self._get_backward_hooks()
            pre_bw = self._get_backward_pre_hooks()
            bw_hook = None
            if full_bw or pre_bw:
                bw_hook = BackwardHook(self, full_bw, pre_bw)
                args = bw_hook.setup_input_hook(args)

            result = self.forward(*args, **kwargs)
            if bw_hook is not None:
                bw_hook.check_inputs_unmodified()

            for hook_id, hook in (*_global_forward_hooks.items(), *self._forward_hooks.items()):
                if (hook_id in self._forward_hooks_always_called
                        or hook_id in _global_forward_hooks_always_called):
                    called_always.add(hook_id)
                if (hook_id in self._forward_hooks_with_kwargs
                        or hook_id in _global_forward_hooks_with_kwargs):
                    r = hook(self, args, kwargs, result)
                else:
                    r = hook(self, args, result)
                if r is not None:
                    result = r

            if bw_hook is not None:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn("For backward hooks to be called, module output should be a "
                                  f"Tensor or a tuple of Tensors but received {type(result)}")
                result = bw_hook.setup_output_hook(result)

            if non_full_bw:
                self._register_non_full_backward_hooks(non_full_bw, args, result)
            return result
        except Exception:
            for hook_id, hook in _global_forward_hooks.items():
                if hook_id in _global_forward_hooks_always_called and hook_id not in called_always:
                    try:
                        r = hook(self, args, result)
                        if r is not None:
                            result = r
                    except Exception as e:  # noqa: BLE001
                        warnings.warn("global module forward hook with ``always_call=True`` "
                                      "raised an exception that was silenced as another error "
                                      f"was raised in forward: {str(e)}")
            for hook_id, hook in self._forward_hooks.items():
                if hook_id in self._forward_hooks_always_called and hook_id not in called_always:
                    try:
                        if hook_id in self._forward_hooks_with_kwargs:
                            r = hook(self, args, kwargs, result)
                        else:
                            r = hook(self, args, result)
                        if r is not None:
                            result = r
                    except Exception as e:  # noqa: BLE001
                        warnings.warn("module forward hook with ``always_call=True`` raised an "
                                      "exception that was silenced as another error was raised "
                                      f"in forward: {str(e)}")
            raise

    def _get_backward_hooks(self):
        """(full backward hooks, non-full ones): the global ones, then this module's."""
        full, non_full = [], []
        if _global_backward_hooks:
            (full if _global_is_full_backward_hook else non_full).extend(
                _global_backward_hooks.values())
        if self._is_full_backward_hook is True:
            full += self._backward_hooks.values()
        elif self._is_full_backward_hook is False:
            non_full += self._backward_hooks.values()
        return full, non_full

    def _get_backward_pre_hooks(self):
        return [*_global_backward_pre_hooks.values(), *self._backward_pre_hooks.values()]

    # ------------------------------------------------------------ registration
    def __setattr__(self, name, value):
        def remove_from(*dicts_or_sets):
            for d in dicts_or_sets:
                if name in d:
                    if isinstance(d, dict):
                        del d[name]
                    else:
                        d.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules,
                        self._non_persistent_buffers_set)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
        else:
            modules = self.__dict__.get("_modules")
            if isinstance(value, Module):
                if modules is None:
                    raise AttributeError("cannot assign module before Module.__init__() call")
                remove_from(self.__dict__, self._parameters, self._buffers,
                            self._non_persistent_buffers_set)
                for hook in _global_module_registration_hooks.values():
                    out = hook(self, name, value)
                    if out is not None:
                        value = out
                modules[name] = value
            elif modules is not None and name in modules:
                if value is not None:
                    raise TypeError(f"cannot assign '{_typename(value)}' as child module "
                                    f"'{name}' (torch.nn.Module or None expected)")
                for hook in _global_module_registration_hooks.values():
                    out = hook(self, name, value)
                    if out is not None:
                        value = out
                modules[name] = value
            else:
                buffers = self.__dict__.get("_buffers")
                if isinstance(value, Buffer) or buffers is not None and name in buffers:
                    if value is not None and not isinstance(value, Tensor):
                        raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                        "(torch.nn.Buffer, torch.Tensor or None expected)")
                    if isinstance(value, Buffer):
                        persistent = value.persistent
                    else:
                        persistent = name not in self._non_persistent_buffers_set
                    # through the module's own register_buffer (a subclass may override it;
                    # one without ``persistent`` registers persistent buffers only, as torch)
                    register = self.register_buffer
                    if (getattr(register, "__func__", None) is Module.register_buffer
                            or "persistent" in inspect.signature(register).parameters):
                        register(name, value, persistent)
                    elif not persistent:
                        raise RuntimeError("Registering a non-persistent buffer on a Module "
                                           "subclass that implements register_buffer() without "
                                           "the persistent argument is not allowed.")
                    else:
                        register(name, value)
                else:
                    object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        if "_parameters" in d:
            p = d["_parameters"]
            if name in p:
                return p[name]
        if "_buffers" in d:
            b = d["_buffers"]
            if name in b:
                return b[name]
        if "_modules" in d:
            m = d["_modules"]
            if name in m:
                return m[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        """The class's and instance's attributes, parameters, submodules and buffers, those
        that are not identifiers (a container's ``"0"``) left out; torch's list, duplicates
        included."""
        keys = (dir(self.__class__) + list(self.__dict__) + list(self._parameters)
                + list(self._modules) + list(self._buffers))
        return sorted(k for k in keys if not k[0].isdigit())

    def __getstate__(self):
        state = self.__dict__.copy()
        if state.pop("_compiled_call_impl", None) is not None:
            state.pop("forward", None)     # a copy or unpickled module is not compiled (torch)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        # a module pickled by an older version may lack these (torch fills them in too)
        d = self.__dict__
        for name in ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs",
                     "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
                     "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks", "_backward_pre_hooks"):
            d.setdefault(name, OrderedDict())
        d.setdefault("_non_persistent_buffers_set", set())
        d.setdefault("_is_full_backward_hook", None)

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                "created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method.")
        for hook in _global_parameter_registration_hooks.values():
            out = hook(self, name, param)
            if out is not None:
                param = out
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        for hook in _global_buffer_registration_hooks.values():
            out = hook(self, name, tensor)
            if out is not None:
                tensor = out
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        for hook in _global_module_registration_hooks.values():
            out = hook(self, name, module)
            if out is not None:
                module = out
        self._modules[name] = module

    def register_module(self, name, module):
        self.add_module(name, module)

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        atoms = target.split(".")
        if not isinstance(module, Module):
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent = self.get_submodule(".".join(atoms[:-1]))
        if strict and not hasattr(parent, atoms[-1]):
            raise AttributeError(parent._get_name() + " has no attribute `" + atoms[-1] + "`")
        if hasattr(parent, atoms[-1]) and not isinstance(getattr(parent, atoms[-1]), Module):
            raise AttributeError("`" + atoms[-1] + "` is not an nn.Module")
        setattr(parent, atoms[-1], module)

    def get_parameter(self, target):
        module_path, _, param_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, param_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + param_name + "`")
        param = getattr(mod, param_name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + param_name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        module_path, _, buffer_name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, buffer_name):
            raise AttributeError(mod._get_name() + " has no attribute `" + buffer_name + "`")
        buffer = getattr(mod, buffer_name)
        if buffer_name not in mod._buffers:
            raise AttributeError("`" + buffer_name + "` is not a buffer")
        return buffer

    # ------------------------------------------------------------ traversal
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if self not in memo:
            if remove_duplicate:
                memo.add(self)
            yield prefix, self
            for name, module in self._modules.items():
                if module is None:
                    continue
                submodule_prefix = prefix + ("." if prefix else "") + name
                yield from module.named_modules(memo, submodule_prefix, remove_duplicate)

    def modules(self, remove_duplicate=True):
        for _, m in self.named_modules(remove_duplicate=remove_duplicate):
            yield m

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, get_members_fn, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members_fn(module):
                if v is None or v in memo:
                    continue
                if remove_duplicate:
                    memo.add(v)
                yield module_prefix + ("." if module_prefix else "") + k, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ------------------------------------------------------------ modes and grads
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        _zero_grads(self.parameters(), set_to_none)

    def share_memory(self):
        """torch moves every parameter and buffer into shared memory (Hogwild training);
        jax arrays cannot be shared between processes, so this warns as
        ``Tensor.share_memory_`` does and leaves them as they are (DIFFERENCES.md)."""
        from ..._tensor import SHARE_MEMORY_MSG
        for t in itertools.chain(self.parameters(), self.buffers()):
            if is_lazy(t):
                t.share_memory_()       # (raises: it has no memory yet)
        if any(True for _ in self.parameters()) or any(True for _ in self.buffers()):
            warnings.warn(SHARE_MEMORY_MSG, UserWarning, stacklevel=2)
        return self

    def apply(self, fn):
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn, recurse=True):
        if recurse:
            for module in self.children():
                module._apply(fn)
        for key, param in self._parameters.items():
            if param is None:
                continue
            new = fn(param.detach())
            layout = new.__dict__.get("_layout")    # (a memory format: the strides it keeps)
            # (pending values stay pending: a module moved or cast mid-training runs nothing)
            data = _fused.raw(new)
            if data is not _fused.raw(param) or layout != param.__dict__.get("_layout"):
                param._data = data
                _strides.set_layout(param, None if layout is None else layout[1])
                if param.grad is not None:
                    g = fn(param.grad.detach())
                    param._grad = _strides.set_layout(
                        Tensor._make(_fused.raw(g)), _strides.strides(g))
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """Move and/or cast parameters and buffers (torch's argument forms), each tensor going
        through ``Tensor.to``; integer tensors keep their dtype."""
        device, dtype, non_blocking = _parse_to(*args, **kwargs)
        if dtype is not None:
            if not (dtype.is_floating_point or dtype.is_complex):
                raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but "
                                f"got desired dtype={dtype}")
            if dtype.is_complex:
                warnings.warn("Complex modules are a new feature under active development whose "
                              "design may change, and some modules might not work as expected "
                              "when using complex tensors as parameters or buffers. Please file "
                              "an issue at https://github.com/pytorch/pytorch/issues/new?"
                              "template=bug-report.yml if a complex module does not work as "
                              "expected.")

        memory_format = kwargs.get("memory_format")     # (torch: 4-d and 5-d tensors only)

        def convert(t):
            kw = {}
            if device is not None:
                kw["device"] = device
            if dtype is not None and (t.is_floating_point() or t.is_complex()):
                kw["dtype"] = dtype
            if memory_format is not None and t.dim() in (4, 5):
                kw["memory_format"] = memory_format
            if not kw:
                return t
            return t.to(**kw, non_blocking=non_blocking)
        if device is None and dtype is None and memory_format is None:
            return self
        return self._apply(convert)

    def float(self):
        from ... import float32
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def xpu(self, device=None):
        return self._apply(lambda t: t.to(_device_of("xpu", device)))

    def ipu(self, device=None):
        return self._apply(lambda t: t.to(_device_of("ipu", device)))

    def mtia(self, device=None):
        return self._apply(lambda t: t.to(_device_of("mtia", device)))

    def to_empty(self, *, device, recurse=True):
        """Parameters and buffers replaced by uninitialised tensors (zeros here) of the same
        shapes and dtypes on ``device``: how a module built on the ``meta`` device gets
        storage."""
        from ..._creation import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    # ------------------------------------------------------------ hooks
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        h = RemovableHandle(self._forward_pre_hooks,
                            extra_dict=self._forward_pre_hooks_with_kwargs)
        self._forward_pre_hooks[h.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[h.id] = True
        if prepend:
            self._forward_pre_hooks.move_to_end(h.id, last=False)
        return h

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        h = RemovableHandle(self._forward_hooks,
                            extra_dict=[self._forward_hooks_with_kwargs,
                                        self._forward_hooks_always_called])
        self._forward_hooks[h.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs[h.id] = True
        if always_call:
            self._forward_hooks_always_called[h.id] = True
        if prepend:
            self._forward_hooks.move_to_end(h.id, last=False)
        return h

    def register_full_backward_pre_hook(self, hook, prepend=False):
        h = RemovableHandle(self._backward_pre_hooks)
        self._backward_pre_hooks[h.id] = hook
        if prepend:
            self._backward_pre_hooks.move_to_end(h.id, last=False)
        return h

    def register_full_backward_hook(self, hook, prepend=False):
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = True
        h = RemovableHandle(self._backward_hooks)
        self._backward_hooks[h.id] = hook
        if prepend:
            self._backward_hooks.move_to_end(h.id, last=False)
        return h

    def register_backward_hook(self, hook):
        """The deprecated non-full hook: as torch, registered on the output's ``grad_fn`` at
        each call, run as ``hook(module, grad_input, grad_output)`` with that node's
        gradients (torch's warnings say when those are not the module's)."""
        if self._is_full_backward_hook is True:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks "
                               "on a single Module. Please use only one of them.")
        self._is_full_backward_hook = False
        h = RemovableHandle(self._backward_hooks)
        self._backward_hooks[h.id] = hook
        return h

    def _register_non_full_backward_hooks(self, hooks, args, result):
        var = result
        while not isinstance(var, Tensor):
            if isinstance(var, dict):
                var = next(v for v in var.values() if isinstance(v, Tensor))
            else:
                var = var[0]
        grad_fn = var.grad_fn
        if grad_fn is None:
            return
        for hook in hooks:
            grad_fn.register_hook(_WrappedHook(hook, self))
        self._maybe_warn_non_full_backward_hook(args, result, grad_fn)

    def _maybe_warn_non_full_backward_hook(self, inputs, result, grad_fn):
        if not isinstance(result, Tensor):
            if not (isinstance(result, tuple) and all(isinstance(r, Tensor) for r in result)):
                warnings.warn("Using non-full backward hooks on a Module that does not return a "
                              "single Tensor or a tuple of Tensors is deprecated and will be "
                              "removed in future versions. This hook will be missing some of "
                              "the grad_output. Please use register_full_backward_hook to get "
                              "the documented behavior.", FutureWarning, stacklevel=2)
                return
        else:
            result = (result,)
        if not isinstance(inputs, Tensor):
            if not (isinstance(inputs, tuple) and all(isinstance(i, Tensor) for i in inputs)):
                warnings.warn("Using non-full backward hooks on a Module that does not take as "
                              "input a single Tensor or a tuple of Tensors is deprecated and "
                              "will be removed in future versions. This hook will be missing "
                              "some of the grad_input. Please use register_full_backward_hook "
                              "to get the documented behavior.", FutureWarning, stacklevel=2)
                return
        else:
            inputs = (inputs,)
        out_grad_fn = {r.grad_fn for r in result if r.grad_fn is not None}
        if len(out_grad_fn) == 0 or (len(out_grad_fn) == 1 and grad_fn not in out_grad_fn):
            warnings.warn("Using a non-full backward hook when outputs are nested in python data "
                          "structure is deprecated and will be removed in future versions. This "
                          "hook will be missing some grad_output.", FutureWarning, stacklevel=2)
        elif len(out_grad_fn) > 1:
            warnings.warn("Using a non-full backward hook when outputs are generated by different "
                          "autograd Nodes is deprecated and will be removed in future versions. "
                          "This hook will be missing some grad_output. Please use "
                          "register_full_backward_hook to get the documented behavior.",
                          FutureWarning, stacklevel=2)
        else:
            inputs_grad_fn = {i.grad_fn for i in inputs if i.grad_fn is not None}
            next_functions = {n[0] for n in grad_fn.next_functions}
            if inputs_grad_fn != next_functions:
                warnings.warn("Using a non-full backward hook when the forward contains multiple "
                              "autograd Nodes is deprecated and will be removed in future "
                              "versions. This hook will be missing some grad_input. Please use "
                              "register_full_backward_hook to get the documented behavior.",
                              FutureWarning, stacklevel=2)

    def register_state_dict_pre_hook(self, hook):
        h = RemovableHandle(self._state_dict_pre_hooks)
        self._state_dict_pre_hooks[h.id] = hook
        return h

    def register_state_dict_post_hook(self, hook):
        """torch's public post-hook: it must return None (it mutates ``state_dict``)."""
        hook._from_public_api = True
        h = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[h.id] = hook
        return h

    def _register_state_dict_hook(self, hook):
        """torch's private form: the hook may return a new state_dict."""
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via "
                               "register_state_dict_post_hook")
        h = RemovableHandle(self._state_dict_hooks)
        self._state_dict_hooks[h.id] = hook
        return h

    def register_load_state_dict_pre_hook(self, hook):
        h = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[h.id] = functools.partial(_with_module, hook, self)
        return h

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """torch's private form: ``hook(state_dict, prefix, ...)`` (module first if asked)."""
        h = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[h.id] = (functools.partial(_with_module, hook, self)
                                                 if with_module else hook)
        return h

    def register_load_state_dict_post_hook(self, hook):
        h = RemovableHandle(self._load_state_dict_post_hooks)
        self._load_state_dict_post_hooks[h.id] = hook
        return h

    # ------------------------------------------------------------ state
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """This module's own parameters and persistent buffers into ``destination`` (detached
        unless ``keep_vars``); an uninitialized (lazy) one is saved as it is, as torch's
        LazyModuleMixin does."""
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = (param if keep_vars or is_lazy(param)
                                              else param.detach())
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = (buf if keep_vars or is_lazy(buf)
                                              else buf.detach())
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if type(self).get_extra_state is not Module.get_extra_state:
            destination[extra_state_key] = self.get_extra_state()

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never be "
                           "called.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never be "
                           "called.")

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        if len(args) > 0:
            warnings.warn(
                "Positional args are being deprecated, use kwargs instead. Refer to "
                "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                "#torch.nn.Module.state_dict for details.", FutureWarning, stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            r = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if r is not None:
                    destination = r
            elif r is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """torch's signature (subclasses override it with these eight arguments): ``assign``
        arrives as ``local_metadata["assign_to_params_buffers"]``."""
        from ...autograd.grad_mode import no_grad
        from ..parameter import uninitialized_use_error
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent_buffers = {k: v for k, v in self._buffers.items()
                              if k not in self._non_persistent_buffers_set}
        local_name_params = list(self._parameters.items()) + list(persistent_buffers.items())
        local_state = {k: v for k, v in local_name_params if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key in state_dict:
                input_param = state_dict[key]
                if not isinstance(input_param, Tensor):
                    error_msgs.append(
                        f'While copying the parameter named "{key}", expected torch.Tensor or '
                        f"Tensor-like object from checkpoint but received {type(input_param)}")
                    continue
                if is_lazy(param):
                    if not is_lazy(input_param):
                        # LazyModuleMixin's load hook: materialize to the checkpoint's shape
                        param.materialize(tuple(input_param.shape))
                    else:
                        continue            # uninitialized into uninitialized: stays so
                elif is_lazy(input_param):
                    # (torch reads the checkpoint entry's shape, which raises)
                    raise uninitialized_use_error(input_param, "shape")
                # backward compatibility (torch 0.3's 1-element vectors for 0-dim values)
                if param.ndim == 0 and input_param.ndim == 1 and input_param.shape[0] == 1:
                    input_param = input_param[0]
                if tuple(input_param.shape) != tuple(param.shape):
                    error_msgs.append(
                        f"size mismatch for {key}: copying a param with shape "
                        f"{input_param.shape} from checkpoint, the shape in current model is "
                        f"{param.shape}.")
                    continue
                if param.is_meta and not input_param.is_meta and not assign:
                    warnings.warn(
                        f"for {key}: copying from a non-meta parameter in the checkpoint to a "
                        "meta parameter in the current model, which is a no-op. (Did you mean "
                        "to pass `assign=True` to assign items in the state dictionary to their "
                        "corresponding key in the module instead of copying them in place?)",
                        stacklevel=2)
                try:
                    with no_grad():
                        if assign:
                            if isinstance(param, Parameter):
                                if not isinstance(input_param, Parameter):
                                    input_param = Parameter(input_param,
                                                            requires_grad=param.requires_grad)
                                else:
                                    input_param.requires_grad_(param.requires_grad)
                            setattr(self, name, input_param)
                        elif not param.is_meta:     # (a copy into a meta tensor is a no-op)
                            if not input_param.is_meta and input_param.device != param.device:
                                # (torch's copy_ crosses devices: the checkpoint's entry is
                                # moved to the parameter's first)
                                input_param = input_param.to(param.device)
                            param.copy_(input_param)
                except Exception as ex:  # noqa: BLE001  (torch reports it among the errors)
                    error_msgs.append(
                        f'While copying the parameter named "{key}", whose dimensions in the '
                        f"model are {param.size()} and whose dimensions in the checkpoint are "
                        f"{input_param.size()}, an exception occurred : {ex.args}.")
            elif strict:
                missing_keys.append(key)
        extra_state_key = prefix + _EXTRA_STATE_KEY_SUFFIX
        if getattr(type(self), "set_extra_state", Module.set_extra_state) \
                is not Module.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict.keys():
                if key.startswith(prefix) and key != extra_state_key:
                    input_name = key[len(prefix):].split(".", 1)
                    # a dotted key must name a submodule; a plain one, a parameter or buffer
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        from collections.abc import Mapping
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True,
                                         missing_keys, unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state_dict = {k: v for k, v in local_state_dict.items()
                                        if k.startswith(child_prefix)}
                    load(child, child_state_dict, child_prefix)
            incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
            for hook in module._load_state_dict_post_hooks.values():
                out = hook(module, incompatible)
                assert out is None, ("Hooks registered with "
                                     "``register_load_state_dict_post_hook`` are not expected "
                                     "to return new values, if incompatible_keys need to be "
                                     "modified, it should be done inplace.")

        load(self, state_dict)
        del load
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ------------------------------------------------------------ repr
    def extra_repr(self):
        return ""

    def __repr__(self):
        extra_lines = []
        extra_repr = self.extra_repr()
        if extra_repr:
            extra_lines = extra_repr.split("\n")
        child_lines = []
        for key, module in self._modules.items():
            mod_str = _addindent(repr(module), 2)
            child_lines.append("(" + key + "): " + mod_str)
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"


def _with_module(hook, module, *args, **kwargs):
    return hook(module, *args, **kwargs)


class _WrappedHook:
    """``hook(module, *args)`` as a node hook (torch's wrapper for non-full backward hooks)."""

    def __init__(self, hook, module):
        self.hook = hook
        self.module = module

    def __call__(self, *args):
        return self.hook(self.module, *args)




def _parse_to(*args, **kwargs):
    """torch._C._nn._parse_to: (device, dtype, non_blocking), parsed against Tensor.to's
    overloads (a module takes no ``copy``)."""
    from ..._device import device as _dev
    got = _to_args(args, kwargs)
    if got.get("copy"):
        raise RuntimeError(".to() does not accept copy argument")
    t = got.get("tensor")
    device = t.device if t is not None else got.get("device")
    dtype = t.dtype if t is not None else got.get("dtype")
    if dtype is not None:
        from ... import _dtype as D
        dtype = D.to_dtype(dtype)       # (a Python type: float is float64)
    if device is not None and not isinstance(device, _dev):
        device = _dev(device)          # torch's "Invalid device string" for a bad string
    return device, dtype, got.get("non_blocking", False)


def _device_of(kind, device):
    """``Module.xpu(device)``'s target: the kind's device at an index (an int, or a device)."""
    from ..._device import device as _dev
    if device is None or isinstance(device, int):
        return _dev(kind, device)
    return _dev(device)
