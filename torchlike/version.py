"""torch.version: the torch release torchlike follows, with torchlike's own as a local label.

``torchlike.__version__`` is ``'2.13.0+torchlike0.1.0'``: a :class:`TorchVersion` that compares
as torch 2.13's ``torch.__version__`` does (``>= "2.0"``, ``>= (2, 1)``,
``packaging.version.parse(...)``), while its local label says it is torchlike.
torchlike's own release is :data:`torchlike_version` (``torchlike.__torchlike_version__``).

    >>> import torchlike as torch
    >>> torch.__version__ >= "2.2", torch.__version__ >= (2, 13), torch.__version__ < "3"
    (True, True, True)
"""
from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["__version__", "torchlike_version", "TorchVersion", "cuda", "hip", "rocm", "xpu",
           "debug", "git_version"]

torchlike_version = "0.1.0"
TORCH_RELEASE = "2.13.0"

# PEP 440 (packaging.version.VERSION_PATTERN)
_PATTERN = re.compile(r"""^\s*v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?P<pre>[-_\.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_\.]?(?P<pre_n>[0-9]+)?)?
    (?P<post>(?:-(?P<post_n1>[0-9]+))|(?:[-_\.]?(?P<post_l>post|rev|r)[-_\.]?(?P<post_n2>[0-9]+)?))?
    (?P<dev>[-_\.]?(?P<dev_l>dev)[-_\.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_\.][a-z0-9]+)*))?
    \s*$""", re.VERBOSE | re.IGNORECASE)

_INF, _NEG = (1, ()), (-1, ())


class InvalidVersion(ValueError):
    """A string that is not a PEP 440 version (packaging's InvalidVersion)."""


def _key(text):
    """packaging.version.Version's ordering key for ``text``."""
    m = _PATTERN.match(str(text))
    if m is None:
        raise InvalidVersion(f"Invalid version: {text!r}")
    release = [int(p) for p in m.group("release").split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    pre_l = (m.group("pre_l") or "").lower()
    pre_l = {"alpha": "a", "beta": "b", "c": "rc", "pre": "rc", "preview": "rc"}.get(pre_l, pre_l)
    pre = (pre_l, int(m.group("pre_n") or 0)) if m.group("pre") else None
    post_n = m.group("post_n1") or m.group("post_n2")
    post = int(post_n or 0) if m.group("post") else None
    dev = int(m.group("dev_n") or 0) if m.group("dev") else None
    local = m.group("local")
    if pre is None and post is None and dev is not None:
        pre_key = (-1, ())             # 1.0.dev0 sorts before 1.0a0
    elif pre is None:
        pre_key = _INF
    else:
        pre_key = (0, pre)
    post_key = _NEG if post is None else (0, post)
    dev_key = _INF if dev is None else (0, dev)
    local_key = () if local is None else tuple(
        (1, int(p), "") if p.isdigit() else (0, 0, p.lower()) for p in re.split(r"[-_\.]", local))
    return (int(m.group("epoch") or 0), tuple(release), pre_key, post_key, dev_key,
            (0,) if local is None else (1, local_key))


def _other_key(other):
    if isinstance(other, str):
        return _key(other)
    if type(other).__name__ == "Version" and hasattr(other, "release"):   # packaging's Version
        return _key(str(other))
    if isinstance(other, Iterable):
        return _key(".".join(str(item) for item in other))
    raise InvalidVersion(other)


class TorchVersion(str):
    """A version string that compares with strings, tuples and ``packaging`` versions.

    ``TorchVersion("2.13.0+torchlike0.1.0") >= (2, 1)`` is True; a string that is not a
    version falls back to string comparison, as torch's TorchVersion does.
    """

    __slots__ = ()

    def _cmp(self, other, method):
        try:
            return getattr(_key(self), method)(_other_key(other))
        except InvalidVersion:
            return getattr(str, method)(self, other)

    def __gt__(self, other):
        return self._cmp(other, "__gt__")

    def __ge__(self, other):
        return self._cmp(other, "__ge__")

    def __lt__(self, other):
        return self._cmp(other, "__lt__")

    def __le__(self, other):
        return self._cmp(other, "__le__")

    def __eq__(self, other):
        return self._cmp(other, "__eq__")

    # no __ne__: str's, as in torch's TorchVersion
    __hash__ = str.__hash__


__version__ = TorchVersion(f"{TORCH_RELEASE}+torchlike{torchlike_version}")
hip = None
rocm = None
xpu = None
debug = False
git_version = f"torchlike-{torchlike_version}"


def __getattr__(name):
    # ``cuda``: the CUDA runtime version of jax's GPU backend where jax has one, else None
    if name == "cuda":
        from . import _device
        if not _device.cuda_devices():
            return None
        try:
            from jax._src.lib import cuda_versions
            v = cuda_versions.cuda_runtime_get_version()
            return f"{v // 1000}.{(v % 1000) // 10}"
        except Exception:
            return "unknown"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
