"""torchlike.hub: torch.hub's entry points, offline.

Downloading (``load``, ``list``, ``help``, ``download_url_to_file``) raises, naming what to
do instead. ``load_state_dict_from_url`` loads a checkpoint already in the hub cache
(``get_dir()/checkpoints/<file name>``, the place torch.hub saves it) with ``torchlike.load``.
"""
from __future__ import annotations

import os
import re
from urllib.parse import urlparse

__all__ = ["load", "list", "help", "get_dir", "set_dir", "load_state_dict_from_url",
           "download_url_to_file"]

ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")     # the sha256 prefix in a checkpoint's file name

_hub_dir = [None]

_OFFLINE = ("torchlike.hub does not download (torchlike never fetches code or weights from the "
            "network)")


def _get_torch_home():
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, os.path.join(
        os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "torch")))


def get_dir():
    if _hub_dir[0] is not None:
        return _hub_dir[0]
    if os.getenv("TORCH_HUB"):
        return os.getenv("TORCH_HUB")
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    _hub_dir[0] = os.path.expanduser(d)


def list(github, force_reload=False, skip_validation=False, trust_repo=None, verbose=True):
    raise RuntimeError(f"{_OFFLINE}: torch.hub.list({github!r}) needs the network; clone the "
                       f"repository and import its hubconf.py instead")


def help(github, model, force_reload=False, skip_validation=False, trust_repo=None):
    raise RuntimeError(f"{_OFFLINE}: torch.hub.help({github!r}, {model!r}) needs the network")


def load(repo_or_dir, model, *args, source="github", trust_repo=None, force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """``source='local'``: import ``hubconf.py`` from the directory and call ``model``;
    GitHub sources raise (offline)."""
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        raise RuntimeError(f"{_OFFLINE}: clone {repo_or_dir!r} and call "
                           f"torch.hub.load(path, {model!r}, source='local')")
    import importlib.util
    import sys
    path = os.path.join(repo_or_dir, "hubconf.py")
    spec = importlib.util.spec_from_file_location("hubconf", path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, repo_or_dir)
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(repo_or_dir)
    fn = getattr(mod, model, None)
    if fn is None or not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn(*args, **kwargs)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    raise RuntimeError(f"{_OFFLINE}: download {url} yourself and save it as {dst}")


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    model_dir = model_dir or os.path.join(get_dir(), "checkpoints")
    filename = file_name or os.path.basename(urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        raise RuntimeError(f"{_OFFLINE}: {url} is not in the hub cache; download it and save "
                           f"it as {cached}")
    from .serialization import load as _load
    return _load(cached, map_location=map_location, weights_only=weights_only)
