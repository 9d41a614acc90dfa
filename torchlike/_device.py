"""torchlike.device: torch's device names mapped onto jax's platforms.

``cpu`` is jax's CPU device, ``cuda:i`` is ``jax.devices("gpu")[i]`` and ``xla:i`` a TPU
device. Where jax has no such backend, the same errors torch's CPU build gives are raised
(``AssertionError: Torch not compiled with CUDA enabled``, ...).

The default device (``torchlike.set_default_device``, ``with torchlike.device(...)``) is
thread-local, as torch's is; factories read it through ``default_device()``.
"""
from __future__ import annotations

import re
import threading

import jax

from . import _fused
from ._dtype import c_type_format

__all__ = ["device"]

_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
          "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_PLATFORM_TO_TYPE = {"cpu": "cpu", "gpu": "cuda", "cuda": "cuda", "rocm": "cuda", "tpu": "xla"}
_TYPE_TO_PLATFORM = {"cpu": "cpu", "cuda": "gpu", "xla": "tpu"}
_DEVICE_RE = re.compile(r"^([a-zA-Z_]+)(?::(0|[1-9][0-9]*))?$")

_NO_MTIA = ("Torch not compiled with MTIA enabled. Ensure you have `import "
            "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and include "
            "`//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!")
NO_CUDA = "Torch not compiled with CUDA enabled"
NO_ACCELERATOR = "Cannot access accelerator device when none is available."


class device:
    """``torchlike.device('cpu')``, ``device('cuda', 0)``, ``device('cuda:1')``, ``device(0)``.

    Also a context manager setting the default device of factories in this thread:

    >>> with torchlike.device('cpu'):
    ...     torchlike.zeros(2).device
    device(type='cpu')
    """

    __slots__ = ("type", "index", "_prev")

    def __init__(self, type=None, index=None):
        if isinstance(type, device):
            if index is not None:
                raise TypeError("device(): a device object cannot be combined with an index")
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):
            if type < 0:
                raise RuntimeError("Device index must not be negative")
            acc = accelerator_type()
            if acc is None:
                raise RuntimeError(NO_ACCELERATOR)
            type, index = acc, type
        elif isinstance(type, str):
            m = _DEVICE_RE.match(type)
            if m is None:
                raise RuntimeError(f"Invalid device string: {type!r}")
            if m.group(1) not in _TYPES:
                raise RuntimeError(
                    f"Expected one of {', '.join(_TYPES)} device type at start of device "
                    f"string: {type}")
            if m.group(2) is not None:
                if index is not None:
                    raise RuntimeError(f"type (string) must not include an index because index "
                                       f"was passed explicitly: {type}")
                index = int(m.group(2))
            type = m.group(1)
        else:
            raise TypeError(
                f"device() received an invalid combination of arguments - got "
                f"({_tname(type)}), "
                f"but expected one of:\n * (torch.device device)\n      didn't match because "
                f"some of the arguments have invalid types: (!{_tname(type)}!)\n * (str type, "
                f"int index = -1)\n")
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, int):
                raise TypeError(f"device(): argument 'index' (position 2) must be int, not "
                                f"{_tname(index)}")
            if index < 0:
                raise RuntimeError("Device index must not be negative")
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "index", index)

    def __setattr__(self, name, value):
        if name != "_prev":
            raise AttributeError(f"attribute '{name}' of 'torch.device' objects is not writable")
        object.__setattr__(self, name, value)

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    __format__ = c_type_format("torch.device")

    def __eq__(self, other):
        # as in torch, a device never equals a string
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))

    # ---- default-device context manager (torch.device is one)
    def __enter__(self):
        st = _local()
        self._prev = st.default
        st.default = self
        return self

    def __exit__(self, *exc):
        _local().default = self._prev
        return False


def _tname(x):
    return type(x).__name__


_CPU = device("cpu")
_JAX_CPU = [None]


# ------------------------------------------------------------------ backends

def _jax_devices(platform):
    try:
        return jax.local_devices(backend=platform)   # this process's devices
    except RuntimeError:
        return []


def cuda_devices():
    """jax's GPU devices (empty on a CPU-only jax)."""
    devs = _CUDA_DEVS[0]
    if devs is None:
        devs = _CUDA_DEVS[0] = _jax_devices("gpu")
        _ACCEL[0] = bool(devs) or bool(_jax_devices("tpu"))
    return devs


_CUDA_DEVS = [None]     # jax's backends are fixed once started: looked up once
_ACCEL = [True]         # whether jax has any accelerator (set by the first cuda_devices())


def accelerator_type():
    """'cuda' where jax has GPUs, 'xla' where it has TPUs, else None (torch.accelerator)."""
    if cuda_devices():
        return "cuda"
    if _jax_devices("tpu"):
        return "xla"
    return None


class _Local(threading.local):
    def __init__(self):
        self.default = None          # torchlike.device or None (cpu)
        self.cuda_index = 0          # torch.cuda.current_device()


_state = _Local()


def _local():
    return _state


def default_device():
    """The thread's default device for factories (a ``device``; cpu unless set)."""
    return _state.default or _CPU


def set_default_device(dev):
    _state.default = None if dev is None else device(dev)


def get_default_device():
    d = _state.default
    if d is None:
        return _CPU
    if d.type == "cuda" and d.index is None:
        check(d)
        return device("cuda", _state.cuda_index)
    return d


def _unsupported(dev):
    backend = {"xla": "XLA", "mps": "MPS", "meta": "Meta"}.get(dev.type, dev.type.upper())
    return NotImplementedError(
        f"Could not run 'aten::empty.memory_format' with arguments from the '{backend}' "
        f"backend. torchlike places tensors on jax's devices: this jax has no "
        f"{dev.type!r} backend (see README: devices).")


def check(dev):
    """Raise torch's error if ``dev`` cannot hold tensors here; returns the jax device."""
    if dev.type == "meta":
        from ._meta import _META_DEVICE
        return _META_DEVICE
    if dev.type == "cpu":
        if _JAX_CPU[0] is None:
            _JAX_CPU[0] = jax.local_devices(backend="cpu")[0]
        return _JAX_CPU[0]
    if dev.type == "cuda":
        devs = cuda_devices()
        if not devs:
            raise AssertionError(NO_CUDA)
        i = _state.cuda_index if dev.index is None else dev.index
        if i >= len(devs):
            raise RuntimeError("CUDA error: invalid device ordinal")
        return devs[i]
    if dev.type == "xpu":
        raise AssertionError("Torch not compiled with XPU enabled")
    if dev.type == "mtia":
        raise AssertionError(_NO_MTIA)
    if dev.type == "xla":
        devs = _jax_devices("tpu")
        if devs:
            i = dev.index or 0
            if i >= len(devs):
                raise RuntimeError(f"xla device index {i} out of range ({len(devs)} devices)")
            return devs[i]
    raise _unsupported(dev)


def to_jax(dev):
    """The jax device for a torch device (or None for 'leave where it is')."""
    if dev is None:
        return None
    return check(device(dev))


def of_array(arr) -> device:
    """The torch device of a jax array."""
    c = arr.__class__
    if c is _ArrayImpl:
        sh = arr.sharding
        d = sh._device if sh.__class__ is _SingleDevice else None
    else:
        d = arr.device if c is _fused.Deferred else None
    if d is not None:
        got = _OF_JAX_DEVICE.get(d)
        if got is None:
            got = _OF_JAX_DEVICE[d] = _of_jax_device(d)
        return got
    if getattr(arr, "__slots__", None) == ("shape", "dtype"):      # a MetaArray
        return device("meta")
    try:
        d = next(iter(arr.devices()))
    except Exception:  # tracers have no device
        return _CPU
    return _of_jax_device(d)


_ArrayImpl, _SingleDevice = _fused._ArrayImpl, _fused._SingleDevice
_OF_JAX_DEVICE: dict = {}       # jax device -> torch device (of a single-device array)


def _of_jax_device(d):
    t = _PLATFORM_TO_TYPE.get(d.platform, d.platform)
    if t == "cpu":
        return _CPU
    if t == "cuda":
        devs = cuda_devices()
        return device("cuda", devs.index(d) if d in devs else d.id)
    return device(t, d.id)


def put(arr, dev=None):
    """``arr`` on torch device ``dev`` (the default device when None); a factory's last step."""
    if dev is None:
        dev = _state.default
        if dev is None and not _ACCEL[0]:
            return arr              # CPU-only jax, default device: arrays are already there
        dev = dev or _CPU
    target = check(dev if isinstance(dev, device) else device(dev))
    if target.platform == "meta":
        from ._meta import meta_like
        return meta_like(arr)
    try:
        if arr.devices() == {target}:
            return arr
    except Exception:
        return arr                  # a tracer (inside torchlike.compile): leave it to jax
    return jax.device_put(arr, target)


def mismatch_error(devices):
    """torch's message for an op given tensors on two devices (``devices``: torch devices)."""
    first = devices[0]
    other = next(d for d in devices if d != first)
    return RuntimeError(f"Expected all tensors to be on the same device, but found at least two "
                        f"devices, {first} and {other}!")


# ------------------------------------------------------------------ moves

def move(t, dev):
    """``t`` on device ``dev`` (``t`` itself when it is already there); used by ``Tensor.to``.

    A move of a tensor that requires grad is recorded as torch's ``ToCopyBackward0``, whose
    backward moves the gradient back. It is a hand-made node, not a registry op: a jitted
    function cannot move data between devices (``device_put`` inside ``jit`` is a no-op).
    """
    target = device(dev)
    try:
        jdev = check(target)
    except NotImplementedError:
        # (a move says it as torch's ``to`` does, a factory as its allocation does)
        raise RuntimeError(f"PyTorch is not linked with support for {target.type} "
                           f"devices") from None
    src = t._d                          # (fused eager: a pending value knows its device)
    try:
        if src.devices() == {jdev} or (jdev in src.devices() and not src.is_fully_addressable):
            return t    # (an array spanning processes, a DTensor's: stays laid out, as torch's)
    except Exception:
        return t
    src = t._data
    from ._registry import _Tensor as Tensor
    from .autograd import grad_mode as _gm
    if jdev.platform == "meta" or getattr(src, "__slots__", None) == ("shape", "dtype"):
        from ._meta import meta_like
        if jdev.platform != "meta":
            raise NotImplementedError("Cannot copy out of meta tensor; no data!")
        out = Tensor._make(meta_like(src))
        out._requires_grad = t._requires_grad and _gm._state.grad_enabled
        return out
    data = jax.device_put(src, jdev)
    if not (t._requires_grad and _gm._state.grad_enabled):
        return Tensor._make(data)
    src_dev = next(iter(src.devices()))
    node = _ToCopyNode(t._edge(), src_dev, (tuple(data.shape), data.dtype))
    return Tensor._make(data, node, 0)


def _make_node_class():
    from .autograd.graph import Node

    class _ToCopyNode(Node):
        """Backward of a device move: the gradient goes back to the source device."""

        __slots__ = ("src",)

        def __init__(self, edge, src, meta):
            super().__init__("ToCopyBackward0", (edge,), None, None, None, (meta,), saves=False)
            self.src = src

        def run(self, cots, create_graph):
            (g,) = cots
            if g is None:
                return (None,)
            if create_graph:
                from ._registry import _Tensor as Tensor
                if not isinstance(g, Tensor):
                    g = Tensor._make(g)
                return (move(g, of_array_dev(self.src)),)
            if hasattr(g, "_data"):
                g = g._data
            if g.__class__ is _fused.Deferred:   # (fused eager: a move needs the value)
                g = _fused.resolve(g, "device move")
            return (jax.device_put(g, self.src),)

    # named as torch's node class
    _ToCopyNode.__name__ = _ToCopyNode.__qualname__ = "ToCopyBackward0"
    _ToCopyNode.__module__ = "builtins"
    return _ToCopyNode


def of_array_dev(jdev):
    t = _PLATFORM_TO_TYPE.get(jdev.platform, jdev.platform)
    if t == "cpu":
        return _CPU
    if t == "cuda":
        return device("cuda", cuda_devices().index(jdev))
    return device(t, jdev.id)


class _LazyNode:
    cls = None

    def __call__(self, *a):
        if _LazyNode.cls is None:
            _LazyNode.cls = _make_node_class()
        return _LazyNode.cls(*a)


_ToCopyNode = _LazyNode()
