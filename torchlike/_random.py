"""Random state: torch's global seed and Generator objects over jax PRNG keys.

Streams are reproducible within torchlike for a seed; they are not bit-equal to torch's
(see DIFFERENCES.md).
"""
from __future__ import annotations

import threading

import jax
import jax.numpy as jnp
import numpy as np

from . import _dtype as D

__all__ = ["Generator", "manual_seed", "seed", "initial_seed", "default_generator",
           "get_rng_state", "set_rng_state"]


# torch's (CPU build) refusal of a CUDA generator
_NO_CUDA_GENERATOR = (
    "Cannot get CUDA generator without ATen_cuda library. PyTorch splits its backend into two "
    "shared libraries: a CPU library and a CUDA library; this error has occurred because you "
    "are trying to use some CUDA functionality, but the CUDA library has not been loaded by the "
    "dynamic linker for some reason.  The CUDA library MUST be loaded, EVEN IF you don't "
    "directly use any symbols from the CUDA library! One common culprit is a lack of "
    "-Wl,--no-as-needed in your link arguments; many dynamic linkers will delete dynamic "
    "library dependencies if you don't depend on any of their symbols.  You can check if this "
    "has occurred by using ldd on your binary to see if there is a dependency on *_cuda.so "
    "library.")


class Generator:
    """A source of random keys: ``Generator().manual_seed(0)``."""

    def __init__(self, device="cpu"):
        from ._device import cuda_devices, device as _dev
        self.device = device if isinstance(device, _dev) else _dev(device)
        if self.device.type == "cuda" and not cuda_devices():
            raise RuntimeError(_NO_CUDA_GENERATOR)
        self._lock = threading.Lock()
        # set only while torchlike.compile traces a program: the traced counter the program
        # starts from (keys drawn while tracing are fold_in(key, base + i), i = 0, 1, ...)
        self._base = None
        self.manual_seed(np.random.SeedSequence().entropy % (2 ** 63))

    def __repr__(self):
        # torch's is object's repr of its torch._C.Generator
        if type(self) is Generator:
            return f"<torchlike._C.Generator object at {id(self):#x}>"
        return object.__repr__(self)

    __format__ = D.c_type_format("torch._C.Generator")

    def __getstate__(self):
        """Its device, seed and position (torch's generators pickle and deep-copy: a copied
        DataLoader or sampler goes on with the same stream)."""
        state = dict(self.__dict__)
        del state["_lock"]
        state["_base"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def manual_seed(self, seed):
        # torch's Generator.manual_seed takes an integer only (torch.manual_seed reads its
        # argument with int() first)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            t = type(seed)
            mod = t.__module__ or ""
            name = t.__name__ if mod == "builtins" or mod.startswith("torchlike") else \
                f"{mod}.{t.__name__}"           # (torch's tp_name: numpy.float64, Tensor, str)
            raise RuntimeError(f"manual_seed expected a long, but got {name}")
        seed = int(seed)
        if not -(1 << 63) <= seed < (1 << 64):
            raise ValueError("Overflow when unpacking long long")
        seed &= 0xFFFFFFFFFFFFFFFF          # torch keeps a seed as its uint64 bits
        self._seed = seed
        if jax.config.jax_default_prng_impl == "threefry2x32":
            # threefry's key of a seed is its 64 bits as two uint32 words (no program run)
            self._key = np.array([seed >> 32, seed & 0xFFFFFFFF], np.uint32)
        else:
            self._key = np.asarray(jax.random.key_data(jax.random.key(
                seed if seed < (1 << 63) else seed - (1 << 64))))
        self._counter = 0
        return self

    def initial_seed(self):
        return self._seed

    def seed(self):
        s = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(s)
        return s

    def next_key(self):
        """A fresh jax key; advances the generator's state."""
        c = self._take()
        if self._base is None and _tiers.on_host():
            return _wrap_on_host(_fold_in_on_host(self._key, c))
        return self._key_at(c)

    def next_key_data(self):
        """``jax.random.key_data(self.next_key())``, without a key array made and unwrapped on
        the host (a draw's sampler takes the key's data)."""
        if Generator.next_key is not _own_next_key:     # (a transform's keys: func's vmap)
            return jax.random.key_data(self.next_key())
        c = self._take()
        if self._base is None and _tiers.on_host():
            return _tiers.to_device(_fold_in_on_host(self._key, c))
        return jax.random.key_data(self._key_at(c))

    def _take(self):
        """The counter of the next key (advanced)."""
        with self._lock:
            c = self._counter
            self._counter = c + 1
        return c

    def _key_at(self, c):
        base = self._base
        if base is not None:
            c = base + np.uint32(c)
        return jax.random.fold_in(jax.random.wrap_key_data(self._key), c)

    # The generator's state as arrays, for compiled programs (torchlike.compile): the key data
    # (uint32) and the counter (uint32). A traced program takes them in; keys it draws are the
    # ones eager execution would draw, and the host advances the counter by the number drawn.
    def _state_arrays(self):
        return self._key, np.uint32(self._counter)

    def _begin_trace(self, key, counter):
        saved = (self._key, self._counter, self._base)
        self._key, self._counter, self._base = key, 0, counter
        return saved

    def _end_trace(self, saved):
        drawn = self._counter
        self._key, self._counter, self._base = saved
        return drawn

    def get_state(self):
        from ._registry import _Tensor as Tensor
        import jax.numpy as jnp
        state = np.concatenate([self._key.astype(np.uint32).view(np.uint8),
                                np.array([self._counter], np.int64).view(np.uint8)])
        return Tensor._make(jnp.asarray(state))

    def set_state(self, state):
        """Restore a state ``get_state`` gave (torch's checks of its type and size). A state of
        torch's CPU generator (5056 bytes, from a torch checkpoint) seeds this generator with
        a hash of its bytes: the same torch state gives the same torchlike stream, which is not
        torch's (DIFFERENCES.md)."""
        from ._registry import _Tensor as Tensor
        if not isinstance(state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(state).__name__}")
        if state.dtype.name != "uint8":
            raise TypeError("RNG state must be a torch.ByteTensor")
        a = np.asarray(state._data).reshape(-1)
        if a.size == _TORCH_CPU_STATE_BYTES:
            import hashlib
            digest = hashlib.sha256(a.tobytes()).digest()
            return self.manual_seed(int.from_bytes(digest[:8], "little"))
        n = self._key.nbytes + 8
        if a.size != n:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {n} but found the "
                               f"input RNG state size to be {a.size}")
        self._key = a[:-8].copy().view(np.uint32)
        self._counter = int(a[-8:].copy().view(np.int64)[0])
        return self


_TORCH_CPU_STATE_BYTES = 5056       # torch's mt19937 CPU generator state


_FOLD_IN: dict = {}


def _fold_in_on_host(data, c):
    """``key_data(fold_in(wrap_key_data(data), c))`` computed on the host: threefry2x32 in
    Python integers for jax's default implementation (the same bits, a few microseconds),
    otherwise jax's own fold_in evaluated by the interpreter (no program compiled)."""
    if data.shape == (2,) and jax.config.jax_default_prng_impl == "threefry2x32":
        # fold_in(key, c) is threefry2x32(key, threefry_seed(c)) and the seed of a 32-bit
        # counter is the pair (0, c)
        return np.array(_threefry2x32(int(data[0]), int(data[1]), 0, c & _M32), np.uint32)
    from . import _interpret
    k = (data.shape, data.dtype, jax.config.jax_default_prng_impl)
    jaxpr = _FOLD_IN.get(k)
    if jaxpr is None:
        jaxpr = _FOLD_IN[k] = jax.make_jaxpr(lambda d, m: jax.random.key_data(
            jax.random.fold_in(jax.random.wrap_key_data(d), m)))(data, np.uint32(0))
    return _interpret.run(jaxpr, data, np.uint32(c & 0xFFFFFFFF))[0]


def _wrap_on_host(data):
    """``jax.random.wrap_key_data(data)`` for host ``data`` of the default implementation,
    without binding jax's primitive (a key array around the data put on the default device:
    what the primitive makes, at a third of its cost)."""
    impl = _HOST_IMPL.get(jax.config.jax_default_prng_impl)
    if impl is None or _KeyArray is None:
        return jax.random.wrap_key_data(data)
    return _KeyArray(impl, _tiers.to_device(data))


try:                                        # jax's typed key arrays and its implementations
    from jax._src.random.prng import PRNGKeyArray as _KeyArray, prngs as _HOST_IMPL
except ImportError:
    _KeyArray, _HOST_IMPL = None, {}

_M32 = 0xFFFFFFFF
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _threefry2x32(k0, k1, x0, x1):
    """Threefry-2x32 (20 rounds) of the counter words ``x0, x1`` under the key ``k0, k1``, as
    jax's ``threefry_2x32`` computes one pair (Salmon et al., "Parallel random numbers: as easy
    as 1, 2, 3")."""
    ks = (k0, k1, k0 ^ k1 ^ 0x1BD11BDA)
    x0 = (x0 + k0) & _M32
    x1 = (x1 + k1) & _M32
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x0 = (x0 + x1) & _M32
            x1 = (((x1 << r) | (x1 >> (32 - r))) & _M32) ^ x0
        x0 = (x0 + ks[(i + 1) % 3]) & _M32
        x1 = (x1 + ks[(i + 2) % 3] + i + 1) & _M32
    return x0, x1


default_generator = Generator()


def manual_seed(seed):
    """Seed the global generator; returns it."""
    return default_generator.manual_seed(int(seed))


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)


_own_next_key = Generator.next_key


def next_key(generator=None):
    return (generator or default_generator).next_key()


def next_key_data(generator=None):
    return (generator or default_generator).next_key_data()


# ------------------------------------------------------------------ draws

# A draw is a jitted sampler of the key's data; like every jitted function of the dispatch path
# it is interpreted for its first calls at a shape (torchlike._tiers: threefry in numpy, no XLA
# compile) and compiled when it repeats: uniform and integer draws are bit-identical on both
# tiers. A seeded draw must give the same bits on its 1st and its 100th call, and jax's normal
# sampler goes through erf_inv, whose numpy form differs from XLA's in the last bit. On the CPU a
# normal draw of up to HOST_NORMAL_MAX elements is therefore made on the host: its random bits are
# a draw like the others (exact on both tiers), turned into normals by the Box-Muller transform
# in numpy float64 (the same code on every call, so the same bits), never compiled. Bigger draws
# and other backends use jax's sampler (compiled at their shape).

from . import _fused, _shape_poly, _tiers   # noqa: E402

_draws: dict = {}
_DRAWS_MAX = 4096
HOST_NORMAL_MAX = 1 << 20


def draw(sampler, data, shape, *args):
    """``sampler(key, shape, *args)`` (a jax.random sampler) of the key whose data is ``data``
    (``next_key_data``: no key array made and unwrapped on the host), as cheaply as the shape
    allows."""
    shape = tuple(shape)
    if isinstance(data, jax.core.Tracer) or not _tiers.on_host():
        return sampler(jax.random.wrap_key_data(data), shape, *args)
    if sampler is jax.random.normal:
        n = 1
        for d in shape:
            n *= d
        if 0 < n <= HOST_NORMAL_MAX:        # (numpy refuses (0, 2**62))
            return _host_normal(data, shape, *args)
    try:
        k = (sampler, shape, args)
        t = _draws.get(k)
    except TypeError:                   # an array argument: the plain draw
        return sampler(jax.random.wrap_key_data(data), shape, *args)
    if t is None:
        if len(_draws) >= _DRAWS_MAX:
            _draws.clear()
            _families.clear()

        def make(shape):
            def raw(data):
                return sampler(jax.random.wrap_key_data(data), shape, *args)
            return raw
        name = f"{sampler.__module__}.{sampler.__qualname__}"
        # a sampler's draws at other shapes share its shape-polymorphic traces (identities
        # made on first use)
        table, ident = _families.get((sampler, args)) or _families.setdefault(
            (sampler, args), ({}, _tiers.once(lambda: _tiers.stable("draw-family", name, args))))
        family = _shape_poly.Family(table, shape, make, ident, free=True)
        t = _draws[k] = _tiers.Tiered(make(shape), lambda: jax.jit(_tiers.inlined(make(shape))),
                                      "draw", ident=lambda: _tiers.stable("draw", name, shape,
                                                                          args),
                                      poly=family)
    return t(data)


def draw_now(sampler, data, shape, *args):
    """``draw``, run at once even in fused eager: for host code that reads the draw right
    away (recording it would only make a cut)."""
    with _fused.suspended():
        return draw(sampler, data, shape, *args)


# (sampler, args) -> (the table of its shape-polymorphic traces, the family's identity)
_families: dict = {}


_2PI = 2.0 * np.pi


def _host_normal(data, shape, dtype=float):
    """Standard normals of ``shape`` and ``dtype`` made on the host (see above)."""
    dtype = np.dtype(jax.dtypes.canonicalize_dtype(dtype))
    n = 1
    for d in shape:
        n *= d
    if dtype.kind == "c":               # real and imaginary parts each N(0, 1/2), as jax and torch
        part = np.float64 if dtype.itemsize > 8 else np.float32
        z = np.asarray(_host_normal(data, (2, n), part), np.float64) * np.sqrt(0.5)
        z = (z[0] + 1j * z[1]).astype(dtype).reshape(shape)
        return _tiers.put(z, _tiers.aval(tuple(shape), dtype), None)
    m = (n + 1) // 2
    bits = np.asarray(draw_now(jax.random.bits, data, (2, m), jnp.uint64 if dtype.itemsize > 4
                               else jnp.uint32), np.float64)
    scale = 2.0 ** -(64 if dtype.itemsize > 4 else 32)
    u = (bits + 0.5) * scale            # in (0, 1): the logarithm is finite
    r = np.sqrt(-2.0 * np.log(u[0]))
    z = np.concatenate([r * np.cos(_2PI * u[1]), r * np.sin(_2PI * u[1])])[:n]
    return _tiers.put(z.astype(dtype).reshape(shape), _tiers.aval(tuple(shape), dtype), None)
