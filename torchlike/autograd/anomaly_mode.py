"""Anomaly detection (``torch.autograd.detect_anomaly`` / ``set_detect_anomaly``).

    >>> with torch.autograd.detect_anomaly():
    ...     loss.backward()      # RuntimeError naming the node whose gradient has a NaN

While enabled with ``check_nan=True`` (the default), the backward engine checks every node's
gradients and raises torch's ``Function 'SqrtBackward0' returned nan values in its 0th output.``
(after torch's "Error detected in ..." warning). A node made while anomaly mode is on keeps the
traceback of the forward call that made it (``node.metadata["traceback_"]``, as torch's: the
user's frames, torchlike's own left out); an error in a node's backward is preceded by the
warning that prints it (``backward_error``).
"""
from __future__ import annotations

import os
import traceback
import warnings

from .. import _fused

__all__ = ["detect_anomaly", "set_detect_anomaly"]

# [enabled, check_nan] (process-wide, as torch's)
_mode = [False, True]


def is_anomaly_enabled() -> bool:
    return _mode[0]


def is_anomaly_check_nan_enabled() -> bool:
    return _mode[1]


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    _mode[0], _mode[1] = bool(enabled), bool(check_nan)


class detect_anomaly:
    """Context manager enabling anomaly detection inside (not a decorator, as torch's)."""

    def __init__(self, check_nan=True):
        self.prev = is_anomaly_enabled()
        self.check_nan = check_nan
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        set_anomaly_enabled(True, self.check_nan)

    def __exit__(self, *args):
        set_anomaly_enabled(self.prev, self.prev_check_nan)
        return False


class set_detect_anomaly:
    """Turn anomaly detection on or off: at once (a function call) or for a ``with`` block."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev = is_anomaly_enabled()
        self.prev_check_nan = is_anomaly_check_nan_enabled()
        set_anomaly_enabled(mode, check_nan)

    def __enter__(self):
        pass

    def __exit__(self, *args):
        set_anomaly_enabled(self.prev, self.prev_check_nan)
        return False


_PACKAGE = _fused._PACKAGE + os.sep        # (torchlike's own frames)


def forward_stack():
    """The forward traceback a node made in anomaly mode keeps: ``traceback.format_list`` of
    the calling frames outside torchlike (torch's ``traceback_`` metadata)."""
    return traceback.format_list([f for f in traceback.extract_stack()
                                  if not f.filename.startswith(_PACKAGE)])


_TRIGGERED = " (Triggered internally at /__w/pytorch/pytorch/torch/csrc/autograd/" \
    "python_anomaly_mode.cpp:{}.)"


def backward_error(node):
    """torch's warning when ``node``'s backward raised in anomaly mode: the traceback of the
    forward call that made it, or that none was recorded."""
    stack = node.metadata.get("traceback_") if node is not None else None
    if stack:
        msg = (f"Error detected in {node.name()}. Traceback of forward call that caused the "
               f"error:\n{''.join(stack)}" + _TRIGGERED.format(122))
    else:
        msg = (f"Error detected in {node.name() if node is not None else 'backward'}. No "
               "forward pass information available. Enable detect anomaly during forward pass "
               "for more information." + _TRIGGERED.format(100))
    warnings.warn(msg, stacklevel=4)


def check_gradients(node, grads):
    """The engine's check after a node ran (only called while anomaly mode is on)."""
    if not _mode[1]:
        return
    import jax.numpy as jnp
    for i, g in enumerate(grads):
        if g is None:
            continue
        data = g if not hasattr(g, "_data") else g._data
        if data.__class__ is _fused.Deferred:       # (fused eager: the check reads the value)
            data = _fused.resolve(data, "anomaly check")
        if jnp.issubdtype(data.dtype, jnp.inexact) and bool(jnp.isnan(data).any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               "output.")
